/* aliases.c — the box's aliases (<box_dir>/bin/zsh, bash, sh, python3,
 * python): its own
 * read-only copies of box-alias, checked and replaced at every start. */
#include "box/box-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Why the installed alias at path is not a sound copy of box-alias (image,
 * len), or NULL when it is: a read-only regular file of ours with one link
 * and the same bytes. */
static const char *alias_unsound(const char *path, const char *image, gsize len)
{
  struct stat st;
  if (lstat(path, &st) != 0) return NULL; /* none yet: installed without a word */
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_nlink != 1) return "it is a hard link, so it is one file with another";
  if (st.st_uid != getuid() || (st.st_mode & 07777) != 0555) return "its owner or mode changed";
  if ((gsize)st.st_size != len) return "its contents differ from box-alias";
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "it cannot be read";
  const char *why = NULL;
  char buf[65536];
  gsize at = 0;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0 || at != len) why = "its contents differ from box-alias";
      break;
    }
    if (at + (gsize)n > len || memcmp(buf, image + at, (size_t)n) != 0) {
      why = "its contents differ from box-alias";
      break;
    }
    at += (gsize)n;
  }
  close(fd);
  return why;
}

/* Writes a fresh read-only copy of image at path (through path.new). */
static bool alias_write(const char *path, const char *image, gsize len, GError **error)
{
  g_autofree char *tmp = g_strconcat(path, ".new", NULL);
  unlink(tmp);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
  if (fd < 0) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED, "cannot install alias %s: %s", path,
                g_strerror(errno));
    return false;
  }
  gsize at = 0;
  errno = 0;
  while (at < len) {
    ssize_t n = write(fd, image + at, len - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += (gsize)n;
  }
  int err = at == len ? 0 : errno ? errno : EIO;
  if (!err && (fchmod(fd, 0555) != 0 || fsync(fd) != 0)) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    unlink(tmp);
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED, "cannot install alias %s: %s", path,
                g_strerror(err));
    return false;
  }
  return true;
}

/* Installs bin/NAME, unless a sound copy is there already. */
static bool alias_install(Boxd *d, const char *name, const char *image, gsize len, GError **error)
{
  g_autofree char *dst = g_build_filename(d->config->box_dir, "bin", name, NULL);
  struct stat st;
  bool present = lstat(dst, &st) == 0;
  const char *why = alias_unsound(dst, image, len);
  if (present && !why) return true;
  if (why)
    g_printerr("box: warning: alias %s was changed since Box installed it (%s); installing a "
               "fresh copy of box-alias\n",
               dst, why);
  return alias_write(dst, image, len, error);
}

/* Each box's aliases are its own copies of box-alias, read-only: never a
 * hard link, which would make a box's alias and the binary the host runs
 * one file, so that whoever changed one changed the other.  At start each
 * is checked; one that is no longer a sound copy is replaced, and said so. */
bool boxd_install_aliases(Boxd *d, GError **error)
{
  g_autofree char *alias = box_sibling_binary("box-alias");
  if (!alias) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "box-alias is not installed beside the box binary");
    return false;
  }
  g_autofree char *image = NULL;
  gsize len = 0;
  if (!g_file_get_contents(alias, &image, &len, error)) return false;
  const char *names[] = { "zsh", "bash", "sh", "python3", "python", NULL };
  for (int i = 0; names[i]; i++)
    if (!alias_install(d, names[i], image, len, error)) return false;
  /* A stdio MCP server is reached by running its program's name (§4.1), an
   * http one by its own name. */
  for (guint i = 0; i < d->config->mcp->len; i++) {
    const BoxMcpServer *m = g_ptr_array_index(d->config->mcp, i);
    if (!alias_install(d, m->http ? m->name : m->spec.command[0], image, len, error)) return false;
  }
  return true;
}
