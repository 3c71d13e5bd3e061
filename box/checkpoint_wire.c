/* checkpoint_wire.c — boxd's side of the checkpoints: the paths each
 * command changed, gathered from the mount (a set per command), and one
 * thread that turns them into commits in the order the commands ended, so
 * that no command's reply waits for git.
 *
 * Outside changes.  The mount sees only what the box does.  The operator's
 * editor and `box mount --rw` write the workspace directly, so boxd keeps
 * an inotify watch on the workspace's directories: every name it reports
 * that no command claims is recorded first, as an "outside" checkpoint,
 * before the next command's (a path a command also changed in the meantime
 * goes with the command, whether it runs or its checkpoint is yet to be
 * made).  What changed while the first checkpoint read the whole tree is
 * recorded right after it, not at the next command: a file the scan read
 * half written, or changed after the scan passed it, is made right at
 * once.  The mount's own fanotify watch (vfs/watch.c) sees name changes
 * only, in the directories the kernel holds, which misses an edit in
 * place.
 *
 * Restore (the `box restore` verb, another process) must not run while a
 * command does, nor while its checkpoint is being written: each command
 * holds a shared flock on private/checkpoints.lock from its start to its
 * commit, and a restore takes it exclusively, without waiting. */
#include "box/box-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoints/checkpoints.h"

