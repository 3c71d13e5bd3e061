/* test.c — `test EXPR` and `[ EXPR ]`: POSIX's argument-count rules,
 * -a/-o/!/( ), bash's file and string operators.  File tests open or
 * access paths; the mount decides each. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/builtins.h"
#include "shell/shell-private.h"

/* An integer operand as strtoll reads it (leading white space, a sign,
 * decimal digits; out of range is an error), then only blanks.  By hand:
 * loops test a counter every iteration and strtoll's locale machinery
 * costs more than the whole comparison. */
static bool parse_num(const char *s, int64_t *v)
{
  while (g_ascii_isspace(*s)) s++;
  bool neg = *s == '-';
  if (*s == '-' || *s == '+') s++;
  if (!g_ascii_isdigit(*s)) return false;
  while (*s == '0' && g_ascii_isdigit(s[1])) s++;
  const char *d = s;
  while (g_ascii_isdigit(*s)) s++;
  if (s - d > 19) return false; /* 19 digits still fit in 64 unsigned bits */
  uint64_t u = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; d < s; d++) u = u * 10 + (uint64_t)(*d - '0');
  if (u > limit) return false;
  while (*s == ' ' || *s == '\t') s++;
  if (*s) return false;
  *v = neg ? (int64_t)(0 - u) : (int64_t)u;
  return true;
}

int box_test_unary(Shell *sh, const char *op, const char *a)
{
  struct stat st;
  if (op[0] != '-' || !op[1] || op[2]) return -1;
  switch (op[1]) {
  case 'z': return !*a;
  case 'n': return *a != 0;
  case 'e':
  case 'a': return stat(a, &st) == 0;
  case 'f': return stat(a, &st) == 0 && S_ISREG(st.st_mode);
  case 'd': return stat(a, &st) == 0 && S_ISDIR(st.st_mode);
  case 'L':
  case 'h': return lstat(a, &st) == 0 && S_ISLNK(st.st_mode);
  case 'p': return stat(a, &st) == 0 && S_ISFIFO(st.st_mode);
  case 'S': return stat(a, &st) == 0 && S_ISSOCK(st.st_mode);
  case 'b': return stat(a, &st) == 0 && S_ISBLK(st.st_mode);
  case 'c': return stat(a, &st) == 0 && S_ISCHR(st.st_mode);
  case 's': return stat(a, &st) == 0 && st.st_size > 0;
  case 'r': return access(a, R_OK) == 0;
  case 'w': return access(a, W_OK) == 0;
  case 'x': return access(a, X_OK) == 0;
  case 'u': return stat(a, &st) == 0 && (st.st_mode & S_ISUID);
  case 'g': return stat(a, &st) == 0 && (st.st_mode & S_ISGID);
  case 'k': return stat(a, &st) == 0 && (st.st_mode & S_ISVTX);
  case 'O': return stat(a, &st) == 0 && st.st_uid == geteuid();
  case 'G': return stat(a, &st) == 0 && st.st_gid == getegid();
  case 'N': return stat(a, &st) == 0 && st.st_mtime >= st.st_atime;
  case 't': {
    int64_t fd;
    if (!parse_num(a, &fd)) return 0;
    int real = fd >= 0 && fd < BOX_NFD ? sh->fd[fd] : -1;
    return real >= 0 && isatty(real);
  }
  case 'v': return box_var_isset(sh, a);
  case 'o': {
    int row = box_set_option(a);
    return row >= 0 && box_set_option_get(sh, row, NULL, false);
  }
  default: return -1;
  }
}

/* The integer comparisons -eq -ne -lt -le -gt -ge by their two letters,
 * or 0. */
static int int_op(const char *op)
{
  if (op[0] != '-' || !op[1] || !op[2] || op[3]) return 0;
  int k = op[1] << 8 | op[2];
  switch (k) {
  case 'e' << 8 | 'q':
  case 'n' << 8 | 'e':
  case 'l' << 8 | 't':
  case 'l' << 8 | 'e':
  case 'g' << 8 | 't':
  case 'g' << 8 | 'e': return k;
  default: return 0;
  }
}

