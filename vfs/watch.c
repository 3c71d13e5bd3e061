/* watch.c — changes made to the bound roots from outside the mount,
 * passed on to the kernel as they happen.
 *
 * Why: the kernel keeps a name it looked up for the entry timeout without
 * asking again.  Every op reaches its object again from the root before it
 * acts, so a stale name is never acted on (the op answers ESTALE and the
 * kernel walks the path again), but from a stale entry's type the kernel
 * refuses some things on its own: a directory replaced by a symlink outside
 * the mount is ENOTDIR to an O_DIRECTORY open until the entry times out.  So
 * each passthrough directory the kernel holds carries a fanotify mark for
 * name changes (create, delete, move in and out), and a change that no
 * thread of this daemon made expires the kernel's entry of that name at once.
 * The names of a watched directory are then kept for ENTRY_TIMEOUT_WATCHED
 * (a walk through them asks the daemon nothing); a directory the watch does
 * not cover (fanotify refused, a filesystem without file handles, the mark
 * limit) keeps the short timeout.
 *
 * Only where every caller that gets an entry gets the same verdicts: with a
 * policy that reads no history (its verdicts are a function of the request,
 * the same for every command) and no tool registered.  A tool decides
 * nothing, so what its lookups and stats leave in the kernel (attributes a
 * statx(AT_STATX_DONT_SYNC) reads without a request) must not outlive the
 * short timeout: when the first tool comes, every name is forgotten.
 *
 * The daemon's own changes are told apart by thread: every thread that
 * places a request is registered (vfs_watch_actor) and leaves the set when
 * it ends, and the marks report the acting thread (FAN_REPORT_TID).
 *
 * The same events prove a node's place without a walk.  A walk from the
 * root (openat2, RESOLVE_BENEATH, no symlinks) costs a stat about 2 us more
 * than an fstat of the node's own descriptor: a struct file made and freed
 * per op.  The watch counts every change of a name that could move a node
 * (outside the mount: each event not of this daemon's threads, and an
 * overflow; inside: each remove and rename, vfs_watch_moved).  A node found
 * by a walk is stamped with the count read before the walk began, if every
 * directory from its parent up to its root is marked.  While the count is
 * still that stamp, no event is queued (FIONREAD: an outside change that
 * has returned to its caller has queued its event; a queue found holding
 * some is read by the asking thread, drain_queue) and no reader holds one
 * it has not counted (watch_reading, a sequence count), nothing
 * has changed any name on the node's path since the walk, so the path still
 * names the node's object: its descriptor is used as the walk's would be.
 * Not covered: a mount made over a directory of a root from outside (no
 * event); the walk would cross it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "vfs/vfs-private.h"

#define WATCH_NAMES (FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO)
#define WATCH_MASK (WATCH_NAMES | FAN_ONDIR)
/* added to a directory's mark once the kernel keeps attributes of it or
 * of a file in it (attrs.c): writes, truncates, mode, owner, times */
#define WATCH_ATTRS (FAN_MODIFY | FAN_ATTRIB | FAN_EVENT_ON_CHILD)
#define WATCH_GATHER_US 2000

typedef struct {
  dev_t dev; /* st_dev of the directory it was found with (a node's rdev_key) */
  fsid_t fsid;
  int fd; /* a directory of that filesystem, opened (not O_PATH), for open_by_handle_at */
} WatchFs;

/* The set of acting threads; one per process, as the FUSE loop threads
 * that fill it are libfuse's. */
static GMutex actors_lock;
static GHashTable *actors; /* tids */

static void actor_leave(gpointer p)
{
  g_mutex_lock(&actors_lock);
  if (actors) g_hash_table_remove(actors, p);
  g_mutex_unlock(&actors_lock);
}
static GPrivate actor_key = G_PRIVATE_INIT(actor_leave);

void vfs_watch_actor(void)
{
  if (g_private_get(&actor_key)) return;
  pid_t tid = (pid_t)syscall(SYS_gettid);
  g_mutex_lock(&actors_lock);
  if (!actors) actors = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_hash_table_add(actors, GINT_TO_POINTER(tid));
  g_mutex_unlock(&actors_lock);
  g_private_set(&actor_key, GINT_TO_POINTER(tid));
}

