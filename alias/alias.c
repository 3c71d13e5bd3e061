/* alias.c — box-alias: the zsh/bash/sh client of a box (spec/runtime.md §4.1,
 * §4.2).  libc only: built static against musl where it is installed, since
 * glibc's start-up (its CPU feature probing traps under virtualisation) costs
 * more than the whole round trip through the box.
 *
 * It is installed as hard links named zsh, bash and sh in <box_dir>/bin.  It
 * checks the argument form, connects to <box_dir>/run/box.sock, and sends
 * three frames (4-byte big-endian length + UTF-8 JSON, at most 1 MiB), all
 * in one sendmsg() whose SCM_RIGHTS carries fds 0, 1, 2 (in that order),
 * attached to the first byte, so they reach the broker before the call:
 *
 *   {"version":6,"program":1,"frame_type":"open","body":{"mode":"shell"}}
 *   {"version":6,"program":1,"frame_type":"call","body":{"source":"<text>"}}
 *   {"version":6,"program":1,"frame_type":"input_eof"}
 *
 * then reads frames until "exit" (status 0..255 → that status, else 125) or
 * "denied" (prints "box-alias: <reason>", 125).  SIGINT/SIGTERM while waiting
 * are forwarded as "signal" frames (kind "interrupt"/"terminate").  Every
 * alias-side failure prints "box-alias: <error>" and exits 125. */
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

#define ALIAS_NAME "box-alias"
#define FAIL_STATUS 125
#define MAX_FRAME (1024 * 1024)
#define MAX_SCRIPT 65536
#define CONNECT_TIMEOUT_MS 5000
#define WRITE_TIMEOUT_MS 5000

/* ---- small utilities ----------------------------------------------------- */

static void put_stderr(const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(2, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    s += w;
    n -= (size_t)w;
  }
}

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...) {
  char msg[8192];
  int off = snprintf(msg, sizeof msg, "%s: ", ALIAS_NAME);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg + off, sizeof msg - (size_t)off - 1, fmt, ap);
  va_end(ap);
  size_t len = (size_t)off + (n < 0 ? 0 : (size_t)n);
  if (len > sizeof msg - 2)
    len = sizeof msg - 2;
  msg[len++] = '\n';
  put_stderr(msg, len);
  _exit(FAIL_STATUS);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p)
    die("out of memory");
  return p;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
static bool valid_utf8(const unsigned char *s, size_t n) {
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
    if (n - i < len)
      return false;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xc0) != 0x80)
        return false;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += len;
  }
  return true;
}

/* ---- growable buffer ----------------------------------------------------- */

typedef struct {
  char *data;
  size_t len, cap;
} Buf;

static void buf_reserve(Buf *b, size_t extra) {
  if (b->len + extra <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra)
    cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p)
    die("out of memory");
  b->data = p;
  b->cap = cap;
}

