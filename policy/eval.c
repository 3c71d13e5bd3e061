/* eval.c — the Cedar evaluator over a request (spec/policy.md §1.3, §3.1)
 * and box_policy_decide().  Evaluation never allocates: values borrow from
 * the AST and from the request's json-c input. */
#include "policy/decision.h"
#include "policy/history.h"
#include "policy/history_hooks.h"
#include "policy/message.h"
#include "policy/temporal.h"

#include <string.h>

typedef enum { RES_FALSE = 0, RES_TRUE = 1, RES_ERROR = 2 } EvalResult;

typedef enum {
  V_BOOL,
  V_LONG,
  V_STRING,
  V_ENTITY,
  V_SET,
  V_RECORD,
  V_DECIMAL,
  V_IP,
  V_DATETIME,
  V_DURATION
} VKind;
typedef enum { SRC_AST, SRC_JSON } SetSrc;
typedef enum { REC_AST, REC_JSON, REC_INPUT, REC_CONTEXT } RecSrc;

typedef struct {
  VKind kind;
  bool b;
  int64_t l;
  const char *s; /* string / entity id */
  size_t n;
  const char *type; /* entity type */
  int src;
  const Expr *node;
  json_object *json;
  const IpValue *ip; /* V_IP */
} Value;

typedef struct {
  int action;
  json_object *input;
  const char **why; /* the reason of the first evaluation error, for --explain */
} Env;

#define FAIL(env, text) (*(env)->why ? ERR : (*(env)->why = (text), ERR))

#define OK 0
#define ERR -1

static int eval(const Env *env, const Expr *e, Value *out);

static const char *const entity_agent = "Box::Agent";
static const char *const entity_resource = "Box::Resource";

static int from_json(const Env *env, json_object *j, const char *enum_type, Value *out)
{
  (void)env;
  memset(out, 0, sizeof *out);
  switch (json_object_get_type(j)) {
  case json_type_string:
    if (enum_type) {
      out->kind = V_ENTITY;
      out->type = enum_type;
    } else {
      out->kind = V_STRING;
    }
    out->s = json_object_get_string(j);
    out->n = (size_t)json_object_get_string_len(j);
    return OK;
  case json_type_int:
    out->kind = V_LONG;
    out->l = json_object_get_int64(j);
    return OK;
  case json_type_boolean:
    out->kind = V_BOOL;
    out->b = json_object_get_boolean(j);
    return OK;
  case json_type_array:
    out->kind = V_SET;
    out->src = SRC_JSON;
    out->json = j;
    return OK;
  case json_type_object:
    out->kind = V_RECORD;
    out->src = REC_JSON;
    out->json = j;
    return OK;
  default: return ERR;
  }
}

/* ---- records ------------------------------------------------------------ */

/* Looks up key in a record value: 1 found (out filled), 0 absent, ERR. */
static int rec_get(const Env *env, const Value *r, const char *key, size_t klen, Value *out)
{
  switch ((RecSrc)r->src) {
  case REC_CONTEXT:
    if (klen == 5 && memcmp(key, "input", 5) == 0) {
      memset(out, 0, sizeof *out);
      out->kind = V_RECORD;
      out->src = REC_INPUT;
      out->json = env->input;
      return 1;
    }
    return 0;
  case REC_INPUT:
  case REC_JSON: {
    if (memchr(key, '\0', klen)) return 0;
    json_object *v = NULL;
    if (!r->json || !json_object_object_get_ex(r->json, key, &v) || !v) return 0;
    const char *et = NULL;
    if (r->src == REC_INPUT && strcmp(key, "operation") == 0)
      et = policy_actions[env->action].enum_type;
    return from_json(env, v, et, out) == OK ? 1 : ERR;
  }
  case REC_AST:
    for (size_t i = 0; i < r->node->nitems; i++) {
      if (strlen(r->node->keys[i]) == klen && memcmp(r->node->keys[i], key, klen) == 0)
        return eval(env, r->node->items[i], out) == OK ? 1 : ERR;
    }
    return 0;
  }
  return ERR;
}

