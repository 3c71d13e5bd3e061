/* sums.c — GNU md5sum, sha1sum, sha256sum: "HASH  NAME" lines (names with
 * '\\' or a newline escaped behind a leading '\\'), -b/-t, -z, and -c
 * with --quiet --status --strict --ignore-missing -w. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

enum { OPT_QUIET = 1, OPT_STATUS, OPT_STRICT, OPT_IGNORE_MISSING, OPT_TAG };
static const char longopts[] =
  "check=c binary=b text=t zero=z quiet=\1 status=\2 strict=\3 warn=w ignore-missing=\4";

/* The hex digest of a file, or NULL with errno. */
static char *digest_fd(GChecksumType t, int fd)
{
  GChecksum *ck = g_checksum_new(t);
  char buf[65536];
  for (;;) {
    ssize_t r = bx_read(fd, buf, sizeof buf);
    if (r < 0) {
      int e = errno;
      g_checksum_free(ck);
      errno = e;
      return NULL;
    }
    if (r == 0) break;
    g_checksum_update(ck, (const guchar *)buf, r);
  }
  char *s = g_strdup(g_checksum_get_string(ck));
  g_checksum_free(ck);
  return s;
}

static char *digest_name(BoxCmd *c, GChecksumType t, const char *name)
{
  int fd = bx_open_in(c, name);
  if (fd < 0) return NULL;
  char *d = digest_fd(t, fd);
  int e = errno;
  bx_close_in(c, fd);
  errno = e;
  return d;
}

typedef struct {
  bool quiet, status, strict, warn, ignore_missing;
} CheckOpts;

static int check_file(BoxCmd *c, const char *cmd, GChecksumType t, const char *list,
                      const CheckOpts *o)
{
  GString *text = bx_slurp_new(c, cmd, list);
  if (!text) return 1;
  size_t hexlen = (size_t)g_checksum_type_get_length(t) * 2;
  unsigned long long bad_format = 0, unread = 0, mismatch = 0, good = 0, lineno = 0;
  bool matched_any = false;
  char *save = NULL;
  (void)save;
  size_t pos = 0;
  while (pos < text->len) {
    const char *ln = text->str + pos;
    const char *nl = memchr(ln, '\n', text->len - pos);
    size_t len = nl ? (size_t)(nl - ln) : text->len - pos;
    pos += len + (nl ? 1 : 0);
    lineno++;
    char *line = g_strndup(ln, len);
    bool escaped = false;
    char *p = line;
    if (*p == '\\') {
      escaped = true;
      p++;
    }
    size_t h = 0;
    while (g_ascii_isxdigit(p[h])) h++;
    if (h != hexlen || p[h] != ' ' || (p[h + 1] != ' ' && p[h + 1] != '*') || !p[h + 2]) {
      bad_format++;
      if (o->warn)
        bx_err(c, cmd, "%s: %llu: improperly formatted %s checksum line",
               strcmp(list, "-") ? list : "standard input", lineno,
               t == G_CHECKSUM_MD5    ? "MD5"
               : t == G_CHECKSUM_SHA1 ? "SHA1"
                                      : "SHA256");
      g_free(line);
      continue;
    }
    char *want = g_ascii_strdown(p, (gssize)h);
    GString *name = g_string_new(NULL);
    for (const char *q = p + h + 2; *q; q++) {
      if (escaped && *q == '\\' && q[1] == 'n') {
        g_string_append_c(name, '\n');
        q++;
      } else if (escaped && *q == '\\' && q[1] == '\\') {
        g_string_append_c(name, '\\');
        q++;
      } else
        g_string_append_c(name, *q);
    }
    char *got = digest_name(c, t, name->str);
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

static int sum_main(BoxCmd *c, const char *cmd, GChecksumType t)
{
  bool check = false, binary = false, zero = false;
  CheckOpts co = { false, false, false, false, false };
  BX_EACH_OPTION (o, c, cmd, "bctwz", longopts) switch (o) {
    case 'c': check = true; break;
    case 'b': binary = true; break;
    case 't': binary = false; break;
    case 'z': zero = true; break;
    case 'w': co.warn = true; break;
    case OPT_QUIET: co.quiet = true; break;
    case OPT_STATUS: co.status = true; break;
    case OPT_STRICT: co.strict = true; break;
    case OPT_IGNORE_MISSING: co.ignore_missing = true; break;
    default: return 1;
    }
  int n;
  char **names = bx_file_operands(c, &n);
  int status = 0;
  for (int i = 0; i < n; i++) {
    if (check) {
      if (check_file(c, cmd, t, names[i], &co)) status = 1;
      continue;
    }
    char *d = digest_name(c, t, names[i]);
    if (!d) {
      bx_ferr(c, cmd, names[i], errno);
      status = 1;
      continue;
    }
    const char *nm = names[i];
    bool esc = !zero && (strchr(nm, '\\') || strchr(nm, '\n'));
    if (esc) box_out_putc(c->out, '\\');
    box_out_printf(c->out, "%s %c", d, binary ? '*' : ' ');
    for (const char *q = nm; *q; q++) {
      if (esc && *q == '\\')
        box_out_printf(c->out, "\\\\");
      else if (esc && *q == '\n')
        box_out_printf(c->out, "\\n");
      else
        box_out_putc(c->out, *q);
    }
    box_out_putc(c->out, zero ? '\0' : '\n');
    g_free(d);
  }
  return status;
}

int box_cmd_md5sum(BoxCmd *c)
{
  return sum_main(c, "md5sum", G_CHECKSUM_MD5);
}
int box_cmd_sha1sum(BoxCmd *c)
{
  return sum_main(c, "sha1sum", G_CHECKSUM_SHA1);
}
int box_cmd_sha256sum(BoxCmd *c)
{
  return sum_main(c, "sha256sum", G_CHECKSUM_SHA256);
}
