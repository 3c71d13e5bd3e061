/* split.c — GNU split: INPUT (standard input) into PREFIX (x) followed by
 * a suffix, by -l lines (1000), -b bytes or -n chunks (N, K/N, l/N, l/K/N,
 * r/N, r/K/N; K alone goes to standard output; -e leaves empty ones out);
 * -a the suffix length, -d/-x digits, --additional-suffix.  Without -a
 * the suffix widens as GNU's does (xyz, then xzaaa) except for -n, whose
 * suffix is as long as the chunk count needs.  Each output file is opened
 * through the mount, a decision of its own. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  BoxCmd *c;
  const char *prefix, *extra, *digits;
  size_t width;
  bool widen, elide;
  unsigned long long made; /* files named so far */
  int fd;
  bool failed;
} Out;

/* The name of the next file; NULL (after the message) past the last. */
static char *next_name(Out *o)
{
  size_t base = strlen(o->digits), width = o->width;
  unsigned long long k = o->made++;
  GString *s = g_string_new(o->prefix);
  if (o->widen) {
    /* each stage fixes one more last letter and grows by one */
    for (;;) {
      unsigned long long n = base - 1;
      for (size_t i = 1; i < width; i++) n *= base;
      if (k < n) break;
      k -= n;
      g_string_append_c(s, o->digits[base - 1]);
      width++;
    }
  }
  char *tail = g_malloc(width + 1);
  tail[width] = 0;
  for (size_t i = width; i > 0; i--, k /= base) tail[i - 1] = o->digits[k % base];
  if (k) {
    g_free(tail);
    g_string_free(s, TRUE);
    bx_err(o->c, "split", "output file suffixes exhausted");
    return NULL;
  }
  g_string_append(s, tail);
  g_string_append(s, o->extra);
  g_free(tail);
  return g_string_free(s, FALSE);
}

/* Closes the file being written and opens the next. */
static bool next_file(Out *o)
{
  if (o->fd >= 0) close(o->fd);
  o->fd = -1;
  g_autofree char *name = next_name(o);
  if (!name) return false;
  o->fd = box_open_file(name, O_WRONLY | O_CREAT | O_TRUNC);
  if (o->fd < 0) bx_ferr(o->c, "split", name, errno);
  return o->fd >= 0;
}

static bool put(Out *o, const char *p, size_t n)
{
  if (box_write_all(o->fd, p, n)) return true;
  g_autofree char *t = bx_errtext(o->c, errno);
  bx_err(o->c, "split", "write error: %s", t);
  return false;
}

/* -l and -b: a new file every `every` lines or bytes. */
static bool split_even(Out *o, const GString *s, unsigned long long every, bool lines)
{
  size_t at = 0;
  while (at < s->len) {
    size_t end = at;
    if (lines) {
      for (unsigned long long k = 0; k < every && end < s->len; k++) {
        const char *nl = memchr(s->str + end, '\n', s->len - end);
        end = nl ? (size_t)(nl - s->str) + 1 : s->len;
      }
    } else {
      end = at + (size_t)MIN(every, (unsigned long long)(s->len - at));
    }
    if (!next_file(o) || !put(o, s->str + at, end - at)) return false;
    at = end;
  }
  return true;
}

/* The bounds of the n chunks of s (n + 1 offsets): bytes evenly, the last
 * taking the rest; with lines, each chunk runs on to the end of the line
 * holding its last byte. */
static size_t *chunk_bounds(const GString *s, unsigned long long n, bool lines)
{
  /* more chunks than bytes: one byte each while they last */
  size_t *b = g_new0(size_t, n + 1), size = MAX(s->len / n, (size_t)1), at = 0;
  for (unsigned long long k = 1; k <= n; k++) {
    size_t end = k == n ? s->len : (size_t)MIN(k * size, (unsigned long long)s->len);
    if (lines && k < n && end > 0 && end > at) {
      const char *nl = memchr(s->str + end - 1, '\n', s->len - (end - 1));
      end = nl ? (size_t)(nl - s->str) + 1 : s->len;
    }
    at = MAX(at, end);
    b[k] = at;
  }
  return b;
}

/* The chunks: into the files, or chunk `only` (1-based) to stdout. */
static bool split_chunks(Out *o, const GString *s, unsigned long long n, char kind,
                         unsigned long long only)
{
  if (kind == 'r') {
    GPtrArray *parts = g_ptr_array_new();
    for (unsigned long long k = 0; k < n; k++) g_ptr_array_add(parts, g_string_new(NULL));
    unsigned long long i = 0;
    for (size_t at = 0; at < s->len; i++) {
      const char *nl = memchr(s->str + at, '\n', s->len - at);
      size_t end = nl ? (size_t)(nl - s->str) + 1 : s->len;
      g_string_append_len(parts->pdata[i % n], s->str + at, (gssize)(end - at));
      at = end;
    }
    bool ok = true;
    for (unsigned long long k = 0; k < n && ok; k++) {
      GString *p = parts->pdata[k];
      if (only)
        ok = k + 1 != only || (bx_put(o->c, p->str, p->len), true);
      else if (p->len || !o->elide)
        ok = next_file(o) && put(o, p->str, p->len);
    }
    for (guint k = 0; k < parts->len; k++) g_string_free(parts->pdata[k], TRUE);
    g_ptr_array_free(parts, TRUE);
    return ok;
  }
  size_t *b = chunk_bounds(s, n, kind == 'l');
  bool ok = true;
  for (unsigned long long k = 1; k <= n && ok; k++) {
    size_t len = b[k] - b[k - 1];
    if (only)
      ok = k != only || (bx_put(o->c, s->str + b[k - 1], len), true);
    else if (len || !o->elide)
      ok = next_file(o) && put(o, s->str + b[k - 1], len);
  }
  g_free(b);
  return ok;
}

