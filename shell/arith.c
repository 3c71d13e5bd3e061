/* arith.c — $(( )), (( )), let, array subscripts: the C operator set on
 * 64-bit integers, evaluated straight from the text (no tree). */
#include <stdlib.h>
#include <string.h>

#include "shell/shell-private.h"

typedef struct {
  Shell *sh;
  const char *expr; /* whole expression (messages) */
  const char *p;
  int noeval; /* >0: parse only (short-circuit) */
  bool err;
  int depth; /* of variables holding expressions */
  int nest;  /* of ( ), unary operators, ?: and = (nested) */
  /* where a bad constant ends: bash's message shows the expression only
   * up to there (it cuts its text there to read the number) */
  const char *cut;
  /* where the token last read starts: at the end of the text, the one
   * before it, as bash's message names the offending token */
  const char *tok;
} Ar;

static void ar_error(Ar *a, const char *msg, const char *tok)
{
  if (a->err) return;
  a->err = true;
  const char *e = a->expr;
  while (*e == ' ' || *e == '\t' || *e == '\n') e++;
  /* bash keeps the blanks after the expression and after the token */
  char *ex = a->cut && a->cut > e ? g_strndup(e, (size_t)(a->cut - e)) : g_strdup(e);
  if (a->cut) g_strchomp(ex);
  char *t = g_strdup(tok ? tok : "");
  g_strchug(t);
  if (a->sh->arith_who)
    box_sh_error(a->sh, "%s: %s: %s (error token is \"%s\")", a->sh->arith_who, ex, msg, t);
  else
    box_sh_error(a->sh, "%s: %s (error token is \"%s\")", ex, msg, t);
  g_free(ex);
  g_free(t);
}

static void ws(Ar *a)
{
  while (*a->p == ' ' || *a->p == '\t' || *a->p == '\n') a->p++;
  if (*a->p) a->tok = a->p;
}

static int64_t comma(Ar *a);
static int64_t assign(Ar *a);
static int64_t unary(Ar *a);
static int64_t cond(Ar *a);

/* f(a) one level deeper.  The expression decides how deep the descent
 * goes (`((((…`, `- - - …`, `a=b=c=…`, `1?1:1?…`): bounded, as bash bounds
 * it, with bash's message. */
static int64_t nested(Ar *a, int64_t (*f)(Ar *))
{
  int64_t v = 0;
  if (++a->nest <= BOX_MAX_NEST && !box_stack_low())
    v = f(a);
  else
    ar_error(a, "expression recursion level exceeded", a->p);
  a->nest--;
  return v;
}

/* A constant: false with bash's complaint in *why when it is not one.  "0x"
 * alone is 0, as bash's; "N#" alone is not a number. */
static bool parse_number_why(const char *s, const char **end, int64_t *out, const char **why)
{
  const char *p = s;
  int64_t v = 0;
  int base = 10;
  bool hash = false;
  *why = "value too great for base";
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  } else if (p[0] == '0' && g_ascii_isdigit(p[1])) {
    base = 8;
    p++;
  } else {
    const char *q = p;
    while (g_ascii_isdigit(*q)) q++;
    if (*q == '#' && q > p) {
      base = atoi(p);
      if (base < 2 || base > 64) {
        *why = base ? "invalid arithmetic base" : "invalid number";
        return false;
      }
      p = q + 1;
      hash = true;
    }
  }
  const char *start = p;
  for (;; p++) {
    int d;
    char c = *p;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'z')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'Z')
      d = base <= 36 ? c - 'A' + 10 : c - 'A' + 36;
    else if (c == '@')
      d = 62;
    else if (c == '_')
      d = 63;
    else
      break;
    if (d >= base) return false;
    v = (int64_t)((uint64_t)v * (uint64_t)base + (uint64_t)d);
  }
  if (p == start && hash) {
    *why = "invalid integer constant";
    return false;
  }
  if (*p == '#' && (hash || base != 10)) {
    /* a second base after one already given (2#10#1, 0x1#2) */
    *why = "invalid number";
    return false;
  }
  *end = p;
  *out = v;
  return true;
}

static bool parse_number(const char *s, const char **end, int64_t *out)
{
  const char *why;
  return parse_number_why(s, end, out, &why);
}

/* What bash says of an expression with text left after it: a character
 * that begins no token is no operator at all. */
