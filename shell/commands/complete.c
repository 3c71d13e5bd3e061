/* complete.c — `complete [-abcdefgjksuv] [-pr] [-DEI] [-o option]
 * [-A action] [-G globpat] [-W wordlist] [-F function] [-C command]
 * [-X filterpat] [-P prefix] [-S suffix] [name …]`: bash's programmable
 * completion specifications, kept, listed and removed as bash's are.  The
 * Shell completes nothing itself (nothing reads a line); scripts that set
 * completions up and list them, and compgen (compgen.c), see bash's state.
 *
 * `complete -p` lists in bash's order, which scripts and tests see: its
 * table of 512 buckets by FNV-1 hash, each newest first. */
#include <string.h>

#include "shell/commands/builtins.h"

#define COMP_BUCKETS 512

static const char *const opt_names[] = { "bashdefault", "default", "dirnames", "filenames",
                                         "noquote",     "nosort",  "nospace",  "plusdirs" };

/* -A's names, bit by bit; the first twelve have letters of their own */
static const struct {
  const char *name;
  char letter;
} actions[] = {
  { "alias", 'a' },   { "builtin", 'b' }, { "command", 'c' }, { "directory", 'd' },
  { "export", 'e' },  { "file", 'f' },    { "group", 'g' },   { "job", 'j' },
  { "keyword", 'k' }, { "service", 's' }, { "user", 'u' },    { "variable", 'v' },
  { "arrayvar", 0 },  { "binding", 0 },   { "disabled", 0 },  { "enabled", 0 },
  { "function", 0 },  { "helptopic", 0 }, { "hostname", 0 },  { "running", 0 },
  { "setopt", 0 },    { "shopt", 0 },     { "signal", 0 },    { "stopped", 0 },
};

struct BoxCompTable {
  GSList *bucket[COMP_BUCKETS]; /* BoxCompEntry*, newest first */
};

typedef struct {
  char *name;
  BoxCompSpec spec;
} BoxCompEntry;

void box_comp_spec_clear(BoxCompSpec *s)
{
  char **args[] = { &s->globpat,   &s->words,   &s->prefix,  &s->suffix,
                    &s->filterpat, &s->command, &s->funcname };
  for (size_t i = 0; i < G_N_ELEMENTS(args); i++) g_clear_pointer(args[i], g_free);
  s->actions = s->options = 0;
}

static void spec_copy(BoxCompSpec *to, const BoxCompSpec *from)
{
  *to = *from;
  char **args[] = { &to->globpat,   &to->words,   &to->prefix,  &to->suffix,
                    &to->filterpat, &to->command, &to->funcname };
  for (size_t i = 0; i < G_N_ELEMENTS(args); i++) *args[i] = g_strdup(*args[i]);
}

static int parse_options(BoxCmd *c, const char *usage, bool complete, BoxCompSpec *s,
                         unsigned *flags)
{
  memset(s, 0, sizeof *s);
  *flags = 0;
  int i = 1;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (strcmp(a, "--") == 0) return i + 1;
    if (a[0] != '-' || !a[1]) break;
    for (const char *p = a + 1; *p; p++) {
      const char *letters = "abcdefgjksuv";
      const char *at = strchr(letters, *p);
      if (at) {
        s->actions |= 1u << (at - letters);
        continue;
      }
      if (complete && strchr("prDEI", *p)) {
        *flags |= *p == 'p'   ? BOX_COMP_PRINT
                  : *p == 'r' ? BOX_COMP_REMOVE
                  : *p == 'D' ? BOX_COMP_DEFAULT
                  : *p == 'E' ? BOX_COMP_EMPTY
                              : BOX_COMP_INITIAL;
        continue;
      }
      if (!strchr("oAGWFCXPS", *p)) {
        box_cmd_error(c, "-%c: invalid option", *p);
        box_fdprintf(c->err, "%s\n", usage);
        return -2;
      }
      const char *arg = bx_option_value(c, p, &i, usage);
      if (!arg) return -2;
      char **slot = NULL;
      switch (*p) {
      case 'o': {
        size_t k = 0;
        while (k < G_N_ELEMENTS(opt_names) && strcmp(opt_names[k], arg)) k++;
        if (k == G_N_ELEMENTS(opt_names)) {
          box_cmd_error(c, "%s: invalid option name", arg);
          return -1;
        }
        s->options |= 1u << k;
        break;
      }
      case 'A': {
        size_t k = 0;
        while (k < G_N_ELEMENTS(actions) && strcmp(actions[k].name, arg)) k++;
        if (k == G_N_ELEMENTS(actions)) {
          box_cmd_error(c, "%s: invalid action name", arg);
          return -1;
        }
        s->actions |= 1u << k;
        break;
      }
      case 'G': slot = &s->globpat; break;
      case 'W': slot = &s->words; break;
      case 'F': slot = &s->funcname; break;
      case 'C': slot = &s->command; break;
      case 'X': slot = &s->filterpat; break;
      case 'P': slot = &s->prefix; break;
      case 'S': slot = &s->suffix; break;
      }
      if (slot) {
        g_free(*slot);
        *slot = g_strdup(arg);
      }
      break; /* the option's argument ends the word */
    }
  }
  return i;
}

int box_comp_parse(BoxCmd *c, const char *usage, bool complete, BoxCompSpec *s, unsigned *flags)
{
  int i = parse_options(c, usage, complete, s, flags);
  if (i < 0) box_comp_spec_clear(s);
  return i;
}

/* bash's hash_string (FNV-1), which places a name in the table */
static unsigned bucket_of(const char *name)
{
  guint32 h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    h *= 16777619u;
    h ^= *p;
  }
  return h & (COMP_BUCKETS - 1);
}

