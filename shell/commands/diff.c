/* diff.c — GNU diff: normal and unified (-u, -U N) output, -r, -N, -q, -s,
 * -b, -w, -i, -a, --label; exit 0 same, 1 different, 2 trouble.
 *
 * The edit script is found the way GNU diff finds it, so hunks come out
 * the same: lines with no match in the other file are set aside first, the
 * rest is split recursively at the middle snake of the forward and
 * backward searches (Myers' linear-space method, no heuristics), and the
 * runs of changes are then slid to merge with neighbours and to line up
 * with changes in the other file.  Every file is one open (read_content);
 * each operand and directory entry one stat, each directory one enumerate. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  BoxCmd *c;
  bool unified, recursive, new_file, brief, same_report, ign_space, ign_all, ign_case, text;
  long context;
  const char *label[2];
  GPtrArray *exclude; /* -x patterns, matched against each entry's name */
  char *switches;     /* the options as typed, for "diff -r a/x b/x" lines */
} Opt;

typedef struct {
  const char *name;
  GString *data;
  bool absent;
  struct stat st;
  const char **line; /* start of each line */
  size_t *len;       /* its length without the newline */
  size_t n;
  bool last_incomplete;
  int *id;       /* equivalence class of each line */
  char *changed; /* n + 2 entries, one sentinel each side; use changed + 1 */
} File;

static const char longopts[] = "unified=U:: recursive=r new-file=N brief=q "
                               "report-identical-files=s ignore-space-change=b ignore-all-space=w "
                               "ignore-case=i text=a label=L: exclude=x: normal=n";

/* ---- reading --------------------------------------------------------------- */

static bool load(Opt *o, File *f)
{
  f->data = g_string_new(NULL);
  if (!f->absent) {
    bool is_stdin = strcmp(f->name, "-") == 0;
    int fd = is_stdin ? o->c->in : box_open_file(f->name, O_RDONLY);
    if (fd < 0 || !bx_read_all(fd, f->data)) {
      bx_ferr(o->c, "diff", f->name, fd < 0 ? errno : errno);
      if (fd >= 0 && !is_stdin) close(fd);
      return false;
    }
    if (!is_stdin) close(fd);
  }
  GArray *ls = g_array_new(FALSE, FALSE, sizeof(const char *));
  GArray *ln = g_array_new(FALSE, FALSE, sizeof(size_t));
  const char *p = f->data->str, *end = p + f->data->len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
    g_array_append_val(ls, p);
    g_array_append_val(ln, l);
    if (!nl) {
      f->last_incomplete = true;
      break;
    }
    p = nl + 1;
  }
  f->n = ls->len;
  f->line = (const char **)g_array_free(ls, FALSE);
  f->len = (size_t *)g_array_free(ln, FALSE);
  f->id = g_new0(int, f->n + 1);
  f->changed = g_new0(char, f->n + 2);
  return true;
}

static void file_free(File *f)
{
  if (f->data) g_string_free(f->data, TRUE);
  g_free(f->line);
  g_free(f->len);
  g_free(f->id);
  g_free(f->changed);
}

static bool is_binary(const File *f)
{
  size_t n = MIN(f->data->len, (size_t)32768);
  return memchr(f->data->str, '\0', n) != NULL;
}

/* The key lines are compared by: the line as -b/-w/-i see it, plus a mark
 * for an incomplete last line (GNU never matches it with a complete one
 * unless white space is ignored). */
