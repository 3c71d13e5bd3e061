/* cmd_mount.c — `box mount --config FILE [--rw] MOUNTPOINT`:
 * an operator's live view of a box, at MOUNTPOINT, until SIGINT or SIGTERM.
 *
 * What the box's Shell sees: its bound roots (operator home, agent home,
 * workspace) at their real paths, passed through to the real files, and
 * around them a RAM tree of the view's own (/tmp, /dev, ...: the Shell's
 * RAM paths live in boxd's memory, per command or per box, and are listed
 * per running command under .box/commands/ instead).  Read-only unless
 * --rw.  Beside it, in the hidden /.box directory:
 *   decisions.jsonl  the box's decision log, read live (`tail -f` works:
 *                    every read reaches the file, its size is current)
 *   commands/<N>     each command running now in the box (once it has run
 *                    10 ms): its text, its working directory now and its
 *                    RAM area
 *   checkpoints/     the box's checkpoints, read-only: log, and <id>/ the
 *                    workspace at each (checkpoint_view.c, served by the
 *                    view's vfs)
 * The view is its own FUSE daemon (libboxvfs, no policy: the operator is not
 * the agent), so it works with or without a running box; the running box
 * publishes its roots and commands under <box_dir>/private/live.
 *
 * Mechanics: the vfs is mounted on a hidden directory; MOUNTPOINT gets a bind
 * of the view's RAM root and, inside it, a bind of each root's passthrough,
 * remounted read-only unless --rw.  At a signal the binds come off (lazily
 * if something still sits in them), then the vfs.  A view left by a killed
 * `box mount` (its daemon gone: ENOTCONN) is cleared by the next one. */
#include "box/box-private.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] = "Usage: box mount --config FILE [--rw] MOUNTPOINT\n";

/* A FUSE mount whose daemon died answers ENOTCONN: take it off. */
static void clear_dead_mount(const char *path)
{
  struct stat st;
  for (int i = 0; i < 8 && stat(path, &st) != 0 && errno == ENOTCONN; i++)
    if (umount2(path, MNT_DETACH) != 0 && errno == EPERM)
      box_fusermount_unmount(path); /* an ordinary user's view, fusermount3's */
}

/* The hidden directories of views whose `box mount` was killed. */
static void clear_stale_hidden(void)
{
  const char *tmp = g_get_tmp_dir();
  GDir *d = g_dir_open(tmp, 0, NULL);
  const char *e;
  while (d && (e = g_dir_read_name(d)) != NULL) {
    if (!g_str_has_prefix(e, "boxfs-opview-")) continue;
    g_autofree char *p = g_build_filename(tmp, e, NULL);
    struct stat st;
    if (stat(p, &st) != 0 && errno == ENOTCONN) clear_dead_mount(p);
    rmdir(p); /* only when empty: a live view's is a mount point */
  }
  if (d) g_dir_close(d);
}

/* The running box's roots (private/live/box.json), when its boxd lives. */
static char **live_roots(const char *box_dir, char **workspace)
{
  g_autofree char *path = g_build_filename(box_dir, "private", "live", "box.json", NULL);
  json_object *o = json_object_from_file(path);
  if (!o) return NULL;
  json_object *x;
  pid_t pid = json_object_object_get_ex(o, "pid", &x) ? json_object_get_int(x) : 0;
  char **out = NULL;
  if (pid > 0 && kill(pid, 0) == 0 && json_object_object_get_ex(o, "roots", &x) &&
      json_object_is_type(x, json_type_array)) {
    GPtrArray *a = g_ptr_array_new();
    for (size_t i = 0; i < json_object_array_length(x); i++)
      g_ptr_array_add(a, g_strdup(json_object_get_string(json_object_array_get_idx(x, i))));
    g_ptr_array_add(a, NULL);
    out = (char **)g_ptr_array_free(a, FALSE);
    if (json_object_object_get_ex(o, "workspace", &x))
      *workspace = g_strdup(json_object_get_string(x));
  }
  json_object_put(o);
  return out;
}

/* Roots as `box run` binds them: workspace, agent home, operator home,
 * without one nested in another. */
static char **config_roots(BoxConfig *cfg, const char *operator_home, char **workspace)
{
  g_autofree char *cwd = g_get_current_dir();
  *workspace = box_canonical_path(cfg->agent.workspace ? cfg->agent.workspace : cwd);
  const char *h = g_hash_table_lookup(cfg->agent.env, "HOME");
  g_autofree char *agent_home = h ? box_canonical_path(h) : g_strdup(operator_home);
  const char *cand[] = { operator_home, agent_home, *workspace };
  GPtrArray *a = g_ptr_array_new();
  for (guint i = 0; i < G_N_ELEMENTS(cand); i++) {
    if (!cand[i]) continue;
    bool nested = false;
    for (guint j = 0; j < G_N_ELEMENTS(cand); j++)
      if (j != i && cand[j] && box_path_within(cand[i], cand[j]) &&
          (strcmp(cand[i], cand[j]) != 0 || j < i))
        nested = true;
    if (!nested) g_ptr_array_add(a, g_strdup(cand[i]));
  }
  g_ptr_array_add(a, NULL);
  return (char **)g_ptr_array_free(a, FALSE);
}

