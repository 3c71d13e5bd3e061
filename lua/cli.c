/* lua/cli.c — the `lua` command on an embedded Lua 5.4 state.
 *
 * Follows the stock interpreter's observable behaviour (option handling,
 * the `arg` table, LUA_INIT, error reports with tracebacks, exit statuses)
 * without a REPL, and without any way to load C code. */
#include "lua/boxlua.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGNAME "lua"

enum {
  OPT_E_STAT = 1 << 0, /* -e */
  OPT_I = 1 << 1,      /* -i */
  OPT_V = 1 << 2,      /* -v */
  OPT_NOENV = 1 << 3,  /* -E */
  OPT_BAD = 1 << 4,    /* bad option; `first` is its index */
};

typedef struct {
  int argc;
  char **argv;
  int opts;
  int first;              /* index of the first non-option argument (script), argc if none */
  int ok;                 /* set by run_main when everything succeeded */
  const BoxLuaHost *host; /* NULL: stock io.popen/os.execute, no `box` */
} cli_t;

/* Print "lua: msg" on stderr. */
static void err_message(const char *msg)
{
  fprintf(stderr, "%s: %s\n", PROGNAME, msg);
  fflush(stderr);
}

static void print_usage(const char *bad)
{
  if (bad[1] == 'e' || bad[1] == 'l')
    fprintf(stderr, "%s: '%s' needs argument\n", PROGNAME, bad);
  else
    fprintf(stderr, "%s: unrecognized option '%s'\n", PROGNAME, bad);
  fprintf(stderr,
          "usage: %s [options] [script [args]]\n"
          "Available options are:\n"
          "  -e stat   execute string 'stat'\n"
          "  -i        enter interactive mode after executing 'script'\n"
          "  -l mod    require library 'mod' into global 'mod'\n"
          "  -l g=mod  require library 'mod' into global 'g'\n"
          "  -v        show version information\n"
          "  -E        ignore environment variables\n"
          "  -W        turn warnings on\n"
          "  --        stop handling options\n"
          "  -         stop handling options and execute stdin\n",
          PROGNAME);
  fflush(stderr);
}

static void print_version(void)
{
  fputs(LUA_COPYRIGHT "\n", stdout);
  fflush(stdout);
}

/* Scan the options. Stops at the first argument that is not an option
 * ("-" counts as the script name; "--" ends the options). */
static void scan_options(cli_t *c)
{
  int i;
  c->opts = 0;
  for (i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    c->first = i;
    if (a[0] != '-') return;
    char opt = a[1];
    if (opt == '\0') return; /* "-": stdin script */
    if (opt == '-') {
      if (a[2] != '\0') {
        c->opts |= OPT_BAD;
        return;
      }
      c->first = i + 1;
      return;
    }
    if (opt == 'e' || opt == 'l') {
      if (opt == 'e') c->opts |= OPT_E_STAT;
      if (a[2] == '\0') {
        i++;
        if (i >= c->argc || c->argv[i][0] == '-') {
          c->first = i - 1;
          c->opts |= OPT_BAD;
          return;
        }
      }
      continue;
    }
    if (opt != 'E' && opt != 'W' && opt != 'i' && opt != 'v') {
      c->opts |= OPT_BAD;
      return;
    }
    if (a[2] != '\0') {
      c->opts |= OPT_BAD;
      return;
    }
    if (opt == 'E')
      c->opts |= OPT_NOENV;
    else if (opt == 'i')
      c->opts |= OPT_I | OPT_V;
    else if (opt == 'v')
      c->opts |= OPT_V;
  }
  c->first = i;
}

/* Error handler: message (or a description of a non-string error value)
 * followed by the traceback. */
static int on_error(lua_State *L)
{
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Call the function below `nargs` arguments with the traceback handler. */
static int call_traced(lua_State *L, int nargs, int nres)
{
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, on_error);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, nres, base);
  lua_remove(L, base);
  return status;
}

/* Report a failed status's message (on the stack top) and pop it. */
static int report(lua_State *L, int status)
{
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    err_message(msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
  }
  return status;
}

static int run_chunk(lua_State *L, int status)
{
  if (status == LUA_OK) status = call_traced(L, 0, 0);
  return report(L, status);
}

/* Text chunks only, everywhere code enters: a binary chunk is bytecode
 * the VM trusts to be well formed, and a forged one reads and writes
 * outside the Lua heap. */
#define TEXT_ONLY "t"

