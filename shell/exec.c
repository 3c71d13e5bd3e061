/* exec.c — the evaluator: lists, and/or, pipelines, simple commands,
 * redirections, and the decision protocol for every simple command. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/shell-private.h"

#define NFD 10

typedef struct {
  int map[NFD];       /* fd as the command sees it → real descriptor, or -1 */
  int opened[2 * NFD + 4];
  int nopened;
} FdMap;

static void fdmap_init(FdMap *m, BoxIO io) {
  for (int i = 0; i < NFD; i++) m->map[i] = -1;
  m->map[0] = io.in;
  m->map[1] = io.out;
  m->map[2] = io.err;
  m->nopened = 0;
}

static void fdmap_close(FdMap *m) {
  for (int i = 0; i < m->nopened; i++) close(m->opened[i]);
  m->nopened = 0;
}

static bool all_digits(const char *s) {
  if (!*s) return false;
  for (; *s; s++) if (*s < '0' || *s > '9') return false;
  return true;
}

/* Opens the redirections left to right.  On failure prints the message on
 * err_fd and returns false (status 1); what was opened stays in m. */
static bool open_redirs(Shell *sh, const Redir *rs, size_t n, FdMap *m, int err_fd) {
  for (size_t i = 0; i < n; i++) {
    const Redir *r = &rs[i];
    GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
    int st = 1;
    if (!box_expand_words(sh, (Word **)&r->word, 1, f, err_fd, &st)) {
      g_ptr_array_free(f, TRUE);
      return false;
    }
    if (f->len != 1) {
      box_fdprintf(err_fd, "strands-shell: %s: ambiguous redirect\n", r->word->raw);
      g_ptr_array_free(f, TRUE);
      return false;
    }
    const char *target = f->pdata[0];
    RedirKind kind = r->kind;
    if (r->fd >= NFD) {
      box_fdprintf(err_fd, "strands-shell: %d: Bad file descriptor\n", r->fd);
      g_ptr_array_free(f, TRUE);
      return false;
    }
    if (kind == R_DUP_IN || kind == R_DUP_OUT) {
      if (strcmp(target, "-") == 0) {
        m->map[r->fd] = -1;
        g_ptr_array_free(f, TRUE);
        continue;
      }
      if (all_digits(target)) {
        long src = strtol(target, NULL, 10);
        if (src >= NFD || m->map[src] < 0) {
          box_fdprintf(err_fd, "strands-shell: %s: Bad file descriptor\n", target);
          g_ptr_array_free(f, TRUE);
          return false;
        }
        m->map[r->fd] = m->map[src];
        g_ptr_array_free(f, TRUE);
        continue;
      }
      if (kind == R_DUP_OUT && r->fd == 1) {
        kind = R_OUT_ERR;  /* bash: >&file is &>file */
      } else {
        box_fdprintf(err_fd, "strands-shell: %s: ambiguous redirect\n", r->word->raw);
        g_ptr_array_free(f, TRUE);
        return false;
      }
    }
    int flags;
    switch (kind) {
    case R_IN: flags = O_RDONLY; break;
    case R_RDWR: flags = O_RDWR | O_CREAT; break;
    case R_APPEND: case R_APPEND_ERR: flags = O_WRONLY | O_CREAT | O_APPEND; break;
    default: flags = O_WRONLY | O_CREAT | O_TRUNC; break;
    }
    int fd = box_open_file(target, flags);
    if (fd < 0) {
      int e = errno;
      char *text = box_error_text(sh, e);
      box_fdprintf(err_fd, "strands-shell: %s: %s\n", target, text);
      g_free(text);
      g_ptr_array_free(f, TRUE);
      return false;
    }
    m->opened[m->nopened++] = fd;
    if (kind == R_OUT_ERR || kind == R_APPEND_ERR) {
      m->map[1] = fd;
      m->map[2] = fd;
    } else {
      m->map[r->fd] = fd;
    }
    g_ptr_array_free(f, TRUE);
  }
  return true;
}

typedef struct {
  char *name;
  char *old;
  bool had;
} SavedVar;

