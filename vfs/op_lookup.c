/* vfs_op_lookup.c — LOOKUP and FORGET: how a name becomes a node the kernel
 * holds, and what a deciding caller's lookup is told (a walk is not a
 * decision, but a refused name must not show whether it exists). */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENTRY_TIMEOUT 1.0
/* names in a directory whose changes from outside are watched (watch.c) */
#define ENTRY_TIMEOUT_WATCHED 60.0

/* A slot's RAM root (/ram/c<N>, command.c) outlives the commands it is lent
 * to, and only the trusted set-up of its own command's worker or tool
 * launch (placed, before its pivot or its view) walks to it: kept this
 * long, a launch's bind of the command's /tmp asks no LOOKUP of it. */
#define ENTRY_TIMEOUT_SLOT 60.0

/* lock held */
static double entry_timeout_of(BoxVfs *v, Node *n)
{
  if (n->special == SPECIAL_CMDROOT) {
    Command *owner = vfs_command(v, n->cmd);
    return owner && owner->is_slot && owner->root == n ? ENTRY_TIMEOUT_SLOT : 0.0;
  }
  if (n->special != SPECIAL_NONE) return 0.0;
  return vfs_watch_long(v, n) ? ENTRY_TIMEOUT_WATCHED : ENTRY_TIMEOUT;
}

/* ---- entries ---- */

/* lock held; takes a kernel reference on n and fills e (with *known, the
 * attributes just read from n's object, else read here) */
static int fill_entry_st(BoxVfs *v, Node *n, struct fuse_entry_param *e, const struct stat *known)
{
  memset(e, 0, sizeof *e);
  struct stat st;
  if (known) {
    st = *known;
  } else if (is_pass(n)) {
    int err = vfs_pass_node_stat(v, n, true, &st);
    if (err) return err;
  } else {
    vfs_virt_stat(n, &st);
  }
  e->ino = n->ino;
  e->attr = st;
  e->attr_timeout = 0.0;
  e->entry_timeout = entry_timeout_of(v, n);
  n->nlookup++;
  vfs_node_ref(n);
  return 0;
}

int vfs_fill_entry(BoxVfs *v, Node *n, struct fuse_entry_param *e)
{
  return fill_entry_st(v, n, e, NULL);
}

int vfs_pass_child(BoxVfs *v, Node *dir, int dirfd, const char *name, struct fuse_entry_param *e)
{
  return vfs_pass_child_known(v, dir, dirfd, name, e, NULL, 0);
}

/* As pass_child; known: the attributes of the object the caller just
 * created there (no fstatat: it is new, or its node is found by them);
 * moves: the watch's stamp of the walk that reached dirfd (0: none). */
