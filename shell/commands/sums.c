/* sums.c — GNU md5sum, sha1sum, sha224sum, sha256sum, sha384sum,
 * sha512sum, b2sum: "HASH  NAME" lines, or --tag's "ALGO (NAME) = HASH"
 * (names with '\\' or a newline escaped behind a leading '\\'), -b/-t,
 * -z, b2sum's -l, and -c of either form with --quiet --status --strict
 * --ignore-missing -w. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"
#include "shell/commands/digest.h"

/* One command's algorithm: its type, the name its messages give it, and
 * the digest's length in bytes (b2sum's -l, or what a -c line shows). */
typedef struct {
  const char *cmd, *label;
  BxDigestType type;
  size_t bytes;
} Algo;

enum { OPT_QUIET = 1, OPT_STATUS, OPT_STRICT, OPT_IGNORE_MISSING, OPT_TAG };
#define SUM_LONGOPTS                                                                               \
  "check=c binary=b text=t zero=z quiet=\1 status=\2 strict=\3 warn=w ignore-missing=\4 tag=\5"
static const char longopts[] = SUM_LONGOPTS;
static const char b2_longopts[] = SUM_LONGOPTS " length=l:";

/* The hex digest of a file, or NULL with errno. */
static char *digest_fd(const Algo *a, int fd)
{
  BxDigest *ck = bx_digest_new(a->type, a->bytes);
  char buf[65536];
  for (;;) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) {
      int e = errno;
      g_free(bx_digest_finish(ck));
      errno = e;
      return NULL;
    }
    if (r == 0) break;
    bx_digest_update(ck, buf, (size_t)r);
  }
  return bx_digest_finish(ck);
}

static char *digest_name(BoxCmd *c, const Algo *a, const char *name)
{
  int fd = bx_open_in(c, name);
  if (fd < 0) return NULL;
  char *d = digest_fd(a, fd);
  int e = errno;
  bx_close_in(c, fd);
  errno = e;
  return d;
}

typedef struct {
  bool quiet, status, strict, warn, ignore_missing;
} CheckOpts;

/* A checksum line's parts: the hex digest (h digits) and the name (n
 * bytes, still escaped). */
typedef struct {
  const char *hex, *name;
  size_t h, n;
} SumLine;

/* "HASH  NAME" or "HASH *NAME"; b2sum takes the digest's length for the
 * line's, up to BLAKE2b's 512 bits. */
static bool plain_line(const char *p, Algo *a, SumLine *s)
{
  s->hex = p;
  s->h = strspn(p, "0123456789abcdefABCDEF");
  if (a->type == BX_DIGEST_BLAKE2B && s->h >= 2 && s->h % 2 == 0 && s->h <= 128)
    a->bytes = s->h / 2;
  if (s->h != a->bytes * 2 || p[s->h] != ' ' || (p[s->h + 1] != ' ' && p[s->h + 1] != '*') ||
      !p[s->h + 2])
    return false;
  s->name = p + s->h + 2;
  s->n = strlen(s->name);
  return true;
}

/* --tag's "ALGO (NAME) = HASH", the algorithm this command's (b2sum's
 * with its length in bits when not 512: "BLAKE2b-256"); as GNU reads
 * it, one space may come before "(", the name runs to the last ")", and
 * blanks may stand around "=". */
static bool tagged_line(const char *p, Algo *a, SumLine *s)
{
  size_t l = strlen(a->label);
  if (strncmp(p, a->label, l) != 0) return false;
  const char *q = p + l;
  if (a->type == BX_DIGEST_BLAKE2B) {
    a->bytes = 64;
    if (*q == '-') {
      char *end;
      unsigned long bits = strtoul(q + 1, &end, 10);
      if (end == q + 1 || !bits || bits % 8 || bits > 512) return false;
      a->bytes = bits / 8;
      q = end;
    }
  }
  if (*q == ' ') q++;
  if (*q != '(') return false;
  const char *close = strrchr(q, ')');
  if (!close || close == q) return false;
  s->name = q + 1;
  s->n = (size_t)(close - s->name);
  const char *eq = close + 1 + strspn(close + 1, " \t");
  if (*eq != '=') return false;
  s->hex = eq + 1 + strspn(eq + 1, " \t");
  s->h = strspn(s->hex, "0123456789abcdefABCDEF");
  return s->h == a->bytes * 2 && !s->hex[s->h];
}

