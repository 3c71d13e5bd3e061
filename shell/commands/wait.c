/* wait.c — `wait [-n] [PID|%JOB…]`. */
#include <stdlib.h>
#include <string.h>

#include "shell/shell-private.h"

int box_cmd_wait(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  bool any = false;
  if (i < c->argc && strcmp(c->argv[i], "-n") == 0) {
    any = true;
    i++;
  }
  if (i >= c->argc) {
    int st = 0;
    for (guint k = 0; k < sh->jobs->len; k++) {
      BoxJob *j = &g_array_index(sh->jobs, BoxJob, k);
      if (!j->done) {
        j->status = box_wait_pid(j->pid);
        j->done = true;
        if (any) return j->status;
      }
      st = any ? j->status : 0;
    }
    return any ? st : 0;
  }
  int st = 0;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    BoxJob *found = NULL;
    if (a[0] == '%') {
      long n = a[1] ? atol(a + 1) : (long)sh->jobs->len;
      if (n >= 1 && n <= (long)sh->jobs->len) found = &g_array_index(sh->jobs, BoxJob, n - 1);
    } else {
      pid_t pid = (pid_t)atol(a);
      for (guint k = 0; k < sh->jobs->len; k++)
        if (g_array_index(sh->jobs, BoxJob, k).pid == pid)
          found = &g_array_index(sh->jobs, BoxJob, k);
    }
    if (!found) {
      box_cmd_error(c, "pid %s is not a child of this shell", a);
      st = 127;
      continue;
    }
    if (!found->done) {
      found->status = box_wait_pid(found->pid);
      found->done = true;
    }
    st = found->status;
  }
  return st;
}
