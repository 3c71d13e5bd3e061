/* beneath.c — whether some request on a path below a directory may be
 * permitted (box_policy_may_permit_beneath), judged from the rules alone. */
#include "policy/policy-private.h"

#include <string.h>

/* The mount refuses a directory it walks through only when no request on a
 * path below it could be permitted (a walk to a permitted path must go on).
 * Each rule is judged over every request on such a path, any operation:
 * its conditions hold for all of them (B_ALL), for none (B_NONE), or which
 * is not known (B_SOME), the answer for every form not read here. */
typedef enum { B_NONE, B_SOME, B_ALL } Beneath;

/* Is e `context.input.path`? */
static bool is_input_path(const Expr *e)
{
  return e->kind == E_GETATTR && e->len == 4 && memcmp(e->str, "path", 4) == 0 && e->a &&
         e->a->kind == E_GETATTR && e->a->len == 5 && memcmp(e->a->str, "input", 5) == 0 &&
         e->a->a && e->a->a->kind == E_VAR && e->a->a->var == VAR_CONTEXT;
}

/* `path like pat` over every path that starts with prefix and goes on:
 * the pattern positions reachable after the prefix (a star keeps its own). */
static Beneath like_beneath(const char *pre, size_t n, const char *pat, const unsigned char *wild,
                            size_t plen)
{
  bool *at = g_new0(bool, 2 * (plen + 1)), *next = at + plen + 1;
  at[0] = true;
  for (size_t i = 0; i < plen && at[i] && wild[i]; i++) at[i + 1] = true;
  for (size_t k = 0; k < n; k++) {
    memset(next, 0, plen + 1);
    for (size_t i = 0; i < plen; i++) {
      if (!at[i]) continue;
      if (wild[i])
        next[i] = true;
      else if (pat[i] == pre[k])
        next[i + 1] = true;
    }
    for (size_t i = 0; i < plen; i++)
      if (next[i] && wild[i]) next[i + 1] = true;
    memcpy(at, next, plen + 1);
  }
  /* some position before the end: a name below can take the pattern on;
   * one whose rest is all stars: every name below matches */
  Beneath b = B_NONE;
  for (size_t i = 0; i < plen; i++) {
    if (!at[i]) continue;
    b = B_SOME;
    size_t j = i;
    while (j < plen && wild[j]) j++;
    if (j == plen) {
      b = B_ALL;
      break;
    }
  }
  g_free(at);
  return b;
}

static Beneath beneath_expr(const Expr *e, const char *pre, size_t n)
{
  switch (e->kind) {
  case E_BOOL: return e->bval ? B_ALL : B_NONE;
  case E_NOT: {
    Beneath b = beneath_expr(e->a, pre, n);
    return b == B_ALL ? B_NONE : b == B_NONE ? B_ALL : B_SOME;
  }
  case E_AND:
  case E_OR: {
    Beneath l = beneath_expr(e->a, pre, n), r = beneath_expr(e->b, pre, n);
    if (e->kind == E_AND)
      return l == B_NONE || r == B_NONE ? B_NONE : l == B_ALL && r == B_ALL ? B_ALL : B_SOME;
    return l == B_ALL || r == B_ALL ? B_ALL : l == B_NONE && r == B_NONE ? B_NONE : B_SOME;
  }
  case E_LIKE: return is_input_path(e->a) ? like_beneath(pre, n, e->str, e->wild, e->len) : B_SOME;
  case E_EQ:
  case E_NE: {
    const Expr *lit = is_input_path(e->a) ? e->b : is_input_path(e->b) ? e->a : NULL;
    if (!lit || lit->kind != E_STRING) return B_SOME;
    /* a path below is longer than the prefix and starts with it */
    bool below = lit->len > n && memcmp(lit->str, pre, n) == 0;
    if (below) return B_SOME;
    return e->kind == E_EQ ? B_NONE : B_ALL;
  }
  default: return B_SOME;
  }
}

static Beneath beneath_rule(const Rule *r, const char *pre, size_t n)
{
  Beneath all = B_ALL;
  for (size_t i = 0; i < r->nclauses; i++) {
    const Clause *c = &r->clauses[i];
    Beneath b = c->temporal || !c->expr ? B_SOME : beneath_expr(c->expr, pre, n);
    if (!c->is_when) b = b == B_ALL ? B_NONE : b == B_NONE ? B_ALL : B_SOME;
    if (b == B_NONE) return B_NONE;
    if (b == B_SOME) all = B_SOME;
  }
  return all;
}

bool box_policy_may_permit_beneath(BoxPolicy *policy, const char *dir)
{
  if (!policy || !dir) return false;
  size_t dn = strlen(dir);
  char *pre = g_strconcat(dir, dn && dir[dn - 1] == '/' ? "" : "/", NULL);
  size_t n = strlen(pre);
  bool may = false;
  for (int ai = 0; ai < (int)policy_nactions && ai < POLICY_MAX_ACTIONS && !may; ai++) {
    if (strncmp(policy_actions[ai].term, "fs:", 3) != 0) continue;
    bool forbidden = false, permitted = false;
    for (size_t i = 0; i < policy->nby_action[ai]; i++) {
      const Rule *r = policy->by_action[ai][i];
      Beneath b = beneath_rule(r, pre, n);
      if (r->forbid && b == B_ALL)
        forbidden = true;
      else if (!r->forbid && b != B_NONE)
        permitted = true;
    }
    may = permitted && !forbidden;
  }
  g_free(pre);
  return may;
}
