/* bare-pt — the baseline of bench/mount: a bare libfuse low-level
 * passthrough of one directory, with no policy, no placement, no identity
 * re-check and no RAM areas.  It uses the kernel caches the way boxfs does
 * (attribute timeout 0, keep_cache on opens, FLUSH answered ENOSYS, no
 * default_permissions, no writeback cache, READDIRPLUS in the kernel's auto
 * mode, a multithreaded loop of up to 16 threads), and the entry timeout
 * passthrough_ll gives by default, 1 s: a passthrough that does not watch
 * its directory for changes made outside (boxfs does, and keeps names 60 s)
 * cannot keep its names longer without serving stale ones.  With
 * --entry-timeout 60 its caching is boxfs's, and a ratio boxfs/bare-pt
 * measures what policy, placement and identity cost alone.
 *
 *   bare-pt [--attr-timeout S] [--entry-timeout S] --root DIR -- PROGRAM [ARGS...]
 *
 * Mounts DIR at a fresh /tmp/bare-pt-XXXXXX, runs PROGRAM there with
 * BOXFS_DIR set to the mount (and BOXFS_DAEMON_PID to its own pid), unmounts, exits with PROGRAM's status. */
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>

#include "bench_args.h"

typedef struct {
  fuse_ino_t id;
  int fd; /* O_PATH */
  dev_t dev;
  ino_t ino;
  guint64 nlookup;
} Ino;

static GMutex lock;
static GHashTable *by_key; /* "dev:ino" packed into guint64 pair -> Ino* */
static GHashTable *by_id;  /* fuse_ino_t -> Ino* */
static fuse_ino_t next_id = 2;
static Ino *root;
static double attr_timeout = 0.0;
static double entry_timeout = 1.0;

typedef struct {
  dev_t dev;
  ino_t ino;
} Key;
static guint key_hash(gconstpointer p)
{
  const Key *k = p;
  return (guint)(k->ino ^ (k->ino >> 32) ^ k->dev);
}
static gboolean key_eq(gconstpointer a, gconstpointer b)
{
  const Key *x = a, *y = b;
  return x->dev == y->dev && x->ino == y->ino;
}

static Ino *get(fuse_ino_t id)
{
  if (id == FUSE_ROOT_ID) return root;
  g_mutex_lock(&lock);
  Ino *i = g_hash_table_lookup(by_id, &id);
  g_mutex_unlock(&lock);
  return i;
}

static int do_lookup(fuse_ino_t parent, const char *name, struct fuse_entry_param *e)
{
  Ino *p = get(parent);
  if (!p) return ESTALE;
  int fd = openat(p->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno;
  memset(e, 0, sizeof *e);
  if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
    int err = errno;
    close(fd);
    return err;
  }
  Key k = { e->attr.st_dev, e->attr.st_ino };
  g_mutex_lock(&lock);
  Ino *i = g_hash_table_lookup(by_key, &k);
  if (i) {
    close(fd);
  } else {
    i = g_new0(Ino, 1);
    i->id = next_id++;
    i->fd = fd;
    i->dev = k.dev;
    i->ino = k.ino;
    Key *kk = g_new(Key, 1);
    *kk = k;
    g_hash_table_insert(by_key, kk, i);
    g_hash_table_insert(by_id, &i->id, i);
  }
  i->nlookup++;
  e->ino = i->id;
  g_mutex_unlock(&lock);
  e->attr_timeout = attr_timeout;
  e->entry_timeout = entry_timeout;
  return 0;
}

static void forget_one(fuse_ino_t id, uint64_t n)
{
  if (id == FUSE_ROOT_ID) return;
  g_mutex_lock(&lock);
  Ino *i = g_hash_table_lookup(by_id, &id);
  if (i) {
    i->nlookup = n >= i->nlookup ? 0 : i->nlookup - n;
    if (i->nlookup == 0) {
      Key k = { i->dev, i->ino };
      g_hash_table_remove(by_id, &id);
      g_hash_table_remove(by_key, &k);
      close(i->fd);
      g_free(i);
    }
  }
  g_mutex_unlock(&lock);
}

