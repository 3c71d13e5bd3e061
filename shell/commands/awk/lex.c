/* lex.c — awk's tokens.  A '/' is division until the parser, expecting an
 * operand, asks for it again as a regular expression (awk_lex_regex). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/awk/awk.h"

static const struct {
  const char *name;
  int tok;
} keywords[] = {
  { "BEGIN", TK_BEGIN },
  { "END", TK_END },
  { "function", TK_FUNCTION },
  { "func", TK_FUNCTION },
  { "if", TK_IF },
  { "else", TK_ELSE },
  { "while", TK_WHILE },
  { "for", TK_FOR },
  { "do", TK_DO },
  { "break", TK_BREAK },
  { "continue", TK_CONTINUE },
  { "next", TK_NEXT },
  { "nextfile", TK_NEXTFILE },
  { "exit", TK_EXIT },
  { "return", TK_RETURN },
  { "delete", TK_DELETE },
  { "getline", TK_GETLINE },
  { "print", TK_PRINT },
  { "printf", TK_PRINTF },
  { "in", TK_IN },
};

static const struct {
  const char *name;
  int b;
} builtins[] = {
  { "length", B_LENGTH },   { "substr", B_SUBSTR },   { "index", B_INDEX },
  { "split", B_SPLIT },     { "sub", B_SUB },         { "gsub", B_GSUB },
  { "match", B_MATCH },     { "sprintf", B_SPRINTF }, { "sin", B_SIN },
  { "cos", B_COS },         { "atan2", B_ATAN2 },     { "exp", B_EXP },
  { "log", B_LOG },         { "sqrt", B_SQRT },       { "int", B_INT },
  { "rand", B_RAND },       { "srand", B_SRAND },     { "tolower", B_TOLOWER },
  { "toupper", B_TOUPPER }, { "system", B_SYSTEM },   { "close", B_CLOSE },
  { "fflush", B_FFLUSH },   { "gensub", B_GENSUB },   { "systime", B_SYSTIME },
  { "asort", B_ASORT },     { "asorti", B_ASORTI },   { "strftime", B_STRFTIME },
  { "mktime", B_MKTIME },
};

void awk_lex_init(Lexer *lx, const char *src)
{
  memset(lx, 0, sizeof *lx);
  lx->src = src;
  lx->len = strlen(src);
  lx->line = 1;
}

/* Decodes awk's escapes.  In a regular expression the ones regcomp
 * understands itself (\. \[ \\ ...) stay as they are. */
char *awk_unescape(const char *s, size_t n, bool regex)
{
  GString *o = g_string_sized_new(n);
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\\' || i + 1 >= n) {
      g_string_append_c(o, s[i]);
      continue;
    }
    char e = s[++i];
    switch (e) {
    case 'n': g_string_append_c(o, '\n'); break;
    case 't': g_string_append_c(o, '\t'); break;
    case 'r': g_string_append_c(o, '\r'); break;
    case 'f': g_string_append_c(o, '\f'); break;
    case 'v': g_string_append_c(o, '\v'); break;
    case 'b': g_string_append_c(o, '\b'); break;
    case 'a': g_string_append_c(o, '\a'); break;
    case '/': g_string_append_c(o, '/'); break;
    case '"': g_string_append_c(o, '"'); break;
    case 'y':
      if (regex)
        g_string_append(o, "\\b");
      else
        g_string_append_c(o, 'y');
      break;
    case 'x': {
      unsigned v = 0;
      if (!box_escape_digits(s, n, &i, 2, 16, &v))
        g_string_append_c(o, 'x');
      else
        g_string_append_c(o, (char)v);
      break;
    }
    default:
      if (e >= '0' && e <= '7') {
        unsigned v = (unsigned)(e - '0');
        box_escape_digits(s, n, &i, 2, 8, &v);
        g_string_append_c(o, (char)v);
      } else if (regex) {
        g_string_append_c(o, '\\');
        g_string_append_c(o, e);
      } else if (e == '\\') {
        g_string_append_c(o, '\\');
      } else {
        g_string_append_c(o, e);
      }
    }
  }
  return g_string_free(o, FALSE);
}

/* Tokens after which a newline continues the statement. */
static bool nl_continues(int tok)
{
  return tok == TK_LBRACE || tok == TK_AND || tok == TK_OR || tok == TK_COMMA || tok == TK_DO ||
         tok == TK_ELSE || tok == TK_NL || tok == TK_SEMI;
}

