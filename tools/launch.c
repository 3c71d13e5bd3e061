/* launch.c — start a program in its own sandbox over bind views of the mount.
 *
 * boxd is multithreaded, so the child may only make system calls: every
 * path, string and step of the view is computed before clone(), and the
 * child replays them.  The child is the init of a new PID namespace: when
 * the program exits, everything it started ends with it.
 */
#include "tools/tools.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef enum { STEP_MKDIR, STEP_FILE, STEP_SYMLINK, STEP_BIND, STEP_BIND_RO, STEP_TMPFS, STEP_PROC } StepKind;

typedef struct {
  StepKind kind;
  char *src; /* bind source or symlink target */
  char *dst; /* absolute path under the staging root */
} Step;

typedef struct {
  GArray *steps;       /* Step */
  GHashTable *made;    /* dst paths already created */
  const char *root;
} Plan;

static void plan_add(Plan *p, StepKind kind, const char *src, const char *dst)
{
  Step s = { kind, g_strdup(src), g_strdup(dst) };
  g_array_append_val(p->steps, s);
}

/* mkdir -p of rel (absolute view path) under the root, once per directory. */
static void plan_dirs(Plan *p, const char *view_path)
{
  g_auto(GStrv) parts = g_strsplit(view_path, "/", -1);
  GString *acc = g_string_new(p->root);
  for (char **c = parts; *c; c++) {
    if (!**c)
      continue;
    g_string_append_c(acc, '/');
    g_string_append(acc, *c);
    if (!g_hash_table_contains(p->made, acc->str)) {
      g_hash_table_add(p->made, g_strdup(acc->str));
      plan_add(p, STEP_MKDIR, NULL, acc->str);
    }
  }
  g_string_free(acc, TRUE);
}

static void plan_mountpoint(Plan *p, const char *view_path, bool is_dir)
{
  if (is_dir) {
    plan_dirs(p, view_path);
    return;
  }
  g_autofree char *parent = g_path_get_dirname(view_path);
  plan_dirs(p, parent);
  g_autofree char *dst = g_strconcat(p->root, view_path, NULL);
  if (!g_hash_table_contains(p->made, dst)) {
    g_hash_table_add(p->made, g_strdup(dst));
    plan_add(p, STEP_FILE, NULL, dst);
  }
}

/* The host's system directories, read-only: symlinks stay symlinks. */
static void plan_system(Plan *p)
{
  static const char *const system_dirs[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32",
                                             "/lib64", "/libx32", "/opt", NULL };
  for (int i = 0; system_dirs[i]; i++) {
    struct stat st;
    if (lstat(system_dirs[i], &st) != 0)
      continue;
    g_autofree char *dst = g_strconcat(p->root, system_dirs[i], NULL);
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = readlink(system_dirs[i], target, sizeof target - 1);
      if (n <= 0)
        continue;
      target[n] = '\0';
      g_hash_table_add(p->made, g_strdup(dst));
      plan_add(p, STEP_SYMLINK, target, dst);
    } else if (S_ISDIR(st.st_mode)) {
      plan_dirs(p, system_dirs[i]);
      plan_add(p, STEP_BIND_RO, system_dirs[i], dst);
    }
  }
  plan_dirs(p, "/dev");
  static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
                                         NULL };
  for (int i = 0; devices[i]; i++) {
    plan_mountpoint(p, devices[i], false);
    g_autofree char *dst = g_strconcat(p->root, devices[i], NULL);
    plan_add(p, STEP_BIND, devices[i], dst);
  }
  plan_dirs(p, "/tmp");
  g_autofree char *tmp = g_strconcat(p->root, "/tmp", NULL);
  plan_add(p, STEP_TMPFS, NULL, tmp);
  plan_dirs(p, "/proc");
  g_autofree char *proc = g_strconcat(p->root, "/proc", NULL);
  plan_add(p, STEP_PROC, NULL, proc);
}

