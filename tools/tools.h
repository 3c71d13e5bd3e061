/* tools.h — programs outside the Shell (spec/runtime.md §2.1–§2.3, §4.4, §9).
 *
 * Resolution of a program word, the choice of the [tool.<name>] table (or an
 * [agent.filesystem] exec entry) that runs it, and the launcher that starts
 * it in its own mount and PID namespaces over bind views of the box's mount.
 */
#ifndef BOX_TOOLS_H
#define BOX_TOOLS_H

#include <stdbool.h>
#include <sys/types.h>
#include <glib.h>

G_BEGIN_DECLS

/* A process table as the launcher needs it: absolute paths only. */
typedef struct {
  const char *label;               /* "git", or "agent" for an exec entry */
  char *const *command;            /* command[0] as written, then fixed args */
  char *const *read, *const *write, *const *read_file, *const *write_file;
  char *const *exec, *const *deny; /* exec: [agent] only */
  GHashTable *env;                 /* char* -> char*, may be NULL */
  const char *workspace;           /* or NULL */
} BoxToolTable;

/* Resolves a program word like the Shell's spawn: a name with '/' against
 * cwd, a bare name on search_path (NULL or empty: "/usr/bin:/bin"); the
 * result is canonical (every link resolved) and names an executable
 * regular file.  NULL when nothing resolves. */
char *box_tools_resolve(const char *word, const char *cwd, const char *search_path);

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

typedef struct {
  const char *program_path;        /* the canonical file to execute */
  char *const *argv;               /* argv[0] as the agent spelled it */
  const BoxToolTable *table;
  const char *cwd;                 /* the Shell's cwd; "/" if the view lacks it */
  const char *operator_home;
  const char *operator_path;       /* boxd's PATH (may be NULL) */
  const char *mountpoint;          /* the box's FUSE mount */
  const char *const *roots;        /* bound roots (reachable as <mnt>/pass<root>) */
  const char *staging_dir;         /* an empty directory to build the view on */
} BoxToolLaunch;

/* Called in the parent once the sandbox's PID namespace exists and before
 * anything in it touches the mount, so the mount can place its requests. */
typedef bool (*BoxToolAttachFn)(void *data, pid_t pid);

/* Starts the program in its sandbox with stdin /dev/null and the given
 * stdout/stderr.  Returns the pid of the sandbox's init (the program
 * itself), or -1 with error set. */
pid_t box_tools_launch(const BoxToolLaunch *launch, int fd_out, int fd_err, BoxToolAttachFn attach,
                       void *attach_data, GError **error);

G_END_DECLS
#endif
