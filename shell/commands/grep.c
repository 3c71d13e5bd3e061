/* grep.c — GNU-grep-compatible subset over glibc regex (BRE, -E ERE, -F).
 * Files are read with open(2)/read(2); -r walks with opendir/readdir and
 * d_type (never stat: every stat is a policy decision on the mount). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell-private.h"

typedef struct {
  bool icase, invert, number, count, list, list_missing, recursive, deref;
  bool quiet, no_messages, word, line, only;
  int with_name;              /* -1 default, 0 -h, 1 -H */
  long max_count;             /* -1 none */
  int syntax;                 /* 'G', 'E', 'F' */
  GPtrArray *patterns;
  GPtrArray *include, *exclude, *exclude_dir;   /* globs on base names */
  regex_t *re;
  size_t nre;
  bool matched_any, error;
  BoxCmd *c;
} Grep;

static void gerr(Grep *g, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void gerr(Grep *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  box_out_flush(g->c->out);
  box_fdprintf(g->c->err, "grep: %s\n", s);
  g_free(s);
}

static void file_error(Grep *g, const char *name, int err) {
  g->error = true;
  if (g->no_messages) return;
  box_file_error(g->c, "grep", name, err);
}

static bool word_char(char ch) { return ch == '_' || g_ascii_isalnum(ch); }

/* Finds the first match of any pattern in line[0..len) at or after from.
 * Returns true with [*so, *eo). */
static bool find_match(Grep *g, const char *line, size_t len, size_t from, size_t *so, size_t *eo) {
  bool found = false;
  size_t bso = 0, beo = 0;
  for (size_t k = 0; k < g->nre; k++) {
    size_t start = from;
    while (start <= len) {
      regmatch_t m[1];
      m[0].rm_so = (regoff_t)start;
      m[0].rm_eo = (regoff_t)len;
      int flags = REG_STARTEND | (start > 0 ? REG_NOTBOL : 0);
      if (regexec(&g->re[k], line, 1, m, flags) != 0) break;
      size_t s = (size_t)m[0].rm_so, e = (size_t)m[0].rm_eo;
      bool ok = true;
      if (g->line) ok = s == 0 && e == len;
      else if (g->word)
        ok = (s == 0 || !word_char(line[s - 1])) && (e == len || !word_char(line[e])) && e > s;
      if (ok) {
        if (!found || s < bso || (s == bso && e > beo)) { bso = s; beo = e; }
        found = true;
        break;
      }
      if (g->line) break;
      start = s + 1;
    }
  }
  if (found) { *so = bso; *eo = beo; }
  return found;
}

static void prefix(Grep *g, const char *name, bool show_name, long lineno, char sep) {
  if (show_name) { box_out_puts(g->c->out, name); box_out_putc(g->c->out, sep); }
  if (g->number) box_out_printf(g->c->out, "%ld%c", lineno, sep);
}

/* Reads all of fd.  Returns false with errno set. */
static bool slurp(int fd, GString *s) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    g_string_append_len(s, buf, n);
  }
}

/* Returns true when the caller should stop everything (-q matched). */
static bool grep_fd(Grep *g, int fd, const char *name, bool show_name) {
  GString *data = g_string_new(NULL);
  if (!slurp(fd, data)) {
    file_error(g, name, errno);
    g_string_free(data, TRUE);
    return false;
  }
  bool binary = memchr(data->str, '\0', data->len) != NULL;
  long count = 0, lineno = 0;
  size_t pos = 0;
  BoxOut *o = g->c->out;
  while (pos < data->len) {
    const char *line = data->str + pos;
    const char *nl = memchr(line, '\n', data->len - pos);
    size_t len = nl ? (size_t)(nl - line) : data->len - pos;
    pos += len + (nl ? 1 : 0);
    lineno++;
    size_t so, eo;
    bool m = find_match(g, line, len, 0, &so, &eo);
    if (m == g->invert) continue;
    count++;
    g->matched_any = true;
    if (g->quiet) { g_string_free(data, TRUE); return true; }
    if (g->list || g->list_missing) break;
    if (!g->count) {
      if (binary) {
        box_out_flush(o);
        box_fdprintf(g->c->err, "grep: %s: binary file matches\n", name);
        break;
      }
      if (g->only) {
        if (!g->invert) {
          size_t from = 0;
          while (from <= len && find_match(g, line, len, from, &so, &eo)) {
            if (eo > so) {
              prefix(g, name, show_name, lineno, ':');
              box_out_write(o, line + so, eo - so);
              box_out_putc(o, '\n');
              from = eo;
            } else {
              from = so + 1;
            }
          }
        }
      } else {
        prefix(g, name, show_name, lineno, ':');
        box_out_write(o, line, len);
        box_out_putc(o, '\n');
      }
    }
    if (g->max_count >= 0 && count >= g->max_count) break;
  }
  if (g->count) {
    if (show_name) box_out_printf(o, "%s:", name);
    box_out_printf(o, "%ld\n", count);
  }
  if (g->list && count > 0) box_out_printf(o, "%s\n", name);
  if (g->list_missing && count == 0) box_out_printf(o, "%s\n", name);
  g_string_free(data, TRUE);
  return false;
}

