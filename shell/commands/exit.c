/* exit.c — `exit [n]`: ends the run (or the pipeline stage) with n & 255. */
#include "shell/shell-private.h"

int box_cmd_exit(BoxCmd *c) {
  Shell *sh = c->sh;
  int i = 1;
  if (i < c->argc && g_strcmp0(c->argv[i], "--") == 0) i++;
  int status = sh->last_status;
  if (i < c->argc) {
    long v;
    if (!box_parse_int(c->argv[i], &v)) {
      box_fdprintf(c->err, "strands-shell: exit: %s: numeric argument required\n", c->argv[i]);
      status = 2;
    } else if (i + 1 < c->argc) {
      box_fdprintf(c->err, "strands-shell: exit: too many arguments\n");
      return 1;
    } else {
      status = (int)(v & 255);
    }
  }
  sh->exiting = true;
  sh->exit_status = status;
  return status;
}