static size_t rec_size(const Value *r)
{
  switch ((RecSrc)r->src) {
  case REC_CONTEXT: return 1;
  case REC_INPUT:
  case REC_JSON: return r->json ? (size_t)json_object_object_length(r->json) : 0;
  case REC_AST: return r->node->nitems;
  }
  return 0;
}

/* ---- sets --------------------------------------------------------------- */

static size_t set_len(const Value *s)
{
  return s->src == SRC_AST ? s->node->nitems : json_object_array_length(s->json);
}

static int set_get(const Env *env, const Value *s, size_t i, Value *out)
{
  if (s->src == SRC_AST) return eval(env, s->node->items[i], out);
  return from_json(env, json_object_array_get_idx(s->json, i), NULL, out);
}

static int value_eq(const Env *env, const Value *a, const Value *b, bool *res);

typedef int (*ElemTest)(const Env *env, const Value *elem, const Value *other, bool *res);

/* Whether some element of s gives `want` from test(elem, other): *res is
 * want at the first that does, else !want. Membership (some element
 * equal) and inclusion (no element missing) are this one walk. */
static int set_find(const Env *env, const Value *s, ElemTest test, const Value *other, bool want,
                    bool *res)
{
  size_t n = set_len(s);
  for (size_t i = 0; i < n; i++) {
    Value v;
    if (set_get(env, s, i, &v) != OK) return ERR;
    bool got;
    if (test(env, &v, other, &got) != OK) return ERR;
    if (got == want) {
      *res = want;
      return OK;
    }
  }
  *res = !want;
  return OK;
}

static int set_contains(const Env *env, const Value *s, const Value *x, bool *res)
{
  return set_find(env, s, value_eq, x, true, res);
}

static int elem_in(const Env *env, const Value *elem, const Value *set, bool *res)
{
  return set_contains(env, set, elem, res);
}

/* every element of a is in b: no element of a is found not in b */
static int set_subset(const Env *env, const Value *a, const Value *b, bool *res)
{
  return set_find(env, a, elem_in, b, false, res);
}

/* Whether record b has field k equal to va (*eq false where b lacks k):
 * a record's fields compared one by one, whichever side a's come from. */
static int field_eq(const Env *env, const Value *va, const Value *b, const char *k, bool *eq)
{
  Value vb;
  *eq = false;
  int f = rec_get(env, b, k, strlen(k), &vb);
  if (f == ERR) return ERR;
  if (f == 0) return OK;
  return value_eq(env, va, &vb, eq);
}

static int value_eq(const Env *env, const Value *a, const Value *b, bool *res)
{
  *res = false;
  if (a->kind != b->kind) return OK;
  switch (a->kind) {
  case V_BOOL: *res = a->b == b->b; return OK;
  case V_LONG:
  case V_DECIMAL:
  case V_DATETIME:
  case V_DURATION: *res = a->l == b->l; return OK;
  case V_IP:
    *res = a->ip->v6 == b->ip->v6 && a->ip->prefix == b->ip->prefix &&
           memcmp(a->ip->addr, b->ip->addr, a->ip->v6 ? 16 : 4) == 0;
    return OK;
  case V_STRING: *res = a->n == b->n && memcmp(a->s, b->s, a->n) == 0; return OK;
  case V_ENTITY:
    *res = strcmp(a->type, b->type) == 0 && a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
    return OK;
  case V_SET: {
    bool x;
    if (set_subset(env, a, b, &x) != OK) return ERR;
    if (!x) return OK;
    if (set_subset(env, b, a, &x) != OK) return ERR;
    *res = x;
    return OK;
  }
  case V_RECORD: {
    if (rec_size(a) != rec_size(b)) return OK;
    /* iterate a's keys */
    if (a->src == REC_CONTEXT) {
      Value va, vb;
      int fa = rec_get(env, a, "input", 5, &va), fb = rec_get(env, b, "input", 5, &vb);
      if (fa == ERR || fb == ERR) return ERR;
      if (fb == 0) return OK;
      return value_eq(env, &va, &vb, res);
    }
    if (a->src == REC_AST) {
      for (size_t i = 0; i < a->node->nitems; i++) {
        const char *k = a->node->keys[i];
        Value va;
        if (eval(env, a->node->items[i], &va) != OK) return ERR;
        bool eq;
        if (field_eq(env, &va, b, k, &eq) != OK) return ERR;
        if (!eq) return OK;
      }
      *res = true;
      return OK;
    }
    if (a->json) {
      json_object_object_foreach (a->json, k, jv) {
        (void)jv;
        Value va;
        if (rec_get(env, a, k, strlen(k), &va) != 1) return ERR;
        bool eq;
        if (field_eq(env, &va, b, k, &eq) != OK) return ERR;
        if (!eq) return OK;
      }
    }
    *res = true;
    return OK;
  }
  }
  return ERR;
}

