/* test_tools.c — program resolution, ~ spelling and table choice. */
#include "tools/tools.h"
#include "tools/filter.h"

#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  char *dir;
  char *prog;  /* an executable file */
  char *link;  /* a symlink to it */
  char *plain; /* not executable */
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer data)
{
  (void)data;
  f->dir = g_dir_make_tmp("boxfs-tools-XXXXXX", NULL);
  char *real = realpath(f->dir, NULL);
  g_free(f->dir);
  f->dir = g_strdup(real);
  free(real);
  f->prog = g_build_filename(f->dir, "tool", NULL);
  f->link = g_build_filename(f->dir, "alias-of-tool", NULL);
  f->plain = g_build_filename(f->dir, "notes", NULL);
  g_assert_true(g_file_set_contents(f->prog, "#!/bin/sh\n", -1, NULL));
  g_assert_cmpint(chmod(f->prog, 0755), ==, 0);
  g_assert_cmpint(symlink(f->prog, f->link), ==, 0);
  g_assert_true(g_file_set_contents(f->plain, "x", -1, NULL));
}

static void fixture_teardown(Fixture *f, gconstpointer data)
{
  (void)data;
  g_unlink(f->link);
  g_unlink(f->prog);
  g_unlink(f->plain);
  g_rmdir(f->dir);
  g_free(f->dir);
  g_free(f->prog);
  g_free(f->link);
  g_free(f->plain);
}

static void test_resolve(Fixture *f, gconstpointer data)
{
  (void)data;
  g_autofree char *path = g_strdup_printf("/nonexistent:relative:%s", f->dir);
  g_autofree char *a = box_tools_resolve("tool", "/", path);
  g_assert_cmpstr(a, ==, f->prog);
  /* Links resolve to the file they name. */
  g_autofree char *b = box_tools_resolve("alias-of-tool", "/", path);
  g_assert_cmpstr(b, ==, f->prog);
  /* A name with a slash resolves against cwd, never on PATH. */
  g_autofree char *c = box_tools_resolve("./alias-of-tool", f->dir, "/usr/bin");
  g_assert_cmpstr(c, ==, f->prog);
  g_assert_null(box_tools_resolve("notes", "/", path));
  g_assert_null(box_tools_resolve("missing", "/", path));
  g_assert_null(box_tools_resolve("", "/", path));
  /* No PATH falls back to /usr/bin:/bin. */
  g_autofree char *sh = box_tools_resolve("sh", "/", NULL);
  g_assert_nonnull(sh);
  g_assert_true(g_str_has_prefix(sh, "/usr/bin/") || g_str_has_prefix(sh, "/bin/"));
}

/* the questions a path-named lookup asks, in order, and a
 * refusal anywhere answering as an absent path does. */
typedef struct {
  GString *asked; /* "operation path\n" per question */
  const char *refuse;
} Asked;

static bool ask(void *data, const char *path, const char *operation)
{
  Asked *a = data;
  g_string_append_printf(a->asked, "%s %s\n", operation, path);
  return !a->refuse || strcmp(path, a->refuse) != 0;
}

