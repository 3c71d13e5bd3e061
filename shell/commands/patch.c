/* patch.c — GNU patch: unified and context diffs (git's headers too),
 * [ORIGFILE [PATCHFILE]], -p N, -R, -N, -i FILE, -o FILE, -F N, -s, -f,
 * -t, --dry-run; exit 0 all applied, 1 some hunk failed or was ignored, 2
 * trouble.
 *
 * Hunks are placed as GNU places them, so the "succeeded at N (offset K
 * lines)" and "with fuzz F" reports agree: each hunk is first looked for
 * at its line moved by the offset the earlier hunks found, then nearer
 * before farther, after before before; fuzz F drops F lines of context
 * from each end.  Nothing is asked on a terminal: each question is printed
 * with its default answer taken, as GNU does when no one can answer.  A
 * file that does not take every hunk exactly keeps its old text in
 * FILE.orig; the hunks that failed go to FILE.rej in the patch's format. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  const char *p;
  size_t n; /* without the newline */
  bool nl;  /* ends in a newline */
} Line;

typedef struct {
  char op;   /* ' ' both sides, '-' old only, '+' new only */
  char mark; /* a context diff's mark ('!' for a change), else op */
  Line l;
} Op;

typedef struct {
  long old_first, new_first;
  long old_n, new_n;
  long prefix, suffix; /* lines of context before the first change, after the last */
  GArray *ops;         /* Op */
  const char *tail;    /* text after the header ("@@ … @@ func") */
  size_t tail_n;
} Hunk;

typedef struct {
  char *old_name, *new_name; /* NULL when the header has none */
  Line old_rest, new_rest;   /* what follows each name in its header (the date) */
  bool context;
  bool git, git_new, git_deleted;
  unsigned git_mode;
  long lead_from, lead_to; /* the text before the hunks, as lines */
  long first_hunk_line;    /* 1-based, as GNU counts (see marks_before) */
  GPtrArray *hunks;        /* Hunk* */
} FilePatch;

typedef struct {
  BoxCmd *c;
  BoxOut *out;          /* the messages: stdout, stderr when -o - takes stdout */
  const char *out_file; /* -o: every result goes there, no FILE.orig */
  long strip;           /* -1: basename */
  bool reverse, forward, dry_run, silent, force, batch;
  long max_fuzz;
  const char *file_arg;
  Line *pl; /* the patch's lines */
  long npl;
  int status;
} Patch;

/* ---- lines ------------------------------------------------------------------- */

static Line *split_lines(const GString *s, long *n)
{
  GArray *v = g_array_new(FALSE, FALSE, sizeof(Line));
  const char *p = s->str, *e = s->str + s->len;
  while (p < e) {
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    Line l = { p, nl ? (size_t)(nl - p) : (size_t)(e - p), nl != NULL };
    g_array_append_val(v, l);
    p = nl ? nl + 1 : e;
  }
  *n = (long)v->len;
  return (Line *)g_array_free(v, FALSE);
}

static bool starts(const Line *l, const char *pre)
{
  size_t k = strlen(pre);
  return l->n >= k && memcmp(l->p, pre, k) == 0;
}

static bool line_eq(const Line *a, const Line *b)
{
  return a->n == b->n && memcmp(a->p, b->p, a->n) == 0;
}

