/* history.c — the history a policy keeps (policy/history.h): each
 * decision's ::request event and its evaluation of the history rules
 * (history_hooks.h), the outcomes their raisers record, matched to their
 * requests (requestId, spec/policy.md §2.3), the durable file, batches,
 * and the fault that denies everything once the history cannot be kept. */
#include "policy/history.h"
#include "policy/history_hooks.h"
#include "policy/message.h"
#include "policy/temporal_eval.h"

#include <stdio.h>
#include <string.h>

void policy_temporal_free(BoxPolicy *pol)
{
  if (!pol->temporal) return;
  temporal_free(pol->temporal);
  pol->temporal = NULL;
}

/* ---- decisions ---------------------------------------------------------------- */

static void set_fault(BoxTemporal *t, char *why)
{
  t->faulted = true;
  g_free(t->fault);
  const char *prefix = "policy history failure: ";
  if (g_str_has_prefix(why, prefix)) prefix = "";
  t->fault = g_strdup_printf(
    "%s%s; every request is denied until the box restarts with a history it can write", prefix,
    why);
  g_free(why);
  fprintf(stderr, "box: error: %s\n", t->fault);
}

bool policy_temporal_begin(BoxPolicy *pol, int action, json_object *input, const char **why)
{
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
  if (!history_append(t->hist, action, EV_REQUEST, input, NULL, t->clock(t->clock_data),
                      T_OWN_REQUEST, &seq, &err)) {
    set_fault(t, err);
    *why = t->fault;
    g_mutex_unlock(&t->lock);
    return false;
  }
  t->cur_appended = true;
  t->cur_seq = seq;
  temporal_prune(t);
  for (guint i = 0; i < t->formulas->len; i++) {
    TFormula *F = t->formulas->pdata[i];
    if (!F->rule || !F->rule->applies[action]) continue;
    F->value = temporal_eval_formula(t, F, seq, action, input);
  }
  return true;
}

/* ---- requestId correlation (§2.3) -------------------------------------------- */

static uint64_t label_hash(const char *s)
{
  uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
  return h;
}

static unsigned pend_home(int action, uint64_t h)
{
  uint64_t x = (h ^ ((uint64_t)(unsigned)action * UINT64_C(0x9E3779B97F4A7C15))) *
               UINT64_C(0xff51afd7ed558ccd);
  return (unsigned)(x >> 40) & (T_PENDING_INDEX - 1);
}

/* The index slot of (action, h), or -1. */
static int pend_find(const BoxTemporal *t, int action, uint64_t h)
{
  for (unsigned i = pend_home(action, h);; i = (i + 1) & (T_PENDING_INDEX - 1)) {
    if (!t->pend_index[i].used) return -1;
    if (t->pend_index[i].action == action && t->pend_index[i].label_hash == h) return (int)i;
  }
}

/* Frees slot i, moving later slots of its probe run back so that every
 * lookup still reaches its key before an empty slot. */
