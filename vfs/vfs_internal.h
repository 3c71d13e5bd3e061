/* vfs_internal.h — private to vfs/: the node tree, commands, placement and
 * decisions shared by vfs_core.c and vfs_ops.c. */
#ifndef BOX_VFS_INTERNAL_H
#define BOX_VFS_INTERNAL_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <dirent.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include "vfs/vfs.h"

#define VFS_RAM_MAX_FILE (10u * 1024u * 1024u)
#define VFS_RAM_MAX_INODES 10000u
#define VFS_DENIAL_RING 256u
#define VFS_MAX_DEPTH 4096
#define VFS_DECISION_THREADS 64 /* pending decisions at once */
#define VFS_VERDICTS_MAX 65536u /* cached verdicts per command; dropped when full */
#define VFS_RAM_INO_BIT (1ull << 62) /* st_ino of virtual and RAM nodes */

/* Zeroed memory by malloc and memset: glibc's calloc (g_new0) bypasses the
 * thread's cache, a slow path on every create and open. */
static inline void *vfs_zalloc(size_t size) {
  void *p = g_malloc(size);
  memset(p, 0, size);
  return p;
}

typedef enum {
  NODE_ROOT,     /* ino 1 */
  NODE_PASSDIR,  /* /pass */
  NODE_RAMDIR,   /* /ram */
  NODE_CHAIN,    /* a directory of /pass above a bound root (shared, virtual) */
  NODE_PASS,     /* a real object reached from a bound root */
  NODE_RAM,      /* a node of a command's RAM tree (dir, file, symlink) */
} NodeKind;

typedef enum {
  SPECIAL_NONE,
  SPECIAL_CMDROOT, /* /ram/c<N> */
  SPECIAL_BOXDIR,  /* /ram/c<N>/.box */
  SPECIAL_MYDENIAL,/* /ram/c<N>/.box/mydenial */
  SPECIAL_DECISIONS,/* .box/decisions.jsonl of an operator's view (view_log) */
  SPECIAL_COMMANDS,/* .box/commands/ of an operator's view (view_live_dir) */
  SPECIAL_CMDINFO, /* .box/commands/<N>: one running command, rendered */
} NodeSpecial;

typedef struct Node Node;
struct Node {
  fuse_ino_t ino;
  NodeKind kind;
  NodeSpecial special;
  int cmd;             /* owning command (RAM nodes), else -1 */
  Node *parent;        /* holds a reference on the parent */
  char *name;
  guint64 refs;        /* nlookup + child parent-pointers + RAM links + pins */
  guint64 nlookup;
  bool chain;          /* a directory of the root chain (no metadata decision) */
  bool watched;        /* a pass directory with a fanotify mark (vfs_watch.c) */
  guint64 settled;     /* the watch's count of moves when a walk from the root last
                        * found it at its place, or 0 (vfs_watch_proven) */
  bool skeleton;       /* part of a reused RAM root's fixed layout (kept, restored) */
  mode_t skel_mode;    /* its mode as built */
  guint opens;         /* open file handles (atomic) */
  /* NODE_PASS */
  int fd;              /* O_PATH|O_NOFOLLOW, or -1 past the descriptor budget */
  dev_t rdev_key;      /* real st_dev */
  ino_t rino;          /* real st_ino */
  mode_t ftype;        /* S_IFMT bits */
  char *root_path;     /* set on the pass node of a bound root */
  int backing;         /* its backing id while passed-through handles are open, else -1 */
  GSList *open_files;  /* past the descriptor budget: its pass file handles (Fh*, lock
                        * held), the object to read when no walk reaches it now */
  guint backing_refs;  /* those handles */
  /* virtual / RAM */
  mode_t mode;         /* full mode incl. type */
  uid_t uid;
  gid_t gid;
  nlink_t nlink;
  struct timespec atime, mtime, ctime;
  GHashTable *children;/* name -> Node* (directories) */
  GByteArray *data;    /* RAM regular file */
  char *target;        /* RAM symlink */
};

