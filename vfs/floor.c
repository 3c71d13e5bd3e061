/* floor.c — the reach floor (spec/runtime.md §3.3): what no policy may
 * open or change, by identity (device, inode) and by path. */
#include "vfs/vfs-private.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* What an identity the floor guards is.  The box directory, what it held at
 * start and the authority files are never opened; the directories that hold
 * any of them, up to their bound root, are never moved, removed, replaced or
 * changed, so that their paths, which the floor compares too, stay what
 * they were at start.  Identity, not path text, is what holds against a
 * renamed ancestor or a hard link made before the run. */
typedef enum { GUARD_AUTHORITY, GUARD_TRUSTED, GUARD_HOLDER } GuardKind;

/* born: the object's birth time where the filesystem keeps one.  An inode
 * number is freed when its object goes (Box replaces its certificate at
 * start; an operator's editor replaces the policy) and the filesystem gives
 * it to the next file made, which is not the object guarded. */
typedef struct {
  dev_t dev;
  ino_t ino;
  GuardKind kind;
  bool born_known;
  struct statx_timestamp born;
} FileId;

#define VFS_GUARD_WALK_MAX 1024 /* entries of a box directory recorded at start */
#define VFS_GUARD_WALK_DEPTH 8

static const char *const floor_authority =
  "resolves to an authority source that this run loaded, which no policy may open or change";
static const char *const floor_trusted =
  "resolves into trusted Box state, which no policy may open";
static const char *const floor_holder =
  "holds trusted Box state, which no policy may move or change";

static guint file_id_hash(gconstpointer p)
{
  const FileId *id = p;
  guint64 h = ((guint64)id->dev * 0x9e3779b97f4a7c15ull) ^ (guint64)id->ino;
  return (guint)(h ^ (h >> 32));
}

static gboolean file_id_equal(gconstpointer a, gconstpointer b)
{
  const FileId *x = a, *y = b;
  return x->dev == y->dev && x->ino == y->ino;
}

/* The identity of what path (at dfd) names now; *mode its type. */
static bool file_id_at(int dfd, const char *path, int flags, FileId *id, mode_t *mode)
{
  struct statx sx;
  if (statx(dfd, path, flags, STATX_TYPE | STATX_INO | STATX_BTIME, &sx) != 0) return false;
  *id = (FileId){ makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino, GUARD_HOLDER,
                  (sx.stx_mask & STATX_BTIME) != 0, sx.stx_btime };
  if (mode) *mode = sx.stx_mode;
  return true;
}

static void guard_add(BoxVfs *v, const FileId *key, GuardKind kind)
{
  FileId *id = g_hash_table_lookup(v->floor_ids, key);
  if (id) {
    if (kind < id->kind) id->kind = kind; /* the stronger guard wins */
    return;
  }
  id = g_memdup2(key, sizeof *key);
  id->kind = kind;
  g_hash_table_add(v->floor_ids, id);
}

static bool guard_add_at(BoxVfs *v, int dfd, const char *path, int flags, GuardKind kind,
                         mode_t *mode)
{
  FileId id;
  if (!file_id_at(dfd, path, flags, &id, mode)) return false;
  guard_add(v, &id, kind);
  return true;
}

/* Whether what path names is the object guarded as id, and not a later one
 * given its freed inode number.  Where birth times are not kept, or path no
 * longer names the inode, it is taken to be. */
static bool guarded_object(const FileId *id, const char *path, const FileId *now)
{
  FileId buf;
  if (!id->born_known) return true;
  if (!now) {
    if (!file_id_at(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, &buf, NULL)) return true;
    now = &buf;
  }
  if (now->dev != id->dev || now->ino != id->ino || !now->born_known) return true;
  return now->born.tv_sec == id->born.tv_sec && now->born.tv_nsec == id->born.tv_nsec;
}

/* Every directory above path, up to and with the bound root that holds it:
 * a rename of any of them would move path. */
