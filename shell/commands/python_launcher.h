/* python_launcher.h — the clean copy a python3 run starts its processes
 * from (see python_launcher.c). */
#ifndef BOX_PYTHON_LAUNCHER_H
#define BOX_PYTHON_LAUNCHER_H

#include <stdbool.h>

#include "shell/shell-private.h"

/* In the command's child, before the interpreter starts: fork the
 * launcher (nothing when that fails; texts then run where they are). */
void box_python_launcher_start(Shell *sh);
/* In a child the interpreter forked: text through the Shell in a job of
 * the launcher, on this process's fds 0, 1, 2; *status is the Shell's.
 * False when there is no launcher to take it. */
bool box_python_launcher_run(const char *text, int *status);
/* After the interpreter: the launcher ends. */
void box_python_launcher_stop(void);

#endif
