/* http.c — the client's side of one streamable HTTP exchange (mcp/http.h).
 * The reply is decoded as it arrives (chunked framing, a length, or the
 * end of the connection), so an SSE stream's events are handed on one by
 * one while the server keeps it open. */
#include "mcp/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#define HEAD_MAX 65536

void mcp_conn_close(McpConn *c)
{
  if (c->ssl) {
    SSL_shutdown(c->ssl);
    SSL_free(c->ssl);
  }
  if (c->ctx) SSL_CTX_free(c->ctx);
  if (c->fd >= 0) close(c->fd);
  *c = (McpConn){ -1, NULL, NULL };
}

bool mcp_conn_write(McpConn *c, const char *p, size_t len)
{
  while (len > 0) {
    ssize_t n =
      c->ssl ? SSL_write(c->ssl, p, (int)MIN(len, (size_t)G_MAXINT)) : write(c->fd, p, len);
    if (n < 0 && !c->ssl && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

ssize_t mcp_conn_read(McpConn *c, char *buf, size_t len)
{
  if (!c->ssl) {
    ssize_t n;
    do n = read(c->fd, buf, len);
    while (n < 0 && errno == EINTR);
    return n;
  }
  int n = SSL_read(c->ssl, buf, (int)MIN(len, (size_t)G_MAXINT));
  if (n > 0) return n;
  /* a server that closes without close_notify has still said all it will */
  int e = SSL_get_error(c->ssl, n);
  ERR_clear_error();
  return e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL ? 0 : -1;
}

bool mcp_conn_tls(McpConn *c, SSL_CTX *ctx, const char *host)
{
  c->ctx = ctx;
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  c->ssl = SSL_new(ctx);
  unsigned char ip[16];
  bool literal = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
  bool named = c->ssl && (literal ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host)
                                  : SSL_set_tlsext_host_name(c->ssl, host) == 1 &&
                                      SSL_set1_host(c->ssl, host)) == 1;
  bool ok = named && SSL_set_fd(c->ssl, c->fd) == 1 && SSL_connect(c->ssl) == 1;
  ERR_clear_error();
  return ok;
}

bool mcp_endpoint_parse(const char *url, McpEndpoint *e)
{
  *e = (McpEndpoint){ 0 };
  e->tls = g_str_has_prefix(url, "https://");
  if (!e->tls && !g_str_has_prefix(url, "http://")) return false;
  const char *a = strstr(url, "://") + 3;
  size_t alen = strcspn(a, "/");
  if (alen == 0) return false;
  e->authority = g_strndup(a, alen);
  e->path = g_strdup(a[alen] ? a + alen : "/");
  const char *colon = strrchr(e->authority, ':');
  const char *bracket = strchr(e->authority, ']');
  if (colon && (!bracket || bracket < colon)) {
    e->host = g_strndup(e->authority, (gsize)(colon - e->authority));
    e->port = g_strdup(colon + 1);
  } else {
    e->host = g_strdup(e->authority);
    e->port = g_strdup(e->tls ? "443" : "80");
  }
  if (e->host[0] == '[') { /* an IPv6 address: its brackets are the URL's */
    char *bare = g_strndup(e->host + 1, strlen(e->host) - 2);
    g_free(e->host);
    e->host = bare;
  }
  return true;
}

void mcp_endpoint_clear(McpEndpoint *e)
{
  g_free(e->authority);
  g_free(e->host);
  g_free(e->port);
  g_free(e->path);
  *e = (McpEndpoint){ 0 };
}

GString *mcp_http_head(const char *method, const char *target, const char *host,
                       const char *session, const char *secret_header, const char *const *more,
                       gssize body_len)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s,
                         "%s %s HTTP/1.1\r\nHost: %s\r\n"
                         "Accept: application/json, text/event-stream\r\nConnection: close\r\n",
                         method, target, host);
  if (body_len >= 0)
    g_string_append_printf(s, "Content-Type: application/json\r\nContent-Length: %zd\r\n",
                           body_len);
  if (session) g_string_append_printf(s, "Mcp-Session-Id: %s\r\n", session);
  if (secret_header) g_string_append_printf(s, "%s\r\n", secret_header);
  for (; more && *more; more++) g_string_append_printf(s, "%s\r\n", *more);
  g_string_append(s, "\r\n");
  return s;
}