static void guard_holders(BoxVfs *v, const char *path)
{
  const char *root = NULL;
  for (char **r = v->roots; *r; r++)
    if (box_path_within(path, *r) && (!root || strlen(*r) > strlen(root))) root = *r;
  if (!root || strcmp(path, root) == 0) return; /* the mount reaches nothing above it */
  char *dir = g_path_get_dirname(path);
  for (;;) {
    guard_add_at(v, AT_FDCWD, dir, AT_SYMLINK_NOFOLLOW, GUARD_HOLDER, NULL);
    if (strcmp(dir, root) == 0 || !box_path_within(dir, root)) break;
    char *up = g_path_get_dirname(dir);
    g_free(dir);
    dir = up;
  }
  g_free(dir);
}

/* What a directory holds, links not followed: a hard link to one of these
 * found elsewhere is the same object.  Takes dfd. */
static void guard_tree(BoxVfs *v, int dfd, int depth, guint *budget)
{
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return;
  }
  struct dirent *e;
  while (*budget > 0 && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    mode_t mode;
    if (!guard_add_at(v, dirfd(d), e->d_name, AT_SYMLINK_NOFOLLOW, GUARD_TRUSTED, &mode)) continue;
    (*budget)--;
    if (S_ISDIR(mode) && depth < VFS_GUARD_WALK_DEPTH) {
      int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) guard_tree(v, sub, depth + 1, budget);
    }
  }
  closedir(d);
}

/* The floor's paths as the mount spells them (canonical: a node's path is
 * its real one), and the identities of the objects they name now. */
void vfs_guards_record(BoxVfs *v)
{
  char **lists[] = { v->floor_files, v->floor_trees };
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
    guard_add_at(v, AT_FDCWD, *f, 0, GUARD_AUTHORITY, NULL);
    guard_holders(v, *f);
  }
  for (char **t = v->floor_trees; *t; t++) {
    if (!guard_add_at(v, AT_FDCWD, *t, AT_SYMLINK_NOFOLLOW, GUARD_TRUSTED, NULL)) continue;
    guard_holders(v, *t);
    guint budget = VFS_GUARD_WALK_MAX;
    int dfd = open(*t, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) guard_tree(v, dfd, 0, &budget);
  }
}

/* obj: the object's identity when the caller has it, else it is read from
 * the path (a walk of the host path on every permitted operation). */
const char *vfs_floor_reason_obj(BoxVfs *v, const char *path, bool mutating, const VfsObjId *obj)
{
  size_t n = strlen(path); /* measured once: asked on every permitted op */
  for (char **f = v->floor_files; f && *f; f++) {
    if (strcmp(path, *f) == 0) return floor_authority;
    if (mutating && box_path_within(*f, path)) return floor_authority; /* an ancestor directory */
  }
  for (char **t = v->floor_trees; t && *t; t++) {
    if (box_path_within_len(path, n, *t)) return floor_trusted;
    if (mutating && box_path_within(*t, path)) return floor_holder; /* an ancestor directory */
  }
  if (g_hash_table_size(v->floor_ids) > 0) {
    FileId key = { 0 };
    bool read_now = false;
    if (obj)
      key = (FileId){ .dev = obj->dev, .ino = obj->ino };
    else
      read_now = file_id_at(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, &key, NULL);
    const FileId *id = key.ino ? g_hash_table_lookup(v->floor_ids, &key) : NULL;
    if (id && !guarded_object(id, path, read_now ? &key : NULL)) id = NULL;
    if (id && id->kind == GUARD_AUTHORITY) return floor_authority;
    if (id && id->kind == GUARD_TRUSTED) return floor_trusted;
    if (id && mutating) return floor_holder;
  }
  return NULL;
}

bool vfs_floor_refuses(BoxVfs *v, const char *path, const VfsObjId *obj)
{
  return vfs_floor_reason_obj(v, path, false, obj) != NULL;
}

bool box_vfs_floor_refuses(BoxVfs *v, const char *path, dev_t dev, ino_t ino)
{
  return vfs_floor_reason_obj(v, path, false, &(VfsObjId){ dev, ino }) != NULL;
}

