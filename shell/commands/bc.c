/* bc.c — POSIX bc with GNU's extensions agents use: -l (s c a l e j and
 * scale=20), -q, files then standard input; arbitrary precision decimals
 * with POSIX's scale rules, ibase 2..36, obase 2 up (above 16 as GNU
 * prints it), arrays, functions with auto and array parameters (dynamic
 * scope), if/else, while, for, break, continue, return, quit, halt,
 * print, strings, ++/--, the op= assignments, && || !, last and ".",
 * length(), scale(), sqrt(); # and slash-star comments.
 *
 * A line (a statement list ended by a newline) is parsed whole, then run,
 * as GNU runs it: a syntax error drops the line, a runtime error the rest
 * of it; `quit` ends bc when it is read.  Output lines are cut at 70
 * columns with a backslash.  GNU's runtime errors name the address of the
 * failing byte code, which this interpreter has not: its messages say
 * adr=0. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/bc/bc.h"

/* ---- output ---------------------------------------------------------------------- */

static void out_ch(Bc *bc, char ch)
{
  if (ch == '\n') {
    bc->col = 0;
  } else {
    if (bc->col == 68) {
      box_out_puts(bc->c->out, "\\\n");
      bc->col = 0;
    }
    bc->col++;
  }
  box_out_putc(bc->c->out, ch);
}

static void out_str(Bc *bc, const char *s)
{
  for (; *s; s++) out_ch(bc, *s);
}

static void print_num(Bc *bc, const Num *a)
{
  if (bc_num_is_zero(a)) {
    out_ch(bc, '0');
    return;
  }
  if (a->neg) out_ch(bc, '-');
  if (bc->obase == 10) {
    int hi = a->n - 1;
    while (hi >= a->scale && a->d[hi] == 0) hi--;
    for (int i = hi; i >= a->scale; i--) out_ch(bc, (char)('0' + a->d[i]));
    if (a->scale) out_ch(bc, '.');
    for (int i = a->scale - 1; i >= 0; i--) out_ch(bc, (char)('0' + a->d[i]));
    return;
  }
  /* other bases: the integer part by division, the fraction by
   * multiplication until a digit's place is finer than 10^-scale */
  Num ob = bc_num_from_long(bc->obase);
  Num ip = bc_num_rescale(a, 0), fr;
  ip.neg = false;
  Num absa = bc_num_copy(a);
  absa.neg = false;
  fr = bc_num_add(&absa, &ip, true);
  bc_num_free(&absa);
  GArray *digits = g_array_new(FALSE, FALSE, sizeof(long));
  while (!bc_num_is_zero(&ip)) {
    Num q;
    bc_num_div(&ip, &ob, 0, &q);
    Num back = bc_num_mul(&q, &ob, 0);
    Num r = bc_num_add(&ip, &back, true);
    long v = 0;
    bc_num_to_long(&r, &v);
    g_array_append_val(digits, v);
    bc_num_free(&back);
    bc_num_free(&r);
    bc_num_free(&ip);
    ip = q;
  }
  int width = 1;
  for (long m = bc->obase - 1; m >= 10; m /= 10) width++;
  bool big = bc->obase > 16;
  for (int i = (int)digits->len - 1; i >= 0; i--) {
    long v = g_array_index(digits, long, i);
    if (big) {
      g_autofree char *s = g_strdup_printf(" %0*ld", width, v);
      out_str(bc, s);
    } else {
      out_ch(bc, "0123456789ABCDEF"[v]);
    }
  }
  if (a->scale) {
    out_ch(bc, '.');
    Num place = bc_num_from_long(1);
    Num limit = bc_num_zero(0);
    bc_num_free(&limit);
    while (true) {
      /* digits until obase^k reaches 10^scale */
      bool done = (int)(place.n - place.scale) > a->scale;
      if (done) break;
      Num f2 = bc_num_mul(&fr, &ob, fr.scale);
      Num d = bc_num_rescale(&f2, 0);
      long v = 0;
      bc_num_to_long(&d, &v);
      Num f3 = bc_num_add(&f2, &d, true);
      bc_num_free(&f2);
      bc_num_free(&d);
      bc_num_free(&fr);
      fr = f3;
      if (big) {
        g_autofree char *s = g_strdup_printf(" %0*ld", width, v);
        out_str(bc, place.n == 1 && place.d[0] == 1 ? s + 1 : s);
      } else {
        out_ch(bc, "0123456789ABCDEF"[v]);
      }
      Num p2 = bc_num_mul(&place, &ob, 0);
      bc_num_free(&place);
      place = p2;
    }
    bc_num_free(&place);
  }
  g_array_free(digits, TRUE);
  bc_num_free(&ob);
  bc_num_free(&ip);
  bc_num_free(&fr);
}

static void runtime_error(Bc *bc, const char *msg)
{
  box_out_flush(bc->c->out);
  box_fdprintf(bc->c->err, "Runtime error (func=%s, adr=0): %s\n", bc->cur_func, msg);
}

