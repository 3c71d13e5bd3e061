/* find.c — GNU find: tests, actions and operators; -exec/-execdir/-ok run
 * each command through the Shell's decision point (box_run_argv), so every
 * nested command gets its own shell:exec / shell:spawn decision.
 * Directories are read with getdents and walked in name order; an entry
 * is stat()ed only when a test or action needs its attributes. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <pwd.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef enum {
  F_AND,
  F_OR,
  F_NOT,
  F_COMMA,
  T_NAME,
  T_INAME,
  T_PATH,
  T_IPATH,
  T_REGEX,
  T_TYPE,
  T_XTYPE,
  T_SIZE,
  T_TIME,
  T_NEWER,
  T_PERM,
  T_EMPTY,
  T_TRUE,
  T_FALSE,
  T_USER,
  T_GROUP,
  T_UID,
  T_GID,
  T_LINKS,
  T_INUM,
  T_READABLE,
  T_WRITABLE,
  T_EXECUTABLE,
  T_NOUSER,
  T_NOGROUP,
  T_SAMEFILE,
  A_PRINT,
  A_PRINT0,
  A_PRINTF,
  A_EXEC,
  A_DELETE,
  A_PRUNE,
  A_QUIT,
  A_LS,
} Kind;

typedef struct FNode FNode;
struct FNode {
  Kind kind;
  FNode *l, *r;
  char *s;        /* pattern / format / type letters */
  int cmp;        /* -1 less, 0 exact, 1 greater */
  long long num;  /* size units, days, … */
  long long unit; /* size: bytes per unit; time: seconds per unit */
  char which;     /* time: 'm' 'a' 'c' */
  struct timespec ref;
  mode_t mode;
  int perm_kind; /* 0 exact, '-' all, '/' any */
  regex_t re;
  bool re_ok;
  /* exec */
  char **argv;
  int argc;
  bool plus, dir, ok;
  GPtrArray *batch; /* {} + : collected paths */
  size_t batch_bytes;
  char *batch_dir;
  dev_t dev;
  ino_t ino;
};

typedef struct {
  const char *path;  /* as printed */
  const char *name;  /* last component (for -name) */
  const char *start; /* its starting point */
  int depth;
  unsigned char dtype;
  bool have_st, st_failed;
  struct stat st;
  bool followed; /* st is of the link target (-L) */
} FEnt;

typedef struct {
  BoxCmd *c;
  FNode *expr;
  int maxdepth, mindepth;
  bool depth_first, follow, follow_args, quit, has_action;
  int status;
  time_t now;
  bool daystart;
  GPtrArray *execs; /* FNode* with plus */
} Find;

/* ---- attributes ---------------------------------------------------------- */

static struct stat *ent_stat(Find *f, FEnt *e)
{
  if (e->have_st) return &e->st;
  if (e->st_failed) return NULL;
  bool follow = f->follow || (f->follow_args && e->depth == 0);
  int r = follow ? stat(e->path, &e->st) : lstat(e->path, &e->st);
  if (r != 0 && follow && errno == ENOENT) r = lstat(e->path, &e->st);
  if (r != 0) {
    bx_ferr(f->c, "find", e->path, errno);
    f->status = 1;
    e->st_failed = true;
    return NULL;
  }
  e->have_st = true;
  return &e->st;
}

static mode_t ent_type(Find *f, FEnt *e)
{
  if (!e->have_st && e->dtype != DT_UNKNOWN && !(f->follow && e->dtype == DT_LNK)) {
    switch (e->dtype) {
    case DT_DIR: return S_IFDIR;
    case DT_REG: return S_IFREG;
    case DT_LNK: return S_IFLNK;
    case DT_FIFO: return S_IFIFO;
    case DT_SOCK: return S_IFSOCK;
    case DT_CHR: return S_IFCHR;
    case DT_BLK: return S_IFBLK;
    }
  }
  struct stat *st = ent_stat(f, e);
  return st ? (st->st_mode & S_IFMT) : 0;
}

static char type_letter(mode_t m)
{
  switch (m & S_IFMT) {
  case S_IFDIR: return 'd';
  case S_IFREG: return 'f';
  case S_IFLNK: return 'l';
  case S_IFIFO: return 'p';
  case S_IFSOCK: return 's';
  case S_IFCHR: return 'c';
  case S_IFBLK: return 'b';
  }
  return 'U';
}

/* ---- -exec ---------------------------------------------------------------- */

static char *subst(const char *arg, const char *path)
{
  if (!strstr(arg, "{}")) return g_strdup(arg);
  GString *s = g_string_new(NULL);
  for (const char *p = arg; *p;) {
    if (p[0] == '{' && p[1] == '}') {
      g_string_append(s, path);
      p += 2;
    } else
      g_string_append_c(s, *p++);
  }
  return g_string_free(s, FALSE);
}

static int run_in(Find *f, char **argv, const char *dir)
{
  BoxCmd *c = f->c;
  box_out_flush(c->out);
  if (!dir) return box_run_argv(c->sh, argv, c->in, c->out_fd, c->err);
  pid_t pid = box_fork(c->sh);
  if (pid < 0) return 1;
  if (pid == 0) {
    if (chdir(dir) != 0) {
      bx_ferr(c, "find", dir, errno);
      _exit(1);
    }
    char *cwd = g_get_current_dir();
    g_free(c->sh->cwd);
    c->sh->cwd = cwd;
    _exit(box_run_argv(c->sh, argv, c->in, c->out_fd, c->err));
  }
  return box_wait_pid(pid);
}

static char *dir_of(const char *path)
{
  const char *sl = strrchr(path, '/');
  if (!sl) return g_strdup(".");
  if (sl == path) return g_strdup("/");
  return g_strndup(path, (gsize)(sl - path));
}

