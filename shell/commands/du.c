/* du.c — GNU du: -s -h -a -c -d/--max-depth -b -k -m -B -L -P -S -x -l -0
 * --apparent-size --si.  Each entry is one lstat (a read_metadata
 * decision through the mount) and each directory one enumerate (getdents
 * through bx_list_dir); sizes are summed in bytes and rounded up only when
 * printed, as GNU does. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  BoxCmd *c;
  bool all, human, si, apparent, separate, one_fs, count_links, follow, deref_args, hash_all;
  char eol;
  long max_depth;           /* -1: no limit */
  unsigned long long block; /* output unit in bytes */
  GHashTable *seen;         /* "dev:ino" of what was counted */
  dev_t root_dev;
  int status;
} Du;

static const char longopts[] =
  "all=a summarize=s human-readable=h total=c max-depth=d: bytes=b apparent-size=A block-size=B: "
  "dereference=L "
  "no-dereference=P separate-dirs=S one-file-system=x count-links=l null=0 si=I";

static unsigned long long size_of(const Du *d, const struct stat *st)
{
  return d->apparent ? (unsigned long long)(st->st_size > 0 ? st->st_size : 0)
                     : (unsigned long long)st->st_blocks * 512;
}

static void print_size(Du *d, unsigned long long bytes, const char *name)
{
  char buf[64];
  if (d->human)
    bx_human_size(bytes, d->si, buf, sizeof buf);
  else
    snprintf(buf, sizeof buf, "%llu", (bytes + d->block - 1) / d->block);
  box_out_printf(d->c->out, "%s\t%s", buf, name);
  bx_put(d->c, &d->eol, 1);
}

/* false when this object was counted already (a hard link, or an operand
 * seen twice): GNU counts each inode once. */
static bool first_time(Du *d, const struct stat *st)
{
  if (d->count_links) return true;
  if (!d->hash_all && (S_ISDIR(st->st_mode) || st->st_nlink < 2)) return true;
  char *k =
    g_strdup_printf("%llu:%llu", (unsigned long long)st->st_dev, (unsigned long long)st->st_ino);
  if (g_hash_table_contains(d->seen, k)) {
    g_free(k);
    return false;
  }
  g_hash_table_add(d->seen, k);
  return true;
}

/* The box lists a directory in name order (C locale), as its ls and find
 * do, not in the order the directory gives. */
static int ent_cmp(const void *a, const void *b)
{
  return strcmp(((const BxDirEnt *)a)->name, ((const BxDirEnt *)b)->name);
}

/* Returns the bytes path contributes to its parent. */
static unsigned long long walk(Du *d, const char *path, long depth, bool top, bool *is_dir)
{
  struct stat st;
  *is_dir = false;
  int r = d->follow || (top && d->deref_args) ? stat(path, &st) : lstat(path, &st);
  if (r != 0) {
    int e = errno;
    bx_err_q(d->c, "du", "cannot access %s", path, e);
    d->status = 1;
    return 0;
  }
  if (top) d->root_dev = st.st_dev;
  if (!top && d->one_fs && st.st_dev != d->root_dev) return 0;
  if (!first_time(d, &st)) return 0;
  unsigned long long own = size_of(d, &st);
  *is_dir = S_ISDIR(st.st_mode);
  if (!S_ISDIR(st.st_mode)) {
    if ((top || d->all) && (d->max_depth < 0 || depth <= d->max_depth)) print_size(d, own, path);
    return own;
  }
  int err = 0;
  GArray *v = bx_list_dir(path, &err);
  unsigned long long sub = 0;
  if (!v) {
    bx_err_q(d->c, "du", "cannot read directory %s", path, err);
    d->status = 1;
  } else {
    g_array_sort(v, ent_cmp);
    for (guint i = 0; i < v->len; i++) {
      BxDirEnt *e = &g_array_index(v, BxDirEnt, i);
      char *p = bx_path_join(path, e->name);
      bool sub_dir;
      unsigned long long s = walk(d, p, depth + 1, false, &sub_dir);
      g_free(p);
      if (!d->separate || !sub_dir) sub += s;
    }
    bx_dir_free(v);
  }
  if (d->max_depth < 0 || depth <= d->max_depth) print_size(d, own + sub, path);
  return own + sub;
}

int box_cmd_du(BoxCmd *c)
{
  Du d = { .c = c, .eol = '\n', .max_depth = -1, .block = 1024 };
  bool summarize = false, total = false, have_depth = false;
  BX_EACH_OPTION (ch, c, "du", "ashcd:bB:kmLPSxl0DH", longopts) switch (ch) {
    case 'a': d.all = true; break;
    case 's': summarize = true; break;
    case 'h':
      d.human = true;
      d.si = false;
      break;
    case 'I':
      d.human = true;
      d.si = true;
      break;
    case 'c': total = true; break;
    case 'd': {
      char *end;
      errno = 0;
      long v = strtol(optarg, &end, 10);
      if (!*optarg || *end || errno || v < 0) {
        bx_usage_q(c, "du", "invalid maximum depth %s", optarg);
        return 1;
      }
      d.max_depth = v;
      have_depth = true;
      break;
    }
    case 'b':
      d.apparent = true;
      d.block = 1;
      d.human = false;
      break;
    case 'A': d.apparent = true; break;
    case 'B': {
      unsigned long long b;
      if (!bx_parse_size(optarg, &b) || b == 0) {
        bx_err_q(c, "du", "invalid -B argument %s", optarg, 0);
        return 1;
      }
      d.block = b;
      d.human = false;
      break;
    }
    case 'k':
      d.block = 1024;
      d.human = false;
      break;
    case 'm':
      d.block = 1024 * 1024;
      d.human = false;
      break;
    case 'L': d.follow = true; break;
    case 'P': d.follow = false; break;
    case 'D':
    case 'H': d.deref_args = true; break;
    case 'S': d.separate = true; break;
    case 'x': d.one_fs = true; break;
    case 'l': d.count_links = true; break;
    case '0': d.eol = '\0'; break;
    default: return 1;
    }
  if (summarize && d.all) {
    bx_usage(c, "du", "cannot both summarize and show all entries");
    return 1;
  }
  if (summarize && have_depth && d.max_depth == 0) {
    bx_err(c, "du", "warning: summarizing is the same as using --max-depth=0");
  } else if (summarize && have_depth) {
    bx_usage(c, "du", "warning: summarizing conflicts with --max-depth=%ld", d.max_depth);
    return 1;
  }
  if (summarize) d.max_depth = 0;
  int nops = c->argc - optind;
  d.hash_all = nops > 1 || d.follow;
  d.seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  unsigned long long sum = 0;
  bool dir;
  if (nops == 0) sum += walk(&d, ".", 0, true, &dir);
  for (int i = optind; i < c->argc; i++) sum += walk(&d, c->argv[i], 0, true, &dir);
  if (total) print_size(&d, sum, "total");
  g_hash_table_destroy(d.seen);
  return d.status;
}
