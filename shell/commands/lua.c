/* lua.c — `lua`: Lua 5.4 (lua/boxlua.h) as one of the Shell's commands.
 *
 * The interpreter runs in a child process on the command's descriptors, so
 * it behaves like the stock `lua` program: its C stdio is its own,
 * `os.exit` ends only the command, and its environment is the one a
 * spawned program gets.  Its file functions reach the box's mount like any
 * builtin's.  io.popen, os.execute and box.run hand their text to the
 * Shell's decision point (box_run_text) in a child of the interpreter, so
 * every command they run gets its own shell:exec / shell:spawn decision. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lua/boxlua.h"
#include "shell/shell-private.h"

/* Runs text through the Shell's one decision point (box_run_text) in
 * this process, a child the interpreter forked for the route: a copy of
 * the Shell as it was when `lua` started, on the child's fds 0, 1, 2. */
static int lua_shell_run(void *data, const char *text)
{
  BoxCmd *c = data;
  return box_run_text(c->sh, text, 0, 1, 2);
}

/* box.decide: the host's dry run, when the Shell runs in a box. */
static bool lua_decide(void *data, const char *action, const char *input_json, char **message)
{
  BoxCmd *c = data;
  const BoxShellHost *h = c->sh->host;
  return h->decide_dry(h->data, action, input_json, message);
}

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

/* The interpreter's environment: what a spawned program would get. */
static void export_environment(Shell *sh)
{
  char **env = box_var_environ(sh);
  clearenv();
  for (char **e = env; e && *e; e++) putenv(g_strdup(*e));
  g_strfreev(env);
}

int box_cmd_lua(BoxCmd *c)
{
  box_out_flush(c->out);
  pid_t pid = box_fork(c->sh);
  if (pid < 0) {
    box_fdprintf(c->err, "lua: fork: %s\n", box_strerror(errno));
    return 126;
  }
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    if (!take_stdio(c)) _exit(126);
    export_environment(c->sh);
    BoxLuaHost host = { lua_shell_run, NULL, NULL, c };
    if (c->sh->host && c->sh->host->decide_dry) host.decide = lua_decide;
    _exit(box_lua_main_host(c->argc, c->argv, &host) & 255);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) return 126;
  }
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 128 + WTERMSIG(st);
}
