/* export.c — `export [-n] [-p] [NAME[=value]...]`. */
#include <string.h>

#include "shell/shell-private.h"

static void print_exports(BoxCmd *c) {
  GList *keys = g_hash_table_get_keys(c->sh->vars);
  keys = g_list_sort(keys, (GCompareFunc)strcmp);
  for (GList *k = keys; k; k = k->next) {
    ShellVar *v = g_hash_table_lookup(c->sh->vars, k->data);
    if (!v->exported) continue;
    box_out_printf(c->out, "declare -x %s", (const char *)k->data);
    if (v->value) {
      box_out_puts(c->out, "=\"");
      for (const char *p = v->value; *p; p++) {
        if (strchr("\"\\$`", *p)) box_out_putc(c->out, '\\');
        box_out_putc(c->out, *p);
      }
      box_out_putc(c->out, '"');
    }
    box_out_putc(c->out, '\n');
  }
  g_list_free(keys);
}

int box_cmd_export(BoxCmd *c) {
  Shell *sh = c->sh;
  bool unexport = false;
  int i = 1;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (strcmp(a, "--") == 0) { i++; break; }
    if (a[0] != '-' || a[1] == '\0') break;
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'n') unexport = true;
      else if (*p == 'p' || *p == 'f') continue;
      else {
        box_fdprintf(c->err, "strands-shell: export: -%c: invalid option\n"
                             "export: usage: export [-fn] [name[=value] ...] or export -p\n", *p);
        return 2;
      }
    }
  }
  if (i == c->argc) {
    print_exports(c);
    return 0;
  }
  int status = 0;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    const char *eq = strchr(a, '=');
    size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
    if (!box_is_name(a, nlen)) {
      box_fdprintf(c->err, "strands-shell: export: `%s': not a valid identifier\n", a);
      status = 1;
      continue;
    }
    char *name = g_strndup(a, nlen);
    if (eq) box_var_set(sh, name, eq + 1);
    if (unexport) {
      ShellVar *v = g_hash_table_lookup(sh->vars, name);
      if (v) v->exported = false;
    } else {
      box_var_export(sh, name);
    }
    g_free(name);
  }
  return status;
}
