/* node.c — the node tree: nodes by inode number, passthrough nodes by
 * (dev, ino), references, parents, RAM nodes and their sizes, and the
 * deferred close of the descriptors a freed node held. */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <unistd.h>

typedef struct {
  dev_t dev;
  ino_t ino;
} PassKey;

static guint pass_key_hash(gconstpointer p)
{
  const PassKey *k = p;
  guint64 x = (guint64)k->ino * 0x9E3779B97F4A7C15ull ^ (guint64)k->dev;
  return (guint)(x ^ (x >> 32));
}
static gboolean pass_key_equal(gconstpointer a, gconstpointer b)
{
  const PassKey *x = a, *y = b;
  return x->dev == y->dev && x->ino == y->ino;
}

/* ---- nodes ---- */

void vfs_nodes_init(BoxVfs *v)
{
  /* keyed by the inode number itself: no key to allocate and free per node */
  G_STATIC_ASSERT(sizeof(gpointer) >= sizeof(fuse_ino_t));
  v->nodes = g_hash_table_new(g_direct_hash, NULL);
  v->pass_nodes = g_hash_table_new_full(pass_key_hash, pass_key_equal, g_free, NULL);
}

Node *vfs_node_get(BoxVfs *v, fuse_ino_t ino)
{
  if (ino == FUSE_ROOT_ID && v->view_root) return v->view_root;
  return g_hash_table_lookup(v->nodes, (gpointer)(uintptr_t)ino);
}

/* lock held: in the view served at the root (box_vfs_serve_view), a bound
 * root shows its /pass node where the view's RAM tree holds the directory
 * a bind would cover. */
Node *vfs_view_shown(BoxVfs *v, Node *parent, Node *n)
{
  if (!v->view_root || !n || n->kind != NODE_RAM || parent->cmd != v->view_root->cmd) return n;
  g_autofree char *path = vfs_node_path(v, n);
  Node *root = path ? g_hash_table_lookup(v->root_nodes, path) : NULL;
  return root ? root : n;
}

Node *vfs_node_new(BoxVfs *v, NodeKind kind, int cmd)
{
  Node *n = vfs_zalloc(sizeof *n);
  n->ino = v->next_ino++;
  n->kind = kind;
  n->cmd = cmd;
  n->fd = -1;
  n->backing = -1;
  n->uid = 0;
  n->gid = 0;
  now_ts(&n->atime);
  n->mtime = n->ctime = n->atime;
  g_hash_table_insert(v->nodes, (gpointer)(uintptr_t)n->ino, n);
  return n;
}

void vfs_node_ref(Node *n)
{
  n->refs++;
}

/* Per thread, no allocation: libfuse starts and ends loop threads as the
 * load changes, and a full list just closes at once, as without deferral. */
#define CLOSES_MAX (4 * VFS_CLOSES_SLICE)
static __thread int tls_closes[CLOSES_MAX];
static __thread int tls_closes_len;
static __thread int tls_closes_depth;

void vfs_closes_defer(void)
{
  tls_closes_depth++;
}

void vfs_closes_run(void)
{
  g_assert(tls_closes_depth > 0);
  if (--tls_closes_depth > 0) return;
  for (int i = 0; i < tls_closes_len; i++) close(tls_closes[i]);
  tls_closes_len = 0;
}

static void close_node_fd(int fd)
{
  if (tls_closes_depth > 0 && tls_closes_len < CLOSES_MAX)
    tls_closes[tls_closes_len++] = fd;
  else
    close(fd);
}

/* What n holds in memory, and n. */
static void node_memory_free(Node *n)
{
  if (n->children) g_hash_table_unref(n->children);
  if (n->data) g_byte_array_unref(n->data);
  g_free(n->target);
  g_free(n->name);
  g_free(n->root_path);
  g_free(n);
}

static void node_free(BoxVfs *v, Node *n)
{
  g_hash_table_remove(v->nodes, (gpointer)(uintptr_t)n->ino);
  if (n->kind == NODE_PASS) {
    PassKey k = { n->rdev_key, n->rino };
    if (g_hash_table_lookup(v->pass_nodes, &k) == n) g_hash_table_remove(v->pass_nodes, &k);
    vfs_watch_forget(v, n);
    if (n->fd >= 0) {
      close_node_fd(n->fd);
      v->node_fds--;
    }
  }
  if (n->kind == NODE_RAM) {
    Command *cm = (n->cmd >= 0 && (guint)n->cmd < v->commands->len)
                    ? g_ptr_array_index(v->commands, n->cmd)
                    : NULL;
    if (cm && cm->inodes > 0) cm->inodes--;
    if (cm && n->data) cm->bytes -= MIN(cm->bytes, (guint64)n->data->len);
  }
  Node *parent = n->parent;
  node_memory_free(n);
  if (parent) vfs_node_unref(v, parent);
}

