/* compgen.c — `compgen [-abcdefgjksuv] [-o option] [-A action] [-G globpat]
 * [-W wordlist] [-X filterpat] [-P prefix] [-S suffix] [word]`: the
 * completions of word that complete's options describe (complete.c
 * parses them), one a line, as bash's compgen prints them; 1 when there
 * are none.  Files and directories are read through the mount. */
#include <dirent.h>
#include <fnmatch.h>
#include <glob.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static const char usage[] =
  "compgen: usage: compgen [-abcdefgjksuv] [-o option] [-A action] [-G globpat] [-W wordlist] "
  "[-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] [word]";

/* bit numbers of complete.c's actions table */
enum {
  A_ALIAS,
  A_BUILTIN,
  A_COMMAND,
  A_DIRECTORY,
  A_EXPORT,
  A_FILE,
  A_GROUP,
  A_JOB,
  A_KEYWORD,
  A_SERVICE,
  A_USER,
  A_VARIABLE,
  A_ARRAYVAR,
  A_BINDING,
  A_DISABLED,
  A_ENABLED,
  A_FUNCTION,
  A_HELPTOPIC,
  A_HOSTNAME,
  A_RUNNING,
  A_SETOPT,
  A_SHOPT,
  A_SIGNAL,
  A_STOPPED,
};

/* in bash's order (its table of reserved words) */
static const char *const keywords[] = { "if",   "then", "else",     "elif",  "fi",    "case",
                                        "esac", "for",  "select",   "while", "until", "do",
                                        "done", "in",   "function", "time",  "{",     "}",
                                        "!",    "[[",   "]]",       "coproc" };

static gint by_name(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_name_q(const void *a, const void *b)
{
  return by_name(a, b);
}

static void add_if(GPtrArray *out, const char *cand, const char *word)
{
  if (g_str_has_prefix(cand, word)) g_ptr_array_add(out, g_strdup(cand));
}

static void add_keys(GPtrArray *out, GHashTable *t, const char *word)
{
  if (!t) return;
  guint n = 0;
  gpointer *keys = g_hash_table_get_keys_as_array(t, &n);
  qsort(keys, n, sizeof *keys, by_name_q);
  for (guint i = 0; i < n; i++) add_if(out, keys[i], word);
  g_free(keys);
}

/* Variables: all (flags 0), exported ones, or arrays. */
static void add_vars(Shell *sh, GPtrArray *out, const char *word, unsigned want)
{
  box_vars_materialize(sh);
  GPtrArray *keys = g_ptr_array_new();
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, sh->vars);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    const ShellVar *var = v;
    if (want && !(var->flags & want)) continue;
    if (!want && !var->value && !(var->flags & (V_ARRAY | V_ASSOC))) continue;
    g_ptr_array_add(keys, k);
  }
  g_ptr_array_sort(keys, by_name);
  for (guint i = 0; i < keys->len; i++) add_if(out, keys->pdata[i], word);
  g_ptr_array_free(keys, TRUE);
}

/* The names in a directory that start with base (dirs only, or all),
 * with the directory part of word before them. */
