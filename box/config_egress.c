/* config_egress.c — the `[gateway]` table (the address floor's named
 * exceptions, extra trusted CAs) and the `[egress.<name>]` credential
 * routes (spec/runtime.md §2.4). */
#include "box/config-private.h"
#include "gateway/gateway.h"

#include <string.h>

/* ---- [gateway] (boxfs) ----------------------------------------------------- */

bool config_check_gateway(ConfigCtx *c, json_object *v, BoxConfig *cfg)
{
  if (!config_need_table(c, v, "gateway")) return false;
  json_object_object_foreach (v, k, val) {
    if (strcmp(k, "allow_local") == 0) {
      char **list = NULL;
      if (!config_get_string_array(c, val, "gateway.allow_local", &list)) return false;
      g_strfreev(cfg->gateway_allow_local);
      cfg->gateway_allow_local = list;
      for (char **e = list; *e; e++) {
        const char *why = box_gateway_allow_entry_problem(*e);
        if (why) {
          char *q = config_quote(*e);
          config_fail_parse(c, "`gateway.allow_local` entry %s is invalid: %s", q, why);
          g_free(q);
          return false;
        }
      }
    } else if (strcmp(k, "extra_ca") == 0) {
      char **list = NULL;
      if (!config_get_string_array(c, val, "gateway.extra_ca", &list)) return false;
      char *dir = g_path_get_dirname(c->path);
      for (char **e = list; *e; e++) {
        if (!**e) {
          g_free(dir);
          g_strfreev(list);
          return config_fail_parse(c, "`gateway.extra_ca` has an empty entry");
        }
        if ((*e)[0] != '/') {
          char *abs = g_build_filename(dir, *e, NULL);
          g_free(*e);
          *e = abs;
        }
      }
      g_free(dir);
      g_strfreev(cfg->gateway_extra_ca);
      cfg->gateway_extra_ca = list;
    } else {
      char *q = config_key_join("gateway", k);
      config_fail_parse(c, "unknown field `%s`", q);
      g_free(q);
      return false;
    }
  }
  return true;
}

/* ---- [egress.<name>] (§2.4) ------------------------------------------------ */

void config_egress_free(gpointer p)
{
  BoxEgressRoute *r = p;
  g_free(r->name);
  g_strfreev(r->destinations);
  g_free(r->env_name);
  g_free(r->aws_profile);
  g_free(r->header);
  g_free(r->prefix);
  g_free(r->param);
  g_free(r->phantom_prefix);
  g_free(r);
}

static gint egress_cmp(gconstpointer a, gconstpointer b)
{
  const BoxEgressRoute *x = *(BoxEgressRoute *const *)a;
  const BoxEgressRoute *y = *(BoxEgressRoute *const *)b;
  return strcmp(x->name, y->name);
}

static bool header_name_valid(const char *h)
{
  if (!*h) return false;
  for (const char *p = h; *p; p++)
    if (!g_ascii_isalnum(*p) && !strchr("!#$%&'*+-.^_`|~", *p)) return false;
  return true;
}

static bool has_control(const char *s)
{
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return true;
  return false;
}

#define NO_SECRET_TEXT                                                                             \
  "an entry with no secret declares only a destination, which policy already decides; give it a "  \
  "secret, or set protocol = \"mcp\" for a remote MCP server"

/* s is 1 to 64 letters, digits and characters of extra. */
static bool word_of(const char *s, const char *extra)
{
  size_t n = strlen(s);
  if (n < 1 || n > 64) return false;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum(*p) && !strchr(extra, *p)) return false;
  return true;
}

/* fmt takes pre and the value, quoted. */
G_GNUC_PRINTF(3, 0)
static bool fail_quoted(ConfigCtx *c, const char *pre, const char *fmt, const char *value)
{
  g_autofree char *q = config_quote(value);
  return config_fail_spec(c, fmt, pre, q);
}

