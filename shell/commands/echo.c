/* echo.c — bash's echo: options -n -e -E (clustered), escapes with -e. */
#include <string.h>

#include "shell/commands/commands-private.h"

/* Writes s with backslash escapes; returns false at \c (stop output). */
static bool put_escaped(BoxOut *o, const char *s)
{
  while (*s) {
    if (*s != '\\' || s[1] == '\0') {
      box_out_putc(o, *s++);
      continue;
    }
    s++;
    char c = *s++;
    int b = bx_escape_byte(c, "abeEfnrtv\\");
    if (b >= 0) {
      box_out_putc(o, (char)b);
      continue;
    }
    switch (c) {
    case 'c': return false;
    case '0': {
      int v = 0;
      for (int k = 0; k < 3 && *s >= '0' && *s <= '7'; k++) v = v * 8 + (*s++ - '0');
      box_out_putc(o, (char)v);
      break;
    }
    case 'x': {
      if (g_ascii_xdigit_value(*s) < 0) {
        box_out_puts(o, "\\x");
        break;
      }
      int v = 0;
      for (int k = 0; k < 2 && g_ascii_xdigit_value(*s) >= 0; k++)
        v = v * 16 + g_ascii_xdigit_value(*s++);
      box_out_putc(o, (char)v);
      break;
    }
    case 'u':
    case 'U': {
      int max = c == 'u' ? 4 : 8;
      if (g_ascii_xdigit_value(*s) < 0) {
        box_out_putc(o, '\\');
        box_out_putc(o, c);
        break;
      }
      gunichar v = 0;
      for (int k = 0; k < max && g_ascii_xdigit_value(*s) >= 0; k++)
        v = v * 16 + (gunichar)g_ascii_xdigit_value(*s++);
      char buf[8];
      int n = g_unichar_to_utf8(v, buf);
      box_out_write(o, buf, (size_t)n);
      break;
    }
    default: box_out_putc(o, '\\'); box_out_putc(o, c);
    }
  }
  return true;
}

int box_cmd_echo(BoxCmd *c)
{
  bool newline = true, escapes = (c->sh->shopts & SH_XPG_ECHO) != 0;
  int i = 1;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (a[0] != '-' || a[1] == '\0' || strspn(a + 1, "neE") != strlen(a + 1)) break;
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'n')
        newline = false;
      else if (*p == 'e')
        escapes = true;
      else
        escapes = false;
    }
  }
  for (int first = i; i < c->argc; i++) {
    if (i > first) box_out_putc(c->out, ' ');
    if (escapes) {
      if (!put_escaped(c->out, c->argv[i])) return 0;
    } else {
      box_out_puts(c->out, c->argv[i]);
    }
  }
  if (newline) box_out_putc(c->out, '\n');
  return 0;
}
