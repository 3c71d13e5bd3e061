/* receiver.c — the agent's own telemetry (spec/runtime.md §8.5): an OTLP/HTTP
 * receiver on a loopback port of the trusted process, relayed into the
 * sandboxes' network namespaces at the same port, whose payloads reach the
 * box's targets as the agent's, never as the box's.
 *
 * Before anything is routed, every attribute under `strands.box.` is
 * stripped at every nesting level, a scope claiming the box's namespace is
 * renamed `agent-claimed:<scope>`, and each resource is stamped
 * `strands.box.source = agent` (after the strip: one operation, so an
 * agent can neither forge a box record nor drop the stamp).  A payload past
 * the byte cap is dropped before decoding, one with too many resources
 * after; one slot relays at a time and a payload arriving while it is busy
 * is dropped undecoded, so the agent cannot make the box spend more than
 * one relay's work at once.  Every answer on a route is 200 with {}: the
 * agent learns nothing of what was kept. */
#include "telemetry/telemetry-private.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define BODY_CAP (4u * 1024 * 1024)     /* bytes, before decoding */
#define RESOURCE_CAP 64                 /* resources per payload, after */
#define DISCARD_CAP (64u * 1024 * 1024) /* past it, the connection is closed unread */
#define HEAD_CAP (16u * 1024)
#define CONNECTIONS_MAX 16
#define IDLE_MS 10000

#define BOX_ATTR_PREFIX "strands.box."

struct BoxOtelReceiver {
  BoxTelemetry *telemetry;
  int port;
  int wake_fd;
  GMutex lock;
  GArray *listeners; /* {fd, until}: lock */
  GThread *thread;
  gint stopping;
  gint connections;
  gint slot; /* 1 while a payload is relayed */
};

typedef struct {
  int fd, until;
} Listener;

/* ---- what a payload becomes ---- */

static bool box_key(json_object *kv)
{
  json_object *key;
  return json_object_is_type(kv, json_type_object) && json_object_object_get_ex(kv, "key", &key) &&
         json_object_is_type(key, json_type_string) &&
         g_str_has_prefix(json_object_get_string(key), BOX_ATTR_PREFIX);
}

/* Every key-value under `strands.box.`, in any list at any depth (the
 * attributes of resources, scopes, spans, events, links, records, data
 * points, exemplars, and the kvlists inside values), removed. */
static void strip(json_object *o)
{
  if (json_object_is_type(o, json_type_array)) {
    for (size_t i = json_object_array_length(o); i-- > 0;) {
      json_object *e = json_object_array_get_idx(o, i);
      if (box_key(e))
        json_object_array_del_idx(o, i, 1);
      else
        strip(e);
    }
  } else if (json_object_is_type(o, json_type_object)) {
    json_object_object_foreach (o, key, value) {
      (void)key;
      strip(value);
    }
  }
}

static bool claims_box(const char *scope)
{
  return g_str_has_prefix(scope, "strands-box") || g_str_has_prefix(scope, "strands.box");
}

static void rename_scopes(json_object *entry, const char *scopes_key)
{
  json_object *scopes, *scope, *name;
  if (!json_object_object_get_ex(entry, scopes_key, &scopes) ||
      !json_object_is_type(scopes, json_type_array))
    return;
  for (size_t i = 0; i < json_object_array_length(scopes); i++) {
    json_object *s = json_object_array_get_idx(scopes, i);
    if (!json_object_object_get_ex(s, "scope", &scope) ||
        !json_object_object_get_ex(scope, "name", &name) ||
        !json_object_is_type(name, json_type_string) || !claims_box(json_object_get_string(name)))
      continue;
    g_autofree char *renamed = g_strconcat("agent-claimed:", json_object_get_string(name), NULL);
    json_object_object_add(scope, "name", json_object_new_string(renamed));
  }
}

