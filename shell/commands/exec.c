/* exec.c — `exec [CMD ARG…]`: with only redirections they stay for the
 * rest of the shell (the evaluator handles that); with a command, the
 * Shell cannot replace itself, so it runs CMD and exits with its status. */
#include "shell/shell-private.h"

int box_cmd_exec(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  while (i < c->argc && c->argv[i][0] == '-' && c->argv[i][1]) i++;
  if (i >= c->argc) return 0;
  int st = box_run_argv(sh, c->argv + i, c->in, c->out_fd, c->err);
  sh->jump = J_EXIT;
  sh->exit_status = st;
  return st;
}
