/* bc.c — POSIX bc with GNU's extensions agents use: -l (s c a l e j and
 * scale=20), -q, files then standard input; arbitrary precision decimals
 * with POSIX's scale rules, ibase 2..36, obase 2 up (above 16 as GNU
 * prints it), arrays, functions with auto and array parameters (dynamic
 * scope), if/else, while, for, break, continue, return, quit, halt,
 * print, strings, ++/--, the op= assignments, && || !, last and ".",
 * length(), scale(), sqrt(); # and slash-star comments.
 *
 * A line (a statement list ended by a newline) is parsed whole, then run,
 * as GNU runs it: a syntax error drops the line, a runtime error the rest
 * of it; `quit` ends bc when it is read.  Output lines are cut at 70
 * columns with a backslash.  GNU's runtime errors name the address of the
 * failing byte code, which this interpreter has not: its messages say
 * adr=0. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

/* ---- numbers: little-endian decimal digits, value = sum d[i] * 10^(i - scale) -- */

typedef struct {
  bool neg;
  int scale;
  int n; /* digits in d, n >= scale */
  unsigned char *d;
} Num;

static Num num_zero(int scale)
{
  Num r = { false, scale, scale, g_malloc0((size_t)MAX(scale, 1)) };
  return r;
}

static void num_free(Num *a)
{
  g_free(a->d);
  a->d = NULL;
}

static Num num_copy(const Num *a)
{
  Num r = *a;
  r.d = g_memdup2(a->d, (size_t)MAX(a->n, 1));
  return r;
}

static bool num_is_zero(const Num *a)
{
  for (int i = 0; i < a->n; i++)
    if (a->d[i]) return false;
  return true;
}

/* Drops high zeros of the integer part; zero is never negative. */
static void num_norm(Num *a)
{
  while (a->n > a->scale && a->d[a->n - 1] == 0) a->n--;
  if (num_is_zero(a)) a->neg = false;
}

static Num num_from_long(long v)
{
  Num r = num_zero(0);
  unsigned long u = v < 0 ? -(unsigned long)v : (unsigned long)v;
  g_free(r.d);
  r.d = g_malloc0(24);
  while (u) {
    r.d[r.n++] = (unsigned char)(u % 10);
    u /= 10;
  }
  r.neg = v < 0;
  return r;
}

/* The digit of 10^k in a (0 outside). */
static int dig(const Num *a, int k)
{
  int i = k + a->scale;
  return i >= 0 && i < a->n ? a->d[i] : 0;
}

/* a with exactly `scale` fraction digits (truncating, or adding zeros). */
static Num num_rescale(const Num *a, int scale)
{
  int ip = a->n - a->scale;
  Num r = { a->neg, scale, ip + scale, g_malloc0((size_t)MAX(ip + scale, 1)) };
  for (int i = 0; i < r.n; i++) r.d[i] = (unsigned char)dig(a, i - scale);
  num_norm(&r);
  return r;
}

