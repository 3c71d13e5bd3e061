/* shell_host.c — box-shell's host for the Shell (BoxShellHost) in a box:
 * each call is a request to boxd over the worker's control channel
 * (box/ctl.h), the fast path's over a channel of the calling process's own.
 * The worker (shell_worker.c) builds the Shell on it. */
#include "box/shell_host.h"

#include "box/ctl.h"
#include "tools/fdpass.h"
#include "tools/filter.h"
#include "tools/spin.h"
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <limits.h>
#include <locale.h>
#include <malloc.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int ctl_fd = -1;

/* ---- host side of the Shell, over the control channel ---- */

/* The exit status report is one way, and boxd needs it only before the
 * next thing this process asks (history rules read it then) or at the
 * command's end.  So it waits for that request, or rides on "exit": one
 * message and one wakeup of boxd fewer per command.  A fork flushes it
 * first, so that nothing a child sends can overtake it. */
static json_object *pending_status;
static pid_t worker_pid;

static void flush_status(void)
{
  if (!pending_status) return;
  box_ctl_send(ctl_fd, pending_status, NULL, 0);
  json_object_put(pending_status);
  pending_status = NULL;
}

/* Once "run" has come, only the worker's main thread reads ctl, and boxd
 * sends nothing on it unasked: that thread's requests without descriptors
 * are answered on ctl itself, saving a socketpair and the passing of its
 * end per decision.  A forked child or another thread shares ctl, so it
 * still asks for a reply channel of its own. */
static bool on_worker_thread(void)
{
  return getpid() == worker_pid && (pid_t)syscall(SYS_gettid) == worker_pid;
}

/* A request the worker's main thread sends on ctl, to be answered there:
 * the last command's status rides on it. */
static bool ctl_send_for_answer(json_object *request)
{
  if (pending_status) json_object_object_add(request, "exec_status", pending_status);
  pending_status = NULL;
  json_object_object_add(request, "reply", json_object_new_string("ctl"));
  return box_ctl_send(ctl_fd, request, NULL, 0);
}

/* Its answer.  boxd answers within µs: looked for without sleeping first
 * (a loop of builtins asks once an iteration). */
static json_object *ctl_answer(void)
{
  static BoxSpin spin = BOX_SPIN_INIT;
  box_spin_wait(&spin, box_spin_readable, &ctl_fd);
  return box_ctl_recv(ctl_fd, NULL, NULL);
}

static json_object *ctl_call(json_object *request, const int *fds, int nfds)
{
  if (nfds == 0 && on_worker_thread()) return ctl_send_for_answer(request) ? ctl_answer() : NULL;
  flush_status();
  return box_ctl_call(ctl_fd, request, fds, nfds);
}

/* Which argv words the script spelled literally, for the log's redaction. */
static void add_literal(json_object *req, const BoxShellCommand *cmd)
{
  if (!cmd->literal) return;
  json_object *a = json_object_new_array();
  for (int i = 0; i < cmd->argc; i++)
    json_object_array_add(a, json_object_new_boolean(cmd->literal[i]));
  json_object_object_add(req, "literal", a);
}

static json_object *string_array(char *const *v, int n)
{
  json_object *a = json_object_new_array();
  for (int i = 0; i < n; i++) json_object_array_add(a, json_object_new_string(v[i]));
  return a;
}

/* The verdict boxd sent with "run" for the command's first
 * shell:exec, which it decided (and logged) itself from the text: the
 * request it decided, as text, and its answer.  Taken only by the first
 * decision, and only if that is the very request this process would send;
 * anything else asks boxd as usual. */
static char *decided_request;
static bool decided_permit;
static char *decided_message;

