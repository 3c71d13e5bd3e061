/* test_vfs.c — the FUSE mount, for real: mounts under a temporary directory,
 * runs file operations from a process in its own PID namespace (placed as
 * the worker of a command) and checks the decisions, denials, floors and the
 * RAM roots.  Needs root and /dev/fuse; skipped otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "vfs/vfs.h"

typedef struct {
  char *base;
  char *home;
  char *mnt;
  char *pass_home; /* <mnt>/pass<home> */
  char *floor_tree;
  char *floor_file;
  BoxVfs *vfs;
  GMutex mu;
  GPtrArray *records; /* "action path operation verdict" */
  GPtrArray *commands_seen;
  /* decisions on paths containing "pending" wait for release (10 s at most) */
  GCond cond;
  bool release;
  int pending_started;
  int decides; /* calls of test_decide */
  int notes;   /* calls of test_note (verdicts reused from the cache) */
  int quiet;   /* calls of test_decide_quiet (a probe's verdict) */
  bool track_batches; /* history batches recorded as "batch begin" / "batch end" */
} Fx;

/* ---- policy stand-in: deny every path containing "secret", and the
 * reads of a path containing "wonly" (its writes are permitted) ---- */

static BoxDecision *test_decide(void *data, int command, const char *action, json_object *input) {
  Fx *fx = data;
  (void)command;
  const char *path = json_object_get_string(json_object_object_get(input, "path"));
  g_mutex_lock(&fx->mu);
  fx->decides++;
  g_mutex_unlock(&fx->mu);
  if (strstr(path, "pending")) {
    gint64 until = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;
    g_mutex_lock(&fx->mu);
    fx->pending_started++;
    g_cond_broadcast(&fx->cond);
    while (!fx->release)
      if (!g_cond_wait_until(&fx->cond, &fx->mu, until)) break;
    g_mutex_unlock(&fx->mu);
  }
  if (strcmp(action, "fs:write") == 0 && strstr(path, "raced-")) {
    /* the name made by someone else while its CREATE is decided: the
     * file, or a second name of the floor file */
    char *base = g_path_get_basename(path);
    char *real = g_build_filename(fx->home, base, NULL);
    if (strstr(base, "floor")) {
      (void)link(fx->floor_file, real);
    } else {
      int fd = open(real, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
      if (fd >= 0) {
        g_assert_cmpint(write(fd, "before", 6), ==, 6);
        close(fd);
      }
    }
    g_free(real);
    g_free(base);
  }
  BoxDecision *d = g_new0(BoxDecision, 1);
  d->action = g_strdup(action);
  d->resource = g_strdup(path);
  d->determining_ids = g_ptr_array_new_with_free_func(g_free);
  if (strstr(path, "secret") || (strstr(path, "wonly") && strcmp(action, "fs:read") == 0)) {
    d->verdict = BOX_VERDICT_DENY;
    d->cause = BOX_CAUSE_NO_MATCH;
    d->rule = g_strdup("<default-deny>");
    d->message = g_strdup_printf("policy denied this operation on '%s' [default-deny]: "
                                 "No permit rule matched this request.", path);
    d->reason = g_strdup("no permit matched");
  } else {
    d->verdict = BOX_VERDICT_PERMIT;
    d->cause = BOX_CAUSE_PERMITTED;
    d->rule = g_strdup("policy_0");
  }
  return d;
}

static void test_record(void *data, int command, const char *action, json_object *input,
                        const BoxDecision *decision) {
  Fx *fx = data;
  (void)command;
  const char *path = json_object_get_string(json_object_object_get(input, "path"));
  const char *op = json_object_get_string(json_object_object_get(input, "operation"));
  char *line = g_strdup_printf("%s %s %s %s", action, path, op,
                               decision->verdict == BOX_VERDICT_PERMIT ? "permit"
                               : decision->cause == BOX_CAUSE_ENFORCEMENT ? decision->rule
                                                                          : "deny");
  g_mutex_lock(&fx->mu);
  g_ptr_array_add(fx->records, line);
  g_mutex_unlock(&fx->mu);
}

static void test_note(void *data, int command, const char *action, json_object *input,
                      const BoxDecision *decision) {
  Fx *fx = data;
  (void)command, (void)action, (void)input, (void)decision;
  g_mutex_lock(&fx->mu);
  fx->notes++;
  g_mutex_unlock(&fx->mu);
}

static BoxDecision *test_decide_quiet(void *data, int command, const char *action, json_object *input) {
  Fx *fx = data;
  g_mutex_lock(&fx->mu);
  fx->quiet++;
  g_mutex_unlock(&fx->mu);
  return test_decide(data, command, action, input);
}

/* Below a path holding "secret" every path holds it too: nothing there is
 * permitted; elsewhere something may be. */
static bool test_beneath(void *data, const char *dir) {
  (void)data;
  return strstr(dir, "secret") == NULL;
}

static void test_outcome(void *data, int command, const char *action, json_object *input,
                         const char *result) {
  Fx *fx = data;
  (void)command;
  const char *path = json_object_get_string(json_object_object_get(input, "path"));
  const char *op = json_object_get_string(json_object_object_get(input, "operation"));
  char *line = g_strdup_printf("outcome %s %s %s %s", action, path, op, result ? result : "error");
  g_mutex_lock(&fx->mu);
  g_ptr_array_add(fx->records, line);
  g_mutex_unlock(&fx->mu);
}

static void test_history_batch(void *data, bool begin) {
  Fx *fx = data;
  g_mutex_lock(&fx->mu);
  if (fx->track_batches) g_ptr_array_add(fx->records, g_strdup(begin ? "batch begin" : "batch end"));
  g_mutex_unlock(&fx->mu);
}

static GPtrArray *take_records(Fx *fx) {
  g_mutex_lock(&fx->mu);
  GPtrArray *r = fx->records;
  fx->records = g_ptr_array_new_with_free_func(g_free);
  g_mutex_unlock(&fx->mu);
  return r;
}

static void dump_records(GPtrArray *r) {
  for (guint i = 0; i < r->len; i++) g_test_message("record %u: %s", i, (char *)r->pdata[i]);
}

/* The expected lines appear in this order (other records may be between). */
static void assert_in_order(GPtrArray *r, const char *const *expected) {
  guint at = 0;
  for (guint k = 0; expected[k]; k++) {
    bool found = false;
    for (; at < r->len; at++)
      if (strcmp(r->pdata[at], expected[k]) == 0) {
        found = true;
        at++;
        break;
      }
    if (!found) {
      dump_records(r);
      g_error("record not found (in order): %s", expected[k]);
    }
  }
}

static guint count_records(GPtrArray *r, const char *line) {
  guint n = 0;
  for (guint i = 0; i < r->len; i++)
    if (strcmp(r->pdata[i], line) == 0) n++;
  return n;
}

/* ---- fixture ---- */

static void write_file(const char *path, const char *text) {
  GError *err = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, &err));
  g_assert_no_error(err);
}

/* dir (made with its parents) holding name with text */
static void write_file_in(const char *dir, const char *name, const char *text) {
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  char *f = g_build_filename(dir, name, NULL);
  write_file(f, text);
  g_free(f);
}

static bool is_mounted(const char *mnt) {
  gchar *info = NULL;
  if (!g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL)) return false;
  gchar *needle = g_strdup_printf(" %s ", mnt);
  bool yes = strstr(info, needle) != NULL;
  g_free(needle);
  g_free(info);
  return yes;
}

/* An assertion aborts the process before teardown: detach the mount then. */
static char active_mnt[4096];

static void on_abort(int sig) {
  if (active_mnt[0]) umount2(active_mnt, MNT_DETACH);
  signal(sig, SIG_DFL);
  raise(sig);
}

#define FX_CACHED GINT_TO_POINTER(1)
#define FX_CACHED_NO_PT GINT_TO_POINTER(2) /* as FX_CACHED, without FUSE passthrough */
#define FX_CACHED_BENEATH GINT_TO_POINTER(3) /* as FX_CACHED, told what may lie below a directory */

static void fx_setup(Fx *fx, gconstpointer data) {
  (void)data;
  GError *err = NULL;
  char *tmp = g_dir_make_tmp("boxvfs-XXXXXX", &err);
  g_assert_no_error(err);
  char *real = realpath(tmp, NULL);
  g_assert_nonnull(real);
  fx->base = g_strdup(real);
  free(real);
  g_free(tmp);
  fx->home = g_build_filename(fx->base, "home", NULL);
  fx->mnt = g_build_filename(fx->base, "mnt", NULL);
  g_assert_cmpint(g_mkdir(fx->home, 0755), ==, 0);
  g_assert_cmpint(g_mkdir(fx->mnt, 0755), ==, 0);
  char *p = g_build_filename(fx->home, "hello.txt", NULL);
  write_file(p, "hello world\n");
  g_free(p);
  p = g_build_filename(fx->home, "secret.txt", NULL);
  write_file(p, "top secret\n");
  g_free(p);
  fx->floor_file = g_build_filename(fx->home, "box.toml", NULL);
  write_file(fx->floor_file, "[agent]\n");
  /* the same file by another name: the floor goes by identity too */
  p = g_build_filename(fx->home, "other-name.toml", NULL);
  g_assert_cmpint(link(fx->floor_file, p), ==, 0);
  g_free(p);
  fx->floor_tree = g_build_filename(fx->home, "boxdir", NULL);
  g_assert_cmpint(g_mkdir(fx->floor_tree, 0700), ==, 0);
  p = g_build_filename(fx->floor_tree, "state", NULL);
  write_file(p, "trusted\n");
  g_free(p);

  g_mutex_init(&fx->mu);
  g_cond_init(&fx->cond);
  fx->records = g_ptr_array_new_with_free_func(g_free);
  const char *roots[] = {fx->home, NULL};
  const char *trees[] = {fx->floor_tree, NULL};
  const char *files[] = {fx->floor_file, NULL};
  BoxVfsConfig cfg = {
      .mountpoint = fx->mnt,
      .roots = roots,
      .operator_home = fx->home,
      .floor_trees = trees,
      .floor_files = files,
      .decide = test_decide,
      .record = test_record,
      .decide_data = fx,
      .outcome = test_outcome,
      .history_batch = test_history_batch,
  };
  if (data == FX_CACHED || data == FX_CACHED_NO_PT || data == FX_CACHED_BENEATH) {
    /* as boxd runs it: decided on the loop thread, verdicts reused */
    cfg.decide_prompt = true;
    cfg.cache_decisions = true;
    cfg.note = test_note;
    cfg.decide_quiet = test_decide_quiet;
    if (data == FX_CACHED_BENEATH) cfg.beneath = test_beneath;
  }
  /* the kernel's page cache serves a mapping only without passthrough
   * (Debian 12's kernel has none) */
  if (data == FX_CACHED_NO_PT) g_setenv("BOXFS_NO_PASSTHROUGH", "1", TRUE);
  fx->vfs = box_vfs_start(&cfg, &err);
  g_unsetenv("BOXFS_NO_PASSTHROUGH");
  g_assert_no_error(err);
  g_assert_nonnull(fx->vfs);
  fx->pass_home = box_vfs_pass_path(fx->vfs, fx->home);
  g_strlcpy(active_mnt, fx->mnt, sizeof active_mnt);
}

static void release_pending(Fx *fx) {
  g_mutex_lock(&fx->mu);
  fx->release = true;
  g_cond_broadcast(&fx->cond);
  g_mutex_unlock(&fx->mu);
}

static void fx_teardown(Fx *fx, gconstpointer data) {
  (void)data;
  release_pending(fx);
  box_vfs_stop(fx->vfs);
  active_mnt[0] = '\0';
  if (is_mounted(fx->mnt)) {
    g_test_message("still mounted after box_vfs_stop; using fusermount3 -u -z");
    char *argv[] = {"fusermount3", "-u", "-z", fx->mnt, NULL};
    g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  }
  g_assert_false(is_mounted(fx->mnt));
  char *argv[] = {"rm", "-rf", "--one-file-system", fx->base, NULL};
  g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  g_ptr_array_unref(fx->records);
  g_mutex_clear(&fx->mu);
  g_cond_clear(&fx->cond);
  g_free(fx->pass_home);
  g_free(fx->floor_file);
  g_free(fx->floor_tree);
  g_free(fx->base);
  g_free(fx->home);
  g_free(fx->mnt);
}

/* ---- running code as a command's worker ---- */

typedef struct {
  Fx *fx;
  int cmd;
  char *ram;  /* <mnt>/ram/c<N> */
  FILE *out;  /* key=value lines to the parent */
} Ctx;

typedef void (*WorkerFn)(Ctx *ctx);

static void put(Ctx *c, const char *key, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void put(Ctx *c, const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fprintf(c->out, "%s=", key);
  for (const char *t = text; *t; t++) /* one line per key: newlines as \n */
    if (*t == '\n') fputs("\\n", c->out);
    else fputc(*t, c->out);
  fputc('\n', c->out);
  fflush(c->out);
  g_free(text);
}

static int err_of(int rc) { return rc < 0 ? errno : 0; }

/* Reads a whole file ("" and errno on failure). */
static char *slurp(const char *path, int *e) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  *e = 0;
  if (fd < 0) {
    *e = errno;
    return g_strdup("");
  }
  GString *s = g_string_new(NULL);
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) g_string_append_len(s, buf, n);
  if (n < 0) *e = errno;
  close(fd);
  return g_string_free(s, FALSE);
}