static int cmp_abs(const Num *a, const Num *b)
{
  int hi = MAX(a->n - a->scale, b->n - b->scale), lo = -MAX(a->scale, b->scale);
  for (int k = hi - 1; k >= lo; k--) {
    int x = dig(a, k), y = dig(b, k);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

static int num_cmp(const Num *a, const Num *b)
{
  bool za = num_is_zero(a), zb = num_is_zero(b);
  bool na = a->neg && !za, nb = b->neg && !zb;
  if (na != nb) return na ? -1 : 1;
  int c = cmp_abs(a, b);
  return na ? -c : c;
}

/* |a| + |b| or |a| - |b| (|a| >= |b|), at the larger scale. */
static Num add_abs(const Num *a, const Num *b, bool sub)
{
  int scale = MAX(a->scale, b->scale);
  int hi = MAX(a->n - a->scale, b->n - b->scale) + 1;
  Num r = { false, scale, hi + scale, g_malloc0((size_t)(hi + scale)) };
  int carry = 0;
  for (int i = 0; i < r.n; i++) {
    int k = i - scale;
    int v = sub ? dig(a, k) - dig(b, k) - carry : dig(a, k) + dig(b, k) + carry;
    carry = sub ? v < 0 : v >= 10;
    r.d[i] = (unsigned char)(sub ? (v + 10) % 10 : v % 10);
  }
  return r;
}

static Num num_add(const Num *a, const Num *b, bool subtract)
{
  bool bneg = subtract ? !b->neg : b->neg;
  Num r;
  if (a->neg == bneg) {
    r = add_abs(a, b, false);
    r.neg = a->neg;
  } else if (cmp_abs(a, b) >= 0) {
    r = add_abs(a, b, true);
    r.neg = a->neg;
  } else {
    r = add_abs(b, a, true);
    r.neg = bneg;
  }
  num_norm(&r);
  return r;
}

/* The exact product, then cut to `scale` digits. */
static Num num_mul(const Num *a, const Num *b, int scale)
{
  int n = a->n + b->n;
  unsigned *acc = g_malloc0(sizeof(unsigned) * (size_t)(n + 1));
  for (int i = 0; i < a->n; i++) {
    if (!a->d[i]) continue;
    for (int j = 0; j < b->n; j++) acc[i + j] += (unsigned)a->d[i] * b->d[j];
    if ((i & 31) == 31)
      for (int k = 0; k < n; k++) {
        acc[k + 1] += acc[k] / 10;
        acc[k] %= 10;
      }
  }
  Num full = { a->neg != b->neg, a->scale + b->scale, n, g_malloc0((size_t)MAX(n, 1)) };
  unsigned carry = 0;
  for (int k = 0; k < n; k++) {
    unsigned v = acc[k] + carry;
    full.d[k] = (unsigned char)(v % 10);
    carry = v / 10;
  }
  g_free(acc);
  Num r = num_rescale(&full, MIN(scale, full.scale));
  num_free(&full);
  return r;
}

/* The integer digits of |a| * 10^shift, most significant first. */
static GByteArray *int_digits(const Num *a, int shift)
{
  GByteArray *v = g_byte_array_new();
  for (int k = a->n - a->scale - 1; k >= -shift; k--) {
    unsigned char d = (unsigned char)dig(a, k);
    if (v->len || d) g_byte_array_append(v, &d, 1);
  }
  return v;
}

/* rem (most significant first, len digits) >= b? */
static int cmp_digits(const unsigned char *r, int rn, const unsigned char *b, int bn)
{
  while (rn > 0 && *r == 0) r++, rn--;
  if (rn != bn) return rn < bn ? -1 : 1;
  return memcmp(r, b, (size_t)rn);
}

/* a / b truncated to `scale` digits; false when b is zero. */
static bool num_div(const Num *a, const Num *b, int scale, Num *out)
{
  if (num_is_zero(b)) return false;
  /* q = floor(|a| * 10^(scale + sb) / (|b| * 10^sb)) */
  GByteArray *x = int_digits(a, scale + b->scale), *y = int_digits(b, b->scale);
  int yn = (int)y->len;
  unsigned char *rem = g_malloc0((size_t)yn + 2);
  int rn = 0;
  GByteArray *q = g_byte_array_new();
  for (guint i = 0; i < x->len; i++) {
    if (rn == 0 && x->data[i] == 0 && q->len == 0) {
      unsigned char z = 0;
      g_byte_array_append(q, &z, 1);
      continue;
    }
    rem[rn++] = x->data[i];
    /* keep rem without leading zeros so it fits yn + 1 digits */
    int lead = 0;
    while (lead < rn - 1 && rem[lead] == 0) lead++;
    if (lead) {
      memmove(rem, rem + lead, (size_t)(rn - lead));
      rn -= lead;
    }
    unsigned char qd = 0;
    while (cmp_digits(rem, rn, y->data, yn) >= 0) {
      int borrow = 0;
      for (int k = 0; k < rn; k++) {
        int ri = rn - 1 - k, yi = yn - 1 - k;
        int v = rem[ri] - (yi >= 0 ? y->data[yi] : 0) - borrow;
        borrow = v < 0;
        rem[ri] = (unsigned char)(v < 0 ? v + 10 : v);
      }
      qd++;
    }
    g_byte_array_append(q, &qd, 1);
  }
  int qn = (int)q->len;
  Num r = { a->neg != b->neg, scale, MAX(qn, scale), g_malloc0((size_t)MAX(MAX(qn, scale), 1)) };
  for (int k = 0; k < qn; k++) r.d[k] = q->data[qn - 1 - k];
  num_norm(&r);
  g_byte_array_free(x, TRUE);
  g_byte_array_free(y, TRUE);
  g_byte_array_free(q, TRUE);
  g_free(rem);
  *out = r;
  return true;
}

/* The integer part as a long; false when it does not fit. */
static bool num_to_long(const Num *a, long *out)
{
  long v = 0;
  for (int i = a->n - 1; i >= a->scale; i--) {
    if (v > (LONG_MAX - 9) / 10) return false;
    v = v * 10 + a->d[i];
  }
  *out = a->neg ? -v : v;
  return true;
}

/* length(): significant digits (the fraction's all count). */
static int num_length(const Num *a)
{
  int n = a->n;
  while (n > a->scale && a->d[n - 1] == 0) n--;
  if (n == a->scale) {
    /* below one: leading zeros of the fraction do not count */
    int k = n;
    while (k > 0 && a->d[k - 1] == 0) k--;
    return a->scale ? MAX(a->scale, 1) : 1;
  }
  return n;
}

/* ---- the program ----------------------------------------------------------------- */

typedef enum {
  T_EOF,
  T_NL,
  T_NUM,
  T_STR,
  T_NAME,
  T_OP, /* punctuation and operators, text in s */
  T_KEY,
} TokKind;

typedef struct {
  TokKind k;
  char *s;
  int line;
} Tok;

typedef enum {
  E_NUM,
  E_VAR,
  E_ELEM,
  E_SPECIAL, /* scale ibase obase last */
  E_BIN,
  E_NEG,
  E_NOT,
  E_AND,
  E_OR,
  E_REL,
  E_ASSIGN,
  E_INC, /* op: 'p' pre ++, 'q' pre --, 'P' post ++, 'Q' post -- */
  E_CALL,
  E_LENGTH,
  E_SQRT,
  E_SCALE,
  S_EXPR,
  S_STR,
  S_PRINT,
  S_BLOCK,
  S_IF,
  S_WHILE,
  S_FOR,
  S_BREAK,
  S_CONTINUE,
  S_RETURN,
  S_HALT,
  S_NOP,
} Kind;

typedef struct BcNode BcNode;
struct BcNode {
  Kind k;
  char op[3];
  char *name;
  Num num;
  BcNode *a, *b, *c, *d;
  GPtrArray *list; /* BcNode*: args, statements, print items */
  bool array_arg;  /* E_VAR as an argument `name[]` */
  bool paren;      /* an assignment in parentheses prints its value */
};

typedef struct {
  char *name;
  GPtrArray *params; /* char*, "name[]" for an array */
  GPtrArray *autos;
  BcNode *body;
  bool defined;
} Func;

typedef struct {
  GArray *stack; /* Num, the innermost last */
} Var;

typedef struct {
  GPtrArray *stack; /* GHashTable long -> Num*, the innermost last */
} Arr;

typedef enum { FL_OK, FL_BREAK, FL_CONTINUE, FL_RETURN, FL_ERROR, FL_HALT } Flow;

typedef struct {
  BoxCmd *c;
  Tok *t;
  int nt, pos;
  const char *src; /* "(standard_in)" or the file's name */
  bool syntax_error;
  bool reported; /* the syntax error's message is out already */
  int err_pos;   /* the token it was found at */
  int in_func, in_loop;
  GHashTable *vars, *arrs, *funcs;
  long scale, ibase, obase;
  Num last, ret;
  int col;
  bool quit;
  const char *cur_func;
  GPtrArray *all_nodes;
  GPtrArray *texts; /* the tokens' strings, freed at the end */
} Bc;

/* ---- output ---------------------------------------------------------------------- */

static void out_ch(Bc *bc, char ch)
{
  if (ch == '\n') {
    bc->col = 0;
  } else {
    if (bc->col == 68) {
      box_out_puts(bc->c->out, "\\\n");
      bc->col = 0;
    }
    bc->col++;
  }
  box_out_putc(bc->c->out, ch);
}

static void out_str(Bc *bc, const char *s)
{
  for (; *s; s++) out_ch(bc, *s);
}

static void print_num(Bc *bc, const Num *a)
{
  if (num_is_zero(a)) {
    out_ch(bc, '0');
    return;
  }
  if (a->neg) out_ch(bc, '-');
  if (bc->obase == 10) {
    int hi = a->n - 1;
    while (hi >= a->scale && a->d[hi] == 0) hi--;
    for (int i = hi; i >= a->scale; i--) out_ch(bc, (char)('0' + a->d[i]));
    if (a->scale) out_ch(bc, '.');
    for (int i = a->scale - 1; i >= 0; i--) out_ch(bc, (char)('0' + a->d[i]));
    return;
  }
  /* other bases: the integer part by division, the fraction by
   * multiplication until a digit's place is finer than 10^-scale */
  Num ob = num_from_long(bc->obase);
  Num ip = num_rescale(a, 0), fr;
  ip.neg = false;
  Num absa = num_copy(a);
  absa.neg = false;
  fr = num_add(&absa, &ip, true);
  num_free(&absa);
  GArray *digits = g_array_new(FALSE, FALSE, sizeof(long));
  while (!num_is_zero(&ip)) {
    Num q;
    num_div(&ip, &ob, 0, &q);
    Num back = num_mul(&q, &ob, 0);
    Num r = num_add(&ip, &back, true);
    long v = 0;
    num_to_long(&r, &v);
    g_array_append_val(digits, v);
    num_free(&back);
    num_free(&r);
    num_free(&ip);
    ip = q;
  }
  int width = 1;
  for (long m = bc->obase - 1; m >= 10; m /= 10) width++;
  bool big = bc->obase > 16;
  for (int i = (int)digits->len - 1; i >= 0; i--) {
    long v = g_array_index(digits, long, i);
    if (big) {
      g_autofree char *s = g_strdup_printf(" %0*ld", width, v);
      out_str(bc, s);
    } else {
      out_ch(bc, "0123456789ABCDEF"[v]);
    }
  }
  if (a->scale) {
    out_ch(bc, '.');
    Num place = num_from_long(1);
    Num limit = num_zero(0);
    num_free(&limit);
    while (true) {
      /* digits until obase^k reaches 10^scale */
      bool done = (int)(place.n - place.scale) > a->scale;
      if (done) break;
      Num f2 = num_mul(&fr, &ob, fr.scale);
      Num d = num_rescale(&f2, 0);
      long v = 0;
      num_to_long(&d, &v);
      Num f3 = num_add(&f2, &d, true);
      num_free(&f2);
      num_free(&d);
      num_free(&fr);
      fr = f3;
      if (big) {
        g_autofree char *s = g_strdup_printf(" %0*ld", width, v);
        out_str(bc, place.n == 1 && place.d[0] == 1 ? s + 1 : s);
      } else {
        out_ch(bc, "0123456789ABCDEF"[v]);
      }
      Num p2 = num_mul(&place, &ob, 0);
      num_free(&place);
      place = p2;
    }
    num_free(&place);
  }
  g_array_free(digits, TRUE);
  num_free(&ob);
  num_free(&ip);
  num_free(&fr);
}

static void runtime_error(Bc *bc, const char *msg)
{
  box_out_flush(bc->c->out);
  box_fdprintf(bc->c->err, "Runtime error (func=%s, adr=0): %s\n", bc->cur_func, msg);
}

static void runtime_warning(Bc *bc, const char *msg)
{
  box_out_flush(bc->c->out);
  box_fdprintf(bc->c->err, "Runtime warning (func=%s, adr=0): %s\n", bc->cur_func, msg);
}

/* ---- lexing ---------------------------------------------------------------------- */

static const char *const keywords[] = { "define", "auto",  "return",   "if",    "else",  "while",
                                        "for",    "break", "continue", "quit",  "halt",  "print",
                                        "length", "sqrt",  "scale",    "ibase", "obase", "last",
                                        "limits", "read",  "warranty", NULL };

static bool is_keyword(const char *s)
{
  for (int i = 0; keywords[i]; i++)
    if (strcmp(keywords[i], s) == 0) return true;
  return false;
}

static void add_tok(GArray *v, TokKind k, char *s, int line)
{
  Tok t = { k, s, line };
  g_array_append_val(v, t);
}

static Tok *lex(const char *p, size_t len, int *nt)
{
  GArray *v = g_array_new(FALSE, FALSE, sizeof(Tok));
  const char *e = p + len;
  int line = 1;
  while (p < e) {
    char ch = *p;
    if (ch == '\\' && p + 1 < e && p[1] == '\n') {
      p += 2;
      line++;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r') {
      p++;
      continue;
    }
    if (ch == '\n') {
      line++;
      add_tok(v, T_NL, NULL, line);
      p++;
      continue;
    }
    if (ch == '#') {
      while (p < e && *p != '\n') p++;
      continue;
    }
    if (ch == '/' && p + 1 < e && p[1] == '*') {
      const char *q = p + 2;
      while (q + 1 < e && !(q[0] == '*' && q[1] == '/')) line += *q++ == '\n';
      p = q + 1 < e ? q + 2 : e;
      continue;
    }
    if (ch == '"') {
      const char *q = p + 1;
      while (q < e && *q != '"') line += *q++ == '\n';
      add_tok(v, T_STR, g_strndup(p + 1, (size_t)(q - p - 1)), line);
      p = q < e ? q + 1 : e;
      continue;
    }
    if (g_ascii_isdigit(ch) || (ch >= 'A' && ch <= 'F') || ch == '.') {
      GString *s = g_string_new(NULL);
      bool dot = false;
      while (p < e) {
        if (*p == '\\' && p + 1 < e && p[1] == '\n') {
          p += 2;
          line++;
          continue;
        }
        if (g_ascii_isdigit(*p) || (*p >= 'A' && *p <= 'F'))
          g_string_append_c(s, *p++);
        else if (*p == '.' && !dot) {
          dot = true;
          g_string_append_c(s, *p++);
        } else
          break;
      }
      if (strcmp(s->str, ".") == 0) {
        add_tok(v, T_KEY, g_strdup("last"), line);
        g_string_free(s, TRUE);
      } else {
        add_tok(v, T_NUM, g_string_free(s, FALSE), line);
      }
      continue;
    }
    if (g_ascii_islower(ch)) {
      const char *q = p;
      while (q < e && (g_ascii_islower(*q) || g_ascii_isdigit(*q) || *q == '_')) q++;
      char *w = g_strndup(p, (size_t)(q - p));
      add_tok(v, is_keyword(w) ? T_KEY : T_NAME, w, line);
      p = q;
      continue;
    }
    static const char *const two[] = { "++", "--", "+=", "-=", "*=", "/=", "%=", "^=",
                                       "==", "!=", "<=", ">=", "&&", "||", NULL };
    bool done = false;
    for (int i = 0; two[i] && !done; i++)
      if (p + 1 < e && p[0] == two[i][0] && p[1] == two[i][1]) {
        add_tok(v, T_OP, g_strdup(two[i]), line);
        p += 2;
        done = true;
      }
    if (done) continue;
    add_tok(v, T_OP, g_strndup(p, 1), line);
    p++;
  }
  /* at the end of its input GNU's line count has started again */
  add_tok(v, T_EOF, NULL, 1);
  *nt = (int)v->len;
  return (Tok *)g_array_free(v, FALSE);
}

/* ---- parsing --------------------------------------------------------------------- */

static Tok *peek(Bc *bc)
{
  return &bc->t[bc->pos];
}

static bool is_op(Bc *bc, const char *s)
{
  Tok *t = peek(bc);
  return (t->k == T_OP || t->k == T_KEY) && strcmp(t->s, s) == 0;
}

static bool accept(Bc *bc, const char *s)
{
  if (!is_op(bc, s)) return false;
  bc->pos++;
  return true;
}

/* A syntax error at the current token (the first one counts). */
static void fail(Bc *bc)
{
  if (!bc->syntax_error) bc->err_pos = bc->pos;
  bc->syntax_error = true;
}

static bool expect(Bc *bc, const char *s)
{
  if (accept(bc, s)) return true;
  fail(bc);
  return false;
}

static BcNode *node(Bc *bc, Kind k)
{
  BcNode *n = g_new0(BcNode, 1);
  n->k = k;
  g_ptr_array_add(bc->all_nodes, n);
  return n;
}

static void skip_nl(Bc *bc)
{
  while (peek(bc)->k == T_NL) bc->pos++;
}

static BcNode *parse_expr(Bc *bc);

/* A node for the current token (a number or a string), past it. */
static BcNode *leaf(Bc *bc, Kind k)
{
  BcNode *n = node(bc, k);
  n->name = peek(bc)->s;
  bc->pos++;
  return n;
}

static bool is_lvalue(const BcNode *n)
{
  return n && (n->k == E_VAR || n->k == E_ELEM || n->k == E_SPECIAL);
}

/* What inner parses, then the closing bracket. */
static BcNode *enclosed(Bc *bc, BcNode *(*inner)(Bc *), const char *close)
{
  BcNode *n = inner(bc);
  expect(bc, close);
  return n;
}

static BcNode *parse_primary(Bc *bc)
{
  Tok *t = peek(bc);
  if (bc->syntax_error) return NULL;
  if (t->k == T_NUM) return leaf(bc, E_NUM);
  if (accept(bc, "(")) {
    BcNode *n = enclosed(bc, parse_expr, ")");
    if (n) n->paren = true;
    return n;
  }
  if (t->k == T_KEY) {
    const char *w = t->s;
    if (!strcmp(w, "scale") || !strcmp(w, "ibase") || !strcmp(w, "obase") || !strcmp(w, "last")) {
      bc->pos++;
      if (!strcmp(w, "scale") && is_op(bc, "(")) {
        bc->pos++;
        BcNode *n = node(bc, E_SCALE);
        n->a = enclosed(bc, parse_expr, ")");
        return n;
      }
      BcNode *n = node(bc, E_SPECIAL);
      n->name = t->s;
      return n;
    }
    if (!strcmp(w, "length") || !strcmp(w, "sqrt")) {
      bc->pos++;
      BcNode *n = node(bc, w[0] == 'l' ? E_LENGTH : E_SQRT);
      expect(bc, "(");
      n->a = enclosed(bc, parse_expr, ")");
      return n;
    }
    fail(bc);
    return NULL;
  }
  if (t->k == T_NAME) {
    bc->pos++;
    if (accept(bc, "(")) {
      BcNode *n = node(bc, E_CALL);
      n->name = t->s;
      n->list = g_ptr_array_new();
      if (!accept(bc, ")")) {
        do {
          Tok *a = peek(bc);
          if (a->k == T_NAME && bc->t[bc->pos + 1].k == T_OP &&
              !strcmp(bc->t[bc->pos + 1].s, "[") && bc->t[bc->pos + 2].k == T_OP &&
              !strcmp(bc->t[bc->pos + 2].s, "]")) {
            BcNode *v = node(bc, E_VAR);
            v->name = a->s;
            v->array_arg = true;
            bc->pos += 3;
            g_ptr_array_add(n->list, v);
          } else {
            g_ptr_array_add(n->list, parse_expr(bc));
          }
        } while (!bc->syntax_error && accept(bc, ","));
        expect(bc, ")");
      }
      return n;
    }
    if (accept(bc, "[")) {
      BcNode *n = node(bc, E_ELEM);
      n->name = t->s;
      n->a = enclosed(bc, parse_expr, "]");
      return n;
    }
    BcNode *n = node(bc, E_VAR);
    n->name = t->s;
    return n;
  }
  fail(bc);
  return NULL;
}

static BcNode *parse_postfix(Bc *bc)
{
  if (is_op(bc, "++") || is_op(bc, "--")) {
    bool inc = peek(bc)->s[0] == '+';
    bc->pos++;
    BcNode *x = parse_primary(bc);
    if (!is_lvalue(x)) {
      fail(bc);
      return NULL;
    }
    BcNode *n = node(bc, E_INC);
    n->op[0] = inc ? 'p' : 'q';
    n->a = x;
    return n;
  }
  BcNode *x = parse_primary(bc);
  if (is_lvalue(x) && (is_op(bc, "++") || is_op(bc, "--"))) {
    BcNode *n = node(bc, E_INC);
    n->op[0] = peek(bc)->s[0] == '+' ? 'P' : 'Q';
    bc->pos++;
    n->a = x;
    return n;
  }
  return x;
}

/* A prefix operator op (k) applied to what self parses, or else next. */
static BcNode *prefixed(Bc *bc, const char *op, Kind k, BcNode *(*self)(Bc *),
                        BcNode *(*next)(Bc *))
{
  if (!accept(bc, op)) return next(bc);
  BcNode *n = node(bc, k);
  n->a = self(bc);
  return n;
}

static BcNode *bin(Bc *bc, Kind k, const char *op, BcNode *a, BcNode *b)
{
  BcNode *n = node(bc, k);
  g_strlcpy(n->op, op, sizeof n->op);
  n->a = a;
  n->b = b;
  return n;
}

/* Operands from next joined left to right by any of ops (k). */
static BcNode *left_assoc(Bc *bc, const char *const *ops, Kind k, BcNode *(*next)(Bc *))
{
  BcNode *x = next(bc);
  while (!bc->syntax_error) {
    int i = 0;
    while (ops[i] && !is_op(bc, ops[i])) i++;
    if (!ops[i]) break;
    bc->pos++;
    x = bin(bc, k, ops[i], x, next(bc));
  }
  return x;
}

static BcNode *parse_unary(Bc *bc)
{
  return prefixed(bc, "-", E_NEG, parse_unary, parse_postfix);
}

static BcNode *parse_pow(Bc *bc)
{
  BcNode *x = parse_unary(bc);
  if (accept(bc, "^")) return bin(bc, E_BIN, "^", x, parse_pow(bc));
  return x;
}

static BcNode *parse_mul(Bc *bc)
{
  static const char *const ops[] = { "*", "/", "%", NULL };
  return left_assoc(bc, ops, E_BIN, parse_pow);
}

static BcNode *parse_add(Bc *bc)
{
  static const char *const ops[] = { "+", "-", NULL };
  return left_assoc(bc, ops, E_BIN, parse_mul);
}

/* Assignment binds tighter than comparison in bc: a = 1 < 2 is (a = 1) < 2. */
static BcNode *parse_assign(Bc *bc)
{
  BcNode *x = parse_add(bc);
  static const char *const ops[] = { "=", "+=", "-=", "*=", "/=", "%=", "^=", NULL };
  for (int i = 0; ops[i]; i++)
    if (is_op(bc, ops[i])) {
      if (!is_lvalue(x)) {
        fail(bc);
        return NULL;
      }
      bc->pos++;
      return bin(bc, E_ASSIGN, ops[i], x, parse_assign(bc));
    }
  return x;
}

static BcNode *parse_rel(Bc *bc)
{
  static const char *const ops[] = { "==", "!=", "<=", ">=", "<", ">", NULL };
  return left_assoc(bc, ops, E_REL, parse_assign);
}

static BcNode *parse_not(Bc *bc)
{
  return prefixed(bc, "!", E_NOT, parse_not, parse_rel);
}

static BcNode *parse_and(Bc *bc)
{
  static const char *const ops[] = { "&&", NULL };
  return left_assoc(bc, ops, E_AND, parse_not);
}

static BcNode *parse_expr(Bc *bc)
{
  static const char *const ops[] = { "||", NULL };
  BcNode *x = left_assoc(bc, ops, E_OR, parse_and);
  if (!x) fail(bc);
  return x;
}

static BcNode *parse_stmt(Bc *bc);

/* Statements separated by ';' and newlines up to '}'. */
static BcNode *parse_block_body(Bc *bc)
{
  BcNode *n = node(bc, S_BLOCK);
  n->list = g_ptr_array_new();
  for (;;) {
    while (peek(bc)->k == T_NL || is_op(bc, ";")) bc->pos++;
    if (is_op(bc, "}") || peek(bc)->k == T_EOF || bc->syntax_error) break;
    g_ptr_array_add(n->list, parse_stmt(bc));
    if (bc->syntax_error) break;
    if (!(peek(bc)->k == T_NL || is_op(bc, ";") || is_op(bc, "}"))) {
      fail(bc);
      break;
    }
  }
  return n;
}

static BcNode *parse_stmt(Bc *bc)
{
  Tok *t = peek(bc);
  if (bc->syntax_error) return NULL;
  if (t->k == T_STR) return leaf(bc, S_STR);
  if (accept(bc, "{")) return enclosed(bc, parse_block_body, "}");
  if (t->k == T_KEY) {
    const char *w = t->s;
    if (!strcmp(w, "quit")) {
      bc->quit = true;
      bc->pos++;
      return node(bc, S_NOP);
    }
    if (!strcmp(w, "if") || !strcmp(w, "while")) {
      bc->pos++;
      BcNode *n = node(bc, w[0] == 'i' ? S_IF : S_WHILE);
      expect(bc, "(");
      n->a = enclosed(bc, parse_expr, ")");
      skip_nl(bc);
      if (n->k == S_WHILE) bc->in_loop++;
      n->b = parse_stmt(bc);
      if (n->k == S_WHILE) bc->in_loop--;
      if (n->k == S_IF && accept(bc, "else")) {
        skip_nl(bc);
        n->c = parse_stmt(bc);
      }
      return n;
    }
    if (!strcmp(w, "for")) {
      bc->pos++;
      BcNode *n = node(bc, S_FOR);
      expect(bc, "(");
      if (!is_op(bc, ";")) n->a = parse_expr(bc);
      expect(bc, ";");
      if (!is_op(bc, ";")) n->b = parse_expr(bc);
      expect(bc, ";");
      if (!is_op(bc, ")")) n->c = parse_expr(bc);
      expect(bc, ")");
      skip_nl(bc);
      bc->in_loop++;
      n->d = parse_stmt(bc);
      bc->in_loop--;
      return n;
    }
    if (!strcmp(w, "break") || !strcmp(w, "continue")) {
      bc->pos++;
      if (!bc->in_loop) {
        box_out_flush(bc->c->out);
        box_fdprintf(bc->c->err, "%s %d: %s outside a for/while\n", bc->src, t->line,
                     w[0] == 'b' ? "Break" : "Continue");
        bc->reported = true;
        fail(bc);
        return NULL;
      }
      return node(bc, w[0] == 'b' ? S_BREAK : S_CONTINUE);
    }
    if (!strcmp(w, "halt")) {
      bc->pos++;
      return node(bc, S_HALT);
    }
    if (!strcmp(w, "return")) {
      bc->pos++;
      BcNode *n = node(bc, S_RETURN);
      if (!(peek(bc)->k == T_NL || is_op(bc, ";") || is_op(bc, "}") || peek(bc)->k == T_EOF))
        n->a = parse_expr(bc);
      if (!bc->in_func && !bc->syntax_error) {
        /* GNU knows the statement ended at the token after it */
        box_out_flush(bc->c->out);
        box_fdprintf(bc->c->err, "%s %d: Return outside of a function.\n", bc->src, peek(bc)->line);
        bc->reported = true;
        fail(bc);
        return NULL;
      }
      return n;
    }
    if (!strcmp(w, "print")) {
      bc->pos++;
      BcNode *n = node(bc, S_PRINT);
      n->list = g_ptr_array_new();
      do {
        g_ptr_array_add(n->list, peek(bc)->k == T_STR ? leaf(bc, S_STR) : parse_expr(bc));
      } while (!bc->syntax_error && accept(bc, ","));
      return n;
    }
  }
  BcNode *n = node(bc, S_EXPR);
  n->a = parse_expr(bc);
  return n;
}

/* Parameters or autos: "a, b[], c", an array's name kept with its "[]". */
static void name_list(Bc *bc, GPtrArray *into)
{
  while (!bc->syntax_error && peek(bc)->k == T_NAME) {
    char *p = peek(bc)->s;
    bc->pos++;
    bool arr = accept(bc, "[") && expect(bc, "]");
    g_ptr_array_add(into, arr ? g_strconcat(p, "[]", NULL) : g_strdup(p));
    if (!accept(bc, ",")) break;
  }
}

static void parse_define(Bc *bc)
{
  bc->pos++;
  Tok *name = peek(bc);
  if (name->k != T_NAME) {
    fail(bc);
    return;
  }
  bc->pos++;
  Func *f = g_new0(Func, 1);
  f->name = name->s;
  f->params = g_ptr_array_new_with_free_func(g_free);
  f->autos = g_ptr_array_new_with_free_func(g_free);
  expect(bc, "(");
  name_list(bc, f->params);
  expect(bc, ")");
  skip_nl(bc);
  expect(bc, "{");
  skip_nl(bc);
  if (!bc->syntax_error && accept(bc, "auto")) {
    name_list(bc, f->autos);
    if (!accept(bc, ";") && peek(bc)->k != T_NL) fail(bc);
  }
  bc->in_func++;
  f->body = parse_block_body(bc);
  bc->in_func--;
  expect(bc, "}");
  if (bc->syntax_error) {
    g_ptr_array_free(f->params, TRUE);
    g_ptr_array_free(f->autos, TRUE);
    g_free(f);
    return;
  }
  f->defined = true;
  g_hash_table_replace(bc->funcs, f->name, f);
}

/* ---- running --------------------------------------------------------------------- */

static Var *var_of(Bc *bc, const char *name)
{
  Var *v = g_hash_table_lookup(bc->vars, name);
  if (!v) {
    v = g_new0(Var, 1);
    v->stack = g_array_new(FALSE, FALSE, sizeof(Num));
    Num z = num_zero(0);
    g_array_append_val(v->stack, z);
    g_hash_table_insert(bc->vars, g_strdup(name), v);
  }
  return v;
}

static void num_ptr_free(gpointer p)
{
  num_free(p);
  g_free(p);
}

static GHashTable *new_array(void)
{
  return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, num_ptr_free);
}

static Arr *arr_of(Bc *bc, const char *name)
{
  Arr *a = g_hash_table_lookup(bc->arrs, name);
  if (!a) {
    a = g_new0(Arr, 1);
    a->stack = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
    g_ptr_array_add(a->stack, new_array());
    g_hash_table_insert(bc->arrs, g_strdup(name), a);
  }
  return a;
}

static GHashTable *array_top(Bc *bc, const char *name)
{
  Arr *a = arr_of(bc, name);
  return g_ptr_array_index(a->stack, a->stack->len - 1);
}

static GHashTable *array_copy(GHashTable *src)
{
  GHashTable *d = new_array();
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, src);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    Num *n = g_new(Num, 1);
    *n = num_copy(v);
    g_hash_table_insert(d, g_memdup2(k, sizeof(gint64)), n);
  }
  return d;
}

