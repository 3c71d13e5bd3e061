/* hexdump.c — util-linux hexdump's two usual formats over the inputs read
 * as one stream: the default (offset, eight little-endian 16-bit words in
 * hex) and -C (offset, sixteen bytes, the printable ones between bars); a
 * line equal to the one before is one "*" unless -v; -s skips, -n stops;
 * the last line is the offset reached.  A file that cannot be read is
 * named and skipped. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static void line_canonical(BoxCmd *c, size_t at, const unsigned char *b, size_t n)
{
  box_out_printf(c->out, "%08zx ", at);
  for (size_t i = 0; i < 16; i++) {
    if (i == 8) box_out_putc(c->out, ' ');
    if (i < n)
      box_out_printf(c->out, " %02x", b[i]);
    else
      box_out_puts(c->out, "   ");
  }
  box_out_puts(c->out, "  |");
  for (size_t i = 0; i < n; i++) box_out_putc(c->out, b[i] >= 0x20 && b[i] < 0x7f ? b[i] : '.');
  box_out_puts(c->out, "|\n");
}

static void line_words(BoxCmd *c, size_t at, const unsigned char *b, size_t n)
{
  box_out_printf(c->out, "%07zx", at);
  for (size_t i = 0; i < 16; i += 2) {
    if (i < n)
      box_out_printf(c->out, " %02x%02x", i + 1 < n ? b[i + 1] : 0, b[i]);
    else
      box_out_puts(c->out, "     "); /* a short line is padded to the full width */
  }
  box_out_putc(c->out, '\n');
}

/* Reads fd into s until its end or until s holds want bytes (-s plus -n:
 * /dev/zero has no end). */
static bool read_upto(int fd, GString *s, unsigned long long want)
{
  char buf[65536];
  while (s->len < want) {
    ssize_t n = bx_read(fd, buf, (size_t)MIN((unsigned long long)sizeof buf, want - s->len));
    if (n < 0) return false;
    if (n == 0) break;
    g_string_append_len(s, buf, n);
  }
  return true;
}

static bool parse_count(BoxCmd *c, const char *what, const char *v, unsigned long long *out)
{
  if (bx_parse_size(v, out)) return true;
  g_autofree char *t = bx_errtext(c, EINVAL);
  bx_err(c, "hexdump", "failed to parse %s: '%s': %s", what, v, t);
  return false;
}

static const char longopts[] = "canonical=C length=n: skip=s: no-squeezing=v";

int box_cmd_hexdump(BoxCmd *c)
{
  bool canonical = false, all = false, limited = false;
  unsigned long long skip = 0, limit = 0;
  BX_EACH_OPTION (ch, c, "hexdump", "Cn:s:v", longopts) switch (ch) {
    case 'C': canonical = true; break;
    case 'v': all = true; break;
    case 'n':
      if (!parse_count(c, "length", optarg, &limit)) return 1;
      limited = true;
      break;
    case 's':
      if (!parse_count(c, "offset", optarg, &skip)) return 1;
      break;
    default: return 1;
    }
  /* no operand is standard input; "-" is a file of that name */
  g_autoptr(GString) s = g_string_new(NULL);
  int status = 0, failed = 0, nops = c->argc - optind;
  for (int i = optind; i < c->argc || (nops == 0 && i == optind); i++) {
    int fd = nops ? box_open_file(c->argv[i], O_RDONLY | O_NOCTTY) : c->in;
    bool ok = fd >= 0 && read_upto(fd, s, limited ? skip + limit : G_MAXUINT64);
    int e = errno;
    if (nops && fd >= 0) close(fd);
    if (!ok) {
      bx_ferr(c, "hexdump", nops ? c->argv[i] : "stdin", e);
      /* util-linux counts a file it could not open, not one it could not
       * read (a directory) */
      if (fd < 0) {
        status = 1;
        failed++;
      }
    }
  }
  if (nops && failed == nops) {
    bx_err(c, "hexdump", "all input file arguments failed");
    return 1;
  }
  size_t from = (size_t)MIN(skip, (unsigned long long)s->len);
  size_t to = limited ? (size_t)MIN((unsigned long long)s->len, from + limit) : s->len;
  if (to == from && (limited || s->len == 0)) return status;
  const unsigned char *p = (const unsigned char *)s->str;
  bool starred = false;
  for (size_t at = from; at < to; at += 16) {
    size_t n = MIN((size_t)16, to - at);
    if (!all && at > from && n == 16 && memcmp(p + at, p + at - 16, 16) == 0) {
      if (!starred) box_out_puts(c->out, "*\n");
      starred = true;
      continue;
    }
    starred = false;
    (canonical ? line_canonical : line_words)(c, at, p + at, n);
  }
  box_out_printf(c->out, canonical ? "%08zx\n" : "%07zx\n", to);
  return status;
}
