/* cmd_run.c — `box run`: start a box, run its agent, tear everything down.
 *
 * Order: config → policy → box directory and its lock → aliases → decision
 * log → private mount namespace and the FUSE mount → workers and broker →
 * agent.  Anything refused before the agent starts exits 1 with
 * "box: error: …"; a config or policy error creates nothing.
 */
#include "box/box-private.h"

#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *operator_home(void)
{
  const char *h = getenv("HOME");
  if (!h || !*h) {
    struct passwd *pw = getpwuid(getuid());
    h = pw ? pw->pw_dir : "/";
  }
  return box_canonical_path(h);
}

/* ---- roots, tables ---- */

static char **bound_roots(Boxd *d)
{
  GPtrArray *roots = g_ptr_array_new();
  const char *candidates[] = { d->operator_home, d->agent_home, d->workspace };
  for (int i = 0; i < 3; i++) {
    bool covered = false;
    for (guint k = 0; k < roots->len; k++)
      covered |= box_path_within(candidates[i], g_ptr_array_index(roots, k));
    if (!covered) g_ptr_array_add(roots, g_strdup(candidates[i]));
  }
  g_ptr_array_add(roots, NULL);
  return (char **)g_ptr_array_free(roots, FALSE);
}

BoxToolTable *boxd_table_of(const BoxProcessSpec *spec)
{
  BoxToolTable *t = g_new0(BoxToolTable, 1);
  t->label = spec->label;
  t->command = spec->command;
  t->read = spec->fs.read;
  t->write = spec->fs.write;
  t->read_file = spec->fs.read_file;
  t->write_file = spec->fs.write_file;
  t->exec = spec->fs.exec;
  t->deny = spec->fs.deny;
  t->env = spec->env;
  t->workspace = spec->workspace;
  return t;
}

/* Set by `box lua` (cmd_lua.c): the agent command instead of [agent] command. */
char **box_run_agent_override;

/* The workspace and the two homes, canonical, and where box.toml and
 * box_dir may not lie; 0, or the CLI's status after saying why. */
static int resolve_places(Boxd *d)
{
  g_autofree char *cwd = g_get_current_dir();
  const char *ws = d->config->agent.workspace ? d->config->agent.workspace : cwd;
  d->workspace = box_canonical_path(ws);
  struct stat st;
  if (!d->workspace || stat(d->workspace, &st) != 0 || !S_ISDIR(st.st_mode))
    return box_fail("invalid `[agent]` table: `workspace` %s is not an existing directory", ws);
  if (strcmp(d->workspace, d->operator_home) == 0)
    return box_fail(
      "invalid `[agent]` table: `workspace` %s is the operator's home; make a project "
      "directory and name it instead",
      d->workspace);
  const char *agent_home = g_hash_table_lookup(d->config->agent.env, "HOME");
  d->agent_home = agent_home ? box_canonical_path(agent_home) : g_strdup(d->operator_home);
  if (!d->agent_home)
    return box_fail("invalid `[agent]` table: `env.HOME` %s does not exist", agent_home);
  if (box_path_within(d->config->box_dir, d->workspace))
    return box_fail("invalid Box configuration: `box_dir` %s is equal to or below the agent's "
                    "workspace %s",
                    d->config->box_dir, d->workspace);
  if (box_path_within(d->config->path, d->config->box_dir))
    return box_fail("configuration source %s is inside `box_dir` %s", d->config->path,
                    d->config->box_dir);
  return 0;
}

/* A policy refused before any box state exists (spec/runtime.md §1 step 4,
 * §8.3, §8.7): the run's box_started, policy_refused and box_stopped, sent
 * where no box state is made for them: the declared targets, or the
 * default file of a box that exists already (its id, and its
 * private/telemetry/).  A box never run has no id yet: its records carry
 * a fresh one.  The counters `box ls` reads are not touched: a run of the
 * box may own them.  Best effort (§8.7): a target that will not open
 * records nothing, and says nothing past the refusal said already. */
