/* history.c: bash's command history, for a script that turns it on
 * (`set -o history`; bash -c starts with it off, and so does the Shell).
 *
 * From then on the text is read a line at a time, as bash reads it: each
 * line is expanded first when `set -H` is on (`!!`, `!-2:$`, `^old^new`,
 * readline's grammar: an event, a word designator, modifiers), then kept
 * in the list (HISTCONTROL, HISTIGNORE and HISTSIZE decide; the lines of
 * one command join into one entry, cmdhist's way), and run once the lines
 * read make whole commands.  The `history` and `fc` builtins read and edit
 * the list (commands/history.c, commands/fc.c). */
#include <stdlib.h>
#include <string.h>

#include "shell/shell-private.h"

struct BoxHistory {
  GPtrArray *lines;            /* char*, oldest first */
  long base;                   /* the number of lines[0] */
  guint written;               /* lines before this one are in HISTFILE (history -a) */
  bool first_saved;            /* the current command's first line went in */
  char *last_search;           /* !?str?'s str, for the % designator */
  char *subst_old, *subst_new; /* the last :s, for :& */
};

BoxHistory *box_history(Shell *sh)
{
  if (!sh->history) {
    sh->history = g_new0(BoxHistory, 1);
    sh->history->lines = g_ptr_array_new_with_free_func(g_free);
    sh->history->base = 1;
  }
  return sh->history;
}

void box_history_free(Shell *sh)
{
  BoxHistory *h = sh->history;
  if (!h) return;
  g_ptr_array_free(h->lines, TRUE);
  g_free(h->last_search);
  g_free(h->subst_old);
  g_free(h->subst_new);
  g_free(h);
  sh->history = NULL;
}

guint box_history_len(Shell *sh)
{
  return box_history(sh)->lines->len;
}

long box_history_base(Shell *sh)
{
  return box_history(sh)->base;
}

const char *box_history_at(Shell *sh, guint i)
{
  BoxHistory *h = box_history(sh);
  return i < h->lines->len ? h->lines->pdata[i] : NULL;
}

void box_history_clear(Shell *sh)
{
  BoxHistory *h = box_history(sh);
  g_ptr_array_set_size(h->lines, 0);
  h->written = 0;
}

void box_history_delete(Shell *sh, guint i)
{
  BoxHistory *h = box_history(sh);
  if (i >= h->lines->len) return;
  g_ptr_array_remove_index(h->lines, i);
  if (h->written > i) h->written--;
}

bool box_history_current_saved(Shell *sh)
{
  return sh->history && sh->history->first_saved && (sh->opts & O_HISTORY);
}

void box_history_forget_current(Shell *sh)
{
  if (sh->history) sh->history->first_saved = false;
}

guint box_history_written(Shell *sh)
{
  return box_history(sh)->written;
}

void box_history_set_written(Shell *sh, guint n)
{
  box_history(sh)->written = n;
}

/* HISTSIZE: the most lines kept (unset or not a number: no bound). */
static void stifle(Shell *sh)
{
  BoxHistory *h = box_history(sh);
  const char *v = box_var_get(sh, "HISTSIZE");
  long max;
  if (!v || !box_parse_int(v, &max) || max < 0) return;
  while (h->lines->len > (guint)max) {
    g_ptr_array_remove_index(h->lines, 0);
    h->base++;
    if (h->written) h->written--;
  }
}

void box_history_push(Shell *sh, const char *line)
{
  BoxHistory *h = box_history(sh);
  g_ptr_array_add(h->lines, g_strdup(line));
  stifle(sh);
}

static bool listed(const char *list, const char *word)
{
  if (!list) return false;
  g_auto(GStrv) parts = g_strsplit(list, ":", -1);
  for (char **p = parts; *p; p++)
    if (strcmp(*p, word) == 0) return true;
  return false;
}

/* HISTIGNORE's patterns, `&` the line before. */
static bool ignored(Shell *sh, const char *line)
{
  const char *pats = box_var_get(sh, "HISTIGNORE");
  if (!pats || !*pats) return false;
  BoxHistory *h = box_history(sh);
  const char *prev = h->lines->len ? h->lines->pdata[h->lines->len - 1] : NULL;
  g_auto(GStrv) parts = g_strsplit(pats, ":", -1);
  for (char **p = parts; *p; p++) {
    if (strcmp(*p, "&") == 0 ? prev && strcmp(prev, line) == 0 : box_fnmatch(*p, line, 0) == 0)
      return true;
  }
  return false;
}

