/* vars.c — the variable table: scalars, indexed and associative arrays,
 * attributes, function-local scopes (dynamic, as bash). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shell/shell-private.h"

bool box_is_name(const char *s, size_t len)
{
  if (len == 0 || !(s[0] == '_' || g_ascii_isalpha(s[0]))) return false;
  for (size_t i = 1; i < len; i++)
    if (!(s[i] == '_' || g_ascii_isalnum(s[i]))) return false;
  return true;
}

bool box_split_ref(const char *ref, char **name, char **key)
{
  const char *br = strchr(ref, '[');
  size_t rl = strlen(ref), nl = br ? (size_t)(br - ref) : rl;
  if (!box_is_name(ref, nl) || (br && (rl < nl + 3 || ref[rl - 1] != ']'))) return false;
  *name = g_strndup(ref, nl);
  *key = br ? g_strndup(br + 1, rl - nl - 2) : NULL;
  return true;
}

void box_var_clear(ShellVar *v)
{
  g_free(v->value);
  v->value = NULL;
  if (v->arr) g_ptr_array_free(v->arr, TRUE);
  if (v->assoc) g_hash_table_destroy(v->assoc);
  if (v->keys) g_ptr_array_free(v->keys, TRUE);
  v->arr = NULL;
  v->assoc = NULL;
  v->keys = NULL;
}

void box_var_free(gpointer p);
void box_var_free(gpointer p)
{
  ShellVar *v = p;
  if (!v) return;
  box_var_clear(v);
  g_free(v);
}

ShellVar *box_var_copy(const ShellVar *v)
{
  ShellVar *c = g_new0(ShellVar, 1);
  c->flags = v->flags;
  c->value = g_strdup(v->value);
  if (v->arr) {
    c->arr = g_ptr_array_new_full(v->arr->len, g_free);
    for (guint i = 0; i < v->arr->len; i++) g_ptr_array_add(c->arr, g_strdup(v->arr->pdata[i]));
  }
  if (v->assoc) {
    c->assoc = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    c->keys = g_ptr_array_new_full(v->keys->len, g_free);
    for (guint i = 0; i < v->keys->len; i++) {
      const char *k = v->keys->pdata[i];
      g_ptr_array_add(c->keys, g_strdup(k));
      g_hash_table_insert(c->assoc, g_strdup(k), g_strdup(g_hash_table_lookup(v->assoc, k)));
    }
  }
  return c;
}

GArray *box_var_journal_begin(Shell *sh)
{
  if (sh->var_journal) return NULL;
  sh->var_journal = g_array_new(FALSE, FALSE, sizeof(SavedVar));
  return sh->var_journal;
}

void box_var_journal_end(Shell *sh, GArray *journal)
{
  sh->var_journal = NULL;
  box_var_restore(sh, journal);
}

/* Variables bash -c starts with that few commands look at: made the
 * first time a script names one (or lists variables), all at once, so a
 * command that never does pays nothing for them. */
static bool lazy_name(const char *name)
{
  switch (name[0]) {
  case 'B':
    return !strcmp(name, "BASH_ARGC") || !strcmp(name, "BASH_ARGV") ||
           !strcmp(name, "BASH_LINENO") || !strcmp(name, "BASH_SOURCE") ||
           !strcmp(name, "BASH_VERSINFO") || !strcmp(name, "BASHOPTS");
  case 'D': return !strcmp(name, "DIRSTACK");
  case 'F': return !strcmp(name, "FUNCNAME");
  case 'S': return !strcmp(name, "SHELLOPTS");
  default: return false;
  }
}

/* An array bash -c starts with (values NULL-terminated). */
static void lazy_array(Shell *sh, const char *name, const char *const *values, unsigned flags)
{
  if (g_hash_table_contains(sh->vars, name)) return;
  ShellVar *v = box_var_make(sh, name);
  box_var_make_array(v, false);
  for (const char *const *p = values; *p; p++) g_ptr_array_add(v->arr, g_strdup(*p));
  v->flags |= flags;
}

