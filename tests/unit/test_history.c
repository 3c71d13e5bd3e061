/* test_history.c — history rules (spec/policy.md §2, §3.4, §3.5):
 * the worked examples of §2.7 flipped at their exact boundaries with an
 * injected clock, the load refusals, and the durable history. */
#include <sys/resource.h>
#include <sys/wait.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"
#include "policy/history.h"
#include "tests/unit/test_policy_util.h"
#include "tests/unit/test_util.h"

static int64_t now_ns;
static int64_t test_clock(void *data)
{
  (void)data;
  return now_ns;
}
static void at(double seconds)
{
  now_ns = (int64_t)(seconds * 1e9);
}

static BoxPolicy *load(const char *text)
{
  BoxPolicy *p = load_ok(text);
  box_policy_set_clock(p, test_clock, NULL);
  return p;
}

static void assert_refused(const char *text, const char *expected)
{
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(text, NULL, &error);
  g_assert_null(p);
  g_assert_nonnull(error);
  if (!strstr(error->message, expected)) g_printerr("got: %s\n", error->message);
  g_assert_nonnull(strstr(error->message, expected));
  g_error_free(error);
}

/* A spawn of PROGRAM found on the usual path (unlike the shared
 * spawn_input, which takes the path and no argument). */
static json_object *spawn_arg(const char *program, const char *arg1)
{
  json_object *o = exec_input(program, "/w", arg1);
  char *pp = g_strdup_printf("/usr/bin/%s", program);
  json_object_object_add(o, "program_path", json_object_new_string(pp));
  g_free(pp);
  return o;
}

static json_object *http_input(const char *host, int64_t bytes)
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
static bool permits(BoxPolicy *p, const char *action, json_object *input)
{
  BoxDecision *d = box_policy_decide(p, action, input);
  bool ok = d->verdict == BOX_VERDICT_PERMIT;
  box_decision_free(d);
  json_object_put(input);
  return ok;
}

static void spawn_status(BoxPolicy *p, const char *program, const char *arg1, int status)
{
  json_object *in = spawn_arg(program, arg1);
  g_assert_true(box_policy_record_status(p, "shell:spawn", in, status));
  json_object_put(in);
}

static void fs_write_response(BoxPolicy *p, const char *path, const char *result)
{
  json_object *in = fs_input(path, "write_content");
  json_object *out = json_object_new_object();
  json_object_object_add(out, "result", json_object_new_string(result));
  g_assert_true(box_policy_record_response(p, "fs:write", in, out));
  json_object_put(in);
  json_object_put(out);
}

/* ---- §2.7 worked examples ------------------------------------------------- */

static const char *push_budget =
  "permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
  "@id(\"push-budget\")\n"
  "forbid (principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when { context.input.program == \"git\" && context.input has arg1 && context.input.arg1 == "
  "\"push\" }\n"
  "when temporal { (count for (t: Timepoint). where formerly within 1h (\n"
  "  Box::Action::\"shell:spawn\"::request{ input.program: \"git\", input.arg1: \"push\" } && "
  "tp(t))) > 3 };\n";

/* The budget's three pushes of the hour, each permitted. */
static void spend_push_budget(BoxPolicy *p)
{
  for (int i = 0; i < 3; i++) g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push")));
}

static void test_nth_request(void)
{
  BoxPolicy *p = load(push_budget);
  at(0);
  spend_push_budget(p);
  g_assert_true(
    permits(p, "shell:spawn", spawn_arg("git", "status"))); /* other commands do not count */
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push"))); /* the fourth */
  box_policy_free(p);
}

static void test_window_edge(void)
{
  BoxPolicy *p = load(push_budget);
  at(100);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push")));
  at(200);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push")));
  at(300);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push")));
  /* at 3700 the push of 100 is exactly 1h old: still in the closed window */
  at(3700);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push")));
  /* one second later it has left; 200, 300, 3700 and this one = 4 > 3 */
  at(3701);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push")));
  /* at 3901 only 3700, 3701 and this one remain */
  at(3901);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push")));
  box_policy_free(p);
}

static const char *commit_after_test =
  "permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
  "forbid (principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when { context.input.program == \"git\" && context.input has arg1 && context.input.arg1 == "
  "\"commit\" }\n"
  "unless temporal { formerly within 1h (Box::Action::\"shell:spawn\"::response{\n"
  "  input.program: \"cargo\", input.arg1: \"test\", output.status: 0 }) };\n";

static void test_status_zero_against_one(void)
{
  BoxPolicy *p = load(commit_after_test);
  at(0);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "commit")));
  spawn_status(p, "cargo", "test", 1);
  at(1);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "commit")));
  /* asking for the tests is a request, not a passing run */
  g_assert_true(permits(p, "shell:spawn", spawn_arg("cargo", "test")));
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "commit")));
  at(2);
  spawn_status(p, "cargo", "test", 0);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "commit")));
  at(2 + 3600);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "commit")));
  at(2 + 3601);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "commit")));
  box_policy_free(p);
}

static const char *write_budget =
  "permit(principal, action == Box::Action::\"fs:write\", resource);\n"
  "forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
  "when { context.input.operation == Box::FsWriteOperation::\"write_content\" }\n"
  "when temporal { exists (total: Long). ((count for (t: Timepoint). where (formerly within 1h (\n"
  "  Box::Action::\"fs:write\"::response{ input.path: _, input.operation: "
  "Box::FsWriteOperation::\"write_content\",\n"
  "  output.result: Box::FsResponseResult::\"completed\" } && tp(t)))) == total && total >= 20) "
  "};\n";

static void test_write_budget(void)
{
  BoxPolicy *p = load(write_budget);
  at(0);
  for (int i = 0; i < 19; i++) {
    g_assert_true(permits(p, "fs:write", fs_input("~/a", "write_content")));
    fs_write_response(p, "~/a", "completed");
  }
  /* indeterminate writes do not consume the budget */
  fs_write_response(p, "~/a", "indeterminate");
  g_assert_true(permits(p, "fs:write", fs_input("~/a", "write_content")));
  fs_write_response(p, "~/a", "completed"); /* the 20th completed */
  g_assert_false(permits(p, "fs:write", fs_input("~/b", "write_content")));
  /* other write operations are not capped */
  g_assert_true(permits(p, "fs:write", fs_input("~/d", "create_dir")));
  box_policy_free(p);
}

static const char *byte_budget =
  "permit (principal, action == Box::Action::\"http:request\", resource)\n"
  "when temporal { exists (total: Long). ((sum b for (b: Long), (t: Timepoint). where (\n"
  "  formerly within 60s (Box::Action::\"http:request\"::response{ input.host: _, "
  "input.body_bytes: b }\n"
  "  && tp(t)))) == total && total < 100) };\n";