static void stamp(json_object *entry)
{
  json_object *resource, *attrs;
  if (!json_object_object_get_ex(entry, "resource", &resource) ||
      !json_object_is_type(resource, json_type_object)) {
    resource = json_object_new_object();
    json_object_object_add(entry, "resource", resource);
  }
  if (!json_object_object_get_ex(resource, "attributes", &attrs) ||
      !json_object_is_type(attrs, json_type_array)) {
    attrs = json_object_new_array();
    json_object_object_add(resource, "attributes", attrs);
  }
  box_telemetry_attr_value(attrs, "strands.box.source", "stringValue",
                           json_object_new_string("agent"));
}

static const struct {
  const char *path, *root, *scopes;
  BoxOtlpSignal signal;
} routes[] = {
  { "/v1/traces", "resourceSpans", "scopeSpans", BOX_OTLP_TRACES },
  { "/v1/logs", "resourceLogs", "scopeLogs", BOX_OTLP_LOGS },
  { "/v1/metrics", "resourceMetrics", "scopeMetrics", BOX_OTLP_METRICS },
};

/* The request made the agent's (stripped, renamed, stamped), or NULL when
 * it is not one or holds more resources than the cap. */
static json_object *agent_request(size_t route, const char *body, size_t len, bool protobuf)
{
  json_object *req = NULL;
  if (protobuf) {
    req = box_otlp_decode(routes[route].signal, body, len);
  } else {
    json_tokener *tok = json_tokener_new();
    req = json_tokener_parse_ex(tok, body, (int)len);
    json_tokener_free(tok);
  }
  json_object *list;
  if (!req || !json_object_is_type(req, json_type_object) ||
      !json_object_object_get_ex(req, routes[route].root, &list) ||
      !json_object_is_type(list, json_type_array) || json_object_array_length(list) == 0 ||
      json_object_array_length(list) > RESOURCE_CAP) {
    json_object_put(req);
    return NULL;
  }
  /* only the signal's own list goes on */
  json_object *out = json_object_new_object();
  json_object_object_add(out, routes[route].root, json_object_get(list));
  json_object_put(req);
  strip(list);
  for (size_t i = 0; i < json_object_array_length(list); i++) {
    json_object *entry = json_object_array_get_idx(list, i);
    if (!json_object_is_type(entry, json_type_object)) continue;
    rename_scopes(entry, routes[route].scopes);
    stamp(entry);
  }
  return out;
}

static void relay(BoxOtelReceiver *r, size_t route, const char *body, size_t len, bool protobuf)
{
  if (!g_atomic_int_compare_and_exchange(&r->slot, 0, 1)) return; /* busy: dropped undecoded */
  json_object *req = agent_request(route, body, len, protobuf);
  if (req) box_telemetry_relay(r->telemetry, routes[route].signal, req);
  json_object_put(req);
  g_atomic_int_set(&r->slot, 0);
}

/* ---- HTTP/1.1, as much as an OTLP exporter speaks ---- */

/* Waits for fd to be readable, a second at a time, until the receiver
 * stops or ms pass. */
static bool readable(BoxOtelReceiver *r, int fd, int ms)
{
  for (int waited = 0; waited < ms && !g_atomic_int_get(&r->stopping); waited += 1000) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int n = poll(&p, 1, 1000);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
  return false;
}

/* Reads what fd has (up to room bytes) onto buf, once it has any. */
static bool read_some(BoxOtelReceiver *r, int fd, GString *buf, size_t room)
{
  for (;;) {
    if (!readable(r, fd, IDLE_MS)) return false;
    char chunk[16384];
    ssize_t n = read(fd, chunk, MIN(sizeof chunk, room));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    g_string_append_len(buf, chunk, n);
    return true;
  }
}

/* Until buf holds want bytes; never past them (the next request's). */
static bool read_more(BoxOtelReceiver *r, int fd, GString *buf, size_t want)
{
  while (buf->len < want)
    if (!read_some(r, fd, buf, want - buf->len)) return false;
  return true;
}

static bool answer(int fd, int status, bool close_after)
{
  char reply[160];
  int n = g_snprintf(reply, sizeof reply,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                     "%s\r\n{}",
                     status, status == 200 ? "OK" : "Not Found",
                     close_after ? "Connection: close\r\n" : "");
  return send(fd, reply, (size_t)n, MSG_NOSIGNAL) == n;
}

