/* checkpoint_view.c — `box mount`'s .box/checkpoints/: the box's
 * checkpoint repository as a read-only tree, served by a FUSE session of
 * its own (the view's vfs never links libgit2):
 *   log        what `box checkpoints` prints, as of each open
 *   <id>/      the workspace as checkpoint <id> kept it (every commit of the
 *              history by its full id; any unique prefix of one, such as
 *              the 12 digits the log shows, is looked up too)
 * Everything is read from the bare repository with libgit2 as it is asked
 * for: a checkpoint made while the view is mounted appears in it.  Files
 * and directories have git's modes without their write bits; a file kept
 * by hash only reads as the note that stands for it.
 *
 * One thread serves the session, so the repository is used by one thread
 * at a time.  A node is kept for each name looked up (nothing in a
 * checkpoint changes), until the view is unmounted. */
#include "box/box-private.h"

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <git2.h>

#include "checkpoints/checkpoints.h"

#define INO_LOG 2 /* the root is FUSE_ROOT_ID (1) */

typedef struct {
  char *key;   /* "<commit id>/<path>", or "<commit id>" for its root */
  git_oid oid; /* the tree, blob or link target's blob */
  git_filemode_t mode;
  gint64 time; /* the checkpoint's */
} Node;

struct BoxCheckpointView {
  BoxCheckpoints *cp;
  git_repository *repo;
  struct fuse_session *se;
  pthread_t thread;
  bool thread_started;
  GPtrArray *nodes;   /* Node*, index ino - 3 */
  GHashTable *by_key; /* key -> ino */
  gint64 mounted;     /* the root's and the log's times */
  char *mountpoint;
};

static Node *node_of(BoxCheckpointView *cv, fuse_ino_t ino)
{
  if (ino < 3 || ino - 3 >= cv->nodes->len) return NULL;
  return g_ptr_array_index(cv->nodes, ino - 3);
}

static fuse_ino_t node_add(BoxCheckpointView *cv, const char *key, const git_oid *oid,
                           git_filemode_t mode, gint64 time)
{
  gpointer had = g_hash_table_lookup(cv->by_key, key);
  if (had) return GPOINTER_TO_SIZE(had);
  Node *n = g_new0(Node, 1);
  n->key = g_strdup(key);
  n->oid = *oid;
  n->mode = mode;
  n->time = time;
  g_ptr_array_add(cv->nodes, n);
  fuse_ino_t ino = cv->nodes->len + 2;
  g_hash_table_insert(cv->by_key, n->key, GSIZE_TO_POINTER(ino));
  return ino;
}

static char *log_text(BoxCheckpointView *cv)
{
  GString *s = g_string_new(NULL);
  if (!box_checkpoints_log(cv->cp, 0, s, NULL)) g_string_truncate(s, 0);
  return g_string_free(s, FALSE);
}

static int attr_of(BoxCheckpointView *cv, fuse_ino_t ino, struct stat *st)
{
  memset(st, 0, sizeof *st);
  st->st_ino = ino;
  st->st_nlink = 1;
  if (ino == FUSE_ROOT_ID || ino == INO_LOG) {
    st->st_mtime = st->st_ctime = st->st_atime = cv->mounted;
    if (ino == FUSE_ROOT_ID) {
      st->st_mode = S_IFDIR | 0555;
      st->st_nlink = 2;
    } else {
      g_autofree char *t = log_text(cv);
      st->st_mode = S_IFREG | 0444;
      st->st_size = (off_t)strlen(t);
    }
    return 0;
  }
  Node *n = node_of(cv, ino);
  if (!n) return ENOENT;
  st->st_mtime = st->st_ctime = st->st_atime = n->time;
  if (n->mode == GIT_FILEMODE_TREE) {
    st->st_mode = S_IFDIR | 0555;
    st->st_nlink = 2;
    return 0;
  }
  size_t size = 0;
  git_object_t type;
  git_odb *odb = NULL;
  if (git_repository_odb(&odb, cv->repo) == 0) {
    git_odb_read_header(&size, &type, odb, &n->oid);
    git_odb_free(odb);
  }
  st->st_size = (off_t)size;
  st->st_blocks = (blkcnt_t)((size + 511) / 512);
  st->st_mode = n->mode == GIT_FILEMODE_LINK              ? S_IFLNK | 0777
                : n->mode == GIT_FILEMODE_BLOB_EXECUTABLE ? S_IFREG | 0555
                                                          : S_IFREG | 0444;
  return 0;
}

static void reply_entry(fuse_req_t req, BoxCheckpointView *cv, fuse_ino_t ino)
{
  struct fuse_entry_param e = { .ino = ino, .attr_timeout = 1.0, .entry_timeout = 1.0 };
  int err = attr_of(cv, ino, &e.attr);
  if (err)
    fuse_reply_err(req, err);
  else
    fuse_reply_entry(req, &e);
}

