/* vfs_core.c — lifecycle, the node tree, commands, placement and decisions.
 * The FUSE request handlers are in vfs_ops.c. */
#include "vfs/vfs_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/nsfs.h>

G_DEFINE_QUARK(box-vfs-error-quark, box_vfs_error)

static Command *command_create(BoxVfs *v, const char *root_name);

/* ---- decisions without the policy library (first cut builds) ---- */
#ifndef BOX_VFS_HAVE_POLICY
static BoxDecision *local_enforcement(const char *action, const char *resource, const char *gate,
                                      const char *text) {
  BoxDecision *d = g_new0(BoxDecision, 1);
  d->verdict = BOX_VERDICT_DENY;
  d->cause = BOX_CAUSE_ENFORCEMENT;
  d->action = g_strdup(action);
  d->resource = g_strdup(resource);
  d->rule = g_strdup_printf("enforcement:%s", gate);
  d->message = g_strdup(text);
  d->reason = g_strdup(text);
  d->determining_ids = g_ptr_array_new_with_free_func(g_free);
  return d;
}
static void local_free(BoxDecision *d) {
  if (!d) return;
  g_free(d->action);
  g_free(d->resource);
  g_free(d->rule);
  g_free(d->description);
  g_free(d->message);
  g_free(d->reason);
  if (d->determining_ids) g_ptr_array_unref(d->determining_ids);
  g_free(d);
}
#define decision_enforcement local_enforcement
#define decision_free local_free
#else
#define decision_enforcement box_decision_new_enforcement
#define decision_free box_decision_free
#endif

typedef struct {
  dev_t dev;
  ino_t ino;
} PassKey;

static guint pass_key_hash(gconstpointer p) {
  const PassKey *k = p;
  guint64 x = (guint64)k->ino * 0x9E3779B97F4A7C15ull ^ (guint64)k->dev;
  return (guint)(x ^ (x >> 32));
}
static gboolean pass_key_equal(gconstpointer a, gconstpointer b) {
  const PassKey *x = a, *y = b;
  return x->dev == y->dev && x->ino == y->ino;
}

static void now_ts(struct timespec *ts) { clock_gettime(CLOCK_REALTIME, ts); }

/* ---- nodes ---- */

Node *vfs_node_get(BoxVfs *v, fuse_ino_t ino) {
  return g_hash_table_lookup(v->nodes, &(guint64){ino});
}

Node *vfs_node_new(BoxVfs *v, NodeKind kind, int cmd) {
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
  guint64 *key = g_new(guint64, 1);
  *key = n->ino;
  g_hash_table_insert(v->nodes, key, n);
  return n;
}

void vfs_node_ref(Node *n) { n->refs++; }

/* Per thread, no allocation: libfuse starts and ends loop threads as the
 * load changes, and a full list just closes at once, as without deferral. */
#define CLOSES_MAX (4 * VFS_CLOSES_SLICE)
static __thread int tls_closes[CLOSES_MAX];
static __thread int tls_closes_len;
static __thread int tls_closes_depth;

void vfs_closes_defer(void) { tls_closes_depth++; }

void vfs_closes_run(void) {
  g_assert(tls_closes_depth > 0);
  if (--tls_closes_depth > 0) return;
  for (int i = 0; i < tls_closes_len; i++) close(tls_closes[i]);
  tls_closes_len = 0;
}

static void close_node_fd(int fd) {
  if (tls_closes_depth > 0 && tls_closes_len < CLOSES_MAX) tls_closes[tls_closes_len++] = fd;
  else close(fd);
}

static void node_free(BoxVfs *v, Node *n) {
  g_hash_table_remove(v->nodes, &(guint64){n->ino});
  if (n->kind == NODE_PASS) {
    PassKey k = {n->rdev_key, n->rino};
    if (g_hash_table_lookup(v->pass_nodes, &k) == n) g_hash_table_remove(v->pass_nodes, &k);
    vfs_watch_forget(v, n);
    if (n->fd >= 0) {
      close_node_fd(n->fd);
      v->node_fds--;
    }
  }
  if (n->kind == NODE_RAM) {
    Command *cm = (n->cmd >= 0 && (guint)n->cmd < v->commands->len)
                      ? g_ptr_array_index(v->commands, n->cmd) : NULL;
    if (cm && cm->inodes > 0) cm->inodes--;
    if (cm && n->data) cm->bytes -= MIN(cm->bytes, (guint64)n->data->len);
  }
  Node *parent = n->parent;
  if (n->children) g_hash_table_unref(n->children);
  if (n->data) g_byte_array_unref(n->data);
  g_free(n->target);
  g_free(n->name);
  g_free(n->root_path);
  g_free(n);
  if (parent) vfs_node_unref(v, parent);
}

void vfs_node_unref(BoxVfs *v, Node *n) {
  g_assert(n->refs > 0);
  if (--n->refs == 0) node_free(v, n);
}

void vfs_node_set_parent(BoxVfs *v, Node *n, Node *parent, const char *name) {
  Node *old = n->parent;
  n->settled = 0; /* its place is proven again by the next walk */
  if (parent) vfs_node_ref(parent);
  n->parent = parent;
  if (!n->name || strcmp(n->name, name) != 0) {
    g_free(n->name);
    n->name = g_strdup(name);
  }
  if (old) vfs_node_unref(v, old);
}

static Node *dir_node_new(BoxVfs *v, NodeKind kind, int cmd, Node *parent, const char *name,
                          mode_t perm) {
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
  }
  vfs_node_ref(n); /* the link (or permanence) */
  return n;
}

