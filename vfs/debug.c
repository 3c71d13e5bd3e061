/* debug.c — counters for tests (box_vfs_debug_*). */
#include "vfs/vfs-private.h"

void box_vfs_debug_readdirplus(BoxVfs *v, guint64 *shown, guint64 *hidden)
{
  *shown = __atomic_load_n(&v->plus_shown, __ATOMIC_RELAXED);
  *hidden = __atomic_load_n(&v->plus_hidden, __ATOMIC_RELAXED);
}

guint64 box_vfs_debug_reach_walks(BoxVfs *v)
{
  return __atomic_load_n(&v->reach_walks, __ATOMIC_RELAXED);
}

guint64 box_vfs_debug_pass_lookups(BoxVfs *v)
{
  return __atomic_load_n(&v->pass_lookups, __ATOMIC_RELAXED);
}

guint64 box_vfs_debug_ram_lookups(BoxVfs *v)
{
  return __atomic_load_n(&v->ram_lookups, __ATOMIC_RELAXED);
}

guint64 box_vfs_debug_cache_hits(BoxVfs *v)
{
  return __atomic_load_n(&v->cache_hits, __ATOMIC_RELAXED);
}

guint64 box_vfs_debug_fdless_nodes(BoxVfs *v, guint *budget)
{
  g_mutex_lock(&v->lock);
  guint64 n = v->fdless_nodes;
  if (budget) *budget = v->node_fd_budget;
  g_mutex_unlock(&v->lock);
  return n;
}

guint64 box_vfs_debug_cancelled(BoxVfs *v)
{
  return __atomic_load_n(&v->cancelled, __ATOMIC_SEQ_CST);
}

guint box_vfs_debug_ram_nodes(BoxVfs *v)
{
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
