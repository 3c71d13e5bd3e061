/* events.c — history events (spec/policy.md §2.3): the fields of a
 * ::request, ::response or ::error event, built from the request's input
 * record and the effect's output record. */
#include "policy/events.h"
#include "policy/json_out.h"

#include <string.h>

bool tval_eq(const TVal *a, const TVal *b)
{
  if (a->k != b->k) return false;
  switch (a->k) {
  case TV_NONE:
  case TV_SET: return false;
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

/* The interned names an event needs, looked up once rather than per event
 * (g_intern_string takes a global lock and hashes): the "input.<field>" and
 * "output.<field>" paths of each action's declared fields, and each
 * action's enum-typed field. */
typedef struct {
  const char **in, **out; /* parallel to policy_actions[a].input / .output */
  const char *op_enum;    /* fs:*: the operation field's type, else NULL */
} ActionNames;

static ActionNames names[POLICY_MAX_ACTIONS];
static const char *n_cp, *n_cr, *n_rid, *n_agent, *n_resource, *n_fsresult;

static const char **intern_fields(const char *prefix, const FieldDecl *f, size_t n)
{
  const char **out = g_new0(const char *, n + 1);
  for (size_t i = 0; i < n; i++) {
    char *path = g_strconcat(prefix, f[i].name, NULL);
    out[i] = g_intern_string(path);
    g_free(path);
  }
  return out;
}

static void names_init(void)
{
  static gsize once = 0;
  if (!g_once_init_enter(&once)) return;
  n_cp = g_intern_static_string("callerPrincipal");
  n_cr = g_intern_static_string("callerResource");
  n_rid = g_intern_static_string("requestId");
  n_agent = g_intern_static_string("Box::Agent");
  n_resource = g_intern_static_string("Box::Resource");
  n_fsresult = g_intern_static_string("Box::FsResponseResult");
  /* Box's own: a generated action's fields may come later (a recovered one's) */
  for (size_t a = 0; a < POLICY_BOX_ACTIONS; a++) {
    const ActionDecl *d = &policy_actions[a];
    names[a].in = intern_fields("input.", d->input, d->ninput);
    names[a].out = intern_fields("output.", d->output, d->output ? d->noutput : 0);
    names[a].op_enum =
      strncmp(d->term, "fs:", 3) == 0 && d->enum_type ? g_intern_string(d->enum_type) : NULL;
  }
  g_once_init_leave(&once, 1);
}

/* The interned path of key: the declared field's, else interned now. */
static const char *field_path(int action, bool output, const char *key)
{
  const ActionDecl *d = &policy_actions[action];
  const FieldDecl *f = output ? d->output : d->input;
  size_t n = output ? (d->output ? d->noutput : 0) : d->ninput;
  const char **paths = output ? names[action].out : names[action].in;
  /* an action registered after the names were looked up (a server's
   * tool) has its paths interned here */
  for (size_t i = 0; paths && i < n; i++)
    if (strcmp(f[i].name, key) == 0) return paths[i];
  char *path = g_strconcat(output ? "output." : "input.", key, NULL);
  const char *r = g_intern_string(path);
  g_free(path);
  return r;
}

static const char *field_enum(int action, bool output, const char *key)
{
  if (strncmp(policy_actions[action].term, "fs:", 3) != 0) return NULL;
  if (!output && strcmp(key, "operation") == 0)
    return names[action].op_enum ? names[action].op_enum : policy_actions[action].enum_type;
  if (output && strcmp(key, "result") == 0) return n_fsresult;
  return NULL;
}

static size_t collect(Pending *out, int action, bool output, json_object *rec, size_t *strbytes)
{
  size_t np = 0;
  if (!rec || !json_object_is_type(rec, json_type_object)) return 0;
  json_object_object_foreach (rec, key, val) {
    Pending p = { NULL, TV_NONE, 0, NULL, 0, NULL };
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
      p.etype = et; /* interned by names_init */
      *strbytes += p.n + 1;
      break;
    }
    case json_type_array:
    case json_type_object:
      p.k = TV_SET; /* in no predicate's equality, but there for `_` */
      break;
    default: continue;
    }
    p.path = field_path(action, output, key);
    out[np++] = p;
  }
  return np;
}

static size_t rec_len(json_object *rec)
{
  return rec && json_object_is_type(rec, json_type_object) ? (size_t)json_object_object_length(rec)
                                                           : 0;
}

/* "req-<seq>" without the printf machinery; returns its length. */
static int request_id(char rid[32], uint64_t seq)
{
  memcpy(rid, "req-", 4);
  return 4 + (int)policy_put_decimal(rid + 4, seq);
}

Event *event_build(int action, EventKind kind, json_object *input, json_object *output, int64_t ts,
                   uint64_t request_seq)
{
  names_init();
  size_t cap = 3 + rec_len(input) + (kind == EV_RESPONSE ? rec_len(output) : 0);
  Pending stack[24];
  Pending *pend = cap <= G_N_ELEMENTS(stack) ? stack : g_new(Pending, cap);
  size_t strbytes = 0, nf = 0;
  pend[nf++] = (Pending){ n_cp, TV_ENT, 0, "self", 4, n_agent };
  pend[nf++] = (Pending){ n_cr, TV_ENT, 0, "unused", 6, n_resource };
  nf += collect(pend + nf, action, false, input, &strbytes);
  if (kind == EV_RESPONSE) nf += collect(pend + nf, action, true, output, &strbytes);
  char rid[32];
  int rn = request_id(rid, request_seq);
  pend[nf++] = (Pending){ n_rid, TV_STR, 0, rid, (size_t)rn, NULL };
  strbytes += (size_t)rn + 1;
  size_t size = sizeof(Event) + nf * sizeof(EvField) + strbytes;
  Event *e = g_malloc(size);
  e->ts = ts;
  e->action = action;
  e->kind = kind;
  e->nf = (int)nf;
  e->f = (EvField *)(e + 1);
  char *str = (char *)(e->f + nf);
  for (size_t i = 0; i < nf; i++) {
    Pending *p = &pend[i];
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
  if (pend != stack) g_free(pend);
  return e;
}

void event_free(Event *e)
{
  g_free(e);
}

const TVal *event_field(const Event *e, const char *path)
{
  for (int i = 0; i < e->nf; i++)
    if (e->f[i].path == path) return &e->f[i].v;
  return NULL;
}

size_t event_size(const Event *e)
{
  size_t n = sizeof(Event) + (size_t)e->nf * sizeof(EvField);
  for (int i = 0; i < e->nf; i++)
    if (e->f[i].v.s && i >= 2) n += e->f[i].v.n + 1;
  return n;
}
