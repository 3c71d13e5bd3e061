/* nested.c — commands that run commands (find -exec, xargs): shell text
 * quoting and the run through the Shell's decision point. */
#include "shell/commands/commands-private.h"

#include <string.h>

char *bx_shell_quote(const char *s)
{
  bool plain = *s != '\0';
  for (const char *p = s; *p; p++)
    if (!(g_ascii_isalnum(*p) || strchr("_-./=:,+@%", *p))) {
      plain = false;
      break;
    }
  if (plain) return g_strdup(s);
  return g_shell_quote(s);
}

int bx_run_argv(BoxCmd *c, char **argv, int argc, int in, int out, int err)
{
  /* argv must be NULL-terminated (argv[argc] == NULL) */
  (void)argc;
  box_out_flush(c->out);
  return box_run_argv(c->sh, argv, in, out, err);
}