Node *vfs_ram_new(BoxVfs *v, int cmd, Node *dir, const char *name, mode_t mode, uid_t uid,
                  gid_t gid, int *err) {
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

void vfs_ram_unlink(BoxVfs *v, Node *dir, const char *name) {
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

bool vfs_ram_reachable(const Caller *c, const Node *n) {
  return n->cmd == c->cmd || (c->area >= 0 && n->cmd == c->area);
}

int vfs_ram_resize(BoxVfs *v, Node *n, size_t len) {
  guint64 file_max = v->ram_max_bytes ? v->ram_max_bytes : VFS_RAM_MAX_FILE;
  if (len > file_max || len > G_MAXUINT) return ENOSPC;
  size_t old = n->data->len;
  Command *cm = (n->cmd >= 0 && (guint)n->cmd < v->commands->len)
                    ? g_ptr_array_index(v->commands, n->cmd) : NULL;
  if (cm && len > old && v->ram_max_bytes && cm->bytes + (len - old) > v->ram_max_bytes)
    return ENOSPC;
  g_byte_array_set_size(n->data, (guint)len);
  if (len > old) memset(n->data->data + old, 0, len - old);
  if (cm && len >= old) cm->bytes += len - old;
  else if (cm) cm->bytes -= MIN(cm->bytes, (guint64)(old - len));
  return 0;
}

Node *vfs_pass_find(BoxVfs *v, dev_t dev, ino_t ino) {
  PassKey k = {dev, ino};
  return g_hash_table_lookup(v->pass_nodes, &k);
}

Node *vfs_pass_insert(BoxVfs *v, Node *parent, const char *name, int fd, const struct stat *st) {
  Node *n = vfs_pass_find(v, st->st_dev, st->st_ino);
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

/* ---- paths ---- */

bool vfs_concat(char *buf, size_t size, const char *const *parts, size_t n) {
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(parts[i]);
    if (len >= size - at) return false;
    memcpy(buf + at, parts[i], len);
    at += len;
  }
  buf[at] = '\0';
  return true;
}

char *vfs_child_path(const char *dir, const char *name) {
  if (strcmp(dir, "/") == 0) return g_strconcat("/", name, NULL);
  return g_strconcat(dir, "/", name, NULL);
}

/* The walk measures the path first and then writes it right to left into
 * one allocation of its size: this runs for every decided operation. */
char *vfs_node_path(BoxVfs *v, Node *n) {
  (void)v;
  Node *p = n;
  int depth = 0;
  bool ok = false;
  size_t total = 0;
  while (p && depth < VFS_MAX_DEPTH) {
    if (p->kind == NODE_PASSDIR || p->special == SPECIAL_CMDROOT) {
      ok = true;
      break;
    }
    if (p->kind == NODE_ROOT || p->kind == NODE_RAMDIR) break;
    total += strlen(p->name) + 1;
    p = p->parent;
    depth++;
  }
  if (!ok && n->kind == NODE_RAM && !p) ok = true; /* orphan: best effort */
  if (!ok) return NULL;
  if (total == 0) return g_strdup("/");
  char *out = g_malloc(total + 1);
  size_t pos = total;
  out[pos] = '\0';
  for (Node *q = n; q != p; q = q->parent) {
    size_t len = strlen(q->name);
    pos -= len;
    memcpy(out + pos, q->name, len);
    out[--pos] = '/';
  }
  return out;
}

static bool path_within(const char *path, const char *base) {
  size_t n = strlen(base);
  if (n == 1 && base[0] == '/') return path[0] == '/';
  return strncmp(path, base, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

char *vfs_spell(BoxVfs *v, const char *path) {
  const char *home = v->operator_home;
  if (home && home[0] == '/' && home[1] != '\0' && path_within(path, home)) {
    size_t n = strlen(home);
    if (path[n] == '\0') return g_strdup("~");
    return g_strconcat("~", path + n, NULL);
  }
  return g_strdup(path);
}

bool vfs_host_backed(BoxVfs *v, const char *path) {
  for (char **r = v->roots; r && *r; r++)
    if (path_within(path, *r)) return true;
  return false;
}

/* ---- the reach floor (spec/runtime.md §3.3) ---- */

/* What an identity the floor guards is.  The box directory, what it held at
 * start and the authority files are never opened; the directories that hold
 * any of them, up to their bound root, are never moved, removed, replaced or
 * changed, so that their paths, which the floor compares too, stay what
 * they were at start.  Identity, not path text, is what holds against a
 * renamed ancestor or a hard link made before the run. */
typedef enum { GUARD_AUTHORITY, GUARD_TRUSTED, GUARD_HOLDER } GuardKind;

typedef struct {
  dev_t dev;
  ino_t ino;
  GuardKind kind;
} FileId;

#define VFS_GUARD_WALK_MAX 1024 /* entries of a box directory recorded at start */
#define VFS_GUARD_WALK_DEPTH 8

static const char *const floor_authority =
    "resolves to an authority source that this run loaded, which no policy may open or change";
static const char *const floor_trusted = "resolves into trusted Box state, which no policy may open";
static const char *const floor_holder = "holds trusted Box state, which no policy may move or change";

static guint file_id_hash(gconstpointer p) {
  const FileId *id = p;
  guint64 h = ((guint64)id->dev * 0x9e3779b97f4a7c15ull) ^ (guint64)id->ino;
  return (guint)(h ^ (h >> 32));
}

static gboolean file_id_equal(gconstpointer a, gconstpointer b) {
  const FileId *x = a, *y = b;
  return x->dev == y->dev && x->ino == y->ino;
}

static void guard_add(BoxVfs *v, const struct stat *st, GuardKind kind) {
  FileId key = {st->st_dev, st->st_ino, kind};
  FileId *id = g_hash_table_lookup(v->floor_ids, &key);
  if (id) {
    if (kind < id->kind) id->kind = kind; /* the stronger guard wins */
    return;
  }
  id = g_memdup2(&key, sizeof key);
  g_hash_table_add(v->floor_ids, id);
}

/* Every directory above path, up to and with the bound root that holds it:
 * a rename of any of them would move path. */
static void guard_holders(BoxVfs *v, const char *path) {
  const char *root = NULL;
  for (char **r = v->roots; *r; r++)
    if (path_within(path, *r) && (!root || strlen(*r) > strlen(root))) root = *r;
  if (!root || strcmp(path, root) == 0) return; /* the mount reaches nothing above it */
  char *dir = g_path_get_dirname(path);
  for (;;) {
    struct stat st;
    if (lstat(dir, &st) == 0) guard_add(v, &st, GUARD_HOLDER);
    if (strcmp(dir, root) == 0 || !path_within(dir, root)) break;
    char *up = g_path_get_dirname(dir);
    g_free(dir);
    dir = up;
  }
  g_free(dir);
}

/* What a directory holds, links not followed: a hard link to one of these
 * found elsewhere is the same object.  Takes dfd. */
static void guard_tree(BoxVfs *v, int dfd, int depth, guint *budget) {
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return;
  }
  struct dirent *e;
  while (*budget > 0 && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    guard_add(v, &st, GUARD_TRUSTED);
    (*budget)--;
    if (S_ISDIR(st.st_mode) && depth < VFS_GUARD_WALK_DEPTH) {
      int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) guard_tree(v, sub, depth + 1, budget);
    }
  }
  closedir(d);
}

/* The floor's paths as the mount spells them (canonical: a node's path is
 * its real one), and the identities of the objects they name now. */
static void guards_record(BoxVfs *v) {
  char **lists[] = {v->floor_files, v->floor_trees};
  for (int l = 0; l < 2; l++)
    for (char **p = lists[l]; *p; p++) {
      char *canon = realpath(*p, NULL);
      if (canon) {
        g_free(*p);
        *p = g_strdup(canon);
        free(canon);
      }
    }
  v->floor_ids = g_hash_table_new_full(file_id_hash, file_id_equal, g_free, NULL);
  for (char **f = v->floor_files; *f; f++) {
    struct stat st;
    if (stat(*f, &st) == 0) guard_add(v, &st, GUARD_AUTHORITY);
    guard_holders(v, *f);
  }
  for (char **t = v->floor_trees; *t; t++) {
    struct stat st;
    if (lstat(*t, &st) != 0) continue;
    guard_add(v, &st, GUARD_TRUSTED);
    guard_holders(v, *t);
    guint budget = VFS_GUARD_WALK_MAX;
    int dfd = open(*t, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) guard_tree(v, dfd, 0, &budget);
  }
}

/* obj: the object's identity when the caller has it, else it is read from
 * the path (a walk of the host path on every permitted operation). */
static const char *floor_reason_obj(BoxVfs *v, const char *path, bool mutating, const VfsObjId *obj) {
  for (char **f = v->floor_files; f && *f; f++) {
    if (strcmp(path, *f) == 0) return floor_authority;
    if (mutating && path_within(*f, path)) return floor_authority; /* an ancestor directory */
  }
  for (char **t = v->floor_trees; t && *t; t++) {
    if (path_within(path, *t)) return floor_trusted;
    if (mutating && path_within(*t, path)) return floor_holder; /* an ancestor directory */
  }
  if (g_hash_table_size(v->floor_ids) > 0) {
    struct stat st;
    FileId key = {0, 0, GUARD_HOLDER};
    if (obj) key = (FileId){obj->dev, obj->ino, GUARD_HOLDER};
    else if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
      key = (FileId){st.st_dev, st.st_ino, GUARD_HOLDER};
    const FileId *id = key.ino ? g_hash_table_lookup(v->floor_ids, &key) : NULL;
    if (id && id->kind == GUARD_AUTHORITY) return floor_authority;
    if (id && id->kind == GUARD_TRUSTED) return floor_trusted;
    if (id && mutating) return floor_holder;
  }
  return NULL;
}

/* ---- commands ---- */

Command *vfs_command(BoxVfs *v, int id) {
  if (id < 0 || (guint)id >= v->commands->len) return NULL;
  Command *c = g_ptr_array_index(v->commands, id);
  return c->ended ? NULL : c;
}

static void store_denial(BoxVfs *v, int cmd, pid_t tid, const char *text) {
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, cmd);
  if (c) {
    gpointer key = GINT_TO_POINTER(tid);
    if (!g_hash_table_contains(c->denials, key)) {
      g_queue_push_tail(c->denial_order, key);
      while (g_queue_get_length(c->denial_order) > VFS_DENIAL_RING)
        g_hash_table_remove(c->denials, g_queue_pop_head(c->denial_order));
    }
    g_hash_table_insert(c->denials, key, g_strdup(text ? text : ""));
  }
  g_mutex_unlock(&v->lock);
}

const char *vfs_denial_text(BoxVfs *v, int cmd, pid_t tid) {
  Command *c = vfs_command(v, cmd);
  if (!c) return NULL;
  return g_hash_table_lookup(c->denials, GINT_TO_POINTER(tid));
}

static int finish_decision(BoxVfs *v, const Caller *c, const char *action, json_object *input,
                           BoxDecision *d) {
  if (v->record) v->record(v->decide_data, c->cmd, action, input, d);
  int rc = 0;
  if (d->verdict != BOX_VERDICT_PERMIT) {
    store_denial(v, c->cmd, c->tid, d->message ? d->message : d->reason);
    rc = EACCES;
  }
  decision_free(d);
  return rc;
}

/* ---- the history raiser ---- */

typedef struct {
  BoxVfs *v;
  int cmd;
  char *action;
  json_object *input;
} Raised;

static __thread GArray *tls_raised; /* Raised: permits awaiting their outcome */
static __thread BoxVfs *tls_batching; /* this thread's request has a history batch open */

/* Every decision is answered through vfs_outcome_flush (the R_* replies),
 * which closes the batch on the same thread. */
static void history_batch_open(BoxVfs *v) {
  if (!v->history_batch || tls_batching) return;
  v->history_batch(v->decide_data, true);
  tls_batching = v;
}

static void history_batch_close(void) {
  BoxVfs *v = tls_batching;
  if (!v) return;
  tls_batching = NULL;
  v->history_batch(v->decide_data, false);
}

static void outcome_push(BoxVfs *v, int cmd, const char *action, json_object *input) {
  if (!tls_raised) tls_raised = g_array_new(FALSE, FALSE, sizeof(Raised));
  Raised r = {v, cmd, g_strdup(action), json_object_get(input)};
  g_array_append_val(tls_raised, r);
}

static void fs_input_done(json_object *in, bool shared);

void vfs_outcome_flush(const char *result) {
  for (guint i = 0; tls_raised && i < tls_raised->len; i++) {
    Raised *r = &g_array_index(tls_raised, Raised, i);
    r->v->outcome(r->v->decide_data, r->cmd, r->action, r->input, result);
    g_free(r->action);
    /* the last reference (neither policy nor the log keeps an input): the
     * thread's spare again */
    fs_input_done(r->input, false);
  }
  if (tls_raised) g_array_set_size(tls_raised, 0);
  history_batch_close();
}

/* A decided operation's input, {"path": spelled, "operation": operation}.
 * Made for every decided operation, so each thread keeps one and fills it
 * again: json-c builds an object in five allocations, three of them callocs,
 * which glibc serves without the thread's cache.  The keys are literals,
 * added once each (no copy of a key, no search for one already there). */
typedef struct {
  json_object *in, *path, *operation; /* the spare input and its two values */
} SpareInput;

static void spare_input_free(gpointer p) {
  SpareInput *s = p;
  if (s->in) json_object_put(s->in);
  g_free(s);
}
static GPrivate spare_input = G_PRIVATE_INIT(spare_input_free);

static json_object *fs_input(const char *spelled, const char *operation) {
  SpareInput *s = g_private_get(&spare_input);
  if (s && s->in) {
    json_object *in = s->in;
    s->in = NULL;
    /* a policy callback that changed it would have added a key: made anew */
    if (json_object_object_length(in) == 2 && json_object_set_string(s->path, spelled) &&
        json_object_set_string(s->operation, operation))
      return in;
    json_object_put(in);
  }
  json_object *in = json_object_new_object();
  const unsigned how = JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY;
  json_object_object_add_ex(in, "path", json_object_new_string(spelled), how);
  json_object_object_add_ex(in, "operation", json_object_new_string(operation), how);
  return in;
}

/* The decision on in is made; shared: another reference to it was taken
 * (the outcome raiser's), so it is not this thread's to fill again. */
static void fs_input_done(json_object *in, bool shared) {
  SpareInput *s = g_private_get(&spare_input);
  if (!s) {
    s = g_new0(SpareInput, 1);
    g_private_set(&spare_input, s);
  }
  /* its two values found by walking its two keys (no hashing), as they
   * are now: a callback may have replaced one */
  json_object *path = NULL, *operation = NULL;
  int keys = 0;
  if (!shared && !s->in) {
    json_object_object_foreach(in, key, val) {
      keys++;
      if (strcmp(key, "path") == 0) path = val;
      else if (strcmp(key, "operation") == 0) operation = val;
    }
  }
  if (keys != 2 || !json_object_is_type(path, json_type_string) || !json_object_is_type(operation, json_type_string)) {
    json_object_put(in);
    return;
  }
  s->in = in;
  s->path = path;
  s->operation = operation;
}

/* ---- the decision cache (cache_decisions) ---- */

/* A cached verdict: its key, then the decision, in one allocation, since
 * one is stored for almost every decided operation.  The table's key owns
 * the block (a value is never freed on its own). */
typedef BoxPackedDecision Cached;

/* A verdict's key is an action, an operation and a path, some 60 bytes or
 * more, hashed on every decided operation: eight bytes a step (g_str_hash
 * takes one). */
static guint verdict_hash(gconstpointer key) {
  const char *s = key;
  size_t n = strlen(s);
  guint64 h = 0x9e3779b97f4a7c15ull ^ n;
  for (; n >= 8; n -= 8, s += 8) {
    guint64 w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  guint64 w = 0;
  memcpy(&w, s, n);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  return (guint)(h ^ (h >> 29));
}

static GHashTable *verdicts_new(void) {
  return g_hash_table_new_full(verdict_hash, g_str_equal, g_free, NULL);
}

/* Policy's verdict on (action, input), from the command's cache when the
 * same request was decided before.  A verdict is a function of the request
 * alone only for a policy that reads no history (the caller vouches for
 * that with cache_decisions), so reusing it changes no later verdict. */
static BoxDecision *ask_how(BoxVfs *v, int cmd, const char *action, json_object *input,
                            const char *spelled, const char *operation, bool quiet) {
  if (!v->cache_decisions) return v->decide(v->decide_data, cmd, action, input);
  /* the key on the stack (copied only into the cache): a hit allocates nothing */
  char buf[PATH_MAX + 64];
  const char *parts[] = {action, "\x1f", operation, "\x1f", spelled};
  char *long_key = vfs_concat(buf, sizeof buf, parts, G_N_ELEMENTS(parts))
                       ? NULL
                       : g_strconcat(action, "\x1f", operation, "\x1f", spelled, NULL);
  const char *key = long_key ? long_key : buf;
  BoxDecision *hit = NULL;
  g_mutex_lock(&v->lock);
  Command *cm = vfs_command(v, cmd);
  Cached *c = cm ? g_hash_table_lookup(cm->verdicts, key) : NULL;
  if (c) hit = box_decision_unpack(c);
  g_mutex_unlock(&v->lock);
  if (hit) {
    __atomic_add_fetch(&v->cache_hits, 1, __ATOMIC_RELAXED);
    if (v->note && !quiet) v->note(v->decide_data, cmd, action, input, hit);
    g_free(long_key);
    return hit;
  }
  BoxDecision *d = (quiet ? v->decide_quiet : v->decide)(v->decide_data, cmd, action, input);
  if (!d) {
    g_free(long_key);
    return NULL;
  }
  size_t klen = strlen(key) + 1;
  void *stored;
  Cached *keep = box_decision_pack_after(d, klen, &stored);
  memcpy(stored, key, klen);
  g_free(long_key);
  g_mutex_lock(&v->lock);
  cm = vfs_command(v, cmd);
  if (cm) {
    if (g_hash_table_size(cm->verdicts) >= VFS_VERDICTS_MAX) g_hash_table_remove_all(cm->verdicts);
    /* replace, not insert: the key kept must be the one in the new block */
    g_hash_table_replace(cm->verdicts, stored, keep);
    stored = NULL;
  }
  g_mutex_unlock(&v->lock);
  g_free(stored);
  return d;
}

static BoxDecision *ask(BoxVfs *v, int cmd, const char *action, json_object *input,
                        const char *spelled, const char *operation) {
  return ask_how(v, cmd, action, input, spelled, operation, false);
}

bool vfs_verdict_cached_permit(BoxVfs *v, int cmd, const char *action, const char *operation,
                               const char *path, bool host_backed) {
  if (!v->cache_decisions || !path) return false;
  /* the key in a buffer on the stack: a listing asks this for every entry */
  char buf[PATH_MAX + 64];
  const char *spelled = path;
  const char *home = v->operator_home;
  bool tilde = false;
  if (host_backed && home && home[0] == '/' && home[1] != '\0' && path_within(path, home)) {
    spelled = path + strlen(home);
    tilde = true;
  }
  const char *parts[] = {action, "\x1f", operation, "\x1f", tilde ? "~" : "", spelled};
  if (!vfs_concat(buf, sizeof buf, parts, G_N_ELEMENTS(parts))) return false;
  g_mutex_lock(&v->lock);
  Command *cm = vfs_command(v, cmd);
  Cached *d = cm ? g_hash_table_lookup(cm->verdicts, buf) : NULL;
  bool permit = d && d->verdict == BOX_VERDICT_PERMIT;
  g_mutex_unlock(&v->lock);
  return permit;
}

bool vfs_floor_refuses(BoxVfs *v, const char *path, const VfsObjId *obj) {
  return floor_reason_obj(v, path, false, obj) != NULL;
}

bool box_vfs_floor_refuses(BoxVfs *v, const char *path, dev_t dev, ino_t ino) {
  return floor_reason_obj(v, path, false, &(VfsObjId){dev, ino}) != NULL;
}

const char *vfs_floor_reason(BoxVfs *v, const char *path, const VfsObjId *obj) {
  return floor_reason_obj(v, path, true, obj);
}

void box_vfs_invalidate_decisions(BoxVfs *v) {
  g_mutex_lock(&v->lock);
  for (guint i = 0; i < v->commands->len; i++) {
    Command *cm = g_ptr_array_index(v->commands, i);
    if (cm->verdicts) g_hash_table_remove_all(cm->verdicts);
  }
  g_hash_table_remove_all(v->beneath_seen);
  g_mutex_unlock(&v->lock);
  /* the names kept long were refused or not by the old policy's verdicts */
  vfs_watch_expire_all(v);
}

void box_vfs_debug_readdirplus(BoxVfs *v, guint64 *shown, guint64 *hidden) {
  *shown = __atomic_load_n(&v->plus_shown, __ATOMIC_RELAXED);
  *hidden = __atomic_load_n(&v->plus_hidden, __ATOMIC_RELAXED);
}

guint64 box_vfs_debug_reach_walks(BoxVfs *v) {
  return __atomic_load_n(&v->reach_walks, __ATOMIC_RELAXED);
}

guint64 box_vfs_debug_pass_lookups(BoxVfs *v) {
  return __atomic_load_n(&v->pass_lookups, __ATOMIC_RELAXED);
}

guint64 box_vfs_debug_cache_hits(BoxVfs *v) {
  return __atomic_load_n(&v->cache_hits, __ATOMIC_RELAXED);
}

int vfs_decide(BoxVfs *v, const Caller *c, const char *action, const char *path, bool host_backed,
               const char *operation, bool mutating) {
  return vfs_decide_obj(v, c, action, path, host_backed, operation, mutating, NULL);
}

/* A tool's (or the agent's) own call: its bind views bound it and it raises
 * no decision, but a view holds Box state only as binds from the host, so
 * what reaches Box state through the mount (a hard link made before the
 * run, under a writable grant) is refused all the same, as the Shell's
 * would be. */
static int tool_floor(BoxVfs *v, const Caller *c, const char *path, bool host_backed, bool mutating,
                      const VfsObjId *obj) {
  if (!c->placed || !c->is_tool || !host_backed || !path) return 0;
  return floor_reason_obj(v, path, mutating, obj) ? EACCES : 0;
}

int vfs_decide_obj(BoxVfs *v, const Caller *c, const char *action, const char *path, bool host_backed,
                   const char *operation, bool mutating, const VfsObjId *obj) {
  if (!c->decides || !v->decide) return tool_floor(v, c, path, host_backed, mutating, obj);
  if (!path) path = "/";
  char *spelled = host_backed ? vfs_spell(v, path) : g_strdup(path);
  json_object *input = fs_input(spelled, operation);
  Job *job = vfs_job_current();
  if (job && !vfs_job_decide_begin(job)) {
    /* interrupted before policy was asked: nothing decided, nothing logged */
    fs_input_done(input, false);
    g_free(spelled);
    return EINTR;
  }
  history_batch_open(v);
  BoxDecision *d = ask(v, c->cmd, action, input, spelled, operation);
  bool live = !job || vfs_job_decide_end(job);
  if (!d) {
    char *text = g_strdup_printf("%s: no decision could be made", spelled);
    d = decision_enforcement(action, spelled, "internal", text);
    g_free(text);
  } else if (d->verdict == BOX_VERDICT_PERMIT && host_backed) {
    const char *why = floor_reason_obj(v, path, mutating, obj);
    if (why) {
      char *text = g_strdup_printf("%s: %s", spelled, why);
      decision_free(d);
      d = decision_enforcement(action, spelled, "reach-floor", text);
      g_free(text);
    }
  }
  /* Cancelled while policy decided: the decision is logged all the same,
   * the request was answered EINTR and nothing is done. */
  int rc = finish_decision(v, c, action, input, d);
  bool raised = rc == 0 && v->outcome;
  if (raised) outcome_push(v, c->cmd, action, input);
  if (!live) rc = EINTR;
  fs_input_done(input, raised);
  g_free(spelled);
  return rc;
}

/* Whether a walk may have to go through the directory path (spelled):
 * policy may permit something below it, or it is a bound root or above
 * one (a bind sits on it, and a lookup the kernel makes again and sees
 * fail detaches every mount on the name).  A RAM directory, the command's
 * own, is always walked. */
static bool walk_needs(BoxVfs *v, const char *path, const char *spelled, bool host_backed) {
  if (!host_backed || !v->beneath) return true;
  /* above the home, paths below are spelled ~/...: policy cannot tell */
  if (v->operator_home && path_within(v->operator_home, path)) return true;
  for (char **r = v->roots; *r; r++)
    if (path_within(*r, path)) return true;
  g_mutex_lock(&v->lock);
  gpointer seen = g_hash_table_lookup(v->beneath_seen, spelled);
  g_mutex_unlock(&v->lock);
  if (seen) return GPOINTER_TO_INT(seen) == 2;
  bool may = v->beneath(v->decide_data, spelled);
  g_mutex_lock(&v->lock);
  if (g_hash_table_size(v->beneath_seen) >= VFS_VERDICTS_MAX) g_hash_table_remove_all(v->beneath_seen);
  g_hash_table_replace(v->beneath_seen, g_strdup(spelled), GINT_TO_POINTER(may ? 2 : 1));
  g_mutex_unlock(&v->lock);
  return may;
}

typedef enum {
  REFUSE_NEVER,  /* only *may_read is asked */
  REFUSE,        /* a name acted on */
  REFUSE_UNWALKED, /* a directory: refused unless a walk may need it (walk_needs) */
} Refuse;

/* The two questions a deciding caller's lookup asks of a name, before the
 * walk goes on: may the command read the path (*may_read), or else write
 * it?  0 if either; else EACCES, the read denial recorded, the same whether
 * the name exists or not (with REFUSE_NEVER, only the first is asked, and
 * the answer is 0).  A policy that reads no history answers them
 * without their ::request events: a walk the command may make is no request
 * (nothing is logged either); only a refusal becomes one. */
static int probe(BoxVfs *v, const Caller *c, const char *path, bool host_backed, bool quiet, Refuse refuse,
                 bool *may_read) {
  char *spelled = host_backed ? vfs_spell(v, path) : g_strdup(path);
  json_object *input = fs_input(spelled, "read_metadata");
  history_batch_open(v);
  BoxDecision *d = ask_how(v, c->cmd, "fs:read", input, spelled, "read_metadata", quiet);
  int rc = 0;
  *may_read = d && d->verdict == BOX_VERDICT_PERMIT;
  if (!*may_read && refuse != REFUSE_NEVER) {
    json_object *win = fs_input(spelled, "write_content");
    BoxDecision *w = ask_how(v, c->cmd, "fs:write", win, spelled, "write_content", quiet);
    bool may_write = w && w->verdict == BOX_VERDICT_PERMIT;
    if (w) decision_free(w);
    fs_input_done(win, false);
    /* a directory some walk may need is shown (its type only) */
    bool walked = !may_write && refuse == REFUSE_UNWALKED && walk_needs(v, path, spelled, host_backed);
    if (!may_write && !walked) {
      if (!d) {
        char *text = g_strdup_printf("%s: no decision could be made", spelled);
        d = decision_enforcement("fs:read", spelled, "internal", text);
        g_free(text);
      } else if (quiet && v->note) {
        v->note(v->decide_data, c->cmd, "fs:read", input, d);
      }
      rc = finish_decision(v, c, "fs:read", input, d);
      d = NULL;
    }
  }
  if (d) decision_free(d);
  fs_input_done(input, false);
  g_free(spelled);
  return rc;
}

bool box_vfs_lookup_refuses(BoxVfs *v, int cmd, const char *path) {
  if (!v->decide || !v->cache_decisions || !v->decide_quiet || !v->beneath || !path) return false;
  char *spelled = vfs_spell(v, path);
  bool refused = false;
  const char *ops[][2] = {{"fs:read", "read_metadata"}, {"fs:write", "write_content"}};
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
    json_object *input = fs_input(spelled, ops[i][1]);
    BoxDecision *d = ask_how(v, cmd, ops[i][0], input, spelled, ops[i][1], true);
    refused = d && d->verdict != BOX_VERDICT_PERMIT;
    if (d) decision_free(d);
    fs_input_done(input, false);
    if (!refused) break;
  }
  if (refused) refused = !walk_needs(v, path, spelled, true);
  g_free(spelled);
  return refused;
}

/* A name the walk did not find: ENOENT, or EACCES as probe says. */
int vfs_probe_absent(BoxVfs *v, const Caller *c, const char *path, bool host_backed) {
  if (!c->decides || !v->decide || !path) return ENOENT;
  bool quiet = v->cache_decisions && v->decide_quiet, may_read;
  int rc = probe(v, c, path, host_backed, quiet, REFUSE, &may_read);
  return rc ? rc : ENOENT;
}

int vfs_probe_present(BoxVfs *v, const Caller *c, const char *path, bool host_backed, bool walked,
                      bool *may_read) {
  *may_read = true;
  if (!c->decides || !v->decide || !path) return 0;
  /* Only where the questions are quiet and their verdicts cached: with a
   * policy that reads the history each would be a request of its own.
   * Unasked, the read is not known to be permitted: no attributes. */
  if (!v->cache_decisions || !v->decide_quiet) {
    *may_read = false;
    return 0;
  }
  /* the common case, a read permit in the cache, without building a request */
  if (vfs_verdict_cached_permit(v, c->cmd, "fs:read", "read_metadata", path, host_backed)) return 0;
  /* a directory is walked through, not acted on: refused only where no
   * walk to a permitted path goes through it */
  return probe(v, c, path, host_backed, true, walked ? REFUSE_UNWALKED : REFUSE, may_read);
}

void vfs_enforce(BoxVfs *v, const Caller *c, const char *action, const char *path, bool host_backed,
                 const char *gate, const char *why) {
  if (!c->decides) return;
  if (!path) path = "/";
  char *spelled = host_backed ? vfs_spell(v, path) : g_strdup(path);
  char *text = g_strdup_printf("%s: %s", spelled, why);
  json_object *input = fs_input(spelled, "other");
  BoxDecision *d = decision_enforcement(action, spelled, gate, text);
  finish_decision(v, c, action, input, d);
  fs_input_done(input, false);
  g_free(text);
  g_free(spelled);
}

/* ---- placement ---- */

static bool pidns_inode_read(pid_t pid, guint64 *out) {
  char link[64], buf[64];
  snprintf(link, sizeof link, "/proc/%d/ns/pid", (int)pid);
  ssize_t n = readlink(link, buf, sizeof buf - 1);
  if (n <= 0) return false;
  buf[n] = '\0';
  unsigned long long ino;
  if (sscanf(buf, "pid:[%llu]", &ino) != 1) return false;
  *out = ino;
  return true;
}

/* The caller's PID namespace, remembered per FUSE loop thread.
 *
 * Why: the readlink of /proc/<tid>/ns/pid is the largest part of placing a
 * request (a procfs walk, about 2.5 µs), paid on every request.  A task's
 * PID namespace is fixed for its life, so what must be checked is only that
 * a remembered tid still names the same task: pids are reused.  Each slot
 * holds a pidfd of the task (PIDFD_THREAD: that very thread) opened when the
 * namespace was read; a pidfd never follows a reused number, and it polls
 * readable once its task has exited.  A live task owns its tid,
 * so a live pidfd whose tid is the caller's is the caller (which sleeps in
 * the kernel until we reply).  The check is one cheap syscall, and a miss
 * or any failure falls back to the readlink.  The slots are per thread, so
 * no other thread can close or replace a pidfd while it is being checked;
 * they are closed when the thread ends. */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define PLACE_SLOTS 16u
typedef struct {
  pid_t tid;
  int pidfd;
  guint64 nsino;
} PlaceSlot;

static void place_slots_free(gpointer p) {
  PlaceSlot *slots = p;
  for (guint i = 0; i < PLACE_SLOTS; i++)
    if (slots[i].pidfd >= 0) close(slots[i].pidfd);
  g_free(slots);
}
static GPrivate place_slots = G_PRIVATE_INIT(place_slots_free);
static gint place_cache_off = -1; /* BOXFS_NO_PLACE_CACHE=1: off (measurements) */

/* Has the pidfd's task not exited yet?  (A poll costs about half a signal 0
 * through the pidfd, the other way to ask: 0.21 against 0.38 us here.) */
static bool pidfd_live(int pidfd) {
  struct pollfd p = {.fd = pidfd, .events = POLLIN};
  return poll(&p, 1, 0) == 0;
}

static bool pidns_inode(pid_t pid, guint64 *out) {
  if (g_atomic_int_get(&place_cache_off) < 0) {
    const char *e = getenv("BOXFS_NO_PLACE_CACHE");
    g_atomic_int_set(&place_cache_off, e && strcmp(e, "1") == 0);
  }
  if (g_atomic_int_get(&place_cache_off) == 1) return pidns_inode_read(pid, out);
  PlaceSlot *slots = g_private_get(&place_slots);
  if (!slots) {
    slots = g_new(PlaceSlot, PLACE_SLOTS);
    for (guint i = 0; i < PLACE_SLOTS; i++) slots[i] = (PlaceSlot){0, -1, 0};
    g_private_set(&place_slots, slots);
  }
  PlaceSlot *s = &slots[(guint)pid % PLACE_SLOTS];
  if (s->pidfd >= 0 && s->tid == pid) {
    if (pidfd_live(s->pidfd)) {
      *out = s->nsino;
      return true;
    }
    close(s->pidfd);
    s->pidfd = -1;
  }
  /* pidfd first, namespace second: if the namespace read names the task
   * the pidfd holds, a later live check proves the same task */
  int fd = (int)syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
  if (!pidns_inode_read(pid, out)) {
    if (fd >= 0) close(fd);
    return false;
  }
  if (fd < 0) return true;
  /* the tid may have been reused between the two: the pidfd must still be
   * live now, so that it and the readlink saw the same task */
  if (!pidfd_live(fd)) {
    close(fd);
    return true;
  }
  if (s->pidfd >= 0) close(s->pidfd);
  s->tid = pid;
  s->pidfd = fd;
  s->nsino = *out;
  return true;
}

/* A PID namespace nested below a registered one (a tool running bwrap,
 * `unshare -p`, a browser sandbox): walk up with NS_GET_PARENT, a few levels
 * at most.  Only on a miss, so placed callers pay nothing. */
#define VFS_PIDNS_WALK 8
static PidnsEntry *nested_pidns(BoxVfs *v, pid_t pid) {
  char link[64];
  snprintf(link, sizeof link, "/proc/%d/ns/pid", (int)pid);
  int fd = open(link, O_RDONLY | O_CLOEXEC);
  PidnsEntry *found = NULL;
  for (int depth = 0; fd >= 0 && depth < VFS_PIDNS_WALK && !found; depth++) {
    int up = ioctl(fd, NS_GET_PARENT);
    close(fd);
    fd = up;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) break;
    guint64 ino = st.st_ino;
    found = g_hash_table_lookup(v->pidns, &ino); /* lock held */
  }
  if (fd >= 0) close(fd);
  return found;
}

