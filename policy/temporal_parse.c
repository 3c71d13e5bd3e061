/* temporal_parse.c — the temporal grammar of spec/policy.md §2.2, parsed
 * from the policy's tokens into a TFormula (policy/temporal.h), plus the
 * four default macros of §1.5 and the canonical rendering of §3.5. */
#include "policy/temporal.h"
#include "policy/json_out.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  TokReader *r; /* the Cedar parser's, reading on from its position */
  TFormula *f;
  /* binder scope: names visible here, innermost last */
  int scope[T_MAX_VARS * 4];
  int nscope;
  int gensym;
} TP;

static void *own(TP *p, void *x)
{
  g_ptr_array_add(p->f->allocs, x);
  return x;
}

/* Unescapes a string token's body (spec/policy.md §1.1). */
static char *unescape(TP *p, const Token *t, size_t *len)
{
  GString *s = g_string_sized_new(t->len);
  for (size_t i = 0; i < t->len; i++) {
    char c = t->text[i];
    if (c != '\\' || i + 1 >= t->len) {
      g_string_append_c(s, c);
      continue;
    }
    char e = t->text[++i];
    switch (e) {
    case 'n': g_string_append_c(s, '\n'); break;
    case 't': g_string_append_c(s, '\t'); break;
    case 'r': g_string_append_c(s, '\r'); break;
    case '0': g_string_append_c(s, '\0'); break;
    case '\\':
    case '"':
    case '\'':
    case '*': g_string_append_c(s, e); break;
    case 'u': {
      if (i + 1 < t->len && t->text[i + 1] == '{') {
        size_t j = i + 2;
        gunichar u = 0;
        int nd = 0;
        while (j < t->len && g_ascii_isxdigit(t->text[j]) && nd < 6) {
          u = u * 16 + (gunichar)g_ascii_xdigit_value(t->text[j]);
          j++, nd++;
        }
        if (nd > 0 && j < t->len && t->text[j] == '}' && g_unichar_validate(u)) {
          g_string_append_unichar(s, u);
          i = j;
          break;
        }
      }
      tok_fail(p->r, t, "invalid escape in a string literal");
      break;
    }
    default: tok_fail(p->r, t, "invalid escape `\\%c` in a string literal", e); break;
    }
  }
  *len = s->len;
  return own(p, g_string_free(s, FALSE));
}

/* ---- variables ------------------------------------------------------------ */

/* Names from the policy text are interned (compared by pointer later) only
 * when the schema knows them: an unknown one is refused at validation, and
 * interning every name an input invents would grow GLib's quark table for
 * the life of the process. */
static bool known_path(const char *path)
{
  if (strcmp(path, "callerPrincipal") == 0 || strcmp(path, "callerResource") == 0 ||
      strcmp(path, "requestId") == 0)
    return true;
  bool in = g_str_has_prefix(path, "input."), out = g_str_has_prefix(path, "output.");
  if (!in && !out) return false;
  const char *name = path + (in ? 6 : 7);
  for (size_t a = 0; a < policy_nactions; a++) {
    const ActionDecl *ad = &policy_actions[a];
    if (in && policy_field(ad->input, ad->ninput, name, strlen(name))) return true;
    if (out && ad->output && policy_field(ad->output, ad->noutput, name, strlen(name))) return true;
  }
  return false;
}

static const char *intern_path(TP *p, const char *path)
{
  return known_path(path) ? g_intern_string(path) : own(p, g_strdup(path));
}

static const char *intern_type(TP *p, const char *type)
{
  return policy_entity_type_known(type) ? g_intern_string(type) : own(p, g_strdup(type));
}

static int declare(TP *p, const Token *name, const char *text, TVarType type, const char *etype)
{
  TFormula *f = p->f;
  if (f->nvars >= T_MAX_VARS || p->nscope >= (int)G_N_ELEMENTS(p->scope)) {
    tok_fail(p->r, name, "a temporal body may bind at most %d variables", T_MAX_VARS);
    return -1;
  }
  int v = f->nvars++;
  f->var_names[v] = own(p, g_strdup(text));
  f->var_types[v] = type;
  f->var_etype[v] = etype ? (char *)intern_type(p, etype) : NULL;
  p->scope[p->nscope++] = v;
  return v;
}

static int lookup(TP *p, const char *name)
{
  for (int i = p->nscope - 1; i >= 0; i--)
    if (strcmp(p->f->var_names[p->scope[i]], name) == 0) return p->scope[i];
  return -1;
}

