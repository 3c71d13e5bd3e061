/* awk.c — `awk [-F fs] [-v var=val] [-f progfile | 'prog'] [operand...]`:
 * options, the special variables, and BEGIN, the rules over each record,
 * END.  A syntax error exits 1 and a fatal error 2, as gawk's do. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/awk/awk.h"

bool awk_next_main(Awk *A, GString *s, bool to_record);
void awk_close_all(Awk *A);
void awk_close_main(Awk *A);
bool awk_is_assignment(const char *arg);

static const char *const special_names[AV_NSPECIAL] = {
  "NF",   "NR",     "FNR",     "FS",       "OFS",        "ORS",     "RS",   "SUBSEP", "CONVFMT",
  "OFMT", "RSTART", "RLENGTH", "FILENAME", "IGNORECASE", "ENVIRON", "ARGC", "ARGV",
};

static void grow_vars(Awk *A)
{
  int n = (int)A->var_names->len;
  if (n <= A->nvars) return;
  A->vars = g_renew(AVar, A->vars, n);
  memset(A->vars + A->nvars, 0, sizeof(AVar) * (size_t)(n - A->nvars));
  A->nvars = n;
}

static void set_var_strnum(Awk *A, const char *name, const char *val)
{
  int idx = awk_var_lookup(A, name);
  grow_vars(A);
  awk_val_free(&A->vars[idx].v);
  A->vars[idx].kind = K_SCALAR;
  A->vars[idx].v = awk_strnum(awk_unescape(val, strlen(val), false));
}

static void array_set(Awk *A, int idx, const char *key, Val v)
{
  AVar *arr = awk_array_of(A, &(ANode){ .op = AN_VAR, .ival = idx });
  Val *e = awk_array_ref(A, arr, key, true);
  awk_val_free(e);
  *e = v;
}

/* Runs the rules over one record (the record is in $0). */
static void run_rules(Awk *A)
{
  for (guint i = 0; i < A->rules->len; i++) {
    Rule *r = A->rules->pdata[i];
    if (r->kind) continue;
    bool hit;
    if (r->pat2) {
      if (r->in_range) {
        hit = true;
        if (awk_eval_cond(A, r->pat2)) r->in_range = false;
      } else if (awk_eval_cond(A, r->pat)) {
        hit = true;
        r->in_range = !awk_eval_cond(A, r->pat2);
      } else {
        hit = false;
      }
    } else {
      hit = !r->pat || awk_eval_cond(A, r->pat);
    }
    if (!hit) continue;
    if (r->action) {
      awk_exec(A, r->action);
    } else {
      const char *s = A->fields[0].s ? A->fields[0].s : "";
      box_out_write(A->c->out, s, strlen(s));
      box_out_puts(A->c->out, awk_var_cstr(A, AV_ORS));
      awk_check_out(A, A->c->out);
    }
  }
}

static bool has_kind(Awk *A, int kind)
{
  for (guint i = 0; i < A->rules->len; i++)
    if (((Rule *)A->rules->pdata[i])->kind == kind) return true;
  return false;
}

static void run_kind(Awk *A, int kind)
{
  for (guint i = 0; i < A->rules->len; i++) {
    Rule *r = A->rules->pdata[i];
    if (r->kind == kind) awk_exec(A, r->action);
  }
}

static void free_var(AVar *v)
{
  awk_val_free(&v->v);
  if (v->arr) {
    awk_array_clear(v);
    g_hash_table_destroy(v->arr);
  }
}

static void free_func(gpointer p)
{
  Func *f = p;
  for (int i = 0; i < f->nparams; i++) g_free(f->params[i]);
  g_free(f->params);
  g_free(f);
}

static void free_node(gpointer p)
{
  /* the tree's arrays and strings are listed too; a node frees its regex
     through the cache */
  g_free(p);
}

