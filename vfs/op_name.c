/* op_name.c — operations that make, link, remove and rename names:
 * MKDIR, MKNOD and SYMLINK (one function), LINK, UNLINK, RMDIR, RENAME. */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- creating names ---- */

void vfs_new_name_clear(BoxVfs *v, NewName *nn)
{
  if (nn->dfd >= 0 && !nn->dfd_node) close(nn->dfd);
  nn->dfd = -1;
  vfs_unpin(v, nn->dir);
  g_free(nn->path);
}

/* The identity of what name in nn's directory is now, for the reach floor
 * (*buf; ino 0 where nothing is there), read in the directory the op acts
 * in rather than by a walk of the host path from /; NULL outside passthrough. */
const VfsObjId *vfs_name_obj(const NewName *nn, const char *name, VfsObjId *buf)
{
  if (!nn->pass) return NULL;
  struct stat st;
  if (fstatat(nn->dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    *buf = (VfsObjId){ st.st_dev, st.st_ino };
  else
    *buf = (VfsObjId){ 0, 0 };
  return buf;
}

static const VfsObjId *nameid_obj(bool pass, const NameId *id, VfsObjId *buf)
{
  if (!pass) return NULL;
  *buf = id->exists ? (VfsObjId){ id->dev, id->ino } : (VfsObjId){ 0, 0 };
  return buf;
}

int vfs_new_name_request(BoxVfs *v, fuse_req_t req, Caller *c, fuse_ino_t parent, const char *name,
                         NewName *nn)
{
  vfs_place(v, req, NULL, c);
  return vfs_new_name(v, c, parent, name, nn);
}

/* Pins a directory in which the caller may create or remove name. */
int vfs_new_name(BoxVfs *v, const Caller *c, fuse_ino_t parent, const char *name, NewName *nn)
{
  memset(nn, 0, sizeof *nn);
  nn->dfd = -1;
  if (!c->placed) return EACCES;
  if (strlen(name) > NAME_MAX) return ENAMETOOLONG;
  int err;
  Node *d = vfs_pin(v, parent, c, &err);
  if (!d) return err;
  nn->dir = d;
  g_mutex_lock(&v->lock);
  if (d->kind == NODE_PASS) {
    if (!S_ISDIR(d->ftype)) err = ENOTDIR;
  } else if (d->kind == NODE_RAM) {
    if (!S_ISDIR(d->mode))
      err = ENOTDIR;
    else if (d->special == SPECIAL_BOXDIR || d->closed)
      err = EACCES;
    else if (d->special == SPECIAL_CMDROOT && strcmp(name, ".box") == 0)
      err = EACCES;
    else if (d->nlink == 0)
      err = ENOENT;
  } else {
    err = EACCES; /* the virtual directories are fixed */
  }
  if (!err) {
    nn->pass = d->kind == NODE_PASS;
    nn->path = vfs_node_child_path(v, d, name);
    if (!nn->path) err = EACCES;
  }
  g_mutex_unlock(&v->lock);
  if (!err) err = vfs_check_perm(v, d, c, W_OK | X_OK);
  if (!err && nn->pass) {
    /* In a bound root, or where no name on the directory's path has changed
     * since a walk found it (watch.c), its own descriptor is the one a
     * walk would open: a create or unlink in it skips the walk (openat2,
     * fstat, close). */
    guint64 settled;
    if (vfs_pass_is_root(v, d, &settled) ||
        (d->fd >= 0 && (settled = vfs_node_stamp(v, d)) && vfs_watch_settled(v, settled))) {
      nn->dfd = d->fd;
      nn->dfd_node = true;
      nn->moves = settled;
      return 0;
    }
    struct stat st;
    int fd = vfs_pass_reach_st(v, c, d, O_PATH | O_DIRECTORY, "fs:write", &st, &nn->moves);
    if (fd < 0)
      err = -fd;
    else
      nn->dfd = fd;
  }
  return err;
}

/* The daemon never changes its euid: read once, not on every create. */
bool vfs_daemon_root(void)
{
  static int root = -1;
  int r = __atomic_load_n(&root, __ATOMIC_RELAXED);
  if (r < 0) {
    r = geteuid() == 0;
    __atomic_store_n(&root, r, __ATOMIC_RELAXED);
  }
  return r;
}

void vfs_chown_new(const Caller *c, int dirfd, const char *name, mode_t mode)
{
  if (!vfs_daemon_root() || (c->uid == 0 && c->gid == 0)) return;
  /* in a setgid directory the name keeps the directory's group, as made */
  struct stat dst;
  gid_t g = fstat(dirfd, &dst) == 0 && (dst.st_mode & S_ISGID) ? (gid_t)-1 : c->gid;
  if (fchownat(dirfd, name, c->uid, g, AT_SYMLINK_NOFOLLOW) != 0) return; /* best effort */
  /* a chown drops the set-id bits of a file: the caller asked for them */
  if (!S_ISDIR(mode) && !S_ISLNK(mode) && (mode & (S_ISUID | S_ISGID)))
    (void)!fchmodat(dirfd, name, mode & 07777, AT_SYMLINK_NOFOLLOW);
}

/* lock held: a new RAM node in dir, failing if the name exists */
static Node *ram_create(BoxVfs *v, const Caller *c, Node *dir, const char *name, mode_t mode,
                        int *err)
{
  if (g_hash_table_contains(dir->children, name)) {
    *err = EEXIST;
    return NULL;
  }
  return vfs_ram_new(v, dir->cmd, dir, name, mode, c->uid, c->gid, err);
}

/* The real node: a symlink to link, or a directory or other node of mode. */
static int make_real(int dfd, const char *name, mode_t mode, const char *link)
{
  if (link) return symlinkat(link, dfd, name);
  if (S_ISDIR(mode)) return mkdirat(dfd, name, mode & 07777);
  return mknodat(dfd, name, mode, 0);
}

/* MKDIR, MKNOD and SYMLINK: a new node named name in parent, of mode (its
 * type and permissions); link: a symlink's target.  What differs between
 * them is the decision's legs (vfs_decide_make) and the call that makes the
 * real node (make_real). */
static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      const char *link)
{
  BoxVfs *v = V(req);
  Caller c;
  NewName nn;
  int err = vfs_new_name_request(v, req, &c, parent, name, &nn);
  VfsObjId at;
  if (!err) {
    /* only a symlink's target is read relative to the directory */
    g_autofree char *dirpath = link ? g_path_get_dirname(nn.path) : NULL;
    err = vfs_decide_make(v, &c, nn.path, nn.pass, dirpath, mode & S_IFMT, link,
                          link ? NULL : vfs_name_obj(&nn, name, &at));
  }
  struct fuse_entry_param e;
  if (!err && nn.pass) {
    if (make_real(nn.dfd, name, mode, link) < 0)
      err = errno;
    else {
      vfs_chown_new(&c, nn.dfd, name, link ? S_IFLNK : mode);
      vfs_changed(v, &c, nn.path);
      err = vfs_pass_child_known(v, nn.dir, nn.dfd, name, &e, NULL, nn.moves);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    Node *n = ram_create(v, &c, nn.dir, name, mode, &err);
    if (n && link) n->target = g_strdup(link);
    if (n) err = vfs_fill_entry(v, n, &e);
    g_mutex_unlock(&v->lock);
  }
  vfs_new_name_clear(v, &nn);
  vfs_reply_entry_or_err(req, err, &e);
}

void vfs_run_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
  make_node(req, parent, name, S_IFDIR | (mode & 07777), NULL);
}

void vfs_run_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
  (void)rdev;
  /* Regular files, FIFOs and sockets; never a device node. */
  mode_t type = (mode & S_IFMT) ? (mode & S_IFMT) : S_IFREG;
  if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK) {
    vfs_reply_err(req, EPERM);
    return;
  }
  make_node(req, parent, name, type | (mode & 07777), NULL);
}

