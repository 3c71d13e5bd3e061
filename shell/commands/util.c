/* util.c — helpers shared by the commands (see util.h). */
#include "shell/commands/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- quoting -------------------------------------------------------------- */

static bool shell_special(unsigned char ch) {
  return strchr(" \t\n\"'\\$`*?[]{}|&;<>()#~!=^", ch) != NULL || ch < 0x20 || ch == 0x7f || ch >= 0x80;
}

static char *quote(const char *s, bool always) {
  bool special = *s == '\0', ctrl = false, squote = false;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p == 0x7f) ctrl = true;
    if (*p == '\'') squote = true;
    /* '~' and '#' matter only at the start; '=' nowhere in names GNU-wise */
    if ((*p == '~' || *p == '#') && p != (const unsigned char *)s) continue;
    if (*p == '=' || *p == '^' || *p == '{' || *p == '}' || *p >= 0x80) continue;
    if (shell_special(*p)) special = true;
  }
  if (!special && !always) return g_strdup(s);
  GString *r = g_string_new(NULL);
  if (!ctrl && squote && !strpbrk(s, "\"$`\\!")) {
    g_string_append_c(r, '"');
    g_string_append(r, s);
    g_string_append_c(r, '"');
    return g_string_free(r, FALSE);
  }
  bool open = false;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p == 0x7f) {
      if (open) { g_string_append_c(r, '\''); open = false; }
      static const char esc[] = "\a\b\f\n\r\t\v";
      static const char let[] = "abfnrtv";
      const char *e = *p ? strchr(esc, *p) : NULL;
      if (e) g_string_append_printf(r, "$'\\%c'", let[e - esc]);
      else g_string_append_printf(r, "$'\\%03o'", *p);
    } else if (*p == '\'') {
      if (open) { g_string_append_c(r, '\''); open = false; }
      g_string_append(r, "\\'");
    } else {
      if (!open) { g_string_append_c(r, '\''); open = true; }
      g_string_append_c(r, (char)*p);
    }
  }
  if (open) g_string_append_c(r, '\'');
  if (r->len == 0) g_string_append(r, "''");
  return g_string_free(r, FALSE);
}

char *bx_quote(const char *s) { return quote(s, false); }
char *bx_quote_always(const char *s) { return quote(s, true); }

char *bx_shell_quote(const char *s) {
  bool plain = *s != '\0';
  for (const char *p = s; *p; p++)
    if (!(g_ascii_isalnum(*p) || strchr("_-./=:,+@%", *p))) { plain = false; break; }
  if (plain) return g_strdup(s);
  GString *r = g_string_new("'");
  for (const char *p = s; *p; p++) {
    if (*p == '\'') g_string_append(r, "'\\''");
    else g_string_append_c(r, *p);
  }
  g_string_append_c(r, '\'');
  return g_string_free(r, FALSE);
}

/* ---- diagnostics ------------------------------------------------------------ */

void bx_err(BoxCmd *c, const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(c->out);
  box_fdprintf(c->err, "%s: %s\n", cmd, s);
  g_free(s);
}

char *bx_errtext(BoxCmd *c, int err) { return box_error_text(c->sh, err); }

void bx_ferr(BoxCmd *c, const char *cmd, const char *name, int err) {
  char *t = bx_errtext(c, err);
  char *q = bx_quote(name);
  bx_err(c, cmd, "%s: %s", q, t);
  g_free(q);
  g_free(t);
}

static const char *usage_line;

void bx_usage(BoxCmd *c, const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(c->out);
  if (usage_line) box_fdprintf(c->err, "%s: %s\n%s\nTry '%s --help' for more information.\n", cmd, s, usage_line, cmd);
  else box_fdprintf(c->err, "%s: %s\nTry '%s --help' for more information.\n", cmd, s, cmd);
  g_free(s);
}

/* ---- options ----------------------------------------------------------------- */

void bx_getopt_start(const char *usage) {
  usage_line = usage;
  optind = 0;   /* GNU: full re-initialisation */
  opterr = 0;
}