/* GNU calls 0 out of range, and gives no reason for what is no number */
static void bad_number(BoxCmd *c, const char *what, const char *v, bool number)
{
  g_autofree char *q = bx_quote_always(v);
  g_autofree char *t = bx_errtext(c, ERANGE);
  bx_err(c, "split", "invalid %s: %s%s%s", what, q, number ? ": " : "", number ? t : "");
}

static bool count_arg(BoxCmd *c, const char *what, const char *v, unsigned long long *out)
{
  bool number = bx_parse_size(v, out);
  if (number && *out > 0) return true;
  bad_number(c, what, v, number);
  return false;
}

/* -n's argument: [l/|r/][K/]N. */
static bool chunk_arg(BoxCmd *c, const char *v, char *kind, unsigned long long *k,
                      unsigned long long *n)
{
  *kind = 0;
  if ((v[0] == 'l' || v[0] == 'r') && v[1] == '/') {
    *kind = v[0];
    v += 2;
  }
  const char *slash = strchr(v, '/');
  if (slash) {
    g_autofree char *first = g_strndup(v, (size_t)(slash - v));
    if (!count_arg(c, "number of chunks", slash + 1, n)) return false;
    bool number = bx_parse_size(first, k);
    if (!number || *k == 0 || *k > *n) {
      bad_number(c, "chunk number", first, number);
      return false;
    }
    return true;
  }
  *k = 0;
  return count_arg(c, "number of chunks", v, n);
}

static const char longopts[] =
  "lines=l: bytes=b: number=n: suffix-length=a: numeric-suffixes=d hex-suffixes=x "
  "additional-suffix=\1: elide-empty-files=e";

int box_cmd_split(BoxCmd *c)
{
  Out o = { .c = c,
            .prefix = "x",
            .extra = "",
            .digits = "abcdefghijklmnopqrstuvwxyz",
            .width = 2,
            .widen = true,
            .fd = -1 };
  char how = 0, kind = 0;
  unsigned long long every = 1000, chunks = 0, only = 0;
  BX_EACH_OPTION (ch, c, "split", "l:b:n:a:dxe", longopts) {
    char was = how;
    switch (ch) {
    case 'l':
      how = 'l';
      if (!count_arg(c, "number of lines", optarg, &every)) return 1;
      break;
    case 'b':
      how = 'b';
      if (!count_arg(c, "number of bytes", optarg, &every)) return 1;
      break;
    case 'n':
      how = 'n';
      if (!chunk_arg(c, optarg, &kind, &only, &chunks)) return 1;
      break;
    case 'a': {
      unsigned long long w;
      if (!bx_parse_size(optarg, &w)) {
        bx_err_q(c, "split", "invalid suffix length: %s", optarg, 0);
        return 1;
      }
      /* 0 is GNU's default, widening included */
      o.width = w ? (size_t)w : 2;
      o.widen = w == 0;
      break;
    }
    case 'd': o.digits = "0123456789"; break;
    case 'x': o.digits = "0123456789abcdef"; break;
    case 'e': o.elide = true; break;
    case 1: o.extra = optarg; break;
    default: return 1;
    }
    if (was && how != was) {
      bx_usage(c, "split", "cannot split in more than one way");
      return 1;
    }
  }
  if (!bx_operands_at_most(c, "split", 2)) return 1;
  int nops = c->argc - optind;
  const char *name = nops ? c->argv[optind] : "-";
  if (nops > 1) o.prefix = c->argv[optind + 1];
  if (how == 'n') {
    /* the suffix long enough for every chunk, fixed */
    size_t need = 1;
    for (unsigned long long m = strlen(o.digits); m < chunks; m *= strlen(o.digits)) need++;
    if (o.widen) o.width = MAX(o.width, need);
    o.widen = false;
  }
  g_autoptr(GString) s = g_string_new(NULL);
  int fd = bx_open_in(c, name);
  if (fd < 0 || !bx_read_all(fd, s)) {
    bx_err_q(c, "split", "cannot open %s for reading", name, errno);
    bx_close_in(c, fd);
    return 1;
  }
  /* GNU sizes the input first, which a pipe cannot tell */
  if (how == 'n' && kind != 'r' && lseek(fd, 0, SEEK_CUR) < 0) {
    bx_close_in(c, fd);
    bx_err(c, "split", "%s: cannot determine file size", name);
    return 1;
  }
  bx_close_in(c, fd);
  bool ok =
    how == 'n' ? split_chunks(&o, s, chunks, kind, only) : split_even(&o, s, every, how != 'b');
  if (o.fd >= 0) close(o.fd);
  return ok ? 0 : 1;
}
