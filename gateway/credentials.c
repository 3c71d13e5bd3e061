/* gateway/credentials.c — credential routes (spec/runtime.md §7): a
 * route as the gateway holds it, the phantom in a request's header, basic
 * auth or query swapped for the secret (aws:// routes are signed again,
 * sigv4.c), and the reply to such a request held whole and scrubbed of
 * every spelling of the secret.
 */
#include "gateway/gateway-private.h"

#include <string.h>

#include <openssl/crypto.h>

/* Response bodies of credentialed requests are held whole to be scrubbed
 * of the secret (spec/runtime.md §6.1 step 7's response limit). */
#define CRED_RESPONSE_LIMIT (16 * 1024 * 1024)
#define REDACTED "[REDACTED]"

/* Frees a string that may hold a secret, wiping it first. */
void gw_secret_free(gpointer p)
{
  if (!p) return;
  OPENSSL_cleanse(p, strlen(p));
  g_free(p);
}

void gw_route_clear(GwRoute *r)
{
  g_free(r->name);
  for (size_t i = 0; i < r->n_dests; i++) gw_dest_clear(&r->dests[i]);
  g_free(r->dests);
  g_free(r->header);
  g_free(r->prefix);
  g_free(r->param);
  g_free(r->phantom);
  gw_secret_free(r->secret);
  gw_secret_free(r->spelled[0]);
  gw_secret_free(r->spelled[1]);
  g_free(r->aws_key_id);
  memset(r, 0, sizeof *r);
}

bool gw_route_init(GwRoute *r, const BoxGatewayRoute *from, GError **error)
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

const GwRoute *gw_route_for(BoxGateway *gw, const char *host, int port, const char *path)
{
  for (size_t i = 0; i < gw->n_routes; i++)
    for (size_t k = 0; k < gw->routes[i].n_dests; k++)
      if (gw_dest_matches(&gw->routes[i].dests[k], host, port, path)) return &gw->routes[i];
  return NULL;
}

/* The one header named name, NULL when there is none; *several when there
 * is more than one (which the gateway will not guess between). */
static GwHeader *only_header(GwHead *req, const char *name, bool *several)
{
  GwHeader *found = NULL;
  *several = false;
  for (guint i = 0; i < req->headers->len; i++) {
    GwHeader *hd = &g_array_index(req->headers, GwHeader, i);
    if (g_ascii_strcasecmp(hd->name, name) == 0) {
      *several = found != NULL;
      found = hd;
    }
  }
  return found;
}

static bool basic_password_is(const char *value, const char *phantom)
{
  if (g_ascii_strncasecmp(value, "Basic ", 6) != 0) return false;
  const char *b64 = value + 6;
  while (*b64 == ' ') b64++;
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
static GwCredResult cred_header(const GwRoute *r, GwHead *req, GPtrArray *owned)
{
  bool basic = r->placement == BOX_GATEWAY_PLACE_BASIC_AUTH;
  const char *name = basic ? "Authorization" : r->header;
  bool several = false;
  GwHeader *found = only_header(req, name, &several);
  if (several) return GW_CRED_REFUSED;
  bool phantom = false;
  if (found && basic) {
    phantom = basic_password_is(found->value, r->phantom);
  } else if (found) {
    size_t pl = strlen(r->prefix);
    phantom = g_ascii_strncasecmp(found->value, r->prefix, pl) == 0 &&
              strcmp(found->value + pl, r->phantom) == 0;
  }
  if (!phantom && !r->always) return GW_CRED_REFUSED;
  char *value =
    basic ? g_strconcat("Basic ", r->spelled[0], NULL) : g_strconcat(r->prefix, r->secret, NULL);
  g_ptr_array_add(owned, value);
  if (found) {
    found->value = value;
  } else {
    GwHeader hd = { (char *)name, value };
    g_array_append_val(req->headers, hd);
  }
  return phantom ? GW_CRED_SWAPPED : GW_CRED_ADDED;
}

/* Query placement: `<param>=<phantom>` in the target's query becomes
 * `<param>=<secret, percent-escaped>`.  *origin then points into owned. */
static GwCredResult cred_query(const GwRoute *r, const char **origin, GPtrArray *owned)
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
    return GW_CRED_REFUSED;
  }
  if (seen == 0)
    g_string_append_printf(out, "%c%s=%s", items[0] ? '&' : '?', r->param, r->spelled[0]);
  char *text = g_string_free(out, FALSE);
  g_ptr_array_add(owned, text);
  *origin = text;
  return phantom ? GW_CRED_SWAPPED : GW_CRED_ADDED;
}

