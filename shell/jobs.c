/* jobs.c — processes and signals: traps and their delivery, fork and wait,
 * the run's deadline, pipelines and background jobs. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/shell-private.h"

static volatile sig_atomic_t pending_sigs[BOX_NSIG];
volatile sig_atomic_t box_any_pending;

volatile sig_atomic_t box_in_utility, box_pipe_broke;

static void on_signal(int sig)
{
  if (sig == SIGPIPE && box_in_utility) {
    box_pipe_broke = 1; /* a program's, not the Shell's: see on_pipe */
    return;
  }
  if (sig > 0 && sig < BOX_NSIG) pending_sigs[sig] = 1;
  box_any_pending = 1;
}

/* A box's worker is the init of its PID namespace, and the kernel gives an
 * init no signal it has no handler for: not SIGPIPE when its reader has
 * gone, not `kill $$`.  bash dies of those, so the Shell, while it is an
 * init, handles each signal that ends a process by default and ends as it
 * would have (an init cannot die of a signal: it exits 128+N, the status
 * its death would have given).  The signals a fault raises are not among
 * them: the kernel forces those, init or not. */
static bool shell_is_init;

static bool ends_by_default(int sig)
{
  static const int ends[] = { SIGHUP,    SIGINT,  SIGQUIT, SIGABRT,   SIGUSR1, SIGUSR2,
                              SIGPIPE,   SIGALRM, SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ,
                              SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,    SIGSYS };
  /* not the real-time ones: a sigaction each at every command's start, for
   * a `kill -34 $$` nobody writes */
  for (size_t i = 0; i < G_N_ELEMENTS(ends); i++)
    if (ends[i] == sig) return true;
  return false;
}

static void end_as_by(int sig)
{
  _exit(128 + sig);
}

/* SIGPIPE with no trap.  In bash a program the Shell implements (cat, seq,
 * grep) would be a process of its own, and only it would die of its
 * reader going: the program sees EPIPE, stops, and its status is 141
 * (exec.c).  A builtin's write ends the Shell itself, as in bash. */
static void on_pipe(int sig)
{
  if (box_in_utility) {
    box_pipe_broke = 1;
    return;
  }
  if (shell_is_init) _exit(128 + sig);
  signal(sig, SIG_DFL);
  raise(sig); /* delivered as the handler returns */
}

