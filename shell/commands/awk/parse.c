/* parse.c — awk's grammar, by recursive descent, into the tree of awk.h.
 *
 * Precedence, lowest first (gawk's): assignment, ?:, ||, &&, in, ~ !~,
 * relational, concatenation, + -, * / %, unary + - !, ^ (right), ++ --,
 * $, grouping.  Inside print's unparenthesised list `>` is a redirection. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/awk/awk.h"

typedef struct {
  Awk *A;
  Lexer lx;
  jmp_buf fail;
  bool no_gt; /* in print's list: '>' redirects */
  bool no_in; /* in for(...;...)'s head: 'in' belongs to for */
  Func *func; /* the function being parsed: its parameters are locals */
  int loops;
} P;

static P *cur_p;

/* How many arguments each builtin takes (gawk refuses others when it
 * parses the program). */
static const int builtin_arity[][2] = {
  [B_LENGTH] = { 0, 1 },  [B_SUBSTR] = { 2, 3 },      [B_INDEX] = { 2, 2 },
  [B_SPLIT] = { 2, 4 },   [B_SUB] = { 2, 3 },         [B_GSUB] = { 2, 3 },
  [B_MATCH] = { 2, 3 },   [B_SPRINTF] = { 1, 10000 }, [B_SIN] = { 1, 1 },
  [B_COS] = { 1, 1 },     [B_ATAN2] = { 2, 2 },       [B_EXP] = { 1, 1 },
  [B_LOG] = { 1, 1 },     [B_SQRT] = { 1, 1 },        [B_INT] = { 1, 1 },
  [B_RAND] = { 0, 0 },    [B_SRAND] = { 0, 1 },       [B_TOLOWER] = { 1, 1 },
  [B_TOUPPER] = { 1, 1 }, [B_SYSTEM] = { 1, 1 },      [B_CLOSE] = { 1, 2 },
  [B_FFLUSH] = { 0, 1 },  [B_GENSUB] = { 3, 4 },      [B_SYSTIME] = { 0, 0 },
  [B_ASORT] = { 1, 2 },   [B_ASORTI] = { 1, 2 },      [B_STRFTIME] = { 0, 3 },
  [B_MKTIME] = { 1, 2 },
};

ANode *awk_node(Awk *A, int op, int line)
{
  ANode *n = g_new0(ANode, 1);
  n->op = op;
  n->line = line;
  g_ptr_array_add(A->nodes, n);
  return n;
}

void awk_syntax(Awk *A, Lexer *lx, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(A->c->out);
  box_fdprintf(A->c->err, "awk: %s:%d: syntax error: %s\n", A->srcname, lx->line, m);
  g_free(m);
  longjmp(cur_p->fail, 1);
}

int awk_var_lookup(Awk *A, const char *name)
{
  gpointer v = g_hash_table_lookup(A->var_index, name);
  if (v) return GPOINTER_TO_INT(v) - 1;
  int i = (int)A->var_names->len;
  g_ptr_array_add(A->var_names, g_strdup(name));
  g_hash_table_insert(A->var_index, g_strdup(name), GINT_TO_POINTER(i + 1));
  return i;
}

static int tok(P *p)
{
  return p->lx.tok;
}
static void adv(P *p)
{
  awk_lex_next(p->A, &p->lx);
}
static void skip_nl(P *p)
{
  while (tok(p) == TK_NL) adv(p);
}
static void expect(P *p, int t, const char *what)
{
  if (tok(p) != t) {
    const char *near = tok(p) == TK_EOF  ? "end of program"
                       : tok(p) == TK_NL ? "newline"
                                         : p->lx.src + p->lx.tok_start;
    int n = 0;
    while (near[n] && near[n] != '\n' && n < 10) n++;
    awk_syntax(p->A, &p->lx, "expected %s near '%.*s'", what, n, near);
  }
  adv(p);
}

static ANode *expr(P *p);
static ANode *ternary(P *p);
static ANode *unary(P *p);
static ANode *stmt(P *p);

static ANode *mk(P *p, int op, ANode *a, ANode *b)
{
  ANode *n = awk_node(p->A, op, p->lx.line);
  n->a = a;
  n->b = b;
  return n;
}