int vfs_pass_child_known(BoxVfs *v, Node *dir, int dirfd, const char *name,
                         struct fuse_entry_param *e, const struct stat *known, guint64 moves)
{
  struct stat st;
  if (known)
    st = *known;
  else if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno;
  g_mutex_lock(&v->lock);
  Node *n = vfs_pass_find_obj(v, &st);
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
static bool pass_known_child(BoxVfs *v, Node *dir, const char *name, struct fuse_entry_param *e)
{
  int rootfd = -1;
  char buf[1024];
  guint64 moves = vfs_watch_moves(v);
  g_mutex_lock(&v->lock);
  const char *rel = vfs_pass_rel_buf(dir, &rootfd, buf, sizeof buf - NAME_MAX - 2);
  g_mutex_unlock(&v->lock);
  if (!rel) return false;
  char path[sizeof buf];
  if (strcmp(rel, ".") == 0)
    g_strlcpy(path, name, sizeof path);
  else if ((size_t)snprintf(path, sizeof path, "%s/%s", rel, name) >= sizeof path)
    return false;
  int fd = vfs_openat2_beneath(rootfd, path, O_PATH | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  close(fd);
  if (!ok) return false;
  g_mutex_lock(&v->lock);
  Node *n = vfs_pass_find_obj(v, &st);
  ok = n && n->parent == dir && n->name && strcmp(n->name, name) == 0 &&
       fill_entry_st(v, n, e, &st) == 0;
  if (ok) vfs_watch_proven(n, moves);
  g_mutex_unlock(&v->lock);
  return ok;
}

/* A lookup in a directory no name on whose path has changed since a walk
 * found it (watch.c), or in a bound root: its own descriptor stands for
 * the walk.  What the fstatat read counts only if the directory is still
 * settled after it (an outside rename in between would have queued its
 * event by then).  True with *err set (0: *e filled) where that held;
 * false: the caller walks. */
static bool pass_settled_child(BoxVfs *v, Node *dir, const char *name, struct fuse_entry_param *e,
                               int *err)
{
  guint64 settled;
  bool root = vfs_pass_is_root(v, dir, &settled);
  if (!root) {
    if (dir->fd < 0) return false;
    settled = vfs_node_stamp(v, dir);
    if (!settled || !vfs_watch_settled(v, settled)) return false;
  }
  struct stat st;
  int r = fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
  if (!root && !vfs_watch_settled(v, settled)) return false;
  *err = r ? r : vfs_pass_child_known(v, dir, dir->fd, name, e, &st, settled);
  return true;
}

/* ---- init / lookup / forget ---- */

/* Gives back the reference a refused lookup took.  Where the kernel held
 * the node already, the refusal is a failed revalidation: the kernel drops
 * its entry and detaches every mount whose mount point it was, in every
 * mount namespace (prepared tool views too, which is why they are counted:
 * box_vfs_views_epoch).  lock held */
static void forget_refused(BoxVfs *v, fuse_ino_t ino)
{
  Node *n = vfs_node_get(v, ino);
  if (n && n->nlookup > 1) __atomic_add_fetch(&v->held_refusals, 1, __ATOMIC_RELAXED);
  vfs_node_forget(v, ino, 1);
}

/* A name the lookup found, for a deciding caller: refused like a missing
 * one where policy lets the command neither read nor write the path (a
 * directory only where no walk to a permitted path goes through it, else
 * the kernel would answer mkdir, O_CREAT or a move into it from the entry
 * it got: EEXIST, EISDIR), and shown with its type only
 * where it may not read it (the kernel keeps a lookup's attributes, and a
 * statx with AT_STATX_DONT_SYNC reads them without a GETATTR, so they must
 * be what a decision would show). */
static int admit_found(BoxVfs *v, const Caller *c, const char *path, bool host_backed,
                       struct fuse_entry_param *e)
{
  bool may_read;
  int err = vfs_probe_present(v, c, path, host_backed, S_ISDIR(e->attr.st_mode), &may_read);
  if (err) {
    g_mutex_lock(&v->lock);
    forget_refused(v, e->ino);
    g_mutex_unlock(&v->lock);
    return err;
  }
  if (!may_read) {
    struct stat *st = &e->attr;
    struct stat shown = {
      .st_dev = st->st_dev, .st_ino = st->st_ino, .st_mode = st->st_mode & S_IFMT, .st_nlink = 1
    };
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

/* A tool's lookup of a name below one its view hides (a mask the kernel
 * may have detached): refused, the reference just taken given back.  The
 * hidden name itself is found, so that the mask's own mount point stays
 * valid in the kernel. */
static int tool_may_see(BoxVfs *v, const Caller *c, Node *p, const char *name,
                        const struct fuse_entry_param *e)
{
  g_mutex_lock(&v->lock);
  char *path = vfs_tool_has_hidden(v, c) ? vfs_node_child_path(v, p, name) : NULL;
  g_mutex_unlock(&v->lock);
  if (!path) return 0;
  int err = vfs_tool_reach_name(v, c, path);
  g_free(path);
  if (!err) return 0;
  g_mutex_lock(&v->lock);
  forget_refused(v, e->ino);
  g_mutex_unlock(&v->lock);
  return err;
}

void vfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  BoxVfs *v = V(req);
  const BoxVfsTree *t = vfs_tree_of(req, parent);
  if (t) return t->lookup(t->data, req, parent, name);
  Caller c;
  vfs_place(v, req, NULL, &c);
  if (!c.placed && !vfs_place_daemon(v, req, parent, &c)) {
    vfs_reply_err(req, EACCES);
    return;
  }
  if (strlen(name) > NAME_MAX) {
    vfs_reply_err(req, ENAMETOOLONG);
    return;
  }
  vfs_place_node(v, &c, parent);
  Node *p = vfs_pin_or_reply(v, req, parent, &c);
  if (!p) return;
  int err = 0;
  struct fuse_entry_param e;
  if (is_pass(p)) {
    __atomic_add_fetch(&v->pass_lookups, 1, __ATOMIC_RELAXED);
    if (!S_ISDIR(p->ftype))
      err = ENOTDIR;
    else if (!(err = vfs_check_perm(v, p, &c, X_OK)) && !pass_settled_child(v, p, name, &e, &err) &&
             !pass_known_child(v, p, name, &e)) {
      struct stat dst;
      guint64 moves;
      int dfd = vfs_pass_reach_st(v, &c, p, O_PATH | O_DIRECTORY, "fs:read", &dst, &moves);
      if (dfd < 0) {
        err = -dfd;
      } else {
        err = vfs_pass_child_known(v, p, dfd, name, &e, NULL, moves);
        close(dfd);
      }
    }
    if ((err == ENOENT || err == 0) && c.decides) {
      g_mutex_lock(&v->lock);
      char *path = vfs_node_child_path(v, p, name);
      g_mutex_unlock(&v->lock);
      err = err ? vfs_probe_absent(v, &c, path, true) : admit_found(v, &c, path, true, &e);
      g_free(path);
    } else if (err == 0 && c.is_tool) {
      err = tool_may_see(v, &c, p, name, &e);
      /* A tool decides nothing: the name it found may be one the agent's
       * policy refuses, and an entry the kernel kept would answer the
       * agent's next walk by itself (EISDIR, EEXIST, ENOTDIR from its
       * type) where a refused name must look absent.  So the agent's walk
       * always asks (and, refused, detaches the mounts on it: counted). */
      e.entry_timeout = 0.0;
    }
    vfs_unpin(v, p);
    vfs_reply_entry_or_err(req, err, &e);
    return;
  }
  g_mutex_lock(&v->lock);
  Node *n = NULL;
  if (p->kind == NODE_RAMDIR) {
    __atomic_add_fetch(&v->ram_lookups, 1, __ATOMIC_RELAXED);
    char want[32];
    snprintf(want, sizeof want, "c%d", c.cmd);
    Command *cm = vfs_command(v, c.cmd);
    Command *area = cm && cm->area != cm->id ? vfs_command(v, cm->area) : NULL;
    if (cm && cm->root && strcmp(name, want) == 0)
      n = cm->root;
    else if (area && area->root && strcmp(name, area->root->name) == 0)
      n = area->root;
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
    if (n && n->mount_point && !c.is_tool) {
      if (n->nlookup > 0) __atomic_add_fetch(&v->held_refusals, 1, __ATOMIC_RELAXED);
      n = NULL;
    }
  }
  if (!n && !err) err = ENOENT;
  if (n && n->special == SPECIAL_TREE) {
    g_mutex_unlock(&v->lock);
    vfs_unpin(v, p);
    v->view_tree.lookup(v->view_tree.data, req, 0, name);
    return;
  }
  n = vfs_view_shown(v, p, n);
  if (n) err = vfs_fill_entry(v, n, &e);
  char *probe = NULL;
  bool found = !err && n && n->special == SPECIAL_NONE && !n->mount_point;
  if ((err == ENOENT || found) && c.decides && p->kind == NODE_RAM &&
      p->special != SPECIAL_BOXDIR) {
    probe = vfs_node_child_path(v, p, name);
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
  vfs_unpin(v, p);
  vfs_reply_entry_or_err(req, err, &e);
}

void vfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
  BoxVfs *v = V(req);
  vfs_closes_defer();
  g_mutex_lock(&v->lock);
  vfs_node_forget(v, ino, nlookup);
  g_mutex_unlock(&v->lock);
  vfs_closes_run();
  fuse_reply_none(req);
}

void vfs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
  BoxVfs *v = V(req);
  /* in slices, so the descriptors a slice frees fit the deferred list */
  for (size_t i = 0; i < count;) {
    vfs_closes_defer();
    g_mutex_lock(&v->lock);
    for (size_t end = MIN(count, i + VFS_CLOSES_SLICE); i < end; i++)
      vfs_node_forget(v, forgets[i].ino, forgets[i].nlookup);
    g_mutex_unlock(&v->lock);
    vfs_closes_run();
  }
  fuse_reply_none(req);
}