static void runtime_warning(Bc *bc, const char *msg)
{
  box_out_flush(bc->c->out);
  box_fdprintf(bc->c->err, "Runtime warning (func=%s, adr=0): %s\n", bc->cur_func, msg);
}

/* ---- running --------------------------------------------------------------------- */

static Var *var_of(Bc *bc, const char *name)
{
  Var *v = g_hash_table_lookup(bc->vars, name);
  if (!v) {
    v = g_new0(Var, 1);
    v->stack = g_array_new(FALSE, FALSE, sizeof(Num));
    Num z = bc_num_zero(0);
    g_array_append_val(v->stack, z);
    g_hash_table_insert(bc->vars, g_strdup(name), v);
  }
  return v;
}

static void num_ptr_free(gpointer p)
{
  bc_num_free(p);
  g_free(p);
}

static GHashTable *new_array(void)
{
  return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, num_ptr_free);
}

static Arr *arr_of(Bc *bc, const char *name)
{
  Arr *a = g_hash_table_lookup(bc->arrs, name);
  if (!a) {
    a = g_new0(Arr, 1);
    a->stack = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
    g_ptr_array_add(a->stack, new_array());
    g_hash_table_insert(bc->arrs, g_strdup(name), a);
  }
  return a;
}

static GHashTable *array_top(Bc *bc, const char *name)
{
  Arr *a = arr_of(bc, name);
  return g_ptr_array_index(a->stack, a->stack->len - 1);
}

static GHashTable *array_copy(GHashTable *src)
{
  GHashTable *d = new_array();
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, src);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    Num *n = g_new(Num, 1);
    *n = bc_num_copy(v);
    g_hash_table_insert(d, g_memdup2(k, sizeof(gint64)), n);
  }
  return d;
}

static Flow eval(Bc *bc, BcNode *n, Num *out);

static Num parse_number(Bc *bc, const char *s)
{
  /* one digit alone keeps its value whatever ibase; in longer numbers a
   * digit at or above ibase counts as ibase - 1 */
  if (bc->ibase == 10) {
    const char *dot = strchr(s, '.');
    int ip = dot ? (int)(dot - s) : (int)strlen(s), fp = dot ? (int)strlen(dot + 1) : 0;
    Num r = { false, fp, ip + fp, g_malloc0((size_t)MAX(ip + fp, 1)) };
    int k = 0;
    for (int i = (int)strlen(s) - 1; i >= 0; i--) {
      if (s[i] == '.') continue;
      int d = g_ascii_isdigit(s[i]) ? s[i] - '0' : s[i] - 'A' + 10;
      r.d[k++] = (unsigned char)(strlen(s) - (dot ? 1 : 0) == 1 ? d : MIN(d, 9));
    }
    if (strlen(s) - (dot ? 1 : 0) == 1 && r.d[0] >= 10) {
      bc_num_free(&r);
      return bc_num_from_long(s[0] - 'A' + 10);
    }
    bc_num_norm(&r);
    return r;
  }
  size_t ndig = strlen(s) - (strchr(s, '.') ? 1 : 0);
  Num base = bc_num_from_long(bc->ibase), r = bc_num_zero(0);
  const char *p = s;
  for (; *p && *p != '.'; p++) {
    int d = g_ascii_isdigit(*p) ? *p - '0' : *p - 'A' + 10;
    if (ndig > 1) d = (int)MIN(d, bc->ibase - 1);
    Num t = bc_num_mul(&r, &base, 0), dn = bc_num_from_long(d);
    bc_num_free(&r);
    r = bc_num_add(&t, &dn, false);
    bc_num_free(&t);
    bc_num_free(&dn);
  }
  if (*p == '.') {
    /* the fraction: its digits over ibase^k, at k decimal places */
    p++;
    int k = (int)strlen(p);
    Num f = bc_num_zero(0), pw = bc_num_from_long(1);
    for (; *p; p++) {
      int d = g_ascii_isdigit(*p) ? *p - '0' : *p - 'A' + 10;
      d = (int)MIN(d, bc->ibase - 1);
      Num t = bc_num_mul(&f, &base, 0), dn = bc_num_from_long(d), p2 = bc_num_mul(&pw, &base, 0);
      bc_num_free(&f);
      f = bc_num_add(&t, &dn, false);
      bc_num_free(&t);
      bc_num_free(&dn);
      bc_num_free(&pw);
      pw = p2;
    }
    Num q;
    bc_num_div(&f, &pw, k, &q);
    Num t = bc_num_add(&r, &q, false);
    bc_num_free(&r);
    r = t;
    bc_num_free(&q);
    bc_num_free(&f);
    bc_num_free(&pw);
  }
  bc_num_free(&base);
  return r;
}