#define INOTIFY_MASK                                                                               \
  (IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |  \
   IN_DELETE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

typedef enum { JOB_START, JOB_COMMAND, JOB_OUTSIDE, JOB_QUIT } JobKind;

typedef struct {
  JobKind kind;
  guint64 seq;
  int command;
  char *text;
  GHashTable *paths;  /* owned set of host paths */
  GString *decisions; /* the ids of its decisions that may change, or NULL */
  int lock_fd;        /* a hold (hold()) until the commit is made, or -1 */
  bool late;          /* writes seen after the command's reply */
} Job;

struct BoxdCheckpoints {
  BoxCheckpoints *cp;
  const BoxCheckpointsLimits *limits;
  char *workspace;
  char *lock_path;
  /* private/checkpoints.lock, opened once: held shared (one lock on this
   * description) while any command runs or any commit is to be made, as
   * counted by holds (hold_lock) */
  int lock_fd;
  int holds;
  GMutex hold_lock;
  GMutex lock;
  GHashTable *sets;        /* command -> GHashTable* of paths (owned strings) */
  GHashTable *queued_sets; /* the sets of the command jobs not yet made (borrowed) */
  GHashTable *decided;     /* command -> GString of decision ids, space-separated */
  BoxTelemetry *telemetry;
  GHashTable *outside; /* paths the workspace watch reported */
  GAsyncQueue *jobs;   /* Job* */
  GThread *thread;
  guint64 queued, done; /* Job seq: the last pushed, the last made (lock) */
  bool started;         /* the first checkpoint is made (lock) */
  GCond done_cond;
  /* the workspace watch */
  int inotify_fd;
  GMutex inotify_read; /* one reader of inotify_fd at a time */
  int wake_fd;
  GHashTable *wds; /* wd -> directory path (owned) */
  GThread *watch_thread;
};

static void string_free(gpointer s)
{
  g_string_free(s, TRUE);
}

static GHashTable *path_set(void)
{
  return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

/* A hold on the shared lock (a restore, another process, takes it
 * exclusively without waiting): a token >= 0 for release, or -1 with no
 * lock file.  The first hold locks, the last release unlocks: one lock
 * call each, and no open and close of the file per command. */
static int hold(BoxdCheckpoints *k)
{
  if (k->lock_fd < 0) return -1;
  g_mutex_lock(&k->hold_lock);
  /* waits only while a restore runs (the verb takes it without waiting) */
  if (k->holds++ == 0)
    while (flock(k->lock_fd, LOCK_SH) != 0 && errno == EINTR) continue;
  g_mutex_unlock(&k->hold_lock);
  return 0;
}

static void release(BoxdCheckpoints *k, int token)
{
  if (token < 0) return;
  g_mutex_lock(&k->hold_lock);
  if (--k->holds == 0) flock(k->lock_fd, LOCK_UN);
  g_mutex_unlock(&k->hold_lock);
}

void boxd_checkpoints_release(Boxd *d, int lock)
{
  if (d->checkpoints) release(d->checkpoints, lock);
}

void boxd_checkpoints_changed(void *data, int command, const char *path)
{
  BoxdCheckpoints *k = ((Boxd *)data)->checkpoints;
  g_mutex_lock(&k->lock);
  GHashTable *set = g_hash_table_lookup(k->sets, GINT_TO_POINTER(command));
  if (!set) {
    set = path_set();
    g_hash_table_insert(k->sets, GINT_TO_POINTER(command), set);
  }
  if (!g_hash_table_contains(set, path)) g_hash_table_add(set, g_strdup(path));
  g_mutex_unlock(&k->lock);
}

/* A command's decisions, named in its commit, are the ones that may change
 * the workspace: a read names no change, and a command's reads can be
 * thousands. */
#define DECISIONS_MAX 1000

void boxd_checkpoints_decided(Boxd *d, int command, const char *action, const char *id)
{
  BoxdCheckpoints *k = d->checkpoints;
  if (!k || command < 0 || strcmp(action, "fs:read") == 0) return;
  g_mutex_lock(&k->lock);
  GString *ids = g_hash_table_lookup(k->decided, GINT_TO_POINTER(command));
  if (!ids) {
    ids = g_string_new(NULL);
    g_hash_table_insert(k->decided, GINT_TO_POINTER(command), ids);
  }
  if (ids->len < DECISIONS_MAX * 17) g_string_append_printf(ids, "%s%s", ids->len ? " " : "", id);
  g_mutex_unlock(&k->lock);
}

/* ---- the workspace watch (lock not held) ---- */

static void watch_tree(BoxdCheckpoints *k, const char *dir)
{
  const char *rel = dir + strlen(k->workspace);
  if (*rel == '/') rel++;
  int wd = inotify_add_watch(k->inotify_fd, dir, INOTIFY_MASK);
  if (wd < 0) return;
  g_mutex_lock(&k->lock);
  g_hash_table_insert(k->wds, GINT_TO_POINTER(wd), g_strdup(dir));
  g_mutex_unlock(&k->lock);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    g_autofree char *child = g_build_filename(dir, e->d_name, NULL);
    g_autofree char *child_rel =
      *rel ? g_strconcat(rel, "/", e->d_name, NULL) : g_strdup(e->d_name);
    if (box_checkpoints_excluded(k->limits, child_rel, true)) continue;
    watch_tree(k, child);
  }
  if (d) closedir(d);
}

static void watch_events(BoxdCheckpoints *k, const char *buf, ssize_t len)
{
  for (const char *p = buf; p < buf + len;) {
    const struct inotify_event *ev = (const void *)p;
    p += sizeof *ev + ev->len;
    g_mutex_lock(&k->lock);
    const char *dir = g_hash_table_lookup(k->wds, GINT_TO_POINTER(ev->wd));
    char *path = dir && ev->len ? g_build_filename(dir, ev->name, NULL) : NULL;
    if (ev->mask & (IN_IGNORED | IN_DELETE_SELF))
      g_hash_table_remove(k->wds, GINT_TO_POINTER(ev->wd));
    else if (ev->mask & IN_Q_OVERFLOW)
      g_hash_table_add(k->outside, g_strdup(k->workspace)); /* lost: read it all */
    if (path) g_hash_table_add(k->outside, g_strdup(path));
    g_mutex_unlock(&k->lock);
    if (path && (ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
      const char *rel = path + strlen(k->workspace) + 1;
      if (!box_checkpoints_excluded(k->limits, rel, true)) watch_tree(k, path);
    }
    g_free(path);
  }
}

static gpointer watch_main(gpointer data)
{
  BoxdCheckpoints *k = data;
  char buf[64 * 1024] __attribute__((aligned(8)));
  struct pollfd fds[2] = { { .fd = k->inotify_fd, .events = POLLIN },
                           { .fd = k->wake_fd, .events = POLLIN } };
  for (;;) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents) break;
    g_mutex_lock(&k->inotify_read);
    ssize_t len = read(k->inotify_fd, buf, sizeof buf);
    if (len > 0) watch_events(k, buf, len);
    g_mutex_unlock(&k->inotify_read);
  }
  return NULL;
}

