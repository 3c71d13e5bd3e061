/* sort.c — GNU sort (C locale): -b -d -f -g -h -i -M -n -r -V per key or
 * global, -k POS1[,POS2], -t, -s, -u, -c/-C, -o, -z, -m (treated as sort).
 * Stable merge of indices; GNU's last-resort whole-line comparison. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  size_t sfield, schar; /* 1-based field, 0-based char offset (0 = start) */
  size_t efield, echar; /* efield 0 = end of line; echar 0 = end of field */
  bool skip_sblanks, skip_eblanks;
  bool numeric, general, human, month, version, fold, dict, nonprint, reverse;
} SortKey;

typedef struct {
  const char *p;
  size_t len;
} Line;

typedef struct {
  SortKey *keys;
  size_t nkeys;
  SortKey global;
  int tab; /* -1: blanks */
  bool stable, unique, reverse_all;
  bool plain; /* one whole-line key, no options but -r */
} SortCtx;

static inline bool is_blank(unsigned char ch)
{
  return ch == ' ' || ch == '\t';
}

/* Start of field f (1-based) in line, after char offset. */
static const char *field_start(const SortCtx *s, const char *p, const char *lim, size_t f)
{
  while (f-- > 1 && p < lim) {
    if (s->tab >= 0) {
      const char *t = memchr(p, s->tab, (size_t)(lim - p));
      p = t ? t + 1 : lim;
    } else {
      while (p < lim && is_blank((unsigned char)*p)) p++;
      while (p < lim && !is_blank((unsigned char)*p)) p++;
    }
  }
  return p;
}

static void key_span(const SortCtx *s, const SortKey *k, const Line *l, const char **kb,
                     const char **ke)
{
  const char *p = l->p, *lim = l->p + l->len;
  const char *b = field_start(s, p, lim, k->sfield);
  if (k->skip_sblanks)
    while (b < lim && is_blank((unsigned char)*b)) b++;
  b = (size_t)(lim - b) > k->schar ? b + k->schar : lim;
  const char *e;
  if (k->efield == 0) {
    e = lim;
  } else {
    e = field_start(s, p, lim, k->efield);
    if (k->echar == 0) {
      /* to the end of the field */
      if (s->tab >= 0) {
        const char *t = memchr(e, s->tab, (size_t)(lim - e));
        e = t ? t : lim;
      } else {
        while (e < lim && is_blank((unsigned char)*e)) e++;
        while (e < lim && !is_blank((unsigned char)*e)) e++;
      }
    } else {
      if (k->skip_eblanks)
        while (e < lim && is_blank((unsigned char)*e)) e++;
      e = (size_t)(lim - e) > k->echar ? e + k->echar : lim;
    }
  }
  if (e < b) e = b;
  *kb = b;
  *ke = e;
}

