/* exit.c — `exit [n]`: ends the shell (or the subshell) after its EXIT trap. */
#include "shell/shell-private.h"

int box_cmd_exit(BoxCmd *c) {
  Shell *sh = c->sh;
  int st = sh->status;
  if (c->argc > 1) {
    long v;
    if (!box_parse_int(c->argv[1], &v)) {
      box_cmd_error(c, "%s: numeric argument required", c->argv[1]);
      st = 2;
    } else if (c->argc > 2) {
      box_cmd_error(c, "too many arguments");
      return 1;
    } else {
      st = (int)(v & 255);
    }
  }
  sh->jump = J_EXIT;
  sh->exit_status = st;
  return st;
}
