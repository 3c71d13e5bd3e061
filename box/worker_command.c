/* worker_command.c — one command's life on a worker: the run message, the
 * worker's requests while it runs (decisions, tools to spawn, statuses,
 * the fast path's opens and listings), its deadline, the status its caller
 * gets, and the cleanup after.
 */
#include "box/box-private.h"
#include "box/ctl.h"
#include "tools/spin.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The worker's own deadline comes this much after boxd's, so the one that
 * ends a command at its deadline is boxd: the Shell checks between steps
 * only, and a worker is hostile code anyway. */
#define WORKER_DEADLINE_GRACE_MS 1000

/* Open channels kept per command (a process beyond that asks with a reply
 * socket per request, as before). */
#define OPEN_CHANNELS 16

typedef struct {
  Boxd *d;
  BoxdWorker *w;
  GMutex lock;
  GPtrArray *threads; /* spawn threads of this command */
  GArray *tool_pids;  /* pid_t of its tool sandboxes still alive */
  bool ended;
  bool reaped; /* the worker's status has been collected */
  /* for history rules: permitted shell:exec inputs (JSON text) awaiting
   * the worker's status → count; only these may be recorded as ::responses */
  GHashTable *exec_permitted;
  /* its box_vfs_command_describe has been written, or was never asked
   * for (lock, described_cond) */
  bool described;
  GCond described_cond;
  const char *source; /* the command's text (the caller's, while it runs) */
  gint64 describe_at; /* when to publish it for `box mount`; 0 once done */
  gint64 deadline;    /* monotonic: the command ends here, blocked or not */
  int caller_err;     /* the caller's stderr, for the deadline's message */
  int pidfd;          /* the worker's, taken while it runs (or -1) */
  /* the fast path's channels its processes handed over (ctl.h), each
   * served from the loop that serves ctl */
  int chan[OPEN_CHANNELS];
  int nchan;
  /* after a channel's request or a decision: the next of a burst (a
   * script opening file after file, a loop of builtins) is waited for
   * without sleeping for a while (tools/spin.h) */
  BoxSpin spin;
  bool just_served;
} Command;

/* `box mount`'s record of a command is a file on the box_dir's disk
 * (create, write, rename: journaled metadata); one thread writes them so
 * the command does not wait for its own description.  It lists what runs
 * now, so a command is published once it has run for DESCRIBE_AFTER_MS:
 * one that ends sooner, which no operator could have seen, costs no
 * thread wakeup and no file on its path (most commands are that short). */
#define DESCRIBE_AFTER_MS 10

typedef struct {
  Command *c;
  char *source;
} Describe;

static void describe_main(gpointer data, gpointer user_data)
{
  (void)user_data;
  Describe *t = data;
  Command *c = t->c;
  box_vfs_command_describe(c->d->vfs, c->w->command, t->source);
  g_free(t->source);
  g_free(t);
  g_mutex_lock(&c->lock);
  c->described = true;
  g_cond_broadcast(&c->described_cond);
  g_mutex_unlock(&c->lock);
}

static void describe_later(Command *c, const char *source)
{
  g_mutex_lock(&c->lock);
  c->described = false;
  g_mutex_unlock(&c->lock);
  static GThreadPool *describers;
  if (g_once_init_enter(&describers)) {
    /* exclusive: its thread is started now, not on the first push */
    GThreadPool *p = g_thread_pool_new(describe_main, NULL, 1, TRUE, NULL);
    g_once_init_leave(&describers, p);
  }
  Describe *t = g_new(Describe, 1);
  t->c = c;
  t->source = g_strdup(source);
  g_thread_pool_push(describers, t, NULL);
}

/* The record must be written before the command's end withdraws it. */
static void describe_wait(Command *c)
{
  g_mutex_lock(&c->lock);
  while (!c->described) g_cond_wait(&c->described_cond, &c->lock);
  g_mutex_unlock(&c->lock);
}

/* ---- one command ---- */

static json_object *exec_input(json_object *msg)
{
  json_object *input;
  if (!json_object_object_get_ex(msg, "input", &input) ||
      !json_object_is_type(input, json_type_object))
    return NULL;
  return input;
}

static const char **string_array(json_object *arr)
{
  if (!arr || !json_object_is_type(arr, json_type_array)) return NULL;
  size_t n = json_object_array_length(arr);
  const char **out = g_new0(const char *, n + 1);
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(arr, i);
    if (!json_object_is_type(e, json_type_string)) {
      g_free(out);
      return NULL;
    }
    out[i] = json_object_get_string(e);
  }
  return out;
}

/* The worker's per-word literal flags; when missing or malformed every word
 * counts as expanded, so the log redacts rather than discloses. */
static bool *literal_flags(json_object *msg, const char **args)
{
  int n = 0;
  while (args && args[n]) n++;
  bool *out = g_new0(bool, n > 0 ? n : 1);
  json_object *a;
  if (json_object_object_get_ex(msg, "literal", &a) && json_object_is_type(a, json_type_array) &&
      (int)json_object_array_length(a) == n)
    for (int i = 0; i < n; i++) out[i] = json_object_get_boolean(json_object_array_get_idx(a, i));
  return out;
}

/* fd < 0: the request asked for its reply on the worker's ctl. */
static void reply_and_close(Command *c, int fd, json_object *reply)
{
  box_ctl_send(fd >= 0 ? fd : c->w->ctl, reply, NULL, 0);
  json_object_put(reply);
  if (fd >= 0) close(fd);
}

