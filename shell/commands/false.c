/* false.c — `false`. */
#include "shell/shell-private.h"

int box_cmd_false(BoxCmd *c)
{
  (void)c;
  return 1;
}
