/* pack.c — the objects of a whole-tree checkpoint written as one pack.
 *
 * A first checkpoint reads every file of the workspace: written as loose
 * objects, 100,000 files were 100,000 files created in the repository
 * (about as slow as `git add -A`, which does the same).  While a batch is
 * open, an object database backend of the highest priority takes every
 * object libgit2 writes into one pack file, zlib-compressed and never
 * deltified (the tree is read once, deltas would cost more than they
 * save), and the pack's index is written beside it when the batch ends.
 * Between batches it hands each write to the loose backend: a command's
 * few objects are not worth a pack each.
 *
 * The pack becomes visible with its index, the index after the pack is
 * whole, and the commit that names the objects is made after both: a
 * crash leaves at worst a temporary file or an unreferenced pack. */
#include "checkpoints/cp-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <git2/sys/odb_backend.h>

#define FLUSH_AT (1u << 20)

typedef struct {
  git_oid oid;
  guint64 offset;
  guint32 crc;
} PackEntry;

struct CpPack {
  git_odb_backend parent;
  git_odb_backend *loose; /* where writes go between batches */
  bool active, failed;
  FILE *file;
  char *tmp;
  char *dir;
  guint64 offset; /* of the next object in the file */
  GByteArray *deflated;
  GArray *entries;  /* PackEntry */
  GHashTable *seen; /* git_oid* (owned) of entries */
};

static guint oid_hash(gconstpointer p)
{
  guint h;
  memcpy(&h, ((const git_oid *)p)->id, sizeof h);
  return h;
}

static gboolean oid_equal(gconstpointer a, gconstpointer b)
{
  return git_oid_equal(a, b);
}

static int pack_write(git_odb_backend *backend, const git_oid *oid, const void *data, size_t len,
                      git_object_t type)
{
  CpPack *p = (CpPack *)backend;
  if (!p->active) return p->loose->write(p->loose, oid, data, len, type);
  if (p->failed) return -1;
  if (g_hash_table_contains(p->seen, oid)) return 0; /* the same content twice in the tree */
  /* the object's type and size: four bits of size in the first byte, then
   * seven a byte, low first */
  guint8 head[16];
  size_t n = 0, size = len;
  head[n] = (guint8)((type << 4) | (size & 15));
  for (size >>= 4; size; size >>= 7) {
    head[n++] |= 0x80;
    head[n] = size & 0x7f;
  }
  n++;
  uLongf zlen = compressBound(len);
  g_byte_array_set_size(p->deflated, (guint)zlen);
  if (compress2(p->deflated->data, &zlen, data, len, Z_BEST_SPEED) != Z_OK) {
    p->failed = true;
    git_error_set_str(GIT_ERROR_ZLIB, "cannot compress an object");
    return -1;
  }
  PackEntry e = { .oid = *oid, .offset = p->offset };
  e.crc = (guint32)crc32(crc32(0, head, (uInt)n), p->deflated->data, (uInt)zlen);
  p->offset += n + zlen;
  g_array_append_val(p->entries, e);
  g_hash_table_add(p->seen, g_memdup2(oid, sizeof *oid));
  if (fwrite(head, 1, n, p->file) != n || fwrite(p->deflated->data, 1, zlen, p->file) != zlen) {
    p->failed = true;
    git_error_set_str(GIT_ERROR_OS, "cannot write the checkpoint pack");
    return -1;
  }
  return 0;
}

int cp_pack_blob(BoxCheckpoints *cp, git_oid *out, const void *data, size_t len)
{
  CpPack *p = cp->pack;
  if (!p || !p->active) return git_blob_create_from_buffer(out, cp->repo, data, len);
  /* libgit2's own write would look for it in every backend first, and
   * rescan the pack directory on each miss: one lookup without the rescan
   * (no other writer adds packs to this repository while a batch is open) */
  int rc = git_odb_hash(out, data, len, GIT_OBJECT_BLOB);
  if (rc == 0 && !git_odb_exists_ext(p->parent.odb, out, GIT_ODB_LOOKUP_NO_REFRESH))
    rc = pack_write(&p->parent, out, data, len, GIT_OBJECT_BLOB);
  return rc;
}