static int awk_run(Awk *A, int argc, char **argv)
{
  BoxCmd *c = A->c;
  GString *volatile prog = NULL;
  GPtrArray *volatile assigns = g_ptr_array_new();
  const char *fs = NULL;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (a[0] != '-' || a[1] == 0) break;
    char opt = a[1];
    const char *val = a[2] ? a + 2 : NULL;
    if (opt != 'F' && opt != 'v' && opt != 'f') {
      box_fdprintf(c->err,
                   "awk: invalid option -- '%c'\nusage: awk [-F fs][-v var=value][prog | -f "
                   "progfile][file ...]\n",
                   opt);
      return 1;
    }
    if (!val) {
      if (i + 1 >= argc) {
        box_fdprintf(c->err, "awk: option requires an argument -- '%c'\n", opt);
        return 1;
      }
      val = argv[++i];
    }
    if (opt == 'F') {
      fs = val;
    } else if (opt == 'v') {
      if (!awk_is_assignment(val)) {
        box_fdprintf(c->err, "awk: `%s' argument to `-v' not in `var=value' form\n", val);
        return 2;
      }
      g_ptr_array_add(assigns, (gpointer)val);
    } else {
      if (!prog) prog = g_string_new(NULL);
      GString *text = g_string_new(NULL);
      int fd = strcmp(val, "-") == 0 ? dup(c->in) : box_open_file(val, O_RDONLY | O_CLOEXEC);
      if (fd < 0 || !bx_read_all(fd, text)) {
        int e = errno;
        char *t = box_error_text(c->sh, e);
        box_fdprintf(c->err, "awk: cannot open source file `%s' for reading: %s\n", val, t);
        g_free(t);
        return 2;
      }
      close(fd);
      g_string_append_len(prog, text->str, (gssize)text->len);
      g_string_append_c(prog, '\n');
      g_string_free(text, TRUE);
      A->srcname = val;
    }
  }
  if (!prog) {
    if (i >= argc) {
      box_fdprintf(c->err, "usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]\n");
      g_ptr_array_free(assigns, TRUE);
      return 1;
    }
    prog = g_string_new(argv[i++]);
    A->srcname = "cmd. line";
  }
  for (int k = 0; k < AV_NSPECIAL; k++) awk_var_lookup(A, special_names[k]);
  grow_vars(A);
  awk_set_var_str(A, AV_FS, " ");
  awk_set_var_str(A, AV_OFS, " ");
  awk_set_var_str(A, AV_ORS, "\n");
  awk_set_var_str(A, AV_RS, "\n");
  awk_set_var_str(A, AV_SUBSEP, "\034");
  awk_set_var_str(A, AV_CONVFMT, "%.6g");
  awk_set_var_str(A, AV_OFMT, "%.6g");
  awk_set_var_num(A, AV_NR, 0);
  awk_set_var_num(A, AV_FNR, 0);
  awk_set_var_num(A, AV_NF, 0);
  awk_set_var_num(A, AV_RSTART, 0);
  awk_set_var_num(A, AV_RLENGTH, -1);
  awk_set_var_str(A, AV_FILENAME, "");
  awk_set_var_num(A, AV_IGNORECASE, 0);
  for (int k = AV_FNR; k < AV_NSPECIAL; k++) A->vars[k].kind = K_SCALAR;
  A->vars[AV_NF].kind = A->vars[AV_NR].kind = K_SCALAR;
  A->vars[AV_ENVIRON].kind = A->vars[AV_ARGV].kind = K_UNTYPED;
  awk_set_record(A, "", 0);
  A->split_done = true;

  jmp_buf exit_jb;
  A->jmp_exit = &exit_jb;
  if (setjmp(exit_jb)) {
    g_string_free(prog, TRUE);
    g_ptr_array_free(assigns, TRUE);
    return A->exit_status;
  }
  if (!awk_parse(A, prog->str)) {
    g_string_free(prog, TRUE);
    g_ptr_array_free(assigns, TRUE);
    return 1;
  }
  g_string_free(prog, TRUE);
  grow_vars(A);

  char **env = box_var_environ(c->sh);
  for (char **e = env; e && *e; e++) {
    char *eq = strchr(*e, '=');
    if (!eq) continue;
    char *k = g_strndup(*e, (gsize)(eq - *e));
    array_set(A, AV_ENVIRON, k, awk_strnum(g_strdup(eq + 1)));
    g_free(k);
  }
  g_strfreev(env);
  array_set(A, AV_ARGV, "0", awk_str(g_strdup("awk")));
  int nargs = 1;
  for (; i < argc; i++) {
    char key[32];
    g_snprintf(key, sizeof key, "%d", nargs++);
    array_set(A, AV_ARGV, key, awk_strnum(g_strdup(argv[i])));
  }
  awk_set_var_num(A, AV_ARGC, nargs);
  if (fs) set_var_strnum(A, "FS", fs);
  for (guint k = 0; k < assigns->len; k++) {
    const char *a = assigns->pdata[k];
    const char *eq = strchr(a, '=');
    char *name = g_strndup(a, (gsize)(eq - a));
    set_var_strnum(A, name, eq + 1);
    g_free(name);
  }
  g_ptr_array_free(assigns, TRUE);
  A->argi = 1;

  /* a longjmp out of a rule lands here: exit goes to END, a fatal error out */
  volatile int phase = 0;
  if (setjmp(exit_jb)) {
    A->frame = NULL;
    A->depth = 0;
    if (A->jmp_kind == 9 || phase == 2) goto out;
    A->exiting = true;
    phase = 2;
    goto end;
  }
  run_kind(A, 1);
  phase = 1;
  if (has_kind(A, 0) || has_kind(A, 2)) {
    GString *rec = g_string_new(NULL);
    jmp_buf next_jb;
    A->jmp_next = &next_jb;
    if (setjmp(next_jb)) {
      A->frame = NULL;
      A->depth = 0;
      if (A->jmp_kind == 2) awk_close_main(A);
    }
    while (awk_next_main(A, rec, true)) run_rules(A);
    A->jmp_next = NULL;
    g_string_free(rec, TRUE);
  }
