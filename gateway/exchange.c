/* gateway/exchange.c — one request on a client connection, step by step:
 * where it goes, its body read whole, the target decided (the path
 * decided is the path forwarded), the connection for it, its credentials,
 * the `http:request` decision (before anything is written upstream), TLS
 * to the server for a tunnel, the request forwarded in origin-form and
 * the reply streamed back.  Each step that fails has written the client
 * its reply.
 */
#include "gateway/gateway-private.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

/* What the steps of one exchange share. */
typedef struct {
  GwConn *c;
  GwHead *req;
  const char *method, *target, *version;
  char *host; /* where the request goes: lowercase, no brackets */
  int port;
  const char *origin; /* the origin-form target: as sent, then as forwarded */
  char *origin_buf;
  const char *target_problem; /* why the target is refused, or NULL */
  char *forward;              /* the target forwarded */
  char *path;                 /* its canonical path, which is decided */
  GByteArray *body;
  const GwRoute *route; /* the credential route the request meets, or NULL */
  GPtrArray *owned;     /* strings the request holds that may hold the secret */
  json_object *in;      /* the `http:request` input, once decided */
} Exchange;

static void exchange_clear(Exchange *x)
{
  g_free(x->host);
  g_free(x->origin_buf);
  g_free(x->forward);
  g_free(x->path);
  g_byte_array_unref(x->body);
  g_ptr_array_unref(x->owned);
  if (x->in) json_object_put(x->in);
}

static json_object *request_input(const char *host, int port, const char *method, const char *path,
                                  size_t body_bytes, bool intercepted)
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

/* The decided request's outcome raised for history (status -1: no reply;
 * delivered false: nothing reached the server). */
static void raise_outcome(Exchange *x, int status, bool delivered)
{
  BoxGateway *gw = x->c->gw;
  if (gw->cfg.outcome) gw->cfg.outcome(gw->cfg.data, "http:request", x->in, status, delivered);
  json_object_put(x->in);
  x->in = NULL;
}

/* An HTTP/1.x request line whose method is a token. */
static bool request_line_ok(Exchange *x)
{
  if (!g_str_has_prefix(x->version, "HTTP/1.")) {
    gw_send_simple(&x->c->client, 505, "HTTP Version Not Supported", "HTTP/1.x only\n", false);
    return false;
  }
  for (const char *p = x->method; *p; p++)
    if (!gw_is_token_char((unsigned char)*p)) {
      gw_send_simple(&x->c->client, 400, "Bad Request", "", false);
      return false;
    }
  return true;
}

/* The origin-form of what follows an absolute URL's authority:
 * "http://h?q" is "/?q". */
static const char *origin_after(Exchange *x, const char *rest)
{
  if (*rest == '/') return rest;
  if (*rest == '?') return x->origin_buf = g_strconcat("/", rest, NULL);
  return "/";
}

/* Inside a CONNECT tunnel the request goes to the tunnel's authority,
 * whatever it says; one naming another (in an absolute-form target or its
 * Host) is refused. */
static bool tunnel_target(Exchange *x)
{
  GwConn *c = x->c;
  const char *target = x->target;
  bool authority_ok = true;
  if (target[0] == '/') {
    x->origin = target;
  } else if (g_ascii_strncasecmp(target, "https://", 8) == 0) {
    const char *auth = target + 8;
    size_t alen = strcspn(auth, "/?#");
    g_autofree char *authority = g_strndup(auth, alen);
    g_autofree char *th = NULL;
    int tp = 0;
    if (strchr(authority, '@') || !gw_parse_authority(authority, 443, &th, &tp) ||
        strcmp(th, c->tunnel_host) != 0 || tp != c->tunnel_port)
      authority_ok = false;
    x->origin = origin_after(x, auth + alen);
  } else {
    gw_send_simple(&c->client, 400, "Bad Request", "", false);
    return false;
  }
  const char *hosthdr = gw_head_get(x->req, "host");
  g_autofree char *hh = NULL;
  int hp = 0;
  if (!authority_ok || !hosthdr || gw_head_count(x->req, "host") != 1 ||
      !gw_parse_authority(hosthdr, c->tunnel_port, &hh, &hp) || strcmp(hh, c->tunnel_host) != 0 ||
      hp != c->tunnel_port) {
    gw_refuse(c, NULL, "request authority rejected");
    return false;
  }
  x->host = g_strdup(c->tunnel_host);
  x->port = c->tunnel_port;
  return true;
}

