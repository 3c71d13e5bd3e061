/* http.h — MCP's streamable HTTP transport, the client's side of one
 * exchange: a connection (plain, or TLS in it), a request's head, and the
 * reply read as it arrives, a message at a time (a JSON body whole, an SSE
 * stream's events one by one), so that a server's requests on a stream
 * reach the client while the stream is still open.  Used by the box's
 * bridge (through the gateway) and by `box policy generate-schema`
 * (directly). */
#ifndef MCP_HTTP_H
#define MCP_HTTP_H

#include <stdbool.h>
#include <sys/types.h>
#include <glib.h>
#include <openssl/ssl.h>

G_BEGIN_DECLS

/* A reply larger than this, or an event, is no MCP message. */
#define MCP_HTTP_BODY_MAX (16 * 1024 * 1024)

typedef struct {
  int fd;
  SSL *ssl;
  SSL_CTX *ctx;
} McpConn;

void mcp_conn_close(McpConn *c);
bool mcp_conn_write(McpConn *c, const char *p, size_t len);
ssize_t mcp_conn_read(McpConn *c, char *buf, size_t len);
/* TLS in c's connection, trusting ctx's store (ctx is c's from now on),
 * the peer verified as host (a name, sent as SNI too, or an address);
 * false when the handshake or the verification failed. */
bool mcp_conn_tls(McpConn *c, SSL_CTX *ctx, const char *host);

/* An endpoint's parts: "https://host:8443/mcp" -> tls, authority
 * "host:8443", host "host", port "8443" (the scheme's when not given),
 * path "/mcp".  False when it is no http(s) URL. */
typedef struct {
  bool tls;
  char *authority, *host, *port, *path;
} McpEndpoint;
bool mcp_endpoint_parse(const char *url, McpEndpoint *e);
void mcp_endpoint_clear(McpEndpoint *e);

/* A request's head: METHOD TARGET, Host, the Accept MCP asks for, the
 * session's id and the secret's header line ("Name: value") when given,
 * MORE's lines (NULL-terminated; may be NULL), and a JSON body's type and
 * length when body_len is not -1.  The connection closes after the
 * reply. */
GString *mcp_http_head(const char *method, const char *target, const char *host,
                       const char *session, const char *secret_header, const char *const *more,
                       gssize body_len);

typedef struct McpReply McpReply;
/* The reply's head, read from c (which stays the caller's); NULL when
 * none came. */
McpReply *mcp_reply_read(McpConn *c);
int mcp_reply_status(const McpReply *r);
/* A header's value (newly allocated), or NULL. */
char *mcp_reply_header(const McpReply *r, const char *name);
/* The body's next message into msg (emptied first): a JSON body whole,
 * or an SSE event's data lines joined; false at the body's end or when
 * it cannot be read. */
bool mcp_reply_next(McpReply *r, GString *msg);
/* The rest of the body as it is (an error's text), at most max bytes. */
char *mcp_reply_rest(McpReply *r, size_t max);
/* An SSE stream's last event ID so far (the id of the last whole event
 * that gave one: where a resume starts), or NULL (none, or an empty id
 * that reset it). */
const char *mcp_reply_last_id(const McpReply *r);
/* The reconnection time in milliseconds the stream asked for, or -1. */
gint64 mcp_reply_retry(const McpReply *r);
void mcp_reply_free(McpReply *r);

G_END_DECLS
#endif
