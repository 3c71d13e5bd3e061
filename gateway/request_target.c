/* gateway/request_target.c — the canonical request path that
 * `http:request` is decided on, and the origin-form target forwarded for
 * it: the path decided is the path served. */
#include "gateway/gateway.h"

#include <string.h>

static int hexval(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool unreserved(unsigned char c)
{
  return g_ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* Bytes a path segment carries as they are: RFC 3986 pchar less `;`, which
 * some servers cut from a segment as a parameter. */
static bool plain_pchar(unsigned char c)
{
  return unreserved(c) || (c && strchr("!$&'()*+,=:@", c) != NULL);
}

/* The path (up to `?` or `#`) of target in canonical form: one spelling
 * per byte, so that a rule on a path meets every spelling of it.  Escapes
 * of unreserved bytes, and of the sub-delims, `:` and `@` that a segment
 * may carry as they are, are decoded (servers decode them alike: policy
 * sees `x:delete` for `x%3Adelete`); every other byte is %XX in upper
 * case; dot segments are removed (RFC 3986 §5.2.4); "/" when empty.
 *
 * With why NULL this is lenient: what cannot be read is kept as it is.
 * Otherwise a path that servers read in different ways is refused (NULL,
 * *why the reason, static): were it forwarded, the path policy judged
 * would not be the one served. */
static char *normalize_path(const char *target, const char **why)
{
  size_t n = strcspn(target, "?#");
  GString *dec = g_string_sized_new(n + 1);
  GString *bytes = g_string_sized_new(n + 1); /* every escape decoded */
  const char *bad = NULL;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)target[i];
    if (c == '%' && i + 2 < n && hexval(target[i + 1]) >= 0 && hexval(target[i + 2]) >= 0) {
      c = (unsigned char)(hexval(target[i + 1]) * 16 + hexval(target[i + 2]));
      i += 2;
      if (!bad && (c == '/' || c == '\\'))
        bad = "an encoded `/` or `\\` (%2F, %5C), which some servers decode into a separator";
      if (!bad && (c < 0x20 || c == 0x7f))
        bad = "an encoded control byte (%00-%1F, %7F), which servers cut or keep";
      g_string_append_c(bytes, (char)c);
      if (plain_pchar(c))
        g_string_append_c(dec, (char)c);
      else
        g_string_append_printf(dec, "%%%02X", c);
      continue;
    }
    if (!bad && c == '%') bad = "an invalid percent-escape (a `%` without two hex digits after it)";
    if (!bad && c == '\\') bad = "a backslash, which some servers read as `/`";
    if (!bad && c == ';') bad = "a `;` path parameter, which some servers cut from its segment";
    if (!bad && (c <= 0x20 || c == 0x7f)) bad = "a space or control byte, unescaped";
    g_string_append_c(bytes, (char)c);
    if (c == '/' || c == '%' || plain_pchar(c))
      g_string_append_c(dec, (char)c);
    else
      g_string_append_printf(dec, "%%%02X", c);
  }
  /* Servers that decode twice, or decode bytes as something other than
   * UTF-8 (overlong forms such as %C0%AE for `.`), see another path. */
  for (const char *q = strchr(bytes->str, '%'); !bad && q; q = strchr(q + 1, '%'))
    if (hexval(q[1]) >= 0 && hexval(q[2]) >= 0)
      bad = "a double-encoded escape (%25 then two hex digits), which some servers decode twice";
  if (!bad && !g_utf8_validate(bytes->str, (gssize)bytes->len, NULL))
    bad = "bytes that are not UTF-8 (overlong or invalid), which servers decode differently";
  g_string_free(bytes, TRUE);
  if (why && bad) {
    *why = bad;
    g_string_free(dec, TRUE);
    return NULL;
  }
  /* Remove dot segments (RFC 3986 §5.2.4) over the segment list. */
  GPtrArray *segs = g_ptr_array_new_with_free_func(g_free);
  const char *p = dec->str;
  if (*p == '/') p++;
  bool trailing = false;
  for (;;) {
    const char *slash = strchr(p, '/');
    size_t len = slash ? (size_t)(slash - p) : strlen(p);
    trailing = false;
    if (len == 1 && p[0] == '.') {
      trailing = true;
    } else if (len == 2 && p[0] == '.' && p[1] == '.') {
      if (segs->len > 0) g_ptr_array_remove_index(segs, segs->len - 1);
      trailing = true;
    } else {
      g_ptr_array_add(segs, g_strndup(p, len));
    }
    if (!slash) break;
    p = slash + 1;
  }
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < segs->len; i++) {
    g_string_append_c(out, '/');
    g_string_append(out, g_ptr_array_index(segs, i));
  }
  if (trailing || out->len == 0) g_string_append_c(out, '/');
  g_ptr_array_free(segs, TRUE);
  g_string_free(dec, TRUE);
  /* An empty segment before the last: nginx merges `//`, Python's server
   * drops empty parts, others keep them. */
  if (why && strstr(out->str, "//")) {
    *why = "an empty path segment (`//`), which some servers merge";
    g_string_free(out, TRUE);
    return NULL;
  }
  return g_string_free(out, FALSE);
}

char *box_gateway_canonical_path(const char *target)
{
  return normalize_path(target, NULL);
}

char *box_gateway_request_target(const char *origin, char **path, const char **why)
{
  *path = NULL;
  if (origin[0] != '/') {
    *why = "a target that is not a path";
    return NULL;
  }
  if (strchr(origin, '#')) {
    *why = "a fragment (`#`), which a client never sends";
    return NULL;
  }
  const char *q = strchr(origin, '?');
  /* The query goes as sent (curl sends UTF-8 there raw), but never a
   * byte that could end or split the request line. */
  if (q)
    for (const char *p = q + 1; *p; p++)
      if ((unsigned char)*p <= 0x20 || (unsigned char)*p == 0x7f) {
        *why = "a space or control byte in the query, unescaped";
        return NULL;
      }
  char *norm = normalize_path(origin, why);
  if (!norm) return NULL;
  *path = norm;
  return q ? g_strconcat(norm, q, NULL) : g_strdup(norm);
}
