/* test_policy_eval.c — deciding (spec/policy.md §3): the seed policy's decisions,
 * operators, errors that deny, messages and resource labels, packed
 * decisions, threads, and what may lie beneath a directory. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/decision_log.h"
#include "tests/unit/test_policy_util.h"
#include "tests/unit/test_util.h"

/* ---- evaluation ------------------------------------------------------------- */

static void test_seed_decisions(void)
{
  BoxPolicy *p = load_ok(seed_policy);
  BoxDecision *d;

  d = decide(p, "shell:exec", exec_input("ls", "/home/op/src/project/sub", NULL));
  g_assert_cmpint(d->verdict, ==, BOX_VERDICT_PERMIT);
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_PERMITTED);
  g_assert_cmpstr(d->rule, ==, "exec-project");
  g_assert_cmpstr(d->message, ==, "policy permitted this operation on 'ls'.");
  g_assert_null(d->reason);
  g_assert_cmpuint(d->determining_ids->len, ==, 1);
  g_assert_cmpstr(d->determining_ids->pdata[0], ==, "exec-project");
  box_decision_free(d);

  d = decide(p, "shell:exec", exec_input("ls", "/home/op/src/projectX", NULL));
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_NO_MATCH);
  g_assert_cmpstr(d->rule, ==, "<default-deny>");
  g_assert_cmpstr(d->reason, ==, "no permit matched");
  g_assert_cmpuint(d->determining_ids->len, ==, 0);
  box_decision_free(d);

  /* forbid beats permit */
  d = decide(p, "shell:exec", exec_input("rm", "/home/op/src/project", "-rf"));
  g_assert_cmpint(d->verdict, ==, BOX_VERDICT_DENY);
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_FORBIDDEN);
  g_assert_cmpstr(d->rule, ==, "no-rm");
  g_assert_cmpstr(d->description, ==, "Deleting is not allowed here.");
  g_assert_cmpstr(d->reason, ==, "a forbid rule matched");
  g_assert_cmpstr(
    d->message, ==,
    "policy denied this operation on 'rm' [policy: no-rm]: Deleting is not allowed here.");
  g_assert_cmpuint(d->determining_ids->len, ==, 1);
  g_assert_cmpstr(d->determining_ids->pdata[0], ==, "no-rm");
  box_decision_free(d);

  d = decide(p, "fs:write", fs_input("~/src/project/todo.txt", "write_content"));
  g_assert_cmpint(d->verdict, ==, BOX_VERDICT_PERMIT);
  g_assert_cmpstr(d->rule, ==, "policy_1");
  box_decision_free(d);

  d = decide(p, "fs:delete", fs_input("~/src/project/todo.txt", "remove_file"));
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_NO_MATCH);
  g_assert_cmpstr(d->message, ==,
                  "policy denied this operation on '~/src/project/todo.txt' [default-deny]: No "
                  "permit policy matched this request.");
  box_decision_free(d);

  d = decide(p, "shell:spawn", spawn_input("git", "/usr/bin/git"));
  g_assert_cmpint(d->verdict, ==, BOX_VERDICT_PERMIT);
  g_assert_cmpstr(d->rule, ==, "policy_2");
  g_assert_cmpstr(d->resource, ==, "/usr/bin/git");
  box_decision_free(d);

  /* malformed requests are refused: unknown action, undeclared field, bad eid */
  d = decide(p, "fs:raed", fs_input("~/src/project/a", "read_content"));
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_INTERNAL_FAULT);
  box_decision_free(d);
  d = decide(p, "fs:read", fs_input("~/src/project/a", "write_content"));
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_INTERNAL_FAULT);
  g_assert_cmpstr(d->rule, ==, "<default-deny>");
  box_decision_free(d);
  box_policy_free(p);

  p = box_policy_new_empty();
  d = decide(p, "fs:read", fs_input("/etc/passwd", "read_content"));
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_NO_MATCH);
  box_decision_free(d);
  box_policy_free(p);
}

