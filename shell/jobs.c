/* jobs.c — processes and signals: traps and their delivery, fork and wait,
 * the run's deadline, pipelines and background jobs. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/shell-private.h"

static volatile sig_atomic_t pending_sigs[BOX_NSIG];
volatile sig_atomic_t box_any_pending;

static void on_signal(int sig)
{
  if (sig > 0 && sig < BOX_NSIG) pending_sigs[sig] = 1;
  box_any_pending = 1;
}

void box_trap_install(Shell *sh, int sig)
{
  if (sig <= 0 || sig >= BOX_NSIG || sig == SIGKILL || sig == SIGSTOP) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  if (!sh->traps[sig])
    sa.sa_handler = SIG_DFL;
  else if (!*sh->traps[sig])
    sa.sa_handler = SIG_IGN;
  else
    sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

void box_run_trap_text(Shell *sh, const char *text)
{
  int saved_status = sh->status;
  int saved_jump = sh->jump, saved_n = sh->jump_n;
  sh->jump = J_NONE;
  bool was = sh->in_trap;
  sh->in_trap = true;
  /* the trap's own commands leave the PIPESTATUS of the one it follows */
  gpointer ps_key = NULL, ps = NULL;
  g_hash_table_steal_extended(sh->vars, "PIPESTATUS", &ps_key, &ps);
  int ps_one = sh->pipestatus_one;
  box_eval_text_at(sh, text, NULL, (int)sh->lineno);
  if (ps)
    g_hash_table_insert(sh->vars, ps_key, ps);
  else
    g_hash_table_remove(sh->vars, "PIPESTATUS");
  sh->pipestatus_one = ps_one;
  sh->in_trap = was;
  if (sh->jump != J_EXIT) {
    sh->jump = saved_jump;
    sh->jump_n = saved_n;
    sh->status = saved_status;
  }
}

void box_run_pending_traps(Shell *sh)
{
  if (!box_any_pending) return;
  box_any_pending = 0;
  for (int s = 1; s < BOX_NSIG; s++) {
    if (!pending_sigs[s]) continue;
    pending_sigs[s] = 0;
    if (sh->traps[s] && *sh->traps[s]) box_run_trap_text(sh, sh->traps[s]);
  }
}

void box_run_exit_trap(Shell *sh)
{
  char *t = sh->traps[TRAP_EXIT];
  if (!t) return;
  sh->traps[TRAP_EXIT] = NULL;
  int st = sh->status;
  if (sh->jump == J_EXIT) st = sh->exit_status;
  sh->status = st;
  sh->jump = J_NONE;
  sh->in_exit_trap = true; /* $BASH_COMMAND stays the last command's */
  box_eval_text(sh, t, NULL);
  sh->in_exit_trap = false;
  if (sh->jump != J_EXIT) { sh->exit_status = st; }
  sh->jump = J_EXIT;
  g_free(t);
}

G_NORETURN void box_child_exit(Shell *sh, int status)
{
  if (sh->jump == J_EXIT) status = sh->exit_status;
  if (sh->jump == J_DISCARD) status = 1;
  sh->status = status;
  box_run_exit_trap(sh);
  if (sh->jump == J_EXIT) status = sh->exit_status;
  _exit(status & 255);
}

/* The run's wall clock is past: says so once and ends the run. */
static bool past_deadline(Shell *sh)
{
  if (!sh->deadline || g_get_monotonic_time() <= sh->deadline) return false;
  if (sh->jump != J_EXIT) {
    box_sh_error(sh, "execution timeout exceeded");
    sh->jump = J_EXIT;
    sh->exit_status = BOX_SHELL_TIMEOUT_STATUS;
  }
  return true;
}

/* bash forks a simple command of a pipeline or a & job where it runs it,
 * with nothing there to catch a fatal error: it ends that child as it would
 * end the shell (127 for ${u?} and set -u), where a forked ( ), compound or
 * substitution ends with 1. */
void box_child_simple(Shell *sh, const Node *n)
{
  if (n->kind != N_SIMPLE) return;
  sh->in_child = false;
  sh->simple_child = n;
}

