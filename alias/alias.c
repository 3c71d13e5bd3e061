/* alias.c — box-alias: the zsh/bash/sh client of a box (spec/runtime.md §4.1,
 * §4.2).  libc only: built static against musl where it is installed, since
 * glibc's start-up (its CPU feature probing traps under virtualisation) costs
 * more than the whole round trip through the box.
 *
 * It is installed as read-only copies named zsh, bash, sh, python3 and python
 * in <box_dir>/bin (the last two send mode "python": -c SOURCE or one SCRIPT's
 * text, run by the box's embedded CPython).  It
 * checks the argument form, connects to <box_dir>/run/box.sock, and sends
 * three frames (4-byte big-endian length + UTF-8 JSON, at most 1 MiB), all
 * in one sendmsg() whose SCM_RIGHTS carries fds 0, 1, 2 (in that order),
 * attached to the first byte, so they reach the broker before the call:
 *
 *   {"version":6,"program":1,"frame_type":"open","body":{"mode":"shell"}}
 *   {"version":6,"program":1,"frame_type":"call","body":{"source":"<text>"}}
 *   {"version":6,"program":1,"frame_type":"input_eof"}
 *
 * (a Shell SCRIPT's call also names it: "script":"<path as given>", the
 * $0 bash would give it) then reads frames until "exit" (status 0..255 → that status, else 125) or
 * "denied" (prints "box-alias: <reason>", 125).  SIGINT/SIGTERM while waiting
 * are forwarded as "signal" frames (kind "interrupt"/"terminate").  Every
 * alias-side failure prints "box-alias: <error>" and exits 125.
 *
 * Under any other name (a copy named for a stdio MCP server's program) it
 * takes no argument and sends one open frame, mode {"mcp":{"server":NAME}},
 * with the same descriptors: the broker relays the JSON-RPC stream on
 * stdin and stdout itself, and the alias waits for "exit" or "denied". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "alias-private.h"

#define ALIAS_NAME "box-alias"
#define FAIL_STATUS 125
#define MAX_FRAME (1024 * 1024)
#define MAX_SCRIPT 65536
#define CONNECT_TIMEOUT_MS 5000
#define WRITE_TIMEOUT_MS 5000

/* ---- small utilities ----------------------------------------------------- */

static void put_stderr(const char *s, size_t n)
{
  while (n > 0) {
    ssize_t w = write(2, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
  char msg[8192];
  int off = snprintf(msg, sizeof msg, "%s: ", ALIAS_NAME);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg + off, sizeof msg - (size_t)off - 1, fmt, ap);
  va_end(ap);
  size_t len = (size_t)off + (n < 0 ? 0 : (size_t)n);
  if (len > sizeof msg - 2) len = sizeof msg - 2;
  msg[len++] = '\n';
  put_stderr(msg, len);
  _exit(FAIL_STATUS);
}

static void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p) die("out of memory");
  return p;
}

