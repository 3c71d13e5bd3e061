/* decide.c — every decision passes here: policy, then the log. */
#include "box/boxd.h"

BoxDecision *boxd_decide(Boxd *d, const char *action, json_object *input,
                         const char *const *command_args)
{
  BoxDecision *decision = box_policy_decide(d->policy, action, input);
  box_decision_log_append(d->log, action, input, command_args, decision);
  return decision;
}

BoxDecision *boxd_vfs_decide(void *data, int command, const char *action, json_object *input)
{
  Boxd *d = data;
  (void)command;
  return box_policy_decide(d->policy, action, input);
}

void boxd_vfs_record(void *data, int command, const char *action, json_object *input,
                     const BoxDecision *decision)
{
  Boxd *d = data;
  (void)command;
  box_decision_log_append(d->log, action, input, NULL, decision);
}
