/* bench_args.h — the option loop the bench wrappers share: options, then
 * "--", then the program to run under the mount. */
#ifndef BOX_BENCH_ARGS_H
#define BOX_BENCH_ARGS_H

#include <stdbool.h>
#include <string.h>

/* argv[*i] is "--": *i moves to the program's first word. */
static inline bool bench_args_end(char **argv, int *i)
{
  if (strcmp(argv[*i], "--") != 0) return false;
  ++*i;
  return true;
}

/* argv[*i] is option name and a value follows: returns the value, *i on it. */
static inline const char *bench_arg(int argc, char **argv, int *i, const char *name)
{
  if (strcmp(argv[*i], name) != 0 || *i + 1 >= argc) return NULL;
  return argv[++*i];
}

#endif
