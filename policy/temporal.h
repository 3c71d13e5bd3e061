/* temporal.h — history rules (issue 9, spec/policy.md §2, §3.5): the
 * temporal sub-language's AST, its evaluator and the event history.
 * Private to policy/. */
#ifndef BOX_POLICY_TEMPORAL_H
#define BOX_POLICY_TEMPORAL_H

#include <stdint.h>
#include <glib.h>
#include <json-c/json.h>
#include "policy/policy-private.h"

#define T_MAX_VARS 16
#define T_MAX_WINDOW_NS (INT64_C(86400) * 1000000000)
#define T_NS INT64_C(1000000000)
#define T_PENDING 1024
#define T_PENDING_INDEX 2048 /* a power of two, twice T_PENDING */
/* history_append: the event is its own request (a ::request, or an outcome
 * whose request is unknown) */
#define T_OWN_REQUEST UINT64_MAX

typedef enum { EV_REQUEST = 0, EV_RESPONSE = 1, EV_ERROR = 2 } EventKind;

/* A value in an event field, a literal or a variable binding. */
typedef enum { TV_NONE = 0, TV_LONG, TV_STR, TV_BOOL, TV_ENT } TValKind;
typedef struct {
  TValKind k;
  int64_t l;          /* TV_LONG, TV_BOOL; a Timepoint variable holds its seq here */
  const char *s;      /* TV_STR text / TV_ENT eid (borrowed) */
  size_t n;
  const char *etype;  /* TV_ENT type, interned */
} TVal;

/* ---- AST ---------------------------------------------------------------- */

typedef enum {
  TT_LIT, TT_WILD, TT_VAR, TT_CTX, TT_PRINCIPAL, TT_RESOURCE, TT_COUNT, TT_SUM,
} TTermKind;

typedef enum { VT_ANY, VT_TIMEPOINT, VT_LONG, VT_STRING, VT_ENTITY } TVarType;

typedef struct TForm TForm;

typedef struct {
  TTermKind kind;
  int line, col;
  TVal lit;            /* TT_LIT */
  int var;             /* TT_VAR slot; TT_SUM summed slot */
  char *ctx;           /* TT_CTX: the field after context.input. */
  int nfor;            /* TT_COUNT/TT_SUM: the for-list */
  int forv[T_MAX_VARS];
  TForm *body;         /* TT_COUNT/TT_SUM */
  int fast;            /* evaluator's fast path, 0 = none */
  struct TMatch *match; /* fast path's match list */
} TTerm;

typedef enum {
  TF_PRED, TF_TP, TF_CMP, TF_AND, TF_NOT, TF_FORMERLY, TF_PREVIOUS, TF_SINCE, TF_EXISTS,
} TFormKind;

typedef enum { TC_EQ, TC_NE, TC_LT, TC_LE, TC_GT, TC_GE } TCmp;

typedef struct {
  const char *path;    /* interned "input.path", "output.status", "callerPrincipal" */
  TTerm term;
} TField;

struct TForm {
  TFormKind kind;
  int line, col;
  /* TF_PRED */
  int action;          /* index in policy_actions */
  EventKind ev;
  TField *fields;
  int nfields;
  bool is_static;      /* every field a literal or wildcard */
  struct TMatch *match; /* match list of a static predicate */
  /* TF_TP: var; TF_EXISTS: var */
  int var;
  /* TF_CMP */
  TCmp cmp;
  TTerm *l, *r;
  /* TF_AND/TF_SINCE: a, b (since: a since b); TF_NOT/TF_FORMERLY/TF_PREVIOUS/TF_EXISTS: a */
  TForm *a, *b;
  int64_t window;      /* ns */
  char *window_text;   /* as written, "48h" */
  int fast;
  uint32_t uses;       /* bit per variable slot occurring in the subtree */
};

/* One temporal block (a clause). */
typedef struct TFormula {
  TForm *root;
  int nvars;
  char *var_names[T_MAX_VARS];
  TVarType var_types[T_MAX_VARS];
  char *var_etype[T_MAX_VARS];
  int line, col;
  const Rule *rule;    /* set at validation */
  char *canonical;     /* canonical rendering: the key of its state */
  uint64_t min_seq;    /* events before this seq are not its history (§3.5) */
  int64_t depth;       /* deepest look-back, ns */
  bool value;          /* its value at the decision in progress */
  GPtrArray *allocs;
} TFormula;

/* Parses `temporal { … }` at toks[*pos] (the `temporal` keyword).  On
 * success *pos is past the closing brace. */
TFormula *policy_temporal_parse(BoxPolicy *pol, const Token *toks, size_t ntoks, size_t *pos, GError **error);
void policy_temporal_formula_free(TFormula *f);
char *policy_temporal_render(const TFormula *f);

/* Load checks of §2.6 (schema class); also builds the policy's history
 * state.  Called by policy_validate after cap-as-permit. */
bool policy_temporal_validate(BoxPolicy *pol, GError **error);
void policy_temporal_free(BoxPolicy *pol);

/* ---- events and history ------------------------------------------------- */

