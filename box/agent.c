/* agent.c — the agent runs contained, like a tool (spec/runtime.md §5.10).
 *
 * Its view: its own lists and exec entries, its command and interpreters
 * with their loader closures, <box_dir>/bin (the aliases, first on PATH),
 * the broker socket, the workspace (entered only unless a list grants
 * it), and nothing else of box_dir.  The mount places its requests in a
 * command of its own, as a tool: its own system calls raise no decision.
 */
#include "box/box-private.h"

#include <errno.h>
#include <unistd.h>

typedef struct {
  Boxd *d;
  int command;
} AgentAttach;

static bool attach_agent(void *data, pid_t pid, const char *const *paths, const char *reach)
{
  AgentAttach *a = data;
  g_autoptr(GError) error = NULL;

  if (!box_vfs_tool_attach(a->d->vfs, a->command, pid, paths, reach, &error)) {
    g_printerr("box: error: the agent could not be placed in the mount: %s\n", error->message);
    return false;
  }
  return true;
}

pid_t box_agent_start(Boxd *d, char **argv, GError **error)
{
  const char *declared = g_hash_table_lookup(d->config->agent.env, "PATH");
  g_autofree char *program =
    box_tools_resolve(argv[0], d->workspace, declared && *declared ? declared : d->operator_path);
  if (!program) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "invalid `[agent]` table: `command` element 0 \"%s\" does not name an executable "
                "file",
                argv[0]);
    return -1;
  }
  if (!d->agent_table->workspace) d->agent_table->workspace = d->workspace;
  int command = box_vfs_command_new(d->vfs);
  if (command < 0) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "the mount has no room for the agent");
    return -1;
  }
  AgentAttach a = { d, command };
  /* §2.1: the command's own fixed arguments may name the telemetry
   * receiver; the arguments `box run` was given are never expanded */
  char **fixed = box_run_agent_override ? box_run_agent_override : d->config->agent.command;
  g_auto(GStrv) expanded = box_tools_expand_telemetry_args(argv, g_strv_length(fixed));
  argv = expanded;
  BoxToolLaunch launch = boxd_tool_launch(d, program, argv, d->agent_table, d->workspace);
  launch.operator_home = d->agent_home;
  launch.is_agent = true;
  launch.fd_in = STDIN_FILENO;
  pid_t pid = box_tools_launch(&launch, STDOUT_FILENO, STDERR_FILENO, attach_agent, &a, error);
  if (pid < 0) g_prefix_error(error, "cannot start the agent: ");
  return pid;
}
