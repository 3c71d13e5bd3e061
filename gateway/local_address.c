/* gateway/local_address.c — the SSRF address floor: is a URL host "local"?
 *
 * Host spellings follow the WHATWG URL host parser for names and IPv4
 * (percent-decoding, full-width forms, decimal/hex/octal numbers, 1–4
 * parts) and RFC 4291 for IPv6 (bracketed or bare, optional zone id,
 * trailing dotted IPv4). Anything the parser does not accept as a literal
 * is a name; names other than localhost are not judged here. */
#include "gateway/address_floor.h"

#include <glib.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  bool is_v6;
  uint32_t v4;    /* when !is_v6 */
  uint8_t v6[16]; /* when is_v6 */
} box_addr;

/* ---------------------------------------------------------------- helpers */

static int hex_value(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool is_digit(char c)
{
  return c >= '0' && c <= '9';
}

/* Decode one UTF-8 sequence at s (len bytes left); returns its length and
 * the code point, or 0 on malformed input. */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
  if (len == 0) return 0;
  if (s[0] < 0x80) {
    *cp = s[0];
    return 1;
  }
  size_t n;
  uint32_t v;
  if ((s[0] & 0xe0) == 0xc0) {
    n = 2;
    v = s[0] & 0x1f;
  } else if ((s[0] & 0xf0) == 0xe0) {
    n = 3;
    v = s[0] & 0x0f;
  } else if ((s[0] & 0xf8) == 0xf0) {
    n = 4;
    v = s[0] & 0x07;
  } else
    return 0;
  if (len < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3f);
  }
  *cp = v;
  return n;
}

/* The parts of WHATWG host preparation that matter for addresses:
 * percent-decoding, then the UTS #46 mappings of full-width ASCII
 * (U+FF01..U+FF5E) and the ideographic/half-width full stops to ASCII, and
 * ASCII lowercasing. Other non-ASCII text is kept as is (such a host is a
 * name, never a literal). */
static char *normalise_name(const char *host)
{
  size_t len = strlen(host);
  GString *dec = g_string_sized_new(len);
  for (size_t i = 0; i < len; i++) {
    if (host[i] == '%' && i + 2 < len && hex_value(host[i + 1]) >= 0 &&
        hex_value(host[i + 2]) >= 0) {
      g_string_append_c(dec, (char)(hex_value(host[i + 1]) * 16 + hex_value(host[i + 2])));
      i += 2;
    } else {
      g_string_append_c(dec, host[i]);
    }
  }
  GString *out = g_string_sized_new(dec->len);
  const unsigned char *s = (const unsigned char *)dec->str;
  size_t left = dec->len;
  while (left > 0) {
    uint32_t cp = 0;
    size_t n = utf8_decode(s, left, &cp);
    if (n == 0) { /* stray byte: keep it */
      g_string_append_c(out, (char)*s);
      s++;
      left--;
      continue;
    }
    if (cp >= 0xff01 && cp <= 0xff5e)
      cp -= 0xfee0;
    else if (cp == 0x3002 || cp == 0xff61)
      cp = '.';
    if (cp < 0x80)
      g_string_append_c(out, g_ascii_tolower((char)cp));
    else
      g_string_append_len(out, (const char *)s, (gssize)n);
    s += n;
    left -= n;
  }
  g_string_free(dec, TRUE);
  return g_string_free(out, FALSE);
}

static bool name_is_localhost(const char *name)
{
  size_t len = strlen(name);
  if (len > 0 && name[len - 1] == '.') len--;
  static const char lh[] = "localhost";
  const size_t lhl = sizeof lh - 1;
  if (len < lhl || g_ascii_strncasecmp(name + len - lhl, lh, lhl) != 0) return false;
  return len == lhl || name[len - lhl - 1] == '.';
}

/* ------------------------------------------------------------------ IPv4 */

/* WHATWG "IPv4 number parser" on s[0..n): 0x/0X ⇒ hex, leading 0 ⇒ octal,
 * else decimal; an empty input fails, an empty number after a prefix is 0.
 * Values saturate just above 32 bits (they are range-checked later). */