/* TYPE := Timepoint | Long | String | qualified entity type */
static bool parse_type(TP *p, TVarType *type, char **etype)
{
  const Token *t = tok_next(p->r);
  *etype = NULL;
  if (t->kind != TOK_IDENT) {
    tok_fail_expected(p->r, t, "a type (`Timepoint`, `Long`, `String` or an entity type)");
    return false;
  }
  if (tok_is_kw(t, "Timepoint"))
    *type = VT_TIMEPOINT;
  else if (tok_is_kw(t, "Long"))
    *type = VT_LONG;
  else if (tok_is_kw(t, "String"))
    *type = VT_STRING;
  else {
    GString *s = g_string_new(NULL);
    g_string_append_len(s, t->text, (gssize)t->len);
    while (tok_peek(p->r)->kind == TOK_COLONCOLON && tok_peek_n(p->r, 1)->kind == TOK_IDENT) {
      tok_next(p->r);
      const Token *u = tok_next(p->r);
      g_string_append(s, "::");
      g_string_append_len(s, u->text, (gssize)u->len);
    }
    if (!strchr(s->str, ':')) {
      tok_fail(p->r, t,
               "unknown type `%s`; expected `Timepoint`, `Long`, `String` or an entity type",
               s->str);
      g_string_free(s, TRUE);
      return false;
    }
    *type = VT_ENTITY;
    *etype = own(p, g_string_free(s, FALSE));
  }
  return true;
}

/* "(" NAME ":" TYPE ")" ; declares it */
static int parse_binder(TP *p)
{
  if (!tok_expect(p->r, TOK_LPAREN, "`(` to open a binder")) return -1;
  const Token *name = tok_next(p->r);
  if (name->kind != TOK_IDENT) {
    tok_fail_expected(p->r, name, "a variable name");
    return -1;
  }
  if (!tok_expect(p->r, TOK_COLON, "`:` after the variable name")) return -1;
  TVarType type;
  char *etype;
  if (!parse_type(p, &type, &etype)) return -1;
  if (!tok_expect(p->r, TOK_RPAREN, "`)` to close the binder")) return -1;
  char *text = g_strndup(name->text, name->len);
  int v = declare(p, name, text, type, etype);
  g_free(text);
  return v;
}

/* ---- forms ---------------------------------------------------------------- */

static TForm *new_form(TP *p, TFormKind k, const Token *t)
{
  TForm *f = own(p, g_new0(TForm, 1));
  f->kind = k;
  f->line = t->line;
  f->col = t->col;
  return f;
}

static TTerm *new_term(TP *p, TTermKind k, const Token *t)
{
  TTerm *x = own(p, g_new0(TTerm, 1));
  x->kind = k;
  x->line = t->line;
  x->col = t->col;
  return x;
}

static TForm *parse_cond(TP *p);
static TForm *parse_atom(TP *p);
static bool parse_window_bare(TP *p, TForm *f); /* a window without `within` (macro arguments) */
static TTerm *parse_term(TP *p);

/* within INTEGER UNIT */
static bool parse_window(TP *p, TForm *f)
{
  const Token *w = tok_peek(p->r);
  if (!tok_is_kw(w, "within")) {
    tok_fail_expected(p->r, w, "`within` and a window, e.g. `within 1h`");
    return false;
  }
  tok_next(p->r);
  return parse_window_bare(p, f);
}

static bool at_predicate(TP *p)
{
  /* IDENT {:: IDENT} :: STRING :: IDENT { */
  size_t k = 0;
  if (tok_peek_n(p->r, k)->kind != TOK_IDENT) return false;
  k++;
  while (tok_peek_n(p->r, k)->kind == TOK_COLONCOLON && tok_peek_n(p->r, k + 1)->kind == TOK_IDENT)
    k += 2;
  return tok_peek_n(p->r, k)->kind == TOK_COLONCOLON &&
         tok_peek_n(p->r, k + 1)->kind == TOK_STRING &&
         tok_peek_n(p->r, k + 2)->kind == TOK_COLONCOLON &&
         tok_peek_n(p->r, k + 3)->kind == TOK_IDENT && tok_peek_n(p->r, k + 4)->kind == TOK_LBRACE;
}

/* named_args inside { }, appended to f */
static bool parse_fields(TP *p, TForm *f, GArray *fields)
{
  if (!tok_expect(p->r, TOK_LBRACE, "`{` to open the predicate's fields")) return false;
  while (tok_peek(p->r)->kind != TOK_RBRACE) {
    const Token *t = tok_next(p->r);
    if (t->kind != TOK_IDENT) {
      tok_fail_expected(p->r, t, "a field name such as `input.path`");
      return false;
    }
    GString *path = g_string_new(NULL);
    g_string_append_len(path, t->text, (gssize)t->len);
    while (tok_peek(p->r)->kind == TOK_DOT) {
      tok_next(p->r);
      const Token *u = tok_next(p->r);
      if (u->kind != TOK_IDENT) {
        g_string_free(path, TRUE);
        tok_fail_expected(p->r, u, "a field name after `.`");
        return false;
      }
      g_string_append_c(path, '.');
      g_string_append_len(path, u->text, (gssize)u->len);
    }
    /* a waiting predicate's fields are known only at its listing: interned
     * now, as an event's are */
    TField fd = { f->action < 0 ? g_intern_string(path->str) : intern_path(p, path->str), { 0 } };
    g_string_free(path, TRUE);
    if (!tok_expect(p->r, TOK_COLON, "`:` after the field name")) return false;
    TTerm *term = parse_term(p);
    if (!term) return false;
    if (term->kind == TT_COUNT || term->kind == TT_SUM) {
      tok_fail(p->r, t, "an aggregate cannot be a predicate field's value");
      return false;
    }
    fd.term = *term;
    g_array_append_val(fields, fd);
    if (!tok_list_sep(p->r, TOK_RBRACE, "`,` or `}`")) return false;
  }
  tok_next(p->r);
  return true;
}

