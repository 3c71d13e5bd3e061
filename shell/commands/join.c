/* join.c — GNU join: the lines of two sorted inputs with equal join fields
 * (-1, -2, -j; the first by default) joined into one: the field, then the
 * others of each; -t CHAR splits at each CHAR (else at runs of blanks), -a
 * N also prints N's unpairable lines, -v N only those, -e fills missing
 * fields, -o the fields to print (N.M, 0 the join field, or auto), -i
 * ignores case, --header joins the first lines as they are.  Order is
 * checked as GNU does: after the first unpairable line, the first line of
 * a file out of order is reported and the status is 1 (--check-order: at
 * once, fatally; --nocheck-order: never). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shell/commands/commands-private.h"

typedef struct {
  const char *p;
  size_t len;
} Span;

typedef struct {
  const char *text; /* without the end of line */
  size_t len;
  GArray *fields; /* Span */
} Line;

typedef struct {
  const char *name;
  GString *data;
  size_t at;        /* next unread byte */
  unsigned long no; /* lines read */
  size_t field;     /* the join field, 0-based */
  Line *prev;       /* the last line read, for the order check */
  bool warned;
} Input;

typedef struct {
  int file; /* 0: the join field */
  size_t field;
} OutSpec;

typedef struct {
  BoxCmd *c;
  int tab; /* -1: blanks */
  bool ignore_case, print_pairs, unpaired[2], autoformat;
  int check; /* -1 never, 0 GNU's default, 1 --check-order */
  const char *empty;
  GArray *format; /* OutSpec; NULL: the default */
  size_t autocount[2];
  bool seen_unpairable, fatal;
  Input in[2];
} Join;

static bool blank(char ch)
{
  return ch == ' ' || ch == '\t' || ch == '\n';
}

static Line *line_new(const Join *j, const char *p, size_t len)
{
  Line *l = g_new0(Line, 1);
  l->text = p;
  l->len = len;
  l->fields = g_array_new(FALSE, FALSE, sizeof(Span));
  const char *end = p + len;
  if (p == end) return l;
  if (j->tab >= 0) {
    for (const char *s; (s = memchr(p, j->tab, (size_t)(end - p))); p = s + 1)
      g_array_append_val(l->fields, ((Span){ p, (size_t)(s - p) }));
    g_array_append_val(l->fields, ((Span){ p, (size_t)(end - p) }));
    return l;
  }
  while (p < end && blank(*p)) p++;
  /* blanks at the end leave an empty last field, as in GNU's */
  while (p < end || (p == end && blank(p[-1]))) {
    const char *s = p;
    while (s < end && !blank(*s)) s++;
    g_array_append_val(l->fields, ((Span){ p, (size_t)(s - p) }));
    if (s == end) break;
    for (p = s; p < end && blank(*p); p++) continue;
  }
  return l;
}

static void line_free(Line *l)
{
  if (!l) return;
  g_array_free(l->fields, TRUE);
  g_free(l);
}

static Span field_of(const Line *l, size_t n)
{
  if (n < l->fields->len) return g_array_index(l->fields, Span, n);
  return (Span){ "", 0 };
}

static int keycmp(const Join *j, const Line *a, const Line *b, size_t fa, size_t fb)
{
  Span x = field_of(a, fa), y = field_of(b, fb);
  if (!x.len) return y.len ? -1 : 0;
  if (!y.len) return 1;
  int d =
    j->ignore_case ? strncasecmp(x.p, y.p, MIN(x.len, y.len)) : memcmp(x.p, y.p, MIN(x.len, y.len));
  if (d) return d;
  return x.len < y.len ? -1 : x.len > y.len;
}

/* The next line of input k (0 or 1), order checked; NULL at the end. */
static Line *next_line(Join *j, int k)
{
  Input *in = &j->in[k];
  if (j->fatal || in->at >= in->data->len) return NULL;
  const char *p = in->data->str + in->at;
  const char *nl = memchr(p, '\n', in->data->len - in->at);
  size_t len = nl ? (size_t)(nl - p) : in->data->len - in->at;
  in->at += len + (nl != NULL);
  in->no++;
  Line *l = line_new(j, p, len);
  if (in->prev && j->check >= 0 && (j->check > 0 || j->seen_unpairable) && !in->warned &&
      keycmp(j, in->prev, l, in->field, in->field) > 0) {
    bx_err(j->c, "join", "%s:%lu: is not sorted: %.*s", in->name, in->no, (int)len, p);
    in->warned = true;
    if (j->check > 0) j->fatal = true;
  }
  line_free(in->prev);
  in->prev = line_new(j, p, len);
  return l;
}

