/* view.c — the mount view of a contained process (spec/runtime.md §5.1, §5.4).
 *
 * Pure planning in boxd: every directory, link, bind and remount the child
 * will perform, with the flags it needs, computed here so the child only
 * replays system calls.  Target paths equal host paths.  Grants under a
 * bound root are bound from the box's FUSE mount (<mnt>/pass<path>), so
 * the box's one view of them holds; everything else from the host.
 */
#include "tools/tools-private.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

const char *const tools_etc_entries[] = {
  "passwd",
  "group",
  "nsswitch.conf",
  "hosts",
  "host.conf",
  "resolv.conf",
  "services",
  "protocols",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "timezone",
  "ssl",
  "ca-certificates",
  "ca-certificates.conf",
  "alternatives",
  "gitconfig",
  "mime.types",
  "os-release",
  "debian_version",
  "python3",
  "python3.11",
  "perl",
  "terminfo",
  "inputrc",
  "bash.bashrc",
  "profile",
  "magic",
  "locale.alias",
  "gai.conf",
  "mailcap",
  NULL,
};

/* Top-level links of a merged-/usr host (and their real directories on
 * an unmerged one). */
static const char *const top_level[] = { "/bin",   "/sbin",   "/lib", "/lib32",
                                         "/lib64", "/libx32", NULL };

typedef struct {
  MountKind kind;
  char *path; /* view path (canonical host path) */
  char *src;
  bool is_dir;
} Mnt;

typedef struct {
  const BoxToolLaunch *l;
  const BoxToolContext *ctx;
  View *v;
  GArray *mounts;   /* Mnt */
  GPtrArray *links; /* pairs: path, target */
  GHashTable *seen; /* mount paths */
  GError **error;
  bool failed;
} Planner;

static void mnt_clear(gpointer data)
{
  Mnt *m = data;
  g_free(m->path);
  g_free(m->src);
}

static const char *root_of(const BoxToolLaunch *l, const char *path)
{
  for (int i = 0; l->roots && l->roots[i]; i++)
    if (box_path_within(path, l->roots[i])) return l->roots[i];
  return NULL;
}

static int depth_of(const char *p)
{
  int n = 0;
  for (; *p; p++) n += *p == '/';
  return n;
}

static char *canonical(const char *path)
{
  char *r = realpath(path, NULL);
  char *out = r ? g_strdup(r) : NULL;
  free(r);
  return out;
}

/* Remembers what path names now, so a cached plan can tell it changed. */
static void note(Planner *pl, const char *path)
{
  struct stat st;
  Ident id = { g_strdup(path), 0, 0 };
  if (lstat(path, &st) == 0) {
    id.dev = st.st_dev;
    id.ino = st.st_ino;
  }
  g_array_append_val(pl->v->idents, id);
}

/* Adds a mount at canonical path (replacing the kind of an earlier one at
 * the same path when the new kind is stronger: deny > write > exec > read). */
static void add_mount(Planner *pl, MountKind kind, const char *path, bool from_host)
{
  struct stat st;
  note(pl, path);
  if (stat(path, &st) != 0)
    return; /* absent paths are skipped (config checks refuse stated ones) */
  for (guint i = 0; i < pl->mounts->len; i++) {
    Mnt *m = &g_array_index(pl->mounts, Mnt, i);
    if (strcmp(m->path, path) == 0) {
      if (kind > m->kind) m->kind = kind;
      return;
    }
  }
  Mnt m = { kind, g_strdup(path), NULL, S_ISDIR(st.st_mode) };
  m.src = !from_host && pl->l->mountpoint && root_of(pl->l, path)
            ? g_strconcat(pl->l->mountpoint, "/pass", path, NULL)
            : g_strdup(path);
  g_array_append_val(pl->mounts, m);
}

/* Records every link on the way to path (as spelled) and returns the
 * canonical path it names, or NULL. */
