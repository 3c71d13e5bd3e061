/* run.c — `box run`: start a box, run its agent, tear everything down.
 *
 * Order: config → policy → box directory and its lock → aliases → decision
 * log → private mount namespace and the FUSE mount → workers and broker →
 * agent.  Anything refused before the agent starts exits 1 with
 * "box: error: …"; a config or policy error creates nothing.
 */
#include "box/box-private.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BOX_ERROR (g_quark_from_static_string("box-run"))

static char *operator_home(void)
{
  const char *h = getenv("HOME");
  if (!h || !*h) {
    struct passwd *pw = getpwuid(getuid());
    h = pw ? pw->pw_dir : "/";
  }
  return box_canonical_path(h);
}

static char *sibling_binary(const char *name)
{
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  if (!self)
    return NULL;
  g_autofree char *dir = g_path_get_dirname(self);
  const char *candidates[] = { ".", "../alias", "../box", "../libexec/boxfs", NULL };
  for (int i = 0; candidates[i]; i++) {
    g_autofree char *p = g_build_filename(dir, candidates[i], name, NULL);
    if (access(p, X_OK) == 0)
      return box_canonical_path(p);
  }
  return NULL;
}

/* ---- box directory ---- */

static bool mkdir_0700(const char *path, GError **error)
{
  if (mkdir(path, 0700) != 0 && errno != EEXIST) {
    g_set_error(error, BOX_ERROR, 1, "cannot create %s: %s", path, g_strerror(errno));
    return false;
  }
  return true;
}

static char *mint_box_id(void)
{
  guint8 raw[8];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read(fd, raw, sizeof raw) != sizeof raw) {
    for (size_t i = 0; i < sizeof raw; i++)
      raw[i] = (guint8)g_random_int();
  }
  if (fd >= 0)
    close(fd);
  GString *s = g_string_new("box-");
  for (size_t i = 0; i < sizeof raw; i++)
    g_string_append_printf(s, "%02x", raw[i]);
  return g_string_free(s, FALSE);
}

static bool valid_box_id(const char *id)
{
  if (strlen(id) != 20 || strncmp(id, "box-", 4) != 0)
    return false;
  for (const char *p = id + 4; *p; p++)
    if (!g_ascii_isxdigit(*p) || g_ascii_isupper(*p))
      return false;
  return true;
}

/* Creates or reopens the box directory; returns the lock fd. */
static int prepare_box_dir(Boxd *d, GError **error)
{
  const char *dir = d->config->box_dir;
  g_autofree char *parent = g_path_get_dirname(dir);
  struct stat st;
  if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
    g_set_error(error, BOX_ERROR, 1,
                "box directory %s: the box directory's parent does not exist; create it, because "
                "Box creates no directory above the one `box_dir` names",
                dir);
    return -1;
  }
  bool fresh = false;
  if (lstat(dir, &st) != 0) {
    if (mkdir(dir, 0700) != 0) {
      g_set_error(error, BOX_ERROR, 1, "cannot create box directory %s: %s", dir,
                  g_strerror(errno));
      return -1;
    }
    fresh = true;
    if (lstat(dir, &st) != 0)
      return -1;
  }
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
    g_set_error(error, BOX_ERROR, 1, "unsafe box directory %s: it is not a directory", dir);
    return -1;
  }
  if (st.st_uid != getuid()) {
    g_set_error(error, BOX_ERROR, 1, "unsafe box directory %s: it is not owned by the current user",
                dir);
    return -1;
  }
  if ((st.st_mode & 07777) != 0700) {
    g_set_error(error, BOX_ERROR, 1, "unsafe box directory %s: its mode is not 0700", dir);
    return -1;
  }
  g_autofree char *private_dir = g_build_filename(dir, "private", NULL);
  g_autofree char *id_file = g_build_filename(private_dir, "box-id", NULL);
  g_autofree char *stored = NULL;
  if (!fresh && !g_file_get_contents(id_file, &stored, NULL, NULL)) {
    g_autoptr(GDir) gd = g_dir_open(dir, 0, NULL);
    if (gd && g_dir_read_name(gd)) {
      g_set_error(error, BOX_ERROR, 1,
                  "unsafe box directory %s: it is not empty and contains no valid private record",
                  dir);
      return -1;
    }
  }
  if (stored) {
    g_strstrip(stored);
    if (!valid_box_id(stored)) {
      g_set_error(error, BOX_ERROR, 1,
                  "unsafe box directory %s: it is not empty and contains no valid private record",
                  dir);
      return -1;
    }
  }
  const char *children[] = { "bin", "run", "private", "trust", NULL };
  for (int i = 0; children[i]; i++) {
    g_autofree char *p = g_build_filename(dir, children[i], NULL);
    if (!mkdir_0700(p, error))
      return -1;
  }
  g_autofree char *telemetry = g_build_filename(private_dir, "telemetry", NULL);
  if (!mkdir_0700(telemetry, error))
    return -1;
  g_autofree char *lock_path = g_build_filename(private_dir, ".lock", NULL);
  int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) {
    g_set_error(error, BOX_ERROR, 1, "cannot open %s: %s", lock_path, g_strerror(errno));
    return -1;
  }
  if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
    g_set_error(error, BOX_ERROR, 1,
                "box %s is already running, and one run owns a box at a time; wait for that run "
                "to exit, or start a configuration with a different `box_dir`",
                stored ? stored : "(unnamed)");
    close(lock);
    return -1;
  }
  if (stored) {
    d->box_id = g_steal_pointer(&stored);
  } else {
    d->box_id = mint_box_id();
    g_autofree char *line = g_strconcat(d->box_id, "\n", NULL);
    if (!g_file_set_contents_full(id_file, line, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600,
                                  error)) {
      close(lock);
      return -1;
    }
  }
  return lock;
}

