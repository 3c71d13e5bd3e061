/* tail.c — GNU tail: -n/-c with N, -N or +N, -q, -v, -z, the obsolete
 * -NUM[bcl][f] and +NUM[bcl][f]; -f/--follow[=descriptor|name], -F,
 * --retry, -s/--sleep-interval, --pid, --max-unchanged-stats.
 * A seekable file is read from its end (lseek, no stat); a pipe is
 * streamed.  Following polls: the mount has no inotify (GNU tail polls
 * there too), and a file's growth shows as its end moving past what was
 * read.  Headers and messages are those of GNU's inotify mode, which is
 * what a user sees on a local disk: a header only before data. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/head_tail.h"

static const char longopts[] =
  "bytes=c: follow=\1:: lines=n: max-unchanged-stats=\2: pid=\3: quiet=q retry=\4 silent=q "
  "sleep-interval=s: verbose=v zero-terminated=z -disable-inotify=\5";

static bool copy_rest(BoxCmd *c, int fd)
{
  char buf[65536];
  for (;;) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) return false;
    if (r == 0) return true;
    box_out_write(c->out, buf, (size_t)r);
    if (c->out->error) return true;
  }
}

static bool tail_from_start(BoxCmd *c, int fd, const BxEnds *o)
{
  unsigned long long skip = o->n ? o->n - 1 : 0;
  char buf[65536];
  while (skip > 0) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) return false;
    if (r == 0) return true;
    size_t i = 0;
    if (o->bytes) {
      i = (size_t)MIN((unsigned long long)r, skip);
      skip -= i;
    } else {
      while (i < (size_t)r && skip > 0) {
        const char *nl = memchr(buf + i, o->delim, (size_t)r - i);
        if (!nl) {
          i = (size_t)r;
          break;
        }
        i = (size_t)(nl - buf) + 1;
        skip--;
      }
    }
    box_out_write(c->out, buf + i, (size_t)r - i);
  }
  return copy_rest(c, fd);
}

/* Last n records of data[0..len): start offset. */
static size_t last_records(const char *data, size_t len, unsigned long long n, char delim,
                           bool *enough)
{
  size_t end = len;
  *enough = false;
  if (n == 0) {
    *enough = true;
    return len;
  }
  if (end && data[end - 1] == delim) end--; /* a final terminator ends the last record */
  while (end > 0) {
    const char *p = memrchr(data, delim, end);
    if (!p) break;
    if (--n == 0) {
      *enough = true;
      return (size_t)(p - data) + 1;
    }
    end = (size_t)(p - data);
  }
  return 0;
}

