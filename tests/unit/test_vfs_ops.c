/* test_vfs_ops.c — file operations through the mount: placement, the
 * passthrough and RAM trees with their decisions, git, concurrency, and a
 * directory swapped with a symlink while it is walked. */
#include "tests/unit/test_vfs.h"

void test_unplaced(Fx *fx, gconstpointer data)
{
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

static void worker_pass_ops(Ctx *c)
{
  const char *P = c->fx->pass_home;
  char *p, *q;
  struct stat st;

  p = g_strconcat(P, "/hello.txt", NULL);
  put(c, "stat", "%d", err_of(stat(p, &st)));
  put(c, "stat_size", "%lld", (long long)st.st_size);
  put_read(c, "read", p);
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
  put_read(c, "read_moved", q);
  g_free(p);
  p = g_strconcat(P, "/dir", NULL);
  char *t = listdir(p);
  put(c, "list_dir", "%s", t);
  g_free(t);
  g_free(p);
  p = g_strconcat(P, "/dir/link", NULL);
  put_symlink(c, "moved.txt", p);
  put_read(c, "read_link_target", p); /* through the link */
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
  put_read_errno(c, "deny_read", p);
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
    if (xrc == 0)
      put(c, "deny_statx_shown", "mode %o size %llu", sx.stx_mode, (unsigned long long)sx.stx_size);
    put(c, "deny_stat_absent", "%d", stat(absent, &dst) < 0 ? errno : 0);
    put_open(c, "deny_open_absent", absent, O_RDONLY | O_CLOEXEC);
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
  put_read_errno(c, "floor_file", p);
  t = denial_text(c);
  put(c, "floor_file_text", "%s", t);
  g_free(t);
  g_free(p);
  p = g_strconcat(P, "/other-name.toml", NULL);
  put_read_errno(c, "floor_link", p);
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

void test_pass_decisions(Fx *fx, gconstpointer data)
{
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
  g_assert_cmpstr(
    val(h, "floor_link_text"), ==,
    "~/other-name.toml: resolves to an authority source that this run loaded, which no "
    "policy may open or change");
  g_assert_cmpstr(val(h, "floor_tree"), ==, "13");
  g_assert_cmpstr(val(h, "floor_tree_text"), ==,
                  "~/boxdir/state: resolves into trusted Box state, which no policy may open");

  const char *expected[] = {
    "fs:read ~/hello.txt read_metadata permit", "fs:read ~/hello.txt read_content permit",
    "fs:write ~/hello.txt set_permissions permit",
    "fs:read ~/hello.txt read_metadata permit", /* access(2) */
    "fs:write ~/new.txt write_content permit",
    "fs:write ~/new.txt write_content permit", /* append open */
    "fs:write ~/new.txt write_content permit", /* truncate */
    "fs:write ~/dir create_dir permit", "fs:move ~/new.txt rename permit",
    "fs:read ~/new.txt read_content permit", "fs:move ~/dir/moved.txt rename permit",
    "fs:read ~/dir/moved.txt read_content permit", "fs:read ~/dir enumerate permit",
    "fs:write ~/dir/moved.txt symlink permit", "fs:read ~/dir/moved.txt read_content permit",
    "fs:write ~/dir/link symlink permit", "fs:read ~/dir/link read_link permit",
    "fs:delete ~/dir/link remove_file permit",
    "fs:read ~/dir/moved.txt read_content permit", /* link: source */
    "fs:write ~/dir/hard write_content permit", "fs:delete ~/dir/hard remove_file permit",
    "fs:write ~/dir/moved.txt set_permissions permit",
    "fs:write ~/dir/other.txt write_content permit", "fs:move ~/dir/moved.txt rename permit",
    "fs:read ~/dir/moved.txt read_content permit", "fs:delete ~/dir/other.txt remove_file permit",
    "fs:move ~/dir/other.txt rename permit", "fs:delete ~/dir/other.txt remove_file permit",
    "fs:delete ~/dir remove_dir permit",
    /* an absent name that may be neither read nor written: the lookup
       * is refused like an existing one, as a metadata read */
    "fs:read ~/secret-new.txt read_metadata deny",
    /* with the verdicts quiet and cached, the lookup of a name that may
       * be neither read nor written is refused before its open, as a
       * missing one's is */
    data == FX_CACHED ? "fs:read ~/secret.txt read_metadata deny"
                      : "fs:read ~/secret.txt read_content deny",
    "fs:read ~/secret.txt read_metadata deny", "fs:read ~/secret-absent.txt read_metadata deny",
    "fs:read ~/box.toml read_content enforcement:reach-floor",
    "fs:read ~/boxdir/state read_metadata enforcement:reach-floor", NULL
  };
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

static void worker_setup_ops(Ctx *c)
{
  char *p = g_strconcat(c->fx->pass_home, "/secret.txt", NULL);
  put_read(c, "read_secret", p);
  g_free(p);
}

void test_setup_state(Fx *fx, gconstpointer data)
{
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

static void worker_ram_ops(Ctx *c)
{
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
  put_read(c, "read", p);
  q = g_strconcat(c->ram, "/tmp/d", NULL);
  put(c, "mkdir", "%d", err_of(mkdir(q, 0700)));
  g_free(q);
  q = g_strconcat(c->ram, "/tmp/d/g.txt", NULL);
  put(c, "rename", "%d", err_of(rename(p, q)));
  put(c, "old_gone", "%d", err_of(stat(p, &st)));
  put_read(c, "read_moved", q);
  g_free(p);
  p = g_strconcat(c->ram, "/tmp/d/l", NULL);
  put_symlink(c, "g.txt", p);
  put_read(c, "read_via_link", p);
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

static void worker_ram_after(Ctx *c)
{
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

void test_ram(Fx *fx, gconstpointer data)
{
  (void)data;
  int cmd = box_vfs_command_new(fx->vfs);
  guint base = box_vfs_debug_ram_nodes(fx->vfs); /* the slot's layout */
  char *ram1 = box_vfs_ram_root(fx->vfs, cmd);
  GHashTable *h = run_worker(fx, cmd, true, worker_ram_ops);
  GPtrArray *r = take_records(fx);
  dump_records(r);
  /* c<N>'s root: tmp, dev, home, usr (for the time zones) and the first
   * component of the root chain; no .box */
  char *first = g_strndup(fx->home + 1, strcspn(fx->home + 1, "/"));
  gchar **parts = g_strsplit(val(h, "root_list"), ",", -1);
  bool chain_shared = strcmp(first, "tmp") == 0 || strcmp(first, "home") == 0;
  g_assert_cmpuint(g_strv_length(parts), ==, chain_shared ? 4 : 5);
  g_assert_true(g_strv_contains((const char *const *)parts, "usr:4"));
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
    NULL
  };
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

static void worker_git(Ctx *c)
{
  char *cmd = g_strdup_printf(
    "set -e; cd '%s'; git init -q repo; cd repo; echo hi > a.txt; mkdir -p sub; "
    "echo there > sub/b.txt; chmod +x sub/b.txt; git add -A; "
    "git -c user.name=t -c user.email=t@example.com commit -qm first; "
    "echo more >> a.txt; git -c user.name=t -c user.email=t@example.com commit -qam second; "
    "git fsck --no-progress 2>&1; git log --oneline | wc -l",
    c->fx->pass_home);
  char *argv[] = { "/bin/sh", "-c", cmd, NULL };
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

void test_git(Fx *fx, gconstpointer data)
{
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
  char *argv[] = { "git", "-C", repo, "log", "--format=%s", NULL };
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

static void *stress_thread(void *arg)
{
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

static void worker_stress(Ctx *c)
{
  pthread_t th[4];
  Stress st[4];
  for (int i = 0; i < 4; i++) {
    st[i] = (Stress){ c, i, 0 };
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

static void *swap_thread(void *arg)
{
  Swapper *s = arg;
  char *a = g_build_filename(s->fx->home, "a", NULL);
  char *l = g_build_filename(s->fx->home, "a.lnk", NULL);
  /* Swap only once the worker reads: a late worker would see no race at all. */
  char *reading = g_build_filename(s->fx->base, "worker-reading", NULL);
  for (int t = 0; t < 10000 && access(reading, F_OK) != 0; t++) g_usleep(1000);
  g_free(reading);
  for (int i = 0; i < RACE_SWAPS; i++) {
    if (renameat2(AT_FDCWD, a, AT_FDCWD, l, RENAME_EXCHANGE) == 0)
      s->swaps++;
    else
      s->failed++;
  }
  /* leave the real directory in place */
  struct stat st;
  if (lstat(a, &st) == 0 && S_ISLNK(st.st_mode))
    renameat2(AT_FDCWD, a, AT_FDCWD, l, RENAME_EXCHANGE);
  char *done = g_build_filename(s->fx->base, "swaps-done", NULL);
  write_file(done, "");
  g_free(done);
  g_free(a);
  g_free(l);
  return NULL;
}

static void worker_race(Ctx *c)
{
  char *p = g_strconcat(c->fx->pass_home, "/a/b/file", NULL);
  char *done = g_build_filename(c->fx->base, "swaps-done", NULL);
  char *reading = g_build_filename(c->fx->base, "worker-reading", NULL);
  long reads = 0, real = 0, outside = 0, refused = 0, absent = 0, other = 0;
  bool last = false;
  /* Reads until the swaps are done, then once more: the real directory is
   * back in place, so that read must find the real file. */
  for (;;) {
    if (!last && access(done, F_OK) == 0) last = true;
    int e;
    char *t = slurp(p, &e);
    if (reads++ == 0) write_file(reading, "");
    if (!e && strcmp(t, "inside\n") == 0)
      real++;
    else if (strstr(t, "OUTSIDE"))
      outside++;
    else if (e == EACCES)
      refused++;
    else if (e == ENOENT || e == ESTALE || e == ELOOP)
      absent++;
    else
      other++;
    g_free(t);
    if (last) break;
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
void test_race(Fx *fx, gconstpointer data)
{
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
  Swapper s = { fx, 0, 0 };
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

void test_concurrent(Fx *fx, gconstpointer data)
{
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

/* A process in a PID namespace nested below the worker's (unshare -p,
 * bwrap) is placed by walking up with NS_GET_PARENT. */
static void worker_nested(Ctx *c)
{
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

void test_nested_pidns(Fx *fx, gconstpointer data)
{
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