static bool is_actor(pid_t tid)
{
  g_mutex_lock(&actors_lock);
  bool yes = actors && g_hash_table_contains(actors, GINT_TO_POINTER(tid));
  g_mutex_unlock(&actors_lock);
  return yes;
}

void vfs_watch_open(BoxVfs *v)
{
  v->watch_fs = g_array_new(FALSE, FALSE, sizeof(WatchFs));
  const char *off = g_getenv("BOXFS_NO_WATCH"); /* measurements: the short timeout everywhere */
  if (off && strcmp(off, "1") == 0) return;
  v->watch_fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME |
                                FAN_REPORT_TID,
                              O_RDONLY | O_CLOEXEC);
}

/* lock held */
void vfs_watch_dir(BoxVfs *v, Node *n)
{
  if (v->watch_fd < 0 || n->kind != NODE_PASS || !S_ISDIR(n->ftype) || n->fd < 0 || n->watched)
    return;
  /* the filesystem first: an event's directory is found through it (known
   * by the node's st_dev, so only a filesystem's first directory costs a
   * statfs) */
  bool known = false;
  for (guint i = 0; i < v->watch_fs->len && !known; i++)
    known = g_array_index(v->watch_fs, WatchFs, i).dev == n->rdev_key;
  struct statfs sf;
  if (!known && fstatfs(n->fd, &sf) != 0) return;
  if (fanotify_mark(v->watch_fd, FAN_MARK_ADD | FAN_MARK_ONLYDIR, WATCH_MASK, n->fd, ".") != 0)
    return;
  if (!known) {
    WatchFs w = { n->rdev_key, sf.f_fsid, openat(n->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) };
    if (w.fd < 0) {
      fanotify_mark(v->watch_fd, FAN_MARK_REMOVE | FAN_MARK_ONLYDIR, WATCH_MASK, n->fd, ".");
      return;
    }
    g_array_append_val(v->watch_fs, w);
  }
  n->watched = true;
}

/* lock held: before n's descriptor is closed (a mark keeps its inode) */
void vfs_watch_forget(BoxVfs *v, Node *n)
{
  if (!n->watched) return;
  fanotify_mark(v->watch_fd, FAN_MARK_REMOVE | FAN_MARK_ONLYDIR, WATCH_MASK | WATCH_ATTRS, n->fd,
                ".");
  n->watched = false;
  n->attr_mark = false;
}

/* lock held: the marked directory n reports changes of its own and its
 * files' attributes too, from now on; false if it cannot */
bool vfs_watch_attrs(BoxVfs *v, Node *n)
{
  if (!n->watched || n->fd < 0) return false;
  if (!n->attr_mark)
    n->attr_mark = fanotify_mark(v->watch_fd, FAN_MARK_ADD | FAN_MARK_ONLYDIR,
                                 WATCH_MASK | WATCH_ATTRS, n->fd, ".") == 0;
  return n->attr_mark;
}

bool vfs_watch_long(BoxVfs *v, Node *n)
{
  return n->kind == NODE_PASS && n->parent && n->parent->watched && v->tools_live == 0 &&
         v->cache_decisions && v->decide_quiet;
}

guint64 vfs_watch_moves(BoxVfs *v)
{
  return v->watch_thread ? __atomic_load_n(&v->watch_moves, __ATOMIC_SEQ_CST) : 0;
}

/* lock held */
void vfs_watch_proven(Node *n, guint64 moves)
{
  if (!moves) return;
  Node *p = n->parent;
  while (p && p->watched && !p->root_path) p = p->parent;
  if (p && p->watched && p->root_path) n->settled = moves;
}

void vfs_watch_moved(BoxVfs *v)
{
  __atomic_add_fetch(&v->watch_moves, 1, __ATOMIC_SEQ_CST);
}

enum { OUTSIDE_ANY = 1, OUTSIDE_NAMES = 2 };
static int any_outside(char *buf, ssize_t len);
static void watch_kick(BoxVfs *v);

/* Events wait in the queue until the watch thread's next gathering: in a
 * burst of creates or unlinks through the mount there is nearly always one
 * of this daemon's own, and a settled node would be walked to anyway.  So
 * the asking thread reads the queue itself: its own events need nothing
 * done; an outside one counts as a move at once and goes to the watch
 * thread, which expires the kernel's entries (here, on a request's thread,
 * that could wait on the very directory lock the request holds). */
