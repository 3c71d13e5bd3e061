/* read.c — `read [-rs] [-a ARR] [-d DELIM] [-n N] [-N N] [-p PROMPT]
 * [-t T] [-u FD] [NAME…]`: one byte at a time, so a pipe is never read
 * past the line. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

/* The fields of the line read: split at its unescaped IFS characters (a run
 * of IFS white space counts once), the want-th field taking the rest of the
 * line but its trailing IFS white space. */
static void split_fields(GPtrArray *fields, const GString *line, const GByteArray *esc,
                         const char *ifsv, guint want)
{
  size_t len = line->len, pos = 0;
  const char *s = line->str;
  /* ISIFS: the length of the IFS character at k (IFS=μ: 2), or 0 */
#define ISIFS(k) (esc->data[k] ? 0 : box_ifs_len(ifsv, s + (k), len - (k)))
#define ISWS(k) (ISIFS(k) && strchr(" \t\n", s[k]))
  while (pos < len && ISWS(pos)) pos++;
  while (pos < len) {
    if (fields->len + 1 == want) {
      /* the last name takes the rest, minus trailing IFS whitespace */
      size_t e = len;
      while (e > pos && ISWS(e - 1)) e--;
      /* but a rest that is one field and its delimiter is that field, as
       * bash reads it: "b:" gives b, "b::" and "b: :" stay */
      size_t q = pos;
      while (q < len && !ISIFS(q)) q++;
      size_t fe = q;
      while (q < len && ISWS(q)) q++;
      if (q < len) q += ISIFS(q);
      while (q < len && ISWS(q)) q++;
      if (q == len) e = fe;
      GString *f = g_string_new(NULL);
      for (size_t k = pos; k < e; k++) g_string_append_c(f, s[k]);
      g_ptr_array_add(fields, g_string_free(f, FALSE));
      pos = len;
      break;
    }
    GString *f = g_string_new(NULL);
    while (pos < len && !ISIFS(pos)) g_string_append_c(f, s[pos++]);
    g_ptr_array_add(fields, g_string_free(f, FALSE));
    while (pos < len && ISWS(pos)) pos++;
    if (pos < len && ISIFS(pos)) {
      pos += ISIFS(pos);
      while (pos < len && ISWS(pos)) pos++;
    }
  }
#undef ISWS
#undef ISIFS
}

