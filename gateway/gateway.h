/* gateway/gateway.h — public interface of the egress gateway (libboxgateway).
 *
 * The gateway is an HTTP proxy (absolute-form and CONNECT) that asks its
 * owner about every connection (`net:connect`, before DNS and for each
 * resolved address) and every request (`http:request`, after terminating
 * TLS with a per-run CA), with the SSRF address floor beneath policy
 * (spec/runtime.md §6, §4.4 curl; spec/policy.md §4, §4.1).
 */
#ifndef BOX_GATEWAY_H
#define BOX_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>
#include <json-c/json.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The domain of every error the gateway sets (code 1). */
#define BOX_GATEWAY_ERROR (box_gateway_error_quark())
GQuark box_gateway_error_quark(void);

/* True when `host` is `localhost` / `*.localhost` (case-insensitive, one
 * trailing dot allowed) or an IP literal, in any spelling the WHATWG URL
 * host parser or an IPv6 parser accepts (decimal/hex/octal/short IPv4;
 * bracketed or bare IPv6, with IPv4 embedded through mapped, compatible,
 * 6to4, Teredo, NAT64 64:ff9b::/96 or SIIT ::ffff:0:0:0/96 forms), whose
 * address is loopback, unspecified, private, shared (100.64/10),
 * link-local, unique-local, site-local, multicast or reserved/broadcast.
 *
 * When `canonical_ip` is not NULL it receives a g_malloc'd canonical text
 * of the literal (see box_gateway_canonical_ip), or NULL when `host` is not
 * an IP literal. Names that are not literals and not localhost give false;
 * resolved addresses must be checked separately. */
bool box_gateway_host_is_local(const char *host, char **canonical_ip);

/* Canonical text of an IP literal (g_malloc'd), or NULL when `literal` is
 * not one: IPv4 dotted quad; IPv6 embedding an IPv4 (mapped ::ffff:0:0/96,
 * compatible ::/96 other than :: and ::1, 6to4 2002::/16, Teredo 2001::/32
 * with the client address bit-inverted) gives the IPv4; any other IPv6
 * gives the RFC 5952 text (lowercase, compressed). */
char *box_gateway_canonical_ip(const char *literal);

/* ---- the allowance: named exceptions to the floor ---- */

/* An allowance entry is `HOST`, `HOST:PORT`, `[V6]` or `[V6]:PORT`, where
 * HOST is a name or an IP literal (literals compare by canonical text).
 * Returns NULL when entry is well formed, else a static reason. */
const char *box_gateway_allow_entry_problem(const char *entry);

/* True when host (a name or literal, any spelling) or its canonical IP is
 * named by an entry of allow (NULL-terminated, may be NULL) whose port is
 * absent or equal to port. */
bool box_gateway_allowed(const char *const *allow, const char *host, int port);

/* The floor for one destination: NULL when it may be reached, else the
 * refusal text (g_malloc'd) naming the address.  host is what the client
 * named; ip the resolved address's canonical text, or NULL before DNS. */
char *box_gateway_floor(const char *const *allow, const char *host, const char *ip, int port);

/* ---- credential routes (spec/runtime.md §2.4, §7) ---- */

/* A destination of an `[egress.<name>]` route: `host`, `host:port`,
 * `*.suffix`, each optionally followed by `/path-prefix`, or by `/` then `*suffix`.
 * Returns NULL when entry is well formed, else a static reason. */
const char *box_gateway_destination_problem(const char *entry);
/* Whether some request could match both (well-formed) entries. */
bool box_gateway_destinations_overlap(const char *a, const char *b);
/* Whether a request to host (lowercase) : port with canonical path
 * matches entry: bare hosts on 443 and 80 only, `*.x` below x only,
 * paths by whole segments. */
bool box_gateway_destination_matches(const char *entry, const char *host, int port,
                                     const char *path);

/* SigV4's service and region for an AWS host (lowercase):
 * <service>.<region>.amazonaws.com, <bucket>.s3.<region>.amazonaws.com,
 * <service>.dualstack.<region>.amazonaws.com, <service>.amazonaws.com
 * (global: us-east-1) and <service>.<region>.api.aws.  False for any
 * other host; *service and *region are g_malloc'd on success. */
bool box_gateway_aws_scope(const char *host, char **service, char **region);

typedef enum {
  BOX_GATEWAY_PLACE_HEADER,     /* <header>: <prefix><secret> */
  BOX_GATEWAY_PLACE_BASIC_AUTH, /* Authorization: Basic base64(<secret>), secret "user:password" */
  BOX_GATEWAY_PLACE_QUERY,      /* ?<param>=<secret> */
} BoxGatewayPlacement;

/* One env:// route.  The gateway copies everything; its copy of the
 * secret is wiped when the gateway is freed. */
