/* exec.c — the evaluator: lists, compound commands, simple commands and
 * their assignments, functions, set -e; every simple command (function,
 * builtin, implemented command) asks shell:exec (decide.c), every other
 * program goes to the host as shell:spawn.  Pipelines and jobs are in
 * jobs.c, redirections in redir.c, [[ ]] in cond.c. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/shell-private.h"

/* The status a fatal expansion error (set -u's unset name, ${x:?}) ends
 * the shell with: 127 at the top, 1 in a subshell, pipeline stage or
 * substitution, or under set -e — as bash. */
static int fatal_status(Shell *sh, int st)
{
  return st == 127 && (sh->in_child || (sh->opts & O_ERREXIT)) ? 1 : st;
}

/* An expansion or assignment failed with status st: the shell ends, or
 * only the top-level command when the error was one bash discards. */
static int expansion_failed(Shell *sh, int st)
{
  if (sh->discard) {
    sh->discard = false;
    sh->jump = J_DISCARD;
    sh->status = 1;
    return 1;
  }
  sh->jump = J_EXIT;
  sh->exit_status = fatal_status(sh, st);
  return sh->exit_status;
}

int box_expansion_failed(Shell *sh, int st)
{
  return expansion_failed(sh, st);
}

/* A simple command's words failed to expand.  Where set -e is ignored
 * (not by `!`), bash counts the context up while it expands and the
 * error jumps past the count back down: comsub_ignore. */
static void words_failed(Shell *sh, const Node *n, int st)
{
  if (sh->discard && sh->errexit_off > sh->invert_depth) sh->comsub_ignore = true;
  box_child_words_failed(sh, n);
  expansion_failed(sh, st);
}

/* ---- errexit / ERR -------------------------------------------------------------- */

/* armed: the ERR trap was set when the command began — bash's rule, so a
 * function that sets the trap and returns 1 does not fire it at its call */
static void after_status(Shell *sh, const Node *n, int status, bool armed)
{
  if (status == 0 || sh->errexit_off > 0 || sh->jump != J_NONE || n == sh->status_quiet) return;
  /* the trap sees the failed command's status as $? */
  if (armed && sh->traps[TRAP_ERR] && !sh->in_trap) {
    sh->status = status;
    /* bash runs DEBUG first, as for a command of its own */
    if (sh->traps[TRAP_DEBUG] && !box_debug_run(sh, sh->lineno, NULL)) return;
    box_run_trap_text(sh, sh->traps[TRAP_ERR]);
  }
  if (sh->opts & O_ERREXIT) {
    sh->jump = J_EXIT;
    sh->exit_status = status;
  }
}

/* ---- simple commands --------------------------------------------------------------- */

static void xtrace(Shell *sh, GPtrArray *words, Word **assigns, size_t na)
{
  (void)assigns;
  (void)na;
  const char *ps4 = box_var_get(sh, "PS4");
  GString *g = g_string_new(ps4 ? ps4 : "+ ");
  for (guint i = 0; i < words->len; i++) {
    if (i) g_string_append_c(g, ' ');
    char *q = box_quote(words->pdata[i]);
    g_string_append(g, q);
    g_free(q);
  }
  g_string_append_c(g, '\n');
  box_write_all(sh->fd[2], g->str, g->len);
  g_string_free(g, TRUE);
}

/* After a builtin, (( )) or [[ ]] in which an array subscript's
 * arithmetic failed (vars.c): the command goes, as bash's (`let 'b[08]=1'`,
 * `(( b[1/0] ))`, `unset 'b[08]'`, `declare -i n=08`).  True then. */
static bool drop_for_subscript(Shell *sh)
{
  if (!sh->subscript_failed) return false;
  sh->subscript_failed = false;
  sh->discard = true;
  expansion_failed(sh, 1);
  return true;
}

int box_exec_run_builtin(Shell *sh, const BoxCommandDef *def, int argc, char **av)
{
  BoxOut outbuf;
  BoxOut *out = &outbuf;
  box_out_init(out, sh->fd[1]);
  BoxCmd c = { sh, argc, av, sh->fd[0], sh->fd[1], sh->fd[2], out };
  sh->subscript_failed = false;
  const char *outer = sh->builtin;
  sh->builtin = av[0];
  /* a program the Shell implements stands for a process of its own, which
   * alone a closed pipe would end (jobs.c, on_pipe) */
  bool utility = def->kind == BOX_CMD_UTILITY;
  sig_atomic_t outer_in = box_in_utility, outer_broke = box_pipe_broke;
  if (utility) {
    box_in_utility = 1;
    box_pipe_broke = 0;
  }
  box_apply_tz(sh);
  int status = def->fn(&c);
  sh->builtin = outer;
  if (drop_for_subscript(sh)) status = -1;
  if (!box_out_flush(out) && status == 0) {
    if (out->err == EPIPE && box_pipe_broke)
      status = 141;
    else {
      box_sh_error(sh, "%s: write error: %s", av[0], box_strerror(out->err));
      status = 1;
    }
  }
  if (utility) {
    if (box_pipe_broke) status = 128 + SIGPIPE;
    box_in_utility = outer_in;
    box_pipe_broke = outer_broke;
  }
  return status < 0 ? 1 : status;
}

/* One `NAME=value` before a command.  bash takes `B=(b c) prog` as the
 * text "(b c)" (expanded as a value is), no array: environments hold
 * strings. */
static bool temp_assign_one(Shell *sh, const char *t, const char *eq, const char *name, int *status)
{
  size_t vl = strlen(eq + 1);
  if (eq[-1] == '+' || vl < 2 || eq[1] != '(' || eq[vl] != ')')
    return box_assign_word(sh, t, false, status);
  char *val = box_expand_str(sh, eq + 1, true, status);
  if (!val) return false;
  return box_var_set_take(sh, name, val);
}

