/* vfs.h — the box's FUSE mount: /pass<real path> passes the bound roots
 * through, /ram/c<K> is the RAM root a command borrows, and every request is
 * placed in its command by the caller's PID namespace and decided by policy.
 * DESIGN.md "The mount" has the layout, placement, liveness and what makes
 * it fast; spec/mount-mechanics.md the measurements. */
#ifndef BOX_VFS_H
#define BOX_VFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/resource.h>
#include <glib.h>
#include <json-c/json.h>
#include "policy/policy.h"
#include "policy/history.h"

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

/* A real path below a bound root that command (its worker or a tool it
 * launched) made, opened for writing, truncated, changed the mode or owner
 * of, removed, or renamed (both names): after the effect, on the thread
 * that acted, possibly more than once per path.  No tree scan then tells
 * what a command changed. */
typedef void (*BoxVfsChangedFn)(void *data, int command, const char *path);

/* A read-only tree its caller serves inside the view, at .box/<name>
 * (`box mount`'s checkpoints, read with libgit2, which the vfs never
 * links).  Its nodes' inode numbers are the caller's, each with
 * BOX_VFS_TREE_INO set; the requests on them reach these handlers as they
 * came (the handlers reply; data is theirs), lookup with parent 0 asking
 * for the tree's root itself.  Every change to it is refused (EROFS). */
#define BOX_VFS_TREE_INO (1ull << 61)
struct fuse_req;
struct fuse_file_info;
typedef struct {
  const char *name;
  void *data;
  void (*lookup)(void *data, struct fuse_req *req, uint64_t parent, const char *name);
  void (*getattr)(void *data, struct fuse_req *req, uint64_t ino);
  void (*readlink)(void *data, struct fuse_req *req, uint64_t ino);
  void (*opendir)(void *data, struct fuse_req *req, uint64_t ino, struct fuse_file_info *fi);
  /* plus: a READDIRPLUS, whose entries carry no attributes (the kernel
   * looks each name up) */
  void (*readdir)(void *data, struct fuse_req *req, uint64_t ino, size_t size, off_t off,
                  struct fuse_file_info *fi, bool plus);
  void (*open)(void *data, struct fuse_req *req, uint64_t ino, struct fuse_file_info *fi);
  void (*read)(void *data, struct fuse_req *req, uint64_t ino, size_t size, off_t off,
               struct fuse_file_info *fi);
  /* RELEASE and RELEASEDIR */
  void (*release)(void *data, struct fuse_req *req, uint64_t ino, struct fuse_file_info *fi);
} BoxVfsTree;

/* A request answered from the decision cache (cache_decisions): policy was
 * not asked, so its history has not seen the request yet. */
typedef void (*BoxVfsNoteFn)(void *data, int command, const char *action, json_object *input,
                             const BoxDecision *decision);

/* Whether policy may permit some request on a path below the directory
 * spelled dir (with cache_decisions: its rules alone decide).  False lets
 * the mount refuse the directory at its lookup as it refuses an absent
 * name, where the command may neither read nor write it: no walk to a
 * permitted path goes through it. */
typedef bool (*BoxVfsBeneathFn)(void *data, const char *dir);

/* The history raiser: after the effect of a permitted decision, its outcome.
 * result: "completed", "descriptor_issued" (an OPEN, CREATE or OPENDIR that
 * handed out a handle), "indeterminate" (EIO: it may have happened), or NULL
 * when it definitely did not happen (the operation failed, or its request
 * was cancelled).  Called once per permitted decision, on the thread that
 * acted; denials raise no outcome. */
typedef void (*BoxVfsOutcomeFn)(void *data, int command, const char *action, json_object *input,
                                const char *result);

/* Brackets one request's history records: begin before its first decision,
 * end after its outcomes, just before it is answered.  A file operation's
 * ::request and ::response events then reach the history file in one
 * write(2) instead of one each (still before the answer). */
typedef void (*BoxVfsHistoryFn)(void *data, bool begin);

