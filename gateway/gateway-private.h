/* gateway-private.h — internals shared by the files of gateway/. */
#ifndef BOX_GATEWAY_PRIVATE_H
#define BOX_GATEWAY_PRIVATE_H

#include <stdint.h>
#include <sys/types.h>

#include <openssl/ssl.h>

#include "gateway/gateway.h"

/* A relay moves up to this much per read and write: with TLS on both
 * sides that is 32 records decrypted, re-encrypted and sent in one go.
 * Measured on two cores with bench/gateway: 512 KiB took about 10% less
 * of the gateway's CPU than 256 KiB (fewer hand-offs between the pump's
 * threads, fewer and larger sends); 1 MiB saved little more. */
#define IO_CHUNK (512 * 1024)
/* Room in a stream's own buffer for message heads and chunk lines. */
#define HEAD_SLACK 65536

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
SSL *gw_tls_connect(GwTls *t, int fd, const char *host, bool first, char **why, bool *suite_refused,
                    GwRec **rec);

/* route.c: one parsed destination of a credential route. */
typedef enum { GW_PATH_ANY, GW_PATH_PREFIX, GW_PATH_SUFFIX } GwPathKind;

typedef struct {
  bool wildcard; /* "*.host": names strictly below host */
  char *host;    /* lowercase, no trailing dot, no brackets */
  int port;      /* 0: 443 and 80 */
  GwPathKind path_kind;
  char *path; /* the canonical prefix, or the suffix */
} GwDest;

/* NULL when entry is well formed (out filled), else a static reason. */
const char *gw_dest_parse(const char *entry, GwDest *out);
void gw_dest_clear(GwDest *d);
/* host lowercase, path canonical (box_gateway_canonical_path). */
bool gw_dest_matches(const GwDest *d, const char *host, int port, const char *path);
/* Whether some request could match both. */
bool gw_dests_meet(const GwDest *a, const GwDest *b);

/* credentials.c: a credential route as the gateway holds it. */
typedef struct GwRoute GwRoute;

/* proxy.c: the gateway. */
struct BoxGateway {
  BoxGatewayConfig cfg;
  char **allow;
  char **extra_ca;
  GwTls *tls;
  GMutex lock;
  GCond idle;
  int active;      /* connection threads alive */
  GHashTable *fds; /* every socket a connection holds, to end them at stop */
  GPtrArray *listeners;
  bool stopping;
  GwRoute *routes; /* credential routes (credentials.c) */
  size_t n_routes;
};

/* Adds or drops a socket a connection holds; one added while the gateway
 * stops is shut down at once. */
void gw_track_fd(BoxGateway *gw, int fd, bool add);
/* The idle timeout both ways, and no Nagle delay. */
void gw_set_timeouts(int fd, int ms);

/* stream.c: one leg's bytes, in the clear or through TLS (OpenSSL's, or
 * record.c's once taken over), with a buffer for reading heads and lines. */
typedef struct {
  int fd;
  SSL *ssl;
  GwRec *rec; /* ssl's records, when taken over from OpenSSL */
  char *buf;
  size_t off, len, cap;
} GwStream;

void gw_stream_init(GwStream *s, int fd, size_t cap);
/* Buffered bytes first, then what the leg brings: 0 at the end, -1 on failure. */
ssize_t gw_stream_read(GwStream *s, void *p, size_t n);
/* All of data, or false. */
bool gw_stream_write(GwStream *s, const void *data, size_t n);
/* The end of a stream's TLS: close_notify, by whichever layer has its
 * records. */
void gw_stream_end_tls(GwStream *s);
/* Reads up to and including the blank line ending a message head.  NULL
 * on EOF before any byte (*err = 0), a read error (*err = -1) or a head
 * longer than the buffer (*err = 431). */
char *gw_stream_read_head(GwStream *s, size_t limit, int *err);
/* One line (CRLF or LF stripped), at most limit bytes; NULL on failure. */
char *gw_stream_read_line(GwStream *s, size_t limit);
/* The trailer lines after a chunked body's last chunk, up to the blank
 * one: read and dropped.  0, or -1 when the stream ends first. */
int gw_stream_skip_trailers(GwStream *s, size_t max_line);

/* head.c: HTTP/1.1 message heads and authorities. */
typedef struct {
  char *name;
  char *value;
} GwHeader;

typedef struct {
  char *text;      /* owns every string below */
  char *a, *b, *c; /* request: method target version; response: version code reason */
  GArray *headers; /* GwHeader */
} GwHead;

/* Splits text (taken over) into h; false when it is not a message head. */
bool gw_head_parse(char *text, GwHead *h);
void gw_head_clear(GwHead *h);
/* The first header named name (case-insensitive), or NULL. */
const char *gw_head_get(const GwHead *h, const char *name);
int gw_head_count(const GwHead *h, const char *name);
bool gw_is_token_char(unsigned char c);
/* Whether a comma-separated header value holds token (case-insensitive). */
bool gw_list_has(const char *value, const char *token);
/* Whether the header name ends at this hop (fixed, or named by Connection). */
bool gw_hop_by_hop(const GwHead *h, const char *name);
/* host[:port] or [v6][:port]; host lowercased, one trailing dot removed,
 * brackets removed.  port stays default_port when absent. */