/* A permitted shell:exec whose status is owed (history rules). */
static void note_permitted(Command *c, json_object *input)
{
  if (!c->exec_permitted)
    c->exec_permitted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  char *key = g_strdup(json_object_to_json_string_ext(input, JSON_C_TO_STRING_PLAIN));
  gpointer n = g_hash_table_lookup(c->exec_permitted, key);
  g_hash_table_replace(c->exec_permitted, key, GINT_TO_POINTER(GPOINTER_TO_INT(n) + 1));
}

static void handle_decide(Command *c, json_object *msg, int reply_fd)
{
  json_object *action_obj;
  json_object *input = exec_input(msg);
  json_object *reply = json_object_new_object();
  const char *action = json_object_object_get_ex(msg, "action", &action_obj)
                         ? json_object_get_string(action_obj)
                         : NULL;
  json_object *dry_obj;
  bool dry_run =
    json_object_object_get_ex(msg, "dry_run", &dry_obj) && json_object_get_boolean(dry_obj);
  /* A worker asks for the decisions the Shell raises itself, or for a dry
   * run (Lua's box.decide) of any action, which is logged as one. */
  if (!input || !action || (!dry_run && strcmp(action, "shell:exec") != 0)) {
    json_object_object_add(reply, "permit", json_object_new_boolean(false));
    json_object_object_add(reply, "message",
                           json_object_new_string("the worker sent a malformed request"));
    reply_and_close(c, reply_fd, reply);
    return;
  }
  json_object *args_obj = NULL;
  json_object_object_get_ex(msg, "args", &args_obj);
  g_autofree const char **args = string_array(args_obj);
  BoxDecision *decision;
  if (dry_run) {
    /* Asked only to know; history still sees the request as an attempt. */
    decision = box_policy_decide(c->d->policy, action, input);
    decision->dry_run = true;
    box_decision_log_append(c->d->log, action, input, NULL, decision);
  } else {
    g_autofree bool *literal = literal_flags(msg, args);
    decision = boxd_decide_args(c->d, action, input, args, literal);
  }
  bool permit = decision->verdict == BOX_VERDICT_PERMIT;
  json_object_object_add(reply, "permit", json_object_new_boolean(permit));
  json_object_object_add(reply, "message", json_object_new_string(decision->message));
  box_decision_free(decision);
  reply_and_close(c, reply_fd, reply);
  /* Its status will follow.  Noted after the reply, off the
   * worker's wait: that status comes through this thread, after this. */
  if (!dry_run && permit) note_permitted(c, input);
}

/* The Shell's commands that a `[tool.NAME]` table of the same name takes
 * from it (README "Programs"): an operator who wants the host's Python
 * gets it for python3 with `[tool.python3]`.  The Shell's other commands
 * stay its own whatever the tables say. */
static const char *const switchable[] = { "python3", "python", NULL };

static bool tool_takes(Boxd *d, const char *name)
{
  if (!g_strv_contains(switchable, name)) return false;
  for (int i = 0; d->tool_tables && d->tool_tables[i]; i++)
    if (strcmp(d->tool_tables[i]->label, name) == 0) return true;
  return false;
}

char *boxd_host_commands(Boxd *d)
{
  GString *names = g_string_new(NULL);
  for (int i = 0; switchable[i]; i++)
    if (tool_takes(d, switchable[i]))
      g_string_append_printf(names, "%s%s", names->len ? "\n" : "", switchable[i]);
  return g_string_free(names, names->len == 0);
}

/* The command's first shell:exec, decided here from its text
 * (box_shell_first_exec) when the text shows it, the way handle_decide
 * decides the worker's request for it: the same record in the log and the
 * same events in history, in the same order, one worker round trip fewer.
 * The verdict follows "run" in a "decided" message of its own, which the
 * worker waits for before it runs anything; it takes it only for the very
 * request it would have sent (shell_host.c, answer_decided). */
static json_object *decide_first(Command *c, const char *source)
{
  BoxShellCommand first;
  if (!box_shell_first_exec(source, c->d->workspace, &first)) return NULL;
  /* a program then, whose shell:spawn the host decides when it runs */
  if (tool_takes(c->d, first.argv[0])) {
    box_shell_first_exec_free(&first);
    return NULL;
  }
  json_object *req = box_ctl_exec_request(&first);
  json_object *input = exec_input(req);
  BoxDecision *decision =
    boxd_decide_args(c->d, "shell:exec", input, (const char *const *)first.argv, first.literal);
  bool permit = decision->verdict == BOX_VERDICT_PERMIT;
  json_object *out = json_object_new_object();
  json_object_object_add(
    out, "request",
    json_object_new_string(json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN)));
  json_object_object_add(out, "permit", json_object_new_boolean(permit));
  json_object_object_add(out, "message", json_object_new_string(decision->message));
  box_decision_free(decision);
  if (permit) note_permitted(c, input);
  json_object_put(req);
  box_shell_first_exec_free(&first);
  return out;
}

/* The worker reports a permitted shell:exec's exit status; boxd
 * records it as that command's ::response — only for a command it
 * permitted and whose status is still owed (the worker is not trusted). */
static void handle_status(Command *c, json_object *msg)
{
  json_object *action_obj, *status_obj;
  json_object *input = exec_input(msg);
  if (!input || !c->exec_permitted || !json_object_object_get_ex(msg, "action", &action_obj) ||
      strcmp(json_object_get_string(action_obj), "shell:exec") != 0 ||
      !json_object_object_get_ex(msg, "status", &status_obj) ||
      !json_object_is_type(status_obj, json_type_int))
    return;
  const char *key = json_object_to_json_string_ext(input, JSON_C_TO_STRING_PLAIN);
  int n = GPOINTER_TO_INT(g_hash_table_lookup(c->exec_permitted, key));
  if (n <= 0) return;
  if (n == 1)
    g_hash_table_remove(c->exec_permitted, key);
  else
    g_hash_table_replace(c->exec_permitted, g_strdup(key), GINT_TO_POINTER(n - 1));
  box_policy_record_status(c->d->policy, "shell:exec", input, json_object_get_int(status_obj));
}

