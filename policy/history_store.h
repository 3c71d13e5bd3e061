/* history_store.h — the event history in memory and in its file under the box directory. */
#ifndef BOX_POLICY_HISTORY_STORE_H
#define BOX_POLICY_HISTORY_STORE_H

#include "policy/events.h"

/* history_append: the event is its own request (a ::request, or an outcome
 * whose request is unknown) */
#define T_OWN_REQUEST UINT64_MAX

typedef struct History History;

/* Told of every event kept in memory (as it is appended or read back from
 * the file), in seq order: the history rules' evaluator keeps its match
 * lists with it.  Without a watcher nothing reads the events, and an
 * appended one is only written to the file. */
typedef void (*HistoryWatcher)(void *data, uint64_t seq, const Event *e);

History *history_new(HistoryWatcher watch, void *data);
void history_free(History *h);
/* Reads the durable history in dir into h, keeping in memory the events
 * of the last depth ns, and appends to it from now on. */
bool history_attach_file(History *h, const char *dir, int64_t depth, GError **error);
/* Between these two (called with the lock held, by one thread), that
 * thread's records are gathered and written in one write(2) at the end. */
void history_batch_begin(History *h);
bool history_batch_end(History *h, char **why);
/* Appends an event (copying it) at ts; returns its seq, or false on a
 * storage failure with *why set. */
bool history_append(History *h, int action, EventKind kind, json_object *input, json_object *output,
                    int64_t ts, uint64_t request_seq, uint64_t *seq, char **why);
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

#endif
