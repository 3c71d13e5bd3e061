/* config_telemetry.c — `[telemetry.<label>]` targets (spec/runtime.md §2.6):
 * their shape and their `include` words, at parse time.  A destination is
 * judged when the run opens it (§2.7: after `box_dir` exists), by
 * telemetry/. */
#include "box/config-private.h"

#include <string.h>

static gint target_cmp(gconstpointer a, gconstpointer b)
{
  return strcmp((*(BoxTelemetryTarget *const *)a)->label, (*(BoxTelemetryTarget *const *)b)->label);
}

/* The include list: known words, none twice, not empty (§2.6). */
static bool take_include(ConfigCtx *c, const char *key, const char *label, json_object *v,
                         unsigned *include)
{
  g_auto(GStrv) words = NULL;
  if (!config_get_string_array(c, v, key, &words)) return false;
  if (!words[0])
    return config_fail_spec(c,
                            "invalid `[telemetry.%s]` target: the target names no signal, so "
                            "nothing would reach it; write one or more of: " BOX_TELEMETRY_WORDS,
                            label);
  *include = 0;
  for (char **w = words; *w; w++) {
    unsigned bit = box_telemetry_signal_of(*w);
    g_autofree char *q = config_quote(*w);
    if (!bit)
      return config_fail_spec(c,
                              "invalid `[telemetry.%s]` target: %s is not a signal; write one or "
                              "more of: " BOX_TELEMETRY_WORDS,
                              label, q);
    if (*include & bit)
      return config_fail_spec(c, "invalid `[telemetry.%s]` target: the target names %s twice",
                              label, *w);
    *include |= bit;
  }
  return true;
}

/* secret = { ref = "env://NAME", header = "…" }: an otlp target's only. */
static bool take_secret(ConfigCtx *c, const char *key, BoxTelemetryTarget *t, json_object *v)
{
  if (!config_need_table(c, v, key)) return false;
  json_object *ref = NULL, *header = NULL;
  const ConfigField fields[] = { { "ref", &ref }, { "header", &header }, { NULL, NULL } };
  json_object_object_foreach (v, k, val) {
    if (!config_take_field(fields, k, val)) {
      g_autofree char *sub = config_key_join(key, k);
      return config_fail_parse(c, "unknown field `%s`", sub);
    }
  }
  const char *s = NULL;
  if (!ref) return config_fail_parse(c, "missing field `%s.ref`", key);
  g_autofree char *ref_key = config_key_join(key, "ref");
  if (!config_get_string(c, ref, ref_key, &s)) return false;
  if (!g_str_has_prefix(s, "env://") || !config_env_name_valid(s + 6)) {
    g_autofree char *q = config_quote(s);
    return config_fail_spec(c,
                            "invalid `[telemetry.%s]` target: `secret.ref` %s is not a reference: "
                            "write `env://NAME`; a literal secret is refused",
                            t->label, q);
  }
  t->secret_env = g_strdup(s + 6);
  if (header) {
    g_autofree char *header_key = config_key_join(key, "header");
    if (!config_get_string(c, header, header_key, &s)) return false;
    if (!*s || strpbrk(s, ": \t\r\n"))
      return config_fail_spec(
        c, "invalid `[telemetry.%s]` target: `secret.header` is not a header name", t->label);
    t->secret_header = g_strdup(s);
  }
  return true;
}

/* The value of FIELD, one of a and b (fits: the target may take it at
 * all); NULL after saying why. */
static const char *one_of(ConfigCtx *c, const char *key, const char *label, const char *field,
                          json_object *v, const char *a, const char *b, const char *tail, bool fits)
{
  g_autofree char *field_key = config_key_join(key, field);
  const char *s = NULL;
  if (!config_get_string(c, v, field_key, &s)) return NULL;
  if (fits && (strcmp(s, a) == 0 || strcmp(s, b) == 0)) return s;
  g_autofree char *q = config_quote(s);
  config_fail_spec(c, "invalid `[telemetry.%s]` target: `%s` %s is not \"%s\" or \"%s\"%s", label,
                   field, q, a, b, tail);
  return NULL;
}

static bool check_target(ConfigCtx *c, const char *key, BoxTelemetryTarget *t, json_object *tbl)
{
  json_object *kind = NULL, *dest = NULL, *include = NULL, *secret = NULL, *protocol = NULL;
  const ConfigField fields[] = { { "kind", &kind },         { "destination", &dest },
                                 { "include", &include },   { "secret", &secret },
                                 { "protocol", &protocol }, { NULL, NULL } };
  json_object_object_foreach (tbl, k, val) {
    if (config_take_field(fields, k, val)) continue;
    g_autofree char *sub = config_key_join(key, k);
    if (strcmp(k, "signals") == 0) return config_fail_removed(c, sub, "`include`");
    return config_fail_parse(c, "unknown field `%s`", sub);
  }
  const char *s = NULL;
  if (!kind) return config_fail_parse(c, "missing field `%s.kind`", key);
  if (!(s = one_of(c, key, t->label, "kind", kind, "file", "otlp", "", true))) return false;
  t->otlp = strcmp(s, "otlp") == 0;
  if (!dest) return config_fail_parse(c, "missing field `%s.destination`", key);
  g_autofree char *dest_key = config_key_join(key, "destination");
  if (!config_get_string(c, dest, dest_key, &s)) return false;
  t->destination = g_strdup(s);
  g_autofree char *include_key = config_key_join(key, "include");
  if (include && !take_include(c, include_key, t->label, include, &t->include)) return false;
  if (protocol) { /* boxfs: OTLP/HTTP's two encodings, JSON unless asked */
    s = one_of(c, key, t->label, "protocol", protocol, "http/json", "http/protobuf",
               " of an otlp target", t->otlp);
    if (!s) return false;
    t->protobuf = strcmp(s, "http/protobuf") == 0;
  }
  if (!secret) return true;
  if (!t->otlp)
    return config_fail_spec(c,
                            "invalid `[telemetry.%s]` target: a file target takes no `secret`; "
                            "only an otlp receiver is sent one",
                            t->label);
  g_autofree char *secret_key = config_key_join(key, "secret");
  return take_secret(c, secret_key, t, secret);
}

bool config_check_telemetry(ConfigCtx *c, json_object *v, BoxConfig *cfg)
{
  if (!config_need_table(c, v, "telemetry")) return false;
  json_object_object_foreach (v, label, tbl) {
    if (config_component_problem(label))
      return config_fail_spec(c,
                              "invalid `[telemetry.%s]` target: the label must be one component "
                              "of letters, digits, '.', '_', or '-'",
                              label);
    g_autofree char *key = config_key_join("telemetry", label);
    if (!config_need_table(c, tbl, key)) return false;
    BoxTelemetryTarget *t = g_new0(BoxTelemetryTarget, 1);
    t->label = g_strdup(label);
    t->include = BOX_TELEMETRY_ALL;
    g_ptr_array_add(cfg->telemetry, t);
    if (!check_target(c, key, t, tbl)) return false;
  }
  g_ptr_array_sort(cfg->telemetry, target_cmp);
  return true;
}
