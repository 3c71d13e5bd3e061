/* xxd.c — vim's xxd (2022-01-14): the hex dump with -c -g -e -b -u -d -o
 * -a -E, -p (plain), -i (C include, -n NAME, -C), -s (absolute, +relative,
 * -from the end), -l, an output file operand, and -r / -r -p (reverse,
 * patching an output file in place).  Input is read in blocks and never
 * past -l, so /dev/zero and /dev/urandom end with it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

enum { HEX_NORMAL, HEX_POSTSCRIPT, HEX_CINCLUDE, HEX_BITS, HEX_LITTLEENDIAN };

#define MAX_COLS 256
/* the address (-d: a negative long's 20 characters), the widest hex area
 * (bits: 9 per byte), the text column, the newline */
#define LINE_CAP (32 + 9 * MAX_COLS + MAX_COLS + 8)

/* What -E shows for the bytes from 64 up (below 64 it shows '.'). */
static const char ebcdic_shown[] =
  " ...........<(+|&.........!$*);~-/.........,%_>?.........`:#@'=\".abcdefghi......."
  "jklmnopqr^.......stuvwxyz...[...............]..{ABCDEFGHI......}JKLMNOPQR......\\."
  "STUVWXYZ......0123456789......";

static const char usage_text[] =
  "Usage:\n"
  "       xxd [options] [infile [outfile]]\n"
  "    or\n"
  "       xxd -r [-s [-]offset] [-c cols] [-ps] [infile [outfile]]\n"
  "Options:\n"
  "    -a          toggle autoskip: A single '*' replaces nul-lines. Default off.\n"
  "    -b          binary digit dump (incompatible with -ps,-i,-r). Default hex.\n"
  "    -C          capitalize variable names in C include file style (-i).\n"
  "    -c cols     format <cols> octets per line. Default 16 (-i: 12, -ps: 30).\n"
  "    -E          show characters in EBCDIC. Default ASCII.\n"
  "    -e          little-endian dump (incompatible with -ps,-i,-r).\n"
  "    -g bytes    number of octets per group in normal output. Default 2 (-e: 4).\n"
  "    -h          print this summary.\n"
  "    -i          output in C include file style.\n"
  "    -l len      stop after <len> octets.\n"
  "    -n name     set the variable name used in C include output (-i).\n"
  "    -o off      add <off> to the displayed file position.\n"
  "    -ps         output in postscript plain hexdump style.\n"
  "    -r          reverse operation: convert (or patch) hexdump into binary.\n"
  "    -r -s off   revert with <off> added to file positions found in hexdump.\n"
  "    -d          show offset in decimal instead of hex.\n"
  "    -s [+][-]seek  start at <seek> bytes abs. (or +: rel.) infile offset.\n"
  "    -u          use upper case hex letters.\n"
  "    -v          show version: \"xxd 2022-01-14 by Juergen Weigert et al.\".\n";

/* A dump's input (read ahead no further than -l allows) and output. */
typedef struct {
  BoxCmd *c;
  int fd; /* input */
  unsigned char *buf;
  size_t pos, len, cap;
  int read_err;
  BoxOut *out;
  int out_fd;
} Xxd;

/* The next input byte, -1 at the end (or after a read error: read_err);
 * left: the bytes still wanted, -1 for all. */
static int next_byte(Xxd *x, long long left)
{
  if (x->pos < x->len) return x->buf[x->pos++];
  if (x->read_err || x->fd < 0) return -1;
  size_t ask = x->cap;
  if (left >= 0 && (unsigned long long)left < ask) ask = (size_t)left;
  if (ask == 0) ask = 1;
  ssize_t r = bx_read(x->fd, x->buf, ask);
  if (r <= 0) {
    if (r < 0) x->read_err = errno;
    return -1;
  }
  x->pos = 1;
  x->len = (size_t)r;
  return x->buf[0];
}

/* "xxd: TEXT" as perror gives it; answers the exit status. */
static int perror_status(Xxd *x, int err, int status)
{
  g_autofree char *t = bx_errtext(x->c, err);
  box_out_flush(x->out);
  box_fdprintf(x->c->err, "xxd: %s\n", t);
  return status;
}

static int error_status(Xxd *x, const char *msg, int status)
{
  box_out_flush(x->out);
  box_fdprintf(x->c->err, "xxd: %s\n", msg);
  return status;
}

