/* fdpass.h: one message and the descriptors it carries (SCM_RIGHTS), as
 * boxd's control links and a launch's link to its sandbox receive them. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Reads one message of at most len bytes into buf, retrying when a signal
 * interrupts; flags as recvmsg's (MSG_CMSG_CLOEXEC).  Of the descriptors
 * that came with it, the first max_fds are put in fds (their count in
 * *nfds) and the rest closed.  *truncated (when given): the message was
 * longer than len.  recvmsg's count. */
ssize_t box_fdpass_recv(int sock, void *buf, size_t len, int flags, int *fds, int max_fds,
                        int *nfds, bool *truncated);