static char *follow_spelling(Planner *pl, const char *spelled)
{
  g_autofree char *rest = g_strdup(spelled);
  GString *cur = g_string_new("");
  for (int hops = 0; hops < 40;) {
    char *comp = rest;
    while (*comp == '/') comp++;
    if (!*comp) break;
    char *slash = strchr(comp, '/');
    g_autofree char *name = slash ? g_strndup(comp, (gsize)(slash - comp)) : g_strdup(comp);
    g_autofree char *after = g_strdup(slash ? slash : "");
    if (tools_dot_step(name, cur)) {
      g_free(rest);
      rest = g_steal_pointer(&after);
      continue;
    }
    g_autofree char *next = g_strconcat(cur->str, "/", name, NULL);
    struct stat st;
    if (lstat(next, &st) != 0) {
      note(pl, next);
      g_string_free(cur, TRUE);
      return NULL;
    }
    if (S_ISLNK(st.st_mode)) {
      note(pl, next);
      char target[PATH_MAX];
      ssize_t n = readlink(next, target, sizeof target - 1);
      if (n <= 0) {
        g_string_free(cur, TRUE);
        return NULL;
      }
      target[n] = '\0';
      g_ptr_array_add(pl->links, g_strdup(next));
      g_ptr_array_add(pl->links, g_strdup(target));
      g_free(rest);
      rest = target[0] == '/' ? g_strconcat(target, after, NULL)
                              : g_strconcat(cur->str, "/", target, after, NULL);
      g_string_truncate(cur, 0);
      hops++;
      continue;
    }
    g_string_assign(cur, next);
    g_free(rest);
    rest = g_steal_pointer(&after);
  }
  if (!cur->len) g_string_assign(cur, "/");
  return g_string_free(cur, FALSE);
}

/* A grant spelled by the operator or the loader: its links, then a mount
 * of what it names. */
static void add_spelled(Planner *pl, MountKind kind, const char *spelled, bool from_host)
{
  g_autofree char *canon = follow_spelling(pl, spelled);
  if (canon) add_mount(pl, kind, canon, from_host);
}

static bool covered_exec(Planner *pl, const char *path)
{
  for (guint i = 0; i < pl->mounts->len; i++) {
    Mnt *m = &g_array_index(pl->mounts, Mnt, i);
    if ((m->kind == MOUNT_SYSTEM || m->kind == MOUNT_EXEC || m->kind == MOUNT_WRITE_EXEC) &&
        box_path_within(path, m->path))
      return true;
  }
  return false;
}

/* An executable: the file itself and its loader closure. */
static void add_program(Planner *pl, const char *spelled)
{
  g_autofree char *canon = canonical(spelled);
  if (!canon) return;
  note(pl, canon); /* its closure follows from its bytes */
  if (!covered_exec(pl, canon))
    add_spelled(pl, MOUNT_EXEC, spelled, false);
  else
    g_free(follow_spelling(pl, spelled));
  g_autoptr(GError) err = NULL;
  GPtrArray *closure = box_tools_loader_closure(canon, &err);
  if (!closure) {
    if (!pl->failed) g_propagate_error(pl->error, g_steal_pointer(&err));
    pl->failed = true;
    return;
  }
  for (guint i = 0; i < closure->len; i++) {
    const char *img = g_ptr_array_index(closure, i);
    g_autofree char *c = canonical(img);
    if (c) note(pl, c);
    if (c && covered_exec(pl, c))
      g_free(follow_spelling(pl, img));
    else
      add_spelled(pl, MOUNT_EXEC, img, true);
  }
  g_ptr_array_free(closure, TRUE);
}

/* The loader closures of the shared objects and programs in an exec tree
 * (bounded): a tree runs only if what its code maps is in the view. */
