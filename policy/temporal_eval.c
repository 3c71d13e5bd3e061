/* temporal_eval.c — evaluation of temporal blocks (spec/policy.md §2.5)
 * against the history, and the state they keep: match lists, the history
 * itself (which tells this file of each event it keeps), the clock.
 *
 * A block is evaluated at the decision's timepoint by enumerating the
 * bindings of its formula (callbacks, no materialized relations).  The
 * shapes budgets are written in are answered from per-predicate match
 * lists kept as events arrive, in O(log n):
 *   formerly within W P                                  (P static)
 *   count for (t: Timepoint). where formerly within W (P && tp(t))
 *   sum b for (b: Long), (t: Timepoint). where formerly within W (P{…, f: b} && tp(t))
 *   !P since within W Q                                  (P, Q static)
 * where a static predicate's fields are literals or wildcards.  Anything
 * else is enumerated over the window.
 */
#include "policy/temporal_eval.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef bool (*Emit)(void *data, TVal *row);

typedef struct {
  BoxTemporal *t;
  TFormula *F;
  History *h;
  int action;
  json_object *input;
  uint64_t lo_seq; /* first visible seq */
} Ctx;

/* ---- match lists ------------------------------------------------------------ */

static TMatch *tmatch_new(const char *sum_path)
{
  TMatch *m = g_new0(TMatch, 1);
  m->seq = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  m->ts = g_array_new(FALSE, FALSE, sizeof(int64_t));
  if (sum_path) {
    m->psum = g_array_new(FALSE, FALSE, sizeof(__int128));
    m->sum_path = sum_path;
  }
  return m;
}

static void tmatch_free(TMatch *m)
{
  if (!m) return;
  g_array_free(m->seq, TRUE);
  g_array_free(m->ts, TRUE);
  if (m->psum) g_array_free(m->psum, TRUE);
  g_free(m);
}

static void tmatch_clear(TMatch *m)
{
  g_array_set_size(m->seq, 0);
  g_array_set_size(m->ts, 0);
  if (m->psum) g_array_set_size(m->psum, 0);
  m->start = 0;
}

static void tmatch_prune(TMatch *m, uint64_t first_seq)
{
  while (m->start < m->seq->len && g_array_index(m->seq, uint64_t, m->start) < first_seq)
    m->start++;
  if (m->start > 1024 && m->start > m->seq->len / 2) {
    /* psum keeps one entry before start: sums are differences */
    size_t drop = m->start - 1;
    g_array_remove_range(m->seq, 0, (guint)drop);
    g_array_remove_range(m->ts, 0, (guint)drop);
    if (m->psum) g_array_remove_range(m->psum, 0, (guint)drop);
    m->start = 1;
  }
}

static size_t tmatch_memory(const TMatch *m)
{
  size_t n = sizeof *m + m->seq->len * (sizeof(uint64_t) + sizeof(int64_t));
  if (m->psum) n += m->psum->len * sizeof(__int128);
  return n;
}

/* NAME(m, key): the first index in [start, len) whose FIELD >= key. Both
 * columns are sorted the same way (seq and ts grow together), and are
 * searched often enough that each keeps its own typed loop. */
#define TMATCH_LOWER_BOUND(name, field, type)                                                      \
  static size_t name(const TMatch *m, type key)                                                    \
  {                                                                                                \
    size_t lo = m->start, hi = m->seq->len;                                                        \
    while (lo < hi) {                                                                              \
      size_t mid = lo + (hi - lo) / 2;                                                             \
      if (g_array_index(m->field, type, mid) < key)                                                \
        lo = mid + 1;                                                                              \
      else                                                                                         \
        hi = mid;                                                                                  \
    }                                                                                              \
    return lo;                                                                                     \
  }
TMATCH_LOWER_BOUND(lb_seq, seq, uint64_t)
TMATCH_LOWER_BOUND(lb_ts, ts, int64_t)
#undef TMATCH_LOWER_BOUND

/* The half-open index range of matches visible at timepoint j (ts tj)
 * within window w. */
static void tmatch_range(const Ctx *c, const TMatch *m, uint64_t j, int64_t tj, int64_t w,
                         size_t *lo, size_t *hi)
{
  *hi = lb_seq(m, j + 1);
  size_t a = lb_ts(m, tj - w), b = lb_seq(m, c->lo_seq);
  *lo = a > b ? a : b;
  if (*lo > *hi) *lo = *hi;
}