static void pend_unindex(BoxTemporal *t, unsigned i)
{
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
static void pend_unchain_head(BoxTemporal *t, unsigned k)
{
  int s = pend_find(t, t->pending[k].action, t->pending[k].label_hash);
  if (s < 0) return;
  if (t->pending[k].next < 0)
    pend_unindex(t, (unsigned)s);
  else
    t->pend_index[s].head = t->pending[k].next;
}

static void pending_push(BoxTemporal *t, int action, const char *label, uint64_t seq)
{
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
static uint64_t pending_take(BoxTemporal *t, int action, const char *label)
{
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

void policy_temporal_end(BoxPolicy *pol, bool permitted, int action, const char *label)
{
  BoxTemporal *t = pol->temporal;
  if (t->cur_appended && permitted) pending_push(t, action, label, t->cur_seq);
  t->cur_appended = false;
  g_mutex_unlock(&t->lock);
}

/* ---- public API (history.h) ------------------------------------------------- */

static BoxTemporal *ensure(BoxPolicy *pol)
{
  if (!pol->temporal) pol->temporal = temporal_new(pol);
  return pol->temporal;
}

bool box_policy_open_history(BoxPolicy *pol, const char *dir, GError **error)
{
  BoxTemporal *t = ensure(pol);
  g_mutex_lock(&t->lock);
  history_free(t->hist);
  temporal_clear_matches(t);
  t->hist = temporal_history_new(t);
  bool ok =
    history_attach_file(t->hist, dir, t->depth, error) && temporal_register_formulas(t, error);
  if (ok)
    temporal_prune(t);
  else {
    /* a box that cannot keep its history denies everything */
    set_fault(t,
              g_strdup((error && *error) ? (*error)->message : "the history could not be opened"));
  }
  g_mutex_unlock(&t->lock);
  return ok;
}

void box_policy_set_clock(BoxPolicy *pol, int64_t (*clock)(void *data), void *data)
{
  BoxTemporal *t = ensure(pol);
  g_mutex_lock(&t->lock);
  t->clock = clock ? clock : temporal_real_clock;
  t->clock_data = data;
  g_mutex_unlock(&t->lock);
}

static bool record(BoxPolicy *pol, const char *action, EventKind kind, json_object *input,
                   json_object *output)
{
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
    ok = history_append(t->hist, ai, kind, input, output, t->clock(t->clock_data), rq, NULL, &err);
    if (!ok)
      set_fault(t, err);
    else
      temporal_prune(t);
  }
  g_mutex_unlock(&t->lock);
  return ok;
}

bool box_policy_record_response(BoxPolicy *pol, const char *action, json_object *input,
                                json_object *output)
{
  return record(pol, action, EV_RESPONSE, input, output);
}

bool box_policy_record_error(BoxPolicy *pol, const char *action, json_object *input)
{
  return record(pol, action, EV_ERROR, input, NULL);
}

static void put_outputs(gpointer p)
{
  json_object **o = p;
  for (int i = 0; i < 3; i++)
    if (o[i]) json_object_put(o[i]);
  g_free(o);
}
/* json-c objects are not shared between threads: rendering one writes into it */
static GPrivate outputs_key = G_PRIVATE_INIT(put_outputs);

bool box_policy_record_outcome(BoxPolicy *pol, const char *action, json_object *input,
                               const char *result)
{
  if (!result) return record(pol, action, EV_ERROR, input, NULL);
  static const char *const common[3] = { "completed", "descriptor_issued", "indeterminate" };
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

bool box_policy_record_status(BoxPolicy *pol, const char *action, json_object *input, int status)
{
  json_object *out = json_object_new_object();
  json_object_object_add(out, "status", json_object_new_int(status));
  bool ok = record(pol, action, EV_RESPONSE, input, out);
  json_object_put(out);
  return ok;
}

void box_policy_history_stats(BoxPolicy *pol, size_t *events, size_t *bytes)
{
  *events = *bytes = 0;
  if (!pol || !pol->temporal) return;
  BoxTemporal *t = pol->temporal;
  g_mutex_lock(&t->lock);
  *events = history_count(t->hist);
  *bytes = history_memory(t->hist);
  *bytes += temporal_matches_memory(t);
  g_mutex_unlock(&t->lock);
}

bool box_policy_record_request(BoxPolicy *pol, const char *action, json_object *input,
                               bool permitted)
{
  int ai = policy_action_index(action);
  if (!pol || !pol->temporal || ai < 0) return pol != NULL;
  const char *why = NULL;
  if (!policy_temporal_begin(pol, ai, input, &why)) return false;
  char *owned;
  policy_temporal_end(pol, permitted, ai, policy_resource_label_borrowed(action, input, &owned));
  g_free(owned);
  return true;
}

bool box_policy_reads_history(const BoxPolicy *pol)
{
  return pol && pol->temporal && pol->temporal->formulas && pol->temporal->formulas->len > 0;
}

const char *box_policy_history_fault(BoxPolicy *pol)
{
  return pol && pol->temporal && pol->temporal->faulted ? pol->temporal->fault : NULL;
}

/* ---- batches ------------------------------------------------------------------ */

void box_policy_history_batch_begin(BoxPolicy *pol)
{
  if (!pol || !pol->temporal) return;
  BoxTemporal *t = pol->temporal;
  g_mutex_lock(&t->lock);
  history_batch_begin(t->hist);
  g_mutex_unlock(&t->lock);
}

/* fn on the policy's history under its lock; a failure faults the policy */
static bool history_call(BoxPolicy *pol, bool (*fn)(History *h, char **why))
{
  if (!pol || !pol->temporal) return true;
  BoxTemporal *t = pol->temporal;
  g_mutex_lock(&t->lock);
  char *why = NULL;
  bool ok = fn(t->hist, &why);
  if (!ok) set_fault(t, why);
  g_mutex_unlock(&t->lock);
  return ok;
}

bool box_policy_history_batch_end(BoxPolicy *pol)
{
  return history_call(pol, history_batch_end);
}

bool box_policy_history_sync(BoxPolicy *pol)
{
  return history_call(pol, history_sync);
}
