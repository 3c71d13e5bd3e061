/* print.c — a function's definition as text, laid out the way bash lays
 * it out for `declare -f` and `type` (four-space indents, one command a
 * line, `;` after each but the last, here-document bodies after their
 * command).  Words are printed as written: the tree keeps their text. */
#include <string.h>

#include "shell/shell-private.h"

typedef struct {
  GString *g;
  int indent;
  int skip_indent;  /* the next command continues the current line */
  bool was_heredoc; /* the last command printed here-document bodies */
  GPtrArray *docs;  /* Redir* whose bodies are still to print */
} Pr;

static void pr_node(Pr *p, Node *n);

static void indent(Pr *p)
{
  for (int i = 0; i < p->indent; i++) g_string_append_c(p->g, ' ');
}

static void newline(Pr *p, const char *s)
{
  g_string_append_c(p->g, '\n');
  indent(p);
  g_string_append(p->g, s);
}

static void semicolon(Pr *p)
{
  GString *g = p->g;
  if (g->len && (g->str[g->len - 1] == '&' || g->str[g->len - 1] == '\n')) return;
  g_string_append_c(g, ';');
}

static void flush_docs(Pr *p)
{
  if (!p->docs->len) return;
  for (guint i = 0; i < p->docs->len; i++) {
    Redir *r = p->docs->pdata[i];
    bool quoted = false;
    GString *d = g_string_new(NULL);
    for (const char *s = r->word->text; *s; s++) {
      if (*s == '\'' || *s == '"') {
        quoted = true;
        continue;
      }
      if (*s == '\\' && s[1]) { s++; }
      g_string_append_c(d, *s);
    }
    (void)quoted;
    g_string_append_c(p->g, '\n');
    g_string_append(p->g, r->doc && r->doc->body ? r->doc->body : "");
    g_string_append_printf(p->g, "%s\n", d->str);
    g_string_free(d, TRUE);
  }
  g_ptr_array_set_size(p->docs, 0);
  p->was_heredoc = true;
}

/* A redirection's operator, and the descriptor it acts on when none is written (-1: none is
 * ever written). */
static const struct {
  const char *op;
  int fd;
} redir_text[] = {
  [R_IN] = { "< ", 0 },        [R_OUT] = { "> ", 1 },       [R_CLOBBER] = { ">| ", 1 },
  [R_APPEND] = { ">> ", 1 },   [R_RDWR] = { "<> ", 0 },     [R_DUP_IN] = { "<&", 0 },
  [R_DUP_OUT] = { ">&", 1 },   [R_OUT_ERR] = { "&> ", -1 }, [R_APPEND_ERR] = { "&>> ", -1 },
  [R_HERESTR] = { "<<< ", 0 }, [R_HEREDOC] = { "<<", 0 },
};

static void pr_redir(Pr *p, Redir *r)
{
  GString *g = p->g;
  int fd = r->fd;
  const char *op = redir_text[r->kind].op;
  if (r->varname) g_string_append_printf(g, "{%s}", r->varname);
  bool dup = (r->kind == R_DUP_IN || r->kind == R_DUP_OUT) && r->word && !r->varname;
  if (dup && (strcmp(r->word->text, "-") == 0 ||
              strspn(r->word->text, "0123456789") == strlen(r->word->text))) {
    /* bash spells a copy or a close of a numbered descriptor with both
     * numbers (`1>&2`, `0<&3`), and every close as `N>&-` */
    if (fd < 0) fd = redir_text[r->kind].fd;
    if (r->word->text[0] == '-') op = ">&";
    g_string_append_printf(g, "%d%s%s", fd, op, r->word->text);
    return;
  }
  if (redir_text[r->kind].fd >= 0 && fd >= 0 && fd != redir_text[r->kind].fd)
    g_string_append_printf(g, "%d", fd);
  g_string_append_printf(g, "%s%s", op, r->word ? r->word->text : "");
  if (r->kind == R_HEREDOC) g_ptr_array_add(p->docs, r);
}

static void pr_redirs(Pr *p, Node *n)
{
  for (size_t i = 0; i < n->nredirs; i++) {
    g_string_append_c(p->g, ' ');
    pr_redir(p, &n->redirs[i]);
  }
}

static void pr_words(Pr *p, Word **w, size_t n, const char *sep)
{
  for (size_t i = 0; i < n; i++) {
    if (i) g_string_append(p->g, sep);
    g_string_append(p->g, w[i]->text);
  }
}