static void pt_init(void *u, struct fuse_conn_info *conn)
{
  (void)u;
  conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
  if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
  /* READDIRPLUS in the kernel's auto mode, as boxfs asks for it */
  if (conn->capable & FUSE_CAP_READDIRPLUS) {
    conn->want |= FUSE_CAP_READDIRPLUS;
    if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO) conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
  }
}

static void reply_entry(fuse_req_t req, int err, struct fuse_entry_param *e)
{
  if (err)
    fuse_reply_err(req, err);
  else
    fuse_reply_entry(req, e);
}

static void pt_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  struct fuse_entry_param e;
  reply_entry(req, do_lookup(parent, name, &e), &e);
}

static void pt_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n)
{
  forget_one(ino, n);
  fuse_reply_none(req);
}

static void pt_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *f)
{
  for (size_t i = 0; i < count; i++) forget_one(f[i].ino, f[i].nlookup);
  fuse_reply_none(req);
}

/* The inode, or NULL once the request is answered ESTALE (the kernel
 * asked about one this daemon has forgotten). */
static Ino *get_or_stale(fuse_req_t req, fuse_ino_t ino)
{
  Ino *i = get(ino);
  if (!i) fuse_reply_err(req, ESTALE);
  return i;
}

/* Answers a call that made name in parent: err, or the new entry. */
static void reply_made(fuse_req_t req, fuse_ino_t parent, const char *name, int err)
{
  struct fuse_entry_param e;
  if (err)
    fuse_reply_err(req, err);
  else
    reply_entry(req, do_lookup(parent, name, &e), &e);
}

static void pt_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void)fi;
  Ino *i = get(ino);
  struct stat st;
  if (!i)
    fuse_reply_err(req, ESTALE);
  else if (fstatat(i->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
    fuse_reply_err(req, errno);
  else
    fuse_reply_attr(req, &st, attr_timeout);
}

static void pt_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *a, int set,
                       struct fuse_file_info *fi)
{
  Ino *i = get_or_stale(req, ino);
  if (!i) return;
  char pp[64];
  snprintf(pp, sizeof pp, "/proc/self/fd/%d", i->fd);
  int ffd = fi ? (int)fi->fh : -1;
  int r = 0;
  if (set & FUSE_SET_ATTR_MODE) r = ffd >= 0 ? fchmod(ffd, a->st_mode) : chmod(pp, a->st_mode);
  if (!r && (set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
    r = fchownat(i->fd, "", (set & FUSE_SET_ATTR_UID) ? a->st_uid : (uid_t)-1,
                 (set & FUSE_SET_ATTR_GID) ? a->st_gid : (gid_t)-1,
                 AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
  if (!r && (set & FUSE_SET_ATTR_SIZE))
    r = ffd >= 0 ? ftruncate(ffd, a->st_size) : truncate(pp, a->st_size);
  if (!r && (set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
    struct timespec tv[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
    if (set & FUSE_SET_ATTR_ATIME_NOW)
      tv[0].tv_nsec = UTIME_NOW;
    else if (set & FUSE_SET_ATTR_ATIME)
      tv[0] = a->st_atim;
    if (set & FUSE_SET_ATTR_MTIME_NOW)
      tv[1].tv_nsec = UTIME_NOW;
    else if (set & FUSE_SET_ATTR_MTIME)
      tv[1] = a->st_mtim;
    r = ffd >= 0 ? futimens(ffd, tv) : utimensat(AT_FDCWD, pp, tv, 0);
  }
  if (r < 0) {
    fuse_reply_err(req, errno);
    return;
  }
  pt_getattr(req, ino, fi);
}

static void pt_readlink(fuse_req_t req, fuse_ino_t ino)
{
  Ino *i = get(ino);
  char buf[PATH_MAX + 1];
  ssize_t n = i ? readlinkat(i->fd, "", buf, sizeof buf - 1) : -1;
  if (n < 0) {
    fuse_reply_err(req, i ? errno : ESTALE);
    return;
  }
  buf[n] = '\0';
  fuse_reply_readlink(req, buf);
}

static void pt_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
  Ino *p = get(parent);
  reply_made(req, parent, name, !p ? ESTALE : mkdirat(p->fd, name, mode) < 0 ? errno : 0);
}

static void pt_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
  Ino *p = get(parent);
  reply_made(req, parent, name, !p ? ESTALE : mknodat(p->fd, name, mode, rdev) < 0 ? errno : 0);
}

static void pt_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
  Ino *p = get(parent);
  reply_made(req, parent, name, !p ? ESTALE : symlinkat(link, p->fd, name) < 0 ? errno : 0);
}

static void pt_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name)
{
  Ino *i = get(ino), *p = get(parent);
  reply_made(req, parent, name,
             !i || !p                                            ? ESTALE
             : linkat(i->fd, "", p->fd, name, AT_EMPTY_PATH) < 0 ? errno
                                                                 : 0);
}

static void pt_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  Ino *p = get(parent);
  fuse_reply_err(req, !p ? ESTALE : unlinkat(p->fd, name, 0) < 0 ? errno : 0);
}