static const char *leftover_error(const char *p)
{
  return g_ascii_isalnum(*p) || *p == '_' || strchr("=*/%+-<>&|^!~?:(),", *p)
           ? "syntax error in expression"
           : "syntax error: invalid arithmetic operator";
}

/* A variable's value as a number (evaluating it as an expression). */
static int64_t var_num(Ar *a, const char *val)
{
  if (!val || !*val) return 0;
  const char *e;
  int64_t v;
  const char *s = val;
  while (*s == ' ' || *s == '\t') s++;
  bool neg = false;
  if (*s == '-' && g_ascii_isdigit(s[1])) {
    neg = true;
    s++;
  }
  if (g_ascii_isdigit(*s) && parse_number(s, &e, &v)) {
    while (*e == ' ' || *e == '\t' || *e == '\n') e++;
    if (!*e) return neg ? -v : v;
  }
  if (a->depth > 100) {
    ar_error(a, "expression recursion level exceeded", val);
    return 0;
  }
  Ar sub = { a->sh, val, val, a->noeval, false, a->depth + 1, 0, NULL, NULL };
  int64_t r = comma(&sub);
  ws(&sub);
  if (!sub.err && *sub.p) ar_error(&sub, leftover_error(sub.p), sub.p);
  if (sub.err) a->err = true;
  return r;
}

typedef struct {
  char name[256];
  char *sub; /* subscript text, or NULL */
} LVal;

/* An associative array's key as written in an expression, its quotes
 * removed (the expression's own expansions already ran). */
static char *unquote_key(const char *s)
{
  GString *g = g_string_new(NULL);
  for (char q = 0; *s; s++) {
    if (!q && (*s == '\'' || *s == '"'))
      q = *s;
    else if (q && *s == q)
      q = 0;
    else if (*s == '\\' && q != '\'' && s[1] && (!q || strchr("\"\\$`", s[1])))
      g_string_append_c(g, *++s);
    else
      g_string_append_c(g, *s);
  }
  return g_string_free(g, FALSE);
}

/* An indexed array's subscript: what expansions gave is evaluated as it
 * is, not expanded again. */
static char *drop_escapes(const char *s)
{
  GString *g = g_string_new(NULL);
  for (; *s; s++) g_string_append_c(g, *s == '\\' && s[1] ? *++s : *s);
  return g_string_free(g, FALSE);
}

static bool read_lval(Ar *a, LVal *lv)
{
  const char *s = a->p;
  size_t n = 0;
  while (s[n] == '_' || g_ascii_isalnum(s[n])) n++;
  if (n == 0 || n >= sizeof lv->name || g_ascii_isdigit(s[0])) return false;
  memcpy(lv->name, s, n);
  lv->name[n] = '\0';
  a->p = s + n;
  lv->sub = NULL;
  if (*a->p == '[') {
    const char *st = ++a->p;
    int depth = 1;
    while (*a->p && depth) {
      if (*a->p == '\\' && a->p[1]) {
        a->p += 2; /* a character an expansion gave (expand.c) */
        continue;
      }
      if (*a->p == '\'' && strchr(a->p + 1, '\'')) {
        a->p = strchr(a->p + 1, '\'') + 1;
        continue;
      }
      if (*a->p == '[')
        depth++;
      else if (*a->p == ']')
        depth--;
      if (depth) a->p++;
    }
    if (!*a->p) {
      ar_error(a, "bad array subscript", s);
      return false;
    }
    lv->sub = g_strndup(st, (size_t)(a->p - st));
    a->p++;
    ShellVar *v = box_var_lookup(a->sh, lv->name);
    if (v && (v->flags & V_ASSOC) && strpbrk(lv->sub, "'\"\\")) {
      char *k = unquote_key(lv->sub);
      g_free(lv->sub);
      lv->sub = k;
    } else if (strchr(lv->sub, '\\')) {
      char *k = drop_escapes(lv->sub);
      g_free(lv->sub);
      lv->sub = k;
    }
  }
  return true;
}