/* A permitted shell:exec that reported no status by the command's
 * end (a deadline, a stop, a background job cut short) records -1. */
static void record_unreported_statuses(Command *c)
{
  if (!c->exec_permitted) return;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, c->exec_permitted);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    json_object *input = json_tokener_parse(key);
    for (int i = 0; input && i < GPOINTER_TO_INT(value); i++)
      box_policy_record_status(c->d->policy, "shell:exec", input, -1);
    json_object_put(input);
  }
  g_hash_table_destroy(c->exec_permitted);
  c->exec_permitted = NULL;
}

typedef struct {
  Command *c;
  json_object *msg;
  int fds[BOX_CTL_MAX_FDS];
  int nfds;
  BoxTraceContext trace; /* the command's, for the spawn's decisions */
  bool traced;
} SpawnJob;

static bool tool_tmp_point(void *data, const char *path, bool dir)
{
  Command *c = data;
  return box_vfs_ram_mount_point(c->d->vfs, c->w->command, path, dir);
}

static bool attach_tool(void *data, pid_t pid, const char *const *paths, const char *reach)
{
  Command *c = data;
  boxd_track_pid(c->d, pid);
  g_mutex_lock(&c->lock);
  g_array_append_val(c->tool_pids, pid);
  bool ended = c->ended;
  g_mutex_unlock(&c->lock);
  if (ended) return false;
  g_autoptr(GError) error = NULL;

  return box_vfs_tool_attach(c->d->vfs, c->w->command, pid, paths, reach, &error);
}

static json_object *spawn_reply(const char *kind, int status, const char *message)
{
  json_object *r = json_object_new_object();
  json_object_object_add(r, "kind", json_object_new_string(kind));
  json_object_object_add(r, "status", json_object_new_int(status));
  if (message) json_object_object_add(r, "message", json_object_new_string(message));
  return r;
}

static void put_json_input(json_object **j)
{
  json_object_put(*j);
}

/* The descriptors a spawn request carries after its ticket: stdout,
 * stderr, then those "fds" numbers (stdin, `n<file`, process
 * substitutions); into fds by the number the program gets. */
static bool spawn_fds(const SpawnJob *job, int fds[BOX_TOOLS_MAX_FDS], int *nfds)
{
  json_object *targets;
  *nfds = 0;
  for (int i = 0; i < BOX_TOOLS_MAX_FDS; i++) fds[i] = -1;
  if (job->nfds < 3 || !json_object_object_get_ex(job->msg, "fds", &targets) ||
      !json_object_is_type(targets, json_type_array) ||
      json_object_array_length(targets) != (size_t)(job->nfds - 3))
    return false;
  for (int i = 3; i < job->nfds; i++) {
    int n = json_object_get_int(json_object_array_get_idx(targets, (size_t)(i - 3)));
    if (n < 0 || n >= BOX_TOOLS_MAX_FDS || n == 1 || n == 2 || fds[n] >= 0) return false;
    fds[n] = job->fds[i];
    *nfds = MAX(*nfds, n + 1);
  }
  return true;
}

/* Once the tool has its own copies: a pipe's reader sees its end as soon
 * as the tool and the Shell close theirs, not when boxd has the status. */
static void close_passed_fds(SpawnJob *job)
{
  for (int i = 1; i < job->nfds; i++) {
    if (job->fds[i] >= 0) close(job->fds[i]);
    job->fds[i] = -1;
  }
}

BoxToolLaunch boxd_tool_launch(Boxd *d, const char *program, char *const *argv,
                               const BoxToolTable *table, const char *cwd)
{
  return (BoxToolLaunch){ .program_path = program,
                          .argv = argv,
                          .table = table,
                          .cwd = cwd,
                          .operator_home = d->operator_home,
                          .operator_path = d->operator_path,
                          .mountpoint = box_vfs_mountpoint(d->vfs),
                          .views_epoch = box_vfs_views_epoch(d->vfs),
                          .roots = (const char *const *)d->roots,
                          .staging_dir = d->staging_dir };
}

/* The file a program word runs, by the one rule README's "Programs"
 * gives: a word with '/' (or the path the Shell found on its PATH in its
 * view) is looked up as the mount stats it, decided first; a bare word a
 * `[tool.*]` command spells is that table's program; any other bare word
 * is searched on boxd's PATH, each file found there decided. */
static char *resolve_word(Boxd *d, const char *word, const char *cwd)
{
  char *by_table =
    box_tools_resolve_by_table((const BoxToolTable *const *)d->tool_tables, word, d->operator_path);
  if (by_table) return by_table;
  return box_tools_resolve_decided(word, cwd, d->operator_path, boxd_lookup_may_read, d);
}

/* A path word naming a program inside the box (README, "Programs"),
 * perhaps written after the box started.  One a table names (in a bound
 * root or the box's /tmp) has its read decided first, and *refused gets
 * the policy's message.  One in the box's /tmp is looked up in the command's
 * RAM tree, where the tool will run it, never on the host (*in_tmp); with
 * no table naming it, so that the refusal can name the table to add, and
 * only if the RAM holds it (else the host's, as for any other word: an exec
 * entry there).  Any other word resolves as resolve_word does. */
