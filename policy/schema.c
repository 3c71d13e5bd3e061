/* schema.c — the closed Box schema (spec/policy.md §4): the actions, their
 * input and output records, the enumerated entities, and a request's
 * input checked against them. */
#include "policy/schema.h"

#include "policy/policy.h"

#include <glib.h>
#include <string.h>

static const FieldDecl fs_in[] = { { "path", FT_STRING, false }, { "operation", FT_ENUM, false } };
static const FieldDecl fs_out[] = { { "result", FT_ENUM, false } };
static const FieldDecl net_in[] = { { "host", FT_STRING, false },
                                    { "ip", FT_STRING, true },
                                    { "port", FT_LONG, false } };
static const FieldDecl http_in[] = {
  { "host", FT_STRING, false }, { "port", FT_LONG, false },       { "method", FT_STRING, false },
  { "path", FT_STRING, false }, { "body_bytes", FT_LONG, false }, { "intercepted", FT_BOOL, false }
};
static const FieldDecl status_out[] = { { "status", FT_LONG, false } };
static const FieldDecl exec_in[] = {
  { "command", FT_STRING, false }, { "program", FT_STRING, false }, { "arg1", FT_STRING, true },
  { "arg2", FT_STRING, true },     { "arg_count", FT_LONG, false }, { "cwd", FT_STRING, false }
};
static const FieldDecl spawn_in[] = {
  { "command", FT_STRING, false },      { "program", FT_STRING, false },
  { "arg1", FT_STRING, true },          { "arg2", FT_STRING, true },
  { "arg_count", FT_LONG, false },      { "cwd", FT_STRING, false },
  { "program_path", FT_STRING, false }, { "credential_reads", FT_SET_STRING, true }
};
static const FieldDecl mcp_in[] = { { "server", FT_STRING, false },
                                    { "method", FT_STRING, false },
                                    { "tool", FT_STRING, true },
                                    { "prompt", FT_STRING, true },
                                    { "uri", FT_STRING, true } };

#define N(a) (sizeof(a) / sizeof((a)[0]))
ActionDecl policy_actions[POLICY_MAX_ACTIONS] = {
  { "fs:read", "Box::FsReadOperation", fs_in, N(fs_in), fs_out, N(fs_out), NULL, NULL, NULL,
    false },
  { "fs:write", "Box::FsWriteOperation", fs_in, N(fs_in), fs_out, N(fs_out), NULL, NULL, NULL,
    false },
  { "fs:delete", "Box::FsDeleteOperation", fs_in, N(fs_in), fs_out, N(fs_out), NULL, NULL, NULL,
    false },
  { "fs:move", "Box::FsMoveOperation", fs_in, N(fs_in), fs_out, N(fs_out), NULL, NULL, NULL,
    false },
  { "fs:other", "Box::FsOtherOperation", fs_in, N(fs_in), fs_out, N(fs_out), NULL, NULL, NULL,
    false },
  { "net:connect", NULL, net_in, N(net_in), NULL, 0, NULL, NULL, NULL, false },
  { "http:request", NULL, http_in, N(http_in), status_out, N(status_out), NULL, NULL, NULL, false },
  { "shell:exec", NULL, exec_in, N(exec_in), status_out, N(status_out), NULL, NULL, NULL, false },
  { "shell:spawn", NULL, spawn_in, N(spawn_in), status_out, N(status_out), NULL, NULL, NULL,
    false },
  { "mcp:call", NULL, mcp_in, N(mcp_in), NULL, 0, NULL, NULL, NULL, false },
};
size_t policy_actions_count = POLICY_BOX_ACTIONS;
#define FS_OTHER 4

/* Registrations and declared namespaces: few, and never in a decision's path. */
static GMutex registry_lock;
static GHashTable *declared; /* "<ns>::Action" */

const char *policy_action_etype(int action)
{
  return policy_actions[action].etype ? policy_actions[action].etype : "Box::Action";
}

const char *policy_action_id(int action)
{
  return policy_actions[action].id ? policy_actions[action].id : policy_actions[action].term;
}

int policy_action_lookup(const char *etype, const char *id, size_t len)
{
  size_t n = policy_nactions;
  for (size_t i = 0; i < n; i++) {
    const char *aid = policy_action_id((int)i);
    if (strcmp(policy_action_etype((int)i), etype) == 0 && strlen(aid) == len &&
        memcmp(aid, id, len) == 0)
      return (int)i;
  }
  return -1;
}

void box_policy_declare_namespace(const char *ns)
{
  g_mutex_lock(&registry_lock);
  if (!declared) declared = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_add(declared, g_strconcat(ns, "::Action", NULL));
  g_mutex_unlock(&registry_lock);
}

bool policy_namespace_pending(const char *etype)
{
  g_mutex_lock(&registry_lock);
  bool yes = declared && g_hash_table_contains(declared, etype);
  g_mutex_unlock(&registry_lock);
  return yes;
}

/* One field name of a schema record: an identifier, or a quoted string
 * with the escapes mcp/schema.c writes. */
