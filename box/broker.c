/* broker.c — the alias protocol on <box_dir>/run/box.sock (spec/runtime.md §4.2).
 *
 * Frames: 4-byte big-endian length, then that many bytes of JSON.  The
 * `call` frame carries the alias's stdin, stdout and stderr (SCM_RIGHTS), so
 * the worker writes straight to them and output streams with no copy.
 * The broker never authorizes anything: it only hands text to a worker.
 *
 * A connection is served, call included, by the thread that accepted it;
 * idle threads wait in accept() for the next one, so no thread is created
 * (nor woken, beyond the one the kernel wakes) on a command's path.
 */
#include "box/box-private.h"
#include "shell/shell.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define FRAME_MAX (1024 * 1024)
#define PROTOCOL_VERSION 6
/* A client has this long, from its accept, to send its whole request: the
 * alias sends it in one write, so only a stalled or hostile client takes
 * longer (a byte a second would otherwise hold a thread for days). */
#define REQUEST_TIMEOUT_MS (10 * 1000)
/* At most this many connections wait for their request.  One more takes the
 * place of the one that waited longest, so idle connections can neither
 * exhaust boxd's descriptors and threads nor lock the next alias out. */
#define MAX_WAITING 64
#define EVICTED "too many connections wait to send their request; this one waited longest"
/* At most this many commands run at once: each holds a worker process and
 * descriptors of boxd's, and a client may open connections without end. */
#define MAX_RUNNING 64

#define START_ACCEPTORS 2
#define MAX_IDLE_ACCEPTORS 4

static GMutex conns_lock;
static GCond conns_cond;
static int conns_active;   /* connections being served */
static int acceptors;      /* threads serving or waiting in accept() */
static int acceptors_idle; /* of which waiting in accept() */
static bool broker_stopping;
static int running;                   /* calls being run */
static GQueue waiting = G_QUEUE_INIT; /* Conn*, oldest first */

typedef struct {
  Boxd *d;
  int sock;
  GString *buf;   /* bytes received, not yet framed */
  GArray *fds;    /* descriptors received, not yet claimed */
  GList *waiting; /* its place in `waiting` until its call starts */
  bool evicted;   /* a newer connection took its place */
} Conn;

/* ---- framing ---- */

static bool write_all(int fd, const void *data, size_t len)
{
  const char *p = data;
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

static bool send_frame(Conn *c, int program, const char *type, json_object *body)
{
  json_object *f = json_object_new_object();
  json_object_object_add(f, "version", json_object_new_int(PROTOCOL_VERSION));
  json_object_object_add(f, "program", json_object_new_int(program));
  json_object_object_add(f, "frame_type", json_object_new_string(type));
  if (body) json_object_object_add(f, "body", body);
  const char *text = json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN);
  size_t len = strlen(text);
  /* Header and body in one write: the alias then wakes once per frame. */
  char *buf = g_malloc(4 + len);
  buf[0] = (char)(len >> 24);
  buf[1] = (char)(len >> 16);
  buf[2] = (char)(len >> 8);
  buf[3] = (char)len;
  memcpy(buf + 4, text, len);
  bool ok = write_all(c->sock, buf, 4 + len);
  g_free(buf);
  json_object_put(f);
  return ok;
}

static void send_denied(Conn *c, int program, const char *kind, const char *reason)
{
  json_object *body = json_object_new_object();
  json_object_object_add(body, "kind", json_object_new_string(kind));
  json_object_object_add(body, "reason", json_object_new_string(reason));
  send_frame(c, program, "denied", body);
}

/* Every command ends with this frame, so it is printed directly: the same
 * text send_frame would make, without building and rendering objects. */
static void send_exit(Conn *c, int program, int status)
{
  char buf[128];
  int len =
    g_snprintf(buf + 4, sizeof buf - 4,
               "{\"version\":%d,\"program\":%d,\"frame_type\":\"exit\",\"body\":{\"status\":%d}}",
               PROTOCOL_VERSION, program, status);
  buf[0] = (char)(len >> 24);
  buf[1] = (char)(len >> 16);
  buf[2] = (char)(len >> 8);
  buf[3] = (char)len;
  write_all(c->sock, buf, 4 + (size_t)len);
}

