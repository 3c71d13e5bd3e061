/* ext.h — the extension literals (decimal, ip, datetime, duration). */
#ifndef BOX_POLICY_EXT_H
#define BOX_POLICY_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An ip("…") literal: address bytes (IPv4 in the first 4) and prefix. */
typedef struct {
  bool v6;
  unsigned char addr[16];
  int prefix;
} IpValue;

/* Parses extension literals; false when the text is not a valid literal.
 * decimal → value × 10^4; datetime → ms since the epoch; duration → ms. */
bool policy_parse_decimal(const char *s, size_t n, int64_t *out);
bool policy_parse_ip(const char *s, size_t n, IpValue *out);
bool policy_parse_datetime(const char *s, size_t n, int64_t *out);
bool policy_parse_duration(const char *s, size_t n, int64_t *out);

#endif
