/* rootless.c — `box run` for an ordinary user.
 *
 * Everything boxd does as root (its own mount namespace, the FUSE mount
 * with fd=, the workers' and tools' namespaces, binds and pivot_root) it
 * may do as well in a user namespace it owns.  So an ordinary user's boxd
 * first enters one where it is uid 0 (mapped to the user, nothing else
 * mapped) and then runs the same code as root does: the same decisions,
 * files created as the user with the same modes, and no capability in the
 * host's namespaces.
 *
 * The mount is made in boxd's own mount namespace, invisible to the host
 * (spec/mount-mechanics.md Q2), where the user may open /dev/fuse.  Where
 * the device is the administrator's alone (mode 0600), Debian's setuid
 * fusermount3 mounts it instead, as sshfs's is, in a private directory of
 * the user in the host's namespaces, before the user namespace is entered;
 * boxd inherits that mount and shows it where it would have made its own.
 */
#include "box/box-private.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* Set by fusermount3's route for the run in the namespace: its /dev/fuse,
 * the pipe whose closing makes the watcher unmount, and the mount's place,
 * passed on as numbers and a path. */
#define FUSERMOUNT_ENV "BOXD_FUSERMOUNT"

static struct {
  int fd;
  char *at;
} premounted = { -1, NULL };

/* The fuse descriptor fusermount3 sends over sock, or -1. */
static int receive_fd(int sock)
{
  char byte;
  struct iovec iov = { &byte, 1 };
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr m = {
    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf
  };
  ssize_t n;
  do n = recvmsg(sock, &m, 0);
  while (n < 0 && errno == EINTR);
  struct cmsghdr *h = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
  if (!h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS ||
      h->cmsg_len != CMSG_LEN(sizeof(int)))
    return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(h), sizeof fd);
  return fd;
}

/* The setuid helper at a fixed place: never one found through PATH. */
static const char *fusermount_path(void)
{
  static const char *const places[] = { "/usr/bin/fusermount3", "/bin/fusermount3" };
  for (size_t i = 0; i < G_N_ELEMENTS(places); i++)
    if (access(places[i], X_OK) == 0) return places[i];
  return NULL;
}

/* Directories an earlier run of fusermount3's route left (its watcher
 * killed before its work); a mounted one stays. */
static void sweep_premounts(const char *tmp)
{
  g_autoptr(GDir) dir = g_dir_open(tmp, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name(dir))) {
    if (!g_str_has_prefix(name, "box-fuse-")) continue;
    g_autofree char *top = g_build_filename(tmp, name, NULL);
    g_autofree char *mnt = g_build_filename(top, "mnt", NULL);
    if (rmdir(mnt) == 0 || errno == ENOENT) rmdir(top);
  }
}

/* fusermount3 mounts FUSE at mnt for this user and sends the device back
 * over a socket; the device, or -1 after saying why. */
static int fusermount(const char *helper, const char *mnt, bool allow_other, bool read_only)
{
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    box_fail("cannot make fusermount3's socket: %s", g_strerror(errno));
    return -1;
  }
  g_autofree char *opts = g_strdup_printf(
    "fsname=boxfs,subtype=boxfs%s%s", allow_other ? ",allow_other" : "", read_only ? ",ro" : "");
  pid_t pid = fork();
  if (pid == 0) {
    g_autofree char *num = g_strdup_printf("%d", sv[1]);
    if (fcntl(sv[1], F_SETFD, 0) != 0 || setenv("_FUSE_COMMFD", num, 1) != 0) _exit(127);
    execl(helper, "fusermount3", "-o", opts, "--", mnt, (char *)NULL);
    _exit(127);
  }
  close(sv[1]);
  int status;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  int fd = pid > 0 ? receive_fd(sv[0]) : -1;
  close(sv[0]);
  if (fd < 0)
    box_fail("fusermount3 could not mount FUSE at %s for uid %u (its message above)", mnt,
             (unsigned)getuid());
  return fd;
}

/* A process of the user's in the host's namespaces, where fusermount3 -u
 * works (not in the box's user namespace, where the helper is not set-uid):
 * once every holder of the pipe's other end is gone (boxd and whatever it
 * forked, however they end), the mount is detached and its directories
 * removed.  The end to hold, or -1. */
