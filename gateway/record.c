/* gateway/record.c — the TLS 1.3 record layer of an intercepted leg, once
 * OpenSSL has done its handshake.
 *
 * Why: every relayed byte is decrypted from one leg and encrypted onto the
 * other.  Through OpenSSL 3.0 that byte is also copied four times besides
 * the kernel's two (read buffer → record buffer → caller, caller → record
 * buffer → write buffer), and on two cores that copying, with OpenSSL's
 * per-record bookkeeping, was a fifth of the gateway's CPU per download
 * (bench/gateway, perf).  Here a record is opened straight from the bytes
 * recv() brought into the caller's buffer, and sealed straight from the
 * caller's buffer into the bytes send() takes: no copy but the AEAD's own.
 *
 * What stays OpenSSL's: the whole handshake, and so the upstream's
 * certificate check against the trust store, the suites, the leaves; the
 * AEAD itself (EVP).  What this file does is RFC 8446 §5 and §4.6.3: nonce
 * = IV xor sequence number, the record header as additional data, the inner
 * content type and its padding, the 2^14 limits, alerts, NewSessionTicket
 * (ignored: the gateway never resumes upstream) and KeyUpdate both ways.
 * Anything else is a failure of the connection.
 *
 * The traffic secrets come from the keylog callback, which OpenSSL calls as
 * it makes them; the sequence number of what OpenSSL already wrote under
 * the application key (the server's session tickets) is counted by the
 * message callback.  A connection that cannot be taken over (TLS 1.2, a
 * suite not listed below, a record left half read) stays with OpenSSL. */
#include "gateway/gateway-private.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#define MAX_PLAIN 16384              /* 2^14 */
#define MAX_CIPHER (MAX_PLAIN + 256) /* 2^14 + 256 */
#define TAG_LEN 16
#define IV_LEN 12
#define HEADER_LEN 5
#define MAX_SECRET 48
#define MAX_HANDSHAKE 65536
/* Records sealed under one key before the writer moves to the next
 * (RFC 8446 §5.5 bounds AES-GCM at 2^24.5 full records). */
#define REKEY_RECORDS (1ULL << 23)
/* A relay sends what it has sealed once this much is in, or when the
 * sender has nothing more for it yet: sends as large as the pump's
 * (the relay's IO_CHUNK), so that the client wakes as seldom. */
#define RELAY_FLUSH (512 * 1024)

enum { CT_ALERT = 21, CT_HANDSHAKE = 22, CT_DATA = 23 };
enum { HS_NEW_SESSION_TICKET = 4, HS_KEY_UPDATE = 24 };

/* What the handshake left for a takeover, hung on the SSL. */
typedef struct {
  unsigned char client[MAX_SECRET], server[MAX_SECRET];
  size_t client_len, server_len;
  bool server_role;
  bool counting;    /* own application write key in use */
  uint64_t written; /* records OpenSSL sealed under it */
  bool key_update;  /* a KeyUpdate went past: the secrets are stale */
} Keys;

typedef struct {
  EVP_CIPHER_CTX *ctx;
  unsigned char secret[MAX_SECRET];
  unsigned char iv[IV_LEN];
  uint64_t seq;
} Dir;

struct GwRec {
  int fd;
  bool server_role;
  const EVP_CIPHER *cipher;
  const EVP_MD *md;
  size_t key_len, secret_len;
  Dir rd, wr;
  /* Ciphertext in: records start at roff, rlen is the end of what came. */
  unsigned char *rbuf;
  size_t rcap, roff, rlen;
  /* A record's plaintext that did not fit the caller's buffer. */
  unsigned char pt[MAX_CIPHER];
  size_t pt_off, pt_len;
  GByteArray *hs; /* handshake messages not yet whole */
  /* Records out, sent at the end of each write. */
  unsigned char *wbuf;
  size_t wcap, wlen;
  int update_due; /* the peer asked for our KeyUpdate */
  bool eof, failed;
};