/* Takes the binds off, innermost first; lazily when still in use. */
static void unbind_all(GPtrArray *binds)
{
  for (guint i = binds->len; i > 0; i--) {
    const char *t = g_ptr_array_index(binds, i - 1);
    if (umount2(t, 0) != 0) umount2(t, MNT_DETACH);
  }
}

/* The checkpoints for .box/checkpoints; NULL, said, when they cannot be. */
static BoxCheckpointView *view_checkpoints(BoxConfig *cfg, const char *workspace)
{
  g_autoptr(GError) error = NULL;
  BoxCheckpointView *cv = box_checkpoint_view_new(cfg, workspace ? workspace : "/", &error);
  if (!cv && cfg->checkpoints.enabled)
    fprintf(stderr, "box: warning: no checkpoints in the view: %s\n", error->message);
  return cv;
}

typedef struct {
  const char *name, *workspace;
  BoxConfig *cfg;
  bool running;
} Shown;

static void say_mounted(const Shown *shown, const char *target, bool rw)
{
  const char *name = shown->name ? shown->name : "?";
  /* an empty .box/commands/ must not read as a box that is idle; one
   * write, so that whoever waits for the first line has the second */
  g_autofree char *idle =
    shown->running ? g_strdup("")
                   : g_strdup_printf("box: box %s is not running: the view shows its files and "
                                     "decision log as its config names them; its commands "
                                     "appear once it runs\n",
                                     name);
  fprintf(stderr, "box: mounted the view of box %s at %s (%s); workspace %s; stop with Ctrl-C\n%s",
          name, target, rw ? "read-write" : "read-only", shown->workspace ? shown->workspace : "?",
          idle);
}

/* Root: the mount at a hidden place, its RAM root bound on target and each
 * bound root's /pass directory bound at its path there, read-only unless
 * rw, so that the host's processes see the view. */
static int view_by_binds(BoxVfsConfig *vc, const Shown *shown, const char *target, bool rw,
                         sigset_t *set)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *hidden = g_dir_make_tmp("boxfs-opview-XXXXXX", &error);
  if (!hidden) return box_fail("cannot create the view's mount point: %s", error->message);
  chmod(hidden, 0755);
  vc->mountpoint = hidden;
  box_vfs_raise_fd_limit(NULL);
  BoxVfs *vfs = box_vfs_start(vc, &error);
  if (!vfs) {
    rmdir(hidden);
    return box_fail("cannot mount the view: %s", error->message);
  }
  /* Every host process reading the view is placed as a tool of one
   * command: no policy decisions, the binds' flags bound it. */
  int command = box_vfs_command_new(vfs);
  int status = 0;
  g_autofree char *ram = box_vfs_ram_root(vfs, command);
  GPtrArray *binds = g_ptr_array_new_with_free_func(g_free);
  if (!box_vfs_command_attach(vfs, command, getpid(), true, &error)) {
    status = box_fail("cannot place the view's readers: %s", error->message);
    goto out;
  }
  if (mount(ram, target, NULL, MS_BIND, NULL) != 0) {
    status = box_fail("cannot bind the view on %s: %s", target, g_strerror(errno));
    goto out;
  }
  g_ptr_array_add(binds, g_strdup(target));
  for (const char *const *r = vc->roots; *r; r++) {
    g_autofree char *pass = box_vfs_pass_path(vfs, *r);
    char *at = g_strconcat(target, *r, NULL);
    if (mount(pass, at, NULL, MS_BIND, NULL) != 0) {
      status = box_fail("cannot bind %s on %s: %s", *r, at, g_strerror(errno));
      g_free(at);
      goto out;
    }
    g_ptr_array_add(binds, at);
  }
  if (!rw)
    for (guint i = 0; i < binds->len; i++)
      if (mount(NULL, g_ptr_array_index(binds, i), NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) !=
          0) {
        status = box_fail("cannot make the view read-only: %s", g_strerror(errno));
        goto out;
      }
  say_mounted(shown, target, rw);
  int sig = 0;
  sigwait(set, &sig);
