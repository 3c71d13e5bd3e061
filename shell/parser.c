/* parser.c — text → syntax tree: a context-aware lexer and a recursive-
 * descent parser for the POSIX grammar and bash's additions ([[ ]], (( )),
 * arrays, function, |&, &>, <<<, here-documents, aliases).
 *
 * Words are cut, not decoded: a word's node holds the text as written and
 * expand.c interprets its quotes.  $(…) is parsed recursively to find where
 * it ends; the tree is cached by its text for the evaluator. */
#include <string.h>

#include "shell/shell-private.h"

typedef enum {
  T_EOF,
  T_NEWLINE,
  T_WORD,
  T_SEMI,
  T_DSEMI,
  T_SEMIAMP,
  T_DSEMIAMP,
  T_AMP,
  T_AND,
  T_OR,
  T_PIPE,
  T_PIPEAMP,
  T_LPAREN,
  T_RPAREN,
  T_REDIR,
} TokKind;

typedef enum {
  KW_NONE,
  KW_IF,
  KW_THEN,
  KW_ELSE,
  KW_ELIF,
  KW_FI,
  KW_DO,
  KW_DONE,
  KW_CASE,
  KW_ESAC,
  KW_WHILE,
  KW_UNTIL,
  KW_FOR,
  KW_IN,
  KW_LBRACE,
  KW_RBRACE,
  KW_BANG,
  KW_FUNCTION,
  KW_DLBRACK,
  KW_DRBRACK,
  KW_SELECT,
  KW_TIME,
} Keyword;

static const char *const kw_text[KW_TIME + 1] = {
  "",      "if",  "then", "else", "elif", "fi", "do",       "done", "case", "esac",   "while",
  "until", "for", "in",   "{",    "}",    "!",  "function", "[[",   "]]",   "select", "time"
};

/* Fields ordered by size: a token is cleared by lex and copied by next()
 * once per token, 56 bytes rather than 80 with the padding. */
typedef struct {
  char *text; /* T_WORD */
  size_t len;
  const char *vname; /* T_REDIR after {NAME} */
  size_t start;      /* offset in src */
  TokKind kind;
  RedirKind rkind; /* T_REDIR */
  int fd;
  int line;
  unsigned vlen;
  bool plain;       /* T_WORD: no quotes/expansions */
  bool soft;        /* T_WORD, not plain: only for characters of patterns, braces or assignments */
  bool strip;       /* <<- */
  unsigned char kw; /* T_WORD: KW_* when the text is a reserved word */
} Tok;

typedef struct {
  HereDoc *r;
  char *delim;
  bool strip;
} PendingDoc;

struct Parser {
  Shell *sh;
  char *src; /* owned (aliases rewrite it) */
  size_t pos, len;
  int line;
  const char *name;
  Tok look;
  bool have;
  bool err;
  GArray *docs;            /* PendingDoc */
  GPtrArray *alias_active; /* names whose text is being read */
  GArray *alias_end;       /* size_t: where each ends */
  bool alias_next;         /* the last alias ended in a blank: */
  size_t alias_next_from;  /* the word from here is looked up too */
  int in_subst;            /* inside $( ): parsed again when it runs, aliases then */
  int depth;               /* nesting of $( ) */
  int nest;                /* nesting of everything (BOX_MAX_NEST) */
  bool in_cond;
  /* the pattern right of [[ … == ]]: bash 5.2 reads its extglob groups
   * whether or not extglob is on */
  bool ext_pat;
  bool in_array;  /* the words of NAME=( … ): `[k ey]=v` is one word */
  bool ended_nl;  /* the top-level list ended at a newline */
  int err_status; /* box_parse_error_status */
  bool err_token; /* the error is a token out of place */
  bool array_err; /* the error is inside an array literal: read on from the next line */
  bool skipped;   /* box_parse_skipped */
  bool probe;     /* box_parse_probe: say nothing, note where the text ran out */
  bool in_dq;     /* scanning inside "…" (a $( ) or `…` inside starts afresh) */
  int incomplete; /* BOX_PARSE_* of why it did */
};

