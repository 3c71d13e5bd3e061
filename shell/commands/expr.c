/* expr.c — GNU expr: | & = > >= < <= != + - * / % : match substr index
 * length ( ), integers of any size that fit in 64 bits.  Status 0 (value
 * neither null nor 0), 1 (null or 0), 2 (invalid expression), 3 is not used. */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

typedef struct {
  BoxCmd *c;
  char **av;
  int n, i;
  bool failed;
} Ex;

typedef struct {
  bool is_int;
  long long i;
  char *s;
} Val;

static Val vs(char *s)
{
  return (Val){ false, 0, s };
}
static Val vi(long long i)
{
  return (Val){ true, i, NULL };
}

static bool looks_int(const char *s, long long *out)
{
  const char *p = s;
  if (*p == '-') p++;
  if (!g_ascii_isdigit(*p)) return false;
  for (; *p; p++)
    if (!g_ascii_isdigit(*p)) return false;
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno) return false;
  *out = v;
  return true;
}

static char *str_of(Val v)
{
  return v.is_int ? g_strdup_printf("%lld", v.i) : g_strdup(v.s);
}
static void vfree(Val v)
{
  g_free(v.s);
}

static bool is_null(Val v)
{
  if (v.is_int) return v.i == 0;
  long long x;
  if (!*v.s) return true;
  return looks_int(v.s, &x) && x == 0;
}

static void fail(Ex *e, int status_unused, const char *fmt, const char *arg)
{
  (void)status_unused;
  if (e->failed) return;
  e->failed = true;
  if (arg) {
    g_autofree char *q = bx_quote_always(arg);
    bx_err(e->c, "expr", fmt, q);
  } else {
    bx_err(e->c, "expr", "%s", fmt);
  }
}

static bool nomore(Ex *e)
{
  return e->i >= e->n;
}
static bool peek(Ex *e, const char *tok)
{
  return e->i < e->n && strcmp(e->av[e->i], tok) == 0;
}

static Val eval_or(Ex *e, bool evaluate);

static bool to_int(Ex *e, Val v, long long *out)
{
  if (v.is_int) {
    *out = v.i;
    return true;
  }
  if (looks_int(v.s, out)) return true;
  fail(e, 2, "non-integer argument", NULL);
  return false;
}

static Val do_match(Ex *e, Val a, Val b)
{
  char *s = str_of(a), *re = str_of(b);
  regex_t rx;
  char *pat = g_strconcat("^", re, NULL);
  if (box_pattern_too_deep(pat)) {
    bx_err(e->c, "expr", "maximum nesting depth exceeded (%d)", BOX_MAX_NEST);
    e->failed = true;
    g_free(pat);
    g_free(s);
    g_free(re);
    return vs(g_strdup(""));
  }
  int rc = regcomp(&rx, pat, 0);
  g_free(pat);
  if (rc) {
    char msg[256];
    regerror(rc, &rx, msg, sizeof msg);
    bx_err(e->c, "expr", "%s", msg);
    e->failed = true;
    g_free(s);
    g_free(re);
    return vs(g_strdup(""));
  }
  regmatch_t m[2];
  Val r;
  if (regexec(&rx, s, 2, m, 0) == 0) {
    if (rx.re_nsub > 0)
      r = m[1].rm_so >= 0 ? vs(g_strndup(s + m[1].rm_so, (gsize)(m[1].rm_eo - m[1].rm_so)))
                          : vs(g_strdup(""));
    else
      r = vi(m[0].rm_eo);
  } else {
    r = rx.re_nsub > 0 ? vs(g_strdup("")) : vi(0);
  }
  regfree(&rx);
  g_free(s);
  g_free(re);
  return r;
}

static Val eval_primary(Ex *e, bool ev)
{
  if (nomore(e)) {
    if (e->i > 0)
      fail(e, 2, "syntax error: missing argument after %s", e->av[e->i - 1]);
    else
      fail(e, 2, "syntax error: missing argument", NULL);
    return vs(g_strdup(""));
  }
  const char *t = e->av[e->i];
  if (!strcmp(t, "+") && e->i + 1 < e->n) {
    e->i++;
    return vs(g_strdup(e->av[e->i++]));
  }
  if (!strcmp(t, "(")) {
    e->i++;
    Val v = eval_or(e, ev);
    if (e->failed) return v;
    if (nomore(e)) {
      fail(e, 2, "syntax error: expecting ')' after %s", e->av[e->i - 1]);
      return v;
    }
    if (!peek(e, ")")) {
      fail(e, 2, "syntax error: expecting ')' instead of %s", e->av[e->i]);
      return v;
    }
    e->i++;
    return v;
  }
  if (!strcmp(t, ")")) {
    fail(e, 2, "syntax error: unexpected ')'", NULL);
    return vs(g_strdup(""));
  }
  if (!strcmp(t, "length") && e->i + 1 < e->n) {
    e->i++;
    Val a = eval_primary(e, ev);
    char *s = str_of(a);
    Val r = vi((long long)strlen(s));
    g_free(s);
    vfree(a);
    return r;
  }
  if (!strcmp(t, "match") && e->i + 2 < e->n) {
    e->i++;
    Val a = eval_primary(e, ev), b = eval_primary(e, ev);
    Val r = ev ? do_match(e, a, b) : vi(0);
    vfree(a);
    vfree(b);
    return r;
  }
  if (!strcmp(t, "index") && e->i + 2 < e->n) {
    e->i++;
    Val a = eval_primary(e, ev), b = eval_primary(e, ev);
    char *s = str_of(a), *cs = str_of(b);
    size_t k = strcspn(s, cs);
    Val r = vi(s[k] ? (long long)k + 1 : 0);
    g_free(s);
    g_free(cs);
    vfree(a);
    vfree(b);
    return r;
  }
  if (!strcmp(t, "substr") && e->i + 3 < e->n) {
    e->i++;
    Val a = eval_primary(e, ev), p = eval_primary(e, ev), l = eval_primary(e, ev);
    char *s = str_of(a);
    long long pos, len;
    Val r = vs(g_strdup(""));
    char *ps = str_of(p), *ls = str_of(l);
    if (looks_int(ps, &pos) && looks_int(ls, &len) && pos >= 1 && len >= 1 &&
        (size_t)pos <= strlen(s)) {
      vfree(r);
      r = vs(g_strndup(s + pos - 1, (gsize)len));
    }
    g_free(ps);
    g_free(ls);
    g_free(s);
    vfree(a);
    vfree(p);
    vfree(l);
    return r;
  }
  e->i++;
  return vs(g_strdup(t));
}

