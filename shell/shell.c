/* shell.c — the public entry points, the Shell's lifetime, the arena. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/lazy_dl.h"
#include "shell/commands/python_launcher.h"
#include "shell/shell-private.h"

Shell *box_current_shell;

void box_var_free(gpointer p);

#define ARENA_BLOCK 65536

/* The lowest address this thread's recursion may reach: an eighth of the
 * stack (at least 256 KiB) is kept for the deepest leaf below it (a
 * command's 64 KiB read buffer, libc, a signal handler).  Found once per
 * thread; a fork keeps the stack where it was, so the child's is right. */
__thread uintptr_t box_stack_floor;

/* The floor of a stack of size bytes from low up. */
static uintptr_t floor_above(uintptr_t low, size_t size)
{
  size_t keep = size / 8 > 256 * 1024 ? size / 8 : 256 * 1024;
  if (keep > size / 2) keep = size / 2;
  return low + keep;
}

/* RLIMIT_STACK; 0 when there is none */
static size_t stack_limit(void)
{
  struct rlimit rl;
  return getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 0;
}

/* The floor of a stack that may grow to size below top. */
static uintptr_t floor_below(uintptr_t top, size_t size)
{
  if (size > top) size = top;
  return floor_above(top - size, size);
}

uintptr_t box_stack_floor_find(void)
{
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  size_t limit = stack_limit();
  /* The main thread's stack may grow to RLIMIT_STACK below its top.
   * pthread_getattr_np finds the top in /proc/self/maps, a tenth of a
   * Shell start's instructions (and a worker may have no /proc); the
   * kernel puts the program's name (AT_EXECFN) at the top already, so
   * that marks it too, when it lies above here within the limit.  With
   * no limit, the stack may grow down to the next mapping, which only
   * /proc tells. */
  uintptr_t execfn = getauxval(AT_EXECFN);
  if (limit && execfn > here && execfn - here < limit) {
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t end = execfn + strlen((const char *)execfn) + 1 + sizeof(void *);
    return floor_below((end + page - 1) & ~(page - 1), limit);
  }
  pthread_attr_t a;
  void *addr = NULL;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    if (pthread_attr_getstack(&a, &addr, &size) != 0) size = 0;
    pthread_attr_destroy(&a);
  }
  /* else RLIMIT_STACK below where we are now */
  return size ? floor_above((uintptr_t)addr, size)
              : floor_below(here, limit ? limit : 8 * 1024 * 1024);
}

/* The main thread's, found at start. */
__attribute__((constructor)) static void main_stack_floor(void)
{
  box_stack_floor = box_stack_floor_find();
}

/* Bump allocation in 64 KiB blocks; memory is not zeroed (the parser fills
 * every field).  Large requests get a block of their own. */
void *box_arena_alloc_slow(Shell *sh, size_t n)
{
  if (G_UNLIKELY(n > ARENA_BLOCK / 4)) {
    void *p = g_malloc(n);
    g_ptr_array_add(sh->arena, p);
    return p;
  }
  if (G_UNLIKELY(n > sh->arena_left)) {
    sh->arena_ptr = g_malloc(ARENA_BLOCK);
    g_ptr_array_add(sh->arena, sh->arena_ptr);
    sh->arena_left = ARENA_BLOCK;
  }
  void *p = sh->arena_ptr;
  sh->arena_ptr += n;
  sh->arena_left -= n;
  return p;
}

