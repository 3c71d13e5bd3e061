/* parser.c — recursive-descent parser: tokens → rules and expression ASTs
 * (spec/policy.md §1.2–§1.4). */
#include "policy/parser.h"
#include "policy/lexer.h"
#include "policy/temporal.h"

#include <string.h>

#define MAX_DEPTH 200

typedef struct {
  BoxPolicy *pol;
  TokReader r;
  int depth;
  int provider_line, provider_col; /* first information-provider call, refused after parsing */
  GPtrArray *inline_tf; /* the rule being parsed: its inline `temporal { … }` blocks (TFormula*) */
} Parser;

static char *own_strndup(Parser *p, const char *s, size_t n)
{
  return policy_own(p->pol, g_strndup(s, n));
}

static Expr *new_expr(Parser *p, ExprKind k, const Token *at)
{
  Expr *e = policy_own(p->pol, g_new0(Expr, 1));
  e->kind = k;
  e->line = at->line;
  e->col = at->col;
  return e;
}

/* Past the current token (`[`, `like`), the string literal that must
 * follow it; NULL, failed with why, where it is something else. */
static const Token *string_after(Parser *p, const char *why)
{
  tok_next(&p->r);
  const Token *s = tok_next(&p->r);
  if (s->kind != TOK_STRING) {
    tok_fail(&p->r, s, "%s", why);
    return NULL;
  }
  return s;
}

#define MAX_TREE_DEPTH 400

static Expr *deep(Parser *p, Expr *e);

/* a OP b at t's place, checked for depth like every node a loop chains */
static Expr *binary(Parser *p, ExprKind k, const Token *t, Expr *a, Expr *b)
{
  Expr *m = new_expr(p, k, t);
  m->a = a;
  m->b = b;
  return deep(p, m);
}

/* Records e's height and refuses trees too deep to evaluate on a thread's
 * stack (left-deep chains such as a && b && c ... are built by loops). */
static Expr *deep(Parser *p, Expr *e)
{
  if (!e) return NULL;
  int d = 0;
  const Expr *kids[3] = { e->a, e->b, e->c };
  for (int i = 0; i < 3; i++)
    if (kids[i] && kids[i]->height > d) d = kids[i]->height;
  for (size_t i = 0; e->items && i < e->nitems; i++)
    if (e->items[i]->height > d) d = e->items[i]->height;
  e->height = d + 1;
  if (e->height > MAX_TREE_DEPTH) {
    if (!p->r.err)
      g_set_error(&p->r.err, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                  POLICY_PARSE_PREFIX "expression nests too deeply at line %d, column %d", e->line,
                  e->col);
    return NULL;
  }
  return e;
}

/* Decodes a string literal body (§1.1 escapes).  In pattern mode an
 * unescaped `*` is a wildcard and `\*` a literal star; *wild receives a
 * per-byte wildcard map. */
static bool decode_string(Parser *p, const Token *t, bool pattern, char **out, size_t *outlen,
                          unsigned char **wild)
{
  GString *s = g_string_sized_new(t->len + 1);
  GByteArray *w = pattern ? g_byte_array_new() : NULL;
  const char *q = t->text, *end = t->text + t->len;
  /* column of the character being decoded, for error positions */
  while (q < end) {
    unsigned char c = (unsigned char)*q;
    if (c == '\\') {
      char e = q + 1 < end ? q[1] : '\0';
      char lit = 0;
      bool have = true;
      switch (e) {
      case 'n': lit = '\n'; break;
      case 't': lit = '\t'; break;
      case 'r': lit = '\r'; break;
      case '0': lit = '\0'; break;
      case '\\': lit = '\\'; break;
      case '"': lit = '"'; break;
      case '\'': lit = '\''; break;
      case '*': lit = '*'; break;
      case 'u': have = false; break;
      default: tok_fail(&p->r, t, "invalid escape `\\%c` in string literal", e ? e : ' '); goto bad;
      }
      if (have) {
        g_string_append_c(s, lit);
        if (w) {
          guint8 z = 0;
          g_byte_array_append(w, &z, 1);
        }
        q += 2;
        continue;
      }
      /* \u{HEX} */
      const char *h = q + 2;
      if (h >= end || *h != '{') {
        tok_fail(&p->r, t, "invalid unicode escape in string literal; write `\\u{HEX}`");
        goto bad;
      }
      h++;
      guint32 v = 0;
      int nd = 0;
      while (h < end && g_ascii_isxdigit(*h) && nd < 7) {
        v = v * 16 + (guint32)g_ascii_xdigit_value(*h);
        h++;
        nd++;
      }
      if (h >= end || *h != '}' || nd == 0 || nd > 6 || v > 0x10FFFF ||
          (v >= 0xD800 && v <= 0xDFFF)) {
        tok_fail(&p->r, t,
                 "invalid unicode escape in string literal; write `\\u{HEX}` with 1 to 6 hex "
                 "digits naming a Unicode scalar value");
        goto bad;
      }
      char buf[8];
      int n = g_unichar_to_utf8(v, buf);
      g_string_append_len(s, buf, n);
      if (w) {
        guint8 z[8] = { 0 };
        g_byte_array_append(w, z, (guint)n);
      }
      q = h + 1;
      continue;
    }
    g_string_append_c(s, (char)c);
    if (w) {
      guint8 z = (pattern && c == '*') ? 1 : 0;
      g_byte_array_append(w, &z, 1);
    }
    q++;
  }
  *outlen = s->len;
  *out = policy_own(p->pol, g_string_free(s, FALSE));
  if (wild) {
    guint8 z = 0;
    g_byte_array_append(w, &z, 1);
    *wild = policy_own(p->pol, g_byte_array_free(w, FALSE));
  }
  return true;
bad:
  g_string_free(s, TRUE);
  if (w) g_byte_array_free(w, TRUE);
  return false;
}

