/* temporal_eval.h — evaluation of history rules against the history, and the state
 * they keep (match lists, the history, the clock, a fault). */
#ifndef BOX_POLICY_TEMPORAL_EVAL_H
#define BOX_POLICY_TEMPORAL_EVAL_H

#include "policy/temporal.h"
#include "policy/history_store.h"

#define T_PENDING 1024
#define T_PENDING_INDEX 2048 /* a power of two, twice T_PENDING */

/* The evaluator's fast paths (TForm.fast, TTerm.fast), chosen at load. */
enum { FAST_NONE = 0, FAST_COUNT, FAST_SUM, FAST_FORMERLY, FAST_SINCE };

/* A static predicate's matches: seqs and timestamps, ascending; optional
 * running sum of one Long field. */
typedef struct TMatch {
  GArray *seq;  /* uint64_t */
  GArray *ts;   /* int64_t */
  GArray *psum; /* __int128 running sums, or NULL */
  const char *sum_path;
  size_t start; /* first live entry */
} TMatch;

typedef struct BoxTemporal {
  GMutex lock;
  GPtrArray *formulas;     /* TFormula*, the policy's (BoxPolicy.formulas) */
  GPtrArray *static_preds; /* every static predicate with its match list (temporal_eval.c) */
  History *hist;
  int64_t depth; /* deepest look-back over all formulas, ns */
  int64_t (*clock)(void *data);
  void *clock_data;
  bool faulted;
  char *fault; /* why */
  bool warned;
  /* requestId (§2.3): a ::request's id is "req-<its seq>"; a permitted
   * request waits here until its raiser records the outcome, which then
   * carries the same id (matched by action and resource label, oldest
   * first).  A ring: requests whose outcome never comes fall off. */
  struct {
    int action;
    uint64_t label_hash;
    uint64_t seq;
    int next;
  } pending[T_PENDING];
  unsigned pend_head, pend_len;
  /* The waiting requests of each (action, label hash), oldest first, as a
   * chain through pending[].next: an outcome finds its request without
   * scanning the ring (requests that never get an outcome, a lookup's
   * probe for one, keep it full).  Open addressing, linear probing. */
  struct {
    bool used;
    int action;
    uint64_t label_hash;
    int head, tail;
  } pend_index[T_PENDING_INDEX];
  bool cur_appended; /* the decision in progress appended its ::request */
  uint64_t cur_seq;
} BoxTemporal;

/* State for the policy's formulas (pol->formulas), with an empty
 * in-memory history and the wall clock. */
BoxTemporal *temporal_new(BoxPolicy *pol);
void temporal_free(BoxTemporal *t);
/* The wall clock, in ns since the epoch. */
int64_t temporal_real_clock(void *data);
/* A fresh in-memory history for t, watched when some formula reads it. */
History *temporal_history_new(BoxTemporal *t);
/* Registers each formula's canonical text with the history (its first
 * seq); false with *error set when the history cannot be written. */
bool temporal_register_formulas(BoxTemporal *t, GError **error);
/* Drops events and matches older than the deepest look-back. */
void temporal_prune(BoxTemporal *t);
/* Empties every match list (the history is replaced). */
void temporal_clear_matches(BoxTemporal *t);
/* Bytes the match lists take. */
size_t temporal_matches_memory(const BoxTemporal *t);
/* A match list for the static predicate p, kept from now on. */
TMatch *temporal_watch(BoxTemporal *t, const TForm *p, const char *sum_path);
/* f's value at the request of seq. */
bool temporal_eval_formula(BoxTemporal *t, TFormula *f, uint64_t seq, int action,
                           json_object *input);

#endif
