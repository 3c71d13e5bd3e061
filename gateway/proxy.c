/* gateway/proxy.c — the egress proxy: absolute-form HTTP and CONNECT.
 *
 * One thread per client connection (and a second one while it relays a
 * large body that OpenSSL's records carry on either side, see pump();
 * between two legs whose TLS 1.3 records are the gateway's own, record.c,
 * the connection's thread relays alone, see relay_records()).  Every
 * connection the gateway opens is decided as `net:connect` before DNS (no
 * `ip`) and for each resolved address (with its canonical `ip`), and only
 * the decided address is dialled; the address floor refuses local
 * destinations beneath policy.
 * Every request is read whole, then decided as `http:request` (for CONNECT,
 * after terminating the client's TLS with a leaf of the per-run CA) before
 * anything is written upstream.  Refusals are marked
 * (`x-strands-box-egress: refused`).  Responses stream back as they come,
 * in batches of up to IO_CHUNK bytes.
 */
#include "gateway/gateway-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

G_DEFINE_QUARK(box-gateway-error-quark, box_gateway_error)

/* A relay moves up to this much per read and write: with TLS on both
 * sides that is 32 records decrypted, re-encrypted and sent in one go.
 * Measured on two cores with bench/gateway: 512 KiB took about 10% less
 * of the gateway's CPU than 256 KiB (fewer hand-offs between the pump's
 * threads, fewer and larger sends); 1 MiB saved little more. */
#define IO_CHUNK (512 * 1024)
/* Room in a stream's own buffer for message heads and chunk lines. */
#define HEAD_SLACK 65536
#define CONNECT_TIMEOUT_MS 10000

struct BoxGateway {
  BoxGatewayConfig cfg;
  char **allow;
  char **extra_ca;
  GwTls *tls;
  GMutex lock;
  GCond idle;
  int active;               /* connection threads alive */
  GHashTable *fds;          /* every socket a connection holds, to end them at stop */
  GPtrArray *listeners;
  int home_netns;           /* where connections are served and dialled from */
  bool stopping;
  struct GwRoute *routes;   /* credential routes (route.c parses their destinations) */
  size_t n_routes;
};

typedef struct {
  BoxGateway *gw;
  int fd;
  int until;                /* closes the listener when readable, or -1 */
  int wake[2];
  GThread *thread;
} Listener;

/* ---- streams ---- */

typedef struct {
  int fd;
  SSL *ssl;
  GwRec *rec;               /* ssl's records, when taken over from OpenSSL */
  char *buf;
  size_t off, len, cap;
} Stream;

static void stream_init(Stream *s, int fd, size_t cap)
{
  s->fd = fd;
  s->ssl = NULL;
  s->rec = NULL;
  s->cap = cap;
  s->buf = g_malloc(cap);
  s->off = s->len = 0;
}

static ssize_t raw_read(Stream *s, void *p, size_t n)
{
  if (s->rec)
    return gw_rec_read(s->rec, p, n);
  if (s->ssl) {
    /* One SSL_read gives at most one record (16 KiB); the records that
     * are already in (gw_tls_*'s read buffer) are taken in the same call,
     * so that one relay write re-encrypts and sends many of them at once.
     * Without SSL_MODE_AUTO_RETRY a record that carries no data (a session
     * ticket, a key update) ends SSL_read with WANT_READ, so that taking
     * what is already in never waits for data the peer has not sent; a
     * socket timeout ends it the same way, but with EAGAIN. */
    size_t got = 0;
    for (;;) {
      size_t r = 0;
      errno = 0;
      if (SSL_read_ex(s->ssl, (char *)p + got, n - got, &r) == 1) {
        got += r;
        if (got == n || !(SSL_has_pending(s->ssl) || BIO_pending(SSL_get_rbio(s->ssl)) > 0))
          break;
        continue;
      }
      int e = SSL_get_error(s->ssl, 0);
      bool no_data = e == SSL_ERROR_WANT_READ && errno != EAGAIN && errno != EWOULDBLOCK;
      ERR_clear_error();
      if (got > 0)
        break; /* what came is returned; an error comes again next call */
      if (no_data)
        continue;
      return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
    }
    return (ssize_t)got;
  }
  for (;;) {
    ssize_t r = recv(s->fd, p, n, 0);
    if (r < 0 && errno == EINTR)
      continue;
    return r;
  }
}

