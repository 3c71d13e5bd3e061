/* caller.c — `caller [N]`: where the function running (N levels out) was
 * called from, in bash -c's words: a call from the top level has no
 * function and "NULL" for its file; the text of -c is "environment". */
#include <string.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static const char usage[] = "caller: usage: caller [expr]";

int box_cmd_caller(BoxCmd *c)
{
  Shell *sh = c->sh;
  guint depth = sh->funcstack->len;
  int i = 1;
  if (i < c->argc && strcmp(c->argv[i], "--") == 0) i++;
  if (i >= c->argc) {
    if (!depth) return 1;
    long line = g_array_index(sh->call_lines, long, depth - 1);
    box_out_printf(c->out, "%ld %s\n", line, depth > 1 ? "environment" : "NULL");
    return 0;
  }
  const char *a = c->argv[i];
  if (a[0] == '-' && a[1]) return bx_bad_option(c, a[1], usage);
  long n;
  if (!box_parse_int(a, &n) || n < 0) {
    box_cmd_error(c, "%s: invalid number", a);
    box_fdprintf(c->err, "%s\n", usage);
    return 2;
  }
  /* frame n is a call made from inside a function: the top level's calls
   * have no frame of their own to name */
  if ((guint64)n + 1 >= depth) return 1;
  guint k = depth - 1 - (guint)n;
  box_out_printf(c->out, "%ld %s environment\n", g_array_index(sh->call_lines, long, k),
                 (const char *)sh->funcstack->pdata[k - 1]);
  return 0;
}