static char *denial_text(Ctx *c) {
  char *p = g_strconcat(c->ram, "/.box/mydenial", NULL);
  int e;
  char *t = slurp(p, &e);
  g_free(p);
  if (e) {
    g_free(t);
    return g_strdup_printf("<errno %d>", e);
  }
  return t;
}

static gint cmp_names(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *listdir(const char *path) {
  DIR *d = opendir(path);
  if (!d) return g_strdup_printf("<errno %d>", errno);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
      g_ptr_array_add(names, g_strdup_printf("%s:%d", de->d_name, de->d_type));
  closedir(d);
  g_ptr_array_sort(names, cmp_names);
  g_ptr_array_add(names, NULL);
  char *s = g_strjoinv(",", (char **)names->pdata);
  g_ptr_array_unref(names);
  return s;
}

/* Forks a middle process that forks, in a new PID namespace, a child that
 * keeps only the descriptors in keep (nkeep of them), waits for a byte on
 * go_in (sent once it is attached), runs body(fx, cmd, arg) and exits 0;
 * attaches the child to cmd (as a tool if asked) and returns the middle's
 * pid, whose status is the child's. */
typedef void (*PlacedFn)(Fx *fx, int cmd, void *arg);
static pid_t fork_placed(Fx *fx, int cmd, bool is_tool, const int *keep, int nkeep, int go_in,
                         PlacedFn body, void *arg) {
  int pidp[2];
  g_assert_cmpint(pipe2(pidp, O_CLOEXEC), ==, 0);
  pid_t mid = fork();
  g_assert_cmpint(mid, >=, 0);
  if (mid == 0) {
    /* Drop the daemon's descriptors (/dev/fuse, the O_PATH roots): a worker
     * holding /dev/fuse would keep a dead daemon's mount hanging. */
    for (int fd = 3; fd < 4096; fd++) {
      bool kept = fd == pidp[1] || fd == go_in;
      for (int k = 0; k < nkeep && !kept; k++) kept = fd == keep[k];
      if (!kept) close(fd);
    }
    /* middle: a new PID namespace for its child */
    if (unshare(CLONE_NEWPID) != 0) _exit(90);
    pid_t w = fork();
    if (w < 0) _exit(91);
    if (w == 0) {
      char b;
      if (read(go_in, &b, 1) != 1) _exit(92); /* attached */
      body(fx, cmd, arg);
      _exit(0);
    }
    if (write(pidp[1], &w, sizeof w) != sizeof w) _exit(93);
    int st;
    if (waitpid(w, &st, 0) != w) _exit(94);
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 95);
  }
  close(pidp[1]);
  pid_t w;
  g_assert_cmpint(read(pidp[0], &w, sizeof w), ==, sizeof w);
  close(pidp[0]);
  GError *err = NULL;
  g_assert_true(box_vfs_command_attach(fx->vfs, cmd, w, is_tool, &err));
  g_assert_no_error(err);
  return mid;
}

typedef struct {
  WorkerFn fn;
  int out;
} WorkerArg;

static void worker_body(Fx *fx, int cmd, void *arg) {
  WorkerArg *a = arg;
  Ctx c = {fx, cmd, box_vfs_ram_root(fx->vfs, cmd), fdopen(a->out, "w")};
  a->fn(&c);
  fclose(c.out);
}

/* Forks a process in a new PID namespace, attaches it to cmd (as the worker,
 * running if asked), lets it run fn and returns its key=value lines. */
static GHashTable *run_worker(Fx *fx, int cmd, bool running, WorkerFn fn) {
  int go[2], res[2];
  g_assert_cmpint(pipe2(go, O_CLOEXEC), ==, 0);
  g_assert_cmpint(pipe2(res, O_CLOEXEC), ==, 0);
  WorkerArg a = {fn, res[1]};
  pid_t mid = fork_placed(fx, cmd, false, &res[1], 1, go[0], worker_body, &a);
  close(res[1]);
  close(go[0]);
  box_vfs_command_set_running(fx->vfs, cmd, running);
  g_assert_cmpint(write(go[1], "g", 1), ==, 1);
  close(go[1]);
  GString *all = g_string_new(NULL);
  char buf[4096];
  ssize_t n;
  while ((n = read(res[0], buf, sizeof buf)) > 0) g_string_append_len(all, buf, n);
  close(res[0]);
  int st;
  g_assert_cmpint(waitpid(mid, &st, 0), ==, mid);
  g_assert_true(WIFEXITED(st));
  g_assert_cmpint(WEXITSTATUS(st), ==, 0);
  GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  gchar **lines = g_strsplit(all->str, "\n", -1);
  for (guint i = 0; lines[i]; i++) {
    char *eq = strchr(lines[i], '=');
    if (!eq) continue;
    g_test_message("worker: %s", lines[i]);
    g_hash_table_insert(h, g_strndup(lines[i], (gsize)(eq - lines[i])), g_strdup(eq + 1));
  }
  g_strfreev(lines);
  g_string_free(all, TRUE);
  return h;
}

static const char *val(GHashTable *h, const char *key) {
  const char *v = g_hash_table_lookup(h, key);
  if (!v) g_error("worker reported no %s", key);
  return v;
}

/* ---- tests ---- */

static void test_unplaced(Fx *fx, gconstpointer data) {
  (void)data;
  struct stat st;
  g_assert_cmpint(stat(fx->mnt, &st), ==, 0); /* root GETATTR answered */
  g_assert_true(S_ISDIR(st.st_mode));
  struct statvfs sv;
  g_assert_cmpint(statvfs(fx->mnt, &sv), ==, 0);
  char *p = g_strconcat(fx->pass_home, "/hello.txt", NULL);
  errno = 0;
  g_assert_cmpint(open(p, O_RDONLY), ==, -1);
  g_assert_cmpint(errno, ==, EACCES);
  errno = 0;
  g_assert_cmpint(stat(p, &st), ==, -1);
  g_assert_cmpint(errno, ==, EACCES);
  g_free(p);
  p = g_strconcat(fx->mnt, "/ram", NULL);
  g_assert_cmpint(opendir(p) == NULL, ==, 1);
  g_assert_cmpint(errno, ==, EACCES);
  g_free(p);
  GPtrArray *r = take_records(fx);
  g_assert_cmpuint(r->len, ==, 0);
  g_ptr_array_unref(r);
}

