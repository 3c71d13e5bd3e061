/* readonly.c — `readonly [-aAp] [NAME[=value]…]`. */
#include "shell/shell-private.h"

int box_cmd_readonly(BoxCmd *c)
{
  return box_declare(c, "readonly", V_READONLY, false);
}
