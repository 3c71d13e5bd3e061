/* gateway/upstream.c — the connection to the server: `net:connect`
 * decided before DNS (no `ip`) and for each resolved address (with its
 * canonical `ip`), the address floor beneath policy, only the decided
 * address dialled, and TLS to the server for a tunnel's requests.
 */
#include "gateway/gateway-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 10000

void gw_close_upstream(GwConn *c)
{
  if (!c->up_open) return;
  gw_stream_end_tls(&c->up);
  gw_track_fd(c->gw, c->up.fd, false);
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
    do r = poll(&p, 1, CONNECT_TIMEOUT_MS);
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
  if (ip) json_object_object_add(in, "ip", json_object_new_string(ip));
  json_object_object_add(in, "port", json_object_new_int64(port));
  return in;
}

/* Decides `net:connect` to host:port: ip is the resolved address's
 * canonical text, or NULL before DNS; the floor rides beneath policy.  On
 * deny the marked refusal has been written. */
static bool connect_permitted(GwConn *c, const char *host, int port, const char *ip)
{
  BoxGateway *gw = c->gw;
  g_autofree char *floor = box_gateway_floor((const char *const *)gw->allow, host, ip, port);
  json_object *in = connect_input(host, port, ip);
  g_autofree char *message = NULL;
  bool permit = gw->cfg.decide(gw->cfg.data, "net:connect", in, floor, &message);
  json_object_put(in);
  if (!permit) gw_refuse(c, "net:connect", message ? message : "refused");
  return permit;
}

/* Decides and opens the upstream connection to host:port.  On refusal or
 * failure the reply has been written to the client and false returned. */
bool gw_dial(GwConn *c, const char *host, int port)
{
  BoxGateway *gw = c->gw;
  if (!connect_permitted(c, host, port, NULL)) return false;
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
  struct addrinfo *res = NULL;
  char port_text[16];
  g_snprintf(port_text, sizeof port_text, "%d", port);
  int rc = getaddrinfo(host, port_text, &hints, &res);
  if (rc != 0 || !res) {
    g_autofree char *t = g_strdup_printf("could not resolve %s: %s", host, gai_strerror(rc));
    gw_bad_gateway(c, "resolve", t);
    return false;
  }
  int fd = -1, last_err = ECONNREFUSED;
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = "";
    const void *addr = ai->ai_family == AF_INET
                         ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
                         : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
    if (!inet_ntop(ai->ai_family, addr, text, sizeof text)) continue;
    char *ip = box_gateway_canonical_ip(text);
    if (!ip) ip = g_strdup(text);
    if (!g_hash_table_add(seen, ip)) continue;
    if (!connect_permitted(c, host, port, ip)) {
      freeaddrinfo(res);
      return false;
    }
    fd = dial_addr(ai->ai_addr, ai->ai_addrlen, &last_err);
  }
  freeaddrinfo(res);
  if (fd < 0) {
    g_autofree char *t =
      g_strdup_printf("could not reach %s:%d: %s", host, port, g_strerror(last_err));
    gw_bad_gateway(c, last_err == ETIMEDOUT ? "timeout" : "connect", t);
    return false;
  }
  gw_set_timeouts(fd, gw->cfg.idle_timeout_ms);
  gw_stream_init(&c->up, fd, HEAD_SLACK + gw->cfg.max_header_bytes);
  gw_track_fd(gw, fd, true);
  c->up_open = true;
  c->up_tls = false;
  c->up_host = g_strdup(host);
  c->up_port = port;
  return true;
}

bool gw_upstream_tls(GwConn *c, const char *host, int port, char **why)
{
  bool refused_suite = false;
  GwRec *rec = NULL;
  SSL *ssl = gw_tls_connect(c->gw->tls, c->up.fd, host, true, why, &refused_suite, &rec);
  if (!ssl && refused_suite) {
    /* The server will not take TLS 1.3's mandatory suite alone: a new
     * connection, decided like the first, that offers every suite. */
    gw_close_upstream(c);
    g_clear_pointer(why, g_free);
    if (!gw_dial(c, host, port)) return false;
    ssl = gw_tls_connect(c->gw->tls, c->up.fd, host, false, why, &refused_suite, &rec);
  }
  if (!ssl) return false;
  c->up.ssl = ssl;
  c->up.rec = rec;
  c->up_tls = true;
  return true;
}