void box_vars_materialize(Shell *sh)
{
  if (sh->lazy_made) return;
  sh->lazy_made = true;
  static const char *const none[] = { NULL };
  static const char *const versinfo[] = { "5", "2", "15", "1", "release", "x86_64-pc-linux-gnu",
                                          NULL };
  lazy_array(sh, "BASH_ARGC", none, 0);
  lazy_array(sh, "BASH_ARGV", none, 0);
  lazy_array(sh, "BASH_VERSINFO", versinfo, V_READONLY);
  lazy_array(sh, "DIRSTACK", none, 0);
  box_callstack_materialize(sh);
  box_optvars_refresh(sh);
}

static inline ShellVar *var_find(Shell *sh, const char *name)
{
  ShellVar *v = g_hash_table_lookup(sh->vars, name);
  if (G_LIKELY(v || sh->lazy_made) || !lazy_name(name)) return v;
  box_vars_materialize(sh);
  return g_hash_table_lookup(sh->vars, name);
}

/* name is about to change: the first change of a journal keeps a copy */
static void journal_note(Shell *sh, const char *name)
{
  if (G_LIKELY(!sh->var_journal)) return;
  GArray *j = sh->var_journal;
  for (guint i = 0; i < j->len; i++)
    if (strcmp(g_array_index(j, SavedVar, i).name, name) == 0) return;
  ShellVar *v = var_find(sh, name);
  SavedVar s = { g_strdup(name), v ? box_var_copy(v) : NULL };
  g_array_append_val(j, s);
}

/* The name a nameref (declare -n) leads to: followed while its value is a
 * plain name; name otherwise.  A nameref without a value yet is itself
 * (declare -n r=x sets r).  As bash's find_variable_nameref: NULL past 8
 * namerefs, and NULL when the chain comes back to where it began or to the
 * last one, with bash's warning when warn is set. */
static const char *deref_warn(Shell *sh, const char *name, ShellVar **found, bool warn)
{
  ShellVar *v = var_find(sh, name), *orig = v;
  const char *orig_name = name;
  for (int level = 0;
       v && (v->flags & V_NAMEREF) && v->value && box_is_name(v->value, strlen(v->value));) {
    ShellVar *prev = v;
    if (++level > 8) break;
    name = v->value;
    v = var_find(sh, name);
    if (!v || (v != orig && v != prev)) continue;
    if (warn) box_sh_error(sh, "warning: %s: circular name reference", orig_name);
    break;
  }
  if (v && (v->flags & V_NAMEREF) && v->value && box_is_name(v->value, strlen(v->value))) {
    *found = NULL;
    return NULL;
  }
  *found = v;
  return name;
}

static const char *deref(Shell *sh, const char *name, ShellVar **found)
{
  return deref_warn(sh, name, found, false);
}

/* v, a nameref deref stopped at because its value is no plain name:
 * the array and key of the element it names (declare -n r='A[k]') */
static bool elem_ref(ShellVar *v, char **arr, char **key)
{
  if (!v || !(v->flags & V_NAMEREF) || !v->value) return false;
  if (box_split_ref(v->value, arr, key) && *key) return true;
  g_clear_pointer(arr, g_free); /* the caller's to free only on true */
  g_clear_pointer(key, g_free);
  return false;
}

bool box_nameref_elem(Shell *sh, const char *name, char **arr, char **key)
{
  ShellVar *v = var_find(sh, name);
  if (!v || !(v->flags & V_NAMEREF)) return false;
  /* deref stops at the last nameref when its value is no plain name */
  if (!deref(sh, name, &v)) return false;
  return elem_ref(v, arr, key);
}

ShellVar *box_var_lookup(Shell *sh, const char *name)
{
  ShellVar *v = var_find(sh, name);
  if (v && (v->flags & V_NAMEREF)) deref(sh, name, &v);
  return v;
}

ShellVar *box_var_make(Shell *sh, const char *name)
{
  ShellVar *v = var_find(sh, name);
  if (v && (v->flags & V_NAMEREF)) {
    /* a circular chain leads nowhere: the name's own variable */
    ShellVar *own = v;
    const char *to = deref(sh, name, &v);
    if (to)
      name = to;
    else
      v = own;
  }
  if (!v) {
    v = g_new0(ShellVar, 1);
    if (sh->opts & O_ALLEXPORT) v->flags |= V_EXPORT;
    g_hash_table_insert(sh->vars, g_strdup(name), v);
  }
  return v;
}

