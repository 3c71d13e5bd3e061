/* enable.c — `enable [-a] [-n] [-p] [-s] [NAME…]`: lists the Shell's
 * builtins, or turns them off and on (a command named as one that is off
 * is looked for as a program, lookup.c).  Loading from a shared object
 * (-f, -d) is refused: the Shell loads no code a script names. */
#include <string.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static const char usage[] = "enable: usage: enable [-a] [-dnps] [-f filename] [name ...]";

int box_cmd_enable(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool all = false, off = false, special = false;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    size_t bad = strspn(a + 1, "anps");
    if (a[1 + bad] == 'f' || a[1 + bad] == 'd') {
      box_cmd_error(c, "-%c: loading builtins is not supported", a[1 + bad]);
      return 1;
    }
    if (a[1 + bad]) return bx_bad_option(c, a[1 + bad], usage);
    all |= strchr(a, 'a') != NULL;
    off |= strchr(a, 'n') != NULL;
    special |= strchr(a, 's') != NULL;
  }
  if (i >= c->argc) {
    size_t n;
    const BoxCommandDef *rows = box_command_rows(&n);
    for (size_t k = 0; k < n; k++) {
      if (rows[k].kind == BOX_CMD_UTILITY || (special && rows[k].kind != BOX_CMD_SPECIAL)) continue;
      bool is_off = sh->disabled && g_hash_table_contains(sh->disabled, rows[k].name);
      if (all || is_off == off)
        box_out_printf(c->out, "enable %s%s\n", is_off ? "-n " : "", rows[k].name);
    }
    return 0;
  }
  int status = 0;
  for (; i < c->argc; i++) {
    const BoxCommandDef *d = box_command_lookup(c->argv[i]);
    if (!d || d->kind == BOX_CMD_UTILITY || (special && d->kind != BOX_CMD_SPECIAL)) {
      box_cmd_error(c, "%s: not a shell builtin", c->argv[i]);
      status = 1;
    } else if (off) {
      if (!sh->disabled) sh->disabled = g_hash_table_new(g_str_hash, g_str_equal);
      g_hash_table_add(sh->disabled, (gpointer)d->name);
    } else if (sh->disabled) {
      g_hash_table_remove(sh->disabled, d->name);
    }
  }
  return status;
}
