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
  box_decision_log_append(d->log, action, input, NULL, decision);
}

static void put_object(gpointer p)
{
  json_object_put(p);
}
static GPrivate issued_key = G_PRIVATE_INIT(put_object);

/* The vfs's history raiser: the outcome of a permitted file operation's
 * effect, as ::response (completed, descriptor_issued, indeterminate) or
 * ::error (it did not happen). */
void boxd_vfs_outcome(void *data, int command, const char *action, json_object *input,
                      const char *result)
{
  Boxd *d = data;
  (void)command;
  if (!result) {
    box_policy_record_error(d->policy, action, input);
    return;
  }
  /* the common outcome's record, built once per thread (json-c objects are
   * not shared between threads: rendering one writes into it) */
  bool common = strcmp(result, "descriptor_issued") == 0;
  json_object *issued = common ? g_private_get(&issued_key) : NULL;
  if (common && !issued) {
    issued = json_object_new_object();
    json_object_object_add(issued, "result", json_object_new_string(result));
    g_private_set(&issued_key, issued);
  }
  json_object *output = common ? issued : json_object_new_object();
  if (!common)
    json_object_object_add(output, "result", json_object_new_string(result));
  box_policy_record_response(d->policy, action, input, output);
  if (!common)
    json_object_put(output);
}
