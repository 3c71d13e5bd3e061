/* shell.h — the Shell interpreter (spec/shell.md, spec/runtime.md §4.4).
 *
 * The interpreter runs in a worker process whose filesystem is the box's
 * FUSE mount: builtins do plain syscalls and the mount decides them.  What
 * the mount cannot see — whether a command may run at all, and running
 * programs the Shell does not implement — the Shell asks its host for.
 */
#ifndef BOX_SHELL_H
#define BOX_SHELL_H

#include <stdbool.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A program gets its descriptors below this number (BoxShellCommand.fds). */
#define BOX_SPAWN_MAX_FDS 60

/* One resolved simple command, as policy sees it (spec/policy.md §4.1). */
typedef struct {
  const char *command; /* command line rebuilt from the expanded words */
  const char *program; /* what the first word resolved to */
  char *const *argv;   /* expanded words, argv[0] = word as written; NULL-terminated */
  int argc;
  const char *cwd; /* the Shell's working directory (absolute) */
  /* shell:spawn only: the environment of the program ("NAME=value",
   * NULL-terminated: the Shell's exported variables plus `A=1 prog`
   * prefixes).  NULL for shell:exec. */
  char *const *envp;
  /* Per argv word (argc entries): true when the word was written literally
   * in the script (no parameter, command or arithmetic expansion, no glob,
   * brace or tilde), so the decision log may show it; false when it came
   * from an expansion (spec/runtime.md §8.2: logged redacted).  Never NULL
   * from the Shell; a host that gets NULL must treat every word as expanded. */
  const bool *literal;
  /* shell:spawn only: the descriptors the program gets besides stdout and
   * stderr (fd_out, fd_err): fds[n] becomes its descriptor n, for n = 0
   * and 3 … nfds-1 (-1: closed; entries 1 and 2 are not read).  Stdin and
   * `n<file` up to 9 as the command sees them, and the pipes of its
   * `<(…)`/`>(…)` at the numbers their /dev/fd/N names. */
  const int *fds;
  int nfds;
} BoxShellCommand;

typedef enum {
  BOX_SPAWN_RAN,       /* status holds the program's status (128+sig when killed) */
  BOX_SPAWN_NOT_FOUND, /* "strands-shell: NAME: command not found", 127 */
  BOX_SPAWN_DENIED,    /* "strands-shell: effect denied: MESSAGE", 126 */
  BOX_SPAWN_NO_TOOL,   /* "strands-shell: PROGRAM: MESSAGE", 126 */
  BOX_SPAWN_FAILED,    /* "strands-shell: PROGRAM: MESSAGE", 126 */
} BoxSpawnKind;

typedef struct {
  BoxSpawnKind kind;
  int status;
  char *message; /* malloc'd or NULL; freed by the Shell */
} BoxSpawnResult;

