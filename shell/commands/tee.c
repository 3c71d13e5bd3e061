/* tee.c — GNU tee: -a, -i (ignored), -p; copies stdin to stdout and files. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "append=a ignore-interrupts=i output-error=p::";

int box_cmd_tee(BoxCmd *c)
{
  bool append = false;
  BX_EACH_OPTION (ch, c, "tee", "aip", longopts) {
    if (ch == 'a')
      append = true;
    else if (ch == '?')
      return 1;
  }
  int nf = c->argc - optind;
  int *fds = g_new(int, nf + 1);
  int status = 0;
  for (int i = 0; i < nf; i++) {
    const char *name = c->argv[optind + i];
    fds[i] = strcmp(name, "-") == 0
               ? -2
               : box_open_file(name, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC));
    if (fds[i] == -1) {
      bx_ferr(c, "tee", name, errno);
      status = 1;
    }
  }
  box_out_flush(c->out);
  char buf[65536];
  for (;;) {
    ssize_t r = c->in >= 0 ? bx_read(c->in, buf, sizeof buf) : 0;
    if (r < 0) {
      bx_err(c, "tee", "read error: %s", box_strerror(errno));
      status = 1;
      break;
    }
    if (r == 0) break;
    if (c->out_fd >= 0 && !box_write_all(c->out_fd, buf, (size_t)r) && errno != EPIPE) status = 1;
    for (int i = 0; i < nf; i++) {
      if (fds[i] == -2) {
        box_write_all(c->out_fd, buf, (size_t)r);
        continue;
      }
      if (fds[i] >= 0 && !box_write_all(fds[i], buf, (size_t)r)) {
        bx_ferr(c, "tee", c->argv[optind + i], errno);
        close(fds[i]);
        fds[i] = -1;
        status = 1;
      }
    }
  }
  for (int i = 0; i < nf; i++)
    if (fds[i] >= 0) close(fds[i]);
  g_free(fds);
  return status;
}
