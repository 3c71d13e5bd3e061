/* chmod.c — GNU chmod: octal and symbolic modes, -R -v -c -f, --reference. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  bool recursive, verbose, changes, quiet;
  const char *mode;
  bool have_ref;
  mode_t ref_mode;
} ChmodOpt;

static void describe(BoxCmd *c, const char *name, mode_t old, mode_t new_mode, bool changed)
{
  char a[11], b[11];
  bx_mode_string(old, a);
  bx_mode_string(new_mode, b);
  g_autofree char *q = bx_quote_always(name);
  if (changed)
    box_out_printf(c->out, "mode of %s changed from %04o (%s) to %04o (%s)\n", q,
                   (unsigned)(old & 07777), a + 1, (unsigned)(new_mode & 07777), b + 1);
  else
    box_out_printf(c->out, "mode of %s retained as %04o (%s)\n", q, (unsigned)(old & 07777), a + 1);
}

static int one(BoxCmd *c, const ChmodOpt *o, const char *path, bool top)
{
  struct stat st;
  if ((top ? stat(path, &st) : lstat(path, &st)) != 0) {
    if (!o->quiet) { bx_err_q(c, "chmod", "cannot access %s", path, errno); }
    return 1;
  }
  int status = 0;
  if (S_ISLNK(st.st_mode)) return 0; /* symlinks met in recursion are skipped */
  mode_t nm;
  if (o->have_ref)
    nm = o->ref_mode;
  else if (!bx_parse_mode(o->mode, st.st_mode & 07777, S_ISDIR(st.st_mode), &nm))
    return 1;
  bool changed = (nm & 07777) != (st.st_mode & 07777);
  if (chmod(path, nm) != 0) {
    if (!o->quiet) { bx_err_q(c, "chmod", "changing permissions of %s", path, errno); }
    status = 1;
  } else if (o->verbose || (o->changes && changed)) {
    describe(c, path, st.st_mode, (st.st_mode & ~07777) | nm, changed);
  }
  if (o->recursive && S_ISDIR(st.st_mode)) {
    int err;
    GArray *v = bx_list_dir(path, &err);
    if (!v) {
      if (!o->quiet) { bx_err_q(c, "chmod", "cannot read directory %s", path, err); }
      return 1;
    }
    for (guint i = 0; i < v->len; i++) {
      char *p = bx_path_join(path, g_array_index(v, BxDirEnt, i).name);
      status |= one(c, o, p, false);
      g_free(p);
    }
    bx_dir_free(v);
  }
  return status;
}

static const char longopts[] = "recursive=R verbose=v changes=c silent=f quiet=f reference=F: "
                               "no-preserve-root=N preserve-root=N";

int box_cmd_chmod(BoxCmd *c)
{
  ChmodOpt o = { 0 };
  const char *ref = NULL;
  /* modes like -w or -x look like options: pull them out first */
  char **av = g_new0(char *, c->argc + 1);
  int ac = 0;
  GString *modes = g_string_new(NULL);
  bool dashdash = false;
  for (int i = 0; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (!strcmp(a, "--")) dashdash = true;
    if (i > 0 && !dashdash && a[0] == '-' && a[1] &&
        strspn(a + 1, "rwxXstugoa=+-,") == strlen(a + 1) && strchr("rwxXst", a[1])) {
      if (modes->len) g_string_append_c(modes, ',');
      g_string_append(modes, a);
      continue;
    }
    av[ac++] = c->argv[i];
  }
  BoxCmd cc = *c;
  cc.argc = ac;
  cc.argv = av;
  int status = 0;
  BX_EACH_OPTION (ch, &cc, "chmod", "Rvcf", longopts) switch (ch) {
    case 'R': o.recursive = true; break;
    case 'v': o.verbose = true; break;
    case 'c': o.changes = true; break;
    case 'f': o.quiet = true; break;
    case 'F': ref = optarg; break;
    case 'N': break;
    default: status = 1; goto out;
    }
  int i = optind;
  if (ref) {
    struct stat st;
    if (stat(ref, &st) != 0) {
      bx_err_q(c, "chmod", "failed to get attributes of %s", ref, errno);
      status = 1;
      goto out;
    }
    o.have_ref = true;
    o.ref_mode = st.st_mode & 07777;
  } else if (modes->len) {
    o.mode = modes->str;
  } else {
    if (i >= ac) {
      bx_usage(c, "chmod", "missing operand");
      status = 1;
      goto out;
    }
    o.mode = av[i++];
  }
  if (i >= ac) {
    if (o.mode && !modes->len) {
      bx_usage_q(c, "chmod", "missing operand after %s", o.mode);
    } else
      bx_usage(c, "chmod", "missing operand");
    status = 1;
    goto out;
  }
  if (o.mode) {
    mode_t test;
    if (!bx_parse_mode(o.mode, 0644, false, &test)) {
      bx_usage_q(c, "chmod", "invalid mode: %s", o.mode);
      status = 1;
      goto out;
    }
  }
  for (; i < ac; i++) status |= one(c, &o, av[i], true);
out:
  g_string_free(modes, TRUE);
  g_free(av);
  return status;
}
