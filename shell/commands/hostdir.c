/* hostdir.c — a host directory kept for workers rooted in the box's mount
 * (curl_dl.c's and python_dl.c's libraries, the Python standard library). */
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include "shell/shell-private.h"

/* A detached copy of the directory, read-only: from it ".." leads nowhere,
 * so the descriptor reaches that directory's files and nothing else of the
 * host. */
int box_host_dir_open(const char *dir)
{
  int fd = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (fd < 0) return -1;
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
  if (mount_setattr(fd, "", AT_EMPTY_PATH, &ro, sizeof ro) != 0) {
    close(fd);
    return -1;
  }
  return box_fd_own(fd); /* the worker keeps it: never at a script's number */
}