out:
  unbind_all(binds);
  g_ptr_array_unref(binds);
  box_vfs_command_end(vfs, command);
  box_vfs_stop(vfs);
  rmdir(hidden);
  return status;
}

/* An ordinary user binds nothing: Debian's set-uid fusermount3 mounts the
 * connection at target itself (read-only unless rw, as sshfs's are), and
 * the mount serves the whole view from its own root, each bound root at
 * its path. */
static int view_by_fusermount(BoxVfsConfig *vc, const Shown *shown, const char *target, bool rw,
                              sigset_t *set)
{
  g_autoptr(GError) error = NULL;
  int fd = box_fusermount_at(target, box_vfs_allow_other(), !rw);
  if (fd < 0) return 1;
  vc->mountpoint = target;
  vc->mounted_by_fusermount = true;
  vc->mounted_fd = fd;
  box_vfs_raise_fd_limit(NULL);
  BoxVfs *vfs = box_vfs_start(vc, &error);
  if (!vfs) {
    box_fusermount_unmount(target);
    close(fd);
    return box_fail("cannot serve the view at %s: %s", target, error->message);
  }
  int command = box_vfs_command_new(vfs);
  int status = 0;
  if (!box_vfs_command_attach(vfs, command, getpid(), true, &error)) {
    status = box_fail("cannot place the view's readers: %s", error->message);
  } else {
    box_vfs_serve_view(vfs, command);
    say_mounted(shown, target, rw);
    int sig = 0;
    sigwait(set, &sig);
  }
  /* the loop first: its own unmount fails (an ordinary user's), and its
   * wake through the mount still there ends it, even where a namespace
   * made meanwhile keeps a copy of the connection (box_vfs_wake_unmounted) */
  box_vfs_command_end(vfs, command);
  box_vfs_stop(vfs);
  box_fusermount_unmount(target);
  return status;
}

int box_verb_mount(int argc, char **argv)
{
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  /* before any thread: only sigwait below takes them */
  sigprocmask(SIG_BLOCK, &set, NULL);

  g_autofree char *config_path = NULL;
  gboolean rw = FALSE;
  g_auto(GStrv) rest = NULL;
  GOptionEntry entries[] = {
    { "config", 0, 0, G_OPTION_ARG_FILENAME, &config_path, "The box's configuration", "FILE" },
    { "rw", 0, 0, G_OPTION_ARG_NONE, &rw, "Let the view write the box's files", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_set_prgname("box mount");
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("MOUNTPOINT - an operator's live view of a box");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "box: error: %s\n%s", error->message, usage);
    return 2;
  }
  if (!config_path || !rest || !rest[0] || rest[1]) {
    fprintf(stderr, "box: error: need --config FILE and one MOUNTPOINT\n%s", usage);
    return 2;
  }
  const char *h = getenv("HOME");
  g_autofree char *operator_home = box_canonical_path(h && *h ? h : "/");
  if (!operator_home) return box_fail("cannot resolve the operator's home directory");
  g_autoptr(BoxConfig) cfg = box_config_load(config_path, operator_home, &error);
  if (!cfg) return box_fail("%s", error->message);

  clear_dead_mount(rest[0]);
  clear_stale_hidden();
  g_autofree char *target = box_canonical_path(rest[0]);
  struct stat st;
  if (!target || stat(target, &st) != 0 || !S_ISDIR(st.st_mode))
    return box_fail("mount point %s is not an existing directory", rest[0]);

  g_autofree char *workspace = NULL;
  g_auto(GStrv) roots = live_roots(cfg->box_dir, &workspace);
  bool running = roots != NULL;
  if (!running) roots = config_roots(cfg, operator_home, &workspace);
  for (char **r = roots; *r; r++)
    if (box_path_within(target, *r))
      return box_fail("mount point %s lies inside the box's root %s", target, *r);

  g_autofree char *log =
    g_build_filename(cfg->box_dir, "private", "telemetry", "records.jsonl", NULL);
  g_autofree char *live = g_build_filename(cfg->box_dir, "private", "live", NULL);
  BoxVfsConfig vc = {
    .roots = (const char *const *)roots,
    .operator_home = operator_home,
    .view_log = log,
    .view_live_dir = live,
  };
  BoxCheckpointView *checkpoints = view_checkpoints(cfg, workspace);
  vc.view_tree = box_checkpoint_view_tree(checkpoints);
  Shown shown = { cfg->name, workspace, cfg, running };
  int status = geteuid() == 0 ? view_by_binds(&vc, &shown, target, rw, &set)
                              : view_by_fusermount(&vc, &shown, target, rw, &set);
  box_checkpoint_view_free(checkpoints);
  if (status == 0) fprintf(stderr, "box: unmounted %s\n", target);
  return status;
}
