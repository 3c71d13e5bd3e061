/* otlp_codec.c — any OTLP export request (traces, logs, metrics) between its
 * protobuf encoding and the OTLP/JSON mapping, driven by a table of
 * opentelemetry-proto v1's messages and field numbers (no generated code).
 *
 * The agent's own telemetry (§8.5) arrives in either encoding and leaves
 * in either (a file line is JSON, a target may want protobuf), and unlike
 * the box's own records (otlp_proto.c) it may use every message of the
 * protocol: events, links, every metric kind.  Unknown fields are dropped. */
#include "telemetry/telemetry-private.h"

#include <string.h>

typedef enum {
  F_STRING,
  F_HEX,    /* bytes the JSON mapping spells in hex: trace and span ids */
  F_BYTES,  /* other bytes: base64 */
  F_VARINT, /* int32, uint32, enum: a JSON number */
  F_SINT,   /* sint32: zigzag */
  F_INT64,  /* int64, uint64 as a varint: a JSON string */
  F_FIXED64,
  F_SFIXED64,
  F_FIXED32,
  F_DOUBLE,
  F_BOOL,
  F_MESSAGE,
} FieldKind;

typedef struct Message Message;
typedef struct {
  unsigned number;
  const char *name;
  FieldKind kind;
  bool repeated;
  const Message *message;
} Field;
struct Message {
  const Field *fields;
};

