/* box-private.h — the daemon's wiring and the CLI's verbs (private to box/). */
#ifndef BOX_BOX_PRIVATE_H
#define BOX_BOX_PRIVATE_H

#include <stdbool.h>
#include <signal.h>
#include <sys/types.h>
#include <glib.h>
#include <json-c/json.h>

#include "box/config.h"
#include "policy/policy.h"
#include "policy/decision_log.h"
#include "policy/history.h"
#include "policy/path.h"
#include "telemetry/telemetry.h"
#include "tools/tools.h"
#include "vfs/vfs.h"

/* cli.c: the errors of box run's steps (the box directory, the
 * aliases, the config's filesystem checks, the agent, the gateway's
 * wiring).  Each message is what "box: error: " prefixes. */
#define BOX_BOXD_ERROR (box_boxd_error_quark())
GQuark box_boxd_error_quark(void);
typedef enum {
  BOX_BOXD_ERROR_FAILED = 1,
} BoxBoxdError;

typedef struct Boxd Boxd;
typedef struct BoxRefusals BoxRefusals;

struct Boxd {
  struct rlimit workload_nofile; /* RLIMIT_NOFILE as `box run` started: what it runs gets it */
  BoxConfig *config;
  BoxPolicy *policy;
  BoxDecisionLog *log;
  BoxTelemetry *telemetry; /* the log's targets, control records, counters */
  BoxRefusals *refusals;   /* seccomp's refusals observed (refusals.c), or NULL */
  BoxOtelReceiver *otel;   /* the agent's own telemetry (§8.5), or NULL */
  BoxVfs *vfs;
  char *box_id;
  char *run_id;
  char *operator_home; /* canonical */
  char *operator_path; /* PATH of `box run` */
  char *agent_home;    /* canonical */
  char *workspace;     /* canonical */
  char **roots;        /* bound roots, deduplicated */
  char *mountpoint;
  char *staging_dir; /* empty directory tool views are built on */
  char *box_shell;   /* path of the box-shell binary */
  char *socket_path;
  int listen_fd;
  BoxToolTable **tool_tables; /* NULL-terminated */
  BoxToolTable *agent_table;
  GMutex lock;
  GHashTable *live_pids; /* pid -> kind: every worker and tool init alive */
  int worker_netns_fd;   /* the route-less network namespace workers share, or -1 */
  /* The egress gateway (gateway_wire.c), NULL until started. */
  struct BoxGateway *gateway;
  int gateway_port;      /* 127.0.0.1:<port> on the host and in every relayed namespace */
  char *gateway_url;     /* "http://127.0.0.1:<port>" (the proxy variables' value) */
  char *gateway_ca_path; /* <box_dir>/trust/cert.pem */
  /* boxd_gateway_worker_env rendered once the gateway listens (atomic:
   * the workers' fork requests read it from other threads), else NULL. */
  char *worker_env_json;
  /* The `[egress.<name>]` routes with their secrets (gateway_wire.c), and
   * the phantom of each as "NAME=phantom" (NULL-terminated, never NULL
   * after boxd_egress_prepare): in every process's environment. */
  struct BoxdEgress *egress;
  char **phantom_env;
  bool stopping;
  int mcp_stop_fd; /* eventfd, readable once teardown begins: every MCP session ends, or -1 */
  struct BoxdCheckpoints *checkpoints; /* checkpoint_wire.c; NULL when off */
  int stop_signal; /* the signal that stopped the agent (SIGTERM: box stop), or 0 */
  bool quiet;      /* box run --quiet: no startup disclosure */
};

/* box_dir.c: creates or reopens the box directory, checks it is safe,
 * reads or mints d->box_id; returns the fd holding the run's lock, or -1. */
int boxd_box_dir_prepare(Boxd *d, GError **error);
/* The run's end, recorded once (box_stopped, §8.7): by box run once the
 * teardown is done, or by the teardown watchdog when it ends a teardown
 * that hangs.  The first caller claims it (true); box run, coming second,
 * waits for the watchdog to end the run. */
bool boxd_claim_run_end(void);
/* What box_stopped's detail says of a run that got as far as its agent
 * (status: the agent's), newly allocated; NULL when a failure refused the
 * run (box_failure() is its reason). */
