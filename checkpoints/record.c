/* record.c — the repository and the commits: opening it, reading the
 * workspace into blobs and trees, and a checkpoint from the previous tree
 * plus the changed paths.
 *
 * Git keeps a file's mode as executable or not, and no directory mode; a
 * restore must put back 0600 and 0700 as they were.  So every mode that
 * differs from what git's two file modes would give back (0644, 0755, and
 * 0755 for a directory) is listed in the commit message's "box-modes:"
 * section, carried from commit to commit in memory. */
#include "checkpoints/cp-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

G_DEFINE_QUARK(box - checkpoints - error - quark, box_checkpoints_error)

const char *const box_checkpoints_exclude_default[] = { ".git/", "node_modules/", NULL };

bool cp_git_fail(GError **error, const char *what)
{
  const git_error *e = git_error_last();
  g_set_error(error, BOX_CHECKPOINTS_ERROR, 1, "%s: %s", what,
              e && e->message ? e->message : "libgit2 failed");
  return false;
}

BoxCheckpoints *box_checkpoints_open(const char *repo_dir, const char *workspace,
                                     const BoxCheckpointsLimits *limits, GError **error)
{
  git_libgit2_init();
  /* Every object a tree or commit names is one this library has just
   * written or read: checking that each exists costs a lookup per entry. */
  git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
  /* boxd keeps the repository open for the box's life: its object cache
   * (256 MiB by default) would grow with every checkpoint */
  git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)(4 * 1024 * 1024));
  git_repository *repo = NULL;
  if (git_repository_open_bare(&repo, repo_dir) != 0 &&
      git_repository_init(&repo, repo_dir, 1) != 0) {
    cp_git_fail(error, "cannot open the checkpoint repository");
    git_libgit2_shutdown();
    return NULL;
  }
  /* no reflog: the log of checkpoints is the history itself, and each
   * commit would append to two more files */
  git_config *conf = NULL;
  if (git_repository_config(&conf, repo) == 0) {
    git_config_set_bool(conf, "core.logAllRefUpdates", 0);
    git_config_free(conf);
  }
  BoxCheckpoints *cp = g_new0(BoxCheckpoints, 1);
  cp->repo = repo;
  cp->workspace = g_strdup(workspace);
  cp->limits = *limits;
  cp->limits.exclude =
    g_strdupv(limits->exclude ? limits->exclude : (char **)box_checkpoints_exclude_default);
  cp->modes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  cp_pack_attach(cp);
  return cp;
}

struct git_repository *box_checkpoints_repository(BoxCheckpoints *cp)
{
  return cp->repo;
}

void box_checkpoints_close(BoxCheckpoints *cp)
{
  if (!cp) return;
  git_repository_free(cp->repo);
  g_strfreev(cp->limits.exclude);
  g_hash_table_unref(cp->modes);
  g_free(cp->modes_text);
  g_free(cp->workspace);
  g_free(cp);
  git_libgit2_shutdown();
}

/* ---- what is recorded ---- */

bool box_checkpoints_excluded(const BoxCheckpointsLimits *limits, const char *rel, bool is_dir)
{
  if (!*rel) return false;
  const char *base = strrchr(rel, '/');
  base = base ? base + 1 : rel;
  /* git can hold no entry of that name, whatever the list says */
  if (strcmp(base, ".git") == 0 || strncmp(rel, ".git/", 5) == 0 || strstr(rel, "/.git/"))
    return true;
  if (!limits->exclude) return false;
  for (char **p = limits->exclude; *p; p++) {
    const char *pat = *p;
    size_t len = strlen(pat);
    if (len > 1 && pat[len - 1] == '/') {
      /* a directory of that name anywhere on the path */
      g_autofree char *name = g_strndup(pat, len - 1);
      g_auto(GStrv) parts = g_strsplit(rel, "/", -1);
      guint n = g_strv_length(parts);
      for (guint i = 0; i < n; i++)
        if ((i + 1 < n || is_dir) && g_pattern_match_simple(name, parts[i])) return true;
    } else if (!strchr(pat, '/')) {
      if (g_pattern_match_simple(pat, base)) return true;
    } else if (g_pattern_match_simple(pat[0] == '/' ? pat + 1 : pat, rel)) {
      return true;
    }
  }
  return false;
}

/* The mode git gives back for an entry of this type: what needs no line. */
static mode_t usual_mode(mode_t mode)
{
  if (S_ISDIR(mode)) return 0755;
  return (mode & 0111) ? 0755 : 0644;
}

