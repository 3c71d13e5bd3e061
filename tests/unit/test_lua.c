/* tests/unit/test_lua.c — the `lua` command (lua/boxlua.h): each case runs
 * box_lua_main in a forked child with stdin/stdout/stderr on pipes. */
#include "lua/boxlua.h"

#include <glib.h>
#include <glib/gstdio.h>

#include <errno.h>
#include <fcntl.h>
#include <lua.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/test_util.h"

typedef struct {
  int status; /* exit status, or 128+signal */
  char *out;
  char *err;
} run_t;

static void run_clear(run_t *r)
{
  g_free(r->out);
  g_free(r->err);
}

/* The host run_lua_env hands to the interpreter (NULL: none, i.e.
 * box_lua_main's stock behaviour). */
static const BoxLuaHost *use_host;

/* Run `lua ARGS...` (args NULL-terminated, argv[0] added) with `in` as
 * stdin (NULL: empty) and `init` as LUA_INIT (NULL: unset). */
static run_t run_lua_env(const char *in, const char *init, const char *const *args)
{
  int pin[2], pout[2], perr[2];
  g_assert_cmpint(pipe(pin), ==, 0);
  g_assert_cmpint(pipe(pout), ==, 0);
  g_assert_cmpint(pipe(perr), ==, 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    const int ends[] = { pin[0], pin[1], pout[0], pout[1], perr[0], perr[1] };
    test_child_stdio(pin[0], pout[1], perr[1], ends, G_N_ELEMENTS(ends));
    g_unsetenv("LUA_INIT_5_4");
    if (init)
      g_setenv("LUA_INIT", init, TRUE);
    else
      g_unsetenv("LUA_INIT");
    GPtrArray *av = g_ptr_array_new();
    g_ptr_array_add(av, (gpointer) "lua");
    for (size_t i = 0; args[i]; i++) g_ptr_array_add(av, (gpointer)args[i]);
    int argc = (int)av->len;
    g_ptr_array_add(av, NULL);
    int st = box_lua_main_host(argc, (char **)av->pdata, use_host);
    fflush(stdout);
    fflush(stderr);
    _exit(st);
  }
  close(pin[0]);
  close(pout[1]);
  close(perr[1]);
  signal(SIGPIPE, SIG_IGN);

  GString *out = g_string_new(NULL), *err = g_string_new(NULL);
  size_t in_len = in ? strlen(in) : 0, in_off = 0;
  int win = pin[1];
  if (in_len == 0) {
    close(win);
    win = -1;
  }
  int rout = pout[0], rerr = perr[0];
  while (rout >= 0 || rerr >= 0 || win >= 0) {
    /* poll passes over a negative fd, so an end once closed keeps its slot */
    struct pollfd fds[3] = { { .fd = win, .events = POLLOUT },
                             { .fd = rout, .events = POLLIN },
                             { .fd = rerr, .events = POLLIN } };
    int pr = poll(fds, G_N_ELEMENTS(fds), 20000);
    g_assert_cmpint(pr, >, 0);
    if (fds[0].revents) {
      ssize_t w = write(win, in + in_off, in_len - in_off);
      if (w > 0) in_off += (size_t)w;
      if (w <= 0 || in_off == in_len) {
        close(win);
        win = -1;
      }
    }
    int *fdp[2] = { &rout, &rerr };
    GString *dst[2] = { out, err };
    for (int k = 0; k < 2; k++) {
      if (!fds[k + 1].revents) continue;
      char buf[4096];
      ssize_t n = read(*fdp[k], buf, sizeof buf);
      if (n > 0)
        g_string_append_len(dst[k], buf, n);
      else if (n == 0 || errno != EINTR) {
        close(*fdp[k]);
        *fdp[k] = -1;
      }
    }
  }
  int ws = 0;
  g_assert_cmpint(waitpid(pid, &ws, 0), ==, pid);
  run_t r;
  r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  r.out = g_string_free(out, FALSE);
  r.err = g_string_free(err, FALSE);
  return r;
}

