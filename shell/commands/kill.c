/* kill.c — `kill [-s SIG | -SIG] PID|%JOB…` and `kill -l`. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

int box_signal_number(const char *s);
const char *box_signal_name(int n);

int box_cmd_kill(BoxCmd *c)
{
  Shell *sh = c->sh;
  int sig = SIGTERM;
  int i = 1;
  if (i < c->argc && strcmp(c->argv[i], "-l") == 0) {
    if (i + 1 < c->argc) {
      for (int k = i + 1; k < c->argc; k++) {
        int n = atoi(c->argv[k]);
        if (n > 128) n -= 128;
        box_out_printf(c->out, "%s\n", box_signal_name(n));
      }
      return 0;
    }
    for (int s = 1; s < 32; s++)
      box_out_printf(c->out, "%2d) SIG%s%s", s, box_signal_name(s), s % 5 ? "\t" : "\n");
    box_out_putc(c->out, '\n');
    return 0;
  }
  if (i < c->argc && strcmp(c->argv[i], "-s") == 0 && i + 1 < c->argc) {
    sig = box_signal_number(c->argv[i + 1]);
    i += 2;
  } else if (i < c->argc && c->argv[i][0] == '-' && c->argv[i][1] && strcmp(c->argv[i], "--")) {
    sig = box_signal_number(c->argv[i] + 1);
    i++;
  } else if (i < c->argc && strcmp(c->argv[i], "--") == 0) {
    i++;
  }
  if (sig < 0 || sig >= 65) {
    box_cmd_error(c, "%s: invalid signal specification", c->argv[i - 1]);
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
      long n = a[1] ? atol(a + 1) : (long)sh->jobs->len;
      if (n < 1 || n > (long)sh->jobs->len) {
        box_cmd_error(c, "%s: no such job", a);
        st = 1;
        continue;
      }
      pid = g_array_index(sh->jobs, BoxJob, n - 1).pid;
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