static char *field_name(const char **at)
{
  const char *p = *at;
  GString *s = g_string_new(NULL);
  if (*p != '"') {
    while (g_ascii_isalnum(*p) || *p == '_') g_string_append_c(s, *p++);
  } else {
    for (p++; *p && *p != '"'; p++) {
      if (*p == '\\' && p[1] == 'u' && p[2] == '{') {
        g_string_append_c(s, (char)g_ascii_strtoull(p + 3, NULL, 16));
        p = strchr(p, '}');
        if (!p) break;
      } else {
        if (*p == '\\' && p[1]) p++;
        g_string_append_c(s, *p);
      }
    }
    if (p && *p == '"') p++;
  }
  *at = p ? p : *at + strlen(*at);
  return g_string_free(s, FALSE);
}

/* The end of one field's type: the next ", " outside braces and angles. */
static const char *type_end(const char *p)
{
  int depth = 0;
  bool quoted = false;
  for (; *p; p++) {
    if (quoted) {
      if (*p == '\\' && p[1])
        p++;
      else if (*p == '"')
        quoted = false;
    } else if (*p == '"') {
      quoted = true;
    } else if (*p == '{' || *p == '<') {
      depth++;
    } else if (*p == '}' || *p == '>') {
      depth--;
    } else if (*p == ',' && depth == 0) {
      break;
    }
  }
  return p;
}

/* A tool's input record as the schema fragment spells it ("a: Long, b?:
 * String").  Only the types a rule can compare a call's values with are
 * declared: a field of another type (a record, a set of numbers) is no
 * attribute a rule can name, so the load refuses a rule that names it. */
static GArray *tool_fields(const char *fields)
{
  GArray *decls = g_array_new(FALSE, FALSE, sizeof(FieldDecl));
  for (const char *p = fields; p && *p;) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    char *name = field_name(&p);
    bool optional = *p == '?';
    if (optional) p++;
    if (*p == ':') p++;
    while (*p == ' ') p++;
    const char *end = type_end(p);
    g_autofree char *type = g_strndup(p, (gsize)(end - p));
    p = end;
    static const struct {
      const char *text;
      FieldType type;
    } known[] = { { "String", FT_STRING },
                  { "Long", FT_LONG },
                  { "Bool", FT_BOOL },
                  { "Set<String>", FT_SET_STRING } };
    FieldDecl f = { name, FT_STRING, optional };
    bool typed = false;
    for (size_t i = 0; i < G_N_ELEMENTS(known) && !typed; i++)
      if (strcmp(type, known[i].text) == 0) {
        f.type = known[i].type;
        typed = true;
      }
    if (typed)
      g_array_append_val(decls, f);
    else
      g_free(name);
  }
  return decls;
}

/* A new entry for etype::"tool" (etype taken), not counted yet; -1 when
 * the table is full. */
static int add_action(const char *term, char *etype, const char *tool)
{
  if (policy_nactions >= POLICY_MAX_ACTIONS) {
    g_free(etype);
    return -1;
  }
  int a = (int)policy_nactions;
  ActionDecl *d = &policy_actions[a];
  d->term = g_strdup(term);
  d->etype = etype;
  d->id = g_strdup(tool);
  return a;
}

int box_policy_register_action(const char *server, const char *term, const char *tool,
                               const char *fields)
{
  const char *sep = strstr(term, "::Action::");
  if (!sep) return -1;
  char *etype = g_strndup(term, (gsize)(sep - term) + strlen("::Action"));
  g_mutex_lock(&registry_lock);
  int a = policy_action_lookup(etype, tool, strlen(tool));
  bool known = a >= 0;
  if (known) g_free(etype);
  if (known ? !policy_actions[a].recovered : (a = add_action(term, etype, tool)) < 0) {
    g_mutex_unlock(&registry_lock);
    return a;
  }
  /* a new action, or one a history recovered, which takes its fields now */
  ActionDecl *d = &policy_actions[a];
  GArray *decls = tool_fields(fields);
  d->server = g_strdup(server);
  d->input = (const FieldDecl *)(void *)decls->data;
  __atomic_store_n(&d->ninput, (size_t)decls->len, __ATOMIC_RELEASE);
  g_array_free(decls, FALSE);
  d->recovered = false;
  if (!known) __atomic_store_n(&policy_actions_count, (size_t)a + 1, __ATOMIC_RELEASE);
  g_mutex_unlock(&registry_lock);
  return a;
}

bool policy_action_listed(int action)
{
  g_mutex_lock(&registry_lock);
  bool listed = action >= 0 && !policy_actions[action].recovered;
  g_mutex_unlock(&registry_lock);
  return listed;
}

int policy_action_recovered(const char *term)
{
  const char *sep = strstr(term, "::Action::\"");
  if (!sep) return -1;
  const char *p = sep + strlen("::Action::");
  g_autofree char *tool = field_name(&p);
  if (*p) return -1; /* no term mcp/schema.c writes */
  char *etype = g_strndup(term, (gsize)(sep - term) + strlen("::Action"));
  g_mutex_lock(&registry_lock);
  int a = policy_action_lookup(etype, tool, strlen(tool));
  if (a >= 0) {
    g_free(etype);
  } else if ((a = add_action(term, etype, tool)) >= 0) {
    policy_actions[a].server = g_strdup(etype); /* a label until its server's is known */
    policy_actions[a].recovered = true;
    __atomic_store_n(&policy_actions_count, (size_t)a + 1, __ATOMIC_RELEASE);
  }
  g_mutex_unlock(&registry_lock);
  return a;
}