/* Reads more bytes (and any descriptors) into the connection's buffer.
 * Returns >0 on data, 0 on EOF, -1 on error or timeout. */
static int fill(Conn *c, int timeout_ms)
{
  char data[65536];
  struct iovec iov = { .iov_base = data, .iov_len = sizeof data };
  union {
    char buf[CMSG_SPACE(sizeof(int) * 8)];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {
    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf
  };
  /* The alias sends its whole request at once, usually before the accept:
   * read first, and wait only when nothing has come yet. */
  ssize_t n;
  for (;;) {
    n = recvmsg(c->sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n >= 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) break;
    if (errno == EINTR) continue;
    struct pollfd p = { .fd = c->sock, .events = POLLIN };
    if (poll(&p, 1, timeout_ms) <= 0) return -1;
    msg.msg_controllen = sizeof u.buf;
  }
  if (n < 0) return -1;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
    int count = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    int got[8];
    memcpy(got, CMSG_DATA(cm), sizeof(int) * (size_t)count);
    /* A call takes three; a client sending more would hold boxd's own
     * descriptors, so the rest go at once. */
    for (int i = 0; i < count; i++) {
      if (c->fds->len < 3)
        g_array_append_val(c->fds, got[i]);
      else
        close(got[i]);
    }
  }
  if (n == 0) return 0;
  g_string_append_len(c->buf, data, n);
  return 1;
}

typedef enum { FRAME_OK, FRAME_EOF, FRAME_ERROR, FRAME_TOO_BIG } FrameResult;

static int ms_until(gint64 deadline)
{
  gint64 left = deadline - g_get_monotonic_time();
  return left > 0 ? (int)(left / 1000) : 0;
}

/* One frame's JSON text, or EOF/error; deadline is monotonic time. */
static FrameResult read_frame(Conn *c, char **text, gint64 deadline)
{
  while (c->buf->len < 4) {
    int r = fill(c, ms_until(deadline));
    if (r == 0) return c->buf->len == 0 ? FRAME_EOF : FRAME_ERROR;
    if (r < 0) return FRAME_ERROR;
  }
  const unsigned char *h = (const unsigned char *)c->buf->str;
  size_t len = ((size_t)h[0] << 24) | ((size_t)h[1] << 16) | ((size_t)h[2] << 8) | h[3];
  if (len > FRAME_MAX) return FRAME_TOO_BIG;
  while (c->buf->len < 4 + len) {
    int r = fill(c, ms_until(deadline));
    if (r <= 0) return FRAME_ERROR;
  }
  *text = g_strndup(c->buf->str + 4, len);
  g_string_erase(c->buf, 0, (gssize)(4 + len));
  return FRAME_OK;
}

/* A frame as read: root is NULL where it was refused, with the reason
 * (type "version_mismatch" where that was the cause). */
typedef struct {
  json_object *root;
  const char *type;
  int program;
  json_object *body;
  char *reason;
} Frame;