static int run_simple(Shell *sh, Node *n, BoxIO io) {
  int status = 0;
  GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
  if (!box_expand_words(sh, n->u.simple.words, n->u.simple.nwords, argv, io.err, &status)) {
    g_ptr_array_free(argv, TRUE);
    return status;
  }
  size_t na = n->u.simple.nassigns;
  char **values = g_new0(char *, na + 1);
  for (size_t i = 0; i < na; i++) {
    values[i] = box_expand_word_str(sh, n->u.simple.assigns[i].value, io.err, &status);
    if (!values[i]) {
      g_strfreev(values);
      g_ptr_array_free(argv, TRUE);
      return status;
    }
  }

  FdMap m;
  fdmap_init(&m, io);

  if (argv->len == 0) {
    for (size_t i = 0; i < na; i++) box_var_set(sh, n->u.simple.assigns[i].name, values[i]);
    g_strfreev(values);
    status = open_redirs(sh, n->u.simple.redirs, n->u.simple.nredirs, &m, io.err) ? 0 : 1;
    fdmap_close(&m);
    g_ptr_array_free(argv, TRUE);
    return status;
  }

  int argc = (int)argv->len;
  g_ptr_array_add(argv, NULL);
  char **av = (char **)argv->pdata;
  char *line = g_strjoinv(" ", av);
  BoxShellCommand cmd = { line, av[0], av, argc, sh->cwd };
  const BoxShellHost *host = sh->host;
  const BoxCommandDef *def = box_command_lookup(av[0]);

  if (def) {
    char *msg = NULL;
    bool permit = host && host->decide_exec ? host->decide_exec(host->data, &cmd, &msg) : true;
    if (!permit) {
      box_fdprintf(io.err, "strands-shell: effect denied: %s\n", msg ? msg : "policy denied this operation");
      free(msg);
      status = 126;
      goto done;
    }
    free(msg);
    if (!open_redirs(sh, n->u.simple.redirs, n->u.simple.nredirs, &m, io.err)) {
      status = 1;
      goto done;
    }
    SavedVar *saved = g_new0(SavedVar, na + 1);
    for (size_t i = 0; i < na; i++) {
      const char *name = n->u.simple.assigns[i].name;
      const char *old = box_var_get(sh, name);
      saved[i].name = g_strdup(name);
      saved[i].had = old != NULL;
      saved[i].old = g_strdup(old);
      box_var_set(sh, name, values[i]);
    }
    BoxOut out;
    box_out_init(&out, m.map[1]);
    BoxCmd c = { sh, argc, av, m.map[0], m.map[1], m.map[2], &out };
    status = def->fn(&c);
    if (!box_out_flush(&out) && status == 0) {
      box_fdprintf(m.map[2], "strands-shell: %s: write error: %s\n", av[0], g_strerror(out.err));
      status = 1;
    }
    for (size_t i = na; i-- > 0;) {
      if (saved[i].had) box_var_set(sh, saved[i].name, saved[i].old);
      else box_var_unset(sh, saved[i].name);
      g_free(saved[i].name);
      g_free(saved[i].old);
    }
    g_free(saved);
    goto done;
  }

  if (!open_redirs(sh, n->u.simple.redirs, n->u.simple.nredirs, &m, io.err)) {
    status = 1;
    goto done;
  }
  {
    int efd = m.map[2];
    BoxSpawnResult r = { BOX_SPAWN_NOT_FOUND, 127, NULL };
    if (host && host->spawn) r = host->spawn(host->data, &cmd, m.map[1], efd);
    switch (r.kind) {
    case BOX_SPAWN_RAN:
      status = r.status;
      break;
    case BOX_SPAWN_NOT_FOUND:
      box_fdprintf(efd, "strands-shell: %s: command not found\n", av[0]);
      status = 127;
      break;
    case BOX_SPAWN_DENIED:
      box_fdprintf(efd, "strands-shell: effect denied: %s\n", r.message ? r.message : "policy denied this operation");
      status = 126;
      break;
    case BOX_SPAWN_NO_TOOL:
    case BOX_SPAWN_FAILED:
    default:
      box_fdprintf(efd, "strands-shell: %s: %s\n", av[0], r.message ? r.message : "cannot run");
      status = 126;
      break;
    }
    free(r.message);
  }

done:
  fdmap_close(&m);
  g_strfreev(values);
  g_free(line);
  g_ptr_array_free(argv, TRUE);
  return status;
}

