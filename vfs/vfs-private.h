/* vfs-private.h — private to vfs/: the types every file of the mount shares
 * (nodes, commands, callers, jobs, file handles) and the functions one file
 * offers the others, grouped by the file that holds them (DESIGN.md, "Where
 * things are: a file map"). */
#ifndef BOX_VFS_PRIVATE_H
#define BOX_VFS_PRIVATE_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <dirent.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "vfs/vfs.h"
#include "policy/path.h"

#define VFS_RAM_MAX_FILE (10u * 1024u * 1024u)
#define VFS_RAM_MAX_INODES 10000u
#define VFS_DENIAL_RING 256u
#define VFS_MAX_DEPTH 4096
#define VFS_DECISION_THREADS 64      /* pending decisions at once */
#define VFS_VERDICTS_MAX 65536u      /* cached verdicts per command; dropped when full */
#define VFS_RAM_INO_BIT (1ull << 62) /* st_ino of virtual and RAM nodes */

/* Zeroed memory by malloc and memset: glibc's calloc (g_new0) bypasses the
 * thread's cache, a slow path on every create and open. */
static inline void *vfs_zalloc(size_t size)
{
  void *p = g_malloc(size);
  memset(p, 0, size);
  return p;
}

static inline void now_ts(struct timespec *ts)
{
  clock_gettime(CLOCK_REALTIME, ts);
}

typedef enum {
  NODE_ROOT,    /* ino 1 */
  NODE_PASSDIR, /* /pass */
  NODE_RAMDIR,  /* /ram */
  NODE_CHAIN,   /* a directory of /pass above a bound root (shared, virtual) */
  NODE_PASS,    /* a real object reached from a bound root */
  NODE_RAM,     /* a node of a command's RAM tree (dir, file, symlink) */
} NodeKind;

typedef enum {
  SPECIAL_NONE,
  SPECIAL_CMDROOT,   /* /ram/c<N> */
  SPECIAL_BOXDIR,    /* /ram/c<N>/.box */
  SPECIAL_MYDENIAL,  /* /ram/c<N>/.box/mydenial */
  SPECIAL_DECISIONS, /* .box/decisions.jsonl of an operator's view (view_log) */
  SPECIAL_COMMANDS,  /* .box/commands/ of an operator's view (view_live_dir) */
  SPECIAL_CMDINFO,   /* .box/commands/<N>: one running command, rendered */
  SPECIAL_TREE,      /* .box/<name> of an operator's view: its view_tree's root */
  SPECIAL_TRUST,     /* /ram/c<N>/.box/gateway-ca.pem: the gateway's CA */
} NodeSpecial;

/* The open handles of deciding commands on a node, and whose they are. */
typedef struct {
  guint count;
  int cmd;    /* the command of those handles, while they are all one's */
  bool mixed; /* more than one command has held them since count was 0 */
} Holders;

typedef struct Node Node;
struct Node {
  fuse_ino_t ino;
  NodeKind kind;
  NodeSpecial special;
  int cmd;      /* owning command (RAM nodes), else -1 */
  Node *parent; /* holds a reference on the parent */
  char *name;
  size_t namelen; /* strlen(name): the path walks run on every decided op */
  guint64 refs;   /* nlookup + child parent-pointers + RAM links + pins */
  guint64 nlookup;
  bool chain;       /* a directory of the root chain (no metadata decision) */
  bool watched;     /* a pass directory with a fanotify mark (watch.c) */
  bool attr_kept;   /* its attributes granted to the kernel (attrs.c; lock) */
  bool attr_mark;   /* its mark reports attribute changes too (vfs_watch_attrs) */
  guint64 settled;  /* the watch's count of moves when a walk from the root last
                        * found it at its place, or 0 (vfs_watch_proven) */
  bool mount_point; /* a tool launch's, in a RAM /tmp: no entry for the Shell, no decision */
  bool skeleton;    /* part of a reused RAM root's fixed layout (kept, restored) */
  bool closed;      /* a RAM directory no name can be made in (a RAM root's usr/) */
  mode_t skel_mode; /* its mode as built */
  guint opens;      /* open file handles (atomic) */
  Holders writing;  /* open handles for writing (lock held) */
  Holders held;     /* open handles of any kind (lock held; attrs.c) */
  /* NODE_PASS */
  int fd;             /* O_PATH|O_NOFOLLOW, or -1 past the descriptor budget */
  dev_t rdev_key;     /* real st_dev */
  ino_t rino;         /* real st_ino */
  mode_t ftype;       /* S_IFMT bits */
  char *root_path;    /* set on the pass node of a bound root */
  int backing;        /* its backing id while passed-through handles are open, else -1 */
  GSList *open_files; /* past the descriptor budget: its pass file handles (Fh*, lock
                        * held), the object to read when no walk reaches it now */
  guint backing_refs; /* those handles */
  /* virtual / RAM */
  mode_t mode; /* full mode incl. type */
  uid_t uid;
  gid_t gid;
  nlink_t nlink;
  struct timespec atime, mtime, ctime;
  GHashTable *children; /* name -> Node* (directories) */
  GByteArray *data;     /* RAM regular file */
  char *target;         /* RAM symlink */
};

