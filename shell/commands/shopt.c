/* shopt.c — `shopt [-psuq] [-o] [NAME…]`. */
#include <string.h>

#include "shell/commands/builtins.h"

/* All of bash's names, in its order: those the Shell does not implement
 * (flag 0) only keep what the script set (Shell.shopts_inert holds which
 * differ from bash's default), so listings and -q answer as bash does. */
static const struct {
  const char *name;
  unsigned flag;
  bool dflt;
} opts[] = {
  { "autocd", 0, false },
  { "assoc_expand_once", 0, false },
  { "cdable_vars", 0, false },
  { "cdspell", 0, false },
  { "checkhash", 0, false },
  { "checkjobs", 0, false },
  { "checkwinsize", 0, true },
  { "cmdhist", 0, true },
  { "compat31", 0, false },
  { "compat32", 0, false },
  { "compat40", 0, false },
  { "compat41", 0, false },
  { "compat42", 0, false },
  { "compat43", 0, false },
  { "compat44", 0, false },
  { "complete_fullquote", 0, true },
  { "direxpand", 0, false },
  { "dirspell", 0, false },
  { "dotglob", SH_DOTGLOB, false },
  { "execfail", 0, false },
  { "expand_aliases", SH_EXPAND_ALIASES, false },
  { "extdebug", 0, false },
  { "extglob", SH_EXTGLOB, false },
  { "extquote", 0, true },
  { "failglob", SH_FAILGLOB, false },
  { "force_fignore", 0, true },
  { "globasciiranges", 0, true },
  { "globskipdots", 0, true },
  { "globstar", SH_GLOBSTAR, false },
  { "gnu_errfmt", 0, false },
  { "histappend", 0, false },
  { "histreedit", 0, false },
  { "histverify", 0, false },
  { "hostcomplete", 0, true },
  { "huponexit", 0, false },
  { "inherit_errexit", SH_INHERIT_ERREXIT, false },
  { "interactive_comments", 0, true },
  { "lastpipe", SH_LASTPIPE, false },
  { "lithist", 0, false },
  { "localvar_inherit", 0, false },
  { "localvar_unset", 0, false },
  { "login_shell", 0, false },
  { "mailwarn", 0, false },
  { "no_empty_cmd_completion", 0, false },
  { "nocaseglob", SH_NOCASEGLOB, false },
  { "nocasematch", SH_NOCASEMATCH, false },
  { "noexpand_translation", 0, false },
  { "nullglob", SH_NULLGLOB, false },
  { "patsub_replacement", 0, true },
  { "progcomp", 0, true },
  { "progcomp_alias", 0, false },
  { "promptvars", 0, true },
  { "restricted_shell", 0, false },
  { "shift_verbose", 0, false },
  { "sourcepath", 0, true },
  { "varredir_close", 0, false },
  { "xpg_echo", SH_XPG_ECHO, false },
};

G_STATIC_ASSERT(G_N_ELEMENTS(opts) <= 64); /* one bit each in shopts_inert */

static bool shopt_on(Shell *sh, size_t k)
{
  if (opts[k].flag) return (sh->shopts & opts[k].flag) != 0;
  return opts[k].dflt != ((sh->shopts_inert >> k) & 1);
}

static void shopt_change(Shell *sh, size_t k, bool on)
{
  if (opts[k].flag && on)
    sh->shopts |= opts[k].flag;
  else if (opts[k].flag)
    sh->shopts &= ~opts[k].flag;
  else if (on != opts[k].dflt)
    sh->shopts_inert |= (uint64_t)1 << k;
  else
    sh->shopts_inert &= ~((uint64_t)1 << k);
}

static void shopt_show(BoxCmd *c, size_t k, bool print)
{
  bool on = shopt_on(c->sh, k);
  if (print)
    box_out_printf(c->out, "shopt %s %s\n", on ? "-s" : "-u", opts[k].name);
  else
    box_out_printf(c->out, "%-15s\t%s\n", opts[k].name, on ? "on" : "off");
}

/* shopt -o: set -o's options by shopt's verbs */
static int set_options(BoxCmd *c, int i, int mode, bool quiet, bool print)
{
  if (i >= c->argc) {
    if (!quiet) box_set_list(c, print, mode);
    return 0;
  }
  int st = 0;
  for (; i < c->argc; i++) {
    int row = box_set_option(c->argv[i]);
    if (row < 0) {
      box_cmd_error(c, "%s: invalid option name", c->argv[i]);
      st = 1;
    } else if (mode) {
      box_set_option_change(c->sh, row, mode > 0);
    } else if (!box_set_option_get(c->sh, row, quiet ? NULL : c, print)) {
      st = 1;
    }
  }
  return st;
}

int box_cmd_shopt(BoxCmd *c)
{
  Shell *sh = c->sh;
  int mode = 0; /* 0 show, 1 set, -1 unset */
  bool quiet = false, print = false, set_opts = false;
  int i = 1;
  for (; i < c->argc && c->argv[i][0] == '-' && c->argv[i][1]; i++) {
    for (const char *p = c->argv[i] + 1; *p; p++) {
      if (*p == 's')
        mode = 1;
      else if (*p == 'u')
        mode = -1;
      else if (*p == 'q')
        quiet = true;
      else if (*p == 'p')
        print = true;
      else if (*p == 'o')
        set_opts = true;
      else
        return bx_bad_option(c, *p, "shopt: usage: shopt [-pqsu] [-o] [optname ...]");
    }
  }
  if (set_opts) return set_options(c, i, mode, quiet, print);
  int st = 0;
  if (i >= c->argc) {
    for (size_t k = 0; k < G_N_ELEMENTS(opts); k++)
      if (!mode || shopt_on(sh, k) == (mode > 0)) shopt_show(c, k, print);
    return 0;
  }
  for (; i < c->argc; i++) {
    size_t k = 0;
    for (; k < G_N_ELEMENTS(opts); k++)
      if (strcmp(opts[k].name, c->argv[i]) == 0) break;
    if (k == G_N_ELEMENTS(opts)) {
      box_cmd_error(c, "%s: invalid shell option name", c->argv[i]);
      st = 1;
    } else if (mode) {
      shopt_change(sh, k, mode > 0);
    } else {
      if (!quiet) shopt_show(c, k, print);
      if (!shopt_on(sh, k)) st = 1;
    }
  }
  return st;
}