static const char *base_name(const char *path)
{
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static long long now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
bool valid_utf8(const unsigned char *s, size_t n)
{
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len;
    unsigned int cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
      min = 0x10000;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

/* ---- growable buffer ----------------------------------------------------- */

void buf_reserve(Buf *b, size_t extra)
{
  if (b->len + extra <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra) cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p) die("out of memory");
  b->data = p;
  b->cap = cap;
}

void buf_add(Buf *b, const void *p, size_t n)
{
  buf_reserve(b, n);
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void buf_str(Buf *b, const char *s)
{
  buf_add(b, s, strlen(s));
}

/* Appends S (valid UTF-8) as a JSON string literal. */
static void buf_json_string(Buf *b, const char *s, size_t n)
{
  static const char hex[] = "0123456789abcdef";
  buf_add(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '"': buf_add(b, "\\\"", 2); break;
    case '\\': buf_add(b, "\\\\", 2); break;
    case '\n': buf_add(b, "\\n", 2); break;
    case '\r': buf_add(b, "\\r", 2); break;
    case '\t': buf_add(b, "\\t", 2); break;
    case '\b': buf_add(b, "\\b", 2); break;
    case '\f': buf_add(b, "\\f", 2); break;
    default:
      if (c < 0x20 || c == 0x7f) {
        char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
        buf_add(b, u, 6);
      } else {
        buf_add(b, &s[i], 1);
      }
    }
  }
  buf_add(b, "\"", 1);
}

/* ---- signals ------------------------------------------------------------- */

static volatile sig_atomic_t pending_int, pending_term;

static void on_signal(int sig)
{
  if (sig == SIGINT)
    pending_int = pending_int + 1;
  else
    pending_term = pending_term + 1;
}

/* SIGINT/SIGTERM stay blocked except inside ppoll(), so a signal can never
 * slip between checking the counters and starting to wait. */
static sigset_t wait_mask;

static void setup_signals(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: a wait returns EINTR and forwards it */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigprocmask(SIG_BLOCK, &block, &wait_mask);
  sigdelset(&wait_mask, SIGINT);
  sigdelset(&wait_mask, SIGTERM);
}

/* poll one fd; timeout_ms < 0 waits forever.  Returns >0 ready, 0 timeout,
 * -1 with errno (EINTR when a forwarded signal arrived). */
static int wait_fd(int fd, short events, int timeout_ms)
{
  struct pollfd pfd = { .fd = fd, .events = events };
  struct timespec ts, *tsp = NULL;
  if (timeout_ms >= 0) {
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
    tsp = &ts;
  }
  return ppoll(&pfd, 1, tsp, &wait_mask);
}

/* ---- start-up ------------------------------------------------------------ */

static void sanitize_fds(void)
{
  /* Close every inherited descriptor above 2 (by number: not every libc
   * the alias is built with wraps close_range). */
  if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (int fd = 3; fd < max; fd++) close(fd);
  }
  /* A closed 0, 1 or 2 would be taken by the socket and then passed to the
   * box as the command's stdio; give it /dev/null instead. */
  struct pollfd std[3] = { { .fd = 0 }, { .fd = 1 }, { .fd = 2 } };
  if (poll(std, 3, 0) < 0) /* one call tells which of them is closed (POLLNVAL) */
    for (int fd = 0; fd <= 2; fd++)
      std[fd].revents = fcntl(fd, F_GETFD) == -1 && errno == EBADF ? POLLNVAL : 0;
  for (int fd = 0; fd <= 2; fd++) {
    if (std[fd].revents & POLLNVAL) {
      int n = open("/dev/null", O_RDWR);
      if (n < 0) die("open /dev/null: %s", strerror(errno));
      if (n != fd) {
        if (dup2(n, fd) < 0) die("dup2: %s", strerror(errno));
        close(n);
      }
    }
  }
}

/* The alias's own path, symlinks resolved: the box it serves is found
 * beside it.  The kernel's record of the path it was started by, resolved
 * one component at a time (a few cached lookups), costs a fraction of a
 * new process's first look into /proc (its /proc/<pid> entries are made
 * for that look); /proc/self/exe remains for what cannot be resolved. */
static char *self_exe(void)
{
  static char resolved[PATH_MAX];
  const char *started = (const char *)getauxval(AT_EXECFN);
  if (started && *started && realpath(started, resolved)) return resolved;
  size_t cap = 256;
  for (;;) {
    char *p = xmalloc(cap);
    ssize_t n = readlink("/proc/self/exe", p, cap);
    if (n < 0) die("readlink /proc/self/exe: %s", strerror(errno));
    if ((size_t)n < cap) {
      p[n] = '\0';
      return p;
    }
    free(p);
    if (cap > 1 << 20) die("readlink /proc/self/exe: %s", strerror(ENAMETOOLONG));
    cap *= 2;
  }
}

/* <dir of the alias>/../run/box.sock, by text: dirname(dirname(exe)). */
static char *socket_path(const char *exe)
{
  char *p = xmalloc(strlen(exe) + sizeof "/run/box.sock");
  strcpy(p, exe);
  for (int level = 0; level < 2; level++) {
    char *slash = strrchr(p, '/');
    if (!slash) {
      strcpy(p, ".");
      break;
    }
    if (slash == p)
      slash[1] = '\0';
    else
      *slash = '\0';
  }
  size_t len = strlen(p);
  if (len > 0 && p[len - 1] == '/') p[len - 1] = '\0';
  strcat(p, "/run/box.sock");
  return p;
}

/* ---- the command text ---------------------------------------------------- */

static bool is_flag(const char *a, const char *f)
{
  return strcmp(a, f) == 0;
}