static void perror_at(Parser *p, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void perror_at(Parser *p, const char *fmt, ...)
{
  if (p->err) return;
  p->err = true;
  if (p->probe) {
    if (g_str_has_prefix(fmt, "unexpected EOF"))
      p->incomplete = strstr(fmt, "`''") || strstr(fmt, "`\"'") || strstr(fmt, "``'")
                        ? BOX_PARSE_IN_QUOTE
                        : BOX_PARSE_OPEN;
    else if (g_str_has_prefix(fmt, "syntax error: unexpected end of file"))
      p->incomplete = BOX_PARSE_OPEN;
    return;
  }
  /* bash ends -c with 127 on a bad token inside $( ), with 2 when the
   * text ends there (or on the Shell's own limits) */
  p->err_token = strncmp(fmt, "syntax error near", 17) == 0;
  p->err_status = p->depth > 0 && p->err_token ? 127 : 2;
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (p->name)
    box_sh_error(p->sh, "%s: line %d: %s", p->name, p->line, m);
  else
    box_sh_error(p->sh, "%s", m);
  g_free(m);
}

/* NAME[…] filling all n bytes of s. */
static bool subscripted_name(const char *s, size_t n)
{
  size_t i = 0;
  while (i < n && (s[i] == '_' || g_ascii_isalnum(s[i]))) i++;
  if (i == 0 || g_ascii_isdigit(s[0]) || i >= n || s[i] != '[' || s[n - 1] != ']') return false;
  int depth = 0;
  for (; i < n; i++) {
    if (s[i] == '[') depth++;
    if (s[i] == ']' && --depth == 0) break;
  }
  return i == n - 1;
}

/* The three expressions of for (( … )): split at the `;`s outside a
 * substitution, quotes or parentheses (`$(a; b)` in the condition is one). */
static char **split_for_parts(const char *e)
{
  GPtrArray *parts = g_ptr_array_new();
  int depth = 0;
  char quote = 0;
  const char *start = e;
  for (const char *c = e; *c; c++) {
    if (quote) {
      if (*c == '\\' && quote != '\'' && c[1])
        c++;
      else if (*c == quote)
        quote = 0;
      continue;
    }
    if (*c == '\\' && c[1]) {
      c++;
    } else if (*c == '\'' || *c == '"' || *c == '`') {
      quote = *c;
    } else if (*c == '(' || *c == '{') {
      depth++;
    } else if ((*c == ')' || *c == '}') && depth > 0) {
      depth--;
    } else if (*c == ';' && depth == 0) {
      g_ptr_array_add(parts, g_strndup(start, (gsize)(c - start)));
      start = c + 1;
    }
  }
  g_ptr_array_add(parts, g_strdup(start));
  g_ptr_array_add(parts, NULL);
  return (char **)g_ptr_array_free(parts, FALSE);
}

/* A syntax error inside NAME=( … ): bash reports it and drops the rest of
 * the line it is on (what was read of the command with it), then reads on
 * from the next line with $? 1, where any other syntax error ends -c. */
static void array_literal_error(Parser *p, const char *msg)
{
  perror_at(p, "%s", msg);
  p->err_status = 1;
  p->array_err = true;
}

/* At the top level of an array literal, the byte at p->pos: false (after
 * the error) for an operator there, which no element may hold unquoted. */
static bool array_literal_byte(Parser *p)
{
  char e = p->src[p->pos];
  char n = p->pos + 1 < p->len ? p->src[p->pos + 1] : 0;
  char prev = p->pos ? p->src[p->pos - 1] : ' ';
  bool word_start = prev == ' ' || prev == '\t' || prev == '\n' || prev == '(';
  if (e == '#' && word_start) {
    /* a comment, to the line's end */
    while (p->pos + 1 < p->len && p->src[p->pos + 1] != '\n') p->pos++;
    return true;
  }
  bool op = strchr(";&|<>", e) && e;
  if ((e == '<' || e == '>') && n == '(') op = false;  /* a process substitution */
  if (e == '(' && !strchr("@!*+?<>", prev)) op = true; /* not an extglob group nor <( ) */
  if (!op) return true;
  char tok[3] = { e, 0, 0 };
  if (e != '(' &&
      (n == e || (e == '>' && n == '&') || (e == '&' && n == '>') || (e == '|' && n == '&')))
    tok[1] = n;
  char msg[64];
  g_snprintf(msg, sizeof msg, "syntax error near unexpected token `%s'", tok);
  array_literal_error(p, msg);
  return false;
}

/* Every recursive descent goes through here: agent text decides how deep
 * the parser recurses, and boxd parses it too (first.c), so the depth is
 * bounded and a text beyond it is a syntax error, not a crash.  The caller
 * leaves with p->nest-- whatever this returned. */
static bool nest_in(Parser *p)
{
  if (++p->nest > BOX_MAX_NEST)
    perror_at(p, "maximum nesting depth exceeded (%d)", BOX_MAX_NEST);
  else if (box_stack_low()) /* text parsed within text: eval of eval… */
    perror_at(p, "maximum recursion depth exceeded");
  else
    return true;
  return false;
}

Parser *box_parser_new(Shell *sh, const char *text, const char *name)
{
  return box_parser_new_at(sh, text, name, 1);
}

Parser *box_parser_new_at(Shell *sh, const char *text, const char *name, int line)
{
  Parser *p = g_new0(Parser, 1);
  p->sh = sh;
  p->src = g_strdup(text);
  p->len = strlen(p->src);
  p->line = line;
  p->name = name;
  p->docs = g_array_new(FALSE, FALSE, sizeof(PendingDoc));
  p->alias_active = g_ptr_array_new();
  p->alias_end = g_array_new(FALSE, FALSE, sizeof(size_t));
  return p;
}

void box_parser_free(Parser *p)
{
  if (!p) return;
  g_free(p->src);
  g_array_free(p->docs, TRUE);
  g_ptr_array_free(p->alias_active, TRUE);
  g_array_free(p->alias_end, TRUE);
  g_free(p);
}

static inline int pc(Parser *p, size_t off)
{
  return p->pos + off < p->len ? (unsigned char)p->src[p->pos + off] : -1;
}

static bool is_meta(int c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
         c == '>' || c == '(' || c == ')' || c < 0;
}

/* ---- word scanning --------------------------------------------------------- */

/* Characters a word's scanner must look at one by one: metacharacters,
 * quotes, expansions and those that may make a word a pattern, brace or
 * assignment.  Runs of any other byte are skipped in one go. */
static const unsigned char word_special[256] = {
  [0] = 1,   [' '] = 1, ['\t'] = 1, ['\n'] = 1, [';'] = 1,  ['&'] = 1,  ['|'] = 1,
  ['<'] = 1, ['>'] = 1, ['('] = 1,  [')'] = 1,  ['\\'] = 1, ['\''] = 1, ['"'] = 1,
  ['`'] = 1, ['$'] = 1, ['*'] = 1,  ['?'] = 1,  ['['] = 1,  ['~'] = 1,  ['{'] = 1,
  ['}'] = 1, [']'] = 1, ['='] = 1,  [','] = 1,
};

static bool scan_word_until(Parser *p, int close);
static bool parse_subst(Parser *p);

/* After an opening quote; stops after the closing one. */
static bool scan_squote(Parser *p)
{
  while (p->pos < p->len && p->src[p->pos] != '\'') {
    if (p->src[p->pos] == '\n') p->line++;
    p->pos++;
  }
  if (p->pos >= p->len) {
    perror_at(p, "unexpected EOF while looking for matching `''");
    return false;
  }
  p->pos++;
  return true;
}

static bool scan_ansi(Parser *p)
{
  while (p->pos < p->len && p->src[p->pos] != '\'') {
    if (p->src[p->pos] == '\\' && p->pos + 1 < p->len) p->pos++;
    if (p->src[p->pos] == '\n') p->line++;
    p->pos++;
  }
  if (p->pos >= p->len) {
    perror_at(p, "unexpected EOF while looking for matching `''");
    return false;
  }
  p->pos++;
  return true;
}

static bool scan_backquote(Parser *p)
{
  while (p->pos < p->len && p->src[p->pos] != '`') {
    if (p->src[p->pos] == '\\' && p->pos + 1 < p->len) p->pos++;
    if (p->src[p->pos] == '\n') p->line++;
    p->pos++;
  }
  if (p->pos >= p->len) {
    perror_at(p, "unexpected EOF while looking for matching ``'");
    return false;
  }
  p->pos++;
  return true;
}

/* At '$': scans one expansion.  Returns false on error. */
static bool scan_dollar_in(Parser *p)
{
  p->pos++; /* $ */
  int c = pc(p, 0);
  if (c == '(') {
    if (pc(p, 1) == '(') {
      /* $(( … )) — by paren counting; fall back to $( ( … ) ) */
      size_t save = p->pos;
      int sline = p->line;
      p->pos += 2;
      int depth = 0;
      while (p->pos < p->len) {
        char ch = p->src[p->pos];
        if (ch == '(')
          depth++;
        else if (ch == ')') {
          if (depth == 0) {
            if (pc(p, 1) == ')') {
              p->pos += 2;
              return true;
            }
            break;
          }
          depth--;
        } else if (ch == '\n')
          p->line++;
        p->pos++;
      }
      p->pos = save;
      p->line = sline;
    }
    p->pos++;
    bool dq = p->in_dq; /* the commands inside are quoted afresh */
    p->in_dq = false;
    bool ok = parse_subst(p);
    p->in_dq = dq;
    return ok;
  }
  if (c == '{') {
    p->pos++;
    return scan_word_until(p, '}');
  }
  if (c == '[') {
    /* $[ expr ]: the old form of $(( )), blanks and all */
    int depth = 0;
    for (size_t e = p->pos; e < p->len && p->src[e] != '\n'; e++) {
      if (p->src[e] == '[')
        depth++;
      else if (p->src[e] == ']' && --depth == 0) {
        p->pos = e + 1;
        return true;
      }
    }
    return true;
  }
  if (c == '\'') {
    p->pos++;
    return scan_ansi(p);
  }
  if (c == '"') {
    p->pos++;
    return scan_word_until(p, '"');
  }
  return true;
}

static bool scan_dollar(Parser *p)
{
  bool ok = nest_in(p) && scan_dollar_in(p);
  p->nest--;
  return ok;
}

/* Scans inside "…" or ${…} up to the closing character (consumed). */
static bool scan_word_until_in(Parser *p, int close)
{
  while (p->pos < p->len) {
    char c = p->src[p->pos];
    /* a bare '{' opens nothing: bash ends ${…} at the first '}' */
    if (c == close) {
      p->pos++;
      return true;
    }
    if (c == '\\') {
      p->pos += 2;
      continue;
    }
    if (c == '\n') p->line++;
    if (c == '$' && !(close == '"' && pc(p, 1) == '"')) {
      if (!scan_dollar(p)) return false;
      continue;
    }
    if (c == '`') {
      p->pos++;
      if (!scan_backquote(p)) return false;
      continue;
    }
    if (close == '}') {
      /* in posix mode a "${…}"'s word has no single quotes (bash's rule) */
      if (c == '\'' && !(p->in_dq && (p->sh->opts & O_INERT_POSIX))) {
        p->pos++;
        if (!scan_squote(p)) return false;
        continue;
      }
      if (c == '"') {
        p->pos++;
        if (!scan_word_until(p, '"')) return false;
        continue;
      }
    }
    p->pos++;
  }
  if (close == '"')
    perror_at(p, "unexpected EOF while looking for matching `\"'");
  else
    perror_at(p, "unexpected EOF while looking for matching `}'");
  return false;
}

static bool scan_word_until(Parser *p, int close)
{
  bool dq = p->in_dq;
  if (close == '"') p->in_dq = true;
  bool ok = nest_in(p) && scan_word_until_in(p, close);
  p->nest--;
  p->in_dq = dq;
  return ok;
}

static Node *parse_list(Parser *p, bool top);

/* After "$(": parses the command list to find the ")" and caches it. */
static bool parse_subst(Parser *p)
{
  size_t start = p->pos;
  int line = p->line;
  bool had = p->have;
  Tok saved = p->look;
  /* `[[ $(echo x) == x ]]`: the commands inside are not the [[ ]]'s words */
  bool cond = p->in_cond;
  p->in_cond = false;
  p->have = false;
  p->depth++;
  /* No alias is expanded here: the rewrite would move the text under the
   * $( ) being read.  The substitution's text is parsed again when it
   * runs, with the aliases of then (box_parse_all). */
  p->in_subst++;
  Node *n = parse_list(p, false);
  p->in_subst--;
  p->depth--;
  p->in_cond = cond;
  if (p->err) return false;
  Tok t;
  /* the list stops before ")" */
  if (!p->have) {
    perror_at(p, "unexpected EOF while looking for matching `)'");
    return false;
  }
  t = p->look;
  if (t.kind != T_RPAREN) {
    if (t.kind == T_EOF) {
      perror_at(p, "unexpected EOF while looking for matching `)'");
    } else {
      perror_at(p, "syntax error near unexpected token `%.*s'", (int)(t.kind == T_WORD ? t.len : 1),
                t.kind == T_WORD ? t.text : p->src + t.start);
      p->err_status = 127; /* read after the $( )'s depth was left */
    }
    return false;
  }
  size_t end = t.start;
  p->pos = end + 1;
  p->have = had;
  p->look = saved;
  if (p->sh->check_only) return true;
  char *text = g_strndup(p->src + start, end - start);
  /* keyed by its line too: the same text on another line ($LINENO, a
   * DEBUG trap's) is another tree (box_parse_all) */
  g_hash_table_insert(p->sh->subst_cache, g_strdup_printf("%d:%s", line, text), n);
  if (!g_hash_table_contains(p->sh->subst_cache, text))
    g_hash_table_insert(p->sh->subst_cache, text, n);
  else
    g_free(text);
  return true;
}

/* ---- tokens ------------------------------------------------------------------ */

static const unsigned char kw_len[KW_TIME + 1] = { 0, 2, 4, 4, 4, 2, 2, 4, 4, 4, 5,
                                                   5, 3, 2, 1, 1, 1, 8, 2, 2, 6, 4 };

/* The reserved word a word's text spells, or KW_NONE. */
static unsigned char keyword_of(const char *s, size_t n)
{
  if (n > 8) return KW_NONE;
  /* the candidates by first letter (every word of a script comes here) */
  static const unsigned char none[] = { KW_NONE };
  static const unsigned char ki[] = { KW_IF, KW_IN, KW_NONE }, kt[] = { KW_THEN, KW_TIME, KW_NONE },
                             ke[] = { KW_ELSE, KW_ELIF, KW_ESAC, KW_NONE },
                             kf[] = { KW_FI, KW_FOR, KW_FUNCTION, KW_NONE },
                             kd[] = { KW_DO, KW_DONE, KW_NONE }, kc[] = { KW_CASE, KW_NONE },
                             kw[] = { KW_WHILE, KW_NONE }, ku[] = { KW_UNTIL, KW_NONE },
                             klb[] = { KW_LBRACE, KW_NONE }, krb[] = { KW_RBRACE, KW_NONE },
                             kb[] = { KW_BANG, KW_NONE }, kdl[] = { KW_DLBRACK, KW_NONE },
                             kdr[] = { KW_DRBRACK, KW_NONE }, ks[] = { KW_SELECT, KW_NONE };
  const unsigned char *c;
  switch (s[0]) {
  case 'i': c = ki; break;
  case 't': c = kt; break;
  case 'e': c = ke; break;
  case 'f': c = kf; break;
  case 'd': c = kd; break;
  case 'c': c = kc; break;
  case 'w': c = kw; break;
  case 'u': c = ku; break;
  case '{': c = klb; break;
  case '}': c = krb; break;
  case '!': c = kb; break;
  case '[': c = kdl; break;
  case ']': c = kdr; break;
  case 's': c = ks; break;
  default: c = none; break;
  }
  /* by hand: at most 8 bytes, the first already matched, where a call to
   * memcmp cost more than the comparison */
  for (; *c != KW_NONE; c++) {
    if (kw_len[*c] != n) continue;
    const char *k = kw_text[*c];
    size_t i = 1;
    while (i < n && k[i] == s[i]) i++;
    if (i == n) return *c;
  }
  return KW_NONE;
}

static bool read_heredocs(Parser *p);

/* At a "(" or blank inside `NAME[…` (the word from start): when the
 * subscript closes with `]=` or `]+=`, moves past the "]" and says true.
 * bash reads an assignment's subscript whole (`a[(i+1)]=x`, `m[@(k)]=v`,
 * `a[ 1 ]=x`); it does so only where an assignment may stand, and a word
 * of that shape elsewhere is a rare thing taken here as one word too. */
static bool subscript_assign(Parser *p, size_t start)
{
  const char *s = p->src;
  size_t n = 0;
  while (start + n < p->pos && (s[start + n] == '_' || g_ascii_isalnum(s[start + n]))) n++;
  if (n == 0 || g_ascii_isdigit(s[start]) || start + n >= p->pos || s[start + n] != '[')
    return false;
  int depth = 0;
  for (size_t i = start + n; i < p->pos; i++) depth += s[i] == '[' ? 1 : s[i] == ']' ? -1 : 0;
  if (depth <= 0) return false;
  size_t pos0 = p->pos;
  int line0 = p->line;
  bool ok = false;
  while (!p->err && p->pos < p->len && p->src[p->pos] != '\n') {
    char c = p->src[p->pos];
    if (c == '\\') {
      p->pos += 2;
    } else if (c == '\'') {
      p->pos++;
      if (!scan_squote(p)) break;
    } else if (c == '"') {
      p->pos++;
      if (!scan_word_until(p, '"')) break;
    } else if (c == '`') {
      p->pos++;
      if (!scan_backquote(p)) break;
    } else if (c == '$') {
      if (!scan_dollar(p)) break;
    } else if (c == ']' && --depth == 0) {
      size_t e = p->pos + 1 + (p->pos + 1 < p->len && p->src[p->pos + 1] == '+');
      ok = e < p->len && p->src[e] == '=';
      p->pos++;
      break;
    } else {
      depth += c == '[';
      p->pos++;
    }
  }
  if (!ok && !p->err) {
    p->pos = pos0;
    p->line = line0;
  }
  return ok;
}

static bool lex(Parser *p, Tok *t)
{
  memset(t, 0, sizeof *t);
again : {
  /* locals: src is a char *, so stores through p would reload p->pos */
  const char *src = p->src;
  size_t i = p->pos, len = p->len;
  while (i < len && (src[i] == ' ' || src[i] == '\t')) i++;
  p->pos = i;
}
  /* alias regions that ended */
  while (p->alias_end->len &&
         g_array_index(p->alias_end, size_t, p->alias_end->len - 1) <= p->pos) {
    g_array_set_size(p->alias_end, p->alias_end->len - 1);
    g_ptr_array_remove_index(p->alias_active, p->alias_active->len - 1);
  }
  if (pc(p, 0) == '\\' && pc(p, 1) == '\n') {
    p->pos += 2;
    p->line++;
    goto again;
  }
  if (pc(p, 0) == '#') {
    while (p->pos < p->len && p->src[p->pos] != '\n') p->pos++;
  }
  t->start = p->pos;
  t->line = p->line;
  int c = pc(p, 0);
  if (c < 0) {
    t->kind = T_EOF;
    return true;
  }
  if (c == '\n') {
    p->pos++;
    p->line++;
    /* [[ … ]] may span lines */
    if (p->in_cond && !p->docs->len) goto again;
    t->kind = T_NEWLINE;
    return read_heredocs(p);
  }
  /* Most tokens are words that start with a letter: none of the tests for
   * {NAME}, an IO number, a redirection or an operator can take those. */
  if (!word_special[c] && !g_ascii_isdigit(c)) goto word;
  int c1 = pc(p, 1), c2 = pc(p, 2);
  /* {NAME}> : a descriptor the shell chooses, named by NAME */
  if (c == '{' && !p->in_cond && (c1 == '_' || g_ascii_isalpha(c1))) {
    size_t e = 1;
    while (pc(p, e) == '_' || g_ascii_isalnum(pc(p, e))) e++;
    if (pc(p, e) == '}' && (pc(p, e + 1) == '<' || pc(p, e + 1) == '>') &&
        !(pc(p, e + 1) == '<' && pc(p, e + 2) == '(') &&
        !(pc(p, e + 1) == '>' && pc(p, e + 2) == '(')) {
      t->vname = p->src + p->pos + 1;
      t->vlen = (unsigned)(e - 1);
      p->pos += e + 1;
      c = pc(p, 0), c1 = pc(p, 1), c2 = pc(p, 2);
    }
  }
  /* IO number */
  int fd = -1;
  size_t d = 0;
  while (pc(p, d) >= '0' && pc(p, d) <= '9') d++;
  if (d > 0 && d < 5 && (pc(p, d) == '<' || pc(p, d) == '>')) {
    fd = atoi(p->src + p->pos);
    p->pos += d;
    c = pc(p, 0), c1 = pc(p, 1), c2 = pc(p, 2);
  }
  if (!p->in_cond && (c == '<' || c == '>' || (fd < 0 && c == '&' && c1 == '>'))) {
    if (c == '<' && c1 == '(') goto word; /* process substitution */
    if (c == '>' && c1 == '(' && fd < 0) goto word;
    t->kind = T_REDIR;
    t->fd = fd;
    if (c == '&') {
      if (c2 == '>') {
        t->rkind = R_APPEND_ERR;
        p->pos += 3;
      } else {
        t->rkind = R_OUT_ERR;
        p->pos += 2;
      }
    } else if (c == '<') {
      if (c1 == '<' && c2 == '<') {
        t->rkind = R_HERESTR;
        p->pos += 3;
      } else if (c1 == '<' && c2 == '-') {
        t->rkind = R_HEREDOC;
        t->strip = true;
        p->pos += 3;
      } else if (c1 == '<') {
        t->rkind = R_HEREDOC;
        p->pos += 2;
      } else if (c1 == '&') {
        t->rkind = R_DUP_IN;
        p->pos += 2;
      } else if (c1 == '>') {
        t->rkind = R_RDWR;
        p->pos += 2;
      } else {
        t->rkind = R_IN;
        p->pos += 1;
      }
    } else {
      if (c1 == '>') {
        t->rkind = R_APPEND;
        p->pos += 2;
      } else if (c1 == '|') {
        t->rkind = R_CLOBBER;
        p->pos += 2;
      } else if (c1 == '&') {
        t->rkind = R_DUP_OUT;
        p->pos += 2;
      } else {
        t->rkind = R_OUT;
        p->pos += 1;
      }
    }
    return true;
  }
  if (fd >= 0) {
    /* digits not followed by a redirection: a word */
    p->pos = t->start;
    c = pc(p, 0), c1 = pc(p, 1);
  }
  switch (c) {
  case ';':
    if (c1 == ';' && c2 == '&') {
      t->kind = T_DSEMIAMP;
      p->pos += 3;
      return true;
    }
    if (c1 == ';') {
      t->kind = T_DSEMI;
      p->pos += 2;
      return true;
    }
    if (c1 == '&') {
      t->kind = T_SEMIAMP;
      p->pos += 2;
      return true;
    }
    t->kind = T_SEMI;
    p->pos++;
    return true;
  case '&':
    if (c1 == '&') {
      t->kind = T_AND;
      p->pos += 2;
      return true;
    }
    t->kind = T_AMP;
    p->pos++;
    return true;
  case '|':
    if (c1 == '|') {
      t->kind = T_OR;
      p->pos += 2;
      return true;
    }
    if (c1 == '&') {
      t->kind = T_PIPEAMP;
      p->pos += 2;
      return true;
    }
    t->kind = T_PIPE;
    p->pos++;
    return true;
  case '(':
    t->kind = T_LPAREN;
    p->pos++;
    return true;
  case ')':
    t->kind = T_RPAREN;
    p->pos++;
    return true;
  default: break;
  }
word : {
  bool plain = true, hard = false;
  size_t start = p->pos;
  if (p->in_array && pc(p, 0) == '[') {
    /* an element's subscript may hold blanks and quotes, up to its `]=` */
    size_t e = p->pos + 1;
    while (e < p->len && p->src[e] != ']' && p->src[e] != '\n') {
      if (p->src[e] == '\\' && e + 1 < p->len)
        e++;
      else if (p->src[e] == '\'' || p->src[e] == '"') {
        char q = p->src[e];
        while (++e < p->len && p->src[e] != q)
          if (q == '"' && p->src[e] == '\\') e++;
      }
      e++;
    }
    if (e + 1 < p->len && p->src[e] == ']' &&
        (p->src[e + 1] == '=' ||
         (p->src[e + 1] == '+' && e + 2 < p->len && p->src[e + 2] == '='))) {
      p->pos = e + 1;
      plain = false;
      hard = true;
    }
  }
  while (p->pos < p->len) {
    {
      const char *src = p->src;
      size_t i = p->pos, len = p->len;
      while (i < len && !word_special[(unsigned char)src[i]]) i++;
      p->pos = i;
    }
    if (p->pos >= p->len) break;
    char ch = p->src[p->pos];
    if (p->in_cond && (ch == '<' || ch == '>') && p->pos == start) {
      p->pos++;
      break;
    }
    if ((ch == '<' || ch == '>') && pc(p, 1) == '(' && !p->in_cond) {
      p->pos += 2;
      if (!parse_subst(p)) return false;
      plain = false;
      hard = true;
      continue;
    }
    if (ch == '(' && p->pos > start) {
      char prev = p->src[p->pos - 1];
      size_t wl = p->pos - start;
      size_t nl = wl >= 2 && p->src[p->pos - 2] == '+' ? wl - 2 : wl - 1;
      /* NAME=( and NAME[k]=( (which bash reads as a list to refuse it) */
      bool arr =
        prev == '=' && (box_is_name(p->src + start, nl) || subscripted_name(p->src + start, nl));
      /* an extglob group only when extglob is on as the text is read:
       * `shopt -s extglob` works from the next line, as in bash */
      bool ext = strchr("@!*+?", prev) && (p->ext_pat || (p->sh->shopts & SH_EXTGLOB));
      if (arr || ext) {
        /* array literal or extglob group: up to the matching ")" */
        int depth = 0;
        plain = false;
        hard = true;
        while (p->pos < p->len) {
          char e = p->src[p->pos];
          if (arr && depth == 1 && !array_literal_byte(p)) return false;
          if (e == '\\') {
            p->pos += 2;
            continue;
          }
          if (e == '\'') {
            p->pos++;
            if (!scan_squote(p)) return false;
            continue;
          }
          if (e == '"') {
            p->pos++;
            if (!scan_word_until(p, '"')) return false;
            continue;
          }
          if (e == '$') {
            if (!scan_dollar(p)) return false;
            continue;
          }
          if (e == '`') {
            p->pos++;
            if (!scan_backquote(p)) return false;
            continue;
          }
          if (e == '\n') p->line++;
          if (e == '(') depth++;
          if (e == ')' && --depth == 0) {
            p->pos++;
            break;
          }
          p->pos++;
        }
        if (arr && depth > 0) {
          array_literal_error(p, "unexpected EOF while looking for matching `)'");
          return false;
        }
        continue;
      }
    }
    if ((ch == '(' || ch == ' ' || ch == '\t') && !p->in_cond && subscript_assign(p, start))
      continue;
    if (is_meta((unsigned char)ch)) break;
    if (p->in_cond && ch == '(') break;
    switch (ch) {
    case '\\':
      plain = false;
      hard = true;
      if (pc(p, 1) == '\n') {
        /* line continuation inside a word: drop it from the text */
        memmove(p->src + p->pos, p->src + p->pos + 2, p->len - p->pos - 2);
        p->len -= 2;
        p->src[p->len] = '\0';
        p->line++;
        continue;
      }
      p->pos += 2;
      if (p->pos > p->len) p->pos = p->len;
      continue;
    case '\'':
      plain = false;
      hard = true;
      p->pos++;
      if (!scan_squote(p)) return false;
      continue;
    case '"':
      plain = false;
      hard = true;
      p->pos++;
      if (!scan_word_until(p, '"')) return false;
      continue;
    case '`':
      plain = false;
      hard = true;
      p->pos++;
      if (!scan_backquote(p)) return false;
      continue;
    case '$':
      plain = false;
      hard = true;
      if (!scan_dollar(p)) return false;
      continue;
    case '*':
    case '?':
    case '[':
    case '~':
    case '{':
    case '}':
    case ']':
    case '=':
    case ',': plain = false; break;
    default: break;
    }
    p->pos++;
  }
  t->kind = T_WORD;
  t->text = p->src + start;
  t->len = p->pos - start;
  t->plain = plain;
  t->soft = !plain && !hard;
  if (t->len == 0) {
    /* a lone character the word loop refused (e.g. "(" in [[ ]]) */
    p->pos++;
    t->len = 1;
  }
  t->kw = keyword_of(t->text, t->len);
  return true;
}
}

static Tok *peek(Parser *p)
{
  if (!p->have) {
    if (!lex(p, &p->look)) {
      p->look.kind = T_EOF;
      p->err = true;
    }
    p->have = true;
  }
  return &p->look;
}

static Tok next(Parser *p)
{
  peek(p);
  p->have = false;
  return p->look;
}

static inline bool is_kw(Parser *p, int kw)
{
  Tok *t = peek(p);
  return t->kind == T_WORD && t->kw == kw;
}

static const char *tok_text(Parser *p, Tok *t, char *buf, size_t n)
{
  switch (t->kind) {
  case T_EOF: return NULL;
  case T_NEWLINE: return "newline";
  case T_WORD: g_strlcpy(buf, t->text, MIN(n, t->len + 1)); return buf;
  default: {
    size_t l = p->pos - t->start;
    if (p->have) l = (size_t)-1;
    (void)l;
    static const char *names[] = { "",   "newline", "",  ";",  ";;", ";&", ";;&", "&",
                                   "&&", "||",      "|", "|&", "(",  ")",  "" };
    if (t->kind == T_REDIR) {
      switch (t->rkind) {
      case R_IN: return "<";
      case R_OUT: return ">";
      case R_CLOBBER: return ">|";
      case R_APPEND: return ">>";
      case R_RDWR: return "<>";
      case R_DUP_IN: return "<&";
      case R_DUP_OUT: return ">&";
      case R_OUT_ERR: return "&>";
      case R_APPEND_ERR: return "&>>";
      case R_HEREDOC: return t->strip ? "<<-" : "<<";
      case R_HERESTR: return "<<<";
      }
    }
    return names[t->kind];
  }
  }
}

static void unexpected(Parser *p, Tok *t)
{
  char buf[256];
  const char *s = tok_text(p, t, buf, sizeof buf);
  /* an unexpected newline is on the line it ends, not the next */
  int line = p->line;
  if (t->kind == T_NEWLINE) p->line = t->line;
  if (!s)
    perror_at(p, "syntax error: unexpected end of file");
  else
    perror_at(p, "syntax error near unexpected token `%s'", s);
  p->line = line;
}

/* An error inside [[ ]], in bash's words for it (msg NULL: bash says
 * nothing): like a token out of place, it leaves $? as it was. */
static void cond_error_text(Parser *p, const char *msg, const char *text)
{
  if (p->err) return;
  if (msg)
    perror_at(p, msg, text ? text : "EOF");
  else
    p->err = true;
  if (p->probe) return;
  p->err_token = true;
  p->err_status = p->depth > 0 ? 127 : 2;
}

static void cond_error(Parser *p, const char *msg, Tok *t)
{
  char buf[256];
  cond_error_text(p, msg, t ? tok_text(p, t, buf, sizeof buf) : NULL);
}

/* An operator at src[at] where the regex of =~ or the ]] after it was due
 * (`[[ a =~ ; ]]`, `[[ a =~ x<> ]]`): bash names it as it is written. */
static void cond_op_error(Parser *p, size_t at)
{
  const char *o = p->src + at;
  size_t n = 1;
  if (*o == ';' || *o == '&')
    n += at + 1 < p->len && o[1] == *o;
  else
    n += at + 1 < p->len && strchr("<>&|", o[1]) != NULL;
  char *m = g_strndup(o, n);
  cond_error_text(p, "syntax error in conditional expression: unexpected token `%s'", m);
  g_free(m);
}

static bool is_assign_word(const char *s, size_t n);

/* The lexer flags a word for any character that may start a pattern,
 * brace or assignment; a word whose such characters do nothing on their
 * own (`[`, `]`, `=`, `a,b`, `x}`) still expands to itself, and using its
 * text as is spares the expander for the commonest words of tests. */
G_GNUC_NO_INLINE static bool expands_to_itself(const char *s, size_t n)
{
  if (n == 1 && s[0] == '[') return true; /* no closing `]`: not a pattern */
  for (size_t i = 0; i < n; i++) {
    switch (s[i]) {
    case '\\':
    case '\'':
    case '"':
    case '`':
    case '$':
    case '*':
    case '?':
    case '[':
    case '~':
    case '{':
    case '(':
    case '<':
    case '>':
    case '\n': return false;
    default: break;
    }
  }
  return !is_assign_word(s, n);
}

static Word *mkword(Parser *p, const char *text, size_t len, bool plain, bool soft)
{
  Word *w = box_arena_alloc(p->sh, sizeof *w);
  w->text = box_arena_strndup(p->sh, text, len);
  w->flags = plain || (soft && expands_to_itself(text, len)) ? W_PLAIN : 0;
  return w;
}

static Node *mknode(Parser *p, NodeKind k)
{
  Node *n = box_arena_alloc(p->sh, sizeof *n);
  memset(n, 0, sizeof *n);
  n->kind = k;
  n->line = p->line;
  return n;
}

/* A growable array on the stack while a construct is parsed, copied into
 * the arena when it is complete (no heap traffic for the common sizes). */
typedef struct {
  char *data;
  size_t n, cap, size;
  char buf[256];
} Vec;

static inline void vec_init(Vec *v, size_t size)
{
  v->data = v->buf;
  v->n = 0;
  v->size = size;
  v->cap = sizeof v->buf / size;
}

static void vec_push(Vec *v, const void *elem)
{
  if (G_UNLIKELY(v->n == v->cap)) {
    size_t cap = v->cap * 2;
    char *d = g_malloc(cap * v->size);
    memcpy(d, v->data, v->n * v->size);
    if (v->data != v->buf) g_free(v->data);
    v->data = d;
    v->cap = cap;
  }
  memcpy(v->data + v->n * v->size, elem, v->size);
  v->n++;
}

static inline void vec_push_ptr(Vec *v, void *ptr)
{
  if (G_LIKELY(v->n < v->cap)) {
    memcpy(v->data + v->n * sizeof ptr, &ptr, sizeof ptr); /* a word or node, in place */
    v->n++;
    return;
  }
  vec_push(v, &ptr);
}

static inline void *vec_last(Vec *v)
{
  return v->data + (v->n - 1) * v->size;
}

static inline void vec_free(Vec *v)
{
  if (v->data != v->buf) g_free(v->data);
  v->data = v->buf;
}

/* The elements in the arena, followed by one zeroed element; frees v. */
static void *vec_finish(Parser *p, Vec *v)
{
  char *r = box_arena_alloc(p->sh, (v->n + 1) * v->size);
  memcpy(r, v->data, v->n * v->size);
  memset(r + v->n * v->size, 0, v->size);
  vec_free(v);
  return r;
}

static void linebreak(Parser *p)
{
  while (!p->err && peek(p)->kind == T_NEWLINE) next(p);
}

/* ---- here-documents ------------------------------------------------------------ */

static bool read_heredocs(Parser *p)
{
  for (guint i = 0; i < p->docs->len; i++) {
    PendingDoc *d = &g_array_index(p->docs, PendingDoc, i);
    GString *body = g_string_new(NULL);
    bool found = false;
    while (p->pos < p->len) {
      size_t e = p->pos;
      while (e < p->len && p->src[e] != '\n') e++;
      const char *line = p->src + p->pos;
      size_t ll = e - p->pos;
      if (d->strip)
        while (ll > 0 && *line == '\t') line++, ll--;
      p->pos = e < p->len ? e + 1 : e;
      p->line++;
      if (ll == strlen(d->delim) && memcmp(line, d->delim, ll) == 0) {
        found = true;
        break;
      }
      g_string_append_len(body, line, (gssize)ll);
      g_string_append_c(body, '\n');
    }
    if (!found && p->probe) {
      p->incomplete = BOX_PARSE_IN_HEREDOC;
    } else if (!found) {
      char *m =
        g_strdup_printf("warning: here-document at line %d delimited by end-of-file (wanted `%s')",
                        p->line, d->delim);
      box_sh_error(p->sh, "%s", m);
      g_free(m);
    }
    d->r->body = box_arena_strndup(p->sh, body->str, body->len);
    g_string_free(body, TRUE);
    g_free(d->delim);
  }
  g_array_set_size(p->docs, 0);
  return true;
}

/* Removes quotes from a here-doc delimiter. */
static char *delim_unquote(const char *s, size_t n, bool *quoted)
{
  GString *g = g_string_new(NULL);
  *quoted = false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '\'' || c == '"') {
      *quoted = true;
      continue;
    }
    if (c == '\\' && i + 1 < n) {
      *quoted = true;
      g_string_append_c(g, s[++i]);
      continue;
    }
    if (c == '$' && i + 1 < n && (s[i + 1] == '\'' || s[i + 1] == '"')) continue;
    g_string_append_c(g, c);
  }
  return g_string_free(g, FALSE);
}