static Flow eval(Bc *bc, BcNode *n, Num *out);

static Num parse_number(Bc *bc, const char *s)
{
  /* one digit alone keeps its value whatever ibase; in longer numbers a
   * digit at or above ibase counts as ibase - 1 */
  if (bc->ibase == 10) {
    const char *dot = strchr(s, '.');
    int ip = dot ? (int)(dot - s) : (int)strlen(s), fp = dot ? (int)strlen(dot + 1) : 0;
    Num r = { false, fp, ip + fp, g_malloc0((size_t)MAX(ip + fp, 1)) };
    int k = 0;
    for (int i = (int)strlen(s) - 1; i >= 0; i--) {
      if (s[i] == '.') continue;
      int d = g_ascii_isdigit(s[i]) ? s[i] - '0' : s[i] - 'A' + 10;
      r.d[k++] = (unsigned char)(strlen(s) - (dot ? 1 : 0) == 1 ? d : MIN(d, 9));
    }
    if (strlen(s) - (dot ? 1 : 0) == 1 && r.d[0] >= 10) {
      num_free(&r);
      return num_from_long(s[0] - 'A' + 10);
    }
    num_norm(&r);
    return r;
  }
  size_t ndig = strlen(s) - (strchr(s, '.') ? 1 : 0);
  Num base = num_from_long(bc->ibase), r = num_zero(0);
  const char *p = s;
  for (; *p && *p != '.'; p++) {
    int d = g_ascii_isdigit(*p) ? *p - '0' : *p - 'A' + 10;
    if (ndig > 1) d = (int)MIN(d, bc->ibase - 1);
    Num t = num_mul(&r, &base, 0), dn = num_from_long(d);
    num_free(&r);
    r = num_add(&t, &dn, false);
    num_free(&t);
    num_free(&dn);
  }
  if (*p == '.') {
    /* the fraction: its digits over ibase^k, at k decimal places */
    p++;
    int k = (int)strlen(p);
    Num f = num_zero(0), pw = num_from_long(1);
    for (; *p; p++) {
      int d = g_ascii_isdigit(*p) ? *p - '0' : *p - 'A' + 10;
      d = (int)MIN(d, bc->ibase - 1);
      Num t = num_mul(&f, &base, 0), dn = num_from_long(d), p2 = num_mul(&pw, &base, 0);
      num_free(&f);
      f = num_add(&t, &dn, false);
      num_free(&t);
      num_free(&dn);
      num_free(&pw);
      pw = p2;
    }
    Num q;
    num_div(&f, &pw, k, &q);
    Num t = num_add(&r, &q, false);
    num_free(&r);
    r = t;
    num_free(&q);
    num_free(&f);
    num_free(&pw);
  }
  num_free(&base);
  return r;
}

