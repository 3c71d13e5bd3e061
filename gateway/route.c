/* gateway/route.c — the destinations of `[egress.<name>]` credential routes
 * (spec/runtime.md §2.4): their spelling, which requests they match, and
 * whether two of them could match one request (refused at load, so that a
 * request meets at most one route and one secret).
 *
 * An entry is `host`, `host:port`, `*.suffix` (any name below suffix, not
 * suffix itself), each optionally followed by `/path-prefix` (whole
 * segments of the canonical path) or `/` then `*suffix` (a canonical path ending in
 * suffix).  A host without a port matches ports 443 and 80 only.  Hosts
 * compare case-insensitively, paths case-sensitively.
 */
#include "gateway/gateway-private.h"

#include <string.h>

void gw_dest_clear(GwDest *d)
{
  g_free(d->host);
  g_free(d->path);
  memset(d, 0, sizeof *d);
}

const char *gw_dest_parse(const char *entry, GwDest *out)
{
  memset(out, 0, sizeof *out);
  if (!entry || !*entry) return "it is empty";
  for (const unsigned char *p = (const unsigned char *)entry; *p; p++)
    if (*p <= ' ' || *p == 0x7f) return "it contains a space or a control character";
  if (strstr(entry, "://"))
    return "it names a scheme; write the host alone (credentials only travel over TLS)";
  const char *slash = strchr(entry, '/');
  g_autofree char *auth = slash ? g_strndup(entry, (gsize)(slash - entry)) : g_strdup(entry);
  if (strchr(auth, '@') || strchr(auth, '?') || strchr(auth, '#'))
    return "its host part holds '@', '?' or '#'";
  if (strcmp(auth, "*") == 0 || strcmp(auth, "*.") == 0 || g_str_has_prefix(auth, "*:"))
    return "`*` would match every host";
  const char *h = auth;
  if (g_str_has_prefix(h, "*.")) {
    out->wildcard = true;
    h += 2;
  }
  const char *end_host, *port_text = NULL;
  const char *host_start = h;
  if (*h == '[') {
    const char *close = strchr(h, ']');
    if (!close || out->wildcard)
      return "its IPv6 address is not bracketed as [addr] or [addr]:port";
    host_start = h + 1;
    end_host = close;
    if (close[1] == ':')
      port_text = close + 2;
    else if (close[1])
      return "its IPv6 address is not bracketed as [addr] or [addr]:port";
  } else {
    const char *colon = strchr(h, ':');
    if (colon && strchr(colon + 1, ':')) return "an IPv6 address must be bracketed as [addr]";
    end_host = colon ? colon : h + strlen(h);
    if (colon) port_text = colon + 1;
  }
  if (end_host == host_start) return "it names no host";
  if (memchr(host_start, '*', (size_t)(end_host - host_start)))
    return "`*` stands only as a whole first label, as in `*.example.com`";
  if (port_text) {
    char *e = NULL;
    long v = strtol(port_text, &e, 10);
    if (!*port_text || *e || !g_ascii_isdigit(*port_text)) return "its port is not a number";
    if (v == 0) return "port 0 names no port";
    if (v < 0 || v > 65535) return "its port is above 65535";
    out->port = (int)v;
  }
  out->host = g_ascii_strdown(host_start, end_host - host_start);
  size_t n = strlen(out->host);
  if (n > 1 && out->host[n - 1] == '.') out->host[n - 1] = '\0';
  if (!*out->host || out->host[0] == '.') {
    gw_dest_clear(out);
    return "it names no host";
  }
  if (slash) {
    if (slash[1] == '*') {
      if (!slash[2]) {
        gw_dest_clear(out);
        return "`/*` names no path suffix; leave the path out to match every path";
      }
      if (strchr(slash + 2, '*')) {
        gw_dest_clear(out);
        return "a path takes one `*`, right after the host's `/`";
      }
      out->path_kind = GW_PATH_SUFFIX;
      out->path = g_strdup(slash + 2);
    } else {
      if (strchr(slash, '*')) {
        gw_dest_clear(out);
        return "a path takes one `*`, right after the host's `/`";
      }
      char *canon = box_gateway_canonical_path(slash);
      size_t len = strlen(canon);
      while (len > 1 && canon[len - 1] == '/') canon[--len] = '\0';
      if (strcmp(canon, "/") == 0) {
        g_free(canon); /* every path */
      } else {
        out->path_kind = GW_PATH_PREFIX;
        out->path = canon;
      }
    }
  }
  return NULL;
}

static bool port_in(const GwDest *d, int port)
{
  return d->port ? d->port == port : (port == 443 || port == 80);
}

static bool host_matches(const GwDest *d, const char *host)
{
  if (!d->wildcard) return g_ascii_strcasecmp(d->host, host) == 0;
  size_t hl = strlen(host), sl = strlen(d->host);
  return hl > sl + 1 && host[hl - sl - 1] == '.' &&
         g_ascii_strcasecmp(host + hl - sl, d->host) == 0;
}

