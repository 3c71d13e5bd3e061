/* launch.c — start a program in its own sandbox (spec/runtime.md §5.3).
 *
 * boxd is multithreaded, so the child may only make system calls: the view
 * (view.c), the environment (env.c) and the seccomp program (seccomp.c)
 * are computed before clone(), and the child replays them.
 *
 * The child is the init (PID 1) of new user (when boxd is not root), mount,
 * PID, IPC, UTS and network namespaces.  It builds the view, pivots into
 * it, forks the program and reaps: when the program exits, PID 1 exits with
 * its status and the kernel ends everything else in the namespace.
 *
 * What a launch costs boxd, and how it is kept small:
 * - the view (about sixty mounts) is prepared once per plan: the first
 *   launch builds it without the per-launch /tmp and /proc, pivots, and
 *   hands boxd its mount namespace before taking a private copy for itself;
 *   later launches enter it, copy it (unshare) and add only /tmp and /proc,
 *   so no launch shares a mount with the prepared view or another launch;
 * - PID 1 shares boxd's memory (CLONE_VM) instead of copying it, until its
 *   workload has exec'd; after that it touches only its own stack;
 * - the launch's mount namespace is torn down by boxd after PID 1 has
 *   ended, not in PID 1's exit before its status is out.
 */
#include "tools/tools-private.h"
#include "tools/fdpass.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define REAPER_FAIL "strands-box: namespace reaper could not build the view: "

/* What the sandbox reads as PID 1's command line (hide_args). */
static const char NEUTRAL_ARGS[] = "box run";

/* How the child gets its view. */
typedef enum {
  VIEW_REPLAY,  /* every step, /tmp and /proc included */
  VIEW_PREPARE, /* every step but /tmp and /proc, then hand boxd the namespace */
  VIEW_ENTER,   /* enter the prepared namespace, add /tmp and /proc */
} ViewMode;

typedef struct {
  const View *view;
  const char *program;
  char *const *argv;
  char **envp;
  const char *cwd;
  const void *seccomp; /* struct sock_fprog * */
  int last_cap;
  bool new_net;
  ViewMode mode;
  int prepared_fd;      /* VIEW_ENTER: the prepared mount namespace */
  int link_fd;          /* to boxd: "g"o and "k" in, "v"iew prepared and "r"eleased out */
  int boxd_end;         /* boxd's end of the link, closed by the child first thing */
  int join_netns_fd;    /* the box's route-less namespace to join, or -1 */
  char *workload_stack; /* top of the workload's stack */
  int fd_out, fd_err;
  int fds[BOX_TOOLS_MAX_FDS]; /* the workload's by number, 1 and 2 aside (-1: none) */
  int nfds;
  const char *tmp_area;    /* bound as /tmp (the command's RAM /tmp), or NULL */
  int tmp_tree;            /* tmp_area's detached copy, once PID 1 may look it up */
  int proc_tree;           /* a detached proc of the launch's PID namespace, or -1 */
  const char *tmp_program; /* the program's path below tmp_area, or NULL */
  const void *observed;    /* the filter whose refusals boxd's listener answers, or NULL */
  int listener;            /* PID 1's listener of observed, handed to boxd at release */
  int listener_errno;      /* why observed could not be installed with a listener, or 0 */
} Child;

static int last_cap(void)
{
  static int cached = -1;
  if (cached < 0) {
    g_autofree char *text = NULL;
    cached = g_file_get_contents("/proc/sys/kernel/cap_last_cap", &text, NULL, NULL) ? atoi(text)
                                                                                     : CAP_LAST_CAP;
  }
  return cached;
}

/* ---- the child's half: system calls only ---- */

static size_t cstrlen(const char *s)
{
  size_t n = 0;
  while (s[n]) n++;
  return n;
}

static void say(int fd, const char *a, const char *b, const char *c)
{
  const char *parts[] = { a, b, c, "\n" };
  for (int i = 0; i < 4; i++)
    if (parts[i] && write(fd, parts[i], cstrlen(parts[i])) < 0) return;
}

static void __attribute__((noreturn)) child_fail(const Child *c, const char *what)
{
  /* strerrordesc_np: no locale, no lock (a CLONE_VM PID 1 shares boxd's). */
  const char *reason = strerrordesc_np(errno);
  if (!reason) reason = "unknown error";
  char line[1024];
  snprintf(line, sizeof line, "%s: %s", what, reason);
  say(c->fd_err, REAPER_FAIL, line, NULL);
  _exit(127);
}

static bool drop_authority(int last)
{
  if (prctl(PR_SET_SECUREBITS,
            SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
              SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
              SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
            0, 0, 0) != 0)
    return false;
  for (int cap = 0; cap <= last; cap++)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return false;
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof d);
  if (syscall(SYS_capset, &h, d) != 0) return false;
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
}

/* An O_PATH descriptor of path that no symbolic link redirected: a link
 * swapped in after the plan (a rename race) fails the launch instead of
 * widening the view. */
