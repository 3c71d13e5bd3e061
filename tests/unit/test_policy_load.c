/* test_policy_load.c — loading a policy (spec/policy.md §1, §3.4): parse errors,
 * schema and load checks, inert literals, providers and extension
 * literals, and malformed requests. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/unit/test_policy_util.h"
#include "tests/unit/test_util.h"

/* ---- parsing and load errors ---------------------------------------------- */

static void test_parse_errors(void)
{
  assert_load_error("permit(principal, action, resource)",
                    "failed to parse policy source: dogwood parse: unexpected end of input; "
                    "expected `;` to end the "
                    "policy, or `when`/`unless` to add a condition at line 1, column 36");
  assert_load_error("permit(principal, action, resource)\nwhen { context.input.port / 2 == 1 };",
                    "failed to parse policy source: dogwood parse: `/` is not a supported operator "
                    "at line 2, column 27");
  assert_load_error("permit(principal, action, resource) when { 7 % 2 == 1 };",
                    "failed to parse policy source: dogwood parse: `%` is not a supported operator "
                    "at line 1, column 46");
  assert_load_error("allow(principal, action, resource);",
                    "failed to parse policy source: dogwood parse: policy effect must be `permit` "
                    "or `forbid`, found "
                    "`allow` at line 1, column 1");
  assert_load_error("permit(principal, principal, resource);",
                    "failed to parse policy source: dogwood parse: duplicate `principal` in scope "
                    "at line 1, column 19");
  assert_load_error("permit(principal, action = Box::Action::\"fs:read\", resource);",
                    "failed to parse policy source: dogwood parse: unexpected `=`; did you mean "
                    "`==`? at line 1, column 26");
  assert_load_error("permit(principal, action, resource)\n  when { foo == 1 };",
                    "failed to parse policy source: dogwood parse: `foo` is not a valid variable "
                    "at line 2, column 10");
  assert_load_error("permit(principal, action, resource) when { \"a\\q\" == \"b\" };",
                    "failed to parse policy source: dogwood parse: invalid escape `\\q` in string "
                    "literal at line 1, column 44");
  assert_load_error(
    "permit(principal, action, resource) when { 9223372036854775808 > 0 };",
    "failed to parse policy source: dogwood parse: integer literal `9223372036854775808` is out of "
    "range at line 1, column 44");
  assert_load_error("permit(principal, action, resource) when { \"x\" like context.input.path };",
                    "failed to parse policy source: dogwood parse: the pattern after `like` must "
                    "be a string literal "
                    "at line 1, column 53");
  assert_load_error("permit(principal, action, resource) when { ip(\"1.2.3.4\") == 1 };",
                    "policy fails schema validation: the types Long and ipaddr are not "
                    "compatible at line 1, column 58");
  assert_load_error("permit(principal, action, resource) when { [1].size() == 1 };",
                    "failed to parse policy source: dogwood parse: `size` is not a supported "
                    "method at line 1, column 48");
  assert_load_error("permit(principal, action, resource) when { \"abc\n",
                    "failed to parse policy source: dogwood parse: unterminated string literal at "
                    "line 1, column 44");
  assert_load_error("permit(principal, action, resource) when { !-1 == 1 };",
                    "failed to parse policy source: dogwood parse: unary operators `!` and `-` "
                    "cannot be mixed at line 1, column 45");
  /* trees too deep to evaluate safely are refused */
  GString *deep = g_string_new("permit(principal, action, resource) when { 1");
  for (int i = 0; i < 5000; i++) g_string_append(deep, " + 1");
  g_string_append(deep, " > 0 };");
  GError *error = NULL;
  g_assert_null(box_policy_load_string(deep->str, NULL, &error));
  g_assert_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE);
  g_assert_true(g_str_has_prefix(error->message, "failed to parse policy source: dogwood parse: "
                                                 "expression nests too deeply at line 1, column "));
  g_clear_error(&error);
  g_string_free(deep, TRUE);
  /* a column counts characters, not bytes */
  assert_load_error(
    "// é\npermit(principal, action, resource) when { \"é\" == # };",
    "failed to parse policy source: dogwood parse: unexpected character `#` at line 2, column 51");
}