/* kind: "Shell" or "Python", for the messages. */
static char *read_script(const char *kind, const char *path, size_t *len_out)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) die("read %s script %s: %s", kind, path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > MAX_SCRIPT)
    die("%s script %s is %lld bytes; maximum is %d", kind, path, (long long)st.st_size, MAX_SCRIPT);
  char *text = xmalloc(MAX_SCRIPT + 1);
  size_t len = 0;
  unsigned long long total = 0;
  for (;;) {
    char sink[8192];
    char *dst = len < MAX_SCRIPT + 1 ? text + len : sink;
    size_t room = len < MAX_SCRIPT + 1 ? MAX_SCRIPT + 1 - len : sizeof sink;
    ssize_t n = read(fd, dst, room);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("read %s script %s: %s", kind, path, strerror(errno));
    if (n == 0) break;
    total += (unsigned long long)n;
    if (dst == text + len) len += (size_t)n;
    /* A stream that never ends is refused once it is clearly too long. */
    if (total > 64ULL * 1024 * 1024) break;
  }
  close(fd);
  if (total > 64ULL * 1024 * 1024)
    die("%s script %s is more than %llu bytes; maximum is %d", kind, path, 64ULL * 1024 * 1024,
        MAX_SCRIPT);
  if (total > MAX_SCRIPT)
    die("%s script %s is %llu bytes; maximum is %d", kind, path, total, MAX_SCRIPT);
  text[len] = '\0';
  *len_out = len;
  return text;
}

/* Returns the source text for the Shell call, or dies with the usage text. */
static char *shell_source(int argc, char **argv, size_t *len)
{
  static const char usage[] =
    "Shell alias accepts only -c COMMAND, -lc COMMAND, -c -l COMMAND, or SCRIPT";
  const char *cmd = NULL;
  if (argc == 3 && (is_flag(argv[1], "-c") || is_flag(argv[1], "-lc"))) {
    cmd = argv[2];
  } else if (argc == 4 && (is_flag(argv[1], "-c") || is_flag(argv[1], "-l")) &&
             (is_flag(argv[2], "-c") || is_flag(argv[2], "-l")) &&
             (is_flag(argv[1], "-c") || is_flag(argv[2], "-c"))) {
    cmd = argv[3];
  } else if (argc == 2 && argv[1][0] != '-') {
    char *text = read_script("Shell", argv[1], len);
    if (!valid_utf8((const unsigned char *)text, *len)) die("Shell command is not valid UTF-8");
    return text;
  } else {
    die("%s", usage);
  }
  *len = strlen(cmd);
  if (!valid_utf8((const unsigned char *)cmd, *len)) die("Shell command is not valid UTF-8");
  char *text = xmalloc(*len + 1);
  memcpy(text, cmd, *len + 1);
  return text;
}

/* The source for a Python call (spec/runtime.md §4.1): exactly -c SOURCE
 * or one SCRIPT, whose text the alias reads and sends; else dies with the
 * usage text. */
static char *python_source(int argc, char **argv, size_t *len)
{
  if (argc == 2 && argv[1][0] != '-') {
    char *text = read_script("Python", argv[1], len);
    if (!valid_utf8((const unsigned char *)text, *len)) die("Python source is not valid UTF-8");
    return text;
  }
  if (argc != 3 || !is_flag(argv[1], "-c")) die("Python alias accepts only -c SOURCE or SCRIPT");
  *len = strlen(argv[2]);
  if (!valid_utf8((const unsigned char *)argv[2], *len)) die("Python source is not valid UTF-8");
  char *text = xmalloc(*len + 1);
  memcpy(text, argv[2], *len + 1);
  return text;
}

/* ---- transport ----------------------------------------------------------- */

static const char *sock_path_for_msgs;

static int connect_box(const char *path)
{
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof addr.sun_path) die("connect to %s: %s", path, strerror(ENAMETOOLONG));
  strcpy(addr.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) die("connect to %s: %s", path, strerror(errno));
  /* The clock is read only once the connect has to wait: the first read
   * of the vDSO's clock faults in two of its pages, which the usual
   * immediate connect never needs. */
  long long deadline = 0;
  for (;;) {
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) return fd;
    if (errno == EINTR) continue;
    if (deadline == 0) deadline = now_ms() + CONNECT_TIMEOUT_MS;
    if (errno == EAGAIN) {
      /* The listener's backlog is full: try again until the deadline. */
      if (now_ms() >= deadline) die("connect to %s: %s", path, strerror(ETIMEDOUT));
      struct timespec ts = { 0, 10 * 1000000L };
      nanosleep(&ts, NULL);
      continue;
    }
    if (errno != EINPROGRESS) die("connect to %s: %s", path, strerror(errno));
    for (;;) {
      long long left = deadline - now_ms();
      if (left <= 0) die("connect to %s: %s", path, strerror(ETIMEDOUT));
      int r = wait_fd(fd, POLLOUT, (int)left);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) die("connect to %s: %s", path, strerror(errno));
      if (r > 0) break;
    }
    int err = 0;
    socklen_t elen = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) err = errno;
    if (err) die("connect to %s: %s", path, strerror(err));
    return fd;
  }
}