/* The `secret` table of route r.  pre is "invalid `[egress.<n>]` table: ". */
bool config_check_secret(ConfigCtx *c, const char *key, const char *pre, json_object *v,
                         BoxEgressRoute *r)
{
  if (!json_object_is_type(v, json_type_object))
    return config_fail_spec(
      c,
      "%s`secret` must be a table with `ref = \"env://NAME\"`; a literal secret is "
      "refused, so that the configuration never holds one",
      pre);
  json_object *ref = NULL, *placement = NULL, *header = NULL, *prefix = NULL, *param = NULL,
              *inject = NULL, *pprefix = NULL;
  const ConfigField fields[] = { { "ref", &ref },
                                 { "placement", &placement },
                                 { "header", &header },
                                 { "prefix", &prefix },
                                 { "param", &param },
                                 { "inject", &inject },
                                 { "phantom_prefix", &pprefix },
                                 { NULL, NULL } };
  json_object_object_foreach (v, k, val) {
    char *sub = config_key_join(key, k);
    bool ok;
    if (config_take_field(fields, k, val))
      ok = true;
    else if (strcmp(k, "phantom") == 0)
      ok = config_fail_removed(c, sub, "`secret.phantom_prefix`");
    else
      ok = config_fail_parse(c, "unknown field `%s`", sub);
    if (ok && !json_object_is_type(val, json_type_string))
      ok = config_fail_parse(c, "`%s` must be a string", sub);
    if (ok && !config_json_cstring(val))
      ok = config_fail_parse(c, "`%s` contains a NUL character", sub);
    g_free(sub);
    if (!ok) return false;
  }
  if (!ref) return config_fail_spec(c, "%s%s", pre, NO_SECRET_TEXT);
  const char *rs = json_object_get_string(ref);
  g_autofree char *rq = config_quote(rs);
  if (g_str_has_prefix(rs, "credsd://"))
    return config_fail_spec(
      c,
      "%s`secret.ref` %s: credsd:// credentials are not supported by this build "
      "yet; use `env://NAME` or `aws://PROFILE`",
      pre, rq);
  if (g_str_has_prefix(rs, "aws://")) {
    const char *profile = rs + 6;
    if (!word_of(profile, "._-"))
      return config_fail_spec(
        c,
        "%s`secret.ref` %s does not name a profile of letters, digits, '.', '_' "
        "or '-'",
        pre, rq);
    const char *given = placement ? "placement"
                        : header  ? "header"
                        : prefix  ? "prefix"
                        : param   ? "param"
                        : inject  ? "inject"
                        : pprefix ? "phantom_prefix"
                                  : NULL;
    if (given)
      return config_fail_spec(c,
                              "%s`secret.%s` does not apply to an aws:// route, whose requests are "
                              "re-signed with SigV4",
                              pre, given);
    r->aws = true;
    r->aws_profile = g_strdup(profile);
    r->env_name = g_strdup("AWS_ACCESS_KEY_ID");
    r->placement = BOX_GATEWAY_PLACE_HEADER;
    r->header = g_strdup("Authorization");
    r->prefix = g_strdup("");
    r->phantom_prefix = g_strdup("strands_box_");
    return true;
  }
  if (!g_str_has_prefix(rs, "env://"))
    return config_fail_spec(
      c,
      "%s`secret.ref` %s is not a reference: write `env://NAME` or "
      "`aws://PROFILE` (`credsd://NAME` is not supported by this build yet); a "
      "literal secret is refused, so that the configuration never holds one",
      pre, rq);
  const char *name = rs + 6;
  if (!*name || !config_env_name_valid(name))
    return config_fail_spec(c,
                            "%s`secret.ref` %s does not name an environment variable; use letters, "
                            "digits and '_', not beginning with a digit",
                            pre, rq);
  if (config_env_name_reserved(name) || strcmp(name, "HOME") == 0 || strcmp(name, "PATH") == 0)
    return config_fail_spec(
      c,
      "%s`secret.ref` %s names a variable the box sets itself, so its phantom "
      "could not be given under that name",
      pre, rq);
  r->env_name = g_strdup(name);

  const char *pl = placement ? json_object_get_string(placement) : "header";
  if (strcmp(pl, "header") == 0)
    r->placement = BOX_GATEWAY_PLACE_HEADER;
  else if (strcmp(pl, "basic_auth") == 0)
    r->placement = BOX_GATEWAY_PLACE_BASIC_AUTH;
  else if (strcmp(pl, "query_param") == 0)
    r->placement = BOX_GATEWAY_PLACE_QUERY;
  else
    return fail_quoted(c, pre,
                       "%s`secret.placement` %s is not one of \"header\", \"basic_auth\", "
                       "\"query_param\"",
                       pl);
  if (r->placement != BOX_GATEWAY_PLACE_HEADER && (header || prefix))
    return config_fail_spec(c, "%s`secret.%s` applies only to placement = \"header\"", pre,
                            header ? "header" : "prefix");
  const char *hs = header ? json_object_get_string(header) : "Authorization";
  if (!header_name_valid(hs))
    return fail_quoted(c, pre, "%s`secret.header` %s is not a header name", hs);
  static const char *const framing[] = {
    "host", "content-length", "transfer-encoding", "connection", "proxy-authorization",
    "te",   "upgrade",        "trailer",           "keep-alive", "proxy-connection",
    NULL
  };
  for (int i = 0; framing[i]; i++)
    if (g_ascii_strcasecmp(hs, framing[i]) == 0)
      return fail_quoted(c, pre,
                         "%s`secret.header` %s frames or routes the request and cannot carry a "
                         "secret",
                         hs);
  r->header = g_strdup(hs);
  const char *ps = prefix ? json_object_get_string(prefix)
                          : (g_ascii_strcasecmp(hs, "Authorization") == 0 ? "Bearer " : "");
  if (has_control(ps) || strchr(ps, '{') || strchr(ps, '}'))
    return fail_quoted(c, pre, "%s`secret.prefix` %s contains a control character or a brace", ps);
  r->prefix = g_strdup(ps);
  if (r->placement == BOX_GATEWAY_PLACE_QUERY && !param)
    return config_fail_spec(c, "%s`secret.param` is required with placement = \"query_param\"",
                            pre);
  if (r->placement != BOX_GATEWAY_PLACE_QUERY && param)
    return config_fail_spec(c, "%s`secret.param` is only valid with placement = \"query_param\"",
                            pre);
  if (param) {
    const char *qs = json_object_get_string(param);
    bool bad = !*qs || has_control(qs);
    for (const char *p = qs; *p && !bad; p++) bad = strchr(" &=#?+%", *p) != NULL;
    if (bad)
      return fail_quoted(c, pre,
                         "%s`secret.param` %s is not a query parameter name (no space, '&', '=', "
                         "'#', '?', '+' or '%%')",
                         qs);
    r->param = g_strdup(qs);
  }
  const char *is = inject ? json_object_get_string(inject) : "phantom";
  if (strcmp(is, "always") == 0)
    r->inject_always = true;
  else if (strcmp(is, "phantom") != 0)
    return fail_quoted(c, pre, "%s`secret.inject` %s is not \"phantom\" or \"always\"", is);
  const char *pp = pprefix ? json_object_get_string(pprefix) : "strands_box_";
  if (!word_of(pp, "-_.~"))
    return fail_quoted(c, pre,
                       "%s`secret.phantom_prefix` %s must be 1 to 64 characters of letters, "
                       "digits, '-', '_', '.' or '~'",
                       pp);
  r->phantom_prefix = g_strdup(pp);
  return true;
}

