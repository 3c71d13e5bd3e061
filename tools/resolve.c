/* resolve.c — from a program word to the canonical file that runs. */
#include "tools/tools.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *canonical_executable(const char *path)
{
  char *real = realpath(path, NULL);
  if (!real)
    return NULL;
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISREG(st.st_mode) || access(real, X_OK) != 0) {
    free(real);
    return NULL;
  }
  char *out = g_strdup(real);
  free(real);
  return out;
}

char *box_tools_resolve(const char *word, const char *cwd, const char *search_path)
{
  if (!word || !*word)
    return NULL;
  if (strchr(word, '/')) {
    g_autofree char *joined = word[0] == '/' ? g_strdup(word) : g_build_filename(cwd, word, NULL);
    return canonical_executable(joined);
  }
  const char *path = search_path && *search_path ? search_path : "/usr/bin:/bin";
  g_auto(GStrv) dirs = g_strsplit(path, ":", -1);
  for (char **d = dirs; *d; d++) {
    /* An empty or relative PATH entry would resolve against boxd's own
     * directory, which the agent does not choose; skip it. */
    if ((*d)[0] != '/')
      continue;
    g_autofree char *candidate = g_build_filename(*d, word, NULL);
    char *found = canonical_executable(candidate);
    if (found)
      return found;
  }
  return NULL;
}

char *box_tools_spell_home(const char *path, const char *home)
{
  if (!home || !*home || strcmp(home, "/") == 0)
    return g_strdup(path);
  size_t n = strlen(home);
  while (n > 1 && home[n - 1] == '/')
    n--;
  if (strncmp(path, home, n) != 0)
    return g_strdup(path);
  if (path[n] == '\0')
    return g_strdup("~");
  if (path[n] != '/')
    return g_strdup(path);
  return g_strconcat("~", path + n, NULL);
}