/* Validates the envelope.  Returns the frame or NULL with *reason set. */
static json_object *frame_check(const char *text, const char **type, int *program,
                                json_object **body, char **reason)
{
  /* Frames are UTF-8 JSON (spec/runtime.md §4.2); json-c would pass other
   * bytes through to the Shell and the log. */
  if (!g_utf8_validate(text, -1, NULL)) {
    *reason = g_strdup("a frame is not valid UTF-8");
    return NULL;
  }
  json_object *f = json_tokener_parse(text);
  if (!f || !json_object_is_type(f, json_type_object)) {
    json_object_put(f);
    *reason = g_strdup("a frame is not a JSON object");
    return NULL;
  }
  json_object *v, *p, *t;
  if (!json_object_object_get_ex(f, "version", &v) || !json_object_is_type(v, json_type_int)) {
    *reason = g_strdup("a frame carries no protocol version");
    json_object_put(f);
    return NULL;
  }
  if (json_object_get_int(v) != PROTOCOL_VERSION) {
    *reason = g_strdup_printf("unsupported protocol version %d; this box speaks %d",
                              json_object_get_int(v), PROTOCOL_VERSION);
    *type = "version_mismatch";
    json_object_put(f);
    return NULL;
  }
  json_object_object_foreach (f, key, val) {
    (void)val;
    if (strcmp(key, "version") && strcmp(key, "program") && strcmp(key, "frame_type") &&
        strcmp(key, "body")) {
      *reason = g_strdup_printf("unknown frame field `%s`", key);
      json_object_put(f);
      return NULL;
    }
  }
  if (!json_object_object_get_ex(f, "program", &p) || !json_object_is_type(p, json_type_int) ||
      json_object_get_int64(p) < 0 || json_object_get_int64(p) > G_MAXUINT32 ||
      !json_object_object_get_ex(f, "frame_type", &t) ||
      !json_object_is_type(t, json_type_string)) {
    *reason = g_strdup("a frame needs a `program` number and a `frame_type`");
    json_object_put(f);
    return NULL;
  }
  *program = (int)json_object_get_int64(p);
  *type = json_object_get_string(t);
  if (!json_object_object_get_ex(f, "body", body)) *body = NULL;
  return f;
}

/* Takes text; *fr is to be let go with frame_clear whatever the outcome. */
static bool parse_frame(char *text, Frame *fr)
{
  *fr = (Frame){ 0 };
  fr->root = frame_check(text, &fr->type, &fr->program, &fr->body, &fr->reason);
  g_free(text);
  return fr->root != NULL;
}

static void frame_clear(Frame *fr)
{
  g_free(fr->reason);
  json_object_put(fr->root);
}

