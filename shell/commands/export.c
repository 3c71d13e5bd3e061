/* export.c — `export [-fn] [-p] [NAME[=value]…]`. */
#include "shell/shell-private.h"

int box_cmd_export(BoxCmd *c)
{
  bool unexport = false;
  for (int i = 1; i < c->argc && c->argv[i][0] == '-'; i++)
    for (const char *p = c->argv[i] + 1; *p; p++)
      if (*p == 'n') unexport = true;
  return box_declare(c, "export", unexport ? 0 : V_EXPORT, false);
}