typedef struct {
  int id;
  bool running;
  bool ended;
  Node *root;              /* NULL for a command of a per-box RAM area */
  int area;                /* the command whose RAM tree it uses: itself, a slot, or the box's area */
  bool is_slot;            /* a RAM root lent to one command at a time, reset between them */
  bool slot_busy;          /* lent (a slot) / holds one (a command: slot_held) */
  guint inodes;            /* RAM nodes owned (an area's count) */
  guint64 bytes;           /* RAM file bytes owned (an area's count) */
  pid_t pid;               /* the first process attached (its worker) */
  char *text;              /* box_vfs_command_describe */
  GArray *pidns;           /* guint64 */
  GHashTable *denials;     /* tid -> char* */
  GHashTable *verdicts;    /* "action\x1foperation\x1fspelled path" -> BoxDecision* (cache_decisions) */
  GQueue *denial_order;    /* tids, oldest first */
} Command;

typedef struct {
  guint64 nsino;
  int cmd;
  bool is_tool;
} PidnsEntry;

struct BoxVfs {
  char *mountpoint;
  char **roots;
  char *operator_home;
  char **floor_trees;
  char **floor_files;
  GHashTable *floor_ids;    /* set of FileId (vfs_core.c): the identities the floor guards */
  BoxVfsDecideFn decide;
  BoxVfsDecideFn decide_quiet;
  BoxVfsRecordFn record;
  void *decide_data;
  BoxVfsOutcomeFn outcome;
  bool decide_prompt;
  bool cache_decisions;
  BoxVfsNoteFn note;
  BoxVfsHistoryFn history_batch;
  BoxVfsBeneathFn beneath;
  GHashTable *beneath_seen; /* spelled dir -> GINT_TO_POINTER(1 + may permit below); lock */
  guint64 cache_hits;       /* atomic */
  guint64 pass_lookups;     /* atomic */
  guint64 reach_walks;      /* atomic: walks from a root to a node (pass_reach) */
  guint64 plus_shown, plus_hidden; /* READDIRPLUS entries (atomic) */
  /* RAM areas (issue 6, item 3) */
  bool ram_per_box;
  int box_area;             /* the per-box area's command id, or -1 */
  GArray *free_slots;       /* int: ids of slots no command holds */
  guint64 ram_max_bytes;    /* 0: no total limit */
  guint ram_max_inodes;
  /* the operator's view and what boxd publishes for it */
  char *view_log;
  char *view_live_dir;
  char *live_dir;

  struct fuse_session *se;
  int fuse_fd;              /* /dev/fuse, mounted by vfs_mount */
  bool mounted;
  /* the kernel's FUSE passthrough (vfs_passthrough.c) */
  bool pt_offered;          /* the kernel's INIT offered it */
  bool pt_enabled;          /* our INIT reply took it */
  bool pt_wanted;           /* not turned off (BOXFS_NO_PASSTHROUGH) */
  bool pt_failed;           /* a registration failed: off from then on */
  guint64 pt_init_unique;
  guint64 pt_registered;    /* backing files registered (atomic) */
  pthread_t thread;
  bool thread_started;
  /* changes made outside the mount (vfs_watch.c) */
  int watch_fd;             /* fanotify, or -1: not watched */
  int watch_wake;           /* eventfd: wakes the watch thread (to end, or to expire all) */
  GArray *watch_fs;         /* WatchFs: the filesystems marked */
  GThread *watch_thread;
  guint tools_live;         /* tool namespaces registered: no long entries while any */
  gint watch_quit, watch_flush; /* atomic: asks of the watch thread */
  guint64 watch_moves;      /* atomic: names changed that could move a node (from 1) */
  gint watch_reading;       /* atomic: odd while a reader holds events not yet counted */
  GMutex watch_read_lock;   /* one reader of watch_fd at a time: the watch thread or a drain */
  GByteArray *watch_handoff; /* under watch_read_lock: outside events a drain read, for the watch thread */

