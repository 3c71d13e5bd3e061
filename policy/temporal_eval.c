/* temporal_eval.c — evaluation of temporal blocks (spec/policy.md §2.5),
 * their load checks (§2.6), and the history API of policy.h.
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
#include "policy/temporal.h"

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

enum { FAST_NONE = 0, FAST_COUNT, FAST_SUM, FAST_FORMERLY, FAST_SINCE };

/* ---- match lists ------------------------------------------------------------ */

static TMatch *tmatch_new(const char *sum_path) {
  TMatch *m = g_new0(TMatch, 1);
  m->seq = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  m->ts = g_array_new(FALSE, FALSE, sizeof(int64_t));
  if (sum_path) {
    m->psum = g_array_new(FALSE, FALSE, sizeof(__int128));
    m->sum_path = sum_path;
  }
  return m;
}

void tmatch_free(TMatch *m) {
  if (!m) return;
  g_array_free(m->seq, TRUE);
  g_array_free(m->ts, TRUE);
  if (m->psum) g_array_free(m->psum, TRUE);
  g_free(m);
}

static void tmatch_clear(TMatch *m) {
  g_array_set_size(m->seq, 0);
  g_array_set_size(m->ts, 0);
  if (m->psum) g_array_set_size(m->psum, 0);
  m->start = 0;
}

void tmatch_prune(TMatch *m, uint64_t first_seq) {
  while (m->start < m->seq->len && g_array_index(m->seq, uint64_t, m->start) < first_seq) m->start++;
  if (m->start > 1024 && m->start > m->seq->len / 2) {
    /* psum keeps one entry before start: sums are differences */
    size_t drop = m->start - 1;
    g_array_remove_range(m->seq, 0, (guint)drop);
    g_array_remove_range(m->ts, 0, (guint)drop);
    if (m->psum) g_array_remove_range(m->psum, 0, (guint)drop);
    m->start = 1;
  }
}

size_t tmatch_memory(const TMatch *m) {
  size_t n = sizeof *m + m->seq->len * (sizeof(uint64_t) + sizeof(int64_t));
  if (m->psum) n += m->psum->len * sizeof(__int128);
  return n;
}