static void take_decided(json_object *run)
{
  json_object *dec, *req, *permit, *msg;
  if (!json_object_object_get_ex(run, "decided", &dec) ||
      !json_object_object_get_ex(dec, "request", &req) ||
      !json_object_object_get_ex(dec, "permit", &permit) ||
      !json_object_object_get_ex(dec, "message", &msg))
    return;
  decided_request = strdup(json_object_get_string(req));
  decided_permit = json_object_get_boolean(permit);
  decided_message = strdup(json_object_get_string(msg));
}

static json_object *answer_decided(json_object *req)
{
  if (!decided_request) return NULL;
  json_object *reply = NULL;
  if (getpid() == worker_pid &&
      strcmp(decided_request, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN)) == 0) {
    reply = json_object_new_object();
    json_object_object_add(reply, "permit", json_object_new_boolean(decided_permit));
    json_object_object_add(reply, "message", json_object_new_string(decided_message));
  }
  free(decided_request);
  free(decided_message);
  decided_request = decided_message = NULL;
  return reply;
}

static int send_with_ticket(json_object *req);

/* A decision's answer (consumed): permitted, or *message the policy's text. */
static bool take_verdict(json_object *reply, char **message)
{
  json_object *permit, *msg;
  bool ok =
    reply && json_object_object_get_ex(reply, "permit", &permit) && json_object_get_boolean(permit);
  if (!ok)
    *message = strdup(reply && json_object_object_get_ex(reply, "message", &msg)
                        ? json_object_get_string(msg)
                        : "the box did not answer the decision");
  json_object_put(reply);
  return ok;
}

static bool host_decide_exec(void *data, const BoxShellCommand *cmd, char **message)
{
  (void)data;
  json_object *req = box_ctl_exec_request(cmd);
  json_object *reply = answer_decided(req);
  if (!reply) reply = ctl_call(req, NULL, 0);
  json_object_put(req);
  return take_verdict(reply, message);
}

/* Several decisions in one round (a pipeline's stages, asked before they
 * fork): all the requests go out before the first answer is read, and
 * boxd answers them in the order sent, as it would have taken them one by
 * one.  The worker's main thread has them answered on ctl, in order;
 * anywhere else each has a reply socket of its own. */
static void host_decide_exec_many(void *data, const BoxShellCommand *cmds, int n, bool *permit,
                                  char **messages)
{
  (void)data;
  bool on_ctl = on_worker_thread();
  json_object **reply = g_new0(json_object *, n);
  /* per request: its reply socket, CTL_REPLY when answered on ctl, -1 when
   * answered already or not sent */
  enum { CTL_REPLY = -2 };
  int *ticket = g_new(int, n);
  if (!on_ctl) flush_status();
  for (int i = 0; i < n; i++) {
    ticket[i] = -1;
    json_object *req = box_ctl_exec_request(&cmds[i]);
    if (i == 0 && (reply[0] = answer_decided(req))) {
      json_object_put(req);
    } else if (on_ctl) {
      if (ctl_send_for_answer(req)) ticket[i] = CTL_REPLY;
      json_object_put(req);
    } else {
      ticket[i] = send_with_ticket(req);
    }
  }
  for (int i = 0; i < n; i++) {
    if (ticket[i] == CTL_REPLY) reply[i] = ctl_answer();
    if (ticket[i] >= 0) {
      reply[i] = box_ctl_recv(ticket[i], NULL, NULL);
      close(ticket[i]);
    }
    messages[i] = NULL;
    permit[i] = take_verdict(reply[i], &messages[i]);
  }
  g_free(ticket);
  g_free(reply);
}

static bool host_decide_dry(void *data, const char *action, const char *input_json, char **message)
{
  (void)data;
  json_object *input = json_tokener_parse(input_json);
  if (!input || !json_object_is_type(input, json_type_object)) {
    json_object_put(input);
    *message = strdup("box.decide: the input must be a table of the action's fields");
    return false;
  }
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("decide"));
  json_object_object_add(req, "action", json_object_new_string(action));
  json_object_object_add(req, "input", input);
  json_object_object_add(req, "dry_run", json_object_new_boolean(true));
  json_object *reply = ctl_call(req, NULL, 0);
  json_object_put(req);
  json_object *permit, *msg;
  bool ok =
    reply && json_object_object_get_ex(reply, "permit", &permit) && json_object_get_boolean(permit);
  *message = strdup(reply && json_object_object_get_ex(reply, "message", &msg)
                      ? json_object_get_string(msg)
                      : "the box did not answer the decision");
  json_object_put(reply);
  return ok;
}

