/* held.c — a launch's mount namespace, held by boxd until its PID 1 has
 * ended, so that the namespace's teardown is off the tool's status path. */
#include "tools/tools-private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- a launch's mount namespace ends after its status is out ----
 *
 * Tearing down a mount namespace waits for an RCU grace period, and the
 * last process to leave one does it in its exit, before its parent hears
 * of it: for PID 1 that delayed every tool's status by 0.3 ms or more.  So
 * boxd holds each launch's namespace and a thread of its own lets go of it
 * once that PID 1 has ended (its pidfd is readable). */

typedef struct {
  int pidfd;
  int nsfd;
} Held;

static GMutex held_lock;
static GArray *held; /* Held; held_lock */
static int held_wake = -1;

static gpointer held_thread(gpointer data)
{
  (void)data;
  GArray *polled = g_array_new(FALSE, FALSE, sizeof(struct pollfd));
  for (;;) {
    g_array_set_size(polled, 0);
    struct pollfd w = { .fd = held_wake, .events = POLLIN };
    g_array_append_val(polled, w);
    g_mutex_lock(&held_lock);
    for (guint i = 0; i < held->len; i++) {
      struct pollfd p = { .fd = g_array_index(held, Held, i).pidfd, .events = POLLIN };
      g_array_append_val(polled, p);
    }
    g_mutex_unlock(&held_lock);
    struct pollfd *p = (struct pollfd *)(void *)polled->data;
    if (poll(p, polled->len, -1) < 0 && errno != EINTR) g_usleep(1000);
    if (p[0].revents) {
      guint64 n;
      if (read(held_wake, &n, sizeof n) < 0) { /* nonblocking: nothing more to read */
      }
    }
    g_mutex_lock(&held_lock);
    for (guint k = 1; k < polled->len; k++) {
      if (!p[k].revents) continue;
      for (guint i = 0; i < held->len; i++) {
        Held *h = &g_array_index(held, Held, i);
        if (h->pidfd == p[k].fd) {
          close(h->nsfd);
          close(h->pidfd);
          g_array_remove_index_fast(held, i);
          break;
        }
      }
    }
    g_mutex_unlock(&held_lock);
  }
  return NULL;
}

static gpointer held_start(gpointer data)
{
  (void)data;
  held = g_array_new(FALSE, FALSE, sizeof(Held));
  held_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (held_wake < 0) return GINT_TO_POINTER(0);
  g_thread_unref(g_thread_new("box-ns-release", held_thread, NULL));
  return GINT_TO_POINTER(1);
}

/* Takes *pidfd (or opens one) when the namespace could be held. */
void tools_hold_mount_namespace(pid_t pid, int *pidfd)
{
  static GOnce once = G_ONCE_INIT;
  if (!GPOINTER_TO_INT(g_once(&once, held_start, NULL))) return;
  int pfd = *pidfd >= 0 ? *pidfd : (int)syscall(SYS_pidfd_open, pid, 0);
  if (pfd < 0) return;
  g_autofree char *ns = g_strdup_printf("/proc/%d/ns/mnt", (int)pid);
  int nsfd = open(ns, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) {
    if (pfd != *pidfd) close(pfd);
    return; /* already gone */
  }
  Held h = { pfd, nsfd };
  g_mutex_lock(&held_lock);
  g_array_append_val(held, h);
  g_mutex_unlock(&held_lock);
  *pidfd = -1;
  guint64 one = 1;
  if (write(held_wake, &one, sizeof one) < 0) {
    /* the counter is saturated: the thread is awake anyway */
  }
}

/* Every held namespace, now (teardown: they hold binds of the mount). */
void tools_release_held(void)
{
  g_mutex_lock(&held_lock);
  for (guint i = 0; held && i < held->len; i++) {
    Held *h = &g_array_index(held, Held, i);
    close(h->nsfd);
    close(h->pidfd);
  }
  if (held) g_array_set_size(held, 0);
  g_mutex_unlock(&held_lock);
  guint64 one = 1;
  if (held_wake >= 0 && write(held_wake, &one, sizeof one) < 0) { /* awake anyway */
  }
}
