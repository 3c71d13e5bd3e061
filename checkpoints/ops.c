/* ops.c — what the operator asks of the checkpoints: the log, a diff
 * between two of them, and a restore of the workspace to one. */
#include "checkpoints/cp-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool resolve(BoxCheckpoints *cp, const char *spec, git_commit **out, GError **error)
{
  git_object *obj = NULL;
  if (git_revparse_single(&obj, cp->repo, spec) != 0) {
    g_set_error(error, BOX_CHECKPOINTS_ERROR, 2, "no checkpoint %s", spec);
    return false;
  }
  int rc = git_object_peel((git_object **)out, obj, GIT_OBJECT_COMMIT);
  git_object_free(obj);
  if (rc != 0) g_set_error(error, BOX_CHECKPOINTS_ERROR, 2, "%s is not a checkpoint", spec);
  return rc == 0;
}

/* The diff from c's parent (none: the empty tree) to c, or from a to b. */
static int diff_commits(BoxCheckpoints *cp, git_commit *a, git_commit *b, const char *const *paths,
                        git_diff **out)
{
  git_tree *ta = NULL, *tb = NULL;
  git_commit *parent = NULL;
  if (!b) {
    b = a;
    a = NULL;
    if (git_commit_parentcount(b) > 0 && git_commit_parent(&parent, b, 0) == 0) a = parent;
  }
  int rc = a ? git_commit_tree(&ta, a) : 0;
  if (rc == 0) rc = git_commit_tree(&tb, b);
  git_diff_options opts;
  git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
  guint n = paths ? g_strv_length((char **)paths) : 0;
  opts.pathspec.strings = (char **)paths;
  opts.pathspec.count = n;
  if (rc == 0) rc = git_diff_tree_to_tree(out, cp->repo, ta, tb, &opts);
  git_tree_free(ta);
  git_tree_free(tb);
  git_commit_free(parent);
  return rc;
}

bool box_checkpoints_log(BoxCheckpoints *cp, guint n, GString *out, GError **error)
{
  git_commit *head = NULL;
  if (cp_head(cp, &head) != 0) return cp_git_fail(error, "cannot read the checkpoints");
  if (!head) return true;
  git_revwalk *walk = NULL;
  int rc = git_revwalk_new(&walk, cp->repo);
  if (rc == 0) rc = git_revwalk_push(walk, git_commit_id(head));
  git_commit_free(head);
  git_oid oid;
  for (guint i = 0; rc == 0 && (n == 0 || i < n) && git_revwalk_next(&oid, walk) == 0; i++) {
    git_commit *c = NULL;
    git_diff *diff = NULL;
    rc = git_commit_lookup(&c, cp->repo, &oid);
    if (rc == 0) rc = diff_commits(cp, c, NULL, NULL, &diff);
    if (rc == 0) {
      char id[13];
      git_oid_tostr(id, sizeof id, &oid);
      GDateTime *t = g_date_time_new_from_unix_utc(git_commit_time(c));
      g_autofree char *when = g_date_time_format(t, "%Y-%m-%dT%H:%M:%SZ");
      g_date_time_unref(t);
      g_string_append_printf(out, "%s  %s  %4zu  %s\n", id, when, git_diff_num_deltas(diff),
                             git_commit_summary(c) ? git_commit_summary(c) : "");
    }
    git_diff_free(diff);
    git_commit_free(c);
  }
  git_revwalk_free(walk);
  return rc == 0 || cp_git_fail(error, "cannot read the checkpoints");
}

static int print_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
                      const git_diff_line *line, void *data)
{
  (void)delta;
  (void)hunk;
  GString *out = data;
  if (line->origin == GIT_DIFF_LINE_CONTEXT || line->origin == GIT_DIFF_LINE_ADDITION ||
      line->origin == GIT_DIFF_LINE_DELETION)
    g_string_append_c(out, line->origin);
  g_string_append_len(out, line->content, (gssize)line->content_len);
  return 0;
}

bool box_checkpoints_diff(BoxCheckpoints *cp, const char *a, const char *b,
                          const char *const *paths, bool stat, GString *out, GError **error)
{
  git_commit *ca = NULL, *cb = NULL;
  if (!resolve(cp, a, &ca, error)) return false;
  if (b && !resolve(cp, b, &cb, error)) {
    git_commit_free(ca);
    return false;
  }
  git_diff *diff = NULL;
  int rc = diff_commits(cp, ca, cb, paths, &diff);
  if (rc == 0 && stat) {
    git_diff_stats *st = NULL;
    git_buf buf = GIT_BUF_INIT;
    rc = git_diff_get_stats(&st, diff);
    if (rc == 0) rc = git_diff_stats_to_buf(&buf, st, GIT_DIFF_STATS_FULL, 80);
    if (rc == 0) g_string_append_len(out, buf.ptr, (gssize)buf.size);
    git_buf_dispose(&buf);
    git_diff_stats_free(st);
  } else if (rc == 0) {
    rc = git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, print_line, out);
  }
  git_diff_free(diff);
  git_commit_free(ca);
  git_commit_free(cb);
  return rc == 0 || cp_git_fail(error, "cannot diff the checkpoints");
}