static int watch_mount(const char *helper, const char *top, const char *mnt)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    /* twice, and a session of its own: nobody's child to reap, and no
     * terminal's signal ends it before its work */
    if (fork() != 0) _exit(0);
    setsid();
    /* nothing but its pipe: a descriptor of the caller's held here (a
     * test's output pipe, a device) would outlive the box */
    int null = open("/dev/null", O_RDWR);
    for (int i = 0; i < 3 && null >= 0; i++) dup2(null, i);
    if (dup2(p[0], 3) != 3) _exit(1);
    p[0] = 3;
    close_range(4, ~0U, 0);
    char c;
    while (read(p[0], &c, 1) != 0 && errno == EINTR) {}
    pid_t u = fork();
    if (u == 0) {
      execl(helper, "fusermount3", "-u", "-z", "-q", "--", mnt, (char *)NULL);
      _exit(127);
    }
    int status;
    while (u > 0 && waitpid(u, &status, 0) < 0 && errno == EINTR) {}
    rmdir(mnt);
    rmdir(top);
    _exit(0);
  }
  close(p[0]);
  int status;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (pid < 0) {
    close(p[1]);
    return -1;
  }
  return p[1];
}

int box_fusermount(bool allow_other, char **at, int *alive)
{
  const char *helper = fusermount_path();
  if (!helper) {
    box_fail("fusermount3 is not installed (Debian: apt install fuse3)");
    return -1;
  }
  const char *tmp = g_get_tmp_dir();
  sweep_premounts(tmp);
  g_autoptr(GError) error = NULL;
  g_autofree char *top = g_dir_make_tmp("box-fuse-XXXXXX", &error);
  g_autofree char *mnt = top ? g_build_filename(top, "mnt", NULL) : NULL;
  if (!mnt || mkdir(mnt, 0700) != 0) {
    box_fail("cannot make a directory for the mount: %s",
             error ? error->message : g_strerror(errno));
    if (top) rmdir(top);
    return -1;
  }
  /* the watcher first, so that it holds no device: the connection ends
   * with boxd's processes alone */
  *alive = watch_mount(helper, top, mnt);
  if (*alive < 0) {
    box_fail("cannot watch a mount at %s: %s", mnt, g_strerror(errno));
    rmdir(mnt);
    rmdir(top);
    return -1;
  }
  int fd = fusermount(helper, mnt, allow_other, false);
  if (fd < 0) {
    /* the watcher removes the directories */
    close(*alive);
    *alive = -1;
    return -1;
  }
  *at = g_steal_pointer(&mnt);
  return fd;
}

int box_fusermount_at(const char *mnt, bool allow_other, bool read_only)
{
  const char *helper = fusermount_path();
  if (!helper) {
    box_fail("fusermount3 is not installed (Debian: apt install fuse3)");
    return -1;
  }
  return fusermount(helper, mnt, allow_other, read_only);
}

void box_fusermount_unmount(const char *mnt)
{
  const char *helper = fusermount_path();
  pid_t pid = helper ? fork() : -1;
  if (pid == 0) {
    execl(helper, "fusermount3", "-u", "-z", "-q", "--", mnt, (char *)NULL);
    _exit(127);
  }
  int status;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
}

/* Whether a user namespace of this user's may mount FUSE (Linux 4.18 and
 * later let it, unless a security module or a container's filter says
 * no), tried in a child that goes at once: its mount with it. */
