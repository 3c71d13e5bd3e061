/* script.c: a file run by path that is a script the Shell runs itself
 * (sh, bash, dash, or Python by its #! line, or text with none), as the
 * kernel would have run it. */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

/* A `#!` line (after the "#!") that names the Shell's python3 or python,
 * read as the kernel reads it: the interpreter, then the rest of the line
 * less its trailing blanks as one argument (`#!/usr/bin/python3 -u` runs
 * `python3 -u SCRIPT`).  Through env that argument is the name env looks
 * for, so `#!/usr/bin/env python3 -u` names none.  Returns the name and
 * sets *opt to the argument (or NULL), or NULL. */
static char *python_interp(const char *line, char **opt)
{
  line += strspn(line, " \t");
  size_t len = strcspn(line, " \t");
  g_autofree char *interp = g_strndup(line, len);
  const char *rest = line + len + strspn(line + len, " \t");
  size_t n = strlen(rest);
  while (n && (rest[n - 1] == ' ' || rest[n - 1] == '\t')) n--;
  g_autofree char *arg = n ? g_strndup(rest, n) : NULL;
  const char *prog = strrchr(interp, '/') ? strrchr(interp, '/') + 1 : interp;
  if (!strcmp(prog, "env")) {
    if (!arg) return NULL;
    prog = arg;
  } else {
    *opt = g_steal_pointer(&arg);
  }
  if (box_is_python_name(prog) && box_command_lookup(prog)) return g_strdup(prog);
  g_free(*opt);
  *opt = NULL;
  return NULL;
}

/* A script the Shell runs itself, so that its commands are decided one by
 * one (reading its first line is an fs:read decision, as for `sh FILE`):
 * path is an executable file of the Shell's view whose `#!` line names
 * sh, bash or dash (directly or through `env`), or that has no `#!` line
 * and reads as text, which bash runs as a shell script when execve says
 * ENOEXEC; or a Python script (python_interp), which the Shell's python3
 * runs as the host's would.  Returns the interpreter's argv[0] and sets
 * *opt to an option word of the #! line (or NULL), or NULL. */
static char *script_shell(const char *path, char **opt)
{
  *opt = NULL;
  int fd = box_open_file(path, O_RDONLY);
  if (fd < 0) return NULL;
  char head[256];
  ssize_t n = read(fd, head, sizeof head - 1);
  close(fd);
  if (n < 0) return NULL;
  if (n < 2 || head[0] != '#' || head[1] != '!') {
    /* bash's test for a binary: a NUL before the first newline */
    for (ssize_t i = 0; i < n && head[i] != '\n'; i++)
      if (head[i] == '\0') return NULL;
    return g_strdup("sh");
  }
  head[n] = 0;
  char *nl = strchr(head, '\n');
  if (nl) *nl = 0;
  char *python = python_interp(head + 2, opt);
  if (python) return python;
  char **words = g_strsplit_set(head + 2, " \t\r", -1);
  char *found = NULL;
  int k = 0;
  while (words[k] && !*words[k]) k++;
  if (words[k]) {
    const char *prog = strrchr(words[k], '/') ? strrchr(words[k], '/') + 1 : words[k];
    k++;
    while (words[k] && !*words[k]) k++;
    if (!strcmp(prog, "env") && words[k]) {
      prog = words[k++];
      while (words[k] && !*words[k]) k++;
    }
    if (!strcmp(prog, "sh") || !strcmp(prog, "bash") || !strcmp(prog, "dash")) {
      found = g_strdup(prog);
      if (words[k] && words[k][0] == '-') *opt = g_strdup(words[k]);
    }
  }
  g_strfreev(words);
  return found;
}

/* What exec gives a script's interpreter: `INTERP [OPT] PATH ARG…` (*n
 * words, NULL-terminated; the words are the caller's). */
static char **script_argv(char *interp, char *opt, const char *path, int argc, char **av, int *n)
{
  char **sav = g_new0(char *, argc + 3);
  int sc = 0;
  sav[sc++] = interp;
  if (opt) sav[sc++] = opt;
  sav[sc++] = (char *)path;
  for (int i = 1; i < argc; i++) sav[sc++] = av[i];
  *n = sc;
  return sav;
}

/* A Python script runs as `python3 [OPT] PATH ARG…` typed would (the
 * spec's rule for an interpreter the Shell implements): one shell:exec
 * decision on program python3, or a `[tool.python3]` table's program when
 * box.toml sends python3 there.  A function named python3 is not what the
 * kernel would have run.  The script's words stay as literal as they were;
 * the #! line's option came from a file, so it is not.  pav (pc words)
 * ends with av's arguments. */
