/* digest.c — see digest.h.  SHA-224 is SHA-256's compression with its own
 * initial words and a shorter result (FIPS 180-4); BLAKE2b is RFC 7693,
 * unkeyed.  Both only ever see whole files, so they favour plainness over
 * speed. */
#include "shell/commands/digest.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  uint32_t h[8];
  uint64_t len; /* bytes so far */
  uint8_t buf[64];
  size_t fill;
} Sha224;

typedef struct {
  uint64_t h[8];
  uint64_t t[2]; /* bytes so far, 128-bit */
  uint8_t buf[128];
  size_t fill, out;
} Blake2b;

struct BxDigest {
  BxDigestType type;
  GChecksum *g;
  Sha224 s;
  Blake2b b;
};

static const uint32_t sha256_k[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t sha224_iv[8] = {
  0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939, 0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4,
};

static uint32_t ror32(uint32_t x, unsigned n)
{
  return (x >> n) | (x << (32 - n));
}

static void sha224_block(Sha224 *s, const uint8_t *p)
{
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t v[8];
  memcpy(v, s->h, sizeof v);
  for (int i = 0; i < 64; i++) {
    uint32_t e = v[4], a = v[0];
    uint32_t t1 = v[7] + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & v[5]) ^ (~e & v[6])) +
                  sha256_k[i] + w[i];
    uint32_t t2 =
      (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
    memmove(v + 1, v, 7 * sizeof *v);
    v[4] += t1;
    v[0] = t1 + t2;
  }
  for (int i = 0; i < 8; i++) s->h[i] += v[i];
}

static void sha224_update(Sha224 *s, const uint8_t *p, size_t n)
{
  s->len += n;
  while (n) {
    size_t k = MIN(n, 64 - s->fill);
    memcpy(s->buf + s->fill, p, k);
    s->fill += k;
    p += k;
    n -= k;
    if (s->fill == 64) {
      sha224_block(s, s->buf);
      s->fill = 0;
    }
  }
}

