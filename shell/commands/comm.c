/* comm.c — GNU comm: -1 -2 -3, --output-delimiter, -z, --check-order /
 * --nocheck-order (by default an unsorted input is reported once). */
#include <errno.h>
#include <string.h>

#include "shell/commands/commands-private.h"

enum { OPT_DELIM = 1, OPT_CHECK, OPT_NOCHECK, OPT_TOTAL };
static const char longopts[] =
  "output-delimiter=\1: check-order=\2 nocheck-order=\3 zero-terminated=z total=\4";

typedef struct {
  BxReader r;
  GString *cur, *prev;
  bool have, has_prev, warned;
} Side;

static int cmp(const GString *a, const GString *b)
{
  size_t n = MIN(a->len, b->len);
  int d = memcmp(a->str, b->str, n);
  if (d) return d;
  return a->len < b->len ? -1 : a->len > b->len;
}

int box_cmd_comm(BoxCmd *c)
{
  bool show[4] = { false, true, true, true };
  const char *delim = "\t";
  int check = 0; /* 0 default, 1 check, -1 none */
  bool total = false;
  char eol = '\n';
  BX_EACH_OPTION (o, c, "comm", "123z", longopts) switch (o) {
    case '1': show[1] = false; break;
    case '2': show[2] = false; break;
    case '3': show[3] = false; break;
    case 'z': eol = 0; break;
    case OPT_DELIM: delim = *optarg ? optarg : ""; break;
    case OPT_CHECK: check = 1; break;
    case OPT_NOCHECK: check = -1; break;
    case OPT_TOTAL: total = true; break;
    default: return 1;
    }
  int n = c->argc - optind;
  if (n < 2) {
    if (n == 0)
      bx_usage(c, "comm", "missing operand");
    else {
      bx_usage_q(c, "comm", "missing operand after %s", c->argv[optind]);
    }
    return 1;
  }
  if (n > 2) {
    bx_usage_q(c, "comm", "extra operand %s", c->argv[optind + 2]);
    return 1;
  }
  Side s[2];
  int fds[2];
  for (int i = 0; i < 2; i++) {
    fds[i] = bx_open_in(c, c->argv[optind + i]);
    if (fds[i] < 0) {
      bx_ferr(c, "comm", c->argv[optind + i], errno);
      if (i) bx_close_in(c, fds[0]);
      if (i) {
        bx_reader_free(&s[0].r);
        g_string_free(s[0].cur, TRUE);
        g_string_free(s[0].prev, TRUE);
      }
      return 1;
    }
    bx_reader_init(&s[i].r, fds[i]);
    s[i].cur = g_string_new(NULL);
    s[i].prev = g_string_new(NULL);
    s[i].have = s[i].has_prev = s[i].warned = false;
  }
  bool unsorted = false, fatal = false;
  unsigned long long counts[4] = { 0 };
  size_t dl = strlen(delim);
  const char *rec;
  size_t len;
  /* reads the next line of side i, checking its order */
#define ADVANCE(i)                                                                                 \
  do {                                                                                             \
    GString *t_ = s[i].prev;                                                                       \
    s[i].prev = s[i].cur;                                                                          \
    s[i].cur = t_;                                                                                 \
    s[i].has_prev = s[i].have;                                                                     \
    s[i].have = bx_reader_next(&s[i].r, eol, &rec, &len);                                          \
    if (s[i].have) {                                                                               \
      if (len && rec[len - 1] == eol) len--;                                                       \
      g_string_assign(s[i].cur, "");                                                               \
      g_string_append_len(s[i].cur, rec, (gssize)len);                                             \
      if ((check == 1 || (check == 0 && unpaired)) && s[i].has_prev && !s[i].warned &&             \
          cmp(s[i].prev, s[i].cur) > 0) {                                                          \
        s[i].warned = true;                                                                        \
        unsorted = true;                                                                           \
        bx_err(c, "comm", "file %d is not in sorted order", i + 1);                                \
        if (check == 1) fatal = true;                                                              \
      }                                                                                            \
    }                                                                                              \
  } while (0)
  /* GNU checks the order by default only once a line went unpaired */
  bool unpaired = false;
  ADVANCE(0);
  ADVANCE(1);
  while (!fatal && (s[0].have || s[1].have)) {
    int col, d;
    if (!s[0].have)
      d = 1;
    else if (!s[1].have)
      d = -1;
    else
      d = cmp(s[0].cur, s[1].cur);
    col = d < 0 ? 1 : d > 0 ? 2 : 3;
    const GString *line = col == 2 ? s[1].cur : s[0].cur;
    counts[col]++;
    if (col != 3) unpaired = true;
    if (show[col]) {
      for (int k = 1; k < col; k++)
        if (show[k]) bx_put(c, delim, dl);
      bx_put(c, line->str, line->len);
      box_out_putc(c->out, eol);
    }
    if (col != 2) ADVANCE(0);
    if (col != 1) ADVANCE(1);
  }
#undef ADVANCE
  if (total && !fatal) {
    box_out_printf(c->out, "%llu", counts[1]);
    bx_put(c, delim, dl);
    box_out_printf(c->out, "%llu", counts[2]);
    bx_put(c, delim, dl);
    box_out_printf(c->out, "%llu", counts[3]);
    bx_put(c, delim, dl);
    box_out_printf(c->out, "total%c", eol);
  }
  for (int i = 0; i < 2; i++) {
    bx_reader_free(&s[i].r);
    bx_close_in(c, fds[i]);
    g_string_free(s[i].cur, TRUE);
    g_string_free(s[i].prev, TRUE);
  }
  if (unsorted && check == 0) {
    bx_err(c, "comm", "input is not in sorted order");
    return 1;
  }
  return fatal ? 1 : 0;
}
