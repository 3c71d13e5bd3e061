/* xargs.c — GNU xargs: builds command lines from input and runs each through
 * the Shell's decision point (box_run_argv): its own shell:exec /
 * shell:spawn decision per command.  -0 -d -n -L -I/-i -r -s -t -x -E -a
 * -P (commands run one at a time), GNU quote processing. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  BoxCmd *c;
  int fd;
  char buf[65536];
  size_t len, pos;
  bool eof;
  int delim;  /* -1: blanks and quotes; else the delimiter byte */
  bool lines; /* -I: an item is a line */
  const char *eofstr;
  bool hit_eof_str;
} XIn;

static int getb(XIn *x)
{
  if (x->pos < x->len) return (unsigned char)x->buf[x->pos++];
  if (x->eof) return -1;
  for (;;) {
    ssize_t r = bx_read(x->fd, x->buf, sizeof x->buf);
    if (r <= 0) {
      x->eof = true;
      return -1;
    }
    x->len = (size_t)r;
    x->pos = 1;
    return (unsigned char)x->buf[0];
  }
}

static int peekb(XIn *x)
{
  int ch = getb(x);
  if (ch >= 0) x->pos--;
  return ch;
}

/* 1: an item (in *out; *eol when it ended a logical line), 0: end, -1: error */
static int next_item(XIn *x, GString *out, bool *eol)
{
  g_string_truncate(out, 0);
  *eol = false;
  if (x->hit_eof_str) return 0;
  int ch;
  if (x->delim >= 0) {
    bool any = false;
    while ((ch = getb(x)) >= 0) {
      any = true;
      if (ch == x->delim) {
        *eol = true;
        return 1;
      }
      g_string_append_c(out, (char)ch);
    }
    return any && out->len > 0 ? 1 : 0;
  }
  /* skip blanks */
  for (;;) {
    ch = getb(x);
    if (ch < 0) return 0;
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r') continue;
    break;
  }
  bool any = false;
  for (; ch >= 0; ch = getb(x)) {
    if (ch == '\n') {
      *eol = true;
      break;
    }
    if (!x->lines && (ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\r')) {
      /* -L: a line ending in blanks continues on the next line */
      int nx;
      while ((nx = peekb(x)) == ' ' || nx == '\t') getb(x);
      if (nx == '\n') {
        getb(x);
      } else if (nx < 0)
        *eol = true;
      break;
    }
    if (ch == '\'' || ch == '"') {
      int q = ch;
      for (;;) {
        ch = getb(x);
        if (ch < 0 || ch == '\n') {
          bx_err(x->c, "xargs",
                 "unmatched %s quote; by default quotes are special to xargs unless you use the -0 "
                 "option",
                 q == '\'' ? "single" : "double");
          return -1;
        }
        if (ch == q) break;
        g_string_append_c(out, (char)ch);
      }
      any = true;
      continue;
    }
    if (ch == '\\') {
      ch = getb(x);
      if (ch < 0) break;
    }
    g_string_append_c(out, (char)ch);
    any = true;
  }
  if (x->eofstr && !strcmp(out->str, x->eofstr)) {
    x->hit_eof_str = true;
    return 0;
  }
  (void)any;
  return 1;
}

static int parse_delim(BoxCmd *c, const char *s)
{
  if (s[0] && !s[1]) return (unsigned char)s[0];
  if (s[0] == '\\') {
    /* the escapes that stand alone: \n \t \0 \\ \a \r */
    static const char names[] = "nt0\\ar", codes[] = "\n\t\0\\\a\r";
    const char *k = s[1] ? strchr(names, s[1]) : NULL;
    if (k) {
      if (!s[2]) return (unsigned char)codes[k - names];
    } else if (s[1] == 'x') {
      char *end;
      long v = strtol(s + 2, &end, 16);
      if (!*end && v < 256) return (int)v;
    } else if (g_ascii_isdigit(s[1])) {
      char *end;
      long v = strtol(s + 1, &end, 8);
      if (!*end && v < 256) return (int)v;
    }
  }
  bx_err_q(c, "xargs",
           "invalid input delimiter specification %s: the delimiter must be either a single "
           "character or an escape sequence starting with \\.",
           s, 0);
  return -2;
}

typedef struct {
  BoxCmd *c;
  bool trace;
  int status;
  int devnull;
  bool stop;
} XRun;

static void run(XRun *r, GPtrArray *argv)
{
  g_ptr_array_add(argv, NULL);
  if (r->trace) {
    GString *s = g_string_new(NULL);
    for (guint i = 0; i + 1 < argv->len; i++) {
      char *q = bx_shell_quote(argv->pdata[i]);
      if (i) g_string_append_c(s, ' ');
      g_string_append(s, q);
      g_free(q);
    }
    g_string_append_c(s, '\n');
    box_out_flush(r->c->out);
    box_write_all(r->c->err, s->str, s->len);
    g_string_free(s, TRUE);
  }
  int rc = bx_run_argv(r->c, (char **)argv->pdata, (int)argv->len - 1, r->devnull, r->c->out_fd,
                       r->c->err);
  g_ptr_array_remove_index(argv, argv->len - 1);
  if (rc == 255) {
    bx_err(r->c, "xargs", "%s: exited with status 255; aborting", (char *)argv->pdata[0]);
    r->status = 124;
    r->stop = true;
  } else if (rc == 126 || rc == 127) {
    r->status = rc;
    r->stop = true;
  } else if (rc > 128) {
    r->status = 125;
    r->stop = true;
  } else if (rc != 0 && r->status == 0) {
    r->status = 123;
  }
}

static const char longopts[] =
  "null=0 delimiter=d: max-args=n: max-lines=l:: replace=i:: no-run-if-empty=r max-chars=s: "
  "verbose=t exit=x "
  "eof=e:: arg-file=a: max-procs=P: interactive=p open-tty=o process-slot-var=S:";

static bool parse_pos(BoxCmd *c, const char *v, char opt, long min, long *out)
{
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (!*v || *end || errno) {
    bx_usage(c, "xargs", "invalid number \"%s\" for -%c option", v, opt);
    return false;
  }
  if (n < min) {
    bx_usage(c, "xargs", "value %s for -%c option should be >= %ld", v, opt, min);
    return false;
  }
  *out = n;
  return true;
}

/* -I: one command per input item, REPLACE in each argument replaced by it. */
static void run_replacing(XRun *r, XIn *x, const GPtrArray *base, const char *replace,
                          GString *item, GPtrArray *argv)
{
  bool eol;
  int k = 0;
  size_t rl = strlen(replace);
  while (!r->stop && (k = next_item(x, item, &eol)) == 1) {
    g_ptr_array_set_size(argv, 0);
    for (guint i = 0; i < base->len; i++) {
      const char *a = base->pdata[i];
      GString *s = g_string_new(NULL);
      for (const char *p = a; *p;) {
        if (!strncmp(p, replace, rl)) {
          g_string_append_len(s, item->str, item->len);
          p += rl;
        } else
          g_string_append_c(s, *p++);
      }
      g_ptr_array_add(argv, g_string_free(s, FALSE));
    }
    run(r, argv);
  }
  if (k < 0) r->status = 1;
}

int box_cmd_xargs(BoxCmd *c)
{
  long max_args = 0, max_lines = 0, max_chars = 131072 - 2048;
  const char *replace = NULL, *eofstr = NULL, *argfile = NULL;
  bool no_empty = false, trace = false, exit_big = false;
  int delim = -1;
  BX_EACH_OPTION (ch, c, "xargs", "+0d:n:L:l::I:i::rs:txE:e::a:P:poS:", longopts) {
    long v;
    switch (ch) {
    case '0': delim = 0; break;
    case 'd':
      delim = parse_delim(c, optarg);
      if (delim == -2) return 1;
      break;
    case 'n':
      if (!parse_pos(c, optarg, 'n', 1, &max_args)) return 1;
      max_lines = 0;
      break;
    case 'L':
      if (!parse_pos(c, optarg, 'L', 1, &max_lines)) return 1;
      max_args = 0;
      break;
    case 'l':
      max_lines = optarg ? atol(optarg) : 1;
      if (max_lines < 1) max_lines = 1;
      break;
    case 'I': replace = optarg; break;
    case 'i': replace = optarg ? optarg : "{}"; break;
    case 'r': no_empty = true; break;
    case 's':
      if (!parse_pos(c, optarg, 's', 1, &max_chars)) return 1;
      break;
    case 't': trace = true; break;
    case 'x': exit_big = true; break;
    case 'E': eofstr = optarg; break;
    case 'e': eofstr = optarg; break;
    case 'a': argfile = optarg; break;
    case 'P':
      if (!parse_pos(c, optarg, 'P', 0, &v)) return 1;
      break;
    case 'p':
    case 'o':
    case 'S': break;
    default: return 1;
    }
  }
  if (replace && !*replace) replace = NULL;
  XRun r = { c, trace, 0, -1, false };
  XIn *x = g_new0(XIn, 1);
  x->c = c;
  x->delim = delim;
  x->lines = replace != NULL && delim < 0;
  x->eofstr = eofstr;
  if (argfile) {
    x->fd = bx_open_in(c, argfile);
    if (x->fd < 0) {
      bx_err_q(c, "xargs", "Cannot open input file %s", argfile, errno);
      g_free(x);
      return 1;
    }
    r.devnull = c->in;
  } else {
    x->fd = c->in;
    r.devnull = box_open_file("/dev/null", O_RDONLY);
  }
  GPtrArray *base = g_ptr_array_new();
  if (optind < c->argc)
    for (int i = optind; i < c->argc; i++) g_ptr_array_add(base, c->argv[i]);
  else
    g_ptr_array_add(base, (gpointer) "echo");
  size_t base_len = 0;
  for (guint i = 0; i < base->len; i++) base_len += strlen(base->pdata[i]) + 1;
  if (base_len > (size_t)max_chars && !replace) {
    bx_err(c, "xargs", "argument list too long");
    r.status = 1;
    goto out;
  }
  GString *item = g_string_new(NULL);
  GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
  bool ran = false;
  if (replace) {
    run_replacing(&r, x, base, replace, item, argv);
  } else {
    bool eol;
    int k = 0;
    bool done = false;
    while (!done && !r.stop) {
      g_ptr_array_set_size(argv, 0);
      for (guint i = 0; i < base->len; i++) g_ptr_array_add(argv, g_strdup(base->pdata[i]));
      size_t len = base_len;
      long nargs = 0, nlines = 0;
      static GString *pending;
      if (!pending) pending = g_string_new(NULL);
      bool have_pending = false;
      for (;;) {
        k = next_item(x, item, &eol);
        if (k <= 0) {
          done = true;
          break;
        }
        if (len + item->len + 1 > (size_t)max_chars) {
          if (nargs == 0 || exit_big) {
            bx_err(c, "xargs", "argument line too long");
            r.status = 1;
            done = true;
            r.stop = true;
            break;
          }
          /* too long: this item starts the next command */
          g_string_assign(pending, item->str);
          have_pending = true;
          break;
        }
        g_ptr_array_add(argv, g_strdup(item->str));
        len += item->len + 1;
        nargs++;
        if (eol) nlines++;
        if (max_args && nargs >= max_args) break;
        if (max_lines && nlines >= max_lines) break;
      }
      if (r.stop && r.status == 1) break;
      if (nargs > 0 || (!ran && !no_empty && done && k == 0)) {
        run(&r, argv);
        ran = true;
      }
      if (have_pending) {
        /* put the item back: run it first in the next round */
        g_ptr_array_set_size(argv, 0);
        GString *save = g_string_new(pending->str);
        /* simple approach: prepend by running the loop with a carried item */
        for (guint i = 0; i < base->len; i++) g_ptr_array_add(argv, g_strdup(base->pdata[i]));
        g_ptr_array_add(argv, g_string_free(save, FALSE));
        len = base_len + strlen(pending->str) + 1;
        nargs = 1;
        while (!r.stop) {
          k = next_item(x, item, &eol);
          if (k <= 0) {
            done = true;
            break;
          }
          if (len + item->len + 1 > (size_t)max_chars) {
            run(&r, argv);
            g_ptr_array_set_size(argv, 0);
            for (guint i = 0; i < base->len; i++) g_ptr_array_add(argv, g_strdup(base->pdata[i]));
            len = base_len;
            nargs = 0;
          }
          g_ptr_array_add(argv, g_strdup(item->str));
          len += item->len + 1;
          nargs++;
          if (max_args && nargs >= max_args) {
            run(&r, argv);
            g_ptr_array_set_size(argv, 0);
            for (guint i = 0; i < base->len; i++) g_ptr_array_add(argv, g_strdup(base->pdata[i]));
            len = base_len;
            nargs = 0;
          }
        }
        if (nargs > 0 && !r.stop) run(&r, argv);
        done = true;
      }
      if (k < 0) {
        r.status = 1;
        break;
      }
    }
  }
  g_string_free(item, TRUE);
  g_ptr_array_free(argv, TRUE);
out:
  if (!argfile && r.devnull >= 0) close(r.devnull);
  if (argfile) bx_close_in(c, x->fd);
  g_ptr_array_free(base, TRUE);
  g_free(x);
  return r.status;
}
