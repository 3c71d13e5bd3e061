/* parser.c — recursive descent over tokens → Node tree (ast.h).
 *
 *   complete_command := list (NEWLINE | EOF)
 *   list     := and_or ((';' | '&') and_or)* [';' | '&']
 *   and_or   := pipeline (('&&' | '||') linebreak pipeline)*
 *   pipeline := ['!'] command ('|' linebreak command)*
 *   command  := simple_command            (compound commands: later)
 */
#include <string.h>

#include "shell/shell-private.h"

void box_node_free(Node *n) {
  if (!n) return;
  switch (n->kind) {
  case N_SIMPLE:
    for (size_t i = 0; i < n->u.simple.nassigns; i++) {
      g_free(n->u.simple.assigns[i].name);
      box_word_free(n->u.simple.assigns[i].value);
    }
    g_free(n->u.simple.assigns);
    for (size_t i = 0; i < n->u.simple.nwords; i++) box_word_free(n->u.simple.words[i]);
    g_free(n->u.simple.words);
    for (size_t i = 0; i < n->u.simple.nredirs; i++) box_word_free(n->u.simple.redirs[i].word);
    g_free(n->u.simple.redirs);
    break;
  case N_PIPE:
    for (size_t i = 0; i < n->u.pipe.n; i++) box_node_free(n->u.pipe.cmds[i]);
    g_free(n->u.pipe.cmds);
    break;
  case N_AND: case N_OR: case N_SEQ:
    box_node_free(n->u.bin.left);
    box_node_free(n->u.bin.right);
    break;
  case N_NOT: case N_BACKGROUND:
    box_node_free(n->u.un.child);
    break;
  }
  g_free(n);
}

void box_parser_init(Parser *p, const char *src) {
  memset(p, 0, sizeof *p);
  box_lexer_init(&p->lx, src);
}

static void tok_clear(Token *t) {
  if (t->kind == T_WORD) box_word_free(t->word);
  t->word = NULL;
}

void box_parser_done(Parser *p) {
  if (p->have_look) tok_clear(&p->look);
  p->have_look = false;
  g_free(p->error);
  g_free(p->lx.error);
  p->error = p->lx.error = NULL;
}

static bool perr(Parser *p, char *msg) {
  if (!p->error) p->error = msg; else g_free(msg);
  return false;
}

static bool peek(Parser *p, Token **t) {
  if (!p->have_look) {
    if (!box_lex_next(&p->lx, &p->look)) return perr(p, g_strdup(p->lx.error));
    p->have_look = true;
  }
  *t = &p->look;
  return true;
}

/* Takes the lookahead (ownership of its word passes to the caller). */
static Token take(Parser *p) {
  p->have_look = false;
  return p->look;
}

static bool unexpected(Parser *p, const Token *t) {
  if (t->kind == T_EOF) return perr(p, g_strdup("unexpected end of file"));
  if (t->kind == T_NEWLINE) return perr(p, g_strdup("unexpected token: newline"));
  return perr(p, g_strdup_printf("unexpected token: %s", box_tok_name(t)));
}

static bool linebreak(Parser *p) {
  Token *t;
  for (;;) {
    if (!peek(p, &t)) return false;
    if (t->kind != T_NEWLINE) return true;
    take(p);
  }
}

static bool is_assignment(const Word *w, size_t *eq) {
  if (w->nparts == 0 || w->parts[0].kind != WP_LIT) return false;
  const char *s = w->parts[0].text;
  const char *e = strchr(s, '=');
  if (!e || e == s || !box_is_name(s, (size_t)(e - s))) return false;
  *eq = (size_t)(e - s);
  return true;
}

/* Splits NAME=rest into an Assign (the value keeps the word's parts). */
static Assign make_assign(Word *w, size_t eq) {
  Assign a;
  a.name = g_strndup(w->parts[0].text, eq);
  char *rest = g_strdup(w->parts[0].text + eq + 1);
  g_free(w->parts[0].text);
  w->parts[0].text = rest;
  char *raw = g_strdup(w->raw + eq + 1);
  g_free(w->raw);
  w->raw = raw;
  a.value = w;
  return a;
}

