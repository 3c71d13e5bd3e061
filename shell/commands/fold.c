/* fold.c — GNU fold: -w WIDTH (80), -s (break at blanks), -b (count bytes). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "bytes=b spaces=s width=w:";

static size_t adjust(size_t col, char ch, bool bytes)
{
  if (!bytes) {
    if (ch == '\b') return col ? col - 1 : 0;
    if (ch == '\r') return 0;
    if (ch == '\t') return col + 8 - col % 8;
  }
  return col + 1;
}

static bool fold_fd(BoxCmd *c, int fd, size_t width, bool bytes, bool spaces)
{
  GString *line = g_string_new(NULL);
  size_t col = 0;
  char buf[65536];
  for (;;) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) {
      int e = errno;
      g_string_free(line, TRUE);
      errno = e;
      return false;
    }
    if (r == 0) break;
    for (ssize_t i = 0; i < r; i++) {
      char ch = buf[i];
      if (ch == '\n') {
        g_string_append_c(line, ch);
        bx_put(c, line->str, line->len);
        g_string_truncate(line, 0);
        col = 0;
        continue;
      }
    again:
      col = adjust(col, ch, bytes);
      if (col > width) {
        if (spaces) {
          size_t k = line->len;
          while (k > 0 && line->str[k - 1] != ' ' && line->str[k - 1] != '\t') k--;
          if (k > 0) {
            bx_put(c, line->str, k);
            box_out_putc(c->out, '\n');
            g_string_erase(line, 0, (gssize)k);
            col = 0;
            for (size_t j = 0; j < line->len; j++) col = adjust(col, line->str[j], bytes);
            goto again;
          }
        }
        if (line->len == 0) {
          g_string_append_c(line, ch);
          continue;
        }
        g_string_append_c(line, '\n');
        bx_put(c, line->str, line->len);
        g_string_truncate(line, 0);
        col = 0;
        goto again;
      }
      g_string_append_c(line, ch);
    }
  }
  bx_put(c, line->str, line->len);
  g_string_free(line, TRUE);
  return true;
}

static int fold_main(BoxCmd *c)
{
  size_t width = 80;
  bool bytes = false, spaces = false;
  BX_EACH_OPTION (o, c, "fold", "bsw:", longopts) switch (o) {
    case 'b': bytes = true; break;
    case 's': spaces = true; break;
    case 'w': {
      char *end;
      errno = 0;
      unsigned long long v = strtoull(optarg, &end, 10);
      if (!*optarg || *end || errno || v == 0 || optarg[0] == '-') {
        g_autofree char *q = bx_quote_always(optarg);
        if (*optarg && !*end && (v == 0 || errno))
          bx_err(c, "fold", "invalid number of columns: %s: %s", q, box_strerror(ERANGE));
        else
          bx_err(c, "fold", "invalid number of columns: %s", q);
        return 1;
      }
      width = (size_t)v;
      break;
    }
    default: return 1;
    }
  int status = 0;
  if (optind >= c->argc) return fold_fd(c, c->in, width, bytes, spaces) ? 0 : 1;
  for (int i = optind; i < c->argc; i++) {
    int fd = bx_open_in(c, c->argv[i]);
    if (fd < 0 || !fold_fd(c, fd, width, bytes, spaces)) {
      bx_ferr(c, "fold", c->argv[i], errno);
      status = 1;
    }
    if (fd >= 0) bx_close_in(c, fd);
  }
  return status;
}

int box_cmd_fold(BoxCmd *c)
{
  /* GNU accepts the obsolete -N as -w N: a rewritten copy of argv */
  char **saved = c->argv;
  char **v = g_new0(char *, (gsize)c->argc + 1);
  for (int i = 0; i < c->argc; i++) {
    const char *a = saved[i];
    v[i] =
      i > 0 && a[0] == '-' && g_ascii_isdigit(a[1]) ? g_strdup_printf("-w%s", a + 1) : g_strdup(a);
  }
  c->argv = v;
  int st = fold_main(c);
  c->argv = saved;
  g_strfreev(v);
  return st;
}