static int open_exact(const char *path)
{
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

static void fd_path(char *buf, int fd)
{
  const char *prefix = "/proc/self/fd/";
  size_t n = cstrlen(prefix);
  memcpy(buf, prefix, n);
  char digits[16];
  int k = 0;
  do {
    digits[k++] = (char)('0' + fd % 10);
    fd /= 10;
  } while (fd > 0);
  while (k > 0) buf[n++] = digits[--k];
  buf[n] = '\0';
}

static void bind_exact(const Child *c, const Step *s)
{
  char src[32], dst[32];
  int sfd = open_exact(s->src);
  if (sfd < 0) child_fail(c, s->src);
  int dfd = open_exact(s->dst);
  if (dfd < 0) child_fail(c, s->dst);
  fd_path(src, sfd);
  fd_path(dst, dfd);
  if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0) child_fail(c, s->src);
  close(sfd);
  close(dfd);
  dfd = open_exact(s->dst);
  if (dfd < 0) child_fail(c, s->dst);
  fd_path(dst, dfd);
  if (mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | s->flags, NULL) != 0) child_fail(c, s->dst);
  close(dfd);
}

/* A fresh proc still shows the host's kernel settings, and uid 0 writes
 * them with no capability at all: /proc/sys/kernel/core_pattern names a
 * program the host's kernel runs as root, sysrq-trigger and irq act on the
 * whole machine.  So the launch's proc is mounted read-only as a whole:
 * one flag where binding each of those read-only over itself took ten
 * mount calls per launch.  What a program writes through /proc/self/fd/N
 * reaches the file's own mount, not proc's.  No stdio here: with CLONE_VM
 * this runs in boxd's memory. */
static void mount_proc(const Child *c, const char *proc)
{
  if (c->proc_tree >= 0 ? move_mount(c->proc_tree, "", AT_FDCWD, proc, MOVE_MOUNT_F_EMPTY_PATH) != 0
                        : mount("proc", proc, "proc", VIEW_PROC_FLAGS, NULL) != 0)
    child_fail(c, proc);
}

/* A launch that adds its proc after pivot_root makes it first, while a
 * full proc is still in sight: in a user namespace other than the host's
 * the kernel refuses a new proc where none is (mount_too_revealing). */
static void detach_proc(Child *c)
{
  int fs = fsopen("proc", FSOPEN_CLOEXEC);
  if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0) child_fail(c, "/proc");
  c->proc_tree =
    fsmount(fs, FSMOUNT_CLOEXEC,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (c->proc_tree < 0) child_fail(c, "/proc");
  close(fs);
}

static void replay_scaffold(const Child *c, const Step *s, const char *path)
{
  switch (s->kind) {
  case STEP_MKDIR:
    if (mkdir(path, 0755) != 0 && errno != EEXIST) child_fail(c, path);
    break;
  case STEP_FILE: {
    /* In a launch's RAM /tmp boxd has made the point already: looked at
     * with O_PATH, it costs the mount no open and release. */
    int fd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0444);
    if (fd < 0) child_fail(c, path);
    close(fd);
    break;
  }
  case STEP_SYMLINK:
    if (symlink(s->src, path) != 0 && errno != EEXIST) child_fail(c, path);
    break;
  default: break;
  }
}

/* The program a table names in the box's /tmp: that one file is bound
 * over itself, executable, read-only, no setuid.  It is found below the
 * /tmp at path with no symlink and no mount on the way, so what runs is
 * the file boxd found and policy let it read, not a host file a link
 * leads to; and the rest of /tmp stays noexec, so what a tool or the
 * agent drops there runs only when a table names it. */