static void note_mode(BoxCheckpoints *cp, const char *rel, mode_t mode)
{
  if (S_ISLNK(mode) || strchr(rel, '\n')) return;
  if ((mode & 07777) != usual_mode(mode))
    g_hash_table_insert(cp->modes, g_strdup(rel), GUINT_TO_POINTER(mode & 07777));
}

/* Forgets the modes of rel and everything below it. */
static void forget_modes(BoxCheckpoints *cp, const char *rel)
{
  size_t len = strlen(rel);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, cp->modes);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    const char *k = key;
    if (!len || (strncmp(k, rel, len) == 0 && (k[len] == '\0' || k[len] == '/')))
      g_hash_table_iter_remove(&it);
  }
}

static int cmp_str(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The "box-modes:" section of a message, sorted so that equal maps give
 * equal text. */
static char *modes_render(GHashTable *modes)
{
  GList *keys = g_list_sort(g_hash_table_get_keys(modes), (GCompareFunc)strcmp);
  GString *s = g_string_new(NULL);
  for (GList *l = keys; l; l = l->next)
    g_string_append_printf(s, "%04o %s\n", GPOINTER_TO_UINT(g_hash_table_lookup(modes, l->data)),
                           (const char *)l->data);
  g_list_free(keys);
  return g_string_free(s, FALSE);
}

void cp_modes_parse(const char *message, GHashTable *into)
{
  const char *at = message ? strstr(message, "\n" CP_MODES_HEAD "\n") : NULL;
  if (!at) return;
  at += strlen(CP_MODES_HEAD) + 2;
  g_auto(GStrv) lines = g_strsplit(at, "\n", -1);
  for (char **l = lines; *l; l++) {
    char *end = NULL;
    guint64 mode = g_ascii_strtoull(*l, &end, 8);
    if (end == *l || *end != ' ' || !end[1]) continue;
    g_hash_table_insert(into, g_strdup(end + 1), GUINT_TO_POINTER((guint)mode));
  }
}

/* ---- blobs and trees from the workspace ---- */

/* A file too large to keep: its size and digest, so a diff still shows
 * that it changed. */
static int hash_only_blob(BoxCheckpoints *cp, int fd, off_t size, git_oid *out)
{
  GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) g_checksum_update(sum, (const guchar *)buf, n);
  g_autofree char *text = g_strdup_printf("%ssize %lld\nsha256 %s\n", CP_HASH_ONLY_HEAD,
                                          (long long)size, g_checksum_get_string(sum));
  g_checksum_free(sum);
  return cp_pack_blob(cp, out, text, strlen(text));
}

/* The blob of the entry name in dirfd, whose lstat is st; *mode the git
 * file mode.  1: nothing to record (a FIFO, a socket, gone). */
static int entry_blob(BoxCheckpoints *cp, int dirfd, const char *name, const struct stat *st,
                      git_oid *out, git_filemode_t *mode)
{
  if (S_ISLNK(st->st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlinkat(dirfd, name, target, sizeof target);
    if (n < 0) return 1;
    *mode = GIT_FILEMODE_LINK;
    return cp_pack_blob(cp, out, target, (size_t)n);
  }
  if (!S_ISREG(st->st_mode)) return 1;
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 1;
  *mode = (st->st_mode & 0111) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
  int rc;
  if (cp->limits.max_file_size && (guint64)st->st_size > cp->limits.max_file_size) {
    rc = hash_only_blob(cp, fd, st->st_size, out);
  } else {
    /* read whole (bounded by max_file_size): a stream would go through a
     * temporary file */
    GByteArray *data = g_byte_array_sized_new((guint)st->st_size);
    guint8 buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) g_byte_array_append(data, buf, (guint)n);
    rc = n < 0 ? -1 : cp_pack_blob(cp, out, data->data, data->len);
    g_byte_array_unref(data);
  }
  close(fd);
  return rc;
}

/* The tree of the directory dfd (rel below the workspace); *empty when it
 * holds nothing recorded (git keeps no empty directory). */
static int scan_dir(BoxCheckpoints *cp, int dfd, const char *rel, git_oid *out, bool *empty)
{
  git_treebuilder *tb = NULL;
  int rc = git_treebuilder_new(&tb, cp->repo, NULL);
  if (rc) return rc;
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    git_treebuilder_free(tb);
    return -1;
  }
  struct dirent *e;
  while (rc == 0 && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    g_autofree char *child = *rel ? g_strconcat(rel, "/", e->d_name, NULL) : g_strdup(e->d_name);
    if (cp_excluded(cp, child, S_ISDIR(st.st_mode))) continue;
    git_oid oid;
    git_filemode_t mode;
    if (S_ISDIR(st.st_mode)) {
      int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      bool sub_empty = true;
      if (sub < 0 || scan_dir(cp, sub, child, &oid, &sub_empty) != 0 || sub_empty) continue;
      mode = GIT_FILEMODE_TREE;
    } else if (entry_blob(cp, dirfd(d), e->d_name, &st, &oid, &mode) != 0) {
      continue;
    }
    note_mode(cp, child, st.st_mode);
    rc = git_treebuilder_insert(NULL, tb, e->d_name, &oid, mode);
  }
  closedir(d);
  *empty = git_treebuilder_entrycount(tb) == 0;
  if (rc == 0) rc = git_treebuilder_write(out, tb);
  git_treebuilder_free(tb);
  return rc;
}

