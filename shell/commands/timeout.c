/* timeout.c — GNU timeout: DURATION[smhd], -s/--signal, -k/--kill-after,
 * --preserve-status, -v/--verbose, --foreground; exit 124 on a timeout,
 * 125 for its own errors, 126/127 from the command, 137 when KILL was sent
 * (GNU's timeout dies of that KILL with its command's group).
 *
 * The command runs in a forked child of the Shell, in a process group of
 * its own, through box_run_argv — so it gets the same shell:exec /
 * shell:spawn decision as when typed, and the signal reaches everything it
 * started without touching the Shell itself. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

#define EXIT_TIMEDOUT 124
#define EXIT_CANCELED 125

static const char longopts[] = "signal=s: kill-after=k: preserve-status=p foreground=f verbose=v";

static const struct {
  const char *name;
  int sig;
} signames[] = {
  { "HUP", SIGHUP },       { "INT", SIGINT },     { "QUIT", SIGQUIT }, { "ILL", SIGILL },
  { "TRAP", SIGTRAP },     { "ABRT", SIGABRT },   { "IOT", SIGIOT },   { "BUS", SIGBUS },
  { "FPE", SIGFPE },       { "KILL", SIGKILL },   { "USR1", SIGUSR1 }, { "SEGV", SIGSEGV },
  { "USR2", SIGUSR2 },     { "PIPE", SIGPIPE },   { "ALRM", SIGALRM }, { "TERM", SIGTERM },
  { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD },   { "CLD", SIGCHLD },  { "CONT", SIGCONT },
  { "STOP", SIGSTOP },     { "TSTP", SIGTSTP },   { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
  { "URG", SIGURG },       { "XCPU", SIGXCPU },   { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM },
  { "PROF", SIGPROF },     { "WINCH", SIGWINCH }, { "POLL", SIGPOLL }, { "IO", SIGIO },
  { "PWR", SIGPWR },       { "SYS", SIGSYS },
};

static int parse_signal(const char *s)
{
  if (g_ascii_isdigit(*s)) {
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v < 0 || v >= NSIG ? -1 : (int)v;
  }
  const char *n = g_ascii_strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
  for (size_t i = 0; i < G_N_ELEMENTS(signames); i++)
    if (g_ascii_strcasecmp(n, signames[i].name) == 0) return signames[i].sig;
  return -1;
}

static const char *signal_name(int sig, char *buf, size_t cap)
{
  for (size_t i = 0; i < G_N_ELEMENTS(signames); i++)
    if (signames[i].sig == sig) return signames[i].name;
  g_snprintf(buf, cap, "%d", sig);
  return buf;
}

/* GNU's DURATION: a floating-point number with an optional s/m/h/d. */
static bool parse_duration(const char *s, double *out)
{
  char *end;
  errno = 0;
  double v = g_ascii_strtod(s, &end);
  if (end == s || errno == ERANGE || v < 0 || isnan(v)) return false;
  double mul = 1;
  if (*end) {
    if (end[1]) return false;
    switch (*end) {
    case 's': mul = 1; break;
    case 'm': mul = 60; break;
    case 'h': mul = 3600; break;
    case 'd': mul = 86400; break;
    default: return false;
    }
  }
  *out = v * mul;
  return true;
}

static void bad_interval(BoxCmd *c, const char *s)
{
  bx_usage_q(c, "timeout", "invalid time interval %s", s);
}

/* Waits up to secs (<= 0: forever) for pid; true when it ended (*ws set). */
static bool wait_for(pid_t pid, int pidfd, double secs, int *ws)
{
  gint64 deadline = secs > 0 ? g_get_monotonic_time() + (gint64)fmin(secs * 1e6, 9e15) : 0;
  for (;;) {
    pid_t r = waitpid(pid, ws, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) {
      *ws = 0;
      return true;
    }
    int ms = -1;
    if (deadline) {
      gint64 left = deadline - g_get_monotonic_time();
      if (left <= 0) return false;
      ms = (int)MIN(left / 1000 + 1, 1000000);
    }
    if (pidfd >= 0) {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      poll(&p, 1, ms);
    } else {
      /* no pidfd: poll the child every 10 ms */
      usleep((useconds_t)(ms < 0 || ms > 10 ? 10000 : ms * 1000));
    }
  }
}

