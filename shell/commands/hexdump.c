/* hexdump.c — util-linux hexdump (2.38): the format language of -e and -f
 * (units of [COUNT][/BYTES] "FORMAT", the conversions d i o u x X e E f g
 * G c s and _a _A _c _p _u), the formats of -b -c -C -d -o -x and the
 * default, squeezing of repeated blocks into "*" unless -v, -n and -s.
 * The inputs are one stream read block by block: -n stops the reading,
 * so /dev/zero and /dev/urandom end with it.  A file that cannot be
 * opened is named and skipped. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef enum {
  PR_TEXT,    /* text alone */
  PR_ADDRESS, /* _a, _A */
  PR_BPAD,    /* a conversion past the end of the input: blanks */
  PR_C,       /* _c */
  PR_CHAR,    /* c */
  PR_DBL,     /* e E f g G */
  PR_INT,     /* d i */
  PR_P,       /* _p */
  PR_STR,     /* s */
  PR_U,       /* _u */
  PR_UINT,    /* o u x X */
} PrKind;

/* One conversion with the text before it, or the text after the last. */
typedef struct {
  PrKind kind;
  int bcnt;
  char *text;   /* the text before the '%' (or all of it) */
  char *spec;   /* flags, width and precision as written */
  char conv;    /* the conversion letter (d o x for _a) */
  bool nospace; /* the unit's last text: its last blank goes on the last round */
} Pr;

typedef struct {
  int reps, bcnt;
  bool setrep, ignore;
  char *fmt;
  GPtrArray *prs;
} Fu;

typedef struct {
  GPtrArray *fus;
  int bcnt;
} Fs;

typedef struct {
  BoxCmd *c;
  GPtrArray *fss;
  Fu *endfu; /* the unit of the last _A */
  int blocksize;
  bool squeeze_all; /* -v */
  long long length; /* -n; -1 none */
  unsigned long long skip;
  /* the reading */
  char **names;
  int nnames, next;
  const char *stdin_name; /* what a read error on standard input is named */
  bool done, ateof, opened_one;
  int fd;
  const char *cur; /* the name of the input being read */
  unsigned char *buf;
  size_t pos, len;
  unsigned char *curp, *savp;
  enum { V_ALL, V_FIRST, V_WAIT, V_DUP } vflag;
  long long address, eaddress;
  int exitval;
  bool fatal;
} Hd;

static const char spec_chars[] = ".#-+ 0123456789";

static void pr_free(gpointer p)
{
  Pr *pr = p;
  g_free(pr->text);
  g_free(pr->spec);
  g_free(pr);
}

static void fu_free(gpointer p)
{
  Fu *fu = p;
  g_free(fu->fmt);
  g_ptr_array_free(fu->prs, TRUE);
  g_free(fu);
}

static void fs_free(gpointer p)
{
  g_ptr_array_unref(((Fs *)p)->fus);
  g_free(p);
}

static bool fail(Hd *h, const char *fmt, const char *arg)
{
  g_autofree char *m = g_strdup_printf(fmt, arg);
  bx_err(h->c, "hexdump", "%s", m);
  h->fatal = true;
  return false;
}

/* ---- parsing: -e and -f ------------------------------------------------------ */

/* util-linux writes each escape's byte in place but does not move the
 * text after it back, so the text shows the escape's letter again and
 * loses its last bytes ("a\nbc" is "a", newline, "n", "b"). */
static void escape(char *s)
{
  char *p1 = s, *p2 = s;
  while (*p1) {
    if (*p1 == '\\') {
      static const char letters[] = "abfnrtv", bytes[] = "\a\b\f\n\r\t\v";
      const char *e = p1[1] ? strchr(letters, p1[1]) : NULL;
      if (!p1[1]) break;
      *p2 = e ? bytes[e - letters] : p1[1];
      p1 += 2;
    } else
      p1++;
    p2++;
  }
  *p2 = '\0';
}

static const char *skip_space(const char *p)
{
  while (g_ascii_isspace(*p)) p++;
  return p;
}