static bool tail_end(BoxCmd *c, int fd, const BxEnds *o)
{
  off_t size = lseek(fd, 0, SEEK_END);
  if (size >= 0 && o->bytes) {
    /* seekable: from the offset of the last n bytes (a directory's end may
     * be no offset to go to: the read below says why) */
    off_t start = (unsigned long long)size > o->n ? size - (off_t)o->n : 0;
    if (lseek(fd, start, SEEK_SET) >= 0) {
      if (copy_rest(c, fd)) return true;
      /* a directory's end is no offset a read may start from (EINVAL):
       * a read at its start tells what is wrong */
      char ch;
      if (errno == EINVAL) (void)!pread(fd, &ch, 1, 0);
      return false;
    }
  } else if (size >= 0) {
    /* seekable: read backwards in blocks until enough */
    GString *tailbuf = g_string_new(NULL);
    off_t pos = size;
    size_t blk = 65536;
    char *buf = g_malloc(blk);
    bool ok = true;
    for (;;) {
      off_t from = pos > (off_t)blk ? pos - (off_t)blk : 0;
      size_t want = (size_t)(pos - from);
      size_t got = 0;
      while (got < want) {
        ssize_t r = pread(fd, buf + got, want - got, from + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) ok = false; /* a directory's "end" is no size to walk back from */
        if (r <= 0) break;
        got += (size_t)r;
      }
      if (!ok) break;
      g_string_prepend_len(tailbuf, buf, (gssize)got);
      pos = from;
      bool enough;
      size_t st = last_records(tailbuf->str, tailbuf->len, o->n, o->delim, &enough);
      if (enough || pos == 0) {
        box_out_write(c->out, tailbuf->str + st, tailbuf->len - st);
        break;
      }
    }
    int err = errno;
    g_free(buf);
    g_string_free(tailbuf, TRUE);
    errno = err;
    return ok;
  }
  /* a pipe: keep a window */
  g_autoptr(GString) data = g_string_new(NULL);
  ssize_t r;
  while ((r = bx_ends_append(fd, data)) > 0) {
    if (data->len > 4 * 1024 * 1024) {
      bool enough = false;
      size_t st = o->bytes ? (data->len > o->n ? data->len - (size_t)o->n : 0)
                           : last_records(data->str, data->len, o->n, o->delim, &enough);
      if (o->bytes ? data->len > o->n : enough) g_string_erase(data, 0, (gssize)st);
    }
  }
  if (r < 0) return false;
  bool enough;
  size_t st = o->bytes ? (data->len > o->n ? data->len - (size_t)o->n : 0)
                       : last_records(data->str, data->len, o->n, o->delim, &enough);
  box_out_write(c->out, data->str + st, data->len - st);
  return true;
}

/* ---- options ----------------------------------------------------------------------- */

typedef struct {
  BxEnds o;
  int verbose; /* -1: headers with several files; 0 -q; 1 -v */
  bool follow, by_name, retry;
  double interval;
  pid_t pid;
  unsigned long long max_unchanged;
} TailOpts;

/* GNU's unsigned decimal: blanks, an optional '+', digits, then one of the
 * size suffixes when sized.  false when invalid; *over when too large. */
static bool parse_unsigned(const char *s, bool sized, unsigned long long *out, bool *over)
{
  *over = false;
  while (g_ascii_isspace(*s)) s++;
  if (*s == '+') s++;
  if (!g_ascii_isdigit(*s)) return false;
  size_t digits = strspn(s, "0123456789");
  errno = 0;
  unsigned long long v = strtoull(s, NULL, 10);
  bool range = errno == ERANGE;
  if (s[digits]) {
    /* tail's suffixes: bx_parse_size's but c and w, and m for M */
    char suffix = s[digits];
    if (!sized || suffix == 'c' || suffix == 'w') return false;
    g_autofree char *t = g_strdup(s);
    if (suffix == 'm') t[digits] = 'M';
    if (!bx_parse_size(t, &v)) return false;
    /* bx_parse_size saturates; only the plain maximum itself is no overflow */
    range = range || v == ~0ULL;
  }
  *out = v;
  *over = range;
  return true;
}

/* -n/-c's value.  false after GNU's message. */
static bool parse_count(BoxCmd *c, const char *v, TailOpts *t)
{
  if (*v == '+')
    t->o.flipped = true;
  else if (*v == '-')
    v++;
  bool over;
  const char *what = t->o.bytes ? "bytes" : "lines";
  if (!parse_unsigned(v, true, &t->o.n, &over)) {
    bx_err(c, "tail", "invalid number of %s: '%s'", what, v);
    return false;
  }
  if (over) {
    bx_err(c, "tail", "invalid number of %s: '%s': %s", what, v, g_strerror(EOVERFLOW));
    return false;
  }
  return true;
}

/* An unsigned option value up to max, else GNU's message with what. */
static bool parse_limited(BoxCmd *c, const char *v, unsigned long long max, const char *what,
                          unsigned long long *out)
{
  bool over;
  if (!parse_unsigned(v, false, out, &over)) {
    bx_err(c, "tail", "%s: '%s'", what, v);
    return false;
  }
  if (over || *out > max) {
    bx_err(c, "tail", "%s: '%s': %s", what, v, g_strerror(EOVERFLOW));
    return false;
  }
  return true;
}

