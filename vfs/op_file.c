/* op_file.c — open files: OPEN, CREATE, and the operations on a file
 * handle (READ, WRITE, FLUSH, RELEASE, FSYNC, FALLOCATE). */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

Fh *vfs_fh_new(FhKind kind, int cmd, Node *n)
{
  Fh *fh = vfs_zalloc(sizeof *fh);
  __atomic_add_fetch(&n->opens, 1, __ATOMIC_SEQ_CST);
  fh->kind = kind;
  fh->cmd = cmd;
  fh->node = n; /* takes over the caller's pin */
  fh->fd = -1;
  fh->backing = -1;
  return fh;
}

/* A node without a descriptor of its own lists its open files: an object
 * unlinked or renamed away while open is still read through them. */
static Fh *fh_pass_file(BoxVfs *v, int cmd, Node *n, int fd)
{
  Fh *fh = vfs_fh_new(FH_PASS_FILE, cmd, n);
  fh->fd = fd;
  if (n->fd < 0) {
    g_mutex_lock(&v->lock);
    n->open_files = g_slist_prepend(n->open_files, fh);
    g_mutex_unlock(&v->lock);
  }
  return fh;
}

static void holders_count(Holders *h, int cmd, bool on)
{
  if (on && h->count++ == 0) {
    h->cmd = cmd;
    h->mixed = false;
  } else if (on && h->cmd != cmd) {
    h->mixed = true;
  } else if (!on) {
    h->count--;
  }
}

/* A handle opened by a deciding caller is counted on its node with the
 * command holding it.  For writing: that command's later change of the
 * node's times (futimens, as tar restores a member's) is covered by the
 * decision that opened it.  Of any kind: while the command alone holds
 * the node open, the kernel may keep the attributes it was permitted to
 * read (attrs.c), dropped at the last close.  A tool's handle (no
 * decision) covers nothing. */
void vfs_fh_hold(BoxVfs *v, Fh *fh, bool on, bool writing)
{
  Node *n = fh->node;
  bool held = fh->held != on, write = fh->writes != on && (writing || !on);
  if (fh->cmd < 0 || (!held && !write)) return;
  g_mutex_lock(&v->lock);
  if (held) {
    holders_count(&n->held, fh->cmd, on);
    fh->held = on;
  }
  if (write) {
    holders_count(&n->writing, fh->cmd, on);
    fh->writes = on;
  }
  bool expire = !on && n->held.count == 0 && n->attr_kept;
  if (expire) n->attr_kept = false;
  g_mutex_unlock(&v->lock);
  if (expire) vfs_attr_expire(v, n->ino);
}

/* Whether c's command holds n open for writing, alone. */
bool vfs_writing(BoxVfs *v, const Caller *c, Node *n)
{
  g_mutex_lock(&v->lock);
  bool mine = vfs_holders_are(&n->writing, c->cmd);
  g_mutex_unlock(&v->lock);
  return mine;
}

static bool open_reads_only(int flags)
{
  return (flags & O_ACCMODE) == O_RDONLY && !(flags & O_TRUNC);
}

static int reply_direct_open(fuse_req_t req, struct fuse_file_info *fi, Fh *fh)
{
  fi->fh = (uint64_t)(uintptr_t)fh;
  fi->direct_io = 1;
  fi->keep_cache = 0;
  return vfs_reply_open(req, fi);
}

/* The control files, for reading only and read with direct_io: the
 * operator's decision log, a running command's record (.box/commands/<N>),
 * the caller's last denial (mydenial), the gateway's CA (the trust store). */
static void open_control(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, const Caller *c,
                         Node *n, bool ro)
{
  if (n->special == SPECIAL_DECISIONS) {
    /* the decision log, read live: direct_io so that every read (tail -f)
     * sees what boxd appended since */
    int fd = ro ? open(v->view_log, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) {
      vfs_unpin(v, n);
      vfs_reply_err(req, ro ? errno : EACCES);
      return;
    }
    Fh *fh = vfs_fh_new(FH_VIEW_LOG, c->cmd, n);
    fh->fd = fd;
    if (reply_direct_open(req, fi, fh) != 0) vfs_fh_free(v, fh);
    return;
  }
  if (n->special == SPECIAL_CMDINFO) {
    char *t = ro ? vfs_view_command_text(v, n->name) : NULL;
    if (!t) {
      vfs_unpin(v, n);
      vfs_reply_err(req, ro ? ENOENT : EACCES);
      return;
    }
    Fh *fh = vfs_fh_new(FH_MYDENIAL, c->cmd, n);
    fh->text = t;
    fh->text_len = strlen(t);
    if (reply_direct_open(req, fi, fh) != 0) vfs_fh_free(v, fh);
    return;
  }
  if (n->special == SPECIAL_MYDENIAL || n->special == SPECIAL_TRUST) {
    int err = ro ? 0 : EACCES;
    Fh *fh = NULL;
    if (!err) {
      fh = vfs_fh_new(FH_MYDENIAL, c->cmd, n);
      g_mutex_lock(&v->lock);
      const char *t =
        n->special == SPECIAL_TRUST ? v->trust_pem : vfs_denial_text(v, c->cmd, c->tid);
      fh->text = g_strdup(t ? t : "");
      fh->text_len = strlen(fh->text);
      g_mutex_unlock(&v->lock);
      if (reply_direct_open(req, fi, fh) != 0) {
        g_free(fh->text);
        g_free(fh);
        vfs_unpin(v, n);
      }
      return;
    }
    vfs_unpin(v, n);
    vfs_reply_err(req, err);
    return;
  }
}

