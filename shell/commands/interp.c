/* interp.c — what the commands that embed an interpreter (lua, python3)
 * share: the interpreter runs in a child process on the command's
 * descriptors, so it behaves like the stock program: its C stdio is its
 * own, its exit ends only the command, and its environment is the one a
 * spawned program gets.  Its file functions reach the box's mount like any
 * builtin's. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/shell-private.h"

/* Moves the command's descriptors onto 0, 1, 2 (any of them may alias
 * another, or be -1 = closed). */
static bool take_stdio(BoxCmd *c)
{
  int want[3] = { c->in, c->out_fd, c->err };
  int tmp[3];
  for (int i = 0; i < 3; i++) {
    tmp[i] = want[i] >= 0 ? fcntl(want[i], F_DUPFD_CLOEXEC, 10) : -1;
    if (want[i] >= 0 && tmp[i] < 0) return false;
  }
  for (int i = 0; i < 3; i++) {
    if (tmp[i] < 0) {
      close(i);
      continue;
    }
    if (dup2(tmp[i], i) < 0) return false;
    close(tmp[i]);
  }
  return true;
}

/* Whether real descriptor fd is the pipe of a `<(…)`/`>(…)`, which a word
 * names as /dev/fd/fd. */
static bool procsub_fd(const Shell *sh, int fd)
{
  for (guint i = 0; sh->procsub_fds && i < sh->procsub_fds->len; i++)
    if (g_array_index(sh->procsub_fds, int, i) == fd) return true;
  return false;
}

/* The command's descriptors 3…9 (`5<<EOF`, `exec 7>f`) at their numbers
 * and nothing else there, as a spawned program gets them (exec.c's
 * program_fds): the worker keeps its own descriptors above 9 (box_fd_own),
 * so what else lies at 3…9 is the Shell's for another number (a file the
 * script opened, a slot it closed with `exec 7>&-`), and is closed. */
static bool take_high_fds(const Shell *sh)
{
  int tmp[10];
  for (int i = 3; i <= 9; i++) {
    tmp[i] = -1;
    if (sh->fd[i] >= 0 && sh->fd[i] != i &&
        (tmp[i] = fcntl(sh->fd[i], F_DUPFD_CLOEXEC, BOX_OWN_FD_MIN)) < 0)
      return false;
  }
  for (int i = 3; i <= 9; i++) {
    if (tmp[i] >= 0) {
      if (dup2(tmp[i], i) < 0) return false;
      close(tmp[i]);
    } else if (sh->fd[i] != i && !procsub_fd(sh, i)) {
      close(i);
    }
  }
  return true;
}

/* The interpreter's environment: what a spawned program would get. */
static void export_environment(Shell *sh)
{
  char **env = box_var_environ(sh);
  clearenv();
  for (char **e = env; e && *e; e++) putenv(g_strdup(*e));
  g_strfreev(env);
}

/* What the child does before body, in this process instead: for a
 * command that nothing of the text follows (python_split.c). */
int box_cmd_in_place(BoxCmd *c, int (*body)(BoxCmd *c))
{
  box_out_flush(c->out);
  signal(SIGPIPE, SIG_DFL);
  if (!take_stdio(c) || !take_high_fds(c->sh)) return 126;
  export_environment(c->sh);
  return body(c) & 255;
}

int box_cmd_in_child(BoxCmd *c, int (*body)(BoxCmd *c))
{
  return box_cmd_in_child_serving(c, body, NULL);
}

int box_cmd_in_child_serving(BoxCmd *c, int (*body)(BoxCmd *c), void (*serve)(BoxCmd *c, pid_t pid))
{
  box_out_flush(c->out);
  pid_t pid = box_fork(c->sh);
  if (pid < 0) {
    box_fdprintf(c->err, "%s: fork: %s\n", c->argv[0], box_strerror(errno));
    return 126;
  }
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    if (!take_stdio(c) || !take_high_fds(c->sh)) _exit(126);
    export_environment(c->sh);
    _exit(body(c) & 255);
  }
  if (serve) serve(c, pid);
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) return 126;
  }
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 128 + WTERMSIG(st);
}
