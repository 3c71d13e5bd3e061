/* schema.c — per-tool action names and schema fragments (spec/policy.md,
 * "Per-tool action").  A tool's arguments are lowered to the base types a
 * rule compares a call's bare values with: an enum is its values' type, any
 * JSON number is Long, a ["X","null"] union is X.  An argument whose type
 * cannot be lowered (no type, a union of two real types) is left out of the
 * record rather than guessed. */
#include "mcp/schema.h"

#include <string.h>

static const char *const reserved[] = { "true", "false", "if",  "then",    "else", "in",
                                        "is",   "like",  "has", "__cedar", NULL };

char *mcp_action_namespace(const char *server)
{
  GString *s = g_string_new(NULL);
  if (!*server || g_ascii_isdigit(*server)) g_string_append_c(s, '_');
  for (const char *p = server; *p; p++)
    g_string_append_c(s, g_ascii_isalnum(*p) || *p == '_' ? *p : '_');
  if (g_strv_contains(reserved, s->str)) g_string_append_c(s, '_');
  return g_string_free(s, FALSE);
}

static bool is_identifier(const char *s)
{
  if (!*s || g_ascii_isdigit(*s) || g_strv_contains(reserved, s)) return false;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_') return false;
  return true;
}

static void append_quoted(GString *out, const char *s)
{
  g_string_append_c(out, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_printf(out, "\\%c", *p);
    else if (*p < 0x20)
      g_string_append_printf(out, "\\u{%x}", *p);
    else
      g_string_append_c(out, (char)*p);
  }
  g_string_append_c(out, '"');
}

/* The one JSON type a schema names: its "type" (an array less "null"),
 * else its enum's values' type. */
static const char *json_type_of(json_object *schema)
{
  json_object *t = NULL, *e = NULL;
  if (json_object_object_get_ex(schema, "type", &t)) {
    if (json_object_is_type(t, json_type_string)) return json_object_get_string(t);
    if (!json_object_is_type(t, json_type_array)) return NULL;
    const char *one = NULL;
    for (size_t i = 0; i < json_object_array_length(t); i++) {
      const char *n = json_object_get_string(json_object_array_get_idx(t, i));
      if (!n || strcmp(n, "null") == 0) continue;
      if (one) return NULL;
      one = n;
    }
    return one;
  }
  if (json_object_object_get_ex(schema, "enum", &e) && json_object_is_type(e, json_type_array) &&
      json_object_array_length(e) > 0) {
    switch (json_object_get_type(json_object_array_get_idx(e, 0))) {
    case json_type_string: return "string";
    case json_type_int:
    case json_type_double: return "number";
    case json_type_boolean: return "boolean";
    default: return NULL;
    }
  }
  return NULL;
}

static bool append_type(GString *out, json_object *schema, int depth);