#define RUN(in, ...) run_lua_env((in), NULL, (const char *const[]){ __VA_ARGS__, NULL })

static void expect(run_t r, int status, const char *out, const char *err)
{
  if (r.status != status || g_strcmp0(r.out, out) != 0 || (err && g_strcmp0(r.err, err) != 0))
    g_error("expected status %d out [%s] err [%s]; got status %d out [%s] err [%s]", status, out,
            err ? err : "*", r.status, r.out, r.err);
  run_clear(&r);
}

/* ------------------------------------------------------------------ cases */

static void test_e_print(void)
{
  expect(RUN(NULL, "-e", "print(1 + 1)"), 0, "2\n", "");
  /* several -e run in order; -eSTAT form; print formatting is Lua's own */
  expect(RUN(NULL, "-e", "x = 10", "-eprint(x / 4, x // 4, 2^10)", "-e", "io.write('a', 1, '\\n')"),
         0, "2.5\t2\t1024.0\na1\n", "");
  /* -e does not read stdin */
  expect(RUN("print('from stdin')", "-e", "print('only')"), 0, "only\n", "");
}

static void test_version(void)
{
  run_t r = RUN(NULL, "-v");
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==, LUA_COPYRIGHT "\n");
  g_assert_true(g_str_has_prefix(r.out, "Lua 5.4."));
  g_assert_nonnull(strstr(r.out, "  Copyright (C) 1994-"));
  g_assert_true(g_str_has_suffix(r.out, " Lua.org, PUC-Rio\n"));
  run_clear(&r);
  /* -v with -e: banner first, then the statement */
  expect(RUN(NULL, "-v", "-e", "print(_VERSION)"), 0, LUA_COPYRIGHT "\nLua 5.4\n", "");
}

static void test_arg_table(void)
{
  char *dir = g_dir_make_tmp("boxlua-XXXXXX", NULL);
  g_assert_nonnull(dir);
  char *script = g_build_filename(dir, "args.lua", NULL);
  g_assert_true(g_file_set_contents(script,
                                    "local t = {}\n"
                                    "for i = -3, #arg do t[#t + 1] = tostring(arg[i]) end\n"
                                    "print(table.concat(t, ' '))\n"
                                    "print(select('#', ...), ...)\n",
                                    -1, NULL));
  char *want = g_strdup_printf("lua -e x=1 %s a b c\n3\ta\tb\tc\n", script);
  expect(RUN(NULL, "-e", "x=1", script, "a", "b", "c"), 0, want, "");
  g_free(want);
  /* "--" ends the options; it shows up at a negative index */
  want = g_strdup_printf("nil lua -- %s -e\n1\t-e\n", script);
  expect(RUN(NULL, "--", script, "-e"), 0, want, "");
  g_free(want);
  /* no script: arg[0] is the program, the options are positive */
  expect(RUN(NULL, "-e", "print(arg[0], arg[1], arg[2], arg[-1], #arg)"), 0,
         "lua\t-e\tprint(arg[0], arg[1], arg[2], arg[-1], #arg)\tnil\t2\n", "");
  g_unlink(script);
  g_rmdir(dir);
  g_free(script);
  g_free(dir);
}

static void test_string_pack(void)
{
  expect(RUN(NULL, "-e",
             "local s = string.pack('<i4 >I2 z', -2, 258, 'hi')\n"
             "print(#s, string.unpack('<i4 >I2 z', s))\n"
             "print(string.packsize('i8 d'), ('%q'):format(string.pack('B', 7)))"),
         0, "9\t-2\t258\thi\t10\n16\t\"\\7\"\n", "");
}

