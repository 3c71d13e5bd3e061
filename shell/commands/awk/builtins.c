/* builtins.c — awk's builtin functions, its regular expressions (glibc's
 * POSIX ERE, compiled once per text) and printf's conversions. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shell/commands/awk/awk.h"

static void free_re(gpointer p)
{
  regfree(p);
  g_free(p);
}

static regex_t *compile(Awk *A, const char *ere, int flags)
{
  if (box_pattern_too_deep(ere)) awk_fatal(A, "regular expression nested too deeply: /%s/", ere);
  regex_t *re = g_new0(regex_t, 1);
  int rc = regcomp(re, ere, REG_EXTENDED | flags);
  if (rc) {
    char msg[256];
    regerror(rc, re, msg, sizeof msg);
    g_free(re);
    awk_fatal(A, "invalid regexp: %s: /%s/", msg, ere);
  }
  return re;
}

regex_t *awk_regex_compile(Awk *A, const char *ere)
{
  return compile(A, ere, 0);
}

void awk_regex_free(gpointer re)
{
  free_re(re);
}

regex_t *awk_regex(Awk *A, const char *ere)
{
  bool icase = awk_ignorecase(A);
  GHashTable **cache = icase ? &A->regex_icase_cache : &A->regex_cache;
  if (!*cache) *cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_re);
  regex_t *re = g_hash_table_lookup(*cache, ere);
  if (re) return re;
  /* dynamic regular expressions built from data are many: keep a bounded set */
  if (g_hash_table_size(*cache) >= 1000) g_hash_table_remove_all(*cache);
  re = compile(A, ere, icase ? REG_ICASE : 0);
  g_hash_table_insert(*cache, g_strdup(ere), re);
  return re;
}

regex_t *awk_regex_of(Awk *A, ANode *n)
{
  /* a literal's regex is compiled with the program, minding case */
  if (n->op == AN_ERE) return awk_ignorecase(A) ? awk_regex(A, n->str) : n->re;
  Val v = awk_eval(A, n);
  char *s = awk_to_str(A, &v);
  awk_val_free(&v);
  regex_t *re = awk_regex(A, s);
  g_free(s);
  return re;
}

bool awk_match(regex_t *re, const char *s, size_t len, size_t from, bool notbol, regmatch_t *m,
               int nm)
{
  regmatch_t local[10];
  if (!m || nm < 1) {
    m = local;
    nm = 1;
  }
  m[0].rm_so = (regoff_t)from;
  m[0].rm_eo = (regoff_t)len;
  int fl = REG_STARTEND | (notbol ? REG_NOTBOL : 0);
  if (regexec(re, s, (size_t)nm, m, fl) != 0) return false;
  return true;
}

/* ---- splitting --------------------------------------------------------------- */

/* seps, when not NULL, gets gawk's split() separators: index k is what
 * followed piece k (0: blanks before the first), NULL where none was. */
static void add_sep(GPtrArray *seps, guint at, const char *p, size_t n)
{
  if (!seps) return;
  if (seps->len <= at) g_ptr_array_set_size(seps, (gint)at + 1);
  seps->pdata[at] = g_strndup(p, n);
}

