/* discover.c — a minimal MCP client over a server's stdin/stdout (newline-
 * delimited JSON-RPC 2.0) or over streamable HTTP: enough to learn a
 * server's tools.  Whatever the server sends that is not the answer
 * awaited (log notifications, requests of its own) is skipped. */
#include "mcp/discover.h"
#include "mcp/http.h"

#include <errno.h>
#include <netdb.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A server that has not answered a step in this long is taken as hung. */
#define STEP_TIMEOUT_MS (30 * 1000)
#define LINE_MAX_BYTES (16 * 1024 * 1024)

typedef struct {
  pid_t pid;
  int in, out; /* the server's stdin (we write), stdout (we read) */
  GString *buf;
  /* an http server: each message is POSTed, its reply's messages put in
   * buf as lines */
  McpEndpoint *ep;
  const char *secret_header;
  char *const *extra_ca;
  char *session;
  char *failure; /* why the last exchange failed */
} Server;

/* A connection to the endpoint, TLS in it for https (the system's
 * trust store and extra_ca trusted); false with s->failure. */
static bool dial(Server *s, McpConn *c)
{
  struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
  int e = getaddrinfo(s->ep->host, s->ep->port, &hints, &res);
  if (e != 0) {
    s->failure = g_strdup_printf("cannot resolve %s: %s", s->ep->host, gai_strerror(e));
    return false;
  }
  int err = 0;
  for (struct addrinfo *a = res; a && c->fd < 0; a = a->ai_next) {
    c->fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (c->fd < 0) continue;
    struct timeval tv = { STEP_TIMEOUT_MS / 1000, 0 };
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(c->fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      close(c->fd);
      c->fd = -1;
    }
  }
  freeaddrinfo(res);
  if (c->fd < 0) {
    s->failure = g_strdup_printf("cannot connect to %s: %s", s->ep->authority, g_strerror(err));
    return false;
  }
  if (!s->ep->tls) return true;
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  bool trusted = ctx && SSL_CTX_set_default_verify_paths(ctx) == 1;
  for (char *const *ca = s->extra_ca; trusted && ca && *ca; ca++)
    trusted = SSL_CTX_load_verify_locations(ctx, *ca, NULL) == 1;
  if (!trusted || !mcp_conn_tls(c, ctx, s->ep->host)) {
    if (!trusted && ctx) SSL_CTX_free(ctx);
    s->failure = g_strdup_printf("TLS with %s failed", s->ep->authority);
    return false;
  }
  return true;
}

