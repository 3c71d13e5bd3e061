/* python.c — `python3` and `python`: CPython 3.11 (python/boxpython.h)
 * as one of the Shell's commands.
 *
 * Each run is a shell:exec decision like any command's; the interpreter
 * then runs in a child on the command's descriptors (box_cmd_in_child), so
 * stdin is the Shell's pipe or here-document, exit() ends only the
 * command, and its files are the mount's, decided per operation.  The
 * module that links libpython is loaded in that child, on first use
 * (python_dl.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/python_launcher.h"
#include "shell/shell-private.h"

static int python_child(BoxCmd *c)
{
  char *why = NULL;
  int status = box_python_run(c, c->argc, c->argv, &why);
  if (why) {
    fprintf(stderr, "%s: cannot load the interpreter: %s\n", c->argv[0], why);
    free(why);
    return 126;
  }
  return status;
}

int box_cmd_python(BoxCmd *c)
{
  box_python_note_gateway();
  /* the split worker's child, the text nothing more than this command */
  if (box_python_here_take(c)) return box_cmd_in_place(c, python_child);
  if (!box_python_launcher_open()) return box_cmd_in_child(c, python_child);
  int status = box_cmd_in_child_serving(c, python_child, box_python_launcher_serve);
  box_python_launcher_stop(); /* the socket, if no child was forked to serve */
  return status;
}

bool box_is_python_name(const char *name)
{
  return !strcmp(name, "python3") || !strcmp(name, "python") || !strcmp(name, "python3.11");
}
