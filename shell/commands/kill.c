/* kill.c — `kill [-s SIG | -n NUM | -SIG] PID|%JOB…` and `kill -l|-L [SIG…]`,
 * bash's option walk (builtins/kill.def) and signal names, the real-time
 * ones included. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

int box_signal_number(const char *s);
const char *box_signal_name(int n);

/* bash's numbers for trap's pseudo-signals, past the last real one */
enum { KILL_NSIG = 65, KILL_DEBUG = 65, KILL_ERR = 66, KILL_RETURN = 67 };

/* A signal's name without SIG ("RTMIN+3" for 37); NULL for 32 and 33,
 * which glibc keeps and bash names nothing. */
static char *kill_name(int n)
{
  if (n >= 1 && n < 32) return g_strdup(box_signal_name(n));
  if (n == 0) return g_strdup("EXIT");
  if (n == 34) return g_strdup("RTMIN");
  if (n == 64) return g_strdup("RTMAX");
  if (n > 34 && n < 50) return g_strdup_printf("RTMIN+%d", n - 34);
  if (n >= 50 && n < 64) return g_strdup_printf("RTMAX-%d", 64 - n);
  return NULL;
}

/* A signal word as bash decodes it (any case, SIG or not, a number);
 * -1 for none. */
static int kill_number(const char *s)
{
  if (g_ascii_isdigit(s[0])) {
    char *end;
    long n = strtol(s, &end, 10);
    return *end || n < 0 || n >= KILL_NSIG ? -1 : (int)n;
  }
  const char *w = g_ascii_strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
  for (int n = 0; n < KILL_NSIG; n++) {
    g_autofree char *name = kill_name(n);
    if (name && g_ascii_strcasecmp(w, name) == 0) return n;
  }
  int t = box_signal_number(s);
  if (t == TRAP_ERR) return KILL_ERR;
  if (t == TRAP_DEBUG) return KILL_DEBUG;
  if (t == TRAP_RETURN) return KILL_RETURN;
  return -1;
}

/* kill -l: the table, or each operand's name (a number, an exit status
 * past 128 too) or number (a name). */
static int list_signals(BoxCmd *c, int i)
{
  if (i >= c->argc) {
    int col = 0;
    for (int n = 1; n < KILL_NSIG; n++) {
      g_autofree char *name = kill_name(n);
      if (!name) continue;
      box_out_printf(c->out, "%2d) SIG%s%s", n, name, ++col % 5 ? "\t" : "\n");
    }
    if (col % 5) box_out_putc(c->out, '\n');
    return 0;
  }
  int st = 0;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    char *end;
    long n = strtol(a, &end, 10);
    if (*a && !*end) {
      if (n > 128) n -= 128;
      g_autofree char *name = n >= 0 && n < KILL_NSIG ? kill_name((int)n) : NULL;
      if (n < 0 || n >= KILL_NSIG) {
        box_cmd_error(c, "%s: invalid signal specification", a);
        st = 1;
      } else if (name) {
        box_out_printf(c->out, "%s\n", name);
      }
      continue;
    }
    int s = kill_number(a);
    if (s < 0) {
      box_cmd_error(c, "%s: invalid signal specification", a);
      st = 1;
    } else {
      box_out_printf(c->out, "%d\n", s);
    }
  }
  return st;
}

static bool is_option(const char *w, char letter)
{
  return w[0] == '-' && w[1] == letter && !w[2];
}

int box_cmd_kill(BoxCmd *c)
{
  Shell *sh = c->sh;
  int sig = SIGTERM;
  const char *spec = NULL;
  bool listing = false, saw_signal = false;
  int i = 1;
  while (i < c->argc) {
    const char *w = c->argv[i];
    if (is_option(w, 'l') || is_option(w, 'L')) {
      listing = true;
      i++;
    } else if (is_option(w, 's') || is_option(w, 'n')) {
      if (++i >= c->argc) {
        box_cmd_error(c, "%s: option requires an argument", w);
        return 1;
      }
      spec = c->argv[i++];
      sig = kill_number(spec);
      saw_signal = true;
    } else if (w[0] == '-' &&
               ((w[1] == 's' && g_ascii_isalpha(w[2])) || (w[1] == 'n' && g_ascii_isdigit(w[2])))) {
      spec = w + 2;
      sig = kill_number(spec);
      saw_signal = true;
      i++;
    } else if (is_option(w, '-')) {
      i++;
      break;
    } else if (w[0] == '-' && w[1] && !saw_signal) {
      spec = w + 1;
      sig = kill_number(spec);
      saw_signal = true;
      i++;
    } else {
      break;
    }
  }
  if (listing) return list_signals(c, i);
  if (sig < 0 || sig >= KILL_NSIG) {
    box_cmd_error(c, "%s: invalid signal specification", spec);
    return 1;
  }
  if (i >= c->argc) {
    box_fdprintf(c->err, "kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... "
                         "or kill -l [sigspec]\n");
    return 2;
  }
  int st = 0;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    pid_t pid;
    if (a[0] == '%') {
      BoxJob *j = box_job_by_spec(sh, a);
      if (!j) {
        box_cmd_error(c, "%s: no such job", a);
        st = 1;
        continue;
      }
      pid = j->pid;
    } else {
      char *end;
      pid = (pid_t)strtol(a, &end, 10);
      if (*end || !*a) {
        box_cmd_error(c, "%s: arguments must be process or job IDs", a);
        st = 1;
        continue;
      }
    }
    pid_t meant = box_pid_meant(pid);
    /* an init is not killed by a signal from its own namespace, SIGKILL
     * included: it ends as the signal would have ended it (its group's
     * other members first) */
    bool self = getpid() == 1 && sig == SIGKILL && (meant == 1 || meant == 0);
    if (kill(meant, sig) < 0) {
      box_cmd_error(c, "(%d) - %s", (int)pid, box_strerror(errno));
      st = 1;
    }
    if (self) _exit(128 + sig);
  }
  return st;
}