static int keys_index = -1;

static void keys_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
  (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
  if (ptr) {
    OPENSSL_cleanse(ptr, sizeof(Keys));
    g_free(ptr);
  }
}

static gpointer make_index(gpointer data)
{
  (void)data;
  keys_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, keys_free);
  return NULL;
}

static int unhex(char c)
{
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* "LABEL <client random> <secret>", both in hex. */
static void keylog(const SSL *ssl, const char *line)
{
  Keys *k = SSL_get_ex_data(ssl, keys_index);
  if (!k) return;
  bool client = g_str_has_prefix(line, "CLIENT_TRAFFIC_SECRET_0 ");
  bool server = g_str_has_prefix(line, "SERVER_TRAFFIC_SECRET_0 ");
  if (!client && !server) return;
  const char *hex = strrchr(line, ' ');
  if (!hex) return;
  hex++;
  size_t n = strlen(hex) / 2;
  if (n == 0 || n > MAX_SECRET) return;
  unsigned char *out = client ? k->client : k->server;
  for (size_t i = 0; i < n; i++) {
    int hi = unhex(hex[2 * i]), lo = unhex(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return;
    out[i] = (unsigned char)(hi << 4 | lo);
  }
  if (client)
    k->client_len = n;
  else
    k->server_len = n;
  /* From here OpenSSL seals with its own application key. */
  if (client != k->server_role) {
    k->counting = true;
    k->written = 0;
  }
}

static void watch(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl,
                  void *arg)
{
  (void)version, (void)arg;
  Keys *k = SSL_get_ex_data(ssl, keys_index);
  const unsigned char *b = buf;
  if (!k) return;
  if (content_type == SSL3_RT_HEADER && write_p && k->counting && len >= 1 && b[0] == CT_DATA)
    k->written++;
  if (content_type == SSL3_RT_HANDSHAKE && len >= 1 && b[0] == HS_KEY_UPDATE) k->key_update = true;
}

void gw_rec_setup(SSL_CTX *ctx)
{
  static GOnce once = G_ONCE_INIT;
  g_once(&once, make_index, NULL);
  SSL_CTX_set_keylog_callback(ctx, keylog);
}

void gw_rec_watch(SSL *ssl, bool server_role)
{
  if (keys_index < 0) return;
  Keys *k = g_new0(Keys, 1);
  k->server_role = server_role;
  if (!SSL_set_ex_data(ssl, keys_index, k)) {
    g_free(k);
    return;
  }
  SSL_set_msg_callback(ssl, watch);
}

/* HKDF-Expand-Label (RFC 8446 §7.1) with an empty context; every length
 * used here is at most the hash's, so HKDF-Expand is one HMAC. */
static bool expand_label(const EVP_MD *md, const unsigned char *secret, size_t slen,
                         const char *label, unsigned char *out, size_t olen)
{
  unsigned char info[64];
  size_t ll = strlen(label);
  info[0] = (unsigned char)(olen >> 8);
  info[1] = (unsigned char)olen;
  info[2] = (unsigned char)(6 + ll);
  memcpy(info + 3, "tls13 ", 6);
  memcpy(info + 9, label, ll);
  info[9 + ll] = 0;
  info[10 + ll] = 1; /* T(1) */
  unsigned char t[EVP_MAX_MD_SIZE];
  unsigned int tl = 0;
  if (!HMAC(md, secret, (int)slen, info, 11 + ll, t, &tl) || tl < olen) return false;
  memcpy(out, t, olen);
  OPENSSL_cleanse(t, sizeof t);
  return true;
}

static bool dir_key(GwRec *r, Dir *d, const unsigned char *secret, bool enc)
{
  unsigned char key[32];
  if (secret != d->secret) memcpy(d->secret, secret, r->secret_len);
  bool ok = expand_label(r->md, d->secret, r->secret_len, "key", key, r->key_len) &&
            expand_label(r->md, d->secret, r->secret_len, "iv", d->iv, IV_LEN) &&
            EVP_CipherInit_ex(d->ctx, r->cipher, NULL, key, NULL, enc ? 1 : 0) == 1;
  OPENSSL_cleanse(key, sizeof key);
  d->seq = 0;
  return ok;
}

/* The next secret of a direction (RFC 8446 §7.2). */
static bool dir_update(GwRec *r, Dir *d, bool enc)
{
  unsigned char next[MAX_SECRET];
  if (!expand_label(r->md, d->secret, r->secret_len, "traffic upd", next, r->secret_len))
    return false;
  memcpy(d->secret, next, r->secret_len);
  OPENSSL_cleanse(next, sizeof next);
  return dir_key(r, d, d->secret, enc);
}

static void nonce_of(const Dir *d, unsigned char nonce[IV_LEN])
{
  memcpy(nonce, d->iv, IV_LEN);
  for (int i = 0; i < 8; i++) nonce[IV_LEN - 1 - i] ^= (unsigned char)(d->seq >> (8 * i));
}

GwRec *gw_rec_take(SSL *ssl, int fd, size_t read_buffer, size_t write_buffer)
{
  Keys *k = keys_index >= 0 ? SSL_get_ex_data(ssl, keys_index) : NULL;
  if (!k || SSL_version(ssl) != TLS1_3_VERSION || !k->client_len || !k->server_len ||
      k->client_len != k->server_len || k->key_update || !k->counting || SSL_has_pending(ssl))
    return NULL;
  const EVP_CIPHER *cipher;
  const EVP_MD *md;
  size_t key_len;
  switch (SSL_CIPHER_get_id(SSL_get_current_cipher(ssl)) & 0xffff) {
  case 0x1301: cipher = EVP_aes_128_gcm(), md = EVP_sha256(), key_len = 16; break;
  case 0x1302: cipher = EVP_aes_256_gcm(), md = EVP_sha384(), key_len = 32; break;
  case 0x1303: cipher = EVP_chacha20_poly1305(), md = EVP_sha256(), key_len = 32; break;
  default: return NULL;
  }
  if ((size_t)EVP_MD_get_size(md) != k->client_len) return NULL;
  /* Whatever OpenSSL holds for the socket: nothing to write, and the
   * records that came in behind the handshake, still sealed. */
  BIO *wbio = SSL_get_wbio(ssl), *rbio = SSL_get_rbio(ssl);
  if (BIO_flush(wbio) != 1 || BIO_wpending(wbio) != 0) return NULL;
  size_t pending = BIO_ctrl_pending(rbio);
  read_buffer = MAX(read_buffer, HEADER_LEN + MAX_CIPHER);
  write_buffer = MAX(write_buffer, HEADER_LEN + MAX_PLAIN + 1 + TAG_LEN);
  if (pending > read_buffer) return NULL;
  GwRec *r = g_new0(GwRec, 1);
  r->fd = fd;
  r->server_role = k->server_role;
  r->cipher = cipher;
  r->md = md;
  r->key_len = key_len;
  r->secret_len = k->client_len;
  r->rcap = read_buffer;
  r->rbuf = g_malloc(r->rcap);
  r->wcap = write_buffer;
  r->wbuf = g_malloc(r->wcap);
  r->hs = g_byte_array_new();
  r->rd.ctx = EVP_CIPHER_CTX_new();
  r->wr.ctx = EVP_CIPHER_CTX_new();
  const unsigned char *mine = k->server_role ? k->server : k->client;
  const unsigned char *theirs = k->server_role ? k->client : k->server;
  bool ok =
    r->rd.ctx && r->wr.ctx && dir_key(r, &r->rd, theirs, false) && dir_key(r, &r->wr, mine, true);
  r->wr.seq = k->written;
  if (ok && pending > 0) {
    int got = BIO_read(rbio, r->rbuf, (int)pending);
    ok = got == (int)pending;
    r->rlen = ok ? pending : 0;
  }
  if (!ok) {
    gw_rec_free(r);
    return NULL;
  }
  /* OpenSSL's copies are no longer needed by anyone. */
  OPENSSL_cleanse(k, sizeof *k);
  return r;
}

void gw_rec_free(GwRec *r)
{
  if (!r) return;
  EVP_CIPHER_CTX_free(r->rd.ctx);
  EVP_CIPHER_CTX_free(r->wr.ctx);
  OPENSSL_cleanse(&r->rd, sizeof r->rd);
  OPENSSL_cleanse(&r->wr, sizeof r->wr);
  OPENSSL_cleanse(r->pt, sizeof r->pt);
  OPENSSL_cleanse(r->rbuf, r->rcap);
  OPENSSL_cleanse(r->wbuf, r->wcap);
  g_free(r->rbuf);
  g_free(r->wbuf);
  g_byte_array_free(r->hs, TRUE);
  g_free(r);
}

/* ---- writing ---- */

static bool flush(GwRec *r)
{
  size_t at = 0;
  while (at < r->wlen) {
    ssize_t n = send(r->fd, r->wbuf + at, r->wlen - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      r->failed = true;
      return false;
    }
    at += (size_t)n;
  }
  r->wlen = 0;
  return true;
}

/* One record of type ct into the write buffer, sealed from data. */
static bool seal(GwRec *r, unsigned char ct, const void *data, size_t n)
{
  if (r->wcap - r->wlen < HEADER_LEN + n + 1 + TAG_LEN && !flush(r)) return false;
  unsigned char *h = r->wbuf + r->wlen;
  size_t clen = n + 1 + TAG_LEN;
  h[0] = CT_DATA;
  h[1] = 3;
  h[2] = 3;
  h[3] = (unsigned char)(clen >> 8);
  h[4] = (unsigned char)clen;
  unsigned char nonce[IV_LEN];
  nonce_of(&r->wr, nonce);
  int l = 0;
  EVP_CIPHER_CTX *ctx = r->wr.ctx;
  bool ok = EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) == 1 &&
            EVP_EncryptUpdate(ctx, NULL, &l, h, HEADER_LEN) == 1 &&
            (n == 0 || EVP_EncryptUpdate(ctx, h + HEADER_LEN, &l, data, (int)n) == 1) &&
            EVP_EncryptUpdate(ctx, h + HEADER_LEN + n, &l, &ct, 1) == 1 &&
            EVP_EncryptFinal_ex(ctx, h + HEADER_LEN + n + 1, &l) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, h + HEADER_LEN + n + 1) == 1;
  if (!ok) {
    r->failed = true;
    return false;
  }
  r->wr.seq++;
  r->wlen += HEADER_LEN + clen;
  return true;
}