#define M(name) static const Message name
#define FIELDS(name, ...)                                                                          \
  static const Field name##_fields[] = { __VA_ARGS__, { 0, NULL, 0, false, NULL } };               \
  static const Message name = { name##_fields }

M(AnyValue);
M(KeyValue);
M(Exemplar);
M(Buckets);
M(ValueAtQuantile);

FIELDS(ArrayValue, { 1, "values", F_MESSAGE, true, &AnyValue });
FIELDS(KeyValueList, { 1, "values", F_MESSAGE, true, &KeyValue });
static const Field AnyValue_fields[] = {
  { 1, "stringValue", F_STRING, false, NULL },
  { 2, "boolValue", F_BOOL, false, NULL },
  { 3, "intValue", F_INT64, false, NULL },
  { 4, "doubleValue", F_DOUBLE, false, NULL },
  { 5, "arrayValue", F_MESSAGE, false, &ArrayValue },
  { 6, "kvlistValue", F_MESSAGE, false, &KeyValueList },
  { 7, "bytesValue", F_BYTES, false, NULL },
  { 0, NULL, 0, false, NULL },
};
static const Message AnyValue = { AnyValue_fields };
static const Field KeyValue_fields[] = {
  { 1, "key", F_STRING, false, NULL },
  { 2, "value", F_MESSAGE, false, &AnyValue },
  { 0, NULL, 0, false, NULL },
};
static const Message KeyValue = { KeyValue_fields };

#define ATTRIBUTES(n)                                                                              \
  {                                                                                                \
    n, "attributes", F_MESSAGE, true, &KeyValue                                                    \
  }
#define DROPPED(n, what)                                                                           \
  {                                                                                                \
    n, "dropped" what "Count", F_VARINT, false, NULL                                               \
  }

FIELDS(Resource, ATTRIBUTES(1), DROPPED(2, "Attributes"));
FIELDS(Scope, { 1, "name", F_STRING, false, NULL }, { 2, "version", F_STRING, false, NULL },
       ATTRIBUTES(3), DROPPED(4, "Attributes"));

/* traces */
FIELDS(Status, { 2, "message", F_STRING, false, NULL }, { 3, "code", F_VARINT, false, NULL });
FIELDS(Event, { 1, "timeUnixNano", F_FIXED64, false, NULL }, { 2, "name", F_STRING, false, NULL },
       ATTRIBUTES(3), DROPPED(4, "Attributes"));
FIELDS(Link, { 1, "traceId", F_HEX, false, NULL }, { 2, "spanId", F_HEX, false, NULL },
       { 3, "traceState", F_STRING, false, NULL }, ATTRIBUTES(4), DROPPED(5, "Attributes"),
       { 6, "flags", F_FIXED32, false, NULL });
FIELDS(Span, { 1, "traceId", F_HEX, false, NULL }, { 2, "spanId", F_HEX, false, NULL },
       { 3, "traceState", F_STRING, false, NULL }, { 4, "parentSpanId", F_HEX, false, NULL },
       { 16, "flags", F_FIXED32, false, NULL }, { 5, "name", F_STRING, false, NULL },
       { 6, "kind", F_VARINT, false, NULL }, { 7, "startTimeUnixNano", F_FIXED64, false, NULL },
       { 8, "endTimeUnixNano", F_FIXED64, false, NULL }, ATTRIBUTES(9), DROPPED(10, "Attributes"),
       { 11, "events", F_MESSAGE, true, &Event }, DROPPED(12, "Events"),
       { 13, "links", F_MESSAGE, true, &Link }, DROPPED(14, "Links"),
       { 15, "status", F_MESSAGE, false, &Status });
FIELDS(ScopeSpans, { 1, "scope", F_MESSAGE, false, &Scope }, { 2, "spans", F_MESSAGE, true, &Span },
       { 3, "schemaUrl", F_STRING, false, NULL });
FIELDS(ResourceSpans, { 1, "resource", F_MESSAGE, false, &Resource },
       { 2, "scopeSpans", F_MESSAGE, true, &ScopeSpans },
       { 3, "schemaUrl", F_STRING, false, NULL });
FIELDS(TracesRequest, { 1, "resourceSpans", F_MESSAGE, true, &ResourceSpans });

/* logs */
FIELDS(LogRecord, { 1, "timeUnixNano", F_FIXED64, false, NULL },
       { 11, "observedTimeUnixNano", F_FIXED64, false, NULL },
       { 2, "severityNumber", F_VARINT, false, NULL }, { 3, "severityText", F_STRING, false, NULL },
       { 5, "body", F_MESSAGE, false, &AnyValue }, ATTRIBUTES(6), DROPPED(7, "Attributes"),
       { 8, "flags", F_FIXED32, false, NULL }, { 9, "traceId", F_HEX, false, NULL },
       { 10, "spanId", F_HEX, false, NULL }, { 12, "eventName", F_STRING, false, NULL });
FIELDS(ScopeLogs, { 1, "scope", F_MESSAGE, false, &Scope },
       { 2, "logRecords", F_MESSAGE, true, &LogRecord }, { 3, "schemaUrl", F_STRING, false, NULL });
FIELDS(ResourceLogs, { 1, "resource", F_MESSAGE, false, &Resource },
       { 2, "scopeLogs", F_MESSAGE, true, &ScopeLogs }, { 3, "schemaUrl", F_STRING, false, NULL });
FIELDS(LogsRequest, { 1, "resourceLogs", F_MESSAGE, true, &ResourceLogs });

/* metrics */
#define POINT_TIMES                                                                                \
  { 2, "startTimeUnixNano", F_FIXED64, false, NULL },                                              \
  {                                                                                                \
    3, "timeUnixNano", F_FIXED64, false, NULL                                                      \
  }
static const Field Exemplar_fields[] = {
  { 7, "filteredAttributes", F_MESSAGE, true, &KeyValue },
  { 2, "timeUnixNano", F_FIXED64, false, NULL },
  { 3, "asDouble", F_DOUBLE, false, NULL },
  { 6, "asInt", F_SFIXED64, false, NULL },
  { 4, "spanId", F_HEX, false, NULL },
  { 5, "traceId", F_HEX, false, NULL },
  { 0, NULL, 0, false, NULL },
};
static const Message Exemplar = { Exemplar_fields };
FIELDS(NumberDataPoint, ATTRIBUTES(7), POINT_TIMES, { 4, "asDouble", F_DOUBLE, false, NULL },
       { 6, "asInt", F_SFIXED64, false, NULL }, { 5, "exemplars", F_MESSAGE, true, &Exemplar },
       { 8, "flags", F_VARINT, false, NULL });
FIELDS(HistogramDataPoint, ATTRIBUTES(9), POINT_TIMES, { 4, "count", F_FIXED64, false, NULL },
       { 5, "sum", F_DOUBLE, false, NULL }, { 6, "bucketCounts", F_FIXED64, true, NULL },
       { 7, "explicitBounds", F_DOUBLE, true, NULL },
       { 8, "exemplars", F_MESSAGE, true, &Exemplar }, { 10, "flags", F_VARINT, false, NULL },
       { 11, "min", F_DOUBLE, false, NULL }, { 12, "max", F_DOUBLE, false, NULL });
static const Field Buckets_fields[] = {
  { 1, "offset", F_SINT, false, NULL },
  { 2, "bucketCounts", F_INT64, true, NULL },
  { 0, NULL, 0, false, NULL },
};
static const Message Buckets = { Buckets_fields };
FIELDS(ExponentialHistogramDataPoint, ATTRIBUTES(1), POINT_TIMES,
       { 4, "count", F_FIXED64, false, NULL }, { 5, "sum", F_DOUBLE, false, NULL },
       { 6, "scale", F_SINT, false, NULL }, { 7, "zeroCount", F_FIXED64, false, NULL },
       { 8, "positive", F_MESSAGE, false, &Buckets }, { 9, "negative", F_MESSAGE, false, &Buckets },
       { 10, "flags", F_VARINT, false, NULL }, { 11, "exemplars", F_MESSAGE, true, &Exemplar },
       { 12, "min", F_DOUBLE, false, NULL }, { 13, "max", F_DOUBLE, false, NULL },
       { 14, "zeroThreshold", F_DOUBLE, false, NULL });
static const Field ValueAtQuantile_fields[] = {
  { 1, "quantile", F_DOUBLE, false, NULL },
  { 2, "value", F_DOUBLE, false, NULL },
  { 0, NULL, 0, false, NULL },
};
static const Message ValueAtQuantile = { ValueAtQuantile_fields };
FIELDS(SummaryDataPoint, ATTRIBUTES(7), POINT_TIMES, { 4, "count", F_FIXED64, false, NULL },
       { 5, "sum", F_DOUBLE, false, NULL },
       { 6, "quantileValues", F_MESSAGE, true, &ValueAtQuantile },
       { 8, "flags", F_VARINT, false, NULL });
#define TEMPORALITY(n)                                                                             \
  {                                                                                                \
    n, "aggregationTemporality", F_VARINT, false, NULL                                             \
  }
FIELDS(Gauge, { 1, "dataPoints", F_MESSAGE, true, &NumberDataPoint });
FIELDS(Sum, { 1, "dataPoints", F_MESSAGE, true, &NumberDataPoint }, TEMPORALITY(2),
       { 3, "isMonotonic", F_BOOL, false, NULL });
FIELDS(Histogram, { 1, "dataPoints", F_MESSAGE, true, &HistogramDataPoint }, TEMPORALITY(2));
FIELDS(ExponentialHistogram, { 1, "dataPoints", F_MESSAGE, true, &ExponentialHistogramDataPoint },
       TEMPORALITY(2));
FIELDS(Summary, { 1, "dataPoints", F_MESSAGE, true, &SummaryDataPoint });
FIELDS(Metric, { 1, "name", F_STRING, false, NULL }, { 2, "description", F_STRING, false, NULL },
       { 3, "unit", F_STRING, false, NULL }, { 5, "gauge", F_MESSAGE, false, &Gauge },
       { 7, "sum", F_MESSAGE, false, &Sum }, { 9, "histogram", F_MESSAGE, false, &Histogram },
       { 10, "exponentialHistogram", F_MESSAGE, false, &ExponentialHistogram },
       { 11, "summary", F_MESSAGE, false, &Summary },
       { 12, "metadata", F_MESSAGE, true, &KeyValue });
FIELDS(ScopeMetrics, { 1, "scope", F_MESSAGE, false, &Scope },
       { 2, "metrics", F_MESSAGE, true, &Metric }, { 3, "schemaUrl", F_STRING, false, NULL });
FIELDS(ResourceMetrics, { 1, "resource", F_MESSAGE, false, &Resource },
       { 2, "scopeMetrics", F_MESSAGE, true, &ScopeMetrics },
       { 3, "schemaUrl", F_STRING, false, NULL });
FIELDS(MetricsRequest, { 1, "resourceMetrics", F_MESSAGE, true, &ResourceMetrics });

static const Message *request_of(BoxOtlpSignal s)
{
  return s == BOX_OTLP_TRACES ? &TracesRequest
         : s == BOX_OTLP_LOGS ? &LogsRequest
                              : &MetricsRequest;
}

/* ---- protobuf to JSON ---- */

typedef struct {
  const guint8 *p, *end;
  int depth;
} Reader;

static bool varint(Reader *r, guint64 *v)
{
  *v = 0;
  for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
    guint8 b = *r->p++;
    *v |= (guint64)(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

static bool fixed(Reader *r, int n, guint64 *v)
{
  if (r->end - r->p < n) return false;
  *v = 0;
  for (int i = 0; i < n; i++) *v |= (guint64)r->p[i] << (8 * i);
  r->p += n;
  return true;
}

static const Field *field_of(const Message *m, unsigned number)
{
  for (const Field *f = m->fields; f->name; f++)
    if (f->number == number) return f;
  return NULL;
}

static json_object *decode_message(const Message *m, const guint8 *p, size_t n, int depth);

static json_object *int64_string(gint64 v, bool is_signed)
{
  char text[24];
  if (is_signed)
    g_snprintf(text, sizeof text, "%" G_GINT64_FORMAT, v);
  else
    g_snprintf(text, sizeof text, "%" G_GUINT64_FORMAT, (guint64)v);
  return json_object_new_string(text);
}

/* One scalar of f from raw (wire types 0, 1, 5). */
static json_object *scalar(const Field *f, guint64 raw)
{
  double d;
  switch (f->kind) {
  case F_VARINT: return json_object_new_int64((gint64)(gint32)raw);
  case F_SINT: return json_object_new_int((gint32)((raw >> 1) ^ (~(raw & 1) + 1)));
  case F_INT64: return int64_string((gint64)raw, false);
  case F_FIXED64: return int64_string((gint64)raw, false);
  case F_SFIXED64: return int64_string((gint64)raw, true);
  case F_FIXED32: return json_object_new_int64((gint64)(guint32)raw);
  case F_BOOL: return json_object_new_boolean(raw != 0);
  case F_DOUBLE: memcpy(&d, &raw, sizeof d); return json_object_new_double(d);
  default: return NULL;
  }
}

static void put(json_object *o, const Field *f, json_object *v)
{
  if (!v) return;
  if (!f->repeated) {
    json_object_object_add(o, f->name, v);
    return;
  }
  json_object *list = NULL;
  if (!json_object_object_get_ex(o, f->name, &list)) {
    list = json_object_new_array();
    json_object_object_add(o, f->name, list);
  }
  json_object_array_add(list, v);
}

static json_object *decode_message(const Message *m, const guint8 *p, size_t n, int depth)
{
  if (depth > 32) return NULL; /* kvlists nest: a payload cannot make us recurse without end */
  Reader r = { p, p + n, depth };
  json_object *o = json_object_new_object();
  while (r.p < r.end) {
    guint64 key, raw = 0;
    if (!varint(&r, &key)) goto bad;
    unsigned wire = key & 7;
    const Field *f = field_of(m, (unsigned)(key >> 3));
    const guint8 *data = NULL;
    size_t len = 0;
    if (wire == 0) {
      if (!varint(&r, &raw)) goto bad;
    } else if (wire == 1) {
      if (!fixed(&r, 8, &raw)) goto bad;
    } else if (wire == 5) {
      if (!fixed(&r, 4, &raw)) goto bad;
    } else if (wire == 2) {
      if (!varint(&r, &raw) || raw > (guint64)(r.end - r.p)) goto bad;
      data = r.p;
      len = (size_t)raw;
      r.p += len;
    } else {
      goto bad;
    }
    if (!f) continue;
    if (wire != 2) {
      put(o, f, scalar(f, raw));
    } else if (f->kind == F_STRING) {
      if (!g_utf8_validate((const char *)data, (gssize)len, NULL)) goto bad;
      put(o, f, json_object_new_string_len((const char *)data, (int)len));
    } else if (f->kind == F_HEX) {
      GString *hex = g_string_sized_new(2 * len + 1);
      for (size_t i = 0; i < len; i++) g_string_append_printf(hex, "%02x", data[i]);
      put(o, f, json_object_new_string_len(hex->str, (int)hex->len));
      g_string_free(hex, TRUE);
    } else if (f->kind == F_BYTES) {
      g_autofree char *b64 = g_base64_encode(data, len);
      put(o, f, json_object_new_string(b64));
    } else if (f->kind == F_MESSAGE) {
      json_object *sub = decode_message(f->message, data, len, depth + 1);
      if (!sub) goto bad;
      put(o, f, sub);
    } else { /* a packed repeated scalar */
      Reader packed = { data, data + len, depth };
      while (packed.p < packed.end) {
        bool ok = f->kind == F_FIXED64 || f->kind == F_SFIXED64 || f->kind == F_DOUBLE
                    ? fixed(&packed, 8, &raw)
                  : f->kind == F_FIXED32 ? fixed(&packed, 4, &raw)
                                         : varint(&packed, &raw);
        if (!ok) goto bad;
        put(o, f, scalar(f, raw));
      }
    }
  }
  return o;
bad:
  json_object_put(o);
  return NULL;
}

json_object *box_otlp_decode(BoxOtlpSignal signal, const void *data, size_t len)
{
  return decode_message(request_of(signal), data, len, 0);
}

/* ---- JSON to protobuf ---- */

static void put_varint(GByteArray *out, guint64 v)
{
  guint8 b[10];
  guint n = 0;
  do {
    b[n] = (guint8)(v & 0x7f);
    v >>= 7;
    if (v) b[n] |= 0x80;
    n++;
  } while (v);
  g_byte_array_append(out, b, n);
}

static void put_fixed(GByteArray *out, guint64 v, int n)
{
  guint8 b[8];
  for (int i = 0; i < n; i++) b[i] = (guint8)(v >> (8 * i));
  g_byte_array_append(out, b, (guint)n);
}

static guint64 int_of(json_object *v)
{
  if (json_object_is_type(v, json_type_string)) {
    const char *s = json_object_get_string(v);
    return s[0] == '-' ? (guint64)g_ascii_strtoll(s, NULL, 10) : g_ascii_strtoull(s, NULL, 10);
  }
  return (guint64)json_object_get_int64(v);
}

static void encode_message(GByteArray *out, const Message *m, json_object *o);

static unsigned wire_of(FieldKind k)
{
  switch (k) {
  case F_FIXED64:
  case F_SFIXED64:
  case F_DOUBLE: return 1;
  case F_FIXED32: return 5;
  case F_STRING:
  case F_HEX:
  case F_BYTES:
  case F_MESSAGE: return 2;
  default: return 0;
  }
}

/* One value of f, without its key. */
static void encode_value(GByteArray *out, const Field *f, json_object *v)
{
  double d;
  guint64 raw;
  switch (f->kind) {
  case F_VARINT: put_varint(out, (guint64)(gint64)json_object_get_int64(v)); break;
  case F_SINT: {
    gint32 s = json_object_get_int(v);
    put_varint(out, (guint32)((guint32)s << 1) ^ (guint32)(s >> 31));
    break;
  }
  case F_INT64: put_varint(out, int_of(v)); break;
  case F_FIXED64:
  case F_SFIXED64: put_fixed(out, int_of(v), 8); break;
  case F_FIXED32: put_fixed(out, int_of(v), 4); break;
  case F_BOOL: put_varint(out, json_object_get_boolean(v) ? 1 : 0); break;
  case F_DOUBLE:
    d = json_object_get_double(v);
    memcpy(&raw, &d, sizeof raw);
    put_fixed(out, raw, 8);
    break;
  case F_STRING: {
    const char *s = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    put_varint(out, n);
    g_byte_array_append(out, (const guint8 *)s, (guint)n);
    break;
  }
  case F_HEX: {
    const char *s = json_object_get_string(v);
    size_t n = strlen(s) / 2;
    put_varint(out, n);
    for (size_t i = 0; i < n; i++) {
      guint8 b = (guint8)(g_ascii_xdigit_value(s[2 * i]) << 4 | g_ascii_xdigit_value(s[2 * i + 1]));
      g_byte_array_append(out, &b, 1);
    }
    break;
  }
  case F_BYTES: {
    gsize n = 0;
    g_autofree guchar *bytes = g_base64_decode(json_object_get_string(v), &n);
    put_varint(out, n);
    g_byte_array_append(out, bytes, (guint)n);
    break;
  }
  case F_MESSAGE: {
    GByteArray *sub = g_byte_array_new();
    encode_message(sub, f->message, v);
    put_varint(out, sub->len);
    g_byte_array_append(out, sub->data, sub->len);
    g_byte_array_unref(sub);
    break;
  }
  }
}

static void encode_message(GByteArray *out, const Message *m, json_object *o)
{
  if (!json_object_is_type(o, json_type_object)) return;
  for (const Field *f = m->fields; f->name; f++) {
    json_object *v;
    if (!json_object_object_get_ex(o, f->name, &v) || !v) continue;
    size_t n =
      f->repeated ? (json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0) : 1;
    for (size_t i = 0; i < n; i++) {
      put_varint(out, (guint64)f->number << 3 | wire_of(f->kind));
      encode_value(out, f, f->repeated ? json_object_array_get_idx(v, i) : v);
    }
  }
}

GByteArray *box_otlp_encode(BoxOtlpSignal signal, json_object *request)
{
  GByteArray *out = g_byte_array_new();
  encode_message(out, request_of(signal), request);
  return out;
}
