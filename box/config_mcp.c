/* config_mcp.c — the `[mcp.<name>]` tables (spec/runtime.md §2.5).  A stdio
 * server is tool-shaped (its table goes through the same checks as a
 * `[tool.<n>]`, its `type` aside); its program is a bare name, because the
 * agent reaches the server by running an alias of that name from the box's
 * bin/.  An http server is an egress route the gateway derives an endpoint
 * from, its secret optional. */
#include "box/config-private.h"

#include <string.h>

/* Names the box's own aliases take; an MCP program under one of them would
 * never reach MCP mode (spec/runtime.md §4.1). */
static const char *const alias_names[] = { "zsh", "bash", "sh", "python3", "python", NULL };

void config_mcp_free(gpointer p)
{
  BoxMcpServer *m = p;
  g_free(m->name);
  if (!m->http) config_spec_clear(&m->spec);
  if (m->route) config_egress_free(m->route);
  g_free(m);
}

static gint mcp_cmp(gconstpointer a, gconstpointer b)
{
  const BoxMcpServer *x = *(BoxMcpServer *const *)a;
  const BoxMcpServer *y = *(BoxMcpServer *const *)b;
  return strcmp(x->name, y->name);
}

static bool check_program(ConfigCtx *c, const char *pre, const BoxConfig *cfg, BoxMcpServer *m)
{
  const char *prog = m->spec.command[0];
  g_autofree char *q = config_quote(prog);
  if (config_component_problem(prog))
    return config_fail_spec(c,
                            "%s`command` element 0 %s is not a bare program name; the box places "
                            "an alias named for the program in its `bin/`, so write one component "
                            "of letters, digits, '.', '_', or '-' that `env.PATH` resolves",
                            pre, q);
  if (g_strv_contains(alias_names, prog))
    return config_fail_spec(c,
                            "%s`command` element 0 %s is the name of the box's own Shell or "
                            "Python alias; an MCP program cannot be zsh, bash, sh, python3, or "
                            "python",
                            pre, q);
  for (guint i = 0; i + 1 < cfg->mcp->len; i++) {
    const BoxMcpServer *o = g_ptr_array_index(cfg->mcp, i);
    if (!o->http && strcmp(o->spec.command[0], prog) == 0)
      return config_fail_spec(c,
                              "%s`command` element 0 %s is already the program of `[mcp.%s]`; "
                              "each server has its own program",
                              pre, q, o->name);
  }
  return true;
}

static bool check_stdio(ConfigCtx *c, const char *key, const char *pre, json_object *tbl,
                        const char *home, const BoxConfig *cfg, BoxMcpServer *m)
{
  if (!config_check_leaf(c, key, "type", tbl, home, m->name, &m->spec)) return false;
  if (!check_program(c, pre, cfg, m)) return false;
  m->contain_egress = true;
  json_object *net = NULL, *ce = NULL;
  if (json_object_object_get_ex(tbl, "network", &net) &&
      json_object_object_get_ex(net, "contain_egress", &ce))
    m->contain_egress = json_object_get_boolean(ce);
  return true;
}

static bool check_http(ConfigCtx *c, const char *key, const char *pre, json_object *tbl,
                       const BoxConfig *cfg, BoxMcpServer *m)
{
  json_object *dest = NULL, *secret = NULL;
  json_object_object_foreach (tbl, k, val) {
    g_autofree char *sub = config_key_join(key, k);
    if (strcmp(k, "destinations") == 0)
      dest = val;
    else if (strcmp(k, "secret") == 0)
      secret = val;
    else if (strcmp(k, "type") != 0)
      return config_fail_parse(c, "unknown field `%s`", sub);
  }
  m->route = g_new0(BoxEgressRoute, 1);
  m->route->name = g_strdup(m->name);
  if (!config_check_destinations(c, key, pre, dest, m->route, cfg)) return false;
  if (!secret) return true;
  g_autofree char *skey = config_key_join(key, "secret");
  if (!config_check_secret(c, skey, pre, secret, m->route)) return false;
  const char *var = m->route->env_name;
  for (guint i = 0; i < cfg->egress->len; i++) {
    const BoxEgressRoute *o = g_ptr_array_index(cfg->egress, i);
    if (o->env_name && strcmp(o->env_name, var) == 0)
      return config_fail_spec(c,
                              "%s`secret.ref` env://%s is already the secret of `[egress.%s]`, "
                              "and one variable holds one phantom",
                              pre, var, o->name);
  }
  for (guint i = 0; i + 1 < cfg->mcp->len; i++) {
    const BoxMcpServer *o = g_ptr_array_index(cfg->mcp, i);
    if (o->route && o->route->env_name && strcmp(o->route->env_name, var) == 0)
      return config_fail_spec(c,
                              "%s`secret.ref` env://%s is already the secret of `[mcp.%s]`, and "
                              "one variable holds one phantom",
                              pre, var, o->name);
  }
  return true;
}

bool config_check_mcp(ConfigCtx *c, json_object *v, const char *home, BoxConfig *cfg)
{
  if (!config_need_table(c, v, "mcp")) return false;
  json_object_object_foreach (v, name, tbl) {
    g_autofree char *key = config_key_join("mcp", name);
    g_autofree char *pre = g_strdup_printf("invalid `[%s]` table: ", key);
    if (!config_named_table(c, "mcp", name, tbl, key)) return false;
    json_object *type = NULL;
    if (!json_object_object_get_ex(tbl, "type", &type))
      return config_fail_parse(c, "missing field `%s.type`", key);
    g_autofree char *tkey = config_key_join(key, "type");
    const char *t = NULL;
    if (!config_get_string(c, type, tkey, &t)) return false;
    BoxMcpServer *m = g_new0(BoxMcpServer, 1);
    m->name = g_strdup(name);
    m->http = strcmp(t, "http") == 0;
    g_ptr_array_add(cfg->mcp, m);
    bool ok;
    if (m->http) {
      ok = check_http(c, key, pre, tbl, cfg, m);
    } else if (strcmp(t, "stdio") == 0) {
      ok = check_stdio(c, key, pre, tbl, home, cfg, m);
    } else {
      g_autofree char *q = config_quote(t);
      ok = config_fail_spec(c, "%s`type` %s is not \"stdio\" or \"http\"", pre, q);
    }
    if (!ok) return false;
  }
  g_ptr_array_sort(cfg->mcp, mcp_cmp);
  return true;
}
