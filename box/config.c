/* config.c — read box.toml (spec/runtime.md §2) and validate it into plain
 * structs.  Only parse-time checks live here (§2.7): nothing on disk is
 * created, opened or judged apart from the configuration file itself.
 *
 * Messages.  Errors of the TOML/shape class (syntax, unknown key, wrong type,
 * missing key, a key this build does not support) read
 *   cannot parse config file <canonical path>: <reason naming the dotted key>
 * Errors for which the spec gives its own text (name rule, `box_dir`
 * absolute, no `[agent]`, `invalid `[agent]` table: …`) keep that text at the
 * front, byte for byte, and name the file after it: "<spec text> (in <path>)".
 * Removed keys use the spec's removed-key text, which begins with the path. */
#include "box/config.h"
#include "tools/tools.h"
#include "gateway/gateway.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_MAX_BYTES (4 * 1024 * 1024)
#define NAME_MAX_BYTES 32

typedef struct {
  const char *path; /* canonical path of the file, for messages */
  GError **error;
} Ctx;

static GQuark config_error_quark(void) { return g_quark_from_static_string("box-config-error"); }

enum { CONFIG_ERROR_READ, CONFIG_ERROR_PARSE, CONFIG_ERROR_INVALID };

/* ---- messages ------------------------------------------------------------ */

/* "cannot parse config file <path>: <reason>" */
G_GNUC_PRINTF(2, 3)
static bool fail_parse(Ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *reason = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(c->error, config_error_quark(), CONFIG_ERROR_PARSE, "cannot parse config file %s: %s",
              c->path, reason);
  g_free(reason);
  return false;
}

/* "<spec text> (in <path>)" */
G_GNUC_PRINTF(2, 3)
static bool fail_spec(Ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(c->error, config_error_quark(), CONFIG_ERROR_INVALID, "%s (in %s)", text, c->path);
  g_free(text);
  return false;
}

/* The spec's removed-key text; it begins with the file's path. */
static bool fail_removed(Ctx *c, const char *key, const char *replacement) {
  g_set_error(c->error, config_error_quark(), CONFIG_ERROR_INVALID,
              "%s carries `%s`, which this build does not read; write %s instead. Edit the "
              "configuration, or select an empty `box_dir` to rebuild a stored record",
              c->path, key, replacement);
  return false;
}

/* A double-quoted, escaped spelling of S (like Rust's {:?} of a str). */
static char *quote(const char *s) {
  GString *out = g_string_new("\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': g_string_append(out, "\\\""); break;
    case '\\': g_string_append(out, "\\\\"); break;
    case '\n': g_string_append(out, "\\n"); break;
    case '\r': g_string_append(out, "\\r"); break;
    case '\t': g_string_append(out, "\\t"); break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        g_string_append_printf(out, "\\u{%x}", *p);
      else
        g_string_append_c(out, (char)*p);
    }
  }
  g_string_append_c(out, '"');
  return g_string_free(out, FALSE);
}

static bool is_bare_key(const char *k) {
  if (!*k)
    return false;
  for (const char *p = k; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_' && *p != '-')
      return false;
  return true;
}

/* Dotted key path: PARENT.CHILD, CHILD quoted when it is not a bare key. */
static char *key_join(const char *parent, const char *child) {
  char *c = is_bare_key(child) ? g_strdup(child) : quote(child);
  char *out = parent && *parent ? g_strconcat(parent, ".", c, NULL) : g_strdup(c);
  g_free(c);
  return out;
}

/* ---- json helpers -------------------------------------------------------- */

/* A string value without embedded NUL bytes, or NULL. */
static const char *json_cstring(json_object *v) {
  if (!json_object_is_type(v, json_type_string))
    return NULL;
  const char *s = json_object_get_string(v);
  if ((size_t)json_object_get_string_len(v) != strlen(s))
    return NULL;
  return s;
}

static bool get_string(Ctx *c, json_object *v, const char *key, const char **out) {
  if (!json_object_is_type(v, json_type_string))
    return fail_parse(c, "`%s` must be a string", key);
  const char *s = json_cstring(v);
  if (!s)
    return fail_parse(c, "`%s` contains a NUL character", key);
  *out = s;
  return true;
}

/* A NULL-terminated copy of an array of strings. */
static bool get_string_array(Ctx *c, json_object *v, const char *key, char ***out) {
  if (!json_object_is_type(v, json_type_array))
    return fail_parse(c, "`%s` must be an array of strings", key);
  size_t n = json_object_array_length(v);
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(v, i);
    if (!json_object_is_type(e, json_type_string))
      return fail_parse(c, "`%s` must be an array of strings", key);
    if (!json_cstring(e))
      return fail_parse(c, "`%s` element %zu contains a NUL character", key, i);
  }
  char **arr = g_new0(char *, n + 1);
  for (size_t i = 0; i < n; i++)
    arr[i] = g_strdup(json_object_get_string(json_object_array_get_idx(v, i)));
  *out = arr;
  return true;
}

/* ---- names --------------------------------------------------------------- */

/* NULL when NAME is one component of [A-Za-z0-9._-], 1..32 bytes, not . or
 * ..; else the reason (static). */
static const char *component_problem(const char *name) {
  size_t len = strlen(name);
  if (len == 0)
    return "it is empty";
  if (len > NAME_MAX_BYTES)
    return "it is longer than 32 bytes";
  if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
    return "`.` and `..` name no component";
  for (const char *p = name; *p; p++) {
    if (*p == '/')
      return "it contains `/`";
    if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-')
      return "it contains a character outside letters, digits, '.', '_', and '-'";
  }
  return NULL;
}

