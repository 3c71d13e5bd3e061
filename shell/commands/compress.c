/* compress.c — the file handling gzip and xz share (compress.h).  Sizes
 * and times come from fstat of the descriptor already opened (no stat of a
 * path, which would be a decision of its own). */
#include <errno.h>
#include <stdarg.h>
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/compress.h"

void bx_pack_say(BxPack *p, int status, const char *fmt, ...)
{
  box_out_flush(p->c->out);
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_fdprintf(p->c->err, "%s: %s\n", p->cmd, m);
  if (status == 1 || (status && !p->status)) p->status = status;
}

bool bx_pack_put(BxPack *p, int fd, const void *data, size_t n)
{
  if (fd == -2) return true;
  if (fd < 0) {
    bx_put(p->c, data, n);
    return true;
  }
  return box_write_all(fd, data, n);
}

bool bx_pack_copy(BxPack *p, int in, int out, const char *name, const void *data, size_t n)
{
  for (;;) {
    if (!bx_pack_put(p, out, data, n)) {
      bx_ferr(p->c, p->cmd, name, errno);
      p->status = 1;
      return false;
    }
    ssize_t got = bx_read(in, p->in, BX_PACK_CHUNK);
    if (got <= 0) {
      if (got == 0) return true;
      bx_ferr(p->c, p->cmd, name, errno);
      p->status = 1;
      return false;
    }
    data = p->in;
    n = (size_t)got;
  }
}

static const char *ends_in(const char *name, const char *suffix)
{
  size_t n = strlen(name), k = strlen(suffix);
  return n > k && g_ascii_strcasecmp(name + n - k, suffix) == 0 ? name + n - k : NULL;
}

static const char *suffix_of(BxPack *p, const char *name)
{
  const char *at = p->suffix ? ends_in(name, p->suffix) : NULL;
  for (const char *const *s = p->codec->suffixes; *s && !at; s++) at = ends_in(name, *s);
  return at;
}

/* The output file created afresh (-f replaces one there).  -1 after the
 * message. */
static int create_out(BxPack *p, const char *out_name)
{
  int fd = open(out_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST && p->force && unlink(out_name) == 0)
    fd = open(out_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST)
    bx_pack_say(p, p->codec->exists_is_error ? 1 : 2, p->codec->texts[BX_PACK_EXISTS], out_name);
  else if (fd < 0) {
    bx_ferr(p->c, p->cmd, out_name, errno);
    p->status = 1;
  }
  return fd;
}

static char *out_name_of(BxPack *p, const char *name)
{
  if (!p->decompress) return g_strconcat(name, p->suffix ? p->suffix : p->codec->suffix, NULL);
  const char *s = suffix_of(p, name);
  /* .tgz and .txz are tarballs */
  bool tarball = g_ascii_strcasecmp(s, ".tgz") == 0 || g_ascii_strcasecmp(s, ".taz") == 0 ||
                 g_ascii_strcasecmp(s, ".txz") == 0;
  g_autofree char *stem = g_strndup(name, (size_t)(s - name));
  return g_strconcat(stem, tarball ? ".tar" : "", NULL);
}

static bool has_magic(const BxCodec *k, const unsigned char *b, ssize_t n)
{
  size_t m = strlen(k->magic);
  return n >= (ssize_t)m && memcmp(b, k->magic, m) == 0;
}

static void one(BxPack *p, const char *name, unsigned char type);

/* -r: each entry of the directory, in the order it gives them.  false
 * when name is no directory (the caller treats it as a file). */
static bool walk(BxPack *p, const char *name, unsigned char type)
{
  if (!p->recursive || strcmp(name, "-") == 0 || (type != DT_DIR && type != DT_UNKNOWN))
    return false;
  int err = 0;
  GArray *ents = bx_list_dir(name, &err);
  if (!ents) {
    if (err == ENOTDIR || err == ENOENT || err == ELOOP || type != DT_DIR) return false;
    bx_ferr(p->c, p->cmd, name, err);
    p->status = 1;
    return true;
  }
  for (guint i = 0; i < ents->len && !p->abort; i++) {
    BxDirEnt *e = &g_array_index(ents, BxDirEnt, i);
    size_t len = strlen(name);
    g_autofree char *path =
      g_strconcat(name, len && name[len - 1] == '/' ? "" : "/", e->name, NULL);
    one(p, path, e->type);
  }
  bx_dir_free(ents);
  return true;
}

/* No symbolic link is opened for a file that would replace it (-f, -c and
 * reading alone follow one, and xz's -k).  -1 with errno; ELOOP said as
 * the codec's warning when it has one (errno 0 then). */