static const char *lval_get(Ar *a, LVal *lv)
{
  if (!lv->sub) {
    const char *v = box_var_get(a->sh, lv->name);
    if (!v && (a->sh->opts & O_NOUNSET) && !a->noeval) {
      box_sh_error(a->sh, "%s: unbound variable", lv->name);
      a->err = true;
      a->sh->arith_unbound = true;
    }
    return v;
  }
  ShellVar *v = box_var_lookup(a->sh, lv->name);
  if (!v) return NULL;
  bool failed = a->sh->subscript_failed;
  a->sh->subscript_failed = false;
  a->sh->bad_subscript = false;
  const char *r = box_var_elem(v, lv->sub);
  if (a->sh->subscript_failed) a->err = true; /* said by the subscript's own evaluation */
  a->sh->subscript_failed |= failed;
  /* `b[-5]` of a two-element array: said, read as 0, and the expression
   * goes on (only set -e stops it) */
  if (a->sh->bad_subscript && !(v->flags & V_ASSOC) && !a->err &&
      box_bad_subscript(a->sh, lv->name))
    a->err = true;
  return r;
}

char *box_i64_str(int64_t v, char *buf)
{
  char *p = buf + 23;
  *p = 0;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    *--p = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) *--p = '-';
  return p;
}

static void lval_set(Ar *a, LVal *lv, int64_t val)
{
  if (a->noeval || a->err) return;
  char buf[24];
  const char *num = box_i64_str(val, buf);
  a->sh->bad_subscript = false;
  bool ok = lv->sub ? box_var_set_elem(a->sh, lv->name, lv->sub, num, false)
                    : box_var_set(a->sh, lv->name, num);
  /* a subscript before the array's start: said, and the expression goes on
   * with its value, as bash's (set -e ended the shell already) */
  if (!ok && (!a->sh->bad_subscript || a->sh->jump == J_EXIT)) a->err = true;
}

static int64_t primary(Ar *a)
{
  ws(a);
  if (a->err) return 0;
  char c = *a->p;
  if (c == '(') {
    a->p++;
    int64_t v = nested(a, comma);
    ws(a);
    if (*a->p != ')') {
      ar_error(a, "missing `)'", a->p);
      return 0;
    }
    a->p++;
    return v;
  }
  if (g_ascii_isdigit(c)) {
    const char *e;
    int64_t v;
    const char *why;
    if (!parse_number_why(a->p, &e, &v, &why) || g_ascii_isalnum(*e) || *e == '_' || *e == '#') {
      const char *q = a->p;
      while (g_ascii_isalnum(*q) || *q == '_' || *q == '#' || *q == '@') q++;
      char *tok = g_strndup(a->p, (size_t)(q - a->p));
      a->cut = q;
      ar_error(a, why, tok);
      g_free(tok);
      return 0;
    }
    a->p = e;
    return v;
  }
  if (c == '_' || g_ascii_isalpha(c)) {
    LVal lv;
    if (!read_lval(a, &lv)) return 0;
    ws(a);
    int64_t r;
    if ((a->p[0] == '+' && a->p[1] == '+') || (a->p[0] == '-' && a->p[1] == '-')) {
      bool inc = a->p[0] == '+';
      a->p += 2;
      r = var_num(a, lval_get(a, &lv));
      lval_set(a, &lv, inc ? r + 1 : r - 1);
    } else {
      r = a->noeval ? 0 : var_num(a, lval_get(a, &lv));
    }
    g_free(lv.sub);
    return r;
  }
  ar_error(a, "syntax error: operand expected", a->tok);
  return 0;
}

/* ++NAME or --NAME at p: bash takes the doubled sign as one operator
 * only when a name follows (`++3` and `++-n` are two signs). */
static bool inc_dec_name(const char *p)
{
  if ((p[0] != '+' && p[0] != '-') || p[1] != p[0]) return false;
  p += 2;
  while (*p == ' ' || *p == '\t' || *p == '\n') p++;
  return *p == '_' || g_ascii_isalpha(*p);
}

static int64_t unary(Ar *a)
{
  ws(a);
  const char *p = a->p;
  if (inc_dec_name(p)) {
    bool inc = p[0] == '+';
    a->p += 2;
    ws(a);
    LVal lv;
    if (!read_lval(a, &lv)) {
      ar_error(a, "syntax error: operand expected", a->tok);
      return 0;
    }
    int64_t v = var_num(a, lval_get(a, &lv)) + (inc ? 1 : -1);
    lval_set(a, &lv, v);
    g_free(lv.sub);
    ws(a);
    if ((a->p[0] == '+' || a->p[0] == '-') && a->p[1] == a->p[0]) {
      /* bash reads a doubled sign after a name as its postfix operator,
       * and --n is no variable to apply it to */
      ar_error(a,
               a->p[0] == '+' ? "++: assignment requires lvalue" : "--: assignment requires lvalue",
               a->p);
      return 0;
    }
    return v;
  }
  switch (p[0]) {
  case '!': a->p++; return !nested(a, unary);
  case '~': a->p++; return ~nested(a, unary);
  case '-': a->p++; return (int64_t)(0 - (uint64_t)nested(a, unary));
  case '+': a->p++; return nested(a, unary);
  default: return primary(a);
  }
}

