/* callstack.c: bash's call stack, kept where bash keeps it: in the arrays
 * FUNCNAME, BASH_SOURCE and BASH_LINENO (innermost frame at index 0), so
 * that `declare -p`, `${BASH_SOURCE[0]}` and `caller` read one truth.
 *
 * A frame is a function's call (its name, the file that defined it, the
 * line it was called from), a sourced file ("source", the file, the line
 * of the `.`) or a script's main ("main", the script, 0).  FUNCNAME holds
 * names only while a function runs: at the top level, even inside a
 * sourced file, it is declared and empty, as in bash.  A script that
 * unsets one of the three takes it out of the Shell's keeping. */
#include <string.h>

#include "shell/shell-private.h"

static const char *const stack_vars[] = { "FUNCNAME", "BASH_SOURCE", "BASH_LINENO" };

static ShellVar *kept(Shell *sh, const char *name)
{
  if (!sh->lazy_made) return NULL; /* made from the frames when first looked at */
  ShellVar *v = g_hash_table_lookup(sh->vars, name);
  if (!v || (v->flags & (V_ARRAY | V_NAMEREF | V_ASSOC)) != V_ARRAY) return NULL;
  if (!v->arr) v->arr = g_ptr_array_new_with_free_func(g_free);
  v->flags &= ~(unsigned)V_NOVALUE;
  return v;
}

static void push_front(Shell *sh, const char *name, char *value)
{
  ShellVar *v = kept(sh, name);
  if (v)
    g_ptr_array_insert(v->arr, 0, value);
  else
    g_free(value);
}

static void pop_front(Shell *sh, const char *name)
{
  ShellVar *v = kept(sh, name);
  if (v && v->arr->len) g_ptr_array_remove_index(v->arr, 0);
}

static bool in_function(Shell *sh)
{
  return sh->call_functions > 0;
}

/* FUNCNAME from the frames, or declared and empty outside functions. */
static void funcname_fill(Shell *sh)
{
  ShellVar *v = kept(sh, "FUNCNAME");
  if (!v) return;
  g_ptr_array_set_size(v->arr, 0);
  if (!in_function(sh)) {
    v->flags |= V_NOVALUE;
    return;
  }
  for (guint i = sh->calls->len; i-- > 0;)
    g_ptr_array_add(v->arr, g_strdup(g_array_index(sh->calls, BoxCall, i).name));
}

void box_callstack_materialize(Shell *sh)
{
  for (size_t i = 0; i < G_N_ELEMENTS(stack_vars); i++) {
    if (g_hash_table_contains(sh->vars, stack_vars[i])) continue;
    ShellVar *v = box_var_make(sh, stack_vars[i]);
    box_var_make_array(v, false);
  }
  guint n = sh->calls ? sh->calls->len : 0;
  ShellVar *src = kept(sh, "BASH_SOURCE"), *lines = kept(sh, "BASH_LINENO");
  for (guint i = n; i-- > 0;) {
    const BoxCall *c = &g_array_index(sh->calls, BoxCall, i);
    if (src) g_ptr_array_add(src->arr, g_strdup(c->source));
    if (lines) g_ptr_array_add(lines->arr, g_strdup_printf("%ld", c->line));
  }
  funcname_fill(sh);
}

void box_callstack_free(Shell *sh)
{
  if (!sh->calls) return;
  for (guint i = 0; i < sh->calls->len; i++) {
    BoxCall *c = &g_array_index(sh->calls, BoxCall, i);
    g_free(c->name);
    g_free(c->source);
  }
  g_array_free(sh->calls, TRUE);
}

void box_callstack_push(Shell *sh, const char *name, const char *source, long line, bool function)
{
  if (!sh->calls) sh->calls = g_array_new(FALSE, FALSE, sizeof(BoxCall));
  bool was_in_function = function && in_function(sh);
  BoxCall c = { g_strdup(name), g_strdup(source), line, function };
  g_array_append_val(sh->calls, c);
  sh->call_functions += function;
  push_front(sh, "BASH_SOURCE", g_strdup(source));
  push_front(sh, "BASH_LINENO", g_strdup_printf("%ld", line));
  if (was_in_function)
    push_front(sh, "FUNCNAME", g_strdup(name));
  else if (function)
    funcname_fill(sh);
  else if (in_function(sh))
    push_front(sh, "FUNCNAME", g_strdup(name));
}

