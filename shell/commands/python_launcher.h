/* python_launcher.h — the clean copy a python3 run starts its processes
 * from (see python_launcher.c). */
#ifndef BOX_PYTHON_LAUNCHER_H
#define BOX_PYTHON_LAUNCHER_H

#include <stdbool.h>

#include "shell/shell-private.h"

/* In the Shell, before the command's child is forked: the socket the
 * child asks on (false when it cannot be made: texts then run where they
 * are). */
bool box_python_launcher_open(void);
/* In the command's child, before the interpreter starts: its end only. */
void box_python_launcher_child(void);
/* In the Shell while the command's child pid runs: its requests. */
void box_python_launcher_serve(BoxCmd *c, pid_t pid);
/* In a child the interpreter forked: text through the Shell in a job of
 * the launcher, on this process's fds 0, 1, 2; *status is the Shell's.
 * False when there is no launcher to take it. */
bool box_python_launcher_run(const char *text, int *status);
/* After the interpreter (or the command, in the Shell): the ends closed. */
void box_python_launcher_stop(void);

#endif
