/* sed.c — GNU sed: -n -e -f -E/-r -i[SUFFIX] -s -z -l N; every command
 * (s y a i c d D p P n N g G h H x b t T : = l q Q r R w W z F { } #),
 * addresses N, $, /re/ and \cREc with I and M, first~step, ranges with
 * N, /re/, +N, ~N, and 0,/re/.  glibc regex (GNU operators) for BRE/ERE.
 * Files are read with open/read; -i rewrites the file in place (one read
 * and one write of the same path, no temporary file to rename). */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/sed.h"

/* ---- input --------------------------------------------------------------------------- */

static bool open_next_input(Sed *s)
{
  while (s->cur + 1 < s->ninputs) {
    s->cur++;
    const char *name = s->inputs[s->cur];
    int fd = bx_open_in(s->c, name);
    if (fd < 0) {
      g_autofree char *t = bx_errtext(s->c, errno);
      bx_err(s->c, "sed", "can't read %s: %s", name, t);
      s->status = 2;
      continue;
    }
    s->fd = fd;
    bx_reader_init(&s->rd, fd);
    s->rd_open = true;
    s->cur_name = name;
    return true;
  }
  return false;
}

static void close_input(Sed *s)
{
  if (!s->rd_open) return;
  if (s->rd.err) {
    g_autofree char *t = bx_errtext(s->c, s->rd.err);
    bx_err(s->c, "sed", "read error on %s: %s", s->cur_name, t);
    s->status = 2;
  }
  bx_reader_free(&s->rd);
  bx_close_in(s->c, s->fd);
  s->rd_open = false;
}

/* Reads one line into s->next (lookahead).  With separate files (-s, -i)
 * it does not cross into the next file. */
static bool fetch(Sed *s, bool cross)
{
  char delim = s->null_data ? '\0' : '\n';
  for (;;) {
    if (!s->rd_open) {
      if (!cross && s->cur >= 0) return false;
      if (!open_next_input(s)) return false;
    }
    const char *rec;
    size_t len;
    if (bx_reader_next(&s->rd, delim, &rec, &len)) {
      g_string_truncate(s->next, 0);
      s->next_has_nl = len && rec[len - 1] == delim;
      g_string_append_len(s->next, rec, s->next_has_nl ? len - 1 : len);
      return true;
    }
    close_input(s);
    if (!cross) return false;
  }
}

/* Moves the lookahead line into dst; false at the end of input. */
static bool read_line(Sed *s, GString *dst, bool append)
{
  if (!s->have_next) return false;
  if (append)
    g_string_append_c(dst, s->null_data ? '\0' : '\n');
  else
    g_string_truncate(dst, 0);
  g_string_append_len(dst, s->next->str, s->next->len);
  s->cur_has_nl = s->next_has_nl;
  s->lineno++;
  s->have_next = fetch(s, !s->separate);
  return true;
}

static bool is_last(Sed *s)
{
  return !s->have_next;
}

/* ---- output ----------------------------------------------------------------------------- */

/* Output of the script: a line printed without its newline (the input's
 * last line had none) gets one as soon as anything follows, as GNU does. */
static void sout(Sed *s, const void *p, size_t n)
{
  if (n == 0) return;
  if (s->missing_nl) {
    box_out_putc(s->out, s->null_data ? '\0' : '\n');
    s->missing_nl = false;
  }
  box_out_write(s->out, p, n);
}