typedef struct {
  int id;
  bool running;
  bool ended;
  Node *root;          /* NULL for a command of a per-box RAM area */
  int area;            /* the command whose RAM tree it uses: itself, a slot, or the box's area */
  bool is_slot;        /* a RAM root lent to one command at a time, reset between them */
  bool slot_busy;      /* lent (a slot) / holds one (a command: slot_held) */
  guint inodes;        /* RAM nodes owned (an area's count) */
  guint64 bytes;       /* RAM file bytes owned (an area's count) */
  pid_t pid;           /* the first process attached (its worker) */
  char *text;          /* box_vfs_command_describe */
  bool live_published; /* its live_dir record was written (lock) */
  GArray *pidns;       /* guint64 */
  GHashTable *denials; /* tid -> char* */
  GHashTable
    *verdicts; /* "action\x1foperation\x1fspelled path" -> BoxDecision* (cache_decisions) */
  GQueue *denial_order; /* tids, oldest first */
} Command;

typedef struct {
  guint64 nsino;
  int cmd;
  bool is_tool;
  char **reach_paths; /* box_vfs_tool_attach; NULL: none given */
  char *reach;
} PidnsEntry;

struct BoxVfs {
  char *mountpoint;
  char **roots;
  char *operator_home;
  char **floor_trees;
  char **floor_files;
  GHashTable *floor_ids; /* set of FileId (floor.c): the identities the floor guards */
  BoxVfsDecideFn decide;
  BoxVfsDecideFn decide_quiet;
  BoxVfsRecordFn record;
  void *decide_data;
  BoxVfsOutcomeFn outcome;
  BoxVfsChangedFn changed;
  void *changed_data;
  bool decide_prompt;
  bool cache_decisions;
  BoxVfsNoteFn note;
  BoxVfsHistoryFn history_batch;
  BoxVfsBeneathFn beneath;
  GHashTable *beneath_seen;        /* spelled dir -> GINT_TO_POINTER(1 + may permit below); lock */
  guint64 cache_hits;              /* atomic */
  guint64 pass_lookups;            /* atomic */
  guint64 ram_lookups;             /* of /ram/<name>; atomic */
  guint64 held_refusals;           /* lookups refused of nodes the kernel held (atomic) */
  guint64 reach_walks;             /* atomic: walks from a root to a node (pass_reach) */
  guint64 plus_shown, plus_hidden; /* READDIRPLUS entries (atomic) */
  /* RAM areas: one per command (slots) or one for the box */
  bool ram_per_box;
  int box_area;          /* the per-box area's command id, or -1 */
  GArray *free_slots;    /* int: ids of slots no command holds */
  guint64 ram_max_bytes; /* 0: no total limit */
  guint ram_max_inodes;
  /* the operator's view and what boxd publishes for it */
  char *view_log;
  char *view_live_dir;
  char *trust_pem;      /* the gateway's CA (box_vfs_set_trust), or NULL */
  BoxVfsTree view_tree; /* name NULL: none */
  char *live_dir;
  bool in_user_namespace;
  char *premounted_at;
  int premounted_fd;
  /* the connection speaks the host's ids (premounted): these are 0 here */
  bool host_ids;
  uid_t host_uid;
  gid_t host_gid;
  int mounted_fd;         /* fusermount3's connection at mountpoint, or -1 */
  Node *view_root;        /* box_vfs_serve_view: what the root shows, or NULL */
  GHashTable *root_nodes; /* a bound root's path -> its /pass node */