/* The events already queued, read now: a change made before a command
 * started is the outside's, whether or not the watch thread woke for it. */
static void watch_drain(BoxdCheckpoints *k)
{
  if (!k->watch_thread) return;
  static char buf[64 * 1024] __attribute__((aligned(8))); /* the commit thread's */
  g_mutex_lock(&k->inotify_read);
  ssize_t len;
  while ((len = read(k->inotify_fd, buf, sizeof buf)) > 0) watch_events(k, buf, len);
  g_mutex_unlock(&k->inotify_read);
}

/* ---- the commits ---- */

static char **set_strv(GHashTable *set)
{
  GPtrArray *a = g_ptr_array_new();
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, set);
  while (g_hash_table_iter_next(&it, &key, NULL)) g_ptr_array_add(a, key);
  g_ptr_array_add(a, NULL);
  return (char **)g_ptr_array_free(a, FALSE);
}

/* The commit, then its control record (detail NULL: none, as for the
 * first, which no command made): the log's way from a command (its id, its
 * decisions' ids) to the checkpoint, as the commit's message is the way
 * back. */
static void record(BoxdCheckpoints *k, GHashTable *set, const char *subject, const char *body,
                   const char *detail)
{
  g_autofree char **paths = set ? set_strv(set) : NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *id = NULL;
  if (!box_checkpoints_record(k->cp, (const char *const *)paths, subject, body, &id, &error))
    g_printerr("box: warning: checkpoint not recorded: %s\n", error->message);
  else if (id && detail)
    box_telemetry_control(k->telemetry, "checkpoint", id, NULL, detail);
}

/* What the watch saw that no command claims, running or queued: the
 * outside's.  (A command that ended has its job queued, and its checkpoint
 * reads its paths as they are then.) */
static GHashTable *take_outside(BoxdCheckpoints *k)
{
  GHashTable *out = path_set();
  g_mutex_lock(&k->lock);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, k->outside);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    bool claimed = false;
    GHashTableIter ci;
    gpointer set;
    g_hash_table_iter_init(&ci, k->sets);
    while (!claimed && g_hash_table_iter_next(&ci, NULL, &set))
      claimed = g_hash_table_contains(set, key);
    g_hash_table_iter_init(&ci, k->queued_sets);
    while (!claimed && g_hash_table_iter_next(&ci, &set, NULL))
      claimed = g_hash_table_contains(set, key);
    if (!claimed) g_hash_table_add(out, g_strdup(key));
  }
  g_hash_table_remove_all(k->outside);
  g_mutex_unlock(&k->lock);
  return out;
}

static void record_outside(BoxdCheckpoints *k)
{
  watch_drain(k);
  GHashTable *outside = take_outside(k);
  if (g_hash_table_size(outside))
    record(k, outside, "outside the box", "kind: outside\n", "changed outside the box");
  g_hash_table_unref(outside);
}

