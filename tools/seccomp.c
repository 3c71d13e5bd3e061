/* seccomp.c — the filters contained processes (spec §5.8) and Shell
 * workers (DESIGN.md, Trust boundaries) run under.
 *
 * In the spirit of §5.8 rather than its letter: the calls a sandbox uses to
 * leave or widen itself, or to reach the kernel's riskiest surface, fail
 * with EPERM; everything a build or an interpreter needs stays.  Compiled
 * once with libseccomp into a BPF program the launcher installs with one
 * prctl in the child.
 *
 * A Shell worker runs only our code (the interpreter, Lua, libjq, libcurl),
 * so it gets an allow-list of its own instead, which never allows what the
 * contained filter refuses (memfd_create aside): whatever a bug in it could
 * be made to call beyond the list fails with EPERM, which a builtin reports
 * as an error rather than the worker dying for it.
 */
#include "tools/tools-private.h"
#include "tools/filter.h"

#include <errno.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

G_DEFINE_QUARK(box - tools - error - quark, box_tools_error)

static const char *const denied[] = {
  /* other processes */
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "pidfd_getfd",
  "kcmp",
  /* the view itself */
  "mount",
  "umount2",
  "pivot_root",
  "chroot",
  "setns",
  "unshare",
  "fsopen",
  "fsconfig",
  "fsmount",
  "move_mount",
  "open_tree",
  "fspick",
  "mount_setattr",
  "open_by_handle_at",
  "name_to_handle_at",
  /* the machine */
  "reboot",
  "kexec_load",
  "kexec_file_load",
  "init_module",
  "finit_module",
  "delete_module",
  "swapon",
  "swapoff",
  "acct",
  "quotactl",
  "quotactl_fd",
  "settimeofday",
  "clock_settime",
  "clock_adjtime",
  "adjtimex",
  "syslog",
  "vhangup",
  "iopl",
  "ioperm",
  "sethostname",
  "setdomainname",
  "lookup_dcookie",
  "uselib",
  "nfsservctl",
  "_sysctl",
  /* kernel surface */
  "bpf",
  "perf_event_open",
  "keyctl",
  "add_key",
  "request_key",
  "userfaultfd",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "memfd_secret",
  /* §5.8: an anonymous file is a way to run code that is in no view */
  "memfd_create",
  NULL,
};

/* The Shell worker's allow-list: what the interpreter, its builtins, Lua,
 * libjq and libcurl (to the gateway's relay, over AF_INET on the workers'
 * loopback) call once the worker is placed.  clone, unshare, socket,
 * socketpair and ioctl are allowed by argument (compile_worker); a name
 * the contained filter refuses is never allowed (memfd_create aside). */
