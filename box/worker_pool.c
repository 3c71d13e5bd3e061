/* worker_pool.c — Shell workers: a warm pool, one worker per command.
 *
 * A worker is box-shell forked by the zygote as the init of new mount and
 * PID namespaces (in the workers' shared route-less network namespace),
 * placed in the mount before it runs a single instruction (so every request
 * it makes is attributable), rooted in its own RAM root, its privileges
 * dropped.  The pool keeps POOL_SIZE of them prepared, so a command finds
 * one ready: it only hands it the text and the caller's descriptors.  The
 * command's thread asks for the replacement once it has answered its
 * caller; preparing it is then off that command's path.
 */
#include "box/box-private.h"
#include "box/ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define POOL_SIZE 3
#define READY_TIMEOUT_MS 10000

/* Two kinds of worker, each from its own zygote: the Shell's, and one
 * whose zygote holds an initialized CPython (python/warm.c) for commands
 * that start with python3.  Every Shell worker forked from a process that
 * large would copy its page tables and fault on its heap: the Python
 * zygote starts with the first such command, and only its workers pay. */
typedef struct {
  bool python;
  bool wanted; /* the Python pool: a command asked for one (pool_lock) */
  bool broken; /* its zygote could not start: its commands go to the Shell's pool */
  int zygote_ctl;
  pid_t zygote_pid;
  GThread *zygote_reader;
  GQueue forking; /* BoxdWorker*, fork requested, in order; pool_lock */
  int preparing;  /* forks not yet placed (pool_lock) */
  int failures;   /* consecutive workers that failed to start (pool_lock) */
  /* The gateway's environment goes to the zygote once, just before the
   * first fork request after the gateway started: the zygote sets it in its own
   * environment, and every worker it forks from then on inherits it, so no
   * later request carries (and no process parses) its few KiB (pool_lock). */
  bool has_env;
  GAsyncQueue *ready;
  Boxd *d;
} Pool;

static Pool pools[2] = { { .python = false, .wanted = true, .zygote_ctl = -1, .zygote_pid = -1 },
                         { .python = true, .zygote_ctl = -1, .zygote_pid = -1 } };
static GThread *pool_thread;
static GMutex pool_lock;
static GCond pool_cond;
static bool pool_stop;

void boxd_array_remove_int(GArray *a, int value)
{
  for (guint i = 0; i < a->len; i++)
    if (g_array_index(a, int, i) == value) {
      g_array_remove_index_fast(a, i);
      return;
    }
}

bool boxd_debug_timing(void)
{
  /* read once: the environment is walked for each getenv, twice a command */
  static gsize once;
  static bool on;
  if (g_once_init_enter(&once)) {
    on = getenv("BOX_DEBUG_TIMING") != NULL;
    g_once_init_leave(&once, 1);
  }
  return on;
}

void boxd_track_pid(Boxd *d, pid_t pid)
{
  g_mutex_lock(&d->lock);
  g_hash_table_add(d->live_pids, GINT_TO_POINTER(pid));
  g_mutex_unlock(&d->lock);
}

void boxd_untrack_pid(Boxd *d, pid_t pid)
{
  g_mutex_lock(&d->lock);
  g_hash_table_remove(d->live_pids, GINT_TO_POINTER(pid));
  g_mutex_unlock(&d->lock);
}

void boxd_kill_tracked(Boxd *d)
{
  g_mutex_lock(&d->lock);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, d->live_pids);
  while (g_hash_table_iter_next(&it, &key, NULL)) kill(GPOINTER_TO_INT(key), SIGKILL);
  g_mutex_unlock(&d->lock);
}

void boxd_worker_free(BoxdWorker *w)
{
  if (w->ctl >= 0) close(w->ctl);
  g_free(w);
}

/* Discards a worker that never ran: kill it and give its command back. */
void boxd_worker_discard(Boxd *d, BoxdWorker *w)
{
  kill(w->pid, SIGKILL);
  box_reaper_wait(w->pid);
  boxd_untrack_pid(d, w->pid);
  box_vfs_command_end(d->vfs, w->command);
  boxd_worker_free(w);
}

