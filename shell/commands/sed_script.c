/* sed_script.c — sed's script compiler: addresses, commands and their
 * arguments parsed into Sed.cmds, with GNU's messages and their places. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/sed.h"

static void bad(Sed *s, const char *msg)
{
  if (s->error) return;
  s->error = true;
  if (s->file_name)
    bx_err(s->c, "sed", "file %s line %d: %s", s->file_name, s->expr_no, msg);
  else
    bx_err(s->c, "sed", "-e expression #%d, char %zu: %s", s->expr_no, s->pos, msg);
}

static int peek(Sed *s)
{
  return s->pos < s->len ? (unsigned char)s->src[s->pos] : EOF;
}
static int next(Sed *s)
{
  return s->pos < s->len ? (unsigned char)s->src[s->pos++] : EOF;
}
static void skip_ws(Sed *s)
{
  while (peek(s) == ' ' || peek(s) == '\t') s->pos++;
}
static void skip_ws_nl(Sed *s)
{
  while (peek(s) == ' ' || peek(s) == '\t' || peek(s) == '\n' || peek(s) == ';') s->pos++;
}

/* Reads a delimited part (regex or replacement) up to delim; converts
 * \delim to delim (kept escaped when it is special in a regex) and, for
 * regexes, \n to a newline. */
static char *read_part(Sed *s, int delim, bool regex, size_t *outlen)
{
  GString *r = g_string_new(NULL);
  int bracket = 0;
  for (;;) {
    int ch = next(s);
    if (ch == EOF) {
      g_string_free(r, TRUE);
      return NULL;
    }
    if (regex && bracket) {
      /* inside [...]: the delimiter and backslashes are literal, except \n */
      if (ch == '\\' && peek(s) == 'n') {
        next(s);
        g_string_append_c(r, '\n');
        continue;
      }
      if (ch == ']' && bracket > 1) {
        bracket = 0;
        g_string_append_c(r, ']');
        continue;
      }
      if (ch == '\n' && 0) break;
      bracket++;
      if (ch == '[' && (peek(s) == ':' || peek(s) == '.' || peek(s) == '=')) {
        int kind = next(s);
        g_string_append_c(r, '[');
        g_string_append_c(r, (char)kind);
        while (peek(s) != EOF &&
               !(s->src[s->pos] == kind && s->pos + 1 < s->len && s->src[s->pos + 1] == ']'))
          g_string_append_c(r, (char)next(s));
        if (peek(s) != EOF) {
          next(s);
          next(s);
          g_string_append_c(r, (char)kind);
          g_string_append_c(r, ']');
        }
        continue;
      }
      g_string_append_c(r, (char)ch);
      continue;
    }
    if (ch == delim) break;
    if (ch == '\\') {
      int e = next(s);
      if (e == EOF) {
        g_string_free(r, TRUE);
        return NULL;
      }
      if (e == delim) {
        if (regex && delim != '/' && strchr(".*[]^$+?(){}|", delim)) g_string_append_c(r, '\\');
        g_string_append_c(r, (char)e);
      } else if (e == 'n' && regex) {
        g_string_append_c(r, '\n');
      } else if (e == '\n' && !regex) {
        g_string_append_c(r, '\n');
      } else {
        g_string_append_c(r, '\\');
        g_string_append_c(r, (char)e);
      }
      continue;
    }
    if (ch == '\n' && regex) {
      g_string_free(r, TRUE);
      return NULL;
    }
    if (regex && ch == '[') {
      bracket = 1;
      g_string_append_c(r, '[');
      if (peek(s) == '^') { g_string_append_c(r, (char)next(s)); }
      if (peek(s) == ']') {
        g_string_append_c(r, (char)next(s));
        bracket = 2;
      }
      continue;
    }
    g_string_append_c(r, (char)ch);
  }
  *outlen = r->len;
  return g_string_free(r, FALSE);
}

int bx_sed_num_escape(const char *p, size_t n, size_t *used)
{
  if (n < 2 || p[0] != '\\') return -1;
  if (p[1] == 'c' && n > 2) {
    *used = 3;
    return g_ascii_toupper(p[2]) ^ 0x40;
  }
  int base = p[1] == 'x' ? 16 : p[1] == 'd' ? 10 : p[1] == 'o' ? 8 : 0;
  int max = base == 16 ? 2 : 3, v = 0;
  size_t k = 2;
  for (; base && k < n && (int)k - 2 < max; k++) {
    int d = g_ascii_xdigit_value(p[k]);
    if (d < 0 || d >= base) break;
    v = v * base + d;
  }
  if (k == 2) return -1;
  *used = k;
  return v & 0xff;
}