static bool v4_number(const char *s, size_t n, uint64_t *out)
{
  if (n == 0) return false;
  unsigned radix = 10;
  if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    radix = 16;
    s += 2;
    n -= 2;
  } else if (n >= 2 && s[0] == '0') {
    radix = 8;
    s += 1;
    n -= 1;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    int d = hex_value(s[i]);
    if (d < 0 || (unsigned)d >= radix) return false;
    v = v * radix + (unsigned)d;
    if (v > 0x1ffffffffULL) v = 0x1ffffffffULL;
  }
  *out = v;
  return true;
}

/* Length of s without the one trailing '.' the WHATWG parser drops. */
static size_t v4_effective_len(const char *s)
{
  size_t len = strlen(s);
  if (len > 0 && s[len - 1] == '.') len--;
  return len;
}

/* Split s[0..len) on '.'. Returns the number of parts (may exceed max). */
static size_t v4_split(const char *s, size_t len, const char *starts[], size_t lens[], size_t max)
{
  size_t count = 0, begin = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && s[i] != '.') continue;
    if (count < max) {
      starts[count] = s + begin;
      lens[count] = i - begin;
    }
    count++;
    begin = i + 1;
  }
  return count;
}

/* WHATWG "ends in a number": decides whether a name goes to the IPv4 parser. */
static bool ends_in_number(const char *s)
{
  size_t len = v4_effective_len(s);
  size_t begin = 0;
  for (size_t i = 0; i < len; i++)
    if (s[i] == '.') begin = i + 1;
  const char *last = s + begin;
  size_t ll = len - begin;
  if (ll == 0) return false;
  bool digits = true;
  for (size_t i = 0; i < ll; i++)
    if (!is_digit(last[i])) digits = false;
  if (digits) return true;
  uint64_t v;
  return v4_number(last, ll, &v);
}

/* WHATWG IPv4 parser. */
static bool parse_v4_whatwg(const char *s, uint32_t *out)
{
  const char *starts[4];
  size_t lens[4];
  size_t n = v4_split(s, v4_effective_len(s), starts, lens, 4);
  if (n == 0 || n > 4) return false;
  uint64_t nums[4];
  for (size_t i = 0; i < n; i++)
    if (!v4_number(starts[i], lens[i], &nums[i])) return false;
  for (size_t i = 0; i + 1 < n; i++)
    if (nums[i] > 255) return false;
  uint64_t limit = 1ULL << (8 * (5 - n));
  if (nums[n - 1] >= limit) return false;
  uint64_t v = nums[n - 1];
  for (size_t i = 0; i + 1 < n; i++) v += nums[i] << (8 * (3 - i));
  *out = (uint32_t)v;
  return true;
}

/* Strict dotted quad inside an IPv6 literal: four decimal parts 0..255,
 * no leading zeros, nothing after. */
static bool parse_v4_strict(const char *s, uint32_t *out)
{
  uint32_t v = 0;
  for (int part = 0; part < 4; part++) {
    if (!is_digit(*s)) return false;
    if (*s == '0' && is_digit(s[1])) return false;
    unsigned x = 0;
    int nd = 0;
    while (is_digit(*s)) {
      x = x * 10 + (unsigned)(*s - '0');
      if (++nd > 3 || x > 255) return false;
      s++;
    }
    v = (v << 8) | x;
    if (part < 3) {
      if (*s != '.') return false;
      s++;
    }
  }
  if (*s != '\0') return false;
  *out = v;
  return true;
}

/* ------------------------------------------------------------------ IPv6 */

/* RFC 4291 text form on s[0..len): hex groups, at most one "::", optional
 * trailing dotted IPv4, optional "%zone" (dropped). */
