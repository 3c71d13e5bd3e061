/* yes.c — GNU yes: its arguments (or "y") forever, until the output fails. */
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

int box_cmd_yes(BoxCmd *c)
{
  int i = 1;
  if (i < c->argc && !strcmp(c->argv[i], "--")) i++;
  GString *line = g_string_new(NULL);
  if (i >= c->argc) g_string_assign(line, "y");
  for (int k = i; k < c->argc; k++) {
    if (k > i) g_string_append_c(line, ' ');
    g_string_append(line, c->argv[k]);
  }
  g_string_append_c(line, '\n');
  GString *block = g_string_new(NULL);
  while (block->len < 16384) g_string_append_len(block, line->str, line->len);
  box_out_flush(c->out);
  while (c->out_fd >= 0 && box_write_all(c->out_fd, block->str, block->len)) {
    if (c->sh->deadline && !box_check_limits(c->sh)) break;
  }
  g_string_free(line, TRUE);
  g_string_free(block, TRUE);
  return 1;
}
