/* ls.c — GNU ls (non-terminal output): -l -a -A -1 -R -t -S -r -h -d -F -p
 * -i -n -g -o -U -C(one per line) --color=never, GNU's long format and C-locale
 * name order.  Entries are stat()ed only when an option needs it (one
 * read_metadata decision each); a directory is read with getdents. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  bool all, almost, lng, recursive, by_time, by_size, reverse, human, dirs, classify, slash, inode,
    numeric, no_owner, no_group, unsorted, si;
  bool need_stat;
  int status;
  time_t now;
  GHashTable *users, *groups;
} LsOpt;

typedef struct {
  char *name; /* as printed */
  char *path; /* for stat/readlink */
  bool have_st;
  struct stat st;
  unsigned char dtype;
  unsigned long long ino;
  char *link; /* symlink target (-l) */
  bool link_ok;
  mode_t link_mode;
} LsEnt;

static void ent_free(LsEnt *e)
{
  g_free(e->name);
  g_free(e->path);
  g_free(e->link);
}

static LsOpt *cmp_opt;
static int ent_cmp(const void *a, const void *b)
{
  const LsEnt *x = a, *y = b;
  int r = 0;
  if (cmp_opt->by_time) {
    if (x->st.st_mtim.tv_sec != y->st.st_mtim.tv_sec)
      r = x->st.st_mtim.tv_sec < y->st.st_mtim.tv_sec ? 1 : -1;
    else if (x->st.st_mtim.tv_nsec != y->st.st_mtim.tv_nsec)
      r = x->st.st_mtim.tv_nsec < y->st.st_mtim.tv_nsec ? 1 : -1;
  } else if (cmp_opt->by_size) {
    if (x->st.st_size != y->st.st_size) r = x->st.st_size < y->st.st_size ? 1 : -1;
  }
  if (!r) r = strcmp(x->name, y->name);
  return cmp_opt->reverse ? -r : r;
}

static void sort_ents(LsOpt *o, GArray *v)
{
  if (o->unsorted) return;
  cmp_opt = o;
  g_array_sort(v, ent_cmp);
}

/* A user's or group's name as ls -l shows it (its number with -n, or
 * when it has none), looked up once per id into cache. */
static const char *owner_name(LsOpt *o, GHashTable *cache, const char *(*lookup)(unsigned),
                              unsigned id, char *buf)
{
  if (o->numeric) {
    sprintf(buf, "%u", id);
    return buf;
  }
  char *n = g_hash_table_lookup(cache, GUINT_TO_POINTER(id + 1));
  if (!n) {
    const char *name = lookup(id);
    n = name ? g_strdup(name) : g_strdup_printf("%u", id);
    g_hash_table_insert(cache, GUINT_TO_POINTER(id + 1), n);
  }
  return n;
}

static const char *user_name(LsOpt *o, uid_t uid, char *buf)
{
  return owner_name(o, o->users, bx_user_name, uid, buf);
}

static const char *group_name(LsOpt *o, gid_t gid, char *buf)
{
  return owner_name(o, o->groups, bx_group_name, gid, buf);
}

static char indicator(const LsOpt *o, mode_t m)
{
  if (S_ISDIR(m)) return '/';
  if (!o->classify) return 0;
  if (S_ISLNK(m)) return '@';
  if (S_ISFIFO(m)) return '|';
  if (S_ISSOCK(m)) return '=';
  if (S_ISREG(m) && (m & 0111)) return '*';
  return 0;
}

static mode_t dtype_mode(unsigned char t)
{
  switch (t) {
  case DT_DIR: return S_IFDIR;
  case DT_LNK: return S_IFLNK;
  case DT_FIFO: return S_IFIFO;
  case DT_SOCK: return S_IFSOCK;
  case DT_CHR: return S_IFCHR;
  case DT_BLK: return S_IFBLK;
  default: return S_IFREG;
  }
}

static void stat_ent(BoxCmd *c, LsOpt *o, LsEnt *e)
{
  if (e->have_st) return;
  if (lstat(e->path, &e->st) != 0) {
    bx_err_q(c, "ls", "cannot access %s", e->path, errno);
    o->status = MAX(o->status, 1);
    memset(&e->st, 0, sizeof e->st);
    e->st.st_mode = dtype_mode(e->dtype);
    return;
  }
  e->have_st = true;
  if (o->lng && S_ISLNK(e->st.st_mode)) {
    char buf[4096];
    ssize_t n = readlink(e->path, buf, sizeof buf - 1);
    if (n >= 0) {
      buf[n] = 0;
      e->link = g_strdup(buf);
    }
    struct stat ts;
    if (o->classify && stat(e->path, &ts) == 0) {
      e->link_ok = true;
      e->link_mode = ts.st_mode;
    }
  }
}

