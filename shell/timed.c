/* timed.c — the `time` reserved word: a pipeline's real, user and system
 * times on the Shell's stderr, in TIMEFORMAT's format (bash's escapes:
 * %[p][l]R, U, S, %P and %%), or POSIX's with `time -p`. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "shell/shell-private.h"

#define DEFAULT_FORMAT "\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS"
#define POSIX_FORMAT "real %2R\nuser %2U\nsys %2S"

static double seconds(struct timeval tv)
{
  return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* The CPU this process and its waited-for children have used. */
static void cpu_now(double *user, double *sys)
{
  struct rusage self, kids;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &kids);
  *user = seconds(self.ru_utime) + seconds(kids.ru_utime);
  *sys = seconds(self.ru_stime) + seconds(kids.ru_stime);
}

static double wall_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One time: PRECISION digits after the point (bash truncates), in
 * [M]mS.FFs form when LONG. */
static void put_time(GString *out, double t, int precision, bool long_form)
{
  static const long scale[] = { 1, 10, 100, 1000 };
  long frac_units = (long)(t * scale[precision]);
  long whole = frac_units / scale[precision], frac = frac_units % scale[precision];
  if (long_form) {
    g_string_append_printf(out, "%ldm", whole / 60);
    whole %= 60;
  }
  g_string_append_printf(out, "%ld", whole);
  if (precision) g_string_append_printf(out, ".%0*ld", precision, frac);
  if (long_form) g_string_append_c(out, 's');
}

static void report(Shell *sh, const char *format, double real, double user, double sys)
{
  GString *out = g_string_new(NULL);
  for (const char *f = format; *f; f++) {
    if (*f != '%') {
      g_string_append_c(out, *f);
      continue;
    }
    f++;
    if (*f == '%' || !*f) {
      g_string_append_c(out, '%');
      if (!*f) break;
      continue;
    }
    if (*f == 'P') {
      g_string_append_printf(out, "%.2f", real > 0 ? (user + sys) * 100 / real : 0.0);
      continue;
    }
    int precision = 3;
    bool long_form = false;
    if (*f >= '0' && *f <= '9') precision = *f++ - '0';
    if (precision > 3) precision = 3;
    if (*f == 'l') long_form = true, f++;
    double t = *f == 'R' ? real : *f == 'U' ? user : *f == 'S' ? sys : -1;
    if (t < 0) {
      /* bash prints nothing then */
      if (*f) box_sh_error(sh, "TIMEFORMAT: `%c': invalid format character", *f);
      g_string_free(out, TRUE);
      return;
    }
    put_time(out, t, precision, long_form);
  }
  g_string_append_c(out, '\n');
  box_write_all(sh->fd[2], out->str, out->len);
  g_string_free(out, TRUE);
}

int box_eval_timed(Shell *sh, Node *n)
{
  double user0, sys0, user1, sys1;
  double start = wall_now();
  cpu_now(&user0, &sys0);
  int status = box_eval(sh, n->u.un.child);
  cpu_now(&user1, &sys1);
  double real = wall_now() - start;
  const char *format = n->u.un.posix_time ? POSIX_FORMAT : box_var_get(sh, "TIMEFORMAT");
  if (!format) format = DEFAULT_FORMAT;
  if (*format) report(sh, format, real, user1 - user0, sys1 - sys0);
  return status;
}
