/* worker.c — box-shell: the Shell worker, one command per process.
 *
 * boxd starts it as the init of fresh mount, PID and network namespaces.
 * It roots itself in its RAM root of the box's mount (with the shared roots
 * and the host's null devices bound in) under the zygote's seccomp filter,
 * drops every capability, sets no_new_privs, says it is ready, runs one
 * command, reports its status and ends — taking everything
 * it started with it.
 *
 * `box-shell -c TEXT` runs the interpreter alone, with no box around it:
 * programs run directly and nothing is decided (for tests and benchmarks).
 */
#include "box/ctl.h"
#include "shell/shell.h"
#include "tools/filter.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <limits.h>
#include <locale.h>
#include <malloc.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int ctl_fd = -1;

/* ---- host side of the Shell, over the control channel ---- */

/* The exit status report is one way, and boxd needs it only before the
 * next thing this process asks (history rules read it then) or at the
 * command's end.  So it waits for that request, or rides on "exit": one
 * message and one wakeup of boxd fewer per command.  A fork flushes it
 * first, so that nothing a child sends can overtake it. */
static json_object *pending_status;
static pid_t worker_pid;

static void flush_status(void)
{
  if (!pending_status) return;
  box_ctl_send(ctl_fd, pending_status, NULL, 0);
  json_object_put(pending_status);
  pending_status = NULL;
}

/* Once "run" has come, only the worker's main thread reads ctl, and boxd
 * sends nothing on it unasked: that thread's requests without descriptors
 * are answered on ctl itself, saving a socketpair and the passing of its
 * end per decision.  A forked child or another thread shares ctl, so it
 * still asks for a reply channel of its own. */
static json_object *ctl_call(json_object *request, const int *fds, int nfds)
{
  flush_status();
  if (nfds == 0 && getpid() == worker_pid && (pid_t)syscall(SYS_gettid) == worker_pid) {
    json_object_object_add(request, "reply", json_object_new_string("ctl"));
    if (!box_ctl_send(ctl_fd, request, NULL, 0)) return NULL;
    return box_ctl_recv(ctl_fd, NULL, NULL);
  }
  return box_ctl_call(ctl_fd, request, fds, nfds);
}

/* Which argv words the script spelled literally, for the log's redaction. */
static void add_literal(json_object *req, const BoxShellCommand *cmd)
{
  if (!cmd->literal) return;
  json_object *a = json_object_new_array();
  for (int i = 0; i < cmd->argc; i++)
    json_object_array_add(a, json_object_new_boolean(cmd->literal[i]));
  json_object_object_add(req, "literal", a);
}

static json_object *string_array(char *const *v, int n)
{
  json_object *a = json_object_new_array();
  for (int i = 0; i < n; i++) json_object_array_add(a, json_object_new_string(v[i]));
  return a;
}

/* The verdict boxd sent with "run" for the command's first
 * shell:exec, which it decided (and logged) itself from the text: the
 * request it decided, as text, and its answer.  Taken only by the first
 * decision, and only if that is the very request this process would send;
 * anything else asks boxd as usual. */
static char *decided_request;
static bool decided_permit;
static char *decided_message;

static void take_decided(json_object *run)
{
  json_object *dec, *req, *permit, *msg;
  if (!json_object_object_get_ex(run, "decided", &dec) ||
      !json_object_object_get_ex(dec, "request", &req) ||
      !json_object_object_get_ex(dec, "permit", &permit) ||
      !json_object_object_get_ex(dec, "message", &msg))
    return;
  decided_request = strdup(json_object_get_string(req));
  decided_permit = json_object_get_boolean(permit);
  decided_message = strdup(json_object_get_string(msg));
}

static json_object *answer_decided(json_object *req)
{
  if (!decided_request) return NULL;
  json_object *reply = NULL;
  if (getpid() == worker_pid &&
      strcmp(decided_request, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN)) == 0) {
    reply = json_object_new_object();
    json_object_object_add(reply, "permit", json_object_new_boolean(decided_permit));
    json_object_object_add(reply, "message", json_object_new_string(decided_message));
  }
  free(decided_request);
  free(decided_message);
  decided_request = decided_message = NULL;
  return reply;
}

static int send_with_ticket(json_object *req);

/* A decision's answer (consumed): permitted, or *message the policy's text. */
static bool take_verdict(json_object *reply, char **message)
{
  json_object *permit, *msg;
  bool ok =
    reply && json_object_object_get_ex(reply, "permit", &permit) && json_object_get_boolean(permit);
  if (!ok)
    *message = strdup(reply && json_object_object_get_ex(reply, "message", &msg)
                        ? json_object_get_string(msg)
                        : "the box did not answer the decision");
  json_object_put(reply);
  return ok;
}

static bool host_decide_exec(void *data, const BoxShellCommand *cmd, char **message)
{
  (void)data;
  json_object *req = box_ctl_exec_request(cmd);
  json_object *reply = answer_decided(req);
  if (!reply) reply = ctl_call(req, NULL, 0);
  json_object_put(req);
  return take_verdict(reply, message);
}

/* Several decisions in one round (a pipeline's stages, asked before they
 * fork): all the requests go out before the first answer is read, and
 * boxd answers them in the order sent, as it would have taken them one by
 * one.  The worker's main thread has them answered on ctl, in order;
 * anywhere else each has a reply socket of its own. */
