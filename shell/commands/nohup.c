/* nohup.c — GNU nohup: COMMAND [ARG]... with SIGHUP ignored; input from a
 * terminal made unreadable, output to a terminal appended to nohup.out
 * (else $HOME/nohup.out), stderr to a terminal sent after stdout, each
 * said as GNU says it.  125 for its own errors, 126 when the command
 * cannot run, 127 when there is none.
 *
 * The command runs in a forked child of the Shell through box_run_argv,
 * so it gets the same decision as when typed and the Shell itself keeps
 * its SIGHUP. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

#define EXIT_CANCELED 125

/* Why argv0 cannot run, as execvp would say it (ENOENT, EACCES, EISDIR),
 * or 0; the Shell's own utilities run too, as their programs would. */
static int cannot_run(BoxCmd *c, const char *argv0)
{
  if (strchr(argv0, '/')) {
    struct stat st;
    if (stat(argv0, &st) != 0) return errno;
    int e = box_lookup_why_not(c->sh, argv0);
    /* execve refuses a directory with EACCES, where bash says EISDIR */
    return e == EISDIR ? EACCES : e;
  }
  const BoxCommandDef *def = box_command_lookup(argv0);
  if (def && def->kind == BOX_CMD_UTILITY) return 0;
  /* builtins a GNU system has as programs too: in a box, where no host
   * program stands behind them, the Shell's own run */
  static const char *const also_programs[] = { "echo", "printf", "true", "false", "test",
                                               "[",    "pwd",    "kill", NULL };
  if (def && g_strv_contains(also_programs, argv0)) return 0;
  g_autofree char *prog = box_lookup_program(c->sh, argv0);
  return prog ? 0 : ENOENT;
}

/* nohup.out in the working directory, else in $HOME; -1 after GNU's
 * message when neither opens.  *name: the one opened. */
static int open_nohup_out(BoxCmd *c, char **name)
{
  const mode_t mode = S_IRUSR | S_IWUSR;
  *name = g_strdup("nohup.out");
  int fd = open(*name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode);
  if (fd >= 0) return fd;
  int e = errno;
  const char *home = box_var_get(c->sh, "HOME");
  if (home) {
    g_free(*name);
    *name = g_build_filename(home, "nohup.out", NULL);
    fd = open(*name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode);
    if (fd >= 0) return fd;
    e = errno;
  }
  bx_err_q(c, "nohup", "failed to open %s", *name, e);
  return -1;
}

int box_cmd_nohup(BoxCmd *c)
{
  BX_EACH_OPTION (ch, c, "nohup", "+", "") switch (ch) {
    default: return EXIT_CANCELED;
    }
  if (optind >= c->argc) {
    bx_usage(c, "nohup", "missing operand");
    return EXIT_CANCELED;
  }
  bool ignoring_input = c->in >= 0 && isatty(c->in);
  bool redirecting_stdout = c->out_fd >= 0 && isatty(c->out_fd);
  bool redirecting_stderr = c->err >= 0 && isatty(c->err);
  int in = c->in, out = c->out_fd, err = c->err;
  int null_fd = -1, out_fd = -1;
  if (ignoring_input) {
    /* unreadable, as GNU leaves it: a read fails instead of seeing EOF */
    null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    in = null_fd;
    if (!redirecting_stdout && !redirecting_stderr) bx_err(c, "nohup", "ignoring input");
  }
  if (redirecting_stdout) {
    g_autofree char *name = NULL;
    out_fd = open_nohup_out(c, &name);
    if (out_fd < 0) {
      if (null_fd >= 0) close(null_fd);
      return EXIT_CANCELED;
    }
    g_autofree char *q = bx_quote_always(name);
    bx_err(c, "nohup",
           ignoring_input ? "ignoring input and appending output to %s" : "appending output to %s",
           q);
    out = out_fd;
  }
  if (redirecting_stderr) {
    if (!redirecting_stdout)
      bx_err(c, "nohup",
             ignoring_input ? "ignoring input and redirecting stderr to stdout"
                            : "redirecting stderr to stdout");
    err = out;
  }
  char **argv = c->argv + optind;
  int why = cannot_run(c, argv[0]);
  int status;
  if (why) {
    /* on the stderr nohup was given, as GNU puts it back for this */
    bx_err_q(c, "nohup", "failed to run command %s", argv[0], why);
    status = why == ENOENT ? 127 : 126;
  } else {
    box_out_flush(c->out);
    pid_t pid = box_fork(c->sh);
    if (pid < 0) {
      status = EXIT_CANCELED;
    } else if (pid == 0) {
      signal(SIGHUP, SIG_IGN);
      box_child_exit(c->sh, box_run_argv(c->sh, argv, in, out, err));
    } else {
      status = box_wait_pid(pid);
    }
  }
  if (null_fd >= 0) close(null_fd);
  if (out_fd >= 0) close(out_fd);
  return status;
}
