/* path.c — component-bounded containment and the `~` spelling (path.h). */
#include "policy/path.h"

#include <glib.h>
#include <string.h>

/* dir's length without its trailing slashes ("/" keeps its one). */
static size_t dir_len(const char *dir)
{
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  return n;
}

bool box_path_within_len(const char *path, size_t n, const char *dir)
{
  size_t dl = dir_len(dir);
  if (dl == 1 && dir[0] == '/') return n >= 1 && path[0] == '/';
  return n >= dl && memcmp(path, dir, dl) == 0 && (n == dl || path[dl] == '/');
}

bool box_path_within(const char *path, const char *dir)
{
  return box_path_within_len(path, strlen(path), dir);
}

char *box_path_tilde_len(const char *path, size_t n, const char *home)
{
  if (!home || home[0] != '/' || !box_path_within_len(path, n, home)) return NULL;
  size_t hl = dir_len(home);
  if (hl == 1) hl = 0; /* "/": the rest starts at the root's own slash */
  size_t end = n;
  while (end > hl && path[end - 1] == '/') end--;
  const char *rest = path + hl;
  size_t rl = end - hl;
  while (rl && *rest == '/') {
    rest++;
    rl--;
  }
  if (rl == 0) return g_strdup("~");
  return g_strdup_printf("~/%.*s", (int)rl, rest);
}

char *box_path_tilde(const char *path, const char *home)
{
  return box_path_tilde_len(path, strlen(path), home);
}

char *box_path_spell(const char *path, const char *home)
{
  char *tilde = home && strcmp(home, "/") != 0 ? box_path_tilde(path, home) : NULL;
  return tilde ? tilde : g_strdup(path);
}