static bool raw_write(Stream *s, const void *data, size_t n)
{
  const char *p = data;
  if (s->rec)
    return gw_rec_write(s->rec, data, n);
  if (s->ssl) {
    while (n > 0) {
      size_t r = 0;
      if (SSL_write_ex(s->ssl, p, n, &r) != 1) {
        ERR_clear_error();
        return false;
      }
      p += r;
      n -= r;
    }
    /* The records wait in a write buffer (gw_tls_*) so that they leave in
     * a few large sends instead of one send each. */
    if (BIO_flush(SSL_get_wbio(s->ssl)) != 1) {
      ERR_clear_error();
      return false;
    }
    return true;
  }
  while (n > 0) {
    ssize_t r = send(s->fd, p, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= (size_t)r;
  }
  return true;
}

/* The end of a stream's TLS: close_notify, by whichever layer has its
 * records. */
static void stream_end_tls(Stream *s)
{
  if (!s->ssl)
    return;
  if (s->rec) {
    /* OpenSSL is told of the close_notify sent for it, so that it keeps
     * the session as one that ended well (SSL_shutdown would have). */
    if (gw_rec_close(s->rec))
      SSL_set_shutdown(s->ssl, SSL_SENT_SHUTDOWN);
    g_clear_pointer(&s->rec, gw_rec_free);
  } else {
    SSL_shutdown(s->ssl);
  }
  SSL_free(s->ssl);
  s->ssl = NULL;
}

static ssize_t fill(Stream *s)
{
  if (s->off == s->len) {
    s->off = s->len = 0;
  } else if (s->off > 0) {
    memmove(s->buf, s->buf + s->off, s->len - s->off);
    s->len -= s->off;
    s->off = 0;
  }
  if (s->len == s->cap)
    return -2;
  ssize_t r = raw_read(s, s->buf + s->len, s->cap - s->len);
  if (r > 0)
    s->len += (size_t)r;
  return r;
}

static ssize_t stream_read(Stream *s, void *p, size_t n)
{
  if (s->len > s->off) {
    size_t k = MIN(n, s->len - s->off);
    memcpy(p, s->buf + s->off, k);
    s->off += k;
    return (ssize_t)k;
  }
  return raw_read(s, p, n);
}

/* Reads up to and including the blank line ending a message head.  NULL
 * on EOF before any byte (*err = 0), a read error (*err = -1) or a head
 * longer than the buffer (*err = 431). */
static char *read_head(Stream *s, size_t limit, int *err)
{
  size_t scanned = 0;
  *err = 0;
  for (;;) {
    /* Skip the empty lines a client may send between messages. */
    while (s->len - s->off >= 2 && scanned == 0 && s->buf[s->off] == '\r' &&
           s->buf[s->off + 1] == '\n')
      s->off += 2;
    char *start = s->buf + s->off;
    size_t avail = s->len - s->off;
    for (size_t i = scanned; i + 1 < avail; i++) {
      if (start[i] == '\n' && (start[i + 1] == '\n' ||
                               (start[i + 1] == '\r' && i + 2 < avail && start[i + 2] == '\n'))) {
        size_t end = start[i + 1] == '\n' ? i + 2 : i + 3;
        if (end > limit) {
          *err = 431;
          return NULL;
        }
        char *head = g_strndup(start, end);
        s->off += end;
        return head;
      }
    }
    scanned = avail > 2 ? avail - 2 : 0;
    if (avail > limit) {
      *err = 431;
      return NULL;
    }
    ssize_t r = fill(s);
    if (r == -2) {
      *err = 431;
      return NULL;
    }
    if (r <= 0) {
      *err = (r == 0 && s->len == s->off) ? 0 : -1;
      return NULL;
    }
  }
}

/* One line (CRLF or LF stripped), at most limit bytes; NULL on failure. */
static char *read_line(Stream *s, size_t limit)
{
  for (;;) {
    char *start = s->buf + s->off;
    size_t avail = s->len - s->off;
    char *nl = memchr(start, '\n', avail);
    if (nl) {
      size_t n = (size_t)(nl - start);
      char *line = g_strndup(start, n > 0 && start[n - 1] == '\r' ? n - 1 : n);
      s->off += n + 1;
      return line;
    }
    if (avail > limit)
      return NULL;
    if (fill(s) <= 0)
      return NULL;
  }
}

/* The trailer lines after a chunked body's last chunk, up to the blank
 * one: read and dropped.  0, or -1 when the stream ends first. */
static int skip_trailers(Stream *s, size_t max_line)
{
  for (;;) {
    g_autofree char *t = read_line(s, max_line);
    if (!t)
      return -1;
    if (!*t)
      return 0;
  }
}

/* ---- message heads ---- */

typedef struct {
  char *name;
  char *value;
} Header;

typedef struct {
  char *text;               /* owns every string below */
  char *a, *b, *c;          /* request: method target version; response: version code reason */
  GArray *headers;          /* Header */
} Head;

static void head_clear(Head *h)
{
  g_free(h->text);
  if (h->headers)
    g_array_free(h->headers, TRUE);
  memset(h, 0, sizeof *h);
}

static bool is_token_char(unsigned char c)
{
  return g_ascii_isalnum(c) || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool parse_head(char *text, Head *h)
{
  memset(h, 0, sizeof *h);
  h->text = text;
  h->headers = g_array_new(FALSE, FALSE, sizeof(Header));
  char *save = NULL;
  char *line = strtok_r(text, "\n", &save);
  if (!line)
    return false;
  size_t n = strlen(line);
  if (n && line[n - 1] == '\r')
    line[n - 1] = '\0';
  char *sp1 = strchr(line, ' ');
  if (!sp1)
    return false;
  *sp1 = '\0';
  char *sp2 = strchr(sp1 + 1, ' ');
  h->a = line;
  h->b = sp1 + 1;
  if (sp2) {
    *sp2 = '\0';
    h->c = sp2 + 1;
  } else {
    h->c = sp1 + 1 + strlen(sp1 + 1);
  }
  if (!*h->a || !*h->b)
    return false;
  while ((line = strtok_r(NULL, "\n", &save))) {
    n = strlen(line);
    if (n && line[n - 1] == '\r')
      line[--n] = '\0';
    if (n == 0)
      break;
    if (line[0] == ' ' || line[0] == '\t')
      return false; /* obsolete line folding */
    char *colon = strchr(line, ':');
    if (!colon || colon == line)
      return false;
    for (char *p = line; p < colon; p++)
      if (!is_token_char((unsigned char)*p))
        return false;
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
      v++;
    char *e = v + strlen(v);
    while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
      *--e = '\0';
    for (char *p = v; *p; p++)
      if ((unsigned char)*p < 0x20 && *p != '\t')
        return false;
    Header hd = { line, v };
    g_array_append_val(h->headers, hd);
  }
  return true;
}

static const char *head_get(const Head *h, const char *name)
{
  for (guint i = 0; i < h->headers->len; i++) {
    Header *hd = &g_array_index(h->headers, Header, i);
    if (g_ascii_strcasecmp(hd->name, name) == 0)
      return hd->value;
  }
  return NULL;
}

static int head_count(const Head *h, const char *name)
{
  int n = 0;
  for (guint i = 0; i < h->headers->len; i++)
    n += g_ascii_strcasecmp(g_array_index(h->headers, Header, i).name, name) == 0;
  return n;
}

/* Whether a comma-separated header value holds token (case-insensitive). */
static bool list_has(const char *value, const char *token)
{
  if (!value)
    return false;
  g_auto(GStrv) parts = g_strsplit(value, ",", -1);
  for (char **p = parts; *p; p++)
    if (g_ascii_strcasecmp(g_strstrip(*p), token) == 0)
      return true;
  return false;
}

static bool hop_by_hop(const Head *h, const char *name)
{
  static const char *const fixed[] = { "connection", "keep-alive", "proxy-connection",
                                       "proxy-authorization", "proxy-authenticate", "te",
                                       "trailer", "upgrade", NULL };
  for (int i = 0; fixed[i]; i++)
    if (g_ascii_strcasecmp(name, fixed[i]) == 0)
      return true;
  for (guint i = 0; i < h->headers->len; i++) {
    Header *hd = &g_array_index(h->headers, Header, i);
    if (g_ascii_strcasecmp(hd->name, "connection") == 0 && list_has(hd->value, name))
      return true;
  }
  return false;
}

/* ---- one client connection ---- */

typedef struct {
  BoxGateway *gw;
  Stream client;
  Stream up;
  bool up_open;
  bool up_tls;
  char *up_host;
  int up_port;
  bool tunnel;
  char *relay;              /* IO_CHUNK bytes, made at the first body relayed */
  char *tunnel_host;
  int tunnel_port;
} Conn;

static void track_fd(BoxGateway *gw, int fd, bool add)
{
  g_mutex_lock(&gw->lock);
  if (add)
    g_hash_table_add(gw->fds, GINT_TO_POINTER(fd));
  else
    g_hash_table_remove(gw->fds, GINT_TO_POINTER(fd));
  bool stopping = gw->stopping;
  g_mutex_unlock(&gw->lock);
  if (add && stopping)
    shutdown(fd, SHUT_RDWR);
}

static void set_timeouts(int fd, int ms)
{
  struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* A reply the gateway writes itself.  extra: more header lines (each
 * ending CRLF) or NULL. */
static void send_reply(Stream *to, int status, const char *reason, const char *body,
                       const char *extra)
{
  g_autofree char *msg = g_strdup_printf(
      "HTTP/1.1 %d %s\r\n%sContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
      "Connection: close\r\n\r\n%s",
      status, reason, extra ? extra : "", strlen(body), body);
  raw_write(to, msg, strlen(msg));
}

static void send_simple(Stream *to, int status, const char *reason, const char *body,
                        bool marked)
{
  send_reply(to, status, reason, body, marked ? "x-strands-box-egress: refused\r\n" : NULL);
}

/* A header value: control characters become spaces. */
static char *header_safe(const char *text)
{
  char *v = g_strdup(text);
  for (char *p = v; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = ' ';
  return v;
}

/* A marked refusal (spec/runtime.md §6.2).  The text rides in a header too,
 * because a client never sees the body of a refused CONNECT. */
static void refuse(Conn *c, const char *gate, const char *message)
{
  g_autofree char *text = gate ? g_strdup_printf("%s gate: %s", gate, message)
                               : g_strdup(message);
  g_autofree char *body = g_strdup_printf("%s\n", text);
  g_autofree char *safe = header_safe(text);
  g_autofree char *extra = g_strdup_printf(
      "x-strands-box-egress: refused\r\nx-strands-box-egress-message: %s\r\n", safe);
  send_reply(&c->client, 403, "Forbidden", body, extra);
}

/* 502, not marked as a refusal; kind (resolve, connect, tls, upstream)
 * lets the Shell's curl give curl's exit status. */
static void bad_gateway(Conn *c, const char *kind, const char *text)
{
  g_autofree char *body = g_strdup_printf("%s\n", text);
  g_autofree char *safe = header_safe(text);
  g_autofree char *extra =
      g_strdup_printf("x-strands-box-egress-error: %s\r\nx-strands-box-egress-message: %s\r\n",
                      kind, safe);
  send_reply(&c->client, 502, "Bad Gateway", body, extra);
}

static void close_upstream(Conn *c)
{
  if (!c->up_open)
    return;
  stream_end_tls(&c->up);
  track_fd(c->gw, c->up.fd, false);
  close(c->up.fd);
  g_free(c->up.buf);
  c->up.buf = NULL;
  c->up_open = false;
  c->up_tls = false;
  g_clear_pointer(&c->up_host, g_free);
}

/* Non-blocking connect bounded by CONNECT_TIMEOUT_MS. */
static int dial_addr(const struct sockaddr *sa, socklen_t len, int *err)
{
  int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *err = errno;
    return -1;
  }
  if (connect(fd, sa, len) != 0) {
    if (errno != EINPROGRESS) {
      *err = errno;
      close(fd);
      return -1;
    }
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    int r;
    do
      r = poll(&p, 1, CONNECT_TIMEOUT_MS);
    while (r < 0 && errno == EINTR);
    int so = 0;
    socklen_t sl = sizeof so;
    if (r == 0) {
      *err = ETIMEDOUT;
      close(fd);
      return -1;
    }
    if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0 || so != 0) {
      *err = so ? so : errno;
      close(fd);
      return -1;
    }
  }
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

static json_object *connect_input(const char *host, int port, const char *ip)
{
  json_object *in = json_object_new_object();
  json_object_object_add(in, "host", json_object_new_string(host));
  if (ip)
    json_object_object_add(in, "ip", json_object_new_string(ip));
  json_object_object_add(in, "port", json_object_new_int64(port));
  return in;
}

/* Decides and opens the upstream connection to host:port.  On refusal or
 * failure the reply has been written to the client and false returned. */
static bool dial(Conn *c, const char *host, int port)
{
  BoxGateway *gw = c->gw;
  g_autofree char *floor = box_gateway_floor((const char *const *)gw->allow, host, NULL, port);
  json_object *in = connect_input(host, port, NULL);
  g_autofree char *message = NULL;
  bool permit = gw->cfg.decide(gw->cfg.data, "net:connect", in, floor, &message);
  json_object_put(in);
  if (!permit) {
    refuse(c, "net:connect", message ? message : "refused");
    return false;
  }
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
  struct addrinfo *res = NULL;
  char port_text[16];
  g_snprintf(port_text, sizeof port_text, "%d", port);
  int rc = getaddrinfo(host, port_text, &hints, &res);
  if (rc != 0 || !res) {
    g_autofree char *t = g_strdup_printf("could not resolve %s: %s", host, gai_strerror(rc));
    bad_gateway(c, "resolve", t);
    return false;
  }
  int fd = -1, last_err = ECONNREFUSED;
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = "";
    const void *addr = ai->ai_family == AF_INET
                           ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
                           : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
    if (!inet_ntop(ai->ai_family, addr, text, sizeof text))
      continue;
    char *ip = box_gateway_canonical_ip(text);
    if (!ip)
      ip = g_strdup(text);
    if (!g_hash_table_add(seen, ip))
      continue;
    g_autofree char *floor_ip = box_gateway_floor((const char *const *)gw->allow, host, ip, port);
    json_object *in2 = connect_input(host, port, ip);
    g_autofree char *msg2 = NULL;
    bool ok = gw->cfg.decide(gw->cfg.data, "net:connect", in2, floor_ip, &msg2);
    json_object_put(in2);
    if (!ok) {
      freeaddrinfo(res);
      g_hash_table_destroy(seen);
      refuse(c, "net:connect", msg2 ? msg2 : "refused");
      return false;
    }
    fd = dial_addr(ai->ai_addr, ai->ai_addrlen, &last_err);
  }
  freeaddrinfo(res);
  g_hash_table_destroy(seen);
  if (fd < 0) {
    g_autofree char *t =
        g_strdup_printf("could not reach %s:%d: %s", host, port, g_strerror(last_err));
    bad_gateway(c, last_err == ETIMEDOUT ? "timeout" : "connect", t);
    return false;
  }
  set_timeouts(fd, gw->cfg.idle_timeout_ms);
  stream_init(&c->up, fd, HEAD_SLACK + gw->cfg.max_header_bytes);
  track_fd(gw, fd, true);
  c->up_open = true;
  c->up_tls = false;
  c->up_host = g_strdup(host);
  c->up_port = port;
  return true;
}

/* host[:port] or [v6][:port]; host lowercased, one trailing dot removed,
 * brackets removed.  port stays default_port when absent. */
static bool parse_authority(const char *auth, int default_port, char **host, int *port)
{
  const char *end_host, *port_text = NULL;
  const char *h = auth;
  if (*auth == '[') {
    const char *close = strchr(auth, ']');
    if (!close)
      return false;
    h = auth + 1;
    end_host = close;
    if (close[1] == ':')
      port_text = close + 2;
    else if (close[1])
      return false;
  } else {
    const char *colon = strrchr(auth, ':');
    if (colon && strchr(auth, ':') != colon)
      return false;
    end_host = colon ? colon : auth + strlen(auth);
    if (colon)
      port_text = colon + 1;
  }
  if (end_host == h)
    return false;
  for (const char *p = h; p < end_host; p++)
    if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || *p == '/' || *p == '@' ||
        *p == '?' || *p == '#' || *p == '\\')
      return false; /* a name on the wire is ASCII (IDNs in punycode) */
  *port = default_port;
  if (port_text) {
    char *e = NULL;
    long v = strtol(port_text, &e, 10);
    if (!*port_text || *e || v < 1 || v > 65535)
      return false;
    *port = (int)v;
  }
  char *lower = g_ascii_strdown(h, end_host - h);
  size_t n = strlen(lower);
  if (n > 1 && lower[n - 1] == '.')
    lower[n - 1] = '\0';
  *host = lower;
  return true;
}

/* Reads the request body per its framing.  Returns 0, or the status to
 * refuse with (400, 413, 501), or -1 on a read failure. */
static int read_body(Conn *c, const Head *req, GByteArray *body)
{
  size_t limit = c->gw->cfg.max_request_body;
  const char *te = head_get(req, "transfer-encoding");
  int n_cl = head_count(req, "content-length");
  if (te && n_cl > 0)
    return 400;
  if (te) {
    g_auto(GStrv) codings = g_strsplit(te, ",", -1);
    guint nc = g_strv_length(codings);
    if (nc == 0 || g_ascii_strcasecmp(g_strstrip(codings[nc - 1]), "chunked") != 0)
      return 501;
    for (;;) {
      g_autofree char *line = read_line(&c->client, 1024);
      if (!line)
        return -1;
      char *e = NULL;
      errno = 0;
      unsigned long long size = strtoull(line, &e, 16);
      if (e == line || errno || (*e && *e != ';' && *e != ' ' && *e != '\t'))
        return 400;
      if (size == 0) {
        return skip_trailers(&c->client, c->gw->cfg.max_header_bytes);
      }
      if (size > limit || body->len + size > limit)
        return 413;
      size_t old = body->len;
      g_byte_array_set_size(body, (guint)(old + size));
      size_t got = 0;
      while (got < size) {
        ssize_t r = stream_read(&c->client, body->data + old + got, size - got);
        if (r <= 0)
          return -1;
        got += (size_t)r;
      }
      g_autofree char *crlf = read_line(&c->client, 2);
      if (!crlf || *crlf)
        return crlf ? 400 : -1;
    }
  }
  if (n_cl == 0)
    return 0;
  /* Every Content-Length must agree. */
  long long len = -1;
  for (guint i = 0; i < req->headers->len; i++) {
    Header *hd = &g_array_index(req->headers, Header, i);
    if (g_ascii_strcasecmp(hd->name, "content-length") != 0)
      continue;
    char *e = NULL;
    errno = 0;
    long long v = strtoll(hd->value, &e, 10);
    if (!*hd->value || *e || errno || v < 0 || (len >= 0 && v != len))
      return 400;
    len = v;
  }
  if ((unsigned long long)len > limit)
    return 413;
  g_byte_array_set_size(body, (guint)len);
  size_t got = 0;
  while (got < (size_t)len) {
    ssize_t r = stream_read(&c->client, body->data + got, (size_t)len - got);
    if (r <= 0)
      return -1;
    got += (size_t)r;
  }
  return 0;
}

static bool copy_fixed(Stream *from, Stream *to, uint64_t n, uint64_t *moved, char *buf)
{
  while (n > 0) {
    ssize_t r = stream_read(from, buf, n > IO_CHUNK ? IO_CHUNK : (size_t)n);
    if (r <= 0)
      return false;
    if (!raw_write(to, buf, (size_t)r))
      return false;
    n -= (uint64_t)r;
    *moved += (uint64_t)r;
  }
  return true;
}

/* A chunked body passes through re-framed as it came.  Each chunk leaves
 * in one write with its size line, and the CRLF that ends it rides with
 * what follows (the next size line, or the last chunk and the trailers):
 * with TLS that is one set of records and one send per chunk, not three,
 * and data is never held back waiting for the CRLF behind it. */
static bool copy_chunked(Stream *from, Stream *to, uint64_t *moved, char *buf, size_t max_line)
{
  bool crlf_due = false;
  for (;;) {
    g_autofree char *line = read_line(from, 1024);
    if (!line || strlen(line) > 1024)
      return false;
    char *e = NULL;
    errno = 0;
    unsigned long long size = strtoull(line, &e, 16);
    if (e == line || errno)
      return false;
    if (size == 0) {
      GString *tail = g_string_new(crlf_due ? "\r\n" : "");
      g_string_append_printf(tail, "%s\r\n", line);
      for (;;) {
        g_autofree char *t = read_line(from, max_line);
        if (!t) {
          g_string_free(tail, TRUE);
          return false;
        }
        g_string_append_printf(tail, "%s\r\n", t);
        if (!*t)
          break;
      }
      bool ok = raw_write(to, tail->str, tail->len);
      g_string_free(tail, TRUE);
      return ok;
    }
    size_t at = (size_t)g_snprintf(buf, IO_CHUNK, "%s%s\r\n", crlf_due ? "\r\n" : "", line);
    uint64_t left = size;
    while (left > 0) {
      size_t room = IO_CHUNK - at;
      ssize_t r = stream_read(from, buf + at, left < room ? (size_t)left : room);
      if (r <= 0)
        return false;
      at += (size_t)r;
      left -= (uint64_t)r;
      *moved += (uint64_t)r;
      if (!raw_write(to, buf, at))
        return false;
      at = 0;
    }
    g_autofree char *crlf = read_line(from, 2);
    if (!crlf || *crlf)
      return false;
    crlf_due = true;
  }
}

static bool copy_to_eof(Stream *from, Stream *to, uint64_t *moved, char *buf)
{
  for (;;) {
    ssize_t r = stream_read(from, buf, IO_CHUNK);
    if (r == 0)
      return true;
    if (r < 0)
      return false;
    if (!raw_write(to, buf, (size_t)r))
      return false;
    *moved += (uint64_t)r;
  }
}

/* A body between two legs whose records are both ours (record.c) is
 * relayed record by record in the connection's thread: each record is
 * opened into a buffer that stays in the cache and sealed from it at once,
 * with no hand-off between threads. */
static bool relay_records(Stream *from, Stream *to, uint64_t n, bool to_eof, uint64_t *moved)
{
  size_t have = from->len - from->off;
  if (!to_eof && have > n)
    have = (size_t)n;
  bool ok = gw_rec_relay(from->rec, to->rec, from->buf + from->off, have, to_eof ? 0 : n - have,
                         to_eof, moved);
  from->off += have;
  return ok;
}

/* A large body is relayed by two threads: one reads (and decrypts) the
 * next buffer while the connection's own thread writes (and encrypts) the
 * last, so the two halves of the work run on two cores at once.  Even on
 * two cores, shared with the client and the server, one thread doing both
 * was no faster in bench/gateway: it spent slightly less CPU itself, but
 * the client then spent more, waiting on bursts. */
#define PUMP_MIN_BYTES (1024 * 1024)

typedef struct {
  Stream *from;
  uint64_t left;            /* bytes still to read when !to_eof */
  bool to_eof;
  char *buf[2];
  size_t len[2];
  bool full[2];
  bool done;                /* the reader has stopped */
  bool failed;              /* ... on a read error, or EOF before `left` ran out */
  bool stop;                /* the writer has stopped */
  /* Who sleeps on cv: a wakeup is a futex call, skipped when no one does. */
  bool reader_waits, writer_waits;
  GMutex m;
  GCond cv;
} Pump;

static gpointer pump_reader(gpointer data)
{
  Pump *p = data;
  for (int i = 0;; i ^= 1) {
    g_mutex_lock(&p->m);
    while (p->full[i] && !p->stop) {
      p->reader_waits = true;
      g_cond_wait(&p->cv, &p->m);
      p->reader_waits = false;
    }
    bool stop = p->stop;
    g_mutex_unlock(&p->m);
    if (stop)
      break;
    size_t want = p->to_eof || p->left > IO_CHUNK ? IO_CHUNK : (size_t)p->left;
    ssize_t r = stream_read(p->from, p->buf[i], want);
    g_mutex_lock(&p->m);
    if (r > 0) {
      p->len[i] = (size_t)r;
      p->full[i] = true;
      if (!p->to_eof) {
        p->left -= (uint64_t)r;
        p->done = p->left == 0;
      }
    } else {
      p->done = true;
      p->failed = r < 0 || !p->to_eof;
    }
    bool done = p->done;
    if (p->writer_waits)
      g_cond_broadcast(&p->cv);
    g_mutex_unlock(&p->m);
    if (done)
      break;
  }
  return NULL;
}

/* Relays n bytes (or, when to_eof, up to EOF) like copy_fixed/copy_to_eof.
 * Returns -1 when no reader thread could start (nothing was moved). */
static int pump(Stream *from, Stream *to, uint64_t n, bool to_eof, uint64_t *moved, char *buf)
{
  Pump p = { .from = from, .left = n, .to_eof = to_eof, .buf = { buf, g_malloc(IO_CHUNK) } };
  g_mutex_init(&p.m);
  g_cond_init(&p.cv);
  GThread *reader = g_thread_try_new("box-gw-pump", pump_reader, &p, NULL);
  if (!reader) {
    g_free(p.buf[1]);
    g_mutex_clear(&p.m);
    g_cond_clear(&p.cv);
    return -1;
  }
  bool ok = true;
  for (int i = 0;; i ^= 1) {
    g_mutex_lock(&p.m);
    while (!p.full[i] && !p.done) {
      p.writer_waits = true;
      g_cond_wait(&p.cv, &p.m);
      p.writer_waits = false;
    }
    bool have = p.full[i];
    g_mutex_unlock(&p.m);
    if (!have)
      break;
    if (!raw_write(to, p.buf[i], p.len[i])) {
      ok = false;
      break;
    }
    *moved += p.len[i];
    g_mutex_lock(&p.m);
    p.full[i] = false;
    if (p.reader_waits)
      g_cond_broadcast(&p.cv);
    g_mutex_unlock(&p.m);
  }
  if (!ok) {
    /* The reader may wait on the server for a long time: end that
     * connection under it (it is not reused after a failed relay). */
    g_mutex_lock(&p.m);
    p.stop = true;
    g_cond_broadcast(&p.cv);
    g_mutex_unlock(&p.m);
    shutdown(from->fd, SHUT_RDWR);
  }
  g_thread_join(reader);
  g_free(p.buf[1]);
  g_mutex_clear(&p.m);
  g_cond_clear(&p.cv);
  return ok && !p.failed;
}

/* ---- credential routes (spec/runtime.md §7) ---- */

/* Response bodies of credentialed requests are held whole to be scrubbed
 * of the secret (spec/runtime.md §6.1 step 7's response limit). */
#define CRED_RESPONSE_LIMIT (16 * 1024 * 1024)
#define REDACTED "[REDACTED]"

typedef struct GwRoute {
  char *name;
  GwDest *dests;
  size_t n_dests;
  BoxGatewayPlacement placement;
  char *header, *prefix, *param;
  bool always;
  char *phantom;
  /* The secret and the spellings it leaves in a request (basic auth's
   * base64, a query's percent-escapes; aws: the session token): what a
   * reply is scrubbed of. */
  char *secret;
  char *spelled[2];
  bool aws;
  char *aws_key_id;         /* the real key id; secret is the secret access key */
} GwRoute;

/* Frees a string that may hold a secret, wiping it first. */
static void secret_free(gpointer p)
{
  if (!p)
    return;
  OPENSSL_cleanse(p, strlen(p));
  g_free(p);
}

static void route_clear(GwRoute *r)
{
  g_free(r->name);
  for (size_t i = 0; i < r->n_dests; i++)
    gw_dest_clear(&r->dests[i]);
  g_free(r->dests);
  g_free(r->header);
  g_free(r->prefix);
  g_free(r->param);
  g_free(r->phantom);
  secret_free(r->secret);
  secret_free(r->spelled[0]);
  secret_free(r->spelled[1]);
  g_free(r->aws_key_id);
  memset(r, 0, sizeof *r);
}

static bool route_init(GwRoute *r, const BoxGatewayRoute *from, GError **error)
{
  memset(r, 0, sizeof *r);
  r->name = g_strdup(from->name ? from->name : "?");
  size_t n = from->destinations ? g_strv_length((char **)from->destinations) : 0;
  r->dests = g_new0(GwDest, n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    const char *why = gw_dest_parse(from->destinations[i], &r->dests[i]);
    if (why) {
      g_set_error(error, BOX_GATEWAY_ERROR, 1, "[egress.%s] destination \"%s\": %s", r->name,
                  from->destinations[i], why);
      r->n_dests = i;
      return false;
    }
    r->n_dests = i + 1;
  }
  r->placement = from->placement;
  r->header = g_strdup(from->header ? from->header : "Authorization");
  r->prefix = g_strdup(from->prefix ? from->prefix : "");
  r->param = g_strdup(from->param ? from->param : "");
  r->always = from->inject_always;
  r->phantom = g_strdup(from->phantom ? from->phantom : "");
  r->secret = g_strdup(from->secret ? from->secret : "");
  if (!*r->phantom || !*r->secret) {
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "[egress.%s] has no phantom or no secret", r->name);
    return false;
  }
  r->aws = from->aws;
  if (r->aws) {
    r->aws_key_id = g_strdup(from->aws_key_id ? from->aws_key_id : "");
    /* The session token is secret too: scrubbed from replies like the key. */
    r->spelled[0] = from->aws_session_token && *from->aws_session_token
                        ? g_strdup(from->aws_session_token)
                        : NULL;
    return *r->aws_key_id != '\0';
  }
  if (r->placement == BOX_GATEWAY_PLACE_BASIC_AUTH)
    r->spelled[0] = g_base64_encode((const guchar *)r->secret, strlen(r->secret));
  else if (r->placement == BOX_GATEWAY_PLACE_QUERY)
    r->spelled[0] = g_uri_escape_string(r->secret, NULL, FALSE);
  return true;
}

