/* schema.c — the closed Box schema (spec/policy.md §4) and the load checks
 * that run after parsing (§3.4): duplicate @id, reserved action, unknown
 * actions / entity types / enum eids, undeclared context attributes and
 * unguarded optional attributes. */
#include "policy/policy-private.h"

#include <string.h>

static const FieldDecl fs_in[] = {{"path", FT_STRING, false}, {"operation", FT_ENUM, false}};
static const FieldDecl fs_out[] = {{"result", FT_ENUM, false}};
static const FieldDecl net_in[] = {{"host", FT_STRING, false}, {"ip", FT_STRING, true}, {"port", FT_LONG, false}};
static const FieldDecl http_in[] = {{"host", FT_STRING, false},   {"port", FT_LONG, false},
                                    {"method", FT_STRING, false}, {"path", FT_STRING, false},
                                    {"body_bytes", FT_LONG, false}, {"intercepted", FT_BOOL, false}};
static const FieldDecl status_out[] = {{"status", FT_LONG, false}};
static const FieldDecl exec_in[] = {{"command", FT_STRING, false}, {"program", FT_STRING, false},
                                    {"arg1", FT_STRING, true},     {"arg2", FT_STRING, true},
                                    {"arg_count", FT_LONG, false}, {"cwd", FT_STRING, false}};
static const FieldDecl spawn_in[] = {{"command", FT_STRING, false},     {"program", FT_STRING, false},
                                     {"arg1", FT_STRING, true},         {"arg2", FT_STRING, true},
                                     {"arg_count", FT_LONG, false},     {"cwd", FT_STRING, false},
                                     {"program_path", FT_STRING, false}, {"credential_reads", FT_SET_STRING, true}};
static const FieldDecl mcp_in[] = {{"server", FT_STRING, false}, {"method", FT_STRING, false},
                                   {"tool", FT_STRING, true},    {"prompt", FT_STRING, true},
                                   {"uri", FT_STRING, true}};

#define N(a) (sizeof(a) / sizeof((a)[0]))
const ActionDecl policy_actions[] = {
    {"fs:read", "Box::FsReadOperation", fs_in, N(fs_in), fs_out, N(fs_out)},
    {"fs:write", "Box::FsWriteOperation", fs_in, N(fs_in), fs_out, N(fs_out)},
    {"fs:delete", "Box::FsDeleteOperation", fs_in, N(fs_in), fs_out, N(fs_out)},
    {"fs:move", "Box::FsMoveOperation", fs_in, N(fs_in), fs_out, N(fs_out)},
    {"fs:other", "Box::FsOtherOperation", fs_in, N(fs_in), fs_out, N(fs_out)},
    {"net:connect", NULL, net_in, N(net_in), NULL, 0},
    {"http:request", NULL, http_in, N(http_in), status_out, N(status_out)},
    {"shell:exec", NULL, exec_in, N(exec_in), status_out, N(status_out)},
    {"shell:spawn", NULL, spawn_in, N(spawn_in), status_out, N(status_out)},
    {"mcp:call", NULL, mcp_in, N(mcp_in), NULL, 0},
};
const size_t policy_nactions = N(policy_actions);
#define FS_OTHER 4

typedef struct {
  const char *type;
  const char *const *eids;
} EnumDecl;

static const char *const read_ops[] = {"read_content", "read_metadata", "enumerate", "read_link", "change_dir", "exec", NULL};
static const char *const write_ops[] = {"write_content", "create_dir", "set_permissions", "symlink", NULL};
static const char *const delete_ops[] = {"remove_file", "remove_dir", NULL};
static const char *const move_ops[] = {"rename", NULL};
static const char *const other_ops[] = {"other", NULL};
static const char *const results[] = {"completed", "descriptor_issued", "indeterminate", NULL};
static const EnumDecl enums[] = {
    {"Box::FsReadOperation", read_ops},   {"Box::FsWriteOperation", write_ops},
    {"Box::FsDeleteOperation", delete_ops}, {"Box::FsMoveOperation", move_ops},
    {"Box::FsOtherOperation", other_ops}, {"Box::FsResponseResult", results},
};

int policy_action_index(const char *term) {
  if (!term) return -1;
  for (size_t i = 0; i < policy_nactions; i++)
    if (strcmp(policy_actions[i].term, term) == 0) return (int)i;
  return -1;
}

const FieldDecl *policy_field(const FieldDecl *fields, size_t n, const char *name, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(fields[i].name) == len && memcmp(fields[i].name, name, len) == 0) return &fields[i];
  return NULL;
}