static const char *dyn_value(Shell *sh, const char *name)
{
  static char buf[32];
  if (name[0] == 'R' && strcmp(name, "RANDOM") == 0) {
    g_snprintf(buf, sizeof buf, "%d", g_random_int_range(0, 32768));
    return buf;
  }
  if (name[0] == 'L' && strcmp(name, "LINENO") == 0) {
    g_snprintf(buf, sizeof buf, "%ld", sh->lineno);
    return buf;
  }
  if (name[0] == 'S' && strcmp(name, "SECONDS") == 0) {
    g_snprintf(buf, sizeof buf, "%ld", (long)((g_get_monotonic_time() - sh->started) / 1000000));
    return buf;
  }
  if (name[0] == 'B' && strcmp(name, "BASH_COMMAND") == 0) return box_bash_command(sh);
  if (name[0] == 'B' && strcmp(name, "BASH_ARGV0") == 0) return sh->arg0;
  if (name[0] == 'E' && strcmp(name, "EPOCHSECONDS") == 0) {
    g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, g_get_real_time() / G_USEC_PER_SEC);
    return buf;
  }
  if (name[0] == 'E' && strcmp(name, "EPOCHREALTIME") == 0) {
    gint64 t = g_get_real_time();
    g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT ".%06d", t / G_USEC_PER_SEC,
               (int)(t % G_USEC_PER_SEC));
    return buf;
  }
  if (name[0] == 'B' && strcmp(name, "BASHPID") == 0) {
    g_snprintf(buf, sizeof buf, "%d", (int)box_pid_shown(getpid()));
    return buf;
  }
  if (name[0] == '_' && !name[1])
    return sh->last_arg_empty ? "" : sh->last_arg ? sh->last_arg : sh->arg0;
  return NULL;
}

const char *box_var_get(Shell *sh, const char *name)
{
  ShellVar *v = var_find(sh, name);
  if (v && (v->flags & V_NAMEREF)) {
    name = deref_warn(sh, name, &v, true);
    if (!name) return NULL;
    g_autofree char *arr = NULL, *key = NULL;
    if (elem_ref(v, &arr, &key)) {
      /* the subscript as written, expanded as bash expands one */
      ShellVar *a = var_find(sh, arr);
      g_autofree char *k = a ? box_expand_subscript(sh, key, NULL) : NULL;
      return k ? box_var_elem(a, k) : NULL;
    }
  }
  if (!v) return dyn_value(sh, name);
  if (v->flags & V_ARRAY) return v->arr && v->arr->len ? v->arr->pdata[0] : NULL;
  if (v->flags & V_ASSOC) return v->assoc ? g_hash_table_lookup(v->assoc, "0") : NULL;
  return v->value;
}

static char *transform(ShellVar *v, const char *value)
{
  if (v->flags & V_LOWER) return g_utf8_strdown(value, -1);
  if (v->flags & V_UPPER) return g_utf8_strup(value, -1);
  return g_strdup(value);
}

static bool check_ro(Shell *sh, ShellVar *v, const char *name)
{
  if (v && (v->flags & V_READONLY)) {
    box_sh_error(sh, "%s: readonly variable", name);
    /* an assignment statement's error drops the command; under set -e it
     * ends the shell, wherever it stands (bash) */
    if (sh->opts & O_ERREXIT) {
      sh->jump = J_EXIT;
      sh->exit_status = 1;
    } else {
      sh->discard = true;
    }
    return false;
  }
  return true;
}

/* An assignment through a circular nameref: bash assigns nothing and
 * drops the command (its warning said why). */
static bool circular(Shell *sh)
{
  sh->discard = true;
  return false;
}

/* NAME=value through a nameref to A[k]: k is expanded as bash expands a
 * subscript; A[@] and A[*] name no element. */
