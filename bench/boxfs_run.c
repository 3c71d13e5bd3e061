/* boxfs-run — runs one program as the Shell worker of one command of a
 * stand-alone boxfs mount, with real policy decisions and a real decision
 * log.  Used by bench/mount, the POSIX suite, the fsx checker and stress-ng
 * runs (tests/posix/), never by boxd.
 *
 *   boxfs-run --root DIR [--root DIR]... [--policy FILE] [--log FILE]
 *             [--history DIR] [--floor FILE]... [--floor-tree DIR] [--tool]
 *             -- PROGRAM [ARGS...]
 *
 * --history DIR: the policy's durable history in DIR and the vfs's outcome
 * raiser, as boxd runs them (every permitted operation records its outcome).
 * --floor FILE, --floor-tree DIR: the reach floor's authority files and
 * trusted tree, as boxd gives it its box.toml, policy and box directory.
 *
 * Mounts under a fresh /tmp/boxfs-run-XXXXXX, starts the program in a new
 * PID namespace placed as command 0's worker (decisions on; --tool: placed
 * as a tool, no decisions), with BOXFS_DIR=<mount>/pass<first root> in its
 * environment (and BOXFS_DAEMON_PID, the daemon's own pid) and that as its
 * working directory.  Without --policy every
 * fs request is permitted (by a real policy: `permit(principal, action,
 * resource);`).  Prints "boxfs-run: N decisions (D denied)" and "boxfs-run: F
 * nodes past the descriptor budget of B" on stderr, then
 * unmounts, and exits with the program's status. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include "policy/policy.h"
#include "policy/decision_log.h"
#include "policy/history.h"
#include "vfs/vfs.h"

#include "bench_args.h"

typedef struct {
  BoxPolicy *policy;
  BoxDecisionLog *log;
  gint decisions;
  gint denied;
} Run;

static BoxDecision *run_decide(void *data, int command, const char *action, json_object *input)
{
  Run *r = data;
  (void)command;
  return box_policy_decide(r->policy, action, input);
}

static void run_record(void *data, int command, const char *action, json_object *input,
                       const BoxDecision *d)
{
  Run *r = data;
  (void)command;
  g_atomic_int_inc(&r->decisions);
  if (d->verdict != BOX_VERDICT_PERMIT) g_atomic_int_inc(&r->denied);
  if (r->log) box_decision_log_append_queued(r->log, action, input, d, NULL);
}

/* As boxd's raiser (box/decide.c): the outcome of a permitted operation. */
static void run_outcome(void *data, int command, const char *action, json_object *input,
                        const char *result)
{
  Run *r = data;
  (void)command;
  box_policy_record_outcome(r->policy, action, input, result);
}

static BoxDecision *run_decide_quiet(void *data, int command, const char *action,
                                     json_object *input)
{
  Run *r = data;
  (void)command;
  return box_policy_decide_quiet(r->policy, action, input);
}

static void run_note(void *data, int command, const char *action, json_object *input,
                     const BoxDecision *d)
{
  Run *r = data;
  (void)command;
  box_policy_record_request(r->policy, action, input, d->verdict == BOX_VERDICT_PERMIT);
}

static void run_history_batch(void *data, bool begin)
{
  Run *r = data;
  if (begin)
    box_policy_history_batch_begin(r->policy);
  else
    box_policy_history_batch_end(r->policy);
}

static char mnt_path[4096];
static void on_fatal(int sig)
{
  if (mnt_path[0]) umount2(mnt_path, MNT_DETACH);
  signal(sig, SIG_DFL);
  raise(sig);
}

