/* vfs_ops.c — the FUSE low-level request handlers.
 *
 * Pattern: place the caller, pin the nodes under the tree lock, drop the
 * lock to ask policy and to make the real syscalls, retake it to change the
 * tree.  Passthrough nodes act through their O_PATH descriptors; RAM nodes
 * live in memory. */
#include "vfs/vfs_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#define ENTRY_TIMEOUT 1.0
/* names in a directory whose changes from outside are watched (vfs_watch.c) */
#define ENTRY_TIMEOUT_WATCHED 60.0

static const char *IDENTITY_WHY = "no longer resolves to the object that policy judged";

/* ---- replies: a job answered EINTR already (cancelled) is not answered
 * again; the wrappers then return -1 like a failed reply.  The outcomes of
 * the request's permits are recorded before the reply: the history has them
 * by the time the caller sees the result (and decides its next request). ---- */
static int R_err(fuse_req_t req, int err) {
  Job *j = vfs_job_current();
  if (j && !vfs_job_may_reply(j)) {
    vfs_outcome_flush(NULL);
    return -1;
  }
  vfs_outcome_flush(err == 0 ? "completed" : err == EIO ? "indeterminate" : NULL);
  return fuse_reply_err(req, err);
}
static int R_entry(fuse_req_t req, const struct fuse_entry_param *e) {
  Job *j = vfs_job_current();
  if (j && !vfs_job_may_reply(j)) {
    vfs_outcome_flush(NULL);
    return -1;
  }
  vfs_outcome_flush("completed");
  return fuse_reply_entry(req, e);
}
static int R_attr(fuse_req_t req, const struct stat *st, double timeout) {
  Job *j = vfs_job_current();
  if (j && !vfs_job_may_reply(j)) {
    vfs_outcome_flush(NULL);
    return -1;
  }
  vfs_outcome_flush("completed");
  return fuse_reply_attr(req, st, timeout);
}
static int R_open(fuse_req_t req, const struct fuse_file_info *fi) {
  Job *j = vfs_job_current();
  if (j && !vfs_job_may_reply(j)) {
    vfs_outcome_flush(NULL);
    return -1;
  }
  vfs_outcome_flush("descriptor_issued");
  return fuse_reply_open(req, fi);
}
static int R_create(fuse_req_t req, const struct fuse_entry_param *e,
                    const struct fuse_file_info *fi) {
  Job *j = vfs_job_current();
  if (j && !vfs_job_may_reply(j)) {
    vfs_outcome_flush(NULL);
    return -1;
  }
  vfs_outcome_flush("descriptor_issued");
  return fuse_reply_create(req, e, fi);
}
static int R_readlink(fuse_req_t req, const char *link) {
  Job *j = vfs_job_current();
  if (j && !vfs_job_may_reply(j)) {
    vfs_outcome_flush(NULL);
    return -1;
  }
  vfs_outcome_flush("completed");
  return fuse_reply_readlink(req, link);
}

static BoxVfs *V(fuse_req_t req) { return fuse_req_userdata(req); }
static Fh *FH(struct fuse_file_info *fi) { return fi ? (Fh *)(uintptr_t)fi->fh : NULL; }

static void now_ts(struct timespec *ts) { clock_gettime(CLOCK_REALTIME, ts); }

static void proc_path(char *buf, size_t n, int fd) { snprintf(buf, n, "/proc/self/fd/%d", fd); }

/* ---- pinning and reach ---- */

/* lock held */
static int reach(const Caller *c, Node *n) {
  if (!c->placed) return EACCES;
  if (n->kind == NODE_RAM && !vfs_ram_reachable(c, n)) return EACCES;
  return 0;
}

static Node *pin(BoxVfs *v, fuse_ino_t ino, const Caller *c, int *err) {
  g_mutex_lock(&v->lock);
  Node *n = vfs_node_get(v, ino);
  if (!n) {
    *err = ENOENT;
  } else if ((*err = reach(c, n)) != 0) {
    n = NULL;
  } else {
    vfs_node_ref(n);
  }
  g_mutex_unlock(&v->lock);
  return n;
}

static void unpin(BoxVfs *v, Node *n) {
  if (!n) return;
  vfs_closes_defer(); /* the last reference, when FORGET came meanwhile */
  g_mutex_lock(&v->lock);
  vfs_node_unref(v, n);
  g_mutex_unlock(&v->lock);
  vfs_closes_run();
}

static char *path_of(BoxVfs *v, Node *n) {
  g_mutex_lock(&v->lock);
  char *p = vfs_node_path(v, n);
  g_mutex_unlock(&v->lock);
  return p;
}

static bool is_pass(Node *n) { return n->kind == NODE_PASS; }

/* A node whose metadata and access are decided (not the root chain, not control). */
static bool decidable(Node *n) {
  if (n->kind == NODE_PASS) return true;
  return n->kind == NODE_RAM && !n->chain && n->special == SPECIAL_NONE;
}

/* ---- attributes ---- */

static unsigned char dtype_of(mode_t m) { return (unsigned char)((m & S_IFMT) >> 12); }

/* lock held for non-pass nodes */
static void virt_stat(Node *n, struct stat *st) {
  memset(st, 0, sizeof *st);
  st->st_ino = (ino_t)(n->ino | VFS_RAM_INO_BIT);
  st->st_mode = n->mode;
  st->st_nlink = n->nlink;
  st->st_uid = n->uid;
  st->st_gid = n->gid;
  if (n->data) st->st_size = (off_t)n->data->len;
  else if (n->target) st->st_size = (off_t)strlen(n->target);
  else if (S_ISDIR(n->mode)) st->st_size = 4096;
  st->st_blksize = 4096;
  st->st_blocks = (st->st_size + 511) / 512;
  st->st_atim = n->atime;
  st->st_mtim = n->mtime;
  st->st_ctim = n->ctime;
}

static int pass_node_stat(BoxVfs *v, Node *n, bool locked, struct stat *st);

static int node_stat(BoxVfs *v, Node *n, struct stat *st) {
  if (is_pass(n)) return pass_node_stat(v, n, false, st);
  g_mutex_lock(&v->lock);
  virt_stat(n, st);
  g_mutex_unlock(&v->lock);
  return 0;
}

/* lock held */
static double entry_timeout_of(BoxVfs *v, Node *n) {
  if (n->special != SPECIAL_NONE) return 0.0;
  return vfs_watch_long(v, n) ? ENTRY_TIMEOUT_WATCHED : ENTRY_TIMEOUT;
}

/* Mode-bit check (no default_permissions: the daemon checks).  Supplementary
 * groups are not consulted in this first cut. */
static bool caller_in_group(const Caller *c, gid_t g);

static bool perm_ok(const struct stat *st, const Caller *c, int mask) {
  if (c->uid == 0) {
    if ((mask & X_OK) && !S_ISDIR(st->st_mode) && !(st->st_mode & 0111)) return false;
    return true;
  }
  unsigned bits;
  if (c->uid == st->st_uid) bits = (st->st_mode >> 6) & 7;
  else if (caller_in_group(c, st->st_gid)) bits = (st->st_mode >> 3) & 7;
  else bits = st->st_mode & 7;
  return ((unsigned)mask & bits) == (unsigned)mask;
}

static int check_perm(BoxVfs *v, Node *n, const Caller *c, int mask) {
  if (c->uid == 0 && !(mask & X_OK)) return 0;
  /* root searches every directory: no need to read its mode */
  if (c->uid == 0 && is_pass(n) && S_ISDIR(n->ftype)) return 0;
  struct stat st;
  int e = node_stat(v, n, &st);
  if (e) return e;
  return perm_ok(&st, c, mask) ? 0 : EACCES;
}

/* ---- identity: reach a node again from its bound root ----
 *
 * Every passthrough op that acts on a node first reaches it again from the
 * O_PATH descriptor of its bound root, one component at a time, following no
 * symlink and never leaving the root (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), and compares the (dev, ino) found with the one the
 * node was resolved to.  The op then acts on the descriptor just opened.
 *   - a symlink on the way, or a way out of the root: refused and logged
 *     (enforcement:identity), EACCES;
 *   - the name is gone or now names another object (changed outside the
 *     mount): ESTALE, so the kernel walks the path again (LOOKUP_REVAL) and
 *     the retried op is decided on what the path names now. */

/* lock held: n's path below its bound root ("." for the root itself) and the
 * root's descriptor; NULL if n hangs off no root. */
static char *pass_rel(Node *n, int *rootfd) {
  GPtrArray *parts = g_ptr_array_new();
  Node *p = n;
  int depth = 0;
  while (p && p->kind == NODE_PASS && !p->root_path && depth < VFS_MAX_DEPTH) {
    g_ptr_array_add(parts, p->name);
    p = p->parent;
    depth++;
  }
  if (!p || p->kind != NODE_PASS || !p->root_path) {
    g_ptr_array_unref(parts);
    return NULL;
  }
  *rootfd = p->fd;
  GString *s = g_string_new(NULL);
  for (guint i = parts->len; i > 0; i--) {
    if (s->len) g_string_append_c(s, '/');
    g_string_append(s, g_ptr_array_index(parts, i - 1));
  }
  if (!s->len) g_string_append_c(s, '.');
  g_ptr_array_unref(parts);
  return g_string_free(s, FALSE);
}