/* The caller's stdin as the command got it. */
static struct stat caller_stdin;
static bool caller_stdin_known;

/* Whether fd is the caller's own stdin, which a program never reads
 * (spec/runtime.md §4.4: its stdin is then /dev/null). */
static bool is_caller_stdin(int fd)
{
  struct stat st;
  return caller_stdin_known && fstat(fd, &st) == 0 && st.st_dev == caller_stdin.st_dev &&
         st.st_ino == caller_stdin.st_ino;
}

static json_object *spawn_call(json_object *req, const int *fds, int nfds);

static char *host_resolve(void *data, const char *word, const char *cwd)
{
  (void)data;
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("resolve"));
  json_object_object_add(req, "word", json_object_new_string(word));
  json_object_object_add(req, "cwd", json_object_new_string(cwd));
  json_object *reply = ctl_call(req, NULL, 0);
  json_object_put(req);
  json_object *path;
  char *found = reply && json_object_object_get_ex(reply, "path", &path)
                  ? strdup(json_object_get_string(path))
                  : NULL;
  json_object_put(reply);
  return found;
}

static BoxSpawnResult host_spawn(void *data, const BoxShellCommand *cmd, int fd_out, int fd_err)
{
  (void)data;
  BoxSpawnResult r = { BOX_SPAWN_FAILED, 126, NULL };
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("spawn"));
  json_object_object_add(req, "argv", string_array(cmd->argv, cmd->argc));
  add_literal(req, cmd);
  json_object_object_add(req, "command", json_object_new_string(cmd->command));
  json_object_object_add(req, "cwd", json_object_new_string(cmd->cwd));
  /* the file the Shell found on its own PATH, in its view */
  if (cmd->program && strcmp(cmd->program, cmd->argv[0]) != 0)
    json_object_object_add(req, "path", json_object_new_string(cmd->program));
  if (cmd->envp) {
    /* the program's environment: exported variables and `A=1 prog` prefixes */
    int n = 0;
    while (cmd->envp[n]) n++;
    json_object_object_add(req, "env", string_array(cmd->envp, n));
  }
  /* stdout and stderr, then the rest, their numbers named by "fds" */
  int fds[2 + BOX_SPAWN_MAX_FDS] = { fd_out, fd_err };
  int nfds = 2;
  json_object *targets = json_object_new_array();
  for (int i = 0; i < cmd->nfds && i < BOX_SPAWN_MAX_FDS; i++)
    if (i != 1 && i != 2 && cmd->fds[i] >= 0 && (i > 0 || !is_caller_stdin(cmd->fds[i]))) {
      fds[nfds++] = cmd->fds[i];
      json_object_array_add(targets, json_object_new_int(i));
    }
  json_object_object_add(req, "fds", targets);
  json_object *reply = spawn_call(req, fds, nfds);
  json_object_put(req);
  json_object *kind, *status, *msg;
  if (!reply || !json_object_object_get_ex(reply, "kind", &kind)) {
    r.message = strdup("the box did not answer the spawn request");
    json_object_put(reply);
    return r;
  }
  const char *k = json_object_get_string(kind);
  if (strcmp(k, "ran") == 0)
    r.kind = BOX_SPAWN_RAN;
  else if (strcmp(k, "not_found") == 0)
    r.kind = BOX_SPAWN_NOT_FOUND;
  else if (strcmp(k, "denied") == 0)
    r.kind = BOX_SPAWN_DENIED;
  else if (strcmp(k, "no_tool") == 0)
    r.kind = BOX_SPAWN_NO_TOOL;
  if (json_object_object_get_ex(reply, "status", &status)) r.status = json_object_get_int(status);
  if (json_object_object_get_ex(reply, "message", &msg))
    r.message = strdup(json_object_get_string(msg));
  json_object_put(reply);
  return r;
}

