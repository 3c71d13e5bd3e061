/* builtins.c — helpers the builtins share. */
#include <string.h>

#include "shell/shell-private.h"

static const char *const special[] = { "break", ":", ".", "continue", "eval", "exec", "exit",
                                       "export", "readonly", "return", "set", "shift", "source",
                                       "times", "trap", "unset", NULL };

bool box_is_special_builtin(const char *name) {
  for (int i = 0; special[i]; i++)
    if (strcmp(special[i], name) == 0) return true;
  return false;
}

static const char *const builtins[] = {
  ":", ".", "[", "alias", "break", "cd", "command", "continue", "declare", "echo", "eval", "exec",
  "exit", "export", "false", "getopts", "hash", "jobs", "kill", "let", "local", "mapfile", "printf",
  "pwd", "read", "readarray", "readonly", "return", "set", "shift", "shopt", "source", "test",
  "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait", NULL };

bool box_is_builtin(const char *name) {
  for (int i = 0; builtins[i]; i++)
    if (strcmp(builtins[i], name) == 0) return true;
  return false;
}

void box_cmd_error(BoxCmd *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(c->out);
  box_fdprintf(c->err, "strands-shell: %s: %s\n", c->argv[0], m);
  g_free(m);
}