static bool parse_simple(Parser *p, Node **out) {
  GArray *assigns = g_array_new(FALSE, TRUE, sizeof(Assign));
  GPtrArray *words = g_ptr_array_new();
  GArray *redirs = g_array_new(FALSE, TRUE, sizeof(Redir));
  bool ok = true;
  Token *t;
  for (;;) {
    if (!(ok = peek(p, &t))) break;
    if (t->kind == T_WORD) {
      Token w = take(p);
      size_t eq;
      if (words->len == 0 && is_assignment(w.word, &eq)) {
        Assign a = make_assign(w.word, eq);
        g_array_append_val(assigns, a);
      } else {
        g_ptr_array_add(words, w.word);
      }
      continue;
    }
    if (t->kind == T_HEREDOC) {
      ok = perr(p, g_strdup("here-documents are not supported yet"));
      break;
    }
    if (t->kind == T_REDIR) {
      Token r = take(p);
      Token *wt;
      if (!(ok = peek(p, &wt))) break;
      if (wt->kind != T_WORD) {
        ok = perr(p, g_strdup_printf("expected filename after '%s'", r.text));
        break;
      }
      Token w = take(p);
      Redir rd;
      rd.kind = r.rkind;
      rd.op = r.text;
      rd.word = w.word;
      if (r.fd >= 0) rd.fd = r.fd;
      else rd.fd = (r.rkind == R_IN || r.rkind == R_RDWR || r.rkind == R_DUP_IN) ? 0 : 1;
      g_array_append_val(redirs, rd);
      continue;
    }
    break;
  }
  if (ok && assigns->len == 0 && words->len == 0 && redirs->len == 0) {
    ok = unexpected(p, t);
  }
  Node *n = g_new0(Node, 1);
  n->kind = N_SIMPLE;
  n->u.simple.nassigns = assigns->len;
  n->u.simple.assigns = (Assign *)(void *)g_array_free(assigns, FALSE);
  n->u.simple.nwords = words->len;
  g_ptr_array_add(words, NULL);
  n->u.simple.words = (Word **)g_ptr_array_free(words, FALSE);
  n->u.simple.nredirs = redirs->len;
  n->u.simple.redirs = (Redir *)(void *)g_array_free(redirs, FALSE);
  if (!ok) { box_node_free(n); return false; }
  *out = n;
  return true;
}

static bool parse_command(Parser *p, Node **out) {
  Token *t;
  if (!peek(p, &t)) return false;
  if (t->kind == T_LPAREN || t->kind == T_RPAREN || t->kind == T_DSEMI)
    return unexpected(p, t);
  return parse_simple(p, out);
}

static bool word_is(const Token *t, const char *s) {
  return t->kind == T_WORD && t->word->nparts == 1 && t->word->parts[0].kind == WP_LIT &&
         strcmp(t->word->parts[0].text, s) == 0;
}