static bool parse_follow(BoxCmd *c, const char *v, TailOpts *t)
{
  static const char *const modes[] = { "descriptor", "name" };
  int hit = -1, hits = 0;
  for (int i = 0; i < 2; i++) {
    if (strcmp(v, modes[i]) == 0) {
      hit = i;
      hits = 1;
      break;
    }
    if (strncmp(v, modes[i], strlen(v)) == 0) {
      hit = i;
      hits++;
    }
  }
  if (hits == 1) {
    t->by_name = hit == 1;
    return true;
  }
  bx_usage_q(c, "tail",
             hits ? "ambiguous argument %s for '--follow'\nValid arguments are:\n"
                    "  - 'descriptor'\n  - 'name'"
                  : "invalid argument %s for '--follow'\nValid arguments are:\n"
                    "  - 'descriptor'\n  - 'name'",
             v);
  return false;
}

/* The obsolete first argument (-NUM[bcl][f] or +NUM[bcl][f]), taken only
 * where GNU takes it: alone, or before one file operand (or "--" and one).
 * 1 when taken, 0 when not one, -1 after an error. */
static int obsolete_arg(BoxCmd *c, TailOpts *t)
{
  char **av = c->argv;
  int ac = c->argc;
  if (!(ac == 2 || (ac == 3 && !(av[2][0] == '-' && av[2][1])) ||
        (ac >= 3 && ac <= 4 && strcmp(av[2], "--") == 0)))
    return 0;
  const char *a = av[1], *p = a + 1;
  if (a[0] != '+' && a[0] != '-') return 0;
  /* "-" is standard input, and "-c" wants its value */
  if (a[0] == '-' && !p[p[0] == 'c']) return 0;
  const char *digits = p;
  while (g_ascii_isdigit(*p)) p++;
  size_t nd = (size_t)(p - digits);
  unsigned long long unit = 1;
  bool bytes = false, follow = false;
  if (*p == 'b' || *p == 'c' || *p == 'l') {
    bytes = *p != 'l';
    if (*p == 'b') unit = 512;
    p++;
  }
  if (*p == 'f') {
    follow = true;
    p++;
  }
  if (*p) return 0;
  unsigned long long n = 10 * unit;
  if (nd) {
    g_autofree char *num = g_strndup(digits, nd);
    errno = 0;
    n = strtoull(num, NULL, 10);
    if (errno == ERANGE || (n && unit > ~0ULL / n)) {
      bx_err(c, "tail", "invalid number: '%s': %s", a, g_strerror(ERANGE));
      return -1;
    }
    n *= unit;
  }
  t->o.n = n;
  t->o.bytes = bytes;
  t->o.flipped = a[0] == '+';
  t->follow = follow;
  return 1;
}

