/* uname.c — GNU uname: -a -s -n -r -v -m -p -i -o. */
#include <string.h>
#include <sys/utsname.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "all=a kernel-name=s nodename=n kernel-release=r kernel-version=v "
                               "machine=m processor=p hardware-platform=i "
                               "operating-system=o";

int box_cmd_uname(BoxCmd *c)
{
  unsigned f = 0;
  bool all = false;
  BX_EACH_OPTION (ch, c, "uname", "asnrvmpio", longopts) {
    const char *k = strchr("snrvmpio", ch);
    if (ch == 'a')
      all = true;
    else if (k)
      f |= 1u << (k - "snrvmpio");
    else
      return 1;
  }
  if (optind < c->argc) {
    bx_usage_q(c, "uname", "extra operand %s", c->argv[optind]);
    return 1;
  }
  if (all) f = 0xff & ~(1u << 5 | 1u << 6);
  if (!f) f = 1;
  struct utsname u;
  uname(&u);
  const char *v[8] = { u.sysname, u.nodename, u.release, u.version,
                       u.machine, "unknown",  "unknown", "GNU/Linux" };
  bool first = true;
  for (int k = 0; k < 8; k++) {
    if (!(f & (1u << k))) continue;
    if (!first) box_out_putc(c->out, ' ');
    box_out_puts(c->out, v[k]);
    first = false;
  }
  box_out_putc(c->out, '\n');
  return 0;
}
