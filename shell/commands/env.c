/* env.c — GNU env: print the environment, or run a command (through the
 * Shell's decision point) with NAME=VALUE set, -i, -u NAME, -0, -C DIR. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "ignore-environment=i unset=u: null=0 chdir=C:";

static void print_env(BoxCmd *c, bool zero)
{
  char **env = box_var_environ(c->sh);
  for (char **e = env; *e; e++) {
    box_out_puts(c->out, *e);
    box_out_putc(c->out, zero ? '\0' : '\n');
  }
  g_strfreev(env);
}

int box_cmd_env(BoxCmd *c)
{
  bool ignore = false, zero = false;
  GPtrArray *unsets = g_ptr_array_new();
  const char *dir = NULL;
  int status = 0;
  /* "-" alone means -i */
  BX_EACH_OPTION (ch, c, "env", "+iu:0C:", longopts) {
    switch (ch) {
    case 'i': ignore = true; break;
    case 'u': g_ptr_array_add(unsets, optarg); break;
    case '0': zero = true; break;
    case 'C': dir = optarg; break;
    default: g_ptr_array_free(unsets, TRUE); return 125;
    }
  }
  int i = optind;
  if (i < c->argc && !strcmp(c->argv[i], "-")) {
    ignore = true;
    i++;
  }
  int first_assign = i;
  while (i < c->argc && strchr(c->argv[i], '=') && c->argv[i][0] != '=') i++;
  if (zero && i < c->argc) {
    bx_usage(c, "env", "cannot specify --null (-0) with command");
    g_ptr_array_free(unsets, TRUE);
    return 125;
  }
  if (dir && i >= c->argc) {
    bx_usage(c, "env", "must specify command with --chdir (-C)");
    g_ptr_array_free(unsets, TRUE);
    return 125;
  }
  box_out_flush(c->out);
  pid_t pid = box_fork(c->sh);
  if (pid < 0) {
    bx_err(c, "env", "cannot fork: %s", box_strerror(errno));
    g_ptr_array_free(unsets, TRUE);
    return 125;
  }
  if (pid == 0) {
    Shell *sh = c->sh;
    if (ignore) {
      char **env = box_var_environ(sh);
      for (char **e = env; *e; e++) {
        char *eq = strchr(*e, '=');
        *eq = 0;
        box_var_unset(sh, *e);
      }
      g_strfreev(env);
    }
    for (guint k = 0; k < unsets->len; k++) box_var_unset(sh, unsets->pdata[k]);
    for (int k = first_assign; k < i; k++) {
      char *name = g_strdup(c->argv[k]);
      char *eq = strchr(name, '=');
      *eq = 0;
      ShellVar *v = box_var_make(sh, name);
      v->flags &= ~V_READONLY;
      box_var_set(sh, name, eq + 1);
      box_var_export(sh, name);
      g_free(name);
    }
    if (i >= c->argc) {
      print_env(c, zero);
      box_out_flush(c->out);
      _exit(c->out->error ? 1 : 0);
    }
    if (dir) {
      if (chdir(dir) != 0) {
        bx_err_q(c, "env", "cannot change directory to %s", dir, errno);
        _exit(125);
      }
      char *cwd = g_get_current_dir();
      g_free(sh->cwd);
      sh->cwd = cwd;
    }
    int rc = box_run_argv(sh, c->argv + i, c->in, c->out_fd, c->err);
    _exit(rc);
  }
  status = box_wait_pid(pid);
  g_ptr_array_free(unsets, TRUE);
  return status;
}
