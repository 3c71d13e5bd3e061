/* inert.c — the load checks that find rules which can never do what they
 * say (spec/policy.md §3.4): inert literals (a path under the operator home
 * spelled absolutely, a directory with a trailing slash, a program spelled
 * as a path) and a cap written as a permit beside another permit. */
#include "policy/inert.h"
#include "policy/message.h"
#include "policy/path.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  BoxPolicy *pol;
  const Rule *rule;
  const char *homes[2];
  int nhomes;
  bool check_path, check_program, check_program_path, trailing;
  GError *err;
} Inert;

static void refuse(Inert *in, const Expr *at, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void refuse(Inert *in, const Expr *at, const char *fmt, ...)
{
  if (in->err) return;
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  char *name = policy_rule_name(in->rule);
  g_set_error(&in->err, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA,
              POLICY_INERT_PREFIX "%s %s at line %d, column %d", name, what, at->line, at->col);
  g_free(name);
  g_free(what);
}

static void warn(Inert *in, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void warn(Inert *in, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  char *name = policy_rule_name(in->rule);
  char *w = g_strdup_printf("%s %s", name, what);
  g_free(name);
  g_free(what);
  for (guint i = 0; i < in->pol->warnings->len; i++) {
    if (strcmp(in->pol->warnings->pdata[i], w) == 0) {
      g_free(w);
      return;
    }
  }
  g_ptr_array_add(in->pol->warnings, w);
}

/* The home that s names or lies under (component-bounded), or NULL. */
static const char *under_home(const Inert *in, const char *s, size_t n)
{
  for (int i = 0; i < in->nhomes; i++)
    if (box_path_within_len(s, n, in->homes[i])) return in->homes[i];
  return NULL;
}

/* Renders a pattern from [from, to): wildcards as `*`, literal stars `\*`. */
static void render_pattern(GString *out, const Expr *like, size_t from, size_t to)
{
  for (size_t i = from; i < to; i++) {
    if (like->wild[i])
      g_string_append_c(out, '*');
    else if (like->str[i] == '*')
      g_string_append(out, "\\*");
    else
      g_string_append_c(out, like->str[i]);
  }
}

static const char *input_attr(const Expr *e)
{
  if (!e || e->kind != E_GETATTR || !e->a || e->a->kind != E_GETATTR ||
      strcmp(e->a->str, "input") != 0 || !e->a->a || e->a->a->kind != E_VAR ||
      e->a->a->var != VAR_CONTEXT)
    return NULL;
  return e->str;
}

static bool wants(const Inert *in, const char *attr)
{
  if (strcmp(attr, "path") == 0) return in->check_path;
  if (strcmp(attr, "program") == 0) return in->check_program;
  if (strcmp(attr, "program_path") == 0) return in->check_program_path;
  return false;
}

/* context.input.program is the first word as written: a literal (shown as
 * shown) with a slash in it matches only that spelling, not the binary. */
static void warn_program_slash(Inert *in, const char *text, size_t len, const char *shown)
{
  if (memchr(text, '/', len))
    warn(in,
         "compares context.input.program with \"%s\", which matches only a first word spelled that "
         "way; "
         "compare context.input.program_path to match the resolved binary",
         shown);
}

static void check_eq_literal(Inert *in, const char *attr, const Expr *lit)
{
  if (!wants(in, attr)) return;
  if (strcmp(attr, "program") == 0) {
    warn_program_slash(in, lit->str, lit->len, lit->str);
    return;
  }
  const char *home = under_home(in, lit->str, lit->len);
  if (home) {
    char *t = box_path_tilde_len(lit->str, lit->len, home);
    refuse(in, lit,
           "compares context.input.%s with \"%s\", and a path under the operator home is spelled "
           "~/…; write \"%s\"",
           attr, lit->str, t);
    g_free(t);
    return;
  }
  if (in->trailing && lit->len > 1 && lit->str[lit->len - 1] == '/') {
    size_t end = lit->len;
    while (end > 1 && lit->str[end - 1] == '/') end--;
    refuse(in, lit,
           "compares context.input.%s with \"%s\", and a directory is spelled without a trailing "
           "slash; write \"%.*s\"",
           attr, lit->str, (int)end, lit->str);
  }
}

/* Refuses a `like` whose pattern (pat, as written) should be spelled as
 * fix says, and why; frees both. */
static void refuse_pattern(Inert *in, const Expr *like, const char *attr, GString *pat,
                           const char *why, GString *fix)
{
  refuse(in, like, "compares context.input.%s with the pattern \"%s\", and %s; write \"%s\"", attr,
         pat->str, why, fix->str);
  g_string_free(fix, TRUE);
  g_string_free(pat, TRUE);
}

static void check_like(Inert *in, const char *attr, const Expr *like)
{
  if (!wants(in, attr)) return;
  GString *pat = g_string_new(NULL);
  render_pattern(pat, like, 0, like->len);
  /* literal segments between wildcards */
  size_t first_end = 0;
  while (first_end < like->len && !like->wild[first_end]) first_end++;
  bool has_wild = first_end < like->len;
  if (strcmp(attr, "program") == 0) {
    warn_program_slash(in, like->str, like->len, pat->str);
    g_string_free(pat, TRUE);
    return;
  }
  const char *lead = under_home(in, like->str, first_end);
  if (lead) {
    GString *t = g_string_new("~");
    if (!has_wild) {
      char *tf = box_path_tilde_len(like->str, like->len, lead);
      g_string_assign(t, "");
      render_pattern(t, like, 0, 0);
      g_string_append(t, tf);
      g_free(tf);
    } else {
      /* the home's own slash ("/": the root's) starts the rest */
      render_pattern(t, like, strcmp(lead, "/") == 0 ? 0 : strlen(lead), like->len);
    }
    refuse_pattern(in, like, attr, pat, "a path under the operator home is spelled ~/…", t);
    return;
  }
  size_t last_start = like->len;
  while (last_start > 0 && !like->wild[last_start - 1]) last_start--;
  if (in->trailing && like->len > last_start && like->str[like->len - 1] == '/' &&
      strcmp(pat->str, "/") != 0) {
    size_t end = like->len;
    while (end > 1 && like->str[end - 1] == '/' && !like->wild[end - 1]) end--;
    GString *t = g_string_new(NULL);
    render_pattern(t, like, 0, end);
    refuse_pattern(in, like, attr, pat, "a directory is spelled without a trailing slash", t);
    return;
  }
  /* a later literal segment naming the home */
  bool later = false;
  for (size_t i = first_end; i < like->len && !later; i++) {
    if (like->wild[i]) continue;
    size_t j = i;
    while (j < like->len && !like->wild[j]) j++;
    for (int h = 0; h < in->nhomes && !later; h++) {
      const char *home = in->homes[h];
      size_t hlen = strlen(home);
      if (hlen <= 1) continue;
      for (size_t k = i; k + hlen <= j; k++) {
        if (memcmp(like->str + k, home, hlen) == 0 &&
            (k + hlen == j || like->str[k + hlen] == '/')) {
          later = true;
          break;
        }
      }
    }
    i = j;
  }
  if (later)
    warn(in,
         "compares context.input.%s with the pattern \"%s\", which names the operator home after a "
         "wildcard; a path "
         "under the operator home is spelled ~/…, so the pattern may match nothing",
         attr, pat->str);
  g_string_free(pat, TRUE);
}

static void walk(Inert *in, const Expr *e)
{
  if (!e || in->err) return;
  switch (e->kind) {
  case E_EQ:
  case E_NE: {
    const char *attr;
    if ((attr = input_attr(e->a)) && e->b->kind == E_STRING)
      check_eq_literal(in, attr, e->b);
    else if ((attr = input_attr(e->b)) && e->a->kind == E_STRING)
      check_eq_literal(in, attr, e->a);
    break;
  }
  case E_LIKE: {
    const char *attr = input_attr(e->a);
    if (attr) check_like(in, attr, e);
    break;
  }
  case E_METHOD: {
    const char *attr;
    if (e->method == M_CONTAINS && e->a->kind == E_SET && (attr = input_attr(e->b)))
      for (size_t i = 0; i < e->a->nitems; i++)
        if (e->a->items[i]->kind == E_STRING) check_eq_literal(in, attr, e->a->items[i]);
    break;
  }
  default: break;
  }
  walk(in, e->a);
  walk(in, e->b);
  walk(in, e->c);
  if (e->kind == E_SET || e->kind == E_RECORD)
    for (size_t i = 0; i < e->nitems; i++) walk(in, e->items[i]);
}

bool policy_check_inert(BoxPolicy *pol, const char *operator_home, GError **error)
{
  if (!operator_home || !*operator_home) return true;
  Inert in = { 0 };
  in.pol = pol;
  char *stated = g_strdup(operator_home);
  size_t sl = strlen(stated);
  while (sl > 1 && stated[sl - 1] == '/') stated[--sl] = '\0';
  char *canon = realpath(operator_home, NULL);
  in.homes[in.nhomes++] = stated;
  if (canon && strcmp(canon, stated) != 0) in.homes[in.nhomes++] = canon;
  for (size_t i = 0; i < pol->nrules && !in.err; i++) {
    const Rule *r = &pol->rules[i];
    in.rule = r;
    in.check_path = in.check_program = in.check_program_path = in.trailing = false;
    if (r->action.op == SC_ANY) {
      in.check_path = in.check_program = in.check_program_path = true;
    } else if (r->action.nents > 0) {
      bool all_fs = true, all_shell = true, box = true;
      for (size_t j = 0; j < r->action.nents; j++) {
        const Expr *a = r->action.ents[j];
        if (strcmp(a->etype, "Box::Action") != 0) box = false;
        if (!g_str_has_prefix(a->str, "fs:")) all_fs = false;
        if (!g_str_has_prefix(a->str, "shell:")) all_shell = false;
      }
      const char *first = r->action.ents[0]->str;
      if (!box) {
        /* not checked */
      } else if (all_fs) {
        in.check_path = in.trailing = true;
      } else if (all_shell) {
        in.check_program = in.check_program_path = in.trailing = true;
      } else if (g_str_has_prefix(first, "fs:") || g_str_has_prefix(first, "shell:")) {
        in.check_path = in.check_program = in.check_program_path = true;
      }
    }
    if (!in.check_path && !in.check_program && !in.check_program_path) continue;
    for (size_t k = 0; k < r->nclauses && !in.err; k++) walk(&in, r->clauses[k].expr);
  }
  g_free(stated);
  free(canon);
  if (in.err) {
    g_propagate_error(error, in.err);
    return false;
  }
  return true;
}

/* ---- cap-as-permit ---------------------------------------------------------- */

static bool same_entity(const Expr *a, const Expr *b)
{
  return strcmp(a->etype, b->etype) == 0 && a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
}

static bool same_constraint(const ScopeConstraint *a, const ScopeConstraint *b)
{
  if (a->op != b->op || a->nents != b->nents) return false;
  if ((a->is_type || b->is_type) &&
      (!a->is_type || !b->is_type || strcmp(a->is_type, b->is_type) != 0))
    return false;
  for (size_t i = 0; i < a->nents; i++)
    if (!same_entity(a->ents[i], b->ents[i])) return false;
  return true;
}

/* O's actions ⊇ B's actions */
static bool actions_cover(const ScopeConstraint *o, const ScopeConstraint *b)
{
  if (o->op == SC_ANY) return true;
  if (b->op == SC_ANY) return false;
  for (size_t i = 0; i < b->nents; i++) {
    bool found = false;
    for (size_t j = 0; j < o->nents && !found; j++) found = same_entity(b->ents[i], o->ents[j]);
    if (!found) return false;
  }
  return true;
}

static bool bare(const Rule *r)
{
  for (size_t i = 0; i < r->nclauses; i++) {
    const Clause *c = &r->clauses[i];
    if (c->temporal || !c->expr || c->expr->kind != E_BOOL || c->expr->bval != c->is_when)
      return false;
  }
  return true;
}

bool policy_check_cap_as_permit(BoxPolicy *pol, GError **error)
{
  GString *refusal = NULL;
  int line = 0, col = 0;
  for (size_t i = 0; i < pol->nrules; i++) {
    const Rule *b = &pol->rules[i];
    if (b->forbid || !b->has_temporal) continue;
    for (size_t j = 0; j < pol->nrules; j++) {
      const Rule *o = &pol->rules[j];
      if (j == i || o->forbid || o->has_temporal) continue;
      if (o->principal.op != SC_ANY && !same_constraint(&o->principal, &b->principal)) continue;
      if (!actions_cover(&o->action, &b->action)) continue;
      int covers; /* 1 covers, 0 undecided */
      if (o->resource.op == SC_ANY)
        covers = 1;
      else if (o->resource.op == SC_EQ && b->resource.op == SC_EQ) {
        if (!same_entity(o->resource.ents[0], b->resource.ents[0])) continue;
        covers = 1;
      } else {
        covers = same_constraint(&o->resource, &b->resource) ? 1 : 0;
      }
      char *bn = policy_rule_name(b), *on = policy_rule_name(o);
      if (bare(o) && covers) {
        if (!refusal) {
          refusal = g_string_new(POLICY_CAP_PREFIX);
          line = b->line;
          col = b->col;
        } else {
          g_string_append(refusal, "; ");
        }
        g_string_append_printf(
          refusal,
          "%s (rule %d) carries a temporal clause beside %s (rule %d), which permits the same "
          "action with no condition; a permit cannot narrow another permit, so write the cap "
          "as a forbid",
          bn, b->index + 1, on, o->index + 1);
      } else {
        g_ptr_array_add(
          pol->warnings,
          g_strdup_printf(
            "%s (rule %d) carries a temporal clause beside %s (rule %d), which also "
            "permits that action; the budget is inert for every request the other rule "
            "admits, so write a cap as a forbid",
            bn, b->index + 1, on, o->index + 1));
      }
      g_free(bn);
      g_free(on);
    }
  }
  if (!refusal) return true;
  g_string_append_printf(refusal, " at line %d, column %d", line, col);
  g_set_error_literal(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA, refusal->str);
  g_string_free(refusal, TRUE);
  return false;
}