static void worker_pass_ops(Ctx *c) {
  const char *P = c->fx->pass_home;
  char *p, *q;
  struct stat st;
  int e;

  p = g_strconcat(P, "/hello.txt", NULL);
  put(c, "stat", "%d", err_of(stat(p, &st)));
  put(c, "stat_size", "%lld", (long long)st.st_size);
  char *t = slurp(p, &e);
  put(c, "read", "%d:%s", e, t);
  g_free(t);
  put(c, "chmod", "%d", err_of(chmod(p, 0600)));
  put(c, "access", "%d", err_of(access(p, R_OK)));
  g_free(p);

  p = g_strconcat(P, "/new.txt", NULL);
  int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  put(c, "create", "%d", fd < 0 ? errno : 0);
  if (fd >= 0) {
    put(c, "write", "%zd", write(fd, "abc", 3));
    put(c, "fsync", "%d", err_of(fsync(fd)));
    close(fd);
  }
  fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
  put(c, "append_open", "%d", fd < 0 ? errno : 0);
  if (fd >= 0) {
    put(c, "append", "%zd", write(fd, "def", 3));
    close(fd);
  }
  put(c, "truncate", "%d", err_of(truncate(p, 5)));
  q = g_strconcat(P, "/dir", NULL);
  put(c, "mkdir", "%d", err_of(mkdir(q, 0755)));
  g_free(q);
  q = g_strconcat(P, "/dir/moved.txt", NULL);
  put(c, "rename", "%d", err_of(rename(p, q)));
  t = slurp(q, &e);
  put(c, "read_moved", "%d:%s", e, t);
  g_free(t);
  g_free(p);
  p = g_strconcat(P, "/dir", NULL);
  t = listdir(p);
  put(c, "list_dir", "%s", t);
  g_free(t);
  g_free(p);
  p = g_strconcat(P, "/dir/link", NULL);
  put(c, "symlink", "%d", err_of(symlink("moved.txt", p)));
  char buf[256];
  ssize_t n = readlink(p, buf, sizeof buf - 1);
  put(c, "readlink", "%s", n < 0 ? "<err>" : (buf[n] = '\0', buf));
  t = slurp(p, &e); /* through the link */
  put(c, "read_link_target", "%d:%s", e, t);
  g_free(t);
  put(c, "unlink_link", "%d", err_of(unlink(p)));
  g_free(p);
  p = g_strconcat(P, "/dir/hard", NULL);
  put(c, "link", "%d", err_of(link(q, p)));
  put(c, "unlink_hard", "%d", err_of(unlink(p)));
  put(c, "chmod_after_link", "%d", err_of(chmod(q, 0644))); /* reported at its remaining name */
  g_free(p);
  /* rename over an existing file */
  p = g_strconcat(P, "/dir/other.txt", NULL);
  fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
  put(c, "rename_over", "%d", err_of(rename(q, p)));
  put(c, "unlink_other", "%d", err_of(unlink(p)));
  g_free(p);
  g_free(q);
  q = g_strconcat(P, "/dir", NULL);
  put(c, "rmdir", "%d", err_of(rmdir(q)));
  g_free(q);

  /* denials */
  p = g_strconcat(P, "/secret-new.txt", NULL);
  fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  put(c, "deny_create", "%d", fd < 0 ? errno : 0);
  t = denial_text(c);
  put(c, "deny_create_text", "%s", t);
  g_free(t);
  g_free(p);
  p = g_strconcat(P, "/secret.txt", NULL);
  t = slurp(p, &e);
  put(c, "deny_read", "%d", e);
  g_free(t);
  t = denial_text(c);
  put(c, "deny_read_text", "%s", t);
  g_free(t);
  {
    /* disclosure: a denied path refuses alike whether or not it exists */
    struct stat dst;
    char *absent = g_strconcat(P, "/secret-absent.txt", NULL);
    char *absent2 = g_strconcat(P, "/secret-dir/deeper", NULL);
    put(c, "deny_stat_exists", "%d", stat(p, &dst) < 0 ? errno : 0);
    /* a statx that reads the kernel's copy (no GETATTR): what the lookup
     * left there must not be the attributes a decision refused */
    struct statx sx;
    int xrc = statx(AT_FDCWD, p, AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx);
    put(c, "deny_statx_cached", "%d", xrc < 0 ? errno : 0);
    if (xrc == 0) put(c, "deny_statx_shown", "mode %o size %llu", sx.stx_mode, (unsigned long long)sx.stx_size);
    put(c, "deny_stat_absent", "%d", stat(absent, &dst) < 0 ? errno : 0);
    int afd = open(absent, O_RDONLY | O_CLOEXEC);
    put(c, "deny_open_absent", "%d", afd < 0 ? errno : 0);
    if (afd >= 0) close(afd);
    put(c, "deny_stat_absent2", "%d", stat(absent2, &dst) < 0 ? errno : 0);
    char *plain = g_strconcat(P, "/plain-absent.txt", NULL);
    put(c, "stat_absent", "%d", stat(plain, &dst) < 0 ? errno : 0);
    g_free(plain);
    g_free(absent);
    g_free(absent2);
  }
  g_free(p);

  /* floors */
  p = g_strconcat(P, "/box.toml", NULL);
  t = slurp(p, &e);
  put(c, "floor_file", "%d", e);
  g_free(t);
  t = denial_text(c);
  put(c, "floor_file_text", "%s", t);
  g_free(t);
  g_free(p);
  p = g_strconcat(P, "/other-name.toml", NULL);
  t = slurp(p, &e);
  put(c, "floor_link", "%d", e);
  g_free(t);
  put(c, "floor_link_stat", "%d", err_of(stat(p, &st)));
  t = denial_text(c);
  put(c, "floor_link_text", "%s", t);
  g_free(t);
  put(c, "floor_link_unlink", "%d", unlink(p) < 0 ? errno : 0);
  /* renamed away, or replaced by another file: refused by identity too */
  char *fq = g_strconcat(P, "/renamed.toml", NULL);
  put(c, "floor_link_rename", "%d", rename(p, fq) < 0 ? errno : 0);
  g_free(fq);
  fq = g_strconcat(P, "/over.txt", NULL);
  int ofd = open(fq, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (ofd >= 0) close(ofd);
  put(c, "floor_link_rename_over", "%d", rename(fq, p) < 0 ? errno : 0);
  unlink(fq);
  g_free(fq);
  g_free(p);
  p = g_strconcat(P, "/boxdir/state", NULL);
  put(c, "floor_tree", "%d", err_of(stat(p, &st)));
  t = denial_text(c);
  put(c, "floor_tree_text", "%s", t);
  g_free(t);
  g_free(p);
}

static void test_pass_decisions(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  g_assert_cmpint(cmd, >=, 0);
  GHashTable *h = run_worker(fx, cmd, true, worker_pass_ops);
  GPtrArray *r = take_records(fx);
  dump_records(r);

  g_assert_cmpstr(val(h, "stat"), ==, "0");
  g_assert_cmpstr(val(h, "stat_size"), ==, "12");
  g_assert_cmpstr(val(h, "read"), ==, "0:hello world\\n");
  g_assert_cmpstr(val(h, "chmod"), ==, "0");
  g_assert_cmpstr(val(h, "access"), ==, "0");
  g_assert_cmpstr(val(h, "create"), ==, "0");
  g_assert_cmpstr(val(h, "write"), ==, "3");
  g_assert_cmpstr(val(h, "fsync"), ==, "0");
  g_assert_cmpstr(val(h, "append"), ==, "3");
  g_assert_cmpstr(val(h, "truncate"), ==, "0");
  g_assert_cmpstr(val(h, "mkdir"), ==, "0");
  g_assert_cmpstr(val(h, "rename"), ==, "0");
  g_assert_cmpstr(val(h, "read_moved"), ==, "0:abcde");
  g_assert_cmpstr(val(h, "list_dir"), ==, "moved.txt:8");
  g_assert_cmpstr(val(h, "symlink"), ==, "0");
  g_assert_cmpstr(val(h, "readlink"), ==, "moved.txt");
  g_assert_cmpstr(val(h, "read_link_target"), ==, "0:abcde");
  g_assert_cmpstr(val(h, "unlink_link"), ==, "0");
  g_assert_cmpstr(val(h, "link"), ==, "0");
  g_assert_cmpstr(val(h, "unlink_hard"), ==, "0");
  g_assert_cmpstr(val(h, "chmod_after_link"), ==, "0");
  g_assert_cmpstr(val(h, "rename_over"), ==, "0");
  g_assert_cmpstr(val(h, "unlink_other"), ==, "0");
  g_assert_cmpstr(val(h, "rmdir"), ==, "0");

  struct stat st;
  char *hp = g_build_filename(fx->home, "hello.txt", NULL);
  g_assert_cmpint(stat(hp, &st), ==, 0);
  g_assert_cmpint(st.st_mode & 07777, ==, 0600);
  g_free(hp);
  hp = g_build_filename(fx->home, "dir", NULL);
  g_assert_false(g_file_test(hp, G_FILE_TEST_EXISTS));
  g_free(hp);

  /* denied create: EACCES, nothing on disk, the exact message readable */
  g_assert_cmpstr(val(h, "deny_create"), ==, "13");
  hp = g_build_filename(fx->home, "secret-new.txt", NULL);
  g_assert_false(g_file_test(hp, G_FILE_TEST_EXISTS));
  g_free(hp);
  g_assert_cmpstr(val(h, "deny_create_text"), ==,
                  "policy denied this operation on '~/secret-new.txt' [default-deny]: "
                  "No permit rule matched this request.");
  g_assert_cmpstr(val(h, "deny_read"), ==, "13");
  g_assert_cmpstr(val(h, "deny_stat_exists"), ==, "13");
  /* refused where the lookup may ask quietly (a policy that reads no
   * history); elsewhere found, with its type only */
  if (data == FX_CACHED) {
    g_assert_cmpstr(val(h, "deny_statx_cached"), ==, "13");
  } else {
    g_assert_cmpstr(val(h, "deny_statx_cached"), ==, "0");
    g_assert_cmpstr(val(h, "deny_statx_shown"), ==, "mode 100000 size 0");
  }
  g_assert_cmpstr(val(h, "deny_stat_absent"), ==, "13");
  g_assert_cmpstr(val(h, "deny_open_absent"), ==, "13");
  g_assert_cmpstr(val(h, "deny_stat_absent2"), ==, "13");
  g_assert_cmpstr(val(h, "stat_absent"), ==, "2");
  g_assert_cmpstr(val(h, "deny_read_text"), ==,
                  "policy denied this operation on '~/secret.txt' [default-deny]: "
                  "No permit rule matched this request.");
  g_assert_cmpstr(val(h, "floor_file"), ==, "13");
  g_assert_cmpstr(val(h, "floor_file_text"), ==,
                  "~/box.toml: resolves to an authority source that this run loaded, which no "
                  "policy may open or change");
  g_assert_cmpstr(val(h, "floor_link"), ==, "13");
  g_assert_cmpstr(val(h, "floor_link_stat"), ==, "13");
  g_assert_cmpstr(val(h, "floor_link_unlink"), ==, "13");
  g_assert_cmpstr(val(h, "floor_link_rename"), ==, "13");
  g_assert_cmpstr(val(h, "floor_link_rename_over"), ==, "13");
  g_assert_cmpstr(val(h, "floor_link_text"), ==,
                  "~/other-name.toml: resolves to an authority source that this run loaded, which no "
                  "policy may open or change");
  g_assert_cmpstr(val(h, "floor_tree"), ==, "13");
  g_assert_cmpstr(val(h, "floor_tree_text"), ==,
                  "~/boxdir/state: resolves into trusted Box state, which no policy may open");

  const char *expected[] = {
      "fs:read ~/hello.txt read_metadata permit",
      "fs:read ~/hello.txt read_content permit",
      "fs:write ~/hello.txt set_permissions permit",
      "fs:read ~/hello.txt read_metadata permit", /* access(2) */
      "fs:write ~/new.txt write_content permit",
      "fs:write ~/new.txt write_content permit", /* append open */
      "fs:write ~/new.txt write_content permit", /* truncate */
      "fs:write ~/dir create_dir permit",
      "fs:move ~/new.txt rename permit",
      "fs:read ~/new.txt read_content permit",
      "fs:move ~/dir/moved.txt rename permit",
      "fs:read ~/dir/moved.txt read_content permit",
      "fs:read ~/dir enumerate permit",
      "fs:write ~/dir/moved.txt symlink permit",
      "fs:read ~/dir/moved.txt read_content permit",
      "fs:write ~/dir/link symlink permit",
      "fs:read ~/dir/link read_link permit",
      "fs:delete ~/dir/link remove_file permit",
      "fs:read ~/dir/moved.txt read_content permit", /* link: source */
      "fs:write ~/dir/hard write_content permit",
      "fs:delete ~/dir/hard remove_file permit",
      "fs:write ~/dir/moved.txt set_permissions permit",
      "fs:write ~/dir/other.txt write_content permit",
      "fs:move ~/dir/moved.txt rename permit",
      "fs:read ~/dir/moved.txt read_content permit",
      "fs:delete ~/dir/other.txt remove_file permit",
      "fs:move ~/dir/other.txt rename permit",
      "fs:delete ~/dir/other.txt remove_file permit",
      "fs:delete ~/dir remove_dir permit",
      /* an absent name that may be neither read nor written: the lookup
       * is refused like an existing one, as a metadata read */
      "fs:read ~/secret-new.txt read_metadata deny",
      /* with the verdicts quiet and cached, the lookup of a name that may
       * be neither read nor written is refused before its open, as a
       * missing one's is */
      data == FX_CACHED ? "fs:read ~/secret.txt read_metadata deny" : "fs:read ~/secret.txt read_content deny",
      "fs:read ~/secret.txt read_metadata deny",
      "fs:read ~/secret-absent.txt read_metadata deny",
      "fs:read ~/box.toml read_content enforcement:reach-floor",
      "fs:read ~/boxdir/state read_metadata enforcement:reach-floor",
      NULL};
  assert_in_order(r, expected);
  /* the denied create made one decision, and nothing was created */
  g_assert_cmpuint(count_records(r, "fs:read ~/secret-new.txt read_metadata deny"), ==, 1);
  g_assert_cmpuint(count_records(r, "fs:write ~/secret-new.txt write_content deny"), ==, 0);
  /* an absent name that may be read is ENOENT and records nothing */
  for (guint i = 0; i < r->len; i++) g_assert_null(strstr(r->pdata[i], "plain-absent"));
  /* LOOKUPs walking a path are not decisions: nothing about the chain */
  for (guint i = 0; i < r->len; i++) g_assert_null(strstr(r->pdata[i], fx->base));
  g_ptr_array_unref(r);
  g_hash_table_unref(h);
  box_vfs_command_end(fx->vfs, cmd);
}

static void worker_setup_ops(Ctx *c) {
  char *p = g_strconcat(c->fx->pass_home, "/secret.txt", NULL);
  int e;
  char *t = slurp(p, &e);
  put(c, "read_secret", "%d:%s", e, t);
  g_free(t);
  g_free(p);
}

static void test_setup_state(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, false, worker_setup_ops);
  g_assert_cmpstr(val(h, "read_secret"), ==, "0:top secret\\n");
  GPtrArray *r = take_records(fx);
  dump_records(r);
  g_assert_cmpuint(r->len, ==, 0);
  g_ptr_array_unref(r);
  g_hash_table_unref(h);
  box_vfs_command_end(fx->vfs, cmd);
}

static void worker_ram_ops(Ctx *c) {
  char *p, *q, *t;
  int e;
  struct stat st;
  t = listdir(c->ram);
  put(c, "root_list", "%s", t);
  g_free(t);
  p = g_strconcat(c->ram, "/tmp", NULL);
  put(c, "tmp_stat", "%d", err_of(stat(p, &st)));
  put(c, "tmp_mode", "%o", (unsigned)(st.st_mode & 07777));
  g_free(p);
  p = g_strconcat(c->ram, "/dev/null", NULL);
  e = err_of(stat(p, &st));
  put(c, "devnull", "%d:%d:%lld", e, S_ISREG(st.st_mode), (long long)st.st_size);
  g_free(p);
  p = g_strconcat(c->ram, c->fx->home, NULL);
  e = err_of(stat(p, &st));
  put(c, "home_chain", "%d:%d", e, S_ISDIR(st.st_mode));
  g_free(p);

  p = g_strconcat(c->ram, "/tmp/f.txt", NULL);
  int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  put(c, "create", "%d", fd < 0 ? errno : 0);
  if (fd >= 0) {
    put(c, "write", "%zd", write(fd, "ram data", 8));
    put(c, "pwrite", "%zd", pwrite(fd, "!", 1, 20));
    close(fd);
  }
  e = err_of(stat(p, &st));
  put(c, "size", "%d:%lld", e, (long long)st.st_size);
  put(c, "truncate", "%d", err_of(truncate(p, 8)));
  t = slurp(p, &e);
  put(c, "read", "%d:%s", e, t);
  g_free(t);
  q = g_strconcat(c->ram, "/tmp/d", NULL);
  put(c, "mkdir", "%d", err_of(mkdir(q, 0700)));
  g_free(q);
  q = g_strconcat(c->ram, "/tmp/d/g.txt", NULL);
  put(c, "rename", "%d", err_of(rename(p, q)));
  put(c, "old_gone", "%d", err_of(stat(p, &st)));
  t = slurp(q, &e);
  put(c, "read_moved", "%d:%s", e, t);
  g_free(t);
  g_free(p);
  p = g_strconcat(c->ram, "/tmp/d/l", NULL);
  put(c, "symlink", "%d", err_of(symlink("g.txt", p)));
  char buf[64];
  ssize_t n = readlink(p, buf, sizeof buf - 1);
  put(c, "readlink", "%s", n < 0 ? "<err>" : (buf[n] = '\0', buf));
  t = slurp(p, &e);
  put(c, "read_via_link", "%d:%s", e, t);
  g_free(t);
  g_free(p);
  p = g_strconcat(c->ram, "/tmp/d", NULL);
  t = listdir(p);
  put(c, "list", "%s", t);
  g_free(t);
  put(c, "rmdir_full", "%d", err_of(rmdir(p)));
  g_free(p);
  p = g_strconcat(c->ram, "/tmp/d/h.txt", NULL);
  put(c, "link", "%d", err_of(link(q, p)));
  e = err_of(stat(q, &st));
  put(c, "nlink", "%d:%d", e, (int)st.st_nlink);
  put(c, "unlink", "%d", err_of(unlink(p)));
  g_free(p);
  p = g_strconcat(c->ram, "/tmp/secret", NULL);
  put(c, "deny_mkdir", "%d", err_of(mkdir(p, 0755)));
  t = denial_text(c);
  put(c, "deny_mkdir_text", "%s", t);
  g_free(t);
  put(c, "deny_mkdir_absent", "%d", err_of(lstat(p, &st)));
  g_free(p);
  p = g_strconcat(c->ram, "/.box/mydenial", NULL);
  put(c, "mydenial_write", "%d", err_of(open(p, O_WRONLY)));
  g_free(p);
  /* the slot's layout outlives the command: it cannot be removed, renamed
   * or linked, and a mode changed on it is restored for the next one */
  p = g_strconcat(c->ram, "/dev", NULL);
  q = g_strconcat(c->ram, "/tmp/dev2", NULL);
  put(c, "rename_layout", "%d", err_of(rename(p, q)));
  g_free(q);
  q = g_strconcat(c->ram, "/dev/null", NULL);
  put(c, "unlink_layout", "%d", err_of(unlink(q)));
  char *r = g_strconcat(c->ram, "/tmp/null2", NULL);
  put(c, "link_layout", "%d", err_of(link(q, r)));
  g_free(r);
  g_free(q);
  put(c, "chmod_layout", "%d", err_of(chmod(p, 0700)));
  g_free(p);
  /* keep g.txt and d for the end-of-command check */
}

static void worker_ram_after(Ctx *c) {
  struct stat st;
  char *old = g_strconcat(c->ram, "/tmp/d/g.txt", NULL);
  put(c, "old_cmd_file", "%d", err_of(stat(old, &st)));
  g_free(old);
  old = g_strconcat(c->ram, "/dev", NULL);
  int e = err_of(stat(old, &st));
  put(c, "layout_mode", "%d:%o", e, (unsigned)(st.st_mode & 07777));
  g_free(old);
  char *p = g_strconcat(c->ram, "/tmp", NULL);
  char *t = listdir(p);
  put(c, "fresh_tmp", "%s", t);
  g_free(t);
  g_free(p);
}

