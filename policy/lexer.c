/* lexer.c — tokens of the policy language (spec/policy.md §1.1), and the
 * token reader both grammars parse with. */
#include "policy/lexer.h"
#include "policy/policy-private.h"

#include <stdarg.h>

#include <string.h>

const char *policy_tok_name(TokKind kind)
{
  switch (kind) {
  case TOK_EOF: return "end of input";
  case TOK_IDENT: return "identifier";
  case TOK_STRING: return "string literal";
  case TOK_INT: return "integer literal";
  case TOK_LPAREN: return "(";
  case TOK_RPAREN: return ")";
  case TOK_LBRACKET: return "[";
  case TOK_RBRACKET: return "]";
  case TOK_LBRACE: return "{";
  case TOK_RBRACE: return "}";
  case TOK_COMMA: return ",";
  case TOK_SEMI: return ";";
  case TOK_COLON: return ":";
  case TOK_COLONCOLON: return "::";
  case TOK_DOT: return ".";
  case TOK_AT: return "@";
  case TOK_QUESTION: return "?";
  case TOK_DOLLAR: return "$";
  case TOK_EQEQ: return "==";
  case TOK_NE: return "!=";
  case TOK_LT: return "<";
  case TOK_LE: return "<=";
  case TOK_GT: return ">";
  case TOK_GE: return ">=";
  case TOK_ASSIGN: return "=";
  case TOK_AND: return "&&";
  case TOK_OR: return "||";
  case TOK_BANG: return "!";
  case TOK_PLUS: return "+";
  case TOK_MINUS: return "-";
  case TOK_STAR: return "*";
  case TOK_SLASH: return "/";
  case TOK_PERCENT: return "%";
  case TOK_PIPE: return "|";
  case TOK_AMP: return "&";
  }
  return "?";
}

typedef struct {
  const char *p;
  int line, col;
} Lx;

static void lx_advance(Lx *lx)
{
  unsigned char c = (unsigned char)*lx->p;
  if (c == '\0') return;
  lx->p++;
  if (c == '\n') {
    lx->line++;
    lx->col = 1;
  } else if ((c & 0xC0) != 0x80) {
    /* count characters, not bytes: continuation bytes do not move the column */
    lx->col++;
  }
}