bool policy_enum_has(const char *type, const char *eid, size_t len, bool *is_enum) {
  for (size_t i = 0; i < N(enums); i++) {
    if (strcmp(enums[i].type, type) != 0) continue;
    if (is_enum) *is_enum = true;
    for (const char *const *e = enums[i].eids; *e; e++)
      if (strlen(*e) == len && memcmp(*e, eid, len) == 0) return true;
    return false;
  }
  if (is_enum) *is_enum = false;
  return false;
}

bool policy_entity_type_known(const char *type) {
  if (strcmp(type, "Box::Agent") == 0 || strcmp(type, "Box::Resource") == 0 ||
      strcmp(type, "Box::Action") == 0)
    return true;
  bool is_enum = false;
  policy_enum_has(type, "", 0, &is_enum);
  return is_enum;
}

/* ---- request gate ------------------------------------------------------ */

bool policy_request_valid(int action, json_object *input, char **why) {
  const ActionDecl *ad = &policy_actions[action];
  if (!input || !json_object_is_type(input, json_type_object)) {
    *why = g_strdup("the request input is not a record");
    return false;
  }
  json_object_object_foreach(input, key, val) {
    const FieldDecl *f = policy_field(ad->input, ad->ninput, key, strlen(key));
    if (!f) {
      *why = g_strdup_printf("attribute `input.%s` is not declared for Box::Action::\"%s\"", key, ad->term);
      return false;
    }
    bool ok = false;
    switch (f->type) {
    case FT_STRING: ok = json_object_is_type(val, json_type_string); break;
    case FT_LONG: ok = json_object_is_type(val, json_type_int); break;
    case FT_BOOL: ok = json_object_is_type(val, json_type_boolean); break;
    case FT_ENUM:
      ok = json_object_is_type(val, json_type_string) &&
           policy_enum_has(ad->enum_type, json_object_get_string(val),
                           (size_t)json_object_get_string_len(val), NULL);
      break;
    case FT_SET_STRING:
      ok = json_object_is_type(val, json_type_array);
      for (size_t i = 0; ok && i < json_object_array_length(val); i++)
        ok = json_object_is_type(json_object_array_get_idx(val, i), json_type_string);
      break;
    }
    if (!ok) {
      *why = g_strdup_printf("attribute `input.%s` has the wrong type for Box::Action::\"%s\"", key, ad->term);
      return false;
    }
  }
  for (size_t i = 0; i < ad->ninput; i++) {
    if (!ad->input[i].optional && !json_object_object_get_ex(input, ad->input[i].name, NULL)) {
      *why = g_strdup_printf("required attribute `input.%s` is missing for Box::Action::\"%s\"",
                             ad->input[i].name, ad->term);
      return false;
    }
  }
  return true;
}

/* ---- load checks -------------------------------------------------------- */

typedef struct {
  BoxPolicy *pol;
  const Rule *rule;
  GPtrArray *unknown_action; /* char*, already positioned */
  GPtrArray *schema;         /* char* */
} Check;

