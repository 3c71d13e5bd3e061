/* validate.c — the load checks that run after parsing (spec/policy.md
 * §3.4), in the spec's order: duplicate @id, reserved action,
 * cap-as-permit, the temporal checks, strict validation (unknown actions,
 * entity types and enum eids, undeclared context attributes, unguarded
 * optional ones) and inert literals; then each action's rules indexed. */
#include "policy/validate.h"
#include "policy/inert.h"
#include "policy/message.h"
#include "policy/temporal_check.h"
#include "policy/typecheck.h"

#include <stdarg.h>
#include <string.h>

typedef struct {
  BoxPolicy *pol;
  const Rule *rule;
  GPtrArray *unknown_action; /* char*, already positioned */
  GPtrArray *schema;         /* char* */
} Check;

static void add_err(GPtrArray *into, const Expr *at, int line, int col, const char *fmt, ...)
  G_GNUC_PRINTF(5, 6);
static void add_err(GPtrArray *into, const Expr *at, int line, int col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (at) {
    line = at->line;
    col = at->col;
  }
  g_ptr_array_add(into, g_strdup_printf("%s at line %d, column %d", what, line, col));
  g_free(what);
}

/* Checks one entity literal: known type, known action, declared eid. */
static void check_entity(Check *c, const Expr *e)
{
  const char *pid = c->rule->engine_id;
  if (strcmp(e->etype, "Box::Action") == 0 || g_str_has_suffix(e->etype, "::Action") ||
      strcmp(e->etype, "Action") == 0) {
    /* a pending namespace's actions are checked when its tools are known */
    if (policy_action_lookup(e->etype, e->str, e->len) < 0 && !policy_namespace_pending(e->etype))
      add_err(c->unknown_action, e, 0, 0, "for policy `%s`, unrecognized action `%s::\"%s\"`", pid,
              e->etype, e->str);
    return;
  }
  if (!policy_entity_type_known(e->etype)) {
    add_err(c->schema, e, 0, 0, "for policy `%s`, unrecognized entity type `%s`", pid, e->etype);
    return;
  }
  bool is_enum = false;
  if (!policy_enum_has(e->etype, e->str, e->len, &is_enum) && is_enum)
    add_err(c->schema, e, 0, 0,
            "for policy `%s`: entity `%s::\"%s\"` is of an enumerated entity type, but `\"%s\"` is "
            "not declared as a valid eid",
            pid, e->etype, e->str, e->str);
}

static void walk_entities(Check *c, const Expr *e)
{
  if (!e) return;
  if (e->kind == E_ENTITY) check_entity(c, e);
  if ((e->kind == E_IS) && !policy_entity_type_known(e->etype))
    add_err(c->schema, e, 0, 0, "for policy `%s`, unrecognized entity type `%s`",
            c->rule->engine_id, e->etype);
  walk_entities(c, e->a);
  walk_entities(c, e->b);
  walk_entities(c, e->c);
  if (e->kind == E_SET || e->kind == E_RECORD)
    for (size_t i = 0; i < e->nitems; i++) walk_entities(c, e->items[i]);
}

static bool blank_or_null(const char *s)
{
  if (!s) return true;
  for (; *s; s++)
    if (!g_ascii_isspace(*s)) return false;
  return true;
}

static int cmp_str(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool check_duplicate_ids(BoxPolicy *pol, GError **error)
{
  GHashTable *seen =
    g_hash_table_new(g_str_hash, g_str_equal); /* id → GArray<int> of rule indexes */
  GPtrArray *dups = g_ptr_array_new();
  int line = 0, col = 0;
  for (size_t i = 0; i < pol->nrules; i++) {
    const Rule *r = &pol->rules[i];
    if (blank_or_null(r->id)) continue;
    GArray *a = g_hash_table_lookup(seen, r->id);
    if (!a) {
      a = g_array_new(FALSE, FALSE, sizeof(int));
      g_hash_table_insert(seen, r->id, a);
    } else if (a->len == 1) {
      g_ptr_array_add(dups, r->id);
      if (line == 0) {
        line = r->id_line;
        col = r->id_col;
      }
    }
    int pos = (int)i + 1;
    g_array_append_val(a, pos);
  }
  bool ok = dups->len == 0;
  if (!ok) {
    g_ptr_array_sort(dups, cmp_str);
    GString *m = g_string_new(POLICY_SHARED_ID_PREFIX);
    for (guint i = 0; i < dups->len; i++) {
      GArray *a = g_hash_table_lookup(seen, dups->pdata[i]);
      g_string_append_printf(m, "@id(\"%s\") is on rules ", (const char *)dups->pdata[i]);
      for (guint j = 0; j < a->len; j++)
        g_string_append_printf(m, "%s%d", j ? ", " : "", g_array_index(a, int, j));
      g_string_append(m, "; ");
    }
    g_string_append_printf(m,
                           "a denial and a telemetry record name a rule by its @id, so give each "
                           "rule its own @id at line %d, column %d",
                           line, col);
    g_set_error_literal(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA, m->str);
    g_string_free(m, TRUE);
  }
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, seen);
  while (g_hash_table_iter_next(&it, &k, &v)) g_array_free(v, TRUE);
  g_hash_table_destroy(seen);
  g_ptr_array_free(dups, TRUE);
  return ok;
}

