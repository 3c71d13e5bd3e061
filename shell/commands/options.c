/* options.c — option parsing with GNU's messages (getopt_long over a
 * command's argv), usage errors, operand checks. */
#include "shell/commands/commands-private.h"

#include <string.h>

static const char *usage_line;
static const char *try_line; /* "@" stands for the command's name */

void bx_usage(BoxCmd *c, const char *cmd, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  bx_err(c, cmd, "%s", s);
  if (try_line) {
    g_auto(GStrv) parts = g_strsplit(try_line, "@", -1);
    g_autofree char *t = g_strjoinv(cmd, parts);
    box_fdprintf(c->err, "%s\n", t);
  } else if (usage_line)
    box_fdprintf(c->err, "%s\nTry '%s --help' for more information.\n", usage_line, cmd);
  else
    box_fdprintf(c->err, "Try '%s --help' for more information.\n", cmd);
}

void bx_usage_q(BoxCmd *c, const char *cmd, const char *fmt, const char *name)
{
  g_autofree char *q = bx_quote_always(name);
  g_autofree char *m = g_strdup_printf(fmt, q);
  bx_usage(c, cmd, "%s", m);
}

bool bx_move_operands_ok(BoxCmd *c, const char *cmd, int n, char **args, const char *target_dir,
                         bool no_target)
{
  if (n == 0) {
    bx_usage(c, cmd, "missing file operand");
    return false;
  }
  if (!target_dir && n == 1) {
    bx_usage_q(c, cmd, "missing destination file operand after %s", args[0]);
    return false;
  }
  if (no_target && (target_dir || n > 2)) {
    bx_usage_q(c, cmd, "extra operand %s", args[2]);
    return false;
  }
  return true;
}

bool bx_operands_at_most(BoxCmd *c, const char *cmd, int max)
{
  if (c->argc - optind <= max) return true;
  bx_usage_q(c, cmd, "extra operand %s", c->argv[optind + max]);
  return false;
}

void bx_getopt_start(const char *usage)
{
  usage_line = usage;
  try_line = NULL;
  optind = 0; /* GNU: full re-initialisation */
  opterr = 0;
}

/* getopt_long's table from a command's long-option string.  Built anew at
 * each call: getopt_long keeps no pointer into it between calls, and a
 * command's parse is over before another command parses (xargs and find
 * run theirs after their own options). */
static const struct option *long_table(const char *spec)
{
  static struct option tab[64];
  static char names[1024];
  size_t n = 0, used = 0;
  for (const char *p = spec; *p;) {
    while (*p == ' ') p++;
    const char *eq = strchr(p, '=');
    if (!*p || !eq) break;
    size_t len = (size_t)(eq - p);
    g_assert(n + 1 < G_N_ELEMENTS(tab) && used + len + 1 <= sizeof names);
    memcpy(names + used, p, len);
    names[used + len] = '\0';
    int colons = (eq[2] == ':') + (eq[2] == ':' && eq[3] == ':');
    int has_arg = colons == 0 ? no_argument : colons == 1 ? required_argument : optional_argument;
    tab[n++] = (struct option){ names + used, has_arg, NULL, (unsigned char)eq[1] };
    used += len + 1;
    p = eq + 2 + colons;
  }
  tab[n] = (struct option){ NULL, 0, NULL, 0 };
  return tab;
}

int bx_getopt(BoxCmd *c, const char *cmd, const char *shortopts, const char *longspec)
{
  const struct option *longopts = long_table(longspec);
  int prev = optind ? optind : 1;
  int ch = getopt_long(c->argc, c->argv, shortopts, longopts, NULL);
  if (ch != '?' && ch != ':') return ch;
  const char *arg = optind - 1 < c->argc && optind >= 1 ? c->argv[optind - 1] : "";
  if (prev < c->argc && optind > prev) arg = c->argv[optind - 1];
  if (optopt) {
    bool needs = false;
    const char *p = strchr(shortopts, optopt);
    if (p && optopt != ':') needs = p[1] == ':';
    if (strncmp(arg, "--", 2) == 0) {
      /* a long option that needs or refuses an argument */
      char *eq = strchr(arg, '=');
      if (eq)
        bx_usage(c, cmd, "option '%.*s' doesn't allow an argument", (int)(eq - arg), arg);
      else
        bx_usage(c, cmd, "option '%s' requires an argument", arg);
    } else if (needs) {
      bx_usage(c, cmd, "option requires an argument -- '%c'", optopt);
    } else {
      bx_usage(c, cmd, "invalid option -- '%c'", optopt);
    }
  } else {
    const char *eq = strchr(arg, '=');
    bool ambiguous = false;
    if (strncmp(arg, "--", 2) == 0 && longopts) {
      size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
      int hits = 0;
      for (const struct option *o = longopts; o->name; o++)
        if (strncmp(o->name, arg + 2, n) == 0) hits++;
      ambiguous = hits > 1;
      if (hits == 1 && eq) {
        for (const struct option *o = longopts; o->name; o++)
          if (strncmp(o->name, arg + 2, n) == 0 && o->has_arg == no_argument) {
            bx_usage(c, cmd, "option '--%s' doesn't allow an argument", o->name);
            return '?';
          }
      }
      if (hits == 1 && !eq) {
        for (const struct option *o = longopts; o->name; o++)
          if (strncmp(o->name, arg + 2, n) == 0) {
            bx_usage(c, cmd, "option '--%s' requires an argument", o->name);
            return '?';
          }
      }
    }
    if (ambiguous)
      bx_usage(c, cmd, "option '%s' is ambiguous", arg);
    else
      bx_usage(c, cmd, "unrecognized option '%s'", arg);
  }
  return '?';
}

void bx_getopt_start_try(const char *line)
{
  bx_getopt_start(NULL);
  try_line = line;
}

void bx_getopt_start_try_prefixed(void)
{
  bx_getopt_start_try("@: Try '@ --help' for more information.");
}

bool bx_set_flag(int ch, const char *letters, bool *const *vars)
{
  const char *p = ch > 0 && ch < 256 ? strchr(letters, ch) : NULL;
  if (!p) return false;
  *vars[p - letters] = true;
  return true;
}

const char *bx_option_word(BoxCmd *c, int *i, const char *signs)
{
  if (*i >= c->argc) return NULL;
  const char *a = c->argv[*i];
  if (strcmp(a, "--") == 0) {
    ++*i;
    return NULL;
  }
  if (!a[0] || !strchr(signs, a[0]) || !a[1]) return NULL;
  return a;
}

int bx_each_operand(BoxCmd *c, const char *cmd,
                    bool (*one)(BoxCmd *c, const char *name, void *data), void *data)
{
  if (optind >= c->argc) {
    bx_usage(c, cmd, "missing operand");
    return 1;
  }
  int status = 0;
  for (int i = optind; i < c->argc; i++)
    if (!one(c, c->argv[i], data)) status = 1;
  return status;
}
