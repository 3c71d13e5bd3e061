/* expand.c — words → fields: parameter expansion, field splitting, quote
 * removal.  (Tilde, command substitution, arithmetic and pathname
 * expansion are later steps; the marks below already say which bytes a
 * glob may treat as special.) */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

enum { M_QUOTED = 0, M_LITERAL = 1, M_SPLIT = 2 };

typedef struct {
  GString *s;
  GByteArray *mark;   /* one per byte of s */
  GByteArray *qstart; /* len+1: a quoted part starts here (keeps "" fields) */
  Shell *sh;
  int err_fd;
  int status;
  bool failed;
} Buf;

static void buf_add(Buf *b, const char *t, size_t n, guint8 mark) {
  g_string_append_len(b->s, t, (gssize)n);
  for (size_t i = 0; i < n; i++) g_byte_array_append(b->mark, &mark, 1);
  guint8 z = 0;
  while (b->qstart->len < b->s->len + 1) g_byte_array_append(b->qstart, &z, 1);
}

static void buf_qmark(Buf *b) {
  guint8 z = 0;
  while (b->qstart->len < b->s->len + 1) g_byte_array_append(b->qstart, &z, 1);
  b->qstart->data[b->s->len] = 1;
}

static char *special_param(Shell *sh, const char *name) {
  switch (name[0]) {
  case '?': return g_strdup_printf("%d", sh->last_status);
  case '$': return g_strdup_printf("%d", (int)sh->pid);
  case '!': return sh->last_bg ? g_strdup_printf("%d", (int)sh->last_bg) : g_strdup("");
  case '#': return g_strdup("0");
  case '-': return g_strdup("hB");
  case '0': return g_strdup("strands-shell");
  case '@': case '*': return g_strdup("");
  default:
    if (name[0] >= '1' && name[0] <= '9') return NULL;
    return NULL;
  }
}

/* The value of a parameter, or NULL when unset.  g_malloc'd. */
static char *param_value(Shell *sh, const char *name) {
  if (box_is_name(name, strlen(name))) {
    const char *v = box_var_get(sh, name);
    return v ? g_strdup(v) : NULL;
  }
  return special_param(sh, name);
}

static void expand_parts(Buf *b, const Word *w, bool in_unquoted_param);

/* Expands a ${…} argument word to a plain string; for patterns the bytes
 * that came from quoting are escaped so fnmatch takes them literally. */
static char *arg_string(Buf *outer, const Word *w, bool pattern) {
  Buf b = { g_string_new(NULL), g_byte_array_new(), g_byte_array_new(), outer->sh, outer->err_fd, 0, false };
  expand_parts(&b, w, false);
  if (b.failed) { outer->failed = true; outer->status = b.status; }
  GString *r = g_string_new(NULL);
  for (size_t i = 0; i < b.s->len; i++) {
    char c = b.s->str[i];
    if (pattern && b.mark->data[i] == M_QUOTED && strchr("*?[]\\", c)) g_string_append_c(r, '\\');
    g_string_append_c(r, c);
  }
  g_string_free(b.s, TRUE);
  g_byte_array_free(b.mark, TRUE);
  g_byte_array_free(b.qstart, TRUE);
  return g_string_free(r, FALSE);
}

static char *trim(const char *val, const char *pat, ParamOp op) {
  size_t n = strlen(val);
  char *tmp = g_strdup(val);
  char *res = NULL;
  switch (op) {
  case PO_TRIM_PREFIX:
  case PO_TRIM_PREFIX_LONG:
    for (size_t k = 0; k <= n; k++) {
      size_t i = op == PO_TRIM_PREFIX ? k : n - k;
      char save = tmp[i];
      tmp[i] = '\0';
      bool m = fnmatch(pat, tmp, 0) == 0;
      tmp[i] = save;
      if (m) { res = g_strdup(val + i); break; }
    }
    break;
  case PO_TRIM_SUFFIX:
  case PO_TRIM_SUFFIX_LONG:
    for (size_t k = 0; k <= n; k++) {
      size_t i = op == PO_TRIM_SUFFIX ? n - k : k;
      if (fnmatch(pat, val + i, 0) == 0) { res = g_strndup(val, i); break; }
    }
    break;
  default:
    break;
  }
  g_free(tmp);
  return res ? res : g_strdup(val);
}

