/* ast.h — the Shell's syntax tree (private to shell/).
 *
 * Words are kept as the text written (quotes and all), like bash: the
 * parser only finds where a word ends; expand.c reads its quoting when it
 * expands it.  A word that needs no expansion at all is flagged so the
 * evaluator can use it as is.  Nodes live in the Shell's arena and are
 * never freed one by one (functions keep pointers into them).
 */
#ifndef BOX_SHELL_AST_H
#define BOX_SHELL_AST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  char *text;     /* as written, NUL-terminated */
  unsigned flags; /* W_* */
} Word;

enum {
  W_PLAIN = 1,  /* no quoting or expansion of any kind: text is the field */
  W_ASSIGN = 2, /* NAME=…, NAME+=…, NAME[…]=… */
};

typedef enum {
  R_IN,         /* n<  */
  R_OUT,        /* n>  */
  R_CLOBBER,    /* n>| */
  R_APPEND,     /* n>> */
  R_RDWR,       /* n<> */
  R_DUP_IN,     /* n<& */
  R_DUP_OUT,    /* n>& */
  R_OUT_ERR,    /* &>  */
  R_APPEND_ERR, /* &>> */
  R_HEREDOC,    /* << and <<- (body in heredoc) */
  R_HERESTR,    /* <<< */
} RedirKind;

typedef struct {
  char *body; /* filled when the lines after the command are read */
} HereDoc;

typedef struct {
  RedirKind kind;
  int fd;        /* target descriptor (-1: the operator's default) */
  Word *word;    /* target, or here-doc delimiter */
  HereDoc *doc;  /* R_HEREDOC */
  bool quoted;   /* here-doc delimiter was quoted: no expansion */
  char *varname; /* {NAME}>…: the shell picks a descriptor ≥ 10 and sets NAME to it */
} Redir;

typedef enum {
  N_SIMPLE,
  N_PIPE,
  N_AND,
  N_OR,
  N_SEQ,
  N_NOT,
  N_BACKGROUND,
  N_SUBSHELL,
  N_GROUP,
  N_IF,
  N_WHILE,
  N_UNTIL,
  N_FOR,
  N_ARITH_FOR,
  N_CASE,
  N_FUNCDEF,
  N_ARITH,
  N_COND,
  N_TIME,
} NodeKind;

typedef struct Node Node;
typedef struct Cond Cond;

typedef enum { C_AND, C_OR, C_NOT, C_UNARY, C_BINARY, C_WORD } CondKind;
struct Cond {
  CondKind kind;
  char *op; /* C_UNARY: "-f"…; C_BINARY: "==" "=~" "-eq"… */
  Word *a, *b;
  Cond *l, *r;
};

typedef struct {
  Word **pats;
  size_t npats;
  Node *body; /* may be NULL */
  int term;   /* 0 ;;  1 ;&  2 ;;& */
} CaseItem;

struct Node {
  NodeKind kind;
  int line;
  Redir *redirs;
  size_t nredirs;
  union {
    struct {
      Word **assigns;
      size_t nassigns;
      Word **words;
      size_t nwords;
      /* the command a literal first word names, once looked up (the
       * table does not change): a BoxCommandDef, exec.c's "a program"
       * mark, or NULL before the first run */
      const void *def;
    } simple;
    struct {
      Node **cmds;
      size_t n;
      bool *errpipe;
    } pipe; /* errpipe[i]: |& after stage i */
    struct {
      Node *left, *right;
    } bin; /* AND, OR, SEQ */
    struct {
      Node *child;
      bool posix_time; /* TIME: time -p */
    } un;              /* NOT, BACKGROUND, SUBSHELL, GROUP, TIME */
    struct {
      Node *cond, *then, *els;
    } ifn;
    struct {
      Node *cond, *body;
    } loop; /* WHILE, UNTIL */
    struct {
      char *var;
      Word **words;
      size_t nwords;
      bool in;
      Node *body;
    } forn;
    struct {
      char *init, *cond, *step;
      Node *body;
    } afor;
    struct {
      Word *word;
      CaseItem *items;
      size_t nitems;
    } casen;
    struct {
      char *name;
      Node *body;
      const char *source; /* the file that defined it, set when it first runs */
      int body_line;      /* where the body starts (the DEBUG trap at a call names it) */
    } func;
    struct {
      char *expr;
    } arith;
    struct {
      Cond *c;
    } cond;
  } u;
};

#endif