/* One -e string (or -f line): its units in a new format string. */
static bool add_fmt(Hd *h, const char *fmt)
{
  Fs *fs = g_new0(Fs, 1);
  fs->fus = g_ptr_array_new_with_free_func(fu_free);
  g_ptr_array_add(h->fss, fs);
  const char *p = fmt;
  for (;;) {
    p = skip_space(p);
    if (!*p) break;
    Fu *fu = g_new0(Fu, 1);
    fu->reps = 1;
    fu->prs = g_ptr_array_new_with_free_func(pr_free);
    g_ptr_array_add(fs->fus, fu);
    if (g_ascii_isdigit(*p)) {
      const char *d = p;
      while (g_ascii_isdigit(*p)) p++;
      if (!g_ascii_isspace(*p) && *p != '/') return fail(h, "bad format {%s}", fmt);
      fu->reps = atoi(d);
      fu->setrep = true;
      p = skip_space(p + 1);
    }
    if (*p == '/') p = skip_space(p + 1);
    if (g_ascii_isdigit(*p)) {
      const char *d = p;
      while (g_ascii_isdigit(*p)) p++;
      if (!g_ascii_isspace(*p)) return fail(h, "bad format {%s}", fmt);
      fu->bcnt = atoi(d);
      p = skip_space(p + 1);
    }
    if (*p != '"') return fail(h, "bad format {%s}", fmt);
    const char *start = ++p;
    while (*p != '"')
      if (!*p++) return fail(h, "bad format {%s}", fmt);
    fu->fmt = g_strndup(start, (gsize)(p - start));
    escape(fu->fmt);
    p++;
  }
  return true;
}

static bool add_file(Hd *h, const char *name)
{
  int fd = box_open_file(name, O_RDONLY | O_NOCTTY);
  if (fd < 0) {
    g_autofree char *t = bx_errtext(h->c, errno);
    bx_err(h->c, "hexdump", "can't read %s: %s", name, t);
    h->fatal = true;
    return false;
  }
  BxReader r;
  bx_reader_init(&r, fd);
  const char *rec;
  size_t len;
  bool ok = true;
  while (ok && bx_reader_next(&r, '\n', &rec, &len)) {
    g_autofree char *line = g_strndup(rec, len);
    const char *f = skip_space(line);
    if (!*f || *f == '#') continue;
    ok = add_fmt(h, f);
  }
  bx_reader_free(&r);
  close(fd);
  return ok;
}

/* The bytes one round of a format string reads. */
static int block_size(Fs *fs)
{
  int size = 0;
  for (guint i = 0; i < fs->fus->len; i++) {
    Fu *fu = fs->fus->pdata[i];
    if (fu->bcnt) {
      size += fu->bcnt * fu->reps;
      continue;
    }
    int bcnt = 0, prec = 0;
    for (const char *f = fu->fmt; *f;) {
      if (*f != '%') {
        f++;
        continue;
      }
      while (*++f && strchr(spec_chars + 1, *f)) {}
      if (*f == '.' && g_ascii_isdigit(*++f)) {
        prec = atoi(f);
        while (g_ascii_isdigit(*++f)) {}
      }
      if (!*f) break;
      if (strchr("diouxX", *f))
        bcnt += 4;
      else if (strchr("efgEG", *f))
        bcnt += 8;
      else if (*f == 's')
        bcnt += prec;
      else if (*f == 'c' || (*f == '_' && *++f && strchr("cpu", *f)))
        bcnt++;
      if (*f) f++;
    }
    size += bcnt * fu->reps;
  }
  return size;
}

static bool bad_conv(Hd *h, const char *p, size_t n)
{
  g_autofree char *s = g_strndup(p, n);
  return fail(h, "bad conversion character %%%s", s);
}

static bool bad_count(Hd *h, const char *p, size_t n)
{
  g_autofree char *s = g_strndup(p, n);
  return fail(h, "bad byte count for conversion character %s", s);
}

/* Splits each unit into its conversions, gives each its byte count, and
 * repeats a format string's last unit to fill the block. */