char *box_arena_strndup(Shell *sh, const char *s, size_t n)
{
  char *p = box_arena_alloc(sh, n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

BoxArenaMark box_arena_mark(Shell *sh)
{
  return (BoxArenaMark){ sh->arena->len, sh->arena_ptr, sh->arena_left };
}

void box_arena_release(Shell *sh, BoxArenaMark m)
{
  if (sh->arena->len > m.nblocks) {
    /* keep the newest full-size block for reuse when it is one */
    g_ptr_array_set_size(sh->arena, m.nblocks);
  }
  sh->arena_ptr = m.ptr;
  sh->arena_left = m.left;
}

bool box_shell_implements(const char *name)
{
  return name && (box_command_lookup(name) != NULL);
}

static void init_var(Shell *sh, const char *name, const char *value, bool exported)
{
  if (!value) return;
  box_var_set(sh, name, value);
  if (exported) box_var_export(sh, name);
}

static char **extra_env;

void box_shell_set_extra_env(char *const *vars)
{
  g_strfreev(extra_env);
  extra_env = vars ? g_strdupv((char **)vars) : NULL;
}

static char **host_commands;

void box_shell_set_host_commands(char *const *names)
{
  g_strfreev(host_commands);
  host_commands = names ? g_strdupv((char **)names) : NULL;
}

static pid_t shown_pid;

void box_shell_set_shown_pid(pid_t shown)
{
  shown_pid = shown;
}

pid_t box_pid_shown(pid_t pid)
{
  return pid == 1 && shown_pid > 1 ? shown_pid : pid;
}

pid_t box_pid_meant(pid_t pid)
{
  if (shown_pid > 1 && getpid() == 1) {
    if (pid == shown_pid) return 1;
    if (pid == -shown_pid) return 0; /* its process group: its own namespace's */
  }
  return pid;
}

/* bash lists a signal ignored at its start as trapped to '' and never
 * traps it (trap.c reads the mask). */
static void keep_ignored(Shell *sh)
{
  for (int s = 1; s < BOX_NSIG; s++) {
    struct sigaction sa;
    if (s == SIGKILL || s == SIGSTOP || sigaction(s, NULL, &sa) != 0 || sa.sa_handler != SIG_IGN)
      continue;
    sh->ignored_at_entry |= UINT64_C(1) << (s - 1);
    sh->traps[s] = g_strdup("");
  }
}

static void shell_init(Shell *sh, const BoxShellEnv *env, const BoxShellHost *host)
{
  memset(sh, 0, sizeof *sh);
  /* what init sets is never one of the variables made on first sight:
   * its names need not be looked at for them (vars.c) */
  sh->lazy_made = true;
  box_current_shell = sh;
  if (env && env->keep_ignored) keep_ignored(sh);
  box_signals_init(sh);
  sh->vars = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, box_var_free);
  sh->funcs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  sh->aliases = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  sh->hash = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  sh->subst_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  sh->frames = g_ptr_array_new();
  sh->jobs = g_array_new(FALSE, FALSE, sizeof(BoxJob));
  sh->arena = g_ptr_array_new_with_free_func(g_free);
  sh->host = host;
  sh->pid = box_pid_shown(getpid());
  sh->arg0 = g_strdup("bash");
  sh->pos = g_new0(char *, 1);
  sh->opts = O_BRACE | O_HASHALL;
  sh->max_depth = 1000;
  for (int i = 0; i < BOX_NFD; i++) sh->fd[i] = i < 3 ? i : -1;
  sh->fd_high = 3;
  mode_t m = umask(022);
  umask(m);
  sh->umask = m;
  const char *ws = env && env->workspace ? env->workspace : "/";
  sh->cwd = g_strdup(ws);
  for (char **e = extra_env; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || eq == *e) continue;
    char *name = g_strndup(*e, (gsize)(eq - *e));
    if (strcmp(name, "_") != 0) /* $_ is the Shell's own (vars.c) */
      init_var(sh, name, eq + 1, true);
    g_free(name);
  }
  if (env) {
    init_var(sh, "HOME", env->home, true);
    init_var(sh, "PATH", env->path, true);
    init_var(sh, "PWD", ws, true);
    init_var(sh, "USER", env->user, true);
  }
  /* what a fresh non-interactive bash sets, not exported */
  static const char *const shell_vars[][2] = {
    { "IFS", " \t\n" },       { "PS4", "+ " },
    { "OPTIND", "1" },        { "BASH_VERSION", "5.2.15(1)-release" },
    { "SHELL", "/bin/bash" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(shell_vars); i++)
    init_var(sh, shell_vars[i][0], shell_vars[i][1], false);
  /* the name `hostname` prints; the parent's PID, 1 for a box's worker
   * (the init of its namespace, whose parent is outside it) */
  char name[256] = "box";
  if (gethostname(name, sizeof name - 1) != 0) g_strlcpy(name, "box", sizeof name);
  name[sizeof name - 1] = '\0';
  init_var(sh, "HOSTNAME", name, false);
  char ppid[16];
  g_snprintf(ppid, sizeof ppid, "%d", getppid() > 0 ? (int)getppid() : 1);
  init_var(sh, "PPID", ppid, false);
  char uid[16];
  g_snprintf(uid, sizeof uid, "%d", (int)getuid());
  init_var(sh, "UID", uid, false);
  init_var(sh, "EUID", uid, false);
  /* bash's: UID and EUID cannot be assigned */
  box_var_lookup(sh, "UID")->flags |= V_READONLY | V_INTEGER;
  box_var_lookup(sh, "EUID")->flags |= V_READONLY | V_INTEGER;
  init_var(sh, "OSTYPE", "linux-gnu", false);
  /* as `enable -n NAME` leaves them: a program, found as any other */
  for (char **n = host_commands; n && *n; n++) {
    const BoxCommandDef *def = box_command_lookup(*n);
    if (!def) continue;
    if (!sh->disabled) sh->disabled = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_add(sh->disabled, (gpointer)def->name);
  }
  sh->started = g_get_monotonic_time();
  sh->pipestatus_one = -1;
  sh->lazy_made = false;
}

static void shell_done(Shell *sh)
{
  GHashTable *tables[] = { sh->vars, sh->funcs, sh->aliases, sh->hash, sh->subst_cache };
  for (size_t i = 0; i < G_N_ELEMENTS(tables); i++) g_hash_table_destroy(tables[i]);
  g_ptr_array_free(sh->frames, TRUE);
  box_callstack_free(sh);
  if (sh->traced_funcs) g_hash_table_destroy(sh->traced_funcs);
  box_history_free(sh);
  box_comp_table_free(sh->completions);
  if (sh->procsub_fds) g_array_free(sh->procsub_fds, TRUE);
  if (sh->disabled) g_hash_table_destroy(sh->disabled);
  for (guint i = 0; i < sh->jobs->len; i++) {
    g_free(g_array_index(sh->jobs, BoxJob, i).text);
    g_free(g_array_index(sh->jobs, BoxJob, i).cmd);
  }
  g_array_free(sh->jobs, TRUE);
  for (int i = 0; i < BOX_NTRAP; i++) g_free(sh->traps[i]);
  g_free(sh->exit_trap_held);
  box_globignore_free(sh);
  g_strfreev(sh->pos);
  char *texts[] = { sh->arg0, sh->cwd, sh->last_arg, sh->cmd_text };
  for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) g_free(texts[i]);
  g_ptr_array_free(sh->arena, TRUE);
  if (sh->argv_pool) {
    for (guint i = 0; i < sh->argv_pool->len; i++) g_ptr_array_free(sh->argv_pool->pdata[i], TRUE);
    g_ptr_array_free(sh->argv_pool, TRUE);
  }
  box_current_shell = NULL;
}