static Num *lvalue_slot(Bc *bc, BcNode *n, Flow *fl)
{
  *fl = FL_OK;
  if (n->k == E_VAR) {
    Var *v = var_of(bc, n->name);
    return &g_array_index(v->stack, Num, v->stack->len - 1);
  }
  if (n->k == E_ELEM) {
    Num idx;
    *fl = eval(bc, n->a, &idx);
    if (*fl != FL_OK) return NULL;
    long i;
    bool ok = bc_num_to_long(&idx, &i);
    bc_num_free(&idx);
    if (!ok || i < 0 || i > 16777215) {
      g_autofree char *m = g_strdup_printf("Array %s subscript out of bounds.", n->name);
      runtime_error(bc, m);
      *fl = FL_ERROR;
      return NULL;
    }
    GHashTable *t = array_top(bc, n->name);
    gint64 key = i;
    Num *slot = g_hash_table_lookup(t, &key);
    if (!slot) {
      slot = g_new(Num, 1);
      *slot = bc_num_zero(0);
      g_hash_table_insert(t, g_memdup2(&key, sizeof key), slot);
    }
    return slot;
  }
  return NULL;
}

static Flow get_special(Bc *bc, const char *name, Num *out)
{
  if (!strcmp(name, "last"))
    *out = bc_num_copy(&bc->last);
  else
    *out = bc_num_from_long(name[0] == 's' ? bc->scale : name[0] == 'i' ? bc->ibase : bc->obase);
  return FL_OK;
}

static void set_special(Bc *bc, const char *name, const Num *v)
{
  if (!strcmp(name, "last")) {
    bc_num_free(&bc->last);
    bc->last = bc_num_copy(v);
    return;
  }
  long x;
  if (!bc_num_to_long(v, &x)) x = LONG_MAX;
  if (name[0] == 's') {
    if (x < 0) {
      runtime_warning(bc, "negative scale, set to 0");
      x = 0;
    }
    bc->scale = x;
  } else {
    const char *what = name[0] == 'i' ? "ibase" : "obase";
    long max = name[0] == 'i' ? 36 : INT_MAX;
    if (x < 2) {
      g_autofree char *m = g_strdup_printf("%s too small, set to 2", what);
      runtime_warning(bc, m);
      x = 2;
    } else if (x > max) {
      g_autofree char *m = g_strdup_printf("%s too large, set to %ld", what, max);
      runtime_warning(bc, m);
      x = max;
    }
    *(name[0] == 'i' ? &bc->ibase : &bc->obase) = x;
  }
}

static bool num_pow(Bc *bc, const Num *a, const Num *b, Num *out)
{
  if (b->scale && !bc_num_is_zero(&(Num){ false, b->scale, b->scale, b->d })) {
    runtime_warning(bc, "non-zero scale in exponent");
  }
  long e;
  if (!bc_num_to_long(b, &e)) {
    runtime_error(bc, "exponent too large in raise");
    return false;
  }
  bool neg = e < 0;
  unsigned long ue = neg ? -(unsigned long)e : (unsigned long)e;
  if (ue == 0) {
    *out = bc_num_from_long(1);
    return true;
  }
  /* the scale of a^e: min(scale(a) * e, max(scale, scale(a))) */
  long want = neg ? bc->scale : MIN((long)a->scale * (long)ue, MAX(bc->scale, a->scale));
  long full = (long)a->scale * (long)ue;
  Num r = bc_num_from_long(1), p = bc_num_copy(a);
  bool first = true;
  while (ue) {
    if (ue & 1) {
      Num t = bc_num_mul(&r, &p, first ? p.scale : (int)MIN(full, INT_MAX / 2));
      bc_num_free(&r);
      r = t;
      first = false;
    }
    ue >>= 1;
    if (ue) {
      Num t = bc_num_mul(&p, &p, (int)MIN(full, INT_MAX / 2));
      bc_num_free(&p);
      p = t;
    }
  }
  bc_num_free(&p);
  if (neg) {
    Num one = bc_num_from_long(1), q;
    if (!bc_num_div(&one, &r, (int)want, &q)) {
      bc_num_free(&one);
      bc_num_free(&r);
      runtime_error(bc, "divide by zero");
      return false;
    }
    bc_num_free(&one);
    bc_num_free(&r);
    *out = q;
    return true;
  }
  *out = bc_num_rescale(&r, (int)MIN(want, r.scale));
  bc_num_free(&r);
  return true;
}