  GMutex lock;
  GHashTable *nodes;        /* fuse_ino_t -> Node* */
  GHashTable *pass_nodes;   /* PassKey -> Node* */
  guint node_fds;           /* pass nodes holding their own descriptor */
  guint node_fd_budget;     /* at most this many do: the rest are reached by a walk */
  guint64 fdless_nodes;     /* nodes made past the budget (box_vfs_debug_fdless_nodes) */
  fuse_ino_t next_ino;
  Node *root, *passdir, *ramdir;
  GPtrArray *commands;      /* Command*, index = id */
  GHashTable *pidns;        /* guint64* -> PidnsEntry* */

  /* liveness */
  GThreadPool *pool;        /* runs Jobs */
  GMutex pending_lock;
  GHashTable *pending;      /* Job* set: queued or running jobs */
  guint64 cancelled;        /* jobs answered EINTR (atomic) */
  GPtrArray *graveyard;     /* cancelled Jobs, freed at stop */
};

/* Who sent a request. */
typedef struct {
  bool placed;
  int cmd;
  int area;       /* whose RAM tree the caller's command uses */
  bool is_tool;
  bool decides;   /* worker of a running command */
  pid_t tid;
  uid_t uid;
  gid_t gid;
} Caller;

/* ---- liveness: pending decisions (vfs_core.c) ----
 * A request that will raise a decision is not handled on the session loop's
 * thread: it becomes a Job, queued to the decision pool, and the loop thread
 * returns at once.  A job is pending while QUEUED or DECIDING (the decide
 * callback is running); while pending it can be answered EINTR by
 * FUSE_INTERRUPT or by the end of its command, and the thread that carries
 * it then neither acts nor replies.  ACTIVE (acting on a permit, or before
 * the first decision) cannot be cancelled: the effect runs to its reply. */
typedef enum { JOB_QUEUED, JOB_ACTIVE, JOB_DECIDING, JOB_CANCELLED } JobState;

typedef struct Job Job;
typedef void (*JobRunFn)(Job *job);
struct Job {
  BoxVfs *v;
  fuse_req_t req;
  JobRunFn run;
  int state;              /* JobState, atomic */
  Caller caller;          /* placed on the loop thread */
  /* the request's arguments, copied */
  fuse_ino_t ino, ino2;
  char *name, *name2;
  mode_t mode;
  dev_t rdev;
  int mask, to_set;
  unsigned int flags;
  struct stat attr;
  struct fuse_file_info fi;
  bool has_fi;
};

typedef enum { FH_PASS_FILE, FH_PASS_DIR, FH_RAM_FILE, FH_RAM_DIR, FH_MYDENIAL, FH_VDIR, FH_VIEW_LOG, FH_VIEW_DIR } FhKind;

typedef struct {
  char *name;
  fuse_ino_t d_ino;
  unsigned char type; /* DT_* */
} DirEnt;

typedef struct {
  FhKind kind;
  int cmd;            /* command of the opener (-1: none) */
  Node *node;         /* pinned */
  int fd;             /* pass file */
  DIR *dir;           /* pass directory */
  int flags;
  GArray *entries;    /* DirEnt, snapshot at offset 0 */
  char *text;         /* mydenial snapshot */
  size_t text_len;
  int backing;        /* pass file served by kernel passthrough: its backing id, else -1 */
  /* a pass directory is listed straight from dir (no snapshot): */
  struct dirent *ent; /* read and not yet sent */
  off_t pos;          /* the offset of ent (or of the next entry to read) */
} Fh;

/* vfs_watch.c: marks on pass directories, expiry of the names that
 * change outside the mount.  vfs_watch_dir and vfs_watch_forget with the
 * lock held; vfs_watch_actor on every thread that acts for the mount. */
void vfs_watch_open(BoxVfs *v);
void vfs_watch_dir(BoxVfs *v, Node *n);
void vfs_watch_forget(BoxVfs *v, Node *n);
void vfs_watch_actor(void);
/* every name kept long, expired soon after (on the watch thread) */
void vfs_watch_expire_all(BoxVfs *v);
/* lock held: a tool namespace registered (+1) or gone (-1) */
void vfs_watch_tools(BoxVfs *v, int delta);
/* lock held: may an entry of n be kept for the long timeout? */
bool vfs_watch_long(BoxVfs *v, Node *n);
/* Identity without a walk: vfs_watch_moves before a walk from the root,
 * vfs_watch_proven (lock held) on the node the walk found, vfs_watch_moved
 * before this daemon removes or renames a real name; vfs_watch_settled: no
 * name has changed since, so the node's descriptor is still what its path
 * names. */
