/* unzip.c — Info-ZIP's unzip with -l -o -n -d -q -p -t -j and member operands
 * (wildcards as unzip's), reading the archive's central directory itself
 * (archive.h) and inflating with zlib.
 *
 * Each member is its own create on the mount.  As unzip does, a member's
 * leading "/" and its ".." components are dropped, and an existing file is
 * unlinked before a member replaces it (-o), never written through; a
 * symlink member is made after every other member, so none is written
 * through a link the archive planted. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/archive.h"
#include "shell/commands/zlib_dl.h"

typedef struct {
  BoxCmd *c;
  bool list, overwrite, never, pipe, refused, test, junk;
  bool troubled; /* the member at hand was reported */
  int quiet;     /* -qq lists without the heading and the totals */
  const char *dir;
  int status;
  GPtrArray *links; /* symlinks made last: path, target, … */
} Unzip;

/* unzip's complaints go to standard error, but under -t, where they are
 * the output */
static void complain(Unzip *u, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void complain(Unzip *u, const char *fmt, ...)
{
  GString *m = g_string_new(NULL);
  va_list ap;
  va_start(ap, fmt);
  g_string_append_vprintf(m, fmt, ap);
  va_end(ap);
  if (!u->test) {
    box_out_flush(u->c->out);
    box_fdprintf(u->c->err, "%s", m->str);
  } else {
    box_out_puts(u->c->out, m->str);
  }
  g_string_free(m, TRUE);
}

/* The member's data, inflated; NULL after the message.  named: a line
 * naming the member is open; shown: the member's name as said. */
static GString *member_data(Unzip *u, const BxZipEntry *e, const unsigned char *d, size_t n,
                            bool named, const char *shown)
{
  u->troubled = false;
  size_t at = bx_zip_data_offset(e, d, n);
  if (!at && e->csize) {
    bx_err(u->c, "unzip", "%s: bad zipfile offset (local header sig):  %u", e->name, e->offset);
    u->status = 3;
    return NULL;
  }
  GString *s = g_string_sized_new(e->usize + 1);
  if (e->method == 0) {
    g_string_append_len(s, (const char *)d + at, e->csize);
  } else if (e->method == 8) {
    g_string_set_size(s, e->usize);
    z_stream z = { 0 };
    inflateInit2(&z, -15);
    z.next_in = (unsigned char *)d + at;
    z.avail_in = e->csize;
    z.next_out = (unsigned char *)s->str;
    z.avail_out = e->usize;
    int r = inflate(&z, Z_FINISH);
    inflateEnd(&z);
    if (r != Z_STREAM_END || z.total_out != e->usize) {
      /* the member's line open, the reason ends it; else it names the member */
      complain(u, "%s  error:  invalid compressed data to inflate%s%s\n", named ? "\n" : "",
               named ? "" : " ", named ? "" : shown);
      u->status = 2;
      g_string_free(s, TRUE);
      return NULL;
    }
  } else {
    box_out_printf(u->c->out, "   skipping: %-22s  unsupported compression method %u\n", e->name,
                   e->method);
    u->status = 1;
    g_string_free(s, TRUE);
    return NULL;
  }
  uLong crc = crc32(0, (const unsigned char *)s->str, (uInt)s->len);
  if (crc != e->crc) {
    g_autofree char *lead = named ? g_strdup("") : g_strdup_printf("%-22s ", shown);
    complain(u, "%s bad CRC %08lx  (should be %08x)\n", lead, crc, e->crc);
    u->status = 2;
    u->troubled = true;
  }
  return s;
}

/* The name to write: no leading "/", no ".." component (said as unzip says). */
static char *safe_name(Unzip *u, const char *name)
{
  const char *p = name;
  if (*p == '/') {
    while (*p == '/') p++;
    box_out_flush(u->c->out);
    box_fdprintf(u->c->err, "warning:  stripped absolute path spec from %s\n", name);
    u->status = MAX(u->status, 1);
  }
  g_auto(GStrv) parts = g_strsplit(p, "/", -1);
  GString *o = g_string_new(NULL);
  bool skipped = false;
  for (char **q = parts; *q; q++) {
    if (strcmp(*q, "..") == 0) {
      skipped = true;
      continue;
    }
    if (o->len && o->str[o->len - 1] != '/') g_string_append_c(o, '/');
    g_string_append(o, *q);
  }
  /* -j keeps the last component alone: no ".." is left to skip */
  if (skipped && !u->junk) {
    if (!u->quiet)
      box_out_printf(u->c->out, "warning:  skipped \"../\" path component(s) in %s\n", name);
    u->status = MAX(u->status, 1);
  }
  return g_string_free(o, FALSE);
}

static bool is_link(const BxZipEntry *e)
{
  return e->made_by >> 8 == 3 && S_ISLNK(e->attr >> 16);
}

static void extract(Unzip *u, const BxZipEntry *e, const unsigned char *d, size_t n)
{
  g_autofree char *safe = safe_name(u, e->name);
  if (!*safe) return;
  if (u->junk) {
    /* -j: the member's last component alone, and no directories */
    if (safe[strlen(safe) - 1] == '/') return;
    char *last = strrchr(safe, '/');
    if (last) memmove(safe, last + 1, strlen(last));
  }
  g_autofree char *path = u->dir ? bx_path_join(u->dir, safe) : g_strdup(safe);
  size_t len = strlen(path);
  if (path[len - 1] == '/') {
    path[len - 1] = '\0';
    int made = mkdir(path, 0777);
    if (made < 0 && errno == ENOENT && bx_make_parents(path) == 0) made = mkdir(path, 0777);
    if (made == 0 && !u->quiet) box_out_printf(u->c->out, "   creating: %s/\n", path);
    return;
  }
  mode_t mode = e->made_by >> 8 == 3 && (e->attr >> 16) ? (e->attr >> 16) & 0777 : 0644;
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0 && errno == ENOENT && bx_make_parents(path) == 0)
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0 && errno == EEXIST) {
    if (u->never) return;
    if (!u->overwrite) {
      if (!u->refused) {
        box_out_flush(u->c->out);
        box_fdprintf(u->c->err,
                     "replace %s? [y]es, [n]o, [A]ll, [N]one, [r]ename:  NULL\n(EOF or read "
                     "error, treating as \"[N]one\" ...)\n",
                     path);
        u->refused = true;
        u->status = MAX(u->status, 1);
      }
      return;
    }
    if (unlink(path) == 0) fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  }
  if (fd < 0) {
    g_autofree char *text = bx_errtext(u->c, errno);
    box_out_printf(u->c->out, "error:  cannot create %s\n        %s\n", path, text);
    u->status = MAX(u->status, 1);
    return;
  }
  if (!u->quiet)
    box_out_printf(u->c->out, "%s: %-22s  ",
                   is_link(e)       ? "    linking"
                   : e->method == 0 ? " extracting"
                                    : "  inflating",
                   path);
  g_autoptr(GString) data = member_data(u, e, d, n, !u->quiet, path);
  if (!u->quiet && data && !u->troubled) box_out_puts(u->c->out, "\n");
  if (data && is_link(e)) {
    /* a placeholder until every other member is out */
    g_ptr_array_add(u->links, g_strdup(path));
    g_ptr_array_add(u->links, g_strdup(data->str));
  } else if (data && !box_write_all(fd, data->str, data->len)) {
    bx_err(u->c, "unzip", "write error (disk full?)");
    u->status = 50;
  }
  mode_t um = umask(0);
  umask(um);
  if (mode & um) fchmod(fd, mode);
  struct timespec ts[2] = { { e->mtime, 0 }, { e->mtime, 0 } };
  futimens(fd, ts);
  close(fd);
}

