/* changed.c — what a command changed in the bound roots, told to the
 * changed callback as it happens (checkpoints build on it). */
#include "vfs/vfs-private.h"

void vfs_changed(BoxVfs *v, const Caller *c, const char *path)
{
  if (!v->changed || !c->placed || c->cmd < 0 || !path) return;
  v->changed(v->changed_data, c->cmd, path);
}

void vfs_changed_node(BoxVfs *v, const Caller *c, Node *n)
{
  if (!v->changed || !c->placed || c->cmd < 0 || n->kind != NODE_PASS) return;
  g_mutex_lock(&v->lock);
  char *path = vfs_node_path(v, n);
  g_mutex_unlock(&v->lock);
  vfs_changed(v, c, path);
  g_free(path);
}