static const char *const reserved_words[] = { "true", "false", "if",  "then",    "else", "in",
                                              "is",   "like",  "has", "__cedar", NULL };
static bool is_reserved(const Token *t)
{
  for (int i = 0; reserved_words[i]; i++)
    if (tok_is_kw(t, reserved_words[i])) return true;
  return false;
}

/* One identifier of an `A::B` path, appended to path after its "::";
 * fails naming what was expected where the token is something else. */
static bool path_segment(Parser *p, GString *path, const char *expected)
{
  const Token *id = tok_peek(&p->r);
  if (id->kind != TOK_IDENT) {
    tok_fail_expected(&p->r, id, expected);
    return false;
  }
  tok_next(&p->r);
  if (path->len) g_string_append(path, "::");
  g_string_append_len(path, id->text, id->len);
  return true;
}

/* Parses `A::B::"id"` where the first identifier is at the cursor. */
static Expr *parse_entity_ref(Parser *p)
{
  const Token *first = tok_peek(&p->r);
  GString *type = g_string_new(NULL);
  for (;;) {
    if (!path_segment(p, type, "an identifier or a quoted entity id") ||
        !tok_expect(&p->r, TOK_COLONCOLON, "`::`")) {
      g_string_free(type, TRUE);
      return NULL;
    }
    if (tok_peek(&p->r)->kind == TOK_STRING) break;
    if (tok_peek(&p->r)->kind == TOK_LBRACE) {
      tok_fail(&p->r, tok_peek(&p->r), "entity initializers `Type::{...}` are not supported");
      g_string_free(type, TRUE);
      return NULL;
    }
  }
  const Token *st = tok_next(&p->r);
  Expr *e = new_expr(p, E_ENTITY, first);
  e->etype = policy_own(p->pol, g_string_free(type, FALSE));
  if (!decode_string(p, st, false, &e->str, &e->len, NULL)) return NULL;
  if (memchr(e->str, '\0', e->len)) {
    /* ids are compared as C strings below; keep them NUL-free */
    tok_fail(&p->r, st, "entity id contains a NUL character");
    return NULL;
  }
  return e;
}

static Expr *parse_expr(Parser *p);

static Expr **parse_list(Parser *p, TokKind close, size_t *n)
{
  GPtrArray *a = g_ptr_array_new();
  while (!p->r.err && tok_peek(&p->r)->kind != close) {
    Expr *e = parse_expr(p);
    if (!e) break;
    g_ptr_array_add(a, e);
    if (tok_peek(&p->r)->kind == TOK_COMMA) {
      tok_next(&p->r);
      continue;
    }
    if (tok_peek(&p->r)->kind != close) {
      tok_fail_expected(&p->r, tok_peek(&p->r),
                        close == TOK_RBRACKET ? "`,` or `]`" : "`,` or `)`");
      break;
    }
  }
  if (!p->r.err) tok_next(&p->r); /* close */
  *n = a->len;
  Expr **items = policy_own(p->pol, g_new0(Expr *, a->len + 1));
  for (guint i = 0; i < a->len; i++) items[i] = a->pdata[i];
  g_ptr_array_free(a, TRUE);
  return p->r.err ? NULL : items;
}