/* …and when that fatal error comes from the command's own words, the
 * child still has the shell's EXIT trap: bash drops it only once they
 * are expanded. */
void box_child_words_failed(Shell *sh, const Node *n)
{
  if (n != sh->simple_child || !sh->exit_trap_held || sh->traps[TRAP_EXIT]) return;
  sh->traps[TRAP_EXIT] = sh->exit_trap_held;
  sh->exit_trap_held = NULL;
}

pid_t box_fork(Shell *sh)
{
  /* A process tree grows by forks, each child running little before it
   * forks again (`f() { echo $(f)$(f); }`): past the deadline none is
   * started, whatever the tree's shape. */
  if (past_deadline(sh)) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    box_sh_error(sh, "fork: %s", box_strerror(errno));
    return -1;
  }
  if (pid == 0) {
    sh->in_child = true;
    g_free(sh->exit_trap_held);
    sh->exit_trap_held = sh->traps[TRAP_EXIT];
    sh->traps[TRAP_EXIT] = NULL;
    if (!(sh->opts & O_ERRTRACE)) {
      /* a subshell, substitution or job runs without the ERR trap unless
       * errtrace (set -E) passes it on */
      g_free(sh->traps[TRAP_ERR]);
      sh->traps[TRAP_ERR] = NULL;
    }
    if (!(sh->opts & O_FUNCTRACE)) {
      /* and without DEBUG unless functrace (set -T) */
      g_free(sh->traps[TRAP_DEBUG]);
      sh->traps[TRAP_DEBUG] = NULL;
    }
    for (int s = 1; s < BOX_NSIG; s++)
      if (sh->traps[s] && *sh->traps[s]) {
        g_free(sh->traps[s]);
        sh->traps[s] = NULL;
        box_trap_install(sh, s);
      }
    g_array_set_size(sh->jobs, 0);
    signal(SIGPIPE, SIG_DFL);
  }
  return pid;
}

