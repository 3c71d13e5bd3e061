/* io.c — the `awk` command: its options, the main input loop over ARGV,
 * records by RS, getline, print's redirections and the commands awk runs.
 *
 * Files are opened with box_open_file (each open a decision on the mount);
 * `print | cmd`, `cmd | getline` and system() run their text through
 * box_run_text in a forked child, as `eval` would, on pipes to awk. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/commands/awk/awk.h"

/* ---- records ------------------------------------------------------------------ */

static void rr_init(RecReader *r, int fd)
{
  memset(r, 0, sizeof *r);
  r->fd = fd;
}

static bool rr_fill(RecReader *r)
{
  if (r->eof) return false;
  if (r->start > 0) {
    memmove(r->buf, r->buf + r->start, r->end - r->start);
    r->end -= r->start;
    r->start = 0;
  }
  if (r->end == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 65536;
    r->buf = g_realloc(r->buf, r->cap + 1);
  }
  ssize_t n;
  do n = read(r->fd, r->buf + r->end, r->cap - r->end);
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    r->eof = true;
    return false;
  }
  r->end += (size_t)n;
  return true;
}

/* The next record by the current RS: one ended by a single-character RS
 * is handed out of the reader's buffer in *rec (valid until the next
 * call), any other is built in out with *rec NULL. */
static bool rr_next_ptr(Awk *A, RecReader *r, GString *out, const char **rec, size_t *len);

static bool rr_next(Awk *A, RecReader *r, GString *out)
{
  const char *rec;
  size_t len;
  if (!rr_next_ptr(A, r, out, &rec, &len)) return false;
  if (rec) {
    g_string_truncate(out, 0);
    g_string_append_len(out, rec, (gssize)len);
  }
  return true;
}

static bool rr_next_ptr(Awk *A, RecReader *r, GString *out, const char **rec, size_t *len)
{
  *rec = NULL;
  *len = 0;
  const char *rs = awk_var_cstr(A, AV_RS);
  g_string_truncate(out, 0);
  if (rs[0] == 0) {
    /* paragraph mode: blank lines separate, leading newlines skipped */
    for (;;) {
      while (r->start < r->end && r->buf[r->start] == '\n') r->start++;
      if (r->start < r->end) break;
      if (!rr_fill(r)) return false;
    }
    for (size_t scan = r->start;;) {
      char *nl = NULL;
      for (size_t i = scan; i + 1 < r->end; i++)
        if (r->buf[i] == '\n' && r->buf[i + 1] == '\n') {
          nl = r->buf + i;
          break;
        }
      if (nl) {
        g_string_append_len(out, r->buf + r->start, nl - (r->buf + r->start));
        r->start = (size_t)(nl - r->buf);
        while (r->start < r->end && r->buf[r->start] == '\n') r->start++;
        return true;
      }
      size_t off = r->end - r->start;
      if (!rr_fill(r)) {
        size_t e = r->end;
        while (e > r->start && r->buf[e - 1] == '\n') e--;
        g_string_append_len(out, r->buf + r->start, (gssize)(e - r->start));
        r->start = r->end;
        return true;
      }
      scan = r->start + (off ? off - 1 : 0);
    }
  }
  if (rs[1] == 0) {
    size_t scan = r->start;
    for (;;) {
      char *e = r->buf ? memchr(r->buf + scan, rs[0], r->end - scan) : NULL;
      if (e) {
        *rec = r->buf + r->start;
        *len = (size_t)(e - (r->buf + r->start));
        r->start = (size_t)(e - r->buf) + 1;
        return true;
      }
      size_t off = r->end - r->start;
      if (!rr_fill(r)) {
        if (r->end == r->start) return false;
        g_string_append_len(out, r->buf + r->start, (gssize)(r->end - r->start));
        r->start = r->end;
        return true;
      }
      scan = r->start + off;
    }
  }
  /* a longer RS is a regular expression (gawk) */
  regex_t *re = awk_regex(A, rs);
  for (;;) {
    regmatch_t m;
    if (r->end > r->start) {
      r->buf[r->end] = 0;
      if (awk_match(re, r->buf + r->start, r->end - r->start, 0, false, &m, 1) &&
          m.rm_eo > m.rm_so && ((size_t)m.rm_eo < r->end - r->start || r->eof)) {
        g_string_append_len(out, r->buf + r->start, m.rm_so);
        r->start += (size_t)m.rm_eo;
        return true;
      }
    }
    if (r->eof || !rr_fill(r)) {
      if (!r->eof) continue;
      if (r->end == r->start) return false;
      /* a separator that ends the input ends the last record */
      r->buf[r->end] = 0;
      size_t e = r->end - r->start;
      if (awk_match(re, r->buf + r->start, e, 0, false, &m, 1) && m.rm_eo > m.rm_so &&
          (size_t)m.rm_eo == e)
        e = (size_t)m.rm_so;
      g_string_append_len(out, r->buf + r->start, (gssize)e);
      r->start = r->end;
      return true;
    }
  }
}