static bool check_reserved(BoxPolicy *pol, GError **error)
{
  GString *m = NULL;
  int line = 0, col = 0;
  for (size_t i = 0; i < pol->nrules; i++) {
    const Rule *r = &pol->rules[i];
    if (r->action.op == SC_ANY || r->action.nents == 0) continue;
    bool only_other = true;
    for (size_t j = 0; j < r->action.nents; j++) {
      const Expr *e = r->action.ents[j];
      if (strcmp(e->etype, "Box::Action") != 0 || strcmp(e->str, "fs:other") != 0)
        only_other = false;
    }
    if (!only_other) continue;
    char *name = policy_rule_name(r);
    if (!m) {
      m = g_string_new(POLICY_RESERVED_PREFIX);
      line = r->action.line;
      col = r->action.col;
    } else {
      g_string_append(m, "; ");
    }
    g_string_append_printf(m, "%s (rule %d) names only the reserved action \"fs:other\"", name,
                           r->index + 1);
    g_free(name);
  }
  if (!m) return true;
  g_string_append_printf(
    m,
    "; no operation raises it, so the rule cannot match; name fs:read, fs:write, "
    "fs:delete, or fs:move, alone or beside fs:other at line %d, column %d",
    line, col);
  g_set_error_literal(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA, m->str);
  g_string_free(m, TRUE);
  return false;
}

static void check_scope_entity(Check *c, const ScopeConstraint *sc, const char *want_type)
{
  for (size_t i = 0; i < sc->nents; i++) {
    const Expr *e = sc->ents[i];
    check_entity(c, e);
    if (want_type && policy_entity_type_known(e->etype) && strcmp(e->etype, want_type) != 0 &&
        strcmp(e->etype, "Box::Action") != 0)
      add_err(
        c->schema, e, 0, 0,
        "for policy `%s`, unable to find an applicable action given the policy scope constraints",
        c->rule->engine_id);
  }
  if (sc->is_type && !policy_entity_type_known(sc->is_type))
    add_err(c->schema, NULL, sc->line, sc->col, "for policy `%s`, unrecognized entity type `%s`",
            c->rule->engine_id, sc->is_type);
}

/* Does the fixed principal/resource satisfy the constraint? */
static bool scope_matches_fixed(const ScopeConstraint *sc, const char *type, const char *id)
{
  switch (sc->op) {
  case SC_ANY: return true;
  case SC_EQ:
  case SC_IN: return strcmp(sc->ents[0]->etype, type) == 0 && strcmp(sc->ents[0]->str, id) == 0;
  case SC_IS: return strcmp(sc->is_type, type) == 0;
  case SC_IS_IN:
    return strcmp(sc->is_type, type) == 0 && strcmp(sc->ents[0]->etype, type) == 0 &&
           strcmp(sc->ents[0]->str, id) == 0;
  case SC_IN_SET: return false;
  }
  return false;
}

/* Marks the actions rule r applies to (those of type etype only, unless
 * NULL) and lists them in order; whether it names or reaches any. */
static bool applicable(Rule *r, const char *etype, int *order, int *norder)
{
  bool fixed = scope_matches_fixed(&r->principal, "Box::Agent", "self") &&
               scope_matches_fixed(&r->resource, "Box::Resource", "unused");
  bool any = false;
  size_t n = policy_nactions;
  if (r->action.op == SC_ANY) {
    for (size_t a = 0; a < n; a++) {
      if (etype && strcmp(policy_action_etype((int)a), etype) != 0) continue;
      r->applies[a] = fixed;
      order[(*norder)++] = (int)a;
    }
    return true;
  }
  for (size_t j = 0; j < r->action.nents; j++) {
    const Expr *e = r->action.ents[j];
    if (etype && strcmp(e->etype, etype) != 0) continue;
    int a = policy_action_lookup(e->etype, e->str, e->len);
    if (a < 0) continue;
    bool dup = false;
    for (int k = 0; k < *norder; k++) dup |= order[k] == a;
    if (!dup) order[(*norder)++] = a;
    r->applies[a] = fixed;
    any = true;
  }
  return any;
}

static char *join_errors(const char *prefix, GPtrArray *errs)
{
  GString *m = g_string_new(prefix);
  for (guint i = 0; i < errs->len; i++) {
    if (i) g_string_append(m, "; ");
    g_string_append(m, errs->pdata[i]);
  }
  return g_string_free(m, FALSE);
}

/* The rules that can apply to action a, in file order; from now on its
 * decisions are made. */
static void index_action(BoxPolicy *pol, int a)
{
  size_t n = 0;
  for (size_t i = 0; i < pol->nrules; i++) n += pol->rules[i].applies[a];
  pol->by_action[a] = policy_own(pol, g_new0(const Rule *, n + 1));
  pol->nby_action[a] = 0;
  for (size_t i = 0; i < pol->nrules; i++)
    if (pol->rules[i].applies[a]) pol->by_action[a][pol->nby_action[a]++] = &pol->rules[i];
  __atomic_store_n(&pol->installed[a], true, __ATOMIC_RELEASE);
}

