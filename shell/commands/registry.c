/* registry.c — the one table of what the Shell implements itself.
 * Each command lives in its own file in this directory. */
#include <string.h>

#include "shell/shell-private.h"

/* Sorted by name (bsearch). */
static const BoxCommandDef commands[] = {
  { ":", box_cmd_true },
  { "cat", box_cmd_cat },
  { "cd", box_cmd_cd },
  { "echo", box_cmd_echo },
  { "exit", box_cmd_exit },
  { "export", box_cmd_export },
  { "false", box_cmd_false },
  { "grep", box_cmd_grep },
  { "pwd", box_cmd_pwd },
  { "true", box_cmd_true },
};

static int cmp(const void *key, const void *elem) {
  return strcmp(key, ((const BoxCommandDef *)elem)->name);
}

const BoxCommandDef *box_command_lookup(const char *name) {
  return bsearch(name, commands, G_N_ELEMENTS(commands), sizeof commands[0], cmp);
}