static void drain_queue(BoxVfs *v)
{
  char buf[4096] __attribute__((aligned(8)));
  if (!g_mutex_trylock(&v->watch_read_lock)) return; /* someone is reading it now */
  g_atomic_int_inc(&v->watch_reading);
  ssize_t len = read(v->watch_fd, buf, sizeof buf);
  int found = len > 0 ? any_outside(buf, len) : 0;
  bool outside = found != 0;
  if (found & OUTSIDE_NAMES) vfs_watch_moved(v);
  if (outside) g_byte_array_append(v->watch_handoff, (guint8 *)buf, (guint)len);
  g_atomic_int_inc(&v->watch_reading);
  g_mutex_unlock(&v->watch_read_lock);
  if (outside) watch_kick(v);
}

bool vfs_watch_settled(BoxVfs *v, guint64 settled)
{
  if (!settled) return false;
  for (bool drained = false;; drained = true) {
    int seq = g_atomic_int_get(&v->watch_reading);
    if (seq & 1) return false;
    int queued = 0;
    if (ioctl(v->watch_fd, FIONREAD, &queued) != 0) return false;
    if (queued != 0) {
      if (drained) return false;
      drain_queue(v);
      continue;
    }
    if (__atomic_load_n(&v->watch_moves, __ATOMIC_SEQ_CST) != settled) return false;
    return g_atomic_int_get(&v->watch_reading) == seq;
  }
}

static void watch_kick(BoxVfs *v)
{
  uint64_t one = 1;
  if (v->watch_wake >= 0 && write(v->watch_wake, &one, sizeof one) != sizeof one)
    g_warning("box-watch: cannot wake the watch thread: %s", g_strerror(errno));
}

void vfs_watch_expire_all(BoxVfs *v)
{
  if (!v->watch_thread) return;
  g_atomic_int_set(&v->watch_flush, 1);
  watch_kick(v);
}

void vfs_watch_tools(BoxVfs *v, int delta)
{
  if (delta < 0 && v->tools_live > 0) v->tools_live--;
  if (delta > 0 && v->tools_live++ == 0) vfs_watch_expire_all(v);
}

/* The kernel's entry for name in parent, expired (FUSE_EXPIRE_ONLY, Linux
 * 6.2; libfuse 3.14 cannot send it): the next walk asks LOOKUP again,
 * which keeps the entry if it still names its node.  An invalidation would
 * drop it, and with it every mount made on it (a tool's nested grant is
 * bound onto a name of the mount).  False where the kernel refused it. */
static bool expire_entry(BoxVfs *v, fuse_ino_t parent, const char *name)
{
  struct {
    uint32_t len;
    int32_t error; /* the notification's code */
    uint64_t unique;
  } head;
  struct {
    uint64_t parent;
    uint32_t namelen;
    uint32_t flags;
  } arg;
  enum { NOTIFY_INVAL_ENTRY = 3, EXPIRE_ONLY = 1 };
  size_t namelen = strlen(name);
  arg.parent = parent;
  arg.namelen = (uint32_t)namelen;
  arg.flags = EXPIRE_ONLY;
  head.len = (uint32_t)(sizeof head + sizeof arg + namelen + 1);
  head.error = NOTIFY_INVAL_ENTRY;
  head.unique = 0;
  struct iovec iov[3] = { { &head, sizeof head },
                          { &arg, sizeof arg },
                          { (char *)name, namelen + 1 } };
  ssize_t w = writev(fuse_session_fd(v->se), iov, 3);
  return w >= 0 || errno == ENOENT; /* ENOENT: the kernel holds no such entry */
}

/* An outside change in the directory whose handle the event carried, told
 * to the kernel: a name changed is forgotten, and with it the attributes
 * kept of the directory (its times changed); attributes changed (of a
 * file in it, or of the directory itself: name ".") are dropped. */