/* ---- values ----------------------------------------------------------------- */

static const TVal agent_self = { TV_ENT, 0, "self", 4, NULL };
static const TVal resource_unused = { TV_ENT, 0, "unused", 6, NULL };

static bool field_static_match(const TField *fd, const TVal *v)
{
  switch (fd->term.kind) {
  case TT_WILD: return true;
  case TT_LIT: return tval_eq(&fd->term.lit, v);
  case TT_PRINCIPAL:
    return v->k == TV_ENT && v->n == 4 && memcmp(v->s, "self", 4) == 0 &&
           strcmp(v->etype, "Box::Agent") == 0;
  case TT_RESOURCE:
    return v->k == TV_ENT && v->n == 6 && memcmp(v->s, "unused", 6) == 0 &&
           strcmp(v->etype, "Box::Resource") == 0;
  default: return false;
  }
}

/* A static predicate (or the static part of a sum's predicate) against an event. */
static bool static_match(const TForm *p, const Event *e, const char *sum_path)
{
  if (e->action != p->action || e->kind != p->ev) return false;
  for (int i = 0; i < p->nfields; i++) {
    const TVal *v = event_field(e, p->fields[i].path);
    if (!v) return false;
    if (p->fields[i].path == sum_path) {
      if (v->k != TV_LONG) return false;
      continue;
    }
    if (!field_static_match(&p->fields[i], v)) return false;
  }
  return true;
}

typedef struct {
  const TForm *pred;
  TMatch *m;
} Watch;

static void on_event(void *data, uint64_t seq, const Event *e)
{
  BoxTemporal *t = data;
  for (guint i = 0; i < t->static_preds->len; i++) {
    Watch *w = t->static_preds->pdata[i];
    if (!static_match(w->pred, e, w->m->sum_path)) continue;
    g_array_append_val(w->m->seq, seq);
    g_array_append_val(w->m->ts, e->ts);
    if (w->m->psum) {
      __int128 prev =
        w->m->psum->len ? g_array_index(w->m->psum, __int128, w->m->psum->len - 1) : 0;
      __int128 now = prev + event_field(e, w->m->sum_path)->l;
      g_array_append_val(w->m->psum, now);
    }
  }
}

static bool ctx_val(const Ctx *c, const char *name, TVal *out)
{
  json_object *v;
  if (!c->input || !json_object_object_get_ex(c->input, name, &v)) return false;
  switch (json_object_get_type(v)) {
  case json_type_int:
    *out = (TVal){ TV_LONG, json_object_get_int64(v), NULL, 0, NULL };
    return true;
  case json_type_boolean:
    *out = (TVal){ TV_BOOL, json_object_get_boolean(v), NULL, 0, NULL };
    return true;
  case json_type_string: {
    const char *et = strcmp(name, "operation") == 0 ? policy_actions[c->action].enum_type : NULL;
    *out = (TVal){ et ? TV_ENT : TV_STR, 0, json_object_get_string(v),
                   (size_t)json_object_get_string_len(v), et ? g_intern_string(et) : NULL };
    return true;
  }
  default: return false;
  }
}

static bool en(Ctx *c, const TForm *f, uint64_t j, TVal *row, Emit emit, void *data);

static int64_t agg_value(Ctx *c, const TTerm *x, uint64_t j, const TVal *row);

/* false when unresolved (wildcard, unbound variable, absent context field) */
static bool term_val(Ctx *c, const TTerm *x, uint64_t j, const TVal *row, TVal *out)
{
  switch (x->kind) {
  case TT_LIT: *out = x->lit; return true;
  case TT_WILD: return false;
  case TT_VAR:
    if (row[x->var].k == TV_NONE) return false;
    *out = row[x->var];
    return true;
  case TT_CTX: return ctx_val(c, x->ctx, out);
  case TT_PRINCIPAL:
    *out = agent_self;
    out->etype = g_intern_static_string("Box::Agent");
    return true;
  case TT_RESOURCE:
    *out = resource_unused;
    out->etype = g_intern_static_string("Box::Resource");
    return true;
  case TT_COUNT:
  case TT_SUM: *out = (TVal){ TV_LONG, agg_value(c, x, j, row), NULL, 0, NULL }; return true;
  }
  return false;
}

/* ---- enumeration ------------------------------------------------------------ */

static bool stop_first(void *data, TVal *row)
{
  (void)row;
  *(bool *)data = true;
  return false;
}