  struct fuse_session *se;
  int fuse_fd; /* /dev/fuse, mounted by vfs_mount */
  bool mounted;
  /* the kernel's FUSE passthrough (passthrough.c) */
  bool pt_offered; /* the kernel's INIT offered it */
  bool pt_enabled; /* our INIT reply took it */
  bool pt_wanted;  /* not turned off (BOXFS_NO_PASSTHROUGH, a user namespace) */
  bool pt_failed;  /* a registration failed: off from then on */
  guint64 pt_init_unique;
  guint64 pt_registered; /* backing files registered (atomic) */
  pthread_t thread;
  bool thread_started;
  /* changes made outside the mount (watch.c) */
  int watch_fd;     /* fanotify, or -1: not watched */
  int watch_wake;   /* eventfd: wakes the watch thread (to end, or to expire all) */
  GArray *watch_fs; /* WatchFs: the filesystems marked */
  GThread *watch_thread;
  guint tools_live;             /* tool namespaces registered: no long entries while any */
  guint running_cmds;           /* commands running (attrs.c; lock) */
  GArray *attr_grants;          /* fuse_ino_t: nodes granted since the last flush (lock) */
  guint attr_compact_at;        /* its length that has it compacted (attrs.c) */
  gint watch_quit, watch_flush; /* atomic: asks of the watch thread */
  guint64 watch_moves;          /* atomic: names changed that could move a node (from 1) */
  gint watch_reading;           /* atomic: odd while a reader holds events not yet counted */
  GMutex watch_read_lock;       /* one reader of watch_fd at a time: the watch thread or a drain */
  GByteArray
    *watch_handoff; /* under watch_read_lock: outside events a drain read, for the watch thread */

  GMutex lock;
  GHashTable *nodes;      /* fuse_ino_t -> Node* */
  GHashTable *pass_nodes; /* PassKey -> Node* */
  guint node_fds;         /* pass nodes holding their own descriptor */
  guint node_fd_budget;   /* at most this many do: the rest are reached by a walk */
  guint64 fdless_nodes;   /* nodes made past the budget (box_vfs_debug_fdless_nodes) */
  fuse_ino_t next_ino;
  Node *root, *passdir, *ramdir;
  GPtrArray *commands; /* Command*, index = id */
  GHashTable *pidns;   /* guint64* -> PidnsEntry* */

  /* liveness */
  GThreadPool *pool; /* runs Jobs */
  GMutex pending_lock;
  GHashTable *pending;  /* Job* set: queued or running jobs */
  guint64 cancelled;    /* jobs answered EINTR (atomic) */
  GPtrArray *graveyard; /* cancelled Jobs, freed at stop */
};

/* Who sent a request. */
typedef struct {
  bool placed;
  int cmd;
  int area; /* whose RAM tree the caller's command uses */
  bool is_tool;
  bool decides;     /* worker of a running command */
  bool ram_decides; /* a running command's tool: its RAM tree's requests decide */
  pid_t tid;
  uid_t uid;
  gid_t gid;
  guint64 nsino; /* its PidnsEntry's, 0: none */
} Caller;

/* ---- liveness: pending decisions (job.c) ----
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
  int state;     /* JobState, atomic */
  Caller caller; /* placed on the loop thread */
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

typedef enum {
  FH_PASS_FILE,
  FH_PASS_DIR,
  FH_RAM_FILE,
  FH_RAM_DIR,
  FH_MYDENIAL,
  FH_VDIR,
  FH_VIEW_LOG,
  FH_VIEW_DIR
} FhKind;

typedef struct {
  char *name;
  fuse_ino_t d_ino;
  unsigned char type; /* DT_* */
} DirEnt;

typedef struct {
  FhKind kind;
  int cmd;    /* command of the opener (-1: none) */
  Node *node; /* pinned */
  int fd;     /* pass file */
  DIR *dir;   /* pass directory */
  int flags;
  bool writes;     /* counted in its node's writing */
  bool held;       /* counted in its node's held */
  GArray *entries; /* DirEnt, snapshot at offset 0 */
  char *text;      /* mydenial snapshot */
  size_t text_len;
  int backing; /* pass file served by kernel passthrough: its backing id, else -1 */
  /* a pass directory is listed straight from dir (no snapshot): */
  struct dirent *ent; /* read and not yet sent */
  off_t pos;          /* the offset of ent (or of the next entry to read) */
} Fh;

/* ---- changed.c: the changed callback (BoxVfsConfig.changed) of a
 * placed caller's effect on a pass node: by its path (spelled as the host
 * knows it), or by the node (lock not held). ---- */
void vfs_changed(BoxVfs *v, const Caller *c, const char *path);
void vfs_changed_node(BoxVfs *v, const Caller *c, Node *n);

