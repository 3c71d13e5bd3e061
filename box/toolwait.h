/* toolwait.h — waiting for a tool on behalf of the worker process that
 * asked for it (private to box/). */
#ifndef BOX_TOOLWAIT_H
#define BOX_TOOLWAIT_H

#include <sys/types.h>

/* Waits for the tool pid like box_reaper_wait and returns its wait status;
 * if the worker process that asked for it goes away first (requester_fd,
 * its reply socket, hangs up: `timeout` stopped it, or it was killed), the
 * tool is killed too, as a program dies with its process group. */
int boxd_wait_tool(pid_t pid, int requester_fd);

#endif
