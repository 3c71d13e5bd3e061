/* date.c — GNU date: [+FORMAT], -d STRING, -u, -r FILE, -I[FMT], -R,
 * --rfc-3339=FMT; GNU's %N and %:z on top of strftime. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "shell/commands/commands-private.h"

/* strftime with GNU date's extras (%N, %:z, %::z, %-N handled as %N). */
static void format_time(GString *out, const char *fmt, const struct timespec *ts,
                        const struct tm *tm)
{
  GString *f = g_string_new(NULL);
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') {
      g_string_append_c(f, *p);
      continue;
    }
    const char *q = p + 1;
    char flag = 0;
    if (*q == '-' || *q == '_' || *q == '0' || *q == '^' || *q == '#') flag = *q++;
    int width = -1;
    if (g_ascii_isdigit(*q)) {
      width = 0;
      while (g_ascii_isdigit(*q)) width = width * 10 + (*q++ - '0');
    }
    if (*q == 'N') {
      char ns[16];
      snprintf(ns, sizeof ns, "%09ld", ts->tv_nsec);
      int w = width < 0 ? 9 : MIN(width, 9);
      g_string_append_len(f, ns, w);
      p = q;
      continue;
    }
    int colons = 0;
    while (q[colons] == ':') colons++;
    if (colons && q[colons] == 'z') {
      long off = tm->tm_gmtoff;
      char sign = off < 0 ? '-' : '+';
      if (off < 0) off = -off;
      if (colons == 1)
        g_string_append_printf(f, "%c%02ld:%02ld", sign, off / 3600, off / 60 % 60);
      else
        g_string_append_printf(f, "%c%02ld:%02ld:%02ld", sign, off / 3600, off / 60 % 60, off % 60);
      p = q + colons;
      continue;
    }
    if (*p && p[1] == '%') {
      g_string_append(f, "%%");
      p++;
      continue;
    }
    (void)flag;
    g_string_append_c(f, '%');
  }
  /* strftime cannot tell an empty result from an error: add a marker */
  g_string_append_c(f, '\x01');
  size_t cap = 256 + f->len * 8;
  char *buf = g_malloc(cap);
  size_t n;
  while ((n = strftime(buf, cap, f->str, tm)) == 0) {
    cap *= 2;
    buf = g_realloc(buf, cap);
    if (cap > (1 << 24)) break;
  }
  if (n > 0) g_string_append_len(out, buf, (gssize)n - 1);
  g_free(buf);
  g_string_free(f, TRUE);
}

static const char longopts[] =
  "date=d: utc=u universal=u reference=r: iso-8601=I:: rfc-email=R rfc-2822=R rfc-3339=T:";

/* --iso-8601[=ARG] and --rfc-3339=ARG: each ARG's format. */
typedef struct {
  const char *arg, *fmt;
} DateForm;

static const DateForm iso_forms[] = {
  { "date", "%Y-%m-%d" },
  { "", "%Y-%m-%d" },
  { "hours", "%Y-%m-%dT%H%:z" },
  { "minutes", "%Y-%m-%dT%H:%M%:z" },
  { "seconds", "%Y-%m-%dT%H:%M:%S%:z" },
  { "ns", "%Y-%m-%dT%H:%M:%S,%N%:z" },
  { NULL, NULL },
};

static const DateForm rfc3339_forms[] = {
  { "date", "%Y-%m-%d" },
  { "seconds", "%Y-%m-%d %H:%M:%S%:z" },
  { "ns", "%Y-%m-%d %H:%M:%S.%N%:z" },
  { NULL, NULL },
};

/* arg's format; NULL after the usage error bad (arg quoted into its %s)
 * when arg is none of the table's. */
static const char *form_of(BoxCmd *c, const DateForm *t, const char *arg, const char *bad)
{
  for (; t->arg; t++)
    if (!strcmp(t->arg, arg)) return t->fmt;
  bx_usage_q(c, "date", bad, arg);
  return NULL;
}

int box_cmd_date(BoxCmd *c)
{
  bool utc = false;
  const char *dstr = NULL, *ref = NULL, *iso = NULL, *rfc3339 = NULL;
  bool rfc = false, have_iso = false;
  BX_EACH_OPTION (ch, c, "date", "d:ur:I::R", longopts) switch (ch) {
    case 'd': dstr = optarg; break;
    case 'u': utc = true; break;
    case 'r': ref = optarg; break;
    case 'I':
      have_iso = true;
      iso = optarg ? optarg : "date";
      break;
    case 'R': rfc = true; break;
    case 'T': rfc3339 = optarg; break;
    default: return 1;
    }
  const char *fmt = NULL;
  for (int i = optind; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (a[0] == '+' && !fmt) {
      fmt = a + 1;
      continue;
    }
    g_autofree char *q = bx_quote_always(a);
    if (fmt || dstr || i > optind)
      bx_usage(c, "date", "extra operand %s", q);
    else
      bx_err(c, "date", "invalid date %s", q);
    return 1;
  }
  if ((have_iso || rfc || rfc3339) && fmt) {
    bx_usage(c, "date", "multiple output formats specified");
    return 1;
  }
  /* the exported TZ is the process's already (box_apply_tz) */
  char *old_tz = g_strdup(g_getenv("TZ"));
  if (utc) g_setenv("TZ", "UTC0", TRUE);
  tzset();
  int status = 0;
  struct timespec ts;
  if (ref) {
    struct stat st;
    if (stat(ref, &st) != 0) {
      bx_ferr(c, "date", ref, errno);
      status = 1;
      goto out;
    }
    ts = st.st_mtim;
  } else if (dstr) {
    if (!bx_parse_date(dstr, utc, &ts)) {
      bx_err_q(c, "date", "invalid date %s", dstr, 0);
      status = 1;
      goto out;
    }
  } else {
    clock_gettime(CLOCK_REALTIME, &ts);
  }
  struct tm tm;
  localtime_r(&ts.tv_sec, &tm);
  if (have_iso) {
    fmt = form_of(c, iso_forms, iso,
                  "invalid argument %s for '--iso-8601'\nValid arguments are:\n  - 'hours'\n  - "
                  "'minutes'\n  - 'date'\n  - 'seconds'\n  - 'ns'");
  } else if (rfc) {
    fmt = "%a, %d %b %Y %H:%M:%S %z";
  } else if (rfc3339) {
    fmt = form_of(c, rfc3339_forms, rfc3339,
                  "invalid argument %s for '--rfc-3339'\nValid arguments are:\n  - 'date'\n  - "
                  "'seconds'\n  - 'ns'");
  } else if (!fmt) {
    fmt = "%a %b %e %H:%M:%S %Z %Y";
  }
  if (!fmt) { /* an argument form_of did not know */
    status = 1;
    goto out;
  }
  GString *s = g_string_new(NULL);
  format_time(s, fmt, &ts, &tm);
  g_string_append_c(s, '\n');
  box_out_write(c->out, s->str, s->len);
  g_string_free(s, TRUE);
out:
  if (old_tz)
    g_setenv("TZ", old_tz, TRUE);
  else
    g_unsetenv("TZ");
  g_free(old_tz);
  tzset();
  return status;
}