/* After the signal the Shell child may be gone while a program it started
 * (which ignores the signal) lives on in the group: wait for the whole
 * group, up to secs (<= 0: forever).  true when it is empty. */
static bool wait_group(pid_t pgid, double secs)
{
  gint64 deadline = secs > 0 ? g_get_monotonic_time() + (gint64)fmin(secs * 1e6, 9e15) : 0;
  while (kill(-pgid, 0) == 0) {
    if (deadline && g_get_monotonic_time() >= deadline) return false;
    usleep(5000);
  }
  return true;
}

static void send_sig(BoxCmd *c, pid_t pid, int sig, bool verbose, const char *cmd)
{
  if (verbose) {
    char b[16];
    g_autofree char *q = bx_quote_always(cmd);
    bx_err(c, "timeout", "sending signal %s to command %s", signal_name(sig, b, sizeof b), q);
  }
  kill(-pid, sig);
  if (sig != SIGKILL && sig != SIGCONT) kill(-pid, SIGCONT);
}

int box_cmd_timeout(BoxCmd *c)
{
  int sig = SIGTERM;
  double kill_after = 0;
  bool preserve = false, verbose = false;
  BX_EACH_OPTION (ch, c, "timeout", "+s:k:v", longopts) switch (ch) {
    case 's':
      sig = parse_signal(optarg);
      if (sig < 0) {
        bx_usage_q(c, "timeout", "%s: invalid signal", optarg);
        return EXIT_CANCELED;
      }
      break;
    case 'k':
      if (!parse_duration(optarg, &kill_after)) {
        bad_interval(c, optarg);
        return EXIT_CANCELED;
      }
      break;
    case 'p': preserve = true; break;
    case 'f': break; /* no terminal in a worker: nothing to keep in the foreground */
    case 'v': verbose = true; break;
    default: return EXIT_CANCELED;
    }
  if (c->argc - optind < 2) {
    box_out_flush(c->out);
    box_fdprintf(c->err, "Try 'timeout --help' for more information.\n");
    return EXIT_CANCELED;
  }
  double secs;
  if (!parse_duration(c->argv[optind], &secs)) {
    bad_interval(c, c->argv[optind]);
    return EXIT_CANCELED;
  }
  char **argv = c->argv + optind + 1;
  box_out_flush(c->out);
  pid_t pid = box_fork(c->sh);
  if (pid < 0) return EXIT_CANCELED;
  if (pid == 0) {
    setpgid(0, 0);
    int st = box_run_argv(c->sh, argv, c->in, c->out_fd, c->err);
    box_child_exit(c->sh, st);
  }
  setpgid(pid, pid); /* also here, so the group exists before a signal is sent */
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  int ws = 0;
  bool timed_out = false, killed = false;
  if (!wait_for(pid, pidfd, secs, &ws)) {
    timed_out = true;
    send_sig(c, pid, sig, verbose, argv[0]);
    if (sig == SIGKILL) killed = true;
    gint64 t0 = g_get_monotonic_time();
    bool ended = wait_for(pid, pidfd, kill_after, &ws);
    if (ended && kill_after > 0) {
      double left = kill_after - (double)(g_get_monotonic_time() - t0) / 1e6;
      ended = left > 0 && wait_group(pid, left);
    }
    if (!ended) {
      send_sig(c, pid, SIGKILL, verbose, argv[0]);
      killed = true;
      wait_for(pid, pidfd, 0, &ws);
    }
  }
  if (pidfd >= 0) close(pidfd);
  int status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
  if (killed && !preserve) return 128 + SIGKILL;
  if (timed_out && !preserve) return EXIT_TIMEDOUT;
  return status;
}
