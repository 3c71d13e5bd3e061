/* mkfifo.c — GNU mkfifo: NAME..., -m MODE (octal or symbolic, from a=rw,
 * and then set exactly, past the umask, as GNU sets it). */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "mode=m:";

typedef struct {
  bool have_mode;
  mode_t mode;
} FifoOpts;

static bool mkfifo_one(BoxCmd *c, const char *name, void *data)
{
  const FifoOpts *o = data;
  if (mkfifo(name, 0666) != 0) {
    bx_err_q(c, "mkfifo", "cannot create fifo %s", name, errno);
    return false;
  }
  if (o->have_mode && chmod(name, o->mode) != 0) {
    bx_err_q(c, "mkfifo", "cannot set permissions of %s", name, errno);
    return false;
  }
  return true;
}

int box_cmd_mkfifo(BoxCmd *c)
{
  FifoOpts o = { false, 0666 };
  const char *mode_s = NULL;
  BX_EACH_OPTION (ch, c, "mkfifo", "m:", longopts) switch (ch) {
    case 'm': mode_s = optarg; break;
    default: return 1;
    }
  if (mode_s) {
    if (!bx_parse_mode(mode_s, 0666, false, &o.mode)) {
      bx_err(c, "mkfifo", "invalid mode");
      return 1;
    }
    if (o.mode & ~0777) {
      bx_err(c, "mkfifo", "mode must specify only file permission bits");
      return 1;
    }
    o.have_mode = true;
  }
  return bx_each_operand(c, "mkfifo", mkfifo_one, &o);
}