void vfs_place(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, Caller *c) {
  vfs_watch_actor();
  if (vfs_job_caller(req, c)) return;
  const struct fuse_ctx *ctx = fuse_req_ctx(req);
  memset(c, 0, sizeof *c);
  c->cmd = -1;
  c->area = -1;
  c->tid = ctx->pid;
  c->uid = ctx->uid;
  c->gid = ctx->gid;
  if (ctx->pid == 0) {
    Fh *fh = fi ? (Fh *)(uintptr_t)fi->fh : NULL;
    if (fh && fh->cmd >= 0) {
      g_mutex_lock(&v->lock);
      Command *fcm = vfs_command(v, fh->cmd);
      if (fcm) {
        c->placed = true;
        c->cmd = fh->cmd;
        c->area = fcm->area;
        c->is_tool = true; /* the kernel acting: never a decision */
      }
      g_mutex_unlock(&v->lock);
    }
    return;
  }
  guint64 ns;
  if (!pidns_inode(ctx->pid, &ns)) return;
  g_mutex_lock(&v->lock);
  PidnsEntry *e = g_hash_table_lookup(v->pidns, &ns);
  if (!e && g_hash_table_size(v->pidns) > 0) e = nested_pidns(v, ctx->pid);
  if (e) {
    Command *cm = vfs_command(v, e->cmd);
    if (cm) {
      c->placed = true;
      c->cmd = e->cmd;
      c->area = cm->area;
      c->is_tool = e->is_tool;
      c->decides = !e->is_tool && cm->running;
    }
  }
  g_mutex_unlock(&v->lock);
}

