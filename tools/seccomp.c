/* seccomp.c — the filter every contained process runs under (spec §5.8).
 *
 * In the spirit of §5.8 rather than its letter: the calls a sandbox uses to
 * leave or widen itself, or to reach the kernel's riskiest surface, fail
 * with EPERM; everything a build or an interpreter needs stays.  Compiled
 * once with libseccomp into a BPF program the launcher installs with one
 * prctl in the child.
 */
#include "tools/internal.h"

#include <errno.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

static const char *const denied[] = {
  /* other processes */
  "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
  /* the view itself */
  "mount", "umount2", "pivot_root", "chroot", "setns", "unshare", "fsopen", "fsconfig", "fsmount",
  "move_mount", "open_tree", "fspick", "mount_setattr", "open_by_handle_at", "name_to_handle_at",
  /* the machine */
  "reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
  "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "settimeofday", "clock_settime",
  "clock_adjtime", "adjtimex", "syslog", "vhangup", "iopl", "ioperm", "sethostname",
  "setdomainname", "lookup_dcookie", "uselib", "nfsservctl", "_sysctl",
  /* kernel surface */
  "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd", "io_uring_setup",
  "io_uring_enter", "io_uring_register", "memfd_secret",
  NULL,
};

static gpointer compile(gpointer data)
{
  GError **error = data;
  scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
  if (!c)
    return NULL;
  /* A binary tree over the syscall numbers instead of a list: the kernel
   * evaluates the filter for every syscall number when it installs it (its
   * allow cache), so a list cost each launch about 140 us. */
  int rc = seccomp_attr_set(c, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  for (int i = 0; denied[i] && rc == 0; i++) {
    int nr = seccomp_syscall_resolve_name(denied[i]);
    if (nr == __NR_SCMP_ERROR)
      continue; /* not on this architecture */
    rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), nr, 0);
  }
  /* New namespaces: clone with a CLONE_NEW* flag; clone3 cannot be
   * inspected, so it reports ENOSYS and libc falls back to clone. */
  const scmp_datum_t ns_flags[] = { CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
                                    CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWCGROUP };
  for (size_t i = 0; i < G_N_ELEMENTS(ns_flags) && rc == 0; i++)
    rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
  if (rc == 0)
    rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  /* Sockets: AF_UNIX and AF_INET only; pairs: AF_UNIX only. */
  if (rc == 0)
    rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                          SCMP_A0(SCMP_CMP_GE, AF_INET + 1, 0));
  if (rc == 0)
    rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 1,
                          SCMP_A0(SCMP_CMP_GE, AF_UNIX + 1, 0));
  /* Typing into the operator's terminal. */
  const scmp_datum_t ioctls[] = { TIOCSTI, TIOCLINUX };
  for (size_t i = 0; i < G_N_ELEMENTS(ioctls) && rc == 0; i++)
    rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                          SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ioctls[i]));
  /* Running a descriptor rather than a path in the view. */
  if (rc == 0)
    rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execveat), 1,
                          SCMP_A4(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
  struct sock_fprog *prog = NULL;
  int fd = rc == 0 ? memfd_create("box-seccomp", MFD_CLOEXEC) : -1;
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
  if (fd >= 0)
    close(fd);
  seccomp_release(c);
  if (!prog)
    g_set_error(error, TOOLS_ERROR, 1, "the seccomp filter could not be compiled (%d)", rc);
  return prog;
}

const void *tools_seccomp_program(GError **error)
{
  static GOnce once = G_ONCE_INIT;
  const void *p = g_once(&once, compile, error);
  if (!p && error && !*error)
    g_set_error(error, TOOLS_ERROR, 1, "the seccomp filter could not be compiled");
  return p;
}