bool box_history_add(Shell *sh, const char *line)
{
  BoxHistory *h = box_history(sh);
  const char *ctl = box_var_get(sh, "HISTCONTROL");
  bool both = listed(ctl, "ignoreboth");
  if ((both || listed(ctl, "ignorespace")) && line[0] == ' ') return false;
  const char *prev = h->lines->len ? h->lines->pdata[h->lines->len - 1] : NULL;
  if ((both || listed(ctl, "ignoredups")) && prev && strcmp(prev, line) == 0) return false;
  if (ignored(sh, line)) return false;
  if (listed(ctl, "erasedups"))
    for (guint i = h->lines->len; i-- > 0;)
      if (strcmp(h->lines->pdata[i], line) == 0) box_history_delete(sh, i);
  box_history_push(sh, line);
  return true;
}

void box_history_replace_last(Shell *sh, const char *line)
{
  BoxHistory *h = box_history(sh);
  if (!h->lines->len) {
    box_history_push(sh, line);
    return;
  }
  g_free(h->lines->pdata[h->lines->len - 1]);
  h->lines->pdata[h->lines->len - 1] = g_strdup(line);
}

/* ---- the words of a line, as readline's history_tokenize splits it ------- */

/* Where the word at s[i] ends: blanks part words; `;&|()<>` make words of
 * their own (`2>` `>>` `&&` `|&` `>&` whole); quotes hold a word together. */
static size_t word_end(const char *s, size_t i)
{
  const char *ops = ";&|()<>";
  if (strchr(ops, s[i])) {
    char c = s[i], d = s[i + 1];
    if (d && ((d == c && strchr(";&|<>", c)) || (c == '>' && d == '&') || (c == '<' && d == '&') ||
              (c == '&' && d == '>') || (c == '|' && d == '&')))
      return i + 2;
    return i + 1;
  }
  size_t j = i;
  if (g_ascii_isdigit(s[j])) {
    size_t k = j;
    while (g_ascii_isdigit(s[k])) k++;
    if (s[k] == '<' || s[k] == '>') return word_end(s, k);
  }
  char quote = 0;
  for (; s[j]; j++) {
    char c = s[j];
    if (quote) {
      if (c == '\\' && quote == '"' && s[j + 1])
        j++;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '\\' && s[j + 1]) {
      j++;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      quote = c;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || strchr(ops, c)) break;
  }
  return j;
}

GPtrArray *box_history_words(const char *line)
{
  GPtrArray *w = g_ptr_array_new_with_free_func(g_free);
  size_t i = 0;
  for (;;) {
    while (line[i] == ' ' || line[i] == '\t' || line[i] == '\n') i++;
    if (!line[i]) break;
    size_t start = i;
    size_t e = word_end(line, i);
    /* "2>" starts at its digits */
    if (e <= start) e = start + 1;
    g_ptr_array_add(w, g_strndup(line + start, e - start));
    i = e;
  }
  return w;
}

/* ---- expansion ------------------------------------------------------------ */

typedef struct {
  Shell *sh;
  const char *line; /* the whole line being expanded (for !#) */
  GString *out;     /* the line so far */
  bool print_only;  /* a :p */
  char *error;      /* what failed (the text from the '!' on) */
} Exp;

static const char event_delims[] = "^$*%-";