/* What a batch holds, given back: a whole tree's entries are megabytes
 * that boxd would otherwise keep. */
static void drop(CpPack *p)
{
  if (p->file) fclose(p->file);
  p->file = NULL;
  if (p->tmp) unlink(p->tmp);
  g_clear_pointer(&p->tmp, g_free);
  g_clear_pointer(&p->deflated, g_byte_array_unref);
  g_clear_pointer(&p->seen, g_hash_table_unref);
  g_clear_pointer(&p->entries, g_array_unref);
}

static void reset(CpPack *p)
{
  drop(p);
  p->deflated = g_byte_array_new();
  p->entries = g_array_new(FALSE, FALSE, sizeof(PackEntry));
  p->seen = g_hash_table_new_full(oid_hash, oid_equal, g_free, NULL);
  p->offset = 0;
  p->active = p->failed = false;
}

static void pack_free(git_odb_backend *backend)
{
  CpPack *p = (CpPack *)backend;
  drop(p);
  g_free(p->dir);
  g_free(p);
}

bool cp_pack_attach(BoxCheckpoints *cp)
{
  git_odb *odb = NULL;
  if (git_repository_odb(&odb, cp->repo) != 0) return false;
  git_odb_backend *loose = NULL;
  for (size_t i = 0; !loose && i < git_odb_num_backends(odb); i++)
    if (git_odb_get_backend(&loose, odb, i) != 0 || !loose->write) loose = NULL;
  if (!loose) {
    git_odb_free(odb);
    return false;
  }
  CpPack *p = g_new0(CpPack, 1);
  p->loose = loose;
  git_odb_init_backend(&p->parent, GIT_ODB_BACKEND_VERSION);
  p->parent.write = pack_write;
  p->parent.free = pack_free;
  p->dir = g_build_filename(git_repository_path(cp->repo), "objects", "pack", NULL);
  reset(p);
  /* above the loose (1) and packed (2) backends: every write comes here */
  bool ok = git_odb_add_backend(odb, &p->parent, 100) == 0;
  if (ok)
    cp->pack = p;
  else
    pack_free(&p->parent);
  git_odb_free(odb);
  return ok;
}

