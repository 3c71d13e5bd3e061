/* gateway/relay.c — a reply's body from the server to the client as it
 * comes, in batches of up to IO_CHUNK bytes: copied per its framing, by a
 * pair of threads for a large one that OpenSSL's records carry on either
 * side (pump()), or record by record in the connection's thread between
 * two legs whose TLS 1.3 records are the gateway's own (record.c,
 * relay_records()).
 */
#include "gateway/gateway-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static bool copy_fixed(GwStream *from, GwStream *to, uint64_t n, uint64_t *moved, char *buf)
{
  while (n > 0) {
    ssize_t r = gw_stream_read(from, buf, n > IO_CHUNK ? IO_CHUNK : (size_t)n);
    if (r <= 0) return false;
    if (!gw_stream_write(to, buf, (size_t)r)) return false;
    n -= (uint64_t)r;
    *moved += (uint64_t)r;
  }
  return true;
}

/* A chunked body passes through re-framed as it came.  Each chunk leaves
 * in one write with its size line, and the CRLF that ends it rides with
 * what follows (the next size line, or the last chunk and the trailers):
 * with TLS that is one set of records and one send per chunk, not three,
 * and data is never held back waiting for the CRLF behind it. */
static bool copy_chunked(GwStream *from, GwStream *to, uint64_t *moved, char *buf, size_t max_line)
{
  bool crlf_due = false;
  for (;;) {
    g_autofree char *line = gw_stream_read_line(from, 1024);
    if (!line || strlen(line) > 1024) return false;
    char *e = NULL;
    errno = 0;
    unsigned long long size = strtoull(line, &e, 16);
    if (e == line || errno) return false;
    if (size == 0) {
      g_autoptr(GString) tail = g_string_new(crlf_due ? "\r\n" : "");
      g_string_append_printf(tail, "%s\r\n", line);
      for (;;) {
        g_autofree char *t = gw_stream_read_line(from, max_line);
        if (!t) return false;
        g_string_append_printf(tail, "%s\r\n", t);
        if (!*t) break;
      }
      return gw_stream_write(to, tail->str, tail->len);
    }
    size_t at = (size_t)g_snprintf(buf, IO_CHUNK, "%s%s\r\n", crlf_due ? "\r\n" : "", line);
    uint64_t left = size;
    while (left > 0) {
      size_t room = IO_CHUNK - at;
      ssize_t r = gw_stream_read(from, buf + at, left < room ? (size_t)left : room);
      if (r <= 0) return false;
      at += (size_t)r;
      left -= (uint64_t)r;
      *moved += (uint64_t)r;
      if (!gw_stream_write(to, buf, at)) return false;
      at = 0;
    }
    g_autofree char *crlf = gw_stream_read_line(from, 2);
    if (!crlf || *crlf) return false;
    crlf_due = true;
  }
}

static bool copy_to_eof(GwStream *from, GwStream *to, uint64_t *moved, char *buf)
{
  for (;;) {
    ssize_t r = gw_stream_read(from, buf, IO_CHUNK);
    if (r == 0) return true;
    if (r < 0) return false;
    if (!gw_stream_write(to, buf, (size_t)r)) return false;
    *moved += (uint64_t)r;
  }
}

/* A body between two legs whose records are both ours (record.c) is
 * relayed record by record in the connection's thread: each record is
 * opened into a buffer that stays in the cache and sealed from it at once,
 * with no hand-off between threads. */
static bool relay_records(GwStream *from, GwStream *to, uint64_t n, bool to_eof, uint64_t *moved)
{
  size_t have = from->len - from->off;
  if (!to_eof && have > n) have = (size_t)n;
  bool ok = gw_rec_relay(from->rec, to->rec, from->buf + from->off, have, to_eof ? 0 : n - have,
                         to_eof, moved);
  from->off += have;
  return ok;
}

/* A large body is relayed by two threads: one reads (and decrypts) the
 * next buffer while the connection's own thread writes (and encrypts) the
 * last, so the two halves of the work run on two cores at once.  Even on
 * two cores, shared with the client and the server, one thread doing both
 * was no faster in bench/gateway: it spent slightly less CPU itself, but
 * the client then spent more, waiting on bursts. */
#define PUMP_MIN_BYTES (1024 * 1024)

typedef struct {
  GwStream *from;
  uint64_t left; /* bytes still to read when !to_eof */
  bool to_eof;
  char *buf[2];
  size_t len[2];
  bool full[2];
  bool done;   /* the reader has stopped */
  bool failed; /* ... on a read error, or EOF before `left` ran out */
  bool stop;   /* the writer has stopped */
  /* Who sleeps on cv: a wakeup is a futex call, skipped when no one does. */
  bool reader_waits, writer_waits;
  GMutex m;
  GCond cv;
} Pump;