static bool rewrite(Hd *h, Fs *fs)
{
  for (guint i = 0; i < fs->fus->len; i++) {
    Fu *fu = fs->fus->pdata[i];
    int nconv = 0;
    const char *fmtp = fu->fmt;
    while (*fmtp) {
      Pr *pr = g_new0(Pr, 1);
      g_ptr_array_add(fu->prs, pr);
      const char *p1 = strchr(fmtp, '%');
      if (!p1) {
        pr->kind = PR_TEXT;
        pr->text = g_strdup(fmtp);
        break;
      }
      const char *spec_at = p1 + 1;
      enum { NOTOKAY, USEBCNT, USEPREC } sokay;
      int prec = 0;
      if (fu->bcnt) {
        sokay = USEBCNT;
        for (p1++; *p1 && strchr(spec_chars, *p1); p1++) {}
      } else {
        while (*++p1 && strchr(spec_chars + 1, *p1)) {}
        sokay = NOTOKAY;
        if (*p1 == '.' && g_ascii_isdigit(*++p1)) {
          sokay = USEPREC;
          prec = atoi(p1);
          while (g_ascii_isdigit(*++p1)) {}
        }
      }
      const char *p2 = p1 + 1;
      char cs = *p1;
      pr->text = g_strndup(fmtp, (gsize)(strchr(fmtp, '%') - fmtp));
      pr->spec = g_strndup(spec_at, (gsize)(p1 - spec_at));
      pr->conv = cs;
      if (cs == 'c') {
        pr->kind = PR_CHAR;
        if (fu->bcnt > 1) return bad_count(h, p1, 1);
        pr->bcnt = 1;
      } else if (cs && strchr("diouxX", cs)) {
        pr->kind = strchr("di", cs) ? PR_INT : PR_UINT;
        if (fu->bcnt == 0)
          pr->bcnt = 4;
        else if (fu->bcnt == 1 || fu->bcnt == 2 || fu->bcnt == 4 || fu->bcnt == 8)
          pr->bcnt = fu->bcnt;
        else
          return bad_count(h, p1, 1);
      } else if (cs && strchr("eEfgG", cs)) {
        pr->kind = PR_DBL;
        if (fu->bcnt == 0)
          pr->bcnt = 8;
        else if (fu->bcnt == 4 || fu->bcnt == 8)
          pr->bcnt = fu->bcnt;
        else
          return bad_count(h, p1, 1);
      } else if (cs == 's') {
        pr->kind = PR_STR;
        if (sokay == NOTOKAY) return fail(h, "%s", "%s requires a precision or a byte count");
        pr->bcnt = sokay == USEBCNT ? fu->bcnt : prec;
      } else if (cs == '_') {
        p2++;
        switch (p1[1]) {
        case 'A':
          h->endfu = fu;
          fu->ignore = true;
          /* fall through */
        case 'a':
          pr->kind = PR_ADDRESS;
          /* at the end of the text util-linux takes it too, and prints
           * nothing for it */
          if (p1[2] && !strchr("dox", p1[2])) return bad_conv(h, p1, 3);
          pr->conv = p1[2];
          if (p1[2]) p2++;
          break;
        case 'c':
        case 'p':
        case 'u':
          pr->kind = p1[1] == 'c' ? PR_C : p1[1] == 'p' ? PR_P : PR_U;
          if (fu->bcnt > 1) return bad_count(h, p1, 2);
          pr->bcnt = 1;
          break;
        default: return bad_conv(h, p1, p1[1] ? 2 : 1);
        }
      } else
        return bad_conv(h, p1, 1);
      /* a colour (-L) after a conversion: "_L[...]", up to the last ']' */
      if (p2[0] == '_' && p2[1] == 'L') {
        const char *open = strchr(p2, '['), *close = strrchr(p2, ']');
        if (!open) return bad_conv(h, p2, 2);
        if (!close) {
          h->fatal = true;
          return false;
        }
        p2 = close + 1;
      }
      fmtp = p2;
      if (pr->kind != PR_ADDRESS && fu->bcnt && nconv++)
        return fail(h, "%s", "byte count with multiple conversion characters");
    }
    if (!fu->bcnt)
      for (guint k = 0; k < fu->prs->len; k++) fu->bcnt += ((Pr *)fu->prs->pdata[k])->bcnt;
  }
  for (guint i = 0; i < fs->fus->len; i++) {
    Fu *fu = fs->fus->pdata[i];
    if (i + 1 == fs->fus->len && fs->bcnt < h->blocksize && !fu->setrep && fu->bcnt)
      fu->reps += (h->blocksize - fs->bcnt) / fu->bcnt;
    if (fu->reps > 1 && fu->prs->len) {
      Pr *pr = fu->prs->pdata[fu->prs->len - 1];
      if (pr->kind == PR_TEXT && *pr->text)
        pr->nospace = g_ascii_isspace(pr->text[strlen(pr->text) - 1]);
    }
  }
  return true;
}

