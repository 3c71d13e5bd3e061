/* box/reaper.c: a child's status reaped here, one told by another reaper
 * (the workers' zygote), and one that is never told. */
#include "box/reaper.h"

#include <glib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child_exiting(int code)
{
  pid_t pid = fork();
  if (pid == 0) _exit(code);
  g_assert_cmpint(pid, >, 0);
  return pid;
}

static void test_reaped_here(void)
{
  pid_t pid = child_exiting(7);
  int status = box_reaper_wait(pid);
  g_assert_true(WIFEXITED(status));
  g_assert_cmpint(box_status_code(status), ==, 7);
}

static void test_told_by_another(void)
{
  pid_t pid = child_exiting(3);
  int status;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  box_reaper_store(pid, status);
  g_assert_cmpint(box_status_code(box_reaper_wait(pid)), ==, 3);
}

/* Reaped by someone who never tells (a zygote killed before it did): the
 * wait ends, taking the process as killed, instead of lasting forever. */
static void test_never_told(void)
{
  pid_t pid = child_exiting(0);
  int status;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  gint64 start = g_get_monotonic_time();
  int got = box_reaper_wait(pid);
  gint64 took_ms = (g_get_monotonic_time() - start) / 1000;
  g_assert_true(WIFSIGNALED(got));
  g_assert_cmpint(WTERMSIG(got), ==, SIGKILL);
  g_assert_cmpint(box_status_code(got), ==, 137);
  g_assert_cmpint(took_ms, <, 5000);
}

/* A status told late (within the grace) is the one returned. */
static gpointer tell_later(gpointer data)
{
  int *args = data;
  g_usleep(60 * 1000);
  box_reaper_store(args[0], args[1]);
  return NULL;
}

static void test_told_late(void)
{
  pid_t pid = child_exiting(5);
  int args[2];
  g_assert_cmpint(waitpid(pid, &args[1], 0), ==, pid);
  args[0] = pid;
  GThread *t = g_thread_new("teller", tell_later, args);
  g_assert_cmpint(box_status_code(box_reaper_wait(pid)), ==, 5);
  g_thread_join(t);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  box_reaper_init();
  g_test_add_func("/reaper/reaped-here", test_reaped_here);
  g_test_add_func("/reaper/told-by-another", test_told_by_another);
  g_test_add_func("/reaper/never-told", test_never_told);
  g_test_add_func("/reaper/told-late", test_told_late);
  return g_test_run();
}
