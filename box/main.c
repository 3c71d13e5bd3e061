/* main.c — the `box` command line: verbs and their usage errors. */
#include "box/box-private.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
  "Usage: box <COMMAND>\n"
  "\n"
  "Commands:\n"
  "  run --config FILE [--quiet] [-- ARGS...]  Run a box and its agent; exit with the agent's "
  "status\n"
  "  lua --config FILE SCRIPT [ARGS...]  Run a Lua script as the box's agent\n"
  "  mount --config FILE [--rw] MOUNTPOINT  Show a box's view live at MOUNTPOINT until Ctrl-C\n"
  "  demo                            Run a demo box on the built-in example config and policy\n"
  "  policy check|decide|generate-schema|replay  Test a policy file as a box would load it\n"
  "  init [--name NAME]              Write a commented box.toml and policy.dw here\n"
  "  ls | status [NAME]              List the boxes running on this host\n"
  "  stop NAME                       Stop a running box\n"
  "  logs NAME [-f] [--deny] [--json]  Print a running box's decisions\n"
  "  checkpoints --config FILE [-n N]  List the box's checkpoints, newest first\n"
  "  diff --config FILE A [B] [--stat] [-- PATHS...]  Show what changed between checkpoints\n"
  "  restore --config FILE ID [PATHS...]  Put the workspace back as it was at a checkpoint\n"
  "\n"
  "Options:\n"
  "  -h, --help     Print help\n"
  "  -V, --version  Print version\n";

int main(int argc, char **argv)
{
  g_set_prgname("box");
  if (argc < 2) {
    fputs(usage, stderr);
    return 2;
  }
  const char *verb = argv[1];
  if (strcmp(verb, "-h") == 0 || strcmp(verb, "--help") == 0 || strcmp(verb, "help") == 0) {
    fputs(usage, stdout);
    return 0;
  }
  if (strcmp(verb, "-V") == 0 || strcmp(verb, "--version") == 0) {
    printf("box %s\n", BOX_VERSION);
    return 0;
  }
  bool boxd = strcmp(verb, "run") == 0 || strcmp(verb, "lua") == 0 ||
              (strcmp(verb, "demo") == 0 && argc == 2);
  int refused = boxd ? boxd_enter_user_namespace(argv) : 0;
  if (refused) return refused;
  if (strcmp(verb, "run") == 0) return box_verb_run(argc - 1, argv + 1);
  if (strcmp(verb, "mount") == 0) return box_verb_mount(argc - 1, argv + 1);
  if (strcmp(verb, "lua") == 0) return box_verb_lua(argc - 1, argv + 1);
  if (strcmp(verb, "policy") == 0) return box_verb_policy(argc - 1, argv + 1);
  if (strcmp(verb, "demo") == 0) return box_verb_demo_main(argc - 1, argv + 1);
  if (strcmp(verb, "checkpoints") == 0) return box_verb_checkpoints(argc - 1, argv + 1);
  if (strcmp(verb, "diff") == 0) return box_verb_diff(argc - 1, argv + 1);
  if (strcmp(verb, "restore") == 0) return box_verb_restore(argc - 1, argv + 1);
  if (strcmp(verb, "ls") == 0 || strcmp(verb, "status") == 0)
    return box_verb_ls(argc - 1, argv + 1);
  if (strcmp(verb, "stop") == 0) return box_verb_stop(argc - 1, argv + 1);
  if (strcmp(verb, "logs") == 0) return box_verb_logs(argc - 1, argv + 1);
  if (strcmp(verb, "init") == 0) return box_verb_init(argc - 1, argv + 1);
  if (verb[0] == '-')
    fprintf(stderr, "error: unexpected argument '%s' found\n\n%s", verb, usage);
  else
    fprintf(stderr, "error: unrecognized subcommand '%s'\n\n%s", verb, usage);
  return 2;
}
