/* head_tail.c — what head and tail share (see head_tail.h). */
#include <errno.h>
#include <string.h>

#include "shell/commands/head_tail.h"

static const char longopts[] = "lines=n: bytes=c: quiet=q silent=q verbose=v zero-terminated=z";

/* The -n/-c value: an optional sign, then a size.  flip is the sign that
 * changes what the count means (head's '-', tail's '+'), told in *flipped.
 * false after GNU's message. */
static bool parse_count(BoxCmd *c, const char *cmd, const char *v, bool bytes, char flip,
                        bool *flipped, unsigned long long *n)
{
  const char *s = v;
  *flipped = false;
  if (*s == flip) {
    *flipped = true;
    s++;
  } else if (*s == '-' || *s == '+')
    s++;
  if (!bx_parse_size(s, n)) {
    bx_err(c, cmd, "invalid number of %s: '%s'", bytes ? "bytes" : "lines", v);
    return false;
  }
  return true;
}

static int each_file(BoxCmd *c, const char *cmd, const BxEnds *o, int verbose,
                     bool stop_on_out_error, BxEndsFn fn)
{
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
      box_out_printf(c->out, "%s==> %s <==\n", first ? "" : "\n",
                     strcmp(name, "-") == 0 ? "standard input" : name);
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

static int run(BoxCmd *c, const char *cmd, const char *shortopts, BxEnds o, int verbose,
               const char *count, char flip, bool stop_on_out_error, BxEndsFn fn,
               BxEndsFn flipped_fn)
{
  BX_EACH_OPTION (ch, c, cmd, shortopts, longopts) switch (ch) {
    case 'n':
      o.bytes = false;
      count = optarg;
      break;
    case 'c':
      o.bytes = true;
      count = optarg;
      break;
    case 'q': verbose = 0; break;
    case 'v': verbose = 1; break;
    case 'z': o.delim = '\0'; break;
    case '?': return 1;
    default: break;
    }
  if (count && !parse_count(c, cmd, count, o.bytes, flip, &o.flipped, &o.n)) return 1;
  return each_file(c, cmd, &o, verbose, stop_on_out_error, o.flipped ? flipped_fn : fn);
}

/* The obsolete first argument: head's -NUM[c|l|q|v…], tail's -NUM or +NUM
 * (+NUM only with one file operand at most) with c or l.  false when argv[1]
 * is not one. */
static bool obsolete_count(BoxCmd *c, const BxEndsCmd *cmd, BxEnds *o, int *verbose,
                           const char **count)
{
  static char nbuf[64];
  const char *a = c->argc > 1 ? c->argv[1] : "";
  bool tail = cmd->flip == '+';
  if (!((a[0] == '-' || (tail && a[0] == '+')) && g_ascii_isdigit(a[1]))) return false;
  if (a[0] == '+' && c->argc > 3) return false;
  size_t k = strspn(a + 1, "0123456789");
  if (tail)
    g_snprintf(nbuf, sizeof nbuf, "%c%.*s", a[0], (int)k, a + 1);
  else
    g_strlcpy(nbuf, a + 1, MIN(k + 1, sizeof nbuf));
  *count = nbuf;
  for (const char *p = a + 1 + k; *p; p++) {
    if (*p == 'c')
      o->bytes = true;
    else if (*p == 'l')
      o->bytes = false;
    else if (!tail && *p == 'q')
      *verbose = 0;
    else if (!tail && *p == 'v')
      *verbose = 1;
  }
  return true;
}

ssize_t bx_ends_append(int fd, GString *data)
{
  char buf[65536];
  ssize_t r = bx_read(fd, buf, sizeof buf);
  if (r > 0) g_string_append_len(data, buf, r);
  return r;
}

char **bx_ends_argv_without(const BoxCmd *c, int skip, BoxCmd *out)
{
  char **av = g_new0(char *, c->argc + 1);
  int ac = 0;
  for (int i = 0; i < c->argc; i++)
    if (i != skip || skip == 0) av[ac++] = c->argv[i];
  *out = *c;
  out->argc = ac;
  return av;
}

int bx_ends_main(BoxCmd *c, const BxEndsCmd *cmd)
{
  BxEnds o = { false, false, 10, '\n' };
  int verbose = -1;
  const char *count = NULL;
  bool skip_first = obsolete_count(c, cmd, &o, &verbose, &count);
  BoxCmd cc;
  g_autofree char **av = bx_ends_argv_without(c, skip_first ? 1 : 0, &cc);
  cc.argv = av;
  return run(&cc, cmd->name, cmd->shortopts, o, verbose, count, cmd->flip, cmd->stop_on_out_error,
             cmd->copy, cmd->copy_flipped);
}