static bool num_sqrt(const Num *a, int scale, Num *out)
{
  if (a->neg && !bc_num_is_zero(a)) return false;
  if (bc_num_is_zero(a)) {
    *out = bc_num_zero(0);
    return true;
  }
  int rs = MAX(scale, a->scale);
  int work = rs + 2;
  /* Newton's iteration from above, at two more digits, then cut */
  Num x = bc_num_from_long(1);
  int ip = a->n - a->scale;
  for (int i = 0; i < (ip + 1) / 2 + 1; i++) {
    Num t = bc_num_from_long(10), y = bc_num_mul(&x, &t, 0);
    bc_num_free(&t);
    bc_num_free(&x);
    x = y;
  }
  Num two = bc_num_from_long(2);
  for (;;) {
    Num q, s, nx;
    bc_num_div(a, &x, work, &q);
    s = bc_num_add(&x, &q, false);
    bc_num_div(&s, &two, work, &nx);
    bc_num_free(&q);
    bc_num_free(&s);
    int c = bc_num_cmp(&nx, &x);
    bc_num_free(&x);
    x = nx;
    if (c >= 0) break;
  }
  /* x may be one unit of the last place above the root */
  Num sq = bc_num_mul(&x, &x, 2 * work);
  if (bc_num_cmp(&sq, a) > 0) {
    Num ulp = bc_num_zero(work);
    ulp.d[0] = 1;
    Num y = bc_num_add(&x, &ulp, true);
    bc_num_free(&x);
    bc_num_free(&ulp);
    x = y;
  }
  bc_num_free(&sq);
  bc_num_free(&two);
  *out = bc_num_rescale(&x, rs);
  bc_num_free(&x);
  return true;
}

/* a OP b at POSIX's scales; false after a runtime error. */
static bool arith(Bc *bc, char op, const Num *a, const Num *b, Num *out)
{
  switch (op) {
  case '+':
  case '-': *out = bc_num_add(a, b, op == '-'); return true;
  case '*':
    *out = bc_num_mul(a, b, (int)MIN(a->scale + b->scale, MAX(bc->scale, MAX(a->scale, b->scale))));
    return true;
  case '/':
    if (bc_num_div(a, b, (int)bc->scale, out)) return true;
    runtime_error(bc, "Divide by zero");
    return false;
  case '%': {
    /* a - (a / b) * b, the quotient at scale, the product at
     * max(scale + scale(b), scale(a)) */
    Num q;
    if (!bc_num_div(a, b, (int)bc->scale, &q)) {
      runtime_error(bc, "Modulo by zero");
      return false;
    }
    Num qb = bc_num_mul(&q, b, (int)MAX(bc->scale + b->scale, a->scale));
    *out = bc_num_add(a, &qb, true);
    bc_num_free(&q);
    bc_num_free(&qb);
    return true;
  }
  default: return num_pow(bc, a, b, out);
  }
}

static Flow call(Bc *bc, BcNode *n, Num *out);

/* Both operands of n, left first; neither is left allocated on failure. */
static Flow eval_both(Bc *bc, BcNode *n, Num *a, Num *b)
{
  Flow fl = eval(bc, n->a, a);
  if (fl != FL_OK) return fl;
  if ((fl = eval(bc, n->b, b)) != FL_OK) bc_num_free(a);
  return fl;
}

static Flow eval(Bc *bc, BcNode *n, Num *out)
{
  Flow fl;
  switch (n->k) {
  case E_NUM: *out = parse_number(bc, n->name); return FL_OK;
  case E_VAR:
  case E_ELEM: {
    Num *slot = lvalue_slot(bc, n, &fl);
    if (!slot) return fl;
    *out = bc_num_copy(slot);
    return FL_OK;
  }
  case E_SPECIAL: return get_special(bc, n->name, out);
  case E_NEG:
    if ((fl = eval(bc, n->a, out)) != FL_OK) return fl;
    out->neg = !out->neg;
    bc_num_norm(out);
    return FL_OK;
  case E_NOT:
  case E_AND:
  case E_OR: {
    Num a;
    if ((fl = eval(bc, n->a, &a)) != FL_OK) return fl;
    bool t = !bc_num_is_zero(&a);
    bc_num_free(&a);
    if (n->k == E_NOT) {
      *out = bc_num_from_long(!t);
      return FL_OK;
    }
    if (n->k == E_AND ? !t : t) {
      *out = bc_num_from_long(t);
      return FL_OK;
    }
    Num b;
    if ((fl = eval(bc, n->b, &b)) != FL_OK) return fl;
    *out = bc_num_from_long(!bc_num_is_zero(&b));
    bc_num_free(&b);
    return FL_OK;
  }
  case E_REL: {
    Num a, b;
    if ((fl = eval_both(bc, n, &a, &b)) != FL_OK) return fl;
    int c = bc_num_cmp(&a, &b);
    const char *op = n->op;
    bool r = !strcmp(op, "==")   ? c == 0
             : !strcmp(op, "!=") ? c != 0
             : !strcmp(op, "<")  ? c < 0
             : !strcmp(op, "<=") ? c <= 0
             : !strcmp(op, ">")  ? c > 0
                                 : c >= 0;
    bc_num_free(&a);
    bc_num_free(&b);
    *out = bc_num_from_long(r);
    return FL_OK;
  }
  case E_BIN: {
    Num a, b;
    if ((fl = eval_both(bc, n, &a, &b)) != FL_OK) return fl;
    bool ok = arith(bc, n->op[0], &a, &b, out);
    bc_num_free(&a);
    bc_num_free(&b);
    return ok ? FL_OK : FL_ERROR;
  }
  case E_ASSIGN:
  case E_INC: {
    Num v;
    bool post = n->k == E_INC && (n->op[0] == 'P' || n->op[0] == 'Q');
    Num old;
    if (n->a->k == E_SPECIAL)
      get_special(bc, n->a->name, &old);
    else {
      Num *slot = lvalue_slot(bc, n->a, &fl);
      if (!slot) return fl;
      old = bc_num_copy(slot);
    }
    if (n->k == E_INC) {
      Num one = bc_num_from_long(1);
      v = bc_num_add(&old, &one, n->op[0] == 'q' || n->op[0] == 'Q');
      bc_num_free(&one);
    } else {
      Num rhs;
      if ((fl = eval(bc, n->b, &rhs)) != FL_OK) {
        bc_num_free(&old);
        return fl;
      }
      if (n->op[0] == '=') {
        v = rhs;
      } else {
        bool ok = arith(bc, n->op[0], &old, &rhs, &v);
        bc_num_free(&rhs);
        if (!ok) {
          bc_num_free(&old);
          return FL_ERROR;
        }
      }
    }
    if (n->a->k == E_SPECIAL) {
      set_special(bc, n->a->name, &v);
    } else {
      Num *slot = lvalue_slot(bc, n->a, &fl);
      if (!slot) {
        bc_num_free(&old);
        bc_num_free(&v);
        return fl;
      }
      bc_num_free(slot);
      *slot = bc_num_copy(&v);
    }
    if (post) {
      bc_num_free(&v);
      *out = old;
    } else {
      bc_num_free(&old);
      *out = v;
    }
    return FL_OK;
  }
  case E_CALL: return call(bc, n, out);
  case E_LENGTH:
  case E_SCALE:
  case E_SQRT: {
    Num a;
    if ((fl = eval(bc, n->a, &a)) != FL_OK) return fl;
    if (n->k == E_LENGTH)
      *out = bc_num_from_long(bc_num_length(&a));
    else if (n->k == E_SCALE)
      *out = bc_num_from_long(a.scale);
    else if (!num_sqrt(&a, (int)bc->scale, out)) {
      bc_num_free(&a);
      runtime_error(bc, "Square root of a negative number");
      return FL_ERROR;
    }
    bc_num_free(&a);
    return FL_OK;
  }
  default: return FL_ERROR;
  }
}

