/* sh.c — `sh`/`bash`/`lash` inside the Shell: `-c TEXT [NAME ARG…]` or
 * `FILE [ARG…]` (read through the mount: an fs:read decision), run in a
 * child Shell state (a fork) with its own positional parameters. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

int box_cmd_sh(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  const char *text = NULL;
  char *owned = NULL;
  const char *name = c->argv[0];
  bool check_only = false;
  unsigned opts = 0;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    if (!strcmp(a, "-c")) {
      if (i + 1 >= c->argc) {
        box_cmd_error(c, "-c: option requires an argument");
        return 2;
      }
      text = c->argv[++i];
      i++;
      break;
    }
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'e')
        opts |= O_ERREXIT;
      else if (*p == 'u')
        opts |= O_NOUNSET;
      else if (*p == 'x')
        opts |= O_XTRACE;
      else if (*p == 'n')
        check_only = true;
      else if (*p == 'c') {
        text = i + 1 < c->argc ? c->argv[++i] : "";
      }
    }
    if (text) {
      i++;
      break;
    }
  }
  if (!text) {
    if (i >= c->argc) {
      /* script on stdin */
      if (c->in < 0) return 0;
      GString *g = box_read_all(c->in, 0);
      owned = g_string_free(g, FALSE);
      text = owned;
    } else {
      name = c->argv[i++];
      int fd = box_open_file(name, O_RDONLY);
      if (fd < 0) {
        char *t = box_error_text(sh, errno);
        box_fdprintf(c->err, "strands-shell: %s: %s\n", name, t);
        g_free(t);
        return 127;
      }
      GString *g = box_read_all(fd, 0);
      close(fd);
      owned = g_string_free(g, FALSE);
      text = owned;
    }
  } else if (i < c->argc) {
    name = c->argv[i++];
  }
  box_out_flush(c->out);
  pid_t pid = box_fork(sh);
  if (pid < 0) {
    g_free(owned);
    return 126;
  }
  if (pid == 0) {
    /* a new shell, not a subshell: $$ is its own process, $PPID the one that ran it */
    char ppid[16];
    g_snprintf(ppid, sizeof ppid, "%d", (int)box_pid_shown(getppid()));
    sh->pid = getpid();
    box_var_set(sh, "PPID", ppid);
    sh->fd[0] = c->in;
    sh->fd[1] = c->out_fd;
    sh->fd[2] = c->err;
    g_free(sh->arg0);
    sh->arg0 = g_strdup(name);
    g_strfreev(sh->pos);
    sh->npos = c->argc - i;
    sh->pos = g_new0(char *, sh->npos + 1);
    for (int k = 0; k < sh->npos; k++) sh->pos[k] = g_strdup(c->argv[i + k]);
    g_hash_table_remove_all(sh->funcs);
    sh->opts = (sh->opts & O_BRACE) | opts;
    if (check_only) sh->opts |= O_NOEXEC;
    box_optvars_refresh(sh);
    sh->func_depth = 0;
    sh->loop_depth = 0;
    box_callstack_reset(sh);
    if (owned && name != c->argv[0]) box_callstack_push(sh, "main", name, 0, false);
    sh->depth++;
    int st = box_eval_script(sh, text, owned ? name : NULL);
    if (sh->jump == J_EXIT) st = sh->exit_status;
    box_child_exit(sh, st);
  }
  g_free(owned);
  return box_wait_pid(pid);
}
