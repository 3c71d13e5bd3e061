/* mcp_http.c — an http MCP server behind its alias (spec/runtime.md §2.5):
 * the broker's side of MCP's streamable HTTP transport.
 *
 * The broker relays and decides an http server's messages as it does a
 * stdio server's (mcp_serve.c); what stands in for the server's pipes is a
 * bridge that POSTs each message to the server's endpoint through the
 * box's own egress gateway (so reaching it is decided like any other
 * request: net:connect, http:request, the address floor), with the route's
 * secret in its placement, and hands back the messages of each reply (one
 * JSON body, or the events of an SSE stream) as lines, each as it
 * arrives.  Each exchange has a connection of its own: for an https
 * endpoint a CONNECT tunnel, where the gateway's certificate (its per-run
 * CA's) is the one trusted, as the gateway itself verifies the server's.
 * Messages are POSTed in order, each once the server has begun its reply
 * to the one before; a reply's stream is read on a thread of its own, so a
 * server's request on it (sampling, elicitation) reaches the agent, whose
 * answer is POSTed while the stream is still open.  Once the session is
 * initialized, a GET opens the server's own stream, for the notifications
 * and requests that belong to no call; it is opened again when it ends.
 *
 * A stream that ends before it has said all it will (a call's stream
 * before the call's answer; the server's own stream at any time) is
 * resumed as the transport provides: a GET with the Last-Event-ID of the
 * last event read, after the pause the stream asked for, hands on the
 * events that were missed and those still to come.  A call whose stream
 * cannot be resumed is answered with an error, so that the agent's client
 * never waits for an answer that cannot come.  When the agent's side ends,
 * the session is ended with a DELETE. */
#include "box/box-private.h"
#include "gateway/gateway.h"
#include "mcp/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The gateway's own limit on a silent upstream bounds a reply's wait. */
#define HTTP_TIMEOUT_S 330
/* The wait before the server's stream is opened again once it ended, when
 * it asked for none. */
#define STREAM_REOPEN_MS 1000
/* Resumes in a row that brought no new event before a call is given up. */
#define RESUME_TRIES 3
/* The longest pause before a resume a server may ask for. */
#define RESUME_PAUSE_MAX_MS (60 * 1000)
/* How long the session's DELETE may take once the agent's side ended. */
#define DELETE_TIMEOUT_S 10

char *boxd_mcp_endpoint(const BoxMcpServer *m, char **why)
{
  for (char **d = m->route->destinations; d && *d; d++) {
    if (strpbrk(*d, "*/")) continue; /* a suffix or a path names no one host */
    const char *colon = strrchr(*d, ':');
    if (!colon || strchr(*d, ']') > colon) return g_strdup_printf("https://%s/mcp", *d);
    g_autofree char *host = g_strndup(*d, (gsize)(colon - *d));
    if (strcmp(colon + 1, "443") == 0) return g_strdup_printf("https://%s/mcp", host);
    if (strcmp(colon + 1, "80") == 0) return g_strdup_printf("http://%s/mcp", host);
    return g_strdup_printf("http://%s/mcp", *d);
  }
  *why = g_strdup_printf("MCP server \"%s\" names no single host in `destinations`", m->name);
  return NULL;
}

typedef struct {
  Boxd *d;
  const BoxMcpServer *m;
  McpEndpoint ep;
  char *endpoint;
  int in, out; /* lines from the broker; lines to it */
  GMutex lock; /* the fields below, and whole lines written to out */
  GCond changed;
  char *session;    /* Mcp-Session-Id the server gave at initialize */
  char *init_id;    /* the initialize request's id (JSON text) */
  char *protocol;   /* the protocol version the server chose at initialize */
  GHashTable *open; /* McpConn * being read: shut down at the end */
  int readers;      /* reply streams still being read */
  bool ending;      /* the broker's side ended */
  GThread *stream;  /* the server's own stream (GET), once initialized */
} Bridge;

/* The id (JSON text) of msg when it is an answer, else NULL. */
static const char *answer_id(json_object *msg)
{
  json_object *id = NULL;
  if (!json_object_is_type(msg, json_type_object) ||
      json_object_object_get_ex(msg, "method", NULL) || !json_object_object_get_ex(msg, "id", &id))
    return NULL;
  return json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN);
}

/* Whether msg (or, a batch, one of its messages) answers the request
 * whose id is AWAITED (JSON text; may be NULL). */
