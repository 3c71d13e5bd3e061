/* telemetry-private.h — what the files of telemetry/ share: the OTLP
 * exporter (otlp.c) and the control records' rendering (control.c). */
#ifndef BOX_TELEMETRY_PRIVATE_H
#define BOX_TELEMETRY_PRIVATE_H

#include "telemetry/telemetry.h"

#include <json-c/json.h>

/* An export request's signal. */
typedef enum { BOX_OTLP_TRACES, BOX_OTLP_LOGS, BOX_OTLP_METRICS } BoxOtlpSignal;

/* ---- otlp.c: one receiver, one thread, one bounded queue ---- */
typedef struct BoxOtlp BoxOtlp;
/* url: the receiver's base URL (/v1/logs and /v1/traces are appended);
 * header: "Name: value" carrying the secret, or NULL; each line dropped is
 * also added to *drops (atomically: `box ls` reads it live). */
BoxOtlp *box_otlp_start(const char *label, const char *url, const char *header, bool protobuf,
                        uint64_t *drops);
/* Queues whole export lines ({"resourceLogs":[…]} or {"resourceSpans":[…]},
 * each ending in '\n'); what the queue cannot hold is dropped and counted.
 * Never blocks on the network. */
void box_otlp_queue(BoxOtlp *o, const char *lines, size_t len);
/* Asks the thread to send what is queued (bounded) and end; returns at once. */
void box_otlp_end(BoxOtlp *o);
/* Waits for the thread to end.  Lines queued after it are sent at once, by
 * whoever queues them. */
void box_otlp_join(BoxOtlp *o);
/* A relayed request (§8.5) sent now, on the caller's thread, past the
 * queue: JSON text of the signal's export request; false when the receiver
 * did not take it.  One caller at a time. */
bool box_otlp_post_now(BoxOtlp *o, BoxOtlpSignal signal, json_object *request);
/* Lines dropped so far: the queue was full, or the receiver failed them. */
uint64_t box_otlp_dropped(BoxOtlp *o);
const char *box_otlp_label(const BoxOtlp *o);
/* Joins the thread (what is left sent, bounded) and frees o. */
void box_otlp_stop(BoxOtlp *o);

/* ---- otlp_proto.c ---- */
/* An OTLP/JSON export request (logs or traces) in the protobuf encoding,
 * or NULL when it does not parse. */
GByteArray *box_otlp_protobuf(const char *json, size_t len);

/* ---- otlp_codec.c: any export request, protobuf <-> OTLP/JSON ---- */
/* The request in the JSON mapping, or NULL when it is not one. */
json_object *box_otlp_decode(BoxOtlpSignal signal, const void *data, size_t len);
GByteArray *box_otlp_encode(BoxOtlpSignal signal, json_object *request);

/* ---- control.c: what every record built with json-c shares ---- */
/* Now, in nanoseconds since the epoch, as OTLP/JSON spells a time. */
void box_telemetry_now(char nanos[32]);
/* s as a JSON string, cut to 4 KiB on a character boundary, saying so. */
json_object *box_telemetry_bounded_string(const char *s);
/* Appends {"key": key, "value": {type: value}} to list (value is taken). */
void box_telemetry_attr_value(json_object *list, const char *key, const char *type,
                              json_object *value);
/* One export line, ending '\n': {root: [{"resource": <resource_json>,
 * scopes: [{"scope": {"name": scope_name}, items: [item]}]}]}; item is taken. */
char *box_telemetry_export_line(const char *resource_json, const char *scope_name, const char *root,
                                const char *scopes, const char *items, json_object *item);

/* The resource every box record carries (§8.1), as OTLP/JSON. */
char *box_telemetry_resource_json(const char *box_id, const char *run_id);
/* A control record's two lines (log record, then span), each ending '\n'.
 * trace: 32 hex; span: 16 hex; parent: 16 hex or NULL for the root. */
char *box_telemetry_control_lines(const char *resource_json, const char *operation,
                                  const char *subject, const char *reason, const char *detail,
                                  const char *trace, const char *span, const char *parent);

typedef struct BoxKernelRecords BoxKernelRecords;

/* ---- telemetry.c ---- */
/* Hands lines to every target whose include has signal (a BoxTelemetrySignal bit). */
void box_telemetry_deliver(BoxTelemetry *t, unsigned signal, const char *lines);
const char *box_telemetry_resource(const BoxTelemetry *t);
/* The agent's request (already stripped and stamped) to every target that
 * takes it: a file gets it as one line, a receiver at once. */
void box_telemetry_relay(BoxTelemetry *t, BoxOtlpSignal signal, json_object *request);
/* The kernel records' state, or NULL when no target takes `kernel`. */
BoxKernelRecords *box_telemetry_kernel_records(BoxTelemetry *t);

/* ---- kernel.c: kernel refusal records, rate limited (§8.4) ---- */
BoxKernelRecords *box_kernel_records_new(void);
/* Emits what is left counted (every key's repeats, every bucket's count);
 * refusals may still be recorded, and are counted afresh. */
void box_kernel_records_flush(BoxKernelRecords *k, BoxTelemetry *t);
void box_kernel_records_free(BoxKernelRecords *k);

#endif
