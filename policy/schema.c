/* schema.c — the closed Box schema (spec/policy.md §4): the actions, their
 * input and output records, the enumerated entities, and a request's
 * input checked against them. */
#include "policy/schema.h"

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
const ActionDecl policy_actions[] = {
  { "fs:read", "Box::FsReadOperation", fs_in, N(fs_in), fs_out, N(fs_out) },
  { "fs:write", "Box::FsWriteOperation", fs_in, N(fs_in), fs_out, N(fs_out) },
  { "fs:delete", "Box::FsDeleteOperation", fs_in, N(fs_in), fs_out, N(fs_out) },
  { "fs:move", "Box::FsMoveOperation", fs_in, N(fs_in), fs_out, N(fs_out) },
  { "fs:other", "Box::FsOtherOperation", fs_in, N(fs_in), fs_out, N(fs_out) },
  { "net:connect", NULL, net_in, N(net_in), NULL, 0 },
  { "http:request", NULL, http_in, N(http_in), status_out, N(status_out) },
  { "shell:exec", NULL, exec_in, N(exec_in), status_out, N(status_out) },
  { "shell:spawn", NULL, spawn_in, N(spawn_in), status_out, N(status_out) },
  { "mcp:call", NULL, mcp_in, N(mcp_in), NULL, 0 },
};
const size_t policy_nactions = N(policy_actions);
#define FS_OTHER 4

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
  for (size_t i = 0; i < policy_nactions; i++)
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
    if (!f) {
      *why = g_strdup_printf("attribute `input.%s` is not declared for Box::Action::\"%s\"", key,
                             ad->term);
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
      *why = g_strdup_printf("attribute `input.%s` has the wrong type for Box::Action::\"%s\"", key,
                             ad->term);
      return false;
    }
  }
  size_t required = 0;
  for (size_t i = 0; i < ad->ninput; i++) required += !ad->input[i].optional;
  if (required_seen == required) return true;
  for (size_t i = 0; i < ad->ninput; i++) {
    if (!ad->input[i].optional && !json_object_object_get_ex(input, ad->input[i].name, NULL)) {
      *why = g_strdup_printf("required attribute `input.%s` is missing for Box::Action::\"%s\"",
                             ad->input[i].name, ad->term);
      return false;
    }
  }
  return true;
}