static void place_tmp_program(const Child *c, const char *path)
{
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  int dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int file = dir < 0 ? -1 : (int)syscall(SYS_openat2, dir, c->tmp_program, &how, sizeof how);
  struct stat st;
  if (file < 0 || fstat(file, &st) != 0) child_fail(c, c->program);
  if (!S_ISREG(st.st_mode)) {
    errno = EACCES;
    child_fail(c, c->program);
  }
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                             .attr_clr = MOUNT_ATTR_NOEXEC };
  int tree = open_tree(file, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0 ||
      move_mount(tree, "", file, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    child_fail(c, c->program);
  close(tree);
  close(file);
  close(dir);
}

/* The launch's /tmp at path: the command's RAM /tmp, seen as the Shell
 * sees it, with a tmpfs's flags (nothing runs from it, no device, no
 * setuid) but for the program a table names there; else a tmpfs of its
 * own. */
static void place_tmp(const Child *c, const char *path)
{
  if (c->tmp_tree < 0) {
    if (mount(VIEW_TMP_SOURCE, path, "tmpfs", VIEW_TMP_FLAGS, VIEW_TMP_DATA) != 0)
      child_fail(c, "/tmp");
    return;
  }
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
  if (mount_setattr(c->tmp_tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0 ||
      move_mount(c->tmp_tree, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) != 0)
    child_fail(c, "/tmp");
  if (c->tmp_program) place_tmp_program(c, path);
}

/* This launch's own /tmp and /proc on a pivoted copy of a prepared view.
 * What the view mounts in /tmp (the objects the preparing launch resolved,
 * with their flags and the refusals inside them) is held by descriptor,
 * covered by a fresh tmpfs, and moved onto it over the same scaffold: the
 * copy keeps no hidden second mount of anything, and nothing is unmounted
 * (which would wait for an RCU grace period). */
static void private_tmp_and_proc(const Child *c)
{
  const View *v = c->view;
  size_t root_len = cstrlen(v->root);
  int trees[VIEW_TMP_MOUNTS_MAX];
  int n = 0;
  for (guint i = 0; i < v->steps->len; i++) {
    const Step *s = &g_array_index(v->steps, Step, i);
    if (!s->tmp_top) continue;
    trees[n] = open_tree(AT_FDCWD, s->dst + root_len, OPEN_TREE_CLOEXEC);
    if (trees[n] < 0) child_fail(c, s->dst + root_len);
    n++;
  }
  place_tmp(c, "/tmp");
  for (guint i = 0; i < v->steps->len; i++) {
    const Step *s = &g_array_index(v->steps, Step, i);
    const char *path = s->dst + root_len;
    if (!s->per_launch && strncmp(path, "/tmp/", 5) == 0) replay_scaffold(c, s, path);
  }
  n = 0;
  for (guint i = 0; i < v->steps->len; i++) {
    const Step *s = &g_array_index(v->steps, Step, i);
    if (!s->tmp_top) continue;
    if (move_mount(trees[n], "", AT_FDCWD, s->dst + root_len, MOVE_MOUNT_F_EMPTY_PATH) != 0)
      child_fail(c, s->dst + root_len);
    close(trees[n++]);
  }
  mount_proc(c, "/proc");
}

/* Touches nothing of the box's mount (the tmpfs scaffold, mounts held by
 * descriptor, a new proc), so it runs while boxd registers the launch with
 * the mount; only the chdir into cwd waits for that. */
static void enter_prepared_view(const Child *c)
{
  /* setns puts root and cwd at the prepared view's root; unshare gives this
   * launch its own copy, so its /tmp and /proc stay its own. */
  if (setns(c->prepared_fd, CLONE_NEWNS) != 0 || unshare(CLONE_NEWNS) != 0)
    child_fail(c, "enter the prepared view");
  close(c->prepared_fd);
  private_tmp_and_proc(c);
}

static void build_view(const Child *c)
{
  const View *v = c->view;
  bool prepare = c->mode == VIEW_PREPARE;
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) child_fail(c, "make / private");
  if (mount("box-root", v->root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    child_fail(c, "tmpfs root");
  for (guint i = 0; i < v->steps->len; i++) {
    const Step *s = &g_array_index(v->steps, Step, i);
    if (prepare && s->per_launch) continue;
    switch (s->kind) {
    case STEP_MKDIR:
    case STEP_FILE:
    case STEP_SYMLINK: replay_scaffold(c, s, s->dst); break;
    case STEP_UNLINK:
      if (unlink(s->dst) != 0) child_fail(c, s->dst);
      break;
    case STEP_BIND: bind_exact(c, s); break;
    case STEP_TMPFS: {
      if (s->per_launch) { /* /tmp */
        place_tmp(c, s->dst);
        break;
      }
      char dst[32];
      int dfd = open_exact(s->dst);
      if (dfd < 0) child_fail(c, s->dst);
      fd_path(dst, dfd);
      if (mount(s->src, dst, "tmpfs", s->flags, s->data) != 0) child_fail(c, s->dst);
      close(dfd);
      break;
    }
    case STEP_PROC: mount_proc(c, s->dst); break;
    }
  }
  if (mount(NULL, v->root, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) !=
      0)
    child_fail(c, "read-only root");
  if (chdir(v->root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
      umount2(".", MNT_DETACH) != 0)
    child_fail(c, "pivot_root");
  if (prepare) {
    /* boxd opens this namespace while it is still pristine; its answer
     * (or its end) lets the launch take its own copy. */
    char ack;
    if (send(c->link_fd, "v", 1, MSG_NOSIGNAL) != 1 || read(c->link_fd, &ack, 1) != 1)
      child_fail(c, "hand over the prepared view");
    if (unshare(CLONE_NEWNS) != 0) child_fail(c, "copy the prepared view");
    private_tmp_and_proc(c);
  }
  if (chdir(c->cwd) != 0 && chdir("/") != 0) child_fail(c, "chdir");
}

static void loopback_up(const Child *c)
{
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) child_fail(c, "loopback");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  memcpy(ifr.ifr_name, "lo", 3);
  ifr.ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) child_fail(c, "loopback");
  close(s);
}

static struct rlimit workload_nofile;
static bool workload_nofile_set;

void box_tools_set_workload_fd_limit(const struct rlimit *limit)
{
  workload_nofile = *limit;
  workload_nofile_set = true;
}

/* Puts each descriptor at its number and closes everything else. */
static bool place_fds(const Child *c)
{
  int n = MAX(c->nfds, 3);
  int high[BOX_TOOLS_MAX_FDS];
  /* Copies above every number first, so no dup2 clobbers a source. */
  for (int i = 0; i < n; i++) {
    int src = i == 1 ? c->fd_out : i == 2 ? c->fd_err : c->fds[i];
    high[i] = src >= 0 ? fcntl(src, F_DUPFD_CLOEXEC, BOX_TOOLS_MAX_FDS)
              : i == 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC)
                       : -1;
    if (high[i] < 0 && i <= 2) return false;
  }
  int gap = -1; /* the first of a run of numbers left closed */
  for (int i = 0; i < n; i++) {
    if (high[i] >= 0 && dup2(high[i], i) < 0) return false;
    if (high[i] < 0 && gap < 0) gap = i;
    if (high[i] >= 0 && gap >= 0) {
      close_range((unsigned)gap, (unsigned)i - 1, 0);
      gap = -1;
    }
  }
  close_range((unsigned)(gap >= 0 ? gap : n), ~0U, 0);
  return true;
}

static void __attribute__((noreturn)) run_workload(const Child *c)
{
  if (!place_fds(c)) _exit(127);
  /* Dispositions came from PID 1 (all default); only the mask is left. */
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (workload_nofile_set)
    (void)setrlimit(RLIMIT_NOFILE, &workload_nofile); /* lowering needs no privilege */
  /* Capabilities, securebits, no_new_privs and the seccomp filter came
   * from PID 1. */
  execve(c->program, c->argv, c->envp);
  int e = errno;
  say(2, "strands-box: cannot run ", c->program, e == ENOENT ? ": not in the view" : NULL);
  _exit(e == ENOENT ? 127 : 126);
}

/* The observed filter when boxd records refusals and the kernel gives it a
 * listener (none beneath another one still open, a container runtime's,
 * nor on a kernel without them): else the plain one, and boxd is told why
 * at release.  PID 1 installs it itself, so Yama's ptrace scope, which only
 * a copy by pidfd_getfd would need, does not matter here. */
static void install_filter(Child *c)
{
  if (c->observed) {
    long fd =
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, c->observed);
    if (fd >= 0) {
      c->listener = (int)fd;
      return;
    }
    c->listener_errno = errno ? errno : EINVAL;
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, c->seccomp, 0, 0) != 0)
    child_fail(c, "install the seccomp filter");
}

