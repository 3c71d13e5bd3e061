/* interp.c — evaluating awk's tree: values and their conversions,
 * variables and arrays, fields and $0, expressions and statements.
 * next, nextfile, exit and fatal errors leave by longjmp. */
#include <ctype.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/awk/awk.h"

void awk_val_free(Val *v)
{
  g_free(v->s);
  v->s = NULL;
  v->t = T_UNINIT;
}

Val awk_val_copy(const Val *v)
{
  Val r = *v;
  r.s = v->s ? g_strdup(v->s) : NULL;
  return r;
}

Val awk_num(double n)
{
  return (Val){ T_NUM, n, NULL };
}
Val awk_str(char *owned)
{
  return (Val){ T_STR, 0, owned };
}

/* awk's numeric strings: blanks, a decimal number (no hex, no inf/nan
 * without a sign), blanks. */
bool awk_looks_numeric(const char *s, double *out)
{
  const char *p = s;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') p++;
  const char *q = p;
  if (*q == '+' || *q == '-') q++;
  bool digits = false;
  while (isdigit((unsigned char)*q)) q++, digits = true;
  if (*q == '.') {
    q++;
    while (isdigit((unsigned char)*q)) q++, digits = true;
  }
  if (!digits) {
    if ((*p == '+' || *p == '-') &&
        (g_ascii_strncasecmp(p + 1, "inf", 3) == 0 || g_ascii_strncasecmp(p + 1, "nan", 3) == 0)) {
      q = p + 4;
      while (*q == ' ' || *q == '\t' || *q == '\n') q++;
      if (*q) return false;
      *out = strtod(p, NULL);
      return true;
    }
    return false;
  }
  if (*q == 'e' || *q == 'E') {
    const char *r = q + 1;
    if (*r == '+' || *r == '-') r++;
    if (isdigit((unsigned char)*r)) {
      while (isdigit((unsigned char)*r)) r++;
      q = r;
    }
  }
  while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\f' || *q == '\v') q++;
  if (*q) return false;
  /* the text was checked above: strtod reads the same number */
  *out = strtod(p, NULL);
  return true;
}

Val awk_strnum(char *owned)
{
  double n;
  if (awk_looks_numeric(owned, &n)) return (Val){ T_STRNUM, n, owned };
  return (Val){ T_STR, 0, owned };
}

Val awk_maybe(char *owned)
{
  return (Val){ T_MAYBE, 0, owned };
}

void awk_resolve(Val *v)
{
  if (v->t != T_MAYBE) return;
  double n;
  if (awk_looks_numeric(v->s, &n)) {
    v->t = T_STRNUM;
    v->n = n;
  } else {
    v->t = T_STR;
  }
}

/* The leading number of a string, as awk reads one ("3x" is 3). */
static double str_num(const char *s)
{
  const char *p = s;
  while (isspace((unsigned char)*p)) p++;
  const char *q = p;
  if (*q == '+' || *q == '-') q++;
  /* most fields are short decimal integers ("s += $3"): read exactly in
   * place; a fraction, an exponent or more than 15 digits go to strtod */
  if (*q >= '1' && *q <= '9') {
    const char *d = q;
    int64_t v = 0;
    while (*d >= '0' && *d <= '9' && d - q < 15) v = v * 10 + (*d++ - '0');
    if (!(*d >= '0' && *d <= '9') && *d != '.' && *d != 'e' && *d != 'E')
      return *p == '-' ? -(double)v : (double)v;
  }
  if (g_ascii_strncasecmp(q, "0x", 2) == 0) return 0;
  if (g_ascii_strncasecmp(q, "inf", 3) == 0 || g_ascii_strncasecmp(q, "nan", 3) == 0) {
    if (q == p) return 0;
  }
  return strtod(p, NULL);
}

double awk_to_num(Awk *A, const Val *v)
{
  (void)A;
  switch (v->t) {
  case T_NUM:
  case T_STRNUM: return v->n;
  case T_STR:
  case T_MAYBE: return str_num(v->s);
  default: return 0;
  }
}

char *awk_num_str(Awk *A, double n, const char *fmt)
{
  (void)A;
  if (isnan(n)) return g_strdup(signbit(n) ? "-nan" : "+nan");
  if (isinf(n)) return g_strdup(n < 0 ? "-inf" : "+inf");
  if (n == (double)(long long)n) return g_strdup_printf("%lld", (long long)n);
  if (n == floor(n)) return g_strdup_printf("%.0f", n);
  size_t fl = strlen(fmt);
  if (fl && strchr("diouxXc", fmt[fl - 1])) return g_strdup_printf("%lld", (long long)n);
  return g_strdup_printf(fmt, n);
}

