/* declare.c — `declare`/`typeset` [-aAgilnrux] [-p] [-f|-F] [NAME[=value]…]
 * and the implementation export, readonly and local share. */
#include <string.h>

#include "shell/commands/commands-private.h"

static void print_value(BoxOut *o, const char *v)
{
  /* a control character is shown as bash shows it, in $'…' */
  for (const char *p = v; *p; p++)
    if ((unsigned char)*p < 32 || *p == 127) {
      char *q = box_quote(v);
      box_out_puts(o, q);
      g_free(q);
      return;
    }
  box_out_putc(o, '"');
  for (const char *p = v; *p; p++) {
    if (strchr("\"\\$`", *p)) box_out_putc(o, '\\');
    box_out_putc(o, *p);
  }
  box_out_putc(o, '"');
}

/* An array's =(…) as declare -p and set show it. */
void box_declare_print_array(BoxOut *o, ShellVar *v)
{
  if (v->flags & V_ASSOC) {
    box_out_puts(o, "=(");
    GPtrArray *order = box_var_assoc_keys(v);
    for (guint i = 0; i < order->len; i++) {
      const char *k = order->pdata[i];
      box_out_putc(o, '[');
      /* bash quotes a key with a shell metacharacter in it, or a ~ or #
       * where a word would read it so, and the key @ ([@] would be all) */
      bool plain = *k != '\0' && *k != '#' && strcmp(k, "@") != 0;
      for (const char *q = k; *q && plain; q++)
        plain = (unsigned char)*q >= 32 && *q != 127 && !strchr(" '\"\\|&;()<>!{}*[?]^$`", *q) &&
                !(*q == '~' && (q == k || q[-1] == '=' || q[-1] == ':'));
      if (plain)
        box_out_puts(o, k);
      else
        print_value(o, k);
      box_out_puts(o, "]=");
      print_value(o, g_hash_table_lookup(v->assoc, k));
      box_out_putc(o, ' ');
    }
    g_ptr_array_free(order, TRUE);
    box_out_putc(o, ')');
  } else if (v->flags & V_ARRAY) {
    box_out_puts(o, "=(");
    bool first = true;
    for (guint i = 0; i < v->arr->len; i++) {
      if (!v->arr->pdata[i]) continue;
      if (!first) box_out_putc(o, ' ');
      first = false;
      box_out_printf(o, "[%u]=", i);
      print_value(o, v->arr->pdata[i]);
    }
    box_out_putc(o, ')');
  }
}

/* Whether argument a of c was written NAME=(…) in the script, not quoted
 * or made by an expansion; true when the command's words are not known. */
static bool written_compound(BoxCmd *c, const char *a)
{
  Shell *sh = c->sh;
  const Node *n = sh->lit_node;
  if (!n || n->kind != N_SIMPLE || !sh->lit_av || c->argv < sh->lit_av ||
      c->argv >= sh->lit_av + sh->lit_argc)
    return true;
  for (size_t i = 1; i < n->u.simple.nwords; i++) {
    const Word *w = n->u.simple.words[i];
    if ((w->flags & W_ASSIGN) && strcmp(w->text, a) == 0) return true;
  }
  return false;
}

static void print_var(BoxCmd *c, const char *name, ShellVar *v, const char *who)
{
  (void)who;
  GString *f = g_string_new(NULL);
  box_var_attr_letters(v, f);
  box_out_printf(c->out, "declare -%s %s", f->len ? f->str : "-", name);
  g_string_free(f, TRUE);
  bool none =
    (v->flags & V_NOVALUE) && (v->flags & V_ASSOC ? !g_hash_table_size(v->assoc) : !v->arr->len);
  if (none) {
    /* declared, never assigned: no =() */
  } else if (v->flags & (V_ASSOC | V_ARRAY)) {
    box_declare_print_array(c->out, v);
  } else if (v->value) {
    box_out_putc(c->out, '=');
    print_value(c->out, v->value);
  }
  box_out_putc(c->out, '\n');
}

static gint cmpstr(gconstpointer a, gconstpointer b)
{
  return strcmp(a, b);
}

static void print_func(BoxCmd *c, const char *name)
{
  char *t = box_function_text(g_hash_table_lookup(c->sh->funcs, name));
  box_out_printf(c->out, "%s\n", t);
  g_free(t);
}

