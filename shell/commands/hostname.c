/* hostname.c — hostname with no arguments: the kernel's host name. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

int box_cmd_hostname(BoxCmd *c)
{
  if (c->argc > 1 && strcmp(c->argv[1], "--")) {
    bx_err(c, "hostname", "setting the host name is not supported in the Shell");
    return 1;
  }
  char name[256];
  if (gethostname(name, sizeof name - 1) != 0) {
    bx_err(c, "hostname", "%s", box_strerror(errno));
    return 1;
  }
  name[sizeof name - 1] = 0;
  box_out_printf(c->out, "%s\n", name);
  return 0;
}