bool box_checkpoints_prune(BoxCheckpoints *cp, guint keep)
{
  git_commit *head = NULL;
  if (keep == 0) return true;
  if (cp_head(cp, &head) != 0) return false;
  /* newest first, one more than kept: whether any goes */
  GPtrArray *chain = g_ptr_array_new_with_free_func((GDestroyNotify)git_commit_free);
  for (git_commit *c = head; c && chain->len <= keep;) {
    g_ptr_array_add(chain, c);
    git_commit *parent = NULL;
    if (git_commit_parentcount(c) > 0 && git_commit_parent(&parent, c, 0) != 0) parent = NULL;
    c = parent;
    if (chain->len > keep && c) git_commit_free(c);
  }
  int rc = 0;
  if (chain->len > keep) {
    git_oid prev;
    for (guint i = keep; rc == 0 && i > 0; i--) {
      git_commit *old = g_ptr_array_index(chain, i - 1);
      git_tree *tree = NULL;
      git_commit *parent = NULL;
      rc = git_commit_tree(&tree, old);
      if (rc == 0 && i < keep) rc = git_commit_lookup(&parent, cp->repo, &prev);
      const git_commit *parents[1] = { parent };
      if (rc == 0)
        rc = git_commit_create(&prev, cp->repo, NULL, git_commit_author(old),
                               git_commit_committer(old), git_commit_message_encoding(old),
                               git_commit_message(old), tree, parent ? 1 : 0, parents);
      git_commit_free(parent);
      git_tree_free(tree);
    }
    git_reference *ref = NULL, *head_ref = NULL;
    if (rc == 0) rc = git_repository_head(&head_ref, cp->repo);
    if (rc == 0) rc = git_reference_set_target(&ref, head_ref, &prev, "box: checkpoints pruned");
    git_reference_free(ref);
    git_reference_free(head_ref);
    cp->modes_known = false;
  }
  g_ptr_array_unref(chain);
  return rc == 0;
}

/* ---- restore ---- */

typedef struct {
  BoxCheckpoints *cp;
  GHashTable *modes; /* of the checkpoint restored */
  GString *notes;
  int err; /* the first errno */
} Restore;

static void fail_errno(Restore *r)
{
  if (!r->err) r->err = errno ? errno : EIO;
}

/* Removes name in dfd, a directory with everything in it included. */
static void remove_all(Restore *r, int dfd, const char *name)
{
  if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT) return;
  if (errno != EISDIR && errno != EPERM) {
    fail_errno(r);
    return;
  }
  int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = sub >= 0 ? fdopendir(sub) : NULL;
  if (!d) {
    if (sub >= 0) close(sub);
    fail_errno(r);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      remove_all(r, dirfd(d), e->d_name);
  closedir(d);
  if (unlinkat(dfd, name, AT_REMOVEDIR) != 0) fail_errno(r);
}

static mode_t mode_of(Restore *r, const char *rel, git_filemode_t gm)
{
  gpointer m;
  if (g_hash_table_lookup_extended(r->modes, rel, NULL, &m)) return (mode_t)GPOINTER_TO_UINT(m);
  return gm == GIT_FILEMODE_BLOB ? 0644 : 0755;
}

/* Writes blob as name in dfd (through a temporary name, so that a reader
 * never sees half of it), unless what is there has its contents already. */
