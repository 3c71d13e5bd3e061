/* hash.c — `hash [-r] [-dlt] [NAME…]`: remembers where programs are, as
 * lookup.c finds them, in bash's words. */
#include <stdlib.h>
#include <string.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static gint by_name(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list(BoxCmd *c, bool reusable)
{
  Shell *sh = c->sh;
  guint n = 0;
  gpointer *names = g_hash_table_get_keys_as_array(sh->hash, &n);
  /* names are the table's own keys: fill in the files first, on copies */
  for (guint k = 0; k < n; k++) names[k] = g_strdup(names[k]);
  for (guint k = 0; k < n; k++) box_lookup_hashed(sh, names[k]);
  qsort(names, n, sizeof *names, by_name);
  /* bash says so on stdout */
  if (g_hash_table_size(sh->hash) == 0)
    box_out_puts(c->out, "hash: hash table empty\n");
  else if (!reusable)
    box_out_puts(c->out, "hits\tcommand\n");
  for (guint k = 0; k < n; k++) {
    const char *name = names[k];
    const BoxHashed *h = g_hash_table_lookup(sh->hash, name);
    if (!h) continue; /* nothing runs it any more */
    if (reusable)
      box_out_printf(c->out, "builtin hash -p %s %s\n", h->path, name);
    else
      box_out_printf(c->out, "%4d\t%s\n", h->hits, h->path);
  }
  for (guint k = 0; k < n; k++) g_free(names[k]);
  g_free(names);
  return 0;
}

int box_cmd_hash(BoxCmd *c)
{
  Shell *sh = c->sh;
  /* -r forget all, -l list reusably, -t show, -d drop */
  static const char letters[] = "rltd";
  bool opt[sizeof letters] = { false };
  const char *given = NULL; /* -p PATH: the file the names run */
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++)
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'p') {
        given = bx_option_value(c, p, &i, "hash: usage: hash [-lr] [-p pathname] [-dt] [name ...]");
        if (!given) return 2;
        break;
      }
      const char *at = strchr(letters, *p);
      if (!at)
        return bx_bad_option(c, *p, "hash: usage: hash [-lr] [-p pathname] [-dt] [name ...]");
      opt[at - letters] = true;
    }
  bool forget = opt[0], reusable = opt[1], show = opt[2], drop = opt[3];
  if (forget) g_hash_table_remove_all(sh->hash);
  if (i >= c->argc) return forget ? 0 : list(c, reusable);
  if (given && !show && !drop) {
    for (; i < c->argc; i++) box_lookup_remember(sh, c->argv[i], given);
    return 0;
  }
  int st = 0;
  int first = i;
  for (; i < c->argc; i++) {
    const char *name = c->argv[i];
    const BoxHashed *h = box_lookup_hashed(sh, name);
    if (show || drop) {
      if (!h) {
        box_cmd_error(c, "%s: not found", name);
        st = 1;
      } else if (drop) {
        g_hash_table_remove(sh->hash, name);
      } else if (c->argc - first > 1) {
        box_out_printf(c->out, "%s\t%s\n", name, h->path);
      } else {
        box_out_printf(c->out, "%s\n", h->path);
      }
      continue;
    }
    /* what the Shell runs itself is not hashed, as bash's functions and
     * builtins are not */
    if (strchr(name, '/') || box_lookup_function(sh, name) || box_command_lookup(name)) continue;
    g_autofree char *found = box_lookup_program(sh, name);
    if (!found) {
      box_cmd_error(c, "%s: not found", name);
      st = 1;
      continue;
    }
    box_lookup_remember(sh, name, found);
  }
  return st;
}
