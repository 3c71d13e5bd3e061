/* io.c — output buffers and the file helpers the commands share. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/shell-private.h"

/* The pipe a pipeline's first stage writes into while the Shell runs that
 * stage itself (jobs.c), before the stage that reads it has started: its
 * writes do not block, and what the pipe has no room for waits here, in
 * order, for a child to write once the reader runs. */
int box_held_fd = -1;
GByteArray *box_held_rest;

static bool held_write(const char *p, size_t n)
{
  while (n > 0 && !(box_held_rest && box_held_rest->len)) {
    ssize_t w = write(box_held_fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      /* the Shell holds the reading end: no EPIPE, only a full pipe */
      if (errno != EAGAIN) return false;
      break;
    }
    p += w;
    n -= (size_t)w;
  }
  if (n) {
    if (!box_held_rest) box_held_rest = g_byte_array_new();
    g_byte_array_append(box_held_rest, (const guint8 *)p, (guint)n);
  }
  return true;
}

bool box_write_all(int fd, const void *data, size_t n)
{
  const char *p = data;
  if (fd < 0) {
    errno = EBADF;
    return false;
  }
  if (G_UNLIKELY(fd == box_held_fd)) return held_write(p, n);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= (size_t)w;
  }
  return true;
}

void box_out_init(BoxOut *o, int fd)
{
  o->fd = fd;
  o->len = 0;
  o->error = false;
  o->err = 0;
}

bool box_out_flush(BoxOut *o)
{
  if (o->len && !o->error && !box_write_all(o->fd, o->buf, o->len)) {
    o->error = true;
    o->err = errno;
  }
  o->len = 0;
  return !o->error;
}

void box_out_write(BoxOut *o, const void *data, size_t n)
{
  if (o->error) return;
  if (o->len + n > sizeof o->buf) {
    box_out_flush(o);
    if (n >= sizeof o->buf) {
      if (!o->error && !box_write_all(o->fd, data, n)) {
        o->error = true;
        o->err = errno;
      }
      return;
    }
  }
  memcpy(o->buf + o->len, data, n);
  o->len += n;
}

void box_out_puts(BoxOut *o, const char *s)
{
  box_out_write(o, s, strlen(s));
}
void box_out_putc(BoxOut *o, char c)
{
  box_out_write(o, &c, 1);
}

void box_out_printf(BoxOut *o, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_puts(o, s);
  g_free(s);
}

void box_fdprintf(int fd, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  int saved = errno;
  box_write_all(fd, s, strlen(s));
  errno = saved;
  g_free(s);
}

/* ---- the fast path (DESIGN.md "The mount", Speed) -------------------------
 * A read-only open of a file may be decided and opened by boxd, which
 * passes the descriptor back; commands that walk a tree ask for a batch of
 * a directory's files at once (box_prefetch_open) and then open them one by
 * one as usual, taking the descriptors already there.  The policy text of a
 * refusal made there is kept here for the error message that follows. */

typedef struct {
  int fd; /* >= 0, or -1 with err */
  int err;
  char *message;
} Prefetched;

static GHashTable *prefetched; /* path as the command spells it -> Prefetched */
static char *fast_denial;      /* text of the last fast-path refusal, until read */

static void prefetched_free(gpointer p)
{
  Prefetched *x = p;
  if (x->fd >= 0) close(x->fd);
  free(x->message);
  g_free(x);
}

static bool fast_path_ok(Shell *sh, int flags)
{
  return sh && sh->host && sh->host->open_read &&
         (flags & ~(O_NOCTTY | O_CLOEXEC | O_LARGEFILE)) == O_RDONLY;
}

/* The directory a relative path starts from, as the kernel has it (getcwd:
 * no request to the mount), not the Shell's logical $PWD: after a rename
 * of the cwd the two differ, and the fast path must open what open(2)
 * would. */
static char *kernel_cwd(void)
{
  char buf[4096];
  /* NULL (the path then goes to the mount) when it has none: removed, or
   * out of reach ("(unreachable)…") */
  if (!getcwd(buf, sizeof buf) || buf[0] != '/') return NULL;
  return g_strdup(buf);
}

/* Requests sent ahead (box_prefetch_ahead), not yet answered, oldest
 * first: with two outstanding, boxd goes from one batch to the next
 * without waiting for the Shell to take an answer and ask again. */
#define AHEAD_MAX 2
typedef struct {
  int ticket;
  int n;
  char *paths[BOX_PREFETCH_MAX];
} Ahead;
static Ahead ahead[AHEAD_MAX];
static int nahead;

