/* assign.c — assignments: NAME=value, NAME+=value, NAME[k]=value and
 * NAME=(…), for simple commands (exec.c) and for declare, local, export
 * and readonly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/shell-private.h"

/* `a[-5]=x` before the array's start drops the command, not the shell
 * (unless set -e ended it already) */
static void dropped_on_bad_subscript(Shell *sh, bool ok)
{
  if (!ok && sh->bad_subscript && sh->jump != J_EXIT) sh->discard = true;
}

/* The `=` of an assignment word: past the name and its whole subscript,
 * which may hold one of its own (`a[x=1]=v`, `a[$code]=v` with code=y=2). */
const char *box_assign_eq(const char *t)
{
  const char *s = t;
  while (*s == '_' || g_ascii_isalnum(*s)) s++;
  if (*s == '[') {
    int depth = 0;
    for (; *s; s++) {
      if (*s == '[')
        depth++;
      else if (*s == ']' && --depth == 0)
        break;
    }
  }
  const char *eq = strchr(s, '=');
  return eq ? eq : strchr(t, '=');
}

/* NAME+=value, the value expanded: element 0 of an array, a sum for an
 * integer variable, else the text appended. */
bool box_var_append(Shell *sh, const char *name, const char *val)
{
  ShellVar *v = box_var_lookup(sh, name);
  if (v && (v->flags & (V_ARRAY | V_ASSOC))) return box_var_set_elem(sh, name, "0", val, true);
  if (v && (v->flags & V_INTEGER)) {
    char *e = box_int_append(sh, v->value, val);
    bool ok = e && box_var_set(sh, name, e);
    g_free(e);
    return ok;
  }
  const char *old = box_var_get(sh, name);
  char *nv = g_strconcat(old ? old : "", val, NULL);
  bool ok = box_var_set(sh, name, nv);
  g_free(nv);
  return ok;
}