static void test_ram(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  guint base = box_vfs_debug_ram_nodes(fx->vfs); /* the slot's layout */
  char *ram1 = box_vfs_ram_root(fx->vfs, cmd);
  GHashTable *h = run_worker(fx, cmd, true, worker_ram_ops);
  GPtrArray *r = take_records(fx);
  dump_records(r);
  /* c<N>'s root: tmp, dev, home and the first component of the root chain; no .box */
  char *first = g_strndup(fx->home + 1, strcspn(fx->home + 1, "/"));
  gchar **parts = g_strsplit(val(h, "root_list"), ",", -1);
  bool chain_shared = strcmp(first, "tmp") == 0 || strcmp(first, "home") == 0;
  g_assert_cmpuint(g_strv_length(parts), ==, chain_shared ? 3 : 4);
  g_assert_true(g_strv_contains((const char *const *)parts, "tmp:4"));
  g_assert_true(g_strv_contains((const char *const *)parts, "dev:4"));
  g_assert_true(g_strv_contains((const char *const *)parts, "home:4"));
  g_strfreev(parts);
  g_free(first);
  g_assert_cmpstr(val(h, "tmp_stat"), ==, "0");
  g_assert_cmpstr(val(h, "tmp_mode"), ==, "1777");
  g_assert_cmpstr(val(h, "devnull"), ==, "0:1:0");
  g_assert_cmpstr(val(h, "home_chain"), ==, "0:1");
  g_assert_cmpstr(val(h, "create"), ==, "0");
  g_assert_cmpstr(val(h, "write"), ==, "8");
  g_assert_cmpstr(val(h, "pwrite"), ==, "1");
  g_assert_cmpstr(val(h, "size"), ==, "0:21");
  g_assert_cmpstr(val(h, "truncate"), ==, "0");
  g_assert_cmpstr(val(h, "read"), ==, "0:ram data");
  g_assert_cmpstr(val(h, "mkdir"), ==, "0");
  g_assert_cmpstr(val(h, "rename"), ==, "0");
  g_assert_cmpstr(val(h, "old_gone"), ==, "2");
  g_assert_cmpstr(val(h, "read_moved"), ==, "0:ram data");
  g_assert_cmpstr(val(h, "symlink"), ==, "0");
  g_assert_cmpstr(val(h, "readlink"), ==, "g.txt");
  g_assert_cmpstr(val(h, "read_via_link"), ==, "0:ram data");
  g_assert_cmpstr(val(h, "list"), ==, "g.txt:8,l:10");
  g_assert_cmpstr(val(h, "rmdir_full"), ==, "39"); /* ENOTEMPTY */
  g_assert_cmpstr(val(h, "link"), ==, "0");
  g_assert_cmpstr(val(h, "nlink"), ==, "0:2");
  g_assert_cmpstr(val(h, "unlink"), ==, "0");
  g_assert_cmpstr(val(h, "deny_mkdir"), ==, "13");
  g_assert_cmpstr(val(h, "deny_mkdir_text"), ==,
                  "policy denied this operation on '/tmp/secret' [default-deny]: "
                  "No permit rule matched this request.");
  /* a denied absent path refuses like an existing one (disclosure) */
  g_assert_cmpstr(val(h, "deny_mkdir_absent"), ==, "13");
  g_assert_cmpstr(val(h, "mydenial_write"), ==, "13");
  g_assert_cmpstr(val(h, "rename_layout"), ==, "16"); /* EBUSY */
  g_assert_cmpstr(val(h, "unlink_layout"), ==, "16");
  g_assert_cmpstr(val(h, "link_layout"), ==, "1"); /* EPERM */
  g_assert_cmpstr(val(h, "chmod_layout"), ==, "0");
  const char *expected[] = {
      "fs:read / enumerate permit",
      "fs:write /tmp/f.txt write_content permit",
      "fs:read /tmp/f.txt read_metadata permit",
      "fs:write /tmp/f.txt write_content permit",
      "fs:read /tmp/f.txt read_content permit",
      "fs:write /tmp/d create_dir permit",
      "fs:move /tmp/f.txt rename permit",
      "fs:read /tmp/f.txt read_content permit",
      "fs:move /tmp/d/g.txt rename permit",
      "fs:write /tmp/d/g.txt symlink permit",
      "fs:read /tmp/d/g.txt read_content permit",
      "fs:write /tmp/d/l symlink permit",
      "fs:read /tmp/d/l read_link permit",
      "fs:read /tmp/d enumerate permit",
      "fs:delete /tmp/d remove_dir permit",
      "fs:write /tmp/d/h.txt write_content permit",
      "fs:delete /tmp/d/h.txt remove_file permit",
      "fs:read /tmp/secret read_metadata deny", /* the lookup of the absent name */
      NULL};
  assert_in_order(r, expected);
  g_ptr_array_unref(r);
  g_hash_table_unref(h);

  g_assert_cmpuint(box_vfs_debug_ram_nodes(fx->vfs), >, base);
  box_vfs_command_end(fx->vfs, cmd);
  /* the kernel forgets what the command made; only the layout stays */
  for (int i = 0; i < 200 && box_vfs_debug_ram_nodes(fx->vfs) > base; i++) g_usleep(10000);
  g_assert_cmpuint(box_vfs_debug_ram_nodes(fx->vfs), ==, base);

  /* the next command is lent the same slot, reset: no old file, the
   * layout's modes as built */
  int cmd2 = box_vfs_command_new(fx->vfs);
  g_assert_cmpint(cmd2, ==, cmd + 1);
  char *ram2 = box_vfs_ram_root(fx->vfs, cmd2);
  g_assert_cmpstr(ram1, ==, ram2);
  g_free(ram1);
  g_free(ram2);
  g_assert_cmpuint(box_vfs_debug_ram_nodes(fx->vfs), ==, base);
  h = run_worker(fx, cmd2, true, worker_ram_after);
  g_assert_cmpstr(val(h, "old_cmd_file"), ==, "2"); /* ENOENT: gone with its command */
  g_assert_cmpstr(val(h, "layout_mode"), ==, "0:755");
  /* only the root chain's directory, if the home lies under /tmp */
  char *expect_tmp = g_str_has_prefix(fx->home, "/tmp/")
                         ? g_strdup_printf("%.*s:4", (int)strcspn(fx->home + 5, "/"), fx->home + 5)
                         : g_strdup("");
  g_assert_cmpstr(val(h, "fresh_tmp"), ==, expect_tmp);
  g_free(expect_tmp);
  g_hash_table_unref(h);
  box_vfs_command_end(fx->vfs, cmd2);
  g_ptr_array_unref(take_records(fx));
}

static void worker_git(Ctx *c) {
  char *cmd = g_strdup_printf(
      "set -e; cd '%s'; git init -q repo; cd repo; echo hi > a.txt; mkdir -p sub; "
      "echo there > sub/b.txt; chmod +x sub/b.txt; git add -A; "
      "git -c user.name=t -c user.email=t@example.com commit -qm first; "
      "echo more >> a.txt; git -c user.name=t -c user.email=t@example.com commit -qam second; "
      "git fsck --no-progress 2>&1; git log --oneline | wc -l",
      c->fx->pass_home);
  char *argv[] = {"/bin/sh", "-c", cmd, NULL};
  char *out = NULL, *err = NULL;
  int status = -1;
  GError *e = NULL;
  g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &e);
  put(c, "git_status", "%d", e ? -1 : status);
  g_strdelimit(out, "\n", ' ');
  g_strdelimit(err, "\n", ' ');
  put(c, "git_out", "%s", out ? g_strstrip(out) : "");
  put(c, "git_err", "%s", err ? g_strstrip(err) : "");
  g_free(out);
  g_free(err);
  g_free(cmd);
  g_clear_error(&e);
}

static void test_git(Fx *fx, gconstpointer data) {
  (void)data;
  if (!g_file_test("/usr/bin/git", G_FILE_TEST_IS_EXECUTABLE)) {
    g_test_skip("git is not installed");
    return;
  }
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_git);
  g_assert_cmpstr(val(h, "git_status"), ==, "0");
  g_assert_cmpstr(val(h, "git_out"), ==, "2");
  g_hash_table_unref(h);
  box_vfs_command_end(fx->vfs, cmd);
  /* the commits are real: read them from outside the mount */
  char *repo = g_build_filename(fx->home, "repo", NULL);
  char *argv[] = {"git", "-C", repo, "log", "--format=%s", NULL};
  char *out = NULL;
  int status = -1;
  g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                             NULL, NULL, &out, NULL, &status, NULL));
  g_assert_cmpint(status, ==, 0);
  g_assert_cmpstr(out, ==, "second\nfirst\n");
  g_free(out);
  g_free(repo);
  GPtrArray *r = take_records(fx);
  g_test_message("git made %u decisions", r->len);
  g_assert_cmpuint(count_records(r, "fs:write ~/repo/a.txt write_content permit"), >=, 1);
  g_assert_cmpuint(count_records(r, "fs:write ~/repo/sub/b.txt set_permissions permit"), ==, 1);
  g_ptr_array_unref(r);
}

typedef struct {
  Ctx *c;
  int id;
  int bad;
} Stress;

static void *stress_thread(void *arg) {
  Stress *s = arg;
  char p[4096], q[4096], want[4096];
  for (int i = 0; i < 150; i++) {
    const char *base = (i % 2) ? s->c->fx->pass_home : s->c->ram;
    snprintf(p, sizeof p, "%s%s/t%d-%d", base, (i % 2) ? "" : "/tmp", s->id, i);
    int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, "x", 1) != 1) s->bad++;
    if (fd >= 0) close(fd);
    struct stat st;
    if (stat(p, &st) != 0 || st.st_size != 1) s->bad++;
    if (unlink(p) != 0) s->bad++;
    snprintf(q, sizeof q, "%s%s/secret-%d-%d", base, (i % 2) ? "" : "/tmp", s->id, i);
    errno = 0;
    if (open(q, O_CREAT | O_WRONLY | O_CLOEXEC, 0644) >= 0 || errno != EACCES) s->bad++;
    char *t = denial_text(s->c);
    snprintf(want, sizeof want, "'%s/secret-%d-%d'", (i % 2) ? "~" : "/tmp", s->id, i);
    if (!strstr(t, want)) s->bad++;
    g_free(t);
  }
  return NULL;
}

static void worker_stress(Ctx *c) {
  pthread_t th[4];
  Stress st[4];
  for (int i = 0; i < 4; i++) {
    st[i] = (Stress){c, i, 0};
    pthread_create(&th[i], NULL, stress_thread, &st[i]);
  }
  int bad = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    bad += st[i].bad;
  }
  put(c, "bad", "%d", bad);
}

/* Four threads of one worker at once, both trees; each thread reads its own denial. */
/* ---- race: a directory swapped with a symlink to the outside ---- */

#define RACE_SWAPS 10000

typedef struct {
  Fx *fx;
  int swaps;
  int failed;
} Swapper;

static void *swap_thread(void *arg) {
  Swapper *s = arg;
  char *a = g_build_filename(s->fx->home, "a", NULL);
  char *l = g_build_filename(s->fx->home, "a.lnk", NULL);
  /* Swap only once the worker reads: a late worker would see no race at all. */
  char *reading = g_build_filename(s->fx->base, "worker-reading", NULL);
  for (int t = 0; t < 10000 && access(reading, F_OK) != 0; t++)
    g_usleep(1000);
  g_free(reading);
  for (int i = 0; i < RACE_SWAPS; i++) {
    if (renameat2(AT_FDCWD, a, AT_FDCWD, l, RENAME_EXCHANGE) == 0) s->swaps++;
    else s->failed++;
  }
  /* leave the real directory in place */
  struct stat st;
  if (lstat(a, &st) == 0 && S_ISLNK(st.st_mode)) renameat2(AT_FDCWD, a, AT_FDCWD, l, RENAME_EXCHANGE);
  char *done = g_build_filename(s->fx->base, "swaps-done", NULL);
  write_file(done, "");
  g_free(done);
  g_free(a);
  g_free(l);
  return NULL;
}

static void worker_race(Ctx *c) {
  char *p = g_strconcat(c->fx->pass_home, "/a/b/file", NULL);
  char *done = g_build_filename(c->fx->base, "swaps-done", NULL);
  char *reading = g_build_filename(c->fx->base, "worker-reading", NULL);
  long reads = 0, real = 0, outside = 0, refused = 0, absent = 0, other = 0;
  bool last = false;
  /* Reads until the swaps are done, then once more: the real directory is
   * back in place, so that read must find the real file. */
  for (;;) {
    if (!last && access(done, F_OK) == 0)
      last = true;
    int e;
    char *t = slurp(p, &e);
    if (reads++ == 0)
      write_file(reading, "");
    if (!e && strcmp(t, "inside\n") == 0) real++;
    else if (strstr(t, "OUTSIDE")) outside++;
    else if (e == EACCES) refused++;
    else if (e == ENOENT || e == ESTALE || e == ELOOP) absent++;
    else other++;
    g_free(t);
    if (last)
      break;
  }
  g_free(reading);
  put(c, "reads", "%ld", reads);
  put(c, "real", "%ld", real);
  put(c, "outside", "%ld", outside);
  put(c, "refused", "%ld", refused);
  put(c, "absent", "%ld", absent);
  put(c, "other", "%ld", other);
  g_free(done);
  g_free(p);
}

