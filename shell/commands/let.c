/* let.c — `let EXPR…`: 1 when the last value is 0. */
#include "shell/shell-private.h"

int box_cmd_let(BoxCmd *c)
{
  if (c->argc < 2) {
    box_cmd_error(c, "expression expected");
    return 1;
  }
  int64_t v = 0;
  for (int i = 1; i < c->argc; i++)
    if (!box_arith(c->sh, c->argv[i], &v)) return 1;
  return v == 0;
}