/* The line an event names at s[*i] (just past the '!'), or NULL. */
static char *event_line(Exp *x, const char *s, size_t *i)
{
  BoxHistory *h = box_history(x->sh);
  guint n = h->lines->len;
  size_t k = *i;
  char c = s[k];
  if (c == '!') {
    *i = k + 1;
    return n ? g_strdup(h->lines->pdata[n - 1]) : NULL;
  }
  if (c == ':' || c == '^' || c == '$' || c == '*' || c == '%') {
    /* `!$`, `!:2`: words of the command before */
    return n ? g_strdup(h->lines->pdata[n - 1]) : NULL;
  }
  if (c == '#') {
    *i = k + 1;
    return g_strdup(x->out->str);
  }
  if (g_ascii_isdigit(c) || (c == '-' && g_ascii_isdigit(s[k + 1]))) {
    bool neg = c == '-';
    if (neg) k++;
    long v = 0;
    while (g_ascii_isdigit(s[k]) && v < 100000000) v = v * 10 + (s[k++] - '0');
    while (g_ascii_isdigit(s[k])) k++;
    *i = k;
    long idx = neg ? (long)n - v : v - h->base;
    return idx >= 0 && idx < (long)n ? g_strdup(h->lines->pdata[idx]) : NULL;
  }
  bool sub = c == '?';
  if (sub) k++;
  size_t start = k;
  for (; s[k]; k++) {
    char d = s[k];
    if (sub) {
      if (d == '?' || d == '\n') break;
      continue;
    }
    if (d == ' ' || d == '\t' || d == '\n' || d == ':' || strchr(";&()|<>", d) ||
        (k > start && strchr(event_delims, d)))
      break;
  }
  g_autofree char *want = g_strndup(s + start, k - start);
  if (sub && s[k] == '?') k++;
  *i = k;
  if (!*want) {
    if (!sub || !h->last_search) return NULL;
    g_free(want);
    want = g_strdup(h->last_search);
  }
  if (sub) {
    g_free(h->last_search);
    h->last_search = g_strdup(want);
  }
  for (guint j = n; j-- > 0;) {
    const char *l = h->lines->pdata[j];
    if (sub ? strstr(l, want) != NULL : g_str_has_prefix(l, want)) return g_strdup(l);
  }
  return NULL;
}

/* A word number at s[*i]: digits, ^ (1) or $ (last); -1 when none. */
static long word_number(const char *s, size_t *i, long last)
{
  if (s[*i] == '^') {
    (*i)++;
    return 1;
  }
  if (s[*i] == '$') {
    (*i)++;
    return last;
  }
  if (!g_ascii_isdigit(s[*i])) return -1;
  long v = 0;
  while (g_ascii_isdigit(s[*i])) {
    if (v < 100000) v = v * 10 + (s[*i] - '0');
    (*i)++;
  }
  return v;
}

/* The words of ev a designator at s[*i] picks (after a ':' or one of
 * ^$*%-), joined by blanks; the whole line without one.  NULL: bad. */
static char *pick_words(Exp *x, const char *ev, const char *s, size_t *i)
{
  size_t k = *i;
  bool colon = s[k] == ':' && s[k + 1] && strchr("0123456789^$*%-", s[k + 1]);
  if (!colon && !(s[k] && strchr(event_delims, s[k]))) return g_strdup(ev);
  if (colon) k++;
  g_autoptr(GPtrArray) w = box_history_words(ev);
  long last = (long)w->len - 1;
  long from, to;
  if (s[k] == '%') {
    k++;
    const char *want = box_history(x->sh)->last_search;
    from = -1;
    /* readline's search finds the last place in the line: its word */
    for (guint j = w->len; want && j-- > 0;)
      if (strstr(w->pdata[j], want)) {
        from = j;
        break;
      }
    if (from < 0) return NULL;
    to = from;
  } else if (s[k] == '*') {
    k++;
    from = 1;
    to = last;
    *i = k;
    if (last < 1) return g_strdup("");
  } else {
    if (s[k] == '-') {
      from = 0;
    } else {
      from = word_number(s, &k, last);
      if (from < 0) return NULL;
    }
    to = from;
    if (s[k] == '*') {
      k++;
      to = last;
      if (from > last) {
        *i = k;
        return g_strdup("");
      }
    } else if (s[k] == '-') {
      k++;
      to = word_number(s, &k, last);
      if (to < 0) to = last - 1;
    }
  }
  *i = k;
  if (from > last || to > last || from > to || from < 0) return NULL;
  GString *g = g_string_new(NULL);
  for (long j = from; j <= to; j++) {
    if (j > from) g_string_append_c(g, ' ');
    g_string_append(g, w->pdata[j]);
  }
  return g_string_free(g, FALSE);
}