/* Builds "<len BE32><json>" for FRAME_TYPE with BODY (JSON text or NULL). */
static void make_frame(Buf *out, const char *frame_type, const char *body, size_t body_len)
{
  out->len = 0;
  buf_add(out, "\0\0\0\0", 4);
  buf_str(out, "{\"version\":6,\"program\":1,\"frame_type\":\"");
  buf_str(out, frame_type);
  buf_str(out, "\"");
  if (body) {
    buf_str(out, ",\"body\":");
    buf_add(out, body, body_len);
  }
  buf_str(out, "}");
  size_t n = out->len - 4;
  if (n > MAX_FRAME)
    die("the %s frame is %zu bytes; a transport frame holds at most %d", frame_type, n, MAX_FRAME);
  unsigned char *h = (unsigned char *)out->data;
  h[0] = (unsigned char)(n >> 24);
  h[1] = (unsigned char)(n >> 16);
  h[2] = (unsigned char)(n >> 8);
  h[3] = (unsigned char)n;
}

/* Sends FRAME; with_fds attaches SCM_RIGHTS {0,1,2} to its first byte.  One
 * sendmsg carries the whole frame; should the socket take only part of it,
 * the rest follows (the descriptors stay with the first part).  Returns 0,
 * or an errno value. */
static int send_frame(int fd, const Buf *frame, bool with_fds)
{
  size_t off = 0;
  long long deadline = 0; /* set when the socket is first full (connect_box) */
  bool fds_sent = !with_fds;
  while (off < frame->len) {
    ssize_t n;
    if (!fds_sent) {
      struct iovec iov = { .iov_base = frame->data, .iov_len = frame->len };
      union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
      } control;
      memset(&control, 0, sizeof control);
      struct msghdr msg = { .msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.buf,
                            .msg_controllen = sizeof control.buf };
      struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
      int fds[3] = { 0, 1, 2 };
      memcpy(CMSG_DATA(cm), fds, sizeof fds);
      n = sendmsg(fd, &msg, MSG_NOSIGNAL);
      if (n > 0) fds_sent = true;
    } else {
      n = send(fd, frame->data + off, frame->len - off, MSG_NOSIGNAL);
    }
    if (n > 0) {
      off += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (deadline == 0) deadline = now_ms() + WRITE_TIMEOUT_MS;
      long long left = deadline - now_ms();
      if (left <= 0) return ETIMEDOUT;
      int r = wait_fd(fd, POLLOUT, (int)left);
      if (r < 0 && errno != EINTR) return errno;
      if (r == 0) return ETIMEDOUT;
      continue;
    }
    return n < 0 ? errno : EPIPE;
  }
  return 0;
}

/* ---- reading frames ------------------------------------------------------ */

typedef struct {
  int fd;
  char buf[65536];
  size_t start, end;
} Reader;

/* Reads exactly N bytes into DST, waiting without a time limit.  Signals that
 * arrive meanwhile are forwarded by ON_WAKE.  Returns false at EOF or error. */
static bool read_exact(Reader *r, void *dst, size_t n, void (*on_wake)(void))
{
  char *out = dst;
  while (n > 0) {
    if (r->start < r->end) {
      size_t take = r->end - r->start;
      if (take > n) take = n;
      memcpy(out, r->buf + r->start, take);
      r->start += take;
      out += take;
      n -= take;
      continue;
    }
    r->start = r->end = 0;
    ssize_t got = recv(r->fd, r->buf, sizeof r->buf, 0);
    if (got > 0) {
      r->end = (size_t)got;
      continue;
    }
    if (got == 0) return false;
    if (errno == EINTR) {
      on_wake();
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
    /* No idle timeout here (see wait_for_result). */
    if (wait_fd(r->fd, POLLIN, -1) < 0 && errno != EINTR) return false;
    on_wake();
  }
  return true;
}

static void write_all(int fd, const unsigned char *p, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct pollfd pfd = { .fd = fd, .events = POLLOUT };
      poll(&pfd, 1, -1);
      continue;
    }
    return; /* the reader went away: drop the output, keep serving */
  }
}

