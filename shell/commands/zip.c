/* zip.c — Info-ZIP's zip with -r -q -0..-9: a new archive, or members
 * added to one there (a member of the same name replaced).  Written with
 * zlib's raw deflate (archive.h has the format); a member that deflate
 * does not shrink is stored, as zip does.  Each file is one read on the
 * mount, the archive one write at the end. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "shell/commands/archive.h"

typedef struct {
  BoxCmd *c;
  bool recurse, quiet;
  int level;
  GString *out;     /* the local headers and data */
  GString *central; /* the central directory */
  guint16 count;
  GHashTable *old;  /* names of the members kept from the archive there */
  bool added;
} Zip;

/* zip's percentage: what compression saved, rounded. */
static int percent(guint32 n, guint32 m)
{
  return n > m ? (int)((1 + 200ULL * (n - m) / n) / 2) : 0;
}

/* One member: its local header and data, its central record.  attr: the
 * Unix mode (high half) and MS-DOS's directory bit. */
static void add_member(Zip *z, const char *name, const GString *data, const struct stat *st,
                       guint32 crc, guint16 method, guint32 csize, const char *cdata,
                       guint32 attr)
{
  guint16 t, d;
  bx_zip_dos_time(st->st_mtime, &t, &d);
  guint32 offset = (guint32)z->out->len;
  guint16 need = method == 8 ? 20 : 10, nlen = (guint16)strlen(name);
  bx_put_le32(z->out, BX_ZIP_LOCAL);
  bx_put_le16(z->out, need);
  bx_put_le16(z->out, 0);
  bx_put_le16(z->out, method);
  bx_put_le16(z->out, t);
  bx_put_le16(z->out, d);
  bx_put_le32(z->out, crc);
  bx_put_le32(z->out, csize);
  bx_put_le32(z->out, (guint32)data->len);
  bx_put_le16(z->out, nlen);
  bx_put_le16(z->out, 0);
  g_string_append(z->out, name);
  g_string_append_len(z->out, cdata, csize);

  bx_put_le32(z->central, BX_ZIP_CENTRAL);
  bx_put_le16(z->central, 3 << 8 | 30); /* Unix, zip 3.0 */
  bx_put_le16(z->central, need);
  bx_put_le16(z->central, 0);
  bx_put_le16(z->central, method);
  bx_put_le16(z->central, t);
  bx_put_le16(z->central, d);
  bx_put_le32(z->central, crc);
  bx_put_le32(z->central, csize);
  bx_put_le32(z->central, (guint32)data->len);
  bx_put_le16(z->central, nlen);
  bx_put_le32(z->central, 0); /* extra and comment lengths */
  bx_put_le32(z->central, 0); /* disk, internal attributes */
  bx_put_le32(z->central, attr);
  bx_put_le32(z->central, offset);
  g_string_append(z->central, name);
  z->count++;
}

