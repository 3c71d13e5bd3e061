/* trap.c — `trap [-lp] [ACTION] [SIGNAL…]`: EXIT, ERR, RETURN and signals. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "shell/shell-private.h"

void box_trap_install(Shell *sh, int sig);

static const char *const signames[] = { "EXIT",  "HUP",  "INT",    "QUIT", "ILL",  "TRAP",   "ABRT",
                                        "BUS",   "FPE",  "KILL",   "USR1", "SEGV", "USR2",   "PIPE",
                                        "ALRM",  "TERM", "STKFLT", "CHLD", "CONT", "STOP",   "TSTP",
                                        "TTIN",  "TTOU", "URG",    "XCPU", "XFSZ", "VTALRM", "PROF",
                                        "WINCH", "IO",   "PWR",    "SYS",  NULL };

int box_signal_number(const char *s);
int box_signal_number(const char *s)
{
  if (g_ascii_isdigit(s[0])) {
    int n = atoi(s);
    return n >= 0 && n < BOX_NSIG ? n : -1;
  }
  const char *n = s;
  if (g_ascii_strncasecmp(n, "SIG", 3) == 0) n += 3;
  for (int i = 0; signames[i]; i++)
    if (g_ascii_strcasecmp(n, signames[i]) == 0) return i;
  if (g_ascii_strcasecmp(n, "ERR") == 0) return TRAP_ERR;
  if (g_ascii_strcasecmp(n, "DEBUG") == 0) return TRAP_DEBUG;
  if (g_ascii_strcasecmp(n, "RETURN") == 0) return TRAP_RETURN;
  return -1;
}

const char *box_signal_name(int n);
const char *box_signal_name(int n)
{
  if (n == TRAP_ERR) return "ERR";
  if (n == TRAP_DEBUG) return "DEBUG";
  if (n == TRAP_RETURN) return "RETURN";
  if (n >= 0 && n < (int)G_N_ELEMENTS(signames) - 1) return signames[n];
  return "?";
}

/* A signal ignored when the Shell started: trap leaves it so (bash). */
static bool fixed(const Shell *sh, int s)
{
  return s > 0 && s < BOX_NSIG && (sh->ignored_at_entry >> (s - 1) & 1);
}

static void print_trap(BoxCmd *c, int s)
{
  if (!c->sh->traps[s]) return;
  char *q = box_quote(c->sh->traps[s]);
  if (q[0] != '\'' && q[0] != '$') {
    g_free(q);
    q = g_strdup_printf("'%s'", c->sh->traps[s]);
  }
  const char *n = box_signal_name(s);
  box_out_printf(c->out, "trap -- %s %s%s\n", q, s > 0 && s < BOX_NSIG ? "SIG" : "", n);
  g_free(q);
}

int box_cmd_trap(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  if (i < c->argc && strcmp(c->argv[i], "-l") == 0) {
    for (int s = 1; signames[s]; s++) box_out_printf(c->out, "%2d) SIG%s\n", s, signames[s]);
    return 0;
  }
  if (i < c->argc && strcmp(c->argv[i], "--") == 0) i++;
  if (i >= c->argc || strcmp(c->argv[i], "-p") == 0) {
    if (i < c->argc && i + 1 < c->argc) {
      for (int k = i + 1; k < c->argc; k++) {
        int s = box_signal_number(c->argv[k]);
        if (s >= 0) print_trap(c, s);
      }
      return 0;
    }
    for (int s = 0; s < BOX_NTRAP; s++) print_trap(c, s);
    return 0;
  }
  const char *action = c->argv[i++];
  bool reset = strcmp(action, "-") == 0;
  if (i >= c->argc) {
    /* `trap N`: one argument that is a signal resets it */
    int s = box_signal_number(action);
    if (s >= 0 && fixed(sh, s)) return 0;
    if (s >= 0) {
      g_free(sh->traps[s]);
      sh->traps[s] = NULL;
      box_trap_install(sh, s);
      return 0;
    }
    box_fdprintf(c->err, "trap: usage: trap [-lp] [[arg] signal_spec ...]\n");
    return 2;
  }
  int st = 0;
  for (; i < c->argc; i++) {
    int s = box_signal_number(c->argv[i]);
    /* KILL and STOP are kept and listed, as bash keeps them, but never
     * installed (box_trap_install) */
    if (s < 0) {
      box_cmd_error(c, "%s: invalid signal specification", c->argv[i]);
      st = 1;
      continue;
    }
    if (fixed(sh, s)) continue;
    g_free(sh->traps[s]);
    sh->traps[s] = reset ? NULL : g_strdup(action);
    if (s > 0 && s < BOX_NSIG) box_trap_install(sh, s);
  }
  return st;
}
