/* seq.c — GNU seq: [FIRST [INCREMENT]] LAST, -s SEP, -w, -f FORMAT. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

static bool parse_num(const char *s, long double *v, int *frac, bool *is_int)
{
  char *end;
  errno = 0;
  *v = strtold(s, &end);
  if (end == s || *end || isnan((double)*v)) return false;
  const char *dot = strchr(s, '.');
  const char *e = strpbrk(s, "eE");
  *frac = 0;
  if (dot && (!e || dot < e)) *frac = (int)(e ? e - dot - 1 : (long)strlen(dot + 1));
  if (e) {
    long ex = strtol(e + 1, NULL, 10);
    *frac = ex < 0 ? MAX(*frac, (int)-ex + *frac) : MAX(0, *frac - (int)ex);
  }
  *is_int = *frac == 0 && !strpbrk(s, "xXpP") && fabsl(*v) < 9e18L;
  return true;
}

/* -sSTR, -s STR or --separator=STR (and -f's forms): true with *dst
 * set when c->argv[*i] is the option, *i then at its last word. */
static bool string_opt(BoxCmd *c, int *i, const char *shrt, const char *lng, const char **dst)
{
  const char *a = c->argv[*i];
  if (!strncmp(a, shrt, 2)) {
    *dst = a[2] ? a + 2 : (*i + 1 < c->argc ? c->argv[++*i] : "");
    return true;
  }
  if (!strncmp(a, lng, strlen(lng))) {
    *dst = a + strlen(lng);
    return true;
  }
  return false;
}

int box_cmd_seq(BoxCmd *c)
{
  const char *sep = "\n", *fmt = NULL;
  bool wide = false;
  /* negative numbers are operands, not options */
  int i = 1;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (a[0] != '-' || !a[1] || g_ascii_isdigit(a[1]) || a[1] == '.') break;
    if (!strcmp(a, "--")) {
      i++;
      break;
    }
    if (!strcmp(a, "-w") || !strcmp(a, "--equal-width")) {
      wide = true;
      continue;
    }
    if (string_opt(c, &i, "-s", "--separator=", &sep)) continue;
    if (string_opt(c, &i, "-f", "--format=", &fmt)) continue;
    if (a[1] == '-')
      bx_usage(c, "seq", "unrecognized option '%s'", a);
    else
      bx_usage(c, "seq", "invalid option -- '%c'", a[1]);
    return 1;
  }
  int n = c->argc - i;
  if (n < 1) {
    bx_usage(c, "seq", "missing operand");
    return 1;
  }
  if (n > 3) {
    bx_usage_q(c, "seq", "extra operand %s", c->argv[i + 3]);
    return 1;
  }
  long double v[3] = { 1, 1, 0 };
  int frac[3] = { 0, 0, 0 };
  bool isint[3] = { true, true, true };
  int idx[3];
  if (n == 1) {
    idx[0] = 2;
  } else if (n == 2) {
    idx[0] = 0;
    idx[1] = 2;
  } else {
    idx[0] = 0;
    idx[1] = 1;
    idx[2] = 2;
  }
  for (int k = 0; k < n; k++) {
    const char *a = c->argv[i + k];
    if (!parse_num(a, &v[idx[k]], &frac[idx[k]], &isint[idx[k]])) {
      bx_usage_q(c, "seq", "invalid floating point argument: %s", a);
      return 1;
    }
  }
  if (v[1] == 0) {
    bx_usage_q(c, "seq", "invalid Zero increment value: %s", c->argv[i + 1]);
    return 1;
  }
  if (fmt) {
    /* one %-directive of the floating kinds */
    int count = 0;
    for (const char *p = fmt; *p; p++) {
      if (*p != '%') continue;
      if (p[1] == '%') {
        p++;
        continue;
      }
      count++;
      const char *q = p + 1;
      q += strspn(q, "-+ #0'123456789.");
      if (!*q || !strchr("eEfFgGaA", *q)) {
        g_autofree char *qq = bx_quote_always(fmt);
        bx_err(c, "seq", "format %s has unknown %%%c directive", qq, *q ? *q : ' ');
        return 1;
      }
    }
    if (count != 1) {
      g_autofree char *qq = bx_quote_always(fmt);
      bx_err(c, "seq",
             count ? "format %s has too many %% directives" : "format %s has no %% directive", qq);
      return 1;
    }
  }
  int prec = MAX(frac[0], frac[1]);
  bool all_int = isint[0] && isint[1] && isint[2] && !fmt;
  GString *out = g_string_new(NULL);
  int width = 0;
  if (wide) {
    char b[128];
    int w0 = snprintf(b, sizeof b, "%.*Lf", prec, v[0]);
    long double last = v[0] + floorl((v[2] - v[0]) / v[1]) * v[1];
    int w2 = snprintf(b, sizeof b, "%.*Lf", prec, last);
    width = MAX(w0, w2);
  }
  bool first = true;
  for (long long k = 0;; k++) {
    long double x = v[0] + (long double)k * v[1];
    if (v[1] > 0 ? x > v[2] : x < v[2]) break;
    if (!first) g_string_append(out, sep);
    first = false;
    char b[256];
    if (fmt) {
      char f2[512];
      /* the user's directive on a long double */
      GString *ff = g_string_new(NULL);
      for (const char *p = fmt; *p; p++) {
        g_string_append_c(ff, *p);
        if (*p == '%' && p[1] != '%') {
          const char *q = p + 1;
          size_t k2 = strspn(q, "-+ #0'123456789.");
          g_string_append_len(ff, q, (gssize)k2);
          g_string_append_c(ff, 'L');
          p = q + k2 - 1;
        } else if (*p == '%') {
          g_string_append_c(ff, '%');
          p++;
        }
      }
      g_strlcpy(f2, ff->str, sizeof f2);
      g_string_free(ff, TRUE);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
      snprintf(b, sizeof b, f2, x);
#pragma GCC diagnostic pop
    } else if (all_int) {
      snprintf(b, sizeof b, "%0*lld", width, (long long)x);
    } else {
      snprintf(b, sizeof b, "%0*.*Lf", width, prec, x);
    }
    g_string_append(out, b);
    if (out->len > 65536) {
      box_out_write(c->out, out->str, out->len);
      g_string_truncate(out, 0);
      if (c->out->error) break;
    }
  }
  if (!first) g_string_append_c(out, '\n');
  box_out_write(c->out, out->str, out->len);
  g_string_free(out, TRUE);
  return 0;
}
