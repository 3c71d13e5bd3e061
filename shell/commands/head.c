/* head.c — GNU head: -n/-c with N or -N (all but the last N), -q, -v, -NUM. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/head_tail.h"

/* Copies the first n records (or bytes). */
static bool head_first(BoxCmd *c, int fd, const BxEnds *o)
{
  char buf[65536];
  unsigned long long left = o->n;
  while (left > 0) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) return false;
    if (r == 0) break;
    size_t take = (size_t)r;
    if (o->bytes) {
      if (take > left) take = (size_t)left;
      left -= take;
    } else {
      size_t i = 0;
      while (i < take && left > 0) {
        const char *nl = memchr(buf + i, o->delim, take - i);
        if (!nl) {
          i = take;
          break;
        }
        i = (size_t)(nl - buf) + 1;
        left--;
      }
      take = i;
    }
    box_out_write(c->out, buf, take);
    /* what was read past the count is the next reader's, where the input
     * can seek (`{ head -n 1; cat; } < file`), as GNU head leaves it */
    if (take < (size_t)r) (void)lseek(fd, -(off_t)((size_t)r - take), SEEK_CUR);
    if (c->out->error) break;
  }
  return true;
}

/* All but the last n records (or bytes): hold back a window. */
static bool head_all_but(BoxCmd *c, int fd, const BxEnds *o)
{
  if (o->bytes) {
    g_autoptr(GString) data = g_string_new(NULL);
    ssize_t r;
    while ((r = bx_ends_append(fd, data)) > 0) {
      if (data->len > o->n + 65536) {
        size_t out = data->len - o->n;
        box_out_write(c->out, data->str, out);
        g_string_erase(data, 0, (gssize)out);
      }
    }
    if (r < 0) return false;
    if (data->len > o->n) box_out_write(c->out, data->str, data->len - o->n);
    return true;
  }
  /* lines: keep the last n lines in a queue of offsets */
  BxReader r;
  bx_reader_init(&r, fd);
  GQueue q = G_QUEUE_INIT;
  const char *rec;
  size_t len;
  while (bx_reader_next(&r, o->delim, &rec, &len)) {
    g_queue_push_tail(&q, g_bytes_new(rec, len));
    if (q.length > o->n) {
      GBytes *b = g_queue_pop_head(&q);
      gsize bl;
      const void *bd = g_bytes_get_data(b, &bl);
      box_out_write(c->out, bd, bl);
      g_bytes_unref(b);
    }
  }
  g_queue_clear_full(&q, (GDestroyNotify)g_bytes_unref);
  int err = r.err;
  bx_reader_free(&r);
  if (err) {
    errno = err;
    return false;
  }
  return true;
}

int box_cmd_head(BoxCmd *c)
{
  static const BxEndsCmd cmd = { "head", "n:c:qvz", '-', true, head_first, head_all_but };
  return bx_ends_main(c, &cmd);
}