struct McpReply {
  McpConn *c;
  int status;
  char *head;
  GString *raw;  /* read, not yet decoded */
  GString *body; /* decoded, not yet handed on */
  bool chunked, sse, ended /* no more to read */, given /* a JSON body was handed on */;
  gint64 left;        /* of a body of known length; -1 */
  guint64 chunk_left; /* of the chunk being read */
  bool crlf_due;      /* the CRLF that ends a chunk is still to come */
  char *event_id;     /* of the event being read, once its id field came */
  char *last_id;      /* of the last whole event (SSE's last event ID) */
  gint64 retry_ms;    /* the reconnection time the stream gave; -1 */
};

/* Moves what raw holds of the body into body.  A chunk's data is taken
 * as it comes: a relay may send the CRLF that ends it only with what
 * follows (the gateway does), and an event must not wait for that. */
static void decode(McpReply *r)
{
  while (r->chunked && !r->ended) {
    if (r->chunk_left > 0) {
      size_t take = (size_t)MIN((guint64)r->raw->len, r->chunk_left);
      if (take == 0) return;
      g_string_append_len(r->body, r->raw->str, (gssize)take);
      g_string_erase(r->raw, 0, (gssize)take);
      r->chunk_left -= take;
      r->crlf_due = r->chunk_left == 0;
      continue;
    }
    if (r->crlf_due) {
      if (r->raw->len < 2) return;
      g_string_erase(r->raw, 0, 2);
      r->crlf_due = false;
    }
    const char *eol = g_strstr_len(r->raw->str, (gssize)r->raw->len, "\r\n");
    if (!eol) return;
    guint64 size = g_ascii_strtoull(r->raw->str, NULL, 16);
    g_string_erase(r->raw, 0, eol + 2 - r->raw->str);
    /* the last chunk (its trailer is not read), or one no message fits */
    if (size == 0 || size > MCP_HTTP_BODY_MAX) r->ended = true;
    r->chunk_left = size;
  }
  if (r->chunked) return;
  size_t take = r->left >= 0 ? MIN(r->raw->len, (size_t)r->left) : r->raw->len;
  g_string_append_len(r->body, r->raw->str, (gssize)take);
  g_string_erase(r->raw, 0, (gssize)take);
  if (r->left >= 0) {
    r->left -= (gint64)take;
    if (r->left == 0) r->ended = true;
  }
}

/* Reads once more; false at the end of the connection or on an error. */
static bool fill(McpReply *r)
{
  char chunk[16384];
  ssize_t n = mcp_conn_read(r->c, chunk, sizeof chunk);
  if (n <= 0) {
    r->ended = true;
    return false;
  }
  g_string_append_len(r->raw, chunk, n);
  return true;
}

McpReply *mcp_reply_read(McpConn *c)
{
  McpReply *r = g_new0(McpReply, 1);
  *r = (McpReply){
    .c = c, .raw = g_string_new(NULL), .body = g_string_new(NULL), .left = -1, .retry_ms = -1
  };
  const char *split;
  while (!(split = g_strstr_len(r->raw->str, (gssize)r->raw->len, "\r\n\r\n"))) {
    if (r->raw->len > HEAD_MAX || !fill(r)) {
      mcp_reply_free(r);
      return NULL;
    }
  }
  r->head = g_strndup(r->raw->str, (gsize)(split - r->raw->str));
  g_string_erase(r->raw, 0, split + 4 - r->raw->str);
  r->ended = false;
  r->status = atoi(r->head + strcspn(r->head, " "));
  g_autofree char *te = mcp_reply_header(r, "transfer-encoding");
  g_autofree char *len = mcp_reply_header(r, "content-length");
  g_autofree char *type = mcp_reply_header(r, "content-type");
  r->chunked = te && strstr(te, "chunked");
  if (!r->chunked && len) r->left = g_ascii_strtoll(len, NULL, 10);
  r->sse = type && g_str_has_prefix(type, "text/event-stream");
  if (r->left == 0) r->ended = true;
  decode(r);
  return r;
}