static void add_tree_closures(Planner *pl, const char *dir, int depth, int *budget)
{
  if (depth > 4 || *budget <= 0 || pl->failed) return;
  GDir *d = g_dir_open(dir, 0, NULL);
  if (!d) return;
  const char *name;
  while ((name = g_dir_read_name(d)) && *budget > 0) {
    (*budget)--;
    g_autofree char *p = g_build_filename(dir, name, NULL);
    struct stat st;
    if (lstat(p, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      add_tree_closures(pl, p, depth + 1, budget);
    } else if (S_ISREG(st.st_mode) && (strstr(name, ".so") || (st.st_mode & 0111))) {
      GPtrArray *closure = box_tools_loader_closure(p, NULL);
      for (guint i = 0; closure && i < closure->len; i++) {
        const char *img = g_ptr_array_index(closure, i);
        g_autofree char *c = canonical(img);
        if (c && covered_exec(pl, c))
          g_free(follow_spelling(pl, img));
        else
          add_spelled(pl, MOUNT_EXEC, img, true);
      }
      if (closure) g_ptr_array_free(closure, TRUE);
    }
  }
  g_dir_close(d);
}

/* A stated grant was judged canonical and link-free at startup: it binds
 * exactly that path, and a link or a new spelling found now (a rename race)
 * refuses the launch instead of following it. */
static bool grant_unchanged(Planner *pl, const char *path)
{
  struct stat st;
  note(pl, path);
  if (lstat(path, &st) != 0) return false; /* gone: nothing to bind, nothing widened */
  g_autofree char *canon = canonical(path);
  if (!S_ISLNK(st.st_mode) && canon && strcmp(canon, path) == 0) return true;
  if (!pl->failed)
    g_set_error(pl->error, BOX_TOOLS_ERROR, 1,
                "%s no longer names what it named when the run judged it. A spawn acts on the "
                "identity the run approved, so it is refused",
                path);
  pl->failed = true;
  return false;
}

static void add_list(Planner *pl, char *const *list, MountKind kind)
{
  for (int i = 0; list && list[i]; i++)
    if (grant_unchanged(pl, list[i])) add_mount(pl, kind, list[i], false);
}

static bool inside_writable(Planner *pl, const char *path)
{
  for (guint i = 0; i < pl->mounts->len; i++) {
    Mnt *m = &g_array_index(pl->mounts, Mnt, i);
    if ((m->kind == MOUNT_WRITE || m->kind == MOUNT_WRITE_EXEC) && box_path_within(path, m->path))
      return true;
  }
  return false;
}

static bool inside_any(Planner *pl, const char *path)
{
  for (guint i = 0; i < pl->mounts->len; i++) {
    Mnt *m = &g_array_index(pl->mounts, Mnt, i);
    if (m->kind != MOUNT_DENY && m->kind != MOUNT_ENTER && box_path_within(path, m->path))
      return true;
  }
  return false;
}

static bool encloses_any(Planner *pl, const char *path)
{
  for (guint i = 0; i < pl->mounts->len; i++) {
    Mnt *m = &g_array_index(pl->mounts, Mnt, i);
    if (m->kind != MOUNT_DENY && box_path_within(m->path, path)) return true;
  }
  return false;
}

static gint mnt_cmp(gconstpointer a, gconstpointer b)
{
  const Mnt *x = a, *y = b;
  int dx = depth_of(x->path), dy = depth_of(y->path);
  if (dx != dy) return dx - dy;
  /* Refusals after grants at the same depth. */
  return (x->kind == MOUNT_DENY) - (y->kind == MOUNT_DENY);
}

/* ---- from mounts to steps ---- */

typedef struct {
  View *v;
  GHashTable *made; /* view paths created in the scaffold */
  GArray *mounts;
} Emit;

static void step(View *v, StepKind kind, const char *src, const char *dst, unsigned long flags,
                 const char *data)
{
  Step s = { kind,  g_strdup(src), g_strconcat(v->root, dst, NULL), flags, g_strdup(data),
             false, false };
  g_array_append_val(v->steps, s);
}

static void step_per_launch(View *v)
{
  g_array_index(v->steps, Step, v->steps->len - 1).per_launch = true;
}

static bool within_mount(Emit *e, const char *path, bool strictly)
{
  for (guint i = 0; i < e->mounts->len; i++) {
    Mnt *m = &g_array_index(e->mounts, Mnt, i);
    if (m->kind == MOUNT_DENY || !m->is_dir) continue;
    if (box_path_within(path, m->path) && (!strictly || strcmp(path, m->path) != 0)) return true;
  }
  return false;
}

static void scaffold_dirs(Emit *e, const char *path)
{
  g_auto(GStrv) parts = g_strsplit(path, "/", -1);
  GString *acc = g_string_new("");
  for (char **c = parts; *c; c++) {
    if (!**c) continue;
    g_string_append_c(acc, '/');
    g_string_append(acc, *c);
    if (within_mount(e, acc->str, true)) break;
    if (!g_hash_table_contains(e->made, acc->str)) {
      g_hash_table_add(e->made, g_strdup(acc->str));
      step(e->v, STEP_MKDIR, NULL, acc->str, 0, NULL);
    }
  }
  g_string_free(acc, TRUE);
}

static void scaffold_mountpoint(Emit *e, const char *path, bool is_dir)
{
  if (within_mount(e, path, true)) return; /* it exists in the tree bound above it */
  if (is_dir) {
    scaffold_dirs(e, path);
    return;
  }
  g_autofree char *parent = g_path_get_dirname(path);
  scaffold_dirs(e, parent);
  if (!g_hash_table_contains(e->made, path)) {
    g_hash_table_add(e->made, g_strdup(path));
    step(e->v, STEP_FILE, NULL, path, 0, NULL);
  }
}

/* Flags the kernel locks on the source mount (user namespaces) are kept. */
static unsigned long locked_flags(const char *src)
{
  struct statvfs sv;
  unsigned long f = 0;
  if (statvfs(src, &sv) != 0) return 0;
  /* statvfs's ST_ flag and the mount flag it stands for */
  static const unsigned long map[][2] = {
    { ST_RDONLY, MS_RDONLY },     { ST_NOSUID, MS_NOSUID },   { ST_NODEV, MS_NODEV },
    { ST_NOEXEC, MS_NOEXEC },     { ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME },
    { ST_RELATIME, MS_RELATIME },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(map); i++)
    if (sv.f_flag & map[i][0]) f |= map[i][1];
  return f;
}

static unsigned long kind_flags(MountKind k)
{
  switch (k) {
  case MOUNT_SYSTEM:
  case MOUNT_EXEC: return MS_RDONLY | MS_NOSUID | MS_NODEV;
  case MOUNT_READ: return MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  case MOUNT_WRITE: return MS_NOSUID | MS_NODEV | MS_NOEXEC;
  case MOUNT_WRITE_EXEC: return MS_NOSUID | MS_NODEV;
  case MOUNT_SOCKET: return MS_NOSUID | MS_NODEV | MS_NOEXEC;
  case MOUNT_DENY:
  case MOUNT_ENTER: return MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  }
  return MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
}

static void emit(Planner *pl, View *v)
{
  g_array_sort(pl->mounts, mnt_cmp);
  Emit e = { v, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), pl->mounts };
  /* The scaffold every process gets: devices, a private /tmp, /proc. */
  static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
                                         NULL };
  scaffold_dirs(&e, "/dev");
  for (int i = 0; devices[i]; i++) {
    scaffold_mountpoint(&e, devices[i], false);
    step(v, STEP_BIND, devices[i], devices[i], MS_NOSUID | MS_NOEXEC | locked_flags(devices[i]),
         NULL);
  }
  static const char *const dev_links[] = { "/dev/fd",         "/proc/self/fd",   "/dev/stdin",
                                           "/proc/self/fd/0", "/dev/stdout",     "/proc/self/fd/1",
                                           "/dev/stderr",     "/proc/self/fd/2", NULL };
  for (int i = 0; dev_links[i]; i += 2)
    step(v, STEP_SYMLINK, dev_links[i + 1], dev_links[i], 0, NULL);
  scaffold_dirs(&e, "/tmp");
  step(v, STEP_TMPFS, VIEW_TMP_SOURCE, "/tmp", VIEW_TMP_FLAGS, VIEW_TMP_DATA);
  step_per_launch(v);
  scaffold_dirs(&e, "/proc");
  step(v, STEP_PROC, "proc", "/proc", VIEW_PROC_FLAGS, NULL);
  step_per_launch(v);
  /* Links first, where no mount already provides the path. */
  for (guint i = 0; i + 1 < pl->links->len; i += 2) {
    const char *path = g_ptr_array_index(pl->links, i);
    const char *target = g_ptr_array_index(pl->links, i + 1);
    if (within_mount(&e, path, false) || g_hash_table_contains(e.made, path)) continue;
    g_autofree char *parent = g_path_get_dirname(path);
    scaffold_dirs(&e, parent);
    if (within_mount(&e, parent, false) && !g_hash_table_contains(e.made, parent)) continue;
    g_hash_table_add(e.made, g_strdup(path));
    step(v, STEP_SYMLINK, target, path, 0, NULL);
  }
  for (guint i = 0; i < pl->mounts->len; i++) {
    Mnt *m = &g_array_index(pl->mounts, Mnt, i);
    scaffold_mountpoint(&e, m->path, m->is_dir);
  }
  bool empty_file = false;
  for (guint i = 0; i < pl->mounts->len; i++) {
    Mnt *m = &g_array_index(pl->mounts, Mnt, i);
    unsigned long f = kind_flags(m->kind);
    if (m->kind == MOUNT_DENY || m->kind == MOUNT_ENTER) {
      if (m->is_dir) {
        step(v, STEP_TMPFS, "box-refused", m->path, f, "mode=0555,size=4k");
      } else {
        if (!empty_file) {
          step(v, STEP_FILE, NULL, VIEW_EMPTY_FILE, 0, NULL);
          empty_file = true;
        }
        g_autofree char *src = g_strconcat(v->root, VIEW_EMPTY_FILE, NULL);
        step(v, STEP_BIND, src, m->path, f | MS_RDONLY, NULL);
      }
      continue;
    }
    step(v, STEP_BIND, m->src, m->path, f | locked_flags(m->src), NULL);
  }
  if (empty_file) step(v, STEP_UNLINK, NULL, VIEW_EMPTY_FILE, 0, NULL);
  g_hash_table_destroy(e.made);
}

