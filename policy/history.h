/* history.h — the policy's history of requests and their outcomes, which
 * history rules read (spec/policy.md §2, §3.5). */
#ifndef BOX_POLICY_HISTORY_H
#define BOX_POLICY_HISTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include <json-c/json.h>
#include "policy/policy.h"

G_BEGIN_DECLS

/* Every decide() appends a ::request event before it evaluates; the raiser
 * of an effect records its ::response (effect happened or may have) or
 * ::error (definitely did not).  Without box_policy_open_history the
 * history lives in memory only. */
/* Opens (creating) the durable history in dir (a box: <box_dir>/private),
 * recovering its events and cutting a torn tail with a warning.  On
 * failure the policy denies every request from now on (InternalFault) and
 * *error says why ("policy history failure: …"). */
bool box_policy_open_history(BoxPolicy *policy, const char *dir, GError **error);
/* output: the action's output record ({"status": N} for shell:*, {"result":
 * "completed"} for fs:*, {"status": N} or {} for http:request), or NULL.
 * False when the history cannot be written (the policy then denies). */
bool box_policy_record_response(BoxPolicy *policy, const char *action, json_object *input,
                                json_object *output);
bool box_policy_record_error(BoxPolicy *policy, const char *action, json_object *input);
/* A file operation's outcome: ::response with {"result": result}, or
 * ::error when result is NULL (it did not happen).  The output records of
 * the mount's common results are built once per thread. */
bool box_policy_record_outcome(BoxPolicy *policy, const char *action, json_object *input,
                               const char *result);
/* shell:exec / shell:spawn: output.status (128+signal for a signal, 126
 * when a permitted program could not start, -1 when none was reported). */
bool box_policy_record_status(BoxPolicy *policy, const char *action, json_object *input,
                              int status);
/* The history's clock (nanoseconds since the epoch); NULL restores the
 * wall clock.  For tests and `box policy replay`. */
void box_policy_set_clock(BoxPolicy *policy, int64_t (*clock)(void *data), void *data);
/* Events held in memory and the bytes they (and their indexes) take. */
void box_policy_history_stats(BoxPolicy *policy, size_t *events, size_t *bytes);
/* Why the policy denies everything, or NULL. */
const char *box_policy_history_fault(BoxPolicy *policy);
/* Whether some rule has a temporal clause.  When false a verdict depends on
 * the action and its input alone (no history is read), so a caller may
 * reuse it for the same request (the vfs's decision cache). */
bool box_policy_reads_history(const BoxPolicy *policy);
/* The ::request event a decide() would append, for a request answered with
 * a verdict reused from an earlier identical one (permitted: whether it was
 * a permit, so that its outcome carries the request's id): the durable
 * history stays complete though policy was not asked.  False when the
 * history cannot be written. */
bool box_policy_record_request(BoxPolicy *policy, const char *action, json_object *input,
                               bool permitted);
/* A batch of decisions made by one thread (a file operation, or a batch of
 * the Shell's opens): its history records are held in memory and written
 * by the history's flusher within 50 ms, or before the next record made
 * outside a batch, or by box_policy_history_sync.  False when an earlier
 * write failed (the policy then denies; the batch's permits must not be
 * acted on). */
void box_policy_history_batch_begin(BoxPolicy *policy);
bool box_policy_history_batch_end(BoxPolicy *policy);
/* Writes the held records now (boxd: before a command's end is reported). */
bool box_policy_history_sync(BoxPolicy *policy);

G_END_DECLS
#endif