/* Our KeyUpdate, sealed under the old key, then the new key. */
static bool key_update(GwRec *r)
{
  static const unsigned char msg[] = { HS_KEY_UPDATE, 0, 0, 1, 0 /* update_not_requested */ };
  if (!seal(r, CT_HANDSHAKE, msg, sizeof msg) || !dir_update(r, &r->wr, true)) {
    r->failed = true;
    return false;
  }
  g_atomic_int_set(&r->update_due, 0);
  return true;
}

/* Seals data into records; sends when the buffer holds at least
 * flush_at bytes. */
static bool put(GwRec *r, const void *data, size_t n, size_t flush_at)
{
  const unsigned char *p = data;
  if (r->failed) return false;
  while (n > 0) {
    if ((g_atomic_int_get(&r->update_due) || r->wr.seq >= REKEY_RECORDS) && !key_update(r))
      return false;
    size_t k = MIN(n, MAX_PLAIN);
    if (!seal(r, CT_DATA, p, k)) return false;
    p += k;
    n -= k;
  }
  return r->wlen < flush_at || flush(r);
}

bool gw_rec_write(GwRec *r, const void *data, size_t n)
{
  return put(r, data, n, 0);
}

bool gw_rec_close(GwRec *r)
{
  static const unsigned char close_notify[] = { 1, 0 };
  return !r->failed && seal(r, CT_ALERT, close_notify, sizeof close_notify) && flush(r);
}

