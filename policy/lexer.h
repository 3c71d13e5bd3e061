/* lexer.h — the tokens of the policy language and the one reader both parsers use. */
#ifndef BOX_POLICY_LEXER_H
#define BOX_POLICY_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

typedef enum {
  TOK_EOF,
  TOK_IDENT,
  TOK_STRING, /* text/len = raw body between the quotes, still escaped */
  TOK_INT,    /* ival; int_big when the digits exceed 2^63 */
  TOK_LPAREN,
  TOK_RPAREN,
  TOK_LBRACKET,
  TOK_RBRACKET,
  TOK_LBRACE,
  TOK_RBRACE,
  TOK_COMMA,
  TOK_SEMI,
  TOK_COLON,
  TOK_COLONCOLON,
  TOK_DOT,
  TOK_AT,
  TOK_QUESTION,
  TOK_DOLLAR,
  TOK_EQEQ,
  TOK_NE,
  TOK_LT,
  TOK_LE,
  TOK_GT,
  TOK_GE,
  TOK_ASSIGN,
  TOK_AND,
  TOK_OR,
  TOK_BANG,
  TOK_PLUS,
  TOK_MINUS,
  TOK_STAR,
  TOK_SLASH,
  TOK_PERCENT,
  TOK_PIPE,
  TOK_AMP,
} TokKind;

typedef struct {
  TokKind kind;
  int line, col;
  const char *text;
  size_t len;
  uint64_t ival;
  bool int_big;
} Token;

/* Tokenizes text (NUL-terminated).  Returns a GArray of Token, or NULL with
 * *error set (parse class, message already prefixed and positioned). */
GArray *policy_lex(const char *text, GError **error);
const char *policy_tok_name(TokKind kind);

/* The one token reader of both parsers (the Cedar grammar in parser.c and
 * the temporal grammar in temporal_parse.c, which reads on from the Cedar
 * parser's position): the first failure is kept, later ones are dropped. */
typedef struct {
  const Token *toks;
  size_t ntoks, pos;   /* toks ends with its one TOK_EOF */
  GError *err;         /* the first failure */
  const char *context; /* " in a temporal body" while that grammar reads, else "" */
} TokReader;

/* The token k places ahead (the last, TOK_EOF, past the end). */
static inline const Token *tok_peek_n(const TokReader *r, size_t k)
{
  size_t i = r->pos + k;
  return &r->toks[i < r->ntoks ? i : r->ntoks - 1];
}
static inline const Token *tok_peek(const TokReader *r)
{
  return tok_peek_n(r, 0);
}
/* The current token, stepping past it (never past TOK_EOF). */
const Token *tok_next(TokReader *r);
bool tok_is_kw(const Token *t, const char *kw);
/* "`x`" for a token, or "end of input"; newly allocated. */
char *tok_show(const Token *t);
/* A parse failure at t: the spec's prefix, the text and t's position. */
void tok_fail(TokReader *r, const Token *t, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
void tok_fail_expected(TokReader *r, const Token *t, const char *expected);
/* Steps past a token of kind k, else fails; false once anything failed. */
bool tok_expect(TokReader *r, TokKind k, const char *expected);
/* Between a list's items: steps past a `,`, else fails unless the list's
 * close comes next (left for the caller); false where it failed. */
bool tok_list_sep(TokReader *r, TokKind close, const char *expected);

#endif