char *boxd_run_end_detail(const Boxd *d, int status);
/* The box id box_dir/private/box-id holds, or NULL when there is none
 * valid (no box yet, or a directory that is no box's); reads only. */
char *boxd_stored_box_id(const char *box_dir);
/* A fresh box id, stored nowhere. */
char *boxd_mint_box_id(void);
/* box_dir.c: the record of d->mountpoint and d->staging_dir in private/,
 * so that the next run removes them should this one be killed. */
void boxd_mount_dirs_clear_stale(Boxd *d);
void boxd_mount_dirs_record(Boxd *d);
void boxd_mount_dirs_forget(Boxd *d);
/* box_dir.c: private/live (box.json and the vfs's records of running
 * commands, for `box mount`): prepared at start (NULL when it cannot be),
 * cleared at teardown. */
char *boxd_live_prepare(Boxd *d);
void boxd_live_clear(const char *dir, bool remove_dir);

/* aliases.c: installs <box_dir>/bin/zsh, bash and sh as read-only copies
 * of box-alias, replacing (and saying so) any that is no longer one. */
bool boxd_install_aliases(Boxd *d, GError **error);

/* serve.c: the signals only the main thread takes. */
void box_run_signals(sigset_t *set);
/* serve.c: everything from the mount to teardown (signals are handled
 * there only); returns the agent's status, or 1. */
int boxd_serve(Boxd *d, char **agent_argv);

/* For an ordinary user: a user namespace of boxd's own, where it is uid 0,
 * entered before any thread exists, then box's argv run again in it;
 * returns only as root (0), or with the CLI's status after saying which
 * setting refuses it. */
int boxd_enter_user_namespace(char **argv);
/* boxd runs in a user namespace that is not the host's. */
bool boxd_in_user_namespace(void);
/* Where fusermount3 mounted the box's FUSE before the namespace was
 * entered, and *fd its device; NULL (and -1) where boxd mounts it. */
const char *boxd_premounted(int *fd);
/* The FUSE mount fusermount3 makes for this user, in a new private
 * directory (*at), and its /dev/fuse; *alive is a pipe's end: once every
 * process holding it is gone, the mount is detached and the directory
 * removed.  -1 after saying why. */
int box_fusermount(bool allow_other, char **at, int *alive);
/* fusermount3 mounts FUSE at mnt itself, for an ordinary user's view
 * (box mount): its /dev/fuse, or -1 after saying why.  Undone with
 * box_fusermount_unmount. */
int box_fusermount_at(const char *mnt, bool allow_other, bool read_only);
void box_fusermount_unmount(const char *mnt);
/* The host's uid and gid of this namespace's 0. */
void boxd_host_ids(uid_t *uid, gid_t *gid);

#include "box/reaper.h"

/* decide.c: ask policy and log, in one place. */
BoxDecision *boxd_decide(Boxd *d, const char *action, json_object *input,
                         const char *const *command_args);
/* As boxd_decide, with which argv words the script spelled literally (the
 * log redacts the others); literal NULL: all literal. */
BoxDecision *boxd_decide_args(Boxd *d, const char *action, json_object *input,
                              const char *const *command_args, const bool *literal);
BoxDecision *boxd_vfs_decide(void *data, int command, const char *action, json_object *input);
BoxDecision *boxd_vfs_decide_quiet(void *data, int command, const char *action, json_object *input);
bool boxd_vfs_beneath(void *data, const char *dir);
void boxd_vfs_record(void *data, int command, const char *action, json_object *input,
                     const BoxDecision *decision);
void boxd_vfs_note(void *data, int command, const char *action, json_object *input,
                   const BoxDecision *decision);
void boxd_vfs_history_batch(void *data, bool begin);
void boxd_vfs_outcome(void *data, int command, const char *action, json_object *input,
                      const char *result);
/* A program lookup's question of one path (BoxToolsLookupFn, data = Boxd). */
bool boxd_lookup_may_read(void *data, const char *path, const char *operation);
/* The read (operation) of a program inside the box: NULL when policy
 * permits it, else the policy's message. */
char *boxd_program_read_refused(Boxd *d, const char *path, const char *operation);