bool policy_validate(BoxPolicy *pol, const char *operator_home, GError **error)
{
  /* §3.4 order: duplicate @id, reserved action, cap-as-permit, strict
   * validation, inert literals */
  if (!check_duplicate_ids(pol, error)) return false;
  if (!check_reserved(pol, error)) return false;
  if (!policy_check_cap_as_permit(pol, error)) return false;
  if (!policy_temporal_validate(pol, error)) return false; /* §2.6 temporal load checks */

  Check c = { pol, NULL, g_ptr_array_new_with_free_func(g_free),
              g_ptr_array_new_with_free_func(g_free) };
  for (size_t i = 0; i < pol->nrules; i++) {
    Rule *r = &pol->rules[i];
    c.rule = r;
    size_t before = c.unknown_action->len, before_schema = c.schema->len;
    check_scope_entity(&c, &r->principal, "Box::Agent");
    check_scope_entity(&c, &r->resource, "Box::Resource");
    for (size_t j = 0; j < r->action.nents; j++) check_entity(&c, r->action.ents[j]);
    /* applicable actions */
    memset(r->applies, 0, sizeof r->applies);
    int order[POLICY_MAX_ACTIONS];
    int norder = 0;
    bool any = applicable(r, NULL, order, &norder);
    if (r->action.op != SC_ANY) {
      bool waits = false; /* it names only actions of servers not listed yet */
      for (size_t j = 0; j < r->action.nents; j++)
        waits |= policy_namespace_pending(r->action.ents[j]->etype);
      if (!any && !waits)
        add_err(
          c.unknown_action, NULL, r->action.line, r->action.col,
          "for policy `%s`, unable to find an applicable action given the policy scope constraints",
          r->engine_id);
    }
    for (size_t k = 0; k < r->nclauses; k++) walk_entities(&c, r->clauses[k].expr);
    if (c.unknown_action->len != before || c.schema->len != before_schema) continue;
    /* strict typing, per applicable action */
    policy_typecheck_rule(r, order, norder, c.schema);
  }
  bool ok = true;
  if (c.unknown_action->len) {
    char *m = join_errors(POLICY_UNKNOWN_ACTION_PREFIX, c.unknown_action);
    g_set_error_literal(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA, m);
    g_free(m);
    ok = false;
  } else if (c.schema->len) {
    char *m = join_errors(POLICY_SCHEMA_PREFIX, c.schema);
    g_set_error_literal(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA, m);
    g_free(m);
    ok = false;
  }
  g_ptr_array_free(c.unknown_action, TRUE);
  g_ptr_array_free(c.schema, TRUE);
  if (!ok) return false;
  if (!policy_check_inert(pol, operator_home, error)) return false;
  size_t n = policy_nactions;
  for (size_t a = 0; a < n; a++) index_action(pol, (int)a);
  return true;
}

/* Installs serialized: two servers may finish listing at once. */
static GMutex install_lock;

bool box_policy_install_actions(BoxPolicy *pol, const char *ns, GError **error)
{
  g_autofree char *etype = g_strconcat(ns, "::Action", NULL);
  g_mutex_lock(&install_lock);
  GPtrArray *unknown = g_ptr_array_new_with_free_func(g_free),
            *schema = g_ptr_array_new_with_free_func(g_free);
  for (size_t i = 0; i < pol->nrules; i++) {
    Rule *r = &pol->rules[i];
    for (size_t j = 0; j < r->action.nents; j++) {
      const Expr *e = r->action.ents[j];
      if (strcmp(e->etype, etype) == 0 &&
          !policy_action_listed(policy_action_lookup(e->etype, e->str, e->len)))
        add_err(unknown, e, 0, 0, "for policy `%s`, unrecognized action `%s::\"%s\"`", r->engine_id,
                e->etype, e->str);
    }
    int order[POLICY_MAX_ACTIONS], norder = 0;
    applicable(r, etype, order, &norder);
    policy_typecheck_rule(r, order, norder, schema);
  }
  bool ok = unknown->len == 0 && schema->len == 0;
  if (!ok) {
    char *m = join_errors(unknown->len ? POLICY_UNKNOWN_ACTION_PREFIX : POLICY_SCHEMA_PREFIX,
                          unknown->len ? unknown : schema);
    g_set_error_literal(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA, m);
    g_free(m);
  }
  /* the history rules' predicates on its tools, once its rules fit them */
  ok = ok && policy_temporal_install(pol, etype, error);
  if (ok) {
    size_t n = policy_nactions;
    for (size_t a = 0; a < n; a++)
      if (strcmp(policy_action_etype((int)a), etype) == 0 && !policy_installed(pol, (int)a))
        index_action(pol, (int)a);
  }
  g_ptr_array_free(unknown, TRUE);
  g_ptr_array_free(schema, TRUE);
  g_mutex_unlock(&install_lock);
  return ok;
}