static GBytes *line_key(const Opt *o, const File *f, size_t i)
{
  const char *s = f->line[i];
  size_t n = f->len[i];
  GString *k = g_string_sized_new(n + 2);
  bool ws = o->ign_space || o->ign_all;
  for (size_t j = 0; j < n; j++) {
    char ch = s[j];
    if (ws && (ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\r')) {
      size_t e = j;
      while (e < n && (s[e] == ' ' || s[e] == '\t' || s[e] == '\v' || s[e] == '\f' || s[e] == '\r'))
        e++;
      if (o->ign_space && !o->ign_all && e < n) g_string_append_c(k, ' ');
      j = e - 1;
      continue;
    }
    g_string_append_c(k, o->ign_case ? g_ascii_tolower(ch) : ch);
  }
  if (!ws && i == f->n - 1 && f->last_incomplete) g_string_append_c(k, '\n');
  return g_string_free_to_bytes(k); /* lines may hold NULs: keys carry their length */
}

static bool same_bytes(const File *a, size_t i, const File *b, size_t j)
{
  bool inc_a = i == a->n - 1 && a->last_incomplete, inc_b = j == b->n - 1 && b->last_incomplete;
  return inc_a == inc_b && a->len[i] == b->len[j] && memcmp(a->line[i], b->line[j], a->len[i]) == 0;
}

/* ---- the edit script ---------------------------------------------------------- */

typedef struct {
  const int *xv, *yv; /* equivalence ids of the lines kept for the search */
  char *xch, *ych;    /* changed flags, indexed like xv/yv */
  int *fd, *bd;       /* diagonals, offset so index -ylim.. is valid */
  int too_expensive;  /* search cost past which a split is guessed (GNU's bound) */
} Ctx;

/* The middle snake of x[xoff,xlim) y[yoff,ylim): the point where the
 * forward and backward searches of the same cost meet. */
static void middle(Ctx *c, int xoff, int xlim, int yoff, int ylim, bool minimal, int *xmid,
                   int *ymid, bool *lo_min, bool *hi_min)
{
  int *fd = c->fd, *bd = c->bd;
  const int *xv = c->xv, *yv = c->yv;
  int dmin = xoff - ylim, dmax = xlim - yoff;
  int fmid = xoff - yoff, bmid = xlim - ylim;
  int fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
  bool odd = ((fmid - bmid) & 1) != 0;
  fd[fmid] = xoff;
  bd[bmid] = xlim;
  *lo_min = *hi_min = true;
  for (int cost = 1;; cost++) {
    if (fmin > dmin)
      fd[--fmin - 1] = -1;
    else
      ++fmin;
    if (fmax < dmax)
      fd[++fmax + 1] = -1;
    else
      --fmax;
    for (int d = fmax; d >= fmin; d -= 2) {
      int tlo = fd[d - 1], thi = fd[d + 1];
      int x = tlo >= thi ? tlo + 1 : thi;
      int y = x - d;
      while (x < xlim && y < ylim && xv[x] == yv[y]) {
        x++;
        y++;
      }
      fd[d] = x;
      if (odd && bmin <= d && d <= bmax && bd[d] <= x) {
        *xmid = x;
        *ymid = y;
        return;
      }
    }
    if (bmin > dmin)
      bd[--bmin - 1] = INT_MAX;
    else
      ++bmin;
    if (bmax < dmax)
      bd[++bmax + 1] = INT_MAX;
    else
      --bmax;
    for (int d = bmax; d >= bmin; d -= 2) {
      int tlo = bd[d - 1], thi = bd[d + 1];
      int x = tlo < thi ? tlo : thi - 1;
      int y = x - d;
      while (x > xoff && y > yoff && xv[x - 1] == yv[y - 1]) {
        x--;
        y--;
      }
      bd[d] = x;
      if (!odd && fmin <= d && d <= fmax && x <= fd[d]) {
        *xmid = x;
        *ymid = y;
        return;
      }
    }
    if (minimal || cost < c->too_expensive) continue;
    /* Too costly (inputs that are much alike yet reordered): split at the
     * furthest-reaching diagonal found so far, as GNU does, so a diff
     * always ends; the side guessed is searched without the bound. */
    int fxy = -1, fx = 0, bxy = INT_MAX, bx = 0;
    for (int d = fmax; d >= fmin; d -= 2) {
      int x = MIN(fd[d], xlim), y = x - d;
      if (ylim < y) {
        x = ylim + d;
        y = ylim;
      }
      if (fxy < x + y) {
        fxy = x + y;
        fx = x;
      }
    }
    for (int d = bmax; d >= bmin; d -= 2) {
      int x = MAX(xoff, bd[d]), y = x - d;
      if (y < yoff) {
        x = yoff + d;
        y = yoff;
      }
      if (x + y < bxy) {
        bxy = x + y;
        bx = x;
      }
    }
    if ((xlim + ylim) - bxy < fxy - (xoff + yoff)) {
      *xmid = fx;
      *ymid = fxy - fx;
      *lo_min = true;
      *hi_min = false;
    } else {
      *xmid = bx;
      *ymid = bxy - bx;
      *lo_min = false;
      *hi_min = true;
    }
    return;
  }
}

static void compare(Ctx *c, int xoff, int xlim, int yoff, int ylim, bool minimal)
{
  while (xoff < xlim && yoff < ylim && c->xv[xoff] == c->yv[yoff]) {
    xoff++;
    yoff++;
  }
  while (xlim > xoff && ylim > yoff && c->xv[xlim - 1] == c->yv[ylim - 1]) {
    xlim--;
    ylim--;
  }
  if (xoff == xlim) {
    while (yoff < ylim) c->ych[yoff++] = 1;
    return;
  }
  if (yoff == ylim) {
    while (xoff < xlim) c->xch[xoff++] = 1;
    return;
  }
  int xm, ym;
  bool lo_min, hi_min;
  middle(c, xoff, xlim, yoff, ylim, minimal, &xm, &ym, &lo_min, &hi_min);
  compare(c, xoff, xm, yoff, ym, lo_min);
  compare(c, xm, xlim, ym, ylim, hi_min);
}

/* Slides each run of changes of f up and down over equal lines so that
 * runs merge, and prefers a place where the other file changes too. */
static void shift_boundaries(File *f, File *other, int lo, int i_end)
{
  char *changed = f->changed + 1, *other_changed = other->changed + 1;
  const int *equivs = f->id;
  int i = lo, j = lo;
  for (;;) {
    while (i < i_end && !changed[i]) {
      while (other_changed[j++]) continue;
      i++;
    }
    if (i == i_end) break;
    int start = i;
    while (changed[++i]) continue;
    while (other_changed[j]) j++;
    int runlength, corresponding;
    do {
      runlength = i - start;
      while (start > lo && equivs[start - 1] == equivs[i - 1]) {
        changed[--start] = 1;
        changed[--i] = 0;
        while (changed[start - 1]) start--;
        while (other_changed[--j]) continue;
      }
      corresponding = other_changed[j - 1] ? i : i_end;
      while (i != i_end && equivs[start] == equivs[i]) {
        changed[start++] = 0;
        changed[i++] = 1;
        while (changed[i]) i++;
        while (other_changed[++j]) corresponding = i;
      }
    } while (runlength != i - start);
    while (corresponding < i) {
      changed[--start] = 1;
      changed[--i] = 0;
      while (other_changed[--j]) continue;
    }
  }
}

/* Which lines of f[lo,hi) to leave out of the search: those with no match
 * in the other file (other_count), and, inside long runs of those, lines
 * that match very many — GNU's rules, so the same alignment wins. */
static char *discards(const File *f, size_t lo, size_t hi, const int *other_count)
{
  long end = (long)(hi - lo);
  char *d = g_new0(char, end + 1);
  long many = 5;
  for (long tem = end / 64; (tem >>= 2) > 0;) many *= 2;
  for (long i = 0; i < end; i++) {
    int m = other_count[f->id[lo + i]];
    if (m == 0)
      d[i] = 1;
    else if (m > many)
      d[i] = 2;
  }
  for (long i = 0; i < end; i++) {
    if (d[i] == 2) {
      d[i] = 0;
      continue;
    }
    if (d[i] == 0) continue;
    long j, provisional = 0;
    for (j = i; j < end && d[j] != 0; j++)
      if (d[j] == 2) provisional++;
    while (j > i && d[j - 1] == 2) {
      d[--j] = 0;
      provisional--;
    }
    long length = j - i;
    if (provisional * 4 > length) {
      while (j > i)
        if (d[--j] == 2) d[j] = 0;
      continue;
    }
    long minimum = 1;
    for (long tem = length >> 2; (tem >>= 2) > 0;) minimum <<= 1;
    minimum++;
    long consec = 0;
    for (j = 0; j < length; j++) {
      if (d[i + j] != 2)
        consec = 0;
      else if (minimum == ++consec)
        j -= consec; /* back to the subrun's start: cancel it all */
      else if (minimum < consec)
        d[i + j] = 0;
    }
    consec = 0;
    for (j = 0; j < length; j++) {
      if (j >= 8 && d[i + j] == 1) break;
      if (d[i + j] == 2) {
        consec = 0;
        d[i + j] = 0;
      } else if (d[i + j] == 0)
        consec = 0;
      else
        consec++;
      if (consec == 3) break;
    }
    i += length - 1;
    consec = 0;
    for (j = 0; j < length; j++) {
      if (j >= 8 && d[i - j] == 1) break;
      if (d[i - j] == 2) {
        consec = 0;
        d[i - j] = 0;
      } else if (d[i - j] == 0)
        consec = 0;
      else
        consec++;
      if (consec == 3) break;
    }
  }
  return d;
}

static void build_script(const Opt *o, File *a, File *b)
{
  GHashTable *ids =
    g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
  File *fs[2] = { a, b };
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < fs[k]->n; i++) {
      GBytes *key = line_key(o, fs[k], i);
      gpointer v = g_hash_table_lookup(ids, key);
      if (!v) {
        v = GINT_TO_POINTER(g_hash_table_size(ids) + 1);
        g_hash_table_insert(ids, key, v);
      } else {
        g_bytes_unref(key);
      }
      fs[k]->id[i] = GPOINTER_TO_INT(v);
    }
  int nid = (int)g_hash_table_size(ids) + 2;
  g_hash_table_destroy(ids);
  /* Identical leading and trailing lines (byte for byte) are left out of
   * the search but for `horizon` of them, the context width, as GNU does:
   * that bounds how far a run of changes can slide. */
  size_t pre = 0, suf = 0, minn = MIN(a->n, b->n);
  while (pre < minn && same_bytes(a, pre, b, pre)) pre++;
  while (suf < minn - pre && same_bytes(a, a->n - 1 - suf, b, b->n - 1 - suf)) suf++;
  size_t horizon = o->unified ? (size_t)o->context : 0;
  size_t drop_pre = pre > horizon ? pre - horizon : 0, drop_suf = suf > horizon ? suf - horizon : 0;
  size_t lo = drop_pre, hi[2] = { a->n - drop_suf, b->n - drop_suf };
  /* lines without a counterpart are changes whatever the alignment: set
   * them aside, so the search runs on the rest (as GNU does) */
  int *count[2] = { g_new0(int, nid), g_new0(int, nid) };
  for (int k = 0; k < 2; k++)
    for (size_t i = lo; i < hi[k]; i++) count[k][fs[k]->id[i]]++;
  int *kept_v[2], *kept_idx[2], nkept[2];
  char *kept_ch[2];
  for (int k = 0; k < 2; k++) {
    kept_v[k] = g_new(int, fs[k]->n + 1);
    kept_idx[k] = g_new(int, fs[k]->n + 1);
    kept_ch[k] = g_new0(char, fs[k]->n + 1);
    nkept[k] = 0;
    char *disc = discards(fs[k], lo, hi[k], count[1 - k]);
    for (size_t i = lo; i < hi[k]; i++) {
      if (disc[i - lo]) {
        fs[k]->changed[i + 1] = 1;
      } else {
        kept_v[k][nkept[k]] = fs[k]->id[i];
        kept_idx[k][nkept[k]++] = (int)i;
      }
    }
    g_free(disc);
  }
  size_t diags = (size_t)nkept[0] + (size_t)nkept[1] + 3;
  int *fdv = g_new(int, diags), *bdv = g_new(int, diags);
  int too_expensive = 1;
  for (size_t n = diags; n != 0; n >>= 2) too_expensive <<= 1;
  Ctx c = { kept_v[0],
            kept_v[1],
            kept_ch[0],
            kept_ch[1],
            fdv + nkept[1] + 1,
            bdv + nkept[1] + 1,
            MAX(4096, too_expensive) };
  compare(&c, 0, nkept[0], 0, nkept[1], false);
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < nkept[k]; i++)
      if (kept_ch[k][i]) fs[k]->changed[kept_idx[k][i] + 1] = 1;
    g_free(kept_v[k]);
    g_free(kept_idx[k]);
    g_free(kept_ch[k]);
    g_free(count[k]);
  }
  g_free(fdv);
  g_free(bdv);
  shift_boundaries(a, b, (int)lo, (int)hi[0]);
  shift_boundaries(b, a, (int)lo, (int)hi[1]);
}