static void host_decide_exec_many(void *data, const BoxShellCommand *cmds, int n, bool *permit,
                                  char **messages)
{
  (void)data;
  bool on_ctl = getpid() == worker_pid && (pid_t)syscall(SYS_gettid) == worker_pid;
  json_object **reply = g_new0(json_object *, n);
  /* per request: its reply socket, CTL_REPLY when answered on ctl, -1 when
   * answered already or not sent */
  enum { CTL_REPLY = -2 };
  int *ticket = g_new(int, n);
  flush_status();
  for (int i = 0; i < n; i++) {
    ticket[i] = -1;
    json_object *req = box_ctl_exec_request(&cmds[i]);
    if (i == 0 && (reply[0] = answer_decided(req))) {
      json_object_put(req);
    } else if (on_ctl) {
      json_object_object_add(req, "reply", json_object_new_string("ctl"));
      if (box_ctl_send(ctl_fd, req, NULL, 0)) ticket[i] = CTL_REPLY;
      json_object_put(req);
    } else {
      ticket[i] = send_with_ticket(req);
    }
  }
  for (int i = 0; i < n; i++) {
    if (ticket[i] == CTL_REPLY) reply[i] = box_ctl_recv(ctl_fd, NULL, NULL);
    if (ticket[i] >= 0) {
      reply[i] = box_ctl_recv(ticket[i], NULL, NULL);
      close(ticket[i]);
    }
    messages[i] = NULL;
    permit[i] = take_verdict(reply[i], &messages[i]);
  }
  g_free(ticket);
  g_free(reply);
}

static bool host_decide_dry(void *data, const char *action, const char *input_json, char **message)
{
  (void)data;
  json_object *input = json_tokener_parse(input_json);
  if (!input || !json_object_is_type(input, json_type_object)) {
    json_object_put(input);
    *message = strdup("box.decide: the input must be a table of the action's fields");
    return false;
  }
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("decide"));
  json_object_object_add(req, "action", json_object_new_string(action));
  json_object_object_add(req, "input", input);
  json_object_object_add(req, "dry_run", json_object_new_boolean(true));
  json_object *reply = ctl_call(req, NULL, 0);
  json_object_put(req);
  json_object *permit, *msg;
  bool ok =
    reply && json_object_object_get_ex(reply, "permit", &permit) && json_object_get_boolean(permit);
  *message = strdup(reply && json_object_object_get_ex(reply, "message", &msg)
                      ? json_object_get_string(msg)
                      : "the box did not answer the decision");
  json_object_put(reply);
  return ok;
}

/* The caller's stdin as the command got it. */
static struct stat caller_stdin;
static bool caller_stdin_known;

/* Whether fd is the caller's own stdin, which a program never reads
 * (spec/runtime.md §4.4: its stdin is then /dev/null). */
static bool is_caller_stdin(int fd)
{
  struct stat st;
  return caller_stdin_known && fstat(fd, &st) == 0 && st.st_dev == caller_stdin.st_dev &&
         st.st_ino == caller_stdin.st_ino;
}

static json_object *spawn_call(json_object *req, const int *fds, int nfds);

static char *host_resolve(void *data, const char *word, const char *cwd)
{
  (void)data;
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("resolve"));
  json_object_object_add(req, "word", json_object_new_string(word));
  json_object_object_add(req, "cwd", json_object_new_string(cwd));
  json_object *reply = ctl_call(req, NULL, 0);
  json_object_put(req);
  json_object *path;
  char *found = reply && json_object_object_get_ex(reply, "path", &path)
                  ? strdup(json_object_get_string(path))
                  : NULL;
  json_object_put(reply);
  return found;
}

static BoxSpawnResult host_spawn(void *data, const BoxShellCommand *cmd, int fd_out, int fd_err)
{
  (void)data;
  BoxSpawnResult r = { BOX_SPAWN_FAILED, 126, NULL };
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("spawn"));
  json_object_object_add(req, "argv", string_array(cmd->argv, cmd->argc));
  add_literal(req, cmd);
  json_object_object_add(req, "command", json_object_new_string(cmd->command));
  json_object_object_add(req, "cwd", json_object_new_string(cmd->cwd));
  /* the file the Shell found on its own PATH, in its view */
  if (cmd->program && strcmp(cmd->program, cmd->argv[0]) != 0)
    json_object_object_add(req, "path", json_object_new_string(cmd->program));
  if (cmd->envp) {
    /* the program's environment: exported variables and `A=1 prog` prefixes */
    int n = 0;
    while (cmd->envp[n]) n++;
    json_object_object_add(req, "env", string_array(cmd->envp, n));
  }
  /* stdout and stderr, then the rest, their numbers named by "fds" */
  int fds[2 + BOX_SPAWN_MAX_FDS] = { fd_out, fd_err };
  int nfds = 2;
  json_object *targets = json_object_new_array();
  for (int i = 0; i < cmd->nfds && i < BOX_SPAWN_MAX_FDS; i++)
    if (i != 1 && i != 2 && cmd->fds[i] >= 0 && (i > 0 || !is_caller_stdin(cmd->fds[i]))) {
      fds[nfds++] = cmd->fds[i];
      json_object_array_add(targets, json_object_new_int(i));
    }
  json_object_object_add(req, "fds", targets);
  json_object *reply = spawn_call(req, fds, nfds);
  json_object_put(req);
  json_object *kind, *status, *msg;
  if (!reply || !json_object_object_get_ex(reply, "kind", &kind)) {
    r.message = strdup("the box did not answer the spawn request");
    json_object_put(reply);
    return r;
  }
  const char *k = json_object_get_string(kind);
  if (strcmp(k, "ran") == 0)
    r.kind = BOX_SPAWN_RAN;
  else if (strcmp(k, "not_found") == 0)
    r.kind = BOX_SPAWN_NOT_FOUND;
  else if (strcmp(k, "denied") == 0)
    r.kind = BOX_SPAWN_DENIED;
  else if (strcmp(k, "no_tool") == 0)
    r.kind = BOX_SPAWN_NO_TOOL;
  if (json_object_object_get_ex(reply, "status", &status)) r.status = json_object_get_int(status);
  if (json_object_object_get_ex(reply, "message", &msg))
    r.message = strdup(json_object_get_string(msg));
  json_object_put(reply);
  return r;
}