bool box_vfs_floor_refuses_create(BoxVfs *v, const char *path)
{
  return vfs_floor_reason_obj(v, path, true, &(VfsObjId){ 0, 0 }) != NULL;
}

const char *vfs_floor_reason(BoxVfs *v, const char *path, const VfsObjId *obj)
{
  return vfs_floor_reason_obj(v, path, true, obj);
}

/* A tool's (or the agent's) own call: its bind views bound it and it raises
 * no decision, but a view holds Box state only as binds from the host, so
 * what reaches Box state through the mount (a hard link made before the
 * run, under a writable grant) is refused all the same, as the Shell's
 * would be. */
int vfs_tool_floor(BoxVfs *v, const Caller *c, const char *path, bool host_backed, bool mutating,
                   const VfsObjId *obj)
{
  return vfs_tool_floor_make(v, c, path, host_backed, mutating, false, obj);
}

int vfs_tool_floor_make(BoxVfs *v, const Caller *c, const char *path, bool host_backed,
                        bool mutating, bool creates, const VfsObjId *obj)
{
  if (!c->placed || !c->is_tool || !path || !host_backed) return 0;
  if (vfs_floor_reason_obj(v, path, mutating, obj)) return EACCES;
  /* the view's mounts inside the bound roots are all of the mount (or
   * masks over it): only there do its paths and the request's agree */
  return vfs_tool_reach(v, c, path, mutating, creates);
}

/* lock held */
static const PidnsEntry *reach_of(BoxVfs *v, const Caller *c)
{
  if (!c->nsino || !c->is_tool) return NULL;
  const PidnsEntry *e = g_hash_table_lookup(v->pidns, &c->nsino);
  return e && e->reach_paths ? e : NULL;
}

/* lock held: what e's view lets do at path, by the longest of its paths
 * that holds it (strict: the longest that holds it and is not it) */
static char reach_at(const PidnsEntry *e, const char *path, bool strict, bool *exact)
{
  char reach = 'w';
  size_t best = 0;
  *exact = false;
  for (int i = 0; e && e->reach_paths[i]; i++) {
    const char *p = e->reach_paths[i];
    size_t n = strlen(p);
    bool same = strcmp(path, p) == 0;
    if (n >= best && !(strict && same) && box_path_within(path, p)) {
      best = n;
      reach = e->reach[i];
      *exact = same;
    }
  }
  return reach;
}

int vfs_tool_reach(BoxVfs *v, const Caller *c, const char *path, bool mutating, bool creates)
{
  if (!c->nsino || !path) return 0;
  g_mutex_lock(&v->lock);
  const PidnsEntry *e = reach_of(v, c);
  bool exact;
  char reach = reach_at(e, path, false, &exact);
  /* making a missing mount point is its parent's business (the view's own
   * scaffold does it as it is built) */
  if (exact && creates) reach = reach_at(e, path, true, &exact);
  g_mutex_unlock(&v->lock);
  if (reach == 'n') return EACCES;
  return reach == 'r' && mutating ? EROFS : 0;
}

int vfs_tool_reach_name(BoxVfs *v, const Caller *c, const char *path)
{
  g_autofree char *parent = g_path_get_dirname(path);
  if (vfs_tool_reach(v, c, parent, false, false) != EACCES) return 0;
  /* a name on the way to a grant below the hidden one (a mount point of
   * the view, looked up as its bind is made) */
  bool leads = false;
  g_mutex_lock(&v->lock);
  const PidnsEntry *e = reach_of(v, c);
  for (int i = 0; e && e->reach_paths[i] && !leads; i++)
    leads = e->reach[i] != 'n' && box_path_within(e->reach_paths[i], path);
  g_mutex_unlock(&v->lock);
  return leads ? 0 : EACCES;
}

bool vfs_tool_has_hidden(BoxVfs *v, const Caller *c)
{
  const PidnsEntry *e = reach_of(v, c);
  return e && strchr(e->reach, 'n');
}