static bool answers_to(json_object *msg, const char *awaited)
{
  if (!json_object_is_type(msg, json_type_array))
    return awaited && g_strcmp0(answer_id(msg), awaited) == 0;
  bool any = false;
  for (size_t i = 0; i < json_object_array_length(msg) && !any; i++)
    any = answers_to(json_object_array_get_idx(msg, i), awaited);
  return any;
}

/* One message to the broker, on one line whatever its layout was (a
 * pretty-printed body, an event's several data lines); what is no JSON is
 * no message.  True when it is the answer to the request whose id is
 * AWAITED (JSON text; may be NULL). */
static bool emit(Bridge *b, const char *msg, size_t len, const char *awaited)
{
  json_tokener *tok = json_tokener_new();
  json_object *o = json_tokener_parse_ex(tok, msg, (int)MIN(len, (size_t)G_MAXINT));
  bool whole = o && json_tokener_get_error(tok) == json_tokener_success;
  json_tokener_free(tok);
  bool answers = false;
  if (whole) {
    const char *line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    const char *id = answer_id(o);
    answers = answers_to(o, awaited);
    json_object *result = NULL, *version = NULL;
    g_mutex_lock(&b->lock);
    /* every later request names the version (the transport's
     * MCP-Protocol-Version), which a server's resumable streams need */
    if (!b->protocol && id && g_strcmp0(id, b->init_id) == 0 &&
        json_object_object_get_ex(o, "result", &result) &&
        json_object_object_get_ex(result, "protocolVersion", &version) &&
        json_object_is_type(version, json_type_string))
      b->protocol = g_strdup(json_object_get_string(version));
    if (boxd_mcp_write_all(b->out, line, strlen(line))) boxd_mcp_write_all(b->out, "\n", 1);
    g_mutex_unlock(&b->lock);
  }
  json_object_put(o);
  return answers;
}

/* The broker's answer, as the server's, to a request the exchange failed. */
static void emit_failure(Bridge *b, json_object *id, const char *why)
{
  if (!id) return;
  json_object *resp = json_object_new_object(), *err = json_object_new_object();
  json_object_object_add(resp, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(resp, "id", json_object_get(id));
  json_object_object_add(err, "code", json_object_new_int(-32001));
  g_autofree char *text = g_strdup_printf("MCP server \"%s\" %s", b->m->name, why);
  json_object_object_add(err, "message", json_object_new_string(text));
  json_object_object_add(resp, "error", err);
  const char *line = json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN);
  emit(b, line, strlen(line), NULL);
  json_object_put(resp);
}

static int dial_gateway(Boxd *d)
{
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)d->gateway_port) };
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The tunnel to host:443 through the gateway, and TLS in it that trusts
 * only the gateway's CA; false with *why. */
static bool conn_tunnel(Boxd *d, McpConn *c, const char *host, char **why)
{
  g_autofree char *req =
    g_strdup_printf("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", host, host);
  /* the gateway sends nothing after its answer before TLS begins */
  McpReply *r = mcp_conn_write(c, req, strlen(req)) ? mcp_reply_read(c) : NULL;
  if (!r) {
    *why = g_strdup("could not be reached through the gateway");
    return false;
  }
  if (mcp_reply_status(r) != 200) {
    /* a refusal's body says why */
    g_autofree char *body = mcp_reply_rest(r, 1024);
    *why = g_strchomp(g_strdup_printf("was not reached: %s", body));
    mcp_reply_free(r);
    return false;
  }
  mcp_reply_free(r);
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  BIO *bio = BIO_new_mem_buf(box_gateway_ca_pem(d->gateway), -1);
  X509 *ca = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
  BIO_free(bio);
  bool trusted = ctx && ca && X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca) == 1;
  X509_free(ca);
  if (!trusted || !mcp_conn_tls(c, ctx, host)) {
    if (!trusted && ctx) SSL_CTX_free(ctx);
    ERR_clear_error();
    *why = g_strdup("could not be reached: TLS through the gateway failed");
    return false;
  }
  return true;
}

/* A connection to the endpoint through the gateway, watched so that the
 * end can cut it, whose reads wait at most timeout_s; false with *why
 * (NULL: the bridge is ending). */
static bool conn_open(Bridge *b, McpConn *c, int timeout_s, char **why)
{
  *c = (McpConn){ dial_gateway(b->d), NULL, NULL };
  if (c->fd < 0) {
    *why = g_strdup("could not be reached through the gateway");
    return false;
  }
  struct timeval tv = { timeout_s, 0 };
  setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  g_mutex_lock(&b->lock);
  bool ending = b->ending;
  if (!ending) g_hash_table_add(b->open, c);
  g_mutex_unlock(&b->lock);
  if (ending) {
    mcp_conn_close(c);
    *why = NULL;
    return false;
  }
  return !b->ep.tls || conn_tunnel(b->d, c, b->ep.host, why);
}

