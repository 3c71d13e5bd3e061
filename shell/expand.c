/* expand.c — words → fields, in POSIX order: brace expansion, tilde,
 * parameter, command substitution, arithmetic, field splitting, pathname
 * expansion, quote removal.
 *
 * A word's text is read once, left to right, into a buffer where each byte
 * carries a flag saying where it came from (source literal, quoted, result
 * of an unquoted expansion) — the flags decide splitting and globbing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <locale.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/shell-private.h"

enum { F_LIT = 0, F_QUO = 1, F_EXP = 2, F_BRK = 3, F_NUL = 4 };
/* M_DQWORD: the word of a ${v-word} inside "…", where its own "…" only
 * quote what is quoted already: the marks go, the text stays. */
/* M_ASSIGN: an assignment's value, whose `~` after a ':' is a tilde too;
 * M_ASSIGN_WORD: a whole NAME=value word (an argument that reads as one),
 * whose `~` right after its first '=' is one as well */
enum { M_DQ = 1, M_HEREDOC = 2, M_ASSIGN = 4, M_NOSPLIT = 8 };
enum { M_ARITH = 16, M_DQWORD = 32, M_ASSIGN_WORD = 64 };
/* M_NOTILDE: a subscript, where bash expands no tilde */
enum { M_NOTILDE = 128 };

typedef struct {
  Shell *sh;
  GString *s;
  GByteArray *q;
  bool failed;
  int status;
  bool at_empty; /* a "$@" that produced nothing */
  bool other;    /* something else inside the current "…" */
} X;

static inline void xadd(X *x, const char *t, size_t n, guint8 f)
{
  g_string_append_len(x->s, t, (gssize)n);
  size_t old = x->q->len;
  g_byte_array_set_size(x->q, (guint)(old + n));
  memset(x->q->data + old, f, n);
}
static inline void xaddc(X *x, char c, guint8 f)
{
  xadd(x, &c, 1, f);
}

static void xinit(X *x, Shell *sh)
{
  x->sh = sh;
  x->s = g_string_sized_new(32);
  x->q = g_byte_array_sized_new(32);
  x->failed = false;
  x->status = 0;
  x->at_empty = false;
  x->other = false;
}
static void xfree(X *x)
{
  g_string_free(x->s, TRUE);
  g_byte_array_free(x->q, TRUE);
}

static void xfail(X *x, int status)
{
  x->failed = true;
  x->status = status;
}

static bool expand_text(X *x, const char *t, size_t n, int mode);

/* ---- scanning helpers --------------------------------------------------------- */

static size_t skip_subst(const char *t, size_t i, size_t n);

static size_t skip_to(const char *t, size_t i, size_t n, char close);

/* In posix mode a "${…}"'s word has no single quotes (bash's rule): its
 * end is found as skip_to finds it, a ' being any character. */
static size_t skip_brace_posix_dq(const char *t, size_t i, size_t n)
{
  while (i < n) {
    char c = t[i];
    if (c == '\\') {
      i += 2;
    } else if (c == '"' || c == '`') {
      i = skip_to(t, i + 1, n, c);
    } else if (c == '$' && i + 1 < n && (t[i + 1] == '{' || t[i + 1] == '(')) {
      i = skip_to(t, i + 2, n, t[i + 1] == '{' ? '}' : ')');
    } else if (c == '}') {
      return i + 1;
    } else {
      i++;
    }
  }
  return n;
}

/* Index just past the construct closing at `close`, starting inside it. */
static size_t skip_to(const char *t, size_t i, size_t n, char close)
{
  if (close == ')') return skip_subst(t, i, n);
  int depth = 0;
  while (i < n) {
    char c = t[i];
    if (c == '\\') {
      i += 2;
      continue;
    }
    if (c == '\'' && close != '"' && close != '`') {
      i++;
      while (i < n && t[i] != '\'') i++;
      i++;
      continue;
    }
    if (c == '"' && close != '"') {
      i = skip_to(t, i + 1, n, '"');
      continue;
    }
    if (c == '`' && close != '`') {
      i = skip_to(t, i + 1, n, '`');
      continue;
    }
    if (c == '$' && i + 1 < n && t[i + 1] == '{') {
      i = skip_to(t, i + 2, n, '}');
      continue;
    }
    if (c == '$' && i + 1 < n && t[i + 1] == '(') {
      i = skip_to(t, i + 2, n, ')');
      continue;
    }
    if (close == ')' && c == '(') depth++;
    if (c == close) {
      if (depth == 0) return i + 1;
      depth--;
    }
    i++;
  }
  return n;
}

/* Whether c is one of set's bytes (never the NUL that ends set). */
static bool one_of(char c, const char *set)
{
  return c && strchr(set, c);
}

/* The reserved word of length len at t[i], standing as a word of its own. */
static bool reserved_at(const char *t, size_t i, size_t n, const char *word, size_t len)
{
  return i + len <= n && memcmp(t + i, word, len) == 0 &&
         (i + len == n || one_of(t[i + len], " \t\n;&|()"));
}

/* skip_to for the command text of $( ), <( ) and >( ): a `)` closes it
 * unless it ends a pattern of a case the text opened (`$(case $x in a)
 * …;; esac)`), which a count of parentheses alone takes for the end, and
 * then the rest of a "…" around it for a quoted word of its own.  Reserved
 * words count only where a command starts; a case never closed gives the
 * first `)` a count would have taken. */
static size_t skip_subst(const char *t, size_t i, size_t n)
{
  static const char *const lead[] = { "then",  "do",    "else", "elif", "if",
                                      "while", "until", "!",    "{",    "time" };
  int depth = 0, cases = 0;
  size_t counted = 0;
  bool command = true;
  while (i < n) {
    char c = t[i];
    if (c == '\\') {
      i += 2, command = false;
    } else if (c == '\'') {
      const char *q = memchr(t + i + 1, '\'', n - i - 1);
      i = q ? (size_t)(q - t) + 1 : n, command = false;
    } else if (c == '"' || c == '`') {
      i = skip_to(t, i + 1, n, c), command = false;
    } else if (c == '$' && i + 1 < n && one_of(t[i + 1], "{(")) {
      i = skip_to(t, i + 2, n, t[i + 1] == '{' ? '}' : ')'), command = false;
    } else if (c == '(' || c == ')' || one_of(c, " \t\n;&|")) {
      if (c == '(') depth++;
      if (c == ')' && depth == 0) {
        if (!cases) return i + 1;
        if (!counted) counted = i + 1;
      } else if (c == ')') {
        depth--;
      }
      if (c != ' ' && c != '\t') command = true;
      i++;
    } else if (command && reserved_at(t, i, n, "case", 4)) {
      cases++, i += 4, command = false;
    } else if (cases && reserved_at(t, i, n, "esac", 4) && one_of(t[i - 1], " \t\n;&|(")) {
      cases--, i += 4, command = false;
    } else {
      /* a word: after a reserved word that leads one, a command starts again */
      bool lead_word = false;
      for (size_t k = 0; command && k < G_N_ELEMENTS(lead) && !lead_word; k++) {
        size_t l = strlen(lead[k]);
        if (reserved_at(t, i, n, lead[k], l)) i += l, lead_word = true;
      }
      if (lead_word) continue;
      do i++;
      while (i < n && !one_of(t[i], " \t\n;&|()\\'\"`$"));
      command = false;
    }
  }
  return counted ? counted : n;
}

size_t box_scan_closing(const char *t, size_t n, char close)
{
  return skip_to(t, 0, n, close);
}

/* Whether skip_to's answer e ends the construct opened before t[from]
 * with its closing character.  Not always: a word cut out of a longer one
 * (an operator's pattern in `${v%…}`) can end inside a `${` or `$(`. */
static bool closed_at(const char *t, size_t from, size_t e, char close)
{
  return e > from && t[e - 1] == close;
}

/* Index just past the `)` of the `$(` at t[i].  Counting parentheses is
 * fooled by a case pattern's `)` (`$(case $x in a) …;; esac)`); the parser
 * found the true end and cached the text before it (parse_subst), so a
 * counted end the cache does not know is checked against each later `)`. */
static size_t subst_end(Shell *sh, const char *t, size_t i, size_t n)
{
  size_t e = skip_to(t, i + 2, n, ')');
  GHashTable *cache = sh->subst_cache;
  if (!cache || !g_hash_table_size(cache)) return e;
  char buf[256];
  for (size_t k = closed_at(t, i + 2, e, ')') ? e - 1 : i + 2; k < n; k++) {
    if (t[k] != ')') continue;
    size_t l = k - i - 2;
    char *key = l < sizeof buf ? buf : g_malloc(l + 1);
    memcpy(key, t + i + 2, l);
    key[l] = 0;
    bool known = g_hash_table_contains(cache, key);
    if (key != buf) g_free(key);
    if (known) return k + 1;
  }
  return e;
}

int box_escape_digits(const char *s, size_t n, size_t *i, int max, int base, unsigned *v)
{
  int k = 0;
  for (; k < max && *i + 1 < n; k++) {
    int d = base == 8 ? (s[*i + 1] >= '0' && s[*i + 1] <= '7' ? s[*i + 1] - '0' : -1)
                      : g_ascii_xdigit_value(s[*i + 1]);
    if (d < 0) break;
    *v = *v * (unsigned)base + (unsigned)d;
    ++*i;
  }
  return k;
}

/* ---- ANSI-C quoting ---------------------------------------------------------------- */

char *box_ansi_c(const char *s, size_t n, size_t *consumed)
{
  GString *g = g_string_new(NULL);
  size_t i = 0;
  for (; i < n && s[i] != '\''; i++) {
    char c = s[i];
    if (c != '\\' || i + 1 >= n) {
      g_string_append_c(g, c);
      continue;
    }
    c = s[++i];
    switch (c) {
    case 'a': g_string_append_c(g, '\a'); break;
    case 'b': g_string_append_c(g, '\b'); break;
    case 'e':
    case 'E': g_string_append_c(g, 033); break;
    case 'f': g_string_append_c(g, '\f'); break;
    case 'n': g_string_append_c(g, '\n'); break;
    case 'r': g_string_append_c(g, '\r'); break;
    case 't': g_string_append_c(g, '\t'); break;
    case 'v': g_string_append_c(g, '\v'); break;
    case '\\': g_string_append_c(g, '\\'); break;
    case '\'': g_string_append_c(g, '\''); break;
    case '"': g_string_append_c(g, '"'); break;
    case '?': g_string_append_c(g, '?'); break;
    case 'c':
      if (i + 1 < n) g_string_append_c(g, (char)(s[++i] & 0x1f));
      break;
    case 'x':
    case 'u':
    case 'U': {
      /* up to 2, 4 or 8 hex digits: a byte, or a character in UTF-8; with none, the escape
       * stays as written */
      unsigned v = 0;
      int k = box_escape_digits(s, n, &i, c == 'x' ? 2 : c == 'u' ? 4 : 8, 16, &v);
      if (k == 0) {
        g_string_append_c(g, '\\');
        g_string_append_c(g, c);
      } else if (c == 'x') {
        g_string_append_c(g, (char)v);
      } else {
        g_string_append_unichar(g, v);
      }
      break;
    }
    default:
      if (c >= '0' && c <= '7') {
        unsigned v = (unsigned)(c - '0');
        box_escape_digits(s, n, &i, 2, 8, &v);
        g_string_append_c(g, (char)v);
      } else {
        g_string_append_c(g, '\\');
        g_string_append_c(g, c);
      }
    }
  }
  if (consumed) *consumed = i;
  return g_string_free(g, FALSE);
}

/* ---- patterns --------------------------------------------------------------------- */

/* glibc's extglob groups end at a `)` and split at a `|` written escaped
 * (\) or \|) as well, and an unclosed group is bash's plain text */
static bool ext_glibc_misreads(const char *pattern)
{
  for (const char *b = strchr(pattern, '\\'); b && b[1]; b = strchr(b + 2, '\\'))
    if (b[1] == '|' || b[1] == ')' || b[1] == '(') return true;
  return box_ext_unclosed(pattern);
}

/* fnmatch in C.UTF-8 converts pattern and name to wide characters on
 * every call; for ASCII text the C locale's byte matching gives the same
 * answer (classes, ranges and case folding agree on ASCII) for a third of
 * the work, which find over a tree and every `case` pay. */
int box_fnmatch(const char *pattern, const char *s, int flags)
{
  const unsigned char *p = (const unsigned char *)pattern, *q = (const unsigned char *)s;
  unsigned char any = 0;
  while (*p) any |= *p++;
  while (*q) any |= *q++;
  /* glibc knows no collating symbol by name ([.space.]) in the C locale,
   * nor bash's classes [:ascii:] and [:word:] */
  if ((any & 0x80) || ((flags & FNM_EXTMATCH) && ext_glibc_misreads(pattern)) ||
      (strchr(pattern, '[') &&
       (strstr(pattern, "[.") || strstr(pattern, "[:ascii:]") || strstr(pattern, "[:word:]"))))
    return flags & ~(FNM_PERIOD | FNM_CASEFOLD | FNM_EXTMATCH)
             ? fnmatch(pattern, s, flags)
             : box_utf8_fnmatch(pattern, s, flags);
  /* With no flag, a pattern that is plain text after at most one leading
   * `*` (find -name '*.c', case *.txt) matches as fnmatch would by its
   * tail alone: `*` then takes any bytes, a leading `.` and `/` too.  A
   * tenth of fnmatch's work, on every name a find or a case looks at. */
  if (flags == 0) {
    const char *lit = pattern + (pattern[0] == '*');
    if (!strpbrk(lit, "*?[\\")) {
      size_t llen = (size_t)((const char *)p - lit), slen = (size_t)((const char *)q - s);
      if (lit == pattern) return llen == slen && memcmp(s, lit, llen) == 0 ? 0 : FNM_NOMATCH;
      return slen >= llen && memcmp(s + slen - llen, lit, llen) == 0 ? 0 : FNM_NOMATCH;
    }
  }
  static locale_t c_locale;
  if (!c_locale) c_locale = newlocale(LC_CTYPE_MASK, "C", (locale_t)0);
  if (!c_locale) return fnmatch(pattern, s, flags);
  locale_t old = uselocale(c_locale);
  int r = fnmatch(pattern, s, flags);
  uselocale(old);
  return r;
}