/* The kernel's __FMODE_EXEC, in the flags of the OPEN an execve sends. */
#define OPEN_FOR_EXEC 040

/* An open for writing by a caller without CAP_FSETID drops the set-id bits
 * a write would: the kernel asks for some of them before a write (a SETATTR,
 * op_attr.c), none before a passed-through one, an atomic O_TRUNC or for
 * set-gid without group execute. */
static void kill_setid(const Caller *c, int fd)
{
  struct stat st;
  if (c->uid == 0 || fstat(fd, &st) < 0) return;
  mode_t kill = vfs_setid_kill(c, &st);
  if (kill) (void)!fchmod(fd, st.st_mode & 07777 & ~kill);
}

void vfs_run_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  Caller c;
  Node *n = vfs_pin_request(v, req, ino, NULL, &c);
  if (!n) return;
  int err = 0;
  bool ro = open_reads_only(fi->flags);
  if (n->special == SPECIAL_DECISIONS || n->special == SPECIAL_CMDINFO ||
      n->special == SPECIAL_MYDENIAL || n->special == SPECIAL_TRUST) {
    open_control(v, req, fi, &c, n, ro);
    return;
  }
  if (n->kind != NODE_PASS && n->kind != NODE_RAM) err = EISDIR;
  if (!err && decidable(n)) err = vfs_decide_open(v, &c, n, ro);
  if (!err) {
    int mask = (fi->flags & O_ACCMODE) == O_RDONLY   ? R_OK
               : (fi->flags & O_ACCMODE) == O_WRONLY ? W_OK
                                                     : (R_OK | W_OK);
    if (fi->flags & O_TRUNC) mask |= W_OK;
    /* An exec's open asks to run the file, not to read it (the kernel
     * reads it itself): execute permission alone, as natively.  The
     * kernel has refused a file without any execute bit, all root needs. */
    if (fi->flags & OPEN_FOR_EXEC) mask = c.uid == 0 ? 0 : X_OK;
    if (mask) err = vfs_check_perm(v, n, &c, mask);
  }
  Fh *fh = NULL;
  if (!err && is_pass(n)) {
    /* Reached again from the root, opened without O_TRUNC: truncate only
     * once the object is known to be the one judged. */
    int fd =
      vfs_pass_reach(v, &c, n, fi->flags & ~(O_TRUNC | O_NOFOLLOW), ro ? "fs:read" : "fs:write");
    if (fd < 0) {
      err = -fd;
    } else if ((fi->flags & O_TRUNC) && ftruncate(fd, 0) < 0) {
      err = errno;
      close(fd);
    } else {
      if (!ro) kill_setid(&c, fd);
      if (!ro) vfs_changed_node(v, &c, n);
      fh = fh_pass_file(v, c.cmd, n, fd);
      fh->backing = S_ISREG(n->ftype) ? vfs_backing_open(v, n, fd) : -1;
      /* the kernel refuses a passthrough open with any cache flag */
      fi->keep_cache = fh->backing < 0;
    }
  } else if (!err) {
    g_mutex_lock(&v->lock);
    if (S_ISDIR(n->mode))
      err = EISDIR;
    else if (!n->data)
      err = EACCES;
    else if (n->special != SPECIAL_NONE && !ro)
      err = EACCES;
    else {
      if (!ro) {
        struct stat st;
        vfs_virt_stat(n, &st);
        n->mode &= ~vfs_setid_kill(&c, &st);
      }
      if (fi->flags & O_TRUNC) {
        vfs_ram_resize(v, n, 0);
        now_ts(&n->mtime);
        n->ctime = n->mtime;
      }
      fh = vfs_fh_new(FH_RAM_FILE, c.cmd, n);
    }
    g_mutex_unlock(&v->lock);
  }
  if (err) {
    vfs_unpin(v, n);
    vfs_reply_err(req, err);
    return;
  }
  fh->flags = fi->flags;
  if (c.decides) vfs_fh_hold(v, fh, true, !ro);
  fi->fh = (uint64_t)(uintptr_t)fh;
  vfs_backing_for_reply(fh->backing);
  int sent = vfs_reply_open(req, fi);
  vfs_backing_for_reply(-1);
  if (sent != 0) {
    vfs_fh_hold(v, fh, false, false);
    vfs_backing_close(v, n, fh->backing);
    if (fh->fd >= 0) close(fh->fd);
    g_free(fh);
    vfs_unpin(v, n);
  }
}