/* ---- grammar --------------------------------------------------------------------- */

static Node *parse_and_or(Parser *p);
static Node *parse_command(Parser *p);

static bool parse_redir(Parser *p, Vec *redirs)
{
  Tok op = next(p);
  Tok w = next(p);
  if (w.kind != T_WORD) {
    if (w.kind == T_EOF)
      perror_at(p, "syntax error near unexpected token `newline'");
    else
      unexpected(p, &w);
    return false;
  }
  Redir r = { op.rkind, op.fd, mkword(p, w.text, w.len, w.plain, w.soft),
              NULL,     false, op.vname ? box_arena_strndup(p->sh, op.vname, op.vlen) : NULL };
  vec_push(redirs, &r);
  if (op.rkind == R_HEREDOC) {
    Redir *last = vec_last(redirs);
    PendingDoc d;
    d.r = box_arena_alloc(p->sh, sizeof(HereDoc));
    d.r->body = box_arena_strndup(p->sh, "", 0);
    last->doc = d.r;
    d.delim = delim_unquote(w.text, w.len, &last->quoted);
    d.strip = op.strip;
    g_array_append_val(p->docs, d);
  }
  return true;
}

/* The redirections of a command, in the arena (NULL when none). */
static Redir *finish_redirs(Parser *p, Vec *redirs, size_t *n)
{
  *n = redirs->n;
  if (!redirs->n) {
    vec_free(redirs);
    return NULL;
  }
  return vec_finish(p, redirs);
}