static int wait_status(pid_t pid) {
  int ws;
  while (waitpid(pid, &ws, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  if (WIFEXITED(ws)) return WEXITSTATUS(ws);
  if (WIFSIGNALED(ws)) return 128 + WTERMSIG(ws);
  return 1;
}

static G_NORETURN void child_exit(Shell *sh, int status) {
  if (sh->exiting) status = sh->exit_status;
  _exit(status & 255);
}

static int run_pipe(Shell *sh, Node *n, BoxIO io) {
  size_t k = n->u.pipe.n;
  pid_t *pids = g_new0(pid_t, k);
  int prev = -1;
  size_t started = 0;
  int status = 0;
  for (size_t i = 0; i < k; i++) {
    int p[2] = { -1, -1 };
    bool last = i + 1 == k;
    if (!last && pipe2(p, O_CLOEXEC) < 0) {
      box_fdprintf(io.err, "strands-shell: pipe: %s\n", g_strerror(errno));
      status = 1;
      break;
    }
    pid_t pid = fork();
    if (pid < 0) {
      box_fdprintf(io.err, "strands-shell: fork: %s\n", g_strerror(errno));
      if (p[0] >= 0) { close(p[0]); close(p[1]); }
      status = 1;
      break;
    }
    if (pid == 0) {
      signal(SIGPIPE, SIG_DFL);
      sh->in_child = true;
      if (p[0] >= 0) close(p[0]);
      BoxIO cio = { prev >= 0 ? prev : io.in, last ? io.out : p[1], io.err };
      int st = box_eval(sh, n->u.pipe.cmds[i], cio);
      child_exit(sh, st);
    }
    pids[started++] = pid;
    if (prev >= 0) close(prev);
    if (p[1] >= 0) close(p[1]);
    prev = p[0];
  }
  if (prev >= 0) close(prev);
  for (size_t i = 0; i < started; i++) {
    int st = wait_status(pids[i]);
    if (i + 1 == k) status = st;
  }
  g_free(pids);
  return status;
}

static int run_background(Shell *sh, Node *n, BoxIO io) {
  pid_t pid = fork();
  if (pid < 0) {
    box_fdprintf(io.err, "strands-shell: fork: %s\n", g_strerror(errno));
    return 1;
  }
  if (pid == 0) {
    sh->in_child = true;
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    BoxIO cio = { devnull, io.out, io.err };
    int st = box_eval(sh, n->u.un.child, cio);
    child_exit(sh, st);
  }
  g_array_append_val(sh->bg_pids, pid);
  sh->last_bg = pid;
  return 0;
}

void box_wait_background(Shell *sh) {
  for (guint i = 0; i < sh->bg_pids->len; i++) wait_status(g_array_index(sh->bg_pids, pid_t, i));
  g_array_set_size(sh->bg_pids, 0);
}

int box_eval(Shell *sh, Node *n, BoxIO io) {
  int status = 0;
  if (!n || sh->exiting) return sh->last_status;
  switch (n->kind) {
  case N_SIMPLE:
    status = run_simple(sh, n, io);
    break;
  case N_PIPE:
    status = run_pipe(sh, n, io);
    break;
  case N_SEQ:
    box_eval(sh, n->u.bin.left, io);
    if (sh->exiting) return sh->last_status;
    status = box_eval(sh, n->u.bin.right, io);
    break;
  case N_AND:
  case N_OR:
    status = box_eval(sh, n->u.bin.left, io);
    if (sh->exiting) return status;
    if ((status == 0) == (n->kind == N_AND)) status = box_eval(sh, n->u.bin.right, io);
    break;
  case N_NOT:
    status = box_eval(sh, n->u.un.child, io) == 0 ? 1 : 0;
    break;
  case N_BACKGROUND:
    status = run_background(sh, n, io);
    break;
  }
  sh->last_status = status;
  return status;
}