void vfs_run_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                    struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  Caller c;
  NewName nn;
  int err = vfs_new_name_request(v, req, &c, parent, name, &nn);
  /* The kernel sends CREATE for a name its lookup found missing: the floor
   * is asked of no object, and the file is made with O_EXCL, so that it is
   * that new file or nothing.  A name made since (by someone else) is asked
   * of again before it is opened. */
  if (!err) err = vfs_decide_create(v, &c, nn.path, nn.pass);
  struct fuse_entry_param e;
  Fh *fh = NULL;
  if (!err && nn.pass) {
    int flags = (fi->flags & ~O_NOFOLLOW) | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(nn.dfd, name, flags | O_EXCL, mode & 07777);
    if (fd < 0 && errno == EEXIST && !(fi->flags & O_EXCL)) {
      VfsObjId at;
      const char *why = vfs_floor_reason(v, nn.path, vfs_name_obj(&nn, name, &at));
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
      bool chowned = vfs_daemon_root() && (c.uid != 0 || c.gid != 0);
      vfs_chown_new(&c, nn.dfd, name, S_IFREG | (mode & 07777));
      vfs_changed(v, &c, nn.path);
      /* the node is found by what the open made (no fstatat of the name; a
       * new node's own O_PATH open is still compared below); after a chown
       * the attributes are read again */
      err =
        vfs_pass_child_known(v, nn.dir, nn.dfd, name, &e, have && !chowned ? &fst : NULL, nn.moves);
      if (!err && (e.attr.st_dev != fst.st_dev || e.attr.st_ino != fst.st_ino)) {
        /* the name moved between the open and the resolution */
        g_mutex_lock(&v->lock);
        vfs_node_forget(v, e.ino, 1);
        g_mutex_unlock(&v->lock);
        vfs_enforce(v, &c, "fs:write", nn.path, true, "identity", VFS_IDENTITY_WHY);
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
      if (fi->flags & O_EXCL)
        err = EEXIST;
      else if (S_ISDIR(n->mode))
        err = EISDIR;
      else if (!n->data)
        err = EACCES;
      else if (fi->flags & O_TRUNC)
        vfs_ram_resize(v, n, 0);
    } else {
      n = vfs_ram_new(v, nn.dir->cmd, nn.dir, name, S_IFREG | (mode & 07777), c.uid, c.gid, &err);
    }
    if (!err) err = vfs_fill_entry(v, n, &e);
    if (!err) {
      vfs_node_ref(n);
      fh = vfs_fh_new(FH_RAM_FILE, c.cmd, n);
    }
    g_mutex_unlock(&v->lock);
  }
  vfs_new_name_clear(v, &nn);
  if (err) {
    vfs_reply_err(req, err);
    return;
  }
  fh->flags = fi->flags;
  if (c.decides) vfs_fh_hold(v, fh, true, true);
  fi->fh = (uint64_t)(uintptr_t)fh;
  vfs_backing_for_reply(fh->backing);
  int sent = vfs_reply_create(req, &e, fi);
  vfs_backing_for_reply(-1);
  if (sent != 0) {
    Node *n = fh->node;
    vfs_fh_hold(v, fh, false, false);
    vfs_backing_close(v, n, fh->backing);
    if (fh->fd >= 0) close(fh->fd);
    g_free(fh);
    g_mutex_lock(&v->lock);
    vfs_node_forget(v, e.ino, 1);
    vfs_node_unref(v, n);
    g_mutex_unlock(&v->lock);
  }
}

/* A file handle's op: placed by the caller (or by the handle for pid 0), and a
 * RAM handle only for its own command.  An op on a passthrough file handle
 * (read, write, fstat, fsync) is covered by the decision that opened it
 * and acts on that descriptor only: it needs no placement (which would cost
 * a readlink of the caller's namespace per READ). */
Fh *vfs_fh_check(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, int *err)
{
  Fh *pfh = FH(fi);
  if (pfh && pfh->kind == FH_PASS_FILE && pfh->fd >= 0) {
    *err = 0;
    return pfh;
  }
  Caller c;
  vfs_place(v, req, fi, &c);
  Fh *fh = FH(fi);
  *err = 0;
  if (!fh || !c.placed)
    *err = EACCES;
  else if (fh->node && fh->node->kind == NODE_RAM && !vfs_ram_reachable(&c, fh->node))
    *err = EACCES;
  return *err ? NULL : fh;
}

