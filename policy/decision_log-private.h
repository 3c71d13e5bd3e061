/* decision_log-private.h — a decision's two log lines rendered for comparison in the unit
 * test. */
#ifndef BOX_POLICY_DECISION_LOG_PRIVATE_H
#define BOX_POLICY_DECISION_LOG_PRIVATE_H

#include "policy/decision_log.h"

/* A decision's two log lines (with their newlines), hand
 * rendered; and the same through json-c objects, for the unit test. */
char *policy_decision_log_render(const BoxDecisionLog *log, const char *action, json_object *input,
                                 const BoxCommandArgs *command_args, const BoxDecision *decision,
                                 const char *nanos, const char *trace, const char *span);
char *policy_decision_log_render_ref(const BoxDecisionLog *log, const char *action,
                                     json_object *input, const BoxCommandArgs *command_args,
                                     const BoxDecision *decision, const char *nanos,
                                     const char *trace, const char *span);

#endif