static Flow exec(Bc *bc, BcNode *n);

static void push_local(Bc *bc, const char *name, Num *val, GHashTable *arr)
{
  size_t l = strlen(name);
  if (l > 2 && name[l - 1] == ']') {
    g_autofree char *base = g_strndup(name, l - 2);
    g_ptr_array_add(arr_of(bc, base)->stack, arr ? arr : new_array());
    return;
  }
  Num v = val ? *val : bc_num_zero(0);
  g_array_append_val(var_of(bc, name)->stack, v);
}

static void pop_local(Bc *bc, const char *name)
{
  size_t l = strlen(name);
  if (l > 2 && name[l - 1] == ']') {
    g_autofree char *base = g_strndup(name, l - 2);
    Arr *a = arr_of(bc, base);
    g_ptr_array_remove_index(a->stack, a->stack->len - 1);
    return;
  }
  Var *v = var_of(bc, name);
  bc_num_free(&g_array_index(v->stack, Num, v->stack->len - 1));
  g_array_set_size(v->stack, v->stack->len - 1);
}

/* The first n arguments evaluated for a call that will not happen. */
static void drop_args(Num *vals, GHashTable **arrs, guint n)
{
  for (guint k = 0; k < n; k++)
    if (arrs[k])
      g_hash_table_unref(arrs[k]);
    else
      bc_num_free(&vals[k]);
  g_free(vals);
  g_free(arrs);
}

static Flow call(Bc *bc, BcNode *n, Num *out)
{
  Func *f = g_hash_table_lookup(bc->funcs, n->name);
  if (!f) {
    g_autofree char *m = g_strdup_printf("Function %s not defined.", n->name);
    runtime_error(bc, m);
    return FL_ERROR;
  }
  if (f->params->len != n->list->len) {
    runtime_error(bc, "Parameter number mismatch");
    return FL_ERROR;
  }
  guint np = f->params->len;
  Num *vals = g_new0(Num, np + 1);
  GHashTable **arrs = g_new0(GHashTable *, np + 1);
  for (guint i = 0; i < np; i++) {
    BcNode *a = g_ptr_array_index(n->list, i);
    const char *p = g_ptr_array_index(f->params, i);
    bool want_arr = p[strlen(p) - 1] == ']';
    if (want_arr != a->array_arg) {
      g_autofree char *m =
        g_strdup_printf("Parameter type mismatch parameter %.*s.", (int)strcspn(p, "["), p);
      runtime_error(bc, m);
      drop_args(vals, arrs, i);
      return FL_ERROR;
    }
    if (want_arr) {
      arrs[i] = array_copy(array_top(bc, a->name));
      continue;
    }
    Flow fl = eval(bc, a, &vals[i]);
    if (fl != FL_OK) {
      drop_args(vals, arrs, i);
      return fl;
    }
  }
  for (guint i = 0; i < np; i++) push_local(bc, g_ptr_array_index(f->params, i), &vals[i], arrs[i]);
  for (guint i = 0; i < f->autos->len; i++)
    push_local(bc, g_ptr_array_index(f->autos, i), NULL, NULL);
  g_free(vals);
  g_free(arrs);
  const char *saved = bc->cur_func;
  bc->cur_func = f->name;
  bc_num_free(&bc->ret);
  bc->ret = bc_num_zero(0);
  Flow fl = exec(bc, f->body);
  bc->cur_func = saved;
  for (guint i = 0; i < f->autos->len; i++) pop_local(bc, g_ptr_array_index(f->autos, i));
  for (guint i = 0; i < np; i++) pop_local(bc, g_ptr_array_index(f->params, i));
  if (fl == FL_ERROR || fl == FL_HALT) return fl;
  *out = bc->ret;
  bc->ret = bc_num_zero(0);
  return FL_OK;
}