/* The commit a name of the root stands for: a full id or a unique prefix. */
static git_commit *commit_named(BoxCheckpointView *cv, const char *name)
{
  size_t len = strlen(name);
  git_oid oid;
  if (len < 4 || len > GIT_OID_HEXSZ || git_oid_fromstrn(&oid, name, len) != 0) return NULL;
  git_commit *c = NULL;
  if (git_commit_lookup_prefix(&c, cv->repo, &oid, len) != 0) return NULL;
  return c;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
  BoxCheckpointView *cv = fuse_req_userdata(req);
  if (parent == FUSE_ROOT_ID) {
    if (strcmp(name, "log") == 0) return reply_entry(req, cv, INO_LOG);
    git_commit *c = commit_named(cv, name);
    if (!c) return (void)fuse_reply_err(req, ENOENT);
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, git_commit_id(c));
    fuse_ino_t ino =
      node_add(cv, hex, git_commit_tree_id(c), GIT_FILEMODE_TREE, (gint64)git_commit_time(c));
    git_commit_free(c);
    return reply_entry(req, cv, ino);
  }
  Node *p = node_of(cv, parent);
  git_tree *tree = NULL;
  if (!p || p->mode != GIT_FILEMODE_TREE) return (void)fuse_reply_err(req, ENOTDIR);
  if (git_tree_lookup(&tree, cv->repo, &p->oid) != 0) return (void)fuse_reply_err(req, EIO);
  const git_tree_entry *te = git_tree_entry_byname(tree, name);
  fuse_ino_t ino = 0;
  if (te) {
    g_autofree char *key = g_strconcat(p->key, "/", name, NULL);
    ino = node_add(cv, key, git_tree_entry_id(te), git_tree_entry_filemode(te), p->time);
  }
  git_tree_free(tree);
  if (!ino) return (void)fuse_reply_err(req, ENOENT);
  reply_entry(req, cv, ino);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void)fi;
  BoxCheckpointView *cv = fuse_req_userdata(req);
  struct stat st;
  int err = attr_of(cv, ino, &st);
  if (err)
    fuse_reply_err(req, err);
  else
    fuse_reply_attr(req, &st, 1.0);
}

/* A directory's names, listed at opendir: the root's are the log and the
 * checkpoints, newest first. */
static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  BoxCheckpointView *cv = fuse_req_userdata(req);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  if (ino == FUSE_ROOT_ID) {
    g_ptr_array_add(names, g_strdup("log"));
    git_revwalk *walk = NULL;
    git_oid oid;
    if (git_revwalk_new(&walk, cv->repo) == 0 && git_revwalk_push_head(walk) == 0)
      while (git_revwalk_next(&oid, walk) == 0) {
        char hex[GIT_OID_HEXSZ + 1];
        g_ptr_array_add(names, g_strdup(git_oid_tostr(hex, sizeof hex, &oid)));
      }
    git_revwalk_free(walk);
  } else {
    Node *n = node_of(cv, ino);
    git_tree *tree = NULL;
    if (!n || n->mode != GIT_FILEMODE_TREE || git_tree_lookup(&tree, cv->repo, &n->oid) != 0) {
      g_ptr_array_unref(names);
      return (void)fuse_reply_err(req, n ? EIO : ENOTDIR);
    }
    for (size_t i = 0; i < git_tree_entrycount(tree); i++)
      g_ptr_array_add(names, g_strdup(git_tree_entry_name(git_tree_entry_byindex(tree, i))));
    git_tree_free(tree);
  }
  fi->fh = (uint64_t)(uintptr_t)names;
  fuse_reply_open(req, fi);
}

/* The entries from offset off that fit in buf; their length.  Offsets: 1
 * and 2 after "." and "..", then 3 + the index of a name. */
static size_t entries_at(fuse_req_t req, GPtrArray *names, off_t off, char *buf, size_t size)
{
  size_t used = 0;
  for (off_t i = off; i < (off_t)names->len + 2; i++) {
    const char *name = i == 0 ? "." : i == 1 ? ".." : g_ptr_array_index(names, i - 2);
    /* d_ino: informational (the lookup gives the real one), but never 0,
     * which readdir(3) skips */
    struct stat st = { .st_ino = (ino_t)i + 1, .st_mode = i < 2 ? S_IFDIR : 0 };
    size_t need = fuse_add_direntry(req, buf + used, size - used, name, &st, i + 1);
    if (need > size - used) break;
    used += need;
  }
  return used;
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
  (void)ino;
  g_autofree char *buf = g_malloc(size);
  fuse_reply_buf(req, buf, entries_at(req, (GPtrArray *)(uintptr_t)fi->fh, off, buf, size));
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void)ino;
  g_ptr_array_unref((GPtrArray *)(uintptr_t)fi->fh);
  fuse_reply_err(req, 0);
}

