/* perm.c — mode-bit checks.  The mount runs without default_permissions
 * (with it a stat costs eleven GETATTRs), so the daemon checks what the
 * kernel would: the caller's uid, primary and supplementary groups. */
#include "vfs/vfs-private.h"

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
  unsigned bits;
  if (c->uid == st->st_uid)
    bits = (st->st_mode >> 6) & 7;
  else if (vfs_caller_in_group(c, st->st_gid))
    bits = (st->st_mode >> 3) & 7;
  else
    bits = st->st_mode & 7;
  return ((unsigned)mask & bits) == (unsigned)mask;
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
 * groups are read from /proc/<tid>/status only when the primary differs. */
bool vfs_caller_in_group(const Caller *c, gid_t g)
{
  if (c->gid == g) return true;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)c->tid);
  FILE *f = fopen(path, "re");
  if (!f) return false;
  char line[4096];
  bool found = false;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Groups:", 7) != 0) continue;
    char *p = line + 7, *end;
    for (;;) {
      unsigned long x = strtoul(p, &end, 10);
      if (end == p) break;
      if ((gid_t)x == g) found = true;
      p = end;
    }
    break;
  }
  fclose(f);
  return found;
}
