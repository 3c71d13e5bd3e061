/* toolwait.c — a tool lives as long as the Shell process that runs it.
 *
 * A tool runs in its own sandbox, started by boxd, so a signal the Shell
 * sends its own children (`timeout`'s TERM to its process group) never
 * reaches it.  What does reach boxd is what the requesting process says on
 * its reply socket: a signal it was sent while it waited, which goes on to
 * the tool, and its end (the socket hangs up), which stops the tool instead
 * of letting it run on unseen until the whole command ends. */
#include "box/box-private.h"
#include "box/ctl.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What a worker may have sent on (it is hostile code): the signals a
 * process waiting for its tool forwards (box/shell_worker.c). */
static int forwarded_signal(json_object *msg)
{
  static const int allowed[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };
  json_object *op, *sig;
  if (!json_object_object_get_ex(msg, "op", &op) ||
      g_strcmp0(json_object_get_string(op), "signal") != 0 ||
      !json_object_object_get_ex(msg, "signal", &sig))
    return 0;
  int n = json_object_get_int(sig);
  for (size_t i = 0; i < G_N_ELEMENTS(allowed); i++)
    if (allowed[i] == n) return n;
  return 0;
}

int boxd_wait_tool(pid_t pid, int requester_fd)
{
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0 || requester_fd < 0) {
    if (pidfd >= 0) close(pidfd);
    return box_reaper_wait(pid);
  }
  bool killed = false;
  for (;;) {
    struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN },
                           { .fd = requester_fd, .events = POLLIN } };
    int n = poll(p, killed ? 1 : 2, -1);
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && p[0].revents) break; /* it ended: reap below */
    if (n <= 0 || killed || !p[1].revents) continue;
    json_object *msg = (p[1].revents & POLLIN) ? box_ctl_recv(requester_fd, NULL, NULL) : NULL;
    if (msg) {
      /* the sandbox's init forwards it to the program */
      int sig = forwarded_signal(msg);
      if (sig) (void)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
      json_object_put(msg);
      continue;
    }
    (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0); /* everything in it ends */
    killed = true;
  }
  close(pidfd);
  return box_reaper_wait(pid);
}