/* print's and strings' escapes (GNU: \a \b \f \n \r \t \q \\; others kept). */
static void out_escaped(Bc *bc, const char *s)
{
  for (; *s; s++) {
    if (*s != '\\' || !s[1]) {
      out_ch(bc, *s);
      continue;
    }
    s++;
    const char *m = strchr("abfnrtq\\", *s);
    if (m)
      out_ch(bc, "\a\b\f\n\r\t\"\\"[m - "abfnrtq\\"]);
    else {
      out_ch(bc, '\\');
      out_ch(bc, *s);
    }
  }
}

static Flow exec(Bc *bc, BcNode *n)
{
  if (!n) return FL_OK;
  Flow fl = FL_OK;
  switch (n->k) {
  case S_NOP: return FL_OK;
  case S_STR: out_str(bc, n->name); return FL_OK;
  case S_EXPR: {
    Num v;
    if ((fl = eval(bc, n->a, &v)) != FL_OK) return fl;
    if (n->a->k == E_ASSIGN && !n->a->paren) {
      bc_num_free(&v);
      return FL_OK;
    }
    print_num(bc, &v);
    out_ch(bc, '\n');
    bc_num_free(&bc->last);
    bc->last = v;
    return FL_OK;
  }
  case S_PRINT:
    for (guint i = 0; i < n->list->len; i++) {
      BcNode *x = g_ptr_array_index(n->list, i);
      if (x->k == S_STR) {
        out_escaped(bc, x->name);
        continue;
      }
      Num v;
      if ((fl = eval(bc, x, &v)) != FL_OK) return fl;
      print_num(bc, &v);
      bc_num_free(&bc->last);
      bc->last = v;
    }
    return FL_OK;
  case S_BLOCK:
    for (guint i = 0; i < n->list->len; i++)
      if ((fl = exec(bc, g_ptr_array_index(n->list, i))) != FL_OK) return fl;
    return FL_OK;
  case S_IF:
  case S_WHILE:
    for (;;) {
      Num v;
      if ((fl = eval(bc, n->a, &v)) != FL_OK) return fl;
      bool t = !bc_num_is_zero(&v);
      bc_num_free(&v);
      if (n->k == S_IF) return exec(bc, t ? n->b : n->c);
      if (!t) return FL_OK;
      fl = exec(bc, n->b);
      if (fl == FL_BREAK) return FL_OK;
      if (fl != FL_OK && fl != FL_CONTINUE) return fl;
    }
  case S_FOR: {
    Num v;
    if (n->a) {
      if ((fl = eval(bc, n->a, &v)) != FL_OK) return fl;
      bc_num_free(&v);
    }
    for (;;) {
      if (n->b) {
        if ((fl = eval(bc, n->b, &v)) != FL_OK) return fl;
        bool t = !bc_num_is_zero(&v);
        bc_num_free(&v);
        if (!t) return FL_OK;
      }
      fl = exec(bc, n->d);
      if (fl == FL_BREAK) return FL_OK;
      if (fl != FL_OK && fl != FL_CONTINUE) return fl;
      if (n->c) {
        if ((fl = eval(bc, n->c, &v)) != FL_OK) return fl;
        bc_num_free(&v);
      }
    }
  }
  case S_BREAK: return FL_BREAK;
  case S_CONTINUE: return FL_CONTINUE;
  case S_HALT: return FL_HALT;
  case S_RETURN: {
    Num v = bc_num_zero(0);
    if (n->a && (fl = eval(bc, n->a, &v)) != FL_OK) return fl;
    bc_num_free(&bc->ret);
    bc->ret = v;
    return FL_RETURN;
  }
  default: return FL_ERROR;
  }
}

/* ---- the driver ------------------------------------------------------------------ */