bool box_pattern_too_deep(const char *pat)
{
  /* `\(` groups in a basic regular expression: counted as `(` is (in an
   * extended one or a glob it is a plain character, and counting it too
   * only errs on the side of refusing) */
  int depth = 0;
  for (const char *p = pat; *p; p++) {
    if (*p == '\\' && p[1]) p++;
    if (*p == '(' && ++depth > BOX_MAX_NEST) return true;
    if (*p == ')' && depth > 0) depth--;
  }
  return false;
}

/* `@(…)` and its kin are groups only under `shopt -s extglob`, as bash
 * reads them in case, ${v#…} and globs; elsewhere they are plain text */
static int fnm_flags(Shell *sh, bool always_ext)
{
  int f = always_ext || (sh->shopts & SH_EXTGLOB) ? FNM_EXTMATCH : 0;
  if (sh->shopts & SH_NOCASEMATCH) f |= FNM_CASEFOLD;
  return f;
}

/* fnmatch, with a pattern nested too deep for it matching nothing. */
static bool fnm(Shell *sh, const char *pat, const char *s, bool always_ext)
{
  return !box_pattern_too_deep(pat) && box_fnmatch(pat, s, fnm_flags(sh, always_ext)) == 0;
}

bool box_pattern_match(Shell *sh, const char *pattern, const char *s, bool always_ext)
{
  if (box_pattern_too_deep(pattern)) {
    box_sh_error(sh, "maximum nesting depth exceeded (%d)", BOX_MAX_NEST);
    return false;
  }
  return box_fnmatch(pattern, s, fnm_flags(sh, always_ext)) == 0;
}

/* Longest/shortest prefix or suffix matching pat; returns the cut index. */
/* Inside a UTF-8 character: a continuation byte after a non-ASCII one. */
static bool mid_char(const char *s, size_t p)
{
  return p > 0 && ((guchar)s[p] & 0xC0) == 0x80 && ((guchar)s[p - 1] & 0x80);
}

static bool match_at(Shell *sh, const char *pat, const char *s, size_t from, size_t to)
{
  /* ${s#?} of μx takes μ whole, as fnmatch (UTF-8) reads it */
  if (mid_char(s, from) || mid_char(s, to)) return false;
  char *sub = g_strndup(s + from, to - from);
  bool m = fnm(sh, pat, sub, false);
  g_free(sub);
  return m;
}

static char *trim(Shell *sh, const char *s, const char *pat, bool suffix, bool longest)
{
  size_t n = strlen(s);
  if (!suffix) {
    if (longest) {
      for (size_t k = n + 1; k-- > 0;)
        if (match_at(sh, pat, s, 0, k)) return g_strdup(s + k);
    } else {
      for (size_t k = 0; k <= n; k++)
        if (match_at(sh, pat, s, 0, k)) return g_strdup(s + k);
    }
  } else {
    if (longest) {
      for (size_t k = 0; k <= n; k++)
        if (match_at(sh, pat, s, k, n)) return g_strndup(s, k);
    } else {
      for (size_t k = n + 1; k-- > 0;)
        if (match_at(sh, pat, s, k, n)) return g_strndup(s, k);
    }
  }
  return g_strdup(s);
}

/* rep for the match s[from, to): `&` is the match, `\&` and `\\` are
 * `&` and `\` (word_string, WS_REPL); any other backslash, which an
 * expansion gave (b='a\b'; ${x/a/$b}), stays as bash's does. */
static void add_repl(GString *g, const char *rep, const char *s, size_t from, size_t to)
{
  for (const char *r = rep; *r; r++) {
    if (*r == '\\' && (r[1] == '\\' || r[1] == '&'))
      g_string_append_c(g, *++r);
    else if (*r == '&')
      g_string_append_len(g, s + from, (gssize)(to - from));
    else
      g_string_append_c(g, *r);
  }
}

static char *replace(Shell *sh, const char *s, const char *pat, const char *rep, int mode)
{
  /* mode: 0 first, 1 all, 2 prefix, 3 suffix */
  size_t n = strlen(s);
  GString *g = g_string_new(NULL);
  if (mode == 2) {
    for (size_t k = n + 1; k-- > 0;)
      if (match_at(sh, pat, s, 0, k)) {
        add_repl(g, rep, s, 0, k);
        g_string_append(g, s + k);
        return g_string_free(g, FALSE);
      }
    g_string_free(g, TRUE);
    return g_strdup(s);
  }
  if (mode == 3) {
    for (size_t k = 0; k <= n; k++)
      if (match_at(sh, pat, s, k, n)) {
        g_string_append_len(g, s, (gssize)k);
        add_repl(g, rep, s, k, n);
        return g_string_free(g, FALSE);
      }
    g_string_free(g, TRUE);
    return g_strdup(s);
  }
  if (!*pat) {
    g_string_free(g, TRUE);
    return g_strdup(s);
  }
  /* an empty value is replaced when the pattern matches nothing (`*`) */
  if (n == 0 && match_at(sh, pat, s, 0, 0)) add_repl(g, rep, s, 0, 0);
  size_t i = 0;
  bool done = false;
  while (i < n) {
    size_t best = (size_t)-1;
    if (!done)
      for (size_t k = n; k > i; k--)
        if (match_at(sh, pat, s, i, k)) {
          best = k;
          break;
        }
    if (best != (size_t)-1) {
      add_repl(g, rep, s, i, best);
      i = best;
      if (mode == 0) done = true;
    } else {
      g_string_append_c(g, s[i++]);
    }
  }
  return g_string_free(g, FALSE);
}

/* ---- parameters ------------------------------------------------------------------ */

typedef struct {
  GPtrArray *list; /* of char* (borrowed or owned per `owned`) */
  bool is_list;    /* $@ $* arr[@] arr[*] */
  bool star;       /* $* / arr[*] */
  bool set;
} Vals;

static const char *ifs(Shell *sh)
{
  const char *v = box_var_get(sh, "IFS");
  return v ? v : " \t\n";
}

/* The byte length of the character s (n bytes) begins with: 1 for ASCII
 * and for a byte that starts no valid UTF-8 character. */
static size_t char_len(const char *s, size_t n)
{
  if (!n || !(*s & 0x80)) return 1;
  gunichar c = g_utf8_get_char_validated(s, (gssize)n);
  return c == (gunichar)-1 || c == (gunichar)-2 ? 1 : (size_t)(g_utf8_next_char(s) - s);
}

size_t box_ifs_len(const char *ifsv, const char *s, size_t n)
{
  if (!n || !*s) return 0;
  if (!(*s & 0x80)) return strchr(ifsv, *s) ? 1 : 0;
  size_t l = char_len(s, n);
  for (const char *p = ifsv; *p; p += char_len(p, strlen(p)))
    if (char_len(p, strlen(p)) == l && memcmp(p, s, l) == 0) return l;
  return 0;
}

static char *opts_string(Shell *sh)
{
  /* bash's order: lower case, then upper case */
  static const char letters[] = "abefhikmpuvxBCEHPT";
  static const unsigned flags[] = {
    O_ALLEXPORT, O_INERT_NOTIFY,  O_ERREXIT,          O_NOGLOB,     O_HASHALL,        O_INTERACTIVE,
    O_KEYWORD,   O_INERT_MONITOR, O_INERT_PRIVILEGED, O_NOUNSET,    O_VERBOSE,        O_XTRACE,
    O_BRACE,     O_NOCLOBBER,     O_ERRTRACE,         O_HISTEXPAND, O_INERT_PHYSICAL, O_FUNCTRACE,
  };
  G_STATIC_ASSERT(G_N_ELEMENTS(flags) == sizeof letters - 1);
  GString *g = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(flags); i++)
    if (sh->opts & flags[i]) g_string_append_c(g, letters[i]);
  if (sh->opts & O_FROM_STDIN)
    g_string_append_c(g, 's');
  else if (!(sh->opts & O_FROM_FILE))
    g_string_append_c(g, 'c');
  return g_string_free(g, FALSE);
}

/* Scalar special parameters into buf; NULL when not special/unset. */
static char *special(Shell *sh, const char *name)
{
  if (!name[1] || g_ascii_isdigit(name[0])) {
    switch (name[0]) {
    case '?': return g_strdup_printf("%d", sh->status);
    case '$': return g_strdup_printf("%d", (int)sh->pid);
    case '!': return sh->last_bg ? g_strdup_printf("%d", (int)sh->last_bg) : NULL;
    case '#': return g_strdup_printf("%d", sh->npos);
    case '-': return opts_string(sh);
    case '0':
      if (!name[1]) return g_strdup(sh->arg0);
      break;
    default: break;
    }
    if (g_ascii_isdigit(name[0])) {
      long k = atol(name);
      if (k >= 1 && k <= sh->npos) return g_strdup(sh->pos[k - 1]);
      return NULL;
    }
  }
  return NULL;
}

/* Past one character as bash counts them: a valid UTF-8 sequence, or one
 * byte of an invalid or cut one (g_utf8_next_char would step over the
 * bytes after a lone lead byte, even past the string's end). */
static const char *char_next(const char *s)
{
  gunichar c = g_utf8_get_char_validated(s, -1);
  return c == (gunichar)-1 || c == (gunichar)-2 ? s + 1 : g_utf8_next_char(s);
}

static int64_t char_count(const char *s)
{
  int64_t n = 0;
  for (; *s; s = char_next(s)) n++;
  return n;
}

static const char *char_at(const char *s, int64_t k)
{
  for (; k > 0 && *s; k--) s = char_next(s);
  return s;
}

static bool is_nameref(Shell *sh, const char *name)
{
  ShellVar *v = g_hash_table_lookup(sh->vars, name);
  return v && (v->flags & V_NAMEREF);
}

static bool is_special_name(const char *n)
{
  return (n[0] && !n[1] && strchr("?$!#-0@*", n[0])) || g_ascii_isdigit(n[0]);
}

static void get_vals(X *x, const char *name, const char *sub, Vals *v)
{
  Shell *sh = x->sh;
  g_autofree char *ref_arr = NULL, *ref_key = NULL;
  if (!sub && box_nameref_elem(sh, name, &ref_arr, &ref_key)) {
    name = ref_arr;
    sub = ref_key;
  }
  v->list = g_ptr_array_new_with_free_func(g_free);
  v->is_list = false;
  v->star = false;
  v->set = false;
  if (!sub && (strcmp(name, "@") == 0 || strcmp(name, "*") == 0)) {
    v->is_list = true;
    v->star = name[0] == '*';
    for (int i = 0; i < sh->npos; i++) g_ptr_array_add(v->list, g_strdup(sh->pos[i]));
    v->set = sh->npos > 0;
    return;
  }
  if (!sub && is_special_name(name)) {
    char *s = special(sh, name);
    if (s) {
      g_ptr_array_add(v->list, s);
      v->set = true;
    }
    return;
  }
  ShellVar *var = box_var_lookup(sh, name);
  /* a nameref to an element (declare -n r='A[k]') has no elements itself */
  if (sub && var && (var->flags & V_NAMEREF)) var = NULL;
  if (sub && (strcmp(sub, "@") == 0 || strcmp(sub, "*") == 0)) {
    v->is_list = true;
    v->star = sub[0] == '*';
    GPtrArray *vals = box_var_values(var, false);
    for (guint i = 0; i < vals->len; i++) g_ptr_array_add(v->list, g_strdup(vals->pdata[i]));
    g_ptr_array_free(vals, TRUE);
    v->set = v->list->len > 0;
    return;
  }
  const char *s = NULL;
  if (sub) {
    /* an unset name's subscript is evaluated too: bash reads it as an
     * indexed array's, so `${u[08]}` is an arithmetic error */
    char *k = box_expand_subscript(sh, sub, NULL);
    int64_t idx;
    if (!k) {
      xfail(x, 1); /* the subscript's expansion failed and said why */
    } else if (var && (var->flags & V_ASSOC)) {
      s = box_var_elem(var, k);
    } else if (box_arith(sh, k, &idx)) {
      if (var && idx < 0 && (!(var->flags & V_ARRAY) || idx + (int64_t)var->arr->len < 0)) {
        if (box_bad_subscript(sh, name)) xfail(x, 1);
      } else if (var) {
        char b[32];
        g_snprintf(b, sizeof b, "%" G_GINT64_FORMAT, idx);
        s = box_var_elem(var, b);
      }
    } else {
      xfail(x, 1);
    }
    g_free(k);
  } else {
    s = box_var_get(sh, name);
  }
  if (s) {
    g_ptr_array_add(v->list, g_strdup(s));
    v->set = true;
  }
}

static char *join_vals(X *x, Vals *v, bool star_sep)
{
  const char *i = star_sep ? ifs(x->sh) : " ";
  size_t sepn = *i ? char_len(i, strlen(i)) : 0; /* IFS's first character, whole */
  GString *g = g_string_new(NULL);
  for (guint k = 0; k < v->list->len; k++) {
    if (k) g_string_append_len(g, i, (gssize)sepn);
    g_string_append(g, v->list->pdata[k]);
  }
  return g_string_free(g, FALSE);
}

/* ${!prefix*} and ${!a[*]} unquoted: the names joined by IFS[0] (the
 * keys by a space when IFS is empty), then split, where $* splits each
 * value: bash's, which differs only with IFS='' (one word). */
