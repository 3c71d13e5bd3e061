/* rev.c — util-linux rev: each line's bytes reversed (C locale). */
#include <errno.h>
#include <string.h>

#include "shell/commands/commands-private.h"

static bool rev_fd(BoxCmd *c, int fd)
{
  BxReader r;
  bx_reader_init(&r, fd);
  const char *rec;
  size_t len;
  GString *buf = g_string_new(NULL);
  while (bx_reader_next(&r, '\n', &rec, &len)) {
    bool nl = len && rec[len - 1] == '\n';
    size_t n = nl ? len - 1 : len;
    g_string_set_size(buf, n);
    for (size_t i = 0; i < n; i++) buf->str[i] = rec[n - 1 - i];
    bx_put(c, buf->str, n);
    if (nl) box_out_putc(c->out, '\n');
  }
  bool ok = r.err == 0;
  errno = r.err;
  g_string_free(buf, TRUE);
  bx_reader_free(&r);
  return ok;
}

int box_cmd_rev(BoxCmd *c)
{
  int i = 1, status = 0;
  if (i < c->argc && !strcmp(c->argv[i], "--")) i++;
  if (i >= c->argc) return rev_fd(c, c->in) ? 0 : 1;
  for (; i < c->argc; i++) {
    int fd = bx_open_in(c, c->argv[i]);
    if (fd < 0) {
      g_autofree char *t = bx_errtext(c, errno);
      bx_err(c, "rev", "cannot open %s: %s", c->argv[i], t);
      status = 1;
      continue;
    }
    if (!rev_fd(c, fd)) {
      bx_ferr(c, "rev", c->argv[i], errno);
      status = 1;
    }
    bx_close_in(c, fd);
  }
  return status;
}
