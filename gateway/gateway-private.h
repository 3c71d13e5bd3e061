/* gateway-private.h — internals shared by the files of gateway/. */
#ifndef BOX_GATEWAY_PRIVATE_H
#define BOX_GATEWAY_PRIVATE_H

#include <openssl/ssl.h>

#include "gateway/gateway.h"

/* tls.c: the per-run CA, leaf certificates minted from it, upstream trust. */
typedef struct GwTls GwTls;

GwTls *gw_tls_new(const char *ca_cert_path, const char *const *extra_ca_files, GError **error);
void gw_tls_free(GwTls *t);
const char *gw_tls_ca_pem(const GwTls *t);
/* Terminates the client's TLS on fd with a leaf for host.  NULL on failure. */
SSL *gw_tls_accept(GwTls *t, int fd, const char *host);
/* Opens TLS to the server on fd, verifying it for host (a name or an IP
 * literal).  NULL with *why (g_malloc'd) on failure.  A first attempt
 * offers TLS 1.3's mandatory suite alone; *suite_refused then tells
 * that the server refused it, so that a fresh connection may offer every
 * suite (first = false). */
SSL *gw_tls_connect(GwTls *t, int fd, const char *host, bool first, char **why,
                    bool *suite_refused);

#endif