static void sha224_final(Sha224 *s, uint8_t out[28])
{
  uint64_t bits = s->len * 8;
  uint8_t pad[72] = { 0x80 };
  /* the 0x80, zeros, then 8 length bytes ending a block */
  size_t padlen = (s->fill < 56 ? 56 : 120) - s->fill;
  for (int i = 0; i < 8; i++) pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
  sha224_update(s, pad, padlen + 8);
  for (int i = 0; i < 28; i++) out[i] = (uint8_t)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

static const uint64_t blake2b_iv[8] = {
  0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
  0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

/* the message words' order in each round; rounds 10 and 11 take rows 0
 * and 1 again */
static const uint8_t blake2b_sigma[10][16] = {
  { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
  { 14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3 },
  { 11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4 },
  { 7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8 },
  { 9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13 },
  { 2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9 },
  { 12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11 },
  { 13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10 },
  { 6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5 },
  { 10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0 },
};

static uint64_t ror64(uint64_t x, unsigned n)
{
  return (x >> n) | (x << (64 - n));
}

static void blake2b_g(uint64_t *v, int a, int b, int c, int d, uint64_t x, uint64_t y)
{
  v[a] += v[b] + x;
  v[d] = ror64(v[d] ^ v[a], 32);
  v[c] += v[d];
  v[b] = ror64(v[b] ^ v[c], 24);
  v[a] += v[b] + y;
  v[d] = ror64(v[d] ^ v[a], 16);
  v[c] += v[d];
  v[b] = ror64(v[b] ^ v[c], 63);
}

static void blake2b_block(Blake2b *b, bool last)
{
  uint64_t m[16], v[16];
  for (int i = 0; i < 16; i++) {
    m[i] = 0;
    for (int j = 7; j >= 0; j--) m[i] = m[i] << 8 | b->buf[8 * i + j];
  }
  memcpy(v, b->h, 8 * sizeof *v);
  memcpy(v + 8, blake2b_iv, 8 * sizeof *v);
  v[12] ^= b->t[0];
  v[13] ^= b->t[1];
  if (last) v[14] = ~v[14];
  for (int r = 0; r < 12; r++) {
    const uint8_t *s = blake2b_sigma[r % 10];
    blake2b_g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    blake2b_g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    blake2b_g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    blake2b_g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    blake2b_g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    blake2b_g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    blake2b_g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    blake2b_g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (int i = 0; i < 8; i++) b->h[i] ^= v[i] ^ v[i + 8];
}

static void blake2b_count(Blake2b *b, size_t n)
{
  b->t[0] += n;
  if (b->t[0] < n) b->t[1]++;
}

static void blake2b_update(Blake2b *b, const uint8_t *p, size_t n)
{
  /* a full buffer is compressed only once more input shows it is not the
   * last block, which the final compression marks */
  while (n) {
    if (b->fill == 128) {
      blake2b_count(b, 128);
      blake2b_block(b, false);
      b->fill = 0;
    }
    size_t k = MIN(n, 128 - b->fill);
    memcpy(b->buf + b->fill, p, k);
    b->fill += k;
    p += k;
    n -= k;
  }
}

static void blake2b_final(Blake2b *b, uint8_t *out)
{
  blake2b_count(b, b->fill);
  memset(b->buf + b->fill, 0, 128 - b->fill);
  blake2b_block(b, true);
  for (size_t i = 0; i < b->out; i++) out[i] = (uint8_t)(b->h[i / 8] >> (8 * (i % 8)));
}

static GChecksumType glib_type(BxDigestType t)
{
  switch (t) {
  case BX_DIGEST_MD5: return G_CHECKSUM_MD5;
  case BX_DIGEST_SHA1: return G_CHECKSUM_SHA1;
  case BX_DIGEST_SHA384: return G_CHECKSUM_SHA384;
  case BX_DIGEST_SHA512: return G_CHECKSUM_SHA512;
  default: return G_CHECKSUM_SHA256;
  }
}

size_t bx_digest_default_bytes(BxDigestType t)
{
  switch (t) {
  case BX_DIGEST_SHA224: return 28;
  case BX_DIGEST_BLAKE2B: return 64;
  default: return (size_t)g_checksum_type_get_length(glib_type(t));
  }
}

BxDigest *bx_digest_new(BxDigestType t, size_t bytes)
{
  BxDigest *d = g_new0(BxDigest, 1);
  d->type = t;
  if (t == BX_DIGEST_SHA224) {
    memcpy(d->s.h, sha224_iv, sizeof d->s.h);
  } else if (t == BX_DIGEST_BLAKE2B) {
    d->b.out = bytes ? bytes : 64;
    memcpy(d->b.h, blake2b_iv, sizeof d->b.h);
    /* the parameter block's first word: digest length, no key, fanout 1,
     * depth 1 */
    d->b.h[0] ^= 0x01010000ULL ^ d->b.out;
  } else {
    d->g = g_checksum_new(glib_type(t));
  }
  return d;
}

void bx_digest_update(BxDigest *d, const void *data, size_t n)
{
  if (d->g)
    g_checksum_update(d->g, data, (gssize)n);
  else if (d->type == BX_DIGEST_SHA224)
    sha224_update(&d->s, data, n);
  else
    blake2b_update(&d->b, data, n);
}

char *bx_digest_finish(BxDigest *d)
{
  char *hex;
  if (d->g) {
    hex = g_strdup(g_checksum_get_string(d->g));
    g_checksum_free(d->g);
  } else {
    uint8_t out[64];
    size_t n = d->type == BX_DIGEST_SHA224 ? 28 : d->b.out;
    if (d->type == BX_DIGEST_SHA224)
      sha224_final(&d->s, out);
    else
      blake2b_final(&d->b, out);
    hex = g_malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) g_snprintf(hex + 2 * i, 3, "%02x", out[i]);
  }
  g_free(d);
  return hex;
}