static void test_resolve_decided(Fixture *f, gconstpointer data)
{
  (void)data;
  Asked a = { g_string_new(NULL), NULL };
  /* a link: the path as named, the link before it is read, then the file */
  g_autofree char *r = box_tools_resolve_decided("./x/../alias-of-tool", f->dir, NULL, ask, &a);
  g_assert_cmpstr(r, ==, f->prog);
  g_autofree char *want = g_strdup_printf("read_metadata %s\nread_link %s\nread_metadata %s\n",
                                          f->link, f->link, f->prog);
  g_assert_cmpstr(a.asked->str, ==, want);
  /* the named path refused: nothing more is asked, nothing is found */
  g_string_truncate(a.asked, 0);
  a.refuse = f->prog;
  g_assert_null(box_tools_resolve_decided(f->prog, "/", NULL, ask, &a));
  g_autofree char *once = g_strdup_printf("read_metadata %s\n", f->prog);
  g_assert_cmpstr(a.asked->str, ==, once);
  /* the file a permitted link leads to refused: not found either */
  g_assert_null(box_tools_resolve_decided(f->link, "/", NULL, ask, &a));
  /* refused and absent alike: NULL, asked about before anything is looked at */
  g_autofree char *absent = g_build_filename(f->dir, "absent", NULL);
  a.refuse = absent;
  g_string_truncate(a.asked, 0);
  g_assert_null(box_tools_resolve_decided(absent, "/", NULL, ask, &a));
  g_autofree char *asked_absent = g_strdup_printf("read_metadata %s\n", absent);
  g_assert_cmpstr(a.asked->str, ==, asked_absent);
  /* a trailing slash names a directory: nothing runs, nothing is asked */
  g_autofree char *slashed = g_strconcat(f->prog, "/", NULL);
  g_string_truncate(a.asked, 0);
  g_assert_null(box_tools_resolve_decided(slashed, "/", NULL, ask, &a));
  g_assert_cmpstr(a.asked->str, ==, "");
  /* /proc's links are boxd's own: never followed, whatever policy says */
  a.refuse = NULL;
  g_assert_null(box_tools_resolve_decided("/proc/self/exe", "/", NULL, ask, &a));
  /* the system tree asks nothing */
  g_string_truncate(a.asked, 0);
  g_autofree char *sh = box_tools_resolve_decided("/bin/sh", "/", NULL, ask, &a);
  g_assert_nonnull(sh);
  g_autofree char *bare_sh = box_tools_resolve_decided("sh", "/", NULL, ask, &a);
  g_assert_nonnull(bare_sh);
  g_assert_cmpstr(a.asked->str, ==, "");
  /* a bare name found on PATH is asked about; refused, it is passed over */
  g_autofree char *search = g_strdup_printf("/nonexistent:%s", f->dir);
  g_autofree char *tool = box_tools_resolve_decided("tool", "/", search, ask, &a);
  g_assert_cmpstr(tool, ==, f->prog);
  g_assert_cmpstr(a.asked->str, ==, once);
  a.refuse = f->prog;
  g_assert_null(box_tools_resolve_decided("tool", "/", search, ask, &a));
  g_string_free(a.asked, TRUE);
}