/* -f/-F: the functions named from argv[i] on, or all of them. */
static int print_functions(BoxCmd *c, int i, bool fnames)
{
  Shell *sh = c->sh;
  int st = 0;
  if (i == c->argc) {
    GList *keys = g_list_sort(g_hash_table_get_keys(sh->funcs), cmpstr);
    for (GList *k = keys; k; k = k->next) {
      if (fnames)
        box_out_printf(c->out, "declare -f %s\n", (char *)k->data);
      else
        print_func(c, k->data);
    }
    g_list_free(keys);
    return 0;
  }
  for (; i < c->argc; i++) {
    if (!g_hash_table_lookup(sh->funcs, c->argv[i])) {
      st = 1;
      continue;
    }
    if (fnames)
      box_out_printf(c->out, "%s\n", c->argv[i]);
    else
      print_func(c, c->argv[i]);
  }
  return st;
}

/* -f -t NAME…: a function's trace attribute (its calls keep the DEBUG and
 * RETURN traps, as under set -T), set or cleared; nothing is printed. */
static int trace_functions(BoxCmd *c, int i, bool on)
{
  Shell *sh = c->sh;
  int st = 0;
  for (; i < c->argc; i++) {
    const char *name = c->argv[i];
    if (!g_hash_table_lookup(sh->funcs, name)) {
      st = 1;
      continue;
    }
    if (on) {
      if (!sh->traced_funcs)
        sh->traced_funcs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
      g_hash_table_add(sh->traced_funcs, g_strdup(name));
    } else if (sh->traced_funcs) {
      g_hash_table_remove(sh->traced_funcs, name);
    }
  }
  return st;
}

/* No names: the variables with the flags asked for, as who lists them. */
static int list_vars(BoxCmd *c, unsigned set, bool print, const char *who)
{
  Shell *sh = c->sh;
  box_vars_materialize(sh);
  GList *keys = g_list_sort(g_hash_table_get_keys(sh->vars), cmpstr);
  for (GList *k = keys; k; k = k->next) {
    ShellVar *v = g_hash_table_lookup(sh->vars, k->data);
    unsigned want = set;
    if (want && (v->flags & want) != want) continue;
    if (!print && !want && strcmp(who, "declare") && strcmp(who, "typeset")) continue;
    if (strcmp(who, "export") == 0 && !(v->flags & V_EXPORT)) continue;
    if (strcmp(who, "readonly") == 0 && !(v->flags & V_READONLY)) continue;
    if (!print && !want && (strcmp(who, "declare") == 0 || strcmp(who, "typeset") == 0)) {
      /* a reference lists as the name it holds */
      const char *val = v->flags & V_NAMEREF ? v->value : box_var_get(sh, k->data);
      if (v->flags & (V_ARRAY | V_ASSOC))
        print_var(c, k->data, v, who);
      else if (val) {
        char *q = box_quote(val);
        box_out_printf(c->out, "%s=%s\n", (char *)k->data, q);
        g_free(q);
      }
      continue;
    }
    print_var(c, k->data, v, who);
  }
  g_list_free(keys);
  return 0;
}

static bool is_local(Shell *sh, const char *name)
{
  GArray *frame = g_ptr_array_index(sh->frames, sh->frames->len - 1);
  for (guint i = 0; i < frame->len; i++)
    if (strcmp(g_array_index(frame, SavedVar, i).name, name) == 0) return true;
  return false;
}

int box_declare_list_locals(BoxCmd *c)
{
  Shell *sh = c->sh;
  GArray *frame = g_ptr_array_index(sh->frames, sh->frames->len - 1);
  GList *names = NULL;
  for (guint i = 0; i < frame->len; i++)
    names = g_list_prepend(names, g_array_index(frame, SavedVar, i).name);
  names = g_list_sort(names, cmpstr);
  for (GList *n = names; n; n = n->next) {
    ShellVar *v = g_hash_table_lookup(sh->vars, n->data);
    if (v) print_var(c, n->data, v, "local");
  }
  g_list_free(names);
  return 0;
}