/* ---- liveness: jobs ---- */

static __thread Job *tls_job;          /* the job this pool thread carries */
static __thread fuse_req_t tls_req;    /* a request placed inline ... */
static __thread Caller tls_caller;     /* ... and where */

static bool cas_state(Job *job, int from, int to) {
  return __atomic_compare_exchange_n(&job->state, &from, to, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST);
}

Job *vfs_job_current(void) { return tls_job; }

bool vfs_job_caller(fuse_req_t req, Caller *c) {
  if (tls_job && tls_job->req == req) {
    *c = tls_job->caller;
    return true;
  }
  if (tls_req == req && req) {
    *c = tls_caller;
    return true;
  }
  return false;
}

void vfs_job_set_inline(fuse_req_t req, const Caller *c) {
  tls_req = req;
  if (c) tls_caller = *c;
}

/* Answers a pending job EINTR (at most once, whoever comes first). */
static bool job_cancel(Job *job) {
  if (!cas_state(job, JOB_QUEUED, JOB_CANCELLED) && !cas_state(job, JOB_DECIDING, JOB_CANCELLED))
    return false;
  __atomic_add_fetch(&job->v->cancelled, 1, __ATOMIC_SEQ_CST);
  fuse_reply_err(job->req, EINTR);
  return true;
}

