/* alias.c — `alias [-p] [NAME[=VALUE]…]`. */
#include <string.h>

#include "shell/shell-private.h"

static gint cmpstr(gconstpointer a, gconstpointer b)
{
  return strcmp(a, b);
}

char *box_alias_quote(const char *val)
{
  char *q = box_quote(val);
  if (q[0] != '\'' && q[0] != '$') {
    g_free(q);
    q = g_strdup_printf("'%s'", val);
  }
  return q;
}

static void show(BoxCmd *c, const char *name, const char *val)
{
  g_autofree char *q = box_alias_quote(val);
  box_out_printf(c->out, "alias %s=%s\n", name, q);
}

int box_cmd_alias(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  if (i < c->argc && strcmp(c->argv[i], "-p") == 0) i++;
  if (i >= c->argc) {
    GList *keys = g_list_sort(g_hash_table_get_keys(sh->aliases), cmpstr);
    for (GList *k = keys; k; k = k->next)
      show(c, k->data, g_hash_table_lookup(sh->aliases, k->data));
    g_list_free(keys);
    return 0;
  }
  int st = 0;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    const char *eq = strchr(a, '=');
    if (!eq) {
      const char *v = g_hash_table_lookup(sh->aliases, a);
      if (v)
        show(c, a, v);
      else {
        box_cmd_error(c, "%s: not found", a);
        st = 1;
      }
      continue;
    }
    g_hash_table_insert(sh->aliases, g_strndup(a, (size_t)(eq - a)), g_strdup(eq + 1));
  }
  return st;
}