void box_trap_install(Shell *sh, int sig)
{
  if (sig <= 0 || sig >= BOX_NSIG || sig == SIGKILL || sig == SIGSTOP) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  if (!sh->traps[sig])
    sa.sa_handler = sig == SIGPIPE                          ? on_pipe
                    : shell_is_init && ends_by_default(sig) ? end_as_by
                                                            : SIG_DFL;
  else if (!*sh->traps[sig])
    sa.sa_handler = SIG_IGN;
  else
    sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

/* Whether the Shell runs as an init changes what "no trap" means for the
 * signals that end a process (above); a child it forks is no init. */
void box_signals_as_init(Shell *sh, bool init)
{
  if (shell_is_init == init) return;
  shell_is_init = init;
  for (int s = 1; s < BOX_NSIG; s++)
    if (!sh->traps[s] && ends_by_default(s) && s != SIGPIPE) box_trap_install(sh, s);
}

void box_signals_init(Shell *sh)
{
  box_signals_as_init(sh, getpid() == 1);
  if (!sh->traps[SIGPIPE]) box_trap_install(sh, SIGPIPE);
}

void box_run_trap_text(Shell *sh, const char *text)
{
  int saved_status = sh->status;
  int saved_jump = sh->jump, saved_n = sh->jump_n;
  sh->jump = J_NONE;
  bool was = sh->in_trap;
  sh->in_trap = true;
  /* the trap sees the PIPESTATUS of the command it follows, and its own
   * commands leave that one in place */
  gpointer ps_key = NULL, ps = NULL;
  g_hash_table_steal_extended(sh->vars, "PIPESTATUS", &ps_key, &ps);
  if (ps) g_hash_table_insert(sh->vars, g_strdup(ps_key), box_var_copy(ps));
  int ps_one = sh->pipestatus_one;
  box_eval_text_at(sh, text, NULL, (int)sh->lineno);
  if (ps)
    g_hash_table_replace(sh->vars, ps_key, ps);
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
    /* a process of its own: a closed pipe ends it whatever forked it (a
     * program's `sh -c`), and its own programs mark their own */
    box_in_utility = 0;
    box_pipe_broke = 0;
    box_signals_as_init(sh, false);
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
    box_trap_install(sh, SIGPIPE); /* whatever a command had made of it */
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

/* A foreground job's wait, told as bash tells it: a process killed by
 * SIGTERM says "Terminated" (bash, as Debian builds it, words other
 * signals with its pid and text, and none for SIGINT or SIGPIPE); a
 * subshell's own waits say nothing. */
int box_wait_foreground(Shell *sh, pid_t pid)
{
  int ws;
  while (waitpid(pid, &ws, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  if (WIFEXITED(ws)) return WEXITSTATUS(ws);
  if (!WIFSIGNALED(ws)) return 1;
  if (WTERMSIG(ws) == SIGTERM && !sh->in_child)
    box_fdprintf(sh->fd[2], "Terminated%s\n", WCOREDUMP(ws) ? " (core dumped)" : "");
  return 128 + WTERMSIG(ws);
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

/* ---- a first stage the Shell runs itself ----------------------------------------
 * bash forks every stage of a pipeline.  A first stage that can change
 * nothing of this shell that bash would let it see (its builtins only
 * print, its words only read) runs in this shell instead, before the next
 * stage starts: the fork, the child's exit and its wait cost about 0.2 ms,
 * which a tool fed by `printf … |` would otherwise pay.  Its output goes
 * into the pipe without blocking while the pipe has room (the Shell holds
 * the reading end meanwhile, so no write of it fails); what does not fit
 * is written by a child once the stage is done, concurrently with the
 * stages after it, and that child's status (141 when the reader went
 * first) is the stage's.  What bash's child would leave behind, $?, $_,
 * errexit, exit statuses and decisions, box_exec_stage_here keeps. */

/* A word quote removal alone expands (plain text, '…', "…" with nothing
 * to expand inside). */
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

/* w's text without its quote characters is exactly s (w quotes_only). */
static bool unquoted_is(const Word *w, const char *s)
{
  for (const char *t = w->text;; t++) {
    if (*t == '\'' || *t == '"') continue;
    if (*t != *s) return false;
    if (!*t) return true;
    s++;
  }
}

/* A parameter a child reads as its own, not the shell's: a subshell's
 * $BASHPID and $BASH_SUBSHELL differ, and reading $RANDOM here would move
 * the shell's own sequence. */
static bool name_reads_only(Shell *sh, const char *s, size_t len)
{
  char name[64];
  if (len >= sizeof name) return false;
  memcpy(name, s, len);
  name[len] = 0;
  if (g_ascii_isdigit(name[0])) return !(sh->opts & O_NOUNSET) || atoi(name) <= sh->npos;
  if (!g_ascii_isalpha(name[0]) && name[0] != '_')
    return !(sh->opts & O_NOUNSET) || strchr("@*#?$-", name[0]);
  static const char *const own[] = { "BASHPID", "BASH_SUBSHELL", "RANDOM", "SRANDOM",
                                     "BASH_COMMAND" };
  for (size_t i = 0; i < G_N_ELEMENTS(own); i++)
    if (strcmp(name, own[i]) == 0) return false;
  ShellVar *v = g_hash_table_lookup(sh->vars, name);
  if (v && (v->flags & V_NAMEREF)) return false;
  /* set -u: an unset name would end the stage with a message */
  return !(sh->opts & O_NOUNSET) || box_var_get(sh, name);
}

/* The parameter expansion at s (just past its '$') when it only reads a
 * value: $name, ${name}, ${#name}, ${name[@]}, $1, $@ … with no operator
 * (${x:=…} assigns, ${x?} fails, ${x:-$(…)} runs).  Returns where it
 * ends (a lone '$' is itself), or NULL. */
static const char *param_reads_only(Shell *sh, const char *s)
{
  bool braced = *s == '{';
  if (braced) {
    s++;
    if (*s == '#' && s[1] != '}') s++;
  }
  const char *name = s;
  if (g_ascii_isalpha(*s) || *s == '_') {
    while (g_ascii_isalnum(*s) || *s == '_') s++;
  } else if (g_ascii_isdigit(*s)) {
    s++;
    while (braced && g_ascii_isdigit(*s)) s++;
  } else if (*s && strchr("@*#?$!-", *s)) {
    s++;
  } else {
    return braced ? NULL : s;
  }
  size_t len = (size_t)(s - name);
  if (braced && *s == '[') {
    if ((s[1] != '@' && s[1] != '*') || s[2] != ']') return NULL;
    s += 3;
  }
  if (braced && *s++ != '}') return NULL;
  return name_reads_only(sh, name, len) ? s : NULL;
}

/* A word whose expansion only reads: quoting, escapes, globs, braces,
 * tildes and parameters as param_reads_only takes them; no substitution
 * or arithmetic. */
static bool word_reads_only(Shell *sh, const Word *w)
{
  if (w->flags & W_PLAIN) return true;
  bool dq = false;
  for (const char *s = w->text; *s;) {
    char c = *s++;
    if (c == '\\') {
      if (!*s) return false;
      s++;
    } else if (c == '`') {
      return false;
    } else if (c == '"') {
      dq = !dq;
    } else if (c == '$') {
      if (!dq && *s == '\'') { /* $'…' */
        for (s++; *s != '\''; s++) {
          if (!*s) return false;
          if (*s == '\\' && s[1]) s++;
        }
        s++;
      } else if ((!dq && *s == '"') || *s == '(' || *s == '[') {
        return false;
      } else if (!(s = param_reads_only(sh, s))) {
        return false;
      }
    } else if (dq) {
      continue;
    } else if (c == '\'') {
      if (!(s = strchr(s, '\''))) return false;
      s++;
    } else if (strchr("()<>|;&\n", c)) {
      return false;
    }
  }
  return !dq;
}

/* A simple command of the stage: no assignment or redirection, and one of
 * the builtins that only print or test.  printf -v assigns; test -v of an
 * element evaluates its subscript, so test takes literal words only. */
static bool simple_reads_only(Shell *sh, Node *c)
{
  size_t nw = c->u.simple.nwords;
  Word **w = c->u.simple.words;
  if (c->nredirs || c->u.simple.nassigns || !nw || !(w[0]->flags & W_PLAIN)) return false;
  Node *fn;
  const BoxCommandDef *def;
  box_lookup_simple(sh, c, w[0]->text, true, &fn, &def);
  if (fn || !def) return false;
  bool literal = def->fn == box_cmd_test;
  if (def->fn == box_cmd_printf) {
    if (nw < 2 || !quotes_only(w[1]) || unquoted_is(w[1], "-v")) return false;
  } else if (!literal && def->fn != box_cmd_echo && def->fn != box_cmd_true &&
             def->fn != box_cmd_false) {
    return false;
  }
  for (size_t i = 1; i < nw; i++)
    if (literal ? !quotes_only(w[i]) : !word_reads_only(sh, w[i])) return false;
  return true;
}

/* c, or a group or list of such commands (`{ echo a; echo b; }`, `a && b`),
 * with no redirection anywhere. */
static bool stage_reads_only(Shell *sh, Node *c, int depth)
{
  if (depth > 16) return false;
  for (; c->kind == N_SEQ && !c->nredirs; c = c->u.bin.right)
    if (!stage_reads_only(sh, c->u.bin.left, depth + 1)) return false;
  if (c->nredirs) return false;
  switch (c->kind) {
  case N_SIMPLE: return simple_reads_only(sh, c);
  case N_GROUP:
  case N_NOT: return stage_reads_only(sh, c->u.un.child, depth + 1);
  case N_AND:
  case N_OR:
    return stage_reads_only(sh, c->u.bin.left, depth + 1) &&
           stage_reads_only(sh, c->u.bin.right, depth + 1);
  default: return false;
  }
}

/* The pipeline's first stage runs in this shell.  Not with a trap the
 * child would not run or would run otherwise (ERR, DEBUG, a signal's), nor
 * with failglob or, beside an EXIT trap, set -u: a failed expansion of the
 * child's own words runs that trap there. */
static bool first_stage_here(Shell *sh, Node *n)
{
  if (n->u.pipe.errpipe[0]) return false;
  for (int s = 1; s < BOX_NTRAP; s++)
    if (sh->traps[s] && (s >= BOX_NSIG || *sh->traps[s])) return false;
  if ((sh->shopts & SH_FAILGLOB) || (sh->traps[TRAP_EXIT] && (sh->opts & O_NOUNSET))) return false;
  return stage_reads_only(sh, n->u.pipe.cmds[0], 0);
}

/* Runs the first stage into the pipe p, whose reading end this shell
 * holds until the next stage has it; p[1] is closed after.  Returns the
 * child that writes what did not fit (0: none, -1: its fork failed), the
 * stage's status in *status. */
static pid_t run_first_stage(Shell *sh, Node *c, int p[2], int *status)
{
  int out = sh->fd[1];
  int held = box_held_fd;
  fcntl(p[1], F_SETFL, O_NONBLOCK);
  box_held_fd = sh->fd[1] = p[1];
  *status = box_exec_stage_here(sh, c);
  box_held_fd = held;
  sh->fd[1] = out;
  pid_t pid = 0;
  if (box_held_rest && box_held_rest->len) {
    GByteArray *rest = box_held_rest;
    box_held_rest = NULL;
    pid = box_fork(sh);
    if (pid == 0) {
      close(p[0]);
      fcntl(p[1], F_SETFL, 0);
      /* SIGPIPE ends it as it would have ended the stage */
      box_write_all(p[1], rest->data, rest->len);
      _exit(*status & 255);
    }
    g_byte_array_unref(rest);
  }
  close(p[1]);
  return pid;
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

/* Stage i's first shell:exec as ask_ahead got it, for the stage's run to
 * take instead of asking (its message is the run's to free). */
static void hand_ahead(Shell *sh, Node **ahead, const bool *permit, char **messages, size_t i)
{
  sh->ahead_node = ahead[i];
  sh->ahead_permit = permit[i];
  sh->ahead_message = messages[i];
  messages[i] = NULL;
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
    if (i >= asked) asked = ask_ahead(sh, n, i, here_last ? k - 1 : k, ahead, permit, messages);
    if (i == 0 && !last && first_stage_here(sh, n)) {
      hand_ahead(sh, ahead, permit, messages, 0);
      pid_t pid = run_first_stage(sh, n->u.pipe.cmds[0], p, &sts[0]);
      if (pid < 0) {
        close(p[0]);
        status = 1;
        break;
      }
      pids[started++] = pid;
      prev = p[0];
      continue;
    }
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
      hand_ahead(sh, ahead, permit, messages, i);
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
    if (pids[i]) sts[i] = i + 1 == k ? box_wait_foreground(sh, pids[i]) : box_wait_pid(pids[i]);
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

BoxJob *box_job_by_spec(Shell *sh, const char *spec)
{
  guint n = sh->jobs->len;
  const char *s = spec + (spec[0] == '%');
  long k = 0;
  if (!*s || !strcmp(s, "%") || !strcmp(s, "+"))
    k = (long)n;
  else if (!strcmp(s, "-"))
    k = n > 1 ? (long)n - 1 : (long)n;
  else if (g_ascii_isdigit(*s))
    k = strspn(s, "0123456789") == strlen(s) && strlen(s) < 9 ? atol(s) : 0;
  else
    for (guint i = n; i-- > 0 && !k;) {
      const char *cmd = g_array_index(sh->jobs, BoxJob, i).cmd;
      if (cmd && (*s == '?' ? strstr(cmd, s + 1) != NULL : g_str_has_prefix(cmd, s)))
        k = (long)i + 1;
    }
  return k >= 1 && k <= (long)n ? &g_array_index(sh->jobs, BoxJob, k - 1) : NULL;
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