static void http_response(BoxPolicy *p, int64_t bytes)
{
  json_object *in = http_input("api.example.com", bytes);
  json_object *out = json_object_new_object();
  json_object_object_add(out, "status", json_object_new_int(200));
  g_assert_true(box_policy_record_response(p, "http:request", in, out));
  json_object_put(in);
  json_object_put(out);
}

static void test_byte_budget(void)
{
  BoxPolicy *p = load(byte_budget);
  g_assert_cmpuint(box_policy_warnings(p)->len, ==, 0); /* a lone temporal permit loads silently */
  at(0);
  g_assert_true(permits(p, "http:request", http_input("api.example.com", 40)));
  http_response(p, 40);
  at(10);
  http_response(p, 40); /* equal values at different timepoints both count */
  g_assert_true(permits(p, "http:request", http_input("api.example.com", 10))); /* 80 */
  at(20);
  http_response(p, 19);
  g_assert_true(permits(p, "http:request", http_input("api.example.com", 10))); /* 99 */
  http_response(p, 1);
  g_assert_false(permits(p, "http:request", http_input("api.example.com", 10))); /* 100 */
  at(60);
  g_assert_false(permits(p, "http:request", http_input("api.example.com", 10))); /* 0s still in */
  at(61);
  g_assert_true(permits(p, "http:request", http_input("api.example.com", 10))); /* 60 */
  box_policy_free(p);
}

static const char *since_policy =
  "permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
  "@id(\"stale-tests\")\n"
  "forbid (principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when { context.input.program == \"deploy\" }\n"
  "unless temporal { !Box::Action::\"fs:write\"::response{ input.path: _ } since within 1h\n"
  "  Box::Action::\"shell:spawn\"::response{ input.program: \"make\", output.status: 0 } };\n";

static void test_since_reset(void)
{
  BoxPolicy *p = load(since_policy);
  at(0);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("deploy", NULL)));
  spawn_status(p, "make", NULL, 0);
  at(1);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("deploy", NULL)));
  at(2);
  fs_write_response(p, "~/src/x.c", "completed"); /* intervening event resets */
  g_assert_false(permits(p, "shell:spawn", spawn_arg("deploy", NULL)));
  at(3);
  spawn_status(p, "make", NULL, 0);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("deploy", NULL)));
  at(3 + 3600);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("deploy", NULL)));
  at(3 + 3601); /* the anchor has left the window */
  g_assert_false(permits(p, "shell:spawn", spawn_arg("deploy", NULL)));
  box_policy_free(p);
}

/* The general evaluator against the match-list fast paths: the same
 * budgets, once in a fast shape and once correlated with context (slow). */
static void test_fast_matches_general(void)
{
  const char *fast =
    "permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
    "forbid (principal, action == Box::Action::\"shell:spawn\", resource) when { "
    "context.input.program == \"a\" }\n"
    "when temporal { (count for (t: Timepoint). where formerly within 30s (\n"
    "  Box::Action::\"shell:spawn\"::response{ input.program: \"a\", output.status: 0 } && tp(t))) "
    ">= 3 };\n"
    "forbid (principal, action == Box::Action::\"shell:spawn\", resource) when { "
    "context.input.program == \"b\" }\n"
    "unless temporal { !Box::Action::\"shell:spawn\"::response{ input.program: \"a\", "
    "output.status: 1 } since within 20s\n"
    "  Box::Action::\"shell:spawn\"::response{ input.program: \"b\", output.status: 0 } };\n";
  const char *slow =
    "permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
    "forbid (principal, action == Box::Action::\"shell:spawn\", resource) when { "
    "context.input.program == \"a\" }\n"
    "when temporal { (count for (t: Timepoint). where formerly within 30s (\n"
    "  Box::Action::\"shell:spawn\"::response{ input.program: context.input.program, "
    "output.status: 0 } && tp(t))) >= 3 };\n"
    "forbid (principal, action == Box::Action::\"shell:spawn\", resource) when { "
    "context.input.program == \"b\" }\n"
    "unless temporal { exists (s: Long). (!Box::Action::\"shell:spawn\"::response{ input.program: "
    "\"a\", output.status: 1 } since within 20s\n"
    "  (Box::Action::\"shell:spawn\"::response{ input.program: context.input.program, "
    "output.status: s } && s == 0)) };\n";
  BoxPolicy *pf = load(fast), *ps = load(slow);
  GRand *r = g_rand_new_with_seed(9);
  double t = 0;
  int flips = 0;
  bool last = true;
  for (int i = 0; i < 3000; i++) {
    t += g_rand_int_range(r, 0, 4);
    at(t);
    const char *prog = g_rand_boolean(r) ? "a" : "b";
    if (g_rand_int_range(r, 0, 3) == 0) {
      int st = g_rand_int_range(r, 0, 2);
      spawn_status(pf, prog, NULL, st);
      spawn_status(ps, prog, NULL, st);
    } else {
      bool a = permits(pf, "shell:spawn", spawn_arg(prog, NULL));
      bool b = permits(ps, "shell:spawn", spawn_arg(prog, NULL));
      g_assert_cmpint(a, ==, b);
      flips += a != last;
      last = a;
    }
  }
  g_assert_cmpint(flips, >, 50); /* the sequence exercised both outcomes */
  g_rand_free(r);
  box_policy_free(pf);
  box_policy_free(ps);
}

static void test_previous_and_macros(void)
{
  BoxPolicy *p = load("permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
                      "forbid (principal, action == Box::Action::\"shell:spawn\", resource) when { "
                      "context.input.program == \"rm\" }\n"
                      "unless temporal { previous within 5s "
                      "Box::Action::\"shell:spawn\"::response{ input.program: \"ls\" } };\n"
                      "forbid (principal, action == Box::Action::\"shell:spawn\", resource) when { "
                      "context.input.program == \"curl\" }\n"
                      "when temporal { count_within(1m, Box::Action::\"shell:spawn\"::request{ "
                      "input.program: \"curl\" }) > 2 };\n");
  at(0);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("rm", NULL)));
  spawn_status(p, "ls", NULL, 0);
  at(5);
  g_assert_true(
    permits(p, "shell:spawn", spawn_arg("rm", NULL))); /* previous event is the ls response */
  g_assert_false(
    permits(p, "shell:spawn", spawn_arg("rm", NULL))); /* now it is the last rm request */
  spawn_status(p, "ls", NULL, 0);
  at(11);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("rm", NULL))); /* 6s: out of the window */
  g_assert_true(permits(p, "shell:spawn", spawn_arg("curl", NULL)));
  g_assert_true(permits(p, "shell:spawn", spawn_arg("curl", NULL)));
  g_assert_false(permits(p, "shell:spawn", spawn_arg("curl", NULL)));
  box_policy_free(p);
}

