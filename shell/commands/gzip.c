/* gzip.c — GNU gzip, gunzip (gzip -d) and zcat (gzip -dc) with -c -d -k
 * -f -n -q -t -1..-9, over zlib.  The header is written as GNU gzip
 * writes it (name, time, extra flags, OS 3) around zlib's raw deflate, so
 * the same input at the same level gives gzip's bytes.  Sizes and times
 * come from fstat of the descriptor already opened (no stat of a path). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "shell/commands/commands-private.h"

#define CHUNK (1 << 17)

typedef struct {
  BoxCmd *c;
  bool to_stdout, decompress, keep, force, no_name, quiet, test;
  int level;
  int status; /* 1 error, 2 warning (an error wins) */
  unsigned char *in, *out;
} Gz;

static const char longopts[] = "stdout=c to-stdout=c decompress=d uncompress=d keep=k force=f "
                               "no-name=n name=N quiet=q test=t fast=1 best=9";

static void warn(Gz *g)
{
  if (!g->status) g->status = 2;
}

/* GNU sets a format complaint off with a blank line. */
static void format_error(Gz *g, const char *name, const char *what)
{
  box_out_flush(g->c->out);
  box_fdprintf(g->c->err, "\ngzip: %s: %s\n", name, what);
  g->status = 1;
}

static bool put(Gz *g, int fd, const void *p, size_t n)
{
  if (fd < 0) {
    bx_put(g->c, p, n);
    return true;
  }
  return box_write_all(fd, p, n);
}

/* Compresses in to out (c->out when out < 0), as one gzip member.  first,
 * n: what was already read of in.  false after the message. */
static bool deflate_fd(Gz *g, int in, int out, const char *name, const char *stored,
                       time_t mtime, ssize_t n)
{
  unsigned char h[10] = { 0x1f, 0x8b, 8, stored ? 8 : 0, (unsigned char)mtime,
                          (unsigned char)(mtime >> 8), (unsigned char)(mtime >> 16),
                          (unsigned char)(mtime >> 24), g->level == 9 ? 2 : g->level == 1 ? 4 : 0,
                          3 };
  bool ok = put(g, out, h, sizeof h);
  if (ok && stored) ok = put(g, out, stored, strlen(stored) + 1);
  z_stream z = { 0 };
  deflateInit2(&z, g->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  uLong crc = crc32(0, NULL, 0), size = 0;
  for (;;) {
    if (n < 0) {
      bx_ferr(g->c, "gzip", name, errno);
      g->status = 1;
      ok = false;
      break;
    }
    crc = crc32(crc, g->in, (uInt)n);
    size += (uLong)n;
    z.next_in = g->in;
    z.avail_in = (uInt)n;
    int flush = n == 0 ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = g->out;
      z.avail_out = CHUNK;
      deflate(&z, flush);
      if (ok && !put(g, out, g->out, CHUNK - z.avail_out)) ok = false;
    } while (z.avail_out == 0);
    if (n == 0 || !ok) break;
    n = bx_read(in, g->in, CHUNK);
  }
  deflateEnd(&z);
  unsigned char t[8] = { (unsigned char)crc,  (unsigned char)(crc >> 8),  (unsigned char)(crc >> 16),
                         (unsigned char)(crc >> 24), (unsigned char)size, (unsigned char)(size >> 8),
                         (unsigned char)(size >> 16), (unsigned char)(size >> 24) };
  if (ok) ok = put(g, out, t, sizeof t);
  return ok;
}

/* Decompresses every member of in (n bytes of it already read) to out;
 * out == -2 discards (-t).  false after the message. */
static bool inflate_fd(Gz *g, int in, int out, const char *name, ssize_t n)
{
  if (n >= 0 && (n < 2 || g->in[0] != 0x1f || g->in[1] != 0x8b)) {
    if (n == 0)
      format_error(g, name, "unexpected end of file");
    else
      format_error(g, name, "not in gzip format");
    return false;
  }
  z_stream z = { 0 };
  inflateInit2(&z, 31);
  bool ok = true, ended = false;
  z.next_in = g->in;
  z.avail_in = (uInt)(n > 0 ? n : 0);
  while (ok) {
    if (z.avail_in == 0) {
      n = bx_read(in, g->in, CHUNK);
      if (n < 0) {
        bx_ferr(g->c, "gzip", name, errno);
        g->status = 1;
        ok = false;
        break;
      }
      if (n == 0) {
        if (!ended) format_error(g, name, "unexpected end of file"), ok = false;
        break;
      }
      z.next_in = g->in;
      z.avail_in = (uInt)n;
    }
    if (ended) {
      /* another member, or what follows the last */
      if (z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b) {
        inflateReset(&z);
        ended = false;
      } else {
        box_out_flush(g->c->out);
        box_fdprintf(g->c->err, "\ngzip: %s: decompression OK, trailing garbage ignored\n", name);
        warn(g);
        break;
      }
    }
    z.next_out = g->out;
    z.avail_out = CHUNK;
    int r = inflate(&z, Z_NO_FLUSH);
    if (out != -2 && !put(g, out, g->out, CHUNK - z.avail_out)) {
      bx_ferr(g->c, "gzip", name, errno);
      g->status = 1;
      ok = false;
    } else if (r == Z_STREAM_END) {
      ended = true;
    } else if (r == Z_DATA_ERROR) {
      format_error(g, name,
                   z.msg && strstr(z.msg, "check") ? "invalid compressed data--crc error"
                                                   : "invalid compressed data--format violated");
      ok = false;
    } else if (r != Z_OK && r != Z_BUF_ERROR) {
      format_error(g, name, "invalid compressed data--format violated");
      ok = false;
    }
  }
  inflateEnd(&z);
  return ok;
}