/* FUSE_INTERRUPT for a job's request (on a loop thread, under req's lock). */
static void job_interrupt(fuse_req_t req, void *data) {
  (void)req;
  job_cancel(data);
}

bool vfs_job_cancelled(const Job *job) {
  return __atomic_load_n(&job->state, __ATOMIC_SEQ_CST) == JOB_CANCELLED;
}

bool vfs_job_decide_begin(Job *job) {
  if (fuse_req_interrupted(job->req) && cas_state(job, JOB_ACTIVE, JOB_CANCELLED)) {
    /* interrupted before it could be cancelled (the callback found it ACTIVE) */
    fuse_req_interrupt_func(job->req, NULL, NULL);
    __atomic_add_fetch(&job->v->cancelled, 1, __ATOMIC_SEQ_CST);
    fuse_reply_err(job->req, EINTR);
    return false;
  }
  return cas_state(job, JOB_ACTIVE, JOB_DECIDING);
}

bool vfs_job_decide_end(Job *job) { return cas_state(job, JOB_DECIDING, JOB_ACTIVE); }

bool vfs_job_may_reply(Job *job) {
  if (vfs_job_cancelled(job)) return false;
  /* ACTIVE: nobody can cancel it now.  Take the interrupt callback off,
   * waiting out one that is running (it holds the request's lock). */
  fuse_req_interrupt_func(job->req, NULL, NULL);
  return true;
}

static void job_free(Job *job) {
  g_free(job->name);
  g_free(job->name2);
  g_free(job);
}

static void job_thread(gpointer data, gpointer user) {
  Job *job = data;
  BoxVfs *v = user;
  if (cas_state(job, JOB_QUEUED, JOB_ACTIVE)) {
    tls_job = job;
    job->run(job);
    tls_job = NULL;
  }
  g_mutex_lock(&v->pending_lock);
  g_hash_table_remove(v->pending, job);
  /* An interrupt callback may still hold a cancelled job's pointer (it
   * read it before the EINTR reply took it off): keep those until stop. */
  if (vfs_job_cancelled(job)) g_ptr_array_add(v->graveyard, job);
  else job_free(job);
  g_mutex_unlock(&v->pending_lock);
}

void vfs_job_submit(BoxVfs *v, Job *job) {
  job->v = v;
  job->state = JOB_QUEUED;
  g_mutex_lock(&v->pending_lock);
  g_hash_table_add(v->pending, job);
  g_mutex_unlock(&v->pending_lock);
  fuse_req_interrupt_func(job->req, job_interrupt, job);
  g_thread_pool_push(v->pool, job, NULL);
}

/* Answers every pending job of the command EINTR. */
static void cancel_command_jobs(BoxVfs *v, int command) {
  g_mutex_lock(&v->pending_lock);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, v->pending);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    Job *job = key;
    if (job->caller.cmd == command) job_cancel(job);
  }
  g_mutex_unlock(&v->pending_lock);
}

guint64 box_vfs_debug_fdless_nodes(BoxVfs *v, guint *budget) {
  g_mutex_lock(&v->lock);
  guint64 n = v->fdless_nodes;
  if (budget) *budget = v->node_fd_budget;
  g_mutex_unlock(&v->lock);
  return n;
}

guint64 box_vfs_debug_cancelled(BoxVfs *v) {
  return __atomic_load_n(&v->cancelled, __ATOMIC_SEQ_CST);
}

/* ---- public API ---- */

void box_vfs_raise_fd_limit(struct rlimit *before) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    if (before) *before = (struct rlimit){1024, 1024};
    return;
  }
  if (before) *before = rl;
  rlim_t want = 1u << 20;
  FILE *f = fopen("/proc/sys/fs/nr_open", "re");
  unsigned long nr_open = 0;
  if (f) {
    if (fscanf(f, "%lu", &nr_open) == 1 && nr_open > 0 && nr_open < want) want = nr_open;
    fclose(f);
  }
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
    struct rlimit up = {want, want};
    if (setrlimit(RLIMIT_NOFILE, &up) == 0) return;
  }
  if (rl.rlim_cur != rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : rl.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &rl);
  }
}