/* ---- output ------------------------------------------------------------------ */

/* printf's answer for one conversion (fmt holds exactly one, built from
 * the user's flags, width and precision and a type this code chose). */
static void emit(Hd *h, const char *fmt, ...)
{
  char small[256];
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= (int)sizeof small) {
    char *big = g_malloc((size_t)n + 1);
    vsnprintf(big, (size_t)n + 1, fmt, again);
    box_out_write(h->c->out, big, (size_t)n);
    g_free(big);
  } else if (n > 0)
    box_out_write(h->c->out, small, (size_t)n);
#pragma GCC diagnostic pop
  va_end(again);
  va_end(ap);
}

static char *conv_fmt(const Pr *pr, const char *type)
{
  return g_strdup_printf("%%%s%s", pr->spec, type);
}

static const char *const control_names[32] = {
  "nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs",  "ht",  "lf",
  "vt",  "ff",  "cr",  "so",  "si",  "dle", "dc1", "dc2", "dc3", "dc4", "nak",
  "syn", "etb", "can", "em",  "sub", "esc", "fs",  "gs",  "rs",  "us",
};

static void print_pr(Hd *h, Pr *pr, const unsigned char *bp, bool last_round)
{
  BoxOut *out = h->c->out;
  if (pr->kind == PR_TEXT) {
    size_t n = strlen(pr->text);
    if (last_round && pr->nospace) n--;
    box_out_write(out, pr->text, n);
    return;
  }
  box_out_puts(out, pr->text);
  g_autofree char *f = NULL;
  switch (pr->kind) {
  case PR_ADDRESS: {
    char t[4] = { 'l', 'l', pr->conv, 0 };
    if (!pr->conv) break;
    f = conv_fmt(pr, t);
    emit(h, f, (long long)h->address);
    break;
  }
  case PR_BPAD: {
    /* the flags go, the width stays: blanks where the value would be */
    const char *s = pr->spec + strspn(pr->spec, "-0+ #");
    f = g_strdup_printf("%%%ss", s);
    emit(h, f, "");
    break;
  }
  case PR_C: {
    const char *e = *bp ? bx_escape_name(*bp) : "\\0";
    char oct[8];
    if (!e && *bp >= 32 && *bp < 127) {
      f = conv_fmt(pr, "c");
      emit(h, f, *bp);
      break;
    }
    if (!e) {
      g_snprintf(oct, sizeof oct, "%03o", *bp);
      e = oct;
    }
    f = conv_fmt(pr, "s");
    emit(h, f, e);
    break;
  }
  case PR_CHAR:
    f = conv_fmt(pr, "c");
    emit(h, f, *bp);
    break;
  case PR_DBL: {
    char t[2] = { pr->conv, 0 };
    f = conv_fmt(pr, t);
    if (pr->bcnt == 4) {
      float x;
      memcpy(&x, bp, sizeof x);
      emit(h, f, (double)x);
    } else {
      double x;
      memcpy(&x, bp, sizeof x);
      emit(h, f, x);
    }
    break;
  }
  case PR_INT:
  case PR_UINT: {
    char t[4] = { 'l', 'l', pr->conv, 0 };
    unsigned long long v = 0;
    for (int i = pr->bcnt - 1; i >= 0; i--) v = v << 8 | bp[i];
    int bits = pr->bcnt * 8;
    if (pr->kind == PR_INT && bits < 64 && (v >> (bits - 1)) & 1) v -= 1ULL << bits;
    f = conv_fmt(pr, t);
    emit(h, f, v);
    break;
  }
  case PR_P:
    f = conv_fmt(pr, "c");
    emit(h, f, *bp >= 32 && *bp < 127 ? *bp : '.');
    break;
  case PR_STR:
    /* the block from here up to a NUL, as much as the precision takes
     * (the unit's byte count only moves on: the blocks end in a NUL) */
    f = conv_fmt(pr, "s");
    emit(h, f, (const char *)bp);
    break;
  case PR_U:
    if (*bp < 32 || *bp == 127) {
      f = conv_fmt(pr, "s");
      emit(h, f, *bp == 127 ? "del" : control_names[*bp]);
    } else if (*bp < 127) {
      f = conv_fmt(pr, "c");
      emit(h, f, *bp);
    } else {
      f = conv_fmt(pr, "x");
      emit(h, f, *bp);
    }
    break;
  default: break;
  }
}

