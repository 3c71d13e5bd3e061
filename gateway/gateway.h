/* gateway/gateway.h — public interface of the egress gateway (libboxgateway).
 *
 * For now this holds the SSRF address floor (spec/runtime.md §6.3, §4.4 curl;
 * spec/policy.md §4.1 `ip` canonical text).
 */
#ifndef BOX_GATEWAY_H
#define BOX_GATEWAY_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* BOX_GATEWAY_H */