static gint str_cmp(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A record of an object schema's properties, sorted by name so that a
 * server's order never changes the text. */
static void append_record(GString *out, json_object *schema, int depth)
{
  json_object *props = NULL, *req = NULL;
  json_object_object_get_ex(schema, "required", &req);
  g_string_append_c(out, '{');
  if (!json_object_object_get_ex(schema, "properties", &props) ||
      !json_object_is_type(props, json_type_object)) {
    g_string_append_c(out, '}');
    return;
  }
  GPtrArray *names = g_ptr_array_new();
  json_object_object_foreach (props, k, v) {
    (void)v;
    g_ptr_array_add(names, k);
  }
  g_ptr_array_sort(names, str_cmp);
  bool first = true;
  for (guint i = 0; i < names->len; i++) {
    const char *k = g_ptr_array_index(names, i);
    GString *t = g_string_new(NULL);
    if (append_type(t, json_object_object_get(props, k), depth + 1)) {
      bool required = false;
      for (size_t j = 0;
           req && json_object_is_type(req, json_type_array) && j < json_object_array_length(req);
           j++)
        required |= g_strcmp0(json_object_get_string(json_object_array_get_idx(req, j)), k) == 0;
      g_string_append(out, first ? " " : ", ");
      first = false;
      if (is_identifier(k))
        g_string_append(out, k);
      else
        append_quoted(out, k);
      g_string_append_printf(out, "%s: %s", required ? "" : "?", t->str);
    }
    g_string_free(t, TRUE);
  }
  g_ptr_array_free(names, TRUE);
  g_string_append(out, first ? "}" : " }");
}

/* Nesting deeper than this is a schema built to exhaust the generator. */
#define MAX_DEPTH 32

static bool append_type(GString *out, json_object *schema, int depth)
{
  if (depth > MAX_DEPTH || !json_object_is_type(schema, json_type_object)) return false;
  const char *t = json_type_of(schema);
  if (!t) return false;
  if (strcmp(t, "string") == 0) {
    g_string_append(out, "String");
  } else if (strcmp(t, "integer") == 0 || strcmp(t, "number") == 0) {
    g_string_append(out, "Long");
  } else if (strcmp(t, "boolean") == 0) {
    g_string_append(out, "Bool");
  } else if (strcmp(t, "array") == 0) {
    json_object *items = NULL;
    GString *inner = g_string_new(NULL);
    bool ok =
      json_object_object_get_ex(schema, "items", &items) && append_type(inner, items, depth + 1);
    if (ok) g_string_append_printf(out, "Set<%s>", inner->str);
    g_string_free(inner, TRUE);
    return ok;
  } else if (strcmp(t, "object") == 0) {
    append_record(out, schema, depth);
  } else {
    return false;
  }
  return true;
}

char *mcp_schema_fragment(const char *server, json_object *tools_result, McpActionFn fn, void *data,
                          char **why)
{
  *why = NULL;
  json_object *tools = NULL;
  if (!json_object_object_get_ex(tools_result, "tools", &tools) ||
      !json_object_is_type(tools, json_type_array)) {
    *why = g_strdup("the tools/list result holds no `tools` array");
    return NULL;
  }
  g_autofree char *ns = mcp_action_namespace(server);
  GString *out = g_string_new(NULL);
  g_string_append_printf(out, "namespace %s {\n", ns);
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (size_t i = 0; i < json_object_array_length(tools); i++) {
    json_object *tool = json_object_array_get_idx(tools, i), *name = NULL, *input = NULL;
    if (!json_object_object_get_ex(tool, "name", &name) ||
        !json_object_is_type(name, json_type_string) || !*json_object_get_string(name)) {
      *why = g_strdup_printf("tool %zu of the tools/list result has no name", i);
      break;
    }
    const char *n = json_object_get_string(name);
    if (!g_hash_table_add(seen, (gpointer)n)) {
      GString *q = g_string_new(NULL);
      append_quoted(q, n);
      *why = g_strdup_printf("the tools/list result names the tool %s twice", q->str);
      g_string_free(q, TRUE);
      break;
    }
    GString *term = g_string_new(NULL), *record = g_string_new(NULL);
    append_quoted(term, n);
    json_object_object_get_ex(tool, "inputSchema", &input);
    if (!input || !append_type(record, input, 0)) g_string_assign(record, "{}");
    g_string_append_printf(out,
                           "  action %s appliesTo { principal: Box::Agent, resource: "
                           "Box::Resource,\n    context: { input: %s } };\n",
                           term->str, record->str);
    if (fn) {
      /* "{ a: Long }" -> "a: Long"; "{}" -> "" */
      g_autofree char *fields =
        record->len > 2 ? g_strndup(record->str + 2, record->len - 4) : g_strdup("");
      g_string_prepend(term, "::Action::");
      g_string_prepend(term, ns);
      fn(data, term->str, n, fields);
    }
    g_string_free(term, TRUE);
    g_string_free(record, TRUE);
  }
  g_hash_table_destroy(seen);
  if (*why) {
    g_string_free(out, TRUE);
    return NULL;
  }
  g_string_append(out, "}\n");
  return g_string_free(out, FALSE);
}
