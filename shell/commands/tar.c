/* tar.c — GNU tar's -c -x -t with -f -z -j -J -C -v -O -k,
 * --strip-components and --exclude, over libarchive (archive.h).
 *
 * Every member is its own open, mkdir, symlink or link on the mount, so
 * the mount decides each one where it really lands.  As GNU tar does by
 * default, a member whose name holds a ".." component is refused, leading
 * "/" and "../" are removed from names, an existing file is unlinked
 * before a member replaces it (so a planted symlink is replaced, not
 * written through), and a symlink that points up or away is made last,
 * after every other member, with a placeholder file in its place until
 * then (so no later member is written through it).
 *
 * A member is one decision: its file is created with its mode, and its
 * modification time is set on the descriptor that wrote it, before it is
 * closed, which the mount counts as part of that write (-m leaves it). */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/archive.h"

typedef struct {
  BoxCmd *c;
  char op; /* 'c', 'x', 't' */
  char comp;
  const char *file, *dir;
  int verbose;
  bool to_stdout, keep_old, touch;
  long strip;
  GPtrArray *excludes;
  int status;
  bool fatal; /* "Error is not recoverable" said */
  bool dir_checked;
  mode_t umask; /* -x: the umask, read once (not two syscalls a member) */
  bool root;    /* -x: run as root, so modes are restored whole */
  int ugswidth;
  int list_fd;          /* where -v writes: stderr when stdout carries data */
  GHashTable *reported; /* the "Removing leading" prefixes said once */
  GPtrArray *delayed;   /* symlinks made last: path, target, path, … */
  GHashTable *links;    /* -c: "dev:ino" of multiply linked files → name */
  struct archive *out;
  bool fast;       /* -x: small files are made in batches through the host */
  bool slow;       /* --box-slow-path: never (to compare the two) */
  int wildcards;   /* --wildcards 1, --no-wildcards -1, neither 0 */
  GArray *pending; /* -x: Pending, the batch not made yet */
  size_t pending_bytes;
} Tar;

/* A small file read ahead of its creation, for a batch. */
typedef struct {
  char *path, *name;
  mode_t mode;
  bool has_mtime;
  struct timespec mtime;
  char *data;
  size_t len;
  char *error; /* the archive's, when reading the data failed */
} Pending;

#define FAST_FILE_MAX (64 * 1024)
#define FAST_BYTES_MAX (1024 * 1024)

static const char longopts[] = "create=c extract=x get=x list=t file=f: gzip=z gunzip=z "
                               "ungzip=z bzip2=j xz=J directory=C: verbose=v to-stdout=O "
                               "keep-old-files=k touch=m preserve-permissions=p same-permissions=p "
                               "strip-components=\1: exclude=\2: no-same-owner=\3 overwrite=\4 "
                               "box-slow-path=\5 wildcards=\6 no-wildcards=\7";

static void fail(Tar *t, const char *name, const char *what, int err)
{
  if (t->fatal) return;
  g_autofree char *text = bx_errtext(t->c, err);
  bx_err(t->c, "tar", "%s: %s: %s", name, what, text);
  t->status = 2;
}

static int fatal(Tar *t, const char *name, const char *what, int err)
{
  if (name) fail(t, name, what, err);
  bx_err(t->c, "tar", "Error is not recoverable: exiting now");
  t->fatal = true;
  return 2;
}

static int try_usage(BoxCmd *c, const char *msg)
{
  box_out_flush(c->out);
  box_fdprintf(c->err, "tar: %s\nTry 'tar --help' or 'tar --usage' for more information.\n", msg);
  return 2;
}

static bool has_dot_dot(const char *s)
{
  for (const char *p = s; *p;) {
    if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2])) return true;
    while (*p && *p != '/') p++;
    while (*p == '/') p++;
  }
  return false;
}

/* GNU's safer_name_suffix: name past its leading "/" and past its last
 * ".." component, the prefix removed said once per prefix. */
static size_t unsafe_prefix(const char *name)
{
  size_t cut = 0;
  for (const char *p = name; *p;) {
    if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2])) cut = (size_t)(p + 2 - name);
    while (*p && *p != '/') p++;
    while (*p == '/') p++;
  }
  while (name[cut] == '/') cut++;
  return cut;
}

