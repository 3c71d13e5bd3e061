/* xz.c — xz and unxz (xz -d) of xz-utils with -c -d -k -f -t -l -e -T -0..-9 over
 * liblzma: the same encoder xz runs, so the same bytes. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/compress.h"
#include "shell/commands/lzma_dl.h"

static const char longopts[] = "stdout=c to-stdout=c decompress=d uncompress=d keep=k force=f "
                               "test=t quiet=q fast=0 best=9 extreme=e threads=T: list=l";

/* Runs s over in (n bytes already read) into out.  false after the message. */
static bool run(BxPack *p, lzma_stream *s, int in, int out, const char *name, ssize_t n)
{
  bool ok = true;
  lzma_action action = LZMA_RUN;
  s->next_in = p->in;
  s->avail_in = n > 0 ? (size_t)n : 0;
  if (n == 0) action = LZMA_FINISH;
  for (;;) {
    if (s->avail_in == 0 && action == LZMA_RUN) {
      n = bx_read(in, p->in, BX_PACK_CHUNK);
      if (n < 0) {
        bx_ferr(p->c, p->cmd, name, errno);
        p->status = 1;
        ok = false;
        break;
      }
      s->next_in = p->in;
      s->avail_in = (size_t)n;
      if (n == 0) action = LZMA_FINISH;
    }
    s->next_out = p->out;
    s->avail_out = BX_PACK_CHUNK;
    lzma_ret r = lzma_code(s, action);
    if (!bx_pack_put(p, out, p->out, BX_PACK_CHUNK - s->avail_out)) {
      bx_ferr(p->c, p->cmd, name, errno);
      p->status = 1;
      ok = false;
      break;
    }
    if (r == LZMA_STREAM_END) break;
    if (r == LZMA_OK) continue;
    const char *why = r == LZMA_FORMAT_ERROR    ? "File format not recognized"
                      : r == LZMA_DATA_ERROR    ? "Compressed data is corrupt"
                      : r == LZMA_BUF_ERROR     ? "Unexpected end of input"
                      : r == LZMA_MEM_ERROR     ? "Cannot allocate memory"
                      : r == LZMA_OPTIONS_ERROR ? "Unsupported options"
                                                : "Internal error (bug)";
    g_autofree char *fmt = g_strconcat("%s: ", why, NULL);
    bx_pack_say(p, 1, fmt, name);
    ok = false;
    break;
  }
  lzma_end(s);
  return ok;
}

static bool pack(BxPack *p, int in, int out, const char *name, const char *stored, time_t mtime,
                 ssize_t n)
{
  (void)stored;
  (void)mtime;
  lzma_stream s = LZMA_STREAM_INIT;
  uint32_t preset = (uint32_t)p->level | (p->extreme ? LZMA_PRESET_EXTREME : 0);
  /* -T other than 1 is xz's multithreaded format (blocks that record their
   * sizes), the same bytes for any number of threads: one thread makes it */
  lzma_mt mt = { .threads = 1, .preset = preset, .check = LZMA_CHECK_CRC64 };
  lzma_ret r = p->threads == 1 ? lzma_easy_encoder(&s, preset, LZMA_CHECK_CRC64)
                               : lzma_stream_encoder_mt(&s, &mt);
  if (r != LZMA_OK) {
    bx_pack_say(p, 1, "%s: Cannot allocate memory", name);
    return false;
  }
  return run(p, &s, in, out, name, n);
}

/* -l seeks to a file's index, at its end */
static const char no_stdin[] = "--list does not support reading from standard input";

/* What -l says of a file, and of all of them. */
typedef struct {
  uint64_t streams, blocks, packed, unpacked;
  uint32_t checks; /* a bit a check type */
} XzCounts;

typedef struct {
  XzCounts file, total;
  int files;
} XzSeen;

/* -l: the index of in (n bytes of it read) into p->seen, as liblzma's
 * file-info decoder finds it, seeking where it asks.  false after the
 * message. */
