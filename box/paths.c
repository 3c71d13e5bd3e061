/* paths.c — what `box run`, `box mount` and the config checks all ask of a
 * path, and the one way the box CLI reports a fatal error. */
#include "box/boxd.h"

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
