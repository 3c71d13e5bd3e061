/* filter.h — the seccomp filters of contained processes and Shell workers.
 *
 * Public (box-shell links it alone, as libboxseccomp): a filter is a
 * compiled struct sock_fprog, built once per process and installed with
 * box_seccomp_install in each process that runs under it. */
#ifndef BOX_TOOLS_FILTER_H
#define BOX_TOOLS_FILTER_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* spec/runtime.md §5.8: what every contained program (a tool, the agent)
 * runs under.  Refuses (EPERM) the calls that leave or widen a sandbox and
 * the kernel's riskiest surface; allows the rest. */
const void *box_seccomp_contained(GError **error);

/* A call the contained filter refused, as a listener's notification gives
 * it (arch, number, arguments): its name ("syscall_<n>" when libseccomp
 * has none) and, when an argument rule refused it, *arguments
 * ("family=AF_PACKET type=SOCK_RAW"; else NULL).  Both are g_free'd. */
char *box_seccomp_describe(uint32_t arch, int nr, const uint64_t args[6], char **arguments);

/* DESIGN.md "Trust boundaries": the Shell worker's allow-list, installed
 * once the worker is placed.  Anything not listed (execve, mount, setns,
 * ptrace…, every call box_seccomp_contained refuses) fails with EPERM. */
const void *box_seccomp_worker(GError **error);

/* The zygote's filter: the worker's allow-list and what placing a worker
 * calls (mount, pivot_root, setns, capset…; clone and unshare into a new
 * mount or PID namespace, never a user or network one).  Its workers
 * inherit it and, once placed, hold no capability those calls need: they
 * install no filter of their own, which would cost every command the
 * kernel's compiling it. */
const void *box_seccomp_zygote(GError **error);

/* Installs prog on every thread of the caller, which has set no_new_privs:
 * true, or false with errno set. */
bool box_seccomp_install(const void *prog);

#endif
