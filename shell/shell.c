/* shell.c — the public entry points and the variable table. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

bool box_is_name(const char *s, size_t len) {
  if (len == 0 || !(s[0] == '_' || g_ascii_isalpha(s[0]))) return false;
  for (size_t i = 1; i < len; i++)
    if (!(s[i] == '_' || g_ascii_isalnum(s[i]))) return false;
  return true;
}

static void var_free(gpointer p) {
  ShellVar *v = p;
  g_free(v->value);
  g_free(v);
}

const char *box_var_get(Shell *sh, const char *name) {
  ShellVar *v = g_hash_table_lookup(sh->vars, name);
  return v ? v->value : NULL;
}

void box_var_set(Shell *sh, const char *name, const char *value) {
  ShellVar *v = g_hash_table_lookup(sh->vars, name);
  if (!v) {
    v = g_new0(ShellVar, 1);
    g_hash_table_insert(sh->vars, g_strdup(name), v);
  }
  char *nv = g_strdup(value);
  g_free(v->value);
  v->value = nv;
}

void box_var_export(Shell *sh, const char *name) {
  ShellVar *v = g_hash_table_lookup(sh->vars, name);
  if (!v) {
    v = g_new0(ShellVar, 1);
    g_hash_table_insert(sh->vars, g_strdup(name), v);
  }
  v->exported = true;
}

void box_var_unset(Shell *sh, const char *name) { g_hash_table_remove(sh->vars, name); }

bool box_shell_implements(const char *name) { return name && box_command_lookup(name) != NULL; }

static void init_var(Shell *sh, const char *name, const char *value) {
  if (!value) return;
  box_var_set(sh, name, value);
  box_var_export(sh, name);
}

int box_shell_run(const char *source, const BoxShellEnv *env, const BoxShellHost *host) {
  Shell sh;
  memset(&sh, 0, sizeof sh);
  sh.vars = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, var_free);
  sh.bg_pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
  sh.host = host;
  sh.pid = getpid();
  const char *ws = env && env->workspace ? env->workspace : "/";
  sh.cwd = g_strdup(ws);
  if (env) {
    init_var(&sh, "HOME", env->home);
    init_var(&sh, "PATH", env->path);
    init_var(&sh, "PWD", ws);
    init_var(&sh, "USER", env->user);
  }

  BoxIO io = { 0, 1, 2 };
  int status = 0;
  Parser p;
  box_parser_init(&p, source ? source : "");
  for (;;) {
    Node *n = NULL;
    ParseResult r = box_parse_next(&p, &n);
    if (r == PARSE_EOF) break;
    if (r == PARSE_ERROR) {
      box_fdprintf(2, "strands-shell: syntax error: %s\n", p.error ? p.error : "unexpected input");
      status = 2;
      break;
    }
    if (n) {
      status = box_eval(&sh, n, io);
      box_node_free(n);
    }
    if (sh.exiting) {
      status = sh.exit_status;
      break;
    }
  }
  box_parser_done(&p);
  box_wait_background(&sh);
  g_array_free(sh.bg_pids, TRUE);
  g_hash_table_destroy(sh.vars);
  g_free(sh.cwd);
  return status & 255;
}
