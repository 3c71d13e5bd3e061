/* shell_worker.c — box-shell: the Shell worker, one command per process.
 *
 * boxd starts it as the init of fresh mount, PID and network namespaces.
 * It roots itself in its RAM root of the box's mount (with the shared roots
 * and the host's null devices bound in) under the zygote's seccomp filter,
 * drops every capability, sets no_new_privs, says it is ready, runs one
 * command, reports its status and ends — taking everything
 * it started with it.
 *
 * `box-shell -c TEXT` runs the interpreter alone, with no box around it:
 * programs run directly and nothing is decided (for tests and benchmarks).
 */
#include "box/ctl.h"
#include "box/shell_host.h"
#include "shell/shell.h"
#include "tools/fdpass.h"
#include "tools/filter.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <limits.h>
#include <locale.h>
#include <malloc.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- standalone host: no box, programs run directly ---- */

static bool local_decide_exec(void *data, const BoxShellCommand *cmd, char **message)
{
  (void)data, (void)cmd, (void)message;
  return true;
}

static BoxSpawnResult local_spawn(void *data, const BoxShellCommand *cmd, int fd_out, int fd_err)
{
  (void)data;
  BoxSpawnResult r = { BOX_SPAWN_RAN, 0, NULL };
  pid_t pid = fork();
  if (pid == 0) {
    int in = cmd->nfds > 0 && cmd->fds[0] >= 0 ? cmd->fds[0] : open("/dev/null", O_RDONLY);
    /* every descriptor the command names (5<<EOF, exec 7>f) at its own
     * number, as the box's spawn places them: each is first moved above
     * all the numbers, so placing one never overwrites another's source */
    int src[BOX_SPAWN_MAX_FDS + 3] = { in, fd_out, fd_err };
    int n = MAX(cmd->nfds, 3);
    for (int i = 3; i < n; i++) src[i] = cmd->fds[i];
    for (int i = 0; i < n; i++)
      if (src[i] >= 0 && (src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, BOX_SPAWN_MAX_FDS + 3)) < 0)
        _exit(126);
    for (int i = 0; i < n; i++) {
      if (src[i] >= 0 ? dup2(src[i], i) < 0 : i <= 2 && close(i) < 0 && errno != EBADF) _exit(126);
    }
    if (cmd->envp)
      execvpe(cmd->argv[0], cmd->argv, cmd->envp);
    else
      execvp(cmd->argv[0], cmd->argv);
    _exit(errno == ENOENT ? 127 : 126);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0) {
    r.kind = BOX_SPAWN_FAILED;
    r.status = 126;
    r.message = strdup(strerror(errno));
    return r;
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
    r.kind = BOX_SPAWN_NOT_FOUND;
    r.status = 127;
  } else {
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  return r;
}

/* ---- setup ---- */

static void die(const char *what)
{
  fprintf(stderr, "box-shell: %s: %s\n", what, strerror(errno));
  exit(125);
}

/* Binds src on rel, a path inside the tree of descriptor tree. */
static void bind_at(int tree, const char *src, const char *rel)
{
  char dst[PATH_MAX];
  g_snprintf(dst, sizeof dst, "/proc/self/fd/%d/%s", tree, rel);
  if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0) {
    fprintf(stderr, "box-shell: bind %s on %s: %s\n", src, rel, strerror(errno));
    exit(125);
  }
}

/* The bounding set only limits what an execve could gain, so the zygote
 * empties it once for all its workers (they keep the effective capabilities
 * they root themselves with, and drop those below): one system call per
 * capability fewer on every worker. */
static bool bounding_set_empty;

static void drop_bounding_set(void)
{
  for (int cap = 0; cap <= CAP_LAST_CAP; cap++) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  bounding_set_empty = true;
}

/* A worker the zygote forked runs under the zygote's filter already (see
 * tools/filter.h); one started on its own installs the worker's. */
static bool filtered;

static void install_filter(const void *(*compile)(GError **))
{
  g_autoptr(GError) error = NULL;
  const void *prog = compile(&error);
  if (!prog) {
    fprintf(stderr, "box-shell: %s\n", error ? error->message : "no seccomp filter");
    exit(125);
  }
  if (!box_seccomp_install(prog)) die("install the seccomp filter");
  filtered = true;
}