static Expr *parse_primary(Parser *p)
{
  const Token *t = tok_peek(&p->r);
  switch (t->kind) {
  case TOK_INT: {
    tok_next(&p->r);
    if (t->int_big || t->ival > (uint64_t)INT64_MAX) {
      tok_fail(&p->r, t, "integer literal `%.*s` is out of range", (int)t->len, t->text);
      return NULL;
    }
    Expr *e = new_expr(p, E_LONG, t);
    e->lval = (int64_t)t->ival;
    return e;
  }
  case TOK_STRING: {
    tok_next(&p->r);
    Expr *e = new_expr(p, E_STRING, t);
    if (!decode_string(p, t, false, &e->str, &e->len, NULL)) return NULL;
    return e;
  }
  case TOK_LPAREN: {
    tok_next(&p->r);
    Expr *e = parse_expr(p);
    if (!e || !tok_expect(&p->r, TOK_RPAREN, "`)`")) return NULL;
    return e;
  }
  case TOK_LBRACKET: {
    tok_next(&p->r);
    Expr *e = new_expr(p, E_SET, t);
    e->items = parse_list(p, TOK_RBRACKET, &e->nitems);
    return p->r.err ? NULL : deep(p, e);
  }
  case TOK_LBRACE: {
    tok_next(&p->r);
    Expr *e = new_expr(p, E_RECORD, t);
    GPtrArray *keys = g_ptr_array_new(), *vals = g_ptr_array_new();
    while (!p->r.err && tok_peek(&p->r)->kind != TOK_RBRACE) {
      const Token *k = tok_next(&p->r);
      char *key = NULL;
      size_t klen = 0;
      if (k->kind == TOK_IDENT)
        key = own_strndup(p, k->text, k->len);
      else if (k->kind == TOK_STRING) {
        if (!decode_string(p, k, false, &key, &klen, NULL)) break;
      } else {
        tok_fail_expected(&p->r, k, "a record key");
        break;
      }
      for (guint i = 0; i < keys->len; i++)
        if (strcmp(keys->pdata[i], key) == 0)
          tok_fail(&p->r, k, "duplicate key `%s` in record literal", key);
      if (!tok_expect(&p->r, TOK_COLON, "`:`")) break;
      Expr *v = parse_expr(p);
      if (!v) break;
      g_ptr_array_add(keys, key);
      g_ptr_array_add(vals, v);
      tok_list_sep(&p->r, TOK_RBRACE, "`,` or `}`");
    }
    if (!p->r.err) tok_next(&p->r);
    e->nitems = keys->len;
    e->keys = policy_own(p->pol, g_new0(char *, keys->len + 1));
    e->items = policy_own(p->pol, g_new0(Expr *, keys->len + 1));
    for (guint i = 0; i < keys->len; i++) {
      e->keys[i] = keys->pdata[i];
      e->items[i] = vals->pdata[i];
    }
    g_ptr_array_free(keys, TRUE);
    g_ptr_array_free(vals, TRUE);
    return p->r.err ? NULL : deep(p, e);
  }
  case TOK_IDENT: {
    if (tok_is_kw(t, "true") || tok_is_kw(t, "false")) {
      tok_next(&p->r);
      Expr *e = new_expr(p, E_BOOL, t);
      e->bval = tok_is_kw(t, "true");
      return e;
    }
    if (tok_is_kw(t, "if")) return parse_expr(p);
    if (tok_peek_n(&p->r, 1)->kind == TOK_COLONCOLON) {
      /* Ns::Fn(args) is an information provider call */
      size_t q = p->r.pos;
      while (q + 2 < p->r.ntoks && p->r.toks[q].kind == TOK_IDENT &&
             p->r.toks[q + 1].kind == TOK_COLONCOLON && p->r.toks[q + 2].kind == TOK_IDENT)
        q += 2;
      if (q + 1 < p->r.ntoks && p->r.toks[q].kind == TOK_IDENT &&
          p->r.toks[q + 1].kind == TOK_LPAREN) {
        if (!p->provider_line) {
          p->provider_line = t->line;
          p->provider_col = t->col;
        }
        p->r.pos = q + 2;
        size_t nargs = 0;
        parse_list(p, TOK_RPAREN, &nargs);
        if (p->r.err) return NULL;
        Expr *e = new_expr(p, E_BOOL, t);
        e->bval = true;
        return e;
      }
      return parse_entity_ref(p);
    }
    if (tok_is_kw(t, "temporal") && tok_peek_n(&p->r, 1)->kind == TOK_LBRACE) {
      /* inline `temporal { … }`, a Bool primary (§1.3, §2.1) */
      struct TFormula *tf = policy_temporal_parse(p->pol, &p->r);
      if (!tf) return NULL;
      Expr *e = new_expr(p, E_TEMPORAL, t);
      e->tf = tf;
      g_ptr_array_add(p->inline_tf, tf);
      return e;
    }
    if (tok_peek_n(&p->r, 1)->kind == TOK_LPAREN) {
      static const char *const exts[] = { "decimal", "ip", "datetime", "duration" };
      for (int i = 0; i < 4; i++) {
        if (!tok_is_kw(t, exts[i])) continue;
        tok_next(&p->r);
        const Token *lp = tok_next(&p->r);
        size_t nargs = 0;
        Expr **args = parse_list(p, TOK_RPAREN, &nargs);
        if (p->r.err) return NULL;
        if (nargs != 1) {
          tok_fail(&p->r, lp, "`%s` takes 1 argument, found %zu", exts[i], nargs);
          return NULL;
        }
        Expr *e = new_expr(p, E_EXT, t);
        e->ext = (ExtKind)i;
        e->str = (char *)exts[i];
        e->a = args[0];
        return deep(p, e);
      }
      tok_fail(&p->r, t, "unknown function `%.*s`", (int)t->len, t->text);
      return NULL;
    }
    static const char *const vars[] = { "principal", "action", "resource", "context" };
    for (int i = 0; i < 4; i++) {
      if (tok_is_kw(t, vars[i])) {
        tok_next(&p->r);
        Expr *e = new_expr(p, E_VAR, t);
        e->var = (VarKind)i;
        return e;
      }
    }
    tok_fail(&p->r, t, "`%.*s` is not a valid variable", (int)t->len, t->text);
    return NULL;
  }
  case TOK_QUESTION:
    tok_fail(&p->r, t, "policy is not static: template slots are not supported");
    return NULL;
  default: tok_fail_expected(&p->r, t, "an expression"); return NULL;
  }
}