static void test_parse_accepts(void)
{
  /* everything the first cut must understand */
  BoxPolicy *p = load_ok(
    "@id(\"a\") @description(\"d\") @other(\"ignored\") @flag\n"
    "permit(principal == Box::Agent::\"self\", action in Box::Action::\"fs:read\", resource == "
    "Box::Resource::\"unused\")\n"
    "when { if context.input.path like \"a\\*b*\" then true else -9223372036854775808 < 0 }\n"
    "unless { !(context.input has path) || context.input[\"path\"] == "
    "\"x\\u{1F600}\\n\\t\\r\\0\\\\\\\"\\'\" }\n"
    "when { [1, 2, 3,].contains(2) && [1].containsAll([1]) && [1].containsAny([2, 1]) && "
    "![1].isEmpty() == true };\n"
    "forbid(principal, action, resource,) when { {a: 1, \"b\": [true]} has b && principal is "
    "Box::Agent };\n"
    "permit();\n");
  g_assert_cmpuint(box_policy_warnings(p)->len, ==, 0);
  box_policy_free(p);
  /* comments only and empty files load */
  box_policy_free(load_ok("// nothing here\n"));
  box_policy_free(load_ok(""));
}

static void test_unknown_action(void)
{
  assert_load_error(
    "permit(principal, action == Box::Action::\"fs:raed\", resource);",
    "policy references unknown action: for policy `policy_0`, unrecognized action "
    "`Box::Action::\"fs:raed\"` at line 1, column 29; for policy `policy_0`, unable to "
    "find an applicable action given the policy scope constraints at line 1, column 19");
  assert_load_error(
    "permit(principal, action, resource);\n"
    "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:exec\"], resource);",
    "policy references unknown action: for policy `policy_1`, unrecognized action "
    "`Box::Action::\"fs:exec\"` at line 2, column 54");
  assert_load_error("permit(principal, action, resource) when { action == Action::\"shell\" };",
                    "policy references unknown action: for policy `policy_0`, unrecognized action "
                    "`Action::\"shell\"` at line 1, column 54");
}

