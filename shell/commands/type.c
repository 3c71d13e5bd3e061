/* type.c — `type [-afptP] NAME…`; also the lookup `command -v/-V` uses. */
#include <string.h>
#include <unistd.h>

#include "shell/commands/builtins.h"
#include "shell/commands/commands-private.h"

static const char *const keywords[] = { "if",   "then", "else",     "elif",   "fi",    "case",
                                        "esac", "for",  "select",   "while",  "until", "do",
                                        "done", "in",   "function", "time",   "{",     "}",
                                        "!",    "[[",   "]]",       "coproc", NULL };

static bool is_keyword(const char *n)
{
  for (int i = 0; keywords[i]; i++)
    if (strcmp(keywords[i], n) == 0) return true;
  return false;
}

/* -t's kind of name, or -v's word for it; false in the long mode ('V'),
 * which each kind words its own way. */
static bool brief(BoxCmd *c, char mode, const char *kind, const char *word)
{
  if (mode == 't')
    box_out_printf(c->out, "%s\n", kind);
  else if (mode == 'v')
    box_out_printf(c->out, "%s\n", word);
  else
    return false;
  return true;
}

/* mode: 't' type word, 'v' command -v, 'V' description; returns found. */
int box_type_one(BoxCmd *c, const char *name, char mode, bool skip_funcs);
int box_type_one(BoxCmd *c, const char *name, char mode, bool skip_funcs)
{
  Shell *sh = c->sh;
  const char *alias = g_hash_table_lookup(sh->aliases, name);
  if (alias) {
    if (mode == 't')
      box_out_puts(c->out, "alias\n");
    else if (mode == 'v') {
      char *q = box_quote(alias);
      box_out_printf(c->out, "alias %s=%s\n", name, q);
      g_free(q);
    } else {
      box_out_printf(c->out, "%s is aliased to `%s'\n", name, alias);
    }
    return 1;
  }
  if (is_keyword(name)) {
    if (!brief(c, mode, "keyword", name)) box_out_printf(c->out, "%s is a shell keyword\n", name);
    return 1;
  }
  if (!skip_funcs && g_hash_table_lookup(sh->funcs, name)) {
    if (!brief(c, mode, "function", name)) {
      char *t = box_function_text(g_hash_table_lookup(sh->funcs, name));
      box_out_printf(c->out, "%s is a function\n%s\n", name, t);
      g_free(t);
    }
    return 1;
  }
  if (box_command_lookup(name)) {
    if (!brief(c, mode, "builtin", name))
      box_out_printf(c->out, "%s is a %sshell builtin\n", name,
                     box_is_special_builtin(name) ? "special " : "");
    return 1;
  }
  /* a program: look on PATH without stat (access only) */
  char *found = NULL;
  if (strchr(name, '/')) {
    if (access(name, X_OK) == 0) found = g_strdup(name);
  } else {
    found = box_lookup_on_path(sh, name);
  }
  if (!found) return 0;
  if (brief(c, mode, "file", found)) {
    /* nothing more to say */
  } else if (g_hash_table_lookup(sh->hash, name))
    box_out_printf(c->out, "%s is hashed (%s)\n", name, found);
  else
    box_out_printf(c->out, "%s is %s\n", name, found);
  g_free(found);
  return 1;
}

int box_cmd_type(BoxCmd *c)
{
  char mode = 'V';
  bool path_only = false;
  int i = 1;
  for (const char *a; (a = bx_option_word(c, &i, "-")); i++) {
    for (const char *p = a + 1; *p; p++) {
      if (*p == 't')
        mode = 't';
      else if (*p == 'p' || *p == 'P')
        path_only = true;
      else if (*p == 'a' || *p == 'f')
        continue;
      else
        return bx_bad_option(c, *p, "type: usage: type [-afptP] name [name ...]");
    }
  }
  int st = 0;
  for (; i < c->argc; i++) {
    if (path_only) {
      if (!box_type_one(c, c->argv[i], 'v', true)) st = 1;
      continue;
    }
    if (!box_type_one(c, c->argv[i], mode, false)) {
      if (mode != 't') box_cmd_error(c, "%s: not found", c->argv[i]);
      st = 1;
    }
  }
  return st;
}
