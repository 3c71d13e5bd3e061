/* mkdir.c — GNU mkdir: -p -m MODE -v. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "parents=p mode=m: verbose=v";

static void created(BoxCmd *c, const char *p)
{
  g_autofree char *q = bx_quote_always(p);
  box_out_printf(c->out, "mkdir: created directory %s\n", q);
}

int box_cmd_mkdir(BoxCmd *c)
{
  bool parents = false, verbose = false;
  const char *mode_s = NULL;
  BX_EACH_OPTION (ch, c, "mkdir", "pm:v", longopts) switch (ch) {
    case 'p': parents = true; break;
    case 'm': mode_s = optarg; break;
    case 'v': verbose = true; break;
    default: return 1;
    }
  mode_t mode = 0777;
  bool have_mode = false;
  if (mode_s) {
    mode_t um = umask(0);
    umask(um);
    if (!bx_parse_mode(mode_s, 0777 & ~um, true, &mode)) {
      bx_err_q(c, "mkdir", "invalid mode %s", mode_s, 0);
      return 1;
    }
    have_mode = true;
  }
  if (optind >= c->argc) {
    bx_usage(c, "mkdir", "missing operand");
    return 1;
  }
  int status = 0;
  for (int i = optind; i < c->argc; i++) {
    const char *p = c->argv[i];
    if (parents) {
      /* each missing ancestor, from the top */
      char *dup = g_strdup(p);
      for (char *s = dup + 1; *s; s++) {
        if (*s != '/' || s[-1] == '/') continue;
        *s = '\0';
        if (mkdir(dup, 0777) == 0) {
          if (verbose) created(c, dup);
        }
        *s = '/';
      }
      g_free(dup);
      if (mkdir(p, have_mode ? 0700 : 0777) == 0) {
        if (have_mode) chmod(p, mode);
        if (verbose) created(c, p);
      } else if (errno != EEXIST) {
        bx_err_q(c, "mkdir", "cannot create directory %s", p, errno);
        status = 1;
      }
      continue;
    }
    if (mkdir(p, have_mode ? 0700 : 0777) != 0) {
      bx_err_q(c, "mkdir", "cannot create directory %s", p, errno);
      status = 1;
      continue;
    }
    if (have_mode) chmod(p, mode);
    if (verbose) created(c, p);
  }
  return status;
}