static bool holds(Ctx *c, const TForm *f, uint64_t j, TVal *row)
{
  bool found = false;
  TVal copy[T_MAX_VARS];
  memcpy(copy, row, sizeof copy);
  en(c, f, j, copy, stop_first, &found);
  return found;
}

typedef struct {
  Ctx *c;
  const TForm *b;
  uint64_t j;
  Emit emit;
  void *data;
} AndK;

static bool and_k(void *data, TVal *row)
{
  AndK *k = data;
  TVal copy[T_MAX_VARS];
  memcpy(copy, row, sizeof copy);
  return en(k->c, k->b, k->j, copy, k->emit, k->data);
}

typedef struct {
  int var;
  TVal saved;
  Emit emit;
  void *data;
} ExistsK;

static bool exists_k(void *data, TVal *row)
{
  ExistsK *k = data;
  TVal copy[T_MAX_VARS];
  memcpy(copy, row, sizeof copy);
  copy[k->var] = k->saved;
  return k->emit(k->data, copy);
}

typedef struct {
  Ctx *c;
  const TForm *left;
  uint64_t anchor, j;
  Emit emit;
  void *data;
} SinceK;

static bool since_k(void *data, TVal *row)
{
  SinceK *k = data;
  for (uint64_t m = k->anchor + 1; m <= k->j; m++)
    if (!holds(k->c, k->left, m, row)) return true;
  TVal copy[T_MAX_VARS];
  memcpy(copy, row, sizeof copy);
  return k->emit(k->data, copy);
}

static int64_t ts_of(const Ctx *c, uint64_t j)
{
  const Event *e = history_get(c->h, j);
  return e ? e->ts : INT64_MIN;
}

/* first visible seq within window w of timepoint j */
static uint64_t window_lo(const Ctx *c, uint64_t j, int64_t w)
{
  int64_t tj = ts_of(c, j);
  uint64_t lo = history_seq_at_or_after(c->h, tj - w);
  return lo > c->lo_seq ? lo : c->lo_seq;
}