static TForm *parse_predicate(TP *p)
{
  const Token *start = tok_peek(p->r);
  TForm *f = new_form(p, TF_PRED, start);
  GString *ns = g_string_new(NULL);
  const Token *t = tok_next(p->r);
  g_string_append_len(ns, t->text, (gssize)t->len);
  while (tok_peek(p->r)->kind == TOK_COLONCOLON && tok_peek_n(p->r, 1)->kind == TOK_IDENT) {
    tok_next(p->r);
    t = tok_next(p->r);
    g_string_append(ns, "::");
    g_string_append_len(ns, t->text, (gssize)t->len);
  }
  tok_next(p->r); /* :: */
  const Token *id = tok_next(p->r);
  size_t idlen;
  char *idtext = unescape(p, id, &idlen);
  tok_next(p->r); /* :: */
  const Token *kind = tok_next(p->r);
  char *kindtext = g_strndup(kind->text, kind->len);
  bool box = strcmp(ns->str, "Box::Action") == 0;
  int action = box ? policy_action_index(idtext) : policy_action_lookup(ns->str, idtext, idlen);
  /* a tool of a server declared but not listed yet waits for its listing */
  bool waits = !box && action < 0 && policy_namespace_pending(ns->str);
  int ev = strcmp(kindtext, "request") == 0    ? EV_REQUEST
           : strcmp(kindtext, "response") == 0 ? EV_RESPONSE
           : strcmp(kindtext, "error") == 0    ? EV_ERROR
                                               : -1;
  if ((action < 0 && !waits) || ev < 0) {
    /* §2.6 rule 7; schema class */
    char *m = g_strdup_printf("(no event kind `%s` derived for action `%s`)", kindtext, idtext);
    if (!p->r->err) {
      g_set_error(
        &p->r->err, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA,
        POLICY_SCHEMA_PREFIX
        "predicate `%s::\"%s\"::%s` does not name a declared event %s at line %d, column %d",
        ns->str, idtext, kindtext, m, start->line, start->col);
    }
    g_free(m);
    g_free(kindtext);
    g_string_free(ns, TRUE);
    return NULL;
  }
  g_free(kindtext);
  if (!box) {
    f->etype = own(p, g_string_free(g_steal_pointer(&ns), FALSE));
    f->id = idtext;
    f->idlen = idlen;
  } else {
    g_string_free(ns, TRUE);
  }
  f->action = action;
  f->ev = (EventKind)ev;
  GArray *fields = g_array_new(FALSE, TRUE, sizeof(TField));
  bool ok = parse_fields(p, f, fields);
  while (ok && tok_peek(p->r)->kind == TOK_LBRACE)
    ok = parse_fields(p, f, fields); /* refinements */
  f->nfields = (int)fields->len;
  f->fields = own(p, g_array_free(fields, FALSE));
  return ok ? f : NULL;
}

/* Macro calls of §1.5, expanded in place. */
static bool is_macro(const Token *t, const Token *n)
{
  return n->kind == TOK_LPAREN && (tok_is_kw(t, "count_within") || tok_is_kw(t, "sum_within") ||
                                   tok_is_kw(t, "count_distinct_within") || tok_is_kw(t, "bind"));
}

static TForm *formerly_of(TP *p, const Token *at, const TForm *window_src, TForm *body)
{
  TForm *f = new_form(p, TF_FORMERLY, at);
  f->window = window_src->window;
  f->window_text = window_src->window_text;
  f->a = body;
  return f;
}

/* count_within(W, S) | sum_within(a, W, S) | count_distinct_within(k, W, S) */
static TTerm *parse_macro_term(TP *p)
{
  const Token *name = tok_next(p->r);
  tok_next(p->r); /* ( */
  TTerm *x = new_term(p, TT_COUNT, name);
  int saved = p->nscope;
  if (tok_is_kw(name, "count_within")) {
    TForm w = { 0 };
    if (!parse_window_bare(p, &w)) return NULL;
    if (!tok_expect(p->r, TOK_COMMA, "`,`")) return NULL;
    char *t = g_strdup_printf("$t%d", p->gensym++);
    int tv = declare(p, name, t, VT_TIMEPOINT, NULL);
    g_free(t);
    if (tv < 0) return NULL;
    TForm *s = parse_cond(p);
    if (!s) return NULL;
    TForm *tp = new_form(p, TF_TP, name);
    tp->var = tv;
    TForm *and = new_form(p, TF_AND, name);
    and->a = s;
    and->b = tp;
    x->nfor = 1;
    x->forv[0] = tv;
    x->body = formerly_of(p, name, &w, and);
  } else if (tok_is_kw(name, "sum_within") || tok_is_kw(name, "count_distinct_within")) {
    bool sum = tok_is_kw(name, "sum_within");
    const Token *vn = tok_next(p->r);
    if (vn->kind != TOK_IDENT) {
      tok_fail_expected(p->r, vn, "a variable name");
      return NULL;
    }
    char *vt = g_strndup(vn->text, vn->len);
    int v = declare(p, vn, vt, sum ? VT_LONG : VT_ANY, NULL);
    g_free(vt);
    if (v < 0 || !tok_expect(p->r, TOK_COMMA, "`,`")) return NULL;
    TForm w = { 0 };
    if (!parse_window_bare(p, &w)) return NULL;
    if (!tok_expect(p->r, TOK_COMMA, "`,`")) return NULL;
    TForm *s = parse_cond(p);
    if (!s) return NULL;
    x->nfor = 1;
    x->forv[0] = v;
    if (sum) {
      x->kind = TT_SUM;
      x->var = v;
      char *t = g_strdup_printf("$t%d", p->gensym++);
      int tv = declare(p, name, t, VT_TIMEPOINT, NULL);
      g_free(t);
      if (tv < 0) return NULL;
      TForm *tp = new_form(p, TF_TP, name);
      tp->var = tv;
      TForm *and = new_form(p, TF_AND, name);
      and->a = s;
      and->b = tp;
      x->nfor = 2;
      x->forv[1] = tv;
      s = and;
    }
    x->body = formerly_of(p, name, &w, s);
  }
  p->nscope = saved;
  if (!tok_expect(p->r, TOK_RPAREN, "`)` to close the macro call")) return NULL;
  return x;
}

