/* cmd_lua.c — `box lua --config FILE SCRIPT [ARGS...]`: run a Lua script as
 * the box's agent.
 *
 * The script runs where every agent's commands run: inside the box, in the
 * Shell's own `lua` (lua/boxlua.h), through the box's alias.  `box lua`
 * reads SCRIPT as the operator, and starts the box exactly as `box run`
 * does, with the agent command replaced by
 *
 *     <box_dir>/bin/sh -c 'lua -e <loader>'
 *
 * where the loader sets `arg` as the stock lua builds it for
 * `lua SCRIPT ARGS...` and runs the script's text as chunk "@SCRIPT" with
 * ARGS as `...`.  So the agent needs no binary of its own in its sandbox,
 * the Shell decides `lua` (shell:exec) like any command, the script's
 * files go through the mount, and its io.popen / os.execute / box.run
 * commands each get their own decision.  Exit status: the agent's, i.e.
 * the script's (os.exit, 1 on an uncaught error), as with `box run`. */
#include "box/box-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The largest -c text an argument can carry (MAX_ARG_STRLEN) with room. */
#define MAX_AGENT_TEXT (120 * 1024)

static const char usage[] = "Usage: box lua --config FILE SCRIPT [ARGS...]\n";

/* s as a Lua string literal. */
static void lua_quote(GString *out, const char *s, size_t n)
{
  g_string_append_c(out, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      g_string_append_c(out, '\\');
      g_string_append_c(out, (char)c);
    } else if (c == '\n') {
      g_string_append(out, "\\n");
    } else if (c < 0x20 || c == 0x7f) {
      g_string_append_printf(out, "\\%03u", c);
    } else {
      g_string_append_c(out, (char)c);
    }
  }
  g_string_append_c(out, '"');
}

/* The -e chunk that runs text as the script `name` with args. */
static char *loader(const char *name, const char *text, size_t len, char **args)
{
  GString *l = g_string_new("arg = {[-1] = \"lua\", [0] = ");
  lua_quote(l, name, strlen(name));
  for (char **a = args; *a; a++) {
    g_string_append(l, ", ");
    lua_quote(l, *a, strlen(*a));
  }
  g_string_append(l, "} ");
  /* Like luaL_loadfile: a first line starting with '#' is skipped (its
   * newline kept, so line numbers stay right). */
  if (len > 0 && text[0] == '#') {
    const char *nl = memchr(text, '\n', len);
    size_t skip = nl ? (size_t)(nl - text) : len;
    text += skip;
    len -= skip;
  }
  g_string_append(l, "local chunk = assert(load(");
  lua_quote(l, text, len);
  g_string_append(l, ", ");
  g_autofree char *chunkname = g_strconcat("@", name, NULL);
  lua_quote(l, chunkname, strlen(chunkname));
  g_string_append(l, ", \"t\")) chunk(table.unpack(arg, 1, #arg))");
  return g_string_free(l, FALSE);
}

int box_verb_lua(int argc, char **argv)
{
  g_autofree char *config_path = NULL;
  g_auto(GStrv) rest = NULL;
  /* Options end at the script (strict POSIX): its own arguments are its own. */
  if (!box_verb_parse("box lua", "- run a Lua agent", "SCRIPT [ARGS…]",
                      "Starts the box described by FILE and runs SCRIPT with ARGS as its agent, "
                      "inside the box's Shell (its `lua` command, with the `box` module); exits "
                      "with the script's status.",
                      true, &config_path, &rest, &argc, &argv))
    return 2;
  char **script_args = rest;
  if (script_args && *script_args && strcmp(*script_args, "--") == 0) script_args++;
  if (!config_path || !script_args || !*script_args) {
    fprintf(stderr, "box: error: the following required arguments were not provided:%s%s\n\n%s",
            config_path ? "" : " --config <FILE>", script_args && *script_args ? "" : " <SCRIPT>",
            usage);
    return 2;
  }
  const char *script = script_args[0];
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents(script, &text, &len, &error)) {
    fprintf(stderr, "box: error: cannot read the Lua script: %s\n", error->message);
    return 1;
  }
  /* The box directory, for the alias the agent is. */
  const char *h = getenv("HOME");
  g_autofree char *home = realpath(h && *h ? h : "/", NULL);
  g_autoptr(BoxConfig) config = box_config_load(config_path, home ? home : "/", &error);
  if (!config) {
    fprintf(stderr, "box: error: %s\n", error->message);
    return 1;
  }
  g_autofree char *chunk = loader(script, text, len, script_args + 1);
  GString *source = g_string_new("lua -e ");
  g_autofree char *quoted = g_shell_quote(chunk);
  g_string_append(source, quoted);
  if (source->len > MAX_AGENT_TEXT) {
    fprintf(stderr,
            "box: error: the Lua script %s is too large to send (%zu bytes quoted; at most "
            "%d)\n",
            script, source->len, MAX_AGENT_TEXT);
    g_string_free(source, TRUE);
    return 1;
  }
  g_autofree char *alias = g_build_filename(config->box_dir, "bin", "sh", NULL);
  char *agent[] = { alias, "-c", source->str, NULL };
  box_run_agent_override = agent;
  char *run_argv[] = { "run", "--config", config_path, NULL };
  int status = box_verb_run(3, run_argv);
  box_run_agent_override = NULL;
  g_string_free(source, TRUE);
  return status;
}
