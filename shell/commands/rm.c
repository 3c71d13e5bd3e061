/* rm.c — GNU rm: -f -r/-R -d -v -i/-I (no prompts: ignored), refuses '/'.
 * No stat: unlink(2) first, a directory answers EISDIR and is then walked
 * with opendir/readdir (d_type) when -r, or rmdir'ed when -d. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  BoxCmd *c;
  bool force, recursive, dir, verbose;
  int status;
} Rm;

static void fail(Rm *r, const char *path, int err)
{
  bx_err_q(r->c, "rm", "cannot remove %s", path, err);
  r->status = 1;
}

static void removed(Rm *r, const char *path, bool is_dir)
{
  if (!r->verbose) return;
  g_autofree char *q = bx_quote_always(path);
  box_out_printf(r->c->out, "removed %s%s\n", is_dir ? "directory " : "", q);
}

static bool rm_path(Rm *r, const char *path, unsigned char type);

static bool rm_tree(Rm *r, const char *path)
{
  int err;
  GArray *ents = bx_list_dir(path, &err);
  if (!ents) {
    fail(r, path, err);
    return false;
  }
  bool ok = true;
  for (guint i = 0; i < ents->len; i++) {
    BxDirEnt *e = &g_array_index(ents, BxDirEnt, i);
    char *child = bx_path_join(path, e->name);
    if (!rm_path(r, child, e->type)) ok = false;
    g_free(child);
  }
  bx_dir_free(ents);
  if (!ok) return false;
  if (rmdir(path) != 0) {
    fail(r, path, errno);
    return false;
  }
  removed(r, path, true);
  return true;
}

static bool rm_path(Rm *r, const char *path, unsigned char type)
{
  if (type == DT_DIR && r->recursive) return rm_tree(r, path);
  if (unlink(path) == 0) {
    removed(r, path, false);
    return true;
  }
  int err = errno;
  if (err == EISDIR || err == EPERM) {
    if (r->recursive) return rm_tree(r, path);
    if (r->dir) {
      if (rmdir(path) == 0) {
        removed(r, path, true);
        return true;
      }
      fail(r, path, errno);
      return false;
    }
    if (err == EISDIR) {
      fail(r, path, EISDIR);
      return false;
    }
  }
  if (err == ENOENT && r->force) return true;
  fail(r, path, err);
  return false;
}

static const char longopts[] = "force=f recursive=r dir=d verbose=v interactive=\1:: "
                               "no-preserve-root=\2 preserve-root=\3:: one-file-system=\4";

int box_cmd_rm(BoxCmd *c)
{
  Rm r = { c, false, false, false, false, 0 };
  bool preserve_root = true;
  BX_EACH_OPTION (ch, c, "rm", "frRdviI", longopts) switch (ch) {
    case 'f': r.force = true; break;
    case 'r':
    case 'R': r.recursive = true; break;
    case 'd': r.dir = true; break;
    case 'v': r.verbose = true; break;
    case 'i':
    case 'I':
    case 1:
    case 3:
    case 4: break;
    case 2: preserve_root = false; break;
    default: return 1;
    }
  if (optind >= c->argc) {
    if (r.force) return 0;
    bx_usage(c, "rm", "missing operand");
    return 1;
  }
  for (int i = optind; i < c->argc; i++) {
    const char *p = c->argv[i];
    const char *base = strrchr(p, '/');
    size_t plen = strlen(p);
    while (plen > 1 && p[plen - 1] == '/') plen--;
    char *trim = g_strndup(p, plen);
    base = strrchr(trim, '/');
    base = base ? base + 1 : trim;
    if (r.recursive && preserve_root && strspn(p, "/") == strlen(p)) {
      bx_err(c, "rm", "it is dangerous to operate recursively on '/'");
      bx_err(c, "rm", "use --no-preserve-root to override this failsafe");
      r.status = 1;
      g_free(trim);
      continue;
    }
    if (!strcmp(base, ".") || !strcmp(base, "..")) {
      bx_err_q(c, "rm", "refusing to remove '.' or '..' directory: skipping %s", p, 0);
      r.status = 1;
      g_free(trim);
      continue;
    }
    g_free(trim);
    rm_path(&r, p, DT_UNKNOWN);
  }
  return r.status;
}
