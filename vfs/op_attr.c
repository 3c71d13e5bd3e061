/* op_attr.c — operations on an existing node's metadata: GETATTR,
 * SETATTR, ACCESS, READLINK, STATFS, and the extended attributes (refused). */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* n's attributes, read while n was at its place: 0 or -errno (-ESTALE: it
 * is not there now).  Attributes read after a walk found n belong to an
 * object that may have moved out of every root in between (this thread can
 * be preempted between the two), so they count only if n is still at its
 * place after they were read: no name changed meanwhile (watch.c), or a
 * second walk finds n there again.  Where no name has changed since a walk
 * found n, no walk is needed at all. */
static int pass_stat_placed(BoxVfs *v, const Caller *c, Node *n, struct stat *st)
{
  guint64 settled;
  if (vfs_pass_is_root(v, n, &settled))
    return fstatat(n->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
  settled = vfs_node_stamp(v, n);
  if (settled && n->fd >= 0 && fstatat(n->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
      vfs_watch_settled(v, settled))
    return 0;
  guint64 moves;
  int fd = vfs_pass_reach_st(v, c, n, O_PATH, "fs:read", st, &moves);
  if (fd < 0) return fd;
  close(fd); /* st: read by pass_reach_st on this very descriptor */
  if (vfs_watch_settled(v, moves)) return 0;
  struct stat again;
  fd = vfs_pass_reach_st(v, c, n, O_PATH, "fs:read", &again, NULL);
  if (fd < 0) return fd;
  close(fd);
  return 0;
}

void vfs_run_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, fi, &c);
  struct stat st;
  if (ino == FUSE_ROOT_ID && !c.placed) {
    g_mutex_lock(&v->lock);
    vfs_virt_stat(v->root, &st);
    g_mutex_unlock(&v->lock);
    vfs_reply_attr(req, &st, 0.0);
    return;
  }
  Node *n = vfs_pin_or_reply(v, req, ino, &c);
  if (!n) return;
  int err = 0;
  bool decided = !fi && c.decides && decidable(n);
  if (decided) err = vfs_decide_getattr(v, &c, n);
  /* granted before the attributes are read: a change made outside after
   * the read then finds the grant to expire */
  double timeout = !err && decided && is_pass(n) ? vfs_attr_grant(v, &c, n) : 0.0;
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
  if (!err && !done) err = vfs_node_stat(v, n, &st);
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
  } else if (!err && n->special == SPECIAL_TRUST) {
    g_mutex_lock(&v->lock);
    st.st_size = v->trust_pem ? (off_t)strlen(v->trust_pem) : 0;
    g_mutex_unlock(&v->lock);
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
  vfs_unpin(v, n);
  if (err)
    vfs_reply_err(req, err);
  else
    vfs_reply_attr(req, &st, done ? timeout : 0.0);
}

/* chown(2) rules for a caller the kernel did not check (no
 * default_permissions): root may; the owner may keep the owner and change the
 * group to one of its own groups; nobody else may. */
static int chown_allowed(const Caller *c, const struct stat *st, uid_t u, gid_t g)
{
  if (c->uid == 0) return 0;
  bool owner = st->st_uid == c->uid;
  if (u != (uid_t)-1 && (u != st->st_uid || !owner)) return EPERM;
  if (g != (gid_t)-1 && (!owner || (g != st->st_gid && !vfs_caller_in_group(c, g)))) return EPERM;
  return 0;
}

/* Times of a passthrough symlink: through its parent, reached again. */
static int symlink_utimens(BoxVfs *v, Node *n, const struct timespec tv[2])
{
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
    int pfd = vfs_pass_reach(v, &none, parent, O_PATH | O_DIRECTORY, "fs:write");
    if (pfd >= 0) {
      r = utimensat(pfd, name, tv, AT_SYMLINK_NOFOLLOW);
      int e = errno;
      close(pfd);
      errno = e;
    } else {
      errno = -pfd;
    }
  }
  if (parent) vfs_unpin(v, parent);
  g_free(name);
  return r;
}