int bx_getopt(BoxCmd *c, const char *cmd, const char *shortopts, const struct option *longopts) {
  int prev = optind ? optind : 1;
  int ch = getopt_long(c->argc, c->argv, shortopts, longopts, NULL);
  if (ch != '?' && ch != ':') return ch;
  const char *arg = optind - 1 < c->argc && optind >= 1 ? c->argv[optind - 1] : "";
  if (prev < c->argc && optind > prev) arg = c->argv[optind - 1];
  if (optopt) {
    bool needs = false;
    const char *p = strchr(shortopts, optopt);
    if (p && optopt != ':') needs = p[1] == ':';
    if (strncmp(arg, "--", 2) == 0) {
      /* a long option that needs or refuses an argument */
      char *eq = strchr(arg, '=');
      if (eq) bx_usage(c, cmd, "option '%.*s' doesn't allow an argument", (int)(eq - arg), arg);
      else bx_usage(c, cmd, "option '%s' requires an argument", arg);
    } else if (needs) {
      bx_usage(c, cmd, "option requires an argument -- '%c'", optopt);
    } else {
      bx_usage(c, cmd, "invalid option -- '%c'", optopt);
    }
  } else {
    const char *eq = strchr(arg, '=');
    bool ambiguous = false;
    if (strncmp(arg, "--", 2) == 0 && longopts) {
      size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
      int hits = 0;
      for (const struct option *o = longopts; o->name; o++)
        if (strncmp(o->name, arg + 2, n) == 0) hits++;
      ambiguous = hits > 1;
      if (hits == 1 && eq) {
        for (const struct option *o = longopts; o->name; o++)
          if (strncmp(o->name, arg + 2, n) == 0 && o->has_arg == no_argument) {
            bx_usage(c, cmd, "option '--%s' doesn't allow an argument", o->name);
            return '?';
          }
      }
      if (hits == 1 && !eq) {
        for (const struct option *o = longopts; o->name; o++)
          if (strncmp(o->name, arg + 2, n) == 0) {
            bx_usage(c, cmd, "option '--%s' requires an argument", o->name);
            return '?';
          }
      }
    }
    if (ambiguous) bx_usage(c, cmd, "option '%s' is ambiguous", arg);
    else bx_usage(c, cmd, "unrecognized option '%s'", arg);
  }
  return '?';
}

/* ---- input ---------------------------------------------------------------------- */

int bx_open_in(BoxCmd *c, const char *name) {
  if (strcmp(name, "-") == 0) {
    if (c->in < 0) { errno = EBADF; return -1; }
    return c->in;
  }
  return box_open_file(name, O_RDONLY | O_NOCTTY);
}

void bx_close_in(BoxCmd *c, int fd) {
  if (fd >= 0 && fd != c->in) close(fd);
}

bool bx_read_all(int fd, GString *s) {
  for (;;) {
    size_t old = s->len;
    g_string_set_size(s, old + 65536);   /* room for one read */
    ssize_t n = read(fd, s->str + old, 65536);
    g_string_set_size(s, old + (n > 0 ? (size_t)n : 0));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
  }
}

bool bx_slurp(BoxCmd *c, const char *cmd, const char *name, GString *s) {
  int fd = bx_open_in(c, name);
  if (fd < 0) {
    bx_ferr(c, cmd, name, errno);
    return false;
  }
  bool ok = bx_read_all(fd, s);
  if (!ok) bx_ferr(c, cmd, name, errno);
  bx_close_in(c, fd);
  return ok;
}

void bx_reader_init(BxReader *r, int fd) {
  r->fd = fd;
  r->cap = 65536;
  r->buf = g_malloc(r->cap);
  r->start = r->end = 0;
  r->eof = false;
  r->err = 0;
}

void bx_reader_free(BxReader *r) {
  g_free(r->buf);
  r->buf = NULL;
}

bool bx_reader_next(BxReader *r, char delim, const char **rec, size_t *len) {
  size_t scan = r->start;
  for (;;) {
    char *d = scan < r->end ? memchr(r->buf + scan, delim, r->end - scan) : NULL;
    if (d) {
      *rec = r->buf + r->start;
      *len = (size_t)(d - (r->buf + r->start)) + 1;
      r->start += *len;
      return true;
    }
    if (r->eof || r->err) {
      if (r->end > r->start) {
        *rec = r->buf + r->start;
        *len = r->end - r->start;
        r->start = r->end;
        return true;
      }
      return false;
    }
    /* make room: move the partial record to the front, grow when full */
    size_t partial = r->end - r->start;
    if (r->start > 0) {
      memmove(r->buf, r->buf + r->start, partial);
      r->start = 0;
      r->end = partial;
    }
    scan = r->end;
    if (r->end == r->cap) {
      r->cap *= 2;
      r->buf = g_realloc(r->buf, r->cap);
    }
    ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) { r->err = errno; continue; }
    if (n == 0) { r->eof = true; continue; }
    r->end += (size_t)n;
  }
}

