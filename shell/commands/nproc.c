/* nproc.c — GNU nproc: usable processors; --all, --ignore=N. */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "all=a ignore=i:";

int box_cmd_nproc(BoxCmd *c)
{
  bool all = false;
  long ignore = 0;
  BX_EACH_OPTION (ch, c, "nproc", "", longopts) {
    if (ch == 'a')
      all = true;
    else if (ch == 'i') {
      char *end;
      ignore = strtol(optarg, &end, 10);
      if (*end || ignore < 0) {
        bx_err_q(c, "nproc", "invalid number: %s", optarg, 0);
        return 1;
      }
    } else
      return 1;
  }
  if (optind < c->argc) {
    bx_usage_q(c, "nproc", "extra operand %s", c->argv[optind]);
    return 1;
  }
  long n;
  if (all)
    n = sysconf(_SC_NPROCESSORS_CONF);
  else {
    cpu_set_t set;
    n =
      sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    const char *omp = box_var_get(c->sh, "OMP_NUM_THREADS");
    if (omp && atol(omp) > 0) n = atol(omp);
  }
  n -= ignore;
  if (n < 1) n = 1;
  box_out_printf(c->out, "%ld\n", n);
  return 0;
}
