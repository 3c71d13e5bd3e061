/* uniq.c — GNU uniq: -c -d -D -u -i -f N -s N -w N -z, INPUT [OUTPUT]. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  bool count, dups, all_dups, uniq_only, icase;
  unsigned long skip_fields, skip_chars, check_chars;
  bool check_limit;
} UniqOpt;

static void key_of(const UniqOpt *o, const char *p, size_t len, const char **kb, size_t *kl)
{
  const char *e = p + len;
  for (unsigned long f = 0; f < o->skip_fields; f++) {
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    while (p < e && !(*p == ' ' || *p == '\t')) p++;
  }
  size_t sc = MIN(o->skip_chars, (size_t)(e - p));
  p += sc;
  size_t n = (size_t)(e - p);
  if (o->check_limit && n > o->check_chars) n = o->check_chars;
  *kb = p;
  *kl = n;
}

static bool same(const UniqOpt *o, const char *a, size_t al, const char *b, size_t bl)
{
  const char *ka, *kb;
  size_t la, lb;
  key_of(o, a, al, &ka, &la);
  key_of(o, b, bl, &kb, &lb);
  if (la != lb) return false;
  return o->icase ? g_ascii_strncasecmp(ka, kb, la) == 0 : memcmp(ka, kb, la) == 0;
}

static bool num_arg(BoxCmd *c, const char *v, const char *what, unsigned long *out)
{
  char *end;
  errno = 0;
  unsigned long n = strtoul(v, &end, 10);
  if (!*v || *end || errno || *v == '-') {
    bx_err(c, "uniq", "%s: invalid number of %s", v, what);
    return false;
  }
  *out = n;
  return true;
}

static const char longopts[] = "count=c repeated=d all-repeated=D:: unique=u ignore-case=i "
                               "skip-fields=f: skip-chars=s: check-chars=w: "
                               "zero-terminated=z";

int box_cmd_uniq(BoxCmd *c)
{
  UniqOpt o = { 0 };
  char delim = '\n';
  BX_EACH_OPTION (ch, c, "uniq", "cdDuif:s:w:z", longopts) switch (ch) {
    case 'c': o.count = true; break;
    case 'd': o.dups = true; break;
    case 'D': o.all_dups = true; break;
    case 'u': o.uniq_only = true; break;
    case 'i': o.icase = true; break;
    case 'f':
      if (!num_arg(c, optarg, "fields to skip", &o.skip_fields)) return 1;
      break;
    case 's':
      if (!num_arg(c, optarg, "bytes to skip", &o.skip_chars)) return 1;
      break;
    case 'w':
      if (!num_arg(c, optarg, "bytes to compare", &o.check_chars)) return 1;
      o.check_limit = true;
      break;
    case 'z': delim = '\0'; break;
    default: return 1;
    }
  if (o.all_dups && o.count) {
    bx_usage(c, "uniq", "printing all duplicated lines and repeat counts is meaningless");
    return 1;
  }
  int nf = c->argc - optind;
  if (nf > 2) {
    bx_usage_q(c, "uniq", "extra operand %s", c->argv[optind + 2]);
    return 1;
  }
  const char *in = nf >= 1 ? c->argv[optind] : "-";
  int fd = bx_open_in(c, in);
  if (fd < 0) {
    bx_ferr(c, "uniq", in, errno);
    return 1;
  }
  BoxOut fo, *out = c->out;
  int ofd = -1;
  if (nf == 2 && strcmp(c->argv[optind + 1], "-") != 0) {
    ofd = box_open_file(c->argv[optind + 1], O_WRONLY | O_CREAT | O_TRUNC);
    if (ofd < 0) {
      bx_ferr(c, "uniq", c->argv[optind + 1], errno);
      bx_close_in(c, fd);
      return 1;
    }
    box_out_init(&fo, ofd);
    out = &fo;
  }
  BxReader r;
  bx_reader_init(&r, fd);
  GString *prev = g_string_new(NULL);
  bool have = false;
  unsigned long long n = 0;
  const char *rec;
  size_t len;
  for (;;) {
    bool got = bx_reader_next(&r, delim, &rec, &len);
    if (got && len && rec[len - 1] == delim) len--;
    bool eq = got && have && same(&o, prev->str, prev->len, rec, len);
    if (have && !eq) {
      /* the group of prev ends */
      bool show = (!o.dups && !o.uniq_only && !o.all_dups) || (o.dups && n > 1 && !o.uniq_only) ||
                  (o.uniq_only && n == 1 && !o.dups) || (o.all_dups && n > 1);
      if (o.all_dups) show = n > 1;
      if (show) {
        if (o.count) box_out_printf(out, "%7llu ", n);
        box_out_write(out, prev->str, prev->len);
        box_out_putc(out, delim);
      }
    }
    if (!got) break;
    if (eq) {
      n++;
      if (o.all_dups) {
        box_out_write(out, prev->str, prev->len);
        box_out_putc(out, delim);
        g_string_truncate(prev, 0);
        g_string_append_len(prev, rec, len);
      }
      continue;
    }
    g_string_truncate(prev, 0);
    g_string_append_len(prev, rec, len);
    have = true;
    n = 1;
  }
  int err = r.err;
  bx_reader_free(&r);
  g_string_free(prev, TRUE);
  bx_close_in(c, fd);
  if (ofd >= 0) {
    box_out_flush(out);
    close(ofd);
  }
  if (err) {
    bx_ferr(c, "uniq", in, err);
    return 1;
  }
  return 0;
}