/* Outside a tunnel only absolute-form http:// requests are taken. */
static bool proxy_target(Exchange *x)
{
  GwConn *c = x->c;
  if (g_ascii_strncasecmp(x->target, "http://", 7) != 0) {
    gw_send_simple(&c->client, 400, "Bad Request",
                   "the gateway takes absolute-form http:// requests and CONNECT\n", false);
    return false;
  }
  const char *auth = x->target + 7;
  size_t alen = strcspn(auth, "/?#");
  g_autofree char *authority = g_strndup(auth, alen);
  if (strchr(authority, '@') || !gw_parse_authority(authority, 80, &x->host, &x->port)) {
    gw_send_simple(&c->client, 400, "Bad Request", "", false);
    return false;
  }
  x->origin = origin_after(x, auth + alen);
  return true;
}

/* Where the request goes, and its origin-form target. */
static bool locate(Exchange *x)
{
  /* A fragment is never sent; one that is names nothing servers agree on. */
  if (strchr(x->target, '#')) x->target_problem = "a fragment (`#`), which a client never sends";
  return x->c->tunnel ? tunnel_target(x) : proxy_target(x);
}

/* The request's body, read whole before anything is decided: an aborted
 * upload opens nothing upstream. */
static bool read_request(Exchange *x)
{
  GwConn *c = x->c;
  const char *expect = gw_head_get(x->req, "expect");
  if (expect && g_ascii_strcasecmp(expect, "100-continue") == 0) {
    if (!gw_stream_write(&c->client, "HTTP/1.1 100 Continue\r\n\r\n", 25)) return false;
  }
  int br = gw_read_request_body(&c->client, x->req, c->gw->cfg.max_request_body,
                                c->gw->cfg.max_header_bytes, x->body);
  if (br < 0) return false;
  if (br > 0) {
    const char *reason = br == 400   ? "Bad Request"
                         : br == 413 ? "Payload Too Large"
                                     : "Not Implemented";
    gw_send_simple(&c->client, br, reason, br == 400 ? "bad request\n" : "", false);
    return false;
  }
  return true;
}

/* What is decided is what is forwarded: the canonical path and the query
 * as sent; a path servers read in different ways is refused before any
 * connection for it. */
static bool decidable_target(Exchange *x)
{
  if (!x->target_problem)
    x->forward = box_gateway_request_target(x->origin, &x->path, &x->target_problem);
  if (!x->forward) {
    g_autofree char *text =
      g_strdup_printf("request target rejected: the target holds %s", x->target_problem);
    gw_refuse(x->c, NULL, text);
    return false;
  }
  x->origin = x->forward;
  return true;
}

/* The upstream connection for it: kept from the last request when it goes
 * to the same place, else dialled (and decided). */
static bool upstream_open(Exchange *x)
{
  GwConn *c = x->c;
  if (!c->tunnel && c->up_open && (strcmp(c->up_host, x->host) != 0 || c->up_port != x->port))
    gw_close_upstream(c);
  return c->up_open || gw_dial(c, x->host, x->port);
}

/* Credentials (spec/runtime.md §6.1 step 5), before policy: the route only
 * swaps secrets; reaching the destination is still decided. */
static bool apply_credentials(Exchange *x)
{
  GwConn *c = x->c;
  x->route = gw_route_for(c->gw, x->host, x->port, x->path);
  if (!x->route) return true;
  if (!c->tunnel) {
    gw_refuse(c, NULL, "credential not permitted on a plaintext request");
    return false;
  }
  GwCredResult cr =
    gw_cred_apply(x->route, x->req, x->method, x->host, &x->origin, x->body, x->owned);
  if (cr == GW_CRED_REFUSED) {
    gw_refuse(c, NULL, "blocked by egress control");
    return false;
  }
  if (cr == GW_CRED_ADDED)
    g_printerr("box: warning: [egress.%s] inject = \"always\": the credential was added to "
               "%s https://%s:%d%s, which did not carry the phantom\n",
               x->route->name, x->method, x->host, x->port, x->path);
  return true;
}