static const char *safer_name(Tar *t, const char *name, const char *what)
{
  size_t cut = unsafe_prefix(name);
  if (!cut) return name;
  g_autofree char *prefix = g_strndup(name, cut);
  if (!g_hash_table_contains(t->reported, prefix)) {
    bx_err(t->c, "tar", "Removing leading `%s' from %s", prefix, what);
    g_hash_table_add(t->reported, g_steal_pointer(&prefix));
  }
  return name[cut] ? name + cut : ".";
}

/* name without its first n components; NULL when it has no more. */
static const char *strip_components(const char *name, long n)
{
  const char *p = name;
  for (long i = 0; i < n; i++) {
    p = strchr(p, '/');
    if (!p) return NULL;
    while (*p == '/') p++;
  }
  return *p ? p : NULL;
}

/* --exclude matches the name or any tail of it that starts a component,
 * and a directory's match covers what is under it. */
static bool excluded(Tar *t, const char *name)
{
  for (guint i = 0; i < t->excludes->len; i++) {
    const char *pat = t->excludes->pdata[i];
    for (const char *p = name; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
      if (box_fnmatch(pat, p, FNM_LEADING_DIR) == 0) return true;
  }
  return false;
}

/* The first operand that names a member: the operand itself or under it;
 * with --wildcards a pattern whose '*' crosses '/', as GNU's for members. */
static int selected(Tar *t, char **ops, int nops, const char *name)
{
  for (int i = 0; i < nops; i++) {
    size_t n = strlen(ops[i]);
    while (n > 1 && ops[i][n - 1] == '/') n--;
    if (t->wildcards > 0) {
      g_autofree char *pat = g_strndup(ops[i], n);
      if (box_fnmatch(pat, name, FNM_LEADING_DIR) == 0) return i;
    } else if (strncmp(name, ops[i], n) == 0 && (!name[n] || name[n] == '/')) {
      return i;
    }
  }
  return -1;
}

static char *target_path(Tar *t, const char *name)
{
  return t->dir ? bx_path_join(t->dir, name) : g_strdup(name);
}

/* One line of -tv: mode, owner/group, size, date, name (and its link). */
static void list_long(Tar *t, struct archive_entry *e, GString *o)
{
  char mode[11];
  bx_mode_string(archive_entry_mode(e), mode);
  if (archive_entry_hardlink(e)) mode[0] = 'h';
  char ubuf[24], gbuf[24], size[48];
  const char *u = archive_entry_uname(e), *g = archive_entry_gname(e);
  if (!u || !*u) g_snprintf(ubuf, sizeof ubuf, "%lld", (long long)archive_entry_uid(e)), u = ubuf;
  if (!g || !*g) g_snprintf(gbuf, sizeof gbuf, "%lld", (long long)archive_entry_gid(e)), g = gbuf;
  mode_t type = archive_entry_filetype(e);
  if (type == AE_IFCHR || type == AE_IFBLK)
    g_snprintf(size, sizeof size, "%lu,%lu", (unsigned long)archive_entry_rdevmajor(e),
               (unsigned long)archive_entry_rdevminor(e));
  else
    g_snprintf(size, sizeof size, "%lld",
               archive_entry_hardlink(e) ? 0LL : (long long)archive_entry_size(e));
  int pad = (int)(strlen(u) + 1 + strlen(g) + 1 + strlen(size));
  if (pad > t->ugswidth) t->ugswidth = pad;
  time_t mt = archive_entry_mtime(e);
  struct tm tm;
  char when[64];
  localtime_r(&mt, &tm);
  strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
  g_string_append_printf(o, "%s %s/%s %*s %-16s %s", mode, u, g,
                         t->ugswidth - pad + (int)strlen(size), size, when,
                         archive_entry_pathname(e));
  if (archive_entry_hardlink(e))
    g_string_append_printf(o, " link to %s", archive_entry_hardlink(e));
  else if (type == AE_IFLNK)
    g_string_append_printf(o, " -> %s", archive_entry_symlink(e));
}

static void list_entry(Tar *t, struct archive_entry *e, int level)
{
  g_autoptr(GString) o = g_string_new(NULL);
  if (level >= 2)
    list_long(t, e, o);
  else
    g_string_append(o, archive_entry_pathname(e));
  g_string_append_c(o, '\n');
  if (t->list_fd == 1) {
    bx_put(t->c, o->str, o->len);
  } else {
    box_out_flush(t->c->out);
    box_write_all(t->c->err, o->str, o->len);
  }
}

/* ---- extraction -------------------------------------------------------------- */

/* Whether a missing directory on the way may be made: not -C's own (GNU
 * tar cannot change into it and stops).  Asked only after a member's path
 * was missing, so a member costs no decision more. */
static bool may_make_parents(Tar *t)
{
  if (!t->dir || t->dir_checked) return !t->fatal;
  t->dir_checked = true;
  int d = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d < 0) return fatal(t, t->dir, "Cannot open", errno), false;
  close(d);
  return true;
}

