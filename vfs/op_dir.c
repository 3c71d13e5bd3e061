/* op_dir.c — listing directories: OPENDIR, READDIR, READDIRPLUS, FSYNCDIR. */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void vfs_run_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  Caller c;
  Node *n = vfs_pin_request(v, req, ino, NULL, &c);
  if (!n) return;
  int err = 0;
  if (n->kind == NODE_PASS || n->kind == NODE_RAM) {
    bool dir = is_pass(n) ? S_ISDIR(n->ftype) : S_ISDIR(n->mode);
    if (!dir) err = ENOTDIR;
  }
  if (!err && (n->kind == NODE_PASS || (n->kind == NODE_RAM && n->special == SPECIAL_NONE) ||
               n->special == SPECIAL_CMDROOT))
    err = vfs_decide_opendir(v, &c, n);
  if (!err) err = vfs_check_perm(v, n, &c, R_OK);
  Fh *fh = NULL;
  if (!err && is_pass(n)) {
    int fd = vfs_pass_reach(v, &c, n, O_RDONLY | O_DIRECTORY, "fs:read");
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (fd < 0) {
      err = -fd;
    } else if (!d) {
      err = errno;
      close(fd);
    } else {
      fh = vfs_fh_new(FH_PASS_DIR, c.cmd, n);
      fh->dir = d;
    }
  } else if (!err) {
    fh = vfs_fh_new(n->kind == NODE_RAM ? FH_RAM_DIR : FH_VDIR, c.cmd, n);
  }
  if (err) {
    vfs_unpin(v, n);
    vfs_reply_err(req, err);
    return;
  }
  if (c.decides) vfs_fh_hold(v, fh, true, false);
  fi->fh = (uint64_t)(uintptr_t)fh;
  if (vfs_reply_open(req, fi) != 0) vfs_fh_free(v, fh);
}

static void add_ent(GArray *a, const char *name, fuse_ino_t ino, unsigned char type)
{
  DirEnt e = { g_strdup(name), ino, type };
  g_array_append_val(a, e);
}

static fuse_ino_t shown_ino(Node *n)
{
  return n->kind == NODE_PASS ? (fuse_ino_t)n->rino : (n->ino | VFS_RAM_INO_BIT);
}

static void fill_entries(BoxVfs *v, Fh *fh, const Caller *c)
{
  if (fh->entries) {
    for (guint i = 0; i < fh->entries->len; i++) g_free(g_array_index(fh->entries, DirEnt, i).name);
    g_array_unref(fh->entries);
  }
  fh->entries = g_array_new(FALSE, FALSE, sizeof(DirEnt));
  if (fh->kind == FH_PASS_DIR) {
    rewinddir(fh->dir);
    struct dirent *de;
    while ((de = readdir(fh->dir)) != NULL) add_ent(fh->entries, de->d_name, de->d_ino, de->d_type);
    return;
  }
  g_mutex_lock(&v->lock);
  Node *n = fh->node;
  add_ent(fh->entries, ".", shown_ino(n), DT_DIR);
  add_ent(fh->entries, "..", n->parent ? shown_ino(n->parent) : shown_ino(n), DT_DIR);
  if (n->kind == NODE_RAMDIR) {
    Command *cm = vfs_command(v, c->cmd);
    Command *area = cm && cm->area != cm->id ? vfs_command(v, cm->area) : NULL;
    if (cm && cm->root) {
      char name[32];
      snprintf(name, sizeof name, "c%d", c->cmd);
      add_ent(fh->entries, name, shown_ino(cm->root), DT_DIR);
    } else if (area && area->root) {
      add_ent(fh->entries, area->root->name, shown_ino(area->root), DT_DIR);
    }
  } else if (n->special == SPECIAL_COMMANDS) {
    g_mutex_unlock(&v->lock);
    GPtrArray *names = vfs_view_command_names(v);
    g_mutex_lock(&v->lock);
    /* d_ino: informational; the lookup gives the real node */
    for (guint i = 0; i < names->len; i++)
      add_ent(fh->entries, g_ptr_array_index(names, i), (fuse_ino_t)(i + 3) | VFS_RAM_INO_BIT,
              DT_REG);
    g_ptr_array_unref(names);
  } else if (n->children) {
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init(&it, n->children);
    while (g_hash_table_iter_next(&it, &key, &val)) {
      Node *ch = val;
      /* hidden from the agent; an operator's view is there to show it */
      if (ch->special == SPECIAL_BOXDIR && !v->view_log) continue;
      if (ch->mount_point && !c->is_tool) continue;
      mode_t m = ch->kind == NODE_PASS ? ch->ftype : ch->mode;
      add_ent(fh->entries, key, shown_ino(ch), dtype_of(m));
    }
  }
  g_mutex_unlock(&v->lock);
}

