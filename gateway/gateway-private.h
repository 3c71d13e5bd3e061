/* gateway-private.h — internals shared by the files of gateway/. */
#ifndef BOX_GATEWAY_PRIVATE_H
#define BOX_GATEWAY_PRIVATE_H

#include <openssl/ssl.h>

#include "gateway/gateway.h"

/* record.c: the TLS 1.3 record layer of a leg, taken over from OpenSSL
 * once its handshake is done (why: record.c's head). */
typedef struct GwRec GwRec;

/* On a context: its connections' traffic secrets are kept for a takeover. */
void gw_rec_setup(SSL_CTX *ctx);
/* Before the handshake of a connection of such a context. */
void gw_rec_watch(SSL *ssl, bool server_role);
/* Right after the handshake: the record layer of ssl on fd, or NULL when
 * this connection stays with OpenSSL.  From a takeover on, OpenSSL never
 * reads, writes or shuts down ssl again. */
GwRec *gw_rec_take(SSL *ssl, int fd, size_t read_buffer, size_t write_buffer);
/* Like SSL_read: what has arrived (waiting only when nothing has), 0 at
 * the end (close_notify, or the peer's close between records), -1 on a
 * failure or a socket timeout. */
ssize_t gw_rec_read(GwRec *r, void *buf, size_t n);
/* All of data, sealed and sent. */
bool gw_rec_write(GwRec *r, const void *data, size_t n);
/* A body from one taken-over connection to another: head (plaintext the
 * caller had already read), then n bytes or, when to_eof, up to the end;
 * each record opened into a buffer that stays in the cache and sealed
 * from it at once.  *moved counts what was relayed. */
bool gw_rec_relay(GwRec *from, GwRec *to, const void *head, size_t head_len, uint64_t n,
                  bool to_eof, uint64_t *moved);
/* close_notify, unless the connection failed; whether it went. */
bool gw_rec_close(GwRec *r);
void gw_rec_free(GwRec *r);

/* tls.c: the per-run CA, leaf certificates minted from it, upstream trust. */
typedef struct GwTls GwTls;

GwTls *gw_tls_new(const char *ca_cert_path, const char *const *extra_ca_files, GError **error);
void gw_tls_free(GwTls *t);
const char *gw_tls_ca_pem(const GwTls *t);
/* Terminates the client's TLS on fd with a leaf for host.  NULL on failure.
 * *rec: its record layer when taken over (gw_rec_take), else NULL. */
SSL *gw_tls_accept(GwTls *t, int fd, const char *host, GwRec **rec);
/* Opens TLS to the server on fd, verifying it for host (a name or an IP
 * literal).  NULL with *why (g_malloc'd) on failure.  A first attempt
 * offers TLS 1.3's mandatory suite alone; *suite_refused then tells
 * that the server refused it, so that a fresh connection may offer every
 * suite (first = false). */
SSL *gw_tls_connect(GwTls *t, int fd, const char *host, bool first, char **why,
                    bool *suite_refused, GwRec **rec);

/* route.c: one parsed destination of a credential route. */
typedef enum { GW_PATH_ANY, GW_PATH_PREFIX, GW_PATH_SUFFIX } GwPathKind;

typedef struct {
  bool wildcard;            /* "*.host": names strictly below host */
  char *host;               /* lowercase, no trailing dot, no brackets */
  int port;                 /* 0: 443 and 80 */
  GwPathKind path_kind;
  char *path;               /* the canonical prefix, or the suffix */
} GwDest;

/* NULL when entry is well formed (out filled), else a static reason. */
const char *gw_dest_parse(const char *entry, GwDest *out);
void gw_dest_clear(GwDest *d);
/* host lowercase, path canonical (box_gateway_canonical_path). */
bool gw_dest_matches(const GwDest *d, const char *host, int port, const char *path);
/* Whether some request could match both. */
bool gw_dests_meet(const GwDest *a, const GwDest *b);

#endif