static bool is_assign_word(const char *s, size_t n)
{
  size_t i = 0;
  if (n == 0 || !(s[0] == '_' || g_ascii_isalpha(s[0]))) return false;
  while (i < n && (s[i] == '_' || g_ascii_isalnum(s[i]))) i++;
  if (i < n && s[i] == '[') {
    int depth = 0;
    for (; i < n; i++) {
      if (s[i] == '\\') {
        i++;
      } else if (s[i] == '\'' || s[i] == '"') {
        /* a quoted "]" is the key's own (`A[']']=v`) */
        const char *q = memchr(s + i + 1, s[i], n - i - 1);
        if (!q) return false;
        i = (size_t)(q - s);
      } else if (s[i] == '[')
        depth++;
      else if (s[i] == ']' && --depth == 0)
        break;
    }
    if (i >= n) return false;
    i++;
  }
  if (i < n && s[i] == '+') i++;
  return i < n && s[i] == '=';
}

static bool tok_is_reserved(Tok *t)
{
  return t->kind == T_WORD && t->kw != KW_NONE;
}

/* Alias substitution at a command position. */
static void try_alias(Parser *p)
{
  for (int guard = 0; guard < 100; guard++) {
    Tok *t = peek(p);
    /* unquoted, and without $ or `: `e_+.~x` may be an alias's name */
    if (t->kind != T_WORD || !(t->plain || t->soft) || !p->sh->aliases ||
        !g_hash_table_size(p->sh->aliases) || p->in_subst)
      return;
    char *name = g_strndup(t->text, t->len);
    const char *val = g_hash_table_lookup(p->sh->aliases, name);
    bool active = false;
    for (guint i = 0; i < p->alias_active->len; i++)
      if (strcmp(p->alias_active->pdata[i], name) == 0) active = true;
    if (!val || active) {
      g_free(name);
      return;
    }
    size_t vl = strlen(val);
    size_t after = t->start + t->len;
    char *ns = g_malloc(vl + (p->len - after) + 1);
    memcpy(ns, val, vl);
    memcpy(ns + vl, p->src + after, p->len - after);
    ns[vl + p->len - after] = '\0';
    /* shift existing alias ends */
    for (guint i = 0; i < p->alias_end->len; i++) {
      size_t *e = &g_array_index(p->alias_end, size_t, i);
      *e = *e >= after ? *e - after + vl : 0;
    }
    g_free(p->src);
    p->src = ns;
    p->len = vl + p->len - after;
    p->pos = 0;
    p->have = false;
    /* the name is active while its text is read */
    g_ptr_array_add(p->alias_active, (gpointer)g_intern_string(name));
    size_t end = vl;
    g_array_append_val(p->alias_end, end);
    g_free(name);
    p->alias_next = vl > 0 && (val[vl - 1] == ' ' || val[vl - 1] == '\t');
    p->alias_next_from = vl;
  }
}

