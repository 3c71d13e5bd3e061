/* tree.c — tree(1) 2.x without colours: each operand and what lies under
 * it drawn with the usual branches, entries in name order (C locale), a
 * link as "name -> target" (counted as a directory when it leads to one,
 * never followed); -a shows dot files, -d directories only, -L N stops N
 * levels down, -I PATTERN[|PATTERN…] leaves matching names out, -P
 * PATTERN[|PATTERN…] keeps only the files that match, -f names each entry
 * by its whole path, -i draws no branches, --dirsfirst puts directories
 * before files.  The
 * summary counts the operands' directories too.  Listings go through
 * bx_list_dir (getdents, no stat); only a link's target is stat'ed. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  bool all, dirs_only, full, dirs_first;
  const char *const *art;   /* branch, last branch, continuation, after the last */
  long depth;               /* 0: no limit */
  GPtrArray *ignore, *only; /* -I's patterns, -P's */
  unsigned long ndirs, nfiles;
} TreeOpt;

/* tree draws with box characters in a UTF-8 locale, with ASCII otherwise
 * (its continuation carries two no-break spaces) */
static const char *const utf8_art[] = { "├── ", "└── ", "│\u00a0\u00a0 ", "    " };
static const char *const ascii_art[] = { "|-- ", "`-- ", "|   ", "    " };
static const char *const no_art[] = { "", "", "", "" };

static bool utf8_locale(BoxCmd *c)
{
  const char *names[] = { "LC_ALL", "LC_CTYPE", "LANG" };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    const char *v = box_var_get(c->sh, names[i]);
    if (v && *v) return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
  }
  return false;
}

static bool matches(const GPtrArray *pats, const char *name)
{
  for (guint i = 0; i < pats->len; i++)
    if (box_fnmatch(g_ptr_array_index(pats, i), name, 0) == 0) return true;
  return false;
}

static void add_patterns(GPtrArray *pats, const char *arg)
{
  char **alts = g_strsplit(arg, "|", -1);
  for (char **p = alts; *p; p++) g_ptr_array_add(pats, *p);
  g_free(alts);
}

static int by_name(gconstpointer a, gconstpointer b)
{
  return strcmp(((const BxDirEnt *)a)->name, ((const BxDirEnt *)b)->name);
}

static void walk(BoxCmd *c, TreeOpt *o, const char *path, GString *indent, long level);

/* Whether e (in path) is a directory, or a link to one. */
static bool is_dir(const char *path, const BxDirEnt *e)
{
  if (e->type != DT_LNK && e->type != DT_UNKNOWN) return e->type == DT_DIR;
  g_autofree char *full = bx_path_join(path, e->name);
  struct stat st;
  return box_stat_file(full, &st) == 0 && S_ISDIR(st.st_mode);
}

static void entry(BoxCmd *c, TreeOpt *o, const char *path, const BxDirEnt *e, bool dir, bool last,
                  GString *indent, long level)
{
  g_autofree char *full = bx_path_join(path, e->name);
  box_out_printf(c->out, "%s%s%s", indent->str, o->art[last ? 1 : 0], o->full ? full : e->name);
  bool link = e->type == DT_LNK;
  if (link) {
    char buf[4096];
    ssize_t n = readlink(full, buf, sizeof buf - 1);
    box_out_printf(c->out, " -> %.*s", n > 0 ? (int)n : 0, buf);
  }
  if (dir)
    o->ndirs++;
  else
    o->nfiles++;
  if (!dir || link || (o->depth && level >= o->depth)) {
    box_out_putc(c->out, '\n');
    return;
  }
  size_t was = indent->len;
  g_string_append(indent, o->art[last ? 3 : 2]);
  walk(c, o, full, indent, level + 1);
  g_string_truncate(indent, was);
}

/* The listing of path, which has been named on the line before (still
 * open); level: how deep it is. */
