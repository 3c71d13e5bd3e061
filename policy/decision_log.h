/* decision_log.h — the decision log: OTLP/JSON lines of each decision
 * (spec/policy.md §5.1, spec/runtime.md §8). */
#ifndef BOX_POLICY_DECISION_LOG_H
#define BOX_POLICY_DECISION_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include <json-c/json.h>
#include "policy/policy.h"

G_BEGIN_DECLS

typedef struct BoxDecisionLog BoxDecisionLog;
BoxDecisionLog *box_decision_log_open(const char *path, const char *box_id, const char *run_id,
                                      GError **error);
/* The same log, its lines handed to sink instead of a file (the telemetry
 * targets): whole decisions (two lines each), one call at a time, with the
 * log's lock held. */
typedef void (*BoxDecisionLogSink)(void *data, const char *lines, size_t len);
BoxDecisionLog *box_decision_log_open_sink(BoxDecisionLogSink sink, void *data, const char *box_id,
                                           const char *run_id);
/* Appends one line for the decision (thread-safe; the queued lines first,
 * then this one, in one write each, before it returns).
 * command_args: the shell decisions' argv (process.command_args), else NULL. */
void box_decision_log_append(BoxDecisionLog *log, const char *action, json_object *input,
                             const char *const *command_args, const BoxDecision *decision);
/* A shell decision's argv with, per word, whether it was literal in the
 * script.  Words that came from an expansion are logged only when they are
 * a short flag, a long flag of at most 32 lowercase letters and dashes, or
 * `--name=<redacted>`; otherwise as `<redacted>` (spec/runtime.md §8.2).
 * literal == NULL means every word was literal. */
typedef struct {
  const char *const *argv;
  const bool *literal;
  size_t argc;
} BoxCommandArgs;
void box_decision_log_append_args(BoxDecisionLog *log, const char *action, json_object *input,
                                  const BoxCommandArgs *args, const BoxDecision *decision);
/* As box_decision_log_append, for a file operation: the line is queued and
 * written within a few ms by the log's writer thread, or at once by the
 * next other append or flush.  Lost if the process is killed first.
 * id (may be NULL) gets the record's span id, the decision's id: what a
 * checkpoint names the decisions of its command by. */
void box_decision_log_append_queued(BoxDecisionLog *log, const char *action, json_object *input,
                                    const BoxDecision *decision, char id[17]);
/* Writes every queued line (before a command's end is reported). */
void box_decision_log_flush(BoxDecisionLog *log);
/* A batch of decisions: each one's lines rendered onto buf (nanos: the
 * time, from box_decision_log_now, one for the batch), then all written in
 * one write(2) by box_decision_log_write (which empties buf) before any of
 * them is answered. */
void box_decision_log_now(char nanos[32]);
void box_decision_log_render_into(const BoxDecisionLog *log, GString *buf, const char *action,
                                  json_object *input, const BoxCommandArgs *args,
                                  const BoxDecision *decision, const char *nanos);
void box_decision_log_write(BoxDecisionLog *log, GString *buf);
/* The reportable spelling of one argv word (newly allocated). */
char *box_command_arg_redact(const char *word, bool literal);
void box_decision_log_close(BoxDecisionLog *log);

/* The trace context a command was given (spec/runtime.md §4.1, §8.2: the
 * alias's TRACEPARENT and TRACESTATE).  While a thread has one set, each
 * decision it logs is a span of that trace, a child of its parent span,
 * and the log record says the parent, its sampled flag and the state.
 * Correlation only: it never changes a verdict. */
typedef struct {
  char trace[33];  /* 32 lowercase hex, not all zero */
  char parent[17]; /* 16 lowercase hex, not all zero */
  bool sampled;
  char state[513]; /* TRACESTATE (at most 512 bytes kept), or "" */
} BoxTraceContext;
/* ctx from a traceparent header value ("00-<trace>-<parent>-<flags>", or a
 * later version's longer form) and a tracestate (may be NULL): false, and
 * ctx untouched, when traceparent is not a valid one. */
bool box_trace_context_parse(BoxTraceContext *ctx, const char *traceparent, const char *tracestate);
/* The calling thread's context: copied from ctx, or cleared (NULL). */
void box_decision_log_set_trace(const BoxTraceContext *ctx);
/* The calling thread's context, or NULL. */
const BoxTraceContext *box_decision_log_trace(void);

G_END_DECLS
#endif
