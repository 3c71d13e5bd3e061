/* cd.c — `cd [-L|-P] [dir|-]`: logical paths like bash; sets PWD/OLDPWD. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

/* Folds "." and ".." and repeated slashes of an absolute path. */
static char *normalize(const char *path)
{
  gchar **parts = g_strsplit(path, "/", -1);
  GPtrArray *out = g_ptr_array_new();
  for (gchar **p = parts; *p; p++) {
    if (**p == '\0' || strcmp(*p, ".") == 0) continue;
    if (strcmp(*p, "..") == 0) {
      if (out->len) g_ptr_array_remove_index(out, out->len - 1);
      continue;
    }
    g_ptr_array_add(out, *p);
  }
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < out->len; i++) {
    g_string_append_c(s, '/');
    g_string_append(s, out->pdata[i]);
  }
  if (s->len == 0) g_string_append_c(s, '/');
  g_ptr_array_free(out, TRUE);
  g_strfreev(parts);
  return g_string_free(s, FALSE);
}

int box_cmd_cd(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    if (strcmp(a, "-L") && strcmp(a, "-P")) {
      box_fdprintf(c->err, "strands-shell: cd: %s: invalid option\ncd: usage: cd [-L|-P] [dir]\n",
                   a);
      return 2;
    }
  }
  if (c->argc - i > 1) {
    box_fdprintf(c->err, "strands-shell: cd: too many arguments\n");
    return 1;
  }
  const char *dir;
  bool print = false;
  if (i == c->argc) {
    dir = box_var_get(sh, "HOME");
    if (!dir) {
      box_fdprintf(c->err, "strands-shell: cd: HOME not set\n");
      return 1;
    }
  } else if (strcmp(c->argv[i], "-") == 0) {
    dir = box_var_get(sh, "OLDPWD");
    if (!dir) {
      box_fdprintf(c->err, "strands-shell: cd: OLDPWD not set\n");
      return 1;
    }
    print = true;
  } else {
    dir = c->argv[i];
  }
  if (dir[0] == '\0') return 0;
  if (bx_chdir(c, "cd", dir) != 0) return 1;
  if (print) box_out_printf(c->out, "%s\n", sh->cwd);
  return 0;
}

int bx_chdir(BoxCmd *c, const char *cmd, const char *dir)
{
  Shell *sh = c->sh;
  char *joined = dir[0] == '/' ? g_strdup(dir) : g_strconcat(sh->cwd, "/", dir, NULL);
  char *target = normalize(joined);
  g_free(joined);
  if (chdir(target) != 0) {
    char *text = box_error_text(sh, errno);
    box_fdprintf(c->err, "strands-shell: %s: %s: %s\n", cmd, dir, text);
    g_free(text);
    g_free(target);
    return 1;
  }
  box_var_set(sh, "OLDPWD", sh->cwd);
  box_var_export(sh, "OLDPWD");
  g_free(sh->cwd);
  sh->cwd = target;
  box_var_set(sh, "PWD", target);
  return 0;
}