/* GNU numeric compare of two strings (no float conversion). */
static int num_cmp(const char *a, const char *ae, const char *b, const char *be)
{
  while (a < ae && is_blank((unsigned char)*a)) a++;
  while (b < be && is_blank((unsigned char)*b)) b++;
  bool na = a < ae && *a == '-', nb = b < be && *b == '-';
  if (na) a++;
  if (nb) b++;
  /* integer parts */
  const char *ai = a, *bi = b;
  while (ai < ae && *ai == '0') ai++;
  while (bi < be && *bi == '0') bi++;
  const char *aie = ai, *bie = bi;
  while (aie < ae && g_ascii_isdigit(*aie)) aie++;
  while (bie < be && g_ascii_isdigit(*bie)) bie++;
  /* a lone '-' or no digits: value 0 */
  bool a_digits = aie > a || (aie < ae && *aie == '.' && aie + 1 < ae && g_ascii_isdigit(aie[1]));
  bool b_digits = bie > b || (bie < be && *bie == '.' && bie + 1 < be && g_ascii_isdigit(bie[1]));
  int cmp = 0;
  size_t la = (size_t)(aie - ai), lb = (size_t)(bie - bi);
  if (la != lb)
    cmp = la < lb ? -1 : 1;
  else if (la) {
    int m = memcmp(ai, bi, la);
    cmp = m < 0 ? -1 : m > 0;
  }
  if (cmp == 0) {
    const char *af = aie < ae && *aie == '.' ? aie + 1 : aie,
               *bf = bie < be && *bie == '.' ? bie + 1 : bie;
    const char *afe = af, *bfe = bf;
    if (af != aie)
      while (afe < ae && g_ascii_isdigit(*afe)) afe++;
    if (bf != bie)
      while (bfe < be && g_ascii_isdigit(*bfe)) bfe++;
    while (afe > af && afe[-1] == '0') afe--;
    while (bfe > bf && bfe[-1] == '0') bfe--;
    while (af < afe && bf < bfe && *af == *bf) {
      af++;
      bf++;
    }
    if (af < afe && bf < bfe)
      cmp = *af < *bf ? -1 : 1;
    else if (af < afe)
      cmp = 1;
    else if (bf < bfe)
      cmp = -1;
  }
  bool za = !a_digits || (la == 0 && cmp == 0 && 0);
  (void)za;
  /* zero compares equal whatever its sign */
  bool a_zero = true, b_zero = true;
  for (const char *q = a; q < ae && (g_ascii_isdigit(*q) || *q == '.'); q++)
    if (*q != '0' && *q != '.') {
      a_zero = false;
      break;
    }
  for (const char *q = b; q < be && (g_ascii_isdigit(*q) || *q == '.'); q++)
    if (*q != '0' && *q != '.') {
      b_zero = false;
      break;
    }
  (void)b_digits;
  if (a_zero) na = false;
  if (b_zero) nb = false;
  if (na != nb) return na ? -1 : 1;
  /* magnitudes: cmp compares |a| and |b| */
  if (a_zero && b_zero) return 0;
  return na ? -cmp : cmp;
}

static int human_unit(const char *p, const char *e)
{
  while (p < e && is_blank((unsigned char)*p)) p++;
  if (p < e && *p == '-') p++;
  while (p < e && (g_ascii_isdigit(*p) || *p == '.')) p++;
  if (p >= e) return 0;
  const char *u = strchr("KMGTPEZYRQ", *p == 'k' ? 'K' : *p);
  return u && *p ? (int)(u - "KMGTPEZYRQ") + 1 : 0;
}

static int month_of(const char *p, const char *e)
{
  static const char *m[] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                             "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
  while (p < e && is_blank((unsigned char)*p)) p++;
  if (e - p < 3) return 0;
  for (int i = 0; i < 12; i++)
    if (g_ascii_toupper(p[0]) == m[i][0] && g_ascii_toupper(p[1]) == m[i][1] &&
        g_ascii_toupper(p[2]) == m[i][2])
      return i + 1;
  return 0;
}

static double general_val(const char *p, const char *e, int *cls)
{
  char buf[128];
  size_t n = MIN((size_t)(e - p), sizeof buf - 1);
  memcpy(buf, p, n);
  buf[n] = 0;
  char *end;
  double v = strtod(buf, &end);
  if (end == buf) {
    *cls = 0;
    return 0;
  } /* not a number: first */
  if (v != v) {
    *cls = 1;
    return 0;
  } /* NaN next */
  *cls = 2;
  return v;
}

/* Debian/gnulib version comparison (verrevcmp) on [a,ae) [b,be). */
static int order(unsigned char c)
{
  if (g_ascii_isdigit(c)) return 0;
  if (g_ascii_isalpha(c)) return c;
  if (c == '~') return -1;
  return (int)c + 256;
}

static int verrevcmp(const char *a, size_t alen, const char *b, size_t blen)
{
  size_t ai = 0, bi = 0;
  while (ai < alen || bi < blen) {
    int first_diff = 0;
    while ((ai < alen && !g_ascii_isdigit(a[ai])) || (bi < blen && !g_ascii_isdigit(b[bi]))) {
      int ac = ai < alen ? order((unsigned char)a[ai]) : 0;
      int bc = bi < blen ? order((unsigned char)b[bi]) : 0;
      if (ac != bc) return ac - bc;
      ai++;
      bi++;
    }
    while (ai < alen && a[ai] == '0') ai++;
    while (bi < blen && b[bi] == '0') bi++;
    while (ai < alen && bi < blen && g_ascii_isdigit(a[ai]) && g_ascii_isdigit(b[bi])) {
      if (!first_diff) first_diff = a[ai] - b[bi];
      ai++;
      bi++;
    }
    if (ai < alen && g_ascii_isdigit(a[ai])) return 1;
    if (bi < blen && g_ascii_isdigit(b[bi])) return -1;
    if (first_diff) return first_diff;
  }
  return 0;
}