typedef struct {
  /* shell:exec for a command the Shell implements.  Returns true when
   * permitted; on deny sets *message (malloc'd) to the policy text. */
  bool (*decide_exec)(void *data, const BoxShellCommand *cmd, char **message);
  /* Runs a program the Shell does not implement (shell:spawn and all that
   * follows happen on the host side).  fd_out/fd_err are where its output
   * goes; cmd->fds the rest of its descriptors, stdin first. */
  BoxSpawnResult (*spawn)(void *data, const BoxShellCommand *cmd, int fd_out, int fd_err);
  /* The policy text of the calling thread's last denied file operation,
   * or NULL (then the Shell prints strerror(EACCES)).  malloc'd. */
  char *(*last_denial)(void *data);
  void *data;
  /* A dry run: what policy would answer to action on input (a JSON
   * object's text), logged as a dry run and never acted on.  Returns true
   * when permitted; *message (malloc'd) gets the policy text.  May be NULL. */
  bool (*decide_dry)(void *data, const char *action, const char *input_json, char **message);
  /* For policy history: called after each command the Shell
   * implements has run (after its shell:exec was permitted), with the
   * command as it was decided (cmd->envp NULL) and its
   * exit status — the ::response that history rules read as output.status.
   * May be NULL. */
  void (*exec_status)(void *data, const BoxShellCommand *cmd, int status);
  /* The fast path (DESIGN.md "The mount", Speed): asks the host to
   * decide and open n (<= 32) files for reading in one request.  For each
   * i: fds[i] >= 0, an open descriptor of the regular file decided; or
   * fds[i] = -1 and errs[i] an errno (EACCES with messages[i], malloc'd,
   * the policy's text when policy refused); or errs[i] = 0: not handled
   * here, open it the ordinary way (through the mount).  cwd: the Shell's.
   * May be NULL. */
  void (*open_read)(void *data, const char *cwd, const char *const *paths, int n, int *fds,
                    int *errs, char **messages);
  /* open_read in two halves, so that the Shell may ask for the next files
   * while it reads the ones it has: _send returns a ticket (or -1), which
   * _recv (for the same n) answers and ends.  Both, or neither; may be
   * NULL. */
  int (*open_read_send)(void *data, const char *cwd, const char *const *paths, int n);
  void (*open_read_recv)(void *data, int ticket, int n, int *fds, int *errs, char **messages);
  /* The fast path for listing a directory: the host decides the listing
   * as the mount would and returns 1 with *records (malloc'd) holding
   * *len bytes of getdents64 records, or 1 with *records NULL and *err
   * (EACCES with *message, malloc'd, the policy's text); 0 when it does
   * not take the path (list it through the mount).  open_first > 0 (at
   * most 32): with the records, the directory's leading regular files (up
   * to open_first, up to its first entry of another type, "." and ".."
   * aside) decided and opened as open_read does, answered in fds, errs,
   * messages.  May be NULL. */
  int (*list_dir)(void *data, const char *cwd, const char *path, char **records, size_t *len,
                  int *err, char **message, int open_first, int *fds, int *errs, char **messages);
  /* list_dir in two halves, as open_read_send/_recv: a ticket (or -1),
   * then its answer.  Both, or neither; may be NULL. */
  int (*list_dir_send)(void *data, const char *cwd, const char *path, int open_first);
  int (*list_dir_recv)(void *data, int ticket, char **records, size_t *len, int *err,
                       char **message, int open_first, int *fds, int *errs, char **messages);
  /* The fast path for an extraction's new files: asks the host to decide
   * and create n (<= 64) regular files, each of modes[i] (the umask
   * applied), with O_EXCL, and open them for writing.  For each i, in
   * order: fds[i] >= 0; or fds[i] = -1 and errs[i] the errno the create
   * failed with after it was permitted; or errs[i] = 0: not handled here,
   * and neither is any path after it (make it the ordinary way, through
   * the mount, then ask again for the rest).  cwd: the Shell's.  May be
   * NULL. */
  void (*create_write)(void *data, const char *cwd, const char *const *paths, const mode_t *modes,
                       int n, int *fds, int *errs);
  /* What a program word the Shell did not find in its own view would run
   * as (`command -v`, `type`, `which`, `hash`): the file a `[tool.*]`
   * table or an exec entry runs for it (malloc'd), or NULL when nothing
   * would.  cwd: the Shell's.  May be NULL. */
  char *(*resolve)(void *data, const char *word, const char *cwd);
  /* decide_exec for n commands in one round, answered in order as n calls
   * of decide_exec would be (permit[i], messages[i] malloc'd or NULL): a
   * pipeline's stages asked before the Shell forks them.  May be NULL. */
  void (*decide_exec_many)(void *data, const BoxShellCommand *cmds, int n, bool *permit,
                           char **messages);
} BoxShellHost;

/* The environment every Shell call starts with (spec/runtime.md §4.4). */
typedef struct {
  const char *home;      /* HOME */
  const char *workspace; /* PWD and the initial cwd */
  const char *path;      /* PATH, normally "/usr/bin:/bin" */
  const char *user;      /* USER, normally "strands-box" */
  /* Signals ignored when the process started stay ignored and cannot be
   * trapped, as bash's: for `box-shell -c`, whose dispositions are its
   * caller's; not for a box's worker, whose are boxd's. */
  bool keep_ignored;
} BoxShellEnv;

/* Parses and runs source on fds 0, 1, 2 of the calling process.  Returns
 * the exit status (0..255).  A syntax error prints
 * "strands-shell: syntax error: ..." on stderr and returns 2. */
int box_shell_run(const char *source, const BoxShellEnv *env, const BoxShellHost *host);

/* Limits of one run (0 = the default), and what the text is. */
typedef struct {
  unsigned timeout_ms; /* wall clock for the whole text; default 30 s */
  unsigned max_depth;  /* function nesting; default 1000 */
  /* the path of the script the text was read from (`bash SCRIPT` through
   * the alias), or NULL for -c text: $0 and BASH_SOURCE's main, as bash */
  const char *script;
} BoxShellLimits;

/* A run that outlives its timeout ends with this on stderr and this status.
 * boxd, which ends a worker blocked past the deadline (where the Shell's
 * own check between steps never comes), answers with the same. */
#define BOX_SHELL_TIMEOUT_MS_DEFAULT 30000
#define BOX_SHELL_TIMEOUT_MESSAGE "strands-shell: execution timeout exceeded\n"
#define BOX_SHELL_TIMEOUT_STATUS 124

/* As box_shell_run, with limits; NULL limits = defaults. */
int box_shell_run_limits(const char *source, const BoxShellEnv *env, const BoxShellHost *host,
                         const BoxShellLimits *limits);

/* box_shell_run_limits in two steps, for a worker that knows its
 * environment and host before its command arrives: box_shell_new builds the
 * interpreter's starting state (its variables, tables, cwd) while the
 * worker waits, box_shell_run_new runs one source on it and frees it.  The
 * state is the one box_shell_run_limits starts from; nothing else may run
 * between the two calls.  host must outlive the run. */