static void flush_batch(Find *f, FNode *n)
{
  if (!n->batch || !n->batch->len) return;
  GPtrArray *av = g_ptr_array_new();
  for (int i = 0; i < n->argc - 1; i++) g_ptr_array_add(av, n->argv[i]);
  for (guint i = 0; i < n->batch->len; i++) g_ptr_array_add(av, n->batch->pdata[i]);
  g_ptr_array_add(av, NULL);
  int rc = run_in(f, (char **)av->pdata, n->dir ? n->batch_dir : NULL);
  if (rc != 0) f->status = 1;
  g_ptr_array_free(av, TRUE);
  g_ptr_array_set_size(n->batch, 0);
  n->batch_bytes = 0;
  g_free(n->batch_dir);
  n->batch_dir = NULL;
}

static bool do_exec(Find *f, FNode *n, FEnt *e)
{
  const char *target = e->path;
  char *dir = NULL, *rel = NULL;
  if (n->dir) {
    dir = dir_of(e->path);
    const char *base = strrchr(e->path, '/');
    rel = g_strconcat("./", base ? base + 1 : e->path, NULL);
    if (e->depth == 0 && !base) {
      g_free(rel);
      rel = g_strconcat("./", e->path, NULL);
    }
    target = rel;
  }
  if (n->plus) {
    if (n->dir && n->batch_dir && strcmp(n->batch_dir, dir)) flush_batch(f, n);
    if (n->batch_bytes + strlen(target) > 128 * 1024) flush_batch(f, n);
    g_ptr_array_add(n->batch, g_strdup(target));
    n->batch_bytes += strlen(target) + 1;
    if (n->dir && !n->batch_dir) n->batch_dir = g_strdup(dir);
    g_free(dir);
    g_free(rel);
    return true;
  }
  char **av = g_new0(char *, n->argc + 1);
  for (int i = 0; i < n->argc; i++) av[i] = subst(n->argv[i], target);
  bool yes = true;
  if (n->ok) {
    box_out_flush(f->c->out);
    GString *q = g_string_new("< ");
    for (int i = 0; i < n->argc; i++) {
      g_string_append(q, av[i]);
      g_string_append_c(q, ' ');
    }
    g_string_append(q, "... ");
    g_string_truncate(q, q->len - 4);
    g_string_append(q, " > ? ");
    box_write_all(f->c->err, q->str, q->len);
    g_string_free(q, TRUE);
    char ch = 0, first = 0;
    bool got = false;
    while (f->c->in >= 0 && read(f->c->in, &ch, 1) == 1) {
      if (!got) {
        first = ch;
        got = true;
      }
      if (ch == '\n') break;
    }
    yes = first == 'y' || first == 'Y';
  }
  int rc = yes ? run_in(f, av, dir) : 1;
  g_strfreev(av);
  g_free(dir);
  g_free(rel);
  return rc == 0;
}

/* ---- -printf / -ls ------------------------------------------------------------------ */

static void fmt_time(GString *s, char k, const struct timespec *ts)
{
  struct tm tm;
  localtime_r(&ts->tv_sec, &tm);
  char buf[128];
  if (k == '@') {
    g_string_append_printf(s, "%lld.%09ld0", (long long)ts->tv_sec, ts->tv_nsec);
    return;
  }
  if (k == '+') {
    strftime(buf, sizeof buf, "%Y-%m-%d+%H:%M:%S", &tm);
    g_string_append_printf(s, "%s.%09ld0", buf, ts->tv_nsec);
    return;
  }
  if (k == 'S') {
    g_string_append_printf(s, "%02d.%09ld0", tm.tm_sec, ts->tv_nsec);
    return;
  }
  if (k == 'T') {
    strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    g_string_append_printf(s, "%s.%09ld0", buf, ts->tv_nsec);
    return;
  }
  char f[3] = { '%', k, 0 };
  if (strftime(buf, sizeof buf, f, &tm) > 0) g_string_append(s, buf);
}

static const char *uname_of(uid_t u, char *b)
{
  const char *n = bx_user_name(u);
  if (n) return n;
  sprintf(b, "%u", (unsigned)u);
  return b;
}
static const char *gname_of(gid_t g, char *b)
{
  const char *n = bx_group_name(g);
  if (n) return n;
  sprintf(b, "%u", (unsigned)g);
  return b;
}

