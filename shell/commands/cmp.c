/* cmp.c — GNU cmp: FILE1 [FILE2 [SKIP1 [SKIP2]]], -b, -l, -s, -i SKIP[:SKIP2],
 * -n LIMIT; "differ: char N, line M", "EOF on NAME …" on stderr; exit 0
 * same, 1 different, 2 trouble. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shell/commands/commands-private.h"

/* cat -v's spelling of a byte: "c", "^J", "M-^@"… */
static void byte_name(unsigned char b, char out[8])
{
  char *p = out;
  if (b >= 128) {
    *p++ = 'M';
    *p++ = '-';
    b -= 128;
  }
  if (b < 32 || b == 127) {
    *p++ = '^';
    *p++ = (char)(b ^ 64);
  } else {
    *p++ = (char)b;
  }
  *p = 0;
}

static bool skip_arg(BoxCmd *c, const char *v, unsigned long long *a, unsigned long long *b)
{
  g_autofree char *s = g_strdup(v);
  char *colon = strchr(s, ':');
  if (colon) *colon = 0;
  if (!bx_parse_size(s, a) || (colon && !bx_parse_size(colon + 1, b))) {
    bx_usage(c, "cmp", "invalid --ignore-initial value '%s'", v);
    return false;
  }
  if (!colon) *b = *a;
  return true;
}

static const char longopts[] =
  "print-bytes=b verbose=l quiet=s silent=s ignore-initial=i: bytes=n:";

int box_cmd_cmp(BoxCmd *c)
{
  bool bytes = false, verbose = false, silent = false, limited = false;
  unsigned long long skip[2] = { 0, 0 }, limit = 0;
  bx_getopt_start_try_prefixed();
  for (int ch; (ch = bx_getopt(c, "cmp", "bli:n:s", longopts)) != -1;) switch (ch) {
    case 'b': bytes = true; break;
    case 'l': verbose = true; break;
    case 's': silent = true; break;
    case 'i':
      if (!skip_arg(c, optarg, &skip[0], &skip[1])) return 2;
      break;
    case 'n':
      if (!bx_parse_size(optarg, &limit)) {
        bx_usage(c, "cmp", "invalid --bytes value '%s'", optarg);
        return 2;
      }
      limited = true;
      break;
    default: return 2;
    }
  if (verbose && silent) {
    bx_usage(c, "cmp", "options -l and -s are incompatible");
    return 2;
  }
  int nops = c->argc - optind;
  char **ops = c->argv + optind;
  if (nops < 1) {
    bx_usage(c, "cmp", "missing operand after 'cmp'");
    return 2;
  }
  if (nops > 4) {
    bx_usage_q(c, "cmp", "extra operand %s", ops[4]);
    return 2;
  }
  for (int k = 2; k < nops; k++) {
    unsigned long long v;
    if (!bx_parse_size(ops[k], &v)) {
      bx_usage(c, "cmp", "invalid --ignore-initial value '%s'", ops[k]);
      return 2;
    }
    skip[k - 2] = v;
  }
  const char *name[2] = { ops[0], nops > 1 ? ops[1] : "-" };
  GString *data[2] = { g_string_new(NULL), g_string_new(NULL) };
  int status = 0;
  for (int k = 0; k < 2 && !status; k++) {
    int fd = bx_open_in(c, name[k]);
    if (fd < 0 || !bx_read_all(fd, data[k])) {
      int e = errno;
      if (!silent) bx_ferr(c, "cmp", name[k], e);
      status = 2;
    }
    if (fd >= 0) bx_close_in(c, fd);
  }
  if (status) {
    g_string_free(data[0], TRUE);
    g_string_free(data[1], TRUE);
    return status;
  }
  const unsigned char *p[2];
  size_t len[2];
  for (int k = 0; k < 2; k++) {
    size_t s = (size_t)MIN(skip[k], (unsigned long long)data[k]->len);
    p[k] = (const unsigned char *)data[k]->str + s;
    len[k] = data[k]->len - s;
  }
  size_t n = MIN(len[0], len[1]);
  if (limited && limit < n) n = (size_t)limit;
  int width = 1;
  for (size_t m = n; m >= 10; m /= 10) width++;
  unsigned long long line = 1;
  size_t i = 0;
  bool differ = false;
  for (; i < n; i++) {
    if (p[0][i] == p[1][i]) {
      line += p[0][i] == '\n';
      continue;
    }
    differ = true;
    if (silent) break;
    if (!verbose) {
      /* GNU says "char" unless it shows the bytes (C locale) */
      box_out_printf(c->out, "%s %s differ: %s %zu, line %llu", name[0], name[1],
                     bytes ? "byte" : "char", i + 1, line);
      if (bytes) {
        char a[8], b[8];
        byte_name(p[0][i], a);
        byte_name(p[1][i], b);
        box_out_printf(c->out, " is %3o %s %3o %s", p[0][i], a, p[1][i], b);
      }
      box_out_putc(c->out, '\n');
      break;
    }
    if (bytes) {
      char a[8], b[8];
      byte_name(p[0][i], a);
      byte_name(p[1][i], b);
      box_out_printf(c->out, "%*zu %3o %-4s %3o %s\n", width, i + 1, p[0][i], a, p[1][i], b);
    } else {
      box_out_printf(c->out, "%*zu %3o %3o\n", width, i + 1, p[0][i], p[1][i]);
    }
  }
  status = differ ? 1 : 0;
  bool hit_end = !(limited && limit <= n) && len[0] != len[1] && (!differ || verbose);
  if (hit_end) {
    /* the shorter ended first */
    int k = len[0] < len[1] ? 0 : 1;
    if (!silent) {
      box_out_flush(c->out);
      if (n == 0)
        box_fdprintf(c->err, "cmp: EOF on %s which is empty\n", name[k]);
      else if (verbose)
        box_fdprintf(c->err, "cmp: EOF on %s after byte %zu\n", name[k], n);
      else if (p[k][n - 1] == '\n')
        box_fdprintf(c->err, "cmp: EOF on %s after byte %zu, line %llu\n", name[k], n, line - 1);
      else
        box_fdprintf(c->err, "cmp: EOF on %s after byte %zu, in line %llu\n", name[k], n, line);
    }
    status = 1;
  }
  g_string_free(data[0], TRUE);
  g_string_free(data[1], TRUE);
  return status;
}