/* :x — each blank-separated word quoted alone */
static char *quote_words(const char *t)
{
  g_autoptr(GPtrArray) w = box_history_words(t);
  GString *g = g_string_new(NULL);
  for (guint j = 0; j < w->len; j++) {
    g_autofree char *q = box_single_quote(w->pdata[j]);
    if (j) g_string_append_c(g, ' ');
    g_string_append(g, q);
  }
  return g_string_free(g, FALSE);
}

/* old → new in t, once or everywhere; & in new is old. */
static char *substitute(const char *t, const char *old, const char *new, bool global)
{
  GString *g = g_string_new(NULL);
  size_t ol = strlen(old);
  const char *p = t;
  bool done = false;
  while (*p) {
    const char *at = (!done && ol) ? strstr(p, old) : NULL;
    if (!at) {
      g_string_append(g, p);
      break;
    }
    g_string_append_len(g, p, at - p);
    box_append_amp(g, new, old);
    p = at + ol;
    if (!global) done = true;
  }
  return g_string_free(g, FALSE);
}

/* s/old/new/ at s[*i] (on the 's'): sets the last substitution. */
static bool read_subst(Exp *x, const char *s, size_t *i)
{
  BoxHistory *h = box_history(x->sh);
  size_t k = *i + 1;
  char delim = s[k];
  if (!delim || delim == '\n') return false;
  k++;
  GString *parts[2] = { g_string_new(NULL), g_string_new(NULL) };
  for (int part = 0; part < 2; part++) {
    for (; s[k] && s[k] != '\n' && s[k] != delim; k++) {
      if (s[k] == '\\' && s[k + 1] == delim) k++;
      g_string_append_c(parts[part], s[k]);
    }
    if (s[k] == delim)
      k++;
    else
      break;
  }
  *i = k;
  if (parts[0]->len) {
    g_free(h->subst_old);
    h->subst_old = g_string_free(parts[0], FALSE);
  } else {
    g_string_free(parts[0], TRUE);
  }
  g_free(h->subst_new);
  h->subst_new = g_string_free(parts[1], FALSE);
  return h->subst_old != NULL;
}

/* The modifiers at s[*i] applied to t (taken). NULL: bad. */
static char *modify(Exp *x, char *t, const char *s, size_t *i)
{
  BoxHistory *h = box_history(x->sh);
  size_t k = *i;
  while (s[k] == ':') {
    char m = s[k + 1];
    bool global = false;
    size_t at = k + 1;
    if (m == 'g' || m == 'a') {
      global = true;
      m = s[at + 1];
      at++;
    }
    char *r = NULL;
    switch (m) {
    case 'h': {
      char *slash = strrchr(t, '/');
      r = slash ? g_strndup(t, slash == t ? 1 : (size_t)(slash - t)) : g_strdup(t);
      break;
    }
    case 't': {
      char *slash = strrchr(t, '/');
      r = g_strdup(slash ? slash + 1 : t);
      break;
    }
    case 'r': {
      char *dot = strrchr(t, '.'), *slash = strrchr(t, '/');
      r = dot && (!slash || dot > slash) ? g_strndup(t, dot - t) : g_strdup(t);
      break;
    }
    case 'e': {
      char *dot = strrchr(t, '.'), *slash = strrchr(t, '/');
      r = g_strdup(dot && (!slash || dot > slash) ? dot : "");
      break;
    }
    case 'p':
      x->print_only = true;
      r = g_strdup(t);
      break;
    case 'q': r = box_single_quote(t); break;
    case 'x': r = quote_words(t); break;
    case 's': {
      size_t e = at;
      if (!read_subst(x, s, &e)) {
        g_free(t);
        return NULL;
      }
      r = substitute(t, h->subst_old, h->subst_new, global);
      k = e;
      g_free(t);
      t = r;
      continue;
    }
    case '&':
      if (!h->subst_old) {
        g_free(t);
        return NULL;
      }
      r = substitute(t, h->subst_old, h->subst_new ? h->subst_new : "", global);
      break;
    default:
      g_free(t);
      *i = k;
      x->error = g_strdup_printf("%c: unrecognized history modifier", m ? m : ' ');
      return NULL;
    }
    g_free(t);
    t = r;
    k = at + 1;
  }
  *i = k;
  return t;
}