static void put_field(Join *j, const Line *l, size_t n)
{
  Span s = l ? field_of(l, n) : (Span){ "", 0 };
  if (s.len)
    bx_put(j->c, s.p, s.len);
  else if (j->empty)
    box_out_puts(j->c->out, j->empty);
}

static void put_sep(Join *j)
{
  box_out_putc(j->c->out, j->tab >= 0 ? (char)j->tab : ' ');
}

/* The rest of a line's fields (all but the join field); a missing line
 * (an unpaired one's other side) has none, or -o auto's count of empties. */
static void put_rest(Join *j, const Line *l, int k)
{
  size_t n = j->autoformat ? j->autocount[k] : l ? l->fields->len : 0;
  for (size_t i = 0; i < n; i++) {
    if (i == j->in[k].field) continue;
    put_sep(j);
    put_field(j, l, i);
  }
}

/* One output line from a (file 1) and b (file 2), either NULL when
 * unpaired. */
static void print_join(Join *j, const Line *a, const Line *b)
{
  if (j->format) {
    for (guint i = 0; i < j->format->len; i++) {
      OutSpec o = g_array_index(j->format, OutSpec, i);
      if (i) put_sep(j);
      if (o.file == 0)
        put_field(j, a ? a : b, a ? j->in[0].field : j->in[1].field);
      else
        put_field(j, o.file == 1 ? a : b, o.field);
    }
  } else {
    put_field(j, a ? a : b, a ? j->in[0].field : j->in[1].field);
    put_rest(j, a, 0);
    put_rest(j, b, 1);
  }
  box_out_putc(j->c->out, '\n');
}

static void free_lines(GPtrArray *v)
{
  for (guint i = 0; i < v->len; i++) line_free(v->pdata[i]);
  g_ptr_array_set_size(v, 0);
}

/* GNU's merge: a run of equal keys on each side is joined pairwise. */
static void merge(Join *j)
{
  GPtrArray *run[2] = { g_ptr_array_new(), g_ptr_array_new() };
  Line *head[2] = { next_line(j, 0), next_line(j, 1) };
  size_t f0 = j->in[0].field, f1 = j->in[1].field;
  while (head[0] && head[1] && !j->fatal) {
    int d = keycmp(j, head[0], head[1], f0, f1);
    if (d) {
      int k = d < 0 ? 0 : 1;
      if (j->unpaired[k]) print_join(j, k ? NULL : head[0], k ? head[1] : NULL);
      line_free(head[k]);
      head[k] = next_line(j, k);
      j->seen_unpairable = true;
      continue;
    }
    g_ptr_array_add(run[0], head[0]);
    while ((head[0] = next_line(j, 0)) && !keycmp(j, head[0], head[1], f0, f1))
      g_ptr_array_add(run[0], head[0]);
    const Line *first = run[0]->pdata[0];
    g_ptr_array_add(run[1], head[1]);
    while ((head[1] = next_line(j, 1)) && !keycmp(j, first, head[1], f0, f1))
      g_ptr_array_add(run[1], head[1]);
    if (j->print_pairs && !j->fatal)
      for (guint a = 0; a < run[0]->len; a++)
        for (guint b = 0; b < run[1]->len; b++) print_join(j, run[0]->pdata[a], run[1]->pdata[b]);
    free_lines(run[0]);
    free_lines(run[1]);
  }
  /* the tails: printed when asked for, read on for the order check */
  for (int k = 0; k < 2; k++) {
    if (!head[k] || j->fatal || (!j->unpaired[k] && j->check < 0)) continue;
    if (head[1 - k]) j->seen_unpairable = true;
    while (head[k] && !j->fatal) {
      if (j->unpaired[k]) print_join(j, k ? NULL : head[k], k ? head[k] : NULL);
      if (j->in[k].warned && !j->unpaired[k]) break;
      line_free(head[k]);
      head[k] = next_line(j, k);
    }
  }
  line_free(head[0]);
  line_free(head[1]);
  g_ptr_array_free(run[0], TRUE);
  g_ptr_array_free(run[1], TRUE);
}

static bool field_number(BoxCmd *c, const char *v, size_t *out)
{
  char *end;
  errno = 0;
  unsigned long n = strtoul(v, &end, 10);
  if (!g_ascii_isdigit(*v) || *end || errno || n == 0) {
    bx_err_q(c, "join", "invalid field number: %s", v, 0);
    return false;
  }
  *out = n - 1;
  return true;
}