static bool fuse_mounts_in_user_namespace(uid_t uid, gid_t gid)
{
  pid_t pid = fork();
  if (pid == 0) {
    /* a namespace refused is reported by the caller's own attempt */
    if (unshare(CLONE_NEWUSER) != 0 || !map_self_to_root(uid, gid) || unshare(CLONE_NEWNS) != 0)
      _exit(0);
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    char opts[96];
    snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
    _exit(fd >= 0 && mount("boxfs", g_get_tmp_dir(), "fuse.boxfs", MS_NOSUID | MS_NODEV, opts) == 0
            ? 0
            : 1);
  }
  int status;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return pid < 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The route of the mount, chosen per machine: in the box's user namespace
 * where the kernel lets it, else through fusermount3; BOXFS_MOUNT
 * (namespace or fusermount3) chooses instead. */
static bool mount_through_fusermount(uid_t uid, gid_t gid)
{
  const char *route = g_getenv("BOXFS_MOUNT");
  if (route && strcmp(route, "fusermount3") == 0) return true;
  if (route && strcmp(route, "namespace") == 0) return false;
  return !fuse_mounts_in_user_namespace(uid, gid);
}

/* The mount made now, in the host's namespaces; its place and descriptors
 * in the environment of the run in the namespace.  0, or the CLI's status. */
static int premount(void)
{
  bool allow_other = box_vfs_allow_other();
  g_autofree char *mnt = NULL;
  int alive = -1;
  int fd = box_fusermount(allow_other, &mnt, &alive);
  if (fd < 0) return 1;
  /* both cross the exec; there they are made close-on-exec again */
  if (fcntl(fd, F_SETFD, 0) != 0 || fcntl(alive, F_SETFD, 0) != 0)
    return box_fail("cannot keep the mount's descriptors: %s", g_strerror(errno));
  g_autofree char *value = g_strdup_printf("%d %d %s", fd, alive, mnt);
  g_setenv(FUSERMOUNT_ENV, value, TRUE);
  if (isatty(STDERR_FILENO))
    fprintf(stderr,
            "box: unprivileged: uid %u runs the box in a user namespace of its own (uid 0 inside); "
            "mount: through fusermount3%s\n",
            (unsigned)getuid(),
            allow_other ? ", with allow_other"
                        : ", without allow_other (no user_allow_other in /etc/fuse.conf): "
                          "only this user reaches the mount");
  return 0;
}

/* In the run in the namespace: what premount passed on, taken out of the
 * environment so that nothing the box starts sees it. */
static void take_premounted(void)
{
  const char *value = g_getenv(FUSERMOUNT_ENV);
  if (!value) return;
  int fd, alive, used = 0;
  if (sscanf(value, "%d %d %n", &fd, &alive, &used) == 2 && used > 0 && fd >= 0 && alive >= 0 &&
      fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fcntl(alive, F_SETFD, FD_CLOEXEC) == 0) {
    premounted.fd = fd;
    premounted.at = g_strdup(value + used);
  }
  g_unsetenv(FUSERMOUNT_ENV);
}

/* The host's id that 0 is mapped to in this namespace, from map. */
static unsigned long host_id_of_root(const char *map)
{
  g_autofree char *text = NULL;
  unsigned long inside, outside, count;
  if (g_file_get_contents(map, &text, NULL, NULL) &&
      sscanf(text, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0)
    return outside;
  return 0;
}

void boxd_host_ids(uid_t *uid, gid_t *gid)
{
  *uid = (uid_t)host_id_of_root("/proc/self/uid_map");
  *gid = (gid_t)host_id_of_root("/proc/self/gid_map");
}

const char *boxd_premounted(int *fd)
{
  *fd = premounted.fd;
  return premounted.at;
}

int boxd_enter_user_namespace(char **argv)
{
  if (geteuid() == 0) {
    if (boxd_in_user_namespace()) take_premounted();
    return 0;
  }
  /* The one device the mount needs is opened with the user's own uid
   * whatever the route: Debian's fusermount3 opens it so too. */
  int fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fuse < 0)
    return box_fail("/dev/fuse cannot be opened by uid %u (%s): an ordinary user's box mounts "
                    "FUSE itself (and fusermount3 opens the device as the user too); make "
                    "the device usable by users as Debian's udev rule does "
                    "(mode 0666: `chmod 0666 /dev/fuse`), or run box as root",
                    (unsigned)getuid(), g_strerror(errno));
  close(fuse);
  uid_t uid = geteuid();
  gid_t gid = getegid();
  bool through_fusermount = mount_through_fusermount(uid, gid);
  if (through_fusermount) {
    int failed = premount();
    if (failed) return failed;
  }
  /* Before any thread exists: the kernel refuses a threaded caller. */
  if (unshare(CLONE_NEWUSER) != 0) return refused(errno, false);
  /* A security module may leave the namespace without its capabilities
   * (Ubuntu's AppArmor restriction): writing the maps, or the first mount
   * namespace, shows it. */
  if (!map_self_to_root(uid, gid) || unshare(CLONE_NEWNS) != 0) return refused(errno, true);
  /* Said to a person only: a script's stderr is the agent's alone. */
  if (isatty(STDERR_FILENO) && !through_fusermount)
    fprintf(stderr,
            "box: unprivileged: uid %u runs the box in a user namespace of its own (uid 0 "
            "inside); mount: in a user namespace\n",
            (unsigned)uid);
  /* Run again, so that boxd's memory belongs to the namespace: PID 1 of
   * every sandbox runs in a copy of it, undumpable, and boxd could not
   * read its namespaces through /proc while the memory belonged to the
   * host's (only CAP_SYS_PTRACE there may). */
  execv("/proc/self/exe", argv);
  return box_fail("cannot run box again in its user namespace: %s", g_strerror(errno));
}
