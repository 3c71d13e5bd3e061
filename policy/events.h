/* events.h — history events (spec/policy.md §2.3): the fields of a ::request,
 * ::response or ::error, as history rules read them. */
#ifndef BOX_POLICY_EVENTS_H
#define BOX_POLICY_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include <json-c/json.h>
#include "policy/schema.h"

/* The deepest look-back a history rule may have (§2.6): what the durable
 * history keeps. */
#define T_MAX_WINDOW_NS (INT64_C(86400) * 1000000000)

typedef enum { EV_REQUEST = 0, EV_RESPONSE = 1, EV_ERROR = 2 } EventKind;

/* A value in an event field, a literal or a variable binding. */
/* TV_SET: a set or record the event holds, which only `_` matches. */
typedef enum { TV_NONE = 0, TV_LONG, TV_STR, TV_BOOL, TV_ENT, TV_SET } TValKind;
typedef struct {
  TValKind k;
  int64_t l;     /* TV_LONG, TV_BOOL; a Timepoint variable holds its seq here */
  const char *s; /* TV_STR text / TV_ENT eid (borrowed) */
  size_t n;
  const char *etype; /* TV_ENT type, interned */
} TVal;

typedef struct {
  const char *path; /* interned */
  TVal v;
} EvField;

typedef struct {
  int64_t ts; /* ns */
  int action;
  EventKind kind;
  int nf;
  EvField *f; /* sorted by path pointer; strings in the same block */
} Event;

/* Builds the event fields from a request's JSON. */
/* request_seq: the seq of the ::request this event belongs to (its
 * requestId is "req-<request_seq>"). */
Event *event_build(int action, EventKind kind, json_object *input, json_object *output, int64_t ts,
                   uint64_t request_seq);
void event_free(Event *e);
const TVal *event_field(const Event *e, const char *path);
size_t event_size(const Event *e);
bool tval_eq(const TVal *a, const TVal *b);

#endif
