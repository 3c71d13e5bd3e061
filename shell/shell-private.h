/* shell-private.h — internals shared by the files of shell/ and the
 * commands in shell/commands/. */
#ifndef BOX_SHELL_PRIVATE_H
#define BOX_SHELL_PRIVATE_H

#include <glib.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "shell/ast.h"
#include "shell/shell.h"

typedef struct Shell Shell;
typedef struct BoxHistory BoxHistory;
typedef struct BoxCompTable BoxCompTable;

/* ---- arena (shell.c): parse trees live until the Shell ends ------------- */

/* Not zeroed.  Inline (below struct Shell): the parser allocates per
 * word and per node, and the call cost as much as the bump. */
static inline void *box_arena_alloc(Shell *sh, size_t n);
/* A new block (or a block of its own for a large request). */
void *box_arena_alloc_slow(Shell *sh, size_t n);
char *box_arena_strndup(Shell *sh, const char *s, size_t n);
/* The C library's message for err, as bash prints it.  Not g_strerror:
 * that converts the message to UTF-8 through iconv, whose first use reads
 * the charset tables under /usr, out of a rooted worker's reach: refused
 * probes of /usr in the decision log for one "No such file or directory". */
const char *box_strerror(int err);
/* A point to go back to: everything allocated after it is dropped (-n
 * drops each command's tree once it is parsed). */
typedef struct {
  guint nblocks;
  char *ptr;
  size_t left;
} BoxArenaMark;
BoxArenaMark box_arena_mark(Shell *sh);
void box_arena_release(Shell *sh, BoxArenaMark m);

/* ---- parser (parser.c) -------------------------------------------------- */

typedef struct Parser Parser;
typedef enum { PARSE_OK, PARSE_EOF, PARSE_ERROR } ParseResult;

/* A parser over text; name is used in messages of sourced files (NULL for
 * -c text).  Aliases in sh->aliases expand in command position. */
Parser *box_parser_new(Shell *sh, const char *text, const char *name);
/* The same, its first line numbered line (a trap's text counts from the
 * line of the command that ran it, as bash's $LINENO does). */
Parser *box_parser_new_at(Shell *sh, const char *text, const char *name, int line);
void box_parser_free(Parser *p);
/* Parses the next complete command (up to a newline at the top level).
 * *out is NULL for an empty line.  On PARSE_ERROR the message has been
 * printed on the shell's stderr. */
ParseResult box_parse_next(Parser *p, Node **out);
/* After PARSE_ERROR, the status `bash -c` ends with: 2, or 127 for an
 * error inside $( ), or -1 (the last command's status) for one inside
 * [[ ]], whose errors bash reports apart from other syntax errors. */
int box_parse_error_status(const Parser *p);
/* Whether the last PARSE_OK dropped a line for a syntax error inside an
 * array literal (bash reads on after one, the status 1). */
bool box_parse_skipped(Parser *p);
/* Whether text (from line on) is whole commands, saying nothing: 0 when
 * it is (or has an error that more lines would not mend), else why it
 * ran out: inside a construct, a quote, or a here-document. */
enum { BOX_PARSE_OPEN = 1, BOX_PARSE_IN_QUOTE, BOX_PARSE_IN_HEREDOC };
int box_parse_probe(Shell *sh, const char *text, int line);
/* The text p has not read yet, and its line. */
const char *box_parser_rest(Parser *p, int *line);
/* Parses a whole text (for $(…), eval, trap text); NULL + message printed
 * on a syntax error.  The result of $(…) texts is cached by content. */
bool box_parse_all(Shell *sh, const char *text, const char *name, Node **out);
/* The same, past the cache, the text's first line counted as line (a `…`
 * substitution's, whose lines depend on where it is). */
bool box_parse_all_at(Shell *sh, const char *text, const char *name, int line, Node **out);
/* Lexes the inside of an array literal `(a b c)` into words. */
GPtrArray *box_parse_words(Shell *sh, const char *text);

/* ---- variables (vars.c) --------------------------------------------------- */

enum {
  V_EXPORT = 1,
  V_READONLY = 2,
  V_INTEGER = 4,
  V_ARRAY = 8,
  V_ASSOC = 16,
  V_LOWER = 32,
  V_UPPER = 64,
  V_NAMEREF = 128,
  /* an array declare -a/-A made and nothing has assigned since: declare -p
   * shows it as bash does, without =() */
  V_NOVALUE = 256,
};

typedef struct {
  char *value; /* scalar value; NULL: declared but unset, or an array */
  unsigned flags;
  GPtrArray *arr;    /* V_ARRAY: index → char* (NULL = unset element) */
  GHashTable *assoc; /* V_ASSOC: key → char* */
  GPtrArray *keys;   /* V_ASSOC: keys in insertion order */
} ShellVar;

const char *box_var_get(Shell *sh, const char *name);
/* Sets a scalar (element 0 of an array).  False after printing
 * "NAME: readonly variable". */
bool box_var_set(Shell *sh, const char *name, const char *value);
/* The same, taking value (g_malloc'd) over: a plain scalar keeps it
 * without a copy. */
bool box_var_set_take(Shell *sh, const char *name, char *value);
void box_var_export(Shell *sh, const char *name);
void box_var_unset(Shell *sh, const char *name);
ShellVar *box_var_lookup(Shell *sh, const char *name);
/* Drops a variable's value, elements and keys; its attributes stay. */
void box_var_clear(ShellVar *v);
ShellVar *box_var_copy(const ShellVar *v);
/* A variable's attributes as declare -p spells them ("aAilnrux"'s letters), appended. */
void box_var_attr_letters(const ShellVar *v, GString *out);
ShellVar *box_var_make(Shell *sh, const char *name); /* finds or creates */
bool box_is_name(const char *s, size_t len);
/* NAME or NAME[SUB], as printf -v, unset and test -v take a variable: false
 * when NAME is no identifier or the subscript is empty or unclosed; *key is
 * NULL without brackets.  Both results are the caller's to free. */
bool box_split_ref(const char *ref, char **name, char **key);
/* The key of NAME[KEY] as a builtin's argument names an element (unset,
 * printf -v, read), expanded as bash expands it: an associative array's
 * as a subscript ('A["k"]', 'A[$k]'), an indexed one's as arithmetic
 * text ('a[$i]').  NULL when the expansion failed. */
