/* ulimit.c — `ulimit [-HSacdfnstuv] [LIMIT]`. */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "shell/shell-private.h"

static const struct {
  char opt;
  int res;
  long unit;
  const char *desc;
} lims[] = {
  { 'c', RLIMIT_CORE, 512, "core file size          (blocks, -c)" },
  { 'd', RLIMIT_DATA, 1024, "data seg size           (kbytes, -d)" },
  { 'f', RLIMIT_FSIZE, 512, "file size               (blocks, -f)" },
  { 'n', RLIMIT_NOFILE, 1, "open files                      (-n)" },
  { 's', RLIMIT_STACK, 1024, "stack size              (kbytes, -s)" },
  { 't', RLIMIT_CPU, 1, "cpu time               (seconds, -t)" },
  { 'u', RLIMIT_NPROC, 1, "max user processes              (-u)" },
  { 'v', RLIMIT_AS, 1024, "virtual memory          (kbytes, -v)" },
};

int box_cmd_ulimit(BoxCmd *c)
{
  bool hard = false, all = false;
  char which = 'f';
  const char *value = NULL;
  for (int i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (a[0] == '-' && a[1]) {
      for (const char *p = a + 1; *p; p++) {
        if (*p == 'H')
          hard = true;
        else if (*p == 'S')
          hard = false;
        else if (*p == 'a')
          all = true;
        else
          which = *p;
      }
    } else {
      value = a;
    }
  }
  for (size_t k = 0; k < G_N_ELEMENTS(lims); k++) {
    if (!all && lims[k].opt != which) continue;
    struct rlimit rl;
    getrlimit(lims[k].res, &rl);
    if (value && !all) {
      rlim_t v = strcmp(value, "unlimited") == 0
                   ? RLIM_INFINITY
                   : (rlim_t)g_ascii_strtoull(value, NULL, 10) * (rlim_t)lims[k].unit;
      if (hard)
        rl.rlim_max = v;
      else
        rl.rlim_cur = v;
      if (setrlimit(lims[k].res, &rl) < 0) {
        box_cmd_error(c, "%s: cannot modify limit: %s", lims[k].desc, box_strerror(errno));
        return 1;
      }
      return 0;
    }
    rlim_t v = hard ? rl.rlim_max : rl.rlim_cur;
    if (all) box_out_printf(c->out, "%s ", lims[k].desc);
    if (v == RLIM_INFINITY)
      box_out_puts(c->out, "unlimited\n");
    else
      box_out_printf(c->out, "%llu\n", (unsigned long long)(v / (rlim_t)lims[k].unit));
    if (!all) return 0;
  }
  if (!all) {
    box_cmd_error(c, "-%c: invalid option", which);
    return 2;
  }
  return 0;
}
