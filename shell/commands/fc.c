/* fc.c — `fc [-e ename] [-lnr] [first] [last]`, `fc -s [pat=rep]
 * [command]`: the command history listed, or commands from it edited and
 * run again, as bash's fc.  The line that ran fc is no part of what it
 * looks at; what it runs again takes that line's place in the history. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static const char usage[] =
  "fc: usage: fc [-e ename] [-lnr] [first] [last] or fc -s [pat=rep] [command]";

/* The lines fc sees: all but the one running it, when that one went in. */
static guint seen(Shell *sh)
{
  guint n = box_history_len(sh);
  return n && box_history_current_saved(sh) ? n - 1 : n;
}

/* first/last as bash takes them: a number (negative: back from the end)
 * or the start of a command.  An index, or -1. */
static long resolve(Shell *sh, const char *spec, guint n)
{
  long v;
  if (box_parse_int(spec, &v)) {
    long idx = v < 0 ? (long)n + v : v - box_history_base(sh);
    if (idx < 0) idx = 0;
    if (idx >= (long)n) idx = (long)n - 1;
    return idx;
  }
  for (guint i = n; i-- > 0;)
    if (g_str_has_prefix(box_history_at(sh, i), spec)) return i;
  return -1;
}

/* Runs text as the line the history now holds in fc's place. */
static int run_again(BoxCmd *c, const char *text)
{
  Shell *sh = c->sh;
  /* bash shows it on stderr, as it does a line history expansion changed */
  box_out_flush(c->out);
  box_fdprintf(c->err, "%s\n", text);
  if (box_history_current_saved(sh))
    box_history_replace_last(sh, text);
  else
    box_history_push(sh, text);
  /* what it runs sees the list with itself in it, as bash's fc -s */
  box_history_forget_current(sh);
  return box_eval_text(sh, text, NULL);
}

static int redo(BoxCmd *c, int i)
{
  Shell *sh = c->sh;
  GPtrArray *subs = g_ptr_array_new();
  for (; i < c->argc && strchr(c->argv[i], '='); i++) g_ptr_array_add(subs, c->argv[i]);
  guint n = seen(sh);
  long idx = n ? (i < c->argc ? resolve(sh, c->argv[i], n) : (long)n - 1) : -1;
  if (idx < 0) {
    g_ptr_array_free(subs, TRUE);
    box_cmd_error(c, "no command found");
    return 1;
  }
  char *text = g_strdup(box_history_at(sh, (guint)idx));
  for (guint k = 0; k < subs->len; k++) {
    const char *s = subs->pdata[k];
    const char *eq = strchr(s, '=');
    g_autofree char *pat = g_strndup(s, eq - s);
    if (!*pat) continue;
    g_auto(GStrv) parts = g_strsplit(text, pat, -1);
    g_free(text);
    text = g_strjoinv(eq + 1, parts);
  }
  g_ptr_array_free(subs, TRUE);
  int st = run_again(c, text);
  g_free(text);
  return st;
}

/* -e ENAME: the commands written to a file, ENAME run on it, then what
 * the file holds run. */
static int edit(BoxCmd *c, const char *ename, long from, long to)
{
  Shell *sh = c->sh;
  const char *tmp = box_var_get(sh, "TMPDIR");
  g_autofree char *path = NULL;
  int fd = -1;
  for (int tries = 0; tries < 16 && fd < 0; tries++) {
    g_free(path);
    path = g_strdup_printf("%s/bash-fc.%08x", tmp && *tmp ? tmp : "/tmp", g_random_int());
    fd = box_open_file(path, O_WRONLY | O_CREAT | O_EXCL);
  }
  if (fd < 0) {
    box_file_error(c, "fc", path, errno);
    return 1;
  }
  GString *g = g_string_new(NULL);
  for (long k = from; from <= to ? k <= to : k >= to; k += from <= to ? 1 : -1)
    g_string_append_printf(g, "%s\n", box_history_at(sh, (guint)k));
  bool ok = box_write_all(fd, g->str, g->len);
  close(fd);
  g_string_free(g, TRUE);
  int st = 1;
  if (ok) {
    g_autofree char *qpath = box_quote(path);
    g_autofree char *cmd = g_strdup_printf("%s %s", ename, qpath);
    box_out_flush(c->out);
    st = box_eval_text(sh, cmd, NULL);
  }
  if (ok && st == 0) {
    fd = box_open_file(path, O_RDONLY);
    if (fd >= 0) {
      GString *text = box_read_all(fd, 0);
      close(fd);
      while (text->len && text->str[text->len - 1] == '\n') g_string_truncate(text, text->len - 1);
      st = text->len ? run_again(c, text->str) : 0;
      g_string_free(text, TRUE);
    }
  }
  unlink(path);
  return st;
}

int box_cmd_fc(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool listing = false, bare = false, reverse = false, again = false; /* bare: -n */
  const char *ename = NULL;
  int i = 1;
  /* -1 is an operand: the command before */
  for (const char *a; (a = bx_option_word(c, &i, "-")) && !g_ascii_isdigit(a[1]); i++) {
    bool *const flags[] = { &listing, &bare, &reverse, &again };
    for (const char *p = a + 1; *p; p++) {
      if (bx_set_flag(*p, "lnrs", flags)) continue;
      if (*p != 'e') return bx_bad_option(c, *p, usage);
      if (!(ename = bx_option_value(c, p, &i, usage))) return 2;
      break; /* -e took the rest of the word, or the next */
    }
  }
  if (again || (ename && strcmp(ename, "-") == 0)) return redo(c, i);
  guint n = seen(sh);
  if (i + 2 < c->argc) {
    box_cmd_error(c, "history specification out of range");
    return 1;
  }
  if (!n) {
    if (listing) return 0;
    box_cmd_error(c, "no command found");
    return 1;
  }
  long from, to;
  if (i < c->argc) {
    from = resolve(sh, c->argv[i], n);
    to = i + 1 < c->argc ? resolve(sh, c->argv[i + 1], n) : listing ? (long)n - 1 : from;
  } else {
    to = (long)n - 1;
    from = listing ? MAX(0, (long)n - 16) : to;
  }
  if (from < 0 || to < 0) {
    box_cmd_error(c, "no command found");
    return 1;
  }
  if (!listing) {
    if (!ename) ename = box_var_get(sh, "FCEDIT");
    if (!ename || !*ename) ename = box_var_get(sh, "EDITOR");
    if (!ename || !*ename) ename = "vi";
    return edit(c, ename, reverse ? to : from, reverse ? from : to);
  }
  if (reverse) {
    long t = from;
    from = to;
    to = t;
  }
  for (long k = from; from <= to ? k <= to : k >= to; k += from <= to ? 1 : -1) {
    if (!bare)
      box_out_printf(c->out, "%ld\t %s\n", box_history_base(sh) + k, box_history_at(sh, (guint)k));
    else
      box_out_printf(c->out, "\t %s\n", box_history_at(sh, (guint)k));
  }
  return 0;
}
