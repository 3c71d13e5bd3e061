/* temporal_check.c — the load checks of history rules (spec/policy.md
 * §2.6: field types, windows, variable binding and anchoring) and the plan
 * of their evaluation: each formula's look-back, its canonical text, and
 * the fast paths answered from match lists (temporal_eval.c). */
#include "policy/temporal_check.h"
#include "policy/temporal_eval.h"

#include <stdarg.h>
#include <string.h>

typedef struct {
  BoxPolicy *pol;
  const Rule *rule;
  TFormula *F;
  GError **error;
  bool failed;
  int actions[POLICY_MAX_ACTIONS];
  int nactions;
  const char *installing; /* the entity type whose tools are being installed, or NULL */
  GPtrArray *resolved;    /* its predicates resolved so far (TForm *) */
} Check;

G_GNUC_PRINTF(4, 5) static void refuse(Check *k, int line, int col, const char *fmt, ...)
{
  if (k->failed) return;
  k->failed = true;
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(k->error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA,
              POLICY_SCHEMA_PREFIX "%s at line %d, column %d", m, line, col);
  g_free(m);
}

static const char *kind_name(EventKind k)
{
  return k == EV_REQUEST ? "request" : k == EV_RESPONSE ? "response" : "error";
}

static const char *ft_name(FieldType t)
{
  switch (t) {
  case FT_STRING: return "String";
  case FT_LONG: return "Long";
  case FT_BOOL: return "Bool";
  case FT_ENUM: return "an entity";
  case FT_SET_STRING: return "Set<String>";
  }
  return "?";
}

static void check_window(Check *k, const TForm *f)
{
  if (f->window > T_MAX_WINDOW_NS)
    refuse(k, f->line, f->col,
           "temporal window `%s` exceeds the maximum allowed window `24h` set by the event "
           "schema's `max_window`; "
           "shorten this window to at most `24h`, or raise `max_window` in the event schema",
           f->window_text);
}

static void check_term(Check *k, const TTerm *x);
static void check_form(Check *k, TForm *f);

/* An event's action as a rule names it: Box::Action::"fs:read", or a
 * generated action's own term. */
static char *event_action(const ActionDecl *a)
{
  return a->etype ? g_strdup(a->term) : g_strdup_printf("Box::Action::\"%s\"", a->term);
}

static void check_field(Check *k, const TForm *p, const TField *fd)
{
  const ActionDecl *a = &policy_actions[p->action];
  const char *path = fd->path;
  const FieldDecl *decl = NULL;
  const char *etype = NULL;
  bool entity_field = false;
  if (strcmp(path, "callerPrincipal") == 0 || strcmp(path, "callerResource") == 0) {
    entity_field = true;
    etype = path[6] == 'P' ? "Box::Agent" : "Box::Resource";
  } else if (strcmp(path, "requestId") == 0) {
    /* String */
  } else if (g_str_has_prefix(path, "input.")) {
    decl = policy_field(a->input, a->ninput, path + 6, strlen(path + 6));
    if (!decl) goto unknown;
  } else if (g_str_has_prefix(path, "output.") && p->ev == EV_RESPONSE && a->output) {
    decl = policy_field(a->output, a->noutput, path + 7, strlen(path + 7));
    if (!decl) goto unknown;
  } else {
    goto unknown;
  }
  if (decl && decl->type == FT_ENUM) {
    entity_field = true;
    etype = g_str_has_prefix(path, "output.") ? "Box::FsResponseResult" : a->enum_type;
  }
  if (fd->term.kind == TT_LIT) {
    const TVal *v = &fd->term.lit;
    bool ok;
    if (entity_field) {
      ok = v->k == TV_ENT && strcmp(v->etype, etype) == 0;
      if (ok && decl) {
        bool is_enum;
        char *eid = g_strndup(v->s, v->n);
        bool has = policy_enum_has(etype, eid, v->n, &is_enum);
        if (!has)
          refuse(k, fd->term.line, fd->term.col,
                 "for policy `%s`: entity `%s::\"%s\"` is of an enumerated entity type, but "
                 "`\"%s\"` is not declared "
                 "as a valid eid",
                 k->rule->engine_id, etype, eid, eid);
        g_free(eid);
        return;
      }
    } else if (decl) {
      ok = (decl->type == FT_STRING && v->k == TV_STR) ||
           (decl->type == FT_LONG && v->k == TV_LONG) || (decl->type == FT_BOOL && v->k == TV_BOOL);
    } else {
      ok = v->k == TV_STR;
    }
    g_autofree char *named = ok ? NULL : event_action(a);
    if (!ok)
      refuse(k, fd->term.line, fd->term.col,
             "for policy `%s`, field `%s` of `%s::%s` is %s%s; the value given has another type",
             k->rule->engine_id, path, named, kind_name(p->ev),
             decl           ? ft_name(decl->type)
             : entity_field ? "entity "
                            : "String",
             decl    ? ""
             : etype ? etype
                     : "");
  } else if (fd->term.kind == TT_PRINCIPAL || fd->term.kind == TT_RESOURCE) {
    const char *want = fd->term.kind == TT_PRINCIPAL ? "Box::Agent" : "Box::Resource";
    if (!etype || strcmp(etype, want) != 0)
      refuse(k, fd->term.line, fd->term.col, "for policy `%s`, field `%s` cannot equal `%s`",
             k->rule->engine_id, path, fd->term.kind == TT_PRINCIPAL ? "principal" : "resource");
  } else {
    check_term(k, &fd->term);
  }
  return;
unknown:;
  g_autofree char *named = event_action(a);
  refuse(k, fd->term.line, fd->term.col,
         "for policy `%s`, `%s` is not a field of the event `%s::%s`%s", k->rule->engine_id, path,
         named, kind_name(p->ev),
         g_str_has_prefix(path, "output.") && p->ev != EV_RESPONSE
           ? " (only a ::response carries output)"
           : "");
}