/* ---- like --------------------------------------------------------------- */

static bool like_match(const char *s, size_t n, const char *pat, const unsigned char *wild,
                       size_t plen)
{
  size_t si = 0, pi = 0;
  size_t star_p = (size_t)-1, star_s = 0;
  while (si < n) {
    if (pi < plen && wild[pi]) {
      star_p = pi++;
      star_s = si;
    } else if (pi < plen && pat[pi] == s[si]) {
      pi++;
      si++;
    } else if (star_p != (size_t)-1) {
      pi = star_p + 1;
      si = ++star_s;
    } else {
      return false;
    }
  }
  while (pi < plen && wild[pi]) pi++;
  return pi == plen;
}

/* ---- evaluation ---------------------------------------------------------- */

static int eval_bool(const Env *env, const Expr *e, bool *b)
{
  Value v;
  if (eval(env, e, &v) != OK || v.kind != V_BOOL) return ERR;
  *b = v.b;
  return OK;
}

static int eval_long(const Env *env, const Expr *e, int64_t *l)
{
  Value v;
  if (eval(env, e, &v) != OK || v.kind != V_LONG) return ERR;
  *l = v.l;
  return OK;
}

/* A long, decimal, datetime or duration; OK, for the evaluator to return. */
static int set_number(Value *out, VKind kind, int64_t l)
{
  out->kind = kind;
  out->l = l;
  return OK;
}

static void set_bool(Value *out, bool b)
{
  memset(out, 0, sizeof *out);
  out->kind = V_BOOL;
  out->b = b;
}

/* out was cleared by eval(), which every caller is under. */
static void set_entity(Value *out, const char *type, const char *id, size_t n)
{
  out->kind = V_ENTITY;
  out->type = type;
  out->s = id;
  out->n = n;
}

/* entity `in` entity-or-set: Box entities have no parents, so `in` is
 * equality (or membership). */
static int entity_in(const Env *env, const Value *l, const Value *r, bool *res)
{
  if (l->kind != V_ENTITY) return ERR;
  if (r->kind == V_ENTITY) return value_eq(env, l, r, res);
  if (r->kind != V_SET) return ERR;
  size_t n = set_len(r);
  *res = false;
  for (size_t i = 0; i < n; i++) {
    Value v;
    if (set_get(env, r, i, &v) != OK || v.kind != V_ENTITY) return ERR;
    bool eq;
    value_eq(env, l, &v, &eq);
    if (eq) *res = true;
  }
  return OK;
}

static bool ip_in_range(const IpValue *a, const IpValue *b)
{
  if (a->v6 != b->v6 || a->prefix < b->prefix) return false;
  int bits = b->prefix;
  for (int i = 0; bits > 0; i++, bits -= 8) {
    unsigned char mask = bits >= 8 ? 0xFF : (unsigned char)(0xFF << (8 - bits));
    if ((a->addr[i] & mask) != (b->addr[i] & mask)) return false;
  }
  return true;
}

