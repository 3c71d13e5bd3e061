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
  for (int i = 0; tables && tables[i]; i++) {
    const BoxToolTable *t = tables[i];
    if (!t->command || !t->command[0]) continue;
    g_autofree char *resolved =
      box_tools_resolve(t->command[0], "/", table_search_path(t, operator_path));
    if (!resolved || strcmp(resolved, program_path) != 0) continue;
    named = true;
    int fixed = strv_len(t->command) - 1;
    if (fixed > n_args) continue;
    bool same = true;
    for (int k = 0; k < fixed && same; k++) same = strcmp(t->command[k + 1], args[k]) == 0;
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
  *refusal = g_strdup_printf("no tool runs %s: no `[tool.<name>] command` matches this program "
                             "and its leading arguments",
                             program_path);
  return NULL;
}