static int openat2_beneath(int dirfd, const char *rel, int flags) {
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = (uint64_t)(unsigned)(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (int tries = 0; tries < 8; tries++) {
    long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    if (fd >= 0) return (int)fd;
    if (errno != EAGAIN) break;
  }
  return -1;
}

static int deny_identity(BoxVfs *v, const Caller *c, Node *n, const char *action);

/* Opens n (flags: O_PATH for a handle to act through, or the open flags of
 * an OPEN) reached again from its root.  Returns the descriptor or -errno. */
static int pass_reach_st(BoxVfs *v, const Caller *c, Node *n, int flags, const char *action,
                         struct stat *out, guint64 *moves);
static int pass_reach(BoxVfs *v, const Caller *c, Node *n, int flags, const char *action) {
  struct stat st;
  return pass_reach_st(v, c, n, flags, action, &st, NULL);
}

/* As pass_reach, also giving the object's attributes (read for the check). */
/* lock held: as pass_rel, written right to left into buf (no allocation:
 * this runs on every op that acts); NULL if n hangs off no root or the path
 * does not fit (the caller then uses pass_rel). */
static const char *pass_rel_buf(Node *n, int *rootfd, char *buf, size_t size) {
  size_t pos = size - 1;
  buf[pos] = '\0';
  Node *p = n;
  int depth = 0;
  while (p && p->kind == NODE_PASS && !p->root_path && depth < VFS_MAX_DEPTH) {
    size_t len = strlen(p->name);
    if (len + 1 > pos) return NULL;
    if (pos != size - 1) buf[--pos] = '/';
    pos -= len;
    memcpy(buf + pos, p->name, len);
    p = p->parent;
    depth++;
  }
  if (!p || p->kind != NODE_PASS || !p->root_path) return NULL;
  *rootfd = p->fd;
  if (pos == size - 1) buf[--pos] = '.';
  return buf + pos;
}

/* n reached again from its bound root (the lock held if locked): its
 * descriptor, opened with flags and checked to be n's object (*st its
 * attributes), or -errno: -ESTALE where the name is gone or names another
 * object now, -ELOOP where a symlink or a way out of the root is on the path. */
static int reach_open(BoxVfs *v, Node *n, int flags, bool locked, struct stat *st) {
  int rootfd = -1;
  char buf[1024];
  if (!locked) g_mutex_lock(&v->lock);
  const char *fast = pass_rel_buf(n, &rootfd, buf, sizeof buf);
  char *rel = fast ? NULL : pass_rel(n, &rootfd);
  if (!locked) g_mutex_unlock(&v->lock);
  if (!fast && !rel) return -ESTALE;
  if (S_ISLNK(n->ftype)) flags |= O_PATH | O_NOFOLLOW;
  /* openat2 refuses bits open(2) ignores (the kernel's __FMODE_EXEC on an
   * exec's OPEN, for one): keep only the flags that mean something here. */
  flags &= O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECT | O_LARGEFILE |
           O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_PATH | O_TRUNC;
  int fd = openat2_beneath(rootfd, fast ? fast : rel, flags);
  int e = fd < 0 ? errno : 0;
  g_free(rel);
  if (fd < 0) {
    if (e == ELOOP || e == EXDEV) return -ELOOP;
    return e == ENOENT || e == ENOTDIR ? -ESTALE : -e;
  }
  if (fstat(fd, st) < 0) {
    e = errno;
    close(fd);
    return -e;
  }
  if (st->st_dev != n->rdev_key || st->st_ino != n->rino) {
    close(fd);
    return -ESTALE;
  }
  return fd;
}

static int pass_reach_st(BoxVfs *v, const Caller *c, Node *n, int flags, const char *action,
                         struct stat *out, guint64 *moves) {
  guint64 before = vfs_watch_moves(v); /* read before the walk: the stamp it earns */
  if (moves) *moves = 0;
  __atomic_add_fetch(&v->reach_walks, 1, __ATOMIC_RELAXED);
  int fd = reach_open(v, n, flags, false, out);
  if (fd == -ELOOP) return -deny_identity(v, c, n, action);
  if (fd < 0) return fd;
  if (before) {
    g_mutex_lock(&v->lock);
    vfs_watch_proven(n, before);
    g_mutex_unlock(&v->lock);
    if (moves) *moves = before;
  }
  return fd;
}

/* The descriptor to read n's object through: its own, or, for a node past
 * the descriptor budget (it holds none), one reached from its root as
 * pass_reach_st reaches it, quietly (the op that acts walks, and logs, on
 * its own), which node_fd_put closes.  -errno: not at its place now
 * (ESTALE), or not reachable without a symlink (EACCES). */
static int node_fd_get(BoxVfs *v, Node *n, bool locked) {
  if (n->fd >= 0) return n->fd;
  struct stat st;
  int fd = reach_open(v, n, O_PATH | O_NOFOLLOW, locked, &st);
  if (fd >= 0) return fd;
  if (fd == -ELOOP) return -EACCES;
  if (fd != -ESTALE) return fd;
  /* not at its place: an open file of it still is the object */
  if (!locked) g_mutex_lock(&v->lock);
  fd = n->open_files ? fcntl(((Fh *)n->open_files->data)->fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (!locked) g_mutex_unlock(&v->lock);
  return fd >= 0 ? fd : -ESTALE;
}

static void node_fd_put(const Node *n, int fd) {
  if (fd >= 0 && fd != n->fd) close(fd);
}

/* A pass node's attributes, read through node_fd_get: 0 or an errno. */
static int pass_node_stat(BoxVfs *v, Node *n, bool locked, struct stat *st) {
  int fd = node_fd_get(v, n, locked);
  if (fd < 0) return -fd;
  int err = fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? errno : 0;
  node_fd_put(n, fd);
  return err;
}

/* Identity of a name in a passthrough directory at two moments. */
typedef struct {
  bool exists;
  dev_t dev;
  ino_t ino;
  mode_t mode;
  nlink_t nlink;
} NameId;

static void name_id(int dirfd, const char *name, NameId *id) {
  struct stat st;
  memset(id, 0, sizeof *id);
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    id->exists = true;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->mode = st.st_mode;
    id->nlink = st.st_nlink;
  }
}

static bool name_same(const NameId *a, const NameId *b) {
  if (a->exists != b->exists) return false;
  return !a->exists || (a->dev == b->dev && a->ino == b->ino);
}

/* ---- entries ---- */

/* lock held; takes a kernel reference on n and fills e (with *known, the
 * attributes just read from n's object, else read here) */
static int fill_entry_st(BoxVfs *v, Node *n, struct fuse_entry_param *e, const struct stat *known) {
  memset(e, 0, sizeof *e);
  struct stat st;
  if (known) {
    st = *known;
  } else if (is_pass(n)) {
    int err = pass_node_stat(v, n, true, &st);
    if (err) return err;
  } else {
    virt_stat(n, &st);
  }
  e->ino = n->ino;
  e->attr = st;
  e->attr_timeout = 0.0;
  e->entry_timeout = entry_timeout_of(v, n);
  n->nlookup++;
  vfs_node_ref(n);
  return 0;
}

static int fill_entry(BoxVfs *v, Node *n, struct fuse_entry_param *e) {
  return fill_entry_st(v, n, e, NULL);
}

/* Resolves name in a passthrough directory to its node (created or found).
 * A name whose object already has a node (the kernel's revalidation of a
 * cached entry, mostly) costs one fstatat: the node's own descriptor keeps
 * that (dev, ino) from naming anything else, and the attributes read are
 * the entry's.  Only a new object is opened (O_PATH, never following). */
static int pass_child_known(BoxVfs *v, Node *dir, int dirfd, const char *name,
                            struct fuse_entry_param *e, const struct stat *known, guint64 moves);
static int pass_child(BoxVfs *v, Node *dir, int dirfd, const char *name,
                      struct fuse_entry_param *e) {
  return pass_child_known(v, dir, dirfd, name, e, NULL, 0);
}

/* As pass_child; known: the attributes of the object the caller just
 * created there (no fstatat: it is new, or its node is found by them);
 * moves: the watch's stamp of the walk that reached dirfd (0: none). */
static int pass_child_known(BoxVfs *v, Node *dir, int dirfd, const char *name,
                            struct fuse_entry_param *e, const struct stat *known, guint64 moves) {
  struct stat st;
  if (known) st = *known;
  else if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return errno;
  g_mutex_lock(&v->lock);
  Node *n = vfs_pass_find(v, st.st_dev, st.st_ino);
  if (n) {
    if (n->parent != dir || !n->name || strcmp(n->name, name) != 0)
      n = vfs_pass_insert(v, dir, name, -1, &st); /* follows a rename or another link */
    vfs_watch_proven(n, moves);
    int err = fill_entry_st(v, n, e, &st);
    g_mutex_unlock(&v->lock);
    return err;
  }
  g_mutex_unlock(&v->lock);
  int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno;
  if (fstat(fd, &st) < 0) {
    int err = errno;
    close(fd);
    return err;
  }
  g_mutex_lock(&v->lock);
  n = vfs_pass_insert(v, dir, name, fd, &st);
  vfs_watch_proven(n, moves);
  int err = fill_entry_st(v, n, e, &st);
  g_mutex_unlock(&v->lock);
  return err;
}

/* A lookup the kernel makes again for a name it knows (its entry timed
 * out): the child reached straight from the root, never through a symlink,
 * is the node already under dir by that name, so the one walk proves both
 * the directory's place and the child (three system calls, where reaching
 * the directory and then its child takes four).  False when the walk fails
 * or finds anything else: the caller then goes the long way, which tells a
 * missing child from a moved directory and attaches a new one. */
static bool pass_known_child(BoxVfs *v, Node *dir, const char *name, struct fuse_entry_param *e) {
  int rootfd = -1;
  char buf[1024];
  guint64 moves = vfs_watch_moves(v);
  g_mutex_lock(&v->lock);
  const char *rel = pass_rel_buf(dir, &rootfd, buf, sizeof buf - NAME_MAX - 2);
  g_mutex_unlock(&v->lock);
  if (!rel) return false;
  char path[sizeof buf];
  if (strcmp(rel, ".") == 0) g_strlcpy(path, name, sizeof path);
  else if ((size_t)snprintf(path, sizeof path, "%s/%s", rel, name) >= sizeof path) return false;
  int fd = openat2_beneath(rootfd, path, O_PATH | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  close(fd);
  if (!ok) return false;
  g_mutex_lock(&v->lock);
  Node *n = vfs_pass_find(v, st.st_dev, st.st_ino);
  ok = n && n->parent == dir && n->name && strcmp(n->name, name) == 0 && fill_entry_st(v, n, e, &st) == 0;
  if (ok) vfs_watch_proven(n, moves);
  g_mutex_unlock(&v->lock);
  return ok;
}

/* n's stamp from the last walk that proved its place (vfs_watch_proven), or 0 */
static guint64 node_stamp(BoxVfs *v, Node *n) {
  g_mutex_lock(&v->lock);
  guint64 settled = n->settled;
  g_mutex_unlock(&v->lock);
  return settled;
}

/* A bound root's node holds the very descriptor every walk starts from: its
 * place cannot change, so its own descriptor always stands for a walk to it
 * (without a watch too).  *stamp: the watch's count now, which a child
 * found through it is proven at (0 without a watch). */
static bool pass_is_root(BoxVfs *v, Node *dir, guint64 *stamp) {
  if (dir->kind != NODE_PASS || !dir->root_path || dir->fd < 0) return false;
  *stamp = vfs_watch_moves(v);
  return true;
}

/* A lookup in a directory no name on whose path has changed since a walk
 * found it (vfs_watch.c), or in a bound root: its own descriptor stands for
 * the walk.  What the fstatat read counts only if the directory is still
 * settled after it (an outside rename in between would have queued its
 * event by then).  True with *err set (0: *e filled) where that held;
 * false: the caller walks. */
static bool pass_settled_child(BoxVfs *v, Node *dir, const char *name, struct fuse_entry_param *e, int *err) {
  guint64 settled;
  bool root = pass_is_root(v, dir, &settled);
  if (!root) {
    if (dir->fd < 0) return false;
    settled = node_stamp(v, dir);
    if (!settled || !vfs_watch_settled(v, settled)) return false;
  }
  struct stat st;
  int r = fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
  if (!root && !vfs_watch_settled(v, settled)) return false;
  *err = r ? r : pass_child_known(v, dir, dir->fd, name, e, &st, settled);
  return true;
}

static void forget_one(BoxVfs *v, fuse_ino_t ino, uint64_t nlookup);

static void reply_entry_or_err(fuse_req_t req, int err, struct fuse_entry_param *e) {
  if (err) {
    R_err(req, err);
  } else if (R_entry(req, e) != 0) {
    /* not received (cancelled, or the caller is gone): drop its reference */
    Job *j = vfs_job_current();
    BoxVfs *v = j ? j->v : V(req);
    g_mutex_lock(&v->lock);
    forget_one(v, e->ino, 1);
    g_mutex_unlock(&v->lock);
  }
}

/* ---- init / lookup / forget ---- */

/* A name the lookup found, for a deciding caller: refused like a missing
 * one where policy lets the command neither read nor write the path (a
 * directory only where no walk to a permitted path goes through it, else
 * the kernel would answer mkdir, O_CREAT or a move into it from the entry
 * it got: EEXIST, EISDIR), and shown with its type only
 * where it may not read it (the kernel keeps a lookup's attributes, and a
 * statx with AT_STATX_DONT_SYNC reads them without a GETATTR, so they must
 * be what a decision would show). */
static int admit_found(BoxVfs *v, const Caller *c, const char *path, bool host_backed,
                       struct fuse_entry_param *e) {
  bool may_read;
  int err = vfs_probe_present(v, c, path, host_backed, S_ISDIR(e->attr.st_mode), &may_read);
  if (err) {
    g_mutex_lock(&v->lock);
    forget_one(v, e->ino, 1);
    g_mutex_unlock(&v->lock);
    return err;
  }
  if (!may_read) {
    struct stat *st = &e->attr;
    struct stat shown = {.st_dev = st->st_dev, .st_ino = st->st_ino, .st_mode = st->st_mode & S_IFMT, .st_nlink = 1};
    /* An inode the kernel already holds (another lookup's) keeps its size
     * and mtime: from a changed size the kernel cuts the page cache and
     * every mapping of the file (another process's read of a page past the
     * new end is SIGBUS), from a changed mtime it drops the cache; and its
     * attributes were in the kernel's copy already. */
    g_mutex_lock(&v->lock);
    Node *n = vfs_node_get(v, e->ino);
    bool held = n && n->nlookup > 1; /* this lookup's reference is counted */
    g_mutex_unlock(&v->lock);
    if (held) {
      shown.st_size = st->st_size;
      shown.st_mtim = st->st_mtim;
    }
    *st = shown;
  }
  return 0;
}

static void op_init(void *userdata, struct fuse_conn_info *conn) {
  (void)userdata;
  if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
  conn->want &= ~(unsigned)FUSE_CAP_CACHE_SYMLINKS;
  conn->want &= ~(unsigned)FUSE_CAP_EXPORT_SUPPORT;
  if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
  /* auto: READDIRPLUS only where the kernel expects lookups to follow */
  if (conn->capable & FUSE_CAP_READDIRPLUS) {
    conn->want |= FUSE_CAP_READDIRPLUS;
    if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO) conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
  }
  conn->time_gran = 1;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  if (!c.placed) {
    R_err(req, EACCES);
    return;
  }
  if (strlen(name) > NAME_MAX) {
    R_err(req, ENAMETOOLONG);
    return;
  }
  int err;
  Node *p = pin(v, parent, &c, &err);
  if (!p) {
    R_err(req, err);
    return;
  }
  struct fuse_entry_param e;
  if (is_pass(p)) {
    __atomic_add_fetch(&v->pass_lookups, 1, __ATOMIC_RELAXED);
    if (!S_ISDIR(p->ftype)) err = ENOTDIR;
    else if (!(err = check_perm(v, p, &c, X_OK)) && !pass_settled_child(v, p, name, &e, &err) &&
             !pass_known_child(v, p, name, &e)) {
      struct stat dst;
      guint64 moves;
      int dfd = pass_reach_st(v, &c, p, O_PATH | O_DIRECTORY, "fs:read", &dst, &moves);
      if (dfd < 0) {
        err = -dfd;
      } else {
        err = pass_child_known(v, p, dfd, name, &e, NULL, moves);
        close(dfd);
      }
    }
    if ((err == ENOENT || err == 0) && c.decides) {
      char *dir = path_of(v, p);
      char *path = dir ? vfs_child_path(dir, name) : NULL;
      err = err ? vfs_probe_absent(v, &c, path, true) : admit_found(v, &c, path, true, &e);
      g_free(path);
      g_free(dir);
    }
    unpin(v, p);
    reply_entry_or_err(req, err, &e);
    return;
  }
  g_mutex_lock(&v->lock);
  Node *n = NULL;
  if (p->kind == NODE_RAMDIR) {
    char want[32];
    snprintf(want, sizeof want, "c%d", c.cmd);
    Command *cm = vfs_command(v, c.cmd);
    Command *area = cm && cm->area != cm->id ? vfs_command(v, cm->area) : NULL;
    if (cm && cm->root && strcmp(name, want) == 0) n = cm->root;
    else if (area && area->root && strcmp(name, area->root->name) == 0) n = area->root;
  } else if (p->special == SPECIAL_COMMANDS) {
    /* the operator's view: a running command boxd published, rendered */
    g_mutex_unlock(&v->lock);
    char *text = vfs_view_command_text(v, name);
    g_mutex_lock(&v->lock);
    Node *old = g_hash_table_lookup(p->children, name);
    if (!text) {
      if (old) vfs_ram_unlink(v, p, name);
      err = ENOENT;
    } else {
      n = old ? old : vfs_ram_new(v, p->cmd, p, name, S_IFREG | 0444, 0, 0, &err);
      if (n) n->special = SPECIAL_CMDINFO;
    }
    g_free(text);
  } else if (!p->children) {
    err = ENOTDIR;
  } else {
    n = g_hash_table_lookup(p->children, name);
  }
  if (!n && !err) err = ENOENT;
  if (n) err = fill_entry(v, n, &e);
  char *probe = NULL;
  bool found = !err && n && n->special == SPECIAL_NONE;
  if ((err == ENOENT || found) && c.decides && p->kind == NODE_RAM && p->special != SPECIAL_BOXDIR) {
    char *dir = vfs_node_path(v, p);
    probe = dir ? vfs_child_path(dir, name) : NULL;
    g_free(dir);
  }
  g_mutex_unlock(&v->lock);
  if (probe) {
    /* The RAM tree is the command's own: its paths are never host-backed
     * for the floor, but a RAM path spelled inside a root is a bind point
     * walked before the bind exists only during setup (no decisions then). */
    bool host = vfs_host_backed(v, probe);
    err = found ? admit_found(v, &c, probe, host, &e) : vfs_probe_absent(v, &c, probe, host);
    g_free(probe);
  }
  unpin(v, p);
  reply_entry_or_err(req, err, &e);
}

static void forget_one(BoxVfs *v, fuse_ino_t ino, uint64_t nlookup) {
  Node *n = vfs_node_get(v, ino);
  if (!n) return;
  if (nlookup > n->nlookup) nlookup = n->nlookup;
  n->nlookup -= nlookup;
  for (uint64_t i = 0; i < nlookup; i++) vfs_node_unref(v, n);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  BoxVfs *v = V(req);
  vfs_closes_defer();
  g_mutex_lock(&v->lock);
  forget_one(v, ino, nlookup);
  g_mutex_unlock(&v->lock);
  vfs_closes_run();
  fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets) {
  BoxVfs *v = V(req);
  /* in slices, so the descriptors a slice frees fit the deferred list */
  for (size_t i = 0; i < count;) {
    vfs_closes_defer();
    g_mutex_lock(&v->lock);
    for (size_t end = MIN(count, i + VFS_CLOSES_SLICE); i < end; i++)
      forget_one(v, forgets[i].ino, forgets[i].nlookup);
    g_mutex_unlock(&v->lock);
    vfs_closes_run();
  }
  fuse_reply_none(req);
}

/* ---- getattr / setattr / access / readlink ---- */

static int deny_identity(BoxVfs *v, const Caller *c, Node *n, const char *action) {
  char *path = path_of(v, n);
  vfs_enforce(v, c, action, path, true, "identity", IDENTITY_WHY);
  g_free(path);
  return EACCES;
}

/* n's attributes, read while n was at its place: 0 or -errno (-ESTALE: it
 * is not there now).  Attributes read after a walk found n belong to an
 * object that may have moved out of every root in between (this thread can
 * be preempted between the two), so they count only if n is still at its
 * place after they were read: no name changed meanwhile (vfs_watch.c), or a
 * second walk finds n there again.  Where no name has changed since a walk
 * found n, no walk is needed at all. */
static int pass_stat_placed(BoxVfs *v, const Caller *c, Node *n, struct stat *st) {
  guint64 settled;
  if (pass_is_root(v, n, &settled)) return fstatat(n->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
  settled = node_stamp(v, n);
  if (settled && n->fd >= 0 && fstatat(n->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 && vfs_watch_settled(v, settled))
    return 0;
  guint64 moves;
  int fd = pass_reach_st(v, c, n, O_PATH, "fs:read", st, &moves);
  if (fd < 0) return fd;
  close(fd); /* st: read by pass_reach_st on this very descriptor */
  if (vfs_watch_settled(v, moves)) return 0;
  struct stat again;
  fd = pass_reach_st(v, c, n, O_PATH, "fs:read", &again, NULL);
  if (fd < 0) return fd;
  close(fd);
  return 0;
}

static void run_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, fi, &c);
  struct stat st;
  if (ino == FUSE_ROOT_ID && !c.placed) {
    g_mutex_lock(&v->lock);
    virt_stat(v->root, &st);
    g_mutex_unlock(&v->lock);
    R_attr(req, &st, 0.0);
    return;
  }
  int err;
  Node *n = pin(v, ino, &c, &err);
  if (!n) {
    R_err(req, err);
    return;
  }
  if (!fi && c.decides && decidable(n)) {
    char *path = path_of(v, n);
    VfsObjId id = {n->rdev_key, n->rino};
    err = vfs_decide_obj(v, &c, "fs:read", path, is_pass(n), "read_metadata", false, is_pass(n) ? &id : NULL);
    g_free(path);
  }
  bool done = false;
  if (!err && !fi && is_pass(n)) {
    int got = pass_stat_placed(v, &c, n, &st);
    g_mutex_lock(&v->lock);
    bool open_now = n->opens > 0;
    g_mutex_unlock(&v->lock);
    if (got == -ESTALE && open_now) {
      /* fstat(2) reaches us as a GETATTR without a handle: an object that is
       * open (here, unlinked or renamed away since) is covered by the decision
       * that opened it; answer from the object itself. */
      err = 0;
    } else if (got < 0) {
      err = -got;
    } else {
      done = true;
    }
  }
  if (!err && !done) err = node_stat(v, n, &st);
  if (!err && n->special == SPECIAL_DECISIONS) {
    struct stat ls;
    if (stat(v->view_log, &ls) == 0) {
      st.st_size = ls.st_size;
      st.st_blocks = ls.st_blocks;
      st.st_mtim = ls.st_mtim;
      st.st_ctim = ls.st_ctim;
    } else {
      st.st_size = 0;
    }
  } else if (!err && n->special == SPECIAL_CMDINFO) {
    Fh *fh = FH(fi);
    if (fh && fh->kind == FH_MYDENIAL) {
      st.st_size = (off_t)fh->text_len;
    } else {
      char *t = vfs_view_command_text(v, n->name);
      st.st_size = t ? (off_t)strlen(t) : 0;
      g_free(t);
    }
  } else if (!err && n->special == SPECIAL_MYDENIAL) {
    Fh *fh = FH(fi);
    if (fh && fh->kind == FH_MYDENIAL) {
      st.st_size = (off_t)fh->text_len;
    } else {
      g_mutex_lock(&v->lock);
      const char *t = vfs_denial_text(v, c.cmd, c.tid);
      st.st_size = t ? (off_t)strlen(t) : 0;
      g_mutex_unlock(&v->lock);
    }
  }
  unpin(v, n);
  if (err) R_err(req, err);
  else R_attr(req, &st, 0.0);
}


/* Is the caller in group g (primary or supplementary)?  The supplementary
 * groups are read from /proc/<tid>/status only when the primary differs. */
static bool caller_in_group(const Caller *c, gid_t g) {
  if (c->gid == g) return true;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)c->tid);
  FILE *f = fopen(path, "re");
  if (!f) return false;
  char line[4096];
  bool found = false;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Groups:", 7) != 0) continue;
    char *p = line + 7, *end;
    for (;;) {
      unsigned long x = strtoul(p, &end, 10);
      if (end == p) break;
      if ((gid_t)x == g) found = true;
      p = end;
    }
    break;
  }
  fclose(f);
  return found;
}

