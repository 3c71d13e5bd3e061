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
  /* One fixture for all; the data says how fx_setup mounts (test_vfs.h). */
  static const struct {
    const char *path;
    gconstpointer mount;
    void (*func)(Fx *, gconstpointer);
  } cases[] = {
    { "/vfs/unplaced", NULL, test_unplaced },
    { "/vfs/decision-cache", FX_CACHED, test_decision_cache },
    { "/vfs/passthrough", NULL, test_passthrough },
    { "/vfs/readdirplus", NULL, test_readdirplus },
    { "/vfs/cached/readdirplus", FX_CACHED, test_readdirplus },
    { "/vfs/cached/quiet-probe", FX_CACHED, test_quiet_probe },
    { "/vfs/cached/refused-dirs", FX_CACHED_BENEATH, test_refused_dirs },
    { "/vfs/create-raced", NULL, test_create_raced },
    { "/vfs/cached/create-raced", FX_CACHED, test_create_raced },
    { "/vfs/cached/watched-entries", FX_CACHED, test_watched_entries },
    { "/vfs/watched-entries", NULL, test_watched_entries },
    { "/vfs/slot-root-kept", NULL, test_slot_root_kept },
    { "/vfs/cached/settled-stats", FX_CACHED, test_settled_stats },
    { "/vfs/cached/root-creates", FX_CACHED, test_root_creates },
    { "/vfs/cached/blanked-lookup", FX_CACHED_NO_PT, test_blanked_lookup },
    /* the decision tests again, decided on the loop thread with the cache */
    { "/vfs/cached/pass-decisions", FX_CACHED, test_pass_decisions },
    { "/vfs/cached/ram", FX_CACHED, test_ram },
    { "/vfs/cached/concurrent", FX_CACHED, test_concurrent },
    { "/vfs/cached/git", FX_CACHED, test_git },
    { "/vfs/cached/race-symlink-swap", FX_CACHED, test_race },
    { "/vfs/cached/outcomes", FX_CACHED, test_outcomes },
    { "/vfs/pass-decisions", NULL, test_pass_decisions },
    { "/vfs/setup-state", NULL, test_setup_state },
    { "/vfs/ram", NULL, test_ram },
    { "/vfs/concurrent", NULL, test_concurrent },
    { "/vfs/git", NULL, test_git },
    { "/vfs/race-symlink-swap", NULL, test_race },
    { "/vfs/pending-end", NULL, test_pending_end },
    { "/vfs/pending-interrupt", NULL, test_pending_interrupt },
    { "/vfs/nested-pidns", NULL, test_nested_pidns },
    { "/vfs/outcomes", NULL, test_outcomes },
    { "/vfs/history-batches", NULL, test_history_batches },
    { "/vfs/cached/history-batches", FX_CACHED, test_history_batches },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    g_test_add(cases[i].path, Fx, cases[i].mount, fx_setup, cases[i].func, fx_teardown);
  return g_test_run();
}
