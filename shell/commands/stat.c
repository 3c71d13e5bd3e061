/* stat.c — GNU stat: -L, -t, -c/--format, --printf, and GNU's default
 * layout.  One statx(2) per operand: through the mount that is the one
 * read_metadata decision; statx rather than stat so %w/%W show the birth
 * time where the file system has one, as GNU does. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  const char *name;
  struct statx st;
  char *link; /* symlink target, read on demand for %N */
} StatFile;

static const char longopts[] = "dereference=L terse=t format=c: printf=P: file-system=f cached=C:";

static const char *file_type(mode_t m, uint64_t size)
{
  if (S_ISREG(m) && size == 0) return "regular empty file";
  return bx_file_type_name(m);
}

/* GNU's "%Y-%m-%d %H:%M:%S.NNNNNNNNN +ZZZZ" in local time; "-" for an
 * unknown birth time. */
static char *human_time(const struct statx_timestamp *t, bool known)
{
  if (!known) return g_strdup("-");
  time_t s = (time_t)t->tv_sec;
  struct tm tm;
  localtime_r(&s, &tm);
  char a[64], z[16];
  strftime(a, sizeof a, "%Y-%m-%d %H:%M:%S", &tm);
  strftime(z, sizeof z, "%z", &tm);
  return g_strdup_printf("%s.%09u %s", a, (unsigned)t->tv_nsec, z);
}

/* Epoch seconds; a precision asks for that many fraction digits (GNU
 * truncates, never rounds). */
static char *epoch_time(const struct statx_timestamp *t, bool known, int prec)
{
  if (!known) return g_strdup("0");
  if (prec <= 0) return g_strdup_printf("%" PRId64, (int64_t)t->tv_sec);
  char ns[16];
  snprintf(ns, sizeof ns, "%09u", (unsigned)t->tv_nsec);
  GString *s = g_string_new(NULL);
  g_string_printf(s, "%" PRId64 ".", (int64_t)t->tv_sec);
  for (int i = 0; i < prec; i++) g_string_append_c(s, i < 9 ? ns[i] : '0');
  return g_string_free(s, FALSE);
}

/* %m: walk up while the device stays the same (each step one stat). */
static char *mount_point(const char *name)
{
  char *abs = bx_canonicalize(name, 2, &(int){ 0 });
  if (!abs) return g_strdup("?");
  struct stat st;
  if (stat(abs, &st) != 0) {
    g_free(abs);
    return g_strdup("?");
  }
  dev_t dev = st.st_dev;
  char *cur = abs;
  while (strcmp(cur, "/") != 0) {
    char *up = g_path_get_dirname(cur);
    struct stat ps;
    if (stat(up, &ps) != 0 || ps.st_dev != dev) {
      g_free(up);
      break;
    }
    g_free(cur);
    cur = up;
  }
  return cur;
}

static const char *user_of(uid_t u)
{
  const char *n = bx_user_name(u);
  return n ? n : "UNKNOWN";
}

static const char *group_of(gid_t g)
{
  const char *n = bx_group_name(g);
  return n ? n : "UNKNOWN";
}

/* One directive: flags/width/precision already collected in spec (without
 * the conversion); prints a string or a number through printf as GNU does. */
static void put_str(GString *o, const char *spec, const char *s)
{
  char *f = g_strdup_printf("%ss", spec);
  g_string_append_printf(o, f, s);
  g_free(f);
}

static void put_u(GString *o, const char *spec, uintmax_t v, char conv)
{
  char *f = g_strdup_printf("%sj%c", spec, conv);
  g_string_append_printf(o, f, v);
  g_free(f);
}

static void put_d(GString *o, const char *spec, intmax_t v)
{
  char *f = g_strdup_printf("%sjd", spec);
  g_string_append_printf(o, f, v);
  g_free(f);
}

