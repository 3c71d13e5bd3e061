/* schema.h — the closed schema: the actions, their fields and the enumerated entities. */
#ifndef BOX_POLICY_SCHEMA_H
#define BOX_POLICY_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

/* The Box actions, then the generated ones (an MCP server's tools,
 * spec/policy.md "Per-tool action") registered while a box runs. */
#define POLICY_MAX_ACTIONS 256
#define POLICY_BOX_ACTIONS 10

typedef enum { FT_STRING, FT_LONG, FT_BOOL, FT_ENUM, FT_SET_STRING } FieldType;

typedef struct {
  const char *name;
  FieldType type;
  bool optional;
} FieldDecl;

typedef struct {
  const char *term;      /* "fs:read" */
  const char *enum_type; /* "Box::FsReadOperation" for the operation field, else NULL */
  const FieldDecl *input;
  size_t ninput;
  const FieldDecl *output; /* NULL when the action declares no output */
  size_t noutput;
  /* generated actions only (NULL on Box's): */
  const char *etype;  /* "demo::Action" */
  const char *id;     /* the tool's name */
  const char *server; /* the MCP server's own name, the resource label's head */
  bool recovered;     /* known from a history's events only: its fields come with its listing */
} ActionDecl;

/* Entries below policy_nactions never change once counted (a
 * registration fills its entry before it raises the count), but for a
 * recovered action's fields, which its registration fills in before any
 * request of it is decided. */
extern ActionDecl policy_actions[POLICY_MAX_ACTIONS];
#define policy_nactions (__atomic_load_n(&policy_actions_count, __ATOMIC_ACQUIRE))
extern size_t policy_actions_count;

/* The action's entity type and id: Box::Action and the term, or the
 * generated action's namespace and tool. */
const char *policy_action_etype(int action);
const char *policy_action_id(int action);
/* Index of the action ETYPE::"ID" (id of len bytes), or -1. */
int policy_action_lookup(const char *etype, const char *id, size_t len);
/* Whether ETYPE is "<ns>::Action" of a namespace box_policy_declare_namespace
 * declared: its actions are known once its server's tools are. */
bool policy_namespace_pending(const char *etype);

/* The index of a generated action a durable history names before its
 * server has listed its tools in this process (policy_action_index knows
 * it not): an entry without fields, so that its events are kept, until
 * box_policy_register_action gives it them.  -1 when term is no
 * generated action's or the table is full. */
int policy_action_recovered(const char *term);
/* Whether ACTION (an index, or -1) is known from more than a history: Box's
 * own, or a tool its server listed in this process.  A recovered tool its
 * server no longer lists is no action a rule may name. */
bool policy_action_listed(int action);

/* Index of an action term in policy_actions, or -1. */
int policy_action_index(const char *term);
const FieldDecl *policy_field(const FieldDecl *fields, size_t n, const char *name, size_t len);
/* True if eid is a declared value of the enumerated entity type. Sets
 * *is_enum to whether the type is an enum at all. */
bool policy_enum_has(const char *type, const char *eid, size_t len, bool *is_enum);
bool policy_entity_type_known(const char *type);

/* Checks a request's input against the action's closed record. */
bool policy_request_valid(int action, json_object *input, char **why);

#endif