/* chown(2) rules for a caller the kernel did not check (no
 * default_permissions): root may; the owner may keep the owner and change the
 * group to one of its own groups; nobody else may. */
static int chown_allowed(BoxVfs *v, const Caller *c, int vfd, uid_t u, gid_t g) {
  (void)v;
  if (c->uid == 0) return 0;
  struct stat st;
  if (fstat(vfd, &st) < 0) return errno;
  bool owner = st.st_uid == c->uid;
  if (u != (uid_t)-1 && (u != st.st_uid || !owner)) return EPERM;
  if (g != (gid_t)-1 && (!owner || (g != st.st_gid && !caller_in_group(c, g)))) return EPERM;
  return 0;
}

/* Times of a passthrough symlink: through its parent, reached again. */
static int symlink_utimens(BoxVfs *v, Node *n, const struct timespec tv[2]) {
  g_mutex_lock(&v->lock);
  Node *parent = n->parent;
  char *name = g_strdup(n->name);
  if (parent) vfs_node_ref(parent);
  g_mutex_unlock(&v->lock);
  int r = -1;
  errno = ESTALE;
  if (parent && parent->kind == NODE_PASS) {
    Caller none;
    memset(&none, 0, sizeof none);
    int pfd = pass_reach(v, &none, parent, O_PATH | O_DIRECTORY, "fs:write");
    if (pfd >= 0) {
      r = utimensat(pfd, name, tv, AT_SYMLINK_NOFOLLOW);
      int e = errno;
      close(pfd);
      errno = e;
    } else {
      errno = -pfd;
    }
  }
  if (parent) unpin(v, parent);
  g_free(name);
  return r;
}

/* The checks the kernel leaves to us for SETATTR (no default_permissions). */
static int setattr_allowed(const Caller *c, const struct stat *st, int to_set, bool has_fh) {
  if (c->uid == 0) return 0;
  bool owner = st->st_uid == c->uid;
  if ((to_set & FUSE_SET_ATTR_MODE) && !owner) return EPERM;
  if ((to_set & FUSE_SET_ATTR_SIZE) && !has_fh && !perm_ok(st, c, W_OK)) return EACCES;
  bool explicit_time = (to_set & FUSE_SET_ATTR_ATIME && !(to_set & FUSE_SET_ATTR_ATIME_NOW)) ||
                       (to_set & FUSE_SET_ATTR_MTIME && !(to_set & FUSE_SET_ATTR_MTIME_NOW));
  if (explicit_time && !owner) return EPERM;
  if ((to_set & (FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW)) && !owner &&
      !perm_ok(st, c, W_OK))
    return EACCES;
  return 0;
}

static int setattr_pass(BoxVfs *v, const Caller *c, Node *n, int vfd, Fh *fh, struct stat *attr,
                        int to_set) {
  char pp[64];
  proc_path(pp, sizeof pp, vfd);
  int ffd = (fh && fh->kind == FH_PASS_FILE) ? fh->fd : -1;
  struct stat cur;
  if (fstat(vfd, &cur) < 0) return errno;
  int e0 = setattr_allowed(c, &cur, to_set, ffd >= 0);
  if (e0) return e0;
  if (to_set & FUSE_SET_ATTR_MODE) {
    if (S_ISLNK(n->ftype)) return EOPNOTSUPP;
    mode_t m = attr->st_mode & 07777;
    if (c->uid != 0 && (m & S_ISGID) && !caller_in_group(c, cur.st_gid)) m &= ~(mode_t)S_ISGID;
    int r = ffd >= 0 ? fchmod(ffd, m) : chmod(pp, m);
    if (r < 0) return errno;
  }
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    uid_t u = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
    gid_t g = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
    int e = chown_allowed(v, c, vfd, u, g);
    if (e) return e;
    if (fchownat(vfd, "", u, g, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) return errno;
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    int r = ffd >= 0 ? ftruncate(ffd, attr->st_size) : truncate(pp, attr->st_size);
    if (r < 0) return errno;
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec tv[2];
    tv[0].tv_sec = 0;
    tv[1].tv_sec = 0;
    tv[0].tv_nsec = UTIME_OMIT;
    tv[1].tv_nsec = UTIME_OMIT;
    if (to_set & FUSE_SET_ATTR_ATIME_NOW) tv[0].tv_nsec = UTIME_NOW;
    else if (to_set & FUSE_SET_ATTR_ATIME) tv[0] = attr->st_atim;
    if (to_set & FUSE_SET_ATTR_MTIME_NOW) tv[1].tv_nsec = UTIME_NOW;
    else if (to_set & FUSE_SET_ATTR_MTIME) tv[1] = attr->st_mtim;
    int r;
    if (ffd >= 0) r = futimens(ffd, tv);
    else if (S_ISLNK(n->ftype)) r = symlink_utimens(v, n, tv);
    else r = utimensat(AT_FDCWD, pp, tv, 0);
    if (r < 0) return errno;
  }
  return 0;
}