static const char *body_string(json_object *body, const char *key)
{
  json_object *v;
  if (!body || !json_object_is_type(body, json_type_object) ||
      !json_object_object_get_ex(body, key, &v) || !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

static size_t body_string_len(json_object *body, const char *key)
{
  json_object *v;
  json_object_object_get_ex(body, key, &v);
  return (size_t)json_object_get_string_len(v);
}

/* ---- one call ---- */

typedef struct {
  Conn *c;
  int program;
  int *fds;
} Call;

/* The connection became readable while its command runs: a `signal` frame
 * or the alias going away ends the command; `input`/`input_eof` mean
 * nothing (the Shell reads the alias's own stdin). */
static bool on_conn_readable(void *data)
{
  Call *call = data;
  char *text = NULL;
  if (read_frame(call->c, &text, g_get_monotonic_time() + G_TIME_SPAN_SECOND) != FRAME_OK)
    return true; /* the alias is gone: nobody waits for this command any more */
  Frame in;
  bool cancel =
    parse_frame(text, &in) && strcmp(in.type, "signal") == 0 && in.program == call->program;
  frame_clear(&in);
  return cancel;
}

/* Our copies of the caller's descriptors go before its status does, so its
 * output has ended when the alias exits (usually the worker took them and
 * they are gone already). */
static void answer_call(void *data, int status)
{
  Call *call = data;
  for (int i = 0; i < 3; i++)
    if (call->fds[i] >= 0) close(call->fds[i]);
  if (status < 0)
    send_denied(call->c, call->program, "internal", "no Shell worker could be started");
  else
    send_exit(call->c, call->program, status);
}

/* A text over the Shell's limit never reaches a worker
 * (it would not fit the worker's channel either): the caller gets the
 * sizes on its stderr and status 2, as for a usage error.  Its stderr may
 * be a pipe nobody reads: the line is written only if it fits at once. */
static void refuse_long_text(Conn *c, int program, size_t len, int fds[3])
{
  char line[160];
  int n = g_snprintf(line, sizeof line,
                     "strands-shell: command text is %zu bytes; the limit is %d bytes\n", len,
                     BOX_SHELL_MAX_INPUT);
  struct pollfd p = { .fd = fds[2], .events = POLLOUT };
  if (poll(&p, 1, 1000) == 1 && (p.revents & POLLOUT) && write(fds[2], line, (size_t)n) < 0) {
    /* the caller's stderr is gone: the status still says it */
  }
  for (int i = 0; i < 3; i++) close(fds[i]);
  send_exit(c, program, 2);
}

/* Runs the call in this thread while still reading frames, so a `signal`
 * can end it; answers it.  The decisions it makes here are spans of the
 * trace the alias was given (its TRACEPARENT and TRACESTATE), if any. */
static void run_call(Conn *c, int program, const char *source, int fds[3], json_object *body)
{
  Call call = { c, program, fds };
  BoxTraceContext trace;
  if (box_trace_context_parse(&trace, body_string(body, "traceparent"),
                              body_string(body, "tracestate")))
    box_decision_log_set_trace(&trace);
  /* `bash SCRIPT`: the path the alias read it from, $0 in the Shell */
  const char *script = body_string(body, "script");
  if (script && (!*script || strlen(script) != body_string_len(body, "script"))) script = NULL;
  boxd_run_command(c->d, source, script, fds, c->sock, on_conn_readable, answer_call, &call);
  box_decision_log_set_trace(NULL);
}

/* Why the caller's descriptor cannot be the call's stdio, or NULL.  They
 * reach the worker as they are: a directory would let it openat() its way
 * around the mount through the agent's view, and an O_PATH descriptor is
 * reopened by /proc/self/fd; pidfds, epoll and the like are no stream. */
static const char *stdio_refusal(int fd)
{
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return "not an open descriptor";
  if (flags & O_PATH) return "an O_PATH descriptor";
  /* The cached type only: a descriptor in the mount must not make boxd's
   * own thread wait on a FUSE request (an inode's type never changes). */
  struct statx st;
  if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &st) != 0)
    return "not an open descriptor";
  if (S_ISDIR(st.stx_mode)) return "a directory";
  if (!S_ISREG(st.stx_mode) && !S_ISFIFO(st.stx_mode) && !S_ISSOCK(st.stx_mode) &&
      !S_ISCHR(st.stx_mode))
    return "neither a file, a pipe, a socket nor a character device";
  return NULL;
}

static void take_fds(Conn *c, int out[3])
{
  for (int i = 0; i < 3; i++) { out[i] = g_array_index(c->fds, int, i); }
  g_array_remove_range(c->fds, 0, 3);
}

/* Takes c out of the waiting connections; whether one took its place. */
static bool conn_unwait(Conn *c)
{
  g_mutex_lock(&conns_lock);
  if (c->waiting) g_queue_delete_link(&waiting, c->waiting);
  c->waiting = NULL;
  bool evicted = c->evicted;
  g_mutex_unlock(&conns_lock);
  return evicted;
}

/* Makes c a waiting connection, ending the oldest one when too many wait:
 * its reads end (SHUT_RD), it can still be told why. */
static void conn_wait(Conn *c)
{
  g_mutex_lock(&conns_lock);
  if (waiting.length >= MAX_WAITING) {
    Conn *old = g_queue_pop_head(&waiting);
    old->waiting = NULL;
    old->evicted = true;
    shutdown(old->sock, SHUT_RD);
  }
  g_queue_push_tail(&waiting, c);
  c->waiting = waiting.tail;
  g_mutex_unlock(&conns_lock);
}

/* A "call" frame of program: refused with a "denied" frame, or run to its
 * end.  Either way the connection has served its one call. */