static bool parse_v6(const char *s, size_t len, uint8_t out[16])
{
  char buf[64];
  const char *pct = memchr(s, '%', len);
  if (pct) {
    if ((size_t)(pct - s) + 1 >= len) return false; /* empty zone */
    len = (size_t)(pct - s);
  }
  if (len == 0 || len >= sizeof buf) return false;
  memcpy(buf, s, len);
  buf[len] = '\0';

  uint16_t words[8] = { 0 };
  int n = 0, compress = -1;
  const char *p = buf;
  if (p[0] == ':') {
    if (p[1] != ':') return false;
    compress = 0;
    p += 2;
  }
  while (*p) {
    if (n == 8) return false;
    const char *q = p;
    while (hex_value(*q) >= 0) q++;
    if (*q == '.') { /* embedded IPv4 ends the address */
      uint32_t v4;
      if (n > 6 || !parse_v4_strict(p, &v4)) return false;
      words[n++] = (uint16_t)(v4 >> 16);
      words[n++] = (uint16_t)(v4 & 0xffff);
      p += strlen(p);
      break;
    }
    size_t nd = (size_t)(q - p);
    if (nd == 0 || nd > 4) return false;
    unsigned v = 0;
    for (size_t i = 0; i < nd; i++) v = v * 16 + (unsigned)hex_value(p[i]);
    words[n++] = (uint16_t)v;
    p = q;
    if (*p == '\0') break;
    if (*p != ':') return false;
    p++;
    if (*p == ':') {
      if (compress >= 0) return false;
      compress = n;
      p++;
    } else if (*p == '\0') {
      return false; /* trailing single colon */
    }
  }
  if (compress >= 0) {
    if (n == 8) return false; /* "::" must stand for ≥ 1 group */
    int tail = n - compress;
    uint16_t full[8] = { 0 };
    for (int i = 0; i < compress; i++) full[i] = words[i];
    for (int i = 0; i < tail; i++) full[8 - tail + i] = words[compress + i];
    memcpy(words, full, sizeof words);
  } else if (n != 8) {
    return false;
  }
  for (int i = 0; i < 8; i++) {
    out[2 * i] = (uint8_t)(words[i] >> 8);
    out[2 * i + 1] = (uint8_t)(words[i] & 0xff);
  }
  return true;
}

/* --------------------------------------------------------------- parsing */

typedef enum { LIT_NONE, LIT_ADDR, LIT_LOCALHOST } lit_kind;

static lit_kind classify_host(const char *host, box_addr *a)
{
  memset(a, 0, sizeof *a);
  if (!host || !*host) return LIT_NONE;
  size_t len = strlen(host);
  if (host[0] == '[') {
    if (len < 2 || host[len - 1] != ']') return LIT_NONE;
    if (memchr(host + 1, ']', len - 2) || memchr(host + 1, '[', len - 2)) return LIT_NONE;
    if (!parse_v6(host + 1, len - 2, a->v6)) return LIT_NONE;
    a->is_v6 = true;
    return LIT_ADDR;
  }
  if (strchr(host, ']') || strchr(host, '[')) return LIT_NONE;

  char *name = normalise_name(host);
  lit_kind kind = LIT_NONE;
  if (strchr(name, ':')) {
    if (parse_v6(name, strlen(name), a->v6)) {
      a->is_v6 = true;
      kind = LIT_ADDR;
    }
  } else if (name_is_localhost(name)) {
    kind = LIT_LOCALHOST;
  } else if (ends_in_number(name) && parse_v4_whatwg(name, &a->v4)) {
    kind = LIT_ADDR;
  }
  g_free(name);
  return kind;
}

/* ---------------------------------------------------------- classification */

