/* fastopen.c — boxd's side of the Shell's fast path for reading regular
 * files: the same decision the mount would make at OPEN, made here for a
 * batch of paths, with the descriptors handed back over the worker's
 * control channel so the worker's reads run at native speed.
 *
 * Anything this cannot judge exactly as the mount would is sent back to
 * the mount ("fallback"): a path outside the bound roots (RAM areas), one
 * with a symlink or ".." on the way (the kernel must resolve those through
 * the mount, so policy sees the target), anything that is not a regular
 * file, and anything a floor guards (the mount records the floor's deny).
 * Never a directory descriptor: openat() on it would walk around the mount. */
#include "box/fastopen.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "box/ctl.h"

static bool within(const char *path, const char *dir)
{
  size_t n = strlen(dir);
  if (n == 1 && dir[0] == '/')
    return path[0] == '/';
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* cwd + path with "." and repeated slashes dropped; NULL when a ".."
 * component (its meaning depends on symlinks) or a relative cwd. */
static char *absolute(const char *cwd, const char *path)
{
  if (path[0] != '/' && (!cwd || cwd[0] != '/'))
    return NULL;
  size_t cl = path[0] == '/' ? 0 : strlen(cwd);
  char *out = g_malloc(cl + strlen(path) + 2);
  size_t n = 0;
  /* one pass over cwd then path, component by component */
  const char *srcs[2] = { path[0] == '/' ? "" : cwd, path };
  for (int k = 0; k < 2; k++) {
    const char *q = srcs[k];
    while (*q) {
      while (*q == '/')
        q++;
      const char *e = q;
      while (*e && *e != '/')
        e++;
      size_t len = (size_t)(e - q);
      if (len == 2 && q[0] == '.' && q[1] == '.') {
        g_free(out);
        return NULL;
      }
      if (len && !(len == 1 && q[0] == '.')) {
        out[n++] = '/';
        memcpy(out + n, q, len);
        n += len;
      }
      q = e;
    }
  }
  if (n == 0) {
    g_free(out);
    return NULL;
  }
  out[n] = '\0';
  return out;
}

static const char *root_of(Boxd *d, const char *path)
{
  for (char **r = d->roots; r && *r; r++)
    if (within(path, *r))
      return *r;
  return NULL;
}

/* The authority files (box.toml, the policy) and their identities, taken
 * once per request. */
typedef struct {
  const char *path[2];
  struct stat st[2];
  bool have[2];
} Floors;

static void floors_load(Boxd *d, Floors *f)
{
  f->path[0] = d->config->path;
  f->path[1] = d->config->policy;
  for (int i = 0; i < 2; i++)
    f->have[i] = f->path[i] && stat(f->path[i], &f->st[i]) == 0;
}

/* The floors of vfs_core.c's floor_reason, as a question: may the fast path
 * take this object?  Guarded objects go through the mount, which records
 * the floor's deny. */
static bool guarded(Boxd *d, const Floors *f, const char *path, const struct stat *st)
{
  if (d->config->box_dir && within(path, d->config->box_dir))
    return true;
  for (int i = 0; i < 2; i++) {
    if (f->path[i] && strcmp(path, f->path[i]) == 0)
      return true;
    if (f->have[i] && f->st[i].st_dev == st->st_dev && f->st[i].st_ino == st->st_ino)
      return true;   /* a hard link to an authority file */
  }
  return false;
}

static char *spell(Boxd *d, const char *path)
{
  const char *home = d->operator_home;
  if (home && home[0] == '/' && home[1] && within(path, home)) {
    size_t n = strlen(home);
    return path[n] ? g_strconcat("~", path + n, NULL) : g_strdup("~");
  }
  return g_strdup(path);
}

/* The mount's mode check (vfs_ops.c perm_ok) for reading, for the worker's
 * uid and gid. */
static bool may_read(const struct stat *st, uid_t uid, gid_t gid)
{
  if (uid == 0)
    return true;
  unsigned bits = uid == st->st_uid ? (st->st_mode >> 6) & 7
                  : gid == st->st_gid ? (st->st_mode >> 3) & 7
                                      : st->st_mode & 7;
  return (bits & 4) != 0;
}

typedef struct {
  json_object *answers;
  int fds[BOX_FASTOPEN_MAX];
  int nfds;
  GString *log;        /* the batch's decision log lines, written before the reply */
  char nanos[32];      /* the batch's time in the log */
} Reply;

static void answer_fallback(Reply *r)
{
  json_object *a = json_object_new_object();
  json_object_object_add(a, "fallback", json_object_new_boolean(true));
  json_object_array_add(r->answers, a);
}

static void answer_err(Reply *r, int err, const char *message)
{
  json_object *a = json_object_new_object();
  json_object_object_add(a, "err", json_object_new_int(err));
  if (message)
    json_object_object_add(a, "message", json_object_new_string(message));
  json_object_array_add(r->answers, a);
}

/* The directory of the batch's last path, held open (O_PATH, reached
 * without a symlink) so that each file of it is found with a one-component
 * lookup instead of a walk from the root. */
typedef struct {
  char *path;
  int fd;
} DirCache;

static int dir_fd(DirCache *dc, const char *dir)
{
  if (dc->path && strcmp(dc->path, dir) == 0)
    return dc->fd;
  if (dc->fd >= 0)
    close(dc->fd);
  g_free(dc->path);
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  dc->fd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
  dc->path = g_strdup(dir);
  return dc->fd;
}

static void open_one(Boxd *d, const Floors *floors, DirCache *dc, int command, uid_t uid, gid_t gid,
                     const char *cwd, const char *name, Reply *r)
{
  g_autofree char *path = absolute(cwd, name);
  if (!path || !root_of(d, path)) {
    answer_fallback(r);
    return;
  }
  /* Reached with no symlink anywhere on the way: the path decided is the
   * object opened.  Its type is looked at first, so a FIFO or device is
   * never opened. */
  char *slash = strrchr(path, '/');
  *slash = '\0';
  int dfd = dir_fd(dc, path[0] ? path : "/");
  *slash = '/';
  const char *base = slash + 1;
  struct stat st;
  if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
      guarded(d, floors, path, &st)) {
    /* absent, a symlink on the way, not a regular file, or guarded: the
     * mount decides it (a denied absent path is refused there as if it
     * existed) */
    answer_fallback(r);
    return;
  }
  g_autofree char *spelled = spell(d, path);
  json_object *input = json_object_new_object();
  json_object_object_add(input, "path", json_object_new_string(spelled));
  json_object_object_add(input, "operation", json_object_new_string("read_content"));
  BoxDecision *dec = boxd_vfs_decide(d, command, "fs:read", input);
  if (!dec) {
    /* no decision could be made: let the mount refuse and record it */
    json_object_put(input);
    answer_fallback(r);
    return;
  }
  box_decision_log_render_into(d->log, r->log, "fs:read", input, NULL, dec, r->nanos);
  if (dec->verdict != BOX_VERDICT_PERMIT) {
    answer_err(r, EACCES, dec->message);
    box_decision_free(dec);
    json_object_put(input);
    return;
  }
  box_decision_free(dec);
  int fd = -1;
  int err = 0;
  if (!may_read(&st, uid, gid)) {
    err = EACCES;
  } else {
    /* O_NONBLOCK: should the name now be a FIFO, the open returns at once
     * and the identity check below refuses it.  It stays set on the
     * descriptor handed out: on a regular file it changes nothing, and
     * clearing it was one more system call per file. */
    struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
    fd = (int)syscall(SYS_openat2, dfd, base, &how, sizeof how);
    struct stat now;
    if (fd < 0)
      err = errno;
    else if (fstat(fd, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino ||
             !S_ISREG(now.st_mode)) {
      close(fd);   /* identity changed under us: never hand out another object */
      fd = -1;
      err = ESTALE;
    }
  }
  if (fd < 0) {
    /* permitted but not acted on: no outcome, as the mount does */
    boxd_vfs_outcome(d, command, "fs:read", input, NULL);
    answer_err(r, err, NULL);
  } else {
    boxd_vfs_outcome(d, command, "fs:read", input, "descriptor_issued");
    json_object *a = json_object_new_object();
    json_object_object_add(a, "fd", json_object_new_boolean(true));
    json_object_array_add(r->answers, a);
    r->fds[r->nfds++] = fd;
  }
  json_object_put(input);
}

static void log_buf_free(gpointer p)
{
  g_string_free(p, TRUE);
}

/* the batch's log lines, a buffer kept per thread: no allocation per batch */
static GPrivate log_buf_key = G_PRIVATE_INIT(log_buf_free);

void box_fastopen_handle(Boxd *d, int command, pid_t worker, json_object *msg, int reply_fd)
{
  (void)worker;
  struct ucred cred = { 0 };
  socklen_t cl = sizeof cred;
  /* the reply socket was made by the worker: its credentials are the caller's */
  bool have_cred = getsockopt(reply_fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0;
  json_object *cwd_o = NULL, *paths = NULL;
  json_object_object_get_ex(msg, "cwd", &cwd_o);
  json_object_object_get_ex(msg, "paths", &paths);
  GString *log_buf = g_private_get(&log_buf_key);
  if (!log_buf) {
    log_buf = g_string_sized_new(64 * 1024);
    g_private_set(&log_buf_key, log_buf);
  }
  Reply r = { .answers = json_object_new_array(), .nfds = 0, .log = log_buf };
  box_decision_log_now(r.nanos);
  size_t n = paths && json_object_is_type(paths, json_type_array) ? json_object_array_length(paths) : 0;
  if (n > BOX_FASTOPEN_MAX)
    n = BOX_FASTOPEN_MAX;
  Floors floors;
  floors_load(d, &floors);
  /* The batch's history records and log lines are each written in one
   * write(2), after all its decisions and before the reply: nothing is
   * answered that is not on disk. */
  box_policy_history_batch_begin(d->policy);
  DirCache dc = { NULL, -1 };
  for (size_t i = 0; i < n; i++) {
    const char *p = json_object_get_string(json_object_array_get_idx(paths, i));
    if (!p || !have_cred || !*p)
      answer_fallback(&r);
    else
      open_one(d, &floors, &dc, command, cred.uid, cred.gid, cwd_o ? json_object_get_string(cwd_o) : NULL, p,
               &r);
  }
  if (dc.fd >= 0)
    close(dc.fd);
  g_free(dc.path);
  bool recorded = box_policy_history_batch_end(d->policy);
  box_decision_log_write(d->log, r.log);
  if (!recorded) {
    /* the history could not keep these decisions: none is acted on */
    for (int i = 0; i < r.nfds; i++)
      close(r.fds[i]);
    r.nfds = 0;
    json_object_put(r.answers);
    r.answers = json_object_new_array();
    for (size_t i = 0; i < n; i++)
      answer_err(&r, EIO, NULL);
  }
  json_object *reply = json_object_new_object();
  json_object_object_add(reply, "answers", r.answers);
  box_ctl_send(reply_fd, reply, r.fds, r.nfds);
  json_object_put(reply);
  for (int i = 0; i < r.nfds; i++)
    close(r.fds[i]);
  close(reply_fd);
}