int box_wait_pid(pid_t pid)
{
  int ws;
  while (waitpid(pid, &ws, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  if (WIFEXITED(ws)) return WEXITSTATUS(ws);
  if (WIFSIGNALED(ws)) return 128 + WTERMSIG(ws);
  return 1;
}

bool box_check_limits(Shell *sh)
{
  static unsigned tick;
  if (sh->deadline && (++tick & 63) == 0 && past_deadline(sh)) return false;
  if (box_any_pending) box_run_pending_traps(sh);
  return sh->jump != J_EXIT;
}

/* ---- pipelines, jobs ----------------------------------------------------------------- */

static void set_pipestatus(Shell *sh, int *st, size_t n)
{
  box_var_unset(sh, "PIPESTATUS");
  sh->pipestatus_one = n == 1 ? st[0] : -1;
  for (size_t i = 0; i < n; i++) {
    char k[16], v[16];
    g_snprintf(k, sizeof k, "%zu", i);
    g_snprintf(v, sizeof v, "%d", st[i]);
    box_var_set_elem(sh, "PIPESTATUS", k, v, false);
  }
}

/* A command that is not a pipeline is one of one: PIPESTATUS is its
 * status.  Set only when that changes, so a loop of commands that succeed
 * does not rebuild the array each time. */
void box_set_pipestatus1(Shell *sh, int status)
{
  if (sh->pipestatus_one != status) set_pipestatus(sh, &status, 1);
}

/* A last stage that only starts a program (literal words, no assignment
 * or redirection, naming no function and no command of the Shell) can
 * change nothing of this shell, so it runs from here as bash's lastpipe
 * would run it, without a fork: `git log | python3 -c …` costs what
 * `python3 -c … <file` does. */
static bool stage_only_spawns(Shell *sh, Node *c)
{
  if (c->kind != N_SIMPLE || c->nredirs || c->u.simple.nassigns || !c->u.simple.nwords)
    return false;
  for (size_t i = 0; i < c->u.simple.nwords; i++)
    if (!(c->u.simple.words[i]->flags & W_PLAIN)) return false;
  Node *fn;
  const BoxCommandDef *def;
  box_lookup_first_word(sh, c->u.simple.words[0]->text, false, &fn, &def);
  return !fn && !def;
}

/* A word quote removal alone expands (plain text, '…', "…" with nothing
 * to expand inside): one field, no longer than its text, and nothing read
 * or run to get it. */
static bool quotes_only(const Word *w)
{
  if (w->flags & W_PLAIN) return true;
  for (const char *s = w->text; *s; s++) {
    if (*s == '\'') {
      s = strchr(s + 1, '\'');
      if (!s) return false;
    } else if (*s == '"') {
      for (s++; *s != '"'; s++)
        if (!*s || *s == '$' || *s == '`' || *s == '\\') return false;
    } else if (strchr("\\`$*?[~{(<>\n", *s)) {
      return false;
    }
  }
  return true;
}

/* A first stage that is the Shell's echo of such words writes at most
 * their length (no escape writes more bytes than it is long), so
 * when the pipe holds that much it cannot block, and echo changes nothing
 * of the shell: this shell runs it itself before the next stage starts
 * (`echo 'print(42)' | python3`).  A forked stage no longer asks for its
 * decision itself (ask_ahead), but the fork, the child's exit and its
 * wait still cost about 0.2 ms of CPU here, four times this row's
 * budget: that is what this saves.  The decision, the output and
 * PIPESTATUS are the child's.  With stderr into the pipe as well (|&),
 * the stage forks as any other. */
static bool echo_fits(Shell *sh, const Node *n, int pipe_in)
{
  const Node *c = n->u.pipe.cmds[0];
  if (c->kind != N_SIMPLE || c->nredirs || c->u.simple.nassigns || !c->u.simple.nwords ||
      n->u.pipe.errpipe[0] || strcmp(c->u.simple.words[0]->text, "echo"))
    return false;
  size_t len = 0;
  for (size_t i = 0; i < c->u.simple.nwords; i++) {
    if (!quotes_only(c->u.simple.words[i])) return false;
    len += strlen(c->u.simple.words[i]->text) + 1;
  }
  Node *fn;
  const BoxCommandDef *def;
  box_lookup_first_word(sh, "echo", false, &fn, &def);
  if (fn || !def || def->fn != box_cmd_echo) return false;
  int room = fcntl(pipe_in, F_GETPIPE_SZ);
  return room > 0 && len <= (size_t)room;
}

/* The first shell:exec of the stages from i on whose first decision is
 * known before their fork, up to the first that is not (or i alone when
 * it is not), asked in one round: their children then ask nothing before
 * they run, in the order they start.  Returns the stage after them. */
static size_t ask_ahead(Shell *sh, Node *n, size_t i, size_t end, Node **ahead, bool *permit,
                        char **messages)
{
  size_t j = i;
  while (j < end && (ahead[j] = box_exec_first_decision(sh, n->u.pipe.cmds[j]))) j++;
  if (j > i) box_exec_decide_ahead(sh, ahead + i, j - i, permit + i, messages + i);
  return MAX(j, i + 1);
}

int box_run_pipe(Shell *sh, Node *n)
{
  size_t k = n->u.pipe.n;
  pid_t *pids = g_new0(pid_t, k);
  int *sts = g_new0(int, k);
  int prev = -1;
  size_t started = 0;
  int status = 0;
  /* lastpipe: the last element runs in this shell (job control is never
   * on), so `… | read x` keeps x */
  bool here_last =
    k > 1 && ((sh->shopts & SH_LASTPIPE) || stage_only_spawns(sh, n->u.pipe.cmds[k - 1]));
  Node **ahead = g_new0(Node *, k);
  bool *permit = g_new0(bool, k);
  char **messages = g_new0(char *, k);
  size_t asked = 0;
  for (size_t i = 0; i < k; i++) {
    int p[2] = { -1, -1 };
    bool last = i + 1 == k;
    if (last && here_last) {
      int in = sh->fd[0];
      const Node *quiet = sh->status_quiet;
      sh->fd[0] = prev;
      sh->status_quiet = n->u.pipe.cmds[i];
      sts[i] = box_eval(sh, n->u.pipe.cmds[i]);
      sh->fd[0] = in;
      sh->status_quiet = quiet;
      pids[started++] = 0;
      break;
    }
    if (!last && pipe2(p, O_CLOEXEC) < 0) {
      box_sh_error(sh, "pipe: %s", box_strerror(errno));
      status = 1;
      break;
    }
    /* bash runs a simple element's DEBUG trap before it forks it */
    if (!box_debug_trap(sh, n->u.pipe.cmds[i])) {
      if (p[0] >= 0) {
        close(p[0]);
        close(p[1]);
      }
      status = sh->exit_status;
      break;
    }
    if (i == 0 && p[1] >= 0 && echo_fits(sh, n, p[1])) {
      int out = sh->fd[1];
      sh->fd[1] = p[1];
      sts[0] = box_exec_stage_here(sh, n->u.pipe.cmds[0]);
      sh->fd[1] = out;
      close(p[1]);
      pids[started++] = 0;
      prev = p[0];
      continue;
    }
    if (i >= asked) asked = ask_ahead(sh, n, i, here_last ? k - 1 : k, ahead, permit, messages);
    pid_t pid = box_fork(sh);
    if (pid < 0) {
      if (p[0] >= 0) {
        close(p[0]);
        close(p[1]);
      }
      status = 1;
      break;
    }
    if (pid == 0) {
      if (p[0] >= 0) close(p[0]);
      if (prev >= 0) sh->fd[0] = prev;
      if (!last) {
        sh->fd[1] = p[1];
        if (n->u.pipe.errpipe[i]) sh->fd[2] = p[1];
      }
      sh->status_quiet = n->u.pipe.cmds[i];
      sh->debug_done = n->u.pipe.cmds[i];
      sh->ahead_node = ahead[i];
      sh->ahead_permit = permit[i];
      sh->ahead_message = messages[i];
      messages[i] = NULL;
      box_child_simple(sh, n->u.pipe.cmds[i]);
      int st = box_eval(sh, n->u.pipe.cmds[i]);
      box_child_exit(sh, st);
    }
    pids[started++] = pid;
    if (prev >= 0) close(prev);
    if (p[1] >= 0) close(p[1]);
    prev = p[0];
  }
  if (prev >= 0) close(prev);
  for (size_t i = 0; i < started; i++)
    if (pids[i]) sts[i] = box_wait_pid(pids[i]);
  if (started == k) {
    status = sts[k - 1];
    if (sh->opts & O_PIPEFAIL)
      for (size_t i = 0; i < k; i++)
        if (sts[i]) status = sts[i];
    set_pipestatus(sh, sts, k);
  }
  for (size_t i = 0; i < k; i++) free(messages[i]);
  g_free(ahead);
  g_free(permit);
  g_free(messages);
  g_free(pids);
  g_free(sts);
  return status;
}

int box_run_background(Shell *sh, Node *n)
{
  if (!box_debug_trap(sh, n->u.un.child)) return sh->exit_status;
  pid_t pid = box_fork(sh);
  if (pid < 0) return 1;
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (sh->fd[0] == 0) sh->fd[0] = devnull;
    sh->errexit_off = sh->invert_depth = 0;
    sh->status_quiet = n->u.un.child;
    sh->debug_done = n->u.un.child;
    box_child_simple(sh, n->u.un.child);
    sh->loop_depth = 0;
    int st = box_eval(sh, n->u.un.child);
    box_child_exit(sh, st);
  }
  BoxJob j = { pid, 0, false, g_strdup("job"), box_command_text(n->u.un.child) };
  g_array_append_val(sh->jobs, j);
  sh->last_bg = pid;
  return 0;
}

void box_wait_background(Shell *sh)
{
  for (guint i = 0; i < sh->jobs->len; i++) {
    BoxJob *j = &g_array_index(sh->jobs, BoxJob, i);
    if (!j->done) {
      j->status = box_wait_pid(j->pid);
      j->done = true;
    }
  }
}