/* Both sides of an integer comparison; false after bash's message. */
static bool int_operands(const char *a, const char *b, int64_t *x, int64_t *y, int err_fd)
{
  const char *bad = !parse_num(a, x) ? a : !parse_num(b, y) ? b : NULL;
  if (bad) box_fdprintf(err_fd, "strands-shell: test: %s: integer expression expected\n", bad);
  return !bad;
}

static int int_compare(const char *a, int k, const char *b, int err_fd)
{
  int64_t x, y;
  if (!int_operands(a, b, &x, &y, err_fd)) return 2;
  switch (k) {
  case 'e' << 8 | 'q': return !(x == y);
  case 'n' << 8 | 'e': return !(x != y);
  case 'l' << 8 | 't': return !(x < y);
  case 'l' << 8 | 'e': return !(x <= y);
  case 'g' << 8 | 't': return !(x > y);
  default: return !(x >= y);
  }
}

/* 0 true, 1 false, 2 error. */
int box_test_binary(Shell *sh, const char *a, const char *op, const char *b, int err_fd)
{
  (void)sh;
  int k = int_op(op);
  if (k) return int_compare(a, k, b, err_fd);
  if (!strcmp(op, "=") || !strcmp(op, "==")) return strcmp(a, b) != 0;
  if (!strcmp(op, "!=")) return strcmp(a, b) == 0;
  if (!strcmp(op, "<")) return strcmp(a, b) >= 0;
  if (!strcmp(op, ">")) return strcmp(a, b) <= 0;
  if (op[0] == '-' && strlen(op) == 3) {
    const char *o = op + 1;
    if (!strcmp(o, "nt") || !strcmp(o, "ot") || !strcmp(o, "ef")) {
      struct stat sa, sb;
      bool ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
      if (!strcmp(o, "ef")) return !(ha && hb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
      struct timespec ta = sa.st_mtim, tb = sb.st_mtim;
      int cmp =
        !ha   ? -1
        : !hb ? 1
              : (ta.tv_sec != tb.tv_sec ? (ta.tv_sec > tb.tv_sec ? 1 : -1)
                                        : (ta.tv_nsec > tb.tv_nsec) - (ta.tv_nsec < tb.tv_nsec));
      if (!ha && !hb) return 1;
      return !strcmp(o, "nt") ? !(cmp > 0) : !(cmp < 0);
    }
    /* another -XY: bash still reads both sides as integers first */
    int64_t x, y;
    if (!int_operands(a, b, &x, &y, err_fd)) return 2;
  }
  return 3; /* not a binary operator */
}

static bool is_binop(const char *s)
{
  static const char *const ops[] = { "=",   "==",  "!=",  "<",   ">",   "-eq", "-ne", "-lt",
                                     "-le", "-gt", "-ge", "-nt", "-ot", "-ef", NULL };
  for (int i = 0; ops[i]; i++)
    if (!strcmp(ops[i], s)) return true;
  return false;
}

typedef struct {
  Shell *sh;
  char **v;
  int n, i;
  int err_fd;
  bool err;
} T;

static int t_or(T *t);

static void t_error(T *t, const char *fmt, const char *arg)
{
  if (t->err) return;
  t->err = true;
  box_fdprintf(t->err_fd, "strands-shell: test: ");
  box_fdprintf(t->err_fd, fmt, arg);
  box_fdprintf(t->err_fd, "\n");
}

static int t_prim(T *t)
{
  if (t->i >= t->n) {
    t_error(t, "argument expected%s", "");
    return 0;
  }
  /* `!` and `(` recurse, and the arguments may be built at run time
   * (200,000 `!` ended the worker): bounded by the stack's floor */
  if (box_stack_low()) {
    t_error(t, "maximum nesting depth exceeded%s", "");
    return 0;
  }
  const char *a = t->v[t->i];
  int left = t->n - t->i;
  if (!strcmp(a, "!") && left > 1) {
    t->i++;
    return !t_prim(t);
  }
  if (!strcmp(a, "(") && left > 1) {
    t->i++;
    int r = t_or(t);
    if (t->i >= t->n || strcmp(t->v[t->i], ")")) {
      t_error(t, "`)' expected%s", "");
      return 0;
    }
    t->i++;
    return r;
  }
  if (left >= 3 && is_binop(t->v[t->i + 1])) {
    int r = box_test_binary(t->sh, a, t->v[t->i + 1], t->v[t->i + 2], t->err_fd);
    t->i += 3;
    if (r == 2) t->err = true;
    return r == 0;
  }
  if (a[0] == '-' && a[1] && !a[2] && left >= 2) {
    int r = box_test_unary(t->sh, a, t->v[t->i + 1]);
    if (r >= 0) {
      t->i += 2;
      return r;
    }
    t_error(t, "%s: unary operator expected", a);
    return 0;
  }
  t->i++;
  return *a != 0;
}

static int t_and(T *t)
{
  int r = t_prim(t);
  while (!t->err && t->i < t->n && !strcmp(t->v[t->i], "-a")) {
    t->i++;
    int s = t_prim(t);
    r = r && s;
  }
  return r;
}

static int t_or(T *t)
{
  int r = t_and(t);
  while (!t->err && t->i < t->n && !strcmp(t->v[t->i], "-o")) {
    t->i++;
    int s = t_and(t);
    r = r || s;
  }
  return r;
}

int box_test_eval(Shell *sh, int argc, char **argv, int err_fd)
{
  T t = { sh, argv, argc, 0, err_fd, false };
  if (argc == 3) {
    /* `[ $i -lt N ]`, the test of every counting loop, first */
    int k = int_op(argv[1]);
    if (k) return int_compare(argv[0], k, argv[2], err_fd);
  }
  if (argc == 0) return 1;
  if (argc == 1) return argv[0][0] ? 0 : 1;
  if (argc == 2) {
    if (!strcmp(argv[0], "!")) return argv[1][0] ? 1 : 0;
    int r = box_test_unary(sh, argv[0], argv[1]);
    if (r < 0) {
      box_fdprintf(err_fd, "strands-shell: test: %s: unary operator expected\n", argv[0]);
      return 2;
    }
    return !r;
  }
  if (argc == 3) {
    if (is_binop(argv[1])) {
      int r = box_test_binary(sh, argv[0], argv[1], argv[2], err_fd);
      return r > 2 ? 2 : r;
    }
    if (!strcmp(argv[1], "-a") || !strcmp(argv[1], "-o")) {
      bool x = argv[0][0], y = argv[2][0];
      return !(argv[1][1] == 'a' ? (x && y) : (x || y));
    }
    if (!strcmp(argv[0], "!")) return !box_test_eval(sh, 2, argv + 1, err_fd) ? 1 : 0;
    if (!strcmp(argv[0], "(") && !strcmp(argv[2], ")")) return argv[1][0] ? 0 : 1;
    box_fdprintf(err_fd, "strands-shell: test: %s: binary operator expected\n", argv[1]);
    return 2;
  }
  if (argc == 4 && !strcmp(argv[0], "!")) {
    int r = box_test_eval(sh, 3, argv + 1, err_fd);
    return r == 2 ? 2 : !r;
  }
  int r = t_or(&t);
  if (!t.err && t.i < t.n) {
    box_fdprintf(err_fd, "strands-shell: test: too many arguments\n");
    return 2;
  }
  if (t.err) return 2;
  return !r;
}

int box_cmd_test(BoxCmd *c)
{
  int argc = c->argc - 1;
  char **argv = c->argv + 1;
  if (!strcmp(c->argv[0], "[")) {
    if (argc == 0 || strcmp(argv[argc - 1], "]")) {
      box_fdprintf(c->err, "strands-shell: [: missing `]'\n");
      return 2;
    }
    argc--;
  }
  return box_test_eval(c->sh, argc, argv, c->err);
}