void vfs_run_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
  make_node(req, parent, name, S_IFLNK | 0777, link);
}

void vfs_run_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
  BoxVfs *v = V(req);
  Caller c;
  NewName nn;
  memset(&nn, 0, sizeof nn);
  nn.dfd = -1;
  vfs_place(v, req, NULL, &c);
  int err = 0;
  Node *n = vfs_pin(v, ino, &c, &err);
  if (!err) err = vfs_link_source_check(v, &c, n);
  if (!err) err = vfs_new_name(v, &c, newparent, newname, &nn);
  if (!err && (n->kind != NODE_PASS && n->kind != NODE_RAM)) err = EPERM;
  if (!err && (n->special != SPECIAL_NONE || n->skeleton)) err = EPERM;
  if (!err && is_pass(n) != nn.pass) err = EXDEV;
  if (!err) err = vfs_decide_link(v, &c, n, nn.path, nn.pass);
  struct fuse_entry_param e;
  if (!err && nn.pass) {
    if (S_ISDIR(n->ftype)) err = EPERM;
    int sfd = err ? -1 : vfs_pass_reach(v, &c, n, O_PATH, "fs:write");
    if (!err && sfd < 0)
      err = -sfd;
    else if (!err && linkat(sfd, "", nn.dfd, newname, AT_EMPTY_PATH) < 0)
      err = errno;
    if (sfd >= 0) close(sfd);
    if (!err) {
      vfs_changed(v, &c, nn.path);
      g_mutex_lock(&v->lock);
      vfs_node_set_parent(v, n, nn.dir, newname); /* follow the newest name */
      err = vfs_fill_entry(v, n, &e);
      g_mutex_unlock(&v->lock);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    if (S_ISDIR(n->mode))
      err = EPERM;
    else if (n->cmd != nn.dir->cmd)
      err = EXDEV;
    else if (g_hash_table_contains(nn.dir->children, newname))
      err = EEXIST;
    else {
      vfs_node_set_parent(v, n, nn.dir, newname);
      g_hash_table_insert(nn.dir->children, g_strdup(newname), n);
      vfs_node_ref(n);
      n->nlink++;
      now_ts(&n->ctime);
      nn.dir->mtime = nn.dir->ctime = n->ctime;
      err = vfs_fill_entry(v, n, &e);
    }
    g_mutex_unlock(&v->lock);
  }
  vfs_unpin(v, n);
  vfs_new_name_clear(v, &nn);
  vfs_reply_entry_or_err(req, err, &e);
}