static char *resolve_program(Command *c, const char *word, const char *cwd, bool *in_tmp,
                             char **refused)
{
  Boxd *d = c->d;
  *in_tmp = false;
  const BoxToolTable *t =
    box_tools_table_named((const BoxToolTable *const *)d->tool_tables, word, cwd);
  bool path = strchr(word, '/') && word[strlen(word) - 1] != '/';
  g_autofree char *named = path ? box_tools_named_path(word, cwd) : NULL;
  BoxPlace place = boxd_place_of(d, named);
  bool tmp = place == BOX_PLACE_TMP;
  if (!(t && (place == BOX_PLACE_ROOT || t->box_tmp)) && !(tmp && !t))
    return resolve_word(d, word, cwd);
  g_autofree char *why = boxd_program_read_refused(d, named, t ? "read_content" : "read_metadata");
  if (why) {
    if (t) *refused = g_steal_pointer(&why);
    return NULL;
  }
  if (!tmp) return resolve_word(d, word, cwd);
  if (box_vfs_ram_executable(d->vfs, c->w->command, named)) {
    *in_tmp = true;
    return g_steal_pointer(&named);
  }
  return t ? NULL : resolve_word(d, word, cwd);
}

/* `command -v`, `type`, `which`, `hash` for a word the Shell did not
 * find in its view: the file that would run, only when something runs it. */
static void handle_resolve(Command *c, json_object *msg, int reply_fd)
{
  Boxd *d = c->d;
  json_object *word_obj, *cwd_obj;
  json_object *reply = json_object_new_object();
  if (json_object_object_get_ex(msg, "word", &word_obj) &&
      json_object_object_get_ex(msg, "cwd", &cwd_obj)) {
    bool in_tmp;
    g_autofree char *refused = NULL;
    g_autofree char *path = resolve_program(c, json_object_get_string(word_obj),
                                            json_object_get_string(cwd_obj), &in_tmp, &refused);
    if (path && box_tools_runs((const BoxToolTable *const *)d->tool_tables, d->agent_table, path,
                               d->operator_path)) {
      g_autofree char *shown =
        box_tools_spelling(json_object_get_string(word_obj), d->operator_path, path);
      json_object_object_add(reply, "path", json_object_new_string(shown));
    }
  }
  reply_and_close(c, reply_fd, reply);
}

json_object *boxd_spawn_input(Boxd *d, json_object *command, const char *const *argv,
                              const char *cwd, const char *program_path)
{
  int argc = 0;
  while (argv[argc]) argc++;
  g_autofree char *spelled = box_tools_spell_home(program_path, d->operator_home);
  json_object *input = json_object_new_object();
  json_object_object_add(input, "command", command);
  json_object_object_add(input, "program", json_object_new_string(argv[0]));
  if (argc > 1) json_object_object_add(input, "arg1", json_object_new_string(argv[1]));
  if (argc > 2) json_object_object_add(input, "arg2", json_object_new_string(argv[2]));
  json_object_object_add(input, "arg_count", json_object_new_int64(argc - 1));
  json_object_object_add(input, "cwd", json_object_new_string(cwd));
  json_object_object_add(input, "program_path", json_object_new_string(spelled));
  return input;
}