/* The `http:request` decision. */
static bool permitted(Exchange *x)
{
  BoxGateway *gw = x->c->gw;
  x->in = request_input(x->host, x->port, x->method, x->path, x->body->len, x->c->tunnel);
  g_autofree char *message = NULL;
  if (gw->cfg.decide(gw->cfg.data, "http:request", x->in, NULL, &message)) return true;
  json_object_put(x->in);
  x->in = NULL;
  gw_refuse(x->c, "http:request", message ? message : "refused");
  return false;
}

/* Inside a tunnel the request goes to the server over TLS too. */
static bool upstream_secure(Exchange *x)
{
  GwConn *c = x->c;
  if (!c->tunnel || c->up_tls) return true;
  g_autofree char *why = NULL;
  if (gw_upstream_tls(c, x->host, x->port, &why)) return true;
  raise_outcome(x, -1, false);
  if (why) {
    g_autofree char *t = g_strdup_printf("TLS to %s:%d failed: %s", x->host, x->port, why);
    gw_bad_gateway(c, "tls", t);
  }
  return false;
}

/* The head forwarded: origin-form, hop-by-hop headers dropped, re-framed. */
static GString *forwarded_head(Exchange *x)
{
  GwConn *c = x->c;
  GString *out = g_string_sized_new(1024);
  g_string_append_printf(out, "%s %s HTTP/1.1\r\n", x->method, x->origin);
  bool have_host = false;
  for (guint i = 0; i < x->req->headers->len; i++) {
    GwHeader *hd = &g_array_index(x->req->headers, GwHeader, i);
    if (gw_hop_by_hop(x->req, hd->name) || g_ascii_strcasecmp(hd->name, "content-length") == 0 ||
        g_ascii_strcasecmp(hd->name, "transfer-encoding") == 0 ||
        g_ascii_strcasecmp(hd->name, "expect") == 0 ||
        (x->route && g_ascii_strcasecmp(hd->name, "accept-encoding") == 0))
      continue;
    if (g_ascii_strcasecmp(hd->name, "host") == 0) {
      if (!c->tunnel) continue; /* the URL's authority wins */
      have_host = true;
    }
    g_string_append_printf(out, "%s: %s\r\n", hd->name, hd->value);
  }
  if (!have_host) {
    const char *auth = x->target + 7;
    g_autofree char *authority = g_strndup(auth, strcspn(auth, "/?#"));
    g_string_append_printf(out, "Host: %s\r\n", c->tunnel ? x->host : authority);
  }
  if (x->body->len > 0 || strcmp(x->method, "POST") == 0 || strcmp(x->method, "PUT") == 0 ||
      strcmp(x->method, "PATCH") == 0)
    g_string_append_printf(out, "Content-Length: %u\r\n", x->body->len);
  if (x->route) /* a reply to be scrubbed must come as it is */
    g_string_append(out, "Accept-Encoding: identity\r\n");
  g_string_append(out, "\r\n");
  return out;
}

static bool forward(Exchange *x)
{
  GwConn *c = x->c;
  GString *out = forwarded_head(x);
  bool sent = gw_stream_write(&c->up, out->str, out->len) &&
              (x->body->len == 0 || gw_stream_write(&c->up, x->body->data, x->body->len));
  OPENSSL_cleanse(out->str, out->len); /* it may hold the secret */
  g_string_free(out, TRUE);
  if (sent) return true;
  raise_outcome(x, -1, false);
  gw_close_upstream(c);
  gw_bad_gateway(c, "upstream", "the server closed the connection");
  return false;
}

/* The reply's head, past any interim (1xx but 101) ones. */
static bool read_reply_head(Exchange *x, GwHead *resp, int *status)
{
  GwConn *c = x->c;
  for (;;) {
    int err = 0;
    char *text = gw_stream_read_head(&c->up, c->gw->cfg.max_header_bytes, &err);
    if (!text || !gw_head_parse(text, resp) || !g_str_has_prefix(resp->a, "HTTP/1.")) {
      if (!text) resp->text = NULL;
      gw_head_clear(resp);
      raise_outcome(x, -1, true);
      gw_close_upstream(c);
      gw_bad_gateway(c, "upstream", "the server sent no valid response");
      return false;
    }
    *status = atoi(resp->b);
    if (*status >= 100 && *status < 200 && *status != 101) {
      gw_head_clear(resp);
      continue;
    }
    return true;
  }
}