GPtrArray *awk_split_fs(Awk *A, const char *s, const char *fs, bool paragraph, GPtrArray *seps)
{
  GPtrArray *out = g_ptr_array_new();
  size_t len = strlen(s);
  if (strcmp(fs, " ") == 0) {
    size_t i = 0;
    for (;;) {
      size_t blank = i;
      while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) i++;
      if (i > blank) add_sep(seps, out->len, s + blank, i - blank);
      if (i >= len) break;
      size_t st = i;
      while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\n') i++;
      g_ptr_array_add(out, g_strndup(s + st, i - st));
    }
    return out;
  }
  if (len == 0) return out;
  if (fs[0] == 0) {
    for (size_t i = 0; i < len; i++) {
      if (i) add_sep(seps, out->len, "", 0);
      g_ptr_array_add(out, g_strndup(s + i, 1));
    }
    return out;
  }
  if (strlen(fs) == 1 && fs[0] != '\\' && !paragraph) {
    const char *p = s;
    for (;;) {
      const char *e = strchr(p, fs[0]);
      if (!e) {
        g_ptr_array_add(out, g_strdup(p));
        break;
      }
      g_ptr_array_add(out, g_strndup(p, (gsize)(e - p)));
      add_sep(seps, out->len, e, 1);
      p = e + 1;
    }
    return out;
  }
  char *pat;
  /* paragraph mode: the newline separates too; ] must lead a bracket */
  if (strlen(fs) == 1 && fs[0] != '\\')
    pat = fs[0] == ']' ? g_strdup("[]\n]") : g_strdup_printf("[\n%c]", fs[0]);
  else if (strcmp(fs, "\\") == 0)
    pat = g_strdup("[\\]");
  else
    pat = paragraph ? g_strdup_printf("(%s)|\n", fs) : g_strdup(fs);
  regex_t *re = awk_regex(A, pat);
  g_free(pat);
  size_t pos = 0, start = 0;
  regmatch_t m;
  while (pos <= len && awk_match(re, s, len, pos, pos > 0, &m, 1)) {
    if (m.rm_eo == m.rm_so) {
      /* an empty match separates nothing */
      pos = (size_t)m.rm_eo + 1;
      if (pos > len) break;
      continue;
    }
    g_ptr_array_add(out, g_strndup(s + start, (gsize)m.rm_so - start));
    add_sep(seps, out->len, s + m.rm_so, (size_t)(m.rm_eo - m.rm_so));
    start = pos = (size_t)m.rm_eo;
  }
  g_ptr_array_add(out, g_strdup(s + start));
  return out;
}

/* ---- printf ------------------------------------------------------------------ */

static Val arg_val(Awk *A, ANode **args, int nargs, int *ai)
{
  if (*ai >= nargs) awk_fatal(A, "not enough arguments to satisfy format string");
  return awk_eval(A, args[(*ai)++]);
}