/* ---- the zygote: box-shell started once, forking every worker ----
 *
 * A worker is prepared in three steps, none of which waits for the one
 * before it in a thread of its own: a command's thread, once it has
 * answered (or the pool thread, at start and after failures), asks the
 * zygote to fork, sending the worker's end of its control channel; the
 * zygote's reader thread, told the new pid, places the worker in the mount
 * and says "go"; the worker then roots itself, warms up and says "ready"
 * on its own channel.  The worker joins the ready queue as soon as it is
 * placed: the command that takes it reads that "ready" first
 * (boxd_worker_wait_ready), so a worker still rooting itself costs only the rest
 * of its set-up, and one that fails is replaced there.
 */

/* The mount namespace a worker built around each RAM area, and that
 * worker's workspace in it (area id -> AreaNs*; pool_lock).  An area keeps
 * its layout from one command to the next, so the workers forked after it
 * only join that namespace: no binds, no pivot, no detach of the old root,
 * and no namespace torn down when they exit (each of those two costs an
 * RCU grace period).  They enter the workspace by its descriptor, not its
 * path: a walk from the new root asks the mount to LOOKUP each name whose
 * entry has expired (a second after the last walk), round trips to boxd
 * for every worker prepared after a pause. */
typedef struct {
  int ns;
  int cwd; /* or -1 */
} AreaNs;
static GHashTable *area_ns;

static void area_ns_free(gpointer data)
{
  AreaNs *a = data;
  close(a->ns);
  if (a->cwd >= 0) close(a->cwd);
  g_free(a);
}

/* pool_lock held: the area's namespace and workspace, or NULL. */
static AreaNs *area_ns_get(int area)
{
  return area_ns ? g_hash_table_lookup(area_ns, GINT_TO_POINTER(area)) : NULL;
}

/* pool_lock held: keeps ns and cwd (the newest) as the area's; false when
 * the pool is gone and the caller still owns both. */
static bool area_ns_keep(int area, int ns, int cwd)
{
  if (!area_ns) return false;
  AreaNs *a = g_new(AreaNs, 1);
  a->ns = ns;
  a->cwd = cwd;
  g_hash_table_insert(area_ns, GINT_TO_POINTER(area), a);
  return true;
}

typedef struct {
  Boxd *d;
  BoxdWorker *w;
} DiscardJob;

static gpointer discard_main(gpointer data)
{
  DiscardJob *job = data;
  boxd_worker_discard(job->d, job->w);
  g_free(job);
  return NULL;
}

/* The zygote forked w (pid, or <= 0 when it could not): place it, let it
 * go, and queue it as ready. */
static void worker_forked(Pool *pl, BoxdWorker *w, pid_t pid)
{
  Boxd *d = pl->d;
  bool ok = pid > 0;
  if (ok) {
    w->pid = pid;
    boxd_track_pid(d, pid);
    g_autoptr(GError) error = NULL;
    /* Placed in the mount before it may take a step there. */
    ok = box_vfs_command_attach(d->vfs, w->command, pid, false, &error);
    if (!ok)
      g_printerr("box: warning: worker could not be placed in the mount: %s\n", error->message);
    if (ok) {
      json_object *go = json_object_new_object();
      json_object_object_add(go, "op", json_object_new_string("go"));
      json_object_object_add(go, "pid", json_object_new_int(pid));
      ok = box_ctl_send(w->ctl, go, NULL, 0);
      json_object_put(go);
    }
  }
  if (boxd_debug_timing())
    g_printerr("worker %d placed in %.3f ms\n", w->command,
               (g_get_monotonic_time() - w->asked) / 1000.0);
  if (ok) {
    g_async_queue_push(pl->ready, w);
  } else if (pid > 0) {
    /* Reaped elsewhere: this thread delivers the zygote's "died". */
    kill(pid, SIGKILL);
    DiscardJob *job = g_new0(DiscardJob, 1);
    job->d = d;
    job->w = w;
    g_thread_unref(g_thread_new("box-discard", discard_main, job));
  } else {
    box_vfs_command_end(d->vfs, w->command);
    boxd_worker_free(w);
  }
  g_mutex_lock(&pool_lock);
  pl->preparing--;
  pl->failures = ok ? 0 : pl->failures + 1;
  /* A worker that joined the queue leaves the count as it was: only a
   * failure leaves a place for the pool thread to fill (or back off). */
  if (!ok) g_cond_broadcast(&pool_cond);
  g_mutex_unlock(&pool_lock);
}