static int open_in(BxPack *p, const char *name, bool to_stdout)
{
  if (to_stdout || p->force || strcmp(name, "-") == 0 || (p->keep && p->codec->keep_follows))
    return bx_open_in(p->c, name);
  int fd = box_open_file(name, O_RDONLY | O_NOCTTY | O_NOFOLLOW);
  if (fd < 0 && errno == ELOOP && p->codec->link_text) {
    bx_pack_say(p, 2, p->codec->link_text, name);
    errno = 0;
  }
  return fd;
}

static void one(BxPack *p, const char *name, unsigned char type)
{
  if (walk(p, name, type)) return;
  const BxCodec *k = p->codec;
  bool std = strcmp(name, "-") == 0;
  bool to_stdout = p->to_stdout || std || p->test;
  const char *has = suffix_of(p, name);
  if (!to_stdout && !p->decompress && has && !p->force) {
    /* -r passes over what is compressed already without a word (-v has one) */
    if (!p->recursive || p->verbose)
      bx_pack_say(p, k->has_suffix_status, k->texts[BX_PACK_HAS_SUFFIX], name, has);
    return;
  }
  /* -r decompresses, tests and lists only the names with a suffix */
  if (p->recursive && !p->verbose && p->decompress && !std && !has) return;
  bool bad_suffix = (!to_stdout || p->recursive) && p->decompress && !has && !std;
  if (bad_suffix && !k->format_first) {
    bx_pack_say(p, 2, k->texts[BX_PACK_UNKNOWN_SUFFIX], name);
    return;
  }
  int in = open_in(p, name, to_stdout);
  if (in < 0) {
    if (errno) {
      bx_ferr(p->c, p->cmd, name, errno);
      p->status = 1;
    }
    return;
  }
  ssize_t n = bx_read(in, p->in, BX_PACK_CHUNK);
  if (n < 0 && errno == EISDIR) {
    bx_pack_say(p, 2, k->texts[BX_PACK_IS_DIR], name);
    bx_close_in(p->c, in);
    return;
  }
  if (bad_suffix) {
    if (!has_magic(k, p->in, n))
      bx_pack_say(p, 1, k->texts[BX_PACK_NOT_FORMAT], name);
    else
      bx_pack_say(p, 2, k->texts[BX_PACK_UNKNOWN_SUFFIX], name);
    bx_close_in(p->c, in);
    return;
  }
  const char *shown = std ? k->stdin_name : name;
  if (p->decompress && p->force && to_stdout && (!p->test || k->force_copies_under_test) &&
      n >= 0 && !has_magic(k, p->in, n)) {
    bx_pack_copy(p, in, p->test ? -2 : -1, shown, p->in, (size_t)n);
    bx_close_in(p->c, in);
    return;
  }
  struct stat st = { 0 };
  if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) st.st_mtime = 0;
  g_autofree char *out_name = NULL;
  int out = p->test ? -2 : -1;
  if (!to_stdout) {
    out_name = out_name_of(p, name);
    out = create_out(p, out_name);
    if (out < 0) {
      bx_close_in(p->c, in);
      return;
    }
  }
  const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
  bool ok = p->decompress ? k->unpack(p, in, out, shown, n)
                          : k->pack(p, in, out, shown, std || p->no_name ? NULL : base,
                                    p->no_name ? 0 : st.st_mtime, n);
  bx_close_in(p->c, in);
  if ((p->list || p->verbose) && ok) {
    g_autofree char *listed = !p->list ? NULL : has ? out_name_of(p, name) : g_strdup(name);
    k->report(p, name, std ? NULL : p->list ? listed : out_name, &st);
  }
  if (out < 0) return;
  if (ok) {
    /* the new file takes the old one's mode and times */
    fchmod(out, st.st_mode & 07777);
    struct timespec ts[2] = { st.st_atim, st.st_mtim };
    futimens(out, ts);
  }
  if (close(out) < 0 && ok) {
    bx_ferr(p->c, p->cmd, out_name, errno);
    p->status = 1;
    ok = false;
  }
  if (!ok)
    unlink(out_name);
  else if (!p->keep)
    unlink(name);
}

int bx_pack_run(BxPack *p)
{
  if (p->test) p->decompress = true;
  p->in = g_malloc(BX_PACK_CHUNK);
  p->out = g_malloc(BX_PACK_CHUNK);
  int n;
  char **names = bx_file_operands(p->c, &n);
  p->operands = n;
  for (int i = 0; i < n && !p->abort; i++) one(p, names[i], DT_UNKNOWN);
  if (p->list) p->codec->report(p, NULL, NULL, NULL);
  g_free(p->in);
  g_free(p->out);
  return p->status;
}