static void do_printf(Find *f, FNode *n, FEnt *e)
{
  GString *out = g_string_new(NULL);
  for (const char *p = n->s; *p; p++) {
    if (*p == '\\') {
      p++;
      int b = bx_escape_byte(*p, "nt0\\ar");
      if (b >= 0) {
        g_string_append_c(out, (char)b);
        continue;
      }
      switch (*p) {
      case 'c': goto done;
      case 0:
        g_string_append_c(out, '\\');
        p--;
        break;
      default:
        g_string_append_c(out, '\\');
        g_string_append_c(out, *p);
        break;
      }
      continue;
    }
    if (*p != '%') {
      g_string_append_c(out, *p);
      continue;
    }
    /* flags and width */
    const char *spec = p++;
    while (*p && strchr("-+ #0", *p)) p++;
    while (g_ascii_isdigit(*p)) p++;
    if (*p == '.') {
      p++;
      while (g_ascii_isdigit(*p)) p++;
    }
    char flagw[32];
    size_t fl = MIN((size_t)(p - spec), sizeof flagw - 3);
    memcpy(flagw, spec, fl);
    if (!*p) {
      g_string_append(out, spec);
      break;
    }
    GString *v = g_string_new(NULL);
    bool numeric = false;
    long long num = 0;
    struct stat *st = NULL;
    char b[64];
    switch (*p) {
    case '%': g_string_append_c(v, '%'); break;
    case 'p': g_string_append(v, e->path); break;
    case 'f': {
      const char *sl = strrchr(e->path, '/');
      g_string_append(v, sl && sl[1] ? sl + 1 : e->path);
      break;
    }
    case 'h': {
      const char *sl = strrchr(e->path, '/');
      if (!sl)
        g_string_append_c(v, '.');
      else if (sl == e->path)
        g_string_append(v, "");
      else
        g_string_append_len(v, e->path, sl - e->path);
      break;
    }
    case 'P': {
      size_t k = strlen(e->start);
      const char *r = e->path + MIN(k, strlen(e->path));
      if (*r == '/') r++;
      g_string_append(v, r);
      break;
    }
    case 'H': g_string_append(v, e->start); break;
    case 'd':
      numeric = true;
      num = e->depth;
      break;
    case 'y': g_string_append_c(v, type_letter(ent_type(f, e))); break;
    case 'Y': {
      struct stat ts;
      if (stat(e->path, &ts) == 0)
        g_string_append_c(v, type_letter(ts.st_mode));
      else
        g_string_append_c(v, errno == ELOOP ? 'L' : 'N');
      break;
    }
    case 'l': {
      if (ent_type(f, e) == S_IFLNK) {
        char buf[4096];
        ssize_t k = readlink(e->path, buf, sizeof buf - 1);
        if (k >= 0) g_string_append_len(v, buf, k);
      }
      break;
    }
    default:
      st = ent_stat(f, e);
      if (!st) break;
      switch (*p) {
      case 's':
        numeric = true;
        num = st->st_size;
        break;
      case 'k':
        numeric = true;
        num = (st->st_blocks + 1) / 2;
        break;
      case 'b':
        numeric = true;
        num = st->st_blocks;
        break;
      case 'n':
        numeric = true;
        num = (long long)st->st_nlink;
        break;
      case 'i':
        numeric = true;
        num = (long long)st->st_ino;
        break;
      case 'U':
        numeric = true;
        num = st->st_uid;
        break;
      case 'G':
        numeric = true;
        num = st->st_gid;
        break;
      case 'm': g_string_append_printf(v, "%o", (unsigned)(st->st_mode & 07777)); break;
      case 'M': {
        char m[11];
        bx_mode_string(st->st_mode, m);
        g_string_append(v, m);
        break;
      }
      case 'u': g_string_append(v, uname_of(st->st_uid, b)); break;
      case 'g': g_string_append(v, gname_of(st->st_gid, b)); break;
      case 'D':
        numeric = true;
        num = (long long)st->st_dev;
        break;
      case 'a':
      case 'c':
      case 't': {
        const struct timespec *ts = *p == 'a'   ? &st->st_atim
                                    : *p == 'c' ? &st->st_ctim
                                                : &st->st_mtim;
        struct tm tm;
        localtime_r(&ts->tv_sec, &tm);
        char buf[64];
        strftime(buf, sizeof buf, "%a %b %e %H:%M:%S", &tm);
        g_string_append_printf(v, "%s.%09ld0 ", buf, ts->tv_nsec);
        strftime(buf, sizeof buf, "%Y", &tm);
        g_string_append(v, buf);
        break;
      }
      case 'A':
      case 'C':
      case 'T': {
        const struct timespec *ts = *p == 'A'   ? &st->st_atim
                                    : *p == 'C' ? &st->st_ctim
                                                : &st->st_mtim;
        if (p[1]) {
          p++;
          fmt_time(v, *p, ts);
        }
        break;
      }
      default:
        g_string_append_c(v, '%');
        g_string_append_c(v, *p);
        break;
      }
    }
    if (numeric) {
      flagw[fl] = 'l';
      flagw[fl + 1] = 'l';
      flagw[fl + 2] = 0;
      char fmt[40];
      snprintf(fmt, sizeof fmt, "%sd", flagw);
      g_string_append_printf(out, fmt, num);
    } else if (fl > 1) {
      flagw[fl] = 's';
      flagw[fl + 1] = 0;
      g_string_append_printf(out, flagw, v->str);
    } else {
      g_string_append_len(out, v->str, v->len);
    }
    g_string_free(v, TRUE);
  }
done:
  box_out_write(f->c->out, out->str, out->len);
  g_string_free(out, TRUE);
}

static void do_ls(Find *f, FEnt *e)
{
  struct stat *st = ent_stat(f, e);
  if (!st) return;
  char m[11], tb[64], ub[32], gb[32];
  bx_mode_string(st->st_mode, m);
  struct tm tm;
  localtime_r(&st->st_mtim.tv_sec, &tm);
  bool recent = st->st_mtim.tv_sec <= f->now && st->st_mtim.tv_sec > f->now - 31556952 / 2;
  strftime(tb, sizeof tb, recent ? "%b %e %H:%M" : "%b %e  %Y", &tm);
  box_out_printf(f->c->out, "%9llu %6lld %s %3lu %-8s %-8s %8lld %s %s",
                 (unsigned long long)st->st_ino, (long long)(st->st_blocks + 1) / 2, m,
                 (unsigned long)st->st_nlink, uname_of(st->st_uid, ub), gname_of(st->st_gid, gb),
                 (long long)st->st_size, tb, e->path);
  if (S_ISLNK(st->st_mode)) {
    char buf[4096];
    ssize_t k = readlink(e->path, buf, sizeof buf - 1);
    if (k >= 0) {
      buf[k] = 0;
      box_out_printf(f->c->out, " -> %s", buf);
    }
  }
  box_out_putc(f->c->out, '\n');
}

/* ---- evaluation ----------------------------------------------------------------------------- */

static bool cmp_num(int cmp, long long have, long long want)
{
  return cmp < 0 ? have < want : cmp > 0 ? have > want : have == want;
}

static bool dir_empty(Find *f, FEnt *e)
{
  int err;
  GArray *v = bx_list_dir(e->path, &err);
  if (!v) {
    bx_ferr(f->c, "find", e->path, err);
    f->status = 1;
    return false;
  }
  bool empty = v->len == 0;
  bx_dir_free(v);
  return empty;
}