/* ---- reading ---- */

/* The handshake messages of one record.  After a KeyUpdate nothing may
 * follow in the record (RFC 8446 §5.1), and the read key moves on. */
static bool handshake(GwRec *r, const unsigned char *p, size_t n)
{
  if (r->hs->len + n > MAX_HANDSHAKE) return false;
  g_byte_array_append(r->hs, p, (guint)n);
  while (r->hs->len >= 4) {
    const unsigned char *m = r->hs->data;
    size_t len = (size_t)m[1] << 16 | (size_t)m[2] << 8 | m[3];
    if (r->hs->len < 4 + len) break;
    if (m[0] == HS_KEY_UPDATE) {
      if (len != 1 || m[4] > 1 || r->hs->len != 5) return false;
      if (m[4] == 1) g_atomic_int_set(&r->update_due, 1);
      g_byte_array_set_size(r->hs, 0);
      return dir_update(r, &r->rd, false);
    }
    if (m[0] != HS_NEW_SESSION_TICKET || r->server_role) return false;
    g_byte_array_remove_range(r->hs, 0, (guint)(4 + len));
  }
  return true;
}

/* Opens the record at roff (whole in rbuf) into out, which has room for
 * its inner plaintext.  The data's length, -1 for a failure, -2 for a
 * record that carried no data, -3 for close_notify. */