static bool grep_path(Grep *g, const char *path, const char *shown, bool show_name, bool show_dir, bool top);

static bool glob_any(GPtrArray *globs, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (guint i = 0; i < globs->len; i++)
    if (fnmatch(globs->pdata[i], base, 0) == 0) return true;
  return false;
}

/* --include / --exclude on a file name. */
static bool skip_file(Grep *g, const char *path) {
  if (g->include->len && !glob_any(g->include, path)) return true;
  return g->exclude->len && glob_any(g->exclude, path);
}

static bool grep_dir(Grep *g, DIR *d, const char *path, const char *shown, bool show_name) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GArray *types = g_array_new(FALSE, FALSE, sizeof(unsigned char));
  struct dirent *e;
  errno = 0;
  while ((e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    g_ptr_array_add(names, g_strdup(e->d_name));
    unsigned char t = e->d_type;
    g_array_append_val(types, t);
  }
  closedir(d);
  bool stop = false;
  for (guint i = 0; i < names->len && !stop; i++) {
    const char *n = names->pdata[i];
    unsigned char t = g_array_index(types, unsigned char, i);
    char *child = strcmp(path, "/") == 0 ? g_strconcat("/", n, NULL) : g_strconcat(path, "/", n, NULL);
    char *cshown = shown[0] == '\0' ? g_strdup(n)
                 : (g_str_has_suffix(shown, "/") ? g_strconcat(shown, n, NULL) : g_strconcat(shown, "/", n, NULL));
    if (t == DT_DIR && glob_any(g->exclude_dir, n)) { g_free(child); g_free(cshown); continue; }
    if (t == DT_DIR || t == DT_REG || t == DT_UNKNOWN || (t == DT_LNK && g->deref))
      stop = grep_path(g, child, cshown, show_name, show_name, false);
    g_free(child);
    g_free(cshown);
  }
  g_ptr_array_free(names, TRUE);
  g_array_free(types, TRUE);
  return stop;
}

static bool grep_path(Grep *g, const char *path, const char *shown, bool show_name, bool show_dir, bool top) {
  if (g->recursive) {
    DIR *d = opendir(path);
    if (d) return grep_dir(g, d, path, shown, show_dir);
    if (errno != ENOTDIR) {
      file_error(g, top ? path : shown, errno);
      return false;
    }
  }
  if (skip_file(g, path)) return false;
  int fd = box_open_file(path, O_RDONLY | O_NOCTTY);
  if (fd < 0) {
    file_error(g, shown[0] ? shown : path, errno);
    return false;
  }
  bool stop = grep_fd(g, fd, shown[0] ? shown : path, show_name);
  close(fd);
  return stop;
}

static bool need_arg(Grep *g, int *i, const char *opt, const char **val) {
  BoxCmd *c = g->c;
  if (*i + 1 >= c->argc) {
    gerr(g, "option requires an argument -- '%s'\nUsage: grep [OPTION]... PATTERNS [FILE]...\n"
            "Try 'grep --help' for more information.", opt);
    return false;
  }
  *val = c->argv[++*i];
  return true;
}