GArray *box_exec_temp_assign(Shell *sh, Word **as, size_t na, int *status)
{
  GArray *saved = g_array_new(FALSE, FALSE, sizeof(SavedVar));
  for (size_t i = 0; i < na; i++) {
    const char *t = as[i]->text;
    const char *eq = box_assign_eq(t);
    size_t nl = (size_t)(eq - t);
    if (nl && t[nl - 1] == '+') nl--;
    char *name = g_strndup(t, nl);
    if (strchr(name, '[')) {
      g_free(name);
      continue;
    }
    SavedVar tv = { name, NULL };
    gpointer k, v;
    if (g_hash_table_lookup_extended(sh->vars, name, &k, &v)) {
      ShellVar *copy = g_new0(ShellVar, 1);
      ShellVar *o = v;
      copy->flags = o->flags;
      copy->value = g_strdup(o->value);
      tv.saved = copy;
      if (o->flags & (V_ARRAY | V_ASSOC)) {
        g_free(copy);
        tv.saved = NULL;
        g_free(name);
        box_assign_word(sh, t, false, status);
        continue;
      }
    }
    g_array_append_val(saved, tv);
    if (!temp_assign_one(sh, t, eq, name, status)) break;
    box_var_export(sh, name);
  }
  return saved;
}

/* What a program gets as its descriptors (BoxShellCommand.fds): the
 * Shell's 0 and 3…9, then each pipe of a process substitution at its own
 * number, which its /dev/fd/N word names. */
static int program_fds(const Shell *sh, int fds[BOX_SPAWN_MAX_FDS])
{
  int n = 0;
  for (int i = 0; i < BOX_SPAWN_MAX_FDS; i++) fds[i] = -1;
  for (int i = 0; i <= 9; i++)
    if (i > 2 || i == 0) {
      fds[i] = sh->fd[i];
      if (fds[i] >= 0) n = i + 1;
    }
  for (guint i = 0; sh->procsub_fds && i < sh->procsub_fds->len; i++) {
    int fd = g_array_index(sh->procsub_fds, int, i);
    if (fd > 2 && fd < BOX_SPAWN_MAX_FDS && fds[fd] < 0) {
      fds[fd] = fd;
      n = MAX(n, fd + 1);
    }
  }
  return n;
}

static int spawn_program(Shell *sh, int argc, char **av, Word **as, size_t na)
{
  const BoxShellHost *host = sh->host;
  int status = 0;
  /* the Shell's PATH, where its own view holds it; the host finds the rest */
  g_autofree char *found = box_lookup_in_view(sh, av[0]);
  if (found && box_run_script(sh, found, argc, av, as, na, &status)) {
    box_lookup_ran(sh, av[0], found);
    return status;
  }
  if (!found && box_run_linked_python(sh, argc, av, as, na, &status)) return status;
  int why = found ? 0 : box_lookup_why_not(sh, av[0]);
  if (why) {
    /* bash's words and status for a file execve refuses */
    box_sh_error(sh, "%s: %s", av[0], why == EISDIR ? "Is a directory" : "Permission denied");
    return 126;
  }
  GArray *tmp = na ? box_exec_temp_assign(sh, as, na, &status) : NULL;
  char **envp = box_var_environ(sh);
  if (tmp) box_var_restore(sh, tmp);
  char *line = box_exec_join_line(av, argc);
  BoxShellCommand cmd;
  bool *owned;
  box_exec_command_for_host(sh, &cmd, line, av, argc, found ? found : av[0], sh->cwd, &owned);
  cmd.envp = envp;
  int fds[BOX_SPAWN_MAX_FDS];
  cmd.nfds = program_fds(sh, fds);
  cmd.fds = fds;
  int efd = sh->fd[2] >= 0 ? sh->fd[2] : -1;
  int ofd = sh->fd[1];
  BoxSpawnResult r = { BOX_SPAWN_NOT_FOUND, 127, NULL };
  if (host && host->spawn) r = host->spawn(host->data, &cmd, ofd, efd);
  switch (r.kind) {
  case BOX_SPAWN_RAN:
    status = r.status;
    box_lookup_ran(sh, av[0], found);
    break;
  case BOX_SPAWN_NOT_FOUND:
    /* bash's words: a path word names a file that is not there (a refused
     * one answers exactly so), a bare name one no PATH entry holds */
    box_sh_error(sh, strchr(av[0], '/') ? "%s: No such file or directory" : "%s: command not found",
                 av[0]);
    status = 127;
    break;
  case BOX_SPAWN_DENIED:
    box_sh_error(sh, "effect denied: %s", r.message ? r.message : "policy denied this operation");
    status = 126;
    break;
  case BOX_SPAWN_NO_TOOL:
  case BOX_SPAWN_FAILED:
  default:
    box_sh_error(sh, "%s: %s", av[0], r.message ? r.message : "cannot run");
    status = 126;
    break;
  }
  free(r.message);
  g_free(owned);
  g_free(line);
  g_strfreev(envp);
  return status;
}

/* For policy history: tells the host the
 * status of a command the Shell implements, as decided (cwd at decision). */
static void report_exec_status(Shell *sh, int argc, char **av, const char *cwd, int status)
{
  char *line = box_exec_join_line(av, argc);
  BoxShellCommand cmd;
  bool *owned;
  box_exec_command_for_host(sh, &cmd, line, av, argc, av[0], cwd, &owned);
  sh->host->exec_status(sh->host->data, &cmd, status);
  g_free(owned);
  g_free(line);
}

/* A POSIX special builtin's name (set -o posix: no function may take it). */
static bool is_special_name(const char *name)
{
  const BoxCommandDef *d = box_command_lookup(name);
  return d && d->kind == BOX_CMD_SPECIAL;
}

/* A command's temporary assignments stay: what they hid is dropped, but
 * where the command unset one (`x=v unset x`) the variable it hid is back. */