static void walk(BoxCmd *c, TreeOpt *o, const char *path, GString *indent, long level)
{
  int err = 0;
  GArray *v = bx_list_dir(path, &err);
  if (!v) {
    box_out_puts(c->out, "  [error opening dir]\n");
    return;
  }
  box_out_putc(c->out, '\n');
  GArray *keep = g_array_new(FALSE, FALSE, sizeof(BxDirEnt));
  GArray *dirs = g_array_new(FALSE, FALSE, sizeof(bool));
  for (guint i = 0; i < v->len; i++) {
    BxDirEnt *e = &g_array_index(v, BxDirEnt, i);
    if ((!o->all && e->name[0] == '.') || matches(o->ignore, e->name)) continue;
    g_array_append_val(keep, *e);
  }
  g_array_sort(keep, by_name);
  /* -P drops the files and links that do not match; --dirsfirst moves the directories
   * up, each part still in name order */
  guint n = keep->len;
  bool *is = g_new(bool, n + 1);
  for (guint i = 0; i < n; i++) is[i] = is_dir(path, &g_array_index(keep, BxDirEnt, i));
  for (int pass = o->dirs_first ? 0 : 1; pass < 2; pass++)
    for (guint i = 0; i < n; i++) {
      BxDirEnt e = g_array_index(keep, BxDirEnt, i);
      if ((pass == 0 && !is[i]) || (pass == 1 && o->dirs_first && is[i])) continue;
      /* a link is matched as a file even when it leads to a directory */
      if ((!is[i] || e.type == DT_LNK) && o->only->len && !matches(o->only, e.name)) continue;
      g_array_append_val(keep, e);
      g_array_append_val(dirs, is[i]);
    }
  g_array_remove_range(keep, 0, n);
  g_free(is);
  /* with -d the last branch is the last directory's */
  guint last = keep->len;
  for (guint i = 0; i < keep->len; i++)
    if (!o->dirs_only || g_array_index(dirs, bool, i)) last = i;
  for (guint i = 0; i < keep->len; i++) {
    bool dir = g_array_index(dirs, bool, i);
    if (o->dirs_only && !dir) continue;
    entry(c, o, path, &g_array_index(keep, BxDirEnt, i), dir, i == last, indent, level);
  }
  g_array_free(dirs, TRUE);
  g_array_free(keep, TRUE);
  bx_dir_free(v);
}

static const char longopts[] = "noreport=\1 dirsfirst=\2";

int box_cmd_tree(BoxCmd *c)
{
  TreeOpt o = { .ignore = g_ptr_array_new_with_free_func(g_free),
                .only = g_ptr_array_new_with_free_func(g_free) };
  bool report = true;
  o.art = utf8_locale(c) ? utf8_art : ascii_art;
  int status = 0;
  BX_EACH_OPTION (ch, c, "tree", "adfiL:I:P:", longopts) switch (ch) {
    case 'a': o.all = true; break;
    case 'd': o.dirs_only = true; break;
    case 'f': o.full = true; break;
    case 'i': o.art = no_art; break;
    case 1: report = false; break;
    case 2: o.dirs_first = true; break;
    case 'P': add_patterns(o.only, optarg); break;
    case 'L': {
      char *end;
      o.depth = strtol(optarg, &end, 10);
      if (*end || o.depth < 1) {
        bx_err(c, "tree", "Invalid level, must be greater than 0.");
        status = 1;
        goto out;
      }
      break;
    }
    case 'I': add_patterns(o.ignore, optarg); break;
    default: status = 1; goto out;
    }
  static char *dot[] = { (char *)".", NULL };
  int n = c->argc - optind;
  char **names = n ? c->argv + optind : dot;
  if (!n) n = 1;
  for (int i = 0; i < n; i++) {
    g_autoptr(GString) indent = g_string_new(NULL);
    int err = 0;
    GArray *probe = bx_list_dir(names[i], &err);
    box_out_puts(c->out, names[i]);
    if (!probe) {
      /* a file named is counted as one; a name that is nothing fails */
      box_out_puts(c->out, "  [error opening dir]\n");
      if (err == ENOTDIR)
        o.nfiles++;
      else
        status = 2;
      continue;
    }
    bx_dir_free(probe);
    o.ndirs++;
    walk(c, &o, names[i], indent, 1);
  }
  if (report) {
    box_out_printf(c->out, "\n%lu director%s", o.ndirs, o.ndirs == 1 ? "y" : "ies");
    if (!o.dirs_only) box_out_printf(c->out, ", %lu file%s", o.nfiles, o.nfiles == 1 ? "" : "s");
    box_out_putc(c->out, '\n');
  }
out:
  g_ptr_array_free(o.ignore, TRUE);
  g_ptr_array_free(o.only, TRUE);
  return status;
}