/* The options; false after an error (its message printed). */
static bool parse_options(BoxCmd *c, TailOpts *t)
{
  unsigned long long v;
  BX_EACH_OPTION (ch, c, "tail", "c:n:fFqs:vz0123456789", longopts) switch (ch) {
    case 'F': t->follow = t->by_name = t->retry = true; break;
    case 'c':
    case 'n':
      t->o.bytes = ch == 'c';
      if (!parse_count(c, optarg, t)) return false;
      break;
    case 'f':
    case '\1':
      t->follow = true;
      t->by_name = false;
      if (optarg && !parse_follow(c, optarg, t)) return false;
      break;
    case '\2':
      if (!parse_limited(c, optarg, ~0ULL,
                         "invalid maximum number of unchanged stats between opens",
                         &t->max_unchanged))
        return false;
      break;
    case '\3':
      if (!parse_limited(c, optarg, INT32_MAX, "invalid PID", &v)) return false;
      t->pid = (pid_t)v;
      break;
    case '\4': t->retry = true; break;
    case '\5': break; /* ---disable-inotify: polling is all there is */
    case 'q': t->verbose = 0; break;
    case 'v': t->verbose = 1; break;
    case 'z': t->o.delim = '\0'; break;
    case 's': {
      char *end;
      errno = 0;
      double s = g_ascii_strtod(optarg, &end);
      if (end == optarg || *end || !(s >= 0) || (errno == ERANGE && s != 0)) {
        g_autofree char *q = bx_quote_always(optarg);
        bx_err(c, "tail", "invalid number of seconds: %s", q);
        return false;
      }
      t->interval = s;
      break;
    }
    default:
      /* a digit: -NUM that is not the obsolete first argument */
      if (g_ascii_isdigit(ch)) bx_err(c, "tail", "option used in invalid context -- %c", ch);
      return false;
    }
  if (t->retry) {
    if (!t->follow) {
      t->retry = false;
      bx_err(c, "tail", "warning: --retry ignored; --retry is useful only when following");
    } else if (!t->by_name) {
      bx_err(c, "tail", "warning: --retry only effective for the initial open");
    }
  }
  if (t->pid && !t->follow)
    bx_err(c, "tail", "warning: PID ignored; --pid=PID is useful only when following");
  return true;
}

/* ---- following ---------------------------------------------------------------------- */

typedef struct {
  const char *name;
  int fd;        /* -1: not open */
  int err;       /* 0 while open; else the errno of the last try, -1 for an untailable type */
  bool ignore;   /* given up on */
  bool tailable; /* existed and could be read at the last try */
  mode_t mode;
  dev_t dev;
  ino_t ino;
  off_t pos;                    /* how much of a regular file was read */
  unsigned long long unchanged; /* polls since it last grew */
} Followed;

typedef struct {
  BoxCmd *c;
  TailOpts *opt;
  Followed *f;
  size_t n;
  bool headers, first_header;
  size_t last; /* the file whose data was printed last */
} Tail;

static bool tailable_type(mode_t m)
{
  return S_ISREG(m) || S_ISFIFO(m) || S_ISSOCK(m) || S_ISCHR(m);
}

static const char *pretty(const Followed *f)
{
  return strcmp(f->name, "-") == 0 ? "standard input" : f->name;
}

static void header(Tail *t, const char *name)
{
  box_out_printf(t->c->out, "%s==> %s <==\n", t->first_header ? "" : "\n", name);
  t->first_header = false;
}

static void start_following(Followed *f, int fd, const struct stat *st, off_t pos)
{
  f->fd = fd;
  f->err = 0;
  f->ignore = false;
  f->mode = st->st_mode;
  f->dev = st->st_dev;
  f->ino = st->st_ino;
  f->pos = pos;
  f->unchanged = 0;
}

/* The name again, as GNU's recheck: a file that appeared, came back or
 * replaced the one followed is followed from its start. */
