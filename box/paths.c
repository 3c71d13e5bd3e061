/* paths.c — what `box run`, `box mount` and the config checks all ask of a
 * path, and the one way the box CLI reports a fatal error. */
#include "box/box-private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int box_fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fprintf(stderr, "box: error: %s\n", msg);
  return 1;
}

char *box_canonical_path(const char *path)
{
  char *r = realpath(path, NULL);
  char *out = r ? g_strdup(r) : NULL;
  free(r);
  return out;
}

bool box_path_within(const char *path, const char *dir)
{
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  if (n == 1 && dir[0] == '/')
    return true;
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