/* worker_pool.c: the warm pool of Shell workers, forked by one zygote. */
bool boxd_workers_start(Boxd *d, GError **error);
void boxd_workers_stop(Boxd *d);

/* One Shell worker: a box-shell process placed in the mount. */
typedef struct {
  int command;
  pid_t pid;
  int ctl;
  gint64 asked; /* when its fork was requested */
  bool has_env; /* it inherits the gateway's environment from the zygote */
  int area;     /* the RAM area it roots in (box_vfs_command_area) */
} BoxdWorker;

/* A ready worker (python: one forked from the zygote holding a warm
 * CPython), or NULL after waiting its time out; asks the pool for the
 * replacement when this leaves it empty. */
BoxdWorker *boxd_worker_take(Boxd *d, bool python);
/* The Shell's commands box.toml's tool tables take from it, for its
 * workers (box_shell_set_host_commands): one name a line, or NULL. */
char *boxd_host_commands(Boxd *d);
/* Waits for the worker's "ready" (it rooted itself and dropped its
 * privileges); false when it never came. */
bool boxd_worker_wait_ready(BoxdWorker *w);
/* Discards a worker that never ran: kills it and gives its command back. */
void boxd_worker_discard(Boxd *d, BoxdWorker *w);
/* Frees a worker whose process is gone. */
void boxd_worker_free(BoxdWorker *w);
/* Takes value (an int or a pid_t) out of a, if there; the order is not kept. */
void boxd_array_remove_int(GArray *a, int value);
/* BOX_DEBUG_TIMING set: each command's and worker's times on stderr. */
bool boxd_debug_timing(void);
/* Asks for the workers the pool lacks (off the pool thread). */
void boxd_pool_refill(Boxd *d);

/* worker_command.c: one command's life on a worker. */
/* Called when the watched descriptor is readable; true ends the command. */
typedef bool (*BoxdWatchFn)(void *data);
/* Called once with the command's status, or -1 when no worker could run it. */
typedef void (*BoxdAnswerFn)(void *data, int status);
/* Runs source on the given descriptors (stdin, stdout, stderr) in a fresh
 * worker, in the calling thread.  While it runs, watch_fd (or -1) is
 * polled, and on_watch(data) decides whether its readiness ends the
 * command (status 125).  answer(data, status) comes before the command's
 * cleanup.  Once the worker has the descriptors, they are closed and set
 * to -1 (the caller closes any left); they are not used after answer. */
/* A launch of program by this box: what every one shares (the mount, its
 * roots, the staging directory, the operator's home and PATH) filled in. */
BoxToolLaunch boxd_tool_launch(Boxd *d, const char *program, char *const *argv,
                               const BoxToolTable *table, const char *cwd);
void boxd_run_command(Boxd *d, const char *source, const char *script, int fds[3], int watch_fd,
                      BoxdWatchFn on_watch, BoxdAnswerFn answer, void *data);

/* gateway_wire.c: credentials (spec/runtime.md §7).  Reads each env://
 * route's secret from `box run`'s environment (wiping it there), mints its
 * phantom; before any box state.  The error names the file and the route. */
bool boxd_egress_prepare(Boxd *d, GError **error);
/* Wipes and frees the secrets (after the gateway stopped). */
void boxd_egress_clear(Boxd *d);

/* gateway_wire.c: the egress gateway.  Start after the workers (it relays
 * itself into their network namespace); stop in teardown. */
bool boxd_gateway_start(Boxd *d, GError **error);
void boxd_gateway_stop(Boxd *d);
/* Relays the gateway into pid's network namespace (lo up, 127.0.0.1:<port>
 * listening until pid ends): BoxToolContext.net_setup with data = Boxd. */
bool boxd_gateway_net_setup(void *data, pid_t pid);
/* What a worker's Shell needs to reach the gateway (its `curl`); NULL
 * without a gateway.  The zygote gets it once (d->worker_env_json, with
 * the first fork request after the gateway started) and every worker forked
 * after inherits it; one asked for before gets it with its run message. */
json_object *boxd_gateway_worker_env(Boxd *d);