int mcp_reply_status(const McpReply *r)
{
  return r->status;
}

char *mcp_reply_header(const McpReply *r, const char *name)
{
  size_t n = strlen(name);
  for (const char *p = strstr(r->head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
    const char *line = p + 2;
    if (g_ascii_strncasecmp(line, name, n) == 0 && line[n] == ':') {
      const char *v = line + n + 1;
      while (*v == ' ' || *v == '\t') v++;
      return g_strndup(v, strcspn(v, "\r\n"));
    }
  }
  return NULL;
}

/* Reads and decodes until the body has grown or ended. */
static bool more(McpReply *r)
{
  size_t had = r->body->len;
  while (!r->ended && r->body->len == had) {
    if (fill(r)) decode(r);
  }
  return r->body->len > had;
}

bool mcp_reply_next(McpReply *r, GString *msg)
{
  g_string_truncate(msg, 0);
  if (!r->sse) {
    if (r->given) return false;
    while (more(r))
      if (r->body->len > MCP_HTTP_BODY_MAX) return false;
    r->given = true;
    g_string_append_len(msg, r->body->str, (gssize)r->body->len);
    g_string_truncate(r->body, 0);
    return msg->len > 0;
  }
  for (;;) {
    char *nl;
    while ((nl = memchr(r->body->str, '\n', r->body->len)) != NULL) {
      size_t len = (size_t)(nl - r->body->str);
      if (len && nl[-1] == '\r') len--;
      const char *line = r->body->str, *colon = memchr(line, ':', len);
      const char *v = colon ? colon + 1 + (colon + 1 < line + len && colon[1] == ' ') : line + len;
      size_t name = colon ? (size_t)(colon - line) : len, vlen = (size_t)(line + len - v);
      if (len == 0) {
        /* An event ends: its id is the stream's last even when it carried
         * no data (a server's first event, which only primes a resume). */
        if (r->event_id) {
          g_free(r->last_id);
          r->last_id = g_steal_pointer(&r->event_id);
        }
        g_string_erase(r->body, 0, nl - r->body->str + 1);
        if (msg->len) return true;
        continue;
      }
      if (name == 4 && memcmp(line, "data", 4) == 0) {
        if (msg->len) g_string_append_c(msg, '\n');
        g_string_append_len(msg, v, (gssize)vlen);
      } else if (name == 2 && memcmp(line, "id", 2) == 0 && !memchr(v, '\0', vlen)) {
        g_free(r->event_id);
        r->event_id = g_strndup(v, vlen);
      } else if (name == 5 && memcmp(line, "retry", 5) == 0 && vlen > 0 && vlen < 10 &&
                 strspn(v, "0123456789") >= vlen) {
        r->retry_ms = g_ascii_strtoll(v, NULL, 10);
      }
      g_string_erase(r->body, 0, nl - r->body->str + 1);
    }
    if (msg->len > MCP_HTTP_BODY_MAX || r->body->len > MCP_HTTP_BODY_MAX) return false;
    if (!more(r)) return msg->len > 0; /* a last event with no blank line after it */
  }
}

char *mcp_reply_rest(McpReply *r, size_t max)
{
  while (r->body->len < max && more(r)) continue;
  return g_strndup(r->body->str, MIN(r->body->len, max));
}

const char *mcp_reply_last_id(const McpReply *r)
{
  return r->last_id && *r->last_id ? r->last_id : NULL;
}

gint64 mcp_reply_retry(const McpReply *r)
{
  return r->retry_ms;
}

void mcp_reply_free(McpReply *r)
{
  if (!r) return;
  g_free(r->event_id);
  g_free(r->last_id);
  g_free(r->head);
  g_string_free(r->raw, TRUE);
  g_string_free(r->body, TRUE);
  g_free(r);
}