end:
  A->jmp_next = NULL;
  if (phase == 2 && A->exiting && A->jmp_kind == 3 && !has_kind(A, 2)) goto out;
  phase = 2;
  run_kind(A, 2);
out:
  return A->exit_status;
}

int box_cmd_awk(BoxCmd *c)
{
  Awk *A = g_new0(Awk, 1);
  A->c = c;
  A->rules = g_ptr_array_new_with_free_func(g_free);
  A->var_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  A->var_names = g_ptr_array_new_with_free_func(g_free);
  A->funcs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_func);
  A->nodes = g_ptr_array_new_with_free_func(free_node);
  A->streams = g_ptr_array_new();
  A->regexes = g_ptr_array_new_with_free_func(awk_regex_free);
  A->srcname = "cmd. line";
  /* gawk starts from seed 1 (glibc's srandom(0) is srandom(1) too), and
   * the first srand() returns it */
  A->seed = 1;
  srandom(1);
  int st = awk_run(A, c->argc, c->argv);
  awk_close_all(A);
  for (int k = 0; k < A->nvars; k++) free_var(&A->vars[k]);
  g_free(A->vars);
  for (int k = 0; k < A->fields_cap; k++) awk_val_free(&A->fields[k]);
  g_free(A->fields);
  g_free(A->spans);
  g_ptr_array_free(A->rules, TRUE);
  g_hash_table_destroy(A->var_index);
  g_ptr_array_free(A->var_names, TRUE);
  g_hash_table_destroy(A->funcs);
  g_ptr_array_free(A->nodes, TRUE);
  g_ptr_array_free(A->streams, TRUE);
  g_ptr_array_free(A->regexes, TRUE);
  if (A->regex_cache) g_hash_table_destroy(A->regex_cache);
  if (A->regex_icase_cache) g_hash_table_destroy(A->regex_icase_cache);
  g_free(A);
  return st;
}
