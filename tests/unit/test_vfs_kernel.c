/* test_vfs_kernel.c — what the kernel keeps of the mount: attributes a
 * lookup hides, entries kept long in watched directories, stats without a
 * walk, READDIRPLUS, and FUSE passthrough of opened files. */
#include "tests/unit/test_vfs.h"

/* ---- a lookup that hides a name's attributes keeps the kernel's copy of
 * the file intact ---- */

static sigjmp_buf bus_jump;
static void on_bus(int sig)
{
  (void)sig;
  siglongjmp(bus_jump, 1);
}

typedef struct {
  int go, ready;
} MapperArg;

/* Maps wonly.txt and reads its second page once now and once when told;
 * "1" if both reads saw the file, "bus" on SIGBUS. */
static void mapper_body(Fx *fx, int cmd, void *arg)
{
  (void)cmd;
  MapperArg *a = arg;
  char *path = g_strconcat(fx->pass_home, "/wonly.txt", NULL);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  volatile const char *m = fd < 0 ? MAP_FAILED : mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
  const char *result = "1";
  signal(SIGBUS, on_bus);
  if (m == MAP_FAILED)
    result = "nomap";
  else if (sigsetjmp(bus_jump, 1))
    result = "bus";
  else if (m[4096] != 'w')
    result = "first";
  char b;
  if (write(a->ready, "r", 1) != 1) _exit(96);
  if (read(a->go, &b, 1) != 1) _exit(97); /* another command looked it up */
  if (strcmp(result, "1") == 0) {
    if (sigsetjmp(bus_jump, 1))
      result = "bus";
    else if (m[4096] != 'w')
      result = "second";
  }
  if (write(a->ready, result, strlen(result)) < 0) _exit(98);
}

/* The mapper as a tool (no decisions) of cmd: *go_fd starts it and later
 * tells it to read again; *ready_fd gives "r", then its result. */
static pid_t start_mapper(Fx *fx, int cmd, int *ready_fd, int *go_fd)
{
  int go[2], ready[2];
  g_assert_cmpint(pipe2(go, O_CLOEXEC), ==, 0);
  g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
  MapperArg a = { go[0], ready[1] };
  pid_t mid = fork_placed(fx, cmd, true, &ready[1], 1, go[0], mapper_body, &a);
  close(go[0]);
  close(ready[1]);
  *ready_fd = ready[0];
  *go_fd = go[1];
  return mid;
}

static void worker_stat_wonly(Ctx *c)
{
  char *p = g_strconcat(c->fx->pass_home, "/wonly.txt", NULL);
  char *fresh = g_strconcat(c->fx->pass_home, "/wonly-fresh.txt", NULL);
  struct stat st;
  /* may write, may not read: the lookup shows the file, the stat is refused */
  put(c, "stat", "%d", stat(p, &st) < 0 ? errno : 0);
  /* what the lookup left in the kernel (statx without a GETATTR): the type;
   * of the mapped file also the size the kernel had */
  struct statx sx;
  int rc = statx(AT_FDCWD, p, AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx);
  put(c, "held", "%s",
      rc < 0 ? g_strerror(errno)
             : g_strdup_printf("mode %o size %llu", sx.stx_mode, (unsigned long long)sx.stx_size));
  rc = statx(AT_FDCWD, fresh, AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx);
  put(c, "fresh", "%s",
      rc < 0 ? g_strerror(errno)
             : g_strdup_printf("mode %o size %llu uid %u", sx.stx_mode,
                               (unsigned long long)sx.stx_size, sx.stx_uid));
  g_free(fresh);
  g_free(p);
}

/* "stat": the errno of a stat of rel under the mounted home */
static void put_stat_of(Ctx *c, const char *rel)
{
  char *p = g_strconcat(c->fx->pass_home, rel, NULL);
  struct stat st;
  put(c, "stat", "%d", err_of(stat(p, &st)));
  g_free(p);
}

static void worker_walk_watched(Ctx *c)
{
  put_stat_of(c, "/w/d/f");
}

static double ms_since(gint64 t0)
{
  return (double)(g_get_monotonic_time() - t0) / 1000.0;
}

/* The names changed outside the mount: each change reaches the kernel at
 * once, whatever the entry's timeout. */
