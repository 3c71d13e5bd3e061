/* test_ctl.c — the boxd/worker control channel (box/ctl.h): messages are
 * read whole in one call, descriptors travel with them, and a message too
 * large for the channel is refused without taking the next one with it. */
#include "box/ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/test_util.h"

static void make_pair(int sv[2])
{
  g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), ==, 0);
}

/* Room for messages of SIZE bytes (root may raise the limit by force). */
static void allow_size(int sock, int size)
{
  int want = size + 65536;
  if (setsockopt(sock, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) != 0)
    g_assert_cmpint(setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &want, sizeof want), ==, 0);
}

static void same_file(int a, int b)
{
  struct stat sa, sb;
  g_assert_cmpint(fstat(a, &sa), ==, 0);
  g_assert_cmpint(fstat(b, &sb), ==, 0);
  g_assert_cmpuint(sa.st_dev, ==, sb.st_dev);
  g_assert_cmpuint(sa.st_ino, ==, sb.st_ino);
}

static void test_message_with_fds(void)
{
  int sv[2];
  make_pair(sv);
  int pipe_fds[2];
  g_assert_cmpint(pipe(pipe_fds), ==, 0);
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int sent[3] = { pipe_fds[0], pipe_fds[1], devnull };
  json_object *msg = json_tokener_parse("{\"op\":\"run\",\"source\":\"true\"}");
  g_assert_true(box_ctl_send(sv[0], msg, sent, 3));
  json_object_put(msg);
  int got[BOX_CTL_MAX_FDS];
  int n = -1;
  json_object *in = box_ctl_recv(sv[1], got, &n);
  g_assert_nonnull(in);
  g_assert_cmpstr(json_object_to_json_string_ext(in, JSON_C_TO_STRING_PLAIN), ==,
                  "{\"op\":\"run\",\"source\":\"true\"}");
  g_assert_cmpint(n, ==, 3);
  for (int i = 0; i < 3; i++) {
    same_file(got[i], sent[i]);
    g_assert_cmpint(fcntl(got[i], F_GETFD) & FD_CLOEXEC, ==, FD_CLOEXEC);
    close(got[i]);
  }
  json_object_put(in);
  for (int i = 0; i < 3; i++) close(sent[i]);
  close(sv[0]);
  close(sv[1]);
}

/* Messages of every size up to the limit come back byte for byte. */
static void test_sizes_read_whole(void)
{
  int sv[2];
  make_pair(sv);
  const int sizes[] = { 0, 1, 4095, 4096, 65536, 300000, BOX_CTL_MAX_MSG - 64 };
  allow_size(sv[0], BOX_CTL_MAX_MSG);
  for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
    char *payload = g_malloc((size_t)sizes[k] + 1);
    for (int i = 0; i < sizes[k]; i++) payload[i] = (char)('a' + (i * 7 + (int)k) % 26);
    payload[sizes[k]] = '\0';
    json_object *msg = json_object_new_object();
    json_object_object_add(msg, "p", json_object_new_string(payload));
    g_assert_true(box_ctl_send(sv[0], msg, NULL, 0));
    json_object_put(msg);
    json_object *in = box_ctl_recv(sv[1], NULL, NULL);
    g_assert_nonnull(in);
    json_object *p;
    g_assert_true(json_object_object_get_ex(in, "p", &p));
    g_assert_cmpint(json_object_get_string_len(p), ==, sizes[k]);
    g_assert_true(memcmp(json_object_get_string(p), payload, (size_t)sizes[k]) == 0);
    json_object_put(in);
    g_free(payload);
  }
  close(sv[0]);
  close(sv[1]);
}

/* A message of len bytes sent as it is, bypassing box_ctl_send's limit,
 * with fd riding along. */
static void send_raw_with_fd(int sock, char *text, size_t len, int fd)
{
  struct iovec iov = { .iov_base = text, .iov_len = len };
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr mh = {
    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf
  };
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  g_assert_cmpint(sendmsg(sock, &mh, 0), ==, (ssize_t)len);
}

/* A peer that sends more than the channel allows (the worker is not
 * trusted) is refused with EMSGSIZE; the descriptors it sent are closed and
 * the message after it still arrives intact. */
static void test_oversized_refused(void)
{
  int sv[2];
  make_pair(sv);
  size_t big = BOX_CTL_MAX_MSG + 4096;
  allow_size(sv[0], (int)big);
  char *text = g_malloc(big);
  memset(text, ' ', big);
  text[0] = '{';
  text[big - 1] = '}';
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  send_raw_with_fd(sv[0], text, big, devnull);
  close(devnull);
  json_object *after = json_tokener_parse("{\"op\":\"exit\",\"status\":3}");
  g_assert_true(box_ctl_send(sv[0], after, NULL, 0));
  json_object_put(after);
  int got[BOX_CTL_MAX_FDS];
  int n = -1;
  errno = 0;
  g_assert_null(box_ctl_recv(sv[1], got, &n));
  g_assert_cmpint(errno, ==, EMSGSIZE);
  g_assert_cmpint(n, ==, 0);
  json_object *in = box_ctl_recv(sv[1], got, &n);
  g_assert_nonnull(in);
  g_assert_cmpstr(json_object_to_json_string_ext(in, JSON_C_TO_STRING_PLAIN), ==,
                  "{\"op\":\"exit\",\"status\":3}");
  g_assert_cmpint(n, ==, 0);
  json_object_put(in);
  g_free(text);
  /* EOF reads as NULL with errno 0 */
  close(sv[0]);
  errno = EINVAL;
  g_assert_null(box_ctl_recv(sv[1], NULL, NULL));
  g_assert_cmpint(errno, ==, 0);
  close(sv[1]);
}

/* The devnull descriptor of the refused message was closed, not leaked:
 * a fresh open takes the lowest free number, the one it had. */
static void test_refused_fds_closed(void)
{
  int sv[2];
  make_pair(sv);
  allow_size(sv[0], BOX_CTL_MAX_MSG + 4096);
  size_t big = BOX_CTL_MAX_MSG + 1;
  char *text = g_malloc0(big);
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  send_raw_with_fd(sv[0], text, big, devnull);
  close(devnull); /* the number is free now; only the received copy could hold another */
  int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
  close(probe);
  int got[BOX_CTL_MAX_FDS];
  int n = -1;
  g_assert_null(box_ctl_recv(sv[1], got, &n));
  int again = open("/dev/null", O_RDONLY | O_CLOEXEC);
  g_assert_cmpint(again, ==, probe);
  close(again);
  g_free(text);
  close(sv[0]);
  close(sv[1]);
}

int main(int argc, char **argv)
{
  static const TestCase cases[] = { { "/ctl/message_with_fds", test_message_with_fds },
                                    { "/ctl/sizes_read_whole", test_sizes_read_whole },
                                    { "/ctl/oversized_refused", test_oversized_refused },
                                    { "/ctl/refused_fds_closed", test_refused_fds_closed } };
  return test_run_table(&argc, &argv, cases, G_N_ELEMENTS(cases));
}