static int64_t floor_div(int64_t a, int64_t b)
{
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static int eval_ext_method(const Env *env, const Expr *e, const Value *s, Value *out)
{
  Value x;
  memset(&x, 0, sizeof x);
  if (e->b && eval(env, e->b, &x) != OK) return ERR;
  switch (e->method) {
  case M_LESS_THAN:
  case M_LESS_THAN_OR_EQUAL:
  case M_GREATER_THAN:
  case M_GREATER_THAN_OR_EQUAL:
    if (s->kind != V_DECIMAL || x.kind != V_DECIMAL) return ERR;
    set_bool(out, e->method == M_LESS_THAN            ? s->l < x.l
                  : e->method == M_LESS_THAN_OR_EQUAL ? s->l <= x.l
                  : e->method == M_GREATER_THAN       ? s->l > x.l
                                                      : s->l >= x.l);
    return OK;
  case M_IS_IPV4:
  case M_IS_IPV6:
  case M_IS_LOOPBACK:
  case M_IS_MULTICAST:
  case M_IS_IN_RANGE: {
    if (s->kind != V_IP) return ERR;
    const IpValue *a = s->ip;
    bool r = false;
    if (e->method == M_IS_IPV4)
      r = !a->v6;
    else if (e->method == M_IS_IPV6)
      r = a->v6;
    else if (e->method == M_IS_IN_RANGE) {
      if (x.kind != V_IP) return ERR;
      r = ip_in_range(a, x.ip);
    } else {
      IpValue range = { 0 };
      range.v6 = a->v6;
      if (e->method == M_IS_LOOPBACK) {
        if (a->v6) {
          range.addr[15] = 1;
          range.prefix = 128;
        } else {
          range.addr[0] = 127;
          range.prefix = 8;
        }
      } else if (a->v6) {
        range.addr[0] = 0xFF;
        range.prefix = 8;
      } else {
        range.addr[0] = 224;
        range.prefix = 4;
      }
      r = ip_in_range(a, &range);
    }
    set_bool(out, r);
    return OK;
  }
  case M_OFFSET:
    if (s->kind != V_DATETIME || x.kind != V_DURATION) return ERR;
    out->kind = V_DATETIME;
    return __builtin_add_overflow(s->l, x.l, &out->l) ? ERR : OK;
  case M_DURATION_SINCE:
    if (s->kind != V_DATETIME || x.kind != V_DATETIME) return ERR;
    out->kind = V_DURATION;
    return __builtin_sub_overflow(s->l, x.l, &out->l) ? ERR : OK;
  case M_TO_DATE:
    if (s->kind != V_DATETIME) return ERR;
    return set_number(out, V_DATETIME, floor_div(s->l, 86400000) * 86400000);
  case M_TO_TIME:
    if (s->kind != V_DATETIME) return ERR;
    return set_number(out, V_DURATION, s->l - floor_div(s->l, 86400000) * 86400000);
  case M_TO_MILLISECONDS:
  case M_TO_SECONDS:
  case M_TO_MINUTES:
  case M_TO_HOURS:
  case M_TO_DAYS: {
    if (s->kind != V_DURATION) return ERR;
    static const int64_t div[] = { 1, 1000, 60000, 3600000, 86400000 };
    return set_number(out, V_LONG, s->l / div[e->method - M_TO_MILLISECONDS]);
  }
  case M_HAS_TAG:
    if (s->kind != V_ENTITY || x.kind != V_STRING) return ERR;
    set_bool(out, false);
    return OK;
  default: return ERR; /* getTag: Box entities carry no tags */
  }
}

static int eval_var(const Env *env, const Expr *e, Value *out)
{
  switch (e->var) {
  case VAR_PRINCIPAL: set_entity(out, entity_agent, "self", 4); return OK;
  case VAR_RESOURCE: set_entity(out, entity_resource, "unused", 6); return OK;
  case VAR_ACTION:
    set_entity(out, policy_action_etype(env->action), policy_action_id(env->action),
               strlen(policy_action_id(env->action)));
    return OK;
  case VAR_CONTEXT:
    out->kind = V_RECORD;
    out->src = REC_CONTEXT;
    return OK;
  }
  return ERR;
}

static int eval_is(const Env *env, const Expr *e, Value *out)
{
  Value a;
  if (eval(env, e->a, &a) != OK || a.kind != V_ENTITY) return ERR;
  bool r = strcmp(a.type, e->etype) == 0;
  if (e->b) {
    Value b;
    if (eval(env, e->b, &b) != OK) return ERR;
    bool in;
    if (entity_in(env, &a, &b, &in) != OK) return ERR;
    r = r && in;
  }
  set_bool(out, r);
  return OK;
}

static int eval_has(const Env *env, const Expr *e, Value *out)
{
  Value cur;
  if (eval(env, e->a, &cur) != OK) return ERR;
  for (size_t i = 0; i < e->nitems; i++) {
    if (cur.kind == V_ENTITY) {
      /* Box entities carry no attributes */
      set_bool(out, false);
      return OK;
    }
    if (cur.kind != V_RECORD) return ERR;
    Value next;
    int f = rec_get(env, &cur, e->keys[i], strlen(e->keys[i]), &next);
    if (f == ERR) return ERR;
    if (f == 0) {
      set_bool(out, false);
      return OK;
    }
    cur = next;
  }
  set_bool(out, true);
  return OK;
}

static int eval_method(const Env *env, const Expr *e, Value *out)
{
  Value s;
  if (eval(env, e->a, &s) != OK) return ERR;
  if (e->method > M_IS_EMPTY) return eval_ext_method(env, e, &s, out);
  if (s.kind != V_SET) return ERR;
  bool r = false;
  switch (e->method) {
  case M_IS_EMPTY: r = set_len(&s) == 0; break;
  case M_CONTAINS: {
    Value x;
    if (eval(env, e->b, &x) != OK || set_contains(env, &s, &x, &r) != OK) return ERR;
    break;
  }
  case M_CONTAINS_ALL:
  case M_CONTAINS_ANY: {
    Value x;
    if (eval(env, e->b, &x) != OK || x.kind != V_SET) return ERR;
    if (e->method == M_CONTAINS_ALL) {
      if (set_subset(env, &x, &s, &r) != OK) return ERR;
    } else {
      size_t n = set_len(&x);
      for (size_t i = 0; i < n && !r; i++) {
        Value v;
        if (set_get(env, &x, i, &v) != OK || set_contains(env, &s, &v, &r) != OK) return ERR;
      }
    }
    break;
  }
  default: return ERR;
  }
  set_bool(out, r);
  return OK;
}

static int eval(const Env *env, const Expr *e, Value *out)
{
  memset(out, 0, sizeof *out);
  switch (e->kind) {
  case E_BOOL:
    out->kind = V_BOOL;
    out->b = e->bval;
    return OK;
  case E_TEMPORAL:
    out->kind = V_BOOL;
    out->b = e->tf && e->tf->value;
    return OK; /* evaluated before the rules */
  case E_LONG: return set_number(out, V_LONG, e->lval);
  case E_STRING:
    out->kind = V_STRING;
    out->s = e->str;
    out->n = e->len;
    return OK;
  case E_ENTITY: set_entity(out, e->etype, e->str, e->len); return OK;
  case E_VAR: return eval_var(env, e, out);
  case E_SET:
  case E_RECORD:
    /* an element that errs is the whole literal's error */
    for (size_t i = 0; i < e->nitems; i++) {
      Value tmp;
      if (eval(env, e->items[i], &tmp) != OK) return ERR;
    }
    out->kind = e->kind == E_SET ? V_SET : V_RECORD;
    out->src = e->kind == E_SET ? (int)SRC_AST : (int)REC_AST;
    out->node = e;
    return OK;
  case E_IF: {
    bool c;
    if (eval_bool(env, e->a, &c) != OK) return ERR;
    return eval(env, c ? e->b : e->c, out);
  }
  case E_AND:
  case E_OR: {
    bool l, r;
    if (eval_bool(env, e->a, &l) != OK) return ERR;
    if (e->kind == E_AND ? !l : l) {
      set_bool(out, l);
      return OK;
    }
    if (eval_bool(env, e->b, &r) != OK) return ERR;
    set_bool(out, r);
    return OK;
  }
  case E_NOT: {
    bool b;
    if (eval_bool(env, e->a, &b) != OK) return ERR;
    set_bool(out, !b);
    return OK;
  }
  case E_NEG: {
    int64_t l;
    if (eval_long(env, e->a, &l) != OK) return ERR;
    if (l == INT64_MIN) return FAIL(env, "integer overflow");
    return set_number(out, V_LONG, -l);
  }
  case E_EQ:
  case E_NE: {
    Value a, b;
    bool eq;
    if (eval(env, e->a, &a) != OK || eval(env, e->b, &b) != OK) return ERR;
    if (value_eq(env, &a, &b, &eq) != OK) return ERR;
    set_bool(out, e->kind == E_EQ ? eq : !eq);
    return OK;
  }
  case E_LT:
  case E_LE:
  case E_GT:
  case E_GE: {
    Value va, vb;
    if (eval(env, e->a, &va) != OK || eval(env, e->b, &vb) != OK) return ERR;
    if (va.kind != vb.kind || (va.kind != V_LONG && va.kind != V_DATETIME && va.kind != V_DURATION))
      return ERR;
    int64_t a = va.l, b = vb.l;
    bool r = e->kind == E_LT ? a < b : e->kind == E_LE ? a <= b : e->kind == E_GT ? a > b : a >= b;
    set_bool(out, r);
    return OK;
  }
  case E_ADD:
  case E_SUB:
  case E_MUL: {
    int64_t a, b, r;
    if (eval_long(env, e->a, &a) != OK || eval_long(env, e->b, &b) != OK) return ERR;
    bool ovf = e->kind == E_ADD   ? __builtin_add_overflow(a, b, &r)
               : e->kind == E_SUB ? __builtin_sub_overflow(a, b, &r)
                                  : __builtin_mul_overflow(a, b, &r);
    if (ovf) return FAIL(env, "integer overflow");
    return set_number(out, V_LONG, r);
  }
  case E_IN: {
    Value a, b;
    bool r;
    if (eval(env, e->a, &a) != OK || eval(env, e->b, &b) != OK) return ERR;
    if (entity_in(env, &a, &b, &r) != OK) return ERR;
    set_bool(out, r);
    return OK;
  }
  case E_IS: return eval_is(env, e, out);
  case E_HAS: return eval_has(env, e, out);
  case E_LIKE: {
    Value a;
    if (eval(env, e->a, &a) != OK || a.kind != V_STRING) return ERR;
    set_bool(out, like_match(a.s, a.n, e->str, e->wild, e->len));
    return OK;
  }
  case E_GETATTR: {
    Value r;
    if (eval(env, e->a, &r) != OK || r.kind != V_RECORD) return ERR;
    int f = rec_get(env, &r, e->str, e->len, out);
    if (f == 0) return FAIL(env, "a record does not have the attribute read");
    return f == 1 ? OK : ERR;
  }
  case E_EXT:
    if (!e->ext_ok) return ERR;
    switch (e->ext) {
    case EXT_DECIMAL: return set_number(out, V_DECIMAL, e->ext_l);
    case EXT_DATETIME: return set_number(out, V_DATETIME, e->ext_l);
    case EXT_DURATION: return set_number(out, V_DURATION, e->ext_l);
    case EXT_IP:
      out->kind = V_IP;
      out->ip = &e->ip;
      return OK;
    }
    return ERR;
  case E_METHOD: return eval_method(env, e, out);
  }
  return ERR;
}

static EvalResult eval_rule(const Rule *rule, int action, json_object *input, const char **why)
{
  if (!rule->applies[action]) return RES_FALSE;
  Env env = { action, input, why };
  for (size_t i = 0; i < rule->nclauses; i++) {
    bool b;
    if (rule->clauses[i].temporal)
      b = rule->clauses[i].tf && rule->clauses[i].tf->value;
    else if (eval_bool(&env, rule->clauses[i].expr, &b) != OK) {
      if (!*why) *why = "an operand has the wrong type";
      return RES_ERROR;
    }
    if (b != rule->clauses[i].is_when) return RES_FALSE;
  }
  return RES_TRUE;
}

static EvalResult rule_result(const Rule *rule, int action, json_object *input)
{
  const char *why = NULL;
  return eval_rule(rule, action, input, &why);
}

GPtrArray *box_policy_explain(BoxPolicy *policy, const char *action, json_object *input)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
  int ai = policy_action_index(action);
  char *why_req = NULL;
  if (ai < 0 || !policy_request_valid(ai, input, &why_req)) {
    g_ptr_array_add(lines,
                    g_strdup_printf("the request is malformed (%s), so no rule was evaluated",
                                    why_req ? why_req : "unknown action"));
    g_free(why_req);
    return lines;
  }
  for (size_t i = 0; policy && i < policy->nrules; i++) {
    const Rule *r = &policy->rules[i];
    const char *why = NULL;
    EvalResult res = eval_rule(r, ai, input, &why);
    if (res == RES_FALSE) continue;
    GString *l = g_string_new(NULL);
    g_string_append_printf(l, "rule %d (%s, %s, line %d) ", r->index + 1, r->label,
                           r->forbid ? "forbid" : "permit", r->line);
    if (res == RES_TRUE)
      g_string_append(l, r->nclauses ? "matched: its scope matches and every condition holds"
                                     : "matched: its scope matches and it has no condition");
    else
      g_string_append_printf(l, "erred: %s; an evaluation error denies the whole request", why);
    g_ptr_array_add(lines, g_string_free(l, FALSE));
  }
  if (lines->len == 0) g_ptr_array_add(lines, g_strdup("no rule matched or erred"));
  return lines;
}

