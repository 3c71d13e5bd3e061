/* gzip.c — GNU gzip, gunzip (gzip -d) and zcat (gzip -dc) with -c -d -k
 * -f -n -q -t -1..-9, over zlib.  The header is written as GNU gzip
 * writes it (name, time, extra flags, OS 3) around zlib's raw deflate, so
 * the same input at the same level gives gzip's bytes (but for input that
 * does not compress, where the two deflates may block it differently).  Sizes and times
 * come from fstat of the descriptor already opened (no stat of a path). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/compress.h"
#include "shell/commands/zlib_dl.h"

#define CHUNK BX_PACK_CHUNK

typedef BxPack Gz;

static const char longopts[] = "stdout=c to-stdout=c decompress=d uncompress=d keep=k force=f "
                               "no-name=n name=N quiet=q test=t fast=1 best=9";

/* GNU sets a format complaint off with a blank line. */
static void format_error(Gz *g, const char *name, const char *what)
{
  box_out_flush(g->c->out);
  box_fdprintf(g->c->err, "\ngzip: %s: %s\n", name, what);
  g->status = 1;
}

/* Broken compressed data ends gzip's run: the operands after it are not
 * looked at. */
static void data_error(Gz *g, const char *name, const char *what)
{
  format_error(g, name, what);
  g->abort = true;
}

/* Compresses in to out (c->out when out < 0), as one gzip member.  first,
 * n: what was already read of in.  false after the message. */
static bool deflate_fd(Gz *g, int in, int out, const char *name, const char *stored, time_t mtime,
                       ssize_t n)
{
  unsigned char h[10] = { 0x1f,
                          0x8b,
                          8,
                          stored ? 8 : 0,
                          (unsigned char)mtime,
                          (unsigned char)(mtime >> 8),
                          (unsigned char)(mtime >> 16),
                          (unsigned char)(mtime >> 24),
                          g->level == 9   ? 2
                          : g->level == 1 ? 4
                                          : 0,
                          3 };
  bool ok = bx_pack_put(g, out, h, sizeof h);
  if (ok && stored) ok = bx_pack_put(g, out, stored, strlen(stored) + 1);
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
      if (ok && !bx_pack_put(g, out, g->out, CHUNK - z.avail_out)) ok = false;
    } while (z.avail_out == 0);
    if (n == 0 || !ok) break;
    n = bx_read(in, g->in, CHUNK);
  }
  deflateEnd(&z);
  unsigned char t[8] = { (unsigned char)crc,          (unsigned char)(crc >> 8),
                         (unsigned char)(crc >> 16),  (unsigned char)(crc >> 24),
                         (unsigned char)size,         (unsigned char)(size >> 8),
                         (unsigned char)(size >> 16), (unsigned char)(size >> 24) };
  if (ok) ok = bx_pack_put(g, out, t, sizeof t);
  return ok;
}

/* Decompresses every member of in (n bytes of it already read) to out;
 * out == -2 discards (-t).  false after the message. */
static bool inflate_fd(Gz *g, int in, int out, const char *name, ssize_t n)
{
  if (n == 0 || n == 1) {
    data_error(g, name, "unexpected end of file");
    return false;
  }
  if (n > 0 && (g->in[0] != 0x1f || g->in[1] != 0x8b)) {
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
        if (!ended) data_error(g, name, "unexpected end of file"), ok = false;
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
      } else if (g->force && out < 0) {
        /* -f to standard output: what follows the last member is copied */
        ok = bx_pack_copy(g, in, out, name, z.next_in, z.avail_in);
        break;
      } else {
        box_out_flush(g->c->out);
        box_fdprintf(g->c->err, "\ngzip: %s: decompression OK, trailing garbage ignored\n", name);
        if (!g->status) g->status = 2;
        break;
      }
    }
    z.next_out = g->out;
    z.avail_out = CHUNK;
    int r = inflate(&z, Z_NO_FLUSH);
    if (!bx_pack_put(g, out, g->out, CHUNK - z.avail_out)) {
      bx_ferr(g->c, "gzip", name, errno);
      g->status = 1;
      ok = false;
    } else if (r == Z_STREAM_END) {
      ended = true;
    } else if (r == Z_DATA_ERROR) {
      data_error(g, name,
                 z.msg && strstr(z.msg, "check") ? "invalid compressed data--crc error"
                                                 : "invalid compressed data--format violated");
      ok = false;
    } else if (r != Z_OK && r != Z_BUF_ERROR) {
      data_error(g, name, "invalid compressed data--format violated");
      ok = false;
    }
  }
  inflateEnd(&z);
  return ok;
}

static const char *const gz_suffixes[] = { ".gz", "-gz", ".z", "-z", "_z", ".tgz", ".taz", NULL };

/* in BxCodec's order: suffixes, magic, stdin, then the messages */
static const BxCodec gz_codec = {
  ".gz",
  gz_suffixes,
  "\x1f\x8b",
  "stdin",
  false,
  { "%s already exists;\tnot overwritten", "%s already has .gz suffix -- unchanged",
    "%s: unknown suffix -- ignored", "%s is a directory -- ignored", "%s: not in gzip format" },
  false,
  0,
  deflate_fd,
  inflate_fd,
  true,
};

int box_cmd_gzip(BoxCmd *c)
{
  const char *cmd = c->argv[0];
  const char *slash = strrchr(cmd, '/');
  if (slash) cmd = slash + 1;
  Gz g = { .c = c, .cmd = "gzip", .codec = &gz_codec, .level = 6 };
  g.decompress = strcmp(cmd, "gunzip") == 0 || strcmp(cmd, "zcat") == 0;
  g.to_stdout = strcmp(cmd, "zcat") == 0;
  bool quiet = false;
  BX_EACH_OPTION_TRY (o, c, "gzip", "cdkfnNqt123456789", longopts,
                      "Try `@ --help' for more information.") {
    if (o >= '1' && o <= '9') {
      g.level = o - '0';
      continue;
    }
    bool *const flags[] = { &g.to_stdout, &g.decompress, &g.keep, &g.force,
                            &g.no_name,   &quiet,        &g.test };
    if (bx_set_flag(o, "cdkfnqt", flags)) continue;
    if (o == 'N') {
      g.no_name = false;
      continue;
    }
    return 1;
  }
  if (!(box_zlib = box_dl_command(&box_zlib_dl, c, g.cmd))) return 1;
  return bx_pack_run(&g);
}
