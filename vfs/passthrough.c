/* passthrough.c — the mount itself, and the kernel's FUSE passthrough
 * (Linux >= 6.9, CONFIG_FUSE_PASSTHROUGH) for opened passthrough files.
 *
 * Why: a read or write of a file the decision at OPEN let the command have
 * is covered by that decision (DESIGN.md "The mount"); with passthrough the
 * kernel serves it from the real file's page cache, as natively, instead of
 * a READ or WRITE round trip through us and a second page cache.
 *
 * libfuse 3.14 predates the feature, so we mount /dev/fuse ourselves and
 * hand libfuse the descriptor through its custom I/O hooks, which let us:
 *   - see the kernel's INIT (does it offer FUSE_PASSTHROUGH?) and add the
 *     flag and max_stack_depth to libfuse's INIT reply;
 *   - add FOPEN_PASSTHROUGH and the backing id to the reply of an OPEN or
 *     CREATE whose handler registered the opened descriptor as a backing
 *     file (FUSE_DEV_IOC_BACKING_OPEN) on this thread just before replying.
 * A backing id lives as long as its file handle (closed at RELEASE): the
 * opener looks it up after our reply is written.  Without the kernel's
 * offer, or when a registration fails, a file is served by READ/WRITE as
 * before.  BOXFS_NO_PASSTHROUGH=1 turns it off (for measurements). */
#include "vfs/vfs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/uio.h>
#include <unistd.h>

/* From the kernel's uapi <linux/fuse.h> (7.40), newer than this system's. */
#define PT_FUSE_INIT 26
#define PT_INIT_EXT (1u << 30)
#define PT_FLAGS2_PASSTHROUGH (1u << 5) /* FUSE_PASSTHROUGH = 1ull << 37 */
#define PT_FOPEN_PASSTHROUGH (1u << 7)
struct pt_backing_map {
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};
#define PT_IOC_MAGIC 229
#define PT_IOC_BACKING_OPEN _IOW(PT_IOC_MAGIC, 1, struct pt_backing_map)
#define PT_IOC_BACKING_CLOSE _IOW(PT_IOC_MAGIC, 2, uint32_t)

/* offsets in the messages */
#define IN_HDR 40  /* struct fuse_in_header */
#define OUT_HDR 16 /* struct fuse_out_header */
#define INIT_IN_FLAGS 12
#define INIT_IN_FLAGS2 16
#define INIT_OUT_FLAGS 12
#define INIT_OUT_FLAGS2 32
#define INIT_OUT_STACK 36
#define OPEN_OUT_SIZE 16 /* fh, open_flags, backing_id */

static __thread int tls_backing = -1; /* for the next OPEN/CREATE reply */

static ssize_t pt_read(int fd, void *buf, size_t len, void *userdata)
{
  BoxVfs *v = userdata;
  ssize_t n = read(fd, buf, len);
  if (n >= IN_HDR + INIT_IN_FLAGS2 + 4) {
    const unsigned char *b = buf;
    uint32_t opcode;
    memcpy(&opcode, b + 4, 4);
    if (opcode == PT_FUSE_INIT) {
      uint32_t flags, flags2;
      memcpy(&flags, b + IN_HDR + INIT_IN_FLAGS, 4);
      memcpy(&flags2, b + IN_HDR + INIT_IN_FLAGS2, 4);
      memcpy(&v->pt_init_unique, b + 8, 8);
      v->pt_offered = (flags & PT_INIT_EXT) && (flags2 & PT_FLAGS2_PASSTHROUGH);
    }
  }
  return n;
}