/* Runs one source; false after halt or quit. */
static bool run_source(Bc *bc, const char *src, const char *text, size_t len)
{
  bc->t = bc_lex(text, len, &bc->nt);
  bc->pos = 0;
  bc->src = src;
  bool go_on = true;
  while (go_on && bc_peek(bc)->k != T_EOF) {
    if (bc_peek(bc)->k == T_NL || bc_is_op(bc, ";")) {
      bc->pos++;
      continue;
    }
    bc->syntax_error = bc->reported = false;
    GPtrArray *line = g_ptr_array_new();
    if (bc_is_op(bc, "define")) {
      bc_parse_define(bc);
    } else {
      for (;;) {
        g_ptr_array_add(line, bc_parse_stmt(bc));
        if (bc->syntax_error || bc->quit) break;
        if (bc_accept(bc, ";")) {
          if (bc_peek(bc)->k == T_NL || bc_is_op(bc, "define")) break;
          continue;
        }
        /* a line needs its newline */
        if (bc_peek(bc)->k != T_NL) bc_fail(bc);
        break;
      }
    }
    if (bc->quit) {
      g_ptr_array_free(line, TRUE);
      return false;
    }
    if (bc->syntax_error) {
      bc->pos = bc->err_pos;
      Tok *t = bc_peek(bc);
      if (!bc->reported) {
        box_out_flush(bc->c->out);
        box_fdprintf(bc->c->err, "%s %d: syntax error\n", src, t->line);
      }
      /* drop the rest of the line (the newline that was the error ends it) */
      if (t->k == T_NL)
        bc->pos++;
      else {
        while (bc_peek(bc)->k != T_NL && bc_peek(bc)->k != T_EOF) bc->pos++;
        if (bc_peek(bc)->k == T_NL) bc->pos++;
      }
      g_ptr_array_free(line, TRUE);
      continue;
    }
    for (guint i = 0; i < line->len; i++) {
      Flow fl = exec(bc, g_ptr_array_index(line, i));
      if (fl == FL_HALT) {
        go_on = false;
        break;
      }
      if (fl == FL_ERROR) break;
    }
    g_ptr_array_free(line, TRUE);
  }
  /* the nodes (and the functions) keep the tokens' texts */
  for (int i = 0; i < bc->nt; i++)
    if (bc->t[i].s) g_ptr_array_add(bc->texts, bc->t[i].s);
  g_free(bc->t);
  bc->t = NULL;
  return go_on;
}

static void var_free(gpointer p)
{
  Var *v = p;
  for (guint i = 0; i < v->stack->len; i++) bc_num_free(&g_array_index(v->stack, Num, i));
  g_array_free(v->stack, TRUE);
  g_free(v);
}

static void arr_free(gpointer p)
{
  Arr *a = p;
  g_ptr_array_free(a->stack, TRUE);
  g_free(a);
}

static void func_free(gpointer p)
{
  Func *f = p;
  g_ptr_array_free(f->params, TRUE);
  g_ptr_array_free(f->autos, TRUE);
  g_free(f);
}

static void node_free(gpointer p)
{
  BcNode *n = p;
  if (n->list) g_ptr_array_free(n->list, TRUE);
  g_free(n);
}

/* The math library of -l, written in bc: each function works at more
 * digits than asked and cuts its answer to the caller's scale. */
static const char mathlib[] =
  "scale=20\n"
  "define e(x) {\n"
  "  auto s, r, t, n, i, m\n"
  "  s = scale; m = 0\n"
  "  if (x < 0) { m = 1; x = -x }\n"
  "  scale = s + length(x / 1) + 8\n"
  "  n = 0; while (x > 1) { x = x / 2; n = n + 1 }\n"
  "  r = 1; t = 1; i = 1\n"
  "  while (1) { t = t * x / i; if (t == 0) break; r = r + t; i = i + 1 }\n"
  "  while (n > 0) { r = r * r; n = n - 1 }\n"
  "  if (m) { scale = s; return (1 / r) }\n"
  "  scale = s; return (r / 1)\n"
  "}\n"
  "define l(x) {\n"
  "  auto s, r, t, n, i, y, z\n"
  "  if (x <= 0) return ((1 - 10 ^ scale) / 1)\n"
  "  s = scale; scale = s + 8\n"
  "  n = 0; while (x >= 2) { x = sqrt(x); n = n + 1 }\n"
  "  while (x <= .5) { x = sqrt(x); n = n + 1 }\n"
  "  y = (x - 1) / (x + 1); z = y * y\n"
  "  r = y; t = y; i = 3\n"
  "  while (1) { t = t * z; if (t / i == 0) break; r = r + t / i; i = i + 2 }\n"
  "  r = r * 2 * 2 ^ n\n"
  "  scale = s; return (r / 1)\n"
  "}\n"
  "define s(x) {\n"
  "  auto s, r, t, i, p, m, q\n"
  "  s = scale; scale = s + 8\n"
  "  m = 0; if (x < 0) { m = 1; x = -x }\n"
  "  scale = s + 8 + length(x / 1)\n"
  "  p = 4 * a(1)\n"
  "  q = (x / p + 1) / 2; scale = 0; q = q / 1; scale = s + 8 + length(x / 1)\n"
  "  x = x - 2 * q * p\n"
  "  if (q % 2) m = 1 - m\n"
  "  r = x; t = x; i = 1\n"
  "  while (1) { t = -t * x * x / ((i + 1) * (i + 2)); if (t == 0) break; r = r + t; i = i + 2 }\n"
  "  scale = s; if (m) return (-r / 1)\n"
  "  return (r / 1)\n"
  "}\n"
  "define c(x) {\n"
  "  auto s, r\n"
  "  s = scale; scale = s + 8\n"
  "  r = s(x + 2 * a(1))\n"
  "  scale = s; return (r / 1)\n"
  "}\n"
  "define a(x) {\n"
  "  auto s, r, t, i, m, n, z\n"
  "  s = scale; scale = s + 8\n"
  "  m = 0; if (x < 0) { m = 1; x = -x }\n"
  "  n = 0; while (x > .2) { x = x / (1 + sqrt(1 + x * x)); n = n + 1 }\n"
  "  z = x * x; r = x; t = x; i = 3\n"
  "  while (1) { t = -t * z; if (t / i == 0) break; r = r + t / i; i = i + 2 }\n"
  "  r = r * 2 ^ n\n"
  "  scale = s; if (m) return (-r / 1)\n"
  "  return (r / 1)\n"
  "}\n"
  "define j(n, x) {\n"
  "  auto s, r, t, i, m, f\n"
  "  s = scale; scale = 0; n = n / 1\n"
  "  m = 0; if (n < 0) { n = -n; if (n % 2) m = 1 }\n"
  "  scale = s + 8\n"
  "  f = 1; for (i = 2; i <= n; i++) f = f * i\n"
  "  t = (x / 2) ^ n / f; r = t; i = 1\n"
  "  while (1) { t = -t * x * x / (4 * i * (n + i)); if (t == 0) break; r = r + t; i = i + 1 }\n"
  "  scale = s; if (m) return (-r / 1)\n"
  "  return (r / 1)\n"
  "}\n";