/* ---- streams -------------------------------------------------------------------- */

static Stream *find_stream(Awk *A, const char *name)
{
  for (guint i = 0; i < A->streams->len; i++) {
    Stream *s = A->streams->pdata[i];
    if (strcmp(s->name, name) == 0) return s;
  }
  return NULL;
}

/* A child that runs text through the Shell; fd_in/fd_out are its 0 and 1. */
static pid_t run_child(Awk *A, const char *text, int fd_in, int fd_out, int close_fd)
{
  BoxCmd *c = A->c;
  awk_flush_all(A);
  pid_t pid = box_fork(c->sh);
  if (pid != 0) return pid;
  signal(SIGPIPE, SIG_DFL);
  if (close_fd >= 0) close(close_fd);
  for (guint i = 0; i < A->streams->len; i++) {
    Stream *s = A->streams->pdata[i];
    if (s->fd >= 0) close(s->fd);
  }
  int st = box_run_text(c->sh, text, fd_in, fd_out, c->err);
  box_child_exit(c->sh, st);
}

static int wait_status(pid_t pid)
{
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 256 + WTERMSIG(st);
}

static Stream *open_stream(Awk *A, const char *name, int kind)
{
  Stream *s = find_stream(A, name);
  if (s) return s;
  int fd = -1;
  pid_t pid = 0;
  if (kind == AR_FILE || kind == AR_APPEND || kind == 10) {
    if (kind == 10 && (strcmp(name, "-") == 0 || strcmp(name, "/dev/stdin") == 0))
      fd = dup(A->c->in);
    else
      fd = box_open_file(name, kind == 10 ? O_RDONLY | O_CLOEXEC
                                          : O_WRONLY | O_CREAT | O_CLOEXEC |
                                              (kind == AR_APPEND ? O_APPEND : O_TRUNC));
    if (fd < 0) return NULL;
  } else {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return NULL;
    if (kind == AR_PIPE) {
      pid = run_child(A, name, p[0], A->c->out_fd, p[1]);
      close(p[0]);
      fd = p[1];
    } else {
      pid = run_child(A, name, A->c->in, p[1], p[0]);
      close(p[1]);
      fd = p[0];
    }
    if (pid < 0) {
      close(fd);
      return NULL;
    }
  }
  s = g_new0(Stream, 1);
  s->name = g_strdup(name);
  s->kind = kind;
  s->fd = fd;
  s->pid = pid;
  if (kind < 10) {
    s->out = g_new(BoxOut, 1);
    box_out_init(s->out, fd);
  } else {
    rr_init(&s->rd, fd);
  }
  g_ptr_array_add(A->streams, s);
  return s;
}

static int close_stream(Awk *A, Stream *s)
{
  int st = 0;
  if (s->out) {
    box_out_flush(s->out);
    g_free(s->out);
  }
  g_free(s->rd.buf);
  if (s->fd >= 0) close(s->fd);
  if (s->pid > 0) st = wait_status(s->pid);
  g_ptr_array_remove(A->streams, s);
  g_free(s->name);
  g_free(s);
  return st;
}

int awk_close(Awk *A, const char *name)
{
  Stream *s = find_stream(A, name);
  if (!s) return -1;
  return close_stream(A, s);
}

void awk_flush_all(Awk *A)
{
  box_out_flush(A->c->out);
  for (guint i = 0; i < A->streams->len; i++) {
    Stream *s = A->streams->pdata[i];
    if (s->out) box_out_flush(s->out);
  }
}

int awk_fflush(Awk *A, const char *name, bool all)
{
  if (all || strcmp(name, "/dev/stdout") == 0) {
    if (all)
      awk_flush_all(A);
    else
      box_out_flush(A->c->out);
    return 0;
  }
  Stream *s = find_stream(A, name);
  if (!s || !s->out) return -1;
  box_out_flush(s->out);
  return 0;
}