typedef struct {
  const char *type;
  const char *const *eids;
} EnumDecl;

static const char *const read_ops[] = { "read_content", "read_metadata", "enumerate", "read_link",
                                        "change_dir",   "exec",          NULL };
static const char *const write_ops[] = { "write_content", "create_dir", "set_permissions",
                                         "symlink", NULL };
static const char *const delete_ops[] = { "remove_file", "remove_dir", NULL };
static const char *const move_ops[] = { "rename", NULL };
static const char *const other_ops[] = { "other", NULL };
static const char *const results[] = { "completed", "descriptor_issued", "indeterminate", NULL };
static const EnumDecl enums[] = {
  { "Box::FsReadOperation", read_ops },     { "Box::FsWriteOperation", write_ops },
  { "Box::FsDeleteOperation", delete_ops }, { "Box::FsMoveOperation", move_ops },
  { "Box::FsOtherOperation", other_ops },   { "Box::FsResponseResult", results },
};

int policy_action_index(const char *term)
{
  if (!term) return -1;
  size_t n = policy_nactions;
  for (size_t i = 0; i < n; i++)
    if (strcmp(policy_actions[i].term, term) == 0) return (int)i;
  return -1;
}

const FieldDecl *policy_field(const FieldDecl *fields, size_t n, const char *name, size_t len)
{
  for (size_t i = 0; i < n; i++)
    if (strlen(fields[i].name) == len && memcmp(fields[i].name, name, len) == 0) return &fields[i];
  return NULL;
}

bool policy_enum_has(const char *type, const char *eid, size_t len, bool *is_enum)
{
  for (size_t i = 0; i < N(enums); i++) {
    if (strcmp(enums[i].type, type) != 0) continue;
    if (is_enum) *is_enum = true;
    for (const char *const *e = enums[i].eids; *e; e++)
      if (strlen(*e) == len && memcmp(*e, eid, len) == 0) return true;
    return false;
  }
  if (is_enum) *is_enum = false;
  return false;
}

bool policy_entity_type_known(const char *type)
{
  if (strcmp(type, "Box::Agent") == 0 || strcmp(type, "Box::Resource") == 0 ||
      strcmp(type, "Box::Action") == 0)
    return true;
  bool is_enum = false;
  policy_enum_has(type, "", 0, &is_enum);
  return is_enum;
}

/* ---- request gate ------------------------------------------------------ */

bool policy_request_valid(int action, json_object *input, char **why)
{
  const ActionDecl *ad = &policy_actions[action];
  if (!input || !json_object_is_type(input, json_type_object)) {
    *why = g_strdup("the request input is not a record");
    return false;
  }
  size_t required_seen = 0; /* an object's keys are distinct: counting them is finding them */
  json_object_object_foreach (input, key, val) {
    const FieldDecl *f = policy_field(ad->input, ad->ninput, key, strlen(key));
    if (f && !f->optional) required_seen++;
    /* a tool's argument of a type no rule can name is none of the policy's */
    if (!f && ad->etype) continue;
    if (!f) {
      *why = g_strdup_printf("attribute `input.%s` is not declared for %s::\"%s\"", key,
                             policy_action_etype(action), policy_action_id(action));
      return false;
    }
    bool ok = false;
    switch (f->type) {
    case FT_STRING: ok = json_object_is_type(val, json_type_string); break;
    case FT_LONG: ok = json_object_is_type(val, json_type_int); break;
    case FT_BOOL: ok = json_object_is_type(val, json_type_boolean); break;
    case FT_ENUM:
      ok = json_object_is_type(val, json_type_string) &&
           policy_enum_has(ad->enum_type, json_object_get_string(val),
                           (size_t)json_object_get_string_len(val), NULL);
      break;
    case FT_SET_STRING:
      ok = json_object_is_type(val, json_type_array);
      for (size_t i = 0; ok && i < json_object_array_length(val); i++)
        ok = json_object_is_type(json_object_array_get_idx(val, i), json_type_string);
      break;
    }
    if (!ok) {
      *why = g_strdup_printf("attribute `input.%s` has the wrong type for %s::\"%s\"", key,
                             policy_action_etype(action), policy_action_id(action));
      return false;
    }
  }
  size_t required = 0;
  for (size_t i = 0; i < ad->ninput; i++) required += !ad->input[i].optional;
  if (required_seen == required) return true;
  for (size_t i = 0; i < ad->ninput; i++) {
    if (!ad->input[i].optional && !json_object_object_get_ex(input, ad->input[i].name, NULL)) {
      *why =
        g_strdup_printf("required attribute `input.%s` is missing for %s::\"%s\"",
                        ad->input[i].name, policy_action_etype(action), policy_action_id(action));
      return false;
    }
  }
  return true;
}
