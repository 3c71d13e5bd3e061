/* mcp_http.c — an http MCP server behind its alias (spec/runtime.md §2.5):
 * the broker's side of MCP's streamable HTTP transport.
 *
 * The broker relays and decides an http server's messages as it does a
 * stdio server's (mcp_serve.c); what stands in for the server's pipes is a
 * thread that POSTs each message to the server's endpoint through the
 * box's own egress gateway (so reaching it is decided like any other
 * request: net:connect, http:request, the address floor), with the route's
 * secret in its placement, and hands back the messages of each reply (one
 * JSON body, or the events of an SSE stream) as lines.  One request at a
 * time, on a connection of its own: for an https endpoint a CONNECT
 * tunnel, where the gateway's certificate (its per-run CA's) is the one
 * trusted, as the gateway itself verifies the server's. */
#include "box/box-private.h"
#include "gateway/gateway.h"

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

/* A reply larger than this is no MCP message. */
#define HTTP_BODY_MAX (16 * 1024 * 1024)
/* The gateway's own limit on a silent upstream bounds a reply's wait. */
#define HTTP_TIMEOUT_S 330

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
  char *endpoint;
  char *session; /* Mcp-Session-Id the server gave at initialize */
  int in, out;   /* lines from the broker; lines to it */
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
    if (boxd_mcp_write_all(b->out, line, strlen(line))) boxd_mcp_write_all(b->out, "\n", 1);
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
  struct timeval tv = { HTTP_TIMEOUT_S, 0 };
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* One exchange's connection to the gateway, and TLS inside its tunnel. */
typedef struct {
  int fd;
  SSL *ssl;
  SSL_CTX *ctx;
} Conn;

static void conn_close(Conn *c)
{
  if (c->ssl) {
    SSL_shutdown(c->ssl);
    SSL_free(c->ssl);
  }
  if (c->ctx) SSL_CTX_free(c->ctx);
  if (c->fd >= 0) close(c->fd);
}

