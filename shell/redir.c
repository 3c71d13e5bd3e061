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
  memset(s->touched, 0, sizeof s->touched);
  memset(s->copies, 0, sizeof s->copies);
  s->nopened = 0;
  s->up = sh->saved;
  sh->saved = s;
}

void box_saved_keep(Shell *sh, BoxSaved *s)
{
  sh->saved = s->up;
}

void box_saved_touch(BoxSaved *s, int slot)
{
  if (s) s->touched[slot / 64] |= UINT64_C(1) << (slot % 64);
}

static bool touched(const BoxSaved *s, int slot)
{
  return s->touched[slot / 64] >> (slot % 64) & 1;
}

/* Slot is a redirection's copy of what it replaced (take_slot), for a
 * table still to be put back. */
static bool live_copy(const Shell *sh, int slot)
{
  for (const BoxSaved *s = sh->saved; s; s = s->up)
    if (s->copies[slot / 64] >> (slot % 64) & 1) return true;
  return false;
}

/* A redirection of sv's about to change slot: put back afterwards, and
 * what the slot held shown meanwhile at the lowest free number from 10,
 * where bash keeps its copy of it (`f() { echo >&10; }; f >fo` writes to
 * the stdout f was called with). */
static void take_slot(Shell *sh, BoxSaved *sv, int slot)
{
  if (!sv || touched(sv, slot)) return;
  box_saved_touch(sv, slot);
  if (slot >= sh->fd_high || sh->fd[slot] < 0) return;
  for (int k = BOX_OWN_FD_MIN; k < BOX_NFD; k++) {
    if (k < sh->fd_high && sh->fd[k] >= 0) continue;
    box_saved_touch(sv, k);
    sv->copies[k / 64] |= UINT64_C(1) << (k % 64);
    sh->fd[k] = sh->fd[slot];
    if (k >= sh->fd_high) sh->fd_high = k + 1;
    return;
  }
}

/* Whether real descriptor fd is in the table at any number. */
static bool in_table(const Shell *sh, int fd)
{
  for (int i = 0; i < sh->fd_high; i++)
    if (sh->fd[i] == fd) return true;
  return false;
}

/* Only the slots the redirections named are put back, as bash's: what an
 * `exec` inside did to the others stays (`f() { exec 8>&1; }; f >log`
 * leaves 8 on log, `{ exec 4<&-; } 6>g` leaves 4 closed).  What they
 * opened is closed unless such an exec kept it. */
void box_saved_restore(Shell *sh, BoxSaved *s)
{
  for (int w = 0; w < (int)G_N_ELEMENTS(s->touched); w++)
    for (uint64_t bits = s->touched[w]; bits; bits &= bits - 1) {
      int i = w * 64 + __builtin_ctzll(bits);
      sh->fd[i] = i < s->nfd ? s->fd[i] : -1;
    }
  while (sh->fd_high > 3 && sh->fd[sh->fd_high - 1] < 0) sh->fd_high--;
  for (int i = 0; i < s->nopened; i++)
    if (!in_table(sh, s->opened[i])) close(s->opened[i]);
  s->nopened = 0;
  sh->saved = s->up;
}

/* Real descriptor fd, which `exec` just took out of the table: closed, as
 * bash closes `exec 7>&-`'s 7 (a pipe's reader sees its end; python3 finds
 * 7 closed), unless the table still holds it at another number, a table
 * to put back will put it back, or it is the worker's own 0-2.  A table
 * to put back that opened it then no longer closes it. */
