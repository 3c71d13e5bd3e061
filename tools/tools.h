/* tools.h — programs outside the Shell (spec/runtime.md §2.1–§2.3, §4.4, §9).
 *
 * Resolution of a program word, the choice of the [tool.<name>] table (or an
 * [agent.filesystem] exec entry) that runs it, and the launcher that starts
 * it in its own mount and PID namespaces over bind views of the box's mount.
 */
#ifndef BOX_TOOLS_H
#define BOX_TOOLS_H

#include <sys/resource.h>
#include <stdbool.h>
#include <sys/types.h>
#include <glib.h>

G_BEGIN_DECLS

/* The domain of the launcher's, the resolver's and the filters' errors. */
#define BOX_TOOLS_ERROR (box_tools_error_quark())
GQuark box_tools_error_quark(void);

/* A launched program gets its descriptors below this number. */
#define BOX_TOOLS_MAX_FDS 64

/* A process table as the launcher needs it: absolute paths only. */
typedef struct {
  const char *label;    /* "git", or "agent" for an exec entry */
  char *const *command; /* command[0] as written, then fixed args */
  char *const *read, *const *write, *const *read_file, *const *write_file;
  char *const *exec, *const *deny; /* exec: [agent] only */
  GHashTable *env;                 /* char* -> char*, may be NULL */
  const char *workspace;           /* or NULL */
  bool host_network;               /* network.contain_egress = false */
  /* command[0] names a file of the box's /tmp, the command's RAM /tmp
   * (README, "Programs"): found at each run on the mount, never on the
   * host, and run from the tool's view of that /tmp. */
  bool box_tmp;
} BoxToolTable;

/* Resolves a program word like the Shell's spawn: a name with '/' against
 * cwd, a bare name on search_path (NULL or empty: "/usr/bin:/bin"); the
 * result is canonical (every link resolved) and names an executable
 * regular file.  NULL when nothing resolves. */
char *box_tools_resolve(const char *word, const char *cwd, const char *search_path);
/* How a lookup shows the program a bare word resolved to: the first
 * search_path entry's DIR/word that is that file (a link such as
 * /usr/bin/python3 shown as bash shows it), else resolved itself. */
char *box_tools_spelling(const char *word, const char *search_path, const char *resolved);

/* Asked of each path a lookup reads, absolute, with no ".", ".." or empty
 * component; operation is the fs:read operation ("read_metadata",
 * "read_link").  False: refused, and the lookup finds nothing. */
typedef bool (*BoxToolsLookupFn)(void *data, const char *path, const char *operation);

/* As box_tools_resolve, for a word that names a path (one with '/'), looked
 * up as a stat of it through the mount would be: may_read is asked of the
 * path as named (before anything is looked at), of every symlink before it
 * is read, and of the file reached when that is another path.  A refused
 * path finds nothing, exactly as an absent one does, so the answer says
 * nothing of what policy hides; so does a link in procfs.  A bare name
 * is searched on search_path as box_tools_resolve searches it, each file
 * found there looked up the same way, a refused one passed over.  Paths in
 * the host's system tree (/usr, /bin, /lib…, /etc/alternatives), which
 * every tool reads with no decision, are not asked about. */
char *box_tools_resolve_decided(const char *word, const char *cwd, const char *search_path,
                                BoxToolsLookupFn may_read, void *data);

/* cwd + word as one absolute path, "." and empty components dropped and
 * ".." folded: the path as the agent named it.  NULL when neither is
 * absolute. */
char *box_tools_named_path(const char *word, const char *cwd);

/* The table whose command[0] is a path (not a bare word) that word names
 * from cwd, or NULL ("a/" names a directory, never a table's file). */
const BoxToolTable *box_tools_table_named(const BoxToolTable *const *tables, const char *word,
                                          const char *cwd);

/* Spells path as "~" or "~/rest" when it lies under home (component-bounded). */
char *box_tools_spell_home(const char *path, const char *home);

/* Chooses the table for program_path invoked with args (after the program
 * word).  Returns the chosen table and sets *n_fixed to the number of its
 * fixed leading arguments; NULL with *refusal set (g_malloc'd, the text
 * after "strands-shell: <program>: ") when none covers it.  agent may be
 * NULL; operator_path is boxd's PATH. */
const BoxToolTable *box_tools_select(const BoxToolTable *const *tables, const BoxToolTable *agent,
                                     const char *program_path, char *const *args,
                                     const char *operator_path, int *n_fixed, char **refusal);