static json_object *run_spawn(Command *c, SpawnJob *job)
{
  Boxd *d = c->d;
  json_object *msg = job->msg;
  int requester_fd = job->fds[0];
  int fds[BOX_TOOLS_MAX_FDS], nfds;
  if (!spawn_fds(job, fds, &nfds))
    return spawn_reply("failed", 126, "the worker sent a malformed request");
  json_object *argv_obj, *cwd_obj, *command_obj;
  if (!json_object_object_get_ex(msg, "argv", &argv_obj) ||
      !json_object_object_get_ex(msg, "cwd", &cwd_obj) ||
      !json_object_object_get_ex(msg, "command", &command_obj))
    return spawn_reply("failed", 126, "the worker sent a malformed request");
  g_autofree const char **argv = string_array(argv_obj);
  if (!argv || !argv[0]) return spawn_reply("failed", 126, "the worker sent a malformed request");
  const char *cwd = json_object_get_string(cwd_obj);
  json_object *path_obj;
  const char *found =
    json_object_object_get_ex(msg, "path", &path_obj) ? json_object_get_string(path_obj) : NULL;
  bool in_tmp;
  g_autofree char *read_refused = NULL;
  g_autofree char *resolved =
    resolve_program(c, found ? found : argv[0], cwd, &in_tmp, &read_refused);
  if (read_refused) return spawn_reply("denied", 126, read_refused);
  if (!resolved) return spawn_reply("not_found", 127, NULL);
  /* Nothing would run it, whatever policy says: the message names the
   * table to add rather than reading as a policy denial. */
  if (!box_tools_runs((const BoxToolTable *const *)d->tool_tables, d->agent_table, resolved,
                      d->operator_path)) {
    g_autofree char *why = box_tools_no_table(argv[0], resolved);
    return spawn_reply("no_tool", 126, why);
  }
  json_object *input = boxd_spawn_input(d, json_object_get(command_obj), argv, cwd, resolved);
  g_autofree bool *literal = literal_flags(msg, argv);
  BoxDecision *decision = boxd_decide_args(d, "shell:spawn", input, argv, literal);
  if (decision->verdict != BOX_VERDICT_PERMIT) {
    json_object_put(input);
    json_object *r = spawn_reply("denied", 126, decision->message);
    box_decision_free(decision);
    return r;
  }
  box_decision_free(decision);
  /* for history rules: the ::response of a permitted spawn carries its status */
  json_object *permitted_input __attribute__((cleanup(put_json_input))) = input;
  int n_fixed = 0;
  g_autofree char *refusal = NULL;
  const BoxToolTable *table =
    box_tools_select((const BoxToolTable *const *)d->tool_tables, d->agent_table, resolved,
                     (char *const *)argv + 1, d->operator_path, &n_fixed, &refusal);
  if (table && in_tmp && !table->box_tmp) {
    /* a host program that happens to share the path: never the box's file */
    table = NULL;
    refusal = box_tools_no_table(argv[0], resolved);
  }
  if (!table) {
    box_policy_record_status(d->policy, "shell:spawn", permitted_input, 126);
    return spawn_reply("no_tool", 126, refusal);
  }
  g_autofree char *ram = box_vfs_ram_root(d->vfs, c->w->command);
  g_autofree char *tmp_area = g_strconcat(ram, "/tmp", NULL);
  BoxToolLaunch launch = boxd_tool_launch(d, resolved, (char *const *)argv, table, cwd);
  launch.fds = fds;
  launch.nfds = nfds;
  launch.tmp_area = tmp_area;
  launch.tmp_point = tool_tmp_point;
  launch.tmp_point_data = c;
  if (in_tmp) launch.tmp_program = resolved + strlen("/tmp/");
  json_object *env_obj = NULL;
  json_object_object_get_ex(msg, "env", &env_obj);
  g_autofree const char **extra_env = string_array(env_obj);
  launch.extra_env = (char *const *)extra_env;
  g_autoptr(GError) error = NULL;
  pid_t pid = box_tools_launch(&launch, job->fds[1], job->fds[2], attach_tool, c, &error);
  close_passed_fds(job);
  if (pid < 0) {
    box_policy_record_status(d->policy, "shell:spawn", permitted_input, 126);
    return spawn_reply("failed", 126,
                       error ? error->message : "containment setup failed: the tool did not start");
  }
  int status = boxd_wait_tool(pid, requester_fd); /* dies with its requester (toolwait.c) */
  boxd_untrack_pid(d, pid);
  g_mutex_lock(&c->lock);
  boxd_array_remove_int(c->tool_pids, pid);
  g_mutex_unlock(&c->lock);
  box_policy_record_status(d->policy, "shell:spawn", permitted_input, box_status_code(status));
  return spawn_reply("ran", box_status_code(status), NULL);
}

static gpointer spawn_thread(gpointer data)
{
  SpawnJob *job = data;
  json_object *reply;
  box_decision_log_set_trace(job->traced ? &job->trace : NULL);
  reply = run_spawn(job->c, job);
  box_ctl_send(job->fds[0], reply, NULL, 0);
  json_object_put(reply);
  for (int i = 0; i < job->nfds; i++)
    if (job->fds[i] >= 0) close(job->fds[i]);
  json_object_put(job->msg);
  g_free(job);
  return NULL;
}

/* Kills the worker, and with it its PID namespace.  Through its pidfd: by
 * now the zygote may have reaped it and its pid been reused. */
static void kill_worker(Command *c)
{
  if (c->pidfd < 0)
    kill(c->w->pid, SIGKILL);
  else
    (void)syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
}

/* Ends the command's tools (each the init of its own PID namespace, so all
 * it started goes with it) and any tool still being launched for it. */
static void end_tools(Command *c)
{
  g_mutex_lock(&c->lock);
  c->ended = true;
  for (guint i = 0; i < c->tool_pids->len; i++)
    kill(g_array_index(c->tool_pids, pid_t, i), SIGKILL);
  g_mutex_unlock(&c->lock);
}

/* The deadline's message on the caller's stderr, which the caller may have
 * left full: waited for a second at most, never for the caller's sake. */
static void say_expired(Command *c)
{
  struct pollfd p = { .fd = c->caller_err, .events = POLLOUT };
  size_t len = strlen(BOX_SHELL_TIMEOUT_MESSAGE);
  if (c->caller_err < 0 || poll(&p, 1, 1000) != 1 || !(p.revents & POLLOUT) ||
      write(c->caller_err, BOX_SHELL_TIMEOUT_MESSAGE, len) != (ssize_t)len)
    g_printerr("box: warning: command %d: the caller's stderr did not take the deadline's "
               "message\n",
               c->w->command);
}

/* The status a killed worker reported just before, read once it is gone
 * (and with it every process of its namespace: its init ends last), or -1.
 * Its other requests are dropped unanswered; nobody waits for them now. */
static int reported_status(Command *c)
{
  int status = -1;
  struct pollfd p = { .fd = c->w->ctl, .events = POLLIN };
  while (poll(&p, 1, 0) == 1) {
    int fds[BOX_CTL_MAX_FDS];
    int nfds = 0;
    json_object *msg = box_ctl_recv(c->w->ctl, fds, &nfds);
    if (!msg) break;
    json_object *op, *s;
    if (json_object_object_get_ex(msg, "op", &op) &&
        g_strcmp0(json_object_get_string(op), "exit") == 0 &&
        json_object_object_get_ex(msg, "status", &s))
      status = json_object_get_int(s) & 0xff;
    json_object_put(msg);
    for (int i = 0; i < nfds; i++) close(fds[i]);
  }
  return status;
}

/* poll(2) of what serve_command waits on, not waiting: for box_spin_wait */
typedef struct {
  struct pollfd *p;
  nfds_t np;
  int n;
} PollNow;

static bool poll_now(void *data)
{
  PollNow *look = data;
  look->n = poll(look->p, look->np, 0);
  return look->n != 0;
}