static char *host_last_denial(void *data)
{
  (void)data;
  int fd = open("/.box/mydenial", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  char buf[8192];
  size_t len = 0;
  ssize_t n;
  while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
    len += (size_t)n;
  close(fd);
  while (len > 0 && buf[len - 1] == '\n') len--;
  if (len == 0) return NULL;
  buf[len] = '\0';
  return strdup(buf);
}

/* Sends req (consumed) with a socket of its own for the answer, whose
 * other end is returned as the request's ticket (-1 when not sent). */
static int send_with_ticket_fds(json_object *req, const int *fds, int nfds)
{
  int pair[2];
  if (nfds >= BOX_CTL_MAX_FDS || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
    json_object_put(req);
    return -1;
  }
  int all[BOX_CTL_MAX_FDS] = { pair[1] };
  for (int i = 0; i < nfds; i++) all[i + 1] = fds[i];
  flush_status();
  bool sent = box_ctl_send(ctl_fd, req, all, nfds + 1);
  json_object_put(req);
  close(pair[1]);
  if (!sent) {
    close(pair[0]);
    return -1;
  }
  return pair[0];
}

static int send_with_ticket(json_object *req)
{
  return send_with_ticket_fds(req, NULL, 0);
}

/* The signals that would end a forked part of the Shell (a job, a
 * pipeline's stage, `timeout`'s child) while it waits for its tool: there
 * the process stands for the program, as bash's child would be the program
 * itself, so they go to the tool (its PID 1 forwards them), which decides
 * how it ends. */
static const int tool_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };

/* The spawn request (consumed) and its answer, the signals above
 * forwarded while it runs. */
