/* probe.c — the questions a deciding caller's lookup asks of a name
 * before the walk goes on (may the command read it, or else write it?),
 * asked quietly where the policy reads no history. */
#include "vfs/vfs-private.h"

#include <string.h>

/* Whether a walk may have to go through the directory path (spelled):
 * policy may permit something below it, or it is a bound root or above
 * one (a bind sits on it, and a lookup the kernel makes again and sees
 * fail detaches every mount on the name).  A RAM directory, the command's
 * own, is always walked. */
static bool walk_needs(BoxVfs *v, const char *path, const char *spelled, bool host_backed)
{
  if (!host_backed || !v->beneath) return true;
  /* above the home, paths below are spelled ~/...: policy cannot tell */
  if (v->operator_home && box_path_within(v->operator_home, path)) return true;
  for (char **r = v->roots; *r; r++)
    if (box_path_within(*r, path)) return true;
  g_mutex_lock(&v->lock);
  gpointer seen = g_hash_table_lookup(v->beneath_seen, spelled);
  g_mutex_unlock(&v->lock);
  if (seen) return GPOINTER_TO_INT(seen) == 2;
  bool may = v->beneath(v->decide_data, spelled);
  g_mutex_lock(&v->lock);
  if (g_hash_table_size(v->beneath_seen) >= VFS_VERDICTS_MAX)
    g_hash_table_remove_all(v->beneath_seen);
  g_hash_table_replace(v->beneath_seen, g_strdup(spelled), GINT_TO_POINTER(may ? 2 : 1));
  g_mutex_unlock(&v->lock);
  return may;
}

typedef enum {
  REFUSE_NEVER,    /* only *may_read is asked */
  REFUSE,          /* a name acted on */
  REFUSE_UNWALKED, /* a directory: refused unless a walk may need it (walk_needs) */
} Refuse;

/* The two questions a deciding caller's lookup asks of a name, before the
 * walk goes on: may the command read the path (*may_read), or else write
 * it?  0 if either; else EACCES, the read denial recorded, the same whether
 * the name exists or not (with REFUSE_NEVER, only the first is asked, and
 * the answer is 0).  A policy that reads no history answers them
 * without their ::request events: a walk the command may make is no request
 * (nothing is logged either); only a refusal becomes one. */
static int probe(BoxVfs *v, const Caller *c, const char *path, bool host_backed, bool quiet,
                 Refuse refuse, bool *may_read)
{
  char *spelled_own;
  const char *spelled = vfs_spelled(v, path, host_backed, &spelled_own);
  json_object *input = vfs_fs_input(spelled, "read_metadata");
  vfs_history_batch_open(v);
  BoxDecision *d = vfs_verdict_ask(v, c->cmd, "fs:read", input, spelled, "read_metadata", quiet);
  int rc = 0;
  *may_read = d && d->verdict == BOX_VERDICT_PERMIT;
  if (!*may_read && refuse != REFUSE_NEVER) {
    json_object *win = vfs_fs_input(spelled, "write_content");
    BoxDecision *w = vfs_verdict_ask(v, c->cmd, "fs:write", win, spelled, "write_content", quiet);
    bool may_write = w && w->verdict == BOX_VERDICT_PERMIT;
    if (w) box_decision_free(w);
    vfs_fs_input_done(win, false);
    /* a directory some walk may need is shown (its type only) */
    bool walked =
      !may_write && refuse == REFUSE_UNWALKED && walk_needs(v, path, spelled, host_backed);
    if (!may_write && !walked) {
      if (!d) {
        char *text = g_strdup_printf("%s: no decision could be made", spelled);
        d = box_decision_new_enforcement("fs:read", spelled, "internal", text);
        g_free(text);
      } else if (quiet && v->note) {
        v->note(v->decide_data, c->cmd, "fs:read", input, d);
      }
      rc = vfs_finish_decision(v, c, "fs:read", input, d);
      d = NULL;
    }
  }
  if (d) box_decision_free(d);
  vfs_fs_input_done(input, false);
  g_free(spelled_own);
  return rc;
}

bool box_vfs_lookup_refuses(BoxVfs *v, int cmd, const char *path)
{
  if (!v->decide || !v->cache_decisions || !v->decide_quiet || !v->beneath || !path) return false;
  char *spelled_own;
  const char *spelled = vfs_spelled(v, path, true, &spelled_own);
  bool refused = false;
  const char *ops[][2] = { { "fs:read", "read_metadata" }, { "fs:write", "write_content" } };
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
    json_object *input = vfs_fs_input(spelled, ops[i][1]);
    BoxDecision *d = vfs_verdict_ask(v, cmd, ops[i][0], input, spelled, ops[i][1], true);
    refused = d && d->verdict != BOX_VERDICT_PERMIT;
    if (d) box_decision_free(d);
    vfs_fs_input_done(input, false);
    if (!refused) break;
  }
  if (refused) refused = !walk_needs(v, path, spelled, true);
  g_free(spelled_own);
  return refused;
}

/* A name the walk did not find: ENOENT, or EACCES as probe says. */
int vfs_probe_absent(BoxVfs *v, const Caller *c, const char *path, bool host_backed)
{
  if (!c->decides || !v->decide || !path) return ENOENT;
  bool quiet = v->cache_decisions && v->decide_quiet, may_read;
  int rc = probe(v, c, path, host_backed, quiet, REFUSE, &may_read);
  return rc ? rc : ENOENT;
}

int vfs_probe_present(BoxVfs *v, const Caller *c, const char *path, bool host_backed, bool walked,
                      bool *may_read)
{
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