static void test_coroutines(void)
{
  expect(
    RUN(NULL, "-e",
        "local gen = coroutine.wrap(function(n) for i = 1, n do coroutine.yield(i * i) end end)\n"
        "print(gen(3), gen(), gen())\n"
        "local co = coroutine.create(function(a) local b = coroutine.yield(a + 1); error('x' .. b, "
        "0) end)\n"
        "print(coroutine.resume(co, 1))\n"
        "print(coroutine.resume(co, 7))\n"
        "print(coroutine.status(co), coroutine.isyieldable())"),
    0, "1\t4\t9\ntrue\t2\nfalse\tx7\ndead\tfalse\n", "");
}

static void test_utf8(void)
{
  expect(
    RUN(NULL, "-e",
        "local s = utf8.char(72, 228, 8364, 128512)\n"
        "print(s, #s, utf8.len(s), utf8.codepoint(s, 2), utf8.offset(s, 3))\n"
        "for p, c in utf8.codes('h\\u{e9}') do io.write(p, ':', c, ' ') end print()\n"
        "print(utf8.len('\\xff'))\n"
        "print(#utf8.charpattern, ('\\u{7FF}'):byte(1, -1))"),
    0, "H\xc3\xa4\xe2\x82\xac\xf0\x9f\x98\x80\t10\t4\t228\t4\n1:104 2:233 \nnil\t1\n14\t223\t191\n",
    "");
}

static void test_errors(void)
{
  run_t r = RUN(NULL, "-e", "print('before')", "-e", "error('boom')", "-e", "print('after')");
  g_assert_cmpint(r.status, ==, 1);
  g_assert_cmpstr(r.out, ==, "before\n");
  g_assert_true(g_str_has_prefix(
    r.err, "lua: (command line):1: boom\nstack traceback:\n\t[C]: in function 'error'\n"));
  g_assert_true(g_str_has_suffix(r.err, "\t[C]: in ?\n"));
  run_clear(&r);

  /* a syntax error has no traceback */
  expect(RUN(NULL, "-e", "x ="), 1, "", "lua: (command line):1: unexpected symbol near <eof>\n");

  /* non-string error values */
  r = RUN(NULL, "-e", "error({})");
  g_assert_cmpint(r.status, ==, 1);
  g_assert_true(g_str_has_prefix(r.err, "lua: (error object is a table value)\n"));
  run_clear(&r);
  r = RUN(NULL, "-e", "error(setmetatable({}, {__tostring = function() return 'custom' end}))");
  g_assert_cmpint(r.status, ==, 1);
  g_assert_cmpstr(r.err, ==, "lua: custom\n");
  run_clear(&r);

  /* missing script */
  expect(RUN(NULL, "/nonexistent/x.lua"), 1, "",
         "lua: cannot open /nonexistent/x.lua: No such file or directory\n");

  /* usage errors */
  r = RUN(NULL, "-x");
  g_assert_cmpint(r.status, ==, 1);
  g_assert_true(g_str_has_prefix(
    r.err, "lua: unrecognized option '-x'\nusage: lua [options] [script [args]]\n"));
  run_clear(&r);
  r = RUN(NULL, "-e");
  g_assert_cmpint(r.status, ==, 1);
  g_assert_true(g_str_has_prefix(r.err, "lua: '-e' needs argument\nusage: "));
  run_clear(&r);
  r = RUN(NULL, "-vx");
  g_assert_true(g_str_has_prefix(r.err, "lua: unrecognized option '-vx'\n"));
  g_assert_cmpstr(r.out, ==, "");
  run_clear(&r);
}

static void test_os_exit(void)
{
  /* buffered output is flushed before the process ends */
  expect(RUN(NULL, "-e",
             "io.write('partial'); io.stdout:setvbuf('full'); io.write(' more'); os.exit(3)", "-e",
             "print('never')"),
         3, "partial more", "");
  expect(RUN(NULL, "-e", "os.exit(false)"), 1, "", "");
  expect(RUN(NULL, "-e", "os.exit(true, true)"), 0, "", "");
  expect(RUN(NULL, "-e", "os.exit()"), 0, "", "");
}