static int setattr_ram(BoxVfs *v, Node *n, const Caller *c, struct stat *attr, int to_set) {
  int err = 0;
  g_mutex_lock(&v->lock);
  bool owner = c->uid == 0 || c->uid == n->uid;
  struct timespec now;
  now_ts(&now);
  if (n->special != SPECIAL_NONE) err = EACCES;
  if (!err && (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) && !owner)
    err = EPERM;
  if (!err && (to_set & FUSE_SET_ATTR_SIZE)) {
    if (!n->data) err = S_ISDIR(n->mode) ? EISDIR : EINVAL;
    else if (attr->st_size < 0) err = EINVAL;
    else err = vfs_ram_resize(v, n, (size_t)attr->st_size);
    if (!err) n->mtime = now;
  }
  if (!err && (to_set & FUSE_SET_ATTR_MODE)) n->mode = (n->mode & S_IFMT) | (attr->st_mode & 07777);
  if (!err && (to_set & FUSE_SET_ATTR_UID)) n->uid = attr->st_uid;
  if (!err && (to_set & FUSE_SET_ATTR_GID)) n->gid = attr->st_gid;
  if (!err && (to_set & FUSE_SET_ATTR_ATIME))
    n->atime = (to_set & FUSE_SET_ATTR_ATIME_NOW) ? now : attr->st_atim;
  if (!err && (to_set & FUSE_SET_ATTR_ATIME_NOW)) n->atime = now;
  if (!err && (to_set & FUSE_SET_ATTR_MTIME))
    n->mtime = (to_set & FUSE_SET_ATTR_MTIME_NOW) ? now : attr->st_mtim;
  if (!err && (to_set & FUSE_SET_ATTR_MTIME_NOW)) n->mtime = now;
  if (!err) n->ctime = now;
  g_mutex_unlock(&v->lock);
  return err;
}

static void run_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, fi, &c);
  int err;
  Node *n = pin(v, ino, &c, &err);
  if (!n) {
    R_err(req, err);
    return;
  }
  if (n->kind != NODE_PASS && n->kind != NODE_RAM) err = EACCES;
  if (!err && decidable(n)) {
    char *path = path_of(v, n);
    if (to_set & FUSE_SET_ATTR_MODE)
      err = vfs_decide(v, &c, "fs:write", path, is_pass(n), "set_permissions", true);
    if (!err && (to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
                           FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                           FUSE_SET_ATTR_MTIME_NOW)))
      err = vfs_decide(v, &c, "fs:write", path, is_pass(n), "write_content", true);
    g_free(path);
  }
  if (!err && is_pass(n)) {
    int vfd = pass_reach(v, &c, n, O_PATH, "fs:write");
    if (vfd < 0) {
      err = -vfd;
    } else {
      err = setattr_pass(v, &c, n, vfd, FH(fi), attr, to_set);
      close(vfd);
    }
  } else if (!err) {
    err = setattr_ram(v, n, &c, attr, to_set);
  }
  struct stat st;
  if (!err) err = node_stat(v, n, &st);
  unpin(v, n);
  if (err) R_err(req, err);
  else R_attr(req, &st, 0.0);
}

static void run_access(fuse_req_t req, fuse_ino_t ino, int mask) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  int err;
  Node *n = pin(v, ino, &c, &err);
  if (!n) {
    R_err(req, err);
    return;
  }
  struct stat st;
  err = node_stat(v, n, &st);
  if (!err && decidable(n)) {
    char *path = path_of(v, n);
    err = vfs_decide(v, &c, "fs:read", path, is_pass(n),
                     S_ISDIR(st.st_mode) ? "change_dir" : "read_metadata", false);
    g_free(path);
  }
  if (!err && is_pass(n)) {
    int vfd = pass_reach(v, &c, n, O_PATH, "fs:read");
    if (vfd < 0) err = -vfd;
    else close(vfd);
  }
  if (!err && mask != F_OK && !perm_ok(&st, &c, mask)) err = EACCES;
  unpin(v, n);
  R_err(req, err);
}

static void run_readlink(fuse_req_t req, fuse_ino_t ino) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  int err;
  Node *n = pin(v, ino, &c, &err);
  if (!n) {
    R_err(req, err);
    return;
  }
  if (decidable(n)) {
    char *path = path_of(v, n);
    err = vfs_decide(v, &c, "fs:read", path, is_pass(n), "read_link", false);
    g_free(path);
  }
  char *target = NULL;
  if (!err && is_pass(n)) {
    int vfd = pass_reach(v, &c, n, O_PATH | O_NOFOLLOW, "fs:read");
    if (vfd < 0) {
      err = -vfd;
    } else {
      char buf[PATH_MAX + 1];
      ssize_t len = readlinkat(vfd, "", buf, sizeof buf - 1);
      if (len < 0) {
        err = errno;
      } else {
        buf[len] = '\0';
        target = g_strdup(buf);
      }
      close(vfd);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    if (n->target) target = g_strdup(n->target);
    else err = EINVAL;
    g_mutex_unlock(&v->lock);
  }
  unpin(v, n);
  if (err) R_err(req, err);
  else R_readlink(req, target);
  g_free(target);
}

/* ---- creating names ---- */

typedef struct {
  Node *dir;
  char *dirpath;  /* worker-view path of the directory */
  char *path;     /* worker-view path of the new name */
  bool pass;
  int dfd;        /* pass: the directory reached again from its root, or its node's own */
  bool dfd_node;  /* dfd is dir->fd (settled: no name on its path changed), not ours to close */
  guint64 moves;  /* pass: that walk's stamp (vfs_watch_proven), or 0 */
} NewName;

static void new_name_clear(BoxVfs *v, NewName *nn) {
  if (nn->dfd >= 0 && !nn->dfd_node) close(nn->dfd);
  nn->dfd = -1;
  unpin(v, nn->dir);
  g_free(nn->dirpath);
  g_free(nn->path);
}

/* The identity of what name in nn's directory is now, for the reach floor
 * (*buf; ino 0 where nothing is there), read in the directory the op acts
 * in rather than by a walk of the host path from /; NULL outside passthrough. */
static const VfsObjId *name_obj(const NewName *nn, const char *name, VfsObjId *buf) {
  if (!nn->pass) return NULL;
  struct stat st;
  if (fstatat(nn->dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) *buf = (VfsObjId){st.st_dev, st.st_ino};
  else *buf = (VfsObjId){0, 0};
  return buf;
}

static const VfsObjId *nameid_obj(bool pass, const NameId *id, VfsObjId *buf) {
  if (!pass) return NULL;
  *buf = id->exists ? (VfsObjId){id->dev, id->ino} : (VfsObjId){0, 0};
  return buf;
}

/* Pins a directory in which the caller may create or remove name. */
static int new_name(BoxVfs *v, const Caller *c, fuse_ino_t parent, const char *name, NewName *nn) {
  memset(nn, 0, sizeof *nn);
  nn->dfd = -1;
  if (!c->placed) return EACCES;
  if (strlen(name) > NAME_MAX) return ENAMETOOLONG;
  int err;
  Node *d = pin(v, parent, c, &err);
  if (!d) return err;
  nn->dir = d;
  g_mutex_lock(&v->lock);
  if (d->kind == NODE_PASS) {
    if (!S_ISDIR(d->ftype)) err = ENOTDIR;
  } else if (d->kind == NODE_RAM) {
    if (!S_ISDIR(d->mode)) err = ENOTDIR;
    else if (d->special == SPECIAL_BOXDIR) err = EACCES;
    else if (d->special == SPECIAL_CMDROOT && strcmp(name, ".box") == 0) err = EACCES;
    else if (d->nlink == 0) err = ENOENT;
  } else {
    err = EACCES; /* the virtual directories are fixed */
  }
  if (!err) {
    nn->pass = d->kind == NODE_PASS;
    nn->dirpath = vfs_node_path(v, d);
    if (!nn->dirpath) err = EACCES;
    else nn->path = vfs_child_path(nn->dirpath, name);
  }
  g_mutex_unlock(&v->lock);
  if (!err) err = check_perm(v, d, c, W_OK | X_OK);
  if (!err && nn->pass) {
    /* In a bound root, or where no name on the directory's path has changed
     * since a walk found it (vfs_watch.c), its own descriptor is the one a
     * walk would open: a create or unlink in it skips the walk (openat2,
     * fstat, close). */
    guint64 settled;
    if (pass_is_root(v, d, &settled) ||
        (d->fd >= 0 && (settled = node_stamp(v, d)) && vfs_watch_settled(v, settled))) {
      nn->dfd = d->fd;
      nn->dfd_node = true;
      nn->moves = settled;
      return 0;
    }
    struct stat st;
    int fd = pass_reach_st(v, c, d, O_PATH | O_DIRECTORY, "fs:write", &st, &nn->moves);
    if (fd < 0) err = -fd;
    else nn->dfd = fd;
  }
  return err;
}

/* The daemon never changes its euid: read once, not on every create. */
static bool daemon_root(void) {
  static int root = -1;
  int r = __atomic_load_n(&root, __ATOMIC_RELAXED);
  if (r < 0) {
    r = geteuid() == 0;
    __atomic_store_n(&root, r, __ATOMIC_RELAXED);
  }
  return r;
}

static void chown_new(const Caller *c, int dirfd, const char *name) {
  if (daemon_root() && (c->uid != 0 || c->gid != 0))
    (void)!fchownat(dirfd, name, c->uid, c->gid, AT_SYMLINK_NOFOLLOW); /* best effort */
}

/* lock held: a new RAM node in dir, failing if the name exists */
static Node *ram_create(BoxVfs *v, const Caller *c, Node *dir, const char *name, mode_t mode,
                        int *err) {
  if (g_hash_table_contains(dir->children, name)) {
    *err = EEXIST;
    return NULL;
  }
  return vfs_ram_new(v, dir->cmd, dir, name, mode, c->uid, c->gid, err);
}

static void run_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  NewName nn;
  int err = new_name(v, &c, parent, name, &nn);
  VfsObjId at;
  if (!err) err = vfs_decide_obj(v, &c, "fs:write", nn.path, nn.pass, "create_dir", true, name_obj(&nn, name, &at));
  struct fuse_entry_param e;
  if (!err && nn.pass) {
    if (mkdirat(nn.dfd, name, mode & 07777) < 0) err = errno;
    else {
      chown_new(&c, nn.dfd, name);
      err = pass_child_known(v, nn.dir, nn.dfd, name, &e, NULL, nn.moves);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    Node *n = ram_create(v, &c, nn.dir, name, S_IFDIR | (mode & 07777), &err);
    if (n) err = fill_entry(v, n, &e);
    g_mutex_unlock(&v->lock);
  }
  new_name_clear(v, &nn);
  reply_entry_or_err(req, err, &e);
}

static void run_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev) {
  BoxVfs *v = V(req);
  (void)rdev;
  /* Regular files, FIFOs and sockets; never a device node. */
  mode_t type = (mode & S_IFMT) ? (mode & S_IFMT) : S_IFREG;
  if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK) {
    R_err(req, EPERM);
    return;
  }
  Caller c;
  vfs_place(v, req, NULL, &c);
  NewName nn;
  int err = new_name(v, &c, parent, name, &nn);
  VfsObjId at;
  if (!err)
    err = vfs_decide_obj(v, &c, "fs:write", nn.path, nn.pass, "write_content", true, name_obj(&nn, name, &at));
  struct fuse_entry_param e;
  if (!err && nn.pass) {
    if (mknodat(nn.dfd, name, type | (mode & 07777), 0) < 0) err = errno;
    else {
      chown_new(&c, nn.dfd, name);
      err = pass_child_known(v, nn.dir, nn.dfd, name, &e, NULL, nn.moves);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    Node *n = ram_create(v, &c, nn.dir, name, type | (mode & 07777), &err);
    if (n) err = fill_entry(v, n, &e);
    g_mutex_unlock(&v->lock);
  }
  new_name_clear(v, &nn);
  reply_entry_or_err(req, err, &e);
}

