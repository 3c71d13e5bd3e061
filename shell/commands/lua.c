/* lua.c — `lua`: Lua 5.4 (lua/boxlua.h) as one of the Shell's commands.
 *
 * The interpreter runs in a child process on the command's descriptors
 * (box_cmd_in_child, interp.c), so it behaves like the stock `lua`
 * program.  io.popen, os.execute and box.run hand their text to the
 * Shell's decision point (box_run_text) in a child of the interpreter, so
 * every command they run gets its own shell:exec / shell:spawn decision. */
#include "lua/boxlua.h"
#include "shell/shell-private.h"

/* Runs text through the Shell's one decision point (box_run_text) in
 * this process, a child the interpreter forked for the route: a copy of
 * the Shell as it was when `lua` started, on the child's fds 0, 1, 2. */
static int lua_shell_run(void *data, const char *text)
{
  BoxCmd *c = data;
  return box_run_text(c->sh, text, 0, 1, 2);
}

/* box.decide: the host's dry run, when the Shell runs in a box. */
static bool lua_decide(void *data, const char *action, const char *input_json, char **message)
{
  BoxCmd *c = data;
  const BoxShellHost *h = c->sh->host;
  return h->decide_dry(h->data, action, input_json, message);
}

/* In the child box_cmd_in_child forked, on the command's descriptors. */
static int lua_child(BoxCmd *c)
{
  BoxLuaHost host = { lua_shell_run, NULL, NULL, c };
  if (c->sh->host && c->sh->host->decide_dry) host.decide = lua_decide;
  return box_lua_main_host(c->argc, c->argv, &host);
}

int box_cmd_lua(BoxCmd *c)
{
  return box_cmd_in_child(c, lua_child);
}