guint64 vfs_watch_moves(BoxVfs *v);
void vfs_watch_proven(Node *n, guint64 moves);
void vfs_watch_moved(BoxVfs *v);
bool vfs_watch_settled(BoxVfs *v, guint64 settled);
void vfs_watch_start(BoxVfs *v);
void vfs_watch_stop(BoxVfs *v);
void vfs_watch_close(BoxVfs *v);

/* vfs_core.c */
Node *vfs_node_get(BoxVfs *v, fuse_ino_t ino);               /* lock held */
Node *vfs_node_new(BoxVfs *v, NodeKind kind, int cmd);        /* lock held; refs 0 */
void vfs_node_ref(Node *n);
void vfs_node_unref(BoxVfs *v, Node *n);                      /* lock held */
/* Between these two (no lock held at either), the descriptors of the pass
 * nodes this thread frees are closed at vfs_closes_run, after the lock is
 * released: closing an unlinked file's last descriptor makes the backing
 * filesystem free it right there (on ext4 a truncate and journal handles,
 * which can wait for a commit), and under the lock every loop thread would
 * wait with it. */
void vfs_closes_defer(void);
void vfs_closes_run(void);
#define VFS_CLOSES_SLICE 32 /* forgets per deferral: a freed node can free its parents */
void vfs_node_set_parent(BoxVfs *v, Node *n, Node *parent, const char *name);
Node *vfs_ram_new(BoxVfs *v, int cmd, Node *dir, const char *name, mode_t mode, uid_t uid,
                  gid_t gid, int *err);                       /* linked into dir */
void vfs_ram_unlink(BoxVfs *v, Node *dir, const char *name); /* drops the link */
Node *vfs_pass_find(BoxVfs *v, dev_t dev, ino_t ino);
Node *vfs_pass_insert(BoxVfs *v, Node *parent, const char *name, int fd, const struct stat *st);
Command *vfs_command(BoxVfs *v, int id);                      /* live command or NULL */
void vfs_place(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, Caller *c);
/* Worker-view absolute path of a node ("/..." ; RAM: relative to c<N>). NULL if unknown. */
char *vfs_node_path(BoxVfs *v, Node *n);                      /* lock held */
/* parts[0..n) joined into buf (NUL-terminated); false when they do not fit.
 * For keys and paths built once per listed entry (snprintf costs more). */
bool vfs_concat(char *buf, size_t size, const char *const *parts, size_t n);
char *vfs_child_path(const char *dir, const char *name);
char *vfs_spell(BoxVfs *v, const char *path);
bool vfs_host_backed(BoxVfs *v, const char *path);
/* Asks policy and applies the floor.  Returns 0 or EACCES.  No lock held. */
int vfs_decide(BoxVfs *v, const Caller *c, const char *action, const char *path,
               bool host_backed, const char *operation, bool mutating);
/* As vfs_decide for an object whose identity the caller holds (a node's,
 * or a name's just read): the floor compares it with the authority files'
 * instead of reading the path's again.  obj NULL: as vfs_decide. */
typedef struct {
  dev_t dev;
  ino_t ino;
} VfsObjId;
int vfs_decide_obj(BoxVfs *v, const Caller *c, const char *action, const char *path,
                   bool host_backed, const char *operation, bool mutating, const VfsObjId *obj);
/* Whether the command's decision cache holds a permit of (action,
 * operation, path): policy's verdict, before the reach floor (ask that with
 * vfs_floor_refuses).  Decides nothing, logs nothing (readdirplus: what may
 * be shown without a decision). */
bool vfs_verdict_cached_permit(BoxVfs *v, int cmd, const char *action, const char *operation,
                               const char *path, bool host_backed);
