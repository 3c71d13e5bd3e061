/* expand.c — GNU expand: tabs to spaces; -t N or -t LIST, -i (initial only). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "initial=i tabs=t:";

typedef struct {
  GArray *stops; /* size_t, ascending; one entry = every N */
  bool initial;
} Ex;

static size_t next_stop(const Ex *e, size_t col)
{
  size_t *v = (size_t *)e->stops->data;
  if (e->stops->len == 1) return col + v[0] - col % v[0];
  for (guint i = 0; i < e->stops->len; i++)
    if (v[i] > col) return v[i];
  return col + 1;
}

static bool expand_fd(BoxCmd *c, const Ex *e, int fd)
{
  char buf[65536];
  size_t col = 0;
  bool lead = true;
  for (;;) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) return false;
    if (r == 0) return true;
    for (ssize_t i = 0; i < r; i++) {
      char ch = buf[i];
      if (ch == '\t' && lead) {
        size_t to = next_stop(e, col);
        for (; col < to; col++) box_out_putc(c->out, ' ');
        continue;
      }
      if (ch == '\n') {
        col = 0;
        lead = true;
      } else if (ch == '\b') {
        if (col) col--;
        lead = lead && !e->initial;
      } else {
        col++;
        if (e->initial && ch != ' ') lead = false;
      }
      box_out_putc(c->out, ch);
    }
  }
}

static bool parse_tabs(BoxCmd *c, const char *s, GArray *v)
{
  gchar **parts = g_strsplit_set(s, ", ", -1);
  bool ok = true;
  for (gchar **p = parts; *p; p++) {
    if (!**p) continue;
    char *end;
    unsigned long long n = strtoull(*p, &end, 10);
    if (*end || !g_ascii_isdigit(**p)) {
      bx_err_q(c, "expand", "tab size contains invalid character(s): %s", *p, 0);
      ok = false;
      break;
    }
    if (n == 0) {
      bx_err(c, "expand", "tab size cannot be 0");
      ok = false;
      break;
    }
    size_t z = (size_t)n;
    if (v->len && z <= g_array_index(v, size_t, v->len - 1)) {
      bx_err(c, "expand", "tab sizes must be ascending");
      ok = false;
      break;
    }
    g_array_append_val(v, z);
  }
  g_strfreev(parts);
  return ok;
}

int box_cmd_expand(BoxCmd *c)
{
  Ex e = { g_array_new(FALSE, FALSE, sizeof(size_t)), false };
  int status = 0;
  BX_EACH_OPTION (o, c, "expand", "it:", longopts) {
    switch (o) {
    case 'i': e.initial = true; break;
    case 't':
      if (!parse_tabs(c, optarg, e.stops)) {
        g_array_free(e.stops, TRUE);
        return 1;
      }
      break;
    default: g_array_free(e.stops, TRUE); return 1;
    }
  }
  if (e.stops->len == 0) {
    size_t eight = 8;
    g_array_append_val(e.stops, eight);
  }
  if (optind >= c->argc) {
    status = expand_fd(c, &e, c->in) ? 0 : 1;
  } else {
    for (int i = optind; i < c->argc; i++) {
      int fd = bx_open_in(c, c->argv[i]);
      if (fd < 0 || !expand_fd(c, &e, fd)) {
        bx_ferr(c, "expand", c->argv[i], errno);
        status = 1;
      }
      if (fd >= 0) bx_close_in(c, fd);
    }
  }
  g_array_free(e.stops, TRUE);
  return status;
}
