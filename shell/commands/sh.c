/* sh.c — `sh`/`bash`/`lash` inside the Shell: `-c TEXT [NAME ARG…]` or
 * `FILE [ARG…]` (read through the mount: an fs:read decision), run in a
 * child Shell state (a fork) with its own positional parameters, the
 * options a new bash starts with and only the exported variables. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

/* One option change of the command line, made in the child in order. */
typedef struct {
  int row; /* set -o's row, or -1 for a shopt name */
  bool on;
  const char *name;
} OptChange;

static const char usage_text[] =
  "Usage:\t%s [GNU long option] [option] ...\n"
  "\t%s [GNU long option] [option] script-file ...\n"
  "GNU long options:\n\t--debug\n\t--debugger\n\t--dump-po-strings\n\t--dump-strings\n"
  "\t--help\n\t--init-file\n\t--login\n\t--noediting\n\t--noprofile\n\t--norc\n\t--posix\n"
  "\t--pretty-print\n\t--rcfile\n\t--restricted\n\t--verbose\n\t--version\n"
  "Shell options:\n\t-ilrsD or -c command or -O shopt_option\t\t(invocation only)\n"
  "\t-abefhkmnptuvxBCEHPT or -o option\n";

static int bad_usage(BoxCmd *c, const char *fmt, const char *what)
{
  box_fdprintf(c->err, "strands-shell: ");
  box_fdprintf(c->err, fmt, what);
  box_fdprintf(c->err, "\n");
  box_fdprintf(c->err, usage_text, c->argv[0], c->argv[0]);
  return 2;
}

/* A new bash sees the exported variables (as plain strings) and makes its
 * own; what the parent shell kept unexported, its arrays, locals and
 * aliases are not there. */
static void fresh_state(Shell *sh)
{
  static const char *const own[] = { "PPID", "BASH_VERSION", "HOSTNAME", "SHELL",
                                     "UID",  "EUID",         "OSTYPE" };
  /* bash sets IFS and OPTIND whatever the environment says; PS4 when absent */
  static const char *const reset[][2] = { { "IFS", " \t\n" }, { "OPTIND", "1" }, { "PS4", "+ " } };
  GHashTableIter it;
  gpointer k, val;
  GPtrArray *gone = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *plain = g_ptr_array_new();
  g_hash_table_iter_init(&it, sh->vars);
  while (g_hash_table_iter_next(&it, &k, &val)) {
    ShellVar *v = val;
    bool keep = false;
    for (size_t i = 0; i < G_N_ELEMENTS(own); i++)
      if (strcmp(k, own[i]) == 0) keep = true;
    if (keep) continue;
    if ((v->flags & V_EXPORT) && !(v->flags & (V_ARRAY | V_ASSOC | V_NAMEREF)) && v->value)
      g_ptr_array_add(plain, v);
    else
      g_ptr_array_add(gone, g_strdup(k));
  }
  /* SHELLOPTS and BASHOPTS exported stay so, readonly as ever */
  for (guint i = 0; i < plain->len; i++) ((ShellVar *)plain->pdata[i])->flags = V_EXPORT;
  const char *optvars[] = { "SHELLOPTS", "BASHOPTS" };
  for (size_t i = 0; i < G_N_ELEMENTS(optvars); i++) {
    ShellVar *v = g_hash_table_lookup(sh->vars, optvars[i]);
    if (v) v->flags |= V_READONLY;
  }
  for (guint i = 0; i < gone->len; i++) g_hash_table_remove(sh->vars, gone->pdata[i]);
  g_ptr_array_free(plain, TRUE);
  g_ptr_array_free(gone, TRUE);
  g_ptr_array_set_size(sh->frames, 0);
  sh->temp_scope = NULL;
  sh->temp_frames = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(reset); i++)
    if (i < 2 || !box_var_lookup(sh, reset[i][0])) box_var_set(sh, reset[i][0], reset[i][1]);
  /* BASH_VERSINFO, FUNCNAME, SHELLOPTS…: made again when first named */
  sh->lazy_made = false;
  g_hash_table_remove_all(sh->funcs);
  g_hash_table_remove_all(sh->aliases);
  sh->shopts = 0;
  sh->shopts_inert = 0;
}