char *awk_sprintf(Awk *A, ANode **args, int nargs, size_t *len)
{
  Val fv = awk_eval(A, args[0]);
  char *fmt = awk_to_str(A, &fv);
  awk_val_free(&fv);
  int ai = 1;
  GString *o = g_string_new(NULL);
  for (const char *p = fmt; *p;) {
    if (*p != '%') {
      g_string_append_c(o, *p++);
      continue;
    }
    const char *st = p++;
    if (*p == '%') {
      g_string_append_c(o, '%');
      p++;
      continue;
    }
    GString *spec = g_string_new("%");
    while (*p && strchr("-+ #0'", *p)) {
      if (*p != '\'') g_string_append_c(spec, *p);
      p++;
    }
    for (int part = 0; part < 2; part++) {
      if (part == 1) {
        if (*p != '.') break;
        g_string_append_c(spec, *p++);
      }
      if (*p == '*') {
        Val v = arg_val(A, args, nargs, &ai);
        g_string_append_printf(spec, "%d", (int)awk_to_num(A, &v));
        awk_val_free(&v);
        p++;
      } else {
        while (isdigit((unsigned char)*p)) g_string_append_c(spec, *p++);
      }
    }
    while (*p == 'h' || *p == 'l' || *p == 'L' || *p == 'q' || *p == 'j' || *p == 'z' || *p == 't')
      p++;
    char conv = *p;
    if (!conv) {
      g_string_append(o, st);
      g_string_free(spec, TRUE);
      break;
    }
    p++;
    Val v;
    switch (conv) {
    case 'd':
    case 'i': {
      v = arg_val(A, args, nargs, &ai);
      double d = awk_to_num(A, &v);
      awk_val_free(&v);
      if (isnan(d) || isinf(d)) {
        g_string_truncate(spec, 0);
        g_string_append(spec, "%f");
        g_string_append_printf(o, spec->str, d);
      } else if (fabs(d) < 9.2e18) {
        g_string_append(spec, "lld");
        g_string_append_printf(o, spec->str, (long long)d);
      } else {
        char *dot = strchr(spec->str, '.');
        if (dot) g_string_truncate(spec, (gsize)(dot - spec->str));
        g_string_append(spec, ".0f");
        g_string_append_printf(o, spec->str, trunc(d));
      }
      break;
    }
    case 'o':
    case 'x':
    case 'X':
    case 'u': {
      v = arg_val(A, args, nargs, &ai);
      double d = awk_to_num(A, &v);
      awk_val_free(&v);
      g_string_append(spec, "ll");
      g_string_append_c(spec, conv);
      unsigned long long u = d < 0 ? (unsigned long long)(long long)d : (unsigned long long)d;
      g_string_append_printf(o, spec->str, u);
      break;
    }
    case 'c': {
      v = arg_val(A, args, nargs, &ai);
      char buf[2] = { 0, 0 };
      if (v.t == T_NUM) {
        buf[0] = (char)(int)v.n;
      } else {
        char *s = awk_to_str(A, &v);
        buf[0] = s[0];
        g_free(s);
      }
      awk_val_free(&v);
      char *dot = strchr(spec->str, '.');
      if (dot) g_string_truncate(spec, (gsize)(dot - spec->str));
      g_string_append_c(spec, 'c');
      if (buf[0] == 0) {
        /* %c of 0 writes a NUL byte */
        char *t = g_strdup_printf(spec->str, 1);
        char *one = strchr(t, 1);
        if (one) *one = 0;
        g_string_append_len(o, t, (gssize)strlen(t) + (one ? 1 + (gssize)strlen(one + 1) : 0));
        g_free(t);
      } else {
        g_string_append_printf(o, spec->str, buf[0]);
      }
      break;
    }
    case 's': {
      v = arg_val(A, args, nargs, &ai);
      char *s = awk_to_str(A, &v);
      awk_val_free(&v);
      g_string_append_c(spec, 's');
      g_string_append_printf(o, spec->str, s);
      g_free(s);
      break;
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
    case 'a':
    case 'A': {
      v = arg_val(A, args, nargs, &ai);
      double d = awk_to_num(A, &v);
      awk_val_free(&v);
      g_string_append_c(spec, conv);
      g_string_append_printf(o, spec->str, d);
      break;
    }
    case '%':
      /* gawk drops a width or flags given to %% */
      g_string_append_c(o, '%');
      break;
    default:
      /* not a conversion: copied as it stands */
      g_string_append_len(o, st, p - st);
    }
    g_string_free(spec, TRUE);
  }
  g_free(fmt);
  /* %c of 0 puts a NUL byte in: printf writes it, sprintf's string ends there */
  if (len) *len = o->len;
  return g_string_free(o, FALSE);
}

/* ---- sub, gsub, gensub ------------------------------------------------------------ */

/* The replacement text for one match, by gawk's rules.  sub/gsub: a run
 * of backslashes before & gives half of them, and the & is literal when
 * the run was odd; other backslashes stand.  gensub: \\ is \, \& is &,
 * \0-\9 the groups, and a backslash before anything else goes. */
static void replace_one(GString *o, const char *repl, const char *s, regmatch_t *m, bool gensub)
{
  if (!gensub) {
    for (const char *r = repl; *r; r++) {
      if (*r == '\\') {
        size_t k = strspn(r, "\\");
        if (r[k] == '&') {
          for (size_t i = 0; i < k / 2; i++) g_string_append_c(o, '\\');
          if (k % 2)
            g_string_append_c(o, '&');
          else
            g_string_append_len(o, s + m[0].rm_so, m[0].rm_eo - m[0].rm_so);
          r += k;
        } else {
          g_string_append_len(o, r, (gssize)k);
          r += k - 1;
        }
      } else if (*r == '&') {
        g_string_append_len(o, s + m[0].rm_so, m[0].rm_eo - m[0].rm_so);
      } else {
        g_string_append_c(o, *r);
      }
    }
    return;
  }
  for (const char *r = repl; *r; r++) {
    if (*r == '\\' && r[1]) {
      if (r[1] == '&') {
        g_string_append_c(o, '&');
        r++;
      } else if (r[1] == '\\') {
        g_string_append_c(o, '\\');
        r++;
      } else if (gensub && isdigit((unsigned char)r[1])) {
        int k = r[1] - '0';
        if (m[k].rm_so >= 0) g_string_append_len(o, s + m[k].rm_so, m[k].rm_eo - m[k].rm_so);
        r++;
      } else {
        g_string_append_c(o, *++r);
      }
    } else if (*r == '&') {
      g_string_append_len(o, s + m[0].rm_so, m[0].rm_eo - m[0].rm_so);
    } else {
      g_string_append_c(o, *r);
    }
  }
}

/* Replaces matches of re in s: all when which is 0, else the which'th. */
static char *substitute(regex_t *re, const char *s, const char *repl, int which, bool gensub,
                        int *count)
{
  size_t len = strlen(s), pos = 0;
  GString *o = g_string_new(NULL);
  regmatch_t m[10];
  int n = 0;
  bool last_empty_at = false;
  size_t last_end = (size_t)-1;
  *count = 0;
  while (pos <= len) {
    if (!awk_match(re, s, len, pos, pos > 0, m, 10)) break;
    size_t so = (size_t)m[0].rm_so, eo = (size_t)m[0].rm_eo;
    if (so == eo && so == last_end && last_empty_at) {
      /* an empty match right after a match is not one */
      if (so < len) g_string_append_c(o, s[so]);
      pos = so + 1;
      last_empty_at = false;
      continue;
    }
    n++;
    g_string_append_len(o, s + pos, (gssize)(so - pos));
    if (which == 0 || n == which) {
      replace_one(o, repl, s, m, gensub);
      (*count)++;
    } else {
      g_string_append_len(o, s + so, (gssize)(eo - so));
    }
    if (so == eo) {
      if (so < len) g_string_append_c(o, s[so]);
      pos = so + 1;
    } else {
      pos = eo;
    }
    last_end = eo;
    last_empty_at = true;
    if (which != 0 && n >= which) break;
  }
  if (pos <= len) g_string_append(o, s + pos);
  return g_string_free(o, FALSE);
}

static char *str_arg(Awk *A, ANode *n)
{
  Val v = awk_eval(A, n);
  char *s = awk_to_str(A, &v);
  awk_val_free(&v);
  return s;
}

static double num_arg(Awk *A, ANode *n)
{
  Val v = awk_eval(A, n);
  double d = awk_to_num(A, &v);
  awk_val_free(&v);
  return d;
}

static Val do_sub(Awk *A, ANode *n, bool global)
{
  regex_t *re = awk_regex_of(A, n->args[0]);
  char *repl = str_arg(A, n->args[1]);
  ANode *target = n->nargs == 3 ? n->args[2] : NULL;
  ANode dollar0 = { 0 };
  ANode zero = { 0 };
  if (!target) {
    zero.op = AN_NUM;
    dollar0.op = AN_FIELD;
    dollar0.a = &zero;
    target = &dollar0;
  }
  char *s = str_arg(A, target);
  int count;
  char *r = substitute(re, s, repl, global ? 0 : 1, false, &count);
  if (count > 0 && (target->op == AN_VAR || target->op == AN_LOCAL || target->op == AN_FIELD ||
                    target->op == AN_INDEX))
    awk_assign(A, target, awk_str(r));
  else
    g_free(r);
  g_free(s);
  g_free(repl);
  return awk_num(count);
}

static Val do_split(Awk *A, ANode *n)
{
  char *s = str_arg(A, n->args[0]);
  AVar *arr = awk_array_of(A, n->args[1]);
  GPtrArray *parts, *seps = n->nargs == 4 ? g_ptr_array_new_with_free_func(g_free) : NULL;
  if (n->nargs >= 3 && n->args[2]->op == AN_ERE) {
    /* a regular expression literal is a regular expression even if it is " " */
    char *fs = n->args[2]->str;
    if (strlen(fs) == 1 && fs[0] != ' ') {
      char *pat = g_strdup_printf("[%c]", fs[0]);
      parts = awk_split_fs(A, s, pat, false, seps);
      g_free(pat);
    } else {
      parts = awk_split_fs(A, s, fs, false, seps);
    }
  } else {
    char *fs = n->nargs >= 3 ? str_arg(A, n->args[2]) : g_strdup(awk_var_cstr(A, AV_FS));
    parts = awk_split_fs(A, s, fs, false, seps);
    g_free(fs);
  }
  awk_array_clear(arr);
  for (guint i = 0; i < parts->len; i++) {
    char key[32];
    g_snprintf(key, sizeof key, "%u", i + 1);
    Val *e = awk_array_ref(A, arr, key, true);
    *e = awk_maybe(parts->pdata[i]);
  }
  if (seps) {
    AVar *sarr = awk_array_of(A, n->args[3]);
    awk_array_clear(sarr);
    for (guint i = 0; i < seps->len; i++) {
      if (!seps->pdata[i]) continue;
      char key[32];
      g_snprintf(key, sizeof key, "%u", i);
      *awk_array_ref(A, sarr, key, true) = awk_str(g_strdup(seps->pdata[i]));
    }
    g_ptr_array_free(seps, TRUE);
  }
  int cnt = (int)parts->len;
  g_free(g_ptr_array_free(parts, FALSE));
  g_free(s);
  return awk_num(cnt);
}

typedef struct {
  const char *key;
  Val *v;
} SortItem;

/* gawk's default order for asort: numbers (numeric strings among them)
 * before strings, numbers by value, strings by their bytes; ties by index */
static int by_value(const void *pa, const void *pb)
{
  const SortItem *a = pa, *b = pb;
  bool an = a->v->t == T_NUM || a->v->t == T_STRNUM || a->v->t == T_UNINIT;
  bool bn = b->v->t == T_NUM || b->v->t == T_STRNUM || b->v->t == T_UNINIT;
  int r = an != bn ? (an ? -1 : 1)
          : an     ? (a->v->n > b->v->n) - (a->v->n < b->v->n)
                   : strcmp(a->v->s, b->v->s);
  return r ? r : strcmp(a->key, b->key);
}

static int by_key(const void *pa, const void *pb)
{
  return strcmp(((const SortItem *)pa)->key, ((const SortItem *)pb)->key);
}

/* An element as PROCINFO["sorted_in"] orders it: its index and value,
 * each as a number and as a string, made once. */
typedef struct {
  const char *key;
  Val *v;
  double kn, vn;
  char *vs;
} OrderItem;

enum { O_IND_STR, O_IND_NUM, O_VAL_STR, O_VAL_NUM, O_VAL_TYPE };

/* gawk's orders for for-in; a tie falls to the next finer key, the
 * index's bytes last */
static int by_order(const void *pa, const void *pb, void *kind)
{
  const OrderItem *a = pa, *b = pb;
  int r = 0;
  switch (*(const int *)kind) {
  case O_VAL_TYPE: return by_value(&(SortItem){ a->key, a->v }, &(SortItem){ b->key, b->v });
  case O_VAL_NUM: r = (a->vn > b->vn) - (a->vn < b->vn); G_GNUC_FALLTHROUGH;
  case O_VAL_STR: r = r ? r : strcmp(a->vs, b->vs); break;
  case O_IND_NUM: r = (a->kn > b->kn) - (a->kn < b->kn); break;
  default: break;
  }
  return r ? r : strcmp(a->key, b->key);
}

void awk_order_keys(Awk *A, AVar *arr, GPtrArray *keys, const char *how)
{
  static const char *const orders[] = {
    [O_IND_STR] = "ind_str", [O_IND_NUM] = "ind_num",   [O_VAL_STR] = "val_str",
    [O_VAL_NUM] = "val_num", [O_VAL_TYPE] = "val_type",
  };
  int kind = -1;
  bool desc = false;
  for (size_t i = 0; i < G_N_ELEMENTS(orders) && how[0] == '@'; i++) {
    size_t n = strlen(orders[i]);
    if (strncmp(how + 1, orders[i], n) == 0 &&
        (strcmp(how + 1 + n, "_asc") == 0 || strcmp(how + 1 + n, "_desc") == 0)) {
      kind = (int)i;
      desc = how[n + 2] == 'd';
    }
  }
  if (kind < 0) return;
  OrderItem *items = g_new0(OrderItem, keys->len + 1);
  for (guint i = 0; i < keys->len; i++) {
    OrderItem *it = &items[i];
    it->key = keys->pdata[i];
    it->v = g_hash_table_lookup(arr->arr, it->key);
    awk_resolve(it->v);
    Val k = { T_STR, 0, (char *)it->key };
    it->kn = awk_to_num(A, &k);
    it->vn = awk_to_num(A, it->v);
    it->vs = awk_to_str(A, it->v);
  }
  qsort_r(items, keys->len, sizeof *items, by_order, &kind);
  gpointer *sorted = g_new(gpointer, keys->len + 1);
  for (guint i = 0; i < keys->len; i++) {
    sorted[desc ? keys->len - 1 - i : i] = (gpointer)items[i].key;
    g_free(items[i].vs);
  }
  memcpy(keys->pdata, sorted, keys->len * sizeof *sorted);
  g_free(sorted);
  g_free(items);
}

/* asort(src [, dest]) and asorti(src [, dest]): the values (asorti: the
 * indices) sorted into dest[1..n], src itself when there is no dest */
static Val do_asort(Awk *A, ANode *n, bool indices)
{
  AVar *src = awk_array_of(A, n->args[0]);
  AVar *dest = n->nargs == 2 ? awk_array_of(A, n->args[1]) : src;
  guint len = src->arr ? g_hash_table_size(src->arr) : 0;
  SortItem *items = g_new(SortItem, len + 1);
  GHashTableIter it;
  gpointer k, v;
  guint i = 0;
  if (src->arr) {
    g_hash_table_iter_init(&it, src->arr);
    while (g_hash_table_iter_next(&it, &k, &v)) {
      awk_resolve(v);
      items[i++] = (SortItem){ k, v };
    }
  }
  qsort(items, len, sizeof *items, indices ? by_key : by_value);
  /* the sorted copies are made before dest (perhaps src) is emptied */
  Val *sorted = g_new(Val, len + 1);
  for (i = 0; i < len; i++)
    sorted[i] = indices ? awk_str(g_strdup(items[i].key)) : awk_val_copy(items[i].v);
  g_free(items);
  awk_array_clear(dest);
  for (i = 0; i < len; i++) {
    char key[32];
    g_snprintf(key, sizeof key, "%u", i + 1);
    *awk_array_ref(A, dest, key, true) = sorted[i];
  }
  g_free(sorted);
  return awk_num(len);
}

/* gawk's strftime([format [, timestamp [, utc]]]): "" for a time the
 * host cannot break down. */
static Val do_strftime(Awk *A, ANode *n)
{
  char *fmt = n->nargs > 0 ? str_arg(A, n->args[0]) : g_strdup("%a %b %e %H:%M:%S %Z %Y");
  double when = n->nargs > 1 ? num_arg(A, n->args[1]) : (double)time(NULL);
  bool utc = n->nargs > 2 && awk_eval_cond(A, n->args[2]);
  struct tm tm;
  time_t t = (time_t)when;
  GString *o = g_string_new(NULL);
  if (fmt[0] && when > -9.2e18 && when < 9.2e18 &&
      (utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm))) {
    /* a format may rightly make nothing (%p in some locales): grow a few times, then stop */
    for (size_t cap = 256; cap <= 256 << 8; cap *= 4) {
      g_string_set_size(o, cap);
      size_t k = strftime(o->str, cap, fmt, &tm);
      if (k > 0) {
        g_string_set_size(o, k);
        break;
      }
      g_string_truncate(o, 0);
    }
  }
  g_free(fmt);
  return awk_str(g_string_free(o, FALSE));
}