static void add_data(Zip *z, const char *name, const GString *data, const struct stat *st,
                     bool dir)
{
  guint32 crc = (guint32)crc32(0, (const unsigned char *)data->str, (uInt)data->len);
  uLong bound = compressBound((uLong)data->len);
  g_autofree unsigned char *buf = g_malloc(bound + 16);
  guint32 csize = 0;
  if (data->len && z->level > 0) {
    z_stream s = { 0 };
    deflateInit2(&s, z->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    s.next_in = (unsigned char *)data->str;
    s.avail_in = (uInt)data->len;
    s.next_out = buf;
    s.avail_out = (uInt)bound + 16;
    deflate(&s, Z_FINISH);
    csize = (guint32)s.total_out;
    deflateEnd(&s);
  }
  bool deflated = data->len && z->level > 0 && csize < data->len;
  const char *verb = g_hash_table_remove(z->old, name) ? "updating" : "adding";
  if (!z->quiet) {
    if (deflated)
      box_out_printf(z->c->out, "  %s: %s (deflated %d%%)\n", verb, name,
                     percent((guint32)data->len, csize));
    else
      box_out_printf(z->c->out, "  %s: %s (stored 0%%)\n", verb, name);
  }
  guint32 attr = (guint32)(st->st_mode & 0xffff) << 16 | (dir ? 0x10 : 0);
  if (deflated)
    add_member(z, name, data, st, crc, 8, csize, (const char *)buf, attr);
  else
    add_member(z, name, data, st, crc, 0, (guint32)data->len, data->str, attr);
  z->added = true;
}

static void add_path(Zip *z, const char *path, bool top)
{
  struct stat st;
  if (stat(path, &st) < 0) {
    if (top) box_out_printf(z->c->out, "\tzip warning: name not matched: %s\n", path);
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    g_autofree char *name = g_str_has_suffix(path, "/") ? g_strdup(path) : g_strconcat(path, "/", NULL);
    g_autoptr(GString) none = g_string_new(NULL);
    add_data(z, name, none, &st, true);
    if (!z->recurse) return;
    int err = 0;
    GArray *v = bx_list_dir(path, &err);
    for (guint i = 0; v && i < v->len; i++) {
      g_autofree char *child = g_strconcat(name, g_array_index(v, BxDirEnt, i).name, NULL);
      add_path(z, child, false);
    }
    if (v) bx_dir_free(v);
    return;
  }
  int fd = box_open_file(path, O_RDONLY | O_NOCTTY);
  g_autoptr(GString) data = g_string_new(NULL);
  if (fd < 0 || !bx_read_all(fd, data)) {
    box_out_printf(z->c->out, "\tzip warning: could not open for reading: %s\n", path);
    if (fd >= 0) close(fd);
    return;
  }
  close(fd);
  add_data(z, path, data, &st, false);
}

/* The members of the archive there, copied as they are (those named again
 * are dropped when the new ones are added: see finish). */
static bool load_old(Zip *z, const GString *s, GArray **old)
{
  *old = bx_zip_entries((const unsigned char *)s->str, s->len);
  for (guint i = 0; *old && i < (*old)->len; i++)
    g_hash_table_add(z->old, g_strdup(g_array_index(*old, BxZipEntry, i).name));
  return *old != NULL;
}

static int finish(Zip *z, const char *archive, const GString *s, GArray *old)
{
  /* kept members first, raw, with their records rebuilt at their new place */
  g_autoptr(GString) out = g_string_new(NULL);
  g_autoptr(GString) central = g_string_new(NULL);
  guint16 count = 0;
  for (guint i = 0; old && i < old->len; i++) {
    const BxZipEntry *e = &g_array_index(old, BxZipEntry, i);
    if (!g_hash_table_contains(z->old, e->name)) continue; /* replaced */
    size_t data = bx_zip_data_offset(e, (const unsigned char *)s->str, s->len);
    if (!data && e->csize) continue;
    guint32 offset = (guint32)out->len;
    size_t start = e->offset, end = data ? data + e->csize : start + 30 + strlen(e->name);
    g_string_append_len(out, s->str + start, (gssize)(end - start));
    guint16 t, d;
    bx_zip_dos_time(e->mtime, &t, &d);
    bx_put_le32(central, BX_ZIP_CENTRAL);
    bx_put_le16(central, e->made_by);
    bx_put_le16(central, e->method == 8 ? 20 : 10);
    bx_put_le16(central, 0);
    bx_put_le16(central, e->method);
    bx_put_le16(central, t);
    bx_put_le16(central, d);
    bx_put_le32(central, e->crc);
    bx_put_le32(central, e->csize);
    bx_put_le32(central, e->usize);
    bx_put_le16(central, (guint16)strlen(e->name));
    bx_put_le32(central, 0);
    bx_put_le32(central, 0);
    bx_put_le32(central, e->attr);
    bx_put_le32(central, offset);
    g_string_append(central, e->name);
    count++;
  }
  /* then the new ones, their offsets moved past the kept */
  guint32 shift = (guint32)out->len;
  for (size_t at = 0; at + 46 <= z->central->len;) {
    unsigned char *h = (unsigned char *)z->central->str + at;
    guint32 off = bx_le32(h + 42) + shift;
    h[42] = (unsigned char)off, h[43] = (unsigned char)(off >> 8);
    h[44] = (unsigned char)(off >> 16), h[45] = (unsigned char)(off >> 24);
    at += 46 + bx_le16(h + 28);
  }
  g_string_append_len(out, z->out->str, (gssize)z->out->len);
  g_string_append_len(central, z->central->str, (gssize)z->central->len);
  count = (guint16)(count + z->count);
  guint32 cd = (guint32)out->len;
  g_string_append_len(out, central->str, (gssize)central->len);
  bx_put_le32(out, BX_ZIP_END);
  bx_put_le32(out, 0);
  bx_put_le16(out, count);
  bx_put_le16(out, count);
  bx_put_le32(out, (guint32)central->len);
  bx_put_le32(out, cd);
  bx_put_le16(out, 0);
  int fd = open(archive, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0 || !box_write_all(fd, out->str, out->len)) {
    g_autofree char *text = bx_errtext(z->c, errno);
    box_out_printf(z->c->out, "zip I/O error: %s\nzip error: Could not create output file (%s)\n",
                   text, archive);
    if (fd >= 0) close(fd);
    return 15;
  }
  close(fd);
  return 0;
}

int box_cmd_zip(BoxCmd *c)
{
  Zip z = { .c = c, .level = 6 };
  BX_EACH_OPTION (o, c, "zip", "rq0123456789", "recurse-paths=r quiet=q") {
    if (o >= '0' && o <= '9')
      z.level = o - '0';
    else if (o == 'r')
      z.recurse = true;
    else if (o == 'q')
      z.quiet = true;
    else
      return 16;
  }
  if (optind >= c->argc) {
    box_out_puts(c->out, "\nzip error: Invalid command arguments (nothing to select from)\n");
    return 16;
  }
  const char *given = c->argv[optind];
  const char *base = strrchr(given, '/') ? strrchr(given, '/') + 1 : given;
  g_autofree char *archive = strchr(base, '.') ? g_strdup(given) : g_strconcat(given, ".zip", NULL);
  z.out = g_string_new(NULL);
  z.central = g_string_new(NULL);
  z.old = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GString) s = g_string_new(NULL);
  GArray *old = NULL;
  int fd = box_open_file(archive, O_RDONLY | O_NOCTTY);
  if (fd >= 0) {
    bool ok = bx_read_all(fd, s) && load_old(&z, s, &old);
    close(fd);
    if (!ok) {
      box_out_printf(c->out, "\nzip error: Zip file structure invalid (%s)\n", archive);
      g_string_free(z.out, TRUE);
      g_string_free(z.central, TRUE);
      g_hash_table_destroy(z.old);
      return 3;
    }
  }
  for (int i = optind + 1; i < c->argc; i++) add_path(&z, c->argv[i], true);
  int st = 0;
  if (!z.added && !old) {
    box_out_printf(c->out, "\nzip error: Nothing to do! (%s)\n", archive);
    st = 12;
  } else {
    st = finish(&z, archive, s, old);
  }
  bx_zip_entries_free(old);
  g_string_free(z.out, TRUE);
  g_string_free(z.central, TRUE);
  g_hash_table_destroy(z.old);
  return st;
}
