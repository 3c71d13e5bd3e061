/* od.c — GNU od: -t TYPE (a, c, d/o/u/x with sizes 1 2 4 8 or C S I L,
 * f with 4 8 16 or F D L, a z suffix for the printable bytes), the
 * traditional letters (-a -b -c -d -f -i -l -o -s -x and the capitals),
 * -A, -j, -N, -S, -v, -w, --endian, --traditional and the old offset
 * operands.  The inputs are one stream read block by block: -N stops the
 * reading, so /dev/zero and /dev/urandom are read only as far as asked. */
#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef enum { K_SIGNED, K_UNSIGNED, K_OCTAL, K_HEX, K_FLOAT, K_NAMED, K_CHAR } Kind;

typedef struct {
  Kind kind;
  int size;     /* bytes per field */
  int width;    /* characters of the widest value */
  int pad;      /* spaces spread over a line's fields, to align the specs */
  bool trailer; /* z */
} Spec;

typedef struct {
  BoxCmd *c;
  GArray *specs;
  char radix; /* d o x n */
  int addr_width;
  bool squeeze, swap, limited, strings;
  enum { ADDR_NONE, ADDR_PLAIN, ADDR_LABEL, ADDR_PAREN } addr;
  unsigned long long skip, limit, end, label_at, string_min;
  size_t bpb; /* bytes per line */
} Od;

/* ---- the input: the operands as one stream ---------------------------------- */

typedef struct {
  BoxCmd *c;
  char **names;
  int n, next;
  int fd; /* -1: none open */
  const char *name;
  bool ok;
  unsigned char *buf;
  size_t pos, len, cap;
  /* bytes the reader may still want: a refill never reads past them, so
   * -N leaves the rest of a shared input unread */
  unsigned long long want;
} In;

static void in_close(In *in, int err)
{
  if (in->fd < 0) return;
  if (err) {
    bx_ferr(in->c, "od", in->name, err);
    in->ok = false;
  }
  bx_close_in(in->c, in->fd);
  in->fd = -1;
  in->pos = in->len = 0;
}

/* The next operand that opens; false when none is left. */
static bool in_open_next(In *in)
{
  while (in->fd < 0 && in->next < in->n) {
    const char *name = in->names[in->next++];
    bool std = strcmp(name, "-") == 0;
    in->name = std ? "standard input" : name;
    in->fd = bx_open_in(in->c, name);
    if (in->fd < 0) {
      bx_ferr(in->c, "od", name, errno);
      in->ok = false;
    }
  }
  return in->fd >= 0;
}

/* Up to n bytes from the stream (fewer only at its end). */
static size_t in_read(In *in, unsigned char *dst, size_t n)
{
  size_t got = 0;
  while (got < n && in->fd >= 0) {
    if (in->pos < in->len) {
      size_t k = MIN(n - got, in->len - in->pos);
      memcpy(dst + got, in->buf + in->pos, k);
      in->pos += k;
      got += k;
      continue;
    }
    ssize_t r;
    if (n - got >= in->cap) {
      /* a line wider than the buffer (-w) is read into place */
      r = bx_read(in->fd, dst + got, n - got);
      if (r > 0) {
        got += (size_t)r;
        continue;
      }
    } else {
      size_t ask = in->cap;
      if (in->want - got < ask) ask = (size_t)MAX(in->want - got, n - got);
      r = bx_read(in->fd, in->buf, ask);
      if (r > 0) {
        in->pos = 0;
        in->len = (size_t)r;
        continue;
      }
    }
    in_close(in, r < 0 ? errno : 0);
    in_open_next(in);
  }
  return got;
}

/* -j: whole regular files are passed by their size, the rest read.
 * false when the inputs end first. */
