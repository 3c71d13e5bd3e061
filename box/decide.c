/* decide.c — every decision passes here: policy, then the log. */
#include "box/box-private.h"

#include <string.h>
#include <sys/stat.h>

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
  while (command_args && command_args[args.argc]) args.argc++;
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

/* The mount's question before it refuses a directory it walks through. */
bool boxd_vfs_beneath(void *data, const char *dir)
{
  Boxd *d = data;
  return box_policy_may_permit_beneath(d->policy, dir);
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
  char id[17];
  box_decision_log_append_queued(d->log, action, input, decision, id);
  boxd_checkpoints_decided(d, command, action, id);
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

/* Whether the operator declared a program at path, or on the way to one:
 * what it resolves to is a [tool.*] command's program or lies under one of
 * them, or it and an [agent.filesystem] exec entry lie one under the other. */
static bool declared_program(Boxd *d, const char *path)
{
  g_autofree char *real = box_canonical_path(path);
  if (!real) return false;
  char *const *exec = d->agent_table ? d->agent_table->exec : NULL;
  for (int i = 0; exec && exec[i]; i++)
    if (box_path_within(real, exec[i]) || box_path_within(exec[i], real)) return true;
  for (int i = 0; d->tool_tables && d->tool_tables[i]; i++) {
    if (d->tool_tables[i]->box_tmp) continue; /* a file of the box's /tmp, not the host's */
    g_autofree char *program = box_tools_table_program(d->tool_tables[i], d->operator_path);
    if (program && box_path_within(program, real)) return true;
  }
  return false;
}

/* The floors of the mount (vfs/floor.c), for a program's lookup:
 * boxd's state and the mount's own host paths are no program of the agent,
 * and a path outside the bound roots (and the system tree, which is not
 * asked about) is in the agent's view an in-memory path, where the host's
 * file is not seen, unless the operator declared a program there. */
static const char *lookup_floor(Boxd *d, const char *path)
{
  const char *files[] = { d->config->path, d->config->policy };
  struct stat st, fst;
  bool have = stat(path, &st) == 0;
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    if (!files[i]) continue;
    /* by name, or by identity: a hard link to an authority file */
    if (strcmp(path, files[i]) == 0 ||
        (have && stat(files[i], &fst) == 0 && fst.st_dev == st.st_dev && fst.st_ino == st.st_ino))
      return "resolves to an authority source that this run loaded, which no policy may open "
             "or change";
  }
  const char *trees[] = { d->config->box_dir, d->mountpoint, d->staging_dir };
  for (size_t i = 0; i < G_N_ELEMENTS(trees); i++)
    if (trees[i] && box_path_within(path, trees[i]))
      return "resolves into trusted Box state, which no policy may open";
  for (char **r = d->roots; r && *r; r++)
    if (box_path_within(path, *r)) return NULL;
  if (declared_program(d, path)) return NULL;
  return "outside this box's home and every declared bind";
}

/* One path a program's lookup reads (tools/resolve.c), decided as
 * the mount decides a stat of it — fs:read on the path, logged, then the
 * floors — so that a refused path answers as an absent one. */
static json_object *read_input(Boxd *d, const char *path, const char *operation, char **spelled)
{
  *spelled = box_tools_spell_home(path, d->operator_home);
  json_object *input = json_object_new_object();
  json_object_object_add(input, "path", json_object_new_string(*spelled));
  json_object_object_add(input, "operation", json_object_new_string(operation));
  return input;
}

bool boxd_lookup_may_read(void *data, const char *path, const char *operation)
{
  Boxd *d = data;
  g_autofree char *spelled = NULL;
  json_object *input = read_input(d, path, operation, &spelled);
  BoxDecision *decision = box_policy_decide(d->policy, "fs:read", input);
  const char *why = decision->verdict == BOX_VERDICT_PERMIT ? lookup_floor(d, path) : NULL;
  if (why) {
    g_autofree char *text = g_strdup_printf("%s: %s", spelled, why);
    box_decision_free(decision);
    decision = box_decision_new_enforcement("fs:read", spelled, "reach-floor", text);
  }
  box_decision_log_append(d->log, "fs:read", input, NULL, decision);
  bool permit = decision->verdict == BOX_VERDICT_PERMIT;
  box_decision_free(decision);
  json_object_put(input);
  return permit;
}

/* Running a program that lies in the box (README, "Programs") reads it:
 * decided before anything looks at the file, so a refusal says the same
 * whether it is there or not, and in the policy's words when a table has
 * already named the path. */
char *boxd_program_read_refused(Boxd *d, const char *path, const char *operation)
{
  g_autofree char *spelled = NULL;
  json_object *input = read_input(d, path, operation, &spelled);
  BoxDecision *decision = boxd_decide(d, "fs:read", input, NULL);
  char *refused = decision->verdict == BOX_VERDICT_PERMIT ? NULL : g_strdup(decision->message);
  box_decision_free(decision);
  json_object_put(input);
  return refused;
}