static bool eval(Find *f, FNode *n, FEnt *e, bool *prune)
{
  switch (n->kind) {
  case F_AND: return eval(f, n->l, e, prune) && !f->quit && eval(f, n->r, e, prune);
  case F_OR: return eval(f, n->l, e, prune) || (!f->quit && eval(f, n->r, e, prune));
  case F_NOT: return !eval(f, n->l, e, prune);
  case F_COMMA: eval(f, n->l, e, prune); return f->quit ? false : eval(f, n->r, e, prune);
  case T_TRUE: return true;
  case T_FALSE: return false;
  case T_NAME:
  case T_INAME: {
    /* the last component; a starting point keeps its name without trailing slashes */
    char *tmp = NULL;
    const char *name = e->name;
    if (e->depth == 0) {
      size_t k = strlen(e->path);
      while (k > 1 && e->path[k - 1] == '/') k--;
      size_t b = k;
      while (b > 0 && e->path[b - 1] != '/') b--;
      tmp = g_strndup(e->path + b, k - b);
      if (!*tmp) {
        g_free(tmp);
        tmp = g_strdup("/");
      }
      name = tmp;
    }
    bool r = fnmatch(n->s, name, n->kind == T_INAME ? FNM_CASEFOLD : 0) == 0;
    g_free(tmp);
    return r;
  }
  case T_PATH:
  case T_IPATH: return fnmatch(n->s, e->path, n->kind == T_IPATH ? FNM_CASEFOLD : 0) == 0;
  case T_REGEX: {
    regmatch_t m;
    if (!n->re_ok) return false;
    if (regexec(&n->re, e->path, 1, &m, 0) != 0) return false;
    return m.rm_so == 0 && (size_t)m.rm_eo == strlen(e->path);
  }
  case T_TYPE: {
    mode_t t = ent_type(f, e);
    return t && strchr(n->s, type_letter(t)) != NULL;
  }
  case T_XTYPE: {
    struct stat ts;
    mode_t t;
    if (f->follow) {
      if (lstat(e->path, &ts) != 0) return false;
      t = ts.st_mode;
    } else if (stat(e->path, &ts) == 0)
      t = ts.st_mode;
    else
      t = ent_type(f, e);
    return strchr(n->s, type_letter(t)) != NULL;
  }
  case T_SIZE: {
    struct stat *st = ent_stat(f, e);
    if (!st) return false;
    long long units = (st->st_size + n->unit - 1) / n->unit;
    return cmp_num(n->cmp, units, n->num);
  }
  case T_TIME: {
    struct stat *st = ent_stat(f, e);
    if (!st) return false;
    const struct timespec *ts = n->which == 'a'   ? &st->st_atim
                                : n->which == 'c' ? &st->st_ctim
                                                  : &st->st_mtim;
    double age = (double)(f->now - ts->tv_sec) - ts->tv_nsec / 1e9;
    double units = age / (double)n->unit;
    if (n->unit == 86400 && !f->daystart) {
      long long k = (long long)(units < 0 ? units - 1 + 1e-9 : units);
      if (units < 0) k = (long long)units - ((double)(long long)units != units ? 1 : 0);
      return cmp_num(n->cmp, k, n->num);
    }
    /* minutes: GNU compares the exact age */
    if (n->cmp > 0) return units > (double)n->num;
    if (n->cmp < 0) return units < (double)n->num;
    long long k = (long long)(units + (units > 0 ? 0.999999999 : 0));
    return k == n->num;
  }
  case T_NEWER: {
    struct stat *st = ent_stat(f, e);
    if (!st) return false;
    const struct timespec *ts = n->which == 'a'   ? &st->st_atim
                                : n->which == 'c' ? &st->st_ctim
                                                  : &st->st_mtim;
    return ts->tv_sec > n->ref.tv_sec ||
           (ts->tv_sec == n->ref.tv_sec && ts->tv_nsec > n->ref.tv_nsec);
  }
  case T_PERM: {
    struct stat *st = ent_stat(f, e);
    if (!st) return false;
    mode_t m = st->st_mode & 07777;
    if (n->perm_kind == '-') return (m & n->mode) == n->mode;
    if (n->perm_kind == '/') return n->mode == 0 || (m & n->mode) != 0;
    return m == n->mode;
  }
  case T_EMPTY: {
    mode_t t = ent_type(f, e);
    if (t == S_IFDIR) return dir_empty(f, e);
    if (t != S_IFREG) return false;
    struct stat *st = ent_stat(f, e);
    return st && st->st_size == 0;
  }
  case T_USER:
  case T_UID: {
    struct stat *st = ent_stat(f, e);
    return st && cmp_num(n->cmp, st->st_uid, n->num);
  }
  case T_GROUP:
  case T_GID: {
    struct stat *st = ent_stat(f, e);
    return st && cmp_num(n->cmp, st->st_gid, n->num);
  }
  case T_NOUSER: {
    struct stat *st = ent_stat(f, e);
    return st && !bx_user_name(st->st_uid);
  }
  case T_NOGROUP: {
    struct stat *st = ent_stat(f, e);
    return st && !bx_group_name(st->st_gid);
  }
  case T_LINKS: {
    struct stat *st = ent_stat(f, e);
    return st && cmp_num(n->cmp, (long long)st->st_nlink, n->num);
  }
  case T_INUM: {
    struct stat *st = ent_stat(f, e);
    return st && cmp_num(n->cmp, (long long)st->st_ino, n->num);
  }
  case T_SAMEFILE: {
    struct stat *st = ent_stat(f, e);
    return st && st->st_ino == n->ino && st->st_dev == n->dev;
  }
  case T_READABLE: return access(e->path, R_OK) == 0;
  case T_WRITABLE: return access(e->path, W_OK) == 0;
  case T_EXECUTABLE: return access(e->path, X_OK) == 0;
  case A_PRINT:
    box_out_puts(f->c->out, e->path);
    box_out_putc(f->c->out, '\n');
    return true;
  case A_PRINT0: box_out_write(f->c->out, e->path, strlen(e->path) + 1); return true;
  case A_PRINTF: do_printf(f, n, e); return true;
  case A_LS: do_ls(f, e); return true;
  case A_EXEC: return do_exec(f, n, e);
  case A_PRUNE: *prune = true; return true;
  case A_QUIT: f->quit = true; return true;
  case A_DELETE: {
    mode_t t = ent_type(f, e);
    if (!strcmp(e->path, ".")) return true;
    int r = t == S_IFDIR ? rmdir(e->path) : unlink(e->path);
    if (r != 0) {
      bx_err_q(f->c, "find", "cannot delete %s", e->path, errno);
      f->status = 1;
      return false;
    }
    return true;
  }
  }
  return false;
}

