/* history.c — `history [-c] [-d offset] [n]`, `history -anrw [filename]`,
 * `history -ps arg…`: the command history (shell/history.c) listed,
 * edited, expanded, and kept in a file (HISTFILE) as bash's does. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static const char usage[] = "history: usage: history [-c] [-d offset] [n] or history -anrw "
                            "[filename] or history -ps arg [arg...]";

static void list(BoxCmd *c, long count)
{
  Shell *sh = c->sh;
  guint n = box_history_len(sh);
  guint from = count >= 0 && (guint64)count < n ? n - (guint)count : 0;
  for (guint i = from; i < n; i++)
    box_out_printf(c->out, "%5ld  %s\n", box_history_base(sh) + i, box_history_at(sh, i));
}

/* -a, -w: lines from `from` on written to path (appended or anew). */
static int write_file(BoxCmd *c, const char *path, guint from, bool append)
{
  Shell *sh = c->sh;
  int fd = box_open_file(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC));
  if (fd < 0) {
    box_file_error(c, "history", path, errno);
    return 1;
  }
  GString *g = g_string_new(NULL);
  for (guint i = from; i < box_history_len(sh); i++)
    g_string_append_printf(g, "%s\n", box_history_at(sh, i));
  bool ok = box_write_all(fd, g->str, g->len);
  int err = errno;
  close(fd);
  g_string_free(g, TRUE);
  if (!ok) {
    box_file_error(c, "history", path, err);
    return 1;
  }
  box_history_set_written(sh, box_history_len(sh));
  return 0;
}

static int read_file(BoxCmd *c, const char *path)
{
  int fd = box_open_file(path, O_RDONLY);
  if (fd < 0) {
    box_file_error(c, "history", path, errno);
    return 1;
  }
  GString *g = box_read_all(fd, 0);
  close(fd);
  g_auto(GStrv) lines = g_strsplit(g->str, "\n", -1);
  g_string_free(g, TRUE);
  for (char **l = lines; *l; l++)
    if (**l) box_history_push(c->sh, *l);
  box_history_set_written(c->sh, box_history_len(c->sh));
  return 0;
}

static int expand_args(BoxCmd *c, int i)
{
  int st = 0;
  for (; i < c->argc; i++) {
    char *out = NULL, *err = NULL;
    int r = box_history_expand(c->sh, c->argv[i], &out, &err);
    if (r < 0) {
      box_cmd_error(c, "%s: history expansion failed", c->argv[i]);
      g_free(err);
      st = 1;
      continue;
    }
    box_out_printf(c->out, "%s\n", r ? out : c->argv[i]);
    g_free(out);
  }
  return st;
}

int box_cmd_history(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool clear = false, print = false, store = false;
  char file_op = 0;
  const char *del = NULL;
  int i = 1;
  /* `history -5` is an unknown option, as bash's (-d's offset may be
   * negative: its value is taken by -d) */
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    bool took = false; /* -d took the rest of the word, or the next */
    for (const char *p = a + 1; *p && !took; p++) {
      switch (*p) {
      case 'c': clear = true; break;
      case 'p': print = true; break;
      case 's': store = true; break;
      case 'd':
        if (!(del = bx_option_value(c, p, &i, usage))) return 2;
        took = true;
        break;
      case 'a':
      case 'n':
      case 'r':
      case 'w':
        if (file_op && file_op != *p) {
          box_cmd_error(c, "cannot use more than one of -anrw");
          return 1;
        }
        file_op = *p;
        break;
      default: return bx_bad_option(c, *p, usage);
      }
    }
  }
  if (clear) box_history_clear(sh);
  if (del) {
    long off;
    guint n = box_history_len(sh);
    long idx =
      box_parse_int(del, &off) ? (off < 0 ? (long)n + off : off - box_history_base(sh)) : -1;
    if (idx < 0 || idx >= (long)n) {
      box_cmd_error(c, "%s: history position out of range", del);
      return 1;
    }
    box_history_delete(sh, (guint)idx);
    return 0;
  }
  if (print) return expand_args(c, i);
  if (store) {
    if (i >= c->argc) return 0;
    g_autofree char *line = g_strjoinv(" ", c->argv + i);
    box_history_push(sh, line);
    return 0;
  }
  if (file_op) {
    const char *path = i < c->argc ? c->argv[i] : box_var_get(sh, "HISTFILE");
    if (!path || !*path) return 0;
    if (file_op == 'a') return write_file(c, path, box_history_written(sh), true);
    if (file_op == 'w') return write_file(c, path, 0, false);
    return read_file(c, path);
  }
  if (clear) return 0;
  long count = -1;
  if (i < c->argc) {
    if (!box_parse_int(c->argv[i], &count) || count < 0) {
      box_cmd_error(c, "%s: numeric argument required", c->argv[i]);
      return 1;
    }
    if (i + 1 < c->argc) {
      box_cmd_error(c, "too many arguments");
      return 1;
    }
  }
  list(c, count);
  return 0;
}