static void pt_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  Ino *p = get(parent);
  fuse_reply_err(req, !p ? ESTALE : unlinkat(p->fd, name, AT_REMOVEDIR) < 0 ? errno : 0);
}

static void pt_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t np,
                      const char *nn, unsigned flags)
{
  Ino *p = get(parent), *q = get(np);
  if (!p || !q)
    fuse_reply_err(req, ESTALE);
  else
    fuse_reply_err(req, renameat2(p->fd, name, q->fd, nn, flags) < 0 ? errno : 0);
}

static void pt_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  Ino *i = get_or_stale(req, ino);
  if (!i) return;
  char pp[64];
  snprintf(pp, sizeof pp, "/proc/self/fd/%d", i->fd);
  int fd = open(pp, (fi->flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY)) | O_CLOEXEC);
  if (fd < 0) {
    fuse_reply_err(req, errno);
    return;
  }
  fi->fh = (uint64_t)fd;
  fi->keep_cache = 1;
  if (fuse_reply_open(req, fi) != 0) close(fd);
}

static void pt_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi)
{
  Ino *p = get_or_stale(req, parent);
  if (!p) return;
  int fd = openat(p->fd, name, (fi->flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC), mode);
  if (fd < 0) {
    fuse_reply_err(req, errno);
    return;
  }
  struct fuse_entry_param e;
  int err = do_lookup(parent, name, &e);
  if (err) {
    close(fd);
    fuse_reply_err(req, err);
    return;
  }
  fi->fh = (uint64_t)fd;
  fi->keep_cache = 1;
  if (fuse_reply_create(req, &e, fi) != 0) {
    close(fd);
    forget_one(e.ino, 1);
  }
}

static void pt_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
  (void)ino;
  struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
  buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
  buf.buf[0].fd = (int)fi->fh;
  buf.buf[0].pos = off;
  fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void pt_write(fuse_req_t req, fuse_ino_t ino, const char *b, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
  (void)ino;
  ssize_t n = pwrite((int)fi->fh, b, size, off);
  if (n < 0)
    fuse_reply_err(req, errno);
  else
    fuse_reply_write(req, (size_t)n);
}

static void pt_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void)ino;
  (void)fi;
  fuse_reply_err(req, ENOSYS);
}

static void pt_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void)ino;
  close((int)fi->fh);
  fuse_reply_err(req, 0);
}

