/* return.c — `return [n]` from a function or a sourced file. */
#include "shell/shell-private.h"

int box_cmd_return(BoxCmd *c) {
  Shell *sh = c->sh;
  int st = sh->status;
  if (c->argc > 1) {
    long v;
    if (!box_parse_int(c->argv[1], &v)) {
      box_cmd_error(c, "%s: numeric argument required", c->argv[1]);
      st = 2;
    } else {
      st = (int)(v & 255);
    }
  }
  if (sh->func_depth == 0 && sh->script_name == NULL) {
    box_cmd_error(c, "can only `return' from a function or sourced script");
    return 1;
  }
  sh->jump = J_RETURN;
  sh->exit_status = st;
  return st;
}
