/* spin.c: see spin.h. */
#include "tools/spin.h"

#include <poll.h>
#include <time.h>

/* A pause between looks, not sched_yield: on a loaded machine a yield
 * hands the CPU to whatever else is runnable for its whole slice, and the
 * answer that came meanwhile waits for it (boxd's files row was twice as
 * slow under load so); a waiter woken from sleep is run sooner. */
static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

int64_t box_spin_now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

bool box_spin_wait(BoxSpin *s, bool (*ready)(void *ctx), void *ctx)
{
  uint32_t limit = s->limit_us;
  /* not spinning after misses: one spin now and then, to see whether the
   * peer answers in time again */
  if (limit == 0 && ++s->misses % BOX_SPIN_PROBE_EVERY == 0) limit = BOX_SPIN_MAX_US;
  if (limit == 0) return ready(ctx); /* one look costs one system call */
  int64_t until = box_spin_now_us() + limit;
  do {
    if (ready(ctx)) {
      s->limit_us = BOX_SPIN_MAX_US;
      s->misses = 0;
      s->catches++;
      return true;
    }
    relax();
  } while (box_spin_now_us() < until);
  /* a miss: the next waits spin half as long, then not at all */
  s->limit_us = limit / 2 < BOX_SPIN_MAX_US / 4 ? 0 : limit / 2;
  return false;
}

bool box_spin_readable(void *fd)
{
  struct pollfd p = { .fd = *(int *)fd, .events = POLLIN };
  return poll(&p, 1, 0) != 0;
}