/* ---- load checks ------------------------------------------------------------ */

static void test_refusals(void)
{
  assert_refused("forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
                 "when temporal { formerly within 48h Box::Action::\"fs:read\"::request{} };",
                 "policy fails schema validation: temporal window `48h` exceeds the maximum "
                 "allowed window `24h` set "
                 "by the event schema's `max_window`; shorten this window to at most `24h`, or "
                 "raise `max_window` in "
                 "the event schema");
  assert_refused(
    "forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
    "when temporal { formerly within 1h Box::Action::\"fs:read\"::request{} || "
    "formerly within 1h Box::Action::\"fs:write\"::request{} };",
    "failed to parse policy source: dogwood parse: `||` is not allowed in a temporal body");
  assert_refused("forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
                 "when temporal { formerly within 1h Box::Action::\"fs\"::request{} };",
                 "policy fails schema validation: predicate `Box::Action::\"fs\"::request` does "
                 "not name a declared "
                 "event");
  assert_refused(
    "forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
    "when temporal { formerly within 1h Box::Action::\"fs:read\"::request{ callerResorce: _ } };",
    "`callerResorce` is not a field of the event");
  assert_refused(
    "forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
    "when temporal { formerly within 1h Box::Action::\"fs:read\"::request{ output.result: _ } };",
    "only a ::response carries output");
  assert_refused(
    "forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
    "when temporal { formerly within 1h Box::Action::\"fs:read\"::request{ input.path: x } };",
    "variable `x` is not bound");
  assert_refused("forbid(principal, action == Box::Action::\"http:request\", resource)\n"
                 "when temporal { exists (a: Long). (a > 100 && "
                 "Box::Action::\"http:request\"::response{ input.body_bytes: a }) };",
                 "variable `a` is compared before anything restricts it");
  /* cap as a permit: beside an unconditioned permit refused, beside a conditioned one a warning */
  assert_refused("permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
                 "permit(principal, action == Box::Action::\"shell:spawn\", resource)\n"
                 "when temporal { formerly within 1h Box::Action::\"shell:spawn\"::request{} };",
                 "policy writes a cap as a permit: the permit rule with no @id (rule 2) carries a "
                 "temporal clause "
                 "beside the permit rule with no @id (rule 1), which permits the same action with "
                 "no condition; a "
                 "permit cannot narrow another permit, so write the cap as a forbid");
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(
    "permit(principal, action == Box::Action::\"shell:spawn\", resource) when { "
    "context.input.program == \"ls\" };\n"
    "permit(principal, action == Box::Action::\"shell:spawn\", resource)\n"
    "when temporal { formerly within 1h Box::Action::\"shell:spawn\"::request{} };",
    NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(box_policy_warnings(p)->len, ==, 1);
  g_assert_cmpstr(g_ptr_array_index(box_policy_warnings(p), 0), ==,
                  "the permit rule with no @id (rule 2) carries a temporal clause beside the "
                  "permit rule with no @id "
                  "(rule 1), which also permits that action; the budget is inert for every request "
                  "the other rule "
                  "admits, so write a cap as a forbid");
  box_policy_free(p);
}

/* ---- durable history ------------------------------------------------------- */

static char *tmpdir(void)
{
  return g_dir_make_tmp("test-history-XXXXXX", NULL);
}

/* Removes a tmpdir() and frees its name. */
static void rm_rf(char *dir)
{
  g_assert_cmpint(test_remove_tree(dir), ==, 0);
  g_free(dir);
}

static BoxPolicy *load_with_history(const char *text, const char *dir)
{
  BoxPolicy *p = load(text);
  GError *error = NULL;
  g_assert_true(box_policy_open_history(p, dir, &error));
  g_assert_no_error(error);
  return p;
}

/* A new history directory (its name in *dir) with the push budget open on
 * it, at time 0. */
static BoxPolicy *open_push_history(char **dir)
{
  *dir = tmpdir();
  BoxPolicy *p = load_with_history(push_budget, *dir);
  at(0);
  return p;
}

/* The push budget reopened from dir at time t: its history still holds
 * three pushes of the hour, so a fourth is refused. */
static void expect_pushes_spent_on_reopen(const char *dir, double t)
{
  BoxPolicy *p = load_with_history(push_budget, dir);
  at(t);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push")));
  box_policy_free(p);
}

/* load_with_history, with what it prints on stderr in *errtext */
static BoxPolicy *load_with_history_stderr(const char *text, const char *dir, char **errtext)
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

static void test_restart(void)
{
  char *dir = NULL;
  BoxPolicy *p = open_push_history(&dir);
  spend_push_budget(p);
  box_policy_free(p);
  expect_pushes_spent_on_reopen(dir, 10);
  /* an edited formula starts with an empty history (§3.5); 1h ≡ 60m */
  char *edited = g_strdup(push_budget);
  char *gt = strstr(edited, "> 3");
  gt[2] = '4';
  p = load_with_history(edited, dir);
  at(20);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push")));
  box_policy_free(p);
  char *same = g_strdup(push_budget);
  char *w = strstr(same, "within 1h");
  memcpy(w, "within 60m", 10); /* "within 1h (" → "within 60m(" */
  w[10] = '(';
  p = load_with_history(same, dir);
  at(30);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push")));
  box_policy_free(p);
  g_free(same);
  g_free(edited);
  rm_rf(dir);
}

/* ---- inline `temporal { … }` (§1.3 primary, §2.1) -------------------------- */

static void test_inline_temporal(void)
{
  /* the block is one operand of `&&`: only pushes with a flag are capped */
  BoxPolicy *p =
    load("permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
         "@id(\"forced\") forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
         "when { context.input.program == \"git\" && context.input.arg_count > 1 &&\n"
         "       temporal { count_within(1h, Box::Action::\"shell:spawn\"::request{ input.program: "
         "\"git\" }) > 2 } };\n");
  at(0);
  json_object *two = spawn_arg("git", "push");
  json_object_object_add(two, "arg_count", json_object_new_int64(2));
  json_object_object_add(two, "arg2", json_object_new_string("-f"));
  g_assert_true(permits(p, "shell:spawn", json_object_get(two)));     /* 1st git request */
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push"))); /* 2nd, one argument */
  g_assert_false(permits(p, "shell:spawn", json_object_get(two)));    /* 3rd: > 2, with a flag */
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push"))); /* 4th: the `&&` is false */
  at(3601);
  /* the first three left the window: 4th (at 0) and this one */
  g_assert_true(permits(p, "shell:spawn", json_object_get(two)));
  json_object_put(two);
  box_policy_free(p);
  /* `||` beside it is an ordinary Cedar `||`; inside the block it is refused */
  assert_refused(
    "forbid(principal, action == Box::Action::\"shell:exec\", resource) when { temporal {\n"
    "formerly within 1h (Box::Action::\"shell:exec\"::request{} || "
    "Box::Action::\"fs:read\"::request{}) } };",
    "`||` is not allowed in a temporal body");
  assert_refused(
    "forbid(principal, action == Box::Action::\"shell:exec\", resource) when {\n"
    "temporal { formerly within 1h Box::Action::\"shell:exec\"::request{} } + 1 > 0 };",
    "unexpected type: expected Long but saw Bool");
  /* an inline block is a temporal clause for the cap-as-permit check */
  assert_refused("permit(principal, action == Box::Action::\"shell:exec\", resource);\n"
                 "permit(principal, action == Box::Action::\"shell:exec\", resource) when {\n"
                 "temporal { count_within(1h, Box::Action::\"shell:exec\"::request{}) <= 3 } };",
                 "policy writes a cap as a permit: the permit rule with no @id (rule 2) carries a "
                 "temporal clause");
}

/* ---- requestId (§2.3): an outcome carries its request's id ------------------ */

static const char *no_deploy_while_make_runs =
  "permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
  "@id(\"make-running\") forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when { context.input.program == \"deploy\" }\n"
  "when temporal { exists (r: String). (formerly within 1h Box::Action::\"shell:spawn\"::request{\n"
  "  input.program: \"make\", requestId: r } && !formerly within 1h "
  "Box::Action::\"shell:spawn\"::response{ requestId: r }) };\n";

static void test_request_id(void)
{
  char *dir = tmpdir();
  BoxPolicy *p = load_with_history(no_deploy_while_make_runs, dir);
  at(0);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("deploy", NULL)));
  g_assert_true(permits(p, "shell:spawn", spawn_arg("make", NULL)));
  g_assert_true(permits(p, "shell:spawn", spawn_arg("make", "test")));
  g_assert_false(permits(p, "shell:spawn", spawn_arg("deploy", NULL))); /* two in flight */
  at(1);
  spawn_status(p, "make", NULL, 0);                                     /* answers the first make */
  g_assert_false(permits(p, "shell:spawn", spawn_arg("deploy", NULL))); /* one still runs */
  box_policy_free(p);
  /* the recorded ids survive a restart (the first make stays answered); an
   * outcome arriving after it finds no awaiting request and gets its own id */
  p = load_with_history(no_deploy_while_make_runs, dir);
  at(2);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("deploy", NULL)));
  spawn_status(p, "make", "test", 1);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("deploy", NULL)));
  box_policy_free(p);
  rm_rf(dir);

  /* in one run, a denied request awaits no outcome and a literal id matches */
  p = load("permit(principal, action == Box::Action::\"shell:spawn\", resource)\n"
           "  when { context.input.program != \"never\" };\n"
           "@id(\"first\") forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
           "when { context.input.program == \"check\" }\n"
           "unless temporal { formerly within 1h Box::Action::\"shell:spawn\"::response{ "
           "requestId: \"req-1\", output.status: 0 } };\n");
  at(0);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("never", NULL))); /* req-0, denied */
  g_assert_true(permits(p, "shell:spawn", spawn_arg("make", NULL)));   /* req-1 */
  g_assert_false(permits(p, "shell:spawn", spawn_arg("check", NULL))); /* req-2 */
  spawn_status(p, "never", NULL, 0); /* not awaited: carries its own id */
  g_assert_false(permits(p, "shell:spawn", spawn_arg("check", NULL)));
  spawn_status(p, "make", NULL, 0); /* answers req-1 */
  g_assert_true(permits(p, "shell:spawn", spawn_arg("check", NULL)));
  box_policy_free(p);
}