typedef struct {
  const char *name;                 /* the table's name, for warnings */
  const char *const *destinations;  /* NULL-terminated, well formed, not overlapping */
  BoxGatewayPlacement placement;
  const char *header;               /* header placement: the header's name */
  const char *prefix;               /* header placement: text before the secret, may be "" */
  const char *param;                /* query placement: the parameter's name */
  bool inject_always;               /* add the secret even where the phantom is absent */
  const char *phantom;              /* what the workload holds (aws: its AWS_ACCESS_KEY_ID) */
  const char *secret;               /* aws: the secret access key */
  /* aws:// (static keys): the request's SigV4 Authorization must name the
   * phantom key id; it is stripped with the X-Amz-* signing headers and
   * the request signed again for the service and region its host names. */
  bool aws;
  const char *aws_key_id;
  const char *aws_session_token;    /* may be NULL */
} BoxGatewayRoute;

/* ---- the proxy ---- */

typedef struct BoxGateway BoxGateway;

/* Asks for one decision.  action is "net:connect" or "http:request"; input
 * holds the fields of spec/policy.md §4 (borrowed).  floor is NULL, or the
 * text of the address floor refusing this destination beneath policy: the
 * owner records the effective decision (a permit overridden by the floor
 * is the floor's deny).  Returns true when permitted; on deny sets
 * *message (g_malloc'd) to the text the refusal carries. */
typedef bool (*BoxGatewayDecideFn)(void *data, const char *action, json_object *input,
                                   const char *floor, char **message);

/* An exchange's outcome for history (spec/policy.md §2.3): status is the
 * upstream status or -1 when no reply arrived; delivered is false when
 * nothing was delivered upstream (an `::error`). */
typedef void (*BoxGatewayOutcomeFn)(void *data, const char *action, json_object *input,
                                    int status, bool delivered);

typedef struct {
  BoxGatewayDecideFn decide;
  BoxGatewayOutcomeFn outcome;      /* may be NULL */
  void *data;
  const char *ca_cert_path;         /* the per-run CA certificate is written here (PEM) */
  const char *const *extra_ca_files;/* PEM files trusted upstream beside the system store */
  const char *const *allow;         /* floor exceptions (see above), may be NULL */
  int max_connections;              /* 0: 256 */
  size_t max_header_bytes;          /* 0: 64 KiB */
  size_t max_request_body;          /* 0: 64 MiB */
  int idle_timeout_ms;              /* 0: 60 s; a client or server silent this long is dropped */
  /* Credential routes: inside TLS (CONNECT), a request to a route's
   * destination has the phantom in the route's placement swapped for the
   * secret (refused when it is missing or wrong, unless inject_always); a
   * plain-HTTP request there is refused; the reply is scrubbed of the
   * secret.  A route grants no reachability: decisions are unchanged. */
  const BoxGatewayRoute *routes;
  size_t n_routes;
} BoxGatewayConfig;

/* Makes the per-run CA (writing ca_cert_path) and the upstream trust.
 * Serves nothing until box_gateway_listen. */
BoxGateway *box_gateway_new(const BoxGatewayConfig *config, GError **error);
/* Listens on 127.0.0.1:port (0: any) in the calling thread's network
 * namespace; connections are served (and dialled out) in the network
 * namespace box_gateway_new ran in.  until_fd, when not -1, is taken over:
 * once it turns readable (a pidfd whose process ended) this listener
 * closes.  Returns the port, or -1 with error. */
int box_gateway_listen(BoxGateway *gw, int port, int until_fd, GError **error);
/* The per-run CA certificate (PEM text). */
const char *box_gateway_ca_pem(const BoxGateway *gw);
/* Stops listening, ends open connections, frees. */
void box_gateway_free(BoxGateway *gw);

/* Canonical request path for `http:request` (spec/runtime.md §6.1 step 6):
 * query and fragment dropped, percent-escapes of unreserved bytes decoded,
 * and of the sub-delims, `:` and `@` a segment may carry as they are (not
 * `;`), others kept with hex uppercased, bytes outside RFC 3986 pchar
 * escaped; `.`/`..` segments removed; "/" when empty.  g_malloc'd. */
char *box_gateway_canonical_path(const char *target);

/* The origin-form target the gateway forwards for origin (as the client
 * sent it): its canonical path (above) and its query as sent, so that the
 * path decided is the path served.  *path receives that path (g_malloc'd).
 * A target that servers read in different ways gives NULL and *why, a
 * static reason: an encoded `/` or `\`, `%00` and other encoded control
 * bytes, an invalid or double-encoded escape, bytes or escapes that are
 * not UTF-8 (overlong forms), a backslash, a `;` parameter, an empty
 * segment, a fragment, a raw space or control byte. */
char *box_gateway_request_target(const char *origin, char **path, const char **why);

#ifdef __cplusplus
}
#endif

#endif /* BOX_GATEWAY_H */