void box_callstack_pop(Shell *sh)
{
  g_return_if_fail(sh->calls && sh->calls->len > 0);
  BoxCall *c = &g_array_index(sh->calls, BoxCall, sh->calls->len - 1);
  bool function = c->function;
  g_free(c->name);
  g_free(c->source);
  g_array_set_size(sh->calls, sh->calls->len - 1);
  sh->call_functions -= function;
  pop_front(sh, "BASH_SOURCE");
  pop_front(sh, "BASH_LINENO");
  if (function && !in_function(sh))
    funcname_fill(sh);
  else if (in_function(sh))
    pop_front(sh, "FUNCNAME");
}

void box_callstack_reset(Shell *sh)
{
  while (sh->calls && sh->calls->len) box_callstack_pop(sh);
}

const char *box_callstack_source(Shell *sh)
{
  guint n = sh->calls ? sh->calls->len : 0;
  return n ? g_array_index(sh->calls, BoxCall, n - 1).source : "environment";
}

const BoxCall *box_callstack_frame(Shell *sh, guint k)
{
  guint n = sh->calls ? sh->calls->len : 0;
  return k < n ? &g_array_index(sh->calls, BoxCall, n - 1 - k) : NULL;
}

const char *box_callstack_function(Shell *sh)
{
  for (guint i = sh->calls ? sh->calls->len : 0; i-- > 0;) {
    const BoxCall *c = &g_array_index(sh->calls, BoxCall, i);
    if (c->function) return c->name;
  }
  return NULL;
}

/* A function call: its positional parameters, frame, call-stack entry and
 * the traps a function keeps or hides, all given back as it returns. */
int box_call_function(Shell *sh, Node *fn, int argc, char **argv)
{
  if (sh->func_depth >= sh->max_depth) {
    box_sh_error(sh, "%s: maximum function nesting level exceeded (%d)", argv[0], sh->max_depth);
    sh->jump = J_EXIT;
    sh->exit_status = 1;
    return 1;
  }
  char **old_pos = sh->pos;
  int old_npos = sh->npos;
  sh->pos = g_new0(char *, argc);
  for (int i = 1; i < argc; i++) sh->pos[i - 1] = g_strdup(argv[i]);
  sh->npos = argc - 1;
  sh->func_depth++;
  box_frame_push(sh);
  long call_line = sh->lineno;
  box_callstack_push(sh, argv[0], fn->u.func.source ? fn->u.func.source : "environment", call_line,
                     true);
  /* a function with its own OPTIND (`local OPTIND`) leaves the caller's
   * getopts where it was, as bash restores its state */
  int optind_sub = sh->optind_sub;
  const char *oi = box_var_get(sh, "OPTIND");
  char *optind_before = g_strdup(oi);
  char *err_trap = box_trap_hide(sh, TRAP_ERR, O_ERRTRACE);
  /* a function declare -ft marked keeps them as under set -T */
  bool traced = sh->traced_funcs && g_hash_table_contains(sh->traced_funcs, argv[0]);
  char *ret_trap = traced ? NULL : box_trap_hide(sh, TRAP_RETURN, O_FUNCTRACE);
  char *debug_trap = traced ? NULL : box_trap_hide(sh, TRAP_DEBUG, O_FUNCTRACE);
  /* the trap at the call names the line the body starts on, as bash's */
  long body_line = fn->u.func.body_line > 0 ? fn->u.func.body_line : call_line;
  int st = box_debug_run(sh, body_line, NULL) ? box_eval(sh, fn->u.func.body) : sh->exit_status;
  sh->lineno = call_line; /* $LINENO after the call is the caller's line */
  if (sh->jump == J_RETURN) {
    sh->jump = J_NONE;
    st = sh->exit_status;
  }
  if (sh->traps[TRAP_RETURN] && !sh->in_trap) box_run_trap_text(sh, sh->traps[TRAP_RETURN]);
  box_trap_unhide(sh, TRAP_ERR, err_trap);
  box_trap_unhide(sh, TRAP_RETURN, ret_trap);
  box_trap_unhide(sh, TRAP_DEBUG, debug_trap);
  box_frame_pop(sh);
  oi = box_var_get(sh, "OPTIND");
  if (g_strcmp0(oi, optind_before) == 0) sh->optind_sub = optind_sub;
  g_free(optind_before);
  sh->func_depth--;
  g_strfreev(sh->pos);
  sh->pos = old_pos;
  sh->npos = old_npos;
  box_callstack_pop(sh);
  return st;
}