static ssize_t pt_writev(int fd, struct iovec *iov, int count, void *userdata)
{
  BoxVfs *v = userdata;
  if (count >= 2 && iov[0].iov_len >= OUT_HDR) {
    const unsigned char *h = iov[0].iov_base;
    int32_t error;
    uint64_t unique;
    memcpy(&error, h + 4, 4);
    memcpy(&unique, h + 8, 8);
    struct iovec *last = &iov[count - 1];
    if (v->pt_offered && !v->pt_enabled && unique == v->pt_init_unique && error == 0 &&
        iov[1].iov_len >= INIT_OUT_STACK + 4) {
      unsigned char *o = iov[1].iov_base;
      uint32_t flags, flags2, depth = 1;
      memcpy(&flags, o + INIT_OUT_FLAGS, 4);
      memcpy(&flags2, o + INIT_OUT_FLAGS2, 4);
      flags |= PT_INIT_EXT;
      flags2 |= PT_FLAGS2_PASSTHROUGH;
      memcpy(o + INIT_OUT_FLAGS, &flags, 4);
      memcpy(o + INIT_OUT_FLAGS2, &flags2, 4);
      memcpy(o + INIT_OUT_STACK, &depth, 4);
      v->pt_enabled = true;
    } else if (tls_backing >= 0 && error == 0 && last->iov_len >= OPEN_OUT_SIZE) {
      unsigned char *o = (unsigned char *)last->iov_base + last->iov_len - OPEN_OUT_SIZE;
      uint32_t open_flags, id = (uint32_t)tls_backing;
      memcpy(&open_flags, o + 8, 4);
      open_flags |= PT_FOPEN_PASSTHROUGH;
      memcpy(o + 8, &open_flags, 4);
      memcpy(o + 12, &id, 4);
    }
  }
  tls_backing = -1;
  return writev(fd, iov, count);
}

static ssize_t pt_splice_send(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
                              unsigned int flags, void *userdata)
{
  (void)userdata;
  return splice(fdin, offin, fdout, offout, len, flags);
}

static ssize_t pt_splice_receive(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
                                 unsigned int flags, void *userdata)
{
  (void)userdata;
  return splice(fdin, offin, fdout, offout, len, flags);
}

/* allow_other lets every uid reach the daemon, which makes every check (no
 * default_permissions).  fusermount's rule: root may, others only where
 * the administrator allows it. */
bool box_vfs_allow_other(void)
{
  if (geteuid() == 0) return true;
  FILE *f = fopen("/etc/fuse.conf", "re");
  if (!f) return false;
  char line[256];
  bool yes = false;
  while (!yes && fgets(line, sizeof line, f))
    yes = strncmp(line, "user_allow_other", 16) == 0 && (line[16] == '\n' || line[16] == '\0');
  fclose(f);
  return yes;
}

/* The connection at v->mountpoint, mounted here; its /dev/fuse or -1. */
static int mount_here(BoxVfs *v, GError **error)
{
  int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot open /dev/fuse: %s", g_strerror(errno));
    return -1;
  }
  /* what libfuse's mount would pass, for a root mounter */
  char opts[160];
  snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=%u,group_id=%u%s", fd,
           (unsigned)getuid(), (unsigned)getgid(), box_vfs_allow_other() ? ",allow_other" : "");
  if (mount("boxfs", v->mountpoint, "fuse.boxfs", MS_NOSUID | MS_NODEV, opts) != 0) {
    int e = errno;
    close(fd);
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot mount FUSE at %s: %s", v->mountpoint,
                g_strerror(e));
    return -1;
  }
  return fd;
}

/* The connection fusermount3 mounted, at v->mountpoint as well; its own
 * place is then covered, so that no walk of a bound root (the host's /tmp)
 * reaches the mount through the daemon itself.  The mount is locked in
 * this namespace: it cannot be taken away, only hidden. */
static int adopt_premounted(BoxVfs *v, GError **error)
{
  g_autofree char *parent = g_path_get_dirname(v->premounted_at);
  if (mount(v->premounted_at, v->mountpoint, NULL, MS_BIND, NULL) != 0 ||
      mount("boxfs-hidden", parent, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
            "size=4k,mode=0700") != 0) {
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot show the mount made at %s at %s: %s",
                v->premounted_at, v->mountpoint, g_strerror(errno));
    return -1;
  }
  int fd = v->premounted_fd;
  v->premounted_fd = -1;
  return fd;
}

void vfs_ids_in(const BoxVfs *v, uid_t *uid, gid_t *gid)
{
  if (!v->host_ids) return;
  /* nothing but the user is mapped here: any other id is nobody */
  *uid = *uid == v->host_uid ? 0 : 65534;
  *gid = *gid == v->host_gid ? 0 : 65534;
}

void vfs_attr_out(const BoxVfs *v, struct stat *st)
{
  if (!v->host_ids) return;
  if (st->st_uid == 0) st->st_uid = v->host_uid;
  if (st->st_gid == 0) st->st_gid = v->host_gid;
}