/* ---- the two shapes ---- */

static void add_common(Planner *pl, View *v)
{
  for (int i = 0; top_level[i]; i++) {
    struct stat st;
    note(pl, top_level[i]);
    if (lstat(top_level[i], &st) != 0) continue;
    if (S_ISLNK(st.st_mode))
      g_free(follow_spelling(pl, top_level[i]));
    else if (S_ISDIR(st.st_mode) && !pl->l->is_agent)
      add_mount(pl, MOUNT_SYSTEM, top_level[i], true);
  }
  (void)v;
}

static void add_table_lists(Planner *pl, const BoxToolTable *t, bool agent)
{
  add_list(pl, t->read, MOUNT_READ);
  add_list(pl, t->read_file, MOUNT_READ);
  /* Tools run what they build (make, cc): their writable binds execute.
   * The agent keeps W^X unless an exec entry names the tree too. */
  add_list(pl, t->write, agent ? MOUNT_WRITE : MOUNT_WRITE_EXEC);
  add_list(pl, t->write_file, agent ? MOUNT_WRITE : MOUNT_WRITE_EXEC);
  for (int i = 0; t->exec && t->exec[i]; i++) {
    if (!grant_unchanged(pl, t->exec[i])) continue;
    g_autofree char *canon = canonical(t->exec[i]);
    if (!canon) continue;
    struct stat st;
    if (stat(canon, &st) == 0 && S_ISREG(st.st_mode)) {
      add_program(pl, t->exec[i]);
      if (inside_writable(pl, canon)) add_mount(pl, MOUNT_WRITE_EXEC, canon, false);
    } else {
      add_mount(pl, inside_writable(pl, canon) ? MOUNT_WRITE_EXEC : MOUNT_EXEC, canon, false);
      int budget = 4096;
      add_tree_closures(pl, canon, 0, &budget);
    }
  }
}

