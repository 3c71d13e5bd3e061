/* files.c — files as the commands see them: owners' names, modes and
 * types, directory listings without stat, paths. */
#include "shell/commands/commands-private.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *bx_user_name(uid_t uid)
{
  struct passwd *pw = getpwuid(uid);
  if (pw) return pw->pw_name;
  return uid == 0 ? "root" : NULL;
}

const char *bx_group_name(gid_t gid)
{
  struct group *gr = getgrgid(gid);
  if (gr) return gr->gr_name;
  return gid == 0 ? "root" : NULL;
}

bool bx_parse_mode(const char *s, mode_t cur, bool is_dir, mode_t *out)
{
  if (*s >= '0' && *s <= '7') {
    char *end;
    unsigned long v = strtoul(s, &end, 8);
    if (*end || v > 07777) return false;
    *out = (mode_t)v;
    return true;
  }
  mode_t m = cur;
  mode_t um = umask(0);
  umask(um);
  const char *p = s;
  for (;;) {
    mode_t who = 0;
    bool explicit_who = false;
    for (; *p && strchr("ugoa", *p); p++) {
      explicit_who = true;
      who |= *p == 'u' ? 04700 : *p == 'g' ? 02070 : *p == 'o' ? 01007 : 07777;
    }
    if (!explicit_who) who = 07777;
    if (!*p || !strchr("+-=", *p)) return false;
    while (*p && strchr("+-=", *p)) {
      char op = *p++;
      mode_t bits = 0;
      if (*p && strchr("ugo", *p)) {
        mode_t src = m;
        int sh = *p == 'u' ? 6 : *p == 'g' ? 3 : 0;
        mode_t v = (src >> sh) & 7;
        bits = (v << 6) | (v << 3) | v;
        p++;
      } else {
        for (; *p && strchr("rwxXst", *p); p++) {
          switch (*p) {
          case 'r': bits |= 0444; break;
          case 'w': bits |= 0222; break;
          case 'x': bits |= 0111; break;
          case 'X':
            if (is_dir || (m & 0111)) bits |= 0111;
            break;
          case 's': bits |= 06000; break;
          case 't': bits |= 01000; break;
          }
        }
      }
      mode_t mask = who & (explicit_who ? 07777 : ~um & 07777);
      if (!explicit_who) mask |= bits & 06000 ? 0 : 0;
      bits &= explicit_who ? who : (who & ~um);
      if (op == '+')
        m |= bits;
      else if (op == '-')
        m &= ~bits;
      else {
        mode_t clear = explicit_who ? who : 07777;
        m = (m & ~(clear & 07777 & ~(is_dir ? 06000 : 0))) | bits;
        (void)mask;
      }
    }
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p) return false;
    break;
  }
  *out = m;
  return true;
}

const char *bx_file_type_name(mode_t m)
{
  if (S_ISREG(m)) return "regular file";
  if (S_ISDIR(m)) return "directory";
  if (S_ISLNK(m)) return "symbolic link";
  if (S_ISFIFO(m)) return "fifo";
  if (S_ISCHR(m)) return "character special file";
  if (S_ISBLK(m)) return "block special file";
  if (S_ISSOCK(m)) return "socket";
  return "weird file";
}

void bx_mode_string(mode_t m, char out[11])
{
  out[0] = S_ISDIR(m)    ? 'd'
           : S_ISLNK(m)  ? 'l'
           : S_ISCHR(m)  ? 'c'
           : S_ISBLK(m)  ? 'b'
           : S_ISFIFO(m) ? 'p'
           : S_ISSOCK(m) ? 's'
                         : '-';
  static const char rwx[] = "rwxrwxrwx";
  for (int i = 0; i < 9; i++) out[1 + i] = (m & (0400 >> i)) ? rwx[i] : '-';
  if (m & S_ISUID) out[3] = (m & 0100) ? 's' : 'S';
  if (m & S_ISGID) out[6] = (m & 0010) ? 's' : 'S';
  if (m & S_ISVTX) out[9] = (m & 0001) ? 't' : 'T';
  out[10] = 0;
}

struct bx_dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

static void add_records(GArray *v, const char *buf, size_t n)
{
  for (size_t off = 0; off + sizeof(struct bx_dirent64) <= n;) {
    const struct bx_dirent64 *d = (const struct bx_dirent64 *)(buf + off);
    if (d->d_reclen == 0) break;
    off += d->d_reclen;
    if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..")) continue;
    BxDirEnt e = { g_strdup(d->d_name), (unsigned long long)d->d_ino, d->d_type };
    g_array_append_val(v, e);
  }
}

GArray *bx_list_dir(const char *path, int *err)
{
  return bx_list_dir_opening(path, NULL, 0, NULL, err);
}