static int check_file(BoxCmd *c, const Algo *algo, const char *list, const CheckOpts *o)
{
  const char *cmd = algo->cmd;
  GString *text = bx_slurp_new(c, cmd, list);
  if (!text) return 1;
  unsigned long long bad_format = 0, unread = 0, mismatch = 0, good = 0, lineno = 0;
  bool matched_any = false;
  size_t pos = 0;
  while (pos < text->len) {
    const char *ln = text->str + pos;
    const char *nl = memchr(ln, '\n', text->len - pos);
    size_t len = nl ? (size_t)(nl - ln) : text->len - pos;
    pos += len + (nl ? 1 : 0);
    lineno++;
    char *line = g_strndup(ln, len);
    bool escaped = false;
    char *p = line + strspn(line, " \t");
    if (*p == '\\') {
      escaped = true;
      p++;
    }
    Algo a = *algo;
    SumLine s;
    if (!tagged_line(p, &a, &s) && (a = *algo, !plain_line(p, &a, &s))) {
      bad_format++;
      if (o->warn) {
        g_autofree char *q = bx_quote(strcmp(list, "-") ? list : "standard input");
        bx_err(c, cmd, "%s: %llu: improperly formatted %s checksum line", q, lineno, a.label);
      }
      g_free(line);
      continue;
    }
    char *want = g_ascii_strdown(s.hex, (gssize)s.h);
    GString *name = g_string_new(NULL);
    for (const char *q = s.name; q < s.name + s.n; q++) {
      if (escaped && *q == '\\' && q[1] == 'n') {
        g_string_append_c(name, '\n');
        q++;
      } else if (escaped && *q == '\\' && q[1] == '\\') {
        g_string_append_c(name, '\\');
        q++;
      } else
        g_string_append_c(name, *q);
    }
    char *got = digest_name(c, &a, name->str);
    if (!got) {
      int e = errno;
      if (!(o->ignore_missing && e == ENOENT)) {
        bx_ferr(c, cmd, name->str, e);
        unread++;
        if (!o->status) box_out_printf(c->out, "%s: FAILED open or read\n", name->str);
      }
    } else {
      matched_any = true;
      if (strcmp(got, want) == 0) {
        good++;
        if (!o->quiet && !o->status) box_out_printf(c->out, "%s: OK\n", name->str);
      } else {
        mismatch++;
        if (!o->status) box_out_printf(c->out, "%s: FAILED\n", name->str);
      }
    }
    g_free(got);
    g_free(want);
    g_string_free(name, TRUE);
    g_free(line);
  }
  g_string_free(text, TRUE);
  (void)good;
  if (!matched_any && unread == 0 && mismatch == 0 && (lineno == bad_format)) {
    g_autofree char *q = bx_quote(strcmp(list, "-") ? list : "standard input");
    bx_err(c, cmd, "%s: no properly formatted checksum lines found", q);
    return 1;
  }
  if (!o->status) {
    if (bad_format)
      bx_err(c, cmd,
             bad_format == 1 ? "WARNING: %llu line is improperly formatted"
                             : "WARNING: %llu lines are improperly formatted",
             bad_format);
    if (unread)
      bx_err(c, cmd,
             unread == 1 ? "WARNING: %llu listed file could not be read"
                         : "WARNING: %llu listed files could not be read",
             unread);
    if (mismatch)
      bx_err(c, cmd,
             mismatch == 1 ? "WARNING: %llu computed checksum did NOT match"
                           : "WARNING: %llu computed checksums did NOT match",
             mismatch);
  }
  return (unread || mismatch || (o->strict && bad_format)) ? 1 : 0;
}

/* b2sum's -l BITS: a multiple of 8 up to 512, 0 for the default. */
static bool b2_length(BoxCmd *c, Algo *a, const char *arg)
{
  g_autofree char *q = bx_quote_always(arg);
  char *end;
  errno = 0;
  unsigned long long bits = g_ascii_strtoull(arg, &end, 10);
  if (!*arg || *end || errno || !g_ascii_isdigit(*arg)) {
    bx_err(c, a->cmd, "invalid length: %s", q);
    return false;
  }
  if (bits % 8) {
    bx_err(c, a->cmd, "invalid length: %s", q);
    bx_err(c, a->cmd, "length is not a multiple of 8");
    return false;
  }
  if (bits > 512) {
    bx_err(c, a->cmd, "invalid length: %s", q);
    bx_err(c, a->cmd, "maximum digest length for 'BLAKE2b' is 512 bits");
    return false;
  }
  a->bytes = bits ? bits / 8 : 64;
  return true;
}

