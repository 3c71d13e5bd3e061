/* test_vfs.c — the FUSE mount, for real: mounts under a temporary directory,
 * runs file operations from a process in its own PID namespace (placed as
 * the worker of a command) and checks the decisions, denials, floors and the
 * RAM roots.  Needs root and /dev/fuse; skipped otherwise.  The tests are in
 * test_vfs_*.c, by what they test; the order below is the order they run. */
#include "tests/unit/test_vfs.h"

#include <signal.h>

static void skip_all(void)
{
  g_test_skip("needs root and /dev/fuse");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
    g_test_message("needs root and /dev/fuse");
    g_test_add_func("/vfs/skipped", skip_all);
    return g_test_run();
  }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGABRT, on_abort);
  g_test_add("/vfs/unplaced", Fx, NULL, fx_setup, test_unplaced, fx_teardown);
  g_test_add("/vfs/decision-cache", Fx, FX_CACHED, fx_setup, test_decision_cache, fx_teardown);
  g_test_add("/vfs/passthrough", Fx, NULL, fx_setup, test_passthrough, fx_teardown);
  g_test_add("/vfs/readdirplus", Fx, NULL, fx_setup, test_readdirplus, fx_teardown);
  g_test_add("/vfs/cached/readdirplus", Fx, FX_CACHED, fx_setup, test_readdirplus, fx_teardown);
  g_test_add("/vfs/cached/quiet-probe", Fx, FX_CACHED, fx_setup, test_quiet_probe, fx_teardown);
  g_test_add("/vfs/cached/refused-dirs", Fx, FX_CACHED_BENEATH, fx_setup, test_refused_dirs,
             fx_teardown);
  g_test_add("/vfs/create-raced", Fx, NULL, fx_setup, test_create_raced, fx_teardown);
  g_test_add("/vfs/cached/create-raced", Fx, FX_CACHED, fx_setup, test_create_raced, fx_teardown);
  g_test_add("/vfs/cached/watched-entries", Fx, FX_CACHED, fx_setup, test_watched_entries,
             fx_teardown);
  g_test_add("/vfs/watched-entries", Fx, NULL, fx_setup, test_watched_entries, fx_teardown);
  g_test_add("/vfs/cached/settled-stats", Fx, FX_CACHED, fx_setup, test_settled_stats, fx_teardown);
  g_test_add("/vfs/cached/root-creates", Fx, FX_CACHED, fx_setup, test_root_creates, fx_teardown);
  g_test_add("/vfs/cached/blanked-lookup", Fx, FX_CACHED_NO_PT, fx_setup, test_blanked_lookup,
             fx_teardown);
  /* the decision tests again, decided on the loop thread with the cache */
  g_test_add("/vfs/cached/pass-decisions", Fx, FX_CACHED, fx_setup, test_pass_decisions,
             fx_teardown);
  g_test_add("/vfs/cached/ram", Fx, FX_CACHED, fx_setup, test_ram, fx_teardown);
  g_test_add("/vfs/cached/concurrent", Fx, FX_CACHED, fx_setup, test_concurrent, fx_teardown);
  g_test_add("/vfs/cached/git", Fx, FX_CACHED, fx_setup, test_git, fx_teardown);
  g_test_add("/vfs/cached/race-symlink-swap", Fx, FX_CACHED, fx_setup, test_race, fx_teardown);
  g_test_add("/vfs/cached/outcomes", Fx, FX_CACHED, fx_setup, test_outcomes, fx_teardown);
  g_test_add("/vfs/pass-decisions", Fx, NULL, fx_setup, test_pass_decisions, fx_teardown);
  g_test_add("/vfs/setup-state", Fx, NULL, fx_setup, test_setup_state, fx_teardown);
  g_test_add("/vfs/ram", Fx, NULL, fx_setup, test_ram, fx_teardown);
  g_test_add("/vfs/concurrent", Fx, NULL, fx_setup, test_concurrent, fx_teardown);
  g_test_add("/vfs/git", Fx, NULL, fx_setup, test_git, fx_teardown);
  g_test_add("/vfs/race-symlink-swap", Fx, NULL, fx_setup, test_race, fx_teardown);
  g_test_add("/vfs/pending-end", Fx, NULL, fx_setup, test_pending_end, fx_teardown);
  g_test_add("/vfs/pending-interrupt", Fx, NULL, fx_setup, test_pending_interrupt, fx_teardown);
  g_test_add("/vfs/nested-pidns", Fx, NULL, fx_setup, test_nested_pidns, fx_teardown);
  g_test_add("/vfs/outcomes", Fx, NULL, fx_setup, test_outcomes, fx_teardown);
  g_test_add("/vfs/history-batches", Fx, NULL, fx_setup, test_history_batches, fx_teardown);
  g_test_add("/vfs/cached/history-batches", Fx, FX_CACHED, fx_setup, test_history_batches,
             fx_teardown);
  return g_test_run();
}
