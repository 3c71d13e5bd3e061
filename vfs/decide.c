/* decide.c — where every fs:* decision is asked: the operation's input,
 * the ask (through the decision cache), the floor applied after a permit,
 * the record and the denial text, and the enforcement denials the mount
 * raises itself. */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

int vfs_finish_decision(BoxVfs *v, const Caller *c, const char *action, json_object *input,
                        BoxDecision *d)
{
  if (v->record) v->record(v->decide_data, c->cmd, action, input, d);
  int rc = 0;
  if (d->verdict != BOX_VERDICT_PERMIT) {
    vfs_store_denial(v, c->cmd, c->tid, d->message ? d->message : d->reason);
    rc = EACCES;
  }
  box_decision_free(d);
  return rc;
}

/* A decided operation's input, {"path": spelled, "operation": operation}.
 * Made for every decided operation, so each thread keeps one and fills it
 * again: json-c builds an object in five allocations, three of them callocs,
 * which glibc serves without the thread's cache.  The keys are literals,
 * added once each (no copy of a key, no search for one already there). */
typedef struct {
  json_object *in, *path, *operation; /* the spare input and its two values */
} SpareInput;

static void spare_input_free(gpointer p)
{
  SpareInput *s = p;
  if (s->in) json_object_put(s->in);
  g_free(s);
}
static GPrivate spare_input = G_PRIVATE_INIT(spare_input_free);

json_object *vfs_fs_input(const char *spelled, const char *operation)
{
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
void vfs_fs_input_done(json_object *in, bool shared)
{
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
    json_object_object_foreach (in, key, val) {
      keys++;
      if (strcmp(key, "path") == 0)
        path = val;
      else if (strcmp(key, "operation") == 0)
        operation = val;
    }
  }
  if (keys != 2 || !json_object_is_type(path, json_type_string) ||
      !json_object_is_type(operation, json_type_string)) {
    json_object_put(in);
    return;
  }
  s->in = in;
  s->path = path;
  s->operation = operation;
}

int vfs_decide(BoxVfs *v, const Caller *c, const char *action, const char *path, bool host_backed,
               const char *operation, bool mutating)
{
  return vfs_decide_obj(v, c, action, path, host_backed, operation, mutating, NULL);
}

int vfs_decide_obj(BoxVfs *v, const Caller *c, const char *action, const char *path,
                   bool host_backed, const char *operation, bool mutating, const VfsObjId *obj)
{
  if (!c->decides || !v->decide) return vfs_tool_floor(v, c, path, host_backed, mutating, obj);
  if (!path) path = "/";
  char *spelled_own;
  const char *spelled = vfs_spelled(v, path, host_backed, &spelled_own);
  json_object *input = vfs_fs_input(spelled, operation);
  Job *job = vfs_job_current();
  if (job && !vfs_job_decide_begin(job)) {
    /* interrupted before policy was asked: nothing decided, nothing logged */
    vfs_fs_input_done(input, false);
    g_free(spelled_own);
    return EINTR;
  }
  vfs_history_batch_open(v);
  BoxDecision *d = vfs_verdict_ask(v, c->cmd, action, input, spelled, operation, false);
  bool live = !job || vfs_job_decide_end(job);
  if (!d) {
    char *text = g_strdup_printf("%s: no decision could be made", spelled);
    d = box_decision_new_enforcement(action, spelled, "internal", text);
    g_free(text);
  } else if (d->verdict == BOX_VERDICT_PERMIT && host_backed) {
    const char *why = vfs_floor_reason_obj(v, path, mutating, obj);
    if (why) {
      char *text = g_strdup_printf("%s: %s", spelled, why);
      box_decision_free(d);
      d = box_decision_new_enforcement(action, spelled, "reach-floor", text);
      g_free(text);
    }
  }
  /* Cancelled while policy decided: the decision is logged all the same,
   * the request was answered EINTR and nothing is done. */
  int rc = vfs_finish_decision(v, c, action, input, d);
  bool raised = rc == 0 && v->outcome;
  if (raised) vfs_outcome_push(v, c->cmd, action, input);
  if (!live) rc = EINTR;
  vfs_fs_input_done(input, raised);
  g_free(spelled_own);
  return rc;
}

void vfs_enforce(BoxVfs *v, const Caller *c, const char *action, const char *path, bool host_backed,
                 const char *gate, const char *why)
{
  if (!c->decides) return;
  if (!path) path = "/";
  char *spelled_own;
  const char *spelled = vfs_spelled(v, path, host_backed, &spelled_own);
  char *text = g_strdup_printf("%s: %s", spelled, why);
  json_object *input = vfs_fs_input(spelled, "other");
  BoxDecision *d = box_decision_new_enforcement(action, spelled, gate, text);
  vfs_finish_decision(v, c, action, input, d);
  vfs_fs_input_done(input, false);
  g_free(text);
  g_free(spelled_own);
}

/* ---- what each operation asks ----
 * The legs every FUSE operation raises, in the order they are asked; the
 * handlers (op_*.c) act on a permit.  A LOOKUP asks nothing here: its
 * questions are the probes (probe.c). */

/* A leg on node n's own path; with_obj: the floor compares n's identity. */
static int decide_node(BoxVfs *v, const Caller *c, Node *n, const char *action,
                       const char *operation, bool mutating, bool with_obj)
{
  g_autofree char *path = vfs_path_of(v, n);
  VfsObjId id = { n->rdev_key, n->rino };
  return vfs_decide_obj(v, c, action, path, is_pass(n), operation, mutating,
                        with_obj && is_pass(n) ? &id : NULL);
}