char *awk_to_str(Awk *A, const Val *v)
{
  if (v->t == T_NUM) return awk_num_str(A, v->n, awk_var_cstr(A, AV_CONVFMT));
  return g_strdup(v->s ? v->s : "");
}

char *awk_to_ostr(Awk *A, const Val *v)
{
  if (v->t == T_NUM) return awk_num_str(A, v->n, awk_var_cstr(A, AV_OFMT));
  return g_strdup(v->s ? v->s : "");
}

void awk_fatal(Awk *A, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(A->c->out);
  box_fdprintf(A->c->err, "awk: fatal: %s\n", m);
  g_free(m);
  A->exit_status = 2;
  A->exiting = true;
  A->jmp_kind = 9;
  longjmp(*A->jmp_exit, 1);
}

/* ---- variables ------------------------------------------------------------- */

static AVar *local_var(Awk *A, int i, bool as_array)
{
  Frame *f = A->frame;
  AVar *ref = f->slots[i];
  if (ref && (as_array || ref->kind == K_ARRAY)) {
    if (ref->kind == K_UNTYPED) {
      ref->kind = K_ARRAY;
      ref->arr = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    }
    return ref;
  }
  return &f->own[i];
}

static AVar *var_of(Awk *A, ANode *n, bool as_array)
{
  AVar *v = n->op == AN_LOCAL ? local_var(A, n->ival, as_array) : &A->vars[n->ival];
  if (as_array) {
    if (v->kind == K_SCALAR)
      awk_fatal(A, "attempt to use scalar `%s' as an array",
                n->op == AN_VAR ? (char *)g_ptr_array_index(A->nodes, 0) : "parameter");
    if (v->kind == K_UNTYPED) {
      v->kind = K_ARRAY;
      v->arr = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    }
  } else if (v->kind == K_ARRAY) {
    awk_fatal(A, "attempt to use array in a scalar context");
  }
  return v;
}

AVar *awk_array_of(Awk *A, ANode *n)
{
  return var_of(A, n, true);
}

AVar *awk_var_peek(Awk *A, ANode *n)
{
  return n->op == AN_LOCAL ? local_var(A, n->ival, false) : &A->vars[n->ival];
}

static void free_elem(gpointer p)
{
  Val *v = p;
  awk_val_free(v);
  g_free(v);
}

Val *awk_array_ref(Awk *A, AVar *arr, const char *key, bool create)
{
  (void)A;
  Val *v = g_hash_table_lookup(arr->arr, key);
  if (!v && create) {
    v = g_new0(Val, 1);
    g_hash_table_insert(arr->arr, g_strdup(key), v);
  }
  return v;
}

void awk_array_clear(AVar *arr)
{
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, arr->arr);
  while (g_hash_table_iter_next(&it, &k, &v)) free_elem(v);
  g_hash_table_remove_all(arr->arr);
}

const char *awk_var_cstr(Awk *A, int idx)
{
  AVar *v = &A->vars[idx];
  if (v->v.t == T_NUM) {
    char *s = awk_num_str(A, v->v.n, "%.6g");
    g_free(v->v.s);
    v->v.s = s;
    v->v.t = T_STRNUM;
  }
  return v->v.s ? v->v.s : "";
}

void awk_set_var_num(Awk *A, int idx, double n)
{
  Val *v = &A->vars[idx].v;
  if (v->s) awk_val_free(v);
  v->t = T_NUM;
  v->n = n;
}

void awk_set_var_str(Awk *A, int idx, const char *s)
{
  awk_val_free(&A->vars[idx].v);
  A->vars[idx].v = awk_str(g_strdup(s));
}

/* ---- fields ---------------------------------------------------------------- */

static void ensure_fields(Awk *A, int n)
{
  if (n + 1 > A->fields_cap) {
    int cap = A->fields_cap * 2 + 8;
    while (cap < n + 1) cap *= 2;
    A->fields = g_renew(Val, A->fields, cap);
    for (int i = A->fields_cap; i < cap; i++) A->fields[i] = (Val){ T_UNINIT, 0, NULL };
    A->fields_cap = cap;
  }
}