static Expr *parse_member(Parser *p)
{
  Expr *e = parse_primary(p);
  while (e && !p->r.err) {
    const Token *t = tok_peek(&p->r);
    if (t->kind == TOK_DOT) {
      tok_next(&p->r);
      const Token *name = tok_next(&p->r);
      if (name->kind != TOK_IDENT) {
        tok_fail_expected(&p->r, name, "an attribute name or method after `.`");
        return NULL;
      }
      if (tok_peek(&p->r)->kind == TOK_LPAREN) {
        const Token *lp = tok_next(&p->r);
        Expr *m = new_expr(p, E_METHOD, name);
        m->a = e;
        size_t nargs = 0;
        Expr **args = parse_list(p, TOK_RPAREN, &nargs);
        if (p->r.err) return NULL;
        static const struct {
          const char *name;
          MethodKind m;
          size_t args;
        } methods[] = {
          { "contains", M_CONTAINS, 1 },
          { "containsAll", M_CONTAINS_ALL, 1 },
          { "containsAny", M_CONTAINS_ANY, 1 },
          { "isEmpty", M_IS_EMPTY, 0 },
          { "lessThan", M_LESS_THAN, 1 },
          { "lessThanOrEqual", M_LESS_THAN_OR_EQUAL, 1 },
          { "greaterThan", M_GREATER_THAN, 1 },
          { "greaterThanOrEqual", M_GREATER_THAN_OR_EQUAL, 1 },
          { "isIpv4", M_IS_IPV4, 0 },
          { "isIpv6", M_IS_IPV6, 0 },
          { "isLoopback", M_IS_LOOPBACK, 0 },
          { "isMulticast", M_IS_MULTICAST, 0 },
          { "isInRange", M_IS_IN_RANGE, 1 },
          { "offset", M_OFFSET, 1 },
          { "durationSince", M_DURATION_SINCE, 1 },
          { "toDate", M_TO_DATE, 0 },
          { "toTime", M_TO_TIME, 0 },
          { "toMilliseconds", M_TO_MILLISECONDS, 0 },
          { "toSeconds", M_TO_SECONDS, 0 },
          { "toMinutes", M_TO_MINUTES, 0 },
          { "toHours", M_TO_HOURS, 0 },
          { "toDays", M_TO_DAYS, 0 },
          { "getTag", M_GET_TAG, 1 },
          { "hasTag", M_HAS_TAG, 1 },
        };
        size_t want = 0;
        bool found = false;
        for (size_t i = 0; i < G_N_ELEMENTS(methods); i++) {
          if (tok_is_kw(name, methods[i].name)) {
            m->method = methods[i].m;
            want = methods[i].args;
            found = true;
            break;
          }
        }
        if (!found) {
          tok_fail(&p->r, name, "`%.*s` is not a supported method", (int)name->len, name->text);
          return NULL;
        }
        if (nargs != want) {
          tok_fail(&p->r, lp, "`%.*s` takes %zu argument%s, found %zu", (int)name->len, name->text,
                   want, want == 1 ? "" : "s", nargs);
          return NULL;
        }
        m->b = want ? args[0] : NULL;
        e = deep(p, m);
        if (!e) return NULL;
      } else {
        Expr *g = new_expr(p, E_GETATTR, name);
        g->a = e;
        g->str = own_strndup(p, name->text, name->len);
        g->len = name->len;
        e = deep(p, g);
        if (!e) return NULL;
      }
    } else if (t->kind == TOK_LBRACKET) {
      const Token *k = string_after(p, "an index `[...]` must be a string literal");
      if (!k) return NULL;
      Expr *g = new_expr(p, E_GETATTR, k);
      g->a = e;
      if (!decode_string(p, k, false, &g->str, &g->len, NULL)) return NULL;
      if (!tok_expect(&p->r, TOK_RBRACKET, "`]`")) return NULL;
      e = deep(p, g);
      if (!e) return NULL;
    } else {
      break;
    }
  }
  return p->r.err ? NULL : e;
}