/* A route's destinations must not overlap among themselves nor with any
 * other route's, egress or http MCP alike: a request meets one secret at
 * most. */
static bool overlaps_other(ConfigCtx *c, const char *pre, const char *d, const BoxEgressRoute *r,
                           const BoxEgressRoute *o, const char *kind)
{
  if (o == r) return true;
  for (char **e = o->destinations; *e; e++)
    if (box_gateway_destinations_overlap(*e, d)) {
      g_autofree char *q = config_quote(d);
      g_autofree char *qe = config_quote(*e);
      return config_fail_spec(c,
                              "%s`destinations` entry %s overlaps %s of `[%s.%s]`: a request "
                              "must meet one secret at most",
                              pre, q, qe, kind, o->name);
    }
  return true;
}

bool config_check_destinations(ConfigCtx *c, const char *key, const char *pre, json_object *dest,
                               BoxEgressRoute *r, const BoxConfig *cfg)
{
  if (!dest) return config_fail_parse(c, "missing field `%s.destinations`", key);
  g_autofree char *dkey = config_key_join(key, "destinations");
  if (!config_get_string_array(c, dest, dkey, &r->destinations)) return false;
  if (!r->destinations[0])
    return config_fail_spec(c, "%s`destinations` is empty; name the hosts the secret is for", pre);
  for (char **d = r->destinations; *d; d++) {
    const char *why = box_gateway_destination_problem(*d);
    g_autofree char *q = config_quote(*d);
    if (why) return config_fail_spec(c, "%s`destinations` entry %s is invalid: %s", pre, q, why);
    for (char **e = r->destinations; e < d; e++)
      if (box_gateway_destinations_overlap(*e, *d)) {
        g_autofree char *qe = config_quote(*e);
        return config_fail_spec(c,
                                "%s`destinations` entry %s overlaps %s: a request must meet one "
                                "secret at most",
                                pre, q, qe);
      }
    for (guint i = 0; i < cfg->egress->len; i++)
      if (!overlaps_other(c, pre, *d, r, g_ptr_array_index(cfg->egress, i), "egress")) return false;
    for (guint i = 0; i < cfg->mcp->len; i++) {
      const BoxMcpServer *m = g_ptr_array_index(cfg->mcp, i);
      if (m->route && !overlaps_other(c, pre, *d, r, m->route, "mcp")) return false;
    }
  }
  return true;
}