/* open(2)/mkdir(2)/… again after making the missing directories on the way. */
#define WITH_PARENTS(path, call)                                                                   \
  ({                                                                                               \
    int r_ = (call);                                                                               \
    if (r_ < 0 && errno == ENOENT) {                                                               \
      if (may_make_parents(t))                                                                     \
        r_ = bx_make_parents(path) == 0 ? (call) : -1;                                             \
      else                                                                                         \
        errno = 0;                                                                                 \
    }                                                                                              \
    r_;                                                                                            \
  })

/* The room for a new member at path: an existing non-directory is
 * unlinked (never written through), unless -k keeps it. */
static bool make_room(Tar *t, const char *path, const char *name)
{
  if (t->keep_old) {
    fail(t, name, "Cannot open", EEXIST);
    return false;
  }
  if (unlink(path) < 0 && errno != ENOENT) {
    fail(t, name, "Cannot unlink", errno);
    return false;
  }
  return true;
}

/* The member's descriptor after the first open(2) gave fd (errno set when
 * it failed): an existing file is replaced; -1 when it cannot be (said). */
static int member_fd(Tar *t, const char *path, const char *name, mode_t mode, int fd)
{
  if (fd < 0 && errno == EEXIST && make_room(t, path, name))
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  else if (fd < 0 && errno == EEXIST)
    return -1;
  if (fd < 0) fail(t, name, "Cannot open", errno);
  return fd;
}

/* A new member's descriptor, through the mount (the parents it needs made). */
static int open_member(Tar *t, const char *path, const char *name, mode_t mode)
{
  return member_fd(t, path, name, mode,
                   WITH_PARENTS(path, open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)));
}

/* After the data: the mode and the modification time set on the
 * descriptor that wrote it, then closed.  werr: a failed write's errno. */
static void finish_member(Tar *t, int fd, const char *name, mode_t mode, bool has_mtime,
                          struct timespec mtime, int werr)
{
  if (werr > 0) fail(t, name, "Cannot write", werr);
  /* root restores the member's mode whole, as GNU tar's --same-permissions */
  if (t->root && (mode & t->umask)) fchmod(fd, mode);
  if (!t->touch && has_mtime) {
    /* as GNU tar: the access time is left as the extraction made it */
    struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, mtime };
    futimens(fd, ts);
  }
  close(fd);
}

static void extract_file(Tar *t, struct archive *a, struct archive_entry *e, const char *path,
                         const char *name)
{
  mode_t mode = archive_entry_perm(e) & 07777;
  int fd = open_member(t, path, name, mode);
  if (fd < 0) return;
  int r = bx_archive_copy_data(a, t->c, fd);
  struct timespec mtime = { archive_entry_mtime(e), archive_entry_mtime_nsec(e) };
  finish_member(t, fd, name, mode, archive_entry_mtime_is_set(e), mtime, r);
  if (r < 0) {
    bx_err(t->c, "tar", "%s", archive_error_string(a));
    t->status = 2;
  }
}

/* ---- the fast path: small files made in batches -------------------------------
 * Each new file is decided and made by the host in one request for many,
 * instead of a lookup and a create on the mount each; the data, mode and
 * time are then written through its descriptor, as the mount's CREATE
 * would have handed it.  A file the host does not take is made here the
 * ordinary way, in its turn, so the decisions keep the archive's order. */

