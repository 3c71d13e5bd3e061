/* times.c — `times`: user and system times of the shell and its children. */
#include <sys/times.h>
#include <unistd.h>

#include "shell/shell-private.h"

static void put(BoxOut *o, clock_t t, long hz)
{
  double s = (double)t / (double)hz;
  int m = (int)(s / 60);
  box_out_printf(o, "%dm%.3fs", m, s - m * 60);
}

int box_cmd_times(BoxCmd *c)
{
  struct tms t;
  times(&t);
  long hz = sysconf(_SC_CLK_TCK);
  put(c->out, t.tms_utime, hz);
  box_out_putc(c->out, ' ');
  put(c->out, t.tms_stime, hz);
  box_out_putc(c->out, '\n');
  put(c->out, t.tms_cutime, hz);
  box_out_putc(c->out, ' ');
  put(c->out, t.tms_cstime, hz);
  box_out_putc(c->out, '\n');
  return 0;
}