static void recheck(Tail *t, Followed *f)
{
  BoxCmd *c = t->c;
  bool is_stdin = strcmp(f->name, "-") == 0;
  bool was_tailable = f->tailable;
  int prev_err = f->err;
  /* O_NONBLOCK: a fifo put in the file's place must not hold the poll */
  int fd = is_stdin ? c->in : box_open_file(f->name, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  int err = fd < 0 ? (is_stdin ? EBADF : errno) : 0;
  struct stat st;
  bool ok = false;
  f->tailable = !(t->opt->retry && fd < 0);
  if (fd >= 0 && fstat(fd, &st) < 0) err = errno;
  if (err) {
    f->err = err;
    if (!f->tailable) {
      if (was_tailable) bx_err_q(c, "tail", "%s has become inaccessible", pretty(f), err);
    } else if (prev_err != err) {
      bx_ferr(c, "tail", pretty(f), err);
    }
  } else if (!tailable_type(st.st_mode)) {
    f->err = -1;
    f->tailable = false;
    f->ignore = !(t->opt->retry && t->opt->by_name);
    if (was_tailable || prev_err != -1) {
      g_autofree char *q = bx_quote_always(pretty(f));
      bx_err(c, "tail", "%s has been replaced with an untailable file%s", q,
             f->ignore ? "; giving up on this name" : "");
    }
  } else {
    f->err = 0;
    ok = true;
  }
  if (!ok) {
    if (fd >= 0) bx_close_in(t->c, fd);
    if (f->fd >= 0) bx_close_in(t->c, f->fd);
    f->fd = -1;
    return;
  }
  if (prev_err && prev_err != ENOENT) {
    bx_err_q(c, "tail", "%s has become accessible", pretty(f), 0);
  } else if (f->fd < 0) {
    bx_err_q(c, "tail", "%s has appeared;  following new file", pretty(f), 0);
  } else if (f->ino != st.st_ino || f->dev != st.st_dev) {
    bx_err_q(c, "tail", "%s has been replaced;  following new file", pretty(f), 0);
    bx_close_in(t->c, f->fd);
  } else {
    bx_close_in(t->c, fd);
    return;
  }
  start_following(f, fd, &st, 0);
  if (S_ISREG(st.st_mode)) lseek(fd, 0, SEEK_SET);
}

/* Copies what file i has now, its header first when another file gave
 * the last data.  -1 after a read error (message printed). */
static long long drain(Tail *t, size_t i)
{
  BoxCmd *c = t->c;
  Followed *f = &t->f[i];
  char buf[65536];
  long long total = 0;
  while (!c->out->error) {
    if (!S_ISREG(f->mode)) {
      /* a pipe, fifo or device: only what is there, never a wait */
      struct pollfd p = { .fd = f->fd, .events = POLLIN };
      if (poll(&p, 1, 0) <= 0) break;
    }
    ssize_t r = bx_read(f->fd, buf, sizeof buf);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (r < 0) {
      bx_err_q(c, "tail", "error reading %s", pretty(f), errno);
      return -1;
    }
    if (r == 0) break;
    if (total == 0 && t->headers && t->last != i) header(t, pretty(f));
    box_out_write(c->out, buf, (size_t)r);
    total += r;
  }
  if (total) t->last = i;
  return total;
}

/* One poll of file i: new data printed; a regular file that shrank was
 * truncated, and is read again from its start.  -1 after a read error. */
static long long poll_one(Tail *t, size_t i)
{
  Followed *f = &t->f[i];
  bool reg = S_ISREG(f->mode), changed = !reg;
  if (reg) {
    off_t end = lseek(f->fd, 0, SEEK_END);
    if (end < 0) {
      int err = errno;
      bx_ferr(t->c, "tail", pretty(f), err);
      bx_close_in(t->c, f->fd);
      f->fd = -1;
      f->err = err;
      return 0;
    }
    changed = end != f->pos;
    if (end < f->pos) {
      g_autofree char *q = bx_quote(pretty(f));
      bx_err(t->c, "tail", "%s: file truncated", q);
      f->pos = 0;
    }
    if (changed && lseek(f->fd, f->pos, SEEK_SET) < 0) changed = false;
  }
  long long got = 0;
  if (changed) {
    got = drain(t, i);
    if (got < 0) return -1;
    if (reg) f->pos += got;
  }
  if (reg ? changed : got > 0) {
    f->unchanged = 0;
    return got;
  }
  /* a name followed is looked up again now and then: it may name
   * another file by now (a rotated log) */
  if (t->opt->by_name && t->opt->max_unchanged <= f->unchanged++) {
    recheck(t, f);
    f->unchanged = 0;
  }
  return 0;
}

static bool any_live(const Tail *t)
{
  if (t->opt->retry && t->opt->by_name) return true;
  for (size_t i = 0; i < t->n; i++)
    if (t->f[i].fd >= 0 || (!t->f[i].ignore && t->opt->retry)) return true;
  return false;
}

/* Whether the reader of the output pipe is gone (GNU's tail ends then too,
 * even when it has nothing to write). */
static bool output_gone(BoxCmd *c, bool watch)
{
  if (box_pipe_broke || c->out->error) return true;
  if (!watch) return false;
  struct pollfd p = { .fd = c->out_fd, .events = 0 };
  if (poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLHUP))) {
    if (box_in_utility) box_pipe_broke = 1; /* as if the write had raised SIGPIPE */
    return true;
  }
  return false;
}