static void keep_answers(const char *const *paths, int k, const int *fds, const int *errs,
                         char **msgs)
{
  if (!prefetched)
    prefetched = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, prefetched_free);
  for (int i = 0; i < k; i++) {
    if (fds[i] < 0 && errs[i] == 0) continue; /* the mount's: opened later as usual */
    Prefetched *x = g_new0(Prefetched, 1);
    x->fd = fds[i];
    x->err = errs[i];
    x->message = msgs[i];
    g_hash_table_replace(prefetched, g_strdup(paths[i]), x);
  }
}

/* The answer to the oldest request sent ahead, taken in (before any
 * lookup: its files are decided, in order, before the ones asked for after
 * it).  false when none is outstanding. */
static bool ahead_take_one(Shell *sh)
{
  if (nahead == 0) return false;
  Ahead a = ahead[0];
  memmove(ahead, ahead + 1, sizeof ahead[0] * (size_t)(nahead - 1));
  nahead--;
  int fds[BOX_PREFETCH_MAX], errs[BOX_PREFETCH_MAX];
  char *msgs[BOX_PREFETCH_MAX];
  if (sh && sh->host && sh->host->open_read_recv) {
    sh->host->open_read_recv(sh->host->data, a.ticket, a.n, fds, errs, msgs);
    keep_answers((const char *const *)a.paths, a.n, fds, errs, msgs);
  } else if (a.ticket >= 0) {
    close(a.ticket);
  }
  for (int i = 0; i < a.n; i++) g_free(a.paths[i]);
  return true;
}

static void ahead_take(Shell *sh)
{
  while (ahead_take_one(sh)) {}
}

void box_prefetch_open(const char *const *paths, int n)
{
  Shell *sh = box_current_shell;
  if (!fast_path_ok(sh, O_RDONLY)) return;
  ahead_take(sh);
  for (int at = 0; at < n; at += BOX_PREFETCH_MAX) {
    int k = MIN(n - at, BOX_PREFETCH_MAX);
    int fds[BOX_PREFETCH_MAX], errs[BOX_PREFETCH_MAX];
    char *msgs[BOX_PREFETCH_MAX];
    char *cwd = kernel_cwd();
    sh->host->open_read(sh->host->data, cwd, paths + at, k, fds, errs, msgs);
    g_free(cwd);
    keep_answers(paths + at, k, fds, errs, msgs);
  }
}

bool box_prefetch_ahead(const char *const *paths, int n)
{
  Shell *sh = box_current_shell;
  if (!fast_path_ok(sh, O_RDONLY) || !sh->host->open_read_send || !sh->host->open_read_recv)
    return false;
  if (nahead == AHEAD_MAX) ahead_take_one(sh);
  n = MIN(n, BOX_PREFETCH_MAX);
  char *cwd = kernel_cwd();
  int ticket = sh->host->open_read_send(sh->host->data, cwd, paths, n);
  g_free(cwd);
  if (ticket < 0) return false;
  Ahead *a = &ahead[nahead++];
  a->ticket = ticket;
  a->n = n;
  for (int i = 0; i < n; i++) a->paths[i] = g_strdup(paths[i]);
  return true;
}

void box_prefetch_drop(void)
{
  ahead_take(box_current_shell);
  if (prefetched) g_hash_table_remove_all(prefetched);
}

struct lead_dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

/* A listing asked for ahead (box_list_ahead), not yet answered. */
static struct {
  int ticket; /* -1: none */
  char *path, *prefix;
  int open_first;
} list_ahead = { -1, NULL, NULL, 0 };

static int clamp_open(const char *prefix, int open_first)
{
  if (!prefix || open_first < 0) return 0;
  return open_first > BOX_PREFETCH_MAX ? BOX_PREFETCH_MAX : open_first;
}

bool box_list_ahead(const char *path, const char *prefix, int open_first)
{
  Shell *sh = box_current_shell;
  if (list_ahead.ticket >= 0 || !sh || !sh->host || !sh->host->list_dir_send ||
      !sh->host->list_dir_recv)
    return false;
  open_first = clamp_open(prefix, open_first);
  char *cwd = path[0] == '/' ? NULL : kernel_cwd();
  int ticket = sh->host->list_dir_send(sh->host->data, cwd, path, open_first);
  g_free(cwd);
  if (ticket < 0) return false;
  list_ahead.ticket = ticket;
  list_ahead.path = g_strdup(path);
  list_ahead.prefix = g_strdup(prefix ? prefix : "");
  list_ahead.open_first = open_first;
  return true;
}

/* The listing asked for ahead, answered: its ticket when it is the one
 * for (path, prefix, open_first), else -1 (any other is taken in and
 * dropped: what it opened is closed). */
