/* messages.c — GNU quoting of names and the commands' error messages. */
#include "shell/commands/commands-private.h"

#include <string.h>

static bool shell_special(unsigned char ch)
{
  return strchr(" \t\n\"'\\$`*?[]{}|&;<>()#~!=^", ch) != NULL || ch < 0x20 || ch == 0x7f ||
         ch >= 0x80;
}

static char *quote(const char *s, bool always)
{
  bool special = *s == '\0', ctrl = false, squote = false;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p == 0x7f) ctrl = true;
    if (*p == '\'') squote = true;
    /* '~' and '#' matter only at the start; '=' nowhere in names GNU-wise */
    if ((*p == '~' || *p == '#') && p != (const unsigned char *)s) continue;
    if (*p == '=' || *p == '^' || *p == '{' || *p == '}' || *p >= 0x80) continue;
    if (shell_special(*p)) special = true;
  }
  if (!special && !always) return g_strdup(s);
  GString *r = g_string_new(NULL);
  if (!ctrl && squote && !strpbrk(s, "\"$`\\!")) {
    g_string_append_c(r, '"');
    g_string_append(r, s);
    g_string_append_c(r, '"');
    return g_string_free(r, FALSE);
  }
  bool open = false;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p == 0x7f) {
      if (open) {
        g_string_append_c(r, '\'');
        open = false;
      }
      static const char esc[] = "\a\b\f\n\r\t\v";
      static const char let[] = "abfnrtv";
      const char *e = *p ? strchr(esc, *p) : NULL;
      if (e)
        g_string_append_printf(r, "$'\\%c'", let[e - esc]);
      else
        g_string_append_printf(r, "$'\\%03o'", *p);
    } else if (*p == '\'') {
      if (open) {
        g_string_append_c(r, '\'');
        open = false;
      }
      g_string_append(r, "\\'");
    } else {
      if (!open) {
        g_string_append_c(r, '\'');
        open = true;
      }
      g_string_append_c(r, (char)*p);
    }
  }
  if (open) g_string_append_c(r, '\'');
  if (r->len == 0) g_string_append(r, "''");
  return g_string_free(r, FALSE);
}

char *bx_quote(const char *s)
{
  return quote(s, false);
}
char *bx_quote_always(const char *s)
{
  return quote(s, true);
}

void bx_err(BoxCmd *c, const char *cmd, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(c->out);
  box_fdprintf(c->err, "%s: %s\n", cmd, s);
}

char *bx_errtext(BoxCmd *c, int err)
{
  return box_error_text(c->sh, err);
}

void bx_ferr(BoxCmd *c, const char *cmd, const char *name, int err)
{
  g_autofree char *t = bx_errtext(c, err);
  g_autofree char *q = bx_quote(name);
  bx_err(c, cmd, "%s: %s", q, t);
}

void bx_err_q(BoxCmd *c, const char *cmd, const char *fmt, const char *name, int err)
{
  g_autofree char *t = err ? bx_errtext(c, err) : NULL;
  g_autofree char *q = bx_quote_always(name);
  g_autofree char *m = g_strdup_printf(fmt, q);
  if (t)
    bx_err(c, cmd, "%s: %s", m, t);
  else
    bx_err(c, cmd, "%s", m);
}