static void join_names(X *x, Vals *v, int mode, bool keys)
{
  if (!v->star || (mode & M_DQ) || !v->list->len) return;
  char *j = join_vals(x, v, !(keys && !*ifs(x->sh)));
  g_ptr_array_set_size(v->list, 0);
  g_ptr_array_add(v->list, j);
  v->is_list = v->star = false;
}

/* Emits values: a list in "…" becomes separate fields ("$@") or one joined
 * by IFS[0] ("$*"); unquoted, every value splits. */
static void emit_vals(X *x, Vals *v, int mode)
{
  bool dq = mode & M_DQ;
  if (!v->is_list) {
    if (v->list->len) {
      const char *s = v->list->pdata[0];
      xadd(x, s, strlen(s), dq ? F_QUO : F_EXP);
      if (dq) x->other = true;
    }
    return;
  }
  if (dq && (v->star || (mode & M_NOSPLIT))) {
    char *j = join_vals(x, v, v->star);
    xadd(x, j, strlen(j), F_QUO);
    x->other = true;
    g_free(j);
    return;
  }
  if (!v->list->len) {
    if (dq) x->at_empty = true;
    return;
  }
  if (mode & M_NOSPLIT) {
    char *j = join_vals(x, v, v->star);
    xadd(x, j, strlen(j), F_EXP);
    g_free(j);
    return;
  }
  for (guint k = 0; k < v->list->len; k++) {
    if (k) xaddc(x, ' ', F_BRK);
    if (dq) {
      xaddc(x, 0, F_NUL);
      x->other = true;
    }
    const char *s = v->list->pdata[k];
    xadd(x, s, strlen(s), dq ? F_QUO : F_EXP);
  }
}

/* What an operator's word becomes: a plain string, a pattern (its quoted
 * characters escaped), or a ${v/p/r} replacement (its quoted `&` and `\`
 * escaped: an unquoted `&` stands for the match, as bash 5.2's
 * patsub_replacement). */
enum { WS_PLAIN, WS_PATTERN, WS_REPL };

/* Expands an operator's word to a plain string (or pattern).  Patterns
 * and replacements are expanded as unquoted words whatever quotes the
 * ${…} stands in, as bash does: "${f%.*}" removes a pattern, and quotes
 * inside the word quote. */
static char *word_string(X *outer, const char *t, size_t n, int mode, int kind)
{
  X x;
  xinit(&x, outer->sh);
  /* a here-document's body reads the word as "…" does (quotes stay) */
  int m =
    kind == WS_PLAIN && (mode & (M_DQ | M_HEREDOC)) ? (mode & (M_DQ | M_HEREDOC)) | M_DQWORD : 0;
  expand_text(&x, t, n, m | (mode & M_ARITH) | M_NOSPLIT);
  if (x.failed) xfail(outer, x.status);
  GString *r = g_string_new(NULL);
  for (size_t i = 0; i < x.s->len; i++) {
    guint8 f = x.q->data[i];
    char c = x.s->str[i];
    if (f == F_NUL || f == F_BRK) {
      if (f == F_BRK) g_string_append_c(r, ' ');
      continue;
    }
    if (kind == WS_PATTERN && f == F_QUO && strchr("*?[]\\!@+()|", c)) g_string_append_c(r, '\\');
    if (kind == WS_REPL && f == F_QUO && (c == '&' || c == '\\')) g_string_append_c(r, '\\');
    g_string_append_c(r, c);
  }
  xfree(&x);
  return g_string_free(r, FALSE);
}

/* The word of ${v-word} or ${v+word} in place of the parameter.  Inside
 * "…" its own double quotes are dropped; unquoted, its unquoted text is
 * split as an expansion's would be (`${u:-a b c}` is three words). */
static void op_word(X *x, const char *w, size_t wn, int mode)
{
  if (mode & (M_DQ | M_HEREDOC)) {
    expand_text(x, w, wn, mode | M_DQWORD);
    return;
  }
  size_t before = x->q->len;
  expand_text(x, w, wn, mode);
  if (!(mode & M_NOSPLIT))
    for (size_t i = before; i < x->q->len; i++)
      if (x->q->data[i] == F_LIT) x->q->data[i] = F_EXP;
}

/* From just past a '[': the index of its matching ']' (brackets nest), or n when there is none. */
static size_t bracket_end(const char *t, size_t e, size_t n)
{
  int depth = 1;
  while (e < n && depth) {
    if (t[e] == '[')
      depth++;
    else if (t[e] == ']')
      depth--;
    if (depth) e++;
  }
  return e;
}

/* ${v@Q}: quoted even when nothing needs it, as bash prints it. */
static char *quote_always(const char *s)
{
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 32 || *p == 127) return box_quote(s);
  return g_shell_quote(s);
}

/* upper: 1 up, 0 down, -1 toggled (${v~}, ${v~~}). */
static char *case_mod(const char *s, const char *pat, int upper, bool all, Shell *sh)
{
  GString *g = g_string_new(NULL);
  bool first = true;
  for (const char *p = s; *p;) {
    gunichar c = g_utf8_get_char_validated(p, -1);
    if (c == (gunichar)-1 || c == (gunichar)-2) {
      /* not UTF-8 (a lead byte before the end, `v=$'\xdd'`): the byte
       * stays as it is, and the next one is looked at alone */
      g_string_append_c(g, *p++);
      first = false;
      continue;
    }
    const char *nx = g_utf8_next_char(p);
    bool apply = all || first;
    if (apply && pat && *pat) {
      char *one = g_strndup(p, (size_t)(nx - p));
      /* bash matches ${v^^pat}'s pattern as extglob whatever the option */
      apply = fnm(sh, pat, one, true);
      g_free(one);
    }
    if (apply && upper < 0)
      c = g_unichar_isupper(c) ? g_unichar_tolower(c) : g_unichar_toupper(c);
    else if (apply)
      c = upper ? g_unichar_toupper(c) : g_unichar_tolower(c);
    g_string_append_unichar(g, c);
    first = false;
    p = nx;
  }
  return g_string_free(g, FALSE);
}

char *box_single_quote(const char *s)
{
  g_auto(GStrv) parts = g_strsplit(s, "'", -1);
  g_autofree char *inner = g_strjoinv("'\\''", parts);
  return g_strconcat("'", inner, "'", NULL);
}

void box_append_amp(GString *g, const char *text, const char *amp)
{
  for (const char *r = text; *r; r++) {
    if (*r == '\\' && r[1] == '&')
      g_string_append_c(g, *++r);
    else if (*r == '&')
      g_string_append(g, amp);
    else
      g_string_append_c(g, *r);
  }
}

char *box_quote(const char *s)
{
  if (!*s) return g_strdup("''");
  bool safe = true;
  for (const char *p = s; *p; p++)
    if (!(g_ascii_isalnum(*p) || strchr("_-./=+:,@%^", *p))) safe = false;
  if (safe) return g_strdup(s);
  bool ctrl = false;
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 32 || *p == 127) ctrl = true;
  if (!ctrl) return g_shell_quote(s);
  GString *g = g_string_new("$'");
  for (const char *p = s; *p; p++) {
    unsigned char c = (unsigned char)*p;
    switch (c) {
    case '\n': g_string_append(g, "\\n"); break;
    case '\t': g_string_append(g, "\\t"); break;
    case '\r': g_string_append(g, "\\r"); break;
    case 033: g_string_append(g, "\\E"); break;
    case '\'': g_string_append(g, "\\'"); break;
    case '\\': g_string_append(g, "\\\\"); break;
    default:
      if (c < 32 || c == 127)
        g_string_append_printf(g, "\\%03o", c);
      else
        g_string_append_c(g, (char)c);
    }
  }
  g_string_append_c(g, '\'');
  return g_string_free(g, FALSE);
}

/* ${v@A} of one value: the assignment that would make it, as bash
 * words it (declare -FLAGS when the variable has any, or is an array). */
static char *assignment_text(Shell *sh, const char *name, const char *value)
{
  GString *g = g_string_new(NULL);
  box_var_attr_letters(box_var_lookup(sh, name), g);
  if (g->len) g_string_prepend(g, "declare -"), g_string_append_c(g, ' ');
  char *q = quote_always(value);
  g_string_append_printf(g, "%s=%s", name, q);
  g_free(q);
  return g_string_free(g, FALSE);
}

static char *attr_string(ShellVar *v)
{
  GString *g = g_string_new(NULL);
  box_var_attr_letters(v, g);
  return g_string_free(g, FALSE);
}

/* ${…}: t points after "${", returns false on a bad substitution. */
/* Where ${NAME[@]:off} starts in the list of values: an indexed array's
 * off is an index (the set elements from it on; negative from past the
 * last), an associative array's counts from 1 as bash's does; cnt when
 * nothing is left. */
static int64_t list_start(Shell *sh, const char *name, const char *sub, int64_t off, int64_t cnt)
{
  ShellVar *av = sub ? box_var_lookup(sh, name) : NULL;
  if (av && (av->flags & V_ASSOC) && off > 0) off--;
  if (av && (av->flags & V_ARRAY)) {
    guint top = av->arr->len;
    while (top && !av->arr->pdata[top - 1]) top--;
    int64_t idx = off < 0 ? off + (int64_t)top : off;
    if (idx < 0) return cnt;
    int64_t p = 0;
    for (guint i = 0; i < top && (int64_t)i < idx; i++) p += av->arr->pdata[i] != NULL;
    return p;
  }
  if (off < 0) off += cnt;
  return off < 0 ? cnt : off;
}

/* An end before the start: bash drops the command, not the shell. */
static void substring_negative(X *x, const char *len_text)
{
  box_sh_error(x->sh, "%s: substring expression < 0", len_text);
  x->sh->discard = true;
  xfail(x, 1);
}

/* bash's "bad substitution" of the text at t: the line goes (the shell,
 * under set -e).  False, for the caller to return. */
static bool bad_substitution(X *x, const char *t, size_t n)
{
  box_sh_error(x->sh, "%.*s: bad substitution", (int)n, t);
  if (!box_errexit_ends(x->sh)) x->sh->discard = true;
  xfail(x, 1);
  return false;
}

static int arith_fail_status(Shell *sh);

/* The offset or length of ${x:off:len} is no expression: as $(( )). */
static void substring_arith_failed(X *x)
{
  int st = arith_fail_status(x->sh);
  if (st == 1) x->sh->discard = true;
  xfail(x, st);
}

/* The `]` that closes the `[` at t[i], past quoted and escaped text, as
 * bash's skipsubscript; strlen(t) when none does. */
static size_t subscript_close(const char *t, size_t i)
{
  int depth = 0;
  for (; t[i]; i++) {
    char c = t[i];
    if (c == '\\' && t[i + 1]) {
      i++;
    } else if (c == '\'') {
      const char *q = strchr(t + i + 1, '\'');
      if (!q) return strlen(t);
      i = (size_t)(q - t);
    } else if (c == '"') {
      for (i++; t[i] && t[i] != '"'; i++)
        if (t[i] == '\\' && t[i + 1]) i++;
      if (!t[i]) return i;
    } else if (c == '[') {
      depth++;
    } else if (c == ']' && --depth == 0) {
      return i;
    }
  }
  return i;
}

/* What ${!v} may lead to, as bash's valid_brace_expansion_word: a name,
 * a positional or special parameter, or NAME[subscript]. */
static bool indirect_word_ok(const char *t)
{
  size_t n = strlen(t);
  if (!n) return false;
  if (g_ascii_isdigit(t[0])) return strspn(t, "0123456789") == n;
  if (n == 1 && strchr("@*#?-$!", t[0])) return true;
  if (box_is_name(t, n)) return true;
  const char *br = strchr(t, '[');
  if (!br || !box_is_name(t, (size_t)(br - t))) return false;
  size_t e = subscript_close(t, (size_t)(br - t));
  return e == n - 1 && e > (size_t)(br - t) + 1;
}

/* bash's error of an indirection: said, the command dropped (the shell
 * under set -e), false for the caller to return. */
static bool indirect_error(X *x, const char *what, const char *why)
{
  box_sh_error(x->sh, "%s: %s", what, why);
  if (!box_errexit_ends(x->sh)) x->sh->discard = true;
  xfail(x, 1);
  return false;
}

/* ${!v…}: v's value (in *vals) names the parameter to expand; *name and
 * *sub become its own, and *vals its values.  False after an error. */
static bool indirect_target(X *x, char **name, char **sub, Vals *vals)
{
  Shell *sh = x->sh;
  g_autofree char *target = NULL;
  if (vals->is_list)
    target = vals->list->len ? join_vals(x, vals, false) : NULL;
  else if (vals->list->len)
    target = g_strdup(vals->list->pdata[0]);
  if (!target) {
    /* an unset name (or array) is an error; an unset element is unset */
    bool named = *sub || box_is_name(*name, strlen(*name));
    if (named && !box_var_lookup(sh, *name)) {
      g_autofree char *what = *sub ? g_strdup_printf("%s[%s]", *name, *sub) : g_strdup(*name);
      return indirect_error(x, what, "invalid indirect expansion");
    }
    g_ptr_array_set_size(vals->list, 0);
    vals->set = false;
    vals->is_list = false;
    /* it names no variable: ${!A@a} has no attributes to show */
    g_free(*name);
    *name = g_strdup("");
    g_clear_pointer(sub, g_free);
    return true;
  }
  if (!indirect_word_ok(target)) return indirect_error(x, target, "invalid variable name");
  char *tsub = NULL;
  char *br = strchr(target, '[');
  if (br) {
    tsub = g_strndup(br + 1, strlen(br + 1) - 1);
    *br = '\0';
  }
  g_ptr_array_free(vals->list, TRUE);
  get_vals(x, target, tsub, vals);
  g_free(*name);
  g_free(*sub);
  *name = g_steal_pointer(&target);
  *sub = tsub;
  return true;
}