/* Length of s without its file suffix (gnulib filevercmp). */
static size_t prefix_len(const char *s, size_t len)
{
  size_t prefix = len;
  bool in_suffix = false;
  size_t i = 0;
  if (i < len && s[i] == '.') i++;
  size_t suffix_start = len;
  for (; i < len; i++) {
    char c = s[i];
    if (in_suffix && !(g_ascii_isalpha(c) || c == '~')) { /* allowed digits too */
    }
    if (c == '.') {
      if (!in_suffix || (i > 0 && s[i - 1] == '.')) {
        suffix_start = i;
        in_suffix = true;
      }
      if (i + 1 < len && !(g_ascii_isalpha(s[i + 1]) || s[i + 1] == '~'))
        in_suffix = false, suffix_start = len;
    } else if (!(g_ascii_isalnum(c) || c == '~')) {
      in_suffix = false;
      suffix_start = len;
    }
  }
  prefix = suffix_start;
  return prefix;
}

int bx_filevercmp(const char *a, size_t alen, const char *b, size_t blen);
int bx_filevercmp(const char *a, size_t alen, const char *b, size_t blen)
{
  if (alen == blen && memcmp(a, b, alen) == 0) return 0;
  if (!alen) return -1;
  if (!blen) return 1;
  bool adot = alen == 1 && a[0] == '.', bdot = blen == 1 && b[0] == '.';
  if (adot != bdot) return adot ? -1 : 1;
  bool add = alen == 2 && a[0] == '.' && a[1] == '.', bdd = blen == 2 && b[0] == '.' && b[1] == '.';
  if (add != bdd) return add ? -1 : 1;
  bool ah = a[0] == '.', bh = b[0] == '.';
  if (ah != bh) return ah ? -1 : 1;
  size_t ap = prefix_len(a, alen), bp = prefix_len(b, blen);
  int r = 0;
  if (ap == bp && memcmp(a, b, ap) == 0)
    r = verrevcmp(a, alen, b, blen);
  else
    r = verrevcmp(a, ap, b, bp);
  if (r == 0) {
    int m = memcmp(a, b, MIN(alen, blen));
    r = m ? m : (alen < blen ? -1 : alen > blen);
  }
  return r;
}

static int text_cmp(const SortKey *k, const char *a, const char *ae, const char *b, const char *be)
{
  if (!k->fold && !k->dict && !k->nonprint) {
    size_t la = (size_t)(ae - a), lb = (size_t)(be - b);
    int m = memcmp(a, b, MIN(la, lb));
    if (m) return m;
    return la < lb ? -1 : la > lb;
  }
  for (;;) {
    while (a < ae && ((k->dict && !(g_ascii_isalnum(*a) || is_blank((unsigned char)*a))) ||
                      (k->nonprint && !g_ascii_isprint(*a))))
      a++;
    while (b < be && ((k->dict && !(g_ascii_isalnum(*b) || is_blank((unsigned char)*b))) ||
                      (k->nonprint && !g_ascii_isprint(*b))))
      b++;
    if (a >= ae || b >= be) return (a < ae) - (b < be);
    unsigned char ca = (unsigned char)*a, cb = (unsigned char)*b;
    if (k->fold) {
      ca = (unsigned char)g_ascii_toupper(ca);
      cb = (unsigned char)g_ascii_toupper(cb);
    }
    if (ca != cb) return ca < cb ? -1 : 1;
    a++;
    b++;
  }
}

