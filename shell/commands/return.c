/* return.c — `return [n]` from a function or a sourced file. */
#include "shell/commands/builtins.h"

int box_cmd_return(BoxCmd *c)
{
  Shell *sh = c->sh;
  int st;
  if (!bx_status_operand(c, true, &st)) return 1;
  if (sh->func_depth == 0 && sh->script_name == NULL) {
    box_cmd_error(c, "can only `return' from a function or sourced script");
    return 2; /* bash's EX_USAGE */
  }
  sh->jump = J_RETURN;
  sh->exit_status = st;
  return st;
}