static void add_err(GPtrArray *into, const Expr *at, int line, int col, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);
static void add_err(GPtrArray *into, const Expr *at, int line, int col, const char *fmt, ...) {
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
static void check_entity(Check *c, const Expr *e) {
  const char *pid = c->rule->engine_id;
  if (strcmp(e->etype, "Box::Action") == 0 || g_str_has_suffix(e->etype, "::Action") ||
      strcmp(e->etype, "Action") == 0) {
    if (strcmp(e->etype, "Box::Action") != 0 || policy_action_index(e->str) < 0)
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

static void walk_entities(Check *c, const Expr *e) {
  if (!e) return;
  if (e->kind == E_ENTITY) check_entity(c, e);
  if ((e->kind == E_IS) && !policy_entity_type_known(e->etype))
    add_err(c->schema, e, 0, 0, "for policy `%s`, unrecognized entity type `%s`", c->rule->engine_id, e->etype);
  walk_entities(c, e->a);
  walk_entities(c, e->b);
  walk_entities(c, e->c);
  if (e->kind == E_SET || e->kind == E_RECORD)
    for (size_t i = 0; i < e->nitems; i++) walk_entities(c, e->items[i]);
}

/* Capabilities: attributes proven present by `has` (level 1 = context.input,
 * 2 = context.output, 0 = context itself). */
#define MAX_CAPS 32
typedef struct {
  int n;
  int level[MAX_CAPS];
  const char *name[MAX_CAPS];
} Caps;

static bool caps_has(const Caps *c, int level, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (c->level[i] == level && strcmp(c->name[i], name) == 0) return true;
  return false;
}
static void caps_add(Caps *c, int level, const char *name) {
  if (caps_has(c, level, name) || c->n >= MAX_CAPS) return;
  c->level[c->n] = level;
  c->name[c->n] = name;
  c->n++;
}
static void caps_union(Caps *into, const Caps *b) {
  for (int i = 0; i < b->n; i++) caps_add(into, b->level[i], b->name[i]);
}
static Caps caps_inter(const Caps *a, const Caps *b) {
  Caps r = {0};
  for (int i = 0; i < a->n; i++)
    if (caps_has(b, a->level[i], a->name[i])) caps_add(&r, a->level[i], a->name[i]);
  return r;
}

static bool is_var(const Expr *e, VarKind v) { return e && e->kind == E_VAR && e->var == v; }
/* level of a context record expression: 0 context, 1 context.input, 2 context.output, -1 other */
static int ctx_level(const Expr *e) {
  if (is_var(e, VAR_CONTEXT)) return 0;
  if (e && e->kind == E_GETATTR && is_var(e->a, VAR_CONTEXT)) {
    if (strcmp(e->str, "input") == 0) return 1;
    if (strcmp(e->str, "output") == 0) return 2;
  }
  return -1;
}

typedef struct {
  Check *c;
  int action;
  bool reported; /* one attribute error per rule and action is enough */
} TyCtx;

/* Returns whether e is statically false; fills *out with the capabilities
 * e establishes when true. */
static bool ty(TyCtx *t, const Expr *e, const Caps *in, Caps *out);

static void attr_error(TyCtx *t, const Expr *at, const char *path, bool optional) {
  const char *pid = t->c->rule->engine_id;
  if (optional)
    add_err(t->c->schema, at, 0, 0,
            "for policy `%s`, unable to guarantee safety of access to optional attribute `%s` in "
            "context for Box::Action::\"%s\"",
            pid, path, policy_actions[t->action].term);
  else
    add_err(t->c->schema, at, 0, 0, "for policy `%s`, attribute `%s` in context for Box::Action::\"%s\" not found",
            pid, path, policy_actions[t->action].term);
}

/* Field lookup at a context level: returns 1 declared required, 2 declared
 * optional, 0 undeclared. */
static int ctx_field(int action, int level, const char *name) {
  const ActionDecl *ad = &policy_actions[action];
  size_t len = strlen(name);
  if (level == 0) {
    if (strcmp(name, "input") == 0) return 1;
    if (strcmp(name, "output") == 0) return ad->output ? 2 : 0;
    return 0;
  }
  const FieldDecl *f = level == 1 ? policy_field(ad->input, ad->ninput, name, len)
                                  : policy_field(ad->output, ad->noutput, name, len);
  if (!f) return 0;
  return f->optional ? 2 : 1;
}

static bool ty(TyCtx *t, const Expr *e, const Caps *in, Caps *out) {
  Caps dummy = {0};
  out->n = 0;
  if (!e) return false;
  switch (e->kind) {
  case E_AND: {
    Caps ca = {0}, cb = {0};
    if (ty(t, e->a, in, &ca)) return true; /* False && e: e is not checked */
    Caps inb = *in;
    caps_union(&inb, &ca);
    bool fb = ty(t, e->b, &inb, &cb);
    *out = ca;
    caps_union(out, &cb);
    return fb;
  }
  case E_OR: {
    Caps ca = {0}, cb = {0};
    bool fa = ty(t, e->a, in, &ca);
    bool fb = ty(t, e->b, in, &cb);
    if (fa) {
      *out = cb;
      return fb;
    }
    if (fb) {
      *out = ca;
      return false;
    }
    *out = caps_inter(&ca, &cb);
    return false;
  }
  case E_IF: {
    Caps cc = {0}, ct = {0}, ce = {0};
    bool fc = ty(t, e->a, in, &cc);
    if (fc) return ty(t, e->c, in, out);
    Caps inthen = *in;
    caps_union(&inthen, &cc);
    bool ft = ty(t, e->b, &inthen, &ct);
    bool fe = ty(t, e->c, in, &ce);
    caps_union(&ct, &cc);
    *out = caps_inter(&ct, &ce);
    return ft && fe;
  }
  case E_HAS: {
    int level = ctx_level(e->a);
    if (level >= 0) {
      int lvl = level;
      for (size_t i = 0; i < e->nitems; i++) {
        if (lvl > 2 || ctx_field(t->action, lvl, e->keys[i]) == 0) return true; /* statically false */
        caps_add(out, lvl, e->keys[i]);
        if (lvl == 0) lvl = strcmp(e->keys[i], "input") == 0 ? 1 : 2;
        else lvl = 3; /* leaf fields are not records */
      }
      return false;
    }
    ty(t, e->a, in, &dummy);
    return false;
  }
  case E_GETATTR: {
    int level = ctx_level(e->a);
    if (level >= 0) {
      int f = ctx_field(t->action, level, e->str);
      if (!t->reported && (f == 0 || (f == 2 && !caps_has(in, level, e->str)))) {
        char *path = level == 0 ? g_strdup(e->str)
                                : g_strdup_printf("%s.%s", level == 1 ? "input" : "output", e->str);
        attr_error(t, e, path, f == 2);
        g_free(path);
        t->reported = true;
      }
      return false;
    }
    if (!t->reported && (is_var(e->a, VAR_PRINCIPAL) || is_var(e->a, VAR_RESOURCE) ||
                         is_var(e->a, VAR_ACTION) || (e->a && e->a->kind == E_ENTITY))) {
      const char *type = is_var(e->a, VAR_PRINCIPAL) ? "Box::Agent"
                         : is_var(e->a, VAR_RESOURCE) ? "Box::Resource"
                         : is_var(e->a, VAR_ACTION)   ? "Box::Action"
                                                      : e->a->etype;
      add_err(t->c->schema, e, 0, 0, "for policy `%s`, attribute `%s` on entity type `%s` not found",
              t->c->rule->engine_id, e->str, type);
      t->reported = true;
      return false;
    }
    ty(t, e->a, in, &dummy);
    return false;
  }
  case E_BOOL:
    return !e->bval;
  case E_NOT: {
    ty(t, e->a, in, &dummy);
    return false;
  }
  default:
    ty(t, e->a, in, &dummy);
    ty(t, e->b, in, &dummy);
    ty(t, e->c, in, &dummy);
    if (e->kind == E_SET || e->kind == E_RECORD)
      for (size_t i = 0; i < e->nitems; i++) ty(t, e->items[i], in, &dummy);
    return false;
  }
}

static bool blank_or_null(const char *s) {
  if (!s) return true;
  for (; *s; s++)
    if (!g_ascii_isspace(*s)) return false;
  return true;
}

static int cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool check_duplicate_ids(BoxPolicy *pol, GError **error) {
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal); /* id → GArray<int> of rule indexes */
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
      for (guint j = 0; j < a->len; j++) g_string_append_printf(m, "%s%d", j ? ", " : "", g_array_index(a, int, j));
      g_string_append(m, "; ");
    }
    g_string_append_printf(m, "a denial and a telemetry record name a rule by its @id, so give each "
                              "rule its own @id at line %d, column %d", line, col);
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

static char *rule_name(const Rule *r) {
  if (r->id) return g_strdup_printf("rule @id(\"%s\")", r->id);
  return g_strdup_printf("the %s rule with no @id", r->forbid ? "forbid" : "permit");
}

static bool check_reserved(BoxPolicy *pol, GError **error) {
  GString *m = NULL;
  int line = 0, col = 0;
  for (size_t i = 0; i < pol->nrules; i++) {
    const Rule *r = &pol->rules[i];
    if (r->action.op == SC_ANY || r->action.nents == 0) continue;
    bool only_other = true;
    for (size_t j = 0; j < r->action.nents; j++) {
      const Expr *e = r->action.ents[j];
      if (strcmp(e->etype, "Box::Action") != 0 || strcmp(e->str, "fs:other") != 0) only_other = false;
    }
    if (!only_other) continue;
    char *name = rule_name(r);
    if (!m) {
      m = g_string_new(POLICY_RESERVED_PREFIX);
      line = r->action.line;
      col = r->action.col;
    } else {
      g_string_append(m, "; ");
    }
    g_string_append_printf(m, "%s (rule %d) names only the reserved action \"fs:other\"", name, r->index + 1);
    g_free(name);
  }
  if (!m) return true;
  g_string_append_printf(m, "; no operation raises it, so the rule cannot match; name fs:read, fs:write, "
                            "fs:delete, or fs:move, alone or beside fs:other at line %d, column %d",
                         line, col);
  g_set_error_literal(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA, m->str);
  g_string_free(m, TRUE);
  return false;
}

static void check_scope_entity(Check *c, const ScopeConstraint *sc, const char *want_type) {
  for (size_t i = 0; i < sc->nents; i++) {
    const Expr *e = sc->ents[i];
    check_entity(c, e);
    if (want_type && policy_entity_type_known(e->etype) && strcmp(e->etype, want_type) != 0 &&
        strcmp(e->etype, "Box::Action") != 0)
      add_err(c->schema, e, 0, 0, "for policy `%s`, unable to find an applicable action given the policy scope constraints",
              c->rule->engine_id);
  }
  if (sc->is_type && !policy_entity_type_known(sc->is_type))
    add_err(c->schema, NULL, sc->line, sc->col, "for policy `%s`, unrecognized entity type `%s`",
            c->rule->engine_id, sc->is_type);
}

/* Does the fixed principal/resource satisfy the constraint? */
static bool scope_matches_fixed(const ScopeConstraint *sc, const char *type, const char *id) {
  switch (sc->op) {
  case SC_ANY: return true;
  case SC_EQ:
  case SC_IN:
    return strcmp(sc->ents[0]->etype, type) == 0 && strcmp(sc->ents[0]->str, id) == 0;
  case SC_IS: return strcmp(sc->is_type, type) == 0;
  case SC_IS_IN:
    return strcmp(sc->is_type, type) == 0 && strcmp(sc->ents[0]->etype, type) == 0 &&
           strcmp(sc->ents[0]->str, id) == 0;
  case SC_IN_SET: return false;
  }
  return false;
}

static char *join_errors(const char *prefix, GPtrArray *errs) {
  GString *m = g_string_new(prefix);
  for (guint i = 0; i < errs->len; i++) {
    if (i) g_string_append(m, "; ");
    g_string_append(m, errs->pdata[i]);
  }
  return g_string_free(m, FALSE);
}

bool policy_validate(BoxPolicy *pol, const char *operator_home, GError **error) {
  (void)operator_home; /* inert-literal checks: a later issue */
  if (!check_duplicate_ids(pol, error)) return false;
  if (!check_reserved(pol, error)) return false;

  Check c = {pol, NULL, g_ptr_array_new_with_free_func(g_free), g_ptr_array_new_with_free_func(g_free)};
  for (size_t i = 0; i < pol->nrules; i++) {
    Rule *r = &pol->rules[i];
    c.rule = r;
    size_t before = c.unknown_action->len;
    check_scope_entity(&c, &r->principal, "Box::Agent");
    check_scope_entity(&c, &r->resource, "Box::Resource");
    for (size_t j = 0; j < r->action.nents; j++) check_entity(&c, r->action.ents[j]);
    /* applicable actions */
    memset(r->applies, 0, sizeof r->applies);
    bool any = false;
    bool fixed = scope_matches_fixed(&r->principal, "Box::Agent", "self") &&
                 scope_matches_fixed(&r->resource, "Box::Resource", "unused");
    int order[POLICY_MAX_ACTIONS];
    int norder = 0;
    if (r->action.op == SC_ANY) {
      for (size_t a = 0; a < policy_nactions; a++) {
        r->applies[a] = fixed;
        order[norder++] = (int)a;
      }
      any = true;
    } else {
      for (size_t j = 0; j < r->action.nents; j++) {
        const Expr *e = r->action.ents[j];
        int a = strcmp(e->etype, "Box::Action") == 0 ? policy_action_index(e->str) : -1;
        if (a < 0) continue;
        if (!any || !r->applies[a]) {
          bool dup = false;
          for (int k = 0; k < norder; k++) dup |= order[k] == a;
          if (!dup) order[norder++] = a;
        }
        r->applies[a] = fixed;
        any = true;
      }
      if (!any)
        add_err(c.unknown_action, NULL, r->action.line, r->action.col,
                "for policy `%s`, unable to find an applicable action given the policy scope constraints",
                r->engine_id);
    }
    for (size_t k = 0; k < r->nclauses; k++) walk_entities(&c, r->clauses[k].expr);
    if (c.unknown_action->len != before) continue;
    /* attribute checks, per applicable action */
    for (int k = 0; k < norder; k++) {
      TyCtx t = {&c, order[k], false};
      Caps acc = {0};
      for (size_t q = 0; q < r->nclauses; q++) {
        Caps out = {0};
        bool f = ty(&t, r->clauses[q].expr, &acc, &out);
        /* clauses fold with &&: a later clause sees earlier `when` capabilities */
        if (r->clauses[q].is_when) {
          if (f) break;
          caps_union(&acc, &out);
        }
      }
      if (t.reported) break;
    }
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
  return ok;
}