static void test_torn_tail(void)
{
  char *dir = NULL;
  BoxPolicy *p = open_push_history(&dir);
  spend_push_budget(p);
  box_policy_free(p);
  char *path = g_build_filename(dir, "history.jsonl", NULL);
  FILE *f = fopen(path, "a");
  fputs("1234abcd {\"s\":99,\"t\":5,\"a\":\"shell:sp", f); /* a record cut by a crash */
  fclose(f);
  /* reopen with stderr captured: the warning, and the 3 pushes before the tear survive */
  char *errtext = NULL;
  p = load_with_history_stderr(push_budget, dir, &errtext);
  at(10);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push")));
  box_policy_free(p);
  if (!g_pattern_match_simple("*torn record*cut it, keeping the 4 records before it*", errtext))
    g_printerr("stderr was: %s\n", errtext);
  g_assert_true(
    g_pattern_match_simple("*torn record*cut it, keeping the 4 records before it*", errtext));
  g_free(errtext);
  /* the file no longer ends in the torn record */
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_true(g_str_has_suffix(text, "\n"));
  g_free(text);
  /* a damaged record before the tail refuses the history: deny everything */
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char *second = strchr(text, '\n') + 1;
  second[0] = second[0] == '0' ? '1' : '0';
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  g_free(text);
  p = load(push_budget);
  GError *error = NULL;
  g_assert_false(box_policy_open_history(p, dir, &error));
  g_assert_nonnull(strstr(error->message, "policy history failure"));
  g_error_free(error);
  BoxDecision *d = box_policy_decide(p, "shell:spawn", spawn_arg("ls", NULL));
  g_assert_cmpint(d->verdict, ==, BOX_VERDICT_DENY);
  g_assert_cmpint(d->cause, ==, BOX_CAUSE_INTERNAL_FAULT);
  g_assert_nonnull(strstr(d->reason, "policy history failure"));
  box_decision_free(d);
  box_policy_free(p);
  g_free(path);
  rm_rf(dir);
}

static guint count_lines(const char *path)
{
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  guint n = 0;
  for (const char *c = text; *c; c++) n += *c == '\n';
  g_free(text);
  return n;
}

/* A long history is read line by line: the records older than a day go
 * (the file is compacted once most of it is that old), the recent ones
 * still count, a torn tail is cut as well. */