static bool set_through_elem_ref(Shell *sh, const char *arr, const char *key, const char *value)
{
  ShellVar *a = var_find(sh, arr);
  if (!(a && (a->flags & V_ASSOC)) && (!strcmp(key, "@") || !strcmp(key, "*"))) {
    box_sh_error(sh, "%s[%s]: bad array subscript", arr, key);
    sh->discard = true;
    return false;
  }
  g_autofree char *k = box_expand_subscript(sh, key, NULL);
  return k && box_var_set_elem(sh, arr, k, value, false);
}

char *box_elem_key(Shell *sh, const char *name, const char *key)
{
  if (!strcmp(key, "@") || !strcmp(key, "*")) return g_strdup(key);
  ShellVar *a = box_var_lookup(sh, name);
  return a && (a->flags & V_ASSOC) ? box_expand_subscript(sh, key, NULL)
                                   : box_expand_arith(sh, key, NULL);
}

static char *int_value(Shell *sh, ShellVar *v, const char *value, bool *ok)
{
  *ok = true;
  if (!(v->flags & V_INTEGER)) return transform(v, value);
  int64_t r = 0;
  /* in a builtin (declare -i n=08, read, export), bash names it and drops
   * the command */
  const char *who = sh->arith_who;
  if (!who) sh->arith_who = sh->builtin;
  *ok = box_arith(sh, value, &r);
  sh->arith_who = who;
  if (!*ok) {
    if (sh->builtin && !sh->arith_unbound) sh->subscript_failed = true;
    return NULL;
  }
  return g_strdup_printf("%" G_GINT64_FORMAT, r);
}

char *box_int_append(Shell *sh, const char *old, const char *value)
{
  /* the value alone first, as bash, whose message names only it */
  int64_t add = 0, base = 0;
  if (!box_arith(sh, value, &add) || (old && *old && !box_arith(sh, old, &base))) return NULL;
  return g_strdup_printf("%" G_GINT64_FORMAT, (int64_t)((uint64_t)base + (uint64_t)add));
}

bool box_var_set(Shell *sh, const char *name, const char *value)
{
  ShellVar *v = var_find(sh, name);
  if (v && (v->flags & V_NAMEREF)) {
    name = deref_warn(sh, name, &v, true);
    if (!name) return circular(sh);
    g_autofree char *arr = NULL, *key = NULL;
    if (elem_ref(v, &arr, &key)) return set_through_elem_ref(sh, arr, key, value);
  }
  if (!check_ro(sh, v, name)) return false;
  /* told apart by two letters first: BASH_VERSION, set for every run,
   * need not read the literal's page */
  if (!v && name[0] == 'B' && name[1] == 'A' && name[2] == 'S' && name[3] == 'H' &&
      name[4] == '_' && name[5] == 'A' && strcmp(name, "BASH_ARGV0") == 0) {
    /* bash's: assigning it sets $0 */
    g_free(sh->arg0);
    sh->arg0 = g_strdup(value);
    return true;
  }
  journal_note(sh, name);
  if (!v) v = box_var_make(sh, name);
  v->flags &= ~V_NOVALUE;
  bool ok;
  char *nv = int_value(sh, v, value, &ok);
  if (!ok) return false;
  if (v->flags & (V_ARRAY | V_ASSOC)) {
    bool r = box_var_set_elem(sh, name, "0", nv, false);
    g_free(nv);
    return r;
  }
  /* a new OPTIND starts getopts over at the word it names, and OPTIND=1
   * over from the start as POSIX asks (getopts's own store keeps its place) */
  if (name[0] == 'O' && strcmp(name, "OPTIND") == 0 &&
      (!v->value || strcmp(v->value, nv) != 0 || strcmp(nv, "1") == 0))
    sh->optind_sub = 0;
  g_free(v->value);
  v->value = nv;
  if (sh->opts & O_ALLEXPORT) v->flags |= V_EXPORT;
  /* bash's assignment to GLOBIGNORE sets dotglob then */
  if (name[0] == 'G' && strcmp(name, "GLOBIGNORE") == 0) box_globignore_sync(sh, true);
  return true;
}