static void keep_temp(Shell *sh, GArray *tmp)
{
  for (guint i = tmp->len; i-- > 0;) {
    SavedVar *s = &g_array_index(tmp, SavedVar, i);
    if (s->saved && !g_hash_table_contains(sh->vars, s->name)) {
      g_hash_table_insert(sh->vars, s->name, s->saved);
      continue;
    }
    if (s->saved) {
      g_free(s->saved->value);
      g_free(s->saved);
    }
    g_free(s->name);
  }
  g_array_free(tmp, TRUE);
}

/* Runs an expanded command line; fn/def are what av[0] names (found by
 * the caller), decided whether its shell:exec decision is already made. */
static int run_found(Shell *sh, int argc, char **av, Word **as, size_t na, Node *fn,
                     const BoxCommandDef *def, bool decided)
{
  int status = 0;
  const char *name = av[0];
  if (!fn && !def) return spawn_program(sh, argc, av, as, na);
  if (!decided && !box_exec_decide(sh, av, argc, name)) return 126;
  /* the permitted shell:exec's ::response (output.status) */
  char *decided_cwd = sh->host && sh->host->exec_status ? g_strdup(sh->cwd) : NULL;
  GArray *tmp = na ? box_exec_temp_assign(sh, as, na, &status) : NULL;
  if (fn && tmp) {
    /* the function's temporary scope, for its `unset` (box_var_unset_temp) */
    GArray *outer = sh->temp_scope;
    guint outer_frames = sh->temp_frames;
    sh->temp_scope = tmp;
    sh->temp_frames = sh->frames->len;
    status = box_call_function(sh, fn, argc, av);
    sh->temp_scope = outer;
    sh->temp_frames = outer_frames;
  } else if (fn) {
    status = box_call_function(sh, fn, argc, av);
  } else {
    status = box_exec_run_builtin(sh, def, argc, av);
  }
  if (tmp && (sh->opts & O_INERT_POSIX) && !fn && def->kind == BOX_CMD_SPECIAL)
    keep_temp(sh, tmp); /* set -o posix: a special builtin's assignments stay */
  else if (tmp)
    box_var_restore(sh, tmp);
  if (decided_cwd) report_exec_status(sh, argc, av, decided_cwd, status);
  g_free(decided_cwd);
  return status;
}

int box_exec_run_argv(Shell *sh, int argc, char **av, Word **as, size_t na, bool skip_funcs)
{
  Node *fn;
  const BoxCommandDef *def;
  box_lookup_first_word(sh, av[0], skip_funcs, &fn, &def);
  return run_found(sh, argc, av, as, na, fn, def, false);
}

int box_run_argv(Shell *sh, char **argv, int in, int out, int err)
{
  int argc = 0;
  while (argv[argc]) argc++;
  if (!argc) return 0;
  BoxSaved saved;
  box_saved_begin(sh, &saved);
  for (int i = 0; i < 3; i++) box_saved_touch(&saved, i);
  sh->fd[0] = in;
  sh->fd[1] = out;
  sh->fd[2] = err;
  int st = box_exec_run_argv(sh, argc, argv, NULL, 0, false);
  box_saved_restore(sh, &saved);
  return st;
}

int box_run_text(Shell *sh, const char *text, int in, int out, int err)
{
  BoxSaved saved;
  box_saved_begin(sh, &saved);
  for (int i = 0; i < 3; i++) box_saved_touch(&saved, i);
  sh->fd[0] = in;
  sh->fd[1] = out;
  sh->fd[2] = err;
  int st = box_eval_text(sh, text, NULL);
  box_saved_restore(sh, &saved);
  return st;
}

/* Per expanded word, whether it was literal (no heap for short lines),
 * and the copies of a command's literal words: argv holds a copy the
 * command may write in, and a malloc and a free per word were most of the
 * cost of `[ $i -lt 9 ]`. */
typedef struct {
  bool *v;
  size_t n, cap;
  bool buf[32];
  size_t used;
  char text[256];
} LitBuf;

/* A copy of a literal word's text, in lit->text while it has room. */
static char *lit_copy(LitBuf *l, const char *s)
{
  size_t n = strlen(s) + 1;
  if (n > sizeof l->text - l->used) return g_strdup(s);
  char *d = l->text + l->used;
  memcpy(d, s, n);
  l->used += n;
  return d;
}

/* Frees the words of argv that are not copies in lit->text. */
static void argv_release(GPtrArray *argv, const LitBuf *l)
{
  uintptr_t lo = (uintptr_t)l->text, hi = lo + sizeof l->text;
  for (guint i = 0; i < argv->len; i++) {
    uintptr_t w = (uintptr_t)argv->pdata[i];
    if (w < lo || w >= hi) g_free(argv->pdata[i]);
  }
  g_ptr_array_set_size(argv, 0);
}

static void lit_push(LitBuf *l, bool b)
{
  if (l->n == l->cap) {
    bool *nv = g_new(bool, l->cap * 2);
    memcpy(nv, l->v, l->n);
    if (l->v != l->buf) g_free(l->v);
    l->v = nv;
    l->cap *= 2;
  }
  l->v[l->n++] = b;
}

/* A word the declaration builtins take as an assignment: NAME=…, NAME+=…,
 * NAME[…]=…, not an array literal (declare.c parses those itself). */
G_GNUC_NO_INLINE static bool decl_assignment(const char *t)
{
  const char *p = t;
  if (!(*p == '_' || g_ascii_isalpha(*p))) return false;
  while (*p == '_' || g_ascii_isalnum(*p)) p++;
  if (*p == '[') {
    p = strchr(p, ']');
    if (!p) return false;
    p++;
  }
  if (*p == '+') p++;
  return *p == '=' && p[1] != '(';
}

/* Out of line: run_simple_inner, which asks it of every command, stays
 * small enough to be inlined into the evaluator's loop. */