/* bash's own exceptions to a '!': `[!…]`, `${!…}`, `$!`, extglob's `!(…)`. */
static bool inhibited(Shell *sh, const char *s, size_t i)
{
  if (i > 0 && s[i - 1] == '[' && strchr(s + i + 1, ']')) return true;
  if (i > 1 && s[i - 1] == '{' && s[i - 2] == '$' && strchr(s + i + 1, '}')) return true;
  if (i > 0 && s[i - 1] == '$') return true;
  if ((sh->shopts & SH_EXTGLOB) && s[i + 1] == '(' && strchr(s + i + 2, ')')) return true;
  return false;
}

/* One history reference at s[*i] (on the '!'), appended to x->out. */
static bool expand_one(Exp *x, const char *s, size_t *i)
{
  size_t start = *i;
  size_t k = start + 1;
  char *ev = event_line(x, s, &k);
  if (!ev) {
    x->error = g_strdup_printf("%.*s: event not found", (int)(k - start), s + start);
    return false;
  }
  char *t = pick_words(x, ev, s, &k);
  g_free(ev);
  if (t) t = modify(x, t, s, &k);
  if (!t && !x->error) {
    size_t e = k;
    while (s[e] && s[e] != ' ' && s[e] != '\t' && s[e] != '\n') e++;
    x->error = g_strdup_printf("%.*s: bad word specifier", (int)(e - start), s + start);
  }
  if (!t) return false;
  g_string_append(x->out, t);
  g_free(t);
  *i = k;
  if (x->out->len > BOX_MAX_INPUT) {
    /* `!# !# !# …` doubles the line each time */
    x->error = g_strdup_printf("history expansion longer than %d bytes", BOX_MAX_INPUT);
    return false;
  }
  return true;
}

int box_history_expand(Shell *sh, const char *line, char **out, char **error)
{
  *out = NULL;
  *error = NULL;
  const char *hc = box_var_get(sh, "histchars");
  char bang = hc && hc[0] ? hc[0] : '!';
  char quick = hc && hc[0] && hc[1] ? hc[1] : '^';
  char comment = hc && hc[0] && hc[1] && hc[2] ? hc[2] : '#';
  if (!strchr(line, bang) && line[0] != quick) return 0;
  Exp x = { sh, line, g_string_new(NULL), false, NULL };
  size_t i = 0;
  bool changed = false;
  if (line[0] == quick) {
    /* ^old^new^ is !!:s^old^new^ */
    g_autofree char *as = g_strdup_printf("%c%c:s%s", bang, bang, line);
    size_t k = 0;
    if (!expand_one(&x, as, &k)) goto fail;
    i = strlen(line);
    while (i > 0 && line[i - 1] == '\n') i--;
    /* the rest of the line is the substitution's */
    g_string_append(x.out, line + i);
    i = strlen(line);
    changed = true;
  }
  char quote = 0;
  while (line[i]) {
    char c = line[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      g_string_append_c(x.out, c);
      i++;
      continue;
    }
    if (c == '\\' && line[i + 1]) {
      g_string_append_len(x.out, line + i, 2);
      i += 2;
      continue;
    }
    if (c == '\'' && !quote)
      quote = '\'';
    else if (c == '"')
      quote = quote == '"' ? 0 : '"';
    if (c == comment && !quote && (i == 0 || strchr(" \t\n", line[i - 1]))) {
      g_string_append(x.out, line + i);
      break;
    }
    if (c == bang) {
      char d = line[i + 1];
      if (!d || strchr(" \t\n\r=", d) || (quote == '"' && d == '"') || inhibited(sh, line, i)) {
        g_string_append_c(x.out, c);
        i++;
        continue;
      }
      if (!expand_one(&x, line, &i)) goto fail;
      changed = true;
      continue;
    }
    g_string_append_c(x.out, c);
    i++;
  }
  if (!changed) {
    g_string_free(x.out, TRUE);
    return 0;
  }
  *out = g_string_free(x.out, FALSE);
  return x.print_only ? 2 : 1;
fail:
  g_string_free(x.out, TRUE);
  *error = x.error;
  return -1;
}

/* ---- reading a line at a time ------------------------------------------- */

