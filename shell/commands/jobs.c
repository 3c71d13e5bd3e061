/* jobs.c — `jobs [-lp]`: the background jobs of this shell. */
#include <string.h>
#include <sys/wait.h>

#include "shell/shell-private.h"

int box_cmd_jobs(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool pids = c->argc > 1 && strcmp(c->argv[1], "-p") == 0;
  bool lng = c->argc > 1 && strcmp(c->argv[1], "-l") == 0;
  /* A shell that is not interactive forgets a finished job without
   * listing it; the others keep their numbers. */
  guint running = 0, num = 0, shown = 0;
  for (guint k = 0; k < sh->jobs->len; k++) {
    BoxJob *j = &g_array_index(sh->jobs, BoxJob, k);
    if (strcmp(j->text, "job") || j->done) continue;
    int ws;
    pid_t r = waitpid(j->pid, &ws, WNOHANG);
    if (r == j->pid) {
      j->done = true;
      j->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    } else {
      running++;
    }
  }
  for (guint k = 0; k < sh->jobs->len; k++) {
    BoxJob *j = &g_array_index(sh->jobs, BoxJob, k);
    if (strcmp(j->text, "job")) continue;
    num++;
    if (j->done) continue;
    shown++;
    if (!j->done) {
      int ws;
      pid_t r = waitpid(j->pid, &ws, WNOHANG);
      if (r == j->pid) {
        j->done = true;
        j->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
      }
    }
    if (pids) {
      box_out_printf(c->out, "%d\n", (int)j->pid);
      continue;
    }
    char mark = shown == running ? '+' : (shown + 1 == running ? '-' : ' ');
    char state[32];
    if (!j->done)
      g_strlcpy(state, "Running", sizeof state);
    else if (j->status)
      g_snprintf(state, sizeof state, "Exit %d", j->status);
    else
      g_strlcpy(state, "Done", sizeof state);
    const char *cmd = j->cmd ? j->cmd : "";
    if (lng)
      box_out_printf(c->out, "[%u]%c %d %-24s%s%s\n", num, mark, (int)j->pid, state, cmd,
                     j->done ? "" : " &");
    else
      box_out_printf(c->out, "[%u]%c  %-24s%s%s\n", num, mark, state, cmd, j->done ? "" : " &");
  }
  return 0;
}
