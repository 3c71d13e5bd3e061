/* ext.c — Cedar's extension literals (spec/policy.md §1.3): decimal,
 * ipaddr, datetime and duration, parsed once at load. */
#include "policy/ext.h"

#include <glib.h>

#include <arpa/inet.h>
#include <string.h>

static bool digit(char c)
{
  return c >= '0' && c <= '9';
}

/* *v = *v * 10 + d, or - d where the number is accumulated negatively;
 * false on overflow. */
static bool push_digit(int64_t *v, int d, bool negative)
{
  if (__builtin_mul_overflow(*v, 10, v)) return false;
  return negative ? !__builtin_sub_overflow(*v, d, v) : !__builtin_add_overflow(*v, d, v);
}

/* Reads the digits at *i on into *v (as push_digit); false on overflow. */
static bool read_digits(const char *s, size_t n, size_t *i, int64_t *v, bool negative)
{
  for (; *i < n && digit(s[*i]); (*i)++)
    if (!push_digit(v, s[*i] - '0', negative)) return false;
  return true;
}

/* Where a literal's digits start: past its optional '-' (*neg says). */
static size_t leading_minus(const char *s, size_t n, bool *neg)
{
  *neg = n > 0 && s[0] == '-';
  return *neg ? 1 : 0;
}

/* decimal: -?DIGITS.DIGITS{1,4}; value scaled by 10^4, within i64. */
bool policy_parse_decimal(const char *s, size_t n, int64_t *out)
{
  bool neg;
  size_t i = leading_minus(s, n, &neg);
  size_t start = i;
  /* accumulate as a negative number so that i64::MIN / 10^4 fits */
  int64_t v = 0;
  if (!read_digits(s, n, &i, &v, true)) return false;
  if (i == start || i >= n || s[i] != '.') return false;
  i++;
  size_t fstart = i;
  while (i < n && digit(s[i])) i++;
  size_t nf = i - fstart;
  if (nf < 1 || nf > 4 || i != n) return false;
  for (size_t k = 0; k < 4; k++) {
    int d = k < nf ? s[fstart + k] - '0' : 0;
    if (!push_digit(&v, d, true)) return false;
  }
  if (!neg) {
    if (v == INT64_MIN) return false;
    v = -v;
  }
  *out = v;
  return true;
}

/* ip: IPv4 dotted quad or IPv6 text (no embedded IPv4), optional /prefix. */
bool policy_parse_ip(const char *s, size_t n, IpValue *out)
{
  if (n == 0 || n > 64 || memchr(s, '\0', n)) return false;
  char buf[65];
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *slash = strchr(buf, '/');
  int prefix = -1;
  if (slash) {
    *slash = '\0';
    const char *q = slash + 1;
    if (!*q || strlen(q) > 3) return false;
    prefix = 0;
    for (; *q; q++) {
      if (!digit(*q)) return false;
      prefix = prefix * 10 + (*q - '0');
    }
    if (slash[1] == '0' && slash[2]) return false; /* no leading zeros */
  }
  memset(out, 0, sizeof *out);
  if (strchr(buf, ':')) {
    if (strchr(buf, '.')) return false;
    if (inet_pton(AF_INET6, buf, out->addr) != 1) return false;
    out->v6 = true;
    if (prefix > 128) return false;
    out->prefix = prefix < 0 ? 128 : prefix;
  } else {
    if (inet_pton(AF_INET, buf, out->addr) != 1) return false;
    if (prefix > 32) return false;
    out->prefix = prefix < 0 ? 32 : prefix;
  }
  return true;
}

static bool take_digits(const char *s, size_t n, size_t *i, int count, int *out)
{
  int v = 0;
  for (int k = 0; k < count; k++) {
    if (*i >= n || !digit(s[*i])) return false;
    v = v * 10 + (s[*i] - '0');
    (*i)++;
  }
  *out = v;
  return true;
}

static int64_t days_from_civil(int64_t y, int m, int d)
{
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
  static const int dm[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
  return dm[m - 1];
}

/* datetime: YYYY-MM-DD, or YYYY-MM-DDThh:mm:ss[.SSS](Z|(+|-)hhmm). */
bool policy_parse_datetime(const char *s, size_t n, int64_t *out)
{
  size_t i = 0;
  int y, mo, d, h = 0, mi = 0, se = 0, ms = 0;
  if (!take_digits(s, n, &i, 4, &y) || i >= n || s[i++] != '-' || !take_digits(s, n, &i, 2, &mo) ||
      i >= n || s[i++] != '-' || !take_digits(s, n, &i, 2, &d))
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo)) return false;
  int64_t offset_ms = 0;
  if (i < n) {
    if (s[i++] != 'T' || !take_digits(s, n, &i, 2, &h) || i >= n || s[i++] != ':' ||
        !take_digits(s, n, &i, 2, &mi) || i >= n || s[i++] != ':' || !take_digits(s, n, &i, 2, &se))
      return false;
    if (h > 23 || mi > 59 || se > 59) return false;
    if (i < n && s[i] == '.') {
      i++;
      if (!take_digits(s, n, &i, 3, &ms)) return false;
    }
    if (i >= n) return false;
    if (s[i] == 'Z') {
      i++;
    } else if (s[i] == '+' || s[i] == '-') {
      int sign = s[i++] == '+' ? 1 : -1, oh, om;
      if (!take_digits(s, n, &i, 2, &oh) || !take_digits(s, n, &i, 2, &om)) return false;
      if (oh > 23 || om > 59) return false;
      offset_ms = sign * ((int64_t)oh * 3600000 + (int64_t)om * 60000);
    } else {
      return false;
    }
    if (i != n) return false;
  }
  int64_t days = days_from_civil(y, mo, d);
  *out = days * 86400000 + (int64_t)h * 3600000 + (int64_t)mi * 60000 + (int64_t)se * 1000 + ms -
         offset_ms;
  return true;
}

/* duration: -?(Nd)?(Nh)?(Nm)?(Ns)?(Nms)? with at least one unit, in order. */
bool policy_parse_duration(const char *s, size_t n, int64_t *out)
{
  bool neg;
  size_t i = leading_minus(s, n, &neg);
  static const struct {
    const char *unit;
    int64_t ms;
  } units[] = { { "d", 86400000 }, { "h", 3600000 }, { "m", 60000 }, { "s", 1000 }, { "ms", 1 } };
  int next_unit = 0, seen = 0;
  int64_t total = 0;
  while (i < n) {
    size_t start = i;
    int64_t v = 0;
    if (!read_digits(s, n, &i, &v, false)) return false;
    if (i == start) return false;
    int u = -1;
    if (i + 1 < n && s[i] == 'm' && s[i + 1] == 's')
      u = 4;
    else if (i < n && s[i] == 'd')
      u = 0;
    else if (i < n && s[i] == 'h')
      u = 1;
    else if (i < n && s[i] == 'm')
      u = 2;
    else if (i < n && s[i] == 's')
      u = 3;
    if (u < 0 || u < next_unit) return false;
    i += strlen(units[u].unit);
    next_unit = u + 1;
    int64_t part;
    if (__builtin_mul_overflow(v, units[u].ms, &part) ||
        __builtin_add_overflow(total, part, &total))
      return false;
    seen++;
  }
  if (!seen) return false;
  *out = neg ? -total : total;
  return true;
}