static ssize_t open_record(GwRec *r, unsigned char *out)
{
  unsigned char *h = r->rbuf + r->roff;
  size_t clen = (size_t)h[3] << 8 | h[4];
  unsigned char nonce[IV_LEN];
  nonce_of(&r->rd, nonce);
  int l = 0;
  size_t plen = clen - TAG_LEN;
  EVP_CIPHER_CTX *ctx = r->rd.ctx;
  bool ok = EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, nonce) == 1 &&
            EVP_DecryptUpdate(ctx, NULL, &l, h, HEADER_LEN) == 1 &&
            EVP_DecryptUpdate(ctx, out, &l, h + HEADER_LEN, (int)plen) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, h + HEADER_LEN + plen) == 1 &&
            EVP_DecryptFinal_ex(ctx, out + plen, &l) == 1;
  r->roff += HEADER_LEN + clen;
  if (!ok) return -1;
  r->rd.seq++;
  /* The content type is the last byte that is not padding. */
  while (plen > 0 && out[plen - 1] == 0) plen--;
  if (plen == 0) return -1;
  unsigned char ct = out[--plen];
  if (plen > MAX_PLAIN) return -1;
  /* A handshake message may not be cut by other records (RFC 8446 §5.1). */
  if (r->hs->len > 0 && ct != CT_HANDSHAKE) return -1;
  if (ct == CT_DATA) return (ssize_t)plen;
  if (ct == CT_HANDSHAKE) return plen > 0 && handshake(r, out, plen) ? -2 : -1;
  if (ct == CT_ALERT) return plen == 2 && out[1] == 0 ? -3 : -1;
  return -1;
}

/* Length of the whole record at roff, 0 while it is not all in, -1 when
 * its header is not one TLS 1.3 sends after the handshake. */
static ssize_t record_ready(GwRec *r)
{
  if (r->rlen - r->roff < HEADER_LEN) return 0;
  const unsigned char *h = r->rbuf + r->roff;
  size_t clen = (size_t)h[3] << 8 | h[4];
  if (h[0] != CT_DATA || clen < 1 + TAG_LEN || clen > MAX_CIPHER) return -1;
  return r->rlen - r->roff >= HEADER_LEN + clen ? (ssize_t)(HEADER_LEN + clen) : 0;
}