static bool param_brace(X *x, const char *t, size_t n, int mode)
{
  Shell *sh = x->sh;
  size_t i = 0;
  bool length = false, indirect = false;
  char *whole = g_strndup(t, n);
  if (n > 1 && t[0] == '#' && t[1] != '}' &&
      !(n >= 2 && (t[1] == '-' || t[1] == '=' || t[1] == '?' || t[1] == '+') && n > 2)) {
    length = true;
    i = 1;
  } else if (n > 1 && t[0] == '!') {
    indirect = true;
    i = 1;
  }
  size_t ns = i;
  if (i < n && (t[i] == '_' || g_ascii_isalpha(t[i]))) {
    while (i < n && (t[i] == '_' || g_ascii_isalnum(t[i]))) i++;
  } else if (i < n && g_ascii_isdigit(t[i])) {
    while (i < n && g_ascii_isdigit(t[i])) i++;
  } else if (i < n && strchr("@*#?$!-0", t[i])) {
    i++;
  } else if (length && i == 1 && (i >= n)) {
    /* ${#} */
  }
  if (i == ns) {
    if (length && ns == 1) {
      /* ${#} handled as name "#" */
      length = false;
      ns = 0;
      i = 1;
    } else {
      box_sh_error(sh, "${%s}: bad substitution", whole);
      if (!box_errexit_ends(sh)) sh->discard = true; /* the line goes, not the shell */
      g_free(whole);
      xfail(x, 1);
      return false;
    }
  }
  char *name = g_strndup(t + ns, i - ns);
  char *sub = NULL;
  if (i < n && t[i] == '[') {
    size_t e = bracket_end(t, i + 1, n);
    if (e >= n) {
      /* `${a[1}`: no `]`, as bash says; the rest would start past n */
      box_sh_error(sh, "${%s}: bad substitution", whole);
      if (!box_errexit_ends(sh)) sh->discard = true; /* the line goes, not the shell */
      g_free(name);
      g_free(whole);
      xfail(x, 1);
      return false;
    }
    sub = g_strndup(t + i + 1, e - i - 1);
    i = e + 1;
  }
  /* ${!prefix*} ${!prefix@} */
  if (indirect && !sub && i < n && (t[i] == '*' || t[i] == '@') && i + 1 == n) {
    Vals v = { g_ptr_array_new_with_free_func(g_free), true, t[i] == '*', true };
    box_vars_materialize(sh);
    GList *keys = g_hash_table_get_keys(sh->vars);
    keys = g_list_sort(keys, (GCompareFunc)strcmp);
    for (GList *k = keys; k; k = k->next)
      if (g_str_has_prefix(k->data, name)) g_ptr_array_add(v.list, g_strdup(k->data));
    g_list_free(keys);
    join_names(x, &v, mode, false);
    emit_vals(x, &v, mode);
    g_ptr_array_free(v.list, TRUE);
    g_free(name);
    g_free(whole);
    return true;
  }
  Vals v;
  /* ${!v…} as bash names it in its messages */
  g_autofree char *shown = NULL;
  if (indirect && sub && (strcmp(sub, "@") == 0 || strcmp(sub, "*") == 0) && i >= n) {
    /* ${!arr[@]}: keys (none for a nameref to an element); with an
     * operator after it, an indirection like another */
    ShellVar *var = box_var_lookup(sh, name);
    if (var && (var->flags & V_NAMEREF)) var = NULL;
    v.list = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *keys = box_var_values(var, true);
    for (guint k = 0; k < keys->len; k++)
      g_ptr_array_add(v.list,
                      var && (var->flags & V_ASSOC) ? g_strdup(keys->pdata[k]) : keys->pdata[k]);
    if (!(var && (var->flags & V_ASSOC)) && var && !(var->flags & V_ARRAY)) {
      /* scalar: "0" strings were allocated */
    }
    g_ptr_array_free(keys, FALSE);
    v.is_list = true;
    v.star = sub[0] == '*';
    v.set = v.list->len > 0;
    indirect = false;
    if (i >= n) join_names(x, &v, mode, true);
  } else if (indirect && !sub && is_nameref(sh, name)) {
    /* ${!ref} of a nameref is the name it leads to */
    const char *target = ((ShellVar *)g_hash_table_lookup(sh->vars, name))->value;
    v.list = g_ptr_array_new_with_free_func(g_free);
    if (target) g_ptr_array_add(v.list, g_strdup(target));
    v.is_list = v.star = false;
    v.set = target != NULL;
    indirect = false;
  } else {
    /* bash measures an unset name's element as 0 without reading its
     * subscript (which it does read for the element's value) */
    get_vals(x, name, length && !indirect && !box_var_lookup(sh, name) ? NULL : sub, &v);
    if (indirect)
      shown = g_strdup_printf("!%s%s%s%s", name, sub ? "[" : "", sub ? sub : "", sub ? "]" : "");
    if (indirect && !x->failed && !indirect_target(x, &name, &sub, &v)) {
      g_ptr_array_free(v.list, TRUE);
      g_free(name);
      g_free(sub);
      g_free(whole);
      return false;
    }
  }
  bool ok = true;
  if (x->failed) { /* its subscript's arithmetic, said already */
    ok = false;
    goto out;
  }
  if (length && i < n) {
    /* ${#x:1:3}, ${#x%y}: no operator after a length */
    box_sh_error(sh, "${%s}: bad substitution", whole);
    if (!box_errexit_ends(sh)) sh->discard = true;
    xfail(x, 1);
    ok = false;
    goto out;
  }
  if (length) {
    char buf[32];
    g_autofree char *ref_arr = NULL, *ref_key = NULL;
    if (v.is_list) {
      g_snprintf(buf, sizeof buf, "%u", v.list->len);
    } else if (!sub && box_nameref_elem(sh, name, &ref_arr, &ref_key)) {
      /* bash 5.2 measures a nameref to an element (declare -n r='A[k]')
       * only under set -u, unset counting 0 there too; 0 otherwise */
      const char *s = v.list->len && (sh->opts & O_NOUNSET) ? v.list->pdata[0] : NULL;
      g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, s ? char_count(s) : (int64_t)0);
    } else {
      const char *s = v.list->len ? v.list->pdata[0] : NULL;
      if (!s && (sh->opts & O_NOUNSET)) {
        box_sh_error(sh, "%s: unbound variable", name);
        xfail(x, sub ? 1 : 127); /* bash's status for ${#v[k]}, ${#v} */
        ok = false;
        goto out;
      }
      g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, s ? char_count(s) : (int64_t)0);
    }
    xadd(x, buf, strlen(buf), (mode & M_DQ) ? F_QUO : F_EXP);
    if (mode & M_DQ) x->other = true;
    goto out;
  }
  if (i >= n) {
    /* set -u: "$@" and "${a[@]}" may be empty, a declared array or not */
    bool may_be_empty = v.is_list;
    if (!v.set && (sh->opts & O_NOUNSET) && !may_be_empty) {
      box_sh_error(sh, "%s: unbound variable", shown ? shown : sub ? whole : name);
      xfail(x, 127);
      ok = false;
      goto out;
    }
    emit_vals(x, &v, mode);
    goto out;
  }
  const char *op = t + i;
  size_t oplen = 1;
  bool colon = false;
  if (op[0] == ':' && i + 1 < n && strchr("-=?+", op[1])) {
    colon = true;
    op++;
    i++;
  }
  char o = op[0];
  const char *w = t + i + 1;
  size_t wn = n - i - 1;
  if (strchr("-=?+", o)) {
    bool empty = !v.set || (colon && !v.is_list && v.list->len && !*(char *)v.list->pdata[0]) ||
                 (colon && v.is_list && v.list->len == 0);
    if (colon && v.is_list && v.list->len == 1 && !*(char *)v.list->pdata[0]) empty = true;
    switch (o) {
    case '-':
      if (empty) {
        bool save = x->other;
        op_word(x, w, wn, mode);
        x->other = save || (mode & M_DQ);
      } else {
        emit_vals(x, &v, mode);
      }
      break;
    case '+':
      if (!empty) {
        op_word(x, w, wn, mode);
        if (mode & M_DQ) x->other = true;
      }
      break;
    case '=':
      if (empty) {
        if (is_special_name(name) || sub) {
          if (sub) {
            char *val = word_string(x, w, wn, 0, WS_PLAIN);
            char *k = box_expand_subscript(sh, sub, NULL);
            if (k) box_var_set_elem(sh, name, k, val, false);
            xadd(x, val, strlen(val), (mode & M_DQ) ? F_QUO : F_EXP);
            g_free(k);
            g_free(val);
            break;
          }
          box_sh_error(sh, "$%s: cannot assign in this way", name);
          if (!box_errexit_ends(sh)) sh->discard = true;
          xfail(x, 1);
          ok = false;
          break;
        }
        char *val = word_string(x, w, wn, mode, WS_PLAIN);
        if (!box_var_set(sh, name, val)) {
          xfail(x, 1);
          ok = false;
        }
        const char *nv = box_var_get(sh, name);
        xadd(x, nv ? nv : "", nv ? strlen(nv) : 0, (mode & M_DQ) ? F_QUO : F_EXP);
        g_free(val);
      } else {
        emit_vals(x, &v, mode);
      }
      break;
    case '?':
      if (empty) {
        char *msg = wn      ? word_string(x, w, wn, 0, WS_PLAIN)
                    : colon ? g_strdup("parameter null or not set")
                            : g_strdup("parameter not set");
        box_sh_error(sh, "%s: %s", shown ? shown : name, msg);
        g_free(msg);
        xfail(x, 127);
        ok = false;
      } else {
        emit_vals(x, &v, mode);
      }
      break;
    }
    goto out;
  }
  if (!v.set && (sh->opts & O_NOUNSET) && !v.is_list) {
    box_sh_error(sh, "%s: unbound variable", shown ? shown : name);
    xfail(x, 127);
    ok = false;
    goto out;
  }
  (void)oplen;
  /* operators applied to every value */
  GPtrArray *res = g_ptr_array_new_with_free_func(g_free);
  if (o == '#' || o == '%') {
    bool longest = wn > 0 && w[0] == o;
    if (longest) w++, wn--;
    char *pat = word_string(x, w, wn, mode, WS_PATTERN);
    for (guint k = 0; k < v.list->len; k++)
      g_ptr_array_add(res, trim(sh, v.list->pdata[k], pat, o == '%', longest));
    g_free(pat);
  } else if (o == '/') {
    int rmode = 0;
    if (wn && w[0] == '/')
      rmode = 1, w++, wn--;
    else if (wn && w[0] == '#')
      rmode = 2, w++, wn--;
    else if (wn && w[0] == '%')
      rmode = 3, w++, wn--;
    /* split pattern/replacement at an unquoted "/"; as bash, not at the
     * first character of a // pattern (${p////_} replaces every "/") */
    size_t k = rmode == 1 && wn && w[0] == '/' ? 1 : 0;
    while (k < wn && w[k] != '/') {
      if (w[k] == '\\')
        k++;
      else if (w[k] == '\'') { /* '…' holds no quote, escape or $ */
        const char *q = memchr(w + k + 1, '\'', wn - k - 1);
        k = q ? (size_t)(q - w) : wn - 1;
      } else if (w[k] == '"' || w[k] == '`')
        k = skip_to(w, k + 1, wn, w[k]) - 1;
      else if (w[k] == '$' && k + 1 < wn && (w[k + 1] == '{' || w[k + 1] == '('))
        k = skip_to(w, k + 2, wn, w[k + 1] == '{' ? '}' : ')') - 1;
      k++;
    }
    char *pat = word_string(x, w, MIN(k, wn), mode, WS_PATTERN);
    char *rep = k < wn ? word_string(x, w + k + 1, wn - k - 1, mode, WS_REPL) : g_strdup("");
    for (guint j = 0; j < v.list->len; j++)
      g_ptr_array_add(res, replace(sh, v.list->pdata[j], pat, rep, rmode));
    g_free(pat);
    g_free(rep);
  } else if (o == ':' && !v.set && strcmp(name, "@") != 0 && strcmp(name, "*") != 0) {
    /* unset: bash evaluates neither offset nor length (${u:1+} is empty) */
  } else if (o == ':') {
    /* ${x:off[:len]} */
    size_t k = 0;
    /* the offset's own ?: pairs its colons: ${s: a ? 2 : 0 : 1} */
    int depth = 0, ternary = 0;
    for (; k < wn; k++) {
      if (w[k] == ':' && ternary > 0)
        ternary--;
      else if (w[k] == ':' && depth == 0)
        break;
      if (w[k] == '(') depth++;
      if (w[k] == ')') depth--;
      if (w[k] == '?') ternary++;
    }
    char *offs = word_string(x, w, k, M_ARITH, WS_PLAIN);
    int64_t off = 0, len = -1;
    bool has_len = k < wn;
    /* bash's messages name the parameter: `s: 08: value too great…` */
    const char *who = sh->arith_who;
    g_autofree char *elem = sub ? g_strdup_printf("%s[%s]", name, sub) : NULL;
    sh->arith_who = sub ? elem : name;
    if (!box_arith(sh, offs, &off)) {
      substring_arith_failed(x);
      ok = false;
    }
    g_free(offs);
    /* the length as expanded names a negative end in bash's message */
    g_autofree char *ls = NULL;
    if (ok && has_len) {
      ls = word_string(x, w + k + 1, wn - k - 1, M_ARITH, WS_PLAIN);
      if (!box_arith(sh, ls, &len)) {
        substring_arith_failed(x);
        ok = false;
      }
    }
    sh->arith_who = who;
    /* a scalar's [@] is the scalar: its characters are cut, as bash's */
    ShellVar *var = v.is_list && sub ? box_var_lookup(sh, name) : NULL;
    bool cut_chars = var && !(var->flags & (V_ARRAY | V_ASSOC));
    if (ok && v.is_list && !cut_chars) {
      GPtrArray *src = v.list;
      int64_t cnt = src->len;
      bool pos = !sub && (strcmp(name, "@") == 0 || strcmp(name, "*") == 0);
      if (pos) {
        /* $0 is element 0 */
        g_ptr_array_insert(src, 0, g_strdup(sh->arg0));
        cnt++;
      }
      off = pos ? (off < 0 && off + cnt >= 0 ? off + cnt
                   : off < 0                 ? cnt
                                             : off)
                : list_start(sh, name, sub, off, cnt);
      if (has_len && len < 0) {
        substring_negative(x, ls);
        ok = false;
      }
      int64_t end = has_len ? off + len : cnt;
      if (end > cnt) end = cnt;
      for (int64_t j = off; ok && j < end; j++) g_ptr_array_add(res, g_strdup(src->pdata[j]));
    } else if (ok) {
      for (guint j = 0; j < v.list->len; j++) {
        const char *s = v.list->pdata[j];
        int64_t sl = char_count(s);
        int64_t o2 = off < 0 ? off + sl : off;
        if (o2 < 0 || o2 > sl) {
          g_ptr_array_add(res, g_strdup(""));
          continue;
        }
        int64_t l2 = has_len ? (len < 0 ? sl + len - o2 : len) : sl - o2;
        if (l2 < 0) {
          substring_negative(x, ls);
          ok = false;
          break;
        }
        if (o2 + l2 > sl) l2 = sl - o2;
        const char *a = char_at(s, o2);
        const char *b = char_at(a, l2);
        g_ptr_array_add(res, g_strndup(a, (size_t)(b - a)));
      }
    }
  } else if (o == '^' || o == ',' || o == '~') {
    bool all = wn && w[0] == o;
    if (all) w++, wn--;
    char *pat = wn ? word_string(x, w, wn, mode, WS_PATTERN) : NULL;
    int up = o == '~' ? -1 : o == '^';
    for (guint j = 0; j < v.list->len; j++)
      g_ptr_array_add(res, case_mod(v.list->pdata[j], pat, up, all, sh));
    g_free(pat);
  } else if (o == '@' && wn == 1) {
    char f = w[0];
    for (guint j = 0; j < v.list->len; j++) {
      const char *s = v.list->pdata[j];
      switch (f) {
      case 'Q': g_ptr_array_add(res, quote_always(s)); break;
      case 'U': g_ptr_array_add(res, g_utf8_strup(s, -1)); break;
      case 'L': g_ptr_array_add(res, g_utf8_strdown(s, -1)); break;
      case 'u': g_ptr_array_add(res, case_mod(s, NULL, true, false, sh)); break;
      case 'E': g_ptr_array_add(res, box_ansi_c(s, strlen(s), NULL)); break;
      case 'a': g_ptr_array_add(res, attr_string(box_var_lookup(sh, name))); break;
      case 'K':
      case 'k':
        /* a scalar's value quoted; an array's key-value pairs are not done */
        g_ptr_array_add(res, v.is_list ? g_strdup(s) : quote_always(s));
        break;
      case 'A': g_ptr_array_add(res, v.is_list ? g_strdup(s) : assignment_text(sh, name, s)); break;
      default: g_ptr_array_add(res, g_strdup(s));
      }
    }
    /* an empty array still has its attributes; "${unset[@]@a}" is no word */
    ShellVar *held = f == 'a' && !v.list->len ? box_var_lookup(sh, name) : NULL;
    if (f == 'a' && !v.list->len && (held || !v.is_list)) g_ptr_array_add(res, attr_string(held));
  } else {
    box_sh_error(sh, "${%s}: bad substitution", whole);
    if (!box_errexit_ends(sh)) sh->discard = true;
    xfail(x, 1);
    ok = false;
  }
  if (ok) {
    Vals r = { res, v.is_list, v.star, true };
    emit_vals(x, &r, mode);
  }
  g_ptr_array_free(res, TRUE);
