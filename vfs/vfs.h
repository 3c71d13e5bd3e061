/* vfs.h — the box's FUSE mount (DESIGN.md "The mount", spec/mount-mechanics.md).
 *
 * Layout of the mount:
 *   /pass<real path>   shared passthrough of each bound root (operator home,
 *                      agent home, workspace), one node per real object;
 *                      the directories above a root are RAM directories.
 *   /ram/c<K>          a RAM root lent to one command at a time (a slot):
 *                      /tmp, /dev/{null,zero,urandom,random} (empty files to
 *                      bind host nodes on), the empty directory chain of
 *                      every bound root, and the hidden control directory
 *                      /.box (file "mydenial").  That layout is fixed (its
 *                      entries cannot be removed, renamed or linked); what
 *                      a command adds goes when it ends.
 * Every request is placed in its command by the caller's PID namespace; a
 * caller that cannot be placed is refused (root GETATTR and STATFS aside).
 *
 * Liveness: a deciding caller's request is queued to a pool of decision
 * threads; the session loop never waits for policy.  While its decision is
 * pending it is answered EINTR on FUSE_INTERRUPT (a killed caller) or when
 * its command ends; the decision, once made, is still logged.
 *
 * Speed (issue 6, item 4).  With decide_prompt (the decide callback returns
 * in bounded time, as box_policy_decide does) a request is decided on the
 * session-loop thread that received it: no hand-off, and the multithreaded
 * loop starts another thread when all of them are busy.  With
 * cache_decisions (only for a policy that reads no history,
 * box_policy_reads_history) a verdict is kept per (command, action,
 * operation, path) and reused for the same request: policy is not asked
 * again, but every decision is still recorded (logged), noted to the
 * policy's history (note: its ::request event) and raises its outcome; the
 * floor is applied afresh each time.  The cache of a command
 * goes with it; box_vfs_invalidate_decisions drops every cached verdict
 * (a policy change).  The kernel caches what it would otherwise re-send:
 * entries (a walk is not a decision) for 1 s, or for 60 s in a passthrough
 * directory watched for changes made outside the mount (vfs_watch.c: each
 * such change expires the kernel's entry of that name at once) while the
 * policy reads no history and no tool is registered, page cache with
 * keep_cache, and FLUSH and the xattr ops answered ENOSYS once.  Where the
 * kernel offers FUSE passthrough (vfs_passthrough.c), an opened real file
 * is served by the kernel from the real file: its reads, writes and mmap,
 * covered by the decision at OPEN, never reach the daemon.  Placement
 * remembers each caller's PID namespace per loop thread, checked by a live
 * pidfd of the same tid.  READDIRPLUS (the kernel's auto mode) gives an entry its node and
 * attributes only where the command holds a cached read_metadata permit of
 * that path; otherwise the name alone.  With cache_decisions and
 * decide_quiet, a deciding caller's LOOKUP of a name asks policy quietly
 * whether the command may read the path, or else write it, found or not:
 * neither is EACCES (the read denial logged) either way, so existence does
 * not show, except for a found directory, which a walk goes through; a
 * found name the command may not read gets its type without its
 * attributes, which the kernel would otherwise hand to a
 * statx(AT_STATX_DONT_SYNC) without a GETATTR (an inode the kernel holds
 * already keeps its size and mtime: a changed one would cut its page cache
 * and its mappings in other processes).  Without them (a policy
 * that reads the history) only a missing name asks, and a found one is
 * shown, with its type only. */
#ifndef BOX_VFS_H
#define BOX_VFS_H

#include <stdbool.h>
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

/* The history raiser: after the effect of a permitted decision, its outcome.
 * result: "completed", "descriptor_issued" (an OPEN, CREATE or OPENDIR that
 * handed out a handle), "indeterminate" (EIO: it may have happened), or NULL
 * when it definitely did not happen (the operation failed, or its request
 * was cancelled).  Called once per permitted decision, on the thread that
 * acted; denials raise no outcome. */
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

typedef void (*BoxVfsOutcomeFn)(void *data, int command, const char *action, json_object *input,
                                const char *result);

/* Brackets one request's history records: begin before its first decision,
 * end after its outcomes, just before it is answered.  A file operation's
 * ::request and ::response events then reach the history file in one
 * write(2) instead of one each (still before the answer). */
typedef void (*BoxVfsHistoryFn)(void *data, bool begin);

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
  bool decide_prompt;            /* decide never waits: decide on the loop thread */
  bool cache_decisions;          /* the verdict depends on (action, input) alone */
  BoxVfsNoteFn note;             /* optional, with cache_decisions; gets decide_data */
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

/* Forgets every cached verdict (the policy changed). */
void box_vfs_invalidate_decisions(BoxVfs *vfs);

const char *box_vfs_mountpoint(const BoxVfs *vfs);
/* "<mountpoint>/ram/c<N>" ("<mountpoint>/ram/box" with a per-box RAM area)
 * and "<mountpoint>/pass<real>"; newly allocated. */
char *box_vfs_ram_root(BoxVfs *vfs, int command);
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
