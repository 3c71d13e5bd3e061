/* registry.c — looks a command up in the one table, commands.def. */
#include <stdlib.h>
#include <string.h>

#include "shell/shell-private.h"

static const BoxCommandDef commands[] = {
#define BOX_COMMAND(name, fn, kind) { name, fn, BOX_CMD_##kind },
#include "shell/commands/commands.def"
#undef BOX_COMMAND
};

static int cmp(const void *key, const void *elem) {
  return strcmp(key, ((const BoxCommandDef *)elem)->name);
}

static int cmp_def(const void *a, const void *b) {
  return strcmp(((const BoxCommandDef *)a)->name, ((const BoxCommandDef *)b)->name);
}

/* A sorted copy made once, so an entry added out of order still works. */
const BoxCommandDef *box_command_lookup(const char *name) {
  static BoxCommandDef *sorted;
  if (!sorted) {
    BoxCommandDef *s = g_memdup2(commands, sizeof commands);
    qsort(s, G_N_ELEMENTS(commands), sizeof commands[0], cmp_def);
    sorted = s;
  }
  return bsearch(name, sorted, G_N_ELEMENTS(commands), sizeof commands[0], cmp);
}

bool box_is_special_builtin(const char *name) {
  const BoxCommandDef *d = box_command_lookup(name);
  return d && d->kind == BOX_CMD_SPECIAL;
}

bool box_is_builtin(const char *name) {
  const BoxCommandDef *d = box_command_lookup(name);
  return d && d->kind != BOX_CMD_UTILITY;
}
