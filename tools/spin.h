/* spin.h: a bounded, adaptive spin before sleeping on a peer's answer.
 *
 * A request and its answer between two processes on an otherwise idle
 * machine cost two wake-ups of a sleeping CPU each way (on this VM's
 * cpuidle driver tens of µs each), more than the work of the request.
 * While a burst of requests goes on, the waiting side asks without
 * sleeping for a short while first; when the answer does not come in that
 * while, it sleeps as before, and after a few such misses it stops
 * spinning (trying again now and then), so that a loaded machine, where
 * the peer is not running, loses no CPU to it.  Nothing spins unless a
 * request was just sent or served: an idle box spins never.
 *
 * One place for it: boxd's serving of the fast path's open channel
 * (box/worker_command.c), the worker's wait for its answers
 * (box/shell_host.c), and any other "send, then wait for the reply". */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* the longest spin, µs: above an answer's usual time (tens of µs), far
 * below a wake-up that would be noticed */
#define BOX_SPIN_MAX_US 60
/* after a miss, every this many waits spins once more to look again */
#define BOX_SPIN_PROBE_EVERY 32

typedef struct {
  uint32_t limit_us; /* how long the next wait spins; 0: not now */
  uint32_t misses;   /* waits since the last spin that caught its answer */
  uint32_t catches;  /* spins that caught their answer (for tests and counts) */
} BoxSpin;

#define BOX_SPIN_INIT                                                                              \
  {                                                                                                \
    BOX_SPIN_MAX_US, 0, 0                                                                          \
  }

/* Calls ready(ctx) — a non-blocking attempt: true when what is waited for
 * is there (taken or seen) — until it is true or the spin's time is up.
 * true: it came while spinning; false: the caller blocks as it would
 * have.  Adapts the next wait's spin either way: a peer that shares this
 * CPU cannot answer while it spins, so the misses soon end the spinning. */
bool box_spin_wait(BoxSpin *s, bool (*ready)(void *ctx), void *ctx);

/* A ready() for box_spin_wait: whether the descriptor *(int *)fd has
 * something to read (or has ended), without taking it. */
bool box_spin_readable(void *fd);

/* µs on the monotonic clock (vDSO: no system call) */
int64_t box_spin_now_us(void);