/* The kernel's own mode change before a write or truncate by a caller
 * without CAP_FSETID: libfuse 3.14 takes neither HANDLE_KILLPRIV flavour,
 * so file_remove_privs arrives as a SETATTR of the mode, sent as the writer.
 * It is told from a chmod by what it asks (the set-id bits off, nothing
 * else) and by who may ask it (a writer of the file). */
static bool kills_setid(const Caller *c, const struct stat *st, const struct stat *attr,
                        bool has_fh)
{
  mode_t cur = st->st_mode & 07777, want = attr->st_mode & 07777;
  mode_t setid = S_ISUID | S_ISGID;
  if (!S_ISREG(st->st_mode) || want == cur || (want | setid) != (cur | setid)) return false;
  return has_fh || vfs_perm_ok(st, c, W_OK);
}

/* The checks the kernel leaves to us for SETATTR (no default_permissions). */
static int setattr_allowed(const Caller *c, const struct stat *st, const struct stat *attr,
                           int to_set, bool has_fh)
{
  if (c->uid == 0) return 0;
  bool owner = st->st_uid == c->uid;
  /* a truncate's write permission first: its set-id kill rides in the
   * same request, and the kernel's own check would have said EACCES */
  if ((to_set & FUSE_SET_ATTR_SIZE) && !has_fh && !vfs_perm_ok(st, c, W_OK)) return EACCES;
  if ((to_set & FUSE_SET_ATTR_MODE) && !owner && !kills_setid(c, st, attr, has_fh)) return EPERM;
  bool explicit_time = (to_set & FUSE_SET_ATTR_ATIME && !(to_set & FUSE_SET_ATTR_ATIME_NOW)) ||
                       (to_set & FUSE_SET_ATTR_MTIME && !(to_set & FUSE_SET_ATTR_MTIME_NOW));
  if (explicit_time && !owner) return EPERM;
  if ((to_set & (FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW)) && !owner &&
      !vfs_perm_ok(st, c, W_OK))
    return EACCES;
  return 0;
}

static void proc_path(char *buf, size_t n, int fd)
{
  snprintf(buf, n, "/proc/self/fd/%d", fd);
}

/* The times of the node's own O_PATH descriptor: through the descriptor
 * itself (AT_EMPTY_PATH), not its /proc/self/fd link, whose walk through
 * procfs cost every times-only SETATTR (tar's futimens of each member) 2-3
 * us more; the link where a kernel refuses the empty path. */
static int node_utimens(int vfd, const char *pp, const struct timespec tv[2])
{
  int r = utimensat(vfd, "", tv, AT_EMPTY_PATH);
  if (r < 0 && errno == EINVAL) r = utimensat(AT_FDCWD, pp, tv, 0);
  return r;
}

static int setattr_pass(BoxVfs *v, const Caller *c, Node *n, int vfd, Fh *fh, struct stat *attr,
                        int to_set)
{
  char pp[64];
  proc_path(pp, sizeof pp, vfd);
  int ffd = (fh && fh->kind == FH_PASS_FILE) ? fh->fd : -1;
  struct stat cur;
  if (fstat(vfd, &cur) < 0) return errno;
  int e0 = setattr_allowed(c, &cur, attr, to_set, ffd >= 0);
  if (e0) return e0;
  if (to_set & FUSE_SET_ATTR_MODE) {
    if (S_ISLNK(n->ftype)) return EOPNOTSUPP;
    mode_t m = attr->st_mode & 07777;
    if (c->uid != 0 && (m & S_ISGID) && !vfs_caller_in_group(c, cur.st_gid)) m &= ~(mode_t)S_ISGID;
    int r = ffd >= 0 ? fchmod(ffd, m) : chmod(pp, m);
    if (r < 0) return errno;
  }
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    uid_t u = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
    gid_t g = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
    int e = chown_allowed(c, &cur, u, g);
    if (e) return e;
    if (fchownat(vfd, "", u, g, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) return errno;
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    int r = ffd >= 0 ? ftruncate(ffd, attr->st_size) : truncate(pp, attr->st_size);
    if (r < 0) return errno;
    mode_t kill = (to_set & FUSE_SET_ATTR_MODE) ? 0 : vfs_setid_kill(c, &cur);
    if (kill && chmod(pp, cur.st_mode & 07777 & ~kill) < 0) return errno;
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec tv[2];
    tv[0].tv_sec = 0;
    tv[1].tv_sec = 0;
    tv[0].tv_nsec = UTIME_OMIT;
    tv[1].tv_nsec = UTIME_OMIT;
    if (to_set & FUSE_SET_ATTR_ATIME_NOW)
      tv[0].tv_nsec = UTIME_NOW;
    else if (to_set & FUSE_SET_ATTR_ATIME)
      tv[0] = attr->st_atim;
    if (to_set & FUSE_SET_ATTR_MTIME_NOW)
      tv[1].tv_nsec = UTIME_NOW;
    else if (to_set & FUSE_SET_ATTR_MTIME)
      tv[1] = attr->st_mtim;
    int r;
    if (ffd >= 0)
      r = futimens(ffd, tv);
    else if (S_ISLNK(n->ftype))
      r = symlink_utimens(v, n, tv);
    else
      r = node_utimens(vfd, pp, tv);
    if (r < 0) return errno;
  }
  return 0;
}