static bool en(Ctx *c, const TForm *f, uint64_t j, TVal *row, Emit emit, void *data)
{
  if (j < c->lo_seq) return true;
  switch (f->kind) {
  case TF_PRED: {
    const Event *e = history_get(c->h, j);
    if (!e || e->action != f->action || e->kind != f->ev) return true;
    for (int i = 0; i < f->nfields; i++) {
      const TField *fd = &f->fields[i];
      const TVal *v = event_field(e, fd->path);
      if (!v) return true;
      if (fd->term.kind == TT_WILD) continue;
      if (v->k == TV_SET) return true; /* bound or compared: never */
      if (fd->term.kind == TT_VAR && row[fd->term.var].k == TV_NONE) {
        row[fd->term.var] = *v;
        continue;
      }
      TVal want;
      if (!term_val(c, &fd->term, j, row, &want) || !tval_eq(&want, v)) return true;
    }
    return emit(data, row);
  }
  case TF_TP:
    if (row[f->var].k == TV_NONE)
      row[f->var] = (TVal){ TV_LONG, (int64_t)j, NULL, 0, NULL };
    else if (row[f->var].k != TV_LONG || row[f->var].l != (int64_t)j)
      return true;
    return emit(data, row);
  case TF_CMP: {
    TVal l, r;
    bool hl = term_val(c, f->l, j, row, &l), hr = term_val(c, f->r, j, row, &r);
    if (f->cmp == TC_EQ) {
      if (hl && !hr && f->r->kind == TT_VAR && row[f->r->var].k == TV_NONE) {
        row[f->r->var] = l;
        return emit(data, row);
      }
      if (hr && !hl && f->l->kind == TT_VAR && row[f->l->var].k == TV_NONE) {
        row[f->l->var] = r;
        return emit(data, row);
      }
    }
    if (!hl || !hr) return true;
    bool ok;
    switch (f->cmp) {
    case TC_EQ: ok = tval_eq(&l, &r); break;
    case TC_NE: ok = !tval_eq(&l, &r); break;
    default:
      if (l.k != TV_LONG || r.k != TV_LONG) return true;
      ok = f->cmp == TC_LT   ? l.l < r.l
           : f->cmp == TC_LE ? l.l <= r.l
           : f->cmp == TC_GT ? l.l > r.l
                             : l.l >= r.l;
    }
    return ok ? emit(data, row) : true;
  }
  case TF_AND: {
    AndK k = { c, f->b, j, emit, data };
    return en(c, f->a, j, row, and_k, &k);
  }
  case TF_NOT:
    if (holds(c, f->a, j, row)) return true;
    return emit(data, row);
  case TF_FORMERLY: {
    if (f->fast == FAST_FORMERLY) {
      size_t lo, hi;
      tmatch_range(c, f->a->match, j, ts_of(c, j), f->window, &lo, &hi);
      return lo < hi ? emit(data, row) : true;
    }
    uint64_t lo = window_lo(c, j, f->window);
    for (uint64_t k = j + 1; k-- > lo;) {
      TVal copy[T_MAX_VARS];
      memcpy(copy, row, sizeof copy);
      if (!en(c, f->a, k, copy, emit, data)) return false;
    }
    return true;
  }
  case TF_PREVIOUS: {
    if (j == 0 || j - 1 < c->lo_seq) return true;
    if (ts_of(c, j) - ts_of(c, j - 1) > f->window) return true;
    return en(c, f->a, j - 1, row, emit, data);
  }
  case TF_SINCE: {
    int64_t tj = ts_of(c, j);
    if (f->fast == FAST_SINCE) {
      const TMatch *q = f->b->match, *p = f->a->a->match;
      size_t lo, hi;
      tmatch_range(c, q, j, tj, f->window, &lo, &hi);
      if (lo >= hi) return true;
      uint64_t anchor = g_array_index(q->seq, uint64_t, hi - 1);
      size_t pl = lb_seq(p, anchor + 1), ph = lb_seq(p, j + 1);
      return pl >= ph ? emit(data, row) : true;
    }
    uint64_t lo = window_lo(c, j, f->window);
    /* when the left side reads no variable the anchor binds, one walk back
     * from j decides every anchor */
    uint32_t bound = 0;
    for (int v = 0; v < c->F->nvars; v++)
      if (row[v].k != TV_NONE) bound |= 1u << v;
    bool independent = (f->a->uses & ~bound) == 0;
    for (uint64_t k = j + 1; k-- > lo;) {
      TVal copy[T_MAX_VARS];
      memcpy(copy, row, sizeof copy);
      if (independent) {
        SinceK sk = { c, f->a, k, k, emit, data }; /* left already checked on (k, j] */
        if (!en(c, f->b, k, copy, since_k, &sk)) return false;
        if (!holds(c, f->a, k, row)) break;
      } else {
        SinceK sk = { c, f->a, k, j, emit, data };
        if (!en(c, f->b, k, copy, since_k, &sk)) return false;
      }
    }
    return true;
  }
  case TF_EXISTS: {
    ExistsK k = { f->var, row[f->var], emit, data };
    row[f->var] = (TVal){ 0 };
    return en(c, f->a, j, row, exists_k, &k);
  }
  }
  return true;
}

/* ---- aggregates ------------------------------------------------------------- */

typedef struct {
  const TTerm *x;
  GHashTable *seen;
  __int128 sum;
} AggK;

static void key_val(GString *k, const TVal *v)
{
  g_string_append_c(k, (char)('0' + v->k));
  switch (v->k) {
  case TV_LONG:
  case TV_BOOL: g_string_append_len(k, (const char *)&v->l, sizeof v->l); break;
  case TV_ENT: g_string_append(k, v->etype); g_string_append_c(k, '\0'); /* fall through */
  case TV_STR:
    g_string_append_len(k, (const char *)&v->n, sizeof v->n);
    g_string_append_len(k, v->s, (gssize)v->n);
    break;
  case TV_NONE:
  case TV_SET: break;
  }
}

static bool agg_k(void *data, TVal *row)
{
  AggK *k = data;
  GString *key = g_string_new(NULL);
  for (int i = 0; i < k->x->nfor; i++) {
    const TVal *v = &row[k->x->forv[i]];
    if (v->k == TV_NONE) {
      g_string_free(key, TRUE);
      return true;
    }
    key_val(key, v);
  }
  GBytes *b = g_bytes_new(key->str, key->len);
  g_string_free(key, TRUE);
  if (!g_hash_table_add(k->seen, b)) return true; /* already counted (the table freed b) */
  if (k->x->kind == TT_SUM && row[k->x->var].k == TV_LONG) k->sum += row[k->x->var].l;
  return true;
}

static int64_t clamp128(__int128 v)
{
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return (int64_t)v;
}