static void check_term(Check *k, const TTerm *x)
{
  if (x->kind == TT_CTX) {
    for (int i = 0; i < k->nactions; i++) {
      const ActionDecl *a = &policy_actions[k->actions[i]];
      if (!policy_field(a->input, a->ninput, x->ctx, strlen(x->ctx)))
        refuse(k, x->line, x->col,
               "for policy `%s`, attribute `input.%s` in context for Box::Action::\"%s\" not found",
               k->rule->engine_id, x->ctx, a->term);
    }
  } else if (x->kind == TT_COUNT || x->kind == TT_SUM) {
    check_form(k, x->body);
  }
}

static void check_form(Check *k, TForm *f)
{
  switch (f->kind) {
  case TF_PRED:
    if (f->action < 0 && k->installing && strcmp(f->etype, k->installing) == 0) {
      f->action = policy_action_lookup(f->etype, f->id, f->idlen);
      if (f->action < 0) {
        refuse(k, f->line, f->col,
               "predicate `%s::\"%s\"::%s` does not name a declared event (no event kind `%s` "
               "derived for action `%s`)",
               f->etype, f->id, kind_name(f->ev), kind_name(f->ev), f->id);
        break;
      }
      g_ptr_array_add(k->resolved, f);
    }
    if (f->action < 0) break; /* its server has not listed its tools: checked then */
    for (int i = 0; i < f->nfields; i++) check_field(k, f, &f->fields[i]);
    break;
  case TF_TP:
    if (k->F->var_types[f->var] != VT_TIMEPOINT)
      refuse(k, f->line, f->col, "for policy `%s`, `tp(%s)` needs a `Timepoint` variable",
             k->rule->engine_id, k->F->var_names[f->var]);
    break;
  case TF_CMP:
    check_term(k, f->l);
    check_term(k, f->r);
    break;
  case TF_FORMERLY:
  case TF_PREVIOUS:
  case TF_SINCE: check_window(k, f); /* fall through */
  case TF_AND:
  case TF_NOT:
  case TF_EXISTS:
    if (f->a) check_form(k, f->a);
    if (f->b) check_form(k, f->b);
    break;
  }
}

/* variables a term or form mentions (bits) */
static uint32_t term_uses(const TTerm *x);
static uint32_t form_uses(TForm *f)
{
  uint32_t u = 0;
  switch (f->kind) {
  case TF_PRED:
    for (int i = 0; i < f->nfields; i++) u |= term_uses(&f->fields[i].term);
    break;
  case TF_TP: u = 1u << f->var; break;
  case TF_CMP: u = term_uses(f->l) | term_uses(f->r); break;
  case TF_EXISTS: u = form_uses(f->a) & ~(1u << f->var); break;
  default:
    if (f->a) u |= form_uses(f->a);
    if (f->b) u |= form_uses(f->b);
  }
  f->uses = u;
  return u;
}
static uint32_t term_uses(const TTerm *x)
{
  if (x->kind == TT_VAR) return 1u << x->var;
  if (x->kind == TT_COUNT || x->kind == TT_SUM) {
    uint32_t u = form_uses(x->body);
    for (int i = 0; i < x->nfor; i++) u &= ~(1u << x->forv[i]);
    return u;
  }
  return 0;
}

