/* umask.c — `umask [-pS] [MODE]`. */
#include <string.h>
#include <sys/stat.h>

#include "shell/shell-private.h"

int box_cmd_umask(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool sym = false;
  int i = 1;
  for (; i < c->argc && c->argv[i][0] == '-' && c->argv[i][1]; i++) {
    if (strchr(c->argv[i], 'S')) sym = true;
  }
  if (i >= c->argc) {
    mode_t m = sh->umask;
    if (sym) {
      mode_t p = ~m & 0777;
      box_out_printf(c->out, "u=%s%s%s,g=%s%s%s,o=%s%s%s\n", p & 0400 ? "r" : "",
                     p & 0200 ? "w" : "", p & 0100 ? "x" : "", p & 040 ? "r" : "",
                     p & 020 ? "w" : "", p & 010 ? "x" : "", p & 04 ? "r" : "", p & 02 ? "w" : "",
                     p & 01 ? "x" : "");
    } else {
      box_out_printf(c->out, "%04o\n", (unsigned)m);
    }
    return 0;
  }
  const char *a = c->argv[i];
  unsigned v = 0;
  for (const char *p = a; *p; p++) {
    if (*p < '0' || *p > '7') {
      box_cmd_error(c, "%s: octal number out of range", a);
      return 1;
    }
    v = v * 8 + (unsigned)(*p - '0');
  }
  sh->umask = (mode_t)(v & 0777);
  umask(sh->umask);
  return 0;
}