/* Whether prefix covers path segment by segment ("/v1" covers "/v1" and
 * "/v1/x", not "/v10"). */
static bool segment_prefix(const char *prefix, const char *path)
{
  size_t n = strlen(prefix);
  return strncmp(prefix, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool gw_dest_matches(const GwDest *d, const char *host, int port, const char *path)
{
  if (!port_in(d, port) || !host_matches(d, host)) return false;
  switch (d->path_kind) {
  case GW_PATH_ANY: return true;
  case GW_PATH_PREFIX: return segment_prefix(d->path, path);
  case GW_PATH_SUFFIX: return g_str_has_suffix(path, d->path);
  }
  return false;
}

static bool ports_meet(const GwDest *a, const GwDest *b)
{
  if (a->port && b->port) return a->port == b->port;
  if (a->port) return port_in(b, a->port);
  if (b->port) return port_in(a, b->port);
  return true;
}

static bool hosts_meet(const GwDest *a, const GwDest *b)
{
  if (!a->wildcard && !b->wildcard) return strcmp(a->host, b->host) == 0;
  if (a->wildcard && !b->wildcard) return host_matches(a, b->host);
  if (!a->wildcard && b->wildcard) return host_matches(b, a->host);
  /* Two wildcards meet when one suffix lies below (or is) the other. */
  return strcmp(a->host, b->host) == 0 || host_matches(a, b->host) || host_matches(b, a->host);
}

static bool paths_meet(const GwDest *a, const GwDest *b)
{
  if (a->path_kind == GW_PATH_ANY || b->path_kind == GW_PATH_ANY) return true;
  if (a->path_kind == GW_PATH_PREFIX && b->path_kind == GW_PATH_PREFIX)
    return segment_prefix(a->path, b->path) || segment_prefix(b->path, a->path);
  if (a->path_kind == GW_PATH_SUFFIX && b->path_kind == GW_PATH_SUFFIX)
    return g_str_has_suffix(a->path, b->path) || g_str_has_suffix(b->path, a->path);
  /* A prefix and a suffix: some path under the prefix ends with the
   * suffix, unless the prefix is a whole path that cannot grow — it can,
   * so they meet. */
  return true;
}

bool gw_dests_meet(const GwDest *a, const GwDest *b)
{
  return hosts_meet(a, b) && ports_meet(a, b) && paths_meet(a, b);
}

/* ---- public ---- */

const char *box_gateway_destination_problem(const char *entry)
{
  GwDest d;
  const char *why = gw_dest_parse(entry, &d);
  gw_dest_clear(&d);
  return why;
}

bool box_gateway_destinations_overlap(const char *a, const char *b)
{
  GwDest x, y;
  bool ok = !gw_dest_parse(a, &x);
  ok = !gw_dest_parse(b, &y) && ok;
  bool meet = ok && gw_dests_meet(&x, &y);
  gw_dest_clear(&x);
  gw_dest_clear(&y);
  return meet;
}

bool box_gateway_destination_matches(const char *entry, const char *host, int port,
                                     const char *path)
{
  GwDest d;
  bool ok = !gw_dest_parse(entry, &d) && gw_dest_matches(&d, host, port, path);
  gw_dest_clear(&d);
  return ok;
}

/* ---- aws:// scope ---- */

/* The forms are listed in gateway.h. */
bool box_gateway_aws_scope(const char *host, char **service, char **region)
{
  const char *suffix = g_str_has_suffix(host, ".amazonaws.com") ? ".amazonaws.com"
                       : g_str_has_suffix(host, ".api.aws")     ? ".api.aws"
                                                                : NULL;
  if (!suffix) return false;
  g_autofree char *rest = g_strndup(host, strlen(host) - strlen(suffix));
  g_auto(GStrv) labels = g_strsplit(rest, ".", -1);
  guint n = g_strv_length(labels);
  if (n == 0 || !*labels[n - 1]) return false;
  const char *last = labels[n - 1];
  bool is_region =
    strchr(last, '-') && g_ascii_isdigit(last[strlen(last) - 1]) && !g_str_has_prefix(last, "s3-");
  if (is_region && n >= 2) {
    guint at = n - 2;
    if (strcmp(labels[at], "dualstack") == 0 && at > 0) at--;
    *service = g_strdup(labels[at]);
    *region = g_strdup(last);
  } else if (!is_region) {
    *service = g_strdup(last);
    *region = g_strdup("us-east-1");
  } else {
    return false;
  }
  /* Legacy s3-<region> and s3-external-1 endpoints sign as s3. */
  if (g_str_has_prefix(*service, "s3-")) {
    g_free(*service);
    *service = g_strdup("s3");
  }
  if (!**service) {
    g_clear_pointer(service, g_free);
    g_clear_pointer(region, g_free);
    return false;
  }
  return true;
}
