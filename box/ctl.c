/* ctl.c — JSON messages with descriptors over SOCK_SEQPACKET. */
#include "box/ctl.h"
#include "tools/fdpass.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

bool box_ctl_send(int sock, json_object *obj, const int *fds, int nfds)
{
  const char *text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
  return box_ctl_send_text(sock, text, strlen(text), fds, nfds);
}

bool box_ctl_send_text(int sock, const char *text, size_t len, const int *fds, int nfds)
{
  if (len > BOX_CTL_MAX_MSG || nfds > BOX_CTL_MAX_FDS) {
    errno = EMSGSIZE;
    return false;
  }
  struct iovec iov = { .iov_base = (void *)text, .iov_len = len };
  union {
    char buf[CMSG_SPACE(sizeof(int) * BOX_CTL_MAX_FDS)];
    struct cmsghdr align;
  } u;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (nfds > 0) {
    memset(&u, 0, sizeof u);
    msg.msg_control = u.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  }
  ssize_t n;
  do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EMSGSIZE) {
    /* A packet goes whole or not at all, and the default send buffer
     * (net.core.wmem_default, 208 KiB) is smaller than a run carrying
     * 256 KiB of text: the buffer grows to hold this one, once. */
    int want = (int)len + 64 * 1024;
    if (setsockopt(sock, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) != 0)
      setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
    do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
  }
  return n == (ssize_t)len;
}

/* Each thread receives into one buffer of the largest size a message may
 * have: a message is then read in one call, with no peek at its size first
 * (two of them cross every command's path).  Only the pages a message
 * touches are ever backed. */
static pthread_key_t buffer_key;

static void make_key(void)
{
  pthread_key_create(&buffer_key, free);
}

static char *recv_buffer(void)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, make_key);
  char *buf = pthread_getspecific(buffer_key);
  if (!buf) {
    buf = malloc(BOX_CTL_MAX_MSG + 2);
    if (buf && pthread_setspecific(buffer_key, buf) != 0) {
      free(buf);
      buf = NULL;
    }
  }
  return buf;
}

/* A message that will not be read: its descriptors closed, errno err. */
static json_object *refuse_message(int *fds, int *nfds, int err)
{
  if (fds && nfds)
    for (int i = 0; i < *nfds; i++) close(fds[i]);
  if (nfds) *nfds = 0;
  errno = err;
  return NULL;
}

json_object *box_ctl_recv(int sock, int *fds, int *nfds)
{
  const char *text = box_ctl_recv_text(sock, fds, nfds);
  if (!text) return NULL;
  json_object *obj = json_tokener_parse(text);
  if (!obj || !json_object_is_type(obj, json_type_object)) {
    json_object_put(obj);
    return refuse_message(fds, nfds, EPROTO);
  }
  return obj;
}

const char *box_ctl_recv_text(int sock, int *fds, int *nfds)
{
  size_t len;
  return box_ctl_recv_packet(sock, fds, nfds, &len);
}

const char *box_ctl_recv_packet(int sock, int *fds, int *nfds, size_t *len)
{
  if (nfds) *nfds = 0;
  char *buf = recv_buffer();
  if (!buf) return NULL;
  /* One byte more than a message may hold: a longer one shows as MSG_TRUNC. */
  int none;
  bool truncated;
  ssize_t n = box_fdpass_recv(sock, buf, BOX_CTL_MAX_MSG + 1, MSG_CMSG_CLOEXEC, fds,
                              fds && nfds ? BOX_CTL_MAX_FDS : 0, nfds ? nfds : &none, &truncated);
  if (n <= 0) {
    if (n == 0) errno = 0;
    return NULL;
  }
  if (n > BOX_CTL_MAX_MSG || truncated) {
    refuse_message(fds, nfds, EMSGSIZE);
    return NULL;
  }
  buf[n] = '\0';
  *len = (size_t)n;
  return buf;
}

json_object *box_ctl_call(int sock, json_object *request, const int *fds, int nfds)
{
  return box_ctl_call_fds(sock, request, fds, nfds, NULL, NULL);
}

json_object *box_ctl_call_fds(int sock, json_object *request, const int *fds, int nfds,
                              int *out_fds, int *out_n)
{
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) return NULL;
  int all[BOX_CTL_MAX_FDS];
  all[0] = pair[1];
  int total = 1;
  for (int i = 0; i < nfds && total < BOX_CTL_MAX_FDS; i++) all[total++] = fds[i];
  bool sent = box_ctl_send(sock, request, all, total);
  close(pair[1]);
  if (out_n) *out_n = 0;
  json_object *reply = sent ? box_ctl_recv(pair[0], out_fds, out_n) : NULL;
  close(pair[0]);
  return reply;
}

json_object *box_ctl_exec_input(const BoxShellCommand *cmd)
{
  json_object *input = json_object_new_object();
  json_object_object_add(input, "command", json_object_new_string(cmd->command));
  json_object_object_add(input, "program", json_object_new_string(cmd->program));
  if (cmd->argc > 1) json_object_object_add(input, "arg1", json_object_new_string(cmd->argv[1]));
  if (cmd->argc > 2) json_object_object_add(input, "arg2", json_object_new_string(cmd->argv[2]));
  json_object_object_add(input, "arg_count",
                         json_object_new_int64(cmd->argc > 0 ? cmd->argc - 1 : 0));
  json_object_object_add(input, "cwd", json_object_new_string(cmd->cwd));
  return input;
}

json_object *box_ctl_exec_request(const BoxShellCommand *cmd)
{
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("decide"));
  json_object_object_add(req, "action", json_object_new_string("shell:exec"));
  json_object_object_add(req, "input", box_ctl_exec_input(cmd));
  json_object *args = json_object_new_array();
  for (int i = 0; i < cmd->argc; i++)
    json_object_array_add(args, json_object_new_string(cmd->argv[i]));
  json_object_object_add(req, "args", args);
  /* which argv words the script spelled literally, for the log's redaction */
  if (cmd->literal) {
    json_object *a = json_object_new_array();
    for (int i = 0; i < cmd->argc; i++)
      json_object_array_add(a, json_object_new_boolean(cmd->literal[i]));
    json_object_object_add(req, "literal", a);
  }
  return req;
}
