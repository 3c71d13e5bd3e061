/* lookup.c — what a command's first word names, in bash's order: a
 * function, then a command the Shell implements (commands/commands.def),
 * else a program.  A program word is first looked for in the Shell's own
 * view (the mount: the workspace, the homes, the command's RAM area) on
 * the Shell's PATH, as bash looks; the host's system tree is not in that
 * view, and a word not found there goes to the host, which resolves it as
 * a `[tool.*]` table would (in boxd: tools/resolve.c, README "Programs").
 * `command -v`, `type`, `which` and `hash` ask the same two questions. */
#include "shell/shell-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

Node *box_lookup_function(Shell *sh, const char *name)
{
  /* most scripts define none: skip hashing the name */
  return g_hash_table_size(sh->funcs) ? g_hash_table_lookup(sh->funcs, name) : NULL;
}

/* A builtin `enable -n` turned off is looked for as a program. */
static const BoxCommandDef *enabled(Shell *sh, const BoxCommandDef *def)
{
  return def && sh->disabled && g_hash_table_contains(sh->disabled, def->name) ? NULL : def;
}

/* set -o posix: a special builtin is found before a function of its name
 * (one defined before posix mode was set) */
static bool special_first(Shell *sh, const char *name, const BoxCommandDef **def)
{
  if (!(sh->opts & O_INERT_POSIX)) return false;
  const BoxCommandDef *d = enabled(sh, box_command_lookup(name));
  if (!d || d->kind != BOX_CMD_SPECIAL) return false;
  *def = d;
  return true;
}

void box_lookup_first_word(Shell *sh, const char *name, bool skip_funcs, Node **fn,
                           const BoxCommandDef **def)
{
  *fn = skip_funcs ? NULL : box_lookup_function(sh, name);
  if (*fn && special_first(sh, name, def)) *fn = NULL;
  *def = *fn ? NULL : enabled(sh, box_command_lookup(name));
}

/* The mark of a literal name no command has. */
static const char a_program;

void box_lookup_simple(Shell *sh, Node *simple, const char *name, bool literal, Node **fn,
                       const BoxCommandDef **def)
{
  *def = NULL;
  *fn = box_lookup_function(sh, name);
  if (*fn && special_first(sh, name, def)) *fn = NULL;
  if (*fn || *def) return;
  /* A literal first word names the same command every time the node runs
   * (functions aside, looked up above): its answer is kept on the node. */
  if (simple->u.simple.def) {
    *def = simple->u.simple.def == &a_program ? NULL : enabled(sh, simple->u.simple.def);
    return;
  }
  const BoxCommandDef *row = box_command_lookup(name);
  if (literal) simple->u.simple.def = row ? (const void *)row : &a_program;
  *def = enabled(sh, row);
}

/* The host's system tree is not in the Shell's view (its worker is rooted
 * in the mount, where those paths are the command's RAM area): the host
 * resolves programs there (tools/resolve.c), and asking the mount about
 * them would only log a refusal per PATH directory. */
bool box_lookup_in_system_tree(Shell *sh, const char *path)
{
  static const char *const tree[] = { "/usr",    "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                      "/libx32", "/opt", "/etc",  "/nix", "/snap",  NULL };
  g_autofree char *abs = path[0] == '/' ? g_strdup(path) : g_build_filename(sh->cwd, path, NULL);
  for (int i = 0; tree[i]; i++) {
    size_t n = strlen(tree[i]);
    if (strncmp(abs, tree[i], n) == 0 && (abs[n] == '/' || abs[n] == '\0')) return true;
  }
  return false;
}

/* An executable regular file at path, as the kernel's execve would find
 * it; stat and access go through the mount, which decides them. */
static bool executable_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* name on the Shell's PATH; with_system: the system tree's directories
 * too, for a Shell with no host to ask (box-shell on its own, whose view
 * is the host's). */
static char *search(Shell *sh, const char *name, bool with_system)
{
  if (!*name) return NULL;
  if (strchr(name, '/'))
    return (with_system || !box_lookup_in_system_tree(sh, name)) && executable_file(name)
             ? g_strdup(name)
             : NULL;
  const char *path = box_var_get(sh, "PATH");
  g_auto(GStrv) dirs = g_strsplit(path ? path : "", ":", -1);
  for (gchar **d = dirs; *d; d++) {
    /* an empty entry is the working directory, as in bash */
    const char *dir = **d ? *d : ".";
    if (!with_system && box_lookup_in_system_tree(sh, dir)) continue;
    char *cand = g_build_filename(dir, name, NULL);
    if (executable_file(cand)) return cand;
    /* a virtualenv's python: a link to the host's, which the view lacks */
    if (g_str_has_prefix(name, "python") && box_links_to_host_python(cand)) return cand;
    g_free(cand);
  }
  return NULL;
}

int box_lookup_why_not(Shell *sh, const char *path)
{
  struct stat st;
  if (!strchr(path, '/') || box_lookup_in_system_tree(sh, path) || stat(path, &st) != 0) return 0;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  return S_ISREG(st.st_mode) && access(path, X_OK) != 0 ? EACCES : 0;
}

char *box_lookup_in_view(Shell *sh, const char *name)
{
  return search(sh, name, false);
}

char *box_lookup_program(Shell *sh, const char *name)
{
  const BoxShellHost *host = sh->host;
  if (!host || !host->resolve) return search(sh, name, true);
  char *found = search(sh, name, false);
  if (found) return found;
  char *r = host->resolve(host->data, name, sh->cwd);
  found = r ? g_strdup(r) : NULL;
  free(r);
  return found;
}

BoxHashed *box_lookup_remember(Shell *sh, const char *name, const char *path)
{
  size_t n = strlen(path) + 1;
  BoxHashed *h = g_malloc(sizeof *h + n);
  h->hits = 0;
  memcpy(h->path, path, n);
  g_hash_table_insert(sh->hash, g_strdup(name), h);
  return h;
}

void box_lookup_ran(Shell *sh, const char *name, const char *found)
{
  if (strchr(name, '/')) return;
  BoxHashed *h = g_hash_table_lookup(sh->hash, name);
  /* A program the host ran is remembered by name: its file is asked for
   * only if `hash` or `type` wants it, so running costs no request. */
  if (!h) h = box_lookup_remember(sh, name, found ? found : "");
  h->hits++;
}

const BoxHashed *box_lookup_hashed(Shell *sh, const char *name)
{
  BoxHashed *h = g_hash_table_lookup(sh->hash, name);
  if (!h || h->path[0]) return h;
  int hits = h->hits;
  g_autofree char *path = box_lookup_program(sh, name);
  if (!path) {
    g_hash_table_remove(sh->hash, name);
    return NULL;
  }
  h = box_lookup_remember(sh, name, path);
  h->hits = hits;
  return h;
}