/* GNU escapes in a regex: \t and friends become the character, as do
 * \xHH, \dNNN, \oNNN and \cX (a byte that is special keeps its meaning,
 * as GNU's does). */
static char *regex_escapes(const char *p)
{
  GString *r = g_string_new(NULL);
  for (; *p; p++) {
    size_t used;
    int b = *p == '\\' ? bx_sed_num_escape(p, strlen(p), &used) : -1;
    if (b >= 0) {
      g_string_append_c(r, (char)b);
      p += used - 1;
      continue;
    }
    if (*p == '\\' && p[1]) {
      char e = p[1];
      char v = e == 't'   ? '\t'
               : e == 'f' ? '\f'
               : e == 'v' ? '\v'
               : e == 'a' ? '\a'
               : e == 'r' ? '\r'
                          : 0;
      if (v) {
        g_string_append_c(r, v);
        p++;
        continue;
      }
      g_string_append_c(r, *p++);
      g_string_append_c(r, *p);
      continue;
    }
    g_string_append_c(r, *p);
  }
  return g_string_free(r, FALSE);
}

/* p as the text it matches, when no character of it is special to a BRE
 * or an ERE and all are ASCII (in C.UTF-8 an ASCII byte is always a whole
 * character); NULL otherwise. */
static char *plain_text(const char *p)
{
  for (const unsigned char *q = (const unsigned char *)p; *q; q++)
    if (*q >= 0x80 || strchr(".[]\\*^$+?(){}|", *q)) return NULL;
  return g_strdup(p);
}

static regex_t *compile_re(Sed *s, const char *pat, bool icase, bool multiline)
{
  if (*pat == '\0') return NULL; /* the last regex */
  SedRe *sr = g_new0(SedRe, 1);
  regex_t *re = &sr->re;
  char *p = regex_escapes(pat);
  if (box_pattern_too_deep(p)) {
    g_free(p);
    g_free(sr);
    bad(s, "maximum nesting depth exceeded (256)");
    return NULL;
  }
  int rc = regcomp(
    re, p, (s->ere ? REG_EXTENDED : 0) | (icase ? REG_ICASE : 0) | (multiline ? REG_NEWLINE : 0));
  if (rc == 0 && !icase && (sr->literal = plain_text(p))) sr->literal_len = strlen(sr->literal);
  g_free(p);
  if (rc) {
    char msg[256];
    regerror(rc, re, msg, sizeof msg);
    g_free(sr);
    bad(s, msg);
    return NULL;
  }
  g_ptr_array_add(s->regexes, re);
  return re;
}

static bool parse_addr(Sed *s, Addr *a)
{
  int ch = peek(s);
  memset(a, 0, sizeof *a);
  if (ch >= '0' && ch <= '9') {
    unsigned long n = 0;
    while (peek(s) >= '0' && peek(s) <= '9') n = n * 10 + (unsigned long)(next(s) - '0');
    skip_ws(s);
    if (peek(s) == '~') {
      next(s);
      unsigned long st = 0;
      while (peek(s) >= '0' && peek(s) <= '9') st = st * 10 + (unsigned long)(next(s) - '0');
      a->kind = A_STEP;
      a->n = n;
      a->step = st;
      return true;
    }
    a->kind = n == 0 ? A_ZERO : A_LINE;
    a->n = n;
    return true;
  }
  if (ch == '$') {
    next(s);
    a->kind = A_LAST;
    return true;
  }
  if (ch == '/' || ch == '\\') {
    next(s);
    int delim = ch == '\\' ? next(s) : '/';
    size_t l;
    char *pat = read_part(s, delim, true, &l);
    if (!pat) {
      bad(s, "unterminated address regex");
      return false;
    }
    bool icase = false, ml = false;
    for (;;) {
      if (peek(s) == 'I') {
        next(s);
        icase = true;
      } else if (peek(s) == 'M') {
        next(s);
        ml = true;
      } else
        break;
    }
    a->kind = A_RE;
    a->re = compile_re(s, pat, icase, ml);
    if (*pat == '\0' && !s->last_re && !s->regexes->len) { /* checked at run time */
    }
    g_free(pat);
    return !s->error;
  }
  return true;
}