/* ---- traversal ----------------------------------------------------------------------------- */

typedef struct Anc {
  dev_t dev;
  ino_t ino;
  struct Anc *up;
} Anc;

/* The box prints a directory's entries in name order (C locale), not in
 * the order the directory gives them (shared/conformance/README.md). */
static int dirent_cmp(const void *a, const void *b)
{
  return strcmp(((const BxDirEnt *)a)->name, ((const BxDirEnt *)b)->name);
}

static void visit(Find *f, FEnt *e, Anc *anc)
{
  if (f->quit) return;
  bool prune = false;
  mode_t t = ent_type(f, e);
  bool is_dir = t == S_IFDIR;
  if (!f->depth_first && e->depth >= f->mindepth) eval(f, f->expr, e, &prune);
  if (is_dir && !prune && !f->quit && (f->maxdepth < 0 || e->depth < f->maxdepth)) {
    Anc here = { 0, 0, anc };
    if (f->follow) {
      struct stat *st = ent_stat(f, e);
      if (st) {
        here.dev = st->st_dev;
        here.ino = st->st_ino;
        for (Anc *a = anc; a; a = a->up)
          if (a->dev == st->st_dev && a->ino == st->st_ino) {
            g_autofree char *q = bx_quote_always(e->path);
            bx_err(f->c, "find",
                   "File system loop detected; %s is part of the same file system loop as %s.", q,
                   q);
            f->status = 1;
            goto post;
          }
      }
    }
    int err;
    GArray *v = bx_list_dir(e->path, &err);
    if (!v) {
      bx_ferr(f->c, "find", e->path, err);
      f->status = 1;
    } else {
      g_array_sort(v, dirent_cmp);
      size_t pl = strlen(e->path);
      bool slash = pl > 0 && e->path[pl - 1] == '/';
      for (guint i = 0; i < v->len && !f->quit; i++) {
        BxDirEnt *d = &g_array_index(v, BxDirEnt, i);
        char *p =
          slash ? g_strconcat(e->path, d->name, NULL) : g_strconcat(e->path, "/", d->name, NULL);
        FEnt ch = { p,        p + strlen(p) - strlen(d->name),
                    e->start, e->depth + 1,
                    d->type,  false,
                    false,    { 0 },
                    false };
        visit(f, &ch, &here);
        g_free(p);
      }
      bx_dir_free(v);
    }
  }
post:
  if (f->depth_first && e->depth >= f->mindepth && !f->quit) eval(f, f->expr, e, &prune);
}

/* ---- parsing ----------------------------------------------------------------------------------- */

typedef struct {
  Find *f;
  char **av;
  int ac, i;
  bool error;
} FParser;

static FNode *node(Kind k)
{
  FNode *n = g_new0(FNode, 1);
  n->kind = k;
  return n;
}

static void free_node(FNode *n)
{
  if (!n) return;
  free_node(n->l);
  free_node(n->r);
  g_free(n->s);
  if (n->re_ok) regfree(&n->re);
  g_free(n->argv);
  if (n->batch) g_ptr_array_free(n->batch, TRUE);
  g_free(n->batch_dir);
  g_free(n);
}

static void perr(FParser *p, const char *fmt, const char *arg)
{
  if (p->error) return;
  char *m = g_strdup_printf(fmt, arg);
  bx_err(p->f->c, "find", "%s", m);
  g_free(m);
  p->error = true;
}

static const char *need_arg(FParser *p, const char *pred)
{
  if (p->i >= p->ac) {
    perr(p, "missing argument to `%s'", pred);
    return NULL;
  }
  return p->av[p->i++];
}

/* [+-]N → cmp, num; false when not a number */
static bool parse_num(const char *s, int *cmp, long long *num, const char **rest)
{
  *cmp = 0;
  if (*s == '+') {
    *cmp = 1;
    s++;
  } else if (*s == '-') {
    *cmp = -1;
    s++;
  }
  if (!g_ascii_isdigit(*s)) return false;
  char *end;
  errno = 0;
  *num = strtoll(s, &end, 10);
  if (errno) return false;
  if (rest)
    *rest = end;
  else if (*end)
    return false;
  return true;
}

static FNode *parse_or(FParser *p);

/* a -size test: N[cwbkMG] with +/-. */
static FNode *parse_size_test(FParser *p, const char *a)
{
  const char *v = need_arg(p, a);
  if (!v) return NULL;
  FNode *n;
  n = node(T_SIZE);
  const char *rest;
  if (!parse_num(v, &n->cmp, &n->num, &rest)) {
    free_node(n);
    perr(p, "invalid -size type `%s'", v);
    return NULL;
  }
  n->unit = 512;
  if (*rest) {
    if (rest[1]) {
      free_node(n);
      perr(p, "invalid -size type `%s'", v);
      return NULL;
    }
    switch (*rest) {
    case 'c': n->unit = 1; break;
    case 'w': n->unit = 2; break;
    case 'b': n->unit = 512; break;
    case 'k': n->unit = 1024; break;
    case 'M': n->unit = 1024 * 1024; break;
    case 'G': n->unit = 1024LL * 1024 * 1024; break;
    default: {
      char t[2] = { *rest, 0 };
      free_node(n);
      perr(p, "invalid -size type `%s'", t);
      return NULL;
    }
    }
  }
  return n;
}

/* -newer and its kin: the reference file's time, read now. */
static FNode *parse_newer(FParser *p, const char *a)
{
  Find *f = p->f;
  const char *v = need_arg(p, a);
  if (!v) return NULL;
  FNode *n;
  struct stat st;
  bool fl = f->follow || f->follow_args;
  if ((fl ? stat(v, &st) : lstat(v, &st)) != 0) {
    char *q = bx_quote_always(v), *t = bx_errtext(f->c, errno);
    char *m = g_strdup_printf("%s: %s", q, t);
    perr(p, "%s", m);
    g_free(m);
    g_free(q);
    g_free(t);
    return NULL;
  }
  n = node(T_NEWER);
  n->which = a[1] == 'n' ? 'm' : a[1];
  char rw = strlen(a) == 8 ? a[7] : 'm';
  n->ref = rw == 'a' ? st.st_atim : rw == 'c' ? st.st_ctim : st.st_mtim;
  return n;
}