/* `( count_within(…) )`: a parenthesized macro call (an aggregate) rather
 * than a parenthesized condition — the token after the call's own `)` is
 * the closing `)`. */
static bool at_paren_macro(TP *p)
{
  if (tok_peek(p->r)->kind != TOK_LPAREN || !is_macro(tok_peek_n(p->r, 1), tok_peek_n(p->r, 2)) ||
      tok_is_kw(tok_peek_n(p->r, 1), "bind"))
    return false;
  int depth = 0;
  for (size_t k = 2;; k++) {
    const Token *t = tok_peek_n(p->r, k);
    if (t->kind == TOK_EOF) return false;
    if (t->kind == TOK_LPAREN)
      depth++;
    else if (t->kind == TOK_RPAREN && --depth == 0)
      return tok_peek_n(p->r, k + 1)->kind == TOK_RPAREN;
  }
}

/* term := entity | "(" agg ")" | agg | INTEGER | -INTEGER | STRING | true | false
 *       | context.input.x | principal | resource | * | _ | NAME | macro */
static TTerm *parse_agg(TP *p)
{
  const Token *t = tok_next(p->r);
  bool sum = tok_is_kw(t, "sum");
  TTerm *x = new_term(p, sum ? TT_SUM : TT_COUNT, t);
  const Token *sumname = NULL;
  if (sum) {
    sumname = tok_next(p->r);
    if (sumname->kind != TOK_IDENT) {
      tok_fail_expected(p->r, sumname, "the summed variable's name");
      return NULL;
    }
  }
  if (!tok_is_kw(tok_peek(p->r), "for")) {
    tok_fail_expected(p->r, tok_peek(p->r), "`for` and the aggregate's binders");
    return NULL;
  }
  tok_next(p->r);
  int saved = p->nscope;
  for (;;) {
    int v = parse_binder(p);
    if (v < 0) return NULL;
    x->forv[x->nfor++] = v;
    if (tok_peek(p->r)->kind == TOK_COMMA) {
      tok_next(p->r);
      continue;
    }
    break;
  }
  if (!tok_expect(p->r, TOK_DOT, "`.` after the binders")) return NULL;
  if (!tok_is_kw(tok_peek(p->r), "where")) {
    tok_fail_expected(p->r, tok_peek(p->r), "`where` and the aggregate's body");
    return NULL;
  }
  tok_next(p->r);
  if (sum) {
    char *n = g_strndup(sumname->text, sumname->len);
    int v = lookup(p, n);
    bool in_for = false;
    for (int i = 0; i < x->nfor; i++) in_for |= x->forv[i] == v;
    if (!in_for) {
      tok_fail(p->r, sumname,
               "the summed variable `%s` must be bound by the aggregate's `for` list", n);
      g_free(n);
      return NULL;
    }
    g_free(n);
    x->var = v;
  }
  x->body = parse_cond(p);
  p->nscope = saved;
  return x->body ? x : NULL;
}