bool box_var_set_take(Shell *sh, const char *name, char *value)
{
  ShellVar *v = var_find(sh, name);
  /* OPTIND's and GLOBIGNORE's assignments do more: box_var_set's */
  if (v &&
      !(v->flags & (V_READONLY | V_INTEGER | V_LOWER | V_UPPER | V_ARRAY | V_ASSOC | V_NAMEREF)) &&
      !(name[0] == 'O' && strcmp(name, "OPTIND") == 0) &&
      !(name[0] == 'G' && strcmp(name, "GLOBIGNORE") == 0)) {
    journal_note(sh, name);
    g_free(v->value);
    v->value = value;
    if (sh->opts & O_ALLEXPORT) v->flags |= V_EXPORT;
    return true;
  }
  bool ok = box_var_set(sh, name, value);
  g_free(value);
  return ok;
}

void box_var_export(Shell *sh, const char *name)
{
  box_var_make(sh, name)->flags |= V_EXPORT;
}

void box_var_unset(Shell *sh, const char *name)
{
  ShellVar *v = var_find(sh, name);
  if (!v) return;
  if (name[0] == 'P' && strcmp(name, "PIPESTATUS") == 0) sh->pipestatus_one = -1;
  if (name[0] == 'O' && strcmp(name, "OPTIND") == 0) sh->optind_sub = 0;
  /* a local stays declared-local in its frame: just drop the value */
  g_hash_table_remove(sh->vars, name);
  if (name[0] == 'G' && strcmp(name, "GLOBIGNORE") == 0) box_globignore_sync(sh, true);
}

void box_var_make_array(ShellVar *v, bool assoc)
{
  if (assoc) {
    if (v->flags & V_ASSOC) return;
    char *old = v->value;
    v->value = NULL;
    box_var_clear(v);
    v->flags = (v->flags & ~V_ARRAY) | V_ASSOC;
    v->assoc = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    v->keys = g_ptr_array_new_with_free_func(g_free);
    if (old) {
      g_hash_table_insert(v->assoc, g_strdup("0"), old);
      g_ptr_array_add(v->keys, g_strdup("0"));
    }
    return;
  }
  if (v->flags & (V_ARRAY | V_ASSOC)) return;
  char *old = v->value;
  v->value = NULL;
  v->flags |= V_ARRAY;
  v->arr = g_ptr_array_new_with_free_func(g_free);
  if (old) g_ptr_array_add(v->arr, old);
}

/* The index key names in v, as bash evaluates it: false when it is out
 * of range, or when its arithmetic failed, said so and marked the command
 * for dropping (with no `let:` or `((:` before the message, as bash's). */
bool box_subscript_value(Shell *sh, const char *key, int64_t *out)
{
  const char *who = sh->arith_who;
  sh->arith_who = NULL;
  sh->arith_unbound = false;
  bool ok = box_arith(sh, key, out);
  sh->arith_who = who;
  if (!ok && !sh->arith_unbound) sh->subscript_failed = true;
  return ok;
}

static long elem_index(Shell *sh, ShellVar *v, const char *key, bool *ok)
{
  int64_t i = 0;
  *ok = box_subscript_value(sh, key, &i);
  sh->bad_subscript = false;
  if (!*ok) return 0;
  if (i < 0 && v->arr) i += v->arr->len;
  if (i < 0 || i > 10000000) *ok = false;
  sh->bad_subscript = i < 0;
  return (long)i;
}

bool box_errexit_ends(Shell *sh)
{
  if (!(sh->opts & O_ERREXIT)) return false;
  sh->jump = J_EXIT;
  sh->exit_status = 1;
  return true;
}

bool box_bad_subscript(Shell *sh, const char *what)
{
  box_sh_error(sh, "%s: bad array subscript", what);
  return box_errexit_ends(sh);
}

const char *box_var_elem(ShellVar *v, const char *key)
{
  Shell *sh = box_current_shell;
  if (v->flags & V_ASSOC) return g_hash_table_lookup(v->assoc, key);
  bool ok;
  long i = elem_index(sh, v, key, &ok);
  if (!ok) return NULL;
  if (v->flags & V_ARRAY) return (guint)i < v->arr->len ? v->arr->pdata[i] : NULL;
  return i == 0 ? v->value : NULL;
}

