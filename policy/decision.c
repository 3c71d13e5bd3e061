/* decision.c — a decision's life: made, packed into one block (what the
 * mount's cache and the log's queue keep), unpacked, freed; and the denials
 * made beneath policy. */
#include "policy/decision.h"
#include "policy/message.h"

#include <string.h>

/* resource: owned by the decision from now on (NULL: "") */
static BoxDecision *decision_take(const char *action, char *resource)
{
  /* malloc and memset, not calloc: glibc's calloc skips the thread's cache,
   * and a decision is made for nearly every file operation */
  BoxDecision *d = g_malloc(sizeof *d);
  memset(d, 0, sizeof *d);
  d->action = g_strdup(action ? action : "");
  d->resource = resource ? resource : g_strdup("");
  d->determining_ids = g_ptr_array_new_with_free_func(g_free);
  return d;
}

static BoxDecision *decision_new(const char *action, const char *resource)
{
  return decision_take(action, g_strdup(resource));
}

static char *pack(char **at, const char *s)
{
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = memcpy(*at, s, n);
  *at += n;
  return p;
}

/* c copied to `to`, its pointers moved into the copy */
static BoxPackedDecision *packed_copy(void *to, const BoxPackedDecision *c)
{
  BoxPackedDecision *k = memcpy(to, c, c->size);
  const char *from = (const char *)c;
#define MOVED(s) ((s) ? (const char *)k + ((s)-from) : NULL)
  k->action = MOVED(c->action);
  k->resource = MOVED(c->resource);
  k->rule = MOVED(c->rule);
  k->description = MOVED(c->description);
  k->message = MOVED(c->message);
  k->reason = MOVED(c->reason);
  for (guint i = 0; i < c->nids; i++) k->ids[i] = MOVED(c->ids[i]);
#undef MOVED
  return k;
}

BoxPackedDecision *box_decision_pack(const BoxDecision *d, const char *action)
{
  void *block;
  return policy_decision_pack_after(d, action, 0, &block);
}

BoxPackedDecision *box_decision_pack_after(const BoxDecision *d, size_t head, void **block)
{
  return policy_decision_pack_after(d, NULL, (head + 7) & ~(size_t)7, block);
}

BoxPackedDecision *policy_decision_pack_after(const BoxDecision *d, const char *action, size_t head,
                                              void **block)
{
  const BoxPackedDecision *from = d->packed_;
  if (from && (!action || strcmp(action, from->action) == 0)) {
    char *b = g_malloc(head + from->size);
    *block = b;
    /* the strings are the decision's for good; its flags may have been set since */
    BoxPackedDecision *c = packed_copy(b + head, from);
    c->verdict = d->verdict;
    c->cause = d->cause;
    c->dry_run = d->dry_run;
    return c;
  }
  if (!action) action = d->action;
  const char *str[6] = { action, d->resource, d->rule, d->description, d->message, d->reason };
  guint nids = d->determining_ids ? d->determining_ids->len : 0;
  size_t bytes = 0;
  for (int i = 0; i < 6; i++) bytes += str[i] ? strlen(str[i]) + 1 : 0;
  for (guint i = 0; i < nids; i++) bytes += strlen(g_ptr_array_index(d->determining_ids, i)) + 1;
  size_t size = sizeof(BoxPackedDecision) + nids * sizeof(char *) + bytes;
  char *b = g_malloc(head + size);
  *block = b;
  BoxPackedDecision *c = (BoxPackedDecision *)(void *)(b + head);
  c->size = size;
  char *at = (char *)(c->ids + nids);
  c->verdict = d->verdict;
  c->cause = d->cause;
  c->dry_run = d->dry_run;
  c->nids = nids;
  c->action = pack(&at, action);
  c->resource = pack(&at, d->resource);
  c->rule = pack(&at, d->rule);
  c->description = pack(&at, d->description);
  c->message = pack(&at, d->message);
  c->reason = pack(&at, d->reason);
  for (guint i = 0; i < nids; i++) c->ids[i] = pack(&at, g_ptr_array_index(d->determining_ids, i));
  return c;
}

