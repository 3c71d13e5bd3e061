/* python_launcher.c — where a python3 run's processes start: a copy of
 * the command's child made before the interpreter starts.
 *
 * The interpreter runs subprocess, os.system and os.exec* through the
 * Shell in a child it forks (python/importer.c).  That child is a copy of
 * an initialized interpreter, so a `python3` the Shell ran there (a test's
 * sys.executable) would find CPython initialized: Py_InitializeFromConfig
 * only reconfigures it, and the new program would run among the parent's
 * modules, __main__, sys.stdout and atexit handlers.  So the Shell that
 * waits for the command's child is the launcher: the interpreter's child
 * hands it the text and its descriptors 0, 1, 2, the Shell forks a job
 * from its clean image (through a middle process reaped at once, so that
 * the job is never one of the Shell's children), the job runs the text
 * through the Shell in a child of its own and sends back the status,
 * which becomes the interpreter's child's.  That child ending first
 * (Popen.kill) ends the job's Shell.  (A launcher forked by the command's
 * child cost every run a fork of a process the interpreter's size.) */
#include "shell/commands/python_launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* the interpreter's end; above the descriptors programs number themselves */
#define LAUNCHER_FD_MIN 900
#define PASSED_FDS 4 /* 0, 1, 2 and the job's reply socket */

static int to_launcher = -1; /* the interpreter's end */
static int serve_end = -1;   /* the Shell's */

/* One message of a byte and PASSED_FDS descriptors on sock, sent from fds
 * or received into them: 1, or 0 for a message without them (whatever
 * came with it closed), or -1 (errno; 0 at the end of the stream). */
static int pass_fds(int sock, int fds[PASSED_FDS], bool sending)
{
  char byte = 0;
  struct iovec iov = { &byte, 1 };
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int) * PASSED_FDS)];
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
  m.msg_control = u.buf, m.msg_controllen = sizeof u.buf;
  struct cmsghdr *h = CMSG_FIRSTHDR(&m);
  const size_t size = sizeof(int) * PASSED_FDS;
  if (sending) {
    h->cmsg_level = SOL_SOCKET, h->cmsg_type = SCM_RIGHTS, h->cmsg_len = CMSG_LEN(size);
    memcpy(CMSG_DATA(h), fds, size);
  }
  ssize_t n;
  do n = sending ? sendmsg(sock, &m, MSG_NOSIGNAL) : recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    if (n == 0) errno = 0;
    return -1;
  }
  if (sending) return 1;
  for (h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
    if (h->cmsg_type != SCM_RIGHTS) continue;
    if (h->cmsg_len == CMSG_LEN(size)) {
      memcpy(fds, CMSG_DATA(h), size);
      return 1;
    }
    for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
      close(((int *)CMSG_DATA(h))[i]);
  }
  return 0;
}

/* The request on the job's socket: three blocks (text, environment,
 * umask), each a length and its bytes, then the end of the stream. */
static bool put_block(int fd, const void *p, size_t len)
{
  uint32_t n = (uint32_t)len;
  return len <= UINT32_MAX && box_write_all(fd, &n, sizeof n) && box_write_all(fd, p, len);
}

/* The next block of req from *at (a NUL after it), or NULL. */
static char *take_block(const GString *req, size_t *at)
{
  uint32_t n;
  if (req->len - *at < sizeof n) return NULL;
  memcpy(&n, req->str + *at, sizeof n);
  *at += sizeof n;
  if (req->len - *at < n) return NULL;
  char *p = g_malloc((size_t)n + 1);
  memcpy(p, req->str + *at, n);
  p[n] = '\0';
  *at += n;
  return p;
}

/* The text's exported variables become the requester's environment
 * (entries "NAME=value", each ended by a NUL), as exec would have made a
 * shell's: what it set is exported, what it dropped is unset. */
static void take_environment(Shell *sh, const char *env)
{
  g_autoptr(GHashTable) given = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (const char *p = env; *p; p += strlen(p) + 1) {
    const char *eq = strchr(p, '=');
    if (!eq || !box_is_name(p, (size_t)(eq - p))) continue;
    char *name = g_strndup(p, (size_t)(eq - p));
    ShellVar *v = box_var_lookup(sh, name);
    if (!v || !(v->flags & V_READONLY)) {
      if (g_strcmp0(box_var_get(sh, name), eq + 1) != 0) box_var_set(sh, name, eq + 1);
      box_var_export(sh, name);
    }
    g_hash_table_add(given, name);
  }
  g_auto(GStrv) now = box_var_environ(sh);
  for (char **e = now; *e; e++) {
    char *eq = strchr(*e, '=');
    if (!eq) continue;
    *eq = '\0';
    ShellVar *v = box_var_lookup(sh, *e);
    if (!g_hash_table_contains(given, *e) && v && !(v->flags & V_READONLY)) box_var_unset(sh, *e);
  }
}

/* The job: the request's text on the passed descriptors, in a child
 * that the requester's end closing kills. */