static int workload_entry(void *data)
{
  run_workload(data);
}

/* The workload's stack in a sandbox forked from boxd (a user namespace, the
 * agent): that PID 1 has a copy of boxd's memory to itself. */
static char workload_stack[64 * 1024] __attribute__((aligned(64)));

/* ---- PID 1 once boxd has let it go ----
 *
 * A PID 1 cloned with CLONE_VM runs in boxd's memory with the thread
 * pointer of the boxd thread that cloned it.  Once it has told boxd
 * "released", boxd may free everything the Child named and that thread
 * runs on, so from then on PID 1 uses only its own stack and makes raw
 * system calls, which never write errno into that thread's TLS. */

#if defined(__x86_64__)
#define RAW_SYSCALLS 1
static long raw4(long n, long a, long b, long c, long d)
{
  long ret;
  register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
#define RAW_SYSCALLS 1
static long raw4(long n, long a, long b, long c, long d)
{
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
}
#else
#define RAW_SYSCALLS 0
#endif

static void __attribute__((noreturn)) reap(pid_t w, const sigset_t *waited)
{
  for (;;) {
#if RAW_SYSCALLS
    long sig = raw4(SYS_rt_sigtimedwait, (long)waited, 0, 0, _NSIG / 8);
#else
    long sig = sigwaitinfo(waited, NULL);
#endif
    if (sig != SIGCHLD) {
      if (sig > 0)
#if RAW_SYSCALLS
        raw4(SYS_kill, w, sig, 0, 0);
#else
        kill(w, (int)sig);
#endif
      continue;
    }
    for (;;) {
      int st = 0;
#if RAW_SYSCALLS
      long r = raw4(SYS_wait4, -1, (long)&st, WNOHANG | __WALL, 0);
#else
      long r = waitpid(-1, &st, WNOHANG | __WALL);
#endif
      if (r == w) {
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
#if RAW_SYSCALLS
        raw4(SYS_exit_group, code, 0, 0, 0);
#endif
        _exit(code);
      }
      if (r == 0) break;
      if (r < 0) {
#if RAW_SYSCALLS
        raw4(SYS_exit_group, 125, 0, 0, 0);
#endif
        _exit(125);
      }
    }
  }
}

/* "r" and the listener's errno (0: its descriptor rides with the "r"). */
static bool send_release(const Child *c)
{
  char said[2] = { 'r', (char)(c->listener >= 0 ? 0 : MIN(c->listener_errno, 127)) };
  struct iovec iov = { said, sizeof said };
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (c->listener >= 0) {
    memset(&u, 0, sizeof u);
    m.msg_control = u.buf;
    m.msg_controllen = sizeof u.buf;
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &c->listener, sizeof(int));
  }
  return sendmsg(c->link_fd, &m, MSG_NOSIGNAL) == (ssize_t)sizeof said;
}