G_GNUC_NO_INLINE static bool is_decl_builtin(const Word *w)
{
  static const char *const names[] = { "local", "export", "declare", "typeset", "readonly", NULL };
  for (int i = 0; names[i]; i++)
    if (strcmp(w->text, names[i]) == 0) return true;
  return false;
}

/* $_ after a simple command: its last word (an assignment alone: empty).
 * A loop's `[ $i -lt 9 ]; i=$((i+1))` alternates "]" and "": the buffer
 * keeps the "]" of the literal word that copied it and "" is a flag, so
 * neither is copied again each time round. */
G_GNUC_NO_INLINE static void set_last_arg_copy(Shell *sh, const Word *w, const char *s)
{
  size_t n = strlen(s) + 1;
  if (n > sh->last_arg_size) {
    /* one buffer, grown only: a loop's commands allocate nothing for it */
    g_free(sh->last_arg);
    sh->last_arg_size = n < 64 ? 64 : n;
    sh->last_arg = g_malloc(sh->last_arg_size);
  }
  memcpy(sh->last_arg, s, n);
  sh->last_arg_word = w;
  sh->last_arg_empty = false;
}

static inline void set_last_arg(Shell *sh, const Word *w, const char *s)
{
  if (w && (w->flags & W_PLAIN)) {
    if (sh->last_arg_word == w) {
      sh->last_arg_empty = false;
      return;
    }
  } else {
    w = NULL;
  }
  set_last_arg_copy(sh, w, s);
}

/* A declaration's NAME=(…) or NAME+=(…) as written: bash leaves NAME as
 * $_.  The length of NAME, or 0. */
static size_t compound_name_len(const char *s)
{
  size_t nl = strcspn(s, "+=");
  if (!box_is_name(s, nl)) return 0;
  const char *op = s[nl] == '+' ? "+=(" : "=(";
  return strncmp(s + nl, op, strlen(op)) == 0 ? nl : 0;
}

G_GNUC_NO_INLINE static bool expand_decl_value(Shell *sh, const Word *w, GPtrArray *argv, int *est)
{
  char *val = box_expand_decl_word(sh, w->text, est);
  if (val) g_ptr_array_add(argv, val);
  return val != NULL;
}

/* set -k: every assignment word of the command is one, wherever it
 * stands.  Fills *out (its arrays from the caller's buffers) and returns
 * it, or n when there is none past the command's name. */
static Node *keyword_assigns(Node *n, Node *out, Word **assigns, Word **words)
{
  size_t na = n->u.simple.nassigns, nw = 0;
  memcpy(assigns, n->u.simple.assigns, na * sizeof *assigns);
  for (size_t i = 0; i < n->u.simple.nwords; i++) {
    Word *w = n->u.simple.words[i];
    if (i > 0 && (w->flags & W_ASSIGN))
      assigns[na++] = w;
    else
      words[nw++] = w;
  }
  if (nw == n->u.simple.nwords) return n;
  *out = *n;
  out->u.simple.assigns = assigns;
  out->u.simple.nassigns = na;
  out->u.simple.words = words;
  out->u.simple.nwords = nw;
  out->u.simple.def = NULL;
  return out;
}