static int key_cmp(const SortCtx *s, const SortKey *k, const Line *x, const Line *y)
{
  const char *a, *ae, *b, *be;
  key_span(s, k, x, &a, &ae);
  key_span(s, k, y, &b, &be);
  int r;
  if (k->numeric)
    r = num_cmp(a, ae, b, be);
  else if (k->human) {
    int ua = human_unit(a, ae), ub = human_unit(b, be);
    /* sign first: negative numbers before */
    r = num_cmp(a, ae, b, be);
    if (ua != ub) {
      const char *pa = a, *pb = b;
      while (pa < ae && is_blank((unsigned char)*pa)) pa++;
      while (pb < be && is_blank((unsigned char)*pb)) pb++;
      bool na = pa < ae && *pa == '-', nb = pb < be && *pb == '-';
      if (na != nb)
        r = na ? -1 : 1;
      else
        r = na ? (ua < ub ? 1 : -1) : (ua < ub ? -1 : 1);
    }
  } else if (k->general) {
    int ca, cb;
    double va = general_val(a, ae, &ca), vb = general_val(b, be, &cb);
    if (ca != cb)
      r = ca < cb ? -1 : 1;
    else
      r = ca < 2 ? 0 : (va < vb ? -1 : va > vb);
  } else if (k->month) {
    int ma = month_of(a, ae), mb = month_of(b, be);
    r = ma < mb ? -1 : ma > mb;
  } else if (k->version) {
    r = bx_filevercmp(a, (size_t)(ae - a), b, (size_t)(be - b));
  } else {
    r = text_cmp(k, a, ae, b, be);
  }
  return k->reverse ? -r : r;
}

static int line_cmp(const SortCtx *s, const Line *x, const Line *y)
{
  for (size_t i = 0; i < s->nkeys; i++) {
    int r = key_cmp(s, &s->keys[i], x, y);
    if (r) return r;
  }
  return 0;
}

static int full_cmp(const SortCtx *s, const Line *x, const Line *y)
{
  if (s->plain) {
    /* the whole line, bytes: one memcmp */
    size_t n = x->len < y->len ? x->len : y->len;
    int m = memcmp(x->p, y->p, n);
    int r = m ? m : (x->len < y->len ? -1 : x->len > y->len);
    return s->reverse_all ? -r : r;
  }
  int r = line_cmp(s, x, y);
  if (r || s->stable || s->unique) return r;
  size_t n = MIN(x->len, y->len);
  int m = memcmp(x->p, y->p, n);
  r = m ? m : (x->len < y->len ? -1 : x->len > y->len);
  return s->reverse_all ? -r : r;
}

static void merge_sort(const SortCtx *s, Line *v, Line *tmp, size_t n)
{
  if (n < 2) return;
  if (n <= 8) {
    for (size_t i = 1; i < n; i++) {
      Line t = v[i];
      size_t j = i;
      while (j > 0 && full_cmp(s, &v[j - 1], &t) > 0) {
        v[j] = v[j - 1];
        j--;
      }
      v[j] = t;
    }
    return;
  }
  size_t h = n / 2;
  merge_sort(s, v, tmp, h);
  merge_sort(s, v + h, tmp, n - h);
  if (full_cmp(s, &v[h - 1], &v[h]) <= 0) return;
  memcpy(tmp, v, h * sizeof *v);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n) v[k++] = full_cmp(s, &tmp[i], &v[j]) <= 0 ? tmp[i++] : v[j++];
  while (i < h) v[k++] = tmp[i++];
}

static bool set_flag(SortKey *k, char f)
{
  switch (f) {
  case 'b': k->skip_sblanks = k->skip_eblanks = true; return true;
  case 'd': k->dict = true; return true;
  case 'f': k->fold = true; return true;
  case 'g': k->general = true; return true;
  case 'h': k->human = true; return true;
  case 'i': k->nonprint = true; return true;
  case 'M': k->month = true; return true;
  case 'n': k->numeric = true; return true;
  case 'r': k->reverse = true; return true;
  case 'V': k->version = true; return true;
  default: return false;
  }
}

static bool has_ordering(const SortKey *k)
{
  return k->dict || k->fold || k->general || k->human || k->nonprint || k->month || k->numeric ||
         k->reverse || k->version || k->skip_sblanks || k->skip_eblanks;
}

