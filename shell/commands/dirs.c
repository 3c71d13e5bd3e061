/* dirs.c — bash's directory stack: dirs [-clpv] [+N|-N], pushd [-n]
 * [+N|-N|dir], popd [-n] [+N|-N], with bash's output and errors.
 *
 * The stack lives in the DIRSTACK array itself (element 0 the working
 * directory, as bash shows it), so an assignment to DIRSTACK changes the
 * stack as in bash, and the Shell keeps no second copy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

static const char dirs_usage[] = "dirs: usage: dirs [-clpv] [+N] [-N]";
static const char pushd_usage[] = "pushd: usage: pushd [-n] [+N | -N | dir]";
static const char popd_usage[] = "popd: usage: popd [-n] [+N | -N]";

/* The stack, the working directory first (g_free each). */
static GPtrArray *stack_get(Shell *sh)
{
  GPtrArray *st = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(st, g_strdup(sh->cwd));
  ShellVar *v = box_var_lookup(sh, "DIRSTACK");
  if (v && (v->flags & V_ARRAY)) {
    GPtrArray *vals = box_var_values(v, false);
    for (guint i = 1; i < vals->len; i++) g_ptr_array_add(st, g_strdup(vals->pdata[i]));
    g_ptr_array_free(vals, TRUE);
  }
  return st;
}

char *box_dirstack_tilde(Shell *sh, const char *spec)
{
  bool from_right = spec[0] == '-';
  const char *digits = spec + (spec[0] == '-' || spec[0] == '+');
  if (!*digits || strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 9) return NULL;
  long n = strtol(digits, NULL, 10);
  g_autoptr(GPtrArray) st = stack_get(sh);
  if (n >= (long)st->len) return NULL;
  return g_strdup(st->pdata[from_right ? (long)st->len - 1 - n : n]);
}

static void stack_set(Shell *sh, GPtrArray *st)
{
  ShellVar *v = box_var_make(sh, "DIRSTACK");
  box_var_clear(v);
  /* box_var_clear keeps the attributes: an array again from empty */
  v->flags &= ~(unsigned)(V_ARRAY | V_ASSOC);
  box_var_make_array(v, false);
  for (guint i = 0; i < st->len; i++) {
    char key[16];
    g_snprintf(key, sizeof key, "%u", i);
    box_var_set_elem(sh, "DIRSTACK", key, st->pdata[i], false);
  }
}

/* bash's "~" for $HOME at the start of a path. */
static char *polite(Shell *sh, const char *dir, bool long_form)
{
  const char *home = box_var_get(sh, "HOME");
  size_t n = home ? strlen(home) : 0;
  if (!long_form && n && strcmp(home, "/") && strncmp(dir, home, n) == 0 &&
      (dir[n] == '/' || dir[n] == '\0'))
    return g_strconcat("~", dir + n, NULL);
  return g_strdup(dir);
}

static void print_stack(BoxCmd *c, GPtrArray *st, bool long_form, bool lines, bool numbered)
{
  for (guint i = 0; i < st->len; i++) {
    g_autofree char *d = polite(c->sh, st->pdata[i], long_form);
    if (numbered)
      box_out_printf(c->out, "%2u  %s\n", i, d);
    else
      box_out_printf(c->out, "%s%s", d, lines ? "\n" : i + 1 < st->len ? " " : "\n");
  }
}

static int usage_error(BoxCmd *c, const char *cmd, const char *arg, const char *why,
                       const char *usage)
{
  box_fdprintf(c->err, "strands-shell: %s: %s: %s\n%s\n", cmd, arg, why, usage);
  return 2;
}

/* "+N" or "-N": the index from the left (0: the working directory) of a
 * stack of n; -1 after the message when out of range.  *is_index false
 * when arg is no signed number. */
static int stack_index(BoxCmd *c, const char *cmd, const char *arg, guint n, bool *is_index)
{
  char *end;
  *is_index = false;
  if ((*arg != '+' && *arg != '-') || !g_ascii_isdigit(arg[1])) return -1;
  long k = strtol(arg + 1, &end, 10);
  if (*end) return -1;
  *is_index = true;
  if (k < (long)n) return *arg == '+' ? (int)k : (int)(n - 1 - k);
  if (n == 1)
    box_fdprintf(c->err, "strands-shell: %s: directory stack empty\n", cmd);
  else
    /* dirs names the number without its sign, pushd and popd with it */
    box_fdprintf(c->err, "strands-shell: %s: %s: directory stack index out of range\n", cmd,
                 strcmp(cmd, "dirs") ? arg : arg + 1);
  return -1;
}

/* dirs' and popd's words: "-X" for each letter X of flags sets the bool
 * set gives for it, "+N" or "-N" is *index, "--" is passed over; anything
 * else is a usage error (other: what bash calls a word that is no
 * option), 2 after its message, else 0. */
static int parse_words(BoxCmd *c, const char *cmd, const char *flags, bool *const *set,
                       const char **index, const char *other, const char *usage)
{
  for (int i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    const char *f = a[0] == '-' && a[1] && !a[2] ? strchr(flags, a[1]) : NULL;
    if (f) {
      *set[f - flags] = true;
    } else if (!strcmp(a, "--")) {
      continue;
    } else if (*a == '+' || *a == '-') {
      char *end;
      if (!g_ascii_isdigit(a[1]) || (strtol(a + 1, &end, 10), *end))
        return usage_error(c, cmd, a, "invalid number", usage);
      *index = a;
    } else {
      return usage_error(c, cmd, a, other, usage);
    }
  }
  return 0;
}

