/* test_spin.c — the bounded spin before sleeping on an answer
 * (tools/spin.h): it stops at its limit, gives up spinning after misses,
 * looks again now and then, and spins fully again once it catches one. */
#include "tools/spin.h"

#include <glib.h>

typedef struct {
  int calls;
  int ready_at; /* the call that finds it there (1-based); 0: never */
} Peer;

static bool peer_ready(void *data)
{
  Peer *p = data;
  p->calls++;
  return p->ready_at && p->calls >= p->ready_at;
}

static void test_caught_at_once(void)
{
  BoxSpin s = BOX_SPIN_INIT;
  Peer p = { 0, 1 };
  g_assert_true(box_spin_wait(&s, peer_ready, &p));
  g_assert_cmpint(p.calls, ==, 1);
  g_assert_cmpuint(s.catches, ==, 1);
  g_assert_cmpuint(s.limit_us, ==, BOX_SPIN_MAX_US);
}

/* Peer ready at its third look: caught by the spin.  A loaded machine may
 * take the CPU away for longer than the spin at a yield: tried until one
 * spin ran uninterrupted. */
static void test_caught_while_spinning(void)
{
  bool caught = false;
  for (int i = 0; i < 1000 && !caught; i++) {
    BoxSpin s = BOX_SPIN_INIT;
    Peer p = { 0, 3 };
    caught = box_spin_wait(&s, peer_ready, &p);
    g_assert_cmpint(p.calls, ==, caught ? 3 : p.calls);
    if (caught) g_assert_cmpuint(s.catches, ==, 1);
  }
  g_assert_true(caught);
}

static void test_a_miss_spins_its_limit_then_less(void)
{
  BoxSpin s = BOX_SPIN_INIT;
  uint32_t limits[4];
  for (int i = 0; i < 4; i++) {
    Peer p = { 0, 0 };
    limits[i] = s.limit_us;
    int64_t t0 = box_spin_now_us();
    g_assert_false(box_spin_wait(&s, peer_ready, &p));
    int64_t spent = box_spin_now_us() - t0;
    /* never less than the limit; never unbounded (a loaded machine may
     * take the CPU away for a while in the middle) */
    g_assert_cmpint(spent, >=, (int64_t)limits[i]);
    g_assert_cmpint(spent, <, (int64_t)limits[i] + 500000);
    if (limits[i] == 0) g_assert_cmpint(p.calls, ==, 1);
  }
  g_assert_cmpuint(limits[0], ==, BOX_SPIN_MAX_US);
  g_assert_cmpuint(limits[1], ==, BOX_SPIN_MAX_US / 2);
  g_assert_cmpuint(limits[2], ==, BOX_SPIN_MAX_US / 4);
  g_assert_cmpuint(limits[3], ==, 0); /* given up: one look per wait */
}

static void test_given_up_it_looks_again_now_and_then(void)
{
  bool caught = false;
  for (int round = 0; round < 1000 && !caught; round++) {
    BoxSpin s = BOX_SPIN_INIT;
    Peer never = { 0, 0 };
    while (s.limit_us) box_spin_wait(&s, peer_ready, &never);
    /* one look per wait, but the BOX_SPIN_PROBE_EVERY-th spins again */
    for (int i = 1; i < BOX_SPIN_PROBE_EVERY; i++) {
      Peer p = { 0, 2 };
      g_assert_false(box_spin_wait(&s, peer_ready, &p));
      g_assert_cmpint(p.calls, ==, 1);
    }
    Peer p = { 0, 2 };
    caught = box_spin_wait(&s, peer_ready, &p);
    /* caught there (the CPU not taken away meanwhile): spins fully again */
    if (caught) g_assert_cmpuint(s.limit_us, ==, BOX_SPIN_MAX_US);
  }
  g_assert_true(caught);
}

/* an answer there at once or within the spin; none, then one late */
static void test_caught(void)
{
  test_caught_at_once();
  test_caught_while_spinning();
}

static void test_missed(void)
{
  test_a_miss_spins_its_limit_then_less();
  test_given_up_it_looks_again_now_and_then();
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/spin/caught", test_caught);
  g_test_add_func("/spin/missed", test_missed);
  return g_test_run();
}
