/* rmdir.c — GNU rmdir: -p -v --ignore-fail-on-non-empty. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "parents=p verbose=v ignore-fail-on-non-empty=\1";

static bool one(BoxCmd *c, const char *p, bool verbose, bool ignore)
{
  if (verbose) {
    g_autofree char *q = bx_quote_always(p);
    box_out_printf(c->out, "rmdir: removing directory, %s\n", q);
  }
  if (rmdir(p) == 0) return true;
  int e = errno;
  if (ignore && (e == ENOTEMPTY || e == EEXIST)) return false;
  bx_err_q(c, "rmdir", "failed to remove %s", p, e);
  return false;
}

int box_cmd_rmdir(BoxCmd *c)
{
  bool parents = false, verbose = false, ignore = false;
  BX_EACH_OPTION (ch, c, "rmdir", "pv", longopts) {
    if (ch == 'p')
      parents = true;
    else if (ch == 'v')
      verbose = true;
    else if (ch == 1)
      ignore = true;
    else
      return 1;
  }
  if (optind >= c->argc) {
    bx_usage(c, "rmdir", "missing operand");
    return 1;
  }
  int status = 0;
  for (int i = optind; i < c->argc; i++) {
    char *p = g_strdup(c->argv[i]);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    if (!one(c, p, verbose, ignore)) {
      if (!(ignore)) status = 1;
      g_free(p);
      continue;
    }
    if (parents) {
      char *s;
      while ((s = strrchr(p, '/')) && s != p) {
        *s = '\0';
        while (s > p && s[-1] == '/') *--s = '\0';
        if (!*p) break;
        if (!one(c, p, verbose, ignore)) {
          if (!ignore) status = 1;
          break;
        }
      }
    }
    g_free(p);
  }
  return status;
}