/* Whether e, an archive's next member, may wait in the batch: a small
 * regular file whose name needs nothing said about it. */
static bool fast_member(Tar *t, struct archive_entry *e, const char *orig)
{
  mode_t mode = archive_entry_perm(e) & 07777;
  return t->fast && archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e) &&
         archive_entry_size(e) <= FAST_FILE_MAX && !(t->root && (mode & t->umask)) &&
         unsafe_prefix(orig) == 0 && !has_dot_dot(orig);
}

static void write_pending(Tar *t, Pending *p, int fd)
{
  if (fd < 0) return;
  int werr = box_write_all(fd, p->data, p->len) ? 0 : errno;
  finish_member(t, fd, p->name, p->mode, p->has_mtime, p->mtime, werr);
  if (p->error) {
    bx_err(t->c, "tar", "%s", p->error);
    t->status = 2;
  }
}

static void pending_clear(Tar *t)
{
  for (guint i = 0; i < t->pending->len; i++) {
    Pending *p = &g_array_index(t->pending, Pending, i);
    g_free(p->path);
    g_free(p->name);
    g_free(p->data);
    g_free(p->error);
  }
  g_array_set_size(t->pending, 0);
  t->pending_bytes = 0;
}

/* Makes the batch: what the host answers, then the first it did not take
 * the ordinary way, then the rest asked for again. */
static void flush_pending(Tar *t)
{
  guint n = t->pending ? t->pending->len : 0;
  for (guint i = 0; i < n;) {
    const char *paths[BOX_CREATE_FAST_MAX];
    mode_t modes[BOX_CREATE_FAST_MAX];
    int fds[BOX_CREATE_FAST_MAX], errs[BOX_CREATE_FAST_MAX];
    int k = (int)MIN(n - i, BOX_CREATE_FAST_MAX);
    for (int j = 0; j < k; j++) {
      Pending *p = &g_array_index(t->pending, Pending, i + (guint)j);
      paths[j] = p->path;
      modes[j] = p->mode & ~t->umask; /* as the kernel applies it to open(2) */
    }
    if (t->fatal || !box_create_fast(paths, modes, k, fds, errs))
      for (int j = 0; j < k; j++) fds[j] = -1, errs[j] = 0;
    for (int j = 0; j < k; j++, i++) {
      Pending *p = &g_array_index(t->pending, Pending, i);
      int fd = fds[j];
      if (fd < 0 && !errs[j]) {
        /* not taken, nor anything after it: made here, the rest asked again */
        if (!t->fatal) fd = open_member(t, p->path, p->name, p->mode);
        write_pending(t, p, fd);
        i++;
        break;
      }
      if (fd < 0) {
        errno = errs[j];
        fd = member_fd(t, p->path, p->name, p->mode, -1);
      }
      write_pending(t, p, fd);
    }
  }
  if (t->pending) pending_clear(t);
}

/* Reads e's data into the batch; the batch is made when full. */
static void add_pending(Tar *t, struct archive *a, struct archive_entry *e, const char *name)
{
  Pending p = { .path = target_path(t, name),
                .name = g_strdup(archive_entry_pathname(e)),
                .mode = archive_entry_perm(e) & 07777,
                .has_mtime = archive_entry_mtime_is_set(e),
                .mtime = { archive_entry_mtime(e), archive_entry_mtime_nsec(e) } };
  /* the blocks one after another, as bx_archive_copy_data writes them */
  GString *data = g_string_sized_new((size_t)archive_entry_size(e));
  const void *buf;
  size_t n;
  la_int64_t off;
  int r;
  while ((r = archive_read_data_block(a, &buf, &n, &off)) == ARCHIVE_OK)
    g_string_append_len(data, buf, (gssize)n);
  if (r != ARCHIVE_EOF) p.error = g_strdup(archive_error_string(a));
  p.len = data->len;
  p.data = g_string_free(data, FALSE);
  g_array_append_val(t->pending, p);
  t->pending_bytes += p.len;
  if (t->pending->len >= BOX_CREATE_FAST_MAX || t->pending_bytes >= FAST_BYTES_MAX)
    flush_pending(t);
}