static BoxdWorker *pop_forking(Pool *pl)
{
  g_mutex_lock(&pool_lock);
  BoxdWorker *w = g_queue_pop_head(&pl->forking);
  g_mutex_unlock(&pool_lock);
  return w;
}

static gpointer zygote_read_main(gpointer data)
{
  Pool *pl = data;
  for (;;) {
    json_object *msg = box_ctl_recv(pl->zygote_ctl, NULL, NULL);
    if (!msg) break;
    json_object *op, *pid, *status;
    if (json_object_object_get_ex(msg, "op", &op) && json_object_object_get_ex(msg, "pid", &pid)) {
      const char *o = json_object_get_string(op);
      if (strcmp(o, "forked") == 0) {
        BoxdWorker *w = pop_forking(pl);
        if (w) worker_forked(pl, w, json_object_get_int(pid));
      } else if (strcmp(o, "died") == 0 && json_object_object_get_ex(msg, "status", &status)) {
        box_reaper_store(json_object_get_int(pid), json_object_get_int(status));
      }
    }
    json_object_put(msg);
  }
  /* The zygote is gone: the forks it never answered will not come. */
  BoxdWorker *w;
  while ((w = pop_forking(pl))) worker_forked(pl, w, -1);
  return NULL;
}

/* Whether a worker's /usr holds only its time zones (usr/share/zoneinfo,
 * vfs/command.c): no root of the box is /usr or lies under it but below
 * usr/share.  No name can be made in a RAM root's /usr and /usr/share
 * (vfs/command.c), so nothing else can be there (python/boxpython.h,
 * usr_bare). */
static bool usr_bare(Boxd *d)
{
  for (int i = 0; d->roots[i]; i++) {
    const char *r = d->roots[i];
    if (strcmp(r, "/usr") == 0 || (g_str_has_prefix(r, "/usr/") && strcmp(r, "/usr/share") != 0 &&
                                   !g_str_has_prefix(r, "/usr/share/")))
      return false;
  }
  return true;
}