static const char *root_of(const BoxToolLaunch *l, const char *path)
{
  for (int i = 0; l->roots && l->roots[i]; i++) {
    size_t n = strlen(l->roots[i]);
    if (strncmp(path, l->roots[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
      return l->roots[i];
  }
  return NULL;
}

typedef struct {
  const char *path;
  bool ro;
} Grant;

static gint grant_cmp(gconstpointer a, gconstpointer b)
{
  const Grant *x = a, *y = b;
  return (int)strlen(x->path) - (int)strlen(y->path);
}

/* Bind views of the mount for the table's lists, parents before children
 * so a nested grant lands on top of the wider one. */
static void plan_grants(Plan *p, const BoxToolLaunch *l)
{
  GArray *grants = g_array_new(FALSE, FALSE, sizeof(Grant));
  const BoxToolTable *t = l->table;
  char *const *lists[] = { t->read, t->read_file, t->write, t->write_file, t->exec };
  const bool ro[] = { true, true, false, false, true };
  for (int k = 0; k < 5; k++)
    for (int i = 0; lists[k] && lists[k][i]; i++) {
      Grant g = { lists[k][i], ro[k] };
      g_array_append_val(grants, g);
    }
  g_array_sort(grants, grant_cmp);
  for (guint i = 0; i < grants->len; i++) {
    Grant *g = &g_array_index(grants, Grant, i);
    struct stat st;
    if (stat(g->path, &st) != 0)
      continue;
    /* Paths under a bound root are seen through the mount, so the box's
     * one view of them holds; anything else is the host's own file. */
    g_autofree char *src = root_of(l, g->path)
                               ? g_strconcat(l->mountpoint, "/pass", g->path, NULL)
                               : g_strdup(g->path);
    plan_mountpoint(p, g->path, S_ISDIR(st.st_mode));
    g_autofree char *dst = g_strconcat(p->root, g->path, NULL);
    plan_add(p, g->ro ? STEP_BIND_RO : STEP_BIND, src, dst);
  }
  g_array_free(grants, TRUE);
}

static void step_clear(gpointer data)
{
  Step *s = data;
  g_free(s->src);
  g_free(s->dst);
}

static char **compose_env(const BoxToolLaunch *l, const char *cwd)
{
  GHashTable *env = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_hash_table_insert(env, g_strdup("HOME"), g_strdup(l->operator_home));
  if (l->table->env) {
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, l->table->env);
    while (g_hash_table_iter_next(&it, &k, &v))
      g_hash_table_insert(env, g_strdup(k), g_strdup(v));
  }
  const char *path = l->table->env ? g_hash_table_lookup(l->table->env, "PATH") : NULL;
  if (!path || !*path)
    path = l->operator_path && *l->operator_path ? l->operator_path : "/usr/bin:/bin";
  g_hash_table_insert(env, g_strdup("PATH"), g_strdup(path));
  g_hash_table_insert(env, g_strdup("PWD"), g_strdup(cwd));
  g_hash_table_insert(env, g_strdup("USER"), g_strdup("strands-box"));
  GPtrArray *out = g_ptr_array_new();
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, env);
  while (g_hash_table_iter_next(&it, &k, &v))
    g_ptr_array_add(out, g_strconcat(k, "=", v, NULL));
  g_ptr_array_add(out, NULL);
  g_hash_table_destroy(env);
  return (char **)g_ptr_array_free(out, FALSE);
}

static bool inside_view(const Plan *p, const char *cwd)
{
  g_autofree char *dst = g_strconcat(p->root, cwd, NULL);
  for (guint i = 0; i < p->steps->len; i++) {
    const Step *s = &g_array_index(p->steps, Step, i);
    if (s->kind != STEP_BIND && s->kind != STEP_BIND_RO)
      continue;
    size_t n = strlen(s->dst);
    if (strncmp(dst, s->dst, n) == 0 && (dst[n] == '\0' || dst[n] == '/'))
      return true;
  }
  return false;
}

/* The child's half: system calls only. */
static void child_fail(int err_fd, const char *what)
{
  const char *prefix = "strands-box: tool sandbox could not be built: ";
  const char *reason = strerror(errno);
  if (write(err_fd, prefix, strlen(prefix)) < 0 || write(err_fd, what, strlen(what)) < 0 ||
      write(err_fd, ": ", 2) < 0 || write(err_fd, reason, strlen(reason)) < 0 ||
      write(err_fd, "\n", 1) < 0) {
    /* nothing more can be reported */
  }
  _exit(127);
}

static void child_run(const Plan *p, const BoxToolLaunch *l, char **envp, const char *cwd,
                      int go_fd, int fd_out, int fd_err)
{
  char go;
  if (read(go_fd, &go, 1) != 1)
    _exit(127);
  close(go_fd);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    child_fail(fd_err, "make / private");
  if (mount("box-tool", p->root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    child_fail(fd_err, "tmpfs root");
  for (guint i = 0; i < p->steps->len; i++) {
    const Step *s = &g_array_index(p->steps, Step, i);
    switch (s->kind) {
    case STEP_MKDIR:
      if (mkdir(s->dst, 0755) != 0 && errno != EEXIST)
        child_fail(fd_err, s->dst);
      break;
    case STEP_FILE: {
      int fd = open(s->dst, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0)
        child_fail(fd_err, s->dst);
      close(fd);
      break;
    }
    case STEP_SYMLINK:
      if (symlink(s->src, s->dst) != 0)
        child_fail(fd_err, s->dst);
      break;
    case STEP_BIND:
    case STEP_BIND_RO:
      if (mount(s->src, s->dst, NULL, MS_BIND | MS_REC, NULL) != 0)
        child_fail(fd_err, s->src);
      if (s->kind == STEP_BIND_RO &&
          mount(NULL, s->dst, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID, NULL) != 0)
        child_fail(fd_err, s->dst);
      break;
    case STEP_TMPFS:
      if (mount("box-tmp", s->dst, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
        child_fail(fd_err, s->dst);
      break;
    case STEP_PROC:
      if (mount("proc", s->dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        child_fail(fd_err, s->dst);
      break;
    }
  }
  if (mount(NULL, p->root, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
    child_fail(fd_err, "read-only root");
  if (chdir(p->root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
      umount2(".", MNT_DETACH) != 0)
    child_fail(fd_err, "pivot_root");
  if (chdir(cwd) != 0 && chdir("/") != 0)
    child_fail(fd_err, "chdir");
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0)
    child_fail(fd_err, "/dev/null");
  /* Move the output descriptors above 2 first so dup2 cannot clobber them. */
  int out = fcntl(fd_out, F_DUPFD, 10), err = fcntl(fd_err, F_DUPFD, 10);
  if (out < 0 || err < 0 || dup2(null_fd, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
    _exit(127);
  close_range(3, ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++)
    signal(sig, SIG_DFL);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  execve(l->program_path, l->argv, envp);
  child_fail(2, l->program_path);
}

pid_t box_tools_launch(const BoxToolLaunch *l, int fd_out, int fd_err, BoxToolAttachFn attach,
                       void *attach_data, GError **error)
{
  Plan p = { g_array_new(FALSE, FALSE, sizeof(Step)),
             g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), l->staging_dir };
  g_array_set_clear_func(p.steps, step_clear);
  plan_system(&p);
  plan_grants(&p, l);
  const char *cwd = l->cwd && inside_view(&p, l->cwd) ? l->cwd
                    : l->table->workspace && inside_view(&p, l->table->workspace)
                        ? l->table->workspace
                        : "/";
  char **envp = compose_env(l, cwd);
  int go[2];
  pid_t pid = -1;
  if (pipe2(go, O_CLOEXEC) != 0) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "pipe: %s", g_strerror(errno));
    goto out;
  }
  pid = (pid_t)syscall(SYS_clone, CLONE_NEWNS | CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid == 0) {
    close(go[1]);
    child_run(&p, l, envp, cwd, go[0], fd_out, fd_err);
    _exit(127);
  }
  close(go[0]);
  if (pid < 0) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "clone: %s",
                g_strerror(errno));
    close(go[1]);
    goto out;
  }
  if (attach && !attach(attach_data, pid)) {
    kill(pid, SIGKILL);
    close(go[1]);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "the mount could not place the sandbox");
    /* boxd's reaper collects the killed child. */
    pid = -1;
    goto out;
  }
  if (write(go[1], "g", 1) != 1) {
    kill(pid, SIGKILL);
  }
  close(go[1]);
out:
  g_strfreev(envp);
  g_array_free(p.steps, TRUE);
  g_hash_table_destroy(p.made);
  return pid;
}