/* The worker is placed: from here on it runs what the agent wrote, so it
 * keeps no capability, cannot gain one, and calls only what its
 * allow-list names (no exec, namespace, ptrace…: seccomp.c), and the
 * placement calls only as a process without the capability they need. */
static void drop_privileges(void)
{
  if (!bounding_set_empty) drop_bounding_set();
  cap_t none = cap_init();
  if (!none || cap_set_proc(none) != 0) die("drop capabilities");
  cap_free(none);
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    die("clear the ambient capabilities");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  if (!filtered) install_filter(box_seccomp_worker);
}

/* What the zygote keeps to place its workers: a worker mounts, pivots and
 * joins its area's mount namespace (CAP_SYS_ADMIN, and CAP_SYS_CHROOT for
 * setns), and nothing else.  Workers are forked from here with no more. */
static void zygote_drop_privileges(void)
{
  const cap_value_t kept[] = { CAP_SYS_ADMIN, CAP_SYS_CHROOT };
  cap_t caps = cap_init();
  if (!caps || cap_set_flag(caps, CAP_PERMITTED, 2, kept, CAP_SET) != 0 ||
      cap_set_flag(caps, CAP_EFFECTIVE, 2, kept, CAP_SET) != 0 || cap_set_proc(caps) != 0)
    die("drop the zygote's capabilities");
  cap_free(caps);
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    die("clear the ambient capabilities");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
}

static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
                                       NULL };

/* The host's null devices, bound over the RAM root's dev/ entries, cost a
 * mount daemon LOOKUP each.  A small tmpfs of the worker's own laid over
 * dev/ holds their mount points instead: dev/ is looked up once and the
 * four names never reach the daemon.  It is read-only once they are bound
 * (only the devices themselves take writes) and ends with the worker.
 * Returns false, with nothing changed, if the kernel refuses the tmpfs. */
static bool devices_on_tmpfs(int tree)
{
  int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0) return false;
  int mnt = -1;
  if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) == 0 &&
      fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) == 0 &&
      fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "16", 0) == 0 &&
      fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
    mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  close(fs);
  if (mnt < 0) return false;
  for (int i = 0; devices[i]; i++) {
    int f = openat(mnt, devices[i] + 5, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f < 0) {
      close(mnt);
      return false;
    }
    close(f);
  }
  if (move_mount(mnt, "", tree, "dev", MOVE_MOUNT_F_EMPTY_PATH) != 0) {
    close(mnt);
    return false;
  }
  /* From here on the tmpfs covers dev/: the devices must land on it. */
  for (int i = 0; devices[i]; i++) bind_at(tree, devices[i], devices[i] + 1);
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
  if (mount_setattr(mnt, "", AT_EMPTY_PATH, &ro, sizeof ro) != 0) die("make dev/ read-only");
  close(mnt);
  return true;
}

/* The host's time zones, read-only at usr/share/zoneinfo (a directory of
 * the RAM root's fixed layout), as a tool's view has them: `TZ=Europe/Paris
 * date` and Python's zoneinfo read them.  Data every system publishes, so
 * not decided per read, like the null devices.  A host without them
 * (no tzdata) leaves the directory empty: UTC and "UTC+N" still work. */
static void bind_zoneinfo(int tree)
{
  int zones =
    open_tree(AT_FDCWD, "/usr/share/zoneinfo", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (zones < 0) return;
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                       MOUNT_ATTR_NOEXEC };
  /* never writable: a tree that cannot be made read-only is not bound */
  if (mount_setattr(zones, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof ro) == 0 &&
      move_mount(zones, "", tree, "usr/share/zoneinfo", MOVE_MOUNT_F_EMPTY_PATH) != 0)
    fprintf(stderr, "box-shell: bind the host's time zones: %s\n", strerror(errno));
  close(zones);
}

/* Setting up a worker is most of a command's cost, and most of that is
 * LOOKUP (and ACCESS) round trips to the mount daemon for the RAM root's
 * new entries.  So the RAM root's own entry is walked once: its tree is
 * cloned and attached at one descriptor, everything inside is reached
 * through that descriptor, and the pivot moves the working directory
 * (the host's /) into it without a chdir's permission check. */