static void record_command(BoxdCheckpoints *k, Job *job)
{
  g_autofree char *first = g_strdup(job->text);
  char *nl = strchr(first, '\n');
  if (nl) *nl = '\0';
  if (strlen(first) > 72) strcpy(first + 69, "...");
  /* the decision log's records are written before the command ends: the
   * mapping from the command to its checkpoint is this message */
  const char *decisions = job->decisions ? job->decisions->str : "";
  g_autofree char *body = g_strdup_printf("kind: %s\ncommand-id: %d\ndecisions: %s\ncommand: %s\n",
                                          job->late ? "command (after its reply)" : "command",
                                          job->command, decisions, job->text);
  g_autofree char *detail =
    g_strdup_printf("command-id: %d; decisions: %s", job->command, decisions);
  /* The watch saw the command's own writes too.  Read now, they are
   * dropped from the outside's: the commit reads the paths after them, so
   * the next command's start finds nothing to hand over for them (that
   * hand-off and a second read of each path cost every command that
   * follows a writing one).  A change after this read is the watch's
   * again. */
  watch_drain(k);
  g_mutex_lock(&k->lock);
  GHashTableIter it;
  gpointer path;
  g_hash_table_iter_init(&it, job->paths);
  while (g_hash_table_iter_next(&it, &path, NULL)) g_hash_table_remove(k->outside, path);
  g_mutex_unlock(&k->lock);
  record(k, job->paths, first, body, detail);
}

/* Tests: BOXFS_TEST_FIRST_CHECKPOINT_PAUSE names a FIFO the commit thread
 * reads to its end once the first checkpoint is made, before it takes what
 * changed meanwhile: a change the test makes then stands for one made
 * while the scan ran, after the scan read its path, without a race. */
static void first_checkpoint_pause(void)
{
  const char *fifo = g_getenv("BOXFS_TEST_FIRST_CHECKPOINT_PAUSE");
  int fd = fifo ? open(fifo, O_RDONLY | O_CLOEXEC) : -1;
  char buf[64];
  ssize_t n;
  while (fd >= 0 && ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))) continue;
  if (fd >= 0) close(fd);
}

static gpointer commit_main(gpointer data)
{
  BoxdCheckpoints *k = data;
  for (bool quit = false; !quit;) {
    Job *job = g_async_queue_pop(k->jobs);
    quit = job->kind == JOB_QUIT;
    /* what changed outside before a command started was recorded as it
     * started (its JOB_OUTSIDE): what changes outside after it ended is
     * the next command's to wait for */
    if (job->kind == JOB_START) {
      /* the marks first: what changes outside before one is placed is read
       * by the scan after it */
      if (k->watch_thread) watch_tree(k, k->workspace);
      record(k, NULL, "box started", "kind: start\n", NULL);
      first_checkpoint_pause();
      record_outside(k);
    } else if (job->kind == JOB_COMMAND)
      record_command(k, job);
    else
      record_outside(k);
    release(k, job->lock_fd);
    g_mutex_lock(&k->lock);
    if (job->paths) g_hash_table_remove(k->queued_sets, job->paths);
    k->done = job->seq;
    k->started = true;
    g_cond_broadcast(&k->done_cond);
    g_mutex_unlock(&k->lock);
    if (job->paths) g_hash_table_unref(job->paths);
    if (job->decisions) g_string_free(job->decisions, TRUE);
    g_free(job->text);
    g_free(job);
  }
  return NULL;
}

/* Queues job in order; its seq. */
static guint64 push(BoxdCheckpoints *k, Job *job)
{
  g_mutex_lock(&k->lock);
  guint64 seq = job->seq = ++k->queued;
  g_async_queue_push(k->jobs, job); /* the commit thread may free it from here */
  g_mutex_unlock(&k->lock);
  return seq;
}

/* Nothing for a start to wait for: no commit queued, nothing the watch
 * saw or has yet to read (the usual case between an agent's commands, which
 * then costs no hand-off to the commit thread). */
static bool quiet_since_last(BoxdCheckpoints *k)
{
  g_mutex_lock(&k->inotify_read);
  int pending = 0;
  bool quiet = ioctl(k->inotify_fd, FIONREAD, &pending) == 0 && pending == 0;
  g_mutex_lock(&k->lock);
  /* while the first checkpoint is made, no start waits: what changes
   * meanwhile, outside or by a command that ends first, is read by it or
   * goes on top of it in order */
  quiet = !k->started || (quiet && k->done == k->queued && g_hash_table_size(k->outside) == 0);
  g_mutex_unlock(&k->lock);
  g_mutex_unlock(&k->inotify_read);
  return quiet;
}