static void add_files(GPtrArray *out, const char *word, bool dirs_only)
{
  const char *slash = strrchr(word, '/');
  g_autofree char *dir = slash ? g_strndup(word, slash - word + 1) : g_strdup("");
  const char *base = slash ? slash + 1 : word;
  DIR *d = opendir(*dir ? dir : ".");
  if (!d) return;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (struct dirent *e; (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (e->d_name[0] == '.' && base[0] != '.') continue;
    if (!g_str_has_prefix(e->d_name, base)) continue;
    g_autofree char *path = g_strconcat(dir, e->d_name, NULL);
    if (dirs_only && !g_file_test(path, G_FILE_TEST_IS_DIR)) continue;
    g_ptr_array_add(names, g_steal_pointer(&path));
  }
  closedir(d);
  /* in the directory's order, as bash's */
  for (guint i = 0; i < names->len; i++) g_ptr_array_add(out, g_strdup(names->pdata[i]));
  g_ptr_array_free(names, TRUE);
}

/* Programs on PATH that start with word, each file found (bash lists a
 * name once per directory that holds it). */
static void add_programs(Shell *sh, GPtrArray *out, const char *word)
{
  const char *path = box_var_get(sh, "PATH");
  g_auto(GStrv) dirs = g_strsplit(path ? path : "", ":", -1);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (char **dp = dirs; *dp; dp++) {
    DIR *d = opendir(**dp ? *dp : ".");
    if (!d) continue;
    for (struct dirent *e; (e = readdir(d));) {
      if (e->d_name[0] == '.' || !g_str_has_prefix(e->d_name, word)) continue;
      g_autofree char *full = g_build_filename(**dp ? *dp : ".", e->d_name, NULL);
      if (!g_file_test(full, G_FILE_TEST_IS_EXECUTABLE) || g_file_test(full, G_FILE_TEST_IS_DIR))
        continue;
      g_ptr_array_add(names, g_strdup(e->d_name));
    }
    closedir(d);
  }
  for (guint i = 0; i < names->len; i++) g_ptr_array_add(out, g_strdup(names->pdata[i]));
  g_ptr_array_free(names, TRUE);
}

/* The names of a colon-separated file's first field (users, groups). */
static void add_db(GPtrArray *out, const char *file, const char *word, const char *sep)
{
  gchar *text = NULL;
  if (!g_file_get_contents(file, &text, NULL, NULL)) return;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_free(text);
  for (char **l = lines; *l; l++) {
    if (!**l || **l == '#') continue;
    g_autofree char *name = g_strndup(*l, strcspn(*l, sep));
    if (*name) add_if(out, name, word);
  }
}

static void add_commands(Shell *sh, GPtrArray *out, const char *word, int kind)
{
  size_t n;
  const BoxCommandDef *rows = box_command_rows(&n);
  for (size_t i = 0; i < n; i++) {
    bool builtin = rows[i].kind != BOX_CMD_UTILITY;
    bool disabled = sh->disabled && g_hash_table_contains(sh->disabled, rows[i].name);
    if (kind == A_BUILTIN && !builtin) continue;
    if (kind == A_ENABLED && disabled) continue;
    if (kind == A_DISABLED && !disabled) continue;
    add_if(out, rows[i].name, word);
  }
}

static void generate(Shell *sh, const BoxCompSpec *s, const char *word, GPtrArray *out)
{
  unsigned a = s->actions;
#define ON(bit) (a & (1u << (bit)))
  if (ON(A_ALIAS)) add_keys(out, sh->aliases, word);
  if (ON(A_ARRAYVAR)) add_vars(sh, out, word, V_ARRAY | V_ASSOC);
  if (ON(A_BUILTIN) || ON(A_HELPTOPIC)) add_commands(sh, out, word, A_BUILTIN);
  if (ON(A_ENABLED)) add_commands(sh, out, word, A_ENABLED);
  if (ON(A_DISABLED)) add_commands(sh, out, word, A_DISABLED);
  if (ON(A_COMMAND)) {
    add_keys(out, sh->aliases, word);
    add_keys(out, sh->funcs, word);
    add_commands(sh, out, word, A_COMMAND);
    for (size_t i = 0; i < G_N_ELEMENTS(keywords); i++) add_if(out, keywords[i], word);
    add_programs(sh, out, word);
  }
  if (ON(A_DIRECTORY) && !ON(A_FILE)) add_files(out, word, true);
  if (ON(A_FILE)) add_files(out, word, false);
  if (ON(A_EXPORT)) add_vars(sh, out, word, V_EXPORT);
  if (ON(A_FUNCTION)) add_keys(out, sh->funcs, word);
  if (ON(A_GROUP)) add_db(out, "/etc/group", word, ":");
  if (ON(A_USER)) add_db(out, "/etc/passwd", word, ":");
  if (ON(A_SERVICE)) add_db(out, "/etc/services", word, " \t");
  if (ON(A_KEYWORD))
    for (size_t i = 0; i < G_N_ELEMENTS(keywords); i++) add_if(out, keywords[i], word);
  if (ON(A_VARIABLE)) add_vars(sh, out, word, 0);
  if (ON(A_SETOPT)) {
    static const char *const setopts[] = { "allexport",
                                           "braceexpand",
                                           "emacs",
                                           "errexit",
                                           "errtrace",
                                           "functrace",
                                           "hashall",
                                           "histexpand",
                                           "history",
                                           "ignoreeof",
                                           "interactive-comments",
                                           "keyword",
                                           "monitor",
                                           "noclobber",
                                           "noexec",
                                           "noglob",
                                           "nolog",
                                           "notify",
                                           "nounset",
                                           "onecmd",
                                           "physical",
                                           "pipefail",
                                           "posix",
                                           "privileged",
                                           "verbose",
                                           "vi",
                                           "xtrace" };
    for (size_t i = 0; i < G_N_ELEMENTS(setopts); i++) add_if(out, setopts[i], word);
  }
  if (ON(A_SHOPT)) {
    GString *on = box_shopt_all_names();
    g_auto(GStrv) names = g_strsplit(on->str, ":", -1);
    g_string_free(on, TRUE);
    for (char **n = names; *n; n++) add_if(out, *n, word);
  }
  if (ON(A_SIGNAL))
    for (int sig = 1; sig < NSIG; sig++) {
      const char *abbrev = sigabbrev_np(sig);
      if (!abbrev) continue;
      g_autofree char *name = g_strconcat("SIG", abbrev, NULL);
      add_if(out, name, word);
    }
#undef ON
  if (s->globpat) {
    glob_t g;
    if (glob(s->globpat, 0, NULL, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; i++) g_ptr_array_add(out, g_strdup(g.gl_pathv[i]));
    globfree(&g);
  }
  if (s->words) {
    /* read as words and expanded as a command's words are (braces too) */
    GPtrArray *ws = box_parse_words(sh, s->words);
    GPtrArray *fields = g_ptr_array_new_with_free_func(g_free);
    int st = 0;
    if (ws->len) box_expand_words(sh, (Word **)ws->pdata, ws->len, fields, &st);
    for (guint i = 0; i < fields->len; i++) add_if(out, fields->pdata[i], word);
    g_ptr_array_free(fields, TRUE);
    g_ptr_array_free(ws, TRUE);
  }
}

/* -X: drops what matches (with a leading '!', what does not); & is word */
static void filter(GPtrArray *out, const char *pat, const char *word)
{
  bool keep_matching = pat[0] == '!';
  if (keep_matching) pat++;
  GString *p = g_string_new(NULL);
  box_append_amp(p, pat, word);
  for (guint i = out->len; i-- > 0;) {
    bool m = box_fnmatch(p->str, out->pdata[i], FNM_EXTMATCH) == 0;
    if (m != keep_matching) g_ptr_array_remove_index(out, i);
  }
  g_string_free(p, TRUE);
}

int box_cmd_compgen(BoxCmd *c)
{
  BoxCompSpec s;
  unsigned flags;
  int i = box_comp_parse(c, usage, false, &s, &flags);
  if (i < 0) return 2;
  const char *word = i < c->argc ? c->argv[i] : "";
  if (s.funcname || s.command)
    box_cmd_error(c, "warning: -%c option may not work as you expect", s.funcname ? 'F' : 'C');
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  generate(c->sh, &s, word, out);
  if (s.filterpat) filter(out, s.filterpat, word);
  for (guint k = 0; k < out->len; k++)
    box_out_printf(c->out, "%s%s%s\n", s.prefix ? s.prefix : "", (char *)out->pdata[k],
                   s.suffix ? s.suffix : "");
  int st = out->len ? 0 : 1;
  g_ptr_array_free(out, TRUE);
  box_comp_spec_clear(&s);
  return st;
}
