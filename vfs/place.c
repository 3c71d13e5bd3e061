/* place.c — placement: which command a request belongs to, by the
 * caller's PID namespace (remembered per loop thread). */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/nsfs.h>

/* ---- placement ---- */

static bool pidns_inode_read(pid_t pid, guint64 *out)
{
  char link[64], buf[64];
  snprintf(link, sizeof link, "/proc/%d/ns/pid", (int)pid);
  ssize_t n = readlink(link, buf, sizeof buf - 1);
  if (n <= 0) return false;
  buf[n] = '\0';
  unsigned long long ino;
  if (sscanf(buf, "pid:[%llu]", &ino) != 1) return false;
  *out = ino;
  return true;
}

/* The caller's PID namespace, remembered per FUSE loop thread.
 *
 * Why: the readlink of /proc/<tid>/ns/pid is the largest part of placing a
 * request (a procfs walk, about 2.5 µs), paid on every request.  A task's
 * PID namespace is fixed for its life, so what must be checked is only that
 * a remembered tid still names the same task: pids are reused.  Each slot
 * holds a pidfd of the task (PIDFD_THREAD: that very thread) opened when the
 * namespace was read; a pidfd never follows a reused number, and it polls
 * readable once its task has exited.  A live task owns its tid,
 * so a live pidfd whose tid is the caller's is the caller (which sleeps in
 * the kernel until we reply).  The check is one cheap syscall, and a miss
 * or any failure falls back to the readlink.  The slots are per thread, so
 * no other thread can close or replace a pidfd while it is being checked;
 * they are closed when the thread ends. */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define PLACE_SLOTS 16u
typedef struct {
  pid_t tid;
  int pidfd;
  guint64 nsino;
} PlaceSlot;

static void place_slots_free(gpointer p)
{
  PlaceSlot *slots = p;
  for (guint i = 0; i < PLACE_SLOTS; i++)
    if (slots[i].pidfd >= 0) close(slots[i].pidfd);
  g_free(slots);
}
static GPrivate place_slots = G_PRIVATE_INIT(place_slots_free);
static gint place_cache_off = -1; /* BOXFS_NO_PLACE_CACHE=1: off (measurements) */

/* Has the pidfd's task not exited yet?  (A poll costs about half a signal 0
 * through the pidfd, the other way to ask: 0.21 against 0.38 us here.) */
static bool pidfd_live(int pidfd)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  return poll(&p, 1, 0) == 0;
}

bool vfs_pidns_inode(pid_t pid, guint64 *out)
{
  if (g_atomic_int_get(&place_cache_off) < 0) {
    const char *e = getenv("BOXFS_NO_PLACE_CACHE");
    g_atomic_int_set(&place_cache_off, e && strcmp(e, "1") == 0);
  }
  if (g_atomic_int_get(&place_cache_off) == 1) return pidns_inode_read(pid, out);
  PlaceSlot *slots = g_private_get(&place_slots);
  if (!slots) {
    slots = g_new(PlaceSlot, PLACE_SLOTS);
    for (guint i = 0; i < PLACE_SLOTS; i++) slots[i] = (PlaceSlot){ 0, -1, 0 };
    g_private_set(&place_slots, slots);
  }
  PlaceSlot *s = &slots[(guint)pid % PLACE_SLOTS];
  if (s->pidfd >= 0 && s->tid == pid) {
    if (pidfd_live(s->pidfd)) {
      *out = s->nsino;
      return true;
    }
    close(s->pidfd);
    s->pidfd = -1;
  }
  /* pidfd first, namespace second: if the namespace read names the task
   * the pidfd holds, a later live check proves the same task */
  int fd = (int)syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
  if (!pidns_inode_read(pid, out)) {
    if (fd >= 0) close(fd);
    return false;
  }
  if (fd < 0) return true;
  /* the tid may have been reused between the two: the pidfd must still be
   * live now, so that it and the readlink saw the same task */
  if (!pidfd_live(fd)) {
    close(fd);
    return true;
  }
  if (s->pidfd >= 0) close(s->pidfd);
  s->tid = pid;
  s->pidfd = fd;
  s->nsino = *out;
  return true;
}

/* A PID namespace nested below a registered one (a tool running bwrap,
 * `unshare -p`, a browser sandbox): walk up with NS_GET_PARENT, a few levels
 * at most.  Only on a miss, so placed callers pay nothing. */
#define VFS_PIDNS_WALK 8
static PidnsEntry *nested_pidns(BoxVfs *v, pid_t pid)
{
  char link[64];
  snprintf(link, sizeof link, "/proc/%d/ns/pid", (int)pid);
  int fd = open(link, O_RDONLY | O_CLOEXEC);
  PidnsEntry *found = NULL;
  for (int depth = 0; fd >= 0 && depth < VFS_PIDNS_WALK && !found; depth++) {
    int up = ioctl(fd, NS_GET_PARENT);
    close(fd);
    fd = up;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) break;
    guint64 ino = st.st_ino;
    found = g_hash_table_lookup(v->pidns, &ino); /* lock held */
  }
  if (fd >= 0) close(fd);
  return found;
}

