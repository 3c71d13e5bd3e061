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
  g_autofree char *joined = path[0] == '/' ? g_strdup(path) : g_strconcat(cwd, "/", path, NULL);
  GString *out = g_string_new(NULL);
  gchar **parts = g_strsplit(joined, "/", -1);
  bool ok = true;
  for (gchar **p = parts; *p; p++) {
    if (!**p || strcmp(*p, ".") == 0)
      continue;
    if (strcmp(*p, "..") == 0) {
      ok = false;
      break;
    }
    g_string_append_c(out, '/');
    g_string_append(out, *p);
  }
  g_strfreev(parts);
  if (!ok || out->len == 0) {
    g_string_free(out, TRUE);
    return NULL;
  }
  return g_string_free(out, FALSE);
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

static void open_one(Boxd *d, const Floors *floors, int command, uid_t uid, gid_t gid, const char *cwd,
                     const char *name, Reply *r)
{
  g_autofree char *path = absolute(cwd, name);
  if (!path || !root_of(d, path)) {
    answer_fallback(r);
    return;
  }
  /* Reached with no symlink anywhere on the way: the path decided is the
   * object opened.  O_PATH first, so a FIFO or device is never opened. */
  struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  int pfd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  struct stat st;
  if (pfd < 0 || fstat(pfd, &st) != 0 || !S_ISREG(st.st_mode) || guarded(d, floors, path, &st)) {
    /* absent, a symlink on the way, not a regular file, or guarded: the
     * mount decides it (a denied absent path is refused there as if it
     * existed) */
    if (pfd >= 0)
      close(pfd);
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
    close(pfd);
    json_object_put(input);
    answer_fallback(r);
    return;
  }
  boxd_vfs_record(d, command, "fs:read", input, dec);
  if (dec->verdict != BOX_VERDICT_PERMIT) {
    close(pfd);
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
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
    fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat now;
    if (fd < 0)
      err = errno;
    else if (fstat(fd, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
      close(fd);   /* identity changed under us: never hand out another object */
      fd = -1;
      err = ESTALE;
    }
  }
  close(pfd);
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
  Reply r = { .answers = json_object_new_array(), .nfds = 0 };
  size_t n = paths && json_object_is_type(paths, json_type_array) ? json_object_array_length(paths) : 0;
  if (n > BOX_FASTOPEN_MAX)
    n = BOX_FASTOPEN_MAX;
  Floors floors;
  floors_load(d, &floors);
  for (size_t i = 0; i < n; i++) {
    const char *p = json_object_get_string(json_object_array_get_idx(paths, i));
    if (!p || !have_cred || !*p)
      answer_fallback(&r);
    else
      open_one(d, &floors, command, cred.uid, cred.gid, cwd_o ? json_object_get_string(cwd_o) : NULL, p, &r);
  }
  json_object *reply = json_object_new_object();
  json_object_object_add(reply, "answers", r.answers);
  box_ctl_send(reply_fd, reply, r.fds, r.nfds);
  json_object_put(reply);
  for (int i = 0; i < r.nfds; i++)
    close(r.fds[i]);
  close(reply_fd);
}
