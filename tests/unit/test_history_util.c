/* test_history_util.c — helpers shared by the history rule tests. */
#include "tests/unit/test_history_util.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/test_util.h"

static int64_t now_ns;
static int64_t test_clock(void *data)
{
  (void)data;
  return now_ns;
}
void at(double seconds)
{
  now_ns = (int64_t)(seconds * 1e9);
}

BoxPolicy *load(const char *text)
{
  BoxPolicy *p = load_ok(text);
  box_policy_set_clock(p, test_clock, NULL);
  return p;
}

void assert_refused(const char *text, const char *expected)
{
  g_autofree char *message = load_error(text);
  if (!strstr(message, expected)) g_printerr("got: %s\n", message);
  g_assert_nonnull(strstr(message, expected));
}

/* A spawn of PROGRAM found on the usual path (unlike the shared
 * spawn_input, which takes the path and no argument). */
json_object *spawn_arg(const char *program, const char *arg1)
{
  json_object *o = exec_input(program, "/w", arg1);
  char *pp = g_strdup_printf("/usr/bin/%s", program);
  json_object_object_add(o, "program_path", json_object_new_string(pp));
  g_free(pp);
  return o;
}

json_object *http_input(const char *host, int64_t bytes)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "host", json_object_new_string(host));
  json_object_object_add(o, "port", json_object_new_int64(443));
  json_object_object_add(o, "method", json_object_new_string("POST"));
  json_object_object_add(o, "path", json_object_new_string("/v1"));
  json_object_object_add(o, "body_bytes", json_object_new_int64(bytes));
  json_object_object_add(o, "intercepted", json_object_new_boolean(true));
  return o;
}

/* decide and return whether permitted; consumes input */
bool permits(BoxPolicy *p, const char *action, json_object *input)
{
  BoxDecision *d = box_policy_decide(p, action, input);
  bool ok = d->verdict == BOX_VERDICT_PERMIT;
  box_decision_free(d);
  json_object_put(input);
  return ok;
}

void spawn_status(BoxPolicy *p, const char *program, const char *arg1, int status)
{
  json_object *in = spawn_arg(program, arg1);
  g_assert_true(box_policy_record_status(p, "shell:spawn", in, status));
  json_object_put(in);
}

void fs_write_response(BoxPolicy *p, const char *path, const char *result)
{
  json_object *in = fs_input(path, "write_content");
  json_object *out = json_object_new_object();
  json_object_object_add(out, "result", json_object_new_string(result));
  g_assert_true(box_policy_record_response(p, "fs:write", in, out));
  json_object_put(in);
  json_object_put(out);
}

const char *const push_budget =
  "permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
  "@id(\"push-budget\")\n"
  "forbid (principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when { context.input.program == \"git\" && context.input has arg1 && context.input.arg1 == "
  "\"push\" }\n"
  "when temporal { (count for (t: Timepoint). where formerly within 1h (\n"
  "  Box::Action::\"shell:spawn\"::request{ input.program: \"git\", input.arg1: \"push\" } && "
  "tp(t))) > 3 };\n";

/* The budget's three pushes of the hour, each permitted. */
void spend_push_budget(BoxPolicy *p)
{
  for (int i = 0; i < 3; i++) g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push")));
}

char *tmpdir(void)
{
  return g_dir_make_tmp("test-history-XXXXXX", NULL);
}

/* Removes a tmpdir() and frees its name. */
void rm_rf(char *dir)
{
  g_assert_cmpint(test_remove_tree(dir), ==, 0);
  g_free(dir);
}

BoxPolicy *load_with_history(const char *text, const char *dir)
{
  BoxPolicy *p = load(text);
  GError *error = NULL;
  g_assert_true(box_policy_open_history(p, dir, &error));
  g_assert_no_error(error);
  return p;
}

/* A new history directory (its name in *dir) with the push budget open on
 * it, at time 0. */
BoxPolicy *open_push_history(char **dir)
{
  *dir = tmpdir();
  BoxPolicy *p = load_with_history(push_budget, *dir);
  at(0);
  return p;
}

/* The push budget reopened from dir at time t: its history still holds
 * three pushes of the hour, so a fourth is refused. */
void expect_pushes_spent_on_reopen(const char *dir, double t)
{
  BoxPolicy *p = load_with_history(push_budget, dir);
  at(t);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push")));
  box_policy_free(p);
}

/* load_with_history, with what it prints on stderr in *errtext */
BoxPolicy *load_with_history_stderr(const char *text, const char *dir, char **errtext)
{
  char *errpath = g_build_filename(dir, "stderr", NULL);
  fflush(stderr);
  int saved = dup(2);
  FILE *ef = fopen(errpath, "w");
  dup2(fileno(ef), 2);
  BoxPolicy *p = load_with_history(text, dir);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  fclose(ef);
  g_assert_true(g_file_get_contents(errpath, errtext, NULL, NULL));
  g_unlink(errpath);
  g_free(errpath);
  return p;
}

json_object *key_input(const char *key)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "key", json_object_new_string(key));
  return o;
}

/* A policy whose rules read a server's tools before it lists them: a write
 * of a key only after a read of it, at most two reads of a key an hour. */
const char tool_rules[] =
  "permit(principal, action, resource);\n"
  "@id(\"read_first\") forbid(principal, action == hist_mcp::Action::\"write\", resource)\n"
  "unless temporal { formerly within 1h hist_mcp::Action::\"read\"::response{ input.key: "
  "context.input.key } };\n"
  "@id(\"two_reads\") forbid(principal, action == hist_mcp::Action::\"read\", resource)\n"
  "when temporal { (count for (t: Timepoint). where (formerly within 1h ("
  "hist_mcp::Action::\"read\"::request{ input.key: \"k\" } && tp(t)))) > 2 };\n";