/* ---- -r ------------------------------------------------------------------- */

static int skip_to_eol(Xxd *x, int ch)
{
  while (ch != '\n' && ch != -1) ch = next_byte(x, -1);
  return ch;
}

/* Reads a dump back into bytes: each line's leading hex number is the
 * offset its bytes go to (the output is seeked there, or zero-filled when
 * it cannot seek), then up to cols pairs of hex digits; -p reads pairs
 * anywhere, blanks ignored. */
static int revert(Xxd *x, int cols, bool plain, long long base)
{
  int n1 = -1, n2 = 0, n3, p = cols;
  bool ign_garb = true;
  long long have = 0, want = 0;
  int ch;
  while ((ch = next_byte(x, -1)) != -1) {
    if (ch == '\r') continue;
    if (plain && (ch == ' ' || ch == '\n' || ch == '\t')) continue;
    n3 = n2;
    n2 = n1;
    n1 = ch >= 0 && ch < 256 ? g_ascii_xdigit_value((gchar)ch) : -1;
    if (n1 == -1 && ign_garb) continue;
    ign_garb = false;
    if (!plain && p >= cols) {
      if (n1 < 0) {
        p = 0;
        continue;
      }
      want = want << 4 | n1;
      continue;
    }
    if (base + want != have) {
      box_out_flush(x->out);
      if (x->out->error) return 3;
      off_t r = lseek(x->out_fd, (off_t)(base + want - have), SEEK_CUR);
      if (r >= 0) have = base + want;
      if (base + want < have) return error_status(x, "Sorry, cannot seek backwards.", 5);
      for (; have < base + want; have++) box_out_putc(x->out, 0);
    }
    if (n2 >= 0 && n1 >= 0) {
      box_out_putc(x->out, (char)(n2 << 4 | n1));
      have++;
      want++;
      n1 = -1;
      if (!plain && ++p >= cols) ch = skip_to_eol(x, ch);
    } else if (n1 < 0 && n2 < 0 && n3 < 0)
      ch = skip_to_eol(x, ch);
    if (ch == '\n') {
      if (!plain) want = 0;
      p = cols;
      ign_garb = true;
    }
    if (x->out->error) return 3;
  }
  if (x->read_err) return perror_status(x, x->read_err, 2);
  return 0;
}

/* ---- the dumps ------------------------------------------------------------ */

/* -a: after the first all-zero line, the others are one "*" (the last
 * one of the run still shown); two in a row show both. */
typedef struct {
  int zero_seen;
  char saved[LINE_CAP + 1];
} Skip;

static void put_line(Xxd *x, Skip *s, const char *l, int nz)
{
  if (!nz && s->zero_seen == 1) g_strlcpy(s->saved, l, sizeof s->saved);
  if (nz || !s->zero_seen++) {
    if (nz) {
      if (nz < 0) s->zero_seen--;
      if (s->zero_seen == 2) box_out_puts(x->out, s->saved);
      if (s->zero_seen > 2) box_out_puts(x->out, "*\n");
    }
    if (nz >= 0 || s->zero_seen > 0) box_out_puts(x->out, l);
    if (nz) s->zero_seen = 0;
  }
}

typedef struct {
  int type, cols, group;
  bool upper, autoskip, ebcdic, decimal, capitalize;
  long long length;
  long long seekoff;
  unsigned long displayoff;
  const char *varname;
} Opts;

static void put_name(Xxd *x, const Opts *o)
{
  if (g_ascii_isdigit(o->varname[0])) box_out_puts(x->out, "__");
  for (const char *p = o->varname; *p; p++)
    box_out_putc(x->out, g_ascii_isalnum(*p) ? (o->capitalize ? g_ascii_toupper(*p) : *p) : '_');
}