/* One message POSTed, its reply's messages into s->buf. */
static bool post(Server *s, const char *text)
{
  g_clear_pointer(&s->failure, g_free);
  McpConn c = { -1, NULL, NULL };
  GString *head = mcp_http_head("POST", s->ep->path, s->ep->authority, s->session, s->secret_header,
                                NULL, (gssize)strlen(text));
  g_string_append(head, text);
  bool sent = dial(s, &c) && mcp_conn_write(&c, head->str, head->len);
  g_string_free(head, TRUE);
  McpReply *r = sent ? mcp_reply_read(&c) : NULL;
  if (sent && !r) s->failure = g_strdup("the server sent no HTTP reply");
  int status = r ? mcp_reply_status(r) : 0;
  if (r && (status < 200 || status > 299)) {
    g_autofree char *text = mcp_reply_rest(r, 512);
    s->failure = g_strdup_printf("the server answered HTTP %d: %s", status, g_strchomp(text));
  } else if (r) {
    g_autofree char *sid = mcp_reply_header(r, "mcp-session-id");
    if (sid && !s->session) s->session = g_steal_pointer(&sid);
    GString *msg = g_string_new(NULL);
    while (mcp_reply_next(r, msg)) {
      /* one line whatever its layout was */
      json_object *o = json_tokener_parse(msg->str);
      if (o)
        g_string_append_printf(s->buf, "%s\n",
                               json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
      json_object_put(o);
    }
    g_string_free(msg, TRUE);
  }
  mcp_reply_free(r);
  mcp_conn_close(&c);
  return s->failure == NULL;
}

static bool send_line(Server *s, const char *text)
{
  if (s->ep) return post(s, text);
  size_t len = strlen(text);
  g_autofree char *line = g_strdup_printf("%s\n", text);
  const char *p = line;
  len++;
  while (len > 0) {
    ssize_t n = write(s->in, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

/* The next JSON-RPC response with id ID, or NULL with *why set. */
static json_object *await_response(Server *s, int id, char **why)
{
  gint64 deadline = g_get_monotonic_time() / 1000 + STEP_TIMEOUT_MS;
  for (;;) {
    char *nl;
    while ((nl = memchr(s->buf->str, '\n', s->buf->len)) != NULL) {
      g_autofree char *line = g_strndup(s->buf->str, (gsize)(nl - s->buf->str));
      g_string_erase(s->buf, 0, nl - s->buf->str + 1);
      json_object *msg = json_tokener_parse(line), *mid = NULL;
      if (msg && json_object_object_get_ex(msg, "id", &mid) &&
          json_object_is_type(mid, json_type_int) && json_object_get_int(mid) == id &&
          !json_object_object_get_ex(msg, "method", NULL))
        return msg;
      json_object_put(msg);
    }
    if (s->ep) { /* every message of the reply is in */
      *why = g_strdup("the server's reply holds no answer");
      return NULL;
    }
    if (s->buf->len > LINE_MAX_BYTES) {
      *why = g_strdup("the server sent a line of more than 16 MiB");
      return NULL;
    }
    int left = (int)(deadline - g_get_monotonic_time() / 1000);
    if (left <= 0) {
      *why = g_strdup("the server did not answer within 30 seconds");
      return NULL;
    }
    struct pollfd pfd = { s->out, POLLIN, 0 };
    int r = poll(&pfd, 1, left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char chunk[65536];
    ssize_t n = read(s->out, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = g_strdup("the server closed its output");
      return NULL;
    }
    g_string_append_len(s->buf, chunk, n);
  }
}

/* The result of request METHOD (params PARAMS, may be NULL), or NULL. */
static json_object *request(Server *s, int id, const char *method, json_object *params, char **why)
{
  json_object *req = json_object_new_object();
  json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(req, "id", json_object_new_int(id));
  json_object_object_add(req, "method", json_object_new_string(method));
  if (params) json_object_object_add(req, "params", params);
  bool sent = send_line(s, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
  json_object_put(req);
  if (!sent) {
    *why = s->failure ? g_steal_pointer(&s->failure) : g_strdup("the server closed its input");
    return NULL;
  }
  json_object *resp = await_response(s, id, why), *result = NULL, *err = NULL;
  if (!resp) return NULL;
  if (json_object_object_get_ex(resp, "error", &err)) {
    json_object *m = NULL;
    json_object_object_get_ex(err, "message", &m);
    *why = g_strdup_printf("the server answered with an error: %s",
                           m ? json_object_get_string(m) : "(no message)");
  } else if (!json_object_object_get_ex(resp, "result", &result) ||
             !json_object_is_type(result, json_type_object)) {
    *why = g_strdup("the server's answer holds no result object");
  } else {
    json_object_get(result);
  }
  json_object_put(resp);
  return *why ? NULL : result;
}

/* Every page of tools/list, as one result. */
static json_object *list_tools(Server *s, char **why)
{
  json_object *all = json_object_new_array();
  char *cursor = NULL;
  for (int id = 2; id < 1002; id++) {
    json_object *params = NULL;
    if (cursor) {
      params = json_object_new_object();
      json_object_object_add(params, "cursor", json_object_new_string(cursor));
      g_clear_pointer(&cursor, g_free);
    }
    json_object *page = request(s, id, "tools/list", params, why), *tools = NULL, *next = NULL;
    if (!page) break;
    if (json_object_object_get_ex(page, "tools", &tools) &&
        json_object_is_type(tools, json_type_array))
      for (size_t i = 0; i < json_object_array_length(tools); i++)
        json_object_array_add(all, json_object_get(json_object_array_get_idx(tools, i)));
    if (json_object_object_get_ex(page, "nextCursor", &next) &&
        json_object_is_type(next, json_type_string))
      cursor = g_strdup(json_object_get_string(next));
    json_object_put(page);
    if (!cursor) {
      json_object *result = json_object_new_object();
      json_object_object_add(result, "tools", all);
      return result;
    }
  }
  if (!*why) *why = g_strdup("the server's tool list has more than 1000 pages");
  g_free(cursor);
  json_object_put(all);
  return NULL;
}

/* In the child: PATH is that of env, else of this process, and exec
 * resolves the bare program on it. */
static void exec_server(char *const *command, GHashTable *env, const char *workspace)
{
  const char *path = env ? g_hash_table_lookup(env, "PATH") : NULL;
  const char *home = env ? g_hash_table_lookup(env, "HOME") : NULL;
  const char *own_path = getenv("PATH"), *own_home = getenv("HOME");
  g_autofree char *p = g_strdup(path ? path : own_path ? own_path : "/usr/bin:/bin");
  g_autofree char *h = g_strdup(home ? home : own_home ? own_home : "/");
  clearenv();
  setenv("PATH", p, 1);
  setenv("HOME", h, 1);
  if (env) {
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, env);
    while (g_hash_table_iter_next(&it, &k, &v)) setenv(k, v, 1);
  }
  if (workspace && chdir(workspace) != 0) {
    fprintf(stderr, "box: cannot enter %s: %s\n", workspace, strerror(errno));
    _exit(127);
  }
  execvp(command[0], command);
  fprintf(stderr, "box: cannot run %s: %s\n", command[0], strerror(errno));
  _exit(127);
}

static bool start(Server *s, char *const *command, GHashTable *env, const char *workspace,
                  char **why)
{
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0) goto fail;
  if (pipe2(from, O_CLOEXEC) != 0) {
    close(to[0]);
    close(to[1]);
    goto fail;
  }
  s->pid = fork();
  if (s->pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    exec_server(command, env, workspace);
  }
  close(to[0]);
  close(from[1]);
  if (s->pid < 0) {
    close(to[1]);
    close(from[0]);
    goto fail;
  }
  s->in = to[1];
  s->out = from[0];
  return true;
fail:
  *why = g_strdup_printf("cannot start the server: %s", g_strerror(errno));
  return false;
}

static void stop(Server *s)
{
  if (s->in >= 0) close(s->in);
  if (s->out >= 0) close(s->out);
  if (s->pid > 0) {
    /* Closed stdin asks a well-behaved server to leave; the rest are ended. */
    for (int i = 0; i < 20; i++) {
      if (waitpid(s->pid, NULL, WNOHANG) == s->pid) return;
      g_usleep(10 * 1000);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
  }
}

/* initialize, notifications/initialized and tools/list; *step the one
 * that failed. */
static json_object *discover(Server *s, const char **step, char **detail)
{
  *step = "initialize";
  json_object *params = json_object_new_object(), *info = json_object_new_object();
  json_object_object_add(params, "protocolVersion", json_object_new_string("2025-06-18"));
  json_object_object_add(params, "capabilities", json_object_new_object());
  json_object_object_add(info, "name", json_object_new_string("box"));
  json_object_object_add(info, "version", json_object_new_string("1"));
  json_object_object_add(params, "clientInfo", info);
  json_object *init = request(s, 1, "initialize", params, detail);
  if (!init) return NULL;
  json_object_put(init);
  *step = "tools/list";
  if (send_line(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"))
    return list_tools(s, detail);
  *detail = s->failure ? g_steal_pointer(&s->failure) : g_strdup("the server closed its input");
  return NULL;
}

static json_object *failed(const char *name, const char *step, char *detail, char **why)
{
  *why = g_strdup_printf("MCP server \"%s\" failed during %s: %s", name, step, detail);
  g_free(detail);
  return NULL;
}

json_object *mcp_discover_stdio(const char *name, char *const *command, GHashTable *env,
                                const char *workspace, char **why)
{
  *why = NULL;
  Server s = { -1, -1, -1, g_string_new(NULL), NULL, NULL, NULL, NULL, NULL };
  const char *step = "start";
  char *detail = NULL;
  json_object *tools = NULL;
  signal(SIGPIPE, SIG_IGN);
  if (start(&s, command, env, workspace, &detail)) tools = discover(&s, &step, &detail);
  stop(&s);
  g_string_free(s.buf, TRUE);
  return tools ? tools : failed(name, step, detail, why);
}

json_object *mcp_discover_http(const char *name, const char *endpoint, const char *secret_header,
                               char *const *extra_ca, char **why)
{
  *why = NULL;
  McpEndpoint ep;
  if (!mcp_endpoint_parse(endpoint, &ep))
    return failed(name, "initialize", g_strdup_printf("%s is no http(s) URL", endpoint), why);
  Server s = { -1, -1, -1, g_string_new(NULL), &ep, secret_header, extra_ca, NULL, NULL };
  const char *step = "initialize";
  char *detail = NULL;
  signal(SIGPIPE, SIG_IGN);
  json_object *tools = discover(&s, &step, &detail);
  g_string_free(s.buf, TRUE);
  g_free(s.session);
  g_free(s.failure);
  mcp_endpoint_clear(&ep);
  return tools ? tools : failed(name, step, detail, why);
}
