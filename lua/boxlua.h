/* lua/boxlua.h — public interface of the Lua 5.4 embedding (libboxlua). */
#ifndef BOX_LUA_H
#define BOX_LUA_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lua_State lua_State;

/* The `lua` command. Behaves like the stock `lua` 5.4 command line:
 *   lua [-e STAT]... [-l [G=]MOD]... [-v] [-E] [-W] [--] [SCRIPT|- [ARGS...]]
 * with these box differences:
 *   - `-i` is refused ("lua: interactive mode is not available in the box",
 *     status 1) and there is never a REPL: with no script, no -e and no -v
 *     the program is read from stdin, terminal or not;
 *   - `package.loadlib` is removed and package.searchers keeps only the
 *     preload and Lua-file searchers (no C modules).
 * `arg` is built exactly as stock lua builds it. Errors print
 * "lua: <message>" plus a stack traceback on stderr. Output goes through
 * the process's C stdio (stdout/stderr), flushed before returning.
 * Returns the exit status (0 or 1); `os.exit(n)` exits the process with n
 * after flushing the C stdio buffers. argv[0] is the program name. */
int box_lua_main(int argc, char **argv);

/* What the embedding offers Lua beyond the stock libraries.  With a host:
 *   - io.popen(cmd [, 'r'|'w']) and os.execute([cmd]) run cmd through
 *     host->shell_run in a forked child (stdout, resp. stdin, on a pipe;
 *     the other descriptors inherited) and return exactly what real Lua
 *     returns for the child's status (true|nil, "exit"|"signal", code);
 *   - a `box` module (global `box`, also package.loaded.box):
 *       box.run(cmd [, {stdin = STRING}]) -> status, stdout, stderr
 *           (cmd through host->shell_run in a child, stdin /dev/null unless
 *           given, stdout and stderr captured whole);
 *       box.decide(action, input_table) -> permitted, message
 *           (a dry run through host->decide; an error when it is NULL);
 *       box.log(...) -> nothing (tostring'd arguments, tab-separated, as
 *           one line through host->log, else on stderr as "box: LINE").
 * Without a host (box_lua_main) io.popen/os.execute are the stock ones and
 * there is no `box` module. */
typedef struct {
  /* Runs text through the Shell's decision point on fds 0, 1, 2 of the
   * calling process, which is a child forked for this purpose and ends
   * right after with the returned status (0..255). */
  int (*shell_run)(void *data, const char *text);
  /* Dry-run decision of action on input (a JSON object's text).  Returns
   * true when permitted; *message (malloc'd) gets the policy's text. */
  bool (*decide)(void *data, const char *action, const char *input_json, char **message);
  /* One line for the box's log; NULL: stderr. */
  void (*log)(void *data, const char *line);
  void *data;
} BoxLuaHost;

/* box_lua_main with a host (NULL = box_lua_main). */
int box_lua_main_host(int argc, char **argv, const BoxLuaHost *host);

/* Installs io.popen, os.execute and the `box` module of host into an open
 * state (the standard libraries already loaded). */
void box_lua_install_host(lua_State *L, const BoxLuaHost *host);

#ifdef __cplusplus
}
#endif

#endif /* BOX_LUA_H */
