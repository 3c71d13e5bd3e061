/* printenv.c — GNU printenv: [-0] [VARIABLE]... of the exported environment. */
#include <string.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "null=0";

int box_cmd_printenv(BoxCmd *c)
{
  bool zero = false;
  BX_EACH_OPTION (ch, c, "printenv", "0", longopts) {
    if (ch == '0')
      zero = true;
    else
      return 2;
  }
  char **env = box_var_environ(c->sh);
  int status = 0;
  if (optind >= c->argc) {
    for (char **e = env; *e; e++) {
      box_out_puts(c->out, *e);
      box_out_putc(c->out, zero ? '\0' : '\n');
    }
  } else {
    for (int i = optind; i < c->argc; i++) {
      const char *name = c->argv[i];
      size_t n = strlen(name);
      bool found = false;
      if (!strchr(name, '='))
        for (char **e = env; *e; e++)
          if (!strncmp(*e, name, n) && (*e)[n] == '=') {
            box_out_puts(c->out, *e + n + 1);
            box_out_putc(c->out, zero ? '\0' : '\n');
            found = true;
            break;
          }
      if (!found) status = 1;
    }
  }
  g_strfreev(env);
  return status;
}