static OutFile *open_wfile(Sed *s, const char *name)
{
  for (guint i = 0; i < s->files->len; i++) {
    OutFile *f = s->files->pdata[i];
    if (strcmp(f->name, name) == 0) return f;
  }
  OutFile *f = g_new0(OutFile, 1);
  f->name = g_strdup(name);
  if (strcmp(name, "/dev/stdout") == 0)
    f->fd = -2;
  else if (strcmp(name, "/dev/stderr") == 0)
    f->fd = s->c->err;
  else {
    f->fd = box_open_file(name, O_WRONLY | O_CREAT | O_TRUNC);
    if (f->fd < 0) {
      g_autofree char *t = bx_errtext(s->c, errno);
      bx_err(s->c, "sed", "couldn't open file %s: %s", name, t);
      s->error = true;
      s->status = 4;
    }
  }
  g_ptr_array_add(s->files, f);
  return f;
}

/* A file name or label: to the end of the line (labels also stop at ';'). */
static char *read_arg(Sed *s, bool label)
{
  skip_ws(s);
  size_t st = s->pos;
  while (peek(s) != EOF && peek(s) != '\n' && !(label && (peek(s) == ';' || peek(s) == '}')))
    s->pos++;
  size_t e = s->pos;
  while (e > st && (s->src[e - 1] == ' ' || s->src[e - 1] == '\t')) e--;
  return g_strndup(s->src + st, e - st);
}

/* a/i/c text: GNU one-liner or classic a\ form. */
static char *read_text(Sed *s, size_t *len)
{
  skip_ws(s);
  if (peek(s) == '\\') {
    next(s);
    size_t save = s->pos;
    skip_ws(s);
    if (peek(s) == '\n')
      next(s);
    else
      s->pos = save; /* a\TEXT keeps its leading blanks */
  }
  GString *r = g_string_new(NULL);
  for (;;) {
    int ch = next(s);
    if (ch == EOF || ch == '\n') break;
    if (ch == '\\') {
      int e = next(s);
      if (e == EOF) break;
      g_string_append_c(r, (char)e);
      continue;
    }
    g_string_append_c(r, (char)ch);
  }
  if (r->len || peek(s) != EOF) g_string_append_c(r, '\n');
  *len = r->len;
  return g_string_free(r, FALSE);
}

static bool end_of_cmd(Sed *s)
{
  skip_ws(s);
  int ch = peek(s);
  if (ch == EOF || ch == '\n' || ch == ';') {
    if (ch != EOF) next(s);
    return true;
  }
  if (ch == '}' || ch == '#') return true;
  bad(s, "extra characters after command");
  return false;
}

static bool parse_s(Sed *s, SedCmd *c)
{
  int delim = next(s);
  if (delim == EOF || delim == '\n' || delim == '\\') {
    bad(s, "unterminated `s' command");
    return false;
  }
  size_t l;
  char *pat = read_part(s, delim, true, &l);
  if (!pat) {
    bad(s, "unterminated `s' command");
    return false;
  }
  char *rep = read_part(s, delim, false, &c->rep_len);
  if (!rep) {
    g_free(pat);
    bad(s, "unterminated `s' command");
    return false;
  }
  c->rep = rep;
  bool icase = false, ml = false;
  for (;;) {
    int ch = peek(s);
    if (ch == 'g') {
      next(s);
      c->global = true;
    } else if (ch == 'p') {
      next(s);
      c->print = true;
      c->print_count++;
    } else if (ch == 'i' || ch == 'I') {
      next(s);
      icase = true;
    } else if (ch == 'm' || ch == 'M') {
      next(s);
      ml = true;
    } else if (ch == 'e') {
      next(s);
      c->eval = true;
    } else if (ch >= '0' && ch <= '9') {
      unsigned long n = 0;
      while (peek(s) >= '0' && peek(s) <= '9') n = n * 10 + (unsigned long)(next(s) - '0');
      if (n == 0) {
        g_free(pat);
        bad(s, "number option to `s' command may not be zero");
        return false;
      }
      c->nth = n;
    } else if (ch == 'w') {
      next(s);
      char *f = read_arg(s, false);
      c->wfile = open_wfile(s, f);
      g_free(f);
      break;
    } else
      break;
  }
  /* check \N references */
  int maxref = 0;
  for (size_t i = 0; i + 1 < c->rep_len; i++) {
    if (rep[i] == '\\') {
      if (rep[i + 1] >= '1' && rep[i + 1] <= '9' && rep[i + 1] - '0' > maxref)
        maxref = rep[i + 1] - '0';
      i++;
    }
  }
  c->re = compile_re(s, pat, icase, ml);
  if (!s->error && c->re && (int)c->re->re_nsub < maxref) {
    char m[80];
    g_snprintf(m, sizeof m, "invalid reference \\%d on `s' command's RHS", maxref);
    bad(s, m);
  }
  g_free(pat);
  if (s->error) return false;
  return end_of_cmd(s);
}