static void __attribute__((noreturn)) child_main(Child *c)
{
  /* Holding no copy of boxd's end, every wait on the link ends with boxd:
   * one killed before PR_SET_PDEATHSIG below was set sends no signal, and
   * a PID 1 left waiting would hold boxd's descriptors (the box's lock
   * among them) for good. */
  close(c->boxd_end);
  /* boxd's handlers are boxd's code: a signal a sandboxed process sends to
   * PID 1 must not run one (with CLONE_VM, in boxd's memory).  With every
   * disposition default, PID 1 of a namespace ignores what comes from
   * inside it. */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP && (sig < 32 || sig >= SIGRTMIN))
      sigaction(sig, &dfl, NULL);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  setpgid(0, 0);
  if (c->mode != VIEW_REPLAY) detach_proc(c);
  if (c->join_netns_fd >= 0) {
    if (setns(c->join_netns_fd, CLONE_NEWNET) != 0)
      child_fail(c, "join the box's network namespace");
  }
  /* PID 1 installs the filter its workload inherits, once it needs no
   * call the filter refuses (mount, setns, unshare): entering a prepared
   * view, while boxd registers the launch; else once the view is built.
   * What PID 1 calls after that (chdir, prctl, capset, a plain clone,
   * send, the reaper's calls) the filter allows. */
  if (c->mode == VIEW_ENTER && !c->tmp_area) {
    enter_prepared_view(c);
    install_filter(c);
  }
  /* From here on the mount must be able to place this launch. */
  char go;
  if (read(c->link_fd, &go, 1) != 1) _exit(127);
  if (c->tmp_area) {
    /* Looked up in boxd's view (the launch has not left it yet), as a
     * request of this command's tool. */
    c->tmp_tree = open_tree(AT_FDCWD, c->tmp_area, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (c->tmp_tree < 0) child_fail(c, c->tmp_area);
    if (c->mode == VIEW_ENTER) {
      enter_prepared_view(c);
      install_filter(c);
    }
  }
  if (c->new_net) loopback_up(c);
  if (c->mode != VIEW_ENTER) {
    build_view(c);
    install_filter(c);
  } else if (chdir(c->cwd) != 0 && chdir("/") != 0) {
    child_fail(c, "chdir");
  }
  /* What PID 1 forwards and waits for is blocked before the workload
   * exists, so no SIGCHLD can come too early. */
  sigset_t waited;
  sigemptyset(&waited);
  const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset(&waited, forwarded[i]);
  sigaddset(&waited, SIGCHLD);
  sigprocmask(SIG_SETMASK, &waited, NULL);
  /* The view is built: PID 1 needs no authority any more, and the workload
   * inherits what is left (nothing), so it is dropped once, here. */
  if (!drop_authority(c->last_cap)) {
    say(c->fd_err, REAPER_FAIL, "cannot drop capabilities", NULL);
    _exit(127);
  }
  /* vfork-like: no copy of anything for a process that only drops its
   * authority and execs; PID 1 resumes once it has. */
  pid_t w = clone(workload_entry, c->workload_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)c);
  if (w < 0) {
    say(c->fd_err, "strands-box: namespace reaper could not fork the workload", NULL, NULL);
    _exit(126);
  }
  /* A PID 1 forked from boxd holds a copy of its memory: from here on it
   * touches nothing the mount must place, so it can refuse /proc/1/mem to
   * the sandbox (one sharing boxd's memory already does, with boxd). */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  /* PID 1: release boxd, forward, reap, end with the workload (the kernel
   * then ends everything else in the namespace). */
  if (!send_release(c)) _exit(127);
#if RAW_SYSCALLS
  raw4(SYS_close_range, 0, ~0U, 0, 0);
#else
  close_range(0, ~0U, 0);
#endif
  reap(w, &waited);
}

static int child_entry(void *data)
{
  child_main(data);
}

/* ---- the parent's half ---- */

/* ---- plans, kept per (table, program) while what they read holds ---- */

/* A prepared view lives no longer than the mount's entry timeout (1 s):
 * its binds hold the names of the mount's /pass tree it looked up, and a
 * name the kernel has since found stale (a rename outside the mount) must
 * not outlive the time in which the kernel itself would look it up again. */
#define PREPARED_MAX_AGE G_USEC_PER_SEC

typedef struct {
  gint ref;
  View view;
  bool preparable;
  int prepared; /* its prepared mount namespace, or -1; plans_lock */
  gint64 prepared_at;
  guint64 prepared_epoch; /* the views_epoch of the launch that built it */
} Plan;

static GMutex plans_lock;
static GHashTable *plans; /* key -> Plan* */

static void plan_unref(gpointer data)
{
  Plan *p = data;
  if (p && g_atomic_int_dec_and_test(&p->ref)) {
    if (p->prepared >= 0) close(p->prepared);
    tools_view_clear(&p->view);
    g_free(p);
  }
}

/* A descriptor of the plan's prepared view for one launch (its own, so a
 * concurrent replacement cannot close it under the clone), or -1.  Not
 * after the mount's epoch moved: the kernel may have detached binds of the
 * view (their mount points, or what the /tmp scaffold moves them onto),
 * and the launch would miss them or fail to place them. */
static int prepared_view(Plan *p, guint64 epoch)
{
  int fd = -1;
  g_mutex_lock(&plans_lock);
  if (p->prepared >= 0 && p->prepared_epoch == epoch &&
      g_get_monotonic_time() - p->prepared_at < PREPARED_MAX_AGE)
    fd = fcntl(p->prepared, F_DUPFD_CLOEXEC, 3);
  g_mutex_unlock(&plans_lock);
  return fd;
}

static void keep_prepared_view(Plan *p, int fd, guint64 epoch)
{
  g_mutex_lock(&plans_lock);
  int old = p->prepared;
  p->prepared = fd;
  p->prepared_at = g_get_monotonic_time();
  p->prepared_epoch = epoch;
  g_mutex_unlock(&plans_lock);
  if (old >= 0) close(old);
}

/* The first launch of a plan has pivoted into the view it built, before
 * its own /tmp and /proc: keep that namespace, then let it go on. */
static bool link_wait(int fd, char want);

static void take_prepared_view(Plan *p, pid_t pid, int handoff, guint64 epoch)
{
  if (link_wait(handoff, 'v')) {
    g_autofree char *ns = g_strdup_printf("/proc/%d/ns/mnt", (int)pid);
    int fd = open(ns, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) keep_prepared_view(p, fd, epoch);
    if (send(handoff, "k", 1, MSG_NOSIGNAL) != 1) {
      /* the launch has ended: it reports its own failure */
    }
  }
}

void box_tools_release_views(void)
{
  tools_plans_forget();
  tools_release_held();
}

void tools_plans_forget(void)
{
  g_mutex_lock(&plans_lock);
  if (plans) g_hash_table_remove_all(plans);
  g_mutex_unlock(&plans_lock);
}

/* Prepared views nobody entered in time: each pins binds of the mount
 * (and the names they looked up), so they go at most a second late.
 * plans_lock held. */