typedef struct {
  const char *mountpoint;         /* an empty directory outside every root */
  const char *const *roots;       /* NULL-terminated canonical absolute paths */
  const char *operator_home;      /* canonical; paths under it are spelled ~/... */
  const char *const *floor_trees; /* NULL-terminated: trees no policy may open (box_dir) */
  const char *const *floor_files; /* NULL-terminated: authority files (box.toml, policy) */
  BoxVfsDecideFn decide;
  BoxVfsRecordFn record;
  void *decide_data;
  BoxVfsOutcomeFn outcome; /* optional; gets decide_data */
  bool decide_prompt;      /* decide never waits: decide on the loop thread */
  bool cache_decisions;    /* the verdict depends on (action, input) alone */
  BoxVfsNoteFn note;       /* optional, with cache_decisions; gets decide_data */
  /* optional, with cache_decisions: as decide, without the ::request event
   * (a probe of a missing name: no request unless it is refused, when note
   * records it) */
  BoxVfsDecideFn decide_quiet;
  BoxVfsHistoryFn history_batch; /* optional; gets decide_data */
  BoxVfsBeneathFn beneath;       /* optional, with cache_decisions; gets decide_data */
  /* RAM areas: per command (default; /ram/c<N>, gone at its end) or one
   * for the box's life (/ram/box, shared by every command).  Limits per
   * area; exceeding one gives ENOSPC.  0: the defaults (no total size
   * limit, 10 MiB per file; 10,000 inodes). */
  bool ram_per_box;
  guint64 ram_max_bytes;
  guint ram_max_inodes;
  /* boxd: a directory where each running command is published as
   * <N>.json (text, pid, RAM area) for `box mount`; NULL: not published. */
  const char *live_dir;
  /* `box mount`: the view's .box/ also holds decisions.jsonl (this file,
   * read live) and commands/ (the commands published in view_live_dir). */
  const char *view_log;
  const char *view_live_dir;
  /* `box mount`: a tree of the caller's own in the view's .box/ too (the
   * box's checkpoints: box/checkpoint_view.c), or NULL. */
  const BoxVfsTree *view_tree;
  /* Mounted from a user namespace of the process's own (an ordinary
   * user's box): no FUSE passthrough, which needs CAP_SYS_ADMIN in the
   * host's. */
  bool in_user_namespace;
  BoxVfsChangedFn changed; /* optional */
  void *changed_data;
  /* A connection fusermount3 mounted already at premounted_at (in the
   * host's namespaces), premounted_fd its /dev/fuse: shown at mountpoint
   * too, it speaks the host's ids, where 0 of this namespace is host_uid
   * and host_gid.  NULL: the mount is made here. */
  const char *premounted_at;
  int premounted_fd;
  uid_t host_uid;
  gid_t host_gid;
  /* The connection fusermount3 mounted at mountpoint itself, in this
   * namespace, for an ordinary user (box mount without root): nothing is
   * mounted or bound here, and no FUSE passthrough is asked for.  Its
   * /dev/fuse in mounted_fd. */
  bool mounted_by_fusermount;
  int mounted_fd;
} BoxVfsConfig;

/* The mount holds a descriptor for each node the kernel keeps, so a 1024
 * limit fails a box at about a thousand files (EMFILE).  Raises this
 * process's RLIMIT_NOFILE as far as it may go: the soft limit to the hard
 * one and, with CAP_SYS_RESOURCE, both to fs.nr_open (at most 2^20).
 * *before gets the limit as it was, for the programs the process starts. */
void box_vfs_raise_fd_limit(struct rlimit *before);

/* Mounts and starts the multithreaded session loop in its own thread. */
BoxVfs *box_vfs_start(const BoxVfsConfig *config, GError **error);
/* Unmounts, stops the loop and frees everything. */
void box_vfs_stop(BoxVfs *vfs);

/* Allocates command N and lends it a RAM root: a slot (/ram/c<K>) no
 * other command holds, reset when N ends, or the per-box area.  Returns
 * N (>= 0). */
int box_vfs_command_new(BoxVfs *vfs);
/* The RAM area command N uses (its slot, or the per-box area): the same
 * area keeps the same layout, so a mount namespace rooted in it for one
 * command serves the next command of the area. */
int box_vfs_command_area(BoxVfs *vfs, int command);
/* Places every caller in pid's PID namespace in command N, as the Shell
 * worker (decisions apply) or as a tool of N (no decisions; its binds bound it).
 * The namespace must be new (a worker's, a tool's): an entry another command
 * holds for its inode number is one the kernel has reused, and moves to N. */
bool box_vfs_command_attach(BoxVfs *vfs, int command, pid_t pid, bool is_tool, GError **error);
/* Attaches pid's namespace as a tool of N (box_vfs_command_attach) held to
 * its view's reach: paths (NULL-terminated) are its mount points, reach[i]
 * what it may do below paths[i] ('n' nothing, 'r' read, 'w' write; the
 * longest path that holds a name rules).  Why the mount checks what the
 * view's mounts already bound: a mount point that is a name of this mount
 * is detached by the kernel (in every namespace) when a lookup of that
 * name fails, which a refused Shell walk makes happen at will. */
bool box_vfs_tool_attach(BoxVfs *vfs, int command, pid_t pid, const char *const *paths,
                         const char *reach, GError **error);
/* The command's text, for the operator (published to live_dir). */
void box_vfs_command_describe(BoxVfs *vfs, int command, const char *text);
/* While false (setup), the worker's requests raise no decision. */
void box_vfs_command_set_running(BoxVfs *vfs, int command, bool running);
/* Ends N: detaches its namespaces, answers its pending requests with
 * EINTR, invalidates /ram/c<N> in the kernel and frees its nodes. */
void box_vfs_command_end(BoxVfs *vfs, int command);

/* Whether the reach floor refuses to open the host path whose object is
 * (dev, ino): the same question the mount asks, for boxd's fast path. */