static int64_t agg_value(Ctx *c, const TTerm *x, uint64_t j, const TVal *row)
{
  if (x->fast == FAST_COUNT || x->fast == FAST_SUM) {
    const TMatch *m = x->match;
    size_t lo, hi;
    tmatch_range(c, m, j, ts_of(c, j), x->body->window, &lo, &hi);
    if (x->fast == FAST_COUNT) return (int64_t)(hi - lo);
    if (lo >= hi) return 0;
    __int128 upto = g_array_index(m->psum, __int128, hi - 1);
    __int128 before = lo > 0 ? g_array_index(m->psum, __int128, lo - 1) : 0;
    return clamp128(upto - before);
  }
  TVal copy[T_MAX_VARS];
  memcpy(copy, row, sizeof copy);
  for (int i = 0; i < x->nfor; i++) copy[x->forv[i]] = (TVal){ 0 };
  AggK k = {
    x, g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL), 0
  };
  en(c, x->body, j, copy, agg_k, &k);
  int64_t out = x->kind == TT_COUNT ? (int64_t)g_hash_table_size(k.seen) : clamp128(k.sum);
  g_hash_table_destroy(k.seen);
  return out;
}

bool temporal_eval_formula(BoxTemporal *t, TFormula *f, uint64_t seq, int action,
                           json_object *input)
{
  uint64_t base = history_first_seq(t->hist);
  Ctx c = { t, f, t->hist, action, input, f->min_seq > base ? f->min_seq : base };
  TVal row[T_MAX_VARS];
  memset(row, 0, sizeof row);
  return holds(&c, f->root, seq, row);
}

/* ---- the state of history rules ---------------------------------------------- */

TMatch *temporal_watch(BoxTemporal *t, const TForm *p, const char *sum_path)
{
  TMatch *m = tmatch_new(sum_path);
  Watch *w = g_new0(Watch, 1);
  w->pred = p;
  w->m = m;
  g_ptr_array_add(t->static_preds, w);
  return m;
}

static void watch_free(gpointer p)
{
  Watch *w = p;
  tmatch_free(w->m);
  g_free(w);
}

int64_t temporal_real_clock(void *data)
{
  (void)data;
  return g_get_real_time() * 1000;
}

static void on_event(void *data, uint64_t seq, const Event *e);

BoxTemporal *temporal_new(BoxPolicy *pol)
{
  BoxTemporal *t = g_new0(BoxTemporal, 1);
  g_mutex_init(&t->lock);
  t->formulas = pol->formulas;
  t->static_preds = g_ptr_array_new();
  t->clock = temporal_real_clock;
  t->hist = temporal_history_new(t);
  return t;
}

History *temporal_history_new(BoxTemporal *t)
{
  return t->formulas->len ? history_new(on_event, t) : history_new(NULL, NULL);
}

void temporal_free(BoxTemporal *t)
{
  history_free(t->hist);
  g_ptr_array_set_free_func(t->static_preds, watch_free);
  g_ptr_array_free(t->static_preds, TRUE);
  g_mutex_clear(&t->lock);
  g_free(t->fault);
  g_free(t);
}

bool temporal_register_formulas(BoxTemporal *t, GError **error)
{
  for (guint i = 0; i < t->formulas->len; i++) {
    TFormula *F = t->formulas->pdata[i];
    char *why = NULL;
    uint64_t s = history_formula_seq(t->hist, F->canonical, &why);
    if (s == UINT64_MAX) {
      g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO, "policy history failure: %s", why);
      g_free(why);
      return false;
    }
    F->min_seq = s;
  }
  return true;
}

void temporal_prune(BoxTemporal *t)
{
  int64_t last = history_last_ts(t->hist);
  if (last == INT64_MIN) return;
  history_prune(t->hist, last - t->depth);
  uint64_t first = history_first_seq(t->hist);
  for (guint i = 0; i < t->static_preds->len; i++)
    tmatch_prune(((Watch *)t->static_preds->pdata[i])->m, first);
}

void temporal_clear_matches(BoxTemporal *t)
{
  for (guint i = 0; i < t->static_preds->len; i++)
    tmatch_clear(((Watch *)t->static_preds->pdata[i])->m);
}

size_t temporal_matches_memory(const BoxTemporal *t)
{
  size_t n = 0;
  for (guint i = 0; i < t->static_preds->len; i++)
    n += tmatch_memory(((Watch *)t->static_preds->pdata[i])->m);
  return n;
}
