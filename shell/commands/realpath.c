/* realpath.c — GNU realpath: -e -m -s -q -z, --relative-to. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static char *lexical(const char *p)
{
  GString *r = g_string_new(NULL);
  if (p[0] != '/') {
    char *cwd = g_get_current_dir();
    g_string_assign(r, cwd);
    g_free(cwd);
  }
  gchar **parts = g_strsplit(p, "/", -1);
  for (gchar **x = parts; *x; x++) {
    if (!**x || !strcmp(*x, ".")) continue;
    if (!strcmp(*x, "..")) {
      char *sl = strrchr(r->str, '/');
      if (sl) g_string_truncate(r, (gsize)(sl - r->str));
      continue;
    }
    g_string_append_c(r, '/');
    g_string_append(r, *x);
  }
  g_strfreev(parts);
  if (!r->len) g_string_assign(r, "/");
  return g_string_free(r, FALSE);
}

static const char longopts[] = "canonicalize-existing=e canonicalize-missing=m no-symlinks=s "
                               "strip=s quiet=q zero=z relative-to=R: logical=L "
                               "physical=P";

int box_cmd_realpath(BoxCmd *c)
{
  int mode = 0;
  bool nosym = false, quiet = false, zero = false;
  const char *rel = NULL;
  BX_EACH_OPTION (ch, c, "realpath", "emsqzLP", longopts) switch (ch) {
    case 'e': mode = 1; break;
    case 'm': mode = 2; break;
    case 's': nosym = true; break;
    case 'q': quiet = true; break;
    case 'z': zero = true; break;
    case 'R': rel = optarg; break;
    case 'L':
    case 'P': break;
    default: return 1;
    }
  if (optind >= c->argc) {
    bx_usage(c, "realpath", "missing operand");
    return 1;
  }
  char *base = NULL;
  if (rel) {
    int err;
    base = nosym ? lexical(rel) : bx_canonicalize(rel, mode, &err);
    if (!base) {
      if (!quiet) bx_ferr(c, "realpath", rel, err);
      return 1;
    }
  }
  int status = 0;
  for (int i = optind; i < c->argc; i++) {
    const char *p = c->argv[i];
    int err = 0;
    char *r = nosym ? lexical(p) : bx_canonicalize(p, mode, &err);
    if (!r) {
      if (!quiet) bx_ferr(c, "realpath", p, err);
      status = 1;
      continue;
    }
    if (base) {
      char *x = bx_relative_path(r, base);
      g_free(r);
      r = x;
    }
    box_out_puts(c->out, r);
    box_out_putc(c->out, zero ? '\0' : '\n');
    g_free(r);
  }
  g_free(base);
  return status;
}