int awk_system(Awk *A, const char *cmd)
{
  pid_t pid = run_child(A, cmd, A->c->in, A->c->out_fd, -1);
  if (pid < 0) return -1;
  return wait_status(pid);
}

/* ---- print ---------------------------------------------------------------------- */

void awk_print(Awk *A, ANode *n)
{
  GString *o = g_string_new(NULL);
  if (n->op == S_PRINT) {
    if (n->nargs == 0) { g_string_append(o, A->fields[0].s ? A->fields[0].s : ""); }
    const char *ofs = NULL;
    for (int i = 0; i < n->nargs; i++) {
      if (i) {
        if (!ofs) ofs = awk_var_cstr(A, AV_OFS);
        g_string_append(o, ofs);
      }
      Val v = awk_eval(A, n->args[i]);
      char *s = awk_to_ostr(A, &v);
      awk_val_free(&v);
      g_string_append(o, s);
      g_free(s);
    }
    g_string_append(o, awk_var_cstr(A, AV_ORS));
  } else {
    size_t len;
    char *s = awk_sprintf(A, n->args, n->nargs, &len);
    g_string_append_len(o, s, (gssize)len);
    g_free(s);
  }
  BoxOut *out = A->c->out;
  if (n->ival != AR_NONE) {
    Val t = awk_eval(A, n->a);
    char *name = awk_to_str(A, &t);
    awk_val_free(&t);
    if (n->ival != AR_PIPE && (strcmp(name, "/dev/stdout") == 0 || strcmp(name, "-") == 0)) {
      out = A->c->out;
    } else if (n->ival != AR_PIPE && strcmp(name, "/dev/stderr") == 0) {
      /* unbuffered, and ahead of what stdout still holds, as gawk's */
      box_write_all(A->c->err, o->str, o->len);
      g_free(name);
      g_string_free(o, TRUE);
      return;
    } else {
      Stream *s = open_stream(A, name, n->ival);
      if (!s) {
        int e = errno;
        char *t2 = box_error_text(A->c->sh, e);
        g_string_free(o, TRUE);
        box_out_flush(A->c->out);
        box_fdprintf(A->c->err, "awk: cannot redirect to \"%s\" (%s)\n", name, t2);
        g_free(t2);
        g_free(name);
        A->exit_status = 2;
        A->jmp_kind = 9;
        longjmp(*A->jmp_exit, 1);
      }
      out = s->out;
    }
    g_free(name);
  }
  box_out_write(out, o->str, o->len);
  g_string_free(o, TRUE);
  awk_check_out(A, out);
}

void awk_check_out(Awk *A, BoxOut *out)
{
  if (!out->error) return;
  /* gawk ends as by SIGPIPE when its reader has gone (yes | awk | head) */
  if (out->err == EPIPE) {
    A->exit_status = 141;
  } else {
    char *t = box_error_text(A->c->sh, out->err);
    box_fdprintf(A->c->err, "awk: write error: %s\n", t);
    g_free(t);
    A->exit_status = 2;
  }
  out->len = 0;
  A->jmp_kind = 9;
  longjmp(*A->jmp_exit, 1);
}

/* ---- the main input -------------------------------------------------------------- */

static void apply_assignment(Awk *A, const char *arg)
{
  const char *eq = strchr(arg, '=');
  char *name = g_strndup(arg, (gsize)(eq - arg));
  int idx = awk_var_lookup(A, name);
  g_free(name);
  if (idx >= A->nvars) {
    A->vars = g_renew(AVar, A->vars, idx + 1);
    memset(A->vars + A->nvars, 0, sizeof(AVar) * (size_t)(idx + 1 - A->nvars));
    A->nvars = idx + 1;
  }
  char *val = awk_unescape(eq + 1, strlen(eq + 1), false);
  AVar *v = &A->vars[idx];
  awk_val_free(&v->v);
  v->kind = K_SCALAR;
  v->v = awk_strnum(val);
  if (idx == AV_NF) awk_set_nf(A, (int)v->v.n);
}

bool awk_is_assignment(const char *arg);
bool awk_is_assignment(const char *arg)
{
  const char *p = arg;
  if (!(g_ascii_isalpha(*p) || *p == '_')) return false;
  while (g_ascii_isalnum(*p) || *p == '_') p++;
  return *p == '=';
}