/* How the reply's body is framed; *rlen its length when fixed. */
static GwFraming reply_framing(const char *method, int status, const GwHead *resp, long long *rlen)
{
  bool no_body = strcmp(method, "HEAD") == 0 || status == 204 || status == 304 ||
                 (status >= 100 && status < 200);
  if (no_body) return GW_FRAMING_NONE;
  const char *rte = gw_head_get(resp, "transfer-encoding");
  const char *rcl = gw_head_get(resp, "content-length");
  if (rte) return gw_list_has(rte, "chunked") ? GW_FRAMING_CHUNKED : GW_FRAMING_EOF;
  if (!rcl) return GW_FRAMING_EOF;
  char *e = NULL;
  *rlen = strtoll(rcl, &e, 10);
  return (*rcl && !*e && *rlen >= 0) ? GW_FRAMING_FIXED : GW_FRAMING_EOF;
}

/* The reply streamed back as it comes: its head, hop-by-hop fields
 * dropped, then its body. */
static bool stream_reply(Exchange *x, const GwHead *resp, GwFraming framing, long long rlen,
                         bool keep)
{
  GwConn *c = x->c;
  GString *rh = g_string_sized_new(1024);
  g_string_append_printf(rh, "HTTP/1.1 %s %s\r\n", resp->b, resp->c);
  for (guint i = 0; i < resp->headers->len; i++) {
    GwHeader *hd = &g_array_index(resp->headers, GwHeader, i);
    if (g_ascii_strcasecmp(hd->name, "transfer-encoding") != 0 && gw_hop_by_hop(resp, hd->name))
      continue;
    g_string_append_printf(rh, "%s: %s\r\n", hd->name, hd->value);
  }
  if (!keep) g_string_append(rh, "Connection: close\r\n");
  g_string_append(rh, "\r\n");
  bool ok = gw_stream_write(&c->client, rh->str, rh->len);
  g_string_free(rh, TRUE);
  return ok && gw_relay_body(c, framing, rlen);
}

/* The reply to the client, then the end of the exchange: its outcome
 * raised, the upstream dropped unless both sides may keep it.  Returns
 * whether the client connection goes on. */
static bool reply(Exchange *x)
{
  GwConn *c = x->c;
  GwHead resp = { 0 };
  int status = -1;
  if (!read_reply_head(x, &resp, &status)) return false;
  long long rlen = 0;
  GwFraming framing = reply_framing(x->method, status, &resp, &rlen);
  bool client_close = strcmp(x->version, "HTTP/1.0") == 0 ||
                      gw_list_has(gw_head_get(x->req, "connection"), "close") ||
                      gw_list_has(gw_head_get(x->req, "proxy-connection"), "close");
  bool up_keep = strcmp(resp.a, "HTTP/1.1") == 0 &&
                 !gw_list_has(gw_head_get(&resp, "connection"), "close") &&
                 framing != GW_FRAMING_EOF && status != 101;
  bool keep = !client_close && framing != GW_FRAMING_EOF && status != 101;
  bool ok = x->route ? gw_credentialed_reply(c, x->route, &resp, framing, rlen, keep)
                     : stream_reply(x, &resp, framing, rlen, keep);
  gw_head_clear(&resp);
  raise_outcome(x, status, true);
  if (!ok || !up_keep) gw_close_upstream(c);
  return ok && keep;
}

bool gw_exchange(GwConn *c, GwHead *req)
{
  Exchange x = {
    .c = c,
    .req = req,
    .method = req->a,
    .target = req->b,
    .version = req->c,
    .body = g_byte_array_new(),
    .owned = g_ptr_array_new_with_free_func(gw_secret_free),
  };
  bool more = request_line_ok(&x) && locate(&x) && read_request(&x) && decidable_target(&x) &&
              upstream_open(&x) && apply_credentials(&x) && permitted(&x) && upstream_secure(&x) &&
              forward(&x) && reply(&x);
  exchange_clear(&x);
  return more;
}