typedef struct {
  size_t x, del, y, ins;
} Change;

static GArray *changes(File *a, File *b)
{
  GArray *v = g_array_new(FALSE, FALSE, sizeof(Change));
  size_t i = 0, j = 0;
  const char *ca = a->changed + 1, *cb = b->changed + 1;
  while (i < a->n || j < b->n) {
    if ((i < a->n && ca[i]) || (j < b->n && cb[j])) {
      Change ch = { i, 0, j, 0 };
      while (i < a->n && ca[i]) {
        i++;
        ch.del++;
      }
      while (j < b->n && cb[j]) {
        j++;
        ch.ins++;
      }
      g_array_append_val(v, ch);
    } else {
      i++;
      j++;
    }
  }
  return v;
}

/* ---- output ------------------------------------------------------------------- */

static void put_line(BoxCmd *c, const char *prefix, const File *f, size_t i)
{
  box_out_printf(c->out, "%s", prefix);
  bx_put(c, f->line[i], f->len[i]);
  bx_put(c, "\n", 1);
  if (i == f->n - 1 && f->last_incomplete) box_out_printf(c->out, "\\ No newline at end of file\n");
}

/* Lines from+1 .. from+count as a hunk header writes them: normal diff's
 * "F,L" (the line before when empty), unified's "F,COUNT" ("F,0" when empty). */