static void test_like_has_sets(void)
{
  BoxPolicy *p = load_ok(
    "permit(principal, action == Box::Action::\"fs:read\", resource)\n"
    "when { context.input.path like \"~/a*b\\*c*\" };\n"
    "permit(principal, action == Box::Action::\"shell:exec\", resource)\n"
    "when { context.input has arg1 && [\"status\", \"diff\"].contains(context.input.arg1) };\n"
    "permit(principal, action == Box::Action::\"fs:write\", resource)\n"
    "when { context.input.operation == Box::FsWriteOperation::\"create_dir\" && context has input "
    "&& !(context.input has ip) && action in [Box::Action::\"fs:write\"] };\n"
    "permit(principal, action == Box::Action::\"fs:move\", resource)\n"
    "when { context.input.path == \"x\" || (if context.input.path like \"*.md\" then 1 + 2 * 3 == "
    "7 else false) };\n");
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("~/ab*c", "read_content")), ==,
                  BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("~/a/x/b*c/d", "read_content")), ==,
                  BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("~/abxc", "read_content")), ==,
                  BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("/~/ab*c", "read_content")), ==,
                  BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "shell:exec", exec_input("git", "/", "diff")), ==,
                  BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "shell:exec", exec_input("git", "/", "push")), ==,
                  BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "shell:exec", exec_input("git", "/", NULL)), ==,
                  BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "fs:write", fs_input("~/d", "create_dir")), ==,
                  BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:write", fs_input("~/d", "write_content")), ==,
                  BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "fs:move", fs_input("~/README.md", "rename")), ==,
                  BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:move", fs_input("~/README.txt", "rename")), ==,
                  BOX_CAUSE_NO_MATCH);
  box_policy_free(p);
}

static void test_errors_deny(void)
{
  /* overflow in a forbid: internal fault, attribution = the matching permit */
  BoxPolicy *p =
    load_ok("permit(principal, action, resource);\n"
            "forbid(principal, action, resource) when { 9223372036854775807 + 1 > 0 };");
  BoxDecision *d = decide(p, "fs:read", fs_input("~/x", "read_content"));
  g_assert_cmpint(d->verdict, ==, BOX_VERDICT_DENY);
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_INTERNAL_FAULT);
  g_assert_cmpstr(d->rule, ==, "<default-deny>");
  g_assert_cmpstr(d->reason, ==, "the request could not be evaluated, so it was refused");
  g_assert_cmpstr(
    d->message, ==,
    "policy denied this operation on '~/x' because the request could not be evaluated.");
  g_assert_cmpuint(d->determining_ids->len, ==, 1);
  g_assert_cmpstr(d->determining_ids->pdata[0], ==, "policy_0");
  box_decision_free(d);
  box_policy_free(p);

  /* type mismatches are refused at load (strict validation) */
  assert_load_error("permit(principal, action == Box::Action::\"fs:read\", resource) when { "
                    "context.input.path == 1 || context.input.path == \"a\" };",
                    "policy fails schema validation: the types Long and String are not "
                    "compatible at line 1, column 89");
  assert_load_error(
    "permit(principal, action == Box::Action::\"fs:read\", resource) when { true };\n"
    "permit(principal, action == Box::Action::\"net:connect\", resource) when { context.input.host "
    "< 3 };",
    "policy fails schema validation: for policy `policy_1`, unexpected type: expected Long but saw "
    "String at line 2, column 88");
  assert_load_error(
    "permit(principal, action == Box::Action::\"shell:exec\", resource) when { "
    "context.input.arg_count - 1 };",
    "policy fails schema validation: for policy `policy_0`, unexpected type: expected Bool but saw "
    "Long at line 1, column 97");
  assert_load_error("permit(principal, action == Box::Action::\"fs:read\", resource) when { "
                    "context.input.operation == \"read_content\" };",
                    "policy fails schema validation: the types String and Box::FsReadOperation "
                    "are not compatible at line 1, column 94");
  /* overflow is an evaluation error, which denies the whole request */
  p = load_ok("permit(principal, action == Box::Action::\"http:request\", resource) when { "
              "-9223372036854775808 * -1 == 0 };\n"
              "permit(principal, action == Box::Action::\"fs:read\", resource) when { "
              "context.input.path == \"a\" };\n");
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("a", "read_content")), ==,
                  BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("b", "read_content")), ==,
                  BOX_CAUSE_NO_MATCH);
  json_object *http = json_object_new_object();
  json_object_object_add(http, "host", json_object_new_string("api.example.com"));
  json_object_object_add(http, "port", json_object_new_int64(443));
  json_object_object_add(http, "method", json_object_new_string("GET"));
  json_object_object_add(http, "path", json_object_new_string("/v1/run"));
  json_object_object_add(http, "body_bytes", json_object_new_int64(0));
  json_object_object_add(http, "intercepted", json_object_new_boolean(1));
  g_assert_cmpint(decide_cause(p, "http:request", http), ==, BOX_CAUSE_INTERNAL_FAULT);
  box_policy_free(p);
}

