/* config_values.c — reading one value of box.toml: the messages that
 * refuse one (config.c says which class of error reads how), quoting of
 * keys and values, typed getters, and the rules for names. */
#include "box/config-private.h"
#include "tools/tools.h"

#include <stdarg.h>
#include <string.h>

#define NAME_MAX_BYTES 32

/* ---- messages ------------------------------------------------------------ */

bool config_fail(ConfigCtx *c, BoxConfigError code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *text = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (code == BOX_CONFIG_ERROR_PARSE)
    g_set_error(c->error, BOX_CONFIG_ERROR, code, "cannot parse config file %s: %s", c->path, text);
  else
    g_set_error(c->error, BOX_CONFIG_ERROR, code, "%s (in %s)", text, c->path);
  return false;
}

/* The spec's removed-key text; it begins with the file's path. */
bool config_fail_removed(ConfigCtx *c, const char *key, const char *replacement)
{
  g_set_error(c->error, BOX_CONFIG_ERROR, BOX_CONFIG_ERROR_INVALID,
              "%s carries `%s`, which this build does not read; write %s instead. Edit the "
              "configuration, or select an empty `box_dir` to rebuild a stored record",
              c->path, key, replacement);
  return false;
}

/* A double-quoted, escaped spelling of S (like Rust's {:?} of a str). */
char *config_quote(const char *s)
{
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

static bool is_bare_key(const char *k)
{
  if (!*k) return false;
  for (const char *p = k; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_' && *p != '-') return false;
  return true;
}

/* Dotted key path: PARENT.CHILD, CHILD quoted when it is not a bare key. */
char *config_key_join(const char *parent, const char *child)
{
  char *c = is_bare_key(child) ? g_strdup(child) : config_quote(child);
  char *out = parent && *parent ? g_strconcat(parent, ".", c, NULL) : g_strdup(c);
  g_free(c);
  return out;
}

/* ---- json helpers -------------------------------------------------------- */

bool config_take_field(const ConfigField *fields, const char *k, json_object *val)
{
  for (const ConfigField *f = fields; f->name; f++)
    if (strcmp(k, f->name) == 0) {
      *f->slot = val;
      return true;
    }
  return false;
}

/* A string value without embedded NUL bytes, or NULL. */
const char *config_json_cstring(json_object *v)
{
  if (!json_object_is_type(v, json_type_string)) return NULL;
  const char *s = json_object_get_string(v);
  if ((size_t)json_object_get_string_len(v) != strlen(s)) return NULL;
  return s;
}

bool config_need_table(ConfigCtx *c, json_object *v, const char *key)
{
  return json_object_is_type(v, json_type_object) ||
         config_fail_parse(c, "`%s` must be a table", key);
}

bool config_get_string(ConfigCtx *c, json_object *v, const char *key, const char **out)
{
  if (!json_object_is_type(v, json_type_string))
    return config_fail_parse(c, "`%s` must be a string", key);
  const char *s = config_json_cstring(v);
  if (!s) return config_fail_parse(c, "`%s` contains a NUL character", key);
  *out = s;
  return true;
}

/* A NULL-terminated copy of an array of strings. */
bool config_get_string_array(ConfigCtx *c, json_object *v, const char *key, char ***out)
{
  if (!json_object_is_type(v, json_type_array))
    return config_fail_parse(c, "`%s` must be an array of strings", key);
  size_t n = json_object_array_length(v);
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(v, i);
    if (!json_object_is_type(e, json_type_string))
      return config_fail_parse(c, "`%s` must be an array of strings", key);
    if (!config_json_cstring(e))
      return config_fail_parse(c, "`%s` element %zu contains a NUL character", key, i);
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
const char *config_component_problem(const char *name)
{
  size_t len = strlen(name);
  if (len == 0) return "it is empty";
  if (len > NAME_MAX_BYTES) return "it is longer than 32 bytes";
  if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return "`.` and `..` name no component";
  for (const char *p = name; *p; p++) {
    if (*p == '/') return "it contains `/`";
    if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-')
      return "it contains a character outside letters, digits, '.', '_', and '-'";
  }
  return NULL;
}

bool config_env_name_valid(const char *n)
{
  if (!(g_ascii_isalpha(n[0]) || n[0] == '_')) return false;
  for (const char *p = n + 1; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_') return false;
  return true;
}

bool config_env_name_reserved(const char *n)
{
  return box_tools_env_name_reserved(n);
}

bool config_named_table(ConfigCtx *c, const char *kind, const char *name, json_object *tbl,
                        const char *key)
{
  if (config_component_problem(name))
    return config_fail_spec(c,
                            "invalid `[%s.%s]` table: the name must be one component of letters, "
                            "digits, '.', '_', or '-'",
                            kind, name);
  return config_need_table(c, tbl, key);
}
