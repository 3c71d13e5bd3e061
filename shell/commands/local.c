/* local.c — `local [option] NAME[=value]…` inside a function. */
#include <string.h>

#include "shell/shell-private.h"

int box_cmd_local(BoxCmd *c)
{
  if (c->sh->frames->len == 0) {
    box_cmd_error(c, "can only be used in a function");
    return 1;
  }
  /* `local` and `local -p` with no names: the function's own */
  if (c->argc == 1 || (c->argc == 2 && strcmp(c->argv[1], "-p") == 0))
    return box_declare_list_locals(c);
  return box_declare(c, "local", 0, true);
}
