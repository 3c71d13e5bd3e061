/* which.c — `which [-a] NAME…`: where each name's program is, as the Shell
 * would find it (lookup.c): on its PATH in its own view, else the file a
 * `[tool.*]` table runs.  A program the Shell implements itself (cat, ls…)
 * and no file stands for is named as `command -v` names it; the language's
 * builtins and functions are not programs, as for debianutils' which. */
#include <string.h>

#include "shell/commands/commands-private.h"

int box_cmd_which(BoxCmd *c)
{
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    for (const char *p = a + 1; *p; p++) {
      /* -a: one file answers all the same, the one that would run */
      if (*p != 'a') {
        bx_usage(c, "which", "invalid option -- '%c'", *p);
        return 2;
      }
    }
  }
  int status = 0;
  if (i >= c->argc) return 1;
  for (; i < c->argc; i++) {
    const char *name = c->argv[i];
    g_autofree char *found = box_lookup_program(c->sh, name);
    const BoxCommandDef *def = strchr(name, '/') ? NULL : box_command_lookup(name);
    if (found)
      box_out_printf(c->out, "%s\n", found);
    else if (def && def->kind == BOX_CMD_UTILITY)
      box_out_printf(c->out, "%s\n", name);
    else
      status = 1;
  }
  return status;
}
