/* policy.h — the policy language (spec/policy.md): load, decide, log.
 *
 * A request is an action term ("fs:read", "shell:exec", ...) and an input
 * record (json-c object) holding the fields of spec/policy.md §4.  Enum
 * fields (fs "operation") are plain strings holding the eid, e.g.
 * "read_content"; the engine types them by the action.
 */
#ifndef BOX_POLICY_H
#define BOX_POLICY_H

#include <stdbool.h>
#include <glib.h>
#include <json-c/json.h>

G_BEGIN_DECLS

#define BOX_POLICY_ERROR (box_policy_error_quark())
GQuark box_policy_error_quark(void);
typedef enum { BOX_POLICY_ERROR_PARSE, BOX_POLICY_ERROR_SCHEMA, BOX_POLICY_ERROR_IO } BoxPolicyErrorCode;

typedef struct BoxPolicy BoxPolicy;

/* Loads a policy file.  On failure the GError message is the spec's text
 * plus the position, e.g. "failed to parse policy source: ... at line 3,
 * column 7"; callers wrap it as "policy file PATH will not load: <msg>".
 * operator_home may be NULL (inert-literal checks then skipped). */
BoxPolicy *box_policy_load_file(const char *path, const char *operator_home, GError **error);
BoxPolicy *box_policy_load_string(const char *text, const char *operator_home, GError **error);
/* No policy at all: every request is denied with NoMatch. */
BoxPolicy *box_policy_new_empty(void);
void box_policy_free(BoxPolicy *policy);
/* Warnings found at load ("<finding>" without the "box: warning: " prefix). */
const GPtrArray *box_policy_warnings(const BoxPolicy *policy);

typedef enum { BOX_VERDICT_PERMIT, BOX_VERDICT_DENY } BoxVerdict;
typedef enum {
  BOX_CAUSE_PERMITTED,
  BOX_CAUSE_FORBIDDEN,
  BOX_CAUSE_NO_MATCH,
  BOX_CAUSE_POLICY_PENDING,
  BOX_CAUSE_INTERNAL_FAULT,
  BOX_CAUSE_ENFORCEMENT,
} BoxCause;

typedef struct {
  BoxVerdict verdict;
  BoxCause cause;
  char *action;          /* "fs:read" */
  char *resource;        /* label of spec/policy.md §3.2 */
  char *rule;            /* @id, policy_N, "<default-deny>", "enforcement:reach-floor" */
  char *description;     /* governing rule's @description, or NULL */
  char *message;         /* "policy denied this operation on '...' [default-deny]: No permit ..." */
  char *reason;          /* deny only: log reason ("no permit matched", floor text, ...) */
  GPtrArray *determining_ids; /* char*, may be empty */
  bool dry_run;          /* asked only to know (Lua's box.decide): logged, never acted on */
  const void *packed_;   /* private: from box_decision_unpack, the block its strings are in */
} BoxDecision;

/* Thread-safe; never returns NULL.  input is borrowed. */
BoxDecision *box_policy_decide(BoxPolicy *policy, const char *action, json_object *input);
/* As box_policy_decide, for a policy that reads no history (else NULL),
 * without the ::request event: for a question that is no request unless
 * the caller records it (box_policy_record_request), as the mount's probe
 * of a missing name. */
BoxDecision *box_policy_decide_quiet(BoxPolicy *policy, const char *action, json_object *input);
/* Whether some request of an fs action on a path strictly below dir (a
 * request's path, spelled as the mount spells it) may be permitted, any
 * operation: false only when every permit's conditions fail on all of them
 * or a forbid's hold on all of them.  Where a condition cannot be told
 * from the path alone the answer is true.  The spelling is taken as it
 * is: "/" is not above "~/x".  For the mount, which refuses a
 * directory that no walk to a permitted path needs as it refuses an
 * absent name (a policy that reads no history: its rules alone decide). */
bool box_policy_may_permit_beneath(BoxPolicy *policy, const char *dir);
/* For `box policy decide --explain`: one line per rule that matched or
 * erred on the request, in file order.  Free with g_ptr_array_unref. */
GPtrArray *box_policy_explain(BoxPolicy *policy, const char *action, json_object *input);
/* A deny made beneath policy (reach floor, identity check): cause
 * enforcement, rule "enforcement:<gate>", message and reason = text. */
BoxDecision *box_decision_new_enforcement(const char *action, const char *resource,
                                          const char *gate, const char *text);
void box_decision_free(BoxDecision *decision);
/* A decision in one allocation, its strings packed after it (g_free it):
 * what is kept of one that is stored or queued for almost every file
 * operation (the mount's decision cache, the log's queue).  action NULL:
 * the decision's own. */
typedef struct {
  BoxVerdict verdict;
  BoxCause cause;
  bool dry_run;
  guint nids;
  size_t size;           /* of the whole block */
  const char *action, *resource, *rule, *description, *message, *reason;
  const char *ids[];
} BoxPackedDecision;
BoxPackedDecision *box_decision_pack(const BoxDecision *decision, const char *action);
/* As box_decision_pack, head bytes into one allocation that starts at
 * *block (the caller's, freed with the decision's copy) */