/* Waits secs as sleep does (steps of at most 0.1 s, the run's limits
 * checked between them), also ending when the output goes.  false when
 * the command must end. */
static bool nap(BoxCmd *c, double secs, bool watch_out)
{
  gint64 end_us = g_get_monotonic_time() + (gint64)(secs > 1e12 ? 1e18 : secs * 1e6);
  for (;;) {
    if (c->sh->deadline && !box_check_limits(c->sh)) return false;
    if (output_gone(c, watch_out)) return false;
    gint64 left = end_us - g_get_monotonic_time();
    if (left <= 0) return true;
    gint64 step = MIN(left, 100000);
    struct timespec ts = { (time_t)(step / 1000000), (long)(step % 1000000) * 1000 };
    nanosleep(&ts, NULL);
  }
}

/* --pid's process: a pidfd shows its end even while it is a zombie nobody
 * has waited for yet (a job of the Shell running this one). */
static int watch_pid(pid_t pid)
{
  return pid ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
}

static bool pid_gone(pid_t pid, int pidfd)
{
  if (pidfd >= 0) {
    struct pollfd p = { .fd = pidfd, .events = POLLIN };
    return poll(&p, 1, 0) > 0;
  }
  return kill(pid, 0) != 0 && errno != EPERM;
}

/* The follow loop; the status it ends with (status so far given). */
static int follow(Tail *t, int status)
{
  BoxCmd *c = t->c;
  struct stat ost;
  bool watch_out = c->out_fd >= 0 && fstat(c->out_fd, &ost) == 0 && S_ISFIFO(ost.st_mode);
  int pidfd = watch_pid(t->opt->pid);
  bool writer_gone = t->opt->pid && pidfd < 0 && errno == ESRCH;
  bool writer_seen_gone = false;
  t->last = t->n - 1;
  for (;;) {
    bool any = false;
    for (size_t i = 0; i < t->n && !c->out->error; i++) {
      Followed *f = &t->f[i];
      if (f->ignore) continue;
      if (f->fd < 0) {
        recheck(t, f);
        continue;
      }
      long long got = poll_one(t, i);
      if (got < 0) {
        status = 1;
        goto out;
      }
      any |= got > 0;
    }
    if (!any_live(t)) {
      bx_err(c, "tail", "no files remaining");
      status = 1;
      break;
    }
    if (!box_out_flush(c->out) || output_gone(c, watch_out)) break;
    if (any) continue;
    /* the writer gone, one more look at the files before the end */
    if (writer_seen_gone) break;
    writer_seen_gone = writer_gone || (t->opt->pid && pid_gone(t->opt->pid, pidfd));
    if (!writer_seen_gone && !nap(c, t->opt->interval, watch_out)) break;
  }
out:
  if (pidfd >= 0) close(pidfd);
  return status;
}

/* ---- the command --------------------------------------------------------------------- */

/* The initial tail of one file, and its state for following: 1 when
 * tailed, 0 after an error, -1 after one that ends the command (GNU dies
 * of a failed read where it copies a file's rest: all of -c, and -n +N
 * with nothing to skip). */