static bool read_index(BxPack *p, int in, const char *name, ssize_t n)
{
  if (in == p->c->in) {
    bx_pack_say(p, 1, "%s", no_stdin);
    return false;
  }
  struct stat st;
  if (fstat(in, &st) < 0) {
    bx_ferr(p->c, p->cmd, name, errno);
    p->status = 1;
    return false;
  }
  if (st.st_size == 0) {
    bx_pack_say(p, 1, "%s: File is empty", name);
    return false;
  }
  lzma_stream s = LZMA_STREAM_INIT;
  lzma_index *idx = NULL;
  lzma_ret r = lzma_file_info_decoder(&s, &idx, UINT64_MAX, (uint64_t)st.st_size);
  s.next_in = p->in;
  s.avail_in = n > 0 ? (size_t)n : 0;
  while (r == LZMA_OK) {
    if (s.avail_in == 0) {
      n = bx_read(in, p->in, BX_PACK_CHUNK);
      if (n < 0) {
        bx_ferr(p->c, p->cmd, name, errno);
        p->status = 1;
        lzma_end(&s);
        return false;
      }
      s.next_in = p->in;
      s.avail_in = (size_t)n;
    }
    r = lzma_code(&s, LZMA_RUN);
    if (r == LZMA_SEEK_NEEDED) {
      r = lseek(in, (off_t)s.seek_pos, SEEK_SET) < 0 ? LZMA_PROG_ERROR : LZMA_OK;
      s.avail_in = 0;
    }
  }
  lzma_end(&s);
  if (r != LZMA_STREAM_END) {
    const char *why = r == LZMA_FORMAT_ERROR ? "File format not recognized"
                      : r == LZMA_MEM_ERROR  ? "Cannot allocate memory"
                                             : "Compressed data is corrupt";
    g_autofree char *fmt = g_strconcat("%s: ", why, NULL);
    bx_pack_say(p, 1, fmt, name);
    return false;
  }
  XzCounts *x = &((XzSeen *)p->seen)->file;
  x->streams = lzma_index_stream_count(idx);
  x->blocks = lzma_index_block_count(idx);
  x->packed = lzma_index_file_size(idx);
  x->unpacked = lzma_index_uncompressed_size(idx);
  x->checks = lzma_index_checks(idx);
  lzma_index_end(idx, NULL);
  return true;
}

static bool unpack(BxPack *p, int in, int out, const char *name, ssize_t n)
{
  if (p->list) return read_index(p, in, name, n);
  /* xz calls what is shorter than the magic (six bytes: the string and
   * its NUL) or does not start with it "not recognized" */
  size_t m = strlen(p->codec->magic) + 1;
  if (n >= 0 && ((size_t)n < m || memcmp(p->in, p->codec->magic, m) != 0)) {
    bx_pack_say(p, 1, p->codec->texts[BX_PACK_NOT_FORMAT], name);
    return false;
  }
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
    bx_pack_say(p, 1, "%s: Cannot allocate memory", name);
    return false;
  }
  return run(p, &s, in, out, name, n);
}

/* xz's sizes: bytes below 10000, else KiB, MiB… with one decimal */
static char *nice_size(uint64_t n)
{
  if (n < 10000) return g_strdup_printf("%" PRIu64 " B", n);
  static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
  double d = (double)n;
  int u = -1;
  do d /= 1024.0, u++;
  while (d > 9999.9 && u < 3);
  return g_strdup_printf("%.1f %s", d, units[u]);
}

static void list_line(BxPack *p, const XzCounts *x, const char *name)
{
  static const char *const check_names[16] = {
    "None",       "CRC32",      "Unknown-2",  "Unknown-3", "CRC64",   "Unknown-5",
    "Unknown-6",  "Unknown-7",  "Unknown-8",  "Unknown-9", "SHA-256", "Unknown-11",
    "Unknown-12", "Unknown-13", "Unknown-14", "Unknown-15"
  };
  GString *check = g_string_new(NULL);
  for (int i = 0; i < 16; i++)
    if (x->checks & (1u << i))
      g_string_append_printf(check, "%s%s", check->len ? "," : "", check_names[i]);
  /* xz shows no ratio above 9.999, nor of nothing */
  double ratio = x->unpacked ? (double)x->packed / (double)x->unpacked : 10.0;
  g_autofree char *shown = ratio <= 9.999 ? g_strdup_printf("%.3f", ratio) : g_strdup("---");
  g_autofree char *in = nice_size(x->packed), *out = nice_size(x->unpacked);
  box_out_printf(p->c->out, "%5" PRIu64 " %7" PRIu64 "  %11s  %11s  %5s  %-7s %s\n", x->streams,
                 x->blocks, in, out, shown, check->str, name);
  g_string_free(check, TRUE);
}

