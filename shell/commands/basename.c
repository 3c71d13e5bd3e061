/* basename.c — GNU basename: NAME [SUFFIX], -a, -s SUFFIX, -z. */
#include <string.h>

#include "shell/commands/commands-private.h"

static char *base_of(const char *s, const char *suffix)
{
  size_t n = strlen(s);
  while (n > 1 && s[n - 1] == '/') n--;
  if (n == 1 && s[0] == '/') return g_strdup("/");
  if (n == 0) return g_strdup("");
  size_t b = n;
  while (b > 0 && s[b - 1] != '/') b--;
  char *r = g_strndup(s + b, n - b);
  if (suffix && *suffix) {
    size_t rl = strlen(r), sl = strlen(suffix);
    if (rl > sl && strcmp(r + rl - sl, suffix) == 0) r[rl - sl] = 0;
  }
  return r;
}

static const char longopts[] = "multiple=a suffix=s: zero=z";

int box_cmd_basename(BoxCmd *c)
{
  bool multiple = false, zero = false;
  const char *suffix = NULL;
  BX_EACH_OPTION (ch, c, "basename", "+as:z", longopts) switch (ch) {
    case 'a': multiple = true; break;
    case 's':
      suffix = optarg;
      multiple = true;
      break;
    case 'z': zero = true; break;
    default: return 1;
    }
  int n = c->argc - optind;
  if (n < 1) {
    bx_usage(c, "basename", "missing operand");
    return 1;
  }
  if (!multiple && n > 2) {
    bx_usage_q(c, "basename", "extra operand %s", c->argv[optind + 2]);
    return 1;
  }
  if (!multiple && n == 2) suffix = c->argv[optind + 1], n = 1;
  for (int i = 0; i < n; i++) {
    char *b = base_of(c->argv[optind + i], suffix);
    box_out_puts(c->out, b);
    box_out_putc(c->out, zero ? '\0' : '\n');
    g_free(b);
  }
  return 0;
}