static bool is_lvalue(ANode *n)
{
  return n->op == AN_VAR || n->op == AN_LOCAL || n->op == AN_FIELD || n->op == AN_INDEX;
}

static ANode *name_node(P *p, const char *name)
{
  if (p->func)
    for (int i = 0; i < p->func->nparams; i++)
      if (strcmp(p->func->params[i], name) == 0) {
        ANode *n = mk(p, AN_LOCAL, NULL, NULL);
        n->ival = i;
        return n;
      }
  ANode *n = mk(p, AN_VAR, NULL, NULL);
  n->ival = awk_var_lookup(p->A, name);
  return n;
}

/* expr-list up to closer; newlines allowed after commas (lexer). */
static int expr_list(P *p, ANode ***out, int closer)
{
  GPtrArray *v = g_ptr_array_new();
  bool save_gt = p->no_gt, save_in = p->no_in;
  p->no_gt = p->no_in = false;
  skip_nl(p);
  if (tok(p) != closer) {
    for (;;) {
      g_ptr_array_add(v, expr(p));
      skip_nl(p);
      if (tok(p) != TK_COMMA) break;
      adv(p);
      skip_nl(p);
    }
  }
  p->no_gt = save_gt;
  p->no_in = save_in;
  int n = (int)v->len;
  *out = (ANode **)g_ptr_array_free(v, FALSE);
  g_ptr_array_add(p->A->nodes, *out);
  return n;
}

static ANode *var_or_index(P *p, const char *name)
{
  ANode *base = name_node(p, name);
  if (tok(p) != TK_LBRACKET) return base;
  adv(p);
  ANode *n = mk(p, AN_INDEX, base, NULL);
  n->nargs = expr_list(p, &n->args, TK_RBRACKET);
  if (n->nargs == 0) awk_syntax(p->A, &p->lx, "empty subscript");
  expect(p, TK_RBRACKET, "]");
  return n;
}

static ANode *primary_noincr(P *p);

/* getline [lvalue] [< file] */
static ANode *simple_getline(P *p)
{
  ANode *n = mk(p, AN_GETLINE, NULL, NULL);
  n->ival = GL_PLAIN;
  if (tok(p) == TK_DOLLAR || tok(p) == TK_NAME) n->a = primary_noincr(p);
  if (tok(p) == TK_LT) {
    adv(p);
    n->ival = GL_FILE;
    n->b = primary_noincr(p);
  }
  return n;
}

