/* parse.c — bc's lexer and parser (see bc.h). */
#include <stdlib.h>
#include <string.h>

#include "shell/commands/bc/bc.h"

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

Tok *bc_lex(const char *p, size_t len, int *nt)
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

Tok *bc_peek(Bc *bc)
{
  return &bc->t[bc->pos];
}

bool bc_is_op(Bc *bc, const char *s)
{
  Tok *t = bc_peek(bc);
  return (t->k == T_OP || t->k == T_KEY) && strcmp(t->s, s) == 0;
}

bool bc_accept(Bc *bc, const char *s)
{
  if (!bc_is_op(bc, s)) return false;
  bc->pos++;
  return true;
}

/* A syntax error at the current token (the first one counts). */
void bc_fail(Bc *bc)
{
  if (!bc->syntax_error) bc->err_pos = bc->pos;
  bc->syntax_error = true;
}

static bool expect(Bc *bc, const char *s)
{
  if (bc_accept(bc, s)) return true;
  bc_fail(bc);
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
  while (bc_peek(bc)->k == T_NL) bc->pos++;
}

static BcNode *parse_expr(Bc *bc);

/* A node for the current token (a number or a string), past it. */
static BcNode *leaf(Bc *bc, Kind k)
{
  BcNode *n = node(bc, k);
  n->name = bc_peek(bc)->s;
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
  Tok *t = bc_peek(bc);
  if (bc->syntax_error) return NULL;
  if (t->k == T_NUM) return leaf(bc, E_NUM);
  if (bc_accept(bc, "(")) {
    BcNode *n = enclosed(bc, parse_expr, ")");
    if (n) n->paren = true;
    return n;
  }
  if (t->k == T_KEY) {
    const char *w = t->s;
    if (!strcmp(w, "scale") || !strcmp(w, "ibase") || !strcmp(w, "obase") || !strcmp(w, "last")) {
      bc->pos++;
      if (!strcmp(w, "scale") && bc_is_op(bc, "(")) {
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
    bc_fail(bc);
    return NULL;
  }
  if (t->k == T_NAME) {
    bc->pos++;
    if (bc_accept(bc, "(")) {
      BcNode *n = node(bc, E_CALL);
      n->name = t->s;
      n->list = g_ptr_array_new();
      if (!bc_accept(bc, ")")) {
        do {
          Tok *a = bc_peek(bc);
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
        } while (!bc->syntax_error && bc_accept(bc, ","));
        expect(bc, ")");
      }
      return n;
    }
    if (bc_accept(bc, "[")) {
      BcNode *n = node(bc, E_ELEM);
      n->name = t->s;
      n->a = enclosed(bc, parse_expr, "]");
      return n;
    }
    BcNode *n = node(bc, E_VAR);
    n->name = t->s;
    return n;
  }
  bc_fail(bc);
  return NULL;
}

static BcNode *parse_postfix(Bc *bc)
{
  if (bc_is_op(bc, "++") || bc_is_op(bc, "--")) {
    bool inc = bc_peek(bc)->s[0] == '+';
    bc->pos++;
    BcNode *x = parse_primary(bc);
    if (!is_lvalue(x)) {
      bc_fail(bc);
      return NULL;
    }
    BcNode *n = node(bc, E_INC);
    n->op[0] = inc ? 'p' : 'q';
    n->a = x;
    return n;
  }
  BcNode *x = parse_primary(bc);
  if (is_lvalue(x) && (bc_is_op(bc, "++") || bc_is_op(bc, "--"))) {
    BcNode *n = node(bc, E_INC);
    n->op[0] = bc_peek(bc)->s[0] == '+' ? 'P' : 'Q';
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
  if (!bc_accept(bc, op)) return next(bc);
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
    while (ops[i] && !bc_is_op(bc, ops[i])) i++;
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
  if (bc_accept(bc, "^")) return bin(bc, E_BIN, "^", x, parse_pow(bc));
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
    if (bc_is_op(bc, ops[i])) {
      if (!is_lvalue(x)) {
        bc_fail(bc);
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
  if (!x) bc_fail(bc);
  return x;
}

BcNode *bc_parse_stmt(Bc *bc);

/* Statements separated by ';' and newlines up to '}'. */
static BcNode *parse_block_body(Bc *bc)
{
  BcNode *n = node(bc, S_BLOCK);
  n->list = g_ptr_array_new();
  for (;;) {
    while (bc_peek(bc)->k == T_NL || bc_is_op(bc, ";")) bc->pos++;
    if (bc_is_op(bc, "}") || bc_peek(bc)->k == T_EOF || bc->syntax_error) break;
    g_ptr_array_add(n->list, bc_parse_stmt(bc));
    if (bc->syntax_error) break;
    if (!(bc_peek(bc)->k == T_NL || bc_is_op(bc, ";") || bc_is_op(bc, "}"))) {
      bc_fail(bc);
      break;
    }
  }
  return n;
}

BcNode *bc_parse_stmt(Bc *bc)
{
  Tok *t = bc_peek(bc);
  if (bc->syntax_error) return NULL;
  if (t->k == T_STR) return leaf(bc, S_STR);
  if (bc_accept(bc, "{")) return enclosed(bc, parse_block_body, "}");
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
      n->b = bc_parse_stmt(bc);
      if (n->k == S_WHILE) bc->in_loop--;
      if (n->k == S_IF && bc_accept(bc, "else")) {
        skip_nl(bc);
        n->c = bc_parse_stmt(bc);
      }
      return n;
    }
    if (!strcmp(w, "for")) {
      bc->pos++;
      BcNode *n = node(bc, S_FOR);
      expect(bc, "(");
      if (!bc_is_op(bc, ";")) n->a = parse_expr(bc);
      expect(bc, ";");
      if (!bc_is_op(bc, ";")) n->b = parse_expr(bc);
      expect(bc, ";");
      if (!bc_is_op(bc, ")")) n->c = parse_expr(bc);
      expect(bc, ")");
      skip_nl(bc);
      bc->in_loop++;
      n->d = bc_parse_stmt(bc);
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
        bc_fail(bc);
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
      if (!(bc_peek(bc)->k == T_NL || bc_is_op(bc, ";") || bc_is_op(bc, "}") ||
            bc_peek(bc)->k == T_EOF))
        n->a = parse_expr(bc);
      if (!bc->in_func && !bc->syntax_error) {
        /* GNU knows the statement ended at the token after it */
        box_out_flush(bc->c->out);
        box_fdprintf(bc->c->err, "%s %d: Return outside of a function.\n", bc->src,
                     bc_peek(bc)->line);
        bc->reported = true;
        bc_fail(bc);
        return NULL;
      }
      return n;
    }
    if (!strcmp(w, "print")) {
      bc->pos++;
      BcNode *n = node(bc, S_PRINT);
      n->list = g_ptr_array_new();
      do {
        g_ptr_array_add(n->list, bc_peek(bc)->k == T_STR ? leaf(bc, S_STR) : parse_expr(bc));
      } while (!bc->syntax_error && bc_accept(bc, ","));
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
  while (!bc->syntax_error && bc_peek(bc)->k == T_NAME) {
    char *p = bc_peek(bc)->s;
    bc->pos++;
    bool arr = bc_accept(bc, "[") && expect(bc, "]");
    g_ptr_array_add(into, arr ? g_strconcat(p, "[]", NULL) : g_strdup(p));
    if (!bc_accept(bc, ",")) break;
  }
}

void bc_parse_define(Bc *bc)
{
  bc->pos++;
  Tok *name = bc_peek(bc);
  if (name->k != T_NAME) {
    bc_fail(bc);
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
  if (!bc->syntax_error && bc_accept(bc, "auto")) {
    name_list(bc, f->autos);
    if (!bc_accept(bc, ";") && bc_peek(bc)->k != T_NL) bc_fail(bc);
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
