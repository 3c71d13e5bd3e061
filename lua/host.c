/* lua/host.c — what the box adds to Lua: io.popen and os.execute routed
 * through the Shell's decision point, and the `box` module.
 *
 * Every route forks a child that hands the text to host->shell_run (the
 * Shell, with its own shell:exec / shell:spawn decisions per command) and
 * ends with its status, so the parent sees an ordinary child process and
 * answers exactly what real Lua answers for one (luaL_execresult). */
#include "lua/boxlua.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A popen'ed handle: a stock io file handle (luaL_Stream first, so every
 * file method works on it) plus the child to wait for when it closes. */
typedef struct {
  luaL_Stream s;
  pid_t pid;
  int fd;
} RoutedStream;

/* Descriptors of the popen handles still open in this process: a child
 * forked for another route must not hold them (a reader would never see
 * the end of a 'w' pipe), as glibc's popen does. */
static GArray *open_pipes;

static void track_pipe(int fd)
{
  if (!open_pipes) open_pipes = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_val(open_pipes, fd);
}

static void untrack_pipe(int fd)
{
  for (guint i = 0; open_pipes && i < open_pipes->len; i++) {
    if (g_array_index(open_pipes, int, i) == fd) {
      g_array_remove_index_fast(open_pipes, i);
      return;
    }
  }
}

static const BoxLuaHost *host_of(lua_State *L)
{
  return lua_touserdata(L, lua_upvalueindex(1));
}

/* In a freshly forked child: drop what belongs to the parent, run the text
 * through the Shell, end. The parent's unflushed stdio buffers are not the
 * child's to write (an exec would have dropped them too). */
static G_NORETURN void run_child(const BoxLuaHost *h, const char *text)
{
  __fpurge(stdout);
  __fpurge(stderr);
  for (guint i = 0; open_pipes && i < open_pipes->len; i++)
    close(g_array_index(open_pipes, int, i));
  signal(SIGPIPE, SIG_DFL);
  int status = h->shell_run(h->data, text);
  _exit(status & 255);
}

static int wait_child(pid_t pid)
{
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return st;
}

/* ---- io.popen ------------------------------------------------------------ */

static int routed_close(lua_State *L)
{
  RoutedStream *p = (RoutedStream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  untrack_pipe(p->fd);
  fclose(p->s.f);
  errno = 0;
  int st = wait_child(p->pid);
  return luaL_execresult(L, st);
}

static int routed_popen(lua_State *L)
{
  const BoxLuaHost *h = host_of(L);
  const char *cmd = luaL_checkstring(L, 1);
  const char *mode = luaL_optstring(L, 2, "r");
  luaL_argcheck(L, (mode[0] == 'r' || mode[0] == 'w') && mode[1] == '\0', 2, "invalid mode");
  RoutedStream *p = (RoutedStream *)lua_newuserdatauv(L, sizeof(RoutedStream), 0);
  p->s.f = NULL;
  p->s.closef = NULL; /* "closed" until the child runs */
  p->pid = -1;
  p->fd = -1;
  luaL_setmetatable(L, LUA_FILEHANDLE);
  bool reading = mode[0] == 'r';
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return luaL_fileresult(L, 0, cmd);
  int mine = reading ? fds[0] : fds[1];
  int theirs = reading ? fds[1] : fds[0];
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    errno = e;
    return luaL_fileresult(L, 0, cmd);
  }
  if (pid == 0) {
    int target = reading ? 1 : 0;
    if (dup2(theirs, target) < 0) _exit(127);
    close(mine);
    if (theirs != target) close(theirs);
    run_child(h, cmd);
  }
  close(theirs);
  FILE *f = fdopen(mine, mode);
  if (f == NULL) {
    int e = errno;
    close(mine);
    wait_child(pid);
    errno = e;
    return luaL_fileresult(L, 0, cmd);
  }
  p->s.f = f;
  p->s.closef = routed_close;
  p->pid = pid;
  p->fd = mine;
  track_pipe(mine);
  return 1;
}

/* ---- os.execute ---------------------------------------------------------- */

static int routed_execute(lua_State *L)
{
  const BoxLuaHost *h = host_of(L);
  const char *cmd = luaL_optstring(L, 1, NULL);
  if (cmd == NULL) {
    lua_pushboolean(L, 1); /* a shell is available */
    return 1;
  }
  errno = 0;
  pid_t pid = fork();
  if (pid < 0) return luaL_execresult(L, -1);
  if (pid == 0) run_child(h, cmd);
  int st = wait_child(pid);
  return luaL_execresult(L, st);
}

