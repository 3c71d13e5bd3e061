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

#include "shell/commands/archive.h"
#include "shell/commands/zlib_dl.h"

/* A member as it will be written: its local header and data, and its
 * central record (the offset, its last field but the name, set when the
 * archive is put together). */
typedef struct {
  char *name;
  GString *local, *central;
  char *note; /* zip's line for it, after its verb */
} Member;

typedef struct {
  BoxCmd *c;
  BoxOut *out; /* zip's lines: stderr when the archive is "-", standard output */
  bool recurse, quiet;
  int level;
  GPtrArray *members; /* the new ones, in the order given */
} Zip;

static void member_free(gpointer p)
{
  Member *m = p;
  g_free(m->name);
  g_string_free(m->local, TRUE);
  g_string_free(m->central, TRUE);
  g_free(m->note);
  g_free(m);
}

/* zip's percentage: what compression saved, rounded. */
static int percent(guint32 n, guint32 m)
{
  return n > m ? (int)((1 + 200ULL * (n - m) / n) / 2) : 0;
}

/* The fields a local header and a central record share, from "version
 * needed" to the extra field's length. */
static void put_common(GString *s, guint16 need, guint16 method, time_t mtime, guint32 crc,
                       guint32 csize, guint32 usize, const char *name)
{
  guint16 t, d;
  bx_zip_dos_time(mtime, &t, &d);
  bx_put_le16(s, need);
  bx_put_le16(s, 0);
  bx_put_le16(s, method);
  bx_put_le16(s, t);
  bx_put_le16(s, d);
  bx_put_le32(s, crc);
  bx_put_le32(s, csize);
  bx_put_le32(s, usize);
  bx_put_le16(s, (guint16)strlen(name));
  bx_put_le16(s, 0);
}

/* A member's central record but its offset and name.  attr: the Unix
 * mode (high half) and MS-DOS's directory bit. */
static GString *central_of(guint16 made_by, guint16 method, time_t mtime, guint32 crc,
                           guint32 csize, guint32 usize, const char *name, guint32 attr)
{
  GString *c = g_string_new(NULL);
  bx_put_le32(c, BX_ZIP_CENTRAL);
  bx_put_le16(c, made_by);
  put_common(c, method == 8 ? 20 : 10, method, mtime, crc, csize, usize, name);
  bx_put_le16(c, 0); /* comment */
  bx_put_le32(c, 0); /* disk, internal attributes */
  bx_put_le32(c, attr);
  return c;
}

static void add_data(Zip *z, const char *name, const GString *data, const struct stat *st, bool dir)
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
  guint16 method = deflated ? 8 : 0;
  if (!deflated) csize = (guint32)data->len;
  Member *m = g_new0(Member, 1);
  m->name = g_strdup(name);
  m->note = deflated
              ? g_strdup_printf("%s (deflated %d%%)", name, percent((guint32)data->len, csize))
              : g_strdup_printf("%s (stored 0%%)", name);
  m->local = g_string_new(NULL);
  bx_put_le32(m->local, BX_ZIP_LOCAL);
  put_common(m->local, deflated ? 20 : 10, method, st->st_mtime, crc, csize, (guint32)data->len,
             name);
  g_string_append(m->local, name);
  g_string_append_len(m->local, deflated ? (const char *)buf : data->str, csize);
  guint32 attr = (guint32)(st->st_mode & 0xffff) << 16 | (dir ? 0x10 : 0);
  m->central = central_of(3 << 8 | 30 /* Unix, zip 3.0 */, method, st->st_mtime, crc, csize,
                          (guint32)data->len, name, attr);
  g_ptr_array_add(z->members, m);
}

static void add_path(Zip *z, const char *path, bool top)
{
  struct stat st;
  if (stat(path, &st) < 0) {
    if (top) box_out_printf(z->out, "\tzip warning: name not matched: %s\n", path);
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    g_autofree char *name =
      g_str_has_suffix(path, "/") ? g_strdup(path) : g_strconcat(path, "/", NULL);
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
    box_out_printf(z->out, "\tzip warning: could not open for reading: %s\n", path);
    if (fd >= 0) close(fd);
    return;
  }
  close(fd);
  add_data(z, path, data, &st, false);
}

static void place(GString *out, GString *central, guint16 *count, const Member *m)
{
  guint32 offset = (guint32)out->len;
  g_string_append_len(out, m->local->str, (gssize)m->local->len);
  g_string_append_len(central, m->central->str, (gssize)m->central->len);
  bx_put_le32(central, offset);
  g_string_append(central, m->name);
  (*count)++;
}