/* ---- the call ------------------------------------------------------------ */

static int conn_fd = -1;
static bool conn_writable = true;

/* Forwards SIGINT/SIGTERM that arrived as "signal" frames. */
static void forward_signals(void)
{
  while (pending_int > 0 || pending_term > 0) {
    const char *body;
    if (pending_int > 0) {
      pending_int = pending_int - 1;
      body = "{\"kind\":\"interrupt\"}";
    } else {
      pending_term = pending_term - 1;
      body = "{\"kind\":\"terminate\"}";
    }
    if (!conn_writable) continue;
    Buf frame = { 0 };
    make_frame(&frame, "signal", body, strlen(body));
    if (send_frame(conn_fd, &frame, false) != 0)
      conn_writable = false; /* the box's answer, or its EOF, decides */
    free(frame.data);
  }
}

static void ignore_wake(void) {}

__attribute__((noreturn)) static void closed_early(void)
{
  die("the box closed the connection before the command finished");
}

/* Reads frames until exit or denied and ends the process accordingly.
 *
 * No idle timeout: the spec's alias waits at most 35 s for each frame
 * ("read a transport frame timed out"), because there every output chunk
 * arrives as a frame.  Here the box writes the command's output straight to
 * the descriptors passed with the call, so a command that runs quietly or
 * writes much sends no frame at all until it exits; a per-frame limit would
 * kill any command longer than 35 s.  The box bounds each call itself (the
 * Shell's 30 s limit, the broker's 300 s backstop), and a dead box closes
 * the socket, which ends this wait with EOF. */
__attribute__((noreturn)) static void wait_for_result(const char *write_error)
{
  static Reader reader;
  Reader *r = &reader;
  r->fd = conn_fd;
  r->start = r->end = 0;
  void (*wake)(void) = write_error ? ignore_wake : forward_signals;
  /* The answer is never there yet: wait before the first read. */
  if (!write_error && wait_fd(r->fd, POLLIN, -1) < 0 && errno == EINTR) wake();
  char *payload = NULL;
  for (;;) {
    unsigned char hdr[4];
    if (!read_exact(r, hdr, 4, wake)) {
      if (write_error) die("%s", write_error);
      closed_early();
    }
    uint32_t n = ((uint32_t)hdr[0] << 24) | ((uint32_t)hdr[1] << 16) | ((uint32_t)hdr[2] << 8) |
                 (uint32_t)hdr[3];
    if (n == 0 || n > MAX_FRAME) closed_early();
    free(payload);
    payload = xmalloc(n + 1);
    if (!read_exact(r, payload, n, wake)) closed_early();
    payload[n] = '\0';
    Frame f;
    if (!parse_frame(payload, n, &f)) {
      frame_clear(&f);
      closed_early();
    }
    if (strcmp(f.frame_type, "exit") == 0) {
      if (!f.has_status || !f.status_int) closed_early();
      if (f.status < 0 || f.status > 255)
        die("the box reported status %lld, which is not an exit status (0..255)", f.status);
      _exit((int)f.status);
    }
    if (strcmp(f.frame_type, "denied") == 0) {
      if (f.reason && *f.reason) die("%s", f.reason);
      die("the box refused the call (%s)", f.kind ? f.kind : "no reason given");
    }
    if (strcmp(f.frame_type, "output") == 0 && f.stream && f.data &&
        (strcmp(f.stream, "stdout") == 0 || strcmp(f.stream, "stderr") == 0)) {
      unsigned char *raw = xmalloc(f.data_len / 4 * 3 + 3);
      long got = base64_decode(f.data, f.data_len, raw);
      if (got < 0) {
        free(raw);
        closed_early();
      }
      write_all(strcmp(f.stream, "stdout") == 0 ? 1 : 2, raw, (size_t)got);
      free(raw);
      frame_clear(&f);
      continue;
    }
    frame_clear(&f);
    closed_early(); /* a frame the alias never expects */
  }
}