static int tail_file(Tail *t, Followed *f)
{
  BoxCmd *c = t->c;
  const TailOpts *o = t->opt;
  int fd = bx_open_in(c, f->name);
  f->fd = -1;
  f->tailable = !(o->retry && fd < 0);
  if (fd < 0) {
    int err = errno;
    if (o->follow) {
      f->err = err;
      f->ignore = !o->retry;
    }
    bx_err_q(c, "tail", "cannot open %s for reading", pretty(f), err);
    return 0;
  }
  if (t->headers) header(t, pretty(f));
  bool ok = (o->o.flipped ? tail_from_start : tail_end)(c, fd, &o->o);
  if (!ok) {
    bx_err_q(c, "tail", "error reading %s", pretty(f), errno);
    if (o->o.bytes || (o->o.flipped && o->o.n <= 1)) {
      bx_close_in(c, fd);
      return -1;
    }
  }
  if (!o->follow) {
    bx_close_in(c, fd);
    return ok;
  }
  struct stat st;
  f->err = ok ? 0 : -1;
  if (fstat(fd, &st) < 0) {
    ok = false;
    f->err = errno;
    bx_err_q(c, "tail", "error reading %s", pretty(f), errno);
  } else if (!tailable_type(st.st_mode)) {
    ok = false;
    f->err = -1;
    f->tailable = false;
    g_autofree char *q = bx_quote(pretty(f));
    bx_err(c, "tail", "%s: cannot follow end of this type of file%s", q,
           o->retry ? "" : "; giving up on this name");
  }
  if (!ok) {
    f->ignore = !o->retry;
    bx_close_in(c, fd);
    return 0;
  }
  off_t pos = S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : 0;
  start_following(f, fd, &st, pos < 0 ? 0 : pos);
  return 1;
}

int box_cmd_tail(BoxCmd *c)
{
  TailOpts opt = { { false, false, 10, '\n' }, -1, false, false, false, 1.0, 0, 5 };
  int taken = obsolete_arg(c, &opt);
  if (taken < 0) return 1;
  BoxCmd cc;
  g_autofree char **av = bx_ends_argv_without(c, taken ? 1 : 0, &cc);
  cc.argv = av;
  if (!parse_options(&cc, &opt)) return 1;

  int nf;
  char **names = bx_file_operands(&cc, &nf);
  bool hyphen = false;
  for (int i = 0; i < nf; i++) hyphen |= strcmp(names[i], "-") == 0;
  if (hyphen && opt.by_name) {
    bx_err(c, "tail", "cannot follow '-' by name");
    return 1;
  }
  if (opt.follow && hyphen) {
    struct stat st;
    bool blocking = !opt.pid && !opt.by_name && nf == 1 && c->in >= 0 && fstat(c->in, &st) == 0 &&
                    !S_ISREG(st.st_mode);
    if (!blocking && c->in >= 0 && isatty(c->in))
      bx_err(c, "tail", "warning: following standard input indefinitely is ineffective");
  }
  /* nothing would be printed: GNU opens nothing either */
  if (!opt.o.n && !opt.follow && !opt.o.flipped) return 0;

  Tail t = { c, &opt, g_new0(Followed, nf), (size_t)nf, false, true, 0 };
  t.headers = opt.verbose == 1 || (opt.verbose == -1 && nf > 1);
  int status = 0;
  int fatal = 0;
  for (int i = 0; i < nf && !c->out->error && !fatal; i++) {
    t.f[i].name = names[i];
    int r = tail_file(&t, &t.f[i]);
    if (r <= 0) status = 1;
    fatal = r < 0;
  }
  if (opt.follow && !c->out->error && !fatal) {
    /* POSIX: -f means nothing for a pipe on standard input */
    size_t viable = 0;
    for (int i = 0; i < nf; i++) {
      Followed *f = &t.f[i];
      if (strcmp(f->name, "-") == 0 && !f->ignore && f->fd >= 0 && S_ISFIFO(f->mode)) {
        f->fd = -1;
        f->ignore = true;
      } else {
        viable++;
      }
    }
    if (viable) status = follow(&t, status);
  }
  for (int i = 0; i < nf; i++)
    if (t.f[i].fd >= 0) bx_close_in(c, t.f[i].fd);
  g_free(t.f);
  return status;
}
