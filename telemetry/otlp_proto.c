/* otlp_proto.c — an OTLP/JSON export request re-encoded as OTLP/protobuf
 * (the binary encoding of the same ExportLogsServiceRequest or
 * ExportTraceServiceRequest), for a receiver declared with
 * protocol = "http/protobuf".
 *
 * Only the messages the box writes are needed (resource, scope, log record,
 * span, status, key/value, any-value), so the wire format is written here
 * from the JSON mapping's field names, with the field numbers of
 * opentelemetry-proto v1; no generated code.  It runs on the exporter's
 * thread, never on a decision's. */
#include "telemetry/telemetry-private.h"

#include <string.h>
#include <json-c/json.h>

enum { VARINT = 0, I64 = 1, LEN = 2, I32 = 5 };

typedef void (*Encoder)(GByteArray *out, json_object *o);

static void put_varint(GByteArray *out, guint64 v)
{
  guint8 b[10];
  guint n = 0;
  do {
    b[n++] = (guint8)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  g_byte_array_append(out, b, n);
}

static void put_key(GByteArray *out, guint field, guint wire)
{
  put_varint(out, (guint64)field << 3 | wire);
}

static void put_len(GByteArray *out, guint field, const guint8 *data, gsize n)
{
  put_key(out, field, LEN);
  put_varint(out, n);
  g_byte_array_append(out, data, (guint)n);
}

static void put_fixed(GByteArray *out, guint field, guint wire, guint64 v)
{
  guint8 le[8];
  guint n = wire == I64 ? 8 : 4;
  for (guint i = 0; i < n; i++) le[i] = (guint8)(v >> (8 * i));
  put_key(out, field, wire);
  g_byte_array_append(out, le, n);
}

static json_object *get(json_object *o, const char *key)
{
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* int64 fields arrive as strings (the JSON mapping) or numbers */
static guint64 int_of(json_object *v)
{
  if (json_object_is_type(v, json_type_string))
    return (guint64)g_ascii_strtoll(json_object_get_string(v), NULL, 10);
  return (guint64)json_object_get_int64(v);
}

static void put_string(GByteArray *out, guint field, json_object *o, const char *key)
{
  json_object *v = get(o, key);
  if (!v || !json_object_is_type(v, json_type_string)) return;
  put_len(out, field, (const guint8 *)json_object_get_string(v),
          (gsize)json_object_get_string_len(v));
}

/* traceId/spanId: hex in JSON, bytes on the wire */
static void put_hex(GByteArray *out, guint field, json_object *o, const char *key)
{
  json_object *v = get(o, key);
  const char *hex = v ? json_object_get_string(v) : NULL;
  size_t n = hex ? strlen(hex) : 0;
  if (!n || n % 2) return;
  guint8 raw[32];
  if (n / 2 > sizeof raw) return;
  for (size_t i = 0; i < n / 2; i++) {
    int hi = g_ascii_xdigit_value(hex[2 * i]), lo = g_ascii_xdigit_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return;
    raw[i] = (guint8)(hi << 4 | lo);
  }
  put_len(out, field, raw, n / 2);
}

static void put_time(GByteArray *out, guint field, json_object *o, const char *key)
{
  json_object *v = get(o, key);
  if (v) put_fixed(out, field, I64, int_of(v));
}

static void put_number(GByteArray *out, guint field, json_object *o, const char *key)
{
  json_object *v = get(o, key);
  if (v && int_of(v)) {
    put_key(out, field, VARINT);
    put_varint(out, int_of(v));
  }
}

static void put_message(GByteArray *out, guint field, Encoder enc, json_object *v)
{
  GByteArray *inner = g_byte_array_new();
  enc(inner, v);
  put_len(out, field, inner->data, inner->len);
  g_byte_array_unref(inner);
}

static void put_each(GByteArray *out, guint field, Encoder enc, json_object *o, const char *key)
{
  json_object *list = get(o, key);
  if (!list || !json_object_is_type(list, json_type_array)) return;
  for (size_t i = 0; i < json_object_array_length(list); i++)
    put_message(out, field, enc, json_object_array_get_idx(list, i));
}

static void any_value(GByteArray *out, json_object *o);

static void key_value(GByteArray *out, json_object *o)
{
  put_string(out, 1, o, "key");
  json_object *v = get(o, "value");
  if (v) put_message(out, 2, any_value, v);
}

static void array_value(GByteArray *out, json_object *o)
{
  put_each(out, 1, any_value, o, "values");
}

static void kvlist_value(GByteArray *out, json_object *o)
{
  put_each(out, 1, key_value, o, "values");
}

static void any_value(GByteArray *out, json_object *o)
{
  json_object *v;
  if ((v = get(o, "stringValue"))) {
    put_string(out, 1, o, "stringValue");
  } else if ((v = get(o, "boolValue"))) {
    put_key(out, 2, VARINT);
    put_varint(out, json_object_get_boolean(v) ? 1 : 0);
  } else if ((v = get(o, "intValue"))) {
    put_key(out, 3, VARINT);
    put_varint(out, int_of(v));
  } else if ((v = get(o, "doubleValue"))) {
    double d = json_object_get_double(v);
    guint64 bits;
    memcpy(&bits, &d, sizeof bits);
    put_fixed(out, 4, I64, bits);
  } else if ((v = get(o, "arrayValue"))) {
    put_message(out, 5, array_value, v);
  } else if ((v = get(o, "kvlistValue"))) {
    put_message(out, 6, kvlist_value, v);
  }
}

static void resource(GByteArray *out, json_object *o)
{
  put_each(out, 1, key_value, o, "attributes");
}

static void scope(GByteArray *out, json_object *o)
{
  put_string(out, 1, o, "name");
  put_string(out, 2, o, "version");
  put_each(out, 3, key_value, o, "attributes");
}

static void log_record(GByteArray *out, json_object *o)
{
  put_time(out, 1, o, "timeUnixNano");
  put_number(out, 2, o, "severityNumber");
  put_string(out, 3, o, "severityText");
  json_object *body = get(o, "body");
  if (body) put_message(out, 5, any_value, body);
  put_each(out, 6, key_value, o, "attributes");
  put_hex(out, 9, o, "traceId");
  put_hex(out, 10, o, "spanId");
  put_time(out, 11, o, "observedTimeUnixNano");
  put_string(out, 12, o, "eventName");
}

static void status(GByteArray *out, json_object *o)
{
  put_string(out, 2, o, "message");
  put_number(out, 3, o, "code");
}

static void span(GByteArray *out, json_object *o)
{
  put_hex(out, 1, o, "traceId");
  put_hex(out, 2, o, "spanId");
  put_string(out, 3, o, "traceState");
  put_hex(out, 4, o, "parentSpanId");
  put_string(out, 5, o, "name");
  put_number(out, 6, o, "kind");
  put_time(out, 7, o, "startTimeUnixNano");
  put_time(out, 8, o, "endTimeUnixNano");
  put_each(out, 9, key_value, o, "attributes");
  json_object *st = get(o, "status");
  if (st) put_message(out, 15, status, st);
}

/* The four levels above a record share one shape: field 1 what they are
 * about (a resource, a scope), field 2 the list below them. */
static void about_and_list(GByteArray *out, json_object *o, const char *about_key, Encoder about,
                           const char *list_key, Encoder item)
{
  json_object *a = get(o, about_key);
  if (a) put_message(out, 1, about, a);
  put_each(out, 2, item, o, list_key);
}

static void scope_logs(GByteArray *out, json_object *o)
{
  about_and_list(out, o, "scope", scope, "logRecords", log_record);
}

static void scope_spans(GByteArray *out, json_object *o)
{
  about_and_list(out, o, "scope", scope, "spans", span);
}

static void resource_logs(GByteArray *out, json_object *o)
{
  about_and_list(out, o, "resource", resource, "scopeLogs", scope_logs);
}

static void resource_spans(GByteArray *out, json_object *o)
{
  about_and_list(out, o, "resource", resource, "scopeSpans", scope_spans);
}

GByteArray *box_otlp_protobuf(const char *json, size_t len)
{
  json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
  json_object *req = json_tokener_parse_ex(tok, json, (int)len);
  json_tokener_free(tok);
  if (!req) return NULL;
  GByteArray *out = g_byte_array_sized_new((guint)(len / 2));
  /* ExportLogsServiceRequest and ExportTraceServiceRequest: field 1 each */
  if (get(req, "resourceLogs"))
    put_each(out, 1, resource_logs, req, "resourceLogs");
  else
    put_each(out, 1, resource_spans, req, "resourceSpans");
  json_object_put(req);
  return out;
}