/* ---- removing and renaming ---- */

/* After unlinking the name a hard-linked file's node was recorded under, move
 * the node to another of its names in the same directory (if any), so its
 * reported path stays a real one. */
static void pass_follow_other_link(BoxVfs *v, Node *dir, const char *name, const NameId *gone)
{
  g_mutex_lock(&v->lock);
  Node *n = vfs_pass_find(v, gone->dev, gone->ino);
  bool stale = n && n->parent == dir && strcmp(n->name, name) == 0;
  if (stale) vfs_node_ref(n);
  g_mutex_unlock(&v->lock);
  if (!stale) return;
  struct stat st;
  char *other = NULL;
  int nfd = vfs_node_fd_get(v, n, false), dfd = vfs_node_fd_get(v, dir, false);
  if (nfd >= 0 && dfd >= 0 && fstat(nfd, &st) == 0 && st.st_nlink > 0) {
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0) close(fd);
    struct dirent *de;
    while (d && !other && (de = readdir(d)) != NULL) {
      if (de->d_ino != gone->ino) continue;
      NameId id;
      vfs_name_id(dfd, de->d_name, &id);
      if (id.exists && id.dev == gone->dev && id.ino == gone->ino) other = g_strdup(de->d_name);
    }
    if (d) closedir(d);
  }
  vfs_node_fd_put(n, nfd);
  vfs_node_fd_put(dir, dfd);
  g_mutex_lock(&v->lock);
  if (other && n->parent == dir && strcmp(n->name, name) == 0)
    vfs_node_set_parent(v, n, dir, other);
  vfs_node_unref(v, n);
  g_mutex_unlock(&v->lock);
  g_free(other);
}

/* Before a name that is not a directory is removed: no other node's path
 * runs through it, so only its own node (if any) loses its proven place;
 * every other node stays settled (vfs_watch_moved would unsettle them all,
 * and a directory being emptied would be walked to again for each name). */
static void unsettle_name(BoxVfs *v, const NameId *id)
{
  if (!id->exists) return;
  g_mutex_lock(&v->lock);
  Node *n = vfs_pass_find(v, id->dev, id->ino);
  if (n) n->settled = 0;
  g_mutex_unlock(&v->lock);
}

static void remove_common(fuse_req_t req, fuse_ino_t parent, const char *name, bool dir)
{
  BoxVfs *v = V(req);
  Caller c;
  NewName nn;
  int err = vfs_new_name_request(v, req, &c, parent, name, &nn);
  if (!err) err = vfs_sticky_check(v, &c, &nn, name);
  NameId before = { 0 };
  if (!err && nn.pass) vfs_name_id(nn.dfd, name, &before);
  VfsObjId gone = { before.dev, before.ino };
  if (!err)
    err = vfs_decide_remove(v, &c, nn.path, nn.pass, dir, nn.pass && before.exists ? &gone : NULL);
  if (!err && nn.pass) {
    NameId now;
    vfs_name_id(nn.dfd, name, &now);
    if (!vfs_name_same(&before, &now)) {
      vfs_enforce(v, &c, "fs:delete", nn.path, true, "identity", VFS_IDENTITY_WHY);
      err = EACCES;
    } else if (dir ? (vfs_watch_moved(v), unlinkat(nn.dfd, name, AT_REMOVEDIR)) < 0
                   : (unsettle_name(v, &before), unlinkat(nn.dfd, name, 0)) < 0) {
      err = errno;
    } else {
      vfs_changed(v, &c, nn.path);
      if (!dir && before.exists && before.nlink > 1)
        pass_follow_other_link(v, nn.dir, name, &before);
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    Node *n = g_hash_table_lookup(nn.dir->children, name);
    if (!n)
      err = ENOENT;
    else if (dir && !S_ISDIR(n->mode))
      err = ENOTDIR;
    else if (!dir && S_ISDIR(n->mode))
      err = EISDIR;
    else if (dir && g_hash_table_size(n->children) > 0)
      err = ENOTEMPTY;
    else if (n->special != SPECIAL_NONE)
      err = EACCES;
    else if (n->skeleton)
      err = EBUSY; /* a slot's layout outlives the command */
    else
      vfs_ram_unlink(v, nn.dir, name);
    g_mutex_unlock(&v->lock);
  }
  vfs_new_name_clear(v, &nn);
  vfs_reply_err(req, err);
}

void vfs_run_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  remove_common(req, parent, name, false);
}

