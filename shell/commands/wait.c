/* wait.c — `wait [-n] [PID|%JOB…]`. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/shell-private.h"

/* A job that ended before this wait began: reaped now, its status kept;
 * `wait -n` waits only for those still running, as bash's does. */
static bool ended_already(BoxJob *j)
{
  if (j->done) return true;
  siginfo_t si = { 0 };
  if (waitid(P_PID, (id_t)j->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
    return false;
  j->status = box_wait_pid(j->pid);
  j->done = true;
  return true;
}

/* `wait -n`: the first of jobs[0..n) to end, by a pidfd each; 127 when
 * none is running. */
static int wait_first(BoxJob **jobs, guint n)
{
  struct pollfd *p = g_new0(struct pollfd, n ? n : 1);
  guint live = 0;
  int st = 127;
  for (guint k = 0; k < n; k++) {
    if (ended_already(jobs[k])) continue;
    int fd = (int)syscall(SYS_pidfd_open, jobs[k]->pid, 0);
    if (fd < 0) continue;
    p[live].fd = fd;
    p[live].events = POLLIN;
    jobs[live++] = jobs[k];
  }
  while (live > 0) {
    int r = poll(p, live, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    for (guint k = 0; k < live; k++)
      if (p[k].revents) {
        jobs[k]->status = box_wait_pid(jobs[k]->pid);
        jobs[k]->done = true;
        st = jobs[k]->status;
        goto out;
      }
  }
out:
  for (guint k = 0; k < live; k++) close(p[k].fd);
  g_free(p);
  return st;
}

/* The job an operand names, or NULL after saying why (*st: the status). */
static BoxJob *named_job(BoxCmd *c, const char *a, int *st)
{
  Shell *sh = c->sh;
  if (a[0] == '%') {
    BoxJob *j = box_job_by_spec(sh, a);
    if (j) return j;
    box_cmd_error(c, "%s: no such job", a);
    *st = 127;
    return NULL;
  }
  char *end;
  long pid = strtol(a, &end, 10);
  if (!*a || *end) {
    box_cmd_error(c, "`%s': not a pid or valid job spec", a);
    *st = 1;
    return NULL;
  }
  for (guint k = 0; k < sh->jobs->len; k++)
    if (g_array_index(sh->jobs, BoxJob, k).pid == (pid_t)pid)
      return &g_array_index(sh->jobs, BoxJob, k);
  box_cmd_error(c, "pid %s is not a child of this shell", a);
  *st = 127;
  return NULL;
}

int box_cmd_wait(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  bool any = false;
  if (i < c->argc && strcmp(c->argv[i], "-n") == 0) {
    any = true;
    i++;
  }
  if (any) {
    GPtrArray *cands = g_ptr_array_new();
    int st = 127;
    if (i >= c->argc)
      for (guint k = 0; k < sh->jobs->len; k++)
        g_ptr_array_add(cands, &g_array_index(sh->jobs, BoxJob, k));
    for (; i < c->argc; i++) {
      /* bash says "no such job" of any operand -n cannot take */
      const char *a = c->argv[i];
      char *end;
      long pid = a[0] == '%' ? 0 : strtol(a, &end, 10);
      BoxJob *j = NULL;
      if (a[0] == '%' || (*a && !*end && pid > 0))
        j = named_job(c, a, &st);
      else
        box_cmd_error(c, "%s: no such job", a);
      if (j) g_ptr_array_add(cands, j);
    }
    if (cands->len) st = wait_first((BoxJob **)cands->pdata, cands->len);
    g_ptr_array_free(cands, TRUE);
    return st;
  }
  if (i >= c->argc) {
    for (guint k = 0; k < sh->jobs->len; k++) {
      BoxJob *j = &g_array_index(sh->jobs, BoxJob, k);
      if (!j->done) {
        j->status = box_wait_pid(j->pid);
        j->done = true;
      }
    }
    return 0;
  }
  int st = 0;
  for (; i < c->argc; i++) {
    BoxJob *found = named_job(c, c->argv[i], &st);
    if (!found) continue;
    if (!found->done) {
      found->status = box_wait_pid(found->pid);
      found->done = true;
    }
    st = found->status;
  }
  return st;
}
