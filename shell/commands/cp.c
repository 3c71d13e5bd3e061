/* cp.c — GNU cp: -r/-R -a -p -f -n -v -L -P -T -t.  A plain copy is one
 * open+read of the source and one open+write of the target (no stat); -p
 * and -a read the source's metadata (fstat) to preserve mode and times. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  BoxCmd *c;
  bool recursive, preserve, noclobber, force, verbose, deref, nodereference;
  int status;
} Cp;

static void err2(Cp *p, const char *fmt, const char *path, int e)
{
  bx_err_q(p->c, "cp", fmt, path, e);
  p->status = 1;
}

static void say(Cp *p, const char *a, const char *b)
{
  if (!p->verbose) return;
  char *qa = bx_quote_always(a), *qb = bx_quote_always(b);
  box_out_printf(p->c->out, "%s -> %s\n", qa, qb);
  g_free(qa);
  g_free(qb);
}

static char *base_of(const char *s)
{
  size_t n = strlen(s);
  while (n > 1 && s[n - 1] == '/') n--;
  char *t = g_strndup(s, n);
  char *b = strrchr(t, '/');
  char *r = g_strdup(b && b[1] ? b + 1 : t);
  g_free(t);
  return r;
}

static bool copy_dir(Cp *p, const char *src, const char *dst, bool top_exists_ok);

typedef struct {
  char *name;
  ino_t ino;
  guint8 type;
} Ent;

static gint ent_cmp(gconstpointer a, gconstpointer b)
{
  const Ent *x = a, *y = b;
  return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Returns 1 copied, 0 failed, 2 src is a directory (nothing done). */
static int copy_file(Cp *p, const char *src, const char *dst, bool dst_may_be_dir, char **final_dst)
{
  int in = box_open_file(src, O_RDONLY | O_NOCTTY);
  if (in < 0) {
    if (errno == ENOENT)
      err2(p, "cannot stat %s", src, errno);
    else
      err2(p, "cannot open %s for reading", src, errno);
    return 0;
  }
  char buf[65536];
  ssize_t r;
  do r = read(in, buf, sizeof buf);
  while (r < 0 && errno == EINTR);
  if (r < 0 && errno == EISDIR) {
    close(in);
    return 2;
  }
  if (r < 0) {
    err2(p, "error reading %s", src, errno);
    close(in);
    return 0;
  }
  int flags = O_WRONLY | O_CREAT | O_TRUNC | (p->noclobber ? O_EXCL : 0);
  char *target = g_strdup(dst);
  int out = box_open_file(target, flags);
  if (out < 0 && errno == EISDIR && dst_may_be_dir) {
    char *b = base_of(src);
    g_free(target);
    target = bx_path_join(dst, b);
    g_free(b);
    out = box_open_file(target, flags);
  }
  if (out < 0 && p->force && errno != EEXIST && errno != EISDIR) {
    unlink(target);
    out = box_open_file(target, flags);
  }
  if (out < 0) {
    if (errno == EEXIST && p->noclobber) {
      close(in);
      g_free(target);
      return 1;
    }
    if (errno == EISDIR) {
      char *qt = bx_quote_always(target), *qs = bx_quote_always(src);
      bx_err(p->c, "cp", "cannot overwrite directory %s with non-directory %s", qt, qs);
      g_free(qt);
      g_free(qs);
      p->status = 1;
    } else {
      err2(p, "cannot create regular file %s", target, errno);
    }
    close(in);
    g_free(target);
    return 0;
  }
  bool ok = true;
  while (r > 0) {
    if (!box_write_all(out, buf, (size_t)r)) {
      err2(p, "error writing %s", target, errno);
      ok = false;
      break;
    }
    do r = read(in, buf, sizeof buf);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
      err2(p, "error reading %s", src, errno);
      ok = false;
    }
  }
  if (ok && p->preserve) {
    struct stat st;
    if (fstat(in, &st) == 0) {
      fchmod(out, st.st_mode & 07777);
      struct timespec ts[2] = { st.st_atim, st.st_mtim };
      futimens(out, ts);
    }
  }
  close(in);
  if (close(out) != 0 && ok) {
    err2(p, "error writing %s", target, errno);
    ok = false;
  }
  if (ok) say(p, src, target);
  if (final_dst)
    *final_dst = target;
  else
    g_free(target);
  return ok ? 1 : 0;
}

