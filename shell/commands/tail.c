/* tail.c — GNU tail: -n/-c with N, -N or +N, -q, -v, -z, obsolete -NUM/+NUM.
 * A seekable file is read from its end (lseek, no stat); a pipe is streamed. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/head_tail.h"

static bool copy_rest(BoxCmd *c, int fd)
{
  char buf[65536];
  for (;;) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) return false;
    if (r == 0) return true;
    box_out_write(c->out, buf, (size_t)r);
    if (c->out->error) return true;
  }
}

static bool tail_from_start(BoxCmd *c, int fd, const BxEnds *o)
{
  unsigned long long skip = o->n ? o->n - 1 : 0;
  char buf[65536];
  while (skip > 0) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) return false;
    if (r == 0) return true;
    size_t i = 0;
    if (o->bytes) {
      i = (size_t)MIN((unsigned long long)r, skip);
      skip -= i;
    } else {
      while (i < (size_t)r && skip > 0) {
        const char *nl = memchr(buf + i, o->delim, (size_t)r - i);
        if (!nl) {
          i = (size_t)r;
          break;
        }
        i = (size_t)(nl - buf) + 1;
        skip--;
      }
    }
    box_out_write(c->out, buf + i, (size_t)r - i);
  }
  return copy_rest(c, fd);
}

/* Last n records of data[0..len): start offset. */
static size_t last_records(const char *data, size_t len, unsigned long long n, char delim,
                           bool *enough)
{
  size_t end = len;
  *enough = false;
  if (n == 0) {
    *enough = true;
    return len;
  }
  if (end && data[end - 1] == delim) end--; /* a final terminator ends the last record */
  while (end > 0) {
    const char *p = memrchr(data, delim, end);
    if (!p) break;
    if (--n == 0) {
      *enough = true;
      return (size_t)(p - data) + 1;
    }
    end = (size_t)(p - data);
  }
  return 0;
}

static bool tail_end(BoxCmd *c, int fd, const BxEnds *o)
{
  off_t size = lseek(fd, 0, SEEK_END);
  if (size >= 0) {
    /* seekable: read backwards in blocks until enough */
    if (o->bytes) {
      off_t start = (unsigned long long)size > o->n ? size - (off_t)o->n : 0;
      if (lseek(fd, start, SEEK_SET) < 0) return false;
      return copy_rest(c, fd);
    }
    GString *tailbuf = g_string_new(NULL);
    off_t pos = size;
    size_t blk = 65536;
    char *buf = g_malloc(blk);
    for (;;) {
      off_t from = pos > (off_t)blk ? pos - (off_t)blk : 0;
      size_t want = (size_t)(pos - from);
      size_t got = 0;
      while (got < want) {
        ssize_t r = pread(fd, buf + got, want - got, from + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
      }
      g_string_prepend_len(tailbuf, buf, (gssize)got);
      pos = from;
      bool enough;
      size_t st = last_records(tailbuf->str, tailbuf->len, o->n, o->delim, &enough);
      if (enough || pos == 0) {
        box_out_write(c->out, tailbuf->str + st, tailbuf->len - st);
        break;
      }
    }
    g_free(buf);
    g_string_free(tailbuf, TRUE);
    return true;
  }
  /* a pipe: keep a window */
  g_autoptr(GString) data = g_string_new(NULL);
  ssize_t r;
  while ((r = bx_ends_append(fd, data)) > 0) {
    if (data->len > 4 * 1024 * 1024) {
      bool enough = false;
      size_t st = o->bytes ? (data->len > o->n ? data->len - (size_t)o->n : 0)
                           : last_records(data->str, data->len, o->n, o->delim, &enough);
      if (o->bytes ? data->len > o->n : enough) g_string_erase(data, 0, (gssize)st);
    }
  }
  if (r < 0) return false;
  bool enough;
  size_t st = o->bytes ? (data->len > o->n ? data->len - (size_t)o->n : 0)
                       : last_records(data->str, data->len, o->n, o->delim, &enough);
  box_out_write(c->out, data->str + st, data->len - st);
  return true;
}

int box_cmd_tail(BoxCmd *c)
{
  static const BxEndsCmd cmd = { "tail", "n:c:qvzf", '+', false, tail_end, tail_from_start };
  return bx_ends_main(c, &cmd);
}