static void pr_cond(Pr *p, Cond *c)
{
  switch (c->kind) {
  case C_AND:
    pr_cond(p, c->l);
    g_string_append(p->g, " && ");
    pr_cond(p, c->r);
    break;
  case C_OR:
    pr_cond(p, c->l);
    g_string_append(p->g, " || ");
    pr_cond(p, c->r);
    break;
  case C_NOT:
    g_string_append(p->g, "! ");
    pr_cond(p, c->l);
    break;
  case C_UNARY: g_string_append_printf(p->g, "%s %s", c->op, c->a->text); break;
  case C_BINARY: g_string_append_printf(p->g, "%s %s %s", c->a->text, c->op, c->b->text); break;
  case C_WORD: g_string_append(p->g, c->a->text); break;
  }
}

static char *trimmed(const char *s)
{
  return g_strstrip(g_strdup(s ? s : ""));
}

/* One expression of for ((…)) as bash prints it: from its first
 * non-blank on (what trails stays), an empty one as 1. */
static char *for_part(const char *s)
{
  s = s ? s : "";
  while (*s == ' ' || *s == '\t' || *s == '\n') s++;
  return g_strdup(*s ? s : "1");
}

static void pr_function(Pr *p, Node *f, bool nested)
{
  GString *g = p->g;
  Node *body = f->u.func.body;
  if (nested)
    g_string_append_printf(g, "function %s () \n", f->u.func.name);
  else
    g_string_append_printf(g, "%s () \n", f->u.func.name);
  int old = p->indent;
  if (nested) indent(p);
  g_string_append(g, "{ \n");
  p->indent += 4;
  if (body->kind == N_GROUP) {
    pr_node(p, body->u.un.child);
  } else {
    pr_node(p, body);
  }
  flush_docs(p);
  p->indent = old;
  newline(p, "}");
  if (body->kind == N_GROUP) pr_redirs(p, body);
}

/* A compound command's part, one level deeper. */
static void pr_body(Pr *p, Node *body)
{
  p->indent += 4;
  pr_node(p, body);
  p->indent -= 4;
}

/* if's or a while/until loop's condition, on the keyword's line, and the word after it. */
static void pr_test(Pr *p, const char *keyword, Node *cond, const char *then)
{
  g_string_append(p->g, keyword);
  p->skip_indent++;
  pr_node(p, cond);
  semicolon(p);
  g_string_append(p->g, then);
}

static void pr_loop_body(Pr *p, Node *body)
{
  pr_body(p, body);
  semicolon(p);
  newline(p, "done");
}