static Expr *parse_unary(Parser *p)
{
  const Token *t = tok_peek(&p->r);
  if (t->kind == TOK_BANG || t->kind == TOK_MINUS) {
    TokKind k = t->kind;
    size_t n = 0;
    while (tok_peek(&p->r)->kind == k) {
      tok_next(&p->r);
      n++;
    }
    if (tok_peek(&p->r)->kind == TOK_BANG || tok_peek(&p->r)->kind == TOK_MINUS) {
      tok_fail(&p->r, tok_peek(&p->r), "unary operators `!` and `-` cannot be mixed");
      return NULL;
    }
    Expr *e;
    if (k == TOK_MINUS && tok_peek(&p->r)->kind == TOK_INT) {
      /* a negative literal: -9223372036854775808 is i64::MIN */
      const Token *lit = tok_next(&p->r);
      if (lit->int_big) {
        tok_fail(&p->r, lit, "integer literal `-%.*s` is out of range", (int)lit->len, lit->text);
        return NULL;
      }
      e = new_expr(p, E_LONG, t);
      e->lval = lit->ival == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)lit->ival;
      n--;
      /* member access on the literal (rare) */
      while (tok_peek(&p->r)->kind == TOK_DOT || tok_peek(&p->r)->kind == TOK_LBRACKET) {
        tok_fail(&p->r, tok_peek(&p->r), "unexpected member access on an integer literal");
        return NULL;
      }
    } else {
      e = parse_member(p);
    }
    if (!e) return NULL;
    for (size_t i = 0; i < n; i++) {
      Expr *u = new_expr(p, k == TOK_BANG ? E_NOT : E_NEG, t);
      u->a = e;
      e = deep(p, u);
      if (!e) return NULL;
    }
    return e;
  }
  return parse_member(p);
}

/* The node a binary operator token makes at one level of precedence,
 * or -1 where the level's chain ends. */
typedef int (*BinaryKind)(Parser *p, const Token *t);

/* operand (op operand)*, folded to the left: the chains of *, +/-, && and
 * || are built by this loop rather than by recursion. */
static Expr *left_chain(Parser *p, Expr *(*operand)(Parser *), BinaryKind kind_of)
{
  Expr *e = operand(p);
  while (e && !p->r.err) {
    const Token *t = tok_peek(&p->r);
    int k = kind_of(p, t);
    if (k < 0) break;
    tok_next(&p->r);
    Expr *r = operand(p);
    if (!r) return NULL;
    e = binary(p, (ExprKind)k, t, e, r);
    if (!e) return NULL;
  }
  return p->r.err ? NULL : e;
}

static int mul_kind(Parser *p, const Token *t)
{
  if (t->kind == TOK_SLASH || t->kind == TOK_PERCENT) {
    tok_fail(&p->r, t, "`%s` is not a supported operator", t->kind == TOK_SLASH ? "/" : "%");
    return -1;
  }
  return t->kind == TOK_STAR ? E_MUL : -1;
}

static int add_kind(Parser *p, const Token *t)
{
  (void)p;
  return t->kind == TOK_PLUS ? E_ADD : t->kind == TOK_MINUS ? E_SUB : -1;
}

static int and_kind(Parser *p, const Token *t)
{
  (void)p;
  return t->kind == TOK_AND ? E_AND : -1;
}

static int or_kind(Parser *p, const Token *t)
{
  (void)p;
  return t->kind == TOK_OR ? E_OR : -1;
}

static Expr *parse_mul(Parser *p)
{
  return left_chain(p, parse_unary, mul_kind);
}

static Expr *parse_add(Parser *p)
{
  return left_chain(p, parse_mul, add_kind);
}

static char *parse_type_path(Parser *p)
{
  GString *s = g_string_new(NULL);
  for (;;) {
    if (!path_segment(p, s, "an entity type")) {
      g_string_free(s, TRUE);
      return NULL;
    }
    if (tok_peek(&p->r)->kind != TOK_COLONCOLON) break;
    tok_next(&p->r);
  }
  return policy_own(p->pol, g_string_free(s, FALSE));
}

static Expr *parse_rel(Parser *p)
{
  Expr *e = parse_add(p);
  if (!e || p->r.err) return NULL;
  const Token *t = tok_peek(&p->r);
  ExprKind k;
  switch (t->kind) {
  case TOK_EQEQ: k = E_EQ; break;
  case TOK_NE: k = E_NE; break;
  case TOK_LT: k = E_LT; break;
  case TOK_LE: k = E_LE; break;
  case TOK_GT: k = E_GT; break;
  case TOK_GE: k = E_GE; break;
  case TOK_ASSIGN: tok_fail(&p->r, t, "unexpected `=`; did you mean `==`?"); return NULL;
  case TOK_IDENT:
    if (tok_is_kw(t, "in")) {
      k = E_IN;
      break;
    }
    if (tok_is_kw(t, "has")) {
      tok_next(&p->r);
      Expr *h = new_expr(p, E_HAS, t);
      h->a = e;
      GPtrArray *path = g_ptr_array_new();
      const Token *n = tok_next(&p->r);
      if (n->kind == TOK_STRING) {
        char *s;
        size_t len;
        if (!decode_string(p, n, false, &s, &len, NULL)) {
          g_ptr_array_free(path, TRUE);
          return NULL;
        }
        g_ptr_array_add(path, s);
      } else if (n->kind == TOK_IDENT && !is_reserved(n)) {
        g_ptr_array_add(path, own_strndup(p, n->text, n->len));
        while (tok_peek(&p->r)->kind == TOK_DOT) {
          tok_next(&p->r);
          const Token *m = tok_next(&p->r);
          if (m->kind != TOK_IDENT || is_reserved(m)) {
            tok_fail_expected(&p->r, m, "an attribute name");
            break;
          }
          g_ptr_array_add(path, own_strndup(p, m->text, m->len));
        }
      } else {
        tok_fail_expected(&p->r, n, "an attribute name or string after `has`");
      }
      h->nitems = path->len;
      h->keys = policy_own(p->pol, g_new0(char *, path->len + 1));
      for (guint i = 0; i < path->len; i++) h->keys[i] = path->pdata[i];
      g_ptr_array_free(path, TRUE);
      return p->r.err ? NULL : deep(p, h);
    }
    if (tok_is_kw(t, "like")) {
      const Token *s = string_after(p, "the pattern after `like` must be a string literal");
      if (!s) return NULL;
      Expr *l = new_expr(p, E_LIKE, t);
      l->a = e;
      if (!decode_string(p, s, true, &l->str, &l->len, &l->wild)) return NULL;
      return deep(p, l);
    }
    if (tok_is_kw(t, "is")) {
      tok_next(&p->r);
      Expr *l = new_expr(p, E_IS, t);
      l->a = e;
      l->etype = parse_type_path(p);
      if (!l->etype) return NULL;
      if (tok_is_kw(tok_peek(&p->r), "in")) {
        tok_next(&p->r);
        l->b = parse_add(p);
        if (!l->b) return NULL;
      }
      return deep(p, l);
    }
    return e;
  default: return e;
  }
  tok_next(&p->r);
  Expr *r = parse_add(p);
  if (!r) return NULL;
  return binary(p, k, t, e, r);
}