static bool parse_y(Sed *s, SedCmd *c)
{
  int delim = next(s);
  GString *src = g_string_new(NULL), *dst = g_string_new(NULL);
  GString *parts[2] = { src, dst };
  bool ok = true;
  for (int k = 0; k < 2 && ok; k++) {
    for (;;) {
      int ch = next(s);
      if (ch == EOF || ch == '\n') {
        bad(s, "unterminated `y' command");
        ok = false;
        break;
      }
      if (ch == delim) break;
      if (ch == '\\') {
        int e = next(s);
        if (e == 'n')
          ch = '\n';
        else if (e == '\\')
          ch = '\\';
        else if (e == delim)
          ch = delim;
        else if (e == 't')
          ch = '\t';
        else {
          g_string_append_c(parts[k], '\\');
          ch = e;
        }
      }
      g_string_append_c(parts[k], (char)ch);
    }
  }
  if (ok && src->len != dst->len) {
    bad(s, "strings for `y' command are different lengths");
    ok = false;
  }
  if (ok) {
    for (int i = 0; i < 256; i++) c->ymap[i] = (unsigned char)i;
    for (size_t i = 0; i < src->len; i++)
      c->ymap[(unsigned char)src->str[i]] = (unsigned char)dst->str[i];
  }
  g_string_free(src, TRUE);
  g_string_free(dst, TRUE);
  return ok && end_of_cmd(s);
}