static bool parse_long(Grep *g, const char *a, int *i) {
  const char *eq = strchr(a, '=');
  size_t n = eq ? (size_t)(eq - a) : strlen(a);
  struct { const char *name; bool *flag; } flags[] = {
    { "--ignore-case", &g->icase }, { "--invert-match", &g->invert }, { "--line-number", &g->number },
    { "--count", &g->count }, { "--files-with-matches", &g->list }, { "--files-without-match", &g->list_missing },
    { "--recursive", &g->recursive }, { "--quiet", &g->quiet }, { "--silent", &g->quiet },
    { "--no-messages", &g->no_messages }, { "--word-regexp", &g->word }, { "--line-regexp", &g->line },
    { "--only-matching", &g->only },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(flags); k++) {
    if (strlen(flags[k].name) == n && strncmp(a, flags[k].name, n) == 0 && !eq) {
      *flags[k].flag = true;
      return true;
    }
  }
  if (strcmp(a, "--dereference-recursive") == 0) { g->recursive = g->deref = true; return true; }
  if (strcmp(a, "--with-filename") == 0) { g->with_name = 1; return true; }
  if (strcmp(a, "--no-filename") == 0) { g->with_name = 0; return true; }
  if (strcmp(a, "--extended-regexp") == 0) { g->syntax = 'E'; return true; }
  if (strcmp(a, "--fixed-strings") == 0) { g->syntax = 'F'; return true; }
  if (strcmp(a, "--basic-regexp") == 0) { g->syntax = 'G'; return true; }
  if (strncmp(a, "--regexp", n) == 0 && n == 8) {
    const char *v = eq ? eq + 1 : NULL;
    if (!v && !need_arg(g, i, "regexp", &v)) return false;
    g_ptr_array_add(g->patterns, g_strdup(v));
    return true;
  }
  struct { const char *name; GPtrArray *list; } globs[] = {
    { "--include", g->include }, { "--exclude", g->exclude }, { "--exclude-dir", g->exclude_dir },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(globs); k++) {
    if (strlen(globs[k].name) == n && strncmp(a, globs[k].name, n) == 0) {
      const char *v = eq ? eq + 1 : NULL;
      if (!v && !need_arg(g, i, globs[k].name + 2, &v)) return false;
      g_ptr_array_add(globs[k].list, g_strdup(v));
      return true;
    }
  }
  if (strncmp(a, "--max-count", n) == 0 && n == 11) {
    const char *v = eq ? eq + 1 : NULL;
    if (!v && !need_arg(g, i, "max-count", &v)) return false;
    g->max_count = strtol(v, NULL, 10);
    return true;
  }
  gerr(g, "unrecognized option '%s'\nUsage: grep [OPTION]... PATTERNS [FILE]...\n"
          "Try 'grep --help' for more information.", a);
  return false;
}

/* Escapes a fixed string for a BRE. */
static char *bre_escape(const char *s) {
  GString *r = g_string_new(NULL);
  for (; *s; s++) {
    if (strchr(".[]\\*^$", *s)) g_string_append_c(r, '\\');
    g_string_append_c(r, *s);
  }
  return g_string_free(r, FALSE);
}

static bool compile(Grep *g) {
  GPtrArray *all = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < g->patterns->len; i++) {
    gchar **lines = g_strsplit(g->patterns->pdata[i], "\n", -1);
    for (gchar **l = lines; *l; l++) g_ptr_array_add(all, g_strdup(*l));
    g_strfreev(lines);
  }
  g->re = g_new0(regex_t, all->len);
  int cflags = (g->syntax == 'E' ? REG_EXTENDED : 0) | (g->icase ? REG_ICASE : 0);
  bool ok = true;
  for (guint i = 0; i < all->len; i++) {
    char *pat = g->syntax == 'F' ? bre_escape(all->pdata[i]) : g_strdup(all->pdata[i]);
    int rc = regcomp(&g->re[i], pat, cflags);
    g_free(pat);
    if (rc != 0) {
      char msg[256];
      regerror(rc, &g->re[i], msg, sizeof msg);
      gerr(g, "%s", msg);
      ok = false;
      break;
    }
    g->nre++;
  }
  g_ptr_array_free(all, TRUE);
  return ok;
}