static json_object *spawn_call(json_object *req, const int *fds, int nfds)
{
  if (getpid() == worker_pid) return ctl_call(req, fds, nfds);
  sigset_t set, old;
  sigemptyset(&set);
  for (size_t i = 0; i < G_N_ELEMENTS(tool_signals); i++) {
    struct sigaction sa;
    if (sigaction(tool_signals[i], NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
      sigaddset(&set, tool_signals[i]);
  }
  pthread_sigmask(SIG_BLOCK, &set, &old);
  int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  json_object_get(req);
  int ticket = send_with_ticket_fds(req, fds, nfds);
  json_object *reply = NULL;
  while (ticket >= 0) {
    struct pollfd p[2] = { { .fd = ticket, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
    if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) break;
    struct signalfd_siginfo info;
    if (sfd >= 0 && (p[1].revents & POLLIN) && read(sfd, &info, sizeof info) == sizeof info) {
      json_object *sig = json_object_new_object();
      json_object_object_add(sig, "op", json_object_new_string("signal"));
      json_object_object_add(sig, "signal", json_object_new_int((int)info.ssi_signo));
      box_ctl_send(ticket, sig, NULL, 0);
      json_object_put(sig);
    }
    if (p[0].revents) {
      reply = box_ctl_recv(ticket, NULL, NULL);
      break;
    }
  }
  if (ticket >= 0) close(ticket);
  if (sfd >= 0) close(sfd);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return reply;
}

/* The fast path — boxd decides and opens regular files for us
 * (box/fastopen.c); anything it does not take is opened through the mount.
 * A request and its answer are apart (the answer comes on a socket of its
 * own), so the Shell may ask for the next files while it reads these. */
static int host_open_read_send(void *data, const char *cwd, const char *const *paths, int n)
{
  (void)data;
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("open"));
  json_object_object_add(req, "cwd", json_object_new_string(cwd ? cwd : ""));
  json_object_object_add(req, "paths", string_array((char *const *)paths, n));
  return send_with_ticket(req);
}

/* The answers of an "open" request read from ticket, for n paths. */
static void take_answers(int ticket, int n, int *fds, int *errs, char **messages)
{
  for (int i = 0; i < n; i++) {
    fds[i] = -1;
    errs[i] = 0;
    messages[i] = NULL;
  }
  int got[BOX_CTL_MAX_FDS];
  int ngot = 0;
  json_object *reply = box_ctl_recv(ticket, got, &ngot);
  json_object *answers = NULL;
  int used = 0;
  if (reply && json_object_object_get_ex(reply, "answers", &answers) &&
      json_object_is_type(answers, json_type_array)) {
    size_t na = json_object_array_length(answers);
    for (int i = 0; i < n && (size_t)i < na; i++) {
      json_object *a = json_object_array_get_idx(answers, (size_t)i), *v;
      if (json_object_object_get_ex(a, "fd", &v)) {
        if (used < ngot) fds[i] = got[used++];
      } else if (json_object_object_get_ex(a, "err", &v)) {
        errs[i] = json_object_get_int(v);
        if (json_object_object_get_ex(a, "message", &v))
          messages[i] = strdup(json_object_get_string(v));
      }
    }
  }
  for (int i = used; i < ngot; i++) close(got[i]);
  json_object_put(reply);
}

static void host_open_read_recv(void *data, int ticket, int n, int *fds, int *errs, char **messages)
{
  (void)data;
  if (ticket < 0) {
    for (int i = 0; i < n; i++) {
      fds[i] = -1;
      errs[i] = 0;
      messages[i] = NULL;
    }
    return;
  }
  take_answers(ticket, n, fds, errs, messages);
  close(ticket);
}

static void host_open_read(void *data, const char *cwd, const char *const *paths, int n, int *fds,
                           int *errs, char **messages)
{
  host_open_read_recv(data, host_open_read_send(data, cwd, paths, n), n, fds, errs, messages);
}

/* An extraction's new files through boxd (box/fastopen.c): one request
 * for a batch instead of the mount's LOOKUP and CREATE for each. */
static void host_create_write(void *data, const char *cwd, const char *const *paths,
                              const mode_t *modes, int n, int *fds, int *errs)
{
  (void)data;
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("create"));
  json_object_object_add(req, "cwd", json_object_new_string(cwd ? cwd : ""));
  json_object_object_add(req, "paths", string_array((char *const *)paths, n));
  json_object *m = json_object_new_array_ext(n);
  for (int i = 0; i < n; i++) json_object_array_add(m, json_object_new_int((int)modes[i]));
  json_object_object_add(req, "modes", m);
  int ticket = send_with_ticket(req);
  char *messages[BOX_CTL_MAX_FDS];
  if (ticket < 0) {
    for (int i = 0; i < n; i++) fds[i] = -1, errs[i] = 0;
    return;
  }
  take_answers(ticket, n, fds, errs, messages);
  close(ticket);
  for (int i = 0; i < n; i++) free(messages[i]); /* a refusal is the mount's to word */
}

/* A directory's listing through boxd (box/fastopen.c): one
 * request instead of the mount's OPENDIR, READDIRs and RELEASEDIR. */
static int host_list_dir_send(void *data, const char *cwd, const char *path, int open_first)
{
  (void)data;
  json_object *req = json_object_new_object();
  json_object_object_add(req, "op", json_object_new_string("list"));
  json_object_object_add(req, "cwd", json_object_new_string(cwd ? cwd : ""));
  json_object_object_add(req, "path", json_object_new_string(path));
  if (open_first > 0) json_object_object_add(req, "open", json_object_new_int(open_first));
  return send_with_ticket(req);
}

static int host_list_dir_recv(void *data, int ticket, char **records, size_t *len, int *err,
                              char **message, int open_first, int *fds, int *errs, char **messages)
{
  (void)data;
  *records = NULL;
  *len = 0;
  *err = 0;
  *message = NULL;
  for (int i = 0; i < open_first; i++) {
    fds[i] = -1;
    errs[i] = 0;
    messages[i] = NULL;
  }
  if (ticket < 0) return 0;
  json_object *head = box_ctl_recv(ticket, NULL, NULL);
  json_object *v;
  int taken = 0;
  if (!head || json_object_object_get_ex(head, "fallback", &v)) {
    taken = 0;
  } else if (json_object_object_get_ex(head, "err", &v)) {
    taken = 1;
    *err = json_object_get_int(v);
    if (json_object_object_get_ex(head, "message", &v))
      *message = strdup(json_object_get_string(v));
  } else {
    /* the records, in tagged chunks: 'D' data, 'E' the end, 'X' a failure */
    taken = 1;
    size_t cap = 0;
    char *buf = NULL;
    for (;;) {
      if (cap - *len < 32769) {
        cap = cap ? 2 * cap : 65536;
        char *nb = realloc(buf, cap);
        if (!nb) {
          *err = ENOMEM;
          break;
        }
        buf = nb;
      }
      ssize_t n = recv(ticket, buf + *len, cap - *len, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *err = EIO; /* ended without its end: boxd went away */
        break;
      }
      char tag = buf[*len];
      if (tag == 'D') {
        memmove(buf + *len, buf + *len + 1, (size_t)n - 1);
        *len += (size_t)n - 1;
      } else {
        if (tag == 'X') {
          buf[*len + (size_t)n < cap ? *len + (size_t)n : cap - 1] = '\0';
          *err = atoi(buf + *len + 1);
          if (*err <= 0) *err = EIO;
        } else if (tag != 'E') {
          *err = EIO;
        }
        break;
      }
    }
    if (*err) {
      free(buf);
      *len = 0;
    } else {
      *records = buf ? buf : malloc(1);
      if (open_first > 0) /* the leading files' answers follow the records */
        take_answers(ticket, open_first, fds, errs, messages);
    }
  }
  json_object_put(head);
  close(ticket);
  return taken;
}

static int host_list_dir(void *data, const char *cwd, const char *path, char **records, size_t *len,
                         int *err, char **message, int open_first, int *fds, int *errs,
                         char **messages)
{
  return host_list_dir_recv(data, host_list_dir_send(data, cwd, path, open_first), records, len,
                            err, message, open_first, fds, errs, messages);
}

/* A permitted shell:exec's exit status, for history rules (one
 * way: boxd records it as the command's ::response, no reply). */
static void host_exec_status(void *data, const BoxShellCommand *cmd, int status)
{
  (void)data;
  json_object *msg = json_object_new_object();
  json_object_object_add(msg, "op", json_object_new_string("status"));
  json_object_object_add(msg, "action", json_object_new_string("shell:exec"));
  json_object_object_add(msg, "input", box_ctl_exec_input(cmd));
  json_object_object_add(msg, "status", json_object_new_int(status));
  flush_status();
  pending_status = msg;
  /* A forked part of the command (subshell, pipeline stage) ends with
   * _exit and sends no "exit": it reports at once. */
  if (getpid() != worker_pid) flush_status();
}

/* ---- standalone host: no box, programs run directly ---- */

static bool local_decide_exec(void *data, const BoxShellCommand *cmd, char **message)
{
  (void)data, (void)cmd, (void)message;
  return true;
}

static BoxSpawnResult local_spawn(void *data, const BoxShellCommand *cmd, int fd_out, int fd_err)
{
  (void)data;
  BoxSpawnResult r = { BOX_SPAWN_RAN, 0, NULL };
  pid_t pid = fork();
  if (pid == 0) {
    int in = cmd->nfds > 0 && cmd->fds[0] >= 0 ? cmd->fds[0] : open("/dev/null", O_RDONLY);
    /* every descriptor the command names (5<<EOF, exec 7>f) at its own
     * number, as the box's spawn places them: each is first moved above
     * all the numbers, so placing one never overwrites another's source */
    int src[BOX_SPAWN_MAX_FDS + 3] = { in, fd_out, fd_err };
    int n = MAX(cmd->nfds, 3);
    for (int i = 3; i < n; i++) src[i] = cmd->fds[i];
    for (int i = 0; i < n; i++)
      if (src[i] >= 0 && (src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, BOX_SPAWN_MAX_FDS + 3)) < 0)
        _exit(126);
    for (int i = 0; i < n; i++) {
      if (src[i] >= 0 ? dup2(src[i], i) < 0 : i <= 2 && close(i) < 0 && errno != EBADF) _exit(126);
    }
    if (cmd->envp)
      execvpe(cmd->argv[0], cmd->argv, cmd->envp);
    else
      execvp(cmd->argv[0], cmd->argv);
    _exit(errno == ENOENT ? 127 : 126);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0) {
    r.kind = BOX_SPAWN_FAILED;
    r.status = 126;
    r.message = strdup(strerror(errno));
    return r;
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
    r.kind = BOX_SPAWN_NOT_FOUND;
    r.status = 127;
  } else {
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  return r;
}

/* ---- setup ---- */

static void die(const char *what)
{
  fprintf(stderr, "box-shell: %s: %s\n", what, strerror(errno));
  exit(125);
}

/* Binds src on rel, a path inside the tree of descriptor tree. */
static void bind_at(int tree, const char *src, const char *rel)
{
  char dst[PATH_MAX];
  g_snprintf(dst, sizeof dst, "/proc/self/fd/%d/%s", tree, rel);
  if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0) {
    fprintf(stderr, "box-shell: bind %s on %s: %s\n", src, rel, strerror(errno));
    exit(125);
  }
}