static Expr *parse_and(Parser *p)
{
  Expr *e = left_chain(p, parse_rel, and_kind);
  if (e && (tok_peek(&p->r)->kind == TOK_AMP || tok_peek(&p->r)->kind == TOK_PIPE)) {
    tok_fail(&p->r, tok_peek(&p->r), "unexpected `%s`; did you mean `%s%s`?",
             policy_tok_name(tok_peek(&p->r)->kind), policy_tok_name(tok_peek(&p->r)->kind),
             policy_tok_name(tok_peek(&p->r)->kind));
    return NULL;
  }
  return p->r.err ? NULL : e;
}

static Expr *parse_or(Parser *p)
{
  return left_chain(p, parse_and, or_kind);
}

static Expr *parse_expr(Parser *p)
{
  if (p->r.err) return NULL;
  if (++p->depth > MAX_DEPTH) {
    tok_fail(&p->r, tok_peek(&p->r), "expression nests too deeply");
    return NULL;
  }
  Expr *e;
  const Token *t = tok_peek(&p->r);
  if (tok_is_kw(t, "if")) {
    tok_next(&p->r);
    e = new_expr(p, E_IF, t);
    e->a = parse_expr(p);
    if (e->a && !tok_is_kw(tok_peek(&p->r), "then"))
      tok_fail_expected(&p->r, tok_peek(&p->r), "`then`");
    else if (e->a)
      tok_next(&p->r);
    if (!p->r.err) e->b = parse_expr(p);
    if (e->b && !tok_is_kw(tok_peek(&p->r), "else"))
      tok_fail_expected(&p->r, tok_peek(&p->r), "`else`");
    else if (e->b)
      tok_next(&p->r);
    if (!p->r.err) e->c = parse_expr(p);
    e = p->r.err ? NULL : deep(p, e);
  } else {
    e = parse_or(p);
  }
  p->depth--;
  return p->r.err ? NULL : e;
}

/* ---- policies --------------------------------------------------------- */

/* The scope's one entity at the cursor, as constraint op. A `?` slot
 * there (where a template could put one) is refused: policies are static. */
static bool scope_entity(Parser *p, ScopeConstraint *sc, ScopeOp op, bool slot_possible)
{
  if (slot_possible && tok_peek(&p->r)->kind == TOK_QUESTION) {
    tok_fail(&p->r, tok_peek(&p->r), "policy is not static: template slots are not supported");
    return false;
  }
  Expr *e = parse_entity_ref(p);
  if (!e) return false;
  sc->op = op;
  sc->ents = policy_own(p->pol, g_new0(Expr *, 1));
  sc->ents[0] = e;
  sc->nents = 1;
  return true;
}