static void put_range(GString *s, size_t from, size_t count, bool unified)
{
  if (count == 0)
    g_string_append_printf(s, unified ? "%zu,0" : "%zu", from);
  else if (count == 1)
    g_string_append_printf(s, "%zu", from + 1);
  else
    g_string_append_printf(s, "%zu,%zu", from + 1, unified ? count : from + count);
}

static void print_normal(Opt *o, File *a, File *b, GArray *v)
{
  for (guint k = 0; k < v->len; k++) {
    Change *ch = &g_array_index(v, Change, k);
    GString *h = g_string_new(NULL);
    put_range(h, ch->x, ch->del, false);
    g_string_append_c(h, ch->del && ch->ins ? 'c' : ch->del ? 'd' : 'a');
    put_range(h, ch->y, ch->ins, false);
    box_out_printf(o->c->out, "%s\n", h->str);
    g_string_free(h, TRUE);
    for (size_t i = 0; i < ch->del; i++) put_line(o->c, "< ", a, ch->x + i);
    if (ch->del && ch->ins) box_out_printf(o->c->out, "---\n");
    for (size_t i = 0; i < ch->ins; i++) put_line(o->c, "> ", b, ch->y + i);
  }
}

static void header_time(const File *f, char *buf, size_t cap)
{
  struct timespec t = { 0, 0 };
  if (!f->absent) {
    if (strcmp(f->name, "-") == 0)
      clock_gettime(CLOCK_REALTIME, &t);
    else
      t = f->st.st_mtim;
  }
  struct tm tm;
  localtime_r(&t.tv_sec, &tm);
  char a[64], z[16];
  strftime(a, sizeof a, "%Y-%m-%d %H:%M:%S", &tm);
  strftime(z, sizeof z, "%z", &tm);
  snprintf(buf, cap, "%s.%09ld %s", a, t.tv_nsec, z);
}

