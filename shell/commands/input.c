/* input.c — the commands' inputs: file operands ("-" is standard input),
 * whole reads, a line reader.  open(2)/read(2), never stdio on a file. */
#include "shell/commands/commands-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

char **bx_file_operands(BoxCmd *c, int *n)
{
  static char *dash[] = { (char *)"-", NULL };
  *n = c->argc - optind;
  if (*n > 0) return c->argv + optind;
  *n = 1;
  return dash;
}

ssize_t bx_read(int fd, void *buf, size_t n)
{
  /* the program's output pipe is gone: it would have died of it, so its
   * input ends here (exec.c gives it status 141) */
  if (box_pipe_broke && box_in_utility) return 0;
  ssize_t r;
  do r = read(fd, buf, n);
  while (r < 0 && errno == EINTR);
  return r;
}

int bx_open_in(BoxCmd *c, const char *name)
{
  if (strcmp(name, "-") == 0) {
    if (c->in < 0) {
      errno = EBADF;
      return -1;
    }
    return c->in;
  }
  return box_open_file(name, O_RDONLY | O_NOCTTY);
}

void bx_close_in(BoxCmd *c, int fd)
{
  if (fd >= 0 && fd != c->in) close(fd);
}

bool bx_read_all(int fd, GString *s)
{
  for (;;) {
    size_t old = s->len;
    g_string_set_size(s, old + 65536); /* room for one read */
    ssize_t n = read(fd, s->str + old, 65536);
    g_string_set_size(s, old + (n > 0 ? (size_t)n : 0));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
  }
}

bool bx_slurp(BoxCmd *c, const char *cmd, const char *name, GString *s)
{
  int fd = bx_open_in(c, name);
  if (fd < 0) {
    bx_ferr(c, cmd, name, errno);
    return false;
  }
  bool ok = bx_read_all(fd, s);
  if (!ok) bx_ferr(c, cmd, name, errno);
  bx_close_in(c, fd);
  return ok;
}

GString *bx_slurp_new(BoxCmd *c, const char *cmd, const char *name)
{
  GString *s = g_string_new(NULL);
  if (bx_slurp(c, cmd, name, s)) return s;
  g_string_free(s, TRUE);
  return NULL;
}

#define READER_CAP 65536

/* One buffer of the usual size kept per thread between readers: grep -r
 * opens a reader per file, and a fresh 64 KiB block each time cost more
 * than reading a small file. */
static _Thread_local char *reader_spare;

void bx_reader_init(BxReader *r, int fd)
{
  r->fd = fd;
  r->cap = READER_CAP;
  r->buf = reader_spare ? reader_spare : g_malloc(r->cap);
  reader_spare = NULL;
  r->start = r->end = 0;
  r->eof = false;
  r->err = 0;
}

void bx_reader_free(BxReader *r)
{
  if (r->buf && r->cap == READER_CAP && !reader_spare)
    reader_spare = r->buf;
  else
    g_free(r->buf);
  r->buf = NULL;
}

bool bx_reader_next(BxReader *r, char delim, const char **rec, size_t *len)
{
  size_t scan = r->start;
  for (;;) {
    char *d = scan < r->end ? memchr(r->buf + scan, delim, r->end - scan) : NULL;
    if (d) {
      *rec = r->buf + r->start;
      *len = (size_t)(d - (r->buf + r->start)) + 1;
      r->start += *len;
      return true;
    }
    if (r->eof || r->err) {
      if (r->end > r->start) {
        *rec = r->buf + r->start;
        *len = r->end - r->start;
        r->start = r->end;
        return true;
      }
      return false;
    }
    /* make room: move the partial record to the front, grow when full */
    size_t partial = r->end - r->start;
    if (r->start > 0) {
      memmove(r->buf, r->buf + r->start, partial);
      r->start = 0;
      r->end = partial;
    }
    scan = r->end;
    if (r->end == r->cap) {
      r->cap *= 2;
      r->buf = g_realloc(r->buf, r->cap);
    }
    ssize_t n = bx_read(r->fd, r->buf + r->end, r->cap - r->end);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      r->err = errno;
      continue;
    }
    if (n == 0) {
      r->eof = true;
      continue;
    }
    r->end += (size_t)n;
  }
}

void bx_reader_give_back(BxReader *r, size_t also)
{
  size_t back = r->end - r->start + also;
  if (back > 0) (void)lseek(r->fd, -(off_t)back, SEEK_CUR);
  r->end = r->start;
}