/* Closes "." and ".." lexically in an absolute path. */
static char *normalize(const char *abs) {
  gchar **parts = g_strsplit(abs, "/", -1);
  GPtrArray *out = g_ptr_array_new();
  for (guint i = 0; parts[i]; i++) {
    const char *p = parts[i];
    if (!*p || strcmp(p, ".") == 0) continue;
    if (strcmp(p, "..") == 0) {
      if (out->len) g_ptr_array_remove_index(out, out->len - 1);
      continue;
    }
    g_ptr_array_add(out, (gpointer)p);
  }
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < out->len; i++) {
    g_string_append_c(s, '/');
    g_string_append(s, g_ptr_array_index(out, i));
  }
  if (!s->len) g_string_append_c(s, '/');
  g_ptr_array_unref(out);
  g_strfreev(parts);
  return g_string_free(s, FALSE);
}

static void run_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  NewName nn;
  int err = new_name(v, &c, parent, name, &nn);
  if (!err && c.decides) {
    char *joined = link[0] == '/' ? g_strdup(link) : vfs_child_path(nn.dirpath, link);
    char *target = normalize(joined);
    bool tb = vfs_host_backed(v, target);
    err = vfs_decide(v, &c, "fs:write", target, tb, "symlink", true);
    if (!err) err = vfs_decide(v, &c, "fs:read", target, tb, "read_content", false);
    if (!err) err = vfs_decide(v, &c, "fs:write", nn.path, nn.pass, "symlink", true);
    g_free(target);
    g_free(joined);
  }
  struct fuse_entry_param e;
  if (!err && nn.pass) {
    if (symlinkat(link, nn.dfd, name) < 0) err = errno;
    else {
      chown_new(&c, nn.dfd, name);
      err = pass_child_known(v, nn.dir, nn.dfd, name, &e, NULL, nn.moves);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    Node *n = ram_create(v, &c, nn.dir, name, S_IFLNK | 0777, &err);
    if (n) {
      n->target = g_strdup(link);
      err = fill_entry(v, n, &e);
    }
    g_mutex_unlock(&v->lock);
  }
  new_name_clear(v, &nn);
  reply_entry_or_err(req, err, &e);
}

static void run_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  NewName nn;
  int err = new_name(v, &c, newparent, newname, &nn);
  Node *n = err ? NULL : pin(v, ino, &c, &err);
  if (!err && (n->kind != NODE_PASS && n->kind != NODE_RAM)) err = EPERM;
  if (!err && (n->special != SPECIAL_NONE || n->skeleton)) err = EPERM;
  if (!err && is_pass(n) != nn.pass) err = EXDEV;
  if (!err && c.decides) {
    char *src = path_of(v, n);
    err = vfs_decide(v, &c, "fs:read", src, is_pass(n), "read_content", false);
    if (!err) err = vfs_decide(v, &c, "fs:write", nn.path, nn.pass, "write_content", true);
    g_free(src);
  }
  struct fuse_entry_param e;
  if (!err && nn.pass) {
    if (S_ISDIR(n->ftype)) err = EPERM;
    int sfd = err ? -1 : pass_reach(v, &c, n, O_PATH, "fs:write");
    if (!err && sfd < 0) err = -sfd;
    else if (!err && linkat(sfd, "", nn.dfd, newname, AT_EMPTY_PATH) < 0) err = errno;
    if (sfd >= 0) close(sfd);
    if (!err) {
      g_mutex_lock(&v->lock);
      vfs_node_set_parent(v, n, nn.dir, newname); /* follow the newest name */
      err = fill_entry(v, n, &e);
      g_mutex_unlock(&v->lock);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    if (S_ISDIR(n->mode)) err = EPERM;
    else if (n->cmd != nn.dir->cmd) err = EXDEV;
    else if (g_hash_table_contains(nn.dir->children, newname)) err = EEXIST;
    else {
      vfs_node_set_parent(v, n, nn.dir, newname);
      g_hash_table_insert(nn.dir->children, g_strdup(newname), n);
      vfs_node_ref(n);
      n->nlink++;
      now_ts(&n->ctime);
      nn.dir->mtime = nn.dir->ctime = n->ctime;
      err = fill_entry(v, n, &e);
    }
    g_mutex_unlock(&v->lock);
  }
  unpin(v, n);
  new_name_clear(v, &nn);
  reply_entry_or_err(req, err, &e);
}

/* ---- removing and renaming ---- */

/* After unlinking the name a hard-linked file's node was recorded under, move
 * the node to another of its names in the same directory (if any), so its
 * reported path stays a real one. */
static void pass_follow_other_link(BoxVfs *v, Node *dir, const char *name, const NameId *gone) {
  g_mutex_lock(&v->lock);
  Node *n = vfs_pass_find(v, gone->dev, gone->ino);
  bool stale = n && n->parent == dir && strcmp(n->name, name) == 0;
  if (stale) vfs_node_ref(n);
  g_mutex_unlock(&v->lock);
  if (!stale) return;
  struct stat st;
  char *other = NULL;
  int nfd = node_fd_get(v, n, false), dfd = node_fd_get(v, dir, false);
  if (nfd >= 0 && dfd >= 0 && fstat(nfd, &st) == 0 && st.st_nlink > 0) {
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0) close(fd);
    struct dirent *de;
    while (d && !other && (de = readdir(d)) != NULL) {
      if (de->d_ino != gone->ino) continue;
      NameId id;
      name_id(dfd, de->d_name, &id);
      if (id.exists && id.dev == gone->dev && id.ino == gone->ino) other = g_strdup(de->d_name);
    }
    if (d) closedir(d);
  }
  node_fd_put(n, nfd);
  node_fd_put(dir, dfd);
  g_mutex_lock(&v->lock);
  if (other && n->parent == dir && strcmp(n->name, name) == 0) vfs_node_set_parent(v, n, dir, other);
  vfs_node_unref(v, n);
  g_mutex_unlock(&v->lock);
  g_free(other);
}

/* Before a name that is not a directory is removed: no other node's path
 * runs through it, so only its own node (if any) loses its proven place;
 * every other node stays settled (vfs_watch_moved would unsettle them all,
 * and a directory being emptied would be walked to again for each name). */
static void unsettle_name(BoxVfs *v, const NameId *id) {
  if (!id->exists) return;
  g_mutex_lock(&v->lock);
  Node *n = vfs_pass_find(v, id->dev, id->ino);
  if (n) n->settled = 0;
  g_mutex_unlock(&v->lock);
}

static void remove_common(fuse_req_t req, fuse_ino_t parent, const char *name, bool dir) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  NewName nn;
  int err = new_name(v, &c, parent, name, &nn);
  NameId before = {0};
  if (!err && nn.pass) name_id(nn.dfd, name, &before);
  VfsObjId gone = {before.dev, before.ino};
  if (!err)
    err = vfs_decide_obj(v, &c, "fs:delete", nn.path, nn.pass, dir ? "remove_dir" : "remove_file", true,
                         nn.pass && before.exists ? &gone : NULL);
  if (!err && nn.pass) {
    NameId now;
    name_id(nn.dfd, name, &now);
    if (!name_same(&before, &now)) {
      vfs_enforce(v, &c, "fs:delete", nn.path, true, "identity", IDENTITY_WHY);
      err = EACCES;
    } else if (dir ? (vfs_watch_moved(v), unlinkat(nn.dfd, name, AT_REMOVEDIR)) < 0
                   : (unsettle_name(v, &before), unlinkat(nn.dfd, name, 0)) < 0) {
      err = errno;
    } else if (!dir && before.exists && before.nlink > 1) {
      pass_follow_other_link(v, nn.dir, name, &before);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    Node *n = g_hash_table_lookup(nn.dir->children, name);
    if (!n) err = ENOENT;
    else if (dir && !S_ISDIR(n->mode)) err = ENOTDIR;
    else if (!dir && S_ISDIR(n->mode)) err = EISDIR;
    else if (dir && g_hash_table_size(n->children) > 0) err = ENOTEMPTY;
    else if (n->special != SPECIAL_NONE) err = EACCES;
    else if (n->skeleton) err = EBUSY; /* a slot's layout outlives the command */
    else vfs_ram_unlink(v, nn.dir, name);
    g_mutex_unlock(&v->lock);
  }
  new_name_clear(v, &nn);
  R_err(req, err);
}

static void run_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) {
  remove_common(req, parent, name, false);
}


static void run_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name) {
  remove_common(req, parent, name, true);
}

/* lock held: is a an ancestor of (or equal to) b? */
static bool ancestor_of(Node *a, Node *b) {
  for (Node *p = b; p; p = p->parent)
    if (p == a) return true;
  return false;
}

static void run_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags) {
  BoxVfs *v = V(req);
  if ((flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)) ||
      (flags & RENAME_NOREPLACE && flags & RENAME_EXCHANGE)) {
    R_err(req, EINVAL);
    return;
  }
  Caller c;
  vfs_place(v, req, NULL, &c);
  NewName src, dst;
  memset(&dst, 0, sizeof dst);
  dst.dfd = -1;
  int err = new_name(v, &c, parent, name, &src);
  if (!err) err = new_name(v, &c, newparent, newname, &dst);
  if (!err && src.pass != dst.pass) err = EXDEV;
  NameId sid, did;
  bool dst_exists = false, dst_dir = false;
  if (!err) {
    if (src.pass) {
      name_id(src.dfd, name, &sid);
      name_id(dst.dfd, newname, &did);
      dst_exists = did.exists;
      dst_dir = S_ISDIR(did.mode);
    } else {
      g_mutex_lock(&v->lock);
      Node *dn = g_hash_table_lookup(dst.dir->children, newname);
      dst_exists = dn != NULL;
      dst_dir = dn && S_ISDIR(dn->mode);
      g_mutex_unlock(&v->lock);
    }
  }
  VfsObjId so, dob;
  const VfsObjId *sobj = err ? NULL : nameid_obj(src.pass, &sid, &so);
  const VfsObjId *dobj = err ? NULL : nameid_obj(src.pass, &did, &dob);
  if (!err) err = vfs_decide_obj(v, &c, "fs:move", src.path, src.pass, "rename", true, sobj);
  if (!err) err = vfs_decide_obj(v, &c, "fs:read", src.path, src.pass, "read_content", false, sobj);
  bool exchange = (flags & RENAME_EXCHANGE) != 0;
  if (!err && dst_exists && !exchange)
    err = vfs_decide_obj(v, &c, "fs:delete", dst.path, dst.pass, dst_dir ? "remove_dir" : "remove_file",
                         true, dobj);
  if (!err) err = vfs_decide_obj(v, &c, "fs:move", dst.path, dst.pass, "rename", true, dobj);
  /* RENAME_EXCHANGE moves the destination too: its legs mirror the source's */
  if (!err && exchange && dst_exists)
    err = vfs_decide_obj(v, &c, "fs:read", dst.path, dst.pass, "read_content", false, dobj);
  if (!err && src.pass) {
    NameId s2, d2;
    name_id(src.dfd, name, &s2);
    name_id(dst.dfd, newname, &d2);
    if (!name_same(&sid, &s2) || !name_same(&did, &d2)) {
      vfs_enforce(v, &c, "fs:move", src.path, true, "identity", IDENTITY_WHY);
      err = EACCES;
    } else if (vfs_watch_moved(v), renameat2(src.dfd, name, dst.dfd, newname, flags) < 0) {
      err = errno;
    } else if (sid.exists) {
      g_mutex_lock(&v->lock);
      Node *moved = vfs_pass_find(v, sid.dev, sid.ino);
      Node *back = exchange && did.exists ? vfs_pass_find(v, did.dev, did.ino) : NULL;
      if (moved && !moved->root_path && !ancestor_of(moved, dst.dir))
        vfs_node_set_parent(v, moved, dst.dir, newname);
      if (back && !back->root_path && !ancestor_of(back, src.dir))
        vfs_node_set_parent(v, back, src.dir, name);
      g_mutex_unlock(&v->lock);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    Node *sn = g_hash_table_lookup(src.dir->children, name);
    Node *dn = g_hash_table_lookup(dst.dir->children, newname);
    if (!sn) err = ENOENT;
    else if (sn->special != SPECIAL_NONE || (dn && dn->special != SPECIAL_NONE)) err = EACCES;
    else if (sn == dn) err = 0; /* same object: nothing to do */
    else if (sn->skeleton || (dn && dn->skeleton)) err = EBUSY;
    else if (exchange) {
      if (!dn) err = ENOENT;
      else if ((S_ISDIR(sn->mode) && ancestor_of(sn, dst.dir)) ||
               (S_ISDIR(dn->mode) && ancestor_of(dn, src.dir)))
        err = EINVAL;
      else {
        g_hash_table_insert(src.dir->children, g_strdup(name), dn);
        g_hash_table_insert(dst.dir->children, g_strdup(newname), sn);
        if (S_ISDIR(sn->mode)) src.dir->nlink--, dst.dir->nlink++;
        if (S_ISDIR(dn->mode)) dst.dir->nlink--, src.dir->nlink++;
        vfs_node_set_parent(v, sn, dst.dir, newname);
        vfs_node_set_parent(v, dn, src.dir, name);
        now_ts(&sn->ctime);
        dn->ctime = sn->ctime;
        src.dir->mtime = src.dir->ctime = dst.dir->mtime = dst.dir->ctime = sn->ctime;
      }
    }
    else if (dn && (flags & RENAME_NOREPLACE)) err = EEXIST;
    else if (S_ISDIR(sn->mode) && ancestor_of(sn, dst.dir)) err = EINVAL;
    else if (dn && S_ISDIR(dn->mode) && !S_ISDIR(sn->mode)) err = EISDIR;
    else if (dn && !S_ISDIR(dn->mode) && S_ISDIR(sn->mode)) err = ENOTDIR;
    else if (dn && S_ISDIR(dn->mode) && g_hash_table_size(dn->children) > 0) err = ENOTEMPTY;
    else {
      if (dn) vfs_ram_unlink(v, dst.dir, newname);
      vfs_node_ref(sn); /* keep it through the move */
      nlink_t keep = sn->nlink;
      vfs_ram_unlink(v, src.dir, name);
      sn->nlink = keep;
      if (S_ISDIR(sn->mode)) dst.dir->nlink++;
      vfs_node_set_parent(v, sn, dst.dir, newname);
      g_hash_table_insert(dst.dir->children, g_strdup(newname), sn);
      /* the pin becomes the new link */
      now_ts(&sn->ctime);
      dst.dir->mtime = dst.dir->ctime = sn->ctime;
    }
    g_mutex_unlock(&v->lock);
  }
  new_name_clear(v, &src);
  new_name_clear(v, &dst);
  R_err(req, err);
}