static void print_unified(Opt *o, File *a, File *b, GArray *v)
{
  char t0[96], t1[96];
  header_time(a, t0, sizeof t0);
  header_time(b, t1, sizeof t1);
  if (o->label[0])
    box_out_printf(o->c->out, "--- %s\n", o->label[0]);
  else
    box_out_printf(o->c->out, "--- %s\t%s\n", a->name, t0);
  if (o->label[1])
    box_out_printf(o->c->out, "+++ %s\n", o->label[1]);
  else
    box_out_printf(o->c->out, "+++ %s\t%s\n", b->name, t1);
  size_t ctx = (size_t)o->context;
  for (guint k = 0; k < v->len;) {
    guint last = k;
    /* changes closer than 2*context lines share a hunk */
    while (last + 1 < v->len) {
      Change *p = &g_array_index(v, Change, last), *n = &g_array_index(v, Change, last + 1);
      if (n->x - (p->x + p->del) > 2 * ctx) break;
      last++;
    }
    Change *first = &g_array_index(v, Change, k), *fin = &g_array_index(v, Change, last);
    size_t s0 = first->x > ctx ? first->x - ctx : 0;
    size_t s1 = first->y - (first->x - s0);
    size_t e0 = MIN(a->n, fin->x + fin->del + ctx);
    size_t e1 = fin->y + fin->ins + (e0 - (fin->x + fin->del));
    GString *h = g_string_new("@@ -");
    put_range(h, s0, e0 - s0, true);
    g_string_append(h, " +");
    put_range(h, s1, e1 - s1, true);
    box_out_printf(o->c->out, "%s @@\n", h->str);
    g_string_free(h, TRUE);
    size_t i = s0;
    for (guint m = k; m <= last; m++) {
      Change *ch = &g_array_index(v, Change, m);
      for (; i < ch->x; i++) put_line(o->c, " ", a, i);
      for (size_t d = 0; d < ch->del; d++) put_line(o->c, "-", a, ch->x + d);
      for (size_t d = 0; d < ch->ins; d++) put_line(o->c, "+", b, ch->y + d);
      i = ch->x + ch->del;
    }
    for (; i < e0; i++) put_line(o->c, " ", a, i);
    k = last + 1;
  }
}

