/* mkdir.c — GNU mkdir: -p -m MODE -v. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "parents=p mode=m: verbose=v";

static void created(BoxCmd *c, const char *p)
{
  g_autofree char *q = bx_quote_always(p);
  box_out_printf(c->out, "mkdir: created directory %s\n", q);
}

typedef struct {
  bool parents, verbose, have_mode;
  mode_t mode;
} MkdirOpts;

static bool mkdir_one(BoxCmd *c, const char *p, void *data)
{
  const MkdirOpts *o = data;
  if (o->parents) {
    /* each missing ancestor, from the top */
    char *dup = g_strdup(p);
    for (char *s = dup + 1; *s; s++) {
      if (*s != '/' || s[-1] == '/') continue;
      *s = '\0';
      if (mkdir(dup, 0777) == 0) {
        if (o->verbose) created(c, dup);
      }
      *s = '/';
    }
    g_free(dup);
  }
  if (mkdir(p, o->have_mode ? 0700 : 0777) != 0) {
    if (o->parents && errno == EEXIST) return true;
    bx_err_q(c, "mkdir", "cannot create directory %s", p, errno);
    return false;
  }
  if (o->have_mode) chmod(p, o->mode);
  if (o->verbose) created(c, p);
  return true;
}

int box_cmd_mkdir(BoxCmd *c)
{
  MkdirOpts o = { false, false, false, 0777 };
  const char *mode_s = NULL;
  BX_EACH_OPTION (ch, c, "mkdir", "pm:v", longopts) switch (ch) {
    case 'p': o.parents = true; break;
    case 'm': mode_s = optarg; break;
    case 'v': o.verbose = true; break;
    default: return 1;
    }
  if (mode_s) {
    mode_t um = umask(0);
    umask(um);
    if (!bx_parse_mode(mode_s, 0777 & ~um, true, &o.mode)) {
      bx_err_q(c, "mkdir", "invalid mode %s", mode_s, 0);
      return 1;
    }
    o.have_mode = true;
  }
  return bx_each_operand(c, "mkdir", mkdir_one, &o);
}