void vfs_nodes_free(BoxVfs *v)
{
  if (v->nodes) {
    GHashTableIter it;
    gpointer val;
    g_hash_table_iter_init(&it, v->nodes);
    while (g_hash_table_iter_next(&it, NULL, &val)) {
      Node *n = val;
      if (n->fd >= 0) close(n->fd);
      node_memory_free(n);
    }
    g_hash_table_unref(v->nodes);
  }
  if (v->pass_nodes) g_hash_table_unref(v->pass_nodes);
}

void vfs_node_unref(BoxVfs *v, Node *n)
{
  g_assert(n->refs > 0);
  if (--n->refs == 0) node_free(v, n);
}

void vfs_node_set_parent(BoxVfs *v, Node *n, Node *parent, const char *name)
{
  Node *old = n->parent;
  n->settled = 0; /* its place is proven again by the next walk */
  if (parent) vfs_node_ref(parent);
  n->parent = parent;
  if (!n->name || strcmp(n->name, name) != 0) {
    g_free(n->name);
    n->name = g_strdup(name);
    n->namelen = strlen(name);
  }
  if (old) vfs_node_unref(v, old);
}

Node *vfs_dir_node_new(BoxVfs *v, NodeKind kind, int cmd, Node *parent, const char *name,
                       mode_t perm)
{
  Node *n = vfs_node_new(v, kind, cmd);
  n->mode = S_IFDIR | perm;
  n->nlink = 2;
  n->children = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  if (parent) {
    vfs_node_set_parent(v, n, parent, name);
    g_hash_table_insert(parent->children, g_strdup(name), n);
    parent->nlink++;
  } else {
    n->name = g_strdup(name);
    n->namelen = strlen(name);
  }
  vfs_node_ref(n); /* the link (or permanence) */
  return n;
}

Node *vfs_ram_new(BoxVfs *v, int cmd, Node *dir, const char *name, mode_t mode, uid_t uid,
                  gid_t gid, int *err)
{
  Command *cm = vfs_command(v, cmd);
  if (!cm) {
    *err = ENOENT;
    return NULL;
  }
  if (cm->inodes >= v->ram_max_inodes) {
    *err = ENOSPC;
    return NULL;
  }
  Node *n = vfs_node_new(v, NODE_RAM, cmd);
  cm->inodes++;
  n->mode = mode;
  n->uid = uid;
  n->gid = gid;
  if (dir->mode & S_ISGID) {
    /* BSD group semantics below a setgid directory, as every Linux fs */
    n->gid = dir->gid;
    if (S_ISDIR(mode)) n->mode |= S_ISGID;
  }
  if (S_ISDIR(mode)) {
    n->nlink = 2;
    n->children = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    dir->nlink++;
  } else {
    n->nlink = 1;
    if (S_ISREG(mode)) n->data = g_byte_array_new();
  }
  vfs_node_set_parent(v, n, dir, name);
  g_hash_table_insert(dir->children, g_strdup(name), n);
  vfs_node_ref(n); /* the link */
  now_ts(&dir->mtime);
  dir->ctime = dir->mtime;
  *err = 0;
  return n;
}

void vfs_ram_unlink(BoxVfs *v, Node *dir, const char *name)
{
  Node *n = g_hash_table_lookup(dir->children, name);
  if (!n) return;
  g_hash_table_remove(dir->children, name);
  if (S_ISDIR(n->mode)) {
    dir->nlink--;
    n->nlink = 0;
  } else if (n->nlink > 0) {
    n->nlink--;
  }
  now_ts(&dir->mtime);
  dir->ctime = dir->mtime;
  n->ctime = dir->mtime;
  vfs_node_unref(v, n);
}

bool vfs_ram_reachable(const Caller *c, const Node *n)
{
  return n->cmd == c->cmd || (c->area >= 0 && n->cmd == c->area);
}

