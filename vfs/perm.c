/* perm.c — mode-bit checks.  The mount runs without default_permissions
 * (with it a stat costs eleven GETATTRs), so the daemon checks what the
 * kernel would: the caller's uid, primary and supplementary groups. */
#include "vfs/vfs-private.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool vfs_perm_ok(const struct stat *st, const Caller *c, int mask)
{
  if (c->uid == 0) {
    if ((mask & X_OK) && !S_ISDIR(st->st_mode) && !(st->st_mode & 0111)) return false;
    return true;
  }
  unsigned bits, m = (unsigned)mask & 7;
  if (c->uid == st->st_uid) {
    bits = (st->st_mode >> 6) & 7;
  } else {
    unsigned group = (st->st_mode >> 3) & 7, other = st->st_mode & 7;
    /* the groups are read from /proc only where they decide the answer */
    if ((group & m) == (other & m))
      bits = other;
    else
      bits = vfs_caller_in_group(c, st->st_gid) ? group : other;
  }
  return (m & bits) == m;
}

int vfs_check_perm(BoxVfs *v, Node *n, const Caller *c, int mask)
{
  if (c->uid == 0 && !(mask & X_OK)) return 0;
  /* root searches every directory: no need to read its mode */
  if (c->uid == 0 && is_pass(n) && S_ISDIR(n->ftype)) return 0;
  struct stat st;
  int e = vfs_node_stat(v, n, &st);
  if (e) return e;
  return vfs_perm_ok(&st, c, mask) ? 0 : EACCES;
}

/* Is the caller in group g (primary or supplementary)?  The supplementary
 * groups are those the kernel holds for the calling thread now (a process
 * may change them at any time, so they are not cached): its
 * /proc/<tid>/status, read in one go, only when the primary differs. */
bool vfs_caller_in_group(const Caller *c, gid_t g)
{
  if (c->gid == g) return true;
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/status", (int)c->tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char *p = strstr(buf, "\nGroups:");
  if (!p) return false;
  p += 8;
  char *eol = strchr(p, '\n');
  if (eol) *eol = '\0';
  for (;;) {
    char *end;
    unsigned long x = strtoul(p, &end, 10);
    if (end == p) return false;
    if ((gid_t)x == g) return true;
    p = end;
  }
}

/* Removing or replacing name in nn's directory: where the directory is
 * sticky, only root, the directory's owner or the name's may (EPERM, as
 * the kernel's may_delete).  A missing name is left to the op's ENOENT. */
int vfs_sticky_check(BoxVfs *v, const Caller *c, const NewName *nn, const char *name)
{
  if (c->uid == 0) return 0;
  uid_t dir_uid, victim_uid;
  if (nn->pass) {
    struct stat d, n;
    if (fstat(nn->dfd, &d) < 0 || !(d.st_mode & S_ISVTX) || d.st_uid == c->uid) return 0;
    if (fstatat(nn->dfd, name, &n, AT_SYMLINK_NOFOLLOW) < 0) return 0;
    dir_uid = d.st_uid;
    victim_uid = n.st_uid;
  } else {
    g_mutex_lock(&v->lock);
    Node *n = (nn->dir->mode & S_ISVTX) ? g_hash_table_lookup(nn->dir->children, name) : NULL;
    dir_uid = nn->dir->uid;
    victim_uid = n ? n->uid : c->uid;
    g_mutex_unlock(&v->lock);
  }
  return dir_uid == c->uid || victim_uid == c->uid ? 0 : EPERM;
}

/* The set-id bits a write or truncate by c drops from a file of st, by the
 * kernel's rules (setattr_should_drop_suidgid): none for root; set-uid;
 * set-gid where group-executable or where c is not in the file's group. */
mode_t vfs_setid_kill(const Caller *c, const struct stat *st)
{
  if (c->uid == 0 || !S_ISREG(st->st_mode)) return 0;
  mode_t kill = st->st_mode & S_ISUID;
  if ((st->st_mode & S_ISGID) && ((st->st_mode & S_IXGRP) || !vfs_caller_in_group(c, st->st_gid)))
    kill |= S_ISGID;
  return kill;
}

/* fs.protected_hardlinks, read once: the kernel's check on a link's source
 * (may_linkat) passes through FUSE's permission hook unchecked. */
static bool protected_hardlinks(void)
{
  static int on = -1;
  int r = __atomic_load_n(&on, __ATOMIC_RELAXED);
  if (r < 0) {
    FILE *f = fopen("/proc/sys/fs/protected_hardlinks", "re");
    r = f && fgetc(f) == '1';
    if (f) fclose(f);
    __atomic_store_n(&on, r, __ATOMIC_RELAXED);
  }
  return r;
}

/* May c link to n?  Its owner and root may; others only a regular file
 * without set-id bits that they may read and write (EPERM). */
int vfs_link_source_check(BoxVfs *v, const Caller *c, Node *n)
{
  if (c->uid == 0 || !protected_hardlinks()) return 0;
  struct stat st;
  if (vfs_node_stat(v, n, &st) != 0 || st.st_uid == c->uid) return 0;
  bool safe = S_ISREG(st.st_mode) && !(st.st_mode & S_ISUID) &&
              (st.st_mode & (S_ISGID | S_IXGRP)) != (S_ISGID | S_IXGRP);
  return safe && vfs_perm_ok(&st, c, R_OK | W_OK) ? 0 : EPERM;
}

/* Lock held: may c search every directory above n?  The kernel asks for no
 * search permission on names it holds (no default_permissions), so without
 * this a directory made unsearchable would leave what lies below it open
 * for as long as the kernel keeps the entries.  Root searches anything. */
int vfs_search_check(BoxVfs *v, const Caller *c, Node *n)
{
  if (c->uid == 0) return 0;
  int depth = 0;
  for (Node *p = n->parent; p && depth < VFS_MAX_DEPTH; p = p->parent, depth++) {
    struct stat st;
    if (!is_pass(p))
      vfs_virt_stat(p, &st);
    else if (p->fd >= 0 ? fstat(p->fd, &st) < 0 : vfs_pass_node_stat(v, p, true, &st) != 0)
      continue; /* not at its place: the op's own walk finds that */
    if (!vfs_perm_ok(&st, c, X_OK)) return EACCES;
  }
  return 0;
}

/* A directory moved to another parent has its ".." rewritten: the caller
 * needs write permission on it (EACCES, as the kernel's vfs_rename). */
int vfs_movedir_check(BoxVfs *v, const Caller *c, const NewName *nn, const char *name)
{
  if (c->uid == 0) return 0;
  struct stat st;
  if (nn->pass) {
    if (fstatat(nn->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return 0;
  } else {
    g_mutex_lock(&v->lock);
    Node *n = g_hash_table_lookup(nn->dir->children, name);
    if (n) vfs_virt_stat(n, &st);
    g_mutex_unlock(&v->lock);
    if (!n) return 0;
  }
  return !S_ISDIR(st.st_mode) || vfs_perm_ok(&st, c, W_OK) ? 0 : EACCES;
}
