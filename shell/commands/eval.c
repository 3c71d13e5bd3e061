/* eval.c — `eval ARG…`: the joined text runs as shell input (its
 * commands raise their own decisions). */
#include "shell/shell-private.h"

int box_cmd_eval(BoxCmd *c)
{
  if (c->argc < 2) return 0;
  char *text = g_strjoinv(" ", c->argv + 1);
  int st = box_eval_text(c->sh, text, NULL);
  g_free(text);
  return st;
}