static bool conn_write(Conn *c, const char *p, size_t len)
{
  if (!c->ssl) return boxd_mcp_write_all(c->fd, p, len);
  while (len > 0) {
    int n = SSL_write(c->ssl, p, (int)MIN(len, (size_t)G_MAXINT));
    if (n <= 0) return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

static ssize_t conn_read(Conn *c, char *buf, size_t len)
{
  if (!c->ssl) return read(c->fd, buf, len);
  int n = SSL_read(c->ssl, buf, (int)len);
  if (n > 0) return n;
  /* a server that closes without close_notify has still said all it will */
  int e = SSL_get_error(c->ssl, n);
  return e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL ? 0 : -1;
}

static GString *read_reply(Conn *c);

/* The tunnel to host:443 through the gateway, and TLS in it that trusts
 * only the gateway's CA; false with *why. */
static bool conn_tunnel(Boxd *d, Conn *c, const char *host, char **why)
{
  g_autofree char *req =
    g_strdup_printf("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", host, host);
  if (!boxd_mcp_write_all(c->fd, req, strlen(req))) {
    *why = g_strdup("could not be reached through the gateway");
    return false;
  }
  /* the gateway's answer to CONNECT, read a byte at a time: TLS follows it */
  GString *head = g_string_new(NULL);
  char ch;
  while (!g_str_has_suffix(head->str, "\r\n\r\n") && head->len < 65536 && read(c->fd, &ch, 1) == 1)
    g_string_append_c(head, ch);
  bool open =
    g_str_has_prefix(head->str, "HTTP/1.1 200") || g_str_has_prefix(head->str, "HTTP/1.0 200");
  g_string_free(head, TRUE);
  if (!open) {
    /* a refusal's body says why */
    GString *body = read_reply(c);
    *why = g_strdup_printf("was not reached: %.*s", body ? (int)MIN(body->len, 1024) : 0,
                           body ? body->str : "");
    g_strchomp(*why);
    if (body) g_string_free(body, TRUE);
    return false;
  }
  c->ctx = SSL_CTX_new(TLS_client_method());
  BIO *bio = BIO_new_mem_buf(box_gateway_ca_pem(d->gateway), -1);
  X509 *ca = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
  BIO_free(bio);
  bool trusted = c->ctx && ca && X509_STORE_add_cert(SSL_CTX_get_cert_store(c->ctx), ca) == 1;
  X509_free(ca);
  if (trusted) {
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
    c->ssl = SSL_new(c->ctx);
  }
  unsigned char ip[16];
  bool literal = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
  bool named = c->ssl && (literal ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host)
                                  : SSL_set_tlsext_host_name(c->ssl, host) == 1 &&
                                      SSL_set1_host(c->ssl, host)) == 1;
  if (!named || SSL_set_fd(c->ssl, c->fd) != 1 || SSL_connect(c->ssl) != 1) {
    ERR_clear_error();
    *why = g_strdup("could not be reached: TLS through the gateway failed");
    return false;
  }
  return true;
}

/* The whole reply (the request says Connection: close), or NULL. */
static GString *read_reply(Conn *c)
{
  GString *s = g_string_new(NULL);
  char chunk[65536];
  for (;;) {
    ssize_t n = conn_read(c, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      g_string_free(s, TRUE);
      return NULL;
    }
    if (n == 0) return s;
    g_string_append_len(s, chunk, n);
    if (s->len > HTTP_BODY_MAX) {
      g_string_free(s, TRUE);
      return NULL;
    }
  }
}

/* A header's value in the head (lines after the status line), or NULL. */
static char *header(const char *head, const char *name)
{
  size_t n = strlen(name);
  for (const char *p = strstr(head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
    const char *line = p + 2;
    if (g_ascii_strncasecmp(line, name, n) == 0 && line[n] == ':') {
      const char *v = line + n + 1;
      while (*v == ' ' || *v == '\t') v++;
      return g_strndup(v, strcspn(v, "\r\n"));
    }
  }
  return NULL;
}

/* A chunked body, joined; false when it is malformed. */
static bool unchunk(const char *p, size_t len, GString *out)
{
  const char *end = p + len;
  while (p < end) {
    char *after = NULL;
    guint64 size = g_ascii_strtoull(p, &after, 16);
    const char *data = after ? g_strstr_len(after, end - after, "\r\n") : NULL;
    if (!data) return false;
    data += 2;
    if (size == 0) return true;
    if (size > (guint64)(end - data)) return false;
    g_string_append_len(out, data, (gssize)size);
    p = data + size + 2;
  }
  return false;
}

/* The messages of one reply's body: a JSON body as it is, an SSE
 * stream's events' data. */
static void emit_body(Bridge *b, const char *type, const char *body, size_t len)
{
  if (!type || !g_str_has_prefix(type, "text/event-stream")) {
    emit(b, body, len);
    return;
  }
  g_autofree char *text = g_strndup(body, len);
  GString *data = g_string_new(NULL);
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    g_strchomp(*l);
    if (!**l) { /* an event ends */
      emit(b, data->str, data->len);
      g_string_truncate(data, 0);
    } else if (g_str_has_prefix(*l, "data:")) {
      const char *v = *l + 5;
      if (*v == ' ') v++;
      if (data->len) g_string_append_c(data, '\n');
      g_string_append(data, v);
    }
  }
  emit(b, data->str, data->len);
  g_strfreev(lines);
  g_string_free(data, TRUE);
}

/* One message POSTed, its reply's messages handed back. */
static void exchange(Bridge *b, const char *line)
{
  json_object *msg = json_tokener_parse(line), *id = NULL;
  if (msg && json_object_object_get_ex(msg, "method", NULL))
    json_object_object_get_ex(msg, "id", &id);
  bool tls = g_str_has_prefix(b->endpoint, "https://");
  const char *authority = strstr(b->endpoint, "://") + 3;
  size_t alen = strcspn(authority, "/");
  g_autofree char *host = g_strndup(authority, alen);
  GString *req = g_string_new(NULL);
  g_string_append_printf(req,
                         "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                         "Accept: application/json, text/event-stream\r\n"
                         "Connection: close\r\nContent-Length: %zu\r\n",
                         tls ? authority + alen : b->endpoint, host, strlen(line));
  if (b->session) g_string_append_printf(req, "Mcp-Session-Id: %s\r\n", b->session);
  const char *secret = boxd_mcp_secret(b->d, b->m->name);
  if (secret)
    g_string_append_printf(req, "%s: %s%s\r\n",
                           b->m->route->header ? b->m->route->header : "Authorization",
                           b->m->route->prefix ? b->m->route->prefix : "Bearer ", secret);
  g_string_append(req, "\r\n");
  g_string_append(req, line);
  Conn c = { dial_gateway(b->d), NULL, NULL };
  g_autofree char *refused = NULL;
  bool sent = c.fd >= 0 && (!tls || conn_tunnel(b->d, &c, host, &refused)) &&
              conn_write(&c, req->str, req->len);
  OPENSSL_cleanse(req->str, req->len); /* it holds the secret */
  g_string_free(req, TRUE);
  GString *reply = sent ? read_reply(&c) : NULL;
  conn_close(&c);
  const char *split = reply ? g_strstr_len(reply->str, (gssize)reply->len, "\r\n\r\n") : NULL;
  int status = split ? atoi(reply->str + strcspn(reply->str, " ")) : 0;
  g_autofree char *head = split ? g_strndup(reply->str, (gsize)(split - reply->str)) : NULL;
  g_autofree char *type = head ? header(head, "content-type") : NULL;
  g_autofree char *te = head ? header(head, "transfer-encoding") : NULL;
  g_autofree char *sid = head ? header(head, "mcp-session-id") : NULL;
  GString *body = g_string_new(NULL);
  const char *raw = split ? split + 4 : NULL;
  size_t raw_len = raw ? reply->len - (size_t)(raw - reply->str) : 0;
  bool framed = raw && (te && g_ascii_strcasecmp(te, "chunked") == 0
                          ? unchunk(raw, raw_len, body)
                          : (g_string_append_len(body, raw, (gssize)raw_len), true));
  if (!split || !framed) {
    emit_failure(b, id, refused ? refused : "could not be reached through the gateway");
  } else if (status >= 200 && status < 300) {
    if (sid && !b->session) b->session = g_steal_pointer(&sid);
    if (body->len) emit_body(b, type, body->str, body->len);
  } else {
    /* the gateway's refusal says why in its body; another status is the server's */
    g_autofree char *marked = header(head, "x-strands-box-egress");
    g_autofree char *why =
      marked
        ? g_strdup_printf("was not reached: %.*s", (int)MIN(body->len, 1024), body->str)
        : g_strdup_printf("answered HTTP %d: %.*s", status, (int)MIN(body->len, 512), body->str);
    emit_failure(b, id, g_strchomp(why));
  }
  g_string_free(body, TRUE);
  if (reply) g_string_free(reply, TRUE);
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
  close(b->out); /* the broker sees the server's end */
  g_free(b->session);
  g_free(b->endpoint);
  g_free(b);
  return NULL;
}

GThread *boxd_mcp_http_start(Boxd *d, const BoxMcpServer *m, const char *endpoint, int *to_server,
                             int *from_server, char **why)
{
  int in[2] = { -1, -1 }, out[2] = { -1, -1 };
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    *why = g_strdup_printf("MCP server \"%s\" may not start: %s", m->name, g_strerror(errno));
    int ends[] = { in[0], in[1], out[0], out[1] };
    for (size_t i = 0; i < G_N_ELEMENTS(ends); i++)
      if (ends[i] >= 0) close(ends[i]);
    return NULL;
  }
  Bridge *b = g_new0(Bridge, 1);
  *b = (Bridge){ d, m, g_strdup(endpoint), NULL, in[0], out[1] };
  *to_server = in[1];
  *from_server = out[0];
  return g_thread_new("mcp-http", bridge_main, b);
}
