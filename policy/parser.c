/* parser.c — recursive-descent parser: tokens → rules and expression ASTs
 * (spec/policy.md §1.2–§1.4), plus the load entry points. */
#include "policy/policy-private.h"
#include "policy/temporal.h" /* issue 9 */

#include <string.h>

G_DEFINE_QUARK(box-policy-error-quark, box_policy_error)

#define MAX_DEPTH 200

typedef struct {
  BoxPolicy *pol;
  const Token *toks;
  size_t ntoks;
  size_t pos;
  GError *err;
  int depth;
  int provider_line, provider_col; /* first information-provider call, refused after parsing */
  GPtrArray *inline_tf; /* the rule being parsed: its inline `temporal { … }` blocks (TFormula*) */
} Parser;

void *policy_own(BoxPolicy *policy, void *p) {
  g_ptr_array_add(policy->allocs, p);
  return p;
}

static const Token *peek(Parser *p) { return &p->toks[p->pos]; }
static const Token *peek2(Parser *p) {
  return &p->toks[p->pos + 1 < p->ntoks ? p->pos + 1 : p->ntoks - 1];
}
static const Token *next(Parser *p) {
  const Token *t = &p->toks[p->pos];
  if (t->kind != TOK_EOF) p->pos++;
  return t;
}
static bool is_kw(const Token *t, const char *kw) {
  return t->kind == TOK_IDENT && t->len == strlen(kw) && memcmp(t->text, kw, t->len) == 0;
}

