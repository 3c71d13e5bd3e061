/* eval.c — `eval ARG…`: the joined text runs as shell input (its
 * commands raise their own decisions). */
#include "shell/commands/builtins.h"

int box_cmd_eval(BoxCmd *c)
{
  int first = bx_no_options(c, "eval: usage: eval [arg ...]");
  if (first < 0) return 2;
  if (first >= c->argc) return 0;
  char *text = g_strjoinv(" ", c->argv + first);
  int st = box_eval_text(c->sh, text, NULL);
  g_free(text);
  return st;
}
