/* truncate.c — GNU truncate: -s [+-<>/%]SIZE, -r FILE, -c.  A file's size
 * is read with lseek(SEEK_END) on the descriptor already open, never stat
 * (a stat on the mount is a decision of its own). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static bool size_of(const char *name, off_t *out)
{
  int fd = box_open_file(name, O_RDONLY | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return false;
  *out = lseek(fd, 0, SEEK_END);
  int e = errno;
  close(fd);
  errno = e;
  return *out >= 0;
}

static const char longopts[] = "size=s: reference=r: no-create=c";

int box_cmd_truncate(BoxCmd *c)
{
  const char *size_arg = NULL, *ref = NULL;
  bool no_create = false;
  BX_EACH_OPTION (ch, c, "truncate", "s:r:c", longopts) switch (ch) {
    case 's': size_arg = optarg; break;
    case 'r': ref = optarg; break;
    case 'c': no_create = true; break;
    default: return 1;
    }
  if (!size_arg && !ref) {
    bx_usage(c, "truncate", "you must specify either '--size' or '--reference'");
    return 1;
  }
  if (optind >= c->argc) {
    bx_usage(c, "truncate", "missing file operand");
    return 1;
  }
  char mode = 0;
  unsigned long long n = 0;
  if (size_arg) {
    const char *s = size_arg;
    if (*s && strchr("+-<>/%", *s)) mode = *s++;
    if (!bx_parse_size(s, &n)) {
      bx_err_q(c, "truncate", "Invalid number: %s", size_arg, 0);
      return 1;
    }
    if ((mode == '/' || mode == '%') && n == 0) {
      bx_err(c, "truncate", "division by zero");
      return 1;
    }
  }
  off_t ref_size = 0;
  if (ref && !size_of(ref, &ref_size)) {
    bx_err_q(c, "truncate", "cannot stat %s", ref, errno);
    return 1;
  }
  if (ref && !size_arg) n = (unsigned long long)ref_size;
  int status = 0;
  for (int i = optind; i < c->argc; i++) {
    const char *name = c->argv[i];
    int fd = box_open_file(name, O_WRONLY | O_NOCTTY | O_NONBLOCK | (no_create ? 0 : O_CREAT));
    if (fd < 0) {
      if (no_create && errno == ENOENT) continue;
      bx_err_q(c, "truncate", "cannot open %s for writing", name, errno);
      status = 1;
      continue;
    }
    /* a relative size counts from the file's (or -r's) size */
    unsigned long long cur = 0;
    if (mode) {
      off_t end = ref ? ref_size : lseek(fd, 0, SEEK_END);
      cur = end > 0 ? (unsigned long long)end : 0;
    }
    unsigned long long want = n;
    switch (mode) {
    case '+': want = cur + n; break;
    case '-': want = cur > n ? cur - n : 0; break;
    case '<': want = MIN(cur, n); break;
    case '>': want = MAX(cur, n); break;
    case '/': want = cur / n * n; break;
    case '%': want = (cur + n - 1) / n * n; break;
    default: break;
    }
    if (ftruncate(fd, (off_t)want) != 0) {
      g_autofree char *q = bx_quote_always(name);
      g_autofree char *t = bx_errtext(c, errno);
      bx_err(c, "truncate", "failed to truncate %s at %llu bytes: %s", q, want, t);
      status = 1;
    }
    close(fd);
  }
  return status;
}
