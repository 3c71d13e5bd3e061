/* archive.c — libarchive over the Shell's descriptors (see archive.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/archive.h"

typedef struct {
  int fd;
  bool close_fd;
  char buf[1 << 16];
} Src;

static la_ssize_t src_read(struct archive *a, void *data, const void **buf)
{
  Src *s = data;
  ssize_t n = bx_read(s->fd, s->buf, sizeof s->buf);
  if (n < 0) archive_set_error(a, errno, "Read error");
  *buf = s->buf;
  return n;
}

static int src_close(struct archive *a, void *data)
{
  (void)a;
  Src *s = data;
  if (s->close_fd) close(s->fd);
  g_free(s);
  return ARCHIVE_OK;
}

int bx_archive_read_fd(struct archive *a, int fd, bool close_fd)
{
  Src *s = g_new(Src, 1);
  s->fd = fd;
  s->close_fd = close_fd;
  return archive_read_open(a, s, NULL, src_read, src_close);
}

typedef struct {
  BoxCmd *c;
  int fd;
} Dst;

static la_ssize_t dst_write(struct archive *a, void *data, const void *buf, size_t n)
{
  Dst *d = data;
  if (d->fd < 0) {
    bx_put(d->c, buf, n);
  } else if (!box_write_all(d->fd, buf, n)) {
    archive_set_error(a, errno, "Write error");
    return -1;
  }
  return (la_ssize_t)n;
}

static int dst_close(struct archive *a, void *data)
{
  (void)a;
  Dst *d = data;
  if (d->fd >= 0) close(d->fd);
  g_free(d);
  return ARCHIVE_OK;
}

int bx_archive_write_fd(struct archive *a, BoxCmd *c, int fd)
{
  Dst *d = g_new(Dst, 1);
  d->c = c;
  d->fd = fd;
  return archive_write_open(a, d, NULL, dst_write, dst_close);
}

int bx_archive_copy_data(struct archive *a, BoxCmd *c, int fd)
{
  const void *buf;
  size_t n;
  la_int64_t off;
  int r;
  while ((r = archive_read_data_block(a, &buf, &n, &off)) == ARCHIVE_OK) {
    if (fd < 0)
      bx_put(c, buf, n);
    else if (!box_write_all(fd, buf, n))
      return errno;
  }
  return r == ARCHIVE_EOF ? 0 : -1;
}

int bx_make_parents(const char *path)
{
  g_autofree char *p = g_strdup(path);
  for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
    *s = '\0';
    if (mkdir(p, 0777) < 0 && errno != EEXIST) return errno;
    *s = '/';
  }
  return 0;
}