static TTerm *parse_term(TP *p)
{
  const Token *t = tok_peek(p->r);
  switch (t->kind) {
  case TOK_LPAREN:
    if (tok_is_kw(tok_peek_n(p->r, 1), "count") || tok_is_kw(tok_peek_n(p->r, 1), "sum")) {
      tok_next(p->r);
      TTerm *x = parse_agg(p);
      if (!x || !tok_expect(p->r, TOK_RPAREN, "`)` to close the aggregate")) return NULL;
      return x;
    }
    if (at_paren_macro(p)) {
      tok_next(p->r);
      TTerm *x = parse_macro_term(p);
      if (!x || !tok_expect(p->r, TOK_RPAREN, "`)` to close the aggregate")) return NULL;
      return x;
    }
    tok_fail_expected(p->r, t, "a term");
    return NULL;
  case TOK_INT:
  case TOK_MINUS: {
    bool neg = t->kind == TOK_MINUS;
    if (neg) tok_next(p->r);
    const Token *n = tok_next(p->r);
    if (n->kind != TOK_INT) {
      tok_fail_expected(p->r, n, "an integer");
      return NULL;
    }
    if (n->int_big || (!neg && n->ival > (uint64_t)INT64_MAX)) {
      tok_fail(p->r, n, "integer literal `%.*s` is out of range", (int)n->len, n->text);
      return NULL;
    }
    TTerm *x = new_term(p, TT_LIT, t);
    x->lit.k = TV_LONG;
    x->lit.l = neg ? (int64_t)(0 - n->ival) : (int64_t)n->ival;
    return x;
  }
  case TOK_STRING: {
    tok_next(p->r);
    TTerm *x = new_term(p, TT_LIT, t);
    x->lit.k = TV_STR;
    x->lit.s = unescape(p, t, &x->lit.n);
    return x;
  }
  case TOK_STAR: tok_next(p->r); return new_term(p, TT_WILD, t);
  case TOK_LBRACKET:
    tok_fail(p->r, t, "a set term is not supported in a temporal body");
    return NULL;
  case TOK_IDENT: break;
  default: tok_fail_expected(p->r, t, "a term"); return NULL;
  }
  if (tok_is_kw(t, "count") || tok_is_kw(t, "sum")) return parse_agg(p);
  if (is_macro(t, tok_peek_n(p->r, 1)) && !tok_is_kw(t, "bind")) return parse_macro_term(p);
  if (tok_is_kw(t, "_")) {
    tok_next(p->r);
    return new_term(p, TT_WILD, t);
  }
  if (tok_is_kw(t, "true") || tok_is_kw(t, "false")) {
    tok_next(p->r);
    TTerm *x = new_term(p, TT_LIT, t);
    x->lit.k = TV_BOOL;
    x->lit.l = tok_is_kw(t, "true");
    return x;
  }
  if (tok_is_kw(t, "decimal") && tok_peek_n(p->r, 1)->kind == TOK_LPAREN) {
    tok_fail(p->r, t, "`decimal` is not supported in a temporal body: no event field is a decimal");
    return NULL;
  }
  if (tok_peek_n(p->r, 1)->kind == TOK_COLONCOLON) {
    /* entity Ns::Type::"id" */
    GString *ty = g_string_new(NULL);
    g_string_append_len(ty, t->text, (gssize)t->len);
    tok_next(p->r);
    while (tok_peek(p->r)->kind == TOK_COLONCOLON && tok_peek_n(p->r, 1)->kind == TOK_IDENT) {
      tok_next(p->r);
      const Token *u = tok_next(p->r);
      g_string_append(ty, "::");
      g_string_append_len(ty, u->text, (gssize)u->len);
    }
    if (tok_peek(p->r)->kind != TOK_COLONCOLON || tok_peek_n(p->r, 1)->kind != TOK_STRING) {
      g_string_free(ty, TRUE);
      tok_fail_expected(p->r, tok_peek(p->r), "`::\"id\"` to complete an entity");
      return NULL;
    }
    tok_next(p->r);
    const Token *id = tok_next(p->r);
    TTerm *x = new_term(p, TT_LIT, t);
    x->lit.k = TV_ENT;
    x->lit.etype = intern_type(p, ty->str);
    x->lit.s = unescape(p, id, &x->lit.n);
    g_string_free(ty, TRUE);
    return x;
  }
  if (tok_is_kw(t, "context")) {
    tok_next(p->r);
    GString *path = g_string_new(NULL);
    while (tok_peek(p->r)->kind == TOK_DOT) {
      tok_next(p->r);
      const Token *u = tok_next(p->r);
      if (u->kind != TOK_IDENT) {
        g_string_free(path, TRUE);
        tok_fail_expected(p->r, u, "an attribute name after `.`");
        return NULL;
      }
      if (path->len) g_string_append_c(path, '.');
      g_string_append_len(path, u->text, (gssize)u->len);
    }
    if (!g_str_has_prefix(path->str, "input.") || strchr(path->str + 6, '.')) {
      tok_fail(p->r, t,
               "a temporal body may read only `context.input.<field>`, found `context%s%s`",
               path->len ? "." : "", path->str);
      g_string_free(path, TRUE);
      return NULL;
    }
    TTerm *x = new_term(p, TT_CTX, t);
    x->ctx = own(p, g_strdup(path->str + 6));
    g_string_free(path, TRUE);
    return x;
  }
  if (tok_is_kw(t, "principal") || tok_is_kw(t, "resource")) {
    tok_next(p->r);
    if (tok_peek(p->r)->kind == TOK_DOT) {
      tok_fail(p->r, t, "`%.*s` has no attributes in Box", (int)t->len, t->text);
      return NULL;
    }
    return new_term(p, tok_is_kw(t, "principal") ? TT_PRINCIPAL : TT_RESOURCE, t);
  }
  /* a variable */
  tok_next(p->r);
  char *name = g_strndup(t->text, t->len);
  int v = lookup(p, name);
  if (v < 0) {
    tok_fail(p->r, t,
             "variable `%s` is not bound; bind it with `exists (%s: T).` or an aggregate's `for`, "
             "or write `_` for any value",
             name, name);
    g_free(name);
    return NULL;
  }
  g_free(name);
  TTerm *x = new_term(p, TT_VAR, t);
  x->var = v;
  return x;
}