/* A decision whose strings are in its own block: its determining ids are
 * a view of the block's (read as an array; never grown nor freed alone). */
typedef struct {
  BoxDecision d;
  GPtrArray ids;
} Unpacked;

/* The decision at u, whose strings are in k (u's own block) */
static BoxDecision *unpacked_at(void *u, const BoxPackedDecision *k)
{
  Unpacked *up = u;
  BoxDecision *x = &up->d;
  memset(x, 0, sizeof *x);
  x->verdict = k->verdict;
  x->cause = k->cause;
  x->action = (char *)k->action;
  x->resource = (char *)k->resource;
  x->rule = (char *)k->rule;
  x->description = (char *)k->description;
  x->message = (char *)k->message;
  x->reason = (char *)k->reason;
  x->dry_run = k->dry_run;
  up->ids.pdata = (gpointer *)(void *)k->ids;
  up->ids.len = k->nids;
  x->determining_ids = &up->ids;
  x->packed_ = k;
  return x;
}

BoxDecision *box_decision_unpack(const BoxPackedDecision *c)
{
  /* one allocation: the decision, then the copy its strings point into */
  Unpacked *u = g_malloc(sizeof *u + c->size); /* not calloc: see decision_take */
  return unpacked_at(u, packed_copy(u + 1, c));
}

void box_decision_free(BoxDecision *d)
{
  if (!d) return;
  if (d->packed_) { /* the strings and the ids are in d's own allocation */
    g_free(d);
    return;
  }
  g_free(d->action);
  g_free(d->resource);
  g_free(d->rule);
  g_free(d->description);
  g_free(d->message);
  g_free(d->reason);
  if (d->determining_ids) g_ptr_array_free(d->determining_ids, TRUE);
  g_free(d);
}

BoxDecision *box_decision_new_enforcement(const char *action, const char *resource,
                                          const char *gate, const char *text)
{
  BoxDecision *d = decision_new(action, resource);
  d->verdict = BOX_VERDICT_DENY;
  d->cause = BOX_CAUSE_ENFORCEMENT;
  d->rule = g_strdup_printf("enforcement:%s", gate ? gate : "");
  d->message = g_strdup(text ? text : "");
  d->reason = g_strdup(text ? text : "");
  return d;
}

/* A decision made: its strings (borrowed: from the request, the policy's
 * rules, the thread's message buffer) copied into one block with it, as
 * an unpacked cache entry is, so that the cache and the log copy it whole
 * and freeing it is one free.  m holds the verdict, the cause and the
 * strings; ids, the determining rules' labels. */
BoxDecision *policy_decision_made(BoxDecision *m, const Rule *const *forbids, size_t nforbids,
                                  const char *const *ids, guint nids)
{
  GPtrArray idv = { .pdata = (gpointer *)ids, .len = nids };
  m->determining_ids = &idv;
  char *capped;
  m->message = (char *)policy_build_message(m, forbids, nforbids, &capped);
  void *block;
  const BoxPackedDecision *k = policy_decision_pack_after(m, NULL, sizeof(Unpacked), &block);
  g_free(capped);
  return unpacked_at(block, k);
}

const char *box_cause_name(BoxCause c)
{
  switch (c) {
  case BOX_CAUSE_PERMITTED: return "permitted";
  case BOX_CAUSE_FORBIDDEN: return "forbidden";
  case BOX_CAUSE_NO_MATCH: return "no_match";
  case BOX_CAUSE_POLICY_PENDING: return "policy_pending";
  case BOX_CAUSE_INTERNAL_FAULT: return "internal_fault";
  case BOX_CAUSE_ENFORCEMENT: return "enforcement";
  }
  return "internal_fault";
}
