/* gateway/proxy.c — the egress proxy: absolute-form HTTP and CONNECT.
 *
 * A listener accepts connections up to max_connections, each served by its
 * own thread (and a second one while it relays a large body, relay.c).  A
 * connection reads one request head after another: CONNECT opens the
 * upstream connection (upstream.c) and terminates the client's TLS with a
 * leaf of the per-run CA (tls.c); every other request, and every request
 * inside such a tunnel, is one exchange (exchange.c): read whole, decided
 * as `http:request` before anything is written upstream, its reply
 * streamed back.  Refusals are marked (`x-strands-box-egress: refused`,
 * reply.c).
 */
#include "gateway/gateway-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

G_DEFINE_QUARK(box - gateway - error - quark, box_gateway_error)

typedef struct {
  BoxGateway *gw;
  int fd;
  int until; /* closes the listener when readable, or -1 */
  int wake[2];
  GThread *thread;
} Listener;

void gw_track_fd(BoxGateway *gw, int fd, bool add)
{
  g_mutex_lock(&gw->lock);
  if (add)
    g_hash_table_add(gw->fds, GINT_TO_POINTER(fd));
  else
    g_hash_table_remove(gw->fds, GINT_TO_POINTER(fd));
  bool stopping = gw->stopping;
  g_mutex_unlock(&gw->lock);
  if (add && stopping) shutdown(fd, SHUT_RDWR);
}

