/* awk.h — the parts of the Shell's `awk` (issue 31) shared by its files:
 * lex.c (tokens), parse.c (the tree), interp.c (evaluation), builtins.c
 * (functions, regular expressions, printf) and io.c (records, streams,
 * the command itself).
 *
 * Every file awk reads or writes is opened with box_open_file, and every
 * command it runs (print | cmd, cmd | getline, system) goes through
 * box_run_text, so each is its own decision on the mount or the policy. */
#ifndef BOX_SHELL_AWK_H
#define BOX_SHELL_AWK_H

#include <regex.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shell/commands/commands-private.h"

/* ---- values ---------------------------------------------------------------- */

/* T_MAYBE: input text (a field, $0, split's pieces) not yet looked at:
 * a T_STRNUM or a T_STR once it is (awk_resolve). */
enum { T_UNINIT, T_NUM, T_STR, T_STRNUM, T_MAYBE };

/* s is owned (g_malloc'd) for T_STR and T_STRNUM, NULL otherwise. */
typedef struct {
  int t;
  double n;
  char *s;
} Val;

enum { K_UNTYPED, K_SCALAR, K_ARRAY };

typedef struct AVar {
  int kind;
  Val v;
  GHashTable *arr; /* char* -> Val*, for K_ARRAY */
} AVar;

/* ---- tokens and the tree --------------------------------------------------- */

enum {
  TK_EOF,
  TK_NL,
  TK_LBRACE,
  TK_RBRACE,
  TK_LPAREN,
  TK_RPAREN,
  TK_LBRACKET,
  TK_RBRACKET,
  TK_SEMI,
  TK_COMMA,
  TK_NUMBER,
  TK_STRING,
  TK_ERE,
  TK_NAME,
  TK_FUNC_NAME,
  TK_BUILTIN,
  TK_PLUS,
  TK_MINUS,
  TK_STAR,
  TK_SLASH,
  TK_PERCENT,
  TK_POW,
  TK_NOT,
  TK_GT,
  TK_LT,
  TK_PIPE,
  TK_QUESTION,
  TK_COLON,
  TK_TILDE,
  TK_DOLLAR,
  TK_ASSIGN,
  TK_ADD_ASSIGN,
  TK_SUB_ASSIGN,
  TK_MUL_ASSIGN,
  TK_DIV_ASSIGN,
  TK_MOD_ASSIGN,
  TK_POW_ASSIGN,
  TK_OR,
  TK_AND,
  TK_NOMATCH,
  TK_EQ,
  TK_LE,
  TK_GE,
  TK_NE,
  TK_INCR,
  TK_DECR,
  TK_APPEND,
  /* keywords */
  TK_BEGIN,
  TK_END,
  TK_FUNCTION,
  TK_IF,
  TK_ELSE,
  TK_WHILE,
  TK_FOR,
  TK_DO,
  TK_BREAK,
  TK_CONTINUE,
  TK_NEXT,
  TK_NEXTFILE,
  TK_EXIT,
  TK_RETURN,
  TK_DELETE,
  TK_GETLINE,
  TK_PRINT,
  TK_PRINTF,
  TK_IN,
};

/* The builtin functions (TK_BUILTIN's value). */
enum {
  B_LENGTH,
  B_SUBSTR,
  B_INDEX,
  B_SPLIT,
  B_SUB,
  B_GSUB,
  B_MATCH,
  B_SPRINTF,
  B_SIN,
  B_COS,
  B_ATAN2,
  B_EXP,
  B_LOG,
  B_SQRT,
  B_INT,
  B_RAND,
  B_SRAND,
  B_TOLOWER,
  B_TOUPPER,
  B_SYSTEM,
  B_CLOSE,
  B_FFLUSH,
  B_GENSUB,
  B_SYSTIME,
  B_ASORT,
  B_ASORTI,
  B_STRFTIME,
  B_MKTIME,
};

typedef struct {
  const char *src;
  size_t pos, len;
  int line;
  int tok;
  size_t tok_start;
  char *text; /* names, strings, regular expressions */
  double num;
  int builtin;
  bool last_nl_ok; /* a newline after this token is not a terminator */
  int prev;
} Lexer;

