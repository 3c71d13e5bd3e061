/* test_cmdtable.c — the Shell's commands as the `box` binary links them.
 *
 * This program links every object of `box` but main.c, the CLI verbs
 * beside the Shell's library, in the order `box` does.  A CLI function
 * that took the name of one of the Shell's commands would win the link,
 * and the Shell's table would call it with a BoxCmd: here that shows as
 * a command that no longer does its job.  Both headers are included, so
 * such a name does not even compile (conflicting types). */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "box/box-private.h"
#include "shell/shell-private.h"
#include "shell/shell.h"
#include "tests/unit/test_util.h"

static char *tmpdir;

static bool allow_exec(void *data, const BoxShellCommand *cmd, char **message)
{
  (void)data, (void)cmd, (void)message;
  return true;
}

static BoxSpawnResult no_program(void *data, const BoxShellCommand *cmd, int fd_out, int fd_err)
{
  (void)data, (void)cmd, (void)fd_out, (void)fd_err;
  return (BoxSpawnResult){ BOX_SPAWN_NOT_FOUND, 127, NULL };
}

static char *no_denial(void *data)
{
  (void)data;
  return NULL;
}

/* Runs src in a forked child (the Shell runs on fds 0, 1, 2); its stdout
 * and stderr land in *out and *err.  Returns its status, 1000+signal when
 * killed. */
static int run(const char *src, char **out, char **err)
{
  g_autofree char *out_path = g_build_filename(tmpdir, "out", NULL);
  g_autofree char *err_path = g_build_filename(tmpdir, "err", NULL);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(99);
    BoxShellHost host = { .decide_exec = allow_exec,
                          .spawn = no_program,
                          .last_denial = no_denial };
    BoxShellEnv env = { tmpdir, tmpdir, "/usr/bin:/bin", "strands-box", false };
    _exit(box_shell_run(src, &env, &host));
  }
  int ws;
  g_assert_cmpint(waitpid(pid, &ws, 0), ==, pid);
  g_assert_true(g_file_get_contents(out_path, out, NULL, NULL));
  g_assert_true(g_file_get_contents(err_path, err, NULL, NULL));
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 1000 + WTERMSIG(ws);
}

/* `lua` is the Shell's Lua, not `box lua` (box/cmd_lua.c), which once had
 * the same C name. */
static void test_lua_is_the_shells(void)
{
  g_autofree char *out = NULL, *err = NULL;
  int status = run("lua -e 'print(1)'", &out, &err);
  g_assert_cmpint(status, ==, 0);
  g_assert_cmpstr(err, ==, "");
  g_assert_cmpstr(out, ==, "1\n");
}

/* Each row of commands.def is found under its name, with its function and
 * kind; `type`'s special builtins are POSIX's (and bash's `source`). */
static void test_rows(void)
{
  static const struct {
    const char *name;
    BoxCmdFn fn;
    BoxCmdKind kind;
  } rows[] = {
#define BOX_COMMAND(name, fn, kind) { name, fn, BOX_CMD_##kind },
#include "shell/commands/commands.def"
#undef BOX_COMMAND
  };
  static const char *const special[] = { ".",        ":",      "break", "continue",
                                         "eval",     "exec",   "exit",  "export",
                                         "readonly", "return", "set",   "shift",
                                         "source",   "times",  "trap",  "unset" };
  guint nspecial = 0;
  for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
    const BoxCommandDef *d = box_command_lookup(rows[i].name);
    g_assert_nonnull(d);
    g_assert_cmpstr(d->name, ==, rows[i].name);
    g_assert_true(d->fn == rows[i].fn);
    g_assert_cmpint(d->kind, ==, rows[i].kind);
    g_assert_cmpint(box_is_special_builtin(rows[i].name), ==, rows[i].kind == BOX_CMD_SPECIAL);
    g_assert_cmpint(box_is_builtin(rows[i].name), ==, rows[i].kind != BOX_CMD_UTILITY);
    if (i > 0) g_assert_cmpint(strcmp(rows[i - 1].name, rows[i].name), <, 0);
    nspecial += rows[i].kind == BOX_CMD_SPECIAL;
  }
  g_assert_cmpuint(nspecial, ==, G_N_ELEMENTS(special));
  for (guint i = 0; i < G_N_ELEMENTS(special); i++)
    g_assert_true(box_is_special_builtin(special[i]));
  g_assert_null(box_command_lookup("perl"));
  g_assert_false(box_is_builtin("cat"));
  g_assert_true(box_is_builtin("["));
}

/* break and continue, through one function. */
static void test_break_continue(void)
{
  g_autofree char *out = NULL, *err = NULL;
  int status =
    run("for i in 1 2 3; do for j in a b; do [ $j = b ] && continue 2; echo $i$j; done; done;"
        " for k in x y; do echo $k; break; done; break 0; echo $?; continue; echo $?",
        &out, &err);
  g_assert_cmpint(status, ==, 0);
  /* outside a loop bash looks at no count: break 0 is only "meaningless" */
  g_assert_cmpstr(out, ==, "1a\n2a\n3a\nx\n0\n0\n");
  g_assert_cmpstr(
    err, ==,
    "strands-shell: break: only meaningful in a `for', `while', or `until' loop\n"
    "strands-shell: continue: only meaningful in a `for', `while', or `until' loop\n");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp("cmdtable-XXXXXX", NULL);
  g_assert_nonnull(tmpdir);
  static const TestCase cases[] = { { "/cmdtable/lua-is-the-shells", test_lua_is_the_shells },
                                    { "/cmdtable/rows", test_rows },
                                    { "/cmdtable/break-continue", test_break_continue } };
  test_add_table(cases, G_N_ELEMENTS(cases));
  int r = g_test_run();
  g_autofree char *out = g_build_filename(tmpdir, "out", NULL);
  g_autofree char *err = g_build_filename(tmpdir, "err", NULL);
  g_unlink(out);
  g_unlink(err);
  g_rmdir(tmpdir);
  g_free(tmpdir);
  return r;
}