static Num *lvalue_slot(Bc *bc, BcNode *n, Flow *fl)
{
  *fl = FL_OK;
  if (n->k == E_VAR) {
    Var *v = var_of(bc, n->name);
    return &g_array_index(v->stack, Num, v->stack->len - 1);
  }
  if (n->k == E_ELEM) {
    Num idx;
    *fl = eval(bc, n->a, &idx);
    if (*fl != FL_OK) return NULL;
    long i;
    bool ok = num_to_long(&idx, &i);
    num_free(&idx);
    if (!ok || i < 0 || i > 16777215) {
      g_autofree char *m = g_strdup_printf("Array %s subscript out of bounds.", n->name);
      runtime_error(bc, m);
      *fl = FL_ERROR;
      return NULL;
    }
    GHashTable *t = array_top(bc, n->name);
    gint64 key = i;
    Num *slot = g_hash_table_lookup(t, &key);
    if (!slot) {
      slot = g_new(Num, 1);
      *slot = num_zero(0);
      g_hash_table_insert(t, g_memdup2(&key, sizeof key), slot);
    }
    return slot;
  }
  return NULL;
}

static Flow get_special(Bc *bc, const char *name, Num *out)
{
  if (!strcmp(name, "last"))
    *out = num_copy(&bc->last);
  else
    *out = num_from_long(name[0] == 's' ? bc->scale : name[0] == 'i' ? bc->ibase : bc->obase);
  return FL_OK;
}

