/* true.c — `true` and `:`. */
#include "shell/shell-private.h"

int box_cmd_true(BoxCmd *c)
{
  (void)c;
  return 0;
}
