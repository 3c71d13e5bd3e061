/* typeset.c — `typeset`: declare's other name. */
#include "shell/shell-private.h"

int box_cmd_typeset(BoxCmd *c)
{
  return box_declare(c, "typeset", 0, false);
}
