/* redir.c — redirections: the shell's descriptor table changed for one
 * command or compound and put back after it, here-documents and here-strings
 * as pre-filled pipes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

/* Only the slots in use are copied: every command saves the table. */
void box_saved_begin(Shell *sh, BoxSaved *s)
{
  s->nfd = sh->fd_high;
  memcpy(s->fd, sh->fd, (size_t)s->nfd * sizeof s->fd[0]);
  s->nopened = 0;
}

void box_saved_restore(Shell *sh, BoxSaved *s)
{
  memcpy(sh->fd, s->fd, (size_t)s->nfd * sizeof s->fd[0]);
  for (int i = s->nfd; i < sh->fd_high; i++) sh->fd[i] = -1;
  sh->fd_high = s->nfd;
  for (int i = 0; i < s->nopened; i++) close(s->opened[i]);
  s->nopened = 0;
}

static void saved_keep(BoxSaved *s, int fd)
{
  if (s && s->nopened < (int)G_N_ELEMENTS(s->opened)) s->opened[s->nopened++] = fd;
}

/* A pipe pre-filled with text (a writer child when it does not fit). */
static int text_fd(Shell *sh, const char *text, size_t len)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return -1;
  if (len <= 60000) {
    box_write_all(p[1], text, len);
    close(p[1]);
    return p[0];
  }
  pid_t pid = box_fork(sh);
  if (pid == 0) {
    close(p[0]);
    box_write_all(p[1], text, len);
    _exit(0);
  }
  close(p[1]);
  if (pid > 0) {
    BoxJob j = { pid, 0, false, g_strdup("heredoc"), NULL };
    g_array_append_val(sh->jobs, j);
  }
  return p[0];
}

static bool all_digits(const char *s)
{
  if (!*s) return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return false;
  return true;
}

/* {NAME}>…: the lowest free descriptor from 10, NAME set to it; for
 * {NAME}>&- the one NAME holds is closed (BOX_NFD: nothing left to do). */
static int name_fd(Shell *sh, const Redir *r)
{
  bool close_it =
    (r->kind == R_DUP_OUT || r->kind == R_DUP_IN) && r->word && strcmp(r->word->text, "-") == 0;
  if (close_it) {
    const char *v = box_var_get(sh, r->varname);
    long k = v && all_digits(v) ? strtol(v, NULL, 10) : -1;
    if (k < 0 || k >= BOX_NFD || sh->fd[k] < 0) {
      box_sh_error(sh, "%s: Bad file descriptor", v ? v : r->varname);
      return -1;
    }
    close(sh->fd[k]);
    sh->fd[k] = -1;
    return BOX_NFD;
  }
  for (int k = 10; k < BOX_NFD; k++) {
    if (sh->fd[k] >= 0) continue;
    char num[16];
    g_snprintf(num, sizeof num, "%d", k);
    if (!box_var_set(sh, r->varname, num)) return -1;
    return k;
  }
  box_sh_error(sh, "%s: too many open files", r->varname);
  return -1;
}