int box_cmd_grep(BoxCmd *c) {
  Grep g;
  memset(&g, 0, sizeof g);
  g.c = c;
  g.with_name = -1;
  g.max_count = -1;
  g.syntax = 'G';
  g.patterns = g_ptr_array_new_with_free_func(g_free);
  g.include = g_ptr_array_new_with_free_func(g_free);
  g.exclude = g_ptr_array_new_with_free_func(g_free);
  g.exclude_dir = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *operands = g_ptr_array_new();
  int status = 2;
  bool opts = true;
  for (int i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (!opts || a[0] != '-' || a[1] == '\0') { g_ptr_array_add(operands, (gpointer)a); continue; }
    if (strcmp(a, "--") == 0) { opts = false; continue; }
    if (a[1] == '-') {
      if (!parse_long(&g, a, &i)) goto out;
      continue;
    }
    for (const char *p = a + 1; *p; p++) {
      switch (*p) {
      case 'i': case 'y': g.icase = true; break;
      case 'v': g.invert = true; break;
      case 'n': g.number = true; break;
      case 'c': g.count = true; break;
      case 'l': g.list = true; break;
      case 'L': g.list_missing = true; break;
      case 'r': g.recursive = true; break;
      case 'R': g.recursive = g.deref = true; break;
      case 'q': g.quiet = true; break;
      case 's': g.no_messages = true; break;
      case 'w': g.word = true; break;
      case 'x': g.line = true; break;
      case 'o': g.only = true; break;
      case 'h': g.with_name = 0; break;
      case 'H': g.with_name = 1; break;
      case 'E': g.syntax = 'E'; break;
      case 'F': g.syntax = 'F'; break;
      case 'G': g.syntax = 'G'; break;
      case 'e': case 'm': {
        const char *v;
        char opt[2] = { *p, 0 };
        if (p[1]) v = p + 1;
        else if (!need_arg(&g, &i, opt, &v)) goto out;
        if (*p == 'e') g_ptr_array_add(g.patterns, g_strdup(v));
        else g.max_count = strtol(v, NULL, 10);
        goto next_arg;
      }
      default:
        gerr(&g, "invalid option -- '%c'\nUsage: grep [OPTION]... PATTERNS [FILE]...\n"
                 "Try 'grep --help' for more information.", *p);
        goto out;
      }
    }
  next_arg:;
  }
  guint first = 0;
  if (g.patterns->len == 0) {
    if (operands->len == 0) {
      gerr(&g, "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.");
      goto out;
    }
    g_ptr_array_add(g.patterns, g_strdup(operands->pdata[0]));
    first = 1;
  }
  if (!compile(&g)) goto out;

  guint nfiles = operands->len - first;
  bool show = g.with_name == 1 || (g.with_name == -1 && (nfiles > 1));
  if (nfiles == 0) {
    if (g.recursive) {
      bool sh = g.with_name != 0;
      grep_path(&g, ".", "", sh, sh, true);
    } else {
      grep_fd(&g, c->in, "(standard input)", g.with_name == 1);
    }
  } else {
    for (guint i = first; i < operands->len; i++) {
      const char *f = operands->pdata[i];
      bool stop;
      if (strcmp(f, "-") == 0) {
        stop = grep_fd(&g, c->in, "(standard input)", show);
      } else {
        /* with -r a directory operand shows names unless -h */
        stop = grep_path(&g, f, f, show, g.with_name != 0, true);
      }
      if (stop) break;
    }
  }
  if (g.error && !(g.quiet && g.matched_any)) status = 2;
  else status = g.matched_any ? 0 : 1;
out:
  for (size_t k = 0; k < g.nre; k++) regfree(&g.re[k]);
  g_free(g.re);
  g_ptr_array_free(g.patterns, TRUE);
  g_ptr_array_free(g.include, TRUE);
  g_ptr_array_free(g.exclude, TRUE);
  g_ptr_array_free(g.exclude_dir, TRUE);
  g_ptr_array_free(operands, TRUE);
  return status;
}