/* The program a table runs: its command[0] resolved on its env.PATH,
 * else operator_path (box_tools_resolve's answer), or NULL; a box_tmp
 * table's is its command[0] with "." and "//" folded (the mount finds it,
 * per run). */
char *box_tools_table_program(const BoxToolTable *t, const char *operator_path);

/* The one resolution rule's table step (README, "Programs"): a bare word
 * that a table's command[0] spells runs that table's program, resolved as
 * the table resolves it (so a shim or a link on the table's PATH is the
 * same file for the table and the Shell).  NULL when no table spells it. */
char *box_tools_resolve_by_table(const BoxToolTable *const *tables, const char *word,
                                 const char *operator_path);

/* Whether any table (whatever its leading arguments) or an exec entry of
 * agent would run program_path. */
bool box_tools_runs(const BoxToolTable *const *tables, const BoxToolTable *agent,
                    const char *program_path, const char *operator_path);

/* The refusal (as box_tools_select's) for a program no table and no exec
 * entry runs at all: it names the `[tool.<name>]` table to add for word. */
char *box_tools_no_table(const char *word, const char *program_path);

/* The descriptor limit the launched programs get (boxd raised its own for
 * the mount: box_vfs_raise_fd_limit); unset, they inherit boxd's. */
void box_tools_set_workload_fd_limit(const struct rlimit *limit);

typedef struct {
  const char *program_path; /* the canonical file to execute */
  char *const *argv;        /* argv[0] as the agent spelled it */
  const BoxToolTable *table;
  const char *cwd; /* the Shell's cwd; "/" if the view lacks it */
  const char *operator_home;
  const char *operator_path; /* boxd's PATH (may be NULL) */
  const char *mountpoint;    /* the box's FUSE mount */
  const char *const *roots;  /* bound roots (reachable as <mnt>/pass<root>) */
  const char *staging_dir;   /* an empty directory to build the view on */
  /* The mount's box_vfs_views_epoch, read before the launch: a prepared
   * view is entered only by launches of the epoch it was built in. */
  guint64 views_epoch;
  /* The agent's own sandbox (box/agent.c); tools leave these zero. */
  bool is_agent;
  int fd_in; /* agent: its stdin */
  /* A tool's descriptors besides stdout and stderr: fds[n] becomes its
   * descriptor n for n = 0 and 3 … nfds-1 (-1: closed, stdin then
   * /dev/null; entries 1 and 2 are not read).  The same open files, so a
   * pipe streams both ways, with its end and back-pressure.  NULL: stdin
   * is /dev/null (the agent's: fd_in). */
  const int *fds;
  int nfds; /* at most BOX_TOOLS_MAX_FDS */
  /* A directory of the mount bound as the tool's /tmp (the command's RAM
   * /tmp, so the Shell and its tools share one), or NULL: a tmpfs of its
   * own. */
  const char *tmp_area;
  /* With tmp_area: makes the mount point the view binds onto at path
   * ("/tmp/...": a directory, or an empty file), so the launch finds it
   * made rather than making it through the mount, in the Shell's /tmp. */
  bool (*tmp_point)(void *data, const char *path, bool dir);
  void *tmp_point_data;
  /* With tmp_area: program_path lies in it, at this path below it ("a"
   * for /tmp/a).  That one file is bound over itself executable and
   * read-only; the rest of /tmp stays noexec. */
  const char *tmp_program;
  /* The Shell's exported variables and `A=1 prog` prefixes ("NAME=value",
   * NULL-terminated, may be NULL): added to the composed environment,
   * except the names the box owns (box_tools_env_name_reserved, HOME, PATH). */
  char *const *extra_env;
} BoxToolLaunch;

/* Names the box sets itself or that hook a loader (spec/runtime.md §2.1):
 * no table and no Shell variable may claim them. */
bool box_tools_env_name_reserved(const char *name);

/* What every sandbox of this box shares, set once by boxd before the first
 * launch (box/config_check.c).  Strings are copied. */
typedef struct {
  const char *box_dir;          /* never in any view (overmounted if a bind holds it) */
  const char *const *authority; /* box.toml, policy.dw: read-only wherever a bind holds them */
  const char *const *hidden;    /* trees overmounted empty (authority dirs a grant encloses) */
  const char *alias_dir;        /* <box_dir>/bin: agent only, first on PATH */
  const char *broker_socket;    /* <box_dir>/run/box.sock: agent only */
  /* The egress gateway: when proxy_url is set, HTTP(S)_PROXY and
   * friends point at it; ca_cert is bound read-only and named by the CA
   * variables.  net_setup, when set, runs in boxd right after the sandbox's
   * network namespace exists (pid is its init, still waiting) so the gateway
   * can hand in its relay; returning false refuses the launch. */
  const char *proxy_url;
  const char *ca_cert;
  bool (*net_setup)(void *data, pid_t pid);
  void *net_setup_data;
} BoxToolContext;

