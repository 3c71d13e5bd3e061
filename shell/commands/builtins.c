/* builtins.c — helpers the builtins share (builtins.h; box_cmd_error is
 * declared in shell-private.h). */
#include <string.h>

#include "shell/commands/builtins.h"

void box_cmd_error(BoxCmd *c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(c->out);
  box_fdprintf(c->err, "strands-shell: %s: %s\n", c->argv[0], m);
  g_free(m);
}

int bx_bad_option(BoxCmd *c, char opt, const char *usage)
{
  box_cmd_error(c, "-%c: invalid option", opt);
  box_fdprintf(c->err, "%s\n", usage);
  return 2;
}

const char *bx_option_value(BoxCmd *c, const char *p, int *i, const char *usage)
{
  if (p[1]) return p + 1;
  if (*i + 1 < c->argc) return c->argv[++*i];
  box_cmd_error(c, "-%c: option requires an argument", *p);
  box_fdprintf(c->err, "%s\n", usage);
  return NULL;
}

int bx_no_options(BoxCmd *c, const char *usage)
{
  const char *a = c->argc > 1 ? c->argv[1] : NULL;
  if (!a || a[0] != '-' || !a[1]) return 1;
  if (strcmp(a, "--") == 0) return 2;
  bx_bad_option(c, a[1], usage);
  return -1;
}

bool bx_status_operand(BoxCmd *c, bool only_one, int *st)
{
  *st = c->sh->status;
  if (c->argc <= 1) return true;
  long v;
  if (!box_parse_int(c->argv[1], &v)) {
    box_cmd_error(c, "%s: numeric argument required", c->argv[1]);
    *st = 2;
  } else if (only_one && c->argc > 2) {
    /* bash ends the shell (or the subshell) there, with status 1 */
    box_cmd_error(c, "too many arguments");
    c->sh->jump = J_EXIT;
    c->sh->exit_status = 1;
    return false;
  } else {
    *st = (int)(v & 255);
  }
  return true;
}
