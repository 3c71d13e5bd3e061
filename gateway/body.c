/* gateway/body.c — bodies read whole: a request's, before it is decided
 * (nothing goes upstream for an upload that breaks off), and the reply to
 * a credentialed request, before it is scrubbed of the secret.  Replies
 * otherwise stream through relay.c.
 */
#include "gateway/gateway-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* n more bytes of s appended to out; false when the stream ends first. */
static bool read_exactly(GwStream *s, GByteArray *out, size_t n)
{
  size_t at = out->len;
  g_byte_array_set_size(out, (guint)(at + n));
  size_t got = 0;
  while (got < n) {
    ssize_t r = gw_stream_read(s, out->data + at + got, n - got);
    if (r <= 0) return false;
    got += (size_t)r;
  }
  return true;
}

typedef enum { CHUNKS_READ, CHUNKS_BROKEN, CHUNKS_MALFORMED, CHUNKS_TOO_LARGE } ChunksResult;

/* A chunked body appended to out, at most limit bytes, its trailers read
 * and dropped.  strict (a request's): a size line carries nothing after
 * the size but an extension or blanks, so that no two readers of it
 * disagree on where a chunk ends. */
static ChunksResult read_chunks(GwStream *s, GByteArray *out, size_t limit, size_t max_line,
                                bool strict)
{
  for (;;) {
    g_autofree char *line = gw_stream_read_line(s, 1024);
    if (!line) return CHUNKS_BROKEN;
    char *e = NULL;
    errno = 0;
    unsigned long long size = strtoull(line, &e, 16);
    if (e == line || errno || (strict && *e && *e != ';' && *e != ' ' && *e != '\t'))
      return CHUNKS_MALFORMED;
    if (size == 0) return gw_stream_skip_trailers(s, max_line) == 0 ? CHUNKS_READ : CHUNKS_BROKEN;
    if (size > limit || out->len + size > limit) return CHUNKS_TOO_LARGE;
    if (!read_exactly(s, out, (size_t)size)) return CHUNKS_BROKEN;
    g_autofree char *crlf = gw_stream_read_line(s, 2);
    if (!crlf) return CHUNKS_BROKEN;
    if (*crlf) return CHUNKS_MALFORMED;
  }
}

/* The one length every Content-Length of req names, or -1 when they
 * disagree or one is not a length. */
static long long content_length(const GwHead *req)
{
  long long len = -1;
  for (guint i = 0; i < req->headers->len; i++) {
    GwHeader *hd = &g_array_index(req->headers, GwHeader, i);
    if (g_ascii_strcasecmp(hd->name, "content-length") != 0) continue;
    char *e = NULL;
    errno = 0;
    long long v = strtoll(hd->value, &e, 10);
    if (!*hd->value || *e || errno || v < 0 || (len >= 0 && v != len)) return -1;
    len = v;
  }
  return len;
}

int gw_read_request_body(GwStream *s, const GwHead *req, size_t limit, size_t max_line,
                         GByteArray *body)
{
  const char *te = gw_head_get(req, "transfer-encoding");
  int n_cl = gw_head_count(req, "content-length");
  if (te && n_cl > 0) return 400;
  if (te) {
    g_auto(GStrv) codings = g_strsplit(te, ",", -1);
    guint nc = g_strv_length(codings);
    if (nc == 0 || g_ascii_strcasecmp(g_strstrip(codings[nc - 1]), "chunked") != 0) return 501;
    switch (read_chunks(s, body, limit, max_line, true)) {
    case CHUNKS_READ: return 0;
    case CHUNKS_MALFORMED: return 400;
    case CHUNKS_TOO_LARGE: return 413;
    case CHUNKS_BROKEN: break;
    }
    return -1;
  }
  if (n_cl == 0) return 0;
  long long len = content_length(req);
  if (len < 0) return 400;
  if ((unsigned long long)len > limit) return 413;
  return read_exactly(s, body, (size_t)len) ? 0 : -1;
}

int gw_read_reply_body(GwStream *from, GwFraming framing, long long rlen, GByteArray *out,
                       size_t limit, size_t max_line)
{
  if (framing == GW_FRAMING_FIXED) {
    if ((unsigned long long)rlen > limit) return 1;
    return read_exactly(from, out, (size_t)rlen) ? 0 : -1;
  }
  if (framing == GW_FRAMING_CHUNKED) {
    ChunksResult r = read_chunks(from, out, limit, max_line, false);
    return r == CHUNKS_READ ? 0 : r == CHUNKS_TOO_LARGE ? 1 : -1;
  }
  if (framing == GW_FRAMING_EOF) {
    char buf[65536];
    for (;;) {
      ssize_t r = gw_stream_read(from, buf, sizeof buf);
      if (r == 0) return 0;
      if (r < 0) return -1;
      if (out->len + (size_t)r > limit) return 1;
      g_byte_array_append(out, (guint8 *)buf, (guint)r);
    }
  }
  return 0;
}
