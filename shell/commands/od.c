/* od.c — GNU od for the common forms: -c, -b, -t c|o1|x1|d1|u1|o2|x2|d2|u2
 * (several formats stack), default -t o2; -A d|o|x|n, -v, -N, -j, -w. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  char kind; /* c o x d u */
  int size;  /* 1 or 2 */
} Fmt;

static const char longopts[] =
  "address-radix=A: format=t: output-duplicates=v read-bytes=N: skip-bytes=j: width=w::";

static int field_width(Fmt f)
{
  if (f.kind == 'c') return 3;
  if (f.size == 1) return f.kind == 'o' ? 3 : f.kind == 'x' ? 2 : f.kind == 'u' ? 3 : 4;
  return f.kind == 'o' ? 6 : f.kind == 'x' ? 4 : f.kind == 'u' ? 5 : 6;
}

static void put_field(GString *o, Fmt f, const unsigned char *p, int width)
{
  if (f.kind == 'c') {
    const char *t = NULL;
    char b[8];
    if (p[0] == 0)
      t = "\\0";
    else if (!(t = bx_escape_name(p[0]))) {
      if (p[0] >= 32 && p[0] < 127) {
        b[0] = (char)p[0];
        b[1] = 0;
      } else
        g_snprintf(b, sizeof b, "%03o", p[0]);
      t = b;
    }
    g_string_append_printf(o, "%*s", width, t);
    return;
  }
  unsigned v = f.size == 1 ? p[0] : (unsigned)p[0] | (unsigned)p[1] << 8;
  switch (f.kind) {
  case 'o':
    g_string_append_printf(o, "%*s%0*o", width - field_width(f), "", field_width(f), v);
    break;
  case 'x':
    g_string_append_printf(o, "%*s%0*x", width - field_width(f), "", field_width(f), v);
    break;
  case 'u': g_string_append_printf(o, "%*u", width, v); break;
  default:
    g_string_append_printf(o, "%*d", width, f.size == 1 ? (int)(signed char)v : (int)(short)v);
    break;
  }
}

static bool add_fmt(BoxCmd *c, GArray *fmts, const char *s)
{
  const char *whole = s;
  while (*s) {
    Fmt f = { *s, 1 };
    if (*s == 'c' || *s == 'a') {
      if (*s == 'a') goto bad;
      s++;
    } else if (strchr("oxdu", *s)) {
      s++;
      f.size = 2;
      if (*s == 'C' || *s == '1') {
        f.size = 1;
        s++;
      } else if (*s == 'S' || *s == '2') {
        f.size = 2;
        s++;
      } else if (g_ascii_isdigit(*s) || *s == 'I' || *s == 'L')
        goto bad;
    } else {
      goto bad;
    }
    g_array_append_val(fmts, f);
  }
  return true;
bad:;
  g_autofree char *q = bx_quote_always(whole);
  bx_err(c, "od", "invalid character '%c' in type string %s", *s, q);
  return false;
}

static bool read_input(BoxCmd *c, char **names, int n, GString *all)
{
  bool ok = true;
  for (int i = 0; i < n; i++)
    if (!bx_slurp(c, "od", names[i], all)) ok = false;
  return ok;
}

