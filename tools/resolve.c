/* resolve.c — from a program word to the canonical file that runs. */
#include "tools/tools-private.h"

#include <linux/magic.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

static char *canonical_executable(const char *path)
{
  char *real = realpath(path, NULL);
  if (!real) return NULL;
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
  if (!word || !*word) return NULL;
  if (strchr(word, '/')) {
    g_autofree char *joined = word[0] == '/' ? g_strdup(word) : g_build_filename(cwd, word, NULL);
    return canonical_executable(joined);
  }
  const char *path = search_path && *search_path ? search_path : "/usr/bin:/bin";
  g_auto(GStrv) dirs = g_strsplit(path, ":", -1);
  for (char **d = dirs; *d; d++) {
    /* An empty or relative PATH entry would resolve against boxd's own
     * directory, which the agent does not choose; skip it. */
    if ((*d)[0] != '/') continue;
    g_autofree char *candidate = g_build_filename(*d, word, NULL);
    char *found = canonical_executable(candidate);
    if (found) return found;
  }
  return NULL;
}

char *box_tools_spelling(const char *word, const char *search_path, const char *resolved)
{
  const char *path = search_path && *search_path ? search_path : "/usr/bin:/bin";
  g_auto(GStrv) dirs = g_strsplit(path, ":", -1);
  for (char **d = dirs; *d && !strchr(word, '/'); d++) {
    if ((*d)[0] != '/') continue;
    g_autofree char *candidate = g_build_filename(*d, word, NULL);
    g_autofree char *found = canonical_executable(candidate);
    if (found && strcmp(found, resolved) == 0) return g_steal_pointer(&candidate);
  }
  return g_strdup(resolved);
}

char *box_tools_named_path(const char *word, const char *cwd)
{
  if (word[0] != '/' && (!cwd || cwd[0] != '/')) return NULL;
  g_autofree char *joined = word[0] == '/' ? g_strdup(word) : g_strconcat(cwd, "/", word, NULL);
  g_auto(GStrv) parts = g_strsplit(joined, "/", -1);
  GString *out = g_string_new(NULL);
  for (char **p = parts; *p; p++) {
    if (!**p || strcmp(*p, ".") == 0) continue;
    if (strcmp(*p, "..") == 0) {
      char *slash = strrchr(out->str, '/');
      if (slash) g_string_truncate(out, (gsize)(slash - out->str));
      continue;
    }
    g_string_append_c(out, '/');
    g_string_append(out, *p);
  }
  if (out->len == 0) g_string_append_c(out, '/');
  return g_string_free(out, FALSE);
}

/* The host's system tree: every tool reads it with no decision (its view
 * binds /usr, the top-level directories or links of a merged /usr, and the
 * /etc entries of tools_etc_entries, such as /etc/alternatives, where many
 * of /usr/bin's links lead), so a program there hides nothing and its
 * lookup asks nothing. */
static bool in_system_tree(const char *path)
{
  static const char *const tree[] = { "/usr",   "/bin",   "/sbin",   "/lib",
                                      "/lib32", "/lib64", "/libx32", NULL };
  for (int i = 0; tree[i]; i++)
    if (box_path_within(path, tree[i])) return true;
  if (strncmp(path, "/etc/", 5) != 0) return false;
  for (int i = 0; tools_etc_entries[i]; i++)
    if (box_path_within(path + 5, tools_etc_entries[i])) return true;
  return false;
}

typedef struct {
  BoxToolsLookupFn fn;
  void *data;
} Asker;

static bool may(const Asker *a, const char *path, const char *operation)
{
  return in_system_tree(path) || a->fn(a->data, path, operation);
}

bool tools_dot_step(const char *name, GString *at)
{
  if (strcmp(name, ".") == 0) return true;
  if (strcmp(name, "..") != 0) return false;
  char *slash = strrchr(at->str, '/');
  if (slash) g_string_truncate(at, (gsize)(slash - at->str));
  return true;
}

static void push_components(GQueue *todo, const char *path)
{
  g_auto(GStrv) parts = g_strsplit(path, "/", -1);
  guint n = g_strv_length(parts);
  for (guint i = n; i-- > 0;)
    if (*parts[i]) g_queue_push_head(todo, g_strdup(parts[i]));
}