/* While the worker reads ~/a/b/file in a loop, the host swaps a with a
 * symlink to a directory outside every root: RACE_SWAPS swaps, and no read
 * may return the outside file (each is refused or reads the real one). */
static void test_race(Fx *fx, gconstpointer data) {
  (void)data;
  char *d = g_build_filename(fx->home, "a", "b", NULL);
  write_file_in(d, "file", "inside\n");
  g_free(d);
  d = g_build_filename(fx->base, "outside", "a", "b", NULL);
  write_file_in(d, "file", "OUTSIDE\n");
  g_free(d);
  char *l = g_build_filename(fx->home, "a.lnk", NULL);
  g_assert_cmpint(symlink("../outside/a", l), ==, 0);
  g_free(l);
  int cmd = box_vfs_command_new(fx->vfs);
  Swapper s = {fx, 0, 0};
  pthread_t th;
  g_assert_cmpint(pthread_create(&th, NULL, swap_thread, &s), ==, 0);
  GHashTable *h = run_worker(fx, cmd, true, worker_race);
  pthread_join(th, NULL);
  g_assert_cmpint(s.swaps, ==, RACE_SWAPS);
  g_assert_cmpstr(val(h, "outside"), ==, "0");
  g_assert_cmpstr(val(h, "other"), ==, "0");
  g_assert_cmpint(atol(val(h, "reads")), >, 0);
  g_assert_cmpint(atol(val(h, "real")), >, 0);
  GPtrArray *r = take_records(fx);
  guint identity = 0;
  for (guint i = 0; i < r->len; i++)
    if (g_str_has_suffix(r->pdata[i], "enforcement:identity")) identity++;
  g_test_message("race: %d swaps, %s reads, %s real, %s refused (%u identity records), %s absent",
                 s.swaps, val(h, "reads"), val(h, "real"), val(h, "refused"), identity,
                 val(h, "absent"));
  g_ptr_array_unref(r);
  g_hash_table_unref(h);
  box_vfs_command_end(fx->vfs, cmd);
}

static void test_concurrent(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_stress);
  g_assert_cmpstr(val(h, "bad"), ==, "0");
  g_hash_table_unref(h);
  box_vfs_command_end(fx->vfs, cmd);
  GPtrArray *r = take_records(fx);
  guint denies = 0;
  for (guint i = 0; i < r->len; i++)
    if (g_str_has_suffix(r->pdata[i], " deny")) denies++;
  g_assert_cmpuint(denies, ==, 4 * 150);
  g_ptr_array_unref(r);
}

/* ---- liveness: pending decisions ---- */

#define PENDING_OPENERS 3

/* Openers of ~/pending-N whose decisions never come: each reports its errno. */
static void worker_pending_end(Ctx *c) {
  pid_t kids[PENDING_OPENERS];
  int pipes[PENDING_OPENERS][2];
  for (int i = 0; i < PENDING_OPENERS; i++) {
    g_assert_cmpint(pipe(pipes[i]), ==, 0);
    kids[i] = fork();
    if (kids[i] == 0) {
      char *p = g_strdup_printf("%s/pending-%d", c->fx->pass_home, i);
      int fd = open(p, O_RDONLY);
      int e = fd < 0 ? errno : 0;
      if (write(pipes[i][1], &e, sizeof e) != sizeof e) _exit(1);
      _exit(0);
    }
    close(pipes[i][1]);
  }
  gint64 t0 = g_get_monotonic_time();
  GString *errs = g_string_new(NULL);
  for (int i = 0; i < PENDING_OPENERS; i++) {
    int e = -1;
    if (read(pipes[i][0], &e, sizeof e) != sizeof e) e = -1;
    g_string_append_printf(errs, "%s%d", i ? "," : "", e);
    waitpid(kids[i], NULL, 0);
  }
  put(c, "errnos", "%s", errs->str);
  put(c, "ms", "%ld", (long)((g_get_monotonic_time() - t0) / 1000));
  g_string_free(errs, TRUE);
}

typedef struct {
  Fx *fx;
  int cmd;
  int want;
  bool ok;
} Ender;

/* Ends the command once `want` decisions are pending. */
static void *end_thread(void *arg) {
  Ender *e = arg;
  gint64 until = g_get_monotonic_time() + 5 * G_TIME_SPAN_SECOND;
  g_mutex_lock(&e->fx->mu);
  while (e->fx->pending_started < e->want)
    if (!g_cond_wait_until(&e->fx->cond, &e->fx->mu, until)) break;
  e->ok = e->fx->pending_started >= e->want;
  g_mutex_unlock(&e->fx->mu);
  box_vfs_command_end(e->fx->vfs, e->cmd);
  return NULL;
}

/* A command that ends while its requests wait for decisions: they are
 * answered EINTR at once (the callers are not left in D state until the
 * decision comes), and the loop threads stayed free meanwhile. */
static void test_pending_end(Fx *fx, gconstpointer data) {
  (void)data;
  for (int i = 0; i < PENDING_OPENERS; i++) {
    char *p = g_strdup_printf("%s/pending-%d", fx->home, i);
    write_file(p, "p\n");
    g_free(p);
  }
  int cmd = box_vfs_command_new(fx->vfs);
  Ender e = {fx, cmd, PENDING_OPENERS, false};
  pthread_t th;
  g_assert_cmpint(pthread_create(&th, NULL, end_thread, &e), ==, 0);
  GHashTable *h = run_worker(fx, cmd, true, worker_pending_end);
  pthread_join(th, NULL);
  g_assert_true(e.ok);
  g_assert_cmpstr(val(h, "errnos"), ==, "4,4,4"); /* EINTR */
  g_assert_cmpint(atol(val(h, "ms")), <, 5000);
  g_assert_cmpuint(box_vfs_debug_cancelled(fx->vfs), >=, PENDING_OPENERS);
  g_hash_table_unref(h);
  /* The decisions, once made, are still logged (and nothing is done). */
  release_pending(fx);
  box_vfs_stop(fx->vfs);
  fx->vfs = NULL;
  GPtrArray *r = take_records(fx);
  guint pending = 0, undone = 0;
  for (guint i = 0; i < r->len; i++) {
    if (!strstr(r->pdata[i], "pending-")) continue;
    if (g_str_has_prefix(r->pdata[i], "outcome ")) {
      /* a cancelled request did nothing: its permit's outcome is an error */
      g_assert_true(g_str_has_suffix(r->pdata[i], " error"));
      undone++;
    } else {
      pending++;
    }
  }
  g_assert_cmpuint(pending, ==, PENDING_OPENERS);
  g_assert_cmpuint(undone, ==, PENDING_OPENERS);
  g_ptr_array_unref(r);
}

/* SIGKILL of a caller whose OPEN waits for a decision: the kernel sends
 * FUSE_INTERRUPT, the request is answered EINTR and the process dies at
 * once instead of waiting in D state for the decision. */
static void worker_pending_kill(Ctx *c) {
  pid_t kid = fork();
  if (kid == 0) {
    char *p = g_strdup_printf("%s/pending-k", c->fx->pass_home);
    int fd = open(p, O_RDONLY);
    _exit(fd < 0 ? 2 : 0);
  }
  usleep(300 * 1000);
  gint64 t0 = g_get_monotonic_time();
  kill(kid, SIGKILL);
  int st = 0;
  waitpid(kid, &st, 0);
  put(c, "kill_ms", "%ld", (long)((g_get_monotonic_time() - t0) / 1000));
  put(c, "signaled", "%d", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
}

static void test_pending_interrupt(Fx *fx, gconstpointer data) {
  (void)data;
  char *p = g_build_filename(fx->home, "pending-k", NULL);
  write_file(p, "k\n");
  g_free(p);
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_pending_kill);
  g_assert_cmpstr(val(h, "signaled"), ==, "9");
  g_assert_cmpint(atol(val(h, "kill_ms")), <, 2000); /* the decision waits 10 s */
  g_assert_cmpuint(box_vfs_debug_cancelled(fx->vfs), >=, 1);
  g_hash_table_unref(h);
  release_pending(fx);
  box_vfs_command_end(fx->vfs, cmd);
}

/* A process in a PID namespace nested below the worker's (unshare -p,
 * bwrap) is placed by walking up with NS_GET_PARENT. */