char *box_elem_key(Shell *sh, const char *name, const char *key);
/* name is a nameref that leads to an array's element (declare -n r='A[k]'):
 * its array and key, both the caller's to free. */
bool box_nameref_elem(Shell *sh, const char *name, char **arr, char **key);
/* test -v REF: a scalar's value, an array's element 0 (or SUB; any for @). */
bool box_var_isset(Shell *sh, const char *ref);
/* Arrays. */
void box_var_make_array(ShellVar *v, bool assoc);
const char *box_var_elem(ShellVar *v, const char *key); /* key: index text or assoc key */
/* An indexed array's subscript key evaluated, as elem_index does it (its
 * error marks the command for dropping: subscript_failed). */
bool box_subscript_value(Shell *sh, const char *key, int64_t *out);
/* old + value for `n+=value` of an integer variable; NULL after the error */
char *box_int_append(Shell *sh, const char *old, const char *value);
bool box_var_set_elem(Shell *sh, const char *name, const char *key, const char *value, bool append);
/* After an error bash says through its report_error (a bad substitution,
 * a glob with no match under failglob, a bad subscript): under set -e the
 * shell ends with 1, wherever the error was.  True then. */
bool box_errexit_ends(Shell *sh);
/* "WHAT: bad array subscript" (a negative index before the array's start)
 * as bash's report_error says it: under set -e it ends the shell with
 * status 1, wherever it happens (an `if` or `||` too); true then. */
bool box_bad_subscript(Shell *sh, const char *what);
/* 0 done (or nothing to do), BOX_UNSET_BAD_SUBSCRIPT for a negative
 * index before an array's start, BOX_UNSET_NOT_ARRAY for a scalar's
 * index other than 0: unset's two messages. */
enum { BOX_UNSET_BAD_SUBSCRIPT = 1, BOX_UNSET_NOT_ARRAY };
int box_var_unset_elem(Shell *sh, const char *name, const char *key);
/* All set values (or keys) of a variable, in index order. */
GPtrArray *box_var_values(ShellVar *v, bool keys);
/* An associative array's keys in the order bash lists them (borrowed). */
GPtrArray *box_var_assoc_keys(ShellVar *v);
/* A local in the innermost function frame (saves the outer one). */
ShellVar *box_var_local(Shell *sh, const char *name);
/* A variable a local or a command's temporary assignment hides, kept to put back. */
typedef struct {
  char *name;
  ShellVar *saved; /* the outer variable (owned), or NULL when there was none */
} SavedVar;
/* Puts back an array of SavedVar, newest first, and frees it. */
void box_var_restore(Shell *sh, GArray *saved);
/* `unset NAME` of a variable that `NAME=v f` gave the running function f
 * (Shell.temp_scope), local to no function since: what NAME was before
 * shows again and stays after f, as bash's temporary scope is dropped.
 * False when NAME is no such variable. */
bool box_var_unset_temp(Shell *sh, const char *name);
/* Starts recording what variables are before each change, so that
 * box_var_journal_end puts them back (a program's redirections, which bash
 * expands in its child); NULL when one is being recorded already. */
GArray *box_var_journal_begin(Shell *sh);
void box_var_journal_end(Shell *sh, GArray *journal);
/* Builds the environment of spawned programs (NULL-terminated, g_strfreev). */
char **box_var_environ(Shell *sh);
/* The process's time zone made TZ as exported (tzset), before a command runs. */
void box_apply_tz(Shell *sh);

/* ---- output -------------------------------------------------------------- */

/* A write buffer on one descriptor (never stdio: it would fstat). */
typedef struct {
  int fd;
  size_t len;
  bool error; /* a write failed (errno in err) */
  int err;
  char buf[8192];
} BoxOut;