static int run_string(lua_State *L, const char *code, const char *chunkname)
{
  return run_chunk(L, luaL_loadbufferx(L, code, strlen(code), chunkname, TEXT_ONLY));
}

static int run_file(lua_State *L, const char *path)
{
  return run_chunk(L, luaL_loadfilex(L, path, TEXT_ONLY));
}

/* -l [G=]MOD: G = require(MOD). */
static int run_library(lua_State *L, const char *spec)
{
  const char *eq = strchr(spec, '=');
  const char *mod = eq ? eq + 1 : spec;
  lua_getglobal(L, "require");
  lua_pushstring(L, mod);
  int status = call_traced(L, 1, 1);
  if (status == LUA_OK) {
    if (eq) {
      lua_pushlstring(L, spec, (size_t)(eq - spec));
      lua_insert(L, -2);
      lua_setglobal(L, lua_tostring(L, -2));
      lua_pop(L, 1);
    } else {
      lua_setglobal(L, spec);
    }
  }
  return report(L, status);
}

/* No C code may be loaded: drop package.loadlib and the C / Croot
 * searchers (entries 3 and 4), keeping the preload and Lua searchers. */
static void restrict_package(lua_State *L)
{
  lua_getglobal(L, "package");
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  lua_pushnil(L);
  lua_setfield(L, -2, "loadlib");
  lua_getfield(L, -1, "searchers");
  if (lua_istable(L, -1)) {
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = n; i > 2; i--) {
      lua_pushnil(L);
      lua_seti(L, -2, i);
    }
  }
  lua_pop(L, 2);
}

/* load(chunk [, name [, mode [, env]]]) and loadfile(name [, mode [, env]])
 * with the mode forced to text: the stock function (upvalue 1) is called
 * with the caller's arguments, mode argument `at` replaced by "t" (an
 * absent env stays absent, which the stock functions tell from nil). */
static int text_loader(lua_State *L, int at)
{
  if (lua_gettop(L) < at) lua_settop(L, at);
  lua_pushliteral(L, TEXT_ONLY);
  lua_replace(L, at);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

static int text_load(lua_State *L)
{
  return text_loader(L, 3);
}
static int text_loadfile(lua_State *L)
{
  return text_loader(L, 2);
}

/* dofile([name]): the stock one loads in mode "bt". */
static int text_dofile(lua_State *L)
{
  const char *name = luaL_optstring(L, 1, NULL);
  lua_settop(L, 1);
  if (luaL_loadfilex(L, name, TEXT_ONLY) != LUA_OK) return lua_error(L);
  lua_call(L, 0, LUA_MULTRET);
  return lua_gettop(L) - 1;
}

/* require's Lua searcher (searchers[2]), text only: the stock one loads
 * what package.path finds in mode "bt". */
static int text_searcher(lua_State *L)
{
  const char *name = luaL_checkstring(L, 1);
  lua_getglobal(L, "package");
  if (!lua_istable(L, -1)) return luaL_error(L, "'package' must be a table");
  if (lua_getfield(L, -1, "path") != LUA_TSTRING)
    return luaL_error(L, "'package.path' must be a string");
  const char *path = lua_tostring(L, -1);
  /* package.searchpath(name, path): nil plus the places tried, or the file */
  lua_getfield(L, -2, "searchpath");
  lua_pushstring(L, name);
  lua_pushstring(L, path);
  lua_call(L, 2, 2);
  if (lua_isnil(L, -2)) return 1; /* the places tried, for require's message */
  lua_pop(L, 1);
  const char *file = lua_tostring(L, -1);
  if (luaL_loadfilex(L, file, TEXT_ONLY) != LUA_OK)
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, file,
                      lua_tostring(L, -1));
  lua_pushstring(L, file);
  return 2;
}

static void replace_global(lua_State *L, const char *name, lua_CFunction f, int keep_stock)
{
  if (keep_stock) {
    lua_getglobal(L, name);
    lua_pushcclosure(L, f, 1);
  } else {
    lua_pushcfunction(L, f);
  }
  lua_setglobal(L, name);
}

static void text_only(lua_State *L)
{
  int top = lua_gettop(L);
  replace_global(L, "load", text_load, 1);
  replace_global(L, "loadfile", text_loadfile, 1);
  replace_global(L, "dofile", text_dofile, 0);
  lua_getglobal(L, "package");
  if (lua_istable(L, -1) && lua_getfield(L, -1, "searchers") == LUA_TTABLE) {
    lua_pushcfunction(L, text_searcher);
    lua_seti(L, -2, 2);
  }
  lua_settop(L, top);
}

