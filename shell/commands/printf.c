/* printf.c — bash's `printf [-v VAR] FORMAT [ARG…]`: the format repeats
 * until the arguments are used; %b, %q, %(…)T aside, conversions are C's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shell/commands/commands-private.h"

/* Backslash escapes of a format (or of %b when bflag): returns false at \c. */
static bool put_escapes(GString *out, const char *s, size_t n, bool bflag, size_t *used)
{
  size_t i = 0;
  for (; i < n; i++) {
    char c = s[i];
    if (c != '\\' || i + 1 >= n) {
      g_string_append_c(out, c);
      continue;
    }
    c = s[++i];
    /* %b takes echo -e's escapes: \' \" and \? stay as written */
    int b = bx_escape_byte(c, bflag ? "abeEfnrtv\\" : "abeEfnrtv\\'\"?");
    if (b >= 0) {
      g_string_append_c(out, (char)b);
      continue;
    }
    switch (c) {
    case 'c':
      if (bflag) {
        if (used) *used = i;
        return false;
      }
      g_string_append(out, "\\c");
      break;
    case 'x': {
      unsigned v = 0;
      if (!box_escape_digits(s, n, &i, 2, 16, &v))
        g_string_append(out, "\\x");
      else
        g_string_append_c(out, (char)v);
      break;
    }
    case 'u':
    case 'U': {
      unsigned v = 0;
      if (!box_escape_digits(s, n, &i, c == 'u' ? 4 : 8, 16, &v)) {
        g_string_append_c(out, '\\');
        g_string_append_c(out, c);
      } else
        g_string_append_unichar(out, v);
      break;
    }
    default:
      if (c >= '0' && c <= '7') {
        /* up to three digits, after %b's leading 0 (\0NNN) */
        unsigned v = 0;
        i--;
        if (bflag && s[i + 1] == '0') i++;
        box_escape_digits(s, n, &i, 3, 8, &v);
        g_string_append_c(out, (char)v);
      } else {
        g_string_append_c(out, '\\');
        g_string_append_c(out, c);
      }
    }
  }
  if (used) *used = i;
  return true;
}

/* bytes (NULs too: %b's \0) by a %s spec's flags, width and precision */
static void put_padded(GString *out, const char *spec, const char *data, size_t len)
{
  const char *p = spec + 1;
  bool left = false;
  for (; *p && strchr("-+ #0", *p); p++)
    if (*p == '-') left = true;
  size_t width = strtoul(p, (char **)&p, 10);
  if (*p == '.') len = MIN(len, strtoul(p + 1, NULL, 10));
  size_t pad = width > len ? width - len : 0;
  if (!left)
    for (size_t k = 0; k < pad; k++) g_string_append_c(out, ' ');
  g_string_append_len(out, data, (gssize)len);
  if (left)
    for (size_t k = 0; k < pad; k++) g_string_append_c(out, ' ');
}

/* An integer argument, as bash's printf reads one: a value past the range
 * (of unsigned long long for %o %u %x %X, where a minus wraps as strtoull
 * wraps it) is the range's end, with a warning but no failure. */
static bool num_arg_as(const char *a, int64_t *v, int err_fd, bool *bad, bool is_unsigned)
{
  /* bash: no argument, an empty one or a lone quote is 0, no error */
  if (!a || !*a || ((a[0] == '\'' || a[0] == '"') && !a[1])) {
    *v = 0;
    return true;
  }
  if ((a[0] == '\'' || a[0] == '"') && a[1]) {
    *v = (int64_t)g_utf8_get_char_validated(a + 1, -1);
    if (*v < 0) *v = (unsigned char)a[1];
    return true;
  }
  char *end;
  errno = 0;
  const char *p = a;
  while (*p == ' ' || *p == '\t') p++;
  long long r = is_unsigned ? (long long)strtoull(p, &end, 0) : strtoll(p, &end, 0);
  if (end != p && !*end && errno == ERANGE) {
    box_fdprintf(err_fd, "strands-shell: printf: warning: %s: Numerical result out of range\n", a);
    errno = 0;
  }
  if (end == p || *end || errno) {
    box_fdprintf(err_fd, "strands-shell: printf: %s: invalid number\n", a);
    *bad = true;
    *v = (end != p) ? r : 0;
    return false;
  }
  *v = r;
  return true;
}

static bool num_arg(const char *a, int64_t *v, int err_fd, bool *bad)
{
  return num_arg_as(a, v, err_fd, bad, false);
}

/* %q: bash quotes with backslashes where box_quote would use single
 * quotes, its set of characters (',' among them; '~' and '#' only first),
 * and leaves a multibyte character as it is; $'…' where box_quote needs it. */
static char *quote_q(const char *arg)
{
  if (!arg || !*arg) return g_strdup("''");
  char *q = box_quote(arg);
  if (q[0] == '$') return q;
  g_free(q);
  GString *g = g_string_new(NULL);
  for (const char *p = arg; *p; p++) {
    if (strchr(" \t\n'\"\\|&;()<>!{}*[]?^$`,", *p) || (p == arg && (*p == '~' || *p == '#')))
      g_string_append_c(g, '\\');
    g_string_append_c(g, *p);
  }
  return g_string_free(g, FALSE);
}