static uint32_t be32(const uint8_t *b)
{
  return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

static bool all_zero(const uint8_t *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (b[i]) return false;
  return true;
}

/* IPv4 carried by an IPv6 address for the canonical text (policy.md §4.1). */
static bool v6_embedded_v4(const uint8_t v6[16], uint32_t *v4)
{
  if (all_zero(v6, 10) && v6[10] == 0xff && v6[11] == 0xff) { /* ::ffff:0:0/96 */
    *v4 = be32(v6 + 12);
    return true;
  }
  if (all_zero(v6, 12)) { /* ::/96 */
    uint32_t x = be32(v6 + 12);
    if (x == 0 || x == 1) return false; /* :: and ::1 */
    *v4 = x;
    return true;
  }
  if (v6[0] == 0x20 && v6[1] == 0x02) { /* 6to4 2002::/16 */
    *v4 = be32(v6 + 2);
    return true;
  }
  if (v6[0] == 0x20 && v6[1] == 0x01 && v6[2] == 0 && v6[3] == 0) { /* Teredo 2001::/32 */
    *v4 = ~be32(v6 + 12);
    return true;
  }
  return false;
}

static bool v4_is_local(uint32_t a)
{
  uint32_t top = a >> 24;
  if (top == 0 || top == 10 || top == 127) return true; /* this-net, private, loopback */
  if ((a & 0xffc00000u) == 0x64400000u) return true;    /* 100.64/10 shared */
  if ((a & 0xffff0000u) == 0xa9fe0000u) return true;    /* 169.254/16 link-local */
  if ((a & 0xfff00000u) == 0xac100000u) return true;    /* 172.16/12 */
  if ((a & 0xffff0000u) == 0xc0a80000u) return true;    /* 192.168/16 */
  if (top >= 224) return true;                          /* 224/4 multicast, 240/4 reserved */
  return false;
}

static bool addr_is_local(const box_addr *a)
{
  if (!a->is_v6) return v4_is_local(a->v4);
  const uint8_t *b = a->v6;
  uint32_t v4;
  if (v6_embedded_v4(b, &v4)) return v4_is_local(v4);
  if (all_zero(b, 15) && (b[15] == 0 || b[15] == 1)) return true; /* :: and ::1 */
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && all_zero(b + 4, 8))
    return v4_is_local(be32(b + 12)); /* NAT64 64:ff9b::/96 */
  if (all_zero(b, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0)
    return v4_is_local(be32(b + 12));                     /* SIIT ::ffff:0:0:0/96 */
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return true; /* fe80::/10 link-local */
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return true; /* fec0::/10 site-local */
  if ((b[0] & 0xfe) == 0xfc) return true;                 /* fc00::/7 unique-local */
  if (b[0] == 0xff) return true;                          /* ff00::/8 multicast */
  return false;
}

static char *format_v4(uint32_t v)
{
  return g_strdup_printf("%u.%u.%u.%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
}

/* RFC 5952 §4: lowercase, no leading zeros, the longest run (≥ 2) of zero
 * groups — the first one on a tie — shortened to "::". */
static char *format_v6(const uint8_t b[16])
{
  unsigned w[8];
  for (int i = 0; i < 8; i++) w[i] = ((unsigned)b[2 * i] << 8) | b[2 * i + 1];
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (w[i] != 0) {
      i++;
      continue;
    }
    int j = i;
    while (j < 8 && w[j] == 0) j++;
    if (j - i > best_len) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  if (best_len < 2) best = -1;
  GString *s = g_string_new(NULL);
  for (int i = 0; i < 8; i++) {
    if (i == best) {
      g_string_append(s, "::");
      i += best_len - 1;
      continue;
    }
    if (s->len > 0 && s->str[s->len - 1] != ':') g_string_append_c(s, ':');
    g_string_append_printf(s, "%x", w[i]);
  }
  return g_string_free(s, FALSE);
}

static char *format_addr(const box_addr *a)
{
  if (!a->is_v6) return format_v4(a->v4);
  uint32_t v4;
  if (v6_embedded_v4(a->v6, &v4)) return format_v4(v4);
  return format_v6(a->v6);
}

/* ------------------------------------------------------------------- API */

char *box_gateway_canonical_ip(const char *literal)
{
  box_addr a;
  if (classify_host(literal, &a) != LIT_ADDR) return NULL;
  return format_addr(&a);
}

bool box_gateway_host_is_local(const char *host, char **canonical_ip)
{
  box_addr a;
  lit_kind k = classify_host(host, &a);
  if (canonical_ip) *canonical_ip = (k == LIT_ADDR) ? format_addr(&a) : NULL;
  if (k == LIT_LOCALHOST) return true;
  if (k == LIT_ADDR) return addr_is_local(&a);
  return false;
}