void awk_set_record(Awk *A, const char *s, size_t n)
{
  ensure_fields(A, 0);
  for (int i = 1; i <= A->nfields; i++) awk_val_free(&A->fields[i]);
  A->nfields = 0;
  /* one record after another: the last one's buffer is reused when the
   * new one fits (g_malloc is malloc, so its usable size is known) */
  Val *rec = &A->fields[0];
  if (rec->s && malloc_usable_size(rec->s) > n) {
    memcpy(rec->s, s, n);
    rec->s[n] = 0;
    rec->t = T_MAYBE;
    rec->n = 0;
  } else {
    awk_val_free(rec);
    *rec = awk_maybe(g_strndup(s, n));
  }
  A->split_done = false;
  A->lazy = false;
}

void awk_split_record(Awk *A)
{
  if (A->split_done) return;
  A->split_done = true;
  const char *rs = awk_var_cstr(A, AV_RS);
  const char *fs = awk_var_cstr(A, AV_FS);
  const char *rec = A->fields[0].s ? A->fields[0].s : "";
  if (fs[0] == ' ' && fs[1] == 0) {
    /* the default: runs of blanks and newlines, straight into the fields */
    int nf = 0;
    for (const char *p = rec;;) {
      while (*p == ' ' || *p == '\t' || *p == '\n') p++;
      if (!*p) break;
      const char *st = p;
      while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
      if (2 * (nf + 1) >= A->spans_cap) {
        A->spans_cap = A->spans_cap * 2 + 64;
        A->spans = g_renew(size_t, A->spans, A->spans_cap);
      }
      A->spans[2 * nf] = (size_t)(st - rec);
      A->spans[2 * nf + 1] = (size_t)(p - st);
      nf++;
    }
    ensure_fields(A, nf);
    A->lazy = true;
    A->nfields = nf;
    awk_set_var_num(A, AV_NF, nf);
    return;
  }
  GPtrArray *parts = awk_split_fs(A, rec, fs, rs[0] == 0, NULL);
  ensure_fields(A, (int)parts->len);
  for (guint i = 0; i < parts->len; i++) A->fields[i + 1] = awk_maybe(parts->pdata[i]);
  A->nfields = (int)parts->len;
  g_free(g_ptr_array_free(parts, FALSE));
  awk_set_var_num(A, AV_NF, A->nfields);
}

/* Turns the spans of a lazy split into values. */
static void materialize(Awk *A)
{
  if (!A->lazy) return;
  A->lazy = false;
  for (int i = 1; i <= A->nfields; i++)
    A->fields[i] = awk_maybe(g_strndup(A->fields[0].s + A->spans[2 * i - 2], A->spans[2 * i - 1]));
}

static void rebuild_record(Awk *A)
{
  GString *s = g_string_new(NULL);
  const char *ofs = awk_var_cstr(A, AV_OFS);
  for (int i = 1; i <= A->nfields; i++) {
    if (i > 1) g_string_append(s, ofs);
    char *t = awk_to_ostr(A, &A->fields[i]);
    g_string_append(s, t);
    g_free(t);
  }
  awk_val_free(&A->fields[0]);
  A->fields[0] = awk_strnum(g_string_free(s, FALSE));
}

void awk_set_nf(Awk *A, int nf)
{
  awk_split_record(A);
  materialize(A);
  if (nf < 0) awk_fatal(A, "NF set to negative value");
  ensure_fields(A, nf);
  for (int i = nf + 1; i <= A->nfields; i++) awk_val_free(&A->fields[i]);
  for (int i = A->nfields + 1; i <= nf; i++) A->fields[i] = (Val){ T_UNINIT, 0, NULL };
  A->nfields = nf;
  awk_set_var_num(A, AV_NF, nf);
  rebuild_record(A);
}

Val awk_field(Awk *A, int i)
{
  if (i < 0) awk_fatal(A, "attempt to access field %d", i);
  if (i == 0) return awk_val_copy(&A->fields[0]);
  awk_split_record(A);
  if (i > A->nfields) return awk_str(g_strdup(""));
  if (A->lazy)
    return awk_maybe(g_strndup(A->fields[0].s + A->spans[2 * i - 2], A->spans[2 * i - 1]));
  return awk_val_copy(&A->fields[i]);
}

