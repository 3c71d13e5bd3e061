/* policy-private.h — policy/'s model, which the lexer and every layer
 * above it share: the rules' AST, the policy that holds them, and the
 * texts that open each class of load error.  Nothing outside policy/
 * includes this file. */
#ifndef BOX_POLICY_PRIVATE_H
#define BOX_POLICY_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "policy/policy.h"
#include "policy/ext.h"
#include "policy/schema.h"

#define POLICY_PARSE_CLASS "failed to parse policy source: "
#define POLICY_PARSE_PREFIX POLICY_PARSE_CLASS "dogwood parse: "
#define POLICY_PROVIDER_ERROR                                                                      \
  POLICY_PARSE_CLASS "dogwood: information providers are not enabled in this build"
#define POLICY_SCHEMA_PREFIX "policy fails schema validation: "
#define POLICY_UNKNOWN_ACTION_PREFIX "policy references unknown action: "
#define POLICY_SHARED_ID_PREFIX "policy gives one @id to more than one rule: "
#define POLICY_RESERVED_PREFIX "policy names only a reserved action: "
#define POLICY_INERT_PREFIX "policy compares an inert literal: "
#define POLICY_CAP_PREFIX "policy writes a cap as a permit: "

typedef enum {
  E_BOOL,
  E_LONG,
  E_STRING,
  E_ENTITY,
  E_VAR,
  E_SET,
  E_RECORD,
  E_IF,
  E_OR,
  E_AND,
  E_NOT,
  E_NEG,
  E_EQ,
  E_NE,
  E_LT,
  E_LE,
  E_GT,
  E_GE,
  E_IN,
  E_ADD,
  E_SUB,
  E_MUL,
  E_HAS,
  E_LIKE,
  E_IS,
  E_GETATTR,
  E_METHOD,
  E_EXT, /* extension constructor decimal/ip/datetime/duration("lit"): ext = kind, a = argument */
  E_TEMPORAL, /* inline `temporal { … }` (§1.3 primary): tf = the parsed body, a Bool */
} ExprKind;

typedef enum { VAR_PRINCIPAL, VAR_ACTION, VAR_RESOURCE, VAR_CONTEXT } VarKind;
typedef enum {
  M_CONTAINS,
  M_CONTAINS_ALL,
  M_CONTAINS_ANY,
  M_IS_EMPTY,
  /* decimal */
  M_LESS_THAN,
  M_LESS_THAN_OR_EQUAL,
  M_GREATER_THAN,
  M_GREATER_THAN_OR_EQUAL,
  /* ipaddr */
  M_IS_IPV4,
  M_IS_IPV6,
  M_IS_LOOPBACK,
  M_IS_MULTICAST,
  M_IS_IN_RANGE,
  /* datetime */
  M_OFFSET,
  M_DURATION_SINCE,
  M_TO_DATE,
  M_TO_TIME,
  /* duration */
  M_TO_MILLISECONDS,
  M_TO_SECONDS,
  M_TO_MINUTES,
  M_TO_HOURS,
  M_TO_DAYS,
  /* entity tags */
  M_GET_TAG,
  M_HAS_TAG,
} MethodKind;

typedef enum { EXT_DECIMAL, EXT_IP, EXT_DATETIME, EXT_DURATION } ExtKind;

typedef struct Expr Expr;
struct Expr {
  ExprKind kind;
  int line, col;
  Expr *a, *b, *c; /* operands; E_GETATTR/E_HAS/E_METHOD/E_LIKE/E_IS: a = object */
  bool bval;
  int64_t lval;
  VarKind var;
  MethodKind method;
  char *str;           /* E_STRING value, E_GETATTR name, E_ENTITY id, E_LIKE pattern */
  size_t len;          /* its length (strings may hold NUL) */
  char *etype;         /* E_ENTITY / E_IS type, "Box::Action" */
  unsigned char *wild; /* E_LIKE: wild[i] != 0 when str[i] is a wildcard */
  Expr **items;        /* E_SET elements, E_RECORD values */
  char **keys;         /* E_RECORD keys, E_HAS path */
  size_t nitems;       /* count of items/keys */
  int height;          /* longest path to a leaf, bounded by the parser */
  ExtKind ext;         /* E_EXT */
  bool ext_ok;         /* E_EXT: the literal parsed (set by validation) */
  int64_t ext_l;       /* E_EXT decimal/datetime/duration value */
  IpValue ip;          /* E_EXT ip value */
  struct TFormula *tf; /* E_TEMPORAL */
};

typedef enum { SC_ANY, SC_EQ, SC_IN, SC_IS, SC_IS_IN, SC_IN_SET } ScopeOp;

typedef struct {
  ScopeOp op;
  int line, col;
  Expr **ents; /* entity refs (E_ENTITY); SC_IS/SC_IS_IN: ents[0] for the `in` part */
  size_t nents;
  char *is_type;
} ScopeConstraint;

typedef struct {
  bool is_when;
  Expr *expr;
  /* `when temporal { … }` / `unless temporal { … }`: expr is then NULL */
  bool temporal;
  char *temporal_src;
  struct TFormula *tf; /* the parsed temporal body (policy/temporal.h) */
} Clause;

typedef struct {
  char *key;
  char *value; /* may be NULL (annotation without value) */
  int line, col;
} Annotation;

typedef struct {
  int index; /* 0-based file position: engine id policy_<index> */
  bool forbid;
  int line, col;   /* of the effect keyword */
  char *engine_id; /* "policy_N" */
  char *id;        /* non-blank @id value or NULL */
  int id_line, id_col;
  char *description; /* non-blank @description or NULL */
  char *label;       /* @id if non-blank, else engine_id */
  Annotation *annotations;
  size_t nannotations;
  ScopeConstraint principal, action, resource;
  Clause *clauses;
  size_t nclauses;
  /* filled by schema validation */
  bool applies[POLICY_MAX_ACTIONS];
  bool has_temporal; /* some clause (or inline block) is temporal */
  struct TFormula *
    *inline_tf; /* inline `temporal { … }` blocks in its conditions, in source order */
  size_t ninline_tf;
} Rule;

struct BoxPolicy {
  Rule *rules;
  size_t nrules;
  /* per action: the rules that apply to it, in file order (filled at load) */
  const Rule **by_action[POLICY_MAX_ACTIONS];
  size_t nby_action[POLICY_MAX_ACTIONS];
  /* per action: indexed (a generated one once its namespace is installed) */
  bool installed[POLICY_MAX_ACTIONS];
  GPtrArray *allocs;            /* every AST allocation, freed with the policy */
  GPtrArray *warnings;          /* char* */
  GPtrArray *formulas;          /* every temporal block (TFormula*), in parse order, owned */
  struct BoxTemporal *temporal; /* the history rules' state (policy/temporal_eval.h), or NULL */
};

static inline bool policy_installed(const BoxPolicy *policy, int action)
{
  return __atomic_load_n(&policy->installed[action], __ATOMIC_ACQUIRE);
}

/* Records p in policy->allocs (for freeing) and returns it. */
static inline void *policy_own(BoxPolicy *policy, void *p)
{
  g_ptr_array_add(policy->allocs, p);
  return p;
}

#endif
