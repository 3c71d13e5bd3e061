/* serve.c — a box from its mount to its teardown: the private mount
 * namespace and the FUSE mount, the workers, the gateway and the broker,
 * the agent and its signals, then everything ended in order. */
#include "box/box-private.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Ends the agent's process group: term, a grace second, then kill. */
static void stop_group(pid_t pgid)
{
  if (kill(-pgid, SIGTERM) != 0) return;
  for (int i = 0; i < 20; i++) {
    box_reaper_collect();
    if (kill(-pgid, 0) != 0) return;
    g_usleep(50 * 1000);
  }
  kill(-pgid, SIGKILL);
}

/* The signals only the main thread takes. */
void box_run_signals(sigset_t *set)
{
  sigemptyset(set);
  sigaddset(set, SIGCHLD);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGHUP);
}

#define TEARDOWN_LIMIT_S 10
/* then, for the run's last records (each receiver's final sends are
 * bounded at 1 s a request) */
#define RECORD_LIMIT_S 5

static int teardown_status;
/* The teardown's step under way, for the watchdog to name the one that hangs. */
static const char *volatile teardown_step = "its start";

typedef struct {
  Boxd *d;
  const char *live_dir;
} Watched;

static gint run_end_claimed;

bool boxd_claim_run_end(void)
{
  return g_atomic_int_compare_and_exchange(&run_end_claimed, 0, 1);
}

static gpointer record_run_end(gpointer data)
{
  Watched *w = data;
  g_autofree char *why = boxd_run_end_detail(w->d, teardown_status);
  g_autofree char *detail = g_strdup_printf("%s%steardown took longer than %d s", why ? why : "",
                                            why ? "; " : "", TEARDOWN_LIMIT_S);
  box_telemetry_finish(w->d->telemetry, w->d->config->name, box_failure(), detail);
  _exit(teardown_status);
}

/* A teardown that hangs (a process still holding the mount, say) must not
 * leave the box looking alive: what says so is cleared before the run
 * ends.  The mount goes with boxd's namespace; its directories once it has.
 * The run's end is still recorded (box_stopped, the kernel refusals still
 * counted, what each receiver holds: §8.4, §8.7), saying why; nothing is
 * freed, as the teardown may still be using it.  If box run is recording
 * it already, the teardown is over and the run ends by itself. */
static gpointer teardown_watchdog(gpointer data)
{
  Watched *w = data;
  g_usleep((gulong)TEARDOWN_LIMIT_S * G_USEC_PER_SEC);
  if (!boxd_claim_run_end()) return NULL;
  fprintf(stderr, "box: warning: teardown took longer than %d s (at %s); ending the run now\n",
          TEARDOWN_LIMIT_S, teardown_step);
  boxd_live_clear(w->live_dir, true);
  umount2(w->d->mountpoint, MNT_DETACH);
  if (rmdir(w->d->mountpoint) == 0 && rmdir(w->d->staging_dir) == 0) boxd_mount_dirs_forget(w->d);
  /* on a thread of its own: what hangs the teardown may hold a lock the
   * records need, and the run ends within a bound all the same */
  g_thread_unref(g_thread_new("box-run-end", record_run_end, w));
  g_usleep((gulong)RECORD_LIMIT_S * G_USEC_PER_SEC);
  _exit(teardown_status);
}

/* The box's view, mounted in a mount namespace of boxd's own, and
 * *live_dir, where the mount publishes running commands; 0, or the CLI's
 * status after saying why. */