/* One request from each channel that has one (pfd: their poll entries);
 * a channel that ended is closed.  true: one had one. */
static bool serve_channels(Command *c, const struct pollfd *pfd)
{
  bool served = false;
  int kept = 0;
  int n = c->nchan;
  for (int i = 0; i < n; i++) {
    int chan = c->chan[i];
    served = served || pfd[i].revents;
    if (pfd[i].revents && !box_fastopen_channel_serve(c->d, c->w->command, chan))
      close(chan);
    else
      c->chan[kept++] = chan;
  }
  c->nchan = kept;
  return served;
}

/* Serves the worker's requests until it reports its status or dies.
 *
 * The command's deadline is kept here, on the trusted side: the Shell
 * checks its own only between steps, and a worker blocked in a FIFO, a
 * full pipe, a `wait`, a tool or a silent server never takes another.
 * At the deadline the worker's PID namespace (it is its init) and the
 * command's tools are killed, wherever they are blocked, and the caller
 * gets the Shell's own timeout message and status.  A worker killed
 * otherwise — the caller's `signal`, or the box shutting down — ends with
 * 125: boxd failed to serve it (spec/runtime.md §4.2). */
static int serve_command(Command *c, int watch_fd, BoxdWatchFn on_watch, void *watch_data)
{
  BoxdWorker *w = c->w;
  int status = -1;
  bool cancelled = false;
  bool expired = false;
  for (;;) {
    /* Checked before each request too: a worker that keeps boxd busy
     * with requests must not keep its deadline away. */
    gint64 now = g_get_monotonic_time();
    if (now >= c->deadline) {
      expired = true;
      break;
    }
    gint64 wake = c->deadline;
    if (c->describe_at) {
      if (c->describe_at <= now) {
        c->describe_at = 0;
        describe_later(c, c->source);
      } else if (c->describe_at < wake) {
        wake = c->describe_at;
      }
    }
    int timeout = (int)MIN((wake - now + 999) / 1000, G_MAXINT);
    /* poll skips a negative descriptor: watch_fd may be -1 */
    struct pollfd p[2 + OPEN_CHANNELS] = { { .fd = w->ctl, .events = POLLIN },
                                           { .fd = watch_fd, .events = POLLIN } };
    for (int i = 0; i < c->nchan; i++) p[2 + i] = (struct pollfd){ c->chan[i], POLLIN, 0 };
    PollNow look = { p, (nfds_t)(2 + c->nchan), 0 };
    bool seen = c->just_served && box_spin_wait(&c->spin, poll_now, &look);
    c->just_served = false;
    int n = seen ? look.n : poll(p, (nfds_t)(2 + c->nchan), timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (n > 0 && watch_fd >= 0 && p[1].revents && on_watch(watch_data)) {
      cancelled = true;
      break;
    }
    /* ctl first: whatever a process sent there before it asked on its
     * channel is queued there already, and is taken in that order */
    if (!p[0].revents) {
      c->just_served = serve_channels(c, p + 2);
      continue;
    }
    int fds[BOX_CTL_MAX_FDS];
    int nfds = 0;
    json_object *msg = box_ctl_recv(w->ctl, fds, &nfds);
    if (!msg) break;
    json_object *op_obj;
    const char *op =
      json_object_object_get_ex(msg, "op", &op_obj) ? json_object_get_string(op_obj) : "";
    if (strcmp(op, "exit") == 0) {
      json_object *s;
      /* the last command's status, held back to travel with the exit */
      if (json_object_object_get_ex(msg, "exec_status", &s) &&
          json_object_is_type(s, json_type_object))
        handle_status(c, s);
      if (json_object_object_get_ex(msg, "status", &s)) status = json_object_get_int(s) & 0xff;
      json_object_put(msg);
      for (int i = 0; i < nfds; i++) close(fds[i]);
      /* The worker has closed the caller's descriptors and only exits
       * now: answer at once, and let the cleanup reap it. */
      return status;
    }
    /* the worker's last status, riding on the request after it */
    json_object *exec_status;
    if (json_object_object_get_ex(msg, "exec_status", &exec_status) &&
        json_object_is_type(exec_status, json_type_object))
      handle_status(c, exec_status);
    json_object *reply_obj;
    if (strcmp(op, "decide") == 0 && nfds == 0 &&
        json_object_object_get_ex(msg, "reply", &reply_obj) &&
        g_strcmp0(json_object_get_string(reply_obj), "ctl") == 0) {
      handle_decide(c, msg, -1);
      json_object_put(msg);
      c->just_served = true;
      continue;
    }
    if (strcmp(op, "decide") == 0 && nfds >= 1) {
      handle_decide(c, msg, fds[0]);
      for (int i = 1; i < nfds; i++) close(fds[i]);
      json_object_put(msg);
      continue;
    }
    if (strcmp(op, "open") == 0 && nfds >= 1) { /* the fast path (fastopen.c) */
      box_fastopen_handle(c->d, w->command, w->pid, msg, fds[0]);
      for (int i = 1; i < nfds; i++) close(fds[i]);
      json_object_put(msg);
      continue;
    }
    if (strcmp(op, "open-channel") == 0 && nfds >= 1) { /* the fast path's own */
      if (c->nchan < OPEN_CHANNELS) {
        box_fastopen_channel_take(fds[0]);
        c->chan[c->nchan++] = fds[0];
      } else {
        close(fds[0]); /* the process asks with reply sockets instead */
      }
      for (int i = 1; i < nfds; i++) close(fds[i]);
      json_object_put(msg);
      continue;
    }
    if (strcmp(op, "create") == 0 && nfds >= 1) { /* an extraction's files */
      box_fastcreate_handle(c->d, w->command, msg, fds[0]);
      for (int i = 1; i < nfds; i++) close(fds[i]);
      json_object_put(msg);
      continue;
    }
    if (strcmp(op, "list") == 0 && nfds >= 1) { /* a listing's fast path */
      box_fastlist_handle(c->d, w->command, msg, fds[0]);
      for (int i = 1; i < nfds; i++) close(fds[i]);
      json_object_put(msg);
      continue;
    }
    if (strcmp(op, "resolve") == 0) { /* command -v, type, which, hash */
      handle_resolve(c, msg, nfds >= 1 ? fds[0] : -1);
      for (int i = 1; i < nfds; i++) close(fds[i]);
      json_object_put(msg);
      continue;
    }
    if (strcmp(op, "status") == 0) { /* a shell:exec's status, for history rules */
      handle_status(c, msg);
      for (int i = 0; i < nfds; i++) close(fds[i]);
      json_object_put(msg);
      continue;
    }
    if (strcmp(op, "spawn") == 0 && nfds >= 1) {
      SpawnJob *job = g_new0(SpawnJob, 1);
      job->c = c;
      job->msg = msg;
      memcpy(job->fds, fds, sizeof(int) * (size_t)nfds);
      job->nfds = nfds;
      const BoxTraceContext *trace = box_decision_log_trace();
      if ((job->traced = trace != NULL)) job->trace = *trace;
      g_mutex_lock(&c->lock);
      g_ptr_array_add(c->threads, g_thread_new("box-spawn", spawn_thread, job));
      g_mutex_unlock(&c->lock);
      continue;
    }
    for (int i = 0; i < nfds; i++) close(fds[i]);
    json_object_put(msg);
  }
  if (expired || cancelled) {
    /* Nothing more is served for it: its namespace and its tools go,
     * wherever they are blocked. */
    kill_worker(c);
    end_tools(c);
  }
  int wait_status = box_reaper_wait(w->pid);
  boxd_untrack_pid(c->d, w->pid);
  c->reaped = true;
  if (expired) status = reported_status(c);
  if (cancelled || (status < 0 && __atomic_load_n(&c->d->stopping, __ATOMIC_ACQUIRE))) return 125;
  if (expired && status < 0) {
    /* After the worker is gone, so the message comes after its output. */
    say_expired(c);
    return BOX_SHELL_TIMEOUT_STATUS;
  }
  if (status < 0) status = box_status_code(wait_status);
  return status;
}

/* Ends what a command left: its tools, its spawn threads, the worker
 * itself, and its RAM root.  Runs after the caller has its status, in the
 * command's own thread (the broker has other threads accepting). */
static void command_cleanup(Command *c)
{
  BoxdWorker *w = c->w;
  if (!c->reaped) {
    kill_worker(c);
    box_reaper_wait(w->pid);
    boxd_untrack_pid(c->d, w->pid);
  }
  end_tools(c);
  for (guint i = 0; i < c->threads->len; i++) g_thread_join(g_ptr_array_index(c->threads, i));
  record_unreported_statuses(c);
  describe_wait(c);
  g_ptr_array_free(c->threads, TRUE);
  g_array_free(c->tool_pids, TRUE);
  g_cond_clear(&c->described_cond);
  g_mutex_clear(&c->lock);
  if (c->pidfd >= 0) close(c->pidfd);
  for (int i = 0; i < c->nchan; i++) close(c->chan[i]);
  box_vfs_command_end(c->d->vfs, w->command);
  boxd_worker_free(w);
  g_free(c);
}

/* One attempt on one worker: the command, or NULL when the worker never
 * became ready (the command did not start: another worker may take it). */
static Command *run_on_worker(Boxd *d, BoxdWorker *w, const char *source, const char *script,
                              int fds[3], int watch_fd, BoxdWatchFn on_watch, void *data,
                              int *status, gint64 *ready_at)
{
  if (!boxd_worker_wait_ready(w)) {
    boxd_worker_discard(d, w);
    return NULL;
  }
  *ready_at = g_get_monotonic_time();
  Command *c = g_new0(Command, 1);
  c->d = d;
  c->w = w;
  c->spin = (BoxSpin)BOX_SPIN_INIT;
  c->threads = g_ptr_array_new();
  c->tool_pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
  g_mutex_init(&c->lock);
  g_cond_init(&c->described_cond);
  c->described = true; /* until it is asked for */
  c->source = source;
  c->caller_err = -1;
  c->pidfd = (int)syscall(SYS_pidfd_open, w->pid, 0);
  /* Only now: until it said "ready" the worker was rooting itself, which
   * the mount serves undecided. */
  box_vfs_command_set_running(d->vfs, w->command, true);
  c->describe_at = g_get_monotonic_time() + DESCRIBE_AFTER_MS * 1000; /* for `box mount` */
  json_object *run = json_object_new_object();
  json_object_object_add(run, "op", json_object_new_string("run"));
  json_object_object_add(run, "source", json_object_new_string(source));
  if (script) json_object_object_add(run, "script", json_object_new_string(script));
  /* Only a worker asked for before the gateway started lacks it. */
  json_object *gateway_env = w->has_env ? NULL : boxd_gateway_worker_env(d);
  if (gateway_env) json_object_object_add(run, "env", gateway_env);
  /* box.toml's [agent] shell_timeout, else the Shell's default: boxd's
   * deadline, which the worker's own trails (WORKER_DEADLINE_GRACE_MS). */
  gint64 limit_ms = d->config && d->config->agent.shell_timeout_ms
                      ? d->config->agent.shell_timeout_ms
                      : BOX_SHELL_TIMEOUT_MS_DEFAULT;
  json_object_object_add(run, "timeout_ms",
                         json_object_new_int64(limit_ms + WORKER_DEADLINE_GRACE_MS));
  c->deadline = g_get_monotonic_time() + limit_ms * 1000;
  /* Kept to say why the command ended, should boxd end it. */
  c->caller_err = fcntl(fds[2], F_DUPFD_CLOEXEC, 3);
  bool sent = box_ctl_send(w->ctl, run, fds, 3);
  json_object_put(run);
  /* The first shell:exec is decided (and logged) only once "run" is on
   * its way: the worker's wake-up, which costs 50-100 us when its CPU has
   * halted, and its taking of the descriptors overlap the decision instead
   * of following it.  The worker runs nothing before this message. */
  json_object *decided = json_object_new_object();
  json_object_object_add(decided, "op", json_object_new_string("decided"));
  json_object *verdict = decide_first(c, source);
  if (verdict) json_object_object_add(decided, "decided", verdict);
  sent = sent && box_ctl_send(w->ctl, decided, NULL, 0);
  json_object_put(decided);
  /* The worker holds the caller's descriptors now (and passes them to any
   * tool): ours go while it starts, not on the way to the answer, and the
   * caller's output can end as soon as the worker's does. */
  if (sent)
    for (int i = 0; i < 3; i++) {
      close(fds[i]);
      fds[i] = -1;
    }
  *status = sent ? serve_command(c, watch_fd, on_watch, data) : -1;
  /* Before the answer: the caller's stderr ends with the command. */
  if (c->caller_err >= 0) close(c->caller_err);
  c->caller_err = -1;
  return c;
}

/* How long a command's end waits for its caller to go (see below). */
#define CALLER_GONE_MS 500

/* Waits until the caller, answered, has gone (its connection fd ended) or
 * has more to say, for CALLER_GONE_MS at most: only then are the worker
 * ended and its replacement asked for.  The alias exits as soon as it has
 * read the status, but it must first be woken, and a wake-up lands on a
 * CPU the worker's exit (its address space and PID namespace torn down),
 * the zygote's fork of the next worker and that worker's set-up would
 * otherwise all be taking, some 500-700 us of CPU queued ahead of it on
 * this two-CPU machine.  The worker waits for its end (shell_worker.c). */
static void end_after_caller(int fd)
{
  if (fd < 0) return;
  struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
  gint64 until = g_get_monotonic_time() + CALLER_GONE_MS * 1000;
  for (;;) {
    gint64 left = until - g_get_monotonic_time();
    if (left <= 0 || poll(&p, 1, (int)((left + 999) / 1000)) >= 0 || errno != EINTR) return;
  }
}

/* A text that starts with python3 (the Python alias's calls are such
 * texts, broker.c) runs on a worker of the warm Python zygote, unless a
 * tool table takes python3 from the Shell: then no worker runs it. */
static bool starts_with_python(Boxd *d, const char *source)
{
  source += strspn(source, " \t\n");
  const char *name = strncmp(source, "python3", 7) == 0  ? "python3"
                     : strncmp(source, "python", 6) == 0 ? "python"
                                                         : NULL;
  size_t n = name ? strlen(name) : 0;
  return n && (!source[n] || strchr(" \t\n;", source[n])) && !tool_takes(d, name);
}

void boxd_run_command(Boxd *d, const char *source, const char *script, int fds[3], int watch_fd,
                      BoxdWatchFn on_watch, BoxdAnswerFn answer, void *data)
{
  bool python = starts_with_python(d, source);
  int status = -1;
  box_telemetry_count(d->telemetry, BOX_TELEMETRY_STAT_COMMANDS); /* what `box ls` shows */
  for (int attempt = 0; attempt < 3; attempt++) {
    gint64 t0 = g_get_monotonic_time();
    BoxdWorker *w = boxd_worker_take(d, python);
    if (!w) break;
    gint64 t1 = g_get_monotonic_time();
    int command = w->command;
    gint64 t2 = 0;
    int ckpt_lock = boxd_checkpoints_begin(d);
    Command *c = run_on_worker(d, w, source, script, fds, watch_fd, on_watch, data, &status, &t2);
    if (!c) boxd_checkpoints_release(d, ckpt_lock);
    if (!c) {
      g_printerr("box: warning: a Shell worker ended before it was ready; trying another\n");
      status = -1;
      continue;
    }
    /* The caller is answered first; the pool's refill and the cleanup
     * come after, so neither runs ahead of the answer.  The command's
     * file decisions are in the log and the history when its end is
     * reported. */
    box_decision_log_flush(d->log);
    box_policy_history_sync(d->policy);
    /* queued before the reply, so that checkpoints follow the commands'
     * order; made after it */
    boxd_checkpoints_end(d, command, source, ckpt_lock);
    answer(data, status);
    end_after_caller(watch_fd);
    if (boxd_debug_timing())
      g_printerr("command %d: waited %.3f ms for a worker, %.3f ms for it to be ready, "
                 "served in %.3f ms\n",
                 command, (t1 - t0) / 1000.0, (t2 - t1) / 1000.0,
                 (g_get_monotonic_time() - t2) / 1000.0);
    boxd_pool_refill(d);
    command_cleanup(c);
    boxd_checkpoints_after(d, command, source);
    return;
  }
  box_decision_log_flush(d->log);
  box_policy_history_sync(d->policy);
  answer(data, -1);
  boxd_pool_refill(d);
}