/* ---- files ---- */

static Fh *fh_new(FhKind kind, int cmd, Node *n) {
  Fh *fh = vfs_zalloc(sizeof *fh);
  __atomic_add_fetch(&n->opens, 1, __ATOMIC_SEQ_CST);
  fh->kind = kind;
  fh->cmd = cmd;
  fh->node = n; /* takes over the caller's pin */
  fh->fd = -1;
  fh->backing = -1;
  return fh;
}

static void fh_free(BoxVfs *v, Fh *fh);

/* A node without a descriptor of its own lists its open files: an object
 * unlinked or renamed away while open is still read through them. */
static Fh *fh_pass_file(BoxVfs *v, int cmd, Node *n, int fd) {
  Fh *fh = fh_new(FH_PASS_FILE, cmd, n);
  fh->fd = fd;
  if (n->fd < 0) {
    g_mutex_lock(&v->lock);
    n->open_files = g_slist_prepend(n->open_files, fh);
    g_mutex_unlock(&v->lock);
  }
  return fh;
}

static bool open_reads_only(int flags) {
  return (flags & O_ACCMODE) == O_RDONLY && !(flags & O_TRUNC);
}


static void run_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  int err;
  Node *n = pin(v, ino, &c, &err);
  if (!n) {
    R_err(req, err);
    return;
  }
  bool ro = open_reads_only(fi->flags);
  if (n->special == SPECIAL_DECISIONS) {
    /* the decision log, read live: direct_io so that every read (tail -f)
     * sees what boxd appended since */
    int fd = ro ? open(v->view_log, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) {
      unpin(v, n);
      R_err(req, ro ? errno : EACCES);
      return;
    }
    Fh *fh = fh_new(FH_VIEW_LOG, c.cmd, n);
    fh->fd = fd;
    fi->fh = (uint64_t)(uintptr_t)fh;
    fi->direct_io = 1;
    fi->keep_cache = 0;
    if (R_open(req, fi) != 0) fh_free(v, fh);
    return;
  }
  if (n->special == SPECIAL_CMDINFO) {
    char *t = ro ? vfs_view_command_text(v, n->name) : NULL;
    if (!t) {
      unpin(v, n);
      R_err(req, ro ? ENOENT : EACCES);
      return;
    }
    Fh *fh = fh_new(FH_MYDENIAL, c.cmd, n);
    fh->text = t;
    fh->text_len = strlen(t);
    fi->fh = (uint64_t)(uintptr_t)fh;
    fi->direct_io = 1;
    fi->keep_cache = 0;
    if (R_open(req, fi) != 0) fh_free(v, fh);
    return;
  }
  if (n->special == SPECIAL_MYDENIAL) {
    if (!ro) err = EACCES;
    Fh *fh = NULL;
    if (!err) {
      fh = fh_new(FH_MYDENIAL, c.cmd, n);
      g_mutex_lock(&v->lock);
      const char *t = vfs_denial_text(v, c.cmd, c.tid);
      fh->text = g_strdup(t ? t : "");
      fh->text_len = strlen(fh->text);
      g_mutex_unlock(&v->lock);
      fi->fh = (uint64_t)(uintptr_t)fh;
      fi->direct_io = 1;
      fi->keep_cache = 0;
      if (R_open(req, fi) != 0) {
        g_free(fh->text);
        g_free(fh);
        unpin(v, n);
      }
      return;
    }
    unpin(v, n);
    R_err(req, err);
    return;
  }
  if (n->kind != NODE_PASS && n->kind != NODE_RAM) err = EISDIR;
  if (!err && decidable(n)) {
    char *path = path_of(v, n);
    VfsObjId id = {n->rdev_key, n->rino};
    const VfsObjId *obj = is_pass(n) ? &id : NULL;
    err = ro ? vfs_decide_obj(v, &c, "fs:read", path, is_pass(n), "read_content", false, obj)
             : vfs_decide_obj(v, &c, "fs:write", path, is_pass(n), "write_content", true, obj);
    g_free(path);
  }
  if (!err) {
    int mask = (fi->flags & O_ACCMODE) == O_RDONLY ? R_OK
               : (fi->flags & O_ACCMODE) == O_WRONLY ? W_OK : (R_OK | W_OK);
    if (fi->flags & O_TRUNC) mask |= W_OK;
    err = check_perm(v, n, &c, mask);
  }
  Fh *fh = NULL;
  if (!err && is_pass(n)) {
    /* Reached again from the root, opened without O_TRUNC: truncate only
     * once the object is known to be the one judged. */
    int fd = pass_reach(v, &c, n, fi->flags & ~(O_TRUNC | O_NOFOLLOW),
                        ro ? "fs:read" : "fs:write");
    if (fd < 0) {
      err = -fd;
    } else if ((fi->flags & O_TRUNC) && ftruncate(fd, 0) < 0) {
      err = errno;
      close(fd);
    } else {
      fh = fh_pass_file(v, c.cmd, n, fd);
      fh->backing = S_ISREG(n->ftype) ? vfs_backing_open(v, n, fd) : -1;
      /* the kernel refuses a passthrough open with any cache flag */
      fi->keep_cache = fh->backing < 0;
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    if (S_ISDIR(n->mode)) err = EISDIR;
    else if (!n->data) err = EACCES;
    else if (n->special != SPECIAL_NONE && !ro) err = EACCES;
    else {
      if (fi->flags & O_TRUNC) {
        vfs_ram_resize(v, n, 0);
        now_ts(&n->mtime);
        n->ctime = n->mtime;
      }
      fh = fh_new(FH_RAM_FILE, c.cmd, n);
    }
    g_mutex_unlock(&v->lock);
  }
  if (err) {
    unpin(v, n);
    R_err(req, err);
    return;
  }
  fh->flags = fi->flags;
  fi->fh = (uint64_t)(uintptr_t)fh;
  vfs_backing_for_reply(fh->backing);
  int sent = R_open(req, fi);
  vfs_backing_for_reply(-1);
  if (sent != 0) {
    vfs_backing_close(v, n, fh->backing);
    if (fh->fd >= 0) close(fh->fd);
    g_free(fh);
    unpin(v, n);
  }
}

static void run_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  NewName nn;
  int err = new_name(v, &c, parent, name, &nn);
  /* The kernel sends CREATE for a name its lookup found missing: the floor
   * is asked of no object, and the file is made with O_EXCL, so that it is
   * that new file or nothing.  A name made since (by someone else) is asked
   * of again before it is opened. */
  VfsObjId none = {0, 0};
  if (!err)
    err = vfs_decide_obj(v, &c, "fs:write", nn.path, nn.pass, "write_content", true, nn.pass ? &none : NULL);
  struct fuse_entry_param e;
  Fh *fh = NULL;
  if (!err && nn.pass) {
    int flags = (fi->flags & ~O_NOFOLLOW) | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(nn.dfd, name, flags | O_EXCL, mode & 07777);
    if (fd < 0 && errno == EEXIST && !(fi->flags & O_EXCL)) {
      VfsObjId at;
      const char *why = vfs_floor_reason(v, nn.path, name_obj(&nn, name, &at));
      if (why) {
        vfs_enforce(v, &c, "fs:write", nn.path, true, "reach-floor", why);
        errno = EACCES;
      } else {
        fd = openat(nn.dfd, name, flags, mode & 07777);
      }
    }
    if (fd < 0) {
      err = errno;
    } else {
      struct stat fst;
      bool have = fstat(fd, &fst) == 0;
      bool chowned = daemon_root() && (c.uid != 0 || c.gid != 0);
      chown_new(&c, nn.dfd, name);
      /* the node is found by what the open made (no fstatat of the name; a
       * new node's own O_PATH open is still compared below); after a chown
       * the attributes are read again */
      err = pass_child_known(v, nn.dir, nn.dfd, name, &e, have && !chowned ? &fst : NULL, nn.moves);
      if (!err && (e.attr.st_dev != fst.st_dev || e.attr.st_ino != fst.st_ino)) {
        /* the name moved between the open and the resolution */
        g_mutex_lock(&v->lock);
        forget_one(v, e.ino, 1);
        g_mutex_unlock(&v->lock);
        vfs_enforce(v, &c, "fs:write", nn.path, true, "identity", IDENTITY_WHY);
        err = EACCES;
      }
      if (err) {
        close(fd);
      } else {
        g_mutex_lock(&v->lock);
        Node *n = vfs_node_get(v, e.ino);
        vfs_node_ref(n);
        g_mutex_unlock(&v->lock);
        fh = fh_pass_file(v, c.cmd, n, fd);
        fh->backing = vfs_backing_open(v, n, fd);
        fi->keep_cache = fh->backing < 0;
      }
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    Node *n = g_hash_table_lookup(nn.dir->children, name);
    if (n) {
      if (fi->flags & O_EXCL) err = EEXIST;
      else if (S_ISDIR(n->mode)) err = EISDIR;
      else if (!n->data) err = EACCES;
      else if (fi->flags & O_TRUNC) vfs_ram_resize(v, n, 0);
    } else {
      n = vfs_ram_new(v, nn.dir->cmd, nn.dir, name, S_IFREG | (mode & 07777), c.uid, c.gid, &err);
    }
    if (!err) err = fill_entry(v, n, &e);
    if (!err) {
      vfs_node_ref(n);
      fh = fh_new(FH_RAM_FILE, c.cmd, n);
    }
    g_mutex_unlock(&v->lock);
  }
  new_name_clear(v, &nn);
  if (err) {
    R_err(req, err);
    return;
  }
  fh->flags = fi->flags;
  fi->fh = (uint64_t)(uintptr_t)fh;
  vfs_backing_for_reply(fh->backing);
  int sent = R_create(req, &e, fi);
  vfs_backing_for_reply(-1);
  if (sent != 0) {
    Node *n = fh->node;
    vfs_backing_close(v, n, fh->backing);
    if (fh->fd >= 0) close(fh->fd);
    g_free(fh);
    g_mutex_lock(&v->lock);
    forget_one(v, e.ino, 1);
    vfs_node_unref(v, n);
    g_mutex_unlock(&v->lock);
  }
}

/* A file handle's op: placed by the caller (or by the handle for pid 0), and a
 * RAM handle only for its own command.  An op on a passthrough file handle
 * (read, write, fstat, fsync) is covered by the decision that opened it
 * and acts on that descriptor only: it needs no placement (which would cost
 * a readlink of the caller's namespace per READ). */