static gpointer pump_reader(gpointer data)
{
  Pump *p = data;
  for (int i = 0;; i ^= 1) {
    g_mutex_lock(&p->m);
    while (p->full[i] && !p->stop) {
      p->reader_waits = true;
      g_cond_wait(&p->cv, &p->m);
      p->reader_waits = false;
    }
    bool stop = p->stop;
    g_mutex_unlock(&p->m);
    if (stop) break;
    size_t want = p->to_eof || p->left > IO_CHUNK ? IO_CHUNK : (size_t)p->left;
    ssize_t r = gw_stream_read(p->from, p->buf[i], want);
    g_mutex_lock(&p->m);
    if (r > 0) {
      p->len[i] = (size_t)r;
      p->full[i] = true;
      if (!p->to_eof) {
        p->left -= (uint64_t)r;
        p->done = p->left == 0;
      }
    } else {
      p->done = true;
      p->failed = r < 0 || !p->to_eof;
    }
    bool done = p->done;
    if (p->writer_waits) g_cond_broadcast(&p->cv);
    g_mutex_unlock(&p->m);
    if (done) break;
  }
  return NULL;
}

/* Relays n bytes (or, when to_eof, up to EOF) like copy_fixed/copy_to_eof.
 * Returns -1 when no reader thread could start (nothing was moved). */
static int pump(GwStream *from, GwStream *to, uint64_t n, bool to_eof, uint64_t *moved, char *buf)
{
  Pump p = { .from = from, .left = n, .to_eof = to_eof, .buf = { buf, g_malloc(IO_CHUNK) } };
  g_mutex_init(&p.m);
  g_cond_init(&p.cv);
  GThread *reader = g_thread_try_new("box-gw-pump", pump_reader, &p, NULL);
  if (!reader) {
    g_free(p.buf[1]);
    g_mutex_clear(&p.m);
    g_cond_clear(&p.cv);
    return -1;
  }
  bool ok = true;
  for (int i = 0;; i ^= 1) {
    g_mutex_lock(&p.m);
    while (!p.full[i] && !p.done) {
      p.writer_waits = true;
      g_cond_wait(&p.cv, &p.m);
      p.writer_waits = false;
    }
    bool have = p.full[i];
    g_mutex_unlock(&p.m);
    if (!have) break;
    if (!gw_stream_write(to, p.buf[i], p.len[i])) {
      ok = false;
      break;
    }
    *moved += p.len[i];
    g_mutex_lock(&p.m);
    p.full[i] = false;
    if (p.reader_waits) g_cond_broadcast(&p.cv);
    g_mutex_unlock(&p.m);
  }
  if (!ok) {
    /* The reader may wait on the server for a long time: end that
     * connection under it (it is not reused after a failed relay). */
    g_mutex_lock(&p.m);
    p.stop = true;
    g_cond_broadcast(&p.cv);
    g_mutex_unlock(&p.m);
    shutdown(from->fd, SHUT_RDWR);
  }
  g_thread_join(reader);
  g_free(p.buf[1]);
  g_mutex_clear(&p.m);
  g_cond_clear(&p.cv);
  return ok && !p.failed;
}

bool gw_relay_body(GwConn *c, GwFraming framing, long long rlen)
{
  uint64_t moved = 0;
  /* relay_records needs no buffer of the connection's. */
  bool ours = c->up.rec && c->client.rec;
  if (!c->relay && framing != GW_FRAMING_NONE && (!ours || framing == GW_FRAMING_CHUNKED))
    c->relay = g_malloc(IO_CHUNK);
  char *buf = c->relay;
  switch (framing) {
  case GW_FRAMING_NONE: break;
  case GW_FRAMING_FIXED: {
    if (ours) return relay_records(&c->up, &c->client, (uint64_t)rlen, false, &moved);
    int r =
      rlen >= PUMP_MIN_BYTES ? pump(&c->up, &c->client, (uint64_t)rlen, false, &moved, buf) : -1;
    return r >= 0 ? r == 1 : copy_fixed(&c->up, &c->client, (uint64_t)rlen, &moved, buf);
  }
  case GW_FRAMING_CHUNKED:
    return copy_chunked(&c->up, &c->client, &moved, buf, c->gw->cfg.max_header_bytes);
  case GW_FRAMING_EOF: {
    if (ours) return relay_records(&c->up, &c->client, 0, true, &moved);
    int r = pump(&c->up, &c->client, 0, true, &moved, buf);
    return r >= 0 ? r == 1 : copy_to_eof(&c->up, &c->client, &moved, buf);
  }
  }
  return true;
}
