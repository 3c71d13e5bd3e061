/* caller.c — `caller [N]`: where the function running (N levels out) was
 * called from, read off the call stack (callstack.c) as bash reads it:
 * "LINE FILE" of frame 0's call, "NULL" for a file when the call came from
 * -c text's top level; with N, "LINE FUNCTION FILE" of frame N's. */
#include <string.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static const char usage[] = "caller: usage: caller [expr]";

int box_cmd_caller(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  if (i < c->argc && strcmp(c->argv[i], "--") == 0) i++;
  const BoxCall *frame = box_callstack_frame(sh, 0);
  if (i >= c->argc) {
    if (!frame) return 1;
    const BoxCall *out = box_callstack_frame(sh, 1);
    box_out_printf(c->out, "%ld %s\n", frame->line, out ? out->source : "NULL");
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
  frame = box_callstack_frame(sh, (guint)MIN(n, G_MAXINT));
  const BoxCall *out = frame ? box_callstack_frame(sh, (guint)n + 1) : NULL;
  if (!out) return 1;
  box_out_printf(c->out, "%ld %s %s\n", frame->line, out->name, out->source);
  return 0;
}