static void extract_link(Tar *t, struct archive_entry *e, const char *path, const char *name)
{
  const char *target = archive_entry_hardlink(e);
  target = safer_name(t, target, "hard link targets");
  target = strip_components(target, t->strip);
  if (!target) return;
  g_autofree char *tpath = target_path(t, target);
  int r = WITH_PARENTS(path, link(tpath, path));
  if (r < 0 && errno == EEXIST && !t->keep_old && unlink(path) == 0) r = link(tpath, path);
  if (r < 0) {
    g_autofree char *q = bx_quote_always(target);
    g_autofree char *what = g_strdup_printf("Cannot hard link to %s", q);
    fail(t, name, what, errno);
  }
}

static void symlink_failed(Tar *t, const char *name, const char *target, int err)
{
  g_autofree char *q = bx_quote_always(target);
  g_autofree char *what = g_strdup_printf("Cannot create symlink to %s", q);
  fail(t, name, what, err);
}

static void extract_symlink(Tar *t, struct archive_entry *e, const char *path, const char *name)
{
  const char *target = archive_entry_symlink(e);
  bool later = target[0] == '/' || has_dot_dot(target);
  int r;
  if (later)
    r = WITH_PARENTS(path, open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0));
  else
    r = WITH_PARENTS(path, symlink(target, path));
  if (r < 0 && errno == EEXIST && make_room(t, path, name))
    r = later ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0) : symlink(target, path);
  else if (r < 0 && errno == EEXIST)
    return;
  if (r < 0) {
    symlink_failed(t, name, target, errno);
    return;
  }
  if (later) {
    close(r);
    g_ptr_array_add(t->delayed, g_strdup(path));
    g_ptr_array_add(t->delayed, g_strdup(target));
    g_ptr_array_add(t->delayed, g_strdup(name));
  }
}

static void extract_dir(Tar *t, struct archive_entry *e, const char *path, const char *name)
{
  mode_t mode = archive_entry_perm(e) & 07777;
  bool made = WITH_PARENTS(path, mkdir(path, mode | 0700)) == 0;
  if (!made && errno != EEXIST) {
    fail(t, name, "Cannot mkdir", errno);
    return;
  }
  /* root gives the member's mode to a directory already there too; through
   * a descriptor, as glibc's fchmodat(AT_SYMLINK_NOFOLLOW) needs /proc,
   * which a box has not, and O_NOFOLLOW leaves a symlink alone */
  if (t->root && (!made || ((mode | 0700) & ~t->umask) != mode)) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      fchmod(fd, mode);
      close(fd);
    }
  }
}

static void extract_entry(Tar *t, struct archive *a, struct archive_entry *e, const char *name)
{
  const char *orig = archive_entry_pathname(e);
  if (t->to_stdout) {
    if (archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e)) {
      int r = bx_archive_copy_data(a, t->c, -1);
      if (r) {
        bx_err(t->c, "tar", "%s", archive_error_string(a));
        t->status = 2;
      }
    }
    return;
  }
  g_autofree char *path = target_path(t, name);
  if (archive_entry_hardlink(e)) {
    extract_link(t, e, path, orig);
    return;
  }
  switch (archive_entry_filetype(e)) {
  case AE_IFDIR: extract_dir(t, e, path, orig); break;
  case AE_IFLNK: extract_symlink(t, e, path, orig); break;
  case AE_IFIFO:
    if (WITH_PARENTS(path, mkfifo(path, archive_entry_perm(e))) < 0)
      fail(t, orig, "Cannot mkfifo", errno);
    break;
  case AE_IFREG: extract_file(t, a, e, path, orig); break;
  default: fail(t, orig, "Cannot mknod", EPERM); break;
  }
}

/* The symlinks held back, made now where their placeholders still are. */
static void finish_delayed(Tar *t)
{
  for (guint i = 0; i + 2 < t->delayed->len; i += 3) {
    const char *path = t->delayed->pdata[i], *target = t->delayed->pdata[i + 1];
    if (unlink(path) < 0 || symlink(target, path) < 0)
      symlink_failed(t, t->delayed->pdata[i + 2], target, errno);
  }
}

