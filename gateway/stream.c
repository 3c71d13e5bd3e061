/* gateway/stream.c — one leg's bytes: a plain socket, OpenSSL, or the
 * record layer taken over from it (record.c), read through a buffer that
 * also serves message heads and chunk lines.
 */
#include "gateway/gateway-private.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>

void gw_stream_init(GwStream *s, int fd, size_t cap)
{
  s->fd = fd;
  s->ssl = NULL;
  s->rec = NULL;
  s->cap = cap;
  s->buf = g_malloc(cap);
  s->off = s->len = 0;
}

static ssize_t raw_read(GwStream *s, void *p, size_t n)
{
  if (s->rec) return gw_rec_read(s->rec, p, n);
  if (s->ssl) {
    /* One SSL_read gives at most one record (16 KiB); the records that
     * are already in (gw_tls_*'s read buffer) are taken in the same call,
     * so that one relay write re-encrypts and sends many of them at once.
     * Without SSL_MODE_AUTO_RETRY a record that carries no data (a session
     * ticket, a key update) ends SSL_read with WANT_READ, so that taking
     * what is already in never waits for data the peer has not sent; a
     * socket timeout ends it the same way, but with EAGAIN. */
    size_t got = 0;
    for (;;) {
      size_t r = 0;
      errno = 0;
      if (SSL_read_ex(s->ssl, (char *)p + got, n - got, &r) == 1) {
        got += r;
        if (got == n || !(SSL_has_pending(s->ssl) || BIO_pending(SSL_get_rbio(s->ssl)) > 0)) break;
        continue;
      }
      int e = SSL_get_error(s->ssl, 0);
      bool no_data = e == SSL_ERROR_WANT_READ && errno != EAGAIN && errno != EWOULDBLOCK;
      ERR_clear_error();
      if (got > 0) break; /* what came is returned; an error comes again next call */
      if (no_data) continue;
      return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
    }
    return (ssize_t)got;
  }
  for (;;) {
    ssize_t r = recv(s->fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

bool gw_stream_write(GwStream *s, const void *data, size_t n)
{
  const char *p = data;
  if (s->rec) return gw_rec_write(s->rec, data, n);
  if (s->ssl) {
    while (n > 0) {
      size_t r = 0;
      if (SSL_write_ex(s->ssl, p, n, &r) != 1) {
        ERR_clear_error();
        return false;
      }
      p += r;
      n -= r;
    }
    /* The records wait in a write buffer (gw_tls_*) so that they leave in
     * a few large sends instead of one send each. */
    if (BIO_flush(SSL_get_wbio(s->ssl)) != 1) {
      ERR_clear_error();
      return false;
    }
    return true;
  }
  while (n > 0) {
    ssize_t r = send(s->fd, p, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= (size_t)r;
  }
  return true;
}

/* The end of a stream's TLS: close_notify, by whichever layer has its
 * records. */
void gw_stream_end_tls(GwStream *s)
{
  if (!s->ssl) return;
  if (s->rec) {
    /* OpenSSL is told of the close_notify sent for it, so that it keeps
     * the session as one that ended well (SSL_shutdown would have). */
    if (gw_rec_close(s->rec)) SSL_set_shutdown(s->ssl, SSL_SENT_SHUTDOWN);
    g_clear_pointer(&s->rec, gw_rec_free);
  } else {
    SSL_shutdown(s->ssl);
  }
  SSL_free(s->ssl);
  s->ssl = NULL;
}

static ssize_t fill(GwStream *s)
{
  if (s->off == s->len) {
    s->off = s->len = 0;
  } else if (s->off > 0) {
    memmove(s->buf, s->buf + s->off, s->len - s->off);
    s->len -= s->off;
    s->off = 0;
  }
  if (s->len == s->cap) return -2;
  ssize_t r = raw_read(s, s->buf + s->len, s->cap - s->len);
  if (r > 0) s->len += (size_t)r;
  return r;
}

ssize_t gw_stream_read(GwStream *s, void *p, size_t n)
{
  if (s->len > s->off) {
    size_t k = MIN(n, s->len - s->off);
    memcpy(p, s->buf + s->off, k);
    s->off += k;
    return (ssize_t)k;
  }
  return raw_read(s, p, n);
}

/* Reads up to and including the blank line ending a message head.  NULL
 * on EOF before any byte (*err = 0), a read error (*err = -1) or a head
 * longer than the buffer (*err = 431). */
char *gw_stream_read_head(GwStream *s, size_t limit, int *err)
{
  size_t scanned = 0;
  *err = 0;
  for (;;) {
    /* Skip the empty lines a client may send between messages. */
    while (s->len - s->off >= 2 && scanned == 0 && s->buf[s->off] == '\r' &&
           s->buf[s->off + 1] == '\n')
      s->off += 2;
    char *start = s->buf + s->off;
    size_t avail = s->len - s->off;
    for (size_t i = scanned; i + 1 < avail; i++) {
      if (start[i] == '\n' && (start[i + 1] == '\n' ||
                               (start[i + 1] == '\r' && i + 2 < avail && start[i + 2] == '\n'))) {
        size_t end = start[i + 1] == '\n' ? i + 2 : i + 3;
        if (end > limit) {
          *err = 431;
          return NULL;
        }
        char *head = g_strndup(start, end);
        s->off += end;
        return head;
      }
    }
    scanned = avail > 2 ? avail - 2 : 0;
    if (avail > limit) {
      *err = 431;
      return NULL;
    }
    ssize_t r = fill(s);
    if (r == -2) {
      *err = 431;
      return NULL;
    }
    if (r <= 0) {
      *err = (r == 0 && s->len == s->off) ? 0 : -1;
      return NULL;
    }
  }
}

/* One line (CRLF or LF stripped), at most limit bytes; NULL on failure. */
char *gw_stream_read_line(GwStream *s, size_t limit)
{
  for (;;) {
    char *start = s->buf + s->off;
    size_t avail = s->len - s->off;
    char *nl = memchr(start, '\n', avail);
    if (nl) {
      size_t n = (size_t)(nl - start);
      char *line = g_strndup(start, n > 0 && start[n - 1] == '\r' ? n - 1 : n);
      s->off += n + 1;
      return line;
    }
    if (avail > limit) return NULL;
    if (fill(s) <= 0) return NULL;
  }
}

/* The trailer lines after a chunked body's last chunk, up to the blank
 * one: read and dropped.  0, or -1 when the stream ends first. */
int gw_stream_skip_trailers(GwStream *s, size_t max_line)
{
  for (;;) {
    g_autofree char *t = gw_stream_read_line(s, max_line);
    if (!t) return -1;
    if (!*t) return 0;
  }
}
