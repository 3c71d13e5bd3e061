/* lifecycle.c — the mount's start and stop: configuration, the node tree's
 * fixed top, the bound roots, the FUSE session and its loop thread. */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK(box - vfs - error - quark, box_vfs_error)

void box_vfs_raise_fd_limit(struct rlimit *before)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    if (before) *before = (struct rlimit){ 1024, 1024 };
    return;
  }
  if (before) *before = rl;
  rlim_t want = 1u << 20;
  FILE *f = fopen("/proc/sys/fs/nr_open", "re");
  unsigned long nr_open = 0;
  if (f) {
    if (fscanf(f, "%lu", &nr_open) == 1 && nr_open > 0 && nr_open < want) want = nr_open;
    fclose(f);
  }
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
    struct rlimit up = { want, want };
    if (setrlimit(RLIMIT_NOFILE, &up) == 0) return;
  }
  if (rl.rlim_cur != rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : rl.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &rl);
  }
}

/* Three quarters of the descriptor limit for nodes, the rest for open
 * files, directories being listed, the log and the sockets. */
static guint node_fd_budget(void)
{
  struct rlimit rl;
  rlim_t limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
  if (limit == RLIM_INFINITY || limit > (1u << 20)) limit = 1u << 20;
  rlim_t reserve = MAX(limit / 4, 256);
  return limit > reserve + 64 ? (guint)(limit - reserve) : 64;
}

static char **strv_dup_or_empty(const char *const *v)
{
  if (!v) return g_new0(char *, 1);
  return g_strdupv((char **)v);
}

bool vfs_root_is_nested(char **roots, guint i)
{
  for (guint j = 0; roots[j]; j++) {
    if (j == i) continue;
    if (strcmp(roots[i], roots[j]) == 0) {
      if (j < i) return true; /* duplicate: keep the first */
      continue;
    }
    if (box_path_within(roots[i], roots[j])) return true;
  }
  return false;
}

static bool build_pass_chain(BoxVfs *v, const char *root, GError **error)
{
  int fd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot open bound root %s: %s", root, g_strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int e = errno;
    close(fd);
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot stat bound root %s: %s", root, g_strerror(e));
    return false;
  }
  gchar **comps = g_strsplit(root + 1, "/", -1);
  guint n = g_strv_length(comps);
  Node *dir = v->passdir;
  for (guint i = 0; i + 1 < n; i++) {
    if (comps[i][0] == '\0') continue;
    Node *next = g_hash_table_lookup(dir->children, comps[i]);
    if (!next) {
      next = vfs_dir_node_new(v, NODE_CHAIN, -1, dir, comps[i], 0755);
      next->chain = true;
    }
    dir = next;
  }
  Node *pn = vfs_pass_insert(v, dir, comps[n - 1], fd, &st);
  pn->root_path = g_strdup(root);
  g_hash_table_insert(v->root_nodes, pn->root_path, pn);
  g_hash_table_insert(dir->children, g_strdup(pn->name), pn);
  vfs_node_ref(pn); /* permanent */
  g_strfreev(comps);
  return true;
}

static void *loop_thread(void *arg)
{
  BoxVfs *v = arg;
  struct fuse_loop_config *cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, 16);
  fuse_loop_cfg_set_clone_fd(cfg, 0);
  fuse_session_loop_mt(v->se, cfg);
  fuse_loop_cfg_destroy(cfg);
  return NULL;
}