static void add_refusals(Planner *pl, const BoxToolTable *t)
{
  for (int i = 0; t->deny && t->deny[i]; i++) {
    struct stat st;
    if (lstat(t->deny[i], &st) != 0) {
      /* What it refused may sit elsewhere in a grant now: fail closed. */
      if (!pl->failed)
        g_set_error(pl->error, BOX_TOOLS_ERROR, 1,
                    "%s is refused by `deny`, and it is not there any more, so the view cannot "
                    "refuse it",
                    t->deny[i]);
      pl->failed = true;
      return;
    }
    if (!grant_unchanged(pl, t->deny[i])) return;
    if (inside_any(pl, t->deny[i])) add_mount(pl, MOUNT_DENY, t->deny[i], true);
  }
  const char *box_dir = pl->ctx->box_dir;
  if (box_dir) {
    g_autofree char *canon = canonical(box_dir);
    if (canon && inside_any(pl, canon)) add_mount(pl, MOUNT_DENY, canon, true);
  }
  for (int i = 0; pl->ctx->hidden && pl->ctx->hidden[i]; i++) {
    g_autofree char *canon = canonical(pl->ctx->hidden[i]);
    if (canon && inside_any(pl, canon)) add_mount(pl, MOUNT_DENY, canon, true);
  }
  /* Authority files a writable bind holds: read-only at their path. */
  for (int i = 0; pl->ctx->authority && pl->ctx->authority[i]; i++) {
    g_autofree char *canon = canonical(pl->ctx->authority[i]);
    if (canon && inside_writable(pl, canon)) add_mount(pl, MOUNT_READ, canon, true);
  }
}

