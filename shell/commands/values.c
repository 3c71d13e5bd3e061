/* values.c — values the commands read and print: sizes, backslash
 * escapes, dates. */
#include "shell/commands/commands-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool bx_parse_size(const char *s, unsigned long long *out)
{
  if (!*s || !g_ascii_isdigit(*s)) return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno) {
    *out = ~0ULL;
    return true;
  }
  if (*end) {
    static const char units[] = "KMGTPEZY";
    unsigned long long mul = 1;
    if (strcmp(end, "b") == 0)
      mul = 512;
    else if (strcmp(end, "c") == 0)
      mul = 1;
    else if (strcmp(end, "w") == 0)
      mul = 2;
    else {
      const char *u = strchr(units, g_ascii_toupper(end[0]));
      if (!u || (end[0] == 'k' && 0)) return false;
      int power = (int)(u - units) + 1;
      unsigned long long base;
      if (end[1] == '\0' || strcmp(end + 1, "iB") == 0)
        base = 1024;
      else if (strcmp(end + 1, "B") == 0)
        base = 1000;
      else
        return false;
      if (end[0] == 'k' && end[1] == '\0')
        base = 1024;
      else if (g_ascii_islower(end[0]) && end[0] != 'k')
        return false;
      for (int i = 0; i < power; i++) mul *= base;
    }
    if (v && mul > ~0ULL / v)
      v = ~0ULL;
    else
      v *= mul;
  }
  *out = v;
  return true;
}

void bx_human_size(unsigned long long n, bool si, char *buf, size_t cap)
{
  unsigned long long base = si ? 1000 : 1024;
  static const char units[] = "KMGTPEZY";
  if (n < base) {
    snprintf(buf, cap, "%llu", n);
    return;
  }
  int u = 0;
  unsigned long long div = base;
  while (u < 7 && n / div >= base) {
    div *= base;
    u++;
  }
  unsigned long long tenths = (n * 10 + div - 1) / div;
  if (n > (unsigned long long)-1 / 10) tenths = (n / div) * 10 + 10;
  if (tenths < 100) {
    snprintf(buf, cap, "%llu.%llu%c", tenths / 10, tenths % 10, si && u == 0 ? 'k' : units[u]);
    return;
  }
  unsigned long long whole = n / div + (n % div ? 1 : 0);
  if (whole >= base && u < 7) {
    snprintf(buf, cap, "1.0%c", units[u + 1]);
    return;
  }
  /* GNU spells the SI kilo "k" */
  snprintf(buf, cap, "%llu%c", whole, si && u == 0 ? 'k' : units[u]);
}

int bx_escape_byte(char letter, const char *accepted)
{
  static const char from[] = "abeEfnrtv\\'\"?0";
  static const char to[] = { '\a', '\b', 033,  033,  '\f', '\n', '\r',
                             '\t', '\v', '\\', '\'', '"',  '?',  '\0' };
  const char *p;
  if (!letter || !strchr(accepted, letter) || !(p = strchr(from, letter))) return -1;
  return (unsigned char)to[p - from];
}

const char *bx_escape_name(unsigned char ch)
{
  switch (ch) {
  case '\a': return "\\a";
  case '\b': return "\\b";
  case '\f': return "\\f";
  case '\n': return "\\n";
  case '\r': return "\\r";
  case '\t': return "\\t";
  case '\v': return "\\v";
  default: return NULL;
  }
}

/* Copies the letters at p (31 at most) into word; returns their count. */
static int take_word(const char *p, char word[32])
{
  int n = 0;
  while (g_ascii_isalpha(p[n]) && n < 31) {
    word[n] = p[n];
    n++;
  }
  word[n] = 0;
  return n;
}

static int unit_seconds(const char *w, int *months)
{
  size_t n = strlen(w);
  char t[32];
  if (n >= sizeof t) return -1;
  memcpy(t, w, n + 1);
  if (n > 1 && t[n - 1] == 's' && strcmp(t, "s") != 0) t[--n] = 0;
  *months = 0;
  if (!strcmp(t, "sec") || !strcmp(t, "second")) return 1;
  if (!strcmp(t, "min") || !strcmp(t, "minute")) return 60;
  if (!strcmp(t, "hour")) return 3600;
  if (!strcmp(t, "day")) return 86400;
  if (!strcmp(t, "week")) return 7 * 86400;
  if (!strcmp(t, "fortnight")) return 14 * 86400;
  if (!strcmp(t, "month")) {
    *months = 1;
    return 0;
  }
  if (!strcmp(t, "year")) {
    *months = 12;
    return 0;
  }
  return -1;
}

