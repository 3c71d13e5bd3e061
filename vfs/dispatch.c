/* dispatch.c — the table of FUSE handlers, the connection's setup (INIT),
 * and the hand-off of a request that will raise a decision: run on the
 * loop thread, or queued to the decision pool. */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <sys/stat.h>

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
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

/* ---- dispatch: requests that will raise a decision ----
 * Placed here, on the loop thread.  The request runs right here when its
 * caller decides nothing (tools, setup, the kernel itself) or policy answers
 * at once (a prompt policy: handing it to the decision pool would cost a
 * wake-up and a context switch per decided operation).  Otherwise it becomes
 * a job of the decision pool, which FUSE_INTERRUPT can cancel, and the loop
 * thread goes back to the kernel.  args: the request's arguments, its names
 * borrowed; place_fi: the open file that places a request the kernel makes
 * itself; fi: the open file the handler gets (copied). */
static void dispatch(fuse_req_t req, struct fuse_file_info *place_fi,
                     const struct fuse_file_info *fi, Job args)
{
  if (vfs_tree_of(req, args.ino) || vfs_tree_of(req, args.ino2)) {
    fuse_reply_err(req, EROFS); /* a change: the tree's reads are its own */
    return;
  }
  Caller c;
  vfs_job_set_inline(NULL, NULL);
  vfs_place(V(req), req, place_fi, &c);
  vfs_place_node(V(req), &c, args.ino);
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

static struct fuse_file_info *job_fi(Job *j)
{
  return j->has_fi ? &j->fi : NULL;
}

static void job_getattr(Job *j)
{
  vfs_run_getattr(j->req, j->ino, job_fi(j));
}
static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  const BoxVfsTree *t = vfs_tree_of(req, ino);
  if (t) return t->getattr(t->data, req, ino);
  Fh *fh = FH(fi);
  if (fh && fh->kind == FH_PASS_FILE && fh->fd >= 0) {
    /* fstat(2), or the kernel checking a file it reads: covered by the
     * decision that opened the handle, answered from its descriptor */
    struct stat st;
    if (fstat(fh->fd, &st) < 0) {
      fuse_reply_err(req, errno);
    } else {
      vfs_attr_out(V(req), &st);
      fuse_reply_attr(req, &st, 0.0);
    }
    return;
  }
  if (fi) { /* an open handle: covered by its opening decision */
    vfs_run_getattr(req, ino, fi);
    return;
  }
  dispatch(req, NULL, NULL, (Job){ .ino = ino, .run = job_getattr });
}

static void job_setattr(Job *j)
{
  vfs_run_setattr(j->req, j->ino, &j->attr, j->to_set, job_fi(j));
}
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi)
{
  dispatch(req, fi, fi, (Job){ .ino = ino, .attr = *attr, .to_set = to_set, .run = job_setattr });
}

static void job_access(Job *j)
{
  vfs_run_access(j->req, j->ino, j->mask);
}
static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
  if (vfs_tree_of(req, ino)) return (void)fuse_reply_err(req, mask & W_OK ? EROFS : 0);
  dispatch(req, NULL, NULL, (Job){ .ino = ino, .mask = mask, .run = job_access });
}

static void job_readlink(Job *j)
{
  vfs_run_readlink(j->req, j->ino);
}
static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
  const BoxVfsTree *t = vfs_tree_of(req, ino);
  if (t) return t->readlink(t->data, req, ino);
  dispatch(req, NULL, NULL, (Job){ .ino = ino, .run = job_readlink });
}

static void job_mkdir(Job *j)
{
  vfs_run_mkdir(j->req, j->ino, j->name, j->mode);
}
static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
  dispatch(req, NULL, NULL,
           (Job){ .ino = parent, .name = (char *)name, .mode = mode, .run = job_mkdir });
}