static void record_policy_refused(Boxd *d, const char *reason)
{
  GPtrArray *declared = d->config->telemetry;
  /* the default file only in a box directory that is safely ours, as a run
   * judges it: none other can have put a link in its tree */
  struct stat st;
  bool ours = lstat(d->config->box_dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
              (st.st_mode & 07777) == 0700;
  g_autofree char *stored = ours ? boxd_stored_box_id(d->config->box_dir) : NULL;
  if (!declared->len && !stored) return;
  g_autofree char *box_id = stored ? g_strdup(stored) : boxd_mint_box_id();
  g_autofree char *run_id = g_uuid_string_random();
  BoxTelemetryRun run = { d->config->name,    box_id,           run_id,
                          d->config->box_dir, d->operator_home, NULL };
  g_autofree gpointer *targets = g_new0(gpointer, declared->len + 1);
  if (declared->len) memcpy(targets, declared->pdata, declared->len * sizeof(gpointer));
  BoxTelemetry *t = box_telemetry_open((const BoxTelemetryTarget *const *)targets, &run, NULL);
  if (!t) return;
  g_autofree char *policy_name = g_path_get_basename(d->config->policy);
  box_telemetry_control(t, "box_started", d->config->name, NULL, NULL);
  box_telemetry_control(t, "policy_refused", policy_name, reason, NULL);
  box_telemetry_stop(t, d->config->name, box_failure(), NULL);
}

/* The policy, before any box state (none: deny everything); 0, or the
 * CLI's status after saying why (and recording it). */
static int load_policy(Boxd *d)
{
  box_mcp_declare_namespaces(d->config);
  if (!d->config->policy) {
    d->policy = box_policy_new_empty();
    return 0;
  }
  g_autoptr(GError) error = NULL;
  g_autofree char *policy_path = box_canonical_path(d->config->policy);
  if (policy_path && box_path_within(policy_path, d->config->box_dir)) {
    int status =
      box_fail("policy source %s is inside `box_dir` %s", policy_path, d->config->box_dir);
    record_policy_refused(d, box_failure());
    return status;
  }
  d->policy = box_policy_load_file(d->config->policy, d->operator_home, &error);
  if (!d->policy) {
    int status = box_fail("policy file %s will not load: %s", d->config->policy, error->message);
    record_policy_refused(d, error->message);
    return status;
  }
  const GPtrArray *warnings = box_policy_warnings(d->policy);
  for (guint i = 0; warnings && i < warnings->len; i++)
    fprintf(stderr, "box: warning: %s\n", (const char *)g_ptr_array_index(warnings, i));
  return 0;
}

/* The policy's history, the decision log, the roots and the tool tables,
 * checked against the filesystem; 0, or the CLI's status after saying why. */
static int open_records_and_tables(Boxd *d)
{
  g_autoptr(GError) error = NULL;
  /* The targets first (spec/runtime.md §1 step 3): from here on every
   * refusal is recorded as the run's box_stopped. */
  g_autofree char *stats_path = g_build_filename(d->config->box_dir, "private", "stats", NULL);
  d->run_id = g_uuid_string_random();
  BoxTelemetryRun run = { d->config->name,    d->box_id,        d->run_id,
                          d->config->box_dir, d->operator_home, stats_path };
  GPtrArray *declared = d->config->telemetry;
  g_autofree gpointer *targets = g_new0(gpointer, declared->len + 1);
  if (declared->len) memcpy(targets, declared->pdata, declared->len * sizeof(gpointer));
  d->telemetry = box_telemetry_open((const BoxTelemetryTarget *const *)targets, &run, &error);
  if (!d->telemetry) return box_fail("%s", error->message);
  box_telemetry_control(d->telemetry, "box_started", d->config->name, NULL, NULL);
  if (d->config->policy) { /* loaded before any box state: recorded now */
    g_autofree char *policy_name = g_path_get_basename(d->config->policy);
    box_telemetry_control(d->telemetry, "policy_installed", policy_name, NULL, NULL);
  }
  d->log = box_decision_log_open_sink(box_telemetry_decisions, d->telemetry, d->box_id, d->run_id);
  /* A box that cannot keep the policy's history denies every request (the
   * policy says why). */
  g_autofree char *history_dir = g_build_filename(d->config->box_dir, "private", NULL);
  if (!box_policy_open_history(d->policy, history_dir, &error)) {
    fprintf(stderr, "box: warning: %s; every request will be denied\n", error->message);
    g_clear_error(&error);
  }
  d->socket_path = g_build_filename(d->config->box_dir, "run", "box.sock", NULL);
  d->roots = bound_roots(d);
  GPtrArray *tables = g_ptr_array_new();
  for (guint i = 0; i < d->config->tools->len; i++)
    g_ptr_array_add(tables, boxd_table_of(g_ptr_array_index(d->config->tools, i)));
  g_ptr_array_add(tables, NULL);
  d->tool_tables = (BoxToolTable **)g_ptr_array_free(tables, FALSE);
  d->agent_table = boxd_table_of(&d->config->agent);
  if (!box_config_check(d, &error)) return box_fail("%s", error->message);
  return 0;
}

/* The agent's argv: [agent] command (or box lua's), then the ARGS after
 * an optional "--"; the strings are borrowed. */
static GPtrArray *agent_argv_of(Boxd *d, char **rest)
{
  GPtrArray *agent_argv = g_ptr_array_new();
  for (char **c = box_run_agent_override ? box_run_agent_override : d->config->agent.command; *c;
       c++)
    g_ptr_array_add(agent_argv, *c);
  for (char **a = rest; a && *a; a++)
    if (!(a == rest && strcmp(*a, "--") == 0)) g_ptr_array_add(agent_argv, *a);
  g_ptr_array_add(agent_argv, NULL);
  return agent_argv;
}

char *boxd_run_end_detail(const Boxd *d, int status)
{
  if (box_failure()) return NULL;
  if (d->stop_signal) return g_strdup_printf("stopped by SIG%s", sigabbrev_np(d->stop_signal));
  return g_strdup_printf("the agent exited with status %d", status);
}

/* --quiet (or -q) before "--", taken out of argv: the startup disclosure
 * is not printed (warnings and errors still are). */
static bool take_quiet(int *argc, char **argv)
{
  bool quiet = false;
  int out = 0;
  for (int i = 0; i < *argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      while (i < *argc) argv[out++] = argv[i++];
      break;
    }
    if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
      quiet = true;
      continue;
    }
    argv[out++] = argv[i];
  }
  if (out < *argc) argv[out] = NULL;
  *argc = out;
  return quiet;
}

