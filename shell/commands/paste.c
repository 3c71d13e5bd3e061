/* paste.c — GNU paste: files side by side, or -s one file per line;
 * -d LIST (\n \t \\ \0 escapes, used in turn), -z. */
#include <errno.h>
#include <string.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "delimiters=d: serial=s zero-terminated=z";

/* Decodes the list; an entry of length 0 is "\0" (no delimiter). */
static GPtrArray *parse_delims(const char *s)
{
  GPtrArray *v = g_ptr_array_new_with_free_func(g_free);
  for (const char *p = s; *p; p++) {
    char ch = *p;
    if (ch == '\\' && p[1]) {
      p++;
      switch (*p) {
      case 'n': ch = '\n'; break;
      case 't': ch = '\t'; break;
      case '0': g_ptr_array_add(v, g_strdup("")); continue;
      default: ch = *p; break;
      }
    }
    g_ptr_array_add(v, g_strndup(&ch, 1));
  }
  return v;
}

int box_cmd_paste(BoxCmd *c)
{
  const char *dl = "\t";
  bool serial = false;
  char eol = '\n';
  BX_EACH_OPTION (o, c, "paste", "d:sz", longopts) switch (o) {
    case 'd': dl = optarg; break;
    case 's': serial = true; break;
    case 'z': eol = 0; break;
    default: return 1;
    }
  GPtrArray *delims = parse_delims(dl);
  if (delims->len == 0) g_ptr_array_add(delims, g_strdup(""));
  int nf;
  char **names = bx_file_operands(c, &nf);
  int status = 0;
  int *fds = g_new0(int, nf);
  BxReader *rdv = g_new0(BxReader, nf);
  BxReader **rd = g_new0(BxReader *, nf);
  bool *open_ = g_new0(bool, nf);
  for (int i = 0; i < nf; i++) {
    /* the same "-" given twice shares stdin */
    rd[i] = &rdv[i];
    if (!strcmp(names[i], "-")) {
      int k = 0;
      while (k < i && strcmp(names[k], "-")) k++;
      if (k < i) {
        rd[i] = rd[k];
        fds[i] = -1;
        continue;
      }
    }
    fds[i] = bx_open_in(c, names[i]);
    if (fds[i] < 0) {
      bx_ferr(c, "paste", names[i], errno);
      status = 1;
      goto out;
    }
    open_[i] = true;
    bx_reader_init(rd[i], fds[i]);
  }
  const char *rec;
  size_t len;
  if (serial) {
    for (int i = 0; i < nf; i++) {
      guint k = 0;
      bool any = false;
      while (bx_reader_next(rd[i], eol, &rec, &len)) {
        if (any) {
          const char *d = g_ptr_array_index(delims, k);
          bx_put(c, d, strlen(d));
          k = (k + 1) % delims->len;
        }
        if (len && rec[len - 1] == eol) len--;
        bx_put(c, rec, len);
        any = true;
      }
      box_out_putc(c->out, eol);
    }
  } else {
    int left = nf;
    bool *done = g_new0(bool, nf);
    for (;;) {
      GString *line = g_string_new(NULL);
      bool got = false;
      for (int i = 0; i < nf; i++) {
        if (!done[i]) {
          if (bx_reader_next(rd[i], eol, &rec, &len)) {
            if (len && rec[len - 1] == eol) len--;
            g_string_append_len(line, rec, len);
            got = true;
          } else {
            done[i] = true;
            left--;
          }
        }
        if (i < nf - 1) {
          const char *d = g_ptr_array_index(delims, (guint)i % delims->len);
          g_string_append(line, d);
        }
      }
      if (got) {
        bx_put(c, line->str, line->len);
        box_out_putc(c->out, eol);
      }
      g_string_free(line, TRUE);
      if (!got || left == 0) break;
    }
    g_free(done);
  }
out:
  for (int i = 0; i < nf; i++)
    if (open_[i]) {
      bx_reader_free(&rdv[i]);
      bx_close_in(c, fds[i]);
    }
  g_free(fds);
  g_free(rd);
  g_free(rdv);
  g_free(open_);
  g_ptr_array_free(delims, TRUE);
  return status;
}
