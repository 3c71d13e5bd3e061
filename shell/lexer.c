/* lexer.c — shell text → tokens; words are split into parts here so that
 * quoting is decided once (expansion never re-scans the source). */
#include <ctype.h>
#include <string.h>

#include "shell/shell-private.h"

void box_lexer_init(Lexer *lx, const char *src) {
  lx->src = src;
  lx->len = strlen(src);
  lx->pos = 0;
  lx->error = NULL;
}

static int peekc(Lexer *lx, size_t ahead) {
  return lx->pos + ahead < lx->len ? (unsigned char)lx->src[lx->pos + ahead] : -1;
}

static bool fail(Lexer *lx, const char *msg) {
  if (!lx->error) lx->error = g_strdup(msg);
  return false;
}

static bool is_meta(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
         c == '<' || c == '>' || c == '(' || c == ')';
}

static bool is_name_start(int c) { return c == '_' || (c >= 0 && c < 128 && isalpha(c)); }
static bool is_name_char(int c) { return c == '_' || (c >= 0 && c < 128 && isalnum(c)); }

/* ---- word building ------------------------------------------------------- */

typedef struct {
  GArray *parts;      /* WordPart */
  GString *lit;       /* pending literal text */
  bool lit_quoted;
  bool lit_open;      /* lit holds a (maybe empty) pending part */
} WB;

static void wb_init(WB *b) {
  b->parts = g_array_new(FALSE, TRUE, sizeof(WordPart));
  b->lit = g_string_new(NULL);
  b->lit_quoted = false;
  b->lit_open = false;
}

static void wb_end_lit(WB *b) {
  if (!b->lit_open) return;
  WordPart p = {0};
  p.kind = b->lit_quoted ? WP_QLIT : WP_LIT;
  p.quoted = b->lit_quoted;
  p.text = g_strndup(b->lit->str, b->lit->len);
  g_array_append_val(b->parts, p);
  g_string_truncate(b->lit, 0);
  b->lit_open = false;
}

static void wb_lit(WB *b, const char *s, size_t n, bool quoted) {
  if (b->lit_open && b->lit_quoted != quoted) wb_end_lit(b);
  b->lit_quoted = quoted;
  b->lit_open = true;
  g_string_append_len(b->lit, s, (gssize)n);
}

static void wb_part(WB *b, WordPart p) {
  wb_end_lit(b);
  g_array_append_val(b->parts, p);
}

static Word *wb_finish(WB *b, const char *raw, size_t rawlen) {
  wb_end_lit(b);
  Word *w = g_new0(Word, 1);
  w->nparts = b->parts->len;
  w->parts = (WordPart *)(void *)g_array_free(b->parts, FALSE);
  w->raw = g_strndup(raw, rawlen);
  g_string_free(b->lit, TRUE);
  return w;
}

static void wb_abandon(WB *b) {
  wb_end_lit(b);
  Word tmp = { (WordPart *)(void *)b->parts->data, b->parts->len, NULL };
  for (size_t i = 0; i < tmp.nparts; i++) {
    g_free(tmp.parts[i].text);
    if (tmp.parts[i].arg) box_word_free(tmp.parts[i].arg);
  }
  g_array_free(b->parts, TRUE);
  g_string_free(b->lit, TRUE);
}

void box_word_free(Word *w) {
  if (!w) return;
  for (size_t i = 0; i < w->nparts; i++) {
    g_free(w->parts[i].text);
    if (w->parts[i].arg) box_word_free(w->parts[i].arg);
  }
  g_free(w->parts);
  g_free(w->raw);
  g_free(w);
}

/* Contexts for part scanning. */
enum { CTX_WORD, CTX_DQUOTE, CTX_BRACE, CTX_BRACE_DQ };

static bool scan_parts(Lexer *lx, WB *b, int ctx);