/* ---- watch.c: marks on pass directories, expiry of the names that
 * change outside the mount. ----
 * vfs_watch_dir and vfs_watch_forget with the
 * lock held; vfs_watch_actor on every thread that acts for the mount. */
void vfs_watch_open(BoxVfs *v);
void vfs_watch_dir(BoxVfs *v, Node *n);
void vfs_watch_forget(BoxVfs *v, Node *n);
bool vfs_watch_attrs(BoxVfs *v, Node *n);
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

/* ---- attrs.c: attributes the kernel keeps after a permitted stat ----
 * vfs_attr_grant: the attribute timeout of a GETATTR answer to c on n,
 * whose metadata c's command was just permitted to read (0: none);
 * vfs_attr_expire: a node's grant, dropped (its attr_kept cleared);
 * vfs_attr_flush: every grant expired; vfs_attr_granting: whether any is
 * held; vfs_attr_running (lock held): cm starts or stops running, true
 * when the grants must be flushed (after the lock is let go). */
double vfs_attr_grant(BoxVfs *v, const Caller *c, Node *n);
void vfs_attr_flush(BoxVfs *v);
bool vfs_attr_granting(BoxVfs *v);
bool vfs_attr_running(BoxVfs *v, Command *cm, bool running);
void vfs_attr_expire(BoxVfs *v, fuse_ino_t ino);

/* ---- node.c ---- */
void vfs_nodes_init(BoxVfs *v);                        /* the two tables, empty */
void vfs_nodes_free(BoxVfs *v);                        /* at stop: every node, as it is */
Node *vfs_node_get(BoxVfs *v, fuse_ino_t ino);         /* lock held */
Node *vfs_node_new(BoxVfs *v, NodeKind kind, int cmd); /* lock held; refs 0 */
void vfs_node_ref(Node *n);
void vfs_node_unref(BoxVfs *v, Node *n); /* lock held */
/* lock held: drops nlookup of the kernel's references on node ino */
void vfs_node_forget(BoxVfs *v, fuse_ino_t ino, uint64_t nlookup);
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
/* lock held: a virtual directory (parent NULL: the tree's root) */
Node *vfs_dir_node_new(BoxVfs *v, NodeKind kind, int cmd, Node *parent, const char *name,
                       mode_t perm);
Node *vfs_ram_new(BoxVfs *v, int cmd, Node *dir, const char *name, mode_t mode, uid_t uid,
                  gid_t gid, int *err);                      /* linked into dir */
void vfs_ram_unlink(BoxVfs *v, Node *dir, const char *name); /* drops the link */
/* lock held: the caller may use this RAM node (its command's tree or area) */
bool vfs_ram_reachable(const Caller *c, const Node *n);
/* lock held: n's RAM file resized, counted against its area's size limit */
int vfs_ram_resize(BoxVfs *v, Node *n, size_t len);
Node *vfs_pass_find(BoxVfs *v, dev_t dev, ino_t ino);
/* lock held: the node of the object st describes (the one a lookup may
 * hand the kernel), or NULL: none, or only a retired one (node.c) */
Node *vfs_pass_find_obj(BoxVfs *v, const struct stat *st);
Node *vfs_pass_insert(BoxVfs *v, Node *parent, const char *name, int fd, const struct stat *st);

/* ---- path.c ---- */
/* Worker-view absolute path of a node ("/..." ; RAM: relative to c<N>). NULL if unknown. */
char *vfs_node_path(BoxVfs *v, Node *n);                /* lock held */
Node *vfs_view_shown(BoxVfs *v, Node *parent, Node *n); /* lock held */
/* vfs_child_path(vfs_node_path(n), name) in one allocation; lock held */
char *vfs_node_child_path(BoxVfs *v, Node *n, const char *name);
/* parts[0..n) joined into buf (NUL-terminated); false when they do not fit.
 * For keys and paths built once per listed entry (snprintf costs more). */
bool vfs_concat(char *buf, size_t size, const char *const *parts, size_t n);
char *vfs_child_path(const char *dir, const char *name);
/* path is base or below it ("/" holds every absolute path) */
/* path as policy is told it: ~/... where a host-backed path is in the
 * operator's home (*owned, to free), else path itself (*owned NULL): every
 * decided op spells one, most of them outside the home */
const char *vfs_spelled(BoxVfs *v, const char *path, bool host_backed, char **owned);
bool vfs_host_backed(BoxVfs *v, const char *path);
/* Closes "." and ".." lexically in an absolute path. */
char *vfs_normalize(const char *abs);

