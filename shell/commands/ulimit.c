/* ulimit.c — `ulimit [-SHa] [-RcdefilmnpqrstuvxPT [LIMIT]]…` as bash's: each
 * resource option takes the word after it as its new limit, a limit set
 * with neither -S nor -H is both, and one shown is the soft one. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/resource.h>

#include "shell/commands/builtins.h"

#define PIPE_RES (-1) /* -p: the pipe's size, read-only */

static const struct {
  char opt;
  int res;
  rlim_t unit;
  const char *desc, *units;
} lims[] = {
  { 'R', RLIMIT_RTTIME, 1, "real-time non-blocking time", "microseconds" },
  { 'c', RLIMIT_CORE, 1024, "core file size", "blocks" },
  { 'd', RLIMIT_DATA, 1024, "data seg size", "kbytes" },
  { 'e', RLIMIT_NICE, 1, "scheduling priority", NULL },
  { 'f', RLIMIT_FSIZE, 1024, "file size", "blocks" },
  { 'i', RLIMIT_SIGPENDING, 1, "pending signals", NULL },
  { 'l', RLIMIT_MEMLOCK, 1024, "max locked memory", "kbytes" },
  { 'm', RLIMIT_RSS, 1024, "max memory size", "kbytes" },
  { 'n', RLIMIT_NOFILE, 1, "open files", NULL },
  { 'p', PIPE_RES, 512, "pipe size", "512 bytes" },
  { 'q', RLIMIT_MSGQUEUE, 1, "POSIX message queues", "bytes" },
  { 'r', RLIMIT_RTPRIO, 1, "real-time priority", NULL },
  { 's', RLIMIT_STACK, 1024, "stack size", "kbytes" },
  { 't', RLIMIT_CPU, 1, "cpu time", "seconds" },
  { 'u', RLIMIT_NPROC, 1, "max user processes", NULL },
  { 'v', RLIMIT_AS, 1024, "virtual memory", "kbytes" },
  { 'x', RLIMIT_LOCKS, 1, "file locks", NULL },
};

enum { SOFT = 1, HARD = 2 };

static const char usage[] = "ulimit: usage: ulimit [-SHabcdefiklmnpqrstuvxPRT] [limit]";

static int find(char opt)
{
  for (size_t k = 0; k < G_N_ELEMENTS(lims); k++)
    if (lims[k].opt == opt) return (int)k;
  return -1;
}

static bool get(int k, struct rlimit *rl)
{
  if (lims[k].res == PIPE_RES) {
    rl->rlim_cur = rl->rlim_max = 4096; /* PIPE_BUF */
    return true;
  }
  return getrlimit(lims[k].res, rl) == 0;
}

static void show(BoxCmd *c, int k, rlim_t v, bool described)
{
  if (described) {
    char unit[64];
    if (lims[k].units)
      g_snprintf(unit, sizeof unit, "(%s, -%c) ", lims[k].units, lims[k].opt);
    else
      g_snprintf(unit, sizeof unit, "(-%c) ", lims[k].opt);
    box_out_printf(c->out, "%-20s %20s", lims[k].desc, unit);
  }
  if (v == RLIM_INFINITY)
    box_out_puts(c->out, "unlimited\n");
  else
    box_out_printf(c->out, "%" PRIuMAX "\n", (uintmax_t)(v / lims[k].unit));
}

static int one(BoxCmd *c, int k, const char *arg, int mode, bool multiple)
{
  struct rlimit rl;
  if (!mode) mode = arg ? SOFT | HARD : SOFT;
  if (!get(k, &rl)) {
    box_cmd_error(c, "%s: cannot get limit: %s", lims[k].desc, box_strerror(errno));
    return 1;
  }
  if (!arg) {
    show(c, k, mode & SOFT ? rl.rlim_cur : rl.rlim_max, multiple);
    return 0;
  }
  rlim_t v;
  if (!strcmp(arg, "unlimited")) {
    v = RLIM_INFINITY;
  } else if (!strcmp(arg, "hard")) {
    v = rl.rlim_max;
  } else if (!strcmp(arg, "soft")) {
    v = rl.rlim_cur;
  } else {
    bool digits = *arg != '\0';
    for (const char *p = arg; *p; p++)
      if (!g_ascii_isdigit(*p)) digits = false;
    if (!digits) {
      box_cmd_error(c, "%s: invalid number", arg);
      return 1;
    }
    errno = 0;
    uintmax_t n = strtoumax(arg, NULL, 10);
    if (errno == ERANGE || n > (uintmax_t)(RLIM_INFINITY - 1) / lims[k].unit) {
      box_cmd_error(c, "%s: limit out of range", arg);
      return 1;
    }
    v = (rlim_t)n * lims[k].unit;
  }
  if (lims[k].res == PIPE_RES) {
    errno = EINVAL;
  } else {
    if (mode & SOFT) rl.rlim_cur = v;
    if (mode & HARD) rl.rlim_max = v;
    if (setrlimit(lims[k].res, &rl) == 0) return 0;
  }
  box_cmd_error(c, "%s: cannot modify limit: %s", lims[k].desc, box_strerror(errno));
  return 1;
}

int box_cmd_ulimit(BoxCmd *c)
{
  int mode = 0;
  bool all = false;
  GArray *cmds = g_array_new(FALSE, FALSE, sizeof(int));
  GPtrArray *args = g_ptr_array_new();
  int i = 1, st = 0;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (a[0] != '-' || !a[1]) break;
    if (!strcmp(a, "--")) {
      i++;
      break;
    }
    for (const char *p = a + 1; *p; p++) {
      int k;
      if (*p == 'S')
        mode |= SOFT;
      else if (*p == 'H')
        mode |= HARD;
      else if (*p == 'a')
        all = true;
      else if ((k = find(*p)) >= 0) {
        /* the next word, when it is not an option, is this one's limit */
        const char *arg = NULL;
        if (!p[1] && i + 1 < c->argc && c->argv[i + 1][0] != '-') arg = c->argv[++i];
        g_array_append_val(cmds, k);
        g_ptr_array_add(args, (gpointer)arg);
      } else {
        /* as bash on Linux: -b -k -P -T too */
        st = bx_bad_option(c, *p, usage);
        goto out;
      }
    }
  }
  if (all) {
    for (size_t k = 0; k < G_N_ELEMENTS(lims); k++) {
      struct rlimit rl;
      if (!get((int)k, &rl)) continue;
      show(c, (int)k, mode & HARD && !(mode & SOFT) ? rl.rlim_max : rl.rlim_cur, true);
    }
    goto out;
  }
  if (!cmds->len) {
    int k = find('f');
    g_array_append_val(cmds, k);
    g_ptr_array_add(args, i < c->argc ? c->argv[i++] : NULL);
  } else if (i < c->argc && !args->pdata[args->len - 1]) {
    /* a limit after the last option is that one's */
    args->pdata[args->len - 1] = c->argv[i];
  }
  for (guint k = 0; k < cmds->len && !st; k++)
    st = one(c, g_array_index(cmds, int, k), args->pdata[k], mode, cmds->len > 1);
out:
  g_array_free(cmds, TRUE);
  g_ptr_array_free(args, TRUE);
  return st;
}