ssize_t gw_rec_read(GwRec *r, void *buf, size_t n)
{
  unsigned char *p = buf;
  size_t got = 0;
  if (r->failed) return -1;
  if (r->pt_len > r->pt_off) {
    size_t k = MIN(n, r->pt_len - r->pt_off);
    memcpy(p, r->pt + r->pt_off, k);
    r->pt_off += k;
    return (ssize_t)k;
  }
  for (;;) {
    /* What has come is returned without waiting for more. */
    while (got < n && !r->eof) {
      ssize_t whole = record_ready(r);
      if (whole < 0) {
        r->failed = true;
        return -1;
      }
      if (whole == 0) break;
      size_t room = n - got;
      bool direct = room >= (size_t)whole - HEADER_LEN - TAG_LEN;
      if (!direct && got > 0) return (ssize_t)got;
      ssize_t k = open_record(r, direct ? p + got : r->pt);
      if (k == -1) {
        r->failed = true;
        return -1;
      }
      if (k == -3) r->eof = true;
      if (k < 0) continue;
      if (direct) {
        got += (size_t)k;
      } else {
        size_t c = MIN(room, (size_t)k);
        memcpy(p + got, r->pt, c);
        r->pt_off = c;
        r->pt_len = (size_t)k;
        got += c;
      }
    }
    if (got > 0 || r->eof) return (ssize_t)got;
    if (r->roff > 0) {
      memmove(r->rbuf, r->rbuf + r->roff, r->rlen - r->roff);
      r->rlen -= r->roff;
      r->roff = 0;
    }
    ssize_t k;
    do k = recv(r->fd, r->rbuf + r->rlen, r->rcap - r->rlen, 0);
    while (k < 0 && errno == EINTR);
    if (k < 0) /* a socket timeout too: that call ends, the connection may */
      return -1;
    if (k == 0) {
      /* The peer closed without close_notify: an end between records, as
       * OpenSSL takes it here (SSL_OP_IGNORE_UNEXPECTED_EOF). */
      r->eof = true;
      if (r->rlen > 0) r->failed = true;
      return r->rlen > 0 ? -1 : 0;
    }
    r->rlen += (size_t)k;
  }
}

/* Whether a read would return without waiting on the socket: after
 * taking in, without waiting, whatever has arrived behind what is here. */
static bool has_record(GwRec *r)
{
  if (r->pt_len > r->pt_off || r->eof || record_ready(r) != 0) return true;
  if (r->roff > 0) {
    memmove(r->rbuf, r->rbuf + r->roff, r->rlen - r->roff);
    r->rlen -= r->roff;
    r->roff = 0;
  }
  ssize_t k;
  do k = recv(r->fd, r->rbuf + r->rlen, r->rcap - r->rlen, MSG_DONTWAIT);
  while (k < 0 && errno == EINTR);
  if (k > 0) r->rlen += (size_t)k;
  return k > 0 && record_ready(r) != 0;
}

bool gw_rec_relay(GwRec *from, GwRec *to, const void *head, size_t head_len, uint64_t n,
                  bool to_eof, uint64_t *moved)
{
  unsigned char plain[MAX_CIPHER];
  if (head_len > 0 && !put(to, head, head_len, RELAY_FLUSH)) return false;
  *moved += head_len;
  bool ok = true;
  while (ok && (to_eof || n > 0)) {
    /* About to wait for the sender: what is sealed goes to the client. */
    if (!has_record(from) && to->wlen > 0 && !flush(to)) {
      ok = false;
      break;
    }
    size_t want = to_eof || n > sizeof plain ? sizeof plain : (size_t)n;
    ssize_t k = gw_rec_read(from, plain, want);
    if (k == 0 && to_eof) break;
    ok = k > 0 && put(to, plain, (size_t)k, RELAY_FLUSH);
    if (ok && !to_eof) n -= (uint64_t)k;
    if (ok) *moved += (uint64_t)k;
  }
  OPENSSL_cleanse(plain, sizeof plain);
  return ok && (to->wlen == 0 || flush(to));
}
