/* sleep.c — GNU sleep: NUMBER[smhd]..., summed; fractions allowed. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "";

int box_cmd_sleep(BoxCmd *c)
{
  BX_EACH_OPTION (ch, c, "sleep", "", longopts) return 1;
  if (optind >= c->argc) {
    bx_usage(c, "sleep", "missing operand");
    return 1;
  }
  double total = 0;
  bool bad = false;
  for (int i = optind; i < c->argc; i++) {
    const char *a = c->argv[i];
    char *end;
    errno = 0;
    double v = g_ascii_strtod(a, &end);
    double mul = 1;
    if (end != a && *end && !end[1]) {
      switch (*end) {
      case 's':
        mul = 1;
        end++;
        break;
      case 'm':
        mul = 60;
        end++;
        break;
      case 'h':
        mul = 3600;
        end++;
        break;
      case 'd':
        mul = 86400;
        end++;
        break;
      }
    }
    if (end == a || *end || v < 0 || isnan(v) || g_ascii_isspace(*a)) {
      bx_err_q(c, "sleep", "invalid time interval %s", a, 0);
      bad = true;
      continue;
    }
    total += v * mul;
  }
  if (bad) {
    box_out_flush(c->out);
    box_fdprintf(c->err, "Try 'sleep --help' for more information.\n");
    return 1;
  }
  box_out_flush(c->out);
  gint64 end_us = g_get_monotonic_time() + (gint64)(total > 1e12 ? 1e18 : total * 1e6);
  for (;;) {
    gint64 left = end_us - g_get_monotonic_time();
    if (left <= 0) break;
    if (c->sh->deadline && !box_check_limits(c->sh)) return 1;
    gint64 step = MIN(left, 100000);
    struct timespec ts = { (time_t)(step / 1000000), (long)(step % 1000000) * 1000 };
    nanosleep(&ts, NULL);
  }
  return 0;
}