static void buf_add(Buf *b, const void *p, size_t n) {
  buf_reserve(b, n);
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void buf_str(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

/* Appends S (valid UTF-8) as a JSON string literal. */
static void buf_json_string(Buf *b, const char *s, size_t n) {
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
        char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
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

static void on_signal(int sig) {
  if (sig == SIGINT)
    pending_int = pending_int + 1;
  else
    pending_term = pending_term + 1;
}

/* SIGINT/SIGTERM stay blocked except inside ppoll(), so a signal can never
 * slip between checking the counters and starting to wait. */
static sigset_t wait_mask;

static void setup_signals(void) {
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
static int wait_fd(int fd, short events, int timeout_ms) {
  struct pollfd pfd = {.fd = fd, .events = events};
  struct timespec ts, *tsp = NULL;
  if (timeout_ms >= 0) {
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
    tsp = &ts;
  }
  return ppoll(&pfd, 1, tsp, &wait_mask);
}

/* ---- start-up ------------------------------------------------------------ */

static void sanitize_fds(void) {
  /* Close every inherited descriptor above 2 (by number: not every libc
   * the alias is built with wraps close_range). */
  if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
      max = 65536;
    for (int fd = 3; fd < max; fd++)
      close(fd);
  }
  /* A closed 0, 1 or 2 would be taken by the socket and then passed to the
   * box as the command's stdio; give it /dev/null instead. */
  struct pollfd std[3] = {{.fd = 0}, {.fd = 1}, {.fd = 2}};
  if (poll(std, 3, 0) < 0) /* one call tells which of them is closed (POLLNVAL) */
    for (int fd = 0; fd <= 2; fd++)
      std[fd].revents = fcntl(fd, F_GETFD) == -1 && errno == EBADF ? POLLNVAL : 0;
  for (int fd = 0; fd <= 2; fd++) {
    if (std[fd].revents & POLLNVAL) {
      int n = open("/dev/null", O_RDWR);
      if (n < 0)
        die("open /dev/null: %s", strerror(errno));
      if (n != fd) {
        if (dup2(n, fd) < 0)
          die("dup2: %s", strerror(errno));
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
static char *self_exe(void) {
  static char resolved[PATH_MAX];
  const char *started = (const char *)getauxval(AT_EXECFN);
  if (started && *started && realpath(started, resolved))
    return resolved;
  size_t cap = 256;
  for (;;) {
    char *p = xmalloc(cap);
    ssize_t n = readlink("/proc/self/exe", p, cap);
    if (n < 0)
      die("readlink /proc/self/exe: %s", strerror(errno));
    if ((size_t)n < cap) {
      p[n] = '\0';
      return p;
    }
    free(p);
    if (cap > 1 << 20)
      die("readlink /proc/self/exe: %s", strerror(ENAMETOOLONG));
    cap *= 2;
  }
}

/* <dir of the alias>/../run/box.sock, by text: dirname(dirname(exe)). */
static char *socket_path(const char *exe) {
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
  if (len > 0 && p[len - 1] == '/')
    p[len - 1] = '\0';
  strcat(p, "/run/box.sock");
  return p;
}

/* ---- the command text ---------------------------------------------------- */

static bool is_flag(const char *a, const char *f) { return strcmp(a, f) == 0; }

static char *read_script(const char *path, size_t *len_out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    die("read Shell script %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > MAX_SCRIPT)
    die("Shell script %s is %lld bytes; maximum is %d", path, (long long)st.st_size, MAX_SCRIPT);
  char *text = xmalloc(MAX_SCRIPT + 1);
  size_t len = 0;
  unsigned long long total = 0;
  for (;;) {
    char sink[8192];
    char *dst = len < MAX_SCRIPT + 1 ? text + len : sink;
    size_t room = len < MAX_SCRIPT + 1 ? MAX_SCRIPT + 1 - len : sizeof sink;
    ssize_t n = read(fd, dst, room);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      die("read Shell script %s: %s", path, strerror(errno));
    if (n == 0)
      break;
    total += (unsigned long long)n;
    if (dst == text + len)
      len += (size_t)n;
    /* A stream that never ends is refused once it is clearly too long. */
    if (total > 64ULL * 1024 * 1024)
      break;
  }
  close(fd);
  if (total > 64ULL * 1024 * 1024)
    die("Shell script %s is more than %llu bytes; maximum is %d", path, 64ULL * 1024 * 1024,
        MAX_SCRIPT);
  if (total > MAX_SCRIPT)
    die("Shell script %s is %llu bytes; maximum is %d", path, total, MAX_SCRIPT);
  text[len] = '\0';
  *len_out = len;
  return text;
}

/* Returns the source text for the Shell call, or dies with the usage text. */
static char *shell_source(int argc, char **argv, size_t *len) {
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
    char *text = read_script(argv[1], len);
    if (!valid_utf8((const unsigned char *)text, *len))
      die("Shell command is not valid UTF-8");
    return text;
  } else {
    die("%s", usage);
  }
  *len = strlen(cmd);
  if (!valid_utf8((const unsigned char *)cmd, *len))
    die("Shell command is not valid UTF-8");
  char *text = xmalloc(*len + 1);
  memcpy(text, cmd, *len + 1);
  return text;
}

/* ---- transport ----------------------------------------------------------- */

static const char *sock_path_for_msgs;

static int connect_box(const char *path) {
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof addr.sun_path)
    die("connect to %s: %s", path, strerror(ENAMETOOLONG));
  strcpy(addr.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    die("connect to %s: %s", path, strerror(errno));
  long long deadline = now_ms() + CONNECT_TIMEOUT_MS;
  for (;;) {
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0)
      return fd;
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN) {
      /* The listener's backlog is full: try again until the deadline. */
      if (now_ms() >= deadline)
        die("connect to %s: %s", path, strerror(ETIMEDOUT));
      struct timespec ts = {0, 10 * 1000000L};
      nanosleep(&ts, NULL);
      continue;
    }
    if (errno != EINPROGRESS)
      die("connect to %s: %s", path, strerror(errno));
    for (;;) {
      long long left = deadline - now_ms();
      if (left <= 0)
        die("connect to %s: %s", path, strerror(ETIMEDOUT));
      int r = wait_fd(fd, POLLOUT, (int)left);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        die("connect to %s: %s", path, strerror(errno));
      if (r > 0)
        break;
    }
    int err = 0;
    socklen_t elen = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
      err = errno;
    if (err)
      die("connect to %s: %s", path, strerror(err));
    return fd;
  }
}

/* Builds "<len BE32><json>" for FRAME_TYPE with BODY (JSON text or NULL). */
static void make_frame(Buf *out, const char *frame_type, const char *body, size_t body_len) {
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
static int send_frame(int fd, const Buf *frame, bool with_fds) {
  size_t off = 0;
  long long deadline = now_ms() + WRITE_TIMEOUT_MS;
  bool fds_sent = !with_fds;
  while (off < frame->len) {
    ssize_t n;
    if (!fds_sent) {
      struct iovec iov = {.iov_base = frame->data, .iov_len = frame->len};
      union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
      } control;
      memset(&control, 0, sizeof control);
      struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                           .msg_controllen = sizeof control.buf};
      struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
      int fds[3] = {0, 1, 2};
      memcpy(CMSG_DATA(cm), fds, sizeof fds);
      n = sendmsg(fd, &msg, MSG_NOSIGNAL);
      if (n > 0)
        fds_sent = true;
    } else {
      n = send(fd, frame->data + off, frame->len - off, MSG_NOSIGNAL);
    }
    if (n > 0) {
      off += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      long long left = deadline - now_ms();
      if (left <= 0)
        return ETIMEDOUT;
      int r = wait_fd(fd, POLLOUT, (int)left);
      if (r < 0 && errno != EINTR)
        return errno;
      if (r == 0)
        return ETIMEDOUT;
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
static bool read_exact(Reader *r, void *dst, size_t n, void (*on_wake)(void)) {
  char *out = dst;
  while (n > 0) {
    if (r->start < r->end) {
      size_t take = r->end - r->start;
      if (take > n)
        take = n;
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
    if (got == 0)
      return false;
    if (errno == EINTR) {
      on_wake();
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return false;
    /* No idle timeout here (see wait_for_result). */
    if (wait_fd(r->fd, POLLIN, -1) < 0 && errno != EINTR)
      return false;
    on_wake();
  }
  return true;
}

/* ---- a minimal JSON reader for the frames the alias receives ---------------
 * Validates the whole text as JSON and picks out frame_type and, from body,
 * status, kind, reason, stream and data. */

typedef struct {
  const char *p, *end;
} Json;

typedef struct {
  char *frame_type, *kind, *reason, *stream, *data;
  size_t data_len;
  bool has_status, status_int;
  long long status;
} Frame;

static void json_ws(Json *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

static bool json_lit(Json *j, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0)
    return false;
  j->p += n;
  return true;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static bool json_hex4(Json *j, unsigned int *out) {
  if (j->end - j->p < 4)
    return false;
  unsigned int v = 0;
  for (int i = 0; i < 4; i++) {
    int h = hexval(j->p[i]);
    if (h < 0)
      return false;
    v = (v << 4) | (unsigned int)h;
  }
  j->p += 4;
  *out = v;
  return true;
}

static void put_utf8(Buf *b, unsigned int cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xc0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xe0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[2] = (char)(0x80 | (cp & 0x3f));
    n = 3;
  } else {
    u[0] = (char)(0xf0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[3] = (char)(0x80 | (cp & 0x3f));
    n = 4;
  }
  buf_add(b, u, n);
}

/* Parses a string; OUT (may be NULL) receives the decoded, NUL-terminated
 * text. */
static bool json_string(Json *j, Buf *out) {
  if (j->p >= j->end || *j->p != '"')
    return false;
  j->p++;
  while (j->p < j->end) {
    unsigned char c = (unsigned char)*j->p++;
    if (c == '"') {
      if (out)
        buf_add(out, "", 1), out->len--;
      return true;
    }
    if (c < 0x20)
      return false;
    if (c != '\\') {
      if (out)
        buf_add(out, &c, 1);
      continue;
    }
    if (j->p >= j->end)
      return false;
    char e = *j->p++;
    const char *simple = NULL;
    switch (e) {
    case '"': simple = "\""; break;
    case '\\': simple = "\\"; break;
    case '/': simple = "/"; break;
    case 'b': simple = "\b"; break;
    case 'f': simple = "\f"; break;
    case 'n': simple = "\n"; break;
    case 'r': simple = "\r"; break;
    case 't': simple = "\t"; break;
    case 'u': {
      unsigned int cp;
      if (!json_hex4(j, &cp))
        return false;
      if (cp >= 0xd800 && cp <= 0xdbff) {
        unsigned int lo;
        if (!json_lit(j, "\\u") || !json_hex4(j, &lo) || lo < 0xdc00 || lo > 0xdfff)
          return false;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      } else if (cp >= 0xdc00 && cp <= 0xdfff) {
        return false;
      }
      if (out)
        put_utf8(out, cp);
      continue;
    }
    default:
      return false;
    }
    if (out)
      buf_add(out, simple, 1);
  }
  return false;
}

/* Parses a number; *is_int and *value are set for a plain integer. */
static bool json_number(Json *j, bool *is_int, long long *value) {
  bool neg = false, integer = true, overflow = false;
  unsigned long long v = 0;
  if (j->p < j->end && *j->p == '-') {
    neg = true;
    j->p++;
  }
  if (j->p >= j->end || *j->p < '0' || *j->p > '9')
    return false;
  if (*j->p == '0') {
    j->p++;
  } else {
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
      unsigned d = (unsigned)(*j->p - '0');
      if (v > (ULLONG_MAX - d) / 10)
        overflow = true;
      else
        v = v * 10 + d;
      j->p++;
    }
  }
  if (j->p < j->end && *j->p == '.') {
    integer = false;
    j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9')
      return false;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
      j->p++;
  }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
    integer = false;
    j->p++;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
      j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9')
      return false;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
      j->p++;
  }
  *is_int = integer;
  if (overflow || v > (unsigned long long)LLONG_MAX)
    *value = neg ? LLONG_MIN : LLONG_MAX;
  else
    *value = neg ? -(long long)v : (long long)v;
  return true;
}

static bool json_value(Json *j, int depth);

/* Parses an object, calling MEMBER for each key (positioned at the value);
 * MEMBER returns false on a malformed value. */
static bool json_object_each(Json *j, bool (*member)(Json *, const char *, void *), void *ctx,
                             int depth) {
  if (depth > 32 || j->p >= j->end || *j->p != '{')
    return false;
  j->p++;
  json_ws(j);
  if (j->p < j->end && *j->p == '}') {
    j->p++;
    return true;
  }
  for (;;) {
    json_ws(j);
    Buf key = {0};
    if (!json_string(j, &key)) {
      free(key.data);
      return false;
    }
    json_ws(j);
    bool ok = json_lit(j, ":");
    if (ok) {
      json_ws(j);
      ok = member ? member(j, key.data, ctx) : json_value(j, depth + 1);
    }
    free(key.data);
    if (!ok)
      return false;
    json_ws(j);
    if (json_lit(j, ","))
      continue;
    return json_lit(j, "}");
  }
}

static bool json_value(Json *j, int depth) {
  if (depth > 32 || j->p >= j->end)
    return false;
  switch (*j->p) {
  case '{':
    return json_object_each(j, NULL, NULL, depth);
  case '[':
    j->p++;
    json_ws(j);
    if (json_lit(j, "]"))
      return true;
    for (;;) {
      json_ws(j);
      if (!json_value(j, depth + 1))
        return false;
      json_ws(j);
      if (json_lit(j, ","))
        continue;
      return json_lit(j, "]");
    }
  case '"':
    return json_string(j, NULL);
  case 't':
    return json_lit(j, "true");
  case 'f':
    return json_lit(j, "false");
  case 'n':
    return json_lit(j, "null");
  default: {
    bool is_int;
    long long v;
    return json_number(j, &is_int, &v);
  }
  }
}

static bool take_string(Json *j, char **dst, size_t *len) {
  Buf b = {0};
  if (!json_string(j, &b)) {
    free(b.data);
    return false;
  }
  if (!b.data)
    buf_add(&b, "", 1), b.len = 0;
  free(*dst);
  *dst = b.data;
  if (len)
    *len = b.len;
  return true;
}

static bool body_member(Json *j, const char *key, void *ctx) {
  Frame *f = ctx;
  if (strcmp(key, "status") == 0) {
    f->has_status = true;
    return json_number(j, &f->status_int, &f->status);
  }
  if (strcmp(key, "kind") == 0 && j->p < j->end && *j->p == '"')
    return take_string(j, &f->kind, NULL);
  if (strcmp(key, "reason") == 0)
    return take_string(j, &f->reason, NULL);
  if (strcmp(key, "stream") == 0)
    return take_string(j, &f->stream, NULL);
  if (strcmp(key, "data") == 0)
    return take_string(j, &f->data, &f->data_len);
  return json_value(j, 2);
}

static bool top_member(Json *j, const char *key, void *ctx) {
  Frame *f = ctx;
  if (strcmp(key, "frame_type") == 0)
    return take_string(j, &f->frame_type, NULL);
  if (strcmp(key, "body") == 0)
    return json_object_each(j, body_member, f, 1);
  return json_value(j, 1);
}

static void frame_clear(Frame *f) {
  free(f->frame_type);
  free(f->kind);
  free(f->reason);
  free(f->stream);
  free(f->data);
  memset(f, 0, sizeof *f);
}

static bool parse_frame(const char *text, size_t len, Frame *f) {
  memset(f, 0, sizeof *f);
  if (!valid_utf8((const unsigned char *)text, len))
    return false;
  Json j = {text, text + len};
  json_ws(&j);
  if (!json_object_each(&j, top_member, f, 0))
    return false;
  json_ws(&j);
  return j.p == j.end && f->frame_type != NULL;
}

/* Standard base64 with padding; returns decoded length or -1. */
static long base64_decode(const char *in, size_t n, unsigned char *out) {
  static signed char map[256];
  static bool ready;
  if (!ready) {
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memset(map, -1, sizeof map);
    for (int i = 0; i < 64; i++)
      map[(unsigned char)alphabet[i]] = (signed char)i;
    ready = true;
  }
  if (n % 4 != 0)
    return -1;
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; k++) {
      unsigned char c = (unsigned char)in[i + k];
      if (c == '=' && i + 4 == n && k >= 2) {
        v[k] = 0;
        pad++;
      } else if (pad || map[c] < 0) {
        return -1;
      } else {
        v[k] = map[c];
      }
    }
    unsigned int w = ((unsigned)v[0] << 18) | ((unsigned)v[1] << 12) | ((unsigned)v[2] << 6) |
                     (unsigned)v[3];
    out[o++] = (unsigned char)(w >> 16);
    if (pad < 2)
      out[o++] = (unsigned char)(w >> 8);
    if (pad < 1)
      out[o++] = (unsigned char)w;
  }
  return (long)o;
}

static void write_all(int fd, const unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct pollfd pfd = {.fd = fd, .events = POLLOUT};
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
static void forward_signals(void) {
  while (pending_int > 0 || pending_term > 0) {
    const char *body;
    if (pending_int > 0) {
      pending_int = pending_int - 1;
      body = "{\"kind\":\"interrupt\"}";
    } else {
      pending_term = pending_term - 1;
      body = "{\"kind\":\"terminate\"}";
    }
    if (!conn_writable)
      continue;
    Buf frame = {0};
    make_frame(&frame, "signal", body, strlen(body));
    if (send_frame(conn_fd, &frame, false) != 0)
      conn_writable = false; /* the box's answer, or its EOF, decides */
    free(frame.data);
  }
}

static void ignore_wake(void) {}

__attribute__((noreturn)) static void closed_early(void) {
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
__attribute__((noreturn)) static void wait_for_result(const char *write_error) {
  static Reader reader;
  Reader *r = &reader;
  r->fd = conn_fd;
  r->start = r->end = 0;
  void (*wake)(void) = write_error ? ignore_wake : forward_signals;
  /* The answer is never there yet: wait before the first read. */
  if (!write_error && wait_fd(r->fd, POLLIN, -1) < 0 && errno == EINTR)
    wake();
  char *payload = NULL;
  for (;;) {
    unsigned char hdr[4];
    if (!read_exact(r, hdr, 4, wake)) {
      if (write_error)
        die("%s", write_error);
      closed_early();
    }
    uint32_t n = ((uint32_t)hdr[0] << 24) | ((uint32_t)hdr[1] << 16) | ((uint32_t)hdr[2] << 8) |
                 (uint32_t)hdr[3];
    if (n == 0 || n > MAX_FRAME)
      closed_early();
    free(payload);
    payload = xmalloc(n + 1);
    if (!read_exact(r, payload, n, wake))
      closed_early();
    payload[n] = '\0';
    Frame f;
    if (!parse_frame(payload, n, &f)) {
      frame_clear(&f);
      closed_early();
    }
    if (strcmp(f.frame_type, "exit") == 0) {
      if (!f.has_status || !f.status_int)
        closed_early();
      if (f.status < 0 || f.status > 255)
        die("the box reported status %lld, which is not an exit status (0..255)", f.status);
      _exit((int)f.status);
    }
    if (strcmp(f.frame_type, "denied") == 0) {
      if (f.reason && *f.reason)
        die("%s", f.reason);
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

static void send_or_finish(const Buf *frame, bool with_fds, const char *what) {
  int err = send_frame(conn_fd, frame, with_fds);
  if (err == 0)
    return;
  if (err == ETIMEDOUT)
    die("write a transport frame timed out");
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

int main(int argc, char **argv) {
  sanitize_fds();
  setup_signals();

  char *exe = self_exe();
  const char *name = base_name(exe);
  if (strcmp(name, ALIAS_NAME) == 0 && argc > 0 && argv[0] && *base_name(argv[0]) &&
      strcmp(base_name(argv[0]), ALIAS_NAME) != 0)
    name = base_name(argv[0]); /* a symlink to box-alias is named by argv[0] */
  if (strcmp(name, ALIAS_NAME) == 0)
    die("%s is not an alias name; the trusted box run process serves broker requests", ALIAS_NAME);
  if (strcmp(name, "zsh") != 0 && strcmp(name, "bash") != 0 && strcmp(name, "sh") != 0)
    die("%s is not a Shell alias; this build serves only zsh, bash and sh", name);

  size_t src_len = 0;
  char *source = shell_source(argc, argv, &src_len);

  char *path = socket_path(exe);
  sock_path_for_msgs = path;
  conn_fd = connect_box(path);

  /* The three frames leave in one sendmsg, the descriptors on its first
   * byte: the broker wakes once and finds the whole request. */
  Buf request = {0}, frame = {0};
  make_frame(&frame, "open", "{\"mode\":\"shell\"}", strlen("{\"mode\":\"shell\"}"));
  buf_add(&request, frame.data, frame.len);
  Buf body = {0};
  buf_str(&body, "{\"source\":");
  buf_json_string(&body, source, src_len);
  buf_str(&body, "}");
  free(source);
  make_frame(&frame, "call", body.data, body.len);
  free(body.data);
  buf_add(&request, frame.data, frame.len);
  make_frame(&frame, "input_eof", NULL, 0);
  buf_add(&request, frame.data, frame.len);
  free(frame.data);
  send_or_finish(&request, true, "call");
  free(request.data);

  forward_signals(); /* anything that arrived while sending */
  wait_for_result(NULL);
}