/* gawk's mktime("YYYY MM DD HH MM SS [DST]" [, utc]): -1 for fewer than
 * six numbers; out-of-range parts carry over as mktime(3) does. */
static Val do_mktime(Awk *A, ANode *n)
{
  char *s = str_arg(A, n->args[0]);
  bool utc = n->nargs > 1 && awk_eval_cond(A, n->args[1]);
  long year;
  int mon, day, hour, min, sec, dst = -1;
  int k = sscanf(s, "%ld %d %d %d %d %d %d", &year, &mon, &day, &hour, &min, &sec, &dst);
  g_free(s);
  if (k < 6) return awk_num(-1);
  struct tm tm = { .tm_year = (int)(year - 1900),
                   .tm_mon = mon - 1,
                   .tm_mday = day,
                   .tm_hour = hour,
                   .tm_min = min,
                   .tm_sec = sec,
                   .tm_isdst = utc ? 0 : dst };
  return awk_num((double)(utc ? timegm(&tm) : mktime(&tm)));
}

static Val do_match(Awk *A, ANode *n)
{
  char *s = str_arg(A, n->args[0]);
  regex_t *re = awk_regex_of(A, n->args[1]);
  regmatch_t m[10];
  bool ok = awk_match(re, s, strlen(s), 0, false, m, 10);
  double start = ok ? m[0].rm_so + 1 : 0, len = ok ? m[0].rm_eo - m[0].rm_so : -1;
  awk_set_var_num(A, AV_RSTART, start);
  awk_set_var_num(A, AV_RLENGTH, len);
  if (n->nargs == 3) {
    AVar *arr = awk_array_of(A, n->args[2]);
    awk_array_clear(arr);
    for (int k = 0; ok && k < 10 && k <= (int)re->re_nsub; k++) {
      if (m[k].rm_so < 0) continue;
      char key[48];
      g_snprintf(key, sizeof key, "%d", k);
      *awk_array_ref(A, arr, key, true) =
        awk_strnum(g_strndup(s + m[k].rm_so, (gsize)(m[k].rm_eo - m[k].rm_so)));
      const char *sep = awk_var_cstr(A, AV_SUBSEP);
      char *ks = g_strdup_printf("%d%sstart", k, sep), *kl = g_strdup_printf("%d%slength", k, sep);
      *awk_array_ref(A, arr, ks, true) = awk_num(m[k].rm_so + 1);
      *awk_array_ref(A, arr, kl, true) = awk_num(m[k].rm_eo - m[k].rm_so);
      g_free(ks);
      g_free(kl);
    }
  }
  g_free(s);
  return awk_num(start);
}

