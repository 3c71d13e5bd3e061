/* gateway/route.h — credential routes (`[egress.<name>]`, spec/runtime.md
 * §2.4, §7): their destinations, where the secret goes, and the route the
 * gateway is given.  box.toml's loader checks routes with these; the
 * gateway swaps the secrets in.
 */
#ifndef BOX_GATEWAY_ROUTE_H
#define BOX_GATEWAY_ROUTE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

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
  const char *name;                /* the table's name, for warnings */
  const char *const *destinations; /* NULL-terminated, well formed, not overlapping */
  BoxGatewayPlacement placement;
  const char *header;  /* header placement: the header's name */
  const char *prefix;  /* header placement: text before the secret, may be "" */
  const char *param;   /* query placement: the parameter's name */
  bool inject_always;  /* add the secret even where the phantom is absent */
  const char *phantom; /* what the workload holds (aws: its AWS_ACCESS_KEY_ID) */
  const char *secret;  /* aws: the secret access key */
  /* aws:// (static keys): the request's SigV4 Authorization must name the
   * phantom key id; it is stripped with the X-Amz-* signing headers and
   * the request signed again for the service and region its host names. */
  bool aws;
  const char *aws_key_id;
  const char *aws_session_token; /* may be NULL */
} BoxGatewayRoute;

#ifdef __cplusplus
}
#endif

#endif /* BOX_GATEWAY_ROUTE_H */