static const char *const worker_allowed[] = {
  /* descriptors and files (all of them reach the mount) */
  "read",
  "write",
  "readv",
  "writev",
  "pread64",
  "pwrite64",
  "preadv",
  "pwritev",
  "preadv2",
  "pwritev2",
  "open",
  "openat",
  "openat2",
  "creat",
  "close",
  "close_range",
  "lseek",
  "dup",
  "dup2",
  "dup3",
  "fcntl",
  "flock",
  "pipe",
  "pipe2",
  "stat",
  "fstat",
  "lstat",
  "newfstatat",
  "statx",
  "statfs",
  "fstatfs",
  "access",
  "faccessat",
  "faccessat2",
  "readlink",
  "readlinkat",
  "getdents",
  "getdents64",
  "getcwd",
  "chdir",
  "fchdir",
  "mkdir",
  "mkdirat",
  "rmdir",
  "unlink",
  "unlinkat",
  "rename",
  "renameat",
  "renameat2",
  "link",
  "linkat",
  "symlink",
  "symlinkat",
  "mknod",
  "mknodat",
  "chmod",
  "fchmod",
  "fchmodat",
  "fchmodat2",
  "chown",
  "fchown",
  "lchown",
  "fchownat",
  "umask",
  "truncate",
  "ftruncate",
  "fallocate",
  "fadvise64",
  "utime",
  "utimes",
  "futimesat",
  "utimensat",
  "fsync",
  "fdatasync",
  "sync",
  "syncfs",
  "sync_file_range",
  "copy_file_range",
  "sendfile",
  "splice",
  "tee",
  "getxattr",
  "lgetxattr",
  "fgetxattr",
  "listxattr",
  "llistxattr",
  "flistxattr",
  "setxattr",
  "lsetxattr",
  "fsetxattr",
  "removexattr",
  "lremovexattr",
  "fremovexattr",
  /* waiting */
  "poll",
  "ppoll",
  "select",
  "pselect6",
  "epoll_create",
  "epoll_create1",
  "epoll_ctl",
  "epoll_wait",
  "epoll_pwait",
  "epoll_pwait2",
  "eventfd",
  "eventfd2",
  "timerfd_create",
  "timerfd_settime",
  "timerfd_gettime",
  "signalfd",
  "signalfd4",
  "inotify_init",
  "inotify_init1",
  "inotify_add_watch",
  "inotify_rm_watch",
  "futex",
  "futex_waitv",
  "nanosleep",
  "clock_nanosleep",
  "sched_yield",
  /* memory */
  "brk",
  "mmap",
  "munmap",
  "mprotect",
  "mremap",
  "madvise",
  "msync",
  "mincore",
  /* its own processes (its own PID namespace: nothing else is named) */
  "fork",
  "vfork",
  "wait4",
  "waitid",
  "exit",
  "exit_group",
  "kill",
  "tkill",
  "tgkill",
  "pidfd_open",
  "pidfd_send_signal",
  "rt_sigaction",
  "rt_sigprocmask",
  "rt_sigreturn",
  "rt_sigpending",
  "rt_sigtimedwait",
  "rt_sigsuspend",
  "rt_sigqueueinfo",
  "rt_tgsigqueueinfo",
  "sigaltstack",
  "restart_syscall",
  "set_tid_address",
  "set_robust_list",
  "get_robust_list",
  "rseq",
  "arch_prctl",
  "prctl",
  "setpgid",
  "getpgid",
  "getpgrp",
  "setsid",
  "getsid",
  "getpriority",
  "setpriority",
  "sched_getaffinity",
  "sched_getparam",
  "sched_getscheduler",
  "sched_get_priority_max",
  "sched_get_priority_min",
  "getrlimit",
  "setrlimit",
  "prlimit64",
  "getrusage",
  "times",
  "alarm",
  "setitimer",
  "getitimer",
  "timer_create",
  "timer_settime",
  "timer_gettime",
  "timer_getoverrun",
  "timer_delete",
  /* who and when */
  "getpid",
  "getppid",
  "gettid",
  "getuid",
  "geteuid",
  "getgid",
  "getegid",
  "getresuid",
  "getresgid",
  "getgroups",
  "capget",
  "uname",
  "sysinfo",
  "getcpu",
  "getrandom",
  "time",
  "gettimeofday",
  "clock_gettime",
  "clock_getres",
  /* sockets: the gateway's relay and the control channel (families: above) */
  "connect",
  "bind",
  "listen",
  "accept",
  "accept4",
  "getsockname",
  "getpeername",
  "sendto",
  "recvfrom",
  "sendmsg",
  "recvmsg",
  "sendmmsg",
  "recvmmsg",
  "setsockopt",
  "getsockopt",
  "shutdown",
  NULL,
};

/* (CLONE_NEWTIME is a bit of clone's exit signal: unshare and clone3 only.) */
#define CLONE_NS_FLAGS                                                                             \
  (CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC |       \
   CLONE_NEWCGROUP)

static struct sock_fprog *export(scmp_filter_ctx c)
{
  struct sock_fprog *prog = NULL;
  int fd = memfd_create("box-seccomp", MFD_CLOEXEC);
  if (fd >= 0 && seccomp_export_bpf(c, fd) == 0) {
    off_t len = lseek(fd, 0, SEEK_END);
    if (len > 0 && len % (off_t)sizeof(struct sock_filter) == 0) {
      prog = g_new0(struct sock_fprog, 1);
      prog->len = (unsigned short)(len / (off_t)sizeof(struct sock_filter));
      prog->filter = g_malloc((size_t)len);
      if (pread(fd, prog->filter, (size_t)len, 0) != len) {
        g_free(prog->filter);
        g_clear_pointer(&prog, g_free);
      }
    }
  }
  if (fd >= 0) close(fd);
  return prog;
}

