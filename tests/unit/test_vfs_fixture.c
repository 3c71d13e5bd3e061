/* test_vfs_fixture.c — the mount the vfs tests run against: a policy
 * stand-in, the fixture (a mount under a temporary directory) and the
 * runner that executes code as a command's worker. */
#include "tests/unit/test_vfs.h"

/* ---- policy stand-in: deny every path containing "secret", and the
 * reads of a path containing "wonly" (its writes are permitted) ---- */

static BoxDecision *test_decide(void *data, int command, const char *action, json_object *input)
{
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
                                 "No permit rule matched this request.",
                                 path);
    d->reason = g_strdup("no permit matched");
  } else {
    d->verdict = BOX_VERDICT_PERMIT;
    d->cause = BOX_CAUSE_PERMITTED;
    d->rule = g_strdup("policy_0");
  }
  return d;
}

/* A decision and an outcome are recorded as one line each, alike but for the
 * prefix and the last word, so that expect_records can match either. */
static void add_record(Fx *fx, const char *prefix, const char *action, json_object *input,
                       const char *last)
{
  const char *path = json_object_get_string(json_object_object_get(input, "path"));
  const char *op = json_object_get_string(json_object_object_get(input, "operation"));
  char *line = g_strdup_printf("%s%s %s %s %s", prefix, action, path, op, last);
  g_mutex_lock(&fx->mu);
  g_ptr_array_add(fx->records, line);
  g_mutex_unlock(&fx->mu);
}

static void test_record(void *data, int command, const char *action, json_object *input,
                        const BoxDecision *decision)
{
  (void)command;
  add_record(data, "", action, input,
             decision->verdict == BOX_VERDICT_PERMIT    ? "permit"
             : decision->cause == BOX_CAUSE_ENFORCEMENT ? decision->rule
                                                        : "deny");
}

static void test_note(void *data, int command, const char *action, json_object *input,
                      const BoxDecision *decision)
{
  Fx *fx = data;
  (void)command, (void)action, (void)input, (void)decision;
  g_mutex_lock(&fx->mu);
  fx->notes++;
  g_mutex_unlock(&fx->mu);
}

static BoxDecision *test_decide_quiet(void *data, int command, const char *action,
                                      json_object *input)
{
  Fx *fx = data;
  g_mutex_lock(&fx->mu);
  fx->quiet++;
  g_mutex_unlock(&fx->mu);
  return test_decide(data, command, action, input);
}

/* Below a path holding "secret" every path holds it too: nothing there is
 * permitted; elsewhere something may be. */
static bool test_beneath(void *data, const char *dir)
{
  (void)data;
  return strstr(dir, "secret") == NULL;
}

static void test_outcome(void *data, int command, const char *action, json_object *input,
                         const char *result)
{
  (void)command;
  add_record(data, "outcome ", action, input, result ? result : "error");
}

static void test_history_batch(void *data, bool begin)
{
  Fx *fx = data;
  g_mutex_lock(&fx->mu);
  if (fx->track_batches)
    g_ptr_array_add(fx->records, g_strdup(begin ? "batch begin" : "batch end"));
  g_mutex_unlock(&fx->mu);
}

GPtrArray *take_records(Fx *fx)
{
  g_mutex_lock(&fx->mu);
  GPtrArray *r = fx->records;
  fx->records = g_ptr_array_new_with_free_func(g_free);
  g_mutex_unlock(&fx->mu);
  return r;
}

void dump_records(GPtrArray *r)
{
  for (guint i = 0; i < r->len; i++) g_test_message("record %u: %s", i, (char *)r->pdata[i]);
}

/* The expected lines appear in this order (other records may be between). */
void assert_in_order(GPtrArray *r, const char *const *expected)
{
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

guint count_records(GPtrArray *r, const char *line)
{
  guint n = 0;
  for (guint i = 0; i < r->len; i++)
    if (strcmp(r->pdata[i], line) == 0) n++;
  return n;
}

/* ---- fixture ---- */

void write_file(const char *path, const char *text)
{
  GError *err = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, &err));
  g_assert_no_error(err);
}

/* dir (made with its parents) holding name with text */
void write_file_in(const char *dir, const char *name, const char *text)
{
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  char *f = g_build_filename(dir, name, NULL);
  write_file(f, text);
  g_free(f);
}