static void plans_sweep(void)
{
  static gint64 last;
  gint64 now = g_get_monotonic_time();
  if (!plans || now - last < PREPARED_MAX_AGE) return;
  last = now;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, plans);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    Plan *p = value;
    if (p->prepared >= 0 && now - p->prepared_at >= PREPARED_MAX_AGE) {
      close(p->prepared);
      p->prepared = -1;
    }
  }
}

static Plan *plan_for(const BoxToolLaunch *l, GError **error)
{
  /* The agent starts once: its plan is not kept. */
  g_autofree char *key =
    l->is_agent ? NULL
                : g_strdup_printf("%p\n%p\n%s\n%s\n%s", (const void *)l->table,
                                  (const void *)l->roots, l->program_path ? l->program_path : "",
                                  l->staging_dir, l->mountpoint ? l->mountpoint : "");
  Plan *p = NULL;
  if (key) {
    g_mutex_lock(&plans_lock);
    if (!plans) plans = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, plan_unref);
    plans_sweep();
    p = g_hash_table_lookup(plans, key);
    if (p) g_atomic_int_inc(&p->ref);
    g_mutex_unlock(&plans_lock);
    if (p && tools_view_still_valid(&p->view)) return p;
    plan_unref(p);
  }
  p = g_new0(Plan, 1);
  p->ref = 1;
  p->prepared = -1;
  tools_view_init(&p->view, l->staging_dir);
  if (!tools_view_plan(&p->view, l, error)) {
    plan_unref(p);
    return NULL;
  }
  p->preparable = key && tools_view_preparable(&p->view);
  if (key) {
    g_atomic_int_inc(&p->ref);
    g_mutex_lock(&plans_lock);
    g_hash_table_replace(plans, g_steal_pointer(&key), p);
    g_mutex_unlock(&plans_lock);
  }
  return p;
}

/* ---- stacks for a PID 1 that shares boxd's memory ----
 *
 * Forking boxd copies its page tables and leaves every page it writes
 * afterwards to a copy-on-write fault, with a TLB shootdown across its
 * threads: that was most of what a launch cost boxd.  So, where PID 1 may
 * share boxd's memory (boxd is root; raw system calls exist), it is cloned
 * with CLONE_VM onto a stack of its own, PID 1's above the workload's.
 * A slot is reused once its launch is done with it (busy: the workload has
 * exec'd, or the whole namespace is gone) and the kernel has cleared its
 * tid (CLONE_CHILD_CLEARTID: PID 1 has left boxd's memory). */

#define SLOTS 256
#define SLOT_HALF (128 * 1024)

typedef struct {
  pid_t tid;  /* written 0 by the kernel when PID 1 exits */
  bool busy;  /* slots_lock */
  char *base; /* 2 * SLOT_HALF, lowest page of each half a guard */
} Slot;

static Slot slots[SLOTS];
static GMutex slots_lock;

static Slot *slot_take(void)
{
  Slot *got = NULL;
  g_mutex_lock(&slots_lock);
  for (int i = 0; i < SLOTS && !got; i++) {
    Slot *s = &slots[i];
    if (s->busy || __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE) != 0) continue;
    if (!s->base) {
      void *m = mmap(NULL, 2 * SLOT_HALF, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
      if (m == MAP_FAILED) break;
      s->base = m;
      if (mprotect(s->base, 4096, PROT_NONE) != 0 ||
          mprotect(s->base + SLOT_HALF, 4096, PROT_NONE) != 0)
        break; /* kept, without guards it is not used */
    }
    s->tid = -1;
    s->busy = true;
    got = s;
  }
  g_mutex_unlock(&slots_lock);
  return got;
}

/* never_ran: the clone failed, nothing will clear tid. */
static void slot_give_back(Slot *s, bool never_ran)
{
  g_mutex_lock(&slots_lock);
  if (never_ran) __atomic_store_n(&s->tid, 0, __ATOMIC_RELEASE);
  s->busy = false;
  g_mutex_unlock(&slots_lock);
}

/* PID 1 in boxd's memory: nothing in the sandbox may read or write it
 * through /proc/1/mem, which a non-dumpable process refuses to callers
 * without CAP_SYS_PTRACE.  Set once for boxd's whole life. */
static gpointer undumpable(gpointer data)
{
  (void)data;
  return GINT_TO_POINTER(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0);
}

/* ---- boxd's command line, which PID 1 shows as its own ----
 *
 * PID 1 runs in boxd's memory (or a copy of it), so /proc/1/cmdline in the
 * sandbox reads boxd's arguments: `box run --config <path>/box.toml`.  So
 * before the first launch boxd's arguments are overwritten where the kernel
 * reads them (its stack, between arg_start and arg_end) with a neutral
 * text; `ps` shows boxd so too.  boxd has parsed them into copies by then
 * (GOption), and moving the map instead (PR_SET_MM) needs
 * CAP_SYS_RESOURCE, which boxd may lack. */
static gpointer hide_args(gpointer data)
{
  (void)data;
  /* fields 48 and 49 of /proc/self/stat, counted after the ")" of comm */
  g_autofree char *stat = NULL;
  if (!g_file_get_contents("/proc/self/stat", &stat, NULL, NULL) || !strrchr(stat, ')'))
    return NULL;
  g_auto(GStrv) f = g_strsplit(strrchr(stat, ')') + 2, " ", -1);
  if (g_strv_length(f) < 47) return NULL;
  char *start = (char *)(uintptr_t)g_ascii_strtoull(f[45], NULL, 10);
  char *end = (char *)(uintptr_t)g_ascii_strtoull(f[46], NULL, 10);
  if (!start || end <= start) return NULL;
  size_t len = (size_t)(end - start);
  memset(start, 0, len);
  memcpy(start, NEUTRAL_ARGS, MIN(len - 1, sizeof NEUTRAL_ARGS - 1));
  return GINT_TO_POINTER(1);
}