/* After '$' (lx->pos at the character after it). */
static bool scan_dollar(Lexer *lx, WB *b, bool quoted) {
  int c = peekc(lx, 0);
  WordPart p = {0};
  p.kind = WP_PARAM;
  p.quoted = quoted;
  if (c == '{') {
    lx->pos++;
    size_t start = lx->pos;
    c = peekc(lx, 0);
    if (c == '#' && peekc(lx, 1) != '}' && (is_name_start(peekc(lx, 1)) || isdigit(peekc(lx, 1)) ||
                                            strchr("?$#!@*-", peekc(lx, 1) > 0 ? peekc(lx, 1) : 'x'))) {
      p.op = PO_LENGTH;
      lx->pos++;
      start = lx->pos;
      c = peekc(lx, 0);
    }
    if (is_name_start(c)) {
      while (is_name_char(peekc(lx, 0))) lx->pos++;
    } else if (c >= 0 && isdigit(c)) {
      while (peekc(lx, 0) >= 0 && isdigit(peekc(lx, 0))) lx->pos++;
    } else if (c >= 0 && strchr("?$#!@*-", c)) {
      lx->pos++;
    } else {
      return fail(lx, c < 0 ? "unterminated ${" : "bad substitution");
    }
    p.text = g_strndup(lx->src + start, lx->pos - start);
    c = peekc(lx, 0);
    if (c == '}') {
      lx->pos++;
      wb_part(b, p);
      return true;
    }
    if (p.op == PO_LENGTH) {
      g_free(p.text);
      return fail(lx, "bad substitution");
    }
    if (c == ':') { p.colon = true; lx->pos++; c = peekc(lx, 0); }
    switch (c) {
    case '-': p.op = PO_DEFAULT; lx->pos++; break;
    case '=': p.op = PO_ASSIGN; lx->pos++; break;
    case '?': p.op = PO_ERROR; lx->pos++; break;
    case '+': p.op = PO_ALT; lx->pos++; break;
    case '%':
      if (p.colon) goto bad;
      lx->pos++;
      if (peekc(lx, 0) == '%') { lx->pos++; p.op = PO_TRIM_SUFFIX_LONG; } else p.op = PO_TRIM_SUFFIX;
      break;
    case '#':
      if (p.colon) goto bad;
      lx->pos++;
      if (peekc(lx, 0) == '#') { lx->pos++; p.op = PO_TRIM_PREFIX_LONG; } else p.op = PO_TRIM_PREFIX;
      break;
    default:
      goto bad;
    }
    {
      size_t astart = lx->pos;
      WB ab;
      wb_init(&ab);
      if (!scan_parts(lx, &ab, quoted ? CTX_BRACE_DQ : CTX_BRACE)) {
        wb_abandon(&ab);
        g_free(p.text);
        return false;
      }
      p.arg = wb_finish(&ab, lx->src + astart, lx->pos - astart);
      lx->pos++; /* '}' */
    }
    wb_part(b, p);
    return true;
  bad:
    g_free(p.text);
    if (c < 0) return fail(lx, "unterminated ${");
    return fail(lx, "bad substitution");
  }
  if (is_name_start(c)) {
    size_t start = lx->pos;
    while (is_name_char(peekc(lx, 0))) lx->pos++;
    p.text = g_strndup(lx->src + start, lx->pos - start);
    wb_part(b, p);
    return true;
  }
  if (c >= 0 && (isdigit(c) || strchr("?$#!@*-", c))) {
    lx->pos++;
    p.text = g_strndup(lx->src + lx->pos - 1, 1);
    wb_part(b, p);
    return true;
  }
  if (c == '(') return fail(lx, "command substitution is not supported yet");
  if (c == '\'' && !quoted) return fail(lx, "$'...' quoting is not supported yet");
  wb_lit(b, "$", 1, quoted);
  return true;
}

/* Scans parts until the context's terminator (not consumed). */
static bool scan_parts(Lexer *lx, WB *b, int ctx) {
  bool dq = ctx == CTX_DQUOTE || ctx == CTX_BRACE_DQ;
  for (;;) {
    int c = peekc(lx, 0);
    if (c < 0) {
      if (ctx == CTX_DQUOTE) return fail(lx, "unterminated double quote");
      if (ctx == CTX_BRACE || ctx == CTX_BRACE_DQ) return fail(lx, "unterminated ${");
      return true;
    }
    if (ctx == CTX_WORD && is_meta(c)) return true;
    if (ctx == CTX_DQUOTE && c == '"') return true;
    if ((ctx == CTX_BRACE || ctx == CTX_BRACE_DQ) && c == '}') return true;
    if (c == '\\') {
      int n = peekc(lx, 1);
      if (n < 0) {
        if (dq) { lx->pos++; wb_lit(b, "\\", 1, true); continue; }
        return fail(lx, "unterminated escape");
      }
      if (n == '\n') { lx->pos += 2; continue; }
      if (dq && !strchr("$`\"\\}", n)) {
        wb_lit(b, "\\", 1, true);
        lx->pos++;
        continue;
      }
      if (ctx == CTX_DQUOTE && n == '}') {
        wb_lit(b, "\\", 1, true);
        lx->pos++;
        continue;
      }
      char ch = (char)n;
      wb_lit(b, &ch, 1, true);
      lx->pos += 2;
      continue;
    }
    if (c == '\'' && !dq) {
      size_t start = ++lx->pos;
      const char *end = memchr(lx->src + start, '\'', lx->len - start);
      if (!end) return fail(lx, "unterminated single quote");
      wb_lit(b, lx->src + start, (size_t)(end - (lx->src + start)), true);
      lx->pos = (size_t)(end - lx->src) + 1;
      continue;
    }
    if (c == '"' && ctx != CTX_DQUOTE) {
      lx->pos++;
      wb_lit(b, "", 0, true); /* "" alone still makes a field */
      if (!scan_parts(lx, b, CTX_DQUOTE)) return false;
      lx->pos++;
      continue;
    }
    if (c == '$') {
      lx->pos++;
      if (!scan_dollar(lx, b, dq)) return false;
      continue;
    }
    if (c == '`') return fail(lx, "command substitution is not supported yet");
    char ch = (char)c;
    wb_lit(b, &ch, 1, dq);
    lx->pos++;
  }
}

