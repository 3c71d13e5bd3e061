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

static void put_objects(gpointer p)
{
  json_object **o = p;
  for (int i = 0; i < 3; i++)
    if (o[i])
      json_object_put(o[i]);
  g_free(o);
}
static GPrivate outputs_key = G_PRIVATE_INIT(put_objects);

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
  /* the output records of the mount's three results, built once per thread
   * (one is recorded per decided operation; json-c objects are not shared
   * between threads: rendering one writes into it) */
  static const char *const common[3] = { "completed", "descriptor_issued", "indeterminate" };
  int k = 0;
  while (k < 3 && strcmp(result, common[k]) != 0)
    k++;
  json_object **cached = g_private_get(&outputs_key);
  if (k < 3 && !cached) {
    cached = g_new0(json_object *, 3);
    g_private_set(&outputs_key, cached);
  }
  json_object *output = k < 3 ? cached[k] : NULL;
  if (!output) {
    output = json_object_new_object();
    json_object_object_add(output, "result", json_object_new_string(result));
    if (k < 3)
      cached[k] = output;
  }
  box_policy_record_response(d->policy, action, input, output);
  if (k == 3)
    json_object_put(output);
}