static bool parse_pipeline(Parser *p, Node **out) {
  Token *t;
  if (!peek(p, &t)) return false;
  bool negate = false;
  if (word_is(t, "!")) {
    Token bang = take(p);
    tok_clear(&bang);
    negate = true;
    if (!peek(p, &t)) return false;
  }
  if (t->kind == T_PIPE) return perr(p, g_strdup("expected command before '|'"));
  GPtrArray *cmds = g_ptr_array_new();
  bool ok = true;
  for (;;) {
    Node *c = NULL;
    if (!(ok = parse_command(p, &c))) break;
    g_ptr_array_add(cmds, c);
    if (!(ok = peek(p, &t))) break;
    if (t->kind != T_PIPE) break;
    take(p);
    if (!(ok = linebreak(p))) break;
    if (!(ok = peek(p, &t))) break;
    if (t->kind == T_EOF || t->kind == T_PIPE || t->kind == T_SEMI || t->kind == T_AND_IF ||
        t->kind == T_OR_IF || t->kind == T_AMP) {
      ok = perr(p, g_strdup("expected command after '|'"));
      break;
    }
  }
  if (!ok) {
    for (guint i = 0; i < cmds->len; i++) box_node_free(cmds->pdata[i]);
    g_ptr_array_free(cmds, TRUE);
    return false;
  }
  Node *n;
  if (cmds->len == 1) {
    n = cmds->pdata[0];
    g_ptr_array_free(cmds, TRUE);
  } else {
    n = g_new0(Node, 1);
    n->kind = N_PIPE;
    n->u.pipe.n = cmds->len;
    n->u.pipe.cmds = (Node **)g_ptr_array_free(cmds, FALSE);
  }
  if (negate) {
    Node *x = g_new0(Node, 1);
    x->kind = N_NOT;
    x->u.un.child = n;
    n = x;
  }
  *out = n;
  return true;
}

static Node *bin(NodeKind k, Node *l, Node *r) {
  Node *n = g_new0(Node, 1);
  n->kind = k;
  n->u.bin.left = l;
  n->u.bin.right = r;
  return n;
}

static bool parse_and_or(Parser *p, Node **out) {
  Node *left = NULL;
  if (!parse_pipeline(p, &left)) return false;
  for (;;) {
    Token *t;
    if (!peek(p, &t)) goto fail;
    if (t->kind != T_AND_IF && t->kind != T_OR_IF) break;
    Token op = take(p);
    if (!linebreak(p)) goto fail;
    if (!peek(p, &t)) goto fail;
    if (t->kind == T_EOF) {
      perr(p, g_strdup_printf("expected command after '%s'", op.text));
      goto fail;
    }
    Node *right = NULL;
    if (!parse_pipeline(p, &right)) goto fail;
    left = bin(op.kind == T_AND_IF ? N_AND : N_OR, left, right);
  }
  *out = left;
  return true;
fail:
  box_node_free(left);
  return false;
}

static bool ends_list(const Token *t) {
  return t->kind == T_EOF || t->kind == T_NEWLINE || t->kind == T_RPAREN || t->kind == T_DSEMI;
}

static bool parse_list(Parser *p, Node **out) {
  Node *list = NULL;
  for (;;) {
    Node *item = NULL;
    if (!parse_and_or(p, &item)) goto fail;
    Token *t;
    if (!peek(p, &t)) { box_node_free(item); goto fail; }
    if (t->kind == T_AMP) {
      take(p);
      Node *bg = g_new0(Node, 1);
      bg->kind = N_BACKGROUND;
      bg->u.un.child = item;
      item = bg;
    } else if (t->kind == T_SEMI) {
      take(p);
    }
    list = list ? bin(N_SEQ, list, item) : item;
    if (!peek(p, &t)) goto fail;
    if (ends_list(t)) break;
    if (t->kind == T_SEMI || t->kind == T_AMP) { unexpected(p, t); goto fail; }
  }
  *out = list;
  return true;
fail:
  box_node_free(list);
  return false;
}

ParseResult box_parse_next(Parser *p, Node **out) {
  *out = NULL;
  Token *t;
  if (!peek(p, &t)) return PARSE_ERROR;
  if (t->kind == T_EOF) return PARSE_EOF;
  if (t->kind == T_NEWLINE) { take(p); return PARSE_OK; }
  Node *n = NULL;
  if (!parse_list(p, &n)) return PARSE_ERROR;
  if (!peek(p, &t)) { box_node_free(n); return PARSE_ERROR; }
  if (t->kind == T_NEWLINE) take(p);
  else if (t->kind != T_EOF) { unexpected(p, t); box_node_free(n); return PARSE_ERROR; }
  *out = n;
  return PARSE_OK;
}