/* ---- box.run ------------------------------------------------------------- */

static void read_some(int *fd, GString *into)
{
  char buf[65536];
  ssize_t n = read(*fd, buf, sizeof buf);
  if (n > 0) {
    g_string_append_len(into, buf, n);
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    close(*fd);
    *fd = -1;
  }
}

static int box_run(lua_State *L)
{
  const BoxLuaHost *h = host_of(L);
  const char *cmd = luaL_checkstring(L, 1);
  size_t in_len = 0;
  const char *in = NULL;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    if (lua_getfield(L, 2, "stdin") != LUA_TNIL) {
      if (!lua_isstring(L, -1)) return luaL_error(L, "box.run: 'stdin' must be a string");
      in = lua_tolstring(L, -1, &in_len);
    }
    /* stays on the stack: `in` points into it */
  }
  int pin[2] = { -1, -1 }, pout[2], perr[2];
  if (in && pipe2(pin, O_CLOEXEC) != 0) return luaL_fileresult(L, 0, cmd);
  if (pipe2(pout, O_CLOEXEC) != 0) {
    int e = errno;
    if (in) {
      close(pin[0]);
      close(pin[1]);
    }
    errno = e;
    return luaL_fileresult(L, 0, cmd);
  }
  if (pipe2(perr, O_CLOEXEC) != 0) {
    int e = errno;
    if (in) {
      close(pin[0]);
      close(pin[1]);
    }
    close(pout[0]);
    close(pout[1]);
    errno = e;
    return luaL_fileresult(L, 0, cmd);
  }
  pid_t pid = fork();
  if (pid == 0) {
    int in_fd = in ? pin[0] : open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in_fd < 0 || dup2(in_fd, 0) < 0 || dup2(pout[1], 1) < 0 || dup2(perr[1], 2) < 0) _exit(126);
    /* No exec follows: close-on-exec closes nothing, so close here. */
    int ours[] = { in_fd, in ? pin[1] : -1, pout[0], pout[1], perr[0], perr[1] };
    for (size_t i = 0; i < G_N_ELEMENTS(ours); i++)
      if (ours[i] > 2) close(ours[i]);
    run_child(h, cmd);
  }
  int e = errno;
  if (in) close(pin[0]);
  close(pout[1]);
  close(perr[1]);
  if (pid < 0) {
    if (in) close(pin[1]);
    close(pout[0]);
    close(perr[0]);
    errno = e;
    return luaL_fileresult(L, 0, cmd);
  }
  /* Writing to a child that stopped reading must not kill Lua. */
  struct sigaction ign = { .sa_handler = SIG_IGN }, old;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, &old);
  int win = in ? pin[1] : -1, rout = pout[0], rerr = perr[0];
  if (win >= 0 && in_len == 0) {
    close(win);
    win = -1;
  }
  size_t in_off = 0;
  GString *out = g_string_new(NULL), *err = g_string_new(NULL);
  while (win >= 0 || rout >= 0 || rerr >= 0) {
    struct pollfd pf[3];
    int n = 0, iw = -1, io = -1, ie = -1;
    if (win >= 0) {
      iw = n;
      pf[n].fd = win;
      pf[n++].events = POLLOUT;
    }
    if (rout >= 0) {
      io = n;
      pf[n].fd = rout;
      pf[n++].events = POLLIN;
    }
    if (rerr >= 0) {
      ie = n;
      pf[n].fd = rerr;
      pf[n++].events = POLLIN;
    }
    if (poll(pf, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (iw >= 0 && pf[iw].revents) {
      ssize_t w = write(win, in + in_off, MIN(in_len - in_off, (size_t)65536));
      if (w > 0) in_off += (size_t)w;
      if ((w < 0 && errno != EINTR && errno != EAGAIN) || in_off == in_len) {
        close(win);
        win = -1;
      }
    }
    if (io >= 0 && pf[io].revents) read_some(&rout, out);
    if (ie >= 0 && pf[ie].revents) read_some(&rerr, err);
  }
  if (win >= 0) close(win);
  if (rout >= 0) close(rout);
  if (rerr >= 0) close(rerr);
  sigaction(SIGPIPE, &old, NULL);
  int st = wait_child(pid);
  int status = st < 0 ? 126 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  lua_pushinteger(L, status);
  lua_pushlstring(L, out->str, out->len);
  lua_pushlstring(L, err->str, err->len);
  g_string_free(out, TRUE);
  g_string_free(err, TRUE);
  return 3;
}

/* ---- box.decide ---------------------------------------------------------- */

/* Whether the table at idx is a sequence 1..n (n > 0) and nothing else. */
static bool is_array(lua_State *L, int idx)
{
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
  if (n == 0) return false;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    count++;
    lua_pop(L, 1);
  }
  return count == n;
}

