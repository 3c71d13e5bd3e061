/* exit.c — `exit [n]`: ends the shell (or the subshell) after its EXIT trap. */
#include "shell/commands/builtins.h"

int box_cmd_exit(BoxCmd *c)
{
  Shell *sh = c->sh;
  int st;
  if (!bx_status_operand(c, true, &st)) return 1;
  sh->jump = J_EXIT;
  sh->exit_status = st;
  return st;
}
