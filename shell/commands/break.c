/* break.c — `break [n]` and `continue [n]`: leave n enclosing loops, or
 * the innermost n - 1 and go on with the next turn of the n-th. */
#include "shell/shell-private.h"

static int jump(BoxCmd *c, int kind)
{
  Shell *sh = c->sh;
  long n = 1;
  if (sh->loop_depth == 0) {
    box_cmd_error(c, "only meaningful in a `for', `while', or `until' loop");
    return 0;
  }
  /* bash ends the shell on a count that is no number (status 128 or'd
   * with $?: 129 after a failure) or on two counts (status 1): a loop
   * left the wrong way must not go on */
  if (c->argc > 2 || (c->argc > 1 && !box_parse_int(c->argv[1], &n))) {
    if (c->argc > 2)
      box_cmd_error(c, "too many arguments");
    else
      box_cmd_error(c, "%s: numeric argument required", c->argv[1]);
    sh->jump = J_EXIT;
    sh->exit_status = c->argc > 2 ? 1 : 128 | (sh->status & 255);
    return sh->exit_status;
  }
  if (n < 1) {
    /* bash leaves every loop then, and fails */
    box_cmd_error(c, "%s: loop count out of range", c->argv[1]);
    sh->jump = J_BREAK;
    sh->jump_n = sh->loop_depth;
    return 1;
  }
  sh->jump = kind;
  sh->jump_n = (int)MIN(n, sh->loop_depth);
  return 0;
}

int box_cmd_break(BoxCmd *c)
{
  return jump(c, J_BREAK);
}

int box_cmd_continue(BoxCmd *c)
{
  return jump(c, J_CONTINUE);
}