static const char *header(char **lines, const char *name)
{
  size_t n = strlen(name);
  for (char **l = lines + 1; *l; l++)
    if (g_ascii_strncasecmp(*l, name, n) == 0 && (*l)[n] == ':') return g_strstrip(*l + n + 1);
  return NULL;
}

/* One request on fd; false when the connection is over. */
static bool serve_request(BoxOtelReceiver *r, int fd, GString *buf)
{
  char *end;
  while (!(end = strstr(buf->str, "\r\n\r\n"))) {
    if (buf->len >= HEAD_CAP || !read_some(r, fd, buf, HEAD_CAP - buf->len)) return false;
  }
  size_t head_len = (size_t)(end - buf->str) + 4;
  g_autofree char *head = g_strndup(buf->str, head_len - 4);
  g_string_erase(buf, 0, (gssize)head_len);
  g_auto(GStrv) lines = g_strsplit(head, "\r\n", -1);
  g_auto(GStrv) request = g_strsplit(lines[0], " ", 3);
  if (g_strv_length(request) != 3) return answer(fd, 404, true) && false;
  const char *length = header(lines, "Content-Length");
  const char *type = header(lines, "Content-Type");
  const char *connection = header(lines, "Connection");
  bool keep = !(connection && g_ascii_strcasecmp(connection, "close") == 0);
  char *query = strchr(request[1], '?');
  if (query) *query = '\0';
  size_t route = G_N_ELEMENTS(routes);
  for (size_t i = 0; i < G_N_ELEMENTS(routes); i++)
    if (strcmp(request[1], routes[i].path) == 0) route = i;
  guint64 n = length ? g_ascii_strtoull(length, NULL, 10) : 0;
  if (header(lines, "Transfer-Encoding") || n > DISCARD_CAP) /* dropped, never read */
    return answer(fd, route < G_N_ELEMENTS(routes) ? 200 : 404, true) && false;
  if (n > BODY_CAP) { /* dropped as it is read, never held */
    for (guint64 left = n - MIN(n, buf->len); left > 0;) {
      g_string_truncate(buf, 0);
      if (!read_some(r, fd, buf, (size_t)MIN(left, 65536))) return false;
      left -= buf->len;
    }
    g_string_truncate(buf, 0);
    return answer(fd, route < G_N_ELEMENTS(routes) ? 200 : 404, !keep) && keep;
  }
  if (!read_more(r, fd, buf, (size_t)n)) return false;
  bool post = strcmp(request[0], "POST") == 0;
  if (route < G_N_ELEMENTS(routes) && post)
    relay(r, route, buf->str, (size_t)n,
          type && g_ascii_strncasecmp(type, "application/x-protobuf", 22) == 0);
  g_string_erase(buf, 0, (gssize)n);
  return answer(fd, route < G_N_ELEMENTS(routes) && post ? 200 : 404, !keep) && keep;
}

typedef struct {
  BoxOtelReceiver *r;
  int fd;
} Connection;

static gpointer connection_main(gpointer data)
{
  Connection *c = data;
  GString *buf = g_string_new(NULL);
  while (!g_atomic_int_get(&c->r->stopping) && serve_request(c->r, c->fd, buf))
    ;
  g_string_free(buf, TRUE);
  close(c->fd);
  g_atomic_int_add(&c->r->connections, -1);
  g_free(c);
  return NULL;
}

