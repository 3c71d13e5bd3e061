/* test_policy.c — unit tests for policy/ (spec/policy.md). */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/policy.h"
#include "policy/policy-private.h" /* the log renderers, compared */

static const char *seed_policy =
    "// seed example\n"
    "@id(\"exec-project\")\n"
    "permit(principal, action == Box::Action::\"shell:exec\", resource)\n"
    "when { context.input.cwd == \"/home/op/src/project\" || context.input.cwd like \"/home/op/src/project/*\" };\n"
    "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], resource)\n"
    "when { context.input.path like \"~/src/project/*\" };\n"
    "permit(principal, action == Box::Action::\"shell:spawn\", resource)\n"
    "when { context.input.program == \"git\" };\n"
    "@id(\"no-rm\") @description(\"Deleting is not allowed here.\")\n"
    "forbid(principal, action == Box::Action::\"shell:exec\", resource) when { context.input.program == \"rm\" };\n";

/* ---- helpers ------------------------------------------------------------- */

static BoxPolicy *load_ok(const char *text) {
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(text, NULL, &error);
  if (!p) g_printerr("unexpected load failure: %s\n", error->message);
  g_assert_no_error(error);
  g_assert_nonnull(p);
  return p;
}

static void assert_load_error(const char *text, const char *expected) {
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(text, NULL, &error);
  g_assert_null(p);
  g_assert_nonnull(error);
  g_assert_true(error->domain == BOX_POLICY_ERROR);
  g_assert_cmpstr(error->message, ==, expected);
  g_error_free(error);
}

static json_object *fs_input(const char *path, const char *op) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "path", json_object_new_string(path));
  json_object_object_add(o, "operation", json_object_new_string(op));
  return o;
}