static const GwRoute *route_for(BoxGateway *gw, const char *host, int port, const char *path)
{
  for (size_t i = 0; i < gw->n_routes; i++)
    for (size_t k = 0; k < gw->routes[i].n_dests; k++)
      if (gw_dest_matches(&gw->routes[i].dests[k], host, port, path))
        return &gw->routes[i];
  return NULL;
}

typedef enum { CRED_SWAPPED, CRED_ADDED, CRED_REFUSED } CredResult;

/* The one header named name, NULL when there is none; *several when there
 * is more than one (which the gateway will not guess between). */
static Header *only_header(Head *req, const char *name, bool *several)
{
  Header *found = NULL;
  *several = false;
  for (guint i = 0; i < req->headers->len; i++) {
    Header *hd = &g_array_index(req->headers, Header, i);
    if (g_ascii_strcasecmp(hd->name, name) == 0) {
      *several = found != NULL;
      found = hd;
    }
  }
  return found;
}

static bool basic_password_is(const char *value, const char *phantom)
{
  if (g_ascii_strncasecmp(value, "Basic ", 6) != 0)
    return false;
  const char *b64 = value + 6;
  while (*b64 == ' ')
    b64++;
  gsize len = 0;
  guchar *dec = g_base64_decode(b64, &len);
  bool is = false;
  const guchar *colon = dec ? memchr(dec, ':', len) : NULL;
  if (colon) {
    size_t plen = len - (size_t)(colon + 1 - dec);
    is = plen == strlen(phantom) && memcmp(colon + 1, phantom, plen) == 0;
  }
  if (dec) {
    OPENSSL_cleanse(dec, len);
    g_free(dec);
  }
  return is;
}