static void ident_clear(gpointer data);

/* A path noted twice with the same answer is checked once per launch. */
static void dedup_idents(View *v)
{
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  guint kept = 0;
  for (guint i = 0; i < v->idents->len; i++) {
    Ident *id = &g_array_index(v->idents, Ident, i);
    Ident *first = g_hash_table_lookup(seen, id->path);
    if (first && first->dev == id->dev && first->ino == id->ino) {
      g_free(id->path);
      continue;
    }
    Ident *dst = &g_array_index(v->idents, Ident, kept++);
    if (dst != id) *dst = *id;
    if (!first) g_hash_table_insert(seen, dst->path, dst);
  }
  g_hash_table_destroy(seen);
  /* The moved-from slots were freed or moved: drop them without clearing. */
  g_array_set_clear_func(v->idents, NULL);
  g_array_set_size(v->idents, kept);
  g_array_set_clear_func(v->idents, ident_clear);
}

bool tools_view_plan(View *v, const BoxToolLaunch *l, GError **error)
{
  Planner pl = { l,
                 tools_context(),
                 v,
                 g_array_new(FALSE, FALSE, sizeof(Mnt)),
                 g_ptr_array_new_with_free_func(g_free),
                 NULL,
                 error,
                 false };
  g_array_set_clear_func(pl.mounts, mnt_clear);
  const BoxToolTable *t = l->table;
  add_common(&pl, v);
  if (l->is_agent) {
    /* §5.1 agent set: / and /etc, /var entered only (the read-only root's
     * own directories), zoneinfo and localtime, the devices. */
    add_spelled(&pl, MOUNT_READ, "/usr/share/zoneinfo", true);
    add_spelled(&pl, MOUNT_READ, "/etc/localtime", true);
    add_spelled(&pl, MOUNT_READ, "/etc/ld.so.cache", true);
  } else {
    /* The leaf set, widened to the host's system trees: tools are host
     * programs with helpers (git-core, cc1, as, ld) that no table can name. */
    add_mount(&pl, MOUNT_SYSTEM, "/usr", true);
    for (int i = 0; tools_etc_entries[i]; i++) {
      g_autofree char *p = g_strconcat("/etc/", tools_etc_entries[i], NULL);
      struct stat st;
      note(&pl, p);
      if (lstat(p, &st) == 0) add_spelled(&pl, MOUNT_READ, p, true);
    }
  }
  add_table_lists(&pl, t, l->is_agent);
  /* A program in the box's /tmp is the mount's file, which the launch
   * makes executable itself (launch.c, place_tmp); the host's file of that
   * name is never looked at.  Its loader closure is the system tree's. */
  if (l->program_path && !l->tmp_program) add_program(&pl, l->program_path);
  if (l->is_agent) {
    const BoxToolContext *c = pl.ctx;
    if (c->alias_dir) {
      add_mount(&pl, MOUNT_EXEC, c->alias_dir, true);
      g_autofree char *bash = g_build_filename(c->alias_dir, "bash", NULL);
      if (access(bash, X_OK) == 0) add_program(&pl, bash);
    }
    if (c->broker_socket) add_mount(&pl, MOUNT_SOCKET, c->broker_socket, true);
    /* Entry only: an empty directory.  When a grant lies below it (an
     * exec entry for <workspace>/build), the scaffold's directories lead
     * there instead, since the empty tmpfs would hide that grant's
     * mount point. */
    if (t->workspace && !inside_any(&pl, t->workspace) && !encloses_any(&pl, t->workspace))
      add_mount(&pl, MOUNT_ENTER, t->workspace, true);
  }
  if (pl.ctx->ca_cert) add_mount(&pl, MOUNT_READ, pl.ctx->ca_cert, true);
  add_refusals(&pl, t);
  if (!pl.failed) {
    emit(&pl, v);
    dedup_idents(v);
  }
  bool ok = !pl.failed;
  g_array_free(pl.mounts, TRUE);
  g_ptr_array_free(pl.links, TRUE);
  return ok;
}

