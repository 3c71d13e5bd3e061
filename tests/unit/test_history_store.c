/* test_history_store.c — the durable history (spec/policy.md §3.5): a
 * policy reopened on its history after a restart, a torn tail, compaction,
 * bounded memory and files, batches, a server's tools across restarts.
 * Its tests run in test_history's program (test_history.c's table). */
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

/* ---- durable history ------------------------------------------------------- */

void test_restart(void)
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

void test_torn_tail(void)
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
void test_compaction(void)
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
void test_long_history_bounded(void)
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

void test_unwritable(void)
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

void test_bounded_memory(void)
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

void test_batch(void)
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
void test_tool_events_restart(void)
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
void test_tool_events_unlisted(void)
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