static const char *first_var(const TFormula *F, uint32_t bits)
{
  for (int v = 0; v < F->nvars; v++)
    if (bits & (1u << v)) return F->var_names[v];
  return "?";
}

/* Range restriction and conjunct order (rules 2–4): returns the variables
 * restricted after f, given those restricted before. */
static uint32_t restrict_form(Check *k, const TForm *f, uint32_t r);
static uint32_t restrict_term_agg(Check *k, const TTerm *x, uint32_t r)
{
  if (x->kind != TT_COUNT && x->kind != TT_SUM) return r;
  uint32_t fresh = 0;
  for (int i = 0; i < x->nfor; i++) fresh |= 1u << x->forv[i];
  uint32_t after = restrict_form(k, x->body, r & ~fresh);
  if ((after & fresh) != fresh)
    refuse(k, x->line, x->col,
           "for policy `%s`, the aggregate's variable `%s` is not restricted by a positive atom of "
           "its body (an event "
           "field, `tp`, or `term == %s`)",
           k->rule->engine_id, first_var(k->F, fresh & ~after), first_var(k->F, fresh & ~after));
  return r;
}

/* fmt takes the policy's id and the first variable of un, the variables f
 * uses before anything restricts them; nothing is refused where un is empty. */
G_GNUC_PRINTF(4, 0)
static void refuse_unrestricted(Check *k, const TForm *f, uint32_t un, const char *fmt)
{
  if (un) refuse(k, f->line, f->col, fmt, k->rule->engine_id, first_var(k->F, un));
}

static uint32_t restrict_form(Check *k, const TForm *f, uint32_t r)
{
  switch (f->kind) {
  case TF_PRED:
    for (int i = 0; i < f->nfields; i++)
      if (f->fields[i].term.kind == TT_VAR) r |= 1u << f->fields[i].term.var;
    return r;
  case TF_TP: return r | 1u << f->var;
  case TF_CMP: {
    r = restrict_term_agg(k, f->l, r);
    r = restrict_term_agg(k, f->r, r);
    uint32_t ul = term_uses(f->l), ur = term_uses(f->r);
    if (f->cmp == TC_EQ && f->r->kind == TT_VAR && !(r & ur) && (ul & ~r) == 0) return r | ur;
    if (f->cmp == TC_EQ && f->l->kind == TT_VAR && !(r & ul) && (ur & ~r) == 0) return r | ul;
    refuse_unrestricted(k, f, (ul | ur) & ~r,
                        "for policy `%s`, variable `%s` is compared before anything restricts it; "
                        "put the event predicate, `tp` or binding equality that binds it first");
    return r;
  }
  case TF_AND: return restrict_form(k, f->b, restrict_form(k, f->a, r));
  case TF_NOT: {
    refuse_unrestricted(k, f, f->a->uses & ~r,
                        "for policy `%s`, variable `%s` is used under `!` before anything "
                        "restricts it; a negation binds nothing");
    restrict_form(k, f->a, r);
    return r;
  }
  case TF_FORMERLY:
  case TF_PREVIOUS: return restrict_form(k, f->a, r);
  case TF_SINCE: {
    uint32_t after = restrict_form(k, f->b, r);
    refuse_unrestricted(k, f, f->a->uses & ~after,
                        "for policy `%s`, the left side of `since` uses `%s`, which neither its "
                        "anchor nor an earlier conjunct restricts");
    restrict_form(k, f->a, after);
    return after;
  }
  case TF_EXISTS: {
    uint32_t bit = 1u << f->var;
    uint32_t after = restrict_form(k, f->a, r & ~bit);
    if (!(after & bit))
      refuse(k, f->line, f->col,
             "for policy `%s`, the variable `%s` of `exists` is not restricted by a positive atom "
             "of its body",
             k->rule->engine_id, k->F->var_names[f->var]);
    return (after & ~bit) | (r & bit);
  }
  }
  return r;
}

/* tp-dependence (rule 6) */
static bool anchored(const TForm *f);
static bool term_anchored(const TTerm *x)
{
  return x->kind == TT_COUNT || x->kind == TT_SUM;
}
static bool anchored(const TForm *f)
{
  switch (f->kind) {
  case TF_PRED:
  case TF_TP: return true;
  case TF_CMP: return term_anchored(f->l) || term_anchored(f->r);
  default: return (f->a && anchored(f->a)) || (f->b && anchored(f->b));
  }
}

