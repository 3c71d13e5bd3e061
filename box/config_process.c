/* config_process.c — the `[agent]` and `[tool.<name>]` tables (spec/runtime.md
 * §2.1, §2.2): command, workspace, env, filesystem lists, network, and the
 * agent's shell_timeout and RAM limits. */
#include "box/config-private.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- process specification (§2.1, §2.2) ---------------------------------- */

typedef struct {
  ConfigCtx *c;
  bool is_agent;
  const char *key;    /* "agent" or "tool.<label>" */
  const char *prefix; /* "invalid `[agent]` table: " or "invalid `[tool.<l>]` table: " */
  const char *table;  /* "[agent]" or "[tool.<l>]" for replacement texts */
  const char *home;
  const char *own_key; /* a key the caller reads itself ("type" of `[mcp.<n>]`), or NULL */
} Proc;

static bool check_command(Proc *p, json_object *v, BoxProcessSpec *out)
{
  char *key = config_key_join(p->key, "command");
  bool ok = config_get_string_array(p->c, v, key, &out->command);
  g_free(key);
  if (!ok) return false;
  char **cmd = out->command;
  if (!cmd[0])
    return config_fail_spec(p->c, "%s`command` must name a program as its first entry", p->prefix);
  const char *prog = cmd[0];
  if (!*prog) return config_fail_spec(p->c, "%s`command` element 0 is empty", p->prefix);
  if (strstr(prog, "${")) {
    char *q = config_quote(prog);
    config_fail_spec(
      p->c, "%s`command` element 0 %s is spelled with `${`, and a program is never expanded",
      p->prefix, q);
    g_free(q);
    return false;
  }
  if (prog[0] != '/' && strchr(prog, '/')) {
    char *q = config_quote(prog);
    config_fail_spec(
      p->c,
      "%s`command` element 0 %s is a relative path; write an absolute path, or a bare name "
      "that `env.PATH` resolves",
      p->prefix, q);
    g_free(q);
    return false;
  }
  static const char *const expandable[] = { "OTEL_EXPORTER_OTLP_ENDPOINT",
                                            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                                            "OTEL_EXPORTER_OTLP_PROTOCOL", NULL };
  for (size_t i = 1; cmd[i]; i++) {
    for (const char *s = strstr(cmd[i], "${"); s; s = strstr(s, "${")) {
      const char *end = strchr(s + 2, '}');
      char *problem = NULL;
      if (!end) {
        problem = g_strdup("opens `${` and never closes it");
      } else {
        char *name = g_strndup(s + 2, (gsize)(end - s - 2));
        bool known = false;
        for (size_t k = 0; expandable[k]; k++) known = known || strcmp(name, expandable[k]) == 0;
        if (!known) problem = g_strdup_printf("names `${%s}`, which is not expanded", name);
        g_free(name);
      }
      if (problem) {
        char *q = config_quote(cmd[i]);
        config_fail_spec(
          p->c,
          "%s`command` element %zu %s %s; only ${OTEL_EXPORTER_OTLP_ENDPOINT}, "
          "${OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} and ${OTEL_EXPORTER_OTLP_PROTOCOL} expand",
          p->prefix, i, q, problem);
        g_free(q);
        g_free(problem);
        return false;
      }
      s = end + 1;
    }
  }
  return true;
}

static bool check_workspace(Proc *p, json_object *v, BoxProcessSpec *out)
{
  char *key = config_key_join(p->key, "workspace");
  const char *ws = NULL;
  bool ok = config_get_string(p->c, v, key, &ws);
  g_free(key);
  if (!ok) return false;
  if (ws[0] != '/') {
    char *q = config_quote(ws);
    config_fail_spec(p->c, "%s`workspace` must be an absolute path: %s", p->prefix, q);
    g_free(q);
    return false;
  }
  out->workspace = g_strdup(ws);
  return true;
}