static void soutf(Sed *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void soutf(Sed *s, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *t = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  sout(s, t, strlen(t));
  g_free(t);
}

static void emit(Sed *s, BoxOut *o, const char *p, size_t n, bool nl)
{
  (void)o;
  if (s->missing_nl) {
    box_out_putc(s->out, s->null_data ? '\0' : '\n');
    s->missing_nl = false;
  }
  box_out_write(s->out, p, n);
  if (nl)
    box_out_putc(s->out, s->null_data ? '\0' : '\n');
  else
    s->missing_nl = true;
}

static void write_file(Sed *s, OutFile *f, const char *p, size_t n)
{
  if (f->fd == -2) {
    emit(s, s->out, p, n, true);
    return;
  }
  if (f->fd < 0) return;
  box_out_flush(s->out);
  box_write_all(f->fd, p, n);
  box_write_all(f->fd, s->null_data ? "" : "\n", 1);
}

static void print_ps(Sed *s)
{
  emit(s, s->out, s->ps->str, s->ps->len, s->cur_has_nl || s->have_next);
}

static void flush_append(Sed *s)
{
  if (s->append->len) sout(s, s->append->str, s->append->len);
  g_string_truncate(s->append, 0);
  for (guint i = 0; i < s->rqueue->len; i++) {
    const char *name = s->rqueue->pdata[i];
    int fd = strcmp(name, "/dev/stdin") == 0 ? s->c->in : box_open_file(name, O_RDONLY);
    if (fd < 0) continue;
    GString *d = g_string_new(NULL);
    bx_read_all(fd, d);
    if (fd != s->c->in) close(fd);
    sout(s, d->str, d->len);
    g_string_free(d, TRUE);
  }
  g_ptr_array_set_size(s->rqueue, 0);
}

static void cmd_l(Sed *s, unsigned long width)
{
  if (width == (unsigned long)-1) width = s->lwidth;
  GString *o = g_string_new(NULL);
  size_t col = 0;
  for (size_t i = 0; i < s->ps->len; i++) {
    unsigned char ch = (unsigned char)s->ps->str[i];
    char tmp[8];
    const char *e = NULL;
    if (ch == '\\')
      e = "\\\\";
    else if (!(e = bx_escape_name(ch))) {
      if (ch < 0x20 || ch >= 0x7f)
        g_snprintf(tmp, sizeof tmp, "\\%03o", ch);
      else {
        tmp[0] = (char)ch;
        tmp[1] = 0;
      }
      e = tmp;
    }
    size_t w = strlen(e);
    if (width > 1 && col + w > width - 1) {
      g_string_append(o, "\\\n");
      col = 0;
    }
    g_string_append(o, e);
    col += w;
  }
  g_string_append(o, "$\n");
  sout(s, o->str, o->len);
  g_string_free(o, TRUE);
}

/* ---- s ------------------------------------------------------------------------------------ */

static void append_case(GString *dst, const char *p, size_t n, int *one, int mode)
{
  /* no \U, \L, \u or \l in force (nearly every replacement): the bytes as
   * they are, in one copy rather than one call per byte */
  if (!*one && !mode) {
    g_string_append_len(dst, p, (gssize)n);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    char ch = p[i];
    if (*one == 'u') {
      ch = g_ascii_toupper(ch);
      *one = 0;
    } else if (*one == 'l') {
      ch = g_ascii_tolower(ch);
      *one = 0;
    } else if (mode == 'U')
      ch = g_ascii_toupper(ch);
    else if (mode == 'L')
      ch = g_ascii_tolower(ch);
    g_string_append_c(dst, ch);
  }
}

static void expand_rep(const SedCmd *c, const char *base, regmatch_t *m, GString *dst)
{
  int one = 0, mode = 0;
  for (size_t i = 0; i < c->rep_len; i++) {
    char ch = c->rep[i];
    if (ch == '&') {
      append_case(dst, base + m[0].rm_so, (size_t)(m[0].rm_eo - m[0].rm_so), &one, mode);
      continue;
    }
    size_t used;
    int nb = ch == '\\' ? bx_sed_num_escape(c->rep + i, c->rep_len - i, &used) : -1;
    if (nb >= 0) {
      ch = (char)nb; /* a literal byte: \x26 is `&` itself */
      i += used - 1;
    } else if (ch == '\\' && i + 1 < c->rep_len) {
      char e = c->rep[++i];
      if (e >= '0' && e <= '9') {
        int k = e - '0';
        if (m[k].rm_so >= 0)
          append_case(dst, base + m[k].rm_so, (size_t)(m[k].rm_eo - m[k].rm_so), &one, mode);
        continue;
      }
      int b = bx_escape_byte(e, "ntrafv");
      if (b >= 0)
        ch = (char)b;
      else
        switch (e) {
        case 'L':
        case 'U':
          mode = e;
          one = 0;
          continue;
        case 'E':
          mode = 0;
          one = 0;
          continue;
        case 'l':
        case 'u': one = e; continue;
        default: ch = e; break;
        }
    }
    if (!one && !mode)
      g_string_append_c(dst, ch); /* inline: a plain byte of the text */
    else
      append_case(dst, &ch, 1, &one, mode);
  }
}

static regex_t *use_re(Sed *s, regex_t *re)
{
  if (re)
    s->last_re = re;
  else if (!s->last_re) {
    bx_err(s->c, "sed", "no previous regular expression");
    s->quit = true;
    s->exit_status = 1;
    return NULL;
  }
  return s->last_re;
}

static bool match_at(regex_t *re, const char *str, size_t len, size_t from, regmatch_t *m,
                     size_t nm)
{
  const SedRe *sr = (const SedRe *)re;
  if (sr->literal) {
    const char *hit = memmem(str + from, len - from, sr->literal, sr->literal_len);
    if (!hit) return false;
    m[0].rm_so = (regoff_t)(hit - str);
    m[0].rm_eo = m[0].rm_so + (regoff_t)sr->literal_len;
    for (size_t k = 1; k < nm; k++) m[k].rm_so = m[k].rm_eo = -1;
    return true;
  }
  m[0].rm_so = (regoff_t)from;
  m[0].rm_eo = (regoff_t)len;
  return regexec(re, str, nm, m, REG_STARTEND | (from > 0 ? REG_NOTBOL : 0)) == 0;
}

static bool do_s(Sed *s, SedCmd *c)
{
  regex_t *re = use_re(s, c->re);
  if (!re) return false;
  const char *str = s->ps->str;
  size_t len = s->ps->len;
  regmatch_t m[10];
  GString *out = NULL;
  size_t pos = 0, copied = 0;
  unsigned long count = 0;
  bool did = false;
  bool prev_nonempty_end_valid = false;
  size_t prev_end = 0;
  while (pos <= len) {
    if (!match_at(re, str, len, pos, m, 10)) break;
    size_t so = (size_t)m[0].rm_so, eo = (size_t)m[0].rm_eo;
    if (so == eo && prev_nonempty_end_valid && so == prev_end) {
      /* an empty match right after the previous match: step one char */
      if (so >= len) break;
      pos = so + 1;
      prev_nonempty_end_valid = false;
      continue;
    }
    count++;
    if (count >= (c->nth ? c->nth : 1)) {
      if (!out) out = g_string_sized_new(len + 16);
      g_string_append_len(out, str + copied, so - copied);
      expand_rep(c, str, m, out);
      copied = eo;
      did = true;
      if (!c->global) break;
    }
    prev_end = eo;
    prev_nonempty_end_valid = true;
    if (so == eo) {
      if (so >= len) break;
      pos = so + 1;
    } else {
      pos = eo;
    }
  }
  if (!did) return false;
  g_string_append_len(out, str + copied, len - copied);
  g_string_truncate(s->ps, 0);
  g_string_append_len(s->ps, out->str, out->len);
  g_string_free(out, TRUE);
  return true;
}

/* ---- addresses ------------------------------------------------------------------------------ */

static bool match_addr(Sed *s, Addr *a)
{
  switch (a->kind) {
  case A_NONE: return true;
  case A_LINE: return s->lineno == a->n;
  case A_LAST: return is_last(s);
  case A_ZERO: return false;
  case A_STEP:
    if (a->step == 0) return s->lineno == a->n;
    return s->lineno >= a->n && (s->lineno - a->n) % a->step == 0;
  case A_RE: {
    regex_t *re = use_re(s, a->re);
    if (!re) return false;
    regmatch_t m[1];
    return match_at(re, s->ps->str, s->ps->len, 0, m, 1);
  }
  default: return false;
  }
}

static bool selected(Sed *s, SedCmd *c)
{
  bool r;
  if (c->a1.kind == A_NONE)
    r = true;
  else if (c->a2.kind == A_NONE)
    r = match_addr(s, &c->a1);
  else if (c->in_range) {
    r = true;
    switch (c->a2.kind) {
    case A_LINE:
      if (s->lineno >= c->a2.n) c->in_range = false;
      if (s->lineno > c->a2.n) r = false, c->in_range = false;
      break;
    case A_PLUS:
    case A_MULT:
      if (s->lineno >= c->range_end) c->in_range = false;
      break;
    case A_LAST:
      if (is_last(s)) c->in_range = false;
      break;
    case A_RE:
      if (match_addr(s, &c->a2)) c->in_range = false;
      break;
    default: c->in_range = false; break;
    }
  } else {
    bool start = c->a1.kind == A_ZERO ? false : match_addr(s, &c->a1);
    if (c->a1.kind == A_ZERO && s->lineno >= 1 && !c->range_end) {
      /* 0,/re/: the range is active from before line 1 */
      c->range_end = 1;
      c->in_range = true;
      r = true;
      if (match_addr(s, &c->a2)) c->in_range = false;
      return c->negate ? !r : r;
    }
    r = start;
    if (start) {
      c->in_range = true;
      switch (c->a2.kind) {
      case A_LINE:
        if (c->a2.n <= s->lineno) c->in_range = false;
        break;
      case A_PLUS:
        c->range_end = s->lineno + c->a2.n;
        if (c->a2.n == 0) c->in_range = false;
        break;
      case A_MULT:
        if (c->a2.n == 0 || s->lineno % c->a2.n == 0)
          c->in_range = false;
        else
          c->range_end = (s->lineno / c->a2.n + 1) * c->a2.n;
        break;
      case A_LAST:
        if (is_last(s)) c->in_range = false;
        break;
      default: break;
      }
    }
  }
  return c->negate ? !r : r;
}

/* ---- execution ---------------------------------------------------------------------------------- */

/* Runs the script over the current input stream. */
/* g G h H: dst becomes src, or (appending) gets a newline, then src. */
static void copy_space(GString *dst, const GString *src, bool append)
{
  if (append)
    g_string_append_c(dst, '\n');
  else
    g_string_truncate(dst, 0);
  g_string_append_len(dst, src->str, src->len);
}

static void run(Sed *s)
{
  SedCmd *v = (SedCmd *)s->cmds->data;
  size_t n = s->cmds->len;
  bool restart_no_read = false;
  for (;;) {
    if (!restart_no_read) {
      if (!read_line(s, s->ps, false)) break;
      s->replaced = false;
    }
    restart_no_read = false;
    bool autoprint = !s->quiet, end_cycle_delete = false;
    size_t pc = 0;
    while (pc < n && !s->quit) {
      SedCmd *c = &v[pc];
      if (c->cmd == ':' || c->cmd == '}') {
        pc++;
        continue;
      }
      if (!selected(s, c)) {
        pc = c->cmd == '{' ? c->jump + 0 : pc + 1;
        if (c->cmd == '{') pc = c->jump;
        continue;
      }
      switch (c->cmd) {
      case '{': break;
      case '=': soutf(s, "%lu\n", s->lineno); break;
      case 'a': g_string_append_len(s->append, c->text, c->text_len); break;
      case 'i': sout(s, c->text, c->text_len); break;
      case 'c':
        if (c->a2.kind == A_NONE || !c->in_range || c->negate) sout(s, c->text, c->text_len);
        end_cycle_delete = true;
        break;
      case 'd': end_cycle_delete = true; break;
      case 'D': {
        char *nl = memchr(s->ps->str, s->null_data ? '\0' : '\n', s->ps->len);
        if (!nl) {
          end_cycle_delete = true;
          break;
        }
        g_string_erase(s->ps, 0, nl - s->ps->str + 1);
        flush_append(s);
        restart_no_read = true;
        goto cycle_end_noprint;
      }
      case 'e': break;
      case 'F':
        soutf(s, "%s\n", s->cur_name && strcmp(s->cur_name, "-") ? s->cur_name : "-");
        break;
      case 'g': copy_space(s->ps, s->hs, false); break;
      case 'G': copy_space(s->ps, s->hs, true); break;
      case 'h': copy_space(s->hs, s->ps, false); break;
      case 'H': copy_space(s->hs, s->ps, true); break;
      case 'x': {
        GString *t = s->ps;
        s->ps = s->hs;
        s->hs = t;
        break;
      }
      case 'l': cmd_l(s, c->lwidth); break;
      case 'n':
        if (is_last(s)) {
          /* GNU: no next line: print (unless -n) and quit */
          s->quit = true;
          break;
        }
        if (!s->quiet) print_ps(s);
        flush_append(s);
        read_line(s, s->ps, false);
        break;
      case 'N':
        if (is_last(s)) {
          s->quit = true;
          break;
        }
        flush_append(s);
        read_line(s, s->ps, true);
        break;
      case 'p': print_ps(s); break;
      case 'P': {
        char *nl = memchr(s->ps->str, s->null_data ? '\0' : '\n', s->ps->len);
        emit(s, s->out, s->ps->str, nl ? (size_t)(nl - s->ps->str) : s->ps->len, true);
        break;
      }
      case 'q':
        s->quit = true;
        s->exit_status = c->exit_code;
        break;
      case 'Q':
        s->quit = true;
        s->exit_status = c->exit_code;
        autoprint = false;
        break;
      case 'r': g_ptr_array_add(s->rqueue, c->text); break;
      case 'R': {
        BxReader *r = g_hash_table_lookup(s->rfiles, c->text);
        if (!r) {
          int fd = box_open_file(c->text, O_RDONLY);
          r = g_new0(BxReader, 1);
          bx_reader_init(r, fd);
          if (fd < 0) r->eof = true;
          g_hash_table_insert(s->rfiles, c->text, r);
        }
        const char *rec;
        size_t len;
        if (r->fd >= 0 && bx_reader_next(r, '\n', &rec, &len)) {
          g_string_append_len(s->append, rec, len);
          if (rec[len - 1] != '\n') g_string_append_c(s->append, '\n');
        }
        break;
      }
      case 's':
        if (do_s(s, c)) {
          s->replaced = true;
          if (c->print)
            for (int k = 0; k < c->print_count; k++) print_ps(s);
          if (c->wfile) write_file(s, c->wfile, s->ps->str, s->ps->len);
        }
        break;
      case 'b': pc = c->jump; continue;
      case 't':
        if (s->replaced) {
          s->replaced = false;
          pc = c->jump;
          continue;
        }
        break;
      case 'T':
        if (!s->replaced) {
          pc = c->jump;
          continue;
        }
        s->replaced = false;
        break;
      case 'w': write_file(s, c->wfile, s->ps->str, s->ps->len); break;
      case 'W': {
        char *nl = memchr(s->ps->str, '\n', s->ps->len);
        write_file(s, c->wfile, s->ps->str, nl ? (size_t)(nl - s->ps->str) : s->ps->len);
        break;
      }
      case 'y':
        for (size_t k = 0; k < s->ps->len; k++)
          s->ps->str[k] = (char)c->ymap[(unsigned char)s->ps->str[k]];
        break;
      case 'z': g_string_truncate(s->ps, 0); break;
      default: break;
      }
      if (end_cycle_delete) break;
      pc++;
    }
    if (!end_cycle_delete && autoprint) print_ps(s);
    flush_append(s);
  cycle_end_noprint:
    if (s->quit || s->c->out->error) break;
  }
  /* q leaves a shared input after the last line read, lookahead and all */
  if (s->quit && s->rd_open)
    bx_reader_give_back(&s->rd, s->have_next ? s->next->len + s->next_has_nl : 0);
}

static const char longopts[] =
  "quiet=n silent=n expression=e: file=f: regexp-extended=E in-place=i:: separate=s null-data=z "
  "zero-terminated=z "
  "line-length=l: unbuffered=u posix=\1 debug=\2 sandbox=\3 follow-symlinks=\4";

/* -i's backup name: SUFFIX appended, or with '*' in it each star the file's
 * base name (in the file's directory when it names no directory itself). */
static char *backup_name(const char *name, const char *suffix)
{
  if (!strchr(suffix, '*')) return g_strconcat(name, suffix, NULL);
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  GString *b = g_string_new(NULL);
  for (const char *p = suffix; *p; p++) {
    if (*p == '*')
      g_string_append(b, base);
    else
      g_string_append_c(b, *p);
  }
  if (strchr(b->str, '/') || base == name) return g_string_free(b, FALSE);
  g_autofree char *dir = g_strndup(name, (size_t)(base - name));
  char *bak = g_strconcat(dir, b->str, NULL);
  g_string_free(b, TRUE);
  return bak;
}

/* data written over path; when it cannot be opened, "sed: WHAT PATH: …"
 * and status 4. */
static void write_over(Sed *s, const char *path, int flags, const GString *data, const char *what)
{
  int fd = box_open_file(path, O_WRONLY | O_TRUNC | flags);
  if (fd < 0) {
    g_autofree char *t = bx_errtext(s->c, errno);
    bx_err(s->c, "sed", "%s %s: %s", what, path, t);
    s->status = 4;
    return;
  }
  box_write_all(fd, data->str, data->len);
  close(fd);
}

/* The current input edited in place: the script's output goes to a memfd,
 * then the backup (when -i has a suffix) and the file are written. */
static void edit_in_place(Sed *s)
{
  const char *name = s->cur_name;
  int mfd = memfd_create("sed-i", MFD_CLOEXEC);
  box_out_init(&s->file_out, mfd);
  s->out = &s->file_out;
  run(s);
  close_input(s);
  box_out_flush(s->out);
  s->out = s->c->out;
  s->missing_nl = false;
  GString *result = g_string_new(NULL);
  lseek(mfd, 0, SEEK_SET);
  bx_read_all(mfd, result);
  close(mfd);
  if (s->suffix && *s->suffix) {
    g_autofree char *bak = backup_name(name, s->suffix);
    /* the original content: read again */
    GString *orig = g_string_new(NULL);
    int rfd = box_open_file(name, O_RDONLY);
    if (rfd >= 0) {
      bx_read_all(rfd, orig);
      close(rfd);
    }
    write_over(s, bak, O_CREAT, orig, "couldn't open file");
    g_string_free(orig, TRUE);
  }
  write_over(s, name, 0, result, "couldn't edit");
  g_string_free(result, TRUE);
}

int box_cmd_sed(BoxCmd *c)
{
  Sed s = { .c = c, .lwidth = 70 };
  s.cmds = g_array_new(FALSE, TRUE, sizeof(SedCmd));
  s.regexes = g_ptr_array_new();
  s.files = g_ptr_array_new();
  s.rfiles = g_hash_table_new(g_str_hash, g_str_equal);
  GPtrArray *scripts = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *script_names = g_ptr_array_new();
  int status = 1;
  bx_getopt_start("Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...");
  int ch;
  while ((ch = bx_getopt(c, "sed", "ne:f:Ei::rszl:u", longopts)) != -1) {
    switch (ch) {
    case 'n': s.quiet = true; break;
    case 'e':
      g_ptr_array_add(scripts, g_strdup(optarg));
      g_ptr_array_add(script_names, NULL);
      break;
    case 'f': {
      GString *t = bx_slurp_new(c, "sed", optarg);
      if (!t) goto out;
      if (t->len && t->str[t->len - 1] == '\n') g_string_truncate(t, t->len - 1);
      g_ptr_array_add(scripts, g_string_free(t, FALSE));
      g_ptr_array_add(script_names, optarg);
      break;
    }
    case 'E':
    case 'r': s.ere = true; break;
    case 'i':
      s.in_place = s.separate = true;
      s.suffix = optarg;
      break;
    case 's': s.separate = true; break;
    case 'z': s.null_data = true; break;
    case 'l': s.lwidth = strtoul(optarg, NULL, 10); break;
    case 'u':
    case 1:
    case 2:
    case 3:
    case 4: break;
    default: status = 1; goto out;
    }
  }
  if (scripts->len == 0) {
    if (optind >= c->argc) {
      box_out_flush(c->out);
      box_fdprintf(c->err,
                   "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n\n");
      goto out;
    }
    g_ptr_array_add(scripts, g_strdup(c->argv[optind++]));
    g_ptr_array_add(script_names, NULL);
  }
  if (!bx_sed_compile(&s, scripts, script_names)) {
    status = s.status ? s.status : 1;
    goto out;
  }

  s.ps = g_string_new(NULL);
  s.hs = g_string_new(NULL);
  s.append = g_string_new(NULL);
  s.rqueue = g_ptr_array_new();
  s.next = g_string_new(NULL);
  s.out = c->out;
  s.inputs = bx_file_operands(c, &s.ninputs);
  s.cur = -1;
  if (s.in_place && optind >= c->argc) {
    bx_err(c, "sed", "no input files");
    status = 1;
    goto out2;
  }
  if (!s.separate) {
    s.have_next = fetch(&s, true);
    run(&s);
  } else {
    while (!s.quit && s.cur + 1 < s.ninputs) {
      if (!open_next_input(&s)) break;
      s.lineno = 0;
      s.have_next = fetch(&s, false);
      if (s.in_place) {
        edit_in_place(&s);
        continue;
      }
      run(&s);
      close_input(&s);
    }
  }
  status = s.status ? s.status : s.exit_status;
out2:
  close_input(&s);
  g_string_free(s.ps, TRUE);
  g_string_free(s.hs, TRUE);
  g_string_free(s.append, TRUE);
  g_string_free(s.next, TRUE);
  g_ptr_array_free(s.rqueue, TRUE);
out:
  for (guint i = 0; i < s.cmds->len; i++) {
    SedCmd *sc = &g_array_index(s.cmds, SedCmd, i);
    g_free(sc->rep);
    g_free(sc->text);
  }
  g_array_free(s.cmds, TRUE);
  for (guint i = 0; i < s.regexes->len; i++) {
    SedRe *sr = s.regexes->pdata[i];
    regfree(&sr->re);
    g_free(sr->literal);
    g_free(sr);
  }
  g_ptr_array_free(s.regexes, TRUE);
  for (guint i = 0; i < s.files->len; i++) {
    OutFile *f = s.files->pdata[i];
    if (f->fd >= 0 && f->fd != c->err) close(f->fd);
    g_free(f->name);
    g_free(f);
  }
  g_ptr_array_free(s.files, TRUE);
  GHashTableIter it;
  gpointer k, val;
  g_hash_table_iter_init(&it, s.rfiles);
  while (g_hash_table_iter_next(&it, &k, &val)) {
    BxReader *r = val;
    if (r->fd >= 0) close(r->fd);
    bx_reader_free(r);
    g_free(r);
  }
  g_hash_table_destroy(s.rfiles);
  g_ptr_array_free(scripts, TRUE);
  g_ptr_array_free(script_names, TRUE);
  return status;
}