static void report(BxPack *p, const char *name, const char *to, const struct stat *st)
{
  (void)to;
  (void)st;
  XzSeen *x = p->seen;
  if (!name) {
    if (x->files < 2) return;
    box_out_printf(p->c->out, "%.79s\n",
                   "--------------------------------------------------"
                   "--------------------------------------------------");
    g_autofree char *files = g_strdup_printf("%d files", x->files);
    list_line(p, &x->total, files);
    return;
  }
  if (!x->files++)
    box_out_puts(p->c->out, "Strms  Blocks   Compressed Uncompressed  Ratio  Check   Filename\n");
  list_line(p, &x->file, name);
  x->total.streams += x->file.streams;
  x->total.blocks += x->file.blocks;
  x->total.packed += x->file.packed;
  x->total.unpacked += x->file.unpacked;
  x->total.checks |= x->file.checks;
}

static const char *const xz_suffixes[] = { ".xz", ".txz", NULL };

static const BxCodec xz_codec = {
  .suffix = ".xz",
  .suffixes = xz_suffixes,
  .magic = "\xfd"
           "7zXZ",
  .stdin_name = "(stdin)",
  .format_first = true,
  .exists_is_error = true,
  .has_suffix_status = 2,
  .texts = { "%s: File exists", "%s: File already has `.xz' suffix, skipping",
             "%s: Filename has an unknown suffix, skipping", "%s: Is a directory, skipping",
             "%s: File format not recognized" },
  .pack = pack,
  .unpack = unpack,
  .report = report,
  .link_text = "%s: Is a symbolic link, skipping",
  .keep_follows = true,
};

int box_cmd_xz(BoxCmd *c)
{
  const char *cmd = strrchr(c->argv[0], '/') ? strrchr(c->argv[0], '/') + 1 : c->argv[0];
  BxPack p = { .c = c, .cmd = cmd, .codec = &xz_codec, .level = 6, .threads = 1 };
  p.decompress = strcmp(cmd, "unxz") == 0;
  XzSeen seen = { 0 };
  p.seen = &seen;
  BX_EACH_OPTION_TRY (o, c, cmd, "cdkftqelT:0123456789", longopts,
                      "@: Try `@ --help' for more information.") {
    if (o == 'e') {
      p.extreme = true;
      continue;
    }
    if (o == 'T') {
      char *end;
      long n = strtol(optarg, &end, 10);
      if (*optarg < '0' || *optarg > '9' || *end) {
        bx_err(c, cmd, "%s: Value is not a non-negative decimal integer", optarg);
        return 1;
      }
      if (n > 16384) {
        bx_err(c, cmd, "Value of the option `threads' must be in the range [0, 16384]");
        return 1;
      }
      p.threads = (int)n;
      continue;
    }
    if (o >= '0' && o <= '9') {
      p.level = o - '0';
      continue;
    }
    /* of -l and -t, the last one given is the mode */
    if (o == 'l' || o == 't') {
      p.list = o == 'l';
      p.test = true;
      continue;
    }
    bool *const flags[] = { &p.to_stdout, &p.decompress, &p.keep, &p.force, &p.quiet };
    if (bx_set_flag(o, "cdkfq", flags)) continue;
    return 1;
  }
  if (p.list && optind == c->argc) {
    bx_err(c, cmd, "%s", no_stdin);
    return 1;
  }
  if (!(box_lzma = box_dl_command(&box_lzma_dl, c, cmd))) return 1;
  return bx_pack_run(&p);
}