/* arg[0] = script, arg[1..] = its arguments, arg[-k] = what came before
 * (with no script, arg[0] is the program name and everything else is
 * positive). */
static void build_arg_table(lua_State *L, const cli_t *c)
{
  int script = c->first < c->argc ? c->first : 0;
  lua_createtable(L, c->argc > script + 1 ? c->argc - script - 1 : 0, script + 1);
  for (int i = 0; i < c->argc; i++) {
    lua_pushstring(L, c->argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* LUA_INIT_5_4, else LUA_INIT: "@file" runs a file, anything else is code. */
static int run_init(lua_State *L)
{
  const char *name = "=LUA_INIT_5_4";
  const char *init = getenv(name + 1);
  if (init == NULL) {
    name = "=LUA_INIT";
    init = getenv(name + 1);
  }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@') return run_file(L, init + 1);
  return run_string(L, init, name);
}

/* Options -e, -l, -W in command-line order. */
static int run_options(lua_State *L, const cli_t *c)
{
  for (int i = 1; i < c->first; i++) {
    const char *a = c->argv[i];
    if (a[0] != '-') continue;
    char opt = a[1];
    if (opt == 'e' || opt == 'l') {
      const char *val = a[2] ? a + 2 : c->argv[++i];
      int status = opt == 'e' ? run_string(L, val, "=(command line)") : run_library(L, val);
      if (status != LUA_OK) return status;
    } else if (opt == 'W') {
      lua_warning(L, "@on", 0);
    }
  }
  return LUA_OK;
}

/* The script argv[first] ("-" = stdin unless it came right after "--"),
 * called with arg[1..n] as its arguments. */
static int run_script(lua_State *L, const cli_t *c)
{
  const char *path = c->argv[c->first];
  if (strcmp(path, "-") == 0 && strcmp(c->argv[c->first - 1], "--") != 0) path = NULL;
  int top = lua_gettop(L);
  int status = luaL_loadfilex(L, path, TEXT_ONLY);
  if (status == LUA_OK) {
    if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
    int n = (int)luaL_len(L, -1);
    luaL_checkstack(L, n + 3, "too many arguments to script");
    for (int i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
    lua_remove(L, -n - 1);
    status = call_traced(L, n, LUA_MULTRET);
    if (status == LUA_OK) lua_settop(L, top); /* drop the results */
  }
  return report(L, status);
}

static int run_main(lua_State *L)
{
  cli_t *c = lua_touserdata(L, 1);
  luaL_checkversion(L);
  if (c->opts & OPT_V) print_version();
  if (c->opts & OPT_NOENV) {
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  restrict_package(L);
  text_only(L);
  if (c->host) box_lua_install_host(L, c->host);
  build_arg_table(L, c);
  lua_gc(L, LUA_GCGEN, 0, 0);
  if (!(c->opts & OPT_NOENV) && run_init(L) != LUA_OK) return 0;
  if (run_options(L, c) != LUA_OK) return 0;
  if (c->first < c->argc) {
    if (run_script(L, c) != LUA_OK) return 0;
  } else if (!(c->opts & (OPT_E_STAT | OPT_V))) {
    /* No terminal in the box: the program comes from stdin. */
    if (run_file(L, NULL) != LUA_OK) return 0;
  }
  c->ok = 1;
  return 0;
}

int box_lua_main(int argc, char **argv)
{
  return box_lua_main_host(argc, argv, NULL);
}

int box_lua_main_host(int argc, char **argv, const BoxLuaHost *host)
{
  static char *no_args[] = { PROGNAME, NULL };
  if (argc < 1 || argv == NULL || argv[0] == NULL) {
    argc = 1;
    argv = no_args;
  }
  cli_t c = { .argc = argc, .argv = argv, .first = argc, .ok = 0, .host = host };
  scan_options(&c);
  if (c.opts & OPT_BAD) {
    print_usage(argv[c.first]);
    return EXIT_FAILURE;
  }
  if (c.opts & OPT_I) {
    err_message("interactive mode is not available in the box");
    return EXIT_FAILURE;
  }
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    err_message("cannot create state: not enough memory");
    return EXIT_FAILURE;
  }
  lua_pushcfunction(L, run_main);
  lua_pushlightuserdata(L, &c);
  int status = lua_pcall(L, 1, 0, 0);
  report(L, status);
  lua_close(L);
  fflush(stdout);
  fflush(stderr);
  return (status == LUA_OK && c.ok) ? EXIT_SUCCESS : EXIT_FAILURE;
}