/* Raises unless the value at idx converts to JSON: nil, booleans, numbers,
 * strings, and tables that are sequences or have string keys only. */
static void check_json(lua_State *L, int idx, int depth)
{
  idx = lua_absindex(L, idx);
  int t = lua_type(L, idx);
  if (t == LUA_TNIL || t == LUA_TBOOLEAN || t == LUA_TNUMBER || t == LUA_TSTRING) return;
  if (t != LUA_TTABLE)
    luaL_error(L, "box.decide: a %s value cannot be part of an input", luaL_typename(L, idx));
  if (depth > 32) luaL_error(L, "box.decide: the input nests too deeply");
  bool array = is_array(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (!array && lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "box.decide: input keys must be strings");
    check_json(L, -1, depth + 1);
    lua_pop(L, 1);
  }
}

/* The value at idx (checked by check_json) as JSON; never raises. Tables
 * whose keys are exactly 1..n are arrays, the empty table is an object. */
static json_object *to_json(lua_State *L, int idx)
{
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TBOOLEAN: return json_object_new_boolean(lua_toboolean(L, idx));
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) return json_object_new_int64(lua_tointeger(L, idx));
    return json_object_new_double(lua_tonumber(L, idx));
  case LUA_TSTRING: {
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    return json_object_new_string_len(s, (int)len);
  }
  case LUA_TTABLE: break;
  default: return NULL;
  }
  if (is_array(L, idx)) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    json_object *a = json_object_new_array();
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, i);
      json_object_array_add(a, to_json(L, -1));
      lua_pop(L, 1);
    }
    return a;
  }
  json_object *o = json_object_new_object();
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    json_object_object_add(o, lua_tostring(L, -2), to_json(L, -1));
    lua_pop(L, 1);
  }
  return o;
}

static int box_decide(lua_State *L)
{
  const BoxLuaHost *h = host_of(L);
  const char *action = luaL_checkstring(L, 1);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  if (h->decide == NULL) return luaL_error(L, "box.decide: this box takes no decisions from Lua");
  bool has_input = !lua_isnoneornil(L, 2);
  if (has_input) {
    check_json(L, 2, 0);
    if (is_array(L, 2)) return luaL_argerror(L, 2, "the input must be a table with string keys");
  }
  json_object *input = has_input ? to_json(L, 2) : json_object_new_object();
  char *text = g_strdup(json_object_to_json_string_ext(input, JSON_C_TO_STRING_PLAIN));
  json_object_put(input);
  char *message = NULL;
  bool permitted = h->decide(h->data, action, text, &message);
  g_free(text);
  lua_pushboolean(L, permitted);
  if (message)
    lua_pushstring(L, message);
  else
    lua_pushnil(L);
  free(message);
  return 2;
}

/* ---- box.log ------------------------------------------------------------- */

static int box_log(lua_State *L)
{
  const BoxLuaHost *h = host_of(L);
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_tolstring(L, i, NULL);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  const char *line = lua_tostring(L, -1);
  if (h->log) {
    h->log(h->data, line);
  } else {
    fprintf(stderr, "box: %s\n", line);
    fflush(stderr);
  }
  return 0;
}

/* ---- installation -------------------------------------------------------- */

static void set_routed(lua_State *L, const BoxLuaHost *host, const char *lib, const char *name,
                       lua_CFunction fn)
{
  if (lua_getglobal(L, lib) == LUA_TTABLE) {
    lua_pushlightuserdata(L, (void *)host);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

void box_lua_install_host(lua_State *L, const BoxLuaHost *host)
{
  if (host == NULL || host->shell_run == NULL) return;
  set_routed(L, host, "io", "popen", routed_popen);
  set_routed(L, host, "os", "execute", routed_execute);
  static const luaL_Reg box_funcs[] = {
    { "run", box_run },
    { "decide", box_decide },
    { "log", box_log },
    { NULL, NULL },
  };
  luaL_newlibtable(L, box_funcs);
  lua_pushlightuserdata(L, (void *)host);
  luaL_setfuncs(L, box_funcs, 1);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "box");
  lua_pop(L, 1);
  lua_setglobal(L, "box");
}