static void check_anchored(Check *k, const TForm *f, const char *what)
{
  if (!anchored(f))
    refuse(k, f->line, f->col,
           "for policy `%s`, %s does not depend on the history: it names no event predicate, `tp` "
           "or aggregate",
           k->rule->engine_id, what);
}

static void check_anchors(Check *k, const TForm *f, bool top);
static void check_anchors_term(Check *k, const TTerm *x)
{
  if (term_anchored(x)) {
    check_anchored(k, x->body, "an aggregate's body");
    check_anchors(k, x->body, false);
  }
}
static void check_anchors(Check *k, const TForm *f, bool top)
{
  switch (f->kind) {
  case TF_AND:
    check_anchors(k, f->a, top);
    check_anchors(k, f->b, top);
    return;
  default: break;
  }
  if (top) check_anchored(k, f, "a conjunct of the temporal body");
  switch (f->kind) {
  case TF_FORMERLY:
  case TF_PREVIOUS: check_anchored(k, f->a, "the body of `formerly`/`previous`"); break;
  case TF_SINCE:
    check_anchored(k, f->a, "the left side of `since`");
    check_anchored(k, f->b, "the right side of `since`");
    break;
  case TF_EXISTS: check_anchored(k, f->a, "the body of `exists`"); break;
  case TF_CMP:
    check_anchors_term(k, f->l);
    check_anchors_term(k, f->r);
    return;
  case TF_PRED:
    for (int i = 0; i < f->nfields; i++) check_anchors_term(k, &f->fields[i].term);
    return;
  default: break;
  }
  if (f->a) check_anchors(k, f->a, false);
  if (f->b) check_anchors(k, f->b, false);
}