bool bx_parse_date(const char *s, bool utc, struct timespec *out)
{
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  while (g_ascii_isspace(*s)) s++;
  if (*s == '@') {
    char *end;
    errno = 0;
    double v = g_ascii_strtod(s + 1, &end);
    while (g_ascii_isspace(*end)) end++;
    if (end == s + 1 || *end || errno) return false;
    out->tv_sec = (time_t)v;
    if (v < 0 && (double)out->tv_sec != v) out->tv_sec--;
    out->tv_nsec = (long)((v - (double)out->tv_sec) * 1e9 + 0.5);
    if (out->tv_nsec >= 1000000000) {
      out->tv_sec++;
      out->tv_nsec -= 1000000000;
    }
    return true;
  }
  struct tm tm;
  time_t t0 = now.tv_sec;
  if (utc)
    gmtime_r(&t0, &tm);
  else
    localtime_r(&t0, &tm);
  long nsec = now.tv_nsec;
  bool have_date = false, have_time = false, have_zone = false;
  long zone_off = 0;
  long rel_sec = 0;
  int rel_mon = 0, rel_day = 0;
  gchar *lower = g_ascii_strdown(s, -1);
  char *p = lower;
  bool ok = true;
  while (ok) {
    while (g_ascii_isspace(*p) || *p == ',') p++;
    if (!*p) break;
    int y, mo, d, hh, mi, n;
    double ss;
    if (sscanf(p, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && !have_date) {
      tm.tm_year = y - 1900;
      tm.tm_mon = mo - 1;
      tm.tm_mday = d;
      if (mo < 1 || mo > 12 || d < 1 || d > 31) {
        ok = false;
        break;
      }
      if (!have_time) {
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        nsec = 0;
      }
      have_date = true;
      p += n;
      if (*p == 't') p++;
      continue;
    }
    if (g_ascii_isdigit(*p) && sscanf(p, "%2d:%2d%n", &hh, &mi, &n) == 2 && !have_time) {
      p += n;
      ss = 0;
      if (*p == ':') {
        char *end;
        ss = g_ascii_strtod(p + 1, &end);
        if (end == p + 1) {
          ok = false;
          break;
        }
        p = end;
      }
      if (hh > 23 || mi > 59 || ss >= 61) {
        ok = false;
        break;
      }
      tm.tm_hour = hh;
      tm.tm_min = mi;
      tm.tm_sec = (int)ss;
      nsec = (long)((ss - (int)ss) * 1e9);
      have_time = true;
      if (*p == 'z') {
        have_zone = true;
        zone_off = 0;
        p++;
      } else if ((*p == '+' || *p == '-') && g_ascii_isdigit(p[1])) {
        int sign = *p == '-' ? -1 : 1, zh = 0, zm = 0;
        p++;
        if (sscanf(p, "%2d:%2d%n", &zh, &zm, &n) == 2 || sscanf(p, "%2d%2d%n", &zh, &zm, &n) == 2)
          p += n;
        else if (sscanf(p, "%2d%n", &zh, &n) == 1)
          p += n;
        have_zone = true;
        zone_off = sign * (zh * 3600L + zm * 60L);
      }
      if (*p && !g_ascii_isspace(*p)) {
        ok = false;
        break;
      }
      continue;
    }
    if (!strncmp(p, "utc", 3) || !strncmp(p, "gmt", 3)) {
      have_zone = true;
      zone_off = 0;
      p += 3;
      continue;
    }
    if (*p == 'z' && (!p[1] || g_ascii_isspace(p[1]))) {
      have_zone = true;
      zone_off = 0;
      p++;
      continue;
    }
    /* words */
    char word[32];
    long num = 1;
    bool have_num = false;
    if (*p == '+' || *p == '-' || g_ascii_isdigit(*p)) {
      char *end;
      num = strtol(p, &end, 10);
      if (end == p || (end == p + 1 && !g_ascii_isdigit(*p))) {
        ok = false;
        break;
      }
      have_num = true;
      p = end;
      while (g_ascii_isspace(*p)) p++;
    }
    n = take_word(p, word);
    if (n == 0) {
      ok = false;
      break;
    }
    p += n;
    if (!have_num) {
      if (!strcmp(word, "now")) continue;
      if (!strcmp(word, "today")) continue;
      if (!strcmp(word, "yesterday")) {
        rel_day -= 1;
        continue;
      }
      if (!strcmp(word, "tomorrow")) {
        rel_day += 1;
        continue;
      }
      if (!strcmp(word, "ago")) {
        rel_sec = -rel_sec;
        rel_mon = -rel_mon;
        rel_day = -rel_day;
        continue;
      }
      if (!strcmp(word, "next")) {
        num = 1;
        have_num = true;
      } else if (!strcmp(word, "last")) {
        num = -1;
        have_num = true;
      }
      if (have_num) {
        while (g_ascii_isspace(*p)) p++;
        p += take_word(p, word);
      }
    }
    int months;
    int secs = unit_seconds(word, &months);
    if (secs < 0) {
      ok = false;
      break;
    }
    if (months)
      rel_mon += (int)num * months;
    else if (secs == 86400 || secs == 7 * 86400 || secs == 14 * 86400)
      rel_day += (int)num * (secs / 86400);
    else
      rel_sec += num * secs;
  }
  g_free(lower);
  if (!ok) return false;
  tm.tm_mon += rel_mon;
  tm.tm_mday += rel_day;
  tm.tm_isdst = -1;
  time_t t;
  if (have_zone) {
    tm.tm_isdst = 0;
    t = timegm(&tm) - zone_off;
  } else {
    t = utc ? timegm(&tm) : mktime(&tm);
  }
  if (t == (time_t)-1 && errno == EOVERFLOW) return false;
  out->tv_sec = t + rel_sec;
  out->tv_nsec = nsec;
  return true;
}