/* ---- command.c ---- */
Command *vfs_command(BoxVfs *v, int id); /* live command or NULL */
/* lock held: a new command; with a RAM tree of its own (root named
 * root_name under /ram) unless it uses the per-box area. */
Command *vfs_command_create(BoxVfs *v, const char *root_name);
/* roots[i] lies in another root (or repeats one): it gets no chain of its own */
bool vfs_root_is_nested(char **roots, guint i);
void vfs_store_denial(BoxVfs *v, int cmd, pid_t tid, const char *text);
const char *vfs_denial_text(BoxVfs *v, int cmd, pid_t tid); /* lock held */

/* ---- place.c ---- */
void vfs_place(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, Caller *c);
bool vfs_place_daemon(BoxVfs *v, fuse_req_t req, fuse_ino_t parent, Caller *c);
void vfs_place_node(BoxVfs *v, Caller *c, fuse_ino_t ino);
/* The inode number of pid's PID namespace. */
bool vfs_pidns_inode(pid_t pid, guint64 *out);
void vfs_pidns_entry_free(gpointer entry);

/* ---- floor.c ---- */
/* Records the identities the floor guards (at start). */
void vfs_guards_record(BoxVfs *v);
/* An object's identity (ino 0: nothing there), as the floor compares it. */
typedef struct {
  dev_t dev;
  ino_t ino;
} VfsObjId;
/* Why the floor refuses the path (mutating: to change it), NULL: it does
 * not.  obj: the object's identity when the caller has it, else it is read
 * from the path. */
const char *vfs_floor_reason_obj(BoxVfs *v, const char *path, bool mutating, const VfsObjId *obj);
/* Whether the reach floor refuses the host path whose object is obj. */
bool vfs_floor_refuses(BoxVfs *v, const char *path, const VfsObjId *obj);
/* Why the floor refuses to change that path (NULL: it does not). */
const char *vfs_floor_reason(BoxVfs *v, const char *path, const VfsObjId *obj);
/* The floor for a caller that raises no decision (a tool): 0 or EACCES. */
int vfs_tool_floor(BoxVfs *v, const Caller *c, const char *path, bool host_backed, bool mutating,
                   const VfsObjId *obj);
/* vfs_tool_floor for a request that makes path (creates: a missing name). */
int vfs_tool_floor_make(BoxVfs *v, const Caller *c, const char *path, bool host_backed,
                        bool mutating, bool creates, const VfsObjId *obj);
/* A tool's request on path checked against its view's reach
 * (box_vfs_tool_attach): 0, EACCES (nothing) or EROFS (read only). */
int vfs_tool_reach(BoxVfs *v, const Caller *c, const char *path, bool mutating, bool creates);
/* The same for a tool's lookup of path: EACCES when its parent is one the
 * view hides and no grant of the view lies at or below path. */
int vfs_tool_reach_name(BoxVfs *v, const Caller *c, const char *path);
/* lock held: whether c's view holds any path it may not reach at all. */
bool vfs_tool_has_hidden(BoxVfs *v, const Caller *c);

/* ---- decide.c ---- */
/* Asks policy and applies the floor.  Returns 0 or EACCES.  No lock held. */
int vfs_decide(BoxVfs *v, const Caller *c, const char *action, const char *path, bool host_backed,
               const char *operation, bool mutating);
/* As vfs_decide for an object whose identity the caller holds (a node's,
 * or a name's just read): the floor compares it with the authority files'
 * instead of reading the path's again.  obj NULL: as vfs_decide. */
int vfs_decide_obj(BoxVfs *v, const Caller *c, const char *action, const char *path,
                   bool host_backed, const char *operation, bool mutating, const VfsObjId *obj);
/* Records an enforcement denial (identity) for a deciding caller. */
void vfs_enforce(BoxVfs *v, const Caller *c, const char *action, const char *path, bool host_backed,
                 const char *gate, const char *why);
/* Records decision d (and takes it): 0 for a permit, else EACCES with the
 * denial's text kept for the caller. */
int vfs_finish_decision(BoxVfs *v, const Caller *c, const char *action, json_object *input,
                        BoxDecision *d);
/* A decided operation's input, {"path": spelled, "operation": operation},
 * and its end (shared: another reference was taken). */