char **tools_view_reach(const View *v, char **reach)
{
  GPtrArray *paths = g_ptr_array_new();
  GString *r = g_string_new(NULL);
  g_autofree char *empty = g_strconcat(v->root, VIEW_EMPTY_FILE, NULL);
  size_t root_len = strlen(v->root);
  for (guint i = 0; i < v->steps->len; i++) {
    const Step *s = &g_array_index(v->steps, Step, i);
    char what;
    if (s->per_launch || strncmp(s->dst, v->root, root_len) != 0) continue;
    if (s->kind == STEP_BIND)
      what = strcmp(s->src, empty) == 0 ? 'n' : (s->flags & MS_RDONLY) ? 'r' : 'w';
    else if (s->kind == STEP_TMPFS && strcmp(s->src, "box-refused") == 0)
      what = 'n';
    else
      continue;
    g_ptr_array_add(paths, g_strdup(s->dst[root_len] ? s->dst + root_len : "/"));
    g_string_append_c(r, what);
  }
  g_ptr_array_add(paths, NULL);
  *reach = g_string_free(r, FALSE);
  return (char **)g_ptr_array_free(paths, FALSE);
}

bool tools_view_contains(const View *v, const char *path)
{
  g_autofree char *dst = g_strconcat(v->root, path, NULL);
  for (guint i = 0; i < v->steps->len; i++) {
    const Step *s = &g_array_index(v->steps, Step, i);
    if (s->kind == STEP_BIND && box_path_within(dst, s->dst)) return true;
    if (s->kind == STEP_TMPFS && strcmp(dst, s->dst) == 0) return true;
  }
  return false;
}

static void step_clear(gpointer data)
{
  Step *s = data;
  g_free(s->src);
  g_free(s->dst);
  g_free(s->data);
}

static void ident_clear(gpointer data)
{
  g_free(((Ident *)data)->path);
}

void tools_view_init(View *v, const char *root)
{
  v->root = root;
  v->steps = g_array_new(FALSE, FALSE, sizeof(Step));
  g_array_set_clear_func(v->steps, step_clear);
  v->idents = g_array_new(FALSE, FALSE, sizeof(Ident));
  g_array_set_clear_func(v->idents, ident_clear);
}

void tools_view_clear(View *v)
{
  g_array_free(v->steps, TRUE);
  g_array_free(v->idents, TRUE);
}

bool tools_view_preparable(View *v)
{
  g_autofree char *tmp = g_strconcat(v->root, "/tmp", NULL);
  g_autofree char *proc = g_strconcat(v->root, "/proc", NULL);
  const char *tops[VIEW_TMP_MOUNTS_MAX];
  int n_tops = 0;
  for (guint i = 0; i < v->steps->len; i++) {
    Step *s = &g_array_index(v->steps, Step, i);
    s->tmp_top = false;
    if (s->per_launch) continue;
    bool mounts = s->kind == STEP_BIND || s->kind == STEP_TMPFS || s->kind == STEP_PROC;
    if (s->kind != STEP_MKDIR && box_path_within(s->dst, proc)) return false;
    if (mounts && (box_path_within(tmp, s->dst) || box_path_within(proc, s->dst))) return false;
    if (!mounts || !box_path_within(s->dst, tmp)) continue;
    /* Mounts come sorted by depth: one inside an earlier one travels with it. */
    bool nested = false;
    for (int k = 0; k < n_tops && !nested; k++) nested = box_path_within(s->dst, tops[k]);
    if (nested) continue;
    if (n_tops == VIEW_TMP_MOUNTS_MAX) return false;
    tops[n_tops++] = s->dst;
    s->tmp_top = true;
  }
  return true;
}

bool tools_view_still_valid(const View *v)
{
  for (guint i = 0; i < v->idents->len; i++) {
    const Ident *id = &g_array_index(v->idents, Ident, i);
    struct stat st;
    bool present = lstat(id->path, &st) == 0;
    if (present != (id->ino != 0) || (present && (st.st_dev != id->dev || st.st_ino != id->ino)))
      return false;
  }
  return true;
}