static _Noreturn void run_job(Shell *sh, int fds[PASSED_FDS])
{
  for (int i = 0; i < PASSED_FDS; i++) {
    int high = fcntl(fds[i], F_DUPFD_CLOEXEC, 10); /* out of the way of 0, 1, 2 */
    close(fds[i]);
    fds[i] = high;
  }
  int reply = fds[3];
  g_autoptr(GString) req = box_read_all(reply, 0);
  size_t at = 0;
  g_autofree char *text = take_block(req, &at), *env = text ? take_block(req, &at) : NULL;
  g_autofree char *mask = env ? take_block(req, &at) : NULL;
  if (!mask) _exit(126);
  for (int i = 0; i < 3; i++) {
    if (fds[i] < 0 || dup2(fds[i], i) < 0) _exit(126);
    close(fds[i]);
  }
  pid_t pid = fork();
  if (pid < 0) _exit(126);
  if (pid == 0) {
    close(reply);
    umask((mode_t)strtoul(mask, NULL, 8));
    take_environment(sh, env);
    /* and the process's, as the command's child has the Shell's exports */
    clearenv();
    for (char *p = env; *p; p += strlen(p) + 1) putenv(p);
    _exit(box_run_text(sh, text, 0, 1, 2) & 255);
  }
  for (int i = 0; i < 3; i++) close(i); /* the requester's pipes see their end when the text's do */
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  /* no events asked of reply: its hang-up (the requester gone) shows anyway */
  struct pollfd pf[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = reply } };
  while (pidfd >= 0) {
    if (poll(pf, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pf[0].revents) break;
    if (pf[1].revents) {
      kill(pid, SIGKILL); /* nobody waits for the text any more */
      break;
    }
  }
  int ws;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) _exit(126);
  g_autofree char *status = g_strdup_printf("%d", ws);
  box_write_all(reply, status, strlen(status));
  _exit(0);
}

bool box_python_launcher_open(void)
{
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return false;
  /* Both ends above the numbers a command's redirections take (3…9, which
   * the child places before it closes the serving end). */
  for (int i = 0; i < 2; i++) {
    int high = fcntl(sv[i], F_DUPFD_CLOEXEC, LAUNCHER_FD_MIN);
    if (high >= 0) {
      close(sv[i]);
      sv[i] = high;
    }
  }
  to_launcher = sv[0];
  serve_end = sv[1];
  return true;
}

void box_python_launcher_child(void)
{
  if (serve_end >= 0) close(serve_end);
  serve_end = -1;
}

/* One request: its job in a grandchild, so that the Shell never sees it
 * among its own children (the middle process is reaped at once). */
static void start_job(Shell *sh, int fds[PASSED_FDS], int pidfd)
{
  pid_t mid = fork();
  if (mid == 0) {
    close(serve_end);
    close(pidfd);
    signal(SIGPIPE, SIG_DFL); /* as the command's child has it */
    pid_t job = fork();
    if (job == 0) run_job(sh, fds);
    _exit(job < 0);
  }
  /* not forked: the requester reads no status and its text fails */
  for (int i = 0; i < PASSED_FDS; i++) close(fds[i]);
  while (mid > 0 && waitpid(mid, NULL, 0) < 0 && errno == EINTR) {}
}

void box_python_launcher_serve(BoxCmd *c, pid_t pid)
{
  if (to_launcher >= 0) close(to_launcher);
  to_launcher = -1;
  int pidfd = serve_end >= 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
  struct pollfd pf[2] = { { .fd = pidfd, .events = POLLIN },
                          { .fd = serve_end, .events = POLLIN } };
  while (pidfd >= 0) {
    if (poll(pf, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pf[0].revents) break; /* the interpreter ended: its requests with it */
    if (!pf[1].revents) continue;
    int fds[PASSED_FDS];
    int got = pass_fds(serve_end, fds, false);
    if (got < 0 && errno != EINTR) pf[1].fd = -1; /* nobody left to ask: wait for the end */
    if (got > 0) start_job(c->sh, fds, pidfd);
  }
  if (pidfd >= 0) close(pidfd);
  if (serve_end >= 0) close(serve_end);
  serve_end = -1;
}

bool box_python_launcher_run(const char *text, int *status)
{
  int pair[2];
  if (to_launcher < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) return false;
  int passed[PASSED_FDS] = { 0, 1, 2, pair[1] };
  int sent = pass_fds(to_launcher, passed, true);
  close(pair[1]);
  /* not sent (the program closed or replaced the descriptor): the caller
   * runs the text itself, as before there was a launcher */
  if (sent < 0) {
    close(pair[0]);
    return false;
  }
  mode_t mask = umask(0);
  umask(mask);
  g_autofree char *mask_text = g_strdup_printf("%o", (unsigned)mask);
  g_autoptr(GString) env = g_string_new(NULL);
  for (char **e = environ; e && *e; e++) g_string_append_len(env, *e, (gssize)strlen(*e) + 1);
  bool ok = put_block(pair[0], text, strlen(text)) && put_block(pair[0], env->str, env->len) &&
            put_block(pair[0], mask_text, strlen(mask_text)) && shutdown(pair[0], SHUT_WR) == 0;
  g_autoptr(GString) answer = ok ? box_read_all(pair[0], 64) : NULL;
  close(pair[0]);
  char *end;
  int ws = answer && answer->len ? (int)strtol(answer->str, &end, 10) : 0;
  if (!answer || !answer->len || *end) {
    *status = 126;
    return true;
  }
  if (WIFSIGNALED(ws)) {
    /* the job's Shell was killed: so is this process, as it would have been */
    signal(WTERMSIG(ws), SIG_DFL);
    raise(WTERMSIG(ws));
    *status = 128 + WTERMSIG(ws);
  } else {
    *status = WEXITSTATUS(ws);
  }
  return true;
}

void box_python_launcher_stop(void)
{
  if (to_launcher >= 0) close(to_launcher);
  to_launcher = -1;
  if (serve_end >= 0) close(serve_end);
  serve_end = -1;
}