static void outside_change(BoxVfs *v, const __kernel_fsid_t *fsid, struct file_handle *fh,
                           const char *name, guint64 mask)
{
  int mount_fd = -1;
  g_mutex_lock(&v->lock);
  for (guint i = 0; i < v->watch_fs->len; i++) {
    WatchFs *w = &g_array_index(v->watch_fs, WatchFs, i);
    if (memcmp(&w->fsid, fsid, sizeof w->fsid) == 0) mount_fd = w->fd;
  }
  g_mutex_unlock(&v->lock);
  if (mount_fd < 0) return;
  int dfd = (int)syscall(SYS_open_by_handle_at, mount_fd, fh, O_PATH | O_CLOEXEC);
  if (dfd < 0) return; /* the directory is gone: its own name's event covers it */
  bool self = strcmp(name, ".") == 0, names = (mask & WATCH_NAMES) && !self;
  struct stat st, cst;
  bool ok = fstat(dfd, &st) == 0;
  /* the file's node, found by what the name holds now, only while the
   * kernel keeps some attributes long */
  bool child = ok && !self && (mask & (FAN_MODIFY | FAN_ATTRIB)) && vfs_attr_granting(v) &&
               fstatat(dfd, name, &cst, AT_SYMLINK_NOFOLLOW) == 0;
  close(dfd);
  if (!ok) return;
  fuse_ino_t parent = 0, dir_attrs = 0, file_attrs = 0;
  g_mutex_lock(&v->lock);
  Node *d = vfs_pass_find(v, st.st_dev, st.st_ino);
  if (d && d->nlookup > 0) parent = d->ino;
  if (d && d->attr_kept && (names || self)) dir_attrs = d->ino;
  Node *f = child ? vfs_pass_find(v, cst.st_dev, cst.st_ino) : NULL;
  if (f && f->attr_kept) file_attrs = f->ino;
  g_mutex_unlock(&v->lock);
  if (parent && names) expire_entry(v, parent, name);
  if (dir_attrs) fuse_lowlevel_notify_inval_inode(v->se, dir_attrs, -1, 0);
  if (file_attrs) fuse_lowlevel_notify_inval_inode(v->se, file_attrs, -1, 0);
}

/* Every name the kernel holds in a watched directory, expired: events were
 * lost (the queue overflowed), or a tool came. */
static void invalidate_all(BoxVfs *v)
{
  GArray *todo = g_array_new(FALSE, FALSE, sizeof(fuse_ino_t));
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  g_mutex_lock(&v->lock);
  GHashTableIter it;
  gpointer val;
  g_hash_table_iter_init(&it, v->nodes);
  while (g_hash_table_iter_next(&it, NULL, &val)) {
    Node *n = val;
    if (n->kind != NODE_PASS || n->nlookup == 0 || !n->parent || !n->parent->watched || !n->name)
      continue;
    g_array_append_val(todo, n->parent->ino);
    g_ptr_array_add(names, g_strdup(n->name));
  }
  g_mutex_unlock(&v->lock);
  for (guint i = 0; i < todo->len; i++) {
    const char *name = g_ptr_array_index(names, i);
    expire_entry(v, g_array_index(todo, fuse_ino_t, i), name);
  }
  g_array_unref(todo);
  g_ptr_array_unref(names);
  vfs_attr_flush(v);
}

/* The kernel aligns events to 4 bytes, and the metadata's mask is a u64:
 * each event's metadata is copied out rather than read in place.  Returns
 * the event at *off (its metadata in *m) and moves *off past it, or NULL
 * at the end of the batch. */
static char *next_event(char *buf, ssize_t len, ssize_t *off, struct fanotify_event_metadata *m)
{
  if (len - *off < (ssize_t)sizeof *m) return NULL;
  memcpy(m, buf + *off, sizeof *m);
  if (m->event_len < sizeof *m || m->event_len > (size_t)(len - *off)) return NULL;
  char *ev = buf + *off;
  *off += m->event_len;
  return ev;
}

/* Does the batch hold a change this daemon did not make (OUTSIDE_ANY),
 * one of a name or a loss (OUTSIDE_NAMES too)? */
static int any_outside(char *buf, ssize_t len)
{
  struct fanotify_event_metadata m;
  int found = 0;
  for (ssize_t off = 0; found != (OUTSIDE_ANY | OUTSIDE_NAMES) && next_event(buf, len, &off, &m);) {
    if (m.vers != FANOTIFY_METADATA_VERSION || (m.mask & FAN_Q_OVERFLOW))
      found |= OUTSIDE_ANY | OUTSIDE_NAMES;
    else if (!is_actor((pid_t)m.pid))
      found |= OUTSIDE_ANY | ((m.mask & WATCH_NAMES) ? OUTSIDE_NAMES : 0);
  }
  return found;
}

