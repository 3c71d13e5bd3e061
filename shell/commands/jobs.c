/* jobs.c — `jobs [-lp]`: the background jobs of this shell. */
#include <string.h>
#include <sys/wait.h>

#include "shell/shell-private.h"

int box_cmd_jobs(BoxCmd *c) {
  Shell *sh = c->sh;
  bool pids = c->argc > 1 && strcmp(c->argv[1], "-p") == 0;
  bool lng = c->argc > 1 && strcmp(c->argv[1], "-l") == 0;
  for (guint k = 0; k < sh->jobs->len; k++) {
    BoxJob *j = &g_array_index(sh->jobs, BoxJob, k);
    if (strcmp(j->text, "job")) continue;
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
    char mark = k + 1 == sh->jobs->len ? '+' : (k + 2 == sh->jobs->len ? '-' : ' ');
    const char *state = j->done ? (j->status ? "Exit" : "Done") : "Running";
    if (lng) box_out_printf(c->out, "[%u]%c %d %-24s\n", k + 1, mark, (int)j->pid, state);
    else box_out_printf(c->out, "[%u]%c  %-24s\n", k + 1, mark, state);
  }
  return 0;
}
