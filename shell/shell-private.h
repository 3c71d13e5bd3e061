/* shell-private.h — internals shared by the files of shell/. */
#ifndef BOX_SHELL_PRIVATE_H
#define BOX_SHELL_PRIVATE_H

#include <glib.h>
#include <stdarg.h>

#include "shell/ast.h"
#include "shell/shell.h"

/* ---- lexer (lexer.c) ---------------------------------------------------- */

typedef enum {
  T_EOF,
  T_NEWLINE,
  T_WORD,
  T_SEMI,     /* ;  */
  T_DSEMI,    /* ;; */
  T_AMP,      /* &  */
  T_AND_IF,   /* && */
  T_OR_IF,    /* || */
  T_PIPE,     /* |  */
  T_LPAREN,   /* (  */
  T_RPAREN,   /* )  */
  T_REDIR,    /* any redirection operator, with its fd */
  T_HEREDOC,  /* << / <<- (not supported yet) */
} TokKind;

typedef struct {
  TokKind kind;
  Word *word;         /* T_WORD */
  RedirKind rkind;    /* T_REDIR */
  int fd;             /* T_REDIR: explicit fd or -1 */
  const char *text;   /* operator spelling (static) */
} Token;

typedef struct {
  const char *src;
  size_t len, pos;
  char *error;        /* g_malloc'd detail after a failure */
} Lexer;

void box_lexer_init(Lexer *lx, const char *src);
/* Returns false on a lexical error (lx->error set). */
bool box_lex_next(Lexer *lx, Token *tok);
const char *box_tok_name(const Token *tok);

/* ---- parser (parser.c) -------------------------------------------------- */

typedef struct {
  Lexer lx;
  Token look;
  bool have_look;
  char *error;        /* g_malloc'd detail of a syntax error */
} Parser;

typedef enum { PARSE_OK, PARSE_EOF, PARSE_ERROR } ParseResult;

void box_parser_init(Parser *p, const char *src);
void box_parser_done(Parser *p);
/* Parses the next complete command (one line, with its continuations).
 * *out is NULL for an empty line. */
ParseResult box_parse_next(Parser *p, Node **out);

/* ---- shell state --------------------------------------------------------- */

typedef struct {
  char *value;        /* NULL: declared (e.g. exported) but unset */
  bool exported;
} ShellVar;

typedef struct Shell {
  GHashTable *vars;   /* name → ShellVar* */
  char *cwd;          /* logical, absolute */
  int last_status;
  pid_t pid;          /* $$ */
  pid_t last_bg;      /* $! */
  GArray *bg_pids;    /* pid_t of background jobs */
  const BoxShellHost *host;
  bool exiting;       /* `exit` ran: stop evaluating */
  int exit_status;
  bool in_child;      /* a forked pipeline stage / background job */
} Shell;

const char *box_var_get(Shell *sh, const char *name);
void box_var_set(Shell *sh, const char *name, const char *value);
void box_var_export(Shell *sh, const char *name);
void box_var_unset(Shell *sh, const char *name);
bool box_is_name(const char *s, size_t len);

/* ---- output -------------------------------------------------------------- */

/* A write buffer on one descriptor (never stdio: it would fstat). */
typedef struct {
  int fd;
  size_t len;
  bool error;         /* a write failed (errno in err) */
  int err;
  char buf[8192];
} BoxOut;

void box_out_init(BoxOut *o, int fd);
void box_out_write(BoxOut *o, const void *data, size_t n);
void box_out_puts(BoxOut *o, const char *s);
void box_out_putc(BoxOut *o, char c);
void box_out_printf(BoxOut *o, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
bool box_out_flush(BoxOut *o);
/* write(2) the whole buffer, retrying on EINTR/short writes. */
bool box_write_all(int fd, const void *data, size_t n);
/* One unbuffered message on a descriptor. */
void box_fdprintf(int fd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* ---- expansion (expand.c) ------------------------------------------------ */

/* Expands words into fields (parameter expansion, field splitting, quote
 * removal).  Returns false after printing an error (status in *status). */
bool box_expand_words(Shell *sh, Word **words, size_t n, GPtrArray *out, int err_fd, int *status);
/* Expands one word without field splitting (assignments). */
char *box_expand_word_str(Shell *sh, const Word *w, int err_fd, int *status);

/* ---- commands (commands/registry.c) --------------------------------------- */

typedef struct {
  Shell *sh;
  int argc;
  char **argv;
  int in, out_fd, err;  /* after redirections; -1 when closed */
  BoxOut *out;          /* buffered stdout on out_fd */
} BoxCmd;

typedef int (*BoxCmdFn)(BoxCmd *c);

typedef struct {
  const char *name;
  BoxCmdFn fn;
} BoxCommandDef;

const BoxCommandDef *box_command_lookup(const char *name);

/* Prints "<prefix>: <name>: <text>" for a failed file operation: the
 * policy's text after EACCES when the host has it, else strerror(err). */
void box_file_error(BoxCmd *c, const char *prefix, const char *name, int err);
/* The text for err: the host's last denial for EACCES, else strerror. */
char *box_error_text(Shell *sh, int err);
/* Opens a file for a command (open(2) only, never stat). */
int box_open_file(const char *path, int flags);
/* Parses an exit-status-like integer; false when not a number. */
bool box_parse_int(const char *s, long *out);

/* The command implementations (one file each in commands/). */
int box_cmd_cat(BoxCmd *c);
int box_cmd_cd(BoxCmd *c);
int box_cmd_echo(BoxCmd *c);
int box_cmd_exit(BoxCmd *c);
int box_cmd_export(BoxCmd *c);
int box_cmd_false(BoxCmd *c);
int box_cmd_grep(BoxCmd *c);
int box_cmd_pwd(BoxCmd *c);
int box_cmd_true(BoxCmd *c);

/* ---- executor (exec.c) --------------------------------------------------- */

typedef struct {
  int in, out, err;
} BoxIO;

int box_eval(Shell *sh, Node *n, BoxIO io);
void box_wait_background(Shell *sh);

#endif