static int read_archive(Tar *t, char **ops, int nops)
{
  bool std = !t->file || strcmp(t->file, "-") == 0;
  int fd = std ? dup(t->c->in) : box_open_file(t->file, O_RDONLY | O_NOCTTY);
  if (fd < 0) return fatal(t, std ? "-" : t->file, "Cannot open", errno);
  t->umask = umask(0);
  umask(t->umask);
  t->root = geteuid() == 0;
  t->fast = t->op == 'x' && !t->to_stdout && !t->verbose && !t->slow &&
            box_create_fast(NULL, NULL, 0, NULL, NULL);
  struct archive *a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  bool *found = g_new0(bool, nops > 0 ? nops : 1);
  int rc = bx_archive_read_fd(a, fd, true);
  struct archive_entry *e;
  int n = 0;
  while (rc == ARCHIVE_OK || rc == ARCHIVE_WARN) {
    rc = archive_read_next_header(a, &e);
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) break;
    n++;
    const char *orig = archive_entry_pathname(e);
    /* anything else first makes the batch, so that it keeps its turn */
    bool fast = fast_member(t, e, orig);
    if (!fast) flush_pending(t);
    /* GNU says what it removes from the members it handles only */
    size_t cut = unsafe_prefix(orig);
    if (nops) {
      int k = selected(t, ops, nops, orig[cut] ? orig + cut : ".");
      if (k < 0) continue;
      found[k] = true;
    }
    const char *safe = safer_name(t, orig, "member names");
    if (t->excludes->len && excluded(t, safe)) continue;
    const char *name = strip_components(safe, t->strip);
    if (!name) continue;
    if (t->op == 't') {
      list_entry(t, e, t->verbose + 1);
      continue;
    }
    if (has_dot_dot(orig)) {
      bx_err(t->c, "tar", "%s: Member name contains '..'", orig);
      t->status = 2;
      continue;
    }
    /* GNU changes into -C's directory before it names any member */
    if (t->verbose && !may_make_parents(t)) break;
    if (t->verbose) list_entry(t, e, t->verbose);
    if (fast)
      add_pending(t, a, e, name);
    else
      extract_entry(t, a, e, name);
    if (t->fatal) break;
  }
  flush_pending(t);
  if (rc == ARCHIVE_FATAL) {
    const char *why = archive_error_string(a);
    if (n == 0 || (why && strstr(why, "Unrecognized archive format")))
      bx_err(t->c, "tar", "This does not look like a tar archive");
    else
      bx_err(t->c, "tar", "%s", why ? why : "Unexpected EOF in archive");
    t->status = 2;
  }
  archive_read_free(a);
  if (t->fatal) {
    g_free(found);
    return 2;
  }
  finish_delayed(t);
  for (int i = 0; i < nops; i++)
    if (!found[i]) {
      if (!t->wildcards && strpbrk(ops[i], "*?[")) {
        bx_err(t->c, "tar", "Pattern matching characters used in file names");
        bx_err(t->c, "tar",
               "Use --wildcards to enable pattern matching, or --no-wildcards to suppress this "
               "warning");
      }
      bx_err(t->c, "tar", "%s: Not found in archive", ops[i]);
      t->status = 2;
    }
  g_free(found);
  return t->status;
}

/* ---- creation ---------------------------------------------------------------- */

static bool write_data(Tar *t, int fd, const char *name)
{
  char buf[1 << 16];
  ssize_t n;
  while ((n = bx_read(fd, buf, sizeof buf)) > 0)
    if (archive_write_data(t->out, buf, (size_t)n) < 0) return false;
  if (n < 0) fail(t, name, "Read error", errno);
  return true;
}

static bool add_path(Tar *t, const char *disk, const char *shown);