static void test_no_c_loading(void)
{
  expect(RUN(NULL, "-e",
             "print(package.loadlib, #package.searchers, package.searchers[3])\n"
             "print(type(package.searchers[1]), type(package.searchers[2]))"),
         0, "nil\t2\tnil\nfunction\tfunction\n", "");
  run_t r = RUN(NULL, "-e", "package.path = '/nonexistent/?.lua'; require('nosuchmod')");
  g_assert_cmpint(r.status, ==, 1);
  g_assert_true(g_str_has_prefix(r.err, "lua: (command line):1: module 'nosuchmod' not found:\n"));
  g_assert_nonnull(strstr(r.err, "no field package.preload['nosuchmod']"));
  g_assert_nonnull(strstr(r.err, "no file '/nonexistent/nosuchmod.lua'"));
  g_assert_null(strstr(r.err, ".so'"));
  run_clear(&r);
}

static void test_interactive_refused(void)
{
  expect(RUN("print('x')", "-i"), 1, "", "lua: interactive mode is not available in the box\n");
  expect(RUN(NULL, "-e", "print(1)", "-i"), 1, "",
         "lua: interactive mode is not available in the box\n");
  /* after the script name, -i is only an argument */
  expect(RUN("print(arg[1])", "-", "-i"), 0, "-i\n", "");
}

static void test_script_file(void)
{
  char *dir = g_dir_make_tmp("boxlua-XXXXXX", NULL);
  g_assert_nonnull(dir);
  char *mod = g_build_filename(dir, "mymod.lua", NULL);
  char *script = g_build_filename(dir, "main.lua", NULL);
  g_assert_true(
    g_file_set_contents(mod, "return { greet = function(n) return 'hi ' .. n end }\n", -1, NULL));
  g_assert_true(g_file_set_contents(script,
                                    "#!/usr/bin/env lua\n"
                                    "local m = require('mymod')\n"
                                    "print(m.greet(arg[1]))\n"
                                    "local f = assert(io.open(arg[0]))\n"
                                    "print(f:read('l'))\n"
                                    "f:close()\n"
                                    "if arg[2] then error('bad ' .. arg[2]) end\n",
                                    -1, NULL));
  char *pathcode = g_strdup_printf("package.path = '%s/?.lua'", dir);

  expect(RUN(NULL, "-e", pathcode, script, "you"), 0, "hi you\n#!/usr/bin/env lua\n", "");

  /* runtime error in a file: chunk name is the path */
  run_t r = RUN(NULL, "-e", pathcode, script, "you", "arg");
  g_assert_cmpint(r.status, ==, 1);
  char *want = g_strdup_printf("lua: %s:7: bad arg\nstack traceback:\n", script);
  g_assert_true(g_str_has_prefix(r.err, want));
  g_free(want);
  run_clear(&r);

  /* -l MOD and -l G=MOD load pure-Lua modules from package.path */
  expect(RUN(NULL, "-e", pathcode, "-l", "mymod", "-lm=mymod", "-e",
             "print(mymod.greet('a'), m.greet('b'))"),
         0, "hi a\thi b\n", "");

  /* LUA_INIT runs first, and -E suppresses it */
  expect(
    run_lua_env(NULL, "print('init', #arg)", (const char *const[]){ "-e", "print('main')", NULL }),
    0, "init\t2\nmain\n", "");
  expect(
    run_lua_env(NULL, "print('init')", (const char *const[]){ "-E", "-e", "print('main')", NULL }),
    0, "main\n", "");

  g_unlink(mod);
  g_unlink(script);
  g_rmdir(dir);
  g_free(pathcode);
  g_free(mod);
  g_free(script);
  g_free(dir);
}