static void format_time(const LsOpt *o, time_t t, char *buf, size_t cap)
{
  struct tm tm;
  localtime_r(&t, &tm);
  bool recent = t <= o->now + 60 && t > o->now - 31556952 / 2;
  /* GNU: six months (half a Gregorian year), future times count as old */
  if (t > o->now) recent = false;
  strftime(buf, cap, recent ? "%b %e %H:%M" : "%b %e  %Y", &tm);
}

static void print_ents(BoxCmd *c, LsOpt *o, GArray *v, bool is_dir_listing)
{
  if (!o->lng) {
    int iw = 0;
    if (o->inode)
      for (guint i = 0; i < v->len; i++) {
        LsEnt *e = &g_array_index(v, LsEnt, i);
        char b[32];
        iw = MAX(iw, snprintf(b, sizeof b, "%llu",
                              e->have_st ? (unsigned long long)e->st.st_ino : e->ino));
      }
    for (guint i = 0; i < v->len; i++) {
      LsEnt *e = &g_array_index(v, LsEnt, i);
      if (o->inode)
        box_out_printf(c->out, "%*llu ", iw,
                       e->have_st ? (unsigned long long)e->st.st_ino : e->ino);
      box_out_puts(c->out, e->name);
      if (o->classify || o->slash) {
        char ch = indicator(o, e->have_st ? e->st.st_mode : dtype_mode(e->dtype));
        if (ch) box_out_putc(c->out, ch);
      }
      box_out_putc(c->out, '\n');
    }
    return;
  }
  /* long format: widths first */
  int wl = 0, wu = 0, wg = 0, ws = 0, wi = 0;
  unsigned long long blocks = 0;
  char b[64], ub[32], gb[32];
  for (guint i = 0; i < v->len; i++) {
    LsEnt *e = &g_array_index(v, LsEnt, i);
    if (!e->have_st) { /* unknown fields print as "?" (GNU) */
      wl = MAX(wl, 1);
      wu = MAX(wu, 1);
      wg = MAX(wg, 1);
      ws = MAX(ws, 1);
      wi = MAX(wi, 1);
      continue;
    }
    blocks += (unsigned long long)e->st.st_blocks;
    wl = MAX(wl, snprintf(b, sizeof b, "%lu", (unsigned long)e->st.st_nlink));
    wu = MAX(wu, (int)strlen(user_name(o, e->st.st_uid, ub)));
    wg = MAX(wg, (int)strlen(group_name(o, e->st.st_gid, gb)));
    if (S_ISCHR(e->st.st_mode) || S_ISBLK(e->st.st_mode))
      ws = MAX(ws, snprintf(b, sizeof b, "%u, %u", major(e->st.st_rdev), minor(e->st.st_rdev)));
    else if (o->human) {
      bx_human_size((unsigned long long)e->st.st_size, o->si, b, sizeof b);
      ws = MAX(ws, (int)strlen(b));
    } else
      ws = MAX(ws, snprintf(b, sizeof b, "%lld", (long long)e->st.st_size));
    wi = MAX(wi, snprintf(b, sizeof b, "%llu", (unsigned long long)e->st.st_ino));
  }
  if (is_dir_listing) {
    if (o->human) {
      bx_human_size(blocks * 512, o->si, b, sizeof b);
      box_out_printf(c->out, "total %s\n", b);
    } else {
      box_out_printf(c->out, "total %llu\n", (blocks + 1) / 2);
    }
  }
  for (guint i = 0; i < v->len; i++) {
    LsEnt *e = &g_array_index(v, LsEnt, i);
    char mode[11], tb[64];
    if (!e->have_st) { /* its stat failed (reported): what GNU ls prints */
      bx_mode_string(e->st.st_mode, mode);
      memset(mode + 1, '?', 9);
      format_time(o, 0, tb, sizeof tb);
      if (o->inode) box_out_printf(c->out, "%*s ", wi, "?");
      box_out_printf(c->out, "%s %*s ", mode, wl, "?");
      if (!o->no_owner) box_out_printf(c->out, "%-*s ", wu, "?");
      if (!o->no_group) box_out_printf(c->out, "%-*s ", wg, "?");
      box_out_printf(c->out, "%*s %*s ", ws, "?", (int)strlen(tb), "?");
      box_out_puts(c->out, e->name);
      box_out_putc(c->out, '\n');
      continue;
    }
    bx_mode_string(e->st.st_mode, mode);
    if (o->inode) box_out_printf(c->out, "%*llu ", wi, (unsigned long long)e->st.st_ino);
    box_out_printf(c->out, "%s %*lu ", mode, wl, (unsigned long)e->st.st_nlink);
    if (!o->no_owner) box_out_printf(c->out, "%-*s ", wu, user_name(o, e->st.st_uid, ub));
    if (!o->no_group) box_out_printf(c->out, "%-*s ", wg, group_name(o, e->st.st_gid, gb));
    if (S_ISCHR(e->st.st_mode) || S_ISBLK(e->st.st_mode)) {
      snprintf(b, sizeof b, "%u, %u", major(e->st.st_rdev), minor(e->st.st_rdev));
    } else if (o->human)
      bx_human_size((unsigned long long)e->st.st_size, o->si, b, sizeof b);
    else
      snprintf(b, sizeof b, "%lld", (long long)e->st.st_size);
    format_time(o, e->st.st_mtim.tv_sec, tb, sizeof tb);
    box_out_printf(c->out, "%*s %s ", ws, b, tb);
    box_out_puts(c->out, e->name);
    if (e->link) {
      box_out_printf(c->out, " -> %s", e->link);
      if (o->classify && e->link_ok) {
        char ch = indicator(o, e->link_mode);
        if (ch) box_out_putc(c->out, ch);
      }
    } else if (o->classify || o->slash) {
      char ch = indicator(o, e->st.st_mode);
      if (ch) box_out_putc(c->out, ch);
    }
    box_out_putc(c->out, '\n');
  }
}

