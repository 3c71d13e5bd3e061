/* decide.c — every decision passes here: policy, then the log. */
#include "box/boxd.h"

#include <string.h>

BoxDecision *boxd_decide(Boxd *d, const char *action, json_object *input,
                         const char *const *command_args)
{
  return boxd_decide_args(d, action, input, command_args, NULL);
}

BoxDecision *boxd_decide_args(Boxd *d, const char *action, json_object *input,
                              const char *const *command_args, const bool *literal)
{
  BoxDecision *decision = box_policy_decide(d->policy, action, input);
  BoxCommandArgs args = { command_args, literal, 0 };
  while (command_args && command_args[args.argc])
    args.argc++;
  box_decision_log_append_args(d->log, action, input, command_args ? &args : NULL, decision);
  return decision;
}

BoxDecision *boxd_vfs_decide(void *data, int command, const char *action, json_object *input)
{
  Boxd *d = data;
  (void)command;
  return box_policy_decide(d->policy, action, input);
}

/* The mount's probe of a missing name (no ::request unless refused). */
BoxDecision *boxd_vfs_decide_quiet(void *data, int command, const char *action, json_object *input)
{
  Boxd *d = data;
  (void)command;
  return box_policy_decide_quiet(d->policy, action, input);
}

/* A verdict the vfs reused: the history still records the request. */
void boxd_vfs_note(void *data, int command, const char *action, json_object *input,
                   const BoxDecision *decision)
{
  Boxd *d = data;
  (void)command;
  box_policy_record_request(d->policy, action, input, decision->verdict == BOX_VERDICT_PERMIT);
}

void boxd_vfs_record(void *data, int command, const char *action, json_object *input,
                     const BoxDecision *decision)
{
  Boxd *d = data;
  (void)command;
  box_decision_log_append_queued(d->log, action, input, decision);
}

/* One file operation's history records, written together before its answer. */
void boxd_vfs_history_batch(void *data, bool begin)
{
  Boxd *d = data;
  if (begin)
    box_policy_history_batch_begin(d->policy);
  else
    box_policy_history_batch_end(d->policy);
}

/* The vfs's history raiser: the outcome of a permitted file operation's
 * effect, as ::response (completed, descriptor_issued, indeterminate) or
 * ::error (it did not happen). */
void boxd_vfs_outcome(void *data, int command, const char *action, json_object *input,
                      const char *result)
{
  Boxd *d = data;
  (void)command;
  box_policy_record_outcome(d->policy, action, input, result);
}
