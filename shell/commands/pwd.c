/* pwd.c — `pwd [-L|-P]`: the logical working directory (or physical). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

int box_cmd_pwd(BoxCmd *c) {
  bool physical = false;
  for (int i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (strcmp(a, "--") == 0) break;
    if (a[0] != '-' || a[1] == '\0') break;
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'L') physical = false;
      else if (*p == 'P') physical = true;
      else {
        box_fdprintf(c->err, "strands-shell: pwd: -%c: invalid option\npwd: usage: pwd [-LP]\n", *p);
        return 2;
      }
    }
  }
  if (physical) {
    char *cwd = getcwd(NULL, 0);
    if (!cwd) {
      box_fdprintf(c->err, "strands-shell: pwd: %s\n", g_strerror(errno));
      return 1;
    }
    box_out_printf(c->out, "%s\n", cwd);
    free(cwd);
    return 0;
  }
  box_out_printf(c->out, "%s\n", c->sh->cwd);
  return 0;
}