static void test_duplicate_id(void)
{
  assert_load_error(
    "@id(\"a\") permit(principal, action, resource);\n"
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

static void test_schema_errors(void)
{
  assert_load_error(
    "permit(principal, action == Box::Action::\"fs:read\", resource)\n"
    "when { context.input.operation == Box::FsReadOperation::\"list\" };",
    "policy fails schema validation: for policy `policy_0`: entity "
    "`Box::FsReadOperation::\"list\"` is of an enumerated entity type, but `\"list\"` is "
    "not declared as a valid eid at line 2, column 35");
  assert_load_error(
    "permit(principal, action == Box::Action::\"fs:read\", resource)\n"
    "when { context.input.paht == \"x\" };",
    "policy fails schema validation: for policy `policy_0`, attribute `input.paht` in "
    "context for Box::Action::\"fs:read\" not found at line 2, column 22");
  /* an unconstrained scope is checked against every action */
  assert_load_error(
    "permit(principal, action, resource) when { context.input.path like \"~/x/*\" };",
    "policy fails schema validation: for policy `policy_0`, attribute `input.path` in "
    "context for Box::Action::\"net:connect\" not found at line 1, column 58");
  assert_load_error(
    "permit(principal, action == Box::Action::\"shell:exec\", resource)\n"
    "when { context.input.arg1 == \"-rf\" };",
    "policy fails schema validation: for policy `policy_0`, unable to guarantee safety of "
    "access to optional attribute `input.arg1` in context for Box::Action::\"shell:exec\" "
    "at line 2, column 22");
  assert_load_error(
    "permit(principal, action, resource == Box::\"codex\");",
    "policy fails schema validation: for policy `policy_0`, unrecognized entity type "
    "`Box` at line 1, column 39");
  assert_load_error(
    "@id(\"other_only\") permit(principal, action == Box::Action::\"fs:other\", resource);",
    "policy names only a reserved action: rule @id(\"other_only\") (rule 1) names only "
    "the reserved action \"fs:other\"; no operation raises it, so the rule cannot match; "
    "name fs:read, fs:write, fs:delete, or fs:move, alone or beside fs:other at line 1, "
    "column 37");
  /* guarded accesses load */
  box_policy_free(
    load_ok("permit(principal, action == Box::Action::\"shell:exec\", resource)\n"
            "when { context.input has arg1 && context.input.arg1 == \"-rf\" };\n"
            "permit(principal, action, resource)\n"
            "when { context.input has path && context.input.path like \"~/x/*\" };\n"
            "permit(principal, action == Box::Action::\"shell:spawn\", resource)\n"
            "when { if context.input has arg2 then context.input.arg2 == \"x\" else false };\n"
            "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:other\"], "
            "resource);\n"));
}

static void test_file_load(void)
{
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

/* ---- load pipeline: inert literals, providers, extensions ------------------- */

static void assert_home_error(const char *text, const char *home, const char *expected)
{
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(text, home, &error);
  g_assert_null(p);
  g_assert_nonnull(error);
  g_assert_cmpstr(error->message, ==, expected);
  g_error_free(error);
}

static void test_inert_literals(void)
{
  const char *fs = "permit(principal, action == Box::Action::\"fs:read\", resource) when { ";
  char *t = g_strconcat(fs, "context.input.path == \"/home/op/src/project\" };", NULL);
  assert_home_error(
    t, "/home/op",
    "policy compares an inert literal: the permit rule with no @id compares context.input.path "
    "with "
    "\"/home/op/src/project\", and a path under the operator home is spelled ~/…; write "
    "\"~/src/project\" at line 1, column 92");
  /* without a home the check is skipped; a sibling of the home is not under it */
  box_policy_free(load_ok(t));
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(t, "/home/o", &error);
  g_assert_no_error(error);
  box_policy_free(p);
  g_free(t);
  assert_home_error(
    "@id(\"x\") permit(principal, action == Box::Action::\"fs:write\", resource) when { "
    "context.input.path like \"/home/op/*\" };",
    "/home/op/",
    "policy compares an inert literal: rule @id(\"x\") compares context.input.path with the "
    "pattern "
    "\"/home/op/*\", and a path under the operator home is spelled ~/…; write \"~/*\" at line 1, "
    "column 99");
  assert_home_error(
    "forbid(principal, action == Box::Action::\"fs:read\", resource) when { "
    "[\"~/a\", \"/tmp/d/\"].contains(context.input.path) };",
    "/home/op",
    "policy compares an inert literal: the forbid rule with no @id compares context.input.path "
    "with "
    "\"/tmp/d/\", and a directory is spelled without a trailing slash; write \"/tmp/d\" at line 1, "
    "column 78");
  assert_home_error(
    "permit(principal, action == Box::Action::\"shell:spawn\", resource) when { "
    "context.input.program_path == \"/home/op\" };",
    "/home/op",
    "policy compares an inert literal: the permit rule with no @id compares "
    "context.input.program_path with \"/home/op\", and a path under the operator home is spelled "
    "~/…; write \"~\" at line 1, column 104");
  /* warnings: a program spelled as a path, the home after a wildcard */
  p = box_policy_load_string(
    "permit(principal, action == Box::Action::\"shell:exec\", resource) when { "
    "context.input.program == \"/bin/rm\" };\n"
    "permit(principal, action == Box::Action::\"fs:read\", resource) when { "
    "context.input.path like \"*/home/op/x\" };\n"
    "permit(principal, action, resource) when { context.input has path && context.input.path == "
    "\"/tmp/\" };",
    "/home/op", &error);
  g_assert_no_error(error);
  const GPtrArray *w = box_policy_warnings(p);
  g_assert_cmpuint(w->len, ==, 2);
  g_assert_cmpstr(
    w->pdata[0], ==,
    "the permit rule with no @id compares context.input.program with \"/bin/rm\", which matches "
    "only a "
    "first word spelled that way; compare context.input.program_path to match the resolved binary");
  g_assert_cmpstr(w->pdata[1], ==,
                  "the permit rule with no @id compares context.input.path with the pattern "
                  "\"*/home/op/x\", which "
                  "names the operator home after a wildcard; a path under the operator home is "
                  "spelled ~/…, so the "
                  "pattern may match nothing");
  box_policy_free(p);
  /* net rules are not checked */
  p = box_policy_load_string(
    "permit(principal, action == Box::Action::\"http:request\", resource) when { "
    "context.input.path == \"/home/op/x/\" };",
    "/home/op", &error);
  g_assert_no_error(error);
  box_policy_free(p);
}

static void test_providers_and_extensions(void)
{
  assert_load_error(
    "permit(principal, action, resource) when { Acme::budget(\"x\") };",
    "failed to parse policy source: dogwood: information providers are not enabled in this build "
    "at line 1, column 44");
  /* a parse error later in the file wins over the provider check */
  assert_load_error(
    "permit(principal, action, resource) when { Acme::budget() };\npermit(",
    "failed to parse policy source: dogwood parse: unexpected end of input; expected `principal`, "
    "`action`, or `resource` at line 2, column 8");
  assert_load_error("permit(principal, action, resource) when { ip(\"1.2.3\").isLoopback() };",
                    "policy fails schema validation: for policy `policy_0`, error during extension "
                    "function argument "
                    "validation: `ip(\"1.2.3\")` is not a valid ip literal at line 1, column 44");
  assert_load_error("permit(principal, action == Box::Action::\"net:connect\", resource) when { "
                    "ip(context.input.host).isLoopback() };",
                    "policy fails schema validation: for policy `policy_0`, extension constructors "
                    "may not be called "
                    "with non-literal expressions at line 1, column 74");
  assert_load_error(
    "permit(principal, action, resource) when { [].isEmpty() };",
    "policy fails schema validation: for policy `policy_0`, empty set literals are forbidden in "
    "policies at line 1, column 44");
  BoxPolicy *p = load_ok(
    "permit(principal, action == Box::Action::\"fs:read\", resource) when { "
    "ip(\"127.0.0.1\").isLoopback() && "
    "ip(\"10.1.2.3\").isInRange(ip(\"10.0.0.0/8\")) && !ip(\"::1\").isIpv4() && "
    "ip(\"ff02::1\").isMulticast() && "
    "decimal(\"1.5\").lessThan(decimal(\"2.25\")) && decimal(\"-0.5\") == decimal(\"-0.50\") && "
    "datetime(\"2024-01-01\").offset(duration(\"1d\")) == datetime(\"2024-01-02T00:00:00Z\") && "
    "duration(\"1h30m\").toMinutes() == 90 && datetime(\"2024-02-29T12:00:00+0100\").toTime() == "
    "duration(\"11h\") && "
    "duration(\"-1ms\") < duration(\"0ms\") && \"b\" != 443 };\n"
    "permit(principal, action == Box::Action::\"fs:write\", resource) when { "
    "datetime(\"2024-01-01\").offset(duration(\"9223372036854775807ms\")) > "
    "datetime(\"2024-01-01\") };\n");
  g_assert_cmpint(decide_cause(p, "fs:read", fs_input("~/a", "read_content")), ==,
                  BOX_CAUSE_PERMITTED);
  g_assert_cmpint(decide_cause(p, "fs:write", fs_input("~/a", "write_content")), ==,
                  BOX_CAUSE_INTERNAL_FAULT);
  box_policy_free(p);
  /* `action == ...` narrows typing per action: the guarded read is fine */
  box_policy_free(
    load_ok("permit(principal, action, resource) when { action == Box::Action::\"shell:exec\" && "
            "context.input.program == \"git\" };"));
}

/* A malformed request is refused as an internal fault, and the warning
 * names what is wrong: a missing required attribute (the first one
 * declared), an undeclared one, a wrong type, a value outside its enum. */
static void test_malformed_requests(void)
{
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
  g_test_trap_assert_stderr(
    "*required attribute `input.path` is missing for Box::Action::\"fs:read\"*"
    "*required attribute `input.operation` is missing for Box::Action::\"fs:read\"*"
    "*attribute `input.colour` is not declared for Box::Action::\"fs:read\"*"
    "*attribute `input.path` has the wrong type for Box::Action::\"fs:read\"*"
    "*attribute `input.operation` has the wrong type for Box::Action::\"fs:read\"*");
}

int main(int argc, char **argv)
{
  static const TestCase cases[] = { { "/policy/parse/errors", test_parse_errors },
                                    { "/policy/parse/accepts", test_parse_accepts },
                                    { "/policy/load/unknown-action", test_unknown_action },
                                    { "/policy/load/duplicate-id", test_duplicate_id },
                                    { "/policy/load/schema", test_schema_errors },
                                    { "/policy/load/file", test_file_load },
                                    { "/policy/load/inert-literals", test_inert_literals },
                                    { "/policy/load/providers-extensions",
                                      test_providers_and_extensions },
                                    { "/policy/malformed-requests", test_malformed_requests } };
  return test_run_table(&argc, &argv, cases, G_N_ELEMENTS(cases));
}
