/* xxd.c — xxd's hex dump: the default layout, -p (plain), -c COLS,
 * -g BYTES, -l LEN, -s SKIP, -u (upper case). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

static bool num(const char *s, long long *out)
{
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 0);
  if (!*s || *end || errno || v < 0) return false;
  *out = v;
  return true;
}

int box_cmd_xxd(BoxCmd *c)
{
  bool plain = false, upper = false;
  long long cols = -1, group = -1, len = -1, skip = 0;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    long long *dst = NULL;
    if (!strcmp(a, "-p") || !strcmp(a, "-ps") || !strcmp(a, "-plain"))
      plain = true;
    else if (!strcmp(a, "-u"))
      upper = true;
    else if (!strncmp(a, "-c", 2))
      dst = &cols;
    else if (!strncmp(a, "-g", 2))
      dst = &group;
    else if (!strncmp(a, "-l", 2))
      dst = &len;
    else if (!strncmp(a, "-s", 2))
      dst = &skip;
    else {
      bx_err(c, "xxd", "unsupported option %s", a);
      return 1;
    }
    if (dst) {
      const char *v = a[2] ? a + 2 : (i + 1 < c->argc ? c->argv[++i] : NULL);
      if (!v || !num(v, dst)) {
        bx_err(c, "xxd", "invalid number after %s", a);
        return 1;
      }
    }
  }
  const char *name = i < c->argc ? c->argv[i] : "-";
  GString *all = bx_slurp_new(c, "xxd", name);
  if (!all) return 2;
  if (cols <= 0) cols = plain ? 30 : 16;
  if (group < 0) group = 2;
  size_t start = MIN((size_t)skip, all->len), end = all->len;
  if (len >= 0 && (size_t)len < end - start) end = start + (size_t)len;
  const unsigned char *d = (const unsigned char *)all->str;
  const char *hx = upper ? "%02X" : "%02x";
  GString *line = g_string_new(NULL);
  if (plain) {
    for (size_t off = start; off < end; off += (size_t)cols) {
      g_string_truncate(line, 0);
      for (size_t k = off; k < MIN(end, off + (size_t)cols); k++)
        g_string_append_printf(line, hx, d[k]);
      g_string_append_c(line, '\n');
      bx_put(c, line->str, line->len);
    }
  } else {
    size_t hexw =
      (size_t)cols * 2 + (group ? ((size_t)cols + (size_t)group - 1) / (size_t)group : 1);
    for (size_t off = start; off < end; off += (size_t)cols) {
      g_string_truncate(line, 0);
      g_string_append_printf(line, "%08zx: ", off);
      size_t base = line->len, cnt = MIN((size_t)cols, end - off);
      for (size_t k = 0; k < cnt; k++) {
        g_string_append_printf(line, hx, d[off + k]);
        if (group && (k + 1) % (size_t)group == 0) g_string_append_c(line, ' ');
      }
      if (!group && cnt == (size_t)cols) g_string_append_c(line, ' ');
      while (line->len - base < hexw) g_string_append_c(line, ' ');
      g_string_append_c(line, ' ');
      for (size_t k = 0; k < cnt; k++)
        g_string_append_c(line, d[off + k] >= 32 && d[off + k] < 127 ? (char)d[off + k] : '.');
      g_string_append_c(line, '\n');
      bx_put(c, line->str, line->len);
    }
  }
  g_string_free(line, TRUE);
  g_string_free(all, TRUE);
  return 0;
}