static int list_ahead_take(Shell *sh, const char *path, const char *prefix, int open_first)
{
  if (list_ahead.ticket < 0) return -1;
  int ticket = list_ahead.ticket;
  bool same = strcmp(list_ahead.path, path) == 0 &&
              strcmp(list_ahead.prefix, prefix ? prefix : "") == 0 &&
              list_ahead.open_first == open_first;
  int k = list_ahead.open_first;
  list_ahead.ticket = -1;
  g_clear_pointer(&list_ahead.path, g_free);
  g_clear_pointer(&list_ahead.prefix, g_free);
  if (same) return ticket;
  char *raw = NULL, *message = NULL;
  size_t n = 0;
  int e = 0, fds[BOX_PREFETCH_MAX], errs[BOX_PREFETCH_MAX];
  char *msgs[BOX_PREFETCH_MAX];
  sh->host->list_dir_recv(sh->host->data, ticket, &raw, &n, &e, &message, k, fds, errs, msgs);
  for (int i = 0; i < k; i++) {
    if (fds[i] >= 0) close(fds[i]);
    free(msgs[i]);
  }
  free(raw);
  free(message);
  return -1;
}

void box_list_ahead_drop(void)
{
  Shell *sh = box_current_shell;
  if (sh && sh->host && list_ahead.ticket >= 0) list_ahead_take(sh, "", NULL, -1);
}

bool box_list_fast(const char *path, const char *prefix, int open_first, char **records,
                   size_t *len, int *err, int *opened)
{
  Shell *sh = box_current_shell;
  *opened = 0;
  if (!sh || !sh->host || !sh->host->list_dir) return false;
  open_first = clamp_open(prefix, open_first);
  char *raw = NULL, *message = NULL;
  size_t n = 0;
  int e = 0;
  int fds[BOX_PREFETCH_MAX], errs[BOX_PREFETCH_MAX];
  char *msgs[BOX_PREFETCH_MAX];
  int ticket = list_ahead_take(sh, path, prefix, open_first);
  int taken;
  if (ticket >= 0) {
    taken = sh->host->list_dir_recv(sh->host->data, ticket, &raw, &n, &e, &message, open_first, fds,
                                    errs, msgs);
  } else {
    char *cwd = path[0] == '/' ? NULL : kernel_cwd();
    taken = sh->host->list_dir(sh->host->data, cwd, path, &raw, &n, &e, &message, open_first, fds,
                               errs, msgs);
    g_free(cwd);
  }
  if (!taken) return false;
  *records = raw ? g_memdup2(raw, n ? n : 1) : NULL;
  *len = n;
  *err = e;
  if (raw && open_first > 0) {
    /* the leading regular files boxd answered for, picked as it picked them */
    char *names[BOX_PREFETCH_MAX];
    int k = 0;
    for (size_t off = 0; k < open_first && off + sizeof(struct lead_dirent64) <= n;) {
      const struct lead_dirent64 *d = (const struct lead_dirent64 *)(raw + off);
      if (d->d_reclen == 0) break;
      off += d->d_reclen;
      if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..")) continue;
      if (d->d_type != DT_REG) break;
      names[k++] =
        prefix[0] ? g_strconcat(prefix, g_str_has_suffix(prefix, "/") ? "" : "/", d->d_name, NULL)
                  : g_strdup(d->d_name);
    }
    keep_answers((const char *const *)names, k, fds, errs, msgs);
    for (int i = k; i < open_first; i++) { /* answers for names not picked: none expected */
      if (fds[i] >= 0) close(fds[i]);
      free(msgs[i]);
    }
    for (int i = 0; i < k; i++) g_free(names[i]);
    *opened = k;
  } else if (open_first > 0) {
    for (int i = 0; i < open_first; i++) {
      if (fds[i] >= 0) close(fds[i]);
      free(msgs[i]);
    }
  }
  free(raw);
  if (!*records && message) {
    free(fast_denial);
    fast_denial = message;
  } else {
    free(message);
  }
  return true;
}

/* The fast path's answer for path: true with *fd (or -1 and errno) when
 * it took the path, false when the mount must. */
static bool fast_open(Shell *sh, const char *path, int flags, int *fd)
{
  if (!fast_path_ok(sh, flags)) return false;
  gpointer key = NULL, val = NULL;
  Prefetched *x = NULL;
  Prefetched one = { -1, 0, NULL };
  bool found = prefetched && g_hash_table_steal_extended(prefetched, path, &key, &val);
  /* not among the answers in hand: those asked for ahead come first, the
   * oldest first */
  while (!found && ahead_take_one(sh))
    found = prefetched && g_hash_table_steal_extended(prefetched, path, &key, &val);
  if (found) {
    g_free(key);
    x = val;
  } else {
    const char *p[1] = { path };
    char *m[1];
    char *cwd = path[0] == '/' ? NULL : kernel_cwd();
    sh->host->open_read(sh->host->data, cwd, p, 1, &one.fd, &one.err, m);
    g_free(cwd);
    one.message = m[0];
    if (one.fd < 0 && one.err == 0) return false;
    x = g_memdup2(&one, sizeof one);
  }
  *fd = x->fd;
  int err = x->err;
  if (x->fd < 0 && x->message) {
    fast_denial = x->message;
    x->message = NULL;
  }
  free(x->message);
  g_free(x);
  if (*fd < 0) errno = err; /* last: nothing after may clobber it */
  return true;
}