/* Follows path one component at a time, as the kernel would, asking
 * may_read of each symlink before reading it.  The path it ends at (every
 * link resolved), or NULL: absent, refused, a loop, or a link in procfs —
 * those are boxd's own objects, not the agent's (/proc/self/exe would be
 * boxd's binary), and their magic links lead anywhere. */
static char *walk(const char *path, const Asker *asker)
{
  GQueue todo = G_QUEUE_INIT;
  push_components(&todo, path);
  GString *at = g_string_new(NULL); /* resolved so far; empty is "/" */
  int links = 0;
  bool found = true;
  char *name;
  while ((name = g_queue_pop_head(&todo))) {
    if (tools_dot_step(name, at)) {
      g_free(name);
      continue;
    }
    gsize parent_len = at->len;
    g_string_append_c(at, '/');
    g_string_append(at, name);
    g_free(name);
    struct stat st;
    if (lstat(at->str, &st) != 0) {
      found = false;
      break;
    }
    if (!S_ISLNK(st.st_mode)) continue;
    char target[PATH_MAX];
    ssize_t n = -1;
    struct statfs fs;
    g_autofree char *parent = parent_len ? g_strndup(at->str, parent_len) : g_strdup("/");
    if (++links <= 40 && statfs(parent, &fs) == 0 && fs.f_type != PROC_SUPER_MAGIC &&
        may(asker, at->str, "read_link"))
      n = readlink(at->str, target, sizeof target - 1);
    if (n <= 0) {
      found = false;
      break;
    }
    target[n] = '\0';
    g_string_truncate(at, target[0] == '/' ? 0 : parent_len);
    push_components(&todo, target);
  }
  g_queue_clear_full(&todo, g_free);
  if (!found) {
    g_string_free(at, TRUE);
    return NULL;
  }
  if (at->len == 0) g_string_append_c(at, '/');
  return g_string_free(at, FALSE);
}

/* The executable file named (an absolute path with no "." or ".."), asked
 * about as box_tools_resolve_decided says, or NULL. */
static char *lookup(const char *named, const Asker *asker)
{
  if (!may(asker, named, "read_metadata")) return NULL;
  g_autofree char *real = walk(named, asker);
  if (!real) return NULL;
  /* the file a link led to is read too: its metadata is what runs */
  if (strcmp(real, named) != 0 && !may(asker, real, "read_metadata")) return NULL;
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISREG(st.st_mode) || access(real, X_OK) != 0) return NULL;
  return g_steal_pointer(&real);
}

char *box_tools_resolve_decided(const char *word, const char *cwd, const char *search_path,
                                BoxToolsLookupFn may_read, void *data)
{
  if (!word || !*word) return NULL;
  const Asker asker = { may_read, data };
  if (strchr(word, '/')) {
    /* "prog/" names a directory: no file runs, as the kernel would say */
    if (word[strlen(word) - 1] == '/') return NULL;
    g_autofree char *named = box_tools_named_path(word, cwd);
    return named ? lookup(named, &asker) : NULL;
  }
  /* A bare name is searched on boxd's PATH, which the operator chose; one
   * found in a directory policy refuses (~/.local/bin) is passed over as
   * if it were not there.  Only a name that is there is asked about: the
   * log would otherwise hold a question per directory per program. */
  const char *path = search_path && *search_path ? search_path : "/usr/bin:/bin";
  g_auto(GStrv) dirs = g_strsplit(path, ":", -1);
  for (char **d = dirs; *d; d++) {
    if ((*d)[0] != '/') continue; /* as in box_tools_resolve */
    g_autofree char *candidate = g_strconcat(*d, "/", word, NULL);
    g_autofree char *named = box_tools_named_path(candidate, "/");
    struct stat st;
    if (lstat(named, &st) != 0) continue;
    char *found = lookup(named, &asker);
    if (found) return found;
  }
  return NULL;
}

char *box_tools_spell_home(const char *path, const char *home)
{
  /* a home of "/" would spell every path from it: such a box spells none */
  if (!home || !*home || strcmp(home, "/") == 0) return g_strdup(path);
  char *tilde = box_path_tilde(path, home);
  return tilde ? tilde : g_strdup(path);
}
