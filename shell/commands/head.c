/* head.c — GNU head: -n/-c with N or -N (all but the last N), -q, -v, -NUM. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/util.h"

typedef struct {
  bool bytes, all_but;
  unsigned long long n;
  char delim;
} HeadOpt;

/* Copies the first n records (or bytes). */
static bool head_first(BoxCmd *c, int fd, const HeadOpt *o) {
  char buf[65536];
  unsigned long long left = o->n;
  while (left > 0) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) break;
    size_t take = (size_t)r;
    if (o->bytes) {
      if (take > left) take = (size_t)left;
      left -= take;
    } else {
      size_t i = 0;
      while (i < take && left > 0) {
        const char *nl = memchr(buf + i, o->delim, take - i);
        if (!nl) { i = take; break; }
        i = (size_t)(nl - buf) + 1;
        left--;
      }
      take = i;
    }
    box_out_write(c->out, buf, take);
    if (c->out->error) break;
  }
  return true;
}

/* All but the last n records (or bytes): hold back a window. */
static bool head_all_but(BoxCmd *c, int fd, const HeadOpt *o) {
  GString *data = g_string_new(NULL);
  if (o->bytes) {
    char buf[65536];
    for (;;) {
      ssize_t r = read(fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) { g_string_free(data, TRUE); return false; }
      if (r == 0) break;
      g_string_append_len(data, buf, r);
      if (data->len > o->n + 65536) {
        size_t out = data->len - o->n;
        box_out_write(c->out, data->str, out);
        g_string_erase(data, 0, (gssize)out);
      }
    }
    if (data->len > o->n) box_out_write(c->out, data->str, data->len - o->n);
    g_string_free(data, TRUE);
    return true;
  }
  /* lines: keep the last n lines in a queue of offsets */
  BxReader r;
  bx_reader_init(&r, fd);
  GQueue q = G_QUEUE_INIT;
  const char *rec;
  size_t len;
  while (bx_reader_next(&r, o->delim, &rec, &len)) {
    g_queue_push_tail(&q, g_bytes_new(rec, len));
    if (q.length > o->n) {
      GBytes *b = g_queue_pop_head(&q);
      gsize bl;
      const void *bd = g_bytes_get_data(b, &bl);
      box_out_write(c->out, bd, bl);
      g_bytes_unref(b);
    }
  }
  g_queue_clear_full(&q, (GDestroyNotify)g_bytes_unref);
  int err = r.err;
  bx_reader_free(&r);
  g_string_free(data, TRUE);
  if (err) { errno = err; return false; }
  return true;
}

static bool parse_count(BoxCmd *c, const char *v, HeadOpt *o) {
  const char *s = v;
  o->all_but = false;
  if (*s == '-') { o->all_but = true; s++; }
  else if (*s == '+') s++;
  if (!bx_parse_size(s, &o->n)) {
    bx_err(c, "head", "invalid number of %s: '%s'", o->bytes ? "bytes" : "lines", v);
    return false;
  }
  return true;
}

static const char longopts[] = "lines=n: bytes=c: quiet=q silent=q verbose=v zero-terminated=z";

static int run(BoxCmd *c, HeadOpt *op, int verbose, const char *count);

int box_cmd_head(BoxCmd *c) {
  HeadOpt o = { false, false, 10, '\n' };
  int verbose = -1;
  const char *count = NULL;
  bool skip_first = false;
  /* obsolete -NUM[bkmlcq...] as the first argument */
  if (c->argc > 1 && c->argv[1][0] == '-' && g_ascii_isdigit(c->argv[1][1])) {
    static char nbuf[64];
    const char *a = c->argv[1] + 1;
    size_t k = strspn(a, "0123456789");
    g_strlcpy(nbuf, a, MIN(k + 1, sizeof nbuf));
    count = nbuf;
    for (const char *p = a + k; *p; p++) {
      if (*p == 'c') o.bytes = true;
      else if (*p == 'l') o.bytes = false;
      else if (*p == 'q') verbose = 0;
      else if (*p == 'v') verbose = 1;
    }
    skip_first = true;
  }
  /* getopt works on a copy of argv without the consumed -NUM */
  char **av = g_new0(char *, c->argc + 1);
  int ac = 0;
  for (int i = 0; i < c->argc; i++)
    if (!(skip_first && i == 1)) av[ac++] = c->argv[i];
  BoxCmd cc = *c;
  cc.argc = ac;
  cc.argv = av;
  int rc = run(&cc, &o, verbose, count);
  g_free(av);
  return rc;
}

static int run(BoxCmd *c, HeadOpt *op, int verbose, const char *count) {
  HeadOpt o = *op;
  BX_EACH_OPTION(ch, c, "head", "n:c:qvz", longopts) switch (ch) {
  case 'n': o.bytes = false; count = optarg; break;
  case 'c': o.bytes = true; count = optarg; break;
  case 'q': verbose = 0; break;
  case 'v': verbose = 1; break;
  case 'z': o.delim = '\0'; break;
  default: return 1;
  }
  if (count && !parse_count(c, count, &o)) return 1;
  int nf = c->argc - optind;
  char *dash[] = { (char *)"-" };
  char **files = nf ? c->argv + optind : dash;
  if (!nf) nf = 1;
  bool headers = verbose == 1 || (verbose == -1 && nf > 1);
  int status = 0;
  bool first = true;
  for (int i = 0; i < nf; i++) {
    const char *name = files[i];
    int fd = bx_open_in(c, name);
    if (fd < 0) {
      char *t = bx_errtext(c, errno), *q = bx_quote_always(name);
      bx_err(c, "head", "cannot open %s for reading: %s", q, t);
      g_free(t); g_free(q);
      status = 1;
      continue;
    }
    if (headers) {
      box_out_printf(c->out, "%s==> %s <==\n", first ? "" : "\n",
                     strcmp(name, "-") == 0 ? "standard input" : name);
    }
    first = false;
    bool ok = o.all_but ? head_all_but(c, fd, &o) : head_first(c, fd, &o);
    if (!ok) {
      char *t = bx_errtext(c, errno), *q = bx_quote_always(name);
      bx_err(c, "head", "error reading %s: %s", q, t);
      g_free(t); g_free(q);
      status = 1;
    }
    bx_close_in(c, fd);
    if (c->out->error) break;
  }
  return status;
}