static void serve_call(Conn *c, int program, int open_program, bool called, json_object *body)
{
  const char *source = body_string(body, "source");
  if (program != open_program) {
    g_autofree char *r = g_strdup_printf("transport program %d is not open", program);
    send_denied(c, program, "transport_error", r);
    return;
  }
  if (called) {
    send_denied(c, program, "flow_control", "the program is already running a call");
    return;
  }
  if (!source) {
    send_denied(c, program, "transport_error", "a call frame needs a `source` string");
    return;
  }
  if (strlen(source) != body_string_len(body, "source")) {
    /* What follows a NUL would be sent but never seen, judged nor run. */
    send_denied(c, program, "transport_error", "a call's `source` contains a NUL character");
    return;
  }
  if (c->fds->len < 3) {
    send_denied(c, program, "transport_error",
                "a call frame must carry the caller's stdin, stdout and stderr");
    return;
  }
  static const char *const names[3] = { "stdin", "stdout", "stderr" };
  int fds[3];
  take_fds(c, fds);
  bool refused = false;
  for (int i = 0; i < 3 && !refused; i++) {
    const char *why = stdio_refusal(fds[i]);
    if (why) {
      g_autofree char *r = g_strdup_printf(
        "the call's %s is %s; a call's stdin, stdout and stderr must be files, pipes, "
        "sockets or character devices",
        names[i], why);
      send_denied(c, program, "transport_error", r);
      refused = true;
    }
  }
  /* Evicted just now: its reads are shut, so the call could not be
   * interrupted; it is refused like any other evicted request. */
  if (!refused && conn_unwait(c)) {
    send_denied(c, program, "over_budget", EVICTED);
    refused = true;
  }
  size_t len = strlen(source);
  if (!refused && len > BOX_SHELL_MAX_INPUT) {
    refuse_long_text(c, program, len, fds); /* it closes fds */
    return;
  }
  if (!refused) {
    g_mutex_lock(&conns_lock);
    bool room = running < MAX_RUNNING;
    if (room) running++;
    g_mutex_unlock(&conns_lock);
    if (!room) {
      send_denied(c, program, "over_budget",
                  "at most " G_STRINGIFY(
                    MAX_RUNNING) " commands run at once in this box; this one was not started");
      refused = true;
    }
  }
  if (refused) {
    for (int i = 0; i < 3; i++) close(fds[i]);
    return;
  }
  run_call(c, program, source, fds, body);
  g_mutex_lock(&conns_lock);
  running--;
  g_mutex_unlock(&conns_lock);
}

/* A Python program's call runs as the Shell's `python3 -c SOURCE`: the
 * same shell:exec decision on program python3, the same interpreter and
 * limits as inside the Shell.  A source the call frame's checks would
 * refuse (none, or with a NUL) is passed on as it came. */
static json_object *python_call_body(json_object *body)
{
  const char *source = body_string(body, "source");
  if (!source || strlen(source) != body_string_len(body, "source")) return json_object_get(body);
  GString *text = g_string_new("python3 -c '");
  for (const char *p = source; *p; p++) {
    if (*p == '\'')
      g_string_append(text, "'\\''");
    else
      g_string_append_c(text, *p);
  }
  g_string_append_c(text, '\'');
  json_object *out = json_object_new_object();
  json_object_object_add(out, "source", json_object_new_string_len(text->str, (int)text->len));
  g_string_free(text, TRUE);
  return out;
}

/* The MCP server a mode names ({"mcp":{"server":NAME}}), or NULL. */
static const char *mcp_mode_server(json_object *body)
{
  json_object *mode = NULL, *mcp = NULL, *server = NULL;
  if (!json_object_object_get_ex(body, "mode", &mode) ||
      !json_object_object_get_ex(mode, "mcp", &mcp) ||
      !json_object_object_get_ex(mcp, "server", &server) ||
      !json_object_is_type(server, json_type_string))
    return NULL;
  return json_object_get_string(server);
}

/* An MCP program: the open carries the alias's stdio, and the server is
 * served over it until either side ends (mcp_serve.c). */