/* Called from the pool thread, inside the workers' network namespace. */
static bool zygote_start(Pool *pl)
{
  Boxd *d = pl->d;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return false;
  char *argv[] = { "box-shell", "--zygote", "--ctl-fd=3", pl->python ? "--warm-python" : NULL,
                   NULL };
  /* The egress routes' phantoms, for the Shell's variables (shell_worker.c). */
  g_autofree char *phantoms = NULL;
  if (d->phantom_env && d->phantom_env[0]) {
    g_autofree char *joined = g_strjoinv("\n", d->phantom_env);
    phantoms = g_strconcat("BOX_PHANTOMS=", joined, NULL);
  }
  /* The Shell's commands a tool table takes (shell_worker.c). */
  g_autofree char *taken = boxd_host_commands(d);
  g_autofree char *host_commands = taken ? g_strconcat("BOX_HOST_COMMANDS=", taken, NULL) : NULL;
  char *envp[4] = { NULL };
  int nenv = 0;
  if (phantoms) envp[nenv++] = phantoms;
  if (host_commands) envp[nenv++] = host_commands;
  if (pl->python && usr_bare(d)) envp[nenv++] = "BOX_USR_BARE=1";
  pid_t pid = fork();
  if (pid == 0) {
    /* System calls only from here on: boxd has threads. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (dup2(pair[1], 3) < 0) _exit(127);
    close_range(4, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    (void)setrlimit(RLIMIT_NOFILE, &d->workload_nofile);
    execve(d->box_shell, argv, envp);
    _exit(127);
  }
  close(pair[1]);
  if (pid < 0) {
    close(pair[0]);
    return false;
  }
  boxd_track_pid(d, pid);
  pl->zygote_pid = pid;
  __atomic_store_n(&pl->zygote_ctl, pair[0], __ATOMIC_RELEASE);
  pl->zygote_reader = g_thread_new("box-zygote", zygote_read_main, pl);
  return true;
}

static void zygote_stop(Pool *pl)
{
  if (pl->zygote_pid < 0) return;
  kill(pl->zygote_pid, SIGKILL);
  shutdown(pl->zygote_ctl, SHUT_RDWR);
  g_thread_join(pl->zygote_reader);
  box_reaper_wait(pl->zygote_pid);
  boxd_untrack_pid(pl->d, pl->zygote_pid);
  close(pl->zygote_ctl);
  pl->zygote_ctl = -1;
  pl->zygote_pid = -1;
  pl->has_env = false;
}

/* pool_lock held: the gateway's environment, once it is known, in a
 * message of its own (no descriptor) ahead of the next fork request. */
static void send_env(Pool *pl)
{
  const char *env = __atomic_load_n(&pl->d->worker_env_json, __ATOMIC_ACQUIRE);
  json_object *env_obj = !pl->has_env && env ? json_tokener_parse(env) : NULL;
  if (!env_obj) return;
  json_object *msg = json_object_new_object();
  json_object_object_add(msg, "op", json_object_new_string("env"));
  json_object_object_add(msg, "env", env_obj);
  if (box_ctl_send(pl->zygote_ctl, msg, NULL, 0)) pl->has_env = true;
  json_object_put(msg);
}

static json_object *fork_request(Pool *pl, int command)
{
  Boxd *d = pl->d;
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("fork"));
  g_autofree char *root = box_vfs_ram_root(d->vfs, command);
  json_object_object_add(req, "root", json_object_new_string(root));
  json_object_object_add(req, "workspace", json_object_new_string(d->workspace));
  json_object_object_add(req, "home", json_object_new_string(d->agent_home));
  json_object *binds = json_object_new_array();
  for (int i = 0; d->roots[i]; i++) {
    g_autofree char *pass = box_vfs_pass_path(d->vfs, d->roots[i]);
    g_autofree char *b = g_strdup_printf("%s=%s", pass, d->roots[i]);
    json_object_array_add(binds, json_object_new_string(b));
  }
  json_object_object_add(req, "binds", binds);
  return req;
}

/* Whether the directory dir (a worker's workspace, in its namespace) is
 * still the workspace's path there: not removed (rm -rf, then made anew)
 * nor moved.  The kernel's name of it, from its cache: no request to the
 * mount. */
static bool workspace_still_at(int dir, const char *workspace)
{
  char link[32], at[PATH_MAX];
  g_snprintf(link, sizeof link, "/proc/self/fd/%d", dir);
  ssize_t n = readlink(link, at, sizeof at);
  return n > 0 && (size_t)n == strlen(workspace) && memcmp(at, workspace, (size_t)n) == 0;
}

/* Asks the zygote for one more worker; the reader thread takes it from
 * there.  Called with pool_lock held. */
static bool worker_request(Pool *pl)
{
  Boxd *d = pl->d;
  int command = box_vfs_command_new(d->vfs);
  if (command < 0) return false;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    box_vfs_command_end(d->vfs, command);
    return false;
  }
  BoxdWorker *w = g_new0(BoxdWorker, 1);
  w->command = command;
  w->pid = -1;
  w->ctl = pair[0];
  w->asked = g_get_monotonic_time();
  w->area = box_vfs_command_area(d->vfs, command);
  AreaNs *a = area_ns_get(w->area);
  if (a && a->cwd >= 0 && !workspace_still_at(a->cwd, d->workspace)) {
    /* removed or moved since: the workers walk its path again */
    close(a->cwd);
    a->cwd = -1;
  }
  int fds[3] = { pair[1], a ? a->ns : -1, a ? a->cwd : -1 };
  int nfds = !a ? 1 : a->cwd < 0 ? 2 : 3;
  /* Queued before it is asked for: the answer may come at once. */
  g_queue_push_tail(&pl->forking, w);
  pl->preparing++;
  send_env(pl);
  json_object *req = fork_request(pl, command);
  bool sent = box_ctl_send(pl->zygote_ctl, req, fds, nfds);
  w->has_env = pl->has_env;
  json_object_put(req);
  close(pair[1]);
  if (!sent) {
    g_queue_remove(&pl->forking, w);
    pl->preparing--;
    box_vfs_command_end(d->vfs, command);
    boxd_worker_free(w);
  }
  return sent;
}