static void say(Patch *pt, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void say(Patch *pt, const char *fmt, ...)
{
  if (pt->silent) return;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_puts(pt->out, s);
}

/* A question no one can answer: printed, its default taken. */
static void ask(Patch *pt, const char *q)
{
  box_out_puts(pt->out, q);
  box_out_putc(pt->out, '\n');
}

static void fatal(Patch *pt, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void fatal(Patch *pt, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(pt->out);
  box_out_flush(pt->c->out);
  box_fdprintf(pt->c->err, "patch: **** %s\n", s);
  pt->status = 2;
}

/* ---- names ------------------------------------------------------------------- */

/* The name in a "--- NAME\tDATE" header: up to a tab, else the whole line
 * without trailing blanks. */
static char *header_name(const Line *l, size_t skip, Line *rest)
{
  const char *p = l->p + skip, *e = l->p + l->n;
  const char *end = e;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  const char *t = memchr(p, '\t', (size_t)(e - p));
  if (t) e = t;
  while (e > p && (e[-1] == ' ' || e[-1] == '\r')) e--;
  *rest = (Line){ e, (size_t)(end - e), true };
  if (e - p >= 2 && *p == '"' && e[-1] == '"') {
    g_autofree char *q = g_strndup(p + 1, (size_t)(e - p - 2));
    return g_strcompress(q);
  }
  return g_strndup(p, (size_t)(e - p));
}

static bool is_dev_null(const char *name)
{
  return name && strcmp(name, "/dev/null") == 0;
}

/* Whether a header's date is the epoch: diff -N dates the side where a
 * file is missing so ("1970-01-01 00:00:00.000000000 +0000", or the
 * same instant in another zone), and GNU patch reads that side as no
 * file, as /dev/null. */
static bool is_epoch(const Line *rest)
{
  char b[80];
  size_t n = MIN(rest->n, sizeof b - 1);
  memcpy(b, rest->p, n);
  b[n] = 0;
  struct tm tm = { 0 };
  int used = 0;
  char sign = 0;
  int zone = 0;
  if (sscanf(b, " %d-%d-%d %d:%d:%d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
             &tm.tm_min, &tm.tm_sec, &used) != 6)
    return false;
  const char *z = b + used;
  if (*z == '.') z += 1 + strspn(z + 1, "0123456789");
  if (sscanf(z, " %c%4d", &sign, &zone) != 2 || (sign != '+' && sign != '-')) return false;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  long offset = (zone / 100 * 60 + zone % 100) * 60L;
  return (long)timegm(&tm) - (sign == '-' ? -offset : offset) == 0;
}

/* -p N: N leading components off (NULL when there are fewer); no -p: the
 * last component. */
static char *strip_name(const Patch *pt, const char *name)
{
  if (!name || is_dev_null(name)) return NULL;
  if (pt->strip < 0) {
    const char *b = strrchr(name, '/');
    return g_strdup(b ? b + 1 : name);
  }
  const char *p = name;
  for (long k = 0; k < pt->strip; k++) {
    const char *s = strchr(p, '/');
    if (!s) return NULL;
    p = s + 1;
    while (*p == '/') p++;
  }
  return *p ? g_strdup(p) : NULL;
}

static bool file_exists(const char *name)
{
  int fd = box_open_file(name, O_RDONLY | O_NOCTTY);
  if (fd < 0) return errno != ENOENT && errno != ENOTDIR;
  close(fd);
  return true;
}

static int components(const char *s)
{
  int n = 0;
  for (; *s; s++) n += *s == '/';
  return n;
}

/* GNU's "best" of two names: fewer components, then a shorter last
 * component, then a shorter name; the old one on a tie. */
static const char *best_name(const char *a, const char *b)
{
  if (!a) return b;
  if (!b) return a;
  int ca = components(a), cb = components(b);
  if (ca != cb) return ca < cb ? a : b;
  const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
  size_t la = strlen(ba ? ba + 1 : a), lb = strlen(bb ? bb + 1 : b);
  if (la != lb) return la < lb ? a : b;
  return strlen(b) < strlen(a) ? b : a;
}

/* ---- parsing ----------------------------------------------------------------- */

static void hunk_free(gpointer p)
{
  Hunk *h = p;
  g_array_free(h->ops, TRUE);
  g_free(h);
}

static void fp_free(FilePatch *fp)
{
  g_free(fp->old_name);
  g_free(fp->new_name);
  if (fp->hunks) g_ptr_array_free(fp->hunks, TRUE);
}

static void count_context(Hunk *h)
{
  GArray *v = h->ops;
  long i = 0, j = (long)v->len;
  while (i < j && g_array_index(v, Op, i).op == ' ') i++;
  h->prefix = i;
  if (i == j) {
    h->suffix = 0;
    return;
  }
  while (j > i && g_array_index(v, Op, j - 1).op == ' ') j--;
  h->suffix = (long)v->len - j;
}

/* "a" or "a,b" at *s; false when there is no number. */
static bool parse_range(const char **s, long *a, long *b, bool *has_b)
{
  char *end;
  *a = strtol(*s, &end, 10);
  if (end == *s) return false;
  *has_b = *end == ',';
  if (*has_b) {
    const char *q = end + 1;
    *b = strtol(q, &end, 10);
    if (end == q) return false;
  }
  *s = end;
  return true;
}

static void add_op(Hunk *h, char op, char mark, const Line *l)
{
  Op o = { op, mark, *l };
  g_array_append_val(h->ops, o);
}

/* A "\ No newline at end of file" after op i's line. */
static long no_newline_mark(Patch *pt, long i, Op *last)
{
  if (i < pt->npl && starts(&pt->pl[i], "\\")) {
    if (last) last->l.nl = false;
    return i + 1;
  }
  return i;
}

/* The unified hunk at line i ("@@ -a,b +c,d @@"); the line after it, or -1
 * after a malformed one (reported). */
static long parse_unified_hunk(Patch *pt, long i, Hunk *h)
{
  const Line *hl = &pt->pl[i];
  g_autofree char *hs = g_strndup(hl->p, hl->n);
  const char *s = hs + 3;
  long a, b = 1, cc, d = 1;
  bool hb, hd;
  if (*s++ != '-' || !parse_range(&s, &a, &b, &hb) || *s++ != ' ' || *s++ != '+' ||
      !parse_range(&s, &cc, &d, &hd) || strncmp(s, " @@", 3) != 0) {
    fatal(pt, "malformed patch at line %ld: %s", i + 1, hs);
    return -1;
  }
  h->old_first = a;
  h->new_first = cc;
  h->old_n = b;
  h->new_n = d;
  h->tail = hl->p + (s - hs) + 3;
  h->tail_n = hl->n - (size_t)(s - hs) - 3;
  long o = 0, n = 0;
  i++;
  while (o < b || n < d) {
    if (i >= pt->npl) {
      fatal(pt, "unexpected end of file in patch");
      return -1;
    }
    const Line *l = &pt->pl[i];
    Line body = { l->p + 1, l->n ? l->n - 1 : 0, l->nl };
    char ch = l->n ? l->p[0] : ' ';
    if (ch == '\\') {
      if (h->ops->len) g_array_index(h->ops, Op, h->ops->len - 1).l.nl = false;
      i++;
      continue;
    }
    if (ch != ' ' && ch != '-' && ch != '+') {
      g_autofree char *t = g_strndup(l->p, l->n);
      fatal(pt, "malformed patch at line %ld: %s", i + 1, t);
      return -1;
    }
    if (ch != '+') o++;
    if (ch != '-') n++;
    add_op(h, ch, ch, &body);
    i++;
  }
  Op *last = h->ops->len ? &g_array_index(h->ops, Op, h->ops->len - 1) : NULL;
  return no_newline_mark(pt, i, last);
}

/* One side of a context hunk: its lines (marks "  ", "- ", "+ ", "! ")
 * from line i on, into v. */
static long context_side(Patch *pt, long i, GArray *v)
{
  while (i < pt->npl) {
    const Line *l = &pt->pl[i];
    if (starts(l, "\\")) {
      if (v->len) g_array_index(v, Op, v->len - 1).l.nl = false;
      i++;
      continue;
    }
    if (l->n < 2 || l->p[1] != ' ' || !strchr(" -+!", l->p[0])) {
      if (!(l->n == 0 || (l->n == 1 && l->p[0] == ' '))) break;
    }
    Line body = { l->p + MIN(l->n, 2), l->n > 2 ? l->n - 2 : 0, l->nl };
    Op o = { l->n ? l->p[0] : ' ', l->n ? l->p[0] : ' ', body };
    if (starts(l, "--- ") || starts(l, "***")) break;
    g_array_append_val(v, o);
    i++;
  }
  return i;
}

/* "*** a,b ****" / "--- a,b ----": first line and count. */
static bool context_range(const Line *l, const char *lead, long *first, long *n)
{
  g_autofree char *s = g_strndup(l->p, l->n);
  const char *p = s + strlen(lead);
  long a, b = 0;
  bool hb;
  if (!parse_range(&p, &a, &b, &hb)) return false;
  *first = a;
  *n = hb ? b - a + 1 : (a == 0 ? 0 : 1);
  return true;
}

static long parse_context_hunk(Patch *pt, long i, Hunk *h)
{
  const Line *sl = &pt->pl[i];
  h->tail = sl->p + 15;
  h->tail_n = sl->n - 15;
  i++;
  if (i >= pt->npl || !starts(&pt->pl[i], "*** ") ||
      !context_range(&pt->pl[i], "*** ", &h->old_first, &h->old_n)) {
    g_autofree char *t = i < pt->npl ? g_strndup(pt->pl[i].p, pt->pl[i].n) : g_strdup("");
    fatal(pt, "malformed patch at line %ld: %s", i + 1, t);
    return -1;
  }
  GArray *ov = g_array_new(FALSE, FALSE, sizeof(Op)), *nv = g_array_new(FALSE, FALSE, sizeof(Op));
  i = context_side(pt, i + 1, ov);
  bool ok = i < pt->npl && starts(&pt->pl[i], "--- ") &&
            context_range(&pt->pl[i], "--- ", &h->new_first, &h->new_n);
  if (ok) i = context_side(pt, i + 1, nv);
  if (!ok) {
    g_autofree char *t = i < pt->npl ? g_strndup(pt->pl[i].p, pt->pl[i].n) : g_strdup("");
    fatal(pt, "malformed patch at line %ld: %s", i + 1, t);
    g_array_free(ov, TRUE);
    g_array_free(nv, TRUE);
    return -1;
  }
  /* a side left out holds only the other's context */
  guint a = 0, b = 0;
  while (a < ov->len || b < nv->len) {
    Op *x = a < ov->len ? &g_array_index(ov, Op, a) : NULL;
    Op *y = b < nv->len ? &g_array_index(nv, Op, b) : NULL;
    if (x && x->op == ' ' && (!y || y->op == ' ')) {
      add_op(h, ' ', ' ', &x->l);
      a++;
      b += y != NULL;
      continue;
    }
    if (!x && y && y->op == ' ') {
      add_op(h, ' ', ' ', &y->l);
      b++;
      continue;
    }
    while (a < ov->len && g_array_index(ov, Op, a).op != ' ') {
      Op *q = &g_array_index(ov, Op, a++);
      add_op(h, '-', q->mark, &q->l);
    }
    while (b < nv->len && g_array_index(nv, Op, b).op != ' ') {
      Op *q = &g_array_index(nv, Op, b++);
      add_op(h, '+', q->mark, &q->l);
    }
  }
  g_array_free(ov, TRUE);
  g_array_free(nv, TRUE);
  return i;
}

/* GNU's count of input lines leaves out the "\ No newline" marks. */
static long marks_before(const Patch *pt, long k)
{
  long n = 0;
  for (long i = 0; i < k; i++) n += starts(&pt->pl[i], "\\");
  return n;
}

/* The next file's patch from line *i on; false at the end (or after a
 * fatal error, pt->status 2). */
static bool next_file_patch(Patch *pt, long *i, FilePatch *fp)
{
  memset(fp, 0, sizeof *fp);
  fp->lead_from = *i;
  long k = *i;
  bool git = false;
  for (; k < pt->npl; k++) {
    const Line *l = &pt->pl[k];
    if (starts(l, "diff --git ")) {
      /* a git patch with no hunks ends here: a file created or deleted
       * empty is patched, a mode change or a rename is not */
      if (git && (fp->git_new || fp->git_deleted)) break;
      git = true;
      fp->lead_from = k;
      g_clear_pointer(&fp->old_name, g_free);
      g_clear_pointer(&fp->new_name, g_free);
      g_autofree char *s = g_strndup(l->p + 11, l->n - 11);
      char *sp = strstr(s, " b/");
      if (sp) {
        fp->old_name = g_strndup(s, (size_t)(sp - s));
        fp->new_name = g_strdup(sp + 1);
      }
      continue;
    }
    if (git && (starts(l, "new file mode ") || starts(l, "deleted file mode "))) {
      bool nw = l->p[0] == 'n';
      (nw ? &fp->git_new : &fp->git_deleted)[0] = true;
      fp->git_mode = (unsigned)strtoul(l->p + (nw ? 14 : 18), NULL, 8);
      continue;
    }
    bool uni = starts(l, "--- ") && k + 2 < pt->npl && starts(&pt->pl[k + 1], "+++ ") &&
               starts(&pt->pl[k + 2], "@@ -");
    bool ctx = starts(l, "*** ") && k + 2 < pt->npl && starts(&pt->pl[k + 1], "--- ") &&
               starts(&pt->pl[k + 2], "***************");
    if (!uni && !ctx) continue;
    fp->context = ctx;
    fp->git = git;
    g_free(fp->old_name);
    g_free(fp->new_name);
    fp->old_name = header_name(l, 4, &fp->old_rest);
    fp->new_name = header_name(&pt->pl[k + 1], 4, &fp->new_rest);
    fp->lead_to = k + 2;
    fp->first_hunk_line = k + 3 - marks_before(pt, k);
    fp->hunks = g_ptr_array_new_with_free_func(hunk_free);
    k += 2;
    while (k < pt->npl &&
           (ctx ? starts(&pt->pl[k], "***************") : starts(&pt->pl[k], "@@ -"))) {
      Hunk *h = g_new0(Hunk, 1);
      h->ops = g_array_new(FALSE, FALSE, sizeof(Op));
      g_ptr_array_add(fp->hunks, h);
      k = ctx ? parse_context_hunk(pt, k, h) : parse_unified_hunk(pt, k, h);
      if (k < 0) return false;
      count_context(h);
    }
    *i = k;
    return true;
  }
  if (git && (fp->git_new || fp->git_deleted)) {
    fp->git = true;
    fp->lead_to = k;
    fp->first_hunk_line = k + 1 - marks_before(pt, k);
    fp->hunks = g_ptr_array_new_with_free_func(hunk_free);
    *i = k;
    return true;
  }
  g_free(fp->old_name);
  g_free(fp->new_name);
  fp->old_name = fp->new_name = NULL;
  *i = k;
  return false;
}

/* -R: old and new change places; in each run of changes the old lines
 * still come first. */
static void swap_hunk(Hunk *h)
{
  long t = h->old_first;
  h->old_first = h->new_first;
  h->new_first = t;
  t = h->old_n;
  h->old_n = h->new_n;
  h->new_n = t;
  GArray *v = h->ops;
  for (guint i = 0; i < v->len; i++) {
    Op *o = &g_array_index(v, Op, i);
    if (o->op != ' ') o->op = o->op == '-' ? '+' : '-';
    if (o->mark == '-' || o->mark == '+') o->mark = o->op;
  }
  GArray *plus = g_array_new(FALSE, FALSE, sizeof(Op));
  for (guint i = 0; i < v->len;) {
    if (g_array_index(v, Op, i).op == ' ') {
      i++;
      continue;
    }
    guint j = i, w = i;
    g_array_set_size(plus, 0);
    for (; j < v->len && g_array_index(v, Op, j).op != ' '; j++) {
      Op o = g_array_index(v, Op, j);
      if (o.op == '-')
        g_array_index(v, Op, w++) = o;
      else
        g_array_append_val(plus, o);
    }
    for (guint q = 0; q < plus->len; q++) g_array_index(v, Op, w++) = g_array_index(plus, Op, q);
    i = j;
  }
  g_array_free(plus, TRUE);
}

static void swap_file_patch(FilePatch *fp)
{
  for (guint i = 0; i < fp->hunks->len; i++) swap_hunk(g_ptr_array_index(fp->hunks, i));
  Line t = fp->old_rest;
  fp->old_rest = fp->new_rest;
  fp->new_rest = t;
  char *n = fp->old_name;
  fp->old_name = fp->new_name;
  fp->new_name = n;
}

/* ---- placing hunks ----------------------------------------------------------- */

typedef struct {
  Line *in; /* the file's lines, 1-based through in[k - 1] */
  long nin;
  long frozen; /* the last input line already copied out */
  long offset; /* what the hunks so far were moved by */
  long grown;  /* lines the applied hunks added (less those they removed) */
} Target;

static bool match_at(const Target *t, const Hunk *h, long base, long pfx, long sfx)
{
  long k = 0, want = h->old_n - sfx;
  for (guint i = 0; i < h->ops->len && k < want; i++) {
    const Op *o = &g_array_index(h->ops, Op, i);
    if (o->op == '+') continue;
    if (k >= pfx) {
      long at = base + k;
      if (at < 1 || at > t->nin || !line_eq(&t->in[at - 1], &o->l)) return false;
    }
    k++;
  }
  return true;
}

/* Where the hunk's first old line goes with this much fuzz; 0 for nowhere.
 * A hunk with less context at one end than at the other sits at that end
 * of the file. */
static long locate(Target *t, const Hunk *h, long fuzz, long *moved)
{
  long guess = h->old_first + t->offset;
  long context = MAX(h->prefix, h->suffix);
  long pfx = fuzz + h->prefix - context, sfx = fuzz + h->suffix - context;
  if (h->old_n == 0) {
    *moved = 0;
    return h->old_first == 0 ? 1 : guess + 1; /* an insertion goes after old_first */
  }
  long max_where = t->nin - (h->old_n - sfx) + 1;
  long min_where = t->frozen + 1 - (h->prefix - pfx);
  long up = max_where - guess, down = guess - min_where;
  if (guess <= down) down = guess - 1;
  if (pfx < 0 && h->old_first <= 1) {
    if (sfx < 0 && (h->old_n != t->nin || h->prefix < t->frozen)) return 0;
    long off = 1 - guess;
    if (t->frozen <= h->prefix && off <= up && match_at(t, h, guess + off, 0, MAX(sfx, 0))) {
      *moved = off;
      return guess + off;
    }
    return 0;
  }
  pfx = MAX(pfx, 0);
  if (sfx < 0) {
    long off = guess - (t->nin - h->old_n + 1);
    if (off <= down && match_at(t, h, guess - off, pfx, 0)) {
      *moved = -off;
      return guess - off;
    }
    return 0;
  }
  long most = MAX(up, down);
  for (long off = 0; off <= most; off++) {
    if (off <= up && match_at(t, h, guess + off, pfx, sfx)) {
      *moved = off;
      return guess + off;
    }
    if (off > 0 && off <= down && match_at(t, h, guess - off, pfx, sfx)) {
      *moved = -off;
      return guess - off;
    }
  }
  return 0;
}

static void put_line(GString *out, const Line *l)
{
  g_string_append_len(out, l->p, (gssize)l->n);
  if (l->nl) g_string_append_c(out, '\n');
}

/* Copies the input up to where, then the hunk's lines (the file's own
 * text for its context: fuzz may have let a context line differ). */
static void apply_hunk(Target *t, const Hunk *h, long where, GString *out)
{
  for (long k = t->frozen + 1; k < where; k++) put_line(out, &t->in[k - 1]);
  long k = where;
  for (guint i = 0; i < h->ops->len; i++) {
    const Op *o = &g_array_index(h->ops, Op, i);
    if (o->op == '+')
      put_line(out, &o->l);
    else {
      if (o->op == ' ') put_line(out, k <= t->nin ? &t->in[k - 1] : &o->l);
      k++;
    }
  }
  t->frozen = k - 1;
}

/* ---- rejects ----------------------------------------------------------------- */

static void unified_range(GString *s, long first, long n)
{
  if (n == 1)
    g_string_append_printf(s, "%ld", first);
  else
    g_string_append_printf(s, "%ld,%ld", first, n);
}

static void context_range_out(GString *s, long first, long n)
{
  if (n <= 1)
    g_string_append_printf(s, "%ld", first);
  else
    g_string_append_printf(s, "%ld,%ld", first, first + n - 1);
}

static void rej_line(GString *s, const char *mark, const Line *l)
{
  g_string_append(s, mark);
  /* GNU writes a last line without its newline and with no marker */
  put_line(s, l);
}

/* A reject file's header line: the name as -p (or its absence) leaves
 * it, its date kept. */
static void rej_header(Patch *pt, GString *rej, const char *lead, const char *name,
                       const Line *rest)
{
  g_autofree char *shown = strip_name(pt, name);
  g_string_append(rej, lead);
  g_string_append(rej, shown ? shown : name ? name : "/dev/null");
  g_string_append_len(rej, rest->p, (gssize)rest->n);
  g_string_append_c(rej, '\n');
}

/* One side of a context diff's hunk: its range, then every line it has. */
static void rej_context_side(GString *rej, const Hunk *h, bool old, long offset)
{
  g_string_append(rej, old ? "*** " : "--- ");
  context_range_out(rej, (old ? h->old_first : h->new_first) + offset, old ? h->old_n : h->new_n);
  g_string_append(rej, old ? " ****\n" : " ----\n");
  for (guint i = 0; i < h->ops->len; i++) {
    const Op *o = &g_array_index(h->ops, Op, i);
    if (o->op == (old ? '+' : '-')) continue;
    rej_line(rej, o->op == ' ' ? "  " : o->mark == '!' ? "! " : old ? "- " : "+ ", &o->l);
  }
}

static void reject_hunk(GString *rej, const FilePatch *fp, const Hunk *h, long offset)
{
  if (!fp->context) {
    g_string_append(rej, "@@ -");
    unified_range(rej, h->old_first + offset, h->old_n);
    g_string_append(rej, " +");
    unified_range(rej, h->new_first + offset, h->new_n);
    g_string_append(rej, " @@");
    g_string_append_len(rej, h->tail, (gssize)h->tail_n);
    g_string_append_c(rej, '\n');
    for (guint i = 0; i < h->ops->len; i++) {
      const Op *o = &g_array_index(h->ops, Op, i);
      char m[2] = { o->op, 0 };
      rej_line(rej, m, &o->l);
    }
    return;
  }
  g_string_append(rej, "***************");
  g_string_append_len(rej, h->tail, (gssize)h->tail_n);
  g_string_append_c(rej, '\n');
  rej_context_side(rej, h, true, offset);
  rej_context_side(rej, h, false, offset);
}

/* ---- one file ---------------------------------------------------------------- */

static bool write_file(Patch *pt, const char *name, const GString *s, unsigned mode)
{
  int fd = box_open_file(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && strchr(name, '/')) {
    g_autofree char *dir = g_path_get_dirname(name);
    g_mkdir_with_parents(dir, 0777);
    fd = box_open_file(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
  }
  if (fd < 0 || !box_write_all(fd, s->str, s->len)) {
    int e = errno;
    if (fd >= 0) close(fd);
    g_autofree char *t = bx_errtext(pt->c, e);
    fatal(pt, "Can't create file %s : %s", name, t);
    return false;
  }
  if (mode) fchmod(fd, mode & 07777);
  close(fd);
  return true;
}

static void print_lead(Patch *pt, const FilePatch *fp)
{
  box_out_puts(pt->out, "The text leading up to this was:\n--------------------------\n");
  for (long k = fp->lead_from; k < fp->lead_to; k++) {
    box_out_putc(pt->out, '|');
    box_out_write(pt->out, pt->pl[k].p, pt->pl[k].n);
    box_out_putc(pt->out, '\n');
  }
  box_out_puts(pt->out, "--------------------------\n");
}

static void ignored(Patch *pt, long n, const char *rej)
{
  box_out_printf(pt->out, "%ld out of %ld hunk%s ignored", n, n, n == 1 ? "" : "s");
  if (rej) box_out_printf(pt->out, " -- saving rejects to file %s", rej);
  box_out_putc(pt->out, '\n');
  pt->status = MAX(pt->status, 1);
}

/* The file to patch, or NULL after saying why there is none. */
static char *choose_file(Patch *pt, FilePatch *fp, bool *creating, bool *deleting)
{
  g_autofree char *on = strip_name(pt, fp->old_name), *nn = strip_name(pt, fp->new_name);
  /* the patch as written (before -R swaps it) names the file */
  bool old_null = is_dev_null(fp->old_name) || fp->git_new || is_epoch(&fp->old_rest);
  bool new_null = is_dev_null(fp->new_name) || fp->git_deleted || is_epoch(&fp->new_rest);
  *creating = pt->reverse ? new_null : old_null;
  *deleting = pt->reverse ? old_null : new_null;
  if (pt->file_arg) return g_strdup(pt->file_arg);
  bool eo = on && file_exists(on), en = nn && file_exists(nn);
  if (eo && en) return g_strdup(best_name(on, nn));
  if (eo || en) return g_strdup(eo ? on : nn);
  /* a hunkless git patch names the file twice, neither /dev/null */
  if (old_null && nn) return g_strdup(on ? best_name(on, nn) : nn);
  if (new_null && on) return g_strdup(nn ? best_name(on, nn) : on);
  if (!pt->silent) {
    box_out_printf(pt->out, "can't find file to patch at input line %ld\n", fp->first_hunk_line);
    box_out_printf(pt->out, "Perhaps you %s -p or --strip option?\n",
                   pt->strip >= 0 ? "used the wrong" : "should have used the");
  }
  print_lead(pt, fp);
  ask(pt, "File to patch: ");
  ask(pt, "Skip this patch? [y] ");
  say(pt, "Skipping patch.\n");
  if (fp->hunks->len) ignored(pt, (long)fp->hunks->len, NULL);
  return NULL;
}

/* As GNU does, the directories a deleted file leaves empty go too, the
 * deepest first, up to the first that is not empty. */
static void remove_empty_dirs(const char *name)
{
  g_autofree char *d = g_strdup(name);
  for (char *s = strrchr(d, '/'); s && s > d; s = strrchr(d, '/')) {
    *s = 0;
    if (rmdir(d) != 0) break;
  }
}

static void patch_one(Patch *pt, FilePatch *fp)
{
  bool creating, deleting;
  g_autofree char *name = choose_file(pt, fp, &creating, &deleting);
  if (!name) return;
  if (pt->reverse) swap_file_patch(fp);
  long nh = (long)fp->hunks->len;
  bool exists = file_exists(name);
  GString *text = g_string_new(NULL);
  if (exists) {
    int fd = box_open_file(name, O_RDONLY | O_NOCTTY);
    if (fd < 0 || !bx_read_all(fd, text)) {
      int e = errno;
      if (fd >= 0) close(fd);
      g_autofree char *t = bx_errtext(pt->c, e);
      fatal(pt, "Can't open file %s : %s", name, t);
      g_string_free(text, TRUE);
      return;
    }
    close(fd);
  }
  /* an empty file stands for none: a patch creating it fills it */
  if ((creating && exists && (text->len || !nh)) || (deleting && !exists && !pt->file_arg)) {
    g_string_free(text, TRUE);
    /* git's patch creating an empty file has no hunk to tell it from one
     * that empties a file */
    const char *what = creating ? nh ? "create" : "empty out" : "delete";
    const char *why = creating ? nh ? "already exists" : "is already empty" : "does not exist";
    box_out_printf(pt->out, "The next patch%s would %s the file %s,\nwhich %s!  ",
                   pt->reverse ? ", when reversed," : "", what, name, why);
    if (pt->forward) {
      box_out_puts(pt->out, "Skipping patch.\n");
    } else {
      ask(pt, pt->reverse ? "Ignore -R? [n] " : "Assume -R? [n] ");
      ask(pt, "Apply anyway? [n] ");
      say(pt, "Skipping patch.\n");
    }
    if (nh)
      ignored(pt, nh, NULL);
    else
      pt->status = MAX(pt->status, 1);
    return;
  }
  const char *dest = pt->out_file ? pt->out_file : name;
  say(pt, "%s file %s", pt->dry_run ? "checking" : "patching", dest);
  if (pt->out_file) say(pt, " (read from %s)", name);
  say(pt, "\n");
  Target t = { 0 };
  t.in = split_lines(text, &t.nin);
  GString *out = g_string_sized_new(text->len + 64);
  GString *rej = g_string_new(NULL);
  rej_header(pt, rej, fp->context ? "*** " : "--- ", fp->old_name, &fp->old_rest);
  rej_header(pt, rej, fp->context ? "--- " : "+++ ", fp->new_name, &fp->new_rest);
  long failed = 0;
  bool skip_rest = false, mismatch = false, asked = false;
  for (guint hi = 0; hi < fp->hunks->len; hi++) {
    Hunk *h = g_ptr_array_index(fp->hunks, hi);
    long where = 0, fuzz = 0, moved = 0;
    long max_fuzz = MIN(pt->max_fuzz, MAX(h->prefix, h->suffix));
    while (!skip_rest) {
      where = locate(&t, h, fuzz, &moved);
      mismatch |= !where;
      if (hi == 0 && !where && !pt->force && !asked) {
        swap_file_patch(fp);
        long m2;
        if (locate(&t, h, fuzz, &m2)) {
          asked = true;
          const char *what = pt->reverse ? "Unreversed patch detected!  "
                                         : "Reversed (or previously applied) patch detected!  ";
          if (pt->forward) {
            box_out_printf(pt->out, "%sSkipping patch.\n", what);
            skip_rest = true;
          } else if (pt->batch) {
            box_out_printf(pt->out, "%s%s\n", what, pt->reverse ? "Ignoring -R." : "Assuming -R.");
            pt->reverse = !pt->reverse;
            continue;
          } else {
            g_autofree char *q =
              g_strdup_printf("%s%s", what, pt->reverse ? "Ignore -R? [n] " : "Assume -R? [n] ");
            ask(pt, q);
            ask(pt, "Apply anyway? [n] ");
            say(pt, "Skipping patch.\n");
            skip_rest = true;
          }
        }
        swap_file_patch(fp);
        if (skip_rest) break;
      }
      if (where || ++fuzz > max_fuzz) break;
    }
    if (skip_rest) {
      reject_hunk(rej, fp, h, t.grown);
      failed++;
      continue;
    }
    if (!where) {
      say(pt, "Hunk #%u FAILED at %ld.\n", hi + 1, h->old_first + t.grown);
      reject_hunk(rej, fp, h, t.grown);
      failed++;
      mismatch = true;
      continue;
    }
    t.offset += moved;
    if (fuzz || t.offset) {
      mismatch = true;
      say(pt, "Hunk #%u succeeded at %ld", hi + 1, where + t.grown);
      if (fuzz) say(pt, " with fuzz %ld", fuzz);
      if (t.offset)
        say(pt, " (offset %ld line%s)", t.offset, t.offset == 1 || t.offset == -1 ? "" : "s");
      say(pt, ".\n");
    }
    apply_hunk(&t, h, where, out);
    t.grown += h->new_n - h->old_n;
  }
  for (long k = t.frozen + 1; k <= t.nin; k++) put_line(out, &t.in[k - 1]);
  g_autofree char *rej_name = g_strconcat(dest, ".rej", NULL);
  bool all_skipped = skip_rest;
  if (pt->out_file) {
    /* GNU writes -o's file even in a dry run, and leaves it empty when the
     * patch is skipped; a file made anew is private to its owner */
    if (all_skipped) g_string_truncate(out, 0);
    if (strcmp(dest, "-") == 0)
      bx_put(pt->c, out->str, out->len);
    else
      write_file(pt, dest, out, file_exists(dest) ? 0 : 0600);
  } else if (!pt->dry_run && !all_skipped) {
    if (mismatch && exists) {
      g_autofree char *orig = g_strconcat(name, ".orig", NULL);
      write_file(pt, orig, text, 0);
    }
    if (deleting && out->len == 0 && failed == 0) {
      if (unlink(name) != 0) {
        g_autofree char *e = bx_errtext(pt->c, errno);
        fatal(pt, "Can't delete file %s : %s", name, e);
      } else {
        remove_empty_dirs(name);
      }
    } else {
      write_file(pt, name, out, creating && fp->git_new ? fp->git_mode : 0);
    }
  }
  if (failed) {
    if (skip_rest) {
      ignored(pt, failed, pt->dry_run ? NULL : rej_name);
    } else {
      box_out_printf(pt->out, "%ld out of %u hunk%s FAILED", failed, fp->hunks->len,
                     fp->hunks->len == 1 ? "" : "s");
      if (!pt->dry_run) box_out_printf(pt->out, " -- saving rejects to file %s", rej_name);
      box_out_putc(pt->out, '\n');
      pt->status = MAX(pt->status, 1);
    }
    if (!pt->dry_run) write_file(pt, rej_name, rej, 0);
  }
  g_free(t.in);
  g_string_free(text, TRUE);
  g_string_free(out, TRUE);
  g_string_free(rej, TRUE);
}

static const char longopts[] = "strip=p: reverse=R forward=N dry-run=\1 input=i: fuzz=F: "
                               "silent=s quiet=s force=f batch=t output=o:";

static bool long_arg(Patch *pt, const char *v, const char *what, long *out)
{
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (!*v || *end || errno || n < 0) {
    fatal(pt, "%s %s is not a number", what, v);
    return false;
  }
  *out = n;
  return true;
}

int box_cmd_patch(BoxCmd *c)
{
  BoxOut msgs;
  Patch pt = { .c = c, .out = c->out, .strip = -1, .max_fuzz = 2 };
  const char *input = NULL;
  bx_getopt_start_try_prefixed();
  for (int ch; (ch = bx_getopt(c, "patch", "p:RNi:o:F:sft", longopts)) != -1;) switch (ch) {
    case 'p':
      if (!long_arg(&pt, optarg, "strip count", &pt.strip)) return 2;
      break;
    case 'F':
      if (!long_arg(&pt, optarg, "fuzz factor", &pt.max_fuzz)) return 2;
      break;
    case 'R': pt.reverse = true; break;
    case 'N': pt.forward = true; break;
    case 'i': input = optarg; break;
    case 'o': pt.out_file = optarg; break;
    case 's': pt.silent = true; break;
    case 'f': pt.force = pt.batch = true; break;
    case 't': pt.batch = true; break;
    case '\1': pt.dry_run = true; break;
    default: return 2;
    }
  int nops = c->argc - optind;
  if (nops > 2) {
    bx_usage(c, "patch", "%s: extra operand", c->argv[optind + 2]);
    return 2;
  }
  if (pt.out_file && strcmp(pt.out_file, "-") == 0) {
    box_out_init(&msgs, c->err);
    pt.out = &msgs;
  }
  if (nops >= 1) pt.file_arg = c->argv[optind];
  if (nops == 2) input = c->argv[optind + 1];
  GString *ptext = g_string_new(NULL);
  int fd = input ? box_open_file(input, O_RDONLY | O_NOCTTY) : c->in;
  if (fd < 0 || !bx_read_all(fd, ptext)) {
    int e = errno;
    g_autofree char *t = bx_errtext(c, e);
    fatal(&pt, "Can't open patch file %s : %s", input ? input : "-", t);
    if (fd >= 0 && input) close(fd);
    g_string_free(ptext, TRUE);
    return 2;
  }
  if (input) close(fd);
  pt.pl = split_lines(ptext, &pt.npl);
  long i = 0;
  int files = 0;
  bool reverse = pt.reverse;
  FilePatch fp;
  while (pt.status < 2 && next_file_patch(&pt, &i, &fp)) {
    files++;
    pt.reverse = reverse;
    patch_one(&pt, &fp);
    fp_free(&fp);
  }
  if (!files && pt.status < 2) {
    if (ptext->len) fatal(&pt, "Only garbage was found in the patch input.");
  }
  g_free(pt.pl);
  g_string_free(ptext, TRUE);
  box_out_flush(pt.out);
  return pt.status;
}