void gw_set_timeouts(int fd, int ms)
{
  struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static bool handle_connect(GwConn *c, GwHead *req)
{
  g_autofree char *host = NULL;
  int port = 0;
  if (!gw_parse_authority(req->b, 0, &host, &port) || port == 0) {
    gw_send_simple(&c->client, 400, "Bad Request", "CONNECT takes host:port\n", false);
    return false;
  }
  if (!gw_dial(c, host, port)) return false;
  if (c->client.len > c->client.off)
    return false; /* bytes before our answer: not a TLS client we can serve */
  const char *ok = "HTTP/1.1 200 Connection established\r\n\r\n";
  if (!gw_stream_write(&c->client, ok, strlen(ok))) return false;
  GwRec *rec = NULL;
  SSL *ssl = gw_tls_accept(c->gw->tls, c->client.fd, host, &rec);
  if (!ssl) return false;
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
  GwConn c = { .gw = gw };
  gw_stream_init(&c.client, start->fd, HEAD_SLACK + gw->cfg.max_header_bytes);
  g_free(start);
  gw_set_timeouts(c.client.fd, gw->cfg.idle_timeout_ms);
  for (;;) {
    int err = 0;
    char *text = gw_stream_read_head(&c.client, gw->cfg.max_header_bytes, &err);
    if (!text) {
      if (err == 431) gw_send_simple(&c.client, 431, "Request Header Fields Too Large", "", false);
      break;
    }
    GwHead req;
    if (!gw_head_parse(text, &req)) {
      gw_head_clear(&req);
      gw_send_simple(&c.client, 400, "Bad Request", "bad request\n", false);
      break;
    }
    bool more;
    if (g_ascii_strcasecmp(req.a, "CONNECT") == 0) {
      if (c.tunnel) {
        gw_send_simple(&c.client, 400, "Bad Request", "", false);
        more = false;
      } else {
        more = handle_connect(&c, &req);
      }
    } else {
      more = gw_exchange(&c, &req);
    }
    gw_head_clear(&req);
    if (!more) break;
  }
  gw_close_upstream(&c);
  gw_stream_end_tls(&c.client);
  gw_track_fd(gw, c.client.fd, false);
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
  for (;;) {
    struct pollfd p[3] = { { .fd = l->fd, .events = POLLIN },
                           { .fd = l->wake[0], .events = POLLIN },
                           { .fd = l->until, .events = POLLIN } };
    if (poll(p, l->until >= 0 ? 3 : 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[1].revents) break;
    if (l->until >= 0 && p[2].revents) {
      /* Its namespace's last process is gone: let the namespace go. */
      close(l->fd);
      l->fd = -1;
      break;
    }
    if (!p[0].revents) continue;
    int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) continue;
    g_mutex_lock(&gw->lock);
    bool full = gw->active >= gw->cfg.max_connections || gw->stopping;
    if (!full) {
      gw->active++;
      g_hash_table_add(gw->fds, GINT_TO_POINTER(fd));
    }
    g_mutex_unlock(&gw->lock);
    if (full) {
      GwStream s = { .fd = fd };
      gw_send_simple(&s, 503, "Service Unavailable", "the gateway is at its connection limit\n",
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
  if (gw->cfg.max_connections <= 0) gw->cfg.max_connections = 256;
  if (gw->cfg.max_header_bytes == 0) gw->cfg.max_header_bytes = 64 * 1024;
  if (gw->cfg.max_request_body == 0) gw->cfg.max_request_body = 64 * 1024 * 1024;
  if (gw->cfg.idle_timeout_ms <= 0) gw->cfg.idle_timeout_ms = 60 * 1000;
  gw->allow = g_strdupv((char **)config->allow);
  gw->extra_ca = g_strdupv((char **)config->extra_ca_files);
  gw->cfg.allow = (const char *const *)gw->allow;
  gw->cfg.extra_ca_files = (const char *const *)gw->extra_ca;
  g_mutex_init(&gw->lock);
  g_cond_init(&gw->idle);
  gw->fds = g_hash_table_new(g_direct_hash, g_direct_equal);
  gw->listeners = g_ptr_array_new();
  gw->routes = g_new0(GwRoute, config->n_routes ? config->n_routes : 1);
  for (size_t i = 0; i < config->n_routes; i++) {
    gw->n_routes = i + 1;
    if (!gw_route_init(&gw->routes[i], &config->routes[i], error)) {
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

int box_gateway_bind(int port, GError **error)
{
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "socket: %s", g_strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 512) != 0) {
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot listen on 127.0.0.1:%d: %s", port,
                g_strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

int box_gateway_serve(BoxGateway *gw, int fd, int until_fd, GError **error)
{
  struct sockaddr_in sa;
  socklen_t len = sizeof sa;
  int wake[2];
  if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0 || pipe2(wake, O_CLOEXEC) != 0) {
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot serve 127.0.0.1: %s", g_strerror(errno));
    close(fd);
    if (until_fd >= 0) close(until_fd);
    return -1;
  }
  Listener *l = g_new0(Listener, 1);
  l->gw = gw;
  l->fd = fd;
  l->until = until_fd;
  l->wake[0] = wake[0];
  l->wake[1] = wake[1];
  l->thread = g_thread_new("box-gw-listen", listener_main, l);
  g_mutex_lock(&gw->lock);
  g_ptr_array_add(gw->listeners, l);
  g_mutex_unlock(&gw->lock);
  return ntohs(sa.sin_port);
}

int box_gateway_listen(BoxGateway *gw, int port, int until_fd, GError **error)
{
  int fd = box_gateway_bind(port, error);
  if (fd < 0) {
    if (until_fd >= 0) close(until_fd);
    return -1;
  }
  return box_gateway_serve(gw, fd, until_fd, error);
}

const char *box_gateway_ca_pem(const BoxGateway *gw)
{
  return gw_tls_ca_pem(gw->tls);
}

void box_gateway_free(BoxGateway *gw)
{
  if (!gw) return;
  for (guint i = 0; gw->listeners && i < gw->listeners->len; i++) {
    Listener *l = g_ptr_array_index(gw->listeners, i);
    if (write(l->wake[1], "x", 1) < 0) { /* the listener then ends at its next wakeup */
    }
    g_thread_join(l->thread);
    if (l->fd >= 0) close(l->fd);
    if (l->until >= 0) close(l->until);
    close(l->wake[0]);
    close(l->wake[1]);
    g_free(l);
  }
  if (gw->listeners) g_ptr_array_free(gw->listeners, TRUE);
  g_mutex_lock(&gw->lock);
  gw->stopping = true;
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, gw->fds);
  while (g_hash_table_iter_next(&it, &key, NULL)) shutdown(GPOINTER_TO_INT(key), SHUT_RDWR);
  gint64 until = g_get_monotonic_time() + 5 * G_TIME_SPAN_SECOND;
  while (gw->active > 0)
    if (!g_cond_wait_until(&gw->idle, &gw->lock, until)) break;
  bool drained = gw->active == 0;
  g_mutex_unlock(&gw->lock);
  if (!drained) return; /* a connection thread still runs: leave it its state */
  gw_tls_free(gw->tls);
  g_hash_table_destroy(gw->fds);
  g_strfreev(gw->allow);
  for (size_t i = 0; i < gw->n_routes; i++) gw_route_clear(&gw->routes[i]);
  g_free(gw->routes);
  g_strfreev(gw->extra_ca);
  g_mutex_clear(&gw->lock);
  g_cond_clear(&gw->idle);
  g_free(gw);
}