typedef struct {
  const char *path;  /* interned */
  TVal v;
} EvField;

typedef struct {
  int64_t ts;        /* ns */
  int action;
  EventKind kind;
  int nf;
  EvField *f;        /* sorted by path pointer; strings in the same block */
} Event;

/* A static predicate's matches: seqs and timestamps, ascending; optional
 * running sum of one Long field. */
typedef struct TMatch {
  GArray *seq;   /* uint64_t */
  GArray *ts;    /* int64_t */
  GArray *psum;  /* __int128 running sums, or NULL */
  const char *sum_path;
  size_t start;  /* first live entry */
} TMatch;

typedef struct History History;

typedef struct BoxTemporal {
  GMutex lock;
  GPtrArray *formulas;   /* TFormula*, owned */
  GPtrArray *static_preds; /* TForm* of every static predicate */
  History *hist;
  int64_t depth;         /* deepest look-back over all formulas, ns */
  int64_t (*clock)(void *data);
  void *clock_data;
  bool faulted;
  char *fault;           /* why */
  bool warned;
  /* requestId (§2.3): a ::request's id is "req-<its seq>"; a permitted
   * request waits here until its raiser records the outcome, which then
   * carries the same id (matched by action and resource label, oldest
   * first).  A ring: requests whose outcome never comes fall off. */
  struct { int action; uint64_t label_hash; uint64_t seq; int next; } pending[T_PENDING];
  unsigned pend_head, pend_len;
  /* The waiting requests of each (action, label hash), oldest first, as a
   * chain through pending[].next: an outcome finds its request without
   * scanning the ring (requests that never get an outcome, a lookup's
   * probe for one, keep it full).  Open addressing, linear probing. */
  struct { bool used; int action; uint64_t label_hash; int head, tail; } pend_index[T_PENDING_INDEX];
  bool cur_appended;     /* the decision in progress appended its ::request */
  uint64_t cur_seq;
} BoxTemporal;

BoxTemporal *temporal_new(void);

/* history.c */
History *history_new(void);
void history_free(History *h);
bool history_attach_file(History *h, const char *dir, BoxTemporal *t, GError **error);
/* Between these two (called with the lock held, by one thread), that
 * thread's records are gathered and written in one write(2) at the end. */
void history_batch_begin(History *h);
bool history_batch_end(History *h, char **why);
/* temporal_eval.c: the history failed (why is taken); every request is
 * denied from now on.  With the lock held. */
void policy_temporal_fault(BoxTemporal *t, char *why);
/* Appends an event (copying it) at ts; returns its seq, or false on a
 * storage failure with *why set. */
bool history_append(History *h, BoxTemporal *t, int action, EventKind kind, json_object *input,
                    json_object *output, int64_t ts, uint64_t request_seq, uint64_t *seq, char **why);
int64_t history_last_ts(const History *h);
uint64_t history_next_seq(const History *h);
uint64_t history_first_seq(const History *h);
const Event *history_get(const History *h, uint64_t seq);
/* Smallest live seq whose ts >= ts (next_seq when none). */
uint64_t history_seq_at_or_after(const History *h, int64_t ts);
void history_prune(History *h, int64_t keep_from_ts);
size_t history_memory(const History *h);
size_t history_count(const History *h);
/* The recorded first seq of a formula's canonical text, registering it at
 * next_seq when new. */
uint64_t history_formula_seq(History *h, const char *canonical, char **why);
void history_flush(History *h);
/* Writes the deferred records (no fsync); false when a write failed. */
bool history_sync(History *h, char **why);
bool history_has_file(const History *h);

/* events.c: builds the event fields from a request's JSON. */
/* request_seq: the seq of the ::request this event belongs to (its
 * requestId is "req-<request_seq>"). */
Event *event_build(int action, EventKind kind, json_object *input, json_object *output, int64_t ts,
                   uint64_t request_seq);
void event_free(Event *e);
const TVal *event_field(const Event *e, const char *path);
size_t event_size(const Event *e);
bool tval_eq(const TVal *a, const TVal *b);

/* temporal_eval.c */
void temporal_on_event(BoxTemporal *t, uint64_t seq, const Event *e);
bool temporal_eval_formula(BoxTemporal *t, TFormula *f, uint64_t seq, int action, json_object *input);
void tmatch_free(TMatch *m);
void tmatch_prune(TMatch *m, uint64_t first_seq);
size_t tmatch_memory(const TMatch *m);

/* Hooks in eval.c (box_policy_decide): appends the ::request event and
 * evaluates every temporal clause for this request.  Returns false on a
 * history fault (*why: the reason, borrowed).  Holds the temporal lock
 * until policy_temporal_end. */
bool policy_temporal_begin(BoxPolicy *pol, int action, json_object *input, const char **why);
/* permitted: the decision's verdict; a permitted request then awaits its
 * outcome (requestId correlation).  label: the request's resource label. */
void policy_temporal_end(BoxPolicy *pol, bool permitted, int action, const char *label);
bool policy_temporal_clause(const Clause *c);

#endif