static bool add_dir(Tar *t, const char *disk, const char *shown)
{
  int err = 0;
  GArray *v = bx_list_dir(disk, &err);
  if (!v) {
    fail(t, shown, "Cannot open", err);
    return true;
  }
  bool ok = true;
  bool slash = shown[strlen(shown) - 1] == '/';
  for (guint i = 0; ok && i < v->len; i++) {
    const char *child = g_array_index(v, BxDirEnt, i).name;
    g_autofree char *cd = bx_path_join(disk, child);
    g_autofree char *cn = slash ? g_strconcat(shown, child, NULL) : bx_path_join(shown, child);
    ok = add_path(t, cd, cn);
  }
  bx_dir_free(v);
  return ok;
}

/* shown: the name as given (messages say it), stored without what
 * safer_name removes.  false when the archive itself failed (nothing more
 * can be written). */
static bool add_path(Tar *t, const char *disk, const char *shown)
{
  size_t cut = unsafe_prefix(shown);
  const char *name = shown[cut] ? shown + cut : ".";
  if (t->excludes->len && excluded(t, name)) return true;
  struct stat st;
  if (lstat(disk, &st) < 0) {
    fail(t, shown, "Cannot stat", errno);
    return true;
  }
  int fd = -1;
  if (S_ISREG(st.st_mode)) {
    fd = box_open_file(disk, O_RDONLY | O_NOCTTY);
    if (fd < 0) {
      fail(t, shown, "Cannot open", errno);
      return true;
    }
  }
  struct archive_entry *e = archive_entry_new();
  archive_entry_copy_stat(e, &st);
  if (!S_ISREG(st.st_mode)) archive_entry_set_size(e, 0);
  g_autofree char *stored = S_ISDIR(st.st_mode) && name[strlen(name) - 1] != '/'
                              ? g_strconcat(name, "/", NULL)
                              : g_strdup(name);
  archive_entry_set_pathname(e, stored);
  const char *u = bx_user_name(st.st_uid), *g = bx_group_name(st.st_gid);
  if (u) archive_entry_set_uname(e, u);
  if (g) archive_entry_set_gname(e, g);
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t n = readlink(disk, target, sizeof target - 1);
    if (n < 0) {
      fail(t, shown, "Cannot readlink", errno);
      archive_entry_free(e);
      return true;
    }
    target[n] = '\0';
    archive_entry_set_symlink(e, target);
  } else if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
    char *key =
      g_strdup_printf("%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    const char *first = g_hash_table_lookup(t->links, key);
    if (first) {
      archive_entry_set_hardlink(e, first);
      archive_entry_set_size(e, 0);
      close(fd);
      fd = -1;
      g_free(key);
    } else {
      g_hash_table_insert(t->links, key, g_strdup(stored));
    }
  }
  if (t->verbose) list_entry(t, e, t->verbose);
  bool ok = archive_write_header(t->out, e) >= ARCHIVE_WARN;
  if (ok && fd >= 0) ok = write_data(t, fd, shown);
  if (fd >= 0) close(fd);
  archive_entry_free(e);
  if (ok && S_ISDIR(st.st_mode)) ok = add_dir(t, disk, shown);
  return ok;
}