int boxd_checkpoints_begin(Boxd *d)
{
  BoxdCheckpoints *k = d->checkpoints;
  if (!k) return -1;
  int fd = hold(k);
  /* The checkpoints of the commands that ended, and what changed outside
   * since, are made before this one changes anything: each reads the
   * workspace as its command left it.  The reply of the command before
   * did not wait for them; this start does (an agent's pause between two
   * commands usually hides it). */
  if (k->thread && !quiet_since_last(k)) {
    Job *job = g_new0(Job, 1);
    job->kind = JOB_OUTSIDE;
    job->lock_fd = -1;
    guint64 seq = push(k, job);
    g_mutex_lock(&k->lock);
    while (k->done < seq) g_cond_wait(&k->done_cond, &k->lock);
    g_mutex_unlock(&k->lock);
  }
  return fd;
}

/* Hands the paths command changed so far to the commit thread. */
static void enqueue(BoxdCheckpoints *k, int command, const char *text, int lock_fd, bool late)
{
  g_mutex_lock(&k->lock);
  GHashTable *set = NULL;
  GString *decisions = NULL;
  g_hash_table_steal_extended(k->sets, GINT_TO_POINTER(command), NULL, (gpointer *)&set);
  g_hash_table_steal_extended(k->decided, GINT_TO_POINTER(command), NULL, (gpointer *)&decisions);
  /* claimed from the running to the queued at once: the outside takes
   * none of its paths in between */
  if (set) g_hash_table_add(k->queued_sets, set);
  g_mutex_unlock(&k->lock);
  if (!set) {
    if (decisions) g_string_free(decisions, TRUE);
    /* it changed nothing: no checkpoint, and a restore may go ahead now */
    release(k, lock_fd);
    return;
  }
  Job *job = g_new0(Job, 1);
  job->kind = JOB_COMMAND;
  job->command = command;
  job->text = g_strdup(text ? text : "");
  job->paths = set;
  job->decisions = decisions;
  job->lock_fd = lock_fd;
  job->late = late;
  push(k, job);
}

void boxd_checkpoints_end(Boxd *d, int command, const char *text, int lock_fd)
{
  if (d->checkpoints) enqueue(d->checkpoints, command, text, lock_fd, false);
}

void boxd_checkpoints_after(Boxd *d, int command, const char *text)
{
  if (d->checkpoints) enqueue(d->checkpoints, command, text, -1, true);
}

/* The files below dir (and its subdirectories when deep) whose names
 * start with prefix and end with suffix: removed. */
static void drop_named(const char *dir, const char *prefix, const char *suffix, bool deep)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *e;
  while (d && (e = g_dir_read_name(d)) != NULL) {
    g_autofree char *p = g_build_filename(dir, e, NULL);
    if (deep && g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
      drop_named(p, prefix, suffix, deep);
    else if (g_str_has_prefix(e, prefix) && g_str_has_suffix(e, suffix))
      unlink(p);
  }
  if (d) g_dir_close(d);
}

/* What a killed run left in the repository: the temporary pack of a
 * whole-tree checkpoint (the checkpoints' pack.c), and git's lock file of
 * a reference it was moving, which would refuse every later commit.  Only
 * with the lock shared: a restore, the only other writer, holds it
 * exclusively while it writes. */
static void drop_stale(const char *repo, const char *lock_path)
{
  int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
    g_autofree char *packs = g_build_filename(repo, "objects", "pack", NULL);
    g_autofree char *refs = g_build_filename(repo, "refs", NULL);
    drop_named(packs, "tmp_box_pack_", "", false);
    drop_named(refs, "", ".lock", true);
    const char *top[] = { "HEAD.lock", "packed-refs.lock" };
    for (guint i = 0; i < G_N_ELEMENTS(top); i++) {
      g_autofree char *p = g_build_filename(repo, top[i], NULL);
      unlink(p);
    }
  }
  close(fd);
}