/* -perm MODE, -MODE (all of), /MODE (any of). */
static FNode *parse_perm(FParser *p, const char *a)
{
  const char *v = need_arg(p, a);
  if (!v) return NULL;
  FNode *n;
  n = node(T_PERM);
  const char *m = v;
  if (*m == '-' || *m == '/')
    n->perm_kind = *m++;
  else if (*m == '+' && g_ascii_isdigit(m[1])) {
    n->perm_kind = '/';
    m++;
  }
  mode_t mm;
  if (!bx_parse_mode(m, 0, false, &mm)) {
    free_node(n);
    perr(p, "invalid mode `%s'", v);
    return NULL;
  }
  if (!g_ascii_isdigit(*m)) {
    /* symbolic: as applied to 000 without umask */
    mode_t um = umask(0);
    bx_parse_mode(m, 0, false, &mm);
    umask(um);
  }
  n->mode = mm;
  return n;
}

/* The numeric tests: -user and -group (a name or a number), -uid, -gid,
 * -links, -inum. */
static FNode *parse_id_test(FParser *p, const char *a)
{
  const char *v = need_arg(p, a);
  if (!v) return NULL;
  FNode *n;
  Kind k = !strcmp(a, "-user")    ? T_USER
           : !strcmp(a, "-group") ? T_GROUP
           : !strcmp(a, "-uid")   ? T_UID
           : !strcmp(a, "-gid")   ? T_GID
           : !strcmp(a, "-links") ? T_LINKS
                                  : T_INUM;
  n = node(k);
  if (k == T_USER || k == T_GROUP) {
    struct passwd *pw = k == T_USER ? getpwnam(v) : NULL;
    struct group *gr = k == T_GROUP ? getgrnam(v) : NULL;
    if (pw)
      n->num = pw->pw_uid;
    else if (gr)
      n->num = gr->gr_gid;
    else if (!parse_num(v, &n->cmp, &n->num, NULL) || n->cmp) {
      free_node(n);
      char *m =
        g_strdup_printf("%s is not the name of a known %s", v, k == T_USER ? "user" : "group");
      char *q = bx_quote_always(v);
      g_free(m);
      m = g_strdup_printf("%s is not the name of a known %s", q, k == T_USER ? "user" : "group");
      perr(p, "%s", m);
      g_free(m);
      g_free(q);
      return NULL;
    }
    n->cmp = 0;
  } else if (!parse_num(v, &n->cmp, &n->num, NULL)) {
    free_node(n);
    char *m = g_strdup_printf("invalid argument `%s' to `%s'", v, a);
    perr(p, "%s", m);
    g_free(m);
    return NULL;
  }
  return n;
}

/* -exec, -execdir, -ok, -okdir: the command up to ";" or "+". */
static FNode *parse_exec(FParser *p, const char *a)
{
  Find *f = p->f;
  FNode *n;
  f->has_action = true;
  n = node(A_EXEC);
  n->dir = strstr(a, "dir") != NULL;
  n->ok = !strncmp(a, "-ok", 3);
  int start = p->i;
  while (p->i < p->ac) {
    const char *w = p->av[p->i];
    if (!strcmp(w, ";")) break;
    if (!strcmp(w, "+") && !n->ok && p->i > start && !strcmp(p->av[p->i - 1], "{}")) {
      n->plus = true;
      break;
    }
    p->i++;
  }
  if (p->i >= p->ac || p->i == start) {
    free_node(n);
    perr(p, "missing argument to `%s'", a);
    return NULL;
  }
  n->argc = p->i - start;
  n->argv = g_new0(char *, n->argc + 1);
  for (int k = 0; k < n->argc; k++) n->argv[k] = p->av[start + k];
  if (n->plus) {
    for (int k = 0; k < n->argc - 1; k++)
      if (strstr(n->argv[k], "{}")) {
        free_node(n);
        perr(p, "Only one instance of {} is supported with -exec%s ... +", n->dir ? "dir" : "");
        return NULL;
      }
    n->batch = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(f->execs, n);
  }
  p->i++;
  return n;
}