static void set_special(Bc *bc, const char *name, const Num *v)
{
  if (!strcmp(name, "last")) {
    num_free(&bc->last);
    bc->last = num_copy(v);
    return;
  }
  long x;
  if (!num_to_long(v, &x)) x = LONG_MAX;
  if (name[0] == 's') {
    if (x < 0) {
      runtime_warning(bc, "negative scale, set to 0");
      x = 0;
    }
    bc->scale = x;
  } else {
    const char *what = name[0] == 'i' ? "ibase" : "obase";
    long max = name[0] == 'i' ? 36 : INT_MAX;
    if (x < 2) {
      g_autofree char *m = g_strdup_printf("%s too small, set to 2", what);
      runtime_warning(bc, m);
      x = 2;
    } else if (x > max) {
      g_autofree char *m = g_strdup_printf("%s too large, set to %ld", what, max);
      runtime_warning(bc, m);
      x = max;
    }
    *(name[0] == 'i' ? &bc->ibase : &bc->obase) = x;
  }
}

static bool num_pow(Bc *bc, const Num *a, const Num *b, Num *out)
{
  if (b->scale && !num_is_zero(&(Num){ false, b->scale, b->scale, b->d })) {
    runtime_warning(bc, "non-zero scale in exponent");
  }
  long e;
  if (!num_to_long(b, &e)) {
    runtime_error(bc, "exponent too large in raise");
    return false;
  }
  bool neg = e < 0;
  unsigned long ue = neg ? -(unsigned long)e : (unsigned long)e;
  if (ue == 0) {
    *out = num_from_long(1);
    return true;
  }
  /* the scale of a^e: min(scale(a) * e, max(scale, scale(a))) */
  long want = neg ? bc->scale : MIN((long)a->scale * (long)ue, MAX(bc->scale, a->scale));
  long full = (long)a->scale * (long)ue;
  Num r = num_from_long(1), p = num_copy(a);
  bool first = true;
  while (ue) {
    if (ue & 1) {
      Num t = num_mul(&r, &p, first ? p.scale : (int)MIN(full, INT_MAX / 2));
      num_free(&r);
      r = t;
      first = false;
    }
    ue >>= 1;
    if (ue) {
      Num t = num_mul(&p, &p, (int)MIN(full, INT_MAX / 2));
      num_free(&p);
      p = t;
    }
  }
  num_free(&p);
  if (neg) {
    Num one = num_from_long(1), q;
    if (!num_div(&one, &r, (int)want, &q)) {
      num_free(&one);
      num_free(&r);
      runtime_error(bc, "divide by zero");
      return false;
    }
    num_free(&one);
    num_free(&r);
    *out = q;
    return true;
  }
  *out = num_rescale(&r, (int)MIN(want, r.scale));
  num_free(&r);
  return true;
}