static void worker_outside_changes(Ctx *c)
{
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
  put_open(c, "open_link", d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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

static void tool_idle(Fx *fx, int cmd, void *arg)
{
  (void)fx, (void)cmd, (void)arg;
}

/* body run as a tool of cmd, placed before it starts; its wait status. */
static int run_tool(Fx *fx, int cmd, PlacedFn body, void *arg)
{
  int go[2];
  g_assert_cmpint(pipe2(go, O_CLOEXEC), ==, 0);
  pid_t tool = fork_placed(fx, cmd, true, NULL, 0, go[0], body, arg);
  close(go[0]);
  g_assert_cmpint(write(go[1], "g", 1), ==, 1);
  close(go[1]);
  int st;
  g_assert_cmpint(waitpid(tool, &st, 0), ==, tool);
  return st;
}

void test_watched_entries(Fx *fx, gconstpointer data)
{
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
  if (data == FX_CACHED)
    g_assert_cmpuint(after, ==, before);
  else
    g_assert_cmpuint(after, >=, before + 3);
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
  run_tool(fx, tool_cmd, tool_idle, NULL);
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
  g_test_message("with a tool: pass lookups %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                 ", %" G_GUINT64_FORMAT,
                 with_tool[0], with_tool[1], with_tool[2]);
  g_assert_cmpuint(with_tool[1], >=, with_tool[0] + 3); /* expired at the tool's coming */
  g_assert_cmpuint(with_tool[2], >=, with_tool[1] + 3); /* then kept 1 s only */
  box_vfs_command_end(fx->vfs, tool_cmd);
}

/* A stat of a node whose place no name change has touched since a walk
 * found it makes no walk (vfs_watch.c); a change outside the mount, even of
 * another name, makes the next one walk again; a node moved out of every
 * root is gone at once, not answered from its descriptor. */
static void worker_stat_many(Ctx *c)
{
  char *p = g_strconcat(c->fx->pass_home, "/w/s/f", NULL);
  struct stat st;
  int ok = 0;
  for (int i = 0; i < 50; i++) ok += stat(p, &st) == 0 && st.st_size == 2;
  put(c, "ok", "%d", ok);
  g_free(p);
}

static void worker_stat_once(Ctx *c)
{
  put_stat_of(c, "/w/s/f");
}

static guint64 walks_of(Fx *fx, int cmd, WorkerFn fn, const char *key, const char *want)
{
  guint64 before = box_vfs_debug_reach_walks(fx->vfs);
  GHashTable *h = run_worker(fx, cmd, true, fn);
  g_assert_cmpstr(val(h, key), ==, want);
  g_hash_table_unref(h);
  return box_vfs_debug_reach_walks(fx->vfs) - before;
}

void test_settled_stats(Fx *fx, gconstpointer data)
{
  (void)data;
  char *dir = g_build_filename(fx->home, "w", "s", NULL);
  write_file_in(dir, "f", "f\n");
  g_usleep(100 * 1000); /* the watch has counted the creations */
  int cmd = box_vfs_command_new(fx->vfs);
  guint64 first = walks_of(fx, cmd, worker_stat_many, "ok", "50");
  guint64 again = walks_of(fx, cmd, worker_stat_many, "ok", "50");
  char *other = g_build_filename(dir, "other", NULL);
  write_file(other, "o\n"); /* outside the mount, beside f */
  g_usleep(100 * 1000);     /* counted (until then each stat walks: the event is queued) */
  guint64 after_change = walks_of(fx, cmd, worker_stat_many, "ok", "50");
  guint64 settled_again = walks_of(fx, cmd, worker_stat_many, "ok", "50");
  g_test_message("walks for 50 stats: %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                 ", after a change %" G_GUINT64_FORMAT ", then %" G_GUINT64_FORMAT,
                 first, again, after_change, settled_again);
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
static void worker_create_in_root(Ctx *c)
{
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

void test_root_creates(Fx *fx, gconstpointer data)
{
  (void)data;
  g_usleep(100 * 1000); /* the watch has counted the fixture's own files */
  int cmd = box_vfs_command_new(fx->vfs);
  guint64 walks = walks_of(fx, cmd, worker_create_in_root, "made", "30");
  g_test_message("walks for 30 creates in a root: %" G_GUINT64_FORMAT, walks);
  g_assert_cmpuint(walks, ==, 0);
  box_vfs_command_end(fx->vfs, cmd);
}

void test_blanked_lookup(Fx *fx, gconstpointer data)
{
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

static void worker_plus(Ctx *c)
{
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

void test_readdirplus(Fx *fx, gconstpointer data)
{
  char *dir = g_build_filename(fx->home, "plus", NULL);
  g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
  const char *files[] = { "a.txt", "b.txt", "c.txt", "secret.txt" };
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
  g_test_message("readdirplus: %" G_GUINT64_FORMAT " shown, %" G_GUINT64_FORMAT " hidden", shown,
                 hidden);
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
                     count_records(r, "fs:read ~/plus enumerate permit"),
                   >=, 1);
  g_ptr_array_unref(r);
  box_vfs_command_end(fx->vfs, cmd);
  g_free(dir);
}

/* ---- the kernel's FUSE passthrough for opened real files ---- */

static void worker_passthrough(Ctx *c)
{
  char *p = g_strconcat(c->fx->pass_home, "/pt.txt", NULL);
  int fd = open(p, O_CREAT | O_RDWR | O_TRUNC, 0644);
  int ok = fd >= 0 && write(fd, "abc", 3) == 3;
  /* a second handle on the same inode while the first is open */
  int fd2 = open(p, O_RDONLY);
  char b[8] = { 0 };
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

void test_passthrough(Fx *fx, gconstpointer data)
{
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

/* A tool's launch walks to its command's RAM /tmp (<mnt>/ram/c<N>/tmp) to
 * bind it, placed as the command's tool. */
static void tool_stat_tmp(Fx *fx, int cmd, void *arg)
{
  (void)fx, (void)cmd;
  struct stat st;
  _exit(stat(arg, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : 1);
}

static void launch_walk(Fx *fx, int cmd, char *tmp)
{
  int st = run_tool(fx, cmd, tool_stat_tmp, tmp);
  g_assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A slot's RAM root outlives its commands: the next command lent the slot
 * finds its name still held by the kernel, and a launch's walk to its
 * /tmp asks no LOOKUP of /ram/c<N>. */
void test_slot_root_kept(Fx *fx, gconstpointer data)
{
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  char *root = box_vfs_ram_root(fx->vfs, cmd);
  char *tmp = g_build_filename(root, "tmp", NULL);
  launch_walk(fx, cmd, tmp);
  box_vfs_command_end(fx->vfs, cmd);
  guint64 before = box_vfs_debug_ram_lookups(fx->vfs);
  cmd = box_vfs_command_new(fx->vfs);
  char *again = box_vfs_ram_root(fx->vfs, cmd);
  g_assert_cmpstr(again, ==, root); /* the same slot, lent again */
  launch_walk(fx, cmd, tmp);
  box_vfs_command_end(fx->vfs, cmd);
  g_assert_cmpuint(box_vfs_debug_ram_lookups(fx->vfs), ==, before);
  g_free(again);
  g_free(tmp);
  g_free(root);
}
