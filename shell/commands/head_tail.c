/* head_tail.c — what head and tail share (see head_tail.h). */
#include <errno.h>
#include <string.h>

#include "shell/commands/head_tail.h"

static const char longopts[] = "lines=n: bytes=c: quiet=q silent=q verbose=v zero-terminated=z";

static int each_file(BoxCmd *c, const char *cmd, const BxEnds *o, int verbose, bool stop_on_out_error,
                     BxEndsFn fn) {
  int nf;
  char **files = bx_file_operands(c, &nf);
  bool headers = verbose == 1 || (verbose == -1 && nf > 1);
  int status = 0;
  bool first = true;
  for (int i = 0; i < nf; i++) {
    const char *name = files[i];
    int fd = bx_open_in(c, name);
    if (fd < 0) {
      bx_err_q(c, cmd, "cannot open %s for reading", name, errno);
      status = 1;
      continue;
    }
    if (headers)
      box_out_printf(c->out, "%s==> %s <==\n", first ? "" : "\n", strcmp(name, "-") == 0 ? "standard input" : name);
    first = false;
    if (!fn(c, fd, o)) {
      bx_err_q(c, cmd, "error reading %s", name, errno);
      status = 1;
    }
    bx_close_in(c, fd);
    if (stop_on_out_error && c->out->error) break;
  }
  return status;
}

static int run(BoxCmd *c, const char *cmd, const char *shortopts, BxEnds o, int verbose, const char *count,
               char flip, bool stop_on_out_error, BxEndsFn fn) {
  BX_EACH_OPTION(ch, c, cmd, shortopts, longopts) switch (ch) {
  case 'n': o.bytes = false; count = optarg; break;
  case 'c': o.bytes = true; count = optarg; break;
  case 'q': verbose = 0; break;
  case 'v': verbose = 1; break;
  case 'z': o.delim = '\0'; break;
  case '?': return 1;
  default: break;
  }
  if (count && !bx_parse_count(c, cmd, count, o.bytes, flip, &o.flipped, &o.n)) return 1;
  return each_file(c, cmd, &o, verbose, stop_on_out_error, fn);
}

int bx_ends_run(BoxCmd *c, const char *cmd, const char *shortopts, bool skip_first, BxEnds o, int verbose,
                const char *count, char flip, bool stop_on_out_error, BxEndsFn fn) {
  /* getopt works on a copy of argv without the consumed -NUM */
  g_autofree char **av = g_new0(char *, c->argc + 1);
  int ac = 0;
  for (int i = 0; i < c->argc; i++)
    if (!(skip_first && i == 1)) av[ac++] = c->argv[i];
  BoxCmd cc = *c;
  cc.argc = ac;
  cc.argv = av;
  return run(&cc, cmd, shortopts, o, verbose, count, flip, stop_on_out_error, fn);
}