static bool directive(BoxCmd *c, GString *o, StatFile *f, const char *spec, int prec, char mod,
                      char conv)
{
  struct statx *s = &f->st;
  mode_t m = s->stx_mode;
  bool have_birth = (s->stx_mask & STATX_BTIME) != 0;
  char mbuf[11];
  switch (conv) {
  case 'a': put_u(o, spec, m & 07777, 'o'); break;
  case 'A':
    bx_mode_string(m, mbuf);
    put_str(o, spec, mbuf);
    break;
  case 'b': put_u(o, spec, s->stx_blocks, 'u'); break;
  case 'B': put_u(o, spec, 512, 'u'); break;
  case 'd':
    if (mod == 'H')
      put_u(o, spec, s->stx_dev_major, 'u');
    else if (mod == 'L')
      put_u(o, spec, s->stx_dev_minor, 'u');
    else
      put_u(o, spec, makedev(s->stx_dev_major, s->stx_dev_minor), 'u');
    break;
  case 'D': put_u(o, spec, makedev(s->stx_dev_major, s->stx_dev_minor), 'x'); break;
  case 'f': put_u(o, spec, m, 'x'); break;
  case 'F': put_str(o, spec, file_type(m, s->stx_size)); break;
  case 'g': put_u(o, spec, s->stx_gid, 'u'); break;
  case 'G': put_str(o, spec, group_of(s->stx_gid)); break;
  case 'h': put_u(o, spec, s->stx_nlink, 'u'); break;
  case 'i': put_u(o, spec, s->stx_ino, 'u'); break;
  case 'm': {
    char *mp = mount_point(f->name);
    put_str(o, spec, mp);
    g_free(mp);
    break;
  }
  case 'n': put_str(o, spec, f->name); break;
  case 'N': {
    g_autofree char *q = bx_quote_always(f->name);
    if (S_ISLNK(m)) {
      if (!f->link) f->link = g_file_read_link(f->name, NULL);
      g_autofree char *t = bx_quote_always(f->link ? f->link : "");
      char *both = g_strdup_printf("%s -> %s", q, t);
      put_str(o, spec, both);
      g_free(both);
    } else {
      put_str(o, spec, q);
    }
    break;
  }
  case 'o': put_u(o, spec, s->stx_blksize, 'u'); break;
  case 's': put_u(o, spec, s->stx_size, 'u'); break;
  case 'r':
    if (mod == 'H')
      put_u(o, spec, S_ISCHR(m) || S_ISBLK(m) ? s->stx_rdev_major : 0, 'u');
    else if (mod == 'L')
      put_u(o, spec, S_ISCHR(m) || S_ISBLK(m) ? s->stx_rdev_minor : 0, 'u');
    else
      put_u(o, spec, S_ISCHR(m) || S_ISBLK(m) ? makedev(s->stx_rdev_major, s->stx_rdev_minor) : 0,
            'u');
    break;
  case 't': put_u(o, spec, S_ISCHR(m) || S_ISBLK(m) ? s->stx_rdev_major : 0, 'x'); break;
  case 'T': put_u(o, spec, S_ISCHR(m) || S_ISBLK(m) ? s->stx_rdev_minor : 0, 'x'); break;
  case 'u': put_u(o, spec, s->stx_uid, 'u'); break;
  case 'U': put_str(o, spec, user_of(s->stx_uid)); break;
  case 'w':
  case 'x':
  case 'y':
  case 'z': {
    const struct statx_timestamp *t = conv == 'w'   ? &s->stx_btime
                                      : conv == 'x' ? &s->stx_atime
                                      : conv == 'y' ? &s->stx_mtime
                                                    : &s->stx_ctime;
    char *h = human_time(t, conv != 'w' || have_birth);
    put_str(o, spec, h);
    g_free(h);
    break;
  }
  case 'W':
  case 'X':
  case 'Y':
  case 'Z': {
    const struct statx_timestamp *t = conv == 'W'   ? &s->stx_btime
                                      : conv == 'X' ? &s->stx_atime
                                      : conv == 'Y' ? &s->stx_mtime
                                                    : &s->stx_ctime;
    bool known = conv != 'W' || have_birth;
    if (prec < 0) {
      if (known)
        put_d(o, spec, (intmax_t)t->tv_sec);
      else
        put_str(o, spec, "0");
    } else {
      /* the precision is spent on the fraction: drop it from the spec */
      char *sp = g_strdup(spec);
      char *dot = strchr(sp, '.');
      if (dot) *dot = '\0';
      char *e = epoch_time(t, known, prec);
      put_str(o, sp, e);
      g_free(e);
      g_free(sp);
    }
    break;
  }
  case 'C': {
    g_autofree char *q = bx_quote_always(f->name);
    bx_err(c, "stat", "failed to get security context of %s: %s", q, box_strerror(ENODATA));
    g_string_append_c(o, '?');
  }
    return false;
  default: return true;
  }
  return true;
}

/* --printf's backslash escapes (GNU's set). */
static size_t escape(GString *o, const char *p)
{
  switch (p[1]) {
  case 'a': g_string_append_c(o, '\a'); return 2;
  case 'b': g_string_append_c(o, '\b'); return 2;
  case 'e': g_string_append_c(o, 033); return 2;
  case 'f': g_string_append_c(o, '\f'); return 2;
  case 'n': g_string_append_c(o, '\n'); return 2;
  case 'r': g_string_append_c(o, '\r'); return 2;
  case 't': g_string_append_c(o, '\t'); return 2;
  case 'v': g_string_append_c(o, '\v'); return 2;
  case '\\': g_string_append_c(o, '\\'); return 2;
  case '"': g_string_append_c(o, '"'); return 2;
  case '\0': g_string_append_c(o, '\\'); return 1;
  default: break;
  }
  if (p[1] >= '0' && p[1] <= '7') {
    unsigned v = 0;
    size_t i = 1;
    for (; i <= 3 && p[i] >= '0' && p[i] <= '7'; i++) v = v * 8 + (unsigned)(p[i] - '0');
    g_string_append_c(o, (char)v);
    return i;
  }
  if (p[1] == 'x' && g_ascii_isxdigit(p[2])) {
    unsigned v = 0;
    size_t i = 2;
    for (; i <= 3 && g_ascii_isxdigit(p[i]); i++) v = v * 16 + (unsigned)g_ascii_xdigit_value(p[i]);
    g_string_append_c(o, (char)v);
    return i;
  }
  g_string_append_c(o, '\\');
  g_string_append_c(o, p[1]);
  return 2;
}

