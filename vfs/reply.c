/* reply.c — every answer to a request that may carry a decision goes
 * through here: a job answered EINTR already (cancelled) is not answered
 * again, and the outcomes of the request's permits are recorded before the
 * reply, so the history has them by the time the caller sees the result
 * (and decides its next request). */
#include "vfs/vfs-private.h"

#include <errno.h>

/* Whether the reply may go: not for a job answered already, whose permits
 * then get no outcome; otherwise they get result, before the reply. */
static bool reply_gate(const char *result)
{
  Job *j = vfs_job_current();
  if (j && !vfs_job_may_reply(j)) {
    vfs_outcome_flush(NULL);
    return false;
  }
  vfs_outcome_flush(result);
  return true;
}

int vfs_reply_err(fuse_req_t req, int err)
{
  if (!reply_gate(err == 0 ? "completed" : err == EIO ? "indeterminate" : NULL)) return -1;
  return fuse_reply_err(req, err);
}

int vfs_reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
  struct fuse_entry_param out = *e;
  vfs_attr_out(V(req), &out.attr);
  return reply_gate("completed") ? fuse_reply_entry(req, &out) : -1;
}

int vfs_reply_attr(fuse_req_t req, const struct stat *st, double timeout)
{
  struct stat out = *st;
  vfs_attr_out(V(req), &out);
  return reply_gate("completed") ? fuse_reply_attr(req, &out, timeout) : -1;
}

int vfs_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
  return reply_gate("descriptor_issued") ? fuse_reply_open(req, fi) : -1;
}

int vfs_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
                     const struct fuse_file_info *fi)
{
  struct fuse_entry_param out = *e;
  vfs_attr_out(V(req), &out.attr);
  return reply_gate("descriptor_issued") ? fuse_reply_create(req, &out, fi) : -1;
}

int vfs_reply_readlink(fuse_req_t req, const char *link)
{
  return reply_gate("completed") ? fuse_reply_readlink(req, link) : -1;
}

void vfs_reply_entry_or_err(fuse_req_t req, int err, struct fuse_entry_param *e)
{
  if (err) {
    vfs_reply_err(req, err);
  } else if (vfs_reply_entry(req, e) != 0) {
    /* not received (cancelled, or the caller is gone): drop its reference */
    Job *j = vfs_job_current();
    BoxVfs *v = j ? j->v : V(req);
    g_mutex_lock(&v->lock);
    vfs_node_forget(v, e->ino, 1);
    g_mutex_unlock(&v->lock);
  }
}