static void put_file(Restore *r, int dfd, const char *name, const char *rel, const git_oid *id,
                     git_filemode_t gm)
{
  git_blob *blob = NULL;
  if (git_blob_lookup(&blob, r->cp->repo, id) != 0) {
    r->err = r->err ? r->err : EIO;
    return;
  }
  const char *data = git_blob_rawcontent(blob);
  size_t size = (size_t)git_blob_rawsize(blob);
  mode_t mode = mode_of(r, rel, gm);
  size_t hl = strlen(CP_HASH_ONLY_HEAD);
  if (size >= hl && memcmp(data, CP_HASH_ONLY_HEAD, hl) == 0) {
    g_string_append_printf(r->notes, "%s: kept by hash only, left as it is\n", rel);
    git_blob_free(blob);
    return;
  }
  struct stat st;
  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    git_oid now;
    g_autofree char *text = NULL;
    gsize len = 0;
    bool same = false;
    if (fd >= 0 && (size_t)st.st_size == size) {
      /* read whole: only when the sizes agree, and files are bounded */
      GIOChannel *ch = g_io_channel_unix_new(fd);
      g_io_channel_set_encoding(ch, NULL, NULL);
      if (g_io_channel_read_to_end(ch, &text, &len, NULL) == G_IO_STATUS_NORMAL &&
          git_odb_hash(&now, text, len, GIT_OBJECT_BLOB) == 0)
        same = git_oid_equal(&now, id);
      g_io_channel_unref(ch);
    }
    /* the mode through the descriptor: the name could be a link by now */
    if (same && (st.st_mode & 07777) != mode && fchmod(fd, mode) != 0) fail_errno(r);
    if (fd >= 0) close(fd);
    if (same) {
      git_blob_free(blob);
      return;
    }
  }
  g_autofree char *tmp = g_strdup_printf(".%s.box-restore-%d", name, (int)getpid());
  int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  for (size_t off = 0; ok && off < size;) {
    ssize_t w = write(fd, data + off, size - off);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) off += (size_t)w;
  }
  if (ok) ok = fchmod(fd, mode) == 0;
  if (fd >= 0) close(fd);
  if (ok && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
    remove_all(r, dfd, name);
  if (ok) ok = renameat(dfd, tmp, dfd, name) == 0;
  if (!ok) {
    fail_errno(r);
    unlinkat(dfd, tmp, 0);
  }
  git_blob_free(blob);
}

static void put_link(Restore *r, int dfd, const char *name, const git_oid *id)
{
  git_blob *blob = NULL;
  if (git_blob_lookup(&blob, r->cp->repo, id) != 0) {
    r->err = r->err ? r->err : EIO;
    return;
  }
  g_autofree char *target = g_strndup(git_blob_rawcontent(blob), (gsize)git_blob_rawsize(blob));
  git_blob_free(blob);
  char now[PATH_MAX];
  ssize_t n = readlinkat(dfd, name, now, sizeof now - 1);
  if (n >= 0) {
    now[n] = '\0';
    if (strcmp(now, target) == 0) return;
  }
  remove_all(r, dfd, name);
  if (symlinkat(target, dfd, name) != 0) fail_errno(r);
}

static void put_entry(Restore *r, int dfd, const char *name, const char *rel,
                      const git_tree_entry *e);

/* The directory dfd made to hold exactly tree (what is excluded aside). */
static void put_tree(Restore *r, int dfd, const char *rel, git_tree *tree)
{
  size_t count = git_tree_entrycount(tree);
  for (size_t i = 0; i < count; i++) {
    const git_tree_entry *e = git_tree_entry_byindex(tree, i);
    const char *name = git_tree_entry_name(e);
    g_autofree char *child = *rel ? g_strconcat(rel, "/", name, NULL) : g_strdup(name);
    put_entry(r, dfd, name, child, e);
  }
  int fd = dup(dfd);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    fail_errno(r);
    return;
  }
  rewinddir(d);
  GPtrArray *gone = g_ptr_array_new_with_free_func(g_free);
  struct dirent *de;
  while ((de = readdir(d))) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    if (git_tree_entry_byname(tree, de->d_name)) continue;
    g_autofree char *child = *rel ? g_strconcat(rel, "/", de->d_name, NULL) : g_strdup(de->d_name);
    struct stat st;
    bool is_dir = fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    if (cp_excluded(r->cp, child, is_dir)) continue;
    /* a directory git could not keep (empty) stays */
    if (is_dir) {
      int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;
      bool empty = true;
      struct dirent *se;
      while (sd && empty && (se = readdir(sd)))
        empty = strcmp(se->d_name, ".") == 0 || strcmp(se->d_name, "..") == 0;
      if (sd)
        closedir(sd);
      else if (sub >= 0)
        close(sub);
      if (empty) continue;
    }
    g_ptr_array_add(gone, g_strdup(de->d_name));
  }
  closedir(d);
  for (guint i = 0; i < gone->len; i++) remove_all(r, dfd, g_ptr_array_index(gone, i));
  g_ptr_array_unref(gone);
}

