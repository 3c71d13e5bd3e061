/* let.c — `let EXPR…`: 1 when the last value is 0. */
#include "shell/shell-private.h"

int box_cmd_let(BoxCmd *c)
{
  if (c->argc < 2) {
    box_cmd_error(c, "expression expected");
    return 1;
  }
  int64_t v = 0;
  /* its messages name it, as (( ))'s name "((" */
  const char *who = c->sh->arith_who;
  c->sh->arith_who = "let";
  bool ok = true;
  for (int i = 1; i < c->argc && ok; i++) ok = box_arith(c->sh, c->argv[i], &v);
  c->sh->arith_who = who;
  return ok ? v == 0 : 1;
}
