/* find_parse.c — find's expression: the tests, actions and operators of
 * its command line parsed into the tree that find.c evaluates, with GNU's
 * messages for what does not parse. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/find.h"

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

/* find's answer to a test's argument that is not a number: NULL, with n
 * freed. */
static FNode *bad_arg(FParser *p, FNode *n, const char *v, const char *a)
{
  free_node(n);
  char *m = g_strdup_printf("invalid argument `%s' to `%s'", v, a);
  perr(p, "%s", m);
  g_free(m);
  return NULL;
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
    return bad_arg(p, n, v, a);
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
    if (!parse_num(v, &n->cmp, &n->num, NULL)) { return bad_arg(p, n, v, a); }
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

/* One level of the grammar: operands parsed by lower, joined into k by
 * the operator ops spell (op in its message); with stop, operands side by
 * side are joined too, up to a stop word. */
static FNode *parse_level(FParser *p, Kind k, FNode *(*lower)(FParser *), const char *op,
                          const char *const *ops, const char *const *stop)
{
  FNode *l = lower(p);
  while (l && !p->error && p->i < p->ac) {
    if (stop && at_op(p, stop)) break;
    if (at_op(p, ops)) {
      if (!take_operator(p, op)) break;
    } else if (!stop)
      break;
    l = binary(k, l, lower(p));
    if (!l) return NULL;
  }
  if (p->error) {
    free_node(l);
    return NULL;
  }
  return l;
}

static FNode *parse_and(FParser *p)
{
  static const char *const andops[] = { "-a", "-and", NULL };
  static const char *const stop[] = { "-o", "-or", ",", ")", NULL };
  return parse_level(p, F_AND, parse_primary, "-a", andops, stop);
}

static FNode *parse_orx(FParser *p)
{
  static const char *const orops[] = { "-o", "-or", NULL };
  return parse_level(p, F_OR, parse_and, "-o", orops, NULL);
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
bool bx_find_parse(Find *f, char **av, int ac)
{
  FParser p = { f, av, ac, 0, false };
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
      return false;
    }
  }
  if (!f->has_action) {
    FNode *pr = node(A_PRINT);
    if (expr) {
      FNode *n = node(F_AND);
      n->l = expr;
      n->r = pr;
      expr = n;
    } else
      expr = pr;
  }
  f->expr = expr;
  return true;
}

void bx_find_clear(Find *f)
{
  g_ptr_array_free(f->execs, TRUE);
  free_node(f->expr);
}
