/* events.c — history events (spec/policy.md §2.3): the fields of a
 * ::request, ::response or ::error event, built from the request's input
 * record and the effect's output record. */
#include "policy/temporal.h"

#include <string.h>

bool tval_eq(const TVal *a, const TVal *b) {
  if (a->k != b->k) return false;
  switch (a->k) {
  case TV_NONE: return false;
  case TV_LONG:
  case TV_BOOL: return a->l == b->l;
  case TV_ENT:
    if (a->etype != b->etype && strcmp(a->etype, b->etype) != 0) return false;
    /* fall through */
  case TV_STR: return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
  }
  return false;
}

typedef struct {
  const char *path;
  TValKind k;
  int64_t l;
  const char *s;
  size_t n;
  const char *etype;
} Pending;

static const char *field_enum(int action, bool output, const char *key) {
  if (strcmp(policy_actions[action].term, "fs:read") != 0 && strncmp(policy_actions[action].term, "fs:", 3) != 0)
    return NULL;
  if (!output && strcmp(key, "operation") == 0) return policy_actions[action].enum_type;
  if (output && strcmp(key, "result") == 0) return "Box::FsResponseResult";
  return NULL;
}

static void collect(GArray *out, int action, bool output, json_object *rec, size_t *strbytes) {
  if (!rec || !json_object_is_type(rec, json_type_object)) return;
  json_object_object_foreach(rec, key, val) {
    char *path = g_strconcat(output ? "output." : "input.", key, NULL);
    Pending p = {g_intern_string(path), TV_NONE, 0, NULL, 0, NULL};
    g_free(path);
    switch (json_object_get_type(val)) {
    case json_type_int:
      p.k = TV_LONG;
      p.l = json_object_get_int64(val);
      break;
    case json_type_boolean:
      p.k = TV_BOOL;
      p.l = json_object_get_boolean(val);
      break;
    case json_type_string: {
      p.s = json_object_get_string(val);
      p.n = (size_t)json_object_get_string_len(val);
      const char *et = field_enum(action, output, key);
      p.k = et ? TV_ENT : TV_STR;
      p.etype = et ? g_intern_string(et) : NULL;
      *strbytes += p.n + 1;
      break;
    }
    default:
      continue; /* sets and records: present in no predicate's equality */
    }
    g_array_append_val(out, p);
  }
}

Event *event_build(int action, EventKind kind, json_object *input, json_object *output, int64_t ts,
                   uint64_t request_seq) {
  GArray *pend = g_array_new(FALSE, FALSE, sizeof(Pending));
  size_t strbytes = 0;
  Pending cp = {g_intern_static_string("callerPrincipal"), TV_ENT, 0, "self", 4, g_intern_static_string("Box::Agent")};
  Pending cr = {g_intern_static_string("callerResource"), TV_ENT, 0, "unused", 6,
                g_intern_static_string("Box::Resource")};
  g_array_append_val(pend, cp);
  g_array_append_val(pend, cr);
  collect(pend, action, false, input, &strbytes);
  if (kind == EV_RESPONSE) collect(pend, action, true, output, &strbytes);
  char rid[32];
  int rn = g_snprintf(rid, sizeof rid, "req-%" G_GUINT64_FORMAT, request_seq);
  Pending rq = {g_intern_static_string("requestId"), TV_STR, 0, rid, (size_t)rn, NULL};
  g_array_append_val(pend, rq);
  strbytes += (size_t)rn + 1;
  size_t nf = pend->len;
  size_t size = sizeof(Event) + nf * sizeof(EvField) + strbytes;
  Event *e = g_malloc(size);
  e->ts = ts;
  e->action = action;
  e->kind = kind;
  e->nf = (int)nf;
  e->f = (EvField *)(e + 1);
  char *str = (char *)(e->f + nf);
  for (size_t i = 0; i < nf; i++) {
    Pending *p = &g_array_index(pend, Pending, i);
    EvField *f = &e->f[i];
    f->path = p->path;
    f->v.k = p->k;
    f->v.l = p->l;
    f->v.n = p->n;
    f->v.etype = p->etype;
    f->v.s = p->s;
    if (p->s && i >= 2) {
      memcpy(str, p->s, p->n);
      str[p->n] = '\0';
      f->v.s = str;
      str += p->n + 1;
    }
  }
  g_array_free(pend, TRUE);
  return e;
}

void event_free(Event *e) { g_free(e); }

const TVal *event_field(const Event *e, const char *path) {
  for (int i = 0; i < e->nf; i++)
    if (e->f[i].path == path) return &e->f[i].v;
  return NULL;
}

size_t event_size(const Event *e) {
  size_t n = sizeof(Event) + (size_t)e->nf * sizeof(EvField);
  for (int i = 0; i < e->nf; i++)
    if (e->f[i].v.s && i >= 2) n += e->f[i].v.n + 1;
  return n;
}
