/* policy-private.h — internals shared by the policy/ sources.  Nothing
 * outside policy/ includes this file. */
#ifndef BOX_POLICY_PRIVATE_H
#define BOX_POLICY_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "policy/policy.h"

/* ---- lexer ------------------------------------------------------------ */

typedef enum {
  TOK_EOF,
  TOK_IDENT,
  TOK_STRING, /* text/len = raw body between the quotes, still escaped */
  TOK_INT,    /* ival; int_big when the digits exceed 2^63 */
  TOK_LPAREN, TOK_RPAREN, TOK_LBRACKET, TOK_RBRACKET, TOK_LBRACE, TOK_RBRACE,
  TOK_COMMA, TOK_SEMI, TOK_COLON, TOK_COLONCOLON, TOK_DOT, TOK_AT, TOK_QUESTION, TOK_DOLLAR,
  TOK_EQEQ, TOK_NE, TOK_LT, TOK_LE, TOK_GT, TOK_GE, TOK_ASSIGN,
  TOK_AND, TOK_OR, TOK_BANG, TOK_PLUS, TOK_MINUS, TOK_STAR, TOK_SLASH, TOK_PERCENT,
  TOK_PIPE, TOK_AMP,
} TokKind;

typedef struct {
  TokKind kind;
  int line, col;
  const char *text;
  size_t len;
  uint64_t ival;
  bool int_big;
} Token;

/* Tokenizes text (NUL-terminated).  Returns a GArray of Token, or NULL with
 * *error set (parse class, message already prefixed and positioned). */
GArray *policy_lex(const char *text, GError **error);
const char *policy_tok_name(TokKind kind);

/* ---- AST -------------------------------------------------------------- */

typedef enum {
  E_BOOL, E_LONG, E_STRING, E_ENTITY, E_VAR, E_SET, E_RECORD,
  E_IF, E_OR, E_AND, E_NOT, E_NEG,
  E_EQ, E_NE, E_LT, E_LE, E_GT, E_GE, E_IN,
  E_ADD, E_SUB, E_MUL,
  E_HAS, E_LIKE, E_IS,
  E_GETATTR, E_METHOD,
  E_EXT,      /* extension constructor decimal/ip/datetime/duration("lit"): ext = kind, a = argument */
  E_TEMPORAL, /* inline `temporal { … }` (§1.3 primary): tf = the parsed body, a Bool */
} ExprKind;

typedef enum { VAR_PRINCIPAL, VAR_ACTION, VAR_RESOURCE, VAR_CONTEXT } VarKind;
typedef enum {
  M_CONTAINS, M_CONTAINS_ALL, M_CONTAINS_ANY, M_IS_EMPTY,
  /* decimal */
  M_LESS_THAN, M_LESS_THAN_OR_EQUAL, M_GREATER_THAN, M_GREATER_THAN_OR_EQUAL,
  /* ipaddr */
  M_IS_IPV4, M_IS_IPV6, M_IS_LOOPBACK, M_IS_MULTICAST, M_IS_IN_RANGE,
  /* datetime */
  M_OFFSET, M_DURATION_SINCE, M_TO_DATE, M_TO_TIME,
  /* duration */
  M_TO_MILLISECONDS, M_TO_SECONDS, M_TO_MINUTES, M_TO_HOURS, M_TO_DAYS,
  /* entity tags */
  M_GET_TAG, M_HAS_TAG,
} MethodKind;

typedef enum { EXT_DECIMAL, EXT_IP, EXT_DATETIME, EXT_DURATION } ExtKind;

/* An ip("…") literal: address bytes (IPv4 in the first 4) and prefix. */
typedef struct {
  bool v6;
  unsigned char addr[16];
  int prefix;
} IpValue;

/* Parses extension literals; false when the text is not a valid literal.
 * decimal → value × 10^4; datetime → ms since the epoch; duration → ms. */
bool policy_parse_decimal(const char *s, size_t n, int64_t *out);
bool policy_parse_ip(const char *s, size_t n, IpValue *out);
bool policy_parse_datetime(const char *s, size_t n, int64_t *out);
bool policy_parse_duration(const char *s, size_t n, int64_t *out);