static void conn_done(Bridge *b, McpConn *c)
{
  g_mutex_lock(&b->lock);
  g_hash_table_remove(b->open, c);
  g_mutex_unlock(&b->lock);
  mcp_conn_close(c);
}

/* A request to the endpoint, sent: METHOD with the session's id, its
 * protocol version, the route's secret, the Last-Event-ID of a resume
 * (NULL: none) and body (NULL: none); its reply's head, or NULL with
 * *why. */
static McpReply *request(Bridge *b, McpConn *c, const char *method, const char *last_id,
                         const char *body, char **why)
{
  g_autofree char *secret_line = NULL;
  const char *secret = boxd_mcp_secret(b->d, b->m->name);
  if (secret)
    secret_line =
      g_strdup_printf("%s: %s%s", b->m->route->header ? b->m->route->header : "Authorization",
                      b->m->route->prefix ? b->m->route->prefix : "Bearer ", secret);
  g_mutex_lock(&b->lock);
  g_autofree char *version =
    b->protocol ? g_strdup_printf("MCP-Protocol-Version: %s", b->protocol) : NULL;
  g_autofree char *resume = last_id ? g_strdup_printf("Last-Event-ID: %s", last_id) : NULL;
  const char *more[] = { version ? version : resume, version ? resume : NULL, NULL };
  GString *req = mcp_http_head(method, b->ep.tls ? b->ep.path : b->endpoint, b->ep.authority,
                               b->session, secret_line, more, body ? (gssize)strlen(body) : -1);
  g_mutex_unlock(&b->lock);
  if (secret_line) OPENSSL_cleanse(secret_line, strlen(secret_line));
  if (body) g_string_append(req, body);
  bool sent = mcp_conn_write(c, req->str, req->len);
  OPENSSL_cleanse(req->str, req->len); /* it holds the secret */
  g_string_free(req, TRUE);
  McpReply *r = sent ? mcp_reply_read(c) : NULL;
  if (!r) *why = g_strdup("could not be reached through the gateway");
  return r;
}

/* Why a reply that is no success failed: the gateway's refusal, or its
 * failure to reach the server (a 502 of its own), says why in its body;
 * another status is the server's. */
static char *refusal_of(McpReply *r)
{
  g_autofree char *refused = mcp_reply_header(r, "x-strands-box-egress");
  g_autofree char *failed = mcp_reply_header(r, "x-strands-box-egress-error");
  bool marked = refused || failed;
  g_autofree char *body = mcp_reply_rest(r, marked ? 1024 : 512);
  char *why = marked ? g_strdup_printf("was not reached: %s", body)
                     : g_strdup_printf("answered HTTP %d: %s", mcp_reply_status(r), body);
  return g_strchomp(why);
}

/* Each message of a reply handed on as it arrives, until the answer to
 * the request whose id is AWAITED (JSON text; NULL: none): true once that
 * was handed on, false at the reply's end. */
static bool pass_on(Bridge *b, McpReply *r, const char *awaited)
{
  GString *msg = g_string_new(NULL);
  bool answered = false;
  while (!answered && mcp_reply_next(r, msg)) answered = emit(b, msg->str, msg->len, awaited);
  g_string_free(msg, TRUE);
  return answered;
}

/* Waits ms, or less once the bridge is ending; false when it is. */
static bool pause_unless_ending(Bridge *b, gint64 ms)
{
  g_mutex_lock(&b->lock);
  gint64 until = g_get_monotonic_time() + MIN(ms, RESUME_PAUSE_MAX_MS) * G_TIME_SPAN_MILLISECOND;
  while (!b->ending && g_cond_wait_until(&b->changed, &b->lock, until)) continue;
  bool ending = b->ending;
  g_mutex_unlock(&b->lock);
  return !ending;
}

/* A GET of the stream whose last event was *last_id (NULL: the server's
 * own stream, from now on) with each message handed on, until the answer
 * AWAITED (JSON text; may be NULL): true once that was handed on.
 * *last_id and *retry_ms follow the stream's; *opened tells whether the
 * server streamed at all, *fresh whether an event came. */
