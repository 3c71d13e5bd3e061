/* rootless.c — `box run` for an ordinary user.
 *
 * Everything boxd does as root (its own mount namespace, the FUSE mount
 * with fd=, the workers' and tools' namespaces, binds and pivot_root) it
 * may do as well in a user namespace it owns.  So an ordinary user's boxd
 * first enters one where it is uid 0 (mapped to the user, nothing else
 * mapped) and then runs the same code as root does: the same decisions,
 * files created as the user with the same modes, and no capability in the
 * host's namespaces.  The mount stays in boxd's own mount namespace,
 * invisible to the host (spec/mount-mechanics.md Q2), so fusermount3 is not
 * needed; what it cannot do either, open a /dev/fuse of mode 0600, is
 * checked first.
 */
#include "box/box-private.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The first line of a /proc/sys file, or NULL. */
static char *sysctl_read(const char *path)
{
  char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return NULL;
  return g_strstrip(text);
}

static bool sysctl_is(const char *path, const char *value)
{
  g_autofree char *text = sysctl_read(path);
  return text && strcmp(text, value) == 0;
}

#define APPARMOR_USERNS "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
#define DEBIAN_USERNS "/proc/sys/kernel/unprivileged_userns_clone"
#define MAX_USERNS "/proc/sys/user/max_user_namespaces"

/* Why the kernel refused this user a user namespace (errno e) that works:
 * the setting at fault and how to allow it. */
static int refused(int e, bool entered)
{
  if (sysctl_is(DEBIAN_USERNS, "0"))
    return box_fail("box needs an unprivileged user namespace, which kernel."
                    "unprivileged_userns_clone=0 refuses; allow it with `sysctl -w "
                    "kernel.unprivileged_userns_clone=1` (and in /etc/sysctl.d to keep it), or "
                    "run box as root");
  if (sysctl_is(MAX_USERNS, "0"))
    return box_fail("box needs an unprivileged user namespace, which user.max_user_namespaces=0 "
                    "refuses; allow it with `sysctl -w user.max_user_namespaces=15000` (and in "
                    "/etc/sysctl.d to keep it), or run box as root");
  if (entered && sysctl_is(APPARMOR_USERNS, "1"))
    return box_fail("box needs an unprivileged user namespace with its capabilities, which "
                    "AppArmor takes away (kernel.apparmor_restrict_unprivileged_userns=1); allow "
                    "it with an AppArmor profile for box that grants `userns,` (see README.md), "
                    "or `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or run box as "
                    "root");
  return box_fail("box needs an unprivileged user namespace, which this kernel refuses: %s; "
                  "run box as root",
                  g_strerror(e));
}

/* This process as uid and gid 0 of its new user namespace, and no group
 * but that (an unprivileged writer of gid_map must give up setgroups). */
static bool map_self_to_root(uid_t uid, gid_t gid)
{
  g_autofree char *uline = g_strdup_printf("0 %u 1\n", (unsigned)uid);
  g_autofree char *gline = g_strdup_printf("0 %u 1\n", (unsigned)gid);
  const char *const writes[][2] = { { "/proc/self/setgroups", "deny" },
                                    { "/proc/self/uid_map", uline },
                                    { "/proc/self/gid_map", gline } };
  for (size_t i = 0; i < G_N_ELEMENTS(writes); i++) {
    FILE *f = fopen(writes[i][0], "we");
    if (!f) return false;
    bool ok = fputs(writes[i][1], f) >= 0;
    if (fclose(f) != 0 || !ok) return false;
  }
  return true;
}

bool boxd_in_user_namespace(void)
{
  g_autofree char *map = NULL;
  if (!g_file_get_contents("/proc/self/uid_map", &map, NULL, NULL)) return false;
  unsigned long inside, outside, count;
  /* the host's maps every uid to itself, in one line */
  return !(sscanf(map, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 &&
           outside == 0 && count == 4294967295UL && !strchr(g_strstrip(map), '\n'));
}

int boxd_enter_user_namespace(char **argv)
{
  if (geteuid() == 0) return 0;
  /* The one device the mount needs is opened with the user's own uid
   * whatever namespace it is in, and fusermount3 opens it so too. */
  int fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fuse < 0)
    return box_fail("/dev/fuse cannot be opened by uid %u (%s): an ordinary user's box mounts "
                    "FUSE itself; make the device usable by users as Debian's udev rule does "
                    "(mode 0666: `chmod 0666 /dev/fuse`), or run box as root",
                    (unsigned)getuid(), g_strerror(errno));
  close(fuse);
  uid_t uid = geteuid();
  gid_t gid = getegid();
  /* Before any thread exists: the kernel refuses a threaded caller. */
  if (unshare(CLONE_NEWUSER) != 0) return refused(errno, false);
  /* A security module may leave the namespace without its capabilities
   * (Ubuntu's AppArmor restriction): writing the maps, or the first mount
   * namespace, shows it. */
  if (!map_self_to_root(uid, gid) || unshare(CLONE_NEWNS) != 0) return refused(errno, true);
  /* Said to a person only: a script's stderr is the agent's alone. */
  if (isatty(STDERR_FILENO))
    fprintf(stderr,
            "box: unprivileged: uid %u runs the box in a user namespace of its own (uid 0 "
            "inside); the FUSE mount is made there\n",
            (unsigned)uid);
  /* Run again, so that boxd's memory belongs to the namespace: PID 1 of
   * every sandbox runs in a copy of it, undumpable, and boxd could not
   * read its namespaces through /proc while the memory belonged to the
   * host's (only CAP_SYS_PTRACE there may). */
  execv("/proc/self/exe", argv);
  return box_fail("cannot run box again in its user namespace: %s", g_strerror(errno));
}
