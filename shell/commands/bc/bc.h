/* bc.h — the parts of the Shell's `bc` shared by its files: num.c
 * (arbitrary-precision decimals and POSIX's scale rules), parse.c (tokens
 * and the tree of a line) and bc.c (output, running, the command). */
#ifndef BOX_SHELL_BC_H
#define BOX_SHELL_BC_H

#include "shell/commands/commands-private.h"

/* ---- numbers: little-endian decimal digits, value = sum d[i] * 10^(i - scale) -- */

typedef struct {
  bool neg;
  int scale;
  int n; /* digits in d, n >= scale */
  unsigned char *d;
} Num;

Num bc_num_add(const Num *a, const Num *b, bool subtract);
int bc_num_cmp(const Num *a, const Num *b);
Num bc_num_copy(const Num *a);
bool bc_num_div(const Num *a, const Num *b, int scale, Num *out);
void bc_num_free(Num *a);
Num bc_num_from_long(long v);
bool bc_num_is_zero(const Num *a);
int bc_num_length(const Num *a);
Num bc_num_mul(const Num *a, const Num *b, int scale);
void bc_num_norm(Num *a);
Num bc_num_rescale(const Num *a, int scale);
bool bc_num_to_long(const Num *a, long *out);
Num bc_num_zero(int scale);

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

/* ---- parse.c: a line's tokens, and statements of them ---- */

bool bc_accept(Bc *bc, const char *s);
void bc_fail(Bc *bc);
bool bc_is_op(Bc *bc, const char *s);
Tok *bc_lex(const char *p, size_t len, int *nt);
void bc_parse_define(Bc *bc);
BcNode *bc_parse_stmt(Bc *bc);
Tok *bc_peek(Bc *bc);

#endif