/* Adds one rule per name that this architecture knows, all with action. */
static int add_names(scmp_filter_ctx c, const char *const *names, uint32_t action)
{
  int rc = 0;
  for (int i = 0; names[i] && rc == 0; i++) {
    int nr = seccomp_syscall_resolve_name(names[i]);
    if (nr == __NR_SCMP_ERROR) continue; /* not on this architecture */
    rc = seccomp_rule_add(c, action, nr, 0);
  }
  return rc;
}

/* refuse: EPERM for the plain filter, a notification for the observed one
 * (boxd's listener answers EPERM and records the call, §5.8). */
static struct sock_fprog *compile_contained_with(uint32_t refuse, GError **error)
{
  scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
  if (!c) return NULL;
  /* A binary tree over the syscall numbers instead of a list: the kernel
   * evaluates the filter for every syscall number when it installs it (its
   * allow cache), so a list cost each launch about 140 us. */
  int rc = seccomp_attr_set(c, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  if (rc == 0) rc = add_names(c, denied, refuse);
  /* New namespaces: clone with a CLONE_NEW* flag; clone3 cannot be
   * inspected, so it reports ENOSYS and libc falls back to clone. */
  const scmp_datum_t ns_flags[] = { CLONE_NEWNS,  CLONE_NEWUSER, CLONE_NEWPID,   CLONE_NEWNET,
                                    CLONE_NEWUTS, CLONE_NEWIPC,  CLONE_NEWCGROUP };
  for (size_t i = 0; i < G_N_ELEMENTS(ns_flags) && rc == 0; i++)
    rc = seccomp_rule_add(c, refuse, SCMP_SYS(clone), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
  if (rc == 0) rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  /* Sockets: AF_UNIX and AF_INET only; pairs: AF_UNIX only. */
  if (rc == 0)
    rc = seccomp_rule_add(c, refuse, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_GE, AF_INET + 1, 0));
  if (rc == 0)
    rc = seccomp_rule_add(c, refuse, SCMP_SYS(socketpair), 1, SCMP_A0(SCMP_CMP_GE, AF_UNIX + 1, 0));
  /* Typing into the operator's terminal. */
  const scmp_datum_t ioctls[] = { TIOCSTI, TIOCLINUX };
  for (size_t i = 0; i < G_N_ELEMENTS(ioctls) && rc == 0; i++)
    rc = seccomp_rule_add(c, refuse, SCMP_SYS(ioctl), 1,
                          SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ioctls[i]));
  /* Running a descriptor rather than a path in the view. */
  if (rc == 0)
    rc = seccomp_rule_add(c, refuse, SCMP_SYS(execveat), 1,
                          SCMP_A4(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
  struct sock_fprog *prog = rc == 0 ? export(c) : NULL;
  seccomp_release(c);
  if (!prog)
    g_set_error(error, BOX_TOOLS_ERROR, 1, "the seccomp filter could not be compiled (%d)", rc);
  return prog;
}

static gpointer compile_contained(gpointer data)
{
  return compile_contained_with(SCMP_ACT_ERRNO(EPERM), data);
}

static gpointer compile_observed(gpointer data)
{
  return compile_contained_with(SCMP_ACT_NOTIFY, data);
}

/* The values a refusal's arguments are spelled with. */
typedef struct {
  unsigned long value;
  const char *name;
} Named;

static const Named families[] = {
  { AF_UNIX, "AF_UNIX" },
  { AF_INET, "AF_INET" },
  { AF_INET6, "AF_INET6" },
  { AF_NETLINK, "AF_NETLINK" },
  { AF_PACKET, "AF_PACKET" },
  { AF_KEY, "AF_KEY" },
  { AF_BLUETOOTH, "AF_BLUETOOTH" },
  { AF_ALG, "AF_ALG" },
  { AF_VSOCK, "AF_VSOCK" },
  { AF_CAN, "AF_CAN" },
  { AF_TIPC, "AF_TIPC" },
  { AF_RDS, "AF_RDS" },
  { AF_XDP, "AF_XDP" },
  { AF_APPLETALK, "AF_APPLETALK" },
  { AF_AX25, "AF_AX25" },
  { AF_X25, "AF_X25" },
  { AF_PPPOX, "AF_PPPOX" },
  { AF_LLC, "AF_LLC" },
};
static const Named socket_types[] = {
  { SOCK_STREAM, "SOCK_STREAM" }, { SOCK_DGRAM, "SOCK_DGRAM" },         { SOCK_RAW, "SOCK_RAW" },
  { SOCK_RDM, "SOCK_RDM" },       { SOCK_SEQPACKET, "SOCK_SEQPACKET" }, { SOCK_DCCP, "SOCK_DCCP" },
  { SOCK_PACKET, "SOCK_PACKET" },
};
static const Named namespaces[] = {
  { CLONE_NEWNS, "CLONE_NEWNS" },         { CLONE_NEWUSER, "CLONE_NEWUSER" },
  { CLONE_NEWPID, "CLONE_NEWPID" },       { CLONE_NEWNET, "CLONE_NEWNET" },
  { CLONE_NEWUTS, "CLONE_NEWUTS" },       { CLONE_NEWIPC, "CLONE_NEWIPC" },
  { CLONE_NEWCGROUP, "CLONE_NEWCGROUP" },
};
static const Named ioctl_requests[] = { { TIOCSTI, "TIOCSTI" }, { TIOCLINUX, "TIOCLINUX" } };

static void named(GString *out, const char *key, const Named *t, size_t n, unsigned long v)
{
  g_string_append_printf(out, "%s%s=", out->len ? " " : "", key);
  for (size_t i = 0; i < n; i++)
    if (t[i].value == v) {
      g_string_append(out, t[i].name);
      return;
    }
  g_string_append_printf(out, "%lu", v);
}

char *box_seccomp_describe(uint32_t arch, int nr, const uint64_t args[6], char **arguments)
{
  char *resolved = seccomp_syscall_resolve_num_arch(arch, nr);
  char *name = resolved ? g_strdup(resolved) : g_strdup_printf("syscall_%d", nr);
  free(resolved);
  /* the calls an argument rule of compile_contained_with refuses */
  GString *said = g_string_new(NULL);
  if (strcmp(name, "socket") == 0 || strcmp(name, "socketpair") == 0) {
    named(said, "family", families, G_N_ELEMENTS(families), (unsigned long)args[0]);
    named(said, "type", socket_types, G_N_ELEMENTS(socket_types), (unsigned long)args[1] & 0xf);
  } else if (strcmp(name, "clone") == 0) {
    for (size_t i = 0; i < G_N_ELEMENTS(namespaces); i++)
      if (args[0] & namespaces[i].value)
        g_string_append_printf(said, "%s%s", said->len ? "|" : "flags=", namespaces[i].name);
  } else if (strcmp(name, "ioctl") == 0) {
    named(said, "request", ioctl_requests, G_N_ELEMENTS(ioctl_requests),
          (unsigned long)(args[1] & 0xffffffffu));
  } else if (strcmp(name, "execveat") == 0) {
    g_string_append(said, "flags=AT_EMPTY_PATH");
  }
  *arguments = g_string_free(said, !said->len);
  return name;
}

/* Whether name is in the contained filter's refusals, which no allow-list
 * may undo. */
static bool refused(const char *name)
{
  for (int i = 0; denied[i]; i++)
    if (strcmp(denied[i], name) == 0) return true;
  return false;
}

/* What placing a worker calls, beyond the worker's list: the zygote's
 * filter adds these, and a worker keeps them once placed but no longer
 * holds the capability any of them needs (all refuse with EPERM). */
static const char *const placement[] = {
  "mount",  "umount2",  "pivot_root", "setns",         "open_tree", "move_mount",
  "fsopen", "fsconfig", "fsmount",    "mount_setattr", "capset",    NULL,
};

static int add_worker_rules(scmp_filter_ctx c, bool zygote)
{
  int rc = seccomp_attr_set(c, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  for (int i = 0; worker_allowed[i] && rc == 0; i++) {
    int nr = seccomp_syscall_resolve_name(worker_allowed[i]);
    if (nr != __NR_SCMP_ERROR && !refused(worker_allowed[i]))
      rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, nr, 0);
  }
  if (zygote && rc == 0) rc = add_names(c, placement, SCMP_ACT_ALLOW);
  /* sed -i's buffer: anonymous memory to a worker, which cannot run it
   * (no execve, no execveat); refused to tools, which can (§5.8). */
  if (rc == 0) rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(memfd_create), 0);
  /* A child of its own, never in a new namespace, but for the zygote's
   * workers: a mount and a PID namespace each, never a user or a network
   * one.  clone3 cannot be inspected, so it reports ENOSYS and libc falls
   * back to clone. */
  const scmp_datum_t not_new =
    zygote ? CLONE_NS_FLAGS & ~(scmp_datum_t)(CLONE_NEWNS | CLONE_NEWPID) : CLONE_NS_FLAGS;
  if (rc == 0)
    rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, not_new, 0));
  if (rc == 0) rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  /* unshare: only a working directory of its own (the thread that loads
   * libcurl, shell/commands/curl_dl.c), and for placement a mount
   * namespace (a worker that could not join its area's). */
  const scmp_datum_t unshares[] = { CLONE_FS, CLONE_NEWNS };
  for (size_t i = 0; i < (zygote ? 2u : 1u) && rc == 0; i++)
    rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(unshare), 1,
                          SCMP_A0(SCMP_CMP_EQ, unshares[i], 0));
  /* Sockets: the gateway's relay is AF_INET on the workers' loopback (the
   * namespace has no other route); the control channel and libcurl's
   * wakeup pairs are AF_UNIX.  No netlink, packet, AF_INET6… */
  const scmp_datum_t families[] = { AF_UNIX, AF_INET };
  for (size_t i = 0; i < G_N_ELEMENTS(families) && rc == 0; i++)
    rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
                          SCMP_A0(SCMP_CMP_EQ, families[i], 0));
  if (rc == 0)
    rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 1,
                          SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0));
  /* ioctl: what stdio, isatty and non-blocking descriptors use; not
   * TIOCSTI (typing into the caller's terminal) nor any device's. */
  const scmp_datum_t ioctls[] = { TCGETS,  TIOCGWINSZ, TIOCGPGRP, FIONREAD,
                                  FIONBIO, FIOCLEX,    FIONCLEX };
  for (size_t i = 0; i < G_N_ELEMENTS(ioctls) && rc == 0; i++)
    rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
                          SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ioctls[i]));
  return rc;
}

