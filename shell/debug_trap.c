/* debug_trap.c — the DEBUG trap, $BASH_COMMAND, and the traps a function
 * call hides from its body (bash's errtrace and functrace rules). */
#include "shell/shell-private.h"

/* A function runs without the caller's ERR trap unless errtrace (set -E),
 * and without its RETURN trap unless functrace (set -T); a trap it sets
 * stays after it, one it leaves unset gives the caller's back — bash's
 * rules, which `trap - ERR` inside a function also follows. */
char *box_trap_hide(Shell *sh, int trap, unsigned keep_opt)
{
  if (sh->opts & keep_opt) return NULL;
  char *t = sh->traps[trap];
  sh->traps[trap] = NULL;
  return t;
}

void box_trap_unhide(Shell *sh, int trap, char *saved)
{
  if (!saved) return;
  if (sh->traps[trap])
    g_free(saved);
  else
    sh->traps[trap] = saved;
}

/* $BASH_COMMAND is the command being run, the one a trap interrupted
 * while the trap runs; printed only when something reads it, as most
 * scripts never do. */
void box_note_command(Shell *sh, const Node *n)
{
  if (sh->in_trap || sh->in_exit_trap) return;
  sh->cmd_node = n;
  if (G_UNLIKELY(sh->cmd_text != NULL)) {
    g_free(sh->cmd_text);
    sh->cmd_text = NULL;
  }
}

/* (( )) as written, where the printer would space it */
static char *command_text(const Node *n)
{
  return n->kind == N_ARITH ? g_strdup_printf("((%s))", n->u.arith.expr)
                            : box_command_text((Node *)n);
}

const char *box_bash_command(Shell *sh)
{
  if (!sh->cmd_text && sh->cmd_node) sh->cmd_text = command_text(sh->cmd_node);
  return sh->cmd_text;
}

/* The DEBUG trap runs before a command with its text as $BASH_COMMAND and
 * the status before it as $?; NULL text leaves $BASH_COMMAND (a function's
 * entry under functrace repeats its call's). */
bool box_debug_run(Shell *sh, long line, const char *text)
{
  if (!sh->traps[TRAP_DEBUG] || sh->in_trap) return true;
  sh->lineno = line;
  if (text && !sh->in_exit_trap) {
    g_free(sh->cmd_text);
    sh->cmd_text = g_strdup(text);
  }
  box_run_trap_text(sh, sh->traps[TRAP_DEBUG]);
  return sh->jump != J_EXIT;
}

/* Also where bash notes a simple command as $BASH_COMMAND: the parent does
 * for a pipeline's simple elements and & jobs, before it forks them. */
bool box_debug_trap(Shell *sh, const Node *n)
{
  if (n->kind == N_SIMPLE) box_note_command(sh, n);
  if (!sh->traps[TRAP_DEBUG] || sh->in_trap) return true;
  if (n == sh->debug_done) {
    sh->debug_done = NULL;
    return true;
  }
  if (n->kind != N_SIMPLE && n->kind != N_ARITH && n->kind != N_COND) return true;
  char *t = command_text(n);
  bool ok = box_debug_run(sh, n->line, t);
  g_free(t);
  return ok;
}