json_object *vfs_fs_input(const char *spelled, const char *operation);
void vfs_fs_input_done(json_object *in, bool shared);
/* What each operation asks (the legs in order); 0, EACCES or EINTR. */
int vfs_decide_getattr(BoxVfs *v, const Caller *c, Node *n);
int vfs_decide_setattr(BoxVfs *v, const Caller *c, Node *n, int to_set);
int vfs_decide_access(BoxVfs *v, const Caller *c, Node *n, bool is_dir);
int vfs_decide_readlink(BoxVfs *v, const Caller *c, Node *n);
int vfs_decide_open(BoxVfs *v, const Caller *c, Node *n, bool reads_only);
int vfs_decide_opendir(BoxVfs *v, const Caller *c, Node *n);
int vfs_decide_create(BoxVfs *v, const Caller *c, const char *path, bool pass);
int vfs_decide_make(BoxVfs *v, const Caller *c, const char *path, bool pass, const char *dirpath,
                    mode_t type, const char *link, const VfsObjId *at);
int vfs_decide_link(BoxVfs *v, const Caller *c, Node *src, const char *path, bool pass);
int vfs_decide_remove(BoxVfs *v, const Caller *c, const char *path, bool pass, bool dir,
                      const VfsObjId *gone);
/* A rename's two names, the identities found there (NULL outside
 * passthrough) and what the destination holds. */
typedef struct {
  const char *src, *dst;
  bool src_pass, dst_pass;
  const VfsObjId *src_obj, *dst_obj;
  bool dst_exists, dst_dir, exchange;
} VfsRename;
int vfs_decide_rename(BoxVfs *v, const Caller *c, const VfsRename *r);
#define VFS_IDENTITY_WHY "no longer resolves to the object that policy judged"

/* ---- verdicts.c ---- */
GHashTable *vfs_verdicts_new(void);
/* Policy's verdict on (action, input), from the command's cache when the
 * same request was decided before; quiet: as decide_quiet (no ::request). */
BoxDecision *vfs_verdict_ask(BoxVfs *v, int cmd, const char *action, json_object *input,
                             const char *spelled, const char *operation, bool quiet);
/* Whether the command's decision cache holds a permit of (action,
 * operation, path): policy's verdict, before the reach floor (ask that with
 * vfs_floor_refuses).  Decides nothing, logs nothing (readdirplus: what may
 * be shown without a decision). */
bool vfs_verdict_cached_permit(BoxVfs *v, int cmd, const char *action, const char *operation,
                               const char *path, bool host_backed);

/* ---- probe.c ---- */
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

/* ---- outcome.c ----
 * The history raiser: permitted decisions of the request this thread is
 * handling wait for its reply, which gives their outcome (NULL: error).
 * action is kept, not copied, until then: the fs:* actions are literals. */
void vfs_outcome_flush(const char *result);
void vfs_outcome_push(BoxVfs *v, int cmd, const char *action, json_object *input);
/* Opens this thread's history batch (closed by vfs_outcome_flush). */
void vfs_history_batch_open(BoxVfs *v);

/* ---- view.c ---- */
/* The operator's view: .box/commands/<name> rendered ("" if gone: NULL). */
char *vfs_view_command_text(BoxVfs *v, const char *name);
/* Names (command ids) of the running commands boxd published. */
GPtrArray *vfs_view_command_names(BoxVfs *v);
/* Removes the command's record from live_dir. */
void vfs_live_withdraw(BoxVfs *v, int command, bool published);

/* ---- job.c ----
 * vfs_job_submit queues a job (the loop thread returns);
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
/* Answers every pending job of the command EINTR (lock held). */
void vfs_job_cancel_command(BoxVfs *v, int command);
/* The decision pool's thread function, and a job's free. */
void vfs_job_thread(gpointer data, gpointer user);
void vfs_job_free(Job *job);

/* ---- passthrough.c: the mount (our own, so that INIT can take the
 * kernel's passthrough) and the backing files of passed-through opens. ---- */
bool vfs_mount(BoxVfs *v, GError **error);
/* The ids of a request in this namespace's terms, and a reply's attributes
 * in the connection's. */
void vfs_ids_in(const BoxVfs *v, uid_t *uid, gid_t *gid);
void vfs_attr_out(const BoxVfs *v, struct stat *st);
void vfs_unmount(BoxVfs *v);
/* The backing id for an open of pass node n whose real file is fd, or -1
 * (no passthrough).  The kernel ties an inode to one backing file while it
 * has passed-through opens, so the id is the node's, shared by its open
 * handles (each holds a reference, dropped by vfs_backing_close). */
int vfs_backing_open(BoxVfs *v, Node *n, int fd);
void vfs_backing_close(BoxVfs *v, Node *n, int id);
/* The next OPEN/CREATE reply of this thread passes through to backing id. */
void vfs_backing_for_reply(int id);

