/* shuf.c — GNU shuf: the input's lines (a file or standard input, -e's
 * operands, -i's range) in a random order; -n the first COUNT of that,
 * -r COUNT draws with repetition (no end without -n), -z NUL-ended lines.
 * Numbers are drawn as coreutils draws them (bytes appended to the number
 * until its range covers the choices, the excess kept for the next draw,
 * a swap per place, reservoir sampling for -n over a stream), so a
 * --random-source FILE gives GNU's order; without one the bytes come from
 * getrandom. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  BoxCmd *c;
  int fd; /* -1: getrandom */
  const char *name;
  uintmax_t num, max; /* unused randomness: num is uniform over 0..max */
  bool failed;
} Rand;

static bool rand_bytes(Rand *r, unsigned char *buf, size_t n)
{
  while (n) {
    ssize_t k = r->fd < 0 ? getrandom(buf, n, 0) : bx_read(r->fd, buf, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      if (!r->failed) {
        g_autofree char *q = bx_quote_always(r->name);
        if (k == 0) {
          bx_err(r->c, "shuf", "%s: end of file", q);
        } else {
          g_autofree char *t = bx_errtext(r->c, errno);
          bx_err(r->c, "shuf", "%s: read error: %s", q, t);
        }
      }
      r->failed = true;
      memset(buf, 0, n);
      return false;
    }
    buf += k;
    n -= (size_t)k;
  }
  return true;
}

/* A number in 0..choices-1; false after the source failed. */
static bool rand_choose(Rand *r, uintmax_t choices, uintmax_t *out)
{
  uintmax_t top = choices - 1;
  for (;;) {
    if (r->max < top) {
      unsigned char buf[sizeof(uintmax_t)];
      size_t n = 0;
      for (uintmax_t m = r->max; m < top; m = (m << 8) + 0xff) n++;
      if (!rand_bytes(r, buf, n)) return false;
      for (size_t i = 0; i < n; i++) {
        r->num = (r->num << 8) + buf[i];
        r->max = (r->max << 8) + 0xff;
      }
    }
    if (r->max == top) {
      *out = r->num;
      r->num = r->max = 0;
      return true;
    }
    /* take num modulo choices when it falls in a whole number of
     * choices' spans; otherwise what is left over starts again */
    uintmax_t excess = r->max - top, unusable = excess % choices;
    if (r->num <= r->max - unusable) {
      *out = r->num % choices;
      r->num /= choices;
      r->max = excess / choices;
      return true;
    }
    r->num %= choices;
    r->max = unusable - 1;
  }
}

/* The first h places of a random permutation of 0..n-1. */
static size_t *permutation(Rand *r, size_t h, size_t n)
{
  size_t *v = g_new(size_t, MAX(n, (size_t)1));
  for (size_t i = 0; i < n; i++) v[i] = i;
  for (size_t i = 0; i < h; i++) {
    uintmax_t j;
    if (!rand_choose(r, n - i, &j)) break;
    size_t t = v[i];
    v[i] = v[i + j];
    v[i + j] = t;
  }
  return v;
}

/* The records of s ended by eol (the last one given its end). */
static GPtrArray *split_records(GString *s, char eol)
{
  GPtrArray *v = g_ptr_array_new();
  if (s->len && s->str[s->len - 1] != eol) g_string_append_c(s, eol);
  for (char *p = s->str, *end = s->str + s->len; p < end;) {
    char *e = memchr(p, eol, (size_t)(end - p));
    g_ptr_array_add(v, p);
    p = e + 1;
  }
  return v;
}

/* GNU's -n over a stream: the first count lines fill the reservoir, each
 * later one replaces a random place or none (the draw made before each
 * read, the one that meets the end included). */
static GPtrArray *reservoir(Rand *r, GPtrArray *all, size_t count)
{
  GPtrArray *v = g_ptr_array_new();
  size_t n = 0;
  for (; n < count && n < all->len; n++) g_ptr_array_add(v, all->pdata[n]);
  if (n < count) return v;
  for (;; n++) {
    uintmax_t j;
    if (!rand_choose(r, n + 1, &j)) break;
    if (n >= all->len) break;
    if (j < count) v->pdata[j] = all->pdata[n];
  }
  return v;
}

static void put_record(BoxCmd *c, const char *p, char eol)
{
  const char *e = strchr(p, eol);
  bx_put(c, p, (size_t)(e - p) + 1);
}

