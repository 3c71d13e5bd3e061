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
 * and requests that belong to no call; it is opened again when it ends. */
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
/* The wait before the server's stream is opened again once it ended. */
#define STREAM_REOPEN_MS 1000

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
  GHashTable *open; /* McpConn * being read: shut down at the end */
  int readers;      /* reply streams still being read */
  bool ending;      /* the broker's side ended */
  GThread *stream;  /* the server's own stream (GET), once initialized */
} Bridge;

/* One message to the broker, on one line whatever its layout was (a
 * pretty-printed body, an event's several data lines); what is no JSON is
 * no message. */
static void emit(Bridge *b, const char *msg, size_t len)
{
  json_tokener *tok = json_tokener_new();
  json_object *o = json_tokener_parse_ex(tok, msg, (int)MIN(len, (size_t)G_MAXINT));
  bool whole = o && json_tokener_get_error(tok) == json_tokener_success;
  json_tokener_free(tok);
  if (whole) {
    const char *line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    g_mutex_lock(&b->lock);
    if (boxd_mcp_write_all(b->out, line, strlen(line))) boxd_mcp_write_all(b->out, "\n", 1);
    g_mutex_unlock(&b->lock);
  }
  json_object_put(o);
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
  emit(b, line, strlen(line));
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
 * end can cut it; false with *why (NULL: the bridge is ending). */
static bool conn_open(Bridge *b, McpConn *c, char **why)
{
  *c = (McpConn){ dial_gateway(b->d), NULL, NULL };
  if (c->fd < 0) {
    *why = g_strdup("could not be reached through the gateway");
    return false;
  }
  struct timeval tv = { HTTP_TIMEOUT_S, 0 };
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

/* A request to the endpoint, sent: METHOD with the session's id, the
 * route's secret and body (NULL: none); its reply's head, or NULL with
 * *why. */
static McpReply *request(Bridge *b, McpConn *c, const char *method, const char *body, char **why)
{
  g_autofree char *secret_line = NULL;
  const char *secret = boxd_mcp_secret(b->d, b->m->name);
  if (secret)
    secret_line =
      g_strdup_printf("%s: %s%s", b->m->route->header ? b->m->route->header : "Authorization",
                      b->m->route->prefix ? b->m->route->prefix : "Bearer ", secret);
  g_mutex_lock(&b->lock);
  GString *req = mcp_http_head(method, b->ep.tls ? b->ep.path : b->endpoint, b->ep.authority,
                               b->session, secret_line, body ? (gssize)strlen(body) : -1);
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

/* Why a reply that is no success failed: the gateway's refusal says why
 * in its body; another status is the server's. */
static char *refusal_of(McpReply *r)
{
  g_autofree char *marked = mcp_reply_header(r, "x-strands-box-egress");
  g_autofree char *body = mcp_reply_rest(r, marked ? 1024 : 512);
  char *why = marked ? g_strdup_printf("was not reached: %s", body)
                     : g_strdup_printf("answered HTTP %d: %s", mcp_reply_status(r), body);
  return g_strchomp(why);
}

/* Each message of a reply handed on as it arrives. */
static void pass_on(Bridge *b, McpReply *r)
{
  GString *msg = g_string_new(NULL);
  while (mcp_reply_next(r, msg)) emit(b, msg->str, msg->len);
  g_string_free(msg, TRUE);
}

typedef struct {
  Bridge *b;
  McpConn c;
  McpReply *r;
} Reading;

static gpointer reader_main(gpointer data)
{
  Reading *x = data;
  Bridge *b = x->b;
  pass_on(b, x->r);
  mcp_reply_free(x->r);
  conn_done(b, &x->c);
  g_free(x);
  g_mutex_lock(&b->lock);
  if (--b->readers == 0) g_cond_broadcast(&b->changed); /* the end awaits the last */
  g_mutex_unlock(&b->lock);
  return NULL;
}

/* The server's own stream (GET) while the session lasts: opened again
 * when it ends, until the server refuses it (405: it offers none). */
static gpointer stream_main(gpointer data)
{
  Bridge *b = data;
  for (;;) {
    McpConn c;
    g_autofree char *why = NULL;
    bool open = conn_open(b, &c, &why);
    McpReply *r = open ? request(b, &c, "GET", NULL, &why) : NULL;
    bool streams = r && mcp_reply_status(r) == 200;
    if (streams) pass_on(b, r);
    mcp_reply_free(r);
    conn_done(b, &c);
    g_mutex_lock(&b->lock);
    /* a stream the server cut is opened again, after a pause */
    gint64 until = g_get_monotonic_time() + STREAM_REOPEN_MS * G_TIME_SPAN_MILLISECOND;
    while (streams && !b->ending && g_cond_wait_until(&b->changed, &b->lock, until)) continue;
    bool again = streams && !b->ending;
    g_mutex_unlock(&b->lock);
    if (!again) return NULL;
  }
}

/* One message POSTed; its reply's messages handed back by a reader. */
static void exchange(Bridge *b, const char *line)
{
  json_object *msg = json_tokener_parse(line), *id = NULL, *method = NULL;
  if (msg && json_object_object_get_ex(msg, "method", &method))
    json_object_object_get_ex(msg, "id", &id);
  Reading *x = g_new0(Reading, 1);
  x->b = b;
  g_autofree char *why = NULL;
  McpReply *r = conn_open(b, &x->c, &why) ? request(b, &x->c, "POST", line, &why) : NULL;
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
  /* The broker's side ended: the streams still read are cut, the readers
   * and the server's stream awaited. */
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