/* The archive: the members there in their order (one named again is
 * replaced in its place, "updating"), then the new ones ("adding"). */
static int finish(Zip *z, const char *archive, const GString *s, GArray *old)
{
  g_autoptr(GString) out = g_string_new(NULL);
  g_autoptr(GString) central = g_string_new(NULL);
  guint16 count = 0;
  GHashTable *fresh = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < z->members->len; i++) {
    Member *m = z->members->pdata[i];
    g_hash_table_insert(fresh, m->name, m);
  }
  for (guint i = 0; old && i < old->len; i++) {
    const BxZipEntry *e = &g_array_index(old, BxZipEntry, i);
    Member *m = g_hash_table_lookup(fresh, e->name);
    if (m) {
      if (!z->quiet) box_out_printf(z->out, "updating: %s\n", m->note);
      place(out, central, &count, m);
      g_hash_table_remove(fresh, e->name);
      m->note[0] = '\0';
      continue;
    }
    size_t data = bx_zip_data_offset(e, (const unsigned char *)s->str, s->len);
    if (!data && e->csize) continue;
    Member kept = { .name = e->name };
    size_t end = data ? data + e->csize : e->offset + 30 + strlen(e->name);
    kept.local = g_string_new_len(s->str + e->offset, (gssize)(end - e->offset));
    kept.central =
      central_of(e->made_by, e->method, e->mtime, e->crc, e->csize, e->usize, e->name, e->attr);
    place(out, central, &count, &kept);
    g_string_free(kept.local, TRUE);
    g_string_free(kept.central, TRUE);
  }
  for (guint i = 0; i < z->members->len; i++) {
    Member *m = z->members->pdata[i];
    if (!*m->note) continue;
    if (!z->quiet) box_out_printf(z->out, "  adding: %s\n", m->note);
    place(out, central, &count, m);
  }
  g_hash_table_destroy(fresh);
  guint32 cd = (guint32)out->len;
  g_string_append_len(out, central->str, (gssize)central->len);
  bx_put_le32(out, BX_ZIP_END);
  bx_put_le32(out, 0);
  bx_put_le16(out, count);
  bx_put_le16(out, count);
  bx_put_le32(out, (guint32)central->len);
  bx_put_le32(out, cd);
  bx_put_le16(out, 0);
  if (strcmp(archive, "-") == 0) {
    bx_put(z->c, out->str, out->len);
    return 0;
  }
  int fd = open(archive, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0 || !box_write_all(fd, out->str, out->len)) {
    g_autofree char *text = bx_errtext(z->c, errno);
    box_out_printf(z->out, "zip I/O error: %s\nzip error: Could not create output file (%s)\n",
                   text, archive);
    if (fd >= 0) close(fd);
    return 15;
  }
  close(fd);
  return 0;
}

int box_cmd_zip(BoxCmd *c)
{
  if (!(box_zlib = box_dl_command(&box_zlib_dl, c, "zip"))) return 1;
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
  bool to_stdout = strcmp(given, "-") == 0;
  g_autofree char *archive =
    strchr(base, '.') || to_stdout ? g_strdup(given) : g_strconcat(given, ".zip", NULL);
  BoxOut err;
  z.out = c->out;
  if (to_stdout) {
    box_out_init(&err, c->err);
    z.out = &err;
  }
  z.members = g_ptr_array_new_with_free_func(member_free);
  g_autoptr(GString) s = g_string_new(NULL);
  GArray *old = NULL;
  int fd = to_stdout ? -1 : box_open_file(archive, O_RDONLY | O_NOCTTY);
  if (fd >= 0) {
    bool ok = bx_read_all(fd, s) && (old = bx_zip_entries((const unsigned char *)s->str, s->len));
    close(fd);
    if (!ok) {
      box_out_printf(c->out, "\nzip error: Zip file structure invalid (%s)\n", archive);
      g_ptr_array_free(z.members, TRUE);
      return 3;
    }
  }
  for (int i = optind + 1; i < c->argc; i++) add_path(&z, c->argv[i], true);
  int st = 0;
  if (!z.members->len && !old) {
    box_out_printf(z.out, "\nzip error: Nothing to do! (%s)\n", archive);
    st = 12;
  } else {
    st = finish(&z, archive, s, old);
  }
  bx_zip_entries_free(old);
  g_ptr_array_free(z.members, TRUE);
  box_out_flush(z.out);
  return st;
}
