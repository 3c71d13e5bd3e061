/* cond.c — [[ ]]: its operators, patterns and =~ with BASH_REMATCH. */
#include <regex.h>
#include <string.h>

#include "shell/shell-private.h"

static char *cond_str(Shell *sh, Word *w, int *err)
{
  if (w->flags & W_PLAIN) return g_strdup(w->text);
  int st = 1;
  char *s = box_expand_str(sh, w->text, false, &st);
  if (!s) *err = st | BOX_COND_FATAL;
  return s;
}

static bool regex_match(Shell *sh, const char *s, Word *w, int *err)
{
  /* quoted parts of the pattern match literally */
  char *pat = box_expand_regex(sh, w->text, err);
  if (!pat) return false;
  GString *re = g_string_new(pat);
  g_free(pat);
  regex_t rx;
  int flags = REG_EXTENDED;
  if (sh->shopts & SH_NOCASEMATCH) flags |= REG_ICASE;
  if (box_pattern_too_deep(re->str)) {
    box_sh_error(sh, "maximum nesting depth exceeded (%d)", BOX_MAX_NEST);
    g_string_free(re, TRUE);
    *err = 2;
    return false;
  }
  if (regcomp(&rx, re->str, flags) != 0) {
    g_string_free(re, TRUE);
    *err = 2;
    return false;
  }
  g_string_free(re, TRUE);
  regmatch_t m[64];
  bool ok = regexec(&rx, s, 64, m, 0) == 0;
  box_var_unset(sh, "BASH_REMATCH");
  if (ok) {
    ShellVar *v = box_var_make(sh, "BASH_REMATCH");
    box_var_make_array(v, false);
    for (size_t i = 0; i <= rx.re_nsub && i < 64; i++) {
      char k[16];
      g_snprintf(k, sizeof k, "%zu", i);
      char *sub = m[i].rm_so < 0 ? g_strdup("")
                                 : g_strndup(s + m[i].rm_so, (size_t)(m[i].rm_eo - m[i].rm_so));
      box_var_set_elem(sh, "BASH_REMATCH", k, sub, false);
      g_free(sub);
    }
  }
  regfree(&rx);
  return ok;
}

int box_cond_eval(Shell *sh, Cond *c, int *err)
{
  switch (c->kind) {
  case C_AND: {
    int l = box_cond_eval(sh, c->l, err);
    if (*err || !l) return l;
    return box_cond_eval(sh, c->r, err);
  }
  case C_OR: {
    int l = box_cond_eval(sh, c->l, err);
    if (*err || l) return l;
    return box_cond_eval(sh, c->r, err);
  }
  case C_NOT: return !box_cond_eval(sh, c->l, err);
  case C_WORD: {
    char *s = cond_str(sh, c->a, err);
    bool r = s && *s;
    g_free(s);
    return r;
  }
  case C_UNARY: {
    char *s = cond_str(sh, c->a, err);
    if (!s) return 0;
    int r;
    if (strcmp(c->op, "-v") == 0) {
      r = box_var_isset(sh, s);
    } else {
      r = box_test_unary(sh, c->op, s);
    }
    g_free(s);
    return r > 0;
  }
  case C_BINARY: {
    char *a = cond_str(sh, c->a, err);
    if (!a) return 0;
    int r = 0;
    if (strcmp(c->op, "==") == 0 || strcmp(c->op, "=") == 0 || strcmp(c->op, "!=") == 0) {
      char *pat = box_expand_pattern(sh, c->b->text, err);
      if (!pat) *err |= BOX_COND_FATAL;
      if (pat) {
        r = box_pattern_match(sh, pat, a, true);
        if (c->op[0] == '!') r = !r;
      }
      g_free(pat);
    } else if (strcmp(c->op, "=~") == 0) {
      r = regex_match(sh, a, c->b, err);
    } else {
      char *b = cond_str(sh, c->b, err);
      if (b) {
        if (strcmp(c->op, "<") == 0)
          r = strcmp(a, b) < 0;
        else if (strcmp(c->op, ">") == 0)
          r = strcmp(a, b) > 0;
        else if (c->op[0] == '-' && strchr("eglnt", c->op[1]) && c->op[1] != 'n') {
          int64_t x, y;
          sh->arith_who = "[[";
          bool ok = box_arith(sh, a, &x) && box_arith(sh, b, &y);
          sh->arith_who = NULL;
          if (!ok) {
            *err = 1;
          } else {
            const char *o = c->op + 1;
            if (!strcmp(o, "eq"))
              r = x == y;
            else if (!strcmp(o, "ne"))
              r = x != y;
            else if (!strcmp(o, "lt"))
              r = x < y;
            else if (!strcmp(o, "le"))
              r = x <= y;
            else if (!strcmp(o, "gt"))
              r = x > y;
            else if (!strcmp(o, "ge"))
              r = x >= y;
            else
              r = box_test_binary(sh, a, c->op, b, sh->fd[2]) == 0;
          }
        } else if (!strcmp(c->op, "-ne")) {
          int64_t x, y;
          sh->arith_who = "[[";
          bool ok = box_arith(sh, a, &x) && box_arith(sh, b, &y);
          sh->arith_who = NULL;
          if (!ok)
            *err = 1;
          else
            r = x != y;
        } else {
          r = box_test_binary(sh, a, c->op, b, sh->fd[2]) == 0;
        }
        g_free(b);
      }
    }
    g_free(a);
    return r;
  }
  }
  return 0;
}