static int sum_main(BoxCmd *c, const Algo *named)
{
  Algo algo = *named;
  const char *cmd = algo.cmd;
  algo.bytes = bx_digest_default_bytes(algo.type);
  bool b2 = algo.type == BX_DIGEST_BLAKE2B;
  bool check = false, zero = false, tag = false;
  int binary = -1; /* -b 1, -t 0, neither -1 */
  CheckOpts co = { false, false, false, false, false };
  BX_EACH_OPTION (o, c, cmd, b2 ? "bctwzl:" : "bctwz", b2 ? b2_longopts : longopts) switch (o) {
    case 'c': check = true; break;
    case 'b': binary = 1; break;
    case 't': binary = 0; break;
    case OPT_TAG:
      tag = true;
      binary = 1;
      break;
    case 'z': zero = true; break;
    case 'w': co.warn = true; break;
    case 'l':
      if (!b2_length(c, &algo, optarg)) return 1;
      break;
    case OPT_QUIET: co.quiet = true; break;
    case OPT_STATUS: co.status = true; break;
    case OPT_STRICT: co.strict = true; break;
    case OPT_IGNORE_MISSING: co.ignore_missing = true; break;
    default: return 1;
    }
  if (tag && !binary) {
    bx_usage(c, cmd, "--tag does not support --text mode");
    return 1;
  }
  if (tag && check) {
    bx_usage(c, cmd, "the --tag option is meaningless when verifying checksums");
    return 1;
  }
  int n;
  char **names = bx_file_operands(c, &n);
  int status = 0;
  for (int i = 0; i < n; i++) {
    if (check) {
      if (check_file(c, &algo, names[i], &co)) status = 1;
      continue;
    }
    char *d = digest_name(c, &algo, names[i]);
    if (!d) {
      bx_ferr(c, cmd, names[i], errno);
      status = 1;
      continue;
    }
    const char *nm = names[i];
    bool esc = !zero && (strchr(nm, '\\') || strchr(nm, '\n'));
    if (esc) box_out_putc(c->out, '\\');
    if (tag && b2 && algo.bytes != 64)
      box_out_printf(c->out, "%s-%zu (", algo.label, algo.bytes * 8);
    else if (tag)
      box_out_printf(c->out, "%s (", algo.label);
    else
      box_out_printf(c->out, "%s %c", d, binary == 1 ? '*' : ' ');
    for (const char *q = nm; *q; q++) {
      if (esc && *q == '\\')
        box_out_printf(c->out, "\\\\");
      else if (esc && *q == '\n')
        box_out_printf(c->out, "\\n");
      else
        box_out_putc(c->out, *q);
    }
    if (tag) box_out_printf(c->out, ") = %s", d);
    box_out_putc(c->out, zero ? '\0' : '\n');
    g_free(d);
  }
  return status;
}

static const Algo algos[] = {
  { "b2sum", "BLAKE2b", BX_DIGEST_BLAKE2B, 0 },   { "md5sum", "MD5", BX_DIGEST_MD5, 0 },
  { "sha1sum", "SHA1", BX_DIGEST_SHA1, 0 },       { "sha224sum", "SHA224", BX_DIGEST_SHA224, 0 },
  { "sha256sum", "SHA256", BX_DIGEST_SHA256, 0 }, { "sha384sum", "SHA384", BX_DIGEST_SHA384, 0 },
  { "sha512sum", "SHA512", BX_DIGEST_SHA512, 0 },
};

/* One function for the seven names, as they differ only in the algorithm. */
int box_cmd_sums(BoxCmd *c)
{
  const char *cmd = c->argv[0];
  const char *slash = strrchr(cmd, '/');
  if (slash) cmd = slash + 1;
  for (size_t i = 0; i < G_N_ELEMENTS(algos); i++)
    if (strcmp(algos[i].cmd, cmd) == 0) return sum_main(c, &algos[i]);
  /* only commands.def's names reach here; sha256sum for any other */
  return sum_main(c, &algos[4]);
}