static bool parse_key(BoxCmd *c, const char *spec, SortKey *k)
{
  const char *p = spec;
  char *end;
  memset(k, 0, sizeof *k);
  unsigned long f = strtoul(p, &end, 10);
  if (end == p || f == 0) {
    bx_err(c, "sort", "invalid number at field start: invalid count at start of '%s'", spec);
    return false;
  }
  k->sfield = f;
  p = end;
  if (*p == '.') {
    unsigned long ch = strtoul(p + 1, &end, 10);
    if (end == p + 1 || ch == 0) {
      bx_err(c, "sort", "character offset is zero: invalid field specification '%s'", spec);
      return false;
    }
    k->schar = ch - 1;
    p = end;
  }
  for (; *p && *p != ','; p++) {
    if (*p == 'b')
      k->skip_sblanks = true;
    else if (!set_flag(k, *p))
      goto bad;
  }
  if (*p == ',') {
    p++;
    f = strtoul(p, &end, 10);
    if (end == p || f == 0) {
      bx_err(c, "sort", "invalid number after ',': invalid count at start of '%s'", p);
      return false;
    }
    k->efield = f;
    p = end;
    if (*p == '.') {
      k->echar = strtoul(p + 1, &end, 10);
      p = end;
    }
    for (; *p; p++) {
      if (*p == 'b')
        k->skip_eblanks = true;
      else if (!set_flag(k, *p))
        goto bad;
    }
  }
  return true;
bad:
  bx_usage(c, "sort", "stray character in field spec: invalid field specification '%s'", spec);
  return false;
}

static const char longopts[] = "ignore-leading-blanks=b dictionary-order=d ignore-case=f "
                               "general-numeric-sort=g ignore-nonprinting=i "
                               "month-sort=M human-numeric-sort=h numeric-sort=n reverse=r "
                               "version-sort=V check=c:: key=k: merge=m output=o: "
                               "stable=s field-separator=t: unique=u zero-terminated=z "
                               "buffer-size=S: parallel=\1: temporary-directory=T:";

/* The keys as the comparison reads them: a key without ordering options of
 * its own takes the global ones; no -k is one key, the whole line. */
static void finish_keys(SortCtx *s, GArray *keys)
{
  for (guint i = 0; i < keys->len; i++) {
    SortKey *k = &g_array_index(keys, SortKey, i);
    if (!has_ordering(k)) {
      bool sb = k->skip_sblanks, eb = k->skip_eblanks;
      SortKey g = s->global;
      g.sfield = k->sfield;
      g.schar = k->schar;
      g.efield = k->efield;
      g.echar = k->echar;
      g.skip_sblanks = sb || s->global.skip_sblanks;
      g.skip_eblanks = eb || s->global.skip_eblanks;
      *k = g;
    }
  }
  if (keys->len == 0) {
    SortKey k = s->global;
    k.sfield = 1;
    k.efield = 0;
    g_array_append_val(keys, k);
  }
  s->keys = (SortKey *)keys->data;
  SortKey *k0 = &g_array_index(keys, SortKey, 0);
  SortKey probe = *k0;
  probe.reverse = false;
  s->plain = keys->len == 1 && k0->sfield == 1 && k0->schar == 0 && k0->efield == 0 &&
             !has_ordering(&probe) && k0->reverse == s->global.reverse && s->tab < 256;
  s->nkeys = keys->len;
  s->reverse_all = s->global.reverse;
}

/* All inputs into data, each ending in delim.  false after sort's message. */
static bool read_inputs(BoxCmd *c, char **files, int nf, char delim, GString *data)
{
  for (int i = 0; i < nf; i++) {
    int fd = bx_open_in(c, files[i]);
    if (fd < 0) {
      g_autofree char *t = bx_errtext(c, errno);
      bx_err(c, "sort", "cannot read: %s: %s", files[i], t);
      return false;
    }
    bool ok = bx_read_all(fd, data);
    int e = errno;
    bx_close_in(c, fd);
    if (!ok) {
      g_autofree char *t = bx_errtext(c, e);
      bx_err(c, "sort", "read failed: %s: %s", files[i], t);
      return false;
    }
    if (data->len && data->str[data->len - 1] != delim) g_string_append_c(data, delim);
  }
  return true;
}