static void send_or_finish(const Buf *frame, bool with_fds, const char *what)
{
  int err = send_frame(conn_fd, frame, with_fds);
  if (err == 0) return;
  if (err == ETIMEDOUT) die("write a transport frame timed out");
  char msg[512];
  snprintf(msg, sizeof msg, "write the %s frame to %s: %s", what, sock_path_for_msgs,
           strerror(err));
  if (err == EPIPE || err == ECONNRESET) {
    /* The box may have answered (e.g. a denied frame) before closing. */
    conn_writable = false;
    wait_for_result(msg);
  }
  die("%s", msg);
}

/* Any other name is an MCP server's program (spec/runtime.md §4.1): the
 * open frame carries stdin and stdout, the JSON-RPC stream, to the broker,
 * which relays it to the server until either side ends. */
__attribute__((noreturn)) static void mcp_mode(char *exe, const char *name, int argc)
{
  if (argc > 1) die("MCP alias %s takes no arguments; its stdin and stdout are the stream", name);
  char *path = socket_path(exe);
  sock_path_for_msgs = path;
  conn_fd = connect_box(path);
  Buf body = { 0 }, frame = { 0 };
  buf_str(&body, "{\"mode\":{\"mcp\":{\"server\":");
  buf_json_string(&body, name, strlen(name));
  buf_str(&body, "}}}");
  make_frame(&frame, "open", body.data, body.len);
  free(body.data);
  send_or_finish(&frame, true, "open");
  free(frame.data);
  forward_signals();
  wait_for_result(NULL);
}

int main(int argc, char **argv)
{
  sanitize_fds();
  setup_signals();

  char *exe = self_exe();
  const char *name = base_name(exe);
  if (strcmp(name, ALIAS_NAME) == 0 && argc > 0 && argv[0] && *base_name(argv[0]) &&
      strcmp(base_name(argv[0]), ALIAS_NAME) != 0)
    name = base_name(argv[0]); /* a symlink to box-alias is named by argv[0] */
  if (strcmp(name, ALIAS_NAME) == 0)
    die("%s is not an alias name; the trusted box run process serves broker requests", ALIAS_NAME);
  bool python = strcmp(name, "python3") == 0 || strcmp(name, "python") == 0;
  if (!python && strcmp(name, "zsh") != 0 && strcmp(name, "bash") != 0 && strcmp(name, "sh") != 0)
    mcp_mode(exe, name, argc);

  size_t src_len = 0;
  char *source = python ? python_source(argc, argv, &src_len) : shell_source(argc, argv, &src_len);
  const char *open_body = python ? "{\"mode\":\"python\"}" : "{\"mode\":\"shell\"}";

  /* The three frames leave in one sendmsg, the descriptors on its first
   * byte, right after the connect: the broker's thread, woken by the
   * connect, finds the whole request instead of an empty socket it would
   * sleep on again (it may run on this very CPU before the alias sends). */
  Buf request = { 0 }, frame = { 0 };
  make_frame(&frame, "open", open_body, strlen(open_body));
  buf_add(&request, frame.data, frame.len);
  Buf body = { 0 };
  buf_str(&body, "{\"source\":");
  buf_json_string(&body, source, src_len);
  if (!python && argc == 2 && argv[1][0] != '-' &&
      valid_utf8((const unsigned char *)argv[1], strlen(argv[1]))) {
    buf_str(&body, ",\"script\":");
    buf_json_string(&body, argv[1], strlen(argv[1]));
  }
  /* §4.1: the only variables the alias reads, for the records' correlation */
  static const char *const correlation[][2] = { { "TRACEPARENT", ",\"traceparent\":" },
                                                { "TRACESTATE", ",\"tracestate\":" } };
  for (size_t i = 0; i < sizeof correlation / sizeof correlation[0]; i++) {
    const char *v = getenv(correlation[i][0]);
    if (!v) continue;
    buf_str(&body, correlation[i][1]);
    buf_json_string(&body, v, strlen(v));
  }
  buf_str(&body, "}");
  free(source);
  make_frame(&frame, "call", body.data, body.len);
  free(body.data);
  buf_add(&request, frame.data, frame.len);
  make_frame(&frame, "input_eof", NULL, 0);
  buf_add(&request, frame.data, frame.len);
  free(frame.data);
  char *path = socket_path(exe);
  sock_path_for_msgs = path;
  conn_fd = connect_box(path);
  send_or_finish(&request, true, "call");
  free(request.data);

  forward_signals(); /* anything that arrived while sending */
  wait_for_result(NULL);
}