static int create_archive(Tar *t, char **ops, int nops)
{
  if (!nops) return try_usage(t->c, "Cowardly refusing to create an empty archive");
  bool std = !t->file || strcmp(t->file, "-") == 0;
  int fd = -1;
  if (!std) {
    fd = open(t->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return fatal(t, t->file, "Cannot open", errno);
  }
  t->out = archive_write_new();
  archive_write_set_format_gnutar(t->out);
  if (t->comp == 'z') archive_write_add_filter_gzip(t->out);
  if (t->comp == 'j') archive_write_add_filter_bzip2(t->out);
  if (t->comp == 'J') archive_write_add_filter_xz(t->out);
  if (bx_archive_write_fd(t->out, t->c, fd) != ARCHIVE_OK) {
    archive_write_free(t->out);
    return fatal(t, t->file, "Cannot open", EIO);
  }
  bool ok = true;
  for (int i = 0; ok && i < nops; i++) {
    safer_name(t, ops[i], "member names");
    g_autofree char *disk =
      t->dir && ops[i][0] != '/' ? bx_path_join(t->dir, ops[i]) : g_strdup(ops[i]);
    ok = add_path(t, disk, ops[i]);
  }
  if (!ok || archive_write_close(t->out) != ARCHIVE_OK) {
    bx_err(t->c, "tar", "%s", archive_error_string(t->out));
    archive_write_free(t->out);
    return fatal(t, NULL, NULL, 0);
  }
  archive_write_free(t->out);
  return t->status;
}

/* ---- the command --------------------------------------------------------------- */

/* GNU tar's old form "tar xzf A …": the first word's letters are options,
 * each that takes an argument taking the next word. */
static char **old_style(BoxCmd *c, int *argc)
{
  GPtrArray *v = g_ptr_array_new();
  g_ptr_array_add(v, g_strdup(c->argv[0]));
  int next = 2;
  for (const char *p = c->argv[1]; *p; p++) {
    g_ptr_array_add(v, g_strdup_printf("-%c", *p));
    if (strchr("fCbgKLNTVX", *p) && next < c->argc) g_ptr_array_add(v, g_strdup(c->argv[next++]));
  }
  for (int i = next; i < c->argc; i++) g_ptr_array_add(v, g_strdup(c->argv[i]));
  *argc = (int)v->len;
  g_ptr_array_add(v, NULL);
  return (char **)g_ptr_array_free(v, FALSE);
}

static int run_tar(Tar *t, BoxCmd *c)
{
  BX_EACH_OPTION_TRY (o, c, "tar", "cxtf:zjJC:vOkmp", longopts,
                      "Try '@ --help' or '@ --usage' for more information.")
    switch (o) {
    case 'c':
    case 'x':
    case 't':
      if (t->op && t->op != o)
        return try_usage(c, "You may not specify more than one '-Acdtrux', '--delete' or  "
                            "'--test-label' option");
      t->op = (char)o;
      break;
    case 'f': t->file = optarg; break;
    case 'z':
    case 'j':
    case 'J': t->comp = (char)o; break;
    case 'C': t->dir = optarg; break;
    case 'v': t->verbose++; break;
    case 'O': t->to_stdout = true; break;
    case 'k': t->keep_old = true; break;
    case 'm': t->touch = true; break;
    case 'p':
    case 3:
    case 4: break;
    case 5: t->slow = true; break;
    case 6: t->wildcards = 1; break;
    case 7: t->wildcards = -1; break;
    case 1: {
      char *end;
      t->strip = strtol(optarg, &end, 10);
      if (*end || t->strip < 0) {
        g_autofree char *m = g_strdup_printf("Invalid number of elements: %s", optarg);
        return try_usage(c, m);
      }
      break;
    }
    case 2: g_ptr_array_add(t->excludes, optarg); break;
    default: return 64;
    }
  if (!t->op)
    return try_usage(c, "You must specify one of the '-Acdtrux', '--delete' or '--test-label' "
                        "options");
  bool data_out = t->to_stdout || (t->op == 'c' && (!t->file || strcmp(t->file, "-") == 0));
  t->list_fd = data_out ? 2 : 1;
  char **ops = c->argv + optind;
  int nops = c->argc - optind;
  int st = t->op == 'c' ? create_archive(t, ops, nops) : read_archive(t, ops, nops);
  if (t->status && !t->fatal)
    bx_err(c, "tar", "Exiting with failure status due to previous errors");
  return st;
}

int box_cmd_tar(BoxCmd *c)
{
  if (!(box_archive = box_dl_command(&box_archive_dl, c, "tar"))) return 2;
  Tar t = { .c = c, .ugswidth = 19 };
  t.excludes = g_ptr_array_new();
  t.reported = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  t.delayed = g_ptr_array_new_with_free_func(g_free);
  t.links = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  t.pending = g_array_new(FALSE, FALSE, sizeof(Pending));
  BoxCmd oc = *c;
  char **argv = NULL;
  if (c->argc > 1 && c->argv[1][0] != '-') {
    argv = old_style(c, &oc.argc);
    oc.argv = argv;
  }
  int st = run_tar(&t, &oc);
  g_strfreev(argv);
  g_ptr_array_free(t.excludes, TRUE);
  g_hash_table_destroy(t.reported);
  g_ptr_array_free(t.delayed, TRUE);
  g_hash_table_destroy(t.links);
  pending_clear(&t);
  g_array_free(t.pending, TRUE);
  return st;
}