bool boxd_checkpoints_start(Boxd *d)
{
  const BoxCheckpointsLimits *limits = &d->config->checkpoints;
  if (!limits->enabled) return true;
  g_autofree char *repo = g_build_filename(d->config->box_dir, "private", "checkpoints.git", NULL);
  g_autoptr(GError) error = NULL;
  BoxCheckpoints *cp = box_checkpoints_open(repo, d->workspace, limits, &error);
  if (!cp) {
    g_printerr("box: warning: no checkpoints: %s\n", error->message);
    return false;
  }
  BoxdCheckpoints *k = g_new0(BoxdCheckpoints, 1);
  k->cp = cp;
  k->limits = limits;
  k->workspace = g_strdup(d->workspace);
  k->lock_path = g_build_filename(d->config->box_dir, "private", "checkpoints.lock", NULL);
  drop_stale(repo, k->lock_path);
  k->lock_fd = open(k->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  g_mutex_init(&k->hold_lock);
  box_checkpoints_prune(cp, limits->keep);
  g_mutex_init(&k->lock);
  g_mutex_init(&k->inotify_read);
  g_cond_init(&k->done_cond);
  k->sets =
    g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_hash_table_unref);
  k->queued_sets = g_hash_table_new(g_direct_hash, g_direct_equal);
  k->outside = path_set();
  k->decided = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, string_free);
  k->telemetry = d->telemetry;
  k->wds = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  k->jobs = g_async_queue_new();
  k->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  k->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  d->checkpoints = k;
  return true;
}

void boxd_checkpoints_run(Boxd *d)
{
  BoxdCheckpoints *k = d->checkpoints;
  if (!k) return;
  /* The watch's marks and the first checkpoint, the whole tree, are the
   * commit thread's first job: a large workspace took seconds (a walk of
   * every directory, then every file read) that the box's start and its
   * first commands waited for. */
  bool watching = k->inotify_fd >= 0 && k->wake_fd >= 0;
  Job *first = g_new0(Job, 1);
  first->kind = JOB_START;
  first->lock_fd = -1;
  push(k, first);
  if (watching) k->watch_thread = g_thread_new("box-ckpt-watch", watch_main, k);
  k->thread = g_thread_new("box-checkpoints", commit_main, k);
}

void boxd_checkpoints_stop(Boxd *d)
{
  BoxdCheckpoints *k = d->checkpoints;
  if (!k) return;
  /* the commits of every command that ended are made before boxd goes */
  Job *quit = g_new0(Job, 1);
  quit->kind = JOB_QUIT;
  quit->lock_fd = -1;
  push(k, quit);
  if (k->thread) g_thread_join(k->thread);
  if (k->watch_thread) {
    uint64_t one = 1;
    if (write(k->wake_fd, &one, sizeof one) == sizeof one) g_thread_join(k->watch_thread);
  }
  if (k->inotify_fd >= 0) close(k->inotify_fd);
  if (k->wake_fd >= 0) close(k->wake_fd);
  box_checkpoints_close(k->cp);
  GHashTable *tables[] = { k->sets, k->queued_sets, k->outside, k->wds, k->decided };
  for (guint i = 0; i < G_N_ELEMENTS(tables); i++) g_hash_table_unref(tables[i]);
  g_free(k->workspace);
  g_free(k->lock_path);
  if (k->lock_fd >= 0) close(k->lock_fd);
  g_mutex_clear(&k->hold_lock);
  g_async_queue_unref(k->jobs);
  g_mutex_clear(&k->lock);
  g_mutex_clear(&k->inotify_read);
  g_cond_clear(&k->done_cond);
  g_free(k);
  d->checkpoints = NULL;
}