bool box_run_commands(Shell *sh, Parser *p, int *status, bool until_history)
{
  for (;;) {
    Node *n = NULL;
    ParseResult r = box_parse_next(p, &n);
    if (r == PARSE_EOF) return true;
    if (r == PARSE_ERROR) {
      int st = box_parse_error_status(p);
      *status = sh->status = st < 0 ? sh->status : st;
      return false;
    }
    if (!n && box_parse_skipped(p)) *status = sh->status = 1;
    if (n && !(sh->opts & O_NOEXEC)) *status = box_eval(sh, n);
    if (sh->jump == J_EXIT) {
      *status = sh->exit_status;
      return false;
    }
    if (sh->jump == J_DISCARD) *status = sh->status = 1;
    sh->jump = J_NONE;
    if (until_history && (sh->opts & O_HISTORY)) return true;
  }
}

/* Runs source on sh (from shell_init) and ends it. */
static int run_on(Shell *sh, const char *source, const BoxShellLimits *limits)
{
  unsigned tmo = limits && limits->timeout_ms ? limits->timeout_ms : BOX_SHELL_TIMEOUT_MS_DEFAULT;
  sh->deadline = g_get_monotonic_time() + (gint64)tmo * 1000;
  if (limits && limits->max_depth) sh->max_depth = (int)limits->max_depth;
  if (limits && limits->script && *limits->script) {
    g_free(sh->arg0);
    sh->arg0 = g_strdup(limits->script);
    box_callstack_push(sh, "main", limits->script, 0, false);
  }
  if (!source) source = "";
  int status = 0;
  if (strlen(source) > BOX_MAX_INPUT) {
    box_sh_error(sh, "input too large (%zu bytes; the limit is %d)", strlen(source), BOX_MAX_INPUT);
    shell_done(sh);
    return 1;
  }
  Parser *p = box_parser_new(sh, source, NULL);
  if (box_run_commands(sh, p, &status, true) && (sh->opts & O_HISTORY)) {
    /* set -o history: the rest is read a line at a time (history.c) */
    int line;
    const char *rest = box_parser_rest(p, &line);
    box_history_run(sh, rest, line, &status);
  }
  box_parser_free(p);
  sh->status = status;
  box_run_exit_trap(sh);
  if (sh->jump == J_EXIT) status = sh->exit_status;
  box_wait_background(sh);
  shell_done(sh);
  return status & 255;
}

