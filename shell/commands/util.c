/* util.c — helpers shared by the commands (see util.h). */
#include "shell/commands/util.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <time.h>
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
  g_autofree char *t = bx_errtext(c, err);
  g_autofree char *q = bx_quote(name);
  bx_err(c, cmd, "%s: %s", q, t);
}

static const char *usage_line;
static bool try_prefixed;

void bx_usage(BoxCmd *c, const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(c->out);
  if (try_prefixed) box_fdprintf(c->err, "%s: %s\n%s: Try '%s --help' for more information.\n", cmd, s, cmd, cmd);
  else if (usage_line) box_fdprintf(c->err, "%s: %s\n%s\nTry '%s --help' for more information.\n", cmd, s, usage_line, cmd);
  else box_fdprintf(c->err, "%s: %s\nTry '%s --help' for more information.\n", cmd, s, cmd);
  g_free(s);
}

void bx_err_q(BoxCmd *c, const char *cmd, const char *fmt, const char *name, int err) {
  g_autofree char *t = err ? bx_errtext(c, err) : NULL;
  g_autofree char *q = bx_quote_always(name);
  g_autofree char *m = g_strdup_printf(fmt, q);
  if (t) bx_err(c, cmd, "%s: %s", m, t);
  else bx_err(c, cmd, "%s", m);
}

void bx_usage_q(BoxCmd *c, const char *cmd, const char *fmt, const char *name) {
  g_autofree char *q = bx_quote_always(name);
  g_autofree char *m = g_strdup_printf(fmt, q);
  bx_usage(c, cmd, "%s", m);
}

bool bx_move_operands_ok(BoxCmd *c, const char *cmd, int n, char **args, const char *target_dir, bool no_target) {
  if (n == 0) {
    bx_usage(c, cmd, "missing file operand");
    return false;
  }
  if (!target_dir && n == 1) {
    bx_usage_q(c, cmd, "missing destination file operand after %s", args[0]);
    return false;
  }
  if (no_target && (target_dir || n > 2)) {
    bx_usage_q(c, cmd, "extra operand %s", args[2]);
    return false;
  }
  return true;
}

/* ---- options ----------------------------------------------------------------- */

void bx_getopt_start(const char *usage) {
  usage_line = usage;
  try_prefixed = false;
  optind = 0;   /* GNU: full re-initialisation */
  opterr = 0;
}

/* getopt_long's table from a command's long-option string.  Built anew at
 * each call: getopt_long keeps no pointer into it between calls, and a
 * command's parse is over before another command parses (xargs and find
 * run theirs after their own options). */
static const struct option *long_table(const char *spec) {
  static struct option tab[64];
  static char names[1024];
  size_t n = 0, used = 0;
  for (const char *p = spec; *p;) {
    while (*p == ' ') p++;
    const char *eq = strchr(p, '=');
    if (!*p || !eq) break;
    size_t len = (size_t)(eq - p);
    g_assert(n + 1 < G_N_ELEMENTS(tab) && used + len + 1 <= sizeof names);
    memcpy(names + used, p, len);
    names[used + len] = '\0';
    int colons = (eq[2] == ':') + (eq[2] == ':' && eq[3] == ':');
    tab[n++] = (struct option){ names + used, colons == 0 ? no_argument : colons == 1 ? required_argument : optional_argument, NULL, (unsigned char)eq[1] };
    used += len + 1;
    p = eq + 2 + colons;
  }
  tab[n] = (struct option){ NULL, 0, NULL, 0 };
  return tab;
}