/* ---- messages ----------------------------------------------------------------- */

/* A decision packed (the mount's cache, the log's queue), unpacked, packed
 * again from the unpacked one and unpacked: every field kept each way. */
static void assert_same_decision(const BoxDecision *a, const BoxDecision *b)
{
  g_assert_cmpint(a->verdict, ==, b->verdict);
  g_assert_cmpint(a->cause, ==, b->cause);
  g_assert_cmpstr(a->action, ==, b->action);
  g_assert_cmpstr(a->resource, ==, b->resource);
  g_assert_cmpstr(a->rule, ==, b->rule);
  g_assert_cmpstr(a->description, ==, b->description);
  g_assert_cmpstr(a->message, ==, b->message);
  g_assert_cmpstr(a->reason, ==, b->reason);
  g_assert_cmpint(a->dry_run, ==, b->dry_run);
  g_assert_cmpuint(a->determining_ids->len, ==, b->determining_ids->len);
  for (guint i = 0; i < a->determining_ids->len; i++)
    g_assert_cmpstr(a->determining_ids->pdata[i], ==, b->determining_ids->pdata[i]);
}

static void test_decision_pack(void)
{
  BoxPolicy *p = load_ok("@id(\"no_rm\") @description(\"Deleting is off\")\n"
                         "forbid(principal, action == Box::Action::\"shell:exec\", resource) when "
                         "{ context.input.program == \"rm\" };\n"
                         "forbid(principal, action == Box::Action::\"shell:exec\", resource) when "
                         "{ context.input.program == \"rm\" };\n"
                         "permit(principal, action, resource);\n");
  BoxDecision *denied = decide(p, "shell:exec", exec_input("rm", "/", NULL));
  BoxDecision *permitted = decide(p, "fs:read", fs_input("~/a.txt", "read_metadata"));
  BoxDecision *both[] = { denied, permitted };
  for (guint k = 0; k < G_N_ELEMENTS(both); k++) {
    BoxPackedDecision *c = box_decision_pack(both[k], NULL);
    BoxDecision *u = box_decision_unpack(c);
    g_free(c); /* the unpacked one has its own copy */
    assert_same_decision(both[k], u);
    BoxPackedDecision *c2 = box_decision_pack(u, NULL);
    BoxDecision *u2 = box_decision_unpack(c2);
    box_decision_free(u);
    g_free(c2);
    assert_same_decision(both[k], u2);
    /* another action than the decision's: the copy is not reused */
    BoxPackedDecision *c3 = box_decision_pack(u2, "fs:write");
    g_assert_cmpstr(c3->action, ==, "fs:write");
    g_assert_cmpstr(c3->rule, ==, both[k]->rule);
    g_free(c3);
    box_decision_free(u2);
  }
  g_assert_cmpuint(denied->determining_ids->len, ==, 2);
  g_assert_nonnull(denied->description);
  box_decision_free(denied);
  box_decision_free(permitted);
  box_policy_free(p);
}