/* ---- files and directories -------------------------------------------------------- */

static void diff_line(Opt *o, const char *n0, const char *n1)
{
  if (*o->switches)
    box_out_printf(o->c->out, "diff %s %s %s\n", o->switches, n0, n1);
  else
    box_out_printf(o->c->out, "diff %s %s\n", n0, n1);
}

/* Two regular files (either may be absent under -N).  in_dir: reached
 * through a directory, so the "diff …" line comes first. */
static int diff_files(Opt *o, const char *n0, const char *n1, const struct stat *s0,
                      const struct stat *s1, bool absent0, bool absent1, bool in_dir)
{
  File a = { .name = n0, .absent = absent0 }, b = { .name = n1, .absent = absent1 };
  if (s0) a.st = *s0;
  if (s1) b.st = *s1;
  int st = 2;
  if (s0 && s1 && s0->st_dev == s1->st_dev && s0->st_ino == s1->st_ino && S_ISREG(s0->st_mode)) {
    /* one file named twice: equal without reading it (GNU does the same) */
    if (o->same_report) box_out_printf(o->c->out, "Files %s and %s are identical\n", n0, n1);
    return 0;
  }
  bool ok0 = load(o, &a);
  bool ok1 = load(o, &b);
  if (!ok0 || !ok1) goto out;
  if (a.data->len == b.data->len && memcmp(a.data->str, b.data->str, a.data->len) == 0) {
    st = 0;
    if (o->same_report) box_out_printf(o->c->out, "Files %s and %s are identical\n", n0, n1);
    goto out;
  }
  if (!o->text && (is_binary(&a) || is_binary(&b))) {
    box_out_printf(
      o->c->out, o->brief ? "Files %s and %s differ\n" : "Binary files %s and %s differ\n", n0, n1);
    st = 1;
    goto out;
  }
  build_script(o, &a, &b);
  GArray *v = changes(&a, &b);
  if (v->len == 0) {
    st = 0;
    if (o->same_report) box_out_printf(o->c->out, "Files %s and %s are identical\n", n0, n1);
  } else if (o->brief) {
    box_out_printf(o->c->out, "Files %s and %s differ\n", n0, n1);
    st = 1;
  } else {
    if (in_dir) diff_line(o, n0, n1);
    if (o->unified)
      print_unified(o, &a, &b, v);
    else
      print_normal(o, &a, &b, v);
    st = 1;
  }
  g_array_free(v, TRUE);
out:
  file_free(&a);
  file_free(&b);
  return st;
}

