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
 * Never a directory descriptor: openat() on it would walk around the mount.
 */
#include "box/box-private.h"

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

/* cwd + path with "." and repeated slashes dropped; NULL when a ".."
 * component (its meaning depends on symlinks) or a relative cwd. */
static char *absolute(const char *cwd, const char *path)
{
  if (path[0] != '/' && (!cwd || cwd[0] != '/')) return NULL;
  size_t cl = path[0] == '/' ? 0 : strlen(cwd);
  char *out = g_malloc(cl + strlen(path) + 2);
  size_t n = 0;
  /* one pass over cwd then path, component by component */
  const char *srcs[2] = { path[0] == '/' ? "" : cwd, path };
  for (int k = 0; k < 2; k++) {
    const char *q = srcs[k];
    while (*q) {
      while (*q == '/') q++;
      const char *e = q;
      while (*e && *e != '/') e++;
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
    if (box_path_within(path, *r)) return *r;
  return NULL;
}

/* May the fast path take this object?  Not what the mount's floor guards
 * (by path or by identity): that goes through the mount, which records the
 * floor's deny. */
static bool guarded(Boxd *d, const char *path, const struct stat *st)
{
  return box_vfs_floor_refuses(d->vfs, path, st->st_dev, st->st_ino);
}

static char *spell(Boxd *d, const char *path)
{
  return box_path_spell(path, d->operator_home);
}

/* The mount's mode check (vfs/perm.c vfs_perm_ok) for reading, for the worker's
 * uid and gid. */
static bool may_read(const struct stat *st, uid_t uid, gid_t gid)
{
  if (uid == 0) return true;
  unsigned bits = uid == st->st_uid   ? (st->st_mode >> 6) & 7
                  : gid == st->st_gid ? (st->st_mode >> 3) & 7
                                      : st->st_mode & 7;
  return (bits & 4) != 0;
}

/* One path's result, held until the batch is answered. */
typedef struct {
  enum { SLOT_FALLBACK, SLOT_ERR, SLOT_FD } kind;
  int err;
  char *message; /* a refusal's policy text */
  int fd;
  bool permitted;
} Slot;

/* The directory of the batch's last path, held open (O_PATH, reached
 * without a symlink) so that each file of it is found with a one-component
 * lookup instead of a walk from the root. */
typedef struct {
  char *path;
  int fd;
  int refused; /* the mount's lookup refuses the directory: 1, 0, -1 not asked */
} DirCache;

static int dir_fd(DirCache *dc, const char *dir)
{
  if (dc->path && strcmp(dc->path, dir) == 0) return dc->fd;
  if (dc->fd >= 0) close(dc->fd);
  g_free(dc->path);
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  dc->fd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
  dc->path = g_strdup(dir);
  dc->refused = -1;
  return dc->fd;
}

/* A batch's paths and what they are decided against. */
typedef struct {
  Boxd *d;
  int command;
  uid_t uid;
  gid_t gid;
  bool have_cred;
  const char *cwd;
  const char *const *paths;
  const mode_t *modes; /* a create's: each path's mode; NULL: an open */
  size_t nmodes;       /* how many paths have one */
  size_t n;
  Slot *slots;
  GString *log; /* the batch's decision log lines, in path order */
  const char *nanos;
} Run;

/* The outcome of a permitted request, recorded as the mount records it:
 * descriptor_issued, or an ::error when it was not acted on. */
static void record_outcome(Boxd *d, int command, const char *action, json_object *input, int fd)
{
  boxd_vfs_outcome(d, command, action, input, fd >= 0 ? "descriptor_issued" : NULL);
}

static void open_one(Run *run, DirCache *dc, const char *name, Slot *slot)
{
  Boxd *d = run->d;
  slot->kind = SLOT_FALLBACK;
  slot->fd = -1;
  g_autofree char *path = absolute(run->cwd, name);
  if (!path || !root_of(d, path)) return;
  /* Reached with no symlink anywhere on the way: the path decided is the
   * object opened.  Its type is looked at first, so a FIFO or device is
   * never opened. */
  char *slash = strrchr(path, '/');
  *slash = '\0';
  int dfd = dir_fd(dc, path[0] ? path : "/");
  /* A directory the mount refuses as if absent (no walk to a permitted
   * path goes through it): the mount refuses the file there as it refuses
   * a missing one, naming that directory; its parents are walked through
   * (something permitted lies below them) */
  if (dfd >= 0 && dc->refused < 0)
    dc->refused = box_vfs_lookup_refuses(d->vfs, run->command, dc->path);
  *slash = '/';
  if (dc->refused > 0) return;
  const char *base = slash + 1;
  struct stat st;
  if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
      guarded(d, path, &st)) {
    /* absent, a symlink on the way, not a regular file, or guarded: the
     * mount decides it (a denied absent path is refused there as if it
     * existed) */
    return;
  }
  g_autofree char *spelled = spell(d, path);
  json_object *input = json_object_new_object();
  json_object_object_add(input, "path", json_object_new_string(spelled));
  json_object_object_add(input, "operation", json_object_new_string("read_content"));
  BoxDecision *dec = boxd_vfs_decide(d, run->command, "fs:read", input);
  if (!dec) {
    /* no decision could be made: let the mount refuse and record it */
    json_object_put(input);
    return;
  }
  /* queued as the mount queues its file decisions (box/decide.c
   * boxd_vfs_record): written within a few ms, and before any line not
   * queued and the command's end; a line rendered and written per file was
   * the most of boxd's time for a script reading many small files */
  box_decision_log_append_queued(d->log, "fs:read", input, dec, NULL);
  slot->permitted = dec->verdict == BOX_VERDICT_PERMIT;
  if (!slot->permitted) {
    slot->kind = SLOT_ERR;
    slot->err = EACCES;
    slot->message = g_strdup(dec->message);
    box_decision_free(dec);
    json_object_put(input);
    return;
  }
  box_decision_free(dec);
  int fd = -1;
  int err = 0;
  if (!may_read(&st, run->uid, run->gid)) {
    err = EACCES;
  } else {
    /* O_NONBLOCK: should the name now be a FIFO, the open returns at once
     * and the identity check below refuses it.  It stays set on the
     * descriptor handed out: on a regular file it changes nothing, and
     * clearing it was one more system call per file. */
    struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                            .resolve =
                              RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
    fd = (int)syscall(SYS_openat2, dfd, base, &how, sizeof how);
    struct stat now;
    if (fd < 0)
      err = errno;
    else if (fstat(fd, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino ||
             !S_ISREG(now.st_mode)) {
      close(fd); /* identity changed under us: never hand out another object */
      fd = -1;
      err = ESTALE;
    }
  }
  /* permitted but not acted on: no outcome, as the mount does */
  slot->kind = fd >= 0 ? SLOT_FD : SLOT_ERR;
  slot->fd = fd;
  slot->err = err;
  record_outcome(d, run->command, "fs:read", input, fd);
  json_object_put(input);
}

static void run_paths(Run *run)
{
  DirCache dc = { NULL, -1, -1 };
  for (size_t i = 0; i < run->n; i++) {
    const char *p = run->paths[i];
    if (p && run->have_cred && *p)
      open_one(run, &dc, p, &run->slots[i]);
    else
      run->slots[i] = (Slot){ .kind = SLOT_FALLBACK, .fd = -1 };
  }
  if (dc.fd >= 0) close(dc.fd);
  g_free(dc.path);
}

static void log_buf_free(gpointer p)
{
  g_string_free(p, TRUE);
}

/* the batch's log lines, a buffer kept per thread: no allocation per batch */
static GPrivate log_buf_key = G_PRIVATE_INIT(log_buf_free);

static GString *thread_buf(GPrivate *key)
{
  GString *b = g_private_get(key);
  if (!b) {
    b = g_string_sized_new(64 * 1024);
    g_private_set(key, b);
  }
  return b;
}

static void run_creates(Run *run);

/* Decides and opens paths (relative ones from cwd) into slots, for the
 * caller cred (NULL: unknown, every path the mount's); with modes, creates
 * them (run_creates).  The batch's history records are written in one
 * write(2) after all its decisions and before the caller answers, and so
 * are a create's log lines; a read's are queued, as the mount's are.
 * false: the history could not keep these decisions, and none may be
 * acted on. */
static bool decide_batch(Boxd *d, int command, const struct ucred *cred, const char *cwd,
                         const char *const *paths, const mode_t *modes, size_t nmodes, size_t n,
                         Slot *slots)
{
  GString *log_buf = thread_buf(&log_buf_key);
  char nanos[32];
  box_decision_log_now(nanos);
  memset(slots, 0, sizeof *slots * n);
  Run run = { .d = d,
              .command = command,
              .uid = cred ? cred->uid : 0,
              .gid = cred ? cred->gid : 0,
              .have_cred = cred != NULL,
              .cwd = cwd,
              .paths = paths,
              .modes = modes,
              .nmodes = nmodes,
              .n = n,
              .slots = slots,
              .log = log_buf,
              .nanos = nanos };
  box_policy_history_batch_begin(d->policy);
  if (modes)
    run_creates(&run);
  else
    run_paths(&run);
  bool recorded = box_policy_history_batch_end(d->policy);
  box_decision_log_write(d->log, log_buf);
  if (!recorded)
    for (size_t i = 0; i < n; i++)
      if (slots[i].kind == SLOT_FD) {
        /* the history could not keep these decisions: none is acted on */
        close(slots[i].fd);
        slots[i] = (Slot){ .kind = SLOT_ERR, .err = EIO, .fd = -1, .message = slots[i].message };
      }
  return recorded;
}

/* Decides and opens paths (relative ones from cwd) and answers on
 * reply_fd in JSON; with modes, creates them (run_creates). */
static void answer_batch(Boxd *d, int command, const char *cwd, json_object *paths,
                         json_object *modes, int reply_fd)
{
  struct ucred cred = { 0 };
  socklen_t cl = sizeof cred;
  /* the reply socket was made by the worker: its credentials are the caller's */
  bool have_cred = getsockopt(reply_fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0;
  size_t n =
    paths && json_object_is_type(paths, json_type_array) ? json_object_array_length(paths) : 0;
  size_t most = modes ? BOX_FASTCREATE_MAX : BOX_FASTOPEN_MAX;
  if (n > most) n = most;
  const char *names[BOX_FASTCREATE_MAX] = { NULL };
  mode_t mode_of[BOX_FASTCREATE_MAX] = { 0 };
  size_t nmodes = 0;
  for (size_t i = 0; i < n; i++) {
    names[i] = json_object_get_string(json_object_array_get_idx(paths, i));
    json_object *m = modes ? json_object_array_get_idx(modes, i) : NULL;
    if (m && nmodes == i) mode_of[nmodes++] = (mode_t)json_object_get_int(m);
  }
  Slot slots[BOX_FASTCREATE_MAX];
  bool recorded = decide_batch(d, command, have_cred ? &cred : NULL, cwd, names,
                               modes ? mode_of : NULL, nmodes, n, slots);
  json_object *answers = json_object_new_array();
  int fds[BOX_FASTCREATE_MAX];
  int nfds = 0;
  for (size_t i = 0; i < n; i++) {
    Slot *s = &slots[i];
    json_object *a = json_object_new_object();
    if (!recorded) {
      json_object_object_add(a, "err", json_object_new_int(EIO));
    } else if (s->kind == SLOT_FD) {
      json_object_object_add(a, "fd", json_object_new_boolean(true));
      fds[nfds++] = s->fd;
    } else if (s->kind == SLOT_ERR) {
      json_object_object_add(a, "err", json_object_new_int(s->err));
      if (s->message) json_object_object_add(a, "message", json_object_new_string(s->message));
    } else {
      json_object_object_add(a, "fallback", json_object_new_boolean(true));
    }
    g_free(s->message);
    json_object_array_add(answers, a);
  }
  json_object *reply = json_object_new_object();
  json_object_object_add(reply, "answers", answers);
  box_ctl_send(reply_fd, reply, fds, nfds);
  json_object_put(reply);
  for (int i = 0; i < nfds; i++) close(fds[i]);
}

/* ---- creating files ------------------------------------------------------
 * An extraction's new files, decided as the mount decides a CREATE of a
 * name its lookup found missing (fs:write/write_content, the floor asked
 * of no object, the outcome descriptor_issued) and made with O_EXCL in
 * the directory reached without a symlink.  The first name this cannot
 * judge exactly as the mount would ends the batch (it and the rest are
 * "fallback"), so that the log holds the decisions in the order the
 * archive asks them: one that exists, has a missing or refused directory,
 * is guarded, or that policy would not permit (the mount's lookup and
 * CREATE decide and word a refusal; nothing is logged here). */

/* The mount's check of the directory for a create (vfs_check_perm,
 * W_OK | X_OK), where it needs no supplementary group: otherwise the
 * mount's. */
static bool may_create_in(const struct stat *st, uid_t uid, gid_t gid)
{
  if (uid == 0) return true;
  if (uid == st->st_uid) return ((st->st_mode >> 6) & 3) == 3;
  return gid == st->st_gid && ((st->st_mode >> 3) & 3) == 3;
}

static bool create_one(Run *run, DirCache *dc, const char *name, mode_t mode, Slot *slot)
{
  Boxd *d = run->d;
  g_autofree char *path = absolute(run->cwd, name);
  if (!path || !root_of(d, path)) return false;
  char *slash = strrchr(path, '/');
  *slash = '\0';
  int dfd = dir_fd(dc, path[0] ? path : "/");
  if (dfd >= 0 && dc->refused < 0)
    dc->refused = box_vfs_lookup_refuses(d->vfs, run->command, dc->path);
  *slash = '/';
  const char *base = slash + 1;
  struct stat dst, st;
  if (dfd < 0 || dc->refused > 0 || fstat(dfd, &dst) != 0 ||
      !may_create_in(&dst, run->uid, run->gid) ||
      fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT ||
      box_vfs_floor_refuses_create(d->vfs, path))
    return false;
  g_autofree char *spelled = spell(d, path);
  json_object *input = json_object_new_object();
  json_object_object_add(input, "path", json_object_new_string(spelled));
  json_object_object_add(input, "operation", json_object_new_string("write_content"));
  /* asked quietly first (no log, no history; NULL where policy reads
   * history): a refusal is the mount's to decide and record */
  BoxDecision *dec = boxd_vfs_decide_quiet(d, run->command, "fs:write", input);
  bool permitted = dec && dec->verdict == BOX_VERDICT_PERMIT;
  if (dec) box_decision_free(dec);
  dec = permitted ? boxd_vfs_decide(d, run->command, "fs:write", input) : NULL;
  if (!dec || dec->verdict != BOX_VERDICT_PERMIT) {
    if (dec) box_decision_free(dec);
    json_object_put(input);
    return false;
  }
  box_decision_log_render_into(d->log, run->log, "fs:write", input, NULL, dec, run->nanos);
  box_decision_free(dec);
  struct open_how how = { .flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          .mode = mode & 07777,
                          .resolve =
                            RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  int fd = (int)syscall(SYS_openat2, dfd, base, &how, sizeof how);
  slot->permitted = true;
  slot->kind = fd >= 0 ? SLOT_FD : SLOT_ERR;
  slot->fd = fd;
  slot->err = fd >= 0 ? 0 : errno;
  if (fd >= 0) {
    /* made as the mount makes it: owned by the caller (vfs_chown_new),
     * its mode as asked (the caller's umask is applied; boxd's is not) */
    struct stat fst;
    if (geteuid() == 0 && (run->uid != 0 || run->gid != 0))
      (void)!fchown(fd, run->uid, (dst.st_mode & S_ISGID) ? (gid_t)-1 : run->gid);
    if (fstat(fd, &fst) == 0 && (fst.st_mode & 07777) != (mode & 07777))
      (void)!fchmod(fd, mode & 07777);
    box_vfs_notify_new_name(d->vfs, dst.st_dev, dst.st_ino, base);
  }
  record_outcome(d, run->command, "fs:write", input, fd);
  json_object_put(input);
  return true;
}

static void run_creates(Run *run)
{
  DirCache dc = { NULL, -1, -1 };
  bool going = run->have_cred;
  for (size_t i = 0; i < run->n; i++) {
    const char *p = run->paths[i];
    run->slots[i] = (Slot){ .kind = SLOT_FALLBACK, .fd = -1 };
    going =
      going && p && *p && i < run->nmodes && create_one(run, &dc, p, run->modes[i], &run->slots[i]);
  }
  if (dc.fd >= 0) close(dc.fd);
  g_free(dc.path);
}

void box_fastcreate_handle(Boxd *d, int command, json_object *msg, int reply_fd)
{
  json_object *cwd_o = NULL, *paths = NULL, *modes = NULL;
  json_object_object_get_ex(msg, "cwd", &cwd_o);
  json_object_object_get_ex(msg, "paths", &paths);
  json_object_object_get_ex(msg, "modes", &modes);
  if (!modes || !json_object_is_type(modes, json_type_array)) paths = NULL;
  answer_batch(d, command, cwd_o ? json_object_get_string(cwd_o) : NULL, paths, modes, reply_fd);
  close(reply_fd);
}

void box_fastopen_handle(Boxd *d, int command, pid_t worker, json_object *msg, int reply_fd)
{
  (void)worker;
  json_object *cwd_o = NULL, *paths = NULL;
  json_object_object_get_ex(msg, "cwd", &cwd_o);
  json_object_object_get_ex(msg, "paths", &paths);
  answer_batch(d, command, cwd_o ? json_object_get_string(cwd_o) : NULL, paths, NULL, reply_fd);
  close(reply_fd);
}

/* ---- the open channel (ctl.h, BoxOpenWire) -------------------------------
 * The same batch as an "open" request, asked on a channel the worker
 * process handed over once: per request one message in and one out, and
 * none of the socket making, passing and closing a reply socket costs. */

/* the channel's request and reply, a buffer of each kept per thread */
static GPrivate wire_in_key = G_PRIVATE_INIT(g_free);
static GPrivate wire_out_key = G_PRIVATE_INIT(g_free);

static char *wire_buf(GPrivate *key)
{
  char *b = g_private_get(key);
  if (!b) {
    b = g_malloc(BOX_OPEN_WIRE_MAX + 1);
    g_private_set(key, b);
  }
  return b;
}

void box_fastopen_channel_take(int chan)
{
  int one = 1;
  /* each request then carries its sender's credentials, taken when sent */
  (void)setsockopt(chan, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
}

/* Reads one request: its length, 0 when none is there, -1 when the
 * channel ended or broke; the sender's credentials in *cred (*have_cred
 * false when none came). */
static ssize_t wire_recv(int chan, char *buf, struct ucred *cred, bool *have_cred)
{
  union {
    char b[CMSG_SPACE(sizeof(struct ucred))];
    struct cmsghdr align;
  } u;
  struct iovec iov = { buf, BOX_OPEN_WIRE_MAX };
  struct msghdr m = {
    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b
  };
  ssize_t len;
  do len = recvmsg(chan, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  while (len < 0 && errno == EINTR);
  /* a descriptor sent along (no room for it: MSG_CTRUNC, the kernel
   * closed it) or an overlong request breaks the channel */
  if (len < 0 && errno == EAGAIN) return 0;
  if (len <= 0 || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) return -1;
  *have_cred = false;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
        c->cmsg_len == CMSG_LEN(sizeof *cred)) {
      memcpy(cred, CMSG_DATA(c), sizeof *cred);
      /* pid 0: sent before the channel passed credentials, none known */
      *have_cred = cred->pid != 0;
    }
  buf[len] = '\0';
  return len;
}

static bool list_answer(Boxd *d, int command, const struct ucred *cred, const char *cwd,
                        const char *name, int open_first, int reply_fd);

bool box_fastopen_channel_serve(Boxd *d, int command, int chan)
{
  char *in = wire_buf(&wire_in_key);
  struct ucred cred = { 0 };
  bool have_cred = false;
  ssize_t len = wire_recv(chan, in, &cred, &have_cred);
  if (len <= 0) return len == 0;
  if (in[0] == BOX_LIST_WIRE_TAG) { /* the tag, the cwd, the path (wire_recv ends them) */
    const char *cwd = in + 1, *name = cwd + strlen(cwd) + 1;
    return list_answer(d, command, have_cred ? &cred : NULL, *cwd ? cwd : NULL,
                       name < in + len ? name : NULL, 0, chan);
  }
  /* the cwd, then each path, NUL-terminated */
  const char *cwd = in;
  const char *paths[BOX_OPEN_WIRE_PATHS];
  size_t n = 0;
  for (const char *q = in + strlen(in) + 1; q < in + len && n < BOX_OPEN_WIRE_PATHS;
       q += strlen(q) + 1)
    paths[n++] = q;
  Slot slots[BOX_OPEN_WIRE_PATHS];
  bool recorded =
    decide_batch(d, command, have_cred ? &cred : NULL, *cwd ? cwd : NULL, paths, NULL, 0, n, slots);
  char *out = wire_buf(&wire_out_key);
  size_t at = sizeof(BoxOpenWire) * n;
  int fds[BOX_OPEN_WIRE_PATHS];
  int nfds = 0;
  for (size_t i = 0; i < n; i++) {
    Slot *s = &slots[i];
    BoxOpenWire w = { BOX_OPEN_WIRE_FALLBACK, 0, 0 };
    if (!recorded) {
      w = (BoxOpenWire){ BOX_OPEN_WIRE_ERR, EIO, 0 };
    } else if (s->kind == SLOT_FD) {
      w.kind = BOX_OPEN_WIRE_FD;
      fds[nfds++] = s->fd;
    } else if (s->kind == SLOT_ERR) {
      w = (BoxOpenWire){ BOX_OPEN_WIRE_ERR, s->err, 0 };
      size_t ml = s->message ? strlen(s->message) : 0;
      /* the requests are bounded, the policy's texts are not: one that
       * would not fit is cut (the n headers always fit) */
      if (ml > BOX_OPEN_WIRE_MAX - at) ml = BOX_OPEN_WIRE_MAX - at;
      memcpy(out + at, s->message, ml);
      at += ml;
      w.message_len = (uint32_t)ml;
    }
    memcpy(out + sizeof(BoxOpenWire) * i, &w, sizeof w);
    g_free(s->message);
  }
  bool sent = box_ctl_send_text(chan, out, at, fds, nfds);
  for (int i = 0; i < nfds; i++) close(fds[i]);
  return sent;
}

/* ---- listing a directory ------------------------------------------------
 * The same decision the mount makes at OPENDIR (fs:read/enumerate, its
 * outcome descriptor_issued), made here for a directory reached without a
 * symlink inside a bound root; its entries are then sent as the raw
 * getdents64 records the worker would have read through the mount (a
 * mount's passthrough directory lists its backing directory as it is).
 * The descriptor stays here. */

/* a chunk of records: the tag byte, then getdents64's records */
#define LIST_CHUNK 32768
/* a getdents64 record's largest size: its header and a 255-byte name,
 * rounded up */
#define LIST_RECORD_MAX 512

static bool send_tagged(int fd, char tag, const void *data, size_t len)
{
  struct iovec iov[2] = { { &tag, 1 }, { (void *)data, len } };
  struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
  ssize_t n;
  do n = sendmsg(fd, &m, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == (ssize_t)(len + 1);
}

static bool list_reply(int reply_fd, const char *key, int value, const char *message)
{
  json_object *r = json_object_new_object();
  json_object_object_add(
    r, key, key[0] == 'f' ? json_object_new_boolean(true) : json_object_new_int(value));
  if (message) json_object_object_add(r, "message", json_object_new_string(message));
  bool sent = box_ctl_send(reply_fd, r, NULL, 0);
  json_object_put(r);
  return sent;
}

/* The directory's leading regular files (not "." or ".."), up to want and
 * up to the first entry that is not one: the batch a walk would ask for
 * first.  The worker picks the same names from the same records. */
typedef struct {
  int want;
  bool ended;
  json_object *paths;
} LeadingFiles;

struct list_dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

static void leading_files(LeadingFiles *lead, const char *dir, const char *buf, size_t n)
{
  for (size_t off = 0; !lead->ended && off + sizeof(struct list_dirent64) <= n;) {
    const struct list_dirent64 *e = (const struct list_dirent64 *)(buf + off);
    if (e->d_reclen == 0) break;
    off += e->d_reclen;
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (e->d_type != DT_REG || (int)json_object_array_length(lead->paths) >= lead->want) {
      lead->ended = true;
      break;
    }
    char *p = g_strconcat(dir, strcmp(dir, "/") ? "/" : "", e->d_name, NULL);
    json_object_array_add(lead->paths, json_object_new_string(p));
    g_free(p);
  }
}

/* A listing of name (against cwd) answered on reply_fd, which stays open,
 * for a caller of credentials cred (NULL: unknown, the mount's): false when
 * an answer could not be sent. */
static bool list_answer(Boxd *d, int command, const struct ucred *cred, const char *cwd,
                        const char *name, int open_first, int reply_fd)
{
  g_autofree char *path = name && *name ? absolute(cwd, name) : NULL;
  int pfd = -1;
  struct stat st;
  if (!cred || !path || !root_of(d, path)) return list_reply(reply_fd, "fallback", 0, NULL);
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  pfd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (pfd < 0 || fstat(pfd, &st) != 0 || !S_ISDIR(st.st_mode) || guarded(d, path, &st) ||
      box_vfs_lookup_refuses(d->vfs, command, path)) {
    /* absent, not a directory, a symlink on the way, guarded, or refused
     * by the mount's walk as an absent name is: the mount's, which
     * decides it there */
    if (pfd >= 0) close(pfd);
    return list_reply(reply_fd, "fallback", 0, NULL);
  }
  g_autofree char *spelled = spell(d, path);
  json_object *input = json_object_new_object();
  json_object_object_add(input, "path", json_object_new_string(spelled));
  json_object_object_add(input, "operation", json_object_new_string("enumerate"));
  GString *log_buf = thread_buf(&log_buf_key);
  char nanos[32];
  box_decision_log_now(nanos);
  box_policy_history_batch_begin(d->policy);
  BoxDecision *dec = boxd_vfs_decide(d, command, "fs:read", input);
  box_decision_log_render_into(d->log, log_buf, "fs:read", input, NULL, dec, nanos);
  bool permitted = dec->verdict == BOX_VERDICT_PERMIT;
  int dfd = -1, err = 0;
  if (permitted) {
    if (!may_read(&st, cred->uid, cred->gid)) {
      err = EACCES;
    } else {
      /* "." of the directory decided: the same inode, no lookup that a
       * rename could redirect */
      dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0) err = errno;
    }
    boxd_vfs_outcome(d, command, "fs:read", input, dfd >= 0 ? "descriptor_issued" : NULL);
  }
  close(pfd);
  bool recorded = box_policy_history_batch_end(d->policy);
  box_decision_log_write(d->log, log_buf);
  bool ok = true;
  if (!recorded) {
    ok = list_reply(reply_fd, "err", EIO, NULL);
  } else if (!permitted) {
    ok = list_reply(reply_fd, "err", EACCES, dec->message);
  } else if (dfd < 0) {
    ok = list_reply(reply_fd, "err", err, NULL);
  } else {
    /* The records in as few packets as hold them, each but the last
     * tagged 'D' and the last 'E': a directory whose records fit one
     * chunk is one packet, and the worker waits for one wake-up, not for
     * a header, the records and their end apart (each a wake-up, and on a
     * busy machine a wait for a CPU). */
    char *buf = g_malloc(LIST_CHUNK);
    size_t have = 0;
    bool whole = true;
    LeadingFiles lead = { .want = open_first,
                          .paths = open_first ? json_object_new_array() : NULL };
    for (;;) {
      long n = syscall(SYS_getdents64, dfd, buf + have, LIST_CHUNK - have);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        char e[16];
        int l = snprintf(e, sizeof e, "%d", errno);
        ok = send_tagged(reply_fd, 'X', e, (size_t)l); /* the listing failed part way */
        whole = false;
        break;
      }
      if (n == 0) {
        ok = send_tagged(reply_fd, 'E', buf, have);
        break;
      }
      if (lead.paths) leading_files(&lead, path, buf + have, (size_t)n);
      have += (size_t)n;
      /* room for the longest record (a 255-byte name) or a chunk sent */
      if (LIST_CHUNK - have < LIST_RECORD_MAX) {
        if (!(ok = send_tagged(reply_fd, 'D', buf, have))) break;
        have = 0;
      }
    }
    g_free(buf);
    if (lead.paths) {
      /* the first files as the worker would ask for them next, decided
       * after the listing: one request less per directory */
      if (ok && whole) answer_batch(d, command, NULL, lead.paths, NULL, reply_fd);
      json_object_put(lead.paths);
    }
  }
  if (dfd >= 0) close(dfd);
  box_decision_free(dec);
  json_object_put(input);
  return ok;
}

void box_fastlist_handle(Boxd *d, int command, json_object *msg, int reply_fd)
{
  json_object *cwd_o = NULL, *path_o = NULL, *open_o = NULL;
  json_object_object_get_ex(msg, "cwd", &cwd_o);
  json_object_object_get_ex(msg, "path", &path_o);
  int open_first =
    json_object_object_get_ex(msg, "open", &open_o) ? json_object_get_int(open_o) : 0;
  if (open_first < 0 || open_first > BOX_FASTOPEN_MAX) open_first = 0;
  struct ucred cred = { 0 };
  socklen_t cl = sizeof cred;
  /* the reply socket was made by the worker: its credentials are the caller's */
  bool have_cred = getsockopt(reply_fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0;
  list_answer(d, command, have_cred ? &cred : NULL, cwd_o ? json_object_get_string(cwd_o) : NULL,
              path_o ? json_object_get_string(path_o) : NULL, open_first, reply_fd);
  close(reply_fd);
}