static int dump_include(Xxd *x, const Opts *o)
{
  if (o->varname) {
    box_out_puts(x->out, "unsigned char ");
    put_name(x, o);
    box_out_puts(x->out, "[] = {\n");
  }
  long long p = 0;
  int ch;
  while ((o->length < 0 || p < o->length) &&
         (ch = next_byte(x, o->length < 0 ? -1 : o->length - p)) != -1) {
    box_out_puts(x->out, p % o->cols ? ", " : !p ? "  " : ",\n  ");
    box_out_printf(x->out, o->upper ? "0X%02X" : "0x%02x", ch);
    p++;
    if (x->out->error) return 3;
  }
  if (x->read_err) return perror_status(x, x->read_err, 2);
  if (p) box_out_putc(x->out, '\n');
  if (o->varname) {
    box_out_puts(x->out, "};\nunsigned int ");
    put_name(x, o);
    box_out_printf(x->out, "_%s = %lld;\n", o->capitalize ? "LEN" : "len", p);
  }
  return 0;
}

static int dump_plain(Xxd *x, const Opts *o)
{
  const char *hex = o->upper ? "0123456789ABCDEF" : "0123456789abcdef";
  long long n = 0;
  int p = o->cols, ch;
  while ((o->length < 0 || n < o->length) &&
         (ch = next_byte(x, o->length < 0 ? -1 : o->length - n)) != -1) {
    box_out_putc(x->out, hex[ch >> 4]);
    box_out_putc(x->out, hex[ch & 15]);
    n++;
    if (o->cols > 0 && !--p) {
      box_out_putc(x->out, '\n');
      p = o->cols;
    }
    if (x->out->error) return 3;
  }
  if (x->read_err) return perror_status(x, x->read_err, 2);
  if (o->cols == 0 || p < o->cols) box_out_putc(x->out, '\n');
  return 0;
}

/* The usual dump: each line laid out in a buffer of blanks, each byte's
 * digits at its group's place (-e counts a group's bytes backwards) and
 * its character in the text column after them. */
static int dump_lines(Xxd *x, const Opts *o)
{
  const char *hex = o->upper ? "0123456789ABCDEF" : "0123456789abcdef";
  int grplen = o->type == HEX_BITS ? 8 * o->group + 1 : 2 * o->group + 1;
  char l[LINE_CAP + 1];
  Skip skip = { 0 };
  long long n = 0;
  int p = 0, c = 0, addrlen = 9, nonzero = 0, ch;
  while ((o->length < 0 || n < o->length) &&
         (ch = next_byte(x, o->length < 0 ? -1 : o->length - n)) != -1) {
    if (p == 0) {
      unsigned long at = (unsigned long)(n + o->seekoff) + o->displayoff;
      addrlen = o->decimal ? g_snprintf(l, sizeof l, "%08ld:", (long)at)
                           : g_snprintf(l, sizeof l, "%08lx:", at);
      memset(l + addrlen, ' ', LINE_CAP - (size_t)addrlen);
    }
    int at = o->type == HEX_LITTLEENDIAN ? p ^ (o->group - 1) : p;
    c = addrlen + 1 + (grplen * at) / o->group;
    if (o->type == HEX_BITS) {
      for (int i = 7; i >= 0; i--) l[c++] = ch & (1 << i) ? '1' : '0';
    } else {
      l[c] = hex[ch >> 4];
      l[c + 1] = hex[ch & 15];
    }
    if (ch) nonzero++;
    if (o->ebcdic) ch = ch < 64 ? '.' : ebcdic_shown[ch - 64];
    c = addrlen + 3 + (grplen * o->cols - 1) / o->group + p;
    l[c++] = ch > 31 && ch < 127 ? (char)ch : '.';
    n++;
    if (++p == o->cols) {
      l[c] = '\n';
      l[c + 1] = '\0';
      put_line(x, &skip, l, o->autoskip ? nonzero : 1);
      nonzero = 0;
      p = 0;
    }
    if (x->out->error) return 3;
  }
  if (x->read_err) return perror_status(x, x->read_err, 2);
  if (p) {
    l[c] = '\n';
    l[c + 1] = '\0';
    put_line(x, &skip, l, 1);
  } else if (o->autoskip)
    put_line(x, &skip, l, -1);
  return 0;
}