static void enter_root(const char *root, char **binds, const char *workspace)
{
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("make / private");
  int at = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (at < 0) die("open the RAM root");
  /* Bound onto itself: pivot_root needs a mount. */
  int tree = open_tree(at, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0 ||
      move_mount(tree, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    die("bind the RAM root");
  close(at);
  for (char **b = binds; b && *b; b++) {
    char *eq = strrchr(*b, '=');
    if (!eq) continue;
    *eq = '\0';
    const char *dst = eq + 1;
    while (*dst == '/') dst++;
    bind_at(tree, *b, dst);
  }
  if (!devices_on_tmpfs(tree))
    for (int i = 0; devices[i]; i++) bind_at(tree, devices[i], devices[i] + 1);
  bind_zoneinfo(tree);
  char new_root[64];
  g_snprintf(new_root, sizeof new_root, "/proc/self/fd/%d", tree);
  if (chdir("/") != 0 || syscall(SYS_pivot_root, new_root, new_root) != 0 ||
      umount2(".", MNT_DETACH) != 0)
    die("pivot_root");
  close(tree);
  if (chdir(workspace) != 0) die(workspace);
}

/* ---- warming up ----
 *
 * A forked worker shares the zygote's pages until it writes them and maps
 * code only as it first runs it: its first command took ~60 µs of such
 * faults in the interpreter and ~80 µs more around its first decision.  So
 * before it says "ready" the worker runs `:` once on a host of its own,
 * which permits without asking boxd (it only builds the request a decision
 * would send) and records nothing: `:` touches no file and no descriptor,
 * and the interpreter keeps no state from one run to the next.  The
 * faults are then taken while the worker waits in the pool. */
static bool warm_decide(void *data, const BoxShellCommand *cmd, char **message)
{
  (void)data, (void)message;
  json_object *input = box_ctl_exec_input(cmd);
  (void)json_object_to_json_string_ext(input, JSON_C_TO_STRING_PLAIN);
  json_object_put(input);
  return true;
}

static void warm_status(void *data, const BoxShellCommand *cmd, int status)
{
  (void)data, (void)cmd, (void)status;
}

static void warm_up(const char *home, const char *workspace)
{
  BoxShellEnv env = { home, workspace, "/usr/bin:/bin", "strands-box", false };
  BoxShellHost host = { .decide_exec = warm_decide, .exec_status = warm_status };
  box_shell_run(":", &env, &host);
  json_object_put(json_tokener_parse("{\"op\":\"run\",\"source\":\":\",\"env\":{}}"));
}

/* What the Shell's curl needs to reach the egress gateway: set in the
 * zygote from the one fork request that carries it (inherited by every
 * worker forked after), or from "run" for a worker asked for before the
 * gateway started. */
static void set_env(json_object *msg)
{
  json_object *env_obj;
  if (json_object_object_get_ex(msg, "env", &env_obj) &&
      json_object_is_type(env_obj, json_type_object)) {
    json_object_object_foreach (env_obj, key, val) setenv(key, json_object_get_string(val), 1);
  }
}

/* Joins the mount namespace an earlier worker of the same RAM area built
 * (its root is that area, the roots and devices bound in it), and enters
 * the workspace by that worker's descriptor of it (cwd), else by path:
 * the descriptor spares the walk's LOOKUPs of expired entries. */
static bool join_root(int ns, int cwd, const char *workspace)
{
  bool ok = setns(ns, CLONE_NEWNS) == 0;
  close(ns);
  if (ok && (cwd < 0 || fchdir(cwd) != 0) && chdir(workspace) != 0) die(workspace);
  if (cwd >= 0) close(cwd);
  return ok;
}

static const char *json_str(json_object *obj, const char *key)
{
  json_object *v;
  return json_object_object_get_ex(obj, key, &v) ? json_object_get_string(v) : NULL;
}

/* Set in the zygote of Python's workers (--warm-python). */
static bool python_zygote;
/* The parent of a split Python worker (box_shell_python_split): it
 * starts the processes of the child's interpreter until the child ends.
 * The child reports its command's status and then waits to be ended, so
 * a child that ends first reported nothing (os._exit, a fatal signal):
 * its end is the command's status, as a python3 in a child of the Shell
 * gives it. */
static int supervise(int ctl, BoxShellNew *shell, pid_t child, int built[2])
{
  for (int i = 0; i < 2; i++)
    if (built[i] >= 0) close(built[i]);
  int ws = box_shell_python_serve(shell, child);
  if (ws != -1) {
    json_object *done = json_object_new_object();
    json_object_object_add(done, "op", json_object_new_string("exit"));
    int status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    json_object_object_add(done, "status", json_object_new_int(status));
    box_ctl_send(ctl, done, NULL, 0);
    json_object_put(done);
  }
  int late[BOX_CTL_MAX_FDS];
  int nlate = 0;
  while (box_ctl_recv_text(ctl, late, &nlate))
    for (int i = 0; i < nlate; i++) close(late[i]);
  return 0;
}

/* One command: root in the mount, report ready, run, report the status.
 * ns >= 0: the area's mount namespace, to join instead of rooting, and cwd
 * (or -1) the workspace in it. */
static int worker_main(int ctl, const char *root, char **binds, const char *workspace,
                       const char *home, int ns, int cwd)
{
  box_worker_host_start(ctl);
  /* A worker that roots itself hands boxd its namespace with "ready", and
   * its workspace there (built[1]) for the workers that join it. */
  int built[2] = { -1, -1 };
  if (ns < 0 || !join_root(ns, cwd, workspace)) {
    /* Forked into the zygote's namespace to join another: never root
     * there. */
    if (ns >= 0 && unshare(CLONE_NEWNS) != 0) die("unshare the mount namespace");
    built[0] = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    enter_root(root, binds, workspace);
    if (built[0] >= 0) built[1] = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  drop_privileges();
  warm_up(home, workspace);
  /* The egress routes' phantoms ("NAME=value" lines, from boxd through
   * the zygote's environment) are the Shell's variables too (§7). */
  const char *phantoms = getenv("BOX_PHANTOMS");
  if (phantoms && *phantoms) {
    g_auto(GStrv) extra = g_strsplit(phantoms, "\n", -1);
    box_shell_set_extra_env(extra);
  }
  const char *host_commands = getenv("BOX_HOST_COMMANDS");
  if (host_commands && *host_commands) {
    g_auto(GStrv) names = g_strsplit(host_commands, "\n", -1);
    box_shell_set_host_commands(names);
  }
  /* The interpreter's starting state (variables, tables, cwd) is built
   * now, while the worker waits in the pool, rather than after "run". */
  BoxShellEnv env = { home, workspace, "/usr/bin:/bin", "strands-box", false };
  BoxShellHost host = box_worker_host();
  BoxShellNew *shell = box_shell_new(&env, &host);
  box_worker_host_ready();
  if (python_zygote) {
    pid_t child = box_shell_python_split();
    if (child > 0) return supervise(ctl, shell, child, built);
    if (child == 0) box_worker_host_ready(); /* this process is the worker now */
  }
  json_object *ready = json_object_new_object();
  json_object_object_add(ready, "op", json_object_new_string("ready"));
  if (!box_ctl_send(ctl, ready, built, built[0] < 0 ? 0 : built[1] < 0 ? 1 : 2))
    die("report ready");
  json_object_put(ready);
  for (int i = 0; i < 2; i++)
    if (built[i] >= 0) close(built[i]);
  if (python_zygote) box_shell_python_own_pages(true);
  int fds[BOX_CTL_MAX_FDS];
  int nfds = 0;
  json_object *run = box_ctl_recv(ctl, fds, &nfds);
  if (python_zygote) box_shell_python_own_pages(false);
  json_object *source;
  if (!run || nfds != 3 || !json_object_object_get_ex(run, "source", &source)) return 125;
  for (int i = 0; i < 3; i++)
    if (dup2(fds[i], i) < 0) die("take the alias's descriptors");
  for (int i = 0; i < nfds; i++)
    if (fds[i] > 2) close(fds[i]);
  set_env(run); /* only when the fork request could not carry it */
  /* boxd's verdict on the first shell:exec follows "run" (worker_command.c):
   * waited for before anything of the command runs, so its decision is
   * logged before all the command does.  Not spun for: it follows the
   * decision's log writes, while the zygote forks the pool's next worker,
   * and a spin here would take a CPU from one of them. */
  json_object *decided = box_ctl_recv(ctl, NULL, NULL), *verdict;
  if (!decided || g_strcmp0(json_str(decided, "op"), "decided") != 0) return 125;
  if (json_object_object_get_ex(decided, "decided", &verdict))
    json_object_object_add(run, "decided", json_object_get(verdict));
  json_object_put(decided);
  box_worker_host_take_run(run);
  /* The wall-clock limit boxd carries from box.toml (0 = the default). */
  BoxShellLimits limits = { 0 };
  json_object *timeout_obj;
  if (json_object_object_get_ex(run, "timeout_ms", &timeout_obj)) {
    int64_t ms = json_object_get_int64(timeout_obj);
    if (ms > 0 && ms <= UINT_MAX) limits.timeout_ms = (unsigned)ms;
  }
  json_object *script;
  if (json_object_object_get_ex(run, "script", &script))
    limits.script = json_object_get_string(script);
  int status = box_shell_run_new(shell, json_object_get_string(source), &limits);
  /* Let go of the caller's descriptors before reporting, so its output
   * ends exactly when its status arrives.  Closed rather than pointed at
   * /dev/null: nothing is written after this, and the open would be one
   * more walk through the mount on every command's path. */
  fflush(NULL);
  for (int i = 0; i < 3; i++) close(i);
  json_object *done = json_object_new_object();
  json_object_object_add(done, "op", json_object_new_string("exit"));
  json_object_object_add(done, "status", json_object_new_int(status));
  json_object *exec_status = box_worker_host_take_status();
  if (exec_status) json_object_object_add(done, "exec_status", exec_status);
  box_ctl_send(ctl, done, NULL, 0);
  json_object_put(done);
  json_object_put(run);
  /* boxd ends the worker once its caller has the status and has gone
   * (worker_command.c, end_after_caller).  Exiting here instead tore
   * down its address space and PID namespace (some 200 us of CPU) on the
   * CPU the alias was being woken on, ahead of it.  The channel's end
   * (boxd gone) ends it too. */
  int late[BOX_CTL_MAX_FDS];
  int nlate = 0;
  while (box_ctl_recv_text(ctl, late, &nlate))
    for (int i = 0; i < nlate; i++) close(late[i]);
  return status;
}

/* ---- zygote ----
 *
 * Starting box-shell costs milliseconds of dynamic linking (libcurl, Lua,
 * OpenSSL…), so boxd starts it once as a zygote: an idle, single-threaded
 * process that forks each worker into a fresh PID namespace on request,
 * and into a fresh mount namespace unless boxd sends the one an earlier
 * worker built around the same RAM area (the worker joins it; no worker
 * can change a namespace: it holds no capability once it runs).  The
 * child waits for boxd's "go" (its namespace is placed in the mount by
 * then) before it touches the mount.  The zygote reaps its
 * workers and reports each status to boxd.
 */
static bool wait_for_go(int ctl)
{
  json_object *go = box_ctl_recv(ctl, NULL, NULL);
  json_object *op;
  bool ok =
    go && json_object_object_get_ex(go, "op", &op) && strcmp(json_object_get_string(op), "go") == 0;
  /* Its number outside its namespace, shown as $$ */
  json_object *pid;
  if (ok && json_object_object_get_ex(go, "pid", &pid))
    box_shell_set_shown_pid((pid_t)json_object_get_int(pid));
  json_object_put(go);
  return ok;
}

static char **json_strv(json_object *arr)
{
  size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
  char **v = g_new0(char *, n + 1);
  for (size_t i = 0; i < n; i++)
    v[i] = g_strdup(json_object_get_string(json_object_array_get_idx(arr, i)));
  return v;
}

/* The zygote's own messages are printed on its stack, not built on its
 * heap: see zygote_main. */
static void zygote_report_deaths(int ctl)
{
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    char msg[64];
    int n = snprintf(msg, sizeof msg, "{\"op\":\"died\",\"pid\":%d,\"status\":%d}", (int)pid, st);
    box_ctl_send_text(ctl, msg, (size_t)n, NULL, 0);
  }
}

/* A forked worker's start: the fork request's text (read by the zygote,
 * parsed here), boxd's "go", then its one command.  ns >= 0: the area's
 * mount namespace to join, cwd (or -1) the workspace in it. */
static int worker_start(int ctl, const char *text, int ns, int cwd)
{
  json_object *req = json_tokener_parse(text);
  const char *op = json_str(req, "op");
  if (!op || strcmp(op, "fork") != 0 || !json_str(req, "root") || !json_str(req, "workspace") ||
      !json_str(req, "home"))
    return 125;
  json_object *binds_obj = NULL;
  json_object_object_get_ex(req, "binds", &binds_obj);
  char **binds = json_strv(binds_obj);
  /* A process group of its own: `kill 0` names the sender's group,
   * whatever its PID namespace, and the zygote's is boxd's (and the
   * operator's job's).  Not a session: a new session is a new scheduler
   * autogroup, made and torn down with every command. */
  if (setpgid(0, 0) < 0) die("a process group of its own");
  if (!wait_for_go(ctl)) return 125;
  return worker_main(ctl, json_str(req, "root"), binds, json_str(req, "workspace"),
                     json_str(req, "home"), ns, cwd);
}

static int zygote_main(int ctl, bool warm_python)
{
  python_zygote = warm_python;
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  /* boxd's channel and the zygote's own descriptors, and so every worker's,
   * keep clear of the script's numbers 0-9 */
  ctl = box_fd_own(ctl);
  int sfd = box_fd_own(signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK));
  if (ctl < 0 || sfd < 0) die("keep the channel and signalfd above 9");
  /* Arrange for what commands load lazily (libcurl) to stay reachable by
   * workers rooted in the mount; mapping it here instead would cost every
   * fork ~155 more mappings to copy. */
  if (!box_shell_prepare()) box_shell_preload();
  /* The host's local time zone (/etc/localtime), read here once for every
   * worker: a worker's RAM root has no /etc/localtime of its own, and
   * tools see the host's. */
  tzset();
  /* boxd's word, through the zygote's environment (worker_pool.c) */
  if (warm_python) box_shell_warm_python(g_strcmp0(getenv("BOX_USR_BARE"), "1") == 0);
  drop_bounding_set();
  zygote_drop_privileges();
  install_filter(box_seccomp_zygote);
  /* Compiling the filter (libseccomp) and the start-up above leave some
   * 250 KiB of freed chunks scattered through the heap.  Each page of them
   * would be copied into every worker's page tables at fork and faulted
   * on, copy on write, as its malloc reuses them (~13 faults a command):
   * handed back to the kernel, they cost neither. */
  malloc_trim(0);
  for (;;) {
    struct pollfd p[2] = { { .fd = ctl, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (p[1].revents) {
      struct signalfd_siginfo info;
      while (read(sfd, &info, sizeof info) == sizeof info) {}
      zygote_report_deaths(ctl);
    }
    if (!p[0].revents) continue;
    /* Each fork leaves every page of this process shared with the new
     * worker, so each page written afterwards is copied on the next write:
     * a fork request is only received and answered here (the recv buffer
     * and the stack), and parsed by the worker it starts. */
    int fds[BOX_CTL_MAX_FDS];
    int nfds = 0;
    const char *text = box_ctl_recv_text(ctl, fds, &nfds);
    if (!text) return 0; /* boxd is gone */
    if (nfds == 0) {
      /* boxd's setting for every worker forked from now on (its gateway's
       * environment): set here once, inherited by each. */
      json_object *msg = json_tokener_parse(text);
      set_env(msg);
      json_object_put(msg);
      continue;
    }
    if (nfds > 3) {
      for (int i = 0; i < nfds; i++) close(fds[i]);
      continue;
    }
    /* With the area's namespace (fds[1]) the worker joins it, and enters
     * its workspace by fds[2] when sent; without, it builds one of its
     * own. */
    int ns = nfds >= 2 ? fds[1] : -1;
    int cwd = nfds == 3 ? fds[2] : -1;
    pid_t pid = (pid_t)syscall(SYS_clone, (ns >= 0 ? 0 : CLONE_NEWNS) | CLONE_NEWPID | SIGCHLD,
                               NULL, NULL, NULL, NULL);
    if (pid == 0) {
      close(ctl);
      close(sfd);
      sigprocmask(SIG_UNBLOCK, &chld, NULL);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      _exit(worker_start(box_fd_own(fds[0]), text, box_fd_own(ns), box_fd_own(cwd)));
    }
    close(fds[0]);
    if (ns >= 0) close(ns);
    if (cwd >= 0) close(cwd);
    char reply[48];
    int n =
      snprintf(reply, sizeof reply, "{\"op\":\"forked\",\"pid\":%d}", pid > 0 ? (int)pid : -1);
    box_ctl_send_text(ctl, reply, (size_t)n, NULL, 0);
  }
}

int main(int argc, char **argv)
{
  /* Text is UTF-8 to the Shell (${#s} counts characters): fnmatch and
   * regcomp must read it so too, or `?` matches one byte of μ.  Only the
   * character type: collation and messages stay C's. */
  setlocale(LC_CTYPE, "C.UTF-8");
  g_autofree char *root = NULL, *workspace = NULL, *home = NULL, *command = NULL;
  gboolean check_only = FALSE, zygote = FALSE, warm_python = FALSE;
  g_auto(GStrv) binds = NULL;
  int ctl = -1;
  GOptionEntry entries[] = {
    /* FILENAME: the text's bytes as given; STRING would convert them from
     * the locale's charset, and with none set (C) refuse any non-ASCII */
    { "command", 'c', 0, G_OPTION_ARG_FILENAME, &command,
      "Run TEXT with no box around it (tests, benchmarks)", "TEXT" },
    { "no-exec", 'n', 0, G_OPTION_ARG_NONE, &check_only,
      "With -c: only parse TEXT (a syntax error exits 2)", NULL },
    { "ctl-fd", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &ctl, NULL, NULL },
    { "zygote", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &zygote, NULL, NULL },
    { "warm-python", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &warm_python, NULL, NULL },
    { "root", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &root, NULL, NULL },
    { "workspace", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &workspace, NULL, NULL },
    { "home", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &home, NULL, NULL },
    { "bind", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME_ARRAY, &binds, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- the boxfs Shell worker");
  g_option_context_set_summary(ctx, "boxd starts one box-shell per command; run alone with -c.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "box-shell: %s\n", error->message);
    return 2;
  }
  if (command && check_only) return box_shell_check(command);
  if (check_only && argc > 1) {
    /* `box-shell -n FILE`: parse a script alone (benchmarks) */
    g_autofree char *text = NULL;
    if (!g_file_get_contents(argv[1], &text, NULL, &error)) {
      fprintf(stderr, "box-shell: %s\n", error->message);
      return 2;
    }
    return box_shell_check(text);
  }
  if (command) {
    g_autofree char *cwd = g_get_current_dir();
    /* the caller's environment, as `bash -c` and the box's Shell take theirs */
    box_shell_set_extra_env(environ);
    const char *path = getenv("PATH");
    BoxShellEnv env = { g_get_home_dir(), cwd, path && *path ? path : "/usr/bin:/bin",
                        "strands-box", true };
    BoxShellHost host = { .decide_exec = local_decide_exec, .spawn = local_spawn };
    return box_shell_run(command, &env, &host);
  }
  if (zygote && ctl >= 0) return zygote_main(ctl, warm_python);
  if (ctl < 0 || !root || !workspace || !home) {
    fprintf(stderr, "box-shell: started outside a box; use -c TEXT to run the interpreter alone\n");
    return 2;
  }
  box_shell_preload(); /* before enter_root hides the host's libraries */
  if (getpgrp() != getpid() && setpgid(0, 0) < 0) die("a process group of its own");
  return worker_main(box_fd_own(ctl), root, binds, workspace, home, -1, -1);
}