/* Three quarters of the descriptor limit for nodes, the rest for open
 * files, directories being listed, the log and the sockets. */
static guint node_fd_budget(void) {
  struct rlimit rl;
  rlim_t limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
  if (limit == RLIM_INFINITY || limit > (1u << 20)) limit = 1u << 20;
  rlim_t reserve = MAX(limit / 4, 256);
  return limit > reserve + 64 ? (guint)(limit - reserve) : 64;
}

static char **strv_dup_or_empty(const char *const *v) {
  if (!v) return g_new0(char *, 1);
  return g_strdupv((char **)v);
}

static bool root_is_nested(char **roots, guint i) {
  for (guint j = 0; roots[j]; j++) {
    if (j == i) continue;
    if (strcmp(roots[i], roots[j]) == 0) {
      if (j < i) return true; /* duplicate: keep the first */
      continue;
    }
    if (path_within(roots[i], roots[j])) return true;
  }
  return false;
}

static bool build_pass_chain(BoxVfs *v, const char *root, GError **error) {
  int fd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot open bound root %s: %s", root, g_strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int e = errno;
    close(fd);
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot stat bound root %s: %s", root, g_strerror(e));
    return false;
  }
  gchar **comps = g_strsplit(root + 1, "/", -1);
  guint n = g_strv_length(comps);
  Node *dir = v->passdir;
  for (guint i = 0; i + 1 < n; i++) {
    if (comps[i][0] == '\0') continue;
    Node *next = g_hash_table_lookup(dir->children, comps[i]);
    if (!next) {
      next = dir_node_new(v, NODE_CHAIN, -1, dir, comps[i], 0755);
      next->chain = true;
    }
    dir = next;
  }
  Node *pn = vfs_pass_insert(v, dir, comps[n - 1], fd, &st);
  pn->root_path = g_strdup(root);
  g_hash_table_insert(dir->children, g_strdup(pn->name), pn);
  vfs_node_ref(pn); /* permanent */
  g_strfreev(comps);
  return true;
}

static void *loop_thread(void *arg) {
  BoxVfs *v = arg;
  struct fuse_loop_config *cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, 16);
  fuse_loop_cfg_set_clone_fd(cfg, 0);
  fuse_session_loop_mt(v->se, cfg);
  fuse_loop_cfg_destroy(cfg);
  return NULL;
}

static void vfs_free(BoxVfs *v) {
  vfs_watch_close(v);
  if (v->pool) g_thread_pool_free(v->pool, FALSE, TRUE); /* finish queued jobs */
  if (v->se) fuse_session_destroy(v->se);
  if (v->pending) g_hash_table_unref(v->pending);
  if (v->graveyard) g_ptr_array_unref(v->graveyard);
  g_mutex_clear(&v->pending_lock);
  if (v->commands) {
    for (guint i = 0; i < v->commands->len; i++) {
      Command *c = g_ptr_array_index(v->commands, i);
      g_array_unref(c->pidns);
      g_hash_table_unref(c->denials);
      g_queue_free(c->denial_order);
      if (c->verdicts) g_hash_table_unref(c->verdicts);
      g_free(c->text);
      g_free(c);
    }
    g_ptr_array_unref(v->commands);
  if (v->free_slots) g_array_free(v->free_slots, TRUE);
  }
  if (v->nodes) {
    GHashTableIter it;
    gpointer val;
    g_hash_table_iter_init(&it, v->nodes);
    while (g_hash_table_iter_next(&it, NULL, &val)) {
      Node *n = val;
      if (n->fd >= 0) close(n->fd);
      if (n->children) g_hash_table_unref(n->children);
      if (n->data) g_byte_array_unref(n->data);
      g_free(n->target);
      g_free(n->name);
      g_free(n->root_path);
      g_free(n);
    }
    g_hash_table_unref(v->nodes);
  }
  if (v->pass_nodes) g_hash_table_unref(v->pass_nodes);
  if (v->pidns) g_hash_table_unref(v->pidns);
  if (v->floor_ids) g_hash_table_unref(v->floor_ids);
  if (v->beneath_seen) g_hash_table_unref(v->beneath_seen);
  g_mutex_clear(&v->lock);
  g_free(v->mountpoint);
  g_free(v->view_log);
  g_free(v->view_live_dir);
  g_free(v->live_dir);
  g_strfreev(v->roots);
  g_free(v->operator_home);
  g_strfreev(v->floor_trees);
  g_strfreev(v->floor_files);
  g_free(v);
}

