/* touch.c — GNU touch: -a -m -c -d DATE -r FILE -t STAMP -h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

/* [[CC]YY]MMDDhhmm[.ss] */
static bool parse_stamp(const char *s, struct timespec *out)
{
  const char *dot = strchr(s, '.');
  size_t n = dot ? (size_t)(dot - s) : strlen(s);
  for (size_t i = 0; i < n; i++)
    if (!g_ascii_isdigit(s[i])) return false;
  int sec = 0;
  if (dot) {
    if (strlen(dot + 1) != 2 || !g_ascii_isdigit(dot[1]) || !g_ascii_isdigit(dot[2])) return false;
    sec = atoi(dot + 1);
  }
  if (n != 8 && n != 10 && n != 12) return false;
  struct tm tm = { 0 };
  time_t now = time(NULL);
  struct tm nt;
  localtime_r(&now, &nt);
  int v[6];
  const char *p = s;
  int year;
  if (n == 12) {
    year = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0');
    p += 4;
  } else if (n == 10) {
    int yy = (p[0] - '0') * 10 + (p[1] - '0');
    year = yy < 69 ? 2000 + yy : 1900 + yy;
    p += 2;
  } else
    year = nt.tm_year + 1900;
  for (int i = 0; i < 4; i++, p += 2) v[i] = (p[0] - '0') * 10 + (p[1] - '0');
  tm.tm_year = year - 1900;
  tm.tm_mon = v[0] - 1;
  tm.tm_mday = v[1];
  tm.tm_hour = v[2];
  tm.tm_min = v[3];
  tm.tm_sec = sec;
  tm.tm_isdst = -1;
  if (v[0] < 1 || v[0] > 12 || v[1] < 1 || v[1] > 31 || v[2] > 23 || v[3] > 59 || sec > 60)
    return false;
  out->tv_sec = mktime(&tm);
  out->tv_nsec = 0;
  return true;
}

static const char longopts[] = "no-create=c date=d: reference=r: no-dereference=h time=T:";

int box_cmd_touch(BoxCmd *c)
{
  bool no_create = false, no_deref = false, set_a = false, set_m = false, given = false;
  struct timespec ts[2];
  const char *ref = NULL, *date = NULL, *stamp = NULL;
  BX_EACH_OPTION (ch, c, "touch", "acd:fhmr:t:", longopts) switch (ch) {
    case 'a': set_a = true; break;
    case 'm': set_m = true; break;
    case 'c': no_create = true; break;
    case 'f': break;
    case 'h':
      no_deref = true;
      no_create = true;
      break;
    case 'd': date = optarg; break;
    case 'r': ref = optarg; break;
    case 't': stamp = optarg; break;
    case 'T':
      if (!strcmp(optarg, "atime") || !strcmp(optarg, "access") || !strcmp(optarg, "use"))
        set_a = true;
      else if (!strcmp(optarg, "mtime") || !strcmp(optarg, "modify"))
        set_m = true;
      else {
        bx_usage_q(c, "touch", "invalid argument %s for '--time'", optarg);
        return 1;
      }
      break;
    default: return 1;
    }
  if (!set_a && !set_m) set_a = set_m = true;
  if (stamp && (date || ref)) {
    bx_usage(c, "touch", "cannot specify times from more than one source");
    return 1;
  }
  if (ref) {
    struct stat st;
    if ((no_deref ? lstat(ref, &st) : stat(ref, &st)) != 0) {
      bx_err_q(c, "touch", "failed to get attributes of %s", ref, errno);
      return 1;
    }
    ts[0] = st.st_atim;
    ts[1] = st.st_mtim;
    given = true;
  }
  if (date) {
    struct timespec t;
    if (!bx_parse_date(date, false, &t)) {
      bx_err_q(c, "touch", "invalid date format %s", date, 0);
      return 1;
    }
    ts[0] = ts[1] = t;
    given = true;
  }
  if (stamp) {
    struct timespec t;
    if (!parse_stamp(stamp, &t)) {
      bx_err_q(c, "touch", "invalid date format %s", stamp, 0);
      return 1;
    }
    ts[0] = ts[1] = t;
    given = true;
  }
  if (!given) {
    ts[0].tv_nsec = ts[1].tv_nsec = UTIME_NOW;
    ts[0].tv_sec = ts[1].tv_sec = 0;
  }
  if (!set_a) ts[0].tv_nsec = UTIME_OMIT;
  if (!set_m) ts[1].tv_nsec = UTIME_OMIT;
  if (optind >= c->argc) {
    bx_usage(c, "touch", "missing file operand");
    return 1;
  }
  int status = 0;
  for (int i = optind; i < c->argc; i++) {
    const char *f = c->argv[i];
    int fd = -1, open_err = 0;
    if (!strcmp(f, "-")) {
      fd = c->out_fd;
      if (fd >= 0 && futimens(fd, ts) == 0) continue;
      bx_err(c, "touch", "setting times of '-': %s", box_strerror(errno));
      status = 1;
      continue;
    }
    if (!no_create) {
      fd = box_open_file(f, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY);
      if (fd < 0) open_err = errno;
    }
    int r;
    if (fd >= 0) {
      r = futimens(fd, ts);
      int e = errno;
      close(fd);
      errno = e;
    } else {
      r = utimensat(AT_FDCWD, f, ts, no_deref ? AT_SYMLINK_NOFOLLOW : 0);
    }
    if (r != 0) {
      int e = errno;
      if (open_err && open_err != EISDIR) e = open_err;
      if (no_create && e == ENOENT) continue;
      g_autofree char *q = bx_quote_always(f);
      g_autofree char *t = bx_errtext(c, e);
      if (open_err && open_err != EISDIR)
        bx_err(c, "touch", "cannot touch %s: %s", q, t);
      else
        bx_err(c, "touch", "setting times of %s: %s", q, t);
      status = 1;
    }
  }
  return status;
}