static void pt_fsync(fuse_req_t req, fuse_ino_t ino, int ds, struct fuse_file_info *fi)
{
  (void)ino;
  int fd = (int)fi->fh;
  fuse_reply_err(req, (ds ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0);
}

typedef struct {
  DIR *dir;
  off_t pos;
  struct dirent *ent;
} Dir;

static void pt_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  Ino *i = get(ino);
  int fd = i ? openat(i->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    int err = i ? errno : ESTALE;
    if (fd >= 0) close(fd);
    fuse_reply_err(req, err);
    return;
  }
  Dir *x = g_new0(Dir, 1);
  x->dir = d;
  fi->fh = (uint64_t)(uintptr_t)x;
  if (fuse_reply_open(req, fi) != 0) {
    closedir(d);
    g_free(x);
  }
}

/* The listing at the kernel's offset (where the last batch stopped unless
 * it seeks), and its current entry: the one that did not fit, or the next
 * (NULL at the end, errno set on an error). */
static void dir_seek(Dir *x, off_t off)
{
  if (off == x->pos) return;
  seekdir(x->dir, off);
  x->ent = NULL;
  x->pos = off;
}

static struct dirent *dir_next(Dir *x)
{
  if (!x->ent) {
    errno = 0;
    x->ent = readdir(x->dir);
  }
  return x->ent;
}

static void pt_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
  (void)ino;
  Dir *x = (Dir *)(uintptr_t)fi->fh;
  char *buf = g_malloc(size);
  size_t pos = 0;
  dir_seek(x, off);
  while (dir_next(x)) {
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_ino = x->ent->d_ino;
    st.st_mode = (mode_t)x->ent->d_type << 12;
    off_t next = x->ent->d_off;
    size_t need = fuse_add_direntry(req, buf + pos, size - pos, x->ent->d_name, &st, next);
    if (need > size - pos) break;
    pos += need;
    x->ent = NULL;
    x->pos = next;
  }
  fuse_reply_buf(req, buf, pos);
  g_free(buf);
}

/* As passthrough_ll: each entry looked up (its node and attributes), "."
 * and ".." by name only; an entry that does not fit is forgotten again. */
static void pt_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                           struct fuse_file_info *fi)
{
  Dir *x = (Dir *)(uintptr_t)fi->fh;
  char *buf = g_malloc(size);
  size_t pos = 0;
  int err = 0;
  dir_seek(x, off);
  for (;;) {
    if (!dir_next(x)) {
      err = pos ? 0 : errno;
      break;
    }
    const char *name = x->ent->d_name;
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    bool dots = strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
    if (dots) {
      e.attr.st_ino = x->ent->d_ino;
      e.attr.st_mode = (mode_t)x->ent->d_type << 12;
    } else if ((err = do_lookup(ino, name, &e)) != 0) {
      if (pos) err = 0;
      break;
    }
    off_t next = x->ent->d_off;
    size_t need = fuse_add_direntry_plus(req, buf + pos, size - pos, name, &e, next);
    if (need > size - pos) {
      if (!dots) forget_one(e.ino, 1);
      break;
    }
    pos += need;
    x->ent = NULL;
    x->pos = next;
  }
  if (err)
    fuse_reply_err(req, err);
  else
    fuse_reply_buf(req, buf, pos);
  g_free(buf);
}

static void pt_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void)ino;
  Dir *x = (Dir *)(uintptr_t)fi->fh;
  closedir(x->dir);
  g_free(x);
  fuse_reply_err(req, 0);
}