/* An assignment word whose value is a list: NAME=(…), NAME+=(…), NAME[k]=(…). */
static bool compound_word(const char *s, size_t n)
{
  size_t i = 0;
  while (i < n && (s[i] == '_' || g_ascii_isalnum(s[i]))) i++;
  if (i < n && s[i] == '[') {
    const char *e = memchr(s + i, ']', n - i);
    if (!e) return false;
    i = (size_t)(e - s) + 1;
  }
  if (i < n && s[i] == '+') i++;
  return i + 1 < n && s[i] == '=' && s[i + 1] == '(';
}

/* NAME=(…) where no command takes it (for's and select's words, case's
 * word): bash's syntax error at its `(`. */
static bool list_word(const Tok *w)
{
  return !w->plain && is_assign_word(w->text, w->len) && compound_word(w->text, w->len);
}

/* A command name, written plainly, that takes NAME=(…) arguments. */
static bool decl_name(const Word *w)
{
  static const char *const names[] = { "declare",  "typeset", "local", "export",
                                       "readonly", "alias",   "let",   "eval" };
  if (!(w->flags & W_PLAIN)) return false;
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    if (strcmp(w->text, names[i]) == 0) return true;
  return false;
}

static Node *parse_simple(Parser *p)
{
  Vec assigns, words, redirs;
  vec_init(&assigns, sizeof(Word *));
  vec_init(&words, sizeof(Word *));
  vec_init(&redirs, sizeof(Redir));
  int line0 = peek(p)->line;
  /* the command's name may follow redirections and assignments, and is
   * an alias there too (`>f e_ 1`, `>f x=1 e_ 2`), as bash's; not after a
   * redirection that follows an assignment (`x=1 >f e_`) */
  bool before_name = false, assigned = false, name_lost = false;
  for (;;) {
    if (p->err) break;
    if (words.n > 0 && p->alias_next && peek(p)->start >= p->alias_next_from) {
      p->alias_next = false;
      try_alias(p);
    }
    if (before_name) {
      before_name = false;
      try_alias(p);
    }
    Tok *t = peek(p);
    if (t->kind == T_REDIR) {
      if (!parse_redir(p, &redirs)) break;
      name_lost = name_lost || assigned;
      before_name = words.n == 0 && !name_lost;
      continue;
    }
    if (t->kind != T_WORD) break;
    Tok w = next(p);
    bool assign = !w.plain && is_assign_word(w.text, w.len);
    if (words.n == 0 && assign) {
      Word *wd = mkword(p, w.text, w.len, false, false);
      wd->flags |= W_ASSIGN;
      vec_push_ptr(&assigns, wd);
      assigned = true;
      before_name = !name_lost;
      continue;
    }
    /* NAME=(…) as an argument: only after a declaration builtin's name,
     * as bash reads it (`echo a=(1)`, `builtin declare a=(1)` are errors) */
    if (words.n > 0 && assign && compound_word(w.text, w.len)) {
      Word *first;
      memcpy(&first, words.data, sizeof first);
      if (!decl_name(first)) {
        perror_at(p, "syntax error near unexpected token `('");
        break;
      }
    }
    Word *wd = mkword(p, w.text, w.len, w.plain, w.soft);
    /* keep "name=(…)" after declare-like commands as an assignment word */
    if (words.n > 0 && assign) wd->flags |= W_ASSIGN;
    vec_push_ptr(&words, wd);
    if (words.n == 1 && peek(p)->kind == T_LPAREN && assigns.n == 0 && redirs.n == 0) {
      /* name ( ) compound — function definition */
      next(p);
      Tok r = next(p);
      if (r.kind != T_RPAREN) {
        unexpected(p, &r);
        break;
      }
      linebreak(p);
      int body_line = peek(p)->line;
      Node *body = parse_command(p);
      if (!body) {
        if (!p->err) unexpected(p, peek(p));
        break;
      }
      Node *f = mknode(p, N_FUNCDEF);
      f->u.func.name = box_arena_strndup(p->sh, wd->text, strlen(wd->text));
      f->u.func.body = body;
      f->u.func.body_line = body_line;
      vec_free(&assigns);
      vec_free(&words);
      vec_free(&redirs);
      return f;
    }
  }
  if (p->err || (!assigns.n && !words.n && !redirs.n)) {
    vec_free(&assigns);
    vec_free(&words);
    vec_free(&redirs);
    return NULL;
  }
  Node *n = mknode(p, N_SIMPLE);
  n->line = line0;
  n->u.simple.nassigns = assigns.n;
  n->u.simple.assigns = vec_finish(p, &assigns);
  n->u.simple.nwords = words.n;
  n->u.simple.words = vec_finish(p, &words);
  n->redirs = finish_redirs(p, &redirs, &n->nredirs);
  return n;
}

static bool expect_kw(Parser *p, int kw)
{
  if (p->err) return false;
  if (!is_kw(p, kw)) {
    unexpected(p, peek(p));
    return false;
  }
  next(p);
  return true;
}