static bool check_env(Proc *p, json_object *v, BoxProcessSpec *out)
{
  char *key = config_key_join(p->key, "env");
  bool ok = true;
  if (!json_object_is_type(v, json_type_object)) {
    ok = config_fail_parse(p->c, "`%s` must be a table of strings", key);
    goto done;
  }
  json_object_object_foreach (v, name, val) {
    char *vkey = config_key_join(key, name);
    const char *value = NULL;
    ok = config_get_string(p->c, val, vkey, &value);
    g_free(vkey);
    if (!ok) goto done;
    char *q = config_quote(name);
    if (!config_env_name_valid(name))
      ok =
        config_fail_spec(p->c,
                         "%s`env` name %s is not an environment name; use letters, digits and '_', "
                         "not beginning with a digit",
                         p->prefix, q);
    else if (config_env_name_reserved(name))
      ok = config_fail_spec(
        p->c, "%s`env` name %s is set by the box itself, so a table cannot claim it", p->prefix, q);
    g_free(q);
    if (!ok) goto done;
    if ((strcmp(name, "HOME") == 0 || strcmp(name, "TMPDIR") == 0) && value[0] != '/') {
      char *qv = config_quote(value);
      ok = config_fail_spec(p->c, "%s`env.%s` must be an absolute path: %s", p->prefix, name, qv);
      g_free(qv);
      goto done;
    }
    g_hash_table_replace(out->env, g_strdup(name), g_strdup(value));
  }
done:
  g_free(key);
  return ok;
}

/* "~" and "~/x" expanded; runs of '/' collapsed; trailing '/' dropped. */
static char *expand_entry(const char *e, const char *home)
{
  char *joined;
  if (strcmp(e, "~") == 0)
    joined = g_strdup(home);
  else if (g_str_has_prefix(e, "~/"))
    joined = g_strconcat(home, e + 1, NULL);
  else
    joined = g_strdup(e);
  GString *out = g_string_sized_new(strlen(joined) + 1);
  for (const char *s = joined; *s; s++) {
    if (*s == '/' && out->len > 0 && out->str[out->len - 1] == '/') continue;
    g_string_append_c(out, *s);
  }
  while (out->len > 1 && out->str[out->len - 1] == '/') g_string_truncate(out, out->len - 1);
  g_free(joined);
  return g_string_free(out, FALSE);
}

static bool has_dotdot(const char *e)
{
  for (const char *s = e; *s;) {
    const char *slash = strchr(s, '/');
    size_t len = slash ? (size_t)(slash - s) : strlen(s);
    if (len == 2 && s[0] == '.' && s[1] == '.') return true;
    if (!slash) break;
    s = slash + 1;
  }
  return false;
}

static bool has_pattern_or_control(const char *e)
{
  for (const unsigned char *s = (const unsigned char *)e; *s; s++)
    if (*s < 0x20 || *s == 0x7f || strchr("*?[]{}", *s)) return true;
  return false;
}

/* Checks the spelling of every entry of filesystem list LIST (§2.2) and
 * stores the expanded entries, NULL-terminated, in *out (NULL: discard). */
static bool check_fs_list(Proc *p, const char *list, json_object *v, char ***out)
{
  char *fs_key = config_key_join(p->key, "filesystem");
  char *key = config_key_join(fs_key, list);
  g_free(fs_key);
  char **raw = NULL;
  bool ok = config_get_string_array(p->c, v, key, &raw);
  g_free(key);
  if (!ok) return false;
  GPtrArray *exp = g_ptr_array_new_with_free_func(g_free);
  for (size_t i = 0; raw[i] && ok; i++) {
    const char *e = raw[i];
    char *q = config_quote(e);
    if (!(e[0] == '/' || strcmp(e, "~") == 0 || g_str_has_prefix(e, "~/")))
      ok = config_fail_spec(p->c,
                            "%s`filesystem.%s` path %s must be absolute or start with `~/`, so a "
                            "checked-in configuration holds in every clone",
                            p->prefix, list, q);
    else if (has_pattern_or_control(e))
      ok = config_fail_spec(
        p->c,
        "%s`filesystem.%s` path %s must be exact and contain no pattern or control "
        "character",
        p->prefix, list, q);
    else if (has_dotdot(e))
      ok = config_fail_spec(p->c, "%s`filesystem.%s` path %s carries `..`; name the path it means",
                            p->prefix, list, q);
    g_free(q);
    if (!ok) break;
    char *x = expand_entry(e, p->home);
    for (guint j = 0; j < exp->len; j++) {
      if (strcmp(x, g_ptr_array_index(exp, j)) == 0) {
        ok = config_fail_spec(p->c, "%s`filesystem.%s` path %s is duplicated", p->prefix, list, x);
        break;
      }
    }
    g_ptr_array_add(exp, x);
  }
  if (ok && strcmp(list, "list") == 0 && exp->len > 0)
    ok = config_fail_spec(
      p->c,
      "%s%s cannot be listed without its contents on Linux: the namespace backend has "
      "no lowering for `list`; grant `read` instead",
      p->prefix, (const char *)g_ptr_array_index(exp, 0));
  g_strfreev(raw);
  if (ok && out) {
    g_ptr_array_add(exp, NULL);
    *out = (char **)g_ptr_array_free(exp, FALSE);
  } else {
    g_ptr_array_unref(exp);
  }
  return ok;
}