out:
  g_ptr_array_free(v.list, TRUE);
  g_free(name);
  g_free(sub);
  g_free(whole);
  return ok;
}

/* ---- command substitution ------------------------------------------------------- */

/* `$(< FILE)`: a command of one input redirection and nothing else, which
 * bash reads as the file's text. */
static bool reads_file(const Node *n)
{
  return n && n->kind == N_SIMPLE && !n->u.simple.nwords && !n->u.simple.nassigns &&
         n->nredirs == 1 && n->redirs[0].kind == R_IN && n->redirs[0].fd <= 0;
}

static int copy_file_in(Shell *sh, Node *n)
{
  BoxSaved sv;
  box_saved_begin(sh, &sv);
  if (!box_apply_redirs(sh, n->redirs, n->nredirs, &sv)) {
    box_saved_restore(sh, &sv);
    return 1;
  }
  GString *g = box_read_all(sh->fd[0], 0);
  box_write_all(sh->fd[1], g->str, g->len);
  g_string_free(g, TRUE);
  box_saved_restore(sh, &sv);
  return 0;
}

char *box_command_subst(Shell *sh, const char *text, bool backquote, int *status)
{
  Node *n = NULL;
  /* parsing `…` here moves $LINENO to the text's own lines: the command
   * around it (and its ERR trap) keeps its line */
  long line = sh->lineno;
  /* a `…` text the parser left unread counts its lines as bash's does: on
   * from the line its closing quote is on (a $(…) was parsed in place) */
  int base = (int)line;
  for (const char *c = text; (c = strchr(c, '\n')); c++) base++;
  bool parsed =
    backquote ? box_parse_all_at(sh, text, NULL, base, &n) : box_parse_all(sh, text, NULL, &n);
  sh->lineno = line;
  if (!parsed) {
    if (status) *status = 2;
    return NULL;
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) {
    box_sh_error(sh, "pipe: %s", box_strerror(errno));
    if (status) *status = 1;
    return NULL;
  }
  pid_t pid = box_fork(sh);
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    if (status) *status = 1;
    return NULL;
  }
  if (pid == 0) {
    close(p[0]);
    sh->fd[1] = p[1];
    sh->depth++;
    if (!(sh->shopts & SH_INHERIT_ERREXIT)) sh->opts &= ~O_ERREXIT;
    if (sh->comsub_ignore) sh->errexit_off++;
    int st = reads_file(n) ? copy_file_in(sh, n) : box_eval(sh, n);
    box_child_exit(sh, st);
  }
  close(p[1]);
  GString *g = box_read_all(p[0], 0);
  close(p[0]);
  int st = box_wait_pid(pid);
  if (status) *status = st;
  sh->status = st;
  sh->subst_status = st;
  while (g->len && g->str[g->len - 1] == '\n') g_string_truncate(g, g->len - 1);
  return g_string_free(g, FALSE);
}

static void do_subst(X *x, const char *text, int mode, bool backquote)
{
  int st = 0;
  char *out = box_command_subst(x->sh, text, backquote, &st);
  if (!out) {
    if (st == 2) xfail(x, 2);
    return;
  }
  /* bash drops NUL bytes */
  size_t len = strlen(out);
  xadd(x, out, len, (mode & M_DQ) ? F_QUO : F_EXP);
  if (mode & M_DQ) x->other = true;
  g_free(out);
}

/* The status of a failed expression: bash's 127 when set -u stopped it at
 * an unset name, else 1. */
static int arith_fail_status(Shell *sh)
{
  bool unbound = sh->arith_unbound;
  sh->arith_unbound = false;
  return unbound ? 127 : 1;
}

static void do_arith(X *x, const char *t, size_t n, int mode)
{
  char *e;
  /* a backslash too: a backslash-newline continues the line */
  if (memchr(t, '$', n) || memchr(t, '`', n) || memchr(t, '"', n) || memchr(t, '\'', n) ||
      memchr(t, '\\', n)) {
    X sub;
    xinit(&sub, x->sh);
    /* as inside "…", whose own double quotes bash drops here too */
    expand_text(&sub, t, n, M_DQ | M_ARITH | M_DQWORD);
    if (sub.failed) {
      xfail(x, sub.status);
      xfree(&sub);
      return;
    }
    e = g_strndup(sub.s->str, sub.s->len);
    xfree(&sub);
    /* drop the F_NUL bytes */
    size_t j = 0;
    size_t l = strlen(e);
    (void)l;
    for (size_t k = 0; e[k]; k++) e[j++] = e[k];
    e[j] = 0;
  } else {
    e = g_strndup(t, n);
  }
  int64_t v;
  x->sh->arith_unbound = false;
  if (!box_arith(x->sh, e, &v)) {
    g_free(e);
    int st = arith_fail_status(x->sh);
    if (st == 1) x->sh->discard = true; /* bash drops the command, not the shell */
    xfail(x, st);
    return;
  }
  g_free(e);
  char buf[32];
  g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, v);
  xadd(x, buf, strlen(buf), (mode & M_DQ) ? F_QUO : F_EXP);
  if (mode & M_DQ) x->other = true;
}

/* Process substitution: <(…) and >(…) become /dev/fd/N. */
static void do_procsubst(X *x, const char *text, bool out)
{
  Shell *sh = x->sh;
  Node *n = NULL;
  if (!box_parse_all(sh, text, NULL, &n)) {
    xfail(x, 2);
    return;
  }
  int p[2];
  if (pipe(p) < 0) {
    xfail(x, 1);
    return;
  }
  pid_t pid = box_fork(sh);
  if (pid == 0) {
    if (out) {
      close(p[1]);
      sh->fd[0] = p[0];
    } else {
      close(p[0]);
      sh->fd[1] = p[1];
    }
    int st = box_eval(sh, n);
    box_child_exit(sh, st);
  }
  int keep = out ? p[1] : p[0];
  close(out ? p[0] : p[1]);
  if (pid > 0) {
    BoxJob j = { pid, 0, false, g_strdup("procsubst"), NULL };
    g_array_append_val(sh->jobs, j);
  }
  if (!sh->procsub_fds) sh->procsub_fds = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_val(sh->procsub_fds, keep);
  char buf[32];
  g_snprintf(buf, sizeof buf, "/dev/fd/%d", keep);
  xadd(x, buf, strlen(buf), F_QUO);
}

/* ---- the word reader ------------------------------------------------------------------- */

static bool tilde(X *x, const char *t, size_t n, size_t *i, int mode)
{
  size_t e = *i + 1;
  while (e < n && t[e] != '/' && !((mode & M_ASSIGN) && t[e] == ':')) {
    if (!(g_ascii_isalnum(t[e]) || strchr("_.-+", t[e]))) return false;
    e++;
  }
  char *user = g_strndup(t + *i + 1, e - *i - 1);
  const char *val = NULL;
  g_autofree char *dir = NULL;
  if (!*user)
    val = box_var_get(x->sh, "HOME");
  else if (strcmp(user, "+") == 0)
    val = box_var_get(x->sh, "PWD");
  else if (strcmp(user, "-") == 0)
    val = box_var_get(x->sh, "OLDPWD");
  else
    val = dir = box_dirstack_tilde(x->sh, user);
  g_free(user);
  if (!val) return false;
  xadd(x, val, strlen(val), F_QUO);
  *i = e;
  return true;
}

static bool expand_text_in(X *x, const char *t, size_t n, int mode);

/* The parser bounds the nesting of the text it reads, but a here-doc's
 * body is expanded as it stands: `${x:-${x:-…` 20,000 deep in one ended
 * the worker.  Bounded here as the parser bounds it, with its message. */
static bool expand_text(X *x, const char *t, size_t n, int mode)
{
  Shell *sh = x->sh;
  if (++sh->expand_nest > BOX_MAX_NEST || box_stack_low()) {
    sh->expand_nest--;
    box_sh_error(sh, "maximum nesting depth exceeded (%d)", BOX_MAX_NEST);
    xfail(x, 2);
    return false;
  }
  bool ok = expand_text_in(x, t, n, mode);
  sh->expand_nest--;
  return ok;
}

/* What an expansion inside an arithmetic subscript gave, from mark on:
 * bash 5.2 expands a subscript once, so its quotes, backslashes and
 * brackets are the key's own characters (arith.c takes the escapes away). */
static void escape_subscript_result(X *x, size_t mark)
{
  for (size_t i = mark; i < x->s->len; i++)
    if (strchr("\\'\"[]$`", x->s->str[i]) && x->s->str[i]) {
      g_string_insert_c(x->s, (gssize)i, '\\');
      guint8 f = x->q->data[i];
      g_byte_array_set_size(x->q, x->q->len + 1);
      memmove(x->q->data + i + 1, x->q->data + i, x->q->len - i - 1);
      x->q->data[i] = f;
      i++;
    }
}