/* checkpoint_wire.c: a checkpoint per command ([checkpoints] of box.toml).
 * start before the mount (false: none, said on stderr), run once it is up
 * (the floor has recorded what the box directory holds: the repository's
 * writes come after), stop after it.
 * begin when a command starts (a lock descriptor, or -1), end with its
 * text once it has ended (before its reply: the commit is made on a thread
 * of its own), after once its tools are gone too (what they wrote late).
 * changed is the mount's BoxVfsChangedFn (data = Boxd); decided names a decision
 * the log recorded for command by its id (a checkpoint lists its command's). */
typedef struct BoxdCheckpoints BoxdCheckpoints;
bool boxd_checkpoints_start(Boxd *d);
void boxd_checkpoints_run(Boxd *d);
void boxd_checkpoints_stop(Boxd *d);
int boxd_checkpoints_begin(Boxd *d);
void boxd_checkpoints_end(Boxd *d, int command, const char *text, int lock_fd);
/* A begin's lock given back when its command never ran. */
void boxd_checkpoints_release(Boxd *d, int lock);
void boxd_checkpoints_after(Boxd *d, int command, const char *text);
void boxd_checkpoints_changed(void *data, int command, const char *path);
void boxd_checkpoints_decided(Boxd *d, int command, const char *action, const char *id);
/* cmd_run.c: the launcher's table of a process spec (borrowing its
 * strings; g_free the table alone). */
BoxToolTable *boxd_table_of(const BoxProcessSpec *spec);

/* worker_command.c: a shell:spawn decision's input (spec/policy.md):
 * argv[0] the program as spelled, program_path the resolved file (spelled
 * "~/…" under the operator home).  Takes command (the command line). */
json_object *boxd_spawn_input(Boxd *d, json_object *command, const char *const *argv,
                              const char *cwd, const char *program_path);

/* mcp_serve.c: serves the stdio MCP server whose program (or name) is
 * NAME over the alias's fds[0] (agent -> server) and fds[1] (server ->
 * agent) until either side ends; the caller keeps and closes fds.  -1 with
 * *refusal set when the server may not start or is not declared. */
int boxd_mcp_serve(Boxd *d, const char *name, int fds[3], char **refusal);
/* Before the policy loads: its rules may name the servers' tools, which
 * are known only once each server lists them (spec/policy.md per-tool). */
void box_mcp_declare_namespaces(const BoxConfig *config);
/* Writes all of p (a pipe or socket of the MCP relay); false when the
 * other end is gone. */
bool boxd_mcp_write_all(int fd, const char *p, size_t len);
/* The secret an http MCP server's route names, or NULL (gateway_wire.c). */
const char *boxd_mcp_secret(Boxd *d, const char *server);
/* mcp_http.c: an http server's endpoint (spec/runtime.md §2.5), or NULL
 * with *why when its destinations name none. */
char *boxd_mcp_endpoint(const BoxMcpServer *m, char **why);
/* Starts the bridge to http server M at endpoint: lines of JSON-RPC
 * written to *to_server are POSTed through the gateway, and the messages
 * of each reply come back as lines on *from_server (ended when *to_server
 * is closed).  NULL with *why when it cannot start. */
GThread *boxd_mcp_http_start(Boxd *d, const BoxMcpServer *m, const char *endpoint, int *to_server,
                             int *from_server, char **why);

/* broker.c: the alias protocol on run/box.sock. */
bool boxd_broker_start(Boxd *d, GError **error);
void boxd_broker_stop(Boxd *d);
/* Waits (bounded) for the connections still serving to finish. */
void boxd_broker_drain(Boxd *d);

/* worker_pool.c: d->live_pids, every worker and tool init alive, killed
 * at teardown. */
void boxd_track_pid(Boxd *d, pid_t pid);
void boxd_untrack_pid(Boxd *d, pid_t pid);
void boxd_kill_tracked(Boxd *d);

/* The CLI's verbs are box_verb_*: box_cmd_* names the Shell's commands
 * (shell/commands/commands.def), which link into the same binary. */