static Fh *fh_check(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, int *err) {
  Fh *pfh = FH(fi);
  if (pfh && pfh->kind == FH_PASS_FILE && pfh->fd >= 0) {
    *err = 0;
    return pfh;
  }
  Caller c;
  vfs_place(v, req, fi, &c);
  Fh *fh = FH(fi);
  *err = 0;
  if (!fh || !c.placed) *err = EACCES;
  else if (fh->node && fh->node->kind == NODE_RAM && !vfs_ram_reachable(&c, fh->node)) *err = EACCES;
  return *err ? NULL : fh;
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  (void)ino;
  int err;
  Fh *fh = fh_check(v, req, fi, &err);
  if (!fh) {
    R_err(req, err);
    return;
  }
  if (fh->kind == FH_PASS_FILE) {
    struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
    buf.buf[0].fd = fh->fd;
    buf.buf[0].pos = off;
    fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
    return;
  }
  if (fh->kind == FH_VIEW_LOG) {
    char *b = g_malloc(size ? size : 1);
    ssize_t got = pread(fh->fd, b, size, off);
    if (got < 0) R_err(req, errno);
    else fuse_reply_buf(req, b, (size_t)got);
    g_free(b);
    return;
  }
  if (fh->kind == FH_MYDENIAL) {
    /* A copy: once the reply is written the kernel may RELEASE the handle. */
    size_t got = (size_t)off >= fh->text_len ? 0 : MIN(size, fh->text_len - (size_t)off);
    char *copy = got ? g_memdup2(fh->text + off, got) : NULL;
    fuse_reply_buf(req, copy, got);
    g_free(copy);
    return;
  }
  if (fh->kind != FH_RAM_FILE) {
    R_err(req, EISDIR);
    return;
  }
  g_mutex_lock(&v->lock);
  Node *n = fh->node;
  size_t len = n->data->len;
  char *copy = NULL;
  size_t got = 0;
  if (off >= 0 && (size_t)off < len) {
    got = MIN(size, len - (size_t)off);
    copy = g_memdup2(n->data->data + off, got);
  }
  now_ts(&n->atime);
  g_mutex_unlock(&v->lock);
  fuse_reply_buf(req, copy, got);
  g_free(copy);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  (void)ino;
  int err;
  Fh *fh = fh_check(v, req, fi, &err);
  if (!fh) {
    R_err(req, err);
    return;
  }
  if (fh->kind == FH_PASS_FILE) {
    ssize_t n = pwrite(fh->fd, buf, size, off);
    if (n < 0) R_err(req, errno);
    else fuse_reply_write(req, (size_t)n);
    return;
  }
  if (fh->kind != FH_RAM_FILE) {
    R_err(req, EACCES);
    return;
  }
  g_mutex_lock(&v->lock);
  Node *n = fh->node;
  if (fh->flags & O_APPEND) off = (off_t)n->data->len;
  if (off < 0) err = EINVAL;
  else {
    if ((size_t)off + size > n->data->len) err = vfs_ram_resize(v, n, (size_t)off + size);
    if (!err) {
      memcpy(n->data->data + off, buf, size);
      now_ts(&n->mtime);
      n->ctime = n->mtime;
    }
  }
  g_mutex_unlock(&v->lock);
  if (err) R_err(req, err);
  else fuse_reply_write(req, size);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  (void)fi;
  R_err(req, ENOSYS);
}

static void fh_free(BoxVfs *v, Fh *fh) {
  vfs_backing_close(v, fh->node, fh->backing);
  if (fh->kind == FH_PASS_FILE && fh->node->fd < 0) {
    g_mutex_lock(&v->lock);
    fh->node->open_files = g_slist_remove(fh->node->open_files, fh);
    g_mutex_unlock(&v->lock);
  }
  if (fh->fd >= 0) close(fh->fd);
  if (fh->dir) closedir(fh->dir);
  if (fh->entries) {
    for (guint i = 0; i < fh->entries->len; i++) g_free(g_array_index(fh->entries, DirEnt, i).name);
    g_array_unref(fh->entries);
  }
  g_free(fh->text);
  if (fh->node) __atomic_sub_fetch(&fh->node->opens, 1, __ATOMIC_SEQ_CST);
  unpin(v, fh->node);
  g_free(fh);
}

/* RELEASE and RELEASEDIR */
static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  Fh *fh = FH(fi);
  if (fh) fh_free(V(req), fh);
  R_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  (void)ino;
  int err;
  Fh *fh = fh_check(v, req, fi, &err);
  if (fh && fh->kind == FH_PASS_FILE) {
    if ((datasync ? fdatasync(fh->fd) : fsync(fh->fd)) < 0) err = errno;
  }
  R_err(req, err);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  (void)ino;
  int err;
  Fh *fh = fh_check(v, req, fi, &err);
  if (fh && fh->kind == FH_PASS_FILE) {
    if (fallocate(fh->fd, mode, off, len) < 0) err = errno;
  } else if (fh) {
    err = EOPNOTSUPP;
  }
  R_err(req, err);
}

/* ---- directories ---- */

static void run_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  int err;
  Node *n = pin(v, ino, &c, &err);
  if (!n) {
    R_err(req, err);
    return;
  }
  if (n->kind == NODE_PASS || n->kind == NODE_RAM) {
    bool dir = is_pass(n) ? S_ISDIR(n->ftype) : S_ISDIR(n->mode);
    if (!dir) err = ENOTDIR;
  }
  if (!err && (n->kind == NODE_PASS || (n->kind == NODE_RAM && n->special == SPECIAL_NONE) ||
               n->special == SPECIAL_CMDROOT)) {
    char *path = path_of(v, n);
    VfsObjId id = {n->rdev_key, n->rino};
    err = vfs_decide_obj(v, &c, "fs:read", path, is_pass(n), "enumerate", false, is_pass(n) ? &id : NULL);
    g_free(path);
  }
  if (!err) err = check_perm(v, n, &c, R_OK);
  Fh *fh = NULL;
  if (!err && is_pass(n)) {
    int fd = pass_reach(v, &c, n, O_RDONLY | O_DIRECTORY, "fs:read");
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (fd < 0) {
      err = -fd;
    } else if (!d) {
      err = errno;
      close(fd);
    } else {
      fh = fh_new(FH_PASS_DIR, c.cmd, n);
      fh->dir = d;
    }
  } else if (!err) {
    fh = fh_new(n->kind == NODE_RAM ? FH_RAM_DIR : FH_VDIR, c.cmd, n);
  }
  if (err) {
    unpin(v, n);
    R_err(req, err);
    return;
  }
  fi->fh = (uint64_t)(uintptr_t)fh;
  if (R_open(req, fi) != 0) fh_free(v, fh);
}

static void add_ent(GArray *a, const char *name, fuse_ino_t ino, unsigned char type) {
  DirEnt e = {g_strdup(name), ino, type};
  g_array_append_val(a, e);
}

static fuse_ino_t shown_ino(Node *n) {
  return n->kind == NODE_PASS ? (fuse_ino_t)n->rino : (n->ino | VFS_RAM_INO_BIT);
}

static void fill_entries(BoxVfs *v, Fh *fh, const Caller *c) {
  if (fh->entries) {
    for (guint i = 0; i < fh->entries->len; i++) g_free(g_array_index(fh->entries, DirEnt, i).name);
    g_array_unref(fh->entries);
  }
  fh->entries = g_array_new(FALSE, FALSE, sizeof(DirEnt));
  if (fh->kind == FH_PASS_DIR) {
    rewinddir(fh->dir);
    struct dirent *de;
    while ((de = readdir(fh->dir)) != NULL) add_ent(fh->entries, de->d_name, de->d_ino, de->d_type);
    return;
  }
  g_mutex_lock(&v->lock);
  Node *n = fh->node;
  add_ent(fh->entries, ".", shown_ino(n), DT_DIR);
  add_ent(fh->entries, "..", n->parent ? shown_ino(n->parent) : shown_ino(n), DT_DIR);
  if (n->kind == NODE_RAMDIR) {
    Command *cm = vfs_command(v, c->cmd);
    Command *area = cm && cm->area != cm->id ? vfs_command(v, cm->area) : NULL;
    if (cm && cm->root) {
      char name[32];
      snprintf(name, sizeof name, "c%d", c->cmd);
      add_ent(fh->entries, name, shown_ino(cm->root), DT_DIR);
    } else if (area && area->root) {
      add_ent(fh->entries, area->root->name, shown_ino(area->root), DT_DIR);
    }
  } else if (n->special == SPECIAL_COMMANDS) {
    g_mutex_unlock(&v->lock);
    GPtrArray *names = vfs_view_command_names(v);
    g_mutex_lock(&v->lock);
    /* d_ino: informational; the lookup gives the real node */
    for (guint i = 0; i < names->len; i++)
      add_ent(fh->entries, g_ptr_array_index(names, i), (fuse_ino_t)(i + 3) | VFS_RAM_INO_BIT, DT_REG);
    g_ptr_array_unref(names);
  } else if (n->children) {
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init(&it, n->children);
    while (g_hash_table_iter_next(&it, &key, &val)) {
      Node *ch = val;
      if (ch->special == SPECIAL_BOXDIR) continue; /* hidden */
      mode_t m = ch->kind == NODE_PASS ? ch->ftype : ch->mode;
      add_ent(fh->entries, key, shown_ino(ch), dtype_of(m));
    }
  }
  g_mutex_unlock(&v->lock);
}

/* One entry of a listing and the offset after it.  A real directory is read
 * from its stream (offsets are the directory's own, d_off: no copy of the
 * names, one read per entry as the kernel asks); others from the snapshot
 * made at offset 0 (offsets are indices). */
typedef struct {
  const char *name;
  fuse_ino_t ino;
  unsigned char type;
  off_t next;
} ListEnt;

static bool list_at(BoxVfs *v, Fh *fh, const Caller *c, off_t off, ListEnt *out) {
  if (fh->kind == FH_PASS_DIR) {
    if (off != fh->pos || off == 0) {
      if (off == 0) rewinddir(fh->dir);
      else seekdir(fh->dir, off);
      fh->ent = NULL;
      fh->pos = off;
    }
    if (!fh->ent) fh->ent = readdir(fh->dir);
    if (!fh->ent) return false;
    *out = (ListEnt){fh->ent->d_name, fh->ent->d_ino, fh->ent->d_type, fh->ent->d_off};
    return true;
  }
  if (off == 0 || !fh->entries) fill_entries(v, fh, c);
  if (off < 0 || (guint64)off >= fh->entries->len) return false;
  DirEnt *d = &g_array_index(fh->entries, DirEnt, (guint)off);
  *out = (ListEnt){d->name, d->d_ino, d->type, off + 1};
  return true;
}

/* The entry list_at gave was sent. */
static void list_sent(Fh *fh, const ListEnt *e) {
  if (fh->kind != FH_PASS_DIR) return;
  fh->ent = NULL;
  fh->pos = e->next;
}

/* The open directory a READDIR or READDIRPLUS lists, or NULL (answered
 * EACCES): its caller must be placed and able to reach a RAM directory. */
static Fh *listing_handle(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, Caller *c) {
  vfs_place(v, req, fi, c);
  Fh *fh = FH(fi);
  if (!fh || !c->placed ||
      (fh->node->kind == NODE_RAM && !vfs_ram_reachable(c, fh->node))) {
    R_err(req, EACCES);
    return NULL;
  }
  return fh;
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  (void)ino;
  Caller c;
  Fh *fh = listing_handle(v, req, fi, &c);
  if (!fh)
    return;
  char *buf = g_malloc(size);
  size_t pos = 0;
  ListEnt e;
  for (off_t at = off; list_at(v, fh, &c, at, &e); at = e.next) {
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_ino = (ino_t)e.ino;
    st.st_mode = (mode_t)e.type << 12;
    size_t need = fuse_add_direntry(req, buf + pos, size - pos, e.name, &st, e.next);
    if (need > size - pos) break;
    pos += need;
    list_sent(fh, &e);
  }
  fuse_reply_buf(req, buf, pos);
  g_free(buf);
}

/* ---- readdirplus ----
 *
 * The kernel asks for READDIRPLUS (auto mode: on a listing's first batch and
 * after lookups in the directory, the `ls -l` pattern) to get each entry's
 * node and attributes with its name, saving a LOOKUP per entry.  Disclosure:
 * the opendir's `enumerate` permit covers the names (and d_ino, type), not
 * the attributes.  An entry comes with its node and attributes only where a
 * read_metadata of that very path would be permitted, as far as known
 * without deciding anything: the command holds that permit already in its
 * decision cache (decided before: logged, or asked quietly by the probe of
 * a name then missing) and the reach floor does not refuse the object.
 * Every other entry is sent without a node (nodeid 0: the
 * kernel then keeps only the name, as from READDIR), so its attributes stay
 * behind a GETATTR, which is decided.  A caller that decides nothing (a
 * tool, boxd's setup) is answered as its GETATTRs would be: with nodes and
 * attributes.  Attributes are sent with attr_timeout 0, as by LOOKUP, so a
 * stat of the entry is still a GETATTR, decided and logged. */
/* Policy's part; path: the entry's, for the floor's part, which compares the
 * identity plus_entry reads (a walk of the host path per entry cost more
 * than the rest of a listing's work). */
static bool plus_may_show(BoxVfs *v, const Caller *c, Fh *fh, const char *dirpath, const char *name,
                          char path[PATH_MAX]) {
  if (!dirpath) return false;
  const char *parts[] = {strcmp(dirpath, "/") == 0 ? "" : dirpath, "/", name};
  if (!vfs_concat(path, PATH_MAX, parts, G_N_ELEMENTS(parts))) return false;
  return vfs_verdict_cached_permit(v, c->cmd, "fs:read", "read_metadata", path, fh->kind == FH_PASS_DIR);
}

