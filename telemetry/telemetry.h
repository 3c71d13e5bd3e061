/* telemetry.h — where a box's records go (spec/runtime.md §2.6, §8): the
 * `[telemetry.<label>]` targets (a file, or an OTLP/HTTP receiver fed by a
 * thread of its own), the decision lines the decision log renders, and the
 * control-plane records of a run (scope `strands-box.control`). */
#ifndef BOX_TELEMETRY_H
#define BOX_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

G_BEGIN_DECLS

/* The `include` words (§2.6, §8.6); logs and metrics are accepted and
 * always pass (the agent's own telemetry), so they select nothing here. */
typedef enum {
  BOX_TELEMETRY_DENY = 1u << 0,
  BOX_TELEMETRY_PERMIT = 1u << 1,
  BOX_TELEMETRY_TRACE = 1u << 2,
  BOX_TELEMETRY_KERNEL = 1u << 3,
  BOX_TELEMETRY_LOGS = 1u << 4,
  BOX_TELEMETRY_METRICS = 1u << 5,
  BOX_TELEMETRY_ALL = (1u << 6) - 1,
} BoxTelemetrySignal;

/* The signal an include word names, or 0. */
unsigned box_telemetry_signal_of(const char *word);
/* The words, in the order the spec's refusals list them. */
#define BOX_TELEMETRY_WORDS "deny, permit, trace, logs, metrics, kernel"

/* One `[telemetry.<label>]` table as box.toml wrote it (checked for shape
 * by the config loader; its destination is judged when the box opens it). */
typedef struct {
  char *label;
  bool otlp;           /* kind = "otlp"; else "file" */
  char *destination;   /* file: absolute or ~/…; otlp: the receiver's base URL */
  unsigned include;    /* BoxTelemetrySignal bits; BOX_TELEMETRY_ALL when absent */
  char *secret_env;    /* otlp: secret.ref env://NAME, or NULL */
  char *secret_header; /* otlp: the header the secret travels in */
  bool protobuf;       /* otlp: protocol = "http/protobuf"; else OTLP/JSON */
} BoxTelemetryTarget;
void box_telemetry_target_free(gpointer target);

/* The run the records belong to. */
typedef struct {
  const char *box_name; /* box.toml's name: the control records' subject */
  const char *box_id;   /* strands.box.name */
  const char *run_id;   /* strands.box.run.id */
  const char *box_dir;
  const char *operator_home; /* "~/" in a file destination */
  const char *stats_path;    /* the counters `box ls` reads (BoxTelemetryStat), or NULL */
} BoxTelemetryRun;

typedef struct BoxTelemetry BoxTelemetry;

/* Opens every target (NULL or none: the default file,
 * <box_dir>/private/telemetry/records.jsonl) and starts the OTLP threads.
 * A refused destination's message begins "invalid `[telemetry.<l>]`
 * target: "; nothing is opened then. */
BoxTelemetry *box_telemetry_open(const BoxTelemetryTarget *const *targets,
                                 const BoxTelemetryRun *run, GError **error);

/* The decision log's sink (a BoxDecisionLogSink; data = the BoxTelemetry):
 * whole decisions, two lines each, as the decision log rendered them.  It
 * never waits for a network: an OTLP target's queue is bounded, and what
 * does not fit is dropped and counted. */
void box_telemetry_decisions(void *telemetry, const char *lines, size_t len);

/* One control-plane record (§8.3): operation, subject, and a reason when
 * refused (outcome "refused"), else outcome "ok"; detail may be NULL.  The
 * first is the run's root span (box_started); the others its children. */
void box_telemetry_control(BoxTelemetry *t, const char *operation, const char *subject,
                           const char *reason, const char *detail);

/* A call the kernel refused a contained process (§8.4, §5.8), as the
 * listener saw it. */
typedef struct {
  const char *syscall;     /* "socket", or "syscall_<n>" for one libseccomp cannot name */
  const char *arguments;   /* "family=AF_PACKET type=SOCK_RAW" when an argument rule decided */
  const char *error_name;  /* "EPERM" */
  int pid;                 /* in boxd's PID namespace */
  const char *executable;  /* /proc/<pid>/exe, or NULL */
  const char *const *args; /* its command line (NULL-terminated), or NULL */
} BoxTelemetryRefusal;

/* Records a refusal for the targets that take `kernel`, rate limited: the
 * first of a key (executable, syscall, arguments) at once, its repeats
 * counted and emitted (`suppressed`) when its 10 s window ends; past 256
 * keys, counted per syscall and said once (refusals_unobserved, rate_cap).
 * What is still counted is emitted at stop. */
void box_telemetry_kernel(BoxTelemetry *t, const BoxTelemetryRefusal *r);
/* Emits the repeats of every window that has ended; call about once a
 * second while refusals may be counted. */
void box_telemetry_kernel_tick(BoxTelemetry *t);

/* The agent's own telemetry (§8.5): an OTLP/HTTP receiver on 127.0.0.1 of
 * the caller's network namespace (any port), whose payloads, made the
 * agent's, reach the targets (spans those that take `trace`, logs and
 * metrics every target), past their queues. */
typedef struct BoxOtelReceiver BoxOtelReceiver;
BoxOtelReceiver *box_otel_receiver_start(BoxTelemetry *t, GError **error);
int box_otel_receiver_port(const BoxOtelReceiver *r);
/* A socket listening on 127.0.0.1:port in the calling thread's network
 * namespace (another sandbox's), or -1 with error. */
int box_otel_receiver_listen(int port, GError **error);
/* Also serves fd (from box_otel_receiver_listen, taken) until until_fd
 * (taken; -1: for the whole run) turns readable: a pidfd whose process
 * ended. */
void box_otel_receiver_serve(BoxOtelReceiver *r, int fd, int until_fd);
/* Before box_telemetry_stop. */
void box_otel_receiver_stop(BoxOtelReceiver *r);

/* The first file target that takes every decision (what `box logs` reads),
 * or NULL. */
const char *box_telemetry_decision_file(const BoxTelemetry *t);

/* The counters at stats_path, one little-endian uint64_t each. */
typedef enum {
  BOX_TELEMETRY_STAT_DECISIONS,
  BOX_TELEMETRY_STAT_DENIALS,
  BOX_TELEMETRY_STAT_DROPPED,
  BOX_TELEMETRY_STAT_COMMANDS,
  BOX_TELEMETRY_STAT_N,
} BoxTelemetryStat;
void box_telemetry_count(BoxTelemetry *t, BoxTelemetryStat stat);
uint64_t box_telemetry_stat(const BoxTelemetry *t, BoxTelemetryStat stat);

/* The run's end (§1 teardown, §8.7): each OTLP thread sends what it holds
 * (bounded by its timeouts) and ends, then box_stopped is written (reason
 * NULL: outcome ok; detail says why it stopped, and how many records each
 * export dropped) and sent at once, then every target is closed.  t is
 * freed. */
void box_telemetry_stop(BoxTelemetry *t, const char *subject, const char *reason,
                        const char *detail);
/* The same run's end recorded, but nothing closed or freed: for a run that
 * ends at once after it (_exit) while other threads may still record. */
void box_telemetry_finish(BoxTelemetry *t, const char *subject, const char *reason,
                          const char *detail);

G_END_DECLS
#endif
