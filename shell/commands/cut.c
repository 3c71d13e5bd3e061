/* cut.c — GNU cut: -b -c -f LIST, -d, -s, -n, -z, --complement,
 * --output-delimiter. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  size_t lo, hi;
} Range; /* 1-based, inclusive; hi SIZE_MAX = open */

static int rcmp(const void *a, const void *b)
{
  const Range *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool parse_list(BoxCmd *c, const char *list, GArray *out, bool fields)
{
  gchar **parts = g_strsplit_set(list, ", ", -1);
  bool ok = true;
  for (gchar **p = parts; *p && ok; p++) {
    const char *s = *p;
    if (!*s) goto zero;
    Range r = { 1, SIZE_MAX };
    const char *dash = strchr(s, '-');
    char *end;
    if (dash == s) {
      if (!s[1]) {
        bx_usage(c, "cut", "invalid range with no endpoint: -");
        ok = false;
        break;
      }
      r.hi = strtoul(s + 1, &end, 10);
      if (*end) goto invalid;
    } else {
      r.lo = strtoul(s, &end, 10);
      if (end == s) goto invalid;
      if (r.lo == 0) goto zero;
      if (*end == '-') {
        if (end[1]) {
          char *e2;
          r.hi = strtoul(end + 1, &e2, 10);
          if (*e2) goto invalid;
          if (r.hi < r.lo) {
            bx_usage(c, "cut", "invalid decreasing range");
            ok = false;
            break;
          }
        }
      } else if (*end)
        goto invalid;
      else
        r.hi = r.lo;
    }
    if (r.hi == 0) goto zero;
    g_array_append_val(out, r);
    continue;
  zero:
    bx_usage(c, "cut", "%s",
             fields ? "fields are numbered from 1"
                    : "byte/character positions are numbered from 1");
    ok = false;
    continue;
  invalid : {
    g_autofree char *q = bx_quote_always(s);
    bx_usage(c, "cut", "invalid %s value %s", fields ? "field" : "byte/character position", q);
    ok = false;
  }
  }
  g_strfreev(parts);
  if (ok && out->len == 0) {
    bx_usage(c, "cut", "missing list of %s", fields ? "fields" : "byte/character positions");
    ok = false;
  }
  if (ok) g_array_sort(out, rcmp);
  return ok;
}

static bool selected(const GArray *ranges, size_t i, bool complement)
{
  bool in = false;
  for (guint k = 0; k < ranges->len; k++) {
    const Range *r = &g_array_index(ranges, Range, k);
    if (i < r->lo) break;
    if (i <= r->hi) {
      in = true;
      break;
    }
  }
  return in != complement;
}

static const char longopts[] = "bytes=b: characters=c: fields=f: delimiter=d: only-delimited=s "
                               "complement=\1 output-delimiter=\2: "
                               "zero-terminated=z";

int box_cmd_cut(BoxCmd *c)
{
  int mode = 0; /* 'b', 'c', 'f' */
  const char *list = NULL, *outdelim = NULL;
  int delim = -1;
  bool only_delim = false, complement = false;
  char eol = '\n';
  BX_EACH_OPTION (ch, c, "cut", "b:c:f:d:snz", longopts) switch (ch) {
    case 'b':
    case 'c':
    case 'f':
      if (mode) {
        bx_usage(c, "cut", "only one type of list may be specified");
        return 1;
      }
      mode = ch;
      list = optarg;
      break;
    case 'd':
      if (strlen(optarg) > 1) {
        bx_usage(c, "cut", "the delimiter must be a single character");
        return 1;
      }
      delim = (unsigned char)optarg[0];
      break;
    case 's': only_delim = true; break;
    case 'n': break;
    case 'z': eol = '\0'; break;
    case 1: complement = true; break;
    case 2: outdelim = optarg; break;
    default: return 1;
    }
  if (!mode) {
    bx_usage(c, "cut", "you must specify a list of bytes, characters, or fields");
    return 1;
  }
  if (delim >= 0 && mode != 'f') {
    bx_usage(c, "cut", "an input delimiter may be specified only when operating on fields");
    return 1;
  }
  if (only_delim && mode != 'f') {
    bx_usage(c, "cut",
             "suppressing non-delimited lines makes sense\n\tonly when operating on fields");
    return 1;
  }
  if (delim < 0) delim = '\t';
  GArray *ranges = g_array_new(FALSE, FALSE, sizeof(Range));
  if (!parse_list(c, list, ranges, mode == 'f')) {
    g_array_free(ranges, TRUE);
    return 1;
  }
  char dch = (char)delim;
  const char *od = outdelim ? outdelim : &dch;
  size_t odl = outdelim ? strlen(outdelim) : 1;
  int nf;
  char **files = bx_file_operands(c, &nf);
  int status = 0;
  for (int i = 0; i < nf; i++) {
    int fd = bx_open_in(c, files[i]);
    if (fd < 0) {
      bx_ferr(c, "cut", files[i], errno);
      status = 1;
      continue;
    }
    BxReader r;
    bx_reader_init(&r, fd);
    const char *rec;
    size_t len;
    while (bx_reader_next(&r, eol, &rec, &len)) {
      if (len && rec[len - 1] == eol) len--;
      if (mode != 'f') {
        bool prev_sel = false, any = false;
        for (size_t k = 0; k < len; k++) {
          if (selected(ranges, k + 1, complement)) {
            if (outdelim && any && !prev_sel) box_out_write(c->out, od, odl);
            box_out_putc(c->out, rec[k]);
            prev_sel = any = true;
          } else {
            prev_sel = false;
          }
        }
        box_out_putc(c->out, eol);
        continue;
      }
      if (!memchr(rec, dch, len)) {
        if (!only_delim) {
          box_out_write(c->out, rec, len);
          box_out_putc(c->out, eol);
        }
        continue;
      }
      size_t field = 1, start = 0;
      bool any = false;
      for (size_t k = 0; k <= len; k++) {
        if (k == len || rec[k] == dch) {
          if (selected(ranges, field, complement)) {
            if (any) box_out_write(c->out, od, odl);
            box_out_write(c->out, rec + start, k - start);
            any = true;
          }
          field++;
          start = k + 1;
        }
      }
      box_out_putc(c->out, eol);
    }
    if (r.err) {
      bx_ferr(c, "cut", files[i], r.err);
      status = 1;
    }
    bx_reader_free(&r);
    bx_close_in(c, fd);
  }
  g_array_free(ranges, TRUE);
  return status;
}
