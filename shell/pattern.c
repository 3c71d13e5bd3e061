/* pattern.c — glob patterns over UTF-8 text character by character, as
 * bash's matcher does.  glibc's fnmatch (2.36) also takes a `?` or a
 * bracket for one byte of a multibyte character, so `??` matches "μ" and
 * `???` "日"; box_fnmatch sends non-ASCII text here instead. */
#include <fnmatch.h>
#include <string.h>

#include "shell/shell-private.h"

typedef struct {
  gunichar *p, *s;
  bool fold, ext;
  long budget; /* steps left: a pattern that backtracks without end matches nothing */
} Match;

#define NONE ((size_t)-1)

/* Code points; a byte that starts no valid character stands for itself as
 * a lone surrogate, which no valid UTF-8 decodes to. */
static gunichar *decode(const char *t, size_t *n)
{
  size_t len = strlen(t), k = 0;
  gunichar *u = g_new(gunichar, len + 1);
  for (size_t i = 0; i < len;) {
    gunichar c = g_utf8_get_char_validated(t + i, (gssize)(len - i));
    if (c == (gunichar)-1 || c == (gunichar)-2) {
      u[k++] = 0xDC00 | (guchar)t[i++];
    } else {
      u[k++] = c;
      i += (size_t)(g_utf8_next_char(t + i) - (t + i));
    }
  }
  *n = k;
  return u;
}

static gunichar fold(const Match *m, gunichar c)
{
  return m->fold ? g_unichar_tolower(c) : c;
}

static bool in_class(const char *name, size_t n, gunichar c)
{
#define IS(s) (n == sizeof s - 1 && memcmp(name, s, n) == 0)
  if (IS("alpha")) return g_unichar_isalpha(c);
  if (IS("digit")) return c >= '0' && c <= '9';
  if (IS("alnum")) return g_unichar_isalpha(c) || (c >= '0' && c <= '9');
  if (IS("ascii")) return c < 128;
  if (IS("word")) return g_unichar_isalpha(c) || (c >= '0' && c <= '9') || c == '_';
  if (IS("upper")) return g_unichar_isupper(c);
  if (IS("lower")) return g_unichar_islower(c);
  if (IS("space")) return g_unichar_isspace(c);
  if (IS("blank"))
    return c == ' ' || c == '\t' || (c > 127 && g_unichar_type(c) == G_UNICODE_SPACE_SEPARATOR);
  if (IS("punct")) return g_unichar_ispunct(c);
  if (IS("print")) return g_unichar_isprint(c);
  if (IS("graph")) return g_unichar_isgraph(c);
  if (IS("cntrl")) return g_unichar_iscntrl(c);
  if (IS("xdigit")) return g_ascii_isxdigit(c < 128 ? (char)c : 0);
  return false;
#undef IS
}

/* POSIX's names of the portable characters, as [.name.] takes them. */
static const struct {
  const char *name;
  char c;
} coll_names[] = {
  { "NUL", '\0' },
  { "alert", '\a' },
  { "backspace", '\b' },
  { "tab", '\t' },
  { "newline", '\n' },
  { "vertical-tab", '\v' },
  { "form-feed", '\f' },
  { "carriage-return", '\r' },
  { "space", ' ' },
  { "exclamation-mark", '!' },
  { "quotation-mark", '"' },
  { "number-sign", '#' },
  { "dollar-sign", '$' },
  { "percent-sign", '%' },
  { "ampersand", '&' },
  { "apostrophe", '\'' },
  { "left-parenthesis", '(' },
  { "right-parenthesis", ')' },
  { "asterisk", '*' },
  { "plus-sign", '+' },
  { "comma", ',' },
  { "hyphen", '-' },
  { "hyphen-minus", '-' },
  { "period", '.' },
  { "full-stop", '.' },
  { "slash", '/' },
  { "solidus", '/' },
  { "zero", '0' },
  { "one", '1' },
  { "two", '2' },
  { "three", '3' },
  { "four", '4' },
  { "five", '5' },
  { "six", '6' },
  { "seven", '7' },
  { "eight", '8' },
  { "nine", '9' },
  { "colon", ':' },
  { "semicolon", ';' },
  { "less-than-sign", '<' },
  { "equals-sign", '=' },
  { "greater-than-sign", '>' },
  { "question-mark", '?' },
  { "commercial-at", '@' },
  { "left-square-bracket", '[' },
  { "backslash", '\\' },
  { "reverse-solidus", '\\' },
  { "right-square-bracket", ']' },
  { "circumflex", '^' },
  { "circumflex-accent", '^' },
  { "underscore", '_' },
  { "low-line", '_' },
  { "grave-accent", '`' },
  { "left-brace", '{' },
  { "left-curly-bracket", '{' },
  { "vertical-line", '|' },
  { "right-brace", '}' },
  { "right-curly-bracket", '}' },
  { "tilde", '~' },
  { "DEL", '\177' },
};