int box_verb_run(int argc, char **argv)
{
  /* Blocked before any thread exists (history's flusher starts early), so
   * every thread inherits the mask and only the main thread takes them. */
  sigset_t blocked;
  box_run_signals(&blocked);
  sigprocmask(SIG_BLOCK, &blocked, NULL);
  g_autofree char *config_path = NULL;
  g_auto(GStrv) rest = NULL;
  static const char help[] = "Starts the box described by FILE, runs its [agent] command with "
                             "ARGS appended, and exits with the agent's status.  --quiet: no "
                             "startup disclosure.";
  bool quiet = take_quiet(&argc, argv);
  if (!box_verb_parse("box run", "- run a box and its agent", "[--quiet] [-- ARGS…]", help, false,
                      &config_path, &rest, &argc, &argv))
    return 2;
  if (!config_path) {
    fprintf(stderr, "box: error: the following required arguments were not provided: --config "
                    "<FILE>\n");
    return 2;
  }
  g_autoptr(GError) error = NULL;
  Boxd d = { .listen_fd = -1, .worker_netns_fd = -1, .mcp_stop_fd = -1, .quiet = quiet };
  g_mutex_init(&d.lock);
  box_vfs_raise_fd_limit(&d.workload_nofile);
  box_tools_set_workload_fd_limit(&d.workload_nofile);
  d.operator_home = operator_home();
  d.operator_path = g_strdup(getenv("PATH"));
  if (!d.operator_home) return box_fail("cannot resolve the operator's home directory");
  d.config = box_config_load(config_path, d.operator_home, &error);
  if (!d.config) return box_fail("%s", error->message);
  /* Secrets are read once, now, and phantoms minted (spec/runtime.md §7). */
  if (!boxd_egress_prepare(&d, &error)) return box_fail("%s", error->message);
  box_tools_set_phantoms((const char *const *)d.phantom_env);
  int failed = resolve_places(&d);
  if (!failed) failed = load_policy(&d);
  if (failed) return failed;
  d.box_shell = box_sibling_binary("box-shell");
  if (!d.box_shell) return box_fail("box-shell is not installed beside box");
  int lock = boxd_box_dir_prepare(&d, &error);
  if (lock < 0) return box_fail("%s", error->message);
  if (!boxd_install_aliases(&d, &error)) return box_fail("%s", error->message);
  failed = open_records_and_tables(&d);
  int status = failed;
  if (!failed) {
    d.live_pids = g_hash_table_new(g_direct_hash, g_direct_equal);
    boxd_registry_add(&d);
    GPtrArray *agent_argv = agent_argv_of(&d, rest);
    status = boxd_serve(&d, (char **)agent_argv->pdata);
    g_ptr_array_free(agent_argv, TRUE);
    boxd_registry_remove(&d);
  }
  box_decision_log_close(d.log);
  close(lock);
  /* The one exit point (§8.7): box_stopped even when the run failed early,
   * unless the teardown watchdog is recording it and ending the run. */
  if (!boxd_claim_run_end())
    for (;;) pause();
  g_autofree char *why = boxd_run_end_detail(&d, status);
  box_telemetry_stop(d.telemetry, d.config->name, box_failure(), why);
  return status;
}
