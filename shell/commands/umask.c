/* umask.c — `umask [-pS] [MODE]`. */
#include <string.h>
#include <sys/stat.h>

#include "shell/shell-private.h"

static void print_symbolic(BoxCmd *c, mode_t m)
{
  mode_t p = ~m & 0777;
  box_out_printf(c->out, "u=%s%s%s,g=%s%s%s,o=%s%s%s\n", p & 0400 ? "r" : "", p & 0200 ? "w" : "",
                 p & 0100 ? "x" : "", p & 040 ? "r" : "", p & 020 ? "w" : "", p & 010 ? "x" : "",
                 p & 04 ? "r" : "", p & 02 ? "w" : "", p & 01 ? "x" : "");
}

/* bash's symbolic mode, [ugoa…][+-=][rwx…] clauses joined by commas,
 * applied to the permission bits bits; -1 after its error. */
static int symbolic(BoxCmd *c, const char *s, int bits)
{
  for (;;) {
    int who = 0, perm = 0;
    for (; *s && strchr("agou", *s); s++)
      who |= *s == 'u' ? 0700 : *s == 'g' ? 070 : *s == 'o' ? 07 : 0777;
    char op = *s ? *s++ : '\0';
    if (op != '+' && op != '-' && op != '=') {
      box_cmd_error(c, "`%c': invalid symbolic mode operator", op);
      return -1;
    }
    for (; *s && strchr("rwx", *s); s++) perm |= *s == 'r' ? 0444 : *s == 'w' ? 0222 : 0111;
    if (*s && *s != ',') {
      box_cmd_error(c, "`%c': invalid symbolic mode character", *s);
      return -1;
    }
    if (who) perm &= who;
    if (op == '+')
      bits |= perm;
    else if (op == '-')
      bits &= ~perm;
    else
      bits = (bits & ~(who ? who : 0777)) | perm;
    if (!*s) return bits;
    s++;
  }
}

int box_cmd_umask(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool sym = false, reusable = false;
  int i = 1;
  for (; i < c->argc && c->argv[i][0] == '-' && c->argv[i][1]; i++) {
    if (strcmp(c->argv[i], "--") == 0) {
      i++;
      break;
    }
    for (const char *o = c->argv[i] + 1; *o; o++) {
      if (*o == 'S') {
        sym = true;
      } else if (*o == 'p') {
        reusable = true;
      } else {
        box_cmd_error(c, "-%c: invalid option", *o);
        box_fdprintf(c->err, "umask: usage: umask [-p] [-S] [mode]\n");
        return 2;
      }
    }
  }
  if (i >= c->argc) {
    mode_t m = sh->umask;
    /* -p: as a command that sets it again */
    if (reusable) box_out_printf(c->out, sym ? "umask -S " : "umask ");
    if (sym) {
      print_symbolic(c, m);
    } else {
      box_out_printf(c->out, "%04o\n", (unsigned)m);
    }
    return 0;
  }
  const char *a = c->argv[i];
  unsigned v = 0;
  if (g_ascii_isdigit(*a)) {
    for (const char *p = a; *p; p++) {
      if (*p < '0' || *p > '7' || (v = v * 8 + (unsigned)(*p - '0')) > 07777) {
        box_cmd_error(c, "%s: octal number out of range", a);
        return 1;
      }
    }
  } else {
    int bits = symbolic(c, a, (int)(~sh->umask & 0777));
    if (bits < 0) return 1;
    v = ~(unsigned)bits & 0777;
  }
  sh->umask = (mode_t)(v & 0777);
  umask(sh->umask);
  if (sym) print_symbolic(c, sh->umask);
  return 0;
}