static void put_entry(Restore *r, int dfd, const char *name, const char *rel,
                      const git_tree_entry *e)
{
  git_filemode_t gm = git_tree_entry_filemode(e);
  const git_oid *id = git_tree_entry_id(e);
  if (gm == GIT_FILEMODE_LINK) {
    put_link(r, dfd, name, id);
    return;
  }
  if (gm != GIT_FILEMODE_TREE) {
    put_file(r, dfd, name, rel, id, gm);
    return;
  }
  struct stat st;
  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
    remove_all(r, dfd, name);
    if (mkdirat(dfd, name, 0700) != 0) {
      fail_errno(r);
      return;
    }
  }
  int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0) {
    fail_errno(r);
    return;
  }
  git_tree *tree = NULL;
  if (git_tree_lookup(&tree, r->cp->repo, id) == 0) {
    put_tree(r, sub, rel, tree);
    git_tree_free(tree);
  }
  if (fchmod(sub, mode_of(r, rel, gm)) != 0) fail_errno(r);
  close(sub);
}

/* dfd opened on the directory that holds rel's last component, made (with
 * the modes the checkpoint gives) where missing; *name points into rel. */
static int open_parent(Restore *r, int wfd, const char *rel, const char **name)
{
  const char *slash = strrchr(rel, '/');
  *name = slash ? slash + 1 : rel;
  int dfd = dup(wfd);
  if (!slash) return dfd;
  g_autofree char *dir = g_strndup(rel, (gsize)(slash - rel));
  g_auto(GStrv) parts = g_strsplit(dir, "/", -1);
  GString *sofar = g_string_new(NULL);
  for (char **p = parts; *p && dfd >= 0; p++) {
    g_string_append_printf(sofar, "%s%s", sofar->len ? "/" : "", *p);
    if (mkdirat(dfd, *p, mode_of(r, sofar->str, GIT_FILEMODE_TREE)) != 0 && errno != EEXIST)
      fail_errno(r);
    int sub = openat(dfd, *p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) fail_errno(r);
    close(dfd);
    dfd = sub;
  }
  g_string_free(sofar, TRUE);
  return dfd;
}

bool box_checkpoints_restore(BoxCheckpoints *cp, const char *id, const char *const *paths,
                             char **new_id, GString *notes, GError **error)
{
  if (new_id) *new_id = NULL;
  git_commit *c = NULL;
  if (!resolve(cp, id, &c, error)) return false;
  git_tree *tree = NULL;
  if (git_commit_tree(&tree, c) != 0) {
    git_commit_free(c);
    return cp_git_fail(error, "cannot read the checkpoint");
  }
  Restore r = { cp, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), notes, 0 };
  cp_modes_parse(git_commit_message(c), r.modes);
  int wfd = open(cp->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (wfd < 0) fail_errno(&r);
  GPtrArray *abs = g_ptr_array_new_with_free_func(g_free);
  static const char *const whole[] = { "", NULL };
  for (const char *const *p = paths && *paths ? paths : whole; wfd >= 0 && *p; p++) {
    g_autofree char *rel = g_strdup(*p);
    while (*rel && rel[strlen(rel) - 1] == '/') rel[strlen(rel) - 1] = '\0';
    if (rel[0] == '/' || strstr(rel, "..")) {
      g_set_error(error, BOX_CHECKPOINTS_ERROR, 3, "%s: not a path in the workspace", *p);
      r.err = -1;
      break;
    }
    g_ptr_array_add(abs,
                    *rel ? g_build_filename(cp->workspace, rel, NULL) : g_strdup(cp->workspace));
    if (!*rel) {
      put_tree(&r, wfd, "", tree);
      continue;
    }
    git_tree_entry *e = NULL;
    const char *name;
    int dfd = open_parent(&r, wfd, rel, &name);
    if (dfd < 0) continue;
    if (git_tree_entry_bypath(&e, tree, rel) == 0) {
      put_entry(&r, dfd, name, rel, e);
      git_tree_entry_free(e);
    } else if (!cp_excluded(cp, rel, true)) {
      remove_all(&r, dfd, name);
    }
    close(dfd);
  }
  if (wfd >= 0) close(wfd);
  g_ptr_array_add(abs, NULL);
  bool ok = r.err == 0;
  if (!ok && r.err > 0)
    g_set_error(error, BOX_CHECKPOINTS_ERROR, 4, "cannot restore the workspace: %s",
                g_strerror(r.err));
  char idshort[13];
  git_oid_tostr(idshort, sizeof idshort, git_commit_id(c));
  g_autofree char *subject = g_strdup_printf("restore %s", idshort);
  g_autofree char *body = g_strdup_printf("kind: restore\nrestored: %s\n", id);
  char *made = NULL;
  /* what was put back is recorded even after a failure part way */
  if (r.err >= 0 && !box_checkpoints_record(cp, (const char *const *)abs->pdata, subject, body,
                                            &made, ok ? error : NULL))
    ok = false;
  if (new_id)
    *new_id = made;
  else
    g_free(made);
  g_ptr_array_unref(abs);
  g_hash_table_unref(r.modes);
  git_tree_free(tree);
  git_commit_free(c);
  return ok;
}
