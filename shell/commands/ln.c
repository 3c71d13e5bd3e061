/* ln.c — GNU ln: hard links and -s, -f -n -T -t -r -v -L -P. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  bool sym, force, noderef, relative, verbose, follow;
} LnOpt;

static char *last_comp(const char *s)
{
  size_t n = strlen(s);
  while (n > 1 && s[n - 1] == '/') n--;
  size_t b = n;
  while (b > 0 && s[b - 1] != '/') b--;
  return g_strndup(s + b, n - b);
}

/* target relative to the directory that will hold link */
static char *relative_to(const char *target, const char *link)
{
  int e;
  g_autofree char *t = bx_canonicalize(target, 2, &e);
  g_autofree char *ldir = g_path_get_dirname(link);
  g_autofree char *l = bx_canonicalize(ldir, 2, &e);
  if (!t || !l) return g_strdup(target);
  return bx_relative_path(t, l);
}

static int do_link(BoxCmd *c, const LnOpt *o, const char *src, const char *dest)
{
  if (!o->sym) {
    struct stat st;
    if ((o->follow ? stat(src, &st) : lstat(src, &st)) != 0) {
      bx_err_q(c, "ln", "failed to access %s", src, errno);
      return 1;
    }
    if (S_ISDIR(st.st_mode)) {
      g_autofree char *q = bx_quote(src);
      bx_err(c, "ln", "%s: hard link not allowed for directory", q);
      return 1;
    }
    if (o->force) {
      struct stat ds;
      if (lstat(dest, &ds) == 0 && ds.st_ino == st.st_ino && ds.st_dev == st.st_dev) {
        char *a = bx_quote_always(src), *b = bx_quote_always(dest);
        bx_err(c, "ln", "%s and %s are the same file", a, b);
        g_free(a);
        g_free(b);
        return 1;
      }
    }
  }
  char *target = o->sym && o->relative ? relative_to(src, dest) : g_strdup(src);
  if (o->force) {
    struct stat ds;
    if (lstat(dest, &ds) == 0) {
      if (S_ISDIR(ds.st_mode)) {
        char *q = bx_quote_always(dest);
        bx_err(c, "ln", "%s: cannot overwrite directory", q);
        g_free(q);
        g_free(target);
        return 1;
      }
      if (unlink(dest) != 0 && errno != ENOENT) {
        bx_err_q(c, "ln", "cannot remove %s", dest, errno);
        g_free(target);
        return 1;
      }
    }
  }
  int r = o->sym ? symlink(target, dest)
                 : linkat(AT_FDCWD, src, AT_FDCWD, dest, o->follow ? AT_SYMLINK_FOLLOW : 0);
  if (r != 0) {
    char *q = bx_quote_always(dest), *t = bx_errtext(c, errno);
    bx_err(c, "ln", "failed to create %s link %s: %s", o->sym ? "symbolic" : "hard", q, t);
    g_free(q);
    g_free(t);
    g_free(target);
    return 1;
  }
  if (o->verbose) {
    char *a = bx_quote_always(dest), *b = bx_quote_always(src);
    box_out_printf(c->out, "%s %s %s\n", a, o->sym ? "->" : "=>", b);
    g_free(a);
    g_free(b);
  }
  g_free(target);
  return 0;
}

static bool is_dir_target(const char *p, bool noderef)
{
  struct stat st;
  if (noderef) {
    if (lstat(p, &st) != 0) return false;
    if (S_ISLNK(st.st_mode)) return false;
    return S_ISDIR(st.st_mode);
  }
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static const char longopts[] = "symbolic=s force=f no-dereference=n no-target-directory=T "
                               "target-directory=t: relative=r verbose=v logical=L "
                               "physical=P interactive=i";

int box_cmd_ln(BoxCmd *c)
{
  LnOpt o = { 0 };
  bool no_target = false;
  const char *tdir = NULL;
  BX_EACH_OPTION (ch, c, "ln", "sfnTt:rvLPib", longopts) switch (ch) {
    case 's': o.sym = true; break;
    case 'f': o.force = true; break;
    case 'n': o.noderef = true; break;
    case 'T': no_target = true; break;
    case 't': tdir = optarg; break;
    case 'r': o.relative = true; break;
    case 'v': o.verbose = true; break;
    case 'L': o.follow = true; break;
    case 'P': o.follow = false; break;
    case 'i':
    case 'b': break;
    default: return 1;
    }
  int n = c->argc - optind;
  char **ops = c->argv + optind;
  if (o.relative && !o.sym) {
    bx_usage(c, "ln", "cannot do --relative without --symbolic");
    return 1;
  }
  if (n == 0) {
    bx_usage(c, "ln", "missing file operand");
    return 1;
  }
  if (tdir && no_target) {
    bx_usage(c, "ln", "cannot combine --target-directory and --no-target-directory");
    return 1;
  }
  if (no_target) {
    if (n < 2) {
      bx_usage_q(c, "ln", "missing destination file operand after %s", ops[0]);
      return 1;
    }
    if (n > 2) {
      bx_usage_q(c, "ln", "extra operand %s", ops[2]);
      return 1;
    }
    return do_link(c, &o, ops[0], ops[1]);
  }
  if (!tdir) {
    if (n == 1)
      tdir = ".";
    else if (n == 2 && !is_dir_target(ops[1], o.noderef))
      return do_link(c, &o, ops[0], ops[1]);
    else {
      tdir = ops[n - 1];
      n--;
      if (!is_dir_target(tdir, o.noderef)) {
        struct stat st;
        int e = stat(tdir, &st) == 0 ? ENOTDIR : errno;
        bx_err_q(c, "ln", "target %s", tdir, e);
        return 1;
      }
    }
  }
  int status = 0;
  for (int i = 0; i < n; i++) {
    char *b = last_comp(ops[i]);
    char *dest = bx_path_join(tdir, b);
    status |= do_link(c, &o, ops[i], dest);
    g_free(b);
    g_free(dest);
  }
  return status;
}
