/* python_launcher.h — the clean copy a python3 run starts its processes
 * from (see python_launcher.c). */
#ifndef BOX_PYTHON_LAUNCHER_H
#define BOX_PYTHON_LAUNCHER_H

#include <stdbool.h>
#include <sys/types.h>

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

/* A worker of Python's zygote split in two before its command comes
 * (python_split.c).  In the zygote, once its interpreter is warm: the
 * mappings a child is to own. */
void box_python_note_mappings(void);
/* In the worker: 0 in the child, which serves the command and owns its
 * pages; the child's PID in the parent, the launcher; -1 not split. */
pid_t box_python_split(void);
/* In the child, waiting for its command: the pages it will write taken
 * as its own, on idle CPUs, from start until stop (when it comes). */
void box_python_own_pages_start(void);
void box_python_own_pages_stop(void);
/* In the parent: the child's interpreter's requests, until it ends; its
 * wait status (-1: not known). */
int box_python_split_serve(Shell *sh, pid_t child);
/* Before the split child runs source: whether its python3 may run in
 * this process (source is one simple command naming python3: nothing of
 * the text follows it).  Taken (and cleared) by that command. */
void box_python_here_note(const char *source);
bool box_python_here_take(const BoxCmd *c);

#endif