/* ---- the request handlers' common parts ---- */

static inline BoxVfs *V(fuse_req_t req)
{
  return fuse_req_userdata(req);
}
/* The view's tree when ino is one of its nodes: the request is its.  The
 * inode number first, which costs no call on the way of every request. */
static inline const BoxVfsTree *vfs_tree_of(fuse_req_t req, fuse_ino_t ino)
{
  if (!(ino & BOX_VFS_TREE_INO)) return NULL;
  const BoxVfsTree *t = &V(req)->view_tree;
  return t->name ? t : NULL;
}
static inline Fh *FH(struct fuse_file_info *fi)
{
  return fi ? (Fh *)(uintptr_t)fi->fh : NULL;
}
static inline bool is_pass(const Node *n)
{
  return n->kind == NODE_PASS;
}
/* A node whose metadata and access are decided (not the root chain, not control). */
static inline bool decidable(const Node *n)
{
  if (n->kind == NODE_PASS) return true;
  return n->kind == NODE_RAM && !n->chain && n->special == SPECIAL_NONE;
}
static inline unsigned char dtype_of(mode_t m)
{
  return (unsigned char)((m & S_IFMT) >> 12);
}

/* reply.c: the replies of requests that may carry decisions (-1: not sent) */
int vfs_reply_err(fuse_req_t req, int err);
int vfs_reply_entry(fuse_req_t req, const struct fuse_entry_param *e);
int vfs_reply_attr(fuse_req_t req, const struct stat *st, double timeout);
int vfs_reply_open(fuse_req_t req, const struct fuse_file_info *fi);
int vfs_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
                     const struct fuse_file_info *fi);
int vfs_reply_readlink(fuse_req_t req, const char *link);
/* e's entry, or err; an entry not received drops its kernel reference */
void vfs_reply_entry_or_err(fuse_req_t req, int err, struct fuse_entry_param *e);

/* reach.c */
int vfs_reach(const Caller *c, Node *n); /* lock held */
/* The node ino, referenced for the request (vfs_unpin drops it), or NULL
 * with *err set (ENOENT, or EACCES where the caller may not reach it). */
Node *vfs_pin(BoxVfs *v, fuse_ino_t ino, const Caller *c, int *err);
void vfs_unpin(BoxVfs *v, Node *n);
/* vfs_pin for a request: NULL once the refusal is answered. */
Node *vfs_pin_or_reply(BoxVfs *v, fuse_req_t req, fuse_ino_t ino, const Caller *c);
/* A request's node: the caller placed (*c), the node pinned, or NULL
 * once the refusal is answered. */
Node *vfs_pin_request(BoxVfs *v, fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
                      Caller *c);
char *vfs_path_of(BoxVfs *v, Node *n);        /* vfs_node_path, locking */
void vfs_virt_stat(Node *n, struct stat *st); /* lock held for non-pass nodes */
int vfs_node_stat(BoxVfs *v, Node *n, struct stat *st);
int vfs_pass_node_stat(BoxVfs *v, Node *n, bool locked, struct stat *st);
int vfs_openat2_beneath(int dirfd, const char *rel, int flags);
const char *vfs_pass_rel_buf(Node *n, int *rootfd, char *buf, size_t size);
/* Opens n (flags: O_PATH for a handle to act through, or the open flags of
 * an OPEN) reached again from its root.  Returns the descriptor or -errno. */
int vfs_pass_reach(BoxVfs *v, const Caller *c, Node *n, int flags, const char *action);
int vfs_pass_reach_st(BoxVfs *v, const Caller *c, Node *n, int flags, const char *action,
                      struct stat *out, guint64 *moves);
int vfs_node_fd_get(BoxVfs *v, Node *n, bool locked);
void vfs_node_fd_put(const Node *n, int fd);
guint64 vfs_node_stamp(BoxVfs *v, Node *n);
bool vfs_pass_is_root(BoxVfs *v, Node *dir, guint64 *stamp);

/* Identity of a name in a passthrough directory at two moments. */
typedef struct {
  bool exists;
  dev_t dev;
  ino_t ino;
  mode_t mode;
  nlink_t nlink;
} NameId;
void vfs_name_id(int dirfd, const char *name, NameId *id);
bool vfs_name_same(const NameId *a, const NameId *b);

