/* which.c — which [-a] NAME...: the first executable of that name on the Shell's PATH. */
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

int box_cmd_which(BoxCmd *c)
{
  bool all = false;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'a')
        all = true;
      else {
        bx_usage(c, "which", "invalid option -- '%c'", *p);
        return 2;
      }
    }
  }
  const char *path = box_var_get(c->sh, "PATH");
  if (!path) path = "";
  int status = 0;
  if (i >= c->argc) return 1;
  for (; i < c->argc; i++) {
    const char *name = c->argv[i];
    bool found = false;
    if (strchr(name, '/')) {
      if (access(name, X_OK) == 0) {
        box_out_printf(c->out, "%s\n", name);
        found = true;
      }
    } else {
      gchar **dirs = g_strsplit(path, ":", -1);
      for (gchar **d = dirs; *d && (all || !found); d++) {
        char *p = bx_path_join(**d ? *d : ".", name);
        if (access(p, X_OK) == 0 && !g_file_test(p, G_FILE_TEST_IS_DIR)) {
          box_out_printf(c->out, "%s\n", p);
          found = true;
        }
        g_free(p);
      }
      g_strfreev(dirs);
    }
    if (!found) status = 1;
  }
  return status;
}