/* Header and basic-auth placements: the phantom's header is given the
 * secret (or, inject = "always", the header is set where the phantom is
 * absent). */
static CredResult cred_header(const GwRoute *r, Head *req, GPtrArray *owned)
{
  bool basic = r->placement == BOX_GATEWAY_PLACE_BASIC_AUTH;
  const char *name = basic ? "Authorization" : r->header;
  bool several = false;
  Header *found = only_header(req, name, &several);
  if (several)
    return CRED_REFUSED;
  bool phantom = false;
  if (found && basic) {
    phantom = basic_password_is(found->value, r->phantom);
  } else if (found) {
    size_t pl = strlen(r->prefix);
    phantom = g_ascii_strncasecmp(found->value, r->prefix, pl) == 0 &&
              strcmp(found->value + pl, r->phantom) == 0;
  }
  if (!phantom && !r->always)
    return CRED_REFUSED;
  char *value = basic ? g_strconcat("Basic ", r->spelled[0], NULL)
                      : g_strconcat(r->prefix, r->secret, NULL);
  g_ptr_array_add(owned, value);
  if (found) {
    found->value = value;
  } else {
    Header hd = { (char *)name, value };
    g_array_append_val(req->headers, hd);
  }
  return phantom ? CRED_SWAPPED : CRED_ADDED;
}

/* Query placement: `<param>=<phantom>` in the target's query becomes
 * `<param>=<secret, percent-escaped>`.  *origin then points into owned. */
static CredResult cred_query(const GwRoute *r, const char **origin, GPtrArray *owned)
{
  const char *q = strchr(*origin, '?');
  GString *out = g_string_new(NULL);
  g_string_append_len(out, *origin, q ? q - *origin : (gssize)strlen(*origin));
  int seen = 0;
  bool phantom = false;
  g_auto(GStrv) items = q && q[1] ? g_strsplit(q + 1, "&", -1) : g_new0(char *, 1);
  size_t plen = strlen(r->param);
  for (char **it = items; *it; it++) {
    bool mine = strncmp(*it, r->param, plen) == 0 && ((*it)[plen] == '=' || !(*it)[plen]);
    g_string_append_c(out, it == items ? '?' : '&');
    if (!mine) {
      g_string_append(out, *it);
      continue;
    }
    seen++;
    phantom = (*it)[plen] == '=' && strcmp(*it + plen + 1, r->phantom) == 0;
    g_string_append_printf(out, "%s=%s", r->param, r->spelled[0]);
  }
  if (seen > 1 || (!phantom && !r->always)) {
    OPENSSL_cleanse(out->str, out->len);
    g_string_free(out, TRUE);
    return CRED_REFUSED;
  }
  if (seen == 0)
    g_string_append_printf(out, "%c%s=%s", items[0] ? '&' : '?', r->param, r->spelled[0]);
  char *text = g_string_free(out, FALSE);
  g_ptr_array_add(owned, text);
  *origin = text;
  return phantom ? CRED_SWAPPED : CRED_ADDED;
}

