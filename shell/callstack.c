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