static void handle_events(BoxVfs *v, char *buf, ssize_t len)
{
  struct fanotify_event_metadata m;
  char *ev;
  for (ssize_t off = 0; (ev = next_event(buf, len, &off, &m));) {
    if (m.vers != FANOTIFY_METADATA_VERSION) return;
    if (m.mask & FAN_Q_OVERFLOW) {
      invalidate_all(v);
      continue;
    }
    if (is_actor((pid_t)m.pid)) continue;
    char *p = ev + m.metadata_len, *end = ev + m.event_len;
    while (p + sizeof(struct fanotify_event_info_header) <= end) {
      struct fanotify_event_info_header *h = (void *)p;
      if (h->len < sizeof *h || p + h->len > end) break;
      if (h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
        struct fanotify_event_info_fid *fid = (void *)p;
        struct file_handle *fh = (struct file_handle *)fid->handle;
        const char *name = (const char *)fh->f_handle + fh->handle_bytes;
        if ((char *)name < p + h->len) outside_change(v, &fid->fsid, fh, name, m.mask);
      }
      p += h->len;
    }
  }
}

static gpointer watch_main(gpointer data)
{
  BoxVfs *v = data;
  enum { WATCH_BUF = 64 * 1024 };
  char *buf = g_malloc(WATCH_BUF); /* malloc's alignment suits the records */
  struct pollfd fds[2] = { { .fd = v->watch_fd, .events = POLLIN },
                           { .fd = v->watch_wake, .events = POLLIN } };
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) {
      uint64_t count;
      if (read(v->watch_wake, &count, sizeof count) < 0 && errno != EAGAIN) break;
      if (g_atomic_int_get(&v->watch_quit)) break;
      if (g_atomic_int_compare_and_exchange(&v->watch_flush, 1, 0)) invalidate_all(v);
      g_mutex_lock(&v->watch_read_lock);
      GByteArray *handed = v->watch_handoff->len ? v->watch_handoff : NULL;
      if (handed) v->watch_handoff = g_byte_array_new();
      g_mutex_unlock(&v->watch_read_lock);
      if (handed) handle_events(v, (char *)handed->data, (ssize_t)handed->len);
      if (handed) g_byte_array_unref(handed);
      continue;
    }
    /* Most events are this daemon's own (every create and unlink through
     * the mount makes one): gather a few milliseconds of them per wake-up
     * rather than waking for each. */
    g_usleep(WATCH_GATHER_US);
    ssize_t len;
    for (;;) {
      g_mutex_lock(&v->watch_read_lock);
      g_atomic_int_inc(&v->watch_reading); /* odd: events out of the queue, not yet counted */
      len = read(v->watch_fd, buf, WATCH_BUF);
      if (len > 0 && (any_outside(buf, len) & OUTSIDE_NAMES)) vfs_watch_moved(v);
      g_atomic_int_inc(&v->watch_reading);
      g_mutex_unlock(&v->watch_read_lock);
      if (len <= 0) break;
      handle_events(v, buf, len);
    }
    if (len < 0 && errno != EAGAIN && errno != EINTR) break;
  }
  g_free(buf);
  return NULL;
}

void vfs_watch_start(BoxVfs *v)
{
  if (v->watch_fd < 0) return;
  v->watch_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (v->watch_wake < 0) return;
  v->watch_moves = 1; /* 0 is no stamp */
  g_mutex_init(&v->watch_read_lock);
  v->watch_handoff = g_byte_array_new();
  v->watch_thread = g_thread_new("box-watch", watch_main, v);
}

void vfs_watch_stop(BoxVfs *v)
{
  if (v->watch_thread) {
    g_atomic_int_set(&v->watch_quit, 1);
    watch_kick(v);
    g_thread_join(v->watch_thread);
    v->watch_thread = NULL;
    g_byte_array_unref(v->watch_handoff);
    v->watch_handoff = NULL;
    g_mutex_clear(&v->watch_read_lock);
  }
}

void vfs_watch_close(BoxVfs *v)
{
  if (v->watch_wake >= 0) close(v->watch_wake);
  if (v->watch_fd >= 0) close(v->watch_fd);
  v->watch_wake = v->watch_fd = -1;
  for (guint i = 0; v->watch_fs && i < v->watch_fs->len; i++)
    close(g_array_index(v->watch_fs, WatchFs, i).fd);
  if (v->watch_fs) g_array_unref(v->watch_fs);
  v->watch_fs = NULL;
}