static char *argv_at(Awk *A, int i)
{
  char key[32];
  g_snprintf(key, sizeof key, "%d", i);
  AVar *argv = &A->vars[AV_ARGV];
  if (argv->kind != K_ARRAY) return NULL;
  Val *v = awk_array_ref(A, argv, key, false);
  return v ? awk_to_str(A, v) : NULL;
}

/* Opens the next operand of ARGV (assignments applied on the way);
 * false when none is left. */
static bool open_next_main(Awk *A)
{
  for (;;) {
    Val argc = awk_val_copy(&A->vars[AV_ARGC].v);
    int n = (int)awk_to_num(A, &argc);
    awk_val_free(&argc);
    if (A->argi >= n) {
      if (A->used_file) return false;
      A->used_file = true;
      rr_init(&A->main_rd, dup(A->c->in));
      A->main_open = true;
      return true;
    }
    char *arg = argv_at(A, A->argi++);
    if (!arg || !arg[0]) {
      g_free(arg);
      continue;
    }
    if (awk_is_assignment(arg)) {
      apply_assignment(A, arg);
      g_free(arg);
      continue;
    }
    A->used_file = true;
    int fd = strcmp(arg, "-") == 0 || strcmp(arg, "/dev/stdin") == 0
               ? dup(A->c->in)
               : box_open_file(arg, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      /* gawk stops here: the operands after it are not read, END not run */
      char *t = box_error_text(A->c->sh, errno);
      char m[4096];
      g_snprintf(m, sizeof m, "cannot open file `%s' for reading: %s", arg, t);
      g_free(t);
      g_free(arg);
      awk_fatal(A, "%s", m);
    }
    awk_set_var_str(A, AV_FILENAME, arg);
    g_free(arg);
    rr_init(&A->main_rd, fd);
    A->main_open = true;
    A->fnr = 0;
    awk_set_var_num(A, AV_FNR, 0);
    return true;
  }
}

void awk_close_main(Awk *A);
void awk_close_main(Awk *A)
{
  if (!A->main_open) return;
  close(A->main_rd.fd);
  g_free(A->main_rd.buf);
  A->main_open = false;
}

/* The next main record into $0 (to_record) or into s; false at the end
 * of all input. */
bool awk_next_main(Awk *A, GString *s, bool to_record);
bool awk_next_main(Awk *A, GString *s, bool to_record)
{
  for (;;) {
    if (!A->main_open && !open_next_main(A)) return false;
    const char *rec;
    size_t len;
    if (rr_next_ptr(A, &A->main_rd, s, &rec, &len)) {
      if (to_record) {
        awk_set_record(A, rec ? rec : s->str, rec ? len : s->len);
      } else if (rec) {
        g_string_truncate(s, 0);
        g_string_append_len(s, rec, (gssize)len);
      }
      /* NR and FNR may have been assigned */
      A->nr = awk_to_num(A, &A->vars[AV_NR].v) + 1;
      A->fnr = awk_to_num(A, &A->vars[AV_FNR].v) + 1;
      awk_set_var_num(A, AV_NR, A->nr);
      awk_set_var_num(A, AV_FNR, A->fnr);
      return true;
    }
    awk_close_main(A);
  }
}

Val awk_getline(Awk *A, ANode *n)
{
  GString *s = g_string_new(NULL);
  bool got;
  if (n->ival == GL_PLAIN) {
    got = awk_next_main(A, s, false);
  } else {
    Val t = awk_eval(A, n->b);
    char *name = awk_to_str(A, &t);
    awk_val_free(&t);
    Stream *st = open_stream(A, name, n->ival == GL_FILE ? 10 : 11);
    g_free(name);
    if (!st || st->kind < 10) {
      g_string_free(s, TRUE);
      return awk_num(-1);
    }
    /* gawk counts neither form in NR */
    got = rr_next(A, &st->rd, s);
  }
  if (!got) {
    g_string_free(s, TRUE);
    return awk_num(0);
  }
  if (n->a) {
    awk_assign(A, n->a, awk_strnum(g_string_free(s, FALSE)));
  } else {
    awk_set_record(A, s->str, s->len);
    g_string_free(s, TRUE);
  }
  return awk_num(1);
}

void awk_close_all(Awk *A);
void awk_close_all(Awk *A)
{
  box_out_flush(A->c->out);
  while (A->streams->len) close_stream(A, A->streams->pdata[0]);
  awk_close_main(A);
}