bool box_apply_redirs(Shell *sh, const Redir *rs, size_t n, BoxSaved *sv)
{
  for (size_t i = 0; i < n; i++) {
    const Redir *r = &rs[i];
    int target = r->fd;
    if (target < 0)
      target = (r->kind == R_IN || r->kind == R_RDWR || r->kind == R_DUP_IN ||
                r->kind == R_HEREDOC || r->kind == R_HERESTR)
                 ? 0
                 : 1;
    if (r->varname) {
      target = name_fd(sh, r);
      if (target < 0) return false;
      if (target == BOX_NFD) continue; /* {fd}>&- done */
    }
    if (target >= BOX_NFD) {
      box_sh_error(sh, "%d: Bad file descriptor", target);
      return false;
    }
    if (target >= sh->fd_high) sh->fd_high = target + 1;
    int st = 1;
    if (r->kind == R_HEREDOC) {
      char *body = r->quoted ? g_strdup(r->doc->body) : box_expand_heredoc(sh, r->doc->body, &st);
      if (!body) {
        box_expansion_failed(sh, st);
        return false;
      }
      int fd = text_fd(sh, body, strlen(body));
      g_free(body);
      if (fd < 0) return false;
      saved_keep(sv, fd);
      sh->fd[target] = fd;
      continue;
    }
    char *t;
    if (r->word->flags & W_PLAIN) {
      t = g_strdup(r->word->text);
    } else if (r->kind == R_HERESTR) {
      t = box_expand_str(sh, r->word->text, false, &st);
      if (!t) {
        box_expansion_failed(sh, st);
        return false;
      }
    } else {
      GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
      Word *w = r->word;
      if (!box_expand_words(sh, &w, 1, f, &st)) {
        g_ptr_array_free(f, TRUE);
        box_expansion_failed(sh, st);
        return false;
      }
      if (f->len != 1) {
        box_sh_error(sh, "%s: ambiguous redirect", r->word->text);
        g_ptr_array_free(f, TRUE);
        return false;
      }
      t = g_strdup(f->pdata[0]);
      g_ptr_array_free(f, TRUE);
    }
    if (r->kind == R_HERESTR) {
      size_t l = strlen(t);
      char *b = g_malloc(l + 2);
      memcpy(b, t, l);
      b[l] = '\n';
      b[l + 1] = 0;
      int fd = text_fd(sh, b, l + 1);
      g_free(b);
      g_free(t);
      if (fd < 0) return false;
      saved_keep(sv, fd);
      sh->fd[target] = fd;
      continue;
    }
    RedirKind kind = r->kind;
    if (kind == R_DUP_IN || kind == R_DUP_OUT) {
      if (strcmp(t, "-") == 0) {
        sh->fd[target] = -1;
        g_free(t);
        continue;
      }
      size_t tl = strlen(t);
      bool move = tl > 1 && t[tl - 1] == '-';
      if (move) t[tl - 1] = 0;
      if (all_digits(t)) {
        long src = strtol(t, NULL, 10);
        if (src >= BOX_NFD || sh->fd[src] < 0) {
          box_sh_error(sh, "%s: Bad file descriptor", t);
          g_free(t);
          return false;
        }
        sh->fd[target] = sh->fd[src];
        if (move && src != target) sh->fd[src] = -1;
        g_free(t);
        continue;
      }
      if (kind == R_DUP_OUT && r->fd < 0) {
        kind = R_OUT_ERR;
      } else {
        box_sh_error(sh, "%s: ambiguous redirect", t);
        g_free(t);
        return false;
      }
    }
    int flags;
    switch (kind) {
    case R_IN: flags = O_RDONLY; break;
    case R_RDWR: flags = O_RDWR | O_CREAT; break;
    case R_APPEND:
    case R_APPEND_ERR: flags = O_WRONLY | O_CREAT | O_APPEND; break;
    case R_OUT:
    case R_OUT_ERR:
      flags = O_WRONLY | O_CREAT | O_TRUNC;
      if (sh->opts & O_NOCLOBBER) flags = O_WRONLY | O_CREAT | O_EXCL;
      break;
    default: flags = O_WRONLY | O_CREAT | O_TRUNC; break;
    }
    int fd = box_open_file(t, flags);
    if (fd < 0 && errno == EEXIST && (sh->opts & O_NOCLOBBER)) {
      /* noclobber allows non-regular files such as /dev/null */
      int probe = box_open_file(t, O_WRONLY);
      if (probe >= 0 && (strncmp(t, "/dev/", 5) == 0)) {
        fd = probe;
      } else {
        if (probe >= 0) close(probe);
        box_sh_error(sh, "%s: cannot overwrite existing file", t);
        g_free(t);
        return false;
      }
    }
    if (fd < 0) {
      int e = errno;
      char *text = box_error_text(sh, e);
      box_sh_error(sh, "%s: %s", t, text);
      g_free(text);
      g_free(t);
      return false;
    }
    g_free(t);
    saved_keep(sv, fd);
    if (kind == R_OUT_ERR || kind == R_APPEND_ERR) {
      sh->fd[1] = fd;
      sh->fd[2] = fd;
    } else {
      sh->fd[target] = fd;
    }
  }
  return true;
}