static void test_compaction(void)
{
  char *dir = NULL;
  BoxPolicy *p = open_push_history(&dir);
  for (int i = 0; i < 20000; i++) g_assert_true(permits(p, "shell:spawn", spawn_arg("ls", NULL)));
  at(2 * 86400);
  spend_push_budget(p);
  box_policy_free(p);
  char *path = g_build_filename(dir, "history.jsonl", NULL);
  guint before = count_lines(path);
  g_assert_cmpuint(before, >=, 20003);
  FILE *f = fopen(path, "a");
  fputs("1234abcd {\"s\":99999,\"t\":5,\"a\":\"shell:sp", f); /* a record cut by a crash */
  fclose(f);
  char *errtext = NULL;
  p = load_with_history_stderr(push_budget, dir, &errtext);
  g_assert_true(g_pattern_match_simple("*torn record*cut it*", errtext));
  g_free(errtext);
  /* the three pushes of the last hour survived the compaction */
  at(2 * 86400 + 10);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push")));
  box_policy_free(p);
  guint after = count_lines(path);
  g_assert_cmpuint(after, <, 20);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_true(g_str_has_suffix(text, "\n"));
  g_assert_null(strstr(text, "\"program\":\"ls\""));
  g_assert_null(strstr(text, "99999"));
  g_free(text);
  /* and once more from the compacted file: the same verdict, nothing lost */
  expect_pushes_spent_on_reopen(dir, 2 * 86400 + 20);
  g_free(path);
  rm_rf(dir);
}

/* Opening a long history costs about its size in memory, not a tree per
 * record (at ~1 KB of JSON objects per record, the old whole-file load of a
 * 124 MB history took 2.5 GB): 400,000 records open in a child whose
 * address space is capped at 768 MiB. */
static void test_long_history_bounded(void)
{
  char *dir = NULL;
  BoxPolicy *p = open_push_history(&dir);
  json_object *in =
    fs_input("/home/agent/src/project/some/rather/long/path/to/a/file.txt", "read_content");
  for (int i = 0; i < 400000; i++) box_policy_record_outcome(p, "fs:read", in, "completed");
  json_object_put(in);
  at(3600 * 3);
  spend_push_budget(p);
  box_policy_free(p);
  fflush(NULL);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    struct rlimit rl = { 768u << 20, 768u << 20 };
    if (!TEST_SANITIZED && setrlimit(RLIMIT_AS, &rl) != 0) _exit(3);
    BoxPolicy *q = load(push_budget);
    GError *error = NULL;
    if (!box_policy_open_history(q, dir, &error)) _exit(2);
    at(3600 * 3 + 10);
    _exit(permits(q, "shell:spawn", spawn_arg("git", "push")) ? 1 : 0);
  }
  int st = 0;
  g_assert_cmpint(waitpid(pid, &st, 0), ==, pid);
  g_assert_true(WIFEXITED(st));
  g_assert_cmpint(WEXITSTATUS(st), ==, 0);
  rm_rf(dir);
}

static void test_unwritable(void)
{
  if (geteuid() == 0) {
    /* root ignores modes; a path under a regular file cannot be created */
    char *dir = tmpdir();
    char *file = g_build_filename(dir, "f", NULL);
    g_assert_true(g_file_set_contents(file, "", 0, NULL));
    char *under = g_build_filename(file, "private", NULL);
    BoxPolicy *p = load(push_budget);
    GError *error = NULL;
    g_assert_false(box_policy_open_history(p, under, &error));
    g_error_free(error);
    g_assert_false(permits(p, "shell:spawn", spawn_arg("ls", NULL)));
    g_assert_nonnull(box_policy_history_fault(p));
    box_policy_free(p);
    g_free(under);
    g_free(file);
    rm_rf(dir);
  }
}

static void test_bounded_memory(void)
{
  BoxPolicy *p = load(push_budget);
  size_t events, bytes1, bytes2;
  for (int i = 0; i < 20000; i++) {
    at(i * 1.0);
    permits(p, "shell:spawn", spawn_arg("git", "status"));
  }
  box_policy_history_stats(p, &events, &bytes1);
  g_assert_cmpuint(events, <=, 3602); /* the deepest window: 1h of one a second */
  for (int i = 20000; i < 40000; i++) {
    at(i * 1.0);
    permits(p, "shell:spawn", spawn_arg("git", "status"));
  }
  box_policy_history_stats(p, &events, &bytes2);
  g_assert_cmpuint(events, <=, 3602);
  g_assert_cmpuint(bytes2, <, bytes1 * 2);
  box_policy_free(p);
}

/* An outcome's requestId under load: more requests await an outcome than the
 * ring keeps (most never get one, as a lookup's probe never does), so the
 * oldest fall off.  The history file's "q" of every response must be what the
 * straightforward ring gives (oldest awaiting request of the same action and
 * resource first; the oldest falls off when 1024 wait). */
typedef struct {
  char *action, *path;
  gint64 seq;
  bool taken;
} Awaiting;

