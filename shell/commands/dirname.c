/* dirname.c — GNU dirname: NAME..., -z. */
#include <string.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "zero=z";

int box_cmd_dirname(BoxCmd *c)
{
  bool zero = false;
  BX_EACH_OPTION (ch, c, "dirname", "z", longopts) {
    if (ch == 'z')
      zero = true;
    else
      return 1;
  }
  if (optind >= c->argc) {
    bx_usage(c, "dirname", "missing operand");
    return 1;
  }
  for (int i = optind; i < c->argc; i++) {
    const char *s = c->argv[i];
    size_t n = strlen(s);
    while (n > 1 && s[n - 1] == '/') n--;
    while (n > 0 && s[n - 1] != '/') n--;
    if (n == 0)
      box_out_putc(c->out, '.');
    else {
      while (n > 1 && s[n - 1] == '/') n--;
      /* POSIX: a leading "//" stays as it is */
      box_out_write(c->out, s, n);
    }
    box_out_putc(c->out, zero ? '\0' : '\n');
  }
  return 0;
}