int cp_head(BoxCheckpoints *cp, git_commit **head)
{
  *head = NULL;
  git_oid oid;
  int rc = git_reference_name_to_id(&oid, cp->repo, "HEAD");
  if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH) return 0;
  if (rc) return rc;
  rc = git_commit_lookup(head, cp->repo, &oid);
  if (rc) return rc;
  /* another writer (a restore) moved it: its modes are the ones to carry */
  if (!cp->modes_known || !git_oid_equal(&oid, &cp->modes_of)) {
    g_hash_table_remove_all(cp->modes);
    cp_modes_parse(git_commit_message(*head), cp->modes);
    g_free(cp->modes_text);
    cp->modes_text = modes_render(cp->modes);
    cp->modes_of = oid;
    cp->modes_known = true;
  }
  return 0;
}

/* The workspace-relative spelling of path, or NULL outside it. */
static const char *relative(const BoxCheckpoints *cp, const char *path)
{
  size_t wl = strlen(cp->workspace);
  if (strcmp(cp->workspace, "/") == 0) return path + 1;
  if (strncmp(path, cp->workspace, wl) != 0) return NULL;
  if (path[wl] == '\0') return path + wl;
  return path[wl] == '/' ? path + wl + 1 : NULL;
}

/* Is any proper ancestor of rel in set? */
static bool ancestor_in(GHashTable *set, const char *rel)
{
  if (!*rel) return false;
  if (g_hash_table_contains(set, "")) return true;
  g_autofree char *p = g_strdup(rel);
  for (char *s = strrchr(p, '/'); s; s = strrchr(p, '/')) {
    *s = '\0';
    if (g_hash_table_contains(set, p)) return true;
  }
  return false;
}

/* The tree of base with each of rels (no one below another) read anew. */
static int update_tree(BoxCheckpoints *cp, git_tree *base, GPtrArray *rels, int wfd, git_oid *out)
{
  GArray *removes = g_array_new(FALSE, TRUE, sizeof(git_tree_update));
  GArray *upserts = g_array_new(FALSE, TRUE, sizeof(git_tree_update));
  int rc = 0;
  for (guint i = 0; i < rels->len && rc == 0; i++) {
    const char *rel = g_ptr_array_index(rels, i);
    git_tree_entry *was = NULL;
    bool had = git_tree_entry_bypath(&was, base, rel) == 0;
    bool was_tree = had && git_tree_entry_filemode(was) == GIT_FILEMODE_TREE;
    git_tree_entry_free(was);
    /* Removed first when it is gone, or when a file became a directory
     * (or the reverse), to be put in anew; an entry of the same kind is
     * replaced by its upsert alone (a second rewrite of every tree above
     * it saved, the usual case). */
    git_tree_update gone = { .action = GIT_TREE_UPDATE_REMOVE, .path = rel };
    forget_modes(cp, rel);
    /* the directory that holds it, reached without a symlink: a path the
     * agent made into a link to elsewhere is recorded as that link, and
     * nothing outside the workspace is read */
    g_autofree char *dir = g_path_get_dirname(rel);
    g_autofree char *name = g_path_get_basename(rel);
    struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
    int dfd = (int)syscall(SYS_openat2, wfd, dir, &how, sizeof how);
    struct stat st;
    if (dfd >= 0 && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      close(dfd);
      dfd = -1;
    }
    if (dfd < 0) {
      if (had) g_array_append_val(removes, gone);
      continue;
    }
    git_tree_update u = { .action = GIT_TREE_UPDATE_UPSERT, .path = rel };
    int r = 0;
    if (S_ISDIR(st.st_mode)) {
      int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      bool empty = true;
      r = sub < 0 || scan_dir(cp, sub, rel, &u.id, &empty) != 0 || empty ? 1 : 0;
      u.filemode = GIT_FILEMODE_TREE;
    } else {
      r = entry_blob(cp, dfd, name, &st, &u.id, &u.filemode);
    }
    close(dfd);
    if (had && (r == 1 || was_tree != (u.filemode == GIT_FILEMODE_TREE)))
      g_array_append_val(removes, gone);
    if (r == 1) continue;
    rc = r;
    note_mode(cp, rel, st.st_mode);
    g_array_append_val(upserts, u);
  }
  git_oid mid = *git_tree_id(base);
  git_tree *middle = NULL;
  if (rc == 0 && removes->len) {
    rc =
      git_tree_create_updated(&mid, cp->repo, base, removes->len, (git_tree_update *)removes->data);
  }
  if (rc == 0) rc = git_tree_lookup(&middle, cp->repo, &mid);
  if (rc == 0 && upserts->len)
    rc = git_tree_create_updated(out, cp->repo, middle, upserts->len,
                                 (git_tree_update *)upserts->data);
  else if (rc == 0)
    *out = mid;
  git_tree_free(middle);
  g_array_unref(removes);
  g_array_unref(upserts);
  return rc;
}