static bool is_cmp(TokKind k)
{
  return k == TOK_EQEQ || k == TOK_NE || k == TOK_LT || k == TOK_LE || k == TOK_GT || k == TOK_GE;
}

static TForm *parse_comparison(TP *p)
{
  const Token *t = tok_peek(p->r);
  TTerm *l = parse_term(p);
  if (!l) return NULL;
  const Token *op = tok_peek(p->r);
  if (!is_cmp(op->kind)) {
    if (op->kind == TOK_ASSIGN)
      tok_fail(p->r, op, "unexpected `=`; did you mean `==`?");
    else
      tok_fail_expected(p->r, op, "a comparison operator (`==`, `!=`, `<`, `<=`, `>`, `>=`)");
    return NULL;
  }
  tok_next(p->r);
  TTerm *r = parse_term(p);
  if (!r) return NULL;
  TForm *f = new_form(p, TF_CMP, t);
  f->l = l;
  f->r = r;
  f->cmp = op->kind == TOK_EQEQ ? TC_EQ
           : op->kind == TOK_NE ? TC_NE
           : op->kind == TOK_LT ? TC_LT
           : op->kind == TOK_LE ? TC_LE
           : op->kind == TOK_GT ? TC_GT
                                : TC_GE;
  return f;
}

/* `name(ident`: the call's name token in *head, and the identifier that
 * opens its arguments (NULL, failed naming what, where there is none). */
static const Token *call_ident(TP *p, const Token **head, const char *what)
{
  *head = tok_next(p->r);
  tok_next(p->r); /* ( */
  const Token *n = tok_next(p->r);
  if (n->kind != TOK_IDENT) {
    tok_fail_expected(p->r, n, what);
    return NULL;
  }
  return n;
}

static TForm *parse_tp(TP *p)
{
  const Token *t, *n = call_ident(p, &t, "a Timepoint variable");
  if (!n) return NULL;
  char *name = g_strndup(n->text, n->len);
  int v = lookup(p, name);
  if (v < 0)
    tok_fail(p->r, n, "variable `%s` is not bound; bind it with `(%s: Timepoint)`", name, name);
  g_free(name);
  if (v < 0 || !tok_expect(p->r, TOK_RPAREN, "`)` to close `tp`")) return NULL;
  TForm *f = new_form(p, TF_TP, t);
  f->var = v;
  return f;
}

static TForm *parse_exists(TP *p)
{
  const Token *t = tok_next(p->r);
  int saved = p->nscope;
  int v = parse_binder(p);
  if (v < 0 || !tok_expect(p->r, TOK_DOT, "`.` after the binder")) return NULL;
  TForm *body = parse_cond(p);
  p->nscope = saved;
  if (!body) return NULL;
  TForm *f = new_form(p, TF_EXISTS, t);
  f->var = v;
  f->a = body;
  return f;
}

/* bind(n, A, B) = exists (n: Long). (A == n && B) */
static TForm *parse_bind(TP *p)
{
  const Token *t, *n = call_ident(p, &t, "a variable name");
  if (!n) return NULL;
  int saved = p->nscope;
  char *name = g_strndup(n->text, n->len);
  int v = declare(p, n, name, VT_LONG, NULL);
  g_free(name);
  if (v < 0 || !tok_expect(p->r, TOK_COMMA, "`,`")) return NULL;
  TTerm *a = parse_term(p);
  if (!a || !tok_expect(p->r, TOK_COMMA, "`,`")) return NULL;
  TForm *b = parse_cond(p);
  if (!b || !tok_expect(p->r, TOK_RPAREN, "`)` to close `bind`")) return NULL;
  p->nscope = saved;
  TTerm *var = new_term(p, TT_VAR, n);
  var->var = v;
  TForm *eq = new_form(p, TF_CMP, t);
  eq->cmp = TC_EQ;
  eq->l = a;
  eq->r = var;
  TForm *and = new_form(p, TF_AND, t);
  and->a = eq;
  and->b = b;
  TForm *f = new_form(p, TF_EXISTS, t);
  f->var = v;
  f->a = and;
  return f;
}

static TForm *parse_temporal_op(TP *p)
{
  const Token *t = tok_next(p->r);
  TForm *f = new_form(p, tok_is_kw(t, "formerly") ? TF_FORMERLY : TF_PREVIOUS, t);
  if (!parse_window(p, f)) return NULL;
  f->a = parse_atom(p);
  return f->a ? f : NULL;
}

