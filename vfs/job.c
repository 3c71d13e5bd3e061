/* job.c — liveness: a request that waits for a decision is a job of the
 * decision pool, which FUSE_INTERRUPT or its command's end can cancel. */
#include "vfs/vfs-private.h"

#include <errno.h>

static __thread Job *tls_job;       /* the job this pool thread carries */
static __thread fuse_req_t tls_req; /* a request placed inline ... */
static __thread Caller tls_caller;  /* ... and where */

static bool cas_state(Job *job, int from, int to)
{
  return __atomic_compare_exchange_n(&job->state, &from, to, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST);
}

Job *vfs_job_current(void)
{
  return tls_job;
}

bool vfs_job_caller(fuse_req_t req, Caller *c)
{
  if (tls_job && tls_job->req == req) {
    *c = tls_job->caller;
    return true;
  }
  if (tls_req == req && req) {
    *c = tls_caller;
    return true;
  }
  return false;
}

void vfs_job_set_inline(fuse_req_t req, const Caller *c)
{
  tls_req = req;
  if (c) tls_caller = *c;
}

/* Answers a pending job EINTR (at most once, whoever comes first). */
static bool job_cancel(Job *job)
{
  if (!cas_state(job, JOB_QUEUED, JOB_CANCELLED) && !cas_state(job, JOB_DECIDING, JOB_CANCELLED))
    return false;
  __atomic_add_fetch(&job->v->cancelled, 1, __ATOMIC_SEQ_CST);
  fuse_reply_err(job->req, EINTR);
  return true;
}

/* FUSE_INTERRUPT for a job's request (on a loop thread, under req's lock). */
static void job_interrupt(fuse_req_t req, void *data)
{
  (void)req;
  job_cancel(data);
}

bool vfs_job_cancelled(const Job *job)
{
  return __atomic_load_n(&job->state, __ATOMIC_SEQ_CST) == JOB_CANCELLED;
}

bool vfs_job_decide_begin(Job *job)
{
  if (fuse_req_interrupted(job->req) && cas_state(job, JOB_ACTIVE, JOB_CANCELLED)) {
    /* interrupted before it could be cancelled (the callback found it ACTIVE) */
    fuse_req_interrupt_func(job->req, NULL, NULL);
    __atomic_add_fetch(&job->v->cancelled, 1, __ATOMIC_SEQ_CST);
    fuse_reply_err(job->req, EINTR);
    return false;
  }
  return cas_state(job, JOB_ACTIVE, JOB_DECIDING);
}

bool vfs_job_decide_end(Job *job)
{
  return cas_state(job, JOB_DECIDING, JOB_ACTIVE);
}

bool vfs_job_may_reply(Job *job)
{
  if (vfs_job_cancelled(job)) return false;
  /* ACTIVE: nobody can cancel it now.  Take the interrupt callback off,
   * waiting out one that is running (it holds the request's lock). */
  fuse_req_interrupt_func(job->req, NULL, NULL);
  return true;
}

void vfs_job_free(Job *job)
{
  g_free(job->name);
  g_free(job->name2);
  g_free(job);
}

void vfs_job_thread(gpointer data, gpointer user)
{
  Job *job = data;
  BoxVfs *v = user;
  if (cas_state(job, JOB_QUEUED, JOB_ACTIVE)) {
    tls_job = job;
    job->run(job);
    tls_job = NULL;
  }
  g_mutex_lock(&v->pending_lock);
  g_hash_table_remove(v->pending, job);
  /* An interrupt callback may still hold a cancelled job's pointer (it
   * read it before the EINTR reply took it off): keep those until stop. */
  if (vfs_job_cancelled(job))
    g_ptr_array_add(v->graveyard, job);
  else
    vfs_job_free(job);
  g_mutex_unlock(&v->pending_lock);
}

void vfs_job_submit(BoxVfs *v, Job *job)
{
  job->v = v;
  job->state = JOB_QUEUED;
  g_mutex_lock(&v->pending_lock);
  g_hash_table_add(v->pending, job);
  g_mutex_unlock(&v->pending_lock);
  fuse_req_interrupt_func(job->req, job_interrupt, job);
  g_thread_pool_push(v->pool, job, NULL);
}

/* Answers every pending job of the command EINTR. */
void vfs_job_cancel_command(BoxVfs *v, int command)
{
  g_mutex_lock(&v->pending_lock);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, v->pending);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    Job *job = key;
    if (job->caller.cmd == command) job_cancel(job);
  }
  g_mutex_unlock(&v->pending_lock);
}