static json_object *exec_input(const char *program, const char *cwd, const char *arg1) {
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

static json_object *spawn_input(const char *program, const char *path) {
  json_object *o = exec_input(program, "/home/op/src/project", NULL);
  json_object_object_add(o, "program_path", json_object_new_string(path));
  return o;
}

static BoxDecision *decide(BoxPolicy *p, const char *action, json_object *input) {
  BoxDecision *d = box_policy_decide(p, action, input);
  json_object_put(input);
  g_assert_nonnull(d);
  g_assert_nonnull(d->message);
  g_assert_nonnull(d->rule);
  g_assert_nonnull(d->determining_ids);
  return d;
}

/* A malformed request is refused as an internal fault, and the warning
 * names what is wrong: a missing required attribute (the first one
 * declared), an undeclared one, a wrong type, a value outside its enum. */
static void test_malformed_requests(void) {
  if (g_test_subprocess()) {
    BoxPolicy *p = load_ok("permit(principal, action, resource);");
    json_object *inputs[5];
    inputs[0] = json_object_new_object(); /* neither path nor operation */
    inputs[1] = fs_input("/w/a", "read_content");
    json_object_object_del(inputs[1], "operation");
    inputs[2] = fs_input("/w/a", "read_content");
    json_object_object_add(inputs[2], "colour", json_object_new_string("red"));
    inputs[3] = fs_input("/w/a", "read_content");
    json_object_object_add(inputs[3], "path", json_object_new_int(7));
    inputs[4] = fs_input("/w/a", "juggle");
    for (guint i = 0; i < G_N_ELEMENTS(inputs); i++) {
      BoxDecision *d = box_policy_decide(p, "fs:read", inputs[i]);
      g_assert_cmpint(d->verdict, ==, BOX_VERDICT_DENY);
      g_assert_cmpint(d->cause, ==, BOX_CAUSE_INTERNAL_FAULT);
      g_assert_cmpstr(d->rule, ==, "<default-deny>");
      g_assert_cmpstr(d->reason, ==, "the request could not be evaluated, so it was refused");
      box_decision_free(d);
      json_object_put(inputs[i]);
    }
    json_object *good = fs_input("/w/a", "read_content");
    BoxDecision *d = box_policy_decide(p, "fs:read", good);
    g_assert_cmpint(d->verdict, ==, BOX_VERDICT_PERMIT);
    box_decision_free(d);
    json_object_put(good);
    box_policy_free(p);
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
  g_test_trap_assert_stderr("*required attribute `input.path` is missing for Box::Action::\"fs:read\"*"
                            "*required attribute `input.operation` is missing for Box::Action::\"fs:read\"*"
                            "*attribute `input.colour` is not declared for Box::Action::\"fs:read\"*"
                            "*attribute `input.path` has the wrong type for Box::Action::\"fs:read\"*"
                            "*attribute `input.operation` has the wrong type for Box::Action::\"fs:read\"*");
}

/* ---- parsing and load errors ---------------------------------------------- */

static void test_parse_errors(void) {
  assert_load_error("permit(principal, action, resource)",
                    "failed to parse policy source: dogwood parse: unexpected end of input; expected `;` to end the "
                    "policy, or `when`/`unless` to add a condition at line 1, column 36");
  assert_load_error("permit(principal, action, resource)\nwhen { context.input.port / 2 == 1 };",
                    "failed to parse policy source: dogwood parse: `/` is not a supported operator at line 2, column 27");
  assert_load_error("permit(principal, action, resource) when { 7 % 2 == 1 };",
                    "failed to parse policy source: dogwood parse: `%` is not a supported operator at line 1, column 46");
  assert_load_error("allow(principal, action, resource);",
                    "failed to parse policy source: dogwood parse: policy effect must be `permit` or `forbid`, found "
                    "`allow` at line 1, column 1");
  assert_load_error("permit(principal, principal, resource);",
                    "failed to parse policy source: dogwood parse: duplicate `principal` in scope at line 1, column 19");
  assert_load_error("permit(principal, action = Box::Action::\"fs:read\", resource);",
                    "failed to parse policy source: dogwood parse: unexpected `=`; did you mean `==`? at line 1, column 26");
  assert_load_error("permit(principal, action, resource)\n  when { foo == 1 };",
                    "failed to parse policy source: dogwood parse: `foo` is not a valid variable at line 2, column 10");
  assert_load_error("permit(principal, action, resource) when { \"a\\q\" == \"b\" };",
                    "failed to parse policy source: dogwood parse: invalid escape `\\q` in string literal at line 1, column 44");
  assert_load_error("permit(principal, action, resource) when { 9223372036854775808 > 0 };",
                    "failed to parse policy source: dogwood parse: integer literal `9223372036854775808` is out of "
                    "range at line 1, column 44");
  assert_load_error("permit(principal, action, resource) when { \"x\" like context.input.path };",
                    "failed to parse policy source: dogwood parse: the pattern after `like` must be a string literal "
                    "at line 1, column 53");
  assert_load_error("permit(principal, action, resource) when { ip(\"1.2.3.4\") == 1 };",
                    "policy fails schema validation: the types Long and ipaddr are not "
                    "compatible at line 1, column 58");
  assert_load_error("permit(principal, action, resource) when { [1].size() == 1 };",
                    "failed to parse policy source: dogwood parse: `size` is not a supported method at line 1, column 48");
  assert_load_error("permit(principal, action, resource) when { \"abc\n",
                    "failed to parse policy source: dogwood parse: unterminated string literal at line 1, column 44");
  assert_load_error("permit(principal, action, resource) when { !-1 == 1 };",
                    "failed to parse policy source: dogwood parse: unary operators `!` and `-` cannot be mixed at line 1, column 45");
  /* trees too deep to evaluate safely are refused */
  GString *deep = g_string_new("permit(principal, action, resource) when { 1");
  for (int i = 0; i < 5000; i++) g_string_append(deep, " + 1");
  g_string_append(deep, " > 0 };");
  GError *error = NULL;
  g_assert_null(box_policy_load_string(deep->str, NULL, &error));
  g_assert_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE);
  g_assert_true(g_str_has_prefix(error->message, "failed to parse policy source: dogwood parse: expression nests too deeply at line 1, column "));
  g_clear_error(&error);
  g_string_free(deep, TRUE);
  /* a column counts characters, not bytes */
  assert_load_error("// é\npermit(principal, action, resource) when { \"é\" == # };",
                    "failed to parse policy source: dogwood parse: unexpected character `#` at line 2, column 51");
}

static void test_parse_accepts(void) {
  /* everything the first cut must understand */
  BoxPolicy *p = load_ok(
      "@id(\"a\") @description(\"d\") @other(\"ignored\") @flag\n"
      "permit(principal == Box::Agent::\"self\", action in Box::Action::\"fs:read\", resource == "
      "Box::Resource::\"unused\")\n"
      "when { if context.input.path like \"a\\*b*\" then true else -9223372036854775808 < 0 }\n"
      "unless { !(context.input has path) || context.input[\"path\"] == \"x\\u{1F600}\\n\\t\\r\\0\\\\\\\"\\'\" }\n"
      "when { [1, 2, 3,].contains(2) && [1].containsAll([1]) && [1].containsAny([2, 1]) && ![1].isEmpty() == true };\n"
      "forbid(principal, action, resource,) when { {a: 1, \"b\": [true]} has b && principal is Box::Agent };\n"
      "permit();\n");
  g_assert_cmpuint(box_policy_warnings(p)->len, ==, 0);
  box_policy_free(p);
  /* comments only and empty files load */
  box_policy_free(load_ok("// nothing here\n"));
  box_policy_free(load_ok(""));
}

static void test_unknown_action(void) {
  assert_load_error("permit(principal, action == Box::Action::\"fs:raed\", resource);",
                    "policy references unknown action: for policy `policy_0`, unrecognized action "
                    "`Box::Action::\"fs:raed\"` at line 1, column 29; for policy `policy_0`, unable to "
                    "find an applicable action given the policy scope constraints at line 1, column 19");
  assert_load_error("permit(principal, action, resource);\n"
                    "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:exec\"], resource);",
                    "policy references unknown action: for policy `policy_1`, unrecognized action "
                    "`Box::Action::\"fs:exec\"` at line 2, column 54");
  assert_load_error("permit(principal, action, resource) when { action == Action::\"shell\" };",
                    "policy references unknown action: for policy `policy_0`, unrecognized action "
                    "`Action::\"shell\"` at line 1, column 54");
}

static void test_duplicate_id(void) {
  assert_load_error("@id(\"a\") permit(principal, action, resource);\n"
                    "@id(\"b\") permit(principal, action, resource);\n"
                    "@id(\"a\") permit(principal, action, resource);\n"
                    "@id(\"b\") permit(principal, action, resource);\n"
                    "@id(\"a\") permit(principal, action, resource);\n"
                    "@id(\"  \") permit(principal, action, resource);\n"
                    "@id(\"  \") permit(principal, action, resource);\n",
                    "policy gives one @id to more than one rule: @id(\"a\") is on rules 1, 3, 5; "
                    "@id(\"b\") is on rules 2, 4; a denial and a telemetry record name a rule by its "
                    "@id, so give each rule its own @id at line 3, column 1");
}

static void test_schema_errors(void) {
  assert_load_error("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                    "when { context.input.operation == Box::FsReadOperation::\"list\" };",
                    "policy fails schema validation: for policy `policy_0`: entity "
                    "`Box::FsReadOperation::\"list\"` is of an enumerated entity type, but `\"list\"` is "
                    "not declared as a valid eid at line 2, column 35");
  assert_load_error("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                    "when { context.input.paht == \"x\" };",
                    "policy fails schema validation: for policy `policy_0`, attribute `input.paht` in "
                    "context for Box::Action::\"fs:read\" not found at line 2, column 22");
  /* an unconstrained scope is checked against every action */
  assert_load_error("permit(principal, action, resource) when { context.input.path like \"~/x/*\" };",
                    "policy fails schema validation: for policy `policy_0`, attribute `input.path` in "
                    "context for Box::Action::\"net:connect\" not found at line 1, column 58");
  assert_load_error("permit(principal, action == Box::Action::\"shell:exec\", resource)\n"
                    "when { context.input.arg1 == \"-rf\" };",
                    "policy fails schema validation: for policy `policy_0`, unable to guarantee safety of "
                    "access to optional attribute `input.arg1` in context for Box::Action::\"shell:exec\" "
                    "at line 2, column 22");
  assert_load_error("permit(principal, action, resource == Box::\"codex\");",
                    "policy fails schema validation: for policy `policy_0`, unrecognized entity type "
                    "`Box` at line 1, column 39");
  assert_load_error("@id(\"other_only\") permit(principal, action == Box::Action::\"fs:other\", resource);",
                    "policy names only a reserved action: rule @id(\"other_only\") (rule 1) names only "
                    "the reserved action \"fs:other\"; no operation raises it, so the rule cannot match; "
                    "name fs:read, fs:write, fs:delete, or fs:move, alone or beside fs:other at line 1, "
                    "column 37");
  /* guarded accesses load */
  box_policy_free(load_ok("permit(principal, action == Box::Action::\"shell:exec\", resource)\n"
                          "when { context.input has arg1 && context.input.arg1 == \"-rf\" };\n"
                          "permit(principal, action, resource)\n"
                          "when { context.input has path && context.input.path like \"~/x/*\" };\n"
                          "permit(principal, action == Box::Action::\"shell:spawn\", resource)\n"
                          "when { if context.input has arg2 then context.input.arg2 == \"x\" else false };\n"
                          "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:other\"], resource);\n"));
}

static void test_file_load(void) {
  char *dir = g_dir_make_tmp("policy-test-XXXXXX", NULL);
  char *path = g_build_filename(dir, "policy.dw", NULL);
  g_assert_true(g_file_set_contents(path, seed_policy, -1, NULL));
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_file(path, "/home/op", &error);
  g_assert_no_error(error);
  box_policy_free(p);
  char *missing = g_build_filename(dir, "absent.dw", NULL);
  g_assert_null(box_policy_load_file(missing, NULL, &error));
  g_assert_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO);
  g_clear_error(&error);
  g_unlink(path);
  g_rmdir(dir);
  g_free(missing);
  g_free(path);
  g_free(dir);
}

/* ---- evaluation ------------------------------------------------------------- */

static void test_seed_decisions(void) {
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
  g_assert_cmpstr(d->message, ==, "policy denied this operation on 'rm' [policy: no-rm]: Deleting is not allowed here.");
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
                  "policy denied this operation on '~/src/project/todo.txt' [default-deny]: No permit policy matched this request.");
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

static BoxCause decide_cause(BoxPolicy *p, const char *action, json_object *input) {
  BoxDecision *d = decide(p, action, input);
  BoxCause c = d->cause;
  box_decision_free(d);
  return c;
}

static void test_like_has_sets(void) {
  BoxPolicy *p = load_ok(
      "permit(principal, action == Box::Action::\"fs:read\", resource)\n"
      "when { context.input.path like \"~/a*b\\*c*\" };\n"
      "permit(principal, action == Box::Action::\"shell:exec\", resource)\n"
      "when { context.input has arg1 && [\"status\", \"diff\"].contains(context.input.arg1) };\n"
      "permit(principal, action == Box::Action::\"fs:write\", resource)\n"
      "when { context.input.operation == Box::FsWriteOperation::\"create_dir\" && context has input "
      "&& !(context.input has ip) && action in [Box::Action::\"fs:write\"] };\n"
      "permit(principal, action == Box::Action::\"fs:move\", resource)\n"
      "when { context.input.path == \"x\" || (if context.input.path like \"*.md\" then 1 + 2 * 3 == 7 else false) };\n");
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("~/ab*c", "read_content")), ==, BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("~/a/x/b*c/d", "read_content")), ==, BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("~/abxc", "read_content")), ==, BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("/~/ab*c", "read_content")), ==, BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "shell:exec", exec_input("git", "/", "diff")), ==, BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "shell:exec", exec_input("git", "/", "push")), ==, BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "shell:exec", exec_input("git", "/", NULL)), ==, BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "fs:write", fs_input("~/d", "create_dir")), ==, BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:write", fs_input("~/d", "write_content")), ==, BOX_CAUSE_NO_MATCH);
  g_assert_cmpint(decide_cause(p, "fs:move", fs_input("~/README.md", "rename")), ==, BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:move", fs_input("~/README.txt", "rename")), ==, BOX_CAUSE_NO_MATCH);
  box_policy_free(p);
}