static void expand_param(Buf *b, const WordPart *p, bool in_unquoted_param) {
  guint8 mark = (p->quoted) ? M_QUOTED : M_SPLIT;
  (void)in_unquoted_param;
  char *val = param_value(b->sh, p->text);
  bool set = val != NULL;
  bool use_null = p->colon ? (!set || val[0] == '\0') : !set;
  if (p->quoted && strcmp(p->text, "@") != 0) buf_qmark(b);
  switch (p->op) {
  case PO_NONE:
    break;
  case PO_LENGTH: {
    size_t len = 0;
    if (val) len = g_utf8_validate(val, -1, NULL) ? (size_t)g_utf8_strlen(val, -1) : strlen(val);
    g_free(val);
    val = g_strdup_printf("%zu", len);
    break;
  }
  case PO_DEFAULT:
    if (use_null) {
      g_free(val);
      val = NULL;
      expand_parts(b, p->arg, !p->quoted);
      return;
    }
    break;
  case PO_ALT:
    if (!use_null) {
      g_free(val);
      expand_parts(b, p->arg, !p->quoted);
      return;
    }
    g_free(val);
    val = NULL;
    break;
  case PO_ASSIGN:
    if (use_null) {
      g_free(val);
      val = arg_string(b, p->arg, false);
      if (!box_is_name(p->text, strlen(p->text))) {
        box_fdprintf(b->err_fd, "strands-shell: $%s: cannot assign in this way\n", p->text);
        b->failed = true;
        b->status = 1;
        g_free(val);
        return;
      }
      box_var_set(b->sh, p->text, val);
    }
    break;
  case PO_ERROR:
    if (use_null) {
      char *msg = arg_string(b, p->arg, false);
      box_fdprintf(b->err_fd, "strands-shell: %s: %s\n", p->text,
                   msg[0] ? msg : (p->colon ? "parameter null or not set" : "parameter not set"));
      g_free(msg);
      g_free(val);
      b->failed = true;
      b->status = 127;
      b->sh->exiting = true;
      b->sh->exit_status = 127;
      return;
    }
    break;
  case PO_TRIM_PREFIX: case PO_TRIM_PREFIX_LONG:
  case PO_TRIM_SUFFIX: case PO_TRIM_SUFFIX_LONG:
    if (val) {
      char *pat = arg_string(b, p->arg, true);
      char *r = trim(val, pat, p->op);
      g_free(pat);
      g_free(val);
      val = r;
    }
    break;
  }
  if (val) buf_add(b, val, strlen(val), mark);
  g_free(val);
}

static void expand_parts(Buf *b, const Word *w, bool in_unquoted_param) {
  for (size_t i = 0; i < w->nparts && !b->failed; i++) {
    const WordPart *p = &w->parts[i];
    switch (p->kind) {
    case WP_LIT:
      buf_add(b, p->text, strlen(p->text), in_unquoted_param ? M_SPLIT : M_LITERAL);
      break;
    case WP_QLIT:
      buf_qmark(b);
      buf_add(b, p->text, strlen(p->text), M_QUOTED);
      break;
    case WP_PARAM:
      expand_param(b, p, in_unquoted_param);
      break;
    }
  }
}

static void split_fields(Buf *b, GPtrArray *out) {
  const char *ifs = box_var_get(b->sh, "IFS");
  if (!ifs) ifs = " \t\n";
  GString *f = g_string_new(NULL);
  bool have = false;  /* the current field exists (content or quotes) */
  size_t n = b->s->len;
  size_t i = 0;
#define QAT(k) ((k) < b->qstart->len && b->qstart->data[k])
#define IS_SEP(k) (b->mark->data[k] == M_SPLIT && b->s->str[k] != '\0' && strchr(ifs, b->s->str[k]))
#define IS_WS(c) ((c) == ' ' || (c) == '\t' || (c) == '\n')
  /* leading IFS whitespace */
  while (i < n && IS_SEP(i) && IS_WS(b->s->str[i]) && !QAT(i)) i++;
  while (i < n) {
    if (QAT(i)) have = true;
    if (IS_SEP(i)) {
      bool hard = false;
      while (i < n && IS_SEP(i) && IS_WS(b->s->str[i])) i++;
      if (i < n && IS_SEP(i) && !IS_WS(b->s->str[i])) {
        hard = true;
        i++;
        while (i < n && IS_SEP(i) && IS_WS(b->s->str[i])) i++;
      }
      if (have || f->len || hard) g_ptr_array_add(out, g_strndup(f->str, f->len));
      g_string_truncate(f, 0);
      have = false;
      continue;
    }
    g_string_append_c(f, b->s->str[i]);
    have = true;
    i++;
  }
  if (QAT(n)) have = true;
  if (have || f->len) g_ptr_array_add(out, g_strndup(f->str, f->len));
  g_string_free(f, TRUE);
#undef QAT
#undef IS_SEP
#undef IS_WS
}

bool box_expand_words(Shell *sh, Word **words, size_t n, GPtrArray *out, int err_fd, int *status) {
  for (size_t i = 0; i < n; i++) {
    Buf b = { g_string_new(NULL), g_byte_array_new(), g_byte_array_new(), sh, err_fd, 0, false };
    expand_parts(&b, words[i], false);
    bool ok = !b.failed;
    if (ok) split_fields(&b, out);
    else *status = b.status;
    g_string_free(b.s, TRUE);
    g_byte_array_free(b.mark, TRUE);
    g_byte_array_free(b.qstart, TRUE);
    if (!ok) return false;
  }
  return true;
}

char *box_expand_word_str(Shell *sh, const Word *w, int err_fd, int *status) {
  Buf b = { g_string_new(NULL), g_byte_array_new(), g_byte_array_new(), sh, err_fd, 0, false };
  expand_parts(&b, w, false);
  g_byte_array_free(b.mark, TRUE);
  g_byte_array_free(b.qstart, TRUE);
  if (b.failed) {
    *status = b.status;
    g_string_free(b.s, TRUE);
    return NULL;
  }
  return g_string_free(b.s, FALSE);
}