static bool in_skip(In *in, unsigned long long n)
{
  while (n > 0 && in->fd >= 0) {
    struct stat st;
    if (in->pos < in->len) {
      size_t k = (size_t)MIN((unsigned long long)(in->len - in->pos), n);
      in->pos += k;
      n -= k;
      continue;
    }
    /* a small file's size may not be true (/proc's): it is read */
    if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (off_t)st.st_blksize) {
      if ((unsigned long long)st.st_size < n) {
        n -= (unsigned long long)st.st_size;
      } else {
        if (lseek(in->fd, (off_t)n, SEEK_CUR) < 0) {
          in_close(in, errno);
          in_open_next(in);
        }
        return true;
      }
    } else {
      while (n > 0) {
        ssize_t r = bx_read(in->fd, in->buf, (size_t)MIN(n, (unsigned long long)in->cap));
        if (r < 0) {
          /* a read error ends the skipping there, as GNU's does */
          in_close(in, errno);
          in_open_next(in);
          return true;
        }
        if (r == 0) break;
        n -= (unsigned long long)r;
      }
      if (n == 0) return true;
    }
    in_close(in, 0);
    in_open_next(in);
  }
  if (n == 0) return true;
  bx_err(in->c, "od", "cannot skip past end of combined input");
  in->ok = false;
  return false;
}

/* ---- numbers on the command line -------------------------------------------- */

enum { NUM_OK, NUM_INVALID, NUM_SUFFIX, NUM_OVERFLOW };

static bool scale(unsigned long long *v, unsigned long long by, int times)
{
  bool over = false;
  while (times-- > 0) {
    if (*v > ULLONG_MAX / by) {
      *v = ULLONG_MAX;
      over = true;
    } else
      *v *= by;
  }
  return over;
}

/* gnulib's xstrtoumax: base, and the suffix letters allowed ("0" in them
 * lets a B or iB follow a multiplier). */
static int parse_num(const char *s, int base, const char *suffixes, unsigned long long *out)
{
  const char *q = s;
  while (g_ascii_isspace(*q)) q++;
  if (*q == '-') return NUM_INVALID;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, base);
  int err = NUM_OK;
  if (end == s) {
    if (*end && strchr(suffixes, *end))
      v = 1;
    else
      return NUM_INVALID;
  } else if (errno == ERANGE)
    err = NUM_OVERFLOW;
  if (*end) {
    if (!strchr(suffixes, *end)) return NUM_SUFFIX;
    int k = 1024, skip = 1, power = 0;
    unsigned long long by = 0;
    if (strchr("EGgkKMmPTtYZ", *end) && strchr(suffixes, '0')) {
      if (end[1] == 'i' && end[2] == 'B')
        skip = 3;
      else if (end[1] == 'B' || end[1] == 'D') {
        k = 1000;
        skip = 2;
      }
    }
    switch (*end) {
    case 'b': by = 512; break;
    case 'B': by = 1024; break;
    case 'c': by = 1; break;
    case 'w': by = 2; break;
    case 'k':
    case 'K': power = 1; break;
    case 'M':
    case 'm': power = 2; break;
    case 'G':
    case 'g': power = 3; break;
    case 'T':
    case 't': power = 4; break;
    case 'P': power = 5; break;
    case 'E': power = 6; break;
    case 'Z': power = 7; break;
    case 'Y': power = 8; break;
    default: return NUM_SUFFIX;
    }
    if (by ? scale(&v, by, 1) : scale(&v, (unsigned long long)k, power)) err = NUM_OVERFLOW;
    if (end[skip]) return NUM_SUFFIX;
  }
  *out = v;
  return err;
}

/* GNU's message for a bad number after an option: -N or --read-bytes as
 * it was spelled. */
static void num_error(BoxCmd *c, int err, char letter, const char *longname, const char *arg)
{
  const char *word = c->argv[optind - 1];
  if (word == arg && optind >= 2) word = c->argv[optind - 2];
  g_autofree char *opt = strncmp(word, "--", 2) == 0 ? g_strdup_printf("--%s", longname)
                                                     : g_strdup_printf("-%c", letter);
  if (err == NUM_INVALID)
    bx_err(c, "od", "invalid %s argument '%s'", opt, arg);
  else if (err == NUM_SUFFIX)
    bx_err(c, "od", "invalid suffix in %s argument '%s'", opt, arg);
  else
    bx_err(c, "od", "%s argument '%s' too large", opt, arg);
}

