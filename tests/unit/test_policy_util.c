/* test_policy_util.c — what the policy unit tests share: the seed policy,
 * loading, requests, and deciding with the decision's fields checked. */
#include <glib/gstdio.h>

#include "tests/unit/test_policy_util.h"

const char *const seed_policy =
  "// seed example\n"
  "@id(\"exec-project\")\n"
  "permit(principal, action == Box::Action::\"shell:exec\", resource)\n"
  "when { context.input.cwd == \"/home/op/src/project\" || context.input.cwd like "
  "\"/home/op/src/project/*\" };\n"
  "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], resource)\n"
  "when { context.input.path like \"~/src/project/*\" };\n"
  "permit(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when { context.input.program == \"git\" };\n"
  "@id(\"no-rm\") @description(\"Deleting is not allowed here.\")\n"
  "forbid(principal, action == Box::Action::\"shell:exec\", resource) when { context.input.program "
  "== \"rm\" };\n";

BoxPolicy *load_ok(const char *text)
{
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(text, NULL, &error);
  if (!p) g_printerr("unexpected load failure: %s\n", error->message);
  g_assert_no_error(error);
  g_assert_nonnull(p);
  return p;
}

char *load_error(const char *text)
{
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(text, NULL, &error);
  g_assert_null(p);
  g_assert_nonnull(error);
  g_assert_true(error->domain == BOX_POLICY_ERROR);
  char *message = g_strdup(error->message);
  g_error_free(error);
  return message;
}

void assert_load_error(const char *text, const char *expected)
{
  g_autofree char *message = load_error(text);
  g_assert_cmpstr(message, ==, expected);
}

json_object *fs_input(const char *path, const char *op)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "path", json_object_new_string(path));
  json_object_object_add(o, "operation", json_object_new_string(op));
  return o;
}

json_object *exec_input(const char *program, const char *cwd, const char *arg1)
{
  json_object *o = json_object_new_object();
  GString *cmd = g_string_new(program);
  if (arg1) g_string_append_printf(cmd, " %s", arg1);
  json_object_object_add(o, "command", json_object_new_string(cmd->str));
  g_string_free(cmd, TRUE);
  json_object_object_add(o, "program", json_object_new_string(program));
  if (arg1) json_object_object_add(o, "arg1", json_object_new_string(arg1));
  json_object_object_add(o, "arg_count", json_object_new_int64(arg1 ? 1 : 0));
  json_object_object_add(o, "cwd", json_object_new_string(cwd));
  return o;
}

json_object *spawn_input(const char *program, const char *path)
{
  json_object *o = exec_input(program, "/home/op/src/project", NULL);
  json_object_object_add(o, "program_path", json_object_new_string(path));
  return o;
}

BoxDecision *decide(BoxPolicy *p, const char *action, json_object *input)
{
  BoxDecision *d = box_policy_decide(p, action, input);
  json_object_put(input);
  g_assert_nonnull(d);
  g_assert_nonnull(d->message);
  g_assert_nonnull(d->rule);
  g_assert_nonnull(d->determining_ids);
  return d;
}

BoxCause decide_cause(BoxPolicy *p, const char *action, json_object *input)
{
  BoxDecision *d = decide(p, action, input);
  BoxCause c = d->cause;
  box_decision_free(d);
  return c;
}

BoxCause decide_logged(BoxPolicy *p, BoxDecisionLog *log, const char *action, json_object *input,
                       const char *const *args, bool queued)
{
  BoxDecision *d = box_policy_decide(p, action, input);
  if (queued)
    box_decision_log_append_queued(log, action, input, d, NULL);
  else
    box_decision_log_append(log, action, input, args, d);
  BoxCause c = d->cause;
  box_decision_free(d);
  json_object_put(input);
  return c;
}

char *log_dir_new(const char *tmpl, char **path)
{
  char *dir = g_dir_make_tmp(tmpl, NULL);
  g_assert_nonnull(dir);
  *path = g_build_filename(dir, "records.jsonl", NULL);
  return dir;
}

BoxDecisionLog *log_tmp_open(const char *tmpl, const char *box_id, const char *run_id, char **dir,
                             char **path)
{
  *dir = log_dir_new(tmpl, path);
  GError *error = NULL;
  BoxDecisionLog *log = box_decision_log_open(*path, box_id, run_id, &error);
  g_assert_no_error(error);
  g_assert_nonnull(log);
  return log;
}

void log_dir_remove(char *dir, char *path)
{
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}