int box_cmd_dirs(BoxCmd *c)
{
  bool long_form = false, lines = false, numbered = false, clear = false;
  const char *index = NULL;
  bool *const set[] = { &long_form, &lines, &numbered, &clear };
  int bad = parse_words(c, "dirs", "lpvc", set, &index, "invalid option", dirs_usage);
  if (bad) return bad;
  lines |= numbered;
  GPtrArray *st = stack_get(c->sh);
  int status = 0;
  if (clear) {
    g_ptr_array_set_size(st, 1);
    stack_set(c->sh, st);
  } else if (index) {
    bool is_index;
    int k = stack_index(c, "dirs", index, st->len, &is_index);
    if (k < 0) {
      status = 1;
    } else {
      g_autofree char *d = polite(c->sh, st->pdata[k], long_form);
      if (numbered)
        box_out_printf(c->out, "%2d  %s\n", k, d);
      else
        box_out_printf(c->out, "%s\n", d);
    }
  } else {
    print_stack(c, st, long_form, lines, numbered);
  }
  g_ptr_array_free(st, TRUE);
  return status;
}

/* Ends pushd or popd: the stack saved and printed as dirs prints it. */
static int stack_done(BoxCmd *c, GPtrArray *st)
{
  g_free(st->pdata[0]);
  st->pdata[0] = g_strdup(c->sh->cwd);
  stack_set(c->sh, st);
  print_stack(c, st, false, false, false);
  g_ptr_array_free(st, TRUE);
  return 0;
}

int box_cmd_pushd(BoxCmd *c)
{
  bool no_cd = false;
  const char *arg = NULL;
  int i = 1;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (!strcmp(a, "-n")) {
      no_cd = true;
    } else if (!strcmp(a, "--")) {
      i++;
      break;
    } else if ((*a == '+' || *a == '-') && a[1]) {
      char *end;
      if (!g_ascii_isdigit(a[1]) || (strtol(a + 1, &end, 10), *end))
        return usage_error(c, "pushd", a, "invalid number", pushd_usage);
      break;
    } else {
      break;
    }
  }
  if (i < c->argc) arg = c->argv[i++];
  if (i < c->argc) {
    box_fdprintf(c->err, "strands-shell: pushd: too many arguments\n");
    return 1;
  }
  GPtrArray *st = stack_get(c->sh);
  bool is_index = false;
  int k = arg ? stack_index(c, "pushd", arg, st->len, &is_index) : -1;
  if (!arg || is_index) {
    if (!arg && st->len < 2) {
      box_fdprintf(c->err, "strands-shell: pushd: no other directory\n");
      k = -1;
    }
    if (!arg && k < 0 && st->len >= 2) {
      /* no operand swaps the top two */
      gpointer top = st->pdata[0];
      st->pdata[0] = st->pdata[1];
      st->pdata[1] = top;
    } else if (k < 0) {
      g_ptr_array_free(st, TRUE);
      return 1;
    } else {
      /* the Nth comes to the top, the ones above it go round to the bottom */
      GPtrArray *rot = g_ptr_array_new_with_free_func(g_free);
      for (guint j = 0; j < st->len; j++)
        g_ptr_array_add(rot, g_strdup(st->pdata[(j + (guint)k) % st->len]));
      g_ptr_array_free(st, TRUE);
      st = rot;
    }
    if (!no_cd && bx_chdir(c, "pushd", st->pdata[0]) != 0) {
      g_ptr_array_free(st, TRUE);
      return 1;
    }
    return stack_done(c, st);
  }
  if (no_cd) {
    g_ptr_array_insert(st, 1, g_strdup(arg));
  } else {
    if (bx_chdir(c, "pushd", arg) != 0) {
      g_ptr_array_free(st, TRUE);
      return 1;
    }
    g_ptr_array_insert(st, 0, g_strdup(c->sh->cwd));
  }
  return stack_done(c, st);
}

int box_cmd_popd(BoxCmd *c)
{
  bool no_cd = false;
  const char *arg = NULL;
  bool *const set[] = { &no_cd };
  int bad = parse_words(c, "popd", "n", set, &arg, "invalid argument", popd_usage);
  if (bad) return bad;
  GPtrArray *st = stack_get(c->sh);
  int k = no_cd ? 1 : 0;
  bool is_index;
  if (st->len < 2) {
    box_fdprintf(c->err, "strands-shell: popd: directory stack empty\n");
    k = -1;
  } else if (arg) {
    k = stack_index(c, "popd", arg, st->len, &is_index);
  }
  if (k < 0) {
    g_ptr_array_free(st, TRUE);
    return 1;
  }
  if (k == 0 && !no_cd && bx_chdir(c, "popd", st->pdata[1]) != 0) {
    g_ptr_array_free(st, TRUE);
    return 1;
  }
  g_ptr_array_remove_index(st, (guint)k);
  return stack_done(c, st);
}
