/* builtin.c — `builtin NAME [ARG…]`: runs the shell's own builtin NAME even
 * where a function of the name hides it (a wrapper's way to the original). */
#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

int box_cmd_builtin(BoxCmd *c)
{
  int i = 1;
  if (i < c->argc && g_strcmp0(c->argv[i], "--") == 0) i++;
  if (i >= c->argc) return 0;
  /* bash's own builtins only: the Shell's versions of programs are not */
  const BoxCommandDef *d = box_command_lookup(c->argv[i]);
  if (!d || d->kind == BOX_CMD_UTILITY ||
      (c->sh->disabled && g_hash_table_contains(c->sh->disabled, d->name))) {
    box_cmd_error(c, "%s: not a shell builtin", c->argv[i]);
    return 1;
  }
  return bx_run_past_functions(c, c->argv + i);
}