/* Asks for the workers the pool lacks, from the calling thread: a command's
 * thread once it has answered, rather than waking the pool thread for it.
 * After failures the pool thread takes over (it backs off). */
static void pool_refill(Pool *pl)
{
  g_mutex_lock(&pool_lock);
  bool started = __atomic_load_n(&pl->zygote_ctl, __ATOMIC_ACQUIRE) >= 0;
  bool handed_over = !started || pool_stop || pl->failures > 0;
  while (!handed_over && g_async_queue_length(pl->ready) + pl->preparing < POOL_SIZE)
    if (!worker_request(pl)) {
      pl->failures++;
      handed_over = true;
    }
  if (handed_over) g_cond_broadcast(&pool_cond);
  g_mutex_unlock(&pool_lock);
}

void boxd_pool_refill(Boxd *d)
{
  (void)d;
  for (size_t i = 0; i < G_N_ELEMENTS(pools); i++)
    if (pools[i].wanted) pool_refill(&pools[i]);
}

/* pool_lock held: asks pl's zygote for what its pool lacks, starting the
 * zygote first if need be; false when pl needs nothing (or is not wanted). */
static bool pool_tend(Pool *pl)
{
  if (!pl->wanted) return false;
  if (pl->zygote_pid < 0) {
    g_mutex_unlock(&pool_lock);
    bool ok = zygote_start(pl);
    g_mutex_lock(&pool_lock);
    if (!ok) {
      g_printerr("box: error: cannot start the %s workers' zygote %s: %s\n",
                 pl->python ? "Python" : "Shell", pl->d->box_shell, g_strerror(errno));
      pl->wanted = false;
      pl->broken = true;
      return false;
    }
  }
  if (pl->failures > 3) {
    /* Back off instead of spinning when workers cannot start. */
    pl->failures = 0;
    gint64 until = g_get_monotonic_time() + G_TIME_SPAN_SECOND;
    while (!pool_stop && g_cond_wait_until(&pool_cond, &pool_lock, until)) {}
    return true;
  }
  if (g_async_queue_length(pl->ready) + pl->preparing >= POOL_SIZE) return false;
  if (!worker_request(pl)) {
    pl->failures++;
    gint64 until = g_get_monotonic_time() + 100 * G_TIME_SPAN_MILLISECOND;
    g_cond_wait_until(&pool_cond, &pool_lock, until);
  }
  return true;
}

static gpointer pool_main(gpointer data)
{
  Boxd *d = data;
  /* Workers inherit this thread's network namespace: one with no route at
   * all, made once, because a namespace per worker costs a millisecond
   * of every command's start. */
  if (unshare(CLONE_NEWNET) != 0) {
    g_printerr("box: error: containment setup failed during network namespace: %s\n",
               g_strerror(errno));
    return NULL;
  }
  __atomic_store_n(&d->worker_netns_fd, open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC),
                   __ATOMIC_RELEASE);
  g_mutex_lock(&pool_lock);
  while (!pool_stop) {
    bool busy = false;
    for (size_t i = 0; i < G_N_ELEMENTS(pools) && !pool_stop; i++)
      busy = pool_tend(&pools[i]) || busy;
    if (!busy && !pool_stop) g_cond_wait(&pool_cond, &pool_lock);
  }
  g_mutex_unlock(&pool_lock);
  return NULL;
}

