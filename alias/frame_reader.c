/* frame_reader.c — reading the frames box-alias receives: a minimal JSON
 * reader (the alias links libc only), the frame's fields, and the base64 of
 * its output data. */
#include "alias-private.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- a minimal JSON reader for the frames the alias receives ---------------
 * Validates the whole text as JSON and picks out frame_type and, from body,
 * status, kind, reason, stream and data. */

typedef struct {
  const char *p, *end;
} Json;

static void json_ws(Json *j)
{
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static bool json_lit(Json *j, const char *lit)
{
  size_t n = strlen(lit);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) return false;
  j->p += n;
  return true;
}

static int hexval(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool json_hex4(Json *j, unsigned int *out)
{
  if (j->end - j->p < 4) return false;
  unsigned int v = 0;
  for (int i = 0; i < 4; i++) {
    int h = hexval(j->p[i]);
    if (h < 0) return false;
    v = (v << 4) | (unsigned int)h;
  }
  j->p += 4;
  *out = v;
  return true;
}

static void put_utf8(Buf *b, unsigned int cp)
{
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xc0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xe0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[2] = (char)(0x80 | (cp & 0x3f));
    n = 3;
  } else {
    u[0] = (char)(0xf0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[3] = (char)(0x80 | (cp & 0x3f));
    n = 4;
  }
  buf_add(b, u, n);
}

/* Parses a string; OUT (may be NULL) receives the decoded, NUL-terminated
 * text. */
static bool json_string(Json *j, Buf *out)
{
  if (j->p >= j->end || *j->p != '"') return false;
  j->p++;
  while (j->p < j->end) {
    unsigned char c = (unsigned char)*j->p++;
    if (c == '"') {
      if (out) buf_add(out, "", 1), out->len--;
      return true;
    }
    if (c < 0x20) return false;
    if (c != '\\') {
      if (out) buf_add(out, &c, 1);
      continue;
    }
    if (j->p >= j->end) return false;
    char e = *j->p++;
    /* JSON's one-character escapes, and the byte each stands for */
    static const char escapes[] = "\"\\/bfnrt", bytes[] = "\"\\/\b\f\n\r\t";
    const char *k = e ? strchr(escapes, e) : NULL;
    if (k) {
      if (out) buf_add(out, &bytes[k - escapes], 1);
      continue;
    }
    if (e != 'u') return false;
    unsigned int cp;
    if (!json_hex4(j, &cp)) return false;
    if (cp >= 0xd800 && cp <= 0xdbff) {
      unsigned int lo;
      if (!json_lit(j, "\\u") || !json_hex4(j, &lo) || lo < 0xdc00 || lo > 0xdfff) return false;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
      return false;
    }
    if (out) put_utf8(out, cp);
  }
  return false;
}

/* Parses a number; *is_int and *value are set for a plain integer. */
static bool json_number(Json *j, bool *is_int, long long *value)
{
  bool neg = false, integer = true, overflow = false;
  unsigned long long v = 0;
  if (j->p < j->end && *j->p == '-') {
    neg = true;
    j->p++;
  }
  if (j->p >= j->end || *j->p < '0' || *j->p > '9') return false;
  if (*j->p == '0') {
    j->p++;
  } else {
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
      unsigned d = (unsigned)(*j->p - '0');
      if (v > (ULLONG_MAX - d) / 10)
        overflow = true;
      else
        v = v * 10 + d;
      j->p++;
    }
  }
  if (j->p < j->end && *j->p == '.') {
    integer = false;
    j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return false;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
  }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
    integer = false;
    j->p++;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return false;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
  }
  *is_int = integer;
  if (overflow || v > (unsigned long long)LLONG_MAX)
    *value = neg ? LLONG_MIN : LLONG_MAX;
  else
    *value = neg ? -(long long)v : (long long)v;
  return true;
}

static bool json_value(Json *j, int depth);

/* Parses an object, calling MEMBER for each key (positioned at the value);
 * MEMBER returns false on a malformed value. */
