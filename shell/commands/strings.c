/* strings.c — binutils strings over the whole file (its default since
 * 2.39, and the only way here: no object-file reader): each run of at
 * least -n (4) printable bytes, tab included, on a line of its own; -f
 * names the file first, -t o/d/x the run's offset, -w takes all
 * whitespace, -s another separator than the newline. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

typedef struct {
  unsigned long min;
  char radix; /* 0: no offsets */
  bool names, all_space;
  const char *sep;
} StrOpt;

static bool graphic(const StrOpt *o, unsigned char b)
{
  if (b == '\t' || (b >= 0x20 && b < 0x7f)) return true;
  return o->all_space && (b == '\n' || b == '\v' || b == '\f' || b == '\r');
}

static void print_run(BoxCmd *c, const StrOpt *o, const char *label, const GString *s, size_t at,
                      size_t n)
{
  if (o->names) box_out_printf(c->out, "%s: ", label);
  if (o->radix == 'o') box_out_printf(c->out, "%7zo ", at);
  if (o->radix == 'd') box_out_printf(c->out, "%7zu ", at);
  if (o->radix == 'x') box_out_printf(c->out, "%7zx ", at);
  bx_put(c, s->str + at, n);
  box_out_puts(c->out, o->sep);
}

static void scan(BoxCmd *c, const StrOpt *o, const char *label, const GString *s)
{
  size_t start = 0;
  for (size_t i = 0; i <= s->len; i++) {
    if (i < s->len && graphic(o, (unsigned char)s->str[i])) continue;
    if (i - start >= o->min) print_run(c, o, label, s, start, i - start);
    start = i + 1;
  }
}

/* binutils' own wording: "'NAME': No such file", a directory a warning */
static bool read_named(BoxCmd *c, const char *name, GString *s)
{
  int fd = bx_open_in(c, name);
  bool ok = fd >= 0 && bx_read_all(fd, s);
  int e = errno;
  bx_close_in(c, fd);
  if (ok) return true;
  if (e == ENOENT)
    bx_err(c, "strings", "'%s': No such file", name);
  else if (e == EISDIR)
    bx_err(c, "strings", "Warning: '%s' is a directory", name);
  else {
    g_autofree char *t = bx_errtext(c, e);
    bx_err(c, "strings", "%s: %s", name, t);
  }
  return false;
}

static bool parse_min(BoxCmd *c, const char *v, unsigned long *out)
{
  char *end;
  errno = 0;
  long n = strtol(v, &end, 0);
  if (!*v || *end || errno) {
    bx_err(c, "strings", "invalid integer argument %s", v);
    return false;
  }
  if (n < 1) {
    bx_err(c, "strings", "invalid minimum string length %ld", n);
    return false;
  }
  *out = (unsigned long)n;
  return true;
}

static const char longopts[] = "all=a data=d print-file-name=f bytes=n: radix=t: "
                               "include-all-whitespace=w output-separator=s:";

int box_cmd_strings(BoxCmd *c)
{
  StrOpt o = { .min = 4, .sep = "\n" };
  /* -6 is -n 6, as the old spelling binutils still takes */
  GString *digits = g_string_new(NULL);
  BX_EACH_OPTION (ch, c, "strings", "adfn:t:ows:0123456789", longopts) switch (ch) {
    case 'a':
    case 'd': break;
    case 'f': o.names = true; break;
    case 'w': o.all_space = true; break;
    case 's': o.sep = optarg; break;
    case 'o': o.radix = 'o'; break;
    case 'n':
      if (!parse_min(c, optarg, &o.min)) goto usage;
      break;
    case 't':
      if (strlen(optarg) != 1 || !strchr("odx", *optarg)) {
        bx_err(c, "strings", "invalid radix");
        goto usage;
      }
      o.radix = *optarg;
      break;
    default:
      if (ch >= '0' && ch <= '9') {
        g_string_append_c(digits, (char)ch);
        if (!parse_min(c, digits->str, &o.min)) goto usage;
        break;
      }
      goto usage;
    }
  g_string_free(digits, TRUE);
  int status = 0;
  int n;
  char **names = bx_file_operands(c, &n);
  for (int i = 0; i < n; i++) {
    g_autoptr(GString) s = g_string_new(NULL);
    if (!read_named(c, names[i], s)) {
      status = 1;
      continue;
    }
    scan(c, &o, strcmp(names[i], "-") ? names[i] : "{standard input}", s);
  }
  return status;
usage:
  g_string_free(digits, TRUE);
  return 1;
}