/* %(FMT)T: arg as seconds since the epoch (now when absent, empty or -1),
 * padded and cut as %s by spec's width and precision.  bash formats into
 * 128 bytes: a longer result prints nothing. */
static void put_time(GString *out, const char *spec, const char *tf, const char *arg)
{
  time_t now = arg && *arg && strcmp(arg, "-1") ? (time_t)atoll(arg) : time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  char buf[128];
  size_t n = strftime(buf, sizeof buf, tf, &tm);
  put_padded(out, spec, buf, n);
}

/* A width or a precision at fmt[j]: '*' takes the next argument, else the
 * digits as written.  Returns the index after it. */
static size_t spec_number(GString *spec, const char *fmt, size_t j, size_t fl, int argc,
                          char **argv, int *ai, bool *consumed, int err_fd, bool *bad)
{
  if (j < fl && fmt[j] == '*') {
    int64_t w = 0;
    num_arg(*ai < argc ? argv[*ai] : NULL, &w, err_fd, bad);
    if (*ai < argc) (*ai)++;
    *consumed = true;
    g_string_append_printf(spec, "%d", (int)w);
    return j + 1;
  }
  while (j < fl && g_ascii_isdigit(fmt[j])) g_string_append_c(spec, fmt[j++]);
  return j;
}

int box_printf_format(Shell *sh, GString *out, int argc, char **argv, int err_fd)
{
  (void)sh;
  if (argc < 1) return 2;
  const char *fmt = argv[0];
  size_t fl = strlen(fmt);
  int ai = 1;
  bool bad = false;
  do {
    bool consumed = false;
    for (size_t i = 0; i < fl; i++) {
      char c = fmt[i];
      if (c == '\\') {
        size_t used = 0;
        size_t k = i;
        /* one escape */
        size_t e = i + 2;
        if (i + 1 < fl && (fmt[i + 1] == 'x')) {
          e = i + 2;
          while (e < fl && e < i + 4 && g_ascii_isxdigit(fmt[e])) e++;
        } else if (i + 1 < fl && fmt[i + 1] >= '0' && fmt[i + 1] <= '7') {
          e = i + 1;
          while (e < fl && e < i + 4 && fmt[e] >= '0' && fmt[e] <= '7') e++;
        } else if (i + 1 < fl && (fmt[i + 1] == 'u' || fmt[i + 1] == 'U')) {
          e = i + 2;
          size_t mx = fmt[i + 1] == 'u' ? 4 : 8;
          while (e < fl && e < i + 2 + mx && g_ascii_isxdigit(fmt[e])) e++;
        }
        if (e > fl) e = fl;
        if (i + 1 < fl && fmt[i + 1] == 'c') { return bad ? 1 : 0; }
        put_escapes(out, fmt + k, e - k, false, &used);
        i = e - 1;
        continue;
      }
      if (c != '%') {
        g_string_append_c(out, c);
        continue;
      }
      if (i + 1 < fl && fmt[i + 1] == '%') {
        g_string_append_c(out, '%');
        i++;
        continue;
      }
      /* %[flags][width][.prec]conv */
      size_t j = i + 1;
      GString *spec = g_string_new("%");
      while (j < fl && strchr("-+ #0", fmt[j])) g_string_append_c(spec, fmt[j++]);
      j = spec_number(spec, fmt, j, fl, argc, argv, &ai, &consumed, err_fd, &bad);
      if (j < fl && fmt[j] == '.') {
        g_string_append_c(spec, fmt[j++]);
        j = spec_number(spec, fmt, j, fl, argc, argv, &ai, &consumed, err_fd, &bad);
      }
      while (j < fl && strchr("hlLqjzt", fmt[j]) && fmt[j] != 'q') j++;
      if (j >= fl) {
        box_fdprintf(err_fd, "strands-shell: printf: `%s': missing format character\n",
                     spec->str + 1);
        g_string_free(spec, TRUE);
        return 1;
      }
      char conv = fmt[j];
      const char *arg = ai < argc ? argv[ai] : NULL;
      if (strchr("sbqcdiouxXeEfFgGaA", conv)) {
        if (ai < argc) ai++;
        consumed = true;
      }
      switch (conv) {
      case 's': {
        g_string_append_c(spec, 's');
        char *t = g_strdup_printf(spec->str, arg ? arg : "");
        g_string_append(out, t);
        g_free(t);
        break;
      }
      case 'b': {
        GString *b = g_string_new(NULL);
        bool go = put_escapes(b, arg ? arg : "", arg ? strlen(arg) : 0, true, NULL);
        put_padded(out, spec->str, b->str, b->len);
        g_string_free(b, TRUE);
        if (!go) {
          g_string_free(spec, TRUE);
          return bad ? 1 : 0;
        }
        break;
      }
      case 'q': {
        g_autofree char *q = quote_q(arg);
        g_string_append_c(spec, 's');
        char *t = g_strdup_printf(spec->str, q);
        g_string_append(out, t);
        g_free(t);
        break;
      }
      case 'c': {
        g_string_append_c(spec, 'c');
        if (arg && *arg) {
          char *t = g_strdup_printf(spec->str, arg[0]);
          g_string_append(out, t);
          g_free(t);
        } else if (arg || true) {
          g_string_set_size(spec, spec->len - 1);
          g_string_append_c(spec, 's');
          char *t = g_strdup_printf(spec->str, "");
          g_string_append(out, t);
          g_free(t);
        }
        break;
      }
      case 'd':
      case 'i':
      case 'o':
      case 'u':
      case 'x':
      case 'X': {
        int64_t v = 0;
        num_arg_as(arg, &v, err_fd, &bad, conv != 'd' && conv != 'i');
        g_string_append(spec, "ll");
        g_string_append_c(spec, conv == 'i' ? 'd' : conv);
        char *t = g_strdup_printf(spec->str, (long long)v);
        g_string_append(out, t);
        g_free(t);
        break;
      }
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G':
      case 'a':
      case 'A': {
        double d = 0;
        if (arg && (arg[0] == '\'' || arg[0] == '"')) {
          int64_t v; /* a quoted character: its code, as %d takes it */
          num_arg(arg, &v, err_fd, &bad);
          d = (double)v;
        } else if (arg && *arg) {
          char *end;
          d = g_ascii_strtod(arg, &end);
          if (end == arg || *end) {
            box_fdprintf(err_fd, "strands-shell: printf: %s: invalid number\n", arg);
            bad = true;
          }
        }
        g_string_append_c(spec, conv);
        char *t = g_strdup_printf(spec->str, d);
        g_string_append(out, t);
        g_free(t);
        break;
      }
      case 'n':
        /* the bytes printed so far, into the variable the argument names */
        if (arg && box_is_name(arg, strlen(arg))) {
          char n[32];
          g_snprintf(n, sizeof n, "%u", (unsigned)out->len);
          box_var_set(sh, arg, n);
        } else if (arg) {
          box_fdprintf(err_fd, "strands-shell: printf: `%s': not a valid identifier\n", arg);
          g_string_free(spec, TRUE);
          return 1;
        }
        if (ai < argc) ai++;
        consumed = true;
        break;
      case '(': {
        size_t e = j;
        while (e < fl && fmt[e] != ')') e++;
        char *tf = g_strndup(fmt + j + 1, e - j - 1);
        j = e + 1;
        if (ai < argc) ai++;
        consumed = true;
        put_time(out, spec->str, tf, arg);
        g_free(tf);
        break;
      }
      default:
        box_fdprintf(err_fd, "strands-shell: printf: `%c': invalid format character\n", conv);
        g_string_free(spec, TRUE);
        return 1;
      }
      g_string_free(spec, TRUE);
      i = j;
    }
    if (!consumed) break;
  } while (ai < argc);
  return bad ? 1 : 0;
}