static void test_spell_home(void)
{
  const struct {
    const char *path, *home, *want;
  } cases[] = {
    { "/home/op", "/home/op", "~" },
    { "/home/op/src/x", "/home/op", "~/src/x" },
    { "/home/op/src/x", "/home/op/", "~/src/x" },
    { "/home/opx/file", "/home/op", "/home/opx/file" },
    { "/usr/bin/git", "/home/op", "/usr/bin/git" },
    { "/etc", "/", "/etc" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *got = box_tools_spell_home(cases[i].path, cases[i].home);
    g_assert_cmpstr(got, ==, cases[i].want);
  }
}

static void test_select(Fixture *f, gconstpointer data)
{
  (void)data;
  char *cmd_plain[] = { f->prog, NULL };
  char *cmd_status[] = { f->prog, "status", NULL };
  char *cmd_other[] = { "/bin/sh", NULL };
  BoxToolTable plain = { .label = "a-plain", .command = cmd_plain };
  BoxToolTable status = { .label = "b-status", .command = cmd_status };
  BoxToolTable other = { .label = "c-other", .command = cmd_other };
  const BoxToolTable *tables[] = { &plain, &status, &other, NULL };
  int fixed = -1;
  char *refusal = NULL;
  char *args_status[] = { "status", "-s", NULL };
  g_assert_true(box_tools_select(tables, NULL, f->prog, args_status, NULL, &fixed, &refusal) ==
                &status);
  g_assert_cmpint(fixed, ==, 1);
  char *args_log[] = { "log", NULL };
  g_assert_true(box_tools_select(tables, NULL, f->prog, args_log, NULL, &fixed, &refusal) ==
                &plain);
  g_assert_cmpint(fixed, ==, 0);

  /* A table names the file but its fixed arguments differ: refused. */
  const BoxToolTable *only_status[] = { &status, NULL };
  char *exec_dir[] = { f->dir, NULL };
  BoxToolTable agent = { .label = "agent", .exec = exec_dir };
  g_assert_null(box_tools_select(only_status, &agent, f->prog, args_log, NULL, &fixed, &refusal));
  g_autofree char *want = g_strdup_printf(
    "no tool runs %s: no `[tool.<name>] command` matches this program and its leading arguments; "
    "it runs under `[tool.b-status]` (status) only with those leading arguments",
    f->prog);
  g_assert_cmpstr(refusal, ==, want);
  g_clear_pointer(&refusal, g_free);

  /* No table names it: the agent's exec entries, less its deny entries. */
  const BoxToolTable *none[] = { &other, NULL };
  g_assert_true(box_tools_select(none, &agent, f->prog, args_log, NULL, &fixed, &refusal) ==
                &agent);
  char *deny[] = { f->prog, NULL };
  agent.deny = deny;
  g_assert_null(box_tools_select(none, &agent, f->prog, args_log, NULL, &fixed, &refusal));
  g_clear_pointer(&refusal, g_free);
  /* A prefix is component-bounded. */
  agent.deny = NULL;
  g_autofree char *sibling = g_strconcat(f->dir, "x", NULL);
  char *exec_sibling[] = { sibling, NULL };
  agent.exec = exec_sibling;
  g_assert_null(box_tools_select(none, &agent, f->prog, args_log, NULL, &fixed, &refusal));
  g_clear_pointer(&refusal, g_free);
}

/* One rule for a table and a bare word: the word a table's command spells
 * is that table's program, resolved on the table's PATH, through links. */
static void test_resolve_by_table(Fixture *f, gconstpointer data)
{
  (void)data;
  char *cmd[] = { "alias-of-tool", NULL };
  GHashTable *env = g_hash_table_new(g_str_hash, g_str_equal);
  g_hash_table_insert(env, "PATH", f->dir);
  BoxToolTable t = { .label = "tool", .command = cmd, .env = env };
  const BoxToolTable *tables[] = { &t, NULL };
  g_autofree char *found = box_tools_resolve_by_table(tables, "alias-of-tool", "/usr/bin:/bin");
  g_assert_cmpstr(found, ==, f->prog);
  g_assert_true(box_tools_runs(tables, NULL, f->prog, "/usr/bin:/bin"));
  /* no table spells it, or a path: not the table's to say */
  g_assert_null(box_tools_resolve_by_table(tables, "tool", "/usr/bin:/bin"));
  g_assert_null(box_tools_resolve_by_table(tables, f->link, "/usr/bin:/bin"));
  g_assert_false(box_tools_runs(tables, NULL, f->plain, "/usr/bin:/bin"));
  g_hash_table_destroy(env);
}

/* A table naming a file of the box's /tmp: its program is that path as
 * written, never the host's file of that name, and a path word names it
 * however the agent spells it from its cwd. */
static void test_box_tmp_table(void)
{
  char *cmd_tmp[] = { "/tmp//box-tools-unit/./a", NULL };
  char *cmd_host[] = { "/bin/sh", NULL };
  BoxToolTable tmp = { .label = "a", .command = cmd_tmp, .box_tmp = true };
  BoxToolTable host = { .label = "sh", .command = cmd_host };
  const BoxToolTable *tables[] = { &host, &tmp, NULL };
  g_autofree char *program = box_tools_table_program(&tmp, "/usr/bin:/bin");
  g_assert_cmpstr(program, ==, "/tmp/box-tools-unit/a");
  g_assert_true(box_tools_runs(tables, NULL, "/tmp/box-tools-unit/a", NULL));
  g_assert_true(box_tools_table_named(tables, "/tmp/box-tools-unit/a", "/") == &tmp);
  g_assert_true(box_tools_table_named(tables, "./a", "/tmp/box-tools-unit") == &tmp);
  g_assert_true(box_tools_table_named(tables, "../box-tools-unit//./a", "/tmp/x") == &tmp);
  g_assert_true(box_tools_table_named(tables, "/bin/sh", "/") == &host);
  /* a bare word is the PATH's, and another file is no table's */
  g_assert_null(box_tools_table_named(tables, "a", "/tmp/box-tools-unit"));
  g_assert_null(box_tools_table_named(tables, "/tmp/box-tools-unit/b", "/"));
  /* "a/" names a directory: no file runs, as the kernel would say */
  g_assert_null(box_tools_table_named(tables, "/tmp/box-tools-unit/a/", "/"));
}

static void test_no_table(void)
{
  g_autofree char *m = box_tools_no_table("awk", "/usr/bin/mawk");
  g_assert_cmpstr(m, ==,
                  "no tool runs /usr/bin/mawk: no `[tool.awk]` table in box.toml runs this "
                  "program; add one with command = [\"awk\"] to run it outside the Shell");
  /* a path is named whole; a name no label can spell leaves the label open */
  g_autofree char *p = box_tools_no_table("./b d", "/w/b d");
  g_assert_cmpstr(p, ==,
                  "no tool runs /w/b d: no `[tool.<name>]` table in box.toml runs this "
                  "program; add one with command = [\"/w/b d\"] to run it outside the Shell");
}

static void test_loader_closure(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *sh = box_tools_resolve("sh", "/", NULL);
  GPtrArray *c = box_tools_loader_closure(sh, &error);
  g_assert_no_error(error);
  g_assert_nonnull(c);
  bool libc = false, loader = false;
  for (guint i = 0; i < c->len; i++) {
    const char *p = g_ptr_array_index(c, i);
    libc |= strstr(p, "/libc.so") != NULL;
    loader |= strstr(p, "ld-linux") != NULL;
  }
  g_assert_true(libc && loader);
  g_ptr_array_free(c, TRUE);
  /* A script yields its interpreter and the interpreter's closure. */
  g_autofree char *dir = g_dir_make_tmp("boxfs-elf-XXXXXX", NULL);
  g_autofree char *script = g_build_filename(dir, "s", NULL);
  g_assert_true(g_file_set_contents(script, "#!/bin/sh\necho\n", -1, NULL));
  c = box_tools_loader_closure(script, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(g_ptr_array_index(c, 0), ==, "/bin/sh");
  g_assert_cmpuint(c->len, >, 2);
  g_ptr_array_free(c, TRUE);
  /* A missing interpreter refuses, naming it. */
  g_assert_true(g_file_set_contents(script, "#!/nonexistent/interp\n", -1, NULL));
  g_assert_null(box_tools_loader_closure(script, &error));
  g_assert_nonnull(strstr(error->message, "/nonexistent/interp"));
  g_unlink(script);
  g_rmdir(dir);
}

static const char *env_get(char **env, const char *name)
{
  size_t n = strlen(name);
  for (char **e = env; *e; e++)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return NULL;
}

static void test_compose_env(void)
{
  BoxToolContext ctx = { .box_dir = "/srv/box", .alias_dir = "/srv/box/bin" };
  box_tools_set_context(&ctx);
  GHashTable *env = g_hash_table_new(g_str_hash, g_str_equal);
  g_hash_table_insert(env, "PATH", "/srv/box/bin:/usr/bin:/bin");
  g_hash_table_insert(env, "LANG", "C.UTF-8");
  BoxToolTable t = { .label = "x", .env = env };
  char **tool = box_tools_compose_env(&t, false, "/home/op", "/opt/bin", "/work");
  g_assert_cmpstr(env_get(tool, "PATH"), ==, "/usr/bin:/bin");
  g_assert_cmpstr(env_get(tool, "HOME"), ==, "/home/op");
  g_assert_cmpstr(env_get(tool, "USER"), ==, "strands-box");
  g_assert_cmpstr(env_get(tool, "PWD"), ==, "/work");
  g_assert_cmpstr(env_get(tool, "LANG"), ==, "C.UTF-8");
  g_assert_null(env_get(tool, "HTTPS_PROXY"));
  g_assert_cmpuint(g_strv_length(tool), ==, 5);
  char **agent = box_tools_compose_env(&t, true, "/home/op", "/opt/bin", "/work");
  g_assert_cmpstr(env_get(agent, "PATH"), ==, "/srv/box/bin:/usr/bin:/bin");
  /* The gateway's variables appear once it is set. */
  box_tools_set_gateway("http://127.0.0.1:4000", "/srv/box/trust/cert.pem", NULL, NULL);
  char **gw = box_tools_compose_env(&t, false, "/home/op", NULL, "/work");
  g_assert_cmpstr(env_get(gw, "HTTPS_PROXY"), ==, "http://127.0.0.1:4000");
  g_assert_cmpstr(env_get(gw, "GIT_SSL_CAINFO"), ==, "/srv/box/trust/cert.pem");
  g_assert_cmpstr(env_get(gw, "NO_PROXY"), ==, "127.0.0.1,localhost");
  box_tools_set_gateway(NULL, NULL, NULL, NULL);
  /* Egress phantoms come first: the table's own env overrides them, and
   * nothing the box owns can be claimed by one. */
  const char *const phantoms[] = { "API_TOKEN=strands_box_00ff", "LANG=phantom-lang", NULL };
  box_tools_set_phantoms(phantoms);
  char **ph = box_tools_compose_env(&t, false, "/home/op", NULL, "/work");
  g_assert_cmpstr(env_get(ph, "API_TOKEN"), ==, "strands_box_00ff");
  g_assert_cmpstr(env_get(ph, "LANG"), ==, "C.UTF-8");
  char **ph_agent = box_tools_compose_env(&t, true, "/home/op", NULL, "/work");
  g_assert_cmpstr(env_get(ph_agent, "API_TOKEN"), ==, "strands_box_00ff");
  box_tools_set_phantoms(NULL);
  char **none = box_tools_compose_env(&t, false, "/home/op", NULL, "/work");
  g_assert_null(env_get(none, "API_TOKEN"));
  g_strfreev(ph);
  g_strfreev(ph_agent);
  g_strfreev(none);
  g_strfreev(tool);
  g_strfreev(agent);
  g_strfreev(gw);
  g_hash_table_destroy(env);
}

/* A tool's PATH loses the alias directory however it is spelled. */
static void test_compose_env_alias_spellings(void)
{
  g_autofree char *dir = g_dir_make_tmp("tools-alias-XXXXXX", NULL);
  g_assert_nonnull(dir);
  g_autofree char *bin = g_build_filename(dir, "bin", NULL);
  g_autofree char *link = g_build_filename(dir, "link", NULL);
  g_assert_cmpint(g_mkdir(bin, 0755), ==, 0);
  g_assert_cmpint(symlink(bin, link), ==, 0);
  BoxToolContext ctx = { .box_dir = dir, .alias_dir = bin };
  box_tools_set_context(&ctx);
  g_autofree char *declared =
    g_strdup_printf("%s:/usr/bin:%s/:%s/./bin:%s:/bin", bin, bin, dir, link);
  GHashTable *env = g_hash_table_new(g_str_hash, g_str_equal);
  g_hash_table_insert(env, "PATH", declared);
  BoxToolTable t = { .label = "x", .env = env };
  char **tool = box_tools_compose_env(&t, false, "/home/op", NULL, "/work");
  g_assert_cmpstr(env_get(tool, "PATH"), ==, "/usr/bin:/bin");
  g_strfreev(tool);
  g_hash_table_destroy(env);
  unlink(link);
  rmdir(bin);
  rmdir(dir);
  BoxToolContext none = { 0 };
  box_tools_set_context(&none);
}

/* A kernel refusal's name and, when an argument rule refused it, its
 * arguments (spec/runtime.md §8.4). */
static void test_seccomp_describe(void)
{
  const guint32 arch = SCMP_ARCH_NATIVE;
  struct {
    const char *call;
    guint64 args[6];
    const char *name, *arguments;
  } cases[] = {
    { "socket",
      { AF_PACKET, SOCK_RAW | SOCK_CLOEXEC },
      "socket",
      "family=AF_PACKET type=SOCK_RAW" },
    { "socketpair", { 77, SOCK_STREAM }, "socketpair", "family=77 type=SOCK_STREAM" },
    { "clone",
      { CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD },
      "clone",
      "flags=CLONE_NEWUSER|CLONE_NEWNET" },
    { "ioctl", { 0, TIOCSTI }, "ioctl", "request=TIOCSTI" },
    { "bpf", { 0 }, "bpf", NULL },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *arguments = NULL;
    char *name = box_seccomp_describe(arch, seccomp_syscall_resolve_name(cases[i].call),
                                      cases[i].args, &arguments);
    g_assert_cmpstr(name, ==, cases[i].name);
    g_assert_cmpstr(arguments, ==, cases[i].arguments);
    g_free(name);
    g_free(arguments);
  }
  char *arguments = NULL;
  char *name = box_seccomp_describe(arch, 4000, (guint64[6]){ 0 }, &arguments);
  g_assert_cmpstr(name, ==, "syscall_4000");
  g_assert_null(arguments);
  g_free(name);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/tools/seccomp-describe", test_seccomp_describe);
  g_test_add("/tools/resolve", Fixture, NULL, fixture_setup, test_resolve, fixture_teardown);
  g_test_add("/tools/resolve-decided", Fixture, NULL, fixture_setup, test_resolve_decided,
             fixture_teardown);
  g_test_add_func("/tools/spell-home", test_spell_home);
  g_test_add("/tools/select", Fixture, NULL, fixture_setup, test_select, fixture_teardown);
  g_test_add("/tools/resolve-by-table", Fixture, NULL, fixture_setup, test_resolve_by_table,
             fixture_teardown);
  g_test_add_func("/tools/no-table", test_no_table);
  g_test_add_func("/tools/box-tmp-table", test_box_tmp_table);
  g_test_add_func("/tools/loader-closure", test_loader_closure);
  g_test_add_func("/tools/compose-env", test_compose_env);
  g_test_add_func("/tools/compose-env-alias-spellings", test_compose_env_alias_spellings);
  return g_test_run();
}