static bool json_object_each(Json *j, bool (*member)(Json *, const char *, void *), void *ctx,
                             int depth)
{
  if (depth > 32 || j->p >= j->end || *j->p != '{') return false;
  j->p++;
  json_ws(j);
  if (j->p < j->end && *j->p == '}') {
    j->p++;
    return true;
  }
  for (;;) {
    json_ws(j);
    Buf key = { 0 };
    if (!json_string(j, &key)) {
      free(key.data);
      return false;
    }
    json_ws(j);
    bool ok = json_lit(j, ":");
    if (ok) {
      json_ws(j);
      ok = member ? member(j, key.data, ctx) : json_value(j, depth + 1);
    }
    free(key.data);
    if (!ok) return false;
    json_ws(j);
    if (json_lit(j, ",")) continue;
    return json_lit(j, "}");
  }
}

static bool json_value(Json *j, int depth)
{
  if (depth > 32 || j->p >= j->end) return false;
  switch (*j->p) {
  case '{': return json_object_each(j, NULL, NULL, depth);
  case '[':
    j->p++;
    json_ws(j);
    if (json_lit(j, "]")) return true;
    for (;;) {
      json_ws(j);
      if (!json_value(j, depth + 1)) return false;
      json_ws(j);
      if (json_lit(j, ",")) continue;
      return json_lit(j, "]");
    }
  case '"': return json_string(j, NULL);
  case 't': return json_lit(j, "true");
  case 'f': return json_lit(j, "false");
  case 'n': return json_lit(j, "null");
  default: {
    bool is_int;
    long long v;
    return json_number(j, &is_int, &v);
  }
  }
}

static bool take_string(Json *j, char **dst, size_t *len)
{
  Buf b = { 0 };
  if (!json_string(j, &b)) {
    free(b.data);
    return false;
  }
  if (!b.data) buf_add(&b, "", 1), b.len = 0;
  free(*dst);
  *dst = b.data;
  if (len) *len = b.len;
  return true;
}

static bool body_member(Json *j, const char *key, void *ctx)
{
  Frame *f = ctx;
  if (strcmp(key, "status") == 0) {
    f->has_status = true;
    return json_number(j, &f->status_int, &f->status);
  }
  if (strcmp(key, "kind") == 0 && j->p < j->end && *j->p == '"')
    return take_string(j, &f->kind, NULL);
  if (strcmp(key, "reason") == 0) return take_string(j, &f->reason, NULL);
  if (strcmp(key, "stream") == 0) return take_string(j, &f->stream, NULL);
  if (strcmp(key, "data") == 0) return take_string(j, &f->data, &f->data_len);
  return json_value(j, 2);
}

static bool top_member(Json *j, const char *key, void *ctx)
{
  Frame *f = ctx;
  if (strcmp(key, "frame_type") == 0) return take_string(j, &f->frame_type, NULL);
  if (strcmp(key, "body") == 0) return json_object_each(j, body_member, f, 1);
  return json_value(j, 1);
}

void frame_clear(Frame *f)
{
  free(f->frame_type);
  free(f->kind);
  free(f->reason);
  free(f->stream);
  free(f->data);
  memset(f, 0, sizeof *f);
}

bool parse_frame(const char *text, size_t len, Frame *f)
{
  memset(f, 0, sizeof *f);
  if (!valid_utf8((const unsigned char *)text, len)) return false;
  Json j = { text, text + len };
  json_ws(&j);
  if (!json_object_each(&j, top_member, f, 0)) return false;
  json_ws(&j);
  return j.p == j.end && f->frame_type != NULL;
}

/* Standard base64 with padding; returns decoded length or -1. */
long base64_decode(const char *in, size_t n, unsigned char *out)
{
  static signed char map[256];
  static bool ready;
  if (!ready) {
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memset(map, -1, sizeof map);
    for (int i = 0; i < 64; i++) map[(unsigned char)alphabet[i]] = (signed char)i;
    ready = true;
  }
  if (n % 4 != 0) return -1;
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; k++) {
      unsigned char c = (unsigned char)in[i + k];
      if (c == '=' && i + 4 == n && k >= 2) {
        v[k] = 0;
        pad++;
      } else if (pad || map[c] < 0) {
        return -1;
      } else {
        v[k] = map[c];
      }
    }
    unsigned int w =
      ((unsigned)v[0] << 18) | ((unsigned)v[1] << 12) | ((unsigned)v[2] << 6) | (unsigned)v[3];
    out[o++] = (unsigned char)(w >> 16);
    if (pad < 2) out[o++] = (unsigned char)(w >> 8);
    if (pad < 1) out[o++] = (unsigned char)w;
  }
  return (long)o;
}