static char *host_last_denial(void *data)
{
  (void)data;
  int fd = open("/.box/mydenial", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  char buf[8192];
  size_t len = 0;
  ssize_t n;
  while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
    len += (size_t)n;
  close(fd);
  while (len > 0 && buf[len - 1] == '\n') len--;
  if (len == 0) return NULL;
  buf[len] = '\0';
  return strdup(buf);
}

/* Sends req (consumed) with a socket of its own for the answer, whose
 * other end is returned as the request's ticket (-1 when not sent). */
static int send_with_ticket_fds(json_object *req, const int *fds, int nfds)
{
  int pair[2];
  if (nfds >= BOX_CTL_MAX_FDS || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
    json_object_put(req);
    return -1;
  }
  int all[BOX_CTL_MAX_FDS] = { pair[1] };
  for (int i = 0; i < nfds; i++) all[i + 1] = fds[i];
  flush_status();
  bool sent = box_ctl_send(ctl_fd, req, all, nfds + 1);
  json_object_put(req);
  close(pair[1]);
  if (!sent) {
    close(pair[0]);
    return -1;
  }
  return pair[0];
}

static int send_with_ticket(json_object *req)
{
  return send_with_ticket_fds(req, NULL, 0);
}

/* The signals that would end a forked part of the Shell (a job, a
 * pipeline's stage, `timeout`'s child) while it waits for its tool: there
 * the process stands for the program, as bash's child would be the program
 * itself, so they go to the tool (its PID 1 forwards them), which decides
 * how it ends. */
static const int tool_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };

/* The spawn request (consumed) and its answer, the signals above
 * forwarded while it runs. */