static void list_dir(BoxCmd *c, LsOpt *o, const char *path, bool header, bool *first, bool top)
{
  int err;
  GArray *d = bx_list_dir(path, &err);
  if (!d) {
    bx_err_q(c, "ls", "cannot open directory %s", path, err);
    o->status = top ? 2 : MAX(o->status, 1);
    return;
  }
  if (header) {
    if (!*first) box_out_putc(c->out, '\n');
    box_out_printf(c->out, "%s:\n", path);
  }
  *first = false;
  GArray *v = g_array_new(FALSE, TRUE, sizeof(LsEnt));
  if (o->all) {
    const char *dots[] = { ".", ".." };
    for (int i = 0; i < 2; i++) {
      LsEnt e = {
        g_strdup(dots[i]), bx_path_join(path, dots[i]), false, { 0 }, DT_DIR, 0, NULL, false, 0
      };
      g_array_append_val(v, e);
    }
  }
  for (guint i = 0; i < d->len; i++) {
    BxDirEnt *de = &g_array_index(d, BxDirEnt, i);
    if (de->name[0] == '.' && !o->all && !o->almost) continue;
    LsEnt e = { g_strdup(de->name),
                bx_path_join(path, de->name),
                false,
                { 0 },
                de->type,
                de->ino,
                NULL,
                false,
                0 };
    g_array_append_val(v, e);
  }
  bx_dir_free(d);
  for (guint i = 0; i < v->len; i++) {
    LsEnt *e = &g_array_index(v, LsEnt, i);
    if (o->need_stat || (o->classify && e->dtype == DT_UNKNOWN) ||
        (o->recursive && e->dtype == DT_UNKNOWN))
      stat_ent(c, o, e);
    if (!e->have_st) e->st.st_mode = dtype_mode(e->dtype);
  }
  sort_ents(o, v);
  print_ents(c, o, v, true);
  if (o->recursive) {
    for (guint i = 0; i < v->len; i++) {
      LsEnt *e = &g_array_index(v, LsEnt, i);
      if (!S_ISDIR(e->st.st_mode) || !strcmp(e->name, ".") || !strcmp(e->name, "..")) continue;
      list_dir(c, o, e->path, true, first, false);
    }
  }
  for (guint i = 0; i < v->len; i++) ent_free(&g_array_index(v, LsEnt, i));
  g_array_free(v, TRUE);
}

enum { OPT_SI = 1, OPT_INDICATOR, OPT_SORT };

static const char longopts[] =
  "all=a almost-all=A recursive=R reverse=r human-readable=h si=\1 directory=d classify=F:: "
  "inode=i "
  "numeric-uid-gid=n color=K:: colour=K:: indicator-style=\2: sort=\3: no-group=G";

