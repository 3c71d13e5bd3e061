/* tr.c — GNU tr: ranges, classes, [c*n], [=c=], escapes; -c -C -d -s -t. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static int class_test(const char *name, int ch)
{
  if (!strcmp(name, "alpha")) return g_ascii_isalpha(ch);
  if (!strcmp(name, "digit")) return g_ascii_isdigit(ch);
  if (!strcmp(name, "alnum")) return g_ascii_isalnum(ch);
  if (!strcmp(name, "upper")) return g_ascii_isupper(ch);
  if (!strcmp(name, "lower")) return g_ascii_islower(ch);
  if (!strcmp(name, "space")) return g_ascii_isspace(ch) || ch == '\v';
  if (!strcmp(name, "blank")) return ch == ' ' || ch == '\t';
  if (!strcmp(name, "punct")) return g_ascii_ispunct(ch);
  if (!strcmp(name, "print")) return g_ascii_isprint(ch);
  if (!strcmp(name, "graph")) return g_ascii_isgraph(ch);
  if (!strcmp(name, "cntrl")) return g_ascii_iscntrl(ch);
  if (!strcmp(name, "xdigit")) return g_ascii_isxdigit(ch);
  return -1;
}

/* One character of a set, with backslash escapes. */
static int set_char(const char *s, size_t *i)
{
  unsigned char ch = (unsigned char)s[*i];
  if (ch != '\\' || s[*i + 1] == '\0') {
    (*i)++;
    return ch;
  }
  (*i)++;
  char e = s[*i];
  if (e >= '0' && e <= '7') {
    int v = 0, n = 0;
    while (n < 3 && s[*i] >= '0' && s[*i] <= '7' && v * 8 + (s[*i] - '0') < 256) {
      v = v * 8 + (s[*i] - '0');
      (*i)++;
      n++;
    }
    return v;
  }
  (*i)++;
  switch (e) {
  case 'n': return '\n';
  case 't': return '\t';
  case 'r': return '\r';
  case 'a': return '\a';
  case 'b': return '\b';
  case 'f': return '\f';
  case 'v': return '\v';
  default: return (unsigned char)e;
  }
}

/* Expands a set into bytes.  repeat_at: index of a [c*] in SET2 (or -1). */
static bool expand_set(BoxCmd *c, const char *s, GByteArray *out, int *repeat_at, bool is_set2,
                       bool *has_upper, bool *has_lower)
{
  size_t i = 0;
  if (repeat_at) *repeat_at = -1;
  while (s[i]) {
    if (s[i] == '[' && s[i + 1] == ':') {
      const char *e = strstr(s + i + 2, ":]");
      if (e) {
        char *name = g_strndup(s + i + 2, (size_t)(e - (s + i + 2)));
        int t = class_test(name, 'a');
        if (t < 0) {
          bx_err_q(c, "tr", "invalid character class %s", name, 0);
          g_free(name);
          return false;
        }
        if (!strcmp(name, "upper") && has_upper) *has_upper = true;
        if (!strcmp(name, "lower") && has_lower) *has_lower = true;
        for (int ch = 0; ch < 256; ch++)
          if (class_test(name, ch) > 0) {
            guint8 b = (guint8)ch;
            g_byte_array_append(out, &b, 1);
          }
        g_free(name);
        i = (size_t)(e - s) + 2;
        continue;
      }
    }
    if (s[i] == '[' && s[i + 1] == '=' && s[i + 2] && s[i + 3] == '=' && s[i + 4] == ']') {
      guint8 b = (guint8)s[i + 2];
      g_byte_array_append(out, &b, 1);
      i += 5;
      continue;
    }
    if (s[i] == '[' && s[i + 1]) {
      size_t j = i + 1;
      int ch = set_char(s, &j);
      if (s[j] == '*') {
        const char *close = strchr(s + j, ']');
        if (close) {
          char *end;
          const char *num = s + j + 1;
          unsigned long n = num == close ? 0 : strtoul(num, &end, num[0] == '0' ? 8 : 10);
          if (num != close && end != close) goto plain;
          if (!is_set2) {
            bx_err(c, "tr", "the [c*] repeat construct may not appear in string1");
            return false;
          }
          if (n == 0) {
            if (repeat_at) *repeat_at = (int)out->len;
            guint8 b = (guint8)ch;
            g_byte_array_append(out, &b, 1);
          } else {
            for (unsigned long k = 0; k < n; k++) {
              guint8 b = (guint8)ch;
              g_byte_array_append(out, &b, 1);
            }
          }
          i = (size_t)(close - s) + 1;
          continue;
        }
      }
    }
  plain:;
    int a = set_char(s, &i);
    if (s[i] == '-' && s[i + 1]) {
      size_t j = i + 1;
      int b = set_char(s, &j);
      if (b < a) {
        bx_err(c, "tr", "range-endpoints of '%c-%c' are in reverse collating sequence order", a, b);
        return false;
      }
      for (int ch = a; ch <= b; ch++) {
        guint8 x = (guint8)ch;
        g_byte_array_append(out, &x, 1);
      }
      i = j;
      continue;
    }
    guint8 x = (guint8)a;
    g_byte_array_append(out, &x, 1);
  }
  return true;
}