static Val do_substr(Awk *A, ANode *n)
{
  char *s = str_arg(A, n->args[0]);
  double len = (double)strlen(s);
  double m = num_arg(A, n->args[1]);
  double cnt = n->nargs == 3 ? num_arg(A, n->args[2]) : INFINITY;
  /* gawk truncates the start and the length, and a start below 1 is 1
     with the length kept */
  double st = trunc(m);
  if (st < 1 || isnan(st)) st = 1;
  double en = isinf(cnt) ? INFINITY : st + trunc(cnt);
  if (isnan(cnt)) en = st;
  if (en > len + 1) en = len + 1;
  char *r = en > st ? g_strndup(s + (size_t)st - 1, (gsize)(en - st)) : g_strdup("");
  g_free(s);
  return awk_str(r);
}

static Val do_gensub(Awk *A, ANode *n)
{
  regex_t *re = awk_regex_of(A, n->args[0]);
  char *repl = str_arg(A, n->args[1]);
  Val how = awk_eval(A, n->args[2]);
  int which = 1;
  awk_resolve(&how);
  if (how.t == T_STR && (how.s[0] == 'g' || how.s[0] == 'G'))
    which = 0;
  else {
    which = (int)awk_to_num(A, &how);
    if (which < 1) which = 1;
  }
  awk_val_free(&how);
  char *s;
  if (n->nargs == 4)
    s = str_arg(A, n->args[3]);
  else
    s = g_strdup(A->fields[0].s ? A->fields[0].s : "");
  int count;
  char *r = substitute(re, s, repl, which, true, &count);
  g_free(s);
  g_free(repl);
  return awk_str(r);
}