/* 11 when operands were given and none matched, as unzip */
static int list(Unzip *u, GArray *v, char **ops, int nops)
{
  BoxOut *o = u->c->out;
  if (u->quiet < 2)
    box_out_puts(o, "  Length      Date    Time    Name\n---------  ---------- -----   ----\n");
  unsigned long long total = 0, files = 0;
  for (guint i = 0; i < v->len; i++) {
    const BxZipEntry *e = &g_array_index(v, BxZipEntry, i);
    bool want = nops == 0;
    for (int k = 0; !want && k < nops; k++) want = box_fnmatch(ops[k], e->name, 0) == 0;
    if (!want) continue;
    struct tm tm;
    char when[32];
    localtime_r(&e->mtime, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
    box_out_printf(o, "%9u  %s   %s\n", e->usize, when, e->name);
    total += e->usize;
    files++;
  }
  if (u->quiet < 2)
    box_out_printf(o,
                   "---------                     -------\n%9llu                     %llu file%s\n",
                   total, files, files == 1 ? "" : "s");
  return nops && !files ? 11 : 0;
}

static int run(Unzip *u, char **ops, int nops)
{
  const char *name = ops[0];
  ops++, nops--;
  int fd = box_open_file(name, O_RDONLY | O_NOCTTY);
  g_autofree char *tried = NULL;
  for (const char *suffix = ".zip"; fd < 0 && suffix;
       suffix = *suffix == '.' && suffix[1] == 'z' ? ".ZIP" : NULL) {
    g_free(tried);
    tried = g_strconcat(name, suffix, NULL);
    fd = box_open_file(tried, O_RDONLY | O_NOCTTY);
  }
  if (fd < 0) {
    complain(u, "unzip:  cannot find or open %s, %s.zip or %s.ZIP.\n", name, name, name);
    return 9;
  }
  const char *shown = tried ? tried : name;
  g_autoptr(GString) s = g_string_new(NULL);
  bool ok = bx_read_all(fd, s);
  close(fd);
  if (!ok) {
    bx_ferr(u->c, "unzip", shown, errno);
    return 9;
  }
  const unsigned char *d = (const unsigned char *)s->str;
  GArray *v = bx_zip_entries(d, s->len);
  if (!u->pipe && !u->quiet) box_out_printf(u->c->out, "Archive:  %s\n", shown);
  if (!v) {
    complain(u,
             "  End-of-central-directory signature not found.  Either this file is not\n"
             "  a zipfile, or it constitutes one disk of a multi-part archive.  In the\n"
             "  latter case the central directory and zipfile comment will be found on\n"
             "  the last disk(s) of this archive.\n"
             "unzip:  cannot find zipfile directory in one of %s or\n"
             "        %s.zip, and cannot find %s.ZIP, period.\n",
             name, name, name);
    return 9;
  }
  if (u->list && !u->test) {
    int st = list(u, v, ops, nops);
    bx_zip_entries_free(v);
    return st;
  }
  /* unzip makes -d's directory before it looks for members */
  if (u->dir && !u->pipe && !u->test) {
    g_autofree char *d = g_strconcat(u->dir, "/", NULL);
    bx_make_parents(d);
  }
  bool *matched = g_new0(bool, nops + 1);
  int tested = 0, bad = 0;
  for (guint i = 0; i < v->len; i++) {
    const BxZipEntry *e = &g_array_index(v, BxZipEntry, i);
    bool want = nops == 0;
    /* a member counts for the first operand that matches it alone */
    for (int k = 0; k < nops && !want; k++)
      if (box_fnmatch(ops[k], e->name, 0) == 0) want = matched[k] = true;
    if (!want) continue;
    if (u->test) {
      if (!u->quiet) box_out_printf(u->c->out, "    testing: %-22s  ", e->name);
      g_autoptr(GString) data = member_data(u, e, d, s->len, !u->quiet, e->name);
      if (!data || u->troubled)
        bad++;
      else if (!u->quiet)
        box_out_puts(u->c->out, " OK\n");
      tested++;
    } else if (u->pipe) {
      g_autoptr(GString) data = member_data(u, e, d, s->len, false, e->name);
      if (data) bx_put(u->c, data->str, data->len);
    } else {
      extract(u, e, d, s->len);
    }
  }
  for (guint i = 0; i + 1 < u->links->len; i += 2) {
    const char *path = u->links->pdata[i], *target = u->links->pdata[i + 1];
    if (unlink(path) < 0 || symlink(target, path) < 0) {
      g_autofree char *text = bx_errtext(u->c, errno);
      box_out_printf(u->c->out, "error:  cannot create symlink %s -> %s\n        %s\n", path,
                     target, text);
      u->status = MAX(u->status, 1);
    }
  }
  bool any = nops == 0, all = true;
  for (int k = 0; k < nops; k++) any = any || matched[k], all = all && matched[k];
  for (int k = 0; k < nops; k++)
    if (!matched[k]) {
      complain(u, "caution: filename not matched:  %s\n", ops[k]);
      bad++;
    }
  g_free(matched);
  if (u->test && u->quiet < 2) {
    if (bad)
      box_out_printf(u->c->out, "At least one error was detected in %s.\n", shown);
    else if (nops)
      box_out_printf(u->c->out, "No errors detected in %s for the %d file%s tested.\n", shown,
                     tested, tested == 1 ? "" : "s");
    else
      box_out_printf(u->c->out, "No errors detected in compressed data of %s.\n", shown);
  }
  bx_zip_entries_free(v);
  /* an operand not matched is an error of its own, when there is no worse */
  return !any || (!all && u->status <= 1) ? 11 : u->status;
}

int box_cmd_unzip(BoxCmd *c)
{
  if (!(box_zlib = box_dl_command(&box_zlib_dl, c, "unzip"))) return 1;
  Unzip u = { .c = c };
  /* unzip takes its options anywhere, -d's directory among them */
  GPtrArray *ops = g_ptr_array_new();
  for (int i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (a[0] != '-' || !a[1]) {
      g_ptr_array_add(ops, (char *)a);
      continue;
    }
    bool *const flags[] = { &u.list, &u.overwrite, &u.never, &u.pipe, &u.test, &u.junk };
    for (const char *p = a + 1; *p; p++) {
      if (bx_set_flag(*p, "lonptj", flags)) continue;
      if (*p == 'q') {
        u.quiet++;
        continue;
      }
      if (*p != 'd') {
        bx_err(c, "unzip", "invalid option -- '%c'", *p);
        g_ptr_array_free(ops, TRUE);
        return 10;
      }
      /* -dDIR or -d DIR: the rest of the word, else the next */
      if (p[1])
        u.dir = p + 1;
      else if (i + 1 < c->argc)
        u.dir = c->argv[++i];
      break;
    }
  }
  if (ops->len == 0) {
    bx_err(c, "unzip", "no zipfile given");
    g_ptr_array_free(ops, TRUE);
    return 10;
  }
  u.links = g_ptr_array_new_with_free_func(g_free);
  int st = run(&u, (char **)ops->pdata, (int)ops->len);
  g_ptr_array_free(u.links, TRUE);
  g_ptr_array_free(ops, TRUE);
  return st;
}
