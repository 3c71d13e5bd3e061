/* unset.c — `unset [-fv] NAME…` (NAME[key] for one element). */
#include <string.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

int box_cmd_unset(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool funcs = false, vars = false, ref = false;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'f')
        funcs = true;
      else if (*p == 'v')
        vars = true;
      else if (*p == 'n')
        ref = true;
      else
        return bx_bad_option(c, *p, "unset: usage: unset [-f] [-v] [-n] [name ...]");
    }
  }
  int status = 0;
  for (; i < c->argc; i++) {
    char *name = g_strdup(c->argv[i]);
    if (funcs) {
      g_hash_table_remove(sh->funcs, name);
      g_free(name);
      continue;
    }
    char *br = strchr(name, '[');
    char *key = NULL;
    if (br && name[strlen(name) - 1] == ']') {
      *br = 0;
      key = g_strndup(br + 1, strlen(br + 1) - 1);
    }
    if (br && !key && box_is_name(name, (size_t)(br - name))) {
      /* NAME[… with no `]`: bash passes over it */
    } else if (!box_is_name(name, strlen(name))) {
      /* without -v, bash takes a name no variable can have for a
       * function's (which may have one), silently */
      if (vars) {
        box_cmd_error(c, "`%s': not a valid identifier", c->argv[i]);
        status = 1;
      } else {
        g_hash_table_remove(sh->funcs, name);
      }
    } else {
      ShellVar *own = g_hash_table_lookup(sh->vars, name);
      g_autofree char *arr = NULL, *elem = NULL;
      if (own && (own->flags & V_NAMEREF) && !key) {
        if (ref) {
          /* -n: the reference itself */
        } else if (box_nameref_elem(sh, name, &arr, &elem)) {
          /* through a reference to an element: that element */
          g_free(name);
          name = g_steal_pointer(&arr);
          key = g_steal_pointer(&elem);
        } else {
          /* through a reference: the variable it names, the reference stays */
          for (int hops = 0; hops < 8 && own && (own->flags & V_NAMEREF) && own->value &&
                             box_is_name(own->value, strlen(own->value));
               hops++) {
            g_free(name);
            name = g_strdup(own->value);
            own = g_hash_table_lookup(sh->vars, name);
          }
        }
      }
      ShellVar *v = ref ? own : box_var_lookup(sh, name);
      if (v && (v->flags & V_READONLY)) {
        box_cmd_error(c, "%s: cannot unset: readonly variable", name);
        status = 1;
      } else if (key && v && !(v->flags & (V_ARRAY | V_ASSOC)) &&
                 (!strcmp(key, "@") || !strcmp(key, "*"))) {
        box_cmd_error(c, "%s: not an array variable", name);
        status = 1;
      } else if (key) {
        g_autofree char *k = box_elem_key(sh, name, key);
        int e = k ? box_var_unset_elem(sh, name, k) : BOX_UNSET_BAD_SUBSCRIPT;
        if (e == BOX_UNSET_BAD_SUBSCRIPT) box_cmd_error(c, "[%s]: bad array subscript", key);
        if (e == BOX_UNSET_NOT_ARRAY) box_cmd_error(c, "%s: not an array variable", name);
        if (e) status = 1;
      } else if (!ref && box_var_unset_temp(sh, name)) {
        /* `x=t f`'s x: what x was shows again */
      } else if (v || vars || ref) {
        box_var_unset(sh, name);
      } else if (g_hash_table_lookup(sh->funcs, name)) {
        g_hash_table_remove(sh->funcs, name);
      }
    }
    g_free(key);
    g_free(name);
  }
  return status;
}
