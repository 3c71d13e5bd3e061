/* command.c — `command [-pVv] CMD [ARG…]`: runs CMD skipping functions. */
#include <string.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static int command_found(BoxCmd *c, int i, char mode)
{
  if (mode) {
    /* bash fails only when no name is found */
    bool any = false;
    for (; i < c->argc; i++)
      if (box_type_one(c, c->argv[i], mode, false))
        any = true;
      else if (mode == 'V')
        box_cmd_error(c, "%s: not found", c->argv[i]);
    return any ? 0 : 1;
  }
  return bx_run_past_functions(c, c->argv + i);
}

int box_cmd_command(BoxCmd *c)
{
  char mode = 0;
  bool standard = false;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'v' || *p == 'V')
        mode = *p;
      else if (*p == 'p')
        standard = true;
      else
        return bx_bad_option(c, *p, "command: usage: command [-pVv] command [arg ...]");
    }
  }
  if (i >= c->argc) return 0;
  if (!standard) return command_found(c, i, mode);
  /* -p: PATH is the system's standard one (confstr's _CS_PATH) while the
   * command is found and runs, and nothing hashed from the other counts */
  Shell *sh = c->sh;
  const char *old = box_var_get(sh, "PATH");
  char *saved = g_strdup(old);
  GHashTable *hash = sh->hash;
  sh->hash = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  box_var_set(sh, "PATH", "/bin:/usr/bin");
  int st = command_found(c, i, mode);
  g_hash_table_destroy(sh->hash);
  sh->hash = hash;
  if (saved)
    box_var_set(sh, "PATH", saved);
  else
    box_var_unset(sh, "PATH");
  g_free(saved);
  return st;
}

int bx_run_past_functions(BoxCmd *c, char **argv)
{
  box_out_flush(c->out);
  Shell *sh = c->sh;
  /* a function of the name is hidden while it runs */
  GHashTable *f = sh->funcs;
  const char *name = argv[0];
  Node *fn = g_hash_table_lookup(f, name);
  if (fn) g_hash_table_steal(f, name);
  int st = box_run_argv(sh, argv, c->in, c->out_fd, c->err);
  if (fn) g_hash_table_insert(f, g_strdup(name), fn);
  return st;
}
