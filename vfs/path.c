/* path.c — paths as the worker sees them: a node's path, joining, the
 * operator's ~ spelling, and whether a path lies in a bound root. */
#include "vfs/vfs-private.h"

#include <string.h>

bool vfs_concat(char *buf, size_t size, const char *const *parts, size_t n)
{
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(parts[i]);
    if (len >= size - at) return false;
    memcpy(buf + at, parts[i], len);
    at += len;
  }
  buf[at] = '\0';
  return true;
}

char *vfs_child_path(const char *dir, const char *name)
{
  if (strcmp(dir, "/") == 0) return g_strconcat("/", name, NULL);
  return g_strconcat(dir, "/", name, NULL);
}

/* The walk measures the path first and then writes it right to left into
 * one allocation of its size: this runs for every decided operation.  With
 * name, the path of that name in n, in the same allocation (a create,
 * unlink or lookup needs only that one, not n's path copied again). */
static char *node_path(Node *n, const char *name)
{
  Node *p = n;
  int depth = 0;
  bool ok = false;
  size_t nlen = name ? strlen(name) + 1 : 0;
  size_t total = nlen;
  while (p && depth < VFS_MAX_DEPTH) {
    if (p->kind == NODE_PASSDIR || p->special == SPECIAL_CMDROOT) {
      ok = true;
      break;
    }
    if (p->kind == NODE_ROOT || p->kind == NODE_RAMDIR) break;
    total += p->namelen + 1;
    p = p->parent;
    depth++;
  }
  if (!ok && n->kind == NODE_RAM && !p) ok = true; /* orphan: best effort */
  if (!ok) return NULL;
  if (total == 0) return g_strdup("/");
  char *out = g_malloc(total + 1);
  size_t pos = total;
  out[pos] = '\0';
  if (name) {
    pos -= nlen;
    out[pos] = '/';
    memcpy(out + pos + 1, name, nlen - 1);
  }
  for (Node *q = n; q != p; q = q->parent) {
    pos -= q->namelen;
    memcpy(out + pos, q->name, q->namelen);
    out[--pos] = '/';
  }
  return out;
}

char *vfs_node_path(BoxVfs *v, Node *n)
{
  (void)v;
  return node_path(n, NULL);
}

char *vfs_node_child_path(BoxVfs *v, Node *n, const char *name)
{
  (void)v;
  return node_path(n, name);
}

const char *vfs_spelled(BoxVfs *v, const char *path, bool host_backed, char **owned)
{
  const char *home = v->operator_home;
  *owned = host_backed && home && strcmp(home, "/") != 0 ? box_path_tilde(path, home) : NULL;
  return *owned ? *owned : path;
}

bool vfs_host_backed(BoxVfs *v, const char *path)
{
  for (char **r = v->roots; r && *r; r++)
    if (box_path_within(path, *r)) return true;
  return false;
}

/* Closes "." and ".." lexically in an absolute path. */
char *vfs_normalize(const char *abs)
{
  gchar **parts = g_strsplit(abs, "/", -1);
  GPtrArray *out = g_ptr_array_new();
  for (guint i = 0; parts[i]; i++) {
    const char *p = parts[i];
    if (!*p || strcmp(p, ".") == 0) continue;
    if (strcmp(p, "..") == 0) {
      if (out->len) g_ptr_array_remove_index(out, out->len - 1);
      continue;
    }
    g_ptr_array_add(out, (gpointer)p);
  }
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < out->len; i++) {
    g_string_append_c(s, '/');
    g_string_append(s, g_ptr_array_index(out, i));
  }
  if (!s->len) g_string_append_c(s, '/');
  g_ptr_array_unref(out);
  g_strfreev(parts);
  return g_string_free(s, FALSE);
}