static void vfs_free(BoxVfs *v)
{
  vfs_watch_close(v);
  if (v->pool) g_thread_pool_free(v->pool, FALSE, TRUE); /* finish queued jobs */
  if (v->se) fuse_session_destroy(v->se);
  if (v->pending) g_hash_table_unref(v->pending);
  if (v->graveyard) g_ptr_array_unref(v->graveyard);
  if (v->attr_grants) g_array_unref(v->attr_grants);
  g_mutex_clear(&v->pending_lock);
  if (v->commands) {
    for (guint i = 0; i < v->commands->len; i++) {
      Command *c = g_ptr_array_index(v->commands, i);
      g_array_unref(c->pidns);
      g_hash_table_unref(c->denials);
      g_queue_free(c->denial_order);
      if (c->verdicts) g_hash_table_unref(c->verdicts);
      g_free(c->text);
      g_free(c);
    }
    g_ptr_array_unref(v->commands);
    if (v->free_slots) g_array_free(v->free_slots, TRUE);
  }
  if (v->root_nodes) g_hash_table_unref(v->root_nodes);
  vfs_nodes_free(v);
  if (v->pidns) g_hash_table_unref(v->pidns);
  if (v->floor_ids) g_hash_table_unref(v->floor_ids);
  if (v->beneath_seen) g_hash_table_unref(v->beneath_seen);
  g_mutex_clear(&v->lock);
  g_free(v->mountpoint);
  g_free(v->premounted_at);
  g_free(v->view_log);
  g_free(v->trust_pem);
  g_free(v->view_live_dir);
  g_free(v->live_dir);
  g_strfreev(v->roots);
  g_free(v->operator_home);
  g_strfreev(v->floor_trees);
  g_strfreev(v->floor_files);
  g_free(v);
}

