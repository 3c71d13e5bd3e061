/* vfs.h — the box's FUSE mount (DESIGN.md "The mount", spec/mount-mechanics.md).
 *
 * Layout of the mount:
 *   /pass<real path>   shared passthrough of each bound root (operator home,
 *                      agent home, workspace), one node per real object;
 *                      the directories above a root are RAM directories.
 *   /ram/c<N>          command N's RAM root: /tmp, /dev/{null,zero,urandom,
 *                      random} (empty files to bind host nodes on), the
 *                      empty directory chain of every bound root, and the
 *                      hidden control directory /.box (file "mydenial").
 * Every request is placed in its command by the caller's PID namespace; a
 * caller that cannot be placed is refused (root GETATTR and STATFS aside).
 *
 * Liveness: a deciding caller's request is queued to a pool of decision
 * threads; the session loop never waits for policy.  While its decision is
 * pending it is answered EINTR on FUSE_INTERRUPT (a killed caller) or when
 * its command ends; the decision, once made, is still logged.
 *
 * Decision cache (issue 6, item 4): none for logged decisions.  Every
 * decision is logged and raises its ::request history event inside
 * box_policy_decide, which a (command, path, operation) cache would skip; a
 * history rule may read those events, and the policy API does not say which
 * decisions read history, so a skipped evaluation could change a later
 * verdict.  What is cached is what the kernel would otherwise re-send:
 * entries for ENTRY_TIMEOUT (a walk is not a decision), page cache with
 * keep_cache, and FLUSH answered ENOSYS once. */
#ifndef BOX_VFS_H
#define BOX_VFS_H

#include <stdbool.h>
#include <sys/types.h>
#include <glib.h>
#include <json-c/json.h>
#include "policy/policy.h"

G_BEGIN_DECLS

typedef struct BoxVfs BoxVfs;

#define BOX_VFS_ERROR (box_vfs_error_quark())
GQuark box_vfs_error_quark(void);

/* Asks policy.  The vfs applies its floors after a permit, then hands the
 * effective decision to record (history and decision log). */
typedef BoxDecision *(*BoxVfsDecideFn)(void *data, int command, const char *action,
                                       json_object *input);
typedef void (*BoxVfsRecordFn)(void *data, int command, const char *action, json_object *input,
                               const BoxDecision *decision);

/* The history raiser: after the effect of a permitted decision, its outcome.
 * result: "completed", "descriptor_issued" (an OPEN, CREATE or OPENDIR that
 * handed out a handle), "indeterminate" (EIO: it may have happened), or NULL
 * when it definitely did not happen (the operation failed, or its request
 * was cancelled).  Called once per permitted decision, on the thread that
 * acted; denials raise no outcome. */
typedef void (*BoxVfsOutcomeFn)(void *data, int command, const char *action, json_object *input,
                                const char *result);

typedef struct {
  const char *mountpoint;        /* an empty directory outside every root */
  const char *const *roots;      /* NULL-terminated canonical absolute paths */
  const char *operator_home;     /* canonical; paths under it are spelled ~/... */
  const char *const *floor_trees;/* NULL-terminated: trees no policy may open (box_dir) */
  const char *const *floor_files;/* NULL-terminated: authority files (box.toml, policy) */
  BoxVfsDecideFn decide;
  BoxVfsRecordFn record;
  void *decide_data;
  BoxVfsOutcomeFn outcome;       /* optional; gets decide_data */
} BoxVfsConfig;

/* Mounts and starts the multithreaded session loop in its own thread. */
BoxVfs *box_vfs_start(const BoxVfsConfig *config, GError **error);
/* Unmounts, stops the loop and frees everything. */
void box_vfs_stop(BoxVfs *vfs);

/* Allocates command N and builds its RAM root.  Returns N (>= 0). */
int box_vfs_command_new(BoxVfs *vfs);
/* Places every caller in pid's PID namespace in command N, as the Shell
 * worker (decisions apply) or as a tool of N (no decisions; its binds bound it).
 * The namespace must be new (a worker's, a tool's): an entry another command
 * holds for its inode number is one the kernel has reused, and moves to N. */
bool box_vfs_command_attach(BoxVfs *vfs, int command, pid_t pid, bool is_tool, GError **error);
/* While false (setup), the worker's requests raise no decision. */
void box_vfs_command_set_running(BoxVfs *vfs, int command, bool running);
/* Ends N: detaches its namespaces, answers its pending requests with
 * EINTR, invalidates /ram/c<N> in the kernel and frees its nodes. */
void box_vfs_command_end(BoxVfs *vfs, int command);

const char *box_vfs_mountpoint(const BoxVfs *vfs);
/* "<mountpoint>/ram/c<N>" and "<mountpoint>/pass<real>"; newly allocated. */
char *box_vfs_ram_root(const BoxVfs *vfs, int command);
char *box_vfs_pass_path(const BoxVfs *vfs, const char *real_path);

/* For tests: how many RAM nodes (of every command, ended ones included) the
 * daemon still holds. */
guint box_vfs_debug_ram_nodes(BoxVfs *vfs);
/* For tests: requests answered EINTR while their decision was pending
 * (FUSE_INTERRUPT or the end of their command). */
guint64 box_vfs_debug_cancelled(BoxVfs *vfs);

G_END_DECLS
#endif
