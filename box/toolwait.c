/* toolwait.c — a tool lives as long as the Shell process that runs it.
 *
 * A tool runs in its own sandbox, started by boxd, so a signal the Shell
 * sends its own children (`timeout`'s TERM to its process group) never
 * reaches it.  What does reach boxd is the end of the requesting process:
 * its reply socket hangs up.  Then the tool is stopped, instead of running
 * on unseen until the whole command ends. */
#include "box/box-private.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int boxd_wait_tool(pid_t pid, int requester_fd)
{
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0 || requester_fd < 0) {
    if (pidfd >= 0) close(pidfd);
    return box_reaper_wait(pid);
  }
  bool killed = false;
  for (;;) {
    struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = requester_fd, .events = 0 } };
    int n = poll(p, killed ? 1 : 2, -1);
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && p[0].revents) break; /* it ended: reap below */
    if (n > 0 && !killed && (p[1].revents & (POLLHUP | POLLERR))) {
      kill(pid, SIGKILL); /* the sandbox's init: everything in it ends */
      killed = true;
    }
  }
  close(pidfd);
  return box_reaper_wait(pid);
}
