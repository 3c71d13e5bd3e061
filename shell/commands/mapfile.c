/* mapfile.c — `mapfile`/`readarray [-t] [-d DELIM] [-n N] [-s N] [-u FD] [ARRAY]`. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

int box_cmd_mapfile(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool trim = false;
  int delim = '\n';
  long count = 0, skip = 0, origin = 0, quantum = 5000;
  const char *callback = NULL, *quantum_text = NULL;
  int fd = c->in;
  int i = 1;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (a[0] != '-' || !a[1]) break;
    char o = a[1];
    if (o == 't') {
      trim = true;
      continue;
    }
    const char *v = a[2] ? a + 2 : (i + 1 < c->argc ? c->argv[++i] : "");
    switch (o) {
    case 'd': delim = (unsigned char)v[0]; break;
    case 'n': count = atol(v); break;
    case 's': skip = atol(v); break;
    case 'O': origin = atol(v); break;
    case 'u': {
      long u = atol(v);
      fd = u >= 0 && u < BOX_NFD ? sh->fd[u] : -1;
      break;
    }
    case 'C': callback = v; break;
    case 'c':
      quantum = atol(v);
      quantum_text = v;
      break;
    default: box_cmd_error(c, "-%c: invalid option", o); return 2;
    }
  }
  const char *name = i < c->argc ? c->argv[i] : "MAPFILE";
  if (fd < 0) return 1;
  if (quantum <= 0) {
    box_cmd_error(c, "%s: invalid callback quantum", quantum_text);
    return 1;
  }
  GString *all = box_read_all(fd, 0);
  if (!origin) box_var_unset(sh, name);
  ShellVar *v = box_var_make(sh, name);
  box_var_make_array(v, false);
  size_t pos = 0;
  long idx = origin, n = 0, line = 0;
  while (pos < all->len && (!count || n < count)) {
    size_t e = pos;
    while (e < all->len && (unsigned char)all->str[e] != delim) e++;
    size_t end = e < all->len && !trim ? e + 1 : e;
    if (line++ >= skip) {
      char *item = g_strndup(all->str + pos, end - pos);
      char key[24];
      g_snprintf(key, sizeof key, "%ld", idx++);
      if (callback && (n + 1) % quantum == 0) {
        /* bash's callback: before each quantum-th element is stored, with
         * its index and line as two more words */
        char *q = box_quote(item);
        char *text = g_strdup_printf("%s %s %s", callback, key, q);
        box_eval_text(sh, text, NULL);
        g_free(text);
        g_free(q);
      }
      box_var_set_elem(sh, name, key, item, false);
      g_free(item);
      n++;
    }
    pos = e + 1;
  }
  g_string_free(all, TRUE);
  return 0;
}