static bool stream_get(Bridge *b, const char *awaited, char **last_id, gint64 *retry_ms,
                       bool *opened, bool *fresh)
{
  McpConn c;
  g_autofree char *why = NULL;
  McpReply *r =
    conn_open(b, &c, HTTP_TIMEOUT_S, &why) ? request(b, &c, "GET", *last_id, NULL, &why) : NULL;
  *opened = r && mcp_reply_status(r) == 200;
  bool answered = *opened && pass_on(b, r, awaited);
  const char *last = r ? mcp_reply_last_id(r) : NULL;
  *fresh = last && g_strcmp0(last, *last_id) != 0;
  if (*fresh) {
    g_free(*last_id);
    *last_id = g_strdup(last);
  }
  if (r && mcp_reply_retry(r) >= 0) *retry_ms = mcp_reply_retry(r);
  mcp_reply_free(r);
  conn_done(b, &c);
  return answered;
}

typedef struct {
  Bridge *b;
  McpConn c;
  McpReply *r;
  char *awaited; /* the POSTed request's id (JSON text), or NULL */
} Reading;

/* The call's stream ended before its answer: resumed from its last event
 * while each resume brings new ones; the call is answered with an error
 * when it cannot be. */
static void resume_call(Bridge *b, const char *awaited, char *last_id, gint64 retry_ms)
{
  bool answered = false;
  for (int tries = 0; last_id && !answered && tries < RESUME_TRIES; tries++) {
    bool opened = false, fresh = false;
    if (!pause_unless_ending(b, MAX(retry_ms, 0))) break;
    answered = stream_get(b, awaited, &last_id, &retry_ms, &opened, &fresh);
    if (!opened) break;
    if (fresh) tries = -1;
  }
  g_mutex_lock(&b->lock);
  bool ending = b->ending;
  g_mutex_unlock(&b->lock);
  if (!answered && !ending) {
    json_object *id = json_tokener_parse(awaited);
    emit_failure(b, id, "ended before it answered");
    json_object_put(id);
  }
  g_free(last_id);
}

static gpointer reader_main(gpointer data)
{
  Reading *x = data;
  Bridge *b = x->b;
  bool answered = pass_on(b, x->r, x->awaited);
  char *last_id = g_strdup(mcp_reply_last_id(x->r));
  gint64 retry_ms = mcp_reply_retry(x->r);
  mcp_reply_free(x->r);
  conn_done(b, &x->c);
  if (x->awaited && !answered) resume_call(b, x->awaited, g_steal_pointer(&last_id), retry_ms);
  g_free(last_id);
  g_free(x->awaited);
  g_free(x);
  g_mutex_lock(&b->lock);
  if (--b->readers == 0) g_cond_broadcast(&b->changed); /* the end awaits the last */
  g_mutex_unlock(&b->lock);
  return NULL;
}

/* The server's own stream (GET) while the session lasts: opened again
 * when it ends, from its last event, until the server refuses it (405: it
 * offers none). */
static gpointer stream_main(gpointer data)
{
  Bridge *b = data;
  char *last_id = NULL;
  gint64 retry_ms = STREAM_REOPEN_MS;
  for (;;) {
    bool opened = false, fresh = false, resumed = last_id != NULL;
    stream_get(b, NULL, &last_id, &retry_ms, &opened, &fresh);
    /* a resume the server refuses (it kept no events) opens it anew */
    if (!opened && resumed) g_clear_pointer(&last_id, g_free);
    if (!(opened || resumed) || !pause_unless_ending(b, opened ? retry_ms : 0)) break;
  }
  g_free(last_id);
  return NULL;
}

/* The session ended with the server (spec: a client that is done with a
 * session DELETEs it); whatever it answers, even 405, is its own. */
static void end_session(Bridge *b)
{
  McpConn c;
  g_autofree char *why = NULL;
  McpReply *r =
    conn_open(b, &c, DELETE_TIMEOUT_S, &why) ? request(b, &c, "DELETE", NULL, NULL, &why) : NULL;
  mcp_reply_free(r);
  conn_done(b, &c);
}