bool config_check_egress(ConfigCtx *c, json_object *v, BoxConfig *cfg)
{
  if (!config_need_table(c, v, "egress")) return false;
  json_object_object_foreach (v, name, tbl) {
    g_autofree char *key = config_key_join("egress", name);
    g_autofree char *pre = g_strdup_printf("invalid `[%s]` table: ", key);
    if (!config_named_table(c, "egress", name, tbl, key)) return false;
    BoxEgressRoute *r = g_new0(BoxEgressRoute, 1);
    r->name = g_strdup(name);
    g_ptr_array_add(cfg->egress, r);
    json_object *dest = NULL, *secret = NULL;
    json_object_object_foreach (tbl, k, val) {
      g_autofree char *sub = config_key_join(key, k);
      if (strcmp(k, "destinations") == 0) {
        dest = val;
      } else if (strcmp(k, "secret") == 0) {
        secret = val;
      } else if (strcmp(k, "protocol") == 0) {
        const char *pv = NULL;
        if (!config_get_string(c, val, sub, &pv)) return false;
        if (strcmp(pv, "mcp") == 0) {
          g_autofree char *repl = g_strdup_printf("`[mcp.%s] type = \"http\"`", name);
          return config_fail_removed(c, sub, repl);
        }
        if (strcmp(pv, "http") != 0) {
          g_autofree char *q = config_quote(pv);
          return config_fail_spec(c, "%s`protocol` %s is not \"http\"", pre, q);
        }
      } else {
        return config_fail_parse(c, "unknown field `%s`", sub);
      }
    }
    if (!config_check_destinations(c, key, pre, dest, r, cfg)) return false;
    if (!secret) return config_fail_spec(c, "%s%s", pre, NO_SECRET_TEXT);
    g_autofree char *skey = config_key_join(key, "secret");
    if (!config_check_secret(c, skey, pre, secret, r)) return false;
    if (r->aws) {
      /* Service and region come from the host (spec/runtime.md §7). */
      for (char **d = r->destinations; *d; d++) {
        g_autofree char *host = g_ascii_strdown(*d, (gssize)strcspn(*d, "/"));
        char *colon = strrchr(host, ':');
        if (colon && !strchr(host, ']')) *colon = '\0';
        size_t hl = strlen(host);
        if (hl && host[hl - 1] == '.') host[hl - 1] = '\0';
        g_autofree char *service = NULL, *region = NULL;
        bool scoped = g_str_has_prefix(host, "*.") ? g_str_has_suffix(host, ".amazonaws.com") ||
                                                       g_str_has_suffix(host, ".api.aws")
                                                   : box_gateway_aws_scope(host, &service, &region);
        if (!scoped) {
          g_autofree char *q = config_quote(*d);
          return config_fail_spec(
            c,
            "%s`destinations` entry %s is not below amazonaws.com or api.aws, "
            "so no SigV4 service and region can be read from it",
            pre, q);
        }
      }
    }
    static const char *const aws_names[] = { "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                             "AWS_SESSION_TOKEN", NULL };
    for (guint i = 0; i + 1 < cfg->egress->len; i++) {
      BoxEgressRoute *o = g_ptr_array_index(cfg->egress, i);
      BoxEgressRoute *aws = o->aws ? o : r->aws ? r : NULL;
      BoxEgressRoute *env = o->aws ? r : o;
      if (aws && env != aws && !env->aws && g_strv_contains(aws_names, env->env_name))
        return config_fail_spec(
          c,
          "invalid `[egress.%s]` table: `secret.ref` env://%s names a variable "
          "the aws:// route `[egress.%s]` gives its phantom under",
          env->name, env->env_name, aws->name);
      if (o->aws && r->aws)
        return config_fail_spec(c,
                                "%sone aws:// route per box: the phantoms AWS_ACCESS_KEY_ID and "
                                "AWS_SECRET_ACCESS_KEY are `[egress.%s]`'s already",
                                pre, o->name);
      if (strcmp(o->env_name, r->env_name) == 0)
        return config_fail_spec(
          c,
          "%s`secret.ref` env://%s is already the secret of `[egress.%s]`, and "
          "one variable holds one phantom",
          pre, r->env_name, o->name);
    }
  }
  g_ptr_array_sort(cfg->egress, egress_cmp);
  return true;
}