/* b**e on 64 bits (wrapping), by squaring: `2**9223372036854775807`
 * must end. */
static int64_t ipow(int64_t b, int64_t e)
{
  uint64_t r = 1, x = (uint64_t)b;
  for (uint64_t n = (uint64_t)e; n; n >>= 1) {
    if (n & 1) r *= x;
    x *= x;
  }
  return (int64_t)r;
}

static int64_t power(Ar *a)
{
  int64_t b = unary(a);
  ws(a);
  if (a->p[0] == '*' && a->p[1] == '*' && a->p[2] != '=') {
    a->p += 2;
    int64_t e = power(a);
    if (e < 0) {
      if (!a->noeval) ar_error(a, "exponent less than 0", a->tok);
      return 0;
    }
    return ipow(b, e);
  }
  return b;
}

static int64_t mul(Ar *a)
{
  int64_t l = power(a);
  for (;;) {
    ws(a);
    char c = a->p[0];
    if ((c == '*' || c == '/' || c == '%') && a->p[1] != '=' && !(c == '*' && a->p[1] == '*')) {
      a->p++;
      const char *tok = a->p;
      int64_t r = power(a);
      if (c == '*')
        l = (int64_t)((uint64_t)l * (uint64_t)r);
      else if (r == 0) {
        if (!a->noeval) { ar_error(a, "division by 0", tok); }
        l = 0;
      } else if (l == INT64_MIN && r == -1)
        l = c == '/' ? l : 0;
      else
        l = c == '/' ? l / r : l % r;
    } else {
      return l;
    }
  }
}

static int64_t add(Ar *a)
{
  int64_t l = mul(a);
  for (;;) {
    ws(a);
    char c = a->p[0];
    /* `3+++n` is 3 + ++n: a doubled sign starts ++NAME only with the
     * name right after it (bash's reading), else it is two signs */
    if ((c == '+' || c == '-') && a->p[1] != '=' && (a->p[1] != c || !inc_dec_name(a->p))) {
      a->p++;
      int64_t r = mul(a);
      l = c == '+' ? (int64_t)((uint64_t)l + (uint64_t)r) : (int64_t)((uint64_t)l - (uint64_t)r);
    } else {
      return l;
    }
  }
}

static int64_t shift(Ar *a)
{
  int64_t l = add(a);
  for (;;) {
    ws(a);
    if ((a->p[0] == '<' || a->p[0] == '>') && a->p[1] == a->p[0] && a->p[2] != '=') {
      bool left = a->p[0] == '<';
      a->p += 2;
      int64_t r = add(a);
      l = left ? (int64_t)((uint64_t)l << (r & 63)) : l >> (r & 63);
    } else {
      return l;
    }
  }
}

static int64_t rel(Ar *a)
{
  int64_t l = shift(a);
  for (;;) {
    ws(a);
    const char *p = a->p;
    if (p[0] == '<' && p[1] != '<') {
      bool eq = p[1] == '=';
      a->p += eq ? 2 : 1;
      int64_t r = shift(a);
      l = eq ? l <= r : l < r;
    } else if (p[0] == '>' && p[1] != '>') {
      bool eq = p[1] == '=';
      a->p += eq ? 2 : 1;
      int64_t r = shift(a);
      l = eq ? l >= r : l > r;
    } else {
      return l;
    }
  }
}

static int64_t equality(Ar *a)
{
  int64_t l = rel(a);
  for (;;) {
    ws(a);
    if ((a->p[0] == '=' || a->p[0] == '!') && a->p[1] == '=') {
      bool eq = a->p[0] == '=';
      a->p += 2;
      int64_t r = rel(a);
      l = eq ? l == r : l != r;
    } else {
      return l;
    }
  }
}

/* The levels of the single-character bitwise operators, loosest first. */
static const char bitwise_ops[] = "|^&";

/* One level of &, ^ or |, left to right.  Stops at the op doubled (&&, ||: the logical levels
 * above) and at the op's assignment. */