/* One entry of a listing and the offset after it.  A real directory is read
 * from its stream (offsets are the directory's own, d_off: no copy of the
 * names, one read per entry as the kernel asks); others from the snapshot
 * made at offset 0 (offsets are indices). */
typedef struct {
  const char *name;
  fuse_ino_t ino;
  unsigned char type;
  off_t next;
} ListEnt;

static bool list_at(BoxVfs *v, Fh *fh, const Caller *c, off_t off, ListEnt *out)
{
  if (fh->kind == FH_PASS_DIR) {
    if (off != fh->pos || off == 0) {
      if (off == 0)
        rewinddir(fh->dir);
      else
        seekdir(fh->dir, off);
      fh->ent = NULL;
      fh->pos = off;
    }
    if (!fh->ent) fh->ent = readdir(fh->dir);
    if (!fh->ent) return false;
    *out = (ListEnt){ fh->ent->d_name, fh->ent->d_ino, fh->ent->d_type, fh->ent->d_off };
    return true;
  }
  if (off == 0 || !fh->entries) fill_entries(v, fh, c);
  if (off < 0 || (guint64)off >= fh->entries->len) return false;
  DirEnt *d = &g_array_index(fh->entries, DirEnt, (guint)off);
  *out = (ListEnt){ d->name, d->d_ino, d->type, off + 1 };
  return true;
}

/* The entry list_at gave was sent. */
static void list_sent(Fh *fh, const ListEnt *e)
{
  if (fh->kind != FH_PASS_DIR) return;
  fh->ent = NULL;
  fh->pos = e->next;
}

/* The open directory a READDIR or READDIRPLUS lists, or NULL (answered
 * EACCES): its caller must be placed and able to reach a RAM directory. */
static Fh *listing_handle(BoxVfs *v, fuse_req_t req, struct fuse_file_info *fi, Caller *c)
{
  vfs_place(v, req, fi, c);
  Fh *fh = FH(fi);
  if (!fh || !c->placed || (fh->node->kind == NODE_RAM && !vfs_ram_reachable(c, fh->node))) {
    vfs_reply_err(req, EACCES);
    return NULL;
  }
  vfs_place_node(v, c, fh->node->ino);
  return fh;
}

/* READDIR's reply: names, their d_ino and type. */
static void fill_readdir(BoxVfs *v, fuse_req_t req, Fh *fh, const Caller *c, size_t size, off_t off)
{
  char *buf = g_malloc(size);
  size_t pos = 0;
  ListEnt e;
  for (off_t at = off; list_at(v, fh, c, at, &e); at = e.next) {
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_ino = (ino_t)e.ino;
    st.st_mode = (mode_t)e.type << 12;
    size_t need = fuse_add_direntry(req, buf + pos, size - pos, e.name, &st, e.next);
    if (need > size - pos) break;
    pos += need;
    list_sent(fh, &e);
  }
  fuse_reply_buf(req, buf, pos);
  g_free(buf);
}

/* ---- readdirplus ----
 *
 * The kernel asks for READDIRPLUS (auto mode: on a listing's first batch and
 * after lookups in the directory, the `ls -l` pattern) to get each entry's
 * node and attributes with its name, saving a LOOKUP per entry.  Disclosure:
 * the opendir's `enumerate` permit covers the names (and d_ino, type), not
 * the attributes.  An entry comes with its node and attributes only where a
 * read_metadata of that very path would be permitted, as far as known
 * without deciding anything: the command holds that permit already in its
 * decision cache (decided before: logged, or asked quietly by the probe of
 * a name then missing) and the reach floor does not refuse the object.
 * Every other entry is sent without a node (nodeid 0: the
 * kernel then keeps only the name, as from READDIR), so its attributes stay
 * behind a GETATTR, which is decided.  A caller that decides nothing (a
 * tool, boxd's setup) is answered as its GETATTRs would be: with nodes and
 * attributes.  Attributes are sent with attr_timeout 0, as by LOOKUP, so a
 * stat of the entry is still a GETATTR, decided and logged. */
/* Policy's part; path: the entry's, for the floor's part, which compares the
 * identity plus_entry reads (a walk of the host path per entry cost more
 * than the rest of a listing's work). */
static bool plus_may_show(BoxVfs *v, const Caller *c, Fh *fh, const char *dirpath, const char *name,
                          char path[PATH_MAX])
{
  if (!dirpath) return false;
  const char *parts[] = { strcmp(dirpath, "/") == 0 ? "" : dirpath, "/", name };
  if (!vfs_concat(path, PATH_MAX, parts, G_N_ELEMENTS(parts))) return false;
  return vfs_verdict_cached_permit(v, c->cmd, "fs:read", "read_metadata", path,
                                   fh->kind == FH_PASS_DIR);
}

/* The node and attributes for a shown entry (a kernel reference taken), or
 * false: the entry goes without them. */