/* One element of a bracket at p[q]: a character (escaped or not) or a
 * collating symbol [.x.] (one character or a name above).  Sets *c and
 * *next past it; false for a symbol that names no character, which
 * matches nothing (bash: `[[.yyz.]cde]` still matches "c"). */
static bool bracket_elem(const gunichar *p, size_t q, size_t pe, gunichar *c, size_t *next)
{
  if (p[q] == '[' && q + 1 < pe && p[q + 1] == '.') {
    size_t e = q + 2;
    while (e + 1 < pe && !(p[e] == '.' && p[e + 1] == ']')) e++;
    if (e + 1 < pe) {
      *next = e + 2;
      if (e == q + 3) {
        *c = p[q + 2];
        return true;
      }
      char name[24];
      size_t n = e - (q + 2);
      if (n >= sizeof name) return false;
      for (size_t k = 0; k < n; k++) name[k] = p[q + 2 + k] < 128 ? (char)p[q + 2 + k] : '?';
      name[n] = '\0';
      for (size_t k = 0; k < G_N_ELEMENTS(coll_names); k++)
        if (strcmp(coll_names[k].name, name) == 0) {
          *c = (unsigned char)coll_names[k].c;
          return true;
        }
      return false;
    }
  }
  if (p[q] == '\\' && q + 1 < pe) q++;
  *c = p[q];
  *next = q + 1;
  return true;
}

/* The bracket expression at p[i] ("[…]") against c: 1 or 0 with *end past
 * it, or -1 when it is not one (no closing "]": a plain "["). */
static int bracket(const Match *m, size_t i, size_t pe, gunichar c, size_t *end)
{
  const gunichar *p = m->p;
  size_t q = i + 1;
  bool neg = q < pe && (p[q] == '!' || p[q] == '^');
  if (neg) q++;
  bool hit = false;
  gunichar fc = fold(m, c);
  for (bool first = true;; first = false) {
    if (q >= pe) return -1;
    if (p[q] == ']' && !first) break;
    if (p[q] == '[' && q + 1 < pe && (p[q + 1] == ':' || p[q + 1] == '=')) {
      gunichar kind = p[q + 1];
      size_t e = q + 2;
      while (e + 1 < pe && !(p[e] == kind && p[e + 1] == ']')) e++;
      if (e + 1 < pe) {
        char name[16];
        size_t n = 0;
        for (size_t k = q + 2; k < e && n < sizeof name; k++)
          name[n++] = p[k] < 128 ? (char)p[k] : '?';
        if (kind == ':')
          hit |= in_class(name, n, c); /* bash folds no class: [[:upper:]] never matches "c" */
        else
          hit |= e == q + 3 && fold(m, p[q + 2]) == fc;
        q = e + 2;
        continue;
      }
    }
    gunichar lo, hi;
    bool lo_ok = bracket_elem(p, q, pe, &lo, &q);
    if (q >= pe) return -1;
    if (q + 1 < pe && p[q] == '-' && p[q + 1] != ']') {
      bool hi_ok = bracket_elem(p, q + 1, pe, &hi, &q);
      if (lo_ok && hi_ok) hit |= (lo <= c && c <= hi) || (lo <= fc && fc <= hi);
    } else if (lo_ok) {
      hit |= fold(m, lo) == fc;
    }
  }
  *end = q + 1;
  return hit != neg;
}

/* The ")" closing the group opened at p[open], or NONE. */
static size_t group_end(const Match *m, size_t open, size_t pe)
{
  int depth = 0;
  for (size_t i = open; i < pe; i++) {
    if (m->p[i] == '\\')
      i++;
    else if (m->p[i] == '(')
      depth++;
    else if (m->p[i] == ')' && --depth == 0)
      return i;
  }
  return NONE;
}

static bool match(Match *m, size_t p, size_t pe, size_t s, size_t se);

