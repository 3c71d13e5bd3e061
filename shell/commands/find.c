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

#include "shell/commands/find.h"

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
    bool r = box_fnmatch(n->s, name, n->kind == T_INAME ? FNM_CASEFOLD : 0) == 0;
    g_free(tmp);
    return r;
  }
  case T_PATH:
  case T_IPATH: return box_fnmatch(n->s, e->path, n->kind == T_IPATH ? FNM_CASEFOLD : 0) == 0;
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
  if (!bx_find_parse(&f, c->argv + i, c->argc - i)) {
    bx_find_clear(&f);
    return 1;
  }
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
  bx_find_clear(&f);
  box_out_flush(c->out);
  return f.status;
}