/* One message POSTed; its reply's messages handed back by a reader. */
static void exchange(Bridge *b, const char *line)
{
  json_object *msg = json_tokener_parse(line), *id = NULL, *method = NULL;
  if (msg && json_object_object_get_ex(msg, "method", &method))
    json_object_object_get_ex(msg, "id", &id);
  Reading *x = g_new0(Reading, 1);
  x->b = b;
  if (id) x->awaited = g_strdup(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN));
  if (id && g_strcmp0(json_object_get_string(method), "initialize") == 0) {
    g_mutex_lock(&b->lock);
    g_free(b->init_id);
    b->init_id = g_strdup(x->awaited);
    g_mutex_unlock(&b->lock);
  }
  g_autofree char *why = NULL;
  McpReply *r =
    conn_open(b, &x->c, HTTP_TIMEOUT_S, &why) ? request(b, &x->c, "POST", NULL, line, &why) : NULL;
  int status = r ? mcp_reply_status(r) : 0;
  if (!r) {
    if (why) emit_failure(b, id, why); /* else the bridge is ending */
  } else if (status < 200 || status > 299) {
    g_autofree char *refused = refusal_of(r);
    emit_failure(b, id, refused);
  } else {
    g_autofree char *sid = mcp_reply_header(r, "mcp-session-id");
    g_mutex_lock(&b->lock);
    if (sid && !b->session) b->session = g_steal_pointer(&sid);
    /* the session is initialized: the server's own stream may open */
    if (b->session && !b->stream && !b->ending &&
        g_strcmp0(json_object_get_string(method), "notifications/initialized") == 0)
      b->stream = g_thread_new("mcp-http-stream", stream_main, b);
    b->readers++;
    g_mutex_unlock(&b->lock);
    x->r = g_steal_pointer(&r);
    g_thread_unref(g_thread_new("mcp-http-reply", reader_main, g_steal_pointer(&x)));
  }
  if (x) {
    mcp_reply_free(r);
    conn_done(b, &x->c);
    g_free(x->awaited);
    g_free(x);
  }
  json_object_put(msg);
}

static gpointer bridge_main(gpointer data)
{
  Bridge *b = data;
  GString *buf = g_string_new(NULL);
  char chunk[65536];
  for (;;) {
    ssize_t n = read(b->in, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    g_string_append_len(buf, chunk, n);
    char *nl;
    while ((nl = memchr(buf->str, '\n', buf->len)) != NULL) {
      *nl = '\0';
      if (nl > buf->str) exchange(b, buf->str);
      g_string_erase(buf, 0, nl - buf->str + 1);
    }
  }
  g_string_free(buf, TRUE);
  close(b->in);
  /* The broker's side ended: the session is ended, the streams still read
   * are cut, the readers and the server's stream awaited. */
  g_mutex_lock(&b->lock);
  bool session = b->session != NULL;
  g_mutex_unlock(&b->lock);
  if (session) end_session(b);
  g_mutex_lock(&b->lock);
  b->ending = true;
  GHashTableIter it;
  gpointer c;
  g_hash_table_iter_init(&it, b->open);
  while (g_hash_table_iter_next(&it, &c, NULL)) shutdown(((McpConn *)c)->fd, SHUT_RDWR);
  g_cond_broadcast(&b->changed);
  while (b->readers > 0) g_cond_wait(&b->changed, &b->lock);
  GThread *stream = b->stream;
  g_mutex_unlock(&b->lock);
  if (stream) g_thread_join(stream);
  close(b->out); /* the broker sees the server's end */
  g_hash_table_destroy(b->open);
  g_mutex_clear(&b->lock);
  g_cond_clear(&b->changed);
  mcp_endpoint_clear(&b->ep);
  g_free(b->session);
  g_free(b->init_id);
  g_free(b->protocol);
  g_free(b->endpoint);
  g_free(b);
  return NULL;
}

GThread *boxd_mcp_http_start(Boxd *d, const BoxMcpServer *m, const char *endpoint, int *to_server,
                             int *from_server, char **why)
{
  int in[2] = { -1, -1 }, out[2] = { -1, -1 };
  McpEndpoint ep;
  if (!mcp_endpoint_parse(endpoint, &ep)) {
    *why =
      g_strdup_printf("MCP server \"%s\" may not start: %s is no http(s) URL", m->name, endpoint);
    return NULL;
  }
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    *why = g_strdup_printf("MCP server \"%s\" may not start: %s", m->name, g_strerror(errno));
    int ends[] = { in[0], in[1], out[0], out[1] };
    for (size_t i = 0; i < G_N_ELEMENTS(ends); i++)
      if (ends[i] >= 0) close(ends[i]);
    mcp_endpoint_clear(&ep);
    return NULL;
  }
  Bridge *b = g_new0(Bridge, 1);
  *b = (Bridge){ .d = d,
                 .m = m,
                 .ep = ep,
                 .endpoint = g_strdup(endpoint),
                 .in = in[0],
                 .out = out[1],
                 .open = g_hash_table_new(NULL, NULL) };
  g_mutex_init(&b->lock);
  g_cond_init(&b->changed);
  *to_server = in[1];
  *from_server = out[0];
  return g_thread_new("mcp-http", bridge_main, b);
}