/* The node and attributes for a shown entry (a kernel reference taken), or
 * false: the entry goes without them. */
static bool plus_entry(BoxVfs *v, Fh *fh, const Caller *c, const char *name,
                       struct fuse_entry_param *e) {
  if (fh->kind == FH_PASS_DIR) {
    int dfd = dirfd(fh->dir);
    return dfd >= 0 && pass_child(v, fh->node, dfd, name, e) == 0;
  }
  bool ok = false;
  g_mutex_lock(&v->lock);
  Node *n = fh->node->children ? g_hash_table_lookup(fh->node->children, name) : NULL;
  if (n && n->special == SPECIAL_NONE && reach(c, n) == 0) ok = fill_entry(v, n, e) == 0;
  g_mutex_unlock(&v->lock);
  return ok;
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                           struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  (void)ino;
  Caller c;
  Fh *fh = listing_handle(v, req, fi, &c);
  if (!fh)
    return;
  bool real = fh->kind == FH_PASS_DIR || fh->kind == FH_RAM_DIR;
  char *dirpath = real ? path_of(v, fh->node) : NULL;
  char *buf = g_malloc(size);
  size_t pos = 0;
  GArray *given = g_array_new(FALSE, FALSE, sizeof(fuse_ino_t)); /* references to drop on failure */
  ListEnt le;
  for (off_t at = off; list_at(v, fh, &c, at, &le); at = le.next) {
    const ListEnt *d = &le;
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    /* room first: a reference taken for an entry that does not fit would leak */
    if (fuse_add_direntry_plus(req, NULL, 0, d->name, &e, 0) > size - pos) break;
    bool dot = strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0;
    bool deciding = c.decides && v->decide;
    char path[PATH_MAX];
    bool shown = real && !dot && (!deciding || plus_may_show(v, &c, fh, dirpath, d->name, path)) &&
                 plus_entry(v, fh, &c, d->name, &e);
    if (shown && deciding && fh->kind == FH_PASS_DIR &&
        vfs_floor_refuses(v, path, &(VfsObjId){e.attr.st_dev, e.attr.st_ino})) {
      g_mutex_lock(&v->lock);
      forget_one(v, e.ino, 1);
      g_mutex_unlock(&v->lock);
      shown = false;
    }
    if (shown) {
      g_array_append_val(given, e.ino);
      __atomic_add_fetch(&v->plus_shown, 1, __ATOMIC_RELAXED);
    } else {
      if (!dot) __atomic_add_fetch(&v->plus_hidden, 1, __ATOMIC_RELAXED);
      memset(&e, 0, sizeof e);
      e.attr.st_ino = (ino_t)d->ino;
      e.attr.st_mode = (mode_t)d->type << 12;
    }
    pos += fuse_add_direntry_plus(req, buf + pos, size - pos, d->name, &e, d->next);
    list_sent(fh, d);
  }
  if (fuse_reply_buf(req, buf, pos) != 0) {
    g_mutex_lock(&v->lock);
    for (guint i = 0; i < given->len; i++) forget_one(v, g_array_index(given, fuse_ino_t, i), 1);
    g_mutex_unlock(&v->lock);
  }
  g_array_unref(given);
  g_free(buf);
  g_free(dirpath);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi) {
  BoxVfs *v = V(req);
  (void)ino;
  int err;
  Fh *fh = fh_check(v, req, fi, &err);
  if (fh && fh->kind == FH_PASS_DIR) {
    int fd = dirfd(fh->dir);
    if ((datasync ? fdatasync(fd) : fsync(fd)) < 0) err = errno;
  }
  R_err(req, err);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino) {
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  struct statvfs sv;
  memset(&sv, 0, sizeof sv);
  sv.f_bsize = sv.f_frsize = 4096;
  sv.f_namemax = NAME_MAX;
  if (c.placed) {
    int err;
    Node *n = pin(v, ino, &c, &err);
    /* a node past the descriptor budget: its bound root's filesystem */
    Node *at = n;
    g_mutex_lock(&v->lock);
    while (at && is_pass(at) && at->fd < 0) at = at->parent;
    g_mutex_unlock(&v->lock);
    if (at && is_pass(at)) {
      int got = fstatvfs(at->fd, &sv);
      if (got < 0) {
        memset(&sv, 0, sizeof sv);
        sv.f_bsize = sv.f_frsize = 4096;
        sv.f_namemax = NAME_MAX;
      }
    }
    unpin(v, n);
  }
  if (sv.f_blocks == 0) {
    /* a RAM area: its limits and what it uses */
    guint64 bytes = 0, inodes = 0;
    g_mutex_lock(&v->lock);
    Command *cm = c.placed ? vfs_command(v, c.area) : NULL;
    if (cm) {
      bytes = cm->bytes;
      inodes = cm->inodes;
    }
    g_mutex_unlock(&v->lock);
    guint64 max_b = v->ram_max_bytes ? v->ram_max_bytes : (guint64)v->ram_max_inodes * VFS_RAM_MAX_FILE;
    sv.f_blocks = max_b / 4096;
    sv.f_bfree = sv.f_bavail = (max_b - MIN(bytes, max_b)) / 4096;
    sv.f_files = v->ram_max_inodes;
    sv.f_ffree = sv.f_favail = v->ram_max_inodes - MIN(inodes, (guint64)v->ram_max_inodes);
  }
  fuse_reply_statfs(req, &sv);
}

/* ---- extended attributes: one rule, refused for every name ----
 * They would carry metadata (and security.* labels) past the fs:read /
 * fs:write vocabulary, which has no operation for them.  ENOSYS makes the
 * kernel refuse them itself from then on (callers get EOPNOTSUPP): without
 * it every write(2) costs a GETXATTR of security.capability first. */
static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                        size_t size, int flags) {
  (void)ino, (void)name, (void)value, (void)size, (void)flags;
  R_err(req, ENOSYS);
}
static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size) {
  (void)ino, (void)name, (void)size;
  R_err(req, ENOSYS);
}
static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  (void)ino, (void)size;
  R_err(req, ENOSYS);
}
static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name) {
  (void)ino, (void)name;
  R_err(req, ENOSYS);
}

/* ---- dispatch: requests that will raise a decision ----
 * Placed here, on the loop thread.  The request runs right here when its
 * caller decides nothing (tools, setup, the kernel itself) or policy answers
 * at once (a prompt policy: handing it to the decision pool would cost a
 * wake-up and a context switch per decided operation).  Otherwise it becomes
 * a job of the decision pool, which FUSE_INTERRUPT can cancel, and the loop
 * thread goes back to the kernel.  args: the request's arguments, its names
 * borrowed; place_fi: the open file that places a request the kernel makes
 * itself; fi: the open file the handler gets (copied). */
static void dispatch(fuse_req_t req, struct fuse_file_info *place_fi, const struct fuse_file_info *fi,
                     Job args) {
  Caller c;
  vfs_job_set_inline(NULL, NULL);
  vfs_place(V(req), req, place_fi, &c);
  args.req = req;
  args.caller = c;
  if (fi) {
    args.fi = *fi;
    args.has_fi = true;
  }
  if (!c.decides || V(req)->decide_prompt) {
    vfs_job_set_inline(req, &c);
    args.run(&args);
    vfs_job_set_inline(NULL, NULL);
    return;
  }
  Job *j = g_new(Job, 1);
  *j = args;
  j->name = g_strdup(args.name);
  j->name2 = g_strdup(args.name2);
  vfs_job_submit(V(req), j);
}

static struct fuse_file_info *job_fi(Job *j) { return j->has_fi ? &j->fi : NULL; }

static void job_getattr(Job *j) { run_getattr(j->req, j->ino, job_fi(j)); }
static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  Fh *fh = FH(fi);
  if (fh && fh->kind == FH_PASS_FILE && fh->fd >= 0) {
    /* fstat(2), or the kernel checking a file it reads: covered by the
     * decision that opened the handle, answered from its descriptor */
    struct stat st;
    if (fstat(fh->fd, &st) < 0) fuse_reply_err(req, errno);
    else fuse_reply_attr(req, &st, 0.0);
    return;
  }
  if (fi) { /* an open handle: covered by its opening decision */
    run_getattr(req, ino, fi);
    return;
  }
  dispatch(req, NULL, NULL, (Job){.ino = ino, .run = job_getattr});
}

static void job_setattr(Job *j) { run_setattr(j->req, j->ino, &j->attr, j->to_set, job_fi(j)); }
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi) {
  dispatch(req, fi, fi, (Job){.ino = ino, .attr = *attr, .to_set = to_set, .run = job_setattr});
}

static void job_access(Job *j) { run_access(j->req, j->ino, j->mask); }
static void op_access(fuse_req_t req, fuse_ino_t ino, int mask) {
  dispatch(req, NULL, NULL, (Job){.ino = ino, .mask = mask, .run = job_access});
}

static void job_readlink(Job *j) { run_readlink(j->req, j->ino); }
static void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  dispatch(req, NULL, NULL, (Job){.ino = ino, .run = job_readlink});
}

static void job_mkdir(Job *j) { run_mkdir(j->req, j->ino, j->name, j->mode); }
static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode) {
  dispatch(req, NULL, NULL, (Job){.ino = parent, .name = (char *)name, .mode = mode, .run = job_mkdir});
}

static void job_mknod(Job *j) { run_mknod(j->req, j->ino, j->name, j->mode, j->rdev); }
static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev) {
  dispatch(req, NULL, NULL,
           (Job){.ino = parent, .name = (char *)name, .mode = mode, .rdev = rdev, .run = job_mknod});
}

static void job_symlink(Job *j) { run_symlink(j->req, j->name2, j->ino, j->name); }
static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name) {
  dispatch(req, NULL, NULL,
           (Job){.ino = parent, .name = (char *)name, .name2 = (char *)link, .run = job_symlink});
}

static void job_link(Job *j) { run_link(j->req, j->ino, j->ino2, j->name); }
static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname) {
  dispatch(req, NULL, NULL, (Job){.ino = ino, .ino2 = newparent, .name = (char *)newname, .run = job_link});
}

static void job_unlink(Job *j) { run_unlink(j->req, j->ino, j->name); }
static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) {
  dispatch(req, NULL, NULL, (Job){.ino = parent, .name = (char *)name, .run = job_unlink});
}

static void job_rmdir(Job *j) { run_rmdir(j->req, j->ino, j->name); }
static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name) {
  dispatch(req, NULL, NULL, (Job){.ino = parent, .name = (char *)name, .run = job_rmdir});
}

static void job_rename(Job *j) { run_rename(j->req, j->ino, j->name, j->ino2, j->name2, j->flags); }
static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags) {
  dispatch(req, NULL, NULL,
           (Job){.ino = parent, .name = (char *)name, .ino2 = newparent, .name2 = (char *)newname,
                 .flags = flags, .run = job_rename});
}

static void job_open(Job *j) { run_open(j->req, j->ino, &j->fi); }
static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  dispatch(req, NULL, fi, (Job){.ino = ino, .run = job_open});
}

static void job_create(Job *j) { run_create(j->req, j->ino, j->name, j->mode, &j->fi); }
static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi) {
  dispatch(req, NULL, fi, (Job){.ino = parent, .name = (char *)name, .mode = mode, .run = job_create});
}

static void job_opendir(Job *j) { run_opendir(j->req, j->ino, &j->fi); }
static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  dispatch(req, NULL, fi, (Job){.ino = ino, .run = job_opendir});
}

const struct fuse_lowlevel_ops vfs_ops = {
    .init = op_init,
    .lookup = op_lookup,
    .forget = op_forget,
    .forget_multi = op_forget_multi,
    .getattr = op_getattr,
    .setattr = op_setattr,
    .readlink = op_readlink,
    .mknod = op_mknod,
    .mkdir = op_mkdir,
    .unlink = op_unlink,
    .rmdir = op_rmdir,
    .symlink = op_symlink,
    .rename = op_rename,
    .link = op_link,
    .open = op_open,
    .read = op_read,
    .write = op_write,
    .flush = op_flush,
    .release = op_release,
    .fsync = op_fsync,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .readdirplus = op_readdirplus,
    .releasedir = op_release,
    .fsyncdir = op_fsyncdir,
    .statfs = op_statfs,
    .access = op_access,
    .create = op_create,
    .fallocate = op_fallocate,
    .setxattr = op_setxattr,
    .getxattr = op_getxattr,
    .listxattr = op_listxattr,
    .removexattr = op_removexattr,
    /* Not implemented, on purpose, the kernel then acts alone: flock and
     * POSIX locks (local to this kernel), copy_file_range (generic copy
     * through READ/WRITE, each decided by its handle), lseek SEEK_DATA /
     * SEEK_HOLE (generic: all data), readdirplus (children's attributes
     * would be metadata reads without their own decision), tmpfile
     * (O_TMPFILE: EOPNOTSUPP). */
};