/* Reads from the sandbox's link until want or its end (every copy of the
 * child's end closed: that PID 1 no longer runs in boxd's memory).  A
 * descriptor passed with a byte goes to *passed (else it is closed). */
static bool link_wait_passed(int fd, char want, int *passed)
{
  for (;;) {
    char b;
    int got = -1;
    ssize_t n = box_tools_recv_byte_fd(fd, &b, &got, MSG_CMSG_CLOEXEC);
    if (got >= 0 && passed && *passed < 0)
      *passed = got;
    else if (got >= 0)
      close(got);
    if (n == 1 && b == want) return true;
    if (n <= 0) return false;
  }
}

ssize_t box_tools_recv_byte_fd(int sock, char *byte, int *fd, int flags)
{
  int n;
  ssize_t got = box_fdpass_recv(sock, byte, 1, flags, fd, 1, &n, NULL);
  if (n == 0) *fd = -1;
  return got;
}

static bool link_wait(int fd, char want)
{
  return link_wait_passed(fd, want, NULL);
}

static BoxToolRefusalsFn refusals_take;
static void *refusals_data;

void box_tools_set_refusals(BoxToolRefusalsFn take, void *data)
{
  refusals_data = data;
  __atomic_store_n(&refusals_take, take, __ATOMIC_RELEASE);
}

/* The release ("r", then the listener's errno byte) and what rides with it:
 * the listener goes to boxd's refusal records, or why there is none. */
static bool link_released(int fd, BoxToolRefusalsFn take)
{
  int listener = -1;
  bool released = link_wait_passed(fd, 'r', &listener);
  char err = 0;
  if (released && read(fd, &err, 1) != 1) err = 0;
  if (take && (listener >= 0 || err))
    take(refusals_data, listener, err);
  else if (listener >= 0)
    close(listener);
  return released;
}

/* ---- one network namespace for contained tools ---- */

static int shared_netns = -1;

void box_tools_set_netns(int netns_fd)
{
  __atomic_store_n(&shared_netns, netns_fd, __ATOMIC_RELEASE);
}

/* The scaffold the launch lays in its /tmp, made first by the caller in the
 * command's RAM /tmp, where it stays out of the Shell's sight. */
static bool tmp_points(const BoxToolLaunch *l, const View *v, GError **error)
{
  if (!l->tmp_area || !l->tmp_point) return true;
  size_t root_len = strlen(v->root);
  for (guint i = 0; i < v->steps->len; i++) {
    const Step *s = &g_array_index(v->steps, Step, i);
    if (s->per_launch || (s->kind != STEP_MKDIR && s->kind != STEP_FILE)) continue;
    const char *path = s->dst + root_len;
    if (strncmp(path, "/tmp/", 5) != 0) continue;
    if (!l->tmp_point(l->tmp_point_data, path, s->kind == STEP_MKDIR)) {
      g_set_error(error, BOX_TOOLS_ERROR, 1, "containment setup failed: no mount point at %s",
                  path);
      return false;
    }
  }
  return true;
}

