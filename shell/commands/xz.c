/* xz.c — xz and unxz (xz -d) of xz-utils with -c -d -k -f -t -e -T -0..-9 over
 * liblzma: the same encoder xz runs, so the same bytes. */
#include <errno.h>
#include <string.h>

#include "shell/commands/compress.h"
#include "shell/commands/lzma_dl.h"

static const char longopts[] = "stdout=c to-stdout=c decompress=d uncompress=d keep=k force=f "
                               "test=t quiet=q fast=0 best=9 extreme=e threads=T:";

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

static bool unpack(BxPack *p, int in, int out, const char *name, ssize_t n)
{
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
};

int box_cmd_xz(BoxCmd *c)
{
  const char *cmd = strrchr(c->argv[0], '/') ? strrchr(c->argv[0], '/') + 1 : c->argv[0];
  BxPack p = { .c = c, .cmd = cmd, .codec = &xz_codec, .level = 6, .threads = 1 };
  p.decompress = strcmp(cmd, "unxz") == 0;
  bool quiet = false;
  BX_EACH_OPTION_TRY (o, c, cmd, "cdkftqeT:0123456789", longopts,
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
    bool *const flags[] = { &p.to_stdout, &p.decompress, &p.keep, &p.force, &p.test, &quiet };
    if (bx_set_flag(o, "cdkftq", flags)) continue;
    return 1;
  }
  if (!(box_lzma = box_dl_command(&box_lzma_dl, c, cmd))) return 1;
  return bx_pack_run(&p);
}