static ANode *primary(P *p)
{
  Lexer *lx = &p->lx;
  int line = lx->line;
  switch (tok(p)) {
  case TK_NUMBER: {
    ANode *n = mk(p, AN_NUM, NULL, NULL);
    n->num = lx->num;
    adv(p);
    return n;
  }
  case TK_STRING: {
    ANode *n = mk(p, AN_STR, NULL, NULL);
    n->str = lx->text;
    lx->text = NULL;
    g_ptr_array_add(p->A->nodes, n->str);
    adv(p);
    return n;
  }
  case TK_SLASH:
  case TK_DIV_ASSIGN: {
    awk_lex_regex(p->A, lx);
    ANode *n = mk(p, AN_ERE, NULL, NULL);
    n->str = lx->text;
    lx->text = NULL;
    g_ptr_array_add(p->A->nodes, n->str);
    n->re = awk_regex_compile(p->A, n->str);
    g_ptr_array_add(p->A->regexes, n->re);
    adv(p);
    return n;
  }
  case TK_DOLLAR: {
    adv(p);
    ANode *e;
    if (tok(p) == TK_INCR || tok(p) == TK_DECR) {
      int t = tok(p);
      adv(p);
      ANode *lv = primary_noincr(p);
      if (!is_lvalue(lv)) awk_syntax(p->A, lx, "++ or -- needs a variable");
      e = mk(p, t == TK_INCR ? AN_PREINC : AN_PREDEC, lv, NULL);
    } else if (tok(p) == TK_MINUS || tok(p) == TK_PLUS || tok(p) == TK_NOT) {
      e = unary(p);
    } else {
      e = primary_noincr(p);
    }
    return mk(p, AN_FIELD, e, NULL);
  }
  case TK_LPAREN: {
    adv(p);
    ANode **items;
    int n = expr_list(p, &items, TK_RPAREN);
    expect(p, TK_RPAREN, ")");
    if (n == 0) awk_syntax(p->A, lx, "empty parentheses");
    if (n > 1) {
      if (tok(p) == TK_IN) {
        adv(p);
        if (tok(p) != TK_NAME) awk_syntax(p->A, lx, "expected an array after in");
        ANode *in = mk(p, AN_IN, name_node(p, lx->text), NULL);
        adv(p);
        in->args = items;
        in->nargs = n;
        return in;
      }
      ANode *g = mk(p, AN_GROUP, NULL, NULL);
      g->args = items;
      g->nargs = n;
      return g;
    }
    ANode *g = mk(p, AN_GROUP, NULL, NULL);
    g->args = items;
    g->nargs = 1;
    return g;
  }
  case TK_MINUS:
  case TK_PLUS:
  case TK_NOT: return unary(p);
  case TK_INCR:
  case TK_DECR: {
    int t = tok(p);
    adv(p);
    ANode *lv = primary_noincr(p);
    if (!is_lvalue(lv)) awk_syntax(p->A, lx, "++ or -- needs a variable");
    return mk(p, t == TK_INCR ? AN_PREINC : AN_PREDEC, lv, NULL);
  }
  case TK_NAME: {
    char *name = g_strdup(lx->text);
    adv(p);
    ANode *n = var_or_index(p, name);
    g_free(name);
    return n;
  }
  case TK_FUNC_NAME: {
    ANode *n = mk(p, AN_CALL, NULL, NULL);
    n->str = g_strdup(lx->text);
    g_ptr_array_add(p->A->nodes, n->str);
    adv(p);
    expect(p, TK_LPAREN, "(");
    n->nargs = expr_list(p, &n->args, TK_RPAREN);
    expect(p, TK_RPAREN, ")");
    return n;
  }
  case TK_BUILTIN: {
    char builtin_name[16];
    g_strlcpy(builtin_name, lx->text, sizeof builtin_name);
    ANode *n = mk(p, AN_BUILTIN, NULL, NULL);
    n->ival = lx->builtin;
    adv(p);
    if (tok(p) == TK_LPAREN) {
      adv(p);
      n->nargs = expr_list(p, &n->args, TK_RPAREN);
      expect(p, TK_RPAREN, ")");
    } else if (n->ival != B_LENGTH) {
      awk_syntax(p->A, lx, "expected ( after a function's name");
    }
    if (n->nargs < builtin_arity[n->ival][0] || n->nargs > builtin_arity[n->ival][1])
      awk_syntax(p->A, lx, "%d is invalid as number of arguments for %s", n->nargs, builtin_name);
    return n;
  }
  case TK_GETLINE: adv(p); return simple_getline(p);
  default: break;
  }
  (void)line;
  expect(p, -1, "an expression");
  return NULL;
}

static ANode *primary_noincr(P *p)
{
  return primary(p);
}

static ANode *postfix(P *p)
{
  ANode *n = primary(p);
  if ((tok(p) == TK_INCR || tok(p) == TK_DECR) && is_lvalue(n)) {
    n = mk(p, tok(p) == TK_INCR ? AN_POSTINC : AN_POSTDEC, n, NULL);
    adv(p);
  }
  return n;
}

static ANode *power(P *p)
{
  ANode *n = postfix(p);
  if (tok(p) == TK_POW) {
    adv(p);
    /* right associative, and its right side may carry a sign: 2^-1 */
    ANode *r;
    if (tok(p) == TK_MINUS || tok(p) == TK_PLUS || tok(p) == TK_NOT)
      r = unary(p);
    else
      r = power(p);
    n = mk(p, AN_POW, n, r);
  }
  return n;
}