/* A file's content, read whole at open: the log as of now, or a blob. */
static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  BoxCheckpointView *cv = fuse_req_userdata(req);
  if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
    return (void)fuse_reply_err(req, EROFS);
  GBytes *data = NULL;
  if (ino == INO_LOG) {
    char *t = log_text(cv);
    data = g_bytes_new_take(t, strlen(t));
    fi->direct_io = 1; /* its size changes with every checkpoint */
  } else {
    Node *n = node_of(cv, ino);
    git_blob *blob = NULL;
    if (!n || n->mode == GIT_FILEMODE_TREE) return (void)fuse_reply_err(req, n ? EISDIR : ENOENT);
    if (git_blob_lookup(&blob, cv->repo, &n->oid) != 0) return (void)fuse_reply_err(req, EIO);
    data = g_bytes_new(git_blob_rawcontent(blob), (gsize)git_blob_rawsize(blob));
    git_blob_free(blob);
    fi->keep_cache = 1; /* a checkpoint never changes */
  }
  fi->fh = (uint64_t)(uintptr_t)data;
  fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
  (void)ino;
  gsize len;
  const char *p = g_bytes_get_data((GBytes *)(uintptr_t)fi->fh, &len);
  gsize from = MIN((gsize)off, len);
  fuse_reply_buf(req, p + from, MIN(size, len - from));
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void)ino;
  g_bytes_unref((GBytes *)(uintptr_t)fi->fh);
  fuse_reply_err(req, 0);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
  BoxCheckpointView *cv = fuse_req_userdata(req);
  Node *n = node_of(cv, ino);
  git_blob *blob = NULL;
  if (!n || n->mode != GIT_FILEMODE_LINK) return (void)fuse_reply_err(req, EINVAL);
  if (git_blob_lookup(&blob, cv->repo, &n->oid) != 0) return (void)fuse_reply_err(req, EIO);
  g_autofree char *target = g_strndup(git_blob_rawcontent(blob), (gsize)git_blob_rawsize(blob));
  git_blob_free(blob);
  fuse_reply_readlink(req, target);
}

/* Read-only: the mount is, so the kernel refuses every change (and
 * answers access(2) for writing) itself.  A row per kind of node. */
// clang-format off
static const struct fuse_lowlevel_ops view_ops = {
  .lookup = op_lookup, .getattr = op_getattr, .readlink = op_readlink,
  .opendir = op_opendir, .readdir = op_readdir, .releasedir = op_releasedir,
  .open = op_open, .read = op_read, .release = op_release,
};
// clang-format on

static void *loop_main(void *data)
{
  BoxCheckpointView *cv = data;
  fuse_session_loop(cv->se);
  return NULL;
}

static void node_free(gpointer p)
{
  Node *n = p;
  g_free(n->key);
  g_free(n);
}

BoxCheckpointView *box_checkpoint_view_start(BoxConfig *cfg, const char *workspace,
                                             const char *mountpoint, GError **error)
{
  g_autofree char *repo = g_build_filename(cfg->box_dir, "private", "checkpoints.git", NULL);
  if (!g_file_test(repo, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, BOX_CHECKPOINTS_ERROR, 1, "the box has no checkpoints (%s)", repo);
    return NULL;
  }
  BoxCheckpoints *cp = box_checkpoints_open(repo, workspace, &cfg->checkpoints, error);
  if (!cp) return NULL;
  BoxCheckpointView *cv = g_new0(BoxCheckpointView, 1);
  cv->cp = cp;
  cv->repo = box_checkpoints_repository(cp);
  cv->nodes = g_ptr_array_new_with_free_func(node_free);
  cv->by_key = g_hash_table_new(g_str_hash, g_str_equal);
  cv->mounted = g_get_real_time() / G_USEC_PER_SEC;
  cv->mountpoint = g_strdup(mountpoint);
  const char *argv[] = { "boxfs-checkpoints", "-o", "ro,fsname=boxfs-checkpoints,subtype=boxfs",
                         NULL };
  struct fuse_args args = FUSE_ARGS_INIT(3, (char **)argv);
  cv->se = fuse_session_new(&args, &view_ops, sizeof view_ops, cv);
  fuse_opt_free_args(&args);
  if (!cv->se || fuse_session_mount(cv->se, mountpoint) != 0) {
    g_set_error(error, BOX_CHECKPOINTS_ERROR, 1, "cannot mount the checkpoints at %s", mountpoint);
    box_checkpoint_view_stop(cv);
    return NULL;
  }
  /* the loop thread takes none of the caller's signals */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  cv->thread_started = pthread_create(&cv->thread, NULL, loop_main, cv) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!cv->thread_started) {
    g_set_error(error, BOX_CHECKPOINTS_ERROR, 1, "cannot start the checkpoints' FUSE loop");
    box_checkpoint_view_stop(cv);
    return NULL;
  }
  return cv;
}

void box_checkpoint_view_stop(BoxCheckpointView *cv)
{
  if (!cv) return;
  if (cv->se) {
    fuse_session_exit(cv->se);
    int root = cv->thread_started ? open(cv->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    fuse_session_unmount(cv->se);
    box_vfs_wake_unmounted(root); /* the loop's read ends with a request */
    if (cv->thread_started) pthread_join(cv->thread, NULL);
    fuse_session_destroy(cv->se);
  }
  g_ptr_array_unref(cv->nodes);
  g_hash_table_unref(cv->by_key);
  box_checkpoints_close(cv->cp);
  g_free(cv->mountpoint);
  g_free(cv);
}