void awk_set_field(Awk *A, int i, Val v)
{
  if (i < 0) awk_fatal(A, "attempt to access field %d", i);
  if (i == 0) {
    char *s = awk_to_str(A, &v);
    awk_val_free(&v);
    awk_set_record(A, s, strlen(s));
    g_free(s);
    return;
  }
  awk_split_record(A);
  materialize(A);
  if (i > A->nfields) {
    ensure_fields(A, i);
    for (int k = A->nfields + 1; k <= i; k++) A->fields[k] = (Val){ T_UNINIT, 0, NULL };
    A->nfields = i;
    awk_set_var_num(A, AV_NF, i);
  }
  awk_val_free(&A->fields[i]);
  if (v.t == T_NUM) {
    A->fields[i] = v;
  } else {
    A->fields[i] = v;
  }
  rebuild_record(A);
}

/* ---- expressions ----------------------------------------------------------- */

static char *subscript(Awk *A, ANode **args, int n)
{
  if (n == 1) {
    Val v = awk_eval(A, args[0]);
    char *s = awk_to_str(A, &v);
    awk_val_free(&v);
    return s;
  }
  GString *k = g_string_new(NULL);
  const char *sep = awk_var_cstr(A, AV_SUBSEP);
  for (int i = 0; i < n; i++) {
    if (i) g_string_append(k, sep);
    Val v = awk_eval(A, args[i]);
    char *s = awk_to_str(A, &v);
    awk_val_free(&v);
    g_string_append(k, s);
    g_free(s);
  }
  return g_string_free(k, FALSE);
}

static Val get_lvalue(Awk *A, ANode *lv)
{
  switch (lv->op) {
  case AN_VAR:
    if (lv->ival == AV_NF) awk_split_record(A);
    /* fall through */
  case AN_LOCAL: return awk_val_copy(&var_of(A, lv, false)->v);
  case AN_FIELD: {
    Val i = awk_eval(A, lv->a);
    double d = awk_to_num(A, &i);
    awk_val_free(&i);
    return awk_field(A, (int)d);
  }
  case AN_INDEX: {
    AVar *arr = var_of(A, lv->a, true);
    char *k = subscript(A, lv->args, lv->nargs);
    Val *e = awk_array_ref(A, arr, k, true);
    g_free(k);
    return awk_val_copy(e);
  }
  default: return awk_eval(A, lv);
  }
}

void awk_assign(Awk *A, ANode *lv, Val v)
{
  switch (lv->op) {
  case AN_VAR:
    if (lv->ival == AV_FS) awk_split_record(A);
    if (lv->ival == AV_NF) {
      double n = awk_to_num(A, &v);
      awk_val_free(&v);
      awk_set_nf(A, (int)n);
      return;
    }
    /* fall through */
  case AN_LOCAL: {
    AVar *var = var_of(A, lv, false);
    var->kind = K_SCALAR;
    awk_val_free(&var->v);
    var->v = v;
    return;
  }
  case AN_FIELD: {
    Val i = awk_eval(A, lv->a);
    double d = awk_to_num(A, &i);
    awk_val_free(&i);
    awk_set_field(A, (int)d, v);
    return;
  }
  case AN_INDEX: {
    AVar *arr = var_of(A, lv->a, true);
    char *k = subscript(A, lv->args, lv->nargs);
    Val *e = awk_array_ref(A, arr, k, true);
    g_free(k);
    awk_val_free(e);
    *e = v;
    return;
  }
  default: awk_val_free(&v); awk_fatal(A, "assignment to a non-variable");
  }
}