/* Why the installed alias at path is not a sound copy of box-alias (image,
 * len), or NULL when it is: a read-only regular file of ours with one link
 * and the same bytes. */
static const char *alias_unsound(const char *path, const char *image, gsize len)
{
  struct stat st;
  if (lstat(path, &st) != 0)
    return NULL; /* none yet: installed without a word */
  if (!S_ISREG(st.st_mode))
    return "it is not a regular file";
  if (st.st_nlink != 1)
    return "it is a hard link, so it is one file with another";
  if (st.st_uid != getuid() || (st.st_mode & 07777) != 0555)
    return "its owner or mode changed";
  if ((gsize)st.st_size != len)
    return "its contents differ from box-alias";
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return "it cannot be read";
  const char *why = NULL;
  char buf[65536];
  gsize at = 0;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n < 0 || at != len)
        why = "its contents differ from box-alias";
      break;
    }
    if (at + (gsize)n > len || memcmp(buf, image + at, (size_t)n) != 0) {
      why = "its contents differ from box-alias";
      break;
    }
    at += (gsize)n;
  }
  close(fd);
  return why;
}

/* Writes a fresh read-only copy of image at path (through path.new). */
static bool alias_write(const char *path, const char *image, gsize len, GError **error)
{
  g_autofree char *tmp = g_strconcat(path, ".new", NULL);
  unlink(tmp);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
  if (fd < 0) {
    g_set_error(error, BOX_ERROR, 1, "cannot install alias %s: %s", path, g_strerror(errno));
    return false;
  }
  gsize at = 0;
  errno = 0;
  while (at < len) {
    ssize_t n = write(fd, image + at, len - at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    at += (gsize)n;
  }
  int err = at == len ? 0 : errno ? errno : EIO;
  if (!err && (fchmod(fd, 0555) != 0 || fsync(fd) != 0))
    err = errno;
  if (close(fd) != 0 && !err)
    err = errno;
  if (!err && rename(tmp, path) != 0)
    err = errno;
  if (err) {
    unlink(tmp);
    g_set_error(error, BOX_ERROR, 1, "cannot install alias %s: %s", path, g_strerror(err));
    return false;
  }
  return true;
}

/* Each box's aliases are its own copies of box-alias, read-only: never a
 * hard link, which would make a box's alias and the binary the host runs
 * one file, so that whoever changed one changed the other.  At start each
 * is checked; one that is no longer a sound copy is replaced, and said so. */
static bool install_aliases(Boxd *d, GError **error)
{
  g_autofree char *alias = sibling_binary("box-alias");
  if (!alias) {
    g_set_error(error, BOX_ERROR, 1, "box-alias is not installed beside the box binary");
    return false;
  }
  g_autofree char *image = NULL;
  gsize len = 0;
  if (!g_file_get_contents(alias, &image, &len, error))
    return false;
  const char *names[] = { "zsh", "bash", "sh", NULL };
  for (int i = 0; names[i]; i++) {
    g_autofree char *dst = g_build_filename(d->config->box_dir, "bin", names[i], NULL);
    struct stat st;
    bool present = lstat(dst, &st) == 0;
    const char *why = alias_unsound(dst, image, len);
    if (present && !why)
      continue;
    if (why)
      g_printerr("box: warning: alias %s was changed since Box installed it (%s); installing a "
                 "fresh copy of box-alias\n",
                 dst, why);
    if (!alias_write(dst, image, len, error))
      return false;
  }
  return true;
}

/* ---- roots, tables ---- */

static char **bound_roots(Boxd *d)
{
  GPtrArray *roots = g_ptr_array_new();
  const char *candidates[] = { d->operator_home, d->agent_home, d->workspace };
  for (int i = 0; i < 3; i++) {
    bool covered = false;
    for (guint k = 0; k < roots->len; k++)
      covered |= box_path_within(candidates[i], g_ptr_array_index(roots, k));
    if (!covered)
      g_ptr_array_add(roots, g_strdup(candidates[i]));
  }
  g_ptr_array_add(roots, NULL);
  return (char **)g_ptr_array_free(roots, FALSE);
}

static BoxToolTable *table_of(const BoxProcessSpec *spec)
{
  BoxToolTable *t = g_new0(BoxToolTable, 1);
  t->label = spec->label;
  t->command = spec->command;
  t->read = spec->fs.read;
  t->write = spec->fs.write;
  t->read_file = spec->fs.read_file;
  t->write_file = spec->fs.write_file;
  t->exec = spec->fs.exec;
  t->deny = spec->fs.deny;
  t->env = spec->env;
  t->workspace = spec->workspace;
  return t;
}

/* ---- the agent ---- */

/* The agent runs contained: box/agent.c. */

/* Ends the agent's process group: term, a grace second, then kill. */
static void stop_group(pid_t pgid)
{
  if (kill(-pgid, SIGTERM) != 0)
    return;
  for (int i = 0; i < 20; i++) {
    box_reaper_collect();
    if (kill(-pgid, 0) != 0)
      return;
    g_usleep(50 * 1000);
  }
  kill(-pgid, SIGKILL);
}

/* ---- the whole run ---- */

typedef struct {
  char *config_path;
  char **args;
} RunOptions;

static int serve(Boxd *d, char **agent_argv);

/* The signals only the main thread takes. */
static void box_signal_set(sigset_t *set)
{
  sigemptyset(set);
  sigaddset(set, SIGCHLD);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGHUP);
}