static bool format_one(BoxCmd *c, GString *o, StatFile *f, const char *fmt, bool escapes)
{
  bool ok = true;
  for (const char *p = fmt; *p;) {
    if (escapes && *p == '\\') {
      p += escape(o, p);
      continue;
    }
    if (*p != '%') {
      g_string_append_c(o, *p++);
      continue;
    }
    const char *start = p++;
    GString *spec = g_string_new("%");
    while (*p && strchr("-#+ 0'", *p)) g_string_append_c(spec, *p++);
    while (g_ascii_isdigit(*p)) g_string_append_c(spec, *p++);
    int prec = -1;
    if (*p == '.') {
      g_string_append_c(spec, *p++);
      prec = 0;
      bool digits = g_ascii_isdigit(*p);
      while (g_ascii_isdigit(*p)) {
        prec = prec * 10 + (*p - '0');
        g_string_append_c(spec, *p++);
      }
      if (!digits) prec = 9; /* GNU: a bare "." on a time means all nine digits */
    }
    char mod = 0;
    if ((*p == 'H' || *p == 'L') && (p[1] == 'd' || p[1] == 'r')) mod = *p++;
    char conv = *p;
    if (!conv) {
      g_string_append(o, start);
      g_string_free(spec, TRUE);
      break;
    }
    p++;
    if (conv == '%') {
      if (spec->len == 1)
        g_string_append_c(o, '%');
      else
        g_string_append_len(o, start, p - start);
    } else if (strchr("aAbBdDfFgGhimnNorstTuUwWxXyYzZC", conv)) {
      if (!directive(c, o, f, spec->str, prec, mod, conv)) ok = false;
    } else {
      /* GNU prints an unknown directive as "?" */
      g_string_append_c(o, '?');
    }
    g_string_free(spec, TRUE);
  }
  return ok;
}

static const char *default_format(mode_t m)
{
  if (S_ISCHR(m) || S_ISBLK(m))
    return "  File: %n\n  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\n"
           "Device: %Hd,%Ld\tInode: %-10i  Links: %-5h Device type: %Hr,%Lr\n"
           "Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\n"
           "Access: %x\nModify: %y\nChange: %z\n Birth: %w\n";
  return "  File: %n\n  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\n"
         "Device: %Hd,%Ld\tInode: %-10i  Links: %h\n"
         "Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\n"
         "Access: %x\nModify: %y\nChange: %z\n Birth: %w\n";
}

int box_cmd_stat(BoxCmd *c)
{
  bool follow = false, terse = false;
  const char *fmt = NULL;
  bool printf_mode = false;
  BX_EACH_OPTION (ch, c, "stat", "Ltc:f", longopts) switch (ch) {
    case 'L': follow = true; break;
    case 't': terse = true; break;
    case 'c':
      fmt = optarg;
      printf_mode = false;
      break;
    case 'P':
      fmt = optarg;
      printf_mode = true;
      break;
    case 'C': break;
    case 'f': bx_err(c, "stat", "--file-system is not supported by the Shell"); return 1;
    default: return 1;
    }
  if (optind >= c->argc) {
    bx_usage(c, "stat", "missing operand");
    return 1;
  }
  int status = 0;
  for (int i = optind; i < c->argc; i++) {
    StatFile f = { .name = c->argv[i] };
    int r;
    if (strcmp(f.name, "-") == 0)
      r = statx(c->in, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &f.st);
    else
      r = statx(AT_FDCWD, f.name, follow ? 0 : AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME,
                &f.st);
    if (r != 0) {
      int e = errno;
      bx_err_q(c, "stat", "cannot statx %s", f.name, e);
      status = 1;
      continue;
    }
    GString *o = g_string_new(NULL);
    bool ok;
    if (fmt) {
      ok = format_one(c, o, &f, fmt, printf_mode);
      if (!printf_mode) g_string_append_c(o, '\n');
    } else if (terse) {
      ok = format_one(c, o, &f, "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o\n", false);
    } else {
      const char *df = default_format(f.st.stx_mode);
      if (S_ISLNK(f.st.stx_mode)) {
        /* "  File: name -> target", both bare */
        f.link = g_file_read_link(f.name, NULL);
        char *esc = g_strdup(f.link ? f.link : "");
        GString *pct = g_string_new(NULL);
        for (const char *p = esc; *p; p++) {
          if (*p == '%') g_string_append_c(pct, '%');
          g_string_append_c(pct, *p);
        }
        char *ff = g_strdup_printf("  File: %%n -> %s%s", pct->str, df + strlen("  File: %n"));
        ok = format_one(c, o, &f, ff, false);
        g_free(ff);
        g_string_free(pct, TRUE);
        g_free(esc);
      } else {
        ok = format_one(c, o, &f, df, false);
      }
    }
    bx_put(c, o->str, o->len);
    g_string_free(o, TRUE);
    g_free(f.link);
    if (!ok) status = 1;
  }
  return status;
}