static bool expand_text_in(X *x, const char *t, size_t n, int mode)
{
  bool dq = mode & M_DQ;
  /* inside the "…" of a "${v-"…"}" word: bash reads its backslashes as
   * unquoted ones ("${u-"a\tb"}" is atb) */
  bool inner = false;
  /* in an arithmetic expression: how deep in NAME[…] subscripts, and where
   * the expansion being made there began */
  int sub_depth = 0;
  size_t sub_mark = SIZE_MAX;
  size_t i = 0;
  if (!dq && !(mode & (M_HEREDOC | M_NOTILDE)) && n && t[0] == '~') {
    if (!tilde(x, t, n, &i, mode)) {
      xaddc(x, '~', F_LIT);
      i = 1;
    }
  }
  while (i < n && !x->failed) {
    char c = t[i];
    if (sub_mark != SIZE_MAX) {
      escape_subscript_result(x, sub_mark);
      sub_mark = SIZE_MAX;
    }
    if (sub_depth > 0) {
      if (c == '$' || c == '`') sub_mark = x->s->len;
      if (c == '\\' && i + 1 < n) {
        xadd(x, t + i, 2, F_QUO); /* as the key's own, for arith.c */
        i += 2;
        continue;
      }
      if (c == '\'') {
        /* quoted in a subscript: the key's text, quotes and all */
        size_t e = i + 1;
        while (e < n && t[e] != '\'') e++;
        xadd(x, t + i, MIN(e + 1, n) - i, F_QUO);
        i = e + 1;
        continue;
      }
    }
    if (c == '\\') {
      if (i + 1 >= n) {
        xaddc(x, '\\', dq ? F_QUO : F_LIT);
        i++;
        continue;
      }
      char d = t[i + 1];
      if ((mode & M_HEREDOC) && !inner) {
        if (d == '$' || d == '`' || d == '\\' || (d == '}' && (mode & M_DQWORD)))
          xaddc(x, d, F_QUO);
        else if (d == '\n') {
        } else {
          xaddc(x, '\\', F_QUO);
          xaddc(x, d, F_QUO);
        }
      } else if (dq && !inner) {
        if (d == '$' || d == '`' || d == '"' || d == '\\' || (d == '}' && (mode & M_DQWORD)))
          xaddc(x, d, F_QUO);
        else if (d == '\n') {
        } else {
          xaddc(x, '\\', F_QUO);
          xaddc(x, d, F_QUO);
        }
        x->other = true;
      } else {
        if (d != '\n') xaddc(x, d, F_QUO);
        x->other |= inner;
      }
      i += 2;
      continue;
    }
    if (c == '"' && (mode & M_DQWORD)) {
      inner = !inner && (dq || (mode & M_HEREDOC));
      i++;
      continue;
    }
    if (c == '\'' && !dq && !(mode & M_HEREDOC)) {
      size_t e = i + 1;
      while (e < n && t[e] != '\'') e++;
      xaddc(x, 0, F_NUL);
      xadd(x, t + i + 1, e - i - 1, F_QUO);
      i = e + 1;
      continue;
    }
    if (c == '"' && !dq && !(mode & M_HEREDOC)) {
      size_t e = skip_to(t, i + 1, n, '"');
      bool sa = x->at_empty, so = x->other;
      x->at_empty = false;
      x->other = false;
      size_t before = x->s->len;
      expand_text(x, t + i + 1, (e > i + 1 ? e - 1 : i + 1) - (i + 1), mode | M_DQ);
      bool drop = x->at_empty && !x->other && x->s->len == before;
      if (!drop) xaddc(x, 0, F_NUL);
      x->at_empty = sa;
      x->other = so;
      i = e;
      continue;
    }
    if (c == '`') {
      size_t e = i + 1;
      GString *cmd = g_string_new(NULL);
      while (e < n && t[e] != '`') {
        if (t[e] == '\\' && e + 1 < n &&
            (t[e + 1] == '$' || t[e + 1] == '`' || t[e + 1] == '\\' || (dq && t[e + 1] == '"'))) {
          e++;
        }
        g_string_append_c(cmd, t[e]);
        e++;
      }
      do_subst(x, cmd->str, mode, true);
      g_string_free(cmd, TRUE);
      i = e + 1;
      continue;
    }
    if (c == '$' && i + 1 < n) {
      char d = t[i + 1];
      /* bash decodes $'…' in the word of "${v-word}" too, outside its inner "…" */
      bool word_ansi = dq && (mode & M_DQWORD) && !inner;
      if (d == '\'' && (!dq || word_ansi) && !(mode & M_HEREDOC)) {
        size_t used;
        char *s = box_ansi_c(t + i + 2, n - i - 2, &used);
        xaddc(x, 0, F_NUL);
        xadd(x, s, strlen(s), F_QUO);
        g_free(s);
        i += 2 + used + 1;
        continue;
      }
      if (d == '"' && !dq && !(mode & M_HEREDOC)) {
        i++;
        continue;
      }
      if (d == '{') {
        size_t e = dq && (x->sh->opts & O_INERT_POSIX) ? skip_brace_posix_dq(t, i + 2, n)
                                                       : skip_to(t, i + 2, n, '}');
        if (!closed_at(t, i + 2, e, '}')) { return bad_substitution(x, t + i, n - i); }
        if (!param_brace(x, t + i + 2, e - i - 3, mode)) {
          if (!x->failed) xfail(x, 1);
          return false;
        }
        i = e;
        continue;
      }
      if (d == '(') {
        if (i + 2 < n && t[i + 2] == '(') {
          /* $(( … )) if it closes with "))" */
          size_t e = i + 3;
          int depth = 0;
          bool ok = false;
          while (e < n) {
            if (t[e] == '(')
              depth++;
            else if (t[e] == ')') {
              if (depth == 0) {
                ok = e + 1 < n && t[e + 1] == ')';
                break;
              }
              depth--;
            }
            e++;
          }
          if (ok) {
            do_arith(x, t + i + 3, e - i - 3, mode);
            i = e + 2;
            continue;
          }
        }
        size_t e = subst_end(x->sh, t, i, n);
        if (!closed_at(t, i + 2, e, ')')) { return bad_substitution(x, t + i, n - i); }
        char *cmd = g_strndup(t + i + 2, e - i - 3);
        do_subst(x, cmd, mode, false);
        g_free(cmd);
        i = e;
        continue;
      }
      if (d == '[' && !(mode & M_ARITH)) {
        /* $[expr], bash's old spelling of $((expr)) */
        size_t e = bracket_end(t, i + 2, n);
        if (e < n) {
          do_arith(x, t + i + 2, e - i - 2, mode);
          i = e + 1;
          continue;
        }
      }
      if (d == '_' || g_ascii_isalpha(d)) {
        size_t e = i + 1;
        while (e < n && (t[e] == '_' || g_ascii_isalnum(t[e]))) e++;
        char name[256];
        size_t ln = MIN(e - i - 1, sizeof name - 1);
        memcpy(name, t + i + 1, ln);
        name[ln] = 0;
        if (is_nameref(x->sh, name)) {
          /* a nameref to A[@] is every element, as "${A[@]}" */
          Vals v;
          get_vals(x, name, NULL, &v);
          bool unbound = !x->failed && !v.set && !v.is_list && (x->sh->opts & O_NOUNSET);
          if (unbound) box_sh_error(x->sh, "%s: unbound variable", name);
          if (!x->failed && !unbound) emit_vals(x, &v, mode);
          g_ptr_array_free(v.list, TRUE);
          if (unbound) xfail(x, 127);
          if (x->failed) return false;
          i = e;
          continue;
        }
        const char *v = box_var_get(x->sh, name);
        if (!v && (x->sh->opts & O_NOUNSET)) {
          box_sh_error(x->sh, "%s: unbound variable", name);
          xfail(x, 127);
          return false;
        }
        if (v) xadd(x, v, strlen(v), dq ? F_QUO : F_EXP);
        if (dq) x->other = true;
        i = e;
        continue;
      }
      if (g_ascii_isdigit(d) || strchr("@*#?$!-", d)) {
        char name[2] = { d, 0 };
        Vals v;
        get_vals(x, name, NULL, &v);
        if (!v.set && (x->sh->opts & O_NOUNSET) && d != '@' && d != '*' && d != '!') {
          box_sh_error(x->sh, "$%s: unbound variable", name);
          g_ptr_array_free(v.list, TRUE);
          xfail(x, 127);
          return false;
        }
        if (!v.set && (x->sh->opts & O_NOUNSET) && d == '!') {
          box_sh_error(x->sh, "$!: unbound variable");
          g_ptr_array_free(v.list, TRUE);
          xfail(x, 127);
          return false;
        }
        emit_vals(x, &v, mode);
        g_ptr_array_free(v.list, TRUE);
        i += 2;
        continue;
      }
    }
    if ((c == '<' || c == '>') && i + 1 < n && t[i + 1] == '(' && !dq &&
        !(mode & (M_HEREDOC | M_ARITH))) {
      size_t e = skip_to(t, i + 2, n, ')');
      if (!closed_at(t, i + 2, e, ')')) { return bad_substitution(x, t + i, n - i); }
      char *cmd = g_strndup(t + i + 2, e - i - 3);
      do_procsubst(x, cmd, c == '>');
      g_free(cmd);
      i = e;
      continue;
    }
    if ((mode & M_ASSIGN) && !dq &&
        (c == ':' || (c == '=' && (mode & M_ASSIGN_WORD) && i > 0 && !memchr(t, '=', i))) &&
        i + 1 < n && t[i + 1] == '~') {
      xaddc(x, c, F_LIT);
      i++;
      if (!tilde(x, t, n, &i, mode)) {
        xaddc(x, '~', F_LIT);
        i++;
      }
      continue;
    }
    if (mode & M_ARITH) {
      if (c == '[' && i > 0 && (t[i - 1] == '_' || g_ascii_isalnum(t[i - 1])))
        sub_depth++;
      else if (c == ']' && sub_depth > 0)
        sub_depth--;
    }
    xaddc(x, c, dq || (mode & M_HEREDOC) ? F_QUO : F_LIT);
    if (dq) x->other = true;
    i++;
  }
  if (sub_mark != SIZE_MAX) escape_subscript_result(x, sub_mark);
  return !x->failed;
}

/* ---- brace expansion --------------------------------------------------------------------- */

/* At a backslash, a quote or a ${…} / $(…) (and `…` when backquote): moves *i to the span's
 * last byte, so braces inside it are not read as brace expansion.  False elsewhere. */
static bool brace_skip(const char *t, size_t *i, size_t n, bool backquote)
{
  char c = t[*i];
  if (c == '\\') {
    ++*i;
  } else if (c == '\'') {
    while (++*i < n && t[*i] != '\'') {}
  } else if (c == '"' || (backquote && c == '`')) {
    *i = skip_to(t, *i + 1, n, c) - 1;
  } else if (c == '$' && *i + 1 < n && (t[*i + 1] == '{' || t[*i + 1] == '(')) {
    *i = skip_to(t, *i + 2, n, t[*i + 1] == '{' ? '}' : ')') - 1;
  } else {
    return false;
  }
  return true;
}

static bool brace_expand(const char *t, size_t from, GPtrArray *out, int depth, size_t *budget);

/* {A..Z[..STEP]} into items: 1, or 0 when body is no sequence, or -1 when
 * its words alone would take more than budget bytes (counted as
 * brace_add counts them). */
static int seq_expand(const char *body, size_t n, GPtrArray *items, size_t budget)
{
  char *b = g_strndup(body, n);
  char **parts = g_strsplit(b, "..", 4);
  guint np = g_strv_length(parts);
  int ok = 0;
  if (np == 2 || np == 3) {
    char *e1, *e2, *e3 = NULL;
    long a = strtol(parts[0], &e1, 10), z = strtol(parts[1], &e2, 10), step = 1;
    bool num = *parts[0] && *parts[1] && !*e1 && !*e2;
    if (np == 3) {
      step = strtol(parts[2], &e3, 10);
      if (!*parts[2] || *e3) num = false, np = 0;
    }
    if (step == 0) step = 1;
    if (step < 0) step = step == LONG_MIN ? LONG_MAX : -step;
    if (num) {
      int width = 0;
      const char *p0 = parts[0][0] == '-' ? parts[0] + 1 : parts[0];
      const char *p1 = parts[1][0] == '-' ? parts[1] + 1 : parts[1];
      if ((p0[0] == '0' && p0[1]) || (p1[0] == '0' && p1[1]))
        width = (int)MAX(strlen(parts[0]), strlen(parts[1]));
      /* bash leaves a sequence of INT_MAX words or more as it is */
      uint64_t span = a <= z ? (uint64_t)z - (uint64_t)a : (uint64_t)a - (uint64_t)z;
      if (span / (uint64_t)step + 1 >= INT_MAX) {
        g_strfreev(parts);
        g_free(b);
        return 0;
      }
      /* each word takes at least a digit, its NUL and its pointer: a
       * sequence past the bound by its count alone is refused before
       * any word is made */
      if ((span / (uint64_t)step + 1) * (2 + sizeof(char *)) > budget) {
        g_strfreev(parts);
        g_free(b);
        return -1;
      }
      ok = 1;
      size_t used = 0;
      for (long v = a; a <= z ? v <= z : v >= z;) {
        char *w = width ? g_strdup_printf("%0*ld", width, v) : g_strdup_printf("%ld", v);
        g_ptr_array_add(items, w);
        used += strlen(w) + 1 + sizeof(char *);
        if (used > budget) {
          ok = -1;
          break;
        }
        if (__builtin_add_overflow(v, a <= z ? step : -step, &v)) break;
      }
    } else if (np && strlen(parts[0]) == 1 && strlen(parts[1]) == 1 &&
               g_ascii_isalpha(parts[0][0]) && g_ascii_isalpha(parts[1][0])) {
      char ca = parts[0][0], cz = parts[1][0];
      for (int v = ca; ca <= cz ? v <= cz : v >= cz; v += ca <= cz ? (int)step : -(int)step)
        g_ptr_array_add(items, g_strdup_printf("%c", v));
      ok = 1;
    }
  }
  g_strfreev(parts);
  g_free(b);
  return ok;
}

/* What one word's brace expansion may make: the words multiply
 * (`{1..100000}{1..100000}`, twenty `{a,b}`), so their bytes are counted
 * and a word that would make more is an error, not hours of work and all
 * the memory there is.  Bash has no bound; this one leaves room for twice
 * `{1..10000000..3}` (3.3 million words, 57 MB as counted here, about
 * 260 MB to expand and print), which bash answers. */
#define BRACE_MAX_BYTES (128 * 1024 * 1024)

static bool brace_add(GPtrArray *out, const char *t, size_t n, size_t *budget)
{
  if (n + 1 + sizeof(char *) > *budget) return false;
  *budget -= n + 1 + sizeof(char *);
  g_ptr_array_add(out, g_strndup(t, n));
  return true;
}

/* The braces of t from `from` on: before it lies a prefix already read,
 * which a word made from t only copies (reading it again for every word
 * made cost the square of its length). */
