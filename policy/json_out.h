/* json_out.h — JSON written by hand, byte for byte as json-c writes it, for the
 * decision log and the history. */
#ifndef BOX_POLICY_JSON_OUT_H
#define BOX_POLICY_JSON_OUT_H

#include <stdbool.h>
#include <string.h>
#include <glib.h>
#include <json-c/json.h>

/* Appending to a GString without a call when it has room: the log and
 * the history are rendered from many short pieces on every decision (GString's fields are
 * public). */
static inline void policy_app_len(GString *o, const char *s, size_t n)
{
  if (o->len + n < o->allocated_len) {
    memcpy(o->str + o->len, s, n);
    o->len += n;
    o->str[o->len] = '\0';
  } else {
    g_string_append_len(o, s, (gssize)n);
  }
}
static inline void policy_app(GString *o, const char *s)
{
  policy_app_len(o, s, strlen(s));
}
static inline void policy_app_c(GString *o, char c)
{
  if (o->len + 1 < o->allocated_len) {
    o->str[o->len++] = c;
    o->str[o->len] = '\0';
  } else {
    g_string_append_c(o, c);
  }
}

/* Appends rec as json_object_to_json_string_ext(rec, flags) renders it,
 * byte for byte: a flat record of strings, integers and booleans (every
 * request's input) is written here without json-c's printbuf and its
 * per-piece calls; anything else, or other flags, through json-c. */
void policy_json_append(GString *o, json_object *rec, int flags);

/* Appends s[0..n) with json-c's string escapes ('/' left as it is), eight
 * bytes a step while none needs escaping. */
void policy_json_escaped(GString *o, const char *s, size_t n);

/* Writes v's digits, as %llu prints them, and a NUL to out (room for 21);
 * returns how many digits. The log's times and the request ids are
 * written on every decision, without the printf machinery. */
size_t policy_put_decimal(char *out, uint64_t v);

#endif