static void pr_node(Pr *p, Node *n)
{
  if (!n) return;
  GString *g = p->g;
  /* a list's chain leans right (parser.c): walked, not recursed */
  for (; n->kind == N_SEQ; n = n->u.bin.right) {
    pr_node(p, n->u.bin.left);
    if (g->len && g->str[g->len - 1] == '&') {
      /* "cmd & next" stays on one line */
      g_string_append_c(g, ' ');
      p->skip_indent++;
    } else {
      if (p->docs->len) {
        flush_docs(p);
      } else if (p->was_heredoc) {
        p->was_heredoc = false;
      } else {
        g_string_append_c(g, ';');
      }
      g_string_append_c(g, '\n');
    }
  }
  if (p->skip_indent)
    p->skip_indent--;
  else
    indent(p);
  p->was_heredoc = false;
  switch (n->kind) {
  case N_SIMPLE: {
    pr_words(p, n->u.simple.assigns, n->u.simple.nassigns, " ");
    if (n->u.simple.nassigns && n->u.simple.nwords) g_string_append_c(g, ' ');
    pr_words(p, n->u.simple.words, n->u.simple.nwords, " ");
    if (n->nredirs) {
      if (!n->u.simple.nassigns && !n->u.simple.nwords) {
        pr_redir(p, &n->redirs[0]);
        for (size_t i = 1; i < n->nredirs; i++) {
          g_string_append_c(g, ' ');
          pr_redir(p, &n->redirs[i]);
        }
      } else {
        pr_redirs(p, n);
      }
    }
    return;
  }
  case N_PIPE:
    for (size_t i = 0; i < n->u.pipe.n; i++) {
      if (i) g_string_append(g, n->u.pipe.errpipe[i - 1] ? " |& " : " | ");
      p->skip_indent++;
      pr_node(p, n->u.pipe.cmds[i]);
    }
    return;
  case N_AND:
  case N_OR:
    p->skip_indent++;
    pr_node(p, n->u.bin.left);
    g_string_append(g, n->kind == N_AND ? " && " : " || ");
    p->skip_indent++;
    pr_node(p, n->u.bin.right);
    return;
  case N_TIME:
    g_string_append(g, n->u.un.posix_time ? "time -p " : "time ");
    p->skip_indent++;
    pr_node(p, n->u.un.child);
    return;
  case N_NOT:
    g_string_append(g, "! ");
    p->skip_indent++;
    pr_node(p, n->u.un.child);
    return;
  case N_BACKGROUND:
    p->skip_indent++;
    pr_node(p, n->u.un.child);
    g_string_append(g, " &");
    return;
  case N_SUBSHELL:
    g_string_append(g, "( ");
    p->skip_indent++;
    pr_node(p, n->u.un.child);
    flush_docs(p);
    g_string_append(g, " )");
    break;
  case N_GROUP:
    g_string_append(g, "{ \n");
    p->indent += 4;
    pr_node(p, n->u.un.child);
    flush_docs(p);
    g_string_append_c(g, '\n');
    p->indent -= 4;
    indent(p);
    g_string_append_c(g, '}');
    break;
  case N_IF: {
    pr_test(p, "if ", n->u.ifn.cond, " then\n");
    pr_body(p, n->u.ifn.then);
    if (n->u.ifn.els) {
      semicolon(p);
      newline(p, "else\n");
      pr_body(p, n->u.ifn.els);
    }
    semicolon(p);
    newline(p, "fi");
    break;
  }
  case N_WHILE:
  case N_UNTIL:
    pr_test(p, n->kind == N_WHILE ? "while " : "until ", n->u.loop.cond, " do\n");
    pr_loop_body(p, n->u.loop.body);
    break;
  case N_FOR:
    g_string_append_printf(g, "for %s in ", n->u.forn.var);
    if (n->u.forn.in)
      pr_words(p, n->u.forn.words, n->u.forn.nwords, " ");
    else
      g_string_append(g, "\"$@\"");
    g_string_append_c(g, ';');
    newline(p, "do\n");
    pr_loop_body(p, n->u.forn.body);
    break;
  case N_ARITH_FOR: {
    char *a = for_part(n->u.afor.init), *b = for_part(n->u.afor.cond),
         *c = for_part(n->u.afor.step);
    g_string_append_printf(g, "for ((%s; %s; %s))", a, b, c);
    g_free(a);
    g_free(b);
    g_free(c);
    newline(p, "do\n");
    pr_loop_body(p, n->u.afor.body);
    break;
  }
  case N_CASE:
    g_string_append_printf(g, "case %s in ", n->u.casen.word->text);
    p->indent += 4;
    for (size_t i = 0; i < n->u.casen.nitems; i++) {
      CaseItem *it = &n->u.casen.items[i];
      newline(p, "");
      pr_words(p, it->pats, it->npats, " | ");
      g_string_append(g, ")\n");
      p->indent += 4;
      pr_node(p, it->body);
      flush_docs(p);
      p->indent -= 4;
      newline(p, it->term == 1 ? ";&" : it->term == 2 ? ";;&" : ";;");
    }
    p->indent -= 4;
    newline(p, "esac");
    break;
  case N_FUNCDEF: pr_function(p, n, true); return;
  case N_ARITH: {
    char *e = trimmed(n->u.arith.expr);
    g_string_append_printf(g, "(( %s ))", e);
    g_free(e);
    break;
  }
  case N_COND:
    g_string_append(g, "[[ ");
    pr_cond(p, n->u.cond.c);
    g_string_append(g, " ]]");
    break;
  case N_SEQ: break;
  }
  pr_redirs(p, n);
}

char *box_function_text(Node *fn)
{
  Pr p = { g_string_new(NULL), 0, 0, false, g_ptr_array_new() };
  pr_function(&p, fn, false);
  g_ptr_array_free(p.docs, TRUE);
  return g_string_free(p.g, FALSE);
}

char *box_command_text(Node *n)
{
  Pr p = { g_string_new(NULL), 0, 0, false, g_ptr_array_new() };
  pr_node(&p, n);
  g_ptr_array_free(p.docs, TRUE);
  /* one line: the layout's line breaks become spaces */
  for (char *c = p.g->str; *c; c++)
    if (*c == '\n') *c = ' ';
  return g_string_free(p.g, FALSE);
}