GwCredResult gw_cred_apply(const GwRoute *r, GwHead *req, const char *method, const char *host,
                           const char **origin, const GByteArray *body, GPtrArray *owned)
{
  if (r->aws) return gw_cred_aws(r, req, method, host, *origin, body, owned);
  return r->placement == BOX_GATEWAY_PLACE_QUERY ? cred_query(r, origin, owned)
                                                 : cred_header(r, req, owned);
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
      if (!needles[i] || !*needles[i]) continue;
      size_t nl = strlen(needles[i]);
      const char *at = memmem(cur, left, needles[i], nl);
      if (at && (!best || at < best || (at == best && nl > best_len))) {
        best = at;
        best_len = nl;
      }
    }
    if (!best) break;
    if (!out) out = g_string_sized_new(len);
    g_string_append_len(out, cur, best - cur);
    g_string_append(out, REDACTED);
    left -= (size_t)(best - cur) + best_len;
    cur = best + best_len;
  }
  if (!out) return NULL;
  g_string_append_len(out, cur, (gssize)left);
  *out_len = out->len;
  return g_string_free(out, FALSE);
}

/* The reply's head for the client: its fields scrubbed of the secret,
 * re-framed by the Content-Length of the scrubbed body (blen). */
static GString *scrubbed_head(const GwRoute *route, const GwHead *resp, GwFraming framing,
                              size_t blen, bool keep)
{
  GString *rh = g_string_sized_new(1024);
  g_string_append_printf(rh, "HTTP/1.1 %s %s\r\n", resp->b, resp->c);
  for (guint i = 0; i < resp->headers->len; i++) {
    GwHeader *hd = &g_array_index(resp->headers, GwHeader, i);
    /* Re-framed below; a reply without a body (HEAD, 304) keeps the
     * length it announces. */
    if (gw_hop_by_hop(resp, hd->name) || g_ascii_strcasecmp(hd->name, "transfer-encoding") == 0 ||
        (framing != GW_FRAMING_NONE && g_ascii_strcasecmp(hd->name, "content-length") == 0))
      continue;
    size_t vl = 0;
    g_autofree char *v = redact(route, hd->value, strlen(hd->value), &vl);
    g_string_append_printf(rh, "%s: %s\r\n", hd->name, v ? v : hd->value);
  }
  if (framing != GW_FRAMING_NONE) g_string_append_printf(rh, "Content-Length: %zu\r\n", blen);
  if (!keep) g_string_append(rh, "Connection: close\r\n");
  g_string_append(rh, "\r\n");
  return rh;
}

/* The scrubbed head and body to the client; whether they went. */
static bool send_scrubbed(GwConn *c, const GwRoute *route, const GwHead *resp, GwFraming framing,
                          const GByteArray *body, bool keep)
{
  size_t blen = body->len;
  char *scrubbed = redact(route, (const char *)body->data, body->len, &blen);
  GString *rh = scrubbed_head(route, resp, framing, blen, keep);
  bool ok = gw_stream_write(&c->client, rh->str, rh->len) &&
            (blen == 0 ||
             gw_stream_write(&c->client, scrubbed ? scrubbed : (const char *)body->data, blen));
  g_string_free(rh, TRUE);
  if (scrubbed) {
    OPENSSL_cleanse(scrubbed, blen);
    g_free(scrubbed);
  }
  return ok;
}

/* The reply to a credentialed request (spec/runtime.md §6.1 step 8): held
 * whole (up to CRED_RESPONSE_LIMIT), every copy of the secret in its
 * headers and body replaced by [REDACTED], and sent under its own
 * Content-Length.  A compressed reply could hide the secret, so it is
 * refused. */
bool gw_credentialed_reply(GwConn *c, const GwRoute *route, const GwHead *resp, GwFraming framing,
                           long long rlen, bool keep)
{
  const char *ce = gw_head_get(resp, "content-encoding");
  bool ok = !ce || g_ascii_strcasecmp(ce, "identity") == 0;
  if (!ok) gw_refuse(c, NULL, "response blocked by egress control");
  GByteArray *body = g_byte_array_new();
  if (ok) {
    int r = gw_read_reply_body(&c->up, framing, rlen, body, CRED_RESPONSE_LIMIT,
                               c->gw->cfg.max_header_bytes);
    if (r != 0) {
      ok = false;
      const char *why = r > 0 ? "the reply to a credentialed request is larger than 16 MiB"
                              : "the server's reply broke off";
      gw_bad_gateway(c, "upstream", why);
    }
  }
  if (ok) ok = send_scrubbed(c, route, resp, framing, body, keep);
  OPENSSL_cleanse(body->data, body->len);
  g_byte_array_free(body, TRUE);
  return ok;
}
