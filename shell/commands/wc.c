/* wc.c — GNU wc: -l -w -c -m -L, GNU's column widths (from the byte counts:
 * no stat), a total line for several files. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  unsigned long long lines, words, bytes, maxlen;
  char *name; /* NULL: stdin without a name */
  bool failed, regular;
} WcCount;

static bool count_fd(int fd, WcCount *w)
{
  char buf[65536];
  bool in_word = false;
  unsigned long long col = 0;
  for (;;) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) return false;
    if (r == 0) break;
    w->bytes += (unsigned long long)r;
    for (ssize_t i = 0; i < r; i++) {
      unsigned char ch = (unsigned char)buf[i];
      switch (ch) {
      case '\n':
        w->lines++;
        /* fallthrough */
      case '\r':
      case '\f':
        if (col > w->maxlen) w->maxlen = col;
        col = 0;
        in_word = false;
        break;
      case '\t':
        col += 8 - col % 8;
        in_word = false;
        break;
      case ' ':
        col++;
        in_word = false;
        break;
      case '\v': in_word = false; break;
      default:
        if (g_ascii_isprint(ch)) {
          col++;
          if (!in_word) {
            w->words++;
            in_word = true;
          }
        } else if (ch >= 0x80 || g_ascii_iscntrl(ch)) {
          /* C locale: non-printable bytes neither start nor end a word */
        }
        break;
      }
    }
  }
  if (col > w->maxlen) w->maxlen = col;
  return true;
}

static const char longopts[] = "lines=l words=w bytes=c chars=m max-line-length=L total=\1:";

static void put(BoxCmd *c, const WcCount *w, bool l, bool wd, bool ch, bool by, bool L, int width)
{
  bool first = true;
  unsigned long long v[5] = { w->lines, w->words, w->bytes, w->bytes, w->maxlen };
  bool on[5] = { l, wd, ch, by, L };
  for (int i = 0; i < 5; i++) {
    if (!on[i]) continue;
    box_out_printf(c->out, first ? "%*llu" : " %*llu", width, v[i]);
    first = false;
  }
  if (w->name && strchr(w->name, '\n')) {
    /* GNU quotes a name only when it holds a newline (one record a line) */
    g_autofree char *q = bx_quote(w->name);
    box_out_printf(c->out, " %s", q);
  } else if (w->name) {
    box_out_printf(c->out, " %s", w->name);
  }
  box_out_putc(c->out, '\n');
}

int box_cmd_wc(BoxCmd *c)
{
  bool l = false, w = false, ch = false, by = false, L = false;
  const char *total = "auto";
  bool *const flags[] = { &l, &w, &by, &ch, &L };
  BX_EACH_OPTION (o, c, "wc", "lwcmL", longopts) {
    if (bx_set_flag(o, "lwcmL", flags)) continue;
    if (o != 1) return 1;
    total = optarg;
  }
  if (!l && !w && !ch && !by && !L) l = w = by = true;
  int nf = c->argc - optind;
  int status = 0;
  GArray *counts = g_array_new(FALSE, TRUE, sizeof(WcCount));
  for (int i = 0; i < (nf ? nf : 1); i++) {
    WcCount k = { 0 };
    const char *name = nf ? c->argv[optind + i] : "-";
    k.name = nf ? g_strdup(name) : NULL;
    k.regular = strcmp(name, "-") != 0;
    int fd = bx_open_in(c, name);
    if (fd < 0) {
      bx_ferr(c, "wc", name, errno);
      k.failed = true;
      status = 1;
    } else {
      if (!count_fd(fd, &k)) {
        bx_ferr(c, "wc", name, errno);
        status = 1;
        k.regular = false;
      }
      bx_close_in(c, fd);
    }
    g_array_append_val(counts, k);
  }
  /* GNU: width from the total size of the regular files, 7 at least when
   * one input is not regular, 1 for a single count of a single file */
  int nsel = l + w + ch + by + L;
  int width = 1;
  WcCount *v = (WcCount *)counts->data;
  if (!(counts->len == 1 && nsel == 1) && !v[0].failed) {
    unsigned long long reg = 0;
    int minw = 1;
    for (guint i = 0; i < counts->len; i++) {
      if (v[i].failed) continue;
      if (v[i].regular)
        reg += v[i].bytes;
      else
        minw = 7;
    }
    for (; reg >= 10; reg /= 10) width++;
    if (width < minw) width = minw;
  }
  WcCount tot = { 0 };
  for (guint i = 0; i < counts->len; i++) {
    if (!v[i].failed) put(c, &v[i], l, w, ch, by, L, width);
    tot.lines += v[i].lines;
    tot.words += v[i].words;
    tot.bytes += v[i].bytes;
    if (v[i].maxlen > tot.maxlen) tot.maxlen = v[i].maxlen;
  }
  bool show_total = strcmp(total, "always") == 0 || (strcmp(total, "auto") == 0 && counts->len > 1);
  if (strcmp(total, "only") == 0) {
    tot.name = NULL;
    put(c, &tot, l, w, ch, by, L, 1);
  } else if (show_total) {
    tot.name = (char *)"total";
    put(c, &tot, l, w, ch, by, L, width);
  }
  for (guint i = 0; i < counts->len; i++) g_free(v[i].name);
  g_array_free(counts, TRUE);
  return status;
}