bool box_checkpoints_record(BoxCheckpoints *cp, const char *const *paths, const char *subject,
                            const char *body, char **id, GError **error)
{
  *id = NULL;
  git_commit *head = NULL;
  git_tree *base = NULL;
  if (cp_head(cp, &head) != 0) return cp_git_fail(error, "cannot read the last checkpoint");
  if (head && git_commit_tree(&base, head) != 0) {
    git_commit_free(head);
    return cp_git_fail(error, "cannot read the last checkpoint's tree");
  }
  int wfd = open(cp->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (wfd < 0) {
    g_set_error(error, BOX_CHECKPOINTS_ERROR, 1, "cannot open the workspace %s: %s", cp->workspace,
                g_strerror(errno));
    git_tree_free(base);
    git_commit_free(head);
    return false;
  }
  GHashTable *set = g_hash_table_new(g_str_hash, g_str_equal);
  for (const char *const *p = paths; p && *p; p++) {
    const char *rel = relative(cp, *p);
    if (rel && !cp_excluded(cp, rel, true) && !cp_excluded(cp, rel, false))
      g_hash_table_add(set, (gpointer)rel);
  }
  bool whole = !paths || !base || g_hash_table_contains(set, "");
  git_oid tree_id;
  int rc;
  if (whole) {
    g_hash_table_remove_all(cp->modes);
    bool empty;
    bool batch = cp_pack_begin(cp);
    rc = scan_dir(cp, dup(wfd), "", &tree_id, &empty);
    /* the tree's objects on disk before the commit that names them */
    int end = batch ? cp_pack_end(cp, rc == 0) : 0;
    if (rc == 0) rc = end;
  } else {
    GPtrArray *rels = g_ptr_array_new();
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, set);
    while (g_hash_table_iter_next(&it, &key, NULL))
      if (!ancestor_in(set, key)) g_ptr_array_add(rels, key);
    g_ptr_array_sort(rels, cmp_str);
    rc = update_tree(cp, base, rels, wfd, &tree_id);
    g_ptr_array_unref(rels);
  }
  close(wfd);
  g_hash_table_unref(set);
  char *modes = modes_render(cp->modes);
  bool same = rc == 0 && base && git_oid_equal(&tree_id, git_tree_id(base)) &&
              g_strcmp0(modes, cp->modes_text) == 0;
  git_tree *tree = NULL;
  git_signature *sig = NULL;
  git_oid commit_id;
  if (rc == 0 && !same) {
    g_autofree char *message =
      g_strdup_printf("%s\n\n%s%s" CP_MODES_HEAD "\n%s", subject, body ? body : "",
                      body && *body && body[strlen(body) - 1] != '\n' ? "\n" : "", modes);
    const git_commit *parents[1] = { head };
    rc = git_tree_lookup(&tree, cp->repo, &tree_id);
    if (rc == 0) rc = git_signature_now(&sig, "box", "box@localhost");
    if (rc == 0)
      rc = git_commit_create(&commit_id, cp->repo, "HEAD", sig, sig, NULL, message, tree,
                             head ? 1 : 0, parents);
  }
  bool ok = rc == 0 || cp_git_fail(error, "cannot record a checkpoint");
  if (ok && !same) {
    *id = g_malloc(GIT_OID_HEXSZ + 1);
    git_oid_tostr(*id, GIT_OID_HEXSZ + 1, &commit_id);
    cp->modes_of = commit_id;
    cp->modes_known = true;
    g_free(cp->modes_text);
    cp->modes_text = modes;
    modes = NULL;
  } else if (!ok) {
    cp->modes_known = false; /* read again from the repository */
  }
  g_free(modes);
  git_signature_free(sig);
  git_tree_free(tree);
  git_tree_free(base);
  git_commit_free(head);
  return ok;
}