static json_object *spawn_call(json_object *req, const int *fds, int nfds)
{
  if (getpid() == worker_pid) return ctl_call(req, fds, nfds);
  sigset_t set, old;
  sigemptyset(&set);
  for (size_t i = 0; i < G_N_ELEMENTS(tool_signals); i++) {
    struct sigaction sa;
    if (sigaction(tool_signals[i], NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
      sigaddset(&set, tool_signals[i]);
  }
  pthread_sigmask(SIG_BLOCK, &set, &old);
  int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  json_object_get(req);
  int ticket = send_with_ticket_fds(req, fds, nfds);
  json_object *reply = NULL;
  while (ticket >= 0) {
    struct pollfd p[2] = { { .fd = ticket, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
    if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) break;
    struct signalfd_siginfo info;
    if (sfd >= 0 && (p[1].revents & POLLIN) && read(sfd, &info, sizeof info) == sizeof info) {
      json_object *sig = json_object_new_object();
      json_object_object_add(sig, "op", json_object_new_string("signal"));
      json_object_object_add(sig, "signal", json_object_new_int((int)info.ssi_signo));
      box_ctl_send(ticket, sig, NULL, 0);
      json_object_put(sig);
    }
    if (p[0].revents) {
      reply = box_ctl_recv(ticket, NULL, NULL);
      break;
    }
  }
  if (ticket >= 0) close(ticket);
  if (sfd >= 0) close(sfd);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return reply;
}

/* The fast path — boxd decides and opens regular files for us
 * (box/fastopen.c); anything it does not take is opened through the mount.
 * A request and its answer are apart (the answer comes on a socket of its
 * own), so the Shell may ask for the next files while it reads these. */
static int host_open_read_send(void *data, const char *cwd, const char *const *paths, int n)
{
  (void)data;
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("open"));
  json_object_object_add(req, "cwd", json_object_new_string(cwd ? cwd : ""));
  json_object_object_add(req, "paths", string_array((char *const *)paths, n));
  return send_with_ticket(req);
}

/* n answers of "the mount's": no descriptor, no error, no message */
static void no_answers(int n, int *fds, int *errs, char **messages)
{
  for (int i = 0; i < n; i++) {
    fds[i] = -1;
    errs[i] = 0;
    messages[i] = NULL;
  }
}

/* The answers of an "open" request read from ticket, for n paths. */
static void take_answers(int ticket, int n, int *fds, int *errs, char **messages)
{
  no_answers(n, fds, errs, messages);
  int got[BOX_CTL_MAX_FDS];
  int ngot = 0;
  json_object *reply = box_ctl_recv(ticket, got, &ngot);
  json_object *answers = NULL;
  int used = 0;
  if (reply && json_object_object_get_ex(reply, "answers", &answers) &&
      json_object_is_type(answers, json_type_array)) {
    size_t na = json_object_array_length(answers);
    for (int i = 0; i < n && (size_t)i < na; i++) {
      json_object *a = json_object_array_get_idx(answers, (size_t)i), *v;
      if (json_object_object_get_ex(a, "fd", &v)) {
        if (used < ngot) fds[i] = got[used++];
      } else if (json_object_object_get_ex(a, "err", &v)) {
        errs[i] = json_object_get_int(v);
        if (json_object_object_get_ex(a, "message", &v))
          messages[i] = strdup(json_object_get_string(v));
      }
    }
  }
  for (int i = used; i < ngot; i++) close(got[i]);
  json_object_put(reply);
}

static void host_open_read_recv(void *data, int ticket, int n, int *fds, int *errs, char **messages)
{
  (void)data;
  if (ticket < 0) {
    no_answers(n, fds, errs, messages);
    return;
  }
  take_answers(ticket, n, fds, errs, messages);
  close(ticket);
}

/* This process's open channel (ctl.h), made on its first open and handed
 * to boxd: each later open is one message each way on it.  A forked child
 * gets none of its parent's (the answers would go to whichever read
 * first) and makes its own.  Used by one thread at a time: the Shell's, or
 * the interpreter's under its fast path's lock (python_dl.c). */
static int open_chan = -1;
static bool open_chan_broken;
static char *wire_out, *wire_in; /* the request and the answer */

static void open_chan_forget(void)
{
  if (open_chan >= 0) close(open_chan);
  open_chan = -1;
  open_chan_broken = false;
}

static int open_channel(void)
{
  if (open_chan >= 0 || open_chan_broken) return open_chan;
  open_chan_broken = true; /* until made */
  int pair[2], one = 1;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) return -1;
  /* boxd's end passes each request's credentials from the first on */
  (void)setsockopt(pair[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("open-channel"));
  flush_status();
  bool sent = box_ctl_send(ctl_fd, req, &pair[1], 1);
  json_object_put(req);
  close(pair[1]);
  if (!sent) {
    close(pair[0]);
    return -1;
  }
  if (!wire_out) wire_out = g_malloc(BOX_OPEN_WIRE_MAX);
  if (!wire_in) wire_in = g_malloc(BOX_OPEN_WIRE_MAX);
  open_chan_broken = false;
  return open_chan = box_fd_own(pair[0]); /* the script's numbers are 0-9 */
}

/* The answers of one request on the channel, len bytes in wire_in with
 * ngot descriptors: false when they do not add up. */
static bool take_wire(size_t len, int n, int *fds, int *errs, char **messages, const int *got,
                      int ngot)
{
  size_t at = sizeof(BoxOpenWire) * (size_t)n;
  int used = 0;
  if (len < at) return false;
  for (int i = 0; i < n; i++) {
    BoxOpenWire w;
    memcpy(&w, wire_in + sizeof w * (size_t)i, sizeof w);
    if (w.kind == BOX_OPEN_WIRE_FD && used < ngot) {
      fds[i] = got[used++];
    } else if (w.kind == BOX_OPEN_WIRE_ERR && w.message_len <= len - at) {
      errs[i] = w.err;
      if (w.message_len) messages[i] = strndup(wire_in + at, w.message_len);
      at += w.message_len;
    } else if (w.kind != BOX_OPEN_WIRE_FALLBACK) {
      return false;
    }
  }
  return used == ngot;
}

/* One answer on the channel, into wire_in, with flags as recvmsg's. */
typedef struct {
  int flags;
  ssize_t r;
  int got[BOX_CTL_MAX_FDS];
  int ngot;
  bool truncated;
} WireRecv;

static bool wire_recv_now(void *data)
{
  WireRecv *in = data;
  in->r = box_fdpass_recv(open_chan, wire_in, BOX_OPEN_WIRE_MAX, in->flags, in->got,
                          BOX_CTL_MAX_FDS, &in->ngot, &in->truncated);
  return !(in->r < 0 && errno == EAGAIN);
}

/* An "open" on the channel: false when it could not be asked there. */
static bool chan_open_read(const char *cwd, const char *const *paths, int n, int *fds, int *errs,
                           char **messages)
{
  if (n <= 0) return true;
  if (n > BOX_OPEN_WIRE_PATHS || open_channel() < 0) return false;
  size_t len = 0;
  const char *part = cwd ? cwd : "";
  for (int i = -1; i < n; part = ++i < n ? paths[i] : NULL) {
    size_t l = strlen(part) + 1;
    if (len + l > BOX_OPEN_WIRE_MAX) return false;
    memcpy(wire_out + len, part, l);
    len += l;
  }
  flush_status();
  ssize_t r;
  do r = send(open_chan, wire_out, len, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r != (ssize_t)len) {
    /* boxd did not take the channel (it keeps a few per command) */
    open_chan_forget();
    open_chan_broken = true;
    return false;
  }
  no_answers(n, fds, errs, messages);
  /* boxd answers within tens of µs: asked for without sleeping first, so
   * that neither this CPU nor boxd's goes idle between the two */
  static BoxSpin spin = BOX_SPIN_INIT;
  WireRecv in = { .flags = MSG_CMSG_CLOEXEC | MSG_DONTWAIT };
  if (!box_spin_wait(&spin, wire_recv_now, &in)) {
    in.flags = MSG_CMSG_CLOEXEC;
    wire_recv_now(&in);
  }
  r = in.r;
  int *got = in.got, ngot = in.ngot;
  bool truncated = in.truncated;
  if (r > 0 && !truncated && take_wire((size_t)r, n, fds, errs, messages, got, ngot)) return true;
  /* no answer that makes sense: none is taken, each path the mount's */
  for (int i = 0; i < ngot; i++) close(got[i]);
  for (int i = 0; i < n; i++) free(messages[i]);
  no_answers(n, fds, errs, messages);
  open_chan_forget();
  open_chan_broken = true;
  return true;
}

static void host_open_read(void *data, const char *cwd, const char *const *paths, int n, int *fds,
                           int *errs, char **messages)
{
  if (chan_open_read(cwd, paths, n, fds, errs, messages)) return;
  host_open_read_recv(data, host_open_read_send(data, cwd, paths, n), n, fds, errs, messages);
}

/* An extraction's new files through boxd (box/fastopen.c): one request
 * for a batch instead of the mount's LOOKUP and CREATE for each. */
static void host_create_write(void *data, const char *cwd, const char *const *paths,
                              const mode_t *modes, int n, int *fds, int *errs)
{
  (void)data;
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("create"));
  json_object_object_add(req, "cwd", json_object_new_string(cwd ? cwd : ""));
  json_object_object_add(req, "paths", string_array((char *const *)paths, n));
  json_object *m = json_object_new_array_ext(n);
  for (int i = 0; i < n; i++) json_object_array_add(m, json_object_new_int((int)modes[i]));
  json_object_object_add(req, "modes", m);
  int ticket = send_with_ticket(req);
  char *messages[BOX_CTL_MAX_FDS];
  if (ticket < 0) {
    for (int i = 0; i < n; i++) fds[i] = -1, errs[i] = 0;
    return;
  }
  take_answers(ticket, n, fds, errs, messages);
  close(ticket);
  for (int i = 0; i < n; i++) free(messages[i]); /* a refusal is the mount's to word */
}

/* A directory's listing through boxd (box/fastopen.c): one
 * request instead of the mount's OPENDIR, READDIRs and RELEASEDIR. */
static int host_list_dir_send(void *data, const char *cwd, const char *path, int open_first)
{
  (void)data;
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("list"));
  json_object_object_add(req, "cwd", json_object_new_string(cwd ? cwd : ""));
  json_object_object_add(req, "path", json_object_new_string(path));
  if (open_first > 0) json_object_object_add(req, "open", json_object_new_int(open_first));
  return send_with_ticket(req);
}