static int64_t bitwise(Ar *a, int level)
{
  char op = bitwise_ops[level];
  int64_t l = bitwise_ops[level + 1] ? bitwise(a, level + 1) : equality(a);
  for (;;) {
    ws(a);
    if (a->p[0] != op || (op != '^' && a->p[1] == op) || a->p[1] == '=') return l;
    a->p++;
    int64_t r = bitwise_ops[level + 1] ? bitwise(a, level + 1) : equality(a);
    l = op == '&' ? l & r : op == '^' ? l ^ r : l | r;
  }
}

/* || (and_level false) or && (true): the right side is parsed but not evaluated once the
 * left decides. */
static int64_t logical(Ar *a, bool and_level)
{
  char op = and_level ? '&' : '|';
  int64_t l = and_level ? bitwise(a, 0) : logical(a, true);
  for (;;) {
    ws(a);
    if (a->p[0] != op || a->p[1] != op) return l;
    a->p += 2;
    bool decided = and_level ? !l : l != 0;
    if (decided) a->noeval++;
    int64_t r = and_level ? bitwise(a, 0) : logical(a, true);
    if (decided) a->noeval--;
    l = and_level ? l && r : l || r;
  }
}

static int64_t cond(Ar *a)
{
  int64_t c = logical(a, false);
  ws(a);
  if (*a->p != '?') return c;
  a->p++;
  ws(a);
  if (*a->p == ':' || !*a->p) {
    ar_error(a, "expression expected", a->tok);
    return 0;
  }
  if (!c) a->noeval++;
  int64_t t = nested(a, assign);
  if (!c) a->noeval--;
  ws(a);
  if (*a->p != ':') {
    ar_error(a, "`:' expected for conditional expression", a->tok);
    return 0;
  }
  a->p++;
  ws(a);
  if (!*a->p) {
    ar_error(a, "expression expected", a->tok);
    return 0;
  }
  if (c) a->noeval++;
  int64_t f = nested(a, cond);
  if (c) a->noeval--;
  return c ? t : f;
}

static int64_t assign(Ar *a)
{
  ws(a);
  const char *save = a->p;
  LVal lv;
  if ((*a->p == '_' || g_ascii_isalpha(*a->p)) && read_lval(a, &lv)) {
    ws(a);
    const char *p = a->p;
    char op = 0;
    int oplen = 0;
    if (p[0] == '=' && p[1] != '=') {
      op = '=';
      oplen = 1;
    } else if ((p[0] == '<' || p[0] == '>') && p[1] == p[0] && p[2] == '=') {
      op = p[0];
      oplen = 3;
    } else if (p[0] == '*' && p[1] == '*' && p[2] == '=') {
      op = 'P';
      oplen = 3;
    } else if (strchr("+-*/%&^|", p[0]) && p[0] && p[1] == '=') {
      op = p[0];
      oplen = 2;
    }
    if (op) {
      a->p += oplen;
      /* the name's value is read before the right side runs, as bash:
       * i=1; (( i += ++i )) is 3 */
      int64_t l = op == '=' ? 0 : var_num(a, lval_get(a, &lv));
      int64_t r = nested(a, assign);
      int64_t v = r;
      switch (op) {
      case '+': v = (int64_t)((uint64_t)l + (uint64_t)r); break;
      case '-': v = (int64_t)((uint64_t)l - (uint64_t)r); break;
      case '*': v = (int64_t)((uint64_t)l * (uint64_t)r); break;
      case '/':
      case '%':
        if (r == 0) {
          if (!a->noeval) ar_error(a, "division by 0", "0");
          v = 0;
        } else if (l == INT64_MIN && r == -1)
          v = op == '/' ? l : 0;
        else
          v = op == '/' ? l / r : l % r;
        break;
      case '&': v = l & r; break;
      case '^': v = l ^ r; break;
      case '|': v = l | r; break;
      case '<': v = (int64_t)((uint64_t)l << (r & 63)); break;
      case '>': v = l >> (r & 63); break;
      case 'P': v = r < 0 ? 1 : ipow(l, r); break;
      default: break;
      }
      lval_set(a, &lv, v);
      g_free(lv.sub);
      return v;
    }
    g_free(lv.sub);
  }
  a->p = save;
  int64_t v = cond(a);
  ws(a);
  const char *p = a->p;
  if ((p[0] == '=' && p[1] != '=') || (strchr("+-*/%&^|", p[0]) && p[0] && p[1] == '=') ||
      ((p[0] == '<' || p[0] == '>') && p[1] == p[0] && p[2] == '=') ||
      (p[0] == '*' && p[1] == '*' && p[2] == '='))
    ar_error(a, "attempted assignment to non-variable", p);
  return v;
}