int box_cmd_sh(BoxCmd *c)
{
  Shell *sh = c->sh;
  int i = 1;
  const char *text = NULL;
  char *owned = NULL;
  const char *name = c->argv[0];
  bool command = false, from_stdin = false, interactive = false;
  GArray *changes = g_array_new(FALSE, FALSE, sizeof(OptChange));
  int st = 0;
  /* long options first, as bash reads them */
  for (; i < c->argc && c->argv[i][0] == '-' && c->argv[i][1] == '-' && c->argv[i][2]; i++) {
    const char *a = c->argv[i] + 2;
    if (!strcmp(a, "posix")) {
      OptChange o = { box_set_option("posix"), true, NULL };
      g_array_append_val(changes, o);
    } else if (!strcmp(a, "verbose")) {
      OptChange o = { box_set_option("verbose"), true, NULL };
      g_array_append_val(changes, o);
    } else if (!strcmp(a, "rcfile") || !strcmp(a, "init-file")) {
      if (i + 1 < c->argc) i++;
    } else if (strcmp(a, "norc") && strcmp(a, "noprofile") && strcmp(a, "noediting") &&
               strcmp(a, "login") && strcmp(a, "restricted") && strcmp(a, "debugger") &&
               strcmp(a, "debug")) {
      st = bad_usage(c, "%s: invalid option", c->argv[i]);
      goto out;
    }
  }
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if ((a[0] != '-' && a[0] != '+') || !a[1]) {
      if (!strcmp(a, "-")) i++;
      break;
    }
    if (!strcmp(a, "--")) {
      i++;
      break;
    }
    bool on = a[0] == '-';
    for (const char *p = a + 1; *p; p++) {
      int row;
      if (*p == 'o' || *p == 'O') {
        if (i + 1 >= c->argc) break; /* bash lists the options */
        const char *opt = c->argv[++i];
        OptChange o = { *p == 'o' ? box_set_option(opt) : -1, on, opt };
        if (*p == 'o' && o.row < 0) {
          box_cmd_error(c, "%s: invalid option name", opt);
          st = 2;
          goto out;
        }
        if (*p == 'O' && !box_shopt_known(opt)) {
          box_cmd_error(c, "%s: invalid shell option name", opt);
          st = 2;
          goto out;
        }
        g_array_append_val(changes, o);
      } else if (*p == 'c') {
        command = on;
      } else if (*p == 's') {
        from_stdin = on;
      } else if (*p == 'i') {
        interactive = on;
      } else if (*p == 'l' || *p == 'r' || *p == 'D') {
        /* login, restricted, strings to translate: nothing to do here */
      } else if ((row = box_set_option_letter(*p)) >= 0) {
        OptChange o = { row, on, NULL };
        g_array_append_val(changes, o);
      } else {
        char bad[3] = { a[0], *p, 0 };
        st = bad_usage(c, "%s: invalid option", bad);
        goto out;
      }
    }
  }
  if (command) {
    if (i >= c->argc) {
      box_cmd_error(c, "-c: option requires an argument");
      st = 2;
      goto out;
    }
    text = c->argv[i++];
    if (i < c->argc) name = c->argv[i++];
  } else if (i >= c->argc || from_stdin) {
    /* script on stdin */
    if (c->in < 0) goto out;
    GString *g = box_read_all(c->in, 0);
    owned = g_string_free(g, FALSE);
    text = owned;
    from_stdin = true;
  } else {
    name = c->argv[i++];
    int fd = box_open_file(name, O_RDONLY);
    if (fd < 0) {
      char *t = box_error_text(sh, errno);
      box_fdprintf(c->err, "strands-shell: %s: %s\n", name, t);
      g_free(t);
      /* bash: under -e the failed open is the error that ends it */
      st = 127;
      for (guint k = 0; k < changes->len; k++) {
        OptChange *o = &g_array_index(changes, OptChange, k);
        if (o->row == box_set_option("errexit")) st = o->on ? 1 : 127;
      }
      goto out;
    }
    GString *g = box_read_all(fd, 0);
    close(fd);
    owned = g_string_free(g, FALSE);
    text = owned;
  }
  box_out_flush(c->out);
  pid_t pid = box_fork(sh);
  if (pid < 0) {
    st = 126;
    goto out;
  }
  if (pid == 0) {
    /* a new shell, not a subshell: $$ is its own process, $PPID the one that ran it */
    char ppid[16];
    g_snprintf(ppid, sizeof ppid, "%d", (int)box_pid_shown(getppid()));
    /* SHELLOPTS in its environment: those options are on from the start */
    ShellVar *so = box_var_lookup(sh, "SHELLOPTS");
    char **inherited =
      so && (so->flags & V_EXPORT) && so->value ? g_strsplit(so->value, ":", -1) : NULL;
    ShellVar *bo = box_var_lookup(sh, "BASHOPTS");
    char **inherited_shopts =
      bo && (bo->flags & V_EXPORT) && bo->value ? g_strsplit(bo->value, ":", -1) : NULL;
    bool optvars_kept = inherited || inherited_shopts;
    fresh_state(sh);
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
    sh->opts = O_BRACE | O_HASHALL;
    if (interactive) {
      sh->opts |= O_INTERACTIVE | O_HISTEXPAND;
      sh->shopts |= SH_EXPAND_ALIASES;
    }
    if (!command) sh->opts |= from_stdin ? O_FROM_STDIN : O_FROM_FILE;
    for (char **n = inherited; n && *n; n++) {
      int row = box_set_option(*n);
      if (row >= 0) box_set_option_change(sh, row, true);
    }
    g_strfreev(inherited);
    for (char **n = inherited_shopts; n && *n; n++) box_shopt_set(sh, *n, true);
    g_strfreev(inherited_shopts);
    for (guint k = 0; k < changes->len; k++) {
      OptChange *o = &g_array_index(changes, OptChange, k);
      if (o->row >= 0)
        box_set_option_change(sh, o->row, o->on);
      else
        box_shopt_set(sh, o->name, o->on);
    }
    box_optvars_refresh(sh);
    sh->func_depth = 0;
    sh->loop_depth = 0;
    box_callstack_reset(sh);
    if (owned && name != c->argv[0]) box_callstack_push(sh, "main", name, 0, false);
    /* an exported SHELLOPTS or BASHOPTS shows this shell's options */
    if (optvars_kept) box_vars_materialize(sh);
    sh->depth++;
    int r = box_eval_script(sh, text, owned ? name : NULL);
    if (sh->jump == J_EXIT) r = sh->exit_status;
    box_child_exit(sh, r);
  }
  st = box_wait_pid(pid);
out:
  g_array_free(changes, TRUE);
  g_free(owned);
  return st;
}