static void test_errors_deny(void) {
  /* overflow in a forbid: internal fault, attribution = the matching permit */
  BoxPolicy *p = load_ok("permit(principal, action, resource);\n"
                         "forbid(principal, action, resource) when { 9223372036854775807 + 1 > 0 };");
  BoxDecision *d = decide(p, "fs:read", fs_input("~/x", "read_content"));
  g_assert_cmpint(d->verdict, ==, BOX_VERDICT_DENY);
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_INTERNAL_FAULT);
  g_assert_cmpstr(d->rule, ==, "<default-deny>");
  g_assert_cmpstr(d->reason, ==, "the request could not be evaluated, so it was refused");
  g_assert_cmpstr(d->message, ==, "policy denied this operation on '~/x' because the request could not be evaluated.");
  g_assert_cmpuint(d->determining_ids->len, ==, 1);
  g_assert_cmpstr(d->determining_ids->pdata[0], ==, "policy_0");
  box_decision_free(d);
  box_policy_free(p);

  /* type mismatches are refused at load (strict validation) */
  assert_load_error("permit(principal, action == Box::Action::\"fs:read\", resource) when { context.input.path == 1 || context.input.path == \"a\" };",
                    "policy fails schema validation: the types Long and String are not "
                    "compatible at line 1, column 89");
  assert_load_error("permit(principal, action == Box::Action::\"fs:read\", resource) when { true };\n"
                    "permit(principal, action == Box::Action::\"net:connect\", resource) when { context.input.host < 3 };",
                    "policy fails schema validation: for policy `policy_1`, unexpected type: expected Long but saw "
                    "String at line 2, column 88");
  assert_load_error("permit(principal, action == Box::Action::\"shell:exec\", resource) when { context.input.arg_count - 1 };",
                    "policy fails schema validation: for policy `policy_0`, unexpected type: expected Bool but saw "
                    "Long at line 1, column 97");
  assert_load_error("permit(principal, action == Box::Action::\"fs:read\", resource) when { context.input.operation == \"read_content\" };",
                    "policy fails schema validation: the types String and Box::FsReadOperation "
                    "are not compatible at line 1, column 94");
  /* overflow is an evaluation error, which denies the whole request */
  p = load_ok("permit(principal, action == Box::Action::\"http:request\", resource) when { -9223372036854775808 * -1 == 0 };\n"
              "permit(principal, action == Box::Action::\"fs:read\", resource) when { context.input.path == \"a\" };\n");
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("a", "read_content")), ==, BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("b", "read_content")), ==, BOX_CAUSE_NO_MATCH);
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
static void assert_same_decision(const BoxDecision *a, const BoxDecision *b) {
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

static void test_decision_pack(void) {
  BoxPolicy *p = load_ok("@id(\"no_rm\") @description(\"Deleting is off\")\n"
                         "forbid(principal, action == Box::Action::\"shell:exec\", resource) when { context.input.program == \"rm\" };\n"
                         "forbid(principal, action == Box::Action::\"shell:exec\", resource) when { context.input.program == \"rm\" };\n"
                         "permit(principal, action, resource);\n");
  BoxDecision *denied = decide(p, "shell:exec", exec_input("rm", "/", NULL));
  BoxDecision *permitted = decide(p, "fs:read", fs_input("~/a.txt", "read_metadata"));
  BoxDecision *both[] = {denied, permitted};
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

static void test_messages(void) {
  BoxPolicy *p = load_ok("@id(\"no_rm\") @description(\"Deleting is off\")\n"
                         "forbid(principal, action == Box::Action::\"shell:exec\", resource) when { context.input.program == \"rm\" };\n"
                         "forbid(principal, action == Box::Action::\"shell:exec\", resource) when { context.input.program == \"rm\" };\n"
                         "@id(\"x\") @description(\"Really?\") forbid(principal, action == Box::Action::\"fs:read\", resource) when { context.input.path like \"*env*\" };\n"
                         "@id(\"tab\\there\") @description(\"quote \\\" and \\u{202e}\") forbid(principal, action == Box::Action::\"fs:write\", resource);\n"
                         "permit(principal, action, resource);\n");
  BoxDecision *d = decide(p, "shell:exec", exec_input("rm", "/", NULL));
  g_assert_cmpstr(d->message, ==, "policy denied this operation on 'rm' [policy: no_rm]: Deleting is off; [policy: policy_1].");
  g_assert_cmpstr(d->rule, ==, "no_rm");
  g_assert_cmpuint(d->determining_ids->len, ==, 2);
  g_assert_cmpstr(d->determining_ids->pdata[1], ==, "policy_1");
  box_decision_free(d);

  /* resource escaping (escape_debug); description ending in '?' keeps its end */
  d = decide(p, "fs:read", fs_input("~/it's \"env\"\\\n\x1b\xe2\x80\xae", "read_content"));
  g_assert_cmpstr(d->message, ==,
                  "policy denied this operation on '~/it\\'s \\\"env\\\"\\\\\\n\\u{1b}\\u{202e}' [policy: x]: Really?");
  box_decision_free(d);

  /* annotation escaping: controls and bidi escaped, quotes verbatim */
  d = decide(p, "fs:write", fs_input("", "write_content"));
  g_assert_cmpstr(d->message, ==, "policy denied this operation [policy: tab\\there]: quote \" and \\u{202e}.");
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
  d = box_decision_new_enforcement("fs:read", "~/.box/x", "reach-floor", "the box directory is out of reach");
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_ENFORCEMENT);
  g_assert_cmpstr(d->rule, ==, "enforcement:reach-floor");
  g_assert_cmpstr(d->reason, ==, "the box directory is out of reach");
  g_assert_cmpstr(d->message, ==, "the box directory is out of reach");
  box_decision_free(d);
}

static void test_resource_labels(void) {
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

/* ---- decision log -------------------------------------------------------------- */

static json_object *get_path(json_object *o, const char *const *path) {
  for (; *path; path++) {
    json_object *n = NULL;
    if (g_ascii_isdigit(**path)) n = json_object_array_get_idx(o, (size_t)atoi(*path));
    else json_object_object_get_ex(o, *path, &n);
    g_assert_nonnull(n);
    o = n;
  }
  return o;
}

static const char *attr_string(json_object *attr) {
  json_object *v = NULL, *s = NULL;
  g_assert_true(json_object_object_get_ex(attr, "value", &v));
  if (!json_object_object_get_ex(v, "stringValue", &s)) return NULL;
  return json_object_get_string(s);
}


/* The hand-written log rendering is byte for byte json-c's, over decisions
 * of every action family, with strings that need escaping and truncation. */
static void test_log_render_matches_json_c(void) {
  char *dir = g_dir_make_tmp("policy-log-XXXXXX", NULL);
  char *path = g_build_filename(dir, "records.jsonl", NULL);
  BoxDecisionLog *log = box_decision_log_open(path, "box \"1\"/\x01", "run\\7", NULL);
  g_assert_nonnull(log);
  BoxPolicy *p = load_ok(seed_policy);
  GString *longs = g_string_new(NULL);
  for (int i = 0; i < 5000; i++) g_string_append(longs, "\xc3\xa9x");
  const char *paths[] = {"~/src/project/todo.txt", "/tmp/a\"b\\c\n\t\x7f\x1f/\xe2\x82\xac", longs->str, "~/.ssh/id"};
  guint checked = 0;
  for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
    const char *ops[] = {"read_content", "write_content"};
    for (guint k = 0; k < 2; k++) {
      const char *action = k ? "fs:write" : "fs:read";
      json_object *in = fs_input(paths[i], ops[k]);
      BoxDecision *d = box_policy_decide(p, action, in);
      if (i == 1) d->dry_run = true;
      if (i == 2) {
        g_free(d->description);
        d->description = g_strdup("a \"described\" rule\r\f\b");
      }
      char *a = policy_decision_log_render(log, action, in, NULL, d, "123", "ab", "cd");
      char *b = policy_decision_log_render_ref(log, action, in, NULL, d, "123", "ab", "cd");
      g_assert_cmpstr(a, ==, b);
      checked++;
      g_free(a);
      g_free(b);
      box_decision_free(d);
      json_object_put(in);
    }
  }
  json_object *in = exec_input("rm", "/home/op/src/project", "-rf");
  BoxDecision *d = box_policy_decide(p, "shell:exec", in);
  const char *argv[] = {"-rf", "to\"do.txt", "--name=secret", "--long-flag", "$X", NULL};
  const bool literal[] = {true, true, false, false, false};
  BoxCommandArgs args = {argv, literal, 5};
  char *a = policy_decision_log_render(log, "shell:exec", in, &args, d, "1", "t", "s");
  char *b = policy_decision_log_render_ref(log, "shell:exec", in, &args, d, "1", "t", "s");
  g_assert_cmpstr(a, ==, b);
  g_free(a);
  g_free(b);
  box_decision_free(d);
  json_object_put(in);
  const char *nets[] = {"net:connect", "http:request"};
  for (guint i = 0; i < 2; i++) {
    in = json_object_new_object();
    json_object_object_add(in, "host", json_object_new_string("example.com"));
    if (i) json_object_object_add(in, "port", json_object_new_string("443x"));
    else json_object_object_add(in, "port", json_object_new_int64(443));
    json_object_object_add(in, "method", json_object_new_string("GET"));
    json_object_object_add(in, "url", json_object_new_string("https://example.com/"));
    d = box_policy_decide(p, nets[i], in);
    a = policy_decision_log_render(log, nets[i], in, NULL, d, "1", "t", "s");
    b = policy_decision_log_render_ref(log, nets[i], in, NULL, d, "1", "t", "s");
    g_assert_cmpstr(a, ==, b);
    g_free(a);
    g_free(b);
    box_decision_free(d);
    json_object_put(in);
  }
  g_assert_cmpuint(checked, ==, 8);
  g_string_free(longs, TRUE);
  box_decision_log_close(log);
  box_policy_free(p);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

/* A file operation's line waits in the queue: not in the file until a flush,
 * an ordinary append (which writes the queue first, keeping the order the
 * lines were made in) or the close; four threads' lines all arrive whole. */
static char *log_text(const char *path) {
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  return text;
}

static guint count_of(const char *text, const char *needle) {
  guint n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

typedef struct {
  BoxDecisionLog *log;
  BoxPolicy *policy;
  int id;
} QueueWorker;

static gpointer queue_worker(gpointer data) {
  QueueWorker *w = data;
  for (int i = 0; i < 500; i++) {
    char path[64];
    g_snprintf(path, sizeof path, "/ws/t%d/f%d", w->id, i);
    json_object *in = fs_input(path, "read_metadata");
    BoxDecision *d = box_policy_decide(w->policy, "fs:read", in);
    box_decision_log_append_queued(w->log, "fs:read", in, d);
    json_object_put(in);
    box_decision_free(d);
  }
  return NULL;
}

static void test_decision_log_queue(void) {
  char *dir = g_dir_make_tmp("policy-logq-XXXXXX", NULL);
  char *path = g_build_filename(dir, "records.jsonl", NULL);
  BoxDecisionLog *log = box_decision_log_open(path, "box-1", "run-1", NULL);
  g_assert_nonnull(log);
  BoxPolicy *p = load_ok("permit(principal, action, resource);");
  const char *paths[] = {"/ws/first", "/ws/second", "/ws/third"};
  for (int i = 0; i < 2; i++) {
    json_object *in = fs_input(paths[i], "read_content");
    BoxDecision *d = box_policy_decide(p, "fs:read", in);
    box_decision_log_append_queued(log, "fs:read", in, d);
    json_object_put(in);
    box_decision_free(d);
  }
  char *text = log_text(path);
  /* the writer thread waits a few ms for more lines: nothing is written yet */
  g_assert_cmpuint(count_of(text, "/ws/first"), ==, 0);
  g_free(text);
  json_object *in = fs_input(paths[2], "read_content");
  BoxDecision *d = box_policy_decide(p, "fs:read", in);
  box_decision_log_append(log, "fs:read", in, NULL, d);
  json_object_put(in);
  box_decision_free(d);
  text = log_text(path);
  const char *a = strstr(text, "/ws/first"), *b = strstr(text, "/ws/second"), *c = strstr(text, "/ws/third");
  g_assert_true(a && b && c && a < b && b < c);
  /* a queued decision's lines, rendered by the writer, are the lines an
   * ordinary append makes (but for times and ids) */
  char **got = g_strsplit(text, "\n", -1);
  g_assert_cmpuint(g_strv_length(got), ==, 7);
  in = fs_input(paths[0], "read_content");
  d = box_policy_decide(p, "fs:read", in);
  char *want = policy_decision_log_render(log, "fs:read", in, NULL, d, "1", "ab", "cd");
  json_object_put(in);
  box_decision_free(d);
  GRegex *ids = g_regex_new("\"(timeUnixNano|observedTimeUnixNano|traceId|spanId|startTimeUnixNano|"
                            "endTimeUnixNano)\":\"[0-9a-f]*\"", 0, 0, NULL);
  char *got2 = g_strconcat(got[0], "\n", got[1], "\n", NULL);
  char *x = g_regex_replace(ids, got2, -1, 0, "\"\\1\":\"\"", 0, NULL);
  char *y = g_regex_replace(ids, want, -1, 0, "\"\\1\":\"\"", 0, NULL);
  g_assert_cmpstr(x, ==, y);
  g_free(x);
  g_free(y);
  g_free(got2);
  g_free(want);
  g_regex_unref(ids);
  g_strfreev(got);
  g_free(text);

  QueueWorker w[4];
  GThread *t[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (QueueWorker){log, p, i};
    t[i] = g_thread_new("q", queue_worker, &w[i]);
  }
  for (int i = 0; i < 4; i++) g_thread_join(t[i]);
  box_decision_log_flush(log);
  text = log_text(path);
  g_assert_cmpuint(count_of(text, "{\"resourceLogs\""), ==, 3 + 4 * 500);
  g_free(text);

  in = fs_input("/ws/last", "read_content");
  d = box_policy_decide(p, "fs:read", in);
  box_decision_log_append_queued(log, "fs:read", in, d);
  json_object_put(in);
  box_decision_free(d);
  box_decision_log_close(log);
  text = log_text(path);
  char **lines = g_strsplit(text, "\n", -1);
  guint n = g_strv_length(lines);
  g_assert_cmpuint(n, ==, 2 * (4 + 4 * 500) + 1);
  for (guint i = 0; i + 1 < n; i++) {
    json_object *o = json_tokener_parse(lines[i]);
    g_assert_nonnull(o); /* every line whole */
    json_object_put(o);
  }
  g_assert_nonnull(strstr(lines[n - 3], "/ws/last"));
  g_strfreev(lines);
  g_free(text);
  box_policy_free(p);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

static void test_decision_log(void) {
  char *dir = g_dir_make_tmp("policy-log-XXXXXX", NULL);
  char *path = g_build_filename(dir, "records.jsonl", NULL);
  GError *error = NULL;
  BoxDecisionLog *log = box_decision_log_open(path, "box-1", "run-7", &error);
  g_assert_no_error(error);

  BoxPolicy *p = load_ok(seed_policy);
  json_object *in = exec_input("rm", "/home/op/src/project", "-rf");
  BoxDecision *d = box_policy_decide(p, "shell:exec", in);
  const char *args[] = {"-rf", "todo.txt", NULL};
  box_decision_log_append(log, "shell:exec", in, args, d);
  json_object_put(in);
  box_decision_free(d);

  in = fs_input("~/src/project/todo.txt", "read_content");
  d = box_policy_decide(p, "fs:read", in);
  box_decision_log_append(log, "fs:read", in, NULL, d);
  json_object_put(in);
  box_decision_free(d);

  in = json_object_new_object();
  json_object_object_add(in, "host", json_object_new_string("example.com"));
  json_object_object_add(in, "port", json_object_new_int64(443));
  d = box_policy_decide(p, "net:connect", in);
  box_decision_log_append(log, "net:connect", in, NULL, d);
  json_object_put(in);
  box_decision_free(d);
  box_decision_log_close(log);
  box_policy_free(p);

  GStatBuf st;
  g_assert_cmpint(g_stat(path, &st), ==, 0);
  g_assert_cmpint(st.st_mode & 0777, ==, 0600);

  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  /* per decision: the log record's line, then its span's line */
  g_assert_cmpuint(g_strv_length(lines), ==, 7);
  g_assert_cmpstr(lines[6], ==, "");

  /* line 1: the forbidden shell:exec */
  json_object *root = json_tokener_parse(lines[0]);
  g_assert_nonnull(root);
  const char *res_path[] = {"resourceLogs", "0", "resource", "attributes", NULL};
  json_object *rattrs = get_path(root, res_path);
  g_assert_cmpuint(json_object_array_length(rattrs), ==, 4);
  g_assert_cmpstr(attr_string(json_object_array_get_idx(rattrs, 1)), ==, "box-1");
  g_assert_cmpstr(attr_string(json_object_array_get_idx(rattrs, 3)), ==, "run-7");
  const char *scope_path[] = {"resourceLogs", "0", "scopeLogs", "0", "scope", "name", NULL};
  g_assert_cmpstr(json_object_get_string(get_path(root, scope_path)), ==, "strands-box.policy");
  const char *rec_path[] = {"resourceLogs", "0", "scopeLogs", "0", "logRecords", "0", NULL};
  json_object *rec = get_path(root, rec_path);
  const char *sev[] = {"severityNumber", NULL}, *sevt[] = {"severityText", NULL}, *ev[] = {"eventName", NULL};
  const char *body[] = {"body", "stringValue", NULL}, *tid[] = {"traceId", NULL}, *sid[] = {"spanId", NULL};
  const char *tn[] = {"timeUnixNano", NULL};
  g_assert_cmpint(json_object_get_int(get_path(rec, sev)), ==, 13);
  g_assert_cmpstr(json_object_get_string(get_path(rec, sevt)), ==, "deny");
  g_assert_cmpstr(json_object_get_string(get_path(rec, ev)), ==, "strands.box.policy.decision");
  g_assert_cmpstr(json_object_get_string(get_path(rec, body)), ==,
                  "policy denied this operation on 'rm' [policy: no-rm]: Deleting is not allowed here.");
  g_assert_cmpuint(strlen(json_object_get_string(get_path(rec, tid))), ==, 32);
  g_assert_cmpuint(strlen(json_object_get_string(get_path(rec, sid))), ==, 16);
  g_assert_true(json_object_is_type(get_path(rec, tn), json_type_string));

  const char *attrs_path[] = {"attributes", NULL};
  json_object *attrs = get_path(rec, attrs_path);
  const char *want_keys[] = {"strands.box.policy.principal", "strands.box.policy.action",
                             "strands.box.policy.resource",  "strands.box.policy.verdict",
                             "strands.box.policy.cause",     "strands.box.policy.reason",
                             "strands.box.policy.rule",      "strands.box.policy.category",
                             "strands.box.policy.description", "process.command",
                             "process.command_args",         "process.working_directory",
                             "strands.box.policy.determining.ids"};
  const char *want_vals[] = {"agent:self", "shell:exec", "rm", "deny", "forbidden", "a forbid rule matched",
                             "no-rm", "shell", "Deleting is not allowed here.", "rm", NULL,
                             "/home/op/src/project", NULL};
  g_assert_cmpuint(json_object_array_length(attrs), ==, G_N_ELEMENTS(want_keys));
  for (size_t i = 0; i < G_N_ELEMENTS(want_keys); i++) {
    json_object *a = json_object_array_get_idx(attrs, i);
    json_object *k = NULL;
    json_object_object_get_ex(a, "key", &k);
    g_assert_cmpstr(json_object_get_string(k), ==, want_keys[i]);
    if (want_vals[i]) g_assert_cmpstr(attr_string(a), ==, want_vals[i]);
  }
  const char *argv_path[] = {"10", "value", "arrayValue", "values", NULL};
  json_object *argv = get_path(attrs, argv_path);
  g_assert_cmpuint(json_object_array_length(argv), ==, 2);
  json_object *arg1 = NULL;
  g_assert_true(json_object_object_get_ex(json_object_array_get_idx(argv, 1), "stringValue", &arg1));
  g_assert_cmpstr(json_object_get_string(arg1), ==, "todo.txt");
  const char *ids_path[] = {"12", "value", "arrayValue", "values", "0", "stringValue", NULL};
  g_assert_cmpstr(json_object_get_string(get_path(attrs, ids_path)), ==, "no-rm");

  /* its span (runtime.md §8.2): INTERNAL, start = end, `policy <action>`, the same ids,
   * resource, scope and attributes, and nothing but resourceSpans on its line */
  json_object *span_root = json_tokener_parse(lines[1]);
  g_assert_nonnull(span_root);
  g_assert_cmpint(json_object_object_length(span_root), ==, 1);
  const char *span_path[] = {"resourceSpans", "0", "scopeSpans", "0", "spans", "0", NULL};
  const char *sscope_path[] = {"resourceSpans", "0", "scopeSpans", "0", "scope", "name", NULL};
  const char *sres_path[] = {"resourceSpans", "0", "resource", "attributes", NULL};
  g_assert_cmpstr(json_object_get_string(get_path(span_root, sscope_path)), ==, "strands-box.policy");
  g_assert_cmpstr(json_object_to_json_string(get_path(span_root, sres_path)), ==,
                  json_object_to_json_string(rattrs));
  json_object *sp = get_path(span_root, span_path);
  const char *name[] = {"name", NULL}, *kind[] = {"kind", NULL}, *stn[] = {"startTimeUnixNano", NULL},
             *et[] = {"endTimeUnixNano", NULL};
  g_assert_cmpstr(json_object_get_string(get_path(sp, name)), ==, "policy shell:exec");
  g_assert_cmpint(json_object_get_int(get_path(sp, kind)), ==, 1);
  g_assert_cmpstr(json_object_get_string(get_path(sp, tid)), ==, json_object_get_string(get_path(rec, tid)));
  g_assert_cmpstr(json_object_get_string(get_path(sp, sid)), ==, json_object_get_string(get_path(rec, sid)));
  g_assert_cmpstr(json_object_get_string(get_path(sp, stn)), ==, json_object_get_string(get_path(rec, tn)));
  g_assert_cmpstr(json_object_get_string(get_path(sp, et)), ==, json_object_get_string(get_path(rec, tn)));
  g_assert_cmpstr(json_object_to_json_string(get_path(sp, attrs_path)), ==, json_object_to_json_string(attrs));
  json_object_put(span_root);
  json_object_put(root);

  /* line 3: a permit: no reason, severity 9, file.path */
  root = json_tokener_parse(lines[2]);
  rec = get_path(root, rec_path);
  g_assert_cmpint(json_object_get_int(get_path(rec, sev)), ==, 9);
  attrs = get_path(rec, attrs_path);
  const char *keys2[] = {"strands.box.policy.principal", "strands.box.policy.action", "strands.box.policy.resource",
                         "strands.box.policy.verdict", "strands.box.policy.cause", "strands.box.policy.rule",
                         "strands.box.policy.category", "file.path", "strands.box.policy.determining.ids"};
  g_assert_cmpuint(json_object_array_length(attrs), ==, G_N_ELEMENTS(keys2));
  for (size_t i = 0; i < G_N_ELEMENTS(keys2); i++) {
    json_object *k = NULL;
    json_object_object_get_ex(json_object_array_get_idx(attrs, i), "key", &k);
    g_assert_cmpstr(json_object_get_string(k), ==, keys2[i]);
  }
  g_assert_cmpstr(attr_string(json_object_array_get_idx(attrs, 7)), ==, "~/src/project/todo.txt");
  json_object_put(root);

  /* line 5: net:connect default deny; server.port is an OTLP intValue string */
  root = json_tokener_parse(lines[4]);
  rec = get_path(root, rec_path);
  attrs = get_path(rec, attrs_path);
  const char *port_path[] = {"9", "value", "intValue", NULL};
  const char *port_key[] = {"9", "key", NULL};
  g_assert_cmpstr(json_object_get_string(get_path(attrs, port_key)), ==, "server.port");
  json_object *port = get_path(attrs, port_path);
  g_assert_true(json_object_is_type(port, json_type_string));
  g_assert_cmpstr(json_object_get_string(port), ==, "443");
  json_object_put(root);

  g_strfreev(lines);
  g_free(text);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

static void test_log_truncation(void) {
  char *dir = g_dir_make_tmp("policy-log-XXXXXX", NULL);
  char *path = g_build_filename(dir, "records.jsonl", NULL);
  BoxDecisionLog *log = box_decision_log_open(path, "b", "r", NULL);
  g_assert_nonnull(log);
  GString *big = g_string_new("/");
  for (int i = 0; i < 5000; i++) g_string_append(big, "\xc3\xa9");
  json_object *in = fs_input(big->str, "read_content");
  BoxPolicy *p = box_policy_new_empty();
  BoxDecision *d = box_policy_decide(p, "fs:read", in);
  box_decision_log_append(log, "fs:read", in, NULL, d);
  box_decision_free(d);
  json_object_put(in);
  box_policy_free(p);
  box_decision_log_close(log);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  json_object *root = json_tokener_parse(text);
  g_assert_nonnull(root);
  const char *res_path[] = {"resourceLogs", "0", "scopeLogs", "0", "logRecords", "0", "attributes", "2",
                            "value", "stringValue", NULL};
  const char *v = json_object_get_string(get_path(root, res_path));
  g_assert_cmpuint(strlen(v), <=, 4096);
  g_assert_true(g_str_has_suffix(v, "\xe2\x80\xa6 (truncated)"));
  g_assert_true(g_utf8_validate(v, -1, NULL));
  json_object_put(root);
  g_free(text);
  g_string_free(big, TRUE);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

/* ---- threads ---------------------------------------------------------------------- */

typedef struct {
  BoxPolicy *policy;
  BoxDecisionLog *log;
  int failures;
} ThreadArg;

static gpointer thread_main(gpointer data) {
  ThreadArg *a = data;
  for (int i = 0; i < 500; i++) {
    json_object *in = (i % 2) ? exec_input("rm", "/home/op/src/project", NULL)
                              : fs_input("~/src/project/x", "read_content");
    const char *action = (i % 2) ? "shell:exec" : "fs:read";
    BoxDecision *d = box_policy_decide(a->policy, action, in);
    BoxCause want = (i % 2) ? BOX_CAUSE_FORBIDDEN : BOX_CAUSE_PERMITTED;
    if (d->cause != want) g_atomic_int_inc(&a->failures);
    box_decision_log_append(a->log, action, in, NULL, d);
    box_decision_free(d);
    json_object_put(in);
  }
  return NULL;
}

static void test_threads(void) {
  char *dir = g_dir_make_tmp("policy-thr-XXXXXX", NULL);
  char *path = g_build_filename(dir, "records.jsonl", NULL);
  ThreadArg arg = {load_ok(seed_policy), box_decision_log_open(path, "b", "r", NULL), 0};
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
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}


/* ---- load pipeline: inert literals, providers, extensions ------------------- */

static void assert_home_error(const char *text, const char *home, const char *expected) {
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(text, home, &error);
  g_assert_null(p);
  g_assert_nonnull(error);
  g_assert_cmpstr(error->message, ==, expected);
  g_error_free(error);
}

static void test_inert_literals(void) {
  const char *fs = "permit(principal, action == Box::Action::\"fs:read\", resource) when { ";
  char *t = g_strconcat(fs, "context.input.path == \"/home/op/src/project\" };", NULL);
  assert_home_error(t, "/home/op",
                    "policy compares an inert literal: the permit rule with no @id compares context.input.path with "
                    "\"/home/op/src/project\", and a path under the operator home is spelled ~/…; write "
                    "\"~/src/project\" at line 1, column 92");
  /* without a home the check is skipped; a sibling of the home is not under it */
  box_policy_free(load_ok(t));
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(t, "/home/o", &error);
  g_assert_no_error(error);
  box_policy_free(p);
  g_free(t);
  assert_home_error("@id(\"x\") permit(principal, action == Box::Action::\"fs:write\", resource) when { "
                    "context.input.path like \"/home/op/*\" };",
                    "/home/op/",
                    "policy compares an inert literal: rule @id(\"x\") compares context.input.path with the pattern "
                    "\"/home/op/*\", and a path under the operator home is spelled ~/…; write \"~/*\" at line 1, "
                    "column 99");
  assert_home_error("forbid(principal, action == Box::Action::\"fs:read\", resource) when { "
                    "[\"~/a\", \"/tmp/d/\"].contains(context.input.path) };",
                    "/home/op",
                    "policy compares an inert literal: the forbid rule with no @id compares context.input.path with "
                    "\"/tmp/d/\", and a directory is spelled without a trailing slash; write \"/tmp/d\" at line 1, "
                    "column 78");
  assert_home_error("permit(principal, action == Box::Action::\"shell:spawn\", resource) when { "
                    "context.input.program_path == \"/home/op\" };",
                    "/home/op",
                    "policy compares an inert literal: the permit rule with no @id compares "
                    "context.input.program_path with \"/home/op\", and a path under the operator home is spelled "
                    "~/…; write \"~\" at line 1, column 104");
  /* warnings: a program spelled as a path, the home after a wildcard */
  p = box_policy_load_string("permit(principal, action == Box::Action::\"shell:exec\", resource) when { "
                             "context.input.program == \"/bin/rm\" };\n"
                             "permit(principal, action == Box::Action::\"fs:read\", resource) when { "
                             "context.input.path like \"*/home/op/x\" };\n"
                             "permit(principal, action, resource) when { context.input has path && context.input.path == \"/tmp/\" };",
                             "/home/op", &error);
  g_assert_no_error(error);
  const GPtrArray *w = box_policy_warnings(p);
  g_assert_cmpuint(w->len, ==, 2);
  g_assert_cmpstr(w->pdata[0], ==,
                  "the permit rule with no @id compares context.input.program with \"/bin/rm\", which matches only a "
                  "first word spelled that way; compare context.input.program_path to match the resolved binary");
  g_assert_cmpstr(w->pdata[1], ==,
                  "the permit rule with no @id compares context.input.path with the pattern \"*/home/op/x\", which "
                  "names the operator home after a wildcard; a path under the operator home is spelled ~/…, so the "
                  "pattern may match nothing");
  box_policy_free(p);
  /* net rules are not checked */
  p = box_policy_load_string("permit(principal, action == Box::Action::\"http:request\", resource) when { "
                             "context.input.path == \"/home/op/x/\" };", "/home/op", &error);
  g_assert_no_error(error);
  box_policy_free(p);
}

static void test_providers_and_extensions(void) {
  assert_load_error("permit(principal, action, resource) when { Acme::budget(\"x\") };",
                    "failed to parse policy source: dogwood: information providers are not enabled in this build "
                    "at line 1, column 44");
  /* a parse error later in the file wins over the provider check */
  assert_load_error("permit(principal, action, resource) when { Acme::budget() };\npermit(",
                    "failed to parse policy source: dogwood parse: unexpected end of input; expected `principal`, "
                    "`action`, or `resource` at line 2, column 8");
  assert_load_error("permit(principal, action, resource) when { ip(\"1.2.3\").isLoopback() };",
                    "policy fails schema validation: for policy `policy_0`, error during extension function argument "
                    "validation: `ip(\"1.2.3\")` is not a valid ip literal at line 1, column 44");
  assert_load_error("permit(principal, action == Box::Action::\"net:connect\", resource) when { "
                    "ip(context.input.host).isLoopback() };",
                    "policy fails schema validation: for policy `policy_0`, extension constructors may not be called "
                    "with non-literal expressions at line 1, column 74");
  assert_load_error("permit(principal, action, resource) when { [].isEmpty() };",
                    "policy fails schema validation: for policy `policy_0`, empty set literals are forbidden in "
                    "policies at line 1, column 44");
  BoxPolicy *p = load_ok(
      "permit(principal, action == Box::Action::\"fs:read\", resource) when { ip(\"127.0.0.1\").isLoopback() && "
      "ip(\"10.1.2.3\").isInRange(ip(\"10.0.0.0/8\")) && !ip(\"::1\").isIpv4() && ip(\"ff02::1\").isMulticast() && "
      "decimal(\"1.5\").lessThan(decimal(\"2.25\")) && decimal(\"-0.5\") == decimal(\"-0.50\") && "
      "datetime(\"2024-01-01\").offset(duration(\"1d\")) == datetime(\"2024-01-02T00:00:00Z\") && "
      "duration(\"1h30m\").toMinutes() == 90 && datetime(\"2024-02-29T12:00:00+0100\").toTime() == duration(\"11h\") && "
      "duration(\"-1ms\") < duration(\"0ms\") && \"b\" != 443 };\n"
      "permit(principal, action == Box::Action::\"fs:write\", resource) when { "
      "datetime(\"2024-01-01\").offset(duration(\"9223372036854775807ms\")) > datetime(\"2024-01-01\") };\n");
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("~/a", "read_content")), ==, BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:write", fs_input("~/a", "write_content")), ==, BOX_CAUSE_INTERNAL_FAULT);
  box_policy_free(p);
  /* `action == ...` narrows typing per action: the guarded read is fine */
  box_policy_free(load_ok("permit(principal, action, resource) when { action == Box::Action::\"shell:exec\" && "
                          "context.input.program == \"git\" };"));
}

static void test_redaction(void) {
  const char *cases[][3] = {
      {"secret", "0", "<redacted>"}, {"secret", "1", "secret"}, {"-rf", "0", "-rf"},
      {"--force", "0", "--force"}, {"--token=abc", "0", "--token=<redacted>"}, {"--Token=abc", "0", "<redacted>"},
      {"--abcdefghijklmnopqrstuvwxyzabcdefg", "0", "<redacted>"}, {"-", "0", "<redacted>"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *r = box_command_arg_redact(cases[i][0], cases[i][1][0] == '1');
    g_assert_cmpstr(r, ==, cases[i][2]);
    g_free(r);
  }
}

/* The history's record writer against json-c itself, on every byte in
 * strings and keys, integer extremes, booleans, and the shapes it leaves
 * to json-c (null, double, nested, unsigned above INT64_MAX). */
static void check_json_append(json_object *rec) {
  const int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
  size_t n = 0;
  const char *want = json_object_to_json_string_length(rec, flags, &n);
  char *copy = g_strndup(want, n);
  GString *o = g_string_new("x");
  policy_json_append(o, rec, flags);
  g_assert_cmpuint(o->len, ==, n + 1);
  g_assert_true(memcmp(o->str + 1, copy, n) == 0);
  g_string_free(o, TRUE);
  /* other flags go through json-c unchanged */
  want = json_object_to_json_string_length(rec, JSON_C_TO_STRING_SPACED, &n);
  g_free(copy);
  copy = g_strndup(want, n);
  o = g_string_new(NULL);
  policy_json_append(o, rec, JSON_C_TO_STRING_SPACED);
  g_assert_cmpstr(o->str, ==, copy);
  g_string_free(o, TRUE);
  g_free(copy);
}

static void test_json_append_matches_json_c(void) {
  json_object *rec = json_object_new_object();
  check_json_append(rec); /* {} */
  char all[256];
  for (int i = 0; i < 256; i++) all[i] = (char)i;
  json_object_object_add(rec, "path", json_object_new_string_len(all, 256)); /* NUL and every byte */
  json_object_object_add(rec, "a/b\"c\\d\x01\x1f\x7f\xc3\xa9", json_object_new_string("~/src/a b/'x'.c"));
  json_object_object_add(rec, "min", json_object_new_int64(INT64_MIN));
  json_object_object_add(rec, "max_minus", json_object_new_int64(INT64_MAX - 1));
  json_object_object_add(rec, "zero", json_object_new_int(0));
  json_object_object_add(rec, "neg", json_object_new_int(-126));
  json_object_object_add(rec, "u", json_object_new_uint64(UINT64_C(9000000000000000000)));
  json_object_object_add(rec, "t", json_object_new_boolean(1));
  json_object_object_add(rec, "f", json_object_new_boolean(0));
  json_object_object_add(rec, "empty", json_object_new_string(""));
  check_json_append(rec);
  for (int i = 0; i < 256; i++) { /* each byte alone, as a key and as a value */
    json_object *one = json_object_new_object();
    char s[3] = {'k', (char)i, 0};
    json_object_object_add(one, i ? s : "k", json_object_new_string_len(all + i, 1));
    check_json_append(one);
    json_object_put(one);
  }
  for (int off = 0; off < 24; off++) { /* an escape at each place in a word, with runs either side */
    const char marks[] = {'"', '\\', '\n', '\x1f', '\x00', ' '};
    for (size_t m = 0; m < sizeof marks; m++) {
      char buf[64];
      memset(buf, 'a', sizeof buf);
      buf[off] = marks[m];
      json_object *one = json_object_new_object();
      json_object_object_add(one, "path", json_object_new_string_len(buf, off + 1 + (off % 11)));
      check_json_append(one);
      json_object_put(one);
    }
  }
  const char *shapes[] = {"{\"a\":null}", "{\"a\":1.5}", "{\"a\":[\"x\"]}", "{\"a\":{\"b\":1}}",
                          "{\"a\":9223372036854775807}", "{\"a\":18446744073709551615}", "{\"a\":\"x\",\"b\":-0}"};
  for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
    json_object *j = json_tokener_parse(shapes[i]);
    g_assert_nonnull(j);
    check_json_append(j);
    json_object_put(j);
  }
  json_object *arr = json_object_new_array(); /* not a record at all */
  check_json_append(arr);
  json_object_put(arr);
  json_object_put(rec);
}

/* ---- what may lie beneath a directory (the mount's walk) ------------------ */

typedef struct {
  const char *dir;
  bool may;
} BeneathCase;

static void check_beneath(const char *text, const BeneathCase *cases, size_t n) {
  BoxPolicy *p = load_ok(text);
  for (size_t i = 0; i < n; i++) {
    if (box_policy_may_permit_beneath(p, cases[i].dir) != cases[i].may)
      g_printerr("beneath %s: expected %d in\n%s\n", cases[i].dir, cases[i].may, text);
    g_assert_true(box_policy_may_permit_beneath(p, cases[i].dir) == cases[i].may);
  }
  box_policy_free(p);
}

static void test_may_permit_beneath(void) {
  /* the seed's shape: a workspace grant; its ancestors are walked */
  const BeneathCase seed[] = {
      {"~", true},           {"~/src", true},          {"~/src/project", true},
      {"~/src/project/a", true}, {"~/secretdir", false}, {"~/secretdir/subdir", false},
      {"~/.ssh", false},     {"~/src/projectx", false},
      {"/etc", false},
  };
  check_beneath("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                "when { context.input.path like \"~/src/project/*\" };\n"
                "permit(principal, action == Box::Action::\"shell:exec\", resource);\n",
                seed, G_N_ELEMENTS(seed));
  /* everything read, one tree forbidden: nothing below it */
  const BeneathCase forbid[] = {{"~", true}, {"~/secretdir", false}, {"~/secretdir/a/b", false},
                                {"~/secretdirx", true}, {"~/other", true}};
  check_beneath("permit(principal, action, resource);\n"
                "forbid(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\",\n"
                "  Box::Action::\"fs:delete\", Box::Action::\"fs:move\", Box::Action::\"fs:other\"], resource)\n"
                "when { context.input.path like \"~/secretdir/*\" };\n",
                forbid, G_N_ELEMENTS(forbid));
  /* a forbid of one action leaves the others */
  const BeneathCase one[] = {{"~/secretdir", true}};
  check_beneath("permit(principal, action, resource);\n"
                "forbid(principal, action == Box::Action::\"fs:write\", resource)\n"
                "when { context.input.path like \"~/secretdir/*\" };\n",
                one, G_N_ELEMENTS(one));
  /* == names one path; != and unknown conditions may permit anything */
  const BeneathCase eq[] = {{"~/a", true}, {"~/a/b", true}, {"~/a/b/c", false}, {"~/b", false}};
  check_beneath("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                "when { context.input.path == \"~/a/b/c\" && context.input.operation == Box::FsReadOperation::\"read_content\" };\n",
                eq, G_N_ELEMENTS(eq));
  const BeneathCase ne[] = {{"~/a", true}, {"~/x", true}};
  check_beneath("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                "unless { context.input.path == \"~/a/b\" };\n",
                ne, G_N_ELEMENTS(ne));
  /* a star in the middle, and a negated pattern */
  const BeneathCase mid[] = {{"~/p", true}, {"~/p/q/logs", true}, {"~/q", false}};
  check_beneath("permit(principal, action == Box::Action::\"fs:write\", resource)\n"
                "when { context.input.path like \"~/p/*/logs/*.txt\" };\n",
                mid, G_N_ELEMENTS(mid));
  const BeneathCase neg[] = {{"~/keep", false}, {"~/keep/x", false}, {"~/other", true}};
  check_beneath("permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                "when { !(context.input.path like \"~/keep/*\") };\n",
                neg, G_N_ELEMENTS(neg));
  /* no policy rule for fs at all: nothing anywhere */
  const BeneathCase none[] = {{"~", false}, {"/", false}};
  check_beneath("permit(principal, action == Box::Action::\"shell:exec\", resource);\n", none,
                G_N_ELEMENTS(none));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/policy/parse/errors", test_parse_errors);
  g_test_add_func("/policy/parse/accepts", test_parse_accepts);
  g_test_add_func("/policy/load/unknown-action", test_unknown_action);
  g_test_add_func("/policy/load/duplicate-id", test_duplicate_id);
  g_test_add_func("/policy/load/schema", test_schema_errors);
  g_test_add_func("/policy/load/file", test_file_load);
  g_test_add_func("/policy/load/inert-literals", test_inert_literals);
  g_test_add_func("/policy/load/providers-extensions", test_providers_and_extensions);
  g_test_add_func("/policy/log/redaction", test_redaction);
  g_test_add_func("/policy/eval/seed", test_seed_decisions);
  g_test_add_func("/policy/eval/like-has-sets", test_like_has_sets);
  g_test_add_func("/policy/eval/errors-deny", test_errors_deny);
  g_test_add_func("/policy/message/text", test_messages);
  g_test_add_func("/policy/decision/pack", test_decision_pack);
  g_test_add_func("/policy/message/resource-label", test_resource_labels);
  g_test_add_func("/policy/log/record", test_decision_log);
  g_test_add_func("/policy/log/queue", test_decision_log_queue);
  g_test_add_func("/policy/log/render", test_log_render_matches_json_c);
  g_test_add_func("/policy/log/truncation", test_log_truncation);
  g_test_add_func("/policy/threads", test_threads);
  g_test_add_func("/policy/malformed-requests", test_malformed_requests);
  g_test_add_func("/policy/history/json-append", test_json_append_matches_json_c);
  g_test_add_func("/policy/may-permit-beneath", test_may_permit_beneath);
  return g_test_run();
}