static ANode *unary(P *p)
{
  if (tok(p) == TK_NOT) {
    adv(p);
    return mk(p, AN_NOT, unary(p), NULL);
  }
  if (tok(p) == TK_MINUS) {
    adv(p);
    return mk(p, AN_NEG, unary(p), NULL);
  }
  if (tok(p) == TK_PLUS) {
    adv(p);
    return mk(p, AN_PLUS, unary(p), NULL);
  }
  return power(p);
}

static ANode *multiplicative(P *p)
{
  ANode *n = unary(p);
  for (;;) {
    int t = tok(p);
    int op = t == TK_STAR ? AN_MUL : t == TK_SLASH ? AN_DIV : t == TK_PERCENT ? AN_MOD : -1;
    if (op < 0) return n;
    adv(p);
    n = mk(p, op, n, unary(p));
  }
}

static ANode *additive(P *p)
{
  ANode *n = multiplicative(p);
  for (;;) {
    int t = tok(p);
    if (t != TK_PLUS && t != TK_MINUS) return n;
    adv(p);
    n = mk(p, t == TK_PLUS ? AN_ADD : AN_SUB, n, multiplicative(p));
  }
}

static bool starts_operand(P *p)
{
  switch (tok(p)) {
  case TK_NUMBER:
  case TK_STRING:
  case TK_NAME:
  case TK_FUNC_NAME:
  case TK_BUILTIN:
  case TK_DOLLAR:
  case TK_LPAREN:
  case TK_NOT:
  case TK_INCR:
  case TK_DECR:
  case TK_MINUS:
  case TK_PLUS: return true;
  case TK_IN: return false;
  default: return false;
  }
}

static ANode *concat(P *p)
{
  ANode *n = additive(p);
  while (starts_operand(p) && tok(p) != TK_NOT) { n = mk(p, AN_CONCAT, n, additive(p)); }
  return n;
}

/* "cmd" | getline [var]: below concatenation, above comparison. */
static ANode *pipe_getline(P *p)
{
  ANode *n = concat(p);
  while (tok(p) == TK_PIPE) {
    Lexer save = p->lx;
    save.text = NULL;
    adv(p);
    if (tok(p) != TK_GETLINE) {
      g_free(p->lx.text);
      p->lx = save;
      p->lx.text = NULL;
      p->lx.tok = TK_PIPE;
      return n;
    }
    adv(p);
    ANode *g = mk(p, AN_GETLINE, NULL, NULL);
    g->ival = GL_CMD;
    g->b = n;
    if (tok(p) == TK_DOLLAR || tok(p) == TK_NAME) g->a = primary_noincr(p);
    n = g;
  }
  return n;
}

static ANode *comparison(P *p)
{
  ANode *n = pipe_getline(p);
  for (;;) {
    int t = tok(p), op;
    switch (t) {
    case TK_LT: op = AN_LT; break;
    case TK_LE: op = AN_LE; break;
    case TK_GT: op = p->no_gt ? -1 : AN_GT; break;
    case TK_GE: op = AN_GE; break;
    case TK_EQ: op = AN_EQ; break;
    case TK_NE: op = AN_NE; break;
    default: op = -1;
    }
    if (op < 0) return n;
    adv(p);
    n = mk(p, op, n, pipe_getline(p));
  }
}

static ANode *matching(P *p)
{
  ANode *n = comparison(p);
  while (tok(p) == TK_TILDE || tok(p) == TK_NOMATCH) {
    int op = tok(p) == TK_TILDE ? AN_MATCH : AN_NOMATCH;
    adv(p);
    n = mk(p, op, n, comparison(p));
  }
  return n;
}

static ANode *in_expr(P *p)
{
  ANode *n = matching(p);
  while (tok(p) == TK_IN && !p->no_in) {
    adv(p);
    if (tok(p) != TK_NAME) awk_syntax(p->A, &p->lx, "expected an array after in");
    ANode *in = mk(p, AN_IN, name_node(p, p->lx.text), NULL);
    adv(p);
    in->args = g_new(ANode *, 1);
    g_ptr_array_add(p->A->nodes, in->args);
    in->args[0] = n;
    in->nargs = 1;
    n = in;
  }
  return n;
}

