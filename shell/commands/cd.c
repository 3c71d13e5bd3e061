/* cd.c — `cd [-L|-P] [dir|-]`: logical paths like bash (a ".." checks
 * that what it climbs out of is a directory), physical ones with -P or
 * `set -o physical`, CDPATH's directories; sets PWD/OLDPWD. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

/* Folds "." and ".." and repeated slashes of an absolute path; NULL when
 * a ".." follows something that is no directory (bash's sh_canonpath with
 * PATH_CHECKDOTDOT), which the kernel's own walk then answers. */
static char *normalize(const char *path)
{
  gchar **parts = g_strsplit(path, "/", -1);
  GString *s = g_string_new(NULL);
  bool ok = true;
  for (gchar **p = parts; *p && ok; p++) {
    if (**p == '\0' || strcmp(*p, ".") == 0) continue;
    if (strcmp(*p, "..") == 0) {
      struct stat st;
      if (s->len && (stat(s->str, &st) != 0 || !S_ISDIR(st.st_mode))) ok = false;
      char *slash = strrchr(s->str, '/');
      if (slash) g_string_truncate(s, (gsize)(slash - s->str));
      continue;
    }
    g_string_append_c(s, '/');
    g_string_append(s, *p);
  }
  g_strfreev(parts);
  if (!ok) {
    g_string_free(s, TRUE);
    return NULL;
  }
  if (s->len == 0) g_string_append_c(s, '/');
  return g_string_free(s, FALSE);
}

/* The new directory: sh->cwd, PWD and OLDPWD. */
static void moved(Shell *sh, char *now)
{
  box_var_set(sh, "OLDPWD", sh->cwd);
  box_var_export(sh, "OLDPWD");
  g_free(sh->cwd);
  sh->cwd = now;
  box_var_set(sh, "PWD", now);
}

/* Goes to dir as bash's change_to_directory does; 0, else errno (nothing
 * changed).  Logically the folded path is the one gone to; physically,
 * and where folding failed, the kernel walks the path as written and the
 * new directory is the one it reached. */
static int change_to(Shell *sh, const char *dir, bool physical)
{
  g_autofree char *joined = dir[0] == '/' ? g_strdup(dir) : g_strconcat(sh->cwd, "/", dir, NULL);
  char *target = physical ? NULL : normalize(joined);
  if (target && chdir(target) == 0) {
    moved(sh, target);
    return 0;
  }
  int err = errno;
  if (!target) err = 0;
  g_free(target);
  if (chdir(joined) != 0) return err ? err : errno;
  moved(sh, g_get_current_dir());
  return 0;
}

/* bash's absolute_pathname: a word CDPATH is not searched for. */
static bool cdpath_skips(const char *d)
{
  if (d[0] == '/') return true;
  if (d[0] == '.' && (d[1] == '/' || !d[1])) return true;
  return d[0] == '.' && d[1] == '.' && (d[2] == '/' || !d[2]);
}

/* Each CDPATH directory in turn; a non-empty one used names the new
 * directory on stdout.  Returns whether one was gone to. */
static bool via_cdpath(BoxCmd *c, const char *dir, bool physical)
{
  Shell *sh = c->sh;
  const char *cdpath = box_var_get(sh, "CDPATH");
  if (!cdpath || !*dir || cdpath_skips(dir)) return false;
  g_auto(GStrv) entries = g_strsplit(cdpath, ":", -1);
  for (gchar **e = entries; *e; e++) {
    g_autofree char *cand = g_build_filename(**e ? *e : ".", dir, NULL);
    if (change_to(sh, cand, physical) != 0) continue;
    if (**e) box_out_printf(c->out, "%s\n", physical ? cand : sh->cwd);
    return true;
  }
  return false;
}

static int cd_to(BoxCmd *c, const char *cmd, const char *dir, bool physical)
{
  int err = change_to(c->sh, dir, physical);
  if (err == 0) return 0;
  char *text = box_error_text(c->sh, err);
  box_fdprintf(c->err, "strands-shell: %s: %s: %s\n", cmd, dir, text);
  g_free(text);
  return 1;
}

int box_cmd_cd(BoxCmd *c)
{
  Shell *sh = c->sh;
  bool physical = (sh->opts & O_INERT_PHYSICAL) != 0;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    for (const char *p = a + 1; *p; p++) {
      if (*p == 'L' || *p == 'P') {
        physical = *p == 'P';
      } else if (*p != 'e') {
        box_fdprintf(c->err,
                     "strands-shell: cd: -%c: invalid option\ncd: usage: cd [-L|[-P [-e]] [-@]] "
                     "[dir]\n",
                     *p);
        return 2;
      }
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
  if (!print && via_cdpath(c, dir, physical)) return 0;
  if (cd_to(c, "cd", dir, physical) != 0) return 1;
  if (print) box_out_printf(c->out, "%s\n", sh->cwd);
  return 0;
}

int bx_chdir(BoxCmd *c, const char *cmd, const char *dir)
{
  return cd_to(c, cmd, dir, false);
}