/* An old-style offset operand: [+]N[.][b], octal unless '.' (decimal) or
 * 0x (hexadecimal).  GNU reads the '.' as a suffix it then refuses, so
 * "10." is no offset there either. */
static bool old_offset(const char *s, unsigned long long *out)
{
  if (!*s) return false;
  if (*s == '+') s++;
  int base = strchr(s, '.') ? 10 : s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 8;
  return parse_num(s, base, "Bb", out) == NUM_OK;
}

/* ---- -t -------------------------------------------------------------------- */

static const int int_width[4][9] = {
  /* signed, unsigned, octal, hex; by size */
  { 0, 4, 6, 0, 11, 0, 0, 0, 20 },
  { 0, 3, 5, 0, 10, 0, 0, 0, 20 },
  { 0, 3, 6, 0, 11, 0, 0, 0, 22 },
  { 0, 2, 4, 0, 8, 0, 0, 0, 16 },
};

/* The size digits after a type letter: false on an overflow. */
static bool size_digits(const char **s, unsigned long *size)
{
  unsigned long v = 0;
  while (g_ascii_isdigit(**s)) {
    unsigned d = (unsigned)(**s - '0');
    if (v > (ULONG_MAX - d) / 10) return false;
    v = v * 10 + d;
    (*s)++;
  }
  *size = v;
  return true;
}

static const char int_sizes[] = "CSIL", float_sizes[] = "FDL";

static bool add_specs(BoxCmd *c, GArray *specs, const char *type)
{
  const char *s = type;
  while (*s) {
    Spec sp = { 0 };
    char t = *s++;
    unsigned long size = 0;
    const char *before = s;
    switch (t) {
    case 'd':
    case 'o':
    case 'u':
    case 'x': {
      sp.kind = t == 'd' ? K_SIGNED : t == 'u' ? K_UNSIGNED : t == 'o' ? K_OCTAL : K_HEX;
      const char *named = *s ? strchr(int_sizes, *s) : NULL;
      if (named) {
        size = 1UL << (named - int_sizes);
        s++;
      } else {
        if (!size_digits(&s, &size)) goto overflow;
        if (s == before)
          size = 4;
        else if (size > 8 || (size & (size - 1)) || size == 0) {
          g_autofree char *q = bx_quote_always(type);
          bx_err(c, "od",
                 "invalid type string %s;\nthis system doesn't provide a %lu-byte integral type", q,
                 size);
          return false;
        }
      }
      sp.width = int_width[sp.kind][size];
      break;
    }
    case 'f': {
      sp.kind = K_FLOAT;
      const char *named = *s ? strchr(float_sizes, *s) : NULL;
      if (named) {
        size = 4UL << (named - float_sizes);
        s++;
      } else {
        if (!size_digits(&s, &size)) goto overflow;
        if (s == before)
          size = 8;
        else if (size != 4 && size != 8 && size != 16) {
          g_autofree char *q = bx_quote_always(type);
          bx_err(c, "od",
                 "invalid type string %s;\nthis system doesn't provide a %lu-byte floating "
                 "point type",
                 q, size);
          return false;
        }
      }
      /* sign, the digits a round trip may need, point, e, exponent */
      sp.width = size == 4 ? 15 : size == 8 ? 24 : 29;
      break;
    }
    case 'a':
    case 'c':
      sp.kind = t == 'a' ? K_NAMED : K_CHAR;
      size = 1;
      sp.width = 3;
      break;
    default: {
      g_autofree char *q = bx_quote_always(type);
      bx_err(c, "od", "invalid character '%c' in type string %s", t, q);
      return false;
    }
    }
    sp.size = (int)size;
    if (*s == 'z') {
      sp.trailer = true;
      s++;
    }
    g_array_append_val(specs, sp);
  }
  return true;
overflow:;
  g_autofree char *q = bx_quote_always(type);
  bx_err(c, "od", "invalid type string %s", q);
  return false;
}

/* ---- one line -------------------------------------------------------------- */