void vfs_run_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  remove_common(req, parent, name, true);
}

/* lock held: is a an ancestor of (or equal to) b? */
static bool ancestor_of(Node *a, Node *b)
{
  for (Node *p = b; p; p = p->parent)
    if (p == a) return true;
  return false;
}

void vfs_run_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                    const char *newname, unsigned int flags)
{
  BoxVfs *v = V(req);
  if ((flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)) ||
      (flags & RENAME_NOREPLACE && flags & RENAME_EXCHANGE)) {
    vfs_reply_err(req, EINVAL);
    return;
  }
  Caller c;
  vfs_place(v, req, NULL, &c);
  NewName src, dst;
  memset(&dst, 0, sizeof dst);
  dst.dfd = -1;
  int err = vfs_new_name(v, &c, parent, name, &src);
  if (!err) err = vfs_new_name(v, &c, newparent, newname, &dst);
  if (!err && src.pass != dst.pass) err = EXDEV;
  if (!err) err = vfs_sticky_check(v, &c, &src, name);
  if (!err) err = vfs_sticky_check(v, &c, &dst, newname);
  if (!err && src.dir != dst.dir) err = vfs_movedir_check(v, &c, &src, name);
  if (!err && src.dir != dst.dir && (flags & RENAME_EXCHANGE))
    err = vfs_movedir_check(v, &c, &dst, newname);
  NameId sid, did;
  bool dst_exists = false, dst_dir = false;
  if (!err) {
    if (src.pass) {
      vfs_name_id(src.dfd, name, &sid);
      vfs_name_id(dst.dfd, newname, &did);
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
  bool exchange = (flags & RENAME_EXCHANGE) != 0;
  if (!err) {
    VfsRename legs = { src.path, dst.path,   src.pass, dst.pass, sobj,
                       dobj,     dst_exists, dst_dir,  exchange };
    err = vfs_decide_rename(v, &c, &legs);
  }
  if (!err && src.pass) {
    NameId s2, d2;
    vfs_name_id(src.dfd, name, &s2);
    vfs_name_id(dst.dfd, newname, &d2);
    if (!vfs_name_same(&sid, &s2) || !vfs_name_same(&did, &d2)) {
      vfs_enforce(v, &c, "fs:move", src.path, true, "identity", VFS_IDENTITY_WHY);
      err = EACCES;
    } else if (vfs_watch_moved(v), renameat2(src.dfd, name, dst.dfd, newname, flags) < 0) {
      err = errno;
    } else {
      vfs_changed(v, &c, src.path);
      vfs_changed(v, &c, dst.path);
      g_mutex_lock(&v->lock);
      Node *moved = sid.exists ? vfs_pass_find(v, sid.dev, sid.ino) : NULL;
      Node *back = sid.exists && exchange && did.exists ? vfs_pass_find(v, did.dev, did.ino) : NULL;
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
    if (!sn)
      err = ENOENT;
    else if (sn->special != SPECIAL_NONE || (dn && dn->special != SPECIAL_NONE))
      err = EACCES;
    else if (sn == dn)
      err = 0; /* same object: nothing to do */
    else if (sn->skeleton || (dn && dn->skeleton))
      err = EBUSY;
    else if (exchange) {
      if (!dn)
        err = ENOENT;
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
    } else if (dn && (flags & RENAME_NOREPLACE))
      err = EEXIST;
    else if (S_ISDIR(sn->mode) && ancestor_of(sn, dst.dir))
      err = EINVAL;
    else if (dn && S_ISDIR(dn->mode) && !S_ISDIR(sn->mode))
      err = EISDIR;
    else if (dn && !S_ISDIR(dn->mode) && S_ISDIR(sn->mode))
      err = ENOTDIR;
    else if (dn && S_ISDIR(dn->mode) && g_hash_table_size(dn->children) > 0)
      err = ENOTEMPTY;
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
  vfs_new_name_clear(v, &src);
  vfs_new_name_clear(v, &dst);
  vfs_reply_err(req, err);
}