static int lex_one(Awk *A, Lexer *lx)
{
  const char *s = lx->src;
again:
  while (lx->pos < lx->len && (s[lx->pos] == ' ' || s[lx->pos] == '\t' || s[lx->pos] == '\r'))
    lx->pos++;
  if (lx->pos < lx->len && s[lx->pos] == '\\' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '\n') {
    lx->pos += 2;
    lx->line++;
    goto again;
  }
  if (lx->pos < lx->len && s[lx->pos] == '#') {
    while (lx->pos < lx->len && s[lx->pos] != '\n') lx->pos++;
  }
  lx->tok_start = lx->pos;
  if (lx->pos >= lx->len) return TK_EOF;
  char ch = s[lx->pos++];
  char nx = lx->pos < lx->len ? s[lx->pos] : 0;
  if (ch == '\n') {
    lx->line++;
    if (nl_continues(lx->prev)) goto again;
    return TK_NL;
  }
  if (isdigit((unsigned char)ch) || (ch == '.' && isdigit((unsigned char)nx))) {
    char *end;
    lx->num = strtod(s + lx->tok_start, &end);
    /* strtod reads hex and inf; awk's source numbers are decimal */
    size_t p = lx->tok_start;
    while (p < lx->len && isdigit((unsigned char)s[p])) p++;
    if (p < lx->len && s[p] == '.') {
      p++;
      while (p < lx->len && isdigit((unsigned char)s[p])) p++;
    }
    if (p < lx->len && (s[p] == 'e' || s[p] == 'E')) {
      size_t q = p + 1;
      if (q < lx->len && (s[q] == '+' || s[q] == '-')) q++;
      if (q < lx->len && isdigit((unsigned char)s[q])) {
        p = q;
        while (p < lx->len && isdigit((unsigned char)s[p])) p++;
      }
    }
    char *t = g_strndup(s + lx->tok_start, p - lx->tok_start);
    lx->num = strtod(t, &end);
    /* gawk reads 017 as octal and 0x1F as hex in a program's text */
    if (t[0] == '0' && t[1] && strspn(t, "01234567") == strlen(t))
      lx->num = (double)strtoull(t, NULL, 8);
    if (strcmp(t, "0") == 0 && p + 1 < lx->len && (s[p] == 'x' || s[p] == 'X') &&
        isxdigit((unsigned char)s[p + 1])) {
      p++;
      size_t hs = p;
      while (p < lx->len && isxdigit((unsigned char)s[p])) p++;
      char *h = g_strndup(s + hs, p - hs);
      lx->num = (double)strtoull(h, NULL, 16);
      g_free(h);
    }
    g_free(t);
    lx->pos = p;
    return TK_NUMBER;
  }
  if (isalpha((unsigned char)ch) || ch == '_') {
    while (lx->pos < lx->len && (isalnum((unsigned char)s[lx->pos]) || s[lx->pos] == '_'))
      lx->pos++;
    g_free(lx->text);
    lx->text = g_strndup(s + lx->tok_start, lx->pos - lx->tok_start);
    for (size_t i = 0; i < G_N_ELEMENTS(keywords); i++)
      if (strcmp(lx->text, keywords[i].name) == 0) return keywords[i].tok;
    for (size_t i = 0; i < G_N_ELEMENTS(builtins); i++)
      if (strcmp(lx->text, builtins[i].name) == 0) {
        lx->builtin = builtins[i].b;
        return TK_BUILTIN;
      }
    if (lx->pos < lx->len && s[lx->pos] == '(') return TK_FUNC_NAME;
    return TK_NAME;
  }
  if (ch == '"') {
    size_t st = lx->pos;
    while (lx->pos < lx->len && s[lx->pos] != '"') {
      if (s[lx->pos] == '\n') awk_syntax(A, lx, "unterminated string");
      if (s[lx->pos] == '\\' && lx->pos + 1 < lx->len) {
        if (s[lx->pos + 1] == '\n') lx->line++;
        lx->pos++;
      }
      lx->pos++;
    }
    if (lx->pos >= lx->len) awk_syntax(A, lx, "unterminated string");
    g_free(lx->text);
    /* a backslash-newline inside a string continues it */
    GString *raw = g_string_new_len(s + st, (gssize)(lx->pos - st));
    for (char *p; (p = strstr(raw->str, "\\\n"));) g_string_erase(raw, p - raw->str, 2);
    lx->text = awk_unescape(raw->str, raw->len, false);
    g_string_free(raw, TRUE);
    lx->pos++;
    return TK_STRING;
  }
/* The token is ch followed by c2 when that comes next. */
#define IF_NEXT(c2, t2)                                                                            \
  if (nx == (c2)) return lx->pos++, (t2)
#define TWO(c2, t2, t1)                                                                            \
  IF_NEXT(c2, t2);                                                                                 \
  return t1
  switch (ch) {
  case '{': return TK_LBRACE;
  case '}': return TK_RBRACE;
  case '(': return TK_LPAREN;
  case ')': return TK_RPAREN;
  case '[': return TK_LBRACKET;
  case ']': return TK_RBRACKET;
  case ';': return TK_SEMI;
  case ',': return TK_COMMA;
  case '?': return TK_QUESTION;
  case ':': return TK_COLON;
  case '~': return TK_TILDE;
  case '$': return TK_DOLLAR;
  case '+': IF_NEXT('+', TK_INCR); TWO('=', TK_ADD_ASSIGN, TK_PLUS);
  case '-': IF_NEXT('-', TK_DECR); TWO('=', TK_SUB_ASSIGN, TK_MINUS);
  case '*':
    if (nx == '*') {
      lx->pos++;
      if (lx->pos < lx->len && s[lx->pos] == '=') {
        lx->pos++;
        return TK_POW_ASSIGN;
      }
      return TK_POW;
    }
    TWO('=', TK_MUL_ASSIGN, TK_STAR);
  case '/': TWO('=', TK_DIV_ASSIGN, TK_SLASH);
  case '%': TWO('=', TK_MOD_ASSIGN, TK_PERCENT);
  case '^': TWO('=', TK_POW_ASSIGN, TK_POW);
  case '=': TWO('=', TK_EQ, TK_ASSIGN);
  case '!': IF_NEXT('~', TK_NOMATCH); TWO('=', TK_NE, TK_NOT);
  case '<': TWO('=', TK_LE, TK_LT);
  case '>': IF_NEXT('>', TK_APPEND); TWO('=', TK_GE, TK_GT);
  case '|': TWO('|', TK_OR, TK_PIPE);
  case '&': IF_NEXT('&', TK_AND); break;
  default: break;
  }
#undef TWO
#undef IF_NEXT
  awk_syntax(A, lx, "invalid char '%c' in expression", ch);
}