/* A compound list inside a construct: up to one of the stop words. */
static Node *parse_compound_list(Parser *p)
{
  linebreak(p);
  Node *n = parse_list(p, false);
  return n;
}

/* A construct's body: a compound list of at least one command (`do done`,
 * `then fi`, `{ }` are syntax errors; a case item may be empty). */
static Node *parse_body(Parser *p)
{
  Node *n = parse_compound_list(p);
  if (!n && !p->err) unexpected(p, peek(p));
  return n;
}

static Cond *cond_or(Parser *p);

static Word *cond_word(Parser *p)
{
  Tok t = next(p);
  if (t.kind != T_WORD) {
    unexpected(p, &t);
    return NULL;
  }
  return mkword(p, t.text, t.len, t.plain, t.soft);
}

static bool cond_is(Parser *p, const char *s)
{
  Tok *t = peek(p);
  if (t->kind == T_WORD) return t->len == strlen(s) && memcmp(t->text, s, t->len) == 0;
  if (strcmp(s, "&&") == 0) return t->kind == T_AND;
  if (strcmp(s, "||") == 0) return t->kind == T_OR;
  if (strcmp(s, "(") == 0) return t->kind == T_LPAREN;
  if (strcmp(s, ")") == 0) return t->kind == T_RPAREN;
  return false;
}

static Cond *mkcond(Parser *p, CondKind k)
{
  Cond *c = box_arena_alloc(p->sh, sizeof *c);
  memset(c, 0, sizeof *c);
  c->kind = k;
  return c;
}

static const char *const unary_ops[] = { "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k",
                                         "-p", "-r", "-s", "-t", "-u", "-w", "-x", "-G", "-L",
                                         "-N", "-O", "-S", "-z", "-n", "-o", "-v", "-R", NULL };
static const char *const pattern_ops[] = { "==", "=", "!=", NULL };
static const char *const binary_ops[] = { "==",  "=",   "!=",  "=~",  "<",   ">",   "-eq", "-ne",
                                          "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", NULL };

static bool in_list(const char *const *l, const char *s, size_t n)
{
  for (int i = 0; l[i]; i++)
    if (strlen(l[i]) == n && memcmp(l[i], s, n) == 0) return true;
  return false;
}

/* The right side of =~ : read raw up to a blank outside parens. */
static Word *cond_regex_word(Parser *p)
{
  while (p->pos < p->len && (p->src[p->pos] == ' ' || p->src[p->pos] == '\t')) p->pos++;
  size_t start = p->pos;
  int depth = 0;
  bool plain = true;
  while (p->pos < p->len) {
    char c = p->src[p->pos];
    if (c == '\\') {
      p->pos += 2;
      plain = false;
      continue;
    }
    if (c == '\'') {
      p->pos++;
      scan_squote(p);
      plain = false;
      continue;
    }
    if (c == '"') {
      p->pos++;
      scan_word_until(p, '"');
      plain = false;
      continue;
    }
    if (c == '$') {
      scan_dollar(p);
      plain = false;
      continue;
    }
    if (c == '(')
      depth++;
    else if (c == ')') {
      if (depth == 0) break;
      depth--;
    } else if (depth == 0 &&
               (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '<' ||
                c == '>' || (c == '|' && p->pos + 1 < p->len && p->src[p->pos + 1] == c)))
      break; /* outside ( ) only `|` of the operators is the regex's */
    p->pos++;
  }
  if (p->pos == start ||
      (p->pos - start == 2 && memcmp(p->src + start, "]]", 2) == 0)) { /* [[ a =~ ]] */
    p->pos = start;
    char c = p->pos < p->len ? p->src[p->pos] : 0;
    if (c == '\n') {
      cond_error_text(p, "unexpected argument `%s' to conditional binary operator", "newline");
    } else if (c && strchr(";&<>", c)) {
      cond_op_error(p, p->pos);
    } else {
      cond_error(p, "unexpected argument `%s' to conditional binary operator", peek(p));
    }
    return NULL;
  }
  (void)plain;
  return mkword(p, p->src + start, p->pos - start, false, false);
}

static Cond *cond_primary_in(Parser *p);

static Cond *cond_primary(Parser *p)
{
  Cond *c = nest_in(p) ? cond_primary_in(p) : NULL;
  p->nest--;
  return c;
}

static Cond *cond_primary_in(Parser *p)
{
  if (p->err) return NULL;
  linebreak(p);
  if (cond_is(p, "!")) {
    next(p);
    Cond *c = mkcond(p, C_NOT);
    c->l = cond_primary(p);
    return c->l ? c : NULL;
  }
  if (cond_is(p, "(")) {
    next(p);
    Cond *c = cond_or(p);
    if (!c) return NULL;
    if (!cond_is(p, ")")) {
      cond_error(p, "unexpected token `%s', expected `)'", peek(p));
      return NULL;
    }
    next(p);
    return c;
  }
  Tok *t = peek(p);
  if (t->kind == T_WORD && in_list(unary_ops, t->text, t->len)) {
    Tok op = next(p);
    Tok *n = peek(p);
    bool end = n->kind != T_WORD || (n->len == 2 && memcmp(n->text, "]]", 2) == 0) ||
               (n->plain && n->len == 1 && (n->text[0] == '<' || n->text[0] == '>'));
    if (end) {
      /* bash: `[[ -z ]]`, `[[ -f < ]]` are errors of [[ ]] (its status stays) */
      char buf[256];
      const char *s = tok_text(p, n, buf, sizeof buf);
      perror_at(p, "unexpected argument `%s' to conditional unary operator", s ? s : "");
      p->err_token = true;
      if (p->depth > 0) p->err_status = 127; /* as any bad token inside $( ) */
      return NULL;
    }
    if (n->kind == T_WORD) {
      Cond *c = mkcond(p, C_UNARY);
      c->op = box_arena_strndup(p->sh, op.text, op.len);
      c->a = cond_word(p);
      return c;
    }
    Cond *c = mkcond(p, C_WORD);
    c->a = mkword(p, op.text, op.len, true, false);
    return c;
  }
  if (t->kind != T_WORD || (t->len == 2 && memcmp(t->text, "]]", 2) == 0)) {
    /* no operand: bash says nothing of `[[ ]]`, `[[ ! ]]` or `[[ a && ]]` */
    cond_error(p, t->kind == T_WORD ? NULL : "unexpected token `%s' in conditional command", t);
    return NULL;
  }
  Word *a = cond_word(p);
  Tok *o = peek(p);
  if (o->kind == T_WORD && in_list(binary_ops, o->text, o->len)) {
    Tok op = next(p);
    Cond *c = mkcond(p, C_BINARY);
    c->op = box_arena_strndup(p->sh, op.text, op.len);
    c->a = a;
    if (strcmp(c->op, "=~") == 0) {
      p->have = false;
      c->b = cond_regex_word(p);
    } else {
      p->ext_pat = in_list(pattern_ops, c->op, strlen(c->op));
      Tok *r = peek(p);
      p->ext_pat = false;
      /* `[[ a == ]]`: the "]]" is no operand */
      if (r->kind != T_WORD || (r->len == 2 && memcmp(r->text, "]]", 2) == 0)) {
        cond_error(p, "unexpected argument `%s' to conditional binary operator", r);
        return NULL;
      }
      c->b = cond_word(p);
    }
    return c->b ? c : NULL;
  }
  /* a word alone is followed by ]], &&, || or ) */
  if (o->kind == T_WORD && !(o->len == 2 && memcmp(o->text, "]]", 2) == 0))
    cond_error(p, "conditional binary operator expected", NULL);
  else if (o->kind != T_WORD && o->kind != T_AND && o->kind != T_OR && o->kind != T_RPAREN &&
           o->kind != T_EOF)
    cond_error(p, "unexpected token `%s', conditional binary operator expected", o);
  if (p->err) return NULL;
  Cond *c = mkcond(p, C_WORD);
  c->a = a;
  return c;
}

static Cond *cond_and(Parser *p)
{
  Cond *l = cond_primary(p);
  while (l && !p->err && cond_is(p, "&&")) {
    next(p);
    Cond *c = mkcond(p, C_AND);
    c->l = l;
    c->r = cond_primary(p);
    if (!c->r) return NULL;
    l = c;
  }
  return l;
}

static Cond *cond_or(Parser *p)
{
  Cond *l = cond_and(p);
  while (l && !p->err && cond_is(p, "||")) {
    next(p);
    Cond *c = mkcond(p, C_OR);
    c->l = l;
    c->r = cond_and(p);
    if (!c->r) return NULL;
    l = c;
  }
  return l;
}

/* Reads "(( … ))" text after the opening "((" up to the matching "))". */
static char *arith_text(Parser *p)
{
  size_t start = p->pos;
  int depth = 0;
  while (p->pos < p->len) {
    char c = p->src[p->pos];
    if (c == '(')
      depth++;
    else if (c == ')') {
      if (depth == 0 && pc(p, 1) == ')') {
        char *t = box_arena_strndup(p->sh, p->src + start, p->pos - start);
        p->pos += 2;
        return t;
      }
      if (depth == 0) break;
      depth--;
    } else if (c == '\n')
      p->line++;
    p->pos++;
  }
  return NULL;
}