/* A listing's answer read from sock: 1 when boxd answered (records, or
 * *err and maybe a message), 0 when it is the mount's.  *ended: sock ended
 * or broke. */
static int list_take(int sock, char **records, size_t *len, int *err, char **message,
                     int open_first, int *fds, int *errs, char **messages, bool *ended)
{
  *ended = false;
  *records = NULL;
  *len = 0;
  *err = 0;
  *message = NULL;
  no_answers(open_first, fds, errs, messages);
  /* The first packet: boxd's JSON answer ('{': the mount's, or a refusal)
   * or the records, in tagged chunks: 'D' more follow, 'E' the last, 'X' a
   * failure part way. */
  size_t n = 0;
  const char *p = box_ctl_recv_packet(sock, NULL, NULL, &n);
  *ended = !p;
  int taken = 0;
  if (p && n > 0 && p[0] == '{') {
    json_object *head = json_tokener_parse(p);
    json_object *v;
    if (head && !json_object_object_get_ex(head, "fallback", &v) &&
        json_object_object_get_ex(head, "err", &v)) {
      taken = 1;
      *err = json_object_get_int(v);
      if (json_object_object_get_ex(head, "message", &v))
        *message = strdup(json_object_get_string(v));
    }
    json_object_put(head);
  } else if (p) {
    taken = 1;
    char *buf = NULL;
    size_t cap = 0;
    for (; p; p = box_ctl_recv_packet(sock, NULL, NULL, &n)) {
      if (n > 1 && (p[0] == 'D' || p[0] == 'E')) {
        if (*len + n > cap) {
          cap = MAX(2 * cap, *len + n);
          char *nb = realloc(buf, cap);
          if (!nb) {
            *err = ENOMEM;
            break;
          }
          buf = nb;
        }
        memcpy(buf + *len, p + 1, n - 1);
        *len += n - 1;
      }
      if (n == 0 || p[0] != 'D') break;
    }
    if (*err == 0) {
      /* ended without its end (boxd went away), or failed part way */
      if (!p || (p[0] != 'E' && p[0] != 'X'))
        *err = EIO, *ended = true;
      else if (p[0] == 'X' && (*err = atoi(p + 1)) <= 0) /* NUL-terminated by the receive */
        *err = EIO;
    }
    if (*err) {
      free(buf);
      *len = 0;
    } else {
      *records = buf ? buf : malloc(1);
      if (open_first > 0) /* the leading files' answers follow the records */
        take_answers(sock, open_first, fds, errs, messages);
    }
  }
  return taken;
}