bool box_create_fast(const char *const *paths, const mode_t *modes, int n, int *fds, int *errs)
{
  Shell *sh = box_current_shell;
  if (!sh || !sh->host || !sh->host->create_write) return false;
  if (n == 0) return true;
  char *cwd = kernel_cwd();
  sh->host->create_write(sh->host->data, cwd, paths, modes, n, fds, errs);
  g_free(cwd);
  return true;
}

char *box_error_text(Shell *sh, int err)
{
  if (err == EACCES && fast_denial) {
    char *r = g_strdup(fast_denial);
    free(fast_denial);
    fast_denial = NULL;
    return r;
  }
  if (err == EACCES && sh->host && sh->host->last_denial) {
    char *t = sh->host->last_denial(sh->host->data);
    if (t) {
      char *r = g_strdup(t);
      free(t);
      return r;
    }
  }
  return g_strdup(box_strerror(err));
}

const char *box_strerror(int err)
{
  static __thread char unknown[64]; /* only for a number the C library has no text for */
  return strerror_r(err, unknown, sizeof unknown);
}

void box_file_error(BoxCmd *c, const char *prefix, const char *name, int err)
{
  char *text = box_error_text(c->sh, err);
  box_out_flush(c->out);
  box_fdprintf(c->err, "%s: %s: %s\n", prefix, name, text);
  g_free(text);
}

/* The descriptor a /dev/fd/N or /dev/std* path names as the command sees
 * it: its own 0-2 and `n<file`, else a pipe of a process substitution,
 * named by its real number.  -1 (EBADF) when closed, -2 for other paths. */
static int named_fd(const char *path)
{
  const Shell *sh = box_current_shell;
  int which = -1;
  if (strncmp(path, "/dev/fd/", 8) == 0 && path[8]) {
    char *end;
    long n = strtol(path + 8, &end, 10);
    if (!*end && n >= 0 && n <= INT_MAX) which = (int)n;
  } else if (strcmp(path, "/dev/stdin") == 0)
    which = 0;
  else if (strcmp(path, "/dev/stdout") == 0)
    which = 1;
  else if (strcmp(path, "/dev/stderr") == 0)
    which = 2;
  if (which < 0) return -2;
  int real = which;
  if (sh && which < BOX_NFD && (which <= 2 || sh->fd[which] >= 0)) real = sh->fd[which];
  if (real < 0) errno = EBADF;
  return real < 0 ? -1 : real;
}

int box_stat_file(const char *path, struct stat *st)
{
  int fd = named_fd(path);
  if (fd == -2) return stat(path, st);
  return fd < 0 ? -1 : fstat(fd, st);
}

int box_fd_own(int fd)
{
  if (fd < 0 || fd >= BOX_OWN_FD_MIN) return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, BOX_OWN_FD_MIN);
  close(fd);
  return high;
}

int box_open_file(const char *path, int flags)
{
  int fd = named_fd(path);
  if (fd != -2) return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 10);
  Shell *sh = box_current_shell;
  free(fast_denial);
  fast_denial = NULL;
  if (fast_open(sh, path, flags, &fd)) return fd;
  do fd = open(path, flags | O_CLOEXEC, 0666);
  while (fd < 0 && errno == EINTR);
  return fd;
}

int box_open_fast(const char *path, int flags, char **denial)
{
  *denial = NULL;
  int fd;
  if (!fast_open(box_current_shell, path, flags, &fd)) return -2;
  if (fd < 0) {
    int err = errno;
    /* fast_open's refusal text, kept until read */
    if (err == EACCES && fast_denial) *denial = g_strdup(fast_denial);
    g_clear_pointer(&fast_denial, free);
    errno = err;
  }
  return fd;
}

bool box_parse_int(const char *s, long *out)
{
  char *end;
  while (*s == ' ' || *s == '\t') s++;
  if (!*s) return false;
  errno = 0;
  long v = strtol(s, &end, 10);
  while (*end == ' ' || *end == '\t') end++;
  if (*end || errno) return false;
  *out = v;
  return true;
}

void box_sh_error(Shell *sh, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  char *s = g_strconcat("strands-shell: ", m, "\n", NULL);
  int saved = errno;
  box_write_all(sh ? sh->fd[2] : 2, s, strlen(s));
  errno = saved;
  g_free(s);
  g_free(m);
}

GString *box_read_all(int fd, size_t limit)
{
  GString *g = g_string_new(NULL);
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (n == 0) break;
    g_string_append_len(g, buf, n);
    if (limit && g->len >= limit) break;
  }
  return g;
}
