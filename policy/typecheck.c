/* typecheck.c — Cedar strict validation of rule conditions against the
 * closed Box schema (spec/policy.md §3.4, §4): attribute existence per
 * action, `has` guarding of optional attributes (capabilities through &&,
 * || and if), operand types, set homogeneity, extension literals, and the
 * singleton Bool types (True/False) that make Cedar skip the unreachable
 * side of `&&`, `||` and `if`. */
#include "policy/typecheck.h"

#include <string.h>

typedef enum {
  TY_BOOL,
  TY_TRUE,
  TY_FALSE,
  TY_LONG,
  TY_STRING,
  TY_ENTITY,
  TY_SET,
  TY_RECORD,
  TY_DECIMAL,
  TY_IP,
  TY_DATETIME,
  TY_DURATION,
} TyKind;

/* record shapes: the context record, context.input, context.output, a literal */
typedef enum { RS_CONTEXT, RS_INPUT, RS_OUTPUT, RS_LITERAL } RecShape;

typedef struct Ty Ty;
struct Ty {
  TyKind k;
  const char *etype; /* TY_ENTITY */
  const Ty *elem;    /* TY_SET; NULL only for the empty set (an error already) */
  RecShape rec;      /* TY_RECORD */
  const Expr *lit;   /* RS_LITERAL: the record literal */
  int action;        /* context shapes */
};

#define MAX_CAPS 32
typedef struct {
  int n;
  int level[MAX_CAPS]; /* 0 context, 1 context.input, 2 context.output */
  const char *name[MAX_CAPS];
} Caps;

typedef struct {
  const Rule *rule;
  int action;
  GPtrArray *errs;
  GPtrArray *arena; /* Ty allocations */
  bool failed;      /* one error per rule */
} Tc;

static bool caps_has(const Caps *c, int level, const char *name)
{
  for (int i = 0; i < c->n; i++)
    if (c->level[i] == level && strcmp(c->name[i], name) == 0) return true;
  return false;
}
static void caps_add(Caps *c, int level, const char *name)
{
  if (caps_has(c, level, name) || c->n >= MAX_CAPS) return;
  c->level[c->n] = level;
  c->name[c->n] = name;
  c->n++;
}
static void caps_union(Caps *into, const Caps *b)
{
  for (int i = 0; i < b->n; i++) caps_add(into, b->level[i], b->name[i]);
}
static Caps caps_inter(const Caps *a, const Caps *b)
{
  Caps r = { 0 };
  for (int i = 0; i < a->n; i++)
    if (caps_has(b, a->level[i], a->name[i])) caps_add(&r, a->level[i], a->name[i]);
  return r;
}

