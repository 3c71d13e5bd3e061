/* shopt.c — `shopt [-psuq] [-o] [NAME…]`. */
#include <stdint.h>
#include <string.h>

#include "shell/commands/builtins.h"

/* All of bash's names, in its order, each after its default ('+' on, '-'
 * off).  Those the Shell does not implement (no row in flags) only keep
 * what the script set (Shell.shopts_inert holds which differ from the
 * default), so listings and -q answer as bash does. */
static const char bash_names[] =
  "-autocd -assoc_expand_once -cdable_vars -cdspell -checkhash -checkjobs +checkwinsize "
  "+cmdhist -compat31 -compat32 -compat40 -compat41 -compat42 -compat43 -compat44 "
  "+complete_fullquote -direxpand -dirspell -dotglob -execfail -expand_aliases "
  "-extdebug -extglob +extquote -failglob +force_fignore +globasciiranges +globskipdots "
  "-globstar -gnu_errfmt -histappend -histreedit -histverify +hostcomplete -huponexit "
  "-inherit_errexit +interactive_comments -lastpipe -lithist -localvar_inherit "
  "-localvar_unset -login_shell -mailwarn -no_empty_cmd_completion -nocaseglob "
  "-nocasematch -noexpand_translation -nullglob +patsub_replacement +progcomp "
  "-progcomp_alias +promptvars -restricted_shell -shift_verbose +sourcepath "
  "-varredir_close -xpg_echo";
static char **opts; /* bash_names, split once */
static size_t nopts;

static void split_names(void)
{
  if (opts) return;
  opts = g_strsplit(bash_names, " ", -1);
  nopts = g_strv_length(opts);
  g_assert(nopts <= 64); /* one bit each in shopts_inert */
}

static const struct {
  const char *name;
  unsigned flag;
} flags[] = { { "dotglob", SH_DOTGLOB },         { "expand_aliases", SH_EXPAND_ALIASES },
              { "extglob", SH_EXTGLOB },         { "failglob", SH_FAILGLOB },
              { "globstar", SH_GLOBSTAR },       { "inherit_errexit", SH_INHERIT_ERREXIT },
              { "lastpipe", SH_LASTPIPE },       { "nocaseglob", SH_NOCASEGLOB },
              { "nocasematch", SH_NOCASEMATCH }, { "nullglob", SH_NULLGLOB },
              { "xpg_echo", SH_XPG_ECHO } };

static unsigned flag_of(size_t k)
{
  for (size_t i = 0; i < G_N_ELEMENTS(flags); i++)
    if (strcmp(flags[i].name, opts[k] + 1) == 0) return flags[i].flag;
  return 0;
}

static bool shopt_on(Shell *sh, size_t k)
{
  unsigned flag = flag_of(k);
  if (flag) return (sh->shopts & flag) != 0;
  return (opts[k][0] == '+') != ((sh->shopts_inert >> k) & 1);
}

static void shopt_change(Shell *sh, size_t k, bool on)
{
  unsigned flag = flag_of(k);
  if (flag && on)
    sh->shopts |= flag;
  else if (flag)
    sh->shopts &= ~flag;
  else if (on != (opts[k][0] == '+'))
    sh->shopts_inert |= (uint64_t)1 << k;
  else
    sh->shopts_inert &= ~((uint64_t)1 << k);
  box_optvars_refresh(sh);
}

static size_t shopt_row(const char *name)
{
  split_names();
  size_t k = 0;
  while (k < nopts && strcmp(opts[k] + 1, name) != 0) k++;
  return k;
}

bool box_shopt_known(const char *name)
{
  return shopt_row(name) < nopts;
}

void box_shopt_set(Shell *sh, const char *name, bool on)
{
  size_t k = shopt_row(name);
  if (k < nopts) shopt_change(sh, k, on);
}

/* globskipdots (on by default): `.` and `..` are never a glob's match */
bool box_shopt_globskipdots(Shell *sh)
{
  static size_t k = SIZE_MAX;
  if (k == SIZE_MAX) {
    split_names();
    for (k = 0; k < nopts && strcmp(opts[k] + 1, "globskipdots") != 0; k++) {}
  }
  return k == nopts || shopt_on(sh, k);
}

GString *box_shopt_all_names(void)
{
  split_names();
  GString *t = g_string_new(NULL);
  for (size_t k = 0; k < nopts; k++)
    g_string_append_printf(t, "%s%s", t->len ? ":" : "", opts[k] + 1);
  return t;
}

GString *box_shopt_on_names(Shell *sh)
{
  split_names();
  GString *t = g_string_new(NULL);
  for (size_t k = 0; k < nopts; k++)
    if (shopt_on(sh, k)) g_string_append_printf(t, "%s%s", t->len ? ":" : "", opts[k] + 1);
  return t;
}

static void shopt_show(BoxCmd *c, size_t k, bool print)
{
  bool on = shopt_on(c->sh, k);
  if (print)
    box_out_printf(c->out, "shopt %s %s\n", on ? "-s" : "-u", opts[k] + 1);
  else
    box_out_printf(c->out, "%-15s\t%s\n", opts[k] + 1, on ? "on" : "off");
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
  box_globignore_sync(sh, false); /* a GLOBIGNORE set since turned dotglob on */
  split_names();
  int st = 0;
  if (i >= c->argc) {
    for (size_t k = 0; k < nopts; k++)
      if (!mode || shopt_on(sh, k) == (mode > 0)) shopt_show(c, k, print);
    return 0;
  }
  for (; i < c->argc; i++) {
    size_t k = 0;
    for (; k < nopts; k++)
      if (strcmp(opts[k] + 1, c->argv[i]) == 0) break;
    if (k == nopts) {
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
