/* pwd.c — `pwd [-L|-P]` (-P by default under set -o physical). */
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

int box_cmd_pwd(BoxCmd *c)
{
  /* set -o physical makes -P the default, as in bash */
  bool physical = (c->sh->opts & O_INERT_PHYSICAL) != 0;
  for (int i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (strcmp(a, "-P") == 0)
      physical = true;
    else if (strcmp(a, "-L") == 0)
      physical = false;
    else if (a[0] == '-' && a[1]) {
      box_cmd_error(c, "%s: invalid option", a);
      box_fdprintf(c->err, "pwd: usage: pwd [-LP]\n");
      return 2;
    }
  }
  if (physical) {
    char *p = g_get_current_dir();
    box_out_puts(c->out, p);
    g_free(p);
  } else {
    box_out_puts(c->out, c->sh->cwd);
  }
  box_out_putc(c->out, '\n');
  return 0;
}