static CredResult cred_apply(const GwRoute *r, Head *req, const char **origin, GPtrArray *owned)
{
  return r->placement == BOX_GATEWAY_PLACE_QUERY ? cred_query(r, origin, owned)
                                                 : cred_header(r, req, owned);
}


/* ---- aws:// routes: SigV4 signing (AWS Signature Version 4) ---- */

static void hex_of(const unsigned char *d, size_t n, char *out)
{
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[d[i] >> 4];
    out[2 * i + 1] = digits[d[i] & 15];
  }
  out[2 * n] = '\0';
}

static void sha256_hex(const void *data, size_t n, char out[65])
{
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(data, n, md);
  hex_of(md, sizeof md, out);
}

static void hmac256(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
  unsigned int len = 32;
  HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

static bool aws_unreserved(unsigned char c)
{
  return g_ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

/* Each byte outside the unreserved set as %XX; keep_slash keeps '/'. */
static void aws_encode(GString *out, const char *s, size_t n, bool keep_slash)
{
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (aws_unreserved(c) || (keep_slash && c == '/'))
      g_string_append_c(out, (char)c);
    else
      g_string_append_printf(out, "%%%02X", c);
  }
}

static int pair_cmp(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The request re-signed for route r: the client's signature must name the
 * phantom key id; it and the signing headers are replaced. */
static CredResult cred_aws(const GwRoute *r, Head *req, const char *method, const char *host,
                           const char *origin, const GByteArray *body, GPtrArray *owned)
{
  const char *auth = head_get(req, "authorization");
  g_autofree char *want = g_strdup_printf("Credential=%s/", r->phantom);
  if (!auth || !g_str_has_prefix(auth, "AWS4-HMAC-SHA256 ") || !strstr(auth, want))
    return CRED_REFUSED;
  g_autofree char *service = NULL, *region = NULL;
  if (!box_gateway_aws_scope(host, &service, &region))
    return CRED_REFUSED;
  const char *hosthdr = head_get(req, "host");
  if (!hosthdr)
    return CRED_REFUSED;
  static const char *const stripped[] = { "authorization", "x-amz-date", "x-amz-security-token",
                                          "x-amz-content-sha256", "x-amz-signature", NULL };
  for (guint i = req->headers->len; i-- > 0;) {
    Header *hd = &g_array_index(req->headers, Header, i);
    for (int k = 0; stripped[k]; k++)
      if (g_ascii_strcasecmp(hd->name, stripped[k]) == 0) {
        g_array_remove_index(req->headers, i);
        break;
      }
  }
  char date[17], day[9];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);
  memcpy(day, date, 8);
  day[8] = '\0';
  char payload[65];
  sha256_hex(body->len ? (const void *)body->data : "", body->len, payload);
  const char *token = r->spelled[0];
  /* The headers signed: host, content-type and every x-amz-* one. */
  GPtrArray *signed_h = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(signed_h, g_strdup_printf("host:%s", hosthdr));
  g_ptr_array_add(signed_h, g_strdup_printf("x-amz-content-sha256:%s", payload));
  g_ptr_array_add(signed_h, g_strdup_printf("x-amz-date:%s", date));
  if (token)
    g_ptr_array_add(signed_h, g_strdup_printf("x-amz-security-token:%s", token));
  for (guint i = 0; i < req->headers->len; i++) {
    Header *hd = &g_array_index(req->headers, Header, i);
    g_autofree char *lower = g_ascii_strdown(hd->name, -1);
    if (strcmp(lower, "content-type") != 0 && !g_str_has_prefix(lower, "x-amz-"))
      continue;
    g_ptr_array_add(signed_h, g_strdup_printf("%s:%s", lower, hd->value));
  }
  g_ptr_array_sort(signed_h, pair_cmp);
  GString *names = g_string_new(NULL);
  GString *canon = g_string_new(NULL);
  g_string_append_printf(canon, "%s\n", method);
  /* The path: S3 signs it as sent; other services sign it encoded again. */
  const char *q = strchr(origin, '?');
  size_t plen = q ? (size_t)(q - origin) : strlen(origin);
  if (strcmp(service, "s3") == 0) {
    g_string_append_len(canon, origin, (gssize)plen);
  } else {
    g_autofree char *raw = g_strndup(origin, plen);
    g_autofree char *norm = box_gateway_canonical_path(raw);
    /* canonical_path decodes only unreserved escapes, which AWS's
     * normalisation does too, and keeps the others as sent. */
    aws_encode(canon, norm, strlen(norm), true);
  }
  g_string_append_c(canon, '\n');
  if (q && q[1]) {
    g_auto(GStrv) pairs = g_strsplit(q + 1, "&", -1);
    GPtrArray *sorted = g_ptr_array_new_with_free_func(g_free);
    for (char **p = pairs; *p; p++)
      if (**p)
        g_ptr_array_add(sorted, strchr(*p, '=') ? g_strdup(*p) : g_strconcat(*p, "=", NULL));
    g_ptr_array_sort(sorted, pair_cmp);
    for (guint i = 0; i < sorted->len; i++)
      g_string_append_printf(canon, "%s%s", i ? "&" : "", (char *)g_ptr_array_index(sorted, i));
    g_ptr_array_unref(sorted);
  }
  g_string_append_c(canon, '\n');
  for (guint i = 0; i < signed_h->len; i++) {
    const char *line = g_ptr_array_index(signed_h, i);
    const char *colon = strchr(line, ':');
    g_string_append_printf(canon, "%s\n", line);
    g_string_append_printf(names, "%s%.*s", i ? ";" : "", (int)(colon - line), line);
  }
  g_string_append_printf(canon, "\n%s\n%s", names->str, payload);
  char canon_hash[65];
  sha256_hex(canon->str, canon->len, canon_hash);
  g_autofree char *scope = g_strdup_printf("%s/%s/%s/aws4_request", day, region, service);
  g_autofree char *to_sign =
      g_strdup_printf("AWS4-HMAC-SHA256\n%s\n%s\n%s", date, scope, canon_hash);
  g_autofree char *k0 = g_strconcat("AWS4", r->secret, NULL);
  unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
  hmac256(k0, strlen(k0), day, k1);
  hmac256(k1, 32, region, k2);
  hmac256(k2, 32, service, k3);
  hmac256(k3, 32, "aws4_request", k4);
  hmac256(k4, 32, to_sign, sig);
  OPENSSL_cleanse(k0, strlen(k0));
  OPENSSL_cleanse(k1, 32);
  OPENSSL_cleanse(k2, 32);
  OPENSSL_cleanse(k3, 32);
  OPENSSL_cleanse(k4, 32);
  char sig_hex[65];
  hex_of(sig, 32, sig_hex);
  char *authz = g_strdup_printf("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, "
                                "Signature=%s", r->aws_key_id, scope, names->str, sig_hex);
  g_ptr_array_add(owned, authz);
  char *date_v = g_strdup(date), *payload_v = g_strdup(payload);
  g_ptr_array_add(owned, date_v);
  g_ptr_array_add(owned, payload_v);
  Header add[] = { { "Authorization", authz }, { "X-Amz-Date", date_v },
                   { "X-Amz-Content-Sha256", payload_v } };
  g_array_append_vals(req->headers, add, G_N_ELEMENTS(add));
  if (token) {
    char *tv = g_strdup(token);
    g_ptr_array_add(owned, tv);
    Header th = { "X-Amz-Security-Token", tv };
    g_array_append_val(req->headers, th);
  }
  g_string_free(names, TRUE);
  g_string_free(canon, TRUE);
  g_ptr_array_unref(signed_h);
  return CRED_SWAPPED;
}

/* data with every spelling of the route's secret replaced by [REDACTED]
 * (g_malloc'd, NUL-terminated past *out_len); NULL when there is none. */
static char *redact(const GwRoute *r, const char *data, size_t len, size_t *out_len)
{
  const char *needles[3] = { r->secret, r->spelled[0], r->spelled[1] };
  GString *out = NULL;
  const char *cur = data;
  size_t left = len;
  for (;;) {
    const char *best = NULL;
    size_t best_len = 0;
    for (int i = 0; i < 3; i++) {
      if (!needles[i] || !*needles[i])
        continue;
      size_t nl = strlen(needles[i]);
      const char *at = memmem(cur, left, needles[i], nl);
      if (at && (!best || at < best || (at == best && nl > best_len))) {
        best = at;
        best_len = nl;
      }
    }
    if (!best)
      break;
    if (!out)
      out = g_string_sized_new(len);
    g_string_append_len(out, cur, best - cur);
    g_string_append(out, REDACTED);
    left -= (size_t)(best - cur) + best_len;
    cur = best + best_len;
  }
  if (!out)
    return NULL;
  g_string_append_len(out, cur, (gssize)left);
  *out_len = out->len;
  return g_string_free(out, FALSE);
}

static json_object *request_input(const char *host, int port, const char *method,
                                  const char *path, size_t body_bytes, bool intercepted)
{
  json_object *in = json_object_new_object();
  json_object_object_add(in, "host", json_object_new_string(host));
  json_object_object_add(in, "port", json_object_new_int64(port));
  json_object_object_add(in, "method", json_object_new_string(method));
  json_object_object_add(in, "path", json_object_new_string(path));
  json_object_object_add(in, "body_bytes", json_object_new_int64((int64_t)body_bytes));
  json_object_object_add(in, "intercepted", json_object_new_boolean(intercepted));
  return in;
}


typedef enum { B_NONE, B_CHUNKED, B_FIXED, B_EOF } Framing;

/* The whole body of a reply per its framing, at most limit bytes.
 * 0 when read, 1 when longer than limit, -1 on a read failure. */
static int collect_body(Stream *from, Framing framing, long long rlen, GByteArray *out, size_t limit,
                        size_t max_line)
{
  char buf[65536];
  if (framing == B_FIXED) {
    if ((unsigned long long)rlen > limit)
      return 1;
    while ((long long)out->len < rlen) {
      size_t want = MIN(sizeof buf, (size_t)(rlen - (long long)out->len));
      ssize_t r = stream_read(from, buf, want);
      if (r <= 0)
        return -1;
      g_byte_array_append(out, (guint8 *)buf, (guint)r);
    }
    return 0;
  }
  if (framing == B_CHUNKED) {
    for (;;) {
      g_autofree char *line = read_line(from, 1024);
      if (!line)
        return -1;
      char *e = NULL;
      errno = 0;
      unsigned long long size = strtoull(line, &e, 16);
      if (e == line || errno)
        return -1;
      if (size == 0) {
        return skip_trailers(from, max_line);
      }
      if (size > limit || out->len + size > limit)
        return 1;
      while (size > 0) {
        ssize_t r = stream_read(from, buf, MIN(sizeof buf, (size_t)size));
        if (r <= 0)
          return -1;
        g_byte_array_append(out, (guint8 *)buf, (guint)r);
        size -= (unsigned long long)r;
      }
      g_autofree char *crlf = read_line(from, 2);
      if (!crlf || *crlf)
        return -1;
    }
  }
  if (framing == B_EOF) {
    for (;;) {
      ssize_t r = stream_read(from, buf, sizeof buf);
      if (r == 0)
        return 0;
      if (r < 0)
        return -1;
      if (out->len + (size_t)r > limit)
        return 1;
      g_byte_array_append(out, (guint8 *)buf, (guint)r);
    }
  }
  return 0;
}

/* The end of one exchange: its outcome raised, the upstream dropped unless
 * both sides may keep it.  Returns whether the client connection goes on. */
static bool exchange_end(Conn *c, json_object *in, int status, bool ok, bool up_keep, bool keep)
{
  BoxGateway *gw = c->gw;
  if (gw->cfg.outcome)
    gw->cfg.outcome(gw->cfg.data, "http:request", in, status, true);
  json_object_put(in);
  if (!ok || !up_keep)
    close_upstream(c);
  return ok && keep;
}

/* The reply to a credentialed request (spec/runtime.md §6.1 step 8): held
 * whole (up to CRED_RESPONSE_LIMIT), every copy of the secret in its
 * headers and body replaced by [REDACTED], and sent under its own
 * Content-Length.  A compressed reply could hide the secret, so it is
 * refused.  Returns what exchange returns. */
static bool credentialed_reply(Conn *c, const GwRoute *route, json_object *in, Head *resp,
                               int status, Framing framing, long long rlen, bool up_keep, bool keep)
{
  BoxGateway *gw = c->gw;
  const char *ce = head_get(resp, "content-encoding");
  bool ok = true;
  if (ce && g_ascii_strcasecmp(ce, "identity") != 0) {
    refuse(c, NULL, "response blocked by egress control");
    ok = false;
  }
  GByteArray *body = g_byte_array_new();
  if (ok) {
    int r = collect_body(&c->up, framing, rlen, body, CRED_RESPONSE_LIMIT,
                         gw->cfg.max_header_bytes);
    if (r != 0) {
      ok = false;
      bad_gateway(c, "upstream", r > 0 ? "the reply to a credentialed request is larger than 16 MiB"
                                       : "the server's reply broke off");
    }
  }
  if (ok) {
    size_t blen = body->len;
    char *scrubbed = redact(route, (const char *)body->data, body->len, &blen);
    GString *rh = g_string_sized_new(1024);
    g_string_append_printf(rh, "HTTP/1.1 %s %s\r\n", resp->b, resp->c);
    for (guint i = 0; i < resp->headers->len; i++) {
      Header *hd = &g_array_index(resp->headers, Header, i);
      /* Re-framed below; a reply without a body (HEAD, 304) keeps the
       * length it announces. */
      if (hop_by_hop(resp, hd->name) || g_ascii_strcasecmp(hd->name, "transfer-encoding") == 0 ||
          (framing != B_NONE && g_ascii_strcasecmp(hd->name, "content-length") == 0))
        continue;
      size_t vl = 0;
      g_autofree char *v = redact(route, hd->value, strlen(hd->value), &vl);
      g_string_append_printf(rh, "%s: %s\r\n", hd->name, v ? v : hd->value);
    }
    if (framing != B_NONE)
      g_string_append_printf(rh, "Content-Length: %zu\r\n", blen);
    if (!keep)
      g_string_append(rh, "Connection: close\r\n");
    g_string_append(rh, "\r\n");
    ok = raw_write(&c->client, rh->str, rh->len) &&
         (blen == 0 || raw_write(&c->client, scrubbed ? scrubbed : (const char *)body->data, blen));
    g_string_free(rh, TRUE);
    if (scrubbed) {
      OPENSSL_cleanse(scrubbed, blen);
      g_free(scrubbed);
    }
  }
  OPENSSL_cleanse(body->data, body->len);
  g_byte_array_free(body, TRUE);
  head_clear(resp);
  return exchange_end(c, in, status, ok, up_keep, keep);
}

/* Handles one request on the client stream.  Returns true when the client
 * connection may carry another. */
static bool exchange(Conn *c, Head *req)
{
  BoxGateway *gw = c->gw;
  const char *method = req->a, *target = req->b, *version = req->c;
  if (!g_str_has_prefix(version, "HTTP/1.")) {
    send_simple(&c->client, 505, "HTTP Version Not Supported", "HTTP/1.x only\n", false);
    return false;
  }
  for (const char *p = method; *p; p++)
    if (!is_token_char((unsigned char)*p)) {
      send_simple(&c->client, 400, "Bad Request", "", false);
      return false;
    }
  /* Where the request goes, and its origin-form target. */
  g_autofree char *host = NULL;
  int port = 0;
  const char *origin = NULL;
  g_autofree char *origin_buf = NULL;
  /* A fragment is never sent; one that is names nothing servers agree on. */
  const char *target_problem = strchr(target, '#') ? "a fragment (`#`), which a client never sends"
                                                   : NULL;
  bool authority_ok = true;
  if (c->tunnel) {
    if (target[0] == '/') {
      origin = target;
    } else if (g_ascii_strncasecmp(target, "https://", 8) == 0) {
      /* Absolute-form inside the tunnel must name the tunnel's own
       * authority: the request goes there whatever it says. */
      const char *auth = target + 8;
      size_t alen = strcspn(auth, "/?#");
      g_autofree char *authority = g_strndup(auth, alen);
      g_autofree char *th = NULL;
      int tp = 0;
      if (strchr(authority, '@') || !parse_authority(authority, 443, &th, &tp) ||
          strcmp(th, c->tunnel_host) != 0 || tp != c->tunnel_port)
        authority_ok = false;
      if (auth[alen] == '/')
        origin = auth + alen;
      else if (auth[alen] == '?')
        origin = origin_buf = g_strconcat("/", auth + alen, NULL);
      else
        origin = "/";
    } else {
      send_simple(&c->client, 400, "Bad Request", "", false);
      return false;
    }
    const char *hosthdr = head_get(req, "host");
    g_autofree char *hh = NULL;
    int hp = 0;
    if (!authority_ok || !hosthdr || head_count(req, "host") != 1 ||
        !parse_authority(hosthdr, c->tunnel_port, &hh, &hp) ||
        strcmp(hh, c->tunnel_host) != 0 || hp != c->tunnel_port) {
      refuse(c, NULL, "request authority rejected");
      return false;
    }
    host = g_strdup(c->tunnel_host);
    port = c->tunnel_port;
  } else {
    if (g_ascii_strncasecmp(target, "http://", 7) != 0) {
      send_simple(&c->client, 400, "Bad Request",
                  "the gateway takes absolute-form http:// requests and CONNECT\n", false);
      return false;
    }
    const char *auth = target + 7;
    size_t alen = strcspn(auth, "/?#");
    g_autofree char *authority = g_strndup(auth, alen);
    if (strchr(authority, '@') || !parse_authority(authority, 80, &host, &port)) {
      send_simple(&c->client, 400, "Bad Request", "", false);
      return false;
    }
    if (auth[alen] == '/')
      origin = auth + alen;
    else if (auth[alen] == '?') /* "http://h?q": origin-form is "/?q" */
      origin = origin_buf = g_strconcat("/", auth + alen, NULL);
    else
      origin = "/";
  }
  const char *expect = head_get(req, "expect");
  if (expect && g_ascii_strcasecmp(expect, "100-continue") == 0) {
    if (!raw_write(&c->client, "HTTP/1.1 100 Continue\r\n\r\n", 25))
      return false;
  }
  g_autoptr(GByteArray) body = g_byte_array_new();
  int br = read_body(c, req, body);
  if (br < 0)
    return false; /* an aborted upload opens nothing upstream */
  if (br > 0) {
    const char *reason = br == 400 ? "Bad Request" : br == 413 ? "Payload Too Large"
                                                              : "Not Implemented";
    send_simple(&c->client, br, reason, br == 400 ? "bad request\n" : "", false);
    return false;
  }
  /* What is decided is what is forwarded: the canonical path and the
   * query as sent; a path servers read in different ways is refused
   * before any connection for it. */
  g_autofree char *path = NULL;
  g_autofree char *forward = target_problem ? NULL
                                            : box_gateway_request_target(origin, &path, &target_problem);
  if (!forward) {
    g_autofree char *text = g_strdup_printf("request target rejected: the target holds %s",
                                            target_problem);
    refuse(c, NULL, text);
    return false;
  }
  origin = forward;
  /* The connection for it. */
  if (!c->tunnel && c->up_open && (strcmp(c->up_host, host) != 0 || c->up_port != port))
    close_upstream(c);
  if (!c->up_open && !dial(c, host, port))
    return false;
  /* Credentials (spec/runtime.md §6.1 step 5), before policy: the route
   * only swaps secrets; reaching the destination is still decided. */
  const GwRoute *route = route_for(gw, host, port, path);
  g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func(secret_free);
  if (route && !c->tunnel) {
    refuse(c, NULL, "credential not permitted on a plaintext request");
    return false;
  }
  if (route) {
    CredResult cr = route->aws ? cred_aws(route, req, method, host, origin, body, owned)
                               : cred_apply(route, req, &origin, owned);
    if (cr == CRED_REFUSED) {
      refuse(c, NULL, "blocked by egress control");
      return false;
    }
    if (cr == CRED_ADDED)
      g_printerr("box: warning: [egress.%s] inject = \"always\": the credential was added to "
                 "%s https://%s:%d%s, which did not carry the phantom\n",
                 route->name, method, host, port, path);
  }
  json_object *in = request_input(host, port, method, path, body->len, c->tunnel);
  g_autofree char *message = NULL;
  bool permit = gw->cfg.decide(gw->cfg.data, "http:request", in, NULL, &message);
  if (!permit) {
    json_object_put(in);
    refuse(c, "http:request", message ? message : "refused");
    return false;
  }
  if (c->tunnel && !c->up_tls) {
    g_autofree char *why = NULL;
    bool refused_suite = false;
    GwRec *rec = NULL;
    SSL *ssl = gw_tls_connect(gw->tls, c->up.fd, host, true, &why, &refused_suite, &rec);
    if (!ssl && refused_suite) {
      /* The server will not take TLS 1.3's mandatory suite alone: a new
       * connection, decided like the first, that offers every suite. */
      close_upstream(c);
      g_clear_pointer(&why, g_free);
      if (!dial(c, host, port)) {
        if (gw->cfg.outcome)
          gw->cfg.outcome(gw->cfg.data, "http:request", in, -1, false);
        json_object_put(in);
        return false;
      }
      ssl = gw_tls_connect(gw->tls, c->up.fd, host, false, &why, &refused_suite, &rec);
    }
    if (!ssl) {
      if (gw->cfg.outcome)
        gw->cfg.outcome(gw->cfg.data, "http:request", in, -1, false);
      json_object_put(in);
      g_autofree char *t = g_strdup_printf("TLS to %s:%d failed: %s", host, port, why);
      bad_gateway(c, "tls", t);
      return false;
    }
    c->up.ssl = ssl;
    c->up.rec = rec;
    c->up_tls = true;
  }
  /* Forward: origin-form, hop-by-hop headers dropped, re-framed. */
  GString *out = g_string_sized_new(1024);
  g_string_append_printf(out, "%s %s HTTP/1.1\r\n", method, origin);
  bool have_host = false;
  for (guint i = 0; i < req->headers->len; i++) {
    Header *hd = &g_array_index(req->headers, Header, i);
    if (hop_by_hop(req, hd->name) || g_ascii_strcasecmp(hd->name, "content-length") == 0 ||
        g_ascii_strcasecmp(hd->name, "transfer-encoding") == 0 ||
        g_ascii_strcasecmp(hd->name, "expect") == 0 ||
        (route && g_ascii_strcasecmp(hd->name, "accept-encoding") == 0))
      continue;
    if (g_ascii_strcasecmp(hd->name, "host") == 0) {
      if (!c->tunnel)
        continue; /* the URL's authority wins */
      have_host = true;
    }
    g_string_append_printf(out, "%s: %s\r\n", hd->name, hd->value);
  }
  if (!have_host) {
    const char *auth = target + 7;
    g_autofree char *authority = g_strndup(auth, strcspn(auth, "/?#"));
    g_string_append_printf(out, "Host: %s\r\n", c->tunnel ? host : authority);
  }
  bool client_close = strcmp(version, "HTTP/1.0") == 0 ||
                      list_has(head_get(req, "connection"), "close") ||
                      list_has(head_get(req, "proxy-connection"), "close");
  if (body->len > 0 || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
      strcmp(method, "PATCH") == 0)
    g_string_append_printf(out, "Content-Length: %u\r\n", body->len);
  if (route) /* a reply to be scrubbed must come as it is */
    g_string_append(out, "Accept-Encoding: identity\r\n");
  g_string_append(out, "\r\n");
  bool sent = raw_write(&c->up, out->str, out->len) &&
              (body->len == 0 || raw_write(&c->up, body->data, body->len));
  OPENSSL_cleanse(out->str, out->len); /* it may hold the secret */
  g_string_free(out, TRUE);
  if (!sent) {
    if (gw->cfg.outcome)
      gw->cfg.outcome(gw->cfg.data, "http:request", in, -1, false);
    json_object_put(in);
    close_upstream(c);
    bad_gateway(c, "upstream", "the server closed the connection");
    return false;
  }
  /* The response, streamed back. */
  Head resp = { 0 };
  int status = -1;
  for (;;) {
    int err = 0;
    char *text = read_head(&c->up, gw->cfg.max_header_bytes, &err);
    if (!text || !parse_head(text, &resp) || !g_str_has_prefix(resp.a, "HTTP/1.")) {
      if (!text)
        resp.text = NULL;
      head_clear(&resp);
      if (gw->cfg.outcome)
        gw->cfg.outcome(gw->cfg.data, "http:request", in, -1, true);
      json_object_put(in);
      close_upstream(c);
      bad_gateway(c, "upstream", "the server sent no valid response");
      return false;
    }
    status = atoi(resp.b);
    if (status >= 100 && status < 200 && status != 101) {
      head_clear(&resp);
      continue;
    }
    break;
  }
  bool no_body = strcmp(method, "HEAD") == 0 || status == 204 || status == 304 ||
                 (status >= 100 && status < 200);
  const char *rte = head_get(&resp, "transfer-encoding");
  const char *rcl = head_get(&resp, "content-length");
  Framing framing = B_NONE;
  long long rlen = 0;
  if (!no_body) {
    if (rte)
      framing = list_has(rte, "chunked") ? B_CHUNKED : B_EOF;
    else if (rcl) {
      char *e = NULL;
      rlen = strtoll(rcl, &e, 10);
      framing = (*rcl && !*e && rlen >= 0) ? B_FIXED : B_EOF;
    } else
      framing = B_EOF;
  }
  bool up_keep = strcmp(resp.a, "HTTP/1.1") == 0 &&
                 !list_has(head_get(&resp, "connection"), "close") && framing != B_EOF &&
                 status != 101;
  bool keep = !client_close && framing != B_EOF && status != 101;
  if (route)
    return credentialed_reply(c, route, in, &resp, status, framing, rlen, up_keep, keep);
  GString *rh = g_string_sized_new(1024);
  g_string_append_printf(rh, "HTTP/1.1 %s %s\r\n", resp.b, resp.c);
  for (guint i = 0; i < resp.headers->len; i++) {
    Header *hd = &g_array_index(resp.headers, Header, i);
    if (g_ascii_strcasecmp(hd->name, "transfer-encoding") != 0 && hop_by_hop(&resp, hd->name))
      continue;
    g_string_append_printf(rh, "%s: %s\r\n", hd->name, hd->value);
  }
  if (!keep)
    g_string_append(rh, "Connection: close\r\n");
  g_string_append(rh, "\r\n");
  bool ok = raw_write(&c->client, rh->str, rh->len);
  g_string_free(rh, TRUE);
  uint64_t moved = 0;
  /* relay_records needs no buffer of the connection's. */
  bool ours = c->up.rec && c->client.rec;
  if (!c->relay && framing != B_NONE && (!ours || framing == B_CHUNKED))
    c->relay = g_malloc(IO_CHUNK);
  char *buf = c->relay;
  if (ok) {
    switch (framing) {
    case B_NONE:
      break;
    case B_FIXED: {
      if (ours) {
        ok = relay_records(&c->up, &c->client, (uint64_t)rlen, false, &moved);
        break;
      }
      int r = rlen >= PUMP_MIN_BYTES ? pump(&c->up, &c->client, (uint64_t)rlen, false, &moved, buf)
                                     : -1;
      ok = r >= 0 ? r == 1 : copy_fixed(&c->up, &c->client, (uint64_t)rlen, &moved, buf);
      break;
    }
    case B_CHUNKED:
      ok = copy_chunked(&c->up, &c->client, &moved, buf, gw->cfg.max_header_bytes);
      break;
    case B_EOF: {
      if (ours) {
        ok = relay_records(&c->up, &c->client, 0, true, &moved);
        up_keep = false;
        break;
      }
      int r = pump(&c->up, &c->client, 0, true, &moved, buf);
      ok = r >= 0 ? r == 1 : copy_to_eof(&c->up, &c->client, &moved, buf);
      up_keep = false;
      break;
    }
    }
  }
  head_clear(&resp);
  return exchange_end(c, in, status, ok, up_keep, keep);
}

static bool handle_connect(Conn *c, Head *req)
{
  g_autofree char *host = NULL;
  int port = 0;
  if (!parse_authority(req->b, 0, &host, &port) || port == 0) {
    send_simple(&c->client, 400, "Bad Request", "CONNECT takes host:port\n", false);
    return false;
  }
  if (!dial(c, host, port))
    return false;
  if (c->client.len > c->client.off)
    return false; /* bytes before our answer: not a TLS client we can serve */
  const char *ok = "HTTP/1.1 200 Connection established\r\n\r\n";
  if (!raw_write(&c->client, ok, strlen(ok)))
    return false;
  GwRec *rec = NULL;
  SSL *ssl = gw_tls_accept(c->gw->tls, c->client.fd, host, &rec);
  if (!ssl)
    return false;
  c->client.ssl = ssl;
  c->client.rec = rec;
  c->tunnel = true;
  c->tunnel_host = g_steal_pointer(&host);
  c->tunnel_port = port;
  return true;
}

typedef struct {
  BoxGateway *gw;
  int fd;
} ConnStart;

static gpointer conn_main(gpointer data)
{
  ConnStart *start = data;
  BoxGateway *gw = start->gw;
  Conn c = { .gw = gw };
  stream_init(&c.client, start->fd, HEAD_SLACK + gw->cfg.max_header_bytes);
  g_free(start);
  set_timeouts(c.client.fd, gw->cfg.idle_timeout_ms);
  for (;;) {
    int err = 0;
    char *text = read_head(&c.client, gw->cfg.max_header_bytes, &err);
    if (!text) {
      if (err == 431)
        send_simple(&c.client, 431, "Request Header Fields Too Large", "", false);
      break;
    }
    Head req;
    if (!parse_head(text, &req)) {
      head_clear(&req);
      send_simple(&c.client, 400, "Bad Request", "bad request\n", false);
      break;
    }
    bool more;
    if (g_ascii_strcasecmp(req.a, "CONNECT") == 0) {
      if (c.tunnel) {
        send_simple(&c.client, 400, "Bad Request", "", false);
        more = false;
      } else {
        more = handle_connect(&c, &req);
      }
    } else {
      more = exchange(&c, &req);
    }
    head_clear(&req);
    if (!more)
      break;
  }
  close_upstream(&c);
  stream_end_tls(&c.client);
  track_fd(gw, c.client.fd, false);
  close(c.client.fd);
  g_free(c.client.buf);
  g_free(c.tunnel_host);
  g_free(c.relay);
  g_mutex_lock(&gw->lock);
  gw->active--;
  g_cond_broadcast(&gw->idle);
  g_mutex_unlock(&gw->lock);
  return NULL;
}

static gpointer listener_main(gpointer data)
{
  Listener *l = data;
  BoxGateway *gw = l->gw;
  /* The socket keeps the namespace it was bound in; the threads serving
   * it dial from the gateway's own. */
  if (gw->home_netns >= 0 && setns(gw->home_netns, CLONE_NEWNET) != 0)
    g_printerr("box: warning: egress gateway listener stays in its namespace: %s\n",
               g_strerror(errno));
  for (;;) {
    struct pollfd p[3] = { { .fd = l->fd, .events = POLLIN },
                           { .fd = l->wake[0], .events = POLLIN },
                           { .fd = l->until, .events = POLLIN } };
    if (poll(p, l->until >= 0 ? 3 : 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (p[1].revents)
      break;
    if (l->until >= 0 && p[2].revents) {
      /* Its namespace's last process is gone: let the namespace go. */
      close(l->fd);
      l->fd = -1;
      break;
    }
    if (!p[0].revents)
      continue;
    int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    g_mutex_lock(&gw->lock);
    bool full = gw->active >= gw->cfg.max_connections || gw->stopping;
    if (!full) {
      gw->active++;
      g_hash_table_add(gw->fds, GINT_TO_POINTER(fd));
    }
    g_mutex_unlock(&gw->lock);
    if (full) {
      Stream s = { .fd = fd };
      send_simple(&s, 503, "Service Unavailable", "the gateway is at its connection limit\n",
                  false);
      close(fd);
      continue;
    }
    ConnStart *start = g_new0(ConnStart, 1);
    start->gw = gw;
    start->fd = fd;
    GThread *t = g_thread_try_new("box-gw-conn", conn_main, start, NULL);
    if (t) {
      g_thread_unref(t);
    } else {
      g_free(start);
      g_mutex_lock(&gw->lock);
      gw->active--;
      g_hash_table_remove(gw->fds, GINT_TO_POINTER(fd));
      g_mutex_unlock(&gw->lock);
      close(fd);
    }
  }
  return NULL;
}

/* ---- public ---- */

BoxGateway *box_gateway_new(const BoxGatewayConfig *config, GError **error)
{
  g_return_val_if_fail(config && config->decide, NULL);
  BoxGateway *gw = g_new0(BoxGateway, 1);
  gw->cfg = *config;
  if (gw->cfg.max_connections <= 0)
    gw->cfg.max_connections = 256;
  if (gw->cfg.max_header_bytes == 0)
    gw->cfg.max_header_bytes = 64 * 1024;
  if (gw->cfg.max_request_body == 0)
    gw->cfg.max_request_body = 64 * 1024 * 1024;
  if (gw->cfg.idle_timeout_ms <= 0)
    gw->cfg.idle_timeout_ms = 60 * 1000;
  gw->allow = g_strdupv((char **)config->allow);
  gw->extra_ca = g_strdupv((char **)config->extra_ca_files);
  gw->cfg.allow = (const char *const *)gw->allow;
  gw->cfg.extra_ca_files = (const char *const *)gw->extra_ca;
  g_mutex_init(&gw->lock);
  g_cond_init(&gw->idle);
  gw->fds = g_hash_table_new(g_direct_hash, g_direct_equal);
  gw->listeners = g_ptr_array_new();
  gw->home_netns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  gw->routes = g_new0(GwRoute, config->n_routes ? config->n_routes : 1);
  for (size_t i = 0; i < config->n_routes; i++) {
    gw->n_routes = i + 1;
    if (!route_init(&gw->routes[i], &config->routes[i], error)) {
      box_gateway_free(gw);
      return NULL;
    }
  }
  gw->cfg.routes = NULL; /* the copies above are what is used */
  gw->tls = gw_tls_new(config->ca_cert_path, gw->cfg.extra_ca_files, error);
  if (!gw->tls) {
    box_gateway_free(gw);
    return NULL;
  }
  return gw;
}

int box_gateway_listen(BoxGateway *gw, int port, int until_fd, GError **error)
{
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "socket: %s", g_strerror(errno));
    if (until_fd >= 0)
      close(until_fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 512) != 0 ||
      getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot listen on 127.0.0.1:%d: %s", port,
                g_strerror(errno));
    close(fd);
    if (until_fd >= 0)
      close(until_fd);
    return -1;
  }
  Listener *l = g_new0(Listener, 1);
  l->gw = gw;
  l->fd = fd;
  l->until = until_fd;
  if (pipe2(l->wake, O_CLOEXEC) != 0) {
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "pipe: %s", g_strerror(errno));
    close(fd);
    if (until_fd >= 0)
      close(until_fd);
    g_free(l);
    return -1;
  }
  l->thread = g_thread_new("box-gw-listen", listener_main, l);
  g_mutex_lock(&gw->lock);
  g_ptr_array_add(gw->listeners, l);
  g_mutex_unlock(&gw->lock);
  return ntohs(sa.sin_port);
}