int vfs_ram_resize(BoxVfs *v, Node *n, size_t len)
{
  guint64 file_max = v->ram_max_bytes ? v->ram_max_bytes : VFS_RAM_MAX_FILE;
  if (len > file_max || len > G_MAXUINT) return ENOSPC;
  size_t old = n->data->len;
  Command *cm = (n->cmd >= 0 && (guint)n->cmd < v->commands->len)
                  ? g_ptr_array_index(v->commands, n->cmd)
                  : NULL;
  if (cm && len > old && v->ram_max_bytes && cm->bytes + (len - old) > v->ram_max_bytes)
    return ENOSPC;
  g_byte_array_set_size(n->data, (guint)len);
  if (len > old) memset(n->data->data + old, 0, len - old);
  if (cm && len >= old)
    cm->bytes += len - old;
  else if (cm)
    cm->bytes -= MIN(cm->bytes, (guint64)(old - len));
  return 0;
}

Node *vfs_pass_find(BoxVfs *v, dev_t dev, ino_t ino)
{
  PassKey k = { dev, ino };
  return g_hash_table_lookup(v->pass_nodes, &k);
}

Node *vfs_pass_find_obj(BoxVfs *v, const struct stat *st)
{
  PassKey k = { st->st_dev, st->st_ino };
  Node *n = g_hash_table_lookup(v->pass_nodes, &k);
  /* A node with a descriptor holds its object, whose number no other can
   * take while it lives; a node past the descriptor budget holds nothing,
   * and the kernel may keep it (an O_PATH open, a FORGET not read yet)
   * after its object is gone and the number is a new object's.  Of another
   * type it is surely not that object: read as one, a new file was opened
   * as the symlink the node was (O_PATH, EBADF at read) and a new directory
   * refused lookups below it (ENOTDIR).  Retired, it stays the old
   * object's node for the kernel's references, found no more. */
  if (n && n->fd < 0 && !n->root_path && n->ftype != (st->st_mode & S_IFMT)) {
    g_hash_table_remove(v->pass_nodes, &k);
    n = NULL;
  }
  return n;
}

void box_vfs_notify_new_name(BoxVfs *v, dev_t dev, ino_t ino, const char *name)
{
  g_mutex_lock(&v->lock);
  Node *dir = vfs_pass_find(v, dev, ino);
  fuse_ino_t parent = dir ? dir->ino : 0;
  g_mutex_unlock(&v->lock);
  /* a directory the kernel was never told of holds no entry to forget */
  if (parent && v->se) fuse_lowlevel_notify_inval_entry(v->se, parent, name, strlen(name));
}

Node *vfs_pass_insert(BoxVfs *v, Node *parent, const char *name, int fd, const struct stat *st)
{
  Node *n = vfs_pass_find_obj(v, st);
  if (n) {
    if (fd >= 0) close(fd);
    /* Renamed (or another hard link): follow the name we were asked for.
     * Roots keep their chain. */
    if (!n->root_path && (n->parent != parent || strcmp(n->name, name) != 0)) {
      /* never make a node its own ancestor */
      bool cycle = false;
      for (Node *p = parent; p; p = p->parent)
        if (p == n) {
          cycle = true;
          break;
        }
      if (!cycle) vfs_node_set_parent(v, n, parent, name);
    }
    return n;
  }
  /* The kernel keeps as many nodes as it likes: past the budget a node
   * holds no descriptor (each op reaches it by a walk), where holding one
   * would end in EMFILE for every open and lookup of the box. */
  if (fd >= 0 && v->node_fds >= v->node_fd_budget) {
    close(fd);
    fd = -1;
    v->fdless_nodes++;
  }
  if (fd >= 0) v->node_fds++;
  n = vfs_node_new(v, NODE_PASS, -1);
  n->fd = fd;
  n->rdev_key = st->st_dev;
  n->rino = st->st_ino;
  n->ftype = st->st_mode & S_IFMT;
  vfs_node_set_parent(v, n, parent, name);
  PassKey *k = g_new(PassKey, 1);
  k->dev = st->st_dev;
  k->ino = st->st_ino;
  g_hash_table_insert(v->pass_nodes, k, n);
  vfs_watch_dir(v, n);
  return n;
}

void vfs_node_forget(BoxVfs *v, fuse_ino_t ino, uint64_t nlookup)
{
  Node *n = vfs_node_get(v, ino);
  if (!n) return;
  if (nlookup > n->nlookup) nlookup = n->nlookup;
  n->nlookup -= nlookup;
  for (uint64_t i = 0; i < nlookup; i++) vfs_node_unref(v, n);
}