static int run_simple_inner(Shell *sh, Node *n, LitBuf *lit, GPtrArray *argv)
{
  int status = 0;
  Node keyword_node;
  size_t total = n->u.simple.nassigns + n->u.simple.nwords;
  if (G_UNLIKELY(sh->opts & O_KEYWORD) && n->u.simple.nwords > 1 && total <= 4096) {
    n = keyword_assigns(n, &keyword_node, g_newa(Word *, total), g_newa(Word *, total));
  }
  Word **words = n->u.simple.words;
  size_t nw = n->u.simple.nwords;
  sh->lineno = n->line;
  if (!box_check_limits(sh)) return sh->exit_status;
  int est = 1;
  bool expand_ok = true;
  sh->discard = false;
  /* a command whose words all vanish (`$(exit 4)`) has the status of its
   * last substitution: counted from its first word, not its assignments */
  sh->subst_status = -1;
  /* `local v=$x`, `export p=$x`: the value is not split or globbed */
  char c0 = nw > 1 ? words[0]->text[0] : 0; /* most commands are told apart by their first letter */
  bool decl = c0 && (words[0]->flags & W_PLAIN) &&
              (c0 == 'l' || c0 == 'e' || c0 == 'd' || c0 == 't' || c0 == 'r') &&
              is_decl_builtin(words[0]);
  for (size_t i = 0; i < nw && expand_ok; i++) {
    guint before = argv->len;
    if (words[i]->flags & W_PLAIN) {
      g_ptr_array_add(argv, lit_copy(lit, words[i]->text));
      lit_push(lit, true);
      continue;
    }
    if (G_UNLIKELY(decl) && i > 0 && decl_assignment(words[i]->text)) {
      expand_ok = expand_decl_value(sh, words[i], argv, &est);
    } else {
      expand_ok = box_expand_words(sh, &words[i], 1, argv, &est);
    }
    bool literal = !strpbrk(words[i]->text, "$`*?[~{");
    if (argv->len != before + 1) literal = false;
    for (guint k = before; k < argv->len; k++) lit_push(lit, literal);
  }
  if (!expand_ok) {
    /* an expansion error ends a non-interactive shell */
    words_failed(sh, n, est);
    return est;
  }
  size_t na = n->u.simple.nassigns;
  if (argv->len == 0) {
    for (size_t i = 0; i < na; i++) {
      int st = 1;
      if (!box_assign_word(sh, n->u.simple.assigns[i]->text, false, &st)) {
        if (st == 1 || st == 2 || st == 127) {
          /* as bash: an expansion error ends the shell, set -u's with 127 */
          words_failed(sh, n, st == 127 ? 127 : 1);
        }
        return 1;
      }
      if (sh->opts & O_XTRACE) {
        const char *ps4 = box_var_get(sh, "PS4");
        box_fdprintf(sh->fd[2], "%s%s\n", ps4 ? ps4 : "+ ", n->u.simple.assigns[i]->text);
      }
    }
    status = sh->subst_status >= 0 ? sh->subst_status : 0;
    sh->last_arg_empty = true;
    if (n->nredirs) {
      BoxSaved sv;
      box_saved_begin(sh, &sv);
      if (!box_apply_redirs(sh, n->redirs, n->nredirs, &sv)) status = 1;
      box_saved_restore(sh, &sv);
    }
    return status;
  }
  int argc = (int)argv->len;
  g_ptr_array_add(argv, NULL);
  char **av = (char **)argv->pdata;
  sh->lit_av = av;
  sh->lit = lit->v;
  sh->lit_argc = argc;
  sh->lit_node = n;
  if (sh->opts & O_XTRACE) {
    GPtrArray *shown = g_ptr_array_new();
    for (int i = 0; i < argc; i++) g_ptr_array_add(shown, av[i]);
    xtrace(sh, shown, n->u.simple.assigns, na);
    g_ptr_array_free(shown, TRUE);
  }
  Node *fn;
  const BoxCommandDef *def;
  box_lookup_simple(sh, n, av[0], words[0]->flags & W_PLAIN, &fn, &def);
  bool implemented = fn || def;
  if (implemented && !box_exec_decide_simple(sh, n, av, argc)) { return 126; }
  /* `exec` or `exec --`: only redirections, which stay */
  bool is_exec =
    (argc == 1 || (argc == 2 && strcmp(av[1], "--") == 0)) && strcmp(av[0], "exec") == 0;
  /* Without redirections there is nothing to put back: what the command
   * does to the table stays, as `eval 'exec 3>f'` and a function's exec
   * leave it in bash. */
  BoxSaved sv;
  if (n->nredirs) {
    /* bash expands a program's redirections in the child it forked: what
     * they assign (${u=v}, $((i++)), {fd}>f) is gone after it, and a fatal
     * expansion (${u:?}) ends only that command */
    bool program = !fn && (!def || def->kind == BOX_CMD_UTILITY);
    GArray *journal = program ? box_var_journal_begin(sh) : NULL;
    box_saved_begin(sh, &sv);
    /* exec's table is not put back: it holds nothing exec may not close */
    if (is_exec) box_saved_keep(sh, &sv);
    sh->failglob_hit = false;
    bool ok = box_apply_redirs(sh, n->redirs, n->nredirs, is_exec ? NULL : &sv);
    if (journal) box_var_journal_end(sh, journal);
    /* a target that matched nothing under failglob fails only a
     * program, in its child; elsewhere the line goes, as in bash */
    if (!ok && program && sh->failglob_hit && sh->jump == J_DISCARD) sh->jump = J_NONE;
    if (!ok) {
      box_saved_restore(sh, &sv);
      if (sh->jump != J_EXIT || !program) return 1;
      sh->jump = J_NONE;
      return sh->exit_status;
    }
  }
  if (is_exec) {
    /* exec with only redirections: they stay, and $_ is exec */
    set_last_arg(sh, words[nw - 1], av[0]);
    return 0;
  }
  status = run_found(sh, argc, av, n->u.simple.assigns, na, fn, def, implemented);
  const char *last = av[argc - 1];
  size_t nl = compound_name_len(last);
  /* bash's unset cuts its NAME[key] words at the bracket, $_ with them */
  size_t ul = !fn && def && argc > 1 && strcmp(av[0], "unset") == 0 ? strcspn(last, "[") : 0;
  if (!last[ul] || last[strlen(last) - 1] != ']' || !box_is_name(last, ul)) ul = 0;
  if (sh->jump == J_DISCARD) {
    /* an error that drops the rest of the line (m[$u]= in a function)
     * leaves $_ as the command that made it set it: bash's does */
  } else if ((nl && strcmp(last, words[nw - 1]->text) == 0) || ul) {
    g_autofree char *name = g_strndup(last, ul ? ul : nl);
    set_last_arg(sh, NULL, name);
  } else {
    set_last_arg(sh, words[nw - 1], last);
  }
  if (n->nredirs) box_saved_restore(sh, &sv);
  return status;
}

/* ---- the tree walker ------------------------------------------------------------------- */

/* An arithmetic text of for (( … )): expanded first when it holds $, `
 * or quotes (`i<$n`), as (( )) is. */
static bool arith_for_part(Shell *sh, const Node *n, const char *e, int64_t *v)
{
  if (sh->traps[TRAP_DEBUG]) {
    g_autofree char *t = g_strdup_printf("((%s))", e + strspn(e, " \t"));
    if (!box_debug_run(sh, n->line, t)) return false;
  }
  /* its messages name "((" as (( )) does, and $LINENO is the header's
   * line each time round, as bash's */
  const char *who = sh->arith_who;
  sh->arith_who = "((";
  sh->lineno = n->line;
  int st = 1;
  char *x = strpbrk(e, "$`\"'\\") ? box_expand_arith(sh, e, &st) : NULL;
  bool ok = (x || !strpbrk(e, "$`\"'\\")) && box_arith(sh, x ? x : e, v);
  sh->arith_who = who;
  g_free(x);
  return ok;
}

static int eval_cond_ctx(Shell *sh, Node *n)
{
  sh->errexit_off++;
  int st = box_eval(sh, n);
  sh->errexit_off--;
  return st;
}

/* `a && b || c …` leans left: ((a && b) || c).  Its left spine is walked
 * from the innermost operator out, so a chain of 50,000 operators is a
 * loop, not a recursion that deep.  As the recursion would: every operand
 * but the last one runs where set -e is ignored. */