static gpointer accept_main(gpointer data)
{
  BoxOtelReceiver *r = data;
  GArray *polled = g_array_new(FALSE, FALSE, sizeof(struct pollfd));
  while (!g_atomic_int_get(&r->stopping)) {
    g_array_set_size(polled, 0);
    struct pollfd w = { .fd = r->wake_fd, .events = POLLIN };
    g_array_append_val(polled, w);
    g_mutex_lock(&r->lock);
    for (guint i = 0; i < r->listeners->len; i++) {
      Listener *l = &g_array_index(r->listeners, Listener, i);
      struct pollfd p = { .fd = l->fd, .events = POLLIN };
      g_array_append_val(polled, p);
      struct pollfd u = { .fd = l->until, .events = POLLIN };
      g_array_append_val(polled, u);
    }
    g_mutex_unlock(&r->lock);
    struct pollfd *p = (struct pollfd *)(void *)polled->data;
    if (poll(p, polled->len, -1) < 0 && errno != EINTR) g_usleep(1000);
    if (p[0].revents) {
      guint64 n;
      if (read(r->wake_fd, &n, sizeof n) < 0) { /* nonblocking: nothing more to read */
      }
    }
    for (guint k = 1; k + 1 < polled->len; k += 2) {
      if (p[k + 1].fd >= 0 && p[k + 1].revents) { /* its namespace's process has ended */
        g_mutex_lock(&r->lock);
        for (guint i = 0; i < r->listeners->len; i++) {
          Listener *l = &g_array_index(r->listeners, Listener, i);
          if (l->fd != p[k].fd) continue;
          close(l->fd);
          close(l->until);
          g_array_remove_index_fast(r->listeners, i);
          break;
        }
        g_mutex_unlock(&r->lock);
        continue;
      }
      if (!(p[k].revents & POLLIN)) continue;
      int fd = accept4(p[k].fd, NULL, NULL, SOCK_CLOEXEC);
      if (fd < 0) continue;
      if (g_atomic_int_add(&r->connections, 1) >= CONNECTIONS_MAX) {
        g_atomic_int_add(&r->connections, -1);
        close(fd);
        continue;
      }
      Connection *c = g_new0(Connection, 1);
      c->r = r;
      c->fd = fd;
      g_thread_unref(g_thread_new("box-otel-conn", connection_main, c));
    }
  }
  g_array_free(polled, TRUE);
  return NULL;
}

static int listen_loopback(int port, GError **error)
{
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                "the telemetry receiver cannot listen on 127.0.0.1: %s", g_strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

int box_otel_receiver_listen(int port, GError **error)
{
  return listen_loopback(port, error);
}

void box_otel_receiver_serve(BoxOtelReceiver *r, int fd, int until_fd)
{
  Listener l = { fd, until_fd };
  g_mutex_lock(&r->lock);
  g_array_append_val(r->listeners, l);
  g_mutex_unlock(&r->lock);
  guint64 one = 1;
  if (write(r->wake_fd, &one, sizeof one) < 0) { /* the loop polls it again anyway */
  }
}

BoxOtelReceiver *box_otel_receiver_start(BoxTelemetry *t, GError **error)
{
  int fd = listen_loopback(0, error);
  if (fd < 0) return NULL;
  struct sockaddr_in a;
  socklen_t alen = sizeof a;
  getsockname(fd, (struct sockaddr *)&a, &alen);
  BoxOtelReceiver *r = g_new0(BoxOtelReceiver, 1);
  r->telemetry = t;
  r->port = ntohs(a.sin_port);
  r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  r->listeners = g_array_new(FALSE, FALSE, sizeof(Listener));
  g_mutex_init(&r->lock);
  box_otel_receiver_serve(r, fd, -1);
  r->thread = g_thread_new("box-otel", accept_main, r);
  return r;
}

int box_otel_receiver_port(const BoxOtelReceiver *r)
{
  return r ? r->port : -1;
}

void box_otel_receiver_stop(BoxOtelReceiver *r)
{
  if (!r) return;
  g_atomic_int_set(&r->stopping, 1);
  guint64 one = 1;
  if (write(r->wake_fd, &one, sizeof one) < 0) { /* joined below either way */
  }
  g_thread_join(r->thread);
  /* a connection notices within a second; one in a relay ends with it */
  for (int waited = 0; g_atomic_int_get(&r->connections) > 0 && waited < 5000; waited += 10)
    g_usleep(10000);
  for (guint i = 0; i < r->listeners->len; i++) {
    Listener *l = &g_array_index(r->listeners, Listener, i);
    close(l->fd);
    if (l->until >= 0) close(l->until);
  }
  g_array_free(r->listeners, TRUE);
  close(r->wake_fd);
  g_mutex_clear(&r->lock);
  if (g_atomic_int_get(&r->connections) == 0) g_free(r); /* else left to the process's end */
}