static void put_address(Od *od, GString *line, unsigned long long at)
{
  if (od->addr == ADDR_NONE) return;
  const char *f = od->radix == 'd' ? "%0*llu" : od->radix == 'x' ? "%0*llx" : "%0*llo";
  /* --traditional's label: the offset the dump says it starts from */
  unsigned long long label = at - od->skip + od->label_at;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  if (od->addr == ADDR_PAREN) {
    g_string_append_c(line, '(');
    g_string_append_printf(line, f, od->addr_width, at);
    g_string_append_c(line, ')');
    return;
  }
  g_string_append_printf(line, f, od->addr_width, at);
  if (od->addr == ADDR_LABEL) {
    g_string_append(line, " (");
    g_string_append_printf(line, f, od->addr_width, label);
    g_string_append_c(line, ')');
  }
#pragma GCC diagnostic pop
}

static const char *const ascii_names[33] = {
  "nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs",  "ht",  "nl",
  "vt",  "ff",  "cr",  "so",  "si",  "dle", "dc1", "dc2", "dc3", "dc4", "nak",
  "syn", "etb", "can", "em",  "sub", "esc", "fs",  "gs",  "rs",  "us",  "sp",
};

/* The shortest %g that reads back as the same value (gnulib's ftoastr). */
static void float_text(char *buf, size_t cap, int size, const unsigned char *p)
{
  if (size == 4) {
    float x;
    memcpy(&x, p, sizeof x);
    for (int prec = (x < 0 ? -x : x) < FLT_MIN ? 1 : FLT_DIG;; prec++) {
      g_snprintf(buf, cap, "%.*g", prec, (double)x);
      if (prec >= 9 || strtof(buf, NULL) == x) break;
    }
  } else if (size == 8) {
    double x;
    memcpy(&x, p, sizeof x);
    for (int prec = (x < 0 ? -x : x) < DBL_MIN ? 1 : DBL_DIG;; prec++) {
      g_snprintf(buf, cap, "%.*g", prec, x);
      if (prec >= 17 || strtod(buf, NULL) == x) break;
    }
  } else {
    long double x;
    memcpy(&x, p, sizeof x);
    for (int prec = (x < 0 ? -x : x) < LDBL_MIN ? 1 : LDBL_DIG;; prec++) {
      g_snprintf(buf, cap, "%.*Lg", prec, x);
      if (prec >= 21 || strtold(buf, NULL) == x) break;
    }
  }
}

static void field_text(Od *od, const Spec *sp, const unsigned char *p, char *buf, size_t cap)
{
  unsigned char b[16];
  if (od->swap && sp->size > 1) {
    for (int i = 0; i < sp->size; i++) b[i] = p[sp->size - 1 - i];
    p = b;
  }
  switch (sp->kind) {
  case K_FLOAT: float_text(buf, cap, sp->size, p); return;
  case K_NAMED: {
    int ch = p[0] & 0x7f;
    if (ch == 127)
      g_strlcpy(buf, "del", cap);
    else if (ch <= 32)
      g_strlcpy(buf, ascii_names[ch], cap);
    else
      g_snprintf(buf, cap, "%c", ch);
    return;
  }
  case K_CHAR: {
    const char *e = p[0] ? bx_escape_name(p[0]) : "\\0";
    if (e)
      g_strlcpy(buf, e, cap);
    else if (p[0] >= 32 && p[0] < 127)
      g_snprintf(buf, cap, "%c", p[0]);
    else
      g_snprintf(buf, cap, "%03o", p[0]);
    return;
  }
  default: break;
  }
  unsigned long long v = 0;
  for (int i = sp->size - 1; i >= 0; i--) v = v << 8 | p[i];
  int bits = sp->size * 8;
  switch (sp->kind) {
  case K_SIGNED: {
    long long s =
      bits < 64 && (v >> (bits - 1)) & 1 ? (long long)(v - (1ULL << bits)) : (long long)v;
    g_snprintf(buf, cap, "%lld", s);
    break;
  }
  case K_UNSIGNED: g_snprintf(buf, cap, "%llu", v); break;
  case K_OCTAL: g_snprintf(buf, cap, "%0*llo", sp->width, v); break;
  default: g_snprintf(buf, cap, "%0*llx", sp->width, v); break;
  }
}