static void worker_nested(Ctx *c) {
  if (unshare(CLONE_NEWPID) != 0) {
    put(c, "nested", "unshare %d", errno);
    return;
  }
  pid_t kid = fork();
  if (kid == 0) {
    char *p = g_strconcat(c->fx->pass_home, "/hello.txt", NULL);
    int e;
    char *t = slurp(p, &e);
    _exit(e == 0 && strcmp(t, "hello world\n") == 0 ? 0 : (e ? e : 100));
  }
  int st = 0;
  waitpid(kid, &st, 0);
  put(c, "nested", "%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* ---- the decision cache (cache_decisions) ---- */

static void worker_cache(Ctx *c) {
  char *p = g_strconcat(c->fx->pass_home, "/hello.txt", NULL);
  char *s = g_strconcat(c->fx->pass_home, "/secret.txt", NULL);
  struct stat st;
  int ok = 0;
  for (int i = 0; i < 3; i++) ok += stat(p, &st) == 0;
  put(c, "stats", "%d", ok);
  int denied = 0;
  for (int i = 0; i < 2; i++) denied += open(s, O_RDONLY) < 0 && errno == EACCES;
  put(c, "denied", "%d", denied);
  int e;
  char *t = slurp(p, &e);
  put(c, "read", "%s", e == 0 ? t : "error");
  g_free(t);
  g_free(p);
  g_free(s);
}

static void test_decision_cache(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_cache);
  g_assert_cmpstr(val(h, "stats"), ==, "3");
  g_assert_cmpstr(val(h, "denied"), ==, "2");
  g_assert_true(g_str_has_prefix(val(h, "read"), "hello world"));
  g_hash_table_unref(h);
  GPtrArray *r = take_records(fx);
  dump_records(r);
  /* every decision is recorded, the reused ones too, with their outcome */
  g_assert_cmpuint(count_records(r, "fs:read ~/hello.txt read_metadata permit"), ==, 3);
  g_assert_cmpuint(count_records(r, "outcome fs:read ~/hello.txt read_metadata completed"), ==, 3);
  /* the name may be neither read nor written: its lookup is refused, as a
   * missing name's is, before any open (each time: a refusal is not kept) */
  g_assert_cmpuint(count_records(r, "fs:read ~/secret.txt read_metadata deny"), ==, 2);
  g_assert_cmpuint(count_records(r, "fs:read ~/secret.txt read_content deny"), ==, 0);
  g_ptr_array_unref(r);
  /* policy was asked once per distinct request; the rest were reused and
   * noted (the history still sees each request) */
  guint64 hits = box_vfs_debug_cache_hits(fx->vfs);
  g_mutex_lock(&fx->mu);
  int decides = fx->decides, notes = fx->notes;
  g_mutex_unlock(&fx->mu);
  g_assert_cmpuint(hits, >=, 3);
  g_assert_cmpint(notes, ==, (int)hits);
  g_test_message("decides %d, reused %d", decides, notes);
  /* invalidated (a policy change): asked again */
  box_vfs_invalidate_decisions(fx->vfs);
  h = run_worker(fx, cmd, true, worker_cache);
  g_assert_cmpstr(val(h, "stats"), ==, "3");
  g_hash_table_unref(h);
  g_mutex_lock(&fx->mu);
  g_assert_cmpint(fx->decides, >, decides);
  g_mutex_unlock(&fx->mu);
  g_ptr_array_unref(take_records(fx));
  box_vfs_command_end(fx->vfs, cmd);
  /* a new command starts with no cached verdict */
  g_mutex_lock(&fx->mu);
  decides = fx->decides;
  g_mutex_unlock(&fx->mu);
  int cmd2 = box_vfs_command_new(fx->vfs);
  h = run_worker(fx, cmd2, true, worker_cache);
  g_hash_table_unref(h);
  g_mutex_lock(&fx->mu);
  g_assert_cmpint(fx->decides, >, decides);
  g_mutex_unlock(&fx->mu);
  g_ptr_array_unref(take_records(fx));
  box_vfs_command_end(fx->vfs, cmd2);
}

/* A missing name's probe asks policy quietly: a name the command may read
 * is ENOENT with nothing noted to the history nor logged; a refused one is
 * noted (its ::request) and logged, like any refusal. */
static void worker_probe(Ctx *c) {
  char *plain = g_strconcat(c->fx->pass_home, "/plain-absent.txt", NULL);
  char *secret = g_strconcat(c->fx->pass_home, "/secret-absent.txt", NULL);
  struct stat st;
  put(c, "plain", "%d", stat(plain, &st) < 0 ? errno : 0);
  put(c, "secret", "%d", stat(secret, &st) < 0 ? errno : 0);
  g_free(plain);
  g_free(secret);
}

static void test_quiet_probe(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  g_ptr_array_unref(take_records(fx));
  g_mutex_lock(&fx->mu);
  int notes = fx->notes, quiet = fx->quiet;
  g_mutex_unlock(&fx->mu);
  GHashTable *h = run_worker(fx, cmd, true, worker_probe);
  g_assert_cmpstr(val(h, "plain"), ==, "2");
  g_assert_cmpstr(val(h, "secret"), ==, "13");
  g_hash_table_unref(h);
  GPtrArray *r = take_records(fx);
  dump_records(r);
  for (guint i = 0; i < r->len; i++) g_assert_null(strstr(r->pdata[i], "plain-absent"));
  g_assert_cmpuint(count_records(r, "fs:read ~/secret-absent.txt read_metadata deny"), ==, 1);
  g_ptr_array_unref(r);
  g_mutex_lock(&fx->mu);
  /* plain: its read (permitted); secret: its read and its write (refused) */
  g_assert_cmpint(fx->quiet - quiet, ==, 3);
  g_assert_cmpint(fx->notes - notes, ==, 1);
  g_mutex_unlock(&fx->mu);
  box_vfs_command_end(fx->vfs, cmd);
}

/* A directory the command may neither read nor write, with nothing
 * permitted below it, answers as a missing name does: refused at its
 * lookup (EACCES, the read denial recorded), so mkdir, O_CREAT and a walk
 * through it never meet the kernel's entry (EEXIST, EISDIR).  One it may
 * write ("wonly") is walked, and found. */
static void worker_refused_dirs(Ctx *c) {
  static const char *const names[] = {"secretdir", "secretdix"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *dir = g_strconcat(c->fx->pass_home, "/", names[i], NULL);
    char *sub = g_strconcat(dir, "/sub", NULL);
    struct stat st;
    char key[64];
    snprintf(key, sizeof key, "%s.stat", names[i]);
    put(c, key, "%d", stat(dir, &st) < 0 ? errno : 0);
    snprintf(key, sizeof key, "%s.mkdir", names[i]);
    put(c, key, "%d", mkdir(dir, 0755) < 0 ? errno : 0);
    int fd = open(dir, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    snprintf(key, sizeof key, "%s.creat", names[i]);
    put(c, key, "%d", fd < 0 ? errno : 0);
    if (fd >= 0) close(fd);
    snprintf(key, sizeof key, "%s.sub", names[i]);
    put(c, key, "%d", mkdir(sub, 0755) < 0 ? errno : 0);
    g_free(sub);
    g_free(dir);
  }
  char *wonly = g_strconcat(c->fx->pass_home, "/wonlydir", NULL);
  put(c, "wonly.mkdir", "%d", mkdir(wonly, 0755) < 0 ? errno : 0);
  g_free(wonly);
}

static void test_refused_dirs(Fx *fx, gconstpointer data) {
  (void)data;
  char *p = g_build_filename(fx->home, "secretdir", "sub", NULL);
  g_assert_cmpint(g_mkdir_with_parents(p, 0755), ==, 0);
  g_free(p);
  p = g_build_filename(fx->home, "wonlydir", NULL);
  g_assert_cmpint(g_mkdir(p, 0755), ==, 0);
  g_free(p);
  int cmd = box_vfs_command_new(fx->vfs);
  g_ptr_array_unref(take_records(fx));
  GHashTable *h = run_worker(fx, cmd, true, worker_refused_dirs);
  static const char *const ops[] = {"stat", "mkdir", "creat", "sub"};
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
    char *a = g_strdup_printf("secretdir.%s", ops[i]), *b = g_strdup_printf("secretdix.%s", ops[i]);
    g_assert_cmpstr(val(h, a), ==, "13");
    g_assert_cmpstr(val(h, b), ==, "13");
    g_free(a);
    g_free(b);
  }
  g_assert_cmpstr(val(h, "wonly.mkdir"), ==, "17");
  g_hash_table_unref(h);
  GPtrArray *r = take_records(fx);
  dump_records(r);
  /* the same record for both, once per refused lookup; nothing below */
  guint present = count_records(r, "fs:read ~/secretdir read_metadata deny");
  g_assert_cmpuint(present, ==, count_records(r, "fs:read ~/secretdix read_metadata deny"));
  g_assert_cmpuint(present, >=, 1);
  for (guint i = 0; i < r->len; i++) g_assert_null(strstr(r->pdata[i], "/sub"));
  g_ptr_array_unref(r);
  box_vfs_command_end(fx->vfs, cmd);
  p = g_build_filename(fx->home, "secretdir", "sub", NULL);
  g_assert_true(g_file_test(p, G_FILE_TEST_IS_DIR));
  g_free(p);
}

/* A name made by someone else between the kernel's LOOKUP (missing) and
 * its CREATE: the file is made with O_EXCL, so the open finds the name
 * taken.  Without the caller's O_EXCL it opens the file that is there (its
 * contents kept), unless that is a floor object, refused as the floor
 * refuses it; with O_EXCL, EEXIST. */
static void worker_create_raced(Ctx *c) {
  const char *home = c->fx->pass_home;
  char *plain = g_strconcat(home, "/raced-plain.txt", NULL);
  char *excl = g_strconcat(home, "/raced-excl.txt", NULL);
  char *floor = g_strconcat(home, "/raced-floor.txt", NULL);
  int fd = open(plain, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
  put(c, "plain", "%d", fd < 0 ? errno : 0);
  if (fd >= 0) {
    put(c, "plain_write", "%zd", write(fd, "+after", 6));
    close(fd);
  }
  fd = open(excl, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  put(c, "excl", "%d", fd < 0 ? errno : 0);
  if (fd >= 0) close(fd);
  fd = open(floor, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  put(c, "floor", "%d", fd < 0 ? errno : 0);
  if (fd >= 0) close(fd);
  g_free(plain);
  g_free(excl);
  g_free(floor);
}

static void test_create_raced(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  g_ptr_array_unref(take_records(fx));
  GHashTable *h = run_worker(fx, cmd, true, worker_create_raced);
  g_assert_cmpstr(val(h, "plain"), ==, "0");
  g_assert_cmpstr(val(h, "plain_write"), ==, "6");
  g_assert_cmpstr(val(h, "excl"), ==, "17");
  g_assert_cmpstr(val(h, "floor"), ==, "13");
  g_hash_table_unref(h);
  char *text = NULL, *path = g_build_filename(fx->home, "raced-plain.txt", NULL);
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_cmpstr(text, ==, "before+after");
  g_free(text);
  g_free(path);
  g_assert_true(g_file_get_contents(fx->floor_file, &text, NULL, NULL));
  g_assert_cmpstr(text, ==, "[agent]\n");
  g_free(text);
  GPtrArray *r = take_records(fx);
  dump_records(r);
  /* policy permitted each; the floor refusal found after it is logged as
   * an enforcement of its own, as an identity mismatch is, and the permit's
   * outcome is the error */
  g_assert_cmpuint(count_records(r, "fs:write ~/raced-floor.txt other enforcement:reach-floor"), ==, 1);
  g_assert_cmpuint(count_records(r, "outcome fs:write ~/raced-floor.txt write_content error"), ==, 1);
  g_assert_cmpuint(count_records(r, "outcome fs:write ~/raced-excl.txt write_content error"), ==, 1);
  g_assert_cmpuint(count_records(r, "outcome fs:write ~/raced-plain.txt write_content descriptor_issued"), ==, 1);
  g_ptr_array_unref(r);
  box_vfs_command_end(fx->vfs, cmd);
}

/* ---- a lookup that hides a name's attributes keeps the kernel's copy of
 * the file intact ---- */

static sigjmp_buf bus_jump;
static void on_bus(int sig) {
  (void)sig;
  siglongjmp(bus_jump, 1);
}

typedef struct {
  int go, ready;
} MapperArg;

/* Maps wonly.txt and reads its second page once now and once when told;
 * "1" if both reads saw the file, "bus" on SIGBUS. */
static void mapper_body(Fx *fx, int cmd, void *arg) {
  (void)cmd;
  MapperArg *a = arg;
  char *path = g_strconcat(fx->pass_home, "/wonly.txt", NULL);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  volatile const char *m = fd < 0 ? MAP_FAILED : mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
  const char *result = "1";
  signal(SIGBUS, on_bus);
  if (m == MAP_FAILED) result = "nomap";
  else if (sigsetjmp(bus_jump, 1)) result = "bus";
  else if (m[4096] != 'w') result = "first";
  char b;
  if (write(a->ready, "r", 1) != 1) _exit(96);
  if (read(a->go, &b, 1) != 1) _exit(97); /* another command looked it up */
  if (strcmp(result, "1") == 0) {
    if (sigsetjmp(bus_jump, 1)) result = "bus";
    else if (m[4096] != 'w') result = "second";
  }
  if (write(a->ready, result, strlen(result)) < 0) _exit(98);
}

/* The mapper as a tool (no decisions) of cmd: *go_fd starts it and later
 * tells it to read again; *ready_fd gives "r", then its result. */
static pid_t start_mapper(Fx *fx, int cmd, int *ready_fd, int *go_fd) {
  int go[2], ready[2];
  g_assert_cmpint(pipe2(go, O_CLOEXEC), ==, 0);
  g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
  MapperArg a = {go[0], ready[1]};
  pid_t mid = fork_placed(fx, cmd, true, &ready[1], 1, go[0], mapper_body, &a);
  close(go[0]);
  close(ready[1]);
  *ready_fd = ready[0];
  *go_fd = go[1];
  return mid;
}

static void worker_stat_wonly(Ctx *c) {
  char *p = g_strconcat(c->fx->pass_home, "/wonly.txt", NULL);
  char *fresh = g_strconcat(c->fx->pass_home, "/wonly-fresh.txt", NULL);
  struct stat st;
  /* may write, may not read: the lookup shows the file, the stat is refused */
  put(c, "stat", "%d", stat(p, &st) < 0 ? errno : 0);
  /* what the lookup left in the kernel (statx without a GETATTR): the type;
   * of the mapped file also the size the kernel had */
  struct statx sx;
  int rc = statx(AT_FDCWD, p, AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx);
  put(c, "held", "%s", rc < 0 ? g_strerror(errno) : g_strdup_printf("mode %o size %llu", sx.stx_mode, (unsigned long long)sx.stx_size));
  rc = statx(AT_FDCWD, fresh, AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx);
  put(c, "fresh", "%s", rc < 0 ? g_strerror(errno) : g_strdup_printf("mode %o size %llu uid %u", sx.stx_mode, (unsigned long long)sx.stx_size, sx.stx_uid));
  g_free(fresh);
  g_free(p);
}

/* "stat": the errno of a stat of rel under the mounted home */
static void put_stat_of(Ctx *c, const char *rel) {
  char *p = g_strconcat(c->fx->pass_home, rel, NULL);
  struct stat st;
  put(c, "stat", "%d", err_of(stat(p, &st)));
  g_free(p);
}

static void worker_walk_watched(Ctx *c) { put_stat_of(c, "/w/d/f"); }

static double ms_since(gint64 t0) { return (double)(g_get_monotonic_time() - t0) / 1000.0; }

/* The names changed outside the mount: each change reaches the kernel at
 * once, whatever the entry's timeout. */
static void worker_outside_changes(Ctx *c) {
  char *d = g_strconcat(c->fx->pass_home, "/w/d", NULL);
  char *real = g_build_filename(c->fx->home, "w", "d", NULL);
  char *moved = g_build_filename(c->fx->home, "w", "d.moved", NULL);
  char *fresh = g_strconcat(c->fx->pass_home, "/w/d/fresh", NULL);
  char *real_fresh = g_build_filename(c->fx->home, "w", "d", "fresh", NULL);
  struct stat st;
  put(c, "dir", "%d", stat(d, &st) == 0 && S_ISDIR(st.st_mode));
  put(c, "fresh_before", "%d", err_of(lstat(fresh, &st)));
  /* a directory replaced by a symlink: the kernel must not go on taking
   * the name for the directory it was */
  if (rename(real, moved) != 0 || symlink("/etc", real) != 0) _exit(90);
  gint64 t0 = g_get_monotonic_time();
  while (!(lstat(d, &st) == 0 && S_ISLNK(st.st_mode)) && ms_since(t0) < 5000) g_usleep(200);
  put(c, "link_seen", "%d", lstat(d, &st) == 0 && S_ISLNK(st.st_mode));
  put(c, "link_ms_under_500", "%d", ms_since(t0) < 500);
  int fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  put(c, "open_link", "%d", fd < 0 ? errno : 0);
  if (fd >= 0) close(fd);
  /* and back */
  if (unlink(real) != 0 || rename(moved, real) != 0) _exit(91);
  t0 = g_get_monotonic_time();
  while (!(lstat(d, &st) == 0 && S_ISDIR(st.st_mode)) && ms_since(t0) < 5000) g_usleep(200);
  put(c, "dir_again_under_500", "%d", ms_since(t0) < 500);
  /* created and removed outside */
  write_file(real_fresh, "new\n");
  put(c, "fresh_made", "%d", err_of(lstat(fresh, &st)));
  if (unlink(real_fresh) != 0) _exit(92);
  put(c, "fresh_gone", "%d", err_of(lstat(fresh, &st)));
  g_free(real_fresh);
  g_free(fresh);
  g_free(moved);
  g_free(real);
  g_free(d);
}

static void tool_idle(Fx *fx, int cmd, void *arg) { (void)fx, (void)cmd, (void)arg; }

static void test_watched_entries(Fx *fx, gconstpointer data) {
  char *dir = g_build_filename(fx->home, "w", "d", NULL);
  write_file_in(dir, "f", "f\n");
  g_free(dir);
  /* the watch thread passes on the three creations first (it gathers
   * events for a few ms; one expiring w after the walk would count) */
  g_usleep(100 * 1000);
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_walk_watched);
  g_assert_cmpstr(val(h, "stat"), ==, "0");
  g_hash_table_unref(h);
  box_vfs_command_end(fx->vfs, cmd);
  guint64 before = box_vfs_debug_pass_lookups(fx->vfs);
  /* past the short timeout: another command walks w/d/f again */
  g_usleep(1300 * 1000);
  cmd = box_vfs_command_new(fx->vfs);
  h = run_worker(fx, cmd, true, worker_walk_watched);
  g_assert_cmpstr(val(h, "stat"), ==, "0");
  g_hash_table_unref(h);
  guint64 after = box_vfs_debug_pass_lookups(fx->vfs);
  g_test_message("pass lookups: %" G_GUINT64_FORMAT " then %" G_GUINT64_FORMAT, before, after);
  /* with the decision cache (a policy that reads no history) the names are
   * kept for the long timeout: the walk asked nothing; without it, the
   * short timeout: w, d and f asked again */
  if (data == FX_CACHED) g_assert_cmpuint(after, ==, before);
  else g_assert_cmpuint(after, >=, before + 3);
  h = run_worker(fx, cmd, true, worker_outside_changes);
  g_assert_cmpstr(val(h, "dir"), ==, "1");
  g_assert_cmpstr(val(h, "fresh_before"), ==, "2");
  g_assert_cmpstr(val(h, "link_seen"), ==, "1");
  g_assert_cmpstr(val(h, "link_ms_under_500"), ==, "1");
  g_assert_cmpstr(val(h, "open_link"), ==, "20"); /* ENOTDIR, as natively */
  g_assert_cmpstr(val(h, "dir_again_under_500"), ==, "1");
  g_assert_cmpstr(val(h, "fresh_made"), ==, "0");
  g_assert_cmpstr(val(h, "fresh_gone"), ==, "2");
  g_hash_table_unref(h);
  box_vfs_command_end(fx->vfs, cmd);
  if (data != FX_CACHED) return;
  /* A tool decides nothing: from its registration on, the names kept long
   * are expired and new ones kept for the short timeout. */
  int tool_cmd = box_vfs_command_new(fx->vfs);
  int go[2];
  g_assert_cmpint(pipe2(go, O_CLOEXEC), ==, 0);
  pid_t tool = fork_placed(fx, tool_cmd, true, NULL, 0, go[0], tool_idle, NULL);
  close(go[0]);
  g_assert_cmpint(write(go[1], "g", 1), ==, 1);
  close(go[1]);
  int st;
  g_assert_cmpint(waitpid(tool, &st, 0), ==, tool);
  g_usleep(100 * 1000); /* the watch thread expires them */
  guint64 with_tool[3];
  for (int i = 0; i < 3; i++) {
    with_tool[i] = box_vfs_debug_pass_lookups(fx->vfs);
    if (i == 2) break;
    if (i == 1) g_usleep(1300 * 1000);
    cmd = box_vfs_command_new(fx->vfs);
    h = run_worker(fx, cmd, true, worker_walk_watched);
    g_assert_cmpstr(val(h, "stat"), ==, "0");
    g_hash_table_unref(h);
    box_vfs_command_end(fx->vfs, cmd);
  }
  g_test_message("with a tool: pass lookups %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT,
                 with_tool[0], with_tool[1], with_tool[2]);
  g_assert_cmpuint(with_tool[1], >=, with_tool[0] + 3); /* expired at the tool's coming */
  g_assert_cmpuint(with_tool[2], >=, with_tool[1] + 3); /* then kept 1 s only */
  box_vfs_command_end(fx->vfs, tool_cmd);
}


/* A stat of a node whose place no name change has touched since a walk
 * found it makes no walk (vfs_watch.c); a change outside the mount, even of
 * another name, makes the next one walk again; a node moved out of every
 * root is gone at once, not answered from its descriptor. */
static void worker_stat_many(Ctx *c) {
  char *p = g_strconcat(c->fx->pass_home, "/w/s/f", NULL);
  struct stat st;
  int ok = 0;
  for (int i = 0; i < 50; i++) ok += stat(p, &st) == 0 && st.st_size == 2;
  put(c, "ok", "%d", ok);
  g_free(p);
}

static void worker_stat_once(Ctx *c) { put_stat_of(c, "/w/s/f"); }

static guint64 walks_of(Fx *fx, int cmd, WorkerFn fn, const char *key, const char *want) {
  guint64 before = box_vfs_debug_reach_walks(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, fn);
  g_assert_cmpstr(val(h, key), ==, want);
  g_hash_table_unref(h);
  return box_vfs_debug_reach_walks(fx->vfs) - before;
}

static void test_settled_stats(Fx *fx, gconstpointer data) {
  (void)data;
  char *dir = g_build_filename(fx->home, "w", "s", NULL);
  write_file_in(dir, "f", "f\n");
  g_usleep(100 * 1000); /* the watch has counted the creations */
  int cmd = box_vfs_command_new(fx->vfs);
  guint64 first = walks_of(fx, cmd, worker_stat_many, "ok", "50");
  guint64 again = walks_of(fx, cmd, worker_stat_many, "ok", "50");
  char *other = g_build_filename(dir, "other", NULL);
  write_file(other, "o\n"); /* outside the mount, beside f */
  g_usleep(100 * 1000); /* counted (until then each stat walks: the event is queued) */
  guint64 after_change = walks_of(fx, cmd, worker_stat_many, "ok", "50");
  guint64 settled_again = walks_of(fx, cmd, worker_stat_many, "ok", "50");
  g_test_message("walks for 50 stats: %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ", after a change %"
                 G_GUINT64_FORMAT ", then %" G_GUINT64_FORMAT, first, again, after_change, settled_again);
  g_assert_cmpuint(again, ==, 0);
  g_assert_cmpuint(after_change, >=, 1); /* the first stat after it */
  g_assert_cmpuint(after_change, <=, 2);
  g_assert_cmpuint(settled_again, ==, 0);
  /* moved out of every root: the stat right after the move walks and finds nothing */
  char *away = g_build_filename(fx->base, "away", NULL);
  g_assert_cmpint(rename(dir, away), ==, 0);
  guint64 moved = walks_of(fx, cmd, worker_stat_once, "stat", "2");
  g_assert_cmpuint(moved, >=, 1);
  g_assert_cmpint(rename(away, dir), ==, 0);
  box_vfs_command_end(fx->vfs, cmd);
  g_free(away);
  g_free(other);
  g_free(dir);
}
/* A bound root's own descriptor stands for every walk to it: creating
 * names in the root walks nothing, before any op has walked there. */
static void worker_create_in_root(Ctx *c) {
  int made = 0;
  for (int i = 0; i < 30; i++) {
    char *p = g_strdup_printf("%s/rooted-%d.txt", c->fx->pass_home, i);
    int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0 && write(fd, "r", 1) == 1) made++;
    if (fd >= 0) close(fd);
    g_free(p);
  }
  put(c, "made", "%d", made);
}

static void test_root_creates(Fx *fx, gconstpointer data) {
  (void)data;
  g_usleep(100 * 1000); /* the watch has counted the fixture's own files */
  int cmd = box_vfs_command_new(fx->vfs);
  guint64 walks = walks_of(fx, cmd, worker_create_in_root, "made", "30");
  g_test_message("walks for 30 creates in a root: %" G_GUINT64_FORMAT, walks);
  g_assert_cmpuint(walks, ==, 0);
  box_vfs_command_end(fx->vfs, cmd);
}

static void test_blanked_lookup(Fx *fx, gconstpointer data) {
  (void)data;
  char *real = g_build_filename(fx->home, "wonly.txt", NULL);
  char *text = g_strnfill(8192, 'w');
  write_file(real, text);
  g_free(real);
  real = g_build_filename(fx->home, "wonly-fresh.txt", NULL);
  write_file(real, text);
  g_assert_cmpint(chown(real, 1000, 1000), ==, 0);
  g_free(text);
  g_free(real);
  int tool_cmd = box_vfs_command_new(fx->vfs);
  int ready, go;
  pid_t mid = start_mapper(fx, tool_cmd, &ready, &go);
  g_assert_cmpint(write(go, "g", 1), ==, 1);
  char r[16] = "";
  g_assert_cmpint(read(ready, r, 1), ==, 1);
  /* past the entry's timeout, so the command's walk asks the daemon again */
  g_usleep(1300 * 1000);
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_stat_wonly);
  g_assert_cmpstr(val(h, "stat"), ==, "13");
  g_assert_cmpstr(val(h, "held"), ==, "mode 100000 size 8192");
  g_assert_cmpstr(val(h, "fresh"), ==, "mode 100000 size 0 uid 0");
  g_hash_table_unref(h);
  box_vfs_command_end(fx->vfs, cmd);
  g_assert_cmpint(write(go, "g", 1), ==, 1);
  ssize_t n = read(ready, r, sizeof r - 1);
  r[n > 0 ? n : 0] = '\0';
  close(ready);
  close(go);
  int st;
  g_assert_cmpint(waitpid(mid, &st, 0), ==, mid);
  /* the lookup that hid the attributes from the command did not cut the
   * file the tool has mapped down to the size it showed */
  g_assert_cmpstr(r, ==, "1");
  g_assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  box_vfs_command_end(fx->vfs, tool_cmd);
}

/* ---- readdirplus: attributes only where a read_metadata was permitted ---- */

static void worker_plus(Ctx *c) {
  char *dir = g_strconcat(c->fx->pass_home, "/plus", NULL);
  char *a = g_strconcat(dir, "/a.txt", NULL);
  char *s = g_strconcat(dir, "/secret.txt", NULL);
  struct stat st;
  char *auth = g_strconcat(dir, "/authority.txt", NULL);
  /* a.txt: read_metadata permitted (and cached); secret.txt: denied;
   * authority.txt: permitted by policy (cached), refused by the floor (a
   * hard link to box.toml) */
  put(c, "stat_a", "%d", stat(a, &st) == 0);
  put(c, "stat_secret", "%d", stat(s, &st) < 0 && errno == EACCES ? 1 : 0);
  put(c, "stat_auth", "%d", stat(auth, &st) < 0 && errno == EACCES ? 1 : 0);
  /* a fresh listing: its first batch is a READDIRPLUS (the kernel's auto mode) */
  DIR *d = opendir(dir);
  int names = 0;
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL)
    if (de->d_name[0] != '.') names++;
  if (d) closedir(d);
  put(c, "names", "%d", names);
  /* what the listing brought cannot be read without a decision */
  put(c, "stat_secret2", "%d", stat(s, &st) < 0 && errno == EACCES ? 1 : 0);
  put(c, "stat_a2", "%d", stat(a, &st) == 0 && st.st_size == 1);
  put(c, "stat_auth2", "%d", stat(auth, &st) < 0 && errno == EACCES ? 1 : 0);
  g_free(auth);
  g_free(dir);
  g_free(a);
  g_free(s);
}