BoxPackedDecision *box_decision_pack_after(const BoxDecision *decision, size_t head, void **block);
/* A decision again (free with box_decision_free): its strings are in one
 * copy of the block (the cache hit of a file operation), so they are not
 * the decision's to replace. */
BoxDecision *box_decision_unpack(const BoxPackedDecision *packed);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(BoxDecision, box_decision_free)

/* The resource label for a request (spec/policy.md §3.2). Newly allocated. */
char *box_policy_resource_label(const char *action, json_object *input);

/* Decision log: OTLP/JSON lines, spec/policy.md §5.1 and spec/runtime.md §8. */
typedef struct BoxDecisionLog BoxDecisionLog;
BoxDecisionLog *box_decision_log_open(const char *path, const char *box_id, const char *run_id,
                                      GError **error);
/* Appends one line for the decision (thread-safe; the queued lines first,
 * then this one, in one write each, before it returns).
 * command_args: the shell decisions' argv (process.command_args), else NULL. */
void box_decision_log_append(BoxDecisionLog *log, const char *action, json_object *input,
                             const char *const *command_args, const BoxDecision *decision);
/* A shell decision's argv with, per word, whether it was literal in the
 * script.  Words that came from an expansion are logged only when they are
 * a short flag, a long flag of at most 32 lowercase letters and dashes, or
 * `--name=<redacted>`; otherwise as `<redacted>` (spec/runtime.md §8.2).
 * literal == NULL means every word was literal. */
typedef struct {
  const char *const *argv;
  const bool *literal;
  size_t argc;
} BoxCommandArgs;
void box_decision_log_append_args(BoxDecisionLog *log, const char *action, json_object *input,
                                  const BoxCommandArgs *args, const BoxDecision *decision);
/* As box_decision_log_append, for a file operation: the line is queued and
 * written within a few ms by the log's writer thread, or at once by the
 * next other append or flush.  Lost if the process is killed first. */
void box_decision_log_append_queued(BoxDecisionLog *log, const char *action, json_object *input,
                                    const BoxDecision *decision);
/* Writes every queued line (before a command's end is reported). */
void box_decision_log_flush(BoxDecisionLog *log);
/* A batch of decisions: each one's lines rendered onto buf (nanos: the
 * time, from box_decision_log_now, one for the batch), then all written in
 * one write(2) by box_decision_log_write (which empties buf) before any of
 * them is answered. */
void box_decision_log_now(char nanos[32]);
void box_decision_log_render_into(const BoxDecisionLog *log, GString *buf, const char *action, json_object *input,
                                  const BoxCommandArgs *args, const BoxDecision *decision, const char *nanos);
void box_decision_log_write(BoxDecisionLog *log, GString *buf);
/* The reportable spelling of one argv word (newly allocated). */
char *box_command_arg_redact(const char *word, bool literal);
void box_decision_log_close(BoxDecisionLog *log);

/* ---- history (issue 9, spec/policy.md §2, §3.5) ------------------------------
 * Every decide() appends a ::request event before it evaluates; the raiser
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
bool box_policy_record_response(BoxPolicy *policy, const char *action, json_object *input, json_object *output);
bool box_policy_record_error(BoxPolicy *policy, const char *action, json_object *input);
/* A file operation's outcome: ::response with {"result": result}, or
 * ::error when result is NULL (it did not happen).  The output records of
 * the mount's common results are built once per thread. */
bool box_policy_record_outcome(BoxPolicy *policy, const char *action, json_object *input, const char *result);
/* shell:exec / shell:spawn: output.status (128+signal for a signal, 126
 * when a permitted program could not start, -1 when none was reported). */
bool box_policy_record_status(BoxPolicy *policy, const char *action, json_object *input, int status);
/* The history's clock (nanoseconds since the epoch); NULL restores the
 * wall clock.  For tests and `box policy replay`. */
void box_policy_set_clock(BoxPolicy *policy, int64_t (*clock)(void *data), void *data);
/* Events held in memory and the bytes they (and their indexes) take. */
void box_policy_history_stats(BoxPolicy *policy, size_t *events, size_t *bytes);
/* Why the policy denies everything, or NULL. */
const char *box_policy_history_fault(BoxPolicy *policy);
/* Whether some rule has a temporal clause.  When false a verdict depends on
 * the action and its input alone (no history is read), so a caller may
 * reuse it for the same request (the vfs's decision cache, issue 6). */
bool box_policy_reads_history(const BoxPolicy *policy);
/* The ::request event a decide() would append, for a request answered with
 * a verdict reused from an earlier identical one (permitted: whether it was
 * a permit, so that its outcome carries the request's id): the durable
 * history stays complete though policy was not asked.  False when the
 * history cannot be written. */
bool box_policy_record_request(BoxPolicy *policy, const char *action, json_object *input, bool permitted);
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