static int printf_usage(BoxCmd *c, char *name, char *key)
{
  box_fdprintf(c->err, "printf: usage: printf [-v var] format [arguments]\n");
  g_free(name);
  g_free(key);
  return 2;
}

int box_cmd_printf(BoxCmd *c)
{
  int i = 1;
  const char *var = NULL;
  char *name = NULL, *key = NULL;
  /* bash's getopt "v:": a format that starts with "-" is an option too */
  for (; i < c->argc && c->argv[i][0] == '-' && c->argv[i][1]; i++) {
    const char *a = c->argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (a[1] != 'v') {
      box_cmd_error(c, "-%c: invalid option", a[1]);
      return printf_usage(c, name, key);
    }
    var = a[2] ? a + 2 : i + 1 < c->argc ? c->argv[++i] : NULL;
    if (!var) {
      box_cmd_error(c, "-v: option requires an argument");
      return printf_usage(c, name, key);
    }
    g_clear_pointer(&name, g_free);
    g_clear_pointer(&key, g_free);
    if (!box_split_ref(var, &name, &key)) {
      box_cmd_error(c, "`%s': not a valid identifier", var);
      return 2;
    }
  }
  if (i >= c->argc) return printf_usage(c, name, key);
  GString *out = g_string_new(NULL);
  int st = box_printf_format(c->sh, out, c->argc - i, c->argv + i, c->err);
  if (var) {
    g_autofree char *k = key ? box_elem_key(c->sh, name, key) : NULL;
    if (!(key ? k && box_var_set_elem(c->sh, name, k, out->str, false)
              : box_var_set(c->sh, var, out->str)))
      st = 1;
    g_free(name);
    g_free(key);
  } else {
    box_out_write(c->out, out->str, out->len);
  }
  g_string_free(out, TRUE);
  return st;
}
