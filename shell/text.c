/* text.c — text the Shell runs as it reads it (eval, source, traps, a new
 * shell's -c or file): each complete command parsed, then run, in turn. */
#include "shell/shell-private.h"

/* script: a new shell's text, whose syntax error ends it as bash -c's does
 * (box_run_commands): 2, or the status before it for one inside [[ ]] */
static int eval_text_at(Shell *sh, const char *text, const char *name, int line, bool script)
{
  Parser *p = box_parser_new_at(sh, text, name, line);
  int status = 0;
  sh->status = sh->status;
  for (;;) {
    Node *n = NULL;
    ParseResult r = box_parse_next(p, &n);
    if (r == PARSE_EOF) break;
    if (r == PARSE_ERROR) {
      int st = box_parse_error_status(p);
      status = !script ? 2 : st < 0 ? sh->status : st;
      break;
    }
    if (!n && box_parse_skipped(p)) status = sh->status = 1;
    if (n && !(sh->opts & O_NOEXEC)) status = box_eval(sh, n);
    if (sh->jump != J_NONE) break;
  }
  box_parser_free(p);
  return status;
}

static int eval_text(Shell *sh, const char *text, const char *name, bool script)
{
  /* after eval, source or mapfile's callback, $BASH_COMMAND is again the
   * command that ran the text, as bash's parse_and_execute leaves it */
  const Node *cmd = sh->cmd_node;
  char *cmd_text = sh->cmd_text;
  sh->cmd_text = NULL;
  int st = eval_text_at(sh, text, name, 1, script);
  /* an error that drops the command (a readonly assignment, an arithmetic
   * error) drops what the text had left, as bash's parse_and_execute does:
   * eval and source then fail, and the command after them runs */
  if (sh->jump == J_DISCARD) {
    sh->jump = J_NONE;
    st = sh->status = 1;
  }
  g_free(sh->cmd_text);
  sh->cmd_node = cmd;
  sh->cmd_text = cmd_text;
  return st;
}

int box_eval_text(Shell *sh, const char *text, const char *name)
{
  return eval_text(sh, text, name, false);
}

int box_eval_script(Shell *sh, const char *text, const char *name)
{
  sh->status = 0; /* a new shell's $? */
  return eval_text(sh, text, name, true);
}

int box_eval_text_at(Shell *sh, const char *text, const char *name, int line)
{
  return eval_text_at(sh, text, name, line, false);
}