pid_t box_tools_launch(const BoxToolLaunch *l, int fd_out, int fd_err, BoxToolAttachFn attach,
                       void *attach_data, GError **error)
{
  const BoxToolContext *ctx = tools_context();
  const void *seccomp = tools_seccomp_program(error);
  if (!seccomp) return -1;
  BoxToolRefusalsFn take = __atomic_load_n(&refusals_take, __ATOMIC_ACQUIRE);
  static GOnce args_once = G_ONCE_INIT;
  if (!g_once(&args_once, hide_args, NULL)) {
    g_set_error(error, BOX_TOOLS_ERROR, 1,
                "containment setup failed: boxd's command line could not be hidden");
    return -1;
  }
  Plan *plan = plan_for(l, error);
  if (!plan) {
    g_prefix_error(error, "containment config failed: ");
    return -1;
  }
  const View *view = &plan->view;
  g_autofree char *reach = NULL;
  g_auto(GStrv) reach_paths = NULL;
  if (!tmp_points(l, view, error)) return -1;
  const char *cwd = l->cwd && tools_view_contains(view, l->cwd) ? l->cwd
                    : l->table->workspace && tools_view_contains(view, l->table->workspace)
                      ? l->table->workspace
                      : "/";
  char **envp =
    box_tools_compose_env(l->table, l->is_agent, l->operator_home, l->operator_path, cwd);
  envp = tools_env_merge(envp, l->extra_env);
  bool contained = !l->table->host_network;
  /* A contained tool joins the box's route-less namespace, whose only
   * listener is the gateway's relay (the one the Shell workers use); the
   * agent, and a box without that namespace, get a namespace of their own. */
  int join_fd = contained && !l->is_agent ? __atomic_load_n(&shared_netns, __ATOMIC_ACQUIRE) : -1;
  bool new_net = contained && join_fd < 0;
  bool new_user = geteuid() != 0;
  /* A user namespace owns the mounts made in it, so a view prepared in one
   * launch's could not be entered by the next: those launches replay. */
  ViewMode mode = VIEW_REPLAY;
  int prepared = -1;
  if (plan->preparable && !new_user) {
    prepared = prepared_view(plan, l->views_epoch);
    mode = prepared >= 0 ? VIEW_ENTER : VIEW_PREPARE;
  }
  unsigned long flags = CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
  if (mode != VIEW_ENTER) flags |= CLONE_NEWNS;
  if (new_net) flags |= CLONE_NEWNET;
  if (new_user) flags |= CLONE_NEWUSER;
  int link[2] = { -1, -1 };
  pid_t pid = -1;
  int home_netns = -1;
  Slot *slot = NULL;
  int pidfd = -1;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link) != 0) {
    g_set_error(error, BOX_TOOLS_ERROR, 1, "socketpair: %s", g_strerror(errno));
    goto out;
  }
  if (join_fd >= 0 && new_user) {
    /* Joined from inside a new user namespace the namespace could not be
     * (it is owned outside it): the child is born in it instead.  setns
     * moves this thread only; it comes back right after the clone. */
    home_netns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (home_netns < 0 || setns(join_fd, CLONE_NEWNET) != 0) {
      g_set_error(error, BOX_TOOLS_ERROR, 1, "containment setup failed during network: %s",
                  g_strerror(errno));
      goto out;
    }
  }
  static GOnce undumpable_once = G_ONCE_INIT;
  if (RAW_SYSCALLS && !new_user && GPOINTER_TO_INT(g_once(&undumpable_once, undumpable, NULL)))
    slot = slot_take();
  Child c = { view,
              l->program_path,
              l->argv,
              envp,
              cwd,
              seccomp,
              last_cap(),
              new_net,
              mode,
              prepared,
              link[1],
              link[0],
              join_fd >= 0 && !new_user ? join_fd : -1,
              slot ? slot->base + SLOT_HALF : workload_stack + sizeof workload_stack,
              fd_out,
              fd_err,
              { 0 },
              MIN(l->nfds, BOX_TOOLS_MAX_FDS),
              l->tmp_area,
              -1,
              -1,
              l->tmp_area ? l->tmp_program : NULL,
              take ? tools_seccomp_observed(NULL) : NULL,
              -1,
              0 };
  for (int i = 0; i < BOX_TOOLS_MAX_FDS; i++) c.fds[i] = l->fds && i < c.nfds ? l->fds[i] : -1;
  if (!l->fds && l->is_agent) c.fds[0] = l->fd_in;
  if (slot) {
    pid = clone(child_entry, slot->base + 2 * SLOT_HALF,
                (int)(flags | CLONE_VM | CLONE_CHILD_CLEARTID | CLONE_PIDFD), &c, &pidfd, NULL,
                &slot->tid);
    if (pid < 0) {
      slot_give_back(slot, true);
      slot = NULL;
    }
  } else {
    pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
    if (pid == 0) child_main(&c);
  }
  int clone_errno = errno;
  close(link[1]);
  link[1] = -1;
  if (home_netns >= 0 && setns(home_netns, CLONE_NEWNET) != 0)
    g_error("box: cannot return a launcher thread to its network namespace: %s", g_strerror(errno));
  if (pid < 0) {
    g_set_error(error, BOX_TOOLS_ERROR, 1, "containment setup failed during namespaces: %s",
                g_strerror(clone_errno));
    goto out;
  }
  bool ok = true;
  if (new_user) ok = tools_map_user(pid, error);
  if (attach) reach_paths = tools_view_reach(view, &reach);
  if (ok && attach && !attach(attach_data, pid, (const char *const *)reach_paths, reach)) {
    g_set_error(error, BOX_TOOLS_ERROR, 1, "the mount could not place the sandbox");
    ok = false;
  }
  if (ok && new_net && ctx->net_setup && !ctx->net_setup(ctx->net_setup_data, pid)) {
    g_set_error(error, BOX_TOOLS_ERROR, 1,
                "the containment trampoline sent no listening descriptor, so the workload has "
                "no route to the egress gateway");
    ok = false;
  }
  if (ok && send(link[0], "g", 1, MSG_NOSIGNAL) != 1) {
    /* the sandbox's first process ended before it was told to go: it
     * could not build its view (a path of the table vanished, say) */
    g_set_error(error, BOX_TOOLS_ERROR, 1, "containment setup failed during the view: %s",
                errno == EPIPE ? "the sandbox ended while it was being built" : g_strerror(errno));
    ok = false;
  }
  if (!ok)
    kill(pid, SIGKILL); /* boxd's reaper collects it */
  else if (mode == VIEW_PREPARE)
    take_prepared_view(plan, pid, link[0], l->views_epoch);
  /* The child reads c, envp and the plan until its workload has exec'd.
   * One sharing boxd's memory that ends before saying so may leave a
   * workload that still does for a moment: wait until its whole namespace
   * is gone (PID 1 becomes a zombie only once every other process in it
   * has ended). */
  bool released = link_released(link[0], c.observed ? take : NULL);
  if (!released && pidfd >= 0) {
    struct pollfd p = { .fd = pidfd, .events = POLLIN };
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
      ;
  }
  if (ok && released) tools_hold_mount_namespace(pid, &pidfd);
  if (!ok) pid = -1;
out:
  if (slot) slot_give_back(slot, false);
  if (pidfd >= 0) close(pidfd);
  for (int i = 0; i < 2; i++)
    if (link[i] >= 0) close(link[i]);
  if (prepared >= 0) close(prepared);
  if (home_netns >= 0) close(home_netns);
  g_strfreev(envp);
  plan_unref(plan);
  return pid;
}