typedef struct Expr Expr;
struct Expr {
  ExprKind kind;
  int line, col;
  Expr *a, *b, *c;     /* operands; E_GETATTR/E_HAS/E_METHOD/E_LIKE/E_IS: a = object */
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
  Expr **ents;  /* entity refs (E_ENTITY); SC_IS/SC_IS_IN: ents[0] for the `in` part */
  size_t nents;
  char *is_type;
} ScopeConstraint;

typedef struct {
  bool is_when;
  Expr *expr;
  /* `when temporal { … }` / `unless temporal { … }` (issue 9): the body's
   * source text; expr is then NULL.  Nothing sets it yet. */
  bool temporal;
  char *temporal_src;
  struct TFormula *tf; /* issue 9: the parsed temporal body (policy/temporal.h) */
} Clause;

typedef struct {
  char *key;
  char *value; /* may be NULL (annotation without value) */
  int line, col;
} Annotation;

#define POLICY_MAX_ACTIONS 16

typedef struct {
  int index;       /* 0-based file position: engine id policy_<index> */
  bool forbid;
  int line, col;   /* of the effect keyword */
  char *engine_id; /* "policy_N" */
  char *id;        /* non-blank @id value or NULL */
  int id_line, id_col;
  char *description; /* non-blank @description or NULL */
  char *label;     /* @id if non-blank, else engine_id */
  Annotation *annotations;
  size_t nannotations;
  ScopeConstraint principal, action, resource;
  Clause *clauses;
  size_t nclauses;
  /* filled by schema validation */
  bool applies[POLICY_MAX_ACTIONS];
  bool has_temporal; /* some clause (or inline block) is temporal */
  struct TFormula **inline_tf; /* inline `temporal { … }` blocks in its conditions, in source order */
  size_t ninline_tf;
} Rule;

struct BoxPolicy {
  Rule *rules;
  size_t nrules;
  /* per action: the rules that apply to it, in file order (filled at load) */
  const Rule **by_action[POLICY_MAX_ACTIONS];
  size_t nby_action[POLICY_MAX_ACTIONS];
  GPtrArray *allocs;   /* every AST allocation, freed with the policy */
  GPtrArray *warnings; /* char* */
  struct BoxTemporal *temporal; /* issue 9: history rules and their history (policy/temporal.h) */
};

/* Records p in policy->allocs (for freeing) and returns it. */
void *policy_own(BoxPolicy *policy, void *p);

/* ---- schema ----------------------------------------------------------- */

typedef enum { FT_STRING, FT_LONG, FT_BOOL, FT_ENUM, FT_SET_STRING } FieldType;

typedef struct {
  const char *name;
  FieldType type;
  bool optional;
} FieldDecl;

typedef struct {
  const char *term;       /* "fs:read" */
  const char *enum_type;  /* "Box::FsReadOperation" for the operation field, else NULL */
  const FieldDecl *input;
  size_t ninput;
  const FieldDecl *output; /* NULL when the action declares no output */
  size_t noutput;
} ActionDecl;

extern const ActionDecl policy_actions[];
extern const size_t policy_nactions;

/* Index of an action term in policy_actions, or -1. */
int policy_action_index(const char *term);
const FieldDecl *policy_field(const FieldDecl *fields, size_t n, const char *name, size_t len);
/* True if eid is a declared value of the enumerated entity type. Sets
 * *is_enum to whether the type is an enum at all. */
bool policy_enum_has(const char *type, const char *eid, size_t len, bool *is_enum);
bool policy_entity_type_known(const char *type);

/* Load checks after parsing (duplicate @id, reserved action, validation).
 * Fills Rule.applies. */
bool policy_validate(BoxPolicy *policy, const char *operator_home, GError **error);

/* Strict typing of every rule's conditions against each applicable action
 * (typecheck.c); appends positioned errors to errs. */
void policy_typecheck_rule(const Rule *rule, const int *actions, int nactions, GPtrArray *errs);
/* Inert-literal check (inert.c, spec/policy.md §3.4).  Returns false with
 * *error set on a refusal; warnings are appended to policy->warnings. */
bool policy_check_inert(BoxPolicy *policy, const char *operator_home, GError **error);
/* Cap-as-permit check (§3.4); a no-op until temporal clauses parse. */
bool policy_check_cap_as_permit(BoxPolicy *policy, GError **error);
char *policy_rule_name(const Rule *r);

