/* decide.c — the Shell's shell:exec decisions: a command's line and its
 * literal words as the host sees them, one command's decision, the first
 * decisions of a pipeline's stages asked in one round before the fork, and
 * a stage's child taking its answer. */
#include <string.h>

#include "shell/shell-private.h"

/* The command line as one string: in buf when it fits (most do; a
 * decision per command should not cost a malloc), else g_malloc'd —
 * release it with join_free. */
static char *join_line_in(char **av, int argc, char *buf, size_t bufsize)
{
  if (bufsize) {
    /* one pass into buf: command lines are short, and the lengths of
     * words of a few bytes cost more to measure than to copy */
    char *p = buf, *end = buf + bufsize - 1;
    int i = 0;
    for (; i < argc; i++) {
      if (i) {
        if (p == end) break;
        *p++ = ' ';
      }
      const char *w = av[i];
      while (*w && p < end) *p++ = *w++;
      if (*w) break;
    }
    if (i == argc) {
      *p = 0;
      return buf;
    }
  }
  size_t len = 0;
  for (int i = 0; i < argc; i++) len += strlen(av[i]) + 1;
  char *s = g_malloc(len + 1);
  char *p = s;
  for (int i = 0; i < argc; i++) {
    if (i) *p++ = ' ';
    size_t l = strlen(av[i]);
    memcpy(p, av[i], l);
    p += l;
  }
  *p = 0;
  return s;
}

static void join_free(char *s, char *buf)
{
  if (s != buf) g_free(s);
}

char *box_exec_join_line(char **av, int argc)
{
  char *s = join_line_in(av, argc, NULL, 0);
  return s;
}

/* Per word of av, whether it was written literally: known for the argv
 * of the simple command being run, else every word counts as expanded. */
const bool *box_exec_literal_for(Shell *sh, char **av, int argc, bool **owned)
{
  *owned = NULL;
  if (av == sh->lit_av && argc == sh->lit_argc && sh->lit) return sh->lit;
  *owned = g_new0(bool, argc > 0 ? argc : 1);
  return *owned;
}

void box_exec_command_for_host(Shell *sh, BoxShellCommand *cmd, char *line, char **av, int argc,
                               const char *program, const char *cwd, bool **owned)
{
  memset(cmd, 0, sizeof *cmd);
  cmd->command = line;
  cmd->program = program;
  cmd->argv = av;
  cmd->argc = argc;
  cmd->cwd = cwd;
  cmd->literal = box_exec_literal_for(sh, av, argc, owned);
}

static void say_denied(Shell *sh, const char *msg)
{
  box_sh_error(sh, "effect denied: %s", msg ? msg : "policy denied this operation");
}

bool box_exec_decide(Shell *sh, char **av, int argc, const char *program)
{
  const BoxShellHost *host = sh->host;
  if (!host || !host->decide_exec) return true;
  char buf[512];
  char *line = join_line_in(av, argc, buf, sizeof buf);
  BoxShellCommand cmd;
  bool *owned;
  box_exec_command_for_host(sh, &cmd, line, av, argc, program, sh->cwd, &owned);
  char *msg = NULL;
  bool ok = host->decide_exec(host->data, &cmd, &msg);
  g_free(owned);
  join_free(line, buf);
  if (!ok) say_denied(sh, msg);
  free(msg);
  return ok;
}

Node *box_exec_first_decision(Shell *sh, Node *c)
{
  const BoxShellHost *host = sh->host;
  /* a DEBUG trap runs before the command, and may change what it names */
  if (!host || !host->decide_exec || sh->traps[TRAP_DEBUG]) return NULL;
  /* a group runs its first command first, unless its redirections come
   * before it */
  while (!c->nredirs && (c->kind == N_GROUP || c->kind == N_SEQ))
    c = c->kind == N_GROUP ? c->u.un.child : c->u.bin.left;
  if (c->kind != N_SIMPLE || !c->u.simple.nwords) return NULL;
  /* words that expand to themselves: nothing runs or is asked to get
   * them, and they are what the child will ask with (its assignments and
   * redirections come after its decision) */
  for (size_t i = 0; i < c->u.simple.nwords; i++)
    if (!(c->u.simple.words[i]->flags & W_PLAIN)) return NULL;
  Node *fn;
  const BoxCommandDef *def;
  box_lookup_simple(sh, c, c->u.simple.words[0]->text, true, &fn, &def);
  return fn || def ? c : NULL;
}

void box_exec_decide_ahead(Shell *sh, Node *const *ns, size_t n, bool *permit, char **messages)
{
  const BoxShellHost *host = sh->host;
  BoxShellCommand *cmds = g_new0(BoxShellCommand, n);
  size_t most = 1;
  for (size_t i = 0; i < n; i++) most = MAX(most, ns[i]->u.simple.nwords);
  bool *literal = g_new(bool, most);
  for (size_t i = 0; i < most; i++) literal[i] = true;
  for (size_t i = 0; i < n; i++) {
    size_t nw = ns[i]->u.simple.nwords;
    char **av = g_new0(char *, nw + 1);
    for (size_t w = 0; w < nw; w++) av[w] = ns[i]->u.simple.words[w]->text;
    cmds[i] = (BoxShellCommand){ .command = box_exec_join_line(av, (int)nw),
                                 .program = av[0],
                                 .argv = av,
                                 .argc = (int)nw,
                                 .cwd = sh->cwd,
                                 .literal = literal };
  }
  if (host->decide_exec_many) {
    host->decide_exec_many(host->data, cmds, (int)n, permit, messages);
  } else {
    for (size_t i = 0; i < n; i++) {
      messages[i] = NULL;
      permit[i] = host->decide_exec(host->data, &cmds[i], &messages[i]);
    }
  }
  for (size_t i = 0; i < n; i++) {
    g_free((char *)cmds[i].command);
    g_free((char **)cmds[i].argv);
  }
  g_free(literal);
  g_free(cmds);
}

/* A pipeline's child takes the answer its parent asked for before the
 * fork (box_exec_decide_ahead) rather than ask again. */
bool box_exec_decide_simple(Shell *sh, const Node *n, char **av, int argc)
{
  if (G_LIKELY(sh->ahead_node != n)) return box_exec_decide(sh, av, argc, av[0]);
  sh->ahead_node = NULL;
  bool ok = sh->ahead_permit;
  if (!ok) say_denied(sh, sh->ahead_message);
  free(sh->ahead_message);
  sh->ahead_message = NULL;
  return ok;
}