static void test_request_id_ring(void)
{
  char *dir = tmpdir();
  BoxPolicy *p = load_with_history("permit(principal, action, resource);", dir);
  GRand *rng = g_rand_new_with_seed(6);
  at(0);
  const char *actions[] = { "fs:read", "fs:write" };
  for (int i = 0; i < 6000; i++) {
    const char *action = actions[g_rand_int_range(rng, 0, 2)];
    char path[64];
    if (g_rand_int_range(rng, 0, 10) < 4)
      g_snprintf(path, sizeof path, "/w/unique%d", i);
    else
      g_snprintf(path, sizeof path, "/w/f%d", g_rand_int_range(rng, 0, 8));
    json_object *in = fs_input(path, action[3] == 'r' ? "read_content" : "write_content");
    if (g_rand_int_range(rng, 0, 10) < 6) {
      BoxDecision *d = box_policy_decide(p, action, in);
      g_assert_true(d->verdict == BOX_VERDICT_PERMIT);
      box_decision_free(d);
    } else {
      json_object *out = json_object_new_object();
      json_object_object_add(out, "result", json_object_new_string("completed"));
      g_assert_true(box_policy_record_response(p, action, in, out));
      json_object_put(out);
    }
    json_object_put(in);
  }
  box_policy_free(p);
  g_rand_free(rng);
  /* replay the file through the model */
  char *path = g_build_filename(dir, "history.jsonl", NULL);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  GPtrArray *ring = g_ptr_array_new(); /* Awaiting*, oldest first */
  GPtrArray *all = g_ptr_array_new();
  int responses = 0, paired = 0;
  for (char **l = lines; *l && **l; l++) {
    json_object *rec = json_tokener_parse(*l + 9);
    g_assert_nonnull(rec);
    json_object *k = NULL, *a = NULL, *s = NULL, *i = NULL, *q = NULL, *pa = NULL;
    if (!json_object_object_get_ex(rec, "k", &k)) { /* a formula record */
      json_object_put(rec);
      continue;
    }
    g_assert_true(json_object_object_get_ex(rec, "a", &a));
    g_assert_true(json_object_object_get_ex(rec, "s", &s));
    g_assert_true(json_object_object_get_ex(rec, "i", &i));
    g_assert_true(json_object_object_get_ex(i, "path", &pa));
    bool has_q = json_object_object_get_ex(rec, "q", &q);
    if (json_object_get_int(k) == 0) {
      if (ring->len == 1024) g_ptr_array_remove_index(ring, 0);
      Awaiting *w = g_new0(Awaiting, 1);
      w->action = g_strdup(json_object_get_string(a));
      w->path = g_strdup(json_object_get_string(pa));
      w->seq = json_object_get_int64(s);
      g_ptr_array_add(ring, w);
      g_ptr_array_add(all, w);
    } else {
      responses++;
      gint64 want = -1;
      for (guint j = 0; j < ring->len; j++) {
        Awaiting *w = ring->pdata[j];
        if (w->taken || strcmp(w->action, json_object_get_string(a)) != 0 ||
            strcmp(w->path, json_object_get_string(pa)) != 0)
          continue;
        w->taken = true;
        want = w->seq;
        break;
      }
      while (ring->len && ((Awaiting *)ring->pdata[0])->taken) g_ptr_array_remove_index(ring, 0);
      if (want < 0) {
        g_assert_false(has_q);
      } else {
        paired++;
        g_assert_true(has_q);
        g_assert_cmpint(json_object_get_int64(q), ==, want);
      }
    }
    json_object_put(rec);
  }
  /* both kinds happened: some outcomes found their request, some did not */
  g_assert_cmpint(paired, >, 100);
  g_assert_cmpint(responses - paired, >, 100);
  for (guint j = 0; j < all->len; j++) {
    Awaiting *w = all->pdata[j];
    g_free(w->action);
    g_free(w->path);
    g_free(w);
  }
  g_ptr_array_free(all, TRUE);
  g_ptr_array_free(ring, TRUE);
  g_strfreev(lines);
  g_free(text);
  g_free(path);
  rm_rf(dir);
}

/* ---- batches (box_policy_history_batch_begin/_end) ------------------------ */

static gsize lines_in(const char *dir)
{
  char *path = g_build_filename(dir, "history.jsonl", NULL);
  char *text = NULL;
  gsize len = 0, n = 0;
  if (g_file_get_contents(path, &text, &len, NULL))
    for (gsize i = 0; i < len; i++) n += text[i] == '\n';
  g_free(text);
  g_free(path);
  return n;
}

static gpointer other_thread_decides(gpointer p)
{
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "status")));
  return NULL;
}

static void test_batch(void)
{
  char *dir = NULL;
  BoxPolicy *p = open_push_history(&dir);
  gsize before = lines_in(dir);
  box_policy_history_batch_begin(p);
  spend_push_budget(p);
  /* gathered, not yet written */
  g_assert_cmpuint(lines_in(dir), ==, before);
  /* another thread's record first writes what the batch gathered, so the
   * file stays in seq order */
  g_thread_join(g_thread_new("other", other_thread_decides, p));
  g_assert_cmpuint(lines_in(dir), ==, before + 4);
  g_assert_true(permits(p, "shell:spawn", spawn_arg("git", "push")) == false);
  g_assert_cmpuint(lines_in(dir), ==, before + 4);
  /* the batch's end writes nothing: its records wait for the flusher ... */
  g_assert_true(box_policy_history_batch_end(p));
  g_assert_cmpuint(lines_in(dir), ==, before + 4);
  /* ... or a sync (boxd's, before a command's end is reported) */
  g_assert_true(box_policy_history_sync(p));
  g_assert_cmpuint(lines_in(dir), ==, before + 5);
  /* the flusher writes a held record within its 50 ms round */
  box_policy_history_batch_begin(p);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push")));
  g_assert_true(box_policy_history_batch_end(p));
  gint64 deadline = g_get_monotonic_time() + 2 * G_TIME_SPAN_SECOND;
  while (lines_in(dir) < before + 6 && g_get_monotonic_time() < deadline) g_usleep(5000);
  g_assert_cmpuint(lines_in(dir), ==, before + 6);
  box_policy_free(p);
  /* every record reads back (CRC and seq order): the budget is still spent */
  expect_pushes_spent_on_reopen(dir, 10);
  rm_rf(dir);
}

/* `_` matches any value the field holds (spec/policy.md), whatever its type:
 * String, Long, Bool, an enum and a Set; a field the event lacks matches
 * nothing.  Each in a static predicate (matched as events arrive) and in
 * one that binds a variable (matched at decision time). */
static void test_wildcard_every_type(void)
{
  static const struct {
    const char *action, *field;
  } cases[] = {
    { "shell:spawn", "input.program" },          /* String */
    { "shell:spawn", "input.arg_count" },        /* Long */
    { "shell:spawn", "input.credential_reads" }, /* Set<String> */
    { "fs:write", "input.operation" },           /* enum */
    { "fs:write", "output.result" },             /* enum, of the output */
    { "http:request", "input.intercepted" },     /* Bool */
    { "http:request", "output.status" },         /* Long, of the output */
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    for (int bound = 0; bound < 2; bound++) {
      char *text = g_strdup_printf(
        "permit(principal, action, resource);\n"
        "forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
        "when temporal { %sformerly within 1h Box::Action::\"%s\"::response{ %s: _%s }%s };\n",
        bound ? "exists (r: String). (" : "", cases[i].action, cases[i].field,
        bound ? ", requestId: r" : "", bound ? ")" : "");
      BoxPolicy *p = load(text);
      at(0);
      g_assert_true(permits(p, "fs:read", fs_input("/w/f", "read_content")));
      json_object *in, *out = json_object_new_object();
      if (strcmp(cases[i].action, "shell:spawn") == 0) {
        in = spawn_arg("make", NULL);
        json_object *set = json_object_new_array();
        json_object_array_add(set, json_object_new_string("~/.aws"));
        json_object_object_add(in, "credential_reads", set);
        json_object_object_add(out, "status", json_object_new_int64(0));
      } else if (strcmp(cases[i].action, "fs:write") == 0) {
        in = fs_input("/w/f", "write_content");
        json_object_object_add(out, "result", json_object_new_string("success"));
      } else {
        in = http_input("example.org", 10);
        json_object_object_add(out, "status", json_object_new_int64(200));
      }
      g_assert_true(box_policy_record_response(p, cases[i].action, in, out));
      json_object_put(in);
      json_object_put(out);
      at(1);
      if (permits(p, "fs:read", fs_input("/w/f", "read_content"))) g_printerr("%s", text);
      g_assert_false(permits(p, "fs:read", fs_input("/w/f", "read_content")));
      box_policy_free(p);
      g_free(text);
    }
  }
}

