/* find.h — what find.c (the walk, the tests and actions) and find_parse.c
 * (the expression parser) share: the expression's tree and the run's state. */
#ifndef BOX_SHELL_COMMANDS_FIND_H
#define BOX_SHELL_COMMANDS_FIND_H

#include <regex.h>
#include <sys/stat.h>
#include <time.h>

#include "shell/commands/commands-private.h"

typedef enum {
  F_AND,
  F_OR,
  F_NOT,
  F_COMMA,
  T_NAME,
  T_INAME,
  T_PATH,
  T_IPATH,
  T_REGEX,
  T_TYPE,
  T_XTYPE,
  T_SIZE,
  T_TIME,
  T_NEWER,
  T_PERM,
  T_EMPTY,
  T_TRUE,
  T_FALSE,
  T_USER,
  T_GROUP,
  T_UID,
  T_GID,
  T_LINKS,
  T_INUM,
  T_READABLE,
  T_WRITABLE,
  T_EXECUTABLE,
  T_NOUSER,
  T_NOGROUP,
  T_SAMEFILE,
  A_PRINT,
  A_PRINT0,
  A_PRINTF,
  A_EXEC,
  A_DELETE,
  A_PRUNE,
  A_QUIT,
  A_LS,
} Kind;

typedef struct FNode FNode;
struct FNode {
  Kind kind;
  FNode *l, *r;
  char *s;        /* pattern / format / type letters */
  int cmp;        /* -1 less, 0 exact, 1 greater */
  long long num;  /* size units, days, … */
  long long unit; /* size: bytes per unit; time: seconds per unit */
  char which;     /* time: 'm' 'a' 'c' */
  struct timespec ref;
  mode_t mode;
  int perm_kind; /* 0 exact, '-' all, '/' any */
  regex_t re;
  bool re_ok;
  /* exec */
  char **argv;
  int argc;
  bool plus, dir, ok;
  GPtrArray *batch; /* {} + : collected paths */
  size_t batch_bytes;
  char *batch_dir;
  dev_t dev;
  ino_t ino;
};

typedef struct {
  BoxCmd *c;
  FNode *expr;
  int maxdepth, mindepth;
  bool depth_first, follow, follow_args, quit, has_action;
  int status;
  time_t now;
  bool daystart;
  GPtrArray *execs; /* FNode* with plus */
} Find;

/* Parses the expression av[0..ac) into f->expr, with -print after it when
 * it has no action; false after find's message. */
bool bx_find_parse(Find *f, char **av, int ac);
/* Frees what the parse made (the -exec … + nodes too). */
void bx_find_clear(Find *f);

#endif
