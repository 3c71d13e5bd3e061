/* control.c — control-plane records (spec/runtime.md §8.3): one log record
 * and one span `control <operation>` per operation, under the scope
 * `strands-box.control`.  They are rare (a run writes a handful), so they
 * are built as json-c objects rather than by hand as decisions are. */
#include "telemetry/telemetry-private.h"

#include <string.h>
#include <time.h>
#include <json-c/json.h>

#define CONTROL_SCOPE "strands-box.control"
#define ATTR_MAX 4096
#define TRUNCATED "\xE2\x80\xA6 (truncated)"
/* severities are per signal (deny 13, permit 9): control-plane is INFO2 */
#define CONTROL_SEVERITY 10

static const int json_flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;

/* s cut to ATTR_MAX bytes on a character boundary, saying so */
json_object *box_telemetry_bounded_string(const char *s)
{
  size_t n = strlen(s);
  if (n <= ATTR_MAX) return json_object_new_string(s);
  size_t keep = ATTR_MAX - (sizeof TRUNCATED - 1);
  while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80) keep--;
  GString *cut = g_string_new_len(s, (gssize)keep);
  g_string_append(cut, TRUNCATED);
  json_object *v = json_object_new_string_len(cut->str, (int)cut->len);
  g_string_free(cut, TRUE);
  return v;
}

void box_telemetry_attr_value(json_object *list, const char *key, const char *type,
                              json_object *value)
{
  json_object *v = json_object_new_object();
  json_object_object_add(v, type, value);
  json_object *a = json_object_new_object();
  json_object_object_add(a, "key", json_object_new_string(key));
  json_object_object_add(a, "value", v);
  json_object_array_add(list, a);
}

static void attr(json_object *list, const char *key, const char *value)
{
  if (value)
    box_telemetry_attr_value(list, key, "stringValue", box_telemetry_bounded_string(value));
}

char *box_telemetry_resource_json(const char *box_id, const char *run_id)
{
  json_object *attrs = json_object_new_array();
  attr(attrs, "service.name", "strands-box");
  attr(attrs, "strands.box.name", box_id ? box_id : "");
  attr(attrs, "strands.box.source", "box");
  attr(attrs, "strands.box.run.id", run_id ? run_id : "");
  json_object *res = json_object_new_object();
  json_object_object_add(res, "attributes", attrs);
  char *text = g_strdup(json_object_to_json_string_ext(res, json_flags));
  json_object_put(res);
  return text;
}

char *box_telemetry_export_line(const char *resource_json, const char *scope_name, const char *root,
                                const char *scopes, const char *items, json_object *item)
{
  json_object *list = json_object_new_array();
  json_object_array_add(list, item);
  json_object *scope = json_object_new_object();
  json_object_object_add(scope, "name", json_object_new_string(scope_name));
  json_object *scoped = json_object_new_object();
  json_object_object_add(scoped, "scope", scope);
  json_object_object_add(scoped, items, list);
  json_object *scoped_list = json_object_new_array();
  json_object_array_add(scoped_list, scoped);
  /* the resource is spliced in as text: it is the decisions' own */
  const char *inner = json_object_to_json_string_ext(scoped_list, json_flags);
  char *line =
    g_strdup_printf("{\"%s\":[{\"resource\":%s,\"%s\":%s}]}\n", root, resource_json, scopes, inner);
  json_object_put(scoped_list);
  return line;
}

void box_telemetry_now(char nanos[32])
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  g_snprintf(nanos, 32, "%" G_GUINT64_FORMAT,
             (guint64)ts.tv_sec * G_GUINT64_CONSTANT(1000000000) + (guint64)ts.tv_nsec);
}

char *box_telemetry_control_lines(const char *resource_json, const char *operation,
                                  const char *subject, const char *reason, const char *detail,
                                  const char *trace, const char *span, const char *parent)
{
  char nanos[32];
  box_telemetry_now(nanos);
  const char *outcome = reason ? "refused" : "ok";

  json_object *attrs = json_object_new_array();
  attr(attrs, "strands.box.control.operation", operation);
  attr(attrs, "strands.box.control.outcome", outcome);
  attr(attrs, "strands.box.control.subject", subject);
  attr(attrs, "strands.box.control.reason", reason);
  attr(attrs, "strands.box.control.detail", detail);

  json_object *rec = json_object_new_object();
  json_object_object_add(rec, "timeUnixNano", json_object_new_string(nanos));
  json_object_object_add(rec, "observedTimeUnixNano", json_object_new_string(nanos));
  json_object_object_add(rec, "severityNumber", json_object_new_int(CONTROL_SEVERITY));
  json_object_object_add(rec, "severityText", json_object_new_string(outcome));
  json_object_object_add(rec, "eventName", json_object_new_string("strands.box.control.record"));
  json_object *body = json_object_new_object();
  g_autofree char *said = reason ? g_strdup_printf("%s %s: %s", operation, outcome, reason)
                                 : g_strdup_printf("%s %s", operation, outcome);
  json_object_object_add(body, "stringValue", box_telemetry_bounded_string(said));
  json_object_object_add(rec, "body", body);
  json_object_object_add(rec, "traceId", json_object_new_string(trace));
  json_object_object_add(rec, "spanId", json_object_new_string(span));
  json_object_object_add(rec, "attributes", json_object_get(attrs));

  g_autofree char *name = g_strdup_printf("control %s", operation);
  json_object *sp = json_object_new_object();
  json_object_object_add(sp, "traceId", json_object_new_string(trace));
  json_object_object_add(sp, "spanId", json_object_new_string(span));
  if (parent) json_object_object_add(sp, "parentSpanId", json_object_new_string(parent));
  json_object_object_add(sp, "name", json_object_new_string(name));
  json_object_object_add(sp, "kind", json_object_new_int(1)); /* SPAN_KIND_INTERNAL */
  json_object_object_add(sp, "startTimeUnixNano", json_object_new_string(nanos));
  json_object_object_add(sp, "endTimeUnixNano", json_object_new_string(nanos));
  json_object_object_add(sp, "attributes", attrs);
  if (reason) { /* STATUS_CODE_ERROR: a refused operation is a failed span */
    json_object *status = json_object_new_object();
    json_object_object_add(status, "code", json_object_new_int(2));
    json_object_object_add(status, "message", box_telemetry_bounded_string(reason));
    json_object_object_add(sp, "status", status);
  }

  g_autofree char *log_line = box_telemetry_export_line(
    resource_json, CONTROL_SCOPE, "resourceLogs", "scopeLogs", "logRecords", rec);
  g_autofree char *span_line = box_telemetry_export_line(
    resource_json, CONTROL_SCOPE, "resourceSpans", "scopeSpans", "spans", sp);
  return g_strconcat(log_line, span_line, NULL);
}