/* ---- a server's tools (spec/policy.md §2.3: generated actions' events) ------ */

static json_object *key_input(const char *key)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "key", json_object_new_string(key));
  return o;
}

/* A policy whose rules read a server's tools before it lists them: a write
 * of a key only after a read of it, at most two reads of a key an hour. */
static const char tool_rules[] =
  "permit(principal, action, resource);\n"
  "@id(\"read_first\") forbid(principal, action == hist_mcp::Action::\"write\", resource)\n"
  "unless temporal { formerly within 1h hist_mcp::Action::\"read\"::response{ input.key: "
  "context.input.key } };\n"
  "@id(\"two_reads\") forbid(principal, action == hist_mcp::Action::\"read\", resource)\n"
  "when temporal { (count for (t: Timepoint). where (formerly within 1h ("
  "hist_mcp::Action::\"read\"::request{ input.key: \"k\" } && tp(t)))) > 2 };\n";

static void test_tool_events(void)
{
  box_policy_declare_namespace("hist_mcp");
  char *dir = tmpdir();
  BoxPolicy *p = load_with_history(tool_rules, dir);
  at(0);
  g_assert_cmpint(
    box_policy_register_action("hist-mcp", "hist_mcp::Action::\"read\"", "read", "key: String"), >=,
    10);
  box_policy_register_action("hist-mcp", "hist_mcp::Action::\"write\"", "write",
                             "key: String, value?: String");
  GError *error = NULL;
  g_assert_true(box_policy_install_actions(p, "hist_mcp", &error));
  g_assert_no_error(error);
  g_assert_false(permits(p, "hist_mcp::Action::\"write\"", key_input("k")));
  /* asked and refused is no read: the rule keys on the response */
  g_assert_true(permits(p, "hist_mcp::Action::\"read\"", key_input("k")));
  g_assert_false(permits(p, "hist_mcp::Action::\"write\"", key_input("k")));
  json_object *in = key_input("k");
  g_assert_true(box_policy_record_response(p, "hist_mcp::Action::\"read\"", in, NULL));
  json_object_put(in);
  at(1);
  g_assert_true(permits(p, "hist_mcp::Action::\"write\"", key_input("k")));
  g_assert_false(permits(p, "hist_mcp::Action::\"write\"", key_input("other")));
  g_assert_true(permits(p, "hist_mcp::Action::\"read\"", key_input("k"))); /* the second */
  box_policy_free(p);
  /* the history kept them: the third read is refused after a restart */
  p = load_with_history(tool_rules, dir);
  g_assert_true(box_policy_install_actions(p, "hist_mcp", &error));
  at(2);
  g_assert_true(permits(p, "hist_mcp::Action::\"write\"", key_input("k")));
  g_assert_false(permits(p, "hist_mcp::Action::\"read\"", key_input("k")));
  at(3601);
  g_assert_false(permits(p, "hist_mcp::Action::\"write\"", key_input("k")));
  box_policy_free(p);
  rm_rf(dir);

  /* a predicate on a tool the server did not list, or on an argument its
   * tool does not take, keeps the server's actions pending */
  box_policy_declare_namespace("hist_mcp2");
  p = load("permit(principal, action, resource);\n"
           "forbid(principal, action == Box::Action::\"mcp:call\", resource)\n"
           "when temporal { formerly within 1h hist_mcp2::Action::\"gone\"::request{} };\n");
  box_policy_register_action("hist-mcp2", "hist_mcp2::Action::\"here\"", "here", "n: Long");
  g_assert_false(box_policy_install_actions(p, "hist_mcp2", &error));
  g_assert_cmpstr(
    error->message, ==,
    "policy fails schema validation: predicate `hist_mcp2::Action::\"gone\"::request` "
    "does not name a declared event (no event kind `request` derived for action "
    "`gone`) at line 3, column 36");
  g_clear_error(&error);
  json_object *n = json_object_new_object();
  json_object_object_add(n, "n", json_object_new_int64(1));
  g_assert_cmpint(decide_cause(p, "hist_mcp2::Action::\"here\"", n), ==, BOX_CAUSE_POLICY_PENDING);
  box_policy_free(p);
  box_policy_declare_namespace("hist_mcp3");
  static const char field_rule[] =
    "permit(principal, action, resource);\n"
    "forbid(principal, action == Box::Action::\"mcp:call\", resource)\n"
    "when temporal { formerly within 1h hist_mcp3::Action::\"t\"::response{ input.m: 1 } };\n";
  static const char field_error[] =
    "policy fails schema validation: for policy `policy_1`, `input.m` is not a field of the "
    "event `hist_mcp3::Action::\"t\"::response` at line 3, column 79";
  p = load(field_rule);
  box_policy_register_action("hist-mcp3", "hist_mcp3::Action::\"t\"", "t", "n: Long");
  g_assert_false(box_policy_install_actions(p, "hist_mcp3", &error));
  g_assert_cmpstr(error->message, ==, field_error);
  g_clear_error(&error);
  box_policy_free(p);
  /* loaded once the tools are known, the same rule is refused at once */
  assert_refused(field_rule, field_error);
  /* a namespace no server declares names no event */
  assert_refused("forbid(principal, action, resource) when temporal { formerly within 1h "
                 "nowhere::Action::\"x\"::request{} };",
                 "predicate `nowhere::Action::\"x\"::request` does not name a declared event");
}

/* A box restarted: first the run before, in a child process of its own
 * (its tools registered in it alone), RUN on the policy TEXT with its
 * history in DIR at time 0 and *n1 the input { n: 1 }, which returns 0 when
 * each step went as it should, else the number of the one that did not;
 * then the policy loaded again on that history, at time 10.  NS is the
 * servers' namespace. */