/* Whether one alternative of the group p[a..close) matches s[s..k) whole. */
static bool any_alt(Match *m, size_t a, size_t close, size_t s, size_t k)
{
  int depth = 0;
  for (size_t i = a, from = a; i <= close; i++) {
    gunichar c = i < close ? m->p[i] : '|';
    if (c == '\\' && i + 1 < close) {
      i++;
    } else if (c == '(') {
      depth++;
    } else if (c == ')') {
      depth--;
    } else if (c == '|' && depth == 0) {
      if (match(m, from, i, s, k)) return true;
      from = i + 1;
    }
  }
  return false;
}

/* An extglob group op(…) at p[a-2], its alternatives up to close, then the
 * rest of the pattern from rest, against s[s..se). */
static bool ext(Match *m, gunichar op, size_t a, size_t close, size_t pe, size_t s, size_t se)
{
  size_t rest = close + 1;
  if ((op == '?' || op == '*') && match(m, rest, pe, s, se)) return true;
  for (size_t k = s; k <= se && m->budget > 0; k++) {
    if (op == '!') {
      if (!any_alt(m, a, close, s, k) && match(m, rest, pe, k, se)) return true;
      continue;
    }
    if (!any_alt(m, a, close, s, k)) continue;
    if (match(m, rest, pe, k, se)) return true;
    /* one more repetition, which must take something */
    if ((op == '+' || op == '*') && k > s && ext(m, '*', a, close, pe, k, se)) return true;
  }
  return false;
}

static bool match(Match *m, size_t p, size_t pe, size_t s, size_t se)
{
  while (p < pe) {
    /* a long text against `*(…)` or many stars recurses once a character */
    if (--m->budget < 0 || box_stack_low()) {
      m->budget = -1;
      return false;
    }
    gunichar c = m->p[p];
    if (m->ext && p + 1 < pe && m->p[p + 1] == '(' &&
        (c == '?' || c == '*' || c == '+' || c == '@' || c == '!')) {
      size_t close = group_end(m, p + 1, pe);
      if (close != NONE) return ext(m, c, p + 2, close, pe, s, se);
      /* a group never closed: bash compares the rest of the pattern with
       * the rest of the text as they are, character for character */
      return pe - p == se - s && memcmp(m->p + p, m->s + s, (pe - p) * sizeof *m->p) == 0;
    }
    if (c == '*') {
      while (p < pe && m->p[p] == '*' && !(m->ext && p + 1 < pe && m->p[p + 1] == '(')) p++;
      if (p == pe) return true;
      for (size_t k = s; k <= se; k++)
        if (match(m, p, pe, k, se)) return true;
      return false;
    }
    if (s >= se) return false;
    if (c == '?') {
      p++, s++;
      continue;
    }
    if (c == '[') {
      size_t end;
      int r = bracket(m, p, pe, m->s[s], &end);
      if (r == 0) return false;
      if (r == 1) {
        p = end, s++;
        continue;
      }
    }
    if (c == '\\' && p + 1 < pe) c = m->p[++p];
    if (fold(m, c) != fold(m, m->s[s])) return false;
    p++, s++;
  }
  return s == se;
}

int box_utf8_fnmatch(const char *pattern, const char *s, int flags)
{
  Match m = { NULL, NULL, (flags & FNM_CASEFOLD) != 0, (flags & FNM_EXTMATCH) != 0, 1L << 22 };
  size_t pn, sn;
  m.p = decode(pattern, &pn);
  m.s = decode(s, &sn);
  /* a leading dot is matched only by a dot written as one */
  bool ok = !((flags & FNM_PERIOD) && sn && m.s[0] == '.' &&
              !(pn && (m.p[0] == '.' || (m.p[0] == '\\' && pn > 1 && m.p[1] == '.'))));
  ok = ok && match(&m, 0, pn, 0, sn);
  g_free(m.p);
  g_free(m.s);
  return ok ? 0 : FNM_NOMATCH;
}

bool box_ext_unclosed(const char *pattern)
{
  /* which of the `(` still open are a group's (1) or plain (0) */
  GByteArray *open = g_byte_array_new();
  for (const char *p = pattern; *p; p++) {
    if (*p == '\\' && p[1]) {
      p++;
    } else if (*p == '(') {
      guint8 group = p > pattern && strchr("?*+@!", p[-1]) != NULL;
      g_byte_array_append(open, &group, 1);
    } else if (*p == ')' && open->len) {
      g_byte_array_set_size(open, open->len - 1);
    }
  }
  bool unclosed = open->len && memchr(open->data, 1, open->len) != NULL;
  g_byte_array_free(open, TRUE);
  return unclosed;
}