bool box_var_set_elem(Shell *sh, const char *name, const char *key, const char *value, bool append)
{
  ShellVar *v = var_find(sh, name);
  if (v && (v->flags & V_NAMEREF)) {
    name = deref_warn(sh, name, &v, true);
    if (!name) return circular(sh);
    if (v && (v->flags & V_NAMEREF) && v->value) {
      /* r[k]=x where r leads to an element: bash names the element */
      box_sh_error(sh, "`%s': not a valid identifier", v->value);
      sh->discard = true;
      return false;
    }
  }
  if (!check_ro(sh, v, name)) return false;
  journal_note(sh, name);
  if (!v) v = box_var_make(sh, name);
  if (!(v->flags & (V_ARRAY | V_ASSOC))) box_var_make_array(v, false);
  v->flags &= ~V_NOVALUE;
  char *nv;
  bool ok;
  long i = 0;
  char num[24];
  if (!(v->flags & V_ASSOC)) {
    /* the subscript first, once, as bash: an error in it is the only one */
    bool failed = sh->subscript_failed;
    sh->subscript_failed = false;
    i = elem_index(sh, v, key, &ok);
    bool arith_error = sh->subscript_failed;
    sh->subscript_failed |= failed;
    if (!ok) {
      if (!arith_error) {
        char *what = g_strdup_printf("%s[%s]", name, key);
        box_bad_subscript(sh, what);
        g_free(what);
      }
      return false;
    }
    key = box_i64_str(i, num);
  }
  if (append && !(v->flags & V_INTEGER)) {
    const char *old = box_var_elem(v, key);
    char *t = g_strconcat(old ? old : "", value, NULL);
    nv = transform(v, t);
    g_free(t);
  } else if (append) {
    nv = box_int_append(sh, box_var_elem(v, key), value);
    if (!nv) return false;
  } else {
    nv = int_value(sh, v, value, &ok);
    if (!ok) return false;
  }
  if (v->flags & V_ASSOC) {
    if (!g_hash_table_contains(v->assoc, key)) g_ptr_array_add(v->keys, g_strdup(key));
    g_hash_table_insert(v->assoc, g_strdup(key), nv);
    return true;
  }
  if ((guint)i >= v->arr->len) g_ptr_array_set_size(v->arr, (guint)i + 1);
  g_free(v->arr->pdata[i]);
  v->arr->pdata[i] = nv;
  return true;
}

int box_var_unset_elem(Shell *sh, const char *name, const char *key)
{
  ShellVar *v = var_find(sh, name);
  if (!v) return 0;
  if (v->flags & V_ASSOC) {
    g_hash_table_remove(v->assoc, key);
    for (guint i = 0; i < v->keys->len; i++)
      if (strcmp(v->keys->pdata[i], key) == 0) {
        g_ptr_array_remove_index(v->keys, i);
        break;
      }
    return 0;
  }
  if ((v->flags & V_ARRAY) && (strcmp(key, "@") == 0 || strcmp(key, "*") == 0)) {
    /* every element; the array stays, empty, with its attributes */
    g_ptr_array_set_size(v->arr, 0);
    return 0;
  }
  bool ok;
  long i = elem_index(sh, v, key, &ok);
  if (!(v->flags & V_ARRAY)) {
    if (ok && i == 0) {
      box_var_unset(sh, name);
      return 0;
    }
    return sh->bad_subscript || ok ? BOX_UNSET_NOT_ARRAY : 0;
  }
  if (!ok) return sh->bad_subscript ? BOX_UNSET_BAD_SUBSCRIPT : 0;
  if ((guint)i < v->arr->len) {
    g_free(v->arr->pdata[i]);
    v->arr->pdata[i] = NULL;
    while (v->arr->len && !v->arr->pdata[v->arr->len - 1])
      g_ptr_array_set_size(v->arr, v->arr->len - 1);
  }
  return 0;
}

/* bash keeps an associative array in a hash table of 1024 buckets (FNV-1
 * of the key), each bucket a list with the newest key first, and lists
 * the keys bucket by bucket: scripts see that order, so we list ours so. */
static unsigned bash_bucket(const char *s)
{
  uint32_t h = 2166136261u;
  for (; *s; s++) {
    h *= 16777619u;
    h ^= (uint32_t)(int32_t)(signed char)*s;
  }
  return h & 1023u;
}

