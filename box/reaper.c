/* reaper.c — one thread reaps, any thread may wait for its own child.
 *
 * boxd is a child subreaper and has many threads; if each waited with
 * waitpid(-1) they would steal each other's statuses.  The main thread
 * reaps everything on SIGCHLD and keeps each status until its owner
 * collects it; statuses nobody asks for (orphans reparented to boxd) are
 * dropped once the table grows.
 */
#include "box/reaper.h"

#include <glib.h>

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/wait.h>

#define ORPHAN_LIMIT 4096

static GMutex reaper_lock;
static GCond reaper_cond;
static GHashTable *reaped; /* pid -> wait status */

static pid_t reaper_main_tid; /* the main thread, which sleeps until SIGCHLD */

void box_reaper_init(void)
{
  reaped = g_hash_table_new(g_direct_hash, g_direct_equal);
  reaper_main_tid = (pid_t)syscall(SYS_gettid);
}

void box_reaper_collect(void)
{
  bool any = false;
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);
    if (pid <= 0) break;
    any = true;
    g_mutex_lock(&reaper_lock);
    if (g_hash_table_size(reaped) > ORPHAN_LIMIT) g_hash_table_remove_all(reaped);
    g_hash_table_insert(reaped, GINT_TO_POINTER(pid), GINT_TO_POINTER(status));
    g_cond_broadcast(&reaper_cond);
    g_mutex_unlock(&reaper_lock);
  }
  /* The main thread waits for the agent's status with no clock, woken by
   * SIGCHLD (serve.c); a status another thread reaped may be the agent's,
   * after the main thread took that SIGCHLD and looked: it is told again. */
  if (any && reaper_main_tid > 0 && (pid_t)syscall(SYS_gettid) != reaper_main_tid)
    syscall(SYS_tgkill, (pid_t)getpid(), reaper_main_tid, SIGCHLD);
}

void box_reaper_store(pid_t pid, int status)
{
  g_mutex_lock(&reaper_lock);
  g_hash_table_insert(reaped, GINT_TO_POINTER(pid), GINT_TO_POINTER(status));
  g_cond_broadcast(&reaper_cond);
  g_mutex_unlock(&reaper_lock);
}

bool box_reaper_poll(pid_t pid, int *status)
{
  gpointer value;
  g_mutex_lock(&reaper_lock);
  bool found = g_hash_table_lookup_extended(reaped, GINT_TO_POINTER(pid), NULL, &value);
  if (found) {
    *status = GPOINTER_TO_INT(value);
    g_hash_table_remove(reaped, GINT_TO_POINTER(pid));
  }
  g_mutex_unlock(&reaper_lock);
  return found;
}

/* How long a pid may be gone before its status, which another reaper may
 * still be telling, is given up for. */
#define LOST_STATUS_GRACE_MS 200

int box_reaper_wait(pid_t pid)
{
  /* Any thread may reap on the main thread's behalf (teardown runs there),
   * so a waiter collects too instead of depending on SIGCHLD delivery. */
  int status;
  gint64 gone_since = 0;
  while (!box_reaper_poll(pid, &status)) {
    box_reaper_collect();
    if (box_reaper_poll(pid, &status)) break;
    /* Reaped by the workers' zygote: its word is on the way, unless it was
     * killed first (a teardown kills every process boxd started at once),
     * and then it never comes. */
    if (kill(pid, 0) != 0 && errno == ESRCH) {
      gint64 now = g_get_monotonic_time();
      if (!gone_since)
        gone_since = now;
      else if (now - gone_since > LOST_STATUS_GRACE_MS * 1000)
        return W_EXITCODE(0, SIGKILL);
    }
    g_mutex_lock(&reaper_lock);
    g_cond_wait_until(&reaper_cond, &reaper_lock, g_get_monotonic_time() + 20 * 1000);
    g_mutex_unlock(&reaper_lock);
  }
  return status;
}

int box_status_code(int st)
{
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st) > 255 ? 255 : 128 + WTERMSIG(st);
  return 125;
}