static Node *parse_compound(Parser *p)
{
  Tok *t = peek(p);
  if (t->kind == T_LPAREN) {
    /* "((" arithmetic, else a subshell */
    if (pc(p, 0) == '(') {
      size_t save = p->pos;
      int sline = p->line;
      p->pos++;
      char *e = arith_text(p);
      if (e) {
        p->have = false;
        Node *n = mknode(p, N_ARITH);
        n->u.arith.expr = e;
        return n;
      }
      p->pos = save;
      p->line = sline;
    }
    next(p);
    Node *body = parse_body(p);
    if (p->err) return NULL;
    if (peek(p)->kind != T_RPAREN) {
      unexpected(p, peek(p));
      return NULL;
    }
    next(p);
    Node *n = mknode(p, N_SUBSHELL);
    n->u.un.child = body;
    return n;
  }
  if (t->kind != T_WORD) return NULL;
  if (is_kw(p, KW_LBRACE)) {
    next(p);
    Node *body = parse_body(p);
    if (!expect_kw(p, KW_RBRACE)) return NULL;
    Node *n = mknode(p, N_GROUP);
    n->u.un.child = body;
    return n;
  }
  if (is_kw(p, KW_IF)) {
    next(p);
    Node *n = mknode(p, N_IF);
    n->u.ifn.cond = parse_body(p);
    if (!expect_kw(p, KW_THEN)) return NULL;
    n->u.ifn.then = parse_body(p);
    Node *cur = n;
    for (;;) {
      if (p->err) return NULL;
      if (is_kw(p, KW_ELIF)) {
        next(p);
        Node *e = mknode(p, N_IF);
        e->u.ifn.cond = parse_body(p);
        if (!expect_kw(p, KW_THEN)) return NULL;
        e->u.ifn.then = parse_body(p);
        cur->u.ifn.els = e;
        cur = e;
        continue;
      }
      if (is_kw(p, KW_ELSE)) {
        next(p);
        cur->u.ifn.els = parse_body(p);
      }
      break;
    }
    if (!expect_kw(p, KW_FI)) return NULL;
    if (!n->u.ifn.cond || !n->u.ifn.then) { /* empty condition or body: bash refuses */
    }
    return n;
  }
  if (is_kw(p, KW_WHILE) || is_kw(p, KW_UNTIL)) {
    bool w = is_kw(p, KW_WHILE);
    next(p);
    Node *n = mknode(p, w ? N_WHILE : N_UNTIL);
    n->u.loop.cond = parse_body(p);
    if (!expect_kw(p, KW_DO)) return NULL;
    n->u.loop.body = parse_body(p);
    if (!expect_kw(p, KW_DONE)) return NULL;
    return n;
  }
  if (is_kw(p, KW_FOR) || is_kw(p, KW_SELECT)) {
    next(p);
    if (peek(p)->kind == T_LPAREN && pc(p, 0) == '(') {
      p->pos++;
      p->have = false;
      char *e = arith_text(p);
      if (!e) {
        perror_at(p, "syntax error: `((' without matching `))'");
        return NULL;
      }
      Node *n = mknode(p, N_ARITH_FOR);
      char **parts = split_for_parts(e);
      if (g_strv_length(parts) != 3) {
        bool more = g_strv_length(parts) > 3;
        g_strfreev(parts);
        perror_at(p, more ? "syntax error: `;' unexpected"
                          : "syntax error: arithmetic expression required");
        return NULL;
      }
      n->u.afor.init = box_arena_strndup(p->sh, parts[0], strlen(parts[0]));
      n->u.afor.cond = box_arena_strndup(p->sh, parts[1], strlen(parts[1]));
      n->u.afor.step = box_arena_strndup(p->sh, parts[2], strlen(parts[2]));
      g_strfreev(parts);
      if (peek(p)->kind == T_SEMI) next(p);
      linebreak(p);
      Node *body;
      if (is_kw(p, KW_DO)) {
        next(p);
        body = parse_body(p);
        if (!expect_kw(p, KW_DONE)) return NULL;
      } else if (is_kw(p, KW_LBRACE)) {
        body = parse_compound(p);
      } else {
        unexpected(p, peek(p));
        return NULL;
      }
      n->u.afor.body = body;
      return n;
    }
    /* a word that is no name is bash's error when the loop runs (exec.c) */
    Tok v = next(p);
    if (v.kind != T_WORD) {
      unexpected(p, &v);
      return NULL;
    }
    Node *n = mknode(p, N_FOR);
    n->u.forn.var = box_arena_strndup(p->sh, v.text, v.len);
    linebreak(p);
    Vec words;
    vec_init(&words, sizeof(Word *));
    if (is_kw(p, KW_IN)) {
      next(p);
      n->u.forn.in = true;
      while (peek(p)->kind == T_WORD) {
        Tok w = next(p);
        if (list_word(&w)) {
          vec_free(&words);
          perror_at(p, "syntax error near unexpected token `('");
          return NULL;
        }
        vec_push_ptr(&words, mkword(p, w.text, w.len, w.plain, w.soft));
      }
      if (peek(p)->kind != T_SEMI && peek(p)->kind != T_NEWLINE) {
        vec_free(&words);
        unexpected(p, peek(p));
        return NULL;
      }
      next(p);
    } else if (peek(p)->kind == T_SEMI) {
      next(p);
    }
    n->u.forn.nwords = words.n;
    n->u.forn.words = vec_finish(p, &words);
    linebreak(p);
    if (is_kw(p, KW_LBRACE)) {
      n->u.forn.body = parse_compound(p);
      return p->err ? NULL : n;
    }
    if (!expect_kw(p, KW_DO)) return NULL;
    n->u.forn.body = parse_body(p);
    if (!expect_kw(p, KW_DONE)) return NULL;
    return n;
  }
  if (is_kw(p, KW_CASE)) {
    next(p);
    Tok w = next(p);
    if (w.kind != T_WORD) {
      unexpected(p, &w);
      return NULL;
    }
    if (list_word(&w)) {
      perror_at(p, "syntax error near unexpected token `('");
      return NULL;
    }
    Node *n = mknode(p, N_CASE);
    n->u.casen.word = mkword(p, w.text, w.len, w.plain, w.soft);
    linebreak(p);
    if (!expect_kw(p, KW_IN)) return NULL;
    linebreak(p);
    Vec items;
    vec_init(&items, sizeof(CaseItem));
    while (!p->err && !is_kw(p, KW_ESAC)) {
      if (peek(p)->kind == T_LPAREN) next(p);
      Vec pats;
      vec_init(&pats, sizeof(Word *));
      for (;;) {
        Tok pt = next(p);
        if (pt.kind != T_WORD) {
          unexpected(p, &pt);
          break;
        }
        vec_push_ptr(&pats, mkword(p, pt.text, pt.len, pt.plain, pt.soft));
        if (peek(p)->kind == T_PIPE) {
          next(p);
          continue;
        }
        break;
      }
      if (p->err) {
        vec_free(&pats);
        break;
      }
      if (peek(p)->kind != T_RPAREN) {
        unexpected(p, peek(p));
        vec_free(&pats);
        break;
      }
      next(p);
      CaseItem it = { 0 };
      it.npats = pats.n;
      it.pats = vec_finish(p, &pats);
      it.body = parse_compound_list(p);
      if (p->err) break;
      Tok *e = peek(p);
      if (e->kind == T_DSEMI || e->kind == T_SEMIAMP || e->kind == T_DSEMIAMP) {
        it.term = e->kind == T_DSEMI ? 0 : e->kind == T_SEMIAMP ? 1 : 2;
        next(p);
        linebreak(p);
      } else if (!is_kw(p, KW_ESAC)) {
        unexpected(p, e);
        break;
      }
      vec_push(&items, &it);
    }
    if (p->err) {
      vec_free(&items);
      return NULL;
    }
    next(p); /* esac */
    n->u.casen.nitems = items.n;
    n->u.casen.items = vec_finish(p, &items);
    return n;
  }
  if (is_kw(p, KW_DLBRACK)) {
    next(p);
    p->in_cond = true;
    p->have = false;
    Cond *c = cond_or(p);
    p->in_cond = false;
    if (c && !is_kw(p, KW_DRBRACK)) {
      Tok *t = peek(p);
      if (t->kind == T_WORD && t->len && (t->text[0] == '<' || t->text[0] == '>'))
        cond_op_error(p, t->start); /* `[[ a =~ x<> ]]` */
      cond_error(p,
                 t->kind == T_EOF ? "unexpected EOF while looking for `]]'"
                 : t->kind == T_WORD || t->kind == T_NEWLINE
                   ? "syntax error in conditional expression"
                   : "syntax error in conditional expression: unexpected token `%s'",
                 t);
      c = NULL;
    }
    if (!c) {
      if (!p->err) unexpected(p, peek(p));
      if (p->err_status == 2 && p->err_token) p->err_status = -1;
      return NULL;
    }
    next(p);
    Node *n = mknode(p, N_COND);
    n->u.cond.c = c;
    return n;
  }
  if (is_kw(p, KW_FUNCTION)) {
    next(p);
    Tok name = next(p);
    if (name.kind != T_WORD) {
      unexpected(p, &name);
      return NULL;
    }
    if (peek(p)->kind == T_LPAREN) {
      next(p);
      if (peek(p)->kind != T_RPAREN) {
        unexpected(p, peek(p));
        return NULL;
      }
      next(p);
    }
    linebreak(p);
    int body_line = peek(p)->line;
    Node *body = parse_command(p);
    if (!body) {
      if (!p->err) unexpected(p, peek(p));
      return NULL;
    }
    Node *f = mknode(p, N_FUNCDEF);
    f->u.func.name = box_arena_strndup(p->sh, name.text, name.len);
    f->u.func.body = body;
    f->u.func.body_line = body_line;
    return f;
  }
  return NULL;
}

static Node *parse_command_in(Parser *p);

/* Every construct nests through here (a compound's list, a pipeline's
 * stage, a function's body). */
static Node *parse_command(Parser *p)
{
  Node *n = nest_in(p) ? parse_command_in(p) : NULL;
  p->nest--;
  return n;
}

/* The reserved words a compound command starts with; one switch on the
 * token's kw, as every command's first word is asked. */
static bool starts_compound(unsigned char kw)
{
  switch (kw) {
  case KW_LBRACE:
  case KW_IF:
  case KW_WHILE:
  case KW_UNTIL:
  case KW_FOR:
  case KW_CASE:
  case KW_DLBRACK:
  case KW_FUNCTION:
  case KW_SELECT: return true;
  default: return false;
  }
}

static Node *parse_command_in(Parser *p)
{
  if (p->err) return NULL;
  try_alias(p);
  Tok *t = peek(p);
  if (t->kind == T_LPAREN || (t->kind == T_WORD && starts_compound(t->kw))) {
    Node *n = parse_compound(p);
    if (!n || p->err) return NULL;
    if (peek(p)->kind != T_REDIR) return p->err ? NULL : n;
    Vec redirs;
    vec_init(&redirs, sizeof(Redir));
    while (!p->err && peek(p)->kind == T_REDIR)
      if (!parse_redir(p, &redirs)) break;
    if (n->kind != N_FUNCDEF) {
      n->redirs = finish_redirs(p, &redirs, &n->nredirs);
    } else {
      n->u.func.body->redirs = finish_redirs(p, &redirs, &n->u.func.body->nredirs);
    }
    return p->err ? NULL : n;
  }
  if (t->kind == T_WORD && tok_is_reserved(t)) {
    unexpected(p, t);
    return NULL;
  }
  return parse_simple(p);
}

