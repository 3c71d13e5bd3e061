/* whoami.c — the effective user's name. */
#include <pwd.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

int box_cmd_whoami(BoxCmd *c)
{
  if (c->argc > 1) {
    bx_usage_q(c, "whoami", "extra operand %s", c->argv[1]);
    return 1;
  }
  uid_t u = geteuid();
  const char *name = bx_user_name(u);
  if (!name) {
    bx_err(c, "whoami", "cannot find name for user ID %u", (unsigned)u);
    return 1;
  }
  box_out_printf(c->out, "%s\n", name);
  return 0;
}