void box_out_init(BoxOut *o, int fd);
void box_out_write(BoxOut *o, const void *data, size_t n);
void box_out_puts(BoxOut *o, const char *s);
void box_out_putc(BoxOut *o, char c);
void box_out_printf(BoxOut *o, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
bool box_out_flush(BoxOut *o);
/* write(2) the whole buffer, retrying on EINTR/short writes.  On
 * box_held_fd it never blocks: what the pipe does not take is appended to
 * box_held_rest (NULL until then), for jobs.c to hand to a child. */
bool box_write_all(int fd, const void *data, size_t n);
extern int box_held_fd;
extern GByteArray *box_held_rest;
/* One unbuffered message on a descriptor. */
void box_fdprintf(int fd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* "strands-shell: " + message + "\n" on the shell's current stderr. */
void box_sh_error(Shell *sh, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Reads a whole descriptor (pipes, files) into a string.  No fstat. */
GString *box_read_all(int fd, size_t limit);

/* ---- shell state ------------------------------------------------------------ */

enum {
  O_ERREXIT = 1 << 0,
  O_NOUNSET = 1 << 1,
  O_XTRACE = 1 << 2,
  O_NOGLOB = 1 << 3,
  O_NOCLOBBER = 1 << 4,
  O_PIPEFAIL = 1 << 5,
  O_ALLEXPORT = 1 << 6,
  O_NOEXEC = 1 << 7,
  O_VERBOSE = 1 << 8,
  O_BRACE = 1 << 9,
  O_HASHALL = 1 << 10,
  /* set -E / -T: functions, subshells and substitutions keep the ERR
   * (errtrace) or DEBUG and RETURN (functrace) traps */
  O_ERRTRACE = 1 << 11,
  O_FUNCTRACE = 1 << 12,
  /* kept for `set -o` and `shopt -o` to show, with no effect here (no
   * terminal, history or job control; no privileged mode) */
  O_INERT_EMACS = 1 << 16,
  O_HISTEXPAND = 1 << 17,
  O_HISTORY = 1 << 18,
  O_INERT_IGNOREEOF = 1 << 19,
  O_KEYWORD = 1 << 20,
  O_INERT_MONITOR = 1 << 21,
  O_INERT_NOLOG = 1 << 22,
  O_INERT_NOTIFY = 1 << 23,
  O_INERT_PHYSICAL = 1 << 24,
  O_INERT_POSIX = 1 << 25,
  O_INERT_PRIVILEGED = 1 << 26,
  O_INERT_VI = 1 << 27,
  /* $- only: bash -i ('i'); a script read from a file (no 'c') or from
   * standard input ('s' for 'c') */
  O_INTERACTIVE = 1 << 28,
  O_FROM_FILE = 1 << 29,
  O_FROM_STDIN = 1 << 30,
};
enum {
  SH_NULLGLOB = 1 << 0,
  SH_FAILGLOB = 1 << 1,
  SH_DOTGLOB = 1 << 2,
  SH_GLOBSTAR = 1 << 3,
  SH_EXTGLOB = 1 << 4,
  SH_NOCASEGLOB = 1 << 5,
  SH_NOCASEMATCH = 1 << 6,
  SH_EXPAND_ALIASES = 1 << 7,
  SH_LASTPIPE = 1 << 8,
  SH_INHERIT_ERREXIT = 1 << 9,
  SH_XPG_ECHO = 1 << 10,
};

/* J_DISCARD: the rest of the top-level command is dropped and the next
 * one runs with $? 1 — bash -c's answer to an arithmetic expansion error
 * or an assignment to a readonly variable. */
enum { J_NONE, J_BREAK, J_CONTINUE, J_RETURN, J_EXIT, J_DISCARD };

/* Descriptors a script may name (`exec 200>lock`): bash allows any below
 * the open-files limit; scripts use small numbers and the odd 200. */
#define BOX_NFD 256
#define BOX_NSIG 65
#define TRAP_EXIT 0
#define TRAP_ERR 65
#define TRAP_DEBUG 66
#define TRAP_RETURN 67
#define BOX_NTRAP 68

typedef struct {
  pid_t pid;
  int status;
  bool done;
  char *text;
  char *cmd; /* a background job's command as `jobs` shows it, or NULL */
} BoxJob;

struct Shell {
  GHashTable *vars;          /* name → ShellVar* */
  GHashTable *funcs;         /* name → Node* (N_FUNCDEF) */
  GHashTable *aliases;       /* name → value */
  GHashTable *hash;          /* hashed program names → BoxHashed (g_free) */
  GHashTable *subst_cache;   /* $(…) text → Node* */
  GHashTable *disabled;      /* builtins `enable -n` turned off (NULL: none) */
  BoxHistory *history;       /* the command history (history.c), NULL until used */
  BoxCompTable *completions; /* complete's specifications (commands/complete.c), or NULL */
  GHashTable *traced_funcs;  /* functions `declare -ft` gave the trace attribute (NULL: none) */
  GPtrArray *frames;         /* per function call: GPtrArray of saved locals */
  GArray *temp_scope;        /* SavedVar: `NAME=v f`'s for the innermost such call, or NULL */
  guint temp_frames;         /* frames->len when that call began */
  char *cwd;                 /* logical, absolute */
  int status;                /* $? */
  pid_t pid;                 /* $$ */
  pid_t last_bg;             /* $! */
  GArray *jobs;              /* BoxJob */
  const BoxShellHost *host;
  char *arg0; /* $0 */
  char **pos; /* $1… (NULL-terminated, g_strfreev) */
  int npos;
  unsigned opts, shopts;
  uint64_t shopts_inert; /* commands/shopt.c: the names it only remembers */
  int jump, jump_n;      /* J_* pending, and its count for break/continue */
  int exit_status;
  int loop_depth, func_depth, depth, max_depth;
  int expand_nest; /* ${…} within ${…} being expanded (expand.c) */
  int errexit_off; /* >0: in a context where set -e is ignored */
  /* a command dropped for an expansion error where set -e was ignored
   * (`x=$((1/0)) || …`): bash's counter of that context is never taken
   * back, so from then on every $( ) runs as if on the left of || (no
   * ERR trap, no set -e inside) */
  bool comsub_ignore;
  int invert_depth; /* of `!` pipelines, a part of errexit_off */
  /* A pipeline's element or a & job as its child runs it: its own status
   * is the parent's to judge, so it fires no ERR trap (commands inside do) */
  const struct Node *status_quiet;
  /* the DEBUG trap ran for this command in the parent, before the fork
   * that runs it as a pipeline's element or a & job */
  const struct Node *debug_done;
  /* forked (subshell, stage, job, substitution): a fatal error ends it
   * with 1, not 127 — but for a simple stage or job (box_child_simple) */
  bool in_child;
  const struct Node *simple_child; /* the simple command this child was forked for */
  char *exit_trap_held;            /* in a child: the parent's EXIT trap, not run */
  /* in a pipeline's child: the simple command whose shell:exec the parent
   * asked before the fork (box_exec_decide_ahead), and its answer */
  const struct Node *ahead_node;
  bool ahead_permit;
  char *ahead_message;
  bool in_trap;
  bool in_exit_trap;
  char *traps[BOX_NTRAP];
  uint64_t ignored_at_entry; /* bit sig-1: ignored when the Shell started (trap.c) */
  int fd[BOX_NFD];           /* the shell's descriptors as commands see them; -1 closed */
  int fd_high;
  struct BoxSaved *saved; /* the innermost table to put back (redir.c) */
  gint64 started;
  int pipestatus_one;
  const char *arith_who;
  bool discard;
  bool failglob_hit; /* a word matched nothing under failglob (exec.c) */
  /* GLOBIGNORE as pathname expansion last read it (expand.c): its text
   * (NULL: unset) and its colon-separated patterns */
  char *globignore_seen;
  GPtrArray *globignore_pats;
  /* an array subscript's arithmetic failed (vars.c): bash drops the command
   * even where the expression's own error would not (let, (( )), unset) */
  bool subscript_failed;
  /* the last index looked up was negative past the array's start (vars.c):
   * bash's arithmetic says so and goes on */
  bool bad_subscript;
  const char *builtin;  /* the builtin running, which names an integer variable's error */
  char *last_arg;       /* $_: the last word of the last simple command (NULL: "bash"); reused */
  size_t last_arg_size; /* bytes allocated at last_arg */
  const Word *last_arg_word; /* the literal word whose text last_arg holds, if one did */
  bool last_arg_empty;       /* $_ is "" (an assignment's), whatever last_arg holds */
  /* the error being reported drops the command (J_DISCARD), not the shell */
  /* names an arithmetic error's context (bash's `[[: `) */
  /* PIPESTATUS is (this status); -1 other */
  /* monotonic µs at the start: $SECONDS counts from it */ /* fd[fd_high…] are all -1 (≥ 3): what a redirection saves */
  int optind_sub; /* getopts position inside a clustered word */
  long lineno;
  gint64 deadline; /* monotonic µs, 0 = none */
  mode_t umask;
  GPtrArray *arena; /* blocks */
  size_t arena_left;
  char *arena_ptr;
  GString *rematch_dummy;
  const char *script_name; /* for messages of sourced files */
  GArray *calls;           /* BoxCall: the call stack, outermost first (callstack.c), or NULL */
  bool lazy_made;          /* box_vars_materialize has run */
  guint call_functions;    /* how many of its frames are functions' */
  int subst_status;        /* status of the last $(…), -1 none */
  bool check_only;         /* -n: parse only; no tree outlives its command */
  GArray *procsub_fds; /* int: our ends of the pipes of <(…)/>(…), closed after their command */
  char **lit_av;       /* the argv of the simple command being run, and per word */
  bool *lit;           /* whether it was literal in the script (BoxShellCommand.literal) */
  int lit_argc;
  const struct Node *lit_node; /* the simple command lit_av was expanded from */
  const char *python_as;       /* the path python3 runs as now (script.c), or NULL */
  GPtrArray *argv_pool;        /* emptied argv arrays of finished simple commands, for reuse */
  bool arith_unbound; /* set -u stopped an expression at an unset name (cleared by the caller) */
  const struct Node *cmd_node; /* $BASH_COMMAND's command (exec.c, note_command) */
  char *cmd_text;              /* its text once printed, or the DEBUG trap's */
  GArray *var_journal; /* SavedVar: variables as they were (box_var_journal_begin), or NULL */
};

static inline void *box_arena_alloc(Shell *sh, size_t n)
{
  n = (n + 7) & ~(size_t)7;
  if (G_UNLIKELY(n > sh->arena_left)) return box_arena_alloc_slow(sh, n);
  void *p = sh->arena_ptr;
  sh->arena_ptr += n;
  sh->arena_left -= n;
  return p;
}

/* The name source runs when it is one simple command with no
 * redirection or assignment, and that name a plain word (first.c):
 * g_malloc'd, else NULL. */
char *box_text_only_command(const char *source);

/* The one Shell of this process (commands reach it through BoxCmd). */
extern Shell *box_current_shell;

/* ---- expansion (expand.c) ------------------------------------------------ */

/* Expands words into fields (brace, tilde, parameter, command, arithmetic,
 * splitting, globbing, quote removal).  False after printing an error
 * (status set in sh->status by the caller from *status). */
bool box_expand_words(Shell *sh, Word **words, size_t n, GPtrArray *out, int *status);
/* One word to one string: no splitting or globbing (assignments, redirect
 * targets with bash's rules, case words). */
char *box_expand_str(Shell *sh, const char *text, bool assign, int *status);
/* An array subscript as bash expands one: as box_expand_str, but no tilde. */
char *box_expand_subscript(Shell *sh, const char *text, int *status);
/* A declaration's NAME=value argument, whole, as one field. */
char *box_expand_decl_word(Shell *sh, const char *text, int *status);
/* The length of the IFS character that s (n bytes) begins with, or 0: a
 * UTF-8 character of IFS whole (IFS=μ), else one byte. */
size_t box_ifs_len(const char *ifsv, const char *s, size_t n);
/* The text of (( … )) or for (( … )): `1<<($j)` holds no <(…). */
char *box_expand_arith(Shell *sh, const char *text, int *status);
/* One word to a pattern: quoted characters come out backslash-escaped. */
char *box_expand_pattern(Shell *sh, const char *text, int *status);
/* The right side of [[ =~ ]] as an ERE: quoted characters escaped. */
char *box_expand_regex(Shell *sh, const char *text, int *status);
/* A here-doc body: $, ` and \ only. */
char *box_expand_heredoc(Shell *sh, const char *body, int *status);
/* Runs text as a command substitution and returns its output with
 * trailing newlines removed. */
char *box_command_subst(Shell *sh, const char *text, bool backquote, int *status);
/* Pattern matching as case and [[ ]] do: extglob groups under `shopt -s
 * extglob`, or always (always_ext: [[ == ]], as bash 5.2). */
bool box_pattern_match(Shell *sh, const char *pattern, const char *s, bool always_ext);
/* The digits of an escape (\NNN, \xHH, \uHHHH…): up to max digits of base
 * 8 or 16 that follow s[*i] in s[0..n), each added to *v; *i moves onto
 * the last one read.  Returns how many were read. */
int box_escape_digits(const char *s, size_t n, size_t *i, int max, int base, unsigned *v);
/* ANSI-C $'…' decoding of text between the quotes. */
char *box_ansi_c(const char *s, size_t n, size_t *consumed);
/* Arithmetic (arith.c).  False after printing an error. */
bool box_arith(Shell *sh, const char *expr, int64_t *out);
/* v in decimal, written into buf (at least 24 bytes); returns the start
 * of the digits inside buf.  Arithmetic results are formatted per
 * command, and printf's machinery costs more than the expression. */
char *box_i64_str(int64_t v, char *buf);
/* Quotes s so the Shell reads it back as one word (for xtrace, find -exec,
 * xargs, declare -p …).  g_malloc'd. */
char *box_quote(const char *s);
/* s in single quotes always, a quote inside as '\'' (bash's sh_single_quote). */
char *box_single_quote(const char *s);
/* text appended to g with each '&' as amp and "\&" as '&' (history's :s,
 * compgen's -X). */
void box_append_amp(GString *g, const char *text, const char *amp);

/* ---- commands (commands/registry.c) --------------------------------------- */

typedef struct {
  Shell *sh;
  int argc;
  char **argv;
  int in, out_fd, err; /* after redirections; -1 when closed */
  BoxOut *out;         /* buffered stdout on out_fd */
} BoxCmd;

typedef int (*BoxCmdFn)(BoxCmd *c);

/* The KIND column of commands/commands.def. */
typedef enum {
  BOX_CMD_SPECIAL, /* a POSIX special builtin */
  BOX_CMD_BUILTIN, /* another builtin of the shell language */
  BOX_CMD_UTILITY, /* a program the Shell implements itself */
} BoxCmdKind;

typedef struct {
  const char *name;
  BoxCmdFn fn;
  BoxCmdKind kind;
} BoxCommandDef;

/* The commands, declared from the one table (registry.c looks them up). */
#define BOX_COMMAND(name, fn, kind) int fn(BoxCmd *c);
#include "shell/commands/commands.def"
#undef BOX_COMMAND

/* A program `hash` remembers: how often it ran since, and its file. */
typedef struct {
  int hits;
  char path[];
} BoxHashed;

/* lookup.c: what a first word names.  A function (NULL: none); the
 * function, else the implemented command, name names (skip_funcs: as
 * `command` looks, past functions); the same for a simple command's node,
 * whose literal first word's answer the node keeps; a program's file on
 * the Shell's PATH as the Shell's own view has it (system directories
 * aside), or, that failing, as the host would run it; newly allocated,
 * or NULL. */
Node *box_lookup_function(Shell *sh, const char *name);
void box_lookup_first_word(Shell *sh, const char *name, bool skip_funcs, Node **fn,
                           const BoxCommandDef **def);
void box_lookup_simple(Shell *sh, Node *simple, const char *name, bool literal, Node **fn,
                       const BoxCommandDef **def);
char *box_lookup_in_view(Shell *sh, const char *name);
/* Why a path word the view holds cannot run, as execve would say it
 * (EISDIR, EACCES: no execute bit), or 0. */
int box_lookup_why_not(Shell *sh, const char *path);
char *box_lookup_program(Shell *sh, const char *name);
/* path (absolute, or against the Shell's cwd) lies in the host's system
 * tree, which the Shell's view does not hold. */
bool box_lookup_in_system_tree(Shell *sh, const char *path);
/* `hash`'s table: name remembered at path (hits 0); a bare name run,
 * counted as bash counts it (found: its file, when the Shell knows it). */
BoxHashed *box_lookup_remember(Shell *sh, const char *name, const char *path);
void box_lookup_ran(Shell *sh, const char *name, const char *found);
/* name's entry in that table with its file known, or NULL. */
const BoxHashed *box_lookup_hashed(Shell *sh, const char *name);

/* name's row of commands.def, or NULL when the Shell does not implement it. */
const BoxCommandDef *box_command_lookup(const char *name);
/* The rows of commands.def, in order; *n of them. */
const BoxCommandDef *box_command_rows(size_t *n);
/* bash's special builtins (POSIX): found before functions. */
bool box_is_special_builtin(const char *name);
/* A builtin of the shell language, special or not (not a utility). */
bool box_is_builtin(const char *name);

/* The longest text a run takes (shell.c): a longer one is refused. */
#define BOX_MAX_INPUT BOX_SHELL_MAX_INPUT
/* How deep constructs may nest in one text (parser.c: `{ { {`, `$( $(`,
 * `${x:-${`, `[[ ( (`) and in one arithmetic expression (arith.c); far
 * beyond what a script writes, far below what the stack holds. */
#define BOX_MAX_NEST 256
/* How deep ., sh and $(…) may run text within text (exec.c): 64, the
 * spec's max_depth; each level of sh and $(…) is a process. */
#define BOX_MAX_RECURSION 64
/* True when this thread's stack is nearly used up: recursion no count
 * bounds (eval of eval, a function's $(…)) stops here with an error
 * instead of running into the guard page.  Inline: box_eval asks it at
 * every step.  The floor is found once per thread (shell.c). */
extern __thread uintptr_t box_stack_floor;
uintptr_t box_stack_floor_find(void);
static inline bool box_stack_low(void)
{
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  if (G_UNLIKELY(!box_stack_floor)) box_stack_floor = box_stack_floor_find();
  return here < box_stack_floor;
}
/* Whether a pattern or regular expression nests `(` deeper than
 * BOX_MAX_NEST (expand.c): glibc's fnmatch (extglob) and regcomp recurse
 * once per level, and 20,000 levels end the process. */
bool box_pattern_too_deep(const char *pat);

/* Index just past the `close` (one of ) } " `) that ends the construct
 * t[0..n) starts inside of, or n: the expander's own scan (expand.c). */
size_t box_scan_closing(const char *t, size_t n, char close);

/* fnmatch(3), the same answers in less time for ASCII text (expand.c). */
int box_fnmatch(const char *pattern, const char *s, int flags);
/* fnmatch(3) character by character over UTF-8 (pattern.c), with only
 * FNM_PERIOD, FNM_CASEFOLD and FNM_EXTMATCH. */
int box_utf8_fnmatch(const char *pattern, const char *s, int flags);
/* Whether an extglob group in pattern is never closed (pattern.c), which
 * bash reads otherwise than glibc's fnmatch. */
bool box_ext_unclosed(const char *pattern);

/* Prints "<prefix>: <name>: <text>" for a failed file operation: the
 * policy's text after EACCES when the host has it, else strerror(err). */
void box_file_error(BoxCmd *c, const char *prefix, const char *name, int err);
/* The text for err: the host's last denial for EACCES, else strerror. */
char *box_error_text(Shell *sh, int err);
/* Opens a file for a command (open(2) only, never stat).  /dev/stdin,
 * /dev/stdout, /dev/stderr and /dev/fd/N name the Shell's descriptors
 * (process substitution hands out /dev/fd/N). */
int box_open_file(const char *path, int flags);
/* The fast path alone, for a program embedded in a command's child
 * (python3's open()): a descriptor, or -1 with errno and, for EACCES,
 * *denial the policy's text (g_malloc'd), or -2 when the fast path did
 * not take path (the caller opens it through the mount).  The caller
 * serializes calls. */
int box_open_fast(const char *path, int flags, char **denial);
/* stat(2) of a file a command names, those descriptors' paths included. */
int box_stat_file(const char *path, struct stat *st);
/* The fast path, in batches: asks the host to decide and open these files
 * for reading now (a directory's files at once); box_open_file(path,
 * O_RDONLY) then takes each descriptor.  box_prefetch_drop closes what was
 * not taken.  Without a host that offers it, nothing happens. */
#define BOX_PREFETCH_MAX 32
void box_prefetch_open(const char *const *paths, int n);
/* The same for the files to read after those, asked for now and answered
 * when one is next looked up, so that the host decides them while the
 * command reads: at most one such request is outstanding.  False when the
 * host cannot (nothing was asked). */
bool box_prefetch_ahead(const char *const *paths, int n);
void box_prefetch_drop(void);
/* A directory's getdents64 records through the host's fast path: true
 * when it took the path, with *records (g_malloc'd, *len bytes) or, NULL,
 * *err set (a refusal's policy text kept for the message that follows).
 * prefix non-NULL and open_first > 0: its leading regular files (up to
 * open_first, up to the first entry of another type) are decided and
 * opened with it, kept for box_open_file under prefix/name ("" for the
 * bare name); *opened says how many were asked for. */
bool box_list_fast(const char *path, const char *prefix, int open_first, char **records,
                   size_t *len, int *err, int *opened);
/* box_list_fast's request for the directory a walk lists next, sent now
 * (after everything asked for so far, so decided after it) and answered
 * when box_list_fast asks for the same; one at a time.  false when not
 * sent.  box_list_ahead_drop takes in and drops one left unasked. */
bool box_list_ahead(const char *path, const char *prefix, int open_first);
void box_list_ahead_drop(void);
/* The host's fast path for new files (BoxShellHost.create_write): false
 * when there is none (n = 0 only asks).  Relative paths are the kernel's
 * cwd's. */
#define BOX_CREATE_FAST_MAX 64
bool box_create_fast(const char *const *paths, const mode_t *modes, int n, int *fds, int *errs);
/* Parses an exit-status-like integer; false when not a number. */
bool box_parse_int(const char *s, long *out);

/* ---- running text and argv: the one decision point ---------------------------
 *
 * Every route that runs text or a command line goes through these, so each
 * command it runs raises its own shell:exec / shell:spawn decision:
 *   - box_run_argv: runs one already-split command line (find -exec, xargs,
 *     Lua os.execute with a list) exactly as a simple command: function,
 *     builtin or command → shell:exec, else shell:spawn.  in/out/err are the
 *     descriptors it sees.  Returns its status (127 not found, 126 denied).
 *   - box_run_text: parses and runs shell text (eval, Lua io.popen /
 *     os.execute with a string) in the current Shell, on in/out/err.
 *     Returns its status (2 on a syntax error).
 * Both are safe to call from any command; run them in a forked child if the
 * command must not see the Shell's state change (the Shell does not fork
 * for you). */
int box_run_argv(Shell *sh, char **argv, int in, int out, int err);
int box_run_text(Shell *sh, const char *text, int in, int out, int err);

/* ---- executor (exec.c) --------------------------------------------------- */

int box_eval(Shell *sh, Node *n);
/* Runs a function body with args as $1… (argv[0] is the function name). */
int box_call_function(Shell *sh, Node *fn, int argc, char **argv);

/* exec.c's steps of running a simple command, for script.c: the literal
 * flags of av, the shell:exec decision, a builtin run, the command's
 * assignments made temporary, and argv run as a command. */
const bool *box_exec_literal_for(Shell *sh, char **av, int argc, bool **owned);
bool box_exec_decide(Shell *sh, char **av, int argc, const char *program);
/* decide.c: the command line as one string (g_free); the host's view of a
 * command about to run (line: its text, the caller's; *owned what
 * box_exec_literal_for allocated, g_free); n's decision, or the answer a
 * pipeline's parent asked for it before the fork. */
char *box_exec_join_line(char **av, int argc);
void box_exec_command_for_host(Shell *sh, BoxShellCommand *cmd, char *line, char **av, int argc,
                               const char *program, const char *cwd, bool **owned);
bool box_exec_decide_simple(Shell *sh, const struct Node *n, char **av, int argc);
int box_exec_run_builtin(Shell *sh, const BoxCommandDef *def, int argc, char **av);
GArray *box_exec_temp_assign(Shell *sh, Word **as, size_t na, int *status);
int box_exec_run_argv(Shell *sh, int argc, char **av, Word **as, size_t na, bool skip_funcs);
/* n, a pipeline's first stage that changes nothing of the shell (jobs.c
 * says which), run by this shell in place of the child it would fork: an
 * exit, errexit or fatal error ends the stage, not the shell, and $?, $_,
 * $LINENO and $BASH_COMMAND stay as a child's run leaves them.  The
 * pipeline sets PIPESTATUS after it. */
int box_exec_stage_here(Shell *sh, struct Node *n);
/* The simple command whose shell:exec a child forked to run c asks before
 * it does anything else, when that is known before the fork; else NULL. */
struct Node *box_exec_first_decision(Shell *sh, struct Node *c);
/* The shell:exec of each of the n simple commands ns (as
 * box_exec_first_decision found them), asked in one round, in order. */
void box_exec_decide_ahead(Shell *sh, struct Node *const *ns, size_t n, bool *permit,
                           char **messages);
/* script.c: av, whose file is path, run as the script it is; false if it
 * is none the Shell runs itself. */
bool box_run_script(Shell *sh, const char *path, int argc, char **av, Word **as, size_t na,
                    int *status);
/* script.c: av run as the Shell's python3 when its path word names the
 * host's python3.11 through the view's symlinks (a virtualenv's
 * bin/python), with that path as its sys.executable; false if not. */
bool box_run_linked_python(Shell *sh, int argc, char **av, Word **as, size_t na, int *status);
/* Whether the absolute path is a chain of symlinks ending at the host's
 * /usr/bin/python3 (or python3.11, python), which the view does not hold. */
bool box_links_to_host_python(const char *path);
/* A function's definition laid out as bash prints it (print.c). */
char *box_function_text(Node *fn);
/* A command on one line, as `jobs` shows it. */
char *box_command_text(Node *n);
/* Runs a whole text in this shell (eval, ., trap); name for messages. */
int box_eval_text(Shell *sh, const char *text, const char *name);
/* A new shell's whole text (sh FILE, sh -c TEXT): a syntax error's
 * status as bash's own text has it. */
int box_eval_script(Shell *sh, const char *text, const char *name);
/* The same, lines numbered from line. */
int box_eval_text_at(Shell *sh, const char *text, const char *name, int line);
void box_wait_background(Shell *sh);
int box_wait_pid(pid_t pid);
int box_wait_foreground(Shell *sh, pid_t pid);
/* Ends this process (a forked child) after its EXIT trap. */
G_NORETURN void box_child_exit(Shell *sh, int status);
/* Runs the EXIT trap once. */
void box_run_exit_trap(Shell *sh);
/* Checks the time limit; prints and sets J_EXIT when exceeded. */
bool box_check_limits(Shell *sh);
/* Forks with the signal state a child needs.  0 in the child. */
pid_t box_fork(Shell *sh);
/* A worker is PID 1 of its namespace and shows another number as $$
 * (box_shell_set_shown_pid): the number shown for a PID, and the PID
 * meant by a number given to kill or wait. */
pid_t box_pid_shown(pid_t pid);
pid_t box_pid_meant(pid_t pid);
/* In the child of a pipeline's stage or a & job, before it runs n. */
void box_child_simple(Shell *sh, const struct Node *n);
/* n's words or assignments failed to expand, fatally. */
void box_child_words_failed(Shell *sh, const struct Node *n);

/* ---- processes and signals (jobs.c) ---------------------------------------- */

/* The job a job spec names (%N, % %% %+ the current one, %- the one
 * before, %WORD the one whose command starts with WORD, %?WORD the one
 * whose command holds it), or NULL. */
BoxJob *box_job_by_spec(Shell *sh, const char *spec);

/* A trapped signal arrived and its trap has not run: read at every step of
 * the evaluator, so a flag and not a call. */
extern volatile sig_atomic_t box_any_pending;
void box_run_pending_traps(Shell *sh);
/* Runs a trap's text; $? and a pending break/return survive it. */
void box_run_trap_text(Shell *sh, const char *text);
/* bash's DEBUG trap before n (a simple command, (( )) or [[ ]]; others are
 * passed by); false when the trap ended the shell */
bool box_debug_trap(Shell *sh, const struct Node *n);
/* $BASH_COMMAND's value (NULL before the first command). */
const char *box_bash_command(Shell *sh);
void box_trap_install(Shell *sh, int sig);
void box_signals_as_init(Shell *sh, bool init);
/* At the Shell's start: its SIGPIPE handling, and an init's (jobs.c). */
void box_signals_init(Shell *sh);
/* Set while a program the Shell implements runs (not a builtin): a SIGPIPE
 * then sets box_pipe_broke instead of ending the Shell. */
extern volatile sig_atomic_t box_in_utility, box_pipe_broke;
/* timed.c: `time PIPELINE`, its times on stderr after it */
int box_eval_timed(Shell *sh, Node *n);
int box_run_pipe(Shell *sh, Node *n);
void box_set_pipestatus1(Shell *sh, int status);
int box_run_background(Shell *sh, Node *n);

/* ---- redirections (redir.c) ------------------------------------------------ */

/* The descriptor table before a command's redirections, and the
 * descriptors they opened (closed when it is put back).  The tables
 * saved and not yet put back are a stack (Shell.saved): a descriptor
 * one of them holds is not closed by `exec N>&-`. */
typedef struct BoxSaved {
  int fd[BOX_NFD];
  int nfd;                        /* fd[0…nfd) saved: the shell's fd_high then */
  uint64_t touched[BOX_NFD / 64]; /* the slots its redirections named: put back */
  uint64_t copies[BOX_NFD / 64];  /* slots holding what one of those held (redir.c take_slot) */
  int opened[64];
  int nopened;
  struct BoxSaved *up;
} BoxSaved;
void box_saved_begin(Shell *sh, BoxSaved *s);
void box_saved_restore(Shell *sh, BoxSaved *s);
/* Off the stack without putting the table back: `exec`'s redirections stay. */
void box_saved_keep(Shell *sh, BoxSaved *s);
/* Slot is one the table puts back (s NULL: nothing). */
void box_saved_touch(BoxSaved *s, int slot);
/* An expansion that failed ends the shell as bash's does (its status from
 * st), or only drops the command when the failure said so. */
int box_expansion_failed(Shell *sh, int st);
/* shell.c: runs p's commands until its text ends (true) or the run must
 * end (false: exit, or a syntax error), *status the last one's; with
 * until_history, stops (true) after the command that set -o history. */
bool box_run_commands(Shell *sh, Parser *p, int *status, bool until_history);
/* history.c: the command history.  box_history_run reads text a line at
 * a time from line on (expanded under set -H, kept, run as it makes whole
 * commands) and returns false when the run must end.  add keeps a line
 * if HISTCONTROL and HISTIGNORE let it (true when it did); push always;
 * the list's lines are numbered from base.  expand: 0 nothing to expand,
 * 1 *out is the line expanded, 2 the same under :p (print, do not run),
 * -1 *error says what failed (both g_free'd by the caller). */
bool box_history_run(Shell *sh, const char *text, int line, int *status);
void box_history_free(Shell *sh);
guint box_history_len(Shell *sh);
long box_history_base(Shell *sh);
const char *box_history_at(Shell *sh, guint i);
void box_history_clear(Shell *sh);
void box_history_delete(Shell *sh, guint i);
guint box_history_written(Shell *sh);
/* Whether the line running now went into the list. */
bool box_history_current_saved(Shell *sh);
/* The line running now is no longer the list's last (fc ran it again). */
void box_history_forget_current(Shell *sh);
void box_history_set_written(Shell *sh, guint n);
bool box_history_add(Shell *sh, const char *line);
void box_history_push(Shell *sh, const char *line);
void box_history_replace_last(Shell *sh, const char *line);
GPtrArray *box_history_words(const char *line);
int box_history_expand(Shell *sh, const char *line, char **out, char **error);
/* commands/complete.c: frees complete's table. */
void box_comp_table_free(BoxCompTable *t);
/* commands/dirs.c: ~N, ~+N, ~-N's directory of the stack, or NULL. */
char *box_dirstack_tilde(Shell *sh, const char *spec);
/* vars.c: makes the variables bash -c starts with that the Shell makes
 * only when a script looks (the call stack's arrays, BASH_VERSINFO,
 * SHELLOPTS…); a listing of variables calls it first. */
void box_vars_materialize(Shell *sh);
/* commands/set.c: SHELLOPTS and BASHOPTS from the options now on (once
 * box_vars_materialize has made them). */
void box_optvars_refresh(Shell *sh);
void box_globignore_sync(Shell *sh, bool assigned);
void box_globignore_free(Shell *sh);
bool box_shopt_globskipdots(Shell *sh);
/* callstack.c: the frames behind FUNCNAME, BASH_SOURCE and BASH_LINENO.
 * push adds a function's call (function true), a sourced file ("source")
 * or a script's main ("main", line 0); pop takes the innermost off, reset
 * all.  box_callstack_source is the file running now ("environment" for
 * -c text), box_callstack_frame the k-th frame out (NULL past the last),
 * box_callstack_function the innermost function's name (NULL: none). */
typedef struct {
  char *name;
  char *source;
  long line;
  bool function;
} BoxCall;
void box_callstack_materialize(Shell *sh);
void box_callstack_free(Shell *sh);
/* A function's scope of local variables (vars.c). */
void box_frame_push(Shell *sh);
void box_frame_pop(Shell *sh);
void box_callstack_push(Shell *sh, const char *name, const char *source, long line, bool function);
void box_callstack_pop(Shell *sh);
void box_callstack_reset(Shell *sh);
const char *box_callstack_source(Shell *sh);
const BoxCall *box_callstack_frame(Shell *sh, guint k);
const char *box_callstack_function(Shell *sh);
/* debug_trap.c: a function call hides the caller's ERR trap unless
 * errtrace, its RETURN and DEBUG traps unless functrace (returns the trap
 * to give back, or NULL); box_trap_unhide gives it back unless the body
 * set one.  box_note_command notes n as $BASH_COMMAND; box_debug_run runs
 * the DEBUG trap before a command of text (NULL: keep $BASH_COMMAND) at
 * line, false when it ended the shell. */
char *box_trap_hide(Shell *sh, int trap, unsigned keep_opt);
void box_trap_unhide(Shell *sh, int trap, char *saved);
void box_note_command(Shell *sh, const Node *n);
bool box_debug_run(Shell *sh, long line, const char *text);
/* assign.c: one assignment word (NAME=value, NAME+=value, NAME[k]=value,
 * NAME=(…)), local to the current function when local; false when it
 * failed (*status then says how: 1, or a fatal expansion's). */
bool box_assign_word(Shell *sh, const char *text, bool local, int *status);
const char *box_assign_eq(const char *text);
/* NAME+=value with value expanded (assign.c). */
bool box_var_append(Shell *sh, const char *name, const char *value);
/* sv NULL: what they open stays open (exec with only redirections). */
bool box_apply_redirs(Shell *sh, const Redir *rs, size_t n, BoxSaved *sv);

/* ---- [[ ]] (cond.c) --------------------------------------------------------- */

/* The truth of c; *err set on an error: the status [[ ]] ends with (1 an
 * arithmetic error, 2 a bad regex), or'd with BOX_COND_FATAL when a word's
 * expansion failed, which ends the shell as any expansion error does. */
int box_cond_eval(Shell *sh, Cond *c, int *err);
#define BOX_COND_FATAL 0x100

/* ---- what the commands share (one file each in commands/) ----------------- */

/* commands/python_dl.c: keep the embedded CPython's directories open for
 * the workers (idempotent); run it in this process (-1 and *error when it
 * cannot be loaded). */
bool box_python_prepare(void);
/* commands/python.c: whether a program name is the Shell's python3
 * (python3, python, python3.11). */
bool box_is_python_name(const char *name);
/* After box_python_prepare, in the zygote: an interpreter initialized now,
 * that every `python3` of the workers forked after starts from. */
void box_python_warm_up(bool usr_bare);
/* commands/hostdir.c: a read-only detached copy of the host's directory
 * dir, for workers to load files from once rooted in the mount (-1 when
 * the kernel refuses). */
int box_host_dir_open(const char *dir);
int box_python_run(BoxCmd *c, int argc, char **argv, char **error);
/* commands/python_dl.c: notes the egress gateway boxd gave this worker
 * (its environment), before the command's child replaces that
 * environment with the Shell's exports. */
void box_python_note_gateway(void);
/* commands/interp.c: runs body(c) in a child on the command's descriptors
 * 0, 1, 2 with the environment a spawned program gets; its status. */
int box_cmd_in_child(BoxCmd *c, int (*body)(BoxCmd *c));
/* The same in this process, for a command nothing of the text follows. */
int box_cmd_in_place(BoxCmd *c, int (*body)(BoxCmd *c));
/* The same, the Shell calling serve(c, pid) while the child runs (until
 * it returns; it reaps nothing of pid). */
int box_cmd_in_child_serving(BoxCmd *c, int (*body)(BoxCmd *c),
                             void (*serve)(BoxCmd *c, pid_t pid));

/* Helpers builtins share (builtins.c). */
/* Prints "strands-shell: NAME: text" on the command's stderr. */
void box_cmd_error(BoxCmd *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* declare/typeset/local/export/readonly share one implementation. */
int box_declare(BoxCmd *c, const char *who, unsigned force_flags, bool local);
/* `local` with no names: the calling function's locals, as declare -p
 * prints them, by name (as bash's). */
int box_declare_list_locals(BoxCmd *c);
/* test / [ evaluation on argv (without the command name). */
int box_test_eval(Shell *sh, int argc, char **argv, int err_fd);
/* Unary file/string tests shared with [[ ]]; -1 when op is unknown. */
int box_test_unary(Shell *sh, const char *op, const char *arg);
int box_test_binary(Shell *sh, const char *a, const char *op, const char *b, int err_fd);
/* printf formatting into a GString (used by printf -v). */
int box_printf_format(Shell *sh, GString *out, int argc, char **argv, int err_fd);

#endif