static void test_messages(void)
{
  BoxPolicy *p =
    load_ok("@id(\"no_rm\") @description(\"Deleting is off\")\n"
            "forbid(principal, action == Box::Action::\"shell:exec\", resource) when { "
            "context.input.program == \"rm\" };\n"
            "forbid(principal, action == Box::Action::\"shell:exec\", resource) when { "
            "context.input.program == \"rm\" };\n"
            "@id(\"x\") @description(\"Really?\") forbid(principal, action == "
            "Box::Action::\"fs:read\", resource) when { context.input.path like \"*env*\" };\n"
            "@id(\"tab\\there\") @description(\"quote \\\" and \\u{202e}\") forbid(principal, "
            "action == Box::Action::\"fs:write\", resource);\n"
            "permit(principal, action, resource);\n");
  BoxDecision *d = decide(p, "shell:exec", exec_input("rm", "/", NULL));
  g_assert_cmpstr(
    d->message, ==,
    "policy denied this operation on 'rm' [policy: no_rm]: Deleting is off; [policy: policy_1].");
  g_assert_cmpstr(d->rule, ==, "no_rm");
  g_assert_cmpuint(d->determining_ids->len, ==, 2);
  g_assert_cmpstr(d->determining_ids->pdata[1], ==, "policy_1");
  box_decision_free(d);

  /* resource escaping (escape_debug); description ending in '?' keeps its end */
  d = decide(p, "fs:read", fs_input("~/it's \"env\"\\\n\x1b\xe2\x80\xae", "read_content"));
  g_assert_cmpstr(d->message, ==,
                  "policy denied this operation on '~/it\\'s \\\"env\\\"\\\\\\n\\u{1b}\\u{202e}' "
                  "[policy: x]: Really?");
  box_decision_free(d);

  /* annotation escaping: controls and bidi escaped, quotes verbatim */
  d = decide(p, "fs:write", fs_input("", "write_content"));
  g_assert_cmpstr(d->message, ==,
                  "policy denied this operation [policy: tab\\there]: quote \" and \\u{202e}.");
  box_decision_free(d);

  /* long resources are cut after 1024 bytes of escaped text */
  GString *longp = g_string_new("/");
  for (int i = 0; i < 2000; i++) g_string_append_c(longp, 'a');
  d = decide(p, "fs:delete", fs_input(longp->str, "remove_file"));
  char *expect = g_strdup_printf("policy permitted this operation on '%.*s...'.", 1024, longp->str);
  g_assert_cmpstr(d->message, ==, expect);
  g_free(expect);
  g_string_free(longp, TRUE);
  box_decision_free(d);

  /* the cut counts escapes: a plain run after an escape stops at 1024
   * bytes; an escape that would cross 1024 is left out whole */
  longp = g_string_new(NULL);
  for (int i = 0; i < 1020; i++) g_string_append_c(longp, 'a');
  g_string_append(longp, "\"bbbbbbbbbb");
  d = decide(p, "fs:delete", fs_input(longp->str, "remove_file"));
  expect = g_strdup_printf("policy permitted this operation on '%.*s\\\"bb...'.", 1020, longp->str);
  g_assert_cmpstr(d->message, ==, expect);
  g_free(expect);
  box_decision_free(d);
  g_string_truncate(longp, 0);
  for (int i = 0; i < 1023; i++) g_string_append_c(longp, 'a');
  g_string_append(longp, "\"b");
  d = decide(p, "fs:delete", fs_input(longp->str, "remove_file"));
  expect = g_strdup_printf("policy permitted this operation on '%.*s...'.", 1023, longp->str);
  g_assert_cmpstr(d->message, ==, expect);
  g_free(expect);
  g_string_free(longp, TRUE);
  box_decision_free(d);
  box_policy_free(p);

  /* an @id literally "default-deny" on a forbid */
  p = load_ok("@id(\"default-deny\") forbid(principal, action, resource);");
  d = decide(p, "shell:exec", exec_input("echo", "/", NULL));
  g_assert_cmpstr(d->message, ==, "policy denied this operation on 'echo' [policy: default-deny].");
  box_decision_free(d);
  box_policy_free(p);

  /* enforcement */
  d = box_decision_new_enforcement("fs:read", "~/.box/x", "reach-floor",
                                   "the box directory is out of reach");
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_ENFORCEMENT);
  g_assert_cmpstr(d->rule, ==, "enforcement:reach-floor");
  g_assert_cmpstr(d->reason, ==, "the box directory is out of reach");
  g_assert_cmpstr(d->message, ==, "the box directory is out of reach");
  box_decision_free(d);
}