GArray *bx_list_dir_opening(const char *path, const char *prefix, guint open_first, guint *opened,
                            int *err)
{
  char *records;
  size_t len;
  int k = 0;
  if (opened) *opened = 0;
  if (box_list_fast(path, prefix, (int)open_first, &records, &len, err, &k)) {
    if (opened) *opened = (guint)k;
    if (!records) return NULL;
    GArray *v = g_array_new(FALSE, FALSE, sizeof(BxDirEnt));
    add_records(v, records, len);
    g_free(records);
    *err = 0;
    return v;
  }
  int fd = box_open_file(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    *err = errno;
    return NULL;
  }
  GArray *v = g_array_new(FALSE, FALSE, sizeof(BxDirEnt));
  char buf[32768];
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *err = errno;
      close(fd);
      bx_dir_free(v);
      return NULL;
    }
    if (n == 0) break;
    add_records(v, buf, (size_t)n);
  }
  close(fd);
  *err = 0;
  return v;
}

void bx_dir_free(GArray *v)
{
  if (!v) return;
  for (guint i = 0; i < v->len; i++) g_free(g_array_index(v, BxDirEnt, i).name);
  g_array_free(v, TRUE);
}

char *bx_path_join(const char *dir, const char *name)
{
  size_t n = strlen(dir);
  if (n && dir[n - 1] == '/') return g_strconcat(dir, name, NULL);
  return g_strconcat(dir, "/", name, NULL);
}

char *bx_relative_path(const char *path, const char *base)
{
  gchar **tp = g_strsplit(path, "/", -1), **bp = g_strsplit(base, "/", -1);
  int i = 0;
  while (tp[i] && bp[i] && !strcmp(tp[i], bp[i])) i++;
  GString *r = g_string_new(NULL);
  for (int j = i; bp[j]; j++)
    if (*bp[j]) g_string_append(r, r->len ? "/.." : "..");
  for (int j = i; tp[j]; j++)
    if (*tp[j]) {
      if (r->len) g_string_append_c(r, '/');
      g_string_append(r, tp[j]);
    }
  if (!r->len) g_string_assign(r, ".");
  g_strfreev(tp);
  g_strfreev(bp);
  return g_string_free(r, FALSE);
}

char *bx_canonicalize(const char *path, int mode, int *err)
{
  GString *res = g_string_new(NULL);
  if (path[0] != '/') {
    char *cwd = g_get_current_dir();
    g_string_assign(res, cwd);
    g_free(cwd);
  }
  if (*path == 0) {
    *err = ENOENT;
    g_string_free(res, TRUE);
    return NULL;
  }
  GQueue q = G_QUEUE_INIT;
  gchar **parts = g_strsplit(path, "/", -1);
  for (gchar **x = parts; *x; x++)
    if (**x && strcmp(*x, ".")) g_queue_push_tail(&q, g_strdup(*x));
  g_strfreev(parts);
  int links = 0;
  bool missing = false;
  *err = 0;
  while (!g_queue_is_empty(&q)) {
    char *comp = g_queue_pop_head(&q);
    if (!strcmp(comp, "..")) {
      char *sl = strrchr(res->str, '/');
      if (sl) g_string_truncate(res, (gsize)(sl - res->str));
      g_free(comp);
      continue;
    }
    size_t old = res->len;
    g_string_append_c(res, '/');
    g_string_append(res, comp);
    g_free(comp);
    if (missing) continue;
    char buf[4096];
    ssize_t n = readlink(res->str, buf, sizeof buf - 1);
    if (n >= 0) {
      if (++links > 40) {
        *err = ELOOP;
        break;
      }
      buf[n] = 0;
      g_string_truncate(res, old);
      if (buf[0] == '/') g_string_truncate(res, 0);
      gchar **tp = g_strsplit(buf, "/", -1);
      guint cnt = g_strv_length(tp);
      for (guint i = cnt; i-- > 0;)
        if (tp[i][0] && strcmp(tp[i], ".")) g_queue_push_head(&q, g_strdup(tp[i]));
      g_strfreev(tp);
      continue;
    }
    if (errno == EINVAL) continue;
    if (errno == ENOENT && (mode == 2 || (mode == 0 && g_queue_is_empty(&q)))) {
      if (mode == 2) missing = true;
      continue;
    }
    if (errno == ENOTDIR && mode == 2) {
      missing = true;
      continue;
    }
    *err = errno;
    break;
  }
  g_queue_clear_full(&q, g_free);
  if (*err) {
    g_string_free(res, TRUE);
    return NULL;
  }
  if (res->len == 0) g_string_assign(res, "/");
  return g_string_free(res, FALSE);
}