static int run_as_python(Shell *sh, char **pav, int pc, int argc, char **av, Word **as, size_t na)
{
  bool *lit = g_new0(bool, pc);
  bool *owned;
  const bool *was = box_exec_literal_for(sh, av, argc, &owned);
  memcpy(lit + pc - argc, was, argc * sizeof *lit);
  lit[0] = true;
  g_free(owned);
  char **save_av = sh->lit_av;
  bool *save_lit = sh->lit;
  int save_argc = sh->lit_argc;
  sh->lit_av = pav;
  sh->lit = lit;
  sh->lit_argc = pc;
  int status = box_exec_run_argv(sh, pc, pav, as, na, true);
  sh->lit_av = save_av;
  sh->lit = save_lit;
  sh->lit_argc = save_argc;
  g_free(lit);
  return status;
}

static int run_python_script(Shell *sh, char *interp, char *opt, const char *path, int argc,
                             char **av, Word **as, size_t na)
{
  int pc;
  char **pav = script_argv(interp, opt, path, argc, av, &pc);
  int status = run_as_python(sh, pav, pc, argc, av, as, na);
  g_free(pav);
  return status;
}

bool box_links_to_host_python(const char *path)
{
  g_autofree char *at = g_strdup(path);
  for (int hop = 0; hop < 16; hop++) {
    char target[PATH_MAX];
    ssize_t n = readlink(at, target, sizeof target - 1);
    if (n <= 0) return false;
    target[n] = '\0';
    if (!strcmp(target, "/usr/bin/python3") || !strcmp(target, "/usr/bin/python3.11") ||
        !strcmp(target, "/usr/bin/python"))
      return true;
    g_autofree char *dir = g_path_get_dirname(at);
    g_free(at);
    at = target[0] == '/' ? g_strdup(target) : g_build_filename(dir, target, NULL);
  }
  return false;
}

/* Whether a `[tool.*]` table or an exec entry runs the file at path: a
 * Python script the box wrote that a table names is that table's program,
 * in its sandbox (README, "Programs the box writes"), not the Shell's. */
static bool host_runs(Shell *sh, const char *path)
{
  const BoxShellHost *host = sh->host;
  if (!host || !host->resolve) return false;
  char *found = host->resolve(host->data, path, sh->cwd);
  bool runs = found != NULL;
  free(found);
  return runs;
}

/* A virtualenv's python (bin/python → python3 → /usr/bin/python3) is the
 * host's python3.11, which the Shell's python3 is: it runs there, decided
 * as python3, with sys.executable the word's absolute path as CPython
 * would make it, so that site finds the venv's pyvenv.cfg beside it.  Only
 * a word whose name is python's is read, so no other program's lookup asks
 * the mount more; a `[tool.*]` table that runs the file keeps it. */
bool box_run_linked_python(Shell *sh, int argc, char **av, Word **as, size_t na, int *status)
{
  const char *base = strrchr(av[0], '/');
  if (!base || !box_is_python_name(base + 1)) return false;
  g_autofree char *abs = av[0][0] == '/' ? g_strdup(av[0]) : g_build_filename(sh->cwd, av[0], NULL);
  /* the host's own, which the view does not hold: asked of it, not read */
  if (g_str_has_prefix(abs, "/usr/") || g_str_has_prefix(abs, "/bin/")) return false;
  if (!box_links_to_host_python(abs) || host_runs(sh, av[0])) return false;
  char **pav = g_new0(char *, argc + 1);
  memcpy(pav, av, argc * sizeof *pav);
  pav[0] = "python3";
  const char *save = sh->python_as;
  sh->python_as = abs;
  *status = run_as_python(sh, pav, argc, argc, av, as, na);
  sh->python_as = save;
  g_free(pav);
  return true;
}

/* Runs av, whose file is path, as a shell script if it is one: decided as
 * the program the text names, then `sh [OPT] PATH ARG…` with the command's
 * assignments in its environment.  False if it is not one. */
bool box_run_script(Shell *sh, const char *path, int argc, char **av, Word **as, size_t na,
                    int *status)
{
  char *opt = NULL;
  char *interp = script_shell(path, &opt);
  bool python = interp && box_is_python_name(interp);
  if (!interp || (python && host_runs(sh, path))) {
    g_free(interp);
    g_free(opt);
    return false;
  }
  if (python) {
    *status = run_python_script(sh, interp, opt, path, argc, av, as, na);
  } else if (box_exec_decide(sh, av, argc, av[0])) {
    int sc;
    char **sav = script_argv(interp, opt, path, argc, av, &sc);
    int st = 0;
    GArray *tmp = na ? box_exec_temp_assign(sh, as, na, &st) : NULL;
    *status = box_exec_run_builtin(sh, box_command_lookup("sh"), sc, sav);
    if (tmp) box_var_restore(sh, tmp);
    g_free(sav);
  } else {
    *status = 126;
  }
  g_free(interp);
  g_free(opt);
  return true;
}