static void test_resource_labels(void)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "host", json_object_new_string("api.example.com"));
  json_object_object_add(o, "port", json_object_new_int64(443));
  json_object_object_add(o, "path", json_object_new_string("/v1/run"));
  char *s = box_policy_resource_label("http:request", o);
  g_assert_cmpstr(s, ==, "api.example.com:443/v1/run");
  g_free(s);
  s = box_policy_resource_label("net:connect", o);
  g_assert_cmpstr(s, ==, "api.example.com:443");
  g_free(s);
  json_object_put(o);
  o = spawn_input("git", "~/bin/git");
  s = box_policy_resource_label("shell:spawn", o);
  g_assert_cmpstr(s, ==, "~/bin/git");
  g_free(s);
  s = box_policy_resource_label("shell:exec", o);
  g_assert_cmpstr(s, ==, "git");
  g_free(s);
  json_object_put(o);
  o = json_object_new_object();
  json_object_object_add(o, "server", json_object_new_string("demo"));
  json_object_object_add(o, "method", json_object_new_string("tools/list"));
  s = box_policy_resource_label("mcp:call", o);
  g_assert_cmpstr(s, ==, "demo/tools/list");
  g_free(s);
  json_object_put(o);
}

/* ---- threads ---------------------------------------------------------------------- */

static gpointer thread_main(gpointer data)
{
  LogThread *a = data;
  for (int i = 0; i < 500; i++) {
    json_object *in = (i % 2) ? exec_input("rm", "/home/op/src/project", NULL)
                              : fs_input("~/src/project/x", "read_content");
    const char *action = (i % 2) ? "shell:exec" : "fs:read";
    BoxCause want = (i % 2) ? BOX_CAUSE_FORBIDDEN : BOX_CAUSE_PERMITTED;
    if (decide_logged(a->policy, a->log, action, in, NULL, false) != want)
      g_atomic_int_inc(&a->failures);
  }
  return NULL;
}

static void test_threads(void)
{
  char *path = NULL;
  char *dir = log_dir_new("policy-thr-XXXXXX", &path);
  LogThread arg = { load_ok(seed_policy), box_decision_log_open(path, "b", "r", NULL), 0, 0 };
  GThread *t[8];
  for (int i = 0; i < 8; i++) t[i] = g_thread_new("decide", thread_main, &arg);
  for (int i = 0; i < 8; i++) g_thread_join(t[i]);
  g_assert_cmpint(arg.failures, ==, 0);
  box_decision_log_close(arg.log);
  box_policy_free(arg.policy);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  /* a record and its span, never interleaved with another decision's */
  g_assert_cmpuint(g_strv_length(lines), ==, 2 * 8 * 500 + 1);
  for (guint i = 0; i < 2 * 8 * 500; i++) {
    json_object *o = json_tokener_parse(lines[i]);
    g_assert_nonnull(o);
    g_assert_true(json_object_object_get_ex(o, i % 2 ? "resourceSpans" : "resourceLogs", NULL));
    json_object_put(o);
  }
  g_strfreev(lines);
  g_free(text);
  log_dir_remove(dir, path);
}

/* ---- what may lie beneath a directory (the mount's walk) ------------------ */

typedef struct {
  const char *dir;
  bool may;
} BeneathCase;

static void check_beneath(const char *text, const BeneathCase *cases, size_t n)
{
  BoxPolicy *p = load_ok(text);
  for (size_t i = 0; i < n; i++) {
    if (box_policy_may_permit_beneath(p, cases[i].dir) != cases[i].may)
      g_printerr("beneath %s: expected %d in\n%s\n", cases[i].dir, cases[i].may, text);
    g_assert_true(box_policy_may_permit_beneath(p, cases[i].dir) == cases[i].may);
  }
  box_policy_free(p);
}