typedef struct {
  unsigned bucket;
  guint pos;
} AssocOrder;

static int assoc_order_cmp(const void *a, const void *b)
{
  const AssocOrder *x = a, *y = b;
  if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
  return x->pos > y->pos ? -1 : x->pos < y->pos; /* newest first */
}

GPtrArray *box_var_assoc_keys(ShellVar *v)
{
  GPtrArray *r = g_ptr_array_new();
  if (!v || !(v->flags & V_ASSOC)) return r;
  guint n = v->keys->len;
  AssocOrder *o = g_new(AssocOrder, n ? n : 1);
  for (guint i = 0; i < n; i++) {
    o[i].bucket = bash_bucket(v->keys->pdata[i]);
    o[i].pos = i;
  }
  qsort(o, n, sizeof *o, assoc_order_cmp);
  for (guint i = 0; i < n; i++) g_ptr_array_add(r, v->keys->pdata[o[i].pos]);
  g_free(o);
  return r;
}

GPtrArray *box_var_values(ShellVar *v, bool keys)
{
  if (v && (v->flags & V_ASSOC)) {
    GPtrArray *r = box_var_assoc_keys(v);
    if (!keys)
      for (guint i = 0; i < r->len; i++) r->pdata[i] = g_hash_table_lookup(v->assoc, r->pdata[i]);
    return r;
  }
  GPtrArray *r = g_ptr_array_new();
  if (!v) return r;
  if (v->flags & V_ARRAY) {
    for (guint i = 0; i < v->arr->len; i++) {
      if (!v->arr->pdata[i]) continue;
      g_ptr_array_add(r, keys ? (gpointer)g_strdup_printf("%u", i) : v->arr->pdata[i]);
    }
    return r;
  }
  if (v->value) g_ptr_array_add(r, keys ? g_strdup("0") : v->value);
  return r;
}

bool box_var_isset(Shell *sh, const char *ref)
{
  char *name, *key;
  if (!box_split_ref(ref, &name, &key)) return false;
  char *elem_arr = NULL, *elem_key = NULL;
  if (!key && box_nameref_elem(sh, name, &elem_arr, &elem_key)) {
    /* bash's -v finds no variable behind a nameref to an element */
    g_free(elem_arr);
    g_free(elem_key);
    g_free(name);
    return false;
  }
  ShellVar *v = box_var_lookup(sh, name);
  bool r = false;
  /* an associative array's @ is a key like another (bash's reading) */
  if (v && key && !(v->flags & V_ASSOC) && (strcmp(key, "@") == 0 || strcmp(key, "*") == 0)) {
    if (v->flags & V_ARRAY)
      for (guint i = 0; i < v->arr->len && !r; i++) r = v->arr->pdata[i] != NULL;
    else
      r = v->value != NULL;
  } else if (v) {
    g_autofree char *k = key ? box_elem_key(sh, name, key) : NULL;
    r = (!key || k) && box_var_elem(v, key ? k : "0") != NULL;
  }
  /* the dynamic ones (RANDOM, LINENO, …) have no entry of their own */
  if (!r && !key) r = box_var_get(sh, name) != NULL;
  g_free(name);
  g_free(key);
  return r;
}

ShellVar *box_var_local(Shell *sh, const char *name)
{
  if (!sh->frames->len) return NULL;
  GArray *frame = g_ptr_array_index(sh->frames, sh->frames->len - 1);
  for (guint i = 0; i < frame->len; i++)
    if (strcmp(g_array_index(frame, SavedVar, i).name, name) == 0) return box_var_make(sh, name);
  SavedVar s;
  s.name = g_strdup(name);
  gpointer key = NULL, val = NULL;
  if (g_hash_table_lookup_extended(sh->vars, name, &key, &val)) {
    g_hash_table_steal(sh->vars, name);
    g_free(key);
    s.saved = val;
  } else {
    s.saved = NULL;
  }
  g_array_append_val(frame, s);
  ShellVar *v = box_var_make(sh, name);
  if (s.saved) v->flags |= s.saved->flags & V_EXPORT;
  return v;
}