static int eval_and_or(Shell *sh, Node *n)
{
  Node *few[16];
  size_t k = 0;
  Node *m = n;
  for (; (m->kind == N_AND || m->kind == N_OR) && (m == n || !m->nredirs); m = m->u.bin.left) k++;
  Node **ops = k <= G_N_ELEMENTS(few) ? few : g_new(Node *, k);
  m = n;
  for (size_t i = k; i-- > 0; m = m->u.bin.left) ops[i] = m;
  int status = eval_cond_ctx(sh, m);
  for (size_t i = 0; i < k && sh->jump == J_NONE; i++) {
    if ((status == 0) != (ops[i]->kind == N_AND)) continue;
    status = i + 1 < k ? eval_cond_ctx(sh, ops[i]->u.bin.right) : box_eval(sh, ops[i]->u.bin.right);
  }
  if (ops != few) g_free(ops);
  return status;
}

static bool loop_jump(Shell *sh, bool *stop)
{
  /* returns true when the loop must end */
  *stop = false;
  if (sh->jump == J_BREAK) {
    if (--sh->jump_n <= 0) sh->jump = J_NONE;
    *stop = true;
    return true;
  }
  if (sh->jump == J_CONTINUE) {
    if (--sh->jump_n <= 0) {
      sh->jump = J_NONE;
      return false;
    }
    *stop = true;
    return true;
  }
  if (sh->jump != J_NONE) {
    *stop = true;
    return true;
  }
  return false;
}

/* Runs a simple command; while it runs, the host can learn which of its
 * words were literal (BoxShellCommand.literal).  Not inlined: its buffers
 * would widen the frame of eval_inner, which recursion stacks several
 * times per function call, and lower how deep scripts can recurse. */
G_GNUC_NO_INLINE static int run_simple(Shell *sh, Node *n)
{
  char **save_av = sh->lit_av;
  bool *save_lit = sh->lit;
  int save_argc = sh->lit_argc;
  const Node *save_node = sh->lit_node;
  LitBuf lit;
  lit.v = lit.buf;
  lit.n = 0;
  lit.cap = G_N_ELEMENTS(lit.buf);
  lit.used = 0;
  /* argv arrays are reused: a loop runs its commands without allocating one */
  if (!sh->argv_pool) sh->argv_pool = g_ptr_array_new();
  GPtrArray *argv = sh->argv_pool->len
                      ? g_ptr_array_steal_index_fast(sh->argv_pool, sh->argv_pool->len - 1)
                      : g_ptr_array_new();
  int status = run_simple_inner(sh, n, &lit, argv);
  bool keep = argv->len <= 256 && sh->argv_pool->len < 64;
  argv_release(argv, &lit);
  if (keep)
    g_ptr_array_add(sh->argv_pool, argv);
  else
    g_ptr_array_free(argv, TRUE);
  sh->lit_av = save_av;
  sh->lit = save_lit;
  sh->lit_argc = save_argc;
  sh->lit_node = save_node;
  if (lit.v != lit.buf) g_free(lit.v);
  return status;
}

/* What a stage run in this shell may change that its child would have
 * kept to itself: $_, $?, $LINENO, and how the stage's own errors end. */
#define STAGE_KEPT(X)                                                                              \
  X(last_arg)                                                                                      \
  X(last_arg_size)                                                                                 \
  X(last_arg_word)                                                                                 \
  X(last_arg_empty) X(status) X(lineno) X(comsub_ignore) X(in_child) X(status_quiet)
#define STAGE_FIELD(f) __typeof__(((Shell *)0)->f) f;
#define STAGE_SAVE(f) kept.f = sh->f;
#define STAGE_RESTORE(f) sh->f = kept.f;

int box_exec_stage_here(Shell *sh, Node *n)
{
  struct {
    STAGE_KEPT(STAGE_FIELD)
  } kept;
  STAGE_KEPT(STAGE_SAVE)
  const Node *cmd = sh->cmd_node;
  /* the stage reads the shell's $_ and sets its own in a copy */
  if (kept.last_arg) sh->last_arg = g_memdup2(kept.last_arg, kept.last_arg_size);
  /* as the forked stage would be: a fatal error in a simple one ends it
   * with bash's 127, in a group with 1 (box_child_simple), and the stage's
   * own status is the pipeline's to judge */
  sh->in_child = n->kind != N_SIMPLE;
  sh->status_quiet = n;
  /* a simple stage leaves PIPESTATUS alone, as eval_inner would not */
  int status = n->kind == N_SIMPLE ? run_simple(sh, n) : box_eval(sh, n);
  /* the child would end here: errexit, or a failed expansion (the deadline's
   * message comes again from this shell at its next fork, as after a child) */
  if (sh->jump == J_EXIT) status = sh->exit_status & 255;
  if (sh->jump == J_DISCARD) status = 1;
  sh->jump = J_NONE;
  /* an answer asked ahead for a command the stage did not reach */
  if (sh->ahead_node) {
    sh->ahead_node = NULL;
    free(sh->ahead_message);
    sh->ahead_message = NULL;
  }
  if (sh->cmd_node != cmd) {
    sh->cmd_node = cmd;
    g_free(sh->cmd_text);
    sh->cmd_text = NULL;
  }
  if (sh->last_arg != kept.last_arg) g_free(sh->last_arg);
  STAGE_KEPT(STAGE_RESTORE)
  return status;
}

/* A for loop's DEBUG trap, before each of its rounds: the loop's head as
 * written is its $BASH_COMMAND. */
static bool debug_for(Shell *sh, const Node *n)
{
  GString *g = g_string_new("for ");
  g_string_append(g, n->u.forn.var);
  if (n->u.forn.in) g_string_append(g, " in");
  for (size_t k = 0; k < n->u.forn.nwords; k++)
    g_string_append_printf(g, " %s", n->u.forn.words[k]->text);
  bool ok = box_debug_run(sh, n->line, g->str);
  g_string_free(g, TRUE);
  return ok;
}