static void test_may_permit_beneath(void)
{
  /* the seed's shape: a workspace grant; its ancestors are walked */
  const BeneathCase seed[] = {
    { "~", true },
    { "~/src", true },
    { "~/src/project", true },
    { "~/src/project/a", true },
    { "~/secretdir", false },
    { "~/secretdir/subdir", false },
    { "~/.ssh", false },
    { "~/src/projectx", false },
    { "/etc", false },
  };
  check_beneath("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                "when { context.input.path like \"~/src/project/*\" };\n"
                "permit(principal, action == Box::Action::\"shell:exec\", resource);\n",
                seed, G_N_ELEMENTS(seed));
  /* everything read, one tree forbidden: nothing below it */
  const BeneathCase forbid[] = { { "~", true },
                                 { "~/secretdir", false },
                                 { "~/secretdir/a/b", false },
                                 { "~/secretdirx", true },
                                 { "~/other", true } };
  check_beneath(
    "permit(principal, action, resource);\n"
    "forbid(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\",\n"
    "  Box::Action::\"fs:delete\", Box::Action::\"fs:move\", Box::Action::\"fs:other\"], "
    "resource)\n"
    "when { context.input.path like \"~/secretdir/*\" };\n",
    forbid, G_N_ELEMENTS(forbid));
  /* a forbid of one action leaves the others */
  const BeneathCase one[] = { { "~/secretdir", true } };
  check_beneath("permit(principal, action, resource);\n"
                "forbid(principal, action == Box::Action::\"fs:write\", resource)\n"
                "when { context.input.path like \"~/secretdir/*\" };\n",
                one, G_N_ELEMENTS(one));
  /* == names one path; != and unknown conditions may permit anything */
  const BeneathCase eq[] = {
    { "~/a", true }, { "~/a/b", true }, { "~/a/b/c", false }, { "~/b", false }
  };
  check_beneath("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                "when { context.input.path == \"~/a/b/c\" && context.input.operation == "
                "Box::FsReadOperation::\"read_content\" };\n",
                eq, G_N_ELEMENTS(eq));
  const BeneathCase ne[] = { { "~/a", true }, { "~/x", true } };
  check_beneath("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                "unless { context.input.path == \"~/a/b\" };\n",
                ne, G_N_ELEMENTS(ne));
  /* a star in the middle, and a negated pattern */
  const BeneathCase mid[] = { { "~/p", true }, { "~/p/q/logs", true }, { "~/q", false } };
  check_beneath("permit(principal, action == Box::Action::\"fs:write\", resource)\n"
                "when { context.input.path like \"~/p/*/logs/*.txt\" };\n",
                mid, G_N_ELEMENTS(mid));
  const BeneathCase neg[] = { { "~/keep", false }, { "~/keep/x", false }, { "~/other", true } };
  check_beneath("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                "when { !(context.input.path like \"~/keep/*\") };\n",
                neg, G_N_ELEMENTS(neg));
  /* no policy rule for fs at all: nothing anywhere */
  const BeneathCase none[] = { { "~", false }, { "/", false } };
  check_beneath("permit(principal, action == Box::Action::\"shell:exec\", resource);\n", none,
                G_N_ELEMENTS(none));
}

/* ---- generated (MCP per-tool) actions ------------------------------------------------ */

static json_object *args_of(const char *json)
{
  json_object *o = json_tokener_parse(json);
  g_assert_nonnull(o);
  return o;
}

static void test_generated_actions(void)
{
  /* a policy may name a server's tools before the server has listed them */
  box_policy_declare_namespace("demo_mcp");
  BoxPolicy *p = load_ok("permit(principal, action, resource);\n"
                         "@id(\"no_big\") forbid(principal, action == demo_mcp::Action::\"add\", "
                         "resource) when { context.input.a > 100 };\n"
                         "@id(\"no_tag\") forbid(principal, action == demo_mcp::Action::\"add\", "
                         "resource) when { context has input.tags && context.input.tags.contains("
                         "\"x\") };\n");
  int a =
    box_policy_register_action("demo-mcp", "demo_mcp::Action::\"add\"", "add",
                               "a: Long, b?: Long, opts?: { deep: Bool }, tags?: Set<String>");
  g_assert_cmpint(a, >=, 10);
  g_assert_cmpint(box_policy_register_action("demo-mcp", "demo_mcp::Action::\"add\"", "add", ""),
                  ==, a);
  /* listed but not installed: pending */
  BoxDecision *d = decide(p, "demo_mcp::Action::\"add\"", args_of("{\"a\":1}"));
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_POLICY_PENDING);
  g_assert_cmpstr(d->rule, ==, "<policy-pending>");
  g_assert_cmpstr(d->message, ==,
                  "policy denied this operation on 'demo-mcp/add' [policy-pending]: The complete "
                  "policy bundle is not installed.");
  box_decision_free(d);
  g_autoptr(GError) error = NULL;
  g_assert_true(box_policy_install_actions(p, "demo_mcp", &error));
  g_assert_cmpint(decide_cause(p, "demo_mcp::Action::\"add\"", args_of("{\"a\":1,\"b\":2}")), ==,
                  BOX_CAUSE_PERMITTED);
  d = decide(p, "demo_mcp::Action::\"add\"", args_of("{\"a\":500}"));
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_FORBIDDEN);
  g_assert_cmpstr(d->message, ==,
                  "policy denied this operation on 'demo-mcp/add' [policy: no_big].");
  box_decision_free(d);
  g_assert_cmpint(
    decide_cause(p, "demo_mcp::Action::\"add\"", args_of("{\"a\":1,\"tags\":[\"y\",\"x\"]}")), ==,
    BOX_CAUSE_FORBIDDEN);
  /* an argument of a type no rule can name is no part of the request */
  g_assert_cmpint(
    decide_cause(p, "demo_mcp::Action::\"add\"", args_of("{\"a\":1,\"opts\":{\"deep\":true}}")), ==,
    BOX_CAUSE_PERMITTED);
  /* a declared argument of the wrong type cannot be evaluated */
  g_assert_cmpint(decide_cause(p, "demo_mcp::Action::\"add\"", args_of("{\"a\":\"one\"}")), ==,
                  BOX_CAUSE_INTERNAL_FAULT);
  box_policy_free(p);

  /* a rule may name no action of an undeclared namespace */
  assert_load_error(
    "forbid(principal, action == elsewhere::Action::\"x\", resource);",
    "policy references unknown action: for policy `policy_0`, unrecognized action "
    "`elsewhere::Action::\"x\"` at line 1, column 29; for policy `policy_0`, unable to "
    "find an applicable action given the policy scope constraints at line 1, "
    "column 19");
  /* a rule that names a tool the server did not list, or an argument it
   * does not take, keeps the server's actions pending */
  box_policy_declare_namespace("demo2");
  p = load_ok("forbid(principal, action == demo2::Action::\"nope\", resource);\n");
  box_policy_register_action("demo2", "demo2::Action::\"yes\"", "yes", "");
  g_assert_false(box_policy_install_actions(p, "demo2", &error));
  g_assert_cmpstr(error->message, ==,
                  "policy references unknown action: for policy `policy_0`, unrecognized action "
                  "`demo2::Action::\"nope\"` at line 1, column 29");
  g_clear_error(&error);
  g_assert_cmpint(decide_cause(p, "demo2::Action::\"yes\"", json_object_new_object()), ==,
                  BOX_CAUSE_POLICY_PENDING);
  box_policy_free(p);
  box_policy_declare_namespace("demo3");
  p = load_ok("permit(principal, action == demo3::Action::\"t\", resource) "
              "when { context.input.missing == 1 };\n");
  box_policy_register_action("demo3", "demo3::Action::\"t\"", "t", "n: Long");
  g_assert_false(box_policy_install_actions(p, "demo3", &error));
  g_assert_nonnull(strstr(error->message, "policy fails schema validation: for policy `policy_0`, "
                                          "attribute `input.missing` in context for "
                                          "demo3::Action::\"t\" not found"));
  box_policy_free(p);
  /* a policy loaded once the tools are known takes them as it takes Box's */
  p = load_ok("permit(principal, action == demo3::Action::\"t\", resource) "
              "when { context.input.n == 1 };\n");
  g_assert_cmpint(decide_cause(p, "demo3::Action::\"t\"", args_of("{\"n\":1}")), ==,
                  BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "demo3::Action::\"t\"", args_of("{\"n\":2}")), ==,
                  BOX_CAUSE_NO_MATCH);
  box_policy_free(p);
}

int main(int argc, char **argv)
{
  static const TestCase cases[] = { { "/policy/eval/seed", test_seed_decisions },
                                    { "/policy/eval/like-has-sets", test_like_has_sets },
                                    { "/policy/eval/errors-deny", test_errors_deny },
                                    { "/policy/message/text", test_messages },
                                    { "/policy/decision/pack", test_decision_pack },
                                    { "/policy/message/resource-label", test_resource_labels },
                                    { "/policy/threads", test_threads },
                                    { "/policy/may-permit-beneath", test_may_permit_beneath },
                                    { "/policy/generated-actions", test_generated_actions } };
  return test_run_table(&argc, &argv, cases, G_N_ELEMENTS(cases));
}