static bool num_sqrt(const Num *a, int scale, Num *out)
{
  if (a->neg && !num_is_zero(a)) return false;
  if (num_is_zero(a)) {
    *out = num_zero(0);
    return true;
  }
  int rs = MAX(scale, a->scale);
  int work = rs + 2;
  /* Newton's iteration from above, at two more digits, then cut */
  Num x = num_from_long(1);
  int ip = a->n - a->scale;
  for (int i = 0; i < (ip + 1) / 2 + 1; i++) {
    Num t = num_from_long(10), y = num_mul(&x, &t, 0);
    num_free(&t);
    num_free(&x);
    x = y;
  }
  Num two = num_from_long(2);
  for (;;) {
    Num q, s, nx;
    num_div(a, &x, work, &q);
    s = num_add(&x, &q, false);
    num_div(&s, &two, work, &nx);
    num_free(&q);
    num_free(&s);
    int c = num_cmp(&nx, &x);
    num_free(&x);
    x = nx;
    if (c >= 0) break;
  }
  /* x may be one unit of the last place above the root */
  Num sq = num_mul(&x, &x, 2 * work);
  if (num_cmp(&sq, a) > 0) {
    Num ulp = num_zero(work);
    ulp.d[0] = 1;
    Num y = num_add(&x, &ulp, true);
    num_free(&x);
    num_free(&ulp);
    x = y;
  }
  num_free(&sq);
  num_free(&two);
  *out = num_rescale(&x, rs);
  num_free(&x);
  return true;
}

/* a OP b at POSIX's scales; false after a runtime error. */
static bool arith(Bc *bc, char op, const Num *a, const Num *b, Num *out)
{
  switch (op) {
  case '+':
  case '-': *out = num_add(a, b, op == '-'); return true;
  case '*':
    *out = num_mul(a, b, (int)MIN(a->scale + b->scale, MAX(bc->scale, MAX(a->scale, b->scale))));
    return true;
  case '/':
    if (num_div(a, b, (int)bc->scale, out)) return true;
    runtime_error(bc, "Divide by zero");
    return false;
  case '%': {
    /* a - (a / b) * b, the quotient at scale, the product at
     * max(scale + scale(b), scale(a)) */
    Num q;
    if (!num_div(a, b, (int)bc->scale, &q)) {
      runtime_error(bc, "Modulo by zero");
      return false;
    }
    Num qb = num_mul(&q, b, (int)MAX(bc->scale + b->scale, a->scale));
    *out = num_add(a, &qb, true);
    num_free(&q);
    num_free(&qb);
    return true;
  }
  default: return num_pow(bc, a, b, out);
  }
}

static Flow call(Bc *bc, BcNode *n, Num *out);

/* Both operands of n, left first; neither is left allocated on failure. */
static Flow eval_both(Bc *bc, BcNode *n, Num *a, Num *b)
{
  Flow fl = eval(bc, n->a, a);
  if (fl != FL_OK) return fl;
  if ((fl = eval(bc, n->b, b)) != FL_OK) num_free(a);
  return fl;
}

static Flow eval(Bc *bc, BcNode *n, Num *out)
{
  Flow fl;
  switch (n->k) {
  case E_NUM: *out = parse_number(bc, n->name); return FL_OK;
  case E_VAR:
  case E_ELEM: {
    Num *slot = lvalue_slot(bc, n, &fl);
    if (!slot) return fl;
    *out = num_copy(slot);
    return FL_OK;
  }
  case E_SPECIAL: return get_special(bc, n->name, out);
  case E_NEG:
    if ((fl = eval(bc, n->a, out)) != FL_OK) return fl;
    out->neg = !out->neg;
    num_norm(out);
    return FL_OK;
  case E_NOT:
  case E_AND:
  case E_OR: {
    Num a;
    if ((fl = eval(bc, n->a, &a)) != FL_OK) return fl;
    bool t = !num_is_zero(&a);
    num_free(&a);
    if (n->k == E_NOT) {
      *out = num_from_long(!t);
      return FL_OK;
    }
    if (n->k == E_AND ? !t : t) {
      *out = num_from_long(t);
      return FL_OK;
    }
    Num b;
    if ((fl = eval(bc, n->b, &b)) != FL_OK) return fl;
    *out = num_from_long(!num_is_zero(&b));
    num_free(&b);
    return FL_OK;
  }
  case E_REL: {
    Num a, b;
    if ((fl = eval_both(bc, n, &a, &b)) != FL_OK) return fl;
    int c = num_cmp(&a, &b);
    const char *op = n->op;
    bool r = !strcmp(op, "==")   ? c == 0
             : !strcmp(op, "!=") ? c != 0
             : !strcmp(op, "<")  ? c < 0
             : !strcmp(op, "<=") ? c <= 0
             : !strcmp(op, ">")  ? c > 0
                                 : c >= 0;
    num_free(&a);
    num_free(&b);
    *out = num_from_long(r);
    return FL_OK;
  }
  case E_BIN: {
    Num a, b;
    if ((fl = eval_both(bc, n, &a, &b)) != FL_OK) return fl;
    bool ok = arith(bc, n->op[0], &a, &b, out);
    num_free(&a);
    num_free(&b);
    return ok ? FL_OK : FL_ERROR;
  }
  case E_ASSIGN:
  case E_INC: {
    Num v;
    bool post = n->k == E_INC && (n->op[0] == 'P' || n->op[0] == 'Q');
    Num old;
    if (n->a->k == E_SPECIAL)
      get_special(bc, n->a->name, &old);
    else {
      Num *slot = lvalue_slot(bc, n->a, &fl);
      if (!slot) return fl;
      old = num_copy(slot);
    }
    if (n->k == E_INC) {
      Num one = num_from_long(1);
      v = num_add(&old, &one, n->op[0] == 'q' || n->op[0] == 'Q');
      num_free(&one);
    } else {
      Num rhs;
      if ((fl = eval(bc, n->b, &rhs)) != FL_OK) {
        num_free(&old);
        return fl;
      }
      if (n->op[0] == '=') {
        v = rhs;
      } else {
        bool ok = arith(bc, n->op[0], &old, &rhs, &v);
        num_free(&rhs);
        if (!ok) {
          num_free(&old);
          return FL_ERROR;
        }
      }
    }
    if (n->a->k == E_SPECIAL) {
      set_special(bc, n->a->name, &v);
    } else {
      Num *slot = lvalue_slot(bc, n->a, &fl);
      if (!slot) {
        num_free(&old);
        num_free(&v);
        return fl;
      }
      num_free(slot);
      *slot = num_copy(&v);
    }
    if (post) {
      num_free(&v);
      *out = old;
    } else {
      num_free(&old);
      *out = v;
    }
    return FL_OK;
  }
  case E_CALL: return call(bc, n, out);
  case E_LENGTH:
  case E_SCALE:
  case E_SQRT: {
    Num a;
    if ((fl = eval(bc, n->a, &a)) != FL_OK) return fl;
    if (n->k == E_LENGTH)
      *out = num_from_long(num_length(&a));
    else if (n->k == E_SCALE)
      *out = num_from_long(a.scale);
    else if (!num_sqrt(&a, (int)bc->scale, out)) {
      num_free(&a);
      runtime_error(bc, "Square root of a negative number");
      return FL_ERROR;
    }
    num_free(&a);
    return FL_OK;
  }
  default: return FL_ERROR;
  }
}

static Flow exec(Bc *bc, BcNode *n);

static void push_local(Bc *bc, const char *name, Num *val, GHashTable *arr)
{
  size_t l = strlen(name);
  if (l > 2 && name[l - 1] == ']') {
    g_autofree char *base = g_strndup(name, l - 2);
    g_ptr_array_add(arr_of(bc, base)->stack, arr ? arr : new_array());
    return;
  }
  Num v = val ? *val : num_zero(0);
  g_array_append_val(var_of(bc, name)->stack, v);
}