typedef struct BoxShellNew BoxShellNew;
BoxShellNew *box_shell_new(const BoxShellEnv *env, const BoxShellHost *host);
/* Exported variables every Shell of this process starts with ("NAME=value",
 * NULL-terminated, copied; NULL clears), set before those of BoxShellEnv:
 * the egress routes' phantoms (spec/runtime.md §7). */
void box_shell_set_extra_env(char *const *vars);
int box_shell_run_new(BoxShellNew *sh, const char *source, const BoxShellLimits *limits);
/* Commands the Shell implements that every Shell of this process starts
 * without, as after `enable -n NAME`, so that the host runs the program
 * of that name (NULL-terminated, copied; NULL clears): box.toml's
 * `[tool.python3]` table sends python3 to the host's interpreter. */
void box_shell_set_host_commands(char *const *names);
/* The number this process shows as $$ and $BASHPID while it is PID 1 of a
 * namespace of its own (a box's worker: every command would show 1, and
 * `/tmp/out.$$` would name one file for all of them); `kill` and `wait`
 * take it for PID 1.  0 shows the real PID. */
void box_shell_set_shown_pid(pid_t shown);

/* The longest command text a run takes (spec/runtime.md §4.4: 256 KiB);
 * boxd refuses a longer one before it reaches a worker. */
#define BOX_SHELL_MAX_INPUT (256 * 1024)

/* Parses source without running it (`-n`): 0, or 2 after printing the
 * syntax error. */
int box_shell_check(const char *source);

/* The shell:exec a fresh Shell asks its host for before it does anything
 * else when it runs source, if that is known from the text alone: source
 * is one simple command of plain words (no quoting, expansion, assignment
 * or redirection) naming a command the Shell implements, run in cwd.
 * Then fills *cmd as decide_exec would get it (envp NULL) and returns
 * true; free it with box_shell_first_exec_free.  Thread-safe: it parses on
 * a state of its own and prints nothing.  boxd calls it on a connection
 * thread, so it parses only short flat text (at most 4 KiB, none of
 * ; & | ( ) < > $ ` ' " \) and returns false for anything else. */
bool box_shell_first_exec(const char *source, const char *cwd, BoxShellCommand *cmd);
void box_shell_first_exec_free(BoxShellCommand *cmd);

/* Whether the Shell implements name itself (builtin or command). */
bool box_shell_implements(const char *name);

/* The lowest number a descriptor the worker keeps for itself may take:
 * 0-9 are the script's (`exec 5<f`, `7>&-`), as bash keeps its own at 10
 * and above, so an interpreter run in a child of the worker (python3,
 * lua) finds at 3-9 exactly what the script put there. */
#define BOX_OWN_FD_MIN 10

/* fd, moved to BOX_OWN_FD_MIN or above (close-on-exec) if it lies below;
 * -1 when fd is -1 or cannot be moved (then it is closed). */
int box_fd_own(int fd);

/* Loads now what commands otherwise load on first use (libcurl for
 * `curl`, libarchive for `tar`, libmagic and its database for `file`): for
 * a worker started alone; once a worker is rooted in the box's mount the
 * host's files are out of reach by name.  What box_shell_prepare arranged
 * for is left to load on first use.
 * Returns false if something could not be loaded (the command then fails
 * with the reason when run). */
bool box_shell_preload(void);

/* What the zygote calls instead: it maps nothing (every mapping is one
 * more for each fork to copy) but keeps, for its workers to inherit,
 * read-only descriptors of the host's directories holding what commands
 * load lazily, so that a worker rooted in the mount can still load it on
 * first use.  What cannot be arranged so is loaded now instead.  Returns
 * false if something could be neither (its command fails with the reason
 * when run; box_shell_preload changes nothing then). */
bool box_shell_prepare(void);

/* For the zygote of Python's workers (box-shell --zygote --warm-python),
 * after box_shell_prepare: an interpreter initialized now, in this
 * process, that every `python3` of the workers forked after starts from
 * (python/warm.c), instead of initializing its own.  Kept out of the
 * Shell's zygote: it makes every fork copy ~11 MB more of mappings.
 * Idempotent; failing, python3 starts as without it.  usr_bare: the box's
 * /usr holds nothing but what the worker binds there (no bound root lies
 * under it), so a command's interpreter need not look for a venv or
 * site-packages there (python/boxpython.h). */
void box_shell_warm_python(bool usr_bare);

/* A worker of that zygote, after box_shell_new and before its command:
 * splits in two (python_split.c).  0 in the child, which goes on as the
 * worker: its pages of the warm interpreter copied now, it runs a python3
 * that is its text's only command in place, with no fork.  In the parent,
 * the child's PID: the parent keeps the Shell's clean image, from which
 * box_shell_python_serve starts the interpreter's processes until the
 * child ends, and returns the child's wait status (-1: not known).  -1:
 * not split; the worker goes on alone. */
pid_t box_shell_python_split(void);
int box_shell_python_serve(BoxShellNew *sh, pid_t child);
/* In that child: once it has said it is ready (start), the interpreter's
 * pages copied on idle CPUs, until its command comes (!start). */
void box_shell_python_own_pages(bool start);

#ifdef __cplusplus
}
#endif
#endif