static bool brace_expand(const char *t, size_t from, GPtrArray *out, int depth, size_t *budget)
{
  size_t n = strlen(t);
  if (depth > 20) return brace_add(out, t, n, budget);
  for (size_t i = from; i < n; i++) {
    if (brace_skip(t, &i, n, true)) continue;
    if (t[i] != '{') continue;
    /* The close, as bash finds it: the first `}` outside inner braces
     * after a comma or a `..` (not right before a `}`) outside them, so
     * `{a}b,c}` is one expression and `{a{b,c}}` only its inner one. */
    GArray *commas = g_array_new(FALSE, FALSE, sizeof(size_t));
    int d = 0, seps = 0;
    size_t j = i + 1, close = 0;
    for (; j < n; j++) {
      if (brace_skip(t, &j, n, false)) continue;
      char e = t[j];
      if (e == '{')
        d++;
      else if (e == '}' && d == 0 && seps) {
        close = j;
        break;
      } else if (e == '}' && d) {
        d--;
      } else if (e == ',' && d == 0) {
        g_array_append_val(commas, j);
        seps++;
      } else if (e == '.' && d == 0 && j + 2 < n && t[j + 1] == '.' && t[j + 2] != '}') {
        seps++;
      }
    }
    if (!close) {
      g_array_free(commas, TRUE);
      continue;
    }
    /* A comma anywhere in it (inner braces, quotes) makes it a list, of
     * one item when none is outside them: `{1..{3,5}}` is 1..3 1..5. */
    bool list = commas->len > 0;
    for (size_t k = i + 1; k < close && !list; k++) {
      if (t[k] == '\\')
        k++;
      else
        list = t[k] == ',';
    }
    GPtrArray *items = g_ptr_array_new_with_free_func(g_free);
    if (list) {
      size_t s = i + 1;
      for (guint k = 0; k <= commas->len; k++) {
        size_t e = k < commas->len ? g_array_index(commas, size_t, k) : close;
        g_ptr_array_add(items, g_strndup(t + s, e - s));
        s = e + 1;
      }
    } else {
      int seq = seq_expand(t + i + 1, close - i - 1, items, *budget);
      if (seq <= 0) {
        g_ptr_array_free(items, TRUE);
        g_array_free(commas, TRUE);
        if (seq < 0) return false;
        i = close; /* no sequence: its text stays, the rest is read on */
        continue;
      }
    }
    g_array_free(commas, TRUE);
    bool ok = true;
    for (guint k = 0; ok && k < items->len; k++) {
      char *w = g_strdup_printf("%.*s%s%s", (int)i, t, (char *)items->pdata[k], t + close + 1);
      ok = brace_expand(w, i, out, depth + 1, budget);
      g_free(w);
    }
    g_ptr_array_free(items, TRUE);
    return ok;
  }
  return brace_add(out, t, n, budget);
}

/* ---- globbing ------------------------------------------------------------------------------- */

static bool has_magic(const char *pat, bool ext)
{
  for (const char *p = pat; *p; p++) {
    if (*p == '\\' && p[1]) {
      p++;
      continue;
    }
    if (*p == '*' || *p == '?') return true;
    if (*p == '[') {
      /* a bracket expression needs its closing "]" */
      const char *q = p + 1;
      if (*q == '!' || *q == '^') q++;
      if (*q == ']') q++;
      while (*q && *q != ']' && *q != '/') q++;
      if (*q == ']') return true;
    }
    if (ext && strchr("@!+", *p) && p[1] == '(') return true;
  }
  return false;
}

