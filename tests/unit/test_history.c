/* test_history.c — history rules (spec/policy.md §2, §3.4, §3.5): the
 * worked examples of §2.7 flipped at their exact boundaries with an
 * injected clock, the load refusals, inline temporal rules, requestId and
 * a server's tools.  The durable history: test_history_store.c. */
#include <sys/resource.h>
#include <sys/wait.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/test_history_util.h"
#include "tests/unit/test_util.h"

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

/* ---- a server's tools (spec/policy.md §2.3: generated actions' events) ------ */

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
    { "/history/eval/inline-temporal", test_inline_temporal },
    { "/history/eval/request-id", test_request_id },
    { "/history/eval/request-id-ring", test_request_id_ring },
    { "/history/eval/wildcard-every-type", test_wildcard_every_type },
    { "/history/eval/tool-events", test_tool_events },
    { "/history/store/restart", test_restart },
    { "/history/store/torn-tail", test_torn_tail },
    { "/history/store/compaction", test_compaction },
    { "/history/store/long-history-bounded", test_long_history_bounded },
    { "/history/store/unwritable", test_unwritable },
    { "/history/store/bounded-memory", test_bounded_memory },
    { "/history/store/batch", test_batch },
    { "/history/store/tool-events-restart", test_tool_events_restart },
    { "/history/store/tool-events-unlisted", test_tool_events_unlisted }
  };
  return test_run_table(&argc, &argv, cases, G_N_ELEMENTS(cases));
}
