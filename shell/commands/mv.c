/* mv.c — GNU mv: -f -n -v -T -t DIR.  No stat in the common case: a
 * rename with RENAME_NOREPLACE first; when the target exists, moving into
 * it as a directory is tried, then replacing it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "force=f no-clobber=n verbose=v no-target-directory=T "
                               "target-directory=t: interactive=i update=u:: backup=b::";

static const char *base_of(const char *p, char **tofree)
{
  size_t n = strlen(p);
  while (n > 1 && p[n - 1] == '/') n--;
  char *t = g_strndup(p, n);
  char *b = strrchr(t, '/');
  *tofree = t;
  return b && b[1] ? b + 1 : t;
}

static int ren(const char *a, const char *b, bool noreplace)
{
  int r = renameat2(AT_FDCWD, a, AT_FDCWD, b, noreplace ? RENAME_NOREPLACE : 0);
  if (r != 0 && noreplace && (errno == EINVAL || errno == ENOSYS)) {
    /* no RENAME_NOREPLACE on this filesystem: ask whether b exists */
    if (faccessat(AT_FDCWD, b, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
      errno = EEXIST;
      return -1;
    }
    return rename(a, b);
  }
  return r;
}

static void verbose_msg(BoxCmd *c, const char *a, const char *b)
{
  char *qa = bx_quote_always(a), *qb = bx_quote_always(b);
  box_out_printf(c->out, "renamed %s -> %s\n", qa, qb);
  g_free(qa);
  g_free(qb);
}

static void fail(BoxCmd *c, const char *a, const char *b, int err)
{
  char *qa = bx_quote_always(a), *qb = bx_quote_always(b), *t = bx_errtext(c, err);
  if (err == ENOENT && faccessat(AT_FDCWD, a, F_OK, AT_SYMLINK_NOFOLLOW) != 0)
    bx_err(c, "mv", "cannot stat %s: %s", qa, t);
  else if (err == ENOTEMPTY || err == EEXIST)
    bx_err(c, "mv", "cannot move %s to %s: %s", qa, qb, t);
  else
    bx_err(c, "mv", "cannot move %s to %s: %s", qa, qb, t);
  g_free(qa);
  g_free(qb);
  g_free(t);
}

int box_cmd_mv(BoxCmd *c)
{
  bool noclobber = false, verbose = false, no_target = false;
  const char *target_dir = NULL;
  BX_EACH_OPTION (ch, c, "mv", "fnvTt:iub", longopts) switch (ch) {
    case 'f': noclobber = false; break;
    case 'n': noclobber = true; break;
    case 'v': verbose = true; break;
    case 'T': no_target = true; break;
    case 't': target_dir = optarg; break;
    case 'i':
    case 'u':
    case 'b': break;
    default: return 1;
    }
  int n = c->argc - optind;
  char **args = c->argv + optind;
  if (!bx_move_operands_ok(c, "mv", n, args, target_dir, no_target)) return 1;
  int status = 0;
  if (!target_dir && (n == 2 || no_target)) {
    const char *a = args[0], *b = args[1];
    size_t bl = strlen(b);
    bool into = !no_target && bl && b[bl - 1] == '/';
    if (!into) {
      if (ren(a, b, true) == 0) {
        if (verbose) verbose_msg(c, a, b);
        return 0;
      }
      int e = errno;
      if (e != EEXIST || no_target) {
        if (e == EEXIST && no_target && !noclobber) {
          if (rename(a, b) == 0) {
            if (verbose) verbose_msg(c, a, b);
            return 0;
          }
          e = errno;
        }
        if (e == EEXIST && noclobber) return 0;
        fail(c, a, b, e);
        return 1;
      }
    }
    /* b exists (or ends in '/'): a directory takes a inside it */
    char *tf;
    const char *base = base_of(a, &tf);
    char *dst = bx_path_join(b, base);
    if (ren(a, dst, true) == 0) {
      if (verbose) verbose_msg(c, a, dst);
    } else if (errno == ENOTDIR && !into) {
      if (noclobber) {
        g_free(dst);
        g_free(tf);
        return 0;
      }
      if (rename(a, b) == 0) {
        if (verbose) verbose_msg(c, a, b);
      } else {
        fail(c, a, b, errno);
        status = 1;
      }
    } else if (errno == EEXIST) {
      if (!noclobber) {
        if (rename(a, dst) == 0) {
          if (verbose) verbose_msg(c, a, dst);
        } else {
          fail(c, a, dst, errno);
          status = 1;
        }
      }
    } else {
      fail(c, a, dst, errno);
      status = 1;
    }
    g_free(dst);
    g_free(tf);
    return status;
  }
  const char *dir = target_dir ? target_dir : args[n - 1];
  int nsrc = target_dir ? n : n - 1;
  for (int i = 0; i < nsrc; i++) {
    char *tf;
    const char *base = base_of(args[i], &tf);
    char *dst = bx_path_join(dir, base);
    int r = ren(args[i], dst, true);
    if (r != 0 && errno == EEXIST && !noclobber)
      r = rename(args[i], dst);
    else if (r != 0 && errno == EEXIST)
      r = 0;
    if (r != 0) {
      int e = errno;
      if (e == ENOTDIR || (e == ENOENT && faccessat(AT_FDCWD, dir, F_OK, 0) != 0)) {
        bx_err_q(c, "mv", "target %s is not a directory", dir, 0);
        g_free(dst);
        g_free(tf);
        return 1;
      }
      fail(c, args[i], dst, e);
      status = 1;
    } else if (verbose) {
      verbose_msg(c, args[i], dst);
    }
    g_free(dst);
    g_free(tf);
  }
  return status;
}