/* ---- numbers ------------------------------------------------------------------- */

bool bx_parse_size(const char *s, unsigned long long *out) {
  if (!*s || !g_ascii_isdigit(*s)) return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno) { *out = ~0ULL; return true; }
  if (*end) {
    static const char units[] = "KMGTPEZY";
    unsigned long long mul = 1;
    if (strcmp(end, "b") == 0) mul = 512;
    else if (strcmp(end, "c") == 0) mul = 1;
    else if (strcmp(end, "w") == 0) mul = 2;
    else {
      const char *u = strchr(units, g_ascii_toupper(end[0]));
      if (!u || (end[0] == 'k' && 0)) return false;
      int power = (int)(u - units) + 1;
      unsigned long long base;
      if (end[1] == '\0' || strcmp(end + 1, "iB") == 0) base = 1024;
      else if (strcmp(end + 1, "B") == 0) base = 1000;
      else return false;
      if (end[0] == 'k' && end[1] == '\0') base = 1024;
      else if (g_ascii_islower(end[0]) && end[0] != 'k') return false;
      for (int i = 0; i < power; i++) mul *= base;
    }
    if (v && mul > ~0ULL / v) v = ~0ULL;
    else v *= mul;
  }
  *out = v;
  return true;
}

char *bx_path_join(const char *dir, const char *name) {
  size_t n = strlen(dir);
  if (n && dir[n - 1] == '/') return g_strconcat(dir, name, NULL);
  return g_strconcat(dir, "/", name, NULL);
}

/* ---- running nested commands ------------------------------------------------------ */

int bx_run_argv(BoxCmd *c, char **argv, int argc, int in, int out, int err) {
  /* argv must be NULL-terminated (argv[argc] == NULL) */
  (void)argc;
  box_out_flush(c->out);
  return box_run_argv(c->sh, argv, in, out, err);
}

/* ---- modes ---------------------------------------------------------------------------------- */

bool bx_parse_mode(const char *s, mode_t cur, bool is_dir, mode_t *out) {
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
          case 'X': if (is_dir || (m & 0111)) bits |= 0111; break;
          case 's': bits |= 06000; break;
          case 't': bits |= 01000; break;
          }
        }
      }
      mode_t mask = who & (explicit_who ? 07777 : ~um & 07777);
      if (!explicit_who) mask |= bits & 06000 ? 0 : 0;
      bits &= explicit_who ? who : (who & ~um);
      if (op == '+') m |= bits;
      else if (op == '-') m &= ~bits;
      else {
        mode_t clear = explicit_who ? who : 07777;
        m = (m & ~(clear & 07777 & ~(is_dir ? 06000 : 0))) | bits;
        (void)mask;
      }
    }
    if (*p == ',') { p++; continue; }
    if (*p) return false;
    break;
  }
  *out = m;
  return true;
}

/* ---- directories ------------------------------------------------------------------------------ */

struct bx_dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

GArray *bx_list_dir(const char *path, int *err) {
  int fd = box_open_file(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) { *err = errno; return NULL; }
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
    for (long off = 0; off < n;) {
      struct bx_dirent64 *d = (struct bx_dirent64 *)(buf + off);
      off += d->d_reclen;
      if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..")) continue;
      BxDirEnt e = { g_strdup(d->d_name), (unsigned long long)d->d_ino, d->d_type };
      g_array_append_val(v, e);
    }
  }
  close(fd);
  *err = 0;
  return v;
}

void bx_dir_free(GArray *v) {
  if (!v) return;
  for (guint i = 0; i < v->len; i++) g_free(g_array_index(v, BxDirEnt, i).name);
  g_array_free(v, TRUE);
}