/* operand (tk operand)…, leaning left; a newline may follow tk. */
static ANode *logical_chain(P *p, ANode *(*operand)(P *), int tk, int op)
{
  ANode *n = operand(p);
  while (tok(p) == tk) {
    adv(p);
    skip_nl(p);
    n = mk(p, op, n, operand(p));
  }
  return n;
}

static ANode *and_expr(P *p)
{
  return logical_chain(p, in_expr, TK_AND, AN_AND);
}

static ANode *or_expr(P *p)
{
  return logical_chain(p, and_expr, TK_OR, AN_OR);
}

static ANode *ternary(P *p)
{
  ANode *n = or_expr(p);
  if (tok(p) != TK_QUESTION) return n;
  adv(p);
  skip_nl(p);
  ANode *c = mk(p, AN_COND, n, ternary(p));
  skip_nl(p);
  expect(p, TK_COLON, ":");
  skip_nl(p);
  c->c = ternary(p);
  return c;
}

static ANode *expr(P *p)
{
  ANode *n = ternary(p);
  int t = tok(p), op;
  switch (t) {
  case TK_ASSIGN: op = 0; break;
  case TK_ADD_ASSIGN: op = AN_ADD; break;
  case TK_SUB_ASSIGN: op = AN_SUB; break;
  case TK_MUL_ASSIGN: op = AN_MUL; break;
  case TK_DIV_ASSIGN: op = AN_DIV; break;
  case TK_MOD_ASSIGN: op = AN_MOD; break;
  case TK_POW_ASSIGN: op = AN_POW; break;
  default: return n;
  }
  if (!is_lvalue(n)) {
    if (t == TK_DIV_ASSIGN) return n;
    awk_syntax(p->A, &p->lx, "assignment to a non-variable");
  }
  adv(p);
  skip_nl(p);
  ANode *a = mk(p, AN_ASSIGN, n, expr(p));
  a->ival = op;
  return a;
}

static bool at_stmt_end(P *p)
{
  int t = tok(p);
  return t == TK_NL || t == TK_SEMI || t == TK_RBRACE || t == TK_EOF;
}

static void end_simple(P *p)
{
  if (tok(p) == TK_SEMI || tok(p) == TK_NL) {
    adv(p);
    return;
  }
  if (tok(p) == TK_RBRACE || tok(p) == TK_EOF) return;
  expect(p, TK_SEMI, "; or newline");
}

static ANode *block(P *p)
{
  expect(p, TK_LBRACE, "{");
  ANode *b = mk(p, S_BLOCK, NULL, NULL);
  ANode **tail = &b->a;
  for (;;) {
    while (tok(p) == TK_NL || tok(p) == TK_SEMI) adv(p);
    if (tok(p) == TK_RBRACE) break;
    if (tok(p) == TK_EOF) expect(p, TK_RBRACE, "}");
    *tail = stmt(p);
    tail = &(*tail)->next;
  }
  adv(p);
  return b;
}

static ANode *simple_or_block(P *p)
{
  while (tok(p) == TK_NL || tok(p) == TK_SEMI) adv(p);
  return stmt(p);
}

static ANode *print_stmt(P *p, int kind)
{
  ANode *n = mk(p, kind, NULL, NULL);
  adv(p);
  GPtrArray *v = g_ptr_array_new();
  p->no_gt = true;
  if (!at_stmt_end(p) && tok(p) != TK_GT && tok(p) != TK_APPEND && tok(p) != TK_PIPE) {
    for (;;) {
      g_ptr_array_add(v, expr(p));
      if (tok(p) != TK_COMMA) break;
      adv(p);
      skip_nl(p);
    }
  }
  /* print (a, b) is print a, b */
  if (v->len == 1 && ((ANode *)v->pdata[0])->op == AN_GROUP && ((ANode *)v->pdata[0])->nargs > 1) {
    ANode *g = v->pdata[0];
    g_ptr_array_set_size(v, 0);
    for (int i = 0; i < g->nargs; i++) g_ptr_array_add(v, g->args[i]);
  }
  n->nargs = (int)v->len;
  n->args = (ANode **)g_ptr_array_free(v, FALSE);
  g_ptr_array_add(p->A->nodes, n->args);
  if (kind == S_PRINTF && n->nargs == 0) awk_syntax(p->A, &p->lx, "printf: no format");
  int t = tok(p);
  if (t == TK_GT || t == TK_APPEND || t == TK_PIPE) {
    n->ival = t == TK_GT ? AR_FILE : t == TK_APPEND ? AR_APPEND : AR_PIPE;
    adv(p);
    n->a = concat(p);
  }
  p->no_gt = false;
  end_simple(p);
  return n;
}