int box_cmd_read(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool raw = false;
  const char *arr = NULL, *prompt = NULL;
  int delim = '\n';
  long nchars = -1;
  bool exact = false;
  double tmo = -1;
  int fd = c->in;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    for (const char *p = a + 1; *p; p++) {
      char o = *p;
      if (o == 'r') {
        raw = true;
        continue;
      }
      if (o == 's' || o == 'e') continue;
      if (!strchr("adnNptui", o)) {
        return bx_bad_option(c, o,
                             "read: usage: read [-ers] [-a array] [-d delim] [-i text] [-n nchars] "
                             "[-N nchars] [-p prompt] [-t timeout] [-u fd] [name ...]");
      }
      const char *v = p[1] ? p + 1 : (i + 1 < c->argc ? c->argv[++i] : NULL);
      if (!v) {
        box_cmd_error(c, "-%c: option requires an argument", o);
        return 2;
      }
      switch (o) {
      case 'a': arr = v; break;
      case 'd': delim = (unsigned char)v[0]; break;
      case 'n':
      case 'N':
        if (!box_parse_int(v, &nchars) || nchars < 0 || nchars > INT_MAX) {
          box_cmd_error(c, "%s: invalid number", v);
          return 1;
        }
        exact = o == 'N';
        break;
      case 'p': prompt = v; break;
      case 't': {
        char *end;
        tmo = g_ascii_strtod(v, &end);
        if (end == v || *end || tmo < 0 || (!g_ascii_isdigit(*v) && *v != '.')) {
          box_cmd_error(c, "%s: invalid timeout specification", v);
          return 1;
        }
        break;
      }
      case 'u': {
        long u = atol(v);
        fd = u >= 0 && u < BOX_NFD ? sh->fd[u] : -1;
        if (fd < 0) {
          box_cmd_error(c, "%s: invalid file descriptor specification", v);
          return 1;
        }
        break;
      }
      default: break;
      }
      break;
    }
  }
  (void)prompt;
  if (fd < 0) {
    box_cmd_error(c, "read error: 0: %s", box_strerror(EBADF));
    return 1;
  }
  if (tmo == 0) {
    struct pollfd p = { fd, POLLIN, 0 };
    return poll(&p, 1, 0) > 0 ? 0 : 1;
  }
  GString *line = g_string_new(NULL);
  GByteArray *esc = g_byte_array_new(); /* 1 = escaped byte */
  bool eof = false;
  gint64 deadline = tmo > 0 ? g_get_monotonic_time() + (gint64)(tmo * 1e6) : 0;
  for (;;) {
    if (nchars >= 0 && (long)line->len >= nchars) break;
    if (deadline) {
      struct pollfd p = { fd, POLLIN, 0 };
      int left = (int)((deadline - g_get_monotonic_time()) / 1000);
      if (left <= 0 || poll(&p, 1, left) <= 0) {
        g_string_free(line, TRUE);
        g_byte_array_free(esc, TRUE);
        return 142;
      }
    }
    char ch;
    ssize_t n = read(fd, &ch, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof = true;
      break;
    }
    if (!exact && (unsigned char)ch == delim) break;
    if (!raw && ch == '\\') {
      n = read(fd, &ch, 1);
      if (n <= 0) {
        eof = true;
        break;
      }
      if (ch == '\n') continue;
      g_string_append_c(line, ch);
      guint8 one = 1;
      g_byte_array_append(esc, &one, 1);
      continue;
    }
    g_string_append_c(line, ch);
    guint8 zero = 0;
    g_byte_array_append(esc, &zero, 1);
  }
  const char *ifsv = box_var_get(sh, "IFS");
  if (!ifsv) ifsv = " \t\n";
  /* split into fields */
  GPtrArray *names = g_ptr_array_new();
  for (; i < c->argc; i++) g_ptr_array_add(names, c->argv[i]);
  bool reply = !arr && names->len == 0;
  if (reply) g_ptr_array_add(names, (gpointer) "REPLY");
  GPtrArray *fields = g_ptr_array_new_with_free_func(g_free);
  /* -N's text is not split: all of it goes to the first name */
  if (reply || exact)
    g_ptr_array_add(fields, g_strndup(line->str, line->len));
  else
    split_fields(fields, line, esc, ifsv, arr ? G_MAXUINT : names->len);
  int st = eof && line->len == 0 ? 1 : (eof ? 1 : 0);
  if (arr) {
    box_var_unset(sh, arr);
    ShellVar *v = box_var_make(sh, arr);
    box_var_make_array(v, false);
    for (guint k = 0; k < fields->len; k++) {
      char key[16];
      g_snprintf(key, sizeof key, "%u", k);
      box_var_set_elem(sh, arr, key, fields->pdata[k], false);
    }
  } else {
    for (guint k = 0; k < names->len; k++) {
      const char *nm = names->pdata[k];
      char *name, *key; /* NAME or NAME[KEY], as bash takes them */
      if (!box_split_ref(nm, &name, &key)) {
        box_cmd_error(c, "`%s': not a valid identifier", nm);
        st = 1;
        break;
      }
      const char *val = k < fields->len ? (char *)fields->pdata[k] : "";
      g_autofree char *ek = key ? box_elem_key(sh, name, key) : NULL;
      bool set =
        key ? ek && box_var_set_elem(sh, name, ek, val, false) : box_var_set(sh, name, val);
      g_free(name);
      g_free(key);
      if (!set) {
        /* bash stops at a name it cannot set (readonly): the rest keep their values */
        st = 1;
        break;
      }
    }
  }
  g_ptr_array_free(fields, TRUE);
  g_ptr_array_free(names, TRUE);
  g_string_free(line, TRUE);
  g_byte_array_free(esc, TRUE);
  return st;
}