/* The kernel has applied the caller's umask to a create's mode (no
 * FUSE_CAP_DONT_MASK); ours must not be applied again.  Each thread that
 * acts gets a umask of its own, 0, leaving the rest of the process's. */
static void own_umask(void)
{
  static __thread bool done;
  if (done) return;
  done = true;
  if (unshare(CLONE_FS) == 0) umask(0);
}

void vfs_place(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, Caller *c)
{
  vfs_watch_actor();
  own_umask();
  if (vfs_job_caller(req, c)) return;
  const struct fuse_ctx *ctx = fuse_req_ctx(req);
  memset(c, 0, sizeof *c);
  c->cmd = -1;
  c->area = -1;
  c->tid = ctx->pid;
  c->uid = ctx->uid;
  c->gid = ctx->gid;
  vfs_ids_in(v, &c->uid, &c->gid);
  if (ctx->pid == 0) {
    Fh *fh = fi ? (Fh *)(uintptr_t)fi->fh : NULL;
    if (fh && fh->cmd >= 0) {
      g_mutex_lock(&v->lock);
      Command *fcm = vfs_command(v, fh->cmd);
      if (fcm) {
        c->placed = true;
        c->cmd = fh->cmd;
        c->area = fcm->area;
        c->is_tool = true; /* the kernel acting: never a decision */
      }
      g_mutex_unlock(&v->lock);
    }
    return;
  }
  guint64 ns;
  if (!vfs_pidns_inode(ctx->pid, &ns)) return;
  g_mutex_lock(&v->lock);
  PidnsEntry *e = g_hash_table_lookup(v->pidns, &ns);
  if (!e && g_hash_table_size(v->pidns) > 0) e = nested_pidns(v, ctx->pid);
  if (e) {
    Command *cm = vfs_command(v, e->cmd);
    if (cm) {
      c->placed = true;
      c->nsino = e->nsino;
      c->cmd = e->cmd;
      c->area = cm->area;
      c->is_tool = e->is_tool;
      c->decides = !e->is_tool && cm->running;
      c->ram_decides = e->is_tool && cm->running;
    }
  }
  g_mutex_unlock(&v->lock);
}

/* boxd's own threads walk the mount too (a launch checks the paths of its
 * plan, resolves programs).  Such a walk belongs to no command, but once
 * the kernel's entry for a name has expired (the watch expires a watched
 * directory's names when the first tool comes) it asks LOOKUP again, and a
 * refusal there makes the kernel drop the entry and detach every mount
 * made on or below it, in every namespace: the binds of views other
 * launches are building that very moment.  So boxd's own lookups of the
 * host-backed tree are answered as a tool's (no decision, no cached
 * entry); its RAM trees stay out of reach. */
bool vfs_place_daemon(BoxVfs *v, fuse_req_t req, fuse_ino_t parent, Caller *c)
{
  char task[48];
  snprintf(task, sizeof task, "/proc/self/task/%d", (int)fuse_req_ctx(req)->pid);
  if (fuse_req_ctx(req)->pid <= 0 || access(task, F_OK) != 0) return false;
  g_mutex_lock(&v->lock);
  Node *p = vfs_node_get(v, parent);
  bool host = p && (p->kind == NODE_ROOT || p->kind == NODE_PASSDIR || p->kind == NODE_CHAIN ||
                    p->kind == NODE_PASS);
  g_mutex_unlock(&v->lock);
  if (!host) return false;
  c->placed = true;
  c->is_tool = true;
  return true;
}

/* A tool reaches its command's RAM tree through the /tmp its launch binds
 * from the mount: the same files the Shell's /tmp holds, so the same policy
 * decides them.  Its host paths stay the view's and the floor's to answer
 * (a decision each would be a second, different policy for tools), and so
 * do the directories below /tmp that lead to a bound root (the host's
 * directories, which the Shell sees there only as its way to the root). */
void vfs_place_node(BoxVfs *v, Caller *c, fuse_ino_t ino)
{
  if (!c->ram_decides || c->decides) return;
  g_mutex_lock(&v->lock);
  Node *n = vfs_node_get(v, ino);
  bool tmp = n && n->parent && n->parent->special == SPECIAL_CMDROOT && strcmp(n->name, "tmp") == 0;
  if (n && n->kind == NODE_RAM && !n->mount_point && (!n->chain || tmp)) c->decides = true;
  g_mutex_unlock(&v->lock);
}
