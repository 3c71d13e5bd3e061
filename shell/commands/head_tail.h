/* head_tail.h — what head and tail share: their options, the count, and
 * the walk over the files with GNU's "==> NAME <==" headers. */
#ifndef BOX_SHELL_COMMANDS_HEAD_TAIL_H
#define BOX_SHELL_COMMANDS_HEAD_TAIL_H

#include "shell/commands/util.h"

typedef struct {
  bool bytes;           /* -c: the count is of bytes, not records */
  bool flipped;         /* head -n -N (all but the last N), tail -n +N (from the Nth on) */
  unsigned long long n;
  char delim;           /* '\n', or '\0' with -z */
} BxEnds;

/* Copies one opened input to c->out as the command does; false with errno
 * on a read error. */
typedef bool (*BxEndsFn)(BoxCmd *c, int fd, const BxEnds *o);

/* The command after its obsolete -NUM first argument: argv[1] dropped when
 * skip_first, then the options (shortopts: head's or tail's; letters beyond
 * n, c, q, v, z are accepted and ignored), count (the obsolete one, or NULL)
 * read with flip as bx_parse_count's, and each file operand through fn.
 * verbose: 1 from -v, 0 from -q, -1 when neither was given.  A failed
 * write to the output stops the walk only when stop_on_out_error.  Returns
 * the exit status. */
int bx_ends_run(BoxCmd *c, const char *cmd, const char *shortopts, bool skip_first, BxEnds o, int verbose,
                const char *count, char flip, bool stop_on_out_error, BxEndsFn fn);

#endif