/* -s: seek where the input can, else read up to the place. */
static int seek_input(Xxd *x, Opts *o, bool rel, bool neg)
{
  /* the place as stdio's fseek works it out (a device that takes any
   * offset, /dev/zero, is then at the one asked for) */
  off_t base = 0, target = -1;
  struct stat st;
  if (rel)
    base = lseek(x->fd, 0, SEEK_CUR);
  else if (neg)
    base = fstat(x->fd, &st) == 0 ? st.st_size : -1;
  if (base >= 0) {
    target = base + (off_t)(neg ? -o->seekoff : o->seekoff);
    if (target < 0 || lseek(x->fd, target, SEEK_SET) < 0) target = -1;
  }
  if (target < 0 && neg) return error_status(x, "Sorry, cannot seek.", 4);
  if (target >= 0) {
    o->seekoff = (long long)target;
    return 0;
  }
  for (long long s = o->seekoff; s > 0; s--) {
    if (next_byte(x, s) == -1) {
      if (x->read_err) return perror_status(x, x->read_err, 2);
      return error_status(x, "Sorry, cannot seek.", 4);
    }
  }
  return 0;
}

/* An option's number: attached to it, or the next word (none: usage). */
static bool opt_value(BoxCmd *c, int *i, const char *pp, const char *longer, const char **v)
{
  if (pp[2] && strncmp(longer, pp + 2, strlen(longer)) != 0) {
    *v = pp + 2;
    return true;
  }
  if (*i + 1 >= c->argc) return false;
  *v = c->argv[++*i];
  return true;
}

static int usage(BoxCmd *c)
{
  box_out_flush(c->out);
  box_fdprintf(c->err, "%s", usage_text);
  return 1;
}

/* -b, -e, -p, -i: the dump's type */
static const char type_letters[] = "bepi";
static const int letter_types[] = { HEX_BITS, HEX_LITTLEENDIAN, HEX_POSTSCRIPT, HEX_CINCLUDE };

