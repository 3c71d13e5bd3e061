/* reach.c — getting at a node: pinning it for the caller, reaching a
 * passthrough node again from its bound root (openat2, no symlinks, never
 * out of the root) and checking that it is still the object it was found
 * to be, and reading its attributes. */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/syscall.h>

/* ---- pinning and reach ---- */

/* lock held */
int vfs_reach(const Caller *c, Node *n)
{
  if (!c->placed) return EACCES;
  if (n->kind == NODE_RAM && !vfs_ram_reachable(c, n)) return EACCES;
  return 0;
}

Node *vfs_pin(BoxVfs *v, fuse_ino_t ino, const Caller *c, int *err)
{
  g_mutex_lock(&v->lock);
  Node *n = vfs_node_get(v, ino);
  if (!n) {
    *err = ENOENT;
  } else if ((*err = vfs_reach(c, n)) != 0 || (*err = vfs_search_check(v, c, n)) != 0) {
    n = NULL;
  } else {
    vfs_node_ref(n);
  }
  g_mutex_unlock(&v->lock);
  return n;
}

Node *vfs_pin_or_reply(BoxVfs *v, fuse_req_t req, fuse_ino_t ino, const Caller *c)
{
  int err;
  Node *n = vfs_pin(v, ino, c, &err);
  if (!n) vfs_reply_err(req, err);
  return n;
}

Node *vfs_pin_request(BoxVfs *v, fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
                      Caller *c)
{
  vfs_place(v, req, fi, c);
  return vfs_pin_or_reply(v, req, ino, c);
}

void vfs_unpin(BoxVfs *v, Node *n)
{
  if (!n) return;
  vfs_closes_defer(); /* the last reference, when FORGET came meanwhile */
  g_mutex_lock(&v->lock);
  vfs_node_unref(v, n);
  g_mutex_unlock(&v->lock);
  vfs_closes_run();
}

char *vfs_path_of(BoxVfs *v, Node *n)
{
  g_mutex_lock(&v->lock);
  char *p = vfs_node_path(v, n);
  g_mutex_unlock(&v->lock);
  return p;
}

/* lock held for non-pass nodes */
void vfs_virt_stat(Node *n, struct stat *st)
{
  memset(st, 0, sizeof *st);
  st->st_ino = (ino_t)(n->ino | VFS_RAM_INO_BIT);
  st->st_mode = n->mode;
  st->st_nlink = n->nlink;
  st->st_uid = n->uid;
  st->st_gid = n->gid;
  if (n->data)
    st->st_size = (off_t)n->data->len;
  else if (n->target)
    st->st_size = (off_t)strlen(n->target);
  else if (S_ISDIR(n->mode))
    st->st_size = 4096;
  st->st_blksize = 4096;
  st->st_blocks = (st->st_size + 511) / 512;
  st->st_atim = n->atime;
  st->st_mtim = n->mtime;
  st->st_ctim = n->ctime;
}