static int eval_inner(Shell *sh, Node *n)
{
  int status = 0;
  switch (n->kind) {
  case N_SIMPLE: {
    guint nps = sh->procsub_fds ? sh->procsub_fds->len : 0;
    bool armed = sh->traps[TRAP_ERR] != NULL;
    if (!box_debug_trap(sh, n)) return sh->exit_status;
    status = run_simple(sh, n);
    /* the command is done with the pipes of its <(…) and >(…) */
    if (sh->procsub_fds && sh->procsub_fds->len > nps) {
      for (guint i = nps; i < sh->procsub_fds->len; i++)
        close(g_array_index(sh->procsub_fds, int, i));
      g_array_set_size(sh->procsub_fds, nps);
    }
    box_set_pipestatus1(sh, status);
    after_status(sh, n, status, armed);
    break;
  }
  case N_PIPE:
    status = box_run_pipe(sh, n);
    after_status(sh, n, status, true);
    break;
  case N_SEQ:
    /* the chain leans right (parser.c, list_add): walked, not recursed */
    for (;;) {
      box_eval(sh, n->u.bin.left);
      if (sh->jump != J_NONE) return sh->status;
      n = n->u.bin.right;
      if (n->kind != N_SEQ || n->nredirs) break;
    }
    status = box_eval(sh, n);
    break;
  case N_AND:
  case N_OR: status = eval_and_or(sh, n); break;
  case N_NOT:
    sh->invert_depth++;
    status = eval_cond_ctx(sh, n->u.un.child) == 0 ? 1 : 0;
    sh->invert_depth--;
    break;
  case N_BACKGROUND: status = box_run_background(sh, n); break;
  case N_TIME: status = box_eval_timed(sh, n); break;
  case N_SUBSHELL: {
    sh->lineno = n->line;
    /* bash's ERR trap names a ( … ) that failed */
    if (sh->traps[TRAP_ERR]) box_note_command(sh, n);
    pid_t pid = box_fork(sh);
    if (pid < 0) return 1;
    if (pid == 0) {
      sh->loop_depth = 0; /* ( break ) leaves no loop of the parent's */
      int st = box_eval(sh, n->u.un.child);
      box_child_exit(sh, st);
    }
    status = box_wait_foreground(sh, pid);
    box_set_pipestatus1(sh, status);
    after_status(sh, n, status, true);
    break;
  }
  case N_GROUP: status = box_eval(sh, n->u.un.child); break;
  case N_IF: {
    int c = eval_cond_ctx(sh, n->u.ifn.cond);
    if (sh->jump != J_NONE) return c;
    if (c == 0)
      status = box_eval(sh, n->u.ifn.then);
    else if (n->u.ifn.els)
      status = box_eval(sh, n->u.ifn.els);
    else
      status = 0;
    break;
  }
  case N_WHILE:
  case N_UNTIL: {
    sh->loop_depth++;
    for (;;) {
      if (!box_check_limits(sh)) break;
      int c = eval_cond_ctx(sh, n->u.loop.cond);
      bool stop;
      if (sh->jump != J_NONE && loop_jump(sh, &stop) && stop) break;
      if ((c == 0) != (n->kind == N_WHILE)) break;
      status = box_eval(sh, n->u.loop.body);
      if (sh->jump != J_NONE && loop_jump(sh, &stop) && stop) break;
    }
    sh->loop_depth--;
    break;
  }
  case N_FOR: {
    if (!box_is_name(n->u.forn.var, strlen(n->u.forn.var))) {
      box_sh_error(sh, "`%s': not a valid identifier", n->u.forn.var);
      return 1;
    }
    GPtrArray *items = g_ptr_array_new_with_free_func(g_free);
    if (n->u.forn.in) {
      int st = 1;
      if (!box_expand_words(sh, n->u.forn.words, n->u.forn.nwords, items, &st)) {
        g_ptr_array_free(items, TRUE);
        return expansion_failed(sh, st);
      }
    } else {
      for (int i = 0; i < sh->npos; i++) g_ptr_array_add(items, g_strdup(sh->pos[i]));
    }
    sh->loop_depth++;
    for (guint i = 0; i < items->len; i++) {
      if (!box_check_limits(sh)) break;
      if (sh->traps[TRAP_DEBUG] && !debug_for(sh, n)) break;
      if (!box_var_set(sh, n->u.forn.var, items->pdata[i])) {
        status = 1;
        break;
      }
      status = box_eval(sh, n->u.forn.body);
      bool stop;
      if (sh->jump != J_NONE && loop_jump(sh, &stop) && stop) break;
    }
    sh->loop_depth--;
    g_ptr_array_free(items, TRUE);
    break;
  }
  case N_ARITH_FOR: {
    int64_t v;
    if (!arith_for_part(sh, n, n->u.afor.init, &v)) return 1;
    sh->loop_depth++;
    for (;;) {
      if (!box_check_limits(sh)) break;
      const char *c = n->u.afor.cond;
      while (*c == ' ') c++;
      if (*c) {
        if (!arith_for_part(sh, n, n->u.afor.cond, &v)) {
          status = 1;
          break;
        }
        if (!v) break;
      }
      status = box_eval(sh, n->u.afor.body);
      bool stop;
      if (sh->jump != J_NONE && loop_jump(sh, &stop) && stop) break;
      if (!arith_for_part(sh, n, n->u.afor.step, &v)) {
        status = 1;
        break;
      }
    }
    sh->loop_depth--;
    break;
  }
  case N_CASE: {
    if (sh->traps[TRAP_DEBUG]) {
      g_autofree char *t = g_strdup_printf("case %s in ", n->u.casen.word->text);
      if (!box_debug_run(sh, n->line, t)) return sh->exit_status;
    }
    int st = 1;
    char *w = box_expand_str(sh, n->u.casen.word->text, false, &st);
    if (!w) return expansion_failed(sh, st);
    status = 0;
    bool fall = false;
    for (size_t i = 0; i < n->u.casen.nitems; i++) {
      CaseItem *it = &n->u.casen.items[i];
      bool m = fall;
      for (size_t k = 0; !m && k < it->npats; k++) {
        char *pat = box_expand_pattern(sh, it->pats[k]->text, &st);
        if (!pat) {
          /* as the word's: ${u:?} ends the shell, an arithmetic error
           * the line */
          g_free(w);
          return expansion_failed(sh, st);
        }
        m = box_pattern_match(sh, pat, w, false);
        g_free(pat);
      }
      if (!m) continue;
      status = it->body ? box_eval(sh, it->body) : 0;
      if (sh->jump != J_NONE) break;
      if (it->term == 1) {
        fall = true;
        continue;
      }
      fall = false;
      if (it->term == 2) continue;
      break;
    }
    g_free(w);
    break;
  }
  case N_FUNCDEF:
    if (G_UNLIKELY(sh->opts & O_INERT_POSIX) && is_special_name(n->u.func.name)) {
      /* set -o posix: no function hides a special builtin; the shell ends */
      box_sh_error(sh, "`%s': is a special builtin", n->u.func.name);
      sh->jump = J_EXIT;
      sh->exit_status = 2;
      return 2;
    }
    /* a name with quoting or an expansion in it is none bash defines */
    if (G_UNLIKELY(strpbrk(n->u.func.name, "$'\"\\"))) {
      box_sh_error(sh, "`%s': not a valid identifier", n->u.func.name);
      status = 1;
      break;
    }
    /* the file that defines it, BASH_SOURCE's entry for its calls */
    if (!n->u.func.source) {
      const char *src = box_callstack_source(sh);
      n->u.func.source = box_arena_strndup(sh, src, strlen(src));
    }
    g_hash_table_insert(sh->funcs, g_strdup(n->u.func.name), n);
    status = 0;
    break;
  case N_ARITH: {
    box_note_command(sh, n);
    if (!box_debug_trap(sh, n)) return sh->exit_status;
    sh->lineno = n->line;
    int64_t v;
    const char *e = n->u.arith.expr;
    char *x = NULL;
    if (strpbrk(e, "$`\"'\\")) { /* a backslash-newline continues the line */
      int st = 1;
      x = box_expand_arith(sh, e, &st);
      if (!x) return 1;
      e = x;
    }
    if (sh->opts & O_XTRACE) box_fdprintf(sh->fd[2], "+ (( %s ))\n", e);
    sh->arith_unbound = false;
    sh->arith_who = "((";
    sh->subscript_failed = false;
    status = box_arith(sh, e, &v) ? (v == 0) : 1;
    sh->arith_who = NULL;
    if (drop_for_subscript(sh)) {
      g_free(x);
      return 1;
    }
    sh->discard = false; /* (( )) fails with 1 and the list goes on */
    if (sh->arith_unbound) {
      /* set -u: an unset name ends the shell, as bash */
      sh->arith_unbound = false;
      g_free(x);
      sh->jump = J_EXIT;
      sh->exit_status = fatal_status(sh, 127);
      return sh->exit_status;
    }
    g_free(x);
    box_set_pipestatus1(sh, status); /* a command of its own to PIPESTATUS */
    after_status(sh, n, status, true);
    break;
  }
  case N_COND: {
    box_note_command(sh, n);
    if (!box_debug_trap(sh, n)) return sh->exit_status;
    sh->lineno = n->line;
    int err = 0;
    sh->subscript_failed = false;
    int r = box_cond_eval(sh, n->u.cond.c, &err);
    if (drop_for_subscript(sh)) return 1;
    if (err & BOX_COND_FATAL) return expansion_failed(sh, err & 0xff);
    status = err ? err : !r;
    box_set_pipestatus1(sh, status);
    after_status(sh, n, status, true);
    break;
  }
  }
  return status;
}

