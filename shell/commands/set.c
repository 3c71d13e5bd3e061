/* set.c — `set [-+eufxCnavb] [-o|+o NAME] [--] [ARG…]`. */
#include <string.h>

#include "shell/shell-private.h"

static const struct {
  const char *name;
  char letter;
  unsigned flag;
} opts[] = {
  { "allexport", 'a', O_ALLEXPORT }, { "braceexpand", 'B', O_BRACE },
  { "errexit", 'e', O_ERREXIT },     { "errtrace", 'E', O_ERRTRACE },
  { "functrace", 'T', O_FUNCTRACE }, { "hashall", 'h', O_HASHALL },
  { "noclobber", 'C', O_NOCLOBBER }, { "noexec", 'n', O_NOEXEC },
  { "noglob", 'f', O_NOGLOB },       { "nounset", 'u', O_NOUNSET },
  { "pipefail", 0, O_PIPEFAIL },     { "verbose", 'v', O_VERBOSE },
  { "xtrace", 'x', O_XTRACE },
};

static gint cmpstr(gconstpointer a, gconstpointer b)
{
  return strcmp(a, b);
}

static void list_opts(BoxCmd *c, bool plus)
{
  for (size_t i = 0; i < G_N_ELEMENTS(opts); i++) {
    bool on = c->sh->opts & opts[i].flag;
    if (plus)
      box_out_printf(c->out, "set %co %s\n", on ? '-' : '+', opts[i].name);
    else
      box_out_printf(c->out, "%-15s\t%s\n", opts[i].name, on ? "on" : "off");
  }
}

static void set_positional(Shell *sh, int n, char **args)
{
  g_strfreev(sh->pos);
  sh->pos = g_new0(char *, n + 1);
  for (int i = 0; i < n; i++) sh->pos[i] = g_strdup(args[i]);
  sh->npos = n;
}

int box_cmd_set(BoxCmd *c)
{
  Shell *sh = c->sh;
  if (c->argc == 1) {
    GList *keys = g_list_sort(g_hash_table_get_keys(sh->vars), cmpstr);
    for (GList *k = keys; k; k = k->next) {
      const char *v = box_var_get(sh, k->data);
      ShellVar *var = g_hash_table_lookup(sh->vars, k->data);
      if (!v || (var->flags & (V_ARRAY | V_ASSOC))) continue;
      char *q = box_quote(v);
      box_out_printf(c->out, "%s=%s\n", (char *)k->data, q);
      g_free(q);
    }
    g_list_free(keys);
    return 0;
  }
  int i = 1;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      set_positional(sh, c->argc - i, c->argv + i);
      return 0;
    }
    if (strcmp(a, "-") == 0) {
      sh->opts &= ~(O_XTRACE | O_VERBOSE);
      i++;
      set_positional(sh, c->argc - i, c->argv + i);
      return 0;
    }
    if ((a[0] != '-' && a[0] != '+') || !a[1]) break;
    bool on = a[0] == '-';
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'o') {
        if (i + 1 >= c->argc) {
          list_opts(c, !on);
          break;
        }
        const char *name = c->argv[++i];
        bool found = false;
        for (size_t k = 0; k < G_N_ELEMENTS(opts); k++)
          if (strcmp(opts[k].name, name) == 0) {
            if (on)
              sh->opts |= opts[k].flag;
            else
              sh->opts &= ~opts[k].flag;
            found = true;
          }
        if (!found && strcmp(name, "posix") && strcmp(name, "monitor") &&
            strcmp(name, "histexpand") && strcmp(name, "history") && strcmp(name, "emacs") &&
            strcmp(name, "vi") && strcmp(name, "interactive-comments")) {
          box_cmd_error(c, "%s: invalid option name", name);
          return 2;
        }
        break;
      }
      bool found = false;
      for (size_t k = 0; k < G_N_ELEMENTS(opts); k++)
        if (opts[k].letter == *p) {
          if (on)
            sh->opts |= opts[k].flag;
          else
            sh->opts &= ~opts[k].flag;
          found = true;
        }
      if (!found && !strchr("mHPkt", *p)) {
        box_cmd_error(c, "%c%c: invalid option", a[0], *p);
        box_fdprintf(
          c->err, "set: usage: set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]\n");
        return 2;
      }
    }
  }
  if (i < c->argc) set_positional(sh, c->argc - i, c->argv + i);
  return 0;
}
