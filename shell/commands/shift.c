/* shift.c — `shift [n]`. */
#include <string.h>

#include "shell/shell-private.h"

int box_cmd_shift(BoxCmd *c)
{
  Shell *sh = c->sh;
  long n = 1;
  if (c->argc > 1 && !box_parse_int(c->argv[1], &n)) {
    box_cmd_error(c, "%s: numeric argument required", c->argv[1]);
    return 1;
  }
  if (n < 0) {
    box_cmd_error(c, "%s: shift count out of range", c->argv[1]);
    return 1;
  }
  if (n > sh->npos) return 1;
  for (long i = 0; i < n; i++) g_free(sh->pos[i]);
  memmove(sh->pos, sh->pos + n, sizeof(char *) * (size_t)(sh->npos - n + 1));
  sh->npos -= (int)n;
  return 0;
}