/* GETATTR by path (fstat of an open handle is covered by its opening). */
int vfs_decide_getattr(BoxVfs *v, const Caller *c, Node *n)
{
  return decide_node(v, c, n, "fs:read", "read_metadata", false, true);
}

int vfs_decide_setattr(BoxVfs *v, const Caller *c, Node *n, int to_set)
{
  g_autofree char *path = vfs_path_of(v, n);
  int err = 0;
  if (to_set & FUSE_SET_ATTR_MODE)
    err = vfs_decide(v, c, "fs:write", path, is_pass(n), "set_permissions", true);
  if (!err &&
      (to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID | FUSE_SET_ATTR_ATIME |
                 FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW)))
    err = vfs_decide(v, c, "fs:write", path, is_pass(n), "write_content", true);
  return err;
}

int vfs_decide_access(BoxVfs *v, const Caller *c, Node *n, bool is_dir)
{
  return decide_node(v, c, n, "fs:read", is_dir ? "change_dir" : "read_metadata", false, false);
}

int vfs_decide_readlink(BoxVfs *v, const Caller *c, Node *n)
{
  return decide_node(v, c, n, "fs:read", "read_link", false, false);
}

/* OPEN: a read-only open (no O_TRUNC) reads, any other writes. */
int vfs_decide_open(BoxVfs *v, const Caller *c, Node *n, bool reads_only)
{
  return reads_only ? decide_node(v, c, n, "fs:read", "read_content", false, true)
                    : decide_node(v, c, n, "fs:write", "write_content", true, true);
}

int vfs_decide_opendir(BoxVfs *v, const Caller *c, Node *n)
{
  return decide_node(v, c, n, "fs:read", "enumerate", false, true);
}

/* CREATE: the kernel sends it for a name its lookup found missing, so the
 * floor is asked of no object (the file is then made with O_EXCL). */
int vfs_decide_create(BoxVfs *v, const Caller *c, const char *path, bool pass)
{
  VfsObjId none = { 0, 0 };
  if (!c->decides || !v->decide)
    return vfs_tool_floor_make(v, c, path, pass, true, true, pass ? &none : NULL);
  return vfs_decide_obj(v, c, "fs:write", path, pass, "write_content", true, pass ? &none : NULL);
}

/* MKDIR and MKNOD write the new name (at: what is there now); SYMLINK
 * (link: its target as written, relative to dirpath) is decided on the
 * target too, and only for a deciding caller. */
int vfs_decide_make(BoxVfs *v, const Caller *c, const char *path, bool pass, const char *dirpath,
                    mode_t type, const char *link, const VfsObjId *at)
{
  if (!c->decides || !v->decide) return vfs_tool_floor_make(v, c, path, pass, true, true, at);
  if (!link)
    return vfs_decide_obj(v, c, "fs:write", path, pass,
                          S_ISDIR(type) ? "create_dir" : "write_content", true, at);
  g_autofree char *joined = link[0] == '/' ? g_strdup(link) : vfs_child_path(dirpath, link);
  g_autofree char *target = vfs_normalize(joined);
  bool tb = vfs_host_backed(v, target);
  int err = vfs_decide(v, c, "fs:write", target, tb, "symlink", true);
  if (!err) err = vfs_decide(v, c, "fs:read", target, tb, "read_content", false);
  if (!err) err = vfs_decide(v, c, "fs:write", path, pass, "symlink", true);
  return err;
}

/* LINK: reads the source node, writes the new name. */
int vfs_decide_link(BoxVfs *v, const Caller *c, Node *src, const char *path, bool pass)
{
  if (!c->decides) return 0;
  g_autofree char *from = vfs_path_of(v, src);
  int err = vfs_decide(v, c, "fs:read", from, is_pass(src), "read_content", false);
  if (!err) err = vfs_decide(v, c, "fs:write", path, pass, "write_content", true);
  return err;
}

/* UNLINK and RMDIR (gone: the object the name holds now). */
int vfs_decide_remove(BoxVfs *v, const Caller *c, const char *path, bool pass, bool dir,
                      const VfsObjId *gone)
{
  return vfs_decide_obj(v, c, "fs:delete", path, pass, dir ? "remove_dir" : "remove_file", true,
                        gone);
}

/* RENAME: the source moves and is read; a destination that exists is
 * removed (replaced) unless exchanged; the destination is moved to; with
 * RENAME_EXCHANGE the destination moves too, so it is read as well. */
int vfs_decide_rename(BoxVfs *v, const Caller *c, const VfsRename *r)
{
  int err = vfs_decide_obj(v, c, "fs:move", r->src, r->src_pass, "rename", true, r->src_obj);
  if (!err)
    err = vfs_decide_obj(v, c, "fs:read", r->src, r->src_pass, "read_content", false, r->src_obj);
  if (!err && r->dst_exists && !r->exchange)
    err = vfs_decide_obj(v, c, "fs:delete", r->dst, r->dst_pass,
                         r->dst_dir ? "remove_dir" : "remove_file", true, r->dst_obj);
  if (!err) err = vfs_decide_obj(v, c, "fs:move", r->dst, r->dst_pass, "rename", true, r->dst_obj);
  if (!err && r->exchange && r->dst_exists)
    err = vfs_decide_obj(v, c, "fs:read", r->dst, r->dst_pass, "read_content", false, r->dst_obj);
  return err;
}
