/* policy.h — the policy language (spec/policy.md): load and decide.  The
 * decision log is policy/decision_log.h, the history policy/history.h.
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
typedef enum {
  BOX_POLICY_ERROR_PARSE,
  BOX_POLICY_ERROR_SCHEMA,
  BOX_POLICY_ERROR_IO
} BoxPolicyErrorCode;

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
  char *action;      /* "fs:read" */
  char *resource;    /* label of spec/policy.md §3.2 */
  char *rule;        /* @id, policy_N, "<default-deny>", "enforcement:reach-floor" */
  char *description; /* governing rule's @description, or NULL */
  char *message;     /* "policy denied this operation on '...' [default-deny]: No permit ..." */
  char *reason;      /* deny only: log reason ("no permit matched", floor text, ...) */
  GPtrArray *determining_ids; /* char*, may be empty */
  bool dry_run;               /* asked only to know (Lua's box.decide): logged, never acted on */
  const void *packed_;        /* private: from box_decision_unpack, the block its strings are in */
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
/* A decision no rule made (policy_pending, no_match), or one a gate
 * grants on another decision's permit (permitted; rule that one's rule). */
BoxDecision *box_decision_new(const char *action, const char *resource, BoxCause cause,
                              const char *rule);
void box_decision_free(BoxDecision *decision);
/* The cause as the decision log and the differential driver spell it
 * ("no_match"). */
const char *box_cause_name(BoxCause cause);
/* A decision in one allocation, its strings packed after it (g_free it):
 * what is kept of one that is stored or queued for almost every file
 * operation (the mount's decision cache, the log's queue).  action NULL:
 * the decision's own. */
typedef struct {
  BoxVerdict verdict;
  BoxCause cause;
  bool dry_run;
  guint nids;
  size_t size; /* of the whole block */
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

/* Generated actions (spec/policy.md, "Per-tool action"): an MCP server's
 * tools, known only once the server has listed them.
 *
 * Declares the namespace of a server whose tools are not known yet: a
 * policy loaded now may name its actions (NS::Action::"tool"), and those
 * rules wait for box_policy_install_actions. */
void box_policy_declare_namespace(const char *ns);
/* Registers the action TERM (ns::Action::"tool", as mcp/schema.c spells
 * it) of SERVER's TOOL, its input record's fields as the schema fragment
 * spells them ("a: Long, b?: String").  Process-wide, once per term (a
 * second registration keeps the first).  Returns its index, or -1. */
int box_policy_register_action(const char *server, const char *term, const char *tool,
                               const char *fields);
/* Checks policy's rules against the actions registered in NS and indexes
 * them: until then a decision of those actions is PolicyPending.  False
 * with the load's error text (unknown action, schema) when a rule does
 * not fit them; the actions then stay pending. */
bool box_policy_install_actions(BoxPolicy *policy, const char *ns, GError **error);

/* The resource label for a request (spec/policy.md §3.2). Newly allocated. */
char *box_policy_resource_label(const char *action, json_object *input);

G_END_DECLS
#endif
