/* mktemp.c — GNU mktemp: [TEMPLATE], -d -u -q -p DIR / --tmpdir[=DIR] -t --suffix. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "directory=d dry-run=u quiet=q tmpdir=p:: suffix=S:";

int box_cmd_mktemp(BoxCmd *c)
{
  bool dir = false, dry = false, quiet = false, use_tmpdir = false, tflag = false;
  const char *pdir = NULL, *suffix = NULL;
  BX_EACH_OPTION (ch, c, "mktemp", "dup:qtV", longopts) switch (ch) {
    case 'd': dir = true; break;
    case 'u': dry = true; break;
    case 'q': quiet = true; break;
    case 'p':
      use_tmpdir = true;
      pdir = optarg;
      break;
    case 't':
      tflag = true;
      use_tmpdir = true;
      break;
    case 'S': suffix = optarg; break;
    default: return 1;
    }
  int n = c->argc - optind;
  if (n > 1) {
    bx_usage(c, "mktemp", "too many templates");
    return 1;
  }
  const char *tmpl = n ? c->argv[optind] : NULL;
  if (!tmpl) {
    tmpl = "tmp.XXXXXXXXXX";
    use_tmpdir = true;
  }
  char *full_tmpl = suffix ? g_strconcat(tmpl, suffix, NULL) : g_strdup(tmpl);
  size_t slen = suffix ? strlen(suffix) : 0;
  if (!suffix) {
    /* the X's run up to the end, or up to a suffix after the last X run */
    const char *lastx = strrchr(full_tmpl, 'X');
    if (lastx) slen = strlen(lastx + 1);
    if (lastx && strchr(lastx + 1, '/')) slen = strlen(full_tmpl);
  } else if (strchr(suffix, '/')) {
    bx_err_q(c, "mktemp", "invalid suffix %s, contains directory separator", suffix, 0);
    g_free(full_tmpl);
    return 1;
  }
  size_t len = strlen(full_tmpl);
  size_t xs = 0;
  while (xs < len - slen && full_tmpl[len - slen - 1 - xs] == 'X') xs++;
  if (xs < 3) {
    if (!quiet) { bx_err_q(c, "mktemp", "too few X's in template %s", full_tmpl, 0); }
    g_free(full_tmpl);
    return 1;
  }
  char *path;
  if (use_tmpdir) {
    if (strchr(full_tmpl, '/') && tflag) {
      bx_err_q(c, "mktemp", "invalid template, %s, contains directory separator", full_tmpl, 0);
      g_free(full_tmpl);
      return 1;
    }
    const char *base = pdir && *pdir ? pdir : NULL;
    if (!base || tflag) {
      const char *env = box_var_get(c->sh, "TMPDIR");
      if (env && *env)
        base = env;
      else if (!base)
        base = "/tmp";
    }
    path = bx_path_join(base, full_tmpl);
  } else {
    path = g_strdup(full_tmpl);
  }
  g_free(full_tmpl);
  size_t plen = strlen(path);
  char *xpos = path + plen - slen - xs;
  static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  int err = EEXIST;
  for (int tries = 0; tries < 1000; tries++) {
    for (size_t k = 0; k < xs; k++) xpos[k] = chars[g_random_int_range(0, 62)];
    if (dry) {
      err = 0;
      break;
    }
    if (dir) {
      if (mkdir(path, 0700) == 0) {
        err = 0;
        break;
      }
    } else {
      int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd >= 0) {
        close(fd);
        err = 0;
        break;
      }
    }
    err = errno;
    if (err != EEXIST) break;
  }
  if (err) {
    if (!quiet) {
      for (size_t k = 0; k < xs; k++) xpos[k] = 'X';
      char *q = bx_quote_always(path), *t = bx_errtext(c, err);
      bx_err(c, "mktemp", "failed to create %s via template %s: %s", dir ? "directory" : "file", q,
             t);
      g_free(q);
      g_free(t);
    }
    g_free(path);
    return 1;
  }
  box_out_puts(c->out, path);
  box_out_putc(c->out, '\n');
  g_free(path);
  return 0;
}