static bool copy_link(Cp *p, const char *src, const char *dst)
{
  char buf[4096];
  ssize_t n = readlink(src, buf, sizeof buf - 1);
  if (n < 0) {
    err2(p, "cannot read symbolic link %s", src, errno);
    return false;
  }
  buf[n] = '\0';
  if (symlink(buf, dst) != 0) {
    if (errno == EEXIST && !p->noclobber && unlink(dst) == 0 && symlink(buf, dst) == 0) {
      say(p, src, dst);
      return true;
    }
    if (errno == EEXIST && p->noclobber) return true;
    err2(p, "cannot create symbolic link %s", dst, errno);
    return false;
  }
  say(p, src, dst);
  return true;
}

static bool copy_entry(Cp *p, const char *src, const char *dst, unsigned char type)
{
  if (type == DT_LNK && !p->deref) return copy_link(p, src, dst);
  if (type == DT_DIR) return copy_dir(p, src, dst, true);
  int r = copy_file(p, src, dst, false, NULL);
  if (r == 2) return copy_dir(p, src, dst, true);
  return r == 1;
}

static bool copy_dir(Cp *p, const char *src, const char *dst, bool exists_ok)
{
  if (!p->recursive) {
    bx_err_q(p->c, "cp", "-r not specified; omitting directory %s", src, 0);
    p->status = 1;
    return false;
  }
  int derr;
  GArray *list = bx_list_dir(src, &derr);
  if (!list) {
    err2(p, "cannot access %s", src, derr);
    return false;
  }
  if (mkdir(dst, 0777) == 0)
    say(p, src, dst);
  else if (!(errno == EEXIST && exists_ok)) {
    err2(p, "cannot create directory %s", dst, errno);
    bx_dir_free(list);
    return false;
  }
  GArray *ents = g_array_new(FALSE, FALSE, sizeof(Ent));
  for (guint i = 0; i < list->len; i++) {
    BxDirEnt *e = &g_array_index(list, BxDirEnt, i);
    Ent x = { g_strdup(e->name), (ino_t)e->ino, e->type };
    g_array_append_val(ents, x);
  }
  bx_dir_free(list);
  /* GNU copies in inode order (savedir's FASTREAD) */
  g_array_sort(ents, ent_cmp);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GByteArray *types = g_byte_array_new();
  for (guint i = 0; i < ents->len; i++) {
    Ent *x = &g_array_index(ents, Ent, i);
    g_ptr_array_add(names, x->name);
    g_byte_array_append(types, &x->type, 1);
  }
  g_array_free(ents, TRUE);
  bool ok = true;
  for (guint i = 0; i < names->len; i++) {
    char *s = bx_path_join(src, names->pdata[i]), *t = bx_path_join(dst, names->pdata[i]);
    if (!copy_entry(p, s, t, types->data[i])) ok = false;
    g_free(s);
    g_free(t);
  }
  g_ptr_array_free(names, TRUE);
  g_byte_array_free(types, TRUE);
  if (p->preserve) {
    struct stat st;
    if (stat(src, &st) == 0) {
      chmod(dst, st.st_mode & 07777);
      struct timespec ts[2] = { st.st_atim, st.st_mtim };
      utimensat(AT_FDCWD, dst, ts, 0);
    }
  }
  return ok;
}

