/* attrs.c — attributes the kernel may keep after a decided GETATTR.
 *
 * Why: a path's GETATTR is a decision (fs:read, read_metadata), so the
 * attributes go back with timeout 0 and every stat(2) and fstat(2) asks
 * again: a program that opens and reads a file (CPython: fstat at open,
 * fstat again in read()) pays a round trip and a decision for each.  Once
 * the running command was permitted to read a node's metadata, and its
 * policy reads no history (the same request gets the same verdict, so a
 * second ask would be permitted again), the kernel may keep them
 * ("granted") while nothing else could use them without a decision:
 *   - only while that command is the one running command: a second
 *     command would read them undecided, so one that starts expires them
 *     all, and so does the end of the command they were granted to;
 *   - only where the watch (watch.c) reports changes made outside the
 *     mount: the node's directory (its own, for a directory) is marked,
 *     and a change another process makes expires the node's attributes as
 *     it expires a name.  Changes through the mount are the kernel's own:
 *     it drops what it keeps for an inode it writes, truncates, renames or
 *     links, and after a read (the access time).
 * The stats the kernel then answers itself are neither asked nor logged:
 * the log holds the command's first stat of the node, as the verdict cache
 * holds its verdict.  Attributes the kernel keeps when an expiry comes
 * are dropped by FUSE_NOTIFY_INVAL_INODE, which also voids a GETATTR
 * answer already on its way (the kernel compares attribute versions). */
#include "vfs/vfs-private.h"

#define ATTR_TIMEOUT_GRANTED 60.0

/* lock held: may c's command be granted n's attributes (its marks set
 * for the changes that expire them)? */
static bool may_grant(BoxVfs *v, const Caller *c, Node *n)
{
  if (!c->decides || !v->cache_decisions || !v->watch_thread || v->running_cmds != 1) return false;
  if (n->kind != NODE_PASS || n->special != SPECIAL_NONE || n->chain) return false;
  if (!vfs_holders_are(&n->held, c->cmd)) return false;
  /* a directory's own mark reports its names (its times) and its mode,
   * owner and times ("."); a file's, its directory's */
  if (S_ISDIR(n->ftype)) return vfs_watch_attrs(v, n);
  return n->parent && vfs_watch_attrs(v, n->parent);
}

/* lock held: the list down to the nodes granted now, each once (a node
 * whose grant ended at its last close and came again is listed twice) */
static void compact(BoxVfs *v)
{
  GArray *a = v->attr_grants;
  guint kept = 0;
  for (guint i = 0; i < a->len; i++) {
    fuse_ino_t ino = g_array_index(a, fuse_ino_t, i);
    Node *n = vfs_node_get(v, ino);
    if (n && n->attr_kept) {
      n->attr_kept = false; /* seen */
      g_array_index(a, fuse_ino_t, kept++) = ino;
    }
  }
  g_array_set_size(a, kept);
  for (guint i = 0; i < kept; i++)
    vfs_node_get(v, g_array_index(a, fuse_ino_t, i))->attr_kept = true;
  v->attr_compact_at = MAX(1024u, 2 * kept);
}

double vfs_attr_grant(BoxVfs *v, const Caller *c, Node *n)
{
  g_mutex_lock(&v->lock);
  bool yes = may_grant(v, c, n);
  if (yes && !n->attr_kept) {
    n->attr_kept = true;
    g_array_append_val(v->attr_grants, n->ino);
    if (v->attr_grants->len >= MAX(1024u, v->attr_compact_at)) compact(v);
  }
  g_mutex_unlock(&v->lock);
  return yes ? ATTR_TIMEOUT_GRANTED : 0.0;
}

void vfs_attr_flush(BoxVfs *v)
{
  g_mutex_lock(&v->lock);
  GArray *held = NULL;
  if (v->attr_grants && v->attr_grants->len) {
    held = v->attr_grants;
    v->attr_grants = g_array_new(FALSE, FALSE, sizeof(fuse_ino_t));
    /* only those still granted: a node freed is one the kernel forgot */
    guint kept = 0;
    for (guint i = 0; i < held->len; i++) {
      fuse_ino_t ino = g_array_index(held, fuse_ino_t, i);
      Node *n = vfs_node_get(v, ino);
      if (n && n->attr_kept) g_array_index(held, fuse_ino_t, kept++) = ino;
      if (n) n->attr_kept = false;
    }
    g_array_set_size(held, kept);
  }
  g_mutex_unlock(&v->lock);
  if (!held) return;
  for (guint i = 0; i < held->len; i++) vfs_attr_expire(v, g_array_index(held, fuse_ino_t, i));
  g_array_unref(held);
}

void vfs_attr_expire(BoxVfs *v, fuse_ino_t ino)
{
  if (v->se) fuse_lowlevel_notify_inval_inode(v->se, ino, -1, 0);
}

bool vfs_attr_granting(BoxVfs *v)
{
  g_mutex_lock(&v->lock);
  bool any = v->attr_grants && v->attr_grants->len > 0;
  g_mutex_unlock(&v->lock);
  return any;
}

bool vfs_attr_running(BoxVfs *v, Command *cm, bool running)
{
  if (cm->running == running) return false;
  cm->running = running;
  if (!running) {
    v->running_cmds--;
    return true; /* what was granted to it */
  }
  return ++v->running_cmds > 1;
}