int box_verb_run(int argc, char **argv);
/* When set, `box run` starts this agent command instead of [agent] command. */
extern char **box_run_agent_override;
/* cmd_lua.c: `box lua --config FILE SCRIPT [ARGS...]`. */
int box_verb_lua(int argc, char **argv);
int box_verb_demo(void);
/* `box demo [--help]` */
int box_verb_demo_main(int argc, char **argv);
/* cmd_mount.c: `box mount --config FILE [--rw] MOUNTPOINT`. */
int box_verb_mount(int argc, char **argv);
/* cmd_policy.c: `box policy check|decide|generate-schema|replay …`. */
int box_verb_policy(int argc, char **argv);
/* cmd_policy.c: loads a policy file as a box would, saying why not on
 * stderr ("box: error: …") and, unless quiet, its warnings. */
BoxPolicy *box_verb_policy_load(const char *file, const char *home, bool quiet);
/* cmd_policy_replay.c: `box policy replay FILE [--home DIR] EVENTS`. */
int box_verb_policy_replay(int argc, char **argv);

/* checkpoint_view.c: `box mount`'s .box/checkpoints/, the checkpoint
 * repository read-only, served by the view's vfs through its tree (NULL
 * with error: none, or no box repository yet).  Freed after the vfs
 * stops. */
typedef struct BoxCheckpointView BoxCheckpointView;
BoxCheckpointView *box_checkpoint_view_new(BoxConfig *cfg, const char *workspace, GError **error);
const BoxVfsTree *box_checkpoint_view_tree(BoxCheckpointView *cv);
void box_checkpoint_view_free(BoxCheckpointView *cv);
/* cmd_checkpoints.c: `box checkpoints`, `box diff`, `box restore`. */
int box_verb_checkpoints(int argc, char **argv);
int box_verb_diff(int argc, char **argv);
int box_verb_restore(int argc, char **argv);
/* registry.c: the boxes running on this host (box ls, status, stop, logs). */
char *box_registry_dir(void);
void boxd_registry_add(Boxd *d);
void boxd_registry_remove(Boxd *d);
/* Running boxes, by name (json_object*: name, box_id, box_dir, config,
 * decision_log, pid, started, uptime, commands, decisions, denials). */
GPtrArray *box_registry_list(void);
/* The one running box with this name or id; NULL after saying why. */
json_object *box_registry_find(const char *name);
int box_verb_ls(int argc, char **argv); /* also `box status` */
int box_verb_stop(int argc, char **argv);
/* cmd_logs.c: `box logs NAME [-f] [--deny] [--json]`. */
int box_verb_logs(int argc, char **argv);
/* cmd_init.c: `box init`: a commented box.toml and policy in the cwd. */
int box_verb_init(int argc, char **argv);
/* cmd_demo.c: one decision record (a log line of the decision log) as a
 * person reads it, or NULL when the line is not one. */
char *box_decision_line_text(const char *line);