bool box_vfs_floor_refuses(BoxVfs *vfs, const char *path, dev_t dev, ino_t ino);
/* Whether the mount's lookup refuses the host directory path to the
 * command as it refuses an absent name (it may neither read nor write it,
 * and no walk to a permitted path goes through it).  Records nothing: the
 * lookup that refuses it does.  For the Shell's fast path, which must send
 * a file below such a directory to the mount rather than decide it. */
bool box_vfs_lookup_refuses(BoxVfs *vfs, int command, const char *path);
/* Whether the reach floor refuses to create the host path (a name that
 * does not exist yet): the question the mount's CREATE asks. */
bool box_vfs_floor_refuses_create(BoxVfs *vfs, const char *path);
/* boxd made name in the host directory (dev, ino) outside the mount: the
 * kernel forgets any entry it holds for it, so that no cached lookup hides
 * the new file. */
void box_vfs_notify_new_name(BoxVfs *vfs, dev_t dev, ino_t ino, const char *name);

/* The gateway's CA (PEM), shown read-only to every command as
 * /.box/gateway-ca.pem: in a box every HTTPS answer is signed by it, and
 * clients that want a bundle by path (requests, through certifi) are given
 * this one. */
void box_vfs_set_trust(BoxVfs *vfs, const char *pem);

/* Forgets every cached verdict (the policy changed). */
void box_vfs_invalidate_decisions(BoxVfs *vfs);

const char *box_vfs_mountpoint(const BoxVfs *vfs);
/* Grows each time the kernel may have detached mounts made on names of the
 * mount (a refused lookup of a name it held): a prepared tool view built
 * before it grew may have lost binds (BoxToolLaunch.views_epoch). */
guint64 box_vfs_views_epoch(BoxVfs *vfs);
/* Whether this process may mount with allow_other: root, or anyone where
 * /etc/fuse.conf says user_allow_other (fusermount3's rule). */
bool box_vfs_allow_other(void);
/* "<mountpoint>/ram/c<N>" ("<mountpoint>/ram/box" with a per-box RAM area)
 * and "<mountpoint>/pass<real>"; newly allocated. */
char *box_vfs_ram_root(BoxVfs *vfs, int command);
/* The operator's view at the mount's own root, where no bind can place it
 * (box mount without root): the root shows command's RAM root, and each
 * bound root at its own path there. */
void box_vfs_serve_view(BoxVfs *vfs, int command);
/* Wakes the loop of a FUSE mount told to exit and just unmounted, through
 * root (an O_PATH descriptor of its root opened before the unmount; taken
 * over, -1: nothing).  A mount namespace made while it was mounted (a box
 * started meanwhile) keeps a copy, and with it the connection, so the
 * loop would never read ENODEV. */
void box_vfs_wake_unmounted(int root);
/* A mount point a tool's launch binds a grant onto in the command's RAM
 * tree (path below that tree's root, "/tmp/..."): a directory (dir) or an
 * empty file, with the directories leading to it; made where missing,
 * listed and found for tools only. */
bool box_vfs_ram_mount_point(BoxVfs *vfs, int command, const char *path, bool dir);
/* Whether path ("/tmp/...") names an executable regular file of the
 * command's RAM tree, reached with no symlink on the way. */
bool box_vfs_ram_executable(BoxVfs *vfs, int command, const char *path);
char *box_vfs_pass_path(const BoxVfs *vfs, const char *real_path);

/* For tests: how many RAM nodes (of every command, ended ones included) the
 * daemon still holds. */
guint box_vfs_debug_ram_nodes(BoxVfs *vfs);
/* For tests: whether the kernel took FUSE passthrough, and how many backing
 * files were registered so far. */
bool box_vfs_debug_passthrough(BoxVfs *vfs, guint64 *registered);
/* For tests: decisions answered from the cache so far. */
guint64 box_vfs_debug_cache_hits(BoxVfs *vfs);
/* For tests: LOOKUPs of names in passthrough directories so far (a walk
 * through names the kernel still holds sends none). */
guint64 box_vfs_debug_pass_lookups(BoxVfs *vfs);
/* Tests: how many LOOKUPs of a name in /ram (a command's RAM root) reached
 * the daemon. */
guint64 box_vfs_debug_ram_lookups(BoxVfs *vfs);
/* For tests: walks from a root to a passthrough node so far (a stat of a
 * node no name change has touched since it was found makes none). */
guint64 box_vfs_debug_reach_walks(BoxVfs *vfs);
/* For tests: READDIRPLUS entries sent so far with their node and
 * attributes (shown) and with the name alone (hidden). */
void box_vfs_debug_readdirplus(BoxVfs *vfs, guint64 *shown, guint64 *hidden);
/* For tests: passthrough nodes made past the descriptor budget (they hold
 * no descriptor: each op reaches them by a walk) so far, and the budget. */
guint64 box_vfs_debug_fdless_nodes(BoxVfs *vfs, guint *budget);
/* For tests: requests answered EINTR while their decision was pending
 * (FUSE_INTERRUPT or the end of their command). */
guint64 box_vfs_debug_cancelled(BoxVfs *vfs);

G_END_DECLS
#endif