static void pop_local(Bc *bc, const char *name)
{
  size_t l = strlen(name);
  if (l > 2 && name[l - 1] == ']') {
    g_autofree char *base = g_strndup(name, l - 2);
    Arr *a = arr_of(bc, base);
    g_ptr_array_remove_index(a->stack, a->stack->len - 1);
    return;
  }
  Var *v = var_of(bc, name);
  num_free(&g_array_index(v->stack, Num, v->stack->len - 1));
  g_array_set_size(v->stack, v->stack->len - 1);
}

/* The first n arguments evaluated for a call that will not happen. */
static void drop_args(Num *vals, GHashTable **arrs, guint n)
{
  for (guint k = 0; k < n; k++)
    if (arrs[k])
      g_hash_table_unref(arrs[k]);
    else
      num_free(&vals[k]);
  g_free(vals);
  g_free(arrs);
}

static Flow call(Bc *bc, BcNode *n, Num *out)
{
  Func *f = g_hash_table_lookup(bc->funcs, n->name);
  if (!f) {
    g_autofree char *m = g_strdup_printf("Function %s not defined.", n->name);
    runtime_error(bc, m);
    return FL_ERROR;
  }
  if (f->params->len != n->list->len) {
    runtime_error(bc, "Parameter number mismatch");
    return FL_ERROR;
  }
  guint np = f->params->len;
  Num *vals = g_new0(Num, np + 1);
  GHashTable **arrs = g_new0(GHashTable *, np + 1);
  for (guint i = 0; i < np; i++) {
    BcNode *a = g_ptr_array_index(n->list, i);
    const char *p = g_ptr_array_index(f->params, i);
    bool want_arr = p[strlen(p) - 1] == ']';
    if (want_arr != a->array_arg) {
      g_autofree char *m =
        g_strdup_printf("Parameter type mismatch parameter %.*s.", (int)strcspn(p, "["), p);
      runtime_error(bc, m);
      drop_args(vals, arrs, i);
      return FL_ERROR;
    }
    if (want_arr) {
      arrs[i] = array_copy(array_top(bc, a->name));
      continue;
    }
    Flow fl = eval(bc, a, &vals[i]);
    if (fl != FL_OK) {
      drop_args(vals, arrs, i);
      return fl;
    }
  }
  for (guint i = 0; i < np; i++) push_local(bc, g_ptr_array_index(f->params, i), &vals[i], arrs[i]);
  for (guint i = 0; i < f->autos->len; i++)
    push_local(bc, g_ptr_array_index(f->autos, i), NULL, NULL);
  g_free(vals);
  g_free(arrs);
  const char *saved = bc->cur_func;
  bc->cur_func = f->name;
  num_free(&bc->ret);
  bc->ret = num_zero(0);
  Flow fl = exec(bc, f->body);
  bc->cur_func = saved;
  for (guint i = 0; i < f->autos->len; i++) pop_local(bc, g_ptr_array_index(f->autos, i));
  for (guint i = 0; i < np; i++) pop_local(bc, g_ptr_array_index(f->params, i));
  if (fl == FL_ERROR || fl == FL_HALT) return fl;
  *out = bc->ret;
  bc->ret = num_zero(0);
  return FL_OK;
}

/* print's and strings' escapes (GNU: \a \b \f \n \r \t \q \\; others kept). */
static void out_escaped(Bc *bc, const char *s)
{
  for (; *s; s++) {
    if (*s != '\\' || !s[1]) {
      out_ch(bc, *s);
      continue;
    }
    s++;
    const char *m = strchr("abfnrtq\\", *s);
    if (m)
      out_ch(bc, "\a\b\f\n\r\t\"\\"[m - "abfnrtq\\"]);
    else {
      out_ch(bc, '\\');
      out_ch(bc, *s);
    }
  }
}

static Flow exec(Bc *bc, BcNode *n)
{
  if (!n) return FL_OK;
  Flow fl = FL_OK;
  switch (n->k) {
  case S_NOP: return FL_OK;
  case S_STR: out_str(bc, n->name); return FL_OK;
  case S_EXPR: {
    Num v;
    if ((fl = eval(bc, n->a, &v)) != FL_OK) return fl;
    if (n->a->k == E_ASSIGN && !n->a->paren) {
      num_free(&v);
      return FL_OK;
    }
    print_num(bc, &v);
    out_ch(bc, '\n');
    num_free(&bc->last);
    bc->last = v;
    return FL_OK;
  }
  case S_PRINT:
    for (guint i = 0; i < n->list->len; i++) {
      BcNode *x = g_ptr_array_index(n->list, i);
      if (x->k == S_STR) {
        out_escaped(bc, x->name);
        continue;
      }
      Num v;
      if ((fl = eval(bc, x, &v)) != FL_OK) return fl;
      print_num(bc, &v);
      num_free(&bc->last);
      bc->last = v;
    }
    return FL_OK;
  case S_BLOCK:
    for (guint i = 0; i < n->list->len; i++)
      if ((fl = exec(bc, g_ptr_array_index(n->list, i))) != FL_OK) return fl;
    return FL_OK;
  case S_IF:
  case S_WHILE:
    for (;;) {
      Num v;
      if ((fl = eval(bc, n->a, &v)) != FL_OK) return fl;
      bool t = !num_is_zero(&v);
      num_free(&v);
      if (n->k == S_IF) return exec(bc, t ? n->b : n->c);
      if (!t) return FL_OK;
      fl = exec(bc, n->b);
      if (fl == FL_BREAK) return FL_OK;
      if (fl != FL_OK && fl != FL_CONTINUE) return fl;
    }
  case S_FOR: {
    Num v;
    if (n->a) {
      if ((fl = eval(bc, n->a, &v)) != FL_OK) return fl;
      num_free(&v);
    }
    for (;;) {
      if (n->b) {
        if ((fl = eval(bc, n->b, &v)) != FL_OK) return fl;
        bool t = !num_is_zero(&v);
        num_free(&v);
        if (!t) return FL_OK;
      }
      fl = exec(bc, n->d);
      if (fl == FL_BREAK) return FL_OK;
      if (fl != FL_OK && fl != FL_CONTINUE) return fl;
      if (n->c) {
        if ((fl = eval(bc, n->c, &v)) != FL_OK) return fl;
        num_free(&v);
      }
    }
  }
  case S_BREAK: return FL_BREAK;
  case S_CONTINUE: return FL_CONTINUE;
  case S_HALT: return FL_HALT;
  case S_RETURN: {
    Num v = num_zero(0);
    if (n->a && (fl = eval(bc, n->a, &v)) != FL_OK) return fl;
    num_free(&bc->ret);
    bc->ret = v;
    return FL_RETURN;
  }
  default: return FL_ERROR;
  }
}

/* ---- the driver ------------------------------------------------------------------ */

/* Runs one source; false after halt or quit. */
static bool run_source(Bc *bc, const char *src, const char *text, size_t len)
{
  bc->t = lex(text, len, &bc->nt);
  bc->pos = 0;
  bc->src = src;
  bool go_on = true;
  while (go_on && peek(bc)->k != T_EOF) {
    if (peek(bc)->k == T_NL || is_op(bc, ";")) {
      bc->pos++;
      continue;
    }
    bc->syntax_error = bc->reported = false;
    GPtrArray *line = g_ptr_array_new();
    if (is_op(bc, "define")) {
      parse_define(bc);
    } else {
      for (;;) {
        g_ptr_array_add(line, parse_stmt(bc));
        if (bc->syntax_error || bc->quit) break;
        if (accept(bc, ";")) {
          if (peek(bc)->k == T_NL || is_op(bc, "define")) break;
          continue;
        }
        /* a line needs its newline */
        if (peek(bc)->k != T_NL) fail(bc);
        break;
      }
    }
    if (bc->quit) {
      g_ptr_array_free(line, TRUE);
      return false;
    }
    if (bc->syntax_error) {
      bc->pos = bc->err_pos;
      Tok *t = peek(bc);
      if (!bc->reported) {
        box_out_flush(bc->c->out);
        box_fdprintf(bc->c->err, "%s %d: syntax error\n", src, t->line);
      }
      /* drop the rest of the line (the newline that was the error ends it) */
      if (t->k == T_NL)
        bc->pos++;
      else {
        while (peek(bc)->k != T_NL && peek(bc)->k != T_EOF) bc->pos++;
        if (peek(bc)->k == T_NL) bc->pos++;
      }
      g_ptr_array_free(line, TRUE);
      continue;
    }
    for (guint i = 0; i < line->len; i++) {
      Flow fl = exec(bc, g_ptr_array_index(line, i));
      if (fl == FL_HALT) {
        go_on = false;
        break;
      }
      if (fl == FL_ERROR) break;
    }
    g_ptr_array_free(line, TRUE);
  }
  /* the nodes (and the functions) keep the tokens' texts */
  for (int i = 0; i < bc->nt; i++)
    if (bc->t[i].s) g_ptr_array_add(bc->texts, bc->t[i].s);
  g_free(bc->t);
  bc->t = NULL;
  return go_on;
}

