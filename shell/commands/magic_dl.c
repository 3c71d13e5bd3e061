/* magic_dl.c — the functions file.c calls in libmagic, opened on demand,
 * and where its compiled database lies (see magic_dl.h). */
#define BOX_MAGIC_DL_IMPL 1
#include "shell/commands/magic_dl.h"

#include <dlfcn.h>
#include <string.h>

/* The first compiled database on libmagic's search path (MAGIC, else
 * its default), the one magic_load(m, NULL) would read. */
static char *database(void *lib)
{
  __typeof__(magic_getpath) *getpath;
  void *sym = dlsym(lib, "magic_getpath");
  if (!sym) return NULL;
  memcpy(&getpath, &sym, sizeof sym);
  const char *path = getpath(NULL, 0); /* 0: for loading */
  g_auto(GStrv) parts = g_strsplit(path ? path : "", ":", -1);
  for (char **p = parts; *p; p++) {
    char *mgc = g_str_has_suffix(*p, ".mgc") ? g_strdup(*p) : g_strconcat(*p, ".mgc", NULL);
    if (g_file_test(mgc, G_FILE_TEST_IS_REGULAR)) return mgc;
    g_free(mgc);
  }
  return NULL;
}

const BoxMagicApi *box_magic;
BOX_DL_DEFINE(box_magic_dl, BoxMagicApi, "libmagic.so.1", BOX_MAGIC_FUNCTIONS, BOX_DL_NONE,
              database);