BoxVfs *box_vfs_start(const BoxVfsConfig *config, GError **error) {
  g_return_val_if_fail(config && config->mountpoint, NULL);
  BoxVfs *v = g_new0(BoxVfs, 1);
  v->fuse_fd = -1;
  v->watch_fd = v->watch_wake = -1;
  g_mutex_init(&v->lock);
  g_mutex_init(&v->pending_lock);
  v->pending = g_hash_table_new(g_direct_hash, g_direct_equal);
  v->graveyard = g_ptr_array_new_with_free_func((GDestroyNotify)job_free);
  v->pool = g_thread_pool_new(job_thread, v, VFS_DECISION_THREADS, FALSE, NULL);
  v->mountpoint = g_strdup(config->mountpoint);
  v->roots = strv_dup_or_empty(config->roots);
  v->operator_home = g_strdup(config->operator_home);
  v->floor_trees = strv_dup_or_empty(config->floor_trees);
  v->floor_files = strv_dup_or_empty(config->floor_files);
  v->decide = config->decide;
  v->decide_quiet = config->decide_quiet;
  v->record = config->record;
  v->outcome = config->outcome;
  v->decide_data = config->decide_data;
  v->decide_prompt = config->decide_prompt;
  v->cache_decisions = config->cache_decisions && config->decide;
  v->note = config->note;
  v->history_batch = config->history_batch;
  v->beneath = v->cache_decisions ? config->beneath : NULL;
  v->beneath_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  v->ram_per_box = config->ram_per_box;
  v->box_area = -1;
  v->ram_max_bytes = config->ram_max_bytes;
  v->ram_max_inodes = config->ram_max_inodes ? config->ram_max_inodes : VFS_RAM_MAX_INODES;
  v->view_log = g_strdup(config->view_log);
  v->view_live_dir = g_strdup(config->view_live_dir);
  v->live_dir = g_strdup(config->live_dir);
  guards_record(v);
  v->node_fd_budget = node_fd_budget();
  v->nodes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  v->pass_nodes = g_hash_table_new_full(pass_key_hash, pass_key_equal, g_free, NULL);
  v->pidns = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  v->commands = g_ptr_array_new();
  v->free_slots = g_array_new(FALSE, FALSE, sizeof(int));
  v->next_ino = FUSE_ROOT_ID;
  vfs_watch_open(v);

  for (char **r = v->roots; *r; r++) {
    if ((*r)[0] != '/' || (*r)[1] == '\0') {
      g_set_error(error, BOX_VFS_ERROR, 0, "bound root must be an absolute path below /: %s", *r);
      vfs_free(v);
      return NULL;
    }
    if (path_within(v->mountpoint, *r)) {
      g_set_error(error, BOX_VFS_ERROR, 0, "mountpoint %s lies inside bound root %s",
                  v->mountpoint, *r);
      vfs_free(v);
      return NULL;
    }
  }

  v->root = dir_node_new(v, NODE_ROOT, -1, NULL, "", 0755);
  v->passdir = dir_node_new(v, NODE_PASSDIR, -1, v->root, "pass", 0755);
  v->ramdir = dir_node_new(v, NODE_RAMDIR, -1, v->root, "ram", 0755);
  for (guint i = 0; v->roots[i]; i++) {
    if (root_is_nested(v->roots, i)) continue;
    if (!build_pass_chain(v, v->roots[i], error)) {
      vfs_free(v);
      return NULL;
    }
  }
  if (v->ram_per_box) {
    /* one RAM tree for the box's life: a command that never runs, owning
     * the nodes every command's /tmp, /etc, ... are made of */
    g_mutex_lock(&v->lock);
    v->box_area = command_create(v, "box")->id;
    g_mutex_unlock(&v->lock);
  }

  /* BOXFS_FUSE_DEBUG=1: libfuse traces every request on stderr (to count
   * round trips per operation when measuring). */
  const char *argv[] = {"boxfs", "-o", "fsname=boxfs,subtype=boxfs", "-d", NULL};
  bool trace = g_getenv("BOXFS_FUSE_DEBUG") && strcmp(g_getenv("BOXFS_FUSE_DEBUG"), "1") == 0;
  struct fuse_args args = FUSE_ARGS_INIT(trace ? 4 : 3, (char **)argv);
  v->se = fuse_session_new(&args, &vfs_ops, sizeof vfs_ops, v);
  fuse_opt_free_args(&args);
  if (!v->se) {
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot create the FUSE session");
    vfs_free(v);
    return NULL;
  }
  if (!vfs_mount(v, error)) {
    vfs_free(v);
    return NULL;
  }
  /* The loop thread must not take the caller's signals. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int rc = pthread_create(&v->thread, NULL, loop_thread, v);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    vfs_unmount(v);
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot start the FUSE loop: %s", g_strerror(rc));
    vfs_free(v);
    return NULL;
  }
  v->thread_started = true;
  vfs_watch_start(v);
  return v;
}

void box_vfs_stop(BoxVfs *v) {
  if (!v) return;
  vfs_watch_stop(v);
  if (v->se) {
    fuse_session_exit(v->se);
    vfs_unmount(v);
  }
  if (v->thread_started) pthread_join(v->thread, NULL);
  vfs_free(v);
}

static Node *ram_mkdir_p(BoxVfs *v, int cmd, Node *dir, const char *name, mode_t perm) {
  Node *n = g_hash_table_lookup(dir->children, name);
  if (n) return S_ISDIR(n->mode) ? n : NULL;
  int err;
  return vfs_ram_new(v, cmd, dir, name, S_IFDIR | perm, 0, 0, &err);
}

/* lock held: a new command; with a RAM tree of its own (root named
 * root_name under /ram) unless it uses the per-box area. */
static Command *command_create(BoxVfs *v, const char *root_name) {
  Command *c = g_new0(Command, 1);
  c->id = (int)v->commands->len;
  c->area = c->id;
  c->pidns = g_array_new(FALSE, FALSE, sizeof(guint64));
  c->denials = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  c->denial_order = g_queue_new();
  c->verdicts = verdicts_new();
  g_ptr_array_add(v->commands, c);
  if (!root_name) return c;

  Node *root = vfs_node_new(v, NODE_RAM, c->id);
  c->inodes++;
  root->special = SPECIAL_CMDROOT;
  root->mode = S_IFDIR | 0755;
  root->nlink = 2;
  root->children = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  root->chain = true;
  vfs_node_set_parent(v, root, v->ramdir, root_name);
  vfs_node_ref(root); /* the command's hold, dropped at its end */
  c->root = root;

  int err;
  ram_mkdir_p(v, c->id, root, "tmp", 01777);
  /* The directories every Linux system has, so that writing over one fails
   * as it would on the host instead of creating a RAM file there. */
  ram_mkdir_p(v, c->id, root, "home", 0755);
  Node *dev = ram_mkdir_p(v, c->id, root, "dev", 0755);
  const char *devs[] = {"null", "zero", "urandom", "random"};
  for (guint i = 0; dev && i < G_N_ELEMENTS(devs); i++)
    vfs_ram_new(v, c->id, dev, devs[i], S_IFREG | 0666, 0, 0, &err);
  for (guint i = 0; v->roots[i]; i++) {
    if (root_is_nested(v->roots, i)) continue;
    gchar **comps = g_strsplit(v->roots[i] + 1, "/", -1);
    Node *d = root;
    for (guint k = 0; comps[k] && d; k++) {
      if (comps[k][0] == '\0') continue;
      d = ram_mkdir_p(v, c->id, d, comps[k], 0755);
      if (d) d->chain = true;
    }
    g_strfreev(comps);
  }
  Node *box = ram_mkdir_p(v, c->id, root, ".box", 0555);
  if (box) {
    box->special = SPECIAL_BOXDIR;
    Node *md = vfs_ram_new(v, c->id, box, "mydenial", S_IFREG | 0444, 0, 0, &err);
    if (md) md->special = SPECIAL_MYDENIAL;
    if (v->view_log) {
      Node *dl = vfs_ram_new(v, c->id, box, "decisions.jsonl", S_IFREG | 0444, 0, 0, &err);
      if (dl) dl->special = SPECIAL_DECISIONS;
    }
    if (v->view_live_dir) {
      Node *cd = vfs_ram_new(v, c->id, box, "commands", S_IFDIR | 0555, 0, 0, &err);
      if (cd) cd->special = SPECIAL_COMMANDS;
    }
  }
  return c;
}

/* lock held: marks the tree under n as a slot's fixed layout. */
static void mark_skeleton(Node *n) {
  n->skeleton = true;
  n->skel_mode = n->mode;
  if (!n->children) return;
  GHashTableIter it;
  gpointer val;
  g_hash_table_iter_init(&it, n->children);
  while (g_hash_table_iter_next(&it, NULL, &val)) mark_skeleton(val);
}

/* lock held: a slot no command holds, built if there is none.
 *
 * Why slots: a worker roots itself in its RAM root with a mount namespace
 * of its own (binds of the roots and devices, a pivot, the old root's
 * detach), and tearing that namespace down at its exit costs the kernel
 * another RCU grace period.  A RAM root lent to one command at a time and
 * reset between them keeps its layout, so boxd keeps the namespace the
 * first worker built in it and every later worker of the slot only joins
 * it (setns).  The slot's contents are the command's alone while it holds
 * it: the reset removes whatever the command made and restores the
 * layout's modes before the next command may take it. */
static Command *slot_take(BoxVfs *v) {
  Command *s = NULL;
  while (v->free_slots->len > 0 && !s) {
    int id = g_array_index(v->free_slots, int, v->free_slots->len - 1);
    g_array_set_size(v->free_slots, v->free_slots->len - 1);
    s = vfs_command(v, id);
  }
  if (!s) {
    char name[32];
    snprintf(name, sizeof name, "c%u", v->commands->len);
    s = command_create(v, name);
    s->is_slot = true;
    mark_skeleton(s->root);
  }
  s->slot_busy = true;
  return s;
}

int box_vfs_command_new(BoxVfs *v) {
  g_mutex_lock(&v->lock);
  Command *c;
  if (v->box_area >= 0) {
    c = command_create(v, NULL);
    c->area = v->box_area;
  } else {
    Command *s = slot_take(v);
    c = command_create(v, NULL);
    c->area = s->id;
    c->slot_busy = true;
  }
  int id = c->id;
  g_mutex_unlock(&v->lock);
  return id;
}

int box_vfs_command_area(BoxVfs *v, int command) {
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  int area = c ? c->area : -1;
  g_mutex_unlock(&v->lock);
  return area;
}

/* ---- what boxd publishes for `box mount` (live_dir) ---- */

static char *live_file(BoxVfs *v, int command) {
  char name[32];
  snprintf(name, sizeof name, "%d.json", command);
  return g_build_filename(v->live_dir, name, NULL);
}

void box_vfs_command_describe(BoxVfs *v, int command, const char *text) {
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  json_object *o = NULL;
  if (c) {
    g_free(c->text);
    c->text = g_strdup(text ? text : "");
    o = json_object_new_object();
    json_object_object_add(o, "command", json_object_new_int(command));
    json_object_object_add(o, "text", json_object_new_string(c->text));
    json_object_object_add(o, "pid", json_object_new_int(c->pid));
    char *ram = c->area == v->box_area && v->box_area >= 0 ? g_strdup("/ram/box")
                                                            : g_strdup_printf("/ram/c%d", c->area);
    json_object_object_add(o, "ram", json_object_new_string(ram));
    json_object_object_add(o, "ram_lifetime", json_object_new_string(v->box_area >= 0 ? "box" : "command"));
    json_object_object_add(o, "ram_max_bytes", json_object_new_int64((int64_t)v->ram_max_bytes));
    json_object_object_add(o, "ram_max_inodes", json_object_new_int64(v->ram_max_inodes));
    json_object_object_add(o, "started_unix_ms", json_object_new_int64(g_get_real_time() / 1000));
    g_free(ram);
  }
  g_mutex_unlock(&v->lock);
  if (!o || !v->live_dir) {
    if (o) json_object_put(o);
    return;
  }
  /* written whole under a temporary name, then renamed: a reader never
   * sees half a record */
  char *path = live_file(v, command);
  char *tmp = g_strconcat(path, ".tmp", NULL);
  const char *txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
  if (g_file_set_contents_full(tmp, txt, -1, G_FILE_SET_CONTENTS_NONE, 0600, NULL)) {
    if (rename(tmp, path) != 0) unlink(tmp);
  }
  json_object_put(o);
  g_free(tmp);
  g_free(path);
}

static void live_withdraw(BoxVfs *v, int command) {
  if (!v->live_dir) return;
  char *path = live_file(v, command);
  unlink(path);
  g_free(path);
}

/* ---- the operator's view (view_live_dir): .box/commands/<N> ---- */

GPtrArray *vfs_view_command_names(BoxVfs *v) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GDir *d = v->view_live_dir ? g_dir_open(v->view_live_dir, 0, NULL) : NULL;
  const char *e;
  while (d && (e = g_dir_read_name(d)) != NULL) {
    if (!g_str_has_suffix(e, ".json")) continue;
    size_t n = strlen(e) - 5;
    bool digits = n > 0;
    for (size_t i = 0; i < n; i++)
      if (!g_ascii_isdigit(e[i])) digits = false;
    if (digits) g_ptr_array_add(names, g_strndup(e, n));
  }
  if (d) g_dir_close(d);
  return names;
}

/* The worker's working directory now, as the Shell spells it: its cwd is a
 * bind of /pass<root> in a namespace we are not in, so the kernel shows the
 * path from the mount's root ("/pass<real path>"). */
static char *live_cwd(pid_t pid) {
  if (pid <= 0) return NULL;
  char link[64];
  snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
  char *t = g_file_read_link(link, NULL);
  if (!t) return NULL;
  const char *p = strstr(t, "/pass/");
  char *out = g_strdup(p ? p + 5 : t);
  g_free(t);
  return out;
}