/* ---- input ------------------------------------------------------------------- */

static void fatal_errno(Hd *h, const char *name, int err)
{
  g_autofree char *t = bx_errtext(h->c, err);
  bx_err(h->c, "hexdump", "%s: %s", name, t);
  h->fatal = true;
}

static void close_cur(Hd *h)
{
  if (h->fd >= 0 && h->fd != h->c->in) close(h->fd);
  h->fd = -1;
  h->pos = h->len = 0;
}

#define READ_CAP 65536

/* Up to want bytes of the current input (read ahead no further than -n
 * allows): 0 at its end, -1 on an error. */
static ssize_t read_input(Hd *h, unsigned char *dst, size_t want)
{
  if (h->pos == h->len) {
    size_t ask = READ_CAP;
    if (h->length != -1 && (unsigned long long)h->length < ask) ask = (size_t)h->length;
    if (h->fd < 0) {
      errno = EBADF;
      return -1;
    }
    ssize_t r = bx_read(h->fd, h->buf, MAX(ask, want));
    if (r <= 0) return r;
    h->pos = 0;
    h->len = (size_t)r;
  }
  size_t n = MIN(want, h->len - h->pos);
  memcpy(dst, h->buf + h->pos, n);
  h->pos += n;
  return (ssize_t)n;
}

/* -s over the input just opened: a regular file shorter than what is
 * left to skip is passed whole, else the input is seeked. */
static void do_skip(Hd *h, const char *name, bool statok)
{
  struct stat st;
  if (statok) {
    if (fstat(h->fd, &st) < 0) return fatal_errno(h, name, errno);
    if (S_ISREG(st.st_mode) && h->skip > (unsigned long long)st.st_size) {
      h->skip -= (unsigned long long)st.st_size;
      h->address += st.st_size;
      return;
    }
  }
  if (h->fd < 0) return fatal_errno(h, name, EBADF);
  if (lseek(h->fd, (off_t)h->skip, SEEK_SET) < 0) return fatal_errno(h, name, errno);
  h->address += (long long)h->skip;
  h->skip = 0;
}

/* Opens the next input: false when there is none. */
static bool next_input(Hd *h)
{
  for (;;) {
    bool statok;
    const char *name = NULL;
    close_cur(h);
    if (h->next < h->nnames) {
      name = h->names[h->next];
      h->fd = box_open_file(name, O_RDONLY | O_NOCTTY);
      if (h->fd < 0) {
        bx_ferr(h->c, "hexdump", name, errno);
        h->exitval = 1;
        h->next++;
        continue;
      }
      h->cur = name;
      statok = h->done = h->opened_one = true;
    } else {
      if (h->done) return false;
      h->done = true;
      statok = false;
      if (h->nnames) {
        /* every operand failed: util-linux's standard input is closed by
         * then, so a skip fails on it and a read is not tried */
        if (h->skip) {
          fatal_errno(h, "stdin", EBADF);
          return false;
        }
        bx_err(h->c, "hexdump", "all input file arguments failed");
        h->fatal = true;
        return false;
      }
      h->fd = h->c->in;
      h->cur = h->stdin_name;
    }
    if (h->skip) do_skip(h, statok ? name : "stdin", statok);
    if (h->fatal) return false;
    if (name) h->next++;
    if (!h->skip) return true;
  }
}

/* The next block, or NULL at the end; a block equal to the one before is
 * passed over, "*" printed once for the run. */
