/* head_tail.h — what head and tail share: their options, the count, and
 * the walk over the files with GNU's "==> NAME <==" headers. */
#ifndef BOX_SHELL_COMMANDS_HEAD_TAIL_H
#define BOX_SHELL_COMMANDS_HEAD_TAIL_H

#include "shell/commands/commands-private.h"

typedef struct {
  bool bytes;   /* -c: the count is of bytes, not records */
  bool flipped; /* head -n -N (all but the last N), tail -n +N (from the Nth on) */
  unsigned long long n;
  char delim; /* '\n', or '\0' with -z */
} BxEnds;

/* Copies one opened input to c->out as the command does; false with errno
 * on a read error. */
typedef bool (*BxEndsFn)(BoxCmd *c, int fd, const BxEnds *o);

/* What sets head and tail apart. */
typedef struct {
  const char *name;
  const char *shortopts;  /* letters beyond n, c, q, v, z are accepted and ignored */
  char flip;              /* the count's sign that changes its meaning: head's '-', tail's '+' */
  bool stop_on_out_error; /* a failed write to the output ends the walk over the files */
  BxEndsFn copy;          /* the count as given: the first N, the last N */
  BxEndsFn copy_flipped;  /* the count flipped: all but the last N, from the Nth on */
} BxEndsCmd;

/* The whole command: the obsolete first argument (head's -NUM[clqv…],
 * tail's -NUM or +NUM[cl]), the options, the count, then each file operand
 * through cmd->copy (or copy_flipped) with GNU's headers and messages.  Returns the exit
 * status. */
int bx_ends_main(BoxCmd *c, const BxEndsCmd *cmd);

/* c's arguments with the one at skip (0: none, the obsolete -NUM read
 * already) taken out, for getopt: *out is c with their count; its argv is
 * the caller's to set to the result (g_free it). */
char **bx_ends_argv_without(const BoxCmd *c, int skip, BoxCmd *out);

/* Appends the next read of fd (up to 64 KiB) to data: its length, 0 at
 * the end, -1 with errno on an error. */
ssize_t bx_ends_append(int fd, GString *data);

#endif
