/* base64.c — GNU base64: encode with -w COLS (76; 0 = no wrapping),
 * -d decode (newlines ignored), -i ignore garbage when decoding.
 * Both directions stream: a block is read, what it completes is written,
 * and only a partial group (2 bytes to encode, 3 characters to decode)
 * waits for the next block, so `base64 /dev/zero | head` ends and a large
 * input needs no more memory than a small one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "decode=d ignore-garbage=i wrap=w:";

static const char ALPHA[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* a multiple of 3, so that only the input's last block leaves bytes over */
#define BLOCK (3 * 16 * 1024)

static int val(unsigned char ch)
{
  const char *p = ch ? strchr(ALPHA, ch) : NULL;
  return p ? (int)(p - ALPHA) : -1;
}

typedef struct {
  BoxCmd *c;
  unsigned long long wrap; /* 0: one line, no newline */
  unsigned long long col;  /* characters on the current output line */
} Encoder;

/* Writes encoded text, a newline each wrap columns across calls. */
static void put_wrapped(Encoder *e, const char *s, size_t n)
{
  if (!e->wrap) {
    bx_put(e->c, s, n);
    return;
  }
  while (n > 0) {
    size_t room = (size_t)MIN(e->wrap - e->col, (unsigned long long)n);
    bx_put(e->c, s, room);
    s += room;
    n -= room;
    e->col += room;
    if (e->col == e->wrap) {
      box_out_putc(e->c->out, '\n');
      e->col = 0;
    }
  }
}

/* Encodes n bytes, padding a last group of 1 or 2. */
static void encode(Encoder *e, const unsigned char *s, size_t n)
{
  char out[BLOCK / 3 * 4];
  size_t k = 0;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)s[i] << 16;
    if (i + 1 < n) v |= (unsigned)s[i + 1] << 8;
    if (i + 2 < n) v |= s[i + 2];
    out[k++] = ALPHA[v >> 18];
    out[k++] = ALPHA[(v >> 12) & 63];
    out[k++] = i + 1 < n ? ALPHA[(v >> 6) & 63] : '=';
    out[k++] = i + 2 < n ? ALPHA[v & 63] : '=';
  }
  put_wrapped(e, out, k);
}

/* false after a read error (errno set) */
static bool encode_stream(BoxCmd *c, int fd, unsigned long long wrap)
{
  Encoder e = { c, wrap, 0 };
  unsigned char buf[BLOCK];
  size_t have = 0;
  bool ok = true;
  while (!c->out->error) {
    ssize_t r = bx_read(fd, buf + have, sizeof buf - have);
    if (r < 0) {
      ok = false;
      break;
    }
    if (r == 0) break;
    have += (size_t)r;
    size_t whole = have / 3 * 3;
    encode(&e, buf, whole);
    memmove(buf, buf + whole, have - whole);
    have -= whole;
  }
  int err = errno;
  if (ok && have) encode(&e, buf, have);
  if (wrap && e.col > 0) box_out_putc(c->out, '\n');
  errno = err;
  return ok;
}

/* One group of n (<= 4) characters, as gnulib's base64 decoder takes it:
 * two letters at least, then a letter or "==" (the group's end), then a
 * letter or '='.  What decodes before a fault is written; false then. */
static bool decode_group(GString *o, const unsigned char *g, size_t n)
{
  int v0 = n > 0 ? val(g[0]) : -1, v1 = n > 1 ? val(g[1]) : -1;
  if (v0 < 0 || v1 < 0) return false;
  g_string_append_c(o, (char)(v0 << 2 | v1 >> 4));
  if (n == 2) return false;
  if (g[2] == '=') return n == 4 && g[3] == '=';
  int v2 = val(g[2]);
  if (v2 < 0) return false;
  g_string_append_c(o, (char)((v1 << 4 & 0xf0) | v2 >> 2));
  if (n == 3) return false;
  if (g[3] == '=') return true;
  int v3 = val(g[3]);
  if (v3 < 0) return false;
  g_string_append_c(o, (char)((v2 << 6 & 0xc0) | v3));
  return true;
}

/* 0 when the input decoded, 1 after invalid input, -1 after a read error
 * (errno set).  Newlines are no part of the text; with ignore, neither is
 * anything but the alphabet and '='. */
static int decode_stream(BoxCmd *c, int fd, bool ignore)
{
  unsigned char buf[65536], group[4];
  size_t n = 0;
  GString *o = g_string_sized_new(sizeof buf / 4 * 3 + 3);
  int st = 0;
  while (!c->out->error) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) {
      st = -1;
      break;
    }
    if (r == 0) {
      if (n && !decode_group(o, group, n)) st = 1;
      break;
    }
    for (ssize_t i = 0; i < r && !st; i++) {
      unsigned char ch = buf[i];
      if (ch == '\n' || (ignore && ch != '=' && val(ch) < 0)) continue;
      group[n++] = ch;
      if (n == 4) {
        if (!decode_group(o, group, n)) st = 1;
        n = 0;
      }
    }
    bx_put(c, o->str, o->len);
    g_string_truncate(o, 0);
    if (st) break;
  }
  int err = errno;
  bx_put(c, o->str, o->len);
  g_string_free(o, TRUE);
  errno = err;
  return st;
}

/* -w's value as GNU takes it: a decimal, blanks and a sign allowed, too
 * large meaning no wrapping at all (as 0).  false when invalid. */
static bool parse_wrap(const char *s, unsigned long long *out)
{
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || v < 0) return false;
  *out = errno == ERANGE ? 0 : (unsigned long long)v;
  return true;
}

static void read_error(BoxCmd *c, int err)
{
  g_autofree char *t = bx_errtext(c, err);
  bx_err(c, "base64", "read error: %s", t);
}

int box_cmd_base64(BoxCmd *c)
{
  bool dec = false, ignore = false;
  unsigned long long wrap = 76;
  BX_EACH_OPTION (o, c, "base64", "diw:", longopts) switch (o) {
    case 'd': dec = true; break;
    case 'i': ignore = true; break;
    case 'w':
      if (!parse_wrap(optarg, &wrap)) {
        bx_err_q(c, "base64", "invalid wrap size: %s", optarg, 0);
        return 1;
      }
      break;
    default: return 1;
    }
  if (c->argc - optind > 1) {
    bx_usage_q(c, "base64", "extra operand %s", c->argv[optind + 1]);
    return 1;
  }
  const char *name = optind < c->argc ? c->argv[optind] : "-";
  int fd = bx_open_in(c, name);
  if (fd < 0) {
    bx_ferr(c, "base64", name, errno);
    return 1;
  }
  int st = 0;
  if (dec) {
    int r = decode_stream(c, fd, ignore);
    if (r < 0)
      read_error(c, errno);
    else if (r > 0)
      bx_err(c, "base64", "invalid input");
    st = r != 0;
  } else if (!encode_stream(c, fd, wrap)) {
    read_error(c, errno);
    st = 1;
  }
  bx_close_in(c, fd);
  return st;
}