/* ---- tokens -------------------------------------------------------------- */

static bool redir_op(Lexer *lx, Token *tok, int fd) {
  const char *s = lx->src + lx->pos;
  struct { const char *op; RedirKind k; TokKind t; } ops[] = {
    { "<<-", R_IN, T_HEREDOC }, { "<<", R_IN, T_HEREDOC }, { "<>", R_RDWR, T_REDIR },
    { "<&", R_DUP_IN, T_REDIR }, { "<", R_IN, T_REDIR }, { ">>", R_APPEND, T_REDIR },
    { ">&", R_DUP_OUT, T_REDIR }, { ">|", R_CLOBBER, T_REDIR }, { ">", R_OUT, T_REDIR },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
    size_t n = strlen(ops[i].op);
    if (strncmp(s, ops[i].op, n) == 0) {
      lx->pos += n;
      tok->kind = ops[i].t;
      tok->rkind = ops[i].k;
      tok->fd = fd;
      tok->text = ops[i].op;
      return true;
    }
  }
  return false;
}

bool box_lex_next(Lexer *lx, Token *tok) {
  memset(tok, 0, sizeof *tok);
  tok->fd = -1;
  for (;;) {
    int c = peekc(lx, 0);
    if (c == ' ' || c == '\t') { lx->pos++; continue; }
    if (c == '\\' && peekc(lx, 1) == '\n') { lx->pos += 2; continue; }
    if (c == '#') {
      while (peekc(lx, 0) >= 0 && peekc(lx, 0) != '\n') lx->pos++;
      continue;
    }
    break;
  }
  int c = peekc(lx, 0);
  if (c < 0) { tok->kind = T_EOF; tok->text = "end of file"; return true; }
  const char *s = lx->src + lx->pos;
#define OP(str, k) if (strncmp(s, str, strlen(str)) == 0) { lx->pos += strlen(str); tok->kind = k; tok->text = str; return true; }
  if (c == '\n') { lx->pos++; tok->kind = T_NEWLINE; tok->text = "newline"; return true; }
  if (strncmp(s, "&>>", 3) == 0) {
    lx->pos += 3; tok->kind = T_REDIR; tok->rkind = R_APPEND_ERR; tok->text = "&>>"; return true;
  }
  if (strncmp(s, "&>", 2) == 0) {
    lx->pos += 2; tok->kind = T_REDIR; tok->rkind = R_OUT_ERR; tok->text = "&>"; return true;
  }
  OP("&&", T_AND_IF)
  OP("&", T_AMP)
  OP("||", T_OR_IF)
  OP("|", T_PIPE)
  OP(";;", T_DSEMI)
  OP(";", T_SEMI)
  OP("(", T_LPAREN)
  OP(")", T_RPAREN)
#undef OP
  if (c == '<' || c == '>') return redir_op(lx, tok, -1);

  /* An all-digit word right before < or > is the redirection's fd. */
  size_t d = 0;
  while (peekc(lx, d) >= 0 && isdigit(peekc(lx, d))) d++;
  if (d > 0 && d < 10 && (peekc(lx, d) == '<' || peekc(lx, d) == '>')) {
    int fd = atoi(s);
    lx->pos += d;
    return redir_op(lx, tok, fd);
  }

  size_t start = lx->pos;
  WB b;
  wb_init(&b);
  if (!scan_parts(lx, &b, CTX_WORD)) {
    wb_abandon(&b);
    return false;
  }
  tok->kind = T_WORD;
  tok->word = wb_finish(&b, lx->src + start, lx->pos - start);
  tok->text = tok->word->raw;
  return true;
}

const char *box_tok_name(const Token *tok) { return tok->text ? tok->text : "?"; }
