/* builtins.h — helpers the builtins of shell/commands/ share (box_cmd_error
 * itself is in shell-private.h, for the Shell's own messages too). */
#ifndef BOX_SHELL_COMMANDS_BUILTINS_H
#define BOX_SHELL_COMMANDS_BUILTINS_H

#include "shell/shell-private.h"

/* bash's answer to an unknown option letter: "-X: invalid option", then
 * usage ("NAME: usage: NAME …") on its own line.  Returns 2, the status. */
int bx_bad_option(BoxCmd *c, char opt, const char *usage);
/* The value of the option at *p (a letter of argv[*i]): the rest of the
 * word, else the next word (*i moves on to it); NULL after bash's
 * "requires an argument" and the usage. */
const char *bx_option_value(BoxCmd *c, const char *p, int *i, const char *usage);
/* Where the operands of a builtin that takes no option start (bash's
 * no_options): past a first "--"; a first word "-X" is bx_bad_option's
 * message and -1 (the status is 2). */
int bx_no_options(BoxCmd *c, const char *usage);
/* exit's and return's [n]: $? when absent, else n's low 8 bits, or 2 after
 * "N: numeric argument required".  When only_one, more operands after a
 * number are "too many arguments", which ends the shell with 1 as in bash:
 * false, and the caller returns 1. */
bool bx_status_operand(BoxCmd *c, bool only_one, int *st);
/* type.c: prints what name runs as (mode 't' type -t, 'v' command -v,
 * 'V' type's sentence), skip_funcs as `command` looks; whether it is
 * anything. */
int box_type_one(BoxCmd *c, const char *name, char mode, bool skip_funcs);
/* command.c: runs argv as `command` does, a function of its name passed by. */
int bx_run_past_functions(BoxCmd *c, char **argv);
/* set -o's options, which shopt -o shares: NAME's row, or -1. */
int box_set_option(const char *name);
/* Whether row is on; printed first to show (set -o's line, set +o's when
 * plus) unless show is NULL. */
bool box_set_option_get(Shell *sh, int row, BoxCmd *show, bool plus);
void box_set_option_change(Shell *sh, int row, bool on);
/* declare.c: an array's =(…) as declare -p and set show it. */
void box_declare_print_array(BoxOut *o, ShellVar *v);
/* The row of set's option LETTER (set -e's 'e'), or -1. */
int box_set_option_letter(char letter);
/* shopt's NAME: whether bash has it; sets it (nothing when unknown). */
bool box_shopt_known(const char *name);
void box_shopt_set(Shell *sh, const char *name, bool on);
/* alias.c: an alias's value as `alias` prints it, always quoted. */
char *box_alias_quote(const char *val);
/* shopt's names that are on, joined by ':' (BASHOPTS); all of them. */
GString *box_shopt_on_names(Shell *sh);
GString *box_shopt_all_names(void);
/* complete.c: a completion specification, as complete and compgen take
 * one.  box_comp_parse reads the options (complete's -p -r -D -E -I into
 * *flags when complete) and returns the index of the first name, or -1
 * (a bad -o or -A name) or -2 (a bad option, its usage shown): status 2
 * either way. */
typedef struct {
  unsigned actions; /* bits of complete.c's actions table */
  unsigned options; /* bits of its -o names */
  char *globpat, *words, *prefix, *suffix, *filterpat, *command, *funcname;
} BoxCompSpec;
enum {
  BOX_COMP_PRINT = 1,
  BOX_COMP_REMOVE = 2,
  BOX_COMP_DEFAULT = 4,
  BOX_COMP_EMPTY = 8,
  BOX_COMP_INITIAL = 16
};
int box_comp_parse(BoxCmd *c, const char *usage, bool complete, BoxCompSpec *s, unsigned *flags);
void box_comp_spec_clear(BoxCompSpec *s);
/* set -o's listing (set +o's when plus) of all, or only: 1 those on, -1 off. */
void box_set_list(BoxCmd *c, bool plus, int only);

#endif