static Val eval_colon(Ex *e, bool ev)
{
  Val l = eval_primary(e, ev);
  while (!e->failed && peek(e, ":")) {
    e->i++;
    Val r = eval_primary(e, ev);
    Val m = ev ? do_match(e, l, r) : vi(0);
    vfree(l);
    vfree(r);
    l = m;
  }
  return l;
}

static Val eval_mul(Ex *e, bool ev)
{
  Val l = eval_colon(e, ev);
  while (!e->failed && (peek(e, "*") || peek(e, "/") || peek(e, "%"))) {
    char op = e->av[e->i++][0];
    Val r = eval_colon(e, ev);
    long long a, b;
    if (ev && !e->failed) {
      if (to_int(e, l, &a) && to_int(e, r, &b)) {
        if (op != '*' && b == 0)
          fail(e, 2, "division by zero", NULL);
        else {
          long long x;
          if (op == '*') {
            if (__builtin_mul_overflow(a, b, &x)) fail(e, 2, "result too large", NULL);
          } else if (a == INT64_MIN && b == -1) {
            x = 0;
            fail(e, 2, "result too large", NULL);
          } else
            x = op == '/' ? a / b : a % b;
          vfree(l);
          l = vi(e->failed ? 0 : x);
        }
      }
    }
    vfree(r);
  }
  return l;
}

static Val eval_add(Ex *e, bool ev)
{
  Val l = eval_mul(e, ev);
  while (!e->failed && (peek(e, "+") || peek(e, "-"))) {
    char op = e->av[e->i++][0];
    Val r = eval_mul(e, ev);
    long long a, b, x = 0;
    if (ev && !e->failed && to_int(e, l, &a) && to_int(e, r, &b)) {
      bool ov = op == '+' ? __builtin_add_overflow(a, b, &x) : __builtin_sub_overflow(a, b, &x);
      if (ov) fail(e, 2, "result too large", NULL);
      vfree(l);
      l = vi(x);
    }
    vfree(r);
  }
  return l;
}

static Val eval_cmp(Ex *e, bool ev)
{
  static const char *ops[] = { "=", "==", "!=", "<", "<=", ">", ">=", NULL };
  Val l = eval_add(e, ev);
  for (;;) {
    if (e->failed || nomore(e)) return l;
    int k = -1;
    for (int j = 0; ops[j]; j++)
      if (!strcmp(e->av[e->i], ops[j])) k = j;
    if (k < 0) return l;
    e->i++;
    Val r = eval_add(e, ev);
    int d;
    long long a, b;
    char *sa = str_of(l), *sb = str_of(r);
    if (looks_int(sa, &a) && looks_int(sb, &b))
      d = a < b ? -1 : a > b;
    else
      d = strcoll(sa, sb);
    g_free(sa);
    g_free(sb);
    bool res;
    switch (k) {
    case 0:
    case 1: res = d == 0; break;
    case 2: res = d != 0; break;
    case 3: res = d < 0; break;
    case 4: res = d <= 0; break;
    case 5: res = d > 0; break;
    default: res = d >= 0; break;
    }
    vfree(l);
    vfree(r);
    l = vi(res);
  }
}

static Val eval_and(Ex *e, bool ev)
{
  Val l = eval_cmp(e, ev);
  while (!e->failed && peek(e, "&")) {
    e->i++;
    bool ln = is_null(l);
    Val r = eval_cmp(e, ev && !ln);
    if (ln || is_null(r)) {
      vfree(l);
      l = vi(0);
    }
    vfree(r);
  }
  return l;
}

static Val eval_or(Ex *e, bool ev)
{
  Val l = eval_and(e, ev);
  while (!e->failed && peek(e, "|")) {
    e->i++;
    bool ln = is_null(l);
    Val r = eval_and(e, ev && ln);
    if (ln) {
      vfree(l);
      l = is_null(r) ? vi(0) : r;
      if (l.s != r.s || l.is_int) {
        if (!(l.s == r.s)) vfree(r);
      }
    } else {
      vfree(r);
    }
  }
  return l;
}

int box_cmd_expr(BoxCmd *c)
{
  int start = 1;
  if (start < c->argc && !strcmp(c->argv[start], "--")) start++;
  Ex e = { c, c->argv + start, c->argc - start, 0, false };
  if (e.n == 0) {
    bx_usage(c, "expr", "missing operand");
    return 2;
  }
  Val v = eval_or(&e, true);
  if (!e.failed && !nomore(&e)) fail(&e, 2, "syntax error: unexpected argument %s", e.av[e.i]);
  if (e.failed) {
    vfree(v);
    return 2;
  }
  char *s = str_of(v);
  box_out_printf(c->out, "%s\n", s);
  g_free(s);
  int st = is_null(v) ? 1 : 0;
  vfree(v);
  return st;
}