static void tc_error(Tc *t, const Expr *at, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void tc_error(Tc *t, const Expr *at, const char *fmt, ...)
{
  if (t->failed) return;
  t->failed = true;
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_ptr_array_add(t->errs, g_strdup_printf("for policy `%s`, %s at line %d, column %d",
                                           t->rule->engine_id, what, at->line, at->col));
  g_free(what);
}

static Ty *mk(Tc *t, TyKind k)
{
  Ty *ty = g_new0(Ty, 1);
  g_ptr_array_add(t->arena, ty);
  ty->k = k;
  return ty;
}

static bool is_boolish(const Ty *a)
{
  return a->k == TY_BOOL || a->k == TY_TRUE || a->k == TY_FALSE;
}

static const Ty *field_type(Tc *t, const FieldDecl *f, int action)
{
  switch (f->type) {
  case FT_STRING: return mk(t, TY_STRING);
  case FT_LONG: return mk(t, TY_LONG);
  case FT_BOOL: return mk(t, TY_BOOL);
  case FT_ENUM: {
    Ty *e = mk(t, TY_ENTITY);
    e->etype =
      strcmp(f->name, "result") == 0 ? "Box::FsResponseResult" : policy_actions[action].enum_type;
    return e;
  }
  case FT_SET_STRING: {
    Ty *s = mk(t, TY_SET);
    s->elem = mk(t, TY_STRING);
    return s;
  }
  }
  return mk(t, TY_STRING);
}

static void ty_name(GString *s, const Ty *a)
{
  switch (a->k) {
  case TY_BOOL:
  case TY_TRUE:
  case TY_FALSE: g_string_append(s, "Bool"); return;
  case TY_LONG: g_string_append(s, "Long"); return;
  case TY_STRING: g_string_append(s, "String"); return;
  case TY_ENTITY: g_string_append(s, a->etype); return;
  case TY_SET:
    g_string_append(s, "Set<");
    if (a->elem)
      ty_name(s, a->elem);
    else
      g_string_append(s, "Never");
    g_string_append_c(s, '>');
    return;
  case TY_RECORD: g_string_append(s, "record"); return;
  case TY_DECIMAL: g_string_append(s, "decimal"); return;
  case TY_IP: g_string_append(s, "ipaddr"); return;
  case TY_DATETIME: g_string_append(s, "datetime"); return;
  case TY_DURATION: g_string_append(s, "duration"); return;
  }
}

static char *tname(const Ty *a)
{
  GString *s = g_string_new(NULL);
  ty_name(s, a);
  return g_string_free(s, FALSE);
}

static void expect_ty(Tc *t, const Expr *at, const Ty *got, const char *want)
{
  char *g = tname(got);
  tc_error(t, at, "unexpected type: expected %s but saw %s", want, g);
  g_free(g);
}

/* Whether got is of kind k, else the error that want was expected at at. */
static bool of_kind(Tc *t, const Expr *at, const Ty *got, TyKind k, const char *want)
{
  if (got->k == k) return true;
  expect_ty(t, at, got, want);
  return false;
}

/* The entity type on the right of `in`: b, or the element of the set b
 * is; NULL, with the error at at, where it is neither. */
static const Ty *entity_target(Tc *t, const Expr *at, const Ty *b)
{
  const Ty *target = b->k == TY_SET ? b->elem : b;
  if (target && target->k == TY_ENTITY) return target;
  expect_ty(t, at, b, "an entity type or a set of entities");
  return NULL;
}

/* Whether got is a Bool (or true, or false), else the error at at. */
static bool boolish(Tc *t, const Expr *at, const Ty *got)
{
  if (is_boolish(got)) return true;
  expect_ty(t, at, got, "Bool");
  return false;
}

/* Cedar names the types of an incompatibility in its type order:
 * Bool, Long, String, sets, entities and records, extension types. */
static int ty_rank(const Ty *a)
{
  switch (a->k) {
  case TY_BOOL:
  case TY_TRUE:
  case TY_FALSE: return 0;
  case TY_LONG: return 1;
  case TY_STRING: return 2;
  case TY_SET: return 3;
  case TY_ENTITY:
  case TY_RECORD: return 4;
  default: return 5;
  }
}

static void incompatible(Tc *t, const Expr *at, const Ty *a, const Ty *b)
{
  if (t->failed) return;
  t->failed = true;
  if (ty_rank(b) < ty_rank(a)) {
    const Ty *c = a;
    a = b;
    b = c;
  }
  char *x = tname(a), *y = tname(b);
  /* Cedar's text for this error names no policy */
  g_ptr_array_add(t->errs,
                  g_strdup_printf("the types %s and %s are not compatible at line %d, column %d", x,
                                  y, at->line, at->col));
  g_free(x);
  g_free(y);
}

static bool literal(const Expr *e)
{
  return e->kind == E_BOOL || e->kind == E_LONG || e->kind == E_STRING || e->kind == E_ENTITY;
}

/* `lit == lit` is decided while typing (Cedar folds it). */
static int literal_eq(const Expr *a, const Expr *b)
{
  if (a->kind != b->kind) return 0;
  switch (a->kind) {
  case E_BOOL: return a->bval == b->bval;
  case E_LONG: return a->lval == b->lval;
  case E_STRING: return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
  case E_ENTITY:
    return strcmp(a->etype, b->etype) == 0 && a->len == b->len &&
           memcmp(a->str, b->str, a->len) == 0;
  default: return 0;
  }
}

/* Record fields, as (name, type, optional) triples. */
typedef struct {
  size_t n;
  const char *name[32];
  const Ty *type[32];
  bool optional[32];
} Fields;

static const Ty *check(Tc *t, const Expr *e, const Caps *in, Caps *out);

static void record_fields(Tc *t, const Ty *r, Fields *f)
{
  f->n = 0;
  const ActionDecl *ad = &policy_actions[r->action];
  switch (r->rec) {
  case RS_CONTEXT: {
    Ty *inp = mk(t, TY_RECORD);
    inp->rec = RS_INPUT;
    inp->action = r->action;
    f->name[f->n] = "input";
    f->type[f->n] = inp;
    f->optional[f->n++] = false;
    if (ad->output) {
      Ty *o = mk(t, TY_RECORD);
      o->rec = RS_OUTPUT;
      o->action = r->action;
      f->name[f->n] = "output";
      f->type[f->n] = o;
      f->optional[f->n++] = true;
    }
    return;
  }
  case RS_INPUT:
  case RS_OUTPUT: {
    const FieldDecl *fd = r->rec == RS_INPUT ? ad->input : ad->output;
    size_t nf = r->rec == RS_INPUT ? ad->ninput : ad->noutput;
    for (size_t i = 0; i < nf && f->n < 32; i++) {
      f->name[f->n] = fd[i].name;
      f->type[f->n] = field_type(t, &fd[i], r->action);
      f->optional[f->n++] = fd[i].optional;
    }
    return;
  }
  case RS_LITERAL: {
    Caps none = { 0 }, dummy = { 0 };
    for (size_t i = 0; i < r->lit->nitems && f->n < 32; i++) {
      f->name[f->n] = r->lit->keys[i];
      f->type[f->n] = check(t, r->lit->items[i], &none, &dummy);
      f->optional[f->n++] = false;
    }
    return;
  }
  }
}

static int field_index(const Fields *f, const char *name)
{
  for (size_t i = 0; i < f->n; i++)
    if (strcmp(f->name[i], name) == 0) return (int)i;
  return -1;
}

/* Least upper bound in strict mode; NULL when the types are incompatible. */
static const Ty *lub(Tc *t, const Ty *a, const Ty *b)
{
  if (is_boolish(a) && is_boolish(b)) return a->k == b->k ? a : mk(t, TY_BOOL);
  if (a->k != b->k) return NULL;
  switch (a->k) {
  case TY_ENTITY: return strcmp(a->etype, b->etype) == 0 ? a : NULL;
  case TY_SET: {
    if (!a->elem) return b;
    if (!b->elem) return a;
    const Ty *el = lub(t, a->elem, b->elem);
    if (!el) return NULL;
    Ty *s = mk(t, TY_SET);
    s->elem = el;
    return s;
  }
  case TY_RECORD: {
    if (a->rec != RS_LITERAL && a->rec == b->rec && a->action == b->action) return a;
    Fields fa, fb;
    record_fields(t, a, &fa);
    record_fields(t, b, &fb);
    if (fa.n != fb.n) return NULL;
    for (size_t i = 0; i < fa.n; i++) {
      int j = field_index(&fb, fa.name[i]);
      if (j < 0 || fa.optional[i] != fb.optional[j] || !lub(t, fa.type[i], fb.type[j])) return NULL;
    }
    return a;
  }
  default: return a;
  }
}

static bool is_var(const Expr *e, VarKind v)
{
  return e && e->kind == E_VAR && e->var == v;
}

static int ctx_level(const Ty *r)
{
  if (r->k != TY_RECORD) return -1;
  return r->rec == RS_CONTEXT ? 0 : r->rec == RS_INPUT ? 1 : r->rec == RS_OUTPUT ? 2 : -1;
}

static const char *level_prefix(int level)
{
  return level == 1 ? "input." : level == 2 ? "output." : "";
}

/* `action == Box::Action::"x"` and `action in [...]` are decided by the
 * request environment: Cedar types them True or False. */
static bool action_literal(const Expr *e, const char **id)
{
  if (e->kind != E_ENTITY || strcmp(e->etype, "Box::Action") != 0) return false;
  *id = e->str;
  return true;
}

static const Ty *bool_of(Tc *t, int v)
{
  return mk(t, v ? TY_TRUE : TY_FALSE);
}

/* Type of an attribute read r.name (or has-test when probe). */
static const Ty *get_attr(Tc *t, const Expr *at, const Ty *r, const char *name, const Caps *in)
{
  if (r->k == TY_ENTITY) {
    tc_error(t, at, "attribute `%s` on entity type `%s` not found", name, r->etype);
    return NULL;
  }
  if (!of_kind(t, at, r, TY_RECORD, "record or entity")) return NULL;
  Fields f;
  record_fields(t, r, &f);
  int i = field_index(&f, name);
  int level = ctx_level(r);
  if (i < 0) {
    if (level >= 0)
      tc_error(t, at, "attribute `%s%s` in context for %s::\"%s\" not found", level_prefix(level),
               name, policy_action_etype(t->action), policy_action_id(t->action));
    else
      tc_error(t, at, "attribute `%s` in record not found", name);
    return NULL;
  }
  if (f.optional[i] && !(level >= 0 && caps_has(in, level, name))) {
    tc_error(t, at,
             "unable to guarantee safety of access to optional attribute `%s%s` in context for "
             "%s::\"%s\"",
             level_prefix(level), name, policy_action_etype(t->action),
             policy_action_id(t->action));
    return NULL;
  }
  return f.type[i];
}

static const Ty *check_set(Tc *t, const Expr *e, const Caps *in)
{
  Caps dummy = { 0 };
  if (e->nitems == 0) {
    tc_error(t, e, "empty set literals are forbidden in policies");
    return NULL;
  }
  const Ty *el = NULL;
  for (size_t i = 0; i < e->nitems; i++) {
    const Ty *x = check(t, e->items[i], in, &dummy);
    if (!x) return NULL;
    if (!el) {
      el = x;
      continue;
    }
    const Ty *l = lub(t, el, x);
    if (!l) {
      incompatible(t, e->items[i], el, x);
      return NULL;
    }
    el = l;
  }
  Ty *s = mk(t, TY_SET);
  s->elem = el;
  return s;
}

static const Ty *check_if(Tc *t, const Expr *e, const Caps *in, Caps *out)
{
  Caps cc = { 0 }, ct = { 0 }, ce = { 0 };
  const Ty *c = check(t, e->a, in, &cc);
  if (!c) return NULL;
  if (!boolish(t, e->a, c)) return NULL;
  if (c->k == TY_TRUE) {
    Caps inthen = *in;
    caps_union(&inthen, &cc);
    const Ty *r = check(t, e->b, &inthen, &ct);
    caps_union(&ct, &cc);
    *out = ct;
    return r;
  }
  if (c->k == TY_FALSE) return check(t, e->c, in, out);
  Caps inthen = *in;
  caps_union(&inthen, &cc);
  const Ty *a = check(t, e->b, &inthen, &ct);
  if (!a) return NULL;
  const Ty *b = check(t, e->c, in, &ce);
  if (!b) return NULL;
  const Ty *l = lub(t, a, b);
  if (!l) {
    incompatible(t, e, a, b);
    return NULL;
  }
  caps_union(&ct, &cc);
  *out = caps_inter(&ct, &ce);
  return l;
}

static const Ty *check_and_or(Tc *t, const Expr *e, const Caps *in, Caps *out)
{
  Caps ca = { 0 }, cb = { 0 };
  const Ty *a = check(t, e->a, in, &ca);
  if (!a) return NULL;
  if (!boolish(t, e->a, a)) return NULL;
  bool and = e->kind == E_AND;
  if (and&&a->k == TY_FALSE) return a;
  if (!and&&a->k == TY_TRUE) return a;
  Caps inb = *in;
  if (and) caps_union(&inb, &ca);
  const Ty *b = check(t, e->b, &inb, &cb);
  if (!b) return NULL;
  if (!boolish(t, e->b, b)) return NULL;
  if (and) {
    *out = ca;
    caps_union(out, &cb);
    if (b->k == TY_FALSE) return b;
    if (a->k == TY_TRUE) return b;
    return mk(t, b->k == TY_TRUE && a->k == TY_TRUE ? TY_TRUE : TY_BOOL);
  }
  if (a->k == TY_FALSE) {
    *out = cb;
    return b;
  }
  if (b->k == TY_FALSE) {
    *out = ca;
    return mk(t, TY_BOOL);
  }
  *out = caps_inter(&ca, &cb);
  return mk(t, b->k == TY_TRUE ? TY_TRUE : TY_BOOL);
}

static const Ty *check_eq(Tc *t, const Expr *e, const Caps *in)
{
  Caps dummy = { 0 };
  const char *la, *lb;
  if ((is_var(e->a, VAR_ACTION) && action_literal(e->b, &lb)) ||
      (is_var(e->b, VAR_ACTION) && action_literal(e->a, &lb))) {
    la = policy_actions[t->action].term;
    bool eq = strcmp(la, lb) == 0;
    return bool_of(t, e->kind == E_EQ ? eq : !eq);
  }
  if (literal(e->a) && literal(e->b)) {
    int eq = literal_eq(e->a, e->b);
    return bool_of(t, e->kind == E_EQ ? eq : !eq);
  }
  const Ty *a = check(t, e->a, in, &dummy);
  if (!a) return NULL;
  const Ty *b = check(t, e->b, in, &dummy);
  if (!b) return NULL;
  if (a->k == TY_ENTITY && b->k == TY_ENTITY) {
    if (strcmp(a->etype, b->etype) != 0) return bool_of(t, e->kind == E_NE);
    return mk(t, TY_BOOL);
  }
  if (!lub(t, a, b)) {
    incompatible(t, e, a, b);
    return NULL;
  }
  return mk(t, TY_BOOL);
}

static const Ty *check_in(Tc *t, const Expr *e, const Caps *in)
{
  Caps dummy = { 0 };
  if (is_var(e->a, VAR_ACTION)) {
    const char *id;
    if (action_literal(e->b, &id))
      return bool_of(t, strcmp(id, policy_actions[t->action].term) == 0);
    if (e->b->kind == E_SET && e->b->nitems > 0) {
      bool all = true, hit = false;
      for (size_t i = 0; i < e->b->nitems; i++) {
        if (!action_literal(e->b->items[i], &id))
          all = false;
        else if (strcmp(id, policy_actions[t->action].term) == 0)
          hit = true;
      }
      if (all) return bool_of(t, hit);
    }
  }
  const Ty *a = check(t, e->a, in, &dummy);
  if (!a) return NULL;
  if (!of_kind(t, e->a, a, TY_ENTITY, "an entity type")) return NULL;
  const Ty *b = check(t, e->b, in, &dummy);
  if (!b) return NULL;
  const Ty *target = entity_target(t, e->b, b);
  if (!target) return NULL;
  /* Box entities have no parents: only the same type can be `in` */
  if (strcmp(a->etype, target->etype) != 0) return bool_of(t, 0);
  return mk(t, TY_BOOL);
}

static const Ty *check_is(Tc *t, const Expr *e, const Caps *in)
{
  Caps dummy = { 0 };
  const Ty *a = check(t, e->a, in, &dummy);
  if (!a) return NULL;
  if (!of_kind(t, e->a, a, TY_ENTITY, "an entity type")) return NULL;
  bool same = strcmp(a->etype, e->etype) == 0;
  if (!e->b) return bool_of(t, same);
  const Ty *b = check(t, e->b, in, &dummy);
  if (!b) return NULL;
  const Ty *target = entity_target(t, e->b, b);
  if (!target) return NULL;
  if (!same || strcmp(target->etype, e->etype) != 0) return bool_of(t, 0);
  return mk(t, TY_BOOL);
}

static const Ty *check_has(Tc *t, const Expr *e, const Caps *in, Caps *out)
{
  Caps dummy = { 0 };
  const Ty *cur = check(t, e->a, in, &dummy);
  if (!cur) return NULL;
  bool sure = true;
  for (size_t i = 0; i < e->nitems; i++) {
    if (cur->k == TY_ENTITY) return bool_of(t, 0); /* Box entities carry no attributes */
    if (!of_kind(t, e->a, cur, TY_RECORD, "record or entity")) return NULL;
    Fields f;
    record_fields(t, cur, &f);
    int j = field_index(&f, e->keys[i]);
    if (j < 0) return bool_of(t, 0);
    int level = ctx_level(cur);
    if (f.optional[j]) {
      if (level >= 0 && caps_has(in, level, e->keys[i])) {
        /* already proven */
      } else {
        sure = false;
      }
      if (level >= 0) caps_add(out, level, e->keys[i]);
    }
    cur = f.type[j];
  }
  return sure ? mk(t, TY_TRUE) : mk(t, TY_BOOL);
}

static const Ty *check_method(Tc *t, const Expr *e, const Caps *in)
{
  Caps dummy = { 0 };
  const Ty *s = check(t, e->a, in, &dummy);
  if (!s) return NULL;
  const Ty *x = NULL;
  if (e->b) {
    x = check(t, e->b, in, &dummy);
    if (!x) return NULL;
  }
  switch (e->method) {
  case M_CONTAINS:
  case M_CONTAINS_ALL:
  case M_CONTAINS_ANY:
  case M_IS_EMPTY: {
    if (!of_kind(t, e->a, s, TY_SET, "Set")) return NULL;
    if (e->method == M_IS_EMPTY) return mk(t, TY_BOOL);
    const Ty *el = x;
    if (e->method != M_CONTAINS) {
      if (!of_kind(t, e->b, x, TY_SET, "Set")) return NULL;
      el = x->elem;
    }
    if (s->elem && el && !(s->elem->k == TY_ENTITY && el->k == TY_ENTITY) && !lub(t, s->elem, el)) {
      incompatible(t, e, s->elem, el);
      return NULL;
    }
    return mk(t, TY_BOOL);
  }
  case M_LESS_THAN:
  case M_LESS_THAN_OR_EQUAL:
  case M_GREATER_THAN:
  case M_GREATER_THAN_OR_EQUAL:
    if (!of_kind(t, e->a, s, TY_DECIMAL, "decimal")) return NULL;
    if (!of_kind(t, e->b, x, TY_DECIMAL, "decimal")) return NULL;
    return mk(t, TY_BOOL);
  case M_IS_IPV4:
  case M_IS_IPV6:
  case M_IS_LOOPBACK:
  case M_IS_MULTICAST:
  case M_IS_IN_RANGE:
    if (!of_kind(t, e->a, s, TY_IP, "ipaddr")) return NULL;
    if (x && !of_kind(t, e->b, x, TY_IP, "ipaddr")) return NULL;
    return mk(t, TY_BOOL);
  case M_OFFSET:
  case M_DURATION_SINCE:
  case M_TO_DATE:
  case M_TO_TIME:
    if (!of_kind(t, e->a, s, TY_DATETIME, "datetime")) return NULL;
    if (e->method == M_OFFSET && !of_kind(t, e->b, x, TY_DURATION, "duration")) return NULL;
    if (e->method == M_DURATION_SINCE && !of_kind(t, e->b, x, TY_DATETIME, "datetime")) return NULL;
    return mk(t, e->method == M_OFFSET || e->method == M_TO_DATE ? TY_DATETIME : TY_DURATION);
  case M_TO_MILLISECONDS:
  case M_TO_SECONDS:
  case M_TO_MINUTES:
  case M_TO_HOURS:
  case M_TO_DAYS:
    if (!of_kind(t, e->a, s, TY_DURATION, "duration")) return NULL;
    return mk(t, TY_LONG);
  case M_GET_TAG:
  case M_HAS_TAG:
    if (!of_kind(t, e->a, s, TY_ENTITY, "an entity type")) return NULL;
    if (!of_kind(t, e->b, x, TY_STRING, "String")) return NULL;
    if (e->method == M_HAS_TAG) return bool_of(t, 0);
    tc_error(t, e, "`%s` does not allow tags", s->etype);
    return NULL;
  }
  return NULL;
}

static const Ty *check(Tc *t, const Expr *e, const Caps *in, Caps *out)
{
  Caps dummy = { 0 };
  out->n = 0;
  if (t->failed) return NULL;
  switch (e->kind) {
  case E_BOOL: return bool_of(t, e->bval);
  case E_TEMPORAL: return mk(t, TY_BOOL);
  case E_LONG: return mk(t, TY_LONG);
  case E_STRING: return mk(t, TY_STRING);
  case E_ENTITY: {
    Ty *r = mk(t, TY_ENTITY);
    r->etype = e->etype;
    return r;
  }
  case E_VAR: {
    if (e->var == VAR_CONTEXT) {
      Ty *r = mk(t, TY_RECORD);
      r->rec = RS_CONTEXT;
      r->action = t->action;
      return r;
    }
    Ty *r = mk(t, TY_ENTITY);
    r->etype = e->var == VAR_PRINCIPAL  ? "Box::Agent"
               : e->var == VAR_RESOURCE ? "Box::Resource"
                                        : "Box::Action";
    return r;
  }
  case E_SET: return check_set(t, e, in);
  case E_RECORD: {
    for (size_t i = 0; i < e->nitems; i++)
      if (!check(t, e->items[i], in, &dummy)) return NULL;
    Ty *r = mk(t, TY_RECORD);
    r->rec = RS_LITERAL;
    r->lit = e;
    return r;
  }
  case E_EXT: {
    if (e->a->kind != E_STRING) {
      tc_error(t, e, "extension constructors may not be called with non-literal expressions");
      return NULL;
    }
    if (!check(t, e->a, in, &dummy)) return NULL;
    TyKind k = e->ext == EXT_DECIMAL    ? TY_DECIMAL
               : e->ext == EXT_IP       ? TY_IP
               : e->ext == EXT_DATETIME ? TY_DATETIME
                                        : TY_DURATION;
    if (!e->ext_ok) {
      tc_error(t, e,
               "error during extension function argument validation: `%s(\"%s\")` is not a valid "
               "%s literal",
               e->str, e->a->str, e->str);
      return NULL;
    }
    return mk(t, k);
  }
  case E_IF: return check_if(t, e, in, out);
  case E_AND:
  case E_OR: return check_and_or(t, e, in, out);
  case E_NOT: {
    const Ty *a = check(t, e->a, in, &dummy);
    if (!a) return NULL;
    if (!boolish(t, e->a, a)) return NULL;
    return mk(t, a->k == TY_TRUE ? TY_FALSE : a->k == TY_FALSE ? TY_TRUE : TY_BOOL);
  }
  case E_NEG: {
    const Ty *a = check(t, e->a, in, &dummy);
    if (!a) return NULL;
    if (!of_kind(t, e->a, a, TY_LONG, "Long")) return NULL;
    return a;
  }
  case E_ADD:
  case E_SUB:
  case E_MUL: {
    const Ty *a = check(t, e->a, in, &dummy);
    if (!a) return NULL;
    if (!of_kind(t, e->a, a, TY_LONG, "Long")) return NULL;
    const Ty *b = check(t, e->b, in, &dummy);
    if (!b) return NULL;
    if (!of_kind(t, e->b, b, TY_LONG, "Long")) return NULL;
    return a;
  }
  case E_LT:
  case E_LE:
  case E_GT:
  case E_GE: {
    const Ty *a = check(t, e->a, in, &dummy);
    if (!a) return NULL;
    if (a->k != TY_LONG && a->k != TY_DATETIME && a->k != TY_DURATION) {
      expect_ty(t, e->a, a, "Long");
      return NULL;
    }
    const Ty *b = check(t, e->b, in, &dummy);
    if (!b) return NULL;
    if (b->k != a->k) {
      char *want = tname(a);
      expect_ty(t, e->b, b, want);
      g_free(want);
      return NULL;
    }
    return mk(t, TY_BOOL);
  }
  case E_EQ:
  case E_NE: return check_eq(t, e, in);
  case E_IN: return check_in(t, e, in);
  case E_IS: return check_is(t, e, in);
  case E_HAS: return check_has(t, e, in, out);
  case E_LIKE: {
    const Ty *a = check(t, e->a, in, &dummy);
    if (!a) return NULL;
    if (!of_kind(t, e->a, a, TY_STRING, "String")) return NULL;
    return mk(t, TY_BOOL);
  }
  case E_GETATTR: {
    const Ty *r = check(t, e->a, in, &dummy);
    if (!r) return NULL;
    return get_attr(t, e, r, e->str, in);
  }
  case E_METHOD: return check_method(t, e, in);
  }
  return NULL;
}

/* Parses each extension literal once (the evaluator reads the result). */
static void prepare_ext(Expr *e)
{
  if (!e) return;
  if (e->kind == E_EXT && e->a && e->a->kind == E_STRING && !e->ext_ok) {
    switch (e->ext) {
    case EXT_DECIMAL: e->ext_ok = policy_parse_decimal(e->a->str, e->a->len, &e->ext_l); break;
    case EXT_DATETIME: e->ext_ok = policy_parse_datetime(e->a->str, e->a->len, &e->ext_l); break;
    case EXT_DURATION: e->ext_ok = policy_parse_duration(e->a->str, e->a->len, &e->ext_l); break;
    case EXT_IP: {
      e->ext_ok = policy_parse_ip(e->a->str, e->a->len, &e->ip);
      break;
    }
    }
  }
  prepare_ext(e->a);
  prepare_ext(e->b);
  prepare_ext(e->c);
  if (e->kind == E_SET || e->kind == E_RECORD)
    for (size_t i = 0; i < e->nitems; i++) prepare_ext(e->items[i]);
}

void policy_typecheck_rule(const Rule *rule, const int *actions, int nactions, GPtrArray *errs)
{
  for (size_t q = 0; q < rule->nclauses; q++) prepare_ext(rule->clauses[q].expr);
  for (int k = 0; k < nactions; k++) {
    Tc t = { rule, actions[k], errs, g_ptr_array_new_with_free_func(g_free), false };
    Caps acc = { 0 };
    for (size_t q = 0; q < rule->nclauses && !t.failed; q++) {
      const Clause *c = &rule->clauses[q];
      if (c->temporal || !c->expr) continue;
      Caps out = { 0 };
      const Ty *ty = check(&t, c->expr, &acc, &out);
      if (!ty) break;
      if (!is_boolish(ty)) {
        expect_ty(&t, c->expr, ty, "Bool");
        break;
      }
      /* clauses fold with &&: a later clause sees earlier `when` capabilities */
      if (c->is_when) {
        if (ty->k == TY_FALSE) break;
        caps_union(&acc, &out);
      } else if (ty->k == TY_TRUE) {
        break; /* `unless true` makes the rest unreachable */
      }
    }
    bool failed = t.failed;
    g_ptr_array_free(t.arena, TRUE);
    if (failed) return;
  }
}