static void test_stdin_script(void)
{
  /* no script and no -e: the program is stdin */
  expect(RUN("print('hello from stdin')\nprint(arg[0], #arg)\n", "-W"), 0,
         "hello from stdin\nlua\t1\n", "");
  /* "-" reads stdin, with script arguments */
  expect(RUN("print(arg[0], arg[-1], ...)", "-e", "y=2", "-", "p", "q"), 0, "-\ty=2\tp\tq\n", "");
  /* stdin chunk name */
  run_t r = RUN("local x = nil\nx.y = 1\n", "-");
  g_assert_cmpint(r.status, ==, 1);
  g_assert_true(
    g_str_has_prefix(r.err, "lua: stdin:2: attempt to index a nil value (local 'x')\n"));
  run_clear(&r);
  /* the rest of stdin stays readable by the script */
  expect(RUN("print(io.read('n') + 1)", "-e", "print(io.read('a'))"), 0,
         "print(io.read('n') + 1)\n", "");
  /* empty stdin is an empty program */
  expect(RUN(NULL, "-W"), 0, "", "");
}

/* A real host: the text runs in /bin/sh (what the Shell is to the box). */
static int sh_run(void *data, const char *text)
{
  (void)data;
  execl("/bin/sh", "sh", "-c", text, (char *)NULL);
  return 127;
}

static void sh_log(void *data, const char *line)
{
  (void)data;
  fprintf(stderr, "LOG[%s]\n", line);
}

static void test_host_routes(void)
{
  BoxLuaHost host = { sh_run, NULL, sh_log, NULL };
  use_host = &host;
  /* what real Lua returns for each way a child ends */
  expect(
    RUN(NULL, "-e",
        "print(os.execute()) print(os.execute('exit 3')) print(os.execute('kill -9 $$'))\n"
        "local f = io.popen('echo a; echo b') print(f:read('l'), f:read('a')) print(f:close())\n"
        "f = io.popen('cat; exit 5', 'w') f:write('via w\\n') print(f:close())\n"
        "print(pcall(io.popen, 'x', 'rw'))"),
    0,
    "true\nnil\texit\t3\nnil\tsignal\t9\na\tb\n\ntrue\texit\t0\nvia w\nnil\texit\t5\n"
    "false\tbad argument #2 to 'io.popen' (invalid mode)\n",
    "");
  /* a second popen's child does not hold the first one's pipe (else the
     * first `cat` would never end); print flushes, w's data waits for close */
  expect(RUN(NULL, "-e",
             "local w = io.popen('cat', 'w') local r = io.popen('echo r') w:write('w\\n')\n"
             "print(r:read('a'), r:close()) print(w:close())"),
         0, "r\n\ttrue\texit\t0\nw\ntrue\texit\t0\n", "");
  /* box.run, box.log, box.decide without a decision point */
  expect(RUN(NULL, "-e",
             "print(box.run('echo o; echo e >&2; cat; exit 2', {stdin = 'i'}))\n"
             "box.log('x', 2) print(pcall(box.decide, 'fs:read', {}))\n"
             "print(pcall(box.run, 'true', {stdin = {}}))"),
         0,
         "2\to\ni\te\n\nfalse\tbox.decide: this box takes no decisions from Lua\n"
         "false\tbox.run: 'stdin' must be a string\n",
         "LOG[x\t2]\n");
  use_host = NULL;
  /* no host: stock popen, no box module */
  expect(RUN(NULL, "-e", "print(box, io.popen('echo stock'):read('a'))"), 0, "nil\tstock\n\n", "");
}

int main(int argc, char **argv)
{
  static const TestCase cases[] = { { "/lua/e-print", test_e_print },
                                    { "/lua/version", test_version },
                                    { "/lua/arg-table", test_arg_table },
                                    { "/lua/string-pack", test_string_pack },
                                    { "/lua/coroutines", test_coroutines },
                                    { "/lua/utf8", test_utf8 },
                                    { "/lua/errors", test_errors },
                                    { "/lua/os-exit", test_os_exit },
                                    { "/lua/no-c-loading", test_no_c_loading },
                                    { "/lua/interactive-refused", test_interactive_refused },
                                    { "/lua/script-file", test_script_file },
                                    { "/lua/stdin-script", test_stdin_script },
                                    { "/lua/host-routes", test_host_routes } };
  return test_run_table(&argc, &argv, cases, G_N_ELEMENTS(cases));
}