/* Set by `box lua` (cmd_lua.c): the agent command instead of [agent] command. */
char **box_run_agent_override;

int box_verb_run(int argc, char **argv)
{
  /* Blocked before any thread exists (history's flusher starts early), so
   * every thread inherits the mask and only the main thread takes them. */
  sigset_t blocked;
  box_signal_set(&blocked);
  sigprocmask(SIG_BLOCK, &blocked, NULL);
  g_autofree char *config_path = NULL;
  g_auto(GStrv) rest = NULL;
  GOptionEntry entries[] = {
    { "config", 0, 0, G_OPTION_ARG_FILENAME, &config_path, "The box's configuration", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &rest, NULL, "[-- ARGS…]" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_set_prgname("box run"); /* so --help reads "Usage: box run …" */
  g_autoptr(GOptionContext) ctx = g_option_context_new("- run a box and its agent");
  g_option_context_set_summary(
      ctx, "Starts the box described by FILE, runs its [agent] command with ARGS appended, and "
           "exits with the agent's status.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "box: error: %s\n", error->message);
    return 2;
  }
  if (!config_path) {
    fprintf(stderr, "box: error: the following required arguments were not provided: --config "
                    "<FILE>\n");
    return 2;
  }
  Boxd d = { .listen_fd = -1, .worker_netns_fd = -1 };
  g_mutex_init(&d.lock);
  box_vfs_raise_fd_limit(&d.workload_nofile);
  box_tools_set_workload_fd_limit(&d.workload_nofile);
  d.operator_home = operator_home();
  d.operator_path = g_strdup(getenv("PATH"));
  if (!d.operator_home)
    return box_fail("cannot resolve the operator's home directory");
  d.config = box_config_load(config_path, d.operator_home, &error);
  if (!d.config)
    return box_fail("%s", error->message);
  /* Secrets are read once, now, and phantoms minted (spec/runtime.md §7). */
  if (!boxd_egress_prepare(&d, &error))
    return box_fail("%s", error->message);
  box_tools_set_phantoms((const char *const *)d.phantom_env);
  /* Workspace and homes. */
  g_autofree char *cwd = g_get_current_dir();
  const char *ws = d.config->agent.workspace ? d.config->agent.workspace : cwd;
  d.workspace = box_canonical_path(ws);
  struct stat st;
  if (!d.workspace || stat(d.workspace, &st) != 0 || !S_ISDIR(st.st_mode))
    return box_fail("invalid `[agent]` table: `workspace` %s is not an existing directory", ws);
  if (strcmp(d.workspace, d.operator_home) == 0)
    return box_fail("invalid `[agent]` table: `workspace` %s is the operator's home; make a project "
                "directory and name it instead",
                d.workspace);
  const char *agent_home = g_hash_table_lookup(d.config->agent.env, "HOME");
  d.agent_home = agent_home ? box_canonical_path(agent_home) : g_strdup(d.operator_home);
  if (!d.agent_home)
    return box_fail("invalid `[agent]` table: `env.HOME` %s does not exist", agent_home);
  if (box_path_within(d.config->box_dir, d.workspace))
    return box_fail("invalid Box configuration: `box_dir` %s is equal to or below the agent's "
                "workspace %s",
                d.config->box_dir, d.workspace);
  if (box_path_within(d.config->path, d.config->box_dir))
    return box_fail("configuration source %s is inside `box_dir` %s", d.config->path,
                d.config->box_dir);
  /* Policy before any box state. */
  if (d.config->policy) {
    g_autofree char *policy_path = box_canonical_path(d.config->policy);
    if (policy_path && box_path_within(policy_path, d.config->box_dir))
      return box_fail("policy source %s is inside `box_dir` %s", policy_path, d.config->box_dir);
    d.policy = box_policy_load_file(d.config->policy, d.operator_home, &error);
    if (!d.policy)
      return box_fail("policy file %s will not load: %s", d.config->policy, error->message);
    const GPtrArray *warnings = box_policy_warnings(d.policy);
    for (guint i = 0; warnings && i < warnings->len; i++)
      fprintf(stderr, "box: warning: %s\n", (const char *)g_ptr_array_index(warnings, i));
  } else {
    d.policy = box_policy_new_empty();
  }
  d.box_shell = sibling_binary("box-shell");
  if (!d.box_shell)
    return box_fail("box-shell is not installed beside box");
  if (geteuid() != 0)
    return box_fail("box run needs root for now: it mounts the box's view with FUSE and builds "
                "namespaces (an unprivileged mode is planned)");
  int lock = prepare_box_dir(&d, &error);
  if (lock < 0)
    return box_fail("%s", error->message);
  if (!install_aliases(&d, &error))
    return box_fail("%s", error->message);
  /* issue 9: the policy's history, before the box starts; a box that
   * cannot keep it denies every request (the policy says why). */
  g_autofree char *history_dir = g_build_filename(d.config->box_dir, "private", NULL);
  if (!box_policy_open_history(d.policy, history_dir, &error)) {
    fprintf(stderr, "box: warning: %s; every request will be denied\n", error->message);
    g_clear_error(&error);
  }
  g_autofree char *log_path =
      g_build_filename(d.config->box_dir, "private", "telemetry", "records.jsonl", NULL);
  d.run_id = g_uuid_string_random();
  d.log = box_decision_log_open(log_path, d.box_id, d.run_id, &error);
  if (!d.log)
    return box_fail("telemetry setup failed: %s", error->message);
  d.socket_path = g_build_filename(d.config->box_dir, "run", "box.sock", NULL);
  d.roots = bound_roots(&d);
  GPtrArray *tables = g_ptr_array_new();
  for (guint i = 0; i < d.config->tools->len; i++)
    g_ptr_array_add(tables, table_of(g_ptr_array_index(d.config->tools, i)));
  g_ptr_array_add(tables, NULL);
  d.tool_tables = (BoxToolTable **)g_ptr_array_free(tables, FALSE);
  d.agent_table = table_of(&d.config->agent);
  if (!box_config_check(&d, &error))
    return box_fail("%s", error->message);
  d.live_pids = g_hash_table_new(g_direct_hash, g_direct_equal);

  GPtrArray *agent_argv = g_ptr_array_new();
  for (char **c = box_run_agent_override ? box_run_agent_override : d.config->agent.command; *c;
       c++)
    g_ptr_array_add(agent_argv, *c);
  for (char **a = rest; a && *a; a++)
    if (!(a == rest && strcmp(*a, "--") == 0))
      g_ptr_array_add(agent_argv, *a);
  g_ptr_array_add(agent_argv, NULL);
  int status = serve(&d, (char **)agent_argv->pdata);
  g_ptr_array_free(agent_argv, TRUE);
  box_decision_log_close(d.log);
  close(lock);
  return status;
}

/* The empty directories a run mounts on are named in private/ so that the
 * next run of this box removes them if boxd was killed: nobody else can be
 * using them while this box's lock is held. */
static char *dirs_record_path(Boxd *d)
{
  return g_build_filename(d->config->box_dir, "private", "mount-dirs", NULL);
}

static void remove_stale_dirs(Boxd *d)
{
  g_autofree char *path = dirs_record_path(d);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    g_autofree char *base = g_path_get_basename(*l);
    if (g_str_has_prefix(base, "boxfs-mnt-") || g_str_has_prefix(base, "boxfs-view-"))
      rmdir(*l);
  }
  unlink(path);
}

static void record_dirs(Boxd *d)
{
  if (!d->mountpoint || !d->staging_dir)
    return;
  g_autofree char *path = dirs_record_path(d);
  g_autofree char *text = g_strdup_printf("%s\n%s\n", d->mountpoint, d->staging_dir);
  g_file_set_contents_full(path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, NULL);
}

/* private/live: what `box mount` shows of a running box: box.json (its
 * roots, workspace and log) and one <N>.json per running command (written
 * by the vfs).  Cleared at start (a killed run's) and at teardown. */
static void live_clear(const char *dir, bool remove_dir)
{
  if (!dir)
    return;
  GDir *g = g_dir_open(dir, 0, NULL);
  const char *e;
  while (g && (e = g_dir_read_name(g)) != NULL) {
    g_autofree char *f = g_build_filename(dir, e, NULL);
    unlink(f);
  }
  if (g)
    g_dir_close(g);
  if (remove_dir)
    rmdir(dir);
}

static char *live_prepare(Boxd *d)
{
  char *dir = g_build_filename(d->config->box_dir, "private", "live", NULL);
  live_clear(dir, false);
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    g_free(dir);
    return NULL;
  }
  json_object *o = json_object_new_object();
  json_object_object_add(o, "pid", json_object_new_int(getpid()));
  json_object_object_add(o, "workspace", json_object_new_string(d->workspace));
  json_object_object_add(o, "operator_home", json_object_new_string(d->operator_home));
  json_object_object_add(o, "agent_home", json_object_new_string(d->agent_home));
  json_object *roots = json_object_new_array();
  for (int i = 0; d->roots[i]; i++)
    json_object_array_add(roots, json_object_new_string(d->roots[i]));
  json_object_object_add(o, "roots", roots);
  g_autofree char *log = g_build_filename(d->config->box_dir, "private", "telemetry",
                                          "records.jsonl", NULL);
  json_object_object_add(o, "decision_log", json_object_new_string(log));
  g_autofree char *path = g_build_filename(dir, "box.json", NULL);
  g_file_set_contents_full(path, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), -1,
                           G_FILE_SET_CONTENTS_CONSISTENT, 0600, NULL);
  json_object_put(o);
  return dir;
}

