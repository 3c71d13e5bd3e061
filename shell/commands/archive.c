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

/* ---- zip's format -------------------------------------------------------------- */

guint32 bx_le32(const unsigned char *p)
{
  return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

guint16 bx_le16(const unsigned char *p)
{
  return (guint16)(p[0] | p[1] << 8);
}

void bx_put_le32(GString *s, guint32 v)
{
  char b[4] = { (char)v, (char)(v >> 8), (char)(v >> 16), (char)(v >> 24) };
  g_string_append_len(s, b, 4);
}

void bx_put_le16(GString *s, guint16 v)
{
  char b[2] = { (char)v, (char)(v >> 8) };
  g_string_append_len(s, b, 2);
}

void bx_zip_dos_time(time_t t, guint16 *time, guint16 *date)
{
  struct tm tm;
  localtime_r(&t, &tm);
  if (tm.tm_year < 80) tm = (struct tm){ .tm_year = 80, .tm_mday = 1 };
  *time = (guint16)(tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec / 2);
  *date = (guint16)((tm.tm_year - 80) << 9 | (tm.tm_mon + 1) << 5 | tm.tm_mday);
}

time_t bx_zip_time(guint16 time, guint16 date)
{
  struct tm tm = { .tm_year = (date >> 9) + 80,
                   .tm_mon = ((date >> 5) & 15) - 1,
                   .tm_mday = date & 31,
                   .tm_hour = time >> 11,
                   .tm_min = (time >> 5) & 63,
                   .tm_sec = (time & 31) * 2,
                   .tm_isdst = -1 };
  return mktime(&tm);
}

GArray *bx_zip_entries(const unsigned char *d, size_t n)
{
  /* the end record: 22 bytes and a comment of up to 65535 */
  size_t end = 0;
  for (size_t i = n >= 22 ? n - 22 + 1 : 0; i-- > 0 && n - i <= 22 + 65535;)
    if (bx_le32(d + i) == BX_ZIP_END) {
      end = i + 1;
      break;
    }
  if (!end--) return NULL;
  guint16 count = bx_le16(d + end + 10);
  size_t at = bx_le32(d + end + 16);
  GArray *v = g_array_new(FALSE, TRUE, sizeof(BxZipEntry));
  for (guint16 i = 0; i < count; i++) {
    if (at + 46 > n || bx_le32(d + at) != BX_ZIP_CENTRAL) break;
    const unsigned char *h = d + at;
    guint16 name_len = bx_le16(h + 28), extra = bx_le16(h + 30), comment = bx_le16(h + 32);
    if (at + 46 + name_len > n) break;
    BxZipEntry e = {
      .name = g_strndup((const char *)h + 46, name_len),
      .made_by = bx_le16(h + 4),
      .method = bx_le16(h + 10),
      .mtime = bx_zip_time(bx_le16(h + 12), bx_le16(h + 14)),
      .crc = bx_le32(h + 16),
      .csize = bx_le32(h + 20),
      .usize = bx_le32(h + 24),
      .attr = bx_le32(h + 38),
      .offset = bx_le32(h + 42),
    };
    g_array_append_val(v, e);
    at += 46 + (size_t)name_len + extra + comment;
  }
  return v;
}

void bx_zip_entries_free(GArray *v)
{
  for (guint i = 0; v && i < v->len; i++) g_free(g_array_index(v, BxZipEntry, i).name);
  if (v) g_array_free(v, TRUE);
}

size_t bx_zip_data_offset(const BxZipEntry *e, const unsigned char *d, size_t n)
{
  size_t at = e->offset;
  if (at + 30 > n || bx_le32(d + at) != BX_ZIP_LOCAL) return 0;
  size_t data = at + 30 + bx_le16(d + at + 26) + bx_le16(d + at + 28);
  return data + e->csize <= n ? data : 0;
}