static void serve_mcp(Conn *c, int program, const char *server)
{
  if (c->fds->len < 3) {
    send_denied(c, program, "transport_error",
                "an MCP open frame must carry the caller's stdin, stdout and stderr");
    return;
  }
  int fds[3];
  take_fds(c, fds);
  if (conn_unwait(c)) {
    send_denied(c, program, "over_budget", EVICTED);
  } else {
    g_autofree char *refusal = NULL;
    int status = boxd_mcp_serve(c->d, server, fds, &refusal);
    if (status < 0)
      send_denied(c, program, "internal", refusal);
    else
      send_exit(c, program, status);
  }
  for (int i = 0; i < 3; i++) close(fds[i]);
}

static void conn_serve(Conn *c)
{
  int open_program = -1;
  bool called = false, python = false;
  gint64 deadline = g_get_monotonic_time() + REQUEST_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;
  for (;;) {
    char *text = NULL;
    FrameResult fr = read_frame(c, &text, deadline);
    if ((fr == FRAME_EOF || fr == FRAME_ERROR) && conn_unwait(c)) {
      send_denied(c, 0, "over_budget", EVICTED);
      break;
    }
    if (fr == FRAME_EOF) break;
    if (fr == FRAME_TOO_BIG) {
      send_denied(c, 0, "transport_error",
                  "a frame exceeds the 1048576-byte limit of this protocol");
      break;
    }
    if (fr == FRAME_ERROR) {
      send_denied(c, 0, "transport_error", "a frame was cut short or timed out");
      break;
    }
    Frame in;
    if (!parse_frame(text, &in)) {
      send_denied(c, 0,
                  in.type && strcmp(in.type, "version_mismatch") == 0 ? "version_mismatch"
                                                                      : "transport_error",
                  in.reason);
      frame_clear(&in);
      break;
    }
    bool stop = false;
    if (strcmp(in.type, "open") == 0) {
      const char *mode = body_string(in.body, "mode");
      const char *mcp = mcp_mode_server(in.body);
      if (open_program < 0 && mcp) {
        serve_mcp(c, in.program, mcp);
        stop = true;
      } else if (open_program >= 0) {
        send_denied(c, in.program, "over_budget", "this box serves one program per connection");
        stop = true;
      } else if (!mode || (strcmp(mode, "shell") != 0 && strcmp(mode, "python") != 0)) {
        send_denied(c, in.program, "transport_error",
                    "this box serves only the shell and python modes");
        stop = true;
      } else {
        open_program = in.program;
        python = strcmp(mode, "python") == 0;
      }
    } else if (strcmp(in.type, "call") == 0) {
      json_object *body = python ? python_call_body(in.body) : json_object_get(in.body);
      serve_call(c, in.program, open_program, called, body);
      json_object_put(body);
      called = true; /* one call per connection: it ends with this one */
      stop = true;
    } else if (strcmp(in.type, "input") == 0 || strcmp(in.type, "input_eof") == 0 ||
               strcmp(in.type, "signal") == 0) {
      /* Before a call these have nothing to act on. */
    } else if (strcmp(in.type, "close") == 0) {
      stop = true;
    } else {
      g_autofree char *r = g_strdup_printf("a client may not send a `%s` frame", in.type);
      send_denied(c, in.program, "transport_error", r);
      stop = true;
    }
    frame_clear(&in);
    if (stop) break;
  }
  conn_unwait(c); /* before the close: no one may shut a reused descriptor */
  for (guint i = 0; i < c->fds->len; i++) close(g_array_index(c->fds, int, i));
  g_array_free(c->fds, TRUE);
  g_string_free(c->buf, TRUE);
  close(c->sock);
  g_free(c);
  g_mutex_lock(&conns_lock);
  conns_active--;
  g_cond_broadcast(&conns_cond);
  g_mutex_unlock(&conns_lock);
}

/* Connections are served by the thread that accepts them (no hand-off on a
 * command's path).  Threads wait in accept() together, the kernel wakes one;
 * the one that takes the last idle place starts another before serving, so
 * a long command never holds up the next connection. */
