/* tac.c — GNU tac: each file's records last first; a record ends with its
 * separator (newline, or -s STRING), -b puts it before instead.  A last
 * record without its separator is written as it is, so "a\nb" gives
 * "ba\n" as GNU's does. */
#include <errno.h>
#include <string.h>

#include "shell/commands/commands-private.h"

static void tac_text(BoxCmd *c, const GString *s, const char *sep, size_t sl, bool before)
{
  /* the records' starts, in order */
  GArray *at = g_array_new(FALSE, FALSE, sizeof(size_t));
  size_t p = 0;
  if (before) {
    size_t z = 0;
    g_array_append_val(at, z);
    for (p = 0; p + sl <= s->len; p++)
      if (memcmp(s->str + p, sep, sl) == 0 && p > 0) g_array_append_val(at, p);
  } else {
    size_t start = 0;
    for (p = 0; p + sl <= s->len;) {
      if (memcmp(s->str + p, sep, sl) == 0) {
        g_array_append_val(at, start);
        p += sl;
        start = p;
      } else {
        p++;
      }
    }
    if (start < s->len) g_array_append_val(at, start);
  }
  for (guint i = at->len; i > 0; i--) {
    size_t from = g_array_index(at, size_t, i - 1);
    size_t to = i < at->len ? g_array_index(at, size_t, i) : s->len;
    bx_put(c, s->str + from, to - from);
  }
  g_array_free(at, TRUE);
}

static const char longopts[] = "before=b separator=s:";

int box_cmd_tac(BoxCmd *c)
{
  const char *sep = "\n";
  bool before = false;
  BX_EACH_OPTION (ch, c, "tac", "bs:", longopts) switch (ch) {
    case 'b': before = true; break;
    case 's': sep = optarg; break;
    default: return 1;
    }
  int n, status = 0;
  char **names = bx_file_operands(c, &n);
  for (int i = 0; i < n; i++) {
    g_autoptr(GString) s = g_string_new(NULL);
    int fd = bx_open_in(c, names[i]);
    if (fd < 0) {
      bx_err_q(c, "tac", "failed to open %s for reading", names[i], errno);
      status = 1;
      continue;
    }
    bool ok = bx_read_all(fd, s);
    int e = errno;
    bx_close_in(c, fd);
    if (!ok) {
      /* a directory reads as EISDIR here, as EINVAL in GNU's (it seeks) */
      g_autofree char *q = bx_quote(names[i]);
      g_autofree char *t = bx_errtext(c, e == EISDIR ? EINVAL : e);
      bx_err(c, "tac", "%s: read error: %s", q, t);
      status = 1;
      continue;
    }
    /* an empty separator is GNU's NUL */
    tac_text(c, s, *sep ? sep : "", *sep ? strlen(sep) : 1, before);
  }
  return status;
}