static bool parse_scope_item(Parser *p, Rule *r, bool seen[3])
{
  const Token *v = tok_next(&p->r);
  int which = -1;
  if (tok_is_kw(v, "principal"))
    which = 0;
  else if (tok_is_kw(v, "action"))
    which = 1;
  else if (tok_is_kw(v, "resource"))
    which = 2;
  if (v->kind == TOK_QUESTION) {
    tok_fail(&p->r, v, "policy is not static: template slots are not supported");
    return false;
  }
  if (which < 0 && v->kind == TOK_EOF) {
    tok_fail(&p->r, v, "unexpected end of input; expected `principal`, `action`, or `resource`");
    return false;
  }
  if (which < 0) {
    char *s = tok_show(v);
    tok_fail(&p->r, v,
             "unexpected scope variable %s; expected `principal`, `action`, or `resource`", s);
    g_free(s);
    return false;
  }
  if (seen[which]) {
    tok_fail(&p->r, v, "duplicate `%.*s` in scope", (int)v->len, v->text);
    return false;
  }
  seen[which] = true;
  ScopeConstraint *sc = which == 0 ? &r->principal : which == 1 ? &r->action : &r->resource;
  sc->op = SC_ANY;
  sc->line = v->line;
  sc->col = v->col;
  const Token *op = tok_peek(&p->r);
  if (op->kind == TOK_COMMA || op->kind == TOK_RPAREN) return true;
  if (op->kind == TOK_EQEQ) {
    tok_next(&p->r);
    return scope_entity(p, sc, SC_EQ, true);
  }
  if (tok_is_kw(op, "in")) {
    tok_next(&p->r);
    if (which == 1 && tok_peek(&p->r)->kind == TOK_LBRACKET) {
      tok_next(&p->r);
      GPtrArray *a = g_ptr_array_new();
      while (!p->r.err && tok_peek(&p->r)->kind != TOK_RBRACKET) {
        Expr *e = parse_entity_ref(p);
        if (!e) break;
        g_ptr_array_add(a, e);
        tok_list_sep(&p->r, TOK_RBRACKET, "`,` or `]`");
      }
      if (!p->r.err) tok_next(&p->r);
      sc->op = SC_IN_SET;
      sc->nents = a->len;
      sc->ents = policy_own(p->pol, g_new0(Expr *, a->len + 1));
      for (guint i = 0; i < a->len; i++) sc->ents[i] = a->pdata[i];
      g_ptr_array_free(a, TRUE);
      return !p->r.err;
    }
    return scope_entity(p, sc, which == 1 ? SC_IN_SET : SC_IN, true);
  }
  if (tok_is_kw(op, "is")) {
    if (which == 1) {
      tok_fail(&p->r, op, "`action is` is not allowed in the scope");
      return false;
    }
    tok_next(&p->r);
    sc->is_type = parse_type_path(p);
    if (!sc->is_type) return false;
    sc->op = SC_IS;
    if (tok_is_kw(tok_peek(&p->r), "in")) {
      tok_next(&p->r);
      return scope_entity(p, sc, SC_IS_IN, false);
    }
    return true;
  }
  if (op->kind == TOK_COLON) {
    tok_fail(&p->r, op, "the legacy form `%.*s : Type` is not supported; write `%.*s is Type`",
             (int)v->len, v->text, (int)v->len, v->text);
    return false;
  }
  if (op->kind == TOK_ASSIGN) {
    tok_fail(&p->r, op, "unexpected `=`; did you mean `==`?");
    return false;
  }
  char *s = tok_show(op);
  tok_fail(&p->r, op, "scope only allows `==` or `in`, found %s", s);
  g_free(s);
  return false;
}

static bool blank(const char *s)
{
  if (!s) return true;
  for (; *s; s++)
    if (!g_ascii_isspace(*s)) return false;
  return true;
}