static void write_block(Od *od, GString *line, unsigned long long at, size_t n,
                        const unsigned char *blk)
{
  for (guint k = 0; k < od->specs->len; k++) {
    const Spec *sp = &g_array_index(od->specs, Spec, k);
    size_t fields = od->bpb / (size_t)sp->size;
    size_t blank = (od->bpb - n) / (size_t)sp->size;
    g_string_truncate(line, 0);
    if (k == 0)
      put_address(od, line, at);
    else if (od->addr != ADDR_NONE)
      g_string_append_printf(line, "%*s", od->addr_width, "");
    /* the line's spare width goes to its fields as GNU spreads it */
    size_t pad_left = (size_t)sp->pad;
    const unsigned char *p = blk;
    for (size_t i = fields; i > blank; i--) {
      size_t next = (size_t)sp->pad * (i - 1) / fields;
      char buf[64];
      field_text(od, sp, p, buf, sizeof buf);
      g_string_append_printf(line, "%*s", (int)(pad_left - next) + sp->width, buf);
      pad_left = next;
      p += sp->size;
    }
    if (sp->trailer) {
      size_t spaces = blank * (size_t)sp->width + (size_t)sp->pad * blank / fields;
      g_string_append_printf(line, "%*s  >", (int)spaces, "");
      for (size_t i = 0; i < n; i++)
        g_string_append_c(line, blk[i] >= 32 && blk[i] < 127 ? (char)blk[i] : '.');
      g_string_append_c(line, '<');
    }
    g_string_append_c(line, '\n');
    bx_put(od->c, line->str, line->len);
  }
}

static void dump(Od *od, In *in)
{
  size_t bpb = od->bpb;
  unsigned char *blk[2] = { g_malloc0(bpb), g_malloc0(bpb) };
  unsigned long long at = od->skip;
  int idx = 0;
  bool first = true, starred = false;
  size_t got = 0;
  GString *line = g_string_new(NULL);
  for (;;) {
    size_t need = bpb;
    if (od->limited) {
      if (at >= od->end) {
        got = 0;
        break;
      }
      need = (size_t)MIN(od->end - at, (unsigned long long)bpb);
      in->want = od->end - at;
    }
    got = in_read(in, blk[idx], need);
    if (got < bpb) break;
    if (od->squeeze && !first && memcmp(blk[0], blk[1], bpb) == 0) {
      if (!starred) bx_put(od->c, "*\n", 2);
      starred = true;
    } else {
      starred = false;
      write_block(od, line, at, got, blk[idx]);
    }
    first = false;
    at += got;
    idx = !idx;
    if (od->c->out->error) break;
  }
  if (got > 0) {
    memset(blk[idx] + got, 0, bpb - got);
    write_block(od, line, at, got, blk[idx]);
    at += got;
  }
  g_string_truncate(line, 0);
  put_address(od, line, at);
  if (line->len) {
    g_string_append_c(line, '\n');
    bx_put(od->c, line->str, line->len);
  }
  g_string_free(line, TRUE);
  g_free(blk[0]);
  g_free(blk[1]);
}

/* -S: NUL-terminated runs of at least string_min printable bytes. */
static void dump_strings(Od *od, In *in)
{
  size_t min = (size_t)od->string_min, cap = MAX(100, min), i;
  char *buf = g_malloc(cap + 1);
  unsigned long long at = od->skip;
  GString *line = g_string_new(NULL);
  unsigned char ch;
  for (;;) {
  again:
    if (od->limited && (od->end < min || od->end - min <= at)) break;
    for (i = 0; i < min; i++) {
      if (od->limited) in->want = od->end - at;
      at++;
      if (in_read(in, &ch, 1) == 0) goto out;
      if (!(ch >= 32 && ch < 127)) goto again;
      buf[i] = (char)ch;
    }
    while (!od->limited || at < od->end) {
      if (od->limited) in->want = od->end - at;
      at++;
      if (in_read(in, &ch, 1) == 0) goto out;
      if (ch == 0) break;
      if (!(ch >= 32 && ch < 127)) goto again;
      if (i == cap) {
        cap *= 2;
        buf = g_realloc(buf, cap + 1);
      }
      buf[i++] = (char)ch;
    }
    /* at the limit GNU prints the run it has, its offset one short */
    g_string_truncate(line, 0);
    put_address(od, line, at - i - 1);
    if (line->len) g_string_append_c(line, ' ');
    g_string_append_len(line, buf, (gssize)i);
    g_string_append_c(line, '\n');
    bx_put(od->c, line->str, line->len);
    if (od->c->out->error) break;
  }
out:
  g_string_free(line, TRUE);
  g_free(buf);
}