static struct sock_fprog *compile_allow_list(bool zygote, GError **error)
{
  scmp_filter_ctx c = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (!c) return NULL;
  int rc = add_worker_rules(c, zygote);
  struct sock_fprog *prog = rc == 0 ? export(c) : NULL;
  seccomp_release(c);
  if (!prog)
    g_set_error(error, BOX_TOOLS_ERROR, 1,
                "the Shell %s's seccomp filter could not be compiled (%d)",
                zygote ? "zygote" : "worker", rc);
  return prog;
}

static gpointer compile_worker(gpointer data)
{
  return compile_allow_list(false, data);
}

static gpointer compile_zygote(gpointer data)
{
  return compile_allow_list(true, data);
}

static const void *compiled(GOnce *once, GThreadFunc compile, GError **error)
{
  const void *p = g_once(once, compile, error);
  if (!p && error && !*error)
    g_set_error(error, BOX_TOOLS_ERROR, 1, "the seccomp filter could not be compiled");
  return p;
}

const void *box_seccomp_contained(GError **error)
{
  static GOnce once = G_ONCE_INIT;
  return compiled(&once, compile_contained, error);
}

const void *box_seccomp_worker(GError **error)
{
  static GOnce once = G_ONCE_INIT;
  return compiled(&once, compile_worker, error);
}

const void *box_seccomp_zygote(GError **error)
{
  static GOnce once = G_ONCE_INIT;
  return compiled(&once, compile_zygote, error);
}

const void *tools_seccomp_program(GError **error)
{
  return box_seccomp_contained(error);
}

const void *tools_seccomp_observed(GError **error)
{
  static GOnce once = G_ONCE_INIT;
  return compiled(&once, compile_observed, error);
}

bool box_seccomp_install(const void *prog)
{
  /* TSYNC: a thread the caller started (a library's) is filtered too. */
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, prog) == 0;
}