void box_frame_push(Shell *sh)
{
  g_ptr_array_add(sh->frames, g_array_new(FALSE, FALSE, sizeof(SavedVar)));
}

void box_frame_pop(Shell *sh)
{
  box_var_restore(sh, g_ptr_array_steal_index(sh->frames, sh->frames->len - 1));
}

bool box_var_unset_temp(Shell *sh, const char *name)
{
  GArray *t = sh->temp_scope;
  if (!t) return false;
  for (guint f = sh->temp_frames; f < sh->frames->len; f++) {
    GArray *frame = g_ptr_array_index(sh->frames, f);
    for (guint i = 0; i < frame->len; i++)
      if (strcmp(g_array_index(frame, SavedVar, i).name, name) == 0) return false;
  }
  for (guint i = 0; i < t->len; i++) {
    SavedVar *s = &g_array_index(t, SavedVar, i);
    if (strcmp(s->name, name) != 0) continue;
    g_hash_table_remove(sh->vars, name);
    if (s->saved) g_hash_table_insert(sh->vars, g_strdup(name), s->saved);
    g_free(s->name);
    g_array_remove_index(t, i);
    return true;
  }
  return false;
}

void box_var_restore(Shell *sh, GArray *saved)
{
  for (guint i = saved->len; i-- > 0;) {
    SavedVar *s = &g_array_index(saved, SavedVar, i);
    g_hash_table_remove(sh->vars, s->name);
    if (s->saved) g_hash_table_insert(sh->vars, g_strdup(s->name), s->saved);
    g_free(s->name);
  }
  g_array_free(saved, TRUE);
}

static gint cmp_strp(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The process's own time functions (strftime, localtime) use the time
 * zone a child would get: TZ as exported (bash calls tzset when an
 * exported TZ changes).  Applied before each command the Shell runs
 * itself; one lookup when TZ has not changed. */
void box_apply_tz(Shell *sh)
{
  static char *applied;
  static bool known;
  if (!known) {
    /* the process's own TZ is in force already: nothing to do for a
     * command that leaves it (tzset would look for /etc/localtime) */
    applied = g_strdup(g_getenv("TZ"));
    known = true;
  }
  ShellVar *v = box_var_lookup(sh, "TZ");
  const char *tz =
    v && (v->flags & V_EXPORT) && !(v->flags & (V_ARRAY | V_ASSOC)) ? box_var_get(sh, "TZ") : NULL;
  if (g_strcmp0(tz, applied) == 0) return;
  if (tz)
    g_setenv("TZ", tz, TRUE);
  else
    g_unsetenv("TZ");
  tzset();
  g_free(applied);
  applied = g_strdup(tz);
}

void box_var_attr_letters(const ShellVar *v, GString *out)
{
  static const struct {
    unsigned flag;
    char letter;
  } letters[] = { { V_ARRAY, 'a' },   { V_ASSOC, 'A' },    { V_INTEGER, 'i' }, { V_LOWER, 'l' },
                  { V_NAMEREF, 'n' }, { V_READONLY, 'r' }, { V_UPPER, 'u' },   { V_EXPORT, 'x' } };
  for (size_t i = 0; v && i < G_N_ELEMENTS(letters); i++)
    if (v->flags & letters[i].flag) g_string_append_c(out, letters[i].letter);
}

char **box_var_environ(Shell *sh)
{
  GPtrArray *e = g_ptr_array_new();
  GHashTableIter it;
  gpointer k, val;
  g_hash_table_iter_init(&it, sh->vars);
  while (g_hash_table_iter_next(&it, &k, &val)) {
    ShellVar *v = val;
    /* bash exports no array, not even its element 0 */
    if (!(v->flags & V_EXPORT) || (v->flags & (V_ARRAY | V_ASSOC))) continue;
    /* a nameref goes as the name it holds (bash's) */
    const char *s = v->flags & V_NAMEREF ? v->value : box_var_get(sh, k);
    if (!s) continue;
    g_ptr_array_add(e, g_strconcat(k, "=", s, NULL));
  }
  g_ptr_array_sort(e, cmp_strp);
  g_ptr_array_add(e, NULL);
  return (char **)g_ptr_array_free(e, FALSE);
}