int bx_getopt(BoxCmd *c, const char *cmd, const char *shortopts, const char *longspec) {
  const struct option *longopts = long_table(longspec);
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

void bx_getopt_start_try_prefixed(void) {
  bx_getopt_start(NULL);
  try_prefixed = true;
}

/* ---- input ---------------------------------------------------------------------- */

char **bx_file_operands(BoxCmd *c, int *n) {
  static char *dash[] = { (char *)"-", NULL };
  *n = c->argc - optind;
  if (*n > 0) return c->argv + optind;
  *n = 1;
  return dash;
}

bool bx_parse_count(BoxCmd *c, const char *cmd, const char *v, bool bytes, char flip, bool *flipped,
                    unsigned long long *n) {
  const char *s = v;
  *flipped = false;
  if (*s == flip) { *flipped = true; s++; }
  else if (*s == '-' || *s == '+') s++;
  if (!bx_parse_size(s, n)) {
    bx_err(c, cmd, "invalid number of %s: '%s'", bytes ? "bytes" : "lines", v);
    return false;
  }
  return true;
}

ssize_t bx_read(int fd, void *buf, size_t n) {
  ssize_t r;
  do r = read(fd, buf, n);
  while (r < 0 && errno == EINTR);
  return r;
}

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

#define READER_CAP 65536

/* One buffer of the usual size kept per thread between readers: grep -r
 * opens a reader per file, and a fresh 64 KiB block each time cost more
 * than reading a small file. */
static _Thread_local char *reader_spare;

void bx_reader_init(BxReader *r, int fd) {
  r->fd = fd;
  r->cap = READER_CAP;
  r->buf = reader_spare ? reader_spare : g_malloc(r->cap);
  reader_spare = NULL;
  r->start = r->end = 0;
  r->eof = false;
  r->err = 0;
}

void bx_reader_free(BxReader *r) {
  if (r->buf && r->cap == READER_CAP && !reader_spare)
    reader_spare = r->buf;
  else
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

/* ---- users and groups ------------------------------------------------------- */

const char *bx_user_name(uid_t uid) {
  struct passwd *pw = getpwuid(uid);
  if (pw) return pw->pw_name;
  return uid == 0 ? "root" : NULL;
}

const char *bx_group_name(gid_t gid) {
  struct group *gr = getgrgid(gid);
  if (gr) return gr->gr_name;
  return gid == 0 ? "root" : NULL;
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

int bx_escape_byte(char letter, const char *accepted) {
  static const char from[] = "abeEfnrtv\\'\"?0";
  static const char to[] = { '\a', '\b', 033, 033, '\f', '\n', '\r', '\t', '\v', '\\', '\'', '"', '?', '\0' };
  const char *p;
  if (!letter || !strchr(accepted, letter) || !(p = strchr(from, letter))) return -1;
  return (unsigned char)to[p - from];
}

const char *bx_escape_name(unsigned char ch) {
  switch (ch) {
  case '\a': return "\\a";
  case '\b': return "\\b";
  case '\f': return "\\f";
  case '\n': return "\\n";
  case '\r': return "\\r";
  case '\t': return "\\t";
  case '\v': return "\\v";
  default: return NULL;
  }
}

char *bx_relative_path(const char *path, const char *base) {
  gchar **tp = g_strsplit(path, "/", -1), **bp = g_strsplit(base, "/", -1);
  int i = 0;
  while (tp[i] && bp[i] && !strcmp(tp[i], bp[i])) i++;
  GString *r = g_string_new(NULL);
  for (int j = i; bp[j]; j++) if (*bp[j]) g_string_append(r, r->len ? "/.." : "..");
  for (int j = i; tp[j]; j++) if (*tp[j]) { if (r->len) g_string_append_c(r, '/'); g_string_append(r, tp[j]); }
  if (!r->len) g_string_assign(r, ".");
  g_strfreev(tp);
  g_strfreev(bp);
  return g_string_free(r, FALSE);
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

static void add_records(GArray *v, const char *buf, size_t n) {
  for (size_t off = 0; off + sizeof(struct bx_dirent64) <= n;) {
    const struct bx_dirent64 *d = (const struct bx_dirent64 *)(buf + off);
    if (d->d_reclen == 0) break;
    off += d->d_reclen;
    if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..")) continue;
    BxDirEnt e = { g_strdup(d->d_name), (unsigned long long)d->d_ino, d->d_type };
    g_array_append_val(v, e);
  }
}

GArray *bx_list_dir(const char *path, int *err) { return bx_list_dir_opening(path, NULL, 0, NULL, err); }

GArray *bx_list_dir_opening(const char *path, const char *prefix, guint open_first, guint *opened, int *err) {
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
    add_records(v, buf, (size_t)n);
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

/* ---- modes, sizes, dates, paths (ls, stat, du, touch, date, readlink) ---------------------- */

const char *bx_file_type_name(mode_t m) {
  if (S_ISREG(m)) return "regular file";
  if (S_ISDIR(m)) return "directory";
  if (S_ISLNK(m)) return "symbolic link";
  if (S_ISFIFO(m)) return "fifo";
  if (S_ISCHR(m)) return "character special file";
  if (S_ISBLK(m)) return "block special file";
  if (S_ISSOCK(m)) return "socket";
  return "weird file";
}

void bx_mode_string(mode_t m, char out[11]) {
  out[0] = S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : S_ISCHR(m) ? 'c' : S_ISBLK(m) ? 'b'
         : S_ISFIFO(m) ? 'p' : S_ISSOCK(m) ? 's' : '-';
  static const char rwx[] = "rwxrwxrwx";
  for (int i = 0; i < 9; i++) out[1 + i] = (m & (0400 >> i)) ? rwx[i] : '-';
  if (m & S_ISUID) out[3] = (m & 0100) ? 's' : 'S';
  if (m & S_ISGID) out[6] = (m & 0010) ? 's' : 'S';
  if (m & S_ISVTX) out[9] = (m & 0001) ? 't' : 'T';
  out[10] = 0;
}

void bx_human_size(unsigned long long n, bool si, char *buf, size_t cap) {
  unsigned long long base = si ? 1000 : 1024;
  static const char units[] = "KMGTPEZY";
  if (n < base) { snprintf(buf, cap, "%llu", n); return; }
  int u = 0;
  unsigned long long div = base;
  while (u < 7 && n / div >= base) { div *= base; u++; }
  unsigned long long tenths = (n * 10 + div - 1) / div;
  if (n > (unsigned long long)-1 / 10) tenths = (n / div) * 10 + 10;
  if (tenths < 100) {
    snprintf(buf, cap, "%llu.%llu%c", tenths / 10, tenths % 10, si && u == 0 ? 'k' : units[u]);
    return;
  }
  unsigned long long whole = n / div + (n % div ? 1 : 0);
  if (whole >= base && u < 7) { snprintf(buf, cap, "1.0%c", units[u + 1]); return; }
  /* GNU spells the SI kilo "k" */
  snprintf(buf, cap, "%llu%c", whole, si && u == 0 ? 'k' : units[u]);
}

static int unit_seconds(const char *w, int *months) {
  size_t n = strlen(w);
  char t[32];
  if (n >= sizeof t) return -1;
  memcpy(t, w, n + 1);
  if (n > 1 && t[n - 1] == 's' && strcmp(t, "s") != 0) t[--n] = 0;
  *months = 0;
  if (!strcmp(t, "sec") || !strcmp(t, "second")) return 1;
  if (!strcmp(t, "min") || !strcmp(t, "minute")) return 60;
  if (!strcmp(t, "hour")) return 3600;
  if (!strcmp(t, "day")) return 86400;
  if (!strcmp(t, "week")) return 7 * 86400;
  if (!strcmp(t, "fortnight")) return 14 * 86400;
  if (!strcmp(t, "month")) { *months = 1; return 0; }
  if (!strcmp(t, "year")) { *months = 12; return 0; }
  return -1;
}

bool bx_parse_date(const char *s, bool utc, struct timespec *out) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  while (g_ascii_isspace(*s)) s++;
  if (*s == '@') {
    char *end;
    errno = 0;
    double v = g_ascii_strtod(s + 1, &end);
    while (g_ascii_isspace(*end)) end++;
    if (end == s + 1 || *end || errno) return false;
    out->tv_sec = (time_t)v;
    if (v < 0 && (double)out->tv_sec != v) out->tv_sec--;
    out->tv_nsec = (long)((v - (double)out->tv_sec) * 1e9 + 0.5);
    if (out->tv_nsec >= 1000000000) { out->tv_sec++; out->tv_nsec -= 1000000000; }
    return true;
  }
  struct tm tm;
  time_t t0 = now.tv_sec;
  if (utc) gmtime_r(&t0, &tm); else localtime_r(&t0, &tm);
  long nsec = now.tv_nsec;
  bool have_date = false, have_time = false, have_zone = false;
  long zone_off = 0;
  long rel_sec = 0;
  int rel_mon = 0, rel_day = 0;
  gchar *lower = g_ascii_strdown(s, -1);
  char *p = lower;
  bool ok = true;
  while (ok) {
    while (g_ascii_isspace(*p) || *p == ',') p++;
    if (!*p) break;
    int y, mo, d, hh, mi, n;
    double ss;
    if (sscanf(p, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && !have_date) {
      tm.tm_year = y - 1900; tm.tm_mon = mo - 1; tm.tm_mday = d;
      if (mo < 1 || mo > 12 || d < 1 || d > 31) { ok = false; break; }
      if (!have_time) { tm.tm_hour = tm.tm_min = tm.tm_sec = 0; nsec = 0; }
      have_date = true;
      p += n;
      if (*p == 't') p++;
      continue;
    }
    if (g_ascii_isdigit(*p) && sscanf(p, "%2d:%2d%n", &hh, &mi, &n) == 2 && !have_time) {
      p += n;
      ss = 0;
      if (*p == ':') {
        char *end;
        ss = g_ascii_strtod(p + 1, &end);
        if (end == p + 1) { ok = false; break; }
        p = end;
      }
      if (hh > 23 || mi > 59 || ss >= 61) { ok = false; break; }
      tm.tm_hour = hh; tm.tm_min = mi; tm.tm_sec = (int)ss;
      nsec = (long)((ss - (int)ss) * 1e9);
      have_time = true;
      if (*p == 'z') { have_zone = true; zone_off = 0; p++; }
      else if ((*p == '+' || *p == '-') && g_ascii_isdigit(p[1])) {
        int sign = *p == '-' ? -1 : 1, zh = 0, zm = 0;
        p++;
        if (sscanf(p, "%2d:%2d%n", &zh, &zm, &n) == 2 || sscanf(p, "%2d%2d%n", &zh, &zm, &n) == 2) p += n;
        else if (sscanf(p, "%2d%n", &zh, &n) == 1) p += n;
        have_zone = true;
        zone_off = sign * (zh * 3600L + zm * 60L);
      }
      if (*p && !g_ascii_isspace(*p)) { ok = false; break; }
      continue;
    }
    if (!strncmp(p, "utc", 3) || !strncmp(p, "gmt", 3)) { have_zone = true; zone_off = 0; p += 3; continue; }
    if (*p == 'z' && (!p[1] || g_ascii_isspace(p[1]))) { have_zone = true; zone_off = 0; p++; continue; }
    /* words */
    char word[32];
    long num = 1;
    bool have_num = false;
    if (*p == '+' || *p == '-' || g_ascii_isdigit(*p)) {
      char *end;
      num = strtol(p, &end, 10);
      if (end == p || (end == p + 1 && !g_ascii_isdigit(*p))) { ok = false; break; }
      have_num = true;
      p = end;
      while (g_ascii_isspace(*p)) p++;
    }
    n = 0;
    while (g_ascii_isalpha(p[n]) && n < 31) { word[n] = p[n]; n++; }
    word[n] = 0;
    if (n == 0) { ok = false; break; }
    p += n;
    if (!have_num) {
      if (!strcmp(word, "now")) continue;
      if (!strcmp(word, "today")) continue;
      if (!strcmp(word, "yesterday")) { rel_day -= 1; continue; }
      if (!strcmp(word, "tomorrow")) { rel_day += 1; continue; }
      if (!strcmp(word, "ago")) { rel_sec = -rel_sec; rel_mon = -rel_mon; rel_day = -rel_day; continue; }
      if (!strcmp(word, "next")) { num = 1; have_num = true; }
      else if (!strcmp(word, "last")) { num = -1; have_num = true; }
      if (have_num) {
        while (g_ascii_isspace(*p)) p++;
        n = 0;
        while (g_ascii_isalpha(p[n]) && n < 31) { word[n] = p[n]; n++; }
        word[n] = 0;
        p += n;
      }
    }
    int months;
    int secs = unit_seconds(word, &months);
    if (secs < 0) { ok = false; break; }
    if (months) rel_mon += (int)num * months;
    else if (secs == 86400 || secs == 7 * 86400 || secs == 14 * 86400) rel_day += (int)num * (secs / 86400);
    else rel_sec += num * secs;
  }
  g_free(lower);
  if (!ok) return false;
  tm.tm_mon += rel_mon;
  tm.tm_mday += rel_day;
  tm.tm_isdst = -1;
  time_t t;
  if (have_zone) {
    tm.tm_isdst = 0;
    t = timegm(&tm) - zone_off;
  } else {
    t = utc ? timegm(&tm) : mktime(&tm);
  }
  if (t == (time_t)-1 && errno == EOVERFLOW) return false;
  out->tv_sec = t + rel_sec;
  out->tv_nsec = nsec;
  return true;
}

char *bx_canonicalize(const char *path, int mode, int *err) {
  GString *res = g_string_new(NULL);
  if (path[0] != '/') {
    char *cwd = g_get_current_dir();
    g_string_assign(res, cwd);
    g_free(cwd);
  }
  if (*path == 0) { *err = ENOENT; g_string_free(res, TRUE); return NULL; }
  GQueue q = G_QUEUE_INIT;
  gchar **parts = g_strsplit(path, "/", -1);
  for (gchar **x = parts; *x; x++) if (**x && strcmp(*x, ".")) g_queue_push_tail(&q, g_strdup(*x));
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
      if (++links > 40) { *err = ELOOP; break; }
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
    if (errno == ENOTDIR && mode == 2) { missing = true; continue; }
    *err = errno;
    break;
  }
  g_queue_clear_full(&q, g_free);
  if (*err) { g_string_free(res, TRUE); return NULL; }
  if (res->len == 0) g_string_assign(res, "/");
  return g_string_free(res, FALSE);
}