/* ---- decide --------------------------------------------------------------- */

static BoxDecision *decide(BoxPolicy *policy, const char *action, json_object *input, bool quiet);

BoxDecision *box_policy_decide(BoxPolicy *policy, const char *action, json_object *input)
{
  return decide(policy, action, input, false);
}

BoxDecision *box_policy_decide_quiet(BoxPolicy *policy, const char *action, json_object *input)
{
  if (box_policy_reads_history(policy)) return NULL;
  return decide(policy, action, input, true);
}

/* A decision refused before any rule ran */
static BoxDecision *decision_fault(const char *action, const char *resource, const char *reason)
{
  BoxDecision m = { .verdict = BOX_VERDICT_DENY, .cause = BOX_CAUSE_INTERNAL_FAULT };
  m.action = (char *)action;
  m.resource = (char *)resource;
  m.rule = (char *)"<default-deny>";
  m.reason = (char *)reason;
  return policy_decision_made(&m, NULL, 0, NULL, 0);
}

BoxDecision *box_decision_new(const char *action, const char *resource, BoxCause cause,
                              const char *rule)
{
  BoxDecision m = { .verdict = cause == BOX_CAUSE_PERMITTED ? BOX_VERDICT_PERMIT : BOX_VERDICT_DENY,
                    .cause = cause };
  m.action = (char *)action;
  m.resource = (char *)resource;
  switch (cause) {
  case BOX_CAUSE_POLICY_PENDING:
    m.rule = (char *)"<policy-pending>";
    m.reason = (char *)"the complete policy bundle is not installed";
    break;
  case BOX_CAUSE_PERMITTED: m.rule = (char *)rule; break;
  default:
    m.rule = (char *)"<default-deny>";
    m.reason = (char *)"no permit matched";
    break;
  }
  return policy_decision_made(&m, NULL, 0, rule ? &rule : NULL, rule ? 1 : 0);
}

