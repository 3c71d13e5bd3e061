/* type.c — `type [-afptP] NAME…`; also the lookup `command -v/-V` and
 * `which` use: what a name would run as, in bash's order (alias, keyword,
 * function, the Shell's own command, a program found as lookup.c finds
 * it) and in bash's words. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static const char *const keywords[] = { "if",   "then", "else",     "elif",   "fi",    "case",
                                        "esac", "for",  "select",   "while",  "until", "do",
                                        "done", "in",   "function", "time",   "{",     "}",
                                        "!",    "[[",   "]]",       "coproc", NULL };

static bool is_keyword(const char *n)
{
  for (int i = 0; keywords[i]; i++)
    if (strcmp(keywords[i], n) == 0) return true;
  return false;
}

/* How one answer is printed: 't' the kind's word (type -t), 'v' the word
 * that runs (command -v), 'p' a file's path only (type -p/-P), 'V' bash's
 * sentence (type, command -V). */
static void say(BoxCmd *c, char mode, const char *name, const char *kind, const char *sentence)
{
  if (mode == 't')
    box_out_printf(c->out, "%s\n", kind);
  else if (mode == 'v')
    box_out_printf(c->out, "%s\n", name);
  else if (mode == 'V')
    box_out_printf(c->out, "%s %s\n", name, sentence);
}

static void say_file(BoxCmd *c, char mode, const char *name, const char *path, bool hashed)
{
  if (mode == 't')
    box_out_puts(c->out, "file\n");
  else if (mode == 'V' && hashed)
    box_out_printf(c->out, "%s is hashed (%s)\n", name, path);
  else if (mode == 'V')
    box_out_printf(c->out, "%s is %s\n", name, path);
  else
    box_out_printf(c->out, "%s\n", path);
}

/* flags of box_type_one */
enum { TYPE_SKIP_FUNCS = 1, TYPE_PATH_ONLY = 2, TYPE_ALL = 4 };

/* The Shell's own kinds of name, in bash's order. */
enum { KIND_ALIAS, KIND_KEYWORD, KIND_FUNCTION, KIND_BUILTIN, KIND_N };

/* Prints name as a kind-th kind of name if it is one. */
static bool describe(BoxCmd *c, int kind, const char *name, char mode, int flags)
{
  Shell *sh = c->sh;
  switch (kind) {
  case KIND_ALIAS: {
    /* bash -c leaves expand_aliases off, and then its lookups pass aliases
     * by though `alias` still lists them (the Shell expands them anyway:
     * spec/shell.md's documented difference) */
    if (!(sh->shopts & SH_EXPAND_ALIASES)) return false;
    const char *alias = g_hash_table_lookup(sh->aliases, name);
    if (!alias) return false;
    if (mode == 'v') {
      g_autofree char *q = box_alias_quote(alias);
      box_out_printf(c->out, "alias %s=%s\n", name, q);
      return true;
    }
    g_autofree char *s = g_strdup_printf("is aliased to `%s'", alias);
    say(c, mode, name, "alias", s);
    return true;
  }
  case KIND_KEYWORD:
    if (!is_keyword(name)) return false;
    say(c, mode, name, "keyword", "is a shell keyword");
    return true;
  case KIND_FUNCTION: {
    Node *fn = flags & TYPE_SKIP_FUNCS ? NULL : box_lookup_function(sh, name);
    if (!fn) return false;
    if (mode == 'V') {
      g_autofree char *t = box_function_text(fn);
      box_out_printf(c->out, "%s is a function\n%s\n", name, t);
      return true;
    }
    say(c, mode, name, "function", NULL);
    return true;
  }
  default: {
    const BoxCommandDef *def = box_command_lookup(name);
    if (!def || (c->sh->disabled && g_hash_table_contains(c->sh->disabled, name))) return false;
    /* a program the Shell implements in place of a file is named as that
     * file where PATH holds one, as bash names it; as a builtin where none
     * is (a box's view holds no system tree) */
    if (def->kind == BOX_CMD_UTILITY) {
      g_autofree char *file = box_lookup_program(sh, name);
      if (file) return false;
    }
    /* bash says "special" only in POSIX mode */
    say(c, mode, name, "builtin", "is a shell builtin");
    return true;
  }
  }
}

/* Whether the Shell's own view is where a file of that name is looked
 * for: with no host to ask, the system tree is in it too (lookup.c). */