static FNode *parse_primary(FParser *p)
{
  if (p->i >= p->ac) {
    perr(p, "%s", "invalid expression");
    return NULL;
  }
  const char *a = p->av[p->i++];
  Find *f = p->f;
  if (!strcmp(a, "(")) {
    if (p->i < p->ac && !strcmp(p->av[p->i], ")")) {
      perr(p, "%s", "invalid expression; empty parentheses are not allowed.");
      return NULL;
    }
    FNode *n = parse_or(p);
    if (p->error) {
      free_node(n);
      return NULL;
    }
    if (p->i >= p->ac || strcmp(p->av[p->i], ")")) {
      free_node(n);
      perr(p, "%s",
           "invalid expression; I was expecting to find a ')' somewhere but did not see one.");
      return NULL;
    }
    p->i++;
    return n;
  }
  if (!strcmp(a, "!") || !strcmp(a, "-not")) {
    FNode *n = node(F_NOT);
    n->l = parse_primary(p);
    if (!n->l) {
      free_node(n);
      if (!p->error) perr(p, "expected an expression after '%s'", a);
      return NULL;
    }
    return n;
  }
  const char *v;
  FNode *n = NULL;
  if (!strcmp(a, "-name") || !strcmp(a, "-iname") || !strcmp(a, "-path") || !strcmp(a, "-ipath") ||
      !strcmp(a, "-wholename") || !strcmp(a, "-iwholename") || !strcmp(a, "-lname") ||
      !strcmp(a, "-ilname")) {
    if (!(v = need_arg(p, a))) return NULL;
    Kind k = !strcmp(a, "-name")    ? T_NAME
             : !strcmp(a, "-iname") ? T_INAME
             : (a[1] == 'i')        ? T_IPATH
                                    : T_PATH;
    n = node(k);
    n->s = g_strdup(v);
    return n;
  }
  if (!strcmp(a, "-regex") || !strcmp(a, "-iregex")) {
    if (!(v = need_arg(p, a))) return NULL;
    n = node(T_REGEX);
    /* GNU's default regex type is emacs; its ERE subset is what agents use */
    GString *ere = g_string_new(NULL);
    for (const char *s = v; *s; s++) {
      if (s[0] == '\\' && s[1] && strchr("|(){}", s[1])) {
        g_string_append_c(ere, s[1]);
        s++;
      } else if (strchr("|(){}", *s)) {
        g_string_append_c(ere, '\\');
        g_string_append_c(ere, *s);
      } else
        g_string_append_c(ere, *s);
    }
    n->re_ok = !box_pattern_too_deep(ere->str) &&
               regcomp(&n->re, ere->str, REG_EXTENDED | (a[1] == 'i' ? REG_ICASE : 0)) == 0;
    g_string_free(ere, TRUE);
    return n;
  }
  if (!strcmp(a, "-type") || !strcmp(a, "-xtype")) {
    if (!(v = need_arg(p, a))) return NULL;
    GString *t = g_string_new(NULL);
    for (const char *s = v; *s; s++) {
      if (strchr("bcdpflsD", *s) && (s[1] == 0 || s[1] == ',')) {
        g_string_append_c(t, *s);
        if (s[1]) s++;
        continue;
      }
      g_string_free(t, TRUE);
      if (strlen(v) > 1 && !strchr(v, ','))
        perr(p, "Must separate multiple arguments to -type using: ','", NULL);
      else
        perr(p, "Unknown argument to -type: %s", v);
      return NULL;
    }
    n = node(a[1] == 't' ? T_TYPE : T_XTYPE);
    n->s = g_string_free(t, FALSE);
    return n;
  }
  if (!strcmp(a, "-size")) return parse_size_test(p, a);
  if (!strcmp(a, "-mtime") || !strcmp(a, "-atime") || !strcmp(a, "-ctime") || !strcmp(a, "-mmin") ||
      !strcmp(a, "-amin") || !strcmp(a, "-cmin")) {
    if (!(v = need_arg(p, a))) return NULL;
    n = node(T_TIME);
    n->which = a[1];
    n->unit = strstr(a, "min") ? 60 : 86400;
    if (!parse_num(v, &n->cmp, &n->num, NULL)) {
      free_node(n);
      char *m = g_strdup_printf("invalid argument `%s' to `%s'", v, a);
      perr(p, "%s", m);
      g_free(m);
      return NULL;
    }
    return n;
  }
  if (!strcmp(a, "-newer") || !strcmp(a, "-anewer") || !strcmp(a, "-cnewer") ||
      !strncmp(a, "-newer", 6))
    return parse_newer(p, a);
  if (!strcmp(a, "-perm")) return parse_perm(p, a);
  if (!strcmp(a, "-user") || !strcmp(a, "-group") || !strcmp(a, "-uid") || !strcmp(a, "-gid") ||
      !strcmp(a, "-links") || !strcmp(a, "-inum"))
    return parse_id_test(p, a);
  if (!strcmp(a, "-samefile")) {
    if (!(v = need_arg(p, a))) return NULL;
    struct stat st;
    if (lstat(v, &st) != 0) {
      perr(p, "%s", box_strerror(errno));
      return NULL;
    }
    n = node(T_SAMEFILE);
    n->dev = st.st_dev;
    n->ino = st.st_ino;
    return n;
  }
  if (!strcmp(a, "-empty")) return node(T_EMPTY);
  if (!strcmp(a, "-true")) return node(T_TRUE);
  if (!strcmp(a, "-false")) return node(T_FALSE);
  if (!strcmp(a, "-nouser")) return node(T_NOUSER);
  if (!strcmp(a, "-nogroup")) return node(T_NOGROUP);
  if (!strcmp(a, "-readable")) return node(T_READABLE);
  if (!strcmp(a, "-writable")) return node(T_WRITABLE);
  if (!strcmp(a, "-executable")) return node(T_EXECUTABLE);
  if (!strcmp(a, "-print")) {
    f->has_action = true;
    return node(A_PRINT);
  }
  if (!strcmp(a, "-print0")) {
    f->has_action = true;
    return node(A_PRINT0);
  }
  if (!strcmp(a, "-ls")) {
    f->has_action = true;
    return node(A_LS);
  }
  if (!strcmp(a, "-printf")) {
    if (!(v = need_arg(p, a))) return NULL;
    f->has_action = true;
    n = node(A_PRINTF);
    n->s = g_strdup(v);
    return n;
  }
  if (!strcmp(a, "-prune")) return node(A_PRUNE);
  if (!strcmp(a, "-quit")) return node(A_QUIT);
  if (!strcmp(a, "-delete")) {
    f->has_action = true;
    f->depth_first = true;
    return node(A_DELETE);
  }
  if (!strcmp(a, "-exec") || !strcmp(a, "-execdir") || !strcmp(a, "-ok") || !strcmp(a, "-okdir"))
    return parse_exec(p, a);
  /* global options in the expression */
  if (!strcmp(a, "-maxdepth") || !strcmp(a, "-mindepth")) {
    if (!(v = need_arg(p, a))) return NULL;
    char *end;
    long k = strtol(v, &end, 10);
    if (!*v || *end || k < 0 || !g_ascii_isdigit(*v)) {
      char *m =
        g_strdup_printf("Expected a positive decimal integer argument to %s, but got %s", a, "");
      g_free(m);
      char *q = bx_quote_always(v);
      m = g_strdup_printf("Expected a positive decimal integer argument to %s, but got %s", a, q);
      perr(p, "%s", m);
      g_free(m);
      g_free(q);
      return NULL;
    }
    if (a[2] == 'a')
      f->maxdepth = (int)k;
    else
      f->mindepth = (int)k;
    return node(T_TRUE);
  }
  if (!strcmp(a, "-depth") || !strcmp(a, "-d")) {
    f->depth_first = true;
    return node(T_TRUE);
  }
  if (!strcmp(a, "-daystart")) {
    f->daystart = true;
    return node(T_TRUE);
  }
  if (!strcmp(a, "-xdev") || !strcmp(a, "-mount") || !strcmp(a, "-noleaf") ||
      !strcmp(a, "-ignore_readdir_race") || !strcmp(a, "-noignore_readdir_race") ||
      !strcmp(a, "-nowarn") || !strcmp(a, "-warn") || !strcmp(a, "-follow")) {
    if (!strcmp(a, "-follow")) f->follow = true;
    return node(T_TRUE);
  }
  if (!strcmp(a, "-regextype")) {
    if (!(v = need_arg(p, a))) return NULL;
    return node(T_TRUE);
  }
  if (a[0] == '-' && a[1]) {
    perr(p, "unknown predicate `%s'", a);
    return NULL;
  }
  perr(p, "paths must precede expression: `%s'", a);
  return NULL;
}

