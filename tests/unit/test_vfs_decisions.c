/* test_vfs_decisions.c — deciding: pending decisions (EINTR at a
 * command's end or on interrupt), the decision cache, the lookup's quiet
 * probes, refused directories, a raced create, and the history raiser
 * (outcomes, one batch per request). */
#include "tests/unit/test_vfs.h"

/* ---- liveness: pending decisions ---- */

#define PENDING_OPENERS 3

/* Openers of ~/pending-N whose decisions never come: each reports its errno. */
static void worker_pending_end(Ctx *c)
{
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
static void *end_thread(void *arg)
{
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
void test_pending_end(Fx *fx, gconstpointer data)
{
  (void)data;
  for (int i = 0; i < PENDING_OPENERS; i++) {
    char *p = g_strdup_printf("%s/pending-%d", fx->home, i);
    write_file(p, "p\n");
    g_free(p);
  }
  int cmd = box_vfs_command_new(fx->vfs);
  Ender e = { fx, cmd, PENDING_OPENERS, false };
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
static void worker_pending_kill(Ctx *c)
{
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

void test_pending_interrupt(Fx *fx, gconstpointer data)
{
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

/* ---- the decision cache (cache_decisions) ---- */

static void worker_cache(Ctx *c)
{
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

void test_decision_cache(Fx *fx, gconstpointer data)
{
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
static void worker_probe(Ctx *c)
{
  char *plain = g_strconcat(c->fx->pass_home, "/plain-absent.txt", NULL);
  char *secret = g_strconcat(c->fx->pass_home, "/secret-absent.txt", NULL);
  struct stat st;
  put(c, "plain", "%d", stat(plain, &st) < 0 ? errno : 0);
  put(c, "secret", "%d", stat(secret, &st) < 0 ? errno : 0);
  g_free(plain);
  g_free(secret);
}

void test_quiet_probe(Fx *fx, gconstpointer data)
{
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
static void worker_refused_dirs(Ctx *c)
{
  static const char *const names[] = { "secretdir", "secretdix" };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *dir = g_strconcat(c->fx->pass_home, "/", names[i], NULL);
    char *sub = g_strconcat(dir, "/sub", NULL);
    struct stat st;
    char key[64];
    snprintf(key, sizeof key, "%s.stat", names[i]);
    put(c, key, "%d", stat(dir, &st) < 0 ? errno : 0);
    snprintf(key, sizeof key, "%s.mkdir", names[i]);
    put(c, key, "%d", mkdir(dir, 0755) < 0 ? errno : 0);
    snprintf(key, sizeof key, "%s.creat", names[i]);
    put_open(c, key, dir, O_CREAT | O_WRONLY | O_CLOEXEC);
    snprintf(key, sizeof key, "%s.sub", names[i]);
    put(c, key, "%d", mkdir(sub, 0755) < 0 ? errno : 0);
    g_free(sub);
    g_free(dir);
  }
  char *wonly = g_strconcat(c->fx->pass_home, "/wonlydir", NULL);
  put(c, "wonly.mkdir", "%d", mkdir(wonly, 0755) < 0 ? errno : 0);
  g_free(wonly);
}

void test_refused_dirs(Fx *fx, gconstpointer data)
{
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
  static const char *const ops[] = { "stat", "mkdir", "creat", "sub" };
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
static void worker_create_raced(Ctx *c)
{
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
  put_open(c, "excl", excl, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC);
  put_open(c, "floor", floor, O_CREAT | O_WRONLY | O_CLOEXEC);
  g_free(plain);
  g_free(excl);
  g_free(floor);
}

void test_create_raced(Fx *fx, gconstpointer data)
{
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
  g_assert_cmpuint(count_records(r, "fs:write ~/raced-floor.txt other enforcement:reach-floor"), ==,
                   1);
  g_assert_cmpuint(count_records(r, "outcome fs:write ~/raced-floor.txt write_content error"), ==,
                   1);
  g_assert_cmpuint(count_records(r, "outcome fs:write ~/raced-excl.txt write_content error"), ==,
                   1);
  g_assert_cmpuint(
    count_records(r, "outcome fs:write ~/raced-plain.txt write_content descriptor_issued"), ==, 1);
  g_ptr_array_unref(r);
  box_vfs_command_end(fx->vfs, cmd);
}

/* ---- the history raiser: the outcome of each permitted effect ---- */

static void worker_outcome(Ctx *c)
{
  char *a = g_strconcat(c->fx->pass_home, "/out.txt", NULL);
  char *b = g_strconcat(c->fx->pass_home, "/moved.txt", NULL);
  char *d = g_strconcat(c->fx->pass_home, "/dir", NULL);
  put_open(c, "create", a, O_CREAT | O_WRONLY | O_EXCL);
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

void test_outcomes(Fx *fx, gconstpointer data)
{
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, worker_outcome);
  g_assert_cmpstr(val(h, "create"), ==, "0");
  g_assert_cmpstr(val(h, "rmdir"), ==, "39");
  g_hash_table_unref(h);
  GPtrArray *r = take_records(fx);
  const char *want[] = { "fs:write ~/out.txt write_content permit",
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
                         NULL };
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

static void worker_batches(Ctx *c)
{
  char *a = g_strconcat(c->fx->pass_home, "/b.txt", NULL);
  char *b = g_strconcat(c->fx->pass_home, "/b2.txt", NULL);
  char *s = g_strconcat(c->fx->pass_home, "/secret.txt", NULL);
  char *x = g_strconcat(c->fx->pass_home, "/absent.txt", NULL);
  put_open(c, "create", a, O_CREAT | O_WRONLY | O_EXCL);
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
void test_history_batches(Fx *fx, gconstpointer data)
{
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
  const char *rename_batch[] = { "batch begin",
                                 "fs:move ~/b.txt rename permit",
                                 "fs:read ~/b.txt read_content permit",
                                 "fs:move ~/b2.txt rename permit",
                                 "outcome fs:move ~/b.txt rename completed",
                                 "outcome fs:read ~/b.txt read_content completed",
                                 "outcome fs:move ~/b2.txt rename completed",
                                 "batch end",
                                 NULL };
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