static int setattr_ram(BoxVfs *v, Node *n, const Caller *c, struct stat *attr, int to_set,
                       bool has_fh)
{
  int err = 0;
  g_mutex_lock(&v->lock);
  struct stat cur;
  vfs_virt_stat(n, &cur);
  struct timespec now;
  now_ts(&now);
  if (n->special != SPECIAL_NONE) err = EACCES;
  if (!err) err = setattr_allowed(c, &cur, attr, to_set, has_fh);
  if (!err && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
    err = chown_allowed(c, &cur, (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1,
                        (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1);
  if (!err && (to_set & FUSE_SET_ATTR_SIZE)) {
    if (!n->data)
      err = S_ISDIR(n->mode) ? EISDIR : EINVAL;
    else if (attr->st_size < 0)
      err = EINVAL;
    else
      err = vfs_ram_resize(v, n, (size_t)attr->st_size);
    if (!err) n->mtime = now;
    if (!err && !(to_set & FUSE_SET_ATTR_MODE)) n->mode &= ~vfs_setid_kill(c, &cur);
  }
  if (!err && (to_set & FUSE_SET_ATTR_MODE)) {
    mode_t m = attr->st_mode & 07777;
    if (c->uid != 0 && (m & S_ISGID) && !vfs_caller_in_group(c, n->gid)) m &= ~(mode_t)S_ISGID;
    n->mode = (n->mode & S_IFMT) | m;
  }
  if (!err && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) && !S_ISDIR(n->mode)) {
    /* as chown(2) on a file: the set-uid bit goes, set-gid where it means one */
    n->mode &= ~(mode_t)S_ISUID;
    if (n->mode & S_IXGRP) n->mode &= ~(mode_t)S_ISGID;
  }
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

/* A change of times alone, by a command that holds the node open for
 * writing: the decision that opened it covers it (a write sets the times
 * too), so that restoring a file's times after writing it is no second
 * decision.  Times of a file the command did not open for writing, or set
 * with anything else, are decided. */
static bool times_covered(BoxVfs *v, const Caller *c, Node *n, int to_set)
{
  const int times = FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                    FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME;
  return c->decides && to_set && !(to_set & ~times) && vfs_writing(v, c, n);
}

void vfs_run_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                     struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  Caller c;
  Node *n = vfs_pin_request(v, req, ino, fi, &c);
  if (!n) return;
  int err = 0;
  if (n->kind != NODE_PASS && n->kind != NODE_RAM) err = EACCES;
  /* chown's ids, as the caller's, in this namespace's terms */
  vfs_ids_in(v, &attr->st_uid, &attr->st_gid);
  bool covered = times_covered(v, &c, n, to_set);
  if (!err && decidable(n) && !covered) err = vfs_decide_setattr(v, &c, n, to_set);
  if (!err && is_pass(n)) {
    /* covered: the object the command holds open, wherever its name is
     * now, as futimens on that handle would set (no walk from the root) */
    int vfd = covered ? vfs_node_fd_get(v, n, false) : vfs_pass_reach(v, &c, n, O_PATH, "fs:write");
    g_mutex_lock(&v->lock);
    bool gone = vfd == -ESTALE && n->opens > 0;
    g_mutex_unlock(&v->lock);
    /* ftruncate(2), fchmod(2)… on an open file whose name is gone
     * (unlinked, as a TemporaryFile's): the object itself, as fstat's
     * answer; no name is left for a checkpoint to keep */
    if (gone) vfd = vfs_node_fd_get(v, n, false);
    if (vfd < 0) {
      err = -vfd;
    } else {
      err = setattr_pass(v, &c, n, vfd, FH(fi), attr, to_set);
      vfs_node_fd_put(n, vfd);
      /* times alone are not kept by a checkpoint */
      if (!err && !gone &&
          (to_set &
           (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
        vfs_changed_node(v, &c, n);
    }
  } else if (!err) {
    err = setattr_ram(v, n, &c, attr, to_set, FH(fi) != NULL);
  }
  struct stat st;
  if (!err) err = vfs_node_stat(v, n, &st);
  vfs_unpin(v, n);
  if (err)
    vfs_reply_err(req, err);
  else
    vfs_reply_attr(req, &st, 0.0);
}

void vfs_run_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
  BoxVfs *v = V(req);
  Caller c;
  Node *n = vfs_pin_request(v, req, ino, NULL, &c);
  if (!n) return;
  int err = 0;
  struct stat st;
  err = vfs_node_stat(v, n, &st);
  if (!err && decidable(n)) err = vfs_decide_access(v, &c, n, S_ISDIR(st.st_mode));
  if (!err && is_pass(n)) {
    int vfd = vfs_pass_reach(v, &c, n, O_PATH, "fs:read");
    if (vfd < 0)
      err = -vfd;
    else
      close(vfd);
  }
  if (!err && mask != F_OK && !vfs_perm_ok(&st, &c, mask)) err = EACCES;
  vfs_unpin(v, n);
  vfs_reply_err(req, err);
}

void vfs_run_readlink(fuse_req_t req, fuse_ino_t ino)
{
  BoxVfs *v = V(req);
  Caller c;
  Node *n = vfs_pin_request(v, req, ino, NULL, &c);
  if (!n) return;
  int err = 0;
  if (decidable(n)) err = vfs_decide_readlink(v, &c, n);
  char *target = NULL;
  if (!err && is_pass(n)) {
    int vfd = vfs_pass_reach(v, &c, n, O_PATH | O_NOFOLLOW, "fs:read");
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
    if (n->target)
      target = g_strdup(n->target);
    else
      err = EINVAL;
    g_mutex_unlock(&v->lock);
  }
  vfs_unpin(v, n);
  if (err)
    vfs_reply_err(req, err);
  else
    vfs_reply_readlink(req, target);
  g_free(target);
}

void vfs_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
  BoxVfs *v = V(req);
  Caller c;
  vfs_place(v, req, NULL, &c);
  struct statvfs sv;
  memset(&sv, 0, sizeof sv);
  sv.f_bsize = sv.f_frsize = 4096;
  sv.f_namemax = NAME_MAX;
  if (c.placed) {
    int err;
    Node *n = vfs_pin(v, ino, &c, &err);
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
    vfs_unpin(v, n);
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
    guint64 max_b =
      v->ram_max_bytes ? v->ram_max_bytes : (guint64)v->ram_max_inodes * VFS_RAM_MAX_FILE;
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
void vfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                     size_t size, int flags)
{
  (void)ino, (void)name, (void)value, (void)size, (void)flags;
  vfs_reply_err(req, ENOSYS);
}
void vfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
  (void)ino, (void)name, (void)size;
  vfs_reply_err(req, ENOSYS);
}
void vfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
  (void)ino, (void)size;
  vfs_reply_err(req, ENOSYS);
}
void vfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
  (void)ino, (void)name;
  vfs_reply_err(req, ENOSYS);
}