static ANode *stmt(P *p)
{
  Lexer *lx = &p->lx;
  ANode *n;
  switch (tok(p)) {
  case TK_LBRACE: return block(p);
  case TK_IF: {
    adv(p);
    expect(p, TK_LPAREN, "(");
    n = mk(p, S_IF, expr(p), NULL);
    expect(p, TK_RPAREN, ")");
    n->b = simple_or_block(p);
    /* else may follow newlines and one ';' */
    Lexer save = *lx;
    save.text = g_strdup(lx->text);
    while (tok(p) == TK_NL || tok(p) == TK_SEMI) adv(p);
    if (tok(p) == TK_ELSE) {
      g_free(save.text);
      adv(p);
      n->c = simple_or_block(p);
    } else {
      g_free(lx->text);
      *lx = save;
    }
    return n;
  }
  case TK_WHILE:
    adv(p);
    expect(p, TK_LPAREN, "(");
    n = mk(p, S_WHILE, expr(p), NULL);
    expect(p, TK_RPAREN, ")");
    if (tok(p) == TK_SEMI) {
      adv(p);
      n->b = mk(p, S_BLOCK, NULL, NULL);
      return n;
    }
    p->loops++;
    n->b = simple_or_block(p);
    p->loops--;
    return n;
  case TK_DO:
    adv(p);
    n = mk(p, S_DO, NULL, NULL);
    p->loops++;
    n->b = simple_or_block(p);
    p->loops--;
    while (tok(p) == TK_NL || tok(p) == TK_SEMI) adv(p);
    expect(p, TK_WHILE, "while");
    expect(p, TK_LPAREN, "(");
    n->a = expr(p);
    expect(p, TK_RPAREN, ")");
    end_simple(p);
    return n;
  case TK_FOR: {
    adv(p);
    expect(p, TK_LPAREN, "(");
    if (tok(p) == TK_NAME) {
      Lexer save = *lx;
      save.text = g_strdup(lx->text);
      char *name = g_strdup(lx->text);
      adv(p);
      if (tok(p) == TK_IN) {
        adv(p);
        if (tok(p) == TK_NAME) {
          ANode *arr = name_node(p, lx->text);
          adv(p);
          if (tok(p) == TK_RPAREN) {
            adv(p);
            n = mk(p, S_FORIN, name_node(p, name), arr);
            g_free(name);
            g_free(save.text);
            p->loops++;
            n->c = simple_or_block(p);
            p->loops--;
            return n;
          }
        }
      }
      g_free(name);
      g_free(lx->text);
      *lx = save;
    }
    n = mk(p, S_FOR, NULL, NULL);
    if (tok(p) != TK_SEMI) n->a = expr(p);
    expect(p, TK_SEMI, ";");
    skip_nl(p);
    if (tok(p) != TK_SEMI) n->b = expr(p);
    expect(p, TK_SEMI, ";");
    skip_nl(p);
    if (tok(p) != TK_RPAREN) n->c = expr(p);
    expect(p, TK_RPAREN, ")");
    if (tok(p) == TK_SEMI) {
      adv(p);
      n->d = mk(p, S_BLOCK, NULL, NULL);
      return n;
    }
    p->loops++;
    n->d = simple_or_block(p);
    p->loops--;
    return n;
  }
  case TK_SEMI: adv(p); return mk(p, S_BLOCK, NULL, NULL);
  case TK_PRINT: return print_stmt(p, S_PRINT);
  case TK_PRINTF: return print_stmt(p, S_PRINTF);
  case TK_BREAK:
  case TK_CONTINUE:
    if (p->loops == 0)
      awk_syntax(p->A, lx, "%s outside a loop", tok(p) == TK_BREAK ? "break" : "continue");
    n = mk(p, tok(p) == TK_BREAK ? S_BREAK : S_CONTINUE, NULL, NULL);
    adv(p);
    end_simple(p);
    return n;
  case TK_NEXT:
  case TK_NEXTFILE:
    n = mk(p, tok(p) == TK_NEXT ? S_NEXT : S_NEXTFILE, NULL, NULL);
    adv(p);
    end_simple(p);
    return n;
  case TK_EXIT:
  case TK_RETURN:
    n = mk(p, tok(p) == TK_EXIT ? S_EXIT : S_RETURN, NULL, NULL);
    if (n->op == S_RETURN && !p->func) awk_syntax(p->A, lx, "return outside a function");
    adv(p);
    if (!at_stmt_end(p)) n->a = expr(p);
    end_simple(p);
    return n;
  case TK_DELETE:
    adv(p);
    if (tok(p) != TK_NAME) awk_syntax(p->A, lx, "expected an array after delete");
    {
      char *name = g_strdup(lx->text);
      adv(p);
      n = mk(p, S_DELETE, var_or_index(p, name), NULL);
      g_free(name);
    }
    end_simple(p);
    return n;
  default:
    n = mk(p, S_EXPR, expr(p), NULL);
    end_simple(p);
    return n;
  }
}