/* -D, -E and -I are kept under bash's names for them */
static const char *const special_names[][2] = { { "_DefaultCmD_", "-D" },
                                                { "_EmptycmD_", "-E" },
                                                { "_InitialWorD_", "-I" } };

static BoxCompEntry *find(BoxCompTable *t, const char *name, GSList ***link)
{
  if (!t) return NULL;
  for (GSList **l = &t->bucket[bucket_of(name)]; *l; l = &(*l)->next) {
    BoxCompEntry *e = (*l)->data;
    if (strcmp(e->name, name) == 0) {
      if (link) *link = l;
      return e;
    }
  }
  return NULL;
}

static void entry_free(gpointer p)
{
  BoxCompEntry *e = p;
  box_comp_spec_clear(&e->spec);
  g_free(e->name);
  g_free(e);
}

void box_comp_table_free(BoxCompTable *t)
{
  if (!t) return;
  for (int b = 0; b < COMP_BUCKETS; b++) g_slist_free_full(t->bucket[b], entry_free);
  g_free(t);
}

static void put(Shell *sh, const char *name, const BoxCompSpec *s)
{
  if (!sh->completions) sh->completions = g_new0(BoxCompTable, 1);
  BoxCompEntry *e = find(sh->completions, name, NULL);
  if (e) {
    /* bash replaces the spec where the name already stands */
    box_comp_spec_clear(&e->spec);
  } else {
    e = g_new0(BoxCompEntry, 1);
    e->name = g_strdup(name);
    unsigned b = bucket_of(name);
    sh->completions->bucket[b] = g_slist_prepend(sh->completions->bucket[b], e);
  }
  spec_copy(&e->spec, s);
}

static bool drop(Shell *sh, const char *name)
{
  GSList **link = NULL;
  BoxCompEntry *e = find(sh->completions, name, &link);
  if (!e) return false;
  GSList *gone = *link;
  *link = gone->next;
  g_slist_free_1(gone);
  entry_free(e);
  return true;
}

static void put_quoted(GString *g, const char *opt, const char *arg)
{
  if (!arg) return;
  g_autofree char *q = box_single_quote(arg);
  g_string_append_printf(g, "%s %s ", opt, q);
}

static void print_entry(BoxCmd *c, const BoxCompEntry *e)
{
  const BoxCompSpec *s = &e->spec;
  GString *g = g_string_new("complete ");
  for (size_t k = 0; k < G_N_ELEMENTS(opt_names); k++)
    if (s->options & (1u << k)) g_string_append_printf(g, "-o %s ", opt_names[k]);
  for (size_t k = 0; k < G_N_ELEMENTS(actions); k++)
    if ((s->actions & (1u << k)) && actions[k].letter)
      g_string_append_printf(g, "-%c ", actions[k].letter);
  for (size_t k = 0; k < G_N_ELEMENTS(actions); k++)
    if ((s->actions & (1u << k)) && !actions[k].letter)
      g_string_append_printf(g, "-A %s ", actions[k].name);
  put_quoted(g, "-G", s->globpat);
  put_quoted(g, "-W", s->words);
  put_quoted(g, "-P", s->prefix);
  put_quoted(g, "-S", s->suffix);
  put_quoted(g, "-X", s->filterpat);
  put_quoted(g, "-C", s->command);
  if (s->funcname) g_string_append_printf(g, "-F %s ", s->funcname);
  const char *shown = e->name;
  for (size_t k = 0; k < G_N_ELEMENTS(special_names); k++)
    if (strcmp(e->name, special_names[k][0]) == 0) shown = special_names[k][1];
  g_string_append_printf(g, "%s\n", shown);
  box_out_puts(c->out, g->str);
  g_string_free(g, TRUE);
}

static void print_all(BoxCmd *c)
{
  BoxCompTable *t = c->sh->completions;
  for (int b = 0; t && b < COMP_BUCKETS; b++)
    for (GSList *l = t->bucket[b]; l; l = l->next) print_entry(c, l->data);
}

int box_cmd_complete(BoxCmd *c)
{
  Shell *sh = c->sh;
  static const char usage[] =
    "complete: usage: complete [-abcdefgjksuv] [-pr] [-DEI] [-o option] [-A action] [-G "
    "globpat] [-W wordlist] [-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] "
    "[name ...]";
  BoxCompSpec s;
  unsigned flags;
  int i = box_comp_parse(c, usage, true, &s, &flags);
  if (i < 0) return 2;
  GPtrArray *names = g_ptr_array_new();
  for (size_t k = 0; k < G_N_ELEMENTS(special_names); k++)
    if (flags & (BOX_COMP_DEFAULT << k)) g_ptr_array_add(names, (gpointer)special_names[k][0]);
  for (int k = i; k < c->argc; k++) g_ptr_array_add(names, c->argv[k]);
  int st = 0;
  if (!names->len && ((flags & BOX_COMP_PRINT) || !(flags & BOX_COMP_REMOVE))) {
    print_all(c);
  } else if (!names->len) {
    box_comp_table_free(sh->completions);
    sh->completions = NULL;
  } else {
    for (guint k = 0; k < names->len; k++) {
      const char *name = names->pdata[k];
      if (flags & BOX_COMP_PRINT) {
        BoxCompEntry *e = find(sh->completions, name, NULL);
        if (e) {
          print_entry(c, e);
        } else {
          box_cmd_error(c, "%s: no completion specification", name);
          st = 1;
        }
      } else if (flags & BOX_COMP_REMOVE) {
        if (!drop(sh, name)) {
          box_cmd_error(c, "%s: no completion specification", name);
          st = 1;
        }
      } else {
        put(sh, name, &s);
      }
    }
  }
  g_ptr_array_free(names, TRUE);
  box_comp_spec_clear(&s);
  return st;
}
