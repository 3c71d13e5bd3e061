/* select.c — which process table runs a permitted program (spec/runtime.md §2.3). */
#include "tools/tools.h"

#include <string.h>

static const char *table_search_path(const BoxToolTable *t, const char *operator_path)
{
  const char *p = t->env ? g_hash_table_lookup(t->env, "PATH") : NULL;
  if (p && *p) return p;
  if (operator_path && *operator_path) return operator_path;
  return "/usr/bin:/bin";
}

char *box_tools_table_program(const BoxToolTable *t, const char *operator_path)
{
  if (!t->command || !t->command[0]) return NULL;
  if (t->box_tmp) return box_tools_named_path(t->command[0], "/");
  return box_tools_resolve(t->command[0], "/", table_search_path(t, operator_path));
}

char *box_tools_resolve_by_table(const BoxToolTable *const *tables, const char *word,
                                 const char *operator_path)
{
  if (strchr(word, '/')) return NULL;
  for (int i = 0; tables && tables[i]; i++) {
    const BoxToolTable *t = tables[i];
    if (!t->command || !t->command[0] || strcmp(t->command[0], word) != 0) continue;
    char *found = box_tools_table_program(t, operator_path);
    if (found) return found;
  }
  return NULL;
}

const BoxToolTable *box_tools_table_named(const BoxToolTable *const *tables, const char *word,
                                          const char *cwd)
{
  if (!strchr(word, '/') || word[strlen(word) - 1] == '/') return NULL;
  g_autofree char *named = box_tools_named_path(word, cwd);
  for (int i = 0; named && tables && tables[i]; i++) {
    const char *c = tables[i]->command ? tables[i]->command[0] : NULL;
    if (!c || !strchr(c, '/')) continue;
    g_autofree char *declared = box_tools_named_path(c, "/");
    if (declared && strcmp(declared, named) == 0) return tables[i];
  }
  return NULL;
}

static int strv_len(char *const *v)
{
  int n = 0;
  while (v && v[n]) n++;
  return n;
}

/* dir entry: prefix (component-bounded); file entry: equal. */
static bool path_covers(const char *entry, const char *path)
{
  size_t n = strlen(entry);
  while (n > 1 && entry[n - 1] == '/') n--;
  if (strncmp(entry, path, n) != 0) return false;
  return path[n] == '\0' || path[n] == '/' || (n == 1 && entry[0] == '/');
}

static bool listed(char *const *list, const char *path)
{
  for (int i = 0; list && list[i]; i++)
    if (path_covers(list[i], path)) return true;
  return false;
}

const BoxToolTable *box_tools_select(const BoxToolTable *const *tables, const BoxToolTable *agent,
                                     const char *program_path, char *const *args,
                                     const char *operator_path, int *n_fixed, char **refusal)
{
  const BoxToolTable *best = NULL;
  int best_len = -1;
  bool named = false;
  int n_args = strv_len(args);
  /* the tables that run this file with other leading arguments */
  g_autoptr(GString) others = g_string_new(NULL);
  for (int i = 0; tables && tables[i]; i++) {
    const BoxToolTable *t = tables[i];
    g_autofree char *resolved = box_tools_table_program(t, operator_path);
    if (!resolved || strcmp(resolved, program_path) != 0) continue;
    named = true;
    int fixed = strv_len(t->command) - 1;
    bool same = fixed <= n_args;
    for (int k = 0; k < fixed && same; k++) same = strcmp(t->command[k + 1], args[k]) == 0;
    if (!same) {
      g_autofree char *lead = g_strjoinv(" ", (char **)t->command + 1);
      g_string_append_printf(others, "%s`[tool.%s]` (%s)", others->len ? ", " : "", t->label, lead);
      continue;
    }
    /* Ties keep the first table in label order: tables come sorted. */
    if (same && fixed > best_len) {
      best = t;
      best_len = fixed;
    }
  }
  if (best) {
    *n_fixed = best_len;
    return best;
  }
  if (!named && agent && listed(agent->exec, program_path) && !listed(agent->deny, program_path)) {
    *n_fixed = 0;
    return agent;
  }
  /* the tables that name this program are named too: the fix is in one of them */
  *refusal = g_strdup_printf("no tool runs %s: no `[tool.<name>] command` matches this program "
                             "and its leading arguments%s%s%s",
                             program_path, others->len ? "; it runs under " : "", others->str,
                             others->len ? " only with those leading arguments" : "");
  return NULL;
}

bool box_tools_runs(const BoxToolTable *const *tables, const BoxToolTable *agent,
                    const char *program_path, const char *operator_path)
{
  for (int i = 0; tables && tables[i]; i++) {
    g_autofree char *resolved = box_tools_table_program(tables[i], operator_path);
    if (resolved && strcmp(resolved, program_path) == 0) return true;
  }
  return agent && listed(agent->exec, program_path) && !listed(agent->deny, program_path);
}

/* A label box.toml accepts (spec/runtime.md §2): [A-Za-z0-9._-], 1–32
 * bytes, not "." or "..". */
static bool label_ok(const char *s)
{
  size_t n = strlen(s);
  if (n == 0 || n > 32 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return false;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-') return false;
  return true;
}

char *box_tools_no_table(const char *word, const char *program_path)
{
  const char *base = strrchr(word, '/') ? strrchr(word, '/') + 1 : word;
  if (!label_ok(base)) base = "<name>";
  /* a bare word is what the table's command names; a path stays one */
  return g_strdup_printf("no tool runs %s: no `[tool.%s]` table in box.toml runs this program; "
                         "add one with command = [\"%s\"] to run it outside the Shell",
                         program_path, base, strchr(word, '/') ? program_path : word);
}
