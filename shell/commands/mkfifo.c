/* mkfifo.c — GNU mkfifo: NAME..., -m MODE (octal or symbolic, from
 * a=rw and set exactly, the umask aside, as GNU sets it). */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "mode=m:";

int box_cmd_mkfifo(BoxCmd *c)
{
  const char *mode_s = NULL;
  BX_EACH_OPTION (ch, c, "mkfifo", "m:", longopts) switch (ch) {
    case 'm': mode_s = optarg; break;
    default: return 1;
    }
  mode_t mode = 0666;
  if (mode_s && !bx_parse_mode(mode_s, 0666, false, &mode)) {
    bx_err(c, "mkfifo", "invalid mode");
    return 1;
  }
  if (mode & ~0777) {
    bx_err(c, "mkfifo", "mode must specify only file permission bits");
    return 1;
  }
  if (optind >= c->argc) {
    bx_usage(c, "mkfifo", "missing operand");
    return 1;
  }
  int status = 0;
  for (int i = optind; i < c->argc; i++) {
    const char *name = c->argv[i];
    if (mkfifo(name, 0666) != 0) {
      bx_err_q(c, "mkfifo", "cannot create fifo %s", name, errno);
      status = 1;
      continue;
    }
    if (mode_s && chmod(name, mode) != 0) {
      bx_err_q(c, "mkfifo", "cannot set permissions of %s", name, errno);
      status = 1;
    }
  }
  return status;
}
