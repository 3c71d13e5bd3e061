/* getopts.c — `getopts OPTSTRING NAME [ARG…]`, bash's messages. */
#include <stdlib.h>
#include <string.h>

#include "shell/shell-private.h"

/* The script's own assignments to OPTIND start a new parse (vars.c);
 * getopts's keeps its place inside a word of options.  No copy of OPTIND
 * lives here: a function's `local OPTIND` must leave its caller's parse as
 * it was (exec.c restores the position). */
static void store_optind(Shell *sh, long optind)
{
  char buf[32];
  int sub = sh->optind_sub;
  g_snprintf(buf, sizeof buf, "%ld", optind);
  box_var_set(sh, "OPTIND", buf);
  sh->optind_sub = sub;
}

/* NAME gets the answer once OPTIND and OPTARG are set, as in bash: a name
 * that is no identifier fails the call (1) with them set all the same. */
static int bind_name(BoxCmd *c, const char *name, const char *value)
{
  if (!box_is_name(name, strlen(name))) {
    box_cmd_error(c, "`%s': not a valid identifier", name);
    return 1;
  }
  /* a readonly one: bash's EX_MISCERROR */
  return box_var_set(c->sh, name, value) ? 0 : 2;
}

/* No option left: OPTARG goes, NAME is ?, and the status is 1. */
static int end_of_options(BoxCmd *c, const char *name)
{
  box_var_unset(c->sh, "OPTARG");
  bind_name(c, name, "?");
  return 1;
}

int box_cmd_getopts(BoxCmd *c)
{
  Shell *sh = c->sh;
  if (c->argc < 3) {
    box_fdprintf(c->err, "getopts: usage: getopts optstring name [arg ...]\n");
    return 2;
  }
  const char *spec = c->argv[1];
  const char *name = c->argv[2];
  /* OPTERR=0 silences the messages too, without silent mode's answers;
   * bash reads it with atoi, and an empty or unset one as 1 */
  const char *opterr = box_var_get(sh, "OPTERR");
  bool quiet = opterr && *opterr && atoi(opterr) == 0;
  bool silent = spec[0] == ':';
  if (silent) spec++;
  char **args;
  int nargs;
  if (c->argc > 3) {
    args = c->argv + 3;
    nargs = c->argc - 3;
  } else {
    args = sh->pos;
    nargs = sh->npos;
  }
  const char *oi = box_var_get(sh, "OPTIND");
  long optind = oi ? atol(oi) : 1;
  if (optind < 1) optind = 1;
  /* past the last operand: bash's OPTIND becomes one past it, however far
   * an earlier parse of other operands had taken it */
  if (optind > nargs) {
    sh->optind_sub = 0;
    store_optind(sh, nargs + 1);
    return end_of_options(c, name);
  }
  const char *arg = args[optind - 1];
  if (sh->optind_sub == 0) {
    if (arg[0] != '-' || !arg[1]) return end_of_options(c, name);
    if (strcmp(arg, "--") == 0) {
      store_optind(sh, optind + 1);
      return end_of_options(c, name);
    }
    sh->optind_sub = 1;
  }
  char o = arg[sh->optind_sub++];
  bool end_of_word = arg[sh->optind_sub] == '\0';
  const char *p = o != ':' ? strchr(spec, o) : NULL;
  box_var_unset(sh, "OPTARG");
  char opt[2] = { o, 0 };
  const char *answer = opt;
  if (!p) {
    if (silent) {
      box_var_set(sh, "OPTARG", opt);
    } else if (!quiet) {
      box_fdprintf(c->err, "strands-shell: illegal option -- %c\n", o);
    }
    answer = "?";
  } else if (p[1] == ':') {
    if (!end_of_word) {
      box_var_set(sh, "OPTARG", arg + sh->optind_sub);
      end_of_word = true;
    } else if (optind < nargs) {
      box_var_set(sh, "OPTARG", args[optind]);
      optind++;
    } else {
      if (silent) {
        answer = ":";
        box_var_set(sh, "OPTARG", opt);
      } else {
        if (!quiet) box_fdprintf(c->err, "strands-shell: option requires an argument -- %c\n", o);
        answer = "?";
      }
      end_of_word = true;
    }
  }
  if (end_of_word) {
    optind++;
    sh->optind_sub = 0;
  }
  store_optind(sh, optind);
  return bind_name(c, name, answer);
}