static int mount_view(Boxd *d, char **live_dir)
{
  g_autoptr(GError) error = NULL;
  /* A mount namespace of our own: the mount vanishes with boxd whatever
   * happens, and nothing of ours propagates to the host. */
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
    return box_fail("containment setup failed during mount namespace: %s", g_strerror(errno));
  boxd_mount_dirs_clear_stale(d);
  d->mountpoint = g_dir_make_tmp("boxfs-mnt-XXXXXX", &error);
  d->staging_dir = d->mountpoint ? g_dir_make_tmp("boxfs-view-XXXXXX", &error) : NULL;
  boxd_mount_dirs_record(d);
  if (!d->staging_dir) return box_fail("cannot create the mount point: %s", error->message);
  for (int i = 0; d->roots[i]; i++)
    if (box_path_within(d->mountpoint, d->roots[i]) || box_path_within(d->staging_dir, d->roots[i]))
      return box_fail("the mount point %s lies inside the bound root %s; set TMPDIR elsewhere",
                      d->mountpoint, d->roots[i]);
  const char *floor_trees[] = { d->config->box_dir, NULL };
  const char *floor_files[] = { d->config->path, d->config->policy, NULL };
  *live_dir = boxd_live_prepare(d);
  boxd_checkpoints_start(d);
  BoxVfsConfig vc = {
    .mountpoint = d->mountpoint,
    .roots = (const char *const *)d->roots,
    .operator_home = d->operator_home,
    .floor_trees = floor_trees,
    .floor_files = floor_files,
    .decide = boxd_vfs_decide,
    .record = boxd_vfs_record,
    .outcome = boxd_vfs_outcome,
    .decide_data = d,
    /* box_policy_decide never waits; without history rules a verdict is a
     * function of the request alone */
    .decide_prompt = true,
    .cache_decisions = !box_policy_reads_history(d->policy),
    .note = boxd_vfs_note,
    .decide_quiet = boxd_vfs_decide_quiet,
    .beneath = boxd_vfs_beneath,
    .history_batch = boxd_vfs_history_batch,
    .ram_per_box = d->config->agent.ram_per_box,
    .ram_max_bytes = d->config->agent.ram_max_bytes,
    .ram_max_inodes = d->config->agent.ram_max_inodes,
    .live_dir = *live_dir,
    .in_user_namespace = boxd_in_user_namespace(),
    .changed = d->checkpoints ? boxd_checkpoints_changed : NULL,
    .changed_data = d,
  };
  vc.premounted_at = boxd_premounted(&vc.premounted_fd);
  boxd_host_ids(&vc.host_uid, &vc.host_gid);
  d->vfs = box_vfs_start(&vc, &error);
  if (!d->vfs) {
    rmdir(d->mountpoint);
    rmdir(d->staging_dir);
    return box_fail("cannot mount the box's view: %s", error->message);
  }
  boxd_checkpoints_run(d);
  return 0;
}

/* Until the agent ends: the signals of set are forwarded to its group, and
 * if it lingers a second after the first, it is killed.  Its status. */
static int wait_for_agent(pid_t agent, const sigset_t *set, int *stop_signal)
{
  int status;
  bool stopping = false;
  gint64 kill_at = 0;
  for (;;) {
    /* SIGCHLD wakes it for the agent's end, also when another thread
     * reaped it (box_reaper_collect); a clock only while the agent is given
     * its second to end, so an idle boxd's main thread sleeps. */
    struct timespec tick = { 0, 100 * 1000 * 1000 };
    siginfo_t info;
    int sig = sigtimedwait(set, &info, stopping ? &tick : NULL);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      /* Forward to the agent's group; if it lingers, it is killed. */
      kill(-agent, sig == SIGHUP ? SIGTERM : sig);
      if (!*stop_signal) *stop_signal = sig;
      if (!stopping) {
        stopping = true;
        kill_at = g_get_monotonic_time() + G_TIME_SPAN_SECOND;
      }
    }
    box_reaper_collect();
    int wstatus;
    if (box_reaper_poll(agent, &wstatus)) {
      status = box_status_code(wstatus);
      break;
    }
    if (stopping && g_get_monotonic_time() > kill_at) kill(-agent, SIGKILL);
  }
  stop_group(agent);
  return status;
}