static Node *parse_pipeline(Parser *p)
{
  bool neg = false, prefixed = false, timed = false, posix_time = false;
  for (;; prefixed = true) {
    if (is_kw(p, KW_TIME)) {
      next(p);
      timed = true;
      /* time -p: POSIX's format of the times */
      if (cond_is(p, "-p")) next(p), posix_time = true;
    } else if (is_kw(p, KW_BANG)) {
      next(p);
      neg = !neg;
    } else {
      break;
    }
  }
  TokKind end = peek(p)->kind;
  /* `!` or `time` alone ends with the line: an empty pipeline, status 0 */
  Node *first = prefixed && (end == T_NEWLINE || end == T_SEMI || end == T_EOF)
                  ? mknode(p, N_SIMPLE)
                  : parse_command(p);
  if (!first) {
    if (!p->err) unexpected(p, peek(p));
    return NULL;
  }
  GPtrArray *cmds = NULL;
  GArray *errs = NULL;
  while (!p->err && (peek(p)->kind == T_PIPE || peek(p)->kind == T_PIPEAMP)) {
    bool amp = next(p).kind == T_PIPEAMP;
    if (!cmds) {
      cmds = g_ptr_array_new();
      errs = g_array_new(FALSE, TRUE, sizeof(bool));
      g_ptr_array_add(cmds, first);
    }
    g_array_append_val(errs, amp);
    linebreak(p);
    Node *c = parse_command(p);
    if (!c) {
      if (!p->err) unexpected(p, peek(p));
      break;
    }
    g_ptr_array_add(cmds, c);
  }
  Node *res = first;
  if (cmds) {
    if (p->err) {
      g_ptr_array_free(cmds, TRUE);
      g_array_free(errs, TRUE);
      return NULL;
    }
    res = mknode(p, N_PIPE);
    res->u.pipe.n = cmds->len;
    res->u.pipe.cmds = box_arena_alloc(p->sh, sizeof(Node *) * cmds->len);
    memcpy(res->u.pipe.cmds, cmds->pdata, sizeof(Node *) * cmds->len);
    res->u.pipe.errpipe = box_arena_alloc(p->sh, sizeof(bool) * cmds->len);
    memset(res->u.pipe.errpipe, 0, sizeof(bool) * cmds->len);
    memcpy(res->u.pipe.errpipe, errs->data, sizeof(bool) * errs->len);
    g_ptr_array_free(cmds, TRUE);
    g_array_free(errs, TRUE);
  }
  if (neg) {
    Node *n = mknode(p, N_NOT);
    n->u.un.child = res;
    res = n;
  }
  if (timed) {
    Node *n = mknode(p, N_TIME);
    n->u.un.child = res;
    n->u.un.posix_time = posix_time;
    res = n;
  }
  return res;
}

static Node *parse_and_or(Parser *p)
{
  Node *l = parse_pipeline(p);
  while (l && !p->err && (peek(p)->kind == T_AND || peek(p)->kind == T_OR)) {
    NodeKind k = next(p).kind == T_AND ? N_AND : N_OR;
    linebreak(p);
    Node *r = parse_pipeline(p);
    if (!r) return NULL;
    Node *n = mknode(p, k);
    n->u.bin.left = l;
    n->u.bin.right = r;
    l = n;
  }
  return l;
}

static bool starts_command(Parser *p)
{
  Tok *t = peek(p);
  if (t->kind == T_WORD) {
    switch (t->kw) {
    case KW_THEN:
    case KW_ELSE:
    case KW_ELIF:
    case KW_FI:
    case KW_DO:
    case KW_DONE:
    case KW_ESAC:
    case KW_RBRACE: return false;
    default: break;
    }
    if (p->in_cond) return false;
    return true;
  }
  return t->kind == T_REDIR || t->kind == T_LPAREN;
}

/* A list grows at its end into a chain leaning right, so that running or
 * printing a long list (`true; true; …` 50,000 times) walks the chain
 * (eval_inner, pr_node) where a left-leaning one would recurse as deep as
 * the list is long. */
typedef struct {
  Node *head;
  Node **tail; /* where the last command hangs */
} List;

static void list_add(Parser *p, List *l, Node *n)
{
  if (!n) return;
  if (!l->head) {
    l->head = n;
    l->tail = &l->head;
    return;
  }
  Node *s = mknode(p, N_SEQ);
  s->u.bin.left = *l->tail;
  s->u.bin.right = n;
  *l->tail = s;
  l->tail = &s->u.bin.right;
}

/* A list of and-or lists.  At the top level it stops after a newline. */
static Node *parse_list(Parser *p, bool top)
{
  List res = { NULL, NULL };
  for (;;) {
    if (p->err) return NULL;
    if (!top) linebreak(p);
    if (!starts_command(p)) break;
    Node *n = parse_and_or(p);
    if (!n) return NULL;
    Tok *t = peek(p);
    if (t->kind == T_AMP) {
      next(p);
      Node *b = mknode(p, N_BACKGROUND);
      b->u.un.child = n;
      n = b;
    } else if (t->kind == T_SEMI) {
      next(p);
    } else if (t->kind == T_NEWLINE) {
      list_add(p, &res, n);
      if (top) {
        next(p);
        p->ended_nl = true;
        return res.head;
      }
      continue;
    } else {
      list_add(p, &res, n);
      break;
    }
    list_add(p, &res, n);
    if (top && peek(p)->kind == T_NEWLINE) {
      next(p);
      p->ended_nl = true;
      return res.head;
    }
  }
  return res.head;
}

/* After an error inside an array literal: on past the line the error is
 * on, as if that line were empty, the command's status 1. */
static ParseResult skip_line(Parser *p)
{
  size_t at = MIN(p->pos, p->len);
  while (at < p->len && p->src[at] != '\n') at++;
  if (at < p->len) {
    at++;
    p->line++;
  }
  p->pos = at;
  p->have = false;
  p->err = p->array_err = false;
  p->in_cond = p->ext_pat = p->in_array = false;
  p->depth = p->nest = 0;
  g_array_set_size(p->docs, 0);
  p->sh->status = 1;
  p->skipped = true;
  return PARSE_OK;
}

int box_parse_probe(Shell *sh, const char *text, int line)
{
  Parser *p = box_parser_new_at(sh, text, NULL, line);
  p->probe = true;
  for (;;) {
    Node *n = NULL;
    ParseResult r = box_parse_next(p, &n);
    if (r != PARSE_OK || p->incomplete) break;
  }
  int why = p->incomplete;
  box_parser_free(p);
  return why;
}

const char *box_parser_rest(Parser *p, int *line)
{
  *line = p->have ? p->look.line : p->line;
  return p->src + (p->have ? p->look.start : p->pos);
}

bool box_parse_skipped(Parser *p)
{
  bool s = p->skipped;
  p->skipped = false;
  return s;
}

static ParseResult parse_next(Parser *p, Node **out);

ParseResult box_parse_next(Parser *p, Node **out)
{
  ParseResult r = parse_next(p, out);
  return r == PARSE_ERROR && p->array_err ? skip_line(p) : r;
}

static ParseResult parse_next(Parser *p, Node **out)
{
  *out = NULL;
  if (p->err) return PARSE_ERROR;
  while (peek(p)->kind == T_NEWLINE) next(p);
  if (p->err) return PARSE_ERROR;
  if (peek(p)->kind == T_EOF) return PARSE_EOF;
  p->sh->lineno = p->look.line;
  p->ended_nl = false;
  Node *n = parse_list(p, true);
  if (p->err) return PARSE_ERROR;
  if (!p->ended_nl) {
    Tok *t = peek(p);
    if (p->err) return PARSE_ERROR;
    if (t->kind != T_EOF) {
      unexpected(p, t);
      return PARSE_ERROR;
    }
  }
  if (p->docs->len) read_heredocs(p);
  *out = n;
  return PARSE_OK;
}

int box_parse_error_status(const Parser *p)
{
  return p->err_status;
}

bool box_parse_all(Shell *sh, const char *text, const char *name, Node **out)
{
  /* bash parses a substitution's text again when it runs it, so an alias
   * defined since (`alias e=…; echo $(e)` on one line) applies there */
  bool aliases = (sh->shopts & SH_EXPAND_ALIASES) && g_hash_table_size(sh->aliases);
  Node *n = NULL;
  if (!aliases) {
    /* the tree parsed on the command's line, else the text's first */
    char key[32 + 4096];
    if (g_snprintf(key, sizeof key, "%ld:%s", sh->lineno, text) < (int)sizeof key)
      n = g_hash_table_lookup(sh->subst_cache, key);
    if (!n) n = g_hash_table_lookup(sh->subst_cache, text);
  }
  if (n) {
    *out = n;
    return true;
  }
  return box_parse_all_at(sh, text, name, 1, out);
}

bool box_parse_all_at(Shell *sh, const char *text, const char *name, int line, Node **out)
{
  Parser *p = box_parser_new_at(sh, text, name, line);
  List res = { NULL, NULL };
  for (;;) {
    Node *c = NULL;
    ParseResult r = box_parse_next(p, &c);
    if (r == PARSE_EOF) break;
    if (r == PARSE_ERROR) {
      box_parser_free(p);
      return false;
    }
    list_add(p, &res, c);
  }
  box_parser_free(p);
  *out = res.head;
  return true;
}

GPtrArray *box_parse_words(Shell *sh, const char *text)
{
  Parser *p = box_parser_new(sh, text, NULL);
  p->in_array = true;
  GPtrArray *w = g_ptr_array_new();
  for (;;) {
    Tok *t = peek(p);
    if (p->err) break;
    if (t->kind == T_NEWLINE) {
      next(p);
      continue;
    }
    if (t->kind != T_WORD) break;
    Tok x = next(p);
    Word *wd = mkword(p, x.text, x.len, x.plain, x.soft);
    g_ptr_array_add(w, wd);
  }
  box_parser_free(p);
  return w;
}
