/* shell_host.h — box-shell's host for the Shell in a box (shell_host.c):
 * decisions, programs and the fast path asked of boxd. */
#ifndef BOX_SHELL_HOST_H
#define BOX_SHELL_HOST_H

#include <json-c/json.h>

#include "shell/shell.h"

/* The worker's control channel to boxd, before any call. */
void box_worker_host_start(int ctl);
/* The host whose calls go to boxd, for box_shell_new. */
BoxShellHost box_worker_host(void);
/* The Shell is built: this process is the worker (a process it forks
 * sends its pending status first and opens a fast-path channel of its own);
 * again in the child of a split Python worker, which is the worker then. */
void box_worker_host_ready(void);
/* The "run" message arrived and the caller's descriptors are 0-2: its
 * stdin (a program never reads it) and the decision the message carries. */
void box_worker_host_take_run(json_object *run);
/* An exit status of a command for history not yet sent (the caller's),
 * to go with the worker's "exit", or NULL. */
json_object *box_worker_host_take_status(void);

#endif