static int64_t sat_add(int64_t a, int64_t b)
{
  return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int64_t depth_form(const TForm *f);
static int64_t depth_term(const TTerm *x)
{
  return (x->kind == TT_COUNT || x->kind == TT_SUM) ? depth_form(x->body) : 0;
}
static int64_t depth_form(const TForm *f)
{
  int64_t d = 0;
  switch (f->kind) {
  case TF_PRED:
  case TF_TP: return 0;
  case TF_CMP: return MAX(depth_term(f->l), depth_term(f->r));
  case TF_FORMERLY:
  case TF_PREVIOUS: return sat_add(f->window, depth_form(f->a));
  case TF_SINCE: return sat_add(f->window, MAX(depth_form(f->a), depth_form(f->b)));
  default:
    if (f->a) d = depth_form(f->a);
    if (f->b) d = MAX(d, depth_form(f->b));
    return d;
  }
}

static bool pred_static(const TForm *p, const char *except)
{
  if (p->kind != TF_PRED) return false;
  for (int i = 0; i < p->nfields; i++) {
    TTermKind tk = p->fields[i].term.kind;
    if (p->fields[i].path == except) continue;
    if (tk != TT_LIT && tk != TT_WILD && tk != TT_PRINCIPAL && tk != TT_RESOURCE) return false;
  }
  return true;
}

/* body = (P && tp(t)) or (tp(t) && P): returns P */
static const TForm *pred_with_tp(const TForm *body, int tvar)
{
  if (body->kind != TF_AND) return NULL;
  const TForm *a = body->a, *b = body->b;
  if (b->kind == TF_TP && b->var == tvar && a->kind == TF_PRED) return a;
  if (a->kind == TF_TP && a->var == tvar && b->kind == TF_PRED) return b;
  return NULL;
}

static void plan_form(BoxTemporal *t, TFormula *F, TForm *f);
static void plan_term(BoxTemporal *t, TFormula *F, TTerm *x)
{
  if (x->kind != TT_COUNT && x->kind != TT_SUM) return;
  plan_form(t, F, x->body);
  if (x->body->kind != TF_FORMERLY) return;
  if (x->kind == TT_COUNT && x->nfor == 1 && F->var_types[x->forv[0]] == VT_TIMEPOINT) {
    const TForm *p = pred_with_tp(x->body->a, x->forv[0]);
    if (p && pred_static(p, NULL)) {
      x->fast = FAST_COUNT;
      x->match = temporal_watch(t, p, NULL);
    }
  } else if (x->kind == TT_SUM && x->nfor == 2) {
    int tv = F->var_types[x->forv[0]] == VT_TIMEPOINT ? x->forv[0] : x->forv[1];
    int bv = tv == x->forv[0] ? x->forv[1] : x->forv[0];
    if (F->var_types[tv] != VT_TIMEPOINT || bv != x->var) return;
    const TForm *p = pred_with_tp(x->body->a, tv);
    if (!p) return;
    const char *sum_path = NULL;
    int nvar = 0;
    for (int i = 0; i < p->nfields; i++)
      if (p->fields[i].term.kind == TT_VAR) {
        nvar++;
        if (p->fields[i].term.var == bv) sum_path = p->fields[i].path;
      }
    if (nvar == 1 && sum_path && pred_static(p, sum_path)) {
      x->fast = FAST_SUM;
      x->match = temporal_watch(t, p, sum_path);
    }
  }
}

static void plan_form(BoxTemporal *t, TFormula *F, TForm *f)
{
  switch (f->kind) {
  case TF_PRED:
    for (int i = 0; i < f->nfields; i++) plan_term(t, F, &f->fields[i].term);
    return;
  case TF_CMP:
    plan_term(t, F, f->l);
    plan_term(t, F, f->r);
    return;
  case TF_TP: return;
  default: break;
  }
  if (f->a) plan_form(t, F, f->a);
  if (f->b) plan_form(t, F, f->b);
  if (f->kind == TF_FORMERLY && pred_static(f->a, NULL)) {
    f->a->match = temporal_watch(t, f->a, NULL);
    f->fast = FAST_FORMERLY;
  } else if (f->kind == TF_SINCE && f->a->kind == TF_NOT && pred_static(f->a->a, NULL) &&
             pred_static(f->b, NULL)) {
    f->a->a->match = temporal_watch(t, f->a->a, NULL);
    f->b->match = temporal_watch(t, f->b, NULL);
    f->fast = FAST_SINCE;
  }
}

bool policy_temporal_validate(BoxPolicy *pol, GError **error)
{
  BoxTemporal *t = pol->temporal;
  if (!t) pol->temporal = t = temporal_new(pol);
  /* formulas were added in parse order; attach each to its rule */
  for (size_t i = 0; i < pol->nrules; i++) {
    const Rule *r = &pol->rules[i];
    Check k = { pol, r, NULL, error, false, { 0 }, 0, NULL, NULL };
    if (r->action.op == SC_ANY) {
      for (size_t a = 0; a < policy_nactions; a++) k.actions[k.nactions++] = (int)a;
    } else {
      for (size_t j = 0; j < r->action.nents && k.nactions < POLICY_MAX_ACTIONS; j++) {
        const Expr *e = r->action.ents[j];
        int a = strcmp(e->etype, "Box::Action") == 0 ? policy_action_index(e->str) : -1;
        if (a >= 0) k.actions[k.nactions++] = a;
      }
    }
    for (size_t c = 0; c < r->nclauses + r->ninline_tf; c++) {
      /* `when temporal { … }` clauses, then inline `temporal { … }` blocks */
      TFormula *F = c < r->nclauses ? (r->clauses[c].temporal ? r->clauses[c].tf : NULL)
                                    : r->inline_tf[c - r->nclauses];
      if (!F) continue;
      k.F = F;
      F->rule = r;
      form_uses(F->root);
      check_form(&k, F->root);
      if (!k.failed) restrict_form(&k, F->root, 0);
      if (!k.failed) check_anchors(&k, F->root, true);
      if (k.failed) return false;
      F->depth = depth_form(F->root);
      if (F->depth > t->depth) t->depth = F->depth;
      F->canonical = policy_temporal_render(F);
      plan_form(t, F, F->root);
    }
  }
  return temporal_register_formulas(t, error);
}

bool policy_temporal_install(BoxPolicy *pol, const char *etype, GError **error)
{
  BoxTemporal *t = pol->temporal;
  if (!t) return true;
  Check k = { pol, NULL, NULL, error, false, { 0 }, 0, etype, g_ptr_array_new() };
  /* a decision in progress reads the predicates: they change under its lock */
  g_mutex_lock(&t->lock);
  for (guint i = 0; i < t->formulas->len && !k.failed; i++) {
    TFormula *F = t->formulas->pdata[i];
    if (!F->rule) continue;
    k.rule = F->rule;
    k.F = F;
    check_form(&k, F->root);
  }
  if (k.failed) /* they wait again, as the server's actions stay pending */
    for (guint i = 0; i < k.resolved->len; i++) ((TForm *)k.resolved->pdata[i])->action = -1;
  g_mutex_unlock(&t->lock);
  g_ptr_array_free(k.resolved, TRUE);
  return !k.failed;
}