/* Whether the reach floor refuses the host path whose object is obj. */
bool vfs_floor_refuses(BoxVfs *v, const char *path, const VfsObjId *obj);
/* Why the floor refuses to change that path (NULL: it does not). */
const char *vfs_floor_reason(BoxVfs *v, const char *path, const VfsObjId *obj);
/* A lookup that found nothing: ENOENT, or EACCES (recorded) when policy would
 * neither let the caller read nor write the path. */
int vfs_probe_absent(BoxVfs *v, const Caller *c, const char *path, bool host_backed);
/* A lookup that found the name: 0, or EACCES (recorded) as for a missing
 * one, so that the answer does not tell the two apart; *may_read false when
 * the command may not read the path (its attributes are then not shown:
 * the kernel keeps a lookup's attributes for a statx with
 * AT_STATX_DONT_SYNC).  walked (a directory, which a walk goes through):
 * refused only where policy permits nothing below it and it is no bound
 * root or above one (BoxVfsConfig.beneath), else only *may_read.  Asks only with a policy that reads no
 * history; with one that does, never refuses and *may_read is false. */
int vfs_probe_present(BoxVfs *v, const Caller *c, const char *path, bool host_backed, bool walked,
                      bool *may_read);
/* Records an enforcement denial (identity) for a deciding caller. */
void vfs_enforce(BoxVfs *v, const Caller *c, const char *action, const char *path, bool host_backed,
                 const char *gate, const char *why);
const char *vfs_denial_text(BoxVfs *v, int cmd, pid_t tid);   /* lock held */
/* lock held: the caller may use this RAM node (its command's tree or area) */
bool vfs_ram_reachable(const Caller *c, const Node *n);
/* lock held: n's RAM file resized, counted against its area's size limit */
int vfs_ram_resize(BoxVfs *v, Node *n, size_t len);
/* The operator's view: .box/commands/<name> rendered ("" if gone: NULL). */
char *vfs_view_command_text(BoxVfs *v, const char *name);
/* Names (command ids) of the running commands boxd published. */
GPtrArray *vfs_view_command_names(BoxVfs *v);

/* Jobs.  vfs_job_submit queues a job (the loop thread returns);
 * vfs_job_current is the job the calling thread carries (NULL inline). */
void vfs_job_submit(BoxVfs *v, Job *job);
Job *vfs_job_current(void);
/* Around a decide callback: false when the job was cancelled meanwhile
 * (already answered EINTR: do not act, do not reply). */
bool vfs_job_decide_begin(Job *job);
bool vfs_job_decide_end(Job *job);
bool vfs_job_cancelled(const Job *job);
/* Before a reply: false when the job was answered already (cancelled). */
bool vfs_job_may_reply(Job *job);
/* Placement done on the loop thread, if this thread carries that request. */
bool vfs_job_caller(fuse_req_t req, Caller *c);
/* Remembers where a request handled inline was placed (this thread). */
void vfs_job_set_inline(fuse_req_t req, const Caller *c);

/* The history raiser: permitted decisions of the request this thread is
 * handling wait for its reply, which gives their outcome (NULL: error). */
void vfs_outcome_flush(const char *result);

/* vfs_passthrough.c: the mount (our own, so that INIT can take the
 * kernel's passthrough) and the backing files of passed-through opens. */
bool vfs_mount(BoxVfs *v, GError **error);
void vfs_unmount(BoxVfs *v);
/* The backing id for an open of pass node n whose real file is fd, or -1
 * (no passthrough).  The kernel ties an inode to one backing file while it
 * has passed-through opens, so the id is the node's, shared by its open
 * handles (each holds a reference, dropped by vfs_backing_close). */
int vfs_backing_open(BoxVfs *v, Node *n, int fd);
void vfs_backing_close(BoxVfs *v, Node *n, int id);
/* The next OPEN/CREATE reply of this thread passes through to backing id. */
void vfs_backing_for_reply(int id);

/* vfs_ops.c */
extern const struct fuse_lowlevel_ops vfs_ops;

#endif