bool gw_parse_authority(const char *auth, int default_port, char **host, int *port);

/* body.c: bodies read whole. */
typedef enum { GW_FRAMING_NONE, GW_FRAMING_CHUNKED, GW_FRAMING_FIXED, GW_FRAMING_EOF } GwFraming;

/* A request's body per its framing, at most limit bytes.  Returns 0, or
 * the status to refuse with (400, 413, 501), or -1 on a read failure. */
int gw_read_request_body(GwStream *s, const GwHead *req, size_t limit, size_t max_line,
                         GByteArray *body);
/* The whole body of a reply per its framing, at most limit bytes.
 * 0 when read, 1 when longer than limit, -1 on a read failure. */
int gw_read_reply_body(GwStream *from, GwFraming framing, long long rlen, GByteArray *out,
                       size_t limit, size_t max_line);

/* proxy.c: one client connection. */
typedef struct {
  BoxGateway *gw;
  GwStream client;
  GwStream up;
  bool up_open;
  bool up_tls;
  char *up_host;
  int up_port;
  bool tunnel;
  char *relay; /* IO_CHUNK bytes, made at the first body relayed */
  char *tunnel_host;
  int tunnel_port;
} GwConn;

/* reply.c: what the gateway answers itself. */
void gw_send_simple(GwStream *to, int status, const char *reason, const char *body, bool marked);
/* A marked refusal; gate ("net:connect", "http:request") or NULL. */
void gw_refuse(GwConn *c, const char *gate, const char *message);
/* 502, not marked as a refusal; kind (resolve, connect, timeout, tls,
 * upstream) lets the Shell's curl give curl's exit status. */
void gw_bad_gateway(GwConn *c, const char *kind, const char *text);

/* upstream.c: the connection to the server. */
/* Decides and opens the upstream connection to host:port.  On refusal or
 * failure the reply has been written to the client and false returned. */
bool gw_dial(GwConn *c, const char *host, int port);
/* TLS to the server over the upstream connection.  False on failure:
 * *why (g_malloc'd) says why TLS failed, or stays NULL when a fresh
 * connection was refused or failed (the client then has its reply). */
bool gw_upstream_tls(GwConn *c, const char *host, int port, char **why);
void gw_close_upstream(GwConn *c);

/* relay.c: a reply's body (rlen bytes when fixed) from the server to the
 * client, as it comes.  Whether all of it went. */
bool gw_relay_body(GwConn *c, GwFraming framing, long long rlen);

/* exchange.c: one request on the client stream.  Returns true when the
 * client connection may carry another. */
bool gw_exchange(GwConn *c, GwHead *req);

/* credentials.c: credential routes (spec/runtime.md §7). */
typedef enum { GW_CRED_SWAPPED, GW_CRED_ADDED, GW_CRED_REFUSED } GwCredResult;

struct GwRoute {
  char *name;
  GwDest *dests;
  size_t n_dests;
  BoxGatewayPlacement placement;
  char *header, *prefix, *param;
  bool always;
  char *phantom;
  /* The secret and the spellings it leaves in a request (basic auth's
   * base64, a query's percent-escapes; aws: the session token): what a
   * reply is scrubbed of. */
  char *secret;
  char *spelled[2];
  bool aws;
  char *aws_key_id; /* the real key id; secret is the secret access key */
};

bool gw_route_init(GwRoute *r, const BoxGatewayRoute *from, GError **error);
void gw_route_clear(GwRoute *r);
/* The route whose destination matches, or NULL. */
const GwRoute *gw_route_for(BoxGateway *gw, const char *host, int port, const char *path);
/* Frees a string that may hold a secret, wiping it first. */
void gw_secret_free(gpointer p);
/* The route's secret put in the request's place for it: headers added
 * to req and strings made (*origin may be replaced) are held by owned. */
GwCredResult gw_cred_apply(const GwRoute *r, GwHead *req, const char *method, const char *host,
                           const char **origin, const GByteArray *body, GPtrArray *owned);
/* The reply to a credentialed request (head resp), scrubbed of the
 * secret, sent whole.  Whether it reached the client. */
bool gw_credentialed_reply(GwConn *c, const GwRoute *route, const GwHead *resp, GwFraming framing,
                           long long rlen, bool keep);

/* sigv4.c: the request re-signed for an aws:// route (SigV4). */
GwCredResult gw_cred_aws(const GwRoute *r, GwHead *req, const char *method, const char *host,
                         const char *origin, const GByteArray *body, GPtrArray *owned);

#endif
