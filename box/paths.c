/* paths.c — what `box run`, `box mount` and the config checks all ask of a
 * path. */
#include "box/box-private.h"

#include <stdlib.h>
#include <string.h>

char *box_canonical_path(const char *path)
{
  char *r = realpath(path, NULL);
  char *out = r ? g_strdup(r) : NULL;
  free(r);
  return out;
}

char *box_sibling_binary(const char *name)
{
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  if (!self) return NULL;
  g_autofree char *dir = g_path_get_dirname(self);
  const char *candidates[] = { ".", "../alias", "../box", "../libexec/boxfs", NULL };
  for (int i = 0; candidates[i]; i++) {
    g_autofree char *p = g_build_filename(dir, candidates[i], name, NULL);
    if (access(p, X_OK) == 0) return box_canonical_path(p);
  }
  return NULL;
}

/* The agent and its tools see the bound roots as the host's directories
 * and /tmp as the command's RAM /tmp (README, "Programs"). */
BoxPlace boxd_place_of(Boxd *d, const char *path)
{
  for (char **r = d->roots; path && r && *r; r++)
    if (box_path_within(path, *r)) return BOX_PLACE_ROOT;
  if (path && box_path_within(path, "/tmp") && strcmp(path, "/tmp") != 0) return BOX_PLACE_TMP;
  return BOX_PLACE_ELSEWHERE;
}