/* atom := "(" cond ")" | tp | call | refinable | comparison */
static TForm *parse_atom(TP *p)
{
  const Token *t = tok_peek(p->r);
  if (t->kind == TOK_LPAREN && !tok_is_kw(tok_peek_n(p->r, 1), "count") &&
      !tok_is_kw(tok_peek_n(p->r, 1), "sum") && !at_paren_macro(p)) {
    tok_next(p->r);
    TForm *f = parse_cond(p);
    if (!f || !tok_expect(p->r, TOK_RPAREN, "`)`")) return NULL;
    return f;
  }
  if (tok_is_kw(t, "tp") && tok_peek_n(p->r, 1)->kind == TOK_LPAREN) return parse_tp(p);
  if (tok_is_kw(t, "bind") && tok_peek_n(p->r, 1)->kind == TOK_LPAREN) return parse_bind(p);
  if (at_predicate(p)) return parse_predicate(p);
  return parse_comparison(p);
}

/* conjunct := comparison | "(" cond ")" | temporal_op | exists | tp | call | refinable */
static TForm *parse_conjunct(TP *p)
{
  const Token *t = tok_peek(p->r);
  if ((tok_is_kw(t, "formerly") || tok_is_kw(t, "previous")) &&
      tok_is_kw(tok_peek_n(p->r, 1), "within"))
    return parse_temporal_op(p);
  if (tok_is_kw(t, "exists") && tok_peek_n(p->r, 1)->kind == TOK_LPAREN) return parse_exists(p);
  return parse_atom(p);
}

static TForm *parse_conj_or_since(TP *p)
{
  int nots = 0;
  const Token *first = tok_peek(p->r);
  while (tok_peek(p->r)->kind == TOK_BANG) {
    tok_next(p->r);
    nots++;
  }
  TForm *f = parse_conjunct(p);
  if (!f) return NULL;
  for (int i = 0; i < nots; i++) {
    TForm *n = new_form(p, TF_NOT, first);
    n->a = f;
    f = n;
  }
  if (tok_is_kw(tok_peek(p->r), "since")) {
    const Token *s = tok_next(p->r);
    TForm *since = new_form(p, TF_SINCE, s);
    if (!parse_window(p, since)) return NULL;
    since->a = f;
    since->b = parse_atom(p);
    if (!since->b) return NULL;
    f = since;
  }
  return f;
}

static TForm *parse_cond(TP *p)
{
  TForm *f = parse_conj_or_since(p);
  while (f && !p->r->err) {
    const Token *t = tok_peek(p->r);
    if (t->kind == TOK_OR) {
      tok_fail(p->r, t, "`||` is not allowed in a temporal body; write one rule per alternative");
      return NULL;
    }
    if (t->kind != TOK_AND) break;
    tok_next(p->r);
    TForm *b = parse_conj_or_since(p);
    if (!b) return NULL;
    TForm *and = new_form(p, TF_AND, t);
    and->a = f;
    and->b = b;
    f = and;
  }
  return p->r->err ? NULL : f;
}

static bool parse_window_bare(TP *p, TForm *f)
{
  const Token *n = tok_next(p->r);
  const Token *u = tok_next(p->r);
  if (n->kind != TOK_INT || n->int_big || u->kind != TOK_IDENT || u->len != 1 ||
      !strchr("smhd", u->text[0])) {
    tok_fail_expected(p->r, n, "a window such as `60s`, `10m`, `1h` or `1d`");
    return false;
  }
  int64_t mul = u->text[0] == 's' ? 1 : u->text[0] == 'm' ? 60 : u->text[0] == 'h' ? 3600 : 86400;
  f->window_text = own(p, g_strdup_printf("%" G_GUINT64_FORMAT "%c", n->ival, u->text[0]));
  /* larger than 24h is refused at validation with the spec's text; keep
   * the product from overflowing */
  if (n->ival > (uint64_t)(INT64_MAX / T_NS / mul))
    f->window = INT64_MAX;
  else
    f->window = (int64_t)n->ival * mul * T_NS;
  return true;
}

void policy_temporal_formula_free(TFormula *f)
{
  if (!f) return;
  g_ptr_array_free(f->allocs, TRUE);
  g_free(f->canonical);
  g_free(f);
}

TFormula *policy_temporal_parse(BoxPolicy *pol, TokReader *r)
{
  TFormula *f = g_new0(TFormula, 1);
  f->allocs = g_ptr_array_new_with_free_func(g_free);
  TP p = { r, f, { 0 }, 0, 0 };
  const char *context = r->context;
  r->context = " in a temporal body";
  const Token *kwt = tok_next(p.r); /* temporal */
  f->line = kwt->line;
  f->col = kwt->col;
  if (tok_expect(p.r, TOK_LBRACE, "`{` to open the temporal body")) {
    f->root = parse_cond(&p);
    if (f->root)
      tok_expect(p.r, TOK_RBRACE, "`}` to close the temporal body (a temporal body has no `||`)");
  }
  r->context = context;
  if (p.r->err || !f->root) {
    if (!p.r->err) tok_fail(p.r, tok_peek(p.r), "malformed temporal body");
    policy_temporal_formula_free(f);
    return NULL;
  }
  g_ptr_array_add(pol->formulas, f); /* the policy frees it */
  return f;
}

/* ---- canonical rendering (§3.5: `1m` ≡ `60s`) ------------------------------- */