/* One top-level operand. into_dir: dst is known to be a directory. */
static void copy_top(Cp *p, const char *src, const char *dst, bool into_dir, bool no_target)
{
  if (into_dir) {
    char *b = base_of(src), *t = bx_path_join(dst, b);
    g_free(b);
    unsigned char type = DT_UNKNOWN;
    if (p->recursive && !p->deref) {
      char lb[2];
      if (readlink(src, lb, sizeof lb) >= 0 && p->nodereference) type = DT_LNK;
    }
    copy_entry(p, src, t, type);
    g_free(t);
    return;
  }
  if (p->nodereference) {
    char lb[2];
    if (readlink(src, lb, sizeof lb) >= 0) {
      copy_link(p, src, dst);
      return;
    }
  }
  int r = copy_file(p, src, dst, !no_target, NULL);
  if (r != 2) return;
  if (!p->recursive) {
    copy_dir(p, src, dst, false);
    return;
  }
  /* a directory: into dst when dst is an existing directory */
  if (mkdir(dst, 0777) == 0) {
    say(p, src, dst);
    copy_dir(p, src, dst, true);
  } else if (errno == EEXIST && !no_target) {
    char *b = base_of(src), *t = bx_path_join(dst, b);
    g_free(b);
    copy_dir(p, src, t, true);
    g_free(t);
  } else if (errno == EEXIST) {
    copy_dir(p, src, dst, true);
  } else {
    err2(p, "cannot create directory %s", dst, errno);
  }
}

static const char longopts[] = "recursive=r archive=a preserve=\1:: force=f no-clobber=n verbose=v "
                               "dereference=L no-dereference=P "
                               "no-target-directory=T target-directory=t: interactive=i update=u::";

int box_cmd_cp(BoxCmd *c)
{
  Cp p = { .c = c };
  bool no_target = false;
  const char *target_dir = NULL;
  BX_EACH_OPTION (ch, c, "cp", "rRapfnvLPdTt:iuH", longopts) switch (ch) {
    case 'r':
    case 'R': p.recursive = true; break;
    case 'a':
      p.recursive = p.preserve = p.nodereference = true;
      p.deref = false;
      break;
    case 'p':
    case 1: p.preserve = true; break;
    case 'f':
      p.force = true;
      p.noclobber = false;
      break;
    case 'n': p.noclobber = true; break;
    case 'v': p.verbose = true; break;
    case 'L':
      p.deref = true;
      p.nodereference = false;
      break;
    case 'P':
    case 'd':
      p.deref = false;
      p.nodereference = true;
      break;
    /* -P without -r: the top-level link itself is copied */
    case 'T': no_target = true; break;
    case 't': target_dir = optarg; break;
    case 'i':
    case 'u':
    case 'H': break;
    default: return 1;
    }
  if (p.recursive && !p.deref) p.nodereference = true;
  int n = c->argc - optind;
  char **args = c->argv + optind;
  if (!bx_move_operands_ok(c, "cp", n, args, target_dir, no_target)) return 1;
  if (!target_dir && n == 2) {
    size_t dl = strlen(args[1]);
    copy_top(&p, args[0], args[1], false,
             no_target || !(dl && args[1][dl - 1] == '/') ? no_target : false);
    return p.status;
  }
  const char *dir = target_dir ? target_dir : args[n - 1];
  int nsrc = target_dir ? n : n - 1;
  int dfd = box_open_file(dir, O_RDONLY | O_DIRECTORY);
  if (dfd < 0) {
    g_autofree char *q = bx_quote_always(dir);
    if (errno == ENOTDIR || errno == ENOENT)
      bx_err(c, "cp", "target %s is not a directory", q);
    else {
      char *t = bx_errtext(c, errno);
      bx_err(c, "cp", "cannot access %s: %s", q, t);
      g_free(t);
    }
    return 1;
  }
  close(dfd);
  for (int i = 0; i < nsrc; i++) copy_top(&p, args[i], dir, true, false);
  return p.status;
}