static unsigned char *get_block(Hd *h, bool *started)
{
  if (*started) {
    unsigned char *t = h->curp;
    h->curp = h->savp;
    h->savp = t;
    h->address += h->blocksize;
  }
  *started = true;
  int need = h->blocksize, nread = 0;
  for (;;) {
    if (!h->length || (h->ateof && !next_input(h))) {
      if (h->fatal || need == h->blocksize) return NULL;
      if (!need && h->vflag != V_ALL && !memcmp(h->curp, h->savp, (size_t)nread)) {
        if (h->vflag != V_DUP) box_out_puts(h->c->out, "*\n");
        return NULL;
      }
      memset(h->curp + nread, 0, (size_t)need);
      h->eaddress = h->address + nread;
      return h->curp;
    }
    size_t want = h->length == -1 ? (size_t)need : (size_t)MIN(h->length, (long long)need);
    ssize_t n = read_input(h, h->curp + nread, want);
    if (n <= 0) {
      if (n < 0) {
        g_autofree char *t = bx_errtext(h->c, errno);
        bx_err(h->c, "hexdump", "%s: %s", h->cur, t);
      }
      h->ateof = true;
      continue;
    }
    h->ateof = false;
    if (h->length != -1) h->length -= n;
    if (!(need -= (int)n)) {
      if (h->vflag == V_ALL || h->vflag == V_FIRST ||
          memcmp(h->curp, h->savp, (size_t)h->blocksize)) {
        if (h->vflag == V_DUP || h->vflag == V_FIRST) h->vflag = V_WAIT;
        return h->curp;
      }
      if (h->vflag == V_WAIT) box_out_puts(h->c->out, "*\n");
      h->vflag = V_DUP;
      h->address += h->blocksize;
      need = h->blocksize;
      nread = 0;
    } else
      nread += (int)n;
  }
}

static void display(Hd *h)
{
  h->curp = g_malloc0((size_t)h->blocksize + 1);
  h->savp = g_malloc0((size_t)h->blocksize + 1);
  h->buf = g_malloc(MAX(READ_CAP, (size_t)h->blocksize));
  bool started = false;
  unsigned char *bp;
  while ((bp = get_block(h, &started)) != NULL) {
    unsigned char *savebp = bp;
    long long saveaddress = h->address;
    for (guint i = 0; i < h->fss->len; i++) {
      Fs *fs = h->fss->pdata[i];
      for (guint j = 0; j < fs->fus->len; j++) {
        Fu *fu = fs->fus->pdata[j];
        if (fu->ignore) break;
        for (int cnt = fu->reps; cnt; cnt--) {
          for (guint k = 0; k < fu->prs->len; k++) {
            Pr *pr = fu->prs->pdata[k];
            /* past the input's end a conversion prints blanks from then on */
            if (h->eaddress && h->address >= h->eaddress && pr->kind != PR_TEXT) pr->kind = PR_BPAD;
            print_pr(h, pr, bp, cnt == 1);
            h->address += pr->bcnt;
            bp += pr->bcnt;
          }
        }
      }
      bp = savebp;
      h->address = saveaddress;
    }
    if (h->c->out->error) break;
  }
  if (h->endfu && !h->fatal && !h->c->out->error) {
    /* the end's address: where the input ended */
    if (!h->eaddress) {
      if (!h->address) goto out;
      h->eaddress = h->address;
    }
    for (guint k = 0; k < h->endfu->prs->len; k++) {
      Pr *pr = h->endfu->prs->pdata[k];
      if (pr->kind == PR_ADDRESS) {
        long long keep = h->address;
        h->address = h->eaddress;
        print_pr(h, pr, NULL, false);
        h->address = keep;
      } else if (pr->kind == PR_TEXT)
        box_out_puts(h->c->out, pr->text);
    }
  }
out:
  g_free(h->buf);
  g_free(h->curp);
  g_free(h->savp);
}

/* ---- options ----------------------------------------------------------------- */

static bool parse_count(Hd *h, const char *what, const char *v, unsigned long long *out)
{
  /* util-linux's strtosize: a number (0x hex, 0 octal), then a unit
   * (K, KB, KiB, M…; a fraction before it) */
  const char *p = v;
  while (g_ascii_isspace(*p)) p++;
  int err = EINVAL;
  if (*p && *p != '-') {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(p, &end, 0);
    if (end != p && errno == ERANGE)
      err = ERANGE;
    else if (end != p) {
      unsigned long long frac = 0, div = 1;
      if (*end == '.') {
        for (end++; g_ascii_isdigit(*end); end++) {
          if (div < 1000000000000ULL) {
            frac = frac * 10 + (unsigned long long)(*end - '0');
            div *= 10;
          }
        }
      }
      const char *units = "KMGTPEZY";
      const char *u = *end ? strchr(units, g_ascii_toupper(*end)) : NULL;
      int power = 0;
      unsigned long long base = 1024;
      if (u) {
        power = (int)(u - units) + 1;
        end++;
        if (end[0] == 'i' && (end[1] == 'B' || end[1] == 'b'))
          end += 2;
        else if (end[0] == 'B' || end[0] == 'b') {
          base = 1000;
          end++;
        }
      }
      if (!*end && (u || div == 1)) {
        unsigned long long mul = 1;
        bool over = false;
        for (int i = 0; i < power; i++) {
          if (mul > ULLONG_MAX / base) over = true;
          mul *= base;
        }
        if (!over && n > ULLONG_MAX / mul) over = true;
        if (over)
          err = ERANGE;
        else {
          *out = n * mul + frac * mul / div;
          return true;
        }
      }
    }
  }
  g_autofree char *t = bx_errtext(h->c, err);
  bx_err(h->c, "hexdump", "failed to parse %s: '%s': %s", what, v, t);
  return false;
}

