/* ast.h — the Shell's syntax tree (private to shell/).
 *
 * The lexer turns text into words made of parts; the parser builds a tree
 * of nodes from them (dash-style: binary list/and/or nodes, pipelines as
 * arrays); expand.c turns words into fields; exec.c walks the tree.
 */
#ifndef BOX_SHELL_AST_H
#define BOX_SHELL_AST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct Word Word;

typedef enum {
  WP_LIT,     /* unquoted literal text (subject to globbing later) */
  WP_QLIT,    /* quoted literal text ('…', "…", \x); may be empty */
  WP_PARAM,   /* $name, ${name}, ${name op word} */
} PartKind;

typedef enum {
  PO_NONE,
  PO_LENGTH,       /* ${#name} */
  PO_DEFAULT,      /* ${name-w}  / ${name:-w} */
  PO_ASSIGN,       /* ${name=w}  / ${name:=w} */
  PO_ERROR,        /* ${name?w}  / ${name:?w} */
  PO_ALT,          /* ${name+w}  / ${name:+w} */
  PO_TRIM_SUFFIX,  /* ${name%w} */
  PO_TRIM_SUFFIX_LONG, /* ${name%%w} */
  PO_TRIM_PREFIX,  /* ${name#w} */
  PO_TRIM_PREFIX_LONG, /* ${name##w} */
} ParamOp;

typedef struct {
  PartKind kind;
  bool quoted;     /* inside "…" (for WP_PARAM: no field splitting) */
  char *text;      /* WP_LIT / WP_QLIT text; WP_PARAM name */
  ParamOp op;
  bool colon;      /* ${name:-w} vs ${name-w} */
  Word *arg;       /* the word of ${name op word}, or NULL */
} WordPart;

struct Word {
  WordPart *parts;
  size_t nparts;
  char *raw;       /* the word as written */
};

typedef enum {
  R_IN,        /* n<  */
  R_OUT,       /* n>  */
  R_CLOBBER,   /* n>| */
  R_APPEND,    /* n>> */
  R_RDWR,      /* n<> */
  R_DUP_IN,    /* n<& */
  R_DUP_OUT,   /* n>& */
  R_OUT_ERR,   /* &>  */
  R_APPEND_ERR,/* &>> */
} RedirKind;

typedef struct {
  RedirKind kind;
  int fd;          /* target descriptor (default 0 or 1) */
  Word *word;
  const char *op;  /* operator as written, for messages */
} Redir;

typedef struct {
  char *name;
  Word *value;     /* NULL-free: an empty word for A= */
} Assign;

typedef enum {
  N_SIMPLE,
  N_PIPE,
  N_AND,
  N_OR,
  N_SEQ,
  N_NOT,
  N_BACKGROUND,
} NodeKind;

typedef struct Node Node;
struct Node {
  NodeKind kind;
  union {
    struct {
      Assign *assigns; size_t nassigns;
      Word **words; size_t nwords;
      Redir *redirs; size_t nredirs;
    } simple;
    struct { Node **cmds; size_t n; } pipe;
    struct { Node *left, *right; } bin;   /* AND, OR, SEQ */
    struct { Node *child; } un;           /* NOT, BACKGROUND */
  } u;
};

void box_word_free(Word *w);
void box_node_free(Node *n);

#endif
