/* registry.c — looks a command up in the one table, commands.def. */
#include <stdlib.h>
#include <string.h>

#include "shell/shell-private.h"

static const BoxCommandDef commands[] = {
#define BOX_COMMAND(name, fn, kind) { name, fn, BOX_CMD_##kind },
#include "shell/commands/commands.def"
#undef BOX_COMMAND
};

static int cmp(const void *key, const void *elem)
{
  return strcmp(key, ((const BoxCommandDef *)elem)->name);
}

/* The rows are sorted by name (the command-table test checks it), so the
 * table is searched as it stands: no copy made on first use, which many of
 * boxd's threads would race to make. */
const BoxCommandDef *box_command_lookup(const char *name)
{
  return bsearch(name, commands, G_N_ELEMENTS(commands), sizeof commands[0], cmp);
}

const BoxCommandDef *box_command_rows(size_t *n)
{
  *n = G_N_ELEMENTS(commands);
  return commands;
}

bool box_is_special_builtin(const char *name)
{
  const BoxCommandDef *d = box_command_lookup(name);
  return d && d->kind == BOX_CMD_SPECIAL;
}

bool box_is_builtin(const char *name)
{
  const BoxCommandDef *d = box_command_lookup(name);
  return d && d->kind != BOX_CMD_UTILITY;
}