static void fail_at(Parser *p, const Token *t, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void fail_at(Parser *p, const Token *t, const char *fmt, ...) {
  if (p->err) return;
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(&p->err, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
              POLICY_PARSE_PREFIX "%s at line %d, column %d", what, t->line, t->col);
  g_free(what);
}

/* "`x`" for a token, or "end of input". */
static char *tok_show(const Token *t) {
  if (t->kind == TOK_EOF) return g_strdup("end of input");
  if (t->kind == TOK_STRING) return g_strdup_printf("`\"%.*s\"`", (int)t->len, t->text);
  return g_strdup_printf("`%.*s`", (int)t->len, t->text);
}

static void fail_expected(Parser *p, const Token *t, const char *expected) {
  char *s = tok_show(t);
  if (t->kind == TOK_EOF) fail_at(p, t, "unexpected end of input; expected %s", expected);
  else fail_at(p, t, "unexpected %s; expected %s", s, expected);
  g_free(s);
}

static bool expect(Parser *p, TokKind k, const char *expected) {
  if (p->err) return false;
  if (peek(p)->kind != k) {
    fail_expected(p, peek(p), expected);
    return false;
  }
  next(p);
  return true;
}

static char *own_strndup(Parser *p, const char *s, size_t n) {
  return policy_own(p->pol, g_strndup(s, n));
}

static Expr *new_expr(Parser *p, ExprKind k, const Token *at) {
  Expr *e = policy_own(p->pol, g_new0(Expr, 1));
  e->kind = k;
  e->line = at->line;
  e->col = at->col;
  return e;
}

#define MAX_TREE_DEPTH 400

/* Records e's height and refuses trees too deep to evaluate on a thread's
 * stack (left-deep chains such as a && b && c ... are built by loops). */
static Expr *deep(Parser *p, Expr *e) {
  if (!e) return NULL;
  int d = 0;
  const Expr *kids[3] = {e->a, e->b, e->c};
  for (int i = 0; i < 3; i++)
    if (kids[i] && kids[i]->height > d) d = kids[i]->height;
  for (size_t i = 0; e->items && i < e->nitems; i++)
    if (e->items[i]->height > d) d = e->items[i]->height;
  e->height = d + 1;
  if (e->height > MAX_TREE_DEPTH) {
    if (!p->err)
      g_set_error(&p->err, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                  POLICY_PARSE_PREFIX "expression nests too deeply at line %d, column %d", e->line, e->col);
    return NULL;
  }
  return e;
}

/* Decodes a string literal body (§1.1 escapes).  In pattern mode an
 * unescaped `*` is a wildcard and `\*` a literal star; *wild receives a
 * per-byte wildcard map. */
static bool decode_string(Parser *p, const Token *t, bool pattern, char **out, size_t *outlen,
                          unsigned char **wild) {
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
      default:
        fail_at(p, t, "invalid escape `\\%c` in string literal", e ? e : ' ');
        goto bad;
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
        fail_at(p, t, "invalid unicode escape in string literal; write `\\u{HEX}`");
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
      if (h >= end || *h != '}' || nd == 0 || nd > 6 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        fail_at(p, t, "invalid unicode escape in string literal; write `\\u{HEX}` with 1 to 6 hex digits naming a Unicode scalar value");
        goto bad;
      }
      char buf[8];
      int n = g_unichar_to_utf8(v, buf);
      g_string_append_len(s, buf, n);
      if (w) {
        guint8 z[8] = {0};
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

static const char *const reserved_words[] = {"true", "false", "if", "then", "else", "in",
                                             "is", "like", "has", "__cedar", NULL};
static bool is_reserved(const Token *t) {
  for (int i = 0; reserved_words[i]; i++)
    if (is_kw(t, reserved_words[i])) return true;
  return false;
}

/* Parses `A::B::"id"` where the first identifier is at the cursor. */
static Expr *parse_entity_ref(Parser *p) {
  const Token *first = peek(p);
  GString *type = g_string_new(NULL);
  for (;;) {
    const Token *id = peek(p);
    if (id->kind != TOK_IDENT) {
      fail_expected(p, id, "an identifier or a quoted entity id");
      g_string_free(type, TRUE);
      return NULL;
    }
    next(p);
    if (type->len) g_string_append(type, "::");
    g_string_append_len(type, id->text, id->len);
    if (!expect(p, TOK_COLONCOLON, "`::`")) {
      g_string_free(type, TRUE);
      return NULL;
    }
    if (peek(p)->kind == TOK_STRING) break;
    if (peek(p)->kind == TOK_LBRACE) {
      fail_at(p, peek(p), "entity initializers `Type::{...}` are not supported");
      g_string_free(type, TRUE);
      return NULL;
    }
  }
  const Token *st = next(p);
  Expr *e = new_expr(p, E_ENTITY, first);
  e->etype = policy_own(p->pol, g_string_free(type, FALSE));
  if (!decode_string(p, st, false, &e->str, &e->len, NULL)) return NULL;
  if (memchr(e->str, '\0', e->len)) {
    /* ids are compared as C strings below; keep them NUL-free */
    fail_at(p, st, "entity id contains a NUL character");
    return NULL;
  }
  return e;
}

static Expr *parse_expr(Parser *p);

static Expr **parse_list(Parser *p, TokKind close, size_t *n) {
  GPtrArray *a = g_ptr_array_new();
  while (!p->err && peek(p)->kind != close) {
    Expr *e = parse_expr(p);
    if (!e) break;
    g_ptr_array_add(a, e);
    if (peek(p)->kind == TOK_COMMA) {
      next(p);
      continue;
    }
    if (peek(p)->kind != close) {
      fail_expected(p, peek(p), close == TOK_RBRACKET ? "`,` or `]`" : "`,` or `)`");
      break;
    }
  }
  if (!p->err) next(p); /* close */
  *n = a->len;
  Expr **items = policy_own(p->pol, g_new0(Expr *, a->len + 1));
  for (guint i = 0; i < a->len; i++) items[i] = a->pdata[i];
  g_ptr_array_free(a, TRUE);
  return p->err ? NULL : items;
}

static Expr *parse_primary(Parser *p) {
  const Token *t = peek(p);
  switch (t->kind) {
  case TOK_INT: {
    next(p);
    if (t->int_big || t->ival > (uint64_t)INT64_MAX) {
      fail_at(p, t, "integer literal `%.*s` is out of range", (int)t->len, t->text);
      return NULL;
    }
    Expr *e = new_expr(p, E_LONG, t);
    e->lval = (int64_t)t->ival;
    return e;
  }
  case TOK_STRING: {
    next(p);
    Expr *e = new_expr(p, E_STRING, t);
    if (!decode_string(p, t, false, &e->str, &e->len, NULL)) return NULL;
    return e;
  }
  case TOK_LPAREN: {
    next(p);
    Expr *e = parse_expr(p);
    if (!e || !expect(p, TOK_RPAREN, "`)`")) return NULL;
    return e;
  }
  case TOK_LBRACKET: {
    next(p);
    Expr *e = new_expr(p, E_SET, t);
    e->items = parse_list(p, TOK_RBRACKET, &e->nitems);
    return p->err ? NULL : deep(p, e);
  }
  case TOK_LBRACE: {
    next(p);
    Expr *e = new_expr(p, E_RECORD, t);
    GPtrArray *keys = g_ptr_array_new(), *vals = g_ptr_array_new();
    while (!p->err && peek(p)->kind != TOK_RBRACE) {
      const Token *k = next(p);
      char *key = NULL;
      size_t klen = 0;
      if (k->kind == TOK_IDENT) key = own_strndup(p, k->text, k->len);
      else if (k->kind == TOK_STRING) {
        if (!decode_string(p, k, false, &key, &klen, NULL)) break;
      } else {
        fail_expected(p, k, "a record key");
        break;
      }
      for (guint i = 0; i < keys->len; i++)
        if (strcmp(keys->pdata[i], key) == 0) fail_at(p, k, "duplicate key `%s` in record literal", key);
      if (!expect(p, TOK_COLON, "`:`")) break;
      Expr *v = parse_expr(p);
      if (!v) break;
      g_ptr_array_add(keys, key);
      g_ptr_array_add(vals, v);
      if (peek(p)->kind == TOK_COMMA) next(p);
      else if (peek(p)->kind != TOK_RBRACE) fail_expected(p, peek(p), "`,` or `}`");
    }
    if (!p->err) next(p);
    e->nitems = keys->len;
    e->keys = policy_own(p->pol, g_new0(char *, keys->len + 1));
    e->items = policy_own(p->pol, g_new0(Expr *, keys->len + 1));
    for (guint i = 0; i < keys->len; i++) {
      e->keys[i] = keys->pdata[i];
      e->items[i] = vals->pdata[i];
    }
    g_ptr_array_free(keys, TRUE);
    g_ptr_array_free(vals, TRUE);
    return p->err ? NULL : deep(p, e);
  }
  case TOK_IDENT: {
    if (is_kw(t, "true") || is_kw(t, "false")) {
      next(p);
      Expr *e = new_expr(p, E_BOOL, t);
      e->bval = is_kw(t, "true");
      return e;
    }
    if (is_kw(t, "if")) return parse_expr(p);
    if (peek2(p)->kind == TOK_COLONCOLON) {
      /* Ns::Fn(args) is an information provider call */
      size_t q = p->pos;
      while (q + 2 < p->ntoks && p->toks[q].kind == TOK_IDENT && p->toks[q + 1].kind == TOK_COLONCOLON &&
             p->toks[q + 2].kind == TOK_IDENT)
        q += 2;
      if (q + 1 < p->ntoks && p->toks[q].kind == TOK_IDENT && p->toks[q + 1].kind == TOK_LPAREN) {
        if (!p->provider_line) {
          p->provider_line = t->line;
          p->provider_col = t->col;
        }
        p->pos = q + 2;
        size_t nargs = 0;
        parse_list(p, TOK_RPAREN, &nargs);
        if (p->err) return NULL;
        Expr *e = new_expr(p, E_BOOL, t);
        e->bval = true;
        return e;
      }
      return parse_entity_ref(p);
    }
    if (is_kw(t, "temporal") && peek2(p)->kind == TOK_LBRACE) {
      /* inline `temporal { … }`, a Bool primary (§1.3, §2.1) */
      struct TFormula *tf = policy_temporal_parse(p->pol, p->toks, p->ntoks, &p->pos, &p->err);
      if (!tf) return NULL;
      Expr *e = new_expr(p, E_TEMPORAL, t);
      e->tf = tf;
      g_ptr_array_add(p->inline_tf, tf);
      return e;
    }
    if (peek2(p)->kind == TOK_LPAREN) {
      static const char *const exts[] = {"decimal", "ip", "datetime", "duration"};
      for (int i = 0; i < 4; i++) {
        if (!is_kw(t, exts[i])) continue;
        next(p);
        const Token *lp = next(p);
        size_t nargs = 0;
        Expr **args = parse_list(p, TOK_RPAREN, &nargs);
        if (p->err) return NULL;
        if (nargs != 1) {
          fail_at(p, lp, "`%s` takes 1 argument, found %zu", exts[i], nargs);
          return NULL;
        }
        Expr *e = new_expr(p, E_EXT, t);
        e->ext = (ExtKind)i;
        e->str = (char *)exts[i];
        e->a = args[0];
        return deep(p, e);
      }
      fail_at(p, t, "unknown function `%.*s`", (int)t->len, t->text);
      return NULL;
    }
    static const char *const vars[] = {"principal", "action", "resource", "context"};
    for (int i = 0; i < 4; i++) {
      if (is_kw(t, vars[i])) {
        next(p);
        Expr *e = new_expr(p, E_VAR, t);
        e->var = (VarKind)i;
        return e;
      }
    }
    fail_at(p, t, "`%.*s` is not a valid variable", (int)t->len, t->text);
    return NULL;
  }
  case TOK_QUESTION:
    fail_at(p, t, "policy is not static: template slots are not supported");
    return NULL;
  default:
    fail_expected(p, t, "an expression");
    return NULL;
  }
}

static Expr *parse_member(Parser *p) {
  Expr *e = parse_primary(p);
  while (e && !p->err) {
    const Token *t = peek(p);
    if (t->kind == TOK_DOT) {
      next(p);
      const Token *name = next(p);
      if (name->kind != TOK_IDENT) {
        fail_expected(p, name, "an attribute name or method after `.`");
        return NULL;
      }
      if (peek(p)->kind == TOK_LPAREN) {
        const Token *lp = next(p);
        Expr *m = new_expr(p, E_METHOD, name);
        m->a = e;
        size_t nargs = 0;
        Expr **args = parse_list(p, TOK_RPAREN, &nargs);
        if (p->err) return NULL;
        static const struct { const char *name; MethodKind m; size_t args; } methods[] = {
            {"contains", M_CONTAINS, 1}, {"containsAll", M_CONTAINS_ALL, 1},
            {"containsAny", M_CONTAINS_ANY, 1}, {"isEmpty", M_IS_EMPTY, 0},
            {"lessThan", M_LESS_THAN, 1}, {"lessThanOrEqual", M_LESS_THAN_OR_EQUAL, 1},
            {"greaterThan", M_GREATER_THAN, 1}, {"greaterThanOrEqual", M_GREATER_THAN_OR_EQUAL, 1},
            {"isIpv4", M_IS_IPV4, 0}, {"isIpv6", M_IS_IPV6, 0}, {"isLoopback", M_IS_LOOPBACK, 0},
            {"isMulticast", M_IS_MULTICAST, 0}, {"isInRange", M_IS_IN_RANGE, 1},
            {"offset", M_OFFSET, 1}, {"durationSince", M_DURATION_SINCE, 1}, {"toDate", M_TO_DATE, 0},
            {"toTime", M_TO_TIME, 0}, {"toMilliseconds", M_TO_MILLISECONDS, 0},
            {"toSeconds", M_TO_SECONDS, 0}, {"toMinutes", M_TO_MINUTES, 0}, {"toHours", M_TO_HOURS, 0},
            {"toDays", M_TO_DAYS, 0}, {"getTag", M_GET_TAG, 1}, {"hasTag", M_HAS_TAG, 1},
        };
        size_t want = 0;
        bool found = false;
        for (size_t i = 0; i < G_N_ELEMENTS(methods); i++) {
          if (is_kw(name, methods[i].name)) {
            m->method = methods[i].m;
            want = methods[i].args;
            found = true;
            break;
          }
        }
        if (!found) {
          fail_at(p, name, "`%.*s` is not a supported method", (int)name->len, name->text);
          return NULL;
        }
        if (nargs != want) {
          fail_at(p, lp, "`%.*s` takes %zu argument%s, found %zu", (int)name->len, name->text, want,
                  want == 1 ? "" : "s", nargs);
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
      next(p);
      const Token *k = next(p);
      if (k->kind != TOK_STRING) {
        fail_at(p, k, "an index `[...]` must be a string literal");
        return NULL;
      }
      Expr *g = new_expr(p, E_GETATTR, k);
      g->a = e;
      if (!decode_string(p, k, false, &g->str, &g->len, NULL)) return NULL;
      if (!expect(p, TOK_RBRACKET, "`]`")) return NULL;
      e = deep(p, g);
      if (!e) return NULL;
    } else {
      break;
    }
  }
  return p->err ? NULL : e;
}

static Expr *parse_unary(Parser *p) {
  const Token *t = peek(p);
  if (t->kind == TOK_BANG || t->kind == TOK_MINUS) {
    TokKind k = t->kind;
    size_t n = 0;
    while (peek(p)->kind == k) {
      next(p);
      n++;
    }
    if (peek(p)->kind == TOK_BANG || peek(p)->kind == TOK_MINUS) {
      fail_at(p, peek(p), "unary operators `!` and `-` cannot be mixed");
      return NULL;
    }
    Expr *e;
    if (k == TOK_MINUS && peek(p)->kind == TOK_INT) {
      /* a negative literal: -9223372036854775808 is i64::MIN */
      const Token *lit = next(p);
      if (lit->int_big) {
        fail_at(p, lit, "integer literal `-%.*s` is out of range", (int)lit->len, lit->text);
        return NULL;
      }
      e = new_expr(p, E_LONG, t);
      e->lval = lit->ival == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)lit->ival;
      n--;
      /* member access on the literal (rare) */
      while (peek(p)->kind == TOK_DOT || peek(p)->kind == TOK_LBRACKET) {
        fail_at(p, peek(p), "unexpected member access on an integer literal");
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

static Expr *parse_mul(Parser *p) {
  Expr *e = parse_unary(p);
  while (e && !p->err) {
    const Token *t = peek(p);
    if (t->kind == TOK_SLASH || t->kind == TOK_PERCENT) {
      fail_at(p, t, "`%s` is not a supported operator", t->kind == TOK_SLASH ? "/" : "%");
      return NULL;
    }
    if (t->kind != TOK_STAR) break;
    next(p);
    Expr *r = parse_unary(p);
    if (!r) return NULL;
    Expr *m = new_expr(p, E_MUL, t);
    m->a = e;
    m->b = r;
    e = deep(p, m);
    if (!e) return NULL;
  }
  return p->err ? NULL : e;
}

static Expr *parse_add(Parser *p) {
  Expr *e = parse_mul(p);
  while (e && !p->err) {
    const Token *t = peek(p);
    if (t->kind != TOK_PLUS && t->kind != TOK_MINUS) break;
    next(p);
    Expr *r = parse_mul(p);
    if (!r) return NULL;
    Expr *m = new_expr(p, t->kind == TOK_PLUS ? E_ADD : E_SUB, t);
    m->a = e;
    m->b = r;
    e = deep(p, m);
    if (!e) return NULL;
  }
  return p->err ? NULL : e;
}

static char *parse_type_path(Parser *p) {
  GString *s = g_string_new(NULL);
  for (;;) {
    const Token *id = next(p);
    if (id->kind != TOK_IDENT) {
      fail_expected(p, id, "an entity type");
      g_string_free(s, TRUE);
      return NULL;
    }
    if (s->len) g_string_append(s, "::");
    g_string_append_len(s, id->text, id->len);
    if (peek(p)->kind != TOK_COLONCOLON) break;
    next(p);
  }
  return policy_own(p->pol, g_string_free(s, FALSE));
}

static Expr *parse_rel(Parser *p) {
  Expr *e = parse_add(p);
  if (!e || p->err) return NULL;
  const Token *t = peek(p);
  ExprKind k;
  switch (t->kind) {
  case TOK_EQEQ: k = E_EQ; break;
  case TOK_NE: k = E_NE; break;
  case TOK_LT: k = E_LT; break;
  case TOK_LE: k = E_LE; break;
  case TOK_GT: k = E_GT; break;
  case TOK_GE: k = E_GE; break;
  case TOK_ASSIGN:
    fail_at(p, t, "unexpected `=`; did you mean `==`?");
    return NULL;
  case TOK_IDENT:
    if (is_kw(t, "in")) { k = E_IN; break; }
    if (is_kw(t, "has")) {
      next(p);
      Expr *h = new_expr(p, E_HAS, t);
      h->a = e;
      GPtrArray *path = g_ptr_array_new();
      const Token *n = next(p);
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
        while (peek(p)->kind == TOK_DOT) {
          next(p);
          const Token *m = next(p);
          if (m->kind != TOK_IDENT || is_reserved(m)) {
            fail_expected(p, m, "an attribute name");
            break;
          }
          g_ptr_array_add(path, own_strndup(p, m->text, m->len));
        }
      } else {
        fail_expected(p, n, "an attribute name or string after `has`");
      }
      h->nitems = path->len;
      h->keys = policy_own(p->pol, g_new0(char *, path->len + 1));
      for (guint i = 0; i < path->len; i++) h->keys[i] = path->pdata[i];
      g_ptr_array_free(path, TRUE);
      return p->err ? NULL : deep(p, h);
    }
    if (is_kw(t, "like")) {
      next(p);
      const Token *s = next(p);
      if (s->kind != TOK_STRING) {
        fail_at(p, s, "the pattern after `like` must be a string literal");
        return NULL;
      }
      Expr *l = new_expr(p, E_LIKE, t);
      l->a = e;
      if (!decode_string(p, s, true, &l->str, &l->len, &l->wild)) return NULL;
      return deep(p, l);
    }
    if (is_kw(t, "is")) {
      next(p);
      Expr *l = new_expr(p, E_IS, t);
      l->a = e;
      l->etype = parse_type_path(p);
      if (!l->etype) return NULL;
      if (is_kw(peek(p), "in")) {
        next(p);
        l->b = parse_add(p);
        if (!l->b) return NULL;
      }
      return deep(p, l);
    }
    return e;
  default:
    return e;
  }
  next(p);
  Expr *r = parse_add(p);
  if (!r) return NULL;
  Expr *m = new_expr(p, k, t);
  m->a = e;
  m->b = r;
  return deep(p, m);
}

static Expr *parse_and(Parser *p) {
  Expr *e = parse_rel(p);
  while (e && !p->err && peek(p)->kind == TOK_AND) {
    const Token *t = next(p);
    Expr *r = parse_rel(p);
    if (!r) return NULL;
    Expr *m = new_expr(p, E_AND, t);
    m->a = e;
    m->b = r;
    e = deep(p, m);
    if (!e) return NULL;
  }
  if (e && (peek(p)->kind == TOK_AMP || peek(p)->kind == TOK_PIPE)) {
    fail_at(p, peek(p), "unexpected `%s`; did you mean `%s%s`?", policy_tok_name(peek(p)->kind),
            policy_tok_name(peek(p)->kind), policy_tok_name(peek(p)->kind));
    return NULL;
  }
  return p->err ? NULL : e;
}

static Expr *parse_or(Parser *p) {
  Expr *e = parse_and(p);
  while (e && !p->err && peek(p)->kind == TOK_OR) {
    const Token *t = next(p);
    Expr *r = parse_and(p);
    if (!r) return NULL;
    Expr *m = new_expr(p, E_OR, t);
    m->a = e;
    m->b = r;
    e = deep(p, m);
    if (!e) return NULL;
  }
  return p->err ? NULL : e;
}

static Expr *parse_expr(Parser *p) {
  if (p->err) return NULL;
  if (++p->depth > MAX_DEPTH) {
    fail_at(p, peek(p), "expression nests too deeply");
    return NULL;
  }
  Expr *e;
  const Token *t = peek(p);
  if (is_kw(t, "if")) {
    next(p);
    e = new_expr(p, E_IF, t);
    e->a = parse_expr(p);
    if (e->a && !is_kw(peek(p), "then")) fail_expected(p, peek(p), "`then`");
    else if (e->a) next(p);
    if (!p->err) e->b = parse_expr(p);
    if (e->b && !is_kw(peek(p), "else")) fail_expected(p, peek(p), "`else`");
    else if (e->b) next(p);
    if (!p->err) e->c = parse_expr(p);
    e = p->err ? NULL : deep(p, e);
  } else {
    e = parse_or(p);
  }
  p->depth--;
  return p->err ? NULL : e;
}

/* ---- policies --------------------------------------------------------- */

static bool parse_scope_item(Parser *p, Rule *r, bool seen[3]) {
  const Token *v = next(p);
  int which = -1;
  if (is_kw(v, "principal")) which = 0;
  else if (is_kw(v, "action")) which = 1;
  else if (is_kw(v, "resource")) which = 2;
  if (v->kind == TOK_QUESTION) {
    fail_at(p, v, "policy is not static: template slots are not supported");
    return false;
  }
  if (which < 0 && v->kind == TOK_EOF) {
    fail_at(p, v, "unexpected end of input; expected `principal`, `action`, or `resource`");
    return false;
  }
  if (which < 0) {
    char *s = tok_show(v);
    fail_at(p, v, "unexpected scope variable %s; expected `principal`, `action`, or `resource`", s);
    g_free(s);
    return false;
  }
  if (seen[which]) {
    fail_at(p, v, "duplicate `%.*s` in scope", (int)v->len, v->text);
    return false;
  }
  seen[which] = true;
  ScopeConstraint *sc = which == 0 ? &r->principal : which == 1 ? &r->action : &r->resource;
  sc->op = SC_ANY;
  sc->line = v->line;
  sc->col = v->col;
  const Token *op = peek(p);
  if (op->kind == TOK_COMMA || op->kind == TOK_RPAREN) return true;
  if (op->kind == TOK_EQEQ) {
    next(p);
    if (peek(p)->kind == TOK_QUESTION) {
      fail_at(p, peek(p), "policy is not static: template slots are not supported");
      return false;
    }
    Expr *e = parse_entity_ref(p);
    if (!e) return false;
    sc->op = SC_EQ;
    sc->ents = policy_own(p->pol, g_new0(Expr *, 1));
    sc->ents[0] = e;
    sc->nents = 1;
    return true;
  }
  if (is_kw(op, "in")) {
    next(p);
    if (which == 1 && peek(p)->kind == TOK_LBRACKET) {
      next(p);
      GPtrArray *a = g_ptr_array_new();
      while (!p->err && peek(p)->kind != TOK_RBRACKET) {
        Expr *e = parse_entity_ref(p);
        if (!e) break;
        g_ptr_array_add(a, e);
        if (peek(p)->kind == TOK_COMMA) next(p);
        else if (peek(p)->kind != TOK_RBRACKET) fail_expected(p, peek(p), "`,` or `]`");
      }
      if (!p->err) next(p);
      sc->op = SC_IN_SET;
      sc->nents = a->len;
      sc->ents = policy_own(p->pol, g_new0(Expr *, a->len + 1));
      for (guint i = 0; i < a->len; i++) sc->ents[i] = a->pdata[i];
      g_ptr_array_free(a, TRUE);
      return !p->err;
    }
    if (peek(p)->kind == TOK_QUESTION) {
      fail_at(p, peek(p), "policy is not static: template slots are not supported");
      return false;
    }
    Expr *e = parse_entity_ref(p);
    if (!e) return false;
    sc->op = which == 1 ? SC_IN_SET : SC_IN;
    sc->ents = policy_own(p->pol, g_new0(Expr *, 1));
    sc->ents[0] = e;
    sc->nents = 1;
    return true;
  }
  if (is_kw(op, "is")) {
    if (which == 1) {
      fail_at(p, op, "`action is` is not allowed in the scope");
      return false;
    }
    next(p);
    sc->is_type = parse_type_path(p);
    if (!sc->is_type) return false;
    sc->op = SC_IS;
    if (is_kw(peek(p), "in")) {
      next(p);
      Expr *e = parse_entity_ref(p);
      if (!e) return false;
      sc->op = SC_IS_IN;
      sc->ents = policy_own(p->pol, g_new0(Expr *, 1));
      sc->ents[0] = e;
      sc->nents = 1;
    }
    return true;
  }
  if (op->kind == TOK_COLON) {
    fail_at(p, op, "the legacy form `%.*s : Type` is not supported; write `%.*s is Type`",
            (int)v->len, v->text, (int)v->len, v->text);
    return false;
  }
  if (op->kind == TOK_ASSIGN) {
    fail_at(p, op, "unexpected `=`; did you mean `==`?");
    return false;
  }
  char *s = tok_show(op);
  fail_at(p, op, "scope only allows `==` or `in`, found %s", s);
  g_free(s);
  return false;
}

static bool blank(const char *s) {
  if (!s) return true;
  for (; *s; s++)
    if (!g_ascii_isspace(*s)) return false;
  return true;
}

static bool parse_policy(Parser *p, int index) {
  Rule r = {0};
  r.index = index;
  g_ptr_array_set_size(p->inline_tf, 0);
  GArray *anns = g_array_new(FALSE, TRUE, sizeof(Annotation));
  GArray *clauses = g_array_new(FALSE, TRUE, sizeof(Clause));
  while (peek(p)->kind == TOK_AT) {
    const Token *at = next(p);
    const Token *k = next(p);
    if (k->kind != TOK_IDENT) {
      fail_expected(p, k, "an annotation name after `@`");
      goto out;
    }
    Annotation a = {0};
    a.key = own_strndup(p, k->text, k->len);
    a.line = at->line;
    a.col = at->col;
    if (peek(p)->kind == TOK_LPAREN) {
      next(p);
      const Token *v = next(p);
      if (v->kind != TOK_STRING) {
        fail_expected(p, v, "a string literal as the annotation value");
        goto out;
      }
      size_t len;
      if (!decode_string(p, v, false, &a.value, &len, NULL)) goto out;
      if (!expect(p, TOK_RPAREN, "`)`")) goto out;
    }
    for (guint i = 0; i < anns->len; i++) {
      if (strcmp(g_array_index(anns, Annotation, i).key, a.key) == 0) {
        fail_at(p, k, "duplicate annotation `@%s`", a.key);
        goto out;
      }
    }
    g_array_append_val(anns, a);
  }
  const Token *eff = next(p);
  if (is_kw(eff, "permit")) r.forbid = false;
  else if (is_kw(eff, "forbid")) r.forbid = true;
  else if (is_kw(eff, "def")) {
    fail_at(p, eff, "macro definitions (`def`) are not supported");
    goto out;
  } else {
    if (eff->kind == TOK_EOF) fail_at(p, eff, "unexpected end of input; expected `permit` or `forbid`");
    else {
      char *s = tok_show(eff);
      fail_at(p, eff, "policy effect must be `permit` or `forbid`, found %s", s);
      g_free(s);
    }
    goto out;
  }
  r.line = eff->line;
  r.col = eff->col;
  if (!expect(p, TOK_LPAREN, "`(` to open the scope")) goto out;
  bool seen[3] = {false, false, false};
  r.principal.line = r.action.line = r.resource.line = eff->line;
  r.principal.col = r.action.col = r.resource.col = eff->col;
  while (peek(p)->kind != TOK_RPAREN) {
    if (seen[0] && seen[1] && seen[2]) {
      char *s = tok_show(peek(p));
      fail_at(p, peek(p), "this policy has an extra element in the scope: %s", s);
      g_free(s);
      goto out;
    }
    if (!parse_scope_item(p, &r, seen)) goto out;
    if (peek(p)->kind == TOK_COMMA) next(p);
    else if (peek(p)->kind != TOK_RPAREN) {
      fail_expected(p, peek(p), "`,` or `)`");
      goto out;
    }
  }
  next(p);
  for (;;) {
    const Token *t = peek(p);
    if (t->kind == TOK_SEMI) {
      next(p);
      break;
    }
    if (is_kw(t, "when") || is_kw(t, "unless")) {
      next(p);
      if (is_kw(peek(p), "temporal")) { /* issue 9: `when temporal { … }` (policy/temporal_parse.c) */
        Clause tc = {is_kw(t, "when"), NULL, true, NULL, NULL};
        tc.tf = policy_temporal_parse(p->pol, p->toks, p->ntoks, &p->pos, &p->err);
        if (!tc.tf) goto out;
        r.has_temporal = true;
        g_array_append_val(clauses, tc);
        continue;
      }
      if (is_kw(peek(p), "guardrails")) {
        fail_at(p, peek(p), "a `guardrails` clause is not accepted; write `when { ... }`");
        goto out;
      }
      if (!expect(p, TOK_LBRACE, "`{` to open the condition")) goto out;
      Clause c = {is_kw(t, "when"), NULL, false, NULL, NULL};
      c.expr = parse_expr(p);
      if (!c.expr) goto out;
      if (!expect(p, TOK_RBRACE, "`}` to close the condition")) goto out;
      g_array_append_val(clauses, c);
      continue;
    }
    fail_expected(p, t, "`;` to end the policy, or `when`/`unless` to add a condition");
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

static BoxPolicy *policy_alloc(void) {
  BoxPolicy *pol = g_new0(BoxPolicy, 1);
  pol->allocs = g_ptr_array_new_with_free_func(g_free);
  pol->warnings = g_ptr_array_new_with_free_func(g_free);
  return pol;
}

BoxPolicy *box_policy_new_empty(void) { return policy_alloc(); }

void box_policy_free(BoxPolicy *policy) {
  if (!policy) return;
  policy_temporal_free(policy); /* issue 9 */
  g_free(policy->rules);
  g_ptr_array_free(policy->allocs, TRUE);
  g_ptr_array_free(policy->warnings, TRUE);
  g_free(policy);
}

const GPtrArray *box_policy_warnings(const BoxPolicy *policy) { return policy->warnings; }

BoxPolicy *box_policy_load_string(const char *text, const char *operator_home, GError **error) {
  g_return_val_if_fail(text != NULL, NULL);
  if (!g_utf8_validate(text, -1, NULL)) {
    const char *end = NULL;
    g_utf8_validate(text, -1, &end);
    int line = 1, col = 1;
    for (const char *q = text; q < end; q++) {
      if (*q == '\n') { line++; col = 1; }
      else if (((unsigned char)*q & 0xC0) != 0x80) col++;
    }
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                POLICY_PARSE_PREFIX "the policy source is not valid UTF-8 at line %d, column %d", line, col);
    return NULL;
  }
  GArray *toks = policy_lex(text, error);
  if (!toks) return NULL;
  BoxPolicy *pol = policy_alloc();
  Parser p = {pol, (const Token *)toks->data, toks->len, 0, NULL, 0, 0, 0, g_ptr_array_new()};
  int index = 0;
  while (peek(&p)->kind != TOK_EOF) {
    if (!parse_policy(&p, index++)) break;
  }
  g_ptr_array_free(p.inline_tf, TRUE);
  g_array_free(toks, TRUE);
  if (!p.err && p.provider_line)
    g_set_error(&p.err, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE, POLICY_PROVIDER_ERROR " at line %d, column %d",
                p.provider_line, p.provider_col);
  if (p.err) {
    g_propagate_error(error, p.err);
    box_policy_free(pol);
    return NULL;
  }
  if (!policy_validate(pol, operator_home, error)) {
    box_policy_free(pol);
    return NULL;
  }
  return pol;
}

BoxPolicy *box_policy_load_file(const char *path, const char *operator_home, GError **error) {
  char *text = NULL;
  gsize len = 0;
  GError *e = NULL;
  if (!g_file_get_contents(path, &text, &len, &e)) {
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO, "cannot read the policy file: %s", e->message);
    g_error_free(e);
    return NULL;
  }
  const char *nul = memchr(text, '\0', len);
  if (nul) {
    int line = 1, col = 1;
    for (const char *q = text; q < nul; q++) {
      if (*q == '\n') { line++; col = 1; }
      else if (((unsigned char)*q & 0xC0) != 0x80) col++;
    }
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                POLICY_PARSE_PREFIX "the policy source contains a NUL byte at line %d, column %d", line, col);
    g_free(text);
    return NULL;
  }
  BoxPolicy *pol = box_policy_load_string(text, operator_home, error);
  g_free(text);
  return pol;
}