int vfs_node_stat(BoxVfs *v, Node *n, struct stat *st)
{
  if (is_pass(n)) return vfs_pass_node_stat(v, n, false, st);
  g_mutex_lock(&v->lock);
  vfs_virt_stat(n, st);
  g_mutex_unlock(&v->lock);
  return 0;
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
static char *pass_rel(Node *n, int *rootfd)
{
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

static int openat2_once(int dirfd, const char *rel, int flags)
{
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

/* openat2 takes a path shorter than PATH_MAX; one below a root can be
 * longer.  It is walked in pieces that end at a '/', each beneath the
 * directory the piece before opened, so still never out of the root. */
int vfs_openat2_beneath(int dirfd, const char *rel, int flags)
{
  int at = dirfd;
  while (strlen(rel) >= PATH_MAX) {
    const char *cut = rel + PATH_MAX - 1;
    while (cut > rel && *cut != '/') cut--;
    char *piece = cut > rel ? g_strndup(rel, (gsize)(cut - rel)) : NULL;
    int fd = piece ? openat2_once(at, piece, O_PATH | O_DIRECTORY) : -1;
    int e = piece ? errno : ENAMETOOLONG;
    g_free(piece);
    if (at != dirfd) close(at);
    if (fd < 0) {
      errno = e;
      return -1;
    }
    at = fd;
    rel = cut + 1;
  }
  int fd = openat2_once(at, rel, flags);
  if (at != dirfd) {
    int e = errno;
    close(at);
    errno = e;
  }
  return fd;
}

static int deny_identity(BoxVfs *v, const Caller *c, Node *n, const char *action)
{
  char *path = vfs_path_of(v, n);
  vfs_enforce(v, c, action, path, true, "identity", VFS_IDENTITY_WHY);
  g_free(path);
  return EACCES;
}

int vfs_pass_reach(BoxVfs *v, const Caller *c, Node *n, int flags, const char *action)
{
  struct stat st;
  return vfs_pass_reach_st(v, c, n, flags, action, &st, NULL);
}

/* lock held: as pass_rel, written right to left into buf (no allocation:
 * this runs on every op that acts); NULL if n hangs off no root or the path
 * does not fit (the caller then uses pass_rel). */
const char *vfs_pass_rel_buf(Node *n, int *rootfd, char *buf, size_t size)
{
  size_t pos = size - 1;
  buf[pos] = '\0';
  Node *p = n;
  int depth = 0;
  while (p && p->kind == NODE_PASS && !p->root_path && depth < VFS_MAX_DEPTH) {
    size_t len = p->namelen;
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
static int reach_open(BoxVfs *v, Node *n, int flags, bool locked, struct stat *st)
{
  int rootfd = -1;
  char buf[1024];
  if (!locked) g_mutex_lock(&v->lock);
  const char *fast = vfs_pass_rel_buf(n, &rootfd, buf, sizeof buf);
  char *rel = fast ? NULL : pass_rel(n, &rootfd);
  if (!locked) g_mutex_unlock(&v->lock);
  if (!fast && !rel) return -ESTALE;
  if (S_ISLNK(n->ftype)) flags |= O_PATH | O_NOFOLLOW;
  /* openat2 refuses bits open(2) ignores (the kernel's __FMODE_EXEC on an
   * exec's OPEN, for one): keep only the flags that mean something here. */
  flags &= O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECT | O_LARGEFILE |
           O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_PATH | O_TRUNC;
  int fd = vfs_openat2_beneath(rootfd, fast ? fast : rel, flags);
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

/* As vfs_pass_reach, also giving the object's attributes (read for the
 * check) and the watch's stamp the walk earned (*moves, 0: none). */
int vfs_pass_reach_st(BoxVfs *v, const Caller *c, Node *n, int flags, const char *action,
                      struct stat *out, guint64 *moves)
{
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
int vfs_node_fd_get(BoxVfs *v, Node *n, bool locked)
{
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

void vfs_node_fd_put(const Node *n, int fd)
{
  if (fd >= 0 && fd != n->fd) close(fd);
}

/* A pass node's attributes, read through node_fd_get: 0 or an errno. */
int vfs_pass_node_stat(BoxVfs *v, Node *n, bool locked, struct stat *st)
{
  int fd = vfs_node_fd_get(v, n, locked);
  if (fd < 0) return -fd;
  int err = fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? errno : 0;
  vfs_node_fd_put(n, fd);
  return err;
}

void vfs_name_id(int dirfd, const char *name, NameId *id)
{
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

bool vfs_name_same(const NameId *a, const NameId *b)
{
  if (a->exists != b->exists) return false;
  return !a->exists || (a->dev == b->dev && a->ino == b->ino);
}

/* n's stamp from the last walk that proved its place (vfs_watch_proven), or 0 */
guint64 vfs_node_stamp(BoxVfs *v, Node *n)
{
  g_mutex_lock(&v->lock);
  guint64 settled = n->settled;
  g_mutex_unlock(&v->lock);
  return settled;
}

/* A bound root's node holds the very descriptor every walk starts from: its
 * place cannot change, so its own descriptor always stands for a walk to it
 * (without a watch too).  *stamp: the watch's count now, which a child
 * found through it is proven at (0 without a watch). */
bool vfs_pass_is_root(BoxVfs *v, Node *dir, guint64 *stamp)
{
  if (dir->kind != NODE_PASS || !dir->root_path || dir->fd < 0) return false;
  *stamp = vfs_watch_moves(v);
  return true;
}