static int cmp_str(const void *x, const void *y)
{
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The sorted names of a directory (none when absent). */
static GPtrArray *names_of(Opt *o, const char *dir, bool absent, bool *ok)
{
  GPtrArray *v = g_ptr_array_new_with_free_func(g_free);
  *ok = true;
  if (absent) return v;
  int err = 0;
  GArray *ents = bx_list_dir(dir, &err);
  if (!ents) {
    bx_ferr(o->c, "diff", dir, err);
    *ok = false;
    return v;
  }
  for (guint i = 0; i < ents->len; i++) {
    const char *n = g_array_index(ents, BxDirEnt, i).name;
    bool skip = false;
    for (guint k = 0; k < o->exclude->len && !skip; k++)
      skip = box_fnmatch(o->exclude->pdata[k], n, 0) == 0;
    if (!skip) g_ptr_array_add(v, g_strdup(n));
  }
  bx_dir_free(ents);
  g_ptr_array_sort(v, cmp_str);
  return v;
}

static int diff_dirs(Opt *o, const char *d0, const char *d1, bool absent0, bool absent1);

/* One name found in a directory on at least one side. */
static int diff_entry(Opt *o, const char *d0, const char *d1, const char *name, bool in0, bool in1)
{
  char *p0 = bx_path_join(d0, name), *p1 = bx_path_join(d1, name);
  struct stat s0, s1;
  int st = 0;
  bool have0 = in0 && box_stat_file(p0, &s0) == 0;
  int e0 = errno;
  bool have1 = in1 && box_stat_file(p1, &s1) == 0;
  int e1 = errno;
  if (in0 && !have0) {
    bx_ferr(o->c, "diff", p0, e0);
    st = 2;
    goto out;
  }
  if (in1 && !have1) {
    bx_ferr(o->c, "diff", p1, e1);
    st = 2;
    goto out;
  }
  if (!have0 || !have1) {
    if (o->new_file) {
      const struct stat *s = have0 ? &s0 : &s1;
      if (S_ISDIR(s->st_mode)) {
        if (o->recursive)
          st = diff_dirs(o, p0, p1, !have0, !have1);
        else
          box_out_printf(o->c->out, "Only in %s: %s\n", have0 ? d0 : d1, name);
      } else {
        st = diff_files(o, p0, p1, have0 ? &s0 : NULL, have1 ? &s1 : NULL, !have0, !have1, true);
      }
    } else {
      box_out_printf(o->c->out, "Only in %s: %s\n", have0 ? d0 : d1, name);
      st = 1;
    }
    goto out;
  }
  bool dir0 = S_ISDIR(s0.st_mode), dir1 = S_ISDIR(s1.st_mode);
  if (dir0 && dir1) {
    if (o->recursive)
      st = diff_dirs(o, p0, p1, false, false);
    else
      box_out_printf(o->c->out, "Common subdirectories: %s and %s\n", p0, p1);
  } else if (dir0 != dir1 || !S_ISREG(s0.st_mode) || !S_ISREG(s1.st_mode)) {
    if (dir0 || dir1) {
      box_out_printf(o->c->out, "File %s is a %s while file %s is a %s\n", p0,
                     bx_file_type_name(s0.st_mode), p1, bx_file_type_name(s1.st_mode));
      st = 1;
    } else {
      st = diff_files(o, p0, p1, &s0, &s1, false, false, true);
    }
  } else {
    st = diff_files(o, p0, p1, &s0, &s1, false, false, true);
  }
out:
  g_free(p0);
  g_free(p1);
  return st;
}

static int diff_dirs(Opt *o, const char *d0, const char *d1, bool absent0, bool absent1)
{
  bool ok0, ok1;
  GPtrArray *a = names_of(o, d0, absent0, &ok0), *b = names_of(o, d1, absent1, &ok1);
  int st = ok0 && ok1 ? 0 : 2;
  if (st == 0) {
    guint i = 0, j = 0;
    while (i < a->len || j < b->len) {
      int r = i >= a->len ? 1 : j >= b->len ? -1 : strcmp(a->pdata[i], b->pdata[j]);
      int s;
      if (r == 0) {
        s = diff_entry(o, d0, d1, a->pdata[i], true, true);
        i++;
        j++;
      } else if (r < 0) {
        s = diff_entry(o, d0, d1, a->pdata[i], true, false);
        i++;
      } else {
        s = diff_entry(o, d0, d1, b->pdata[j], false, true);
        j++;
      }
      st = MAX(st, s);
    }
  }
  g_ptr_array_free(a, TRUE);
  g_ptr_array_free(b, TRUE);
  return st;
}

static int top(Opt *o, const char *n0, const char *n1)
{
  struct stat s0, s1;
  bool in0 = strcmp(n0, "-") == 0, in1 = strcmp(n1, "-") == 0;
  bool have0 = in0 ? fstat(o->c->in, &s0) == 0 : box_stat_file(n0, &s0) == 0;
  int e0 = errno;
  bool have1 = in1 ? fstat(o->c->in, &s1) == 0 : box_stat_file(n1, &s1) == 0;
  int e1 = errno;
  int st = 0;
  bool absent0 = false, absent1 = false;
  if (!have0 && !(o->new_file && e0 == ENOENT && have1)) {
    bx_ferr(o->c, "diff", n0, e0);
    st = 2;
  }
  if (!have1 && !(o->new_file && e1 == ENOENT && have0)) {
    bx_ferr(o->c, "diff", n1, e1);
    st = 2;
  }
  if (st) return st;
  if (!have0) {
    absent0 = true;
    s0 = s1;
  }
  if (!have1) {
    absent1 = true;
    s1 = s0;
  }
  bool dir0 = S_ISDIR(s0.st_mode), dir1 = S_ISDIR(s1.st_mode);
  if (dir0 && dir1) return diff_dirs(o, n0, n1, absent0, absent1);
  if (dir0 || dir1) {
    /* a file against a directory: the directory's entry of that name */
    const char *file = dir0 ? n1 : n0, *dir = dir0 ? n0 : n1;
    if (strcmp(file, "-") == 0) {
      bx_err(o->c, "diff", "cannot compare '-' to a directory");
      return 2;
    }
    char *base = g_path_get_basename(file);
    char *p = bx_path_join(dir, base);
    g_free(base);
    struct stat sp;
    if (box_stat_file(p, &sp) != 0) {
      bx_ferr(o->c, "diff", p, errno);
      g_free(p);
      return 2;
    }
    int r = dir0 ? diff_files(o, p, n1, &sp, &s1, false, false, false)
                 : diff_files(o, n0, p, &s0, &sp, false, false, false);
    g_free(p);
    return r;
  }
  return diff_files(o, n0, n1, absent0 ? NULL : &s0, absent1 ? NULL : &s1, absent0, absent1, false);
}

int box_cmd_diff(BoxCmd *c)
{
  Opt o = { .c = c, .context = 3, .exclude = g_ptr_array_new() };
  int nlabels = 0;
  bx_getopt_start_try_prefixed();
  int ch;
  bool bad = false;
  bool *const flags[] = { &o.recursive, &o.new_file, &o.brief,    &o.same_report,
                          &o.ign_space, &o.ign_all,  &o.ign_case, &o.text };
  while (!bad && (ch = bx_getopt(c, "diff", "uU:rNqsbwiaL:x:", longopts)) != -1) {
    if (bx_set_flag(ch, "rNqsbwia", flags)) continue;
    switch (ch) {
    case 'u': o.unified = true; break;
    case 'U': {
      if (optarg) {
        char *end;
        errno = 0;
        long v = strtol(optarg, &end, 10);
        if (!*optarg || *end || errno || v < 0) {
          bx_usage_q(c, "diff", "invalid context length %s", optarg);
          g_ptr_array_free(o.exclude, TRUE);
          return 2;
        }
        o.context = v;
      }
      o.unified = true;
      break;
    }
    case 'n': o.unified = false; break;
    case 'x': g_ptr_array_add(o.exclude, optarg); break;
    case 'L':
      if (nlabels >= 2) {
        bx_err(c, "diff", "too many file label options");
        g_ptr_array_free(o.exclude, TRUE);
        return 2;
      }
      o.label[nlabels++] = optarg;
      break;
    default: bad = true; break;
    }
  }
  if (bad) {
    g_ptr_array_free(o.exclude, TRUE);
    return 2;
  }
  int nops = c->argc - optind;
  if (nops < 2) {
    bx_usage_q(c, "diff", "missing operand after %s", c->argv[nops == 1 ? optind : c->argc - 1]);
    g_ptr_array_free(o.exclude, TRUE);
    return 2;
  }
  if (nops > 2) {
    bx_usage_q(c, "diff", "extra operand %s", c->argv[optind + 2]);
    g_ptr_array_free(o.exclude, TRUE);
    return 2;
  }
  GString *sw = g_string_new(NULL);
  for (int i = 1; i < optind; i++) {
    if (strcmp(c->argv[i], "--") == 0) continue;
    if (sw->len) g_string_append_c(sw, ' ');
    g_string_append(sw, c->argv[i]);
  }
  o.switches = g_string_free(sw, FALSE);
  int st = top(&o, c->argv[optind], c->argv[optind + 1]);
  g_free(o.switches);
  g_ptr_array_free(o.exclude, TRUE);
  return st;
}
