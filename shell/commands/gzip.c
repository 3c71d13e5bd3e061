/* gzip.c — GNU gzip, gunzip (gzip -d) and zcat (gzip -dc) with -c -d -k
 * -f -n -q -t -1..-9, over zlib.  The header is written as GNU gzip
 * writes it (name, time, extra flags, OS 3) around zlib's raw deflate, so
 * the same input at the same level gives gzip's bytes (but for input that
 * does not compress, where the two deflates may block it differently).  Sizes and times
 * come from fstat of the descriptor already opened (no stat of a path). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/compress.h"
#include "shell/commands/zlib_dl.h"

#define CHUNK BX_PACK_CHUNK

typedef BxPack Gz;

static const char longopts[] = "stdout=c to-stdout=c decompress=d uncompress=d keep=k force=f "
                               "no-name=n name=N quiet=q test=t fast=1 best=9 list=l "
                               "recursive=r suffix=S: verbose=v";

/* What -l needs of the file unpacked last, and the totals so far. */
typedef struct {
  uint64_t packed;   /* bytes read, headers included */
  uint64_t unpacked; /* of the last member, as its trailer has it */
  uint32_t crc;      /* of the last member */
  int members;
  size_t header;  /* the first member's header, in bytes */
  time_t stamp;   /* the first member's time */
  char *name;     /* the first member's name, NULL when none */
  bool tail;      /* something followed the last member */
  uint64_t plain; /* read, compressing */
  bool named, titled;
  uint64_t total_in, total_out;
  size_t total_header; /* GNU's ratio of the totals takes the last file's */
} GzSeen;

/* The first member's header at b (n bytes): its length, time and name. */
static void read_header(GzSeen *s, const unsigned char *b, size_t n)
{
  g_clear_pointer(&s->name, g_free);
  s->header = n;
  if (n < 10) return;
  s->stamp =
    (time_t)((uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24);
  size_t at = 10;
  if (b[3] & 4) at = at + 2 < n ? at + 2 + (b[at] | (size_t)b[at + 1] << 8) : n;
  for (int field = 8; field <= 16; field *= 2) {
    if (!(b[3] & field) || at >= n) continue;
    const unsigned char *end = memchr(b + at, 0, n - at);
    if (!end) {
      at = n;
      break;
    }
    if (field == 8) s->name = g_strndup((const char *)b + at, (size_t)(end - (b + at)));
    at = (size_t)(end - b) + 1;
  }
  if (b[3] & 2) at += 2;
  s->header = at;
}

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
  GzSeen *seen = g->seen;
  bool ok = bx_pack_put(g, out, h, sizeof h);
  if (ok && stored) ok = bx_pack_put(g, out, stored, strlen(stored) + 1);
  seen->header = sizeof h + (stored ? strlen(stored) + 1 : 0);
  seen->packed = seen->header + 8;
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
      seen->packed += CHUNK - z.avail_out;
    } while (z.avail_out == 0);
    if (n == 0 || !ok) break;
    n = bx_read(in, g->in, CHUNK);
  }
  deflateEnd(&z);
  seen->plain = size;
  unsigned char t[8] = { (unsigned char)crc,          (unsigned char)(crc >> 8),
                         (unsigned char)(crc >> 16),  (unsigned char)(crc >> 24),
                         (unsigned char)size,         (unsigned char)(size >> 8),
                         (unsigned char)(size >> 16), (unsigned char)(size >> 24) };
  if (ok) ok = bx_pack_put(g, out, t, sizeof t);
  return ok;
}

/* Zeros after the last member (what a block device pads with) are
 * passed over without a word: true when all that is left of in is zeros
 * (all of it is read). */
static bool zeros_to_end(Gz *g, int in, const unsigned char *rest, size_t n)
{
  if (!n || rest[0]) return false;
  for (;;) {
    for (size_t i = 0; i < n; i++)
      if (rest[i]) return false;
    ssize_t got = bx_read(in, g->in, CHUNK);
    if (got <= 0) return got == 0;
    rest = g->in;
    n = (size_t)got;
  }
}