/* Checks a request's input against the action's closed record. */
bool policy_request_valid(int action, json_object *input, char **why);

/* ---- evaluation / messages -------------------------------------------- */

typedef enum { RES_FALSE = 0, RES_TRUE = 1, RES_ERROR = 2 } EvalResult;
EvalResult policy_eval_rule(const Rule *rule, int action, json_object *input);

bool policy_like_match(const char *s, size_t n, const char *pat, const unsigned char *wild,
                       size_t plen);

/* Message helpers (message.c). */
void policy_escape_debug(GString *out, const char *s, size_t maxbytes);
void policy_escape_annotation(GString *out, const char *s);
/* box_policy_resource_label without a copy where the input holds it (a
 * file decision's path); else the copy, also in *owned, to free */
const char *policy_resource_label_borrowed(const char *action, json_object *input, char **owned);
/* d's message, in a buffer the thread keeps (valid until its next message)
 * or, when it is capped, in *capped, which the caller frees. */
const char *policy_build_message(const BoxDecision *d, const Rule *const *forbids, size_t nforbids, char **capped);
char *policy_cap_utf8(const char *s, size_t max, const char *suffix);
/* decision_log.c: a decision's two log lines (with their newlines), hand
 * rendered; and the same through json-c objects, for the unit test. */
char *policy_decision_log_render(const BoxDecisionLog *log, const char *action, json_object *input,
                                 const BoxCommandArgs *command_args, const BoxDecision *decision,
                                 const char *nanos, const char *trace, const char *span);
char *policy_decision_log_render_ref(const BoxDecisionLog *log, const char *action, json_object *input,
                                     const BoxCommandArgs *command_args, const BoxDecision *decision,
                                     const char *nanos, const char *trace, const char *span);

#define POLICY_PARSE_CLASS "failed to parse policy source: "
#define POLICY_PARSE_PREFIX POLICY_PARSE_CLASS "dogwood parse: "
#define POLICY_PROVIDER_ERROR POLICY_PARSE_CLASS "dogwood: information providers are not enabled in this build"
#define POLICY_SCHEMA_PREFIX "policy fails schema validation: "
#define POLICY_UNKNOWN_ACTION_PREFIX "policy references unknown action: "
#define POLICY_SHARED_ID_PREFIX "policy gives one @id to more than one rule: "
#define POLICY_RESERVED_PREFIX "policy names only a reserved action: "
#define POLICY_INERT_PREFIX "policy compares an inert literal: "
#define POLICY_CAP_PREFIX "policy writes a cap as a permit: "

/* Appending to a GString without a call when it has room: the log and
 * the history are rendered from many short pieces on every decision (GString's fields are
 * public). */
static inline void policy_app_len(GString *o, const char *s, size_t n) {
  if (o->len + n < o->allocated_len) {
    memcpy(o->str + o->len, s, n);
    o->len += n;
    o->str[o->len] = '\0';
  } else {
    g_string_append_len(o, s, (gssize)n);
  }
}
static inline void policy_app(GString *o, const char *s) { policy_app_len(o, s, strlen(s)); }
static inline void policy_app_c(GString *o, char c) {
  if (o->len + 1 < o->allocated_len) {
    o->str[o->len++] = c;
    o->str[o->len] = '\0';
  } else {
    g_string_append_c(o, c);
  }
}

/* Appends rec as json_object_to_json_string_ext(rec, flags) renders it,
 * byte for byte: a flat record of strings, integers and booleans (every
 * request's input) is written here without json-c's printbuf and its
 * per-piece calls; anything else, or other flags, through json-c. */
void policy_json_append(GString *o, json_object *rec, int flags);

/* Appends s[0..n) with json-c's string escapes ('/' left as it is), eight
 * bytes a step while none needs escaping. */
void policy_json_escaped(GString *o, const char *s, size_t n);

/* As box_decision_pack, in one block with head bytes before the packed
 * decision (a multiple of 8: the caller's record of it); *block: the block,
 * to g_free. */
BoxPackedDecision *policy_decision_pack_after(const BoxDecision *d, const char *action, size_t head, void **block);

#endif