enum {
  AN_NUM,
  AN_STR,
  AN_ERE,
  AN_VAR,
  AN_LOCAL,
  AN_FIELD,
  AN_INDEX,
  AN_IN,
  AN_MATCH,
  AN_NOMATCH,
  AN_ADD,
  AN_SUB,
  AN_MUL,
  AN_DIV,
  AN_MOD,
  AN_POW,
  AN_CONCAT,
  AN_LT,
  AN_LE,
  AN_GT,
  AN_GE,
  AN_EQ,
  AN_NE,
  AN_AND,
  AN_OR,
  AN_NOT,
  AN_NEG,
  AN_PLUS,
  AN_COND,
  AN_ASSIGN,
  AN_PREINC,
  AN_PREDEC,
  AN_POSTINC,
  AN_POSTDEC,
  AN_BUILTIN,
  AN_CALL,
  AN_GETLINE,
  AN_GROUP,
  /* statements */
  S_PRINT,
  S_PRINTF,
  S_IF,
  S_WHILE,
  S_DO,
  S_FOR,
  S_FORIN,
  S_BREAK,
  S_CONTINUE,
  S_NEXT,
  S_NEXTFILE,
  S_EXIT,
  S_RETURN,
  S_DELETE,
  S_BLOCK,
  S_EXPR,
};

/* getline's forms (ANode.ival). */
enum { GL_PLAIN, GL_FILE, GL_CMD };
/* output redirections (ANode.ival of print/printf). */
enum { AR_NONE, AR_FILE, AR_APPEND, AR_PIPE };

typedef struct ANode ANode;
struct ANode {
  int op;
  int line;
  int ival; /* var index, builtin, assignment op, redirection, getline form */
  int nargs;
  double num;
  char *str;
  regex_t *re;
  ANode *a, *b, *c, *d; /* operands / condition, body, ... */
  ANode **args;         /* subscripts, call arguments, print items */
  ANode *next;          /* statement lists */
};

typedef struct {
  char *name;
  int nparams;
  char **params;
  ANode *body;
  bool defined;
} Func;

typedef struct {
  int kind;          /* 0 rule, 1 BEGIN, 2 END */
  ANode *pat, *pat2; /* pat2: a range's end */
  ANode *action;     /* NULL: print $0 */
  bool in_range;
} Rule;

/* ---- input and output streams --------------------------------------------- */

typedef struct {
  int fd;
  char *buf;
  size_t cap, start, end;
  bool eof;
} RecReader;

typedef struct {
  char *name;
  int kind; /* AR_FILE/AR_APPEND/AR_PIPE output, or 10 file input, 11 command input */
  int fd;
  pid_t pid;
  BoxOut *out;
  RecReader rd;
} Stream;

/* ---- the interpreter ------------------------------------------------------ */

/* The special variables: their indexes in Awk.vars. */
enum {
  AV_NF,
  AV_NR,
  AV_FNR,
  AV_FS,
  AV_OFS,
  AV_ORS,
  AV_RS,
  AV_SUBSEP,
  AV_CONVFMT,
  AV_OFMT,
  AV_RSTART,
  AV_RLENGTH,
  AV_FILENAME,
  AV_IGNORECASE,
  AV_ENVIRON,
  AV_ARGC,
  AV_ARGV,
  AV_NSPECIAL,
};

typedef struct {
  AVar **slots;
  AVar *own;
  int n;
} Frame;

typedef struct Awk {
  BoxCmd *c;
  /* program */
  GPtrArray *rules;      /* Rule* */
  GHashTable *var_index; /* name -> index+1 */
  GPtrArray *var_names;
  GHashTable *funcs;  /* name -> Func* */
  GPtrArray *nodes;   /* every allocation of the tree, freed at the end */
  GPtrArray *regexes; /* the program's regular expression literals */
  const char *srcname;
  /* state */
  AVar *vars;
  int nvars;
  Val *fields; /* fields[0] = $0 */
  int nfields, fields_cap;
  bool split_done;
  /* after the default split, fields 1..nfields are spans of $0 (start,
   * length pairs), made values only when one is read as a string or any
   * is assigned: `{ s += $2 }` copies no field */
  bool lazy;
  size_t *spans;
  int spans_cap;
  double nr, fnr;
  Frame *frame;
  int depth;
  GHashTable *regex_cache, *regex_icase_cache; /* the second while IGNORECASE is set */
  GPtrArray *streams;                          /* Stream* */
  RecReader main_rd;
  bool main_open;
  int argi;
  bool used_file;
  int exit_status;
  bool exiting;
  jmp_buf *jmp_next, *jmp_exit;
  int jmp_kind; /* 1 next, 2 nextfile */
  double seed, prev_seed;
  char numbuf[64];
} Awk;