/* NAME=value, NAME+=value, NAME[k]=value, NAME=(…). */
bool box_assign_word(Shell *sh, const char *t, bool local, int *status)
{
  const char *eq = box_assign_eq(t);
  size_t nl = (size_t)(eq - t);
  bool append = nl && t[nl - 1] == '+';
  if (append) nl--;
  if (!append && nl < 64 && !memchr(t, '[', nl) && eq[1] != '(') {
    /* NAME=value, the assignment of every loop: the name on the stack and
     * the expanded value handed to the variable without a copy */
    char name[64];
    memcpy(name, t, nl);
    name[nl] = 0;
    if (local) box_var_local(sh, name);
    char *val = box_expand_str(sh, eq + 1, true, status);
    if (!val) return false;
    sh->bad_subscript = false; /* a nameref to arr[i] may meet one */
    bool ok = box_var_set_take(sh, name, val);
    dropped_on_bad_subscript(sh, ok);
    return ok;
  }
  char *lhs = g_strndup(t, nl);
  char *sub = NULL;
  char *br = strchr(lhs, '[');
  if (br) {
    sub = g_strndup(br + 1, strlen(br + 1) - 1);
    *br = 0;
  }
  const char *rhs = eq + 1;
  bool ok = true;
  size_t rl = strlen(rhs);
  if (sub && rl >= 2 && rhs[0] == '(' && rhs[rl - 1] == ')') {
    /* bash refuses a list for one element, dropping the rest of the line */
    box_sh_error(sh, "%s[%s]: cannot assign list to array member", lhs, sub);
    sh->discard = sh->jump != J_EXIT;
    *status = 1;
    g_free(lhs);
    g_free(sub);
    return false;
  }
  if (local) box_var_local(sh, lhs);
  g_autofree char *ref_arr = NULL, *ref_key = NULL;
  if (!sub && rl >= 2 && rhs[0] == '(' && rhs[rl - 1] == ')' &&
      box_nameref_elem(sh, lhs, &ref_arr, &ref_key)) {
    /* a list through a nameref to an element: bash names the element */
    box_sh_error(sh, "`%s[%s]': not a valid identifier", ref_arr, ref_key);
    sh->discard = sh->jump != J_EXIT;
    *status = 1;
    g_free(lhs);
    return false;
  }
  if (!sub && rl >= 2 && rhs[0] == '(' && rhs[rl - 1] == ')') {
    /* array literal */
    char *inner = g_strndup(rhs + 1, rl - 2);
    GPtrArray *ws = box_parse_words(sh, inner);
    g_free(inner);
    ShellVar *v = box_var_lookup(sh, lhs);
    if (v && (v->flags & V_READONLY)) {
      box_sh_error(sh, "%s: readonly variable", lhs);
      sh->discard = true; /* as check_ro (vars.c): the command is dropped, not the shell */
      g_ptr_array_free(ws, TRUE);
      g_free(lhs);
      return false;
    }
    bool assoc = v && (v->flags & V_ASSOC);
    /* every word is expanded before the array changes: the right side of
     * `arr=("${arr[@]}" c)` sees the old array */
    GPtrArray *items =
      g_ptr_array_new_with_free_func(g_free); /* key (or NULL), value, "+" (or NULL) */
    for (guint i = 0; i < ws->len && ok; i++) {
      Word *w = ws->pdata[i];
      const char *wt = w->text;
      if (wt[0] == '[') {
        const char *close = strstr(wt, "]=");
        if (!close) close = strstr(wt, "]+=");
        if (close) {
          char *key = g_strndup(wt + 1, (size_t)(close - wt - 1));
          bool app = close[1] == '+';
          char *k = box_expand_subscript(sh, key, status);
          char *val = box_expand_str(sh, close + (app ? 3 : 2), true, status);
          if (!k || !val) ok = false;
          g_ptr_array_add(items, k);
          g_ptr_array_add(items, val);
          g_ptr_array_add(items, app ? g_strdup("+") : NULL);
          g_free(key);
          continue;
        }
      }
      GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
      if (!box_expand_words(sh, &w, 1, f, status)) ok = false;
      for (guint j = 0; ok && j < f->len; j++) {
        g_ptr_array_add(items, NULL);
        g_ptr_array_add(items, g_strdup(f->pdata[j]));
        g_ptr_array_add(items, NULL);
      }
      g_ptr_array_free(f, TRUE);
    }
    v = box_var_lookup(sh, lhs);
    if (!v) v = box_var_make(sh, lhs);
    v->flags &= ~V_NOVALUE;
    long next = 0;
    if (append) {
      if (!(v->flags & (V_ARRAY | V_ASSOC))) box_var_make_array(v, false);
      if (v->arr) next = v->arr->len;
    } else {
      box_var_clear(v);
      v->flags &= ~(V_ARRAY | V_ASSOC);
      box_var_make_array(v, assoc);
    }
    bool pairs = assoc && items->len && !items->pdata[0];
    for (guint i = 0; ok && i < items->len; i += 3) {
      const char *k = items->pdata[i], *val = items->pdata[i + 1];
      if (pairs) {
        /* declare -A m=(k1 v1 k2 v2): words taken two by two (bash 5.1) */
        k = val;
        val = i + 3 < items->len ? items->pdata[i + 4] : "";
        i += 3;
      }
      char num[24];
      if (!k && assoc) {
        /* an element without [k]= after one with it: bash warns, drops it */
        box_sh_error(sh, "%s: %s: must use subscript when assigning associative array", lhs, val);
        continue;
      }
      const char *plus = items->pdata[i + 2] ? "+" : "";
      if (k && !assoc && (!*k || !strcmp(k, "@") || !strcmp(k, "*"))) {
        /* bash names the item, skips it and goes on */
        box_sh_error(sh, "[%s]%s=%s: %s", k, plus, val,
                     *k ? "cannot assign to non-numeric index" : "bad array subscript");
        if (box_errexit_ends(sh)) break;
        continue;
      }
      if (k && !assoc) {
        /* the subscript once, so that its error is said once */
        int64_t idx;
        ok = box_subscript_value(sh, k, &idx);
        if (!ok) break;
        /* a negative one counts from the end so far, and so does the next */
        ShellVar *av = idx < 0 ? box_var_lookup(sh, lhs) : NULL;
        if (av && (av->flags & V_ARRAY)) idx += av->arr->len;
        if (idx < 0) {
          g_autofree char *item = g_strdup_printf("[%s]%s=%s", k, plus, val);
          if (box_bad_subscript(sh, item)) break;
          continue;
        }
        next = (long)idx + 1;
        k = box_i64_str(idx, num);
      }
      if (k) {
        ok = box_var_set_elem(sh, lhs, k, val, items->pdata[i + 2] != NULL);
      } else {
        char key[32];
        g_snprintf(key, sizeof key, "%ld", next++);
        ok = box_var_set_elem(sh, lhs, key, val, false);
      }
    }
    g_ptr_array_free(items, TRUE);
    g_ptr_array_free(ws, TRUE);
    g_free(lhs);
    return ok;
  }
  char *val = box_expand_str(sh, rhs, true, status);
  if (!val) {
    g_free(lhs);
    g_free(sub);
    return false;
  }
  if (sub) {
    ShellVar *v = box_var_lookup(sh, lhs);
    bool assoc = v && (v->flags & V_ASSOC);
    /* `a[@]=x`, `a[*]=x`, `a[]=x` name no element of an indexed array */
    bool no_element = !*sub || (!assoc && (!strcmp(sub, "@") || !strcmp(sub, "*")));
    char *k = no_element ? NULL : box_expand_subscript(sh, sub, status);
    if (no_element) {
      box_sh_error(sh, "%.*s: bad array subscript", (int)(eq - t - append), t);
      if (!box_errexit_ends(sh)) sh->discard = true;
      ok = false;
    } else if (k && !*k && assoc) {
      /* `m[$empty]=x`: bash names the subscript as written */
      box_sh_error(sh, "%.*s: bad array subscript", (int)(eq - t - append), t);
      sh->discard = true; /* the command goes, not the shell */
      ok = false;
    } else {
      sh->bad_subscript = false;
      ok = k && box_var_set_elem(sh, lhs, k, val, append);
    }
    g_free(k);
  } else if (append) {
    ok = box_var_append(sh, lhs, val);
  } else {
    sh->bad_subscript = false;
    ok = box_var_set(sh, lhs, val);
  }
  dropped_on_bad_subscript(sh, ok);
  g_free(val);
  g_free(lhs);
  g_free(sub);
  return ok;
}