/* perm.c: mode-bit checks (no default_permissions: the daemon checks) */
bool vfs_caller_in_group(const Caller *c, gid_t g);
bool vfs_perm_ok(const struct stat *st, const Caller *c, int mask);
int vfs_check_perm(BoxVfs *v, Node *n, const Caller *c, int mask);
mode_t vfs_setid_kill(const Caller *c, const struct stat *st);
int vfs_link_source_check(BoxVfs *v, const Caller *c, Node *n);
int vfs_search_check(BoxVfs *v, const Caller *c, Node *n); /* lock held */
struct NewName;
int vfs_sticky_check(BoxVfs *v, const Caller *c, const struct NewName *nn, const char *name);
int vfs_movedir_check(BoxVfs *v, const Caller *c, const struct NewName *nn, const char *name);

/* op_lookup.c */
int vfs_fill_entry(BoxVfs *v, Node *n, struct fuse_entry_param *e); /* lock held */
/* Resolves name in a passthrough directory to its node (created or found).
 * A name whose object already has a node (the kernel's revalidation of a
 * cached entry, mostly) costs one fstatat: the node's own descriptor keeps
 * that (dev, ino) from naming anything else, and the attributes read are
 * the entry's.  Only a new object is opened (O_PATH, never following). */
int vfs_pass_child(BoxVfs *v, Node *dir, int dirfd, const char *name, struct fuse_entry_param *e);
int vfs_pass_child_known(BoxVfs *v, Node *dir, int dirfd, const char *name,
                         struct fuse_entry_param *e, const struct stat *known, guint64 moves);
void vfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void vfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void vfs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);

/* op_attr.c */
void vfs_run_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void vfs_run_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                     struct fuse_file_info *fi);
void vfs_run_access(fuse_req_t req, fuse_ino_t ino, int mask);
void vfs_run_readlink(fuse_req_t req, fuse_ino_t ino);
void vfs_op_statfs(fuse_req_t req, fuse_ino_t ino);
void vfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                     size_t size, int flags);
void vfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void vfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void vfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* op_name.c */
typedef struct NewName {
  Node *dir;
  char *path; /* worker-view path of the new name */
  bool pass;
  int dfd;       /* pass: the directory reached again from its root, or its node's own */
  bool dfd_node; /* dfd is dir->fd (settled: no name on its path changed), not ours to close */
  guint64 moves; /* pass: that walk's stamp (vfs_watch_proven), or 0 */
} NewName;
/* Pins a directory in which the caller may create or remove name. */
int vfs_new_name(BoxVfs *v, const Caller *c, fuse_ino_t parent, const char *name, NewName *nn);
/* vfs_new_name for a request, placing its caller (*c) first. */
int vfs_new_name_request(BoxVfs *v, fuse_req_t req, Caller *c, fuse_ino_t parent, const char *name,
                         NewName *nn);
void vfs_new_name_clear(BoxVfs *v, NewName *nn);
const VfsObjId *vfs_name_obj(const NewName *nn, const char *name, VfsObjId *buf);
bool vfs_daemon_root(void);
/* A new name made for a caller other than root is given to the caller;
 * mode: what it was made with (type and permissions). */
void vfs_chown_new(const Caller *c, int dirfd, const char *name, mode_t mode);
void vfs_run_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void vfs_run_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void vfs_run_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void vfs_run_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void vfs_run_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void vfs_run_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void vfs_run_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                    const char *newname, unsigned int flags);

/* op_file.c */
Fh *vfs_fh_new(FhKind kind, int cmd, Node *n); /* takes over the caller's pin */
void vfs_fh_free(BoxVfs *v, Fh *fh);
bool vfs_writing(BoxVfs *v, const Caller *c, Node *n);
/* fh (a deciding caller's) counted on its node as held, for writing too
 * if writing; on false, no longer (the last one expires the attributes
 * granted: attrs.c) */
void vfs_fh_hold(BoxVfs *v, Fh *fh, bool on, bool writing);
/* lock held: whether there are such handles, all cmd's */
static inline bool vfs_holders_are(const Holders *h, int cmd)
{
  return h->count > 0 && !h->mixed && h->cmd == cmd;
}
Fh *vfs_fh_check(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, int *err);
void vfs_run_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void vfs_run_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                    struct fuse_file_info *fi);
void vfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void vfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                  struct fuse_file_info *fi);
void vfs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void vfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void vfs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void vfs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                      struct fuse_file_info *fi);

/* op_dir.c */
void vfs_run_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void vfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi);
void vfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                        struct fuse_file_info *fi);
void vfs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

/* dispatch.c */
extern const struct fuse_lowlevel_ops vfs_ops;

#endif
