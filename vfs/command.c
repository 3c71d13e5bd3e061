/* command.c — commands: their RAM roots (a slot lent to one command at a
 * time, or the per-box area), the PID namespaces placed in them, their
 * denial texts, and their end. */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

Command *vfs_command(BoxVfs *v, int id)
{
  if (id < 0 || (guint)id >= v->commands->len) return NULL;
  Command *c = g_ptr_array_index(v->commands, id);
  return c->ended ? NULL : c;
}

void vfs_store_denial(BoxVfs *v, int cmd, pid_t tid, const char *text)
{
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

const char *vfs_denial_text(BoxVfs *v, int cmd, pid_t tid)
{
  Command *c = vfs_command(v, cmd);
  if (!c) return NULL;
  return g_hash_table_lookup(c->denials, GINT_TO_POINTER(tid));
}

static Node *ram_mkdir_p(BoxVfs *v, int cmd, Node *dir, const char *name, mode_t perm)
{
  Node *n = g_hash_table_lookup(dir->children, name);
  if (n) return S_ISDIR(n->mode) ? n : NULL;
  int err;
  return vfs_ram_new(v, cmd, dir, name, S_IFDIR | perm, 0, 0, &err);
}

static void mark_skeleton(Node *n);

/* lock held: the gateway's CA in c's .box (box_vfs_set_trust); part of a
 * slot's fixed layout, so no command removes or replaces it. */
static void add_trust(BoxVfs *v, Command *c)
{
  Node *box = g_hash_table_lookup(c->root->children, ".box");
  if (!box || box->special != SPECIAL_BOXDIR ||
      g_hash_table_lookup(box->children, "gateway-ca.pem"))
    return;
  int err;
  Node *f = vfs_ram_new(v, c->id, box, "gateway-ca.pem", S_IFREG | 0444, 0, 0, &err);
  if (!f) return;
  f->special = SPECIAL_TRUST;
  if (c->is_slot) mark_skeleton(f);
}

void box_vfs_set_trust(BoxVfs *v, const char *pem)
{
  g_mutex_lock(&v->lock);
  g_free(v->trust_pem);
  v->trust_pem = g_strdup(pem);
  for (guint i = 0; pem && i < v->commands->len; i++) {
    Command *c = vfs_command(v, (int)i);
    if (c && c->root) add_trust(v, c);
  }
  g_mutex_unlock(&v->lock);
}

/* lock held: a new command; with a RAM tree of its own (root named
 * root_name under /ram) unless it uses the per-box area. */
Command *vfs_command_create(BoxVfs *v, const char *root_name)
{
  Command *c = g_new0(Command, 1);
  c->id = (int)v->commands->len;
  c->area = c->id;
  c->pidns = g_array_new(FALSE, FALSE, sizeof(guint64));
  c->denials = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  c->denial_order = g_queue_new();
  c->verdicts = vfs_verdicts_new();
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
  /* the host's time zones are bound here read-only (box/shell_worker.c),
   * as they are in a tool's view; no name can be made in usr/ or
   * usr/share/ (a python3 takes them as holding nothing else:
   * box/worker_pool.c, usr_bare), only a bound root's own */
  Node *usr = ram_mkdir_p(v, c->id, root, "usr", 0755);
  Node *share = usr ? ram_mkdir_p(v, c->id, usr, "share", 0755) : NULL;
  if (share) ram_mkdir_p(v, c->id, share, "zoneinfo", 0755);
  if (usr) usr->closed = true;
  if (share) share->closed = true;
  Node *dev = ram_mkdir_p(v, c->id, root, "dev", 0755);
  const char *devs[] = { "null", "zero", "urandom", "random" };
  for (guint i = 0; dev && i < G_N_ELEMENTS(devs); i++)
    vfs_ram_new(v, c->id, dev, devs[i], S_IFREG | 0666, 0, 0, &err);
  for (guint i = 0; v->roots[i]; i++) {
    if (vfs_root_is_nested(v->roots, i)) continue;
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
    /* the tree's name, listed: its lookup is the tree's (op_lookup.c) */
    Node *tn = v->view_tree.name
                 ? vfs_ram_new(v, c->id, box, v->view_tree.name, S_IFDIR | 0555, 0, 0, &err)
                 : NULL;
    if (tn) tn->special = SPECIAL_TREE;
    if (v->trust_pem) add_trust(v, c);
  }
  return c;
}

/* lock held: marks the tree under n as a slot's fixed layout. */
static void mark_skeleton(Node *n)
{
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
static Command *slot_take(BoxVfs *v)
{
  Command *s = NULL;
  while (v->free_slots->len > 0 && !s) {
    int id = g_array_index(v->free_slots, int, v->free_slots->len - 1);
    g_array_set_size(v->free_slots, v->free_slots->len - 1);
    s = vfs_command(v, id);
  }
  if (!s) {
    char name[32];
    snprintf(name, sizeof name, "c%u", v->commands->len);
    s = vfs_command_create(v, name);
    s->is_slot = true;
    mark_skeleton(s->root);
  }
  s->slot_busy = true;
  return s;
}

int box_vfs_command_new(BoxVfs *v)
{
  g_mutex_lock(&v->lock);
  Command *c;
  if (v->box_area >= 0) {
    c = vfs_command_create(v, NULL);
    c->area = v->box_area;
  } else {
    Command *s = slot_take(v);
    c = vfs_command_create(v, NULL);
    c->area = s->id;
    c->slot_busy = true;
  }
  int id = c->id;
  g_mutex_unlock(&v->lock);
  return id;
}

int box_vfs_command_area(BoxVfs *v, int command)
{
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  int area = c ? c->area : -1;
  g_mutex_unlock(&v->lock);
  return area;
}

/* Made by boxd, not by the launch's own mkdir through the mount: the
 * scaffold is the launch's, not the command's, so no policy decides it and
 * the Shell, whose /tmp this is too, never lists it. */
bool box_vfs_ram_mount_point(BoxVfs *v, int command, const char *path, bool dir)
{
  g_mutex_lock(&v->lock);
  Command *cm = vfs_command(v, command);
  Command *area = cm ? vfs_command(v, cm->area) : NULL;
  Node *d = area ? area->root : NULL;
  gchar **comps = g_strsplit(path, "/", -1);
  guint last = g_strv_length(comps);
  while (last > 0 && comps[last - 1][0] == '\0') last--;
  for (guint k = 0; d && k < last; k++) {
    if (comps[k][0] == '\0') continue;
    if (!d->children || !S_ISDIR(d->mode)) {
      d = NULL;
      break;
    }
    Node *n = g_hash_table_lookup(d->children, comps[k]);
    if (!n) {
      int err;
      mode_t mode = k + 1 < last || dir ? S_IFDIR | 0755 : S_IFREG | 0444;
      n = vfs_ram_new(v, d->cmd, d, comps[k], mode, 0, 0, &err);
      if (n) n->mount_point = true;
    }
    d = n;
  }
  g_strfreev(comps);
  g_mutex_unlock(&v->lock);
  return d != NULL;
}

void vfs_pidns_entry_free(gpointer entry)
{
  PidnsEntry *e = entry;
  g_strfreev(e->reach_paths);
  g_free(e->reach);
  g_free(e);
}

static bool attach(BoxVfs *v, int command, pid_t pid, bool is_tool, const char *const *paths,
                   const char *reach, GError **error);

/* The lookup a tool's launch replays on its /tmp (tools/launch.c,
 * place_tmp): component by component, never through a symlink or a
 * launch's mount point, so the answer is the file the tool would run. */
bool box_vfs_ram_executable(BoxVfs *v, int command, const char *path)
{
  g_mutex_lock(&v->lock);
  Command *cm = vfs_command(v, command);
  Command *area = cm ? vfs_command(v, cm->area) : NULL;
  Node *n = area ? area->root : NULL;
  gchar **comps = g_strsplit(path, "/", -1);
  for (gchar **k = comps; n && *k; k++) {
    if (!**k) continue;
    n = S_ISDIR(n->mode) && n->children ? g_hash_table_lookup(n->children, *k) : NULL;
    if (n && n->mount_point) n = NULL;
  }
  g_strfreev(comps);
  bool ok = n && S_ISREG(n->mode) && (n->mode & 0111);
  g_mutex_unlock(&v->lock);
  return ok;
}

bool box_vfs_command_attach(BoxVfs *v, int command, pid_t pid, bool is_tool, GError **error)
{
  return attach(v, command, pid, is_tool, NULL, NULL, error);
}

bool box_vfs_tool_attach(BoxVfs *v, int command, pid_t pid, const char *const *paths,
                         const char *reach, GError **error)
{
  g_return_val_if_fail(paths && reach && strlen(reach) == g_strv_length((char **)paths), false);
  return attach(v, command, pid, true, paths, reach, error);
}

static bool attach(BoxVfs *v, int command, pid_t pid, bool is_tool, const char *const *paths,
                   const char *reach, GError **error)
{
  guint64 ns;
  if (!vfs_pidns_inode(pid, &ns)) {
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
    PidnsEntry *e = g_hash_table_lookup(v->pidns, &ns);
    g_strfreev(e->reach_paths);
    g_free(e->reach);
    e->reach_paths = paths ? g_strdupv((char **)paths) : NULL;
    e->reach = g_strdup(reach);
    ok = true;
  }
  g_mutex_unlock(&v->lock);
  return ok;
}

void box_vfs_command_set_running(BoxVfs *v, int command, bool running)
{
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  bool flush = c && vfs_attr_running(v, c, running);
  g_mutex_unlock(&v->lock);
  if (flush) vfs_attr_flush(v);
}

static void ram_clear(BoxVfs *v, Node *dir)
{
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
static void slot_reset_dir(BoxVfs *v, Node *dir, GArray *gone)
{
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
      SlotInval g = { n->ino, NULL };
      g_array_append_val(gone, g);
    }
  }
  for (guint i = 0; i < names->len; i++) {
    const char *nm = g_ptr_array_index(names, i);
    Node *n = g_hash_table_lookup(dir->children, nm);
    if (n && S_ISDIR(n->mode) && n->children) ram_clear(v, n);
    vfs_ram_unlink(v, dir, nm);
    SlotInval g = { dir->ino, g_strdup(nm) };
    g_array_append_val(gone, g);
    changed = true;
  }
  g_ptr_array_unref(names);
  if (changed) {
    dir->mode = dir->skel_mode;
    dir->uid = 0;
    dir->gid = 0;
    SlotInval g = { dir->ino, NULL };
    g_array_append_val(gone, g);
  }
}

static GArray *slot_reset(BoxVfs *v, Node *root)
{
  GArray *gone = g_array_new(FALSE, FALSE, sizeof(SlotInval));
  slot_reset_dir(v, root, gone);
  return gone;
}

void box_vfs_command_end(BoxVfs *v, int command)
{
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  if (!c) {
    g_mutex_unlock(&v->lock);
    return;
  }
  c->ended = true;
  bool granted = vfs_attr_running(v, c, false);
  vfs_job_cancel_command(v, command);
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
  bool published = c->live_published;
  c->live_published = false;
  fuse_ino_t ramino = v->ramdir->ino;
  bool own_tree = c->root != NULL;
  Command *slot = c->slot_busy ? vfs_command(v, c->area) : NULL;
  c->slot_busy = false;
  GArray *gone = NULL;
  if (slot) gone = slot_reset(v, slot->root);
  g_mutex_unlock(&v->lock);
  if (granted) vfs_attr_flush(v);
  vfs_live_withdraw(v, command, published);

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
      if (g->name)
        fuse_lowlevel_notify_inval_entry(v->se, g->parent, g->name, strlen(g->name));
      else
        fuse_lowlevel_notify_inval_inode(v->se, g->parent, -1, 0);
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