BoxVfs *box_vfs_start(const BoxVfsConfig *config, GError **error)
{
  g_return_val_if_fail(config && config->mountpoint, NULL);
  BoxVfs *v = g_new0(BoxVfs, 1);
  v->fuse_fd = -1;
  v->watch_fd = v->watch_wake = -1;
  v->mounted_fd = -1;
  v->root_nodes = g_hash_table_new(g_str_hash, g_str_equal);
  g_mutex_init(&v->lock);
  g_mutex_init(&v->pending_lock);
  v->pending = g_hash_table_new(g_direct_hash, g_direct_equal);
  v->graveyard = g_ptr_array_new_with_free_func((GDestroyNotify)vfs_job_free);
  v->pool = g_thread_pool_new(vfs_job_thread, v, VFS_DECISION_THREADS, FALSE, NULL);
  v->mountpoint = g_strdup(config->mountpoint);
  v->roots = strv_dup_or_empty(config->roots);
  v->operator_home = g_strdup(config->operator_home);
  v->floor_trees = strv_dup_or_empty(config->floor_trees);
  v->floor_files = strv_dup_or_empty(config->floor_files);
  v->decide = config->decide;
  v->decide_quiet = config->decide_quiet;
  v->record = config->record;
  v->outcome = config->outcome;
  v->changed = config->changed;
  v->changed_data = config->changed_data;
  v->decide_data = config->decide_data;
  v->decide_prompt = config->decide_prompt;
  v->cache_decisions = config->cache_decisions && config->decide;
  v->note = config->note;
  v->history_batch = config->history_batch;
  v->beneath = v->cache_decisions ? config->beneath : NULL;
  v->beneath_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  v->ram_per_box = config->ram_per_box;
  v->box_area = -1;
  v->ram_max_bytes = config->ram_max_bytes;
  v->ram_max_inodes = config->ram_max_inodes ? config->ram_max_inodes : VFS_RAM_MAX_INODES;
  v->view_log = g_strdup(config->view_log);
  v->view_live_dir = g_strdup(config->view_live_dir);
  if (config->view_tree) v->view_tree = *config->view_tree;
  v->live_dir = g_strdup(config->live_dir);
  v->in_user_namespace = config->in_user_namespace;
  v->premounted_at = g_strdup(config->premounted_at);
  v->premounted_fd = config->premounted_fd;
  v->host_ids = config->premounted_at != NULL;
  v->host_uid = config->host_uid;
  v->host_gid = config->host_gid;
  if (config->mounted_by_fusermount) v->mounted_fd = config->mounted_fd;
  vfs_guards_record(v);
  v->node_fd_budget = node_fd_budget();
  vfs_nodes_init(v);
  v->pidns = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, vfs_pidns_entry_free);
  v->commands = g_ptr_array_new();
  v->free_slots = g_array_new(FALSE, FALSE, sizeof(int));
  v->next_ino = FUSE_ROOT_ID;
  v->attr_grants = g_array_new(FALSE, FALSE, sizeof(fuse_ino_t));
  vfs_watch_open(v);

  for (char **r = v->roots; *r; r++) {
    if ((*r)[0] != '/' || (*r)[1] == '\0') {
      g_set_error(error, BOX_VFS_ERROR, 0, "bound root must be an absolute path below /: %s", *r);
      vfs_free(v);
      return NULL;
    }
    if (box_path_within(v->mountpoint, *r)) {
      g_set_error(error, BOX_VFS_ERROR, 0, "mountpoint %s lies inside bound root %s", v->mountpoint,
                  *r);
      vfs_free(v);
      return NULL;
    }
  }

  v->root = vfs_dir_node_new(v, NODE_ROOT, -1, NULL, "", 0755);
  v->passdir = vfs_dir_node_new(v, NODE_PASSDIR, -1, v->root, "pass", 0755);
  v->ramdir = vfs_dir_node_new(v, NODE_RAMDIR, -1, v->root, "ram", 0755);
  for (guint i = 0; v->roots[i]; i++) {
    if (vfs_root_is_nested(v->roots, i)) continue;
    if (!build_pass_chain(v, v->roots[i], error)) {
      vfs_free(v);
      return NULL;
    }
  }
  if (v->ram_per_box) {
    /* one RAM tree for the box's life: a command that never runs, owning
     * the nodes every command's /tmp, /etc, ... are made of */
    g_mutex_lock(&v->lock);
    v->box_area = vfs_command_create(v, "box")->id;
    g_mutex_unlock(&v->lock);
  }

  /* BOXFS_FUSE_DEBUG=1: libfuse traces every request on stderr (to count
   * round trips per operation when measuring). */
  const char *argv[] = { "boxfs", "-o", "fsname=boxfs,subtype=boxfs", "-d", NULL };
  bool trace = g_getenv("BOXFS_FUSE_DEBUG") && strcmp(g_getenv("BOXFS_FUSE_DEBUG"), "1") == 0;
  struct fuse_args args = FUSE_ARGS_INIT(trace ? 4 : 3, (char **)argv);
  v->se = fuse_session_new(&args, &vfs_ops, sizeof vfs_ops, v);
  fuse_opt_free_args(&args);
  if (!v->se) {
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot create the FUSE session");
    vfs_free(v);
    return NULL;
  }
  if (!vfs_mount(v, error)) {
    vfs_free(v);
    return NULL;
  }
  /* The loop thread must not take the caller's signals. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int rc = pthread_create(&v->thread, NULL, loop_thread, v);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    vfs_unmount(v);
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot start the FUSE loop: %s", g_strerror(rc));
    vfs_free(v);
    return NULL;
  }
  v->thread_started = true;
  vfs_watch_start(v);
  return v;
}

void box_vfs_stop(BoxVfs *v)
{
  if (!v) return;
  vfs_watch_stop(v);
  if (v->se) {
    fuse_session_exit(v->se);
    vfs_unmount(v);
  }
  if (v->thread_started) pthread_join(v->thread, NULL);
  vfs_free(v);
}

const char *box_vfs_mountpoint(const BoxVfs *v)
{
  return v->mountpoint;
}

guint64 box_vfs_views_epoch(BoxVfs *v)
{
  return __atomic_load_n(&v->held_refusals, __ATOMIC_RELAXED);
}

char *box_vfs_ram_root(BoxVfs *v, int command)
{
  if (v->box_area >= 0) return g_strdup_printf("%s/ram/box", v->mountpoint);
  return g_strdup_printf("%s/ram/c%d", v->mountpoint, box_vfs_command_area(v, command));
}

void box_vfs_serve_view(BoxVfs *v, int command)
{
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  Command *area = c ? vfs_command(v, c->area) : NULL;
  v->view_root = area ? area->root : NULL;
  g_mutex_unlock(&v->lock);
}

char *box_vfs_pass_path(const BoxVfs *v, const char *real_path)
{
  return g_strconcat(v->mountpoint, "/pass", real_path, NULL);
}