static const char *gz_suffix(const char *name)
{
  static const char *const suffixes[] = { ".gz", "-gz", ".z", "-z", "_z", ".tgz", ".taz" };
  size_t n = strlen(name);
  for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
    size_t k = strlen(suffixes[i]);
    if (n > k && g_ascii_strcasecmp(name + n - k, suffixes[i]) == 0) return name + n - k;
  }
  return NULL;
}

/* The output file for name: out_name created afresh (-f replaces one
 * there).  -1 after the message. */
static int create_out(Gz *g, const char *out_name, mode_t mode)
{
  int fd = open(out_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0600);
  if (fd < 0 && errno == EEXIST && g->force && unlink(out_name) == 0)
    fd = open(out_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0600);
  if (fd < 0 && errno == EEXIST) {
    box_out_flush(g->c->out);
    box_fdprintf(g->c->err, "gzip: %s already exists;\tnot overwritten\n", out_name);
    warn(g);
  } else if (fd < 0) {
    bx_ferr(g->c, "gzip", out_name, errno);
    g->status = 1;
  }
  return fd;
}

static void one(Gz *g, const char *name)
{
  bool std = strcmp(name, "-") == 0;
  const char *shown = std ? "stdin" : name;
  bool to_stdout = g->to_stdout || std || g->test;
  if (!to_stdout && !g->decompress && gz_suffix(name) && !g->force) {
    bx_err(g->c, "gzip", "%s already has %s suffix -- unchanged", name, gz_suffix(name));
    warn(g);
    return;
  }
  if (!to_stdout && g->decompress && !gz_suffix(name)) {
    bx_err(g->c, "gzip", "%s: unknown suffix -- ignored", name);
    warn(g);
    return;
  }
  int in = bx_open_in(g->c, name);
  if (in < 0) {
    bx_ferr(g->c, "gzip", name, errno);
    g->status = 1;
    return;
  }
  ssize_t n = bx_read(in, g->in, CHUNK);
  if (n < 0 && errno == EISDIR) {
    bx_err(g->c, "gzip", "%s is a directory -- ignored", name);
    warn(g);
    bx_close_in(g->c, in);
    return;
  }
  struct stat st = { 0 };
  if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) st.st_mtime = 0;
  g_autofree char *out_name = NULL;
  int out = g->test ? -2 : -1;
  if (!to_stdout) {
    out_name = g->decompress ? g_strndup(name, (size_t)(gz_suffix(name) - name))
                             : g_strconcat(name, ".gz", NULL);
    if (g->decompress && g_str_has_suffix(name, "tgz")) {
      char *tar = g_strconcat(out_name, ".tar", NULL);
      g_free(out_name);
      out_name = tar;
    }
    out = create_out(g, out_name, st.st_mode);
    if (out < 0) {
      bx_close_in(g->c, in);
      return;
    }
  }
  const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
  bool ok = g->decompress
              ? inflate_fd(g, in, out, shown, n)
              : deflate_fd(g, in, out, shown, std || g->no_name ? NULL : base,
                           g->no_name ? 0 : st.st_mtime, n);
  bx_close_in(g->c, in);
  if (out < 0) return;
  if (ok) {
    /* the new file takes the old one's mode and times, as GNU's does */
    fchmod(out, st.st_mode & 07777);
    struct timespec ts[2] = { st.st_atim, st.st_mtim };
    futimens(out, ts);
  }
  if (close(out) < 0 && ok) {
    bx_ferr(g->c, "gzip", out_name, errno);
    g->status = 1;
    ok = false;
  }
  if (!ok)
    unlink(out_name);
  else if (!g->keep)
    unlink(name);
}

int box_cmd_gzip(BoxCmd *c)
{
  const char *cmd = c->argv[0];
  const char *slash = strrchr(cmd, '/');
  if (slash) cmd = slash + 1;
  Gz g = { .c = c, .level = 6 };
  g.decompress = strcmp(cmd, "gunzip") == 0 || strcmp(cmd, "zcat") == 0;
  g.to_stdout = strcmp(cmd, "zcat") == 0;
  BX_EACH_OPTION (o, c, "gzip", "cdkfnNqt123456789", longopts) {
    if (o >= '1' && o <= '9') {
      g.level = o - '0';
      continue;
    }
    bool *const flags[] = { &g.to_stdout, &g.decompress, &g.keep, &g.force, &g.no_name, &g.quiet,
                            &g.test };
    if (bx_set_flag(o, "cdkfnqt", flags)) continue;
    if (o == 'N') {
      g.no_name = false;
      continue;
    }
    return 1;
  }
  if (g.test) g.decompress = true;
  g.in = g_malloc(CHUNK);
  g.out = g_malloc(CHUNK);
  int n;
  char **names = bx_file_operands(c, &n);
  for (int i = 0; i < n; i++) one(&g, names[i]);
  g_free(g.in);
  g_free(g.out);
  return g.status;
}