static bool is_ident_start(char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
static bool is_ident_char(char c)
{
  return is_ident_start(c) || (c >= '0' && c <= '9');
}

GArray *policy_lex(const char *text, GError **error)
{
  GArray *toks = g_array_new(FALSE, TRUE, sizeof(Token));
  Lx lx = { text, 1, 1 };
  for (;;) {
    char c = *lx.p;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
      lx_advance(&lx);
      continue;
    }
    if (c == '/' && lx.p[1] == '/') {
      while (*lx.p && *lx.p != '\n') lx_advance(&lx);
      continue;
    }
    Token t = { 0 };
    t.line = lx.line;
    t.col = lx.col;
    t.text = lx.p;
    if (c == '\0') {
      t.kind = TOK_EOF;
      t.len = 0;
      g_array_append_val(toks, t);
      return toks;
    }
    if (is_ident_start(c)) {
      while (is_ident_char(*lx.p)) lx_advance(&lx);
      t.kind = TOK_IDENT;
      t.len = (size_t)(lx.p - t.text);
      g_array_append_val(toks, t);
      continue;
    }
    if (c >= '0' && c <= '9') {
      uint64_t v = 0;
      bool big = false;
      while (*lx.p >= '0' && *lx.p <= '9') {
        unsigned d = (unsigned)(*lx.p - '0');
        if (v > (UINT64_MAX - d) / 10)
          big = true;
        else
          v = v * 10 + d;
        lx_advance(&lx);
      }
      /* a temporal window `60s`/`1h` lexes as the integer, then the unit */
      bool unit =
        (*lx.p == 's' || *lx.p == 'm' || *lx.p == 'h' || *lx.p == 'd') && !is_ident_char(lx.p[1]);
      if (is_ident_char(*lx.p) && !unit) {
        g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                    POLICY_PARSE_PREFIX "malformed integer literal at line %d, column %d", t.line,
                    t.col);
        g_array_free(toks, TRUE);
        return NULL;
      }
      if (v > (uint64_t)INT64_MAX + 1) big = true;
      t.kind = TOK_INT;
      t.ival = v;
      t.int_big = big;
      t.len = (size_t)(lx.p - t.text);
      g_array_append_val(toks, t);
      continue;
    }
    if (c == '"') {
      lx_advance(&lx);
      t.text = lx.p;
      for (;;) {
        char d = *lx.p;
        if (d == '\0') {
          g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                      POLICY_PARSE_PREFIX "unterminated string literal at line %d, column %d",
                      t.line, t.col);
          g_array_free(toks, TRUE);
          return NULL;
        }
        if (d == '"') break;
        if (d == '\\' && lx.p[1] != '\0') lx_advance(&lx);
        lx_advance(&lx);
      }
      t.kind = TOK_STRING;
      t.len = (size_t)(lx.p - t.text);
      lx_advance(&lx); /* closing quote */
      g_array_append_val(toks, t);
      continue;
    }
    /* punctuation: one character, or two where the second one makes it
     * another token ("::" and ":", "==" and "=") */
    static const char singles[] = "()[]{},;.@?$+-*/%";
    static const TokKind single_kinds[] = { TOK_LPAREN, TOK_RPAREN, TOK_LBRACKET, TOK_RBRACKET,
                                            TOK_LBRACE, TOK_RBRACE, TOK_COMMA,    TOK_SEMI,
                                            TOK_DOT,    TOK_AT,     TOK_QUESTION, TOK_DOLLAR,
                                            TOK_PLUS,   TOK_MINUS,  TOK_STAR,     TOK_SLASH,
                                            TOK_PERCENT };
    static const struct {
      char first, second;
      TokKind one, two;
    } doubles[] = { { ':', ':', TOK_COLON, TOK_COLONCOLON },
                    { '=', '=', TOK_ASSIGN, TOK_EQEQ },
                    { '!', '=', TOK_BANG, TOK_NE },
                    { '<', '=', TOK_LT, TOK_LE },
                    { '>', '=', TOK_GT, TOK_GE },
                    { '&', '&', TOK_AMP, TOK_AND },
                    { '|', '|', TOK_PIPE, TOK_OR } };
    G_STATIC_ASSERT(G_N_ELEMENTS(single_kinds) == sizeof singles - 1);
    size_t w = 0;
    const char *one = strchr(singles, c);
    if (one) {
      t.kind = single_kinds[one - singles];
      w = 1;
    }
    for (size_t i = 0; !w && i < G_N_ELEMENTS(doubles); i++) {
      if (c != doubles[i].first) continue;
      w = lx.p[1] == doubles[i].second ? 2 : 1;
      t.kind = w == 2 ? doubles[i].two : doubles[i].one;
    }
    if (!w) {
      gunichar u = g_utf8_get_char_validated(lx.p, -1);
      char buf[8] = { 0 };
      if (u == (gunichar)-1 || u == (gunichar)-2)
        g_snprintf(buf, sizeof buf, "\\x%02x", (unsigned char)c);
      else
        g_unichar_to_utf8(u, buf);
      g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                  POLICY_PARSE_PREFIX "unexpected character `%s` at line %d, column %d", buf,
                  t.line, t.col);
      g_array_free(toks, TRUE);
      return NULL;
    }
    for (size_t i = 0; i < w; i++) lx_advance(&lx);
    t.len = w;
    g_array_append_val(toks, t);
  }
}

/* ---- the token reader ------------------------------------------------------ */

const Token *tok_next(TokReader *r)
{
  const Token *t = tok_peek(r);
  if (t->kind != TOK_EOF) r->pos++;
  return t;
}

bool tok_is_kw(const Token *t, const char *kw)
{
  return t->kind == TOK_IDENT && t->len == strlen(kw) && memcmp(t->text, kw, t->len) == 0;
}

char *tok_show(const Token *t)
{
  if (t->kind == TOK_EOF) return g_strdup("end of input");
  if (t->kind == TOK_STRING) return g_strdup_printf("`\"%.*s\"`", (int)t->len, t->text);
  return g_strdup_printf("`%.*s`", (int)t->len, t->text);
}

void tok_fail(TokReader *r, const Token *t, const char *fmt, ...)
{
  if (r->err) return;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(&r->err, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
              POLICY_PARSE_PREFIX "%s at line %d, column %d", what, t->line, t->col);
}

void tok_fail_expected(TokReader *r, const Token *t, const char *expected)
{
  g_autofree char *shown = tok_show(t);
  tok_fail(r, t, "unexpected %s%s; expected %s", shown, r->context ? r->context : "", expected);
}

bool tok_expect(TokReader *r, TokKind k, const char *expected)
{
  if (r->err) return false;
  if (tok_peek(r)->kind != k) {
    tok_fail_expected(r, tok_peek(r), expected);
    return false;
  }
  tok_next(r);
  return true;
}

bool tok_list_sep(TokReader *r, TokKind close, const char *expected)
{
  if (tok_peek(r)->kind == TOK_COMMA) {
    tok_next(r);
    return true;
  }
  if (tok_peek(r)->kind == close) return true;
  tok_fail_expected(r, tok_peek(r), expected);
  return false;
}
