/* gateway/address_floor.h — the address floor: which destinations are
 * never reached unless box.toml names them ([gateway] allow_local), beneath
 * policy (spec/runtime.md §6, §4.4 curl; spec/policy.md §4.1).  The
 * gateway applies it to every connection; the Shell's curl asks it before
 * any transport, so it stands apart from the proxy's API.
 */
#ifndef BOX_GATEWAY_ADDRESS_FLOOR_H
#define BOX_GATEWAY_ADDRESS_FLOOR_H

#include <stdbool.h>
#include <glib.h>

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

#ifdef __cplusplus
}
#endif

#endif /* BOX_GATEWAY_ADDRESS_FLOOR_H */