static int compare(Awk *A, Val *a, Val *b)
{
  awk_resolve(a);
  awk_resolve(b);
  bool an = a->t == T_NUM || a->t == T_STRNUM || a->t == T_UNINIT;
  bool bn = b->t == T_NUM || b->t == T_STRNUM || b->t == T_UNINIT;
  if (an && bn) {
    double x = awk_to_num(A, a), y = awk_to_num(A, b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  char *x = awk_to_str(A, a), *y = awk_to_str(A, b);
  int r = awk_ignorecase(A) ? g_ascii_strcasecmp(x, y) : strcmp(x, y);
  g_free(x);
  g_free(y);
  return r;
}

static double arith(Awk *A, int op, double x, double y)
{
  switch (op) {
  case AN_ADD: return x + y;
  case AN_SUB: return x - y;
  case AN_MUL: return x * y;
  case AN_DIV:
    if (y == 0) awk_fatal(A, "division by zero attempted");
    return x / y;
  case AN_MOD:
    if (y == 0) awk_fatal(A, "division by zero attempted in `%%'");
    return fmod(x, y);
  case AN_POW: return pow(x, y);
  default: return 0;
  }
}

static bool truthy(Awk *A, Val *v)
{
  awk_resolve(v);
  switch (v->t) {
  case T_NUM: return v->n != 0;
  case T_STRNUM: return v->n != 0;
  case T_STR: return v->s && v->s[0];
  default: (void)A; return false;
  }
}

static Val call_user(Awk *A, ANode *n);

/* An operand's number: a field or a global read in place (the common
 * `s += $2`), anything else evaluated. */
static double num_of(Awk *A, ANode *n)
{
  if (n->op == AN_FIELD && n->a->op == AN_NUM && n->a->num >= 1) {
    int i = (int)n->a->num;
    awk_split_record(A);
    if (i > A->nfields) return 0;
    /* a default-split field ends at a blank or the end: strtod stops there */
    if (A->lazy) return str_num(A->fields[0].s + A->spans[2 * i - 2]);
    return awk_to_num(A, &A->fields[i]);
  }
  if (n->op == AN_VAR && n->ival != AV_NF && A->vars[n->ival].kind != K_ARRAY)
    return awk_to_num(A, &A->vars[n->ival].v);
  Val v = awk_eval(A, n);
  double d = awk_to_num(A, &v);
  awk_val_free(&v);
  return d;
}

static bool match_node(Awk *A, ANode *target, ANode *re_node)
{
  Val t = awk_eval(A, target);
  char *s = awk_to_str(A, &t);
  awk_val_free(&t);
  regex_t *re = awk_regex_of(A, re_node);
  bool m = awk_match(re, s, strlen(s), 0, false, NULL, 0);
  g_free(s);
  return m;
}

Val awk_eval(Awk *A, ANode *n)
{
  switch (n->op) {
  case AN_NUM: return awk_num(n->num);
  case AN_STR: return awk_str(g_strdup(n->str));
  case AN_ERE: {
    regex_t *re = awk_regex_of(A, n);
    const char *s = A->fields[0].s ? A->fields[0].s : "";
    return awk_num(awk_match(re, s, strlen(s), 0, false, NULL, 0));
  }
  case AN_VAR:
  case AN_LOCAL:
  case AN_FIELD:
  case AN_INDEX: return get_lvalue(A, n);
  case AN_GROUP: return awk_eval(A, n->args[0]);
  case AN_IN: {
    AVar *arr = var_of(A, n->a, true);
    char *k = subscript(A, n->args, n->nargs);
    bool has = awk_array_ref(A, arr, k, false) != NULL;
    g_free(k);
    return awk_num(has);
  }
  case AN_MATCH:
  case AN_NOMATCH: {
    bool m = match_node(A, n->a, n->b);
    return awk_num(n->op == AN_MATCH ? m : !m);
  }
  case AN_ADD:
  case AN_SUB:
  case AN_MUL:
  case AN_DIV:
  case AN_MOD:
  case AN_POW: {
    double x = num_of(A, n->a);
    double y = num_of(A, n->b);
    return awk_num(arith(A, n->op, x, y));
  }
  case AN_CONCAT: {
    Val a = awk_eval(A, n->a);
    char *x = awk_to_str(A, &a);
    awk_val_free(&a);
    Val b = awk_eval(A, n->b);
    char *y = awk_to_str(A, &b);
    awk_val_free(&b);
    char *r = g_strconcat(x, y, NULL);
    g_free(x);
    g_free(y);
    return awk_str(r);
  }
  case AN_LT:
  case AN_LE:
  case AN_GT:
  case AN_GE:
  case AN_EQ:
  case AN_NE: {
    Val a = awk_eval(A, n->a), b = awk_eval(A, n->b);
    int c = compare(A, &a, &b);
    awk_val_free(&a);
    awk_val_free(&b);
    bool r = n->op == AN_LT   ? c < 0
             : n->op == AN_LE ? c <= 0
             : n->op == AN_GT ? c > 0
             : n->op == AN_GE ? c >= 0
             : n->op == AN_EQ ? c == 0
                              : c != 0;
    return awk_num(r);
  }
  case AN_AND: return awk_num(awk_eval_cond(A, n->a) && awk_eval_cond(A, n->b));
  case AN_OR: return awk_num(awk_eval_cond(A, n->a) || awk_eval_cond(A, n->b));
  case AN_NOT: return awk_num(!awk_eval_cond(A, n->a));
  case AN_NEG:
  case AN_PLUS: {
    Val a = awk_eval(A, n->a);
    double x = awk_to_num(A, &a);
    awk_val_free(&a);
    return awk_num(n->op == AN_NEG ? -x : x);
  }
  case AN_COND: return awk_eval(A, awk_eval_cond(A, n->a) ? n->b : n->c);
  case AN_ASSIGN: {
    Val v;
    if (n->ival == 0) {
      v = awk_eval(A, n->b);
      if (v.t == T_UNINIT) v = (Val){ T_UNINIT, 0, NULL };
    } else {
      double y = num_of(A, n->b);
      double x = num_of(A, n->a);
      v = awk_num(arith(A, n->ival, x, y));
    }
    Val r = awk_val_copy(&v);
    awk_assign(A, n->a, v);
    return r;
  }
  case AN_PREINC:
  case AN_PREDEC:
  case AN_POSTINC:
  case AN_POSTDEC: {
    Val a = get_lvalue(A, n->a);
    double x = awk_to_num(A, &a);
    awk_val_free(&a);
    double y = (n->op == AN_PREINC || n->op == AN_POSTINC) ? x + 1 : x - 1;
    awk_assign(A, n->a, awk_num(y));
    return awk_num(n->op == AN_PREINC || n->op == AN_PREDEC ? y : x);
  }
  case AN_BUILTIN: return awk_builtin(A, n);
  case AN_CALL: return call_user(A, n);
  case AN_GETLINE: return awk_getline(A, n);
  default: awk_fatal(A, "unexpected expression (%d)", n->op);
  }
}

bool awk_ignorecase(Awk *A)
{
  return truthy(A, &A->vars[AV_IGNORECASE].v);
}

bool awk_eval_cond(Awk *A, ANode *n)
{
  Val v = awk_eval(A, n);
  bool r = truthy(A, &v);
  awk_val_free(&v);
  return r;
}

/* ---- user functions ---------------------------------------------------------- */

static Val ret_val;

static Val call_user(Awk *A, ANode *n)
{
  Func *f = g_hash_table_lookup(A->funcs, n->str);
  if (!f || !f->defined) awk_fatal(A, "function `%s' not defined", n->str);
  if (n->nargs > f->nparams)
    awk_fatal(A, "function `%s' called with more arguments than declared", n->str);
  if (A->depth > 3000) awk_fatal(A, "function calls nested too deeply");
  Frame fr;
  fr.n = f->nparams;
  fr.slots = g_new0(AVar *, f->nparams + 1);
  fr.own = g_new0(AVar, f->nparams + 1);
  for (int i = 0; i < n->nargs; i++) {
    ANode *a = n->args[i];
    if (a->op == AN_VAR || a->op == AN_LOCAL) {
      AVar *v = a->op == AN_LOCAL ? local_var(A, a->ival, false) : &A->vars[a->ival];
      if (a->op == AN_LOCAL && A->frame->slots[a->ival] &&
          A->frame->slots[a->ival]->kind != K_SCALAR) {
        v = A->frame->slots[a->ival];
      }
      if (v->kind == K_ARRAY || (v->kind == K_UNTYPED && v->v.t == T_UNINIT)) {
        fr.slots[i] = v;
        continue;
      }
    }
    fr.own[i].v = awk_eval(A, a);
    fr.own[i].kind = K_SCALAR;
  }
  Frame *save = A->frame;
  A->frame = &fr;
  A->depth++;
  ret_val = (Val){ T_UNINIT, 0, NULL };
  awk_exec(A, f->body);
  Val r = ret_val;
  ret_val = (Val){ T_UNINIT, 0, NULL };
  A->depth--;
  A->frame = save;
  for (int i = 0; i < f->nparams; i++) {
    awk_val_free(&fr.own[i].v);
    if (fr.own[i].arr) {
      awk_array_clear(&fr.own[i]);
      g_hash_table_destroy(fr.own[i].arr);
    }
  }
  g_free(fr.slots);
  g_free(fr.own);
  return r;
}

/* ---- statements ---------------------------------------------------------------- */

/* PROCINFO["sorted_in"] when the program has set it (gawk's for-in order). */
static const char *sorted_in(Awk *A)
{
  int i = GPOINTER_TO_INT(g_hash_table_lookup(A->var_index, "PROCINFO")) - 1;
  if (i < 0 || A->vars[i].kind != K_ARRAY) return NULL;
  Val *v = g_hash_table_lookup(A->vars[i].arr, "sorted_in");
  if (!v) return NULL;
  awk_resolve(v);
  return v->t == T_STR || v->t == T_STRNUM ? v->s : NULL;
}

int awk_exec(Awk *A, ANode *n)
{
  for (; n; n = n->next) {
    int r;
    switch (n->op) {
    case S_BLOCK:
      if ((r = awk_exec(A, n->a))) return r;
      break;
    case S_EXPR: {
      Val v = awk_eval(A, n->a);
      awk_val_free(&v);
      break;
    }
    case S_PRINT:
    case S_PRINTF: awk_print(A, n); break;
    case S_IF:
      if (awk_eval_cond(A, n->a)) {
        if ((r = awk_exec(A, n->b))) return r;
      } else if (n->c) {
        if ((r = awk_exec(A, n->c))) return r;
      }
      break;
    case S_WHILE:
      while (awk_eval_cond(A, n->a)) {
        r = awk_exec(A, n->b);
        if (r == 1) break;
        if (r == 3) return r;
      }
      break;
    case S_DO:
      do {
        r = awk_exec(A, n->b);
        if (r == 1) break;
        if (r == 3) return r;
      } while (awk_eval_cond(A, n->a));
      break;
    case S_FOR:
      if (n->a) {
        Val v = awk_eval(A, n->a);
        awk_val_free(&v);
      }
      while (!n->b || awk_eval_cond(A, n->b)) {
        r = awk_exec(A, n->d);
        if (r == 1) break;
        if (r == 3) return r;
        if (n->c) {
          Val v = awk_eval(A, n->c);
          awk_val_free(&v);
        }
      }
      break;
    case S_FORIN: {
      AVar *arr = var_of(A, n->b, true);
      GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
      GHashTableIter it;
      gpointer k;
      g_hash_table_iter_init(&it, arr->arr);
      while (g_hash_table_iter_next(&it, &k, NULL)) g_ptr_array_add(keys, g_strdup(k));
      const char *how = sorted_in(A);
      if (how) awk_order_keys(A, arr, keys, how);
      r = 0;
      for (guint i = 0; i < keys->len; i++) {
        if (!g_hash_table_contains(arr->arr, keys->pdata[i])) continue;
        awk_assign(A, n->a, awk_strnum(g_strdup(keys->pdata[i])));
        r = awk_exec(A, n->c);
        if (r == 1 || r == 3) break;
      }
      g_ptr_array_free(keys, TRUE);
      if (r == 3) return r;
      break;
    }
    case S_BREAK: return 1;
    case S_CONTINUE: return 2;
    case S_NEXT:
    case S_NEXTFILE:
      if (!A->jmp_next)
        awk_fatal(A, "`%s' used in BEGIN or END", n->op == S_NEXT ? "next" : "nextfile");
      A->jmp_kind = n->op == S_NEXT ? 1 : 2;
      longjmp(*A->jmp_next, 1);
    case S_EXIT:
      if (n->a) {
        Val v = awk_eval(A, n->a);
        A->exit_status = (int)awk_to_num(A, &v) & 255;
        awk_val_free(&v);
      }
      A->jmp_kind = 3;
      longjmp(*A->jmp_exit, 1);
    case S_RETURN:
      awk_val_free(&ret_val);
      if (n->a) ret_val = awk_eval(A, n->a);
      return 3;
    case S_DELETE: {
      ANode *t = n->a;
      if (t->op == AN_INDEX) {
        AVar *arr = var_of(A, t->a, true);
        char *k = subscript(A, t->args, t->nargs);
        gpointer old_key, old;
        if (g_hash_table_lookup_extended(arr->arr, k, &old_key, &old)) {
          g_hash_table_remove(arr->arr, k);
          free_elem(old);
        }
        g_free(k);
      } else {
        awk_array_clear(var_of(A, t, true));
      }
      break;
    }
    default: awk_fatal(A, "unexpected statement (%d)", n->op);
    }
  }
  return 0;
}