char *vfs_view_command_text(BoxVfs *v, const char *name) {
  if (!v->view_live_dir) return NULL;
  for (const char *q = name; *q; q++)
    if (!g_ascii_isdigit(*q)) return NULL;
  char *file = g_strconcat(name, ".json", NULL);
  char *path = g_build_filename(v->view_live_dir, file, NULL);
  g_free(file);
  json_object *o = json_object_from_file(path);
  g_free(path);
  if (!o) return NULL;
  json_object *x;
  const char *text = json_object_object_get_ex(o, "text", &x) ? json_object_get_string(x) : "";
  pid_t pid = json_object_object_get_ex(o, "pid", &x) ? (pid_t)json_object_get_int(x) : 0;
  const char *ram = json_object_object_get_ex(o, "ram", &x) ? json_object_get_string(x) : "";
  const char *life = json_object_object_get_ex(o, "ram_lifetime", &x) ? json_object_get_string(x) : "command";
  gint64 max_b = json_object_object_get_ex(o, "ram_max_bytes", &x) ? json_object_get_int64(x) : 0;
  gint64 max_i = json_object_object_get_ex(o, "ram_max_inodes", &x) ? json_object_get_int64(x) : 0;
  gint64 started = json_object_object_get_ex(o, "started_unix_ms", &x) ? json_object_get_int64(x) : 0;
  char *cwd = live_cwd(pid);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "command: %s\n", name);
  g_string_append_printf(s, "text: %s\n", text);
  g_string_append_printf(s, "cwd: %s\n", cwd ? cwd : "?");
  g_string_append_printf(s, "ram: %s (lifetime: %s", ram, life);
  if (max_b) g_string_append_printf(s, ", size limit %" G_GINT64_FORMAT " bytes", max_b);
  if (max_i) g_string_append_printf(s, ", inode limit %" G_GINT64_FORMAT, max_i);
  g_string_append(s, ")\n");
  g_string_append_printf(s, "started_unix_ms: %" G_GINT64_FORMAT "\n", started);
  g_free(cwd);
  json_object_put(o);
  return g_string_free(s, FALSE);
}

bool box_vfs_command_attach(BoxVfs *v, int command, pid_t pid, bool is_tool, GError **error) {
  guint64 ns;
  if (!pidns_inode(pid, &ns)) {
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot read the PID namespace of process %d: %s",
                (int)pid, g_strerror(errno));
    return false;
  }
  bool ok = false;
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  PidnsEntry *old = g_hash_table_lookup(v->pidns, &ns);
  if (!c) {
    g_set_error(error, BOX_VFS_ERROR, 0, "no such command: %d", command);
  } else {
    if (old && old->cmd != command) {
      /* pid's namespace was just made (a worker's or a tool's), so an entry
       * for its inode number belongs to a namespace that has ended: the
       * kernel reuses those numbers, here while the command that owned the
       * old one still runs.  The entry moves to its new owner. */
      Command *was = vfs_command(v, old->cmd);
      for (guint i = 0; was && i < was->pidns->len; i++)
        if (g_array_index(was->pidns, guint64, i) == ns) {
          g_array_remove_index_fast(was->pidns, i);
          break;
        }
      old->cmd = command;
      g_array_append_val(c->pidns, ns);
    }
    if (!old) {
      PidnsEntry *e = g_new0(PidnsEntry, 1);
      e->nsino = ns;
      e->cmd = command;
      e->is_tool = is_tool;
      g_hash_table_insert(v->pidns, &e->nsino, e);
      g_array_append_val(c->pidns, ns);
      if (!c->pid) c->pid = pid;
      if (is_tool) vfs_watch_tools(v, +1);
    } else {
      if (old->is_tool != is_tool) vfs_watch_tools(v, is_tool ? +1 : -1);
      old->is_tool = is_tool;
    }
    ok = true;
  }
  g_mutex_unlock(&v->lock);
  return ok;
}

void box_vfs_command_set_running(BoxVfs *v, int command, bool running) {
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  if (c) c->running = running;
  g_mutex_unlock(&v->lock);
}

static void ram_clear(BoxVfs *v, Node *dir) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GHashTableIter it;
  gpointer key, val;
  g_hash_table_iter_init(&it, dir->children);
  while (g_hash_table_iter_next(&it, &key, &val)) g_ptr_array_add(names, g_strdup(key));
  for (guint i = 0; i < names->len; i++) {
    const char *nm = g_ptr_array_index(names, i);
    Node *n = g_hash_table_lookup(dir->children, nm);
    if (n && S_ISDIR(n->mode)) ram_clear(v, n);
    vfs_ram_unlink(v, dir, nm);
  }
  g_ptr_array_unref(names);
}

/* What the kernel must forget after a slot's reset: an entry (name set)
 * or a layout node's attributes (name NULL). */
typedef struct {
  fuse_ino_t parent;
  char *name;
} SlotInval;

/* lock held: removes under dir whatever is not the slot's layout and
 * restores the layout's modes, noting what the kernel may hold. */
static void slot_reset_dir(BoxVfs *v, Node *dir, GArray *gone) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GHashTableIter it;
  gpointer key, val;
  bool changed = dir->mode != dir->skel_mode || dir->uid || dir->gid;
  g_hash_table_iter_init(&it, dir->children);
  while (g_hash_table_iter_next(&it, &key, &val)) {
    Node *n = val;
    if (!n->skeleton) {
      g_ptr_array_add(names, g_strdup(key));
    } else if (n->children) {
      slot_reset_dir(v, n, gone);
    } else if (n->mode != n->skel_mode || n->uid || n->gid || (n->data && n->data->len > 0)) {
      n->mode = n->skel_mode;
      n->uid = 0;
      n->gid = 0;
      if (n->data && n->data->len > 0) vfs_ram_resize(v, n, 0);
      SlotInval g = {n->ino, NULL};
      g_array_append_val(gone, g);
    }
  }
  for (guint i = 0; i < names->len; i++) {
    const char *nm = g_ptr_array_index(names, i);
    Node *n = g_hash_table_lookup(dir->children, nm);
    if (n && S_ISDIR(n->mode) && n->children) ram_clear(v, n);
    vfs_ram_unlink(v, dir, nm);
    SlotInval g = {dir->ino, g_strdup(nm)};
    g_array_append_val(gone, g);
    changed = true;
  }
  g_ptr_array_unref(names);
  if (changed) {
    dir->mode = dir->skel_mode;
    dir->uid = 0;
    dir->gid = 0;
    SlotInval g = {dir->ino, NULL};
    g_array_append_val(gone, g);
  }
}

static GArray *slot_reset(BoxVfs *v, Node *root) {
  GArray *gone = g_array_new(FALSE, FALSE, sizeof(SlotInval));
  slot_reset_dir(v, root, gone);
  return gone;
}

void box_vfs_command_end(BoxVfs *v, int command) {
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  if (!c) {
    g_mutex_unlock(&v->lock);
    return;
  }
  c->ended = true;
  c->running = false;
  cancel_command_jobs(v, command);
  for (guint i = 0; i < c->pidns->len; i++) {
    PidnsEntry *e = g_hash_table_lookup(v->pidns, &g_array_index(c->pidns, guint64, i));
    if (e && e->is_tool) vfs_watch_tools(v, -1);
    g_hash_table_remove(v->pidns, &g_array_index(c->pidns, guint64, i));
  }
  g_array_set_size(c->pidns, 0);
  g_hash_table_remove_all(c->denials);
  g_queue_clear(c->denial_order);
  g_hash_table_remove_all(c->verdicts);
  g_free(c->text);
  c->text = NULL;
  fuse_ino_t ramino = v->ramdir->ino;
  bool own_tree = c->root != NULL;
  Command *slot = c->slot_busy ? vfs_command(v, c->area) : NULL;
  c->slot_busy = false;
  GArray *gone = NULL;
  if (slot) gone = slot_reset(v, slot->root);
  g_mutex_unlock(&v->lock);
  live_withdraw(v, command);

  /* Outside the lock: the kernel may answer with FORGETs at once. */
  char name[32];
  int len = snprintf(name, sizeof name, "c%d", command);
  if (v->se && own_tree) fuse_lowlevel_notify_inval_entry(v->se, ramino, name, (size_t)len);

  if (slot) {
    /* The kernel forgets what the command made before the slot is lent
     * again (the layout's own entries stay cached: that is the point). */
    for (guint i = 0; i < gone->len; i++) {
      SlotInval *g = &g_array_index(gone, SlotInval, i);
      if (!v->se) continue;
      if (g->name) fuse_lowlevel_notify_inval_entry(v->se, g->parent, g->name, strlen(g->name));
      else fuse_lowlevel_notify_inval_inode(v->se, g->parent, -1, 0);
    }
    for (guint i = 0; i < gone->len; i++) g_free(g_array_index(gone, SlotInval, i).name);
    g_array_free(gone, TRUE);
  }

  g_mutex_lock(&v->lock);
  if (slot) {
    slot->slot_busy = false;
    g_array_append_val(v->free_slots, slot->id);
  }
  Node *root = c->root;
  c->root = NULL;
  if (root) {
    ram_clear(v, root);
    vfs_node_unref(v, root); /* kernel references keep it until FORGET */
  }
  g_mutex_unlock(&v->lock);
}

const char *box_vfs_mountpoint(const BoxVfs *v) { return v->mountpoint; }

char *box_vfs_ram_root(BoxVfs *v, int command) {
  if (v->box_area >= 0) return g_strdup_printf("%s/ram/box", v->mountpoint);
  return g_strdup_printf("%s/ram/c%d", v->mountpoint, box_vfs_command_area(v, command));
}

char *box_vfs_pass_path(const BoxVfs *v, const char *real_path) {
  return g_strconcat(v->mountpoint, "/pass", real_path, NULL);
}

guint box_vfs_debug_ram_nodes(BoxVfs *v) {
  guint count = 0;
  g_mutex_lock(&v->lock);
  GHashTableIter it;
  gpointer val;
  g_hash_table_iter_init(&it, v->nodes);
  while (g_hash_table_iter_next(&it, NULL, &val))
    if (((Node *)val)->kind == NODE_RAM) count++;
  g_mutex_unlock(&v->lock);
  return count;
}