static bool at_op(FParser *p, const char *const *ops)
{
  if (p->i >= p->ac) return false;
  for (; *ops; ops++)
    if (!strcmp(p->av[p->i], *ops)) return true;
  return false;
}

/* Steps over a binary operator; false after find's message when nothing
 * follows it. */
static bool take_operator(FParser *p, const char *op)
{
  p->i++;
  if (p->i < p->ac) return true;
  perr(p, "invalid expression; you have used a binary operator '%s' with nothing after it.", op);
  return false;
}

/* l K r; NULL, with l freed, when the right side did not parse. */
static FNode *binary(Kind k, FNode *l, FNode *r)
{
  if (!r) {
    free_node(l);
    return NULL;
  }
  FNode *n = node(k);
  n->l = l;
  n->r = r;
  return n;
}

static FNode *parse_and(FParser *p)
{
  FNode *l = parse_primary(p);
  while (l && !p->error && p->i < p->ac) {
    static const char *const stop[] = { "-o", "-or", ",", ")", NULL };
    if (at_op(p, stop)) break;
    static const char *const andops[] = { "-a", "-and", NULL };
    if (at_op(p, andops) && !take_operator(p, "-a")) break;
    l = binary(F_AND, l, parse_primary(p));
    if (!l) return NULL;
  }
  if (p->error) {
    free_node(l);
    return NULL;
  }
  return l;
}

static FNode *parse_orx(FParser *p)
{
  FNode *l = parse_and(p);
  static const char *const orops[] = { "-o", "-or", NULL };
  while (l && !p->error && at_op(p, orops)) {
    if (!take_operator(p, "-o")) break;
    l = binary(F_OR, l, parse_and(p));
    if (!l) return NULL;
  }
  if (p->error) {
    free_node(l);
    return NULL;
  }
  return l;
}

static FNode *parse_or(FParser *p)
{
  FNode *l = parse_orx(p);
  static const char *const comma[] = { ",", NULL };
  while (l && !p->error && at_op(p, comma)) {
    p->i++;
    l = binary(F_COMMA, l, parse_orx(p));
    if (!l) return NULL;
  }
  return l;
}

int box_cmd_find(BoxCmd *c)
{
  Find f = { 0 };
  f.c = c;
  f.maxdepth = -1;
  f.now = time(NULL);
  f.execs = g_ptr_array_new();
  int i = 1;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (!strcmp(a, "-L")) {
      f.follow = true;
      f.follow_args = false;
    } else if (!strcmp(a, "-H")) {
      f.follow_args = true;
      f.follow = false;
    } else if (!strcmp(a, "-P")) {
      f.follow = f.follow_args = false;
    } else if (!strcmp(a, "--")) {
      i++;
      break;
    } else if (a[0] == '-' && a[1] == 'O')
      continue;
    else
      break;
  }
  int first_path = i;
  while (i < c->argc) {
    const char *a = c->argv[i];
    if ((a[0] == '-' && a[1]) || !strcmp(a, "(") || !strcmp(a, "!")) break;
    i++;
  }
  int npaths = i - first_path;
  FParser p = { &f, c->argv + i, c->argc - i, 0, false };
  FNode *expr = NULL;
  if (p.ac > 0) {
    expr = parse_or(&p);
    if (!p.error && p.i < p.ac) {
      if (!strcmp(p.av[p.i], ")"))
        perr(&p, "%s", "invalid expression; you have too many ')'");
      else
        perr(&p, "paths must precede expression: `%s'", p.av[p.i]);
    }
    if (p.error || !expr) {
      if (!p.error) perr(&p, "%s", "invalid expression");
      free_node(expr);
      g_ptr_array_free(f.execs, TRUE);
      return 1;
    }
  }
  if (!f.has_action) {
    FNode *pr = node(A_PRINT);
    if (expr) {
      FNode *n = node(F_AND);
      n->l = expr;
      n->r = pr;
      expr = n;
    } else
      expr = pr;
  }
  f.expr = expr;
  if (f.daystart) {
    struct tm tm;
    localtime_r(&f.now, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_mday += 1;
    tm.tm_isdst = -1;
    f.now = mktime(&tm);
  }
  char *dflt[] = { ".", NULL };
  char **paths = npaths ? c->argv + first_path : dflt;
  if (!npaths) npaths = 1;
  for (int k = 0; k < npaths && !f.quit; k++) {
    const char *root = paths[k];
    if (!*root) {
      bx_err(c, "find", "'': No such file or directory");
      f.status = 1;
      continue;
    }
    FEnt e = { root, root, root, 0, DT_UNKNOWN, false, false, { 0 }, false };
    bool fl = f.follow || f.follow_args;
    int r = fl ? stat(root, &e.st) : lstat(root, &e.st);
    if (r != 0 && fl && errno == ENOENT) r = lstat(root, &e.st);
    if (r != 0) {
      bx_err_q(c, "find", "%s", root, errno);
      f.status = 1;
      continue;
    }
    e.have_st = true;
    visit(&f, &e, NULL);
  }
  for (guint k = 0; k < f.execs->len; k++) flush_batch(&f, f.execs->pdata[k]);
  g_ptr_array_free(f.execs, TRUE);
  free_node(expr);
  box_out_flush(c->out);
  return f.status;
}
