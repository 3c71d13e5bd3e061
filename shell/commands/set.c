/* set.c — `set [-+eufxCnavb] [-o|+o NAME] [--] [ARG…]`. */
#include <string.h>

#include "shell/commands/builtins.h"

/* All of bash's -o names, in its order: the ones the Shell does not
 * implement (flag 0) are accepted and keep bash's value for `bash -c`. */
static const struct {
  const char *name;
  char letter;
  unsigned flag;
  bool fixed_on;
} opts[] = {
  { "allexport", 'a', O_ALLEXPORT, false },     { "braceexpand", 'B', O_BRACE, false },
  { "emacs", 0, O_INERT_EMACS, false },         { "errexit", 'e', O_ERREXIT, false },
  { "errtrace", 'E', O_ERRTRACE, false },       { "functrace", 'T', O_FUNCTRACE, false },
  { "hashall", 'h', O_HASHALL, false },         { "histexpand", 'H', O_HISTEXPAND, false },
  { "history", 0, O_HISTORY, false },           { "ignoreeof", 0, O_INERT_IGNOREEOF, false },
  { "interactive-comments", 0, 0, true },       { "keyword", 'k', O_KEYWORD, false },
  { "monitor", 'm', O_INERT_MONITOR, false },   { "noclobber", 'C', O_NOCLOBBER, false },
  { "noexec", 'n', O_NOEXEC, false },           { "noglob", 'f', O_NOGLOB, false },
  { "nolog", 0, O_INERT_NOLOG, false },         { "notify", 'b', O_INERT_NOTIFY, false },
  { "nounset", 'u', O_NOUNSET, false },         { "onecmd", 't', 0, false },
  { "physical", 'P', O_INERT_PHYSICAL, false }, { "pipefail", 0, O_PIPEFAIL, false },
  { "posix", 0, O_INERT_POSIX, false },         { "privileged", 'p', O_INERT_PRIVILEGED, false },
  { "verbose", 'v', O_VERBOSE, false },         { "vi", 0, O_INERT_VI, false },
  { "xtrace", 'x', O_XTRACE, false },
};

int box_set_option(const char *name)
{
  for (size_t k = 0; k < G_N_ELEMENTS(opts); k++)
    if (strcmp(opts[k].name, name) == 0) return (int)k;
  return -1;
}

int box_set_option_letter(char letter)
{
  for (size_t k = 0; k < G_N_ELEMENTS(opts); k++)
    if (opts[k].letter == letter) return (int)k;
  return -1;
}

static bool option_on(Shell *sh, size_t k)
{
  return opts[k].flag ? (sh->opts & opts[k].flag) != 0 : opts[k].fixed_on;
}

bool box_set_option_get(Shell *sh, int row, BoxCmd *show, bool plus)
{
  bool on = option_on(sh, (size_t)row);
  if (show && plus)
    box_out_printf(show->out, "set %co %s\n", on ? '-' : '+', opts[row].name);
  else if (show)
    box_out_printf(show->out, "%-15s\t%s\n", opts[row].name, on ? "on" : "off");
  return on;
}

void box_set_option_change(Shell *sh, int row, bool on)
{
  /* one line-editing mode at a time */
  if (on && (opts[row].flag & (O_INERT_EMACS | O_INERT_VI)))
    sh->opts &= ~(unsigned)(O_INERT_EMACS | O_INERT_VI);
  if (on)
    sh->opts |= opts[row].flag;
  else
    sh->opts &= ~opts[row].flag;
  box_optvars_refresh(sh);
}

/* SHELLOPTS and BASHOPTS: the options on, by name, as bash keeps them
 * (readonly; a script reads them, it cannot assign them). */
static void set_optvar(Shell *sh, const char *name, GString *text)
{
  ShellVar *v = box_var_make(sh, name);
  if (v->flags & (V_ARRAY | V_ASSOC | V_NAMEREF)) {
    g_string_free(text, TRUE);
    return;
  }
  g_free(v->value);
  v->value = g_string_free(text, FALSE);
  v->flags = (v->flags & V_EXPORT) | V_READONLY;
}

void box_optvars_refresh(Shell *sh)
{
  if (!sh->lazy_made) return;
  GString *t = g_string_new(NULL);
  for (size_t k = 0; k < G_N_ELEMENTS(opts); k++)
    if (option_on(sh, k)) g_string_append_printf(t, "%s%s", t->len ? ":" : "", opts[k].name);
  set_optvar(sh, "SHELLOPTS", t);
  set_optvar(sh, "BASHOPTS", box_shopt_on_names(sh));
}

void box_set_list(BoxCmd *c, bool plus, int only)
{
  for (size_t k = 0; k < G_N_ELEMENTS(opts); k++)
    if (!only || option_on(c->sh, k) == (only > 0)) box_set_option_get(c->sh, (int)k, c, plus);
}

static gint cmpstr(gconstpointer a, gconstpointer b)
{
  return strcmp(a, b);
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
    box_vars_materialize(sh);
    GList *keys = g_list_sort(g_hash_table_get_keys(sh->vars), cmpstr);
    for (GList *k = keys; k; k = k->next) {
      const char *v = box_var_get(sh, k->data);
      ShellVar *var = g_hash_table_lookup(sh->vars, k->data);
      if (var->flags & (V_ARRAY | V_ASSOC)) {
        /* declared and never assigned: not listed */
        if ((var->flags & V_NOVALUE) &&
            (var->flags & V_ASSOC ? !g_hash_table_size(var->assoc) : !var->arr->len))
          continue;
        box_out_puts(c->out, k->data);
        box_declare_print_array(c->out, var);
        box_out_putc(c->out, '\n');
        continue;
      }
      if (!v) continue;
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
      /* set +xv; the words after it, if any, are the new $1… */
      sh->opts &= ~(O_XTRACE | O_VERBOSE);
      box_optvars_refresh(sh);
      i++;
      if (i < c->argc) set_positional(sh, c->argc - i, c->argv + i);
      return 0;
    }
    if (strcmp(a, "+") == 0) continue; /* bash: no flag, not an operand */
    if (a[0] != '-' && a[0] != '+') break;
    bool on = a[0] == '-';
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'o') {
        if (i + 1 >= c->argc) {
          box_set_list(c, !on, 0);
          break;
        }
        const char *name = c->argv[++i];
        int row = box_set_option(name);
        if (row < 0) {
          box_cmd_error(c, "%s: invalid option name", name);
          return 2;
        }
        box_set_option_change(sh, row, on);
        break;
      }
      bool found = false;
      for (size_t k = 0; k < G_N_ELEMENTS(opts); k++)
        if (opts[k].letter == *p) {
          box_set_option_change(sh, (int)k, on);
          found = true;
        }
      if (!found) {
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