int box_shell_run_limits(const char *source, const BoxShellEnv *env, const BoxShellHost *host,
                         const BoxShellLimits *limits)
{
  return box_shell_run_new(box_shell_new(env, host), source, limits);
}

struct BoxShellNew {
  Shell sh;
};

BoxShellNew *box_shell_new(const BoxShellEnv *env, const BoxShellHost *host)
{
  BoxShellNew *n = g_new(BoxShellNew, 1);
  shell_init(&n->sh, env, host);
  return n;
}

int box_shell_run_new(BoxShellNew *n, const char *source, const BoxShellLimits *limits)
{
  box_python_here_note(source);
  int status = run_on(&n->sh, source, limits);
  g_free(n);
  return status;
}

int box_shell_run(const char *source, const BoxShellEnv *env, const BoxShellHost *host)
{
  return box_shell_run_limits(source, env, host, NULL);
}

/* What commands open on first use (see commands/lazy_dl.h). */
static BoxDl *const lazy_libraries[] = { &box_curl_dl, &box_archive_dl, &box_magic_dl, &box_zlib_dl,
                                         &box_lzma_dl };

static bool each_lazy_library(bool (*step)(BoxDl *))
{
  box_python_prepare(); /* libpython is never mapped ahead of `python3` */
  bool ok = true;
  for (size_t i = 0; i < G_N_ELEMENTS(lazy_libraries); i++) ok = step(lazy_libraries[i]) && ok;
  return ok;
}

bool box_shell_preload(void)
{
  return each_lazy_library(box_dl_preload);
}

bool box_shell_prepare(void)
{
  return each_lazy_library(box_dl_prepare);
}

void box_shell_warm_python(bool usr_bare)
{
  box_python_warm_up(usr_bare);
  box_python_note_mappings();
}

pid_t box_shell_python_split(void)
{
  return box_python_split();
}

void box_shell_python_own_pages(bool start)
{
  if (start)
    box_python_own_pages_start();
  else
    box_python_own_pages_stop();
}

int box_shell_python_serve(BoxShellNew *n, pid_t child)
{
  return box_python_split_serve(&n->sh, child);
}

int box_shell_check(const char *source)
{
  Shell sh;
  shell_init(&sh, NULL, NULL);
  sh.check_only = true; /* nothing keeps a tree: each command's is dropped */
  Parser *p = box_parser_new(&sh, source ? source : "", NULL);
  int status = 0;
  box_arena_alloc(&sh, 8); /* the mark then lies inside a block kept for reuse */
  BoxArenaMark mark = box_arena_mark(&sh);
  for (;;) {
    Node *n = NULL;
    box_arena_release(&sh, mark);
    ParseResult r = box_parse_next(p, &n);
    if (r == PARSE_EOF) break;
    if (r == PARSE_ERROR) {
      status = 2;
      break;
    }
  }
  box_parser_free(p);
  shell_done(&sh);
  return status;
}
