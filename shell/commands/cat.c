/* cat.c — `cat [-n] [FILE|-]...`: open(2)/read(2) only, never stat. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

typedef struct {
  bool number;
  long line;
  bool at_line_start;
} CatState;

static void emit(BoxCmd *c, CatState *st, const char *buf, size_t n) {
  if (!st->number) {
    box_out_write(c->out, buf, n);
    return;
  }
  size_t i = 0;
  while (i < n) {
    if (st->at_line_start) {
      box_out_printf(c->out, "%6ld\t", ++st->line);
      st->at_line_start = false;
    }
    const char *nl = memchr(buf + i, '\n', n - i);
    size_t end = nl ? (size_t)(nl - buf) + 1 : n;
    box_out_write(c->out, buf + i, end - i);
    if (nl) st->at_line_start = true;
    i = end;
  }
}

static void usage_error(BoxCmd *c, const char *what) {
  box_fdprintf(c->err, "cat: %s\nTry 'cat --help' for more information.\n", what);
}

int box_cmd_cat(BoxCmd *c) {
  CatState st = { false, 0, true };
  GPtrArray *files = g_ptr_array_new();
  bool opts = true;
  for (int i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (opts && strcmp(a, "--") == 0) { opts = false; continue; }
    if (opts && a[0] == '-' && a[1] == '-') {
      if (strcmp(a, "--number") == 0) { st.number = true; continue; }
      char *m = g_strdup_printf("unrecognized option '%s'", a);
      usage_error(c, m);
      g_free(m);
      g_ptr_array_free(files, TRUE);
      return 1;
    }
    if (opts && a[0] == '-' && a[1]) {
      for (const char *p = a + 1; *p; p++) {
        if (*p == 'n') st.number = true;
        else if (*p == 'u') continue;
        else {
          char *m = g_strdup_printf("invalid option -- '%c'", *p);
          usage_error(c, m);
          g_free(m);
          g_ptr_array_free(files, TRUE);
          return 1;
        }
      }
      continue;
    }
    g_ptr_array_add(files, (gpointer)a);
  }
  if (files->len == 0) g_ptr_array_add(files, (gpointer)"-");

  int status = 0;
  char *buf = g_malloc(65536);
  for (guint f = 0; f < files->len; f++) {
    const char *name = files->pdata[f];
    bool is_stdin = strcmp(name, "-") == 0;
    int fd = is_stdin ? c->in : box_open_file(name, O_RDONLY);
    if (fd < 0) {
      box_file_error(c, "cat", name, is_stdin ? EBADF : errno);
      status = 1;
      continue;
    }
    for (;;) {
      ssize_t n = read(fd, buf, 65536);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        box_file_error(c, "cat", name, errno);
        status = 1;
        break;
      }
      if (n == 0) break;
      emit(c, &st, buf, (size_t)n);
      if (c->out->error) break;
    }
    if (!is_stdin) close(fd);
    if (c->out->error) {
      box_fdprintf(c->err, "cat: write error: %s\n", g_strerror(c->out->err));
      status = 1;
      break;
    }
  }
  g_free(buf);
  g_ptr_array_free(files, TRUE);
  return status;
}
