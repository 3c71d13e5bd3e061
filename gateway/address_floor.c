/* gateway/address_floor.c — the floor's verdict for one destination, and
 * the allowance (box.toml's [gateway] allow_local) that names exceptions
 * to it.  Which hosts are local is local_address.c's. */
#include "gateway/address_floor.h"

#include <stdlib.h>
#include <string.h>

/* Splits an entry into host (brackets removed) and port (0 when absent).
 * Returns false when malformed. */
static bool split_entry(const char *entry, char **host, int *port)
{
  *host = NULL;
  *port = 0;
  if (!entry || !*entry) return false;
  const char *port_text = NULL;
  if (entry[0] == '[') {
    const char *close = strchr(entry, ']');
    if (!close || close == entry + 1) return false;
    *host = g_strndup(entry + 1, (gsize)(close - entry - 1));
    if (close[1] == ':')
      port_text = close + 2;
    else if (close[1] != '\0')
      goto bad;
  } else {
    const char *colon = strchr(entry, ':');
    if (colon && strchr(colon + 1, ':')) {
      *host = g_strdup(entry); /* a bare IPv6 literal, no port */
    } else if (colon) {
      *host = g_strndup(entry, (gsize)(colon - entry));
      port_text = colon + 1;
    } else {
      *host = g_strdup(entry);
    }
  }
  if (!**host) goto bad;
  for (const char *p = *host; *p; p++)
    if ((unsigned char)*p <= ' ' || *p == '/' || *p == '@' || *p == '[' || *p == ']') goto bad;
  if (port_text) {
    char *end = NULL;
    long v = strtol(port_text, &end, 10);
    if (!*port_text || *end || v < 1 || v > 65535) goto bad;
    *port = (int)v;
  }
  return true;
bad:
  g_free(*host);
  *host = NULL;
  return false;
}

const char *box_gateway_allow_entry_problem(const char *entry)
{
  char *host = NULL;
  int port = 0;
  if (!split_entry(entry, &host, &port))
    return "write HOST, HOST:PORT or [IPV6]:PORT, with a port from 1 to 65535";
  g_free(host);
  return NULL;
}

/* A name lowercased with one trailing dot removed; a literal's canonical
 * text. */
static char *comparable(const char *host)
{
  char *ip = box_gateway_canonical_ip(host);
  if (ip) return ip;
  char *s = g_ascii_strdown(host, -1);
  size_t n = strlen(s);
  if (n > 1 && s[n - 1] == '.') s[n - 1] = '\0';
  return s;
}

bool box_gateway_allowed(const char *const *allow, const char *host, int port)
{
  if (!allow || !host) return false;
  g_autofree char *want = comparable(host);
  for (const char *const *e = allow; *e; e++) {
    g_autofree char *h = NULL;
    int p = 0;
    if (!split_entry(*e, &h, &p)) continue;
    if (p != 0 && p != port) continue;
    g_autofree char *have = comparable(h);
    if (strcmp(have, want) == 0) return true;
  }
  return false;
}

/* The refusal text: addr is what the floor found local. */
static char *refusal(const char *addr)
{
  return g_strdup_printf("the egress floor refuses %s: a local, private or metadata address "
                         "is reached only when box.toml names it in [gateway] allow_local",
                         addr);
}

char *box_gateway_floor(const char *const *allow, const char *host, const char *ip, int port)
{
  if (ip) {
    g_autofree char *canon = box_gateway_canonical_ip(ip);
    const char *addr = canon ? canon : ip;
    if (!box_gateway_host_is_local(addr, NULL)) return NULL;
    if (box_gateway_allowed(allow, addr, port) || box_gateway_allowed(allow, host, port))
      return NULL;
    return refusal(addr);
  }
  g_autofree char *canon = NULL;
  if (!box_gateway_host_is_local(host, &canon)) return NULL;
  if (box_gateway_allowed(allow, host, port)) return NULL;
  return refusal(canon ? canon : host);
}
