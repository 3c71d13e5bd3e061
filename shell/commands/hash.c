/* hash.c — `hash [-r] [NAME…]`: remembers program names. */
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

int box_cmd_hash(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  if (c->argc > 1 && strcmp(c->argv[1], "-r") == 0) {
    g_hash_table_remove_all(sh->hash);
    i++;
  }
  if (c->argc == 1) {
    if (g_hash_table_size(sh->hash) == 0) {
      box_fdprintf(c->err, "hash: hash table empty\n");
      return 0;
    }
    box_out_puts(c->out, "hits\tcommand\n");
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, sh->hash);
    while (g_hash_table_iter_next(&it, &k, &v)) box_out_printf(c->out, "   1\t%s\n", (char *)v);
    return 0;
  }
  int st = 0;
  for (; i < c->argc; i++) {
    const char *name = c->argv[i];
    if (box_command_lookup(name)) continue;
    char *found = box_lookup_on_path(sh, name);
    if (!found) {
      box_cmd_error(c, "%s: not found", name);
      st = 1;
      continue;
    }
    g_hash_table_insert(sh->hash, g_strdup(name), found);
  }
  return st;
}