static void drop_real(Shell *sh, int fd)
{
  if (fd <= 2 || in_table(sh, fd)) return;
  for (const BoxSaved *s = sh->saved; s; s = s->up)
    for (int i = 0; i < s->nfd; i++)
      if (s->fd[i] == fd && touched(s, i)) return;
  for (guint i = 0; sh->procsub_fds && i < sh->procsub_fds->len; i++)
    if (g_array_index(sh->procsub_fds, int, i) == fd) return;
  for (BoxSaved *s = sh->saved; s; s = s->up)
    for (int i = 0; i < s->nopened; i++)
      if (s->opened[i] == fd) s->opened[i--] = s->opened[--s->nopened];
  close(fd);
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
 * {NAME}>&- the one NAME holds is closed (BOX_NFD: nothing left to do):
 * as bash's, quietly when it is closed already, and NAME unset, empty or
 * negative is an ambiguous redirect. */
static bool closes(const Redir *r)
{
  return (r->kind == R_DUP_OUT || r->kind == R_DUP_IN) && r->word &&
         strcmp(r->word->text, "-") == 0;
}

static int name_fd(Shell *sh, const Redir *r, BoxSaved *sv)
{
  if (closes(r)) {
    const char *v = box_var_get(sh, r->varname);
    if (!v || !*v || *v == '-') {
      box_sh_error(sh, "%s: ambiguous redirect", r->varname);
      return -1;
    }
    long k = all_digits(v) ? strtol(v, NULL, 10) : BOX_NFD;
    if (k < BOX_NFD) {
      take_slot(sh, sv, (int)k);
      sh->fd[k] = -1; /* closed for real by box_apply_redirs under exec */
    }
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

/* Slot takes real descriptor fd, put back after sv. */
static void set_slot(Shell *sh, BoxSaved *sv, int slot, int fd)
{
  take_slot(sh, sv, slot);
  sh->fd[slot] = fd;
}

/* One redirection applied to the table (what it opens is sv's to close). */
static bool apply_one(Shell *sh, const Redir *r, BoxSaved *sv)
{
  int target = r->fd;
  if (target < 0)
    target = (r->kind == R_IN || r->kind == R_RDWR || r->kind == R_DUP_IN || r->kind == R_HEREDOC ||
              r->kind == R_HERESTR)
               ? 0
               : 1;
  if (r->varname) {
    target = name_fd(sh, r, sv);
    if (target < 0) return false;
    if (target == BOX_NFD) return true; /* {fd}>&- done */
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
    set_slot(sh, sv, target, fd);
    return true;
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
    set_slot(sh, sv, target, fd);
    return true;
  }
  RedirKind kind = r->kind;
  if (kind == R_DUP_IN || kind == R_DUP_OUT) {
    if (strcmp(t, "-") == 0) {
      set_slot(sh, sv, target, -1);
      g_free(t);
      return true;
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
      set_slot(sh, sv, target, sh->fd[src]);
      if (move && src != target) {
        take_slot(sh, sv, (int)src);
        sh->fd[src] = -1;
      }
      g_free(t);
      return true;
    }
    /* `>&word` and `1>&word` (bash reads both alike): stdout and stderr to a file */
    if (kind == R_DUP_OUT && (r->fd < 0 || r->fd == 1)) {
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
    set_slot(sh, sv, 1, fd);
    set_slot(sh, sv, 2, fd);
  } else {
    set_slot(sh, sv, target, fd);
  }
  return true;
}

/* drop_real for each of fds[0…n) (a table's slots) the table no longer holds. */
static void drop_unheld(Shell *sh, const int *fds, int n)
{
  for (int k = 0; k < n; k++) {
    bool seen = false;
    for (int j = 0; j < k && !seen; j++) seen = fds[j] == fds[k];
    if (fds[k] >= 0 && !seen) drop_real(sh, fds[k]);
  }
}

bool box_apply_redirs(Shell *sh, const Redir *rs, size_t n, BoxSaved *sv)
{
  if (sv) {
    /* {NAME}>… outlives its command, as bash's (without varredir_close);
     * a command's {NAME}>&- closes it for that command only */
    for (size_t i = 0; i < n; i++)
      if (!apply_one(sh, &rs[i], rs[i].varname && !closes(&rs[i]) ? NULL : sv)) return false;
    return true;
  }
  /* exec: once all of them hold (a failed one puts the table back, as
   * bash does), what a slot held before is closed if nothing holds it */
  int before[BOX_NFD];
  int nb = sh->fd_high;
  memcpy(before, sh->fd, (size_t)nb * sizeof before[0]);
  for (size_t i = 0; i < n; i++) {
    int copy =
      rs[i].fd >= BOX_OWN_FD_MIN && !rs[i].varname && live_copy(sh, rs[i].fd) ? rs[i].fd : -1;
    int held = copy >= 0 ? sh->fd[copy] : -1;
    bool ok = apply_one(sh, &rs[i], NULL);
    if (copy >= 0 && sh->fd[copy] != held) {
      /* bash puts its copy straight back over exec's: the file is opened
       * (made, truncated) and the number goes on holding the copy */
      int fd = sh->fd[copy];
      sh->fd[copy] = held;
      if (fd >= 0 && !in_table(sh, fd)) close(fd);
    }
    if (ok) continue;
    int after[BOX_NFD];
    int na = sh->fd_high;
    memcpy(after, sh->fd, (size_t)na * sizeof after[0]);
    memcpy(sh->fd, before, (size_t)nb * sizeof before[0]);
    for (int k = nb; k < na; k++) sh->fd[k] = -1;
    sh->fd_high = nb;
    drop_unheld(sh, after, na); /* what the ones that held opened */
    return false;
  }
  drop_unheld(sh, before, nb);
  return true;
}
