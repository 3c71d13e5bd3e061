/* builtins.c — helpers the builtins share. */
#include "shell/shell-private.h"

void box_cmd_error(BoxCmd *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(c->out);
  box_fdprintf(c->err, "strands-shell: %s: %s\n", c->argv[0], m);
  g_free(m);
}