static char *unescape(const char *pat)
{
  GString *g = g_string_new(NULL);
  for (const char *p = pat; *p; p++) {
    if (*p == '\\' && p[1]) p++;
    g_string_append_c(g, *p);
  }
  return g_string_free(g, FALSE);
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- GLOBIGNORE ---- */

/* GLOBIGNORE's patterns, split at the colons outside a bracket
 * expression, an extglob group and after no backslash, as bash splits
 * them; an empty field is a pattern too (it matches no name). */
static GPtrArray *globignore_split(const char *v)
{
  GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
  for (const char *p = v; *p;) {
    const char *q = p;
    int depth = 0;
    while (*q && (*q != ':' || depth)) {
      if (*q == '\\' && q[1]) {
        q += 2;
      } else if (*q == '[') {
        const char *r = q + 1;
        if (*r == '!' || *r == '^') r++;
        if (*r == ']') r++;
        while (*r && *r != ']') {
          const char *e = r[0] == '[' && r[1] == ':' ? strstr(r + 2, ":]") : NULL;
          r = e ? e + 2 : r + 1;
        }
        q = *r ? r + 1 : q + 1;
      } else if (strchr("?*+@!", *q) && q[1] == '(') {
        depth++;
        q += 2;
      } else {
        if (*q == ')' && depth) depth--;
        q++;
      }
    }
    g_ptr_array_add(a, g_strndup(p, (size_t)(q - p)));
    p = *q ? q + 1 : q;
  }
  return a;
}

void box_globignore_free(Shell *sh)
{
  g_clear_pointer(&sh->globignore_seen, g_free);
  g_clear_pointer(&sh->globignore_pats, g_ptr_array_unref);
}

/* Reads GLOBIGNORE again when it was assigned or unset, or changed since
 * the last glob (a local's end): as bash's assignment does, patterns turn
 * dotglob on, and unsetting it turns dotglob off (an empty value leaves
 * dotglob as it is).  One lookup when it has not changed. */
void box_globignore_sync(Shell *sh, bool assigned)
{
  const char *v = box_var_get(sh, "GLOBIGNORE");
  if (!assigned && g_strcmp0(v, sh->globignore_seen) == 0) return;
  box_globignore_free(sh);
  if (!v) {
    sh->shopts &= ~SH_DOTGLOB;
  } else {
    sh->globignore_seen = g_strdup(v);
    sh->globignore_pats = globignore_split(v);
    if (sh->globignore_pats->len) sh->shopts |= SH_DOTGLOB;
  }
  box_optvars_refresh(sh);
}

/* Drops from a glob's matches those GLOBIGNORE's patterns match (the
 * whole path, `*` matching no slash), and `.` and `..` as the last
 * component, as bash does whenever GLOBIGNORE has a pattern. */
static void globignore_filter(Shell *sh, GPtrArray *res)
{
  GPtrArray *pats = sh->globignore_pats;
  int flags = FNM_PATHNAME | (sh->shopts & SH_EXTGLOB ? FNM_EXTMATCH : 0) |
              (sh->shopts & SH_NOCASEGLOB ? FNM_CASEFOLD : 0);
  guint k = 0;
  for (guint i = 0; i < res->len; i++) {
    char *name = res->pdata[i];
    res->pdata[i] = NULL; /* k <= i: the tail set_size drops is all NULL */
    const char *n = strrchr(name, '/');
    n = !n || !n[1] ? name : n + 1;
    bool drop = strcmp(n, ".") == 0 || strcmp(n, "..") == 0;
    for (guint j = 0; j < pats->len && !drop; j++) {
      const char *pat = pats->pdata[j];
      /* bash's matcher lets a `*` that ends the pattern take slashes too
       * (GLOBIGNORE='*' drops ../x): what FNM_LEADING_DIR gives there */
      size_t len = strlen(pat), bs = 0;
      while (bs + 1 < len && pat[len - 2 - bs] == '\\') bs++;
      int lead = len && pat[len - 1] == '*' && bs % 2 == 0 ? FNM_LEADING_DIR : 0;
      drop = !box_pattern_too_deep(pat) && box_fnmatch(pat, name, flags | lead) == 0;
    }
    if (drop)
      g_free(name);
    else
      res->pdata[k++] = name;
  }
  g_ptr_array_set_size(res, k);
}

/* The matches of comps[idx…n) under base, each component followed by the
 * slashes the pattern had after it (seps: two slashes after d give d//x,
 * as bash).
 * deeper: a level below the one a last `**` began at, which adds no match
 * of zero directories of its own. */
static void glob_rec(Shell *sh, const char *base, char **comps, char **seps, int idx, int n,
                     bool deeper, GPtrArray *res)
{
  if (idx == n) {
    g_ptr_array_add(res, g_strdup(base));
    return;
  }
  const char *comp = comps[idx];
  bool last = idx == n - 1;
  bool ext = (sh->shopts & SH_EXTGLOB) != 0;
  if (!has_magic(comp, ext)) {
    char *lit = unescape(comp);
    char *nb = g_strconcat(base, lit, last ? "" : seps[idx], NULL);
    g_free(lit);
    if (last) {
      if (!*comp) {
        /* a trailing slash: base if it is a directory; never the empty
         * base of a globstar that matched no level */
        DIR *d = *base ? opendir(base) : NULL;
        if (d) {
          closedir(d);
          g_ptr_array_add(res, g_strdup(base));
        }
      } else if (faccessat(AT_FDCWD, nb, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
        g_ptr_array_add(res, g_strdup(nb));
      }
    } else {
      glob_rec(sh, nb, comps, seps, idx + 1, n, false, res);
    }
    g_free(nb);
    return;
  }
  bool star2 = (sh->shopts & SH_GLOBSTAR) && strcmp(comp, "**") == 0;
  if (box_pattern_too_deep(comp)) return; /* it would match nothing, but not end */
  DIR *d = opendir(*base ? base : ".");
  if (!d) return;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GArray *types = g_array_new(FALSE, FALSE, sizeof(unsigned char));
  struct dirent *e;
  /* `.` and `..` are names for a pattern that begins with a dot, under
   * shopt -u globskipdots */
  bool dots = !star2 && (comp[0] == '.' || (comp[0] == '\\' && comp[1] == '.')) &&
              !box_shopt_globskipdots(sh);
  while ((e = readdir(d))) {
    if (!dots && (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)) continue;
    g_ptr_array_add(names, g_strdup(e->d_name));
    g_array_append_val(types, e->d_type);
  }
  closedir(d);
  int flags = (ext ? FNM_EXTMATCH : 0) | FNM_PERIOD;
  if (sh->shopts & SH_DOTGLOB) flags &= ~FNM_PERIOD;
  if (sh->shopts & SH_NOCASEGLOB) flags |= FNM_CASEFOLD;
  if (star2 && !(last && (deeper || !*base)))
    glob_rec(sh, base, comps, seps, idx + 1, n, false, res); /* zero directories */
  for (guint i = 0; i < names->len; i++) {
    const char *name = names->pdata[i];
    unsigned char ty = g_array_index(types, unsigned char, i);
    if (name[0] == '.' && comp[0] != '.' && !(sh->shopts & SH_DOTGLOB)) continue;
    if (star2) {
      if (name[0] == '.' && !(sh->shopts & SH_DOTGLOB)) continue;
      char *nb = g_strconcat(base, name, last ? "/" : seps[idx], NULL);
      bool isdir = ty == DT_DIR;
      if (ty == DT_UNKNOWN) {
        DIR *t = opendir(nb);
        if (t) {
          isdir = true;
          closedir(t);
        }
      }
      if (last) {
        char *p = g_strconcat(base, name, NULL);
        g_ptr_array_add(res, p);
      }
      if (isdir) {
        /* one more level, same ** component */
        glob_rec(sh, nb, comps, seps, idx, n, true, res);
      }
      g_free(nb);
      continue;
    }
    if (box_fnmatch(comp, name, flags) != 0) continue;
    if (last) {
      g_ptr_array_add(res, g_strconcat(base, name, NULL));
    } else if (ty == DT_DIR || ty == DT_LNK || ty == DT_UNKNOWN) {
      char *nb = g_strconcat(base, name, seps[idx], NULL);
      glob_rec(sh, nb, comps, seps, idx + 1, n, false, res);
      g_free(nb);
    }
  }
  g_ptr_array_free(names, TRUE);
  g_array_free(types, TRUE);
}

/* Expands a pattern; returns matches sorted (maybe none). */
static GPtrArray *glob_pattern(Shell *sh, const char *pat)
{
  box_globignore_sync(sh, false);
  GPtrArray *res = g_ptr_array_new_with_free_func(g_free);
  const char *p = pat;
  size_t lead = strspn(p, "/");
  char *base = g_strndup(p, lead); /* two leading slashes stay two */
  p += lead;
  /* the components, each with the run of slashes after it; a trailing
   * run is one slash and an empty last component */
  GPtrArray *comps = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *seps = g_ptr_array_new_with_free_func(g_free);
  for (;;) {
    size_t c = strcspn(p, "/"), s = strspn(p + c, "/");
    g_ptr_array_add(comps, g_strndup(p, c));
    if (!s) break;
    g_ptr_array_add(seps, g_strndup(p + c, s));
    p += c + s;
  }
  int k = (int)comps->len;
  if (k > 1 && !*(char *)comps->pdata[k - 1]) {
    g_free(seps->pdata[k - 2]);
    seps->pdata[k - 2] = g_strdup("/");
  }
  glob_rec(sh, base, (char **)comps->pdata, (char **)seps->pdata, 0, k, false, res);
  g_ptr_array_free(comps, TRUE);
  g_ptr_array_free(seps, TRUE);
  g_free(base);
  g_ptr_array_sort(res, cmp_str);
  /* ** may produce duplicates */
  for (guint i = 1; i < res->len;)
    if (strcmp(res->pdata[i], res->pdata[i - 1]) == 0)
      g_ptr_array_remove_index(res, i);
    else
      i++;
  if (sh->globignore_pats && sh->globignore_pats->len) globignore_filter(sh, res);
  return res;
}

/* ---- fields ------------------------------------------------------------------------------------ */

static bool finish_field(X *x, GString *f, GString *pat, bool magic, bool keep, GPtrArray *out)
{
  Shell *sh = x->sh;
  if (!f->len && !keep) return true;
  if (magic && !(sh->opts & O_NOGLOB) && has_magic(pat->str, (sh->shopts & SH_EXTGLOB) != 0)) {
    GPtrArray *m = glob_pattern(sh, pat->str);
    if (m->len) {
      for (guint i = 0; i < m->len; i++) g_ptr_array_add(out, g_strdup(m->pdata[i]));
      g_ptr_array_free(m, TRUE);
      return true;
    }
    g_ptr_array_free(m, TRUE);
    if (sh->shopts & SH_FAILGLOB) {
      box_sh_error(sh, "no match: %s", f->str);
      sh->failglob_hit = true;
      if (!box_errexit_ends(sh)) sh->discard = true; /* the line goes, not the shell */
      xfail(x, 1);
      return false;
    }
    if (sh->shopts & SH_NULLGLOB) return true;
  }
  g_ptr_array_add(out, g_strndup(f->str, f->len));
  return true;
}

static void split_fields(X *x, GPtrArray *out, bool split)
{
  const char *ifsv = split ? ifs(x->sh) : "";
  GString *f = g_string_new(NULL), *pat = g_string_new(NULL);
  bool keep = false, magic = false, ws_pending = false;
  for (size_t i = 0; i < x->s->len; i++) {
    char c = x->s->str[i];
    guint8 fl = x->q->data[i];
    if (fl == F_NUL) {
      keep = true;
      continue;
    }
    if (fl == F_BRK) {
      finish_field(x, f, pat, magic, keep || (f->len > 0), out);
      g_string_truncate(f, 0);
      g_string_truncate(pat, 0);
      keep = magic = false;
      ws_pending = false;
      continue;
    }
    size_t il = fl == F_EXP && *ifsv ? box_ifs_len(ifsv, x->s->str + i, x->s->len - i) : 0;
    for (size_t k = 1; k < il; k++)
      if (x->q->data[i + k] != F_EXP) il = 0;
    if (il) {
      i += il - 1;
      bool white = c == ' ' || c == '\t' || c == '\n';
      if (white) {
        if (f->len || keep) {
          finish_field(x, f, pat, magic, true, out);
          g_string_truncate(f, 0);
          g_string_truncate(pat, 0);
          keep = magic = false;
          ws_pending = true;
        }
        continue;
      }
      if (!(ws_pending && !f->len && !keep) || true) {
        if (!(ws_pending && !f->len && !keep)) finish_field(x, f, pat, magic, true, out);
      }
      g_string_truncate(f, 0);
      g_string_truncate(pat, 0);
      keep = magic = false;
      ws_pending = false;
      /* absorb following IFS whitespace */
      while (i + 1 < x->s->len && x->q->data[i + 1] == F_EXP && strchr(" \t\n", x->s->str[i + 1]) &&
             strchr(ifsv, x->s->str[i + 1]))
        i++;
      continue;
    }
    ws_pending = false;
    g_string_append_c(f, c);
    if (fl == F_QUO) {
      if (strchr("*?[]\\!@+()|", c)) g_string_append_c(pat, '\\');
      g_string_append_c(pat, c);
    } else {
      if (c == '*' || c == '?' || c == '[') magic = true;
      if (c == '\\') g_string_append_c(pat, '\\');
      g_string_append_c(pat, c);
      if (strchr("@!+", c) && i + 1 < x->s->len && x->s->str[i + 1] == '(' &&
          (x->sh->shopts & SH_EXTGLOB))
        magic = true;
    }
  }
  finish_field(x, f, pat, magic, keep, out);
  g_string_free(f, TRUE);
  g_string_free(pat, TRUE);
}

/* $((expr)) with nothing to expand inside: 1 and the value in *out, 0
 * when t is not one, -1 after an arithmetic error. */
static int fast_arith(Shell *sh, const char *t, char **out)
{
  size_t l = strlen(t);
  if (l < 5 || t[l - 1] != ')' || t[l - 2] != ')') return 0;
  char buf[256];
  if (l - 5 >= sizeof buf) return 0;
  int depth = 0;
  for (size_t i = 3; i < l - 2; i++) {
    char c = t[i];
    if (c == '(')
      depth++;
    else if (c == ')' && --depth < 0)
      return 0;
    else if (c == '$' || c == '`' || c == '\'' || c == '"' || c == '\\')
      return 0;
    buf[i - 3] = c;
  }
  if (depth) return 0;
  buf[l - 5] = 0;
  int64_t v;
  sh->arith_unbound = false;
  if (!box_arith(sh, buf, &v)) {
    if (!sh->arith_unbound) sh->discard = true; /* as do_arith */
    return -1;
  }
  char num[24];
  *out = g_strdup(box_i64_str(v, num));
  return 1;
}

/* $name alone, or $((expr)) with nothing to expand inside: the common
 * words of loops, done without the flagged buffer. */
/* The NAME of a word that is exactly "$NAME" (quoted: one field, as is),
 * copied into buf; NULL for any other word. */
static const char *quoted_name(const char *t, char *buf, size_t size)
{
  if (t[0] != '"' || t[1] != '$' || !(t[2] == '_' || g_ascii_isalpha(t[2]))) return NULL;
  size_t i = 3;
  while (t[i] == '_' || g_ascii_isalnum(t[i])) i++;
  if (t[i] != '"' || t[i + 1] || i - 2 >= size) return NULL;
  memcpy(buf, t + 2, i - 2);
  buf[i - 2] = 0;
  return buf;
}

static int fast_word(Shell *sh, const char *t, GPtrArray *out)
{
  if (t[0] == '"') {
    char name[128];
    /* a nameref may lead to A[@]: the word reader's */
    if (!quoted_name(t, name, sizeof name) || is_nameref(sh, name)) return 0;
    const char *v = box_var_get(sh, name);
    if (!v && (sh->opts & O_NOUNSET)) return 0;
    g_ptr_array_add(out, g_strdup(v ? v : ""));
    return 1;
  }
  if (t[0] != '$') return 0;
  if (t[1] == '(' && t[2] == '(') {
    char *r;
    int f = fast_arith(sh, t, &r);
    if (f > 0) g_ptr_array_add(out, r);
    return f;
  }
  size_t i = 1;
  if (!(t[1] == '_' || g_ascii_isalpha(t[1]))) return 0;
  while (t[i] == '_' || g_ascii_isalnum(t[i])) i++;
  if (t[i] || is_nameref(sh, t + 1)) return 0;
  const char *v = box_var_get(sh, t + 1);
  if (!v) return (sh->opts & O_NOUNSET) ? 0 : 2;
  const char *ifsv = box_var_get(sh, "IFS");
  if (!ifsv) ifsv = " \t\n";
  if (!*v) return 2; /* an unquoted empty value is no field */
  if (strpbrk(v, ifsv) || strpbrk(v, "*?[")) return 0;
  if ((sh->shopts & SH_EXTGLOB) && strchr(v, '(')) return 0; /* `@(a)` globs */
  g_ptr_array_add(out, g_strdup(v));
  return 1;
}

bool box_expand_words(Shell *sh, Word **words, size_t n, GPtrArray *out, int *status)
{
  for (size_t k = 0; k < n; k++) {
    Word *w = words[k];
    if (w->flags & W_PLAIN) {
      g_ptr_array_add(out, g_strdup(w->text));
      continue;
    }
    if (w->flags & W_ASSIGN) {
      /* NAME=(…) after declare/local/…: the builtin expands each element
       * itself, as an assignment does, so it gets the text as written */
      const char *eq = strchr(w->text, '=');
      size_t tl = strlen(w->text);
      if (eq && eq[1] == '(' && tl > 2 && w->text[tl - 1] == ')' &&
          !memchr(w->text, '[', (size_t)(eq - w->text))) {
        g_ptr_array_add(out, g_strdup(w->text));
        continue;
      }
    }
    int f = fast_word(sh, w->text, out);
    if (f > 0) continue;
    if (f < 0) {
      int st = arith_fail_status(sh);
      if (status) *status = st;
      return false;
    }
    GPtrArray *texts = NULL;
    if (strchr(w->text, '{') && (sh->opts & O_BRACE)) {
      texts = g_ptr_array_new_with_free_func(g_free);
      size_t budget = BRACE_MAX_BYTES;
      if (!brace_expand(w->text, 0, texts, 0, &budget)) {
        box_sh_error(sh, "brace expansion: the words would take more than %d bytes",
                     BRACE_MAX_BYTES);
        g_ptr_array_free(texts, TRUE);
        if (status) *status = 1;
        return false;
      }
    }
    guint nt = texts ? texts->len : 1;
    for (guint j = 0; j < nt; j++) {
      const char *t = texts ? texts->pdata[j] : w->text;
      /* bash drops a word the braces left with no text at all ({X,,Y,}
       * gives X Y), as an unquoted empty expansion is dropped */
      if (texts && !*t) continue;
      if (texts && !strpbrk(t, "$'\"\\`*?[~(")) {
        /* nothing left to expand: the word moves as it is, which halves
         * what a brace expansion of millions of words holds */
        g_ptr_array_add(out, texts->pdata[j]);
        texts->pdata[j] = NULL;
        continue;
      }
      X x;
      xinit(&x, sh);
      expand_text(&x, t, strlen(t), (w->flags & W_ASSIGN) ? M_ASSIGN | M_ASSIGN_WORD : 0);
      if (!x.failed) split_fields(&x, out, true);
      if (x.failed) {
        if (status) *status = x.status;
        xfree(&x);
        if (texts) g_ptr_array_free(texts, TRUE);
        return false;
      }
      xfree(&x);
    }
    if (texts) g_ptr_array_free(texts, TRUE);
  }
  return true;
}

static char *flatten(X *x)
{
  size_t n = x->s->len;
  char *r = g_malloc(n + 1), *o = r;
  const char *s = x->s->str;
  const guint8 *q = x->q->data;
  for (size_t i = 0; i < n; i++) {
    guint8 f = q[i];
    if (f == F_NUL) continue;
    *o++ = f == F_BRK ? ' ' : s[i];
  }
  *o = 0;
  return r;
}

/* Expands text to one string, unsplit.  With quoted_special, a quoted character of it gets a
 * backslash (so a pattern or regex matches it literally), and with double_backslash so does an
 * unquoted backslash. */
static char *expand_flat(Shell *sh, const char *text, int mode, int *status,
                         const char *quoted_special, bool double_backslash)
{
  X x;
  xinit(&x, sh);
  expand_text(&x, text, strlen(text), mode);
  if (x.failed) {
    if (status) *status = x.status;
    xfree(&x);
    return NULL;
  }
  if (!quoted_special) {
    char *r = flatten(&x);
    xfree(&x);
    return r;
  }
  GString *g = g_string_new(NULL);
  bool escaping = false; /* the backslash written last escapes the next character */
  for (size_t i = 0; i < x.s->len; i++) {
    guint8 f = x.q->data[i];
    char c = x.s->str[i];
    if (f == F_NUL) continue;
    if (f == F_BRK) c = ' ';
    /* a backslash an unquoted expansion made escapes, as bash's ([[ $x == $p ]]
     * with p='\*'), but for one left alone at the end, which is itself */
    bool own = f == F_EXP && (escaping || i + 1 < x.s->len);
    bool escape =
      f == F_QUO ? strchr(quoted_special, c) != NULL : double_backslash && c == '\\' && !own;
    if (escape) g_string_append_c(g, '\\');
    g_string_append_c(g, c);
    escaping = !escape && c == '\\' && !escaping;
  }
  xfree(&x);
  return g_string_free(g, FALSE);
}

char *box_expand_str(Shell *sh, const char *text, bool assign, int *status)
{
  if (text[0] == '$' && text[1] == '(' && text[2] == '(') {
    char *r;
    int f = fast_arith(sh, text, &r);
    if (f == 1) return r;
    if (f < 0) {
      int st = arith_fail_status(sh);
      if (status) *status = st;
      return NULL;
    }
  } else if (!strpbrk(text, "$`'\"\\~")) {
    return g_strdup(text);
  } else if (text[0] == '$' || text[0] == '"') {
    /* $NAME and "$NAME": the value as it is (no splitting here) */
    char buf[128];
    const char *name = quoted_name(text, buf, sizeof buf);
    if (!name && text[0] == '$' && (text[1] == '_' || g_ascii_isalpha(text[1]))) {
      size_t i = 2;
      while (text[i] == '_' || g_ascii_isalnum(text[i])) i++;
      if (!text[i]) name = text + 1;
    }
    if (name && !is_nameref(sh, name)) {
      const char *v = box_var_get(sh, name);
      if (v || !(sh->opts & O_NOUNSET)) return g_strdup(v ? v : "");
    }
  }
  return expand_flat(sh, text, M_NOSPLIT | (assign ? M_ASSIGN : 0), status, NULL, false);
}

char *box_expand_subscript(Shell *sh, const char *text, int *status)
{
  if (text[0] != '~') return box_expand_str(sh, text, false, status);
  return expand_flat(sh, text, M_NOSPLIT | M_NOTILDE, status, NULL, false);
}

char *box_expand_decl_word(Shell *sh, const char *text, int *status)
{
  return expand_flat(sh, text, M_NOSPLIT | M_ASSIGN | M_ASSIGN_WORD, status, NULL, false);
}

char *box_expand_arith(Shell *sh, const char *text, int *status)
{
  /* (( )) is $(( )): as inside "…", its double quotes dropped */
  return expand_flat(sh, text, M_NOSPLIT | M_DQ | M_ARITH | M_DQWORD, status, NULL, false);
}

char *box_expand_pattern(Shell *sh, const char *text, int *status)
{
  /* nothing quoted or expanded: every character is the pattern's own */
  if (!strpbrk(text, "$`'\"\\~<>")) return g_strdup(text);
  return expand_flat(sh, text, M_NOSPLIT, status, "*?[]\\!@+()|", true);
}

char *box_expand_regex(Shell *sh, const char *text, int *status)
{
  /* quoted characters match themselves: escape what ERE would read */
  return expand_flat(sh, text, M_NOSPLIT, status, ".[]()*+?{}|^$\\", false);
}

char *box_expand_heredoc(Shell *sh, const char *body, int *status)
{
  return expand_flat(sh, body, M_HEREDOC | M_NOSPLIT, status, NULL, false);
}