static bool check_filesystem(Proc *p, json_object *v, BoxProcessSpec *out)
{
  char *key = config_key_join(p->key, "filesystem");
  bool ok = config_need_table(p->c, v, key);
  if (!ok) goto done;
  json_object_object_foreach (v, list, val) {
    char ***slot = NULL;
    bool discard = false;
    if (strcmp(list, "read") == 0)
      slot = &out->fs.read;
    else if (strcmp(list, "write") == 0)
      slot = &out->fs.write;
    else if (strcmp(list, "read_file") == 0)
      slot = &out->fs.read_file;
    else if (strcmp(list, "write_file") == 0)
      slot = &out->fs.write_file;
    else if (strcmp(list, "deny") == 0)
      slot = &out->fs.deny;
    else if (strcmp(list, "list") == 0)
      discard = true; /* refused on Linux when it names anything */
    else if (p->is_agent && strcmp(list, "exec") == 0)
      slot = &out->fs.exec;
    else if (p->is_agent && strcmp(list, "metadata") == 0)
      discard = true; /* Linux leaves the path out of the view: fail-closed */
    else if (!p->is_agent && (strcmp(list, "exec") == 0 || strcmp(list, "metadata") == 0)) {
      char *rkey = config_key_join(key, list);
      char *repl = strcmp(list, "exec") == 0
                     ? g_strdup_printf("the program in `%s command`, or an `[agent.filesystem] "
                                       "exec` entry",
                                       p->table)
                     : g_strdup_printf("`read` or `read_file` in `[%s.filesystem]`", p->key);
      ok = config_fail_removed(p->c, rkey, repl);
      g_free(repl);
      g_free(rkey);
      goto done;
    } else {
      char *ukey = config_key_join(key, list);
      ok = config_fail_parse(p->c, "unknown field `%s`", ukey);
      g_free(ukey);
      goto done;
    }
    if (slot) {
      g_strfreev(*slot);
      *slot = NULL;
    }
    if (!check_fs_list(p, list, val, discard ? NULL : slot)) {
      ok = false;
      goto done;
    }
  }
done:
  g_free(key);
  return ok;
}

static bool check_network(Proc *p, json_object *v)
{
  char *key = config_key_join(p->key, "network");
  bool ok = config_need_table(p->c, v, key);
  if (!ok) goto done;
  json_object_object_foreach (v, k, val) {
    char *sub = config_key_join(key, k);
    if (strcmp(k, "contain_egress") != 0)
      ok = config_fail_parse(p->c, "unknown field `%s`", sub);
    else if (!json_object_is_type(val, json_type_boolean))
      ok = config_fail_parse(p->c, "`%s` must be a boolean", sub);
    g_free(sub);
    if (!ok) goto done;
  }
done:
  g_free(key);
  return ok;
}

static char **empty_list(void)
{
  return g_new0(char *, 1);
}

void config_spec_clear(BoxProcessSpec *s)
{
  g_free(s->label);
  g_strfreev(s->command);
  g_free(s->workspace);
  if (s->env) g_hash_table_unref(s->env);
  g_strfreev(s->fs.read);
  g_strfreev(s->fs.write);
  g_strfreev(s->fs.read_file);
  g_strfreev(s->fs.write_file);
  g_strfreev(s->fs.exec);
  g_strfreev(s->fs.deny);
  memset(s, 0, sizeof *s);
}

/* [agent] shell_timeout: "30s", "1500ms", "2m", or whole seconds as an
 * integer; more than 0 and at most 24 hours. */
#define SHELL_TIMEOUT_MAX_MS (24u * 3600u * 1000u)

