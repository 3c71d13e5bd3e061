/* unalias.c — `unalias [-a] NAME…`. */
#include <string.h>

#include "shell/shell-private.h"

int box_cmd_unalias(BoxCmd *c)
{
  Shell *sh = c->sh;
  if (c->argc < 2) {
    box_fdprintf(c->err, "unalias: usage: unalias [-a] name [name ...]\n");
    return 2;
  }
  int st = 0;
  for (int i = 1; i < c->argc; i++) {
    if (strcmp(c->argv[i], "-a") == 0) {
      g_hash_table_remove_all(sh->aliases);
      continue;
    }
    if (!g_hash_table_remove(sh->aliases, c->argv[i])) {
      box_cmd_error(c, "%s: not found", c->argv[i]);
      st = 1;
    }
  }
  return st;
}
