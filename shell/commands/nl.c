/* nl.c — GNU nl: -b STYLE (a t n), -w N, -s STR, -n FORMAT (ln rn rz),
 * -v START, -i INCR.  No logical-page sections. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "body-numbering=b: number-width=w: number-separator=s: "
                               "number-format=n: starting-line-number=v: line-increment=i:";

typedef struct {
  char style;
  int width;
  const char *sep, *fmt;
  long long num, incr;
} Nl;

static bool nl_fd(BoxCmd *c, Nl *n, int fd)
{
  BxReader r;
  bx_reader_init(&r, fd);
  const char *rec;
  size_t len;
  while (bx_reader_next(&r, '\n', &rec, &len)) {
    bool number =
      n->style == 'a' || (n->style == 't' && !(len == 0 || (len == 1 && rec[0] == '\n')));
    if (number) {
      if (!strcmp(n->fmt, "ln"))
        box_out_printf(c->out, "%-*lld%s", n->width, n->num, n->sep);
      else if (!strcmp(n->fmt, "rz"))
        box_out_printf(c->out, "%0*lld%s", n->width, n->num, n->sep);
      else
        box_out_printf(c->out, "%*lld%s", n->width, n->num, n->sep);
      n->num += n->incr;
    } else {
      box_out_printf(c->out, "%*s", n->width + (int)strlen(n->sep), "");
    }
    bx_put(c, rec, len);
    if (!len || rec[len - 1] != '\n') box_out_putc(c->out, '\n');
  }
  bool ok = r.err == 0;
  errno = r.err;
  bx_reader_free(&r);
  return ok;
}

static bool num_arg(BoxCmd *c, const char *what, const char *s, long long min, long long *out)
{
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < min) {
    g_autofree char *q = bx_quote_always(s);
    if (*s && !*end && (errno || v < min))
      bx_err(c, "nl", "invalid %s: %s: %s", what, q, box_strerror(ERANGE));
    else
      bx_err(c, "nl", "invalid %s: %s", what, q);
    return false;
  }
  *out = v;
  return true;
}

int box_cmd_nl(BoxCmd *c)
{
  Nl n = { 't', 6, "\t", "rn", 1, 1 };
  long long v;
  BX_EACH_OPTION (o, c, "nl", "b:w:s:n:v:i:", longopts) {
    switch (o) {
    case 'b':
      if (strcmp(optarg, "a") && strcmp(optarg, "t") && strcmp(optarg, "n")) {
        bx_usage_q(c, "nl", "invalid body numbering style: %s", optarg);
        return 1;
      }
      n.style = optarg[0];
      break;
    case 'w':
      if (!num_arg(c, "line number field width", optarg, 1, &v)) return 1;
      n.width = (int)MIN(v, 1000);
      break;
    case 's': n.sep = optarg; break;
    case 'n':
      if (strcmp(optarg, "ln") && strcmp(optarg, "rn") && strcmp(optarg, "rz")) {
        bx_usage_q(c, "nl", "invalid line numbering format: %s", optarg);
        return 1;
      }
      n.fmt = optarg;
      break;
    case 'v':
      if (!num_arg(c, "starting line number", optarg, LLONG_MIN, &v)) return 1;
      n.num = v;
      break;
    case 'i':
      if (!num_arg(c, "line number increment", optarg, LLONG_MIN, &v)) return 1;
      n.incr = v;
      break;
    default: return 1;
    }
  }
  int status = 0;
  if (optind >= c->argc) return nl_fd(c, &n, c->in) ? 0 : 1;
  for (int i = optind; i < c->argc; i++) {
    int fd = bx_open_in(c, c->argv[i]);
    if (fd < 0) {
      bx_ferr(c, "nl", c->argv[i], errno);
      status = 1;
      continue;
    }
    if (!nl_fd(c, &n, fd)) {
      bx_ferr(c, "nl", c->argv[i], errno);
      status = 1;
    }
    bx_close_in(c, fd);
  }
  return status;
}