/* Ends everything after the mount, in order, then the mount. */
static void teardown(Boxd *d, int status, const char *live_dir)
{
  d->stopping = true;
  /* Teardown waits on children and threads; if one of them never answers,
   * the run still ends with the agent's status (PDEATHSIG ends what is
   * left, and the mount dies with boxd's mount namespace). */
  teardown_status = status;
  static Watched watched;
  watched = (Watched){ d, live_dir };
  g_thread_unref(g_thread_new("box-watchdog", teardown_watchdog, &watched));
  /* tests: a teardown that hangs with the mount still up */
  teardown_step = "the test's stall";
  if (g_getenv("BOXFS_TEST_TEARDOWN_STALL"))
    g_usleep((gulong)(TEARDOWN_LIMIT_S + 20) * G_USEC_PER_SEC);
  teardown_step = "the broker's stop";
  boxd_broker_stop(d);
  /* An agent's MCP client may hold its session open as long as it likes;
   * the drain below would wait for it, and what it holds (an http
   * server's streams through the gateway) then holds up the gateway's
   * end too.  Every session ends now, as if its agent had gone. */
  if (d->mcp_stop_fd >= 0 && eventfd_write(d->mcp_stop_fd, 1) != 0)
    g_printerr("box: warning: MCP sessions not told of the end: %s\n", g_strerror(errno));
  teardown_step = "the tracked processes' end";
  boxd_kill_tracked(d);
  teardown_step = "the broker's drain";
  boxd_broker_drain(d);
  teardown_step = "the workers' stop";
  boxd_workers_stop(d);
  teardown_step = "the gateway's stop";
  boxd_gateway_stop(d);
  teardown_step = "the OTLP receiver's stop";
  box_otel_receiver_stop(g_steal_pointer(&d->otel));
  boxd_egress_clear(d);
  teardown_step = "the reaper's collection";
  box_reaper_collect();
  teardown_step = "the refusals' stop";
  boxd_refusals_stop(g_steal_pointer(&d->refusals));
  /* Prepared tool views hold binds of the mount: drop them before it goes. */
  teardown_step = "the tools' views";
  box_tools_release_views();
  teardown_step = "the mount's stop";
  box_vfs_stop(d->vfs);
  teardown_step = "the checkpoints' stop";
  boxd_checkpoints_stop(d);
  rmdir(d->mountpoint);
  rmdir(d->staging_dir);
  boxd_mount_dirs_forget(d);
  boxd_live_clear(live_dir, true);
}

int boxd_serve(Boxd *d, char **agent_argv)
{
  sigset_t set;
  box_run_signals(&set);
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  box_reaper_init();
  g_autofree char *live_dir = NULL;
  int failed = mount_view(d, &live_dir);
  if (failed) return failed;
  g_autoptr(GError) error = NULL;
  int status = 1;
  /* Before the gateway, which relays it into the sandboxes' namespaces. */
  d->otel = box_otel_receiver_start(d->telemetry, &error);
  if (!d->otel) {
    g_printerr("box: warning: %s; the agent's own telemetry is not received\n", error->message);
    g_clear_error(&error);
  } else {
    g_autofree char *endpoint =
      g_strdup_printf("http://127.0.0.1:%d", box_otel_receiver_port(d->otel));
    box_tools_set_telemetry_endpoint(endpoint);
  }
  d->mcp_stop_fd = eventfd(0, EFD_CLOEXEC);
  if (!boxd_workers_start(d, &error) || !boxd_gateway_start(d, &error) ||
      !boxd_broker_start(d, &error)) {
    box_fail("%s", error->message);
  } else {
    /* Tools and the agent reach the network through the gateway only. */
    box_tools_set_gateway(d->gateway_url, d->gateway_ca_path, boxd_gateway_net_setup, d);
    /* Contained tools share the workers' route-less namespace and its relay. */
    box_tools_set_netns(d->worker_netns_fd);
    boxd_refusals_start(d);
    pid_t agent = box_agent_start(d, agent_argv, &error);
    if (agent < 0)
      box_fail("%s", error->message);
    else
      status = wait_for_agent(agent, &set, &d->stop_signal);
  }
  teardown(d, status, live_dir);
  return status;
}
