/* schema.h — the closed schema: the actions, their fields and the enumerated entities. */
#ifndef BOX_POLICY_SCHEMA_H
#define BOX_POLICY_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#define POLICY_MAX_ACTIONS 16

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

/* Checks a request's input against the action's closed record. */
bool policy_request_valid(int action, json_object *input, char **why);

#endif