/* What joins a command's next line to its entry (cmdhist): a newline in a
 * quote or a here-document, a blank after a word no ';' may follow. */
static const char *joiner(const char *pending, int why)
{
  if (why == BOX_PARSE_IN_QUOTE || why == BOX_PARSE_IN_HEREDOC) return "\n";
  size_t n = strlen(pending);
  while (n && strchr(" \t\n", pending[n - 1])) n--;
  if (!n) return " ";
  static const char *const open_words[] = { "do", "then", "else", "in", "{",  "(", "|",
                                            "&&", "||",   ";",    "&",  ";;", "!" };
  size_t w = n;
  while (w && !strchr(" \t\n", pending[w - 1])) w--;
  for (size_t k = 0; k < G_N_ELEMENTS(open_words); k++) {
    size_t l = strlen(open_words[k]);
    if ((n - w == l && memcmp(pending + w, open_words[k], l) == 0) ||
        (l <= 2 && !g_ascii_isalpha(open_words[k][0]) && n >= l &&
         memcmp(pending + n - l, open_words[k], l) == 0))
      return " ";
  }
  return "; ";
}

/* One line read into the list: the first of a command starts an entry,
 * the next join it (when the first went in). */
static void keep_line(Shell *sh, const char *line, const char *pending, int why)
{
  BoxHistory *h = box_history(sh);
  g_autofree char *text = g_strndup(line, strcspn(line, "\n"));
  if (!*pending) {
    h->first_saved = *text && box_history_add(sh, text);
    return;
  }
  if (!h->first_saved || !*text || !h->lines->len) return;
  char **last = (char **)&h->lines->pdata[h->lines->len - 1];
  char *joined = g_strconcat(*last, joiner(pending, why), text, NULL);
  g_free(*last);
  *last = joined;
}

/* bash's entry for a command with a here-document ends in a newline */
static void end_heredoc(Shell *sh)
{
  BoxHistory *h = box_history(sh);
  if (!h->first_saved || !h->lines->len) return;
  char **last = (char **)&h->lines->pdata[h->lines->len - 1];
  char *joined = g_strconcat(*last, "\n", NULL);
  g_free(*last);
  *last = joined;
}

bool box_history_run(Shell *sh, const char *text, int line, int *status)
{
  /* what bash gives a list turned on with no size set */
  if (!box_var_get(sh, "HISTSIZE")) box_var_set(sh, "HISTSIZE", "500");
  GString *pending = g_string_new(NULL);
  int first = line, why = 0;
  bool go = true;
  const char *s = text;
  while (*s && go) {
    size_t n = strcspn(s, "\n");
    char *ln = g_strndup(s, n + (s[n] == '\n'));
    s += n + (s[n] == '\n');
    int at = line++;
    if ((sh->opts & O_HISTEXPAND) && why != BOX_PARSE_IN_HEREDOC) {
      char *exp = NULL, *err = NULL;
      int r = box_history_expand(sh, ln, &exp, &err);
      if (r < 0) {
        /* bash drops the line, and what it was part of */
        box_sh_error(sh, "%s", err);
        g_free(err);
        g_free(ln);
        g_string_truncate(pending, 0);
        why = 0;
        continue;
      }
      if (r > 0) {
        g_free(ln);
        ln = exp;
        size_t l = strcspn(ln, "\n");
        box_fdprintf(sh->fd[2], "%.*s\n", (int)l, ln);
      }
      if (r == 2) {
        keep_line(sh, ln, pending->str, why);
        g_free(ln);
        continue;
      }
    }
    if (!pending->len) first = at;
    if (sh->opts & O_HISTORY) keep_line(sh, ln, pending->str, why);
    g_string_append(pending, ln);
    g_free(ln);
    int was = why;
    why = *s ? box_parse_probe(sh, pending->str, first) : 0;
    if (was == BOX_PARSE_IN_HEREDOC && !why && (sh->opts & O_HISTORY)) end_heredoc(sh);
    if (why) continue;
    Parser *p = box_parser_new_at(sh, pending->str, NULL, first);
    go = box_run_commands(sh, p, status, false);
    box_parser_free(p);
    g_string_truncate(pending, 0);
  }
  g_string_free(pending, TRUE);
  return go;
}