static bool is_mounted(const char *mnt)
{
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

void on_abort(int sig)
{
  if (active_mnt[0]) umount2(active_mnt, MNT_DETACH);
  signal(sig, SIG_DFL);
  raise(sig);
}

void fx_setup(Fx *fx, gconstpointer data)
{
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
  const char *roots[] = { fx->home, NULL };
  const char *trees[] = { fx->floor_tree, NULL };
  const char *files[] = { fx->floor_file, NULL };
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

void release_pending(Fx *fx)
{
  g_mutex_lock(&fx->mu);
  fx->release = true;
  g_cond_broadcast(&fx->cond);
  g_mutex_unlock(&fx->mu);
}

void fx_teardown(Fx *fx, gconstpointer data)
{
  (void)data;
  release_pending(fx);
  box_vfs_stop(fx->vfs);
  active_mnt[0] = '\0';
  if (is_mounted(fx->mnt)) {
    g_test_message("still mounted after box_vfs_stop; using fusermount3 -u -z");
    char *argv[] = { "fusermount3", "-u", "-z", fx->mnt, NULL };
    g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  }
  g_assert_false(is_mounted(fx->mnt));
  char *argv[] = { "rm", "-rf", "--one-file-system", fx->base, NULL };
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

void put(Ctx *c, const char *key, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *text = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fprintf(c->out, "%s=", key);
  for (const char *t = text; *t; t++) /* one line per key: newlines as \n */
    if (*t == '\n')
      fputs("\\n", c->out);
    else
      fputc(*t, c->out);
  fputc('\n', c->out);
  fflush(c->out);
  g_free(text);
}

int err_of(int rc)
{
  return rc < 0 ? errno : 0;
}

/* Reads a whole file ("" and errno on failure). */
char *slurp(const char *path, int *e)
{
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

/* Opens path (made with mode 0644 where flags hold O_CREAT), puts the errno
 * under key (0: it opened) and closes it again. */
void put_open(Ctx *c, const char *key, const char *path, int flags)
{
  int fd = open(path, flags, 0644);
  put(c, key, "%d", fd < 0 ? errno : 0);
  if (fd >= 0) close(fd);
}

/* Reads path and puts "errno:contents" under key. */
void put_read(Ctx *c, const char *key, const char *path)
{
  int e;
  char *t = slurp(path, &e);
  put(c, key, "%d:%s", e, t);
  g_free(t);
}

/* Reads path and puts only the errno under key (0: it was read). */
void put_read_errno(Ctx *c, const char *key, const char *path)
{
  int e;
  g_free(slurp(path, &e));
  put(c, key, "%d", e);
}

/* Makes path a symlink to target and puts how that went and what the link
 * then reads as. */
void put_symlink(Ctx *c, const char *target, const char *path)
{
  put(c, "symlink", "%d", err_of(symlink(target, path)));
  char buf[256];
  ssize_t n = readlink(path, buf, sizeof buf - 1);
  put(c, "readlink", "%s", n < 0 ? "<err>" : (buf[n] = '\0', buf));
}

char *denial_text(Ctx *c)
{
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

gint cmp_names(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char *listdir(const char *path)
{
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

pid_t fork_placed(Fx *fx, int cmd, bool is_tool, const int *keep, int nkeep, int go_in,
                  PlacedFn body, void *arg)
{
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

static void worker_body(Fx *fx, int cmd, void *arg)
{
  WorkerArg *a = arg;
  Ctx c = { fx, cmd, box_vfs_ram_root(fx->vfs, cmd), fdopen(a->out, "w") };
  a->fn(&c);
  fclose(c.out);
}

/* Forks a process in a new PID namespace, attaches it to cmd (as the worker,
 * running if asked), lets it run fn and returns its key=value lines. */
GHashTable *run_worker(Fx *fx, int cmd, bool running, WorkerFn fn)
{
  int go[2], res[2];
  g_assert_cmpint(pipe2(go, O_CLOEXEC), ==, 0);
  g_assert_cmpint(pipe2(res, O_CLOEXEC), ==, 0);
  WorkerArg a = { fn, res[1] };
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

const char *val(GHashTable *h, const char *key)
{
  const char *v = g_hash_table_lookup(h, key);
  if (!v) g_error("worker reported no %s", key);
  return v;
}