static bool parse_range(const char *s, uintmax_t *lo, uintmax_t *hi)
{
  char *end;
  if (!g_ascii_isdigit(*s)) return false;
  errno = 0;
  *lo = strtoumax(s, &end, 10);
  if (errno || *end != '-' || !g_ascii_isdigit(end[1])) return false;
  *hi = strtoumax(end + 1, &end, 10);
  return !errno && !*end && *lo <= *hi + 1 && *hi < UINTMAX_MAX;
}

static const char longopts[] = "echo=e input-range=i: head-count=n: repeat=r random-source=\1: "
                               "zero-terminated=z";

int box_cmd_shuf(BoxCmd *c)
{
  bool echo = false, range = false, repeat = false;
  uintmax_t lo = 0, hi = 0, count = UINTMAX_MAX;
  const char *source = NULL;
  char eol = '\n';
  BX_EACH_OPTION (ch, c, "shuf", "ei:n:rz", longopts) switch (ch) {
    case 'e': echo = true; break;
    case 'r': repeat = true; break;
    case 'z': eol = 0; break;
    case 1: source = optarg; break;
    case 'i':
      if (!parse_range(optarg, &lo, &hi)) {
        bx_err_q(c, "shuf", "invalid input range: %s", optarg, 0);
        return 1;
      }
      range = true;
      break;
    case 'n': {
      char *end;
      errno = 0;
      uintmax_t v = strtoumax(optarg, &end, 10);
      if (!g_ascii_isdigit(*optarg) || *end || errno) {
        bx_err_q(c, "shuf", "invalid line count: %s", optarg, 0);
        return 1;
      }
      count = MIN(count, v);
      break;
    }
    default: return 1;
    }
  if (echo && range) {
    bx_usage(c, "shuf", "cannot combine -e and -i options");
    return 1;
  }
  /* -e's operands are its lines; -i takes none, else one input */
  if (!echo && !bx_operands_at_most(c, "shuf", range ? 0 : 1)) return 1;
  int nops = c->argc - optind;
  if (count == 0 && !repeat) return 0;
  Rand r = { .c = c, .fd = -1, .name = source };
  if (source) {
    r.fd = box_open_file(source, O_RDONLY | O_NOCTTY);
    if (r.fd < 0) {
      bx_ferr(c, "shuf", source, errno);
      return 1;
    }
  }
  int status = 1;
  g_autoptr(GString) text = g_string_new(NULL);
  GPtrArray *lines = NULL;
  size_t n;
  bool stream = false;
  if (echo) {
    for (int i = optind; i < c->argc; i++) {
      g_string_append(text, c->argv[i]);
      g_string_append_c(text, eol);
    }
    lines = split_records(text, eol);
    n = lines->len;
  } else if (range) {
    n = (size_t)(hi + 1 - lo);
  } else {
    const char *name = nops ? c->argv[optind] : "-";
    int fd = bx_open_in(c, name);
    /* GNU samples what it cannot size (a pipe) or what is over 1 MiB */
    off_t at = fd < 0 ? -1 : lseek(fd, 0, SEEK_CUR);
    off_t end = at < 0 ? -1 : lseek(fd, 0, SEEK_END);
    if (end >= 0) lseek(fd, at, SEEK_SET);
    stream = end < 0 || end - at > (1 << 20);
    if (fd < 0 || !bx_read_all(fd, text)) {
      bx_ferr(c, "shuf", name, errno);
      bx_close_in(c, fd);
      goto out;
    }
    bx_close_in(c, fd);
    lines = split_records(text, eol);
    if (count != UINTMAX_MAX && !repeat && stream) {
      GPtrArray *kept = reservoir(&r, lines, (size_t)count);
      g_ptr_array_free(lines, TRUE);
      lines = kept;
    }
    n = lines->len;
  }
  if (repeat) {
    if (n == 0) {
      bx_err(c, "shuf", "no lines to repeat");
      goto out;
    }
    for (uintmax_t i = 0; i < count && !c->out->error && !r.failed; i++) {
      uintmax_t j;
      if (!rand_choose(&r, n, &j)) break;
      if (lines)
        put_record(c, lines->pdata[j], eol);
      else
        box_out_printf(c->out, "%ju%c", lo + j, eol);
    }
  } else {
    size_t h = (size_t)MIN(count, (uintmax_t)n);
    size_t *v = permutation(&r, h, n);
    for (size_t i = 0; i < h && !r.failed; i++) {
      if (lines)
        put_record(c, lines->pdata[v[i]], eol);
      else
        box_out_printf(c->out, "%ju%c", lo + v[i], eol);
    }
    g_free(v);
  }
  status = r.failed ? 1 : 0;
out:
  if (lines) g_ptr_array_free(lines, TRUE);
  if (r.fd >= 0) close(r.fd);
  return status;
}