static BoxPolicy *restarted(const char *text, const char *dir, const char *ns,
                            int (*run)(BoxPolicy *, json_object *), json_object **n1)
{
  *n1 = json_object_new_object();
  json_object_object_add(*n1, "n", json_object_new_int64(1));
  box_policy_declare_namespace(ns);
  fflush(NULL);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    BoxPolicy *q = load_with_history(text, dir);
    at(0);
    int step = run(q, *n1);
    box_policy_free(q);
    _exit(step);
  }
  int st = 0;
  g_assert_cmpint(waitpid(pid, &st, 0), ==, pid);
  g_assert_true(WIFEXITED(st));
  g_assert_cmpint(WEXITSTATUS(st), ==, 0);
  BoxPolicy *p = load_with_history(text, dir);
  at(10);
  return p;
}

static int restart_before(BoxPolicy *q, json_object *n1)
{
  box_policy_register_action("recov-mcp", "recov_mcp::Action::\"x\"", "x", "n: Long");
  if (!box_policy_install_actions(q, "recov_mcp", NULL)) return 2;
  if (!permits(q, "shell:spawn", spawn_arg("git", "push"))) return 3;
  if (!permits(q, "recov_mcp::Action::\"x\"", json_object_get(n1))) return 4;
  if (!box_policy_record_response(q, "recov_mcp::Action::\"x\"", n1, NULL)) return 5;
  if (!permits(q, "shell:spawn", spawn_arg("git", "push"))) return 6;
  if (!permits(q, "shell:spawn", spawn_arg("git", "push"))) return 7;
  return 0;
}

/* A box restarted before its server lists its tools again: the history
 * keeps the tool's events, and the Box events around them (the push
 * budget spent before and after a tool call). */
static void test_tool_events_restart(void)
{
  char *dir = tmpdir();
  char *text = g_strconcat(push_budget,
                           "permit(principal, action == recov_mcp::Action::\"x\", resource);\n"
                           "@id(\"once\") forbid(principal, action == recov_mcp::Action::\"x\", "
                           "resource) when temporal { formerly within 1h "
                           "recov_mcp::Action::\"x\"::response{ input.n: context.input.n } };\n",
                           NULL);
  json_object *n1;
  BoxPolicy *p = restarted(text, dir, "recov_mcp", restart_before, &n1);
  g_assert_false(permits(p, "shell:spawn", spawn_arg("git", "push"))); /* the fourth */
  g_assert_cmpint(
    box_policy_register_action("recov-mcp", "recov_mcp::Action::\"x\"", "x", "n: Long"), >=, 10);
  GError *error = NULL;
  g_assert_true(box_policy_install_actions(p, "recov_mcp", &error));
  g_assert_no_error(error);
  g_assert_false(permits(p, "recov_mcp::Action::\"x\"", json_object_get(n1)));
  json_object *n2 = json_object_new_object();
  json_object_object_add(n2, "n", json_object_new_int64(2));
  g_assert_true(permits(p, "recov_mcp::Action::\"x\"", n2));
  /* the tool's fields are its listing's: another type cannot be evaluated */
  json_object *bad = json_object_new_object();
  json_object_object_add(bad, "n", json_object_new_string("one"));
  g_assert_cmpint(decide_cause(p, "recov_mcp::Action::\"x\"", bad), ==, BOX_CAUSE_INTERNAL_FAULT);
  box_policy_free(p);
  json_object_put(n1);
  g_free(text);
  rm_rf(dir);
}

/* the run before, whose server listed both tools */
static int unlisted_before(BoxPolicy *q, json_object *n1)
{
  box_policy_register_action("unl-mcp", "unl_mcp::Action::\"x\"", "x", "n: Long");
  box_policy_register_action("unl-mcp", "unl_mcp::Action::\"gone\"", "gone", "n: Long");
  if (!box_policy_install_actions(q, "unl_mcp", NULL)) return 2;
  if (!permits(q, "unl_mcp::Action::\"gone\"", json_object_get(n1))) return 3;
  if (!box_policy_record_response(q, "unl_mcp::Action::\"gone\"", n1, NULL)) return 4;
  return 0;
}

/* A tool a history recovered that its server no longer lists is no action
 * a rule may name: the server's actions stay pending, as for a tool no
 * history ever named. */
static void test_tool_events_unlisted(void)
{
  char *dir = tmpdir();
  static const char text[] =
    "permit(principal, action, resource);\n"
    "@id(\"once\") forbid(principal, action == unl_mcp::Action::\"gone\", resource) "
    "when temporal { formerly within 1h unl_mcp::Action::\"gone\"::response{} };\n";
  json_object *n1;
  BoxPolicy *p = restarted(text, dir, "unl_mcp", unlisted_before, &n1);
  box_policy_register_action("unl-mcp", "unl_mcp::Action::\"x\"", "x", "n: Long");
  GError *error = NULL;
  g_assert_false(box_policy_install_actions(p, "unl_mcp", &error));
  g_assert_cmpstr(error->message, ==,
                  "policy references unknown action: for policy `policy_1`, unrecognized action "
                  "`unl_mcp::Action::\"gone\"` at line 2, column 41");
  g_clear_error(&error);
  g_assert_cmpint(decide_cause(p, "unl_mcp::Action::\"x\"", n1), ==, BOX_CAUSE_POLICY_PENDING);
  box_policy_free(p);
  rm_rf(dir);
}

int main(int argc, char **argv)
{
  static const TestCase cases[] = {
    { "/history/example/nth-request", test_nth_request },
    { "/history/example/window-edge", test_window_edge },
    { "/history/example/status-0-against-1", test_status_zero_against_one },
    { "/history/example/write-budget", test_write_budget },
    { "/history/example/byte-budget", test_byte_budget },
    { "/history/example/since-reset", test_since_reset },
    { "/history/eval/fast-matches-general", test_fast_matches_general },
    { "/history/eval/previous-and-macros", test_previous_and_macros },
    { "/history/load/refusals", test_refusals },
    { "/history/store/restart", test_restart },
    { "/history/eval/inline-temporal", test_inline_temporal },
    { "/history/eval/request-id", test_request_id },
    { "/history/eval/request-id-ring", test_request_id_ring },
    { "/history/eval/wildcard-every-type", test_wildcard_every_type },
    { "/history/store/torn-tail", test_torn_tail },
    { "/history/store/compaction", test_compaction },
    { "/history/store/long-history-bounded", test_long_history_bounded },
    { "/history/store/unwritable", test_unwritable },
    { "/history/store/bounded-memory", test_bounded_memory },
    { "/history/store/batch", test_batch },
    { "/history/eval/tool-events", test_tool_events },
    { "/history/store/tool-events-restart", test_tool_events_restart },
    { "/history/store/tool-events-unlisted", test_tool_events_unlisted }
  };
  return test_run_table(&argc, &argv, cases, G_N_ELEMENTS(cases));
}
