/* digest.h — the message digests of the *sum commands: GLib's GChecksum
 * where it has the algorithm, and SHA-224 and BLAKE2b (which it lacks)
 * written out here. */
#ifndef BOX_SHELL_COMMANDS_DIGEST_H
#define BOX_SHELL_COMMANDS_DIGEST_H

#include <glib.h>
#include <stddef.h>

typedef enum {
  BX_DIGEST_MD5,
  BX_DIGEST_SHA1,
  BX_DIGEST_SHA224,
  BX_DIGEST_SHA256,
  BX_DIGEST_SHA384,
  BX_DIGEST_SHA512,
  BX_DIGEST_BLAKE2B,
} BxDigestType;

typedef struct BxDigest BxDigest;

/* A digest of bytes bytes (BLAKE2b: 1 to 64; the others: their own
 * length, bytes ignored). */
BxDigest *bx_digest_new(BxDigestType t, size_t bytes);
void bx_digest_update(BxDigest *d, const void *data, size_t n);
/* The lowercase hex of the digest (g_malloc'd); d is freed. */
char *bx_digest_finish(BxDigest *d);
/* The digest's length in bytes when bx_digest_new is given 0. */
size_t bx_digest_default_bytes(BxDigestType t);

#endif