static bool parse_policy(Parser *p, int index)
{
  Rule r = { 0 };
  r.index = index;
  g_ptr_array_set_size(p->inline_tf, 0);
  GArray *anns = g_array_new(FALSE, TRUE, sizeof(Annotation));
  GArray *clauses = g_array_new(FALSE, TRUE, sizeof(Clause));
  while (tok_peek(&p->r)->kind == TOK_AT) {
    const Token *at = tok_next(&p->r);
    const Token *k = tok_next(&p->r);
    if (k->kind != TOK_IDENT) {
      tok_fail_expected(&p->r, k, "an annotation name after `@`");
      goto out;
    }
    Annotation a = { 0 };
    a.key = own_strndup(p, k->text, k->len);
    a.line = at->line;
    a.col = at->col;
    if (tok_peek(&p->r)->kind == TOK_LPAREN) {
      tok_next(&p->r);
      const Token *v = tok_next(&p->r);
      if (v->kind != TOK_STRING) {
        tok_fail_expected(&p->r, v, "a string literal as the annotation value");
        goto out;
      }
      size_t len;
      if (!decode_string(p, v, false, &a.value, &len, NULL)) goto out;
      if (!tok_expect(&p->r, TOK_RPAREN, "`)`")) goto out;
    }
    for (guint i = 0; i < anns->len; i++) {
      if (strcmp(g_array_index(anns, Annotation, i).key, a.key) == 0) {
        tok_fail(&p->r, k, "duplicate annotation `@%s`", a.key);
        goto out;
      }
    }
    g_array_append_val(anns, a);
  }
  const Token *eff = tok_next(&p->r);
  if (tok_is_kw(eff, "permit"))
    r.forbid = false;
  else if (tok_is_kw(eff, "forbid"))
    r.forbid = true;
  else if (tok_is_kw(eff, "def")) {
    tok_fail(&p->r, eff, "macro definitions (`def`) are not supported");
    goto out;
  } else {
    if (eff->kind == TOK_EOF)
      tok_fail(&p->r, eff, "unexpected end of input; expected `permit` or `forbid`");
    else {
      char *s = tok_show(eff);
      tok_fail(&p->r, eff, "policy effect must be `permit` or `forbid`, found %s", s);
      g_free(s);
    }
    goto out;
  }
  r.line = eff->line;
  r.col = eff->col;
  if (!tok_expect(&p->r, TOK_LPAREN, "`(` to open the scope")) goto out;
  bool seen[3] = { false, false, false };
  r.principal.line = r.action.line = r.resource.line = eff->line;
  r.principal.col = r.action.col = r.resource.col = eff->col;
  while (tok_peek(&p->r)->kind != TOK_RPAREN) {
    if (seen[0] && seen[1] && seen[2]) {
      char *s = tok_show(tok_peek(&p->r));
      tok_fail(&p->r, tok_peek(&p->r), "this policy has an extra element in the scope: %s", s);
      g_free(s);
      goto out;
    }
    if (!parse_scope_item(p, &r, seen)) goto out;
    if (!tok_list_sep(&p->r, TOK_RPAREN, "`,` or `)`")) goto out;
  }
  tok_next(&p->r);
  for (;;) {
    const Token *t = tok_peek(&p->r);
    if (t->kind == TOK_SEMI) {
      tok_next(&p->r);
      break;
    }
    if (tok_is_kw(t, "when") || tok_is_kw(t, "unless")) {
      tok_next(&p->r);
      if (tok_is_kw(tok_peek(&p->r),
                    "temporal")) { /* `when temporal { … }` (policy/temporal_parse.c) */
        Clause tc = { tok_is_kw(t, "when"), NULL, true, NULL, NULL };
        tc.tf = policy_temporal_parse(p->pol, &p->r);
        if (!tc.tf) goto out;
        r.has_temporal = true;
        g_array_append_val(clauses, tc);
        continue;
      }
      if (tok_is_kw(tok_peek(&p->r), "guardrails")) {
        tok_fail(&p->r, tok_peek(&p->r),
                 "a `guardrails` clause is not accepted; write `when { ... }`");
        goto out;
      }
      if (!tok_expect(&p->r, TOK_LBRACE, "`{` to open the condition")) goto out;
      Clause c = { tok_is_kw(t, "when"), NULL, false, NULL, NULL };
      c.expr = parse_expr(p);
      if (!c.expr) goto out;
      if (!tok_expect(&p->r, TOK_RBRACE, "`}` to close the condition")) goto out;
      g_array_append_val(clauses, c);
      continue;
    }
    tok_fail_expected(&p->r, t, "`;` to end the policy, or `when`/`unless` to add a condition");
    goto out;
  }
  /* annotations */
  r.engine_id = policy_own(p->pol, g_strdup_printf("policy_%d", index));
  for (guint i = 0; i < anns->len; i++) {
    Annotation *a = &g_array_index(anns, Annotation, i);
    if (strcmp(a->key, "id") == 0 && !blank(a->value)) {
      r.id = a->value;
      r.id_line = a->line;
      r.id_col = a->col;
    } else if (strcmp(a->key, "description") == 0 && !blank(a->value)) {
      r.description = a->value;
    }
  }
  r.label = r.id ? r.id : r.engine_id;
  r.nannotations = anns->len;
  r.annotations = policy_own(p->pol, g_new0(Annotation, anns->len + 1));
  if (anns->len) memcpy(r.annotations, anns->data, sizeof(Annotation) * anns->len);
  r.nclauses = clauses->len;
  r.clauses = policy_own(p->pol, g_new0(Clause, clauses->len + 1));
  if (clauses->len) memcpy(r.clauses, clauses->data, sizeof(Clause) * clauses->len);
  r.ninline_tf = p->inline_tf->len;
  if (r.ninline_tf) {
    r.has_temporal = true;
    r.inline_tf = policy_own(p->pol, g_memdup2(p->inline_tf->pdata, sizeof(void *) * r.ninline_tf));
  }
  g_array_free(anns, TRUE);
  g_array_free(clauses, TRUE);
  p->pol->rules = g_renew(Rule, p->pol->rules, p->pol->nrules + 1);
  p->pol->rules[p->pol->nrules++] = r;
  return true;
out:
  g_array_free(anns, TRUE);
  g_array_free(clauses, TRUE);
  return false;
}

bool policy_parse(BoxPolicy *pol, const char *text, GError **error)
{
  GArray *toks = policy_lex(text, error);
  if (!toks) return false;
  Parser p = { pol, { (const Token *)toks->data, toks->len, 0, NULL, "" },
               0,   0,
               0,   g_ptr_array_new() };
  int index = 0;
  while (tok_peek(&p.r)->kind != TOK_EOF) {
    if (!parse_policy(&p, index++)) break;
  }
  g_ptr_array_free(p.inline_tf, TRUE);
  g_array_free(toks, TRUE);
  if (!p.r.err && p.provider_line)
    g_set_error(&p.r.err, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                POLICY_PROVIDER_ERROR " at line %d, column %d", p.provider_line, p.provider_col);
  if (p.r.err) {
    g_propagate_error(error, p.r.err);
    return false;
  }
  return true;
}
