/* gateway/gateway.h — public interface of the egress gateway (libboxgateway).
 *
 * The gateway is an HTTP proxy (absolute-form and CONNECT) that asks its
 * owner about every connection (`net:connect`, before DNS and for each
 * resolved address) and every request (`http:request`, after terminating
 * TLS with a per-run CA), with the address floor (address_floor.h)
 * beneath policy and credential routes (route.h) swapping secrets in
 * (spec/runtime.md §6, §7; spec/policy.md §4, §4.1).
 */
#ifndef BOX_GATEWAY_H
#define BOX_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>
#include <json-c/json.h>

#include "gateway/address_floor.h"
#include "gateway/route.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The domain of every error the gateway sets (code 1). */
#define BOX_GATEWAY_ERROR (box_gateway_error_quark())
GQuark box_gateway_error_quark(void);

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
typedef void (*BoxGatewayOutcomeFn)(void *data, const char *action, json_object *input, int status,
                                    bool delivered);

typedef struct {
  BoxGatewayDecideFn decide;
  BoxGatewayOutcomeFn outcome; /* may be NULL */
  void *data;
  const char *ca_cert_path;          /* the per-run CA certificate is written here (PEM) */
  const char *const *extra_ca_files; /* PEM files trusted upstream beside the system store */
  const char *const *allow;          /* floor exceptions (address_floor.h), may be NULL */
  int max_connections;               /* 0: 256 */
  size_t max_header_bytes;           /* 0: 64 KiB */
  size_t max_request_body;           /* 0: 64 MiB */
  int idle_timeout_ms;               /* 0: 60 s; a client or server silent this long is dropped */
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
 * namespace; connections are served (and dialled out) in it too.
 * until_fd, when not -1, is taken over: once it turns readable (a pidfd
 * whose process ended) this listener closes.  Returns the port, or -1 with
 * error. */
int box_gateway_listen(BoxGateway *gw, int port, int until_fd, GError **error);
/* box_gateway_listen in two halves, for a socket that lives in another
 * namespace than the one that serves it: a thread may enter a namespace
 * it cannot leave (an ordinary user's boxd cannot return to the host's),
 * so a throwaway thread binds there and the serving thread, still at
 * home, serves.  bind: a listening socket's fd, or -1; serve takes fd and
 * until_fd over and returns the port, or -1. */
int box_gateway_bind(int port, GError **error);
int box_gateway_serve(BoxGateway *gw, int fd, int until_fd, GError **error);
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