const char *box_gateway_ca_pem(const BoxGateway *gw)
{
  return gw_tls_ca_pem(gw->tls);
}

void box_gateway_free(BoxGateway *gw)
{
  if (!gw)
    return;
  for (guint i = 0; gw->listeners && i < gw->listeners->len; i++) {
    Listener *l = g_ptr_array_index(gw->listeners, i);
    if (write(l->wake[1], "x", 1) < 0) {
      /* the listener then ends at its next wakeup */
    }
    g_thread_join(l->thread);
    if (l->fd >= 0)
      close(l->fd);
    if (l->until >= 0)
      close(l->until);
    close(l->wake[0]);
    close(l->wake[1]);
    g_free(l);
  }
  if (gw->listeners)
    g_ptr_array_free(gw->listeners, TRUE);
  g_mutex_lock(&gw->lock);
  gw->stopping = true;
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, gw->fds);
  while (g_hash_table_iter_next(&it, &key, NULL))
    shutdown(GPOINTER_TO_INT(key), SHUT_RDWR);
  gint64 until = g_get_monotonic_time() + 5 * G_TIME_SPAN_SECOND;
  while (gw->active > 0)
    if (!g_cond_wait_until(&gw->idle, &gw->lock, until))
      break;
  bool drained = gw->active == 0;
  g_mutex_unlock(&gw->lock);
  if (!drained)
    return; /* a connection thread still runs: leave it its state */
  for (size_t i = 0; i < gw->n_routes; i++)
    route_clear(&gw->routes[i]);
  g_free(gw->routes);
  gw_tls_free(gw->tls);
  if (gw->home_netns >= 0)
    close(gw->home_netns);
  g_hash_table_destroy(gw->fds);
  g_strfreev(gw->allow);
  g_strfreev(gw->extra_ca);
  g_mutex_clear(&gw->lock);
  g_cond_clear(&gw->idle);
  g_free(gw);
}