static bool in_view(Shell *sh, const char *dir)
{
  return !(sh->host && sh->host->resolve) || !box_lookup_in_system_tree(sh, dir);
}

/* Every executable file of name on PATH, as type -a lists them; the
 * host's answer where the view holds none. */
static GPtrArray *all_files(Shell *sh, const char *name)
{
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  if (strchr(name, '/')) {
    char *one = box_lookup_program(sh, name);
    if (one) g_ptr_array_add(files, one);
    return files;
  }
  const char *path = box_var_get(sh, "PATH");
  g_auto(GStrv) dirs = g_strsplit(path ? path : "", ":", -1);
  for (gchar **d = dirs; *d && *name; d++) {
    const char *dir = **d ? *d : ".";
    if (!in_view(sh, dir)) continue;
    char *cand = g_build_filename(dir, name, NULL);
    struct stat st;
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
      g_ptr_array_add(files, cand);
    else
      g_free(cand);
  }
  if (!files->len) {
    char *one = box_lookup_program(sh, name);
    if (one) g_ptr_array_add(files, one);
  }
  return files;
}

/* bash's last resort for a name no executable file has: the first
 * existing file on PATH that is no directory (running it is refused). */
static char *unexecutable_file(Shell *sh, const char *name)
{
  if (!*name || strchr(name, '/')) return NULL;
  const char *path = box_var_get(sh, "PATH");
  g_auto(GStrv) dirs = g_strsplit(path ? path : "", ":", -1);
  for (gchar **d = dirs; *d; d++) {
    const char *dir = **d ? *d : ".";
    if (!in_view(sh, dir)) continue;
    char *cand = g_build_filename(dir, name, NULL);
    struct stat st;
    if (stat(cand, &st) == 0 && !S_ISDIR(st.st_mode)) return cand;
    g_free(cand);
  }
  return NULL;
}

/* Prints what name is (mode as say's); returns whether it is anything.
 * TYPE_PATH_ONLY searches for a file even past the Shell's own names. */
static int type_one(BoxCmd *c, const char *name, char mode, int flags)
{
  Shell *sh = c->sh;
  bool found = false;
  for (int k = 0; k < KIND_N && !(flags & TYPE_PATH_ONLY); k++) {
    if (!describe(c, k, name, mode, flags)) continue;
    if (!(flags & TYPE_ALL)) return 1;
    found = true;
  }
  /* -a goes on to every file on PATH, past the hash (but -aP, as bash's,
   * answers a hashed name from it); a kind found above implies -a */
  bool every = flags & TYPE_ALL;
  const BoxHashed *hashed = NULL;
  if (!strchr(name, '/') && (!every || flags & TYPE_PATH_ONLY))
    hashed = box_lookup_hashed(sh, name);
  if (every && !hashed) {
    g_autoptr(GPtrArray) files = all_files(sh, name);
    for (guint i = 0; i < files->len; i++) say_file(c, mode, name, files->pdata[i], false);
    return found || files->len;
  }
  if (found) return 1;
  g_autofree char *path = hashed ? g_strdup(hashed->path) : box_lookup_program(sh, name);
  if (!path) path = unexecutable_file(sh, name);
  if (!path) return 0;
  say_file(c, mode, name, path, hashed != NULL);
  return 1;
}

int box_type_one(BoxCmd *c, const char *name, char mode, bool skip_funcs)
{
  return type_one(c, name, mode, skip_funcs ? TYPE_SKIP_FUNCS : 0);
}

int box_cmd_type(BoxCmd *c)
{
  char mode = 'V';
  int flags = 0;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    for (const char *p = a + 1; *p; p++) {
      if (*p == 't')
        mode = 't';
      else if (*p == 'p')
        mode = 'p';
      else if (*p == 'P')
        mode = 'p', flags |= TYPE_PATH_ONLY;
      else if (*p == 'a')
        flags |= TYPE_ALL;
      else if (*p == 'f')
        flags |= TYPE_SKIP_FUNCS;
      else
        return bx_bad_option(c, *p, "type: usage: type [-afptP] name [name ...]");
    }
  }
  int st = 0;
  for (; i < c->argc; i++) {
    if (type_one(c, c->argv[i], mode, flags)) continue;
    /* bash words only the long form's failure */
    if (mode == 'V') box_cmd_error(c, "%s: not found", c->argv[i]);
    st = 1;
  }
  return st;
}
