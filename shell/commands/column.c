/* column.c — util-linux column: the list filled into columns down the
 * page (tabs to eight-column stops, 80 columns or -c N wide), -x across;
 * -t a table (cells split at runs of blanks, or at each of -s's
 * characters, padded to the widest cell of their column and joined by two
 * spaces or -o's text, the last column unpadded), empty lines left out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

typedef struct {
  bool table, across;
  const char *seps; /* NULL: blanks, runs of them as one */
  const char *osep;
  long width;
} ColOpt;

/* The line's cells (g_strfreev). */
static char **cells_of(const ColOpt *o, const char *line)
{
  GPtrArray *v = g_ptr_array_new();
  const char *p = line;
  if (!o->seps) {
    for (;;) {
      while (*p == ' ' || *p == '\t') p++;
      if (!*p) break;
      const char *s = p;
      while (*p && *p != ' ' && *p != '\t') p++;
      g_ptr_array_add(v, g_strndup(s, (size_t)(p - s)));
    }
  } else {
    for (;;) {
      size_t n = strcspn(p, o->seps);
      g_ptr_array_add(v, g_strndup(p, n));
      if (!p[n]) break;
      p += n + 1;
    }
  }
  g_ptr_array_add(v, NULL);
  return (char **)g_ptr_array_free(v, FALSE);
}

static void put_pad(BoxCmd *c, size_t n)
{
  for (; n; n--) box_out_putc(c->out, ' ');
}

static void print_table(BoxCmd *c, const ColOpt *o, GPtrArray *lines)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  GArray *w = g_array_new(FALSE, TRUE, sizeof(size_t));
  for (guint i = 0; i < lines->len; i++) {
    char **cells = cells_of(o, g_ptr_array_index(lines, i));
    guint n = g_strv_length(cells);
    if (n > w->len) g_array_set_size(w, n);
    for (guint k = 0; k < n; k++)
      g_array_index(w, size_t, k) = MAX(g_array_index(w, size_t, k), strlen(cells[k]));
    g_ptr_array_add(rows, cells);
  }
  for (guint i = 0; i < rows->len; i++) {
    char **cells = g_ptr_array_index(rows, i);
    guint n = g_strv_length(cells);
    for (guint k = 0; k < w->len; k++) {
      const char *s = k < n ? cells[k] : "";
      box_out_puts(c->out, s);
      if (k + 1 == w->len) break;
      put_pad(c, g_array_index(w, size_t, k) - strlen(s));
      box_out_puts(c->out, o->osep);
    }
    box_out_putc(c->out, '\n');
  }
  g_array_free(w, TRUE);
  g_ptr_array_free(rows, TRUE);
}

/* Each entry in a column of one width (the longest rounded past the next
 * tab stop), tabs between, as many columns as fit the width. */
static void print_filled(BoxCmd *c, const ColOpt *o, GPtrArray *lines)
{
  size_t maxlen = 0;
  for (guint i = 0; i < lines->len; i++) maxlen = MAX(maxlen, strlen(g_ptr_array_index(lines, i)));
  size_t colw = (maxlen + 8) & ~(size_t)7;
  guint n = lines->len;
  if (!n) return;
  if ((long)colw > o->width) {
    for (guint i = 0; i < n; i++) {
      box_out_puts(c->out, g_ptr_array_index(lines, i));
      box_out_putc(c->out, '\n');
    }
    return;
  }
  guint cols = (guint)(o->width / (long)colw), rows = (n + cols - 1) / cols;
  if (o->across) rows = (n + cols - 1) / cols;
  for (guint r = 0; r < rows; r++) {
    size_t at = 0;
    for (guint k = 0; k < cols; k++) {
      guint i = o->across ? r * cols + k : k * rows + r;
      if (i >= n) break;
      const char *s = g_ptr_array_index(lines, i);
      guint next = o->across ? i + 1 : i + rows;
      if (k) {
        size_t end = k * colw;
        while (at < end) {
          box_out_putc(c->out, '\t');
          at = (at + 8) & ~(size_t)7;
        }
      }
      box_out_puts(c->out, s);
      at += strlen(s);
      if (next >= n || (o->across && k + 1 == cols)) break;
    }
    box_out_putc(c->out, '\n');
  }
}

static const char longopts[] =
  "table=t separator=s: output-separator=o: output-width=c: fillrows=x";

int box_cmd_column(BoxCmd *c)
{
  ColOpt o = { .osep = "  ", .width = 80 };
  BX_EACH_OPTION (ch, c, "column", "ts:o:c:x", longopts) switch (ch) {
    case 't': o.table = true; break;
    case 's': o.seps = optarg; break;
    case 'o': o.osep = optarg; break;
    case 'x': o.across = true; break;
    case 'c': {
      char *end;
      errno = 0;
      o.width = strtol(optarg, &end, 10);
      if (!*optarg || *end || errno || o.width <= 0) {
        bx_err(c, "column", "invalid columns argument: '%s'", optarg);
        return 1;
      }
      break;
    }
    default: return 1;
    }
  int n;
  char **names = bx_file_operands(c, &n);
  GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
  int failed = 0;
  for (int i = 0; i < n; i++) {
    g_autoptr(GString) s = g_string_new(NULL);
    if (!bx_slurp(c, "column", names[i], s)) {
      failed++;
      continue;
    }
    char **v = g_strsplit(s->str, "\n", -1);
    for (char **p = v; *p; p++) {
      /* the list's entries and the table's rows: blank lines are none */
      if (!**p || (o.table && !o.seps && strspn(*p, " \t") == strlen(*p))) {
        g_free(*p);
        continue;
      }
      g_ptr_array_add(lines, *p);
    }
    g_free(v);
  }
  if (o.table)
    print_table(c, &o, lines);
  else
    print_filled(c, &o, lines);
  /* util-linux's statuses: the list's counts the files it could not
   * read, the table's says only whether it had no row for that */
  int status = o.table ? failed && !lines->len : MIN(failed, 255);
  g_ptr_array_free(lines, TRUE);
  return status;
}