/* lex.c */
void awk_lex_init(Lexer *lx, const char *src);
int awk_lex_next(Awk *A, Lexer *lx);
/* Rescans the current '/' or '/=' token as a regular expression literal. */
void awk_lex_regex(Awk *A, Lexer *lx);
char *awk_unescape(const char *s, size_t n, bool regex);

/* parse.c: false after printing a syntax error. */
bool awk_parse(Awk *A, const char *src);
int awk_var_lookup(Awk *A, const char *name);
G_NORETURN void awk_syntax(Awk *A, Lexer *lx, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
ANode *awk_node(Awk *A, int op, int line);

/* interp.c */
void awk_val_free(Val *v);
Val awk_val_copy(const Val *v);
Val awk_num(double n);
Val awk_str(char *owned);
Val awk_strnum(char *owned);
Val awk_maybe(char *owned);
void awk_resolve(Val *v);
double awk_to_num(Awk *A, const Val *v);
char *awk_to_str(Awk *A, const Val *v);  /* g_malloc'd, CONVFMT */
char *awk_to_ostr(Awk *A, const Val *v); /* g_malloc'd, OFMT */
char *awk_num_str(Awk *A, double n, const char *fmt);
bool awk_looks_numeric(const char *s, double *out);
Val awk_eval(Awk *A, ANode *n);
bool awk_eval_cond(Awk *A, ANode *n);
/* gawk's IGNORECASE is set: regular expressions, string comparisons and
 * index() ignore case (not a one-character FS or RS, nor subscripts). */
bool awk_ignorecase(Awk *A);
void awk_assign(Awk *A, ANode *lv, Val v);
AVar *awk_array_of(Awk *A, ANode *n);
/* The variable a name node means, as it is (no conversion). */
AVar *awk_var_peek(Awk *A, ANode *n);
Val *awk_array_ref(Awk *A, AVar *arr, const char *key, bool create);
void awk_array_clear(AVar *arr);
int awk_exec(Awk *A, ANode *n); /* 0, or 1 break, 2 continue, 3 return */
G_NORETURN void awk_fatal(Awk *A, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
const char *awk_var_cstr(Awk *A, int idx); /* the special var's string (owned by the var) */
void awk_set_var_num(Awk *A, int idx, double n);
void awk_set_var_str(Awk *A, int idx, const char *s);
Val awk_field(Awk *A, int i);
void awk_set_field(Awk *A, int i, Val v);
void awk_set_record(Awk *A, const char *s, size_t n);
void awk_split_record(Awk *A);
void awk_set_nf(Awk *A, int nf);

/* builtins.c */
regex_t *awk_regex(Awk *A, const char *ere);
/* A regex of the program's text, owned by the caller (awk_regex_free). */
regex_t *awk_regex_compile(Awk *A, const char *ere);
void awk_regex_free(gpointer re);
regex_t *awk_regex_of(Awk *A, ANode *n);
bool awk_match(regex_t *re, const char *s, size_t len, size_t from, bool notbol, regmatch_t *m,
               int nm);
Val awk_builtin(Awk *A, ANode *n);
char *awk_sprintf(Awk *A, ANode **args, int nargs, size_t *len);
/* for-in's keys of arr put in the order PROCINFO["sorted_in"] names (how). */
void awk_order_keys(Awk *A, AVar *arr, GPtrArray *keys, const char *how);
GPtrArray *awk_split_fs(Awk *A, const char *s, const char *fs, bool paragraph, GPtrArray *seps);

/* io.c */
Val awk_getline(Awk *A, ANode *n);
void awk_print(Awk *A, ANode *n);
int awk_close(Awk *A, const char *name);
int awk_fflush(Awk *A, const char *name, bool all);
int awk_system(Awk *A, const char *cmd);
void awk_flush_all(Awk *A);
/* Ends the run after a failed write on out (141 for a closed pipe). */
void awk_check_out(Awk *A, BoxOut *out);

#endif