/* Text run within text by ., sh and $(…) as deep as BOX_MAX_RECURSION,
 * and any recursion (eval of eval, a function's eval) as deep as the stack
 * allows: beyond, the run stops with the Shell's message (spec/shell.md,
 * status 1) instead of a crash. */
static int too_deep(Shell *sh)
{
  box_sh_error(sh, "maximum recursion depth exceeded");
  sh->jump = J_EXIT;
  sh->exit_status = 1;
  sh->status = 1;
  return 1;
}

/* A compound with redirections.  Out of line: the saved table is over a
 * kilobyte, and in box_eval's frame it would be stacked at every level of
 * every recursion, lowering how deep a script's functions can go. */
G_GNUC_NO_INLINE static int eval_redirected(Shell *sh, Node *n, bool *applied)
{
  BoxSaved sv;
  box_saved_begin(sh, &sv);
  *applied = box_apply_redirs(sh, n->redirs, n->nredirs, &sv);
  if (!*applied) {
    box_saved_restore(sh, &sv);
    sh->status = 1;
    return 1;
  }
  int status = eval_inner(sh, n);
  box_saved_restore(sh, &sv);
  return status;
}

int box_eval(Shell *sh, Node *n)
{
  if (!n) return 0;
  if (sh->jump != J_NONE) return sh->status;
  if (G_UNLIKELY(sh->depth > BOX_MAX_RECURSION || box_stack_low())) return too_deep(sh);
  int status;
  if (n->nredirs && n->kind != N_SIMPLE) {
    bool applied;
    status = eval_redirected(sh, n, &applied);
    if (!applied) {
      /* bash 5.2: a compound whose redirection failed fails as a command
       * does (set -e ends the shell, ERR runs) */
      after_status(sh, n, status, true);
      return status;
    }
  } else {
    status = eval_inner(sh, n);
  }
  sh->status = status;
  if (box_any_pending) box_run_pending_traps(sh);
  return status;
}