/* The bounding set only limits what an execve could gain, so the zygote
 * empties it once for all its workers (they keep the effective capabilities
 * they root themselves with, and drop those below): one system call per
 * capability fewer on every worker. */
static bool bounding_set_empty;

static void drop_bounding_set(void)
{
  for (int cap = 0; cap <= CAP_LAST_CAP; cap++) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  bounding_set_empty = true;
}

/* A worker the zygote forked runs under the zygote's filter already (see
 * tools/filter.h); one started on its own installs the worker's. */
static bool filtered;

static void install_filter(const void *(*compile)(GError **))
{
  g_autoptr(GError) error = NULL;
  const void *prog = compile(&error);
  if (!prog) {
    fprintf(stderr, "box-shell: %s\n", error ? error->message : "no seccomp filter");
    exit(125);
  }
  if (!box_seccomp_install(prog)) die("install the seccomp filter");
  filtered = true;
}

/* The worker is placed: from here on it runs what the agent wrote, so it
 * keeps no capability, cannot gain one, and calls only what its
 * allow-list names (no exec, namespace, ptrace…: seccomp.c), and the
 * placement calls only as a process without the capability they need. */
static void drop_privileges(void)
{
  if (!bounding_set_empty) drop_bounding_set();
  cap_t none = cap_init();
  if (!none || cap_set_proc(none) != 0) die("drop capabilities");
  cap_free(none);
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    die("clear the ambient capabilities");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  if (!filtered) install_filter(box_seccomp_worker);
}

/* What the zygote keeps to place its workers: a worker mounts, pivots and
 * joins its area's mount namespace (CAP_SYS_ADMIN, and CAP_SYS_CHROOT for
 * setns), and nothing else.  Workers are forked from here with no more. */
static void zygote_drop_privileges(void)
{
  const cap_value_t kept[] = { CAP_SYS_ADMIN, CAP_SYS_CHROOT };
  cap_t caps = cap_init();
  if (!caps || cap_set_flag(caps, CAP_PERMITTED, 2, kept, CAP_SET) != 0 ||
      cap_set_flag(caps, CAP_EFFECTIVE, 2, kept, CAP_SET) != 0 || cap_set_proc(caps) != 0)
    die("drop the zygote's capabilities");
  cap_free(caps);
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    die("clear the ambient capabilities");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
}

static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
                                       NULL };

/* The host's null devices, bound over the RAM root's dev/ entries, cost a
 * mount daemon LOOKUP each.  A small tmpfs of the worker's own laid over
 * dev/ holds their mount points instead: dev/ is looked up once and the
 * four names never reach the daemon.  It is read-only once they are bound
 * (only the devices themselves take writes) and ends with the worker.
 * Returns false, with nothing changed, if the kernel refuses the tmpfs. */
static bool devices_on_tmpfs(int tree)
{
  int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0) return false;
  int mnt = -1;
  if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) == 0 &&
      fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) == 0 &&
      fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "16", 0) == 0 &&
      fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
    mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  close(fs);
  if (mnt < 0) return false;
  for (int i = 0; devices[i]; i++) {
    int f = openat(mnt, devices[i] + 5, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f < 0) {
      close(mnt);
      return false;
    }
    close(f);
  }
  if (move_mount(mnt, "", tree, "dev", MOVE_MOUNT_F_EMPTY_PATH) != 0) {
    close(mnt);
    return false;
  }
  /* From here on the tmpfs covers dev/: the devices must land on it. */
  for (int i = 0; devices[i]; i++) bind_at(tree, devices[i], devices[i] + 1);
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
  if (mount_setattr(mnt, "", AT_EMPTY_PATH, &ro, sizeof ro) != 0) die("make dev/ read-only");
  close(mnt);
  return true;
}