int box_cmd_sort(BoxCmd *c)
{
  SortCtx s = { .tab = -1 };
  GArray *keys = g_array_new(FALSE, TRUE, sizeof(SortKey));
  const char *outfile = NULL;
  int check = 0; /* 1 -c, 2 -C */
  char delim = '\n';
  int status = 2;
  GString *data = g_string_new(NULL);
  GArray *lines = g_array_new(FALSE, FALSE, sizeof(Line));
  BX_EACH_OPTION (ch, c, "sort", "bdfghiMnrVcCk:mo:st:uzS:T:", longopts) switch (ch) {
    case 'c':
      check = optarg && (strcmp(optarg, "quiet") == 0 || strcmp(optarg, "silent") == 0) ? 2 : 1;
      break;
    case 'C': check = 2; break;
    case 'k': {
      SortKey k;
      if (!parse_key(c, optarg, &k)) goto out;
      g_array_append_val(keys, k);
      break;
    }
    case 'm':
    case 'S':
    case 'T':
    case 1: break;
    case 'o': outfile = optarg; break;
    case 's': s.stable = true; break;
    case 't':
      if (strlen(optarg) != 1) {
        if (strcmp(optarg, "\\0") == 0) {
          s.tab = 0;
          break;
        }
        bx_err(c, "sort", "multi-character tab '%s'", optarg);
        goto out;
      }
      s.tab = (unsigned char)optarg[0];
      break;
    case 'u': s.unique = true; break;
    case 'z': delim = '\0'; break;
    case '?': goto out;
    default: set_flag(&s.global, (char)ch); break;
    }
  finish_keys(&s, keys);

  int nf;
  char **files = bx_file_operands(c, &nf);
  if (check && nf > 1) {
    g_autofree char *q = bx_quote_always(files[1]);
    bx_usage(c, "sort", "extra operand %s not allowed with -%c", q, check == 2 ? 'C' : 'c');
    goto out;
  }
  if (!read_inputs(c, files, nf, delim, data)) goto out;
  for (size_t pos = 0; pos < data->len;) {
    const char *e = memchr(data->str + pos, delim, data->len - pos);
    size_t end = (size_t)(e - data->str);
    Line l = { data->str + pos, end - pos };
    g_array_append_val(lines, l);
    pos = end + 1;
  }
  Line *v = (Line *)lines->data;
  size_t n = lines->len;
  if (check) {
    for (size_t i = 1; i < n; i++) {
      int r = full_cmp(&s, &v[i - 1], &v[i]);
      if (r > 0 || (s.unique && r == 0)) {
        if (check == 1) {
          box_out_flush(c->out);
          box_fdprintf(
            c->err, "sort: %s:%zu: disorder: ", strcmp(files[0], "-") == 0 ? "-" : files[0], i + 1);
          box_write_all(c->err, v[i].p, v[i].len);
          box_write_all(c->err, "\n", 1);
        }
        status = 1;
        goto out;
      }
    }
    status = 0;
    goto out;
  }
  Line *tmp = g_new(Line, n / 2 + 1);
  merge_sort(&s, v, tmp, n);
  g_free(tmp);
  BoxOut fo;
  BoxOut *o = c->out;
  int ofd = -1;
  if (outfile) {
    ofd = box_open_file(outfile, O_WRONLY | O_CREAT | O_TRUNC);
    if (ofd < 0) {
      g_autofree char *t = bx_errtext(c, errno);
      bx_err(c, "sort", "open failed: %s: %s", outfile, t);
      goto out;
    }
    box_out_init(&fo, ofd);
    o = &fo;
  }
  for (size_t i = 0; i < n; i++) {
    if (s.unique && i > 0 && line_cmp(&s, &v[i - 1], &v[i]) == 0) continue;
    box_out_write(o, v[i].p, v[i].len);
    box_out_putc(o, delim);
  }
  if (outfile) {
    box_out_flush(o);
    close(ofd);
  }
  status = 0;
out:
  g_array_free(keys, TRUE);
  g_array_free(lines, TRUE);
  g_string_free(data, TRUE);
  return status;
}