static bool check_shell_timeout(Proc *p, json_object *v, BoxProcessSpec *out)
{
  char *key = config_key_join(p->key, "shell_timeout");
  const char *expect = "expected a duration such as \"30s\", \"500ms\" or \"2m\"";
  double ms = -1;
  if (json_object_is_type(v, json_type_int)) {
    ms = (double)json_object_get_int64(v) * 1000.0;
  } else if (json_object_is_type(v, json_type_string)) {
    const char *text = json_object_get_string(v);
    char *end = NULL;
    errno = 0;
    double n = g_ascii_isdigit(text[0]) ? g_ascii_strtod(text, &end) : -1;
    double unit = 0;
    if (end && errno == 0) {
      if (strcmp(end, "ms") == 0)
        unit = 1;
      else if (strcmp(end, "s") == 0)
        unit = 1000;
      else if (strcmp(end, "m") == 0)
        unit = 60000;
      else if (strcmp(end, "h") == 0)
        unit = 3600000;
    }
    if (!unit) {
      char *q = config_quote(text);
      config_fail_parse(p->c, "`%s` = %s is invalid: %s", key, q, expect);
      g_free(q);
      g_free(key);
      return false;
    }
    ms = n * unit;
  } else {
    config_fail_parse(p->c, "`%s` is invalid: %s", key, expect);
    g_free(key);
    return false;
  }
  if (!(ms >= 1) || ms > SHELL_TIMEOUT_MAX_MS) {
    config_fail_parse(p->c, "`%s` is invalid: must be at least 1ms and at most 24h", key);
    g_free(key);
    return false;
  }
  out->shell_timeout_ms = (unsigned)ms;
  g_free(key);
  return true;
}

/* [agent] ram, ram_size, ram_inodes (the Shell's RAM areas). */
static bool check_ram(Proc *p, const char *k, json_object *v, BoxProcessSpec *out)
{
  char *key = config_key_join(p->key, k);
  bool ok = true;
  if (strcmp(k, "ram") == 0) {
    const char *t = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    if (t && strcmp(t, "box") == 0)
      out->ram_per_box = true;
    else if (t && strcmp(t, "command") == 0)
      out->ram_per_box = false;
    else
      ok = config_fail_parse(p->c, "`%s` is invalid: expected \"command\" or \"box\"", key);
  } else if (strcmp(k, "ram_size") == 0) {
    gint64 n = -1;
    if (json_object_is_type(v, json_type_int)) {
      n = json_object_get_int64(v);
    } else if (json_object_is_type(v, json_type_string)) {
      const char *t = json_object_get_string(v);
      char *end = NULL;
      guint64 x = g_ascii_isdigit(t[0]) ? g_ascii_strtoull(t, &end, 10) : 0;
      guint64 mul = 0;
      if (end && (*end == '\0' || strcmp(end, "B") == 0))
        mul = 1;
      else if (end && (strcmp(end, "K") == 0 || strcmp(end, "KiB") == 0))
        mul = 1024;
      else if (end && (strcmp(end, "M") == 0 || strcmp(end, "MiB") == 0))
        mul = 1024 * 1024;
      else if (end && (strcmp(end, "G") == 0 || strcmp(end, "GiB") == 0))
        mul = 1024 * 1024 * 1024;
      if (mul && x <= G_MAXINT64 / mul) n = (gint64)(x * mul);
    }
    if (n < 4096 || n > ((gint64)1 << 40))
      ok = config_fail_parse(p->c,
                             "`%s` is invalid: expected a size such as \"64M\" or \"1G\", "
                             "from 4K to 1T",
                             key);
    else
      out->ram_max_bytes = (guint64)n;
  } else {
    gint64 n = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
    if (n < 16 || n > 10000000)
      ok = config_fail_parse(p->c, "`%s` is invalid: expected a whole number from 16 to 10000000",
                             key);
    else
      out->ram_max_inodes = (unsigned)n;
  }
  g_free(key);
  return ok;
}