int box_cmd_xxd(BoxCmd *c)
{
  Opts o = { .type = HEX_NORMAL, .group = -1, .length = -1 };
  bool cols_given = false, rel = true, neg = false, reverse = false;
  int i = 1;
  for (; i < c->argc; i++) {
    const char *a = c->argv[i];
    /* "--opt" is read as "-opt" */
    const char *pp = a + (strncmp(a, "--", 2) == 0 && a[2]);
    const char *v;
    /* xxd reads an option by its first letter: -ps is -p */
    char letter = pp[0] == '-' ? pp[1] : '\0';
    const char *typed = letter ? strchr(type_letters, letter) : NULL;
    bool *flag = letter == 'u'   ? &o.upper
                 : letter == 'C' ? &o.capitalize
                 : letter == 'd' ? &o.decimal
                 : letter == 'E' ? &o.ebcdic
                 : letter == 'r' ? &reverse
                                 : NULL;
    if (letter == 'a')
      o.autoskip = !o.autoskip;
    else if (typed)
      o.type = letter_types[typed - type_letters];
    else if (flag)
      *flag = true;
    else if (letter == 'v') {
      box_out_flush(c->out);
      box_fdprintf(c->err, "xxd 2022-01-14 by Juergen Weigert et al.\n");
      return 0;
    } else if (!strncmp(pp, "-c", 2)) {
      if (pp[2] && !strncmp("apitalize", pp + 2, 9))
        o.capitalize = true;
      else {
        if (!opt_value(c, &i, pp, "ols", &v)) return usage(c);
        cols_given = true;
        o.cols = (int)strtol(v, NULL, 0);
      }
    } else if (!strncmp(pp, "-g", 2)) {
      if (!opt_value(c, &i, pp, "roup", &v)) return usage(c);
      o.group = (int)strtol(v, NULL, 0);
    } else if (!strncmp(pp, "-o", 2)) {
      if (pp[2] && strncmp("ffset", pp + 2, 5))
        o.displayoff = strtoul(pp + 2, NULL, 0);
      else {
        if (i + 1 >= c->argc) return usage(c);
        v = c->argv[++i];
        int r = v[0] == '+', n = v[r] == '-';
        unsigned long d = strtoul(v + r + n, NULL, 0);
        o.displayoff = n ? ULONG_MAX - d + 1 : d;
      }
    } else if (!strncmp(pp, "-s", 2)) {
      rel = neg = false;
      if (pp[2] && strncmp("kip", pp + 2, 3) && strncmp("eek", pp + 2, 3))
        v = pp + 2;
      else if (i + 1 < c->argc)
        v = c->argv[++i];
      else
        return usage(c);
      rel = v[0] == '+';
      neg = v[rel] == '-';
      o.seekoff = strtol(v + rel + neg, NULL, 0);
    } else if (!strncmp(pp, "-l", 2)) {
      if (!opt_value(c, &i, pp, "en", &v)) return usage(c);
      o.length = strtol(v, NULL, 0);
    } else if (!strncmp(pp, "-n", 2)) {
      if (!opt_value(c, &i, pp, "ame", &v)) return usage(c);
      o.varname = v;
    } else if (!strcmp(pp, "--")) {
      i++;
      break;
    } else if (pp[0] == '-' && pp[1])
      return usage(c);
    else
      break;
  }

  if (!cols_given || (!o.cols && o.type != HEX_POSTSCRIPT))
    o.cols = o.type == HEX_POSTSCRIPT ? 30
             : o.type == HEX_CINCLUDE ? 12
             : o.type == HEX_BITS     ? 6
                                      : 16;
  if (o.group < 0)
    o.group = o.type == HEX_BITS           ? 1
              : o.type == HEX_NORMAL       ? 2
              : o.type == HEX_LITTLEENDIAN ? 4
                                           : 0;
  if ((o.type == HEX_POSTSCRIPT && o.cols < 0) ||
      (o.type != HEX_POSTSCRIPT && (o.cols < 1 || o.cols > MAX_COLS))) {
    box_out_flush(c->out);
    box_fdprintf(c->err, "xxd: invalid number of columns (max. %d).\n", MAX_COLS);
    return 1;
  }
  if (o.group < 1 || o.group > o.cols)
    o.group = o.cols;
  else if (o.type == HEX_LITTLEENDIAN && (o.group & (o.group - 1))) {
    box_out_flush(c->out);
    box_fdprintf(c->err, "xxd: number of octets per group must be a power of 2 with -e.\n");
    return 1;
  }
  if (c->argc - i > 2) return usage(c);

  const char *in_name = i < c->argc ? c->argv[i] : "-";
  const char *out_name = i + 1 < c->argc ? c->argv[i + 1] : "-";
  bool std_in = strcmp(in_name, "-") == 0;
  Xxd x = { .c = c, .fd = -1, .out = c->out, .out_fd = c->out_fd };
  x.fd = std_in ? c->in : box_open_file(in_name, O_RDONLY | O_NOCTTY);
  if (x.fd < 0) {
    int err = std_in ? EBADF : errno;
    g_autofree char *t = bx_errtext(c, err);
    box_out_flush(c->out);
    box_fdprintf(c->err, "xxd: %s: %s\n", in_name, t);
    return 2;
  }
  BoxOut file_out;
  int status = 0;
  if (strcmp(out_name, "-") != 0) {
    /* -r patches the file it is given; a dump replaces it */
    int fd = box_open_file(out_name, O_WRONLY | O_CREAT | (reverse ? 0 : O_TRUNC));
    if (fd < 0) {
      g_autofree char *t = bx_errtext(c, errno);
      box_out_flush(c->out);
      box_fdprintf(c->err, "xxd: %s: %s\n", out_name, t);
      if (!std_in) close(x.fd);
      return 3;
    }
    box_out_init(&file_out, fd);
    x.out = &file_out;
    x.out_fd = fd;
  }
  x.cap = 65536;
  x.buf = g_malloc(x.cap);

  if (reverse) {
    if (o.type != HEX_NORMAL && o.type != HEX_POSTSCRIPT)
      status = error_status(&x, "Sorry, cannot revert this type of hexdump", 255);
    else
      status = revert(&x, o.cols, o.type == HEX_POSTSCRIPT, neg ? -o.seekoff : o.seekoff);
  } else {
    if (o.seekoff || neg || !rel) status = seek_input(&x, &o, rel, neg);
    if (status == 0) {
      if (o.type == HEX_CINCLUDE) {
        /* the array is named after the input file, unless -n names it */
        if (!o.varname && !std_in) o.varname = in_name;
        status = dump_include(&x, &o);
      } else if (o.type == HEX_POSTSCRIPT)
        status = dump_plain(&x, &o);
      else
        status = dump_lines(&x, &o);
    }
  }
  if (x.out != c->out) {
    if (!box_out_flush(x.out) && status == 0) status = perror_status(&x, x.out->err, 3);
    close(x.out_fd);
  }
  if (!std_in) close(x.fd);
  g_free(x.buf);
  return status;
}