int box_declare(BoxCmd *c, const char *who, unsigned force, bool local)
{
  Shell *sh = c->sh;
  unsigned set = force, clear = 0;
  bool print = false, funcs = false, fnames = false, global = false, unexport = false;
  int trace = 0; /* -t 1, +t -1 */
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-+")); i++) {
    bool on = a[0] == '-';
    for (const char *p = a + 1; *p; p++) {
      unsigned f = 0;
      switch (*p) {
      case 'a': f = V_ARRAY; break;
      case 'A': f = V_ASSOC; break;
      case 'i': f = V_INTEGER; break;
      case 'l': f = V_LOWER; break;
      case 'u': f = V_UPPER; break;
      case 'r': f = V_READONLY; break;
      case 'x': f = V_EXPORT; break;
      case 'n':
        if (strcmp(who, "export") == 0) {
          unexport = true;
          continue;
        }
        f = V_NAMEREF;
        break;
      case 'p': print = true; continue;
      case 'f': funcs = true; continue;
      case 'F': funcs = fnames = true; continue;
      case 'g': global = true; continue;
      case 't': trace = on ? 1 : -1; continue;
      default:
        box_cmd_error(c, "-%c: invalid option", *p);
        box_fdprintf(c->err, "%s: usage: %s [-aAfFgiIlnrtux] [name[=value] ...]\n", who, who);
        return 2;
      }
      if (on)
        set |= f;
      else
        clear |= f;
    }
  }
  if (funcs && trace && i < c->argc) return trace_functions(c, i, trace > 0);
  if (funcs) return print_functions(c, i, fnames);
  if (i == c->argc) return list_vars(c, set, print, who);
  /* with names, readonly -p and export -p mark them, as bash's */
  if (!strcmp(who, "readonly") || !strcmp(who, "export")) print = false;
  int status = 0;
  bool in_func = sh->frames->len > 0;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    const char *eq = box_assign_eq(a);
    size_t nl = eq ? (size_t)(eq - a) : strlen(a);
    if (eq && nl && a[nl - 1] == '+') nl--;
    char *name = g_strndup(a, nl);
    char *br = strchr(name, '[');
    if (br) *br = 0;
    bool subscript_refused = br && (!strcmp(who, "readonly") || !strcmp(who, "export"));
    if (subscript_refused || !box_is_name(name, strlen(name))) {
      /* export and readonly take no NAME[k] (bash names it without =value) */
      if (subscript_refused)
        box_cmd_error(c, "`%.*s': not a valid identifier", (int)nl, a);
      else
        box_cmd_error(c, "`%s': not a valid identifier", a);
      g_free(name);
      status = 1;
      continue;
    }
    if (print) {
      /* a nameref is shown as itself, not as what it leads to */
      ShellVar *v = g_hash_table_lookup(sh->vars, name);
      if (!v || !(v->flags & V_NAMEREF)) v = box_var_lookup(sh, name);
      /* local -p shows the function's own only */
      if (local && v && !is_local(sh, name)) v = NULL;
      if (!v) {
        box_cmd_error(c, "%s: not found", name);
        status = 1;
      } else {
        print_var(c, name, v, who);
      }
      g_free(name);
      continue;
    }
    /* -n and +n work on the reference itself, and so do the attributes
     * given with them (declare -rn r=x: r is readonly, not x) */
    bool on_ref = ((set | clear) & V_NAMEREF) != 0;
    if ((set & V_NAMEREF) && eq && !(eq > a && eq[-1] == '+')) {
      const char *val = eq + 1;
      g_autofree char *ra = NULL, *rk = NULL;
      bool valid = box_is_name(val, strlen(val)) || (box_split_ref(val, &ra, &rk) && rk);
      if (!*val)
        box_cmd_error(c, "`': not a valid identifier");
      else if (!valid)
        box_cmd_error(c, "`%s': invalid variable name for name reference", val);
      else if (strcmp(val, name) == 0 && !in_func)
        box_cmd_error(c, "%s: nameref variable self references not allowed", name);
      if (!valid || strcmp(val, name) == 0) {
        g_free(name);
        status = 1;
        continue;
      }
    }
    ShellVar *v;
    if ((local ||
         (in_func && !global && (strcmp(who, "declare") == 0 || strcmp(who, "typeset") == 0)))) {
      if (!in_func) {
        box_cmd_error(c, "can only be used in a function");
        g_free(name);
        return 1;
      }
      /* bash makes no local of a name readonly where it is seen */
      ShellVar *seen = box_var_lookup(sh, name);
      if (seen && (seen->flags & V_READONLY)) {
        box_cmd_error(c, "%s: readonly variable", name);
        g_free(name);
        status = 1;
        continue;
      }
      v = box_var_local(sh, name);
    } else {
      v = on_ref ? g_hash_table_lookup(sh->vars, name) : NULL;
      if (!v) v = box_var_lookup(sh, name);
      if (v && (v->flags & V_READONLY) && (eq || (clear & (V_READONLY | V_NAMEREF)))) {
        box_cmd_error(c, "%s: readonly variable", name);
        g_free(name);
        status = 1;
        continue;
      }
      if (!v) v = box_var_make(sh, name);
    }
    if ((clear & (V_ARRAY | V_ASSOC)) && (v->flags & (V_ARRAY | V_ASSOC))) {
      box_cmd_error(c, "%s: cannot destroy array variables in this way", name);
      g_free(name);
      status = 1;
      continue;
    }
    if (((set & V_ASSOC) && (v->flags & V_ARRAY)) || ((set & V_ARRAY) && (v->flags & V_ASSOC))) {
      /* bash converts neither way; with a value, as an assignment error
       * that drops the rest of the line */
      const char *how = set & V_ASSOC ? "indexed to associative" : "associative to indexed";
      g_free(name);
      if (eq && !in_func) {
        box_sh_error(sh, "%.*s: cannot convert %s array", (int)nl, a, how);
        sh->discard = true;
        return box_expansion_failed(sh, 1);
      }
      box_cmd_error(c, "%s: cannot convert %s array", a, how);
      status = 1;
      continue;
    }
    if ((set & V_NAMEREF) && !eq && !(v->flags & V_NAMEREF)) {
      /* a variable becomes a reference only to the name it holds */
      const char *err = NULL;
      g_autofree char *ra = NULL, *rk = NULL;
      if (v->flags & (V_ARRAY | V_ASSOC))
        box_cmd_error(c, "%s: %s", name, err = "reference variable cannot be an array");
      else if (v->value && !box_is_name(v->value, strlen(v->value)) &&
               !(box_split_ref(v->value, &ra, &rk) && rk))
        box_cmd_error(c, "`%s': %s", v->value, err = "invalid variable name for name reference");
      if (err) {
        g_free(name);
        status = 1;
        continue;
      }
    }
    bool fresh = !(v->flags & (V_ARRAY | V_ASSOC)) && !v->value;
    /* bash's readonly -a/-A of a name with no value marks it readonly only */
    /* `declare -r c[100]`: a subscript makes the name an array */
    unsigned kind = set | (br && !(v->flags & V_ASSOC) && !(set & V_ASSOC) ? V_ARRAY : 0);
    unsigned arr_set =
      fresh && !eq && strcmp(who, "readonly") == 0 ? 0 : kind & (V_ARRAY | V_ASSOC);
    if (arr_set & V_ASSOC)
      box_var_make_array(v, true);
    else if (arr_set & V_ARRAY)
      box_var_make_array(v, false);
    v->flags |= set & (V_INTEGER | V_LOWER | V_UPPER | V_EXPORT | V_NAMEREF);
    if (set & V_LOWER) v->flags &= ~V_UPPER;
    if (set & V_UPPER) v->flags &= ~V_LOWER;
    v->flags &= ~(clear & (V_INTEGER | V_LOWER | V_UPPER | V_EXPORT | V_NAMEREF));
    if (unexport) v->flags &= ~V_EXPORT;
    if (fresh && !eq && arr_set) v->flags |= V_NOVALUE;
    if (eq) {
      int st = 1;
      const char *val = eq + 1;
      size_t vl = strlen(val);
      bool append = eq > a && eq[-1] == '+';
      bool list = vl >= 2 && val[0] == '(' && val[vl - 1] == ')';
      /* NAME=(…) is a list when so written, or for an array; quoted or
       * expanded otherwise, it is a string (bash's `declare 'a=(1 2)'`) */
      if (list && !(set & (V_ARRAY | V_ASSOC)) && !(v->flags & (V_ARRAY | V_ASSOC)))
        list = written_compound(c, a);
      if (!br && list) {
        if (!box_assign_word(sh, a, false, &st)) status = 1;
      } else if (br && list && (set & (V_ARRAY | V_ASSOC))) {
        /* `declare -a e[10]='(x y)'`: bash assigns the list to the whole array */
        g_autofree char *whole = g_strconcat(name, "=", val, NULL);
        if (!box_assign_word(sh, whole, false, &st)) status = 1;
      } else if (br) {
        char *key = g_strndup(br + 1, strlen(br + 1) - 1);
        bool assoc = (v->flags & V_ASSOC) != 0;
        if (!*key || (!assoc && (!strcmp(key, "@") || !strcmp(key, "*")))) {
          /* bash's words, with no command name; the name is an array now */
          box_sh_error(sh, "%s[%s]: bad array subscript", name, key);
          if (!(v->flags & (V_ARRAY | V_ASSOC))) box_var_make_array(v, false);
          status = 1;
        } else if (!box_var_set_elem(sh, name, key, val, append))
          status = 1;
        g_free(key);
      } else if (append) {
        if (!box_var_append(sh, name, val)) status = 1;
      } else if (set & V_NAMEREF) {
        /* `declare -n r=b` again: r now names b (the value it named stays) */
        v->flags &= ~V_NAMEREF;
        if (!box_var_set(sh, name, val)) status = 1;
        v->flags |= V_NAMEREF;
      } else if (!box_var_set(sh, name, val)) {
        status = 1;
      }
    }
    v = on_ref ? g_hash_table_lookup(sh->vars, name) : NULL;
    if (!v) v = box_var_lookup(sh, name);
    if (v && (set & V_READONLY)) v->flags |= V_READONLY;
    g_free(name);
  }
  return status;
}

int box_cmd_declare(BoxCmd *c)
{
  return box_declare(c, "declare", 0, false);
}