static void var_free(gpointer p)
{
  Var *v = p;
  for (guint i = 0; i < v->stack->len; i++) num_free(&g_array_index(v->stack, Num, i));
  g_array_free(v->stack, TRUE);
  g_free(v);
}

static void arr_free(gpointer p)
{
  Arr *a = p;
  g_ptr_array_free(a->stack, TRUE);
  g_free(a);
}

static void func_free(gpointer p)
{
  Func *f = p;
  g_ptr_array_free(f->params, TRUE);
  g_ptr_array_free(f->autos, TRUE);
  g_free(f);
}

static void node_free(gpointer p)
{
  BcNode *n = p;
  if (n->list) g_ptr_array_free(n->list, TRUE);
  g_free(n);
}

/* The math library of -l, written in bc: each function works at more
 * digits than asked and cuts its answer to the caller's scale. */
static const char mathlib[] =
  "scale=20\n"
  "define e(x) {\n"
  "  auto s, r, t, n, i, m\n"
  "  s = scale; m = 0\n"
  "  if (x < 0) { m = 1; x = -x }\n"
  "  scale = s + length(x / 1) + 8\n"
  "  n = 0; while (x > 1) { x = x / 2; n = n + 1 }\n"
  "  r = 1; t = 1; i = 1\n"
  "  while (1) { t = t * x / i; if (t == 0) break; r = r + t; i = i + 1 }\n"
  "  while (n > 0) { r = r * r; n = n - 1 }\n"
  "  if (m) { scale = s; return (1 / r) }\n"
  "  scale = s; return (r / 1)\n"
  "}\n"
  "define l(x) {\n"
  "  auto s, r, t, n, i, y, z\n"
  "  if (x <= 0) return ((1 - 10 ^ scale) / 1)\n"
  "  s = scale; scale = s + 8\n"
  "  n = 0; while (x >= 2) { x = sqrt(x); n = n + 1 }\n"
  "  while (x <= .5) { x = sqrt(x); n = n + 1 }\n"
  "  y = (x - 1) / (x + 1); z = y * y\n"
  "  r = y; t = y; i = 3\n"
  "  while (1) { t = t * z; if (t / i == 0) break; r = r + t / i; i = i + 2 }\n"
  "  r = r * 2 * 2 ^ n\n"
  "  scale = s; return (r / 1)\n"
  "}\n"
  "define s(x) {\n"
  "  auto s, r, t, i, p, m, q\n"
  "  s = scale; scale = s + 8\n"
  "  m = 0; if (x < 0) { m = 1; x = -x }\n"
  "  scale = s + 8 + length(x / 1)\n"
  "  p = 4 * a(1)\n"
  "  q = (x / p + 1) / 2; scale = 0; q = q / 1; scale = s + 8 + length(x / 1)\n"
  "  x = x - 2 * q * p\n"
  "  if (q % 2) m = 1 - m\n"
  "  r = x; t = x; i = 1\n"
  "  while (1) { t = -t * x * x / ((i + 1) * (i + 2)); if (t == 0) break; r = r + t; i = i + 2 }\n"
  "  scale = s; if (m) return (-r / 1)\n"
  "  return (r / 1)\n"
  "}\n"
  "define c(x) {\n"
  "  auto s, r\n"
  "  s = scale; scale = s + 8\n"
  "  r = s(x + 2 * a(1))\n"
  "  scale = s; return (r / 1)\n"
  "}\n"
  "define a(x) {\n"
  "  auto s, r, t, i, m, n, z\n"
  "  s = scale; scale = s + 8\n"
  "  m = 0; if (x < 0) { m = 1; x = -x }\n"
  "  n = 0; while (x > .2) { x = x / (1 + sqrt(1 + x * x)); n = n + 1 }\n"
  "  z = x * x; r = x; t = x; i = 3\n"
  "  while (1) { t = -t * z; if (t / i == 0) break; r = r + t / i; i = i + 2 }\n"
  "  r = r * 2 ^ n\n"
  "  scale = s; if (m) return (-r / 1)\n"
  "  return (r / 1)\n"
  "}\n"
  "define j(n, x) {\n"
  "  auto s, r, t, i, m, f\n"
  "  s = scale; scale = 0; n = n / 1\n"
  "  m = 0; if (n < 0) { n = -n; if (n % 2) m = 1 }\n"
  "  scale = s + 8\n"
  "  f = 1; for (i = 2; i <= n; i++) f = f * i\n"
  "  t = (x / 2) ^ n / f; r = t; i = 1\n"
  "  while (1) { t = -t * x * x / (4 * i * (n + i)); if (t == 0) break; r = r + t; i = i + 1 }\n"
  "  scale = s; if (m) return (-r / 1)\n"
  "  return (r / 1)\n"
  "}\n";

int box_cmd_bc(BoxCmd *c)
{
  bool mathl = false;
  int optind = 1;
  for (const char *w; (w = bx_option_word(c, &optind, "-"));) {
    optind++;
    static const char *const longs[] = { "--mathlib", "--quiet", "--standard", "--warn", NULL };
    bool known = false;
    for (int i = 0; longs[i]; i++)
      if (!strcmp(w, longs[i])) {
        mathl |= i == 0;
        known = true;
      }
    for (const char *p = w + 1; !known && *p && strchr("lqsw", *p); p++) {
      mathl |= *p == 'l';
      known = !p[1];
    }
    if (!known) {
      box_out_flush(c->out);
      if (w[1] == '-')
        box_fdprintf(c->err, "bc: unrecognized option '%s'\n", w);
      else
        box_fdprintf(c->err, "bc: invalid option -- '%c'\n", w[strspn(w + 1, "lqsw") + 1]);
      box_out_puts(c->out, "usage: bc [options] [file ...]\n"
                           "  -h  --help         print this usage and exit\n"
                           "  -i  --interactive  force interactive mode\n"
                           "  -l  --mathlib      use the predefined math routines\n"
                           "  -q  --quiet        don't print initial banner\n"
                           "  -s  --standard     non-standard bc constructs are errors\n"
                           "  -w  --warn         warn about non-standard bc constructs\n"
                           "  -v  --version      print version information and exit\n");
      return 1;
    }
  }
  Bc bc = { .c = c, .scale = 0, .ibase = 10, .obase = 10, .cur_func = "(main)" };
  bc.vars = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, var_free);
  bc.arrs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, arr_free);
  bc.funcs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, func_free);
  bc.all_nodes = g_ptr_array_new_with_free_func(node_free);
  bc.last = num_zero(0);
  bc.ret = num_zero(0);
  bc.texts = g_ptr_array_new_with_free_func(g_free);
  int status = 0;
  bool go_on = true;
  if (mathl) { go_on = run_source(&bc, "(library)", mathlib, sizeof mathlib - 1); }
  for (int i = optind; go_on && i <= c->argc; i++) {
    const char *name = i < c->argc ? c->argv[i] : "-";
    GString *s = g_string_new(NULL);
    int fd = bx_open_in(c, name);
    if (fd < 0) {
      box_out_flush(c->out);
      box_fdprintf(c->err, "File %s is unavailable.\n", name);
      g_string_free(s, TRUE);
      status = 1;
      go_on = false;
      break;
    }
    bx_read_all(fd, s);
    bx_close_in(c, fd);
    go_on = run_source(&bc, i < c->argc ? name : "(standard_in)", s->str, s->len);
    g_string_free(s, TRUE);
  }
  box_out_flush(c->out);
  g_ptr_array_free(bc.all_nodes, TRUE);
  g_hash_table_destroy(bc.funcs);
  g_hash_table_destroy(bc.vars);
  g_hash_table_destroy(bc.arrs);
  num_free(&bc.last);
  num_free(&bc.ret);
  g_ptr_array_free(bc.texts, TRUE);
  return status;
}
