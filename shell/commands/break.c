/* break.c — `break [n]`. */
#include "shell/shell-private.h"

int box_cmd_break(BoxCmd *c) {
  Shell *sh = c->sh;
  long n = 1;
  if (c->argc > 1 && (!box_parse_int(c->argv[1], &n) || n < 1)) {
    box_cmd_error(c, "%s: loop count out of range", c->argv[1]);
    return 1;
  }
  if (sh->loop_depth == 0) {
    box_cmd_error(c, "only meaningful in a `for', `while', or `until' loop");
    return 0;
  }
  sh->jump = J_BREAK;
  sh->jump_n = (int)MIN(n, sh->loop_depth);
  return 0;
}
