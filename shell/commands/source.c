/* source.c — `. FILE [ARG…]` / `source`: reads FILE through the mount
 * (an fs:read decision) and runs it in this shell. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/builtins.h"

int box_cmd_source(BoxCmd *c)
{
  Shell *sh = c->sh;
  g_autofree char *usage =
    g_strdup_printf("%s: usage: %s filename [arguments]", c->argv[0], c->argv[0]);
  int first = bx_no_options(c, usage);
  if (first < 0) return 2;
  if (c->argc <= first) {
    box_cmd_error(c, "filename argument required");
    box_fdprintf(c->err, "%s\n", usage);
    return 2;
  }
  const char *name = c->argv[first];
  char *path = NULL;
  if (!strchr(name, '/')) {
    /* bash looks in PATH first, then the current directory */
    const char *p = box_var_get(sh, "PATH");
    gchar **dirs = g_strsplit(p ? p : "", ":", -1);
    for (gchar **d = dirs; *d && !path; d++) {
      char *cand = g_build_filename(**d ? *d : ".", name, NULL);
      int fd = box_open_file(cand, O_RDONLY);
      if (fd >= 0) {
        close(fd);
        path = cand;
      } else {
        g_free(cand);
      }
    }
    g_strfreev(dirs);
  }
  if (!path) path = g_strdup(name);
  int fd = box_open_file(path, O_RDONLY);
  if (fd < 0) {
    char *t = box_error_text(sh, errno);
    box_cmd_error(c, "%s: %s", name, t);
    g_free(t);
    g_free(path);
    return 1;
  }
  GString *text = box_read_all(fd, 0);
  close(fd);
  char **old_pos = NULL;
  int old_n = 0;
  if (c->argc > first + 1) {
    old_pos = sh->pos;
    old_n = sh->npos;
    sh->pos = g_new0(char *, c->argc - first);
    for (int i = first + 1; i < c->argc; i++) sh->pos[i - first - 1] = g_strdup(c->argv[i]);
    sh->npos = c->argc - first - 1;
  }
  const char *old_script = sh->script_name;
  sh->script_name = name;
  sh->depth++;
  box_callstack_push(sh, "source", name, sh->lineno, false);
  int st = box_eval_text(sh, text->str, name);
  box_callstack_pop(sh);
  sh->depth--;
  sh->script_name = old_script;
  if (sh->jump == J_RETURN) {
    sh->jump = J_NONE;
    st = sh->exit_status;
  }
  if (old_pos) {
    g_strfreev(sh->pos);
    sh->pos = old_pos;
    sh->npos = old_n;
  }
  g_string_free(text, TRUE);
  g_free(path);
  return st;
}