static gpointer acceptor_main(gpointer data)
{
  Boxd *d = data;
  for (;;) {
    int s = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (s < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        g_usleep(10 * 1000); /* the connection waits in the backlog; do not spin */
        continue;
      }
      break; /* the listener was shut down */
    }
    g_mutex_lock(&conns_lock);
    conns_active++;
    bool another = --acceptors_idle == 0 && !broker_stopping;
    if (another) {
      acceptors_idle++;
      acceptors++;
    }
    g_mutex_unlock(&conns_lock);
    if (another) g_thread_unref(g_thread_new("box-conn", acceptor_main, d));
    Conn *c = g_new0(Conn, 1);
    c->d = d;
    c->sock = s;
    c->buf = g_string_new(NULL);
    c->fds = g_array_new(FALSE, FALSE, sizeof(int));
    conn_wait(c);
    conn_serve(c); /* ends conns_active's count for it */
    g_mutex_lock(&conns_lock);
    /* Past a few idle ones, or once the broker stops, a thread ends. */
    bool leave = broker_stopping || acceptors_idle >= MAX_IDLE_ACCEPTORS;
    if (leave)
      acceptors--;
    else
      acceptors_idle++;
    g_cond_broadcast(&conns_cond);
    g_mutex_unlock(&conns_lock);
    if (leave) return NULL;
  }
  g_mutex_lock(&conns_lock);
  acceptors_idle--;
  acceptors--;
  g_cond_broadcast(&conns_cond);
  g_mutex_unlock(&conns_lock);
  return NULL;
}

bool boxd_broker_start(Boxd *d, GError **error)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen(d->socket_path) >= sizeof addr.sun_path) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NAMETOOLONG,
                "box directory %s: its broker socket path exceeds the platform limit",
                d->config->box_dir);
    return false;
  }
  /* Bound under a temporary name and renamed once listening: an alias that
   * sees box.sock can always connect. */
  g_autofree char *tmp = g_strconcat(d->socket_path, ".new", NULL);
  if (strlen(tmp) >= sizeof addr.sun_path) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NAMETOOLONG,
                "box directory %s: its broker socket path exceeds the platform limit",
                d->config->box_dir);
    return false;
  }
  strcpy(addr.sun_path, tmp);
  unlink(tmp);
  unlink(d->socket_path); /* stale: the run lock proves no owner */
  d->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  mode_t old = umask(0177);
  int r = bind(d->listen_fd, (struct sockaddr *)&addr, sizeof addr);
  umask(old);
  if (r != 0 || listen(d->listen_fd, 64) != 0 || rename(tmp, d->socket_path) != 0) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "bind broker socket %s: %s",
                d->socket_path, g_strerror(errno));
    close(d->listen_fd);
    d->listen_fd = -1;
    unlink(tmp);
    return false;
  }
  broker_stopping = false;
  acceptors = acceptors_idle = START_ACCEPTORS;
  for (int i = 0; i < START_ACCEPTORS; i++)
    g_thread_unref(g_thread_new("box-conn", acceptor_main, d));
  return true;
}

void boxd_broker_stop(Boxd *d)
{
  if (d->listen_fd < 0) return;
  /* Idle acceptors return from accept(); busy ones end once served and never
   * call accept() again, so the descriptor can go once no thread is idle. */
  g_mutex_lock(&conns_lock);
  broker_stopping = true;
  g_mutex_unlock(&conns_lock);
  shutdown(d->listen_fd, SHUT_RDWR);
  g_mutex_lock(&conns_lock);
  while (acceptors_idle > 0) g_cond_wait(&conns_cond, &conns_lock);
  g_mutex_unlock(&conns_lock);
  close(d->listen_fd);
  d->listen_fd = -1;
  unlink(d->socket_path);
}

void boxd_broker_drain(Boxd *d)
{
  (void)d;
  gint64 until = g_get_monotonic_time() + 5 * G_TIME_SPAN_SECOND;
  g_mutex_lock(&conns_lock);
  while (conns_active > 0)
    if (!g_cond_wait_until(&conns_cond, &conns_lock, until)) break;
  g_mutex_unlock(&conns_lock);
}