static bool check_process(Proc *p, json_object *tbl, BoxProcessSpec *out)
{
  ConfigCtx *c = p->c;
  if (!config_need_table(c, tbl, p->key)) return false;
  json_object *command = NULL;
  json_object_object_foreach (tbl, k, val) {
    char *sub = config_key_join(p->key, k);
    bool ok = true;
    if (p->own_key && strcmp(k, p->own_key) == 0) {
      /* read by the caller */
    } else if (strcmp(k, "command") == 0) {
      command = val;
    } else if (strcmp(k, "workspace") == 0) {
      ok = check_workspace(p, val, out);
    } else if (p->is_agent && strcmp(k, "shell_timeout") == 0) {
      ok = check_shell_timeout(p, val, out);
    } else if (p->is_agent && (strcmp(k, "ram") == 0 || strcmp(k, "ram_size") == 0 ||
                               strcmp(k, "ram_inodes") == 0)) {
      ok = check_ram(p, k, val, out);
    } else if (strcmp(k, "env") == 0) {
      ok = check_env(p, val, out);
    } else if (strcmp(k, "filesystem") == 0) {
      ok = check_filesystem(p, val, out);
    } else if (strcmp(k, "network") == 0) {
      if (p->is_agent)
        ok = config_fail_spec(
          c,
          "%s`network` is refused on `[agent]`: the agent always reaches the network "
          "through the egress gateway, and only a `[tool.<name>]` or a stdio "
          "`[mcp.<name>]` takes `network.contain_egress`",
          p->prefix);
      else
        ok = check_network(p, val); /* validated; the launcher reads it from doc */
    } else if (p->is_agent && (strcmp(k, "packs") == 0 || strcmp(k, "code") == 0 ||
                               strcmp(k, "default_command") == 0)) {
      ok = config_fail_removed(c, sub,
                               strcmp(k, "packs") == 0
                                 ? "a `[tool.<name>]` table for each program the Shell launches"
                                 : "`[agent] command`");
    } else if (strcmp(k, "read") == 0 || strcmp(k, "write") == 0) {
      char *repl = g_strdup_printf("`%s` in `[%s.filesystem]`", k, p->key);
      ok = config_fail_removed(c, sub, repl);
      g_free(repl);
    } else if (!p->is_agent && strcmp(k, "exec") == 0) {
      char *repl = g_strdup_printf("`%s command`", p->table);
      ok = config_fail_removed(c, sub, repl);
      g_free(repl);
    } else {
      ok = config_fail_parse(c, "unknown field `%s`", sub);
    }
    g_free(sub);
    if (!ok) return false;
  }
  if (!command) return config_fail_parse(c, "missing field `%s.command`", p->key);
  return check_command(p, command, out);
}

static void spec_init(BoxProcessSpec *s, const char *label)
{
  s->label = g_strdup(label);
  s->env = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

static void spec_fill_lists(BoxProcessSpec *s)
{
  char ***lists[] = { &s->fs.read,       &s->fs.write, &s->fs.read_file,
                      &s->fs.write_file, &s->fs.exec,  &s->fs.deny };
  for (size_t i = 0; i < G_N_ELEMENTS(lists); i++)
    if (!*lists[i]) *lists[i] = empty_list();
}

static gint tool_cmp(gconstpointer a, gconstpointer b)
{
  const BoxProcessSpec *x = *(BoxProcessSpec *const *)a;
  const BoxProcessSpec *y = *(BoxProcessSpec *const *)b;
  return strcmp(x->label, y->label);
}

bool config_check_agent(ConfigCtx *c, json_object *v, const char *home, BoxConfig *cfg)
{
  Proc p = { c, true, "agent", "invalid `[agent]` table: ", "[agent]", home, NULL };
  spec_init(&cfg->agent, "agent");
  bool ok = check_process(&p, v, &cfg->agent);
  spec_fill_lists(&cfg->agent);
  return ok;
}

void config_tool_free(gpointer p)
{
  config_spec_clear(p);
  g_free(p);
}

bool config_check_tools(ConfigCtx *c, json_object *v, const char *home, BoxConfig *cfg)
{
  if (!config_need_table(c, v, "tool")) return false;
  json_object_object_foreach (v, label, tbl) {
    char *key = config_key_join("tool", label);
    char *table = g_strdup_printf("[%s]", key);
    char *prefix = g_strdup_printf("invalid `%s` table: ", table);
    bool ok = true;
    if (config_component_problem(label))
      ok =
        config_fail_spec(c,
                         "invalid `[tool.%s]` table: the label must be one component of letters, "
                         "digits, '.', '_', or '-'",
                         label);
    if (ok) {
      BoxProcessSpec *s = g_new0(BoxProcessSpec, 1);
      spec_init(s, label);
      g_ptr_array_add(cfg->tools, s);
      Proc p = { c, false, key, prefix, table, home, NULL };
      ok = check_process(&p, tbl, s);
      spec_fill_lists(s);
    }
    g_free(prefix);
    g_free(table);
    g_free(key);
    if (!ok) return false;
  }
  g_ptr_array_sort(cfg->tools, tool_cmp);
  return true;
}

bool config_check_leaf(ConfigCtx *c, const char *key, const char *own_key, json_object *tbl,
                       const char *home, const char *label, BoxProcessSpec *out)
{
  spec_init(out, label);
  g_autofree char *table = g_strdup_printf("[%s]", key);
  g_autofree char *prefix = g_strdup_printf("invalid `%s` table: ", table);
  Proc p = { c, false, key, prefix, table, home, own_key };
  bool ok = check_process(&p, tbl, out);
  spec_fill_lists(out);
  return ok;
}