static bool env_name_valid(const char *n) {
  if (!(g_ascii_isalpha(n[0]) || n[0] == '_'))
    return false;
  for (const char *p = n + 1; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_')
      return false;
  return true;
}

static bool env_name_reserved(const char *n) {
  return box_tools_env_name_reserved(n);
}

/* ---- process specification (§2.1, §2.2) ---------------------------------- */

typedef struct {
  Ctx *c;
  bool is_agent;
  const char *key;    /* "agent" or "tool.<label>" */
  const char *prefix; /* "invalid `[agent]` table: " or "invalid `[tool.<l>]` table: " */
  const char *table;  /* "[agent]" or "[tool.<l>]" for replacement texts */
  const char *home;
} Proc;

static bool check_command(Proc *p, json_object *v, BoxProcessSpec *out) {
  char *key = key_join(p->key, "command");
  bool ok = get_string_array(p->c, v, key, &out->command);
  g_free(key);
  if (!ok)
    return false;
  char **cmd = out->command;
  if (!cmd[0])
    return fail_spec(p->c, "%s`command` must name a program as its first entry", p->prefix);
  const char *prog = cmd[0];
  if (!*prog)
    return fail_spec(p->c, "%s`command` element 0 is empty", p->prefix);
  if (strstr(prog, "${")) {
    char *q = quote(prog);
    fail_spec(p->c, "%s`command` element 0 %s is spelled with `${`, and a program is never expanded",
              p->prefix, q);
    g_free(q);
    return false;
  }
  if (prog[0] != '/' && strchr(prog, '/')) {
    char *q = quote(prog);
    fail_spec(p->c,
              "%s`command` element 0 %s is a relative path; write an absolute path, or a bare name "
              "that `env.PATH` resolves",
              p->prefix, q);
    g_free(q);
    return false;
  }
  static const char *const expandable[] = {"OTEL_EXPORTER_OTLP_ENDPOINT",
                                           "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                                           "OTEL_EXPORTER_OTLP_PROTOCOL", NULL};
  for (size_t i = 1; cmd[i]; i++) {
    for (const char *s = strstr(cmd[i], "${"); s; s = strstr(s, "${")) {
      const char *end = strchr(s + 2, '}');
      char *problem = NULL;
      if (!end) {
        problem = g_strdup("opens `${` and never closes it");
      } else {
        char *name = g_strndup(s + 2, (gsize)(end - s - 2));
        bool known = false;
        for (size_t k = 0; expandable[k]; k++)
          known = known || strcmp(name, expandable[k]) == 0;
        if (!known)
          problem = g_strdup_printf("names `${%s}`, which is not expanded", name);
        g_free(name);
      }
      if (problem) {
        char *q = quote(cmd[i]);
        fail_spec(p->c,
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

static bool check_workspace(Proc *p, json_object *v, BoxProcessSpec *out) {
  char *key = key_join(p->key, "workspace");
  const char *ws = NULL;
  bool ok = get_string(p->c, v, key, &ws);
  g_free(key);
  if (!ok)
    return false;
  if (ws[0] != '/') {
    char *q = quote(ws);
    fail_spec(p->c, "%s`workspace` must be an absolute path: %s", p->prefix, q);
    g_free(q);
    return false;
  }
  out->workspace = g_strdup(ws);
  return true;
}

static bool check_env(Proc *p, json_object *v, BoxProcessSpec *out) {
  char *key = key_join(p->key, "env");
  bool ok = true;
  if (!json_object_is_type(v, json_type_object)) {
    ok = fail_parse(p->c, "`%s` must be a table of strings", key);
    goto done;
  }
  json_object_object_foreach(v, name, val) {
    char *vkey = key_join(key, name);
    const char *value = NULL;
    ok = get_string(p->c, val, vkey, &value);
    g_free(vkey);
    if (!ok)
      goto done;
    char *q = quote(name);
    if (!env_name_valid(name))
      ok = fail_spec(p->c,
                     "%s`env` name %s is not an environment name; use letters, digits and '_', "
                     "not beginning with a digit",
                     p->prefix, q);
    else if (env_name_reserved(name))
      ok = fail_spec(p->c, "%s`env` name %s is set by the box itself, so a table cannot claim it",
                     p->prefix, q);
    g_free(q);
    if (!ok)
      goto done;
    if ((strcmp(name, "HOME") == 0 || strcmp(name, "TMPDIR") == 0) && value[0] != '/') {
      char *qv = quote(value);
      ok = fail_spec(p->c, "%s`env.%s` must be an absolute path: %s", p->prefix, name, qv);
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
static char *expand_entry(const char *e, const char *home) {
  char *joined;
  if (strcmp(e, "~") == 0)
    joined = g_strdup(home);
  else if (g_str_has_prefix(e, "~/"))
    joined = g_strconcat(home, e + 1, NULL);
  else
    joined = g_strdup(e);
  GString *out = g_string_sized_new(strlen(joined) + 1);
  for (const char *s = joined; *s; s++) {
    if (*s == '/' && out->len > 0 && out->str[out->len - 1] == '/')
      continue;
    g_string_append_c(out, *s);
  }
  while (out->len > 1 && out->str[out->len - 1] == '/')
    g_string_truncate(out, out->len - 1);
  g_free(joined);
  return g_string_free(out, FALSE);
}

static bool has_dotdot(const char *e) {
  for (const char *s = e; *s;) {
    const char *slash = strchr(s, '/');
    size_t len = slash ? (size_t)(slash - s) : strlen(s);
    if (len == 2 && s[0] == '.' && s[1] == '.')
      return true;
    if (!slash)
      break;
    s = slash + 1;
  }
  return false;
}

static bool has_pattern_or_control(const char *e) {
  for (const unsigned char *s = (const unsigned char *)e; *s; s++)
    if (*s < 0x20 || *s == 0x7f || strchr("*?[]{}", *s))
      return true;
  return false;
}

/* Checks the spelling of every entry of filesystem list LIST (§2.2) and
 * stores the expanded entries, NULL-terminated, in *out (NULL: discard). */
static bool check_fs_list(Proc *p, const char *list, json_object *v, char ***out) {
  char *fs_key = key_join(p->key, "filesystem");
  char *key = key_join(fs_key, list);
  g_free(fs_key);
  char **raw = NULL;
  bool ok = get_string_array(p->c, v, key, &raw);
  g_free(key);
  if (!ok)
    return false;
  GPtrArray *exp = g_ptr_array_new_with_free_func(g_free);
  for (size_t i = 0; raw[i] && ok; i++) {
    const char *e = raw[i];
    char *q = quote(e);
    if (!(e[0] == '/' || strcmp(e, "~") == 0 || g_str_has_prefix(e, "~/")))
      ok = fail_spec(p->c,
                     "%s`filesystem.%s` path %s must be absolute or start with `~/`, so a "
                     "checked-in configuration holds in every clone",
                     p->prefix, list, q);
    else if (has_pattern_or_control(e))
      ok = fail_spec(p->c,
                     "%s`filesystem.%s` path %s must be exact and contain no pattern or control "
                     "character",
                     p->prefix, list, q);
    else if (has_dotdot(e))
      ok = fail_spec(p->c, "%s`filesystem.%s` path %s carries `..`; name the path it means",
                     p->prefix, list, q);
    g_free(q);
    if (!ok)
      break;
    char *x = expand_entry(e, p->home);
    for (guint j = 0; j < exp->len; j++) {
      if (strcmp(x, g_ptr_array_index(exp, j)) == 0) {
        ok = fail_spec(p->c, "%s`filesystem.%s` path %s is duplicated", p->prefix, list, x);
        break;
      }
    }
    g_ptr_array_add(exp, x);
  }
  if (ok && strcmp(list, "list") == 0 && exp->len > 0)
    ok = fail_spec(p->c,
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

static bool check_filesystem(Proc *p, json_object *v, BoxProcessSpec *out) {
  char *key = key_join(p->key, "filesystem");
  bool ok = true;
  if (!json_object_is_type(v, json_type_object)) {
    ok = fail_parse(p->c, "`%s` must be a table", key);
    goto done;
  }
  json_object_object_foreach(v, list, val) {
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
      char *rkey = key_join(key, list);
      char *repl = strcmp(list, "exec") == 0
                       ? g_strdup_printf("the program in `%s command`, or an `[agent.filesystem] "
                                         "exec` entry", p->table)
                       : g_strdup_printf("`read` or `read_file` in `[%s.filesystem]`", p->key);
      ok = fail_removed(p->c, rkey, repl);
      g_free(repl);
      g_free(rkey);
      goto done;
    } else {
      char *ukey = key_join(key, list);
      ok = fail_parse(p->c, "unknown field `%s`", ukey);
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

static bool check_network(Proc *p, json_object *v) {
  char *key = key_join(p->key, "network");
  bool ok = true;
  if (!json_object_is_type(v, json_type_object)) {
    ok = fail_parse(p->c, "`%s` must be a table", key);
    goto done;
  }
  json_object_object_foreach(v, k, val) {
    char *sub = key_join(key, k);
    if (strcmp(k, "contain_egress") != 0)
      ok = fail_parse(p->c, "unknown field `%s`", sub);
    else if (!json_object_is_type(val, json_type_boolean))
      ok = fail_parse(p->c, "`%s` must be a boolean", sub);
    g_free(sub);
    if (!ok)
      goto done;
  }
done:
  g_free(key);
  return ok;
}

static char **empty_list(void) { return g_new0(char *, 1); }

static void spec_clear(BoxProcessSpec *s) {
  g_free(s->label);
  g_strfreev(s->command);
  g_free(s->workspace);
  if (s->env)
    g_hash_table_unref(s->env);
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

static bool check_shell_timeout(Proc *p, json_object *v, BoxProcessSpec *out) {
  char *key = key_join(p->key, "shell_timeout");
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
      char *q = quote(text);
      fail_parse(p->c, "`%s` = %s is invalid: %s", key, q, expect);
      g_free(q);
      g_free(key);
      return false;
    }
    ms = n * unit;
  } else {
    fail_parse(p->c, "`%s` is invalid: %s", key, expect);
    g_free(key);
    return false;
  }
  if (!(ms >= 1) || ms > SHELL_TIMEOUT_MAX_MS) {
    fail_parse(p->c, "`%s` is invalid: must be at least 1ms and at most 24h", key);
    g_free(key);
    return false;
  }
  out->shell_timeout_ms = (unsigned)ms;
  g_free(key);
  return true;
}

/* [agent] ram, ram_size, ram_inodes (the Shell's RAM areas, issue 6). */
static bool check_ram(Proc *p, const char *k, json_object *v, BoxProcessSpec *out) {
  char *key = key_join(p->key, k);
  bool ok = true;
  if (strcmp(k, "ram") == 0) {
    const char *t = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    if (t && strcmp(t, "box") == 0)
      out->ram_per_box = true;
    else if (t && strcmp(t, "command") == 0)
      out->ram_per_box = false;
    else
      ok = fail_parse(p->c, "`%s` is invalid: expected \"command\" or \"box\"", key);
  } else if (strcmp(k, "ram_size") == 0) {
    gint64 n = -1;
    if (json_object_is_type(v, json_type_int)) {
      n = json_object_get_int64(v);
    } else if (json_object_is_type(v, json_type_string)) {
      const char *t = json_object_get_string(v);
      char *end = NULL;
      guint64 x = g_ascii_isdigit(t[0]) ? g_ascii_strtoull(t, &end, 10) : 0;
      guint64 mul = 0;
      if (end && (*end == '\0' || strcmp(end, "B") == 0)) mul = 1;
      else if (end && (strcmp(end, "K") == 0 || strcmp(end, "KiB") == 0)) mul = 1024;
      else if (end && (strcmp(end, "M") == 0 || strcmp(end, "MiB") == 0)) mul = 1024 * 1024;
      else if (end && (strcmp(end, "G") == 0 || strcmp(end, "GiB") == 0)) mul = 1024 * 1024 * 1024;
      if (mul && x <= G_MAXINT64 / mul) n = (gint64)(x * mul);
    }
    if (n < 4096 || n > ((gint64)1 << 40))
      ok = fail_parse(p->c, "`%s` is invalid: expected a size such as \"64M\" or \"1G\", "
                            "from 4K to 1T", key);
    else
      out->ram_max_bytes = (guint64)n;
  } else {
    gint64 n = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
    if (n < 16 || n > 10000000)
      ok = fail_parse(p->c, "`%s` is invalid: expected a whole number from 16 to 10000000", key);
    else
      out->ram_max_inodes = (unsigned)n;
  }
  g_free(key);
  return ok;
}

static bool check_process(Proc *p, json_object *tbl, BoxProcessSpec *out) {
  Ctx *c = p->c;
  if (!json_object_is_type(tbl, json_type_object))
    return fail_parse(c, "`%s` must be a table", p->key);
  json_object *command = NULL;
  json_object_object_foreach(tbl, k, val) {
    char *sub = key_join(p->key, k);
    bool ok = true;
    if (strcmp(k, "command") == 0) {
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
        ok = fail_spec(c,
                       "%s`network` is refused on `[agent]`: the agent always reaches the network "
                       "through the egress gateway, and only a `[tool.<name>]` or a stdio "
                       "`[mcp.<name>]` takes `network.contain_egress`",
                       p->prefix);
      else
        ok = check_network(p, val); /* validated; the launcher reads it from doc */
    } else if (p->is_agent && (strcmp(k, "packs") == 0 || strcmp(k, "code") == 0 ||
                               strcmp(k, "default_command") == 0)) {
      ok = fail_removed(c, sub, strcmp(k, "packs") == 0
                                    ? "a `[tool.<name>]` table for each program the Shell launches"
                                    : "`[agent] command`");
    } else if (strcmp(k, "read") == 0 || strcmp(k, "write") == 0) {
      char *repl = g_strdup_printf("`%s` in `[%s.filesystem]`", k, p->key);
      ok = fail_removed(c, sub, repl);
      g_free(repl);
    } else if (!p->is_agent && strcmp(k, "exec") == 0) {
      char *repl = g_strdup_printf("`%s command`", p->table);
      ok = fail_removed(c, sub, repl);
      g_free(repl);
    } else {
      ok = fail_parse(c, "unknown field `%s`", sub);
    }
    g_free(sub);
    if (!ok)
      return false;
  }
  if (!command)
    return fail_parse(c, "missing field `%s.command`", p->key);
  return check_command(p, command, out);
}

static void spec_init(BoxProcessSpec *s, const char *label) {
  s->label = g_strdup(label);
  s->env = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

static void spec_fill_lists(BoxProcessSpec *s) {
  char ***lists[] = {&s->fs.read, &s->fs.write, &s->fs.read_file,
                     &s->fs.write_file, &s->fs.exec, &s->fs.deny};
  for (size_t i = 0; i < G_N_ELEMENTS(lists); i++)
    if (!*lists[i])
      *lists[i] = empty_list();
}

static gint tool_cmp(gconstpointer a, gconstpointer b) {
  const BoxProcessSpec *x = *(BoxProcessSpec *const *)a;
  const BoxProcessSpec *y = *(BoxProcessSpec *const *)b;
  return strcmp(x->label, y->label);
}

static void tool_free(gpointer p) {
  spec_clear(p);
  g_free(p);
}

static bool check_tools(Ctx *c, json_object *v, const char *home, BoxConfig *cfg) {
  if (!json_object_is_type(v, json_type_object))
    return fail_parse(c, "`tool` must be a table");
  json_object_object_foreach(v, label, tbl) {
    char *key = key_join("tool", label);
    char *table = g_strdup_printf("[%s]", key);
    char *prefix = g_strdup_printf("invalid `%s` table: ", table);
    bool ok = true;
    if (component_problem(label))
      ok = fail_spec(c,
                     "invalid `[tool.%s]` table: the label must be one component of letters, "
                     "digits, '.', '_', or '-'",
                     label);
    if (ok) {
      BoxProcessSpec *s = g_new0(BoxProcessSpec, 1);
      spec_init(s, label);
      g_ptr_array_add(cfg->tools, s);
      Proc p = {c, false, key, prefix, table, home};
      ok = check_process(&p, tbl, s);
      spec_fill_lists(s);
    }
    g_free(prefix);
    g_free(table);
    g_free(key);
    if (!ok)
      return false;
  }
  g_ptr_array_sort(cfg->tools, tool_cmp);
  return true;
}

/* ---- [gateway] (boxfs) ----------------------------------------------------- */

static bool check_gateway(Ctx *c, json_object *v, BoxConfig *cfg) {
  if (!json_object_is_type(v, json_type_object))
    return fail_parse(c, "`gateway` must be a table");
  json_object_object_foreach(v, k, val) {
    if (strcmp(k, "allow_local") == 0) {
      char **list = NULL;
      if (!get_string_array(c, val, "gateway.allow_local", &list))
        return false;
      g_strfreev(cfg->gateway_allow_local);
      cfg->gateway_allow_local = list;
      for (char **e = list; *e; e++) {
        const char *why = box_gateway_allow_entry_problem(*e);
        if (why) {
          char *q = quote(*e);
          fail_parse(c, "`gateway.allow_local` entry %s is invalid: %s", q, why);
          g_free(q);
          return false;
        }
      }
    } else if (strcmp(k, "extra_ca") == 0) {
      char **list = NULL;
      if (!get_string_array(c, val, "gateway.extra_ca", &list))
        return false;
      char *dir = g_path_get_dirname(c->path);
      for (char **e = list; *e; e++) {
        if (!**e) {
          g_free(dir);
          g_strfreev(list);
          return fail_parse(c, "`gateway.extra_ca` has an empty entry");
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
      char *q = key_join("gateway", k);
      fail_parse(c, "unknown field `%s`", q);
      g_free(q);
      return false;
    }
  }
  return true;
}


/* ---- [egress.<name>] (§2.4) ------------------------------------------------ */

static void egress_free(gpointer p) {
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

static gint egress_cmp(gconstpointer a, gconstpointer b) {
  const BoxEgressRoute *x = *(BoxEgressRoute *const *)a;
  const BoxEgressRoute *y = *(BoxEgressRoute *const *)b;
  return strcmp(x->name, y->name);
}

static bool header_name_valid(const char *h) {
  if (!*h)
    return false;
  for (const char *p = h; *p; p++)
    if (!g_ascii_isalnum(*p) && !strchr("!#$%&'*+-.^_`|~", *p))
      return false;
  return true;
}

static bool has_control(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      return true;
  return false;
}

#define NO_SECRET_TEXT                                                                            \
  "an entry with no secret declares only a destination, which policy already decides; give it a " \
  "secret, or set protocol = \"mcp\" for a remote MCP server"

/* The `secret` table of route r.  pre is "invalid `[egress.<n>]` table: ". */
static bool check_egress_secret(Ctx *c, const char *key, const char *pre, json_object *v,
                                BoxEgressRoute *r) {
  if (!json_object_is_type(v, json_type_object))
    return fail_spec(c, "%s`secret` must be a table with `ref = \"env://NAME\"`; a literal secret is "
                        "refused, so that the configuration never holds one", pre);
  json_object *ref = NULL, *placement = NULL, *header = NULL, *prefix = NULL, *param = NULL,
              *inject = NULL, *pprefix = NULL;
  json_object_object_foreach(v, k, val) {
    char *sub = key_join(key, k);
    bool ok = true;
    if (strcmp(k, "ref") == 0) ref = val;
    else if (strcmp(k, "placement") == 0) placement = val;
    else if (strcmp(k, "header") == 0) header = val;
    else if (strcmp(k, "prefix") == 0) prefix = val;
    else if (strcmp(k, "param") == 0) param = val;
    else if (strcmp(k, "inject") == 0) inject = val;
    else if (strcmp(k, "phantom_prefix") == 0) pprefix = val;
    else if (strcmp(k, "phantom") == 0) ok = fail_removed(c, sub, "`secret.phantom_prefix`");
    else ok = fail_parse(c, "unknown field `%s`", sub);
    if (ok && !json_object_is_type(val, json_type_string))
      ok = fail_parse(c, "`%s` must be a string", sub);
    if (ok && !json_cstring(val))
      ok = fail_parse(c, "`%s` contains a NUL character", sub);
    g_free(sub);
    if (!ok)
      return false;
  }
  if (!ref)
    return fail_spec(c, "%s%s", pre, NO_SECRET_TEXT);
  const char *rs = json_object_get_string(ref);
  g_autofree char *rq = quote(rs);
  if (g_str_has_prefix(rs, "credsd://"))
    return fail_spec(c, "%s`secret.ref` %s: credsd:// credentials are not supported by this build "
                        "yet; use `env://NAME` or `aws://PROFILE`", pre, rq);
  if (g_str_has_prefix(rs, "aws://")) {
    const char *profile = rs + 6;
    bool bad = !*profile || strlen(profile) > 64;
    for (const char *p = profile; *p && !bad; p++)
      bad = !g_ascii_isalnum(*p) && !strchr("._-", *p);
    if (bad)
      return fail_spec(c, "%s`secret.ref` %s does not name a profile of letters, digits, '.', '_' "
                          "or '-'", pre, rq);
    const char *given = placement ? "placement" : header ? "header" : prefix ? "prefix"
                      : param ? "param" : inject ? "inject" : pprefix ? "phantom_prefix" : NULL;
    if (given)
      return fail_spec(c, "%s`secret.%s` does not apply to an aws:// route, whose requests are "
                          "re-signed with SigV4", pre, given);
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
    return fail_spec(c, "%s`secret.ref` %s is not a reference: write `env://NAME` or "
                        "`aws://PROFILE` (`credsd://NAME` is not supported by this build yet); a "
                        "literal secret is refused, so that the configuration never holds one",
                     pre, rq);
  const char *name = rs + 6;
  if (!*name || !env_name_valid(name))
    return fail_spec(c, "%s`secret.ref` %s does not name an environment variable; use letters, "
                        "digits and '_', not beginning with a digit", pre, rq);
  if (env_name_reserved(name) || strcmp(name, "HOME") == 0 || strcmp(name, "PATH") == 0)
    return fail_spec(c, "%s`secret.ref` %s names a variable the box sets itself, so its phantom "
                        "could not be given under that name", pre, rq);
  r->env_name = g_strdup(name);

  const char *pl = placement ? json_object_get_string(placement) : "header";
  if (strcmp(pl, "header") == 0) r->placement = BOX_GATEWAY_PLACE_HEADER;
  else if (strcmp(pl, "basic_auth") == 0) r->placement = BOX_GATEWAY_PLACE_BASIC_AUTH;
  else if (strcmp(pl, "query_param") == 0) r->placement = BOX_GATEWAY_PLACE_QUERY;
  else {
    g_autofree char *q = quote(pl);
    return fail_spec(c, "%s`secret.placement` %s is not one of \"header\", \"basic_auth\", "
                        "\"query_param\"", pre, q);
  }
  if (r->placement != BOX_GATEWAY_PLACE_HEADER && (header || prefix))
    return fail_spec(c, "%s`secret.%s` applies only to placement = \"header\"", pre,
                     header ? "header" : "prefix");
  const char *hs = header ? json_object_get_string(header) : "Authorization";
  if (!header_name_valid(hs)) {
    g_autofree char *q = quote(hs);
    return fail_spec(c, "%s`secret.header` %s is not a header name", pre, q);
  }
  static const char *const framing[] = { "host", "content-length", "transfer-encoding",
                                         "connection", "proxy-authorization", "te", "upgrade",
                                         "trailer", "keep-alive", "proxy-connection", NULL };
  for (int i = 0; framing[i]; i++)
    if (g_ascii_strcasecmp(hs, framing[i]) == 0) {
      g_autofree char *q = quote(hs);
      return fail_spec(c, "%s`secret.header` %s frames or routes the request and cannot carry a "
                          "secret", pre, q);
    }
  r->header = g_strdup(hs);
  const char *ps = prefix ? json_object_get_string(prefix)
                          : (g_ascii_strcasecmp(hs, "Authorization") == 0 ? "Bearer " : "");
  if (has_control(ps) || strchr(ps, '{') || strchr(ps, '}')) {
    g_autofree char *q = quote(ps);
    return fail_spec(c, "%s`secret.prefix` %s contains a control character or a brace", pre, q);
  }
  r->prefix = g_strdup(ps);
  if (r->placement == BOX_GATEWAY_PLACE_QUERY && !param)
    return fail_spec(c, "%s`secret.param` is required with placement = \"query_param\"", pre);
  if (r->placement != BOX_GATEWAY_PLACE_QUERY && param)
    return fail_spec(c, "%s`secret.param` is only valid with placement = \"query_param\"", pre);
  if (param) {
    const char *qs = json_object_get_string(param);
    bool bad = !*qs || has_control(qs);
    for (const char *p = qs; *p && !bad; p++)
      bad = strchr(" &=#?+%", *p) != NULL;
    if (bad) {
      g_autofree char *q = quote(qs);
      return fail_spec(c, "%s`secret.param` %s is not a query parameter name (no space, '&', '=', "
                          "'#', '?', '+' or '%%')", pre, q);
    }
    r->param = g_strdup(qs);
  }
  const char *is = inject ? json_object_get_string(inject) : "phantom";
  if (strcmp(is, "always") == 0)
    r->inject_always = true;
  else if (strcmp(is, "phantom") != 0) {
    g_autofree char *q = quote(is);
    return fail_spec(c, "%s`secret.inject` %s is not \"phantom\" or \"always\"", pre, q);
  }
  const char *pp = pprefix ? json_object_get_string(pprefix) : "strands_box_";
  size_t ppl = strlen(pp);
  bool bad = ppl < 1 || ppl > 64;
  for (const char *p = pp; *p && !bad; p++)
    bad = !g_ascii_isalnum(*p) && !strchr("-_.~", *p);
  if (bad) {
    g_autofree char *q = quote(pp);
    return fail_spec(c, "%s`secret.phantom_prefix` %s must be 1 to 64 characters of letters, "
                        "digits, '-', '_', '.' or '~'", pre, q);
  }
  r->phantom_prefix = g_strdup(pp);
  return true;
}

static bool check_egress(Ctx *c, json_object *v, BoxConfig *cfg) {
  if (!json_object_is_type(v, json_type_object))
    return fail_parse(c, "`egress` must be a table");
  json_object_object_foreach(v, name, tbl) {
    g_autofree char *key = key_join("egress", name);
    g_autofree char *pre = g_strdup_printf("invalid `[%s]` table: ", key);
    if (component_problem(name))
      return fail_spec(c, "invalid `[egress.%s]` table: the name must be one component of "
                          "letters, digits, '.', '_', or '-'", name);
    if (!json_object_is_type(tbl, json_type_object))
      return fail_parse(c, "`%s` must be a table", key);
    BoxEgressRoute *r = g_new0(BoxEgressRoute, 1);
    r->name = g_strdup(name);
    g_ptr_array_add(cfg->egress, r);
    json_object *dest = NULL, *secret = NULL;
    json_object_object_foreach(tbl, k, val) {
      g_autofree char *sub = key_join(key, k);
      if (strcmp(k, "destinations") == 0) {
        dest = val;
      } else if (strcmp(k, "secret") == 0) {
        secret = val;
      } else if (strcmp(k, "protocol") == 0) {
        const char *pv = NULL;
        if (!get_string(c, val, sub, &pv))
          return false;
        if (strcmp(pv, "mcp") == 0) {
          g_autofree char *repl = g_strdup_printf("`[mcp.%s] type = \"http\"`", name);
          return fail_removed(c, sub, repl);
        }
        if (strcmp(pv, "http") != 0) {
          g_autofree char *q = quote(pv);
          return fail_spec(c, "%s`protocol` %s is not \"http\"", pre, q);
        }
      } else {
        return fail_parse(c, "unknown field `%s`", sub);
      }
    }
    if (!dest)
      return fail_parse(c, "missing field `%s.destinations`", key);
    g_autofree char *dkey = key_join(key, "destinations");
    if (!get_string_array(c, dest, dkey, &r->destinations))
      return false;
    if (!r->destinations[0])
      return fail_spec(c, "%s`destinations` is empty; name the hosts the secret is for", pre);
    for (char **d = r->destinations; *d; d++) {
      const char *why = box_gateway_destination_problem(*d);
      g_autofree char *q = quote(*d);
      if (why)
        return fail_spec(c, "%s`destinations` entry %s is invalid: %s", pre, q, why);
      for (char **e = r->destinations; e < d; e++)
        if (box_gateway_destinations_overlap(*e, *d)) {
          g_autofree char *qe = quote(*e);
          return fail_spec(c, "%s`destinations` entry %s overlaps %s: a request must meet one "
                              "secret at most", pre, q, qe);
        }
      for (guint i = 0; i + 1 < cfg->egress->len; i++) {
        BoxEgressRoute *o = g_ptr_array_index(cfg->egress, i);
        for (char **e = o->destinations; *e; e++)
          if (box_gateway_destinations_overlap(*e, *d)) {
            g_autofree char *qe = quote(*e);
            return fail_spec(c, "%s`destinations` entry %s overlaps %s of `[egress.%s]`: a request "
                                "must meet one secret at most", pre, q, qe, o->name);
          }
      }
    }
    if (!secret)
      return fail_spec(c, "%s%s", pre, NO_SECRET_TEXT);
    g_autofree char *skey = key_join(key, "secret");
    if (!check_egress_secret(c, skey, pre, secret, r))
      return false;
    if (r->aws) {
      /* Service and region come from the host (spec/runtime.md §7). */
      for (char **d = r->destinations; *d; d++) {
        g_autofree char *host = g_ascii_strdown(*d, (gssize)strcspn(*d, "/"));
        char *colon = strrchr(host, ':');
        if (colon && !strchr(host, ']'))
          *colon = '\0';
        size_t hl = strlen(host);
        if (hl && host[hl - 1] == '.')
          host[hl - 1] = '\0';
        g_autofree char *service = NULL, *region = NULL;
        bool scoped = g_str_has_prefix(host, "*.")
                          ? g_str_has_suffix(host, ".amazonaws.com") || g_str_has_suffix(host, ".api.aws")
                          : box_gateway_aws_scope(host, &service, &region);
        if (!scoped) {
          g_autofree char *q = quote(*d);
          return fail_spec(c, "%s`destinations` entry %s is not below amazonaws.com or api.aws, "
                              "so no SigV4 service and region can be read from it", pre, q);
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
        return fail_spec(c, "invalid `[egress.%s]` table: `secret.ref` env://%s names a variable "
                            "the aws:// route `[egress.%s]` gives its phantom under",
                         env->name, env->env_name, aws->name);
      if (o->aws && r->aws)
        return fail_spec(c, "%sone aws:// route per box: the phantoms AWS_ACCESS_KEY_ID and "
                            "AWS_SECRET_ACCESS_KEY are `[egress.%s]`'s already", pre, o->name);
      if (strcmp(o->env_name, r->env_name) == 0)
        return fail_spec(c, "%s`secret.ref` env://%s is already the secret of `[egress.%s]`, and "
                            "one variable holds one phantom", pre, r->env_name, o->name);
    }
  }
  g_ptr_array_sort(cfg->egress, egress_cmp);
  return true;
}

/* ---- top level ----------------------------------------------------------- */

static bool validate(Ctx *c, json_object *doc, const char *home, BoxConfig *cfg) {
  json_object *name = NULL, *box_dir = NULL, *policy = NULL, *agent = NULL, *tool = NULL;
  json_object *gateway = NULL, *egress = NULL;
  json_object_object_foreach(doc, k, val) {
    if (strcmp(k, "name") == 0)
      name = val;
    else if (strcmp(k, "box_dir") == 0)
      box_dir = val;
    else if (strcmp(k, "policy") == 0)
      policy = val;
    else if (strcmp(k, "agent") == 0)
      agent = val;
    else if (strcmp(k, "tool") == 0)
      tool = val;
    else if (strcmp(k, "gateway") == 0)
      gateway = val;
    else if (strcmp(k, "filesystem") == 0)
      return fail_removed(c, "filesystem", "`[agent.filesystem]`");
    else if (strcmp(k, "workspace") == 0)
      return fail_removed(c, "workspace", "`[agent] workspace`");
    else if (strcmp(k, "env") == 0)
      return fail_removed(c, "env", "`[agent.env]`");
    else if (strcmp(k, "egress") == 0)
      egress = val;
    else if (strcmp(k, "mcp") == 0 || strcmp(k, "telemetry") == 0)
      return fail_parse(c, "`[%s.<name>]` tables are not supported by this build yet", k);
    else if (strcmp(k, "containment") == 0)
      return fail_parse(c, "`[containment]` is not supported by this build yet");
    else {
      char *q = key_join(NULL, k);
      fail_parse(c, "unknown field `%s`", q);
      g_free(q);
      return false;
    }
  }

  const char *s = NULL;
  if (!name)
    return fail_parse(c, "missing field `name`");
  if (!get_string(c, name, "name", &s))
    return false;
  const char *why = component_problem(s);
  if (why) {
    char *q = quote(s);
    fail_spec(c,
              "box name %s is invalid: %s; use one component of letters, digits, '.', '_', or '-'",
              q, why);
    g_free(q);
    return false;
  }
  cfg->name = g_strdup(s);

  if (!box_dir)
    return fail_parse(c, "missing field `box_dir`");
  if (!get_string(c, box_dir, "box_dir", &s))
    return false;
  if (s[0] != '/')
    return fail_spec(c, "invalid Box configuration: `box_dir` must be absolute: %s", s);
  cfg->box_dir = g_strdup(s);

  if (policy) {
    if (!get_string(c, policy, "policy", &s))
      return false;
    if (!*s)
      return fail_parse(c, "`policy` is empty; name a policy file, or leave `policy` out");
    if (s[0] == '/') {
      cfg->policy = g_strdup(s);
    } else {
      char *dir = g_path_get_dirname(c->path);
      cfg->policy = g_build_filename(dir, s, NULL);
      g_free(dir);
    }
  }

  if (!agent)
    return fail_spec(c, "no workload to run: the configuration has no `[agent]` table, and a "
                        "trailing argv appends to `[agent] command` rather than replacing it");
  Proc p = {c, true, "agent", "invalid `[agent]` table: ", "[agent]", home};
  spec_init(&cfg->agent, "agent");
  bool ok = check_process(&p, agent, &cfg->agent);
  spec_fill_lists(&cfg->agent);
  if (!ok)
    return false;

  if (tool && !check_tools(c, tool, home, cfg))
    return false;
  if (gateway && !check_gateway(c, gateway, cfg))
    return false;
  if (egress && !check_egress(c, egress, cfg))
    return false;
  return true;
}

static char *read_config(const char *file, char **canonical, GError **error) {
  *canonical = NULL;
  if (!file || !*file) {
    g_set_error(error, config_error_quark(), CONFIG_ERROR_READ,
                "cannot read config file: no path given");
    return NULL;
  }
  char *canon = realpath(file, NULL);
  if (!canon) {
    int e = errno;
    g_set_error(error, config_error_quark(), CONFIG_ERROR_READ, "cannot read config file %s: %s",
                file, g_strerror(e));
    return NULL;
  }
  /* O_NONBLOCK: a FIFO must not hang the load; it is refused below. */
  int fd = open(canon, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  const char *why = NULL;
  int e = 0;
  if (fd < 0) {
    e = errno;
  } else if (fstat(fd, &st) != 0) {
    e = errno;
  } else if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  } else if (st.st_size > CONFIG_MAX_BYTES) {
    why = "it is larger than 4 MiB";
  }
  GString *text = NULL;
  if (!e && !why) {
    text = g_string_sized_new((gsize)st.st_size + 1);
    char buf[65536];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0) {
        e = errno;
        break;
      }
      if (n == 0)
        break;
      g_string_append_len(text, buf, n);
      if (text->len > CONFIG_MAX_BYTES) {
        why = "it is larger than 4 MiB";
        break;
      }
    }
    if (!e && !why && memchr(text->str, '\0', text->len))
      why = "it contains a NUL byte";
  }
  if (fd >= 0)
    close(fd);
  if (e || why) {
    g_set_error(error, config_error_quark(), CONFIG_ERROR_READ, "cannot read config file %s: %s",
                canon, why ? why : g_strerror(e));
    if (text)
      g_string_free(text, TRUE);
    free(canon);
    return NULL;
  }
  *canonical = g_strdup(canon);
  free(canon);
  return g_string_free(text, FALSE);
}

BoxConfig *box_config_load(const char *file, const char *operator_home, GError **error) {
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  char *canon = NULL;
  char *text = read_config(file, &canon, error);
  if (!text)
    return NULL;
  Ctx c = {canon, error};
  char *why = NULL;
  json_object *doc = box_toml_parse(text, &why);
  g_free(text);
  if (!doc) {
    fail_parse(&c, "%s", why ? why : "line 0, column 0: the TOML parser failed");
    g_free(why);
    g_free(canon);
    return NULL;
  }
  const char *home = operator_home && *operator_home ? operator_home : g_get_home_dir();
  BoxConfig *cfg = g_new0(BoxConfig, 1);
  cfg->path = canon;
  cfg->doc = doc;
  cfg->tools = g_ptr_array_new_with_free_func(tool_free);
  cfg->gateway_allow_local = g_new0(char *, 1);
  cfg->gateway_extra_ca = g_new0(char *, 1);
  cfg->egress = g_ptr_array_new_with_free_func(egress_free);
  if (!validate(&c, doc, home, cfg)) {
    box_config_free(cfg);
    return NULL;
  }
  return cfg;
}

void box_config_free(BoxConfig *config) {
  if (!config)
    return;
  g_free(config->path);
  g_free(config->name);
  g_free(config->box_dir);
  g_free(config->policy);
  spec_clear(&config->agent);
  if (config->tools)
    g_ptr_array_unref(config->tools);
  if (config->doc)
    json_object_put(config->doc);
  g_strfreev(config->gateway_allow_local);
  g_strfreev(config->gateway_extra_ca);
  if (config->egress)
    g_ptr_array_unref(config->egress);
  g_free(config);
}
