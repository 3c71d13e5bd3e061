/* temporal.h — history rules (spec/policy.md §2, §3.5): the temporal
 * sub-language's AST, its parser and its canonical rendering. */
#ifndef BOX_POLICY_TEMPORAL_H
#define BOX_POLICY_TEMPORAL_H

#include <stdint.h>
#include <glib.h>
#include "policy/policy-private.h"
#include "policy/lexer.h"
#include "policy/events.h"

#define T_MAX_VARS 16
#define T_NS INT64_C(1000000000)

typedef enum {
  TT_LIT,
  TT_WILD,
  TT_VAR,
  TT_CTX,
  TT_PRINCIPAL,
  TT_RESOURCE,
  TT_COUNT,
  TT_SUM,
} TTermKind;

typedef enum { VT_ANY, VT_TIMEPOINT, VT_LONG, VT_STRING, VT_ENTITY } TVarType;

typedef struct TForm TForm;

typedef struct {
  TTermKind kind;
  int line, col;
  TVal lit;  /* TT_LIT */
  int var;   /* TT_VAR slot; TT_SUM summed slot */
  char *ctx; /* TT_CTX: the field after context.input. */
  int nfor;  /* TT_COUNT/TT_SUM: the for-list */
  int forv[T_MAX_VARS];
  TForm *body;          /* TT_COUNT/TT_SUM */
  int fast;             /* evaluator's fast path, 0 = none */
  struct TMatch *match; /* fast path's match list */
} TTerm;

typedef enum {
  TF_PRED,
  TF_TP,
  TF_CMP,
  TF_AND,
  TF_NOT,
  TF_FORMERLY,
  TF_PREVIOUS,
  TF_SINCE,
  TF_EXISTS,
} TFormKind;

typedef enum { TC_EQ, TC_NE, TC_LT, TC_LE, TC_GT, TC_GE } TCmp;

typedef struct {
  const char *path; /* interned "input.path", "output.status", "callerPrincipal" */
  TTerm term;
} TField;

struct TForm {
  TFormKind kind;
  int line, col;
  /* TF_PRED */
  int action; /* index in policy_actions */
  /* A generated action's entity type and tool: its server may list its
   * tools after the load, so the action is -1 until
   * box_policy_install_actions resolves it (no event matches before). */
  const char *etype, *id;
  size_t idlen;
  EventKind ev;
  TField *fields;
  int nfields;
  bool is_static;       /* every field a literal or wildcard */
  struct TMatch *match; /* match list of a static predicate */
  /* TF_TP: var; TF_EXISTS: var */
  int var;
  /* TF_CMP */
  TCmp cmp;
  TTerm *l, *r;
  /* TF_AND/TF_SINCE: a, b (since: a since b); TF_NOT/TF_FORMERLY/TF_PREVIOUS/TF_EXISTS: a */
  TForm *a, *b;
  int64_t window;    /* ns */
  char *window_text; /* as written, "48h" */
  int fast;
  uint32_t uses; /* bit per variable slot occurring in the subtree */
};

/* One temporal block (a clause). */
typedef struct TFormula {
  TForm *root;
  int nvars;
  char *var_names[T_MAX_VARS];
  TVarType var_types[T_MAX_VARS];
  char *var_etype[T_MAX_VARS];
  int line, col;
  const Rule *rule; /* set at validation */
  char *canonical;  /* canonical rendering: the key of its state */
  uint64_t min_seq; /* events before this seq are not its history (§3.5) */
  int64_t depth;    /* deepest look-back, ns */
  bool value;       /* its value at the decision in progress */
  GPtrArray *allocs;
} TFormula;

/* Parses `temporal { … }` at the reader's token (the `temporal` keyword),
 * adding the formula to pol->formulas.  On success the reader is past the
 * closing brace; on failure r->err is set. */
TFormula *policy_temporal_parse(BoxPolicy *pol, TokReader *r);
void policy_temporal_formula_free(TFormula *f);
char *policy_temporal_render(const TFormula *f);

#endif
