/* test_vfs_path.c — a node's worker-view path built from the node tree,
 * alone and with a child's name, and its spelling for policy (no mount:
 * the nodes are made here). */
#include <string.h>
#include <glib.h>
#include "vfs/vfs-private.h"

static Node *node(NodeKind kind, NodeSpecial special, Node *parent, const char *name)
{
  Node *n = g_new0(Node, 1);
  n->kind = kind;
  n->special = special;
  n->parent = parent;
  n->name = g_strdup(name);
  n->namelen = strlen(name);
  return n;
}

static void node_free(Node *n)
{
  g_free(n->name);
  g_free(n);
}

/* vfs_node_child_path is vfs_child_path of vfs_node_path, for the bound
 * tree's top (its path "/"), a deep node, and a RAM tree under c<N> */
static void test_child_path(void)
{
  Node *pass = node(NODE_PASSDIR, SPECIAL_NONE, NULL, "pass");
  Node *tmp = node(NODE_CHAIN, SPECIAL_NONE, pass, "tmp");
  Node *w = node(NODE_PASS, SPECIAL_NONE, tmp, "w");
  Node *cmd = node(NODE_RAM, SPECIAL_CMDROOT, NULL, "c3");
  Node *sub = node(NODE_RAM, SPECIAL_NONE, cmd, "sub");
  Node *nodes[] = { pass, tmp, w, cmd, sub };
  const char *want[] = { "/", "/tmp", "/tmp/w", "/", "/sub" };
  const char *wantc[] = { "/f", "/tmp/f", "/tmp/w/f", "/f", "/sub/f" };
  for (guint i = 0; i < G_N_ELEMENTS(nodes); i++) {
    g_autofree char *p = vfs_node_path(NULL, nodes[i]);
    g_autofree char *c = vfs_node_child_path(NULL, nodes[i], "f");
    g_autofree char *joined = vfs_child_path(p, "f");
    g_assert_cmpstr(p, ==, want[i]);
    g_assert_cmpstr(c, ==, wantc[i]);
    g_assert_cmpstr(c, ==, joined);
  }
  /* a long name is copied whole */
  g_autofree char *big = g_strnfill(200, 'x');
  g_autofree char *c = vfs_node_child_path(NULL, w, big);
  g_autofree char *wbig = g_strconcat("/tmp/w/", big, NULL);
  g_assert_cmpstr(c, ==, wbig);
  /* a node under no root has no path, with or without a name */
  Node *ramdir = node(NODE_RAMDIR, SPECIAL_NONE, NULL, "ram");
  Node *lost = node(NODE_PASS, SPECIAL_NONE, ramdir, "lost");
  g_assert_null(vfs_node_path(NULL, lost));
  g_assert_null(vfs_node_child_path(NULL, lost, "f"));
  for (guint i = 0; i < G_N_ELEMENTS(nodes); i++) node_free(nodes[i]);
  node_free(lost);
  node_free(ramdir);
}

/* the operator's home is spelled ~ for host-backed paths in it; any other
 * path is the caller's own text, not a copy */
static void test_spelled(void)
{
  BoxVfs *v = g_malloc0(sizeof *v);
  v->operator_home = g_strdup("/home/op");
  char *owned;
  const char *in = "/home/op/src/a.c";
  const char *s = vfs_spelled(v, in, true, &owned);
  g_assert_cmpstr(s, ==, "~/src/a.c");
  g_assert_true(s == owned);
  g_free(owned);
  s = vfs_spelled(v, "/home/op", true, &owned);
  g_assert_cmpstr(s, ==, "~");
  g_free(owned);
  const char *outside = "/home/opera/x";
  g_assert_true(vfs_spelled(v, outside, true, &owned) == outside);
  g_assert_null(owned);
  g_assert_true(vfs_spelled(v, in, false, &owned) == in); /* not host-backed: as it is */
  g_assert_null(owned);
  g_free(v->operator_home);
  v->operator_home = g_strdup("/");
  g_assert_true(vfs_spelled(v, in, true, &owned) == in);
  g_assert_null(owned);
  g_free(v->operator_home);
  v->operator_home = NULL;
  g_assert_true(vfs_spelled(v, in, true, &owned) == in);
  g_assert_null(owned);
  g_free(v);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vfs-path/child-path", test_child_path);
  g_test_add_func("/vfs-path/spelled", test_spelled);
  return g_test_run();
}