#define TEARDOWN_LIMIT_S 10

static int teardown_status;

static gpointer teardown_watchdog(gpointer data)
{
  (void)data;
  g_usleep((gulong)TEARDOWN_LIMIT_S * G_USEC_PER_SEC);
  fprintf(stderr, "box: warning: teardown took longer than %d s; ending the run now\n",
          TEARDOWN_LIMIT_S);
  _exit(teardown_status);
}

/* Everything from the mount to teardown; signals are handled here only. */
static int serve(Boxd *d, char **agent_argv)
{
  g_autoptr(GError) error = NULL;
  sigset_t set;
  box_signal_set(&set);
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  box_reaper_init();
  /* A mount namespace of our own: the mount vanishes with boxd whatever
   * happens, and nothing of ours propagates to the host. */
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
    return box_fail("containment setup failed during mount namespace: %s", g_strerror(errno));
  remove_stale_dirs(d);
  d->mountpoint = g_dir_make_tmp("boxfs-mnt-XXXXXX", &error);
  d->staging_dir = d->mountpoint ? g_dir_make_tmp("boxfs-view-XXXXXX", &error) : NULL;
  record_dirs(d);
  if (!d->staging_dir)
    return box_fail("cannot create the mount point: %s", error->message);
  for (int i = 0; d->roots[i]; i++)
    if (box_path_within(d->mountpoint, d->roots[i]) || box_path_within(d->staging_dir, d->roots[i]))
      return box_fail("the mount point %s lies inside the bound root %s; set TMPDIR elsewhere",
                  d->mountpoint, d->roots[i]);
  const char *floor_trees[] = { d->config->box_dir, NULL };
  const char *floor_files[] = { d->config->path, d->config->policy, NULL };
  g_autofree char *live_dir = live_prepare(d);
  BoxVfsConfig vc = {
    .mountpoint = d->mountpoint,
    .roots = (const char *const *)d->roots,
    .operator_home = d->operator_home,
    .floor_trees = floor_trees,
    .floor_files = floor_files,
    .decide = boxd_vfs_decide,
    .record = boxd_vfs_record,
    .outcome = boxd_vfs_outcome,
    .decide_data = d,
    /* box_policy_decide never waits; without history rules a verdict is a
     * function of the request alone */
    .decide_prompt = true,
    .cache_decisions = !box_policy_reads_history(d->policy),
    .note = boxd_vfs_note,
    .decide_quiet = boxd_vfs_decide_quiet,
    .beneath = boxd_vfs_beneath,
    .history_batch = boxd_vfs_history_batch,
    .ram_per_box = d->config->agent.ram_per_box,
    .ram_max_bytes = d->config->agent.ram_max_bytes,
    .ram_max_inodes = d->config->agent.ram_max_inodes,
    .live_dir = live_dir,
  };
  d->vfs = box_vfs_start(&vc, &error);
  if (!d->vfs) {
    rmdir(d->mountpoint);
    rmdir(d->staging_dir);
    return box_fail("cannot mount the box's view: %s", error->message);
  }
  int status = 1;
  pid_t agent = -1;
  if (!boxd_workers_start(d, &error) || !boxd_gateway_start(d, &error) ||
      !boxd_broker_start(d, &error)) {
    box_fail("%s", error->message);
    goto teardown;
  }
  /* Tools and the agent reach the network through the gateway only. */
  box_tools_set_gateway(d->gateway_url, d->gateway_ca_path, boxd_gateway_net_setup, d);
  /* Contained tools share the workers' route-less namespace and its relay. */
  box_tools_set_netns(d->worker_netns_fd);
  agent = box_agent_start(d, agent_argv, &error);
  if (agent < 0) {
    box_fail("%s", error->message);
    goto teardown;
  }
  bool stopping = false;
  gint64 kill_at = 0;
  for (;;) {
    struct timespec tick = { 0, 100 * 1000 * 1000 };
    siginfo_t info;
    int sig = sigtimedwait(&set, &info, &tick);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      /* Forward to the agent's group; if it lingers, it is killed. */
      kill(-agent, sig == SIGHUP ? SIGTERM : sig);
      if (!stopping) {
        stopping = true;
        kill_at = g_get_monotonic_time() + G_TIME_SPAN_SECOND;
      }
    }
    box_reaper_collect();
    int wstatus;
    if (box_reaper_poll(agent, &wstatus)) {
      status = box_status_code(wstatus);
      break;
    }
    if (stopping && g_get_monotonic_time() > kill_at)
      kill(-agent, SIGKILL);
  }
  stop_group(agent);
teardown:
  d->stopping = true;
  /* Teardown waits on children and threads; if one of them never answers,
   * the run still ends with the agent's status (PDEATHSIG ends what is
   * left, and the mount dies with boxd's mount namespace). */
  teardown_status = status;
  g_thread_unref(g_thread_new("box-watchdog", teardown_watchdog, NULL));
  boxd_broker_stop(d);
  boxd_kill_tracked(d);
  boxd_broker_drain(d);
  boxd_workers_stop(d);
  boxd_gateway_stop(d);
  boxd_egress_clear(d);
  box_reaper_collect();
  /* Prepared tool views hold binds of the mount: drop them before it goes. */
  box_tools_release_views();
  box_vfs_stop(d->vfs);
  rmdir(d->mountpoint);
  rmdir(d->staging_dir);
  g_autofree char *record = dirs_record_path(d);
  unlink(record);
  live_clear(live_dir, true);
  return status;
}
