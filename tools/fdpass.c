#include "tools/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Room for as many descriptors as one message can carry (SCM_MAX_FD): the
 * kernel closes those that do not fit, which would hide them from us. */
#define FDPASS_ROOM 253

ssize_t box_fdpass_recv(int sock, void *buf, size_t len, int flags, int *fds, int max_fds,
                        int *nfds, bool *truncated)
{
  struct iovec iov = { .iov_base = buf, .iov_len = len };
  union {
    char buf[CMSG_SPACE(sizeof(int) * FDPASS_ROOM)];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {
    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf
  };
  ssize_t n;
  do n = recvmsg(sock, &msg, flags);
  while (n < 0 && errno == EINTR);
  *nfds = 0;
  if (truncated) *truncated = n >= 0 && (msg.msg_flags & MSG_TRUNC);
  if (n < 0) return n;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (*nfds < max_fds)
        fds[(*nfds)++] = fd;
      else
        close(fd);
    }
  }
  return n;
}
