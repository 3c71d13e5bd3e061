/* readlink.c — GNU readlink: the link's text, or -f/-e/-m canonical paths; -n -z -q -s -v. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "canonicalize=f canonicalize-existing=e canonicalize-missing=m "
                               "no-newline=n quiet=q silent=s verbose=v zero=z";

int box_cmd_readlink(BoxCmd *c)
{
  int mode = -1;
  bool nonl = false, verbose = false, zero = false;
  BX_EACH_OPTION (ch, c, "readlink", "femnqsvz", longopts) switch (ch) {
    case 'f': mode = 0; break;
    case 'e': mode = 1; break;
    case 'm': mode = 2; break;
    case 'n': nonl = true; break;
    case 'q':
    case 's': verbose = false; break;
    case 'v': verbose = true; break;
    case 'z': zero = true; break;
    default: return 1;
    }
  int n = c->argc - optind;
  if (n < 1) {
    bx_usage(c, "readlink", "missing operand");
    return 1;
  }
  if (nonl && n > 1) {
    bx_err(c, "readlink", "ignoring --no-newline with multiple arguments");
    nonl = false;
  }
  int status = 0;
  for (int i = optind; i < c->argc; i++) {
    const char *p = c->argv[i];
    char *r = NULL;
    int err = 0;
    if (mode < 0) {
      char buf[4096];
      ssize_t k = readlink(p, buf, sizeof buf - 1);
      if (k >= 0) {
        buf[k] = 0;
        r = g_strdup(buf);
      } else
        err = errno;
    } else {
      r = bx_canonicalize(p, mode, &err);
    }
    if (!r) {
      if (verbose) bx_ferr(c, "readlink", p, err);
      status = 1;
      continue;
    }
    box_out_puts(c->out, r);
    if (!nonl) box_out_putc(c->out, zero ? '\0' : '\n');
    g_free(r);
  }
  return status;
}