bool vfs_mount(BoxVfs *v, GError **error)
{
  int fd = v->mounted_fd >= 0 ? v->mounted_fd
           : v->premounted_at ? adopt_premounted(v, error)
                              : mount_here(v, error);
  v->mounted_fd = -1;
  if (fd < 0) return false;
  static const struct fuse_custom_io io = {
    .writev = pt_writev,
    .read = pt_read,
    .splice_receive = pt_splice_receive,
    .splice_send = pt_splice_send,
  };
  const char *off = g_getenv("BOXFS_NO_PASSTHROUGH");
  v->pt_wanted = !(off && strcmp(off, "1") == 0) && !v->in_user_namespace && geteuid() == 0;
  v->fuse_fd = fd;
  /* libfuse passes the session's userdata (v) to the hooks */
  if (fuse_session_custom_io(v->se, &io, fd) != 0) {
    umount2(v->mountpoint, MNT_DETACH);
    close(fd);
    v->fuse_fd = -1;
    g_set_error(error, BOX_VFS_ERROR, 0, "cannot attach the FUSE session to %s", v->mountpoint);
    return false;
  }
  v->mounted = true;
  return true;
}

/* A lookup no cache answers: the loop, told to exit, ends at the next
 * request it reads (unanswered: this thread waits until the connection
 * closes, at the latest with the process). */
static gpointer wake_loop(gpointer data)
{
  int root = GPOINTER_TO_INT(data);
  g_autofree char *name = g_strdup_printf(".box-stop-%d-%u", (int)getpid(), g_random_int());
  struct stat st;
  (void)fstatat(root, name, &st, AT_SYMLINK_NOFOLLOW);
  close(root);
  return NULL;
}

void box_vfs_wake_unmounted(int root)
{
  if (root >= 0) g_thread_unref(g_thread_new("vfs-wake", wake_loop, GINT_TO_POINTER(root)));
}

void vfs_unmount(BoxVfs *v)
{
  if (!v->mounted) return;
  v->mounted = false;
  /* A premounted connection outlives this unmount too (the host's
   * namespace, and a locked copy in ours, keep it). */
  int root = open(v->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
  /* as libfuse does for root: detach */
  umount2(v->mountpoint, MNT_DETACH);
  box_vfs_wake_unmounted(root);
}

int vfs_backing_open(BoxVfs *v, Node *n, int fd)
{
  if (!v->pt_enabled || !v->pt_wanted || fd < 0) return -1;
  g_mutex_lock(&v->lock);
  int id = n->backing;
  if (id >= 0) {
    /* an inode with passed-through handles takes no cached one */
    n->backing_refs++;
  } else if (__atomic_load_n(&v->pt_failed, __ATOMIC_SEQ_CST)) {
    id = -1;
  } else {
    struct pt_backing_map map = { .fd = fd, .flags = 0, .padding = 0 };
    id = ioctl(v->fuse_fd, PT_IOC_BACKING_OPEN, &map);
    if (id >= 0) {
      n->backing = id;
      n->backing_refs = 1;
      __atomic_add_fetch(&v->pt_registered, 1, __ATOMIC_RELAXED);
    } else if (!__atomic_exchange_n(&v->pt_failed, true, __ATOMIC_SEQ_CST)) {
      /* One failure turns it off for good: a file the kernel serves cached
       * and another it serves passed through must not meet on one inode. */
      g_printerr("box: warning: FUSE passthrough is off: %s\n", g_strerror(errno));
    }
  }
  g_mutex_unlock(&v->lock);
  return id < 0 ? -1 : id;
}

void vfs_backing_close(BoxVfs *v, Node *n, int id)
{
  if (id < 0 || !n) return;
  g_mutex_lock(&v->lock);
  if (n->backing == id && n->backing_refs > 0 && --n->backing_refs == 0) {
    uint32_t x = (uint32_t)id;
    (void)ioctl(v->fuse_fd, PT_IOC_BACKING_CLOSE, &x);
    n->backing = -1;
  }
  g_mutex_unlock(&v->lock);
}

void vfs_backing_for_reply(int id)
{
  tls_backing = id;
}

bool box_vfs_debug_passthrough(BoxVfs *v, guint64 *registered)
{
  if (registered) *registered = __atomic_load_n(&v->pt_registered, __ATOMIC_RELAXED);
  return v->pt_enabled && v->pt_wanted && !v->pt_failed;
}
