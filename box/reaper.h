/* reaper.h — one thread reaps boxd's children, any thread waits for its own. */
#ifndef BOX_REAPER_H
#define BOX_REAPER_H

#include <stdbool.h>
#include <sys/types.h>

void box_reaper_init(void);
/* Called by the main thread on SIGCHLD. */
void box_reaper_collect(void);
/* Blocks until pid has been reaped; returns its wait status.  A pid that
 * is gone with no status told (its reaper, the workers' zygote, killed
 * before it told) is taken, after a grace, as killed (SIGKILL). */
int box_reaper_wait(pid_t pid);
/* A status reaped by someone else (the workers' zygote) for pid. */
void box_reaper_store(pid_t pid, int status);
/* Non-blocking: true and *status when pid has been reaped. */
bool box_reaper_poll(pid_t pid, int *status);
/* Exit status the way a shell reports it: code, or 128+signal. */
int box_status_code(int wait_status);

#endif