static BoxDecision *decide(BoxPolicy *policy, const char *action, json_object *input, bool quiet)
{
  char *owned;
  const char *resource = policy_resource_label_borrowed(action, input, &owned);
  if (!action) action = "";
  int ai = policy_action_index(action);
  char *why = NULL;
  if (ai < 0 || !policy_request_valid(ai, input, &why)) {
    g_printerr("box: warning: policy refused a malformed request: %s\n",
               why ? why : "unknown action");
    g_free(why);
    BoxDecision *d =
      decision_fault(action, resource, "the request could not be evaluated, so it was refused");
    g_free(owned);
    return d;
  }

  if (ai >= POLICY_BOX_ACTIONS && (!policy || !policy_installed(policy, ai))) {
    BoxDecision *d = box_decision_new(action, resource, BOX_CAUSE_POLICY_PENDING, NULL);
    g_free(owned);
    return d;
  }

  /* append the ::request event, evaluate the temporal clauses (a tool's
   * generated action has its events too, spec/policy.md §2.3) */
  const char *history_fault = NULL;
  bool temporal = policy && policy->temporal && !quiet;
  if (temporal && !policy_temporal_begin(policy, ai, input, &history_fault)) {
    char *text =
      g_strdup_printf("the request could not be evaluated, so it was refused: %s", history_fault);
    BoxDecision *d = decision_fault(action, resource, text);
    g_free(text);
    g_free(owned);
    return d;
  }
  size_t n = policy ? policy->nby_action[ai] : 0;
  const Rule *const *rules = policy ? policy->by_action[ai] : NULL;
  const Rule *stack_match[64];
  const Rule **permits = stack_match, **forbids = NULL;
  const Rule **heap = NULL;
  if (2 * n > G_N_ELEMENTS(stack_match)) permits = heap = g_new(const Rule *, 2 * n);
  forbids = permits + n;
  size_t np = 0, nf = 0;
  bool error = false;
  for (size_t i = 0; i < n; i++) {
    const Rule *r = rules[i];
    EvalResult res = rule_result(r, ai, input);
    if (res == RES_ERROR)
      error = true;
    else if (res == RES_TRUE) {
      if (r->forbid)
        forbids[nf++] = r;
      else
        permits[np++] = r;
    }
  }
  if (temporal) policy_temporal_end(policy, !error && nf == 0 && np > 0, ai, resource);

  BoxDecision m = { .verdict = BOX_VERDICT_DENY };
  m.action = (char *)action;
  m.resource = (char *)resource;
  if (error) {
    m.cause = BOX_CAUSE_INTERNAL_FAULT;
    m.rule = (char *)"<default-deny>";
    m.reason = (char *)"the request could not be evaluated, so it was refused";
  } else if (nf) {
    m.cause = BOX_CAUSE_FORBIDDEN;
    m.rule = forbids[0]->label;
    for (size_t i = 0; i < nf && !m.description; i++) m.description = forbids[i]->description;
    m.reason = (char *)"a forbid rule matched";
  } else if (np) {
    m.verdict = BOX_VERDICT_PERMIT;
    m.cause = BOX_CAUSE_PERMITTED;
    m.rule = permits[0]->label;
  } else {
    m.cause = BOX_CAUSE_NO_MATCH;
    m.rule = (char *)"<default-deny>";
    m.reason = (char *)"no permit matched";
  }
  /* attribution: matching forbids for a deny, else matching permits */
  const Rule **attr = nf ? forbids : permits;
  size_t nattr = nf ? nf : np;
  const char *stack_ids[32], **ids = stack_ids;
  if (nattr > G_N_ELEMENTS(stack_ids)) ids = g_new(const char *, nattr);
  for (size_t i = 0; i < nattr; i++) ids[i] = attr[i]->label;
  BoxDecision *d =
    policy_decision_made(&m, forbids, m.cause == BOX_CAUSE_FORBIDDEN ? nf : 0, ids, (guint)nattr);
  if (ids != stack_ids) g_free(ids);
  g_free(heap);
  g_free(owned);
  return d;
}