/* Setting up a worker is most of a command's cost, and most of that is
 * LOOKUP (and ACCESS) round trips to the mount daemon for the RAM root's
 * new entries.  So the RAM root's own entry is walked once: its tree is
 * cloned and attached at one descriptor, everything inside is reached
 * through that descriptor, and the pivot moves the working directory
 * (the host's /) into it without a chdir's permission check. */
static void enter_root(const char *root, char **binds, const char *workspace)
{
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("make / private");
  int at = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (at < 0) die("open the RAM root");
  /* Bound onto itself: pivot_root needs a mount. */
  int tree = open_tree(at, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0 ||
      move_mount(tree, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    die("bind the RAM root");
  close(at);
  for (char **b = binds; b && *b; b++) {
    char *eq = strrchr(*b, '=');
    if (!eq) continue;
    *eq = '\0';
    const char *dst = eq + 1;
    while (*dst == '/') dst++;
    bind_at(tree, *b, dst);
  }
  if (!devices_on_tmpfs(tree))
    for (int i = 0; devices[i]; i++) bind_at(tree, devices[i], devices[i] + 1);
  char new_root[64];
  g_snprintf(new_root, sizeof new_root, "/proc/self/fd/%d", tree);
  if (chdir("/") != 0 || syscall(SYS_pivot_root, new_root, new_root) != 0 ||
      umount2(".", MNT_DETACH) != 0)
    die("pivot_root");
  close(tree);
  if (chdir(workspace) != 0) die(workspace);
}

/* ---- warming up ----
 *
 * A forked worker shares the zygote's pages until it writes them and maps
 * code only as it first runs it: its first command took ~60 µs of such
 * faults in the interpreter and ~80 µs more around its first decision.  So
 * before it says "ready" the worker runs `:` once on a host of its own,
 * which permits without asking boxd (it only builds the request a decision
 * would send) and records nothing: `:` touches no file and no descriptor,
 * and the interpreter keeps no state from one run to the next.  The
 * faults are then taken while the worker waits in the pool. */
static bool warm_decide(void *data, const BoxShellCommand *cmd, char **message)
{
  (void)data, (void)message;
  json_object *input = box_ctl_exec_input(cmd);
  (void)json_object_to_json_string_ext(input, JSON_C_TO_STRING_PLAIN);
  json_object_put(input);
  return true;
}

static void warm_status(void *data, const BoxShellCommand *cmd, int status)
{
  (void)data, (void)cmd, (void)status;
}

static void warm_up(const char *home, const char *workspace)
{
  BoxShellEnv env = { home, workspace, "/usr/bin:/bin", "strands-box", false };
  BoxShellHost host = { .decide_exec = warm_decide, .exec_status = warm_status };
  box_shell_run(":", &env, &host);
  json_object_put(json_tokener_parse("{\"op\":\"run\",\"source\":\":\",\"env\":{}}"));
}

/* What the Shell's curl needs to reach the egress gateway: set in the
 * zygote from the one fork request that carries it (inherited by every
 * worker forked after), or from "run" for a worker asked for before the
 * gateway started. */
static void set_env(json_object *msg)
{
  json_object *env_obj;
  if (json_object_object_get_ex(msg, "env", &env_obj) &&
      json_object_is_type(env_obj, json_type_object)) {
    json_object_object_foreach (env_obj, key, val) setenv(key, json_object_get_string(val), 1);
  }
}

/* Joins the mount namespace an earlier worker of the same RAM area built
 * (its root is that area, the roots and devices bound in it). */
static bool join_root(int ns, const char *workspace)
{
  bool ok = setns(ns, CLONE_NEWNS) == 0;
  close(ns);
  if (ok && chdir(workspace) != 0) die(workspace);
  return ok;
}

/* One command: root in the mount, report ready, run, report the status.
 * ns >= 0: the area's mount namespace, to join instead of rooting. */
static int worker_main(int ctl, const char *root, char **binds, const char *workspace,
                       const char *home, int ns)
{
  ctl_fd = ctl;
  /* A worker that roots itself hands boxd its namespace with "ready". */
  int built = -1;
  if (ns < 0 || !join_root(ns, workspace)) {
    /* Forked into the zygote's namespace to join another: never root
     * there. */
    if (ns >= 0 && unshare(CLONE_NEWNS) != 0) die("unshare the mount namespace");
    built = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    enter_root(root, binds, workspace);
  }
  drop_privileges();
  warm_up(home, workspace);
  /* The egress routes' phantoms ("NAME=value" lines, from boxd through
   * the zygote's environment) are the Shell's variables too (§7). */
  const char *phantoms = getenv("BOX_PHANTOMS");
  if (phantoms && *phantoms) {
    g_auto(GStrv) extra = g_strsplit(phantoms, "\n", -1);
    box_shell_set_extra_env(extra);
  }
  const char *host_commands = getenv("BOX_HOST_COMMANDS");
  if (host_commands && *host_commands) {
    g_auto(GStrv) names = g_strsplit(host_commands, "\n", -1);
    box_shell_set_host_commands(names);
  }
  /* The interpreter's starting state (variables, tables, cwd) is built
   * now, while the worker waits in the pool, rather than after "run". */
  BoxShellEnv env = { home, workspace, "/usr/bin:/bin", "strands-box", false };
  BoxShellHost host = { .decide_exec = host_decide_exec,
                        .decide_exec_many = host_decide_exec_many,
                        .spawn = host_spawn,
                        .last_denial = host_last_denial,
                        .decide_dry = host_decide_dry,
                        .exec_status = host_exec_status,
                        .open_read = host_open_read,
                        .create_write = host_create_write,
                        .list_dir = host_list_dir,
                        .list_dir_send = host_list_dir_send,
                        .list_dir_recv = host_list_dir_recv,
                        .open_read_send = host_open_read_send,
                        .open_read_recv = host_open_read_recv,
                        .resolve = host_resolve };
  BoxShellNew *shell = box_shell_new(&env, &host);
  worker_pid = getpid();
  pthread_atfork(flush_status, NULL, NULL);
  json_object *ready = json_object_new_object();
  json_object_object_add(ready, "op", json_object_new_string("ready"));
  if (!box_ctl_send(ctl_fd, ready, &built, built >= 0 ? 1 : 0)) die("report ready");
  json_object_put(ready);
  if (built >= 0) close(built);
  int fds[BOX_CTL_MAX_FDS];
  int nfds = 0;
  json_object *run = box_ctl_recv(ctl_fd, fds, &nfds);
  json_object *source;
  if (!run || nfds != 3 || !json_object_object_get_ex(run, "source", &source)) return 125;
  for (int i = 0; i < 3; i++)
    if (dup2(fds[i], i) < 0) die("take the alias's descriptors");
  for (int i = 0; i < nfds; i++)
    if (fds[i] > 2) close(fds[i]);
  caller_stdin_known = fstat(0, &caller_stdin) == 0;
  set_env(run); /* only when the fork request could not carry it */
  take_decided(run);
  /* The wall-clock limit boxd carries from box.toml (0 = the default). */
  BoxShellLimits limits = { 0 };
  json_object *timeout_obj;
  if (json_object_object_get_ex(run, "timeout_ms", &timeout_obj)) {
    int64_t ms = json_object_get_int64(timeout_obj);
    if (ms > 0 && ms <= UINT_MAX) limits.timeout_ms = (unsigned)ms;
  }
  int status = box_shell_run_new(shell, json_object_get_string(source), &limits);
  /* Let go of the caller's descriptors before reporting, so its output
   * ends exactly when its status arrives.  Closed rather than pointed at
   * /dev/null: nothing is written after this, and the open would be one
   * more walk through the mount on every command's path. */
  fflush(NULL);
  for (int i = 0; i < 3; i++) close(i);
  json_object *done = json_object_new_object();
  json_object_object_add(done, "op", json_object_new_string("exit"));
  json_object_object_add(done, "status", json_object_new_int(status));
  if (pending_status) {
    json_object_object_add(done, "exec_status", pending_status);
    pending_status = NULL;
  }
  box_ctl_send(ctl_fd, done, NULL, 0);
  json_object_put(done);
  json_object_put(run);
  return status;
}

/* ---- zygote ----
 *
 * Starting box-shell costs milliseconds of dynamic linking (libcurl, Lua,
 * OpenSSL…), so boxd starts it once as a zygote: an idle, single-threaded
 * process that forks each worker into a fresh PID namespace on request,
 * and into a fresh mount namespace unless boxd sends the one an earlier
 * worker built around the same RAM area (the worker joins it; no worker
 * can change a namespace: it holds no capability once it runs).  The
 * child waits for boxd's "go" (its namespace is placed in the mount by
 * then) before it touches the mount.  The zygote reaps its
 * workers and reports each status to boxd.
 */
static bool wait_for_go(int ctl)
{
  json_object *go = box_ctl_recv(ctl, NULL, NULL);
  json_object *op;
  bool ok =
    go && json_object_object_get_ex(go, "op", &op) && strcmp(json_object_get_string(op), "go") == 0;
  json_object_put(go);
  return ok;
}

static char **json_strv(json_object *arr)
{
  size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
  char **v = g_new0(char *, n + 1);
  for (size_t i = 0; i < n; i++)
    v[i] = g_strdup(json_object_get_string(json_object_array_get_idx(arr, i)));
  return v;
}

static const char *json_str(json_object *obj, const char *key)
{
  json_object *v;
  return json_object_object_get_ex(obj, key, &v) ? json_object_get_string(v) : NULL;
}

/* The zygote's own messages are printed on its stack, not built on its
 * heap: see zygote_main. */
static void zygote_report_deaths(int ctl)
{
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    char msg[64];
    int n = snprintf(msg, sizeof msg, "{\"op\":\"died\",\"pid\":%d,\"status\":%d}", (int)pid, st);
    box_ctl_send_text(ctl, msg, (size_t)n, NULL, 0);
  }
}

/* A forked worker's start: the fork request's text (read by the zygote,
 * parsed here), boxd's "go", then its one command.  ns >= 0: the area's
 * mount namespace to join. */
static int worker_start(int ctl, const char *text, int ns)
{
  json_object *req = json_tokener_parse(text);
  const char *op = json_str(req, "op");
  if (!op || strcmp(op, "fork") != 0 || !json_str(req, "root") || !json_str(req, "workspace") ||
      !json_str(req, "home"))
    return 125;
  json_object *binds_obj = NULL;
  json_object_object_get_ex(req, "binds", &binds_obj);
  char **binds = json_strv(binds_obj);
  if (!wait_for_go(ctl)) return 125;
  return worker_main(ctl, json_str(req, "root"), binds, json_str(req, "workspace"),
                     json_str(req, "home"), ns);
}

static int zygote_main(int ctl, bool warm_python)
{
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  /* boxd's channel and the zygote's own descriptors, and so every worker's,
   * keep clear of the script's numbers 0-9 */
  ctl = box_fd_own(ctl);
  int sfd = box_fd_own(signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK));
  if (ctl < 0 || sfd < 0) die("keep the channel and signalfd above 9");
  /* Arrange for what commands load lazily (libcurl) to stay reachable by
   * workers rooted in the mount; mapping it here instead would cost every
   * fork ~155 more mappings to copy. */
  if (!box_shell_prepare()) box_shell_preload();
  if (warm_python) box_shell_warm_python();
  drop_bounding_set();
  zygote_drop_privileges();
  install_filter(box_seccomp_zygote);
  /* Compiling the filter (libseccomp) and the start-up above leave some
   * 250 KiB of freed chunks scattered through the heap.  Each page of them
   * would be copied into every worker's page tables at fork and faulted
   * on, copy on write, as its malloc reuses them (~13 faults a command):
   * handed back to the kernel, they cost neither. */
  malloc_trim(0);
  for (;;) {
    struct pollfd p[2] = { { .fd = ctl, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (p[1].revents) {
      struct signalfd_siginfo info;
      while (read(sfd, &info, sizeof info) == sizeof info) {}
      zygote_report_deaths(ctl);
    }
    if (!p[0].revents) continue;
    /* Each fork leaves every page of this process shared with the new
     * worker, so each page written afterwards is copied on the next write:
     * a fork request is only received and answered here (the recv buffer
     * and the stack), and parsed by the worker it starts. */
    int fds[BOX_CTL_MAX_FDS];
    int nfds = 0;
    const char *text = box_ctl_recv_text(ctl, fds, &nfds);
    if (!text) return 0; /* boxd is gone */
    if (nfds == 0) {
      /* boxd's setting for every worker forked from now on (its gateway's
       * environment): set here once, inherited by each. */
      json_object *msg = json_tokener_parse(text);
      set_env(msg);
      json_object_put(msg);
      continue;
    }
    if (nfds > 2) {
      for (int i = 0; i < nfds; i++) close(fds[i]);
      continue;
    }
    /* With the area's namespace (fds[1]) the worker joins it; without,
     * it builds one of its own. */
    int ns = nfds == 2 ? fds[1] : -1;
    pid_t pid = (pid_t)syscall(SYS_clone, (ns >= 0 ? 0 : CLONE_NEWNS) | CLONE_NEWPID | SIGCHLD,
                               NULL, NULL, NULL, NULL);
    if (pid == 0) {
      close(ctl);
      close(sfd);
      sigprocmask(SIG_UNBLOCK, &chld, NULL);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      _exit(worker_start(box_fd_own(fds[0]), text, box_fd_own(ns)));
    }
    close(fds[0]);
    if (ns >= 0) close(ns);
    char reply[48];
    int n =
      snprintf(reply, sizeof reply, "{\"op\":\"forked\",\"pid\":%d}", pid > 0 ? (int)pid : -1);
    box_ctl_send_text(ctl, reply, (size_t)n, NULL, 0);
  }
}

int main(int argc, char **argv)
{
  /* Text is UTF-8 to the Shell (${#s} counts characters): fnmatch and
   * regcomp must read it so too, or `?` matches one byte of μ.  Only the
   * character type: collation and messages stay C's. */
  setlocale(LC_CTYPE, "C.UTF-8");
  g_autofree char *root = NULL, *workspace = NULL, *home = NULL, *command = NULL;
  gboolean check_only = FALSE, zygote = FALSE, warm_python = FALSE;
  g_auto(GStrv) binds = NULL;
  int ctl = -1;
  GOptionEntry entries[] = {
    /* FILENAME: the text's bytes as given; STRING would convert them from
     * the locale's charset, and with none set (C) refuse any non-ASCII */
    { "command", 'c', 0, G_OPTION_ARG_FILENAME, &command,
      "Run TEXT with no box around it (tests, benchmarks)", "TEXT" },
    { "no-exec", 'n', 0, G_OPTION_ARG_NONE, &check_only,
      "With -c: only parse TEXT (a syntax error exits 2)", NULL },
    { "ctl-fd", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &ctl, NULL, NULL },
    { "zygote", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &zygote, NULL, NULL },
    { "warm-python", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &warm_python, NULL, NULL },
    { "root", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &root, NULL, NULL },
    { "workspace", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &workspace, NULL, NULL },
    { "home", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &home, NULL, NULL },
    { "bind", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME_ARRAY, &binds, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- the boxfs Shell worker");
  g_option_context_set_summary(ctx, "boxd starts one box-shell per command; run alone with -c.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "box-shell: %s\n", error->message);
    return 2;
  }
  if (command && check_only) return box_shell_check(command);
  if (check_only && argc > 1) {
    /* `box-shell -n FILE`: parse a script alone (benchmarks) */
    g_autofree char *text = NULL;
    if (!g_file_get_contents(argv[1], &text, NULL, &error)) {
      fprintf(stderr, "box-shell: %s\n", error->message);
      return 2;
    }
    return box_shell_check(text);
  }
  if (command) {
    g_autofree char *cwd = g_get_current_dir();
    /* the caller's environment, as `bash -c` and the box's Shell take theirs */
    box_shell_set_extra_env(environ);
    const char *path = getenv("PATH");
    BoxShellEnv env = { g_get_home_dir(), cwd, path && *path ? path : "/usr/bin:/bin",
                        "strands-box", true };
    BoxShellHost host = { .decide_exec = local_decide_exec, .spawn = local_spawn };
    return box_shell_run(command, &env, &host);
  }
  if (zygote && ctl >= 0) return zygote_main(ctl, warm_python);
  if (ctl < 0 || !root || !workspace || !home) {
    fprintf(stderr, "box-shell: started outside a box; use -c TEXT to run the interpreter alone\n");
    return 2;
  }
  box_shell_preload(); /* before enter_root hides the host's libraries */
  return worker_main(box_fd_own(ctl), root, binds, workspace, home, -1);
}