void box_tools_set_context(const BoxToolContext *ctx);
/* The phantoms of the egress routes ("NAME=value", NULL-terminated, may
 * be NULL): the first layer of every composed environment (§5.6). */
void box_tools_set_phantoms(const char *const *env);
/* The gateway's part of the context alone (the rest is kept). */
void box_tools_set_gateway(const char *proxy_url, const char *ca_cert,
                           bool (*net_setup)(void *data, pid_t pid), void *net_setup_data);

/* One byte from sock and the descriptor passed with it (*fd, else -1);
 * recvmsg's result (EINTR retried).  flags: recvmsg's (MSG_CMSG_CLOEXEC). */
ssize_t box_tools_recv_byte_fd(int sock, char *byte, int *fd, int flags);

/* Kernel refusals (spec/runtime.md §5.8, §8.4): once set, each launch
 * installs the observed filter, whose refusals wait on a listener, and
 * hands take that listener (install_errno 0) right after the launch, or
 * listener -1 and the errno that refused one (the plain filter runs then).
 * take runs on the launching thread and owns the descriptor. */
typedef void (*BoxToolRefusalsFn)(void *data, int listener, int install_errno);
void box_tools_set_refusals(BoxToolRefusalsFn take, void *data);

/* The agent telemetry receiver's base URL (http://127.0.0.1:<port>), or
 * NULL: the OTEL_EXPORTER_OTLP_* variables of every composed environment
 * (§5.6) and what `${…}` in a command's fixed arguments expands to. */
void box_tools_set_telemetry_endpoint(const char *url);
/* arg with ${OTEL_EXPORTER_OTLP_ENDPOINT}, ${OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}
 * and ${OTEL_EXPORTER_OTLP_PROTOCOL} expanded (the config refused every
 * other `${`); newly allocated. */
char *box_tools_expand_telemetry(const char *arg);
/* argv (g_strfreev-able) with elements 1 .. fixed-1 expanded: a command's
 * own fixed arguments, never those the caller appended. */
char **box_tools_expand_telemetry_args(char *const *argv, guint fixed);

/* The route-less network namespace contained tools share (its only
 * listener is the gateway's relay), or -1: each contained tool then gets a
 * namespace of its own and net_setup hands the relay in.  The descriptor
 * stays the caller's and must outlive every launch. */
void box_tools_set_netns(int netns_fd);

/* The ELF loader closure of path: its PT_INTERP and every DT_NEEDED image
 * found by DT_RUNPATH / DT_RPATH / the default directories, spelled the way
 * the loader opens them (links are the caller's to resolve), at most 512.
 * A script yields its interpreter chain and their closures.
 * NULL with error naming a missing library. */
GPtrArray *box_tools_loader_closure(const char *path, GError **error);

/* The environment of §5.6 for table t (agent: alias dir first on PATH;
 * tools: the alias dir removed in every spelling).  NULL-terminated. */
char **box_tools_compose_env(const BoxToolTable *t, bool is_agent, const char *operator_home,
                             const char *operator_path, const char *cwd);

/* The startup disclosure of §5.7 for one table (label "agent" = [agent]).
 * program is the canonical command. */
char *box_tools_disclosure(const BoxToolTable *t, bool is_agent, const char *program,
                           const char *operator_home, const char *operator_path);

/* Called in the parent once the sandbox's PID namespace exists and before
 * anything in it touches the mount, so the mount can place its requests
 * and hold them to the view: paths (NULL-terminated) are the view's mount
 * points, reach[i] what its mount lets the sandbox do below paths[i] ('n'
 * nothing, 'r' read, 'w' write), as box_vfs_tool_attach takes them. */
typedef bool (*BoxToolAttachFn)(void *data, pid_t pid, const char *const *paths, const char *reach);

/* Starts the program in its sandbox with the given stdout/stderr and the
 * launch's other descriptors.  Returns the pid of the sandbox's init (the program
 * itself), or -1 with error set. */
pid_t box_tools_launch(const BoxToolLaunch *launch, int fd_out, int fd_err, BoxToolAttachFn attach,
                       void *attach_data, GError **error);

/* Drops every prepared view (each holds bind mounts of the box's mount, so
 * the mount can only be torn down once they are gone).  Launches already
 * started keep theirs; the next launch prepares again. */
void box_tools_release_views(void);

G_END_DECLS
#endif