static bool parse_script(Sed *s, GPtrArray *blocks)
{
  while (!s->error) {
    skip_ws_nl(s);
    if (peek(s) == EOF) return true;
    if (peek(s) == '#') {
      if (s->pos == 0 && s->expr_no == 1 && s->pos + 1 < s->len && s->src[1] == 'n' &&
          (s->len == 2 || s->src[2] == '\n'))
        s->quiet = true;
      while (peek(s) != EOF && peek(s) != '\n') next(s);
      continue;
    }
    SedCmd c = { 0 };
    if (!parse_addr(s, &c.a1)) return false;
    if (c.a1.kind != A_NONE) {
      skip_ws(s);
      if (peek(s) == ',') {
        next(s);
        skip_ws(s);
        int ch = peek(s);
        if (ch == '+' || ch == '~') {
          next(s);
          unsigned long n = 0;
          if (!(peek(s) >= '0' && peek(s) <= '9')) {
            bad(s, "expected newer version of sed");
            return false;
          }
          while (peek(s) >= '0' && peek(s) <= '9') n = n * 10 + (unsigned long)(next(s) - '0');
          c.a2.kind = ch == '+' ? A_PLUS : A_MULT;
          c.a2.n = n;
        } else {
          if (!parse_addr(s, &c.a2)) return false;
          if (c.a2.kind == A_NONE) {
            bad(s, "unexpected `,'");
            return false;
          }
          if (c.a2.kind == A_ZERO) {
            bad(s, "invalid usage of line address 0");
            return false;
          }
          if (c.a2.kind == A_STEP) c.a2.kind = A_LINE;
        }
      }
      if (c.a1.kind == A_ZERO && (c.a2.kind != A_RE)) {
        bad(s, "invalid usage of line address 0");
        return false;
      }
    }
    skip_ws(s);
    while (peek(s) == '!') {
      next(s);
      c.negate = true;
      skip_ws(s);
    }
    int cmd = next(s);
    if (cmd == EOF) {
      bad(s, "missing command");
      return false;
    }
    c.cmd = (char)cmd;
    bool one_addr = strchr("=aiqQrR", cmd) && cmd != '=';
    if (one_addr && c.a2.kind != A_NONE && (cmd == 'q' || cmd == 'Q')) {
      bad(s, "command only uses one address");
      return false;
    }
    switch (cmd) {
    case '{': g_ptr_array_add(blocks, GSIZE_TO_POINTER(s->cmds->len)); break;
    case '}':
      if (blocks->len == 0) {
        bad(s, "unexpected `}'");
        return false;
      }
      if (c.a1.kind != A_NONE) {
        bad(s, "} doesn't want any addresses");
        return false;
      }
      {
        size_t open = GPOINTER_TO_SIZE(g_ptr_array_steal_index(blocks, blocks->len - 1));
        g_array_index(s->cmds, SedCmd, open).jump = s->cmds->len;
      }
      if (!end_of_cmd(s)) return false;
      break;
    case '#':
      if (c.a1.kind != A_NONE) {
        bad(s, "comments don't accept any addresses");
        return false;
      }
      while (peek(s) != EOF && peek(s) != '\n') next(s);
      continue;
    case ':': {
      if (c.a1.kind != A_NONE) {
        bad(s, ": doesn't want any addresses");
        return false;
      }
      char *l = read_arg(s, true);
      if (!*l) {
        g_free(l);
        bad(s, "\":\" lacks a label");
        return false;
      }
      c.text = l;
      if (peek(s) == ';') next(s);
      break;
    }
    case 'a':
    case 'i':
    case 'c': {
      skip_ws(s);
      if (peek(s) == EOF) {
        bad(s, "expected \\ after `a', `c' or `i'");
        return false;
      }
      c.text = read_text(s, &c.text_len);
      break;
    }
    case 'b':
    case 't':
    case 'T':
      c.text = read_arg(s, true);
      if (peek(s) == ';') next(s);
      break;
    case 'r':
    case 'R':
    case 'w':
    case 'W':
      c.text = read_arg(s, false);
      if (cmd == 'w' || cmd == 'W') c.wfile = open_wfile(s, c.text);
      break;
    case 'q':
    case 'Q':
    case 'l':
    case 'L': {
      skip_ws(s);
      unsigned long n = 0;
      bool have = false;
      while (peek(s) >= '0' && peek(s) <= '9') {
        n = n * 10 + (unsigned long)(next(s) - '0');
        have = true;
      }
      if (cmd == 'l')
        c.lwidth = have ? n : (unsigned long)-1;
      else
        c.exit_code = (int)n;
      if (!end_of_cmd(s)) return false;
      break;
    }
    case 's':
      if (!parse_s(s, &c)) return false;
      break;
    case 'y':
      if (!parse_y(s, &c)) return false;
      break;
    case '=':
    case 'd':
    case 'D':
    case 'g':
    case 'G':
    case 'h':
    case 'H':
    case 'n':
    case 'N':
    case 'p':
    case 'P':
    case 'x':
    case 'z':
    case 'F':
      if (!end_of_cmd(s)) return false;
      break;
    case 'e':
    case 'v': c.text = read_arg(s, false); break;
    default: {
      char m[64];
      g_snprintf(m, sizeof m, "unknown command: `%c'", cmd);
      bad(s, m);
      return false;
    }
    }
    g_array_append_val(s->cmds, c);
  }
  return false;
}

static bool resolve_labels(Sed *s)
{
  SedCmd *v = (SedCmd *)s->cmds->data;
  for (guint i = 0; i < s->cmds->len; i++) {
    if (!strchr("btT", v[i].cmd)) continue;
    if (!v[i].text || !*v[i].text) {
      v[i].jump = s->cmds->len;
      continue;
    }
    bool found = false;
    for (guint j = 0; j < s->cmds->len; j++)
      if (v[j].cmd == ':' && strcmp(v[j].text, v[i].text) == 0) {
        v[i].jump = j;
        found = true;
        break;
      }
    if (!found) {
      bx_err(s->c, "sed", "can't find label for jump to `%s'", v[i].text);
      s->status = 4;
      return false;
    }
  }
  return true;
}

bool bx_sed_compile(Sed *s, GPtrArray *scripts, GPtrArray *script_names)
{
  GPtrArray *blocks = g_ptr_array_new();
  for (guint i = 0; i < scripts->len; i++) {
    s->src = scripts->pdata[i];
    s->len = strlen(s->src);
    s->pos = 0;
    s->expr_no = (int)i + 1;
    s->file_name = script_names->pdata[i];
    parse_script(s, blocks);
    if (s->error) break;
    /* a/i/c text and labels end with their -e */
  }
  if (!s->error && blocks->len) {
    s->pos = 0;
    bad(s, "unmatched `{'");
  }
  g_ptr_array_free(blocks, TRUE);
  return !s->error && resolve_labels(s);
}