/* Decompresses every member of in (n bytes of it already read) to out;
 * out == -2 discards (-t).  false after the message. */
static bool inflate_fd(Gz *g, int in, int out, const char *name, ssize_t n)
{
  GzSeen *seen = g->seen;
  seen->total_header = 0; /* a file opened, listed or not, zeroes it for GNU's totals */
  if (n == 0 || n == 1) {
    data_error(g, name, "unexpected end of file");
    return false;
  }
  if (n > 0 && (g->in[0] != 0x1f || g->in[1] != 0x8b)) {
    format_error(g, name, "not in gzip format");
    return false;
  }
  seen->packed = (uint64_t)n;
  seen->members = 0;
  seen->tail = false;
  read_header(seen, g->in, (size_t)n);
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
      seen->packed += (uint64_t)n;
    }
    if (ended) {
      /* another member, or what follows the last */
      if (z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b) {
        inflateReset(&z);
        ended = false;
      } else {
        seen->tail = true;
        if (zeros_to_end(g, in, z.next_in, z.avail_in)) break;
        if (g->force && out < 0) {
          /* -f to standard output: what follows the last member is copied */
          ok = bx_pack_copy(g, in, out, name, z.next_in, z.avail_in);
        } else {
          box_out_flush(g->c->out);
          box_fdprintf(g->c->err, "\ngzip: %s: decompression OK, trailing garbage ignored\n", name);
          if (!g->status) g->status = 2;
        }
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
      seen->members++;
      seen->crc = (uint32_t)z.adler;
      seen->unpacked = z.total_out;
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

/* GNU's ratio: what was saved, of the uncompressed size, headers apart */
static void put_ratio(BoxCmd *c, uint64_t in, uint64_t out, size_t header)
{
  double saved = (double)out - ((double)in - (double)header);
  box_out_printf(c->out, "%5.1f%%", out ? 100.0 * saved / (double)out : 0.0);
}

/* -v: "name:\t ratio -- replaced with to" on stderr, as gzip says it */
static void gz_verbose(BxPack *p, const char *name, const char *to)
{
  GzSeen *s = p->seen;
  bool std = strcmp(name, "-") == 0;
  /* gzip says nothing of standard input decompressed */
  if (std && p->decompress && !p->test) return;
  box_out_flush(p->c->out);
  GString *m = g_string_new(NULL);
  if (!std) g_string_append_printf(m, "%s:\t", name);
  if (p->test) {
    g_string_append(m, " OK");
  } else {
    size_t header = p->decompress && s->members != 1 ? 0 : s->header + 8;
    uint64_t plain = p->decompress ? s->unpacked : s->plain;
    double saved = (double)plain - ((double)s->packed - (double)header);
    g_string_append_printf(m, "%5.1f%%", plain ? 100.0 * saved / (double)plain : 0.0);
    if (!std)
      g_string_append_printf(m, " -- %s %s", p->keep ? "created" : "replaced with",
                             to ? to : "stdout");
  }
  box_fdprintf(p->c->err, "%s\n", m->str);
  g_string_free(m, TRUE);
}

static void gz_report(BxPack *p, const char *name, const char *shown, const struct stat *st)
{
  GzSeen *s = p->seen;
  BoxCmd *c = p->c;
  if (!p->list) {
    gz_verbose(p, name, shown);
    return;
  }
  if (!name) {
    if (p->quiet || p->operands < 2 || !s->total_in || !s->total_out) return;
    box_out_printf(c->out, "%s%19ju %19ju ", p->verbose ? "                            " : "",
                   (uintmax_t)s->total_in, (uintmax_t)s->total_out);
    put_ratio(c, s->total_in, s->total_out, s->total_header);
    box_out_printf(c->out, " (totals)\n");
    return;
  }
  /* gzip lists nothing of a file with more after its last member */
  if (s->tail) return;
  if (!s->titled) {
    s->titled = true;
    if (p->verbose) box_out_printf(c->out, "method  crc     date  time  ");
    if (!p->quiet)
      box_out_printf(c->out, "%19s %19s  ratio uncompressed_name\n", "compressed", "uncompressed");
  }
  if (p->verbose) {
    static const char months[][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    time_t t = s->named && s->stamp ? s->stamp : st->st_mtime;
    struct tm tm;
    box_out_printf(c->out, "defla %08x ", (unsigned)s->crc);
    if (localtime_r(&t, &tm))
      box_out_printf(c->out, "%s%3d %02d:%02d ", months[tm.tm_mon], tm.tm_mday, tm.tm_hour,
                     tm.tm_min);
    else
      box_out_printf(c->out, "??? ?? ??:?? ");
  }
  size_t header = s->members == 1 ? s->header + 8 : 0;
  box_out_printf(c->out, "%19ju %19ju ", (uintmax_t)s->packed, (uintmax_t)s->unpacked);
  put_ratio(c, s->packed, s->unpacked, header);
  g_autofree char *dir = g_path_get_dirname(name);
  g_autofree char *stored =
    s->named && s->name && shown
      ? (strcmp(dir, ".") == 0 || strchr(name, '/') == NULL ? g_strdup(s->name)
                                                            : g_strconcat(dir, "/", s->name, NULL))
      : NULL;
  box_out_printf(c->out, " %s\n", stored ? stored : shown ? shown : "stdout");
  s->total_in += s->packed;
  s->total_out += s->unpacked;
  s->total_header = header;
}

static const char *const gz_suffixes[] = { ".gz", "-gz", ".z", "-z", "_z", ".tgz", ".taz", NULL };

/* in BxCodec's order: suffixes, magic, stdin, then the messages */
static const BxCodec gz_codec = {
  ".gz",
  gz_suffixes,
  "\x1f\x8b",
  "stdin",
  false,
  { "%s already exists;\tnot overwritten", "%s already has %s suffix -- unchanged",
    "%s: unknown suffix -- ignored", "%s is a directory -- ignored", "%s: not in gzip format" },
  false,
  0,
  deflate_fd,
  inflate_fd,
  true,
  gz_report,
  NULL,
  false,
};

int box_cmd_gzip(BoxCmd *c)
{
  const char *cmd = c->argv[0];
  const char *slash = strrchr(cmd, '/');
  if (slash) cmd = slash + 1;
  Gz g = { .c = c, .cmd = "gzip", .codec = &gz_codec, .level = 6 };
  g.decompress = strcmp(cmd, "gunzip") == 0 || strcmp(cmd, "zcat") == 0;
  g.to_stdout = strcmp(cmd, "zcat") == 0;
  GzSeen seen = { 0 };
  BX_EACH_OPTION_TRY (o, c, "gzip", "cdkfnNqt123456789lrS:v", longopts,
                      "Try `@ --help' for more information.") {
    if (o >= '1' && o <= '9') {
      g.level = o - '0';
      continue;
    }
    bool *const flags[] = { &g.to_stdout, &g.decompress, &g.keep,      &g.force,   &g.no_name,
                            &g.quiet,     &g.test,       &g.recursive, &g.verbose, &g.list };
    if (bx_set_flag(o, "cdkfnqtrvl", flags)) continue;
    if (o == 'N') {
      g.no_name = false;
      seen.named = true;
      continue;
    }
    if (o == 'S') {
      if (!*optarg) {
        bx_err(c, "gzip", "invalid suffix '%s'", optarg);
        return 1;
      }
      g.suffix = optarg;
      continue;
    }
    return 1;
  }
  if (g.list) g.test = true;
  g.seen = &seen;
  if (!(box_zlib = box_dl_command(&box_zlib_dl, c, g.cmd))) return 1;
  int status = bx_pack_run(&g);
  g_free(seen.name);
  return status;
}