static int64_t comma(Ar *a)
{
  int64_t v = assign(a);
  for (;;) {
    ws(a);
    if (*a->p != ',') return v;
    a->p++;
    v = assign(a);
  }
}

/* ---- the short way: `i`, `5`, `i+1`, `n < 10`, `x*y` ---------------------------- */

/* One operand the short way can take: a NAME not followed by `[`, or a
 * decimal number the full parser would read the same (no base, octal or
 * hex prefix; not followed by a letter, `_` or `#`).  Returns the end. */
static const char *simple_operand(const char *p)
{
  if (*p == '_' || g_ascii_isalpha(*p)) {
    while (*p == '_' || g_ascii_isalnum(*p)) p++;
    return *p == '[' ? NULL : p;
  }
  if (!g_ascii_isdigit(*p)) return NULL;
  if (p[0] == '0' && (g_ascii_isalnum(p[1]) || p[1] == '_' || p[1] == '#')) return NULL;
  while (g_ascii_isdigit(*p)) p++;
  if (g_ascii_isalpha(*p) || *p == '_' || *p == '#') return NULL;
  return p;
}

static const char *skip_ws(const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\n') p++;
  return p;
}

/* The value of an operand simple_operand accepted, as primary() gives it. */
static int64_t simple_value(Ar *a, const char *s, const char *e)
{
  if (g_ascii_isdigit(*s)) {
    uint64_t v = 0;
    for (; s < e; s++) v = v * 10 + (uint64_t)(*s - '0');
    return (int64_t)v;
  }
  LVal lv;
  size_t n = (size_t)(e - s);
  if (n >= sizeof lv.name) return 0;
  memcpy(lv.name, s, n);
  lv.name[n] = 0;
  lv.sub = NULL;
  return var_num(a, lval_get(a, &lv));
}

/* Evaluates expr if it is one operand or two joined by one of + - * < >
 * <= >= == != (what loop counters and conditions are made of), as the
 * full parser would, without descending its precedence levels.  False,
 * having evaluated nothing, when expr is anything else. */
static bool arith_short(Ar *a, int64_t *out)
{
  const char *s1 = skip_ws(a->expr);
  const char *e1 = simple_operand(s1);
  if (!e1) return false;
  const char *p = skip_ws(e1);
  if (!*p) {
    *out = simple_value(a, s1, e1);
    a->p = p;
    return true;
  }
  char op = p[0], op2 = 0;
  switch (op) {
  case '+':
  case '-':
  case '*':
    if (p[1] == op || p[1] == '=') return false;
    p++;
    break;
  case '<':
  case '>':
    if (p[1] == op) return false;
    if (p[1] == '=') op2 = *++p;
    p++;
    break;
  case '=':
  case '!':
    if (p[1] != '=') return false;
    op2 = '=';
    p += 2;
    break;
  default: return false;
  }
  const char *s2 = skip_ws(p);
  const char *e2 = simple_operand(s2);
  if (!e2) return false;
  const char *end = skip_ws(e2);
  if (*end) return false;
  int64_t l = simple_value(a, s1, e1);
  if (a->err) return true;
  int64_t r = simple_value(a, s2, e2);
  a->p = end;
  switch (op) {
  case '+': *out = (int64_t)((uint64_t)l + (uint64_t)r); break;
  case '-': *out = (int64_t)((uint64_t)l - (uint64_t)r); break;
  case '*': *out = (int64_t)((uint64_t)l * (uint64_t)r); break;
  case '<': *out = op2 ? l <= r : l < r; break;
  case '>': *out = op2 ? l >= r : l > r; break;
  case '=': *out = l == r; break;
  default: *out = l != r; break;
  }
  return true;
}

bool box_arith(Shell *sh, const char *expr, int64_t *out)
{
  Ar a = { sh, expr, expr, 0, false, 0, 0, NULL, NULL };
  int64_t v;
  if (arith_short(&a, &v)) {
    if (a.err) return false;
    *out = v;
    return true;
  }
  ws(&a);
  if (!*a.p) {
    *out = 0;
    return true;
  }
  v = comma(&a);
  ws(&a);
  if (!a.err && *a.p) ar_error(&a, leftover_error(a.p), a.p);
  if (a.err) return false;
  *out = v;
  return true;
}