static bool parse_format(Join *j, const char *v)
{
  if (strcmp(v, "auto") == 0) {
    j->autoformat = true;
    return true;
  }
  if (!j->format) j->format = g_array_new(FALSE, FALSE, sizeof(OutSpec));
  char **items = g_strsplit_set(v, ", \t", -1);
  bool ok = true;
  for (char **p = items; *p && ok; p++) {
    if (!**p) continue;
    OutSpec o = { 0, 0 };
    if (strcmp(*p, "0") != 0) {
      ok = (**p == '1' || **p == '2') && (*p)[1] == '.';
      if (!ok) {
        bx_err_q(j->c, "join", "invalid file number in field spec: %s", *p, 0);
        break;
      }
      o.file = **p - '0';
      ok = field_number(j->c, *p + 2, &o.field);
    }
    g_array_append_val(j->format, o);
  }
  g_strfreev(items);
  return ok;
}

static bool file_number(BoxCmd *c, const char *v, int *out)
{
  if ((v[0] == '1' || v[0] == '2') && !v[1]) {
    *out = v[0] - '1';
    return true;
  }
  bx_err_q(c, "join", "invalid field number: %s", v, 0);
  return false;
}

static const char longopts[] = "ignore-case=i check-order=\1 nocheck-order=\2 header=\3";

int box_cmd_join(BoxCmd *c)
{
  Join j = { .c = c, .tab = -1, .print_pairs = true };
  bool header = false;
  int status = 1, k;
  size_t f;
  BX_EACH_OPTION (ch, c, "join", "a:v:e:o:t:1:2:j:i", longopts) switch (ch) {
    case 'a':
      if (!file_number(c, optarg, &k)) goto out;
      j.unpaired[k] = true;
      break;
    case 'v':
      if (!file_number(c, optarg, &k)) goto out;
      j.unpaired[k] = true;
      j.print_pairs = false;
      break;
    case 'e': j.empty = optarg; break;
    case 'o':
      if (!parse_format(&j, optarg)) goto out;
      break;
    case 't':
      if (strlen(optarg) > 1) {
        bx_err_q(c, "join", "multi-character tab %s", optarg, 0);
        goto out;
      }
      j.tab = (unsigned char)optarg[0];
      if (!optarg[0]) j.tab = '\n'; /* -t '': the whole line is the field */
      break;
    case '1':
    case '2':
    case 'j':
      if (!field_number(c, optarg, &f)) goto out;
      if (ch != '2') j.in[0].field = f;
      if (ch != '1') j.in[1].field = f;
      break;
    case 'i': j.ignore_case = true; break;
    case 1: j.check = 1; break;
    case 2: j.check = -1; break;
    case 3: header = true; break;
    default: goto out;
    }
  int nops = c->argc - optind;
  if (nops < 2) {
    if (nops == 0)
      bx_usage(c, "join", "missing operand");
    else
      bx_usage_q(c, "join", "missing operand after %s", c->argv[optind]);
    goto out;
  }
  if (!bx_operands_at_most(c, "join", 2)) goto out;
  for (k = 0; k < 2; k++) {
    j.in[k].name = c->argv[optind + k];
    j.in[k].data = bx_slurp_new(c, "join", j.in[k].name);
    if (!j.in[k].data) goto out;
  }
  if (j.autoformat) {
    /* -o auto: as many fields as each file's first line has */
    for (k = 0; k < 2; k++) {
      Line *l = next_line(&j, k);
      j.autocount[k] = l ? l->fields->len : 0;
      line_free(l);
      line_free(j.in[k].prev);
      j.in[k].prev = NULL;
      j.in[k].at = 0;
      j.in[k].no = 0;
    }
  }
  if (header) {
    Line *h[2] = { next_line(&j, 0), next_line(&j, 1) };
    line_free(j.in[0].prev);
    line_free(j.in[1].prev);
    j.in[0].prev = j.in[1].prev = NULL;
    if (h[0] || h[1]) print_join(&j, h[0], h[1]);
    line_free(h[0]);
    line_free(h[1]);
  }
  merge(&j);
  if (j.fatal) goto out;
  if (j.in[0].warned || j.in[1].warned) {
    bx_err(c, "join", "input is not in sorted order");
    goto out;
  }
  status = 0;
out:
  for (k = 0; k < 2; k++) {
    if (j.in[k].data) g_string_free(j.in[k].data, TRUE);
    line_free(j.in[k].prev);
  }
  if (j.format) g_array_free(j.format, TRUE);
  return status;
}