static unsigned long long gcd(unsigned long long a, unsigned long long b)
{
  while (b) {
    unsigned long long t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static const char longopts[] =
  "skip-bytes=j: address-radix=A: read-bytes=N: format=t: output-duplicates=v strings=S:: "
  "traditional=\1 width=w:: endian=\2:";

/* --endian's argument as argmatch reads it: a whole word or a prefix of
 * only one. */
static bool endian_arg(BoxCmd *c, const char *arg, bool *big)
{
  size_t n = strlen(arg);
  bool l = strncmp("little", arg, n) == 0, b = strncmp("big", arg, n) == 0;
  if (l != b) {
    *big = b;
    return true;
  }
  g_autofree char *q = bx_quote_always(arg);
  bx_err(c, "od", "%s argument %s for '--endian'", l ? "ambiguous" : "invalid", q);
  box_fdprintf(c->err, "Valid arguments are:\n  - 'little'\n  - 'big'\n"
                       "Try 'od --help' for more information.\n");
  return false;
}

int box_cmd_od(BoxCmd *c)
{
  Od od = { .c = c, .radix = 'o', .squeeze = true, .string_min = 3 };
  od.specs = g_array_new(FALSE, FALSE, sizeof(Spec));
  bool ok = true, modern = false, traditional = false, width_given = false, label = false;
  unsigned long long width = 32;
  int status = 1;
  BX_EACH_OPTION (o, c, "od", "A:aBbcDdeFfHhIij:LlN:OoS:st:vw::Xx", longopts) {
    const char *letters = "abcDdeFfHhIiLlOoBsXx";
    const char *types[] = { "a",  "o1", "c",  "u4", "u2", "fD", "fD", "fF", "x4", "x2",
                            "dL", "dI", "dL", "dL", "o4", "o2", "o2", "d2", "x4", "x2" };
    const char *t = o > 0 && o < 256 ? strchr(letters, o) : NULL;
    if (t) {
      ok &= add_specs(c, od.specs, types[t - letters]);
      continue;
    }
    switch (o) {
    case 'A':
      modern = true;
      if (!strchr("doxn", optarg[0]) || !optarg[0]) {
        bx_err(c, "od", "invalid output address radix '%c'; it must be one character from [doxn]",
               optarg[0]);
        goto done;
      }
      od.radix = optarg[0];
      break;
    case 'j':
    case 'N':
    case 'S': {
      modern = true;
      unsigned long long v = 3;
      int err = o == 'S' && !optarg ? NUM_OK : parse_num(optarg, 0, "bEGKkMmPTYZ0", &v);
      if (err != NUM_OK) {
        num_error(c, err, (char)o,
                  o == 'j'   ? "skip-bytes"
                  : o == 'N' ? "read-bytes"
                             : "strings",
                  optarg);
        goto done;
      }
      if (o == 'j')
        od.skip = v;
      else if (o == 'N') {
        od.limit = v;
        od.limited = true;
      } else {
        od.string_min = v;
        od.strings = true;
      }
      break;
    }
    case 't':
      modern = true;
      ok &= add_specs(c, od.specs, optarg);
      break;
    case 'v':
      modern = true;
      od.squeeze = false;
      break;
    case 'w': {
      modern = true;
      width_given = true;
      width = 32;
      if (optarg) {
        int err = parse_num(optarg, 10, "", &width);
        if (err != NUM_OK) {
          num_error(c, err, 'w', "width", optarg);
          goto done;
        }
      }
      break;
    }
    case 1: traditional = true; break;
    case 2: {
      bool big;
      if (!endian_arg(c, optarg, &big)) goto done;
      od.swap = big; /* this machine is little-endian */
      break;
    }
    default: goto done;
    }
  }
  if (!ok) goto done;
  if (od.strings && od.specs->len) {
    bx_err(c, "od", "no type may be specified when dumping strings");
    goto done;
  }
  int n = c->argc - optind;
  char **args = c->argv + optind;
  if (!modern || traditional) {
    unsigned long long o1, o2;
    if (n == 1) {
      if ((traditional || args[0][0] == '+') && old_offset(args[0], &o1)) {
        od.skip = o1;
        n = 0;
      }
    } else if (n == 2) {
      if ((traditional || args[1][0] == '+' || g_ascii_isdigit(args[1][0])) &&
          old_offset(args[1], &o2)) {
        if (traditional && old_offset(args[0], &o1)) {
          od.skip = o1;
          label = true;
          od.label_at = o2;
          n = 0;
        } else {
          od.skip = o2;
          n = 1;
        }
      }
    } else if (n == 3 && traditional && old_offset(args[1], &o1) && old_offset(args[2], &o2)) {
      od.skip = o1;
      label = true;
      od.label_at = o2;
      n = 1;
    }
    if (traditional && n > 1) {
      g_autofree char *q = bx_quote_always(args[1]);
      bx_err(c, "od", "extra operand %s", q);
      bx_usage(c, "od", "compatibility mode supports at most one file");
      goto done;
    }
  }
  if (od.limited) {
    if (od.skip > ULLONG_MAX - od.limit) {
      bx_err(c, "od", "skip-bytes + read-bytes is too large");
      goto done;
    }
    od.end = od.skip + od.limit;
  }
  if (od.specs->len == 0) add_specs(c, od.specs, "o2");
  od.addr_width = od.radix == 'x' ? 6 : 7;
  od.addr = od.radix == 'n' ? ADDR_NONE : ADDR_PLAIN;
  if (label) {
    od.addr = od.radix == 'n' ? ADDR_PAREN : ADDR_LABEL;
    if (od.radix == 'n') od.radix = 'o';
  }

  char *stdin_only[] = { (char *)"-" };
  In in = { .c = c, .names = n ? args : stdin_only, .n = n ? n : 1, .fd = -1, .ok = true };
  in.cap = 65536;
  in.buf = g_malloc(in.cap);
  in.want = ULLONG_MAX;
  if (in_open_next(&in) && in_skip(&in, od.skip)) {
    unsigned long long lcm = 1;
    for (guint k = 0; k < od.specs->len; k++) {
      unsigned long long s = (unsigned long long)g_array_index(od.specs, Spec, k).size;
      lcm = lcm / gcd(lcm, s) * s;
    }
    if (width_given) {
      if (width == 0 || width % lcm) {
        box_out_flush(c->out);
        box_fdprintf(c->err, "od: warning: invalid width %llu; using %llu instead\n", width, lcm);
        width = lcm;
      }
      od.bpb = (size_t)width;
    } else
      od.bpb = (size_t)(lcm < 16 ? lcm * (16 / lcm) : lcm);
    /* every spec's line as wide as the widest one's */
    size_t line_width = 0;
    for (guint k = 0; k < od.specs->len; k++) {
      Spec *sp = &g_array_index(od.specs, Spec, k);
      line_width = MAX(line_width, (size_t)(sp->width + 1) * (od.bpb / (size_t)sp->size));
    }
    for (guint k = 0; k < od.specs->len; k++) {
      Spec *sp = &g_array_index(od.specs, Spec, k);
      sp->pad = (int)(line_width - (size_t)sp->width * (od.bpb / (size_t)sp->size));
    }
    if (od.strings)
      dump_strings(&od, &in);
    else
      dump(&od, &in);
  }
  in_close(&in, 0);
  g_free(in.buf);
  status = in.ok ? 0 : 1;
done:
  g_array_free(od.specs, TRUE);
  return status;
}