static void test_readdirplus(Fx *fx, gconstpointer data) {
  char *dir = g_build_filename(fx->home, "plus", NULL);
  g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
  const char *files[] = {"a.txt", "b.txt", "c.txt", "secret.txt"};
  for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
    char *f = g_build_filename(dir, files[i], NULL);
    g_assert_true(g_file_set_contents(f, "x", 1, NULL));
    g_free(f);
  }
  char *auth = g_build_filename(dir, "authority.txt", NULL);
  g_assert_cmpint(link(fx->floor_file, auth), ==, 0);
  g_free(auth);
  guint64 shown0, hidden0;
  box_vfs_debug_readdirplus(fx->vfs, &shown0, &hidden0);
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_plus);
  g_assert_cmpstr(val(h, "stat_a"), ==, "1");
  g_assert_cmpstr(val(h, "stat_secret"), ==, "1");
  g_assert_cmpstr(val(h, "stat_auth"), ==, "1");
  g_assert_cmpstr(val(h, "names"), ==, "5");
  g_assert_cmpstr(val(h, "stat_secret2"), ==, "1");
  g_assert_cmpstr(val(h, "stat_a2"), ==, "1");
  g_assert_cmpstr(val(h, "stat_auth2"), ==, "1");
  g_hash_table_unref(h);
  guint64 shown, hidden;
  box_vfs_debug_readdirplus(fx->vfs, &shown, &hidden);
  shown -= shown0;
  hidden -= hidden0;
  g_test_message("readdirplus: %" G_GUINT64_FORMAT " shown, %" G_GUINT64_FORMAT " hidden", shown, hidden);
  /* the five names went out in a READDIRPLUS; with the decision cache only
   * a.txt (permitted before) with its attributes, without it none: not
   * authority.txt, whose cached permit the floor overrules */
  g_assert_cmpuint(shown + hidden, ==, 5);
  g_assert_cmpuint(shown, ==, data == FX_CACHED ? 1 : 0);
  GPtrArray *r = take_records(fx);
  dump_records(r);
  /* the listing decided nothing about its entries */
  g_assert_cmpuint(count_records(r, "fs:read ~/plus/b.txt read_metadata permit"), ==, 0);
  g_assert_cmpuint(count_records(r, "fs:read ~/plus/c.txt read_metadata permit"), ==, 0);
  g_assert_cmpuint(count_records(r, "fs:read ~/plus/secret.txt read_metadata deny"), ==, 2);
  g_assert_cmpuint(count_records(r, "fs:read ~/plus read_metadata permit") +
                       count_records(r, "fs:read ~/plus enumerate permit"), >=, 1);
  g_ptr_array_unref(r);
  box_vfs_command_end(fx->vfs, cmd);
  g_free(dir);
}

