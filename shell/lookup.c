/* lookup.c — what a command's first word names, in bash's order: a
 * function, then a command the Shell implements (commands/commands.def),
 * else a program.  A program is run by the host, which resolves its file
 * itself (in boxd: tools/resolve.c); `type` and `hash` search the Shell's
 * PATH here. */
#include "shell/shell-private.h"

#include <unistd.h>

Node *box_lookup_function(Shell *sh, const char *name)
{
  /* most scripts define none: skip hashing the name */
  return g_hash_table_size(sh->funcs) ? g_hash_table_lookup(sh->funcs, name) : NULL;
}

void box_lookup_first_word(Shell *sh, const char *name, bool skip_funcs, Node **fn,
                           const BoxCommandDef **def)
{
  *fn = skip_funcs ? NULL : box_lookup_function(sh, name);
  *def = *fn ? NULL : box_command_lookup(name);
}

/* The mark of a literal name no command has. */
static const char a_program;

void box_lookup_simple(Shell *sh, Node *simple, const char *name, bool literal, Node **fn,
                       const BoxCommandDef **def)
{
  *def = NULL;
  *fn = box_lookup_function(sh, name);
  if (*fn) return;
  /* A literal first word names the same command every time the node runs
   * (functions aside, looked up above): its answer is kept on the node. */
  if (simple->u.simple.def) {
    *def = simple->u.simple.def == &a_program ? NULL : simple->u.simple.def;
    return;
  }
  *def = box_command_lookup(name);
  if (literal) simple->u.simple.def = *def ? (const void *)*def : &a_program;
}

char *box_lookup_on_path(Shell *sh, const char *name)
{
  const char *path = box_var_get(sh, "PATH");
  gchar **dirs = g_strsplit(path ? path : "", ":", -1);
  char *found = NULL;
  for (gchar **d = dirs; *d && !found; d++) {
    char *cand = g_build_filename(**d ? *d : ".", name, NULL);
    if (access(cand, X_OK) == 0)
      found = cand;
    else
      g_free(cand);
  }
  g_strfreev(dirs);
  return found;
}