/* first index in [start, len) with seq >= s */
static size_t lb_seq(const TMatch *m, uint64_t s) {
  size_t lo = m->start, hi = m->seq->len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (g_array_index(m->seq, uint64_t, mid) < s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
static size_t lb_ts(const TMatch *m, int64_t ts) {
  size_t lo = m->start, hi = m->seq->len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (g_array_index(m->ts, int64_t, mid) < ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The half-open index range of matches visible at timepoint j (ts tj)
 * within window w. */
static void tmatch_range(const Ctx *c, const TMatch *m, uint64_t j, int64_t tj, int64_t w, size_t *lo, size_t *hi) {
  *hi = lb_seq(m, j + 1);
  size_t a = lb_ts(m, tj - w), b = lb_seq(m, c->lo_seq);
  *lo = a > b ? a : b;
  if (*lo > *hi) *lo = *hi;
}

/* ---- values ----------------------------------------------------------------- */

static const TVal agent_self = {TV_ENT, 0, "self", 4, NULL};
static const TVal resource_unused = {TV_ENT, 0, "unused", 6, NULL};

static bool field_static_match(const TField *fd, const TVal *v) {
  switch (fd->term.kind) {
  case TT_WILD: return true;
  case TT_LIT: return tval_eq(&fd->term.lit, v);
  case TT_PRINCIPAL: return v->k == TV_ENT && v->n == 4 && memcmp(v->s, "self", 4) == 0 && strcmp(v->etype, "Box::Agent") == 0;
  case TT_RESOURCE:
    return v->k == TV_ENT && v->n == 6 && memcmp(v->s, "unused", 6) == 0 && strcmp(v->etype, "Box::Resource") == 0;
  default: return false;
  }
}

/* A static predicate (or the static part of a sum's predicate) against an event. */
static bool static_match(const TForm *p, const Event *e, const char *sum_path) {
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

void temporal_on_event(BoxTemporal *t, uint64_t seq, const Event *e) {
  for (guint i = 0; i < t->static_preds->len; i++) {
    Watch *w = t->static_preds->pdata[i];
    if (!static_match(w->pred, e, w->m->sum_path)) continue;
    g_array_append_val(w->m->seq, seq);
    g_array_append_val(w->m->ts, e->ts);
    if (w->m->psum) {
      __int128 prev = w->m->psum->len ? g_array_index(w->m->psum, __int128, w->m->psum->len - 1) : 0;
      __int128 now = prev + event_field(e, w->m->sum_path)->l;
      g_array_append_val(w->m->psum, now);
    }
  }
}

static bool ctx_val(const Ctx *c, const char *name, TVal *out) {
  json_object *v;
  if (!c->input || !json_object_object_get_ex(c->input, name, &v)) return false;
  switch (json_object_get_type(v)) {
  case json_type_int:
    *out = (TVal){TV_LONG, json_object_get_int64(v), NULL, 0, NULL};
    return true;
  case json_type_boolean:
    *out = (TVal){TV_BOOL, json_object_get_boolean(v), NULL, 0, NULL};
    return true;
  case json_type_string: {
    const char *et = strcmp(name, "operation") == 0 ? policy_actions[c->action].enum_type : NULL;
    *out = (TVal){et ? TV_ENT : TV_STR, 0, json_object_get_string(v), (size_t)json_object_get_string_len(v),
                  et ? g_intern_string(et) : NULL};
    return true;
  }
  default: return false;
  }
}

static bool en(Ctx *c, const TForm *f, uint64_t j, TVal *row, Emit emit, void *data);

static int64_t agg_value(Ctx *c, const TTerm *x, uint64_t j, const TVal *row);

/* false when unresolved (wildcard, unbound variable, absent context field) */
static bool term_val(Ctx *c, const TTerm *x, uint64_t j, const TVal *row, TVal *out) {
  switch (x->kind) {
  case TT_LIT: *out = x->lit; return true;
  case TT_WILD: return false;
  case TT_VAR:
    if (row[x->var].k == TV_NONE) return false;
    *out = row[x->var];
    return true;
  case TT_CTX: return ctx_val(c, x->ctx, out);
  case TT_PRINCIPAL: *out = agent_self; out->etype = g_intern_static_string("Box::Agent"); return true;
  case TT_RESOURCE: *out = resource_unused; out->etype = g_intern_static_string("Box::Resource"); return true;
  case TT_COUNT:
  case TT_SUM:
    *out = (TVal){TV_LONG, agg_value(c, x, j, row), NULL, 0, NULL};
    return true;
  }
  return false;
}

/* ---- enumeration ------------------------------------------------------------ */

static bool stop_first(void *data, TVal *row) {
  (void)row;
  *(bool *)data = true;
  return false;
}

static bool holds(Ctx *c, const TForm *f, uint64_t j, TVal *row) {
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

static bool and_k(void *data, TVal *row) {
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

static bool exists_k(void *data, TVal *row) {
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

static bool since_k(void *data, TVal *row) {
  SinceK *k = data;
  for (uint64_t m = k->anchor + 1; m <= k->j; m++)
    if (!holds(k->c, k->left, m, row)) return true;
  TVal copy[T_MAX_VARS];
  memcpy(copy, row, sizeof copy);
  return k->emit(k->data, copy);
}

static int64_t ts_of(const Ctx *c, uint64_t j) {
  const Event *e = history_get(c->h, j);
  return e ? e->ts : INT64_MIN;
}

/* first visible seq within window w of timepoint j */
static uint64_t window_lo(const Ctx *c, uint64_t j, int64_t w) {
  int64_t tj = ts_of(c, j);
  uint64_t lo = history_seq_at_or_after(c->h, tj - w);
  return lo > c->lo_seq ? lo : c->lo_seq;
}

static bool en(Ctx *c, const TForm *f, uint64_t j, TVal *row, Emit emit, void *data) {
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
    if (row[f->var].k == TV_NONE) row[f->var] = (TVal){TV_LONG, (int64_t)j, NULL, 0, NULL};
    else if (row[f->var].k != TV_LONG || row[f->var].l != (int64_t)j) return true;
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
      ok = f->cmp == TC_LT ? l.l < r.l : f->cmp == TC_LE ? l.l <= r.l : f->cmp == TC_GT ? l.l > r.l : l.l >= r.l;
    }
    return ok ? emit(data, row) : true;
  }
  case TF_AND: {
    AndK k = {c, f->b, j, emit, data};
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
        SinceK sk = {c, f->a, k, k, emit, data}; /* left already checked on (k, j] */
        if (!en(c, f->b, k, copy, since_k, &sk)) return false;
        if (!holds(c, f->a, k, row)) break;
      } else {
        SinceK sk = {c, f->a, k, j, emit, data};
        if (!en(c, f->b, k, copy, since_k, &sk)) return false;
      }
    }
    return true;
  }
  case TF_EXISTS: {
    ExistsK k = {f->var, row[f->var], emit, data};
    row[f->var] = (TVal){0};
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

static void key_val(GString *k, const TVal *v) {
  g_string_append_c(k, (char)('0' + v->k));
  switch (v->k) {
  case TV_LONG:
  case TV_BOOL: g_string_append_len(k, (const char *)&v->l, sizeof v->l); break;
  case TV_ENT: g_string_append(k, v->etype); g_string_append_c(k, '\0'); /* fall through */
  case TV_STR:
    g_string_append_len(k, (const char *)&v->n, sizeof v->n);
    g_string_append_len(k, v->s, (gssize)v->n);
    break;
  case TV_NONE: break;
  }
}

static bool agg_k(void *data, TVal *row) {
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

static int64_t clamp128(__int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return (int64_t)v;
}

static int64_t agg_value(Ctx *c, const TTerm *x, uint64_t j, const TVal *row) {
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
  for (int i = 0; i < x->nfor; i++) copy[x->forv[i]] = (TVal){0};
  AggK k = {x, g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL), 0};
  en(c, x->body, j, copy, agg_k, &k);
  int64_t out = x->kind == TT_COUNT ? (int64_t)g_hash_table_size(k.seen) : clamp128(k.sum);
  g_hash_table_destroy(k.seen);
  return out;
}

bool temporal_eval_formula(BoxTemporal *t, TFormula *f, uint64_t seq, int action, json_object *input) {
  uint64_t base = history_first_seq(t->hist);
  Ctx c = {t, f, t->hist, action, input, f->min_seq > base ? f->min_seq : base};
  TVal row[T_MAX_VARS];
  memset(row, 0, sizeof row);
  return holds(&c, f->root, seq, row);
}

/* ---- load checks (§2.6) and runtime set-up ---------------------------------- */

typedef struct {
  BoxPolicy *pol;
  const Rule *rule;
  TFormula *F;
  GError **error;
  bool failed;
  int actions[POLICY_MAX_ACTIONS];
  int nactions;
} Check;

G_GNUC_PRINTF(4, 5) static void refuse(Check *k, int line, int col, const char *fmt, ...) {
  if (k->failed) return;
  k->failed = true;
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(k->error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_SCHEMA, POLICY_SCHEMA_PREFIX "%s at line %d, column %d", m,
              line, col);
  g_free(m);
}

static const char *kind_name(EventKind k) { return k == EV_REQUEST ? "request" : k == EV_RESPONSE ? "response" : "error"; }

static const char *ft_name(FieldType t) {
  switch (t) {
  case FT_STRING: return "String";
  case FT_LONG: return "Long";
  case FT_BOOL: return "Bool";
  case FT_ENUM: return "an entity";
  case FT_SET_STRING: return "Set<String>";
  }
  return "?";
}

static void check_window(Check *k, const TForm *f) {
  if (f->window > T_MAX_WINDOW_NS)
    refuse(k, f->line, f->col,
           "temporal window `%s` exceeds the maximum allowed window `24h` set by the event schema's `max_window`; "
           "shorten this window to at most `24h`, or raise `max_window` in the event schema",
           f->window_text);
}

static void check_term(Check *k, const TTerm *x);
static void check_form(Check *k, TForm *f);

static void check_field(Check *k, const TForm *p, const TField *fd) {
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
                 "for policy `%s`: entity `%s::\"%s\"` is of an enumerated entity type, but `\"%s\"` is not declared "
                 "as a valid eid",
                 k->rule->engine_id, etype, eid, eid);
        g_free(eid);
        return;
      }
    } else if (decl) {
      ok = (decl->type == FT_STRING && v->k == TV_STR) || (decl->type == FT_LONG && v->k == TV_LONG) ||
           (decl->type == FT_BOOL && v->k == TV_BOOL);
    } else {
      ok = v->k == TV_STR;
    }
    if (!ok)
      refuse(k, fd->term.line, fd->term.col, "for policy `%s`, field `%s` of `Box::Action::\"%s\"::%s` is %s%s; the value given has another type",
             k->rule->engine_id, path, a->term, kind_name(p->ev), decl ? ft_name(decl->type) : entity_field ? "entity " : "String",
             decl ? "" : etype ? etype : "");
  } else if (fd->term.kind == TT_PRINCIPAL || fd->term.kind == TT_RESOURCE) {
    const char *want = fd->term.kind == TT_PRINCIPAL ? "Box::Agent" : "Box::Resource";
    if (!etype || strcmp(etype, want) != 0)
      refuse(k, fd->term.line, fd->term.col, "for policy `%s`, field `%s` cannot equal `%s`", k->rule->engine_id, path,
             fd->term.kind == TT_PRINCIPAL ? "principal" : "resource");
  } else {
    check_term(k, &fd->term);
  }
  return;
unknown:
  refuse(k, fd->term.line, fd->term.col,
         "for policy `%s`, `%s` is not a field of the event `Box::Action::\"%s\"::%s`%s", k->rule->engine_id, path,
         a->term, kind_name(p->ev),
         g_str_has_prefix(path, "output.") && p->ev != EV_RESPONSE ? " (only a ::response carries output)" : "");
}

static void check_term(Check *k, const TTerm *x) {
  if (x->kind == TT_CTX) {
    for (int i = 0; i < k->nactions; i++) {
      const ActionDecl *a = &policy_actions[k->actions[i]];
      if (!policy_field(a->input, a->ninput, x->ctx, strlen(x->ctx)))
        refuse(k, x->line, x->col, "for policy `%s`, attribute `input.%s` in context for Box::Action::\"%s\" not found",
               k->rule->engine_id, x->ctx, a->term);
    }
  } else if (x->kind == TT_COUNT || x->kind == TT_SUM) {
    check_form(k, x->body);
  }
}

static void check_form(Check *k, TForm *f) {
  switch (f->kind) {
  case TF_PRED:
    for (int i = 0; i < f->nfields; i++) check_field(k, f, &f->fields[i]);
    break;
  case TF_TP:
    if (k->F->var_types[f->var] != VT_TIMEPOINT)
      refuse(k, f->line, f->col, "for policy `%s`, `tp(%s)` needs a `Timepoint` variable", k->rule->engine_id,
             k->F->var_names[f->var]);
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
static uint32_t form_uses(TForm *f) {
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
static uint32_t term_uses(const TTerm *x) {
  if (x->kind == TT_VAR) return 1u << x->var;
  if (x->kind == TT_COUNT || x->kind == TT_SUM) {
    uint32_t u = form_uses(x->body);
    for (int i = 0; i < x->nfor; i++) u &= ~(1u << x->forv[i]);
    return u;
  }
  return 0;
}

static const char *first_var(const TFormula *F, uint32_t bits) {
  for (int v = 0; v < F->nvars; v++)
    if (bits & (1u << v)) return F->var_names[v];
  return "?";
}

/* Range restriction and conjunct order (rules 2–4): returns the variables
 * restricted after f, given those restricted before. */
static uint32_t restrict_form(Check *k, const TForm *f, uint32_t r);
static uint32_t restrict_term_agg(Check *k, const TTerm *x, uint32_t r) {
  if (x->kind != TT_COUNT && x->kind != TT_SUM) return r;
  uint32_t fresh = 0;
  for (int i = 0; i < x->nfor; i++) fresh |= 1u << x->forv[i];
  uint32_t after = restrict_form(k, x->body, r & ~fresh);
  if ((after & fresh) != fresh)
    refuse(k, x->line, x->col,
           "for policy `%s`, the aggregate's variable `%s` is not restricted by a positive atom of its body (an event "
           "field, `tp`, or `term == %s`)",
           k->rule->engine_id, first_var(k->F, fresh & ~after), first_var(k->F, fresh & ~after));
  return r;
}

static uint32_t restrict_form(Check *k, const TForm *f, uint32_t r) {
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
    uint32_t un = (ul | ur) & ~r;
    if (un)
      refuse(k, f->line, f->col,
             "for policy `%s`, variable `%s` is compared before anything restricts it; put the event predicate, `tp` "
             "or binding equality that binds it first",
             k->rule->engine_id, first_var(k->F, un));
    return r;
  }
  case TF_AND: return restrict_form(k, f->b, restrict_form(k, f->a, r));
  case TF_NOT: {
    uint32_t un = f->a->uses & ~r;
    if (un)
      refuse(k, f->line, f->col,
             "for policy `%s`, variable `%s` is used under `!` before anything restricts it; a negation binds nothing",
             k->rule->engine_id, first_var(k->F, un));
    restrict_form(k, f->a, r);
    return r;
  }
  case TF_FORMERLY:
  case TF_PREVIOUS: return restrict_form(k, f->a, r);
  case TF_SINCE: {
    uint32_t after = restrict_form(k, f->b, r);
    uint32_t un = f->a->uses & ~after;
    if (un)
      refuse(k, f->line, f->col,
             "for policy `%s`, the left side of `since` uses `%s`, which neither its anchor nor an earlier conjunct "
             "restricts",
             k->rule->engine_id, first_var(k->F, un));
    restrict_form(k, f->a, after);
    return after;
  }
  case TF_EXISTS: {
    uint32_t bit = 1u << f->var;
    uint32_t after = restrict_form(k, f->a, r & ~bit);
    if (!(after & bit))
      refuse(k, f->line, f->col,
             "for policy `%s`, the variable `%s` of `exists` is not restricted by a positive atom of its body",
             k->rule->engine_id, k->F->var_names[f->var]);
    return (after & ~bit) | (r & bit);
  }
  }
  return r;
}

/* tp-dependence (rule 6) */
static bool anchored(const TForm *f);
static bool term_anchored(const TTerm *x) { return x->kind == TT_COUNT || x->kind == TT_SUM; }
static bool anchored(const TForm *f) {
  switch (f->kind) {
  case TF_PRED:
  case TF_TP: return true;
  case TF_CMP: return term_anchored(f->l) || term_anchored(f->r);
  default: return (f->a && anchored(f->a)) || (f->b && anchored(f->b));
  }
}

static void check_anchored(Check *k, const TForm *f, const char *what) {
  if (!anchored(f))
    refuse(k, f->line, f->col,
           "for policy `%s`, %s does not depend on the history: it names no event predicate, `tp` or aggregate",
           k->rule->engine_id, what);
}

static void check_anchors(Check *k, const TForm *f, bool top);
static void check_anchors_term(Check *k, const TTerm *x) {
  if (term_anchored(x)) {
    check_anchored(k, x->body, "an aggregate's body");
    check_anchors(k, x->body, false);
  }
}
static void check_anchors(Check *k, const TForm *f, bool top) {
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

static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

static int64_t depth_form(const TForm *f);
static int64_t depth_term(const TTerm *x) {
  return (x->kind == TT_COUNT || x->kind == TT_SUM) ? depth_form(x->body) : 0;
}
static int64_t depth_form(const TForm *f) {
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

static bool pred_static(const TForm *p, const char *except) {
  if (p->kind != TF_PRED) return false;
  for (int i = 0; i < p->nfields; i++) {
    TTermKind tk = p->fields[i].term.kind;
    if (p->fields[i].path == except) continue;
    if (tk != TT_LIT && tk != TT_WILD && tk != TT_PRINCIPAL && tk != TT_RESOURCE) return false;
  }
  return true;
}

static TMatch *watch(BoxTemporal *t, const TForm *p, const char *sum_path) {
  TMatch *m = tmatch_new(sum_path);
  Watch *w = g_new0(Watch, 1);
  w->pred = p;
  w->m = m;
  g_ptr_array_add(t->static_preds, w);
  return m;
}

/* body = (P && tp(t)) or (tp(t) && P): returns P */
static const TForm *pred_with_tp(const TForm *body, int tvar) {
  if (body->kind != TF_AND) return NULL;
  const TForm *a = body->a, *b = body->b;
  if (b->kind == TF_TP && b->var == tvar && a->kind == TF_PRED) return a;
  if (a->kind == TF_TP && a->var == tvar && b->kind == TF_PRED) return b;
  return NULL;
}

static void plan_form(BoxTemporal *t, TFormula *F, TForm *f);
static void plan_term(BoxTemporal *t, TFormula *F, TTerm *x) {
  if (x->kind != TT_COUNT && x->kind != TT_SUM) return;
  plan_form(t, F, x->body);
  if (x->body->kind != TF_FORMERLY) return;
  if (x->kind == TT_COUNT && x->nfor == 1 && F->var_types[x->forv[0]] == VT_TIMEPOINT) {
    const TForm *p = pred_with_tp(x->body->a, x->forv[0]);
    if (p && pred_static(p, NULL)) {
      x->fast = FAST_COUNT;
      x->match = watch(t, p, NULL);
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
      x->match = watch(t, p, sum_path);
    }
  }
}

static void plan_form(BoxTemporal *t, TFormula *F, TForm *f) {
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
    f->a->match = watch(t, f->a, NULL);
    f->fast = FAST_FORMERLY;
  } else if (f->kind == TF_SINCE && f->a->kind == TF_NOT && pred_static(f->a->a, NULL) && pred_static(f->b, NULL)) {
    f->a->a->match = watch(t, f->a->a, NULL);
    f->b->match = watch(t, f->b, NULL);
    f->fast = FAST_SINCE;
  }
}

static void watch_free(gpointer p) {
  Watch *w = p;
  tmatch_free(w->m);
  g_free(w);
}

BoxTemporal *temporal_new(void) {
  BoxTemporal *t = g_new0(BoxTemporal, 1);
  g_mutex_init(&t->lock);
  t->formulas = g_ptr_array_new_with_free_func((GDestroyNotify)policy_temporal_formula_free);
  t->static_preds = g_ptr_array_new();
  return t;
}

static int64_t real_clock(void *data) {
  (void)data;
  return g_get_real_time() * 1000;
}

static bool register_formulas(BoxTemporal *t, GError **error) {
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

bool policy_temporal_validate(BoxPolicy *pol, GError **error) {
  BoxTemporal *t = pol->temporal;
  if (!t) {
    pol->temporal = t = temporal_new();
  }
  /* formulas were added in parse order; attach each to its rule */
  for (size_t i = 0; i < pol->nrules; i++) {
    const Rule *r = &pol->rules[i];
    Check k = {pol, r, NULL, error, false, {0}, 0};
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
  if (!t->clock) t->clock = real_clock;
  if (!t->hist) {
    t->hist = history_new();
    if (!register_formulas(t, error)) return false;
  }
  return true;
}

void policy_temporal_free(BoxPolicy *pol) {
  BoxTemporal *t = pol->temporal;
  if (!t) return;
  history_free(t->hist);
  g_ptr_array_free(t->formulas, TRUE);
  g_ptr_array_set_free_func(t->static_preds, watch_free);
  g_ptr_array_free(t->static_preds, TRUE);
  g_mutex_clear(&t->lock);
  g_free(t->fault);
  g_free(t);
  pol->temporal = NULL;
}

/* ---- decisions -------------------------------------------------------------- */

static void prune(BoxTemporal *t) {
  int64_t last = history_last_ts(t->hist);
  if (last == INT64_MIN) return;
  history_prune(t->hist, last - t->depth);
  uint64_t first = history_first_seq(t->hist);
  for (guint i = 0; i < t->static_preds->len; i++) tmatch_prune(((Watch *)t->static_preds->pdata[i])->m, first);
}

static void set_fault(BoxTemporal *t, char *why) {
  t->faulted = true;
  g_free(t->fault);
  const char *prefix = "policy history failure: ";
  if (g_str_has_prefix(why, prefix)) prefix = "";
  t->fault = g_strdup_printf("%s%s; every request is denied until the box restarts with a history it can write",
                             prefix, why);
  g_free(why);
  fprintf(stderr, "box: error: %s\n", t->fault);
}

void policy_temporal_fault(BoxTemporal *t, char *why) { set_fault(t, why); }

bool policy_temporal_begin(BoxPolicy *pol, int action, json_object *input, const char **why) {
  BoxTemporal *t = pol->temporal;
  g_mutex_lock(&t->lock);
  if (t->faulted) {
    *why = t->fault;
    g_mutex_unlock(&t->lock);
    return false;
  }
  if (t->formulas->len == 0 && !history_has_file(t->hist)) return true; /* nothing reads it */
  uint64_t seq;
  char *err = NULL;
  if (!history_append(t->hist, t, action, EV_REQUEST, input, NULL, t->clock(t->clock_data), T_OWN_REQUEST, &seq,
                      &err)) {
    set_fault(t, err);
    *why = t->fault;
    g_mutex_unlock(&t->lock);
    return false;
  }
  t->cur_appended = true;
  t->cur_seq = seq;
  prune(t);
  for (guint i = 0; i < t->formulas->len; i++) {
    TFormula *F = t->formulas->pdata[i];
    if (!F->rule || !F->rule->applies[action]) continue;
    F->value = temporal_eval_formula(t, F, seq, action, input);
  }
  return true;
}

/* ---- requestId correlation (§2.3) -------------------------------------------- */

static uint64_t label_hash(const char *s) {
  uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
  return h;
}

static unsigned pend_home(int action, uint64_t h) {
  uint64_t x = (h ^ ((uint64_t)(unsigned)action * UINT64_C(0x9E3779B97F4A7C15))) * UINT64_C(0xff51afd7ed558ccd);
  return (unsigned)(x >> 40) & (T_PENDING_INDEX - 1);
}

/* The index slot of (action, h), or -1. */
static int pend_find(const BoxTemporal *t, int action, uint64_t h) {
  for (unsigned i = pend_home(action, h);; i = (i + 1) & (T_PENDING_INDEX - 1)) {
    if (!t->pend_index[i].used) return -1;
    if (t->pend_index[i].action == action && t->pend_index[i].label_hash == h) return (int)i;
  }
}

/* Frees slot i, moving later slots of its probe run back so that every
 * lookup still reaches its key before an empty slot. */
static void pend_unindex(BoxTemporal *t, unsigned i) {
  const unsigned mask = T_PENDING_INDEX - 1;
  for (unsigned j = (i + 1) & mask; t->pend_index[j].used; j = (j + 1) & mask) {
    unsigned home = pend_home(t->pend_index[j].action, t->pend_index[j].label_hash);
    /* j may fill the hole at i when its home is not cyclically in (i, j] */
    bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (stays) continue;
    t->pend_index[i] = t->pend_index[j];
    i = j;
  }
  t->pend_index[i].used = false;
}

/* Ring entry k (live, the oldest of its chain) leaves its chain. */
static void pend_unchain_head(BoxTemporal *t, unsigned k) {
  int s = pend_find(t, t->pending[k].action, t->pending[k].label_hash);
  if (s < 0) return;
  if (t->pending[k].next < 0) pend_unindex(t, (unsigned)s);
  else t->pend_index[s].head = t->pending[k].next;
}

static void pending_push(BoxTemporal *t, int action, const char *label, uint64_t seq) {
  if (t->pend_len == T_PENDING) { /* the oldest falls off */
    unsigned old = t->pend_head;
    if (t->pending[old].action >= 0) pend_unchain_head(t, old);
    t->pend_head = (t->pend_head + 1) % T_PENDING;
    t->pend_len--;
  }
  unsigned k = (t->pend_head + t->pend_len++) % T_PENDING;
  uint64_t h = label_hash(label);
  t->pending[k].action = action;
  t->pending[k].label_hash = h;
  t->pending[k].seq = seq;
  t->pending[k].next = -1;
  int s = pend_find(t, action, h);
  if (s >= 0) {
    t->pending[t->pend_index[s].tail].next = (int)k;
    t->pend_index[s].tail = (int)k;
    return;
  }
  unsigned i = pend_home(action, h);
  while (t->pend_index[i].used) i = (i + 1) & (T_PENDING_INDEX - 1);
  t->pend_index[i].used = true;
  t->pend_index[i].action = action;
  t->pend_index[i].label_hash = h;
  t->pend_index[i].head = t->pend_index[i].tail = (int)k;
}

/* The seq of the oldest permitted request of this action and label still
 * awaiting its outcome (now taken), or T_OWN_REQUEST. */
static uint64_t pending_take(BoxTemporal *t, int action, const char *label) {
  uint64_t h = label_hash(label);
  int s = pend_find(t, action, h);
  if (s < 0) return T_OWN_REQUEST;
  unsigned k = (unsigned)t->pend_index[s].head;
  uint64_t seq = t->pending[k].seq;
  pend_unchain_head(t, k);
  t->pending[k].action = -1;
  while (t->pend_len && t->pending[t->pend_head].action < 0) { /* drop taken entries at the front */
    t->pend_head = (t->pend_head + 1) % T_PENDING;
    t->pend_len--;
  }
  return seq;
}

void policy_temporal_end(BoxPolicy *pol, bool permitted, int action, const char *label) {
  BoxTemporal *t = pol->temporal;
  if (t->cur_appended && permitted) pending_push(t, action, label, t->cur_seq);
  t->cur_appended = false;
  g_mutex_unlock(&t->lock);
}

bool policy_temporal_clause(const Clause *c) { return c->tf && c->tf->value; }

/* ---- public API (policy.h) -------------------------------------------------- */

static BoxTemporal *ensure(BoxPolicy *pol) {
  if (!pol->temporal) {
    pol->temporal = temporal_new();
    pol->temporal->clock = real_clock;
    pol->temporal->hist = history_new();
  }
  return pol->temporal;
}

bool box_policy_open_history(BoxPolicy *pol, const char *dir, GError **error) {
  BoxTemporal *t = ensure(pol);
  g_mutex_lock(&t->lock);
  history_free(t->hist);
  for (guint i = 0; i < t->static_preds->len; i++) tmatch_clear(((Watch *)t->static_preds->pdata[i])->m);
  t->hist = history_new();
  bool ok = history_attach_file(t->hist, dir, t, error) && register_formulas(t, error);
  if (ok) prune(t);
  else {
    /* a box that cannot keep its history denies everything */
    set_fault(t, g_strdup((error && *error) ? (*error)->message : "the history could not be opened"));
  }
  g_mutex_unlock(&t->lock);
  return ok;
}

void box_policy_set_clock(BoxPolicy *pol, int64_t (*clock)(void *data), void *data) {
  BoxTemporal *t = ensure(pol);
  g_mutex_lock(&t->lock);
  t->clock = clock ? clock : real_clock;
  t->clock_data = data;
  g_mutex_unlock(&t->lock);
}

static bool record(BoxPolicy *pol, const char *action, EventKind kind, json_object *input, json_object *output) {
  if (!pol) return false;
  int ai = policy_action_index(action);
  if (ai < 0) return false;
  BoxTemporal *t = ensure(pol);
  g_mutex_lock(&t->lock);
  bool ok = !t->faulted;
  if (ok) {
    char *err = NULL;
    char *owned;
    uint64_t rq = pending_take(t, ai, policy_resource_label_borrowed(action, input, &owned));
    g_free(owned);
    ok = history_append(t->hist, t, ai, kind, input, output, t->clock(t->clock_data), rq, NULL, &err);
    if (!ok) set_fault(t, err);
    else prune(t);
  }
  g_mutex_unlock(&t->lock);
  return ok;
}

bool box_policy_record_response(BoxPolicy *pol, const char *action, json_object *input, json_object *output) {
  return record(pol, action, EV_RESPONSE, input, output);
}

bool box_policy_record_error(BoxPolicy *pol, const char *action, json_object *input) {
  return record(pol, action, EV_ERROR, input, NULL);
}

static void put_outputs(gpointer p) {
  json_object **o = p;
  for (int i = 0; i < 3; i++)
    if (o[i]) json_object_put(o[i]);
  g_free(o);
}
/* json-c objects are not shared between threads: rendering one writes into it */
static GPrivate outputs_key = G_PRIVATE_INIT(put_outputs);

bool box_policy_record_outcome(BoxPolicy *pol, const char *action, json_object *input, const char *result) {
  if (!result) return record(pol, action, EV_ERROR, input, NULL);
  static const char *const common[3] = {"completed", "descriptor_issued", "indeterminate"};
  int k = 0;
  while (k < 3 && strcmp(result, common[k]) != 0) k++;
  json_object **cached = g_private_get(&outputs_key);
  if (k < 3 && !cached) {
    cached = g_new0(json_object *, 3);
    g_private_set(&outputs_key, cached);
  }
  json_object *output = k < 3 ? cached[k] : NULL;
  if (!output) {
    output = json_object_new_object();
    json_object_object_add(output, "result", json_object_new_string(result));
    if (k < 3) cached[k] = output;
  }
  bool ok = record(pol, action, EV_RESPONSE, input, output);
  if (k == 3) json_object_put(output);
  return ok;
}

bool box_policy_record_status(BoxPolicy *pol, const char *action, json_object *input, int status) {
  json_object *out = json_object_new_object();
  json_object_object_add(out, "status", json_object_new_int(status));
  bool ok = record(pol, action, EV_RESPONSE, input, out);
  json_object_put(out);
  return ok;
}

void box_policy_history_stats(BoxPolicy *pol, size_t *events, size_t *bytes) {
  *events = *bytes = 0;
  if (!pol || !pol->temporal) return;
  BoxTemporal *t = pol->temporal;
  g_mutex_lock(&t->lock);
  *events = history_count(t->hist);
  *bytes = history_memory(t->hist);
  for (guint i = 0; i < t->static_preds->len; i++) *bytes += tmatch_memory(((Watch *)t->static_preds->pdata[i])->m);
  g_mutex_unlock(&t->lock);
}

bool box_policy_record_request(BoxPolicy *pol, const char *action, json_object *input, bool permitted) {
  int ai = policy_action_index(action);
  if (!pol || !pol->temporal || ai < 0) return pol != NULL;
  const char *why = NULL;
  if (!policy_temporal_begin(pol, ai, input, &why)) return false;
  char *owned;
  policy_temporal_end(pol, permitted, ai, policy_resource_label_borrowed(action, input, &owned));
  g_free(owned);
  return true;
}

bool box_policy_reads_history(const BoxPolicy *pol) {
  return pol && pol->temporal && pol->temporal->formulas && pol->temporal->formulas->len > 0;
}

const char *box_policy_history_fault(BoxPolicy *pol) {
  return pol && pol->temporal && pol->temporal->faulted ? pol->temporal->fault : NULL;
}
