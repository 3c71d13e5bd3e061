/* test_policy_util.h — helpers shared by the policy unit tests. */
#ifndef BOX_TEST_POLICY_UTIL_H
#define BOX_TEST_POLICY_UTIL_H

#include <glib.h>
#include <json-c/json.h>

#include "policy/decision_log.h"
#include "policy/policy.h"

/* The spec's seed example. */
extern const char *const seed_policy;

/* A policy that must load; the test fails with the message if it does not. */
BoxPolicy *load_ok(const char *text);
/* The message text fails to load with (in BOX_POLICY_ERROR; g_free it). */
char *load_error(const char *text);
/* text must fail to load with exactly expected. */
void assert_load_error(const char *text, const char *expected);
/* Request inputs (newly made; decide() takes them). */
json_object *fs_input(const char *path, const char *op);
json_object *exec_input(const char *program, const char *cwd, const char *arg1);
json_object *spawn_input(const char *program, const char *path);
/* Decides, consuming input, and checks the decision's fields are set. */
BoxDecision *decide(BoxPolicy *p, const char *action, json_object *input);
/* The cause of the decision on a request (consuming input). */
BoxCause decide_cause(BoxPolicy *p, const char *action, json_object *input);
/* Decides, appends the decision to log (queued: as a file operation
 * does), consuming input, and returns the cause. */
BoxCause decide_logged(BoxPolicy *p, BoxDecisionLog *log, const char *action, json_object *input,
                       const char *const *args, bool queued);
/* What a thread deciding and logging beside others is given. */
typedef struct {
  BoxPolicy *policy;
  BoxDecisionLog *log;
  int id;       /* which of the threads */
  int failures; /* decisions other than the one wanted (atomic) */
} LogThread;

/* A new temporary directory made from tmpl, and in *path the decision
 * log's file in it (records.jsonl); log_dir_remove removes and frees both. */
char *log_dir_new(const char *tmpl, char **path);
void log_dir_remove(char *dir, char *path);
/* log_dir_new, and the decision log opened there (it must open). */
BoxDecisionLog *log_tmp_open(const char *tmpl, const char *box_id, const char *run_id, char **dir,
                             char **path);

#endif