static const char longopts[] = "complement=c delete=d squeeze-repeats=s truncate-set1=t";

int box_cmd_tr(BoxCmd *c)
{
  bool comp = false, del = false, squeeze = false, trunc = false;
  BX_EACH_OPTION (ch, c, "tr", "cCdst", longopts) switch (ch) {
    case 'c':
    case 'C': comp = true; break;
    case 'd': del = true; break;
    case 's': squeeze = true; break;
    case 't': trunc = true; break;
    default: return 1;
    }
  int n = c->argc - optind;
  char **args = c->argv + optind;
  int need = (del && squeeze) ? 2 : (del || (squeeze && n < 2)) ? 1 : 2;
  if (n < 1) {
    bx_usage(c, "tr", "missing operand");
    return 1;
  }
  if (n < need) {
    g_autofree char *q = bx_quote_always(args[0]);
    if (del && squeeze)
      bx_usage(c, "tr",
               "missing operand after %s\nTwo strings must be given when both deleting and "
               "squeezing repeats.",
               q);
    else
      bx_usage(c, "tr", "missing operand after %s\nTwo strings must be given when translating.", q);
    return 1;
  }
  if (n > need) {
    g_autofree char *q = bx_quote_always(args[need]);
    if (del && !squeeze)
      bx_usage(
        c, "tr",
        "extra operand %s\nOnly one string may be given when deleting without squeezing repeats.",
        q);
    else
      bx_usage(c, "tr", "extra operand %s", q);
    return 1;
  }
  GByteArray *s1 = g_byte_array_new(), *s2 = g_byte_array_new();
  int rep = -1;
  int status = 1;
  if (!expand_set(c, args[0], s1, NULL, false, NULL, NULL)) goto out;
  if (n > 1 && !expand_set(c, args[1], s2, &rep, true, NULL, NULL)) goto out;
  bool in1[256] = { false };
  for (guint i = 0; i < s1->len; i++) in1[s1->data[i]] = true;
  if (comp) {
    g_byte_array_set_size(s1, 0);
    for (int k = 0; k < 256; k++)
      if (!in1[k]) {
        guint8 b = (guint8)k;
        g_byte_array_append(s1, &b, 1);
      }
    for (int k = 0; k < 256; k++) in1[k] = !in1[k];
  }
  bool translate = !del && n == 2;
  unsigned char map[256];
  for (int k = 0; k < 256; k++) map[k] = (unsigned char)k;
  bool sq[256] = { false };
  if (translate) {
    if (s2->len == 0 && s1->len) {
      bx_err(c, "tr", "when not truncating set1, string2 must be non-empty");
      goto out;
    }
    if (trunc && s1->len > s2->len) g_byte_array_set_size(s1, s2->len);
    if (rep >= 0) {
      /* [c*] fills SET2 up to SET1's length */
      guint fill = s1->len > s2->len - 1 ? s1->len - (s2->len - 1) : 0;
      guint8 rc = s2->data[rep];
      GByteArray *t = g_byte_array_new();
      g_byte_array_append(t, s2->data, (guint)rep);
      for (guint k = 0; k < fill; k++) g_byte_array_append(t, &rc, 1);
      g_byte_array_append(t, s2->data + rep + 1, s2->len - (guint)rep - 1);
      g_byte_array_free(s2, TRUE);
      s2 = t;
    }
    for (guint i = 0; i < s1->len; i++) {
      guint j = i < s2->len ? i : s2->len - 1;
      map[s1->data[i]] = s2->data[j];
    }
    for (guint i = 0; i < s2->len; i++) sq[s2->data[i]] = true;
  } else if (del && squeeze) {
    for (guint i = 0; i < s2->len; i++) sq[s2->data[i]] = true;
  } else if (squeeze) {
    for (int k = 0; k < 256; k++) sq[k] = in1[k];
  }
  char buf[65536], obuf[65536];
  int last = -1;
  for (;;) {
    ssize_t r = c->in >= 0 ? bx_read(c->in, buf, sizeof buf) : 0;
    if (r < 0) {
      bx_err(c, "tr", "read error: %s", box_strerror(errno));
      goto out;
    }
    if (r == 0) break;
    size_t o = 0;
    for (ssize_t k = 0; k < r; k++) {
      unsigned char b = (unsigned char)buf[k];
      if (del && in1[b]) continue;
      unsigned char t = translate ? map[b] : b;
      if (squeeze && sq[t] && last == t) continue;
      obuf[o++] = (char)t;
      last = t;
    }
    box_out_write(c->out, obuf, o);
  }
  status = 0;
out:
  g_byte_array_free(s1, TRUE);
  g_byte_array_free(s2, TRUE);
  return status;
}