int box_cmd_od(BoxCmd *c)
{
  GArray *fmts = g_array_new(FALSE, FALSE, sizeof(Fmt));
  char radix = 'o';
  bool dups = false;
  unsigned long long limit = (unsigned long long)-1, skip = 0, width = 16;
  int status = 0;
  BX_EACH_OPTION (o, c, "od", "A:t:vN:j:w::cbdox", longopts) {
    switch (o) {
    case 'A':
      if (!optarg[0] || optarg[1] || !strchr("doxn", optarg[0])) {
        bx_err(c, "od", "invalid output address radix '%c'; it must be one character from [doxn]",
               optarg[0]);
        g_array_free(fmts, TRUE);
        return 1;
      }
      radix = optarg[0];
      break;
    case 't':
      if (!add_fmt(c, fmts, optarg)) {
        g_array_free(fmts, TRUE);
        return 1;
      }
      break;
    case 'c': add_fmt(c, fmts, "c"); break;
    case 'b': add_fmt(c, fmts, "o1"); break;
    case 'd': add_fmt(c, fmts, "u2"); break;
    case 'o': add_fmt(c, fmts, "o2"); break;
    case 'x': add_fmt(c, fmts, "x2"); break;
    case 'v': dups = true; break;
    case 'N':
    case 'j':
    case 'w': {
      unsigned long long v = 32;
      if ((o != 'w' || optarg) && !bx_parse_size(optarg, &v)) {
        g_autofree char *q = bx_quote_always(optarg);
        bx_err(c, "od", "invalid %s argument %s", o == 'N' ? "-N" : o == 'j' ? "-j" : "-w", q);
        g_array_free(fmts, TRUE);
        return 1;
      }
      if (o == 'N')
        limit = v;
      else if (o == 'j')
        skip = v;
      else
        width = v ? v : 32;
      break;
    }
    default: g_array_free(fmts, TRUE); return 1;
    }
  }
  if (fmts->len == 0) add_fmt(c, fmts, "o2");
  int n;
  char **names = bx_file_operands(c, &n);
  GString *all = g_string_new(NULL);
  if (!read_input(c, names, n, all)) status = 1;
  size_t start = MIN(skip, all->len), end = all->len;
  if (limit < end - start) end = start + (size_t)limit;
  /* bytes per column: the widest format decides */
  int per_byte = 0;
  for (guint k = 0; k < fmts->len; k++) {
    Fmt f = g_array_index(fmts, Fmt, k);
    int w = fmts->len == 1 ? field_width(f) + 1 : (field_width(f) + 1 + f.size - 1) / f.size;
    if (w > per_byte) per_byte = w;
  }
  GString *line = g_string_new(NULL);
  const unsigned char *d = (const unsigned char *)all->str;
  bool starred = false;
  size_t prev = (size_t)-1;
  for (size_t off = start; off < end; off += width) {
    size_t cnt = MIN((size_t)width, end - off);
    if (!dups && prev != (size_t)-1 && cnt == width && memcmp(d + prev, d + off, cnt) == 0) {
      if (!starred) box_out_printf(c->out, "*\n");
      starred = true;
      continue;
    }
    starred = false;
    prev = cnt == width ? off : (size_t)-1;
    for (guint k = 0; k < fmts->len; k++) {
      Fmt f = g_array_index(fmts, Fmt, k);
      g_string_truncate(line, 0);
      if (radix != 'n') {
        if (k == 0) {
          if (radix == 'o')
            g_string_append_printf(line, "%07zo", off);
          else if (radix == 'd')
            g_string_append_printf(line, "%07zu", off);
          else
            g_string_append_printf(line, "%06zx", off);
        } else {
          g_string_append_printf(line, "%*s", radix == 'x' ? 6 : 7, "");
        }
      }
      for (size_t i = 0; i < cnt; i += (size_t)f.size) {
        unsigned char b[2] = { d[off + i], i + 1 < cnt ? d[off + i + 1] : 0 };
        put_field(line, f, b, fmts->len == 1 ? per_byte : per_byte * f.size);
      }
      g_string_append_c(line, '\n');
      bx_put(c, line->str, line->len);
    }
  }
  if (radix != 'n' && !(status && all->len == 0)) {
    if (radix == 'o')
      box_out_printf(c->out, "%07zo\n", end);
    else if (radix == 'd')
      box_out_printf(c->out, "%07zu\n", end);
    else
      box_out_printf(c->out, "%06zx\n", end);
  }
  g_string_free(line, TRUE);
  g_string_free(all, TRUE);
  g_array_free(fmts, TRUE);
  return status;
}
