/* userns.c — a launch's user namespace (an ordinary user's box): the
 * user is uid and gid 0 inside, and nothing else is mapped. */
#include "tools/tools-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static bool write_file(const char *path, const char *text)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
  close(fd);
  return ok;
}

bool tools_map_user(pid_t pid, GError **error)
{
  g_autofree char *sg = g_strdup_printf("/proc/%d/setgroups", (int)pid);
  g_autofree char *um = g_strdup_printf("/proc/%d/uid_map", (int)pid);
  g_autofree char *gm = g_strdup_printf("/proc/%d/gid_map", (int)pid);
  g_autofree char *uline = g_strdup_printf("0 %u 1\n", (unsigned)geteuid());
  g_autofree char *gline = g_strdup_printf("0 %u 1\n", (unsigned)getegid());
  if (!write_file(sg, "deny") || !write_file(um, uline) || !write_file(gm, gline)) {
    g_set_error(error, BOX_TOOLS_ERROR, 1, "containment setup failed during user namespace: %s",
                g_strerror(errno));
    return false;
  }
  return true;
}