int box_cmd_ls(BoxCmd *c)
{
  LsOpt o = { 0 };
  o.now = time(NULL);
  BX_EACH_OPTION (ch, c, "ls", "aAlRtSrhdFpin1CgoUGx", longopts) switch (ch) {
    case 'a':
      o.all = true;
      o.almost = false;
      break;
    case 'A':
      o.almost = true;
      o.all = false;
      break;
    case 'l': o.lng = true; break;
    case 'R': o.recursive = true; break;
    case 't':
      o.by_time = true;
      o.by_size = false;
      break;
    case 'S':
      o.by_size = true;
      o.by_time = false;
      break;
    case 'r': o.reverse = true; break;
    case 'h': o.human = true; break;
    case OPT_SI: o.human = o.si = true; break;
    case 'd': o.dirs = true; break;
    case 'F': o.classify = true; break;
    case 'p': o.slash = true; break;
    case 'i': o.inode = true; break;
    case 'n':
      o.numeric = true;
      o.lng = true;
      break;
    case 'g':
      o.no_owner = true;
      o.lng = true;
      break;
    case 'o':
      o.no_group = true;
      o.lng = true;
      break;
    case 'G': o.no_group = true; break;
    case 'U': o.unsorted = true; break;
    case '1':
    case 'C':
    case 'x': o.lng = o.lng && ch != '1' ? o.lng : (ch == '1' ? false : o.lng); break;
    case 'K':
      if (optarg && strcmp(optarg, "never") && strcmp(optarg, "no") && strcmp(optarg, "none") &&
          strcmp(optarg, "auto") && strcmp(optarg, "tty") && strcmp(optarg, "if-tty") &&
          strcmp(optarg, "always") && strcmp(optarg, "yes") && strcmp(optarg, "force")) {
        bx_usage_q(c, "ls",
                   "invalid argument %s for '--color'\nValid arguments are:\n  - 'always', 'yes', "
                   "'force'\n  - 'never', 'no', 'none'\n  - 'auto', 'tty', 'if-tty'",
                   optarg);
        return 2;
      }
      break;
    case OPT_INDICATOR:
      if (!strcmp(optarg, "classify"))
        o.classify = true;
      else if (!strcmp(optarg, "slash"))
        o.slash = true;
      break;
    case OPT_SORT:
      if (!strcmp(optarg, "time"))
        o.by_time = true;
      else if (!strcmp(optarg, "size"))
        o.by_size = true;
      else if (!strcmp(optarg, "none"))
        o.unsorted = true;
      break;
    default: return 2;
    }
  o.need_stat = o.lng || o.by_time || o.by_size || o.classify || (o.inode && false);
  o.users = g_hash_table_new_full(NULL, NULL, NULL, g_free);
  o.groups = g_hash_table_new_full(NULL, NULL, NULL, g_free);
  int n = c->argc - optind;
  char *dflt[] = { ".", NULL };
  char **ops = n ? c->argv + optind : dflt;
  if (!n) n = 1;
  GArray *files = g_array_new(FALSE, TRUE, sizeof(LsEnt));
  GArray *dirs = g_array_new(FALSE, TRUE, sizeof(LsEnt));
  bool follow = !(o.lng || o.dirs || o.classify);
  for (int i = 0; i < n; i++) {
    LsEnt e = { g_strdup(ops[i]), g_strdup(ops[i]), false, { 0 }, DT_UNKNOWN, 0, NULL, false, 0 };
    int r = follow ? stat(ops[i], &e.st) : lstat(ops[i], &e.st);
    if (r != 0 && follow && errno == ENOENT) r = lstat(ops[i], &e.st); /* dangling link */
    if (r != 0) {
      bx_err_q(c, "ls", "cannot access %s", ops[i], errno);
      o.status = 2;
      ent_free(&e);
      continue;
    }
    e.have_st = true;
    if (!o.dirs && !follow && S_ISLNK(e.st.st_mode) && !o.lng) {
      /* -F: a link to a directory given on the command line is followed */
      struct stat ts;
      if (stat(ops[i], &ts) == 0 && S_ISDIR(ts.st_mode)) e.st = ts;
    }
    if (!o.dirs && S_ISDIR(e.st.st_mode))
      g_array_append_val(dirs, e);
    else {
      if (o.lng && S_ISLNK(e.st.st_mode)) {
        char buf[4096];
        ssize_t k = readlink(ops[i], buf, sizeof buf - 1);
        if (k >= 0) {
          buf[k] = 0;
          e.link = g_strdup(buf);
        }
        struct stat ts;
        if (o.classify && stat(ops[i], &ts) == 0) {
          e.link_ok = true;
          e.link_mode = ts.st_mode;
        }
      }
      g_array_append_val(files, e);
    }
  }
  sort_ents(&o, files);
  sort_ents(&o, dirs);
  bool first = true;
  if (files->len) {
    print_ents(c, &o, files, false);
    first = false;
  }
  bool header = o.recursive || n > 1;
  for (guint i = 0; i < dirs->len; i++) {
    LsEnt *e = &g_array_index(dirs, LsEnt, i);
    list_dir(c, &o, e->path, header, &first, true);
  }
  for (guint i = 0; i < files->len; i++) ent_free(&g_array_index(files, LsEnt, i));
  for (guint i = 0; i < dirs->len; i++) ent_free(&g_array_index(dirs, LsEnt, i));
  g_array_free(files, TRUE);
  g_array_free(dirs, TRUE);
  g_hash_table_destroy(o.users);
  g_hash_table_destroy(o.groups);
  return o.status;
}
