/* first.c — what a fresh Shell will ask its host first, known from the
 * text alone, so boxd can decide it before the worker runs */
#include <string.h>

#include "shell/shell-private.h"

/* The text boxd parses at all: short, and with none
 * of the characters that separate commands, open a subshell, a quote or
 * an expansion (the one plain simple command it looks for has none).  boxd parses on
 * the caller's connection thread; anything else is the worker's to parse,
 * where a crash ends one command and not the box. */
#define FIRST_MAX 4096

static bool flat_text(const char *s)
{
  return s[strcspn(s, ";&|()<>$`'\"\\")] == '\0';
}

/* The text's one top-level command, parsed on sh (a state of its own,
 * never the process's current Shell: boxd parses on many threads), or
 * NULL: none, more than one, or a syntax error.  check_only: no $(…)
 * cache; a syntax error's message goes nowhere (fd 2 closed), the worker
 * prints it.  The node lives in sh's arena (g_ptr_array_free it). */
static Node *parse_alone(Shell *sh, const char *source)
{
  memset(sh, 0, sizeof *sh);
  sh->arena = g_ptr_array_new_with_free_func(g_free);
  sh->check_only = true;
  for (int i = 0; i < BOX_NFD; i++) sh->fd[i] = -1;
  sh->fd_high = 3;
  Parser *p = box_parser_new(sh, source, NULL);
  Node *only = NULL;
  for (;;) {
    Node *n = NULL;
    ParseResult r = box_parse_next(p, &n);
    if (r == PARSE_EOF) break;
    if (r == PARSE_ERROR || (n && only)) {
      only = NULL;
      break;
    }
    if (n) only = n;
  }
  box_parser_free(p);
  return only;
}

static bool bare_simple(const Node *n)
{
  return n && n->kind == N_SIMPLE && n->nredirs == 0 && n->u.simple.nassigns == 0 &&
         n->u.simple.nwords > 0;
}

char *box_text_only_command(const char *source)
{
  Shell sh;
  Node *only = parse_alone(&sh, source);
  Word *first = bare_simple(only) ? only->u.simple.words[0] : NULL;
  char *name = first && (first->flags & W_PLAIN) ? g_strdup(first->text) : NULL;
  g_ptr_array_free(sh.arena, TRUE);
  return name;
}

/* The run (run_simple_inner) asks shell:exec before anything else it does
 * when the text is one simple command whose every word is plain (it
 * expands to itself: no quote, no expansion of any kind) with no
 * assignment or redirection, and its first word names a command the
 * Shell implements: a fresh Shell has no function, alias or option that
 * could come first.  Anything else is left to the worker. */
bool box_shell_first_exec(const char *source, const char *cwd, BoxShellCommand *cmd)
{
  memset(cmd, 0, sizeof *cmd);
  if (!source || !cwd || strnlen(source, FIRST_MAX + 1) > FIRST_MAX || !flat_text(source))
    return false;
  Shell sh;
  Node *only = parse_alone(&sh, source);
  bool ok = bare_simple(only);
  for (size_t i = 0; ok && i < only->u.simple.nwords; i++)
    ok = (only->u.simple.words[i]->flags & W_PLAIN) != 0;
  ok = ok && box_command_lookup(only->u.simple.words[0]->text) != NULL;
  if (ok) {
    size_t nw = only->u.simple.nwords;
    char **argv = g_new0(char *, nw + 1);
    bool *literal = g_new(bool, nw);
    for (size_t i = 0; i < nw; i++) {
      argv[i] = g_strdup(only->u.simple.words[i]->text);
      literal[i] = true;
    }
    cmd->argv = argv;
    cmd->argc = (int)nw;
    cmd->literal = literal;
    /* as decide() rebuilds it: the words joined by single spaces */
    cmd->command = g_strjoinv(" ", argv);
    cmd->program = argv[0];
    cmd->cwd = g_strdup(cwd);
  }
  g_ptr_array_free(sh.arena, TRUE);
  return ok;
}

void box_shell_first_exec_free(BoxShellCommand *cmd)
{
  g_strfreev((char **)cmd->argv);
  g_free((char *)cmd->command);
  g_free((char *)cmd->cwd);
  g_free((bool *)cmd->literal);
  memset(cmd, 0, sizeof *cmd);
}