static void render_val(GString *s, const TVal *v)
{
  switch (v->k) {
  case TV_LONG: g_string_append_printf(s, "%" G_GINT64_FORMAT, v->l); break;
  case TV_BOOL: g_string_append(s, v->l ? "true" : "false"); break;
  case TV_STR:
  case TV_ENT:
    if (v->k == TV_ENT) g_string_append_printf(s, "%s::", v->etype);
    g_string_append_c(s, '"');
    for (size_t i = 0; i < v->n; i++) {
      char c = v->s[i];
      if (c == '"' || c == '\\') g_string_append_c(s, '\\');
      if ((unsigned char)c < 0x20)
        g_string_append_printf(s, "\\u{%x}", (unsigned)c);
      else
        g_string_append_c(s, c);
    }
    g_string_append_c(s, '"');
    break;
  case TV_NONE:
  case TV_SET: g_string_append(s, "?"); break;
  }
}

static void render_form(GString *s, const TFormula *F, const TForm *f);

static void render_term(GString *s, const TFormula *F, const TTerm *x)
{
  switch (x->kind) {
  case TT_LIT: render_val(s, &x->lit); break;
  case TT_WILD: g_string_append_c(s, '_'); break;
  case TT_VAR: g_string_append_printf(s, "v%d", x->var); break;
  case TT_CTX: g_string_append_printf(s, "context.input.%s", x->ctx); break;
  case TT_PRINCIPAL: g_string_append(s, "principal"); break;
  case TT_RESOURCE: g_string_append(s, "resource"); break;
  case TT_COUNT:
  case TT_SUM:
    g_string_append(s, x->kind == TT_COUNT ? "(count" : "(sum");
    if (x->kind == TT_SUM) g_string_append_printf(s, " v%d", x->var);
    g_string_append(s, " for ");
    for (int i = 0; i < x->nfor; i++) {
      int v = x->forv[i];
      const char *ty = F->var_types[v] == VT_TIMEPOINT ? "Timepoint"
                       : F->var_types[v] == VT_LONG    ? "Long"
                       : F->var_types[v] == VT_STRING  ? "String"
                       : F->var_types[v] == VT_ENTITY  ? F->var_etype[v]
                                                       : "_";
      g_string_append_printf(s, "%s(v%d: %s)", i ? ", " : "", v, ty);
    }
    g_string_append(s, ". where ");
    render_form(s, F, x->body);
    g_string_append_c(s, ')');
    break;
  }
}

static void render_form(GString *s, const TFormula *F, const TForm *f)
{
  static const char *const cmps[] = { "==", "!=", "<", "<=", ">", ">=" };
  switch (f->kind) {
  case TF_PRED:
    if (f->etype) {
      /* the same text before and after the tool's listing */
      g_string_append_printf(s, "%s::\"", f->etype);
      policy_json_escaped(s, f->id, f->idlen);
      g_string_append_c(s, '"');
    } else {
      g_string_append_printf(s, "Box::Action::\"%s\"", policy_actions[f->action].term);
    }
    g_string_append_printf(s, "::%s{",
                           f->ev == EV_REQUEST    ? "request"
                           : f->ev == EV_RESPONSE ? "response"
                                                  : "error");
    for (int i = 0; i < f->nfields; i++) {
      g_string_append_printf(s, "%s%s: ", i ? ", " : "", f->fields[i].path);
      render_term(s, F, &f->fields[i].term);
    }
    g_string_append_c(s, '}');
    break;
  case TF_TP: g_string_append_printf(s, "tp(v%d)", f->var); break;
  case TF_CMP:
    render_term(s, F, f->l);
    g_string_append_printf(s, " %s ", cmps[f->cmp]);
    render_term(s, F, f->r);
    break;
  case TF_AND:
    g_string_append_c(s, '(');
    render_form(s, F, f->a);
    g_string_append(s, " && ");
    render_form(s, F, f->b);
    g_string_append_c(s, ')');
    break;
  case TF_NOT:
    g_string_append(s, "!(");
    render_form(s, F, f->a);
    g_string_append_c(s, ')');
    break;
  case TF_FORMERLY:
  case TF_PREVIOUS:
    g_string_append_printf(s, "%s within %" G_GINT64_FORMAT "s (",
                           f->kind == TF_FORMERLY ? "formerly" : "previous", f->window / T_NS);
    render_form(s, F, f->a);
    g_string_append_c(s, ')');
    break;
  case TF_SINCE:
    g_string_append_c(s, '(');
    render_form(s, F, f->a);
    g_string_append_printf(s, ") since within %" G_GINT64_FORMAT "s (", f->window / T_NS);
    render_form(s, F, f->b);
    g_string_append_c(s, ')');
    break;
  case TF_EXISTS:
    g_string_append_printf(s, "exists (v%d). (", f->var);
    render_form(s, F, f->a);
    g_string_append_c(s, ')');
    break;
  }
}

char *policy_temporal_render(const TFormula *f)
{
  GString *s = g_string_new(NULL);
  render_form(s, f, f->root);
  return g_string_free(s, FALSE);
}