static const char longopts[] =
  "one-byte-octal=b one-byte-char=c canonical=C two-bytes-decimal=d two-bytes-octal=o "
  "two-bytes-hex=x format=e: format-file=f: color=L:: length=n: skip=s: no-squeezing=v";

static const char *const two_byte_fmt[] = {
  /* -d -o -x */
  "\"%07.7_ax \" 8/2 \"  %05u \" \"\\n\"",
  "\"%07.7_ax \" 8/2 \" %06o \" \"\\n\"",
  "\"%07.7_ax \" 8/2 \"   %04x \" \"\\n\"",
};

int box_cmd_hexdump(BoxCmd *c)
{
  Hd h = { .c = c, .length = -1, .fd = -1, .vflag = V_FIRST, .ateof = true };
  h.fss = g_ptr_array_new_with_free_func(fs_free);
  bool ok = true;
  int status = 1;
  BX_EACH_OPTION (ch, c, "hexdump", "bcCde:f:L::n:os:vx", longopts) {
    switch (ch) {
    case 'b':
      ok = add_fmt(&h, "\"%07.7_Ax\n\"") && add_fmt(&h, "\"%07.7_ax \" 16/1 \"%03o \" \"\\n\"");
      break;
    case 'c':
      ok = add_fmt(&h, "\"%07.7_Ax\n\"") && add_fmt(&h, "\"%07.7_ax \" 16/1 \"%3_c \" \"\\n\"");
      break;
    case 'C':
      ok = add_fmt(&h, "\"%08.8_Ax\n\"") &&
           add_fmt(&h, "\"%08.8_ax  \" 8/1 \"%02x \" \"  \" 8/1 \"%02x \" ") &&
           add_fmt(&h, "\"  |\" 16/1 \"%_p\" \"|\\n\"");
      break;
    case 'd':
    case 'o':
    case 'x':
      ok = add_fmt(&h, "\"%07.7_Ax\n\"") && add_fmt(&h, two_byte_fmt[ch == 'd'   ? 0
                                                                     : ch == 'o' ? 1
                                                                                 : 2]);
      break;
    case 'e': ok = add_fmt(&h, optarg); break;
    case 'f': ok = add_file(&h, optarg); break;
    case 'L': break; /* colours only on a terminal */
    case 'n': {
      unsigned long long v;
      ok = parse_count(&h, "length", optarg, &v);
      if (ok && v > (unsigned long long)LLONG_MAX) v = LLONG_MAX;
      h.length = (long long)v;
      break;
    }
    case 's': ok = parse_count(&h, "offset", optarg, &h.skip); break;
    case 'v': h.vflag = V_ALL; break;
    default: ok = false; break;
    }
    if (!ok) goto done;
  }
  if (h.fss->len == 0) {
    add_fmt(&h, "\"%07.7_Ax\n\"");
    add_fmt(&h, "\"%07.7_ax \" 8/2 \"%04x \" \"\\n\"");
  }
  for (guint i = 0; i < h.fss->len; i++) {
    Fs *fs = h.fss->pdata[i];
    fs->bcnt = block_size(fs);
    h.blocksize = MAX(h.blocksize, fs->bcnt);
  }
  for (guint i = 0; i < h.fss->len; i++)
    if (!rewrite(&h, h.fss->pdata[i])) goto done;

  h.names = c->argv + optind;
  h.nnames = c->argc - optind;
  /* util-linux names a read error on standard input after the word
   * before the operands */
  h.stdin_name = optind >= 1 ? c->argv[optind - 1] : "hexdump";
  display(&h);
  close_cur(&h);
  status = h.fatal ? 1 : h.exitval;
done:
  g_ptr_array_free(h.fss, TRUE);
  return status;
}
