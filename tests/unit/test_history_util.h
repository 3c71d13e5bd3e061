/* test_history_util.h — helpers shared by the history rule tests
 * (test_history.c: evaluation; test_history_store.c: the durable history). */
#ifndef BOX_TEST_HISTORY_UTIL_H
#define BOX_TEST_HISTORY_UTIL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy/history.h"
#include "policy/policy.h"
#include "tests/unit/test_policy_util.h"

/* The injected clock every policy of load() and load_with_history() reads. */
void at(double seconds);
/* load_ok, on the injected clock. */
BoxPolicy *load(const char *text);
/* text must fail to load with a message containing expected. */
void assert_refused(const char *text, const char *expected);

/* A spawn of PROGRAM found on the usual path (unlike the shared
 * spawn_input, which takes the path and no argument). */
json_object *spawn_arg(const char *program, const char *arg1);
json_object *http_input(const char *host, int64_t bytes);
/* Decides and returns whether permitted; consumes input. */
bool permits(BoxPolicy *p, const char *action, json_object *input);
void spawn_status(BoxPolicy *p, const char *program, const char *arg1, int status);
void fs_write_response(BoxPolicy *p, const char *path, const char *result);

/* §2.7's push budget: at most 3 `git push` an hour. */
extern const char *const push_budget;
/* The budget's three pushes of the hour, each permitted. */
void spend_push_budget(BoxPolicy *p);

/* A new temporary directory (g_free'd by rm_rf, which removes it). */
char *tmpdir(void);
void rm_rf(char *dir);
/* The policy TEXT with its durable history in DIR, on the injected clock. */
BoxPolicy *load_with_history(const char *text, const char *dir);
/* push_budget with a history in a new *dir. */
BoxPolicy *open_push_history(char **dir);
/* The history in dir, reopened at time t, holds the three pushes. */
void expect_pushes_spent_on_reopen(const char *dir, double t);
/* load_with_history, and what it wrote to stderr in *errtext. */
BoxPolicy *load_with_history_stderr(const char *text, const char *dir, char **errtext);

/* A server's tools (spec/policy.md §2.3): an input { key: KEY } and rules on it. */
json_object *key_input(const char *key);
extern const char tool_rules[];

/* The durable history's tests (test_history_store.c), run by test_history.c. */
void test_restart(void);
void test_torn_tail(void);
void test_compaction(void);
void test_long_history_bounded(void);
void test_unwritable(void);
void test_bounded_memory(void);
void test_batch(void);
void test_tool_events_restart(void);
void test_tool_events_unlisted(void);

#endif
