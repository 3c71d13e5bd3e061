/* cat.c — `cat [-nbsAETvet] [FILE|-]...`: open(2)/read(2), and fstat(2)
 * only when the output is a regular file. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  bool number, nonblank, squeeze, ends, tabs, nonprint;
  long line;
  bool at_line_start;
  int blanks; /* consecutive empty lines seen (for -s) */
} CatState;

static bool cat_plain(const CatState *st)
{
  return !st->number && !st->nonblank && !st->squeeze && !st->ends && !st->tabs && !st->nonprint;
}

static void emit(BoxCmd *c, CatState *st, const char *buf, size_t n)
{
  if (cat_plain(st)) {
    box_out_write(c->out, buf, n);
    return;
  }
  GString *o = g_string_sized_new(n + n / 4 + 16);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)buf[i];
    if (st->at_line_start) {
      if (ch == '\n') {
        st->blanks++;
        if (st->squeeze && st->blanks > 1) continue;
      } else {
        st->blanks = 0;
      }
      if (st->nonblank ? ch != '\n' : st->number) g_string_append_printf(o, "%6ld\t", ++st->line);
      st->at_line_start = false;
    }
    if (ch == '\n') {
      if (st->ends) g_string_append_c(o, '$');
      g_string_append_c(o, '\n');
      st->at_line_start = true;
      continue;
    }
    if (ch == '\t') {
      if (st->tabs)
        g_string_append(o, "^I");
      else
        g_string_append_c(o, '\t');
      continue;
    }
    if (st->nonprint) {
      if (ch >= 128) {
        g_string_append(o, "M-");
        ch -= 128;
      }
      if (ch < 32) {
        g_string_append_c(o, '^');
        g_string_append_c(o, (char)(ch + 64));
        continue;
      }
      if (ch == 127) {
        g_string_append(o, "^?");
        continue;
      }
    }
    g_string_append_c(o, (char)ch);
  }
  box_out_write(c->out, o->str, o->len);
  g_string_free(o, TRUE);
}

/* Whether fd is the file out is, with some of it still to read. */
static bool same_unread(int fd, const struct stat *out)
{
  struct stat in;
  return fstat(fd, &in) == 0 && in.st_dev == out->st_dev && in.st_ino == out->st_ino &&
         lseek(fd, 0, SEEK_CUR) < in.st_size;
}

static void usage_error(BoxCmd *c, const char *what)
{
  box_fdprintf(c->err, "cat: %s\nTry 'cat --help' for more information.\n", what);
}

int box_cmd_cat(BoxCmd *c)
{
  CatState st = { false, false, false, false, false, false, 0, true, 0 };
  GPtrArray *files = g_ptr_array_new();
  bool opts = true;
  for (int i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (opts && strcmp(a, "--") == 0) {
      opts = false;
      continue;
    }
    if (opts && a[0] == '-' && a[1] == '-') {
      if (strcmp(a, "--number") == 0) {
        st.number = true;
        continue;
      }
      if (strcmp(a, "--number-nonblank") == 0) {
        st.nonblank = true;
        continue;
      }
      if (strcmp(a, "--squeeze-blank") == 0) {
        st.squeeze = true;
        continue;
      }
      if (strcmp(a, "--show-ends") == 0) {
        st.ends = true;
        continue;
      }
      if (strcmp(a, "--show-tabs") == 0) {
        st.tabs = true;
        continue;
      }
      if (strcmp(a, "--show-nonprinting") == 0) {
        st.nonprint = true;
        continue;
      }
      if (strcmp(a, "--show-all") == 0) {
        st.nonprint = st.ends = st.tabs = true;
        continue;
      }
      char *m = g_strdup_printf("unrecognized option '%s'", a);
      usage_error(c, m);
      g_free(m);
      g_ptr_array_free(files, TRUE);
      return 1;
    }
    if (opts && a[0] == '-' && a[1]) {
      for (const char *p = a + 1; *p; p++) {
        if (*p == 'n')
          st.number = true;
        else if (*p == 'b')
          st.nonblank = true;
        else if (*p == 's')
          st.squeeze = true;
        else if (*p == 'E')
          st.ends = true;
        else if (*p == 'T')
          st.tabs = true;
        else if (*p == 'v')
          st.nonprint = true;
        else if (*p == 'A')
          st.nonprint = st.ends = st.tabs = true;
        else if (*p == 'e')
          st.nonprint = st.ends = true;
        else if (*p == 't')
          st.nonprint = st.tabs = true;
        else if (*p == 'u')
          continue;
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
  if (files->len == 0) g_ptr_array_add(files, (gpointer) "-");

  int status = 0;
  char *buf = g_malloc(65536);
  struct stat out;
  bool out_reg = c->out_fd >= 0 && fstat(c->out_fd, &out) == 0 && S_ISREG(out.st_mode);
  for (guint f = 0; f < files->len; f++) {
    const char *name = files->pdata[f];
    bool is_stdin = strcmp(name, "-") == 0;
    int fd = is_stdin ? c->in : box_open_file(name, O_RDONLY);
    if (fd < 0) {
      box_file_error(c, "cat", name, is_stdin ? EBADF : errno);
      status = 1;
      continue;
    }
    if (out_reg && same_unread(fd, &out)) {
      /* GNU cat's refusal to copy a file onto itself (`cat f > f` in a
       * function whose output is f), which would never end */
      box_fdprintf(c->err, "cat: %s: input file is output file\n", name);
      if (!is_stdin) close(fd);
      status = 1;
      continue;
    }
    for (;;) {
      ssize_t n = bx_read(fd, buf, 65536);
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
    if (c->out->error && !(c->out->err == EPIPE && box_pipe_broke)) {
      box_fdprintf(c->err, "cat: write error: %s\n", box_strerror(c->out->err));
      status = 1;
      break;
    }
    if (c->out->error) break; /* status 141 (exec.c) */
  }
  g_free(buf);
  g_ptr_array_free(files, TRUE);
  return status;
}