static void function_def(P *p)
{
  Lexer *lx = &p->lx;
  adv(p);
  if (tok(p) != TK_NAME && tok(p) != TK_FUNC_NAME)
    awk_syntax(p->A, lx, "expected a function's name");
  Func *f = g_hash_table_lookup(p->A->funcs, lx->text);
  if (f && f->defined) awk_syntax(p->A, lx, "function `%s' defined twice", lx->text);
  if (!f) {
    f = g_new0(Func, 1);
    f->name = g_strdup(lx->text);
    g_hash_table_insert(p->A->funcs, f->name, f);
  }
  f->defined = true;
  adv(p);
  expect(p, TK_LPAREN, "(");
  GPtrArray *params = g_ptr_array_new();
  while (tok(p) == TK_NAME) {
    g_ptr_array_add(params, g_strdup(lx->text));
    adv(p);
    if (tok(p) != TK_COMMA) break;
    adv(p);
    skip_nl(p);
  }
  expect(p, TK_RPAREN, ")");
  f->nparams = (int)params->len;
  f->params = (char **)g_ptr_array_free(params, FALSE);
  skip_nl(p);
  p->func = f;
  f->body = block(p);
  p->func = NULL;
}

bool awk_parse(Awk *A, const char *src)
{
  P *p = g_new0(P, 1);
  P *save = cur_p;
  cur_p = p;
  p->A = A;
  awk_lex_init(&p->lx, src);
  bool ok = true;
  if (setjmp(p->fail)) {
    ok = false;
    goto done;
  }
  p->lx.prev = TK_NL;
  adv(p);
  for (;;) {
    while (tok(p) == TK_NL || tok(p) == TK_SEMI) adv(p);
    if (tok(p) == TK_EOF) break;
    if (tok(p) == TK_FUNCTION) {
      function_def(p);
      continue;
    }
    Rule *r = g_new0(Rule, 1);
    g_ptr_array_add(A->rules, r);
    if (tok(p) == TK_BEGIN || tok(p) == TK_END) {
      r->kind = tok(p) == TK_BEGIN ? 1 : 2;
      adv(p);
      skip_nl(p);
      r->action = block(p);
      continue;
    }
    if (tok(p) != TK_LBRACE) {
      r->pat = expr(p);
      if (tok(p) == TK_COMMA) {
        adv(p);
        skip_nl(p);
        r->pat2 = expr(p);
      }
    }
    if (tok(p) == TK_LBRACE)
      r->action = block(p);
    else if (tok(p) != TK_NL && tok(p) != TK_SEMI && tok(p) != TK_EOF)
      expect(p, TK_LBRACE, "{");
  }
done:
  g_free(p->lx.text);
  cur_p = save;
  g_free(p);
  return ok;
}