static void job_mknod(Job *j)
{
  vfs_run_mknod(j->req, j->ino, j->name, j->mode, j->rdev);
}
static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
  dispatch(
    req, NULL, NULL,
    (Job){ .ino = parent, .name = (char *)name, .mode = mode, .rdev = rdev, .run = job_mknod });
}

static void job_symlink(Job *j)
{
  vfs_run_symlink(j->req, j->name2, j->ino, j->name);
}
static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
  dispatch(req, NULL, NULL,
           (Job){ .ino = parent, .name = (char *)name, .name2 = (char *)link, .run = job_symlink });
}

static void job_link(Job *j)
{
  vfs_run_link(j->req, j->ino, j->ino2, j->name);
}
static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
  dispatch(req, NULL, NULL,
           (Job){ .ino = ino, .ino2 = newparent, .name = (char *)newname, .run = job_link });
}

static void job_unlink(Job *j)
{
  vfs_run_unlink(j->req, j->ino, j->name);
}
static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  dispatch(req, NULL, NULL, (Job){ .ino = parent, .name = (char *)name, .run = job_unlink });
}

static void job_rmdir(Job *j)
{
  vfs_run_rmdir(j->req, j->ino, j->name);
}
static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  dispatch(req, NULL, NULL, (Job){ .ino = parent, .name = (char *)name, .run = job_rmdir });
}

static void job_rename(Job *j)
{
  vfs_run_rename(j->req, j->ino, j->name, j->ino2, j->name2, j->flags);
}
static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags)
{
  dispatch(req, NULL, NULL,
           (Job){ .ino = parent,
                  .name = (char *)name,
                  .ino2 = newparent,
                  .name2 = (char *)newname,
                  .flags = flags,
                  .run = job_rename });
}

static void job_open(Job *j)
{
  vfs_run_open(j->req, j->ino, &j->fi);
}
static void job_opendir(Job *j)
{
  vfs_run_opendir(j->req, j->ino, &j->fi);
}
/* A file or a directory opened: by the view's own tree for its nodes. */
static void open_node(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, bool dir)
{
  const BoxVfsTree *t = vfs_tree_of(req, ino);
  if (t) return (dir ? t->opendir : t->open)(t->data, req, ino, fi);
  dispatch(req, NULL, fi, (Job){ .ino = ino, .run = dir ? job_opendir : job_open });
}
static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  open_node(req, ino, fi, false);
}

static void job_create(Job *j)
{
  vfs_run_create(j->req, j->ino, j->name, j->mode, &j->fi);
}
static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi)
{
  dispatch(req, NULL, fi,
           (Job){ .ino = parent, .name = (char *)name, .mode = mode, .run = job_create });
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  open_node(req, ino, fi, true);
}

const struct fuse_lowlevel_ops vfs_ops = {
  .init = op_init,
  .lookup = vfs_op_lookup,
  .forget = vfs_op_forget,
  .forget_multi = vfs_op_forget_multi,
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
  .read = vfs_op_read,
  .write = vfs_op_write,
  .flush = vfs_op_flush,
  .release = vfs_op_release,
  .fsync = vfs_op_fsync,
  .opendir = op_opendir,
  .readdir = vfs_op_readdir,
  .readdirplus = vfs_op_readdirplus,
  .releasedir = vfs_op_release,
  .fsyncdir = vfs_op_fsyncdir,
  .statfs = vfs_op_statfs,
  .access = op_access,
  .create = op_create,
  .fallocate = vfs_op_fallocate,
  .setxattr = vfs_op_setxattr,
  .getxattr = vfs_op_getxattr,
  .listxattr = vfs_op_listxattr,
  .removexattr = vfs_op_removexattr,
  /* Not implemented, on purpose, the kernel then acts alone: flock and
     * POSIX locks (local to this kernel), copy_file_range (generic copy
     * through READ/WRITE, each decided by its handle), lseek SEEK_DATA /
     * SEEK_HOLE (generic: all data), tmpfile (O_TMPFILE: EOPNOTSUPP). */
};