/* vfs_fh_check, the refusal answered (NULL). */
static Fh *fh_or_refuse(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi)
{
  int err;
  Fh *fh = vfs_fh_check(v, req, fi, &err);
  if (!fh) vfs_reply_err(req, err);
  return fh;
}

/* A copy of data's bytes [off, off + size): once the reply is written the
 * kernel may RELEASE the handle, and a RAM file may change once the lock
 * is let go. */
static char *slice_copy(const void *data, size_t len, off_t off, size_t size, size_t *got)
{
  *got = off >= 0 && (size_t)off < len ? MIN(size, len - (size_t)off) : 0;
  return *got ? g_memdup2((const char *)data + off, *got) : NULL;
}

/* The RAM file of fh with the lock held, or NULL once err is answered for
 * a handle of any other kind. */
static Node *ram_file_locked(BoxVfs *v, fuse_req_t req, Fh *fh, int err)
{
  if (fh->kind != FH_RAM_FILE) {
    vfs_reply_err(req, err);
    return NULL;
  }
  g_mutex_lock(&v->lock);
  return fh->node;
}

void vfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  const BoxVfsTree *t = vfs_tree_of(req, ino);
  if (t) return t->read(t->data, req, ino, size, off, fi);
  Fh *fh = fh_or_refuse(v, req, fi);
  if (!fh) return;
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
    if (got < 0)
      vfs_reply_err(req, errno);
    else
      fuse_reply_buf(req, b, (size_t)got);
    g_free(b);
    return;
  }
  if (fh->kind == FH_MYDENIAL) {
    size_t got;
    char *copy = slice_copy(fh->text, fh->text_len, off, size, &got);
    fuse_reply_buf(req, copy, got);
    g_free(copy);
    return;
  }
  Node *n = ram_file_locked(v, req, fh, EISDIR);
  if (!n) return;
  size_t got;
  char *copy = slice_copy(n->data->data, n->data->len, off, size, &got);
  now_ts(&n->atime);
  g_mutex_unlock(&v->lock);
  fuse_reply_buf(req, copy, got);
  g_free(copy);
}

void vfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                  struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  (void)ino;
  int err = 0;
  Fh *fh = fh_or_refuse(v, req, fi);
  if (!fh) return;
  if (fh->kind == FH_PASS_FILE) {
    ssize_t n = pwrite(fh->fd, buf, size, off);
    if (n < 0)
      vfs_reply_err(req, errno);
    else
      fuse_reply_write(req, (size_t)n);
    return;
  }
  Node *n = ram_file_locked(v, req, fh, EACCES);
  if (!n) return;
  if (fh->flags & O_APPEND) off = (off_t)n->data->len;
  if (off < 0)
    err = EINVAL;
  else {
    if ((size_t)off + size > n->data->len) err = vfs_ram_resize(v, n, (size_t)off + size);
    if (!err) {
      memcpy(n->data->data + off, buf, size);
      now_ts(&n->mtime);
      n->ctime = n->mtime;
    }
  }
  g_mutex_unlock(&v->lock);
  if (err)
    vfs_reply_err(req, err);
  else
    fuse_reply_write(req, size);
}

void vfs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void)ino;
  (void)fi;
  vfs_reply_err(req, ENOSYS);
}

void vfs_fh_free(BoxVfs *v, Fh *fh)
{
  vfs_fh_hold(v, fh, false, false);
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
  vfs_unpin(v, fh->node);
  g_free(fh);
}

/* RELEASE and RELEASEDIR */
void vfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  const BoxVfsTree *t = vfs_tree_of(req, ino);
  if (t) return t->release(t->data, req, ino, fi);
  Fh *fh = FH(fi);
  if (fh) vfs_fh_free(V(req), fh);
  vfs_reply_err(req, 0);
}

void vfs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  if (vfs_tree_of(req, ino)) return (void)fuse_reply_err(req, 0); /* nothing it holds is dirty */
  int err;
  Fh *fh = vfs_fh_check(v, req, fi, &err);
  if (fh && fh->kind == FH_PASS_FILE) {
    if ((datasync ? fdatasync(fh->fd) : fsync(fh->fd)) < 0) err = errno;
  }
  vfs_reply_err(req, err);
}

void vfs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                      struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  (void)ino;
  int err;
  Fh *fh = vfs_fh_check(v, req, fi, &err);
  if (fh && fh->kind == FH_PASS_FILE) {
    if (fallocate(fh->fd, mode, off, len) < 0) err = errno;
  } else if (fh) {
    err = EOPNOTSUPP;
  }
  vfs_reply_err(req, err);
}