Val awk_builtin(Awk *A, ANode *n)
{
  int na = n->nargs;
  switch (n->ival) {
  case B_LENGTH: {
    if (na == 0) {
      const char *s = A->fields[0].s ? A->fields[0].s : "";
      return awk_num((double)strlen(s));
    }
    ANode *a = n->args[0];
    if (a->op == AN_VAR || a->op == AN_LOCAL) {
      AVar *v = awk_var_peek(A, a);
      if (v->kind == K_ARRAY) return awk_num(g_hash_table_size(v->arr));
    }
    char *s = str_arg(A, a);
    double l = (double)strlen(s);
    g_free(s);
    return awk_num(l);
  }
  case B_SUBSTR: return do_substr(A, n);
  case B_INDEX: {
    char *s = str_arg(A, n->args[0]), *t = str_arg(A, n->args[1]);
    char *f = awk_ignorecase(A) ? strcasestr(s, t) : strstr(s, t);
    double r = f ? (double)(f - s) + 1 : 0;
    g_free(s);
    g_free(t);
    return awk_num(r);
  }
  case B_SPLIT: return do_split(A, n);
  case B_ASORT:
  case B_ASORTI: return do_asort(A, n, n->ival == B_ASORTI);
  case B_STRFTIME: return do_strftime(A, n);
  case B_MKTIME: return do_mktime(A, n);
  case B_SUB: return do_sub(A, n, false);
  case B_GSUB: return do_sub(A, n, true);
  case B_MATCH: return do_match(A, n);
  case B_GENSUB: return do_gensub(A, n);
  case B_SPRINTF: return awk_str(awk_sprintf(A, n->args, na, NULL));
  case B_SIN:
  case B_COS:
  case B_EXP:
  case B_LOG:
  case B_SQRT:
  case B_INT: {
    double x = num_arg(A, n->args[0]);
    switch (n->ival) {
    case B_SIN: return awk_num(sin(x));
    case B_COS: return awk_num(cos(x));
    case B_EXP: return awk_num(exp(x));
    case B_LOG: return awk_num(log(x));
    case B_SQRT: return awk_num(sqrt(x));
    default: return awk_num(trunc(x));
    }
  }
  case B_ATAN2: {
    double y = num_arg(A, n->args[0]), x = num_arg(A, n->args[1]);
    return awk_num(atan2(y, x));
  }
  case B_RAND:
    return awk_num(g_random_double_range(0, 1) * 0 + (double)random() / ((double)RAND_MAX + 1));
  case B_SRAND: {
    double prev = A->seed;
    A->seed = na ? num_arg(A, n->args[0]) : (double)time(NULL);
    srandom((unsigned)(long long)A->seed);
    return awk_num(prev);
  }
  case B_TOLOWER:
  case B_TOUPPER: {
    char *s = str_arg(A, n->args[0]);
    for (char *p = s; *p; p++)
      *p = (char)(n->ival == B_TOLOWER ? tolower((unsigned char)*p) : toupper((unsigned char)*p));
    return awk_str(s);
  }
  case B_SYSTEM: {
    char *s = str_arg(A, n->args[0]);
    int st = awk_system(A, s);
    g_free(s);
    return awk_num(st);
  }
  case B_CLOSE: {
    char *s = str_arg(A, n->args[0]);
    int st = awk_close(A, s);
    g_free(s);
    return awk_num(st);
  }
  case B_FFLUSH: {
    if (na == 0) return awk_num(awk_fflush(A, NULL, true));
    char *s = str_arg(A, n->args[0]);
    int st = awk_fflush(A, s, false);
    g_free(s);
    return awk_num(st);
  }
  case B_SYSTIME: return awk_num((double)time(NULL));
  default: awk_fatal(A, "unknown function");
  }
}
