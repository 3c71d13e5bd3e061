/* json_out.c — a record's JSON as json-c writes it, byte for byte, for the
 * history's records and the decision log's lines, without json-c's
 * printbuf and its per-piece calls on the path every decision takes. */
#include "policy/json_out.h"

#include <stdint.h>

static const char hex_digits[] = "0123456789abcdef";

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* Whether some byte of the word is below 0x20, '"' or '\\' (exact). */
static inline bool word_needs_escape(uint64_t w)
{
  uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
  return (((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS;
}

/* json-c's escaping (json_escape_str) with '/' left as it is */
static inline bool byte_needs_escape(unsigned char c)
{
  return c < 0x20 || c == '"' || c == '\\';
}

void policy_json_escaped(GString *o, const char *s, size_t n)
{
  const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
  for (;;) {
    /* eight bytes at a time while none needs escaping (a path), then byte
     * by byte: most strings here are a few bytes long */
    while (end - p >= 8) {
      uint64_t w;
      memcpy(&w, p, 8);
      if (word_needs_escape(w)) break;
      p += 8;
    }
    while (p < end && !byte_needs_escape(*p)) p++;
    if (p == end) break;
    unsigned char c = *p;
    policy_app_len(o, (const char *)run, (size_t)(p - run));
    run = ++p;
    char esc[7] = { '\\', 0, 0, 0, 0, 0, 0 };
    size_t en = 2;
    switch (c) {
    case '\b': esc[1] = 'b'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    case '\f': esc[1] = 'f'; break;
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    default:
      memcpy(esc + 1, "u00", 3);
      esc[4] = hex_digits[c >> 4];
      esc[5] = hex_digits[c & 0xf];
      en = 6;
      break;
    }
    policy_app_len(o, esc, en);
  }
  policy_app_len(o, (const char *)run, (size_t)(end - run));
}

/* two digits a step: a log line's time and a history record's are 19 digits */
size_t policy_put_decimal(char *out, uint64_t v)
{
  static const char pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
  char tmp[24];
  size_t i = sizeof tmp;
  for (; v >= 100; v /= 100) {
    i -= 2;
    memcpy(tmp + i, pairs + 2 * (v % 100), 2);
  }
  if (v >= 10) {
    i -= 2;
    memcpy(tmp + i, pairs + 2 * v, 2);
  } else {
    tmp[--i] = (char)('0' + v);
  }
  size_t n = sizeof tmp - i;
  memcpy(out, tmp + i, n);
  out[n] = '\0';
  return n;
}

static void json_int(GString *o, int64_t v)
{
  char buf[24];
  int n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    buf[sizeof buf - 1 - n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) buf[sizeof buf - 1 - n++] = '-';
  policy_app_len(o, buf + sizeof buf - n, (size_t)n);
}

/* Whether the fast writer renders rec as json-c would: every value a
 * string, boolean or integer json-c prints as a signed 64-bit one (an
 * unsigned value above INT64_MAX reads back as INT64_MAX: left to json-c). */
static bool json_flat(json_object *rec)
{
  json_object_object_foreach (rec, key, val) {
    (void)key;
    switch (json_object_get_type(val)) {
    case json_type_string:
    case json_type_boolean: break;
    case json_type_int:
      if (json_object_get_int64(val) == INT64_MAX) return false;
      break;
    default: return false; /* null, double, array, object */
    }
  }
  return true;
}

void policy_json_append(GString *o, json_object *rec, int flags)
{
  if (flags != (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) || !rec ||
      !json_object_is_type(rec, json_type_object) || !json_flat(rec)) {
    size_t n = 0;
    const char *js = json_object_to_json_string_length(rec, flags, &n);
    policy_app_len(o, js, n);
    return;
  }
  policy_app_c(o, '{');
  bool first = true;
  json_object_object_foreach (rec, key, val) {
    if (!first) policy_app_c(o, ',');
    first = false;
    policy_app_c(o, '"');
    policy_json_escaped(o, key, strlen(key));
    policy_app_len(o, "\":", 2);
    switch (json_object_get_type(val)) {
    case json_type_string:
      policy_app_c(o, '"');
      policy_json_escaped(o, json_object_get_string(val), (size_t)json_object_get_string_len(val));
      policy_app_c(o, '"');
      break;
    case json_type_boolean:
      if (json_object_get_boolean(val))
        policy_app_len(o, "true", 4);
      else
        policy_app_len(o, "false", 5);
      break;
    default: json_int(o, json_object_get_int64(val)); break;
    }
  }
  policy_app_c(o, '}');
}