static bool plus_entry(BoxVfs *v, Fh *fh, const Caller *c, const char *name,
                       struct fuse_entry_param *e)
{
  if (fh->kind == FH_PASS_DIR) {
    int dfd = dirfd(fh->dir);
    if (dfd < 0 || vfs_pass_child(v, fh->node, dfd, name, e) != 0) return false;
    if (c->is_tool) e->entry_timeout = 0.0; /* as a tool's LOOKUP (op_lookup.c) */
    return true;
  }
  bool ok = false;
  g_mutex_lock(&v->lock);
  Node *n = fh->node->children ? g_hash_table_lookup(fh->node->children, name) : NULL;
  n = vfs_view_shown(v, fh->node, n);
  if (n && n->special == SPECIAL_NONE && vfs_reach(c, n) == 0) ok = vfs_fill_entry(v, n, e) == 0;
  g_mutex_unlock(&v->lock);
  return ok;
}

/* READDIRPLUS's reply: an entry's node and attributes only where shown. */
static void fill_readdirplus(BoxVfs *v, fuse_req_t req, Fh *fh, const Caller *c, size_t size,
                             off_t off)
{
  bool real = fh->kind == FH_PASS_DIR || fh->kind == FH_RAM_DIR;
  char *dirpath = real ? vfs_path_of(v, fh->node) : NULL;
  char *buf = g_malloc(size);
  size_t pos = 0;
  GArray *given = g_array_new(FALSE, FALSE, sizeof(fuse_ino_t)); /* references to drop on failure */
  ListEnt le;
  for (off_t at = off; list_at(v, fh, c, at, &le); at = le.next) {
    const ListEnt *d = &le;
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    /* room first: a reference taken for an entry that does not fit would leak */
    if (fuse_add_direntry_plus(req, NULL, 0, d->name, &e, 0) > size - pos) break;
    bool dot = strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0;
    bool deciding = c->decides && v->decide;
    char path[PATH_MAX];
    bool shown = real && !dot && (!deciding || plus_may_show(v, c, fh, dirpath, d->name, path)) &&
                 plus_entry(v, fh, c, d->name, &e);
    if (shown && deciding && fh->kind == FH_PASS_DIR &&
        vfs_floor_refuses(v, path, &(VfsObjId){ e.attr.st_dev, e.attr.st_ino })) {
      g_mutex_lock(&v->lock);
      vfs_node_forget(v, e.ino, 1);
      g_mutex_unlock(&v->lock);
      shown = false;
    }
    if (shown) {
      vfs_attr_out(v, &e.attr);
      g_array_append_val(given, e.ino);
      __atomic_add_fetch(&v->plus_shown, 1, __ATOMIC_RELAXED);
    } else {
      if (!dot) __atomic_add_fetch(&v->plus_hidden, 1, __ATOMIC_RELAXED);
      memset(&e, 0, sizeof e);
      e.attr.st_ino = (ino_t)d->ino;
      e.attr.st_mode = (mode_t)d->type << 12;
    }
    pos += fuse_add_direntry_plus(req, buf + pos, size - pos, d->name, &e, d->next);
    list_sent(fh, d);
  }
  if (fuse_reply_buf(req, buf, pos) != 0) {
    g_mutex_lock(&v->lock);
    for (guint i = 0; i < given->len; i++)
      vfs_node_forget(v, g_array_index(given, fuse_ino_t, i), 1);
    g_mutex_unlock(&v->lock);
  }
  g_array_unref(given);
  g_free(buf);
  g_free(dirpath);
}

/* The listing's handle (or the refusal answered), then its reply. */
static void list_request(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi,
                         void (*fill)(BoxVfs *, fuse_req_t, Fh *, const Caller *, size_t, off_t))
{
  BoxVfs *v = V(req);
  Caller c;
  Fh *fh = listing_handle(v, req, fi, &c);
  if (fh) fill(v, req, fh, &c, size, off);
}

void vfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
  const BoxVfsTree *t = vfs_tree_of(req, ino);
  if (t) return t->readdir(t->data, req, ino, size, off, fi, false);
  list_request(req, size, off, fi, fill_readdir);
}

void vfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                        struct fuse_file_info *fi)
{
  const BoxVfsTree *t = vfs_tree_of(req, ino);
  if (t) return t->readdir(t->data, req, ino, size, off, fi, true);
  list_request(req, size, off, fi, fill_readdirplus);
}

void vfs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
  BoxVfs *v = V(req);
  if (vfs_tree_of(req, ino)) return (void)fuse_reply_err(req, 0);
  int err;
  Fh *fh = vfs_fh_check(v, req, fi, &err);
  if (fh && fh->kind == FH_PASS_DIR) {
    int fd = dirfd(fh->dir);
    if ((datasync ? fdatasync(fd) : fsync(fd)) < 0) err = errno;
  }
  vfs_reply_err(req, err);
}