static int host_list_dir_recv(void *data, int ticket, char **records, size_t *len, int *err,
                              char **message, int open_first, int *fds, int *errs, char **messages)
{
  (void)data;
  bool ended;
  int taken =
    list_take(ticket, records, len, err, message, open_first, fds, errs, messages, &ended);
  if (ticket >= 0) close(ticket);
  return taken;
}

/* A listing asked on the open channel (BOX_LIST_WIRE_TAG), one message each
 * way: -1 when it could not be asked there (nothing was decided). */
static int chan_list_dir(const char *cwd, const char *path, char **records, size_t *len, int *err,
                         char **message)
{
  size_t lc = cwd ? strlen(cwd) : 0, lp = strlen(path);
  if (open_channel() < 0 || 3 + lc + lp > BOX_OPEN_WIRE_MAX) return -1;
  wire_out[0] = BOX_LIST_WIRE_TAG;
  memcpy(wire_out + 1, cwd ? cwd : "", lc + 1);
  memcpy(wire_out + 2 + lc, path, lp + 1);
  flush_status();
  ssize_t r;
  do r = send(open_chan, wire_out, 3 + lc + lp, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  bool ended = r != (ssize_t)(3 + lc + lp);
  int taken =
    ended ? -1 : list_take(open_chan, records, len, err, message, 0, NULL, NULL, NULL, &ended);
  if (ended) {
    /* boxd did not take the channel (it keeps a few per command), or it
     * went away: tickets from now on, this one's too when nothing came */
    open_chan_forget();
    open_chan_broken = true;
    if (taken == 0) taken = -1;
  }
  return taken;
}

static int host_list_dir(void *data, const char *cwd, const char *path, char **records, size_t *len,
                         int *err, char **message, int open_first, int *fds, int *errs,
                         char **messages)
{
  if (open_first == 0) {
    int taken = chan_list_dir(cwd, path, records, len, err, message);
    if (taken >= 0) return taken;
  }
  return host_list_dir_recv(data, host_list_dir_send(data, cwd, path, open_first), records, len,
                            err, message, open_first, fds, errs, messages);
}

/* A permitted shell:exec's exit status, for history rules (one
 * way: boxd records it as the command's ::response, no reply). */
static void host_exec_status(void *data, const BoxShellCommand *cmd, int status)
{
  (void)data;
  json_object *msg = json_object_new_object();
  json_object_object_add(msg, "op", json_object_new_string("status"));
  json_object_object_add(msg, "action", json_object_new_string("shell:exec"));
  json_object_object_add(msg, "input", box_ctl_exec_input(cmd));
  json_object_object_add(msg, "status", json_object_new_int(status));
  flush_status();
  pending_status = msg;
  /* A forked part of the command (subshell, pipeline stage) ends with
   * _exit and sends no "exit": it reports at once. */
  if (getpid() != worker_pid) flush_status();
}

/* ---- what the worker asks of it ---- */

void box_worker_host_start(int ctl)
{
  ctl_fd = ctl;
}

BoxShellHost box_worker_host(void)
{
  /* decisions and programs, then the fast path */
  BoxShellHost host = { .decide_exec = host_decide_exec,
                        .decide_exec_many = host_decide_exec_many,
                        .decide_dry = host_decide_dry,
                        .exec_status = host_exec_status,
                        .resolve = host_resolve };
  host.spawn = host_spawn;
  host.last_denial = host_last_denial;
  host.open_read = host_open_read;
  host.open_read_send = host_open_read_send;
  host.open_read_recv = host_open_read_recv;
  host.list_dir = host_list_dir;
  host.list_dir_send = host_list_dir_send;
  host.list_dir_recv = host_list_dir_recv;
  host.create_write = host_create_write;
  return host;
}

void box_worker_host_ready(void)
{
  static bool registered;
  worker_pid = getpid();
  if (!registered) pthread_atfork(flush_status, NULL, open_chan_forget);
  registered = true;
}

void box_worker_host_take_run(json_object *run)
{
  caller_stdin_known = fstat(0, &caller_stdin) == 0;
  take_decided(run);
}

json_object *box_worker_host_take_status(void)
{
  json_object *s = pending_status;
  pending_status = NULL;
  return s;
}