int awk_lex_next(Awk *A, Lexer *lx)
{
  lx->tok = lex_one(A, lx);
  lx->prev = lx->tok;
  return lx->tok;
}

void awk_lex_regex(Awk *A, Lexer *lx)
{
  const char *s = lx->src;
  size_t p = lx->tok_start + 1;
  GString *raw = g_string_new(NULL);
  bool bracket = false;
  for (;;) {
    if (p >= lx->len || s[p] == '\n') awk_syntax(A, lx, "unterminated regexp");
    char ch = s[p];
    if (ch == '\\' && p + 1 < lx->len) {
      if (s[p + 1] == '/')
        g_string_append_c(raw, '/');
      else
        g_string_append_len(raw, s + p, 2);
      p += 2;
      continue;
    }
    if (ch == '[' && !bracket) {
      bracket = true;
      g_string_append_c(raw, ch);
      p++;
      if (p < lx->len && s[p] == '^') g_string_append_c(raw, s[p++]);
      if (p < lx->len && s[p] == ']') g_string_append_c(raw, s[p++]);
      continue;
    }
    if (bracket && ch == '[' && p + 1 < lx->len &&
        (s[p + 1] == ':' || s[p + 1] == '.' || s[p + 1] == '=')) {
      char close = s[p + 1];
      const char *e = strchr(s + p + 2, close);
      if (e && e[1] == ']') {
        g_string_append_len(raw, s + p, (gsize)(e + 2 - (s + p)));
        p = (size_t)(e + 2 - s);
        continue;
      }
    }
    if (ch == ']' && bracket) bracket = false;
    if (ch == '/' && !bracket) break;
    g_string_append_c(raw, ch);
    p++;
  }
  g_free(lx->text);
  lx->text = awk_unescape(raw->str, raw->len, true);
  g_string_free(raw, TRUE);
  lx->pos = p + 1;
  lx->tok = TK_ERE;
  lx->prev = TK_ERE;
}