/* ---- the kernel's FUSE passthrough for opened real files ---- */

static void worker_passthrough(Ctx *c) {
  char *p = g_strconcat(c->fx->pass_home, "/pt.txt", NULL);
  int fd = open(p, O_CREAT | O_RDWR | O_TRUNC, 0644);
  int ok = fd >= 0 && write(fd, "abc", 3) == 3;
  /* a second handle on the same inode while the first is open */
  int fd2 = open(p, O_RDONLY);
  char b[8] = {0};
  ok = ok && fd2 >= 0 && pread(fd2, b, sizeof b, 0) == 3 && memcmp(b, "abc", 3) == 0;
  /* O_APPEND through its own handle */
  int fd3 = open(p, O_WRONLY | O_APPEND);
  ok = ok && fd3 >= 0 && write(fd3, "de", 2) == 2;
  struct stat st;
  ok = ok && fstat(fd2, &st) == 0 && st.st_size == 5;
  ok = ok && pread(fd2, b, sizeof b, 0) == 5 && memcmp(b, "abcde", 5) == 0;
  if (fd >= 0) close(fd);
  if (fd2 >= 0) close(fd2);
  if (fd3 >= 0) close(fd3);
  put(c, "pt", "%d", ok);
  g_free(p);
}

static void test_passthrough(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  guint64 before = 0;
  bool on = box_vfs_debug_passthrough(fx->vfs, &before);
  GHashTable *h = run_worker(fx, cmd, true, worker_passthrough);
  g_assert_cmpstr(val(h, "pt"), ==, "1");
  g_hash_table_unref(h);
  char *real = g_build_filename(fx->home, "pt.txt", NULL);
  int e;
  char *t = slurp(real, &e);
  g_assert_cmpstr(t, ==, "abcde");
  g_free(t);
  g_free(real);
  guint64 after = 0;
  on = box_vfs_debug_passthrough(fx->vfs, &after);
  g_test_message("passthrough %s, %" G_GUINT64_FORMAT " backing files", on ? "on" : "off", after);
  /* the kernel here has CONFIG_FUSE_PASSTHROUGH: then every open was passed through */
  if (on) g_assert_cmpuint(after, >, before);
  g_ptr_array_unref(take_records(fx));
  box_vfs_command_end(fx->vfs, cmd);
}

static void test_nested_pidns(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_nested);
  g_assert_cmpstr(val(h, "nested"), ==, "0");
  g_hash_table_unref(h);
  GPtrArray *r = take_records(fx);
  g_assert_cmpuint(count_records(r, "fs:read ~/hello.txt read_content permit"), ==, 1);
  g_ptr_array_unref(r);
  box_vfs_command_end(fx->vfs, cmd);
}

/* ---- the history raiser: the outcome of each permitted effect ---- */

static void worker_outcome(Ctx *c) {
  char *a = g_strconcat(c->fx->pass_home, "/out.txt", NULL);
  char *b = g_strconcat(c->fx->pass_home, "/moved.txt", NULL);
  char *d = g_strconcat(c->fx->pass_home, "/dir", NULL);
  int fd = open(a, O_CREAT | O_WRONLY | O_EXCL, 0644);
  put(c, "create", "%d", fd < 0 ? errno : 0);
  if (fd >= 0) close(fd);
  put(c, "rename", "%d", err_of(rename(a, b)));
  put(c, "mkdir", "%d", err_of(mkdir(d, 0755)));
  char *f = g_strconcat(d, "/f", NULL);
  int fd2 = open(f, O_CREAT | O_WRONLY, 0644);
  if (fd2 >= 0) close(fd2);
  g_free(f);
  put(c, "rmdir", "%d", err_of(rmdir(d))); /* ENOTEMPTY: permitted, did not happen */
  g_free(a);
  g_free(b);
  g_free(d);
}

static void test_outcomes(Fx *fx, gconstpointer data) {
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_outcome);
  g_assert_cmpstr(val(h, "create"), ==, "0");
  g_assert_cmpstr(val(h, "rmdir"), ==, "39");
  g_hash_table_unref(h);
  GPtrArray *r = take_records(fx);
  const char *want[] = {
      "fs:write ~/out.txt write_content permit",
      "outcome fs:write ~/out.txt write_content descriptor_issued",
      "fs:move ~/out.txt rename permit",
      "fs:read ~/out.txt read_content permit",
      "fs:move ~/moved.txt rename permit",
      "outcome fs:move ~/out.txt rename completed",
      "outcome fs:read ~/out.txt read_content completed",
      "outcome fs:move ~/moved.txt rename completed",
      "fs:write ~/dir create_dir permit",
      "outcome fs:write ~/dir create_dir completed",
      "fs:delete ~/dir remove_dir permit",
      "outcome fs:delete ~/dir remove_dir error",
      NULL};
  assert_in_order(r, want);
  /* one outcome per permit, none for a denial */
  guint permits = 0, outcomes = 0;
  for (guint i = 0; i < r->len; i++) {
    if (g_str_has_suffix(r->pdata[i], " permit")) permits++;
    if (g_str_has_prefix(r->pdata[i], "outcome ")) outcomes++;
  }
  g_assert_cmpuint(permits, ==, outcomes);
  g_ptr_array_unref(r);
  box_vfs_command_end(fx->vfs, cmd);
}

/* ---- one history batch per request ---- */

static void worker_batches(Ctx *c) {
  char *a = g_strconcat(c->fx->pass_home, "/b.txt", NULL);
  char *b = g_strconcat(c->fx->pass_home, "/b2.txt", NULL);
  char *s = g_strconcat(c->fx->pass_home, "/secret.txt", NULL);
  char *x = g_strconcat(c->fx->pass_home, "/absent.txt", NULL);
  int fd = open(a, O_CREAT | O_WRONLY | O_EXCL, 0644);
  put(c, "create", "%d", fd < 0 ? errno : 0);
  if (fd >= 0) close(fd);
  struct stat st;
  put(c, "stat-secret", "%d", err_of(stat(s, &st)));
  put(c, "stat-absent", "%d", err_of(stat(x, &st)));
  put(c, "rename", "%d", err_of(rename(a, b)));
  put(c, "unlink", "%d", err_of(unlink(b)));
  g_free(a);
  g_free(b);
  g_free(s);
  g_free(x);
}

/* Every decision and outcome of a request lies inside one batch, which is
 * closed before the request is answered: batches never nest, none is left
 * open, and a request's records are not split over two. */
static void test_history_batches(Fx *fx, gconstpointer data) {
  (void)data;
  char *secret = g_build_filename(fx->home, "secret.txt", NULL);
  write_file(secret, "no\n");
  g_free(secret);
  g_mutex_lock(&fx->mu);
  fx->track_batches = true;
  g_mutex_unlock(&fx->mu);
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_batches);
  g_assert_cmpstr(val(h, "create"), ==, "0");
  g_assert_cmpstr(val(h, "stat-secret"), ==, "13");
  g_assert_cmpstr(val(h, "stat-absent"), ==, "2");
  g_assert_cmpstr(val(h, "rename"), ==, "0");
  g_assert_cmpstr(val(h, "unlink"), ==, "0");
  g_hash_table_unref(h);
  g_mutex_lock(&fx->mu);
  fx->track_batches = false;
  g_mutex_unlock(&fx->mu);
  GPtrArray *r = take_records(fx);
  dump_records(r);
  bool open = false;
  guint batches = 0, inside = 0;
  for (guint i = 0; i < r->len; i++) {
    const char *l = r->pdata[i];
    if (strcmp(l, "batch begin") == 0) {
      g_assert_false(open);
      open = true;
      batches++;
    } else if (strcmp(l, "batch end") == 0) {
      g_assert_true(open);
      open = false;
    } else {
      g_assert_true(open);
      inside++;
    }
  }
  g_assert_false(open);
  /* the rename's four decisions and three outcomes share one batch */
  const char *rename_batch[] = {"batch begin", "fs:move ~/b.txt rename permit", "fs:read ~/b.txt read_content permit",
                                "fs:move ~/b2.txt rename permit", "outcome fs:move ~/b.txt rename completed",
                                "outcome fs:read ~/b.txt read_content completed",
                                "outcome fs:move ~/b2.txt rename completed", "batch end", NULL};
  guint at = 0;
  while (at < r->len && strcmp(r->pdata[at], "fs:move ~/b.txt rename permit") != 0) at++;
  g_assert_cmpuint(at, >, 0);
  at--;
  for (guint k = 0; rename_batch[k]; k++, at++) {
    g_assert_cmpuint(at, <, r->len);
    g_assert_cmpstr(r->pdata[at], ==, rename_batch[k]);
  }
  /* create, the refused stat, the rename and the unlink at least */
  g_assert_cmpuint(batches, >=, 4);
  g_assert_cmpuint(inside, >=, 10);
  g_ptr_array_unref(r);
  box_vfs_command_end(fx->vfs, cmd);
}

static void skip_all(void) { g_test_skip("needs root and /dev/fuse"); }

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
    g_test_message("needs root and /dev/fuse");
    g_test_add_func("/vfs/skipped", skip_all);
    return g_test_run();
  }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGABRT, on_abort);
  g_test_add("/vfs/unplaced", Fx, NULL, fx_setup, test_unplaced, fx_teardown);
  g_test_add("/vfs/decision-cache", Fx, FX_CACHED, fx_setup, test_decision_cache, fx_teardown);
  g_test_add("/vfs/passthrough", Fx, NULL, fx_setup, test_passthrough, fx_teardown);
  g_test_add("/vfs/readdirplus", Fx, NULL, fx_setup, test_readdirplus, fx_teardown);
  g_test_add("/vfs/cached/readdirplus", Fx, FX_CACHED, fx_setup, test_readdirplus, fx_teardown);
  g_test_add("/vfs/cached/quiet-probe", Fx, FX_CACHED, fx_setup, test_quiet_probe, fx_teardown);
  g_test_add("/vfs/cached/refused-dirs", Fx, FX_CACHED_BENEATH, fx_setup, test_refused_dirs, fx_teardown);
  g_test_add("/vfs/create-raced", Fx, NULL, fx_setup, test_create_raced, fx_teardown);
  g_test_add("/vfs/cached/create-raced", Fx, FX_CACHED, fx_setup, test_create_raced, fx_teardown);
  g_test_add("/vfs/cached/watched-entries", Fx, FX_CACHED, fx_setup, test_watched_entries, fx_teardown);
  g_test_add("/vfs/watched-entries", Fx, NULL, fx_setup, test_watched_entries, fx_teardown);
  g_test_add("/vfs/cached/settled-stats", Fx, FX_CACHED, fx_setup, test_settled_stats, fx_teardown);
  g_test_add("/vfs/cached/root-creates", Fx, FX_CACHED, fx_setup, test_root_creates, fx_teardown);
  g_test_add("/vfs/cached/blanked-lookup", Fx, FX_CACHED_NO_PT, fx_setup, test_blanked_lookup, fx_teardown);
  /* the decision tests again, decided on the loop thread with the cache */
  g_test_add("/vfs/cached/pass-decisions", Fx, FX_CACHED, fx_setup, test_pass_decisions, fx_teardown);
  g_test_add("/vfs/cached/ram", Fx, FX_CACHED, fx_setup, test_ram, fx_teardown);
  g_test_add("/vfs/cached/concurrent", Fx, FX_CACHED, fx_setup, test_concurrent, fx_teardown);
  g_test_add("/vfs/cached/git", Fx, FX_CACHED, fx_setup, test_git, fx_teardown);
  g_test_add("/vfs/cached/race-symlink-swap", Fx, FX_CACHED, fx_setup, test_race, fx_teardown);
  g_test_add("/vfs/cached/outcomes", Fx, FX_CACHED, fx_setup, test_outcomes, fx_teardown);
  g_test_add("/vfs/pass-decisions", Fx, NULL, fx_setup, test_pass_decisions, fx_teardown);
  g_test_add("/vfs/setup-state", Fx, NULL, fx_setup, test_setup_state, fx_teardown);
  g_test_add("/vfs/ram", Fx, NULL, fx_setup, test_ram, fx_teardown);
  g_test_add("/vfs/concurrent", Fx, NULL, fx_setup, test_concurrent, fx_teardown);
  g_test_add("/vfs/git", Fx, NULL, fx_setup, test_git, fx_teardown);
  g_test_add("/vfs/race-symlink-swap", Fx, NULL, fx_setup, test_race, fx_teardown);
  g_test_add("/vfs/pending-end", Fx, NULL, fx_setup, test_pending_end, fx_teardown);
  g_test_add("/vfs/pending-interrupt", Fx, NULL, fx_setup, test_pending_interrupt, fx_teardown);
  g_test_add("/vfs/nested-pidns", Fx, NULL, fx_setup, test_nested_pidns, fx_teardown);
  g_test_add("/vfs/outcomes", Fx, NULL, fx_setup, test_outcomes, fx_teardown);
  g_test_add("/vfs/history-batches", Fx, NULL, fx_setup, test_history_batches, fx_teardown);
  g_test_add("/vfs/cached/history-batches", Fx, FX_CACHED, fx_setup, test_history_batches, fx_teardown);
  return g_test_run();
}
