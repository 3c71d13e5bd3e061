/* vfs_internal.h — private to vfs/: the node tree, commands, placement and
 * decisions shared by vfs_core.c and vfs_ops.c. */
#ifndef BOX_VFS_INTERNAL_H
#define BOX_VFS_INTERNAL_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include "vfs/vfs.h"

#define VFS_RAM_MAX_FILE (10u * 1024u * 1024u)
#define VFS_RAM_MAX_INODES 10000u
#define VFS_DENIAL_RING 256u
#define VFS_MAX_DEPTH 4096
#define VFS_RAM_INO_BIT (1ull << 62) /* st_ino of virtual and RAM nodes */

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
  guint opens;         /* open file handles (atomic) */
  /* NODE_PASS */
  int fd;              /* O_PATH|O_NOFOLLOW */
  dev_t rdev_key;      /* real st_dev */
  ino_t rino;          /* real st_ino */
  mode_t ftype;        /* S_IFMT bits */
  char *root_path;     /* set on the pass node of a bound root */
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
  Node *root;
  guint inodes;
  GArray *pidns;           /* guint64 */
  GHashTable *denials;     /* tid -> char* */
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
  GArray *floor_ids;        /* struct { dev_t; ino_t } of floor files */
  BoxVfsDecideFn decide;
  BoxVfsRecordFn record;
  void *decide_data;

  struct fuse_session *se;
  pthread_t thread;
  bool thread_started;

  GMutex lock;
  GHashTable *nodes;        /* fuse_ino_t -> Node* */
  GHashTable *pass_nodes;   /* PassKey -> Node* */
  fuse_ino_t next_ino;
  Node *root, *passdir, *ramdir;
  GPtrArray *commands;      /* Command*, index = id */
  GHashTable *pidns;        /* guint64* -> PidnsEntry* */
};

/* Who sent a request. */
typedef struct {
  bool placed;
  int cmd;
  bool is_tool;
  bool decides;   /* worker of a running command */
  pid_t tid;
  uid_t uid;
  gid_t gid;
} Caller;

typedef enum { FH_PASS_FILE, FH_PASS_DIR, FH_RAM_FILE, FH_RAM_DIR, FH_MYDENIAL, FH_VDIR } FhKind;

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
} Fh;

/* vfs_core.c */
Node *vfs_node_get(BoxVfs *v, fuse_ino_t ino);               /* lock held */
Node *vfs_node_new(BoxVfs *v, NodeKind kind, int cmd);        /* lock held; refs 0 */
void vfs_node_ref(Node *n);
void vfs_node_unref(BoxVfs *v, Node *n);                      /* lock held */
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
char *vfs_child_path(const char *dir, const char *name);
char *vfs_spell(BoxVfs *v, const char *path);
bool vfs_host_backed(BoxVfs *v, const char *path);
/* Asks policy and applies the floor.  Returns 0 or EACCES.  No lock held. */
int vfs_decide(BoxVfs *v, const Caller *c, const char *action, const char *path,
               bool host_backed, const char *operation, bool mutating);
/* A lookup that found nothing: ENOENT, or EACCES (recorded) when policy would
 * neither let the caller read nor write the path. */
int vfs_probe_absent(BoxVfs *v, const Caller *c, const char *path, bool host_backed);
/* Records an enforcement denial (identity) for a deciding caller. */
void vfs_enforce(BoxVfs *v, const Caller *c, const char *action, const char *path, bool host_backed,
                 const char *gate, const char *why);
const char *vfs_denial_text(BoxVfs *v, int cmd, pid_t tid);   /* lock held */

/* vfs_ops.c */
extern const struct fuse_lowlevel_ops vfs_ops;

#endif