int main(int argc, char **argv)
{
  GPtrArray *roots = g_ptr_array_new();
  GPtrArray *floor_files = g_ptr_array_new(), *floor_trees = g_ptr_array_new();
  const char *policy_file = NULL, *log_file = NULL, *history_dir = NULL;
  bool tool = false;
  int i = 1;
  /* the options with a value: a file kept as given, or a path resolved
   * and added to its list */
  const struct {
    const char *name;
    const char **value;
    GPtrArray *paths;
  } opts[] = { { "--root", NULL, roots },        { "--policy", &policy_file, NULL },
               { "--log", &log_file, NULL },     { "--history", &history_dir, NULL },
               { "--floor", NULL, floor_files }, { "--floor-tree", NULL, floor_trees } };
  for (; i < argc; i++) {
    const char *v = NULL;
    size_t o = 0;
    while (o < G_N_ELEMENTS(opts) && !(v = bench_arg(argc, argv, &i, opts[o].name))) o++;
    if (v && opts[o].value) {
      *opts[o].value = v;
    } else if (v) {
      char *real = realpath(v, NULL);
      if (!real) {
        fprintf(stderr, "boxfs-run: %s: %s\n", v, g_strerror(errno));
        return 2;
      }
      g_ptr_array_add(opts[o].paths, real);
    } else if (bench_args_end(argv, &i)) {
      break;
    } else if (strcmp(argv[i], "--tool") == 0) {
      tool = true;
    } else {
      fprintf(
        stderr,
        "usage: boxfs-run --root DIR [--policy FILE] [--log FILE] [--history DIR] [--floor FILE]"
        " [--floor-tree DIR] [--tool] -- PROG [ARGS]\n");
      return 2;
    }
  }
  if (roots->len == 0 || i >= argc) {
    fprintf(stderr, "boxfs-run: need --root and a program\n");
    return 2;
  }
  g_ptr_array_add(roots, NULL);
  g_ptr_array_add(floor_files, NULL);
  g_ptr_array_add(floor_trees, NULL);

  Run run = { 0 };
  GError *err = NULL;
  run.policy = policy_file
                 ? box_policy_load_file(policy_file, NULL, &err)
                 : box_policy_load_string("permit(principal, action, resource);", NULL, &err);
  if (!run.policy) {
    fprintf(stderr, "boxfs-run: policy: %s\n", err->message);
    return 2;
  }
  if (history_dir && !box_policy_open_history(run.policy, history_dir, &err)) {
    fprintf(stderr, "boxfs-run: history: %s\n", err->message);
    return 2;
  }
  char tmpl[] = "/tmp/boxfs-run-XXXXXX";
  if (!mkdtemp(tmpl)) {
    perror("boxfs-run: mkdtemp");
    return 2;
  }
  if (log_file) {
    run.log = box_decision_log_open(log_file, "boxfs-run", "run", &err);
    if (!run.log) {
      fprintf(stderr, "boxfs-run: log: %s\n", err->message);
      return 2;
    }
  }
  chmod(tmpl, 0755); /* callers of other uids walk through it */
  g_strlcpy(mnt_path, tmpl, sizeof mnt_path);
  signal(SIGABRT, on_fatal);
  signal(SIGSEGV, on_fatal);
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);

  BoxVfsConfig cfg = {
    .mountpoint = tmpl,
    .roots = (const char *const *)roots->pdata,
    .operator_home = NULL,
    .floor_files = (const char *const *)floor_files->pdata,
    .floor_trees = (const char *const *)floor_trees->pdata,
    .decide = run_decide,
    .record = run_record,
    .decide_data = &run,
    .outcome = history_dir ? run_outcome : NULL,
    .note = run_note,
    .decide_quiet = run_decide_quiet,
    .history_batch = history_dir ? run_history_batch : NULL,
    .decide_prompt = true,
    .cache_decisions = !box_policy_reads_history(run.policy),
  };
  struct rlimit workload_nofile;
  box_vfs_raise_fd_limit(&workload_nofile);
  BoxVfs *vfs = box_vfs_start(&cfg, &err);
  if (!vfs) {
    fprintf(stderr, "boxfs-run: %s\n", err->message);
    rmdir(tmpl);
    return 2;
  }
  int cmd = box_vfs_command_new(vfs);
  char *dir = box_vfs_pass_path(vfs, g_ptr_array_index(roots, 0));

  char self[16];
  snprintf(self, sizeof self, "%d", (int)getpid());
  int go[2], pidp[2];
  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(pidp, O_CLOEXEC) < 0) return 2;
  pid_t mid = fork();
  if (mid == 0) {
    for (int fd = 3; fd < 65536; fd++)
      if (fd != go[0] && fd != pidp[1]) close(fd);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (unshare(CLONE_NEWPID) != 0) _exit(120);
    pid_t w = fork();
    if (w == 0) {
      char b;
      if (read(go[0], &b, 1) != 1) _exit(121);
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      (void)setrlimit(RLIMIT_NOFILE, &workload_nofile);
      g_setenv("BOXFS_DIR", dir, TRUE);
      g_setenv("BOXFS_DAEMON_PID", self, TRUE); /* mount-work's per-phase daemon CPU */
      if (chdir(dir) < 0) _exit(122);
      execvp(argv[i], argv + i);
      fprintf(stderr, "boxfs-run: %s: %s\n", argv[i], g_strerror(errno));
      _exit(127);
    }
    if (w < 0 || write(pidp[1], &w, sizeof w) != sizeof w) _exit(123);
    int st;
    if (waitpid(w, &st, 0) != w) _exit(124);
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  }
  close(go[0]);
  close(pidp[1]);
  pid_t w = -1;
  int status = 125;
  if (mid > 0 && read(pidp[0], &w, sizeof w) == sizeof w &&
      box_vfs_command_attach(vfs, cmd, w, tool, &err)) {
    box_vfs_command_set_running(vfs, cmd, true);
    if (write(go[1], "g", 1) != 1) perror("boxfs-run: go");
  } else if (err) {
    fprintf(stderr, "boxfs-run: %s\n", err->message);
  }
  close(go[1]);
  int st;
  if (mid > 0 && waitpid(mid, &st, 0) == mid) status = WIFEXITED(st) ? WEXITSTATUS(st) : 125;
  box_vfs_command_end(vfs, cmd);
  guint budget;
  guint64 fdless = box_vfs_debug_fdless_nodes(vfs, &budget);
  box_vfs_stop(vfs);
  rmdir(tmpl);
  fprintf(stderr, "boxfs-run: %d decisions (%d denied)\n", run.decisions, run.denied);
  fprintf(stderr, "boxfs-run: %" G_GUINT64_FORMAT " nodes past the descriptor budget of %u\n",
          fdless, budget);
  if (run.log) box_decision_log_close(run.log);
  box_policy_free(run.policy);
  g_free(dir);
  return status;
}
