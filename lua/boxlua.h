/* lua/boxlua.h — public interface of the Lua 5.4 embedding (libboxlua). */
#ifndef BOX_LUA_H
#define BOX_LUA_H

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* BOX_LUA_H */