bool cp_pack_begin(BoxCheckpoints *cp)
{
  CpPack *p = cp->pack;
  if (!p) return false;
  reset(p);
  g_mkdir_with_parents(p->dir, 0755);
  p->tmp = g_build_filename(p->dir, "tmp_box_pack_XXXXXX", NULL);
  int fd = g_mkstemp_full(p->tmp, O_RDWR | O_CLOEXEC, 0644);
  p->file = fd >= 0 ? fdopen(fd, "w+") : NULL;
  if (!p->file) {
    if (fd >= 0) close(fd);
    reset(p);
    return false;
  }
  setvbuf(p->file, NULL, _IOFBF, FLUSH_AT);
  /* the count is written when the batch ends */
  static const guint8 head[12] = { 'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0 };
  fwrite(head, 1, sizeof head, p->file);
  p->offset = sizeof head;
  p->active = true;
  return true;
}

static void put32(GByteArray *a, guint32 v)
{
  guint32 be = GUINT32_TO_BE(v);
  g_byte_array_append(a, (const guint8 *)&be, 4);
}

static int cmp_entry(gconstpointer a, gconstpointer b)
{
  return git_oid_cmp(&((const PackEntry *)a)->oid, &((const PackEntry *)b)->oid);
}

/* The SHA-1 of the file's first len bytes. */
static bool file_sha1(int fd, guint64 len, guint8 digest[20])
{
  GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA1);
  guint8 *buf = g_malloc(FLUSH_AT);
  guint64 at = 0;
  while (at < len) {
    ssize_t n = pread(fd, buf, MIN((guint64)FLUSH_AT, len - at), (off_t)at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    g_checksum_update(sum, buf, n);
    at += (guint64)n;
  }
  gsize dlen = 20;
  g_checksum_get_digest(sum, digest, &dlen);
  g_checksum_free(sum);
  g_free(buf);
  return at == len;
}

/* The version 2 index of the pack whose checksum is sum. */
static GByteArray *index_of(CpPack *p, const guint8 sum[20])
{
  GArray *e = p->entries;
  g_array_sort(e, cmp_entry);
  GByteArray *idx = g_byte_array_sized_new(1072 + e->len * 28 + 40);
  static const guint8 magic[8] = { 0xff, 't', 'O', 'c', 0, 0, 0, 2 };
  g_byte_array_append(idx, magic, sizeof magic);
  guint32 fan[256] = { 0 };
  for (guint i = 0; i < e->len; i++) fan[g_array_index(e, PackEntry, i).oid.id[0]]++;
  for (guint i = 0, total = 0; i < 256; i++) put32(idx, total += fan[i]);
  for (guint i = 0; i < e->len; i++)
    g_byte_array_append(idx, g_array_index(e, PackEntry, i).oid.id, GIT_OID_RAWSZ);
  for (guint i = 0; i < e->len; i++) put32(idx, g_array_index(e, PackEntry, i).crc);
  /* an offset past 2 GiB goes to the table of large offsets */
  GByteArray *large = g_byte_array_new();
  for (guint i = 0; i < e->len; i++) {
    guint64 off = g_array_index(e, PackEntry, i).offset;
    if (off < 0x80000000u) {
      put32(idx, (guint32)off);
      continue;
    }
    put32(idx, 0x80000000u | (large->len / 8));
    put32(large, (guint32)(off >> 32));
    put32(large, (guint32)off);
  }
  g_byte_array_append(idx, large->data, large->len);
  g_byte_array_unref(large);
  g_byte_array_append(idx, sum, 20);
  GChecksum *c = g_checksum_new(G_CHECKSUM_SHA1);
  g_checksum_update(c, idx->data, idx->len);
  guint8 own[20];
  gsize olen = sizeof own;
  g_checksum_get_digest(c, own, &olen);
  g_checksum_free(c);
  g_byte_array_append(idx, own, sizeof own);
  return idx;
}

int cp_pack_end(BoxCheckpoints *cp, bool keep)
{
  CpPack *p = cp->pack;
  if (!p || !p->active) return 0;
  p->active = false;
  bool ok = keep && !p->failed && fflush(p->file) == 0;
  if (!ok || p->entries->len == 0) {
    reset(p);
    return ok ? 0 : -1;
  }
  guint32 count = GUINT32_TO_BE(p->entries->len);
  guint8 sum[20];
  int fd = fileno(p->file);
  ok = pwrite(fd, &count, 4, 8) == 4 && file_sha1(fd, p->offset, sum) &&
       pwrite(fd, sum, 20, (off_t)p->offset) == 20 && fchmod(fd, 0444) == 0;
  char hex[41];
  for (int i = 0; i < 20; i++) g_snprintf(hex + 2 * i, 3, "%02x", sum[i]);
  g_autofree char *base = g_strdup_printf("%s/pack-%s", p->dir, hex);
  g_autofree char *pack = g_strconcat(base, ".pack", NULL);
  g_autofree char *idx_path = g_strconcat(base, ".idx", NULL);
  if (ok && rename(p->tmp, pack) == 0) g_clear_pointer(&p->tmp, g_free);
  GByteArray *idx = ok && !p->tmp ? index_of(p, sum) : NULL;
  ok = idx && g_file_set_contents_full(idx_path, (const char *)idx->data, idx->len,
                                       G_FILE_SET_CONTENTS_CONSISTENT, 0444, NULL);
  if (idx) g_byte_array_unref(idx);
  if (!ok) {
    git_error_set_str(GIT_ERROR_OS, "cannot write the checkpoint pack");
    if (!p->tmp) unlink(pack);
  }
  reset(p);
  git_odb *odb = NULL;
  if (ok && git_repository_odb(&odb, cp->repo) == 0) {
    git_odb_refresh(odb); /* the pack's objects, readable now */
    git_odb_free(odb);
  }
  return ok ? 0 : -1;
}