static void pt_statfs(fuse_req_t req, fuse_ino_t ino)
{
  struct statvfs sv;
  Ino *i = get(ino);
  if (!i || fstatvfs(i->fd, &sv) < 0)
    fuse_reply_err(req, i ? errno : ESTALE);
  else
    fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops ops = {
  .init = pt_init,
  .lookup = pt_lookup,
  .forget = pt_forget,
  .forget_multi = pt_forget_multi,
  .getattr = pt_getattr,
  .setattr = pt_setattr,
  .readlink = pt_readlink,
  .mknod = pt_mknod,
  .mkdir = pt_mkdir,
  .unlink = pt_unlink,
  .rmdir = pt_rmdir,
  .symlink = pt_symlink,
  .rename = pt_rename,
  .link = pt_link,
  .open = pt_open,
  .read = pt_read,
  .write = pt_write,
  .flush = pt_flush,
  .release = pt_release,
  .fsync = pt_fsync,
  .opendir = pt_opendir,
  .readdir = pt_readdir,
  .readdirplus = pt_readdirplus,
  .releasedir = pt_releasedir,
  .statfs = pt_statfs,
  .create = pt_create,
};

static struct fuse_session *se;
static void *loop(void *arg)
{
  (void)arg;
  struct fuse_loop_config *cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, 16);
  fuse_session_loop_mt(se, cfg);
  fuse_loop_cfg_destroy(cfg);
  return NULL;
}

int main(int argc, char **argv)
{
  const char *dir = NULL;
  int i = 1;
  for (; i < argc; i++) {
    const char *v;
    if (bench_args_end(argv, &i)) {
      break;
    } else if ((v = bench_arg(argc, argv, &i, "--root"))) {
      dir = v;
    } else if ((v = bench_arg(argc, argv, &i, "--attr-timeout"))) {
      attr_timeout = atof(v);
    } else if ((v = bench_arg(argc, argv, &i, "--entry-timeout"))) {
      entry_timeout = atof(v);
    } else {
      fprintf(
        stderr,
        "usage: bare-pt [--attr-timeout S] [--entry-timeout S] --root DIR -- PROGRAM [ARGS]\n");
      return 2;
    }
  }
  if (!dir || i >= argc) {
    fprintf(stderr, "bare-pt: need --root and a program\n");
    return 2;
  }
  by_key = g_hash_table_new_full(key_hash, key_eq, g_free, NULL);
  by_id = g_hash_table_new(g_int64_hash, g_int64_equal);
  root = g_new0(Ino, 1);
  root->id = FUSE_ROOT_ID;
  root->fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root->fd < 0) {
    perror(dir);
    return 2;
  }
  /* a descriptor per inode, as boxfs: the same limit as box_vfs_raise_fd_limit gives */
  struct rlimit rl = { 1u << 20, 1u << 20 };
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  char tmpl[] = "/tmp/bare-pt-XXXXXX";
  if (!mkdtemp(tmpl)) return 2;
  const char *fargv[] = { "bare-pt", "-o", "fsname=bare-pt,subtype=bare-pt", NULL };
  struct fuse_args args = FUSE_ARGS_INIT(3, (char **)fargv);
  se = fuse_session_new(&args, &ops, sizeof ops, NULL);
  if (!se || fuse_session_mount(se, tmpl) != 0) {
    fprintf(stderr, "bare-pt: cannot mount\n");
    rmdir(tmpl);
    return 2;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_t th;
  pthread_create(&th, NULL, loop, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  int status = 125;
  char self[16];
  snprintf(self, sizeof self, "%d", (int)getpid());
  pid_t pid = fork();
  if (pid == 0) {
    for (int fd = 3; fd < 65536; fd++) close(fd);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    setenv("BOXFS_DIR", tmpl, 1);
    setenv("BOXFS_DAEMON_PID", self, 1); /* mount-work's per-phase daemon CPU */
    if (chdir(tmpl) < 0) _exit(122);
    execvp(argv[i], argv + i);
    _exit(127);
  }
  int st;
  if (pid > 0 && waitpid(pid, &st, 0) == pid) status = WIFEXITED(st) ? WEXITSTATUS(st) : 125;
  fuse_session_exit(se);
  fuse_session_unmount(se);
  pthread_join(th, NULL);
  fuse_session_destroy(se);
  rmdir(tmpl);
  return status;
}