int box_cmd_bc(BoxCmd *c)
{
  bool mathl = false;
  int optind = 1;
  for (const char *w; (w = bx_option_word(c, &optind, "-"));) {
    optind++;
    static const char *const longs[] = { "--mathlib", "--quiet", "--standard", "--warn", NULL };
    bool known = false;
    for (int i = 0; longs[i]; i++)
      if (!strcmp(w, longs[i])) {
        mathl |= i == 0;
        known = true;
      }
    for (const char *p = w + 1; !known && *p && strchr("lqsw", *p); p++) {
      mathl |= *p == 'l';
      known = !p[1];
    }
    if (!known) {
      box_out_flush(c->out);
      if (w[1] == '-')
        box_fdprintf(c->err, "bc: unrecognized option '%s'\n", w);
      else
        box_fdprintf(c->err, "bc: invalid option -- '%c'\n", w[strspn(w + 1, "lqsw") + 1]);
      box_out_puts(c->out, "usage: bc [options] [file ...]\n"
                           "  -h  --help         print this usage and exit\n"
                           "  -i  --interactive  force interactive mode\n"
                           "  -l  --mathlib      use the predefined math routines\n"
                           "  -q  --quiet        don't print initial banner\n"
                           "  -s  --standard     non-standard bc constructs are errors\n"
                           "  -w  --warn         warn about non-standard bc constructs\n"
                           "  -v  --version      print version information and exit\n");
      return 1;
    }
  }
  Bc bc = { .c = c, .scale = 0, .ibase = 10, .obase = 10, .cur_func = "(main)" };
  bc.vars = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, var_free);
  bc.arrs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, arr_free);
  bc.funcs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, func_free);
  bc.all_nodes = g_ptr_array_new_with_free_func(node_free);
  bc.last = bc_num_zero(0);
  bc.ret = bc_num_zero(0);
  bc.texts = g_ptr_array_new_with_free_func(g_free);
  int status = 0;
  bool go_on = true;
  if (mathl) { go_on = run_source(&bc, "(library)", mathlib, sizeof mathlib - 1); }
  for (int i = optind; go_on && i <= c->argc; i++) {
    const char *name = i < c->argc ? c->argv[i] : "-";
    GString *s = g_string_new(NULL);
    int fd = bx_open_in(c, name);
    if (fd < 0) {
      box_out_flush(c->out);
      box_fdprintf(c->err, "File %s is unavailable.\n", name);
      g_string_free(s, TRUE);
      status = 1;
      go_on = false;
      break;
    }
    bx_read_all(fd, s);
    bx_close_in(c, fd);
    go_on = run_source(&bc, i < c->argc ? name : "(standard_in)", s->str, s->len);
    g_string_free(s, TRUE);
  }
  box_out_flush(c->out);
  g_ptr_array_free(bc.all_nodes, TRUE);
  g_hash_table_destroy(bc.funcs);
  g_hash_table_destroy(bc.vars);
  g_hash_table_destroy(bc.arrs);
  bc_num_free(&bc.last);
  bc_num_free(&bc.ret);
  g_ptr_array_free(bc.texts, TRUE);
  return status;
}