bool boxd_workers_start(Boxd *d, GError **error)
{
  (void)error;
  for (size_t i = 0; i < G_N_ELEMENTS(pools); i++) {
    pools[i].d = d;
    pools[i].ready = g_async_queue_new();
    pools[i].wanted = !pools[i].python;
    pools[i].failures = pools[i].preparing = 0;
    pools[i].broken = false;
  }
  pool_stop = false;
  g_mutex_lock(&pool_lock);
  area_ns = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, area_ns_free);
  g_mutex_unlock(&pool_lock);
  /* The pool thread lives as long as boxd serves: workers it starts die
   * with it (PR_SET_PDEATHSIG follows the creating thread). */
  pool_thread = g_thread_new("box-pool", pool_main, d);
  return true;
}

void boxd_workers_stop(Boxd *d)
{
  g_mutex_lock(&pool_lock);
  pool_stop = true;
  g_cond_broadcast(&pool_cond);
  g_mutex_unlock(&pool_lock);
  g_thread_join(pool_thread);
  for (size_t i = 0; i < G_N_ELEMENTS(pools); i++) {
    Pool *pl = &pools[i];
    zygote_stop(pl);
    BoxdWorker *w;
    while ((w = g_async_queue_try_pop(pl->ready))) boxd_worker_discard(d, w);
    g_async_queue_unref(pl->ready);
    pl->ready = NULL;
  }
  /* Before the mount goes: a namespace kept open holds binds of it. */
  g_mutex_lock(&pool_lock);
  g_hash_table_destroy(area_ns);
  area_ns = NULL;
  g_mutex_unlock(&pool_lock);
}

/* A ready worker, waiting at most READY_TIMEOUT_MS.  Its replacement is
 * asked for once the command is answered (asking takes time, and the
 * zygote's fork would compete with the command), or at once when this
 * leaves the pool empty. */
BoxdWorker *boxd_worker_take(Boxd *d, bool python)
{
  (void)d;
  Pool *pl = &pools[python && !pools[1].broken ? 1 : 0];
  if (!pl->wanted) {
    /* the first Python command: the pool thread starts its zygote */
    g_mutex_lock(&pool_lock);
    pl->wanted = true;
    g_cond_broadcast(&pool_cond);
    g_mutex_unlock(&pool_lock);
  }
  BoxdWorker *w = g_async_queue_try_pop(pl->ready);
  if (w && g_async_queue_length(pl->ready) > 0) return w;
  pool_refill(pl);
  return w ? w : g_async_queue_timeout_pop(pl->ready, (guint64)READY_TIMEOUT_MS * 1000);
}

/* The worker's "ready": it has rooted itself in its RAM root and dropped
 * its privileges.  A worker taken from the pool has usually said so long
 * ago; one still setting up is waited for. */
bool boxd_worker_wait_ready(BoxdWorker *w)
{
  struct pollfd p = { .fd = w->ctl, .events = POLLIN };
  int n;
  do n = poll(&p, 1, READY_TIMEOUT_MS);
  while (n < 0 && errno == EINTR);
  int fds[BOX_CTL_MAX_FDS];
  int nfds = 0;
  json_object *msg = n == 1 ? box_ctl_recv(w->ctl, fds, &nfds) : NULL;
  json_object *op;
  bool ready = msg && json_object_object_get_ex(msg, "op", &op) &&
               g_strcmp0(json_object_get_string(op), "ready") == 0;
  json_object_put(msg);
  /* A worker that rooted itself sends its mount namespace along, and its
   * workspace there: kept (the newest) for the next workers of its area.
   * Sent before it ran anything of a command's; a workspace that is no
   * directory is not kept (the workers then walk its path). */
  int kept = 0;
  if (ready && (nfds == 1 || nfds == 2)) {
    /* the cached type only: boxd's thread waits on no FUSE request */
    struct statx st;
    int cwd = nfds == 2 &&
                  statx(fds[1], "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &st) == 0 &&
                  S_ISDIR(st.stx_mode)
                ? fds[1]
                : -1;
    g_mutex_lock(&pool_lock);
    if (area_ns_keep(w->area, fds[0], cwd)) kept = cwd >= 0 ? 2 : 1;
    g_mutex_unlock(&pool_lock);
  }
  for (int i = kept; i < nfds; i++) close(fds[i]);
  return ready;
}
