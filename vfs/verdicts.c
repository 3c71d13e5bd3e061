/* verdicts.c — the decision cache (cache_decisions): a command's verdicts
 * per (action, operation, path), reused while the policy reads no history. */
#include "vfs/vfs-private.h"

#include <limits.h>
#include <string.h>

/* A cached verdict: its key, then the decision, in one allocation, since
 * one is stored for almost every decided operation.  The table's key owns
 * the block (a value is never freed on its own). */
typedef BoxPackedDecision Cached;

/* A verdict's key is an action, an operation and a path, some 60 bytes or
 * more, hashed on every decided operation: eight bytes a step (g_str_hash
 * takes one). */
static guint verdict_hash(gconstpointer key)
{
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

GHashTable *vfs_verdicts_new(void)
{
  return g_hash_table_new_full(verdict_hash, g_str_equal, g_free, NULL);
}

/* Policy's verdict on (action, input), from the command's cache when the
 * same request was decided before.  A verdict is a function of the request
 * alone only for a policy that reads no history (the caller vouches for
 * that with cache_decisions), so reusing it changes no later verdict. */
BoxDecision *vfs_verdict_ask(BoxVfs *v, int cmd, const char *action, json_object *input,
                             const char *spelled, const char *operation, bool quiet)
{
  if (!v->cache_decisions) return v->decide(v->decide_data, cmd, action, input);
  /* the key on the stack (copied only into the cache): a hit allocates nothing */
  char buf[PATH_MAX + 64];
  const char *parts[] = { action, "\x1f", operation, "\x1f", spelled };
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

bool vfs_verdict_cached_permit(BoxVfs *v, int cmd, const char *action, const char *operation,
                               const char *path, bool host_backed)
{
  if (!v->cache_decisions || !path) return false;
  /* the key in a buffer on the stack: a listing asks this for every entry */
  char buf[PATH_MAX + 64];
  const char *spelled = path;
  const char *home = v->operator_home;
  bool tilde = false;
  if (host_backed && home && home[0] == '/' && home[1] != '\0' && box_path_within(path, home)) {
    spelled = path + strlen(home);
    tilde = true;
  }
  const char *parts[] = { action, "\x1f", operation, "\x1f", tilde ? "~" : "", spelled };
  if (!vfs_concat(buf, sizeof buf, parts, G_N_ELEMENTS(parts))) return false;
  g_mutex_lock(&v->lock);
  Command *cm = vfs_command(v, cmd);
  Cached *d = cm ? g_hash_table_lookup(cm->verdicts, buf) : NULL;
  bool permit = d && d->verdict == BOX_VERDICT_PERMIT;
  g_mutex_unlock(&v->lock);
  return permit;
}

void box_vfs_invalidate_decisions(BoxVfs *v)
{
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