/* cli.c: "box: error: <message>" on stderr; returns 1, the CLI's status. */
int box_fail(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* cli.c: what box_fail said last, or NULL. */
const char *box_failure(void);
/* cli.c: whether arg asks for help (-h, --help); the help on stdout, 0. */
bool box_help_word(const char *arg);
int box_help_print(const char *help);
/* cli.c: "error: <message>" and the verb's help on stderr; returns 2. */
int box_usage_error(const char *help, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* cli.c: parses the options of a verb that takes --config FILE and
 * operands (into *config_path and *rest; prgname "box <verb>", parameter,
 * operands and summary for --help; strict_posix: options end at the first
 * operand); false after saying "box: error: <why>" (the verb exits 2). */
bool box_verb_parse(const char *prgname, const char *parameter, const char *operands,
                    const char *summary, bool strict_posix, char **config_path, char ***rest,
                    int *argc, char ***argv);

/* paths.c */
/* The program name beside the box binary (as built or as installed),
 * canonical, or NULL. */
char *box_sibling_binary(const char *name);
/* realpath(3) as a g_free()able string, or NULL. */
char *box_canonical_path(const char *path);
typedef enum { BOX_PLACE_ELSEWHERE, BOX_PLACE_ROOT, BOX_PLACE_TMP } BoxPlace;
/* Where an absolute path (no "." or "..") lies in the box: in a bound
 * root, in the box's /tmp (below it, outside the roots), or elsewhere
 * (and NULL). */
BoxPlace boxd_place_of(Boxd *d, const char *path);
/* box_path_within: policy/path.h */

/* config_check.c: §2.1–§2.2 checks that need the filesystem (after box_dir
 * exists, before the workload), the tools' shared context, and the startup
 * disclosure of §5.7 on stderr.  Fills each table's host_network from box.toml. */
bool box_config_check(Boxd *d, GError **error);

/* agent.c: starts the agent through the tools launcher with its own lists;
 * returns the pid of its sandbox's init (a process group leader). */
pid_t box_agent_start(Boxd *d, char **argv, GError **error);

/* fastopen.c: the Shell's fast path for reading regular files (DESIGN.md
 * "The mount", Speed), boxd's side.  Most files one "open" request may
 * name (each answer carries one descriptor, and a message carries at most
 * BOX_CTL_MAX_FDS). */
#define BOX_FASTOPEN_MAX 32

/* Answers a worker's {"op":"open","cwd":…,"paths":[…]} on reply_fd: for
 * each path, in order, {"fd":true} (its descriptor rides with the reply, in
 * the same order), {"err":E,"message":…} (decided and refused, or decided
 * and not openable), or {"fallback":true} (not for this path: the worker
 * opens it through the mount, which decides it there).  Only regular files
 * inside a bound root, reached without a symlink or "..", outside every
 * floor, are decided here — fs:read/read_content on the same spelled path,
 * logged, with the outcome descriptor_issued. */
void box_fastopen_handle(Boxd *d, int command, pid_t worker, json_object *msg, int reply_fd);

/* The open channel (ctl.h): box_fastopen_channel_take readies a channel a
 * worker handed over ({"op":"open-channel"}); box_fastopen_channel_serve
 * answers one request waiting on it as box_fastopen_handle answers an
 * "open", for the credentials the request carries (none: every path the
 * mount's), or a listing (BOX_LIST_WIRE_TAG) as box_fastlist_handle answers
 * one with no "open".  false: the channel ended or broke (close it). */
void box_fastopen_channel_take(int chan);
bool box_fastopen_channel_serve(Boxd *d, int command, int chan);

/* Answers a worker's {"op":"list","cwd":…,"path":…} on reply_fd: the
 * mount's OPENDIR decision (fs:read/enumerate) for a directory inside a
 * bound root reached without a symlink or "..", outside every floor; then
 * the directory's getdents64 records in messages tagged 'D', the last
 * tagged 'E' (one message when they fit a chunk; 'X' and an errno when
 * reading failed), or {"err":E, "message":…}, or {"fallback":true} (the
 * worker lists it through the mount).  With "open":N, after 'E' the answers of an "open" request for
 * the directory's leading regular files (up to N, up to the first entry
 * that is not one, "." and ".." aside), as a walk would ask next. */
void box_fastlist_handle(Boxd *d, int command, json_object *msg, int reply_fd);

/* Most files one "create" request may name (at most BOX_CTL_MAX_FDS). */
#define BOX_FASTCREATE_MAX 64

/* Answers a worker's {"op":"create","cwd":…,"paths":[…],"modes":[…]} on
 * reply_fd as box_fastopen_handle answers an "open": each path a new
 * regular file of its mode (the caller's umask applied), decided as the
 * mount's CREATE (fs:write/write_content), made with O_EXCL and opened for
 * writing.  From the first path not for this on, every answer is
 * {"fallback":true}: the worker makes those through the mount, in order. */
void box_fastcreate_handle(Boxd *d, int command, json_object *msg, int reply_fd);

/* toolwait.c: waits for the tool pid like box_reaper_wait and returns its
 * wait status; if the worker process that asked for it goes away first
 * (requester_fd, its reply socket, hangs up: `timeout` stopped it, or it was killed), the
 * tool is killed too, as a program dies with its process group. */
int boxd_wait_tool(pid_t pid, int requester_fd);

/* refusals.c: every launch from now on is observed (its listener answered
 * and recorded, spec/runtime.md §8.4) until boxd_refusals_stop, which runs
 * once the launched processes are gone and before the telemetry stops. */
void boxd_refusals_start(Boxd *d);
void boxd_refusals_stop(BoxRefusals *r);

#endif
