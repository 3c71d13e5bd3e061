/* grep.c — GNU grep: BRE/ERE through glibc regex (GNU operators included),
 * -F fixed strings, -P through GRegex.  Files are read with open(2)/read(2)
 * as a stream of lines (any length); -r walks with opendir/readdir and d_type
 * (never stat: every stat is a policy decision on the mount). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

typedef struct {
  bool icase, invert, number, count, list, list_missing, recursive, deref;
  bool quiet, no_messages, word, line, only, text, skip_binary, null_data, null_name;
  bool byte_offset, initial_tab;
  int with_name;      /* -1 default, 0 -h, 1 -H */
  long max_count;     /* -1 none */
  long after, before; /* context */
  int syntax;         /* 'G', 'E', 'F', 'P' */
  const char *label;
  GPtrArray *patterns;
  GPtrArray *include, *exclude, *exclude_dir;
  regex_t *re;
  GRegex **pre;
  size_t nre;
  char **fixed; /* -F without -i/-w/-x: memmem */
  size_t *fixed_len;
  bool use_fixed, match_nothing;
  bool matched_any, error, printed_any;
  guint batch;     /* the next prefetch's size (0: not yet begun) */
  char *next_dir;  /* the directory the walk lists next, when known (borrowed) */
  char *ahead_dir; /* the listing asked for ahead, and its first batch's size */
  guint ahead_want;
  BoxCmd *c;
} Grep;

static void file_error(Grep *g, const char *name, int err)
{
  g->error = true;
  if (g->no_messages) return;
  bx_ferr(g->c, "grep", name, err);
}

static bool word_char(unsigned char ch)
{
  return ch == '_' || g_ascii_isalnum(ch);
}

/* One pattern's leftmost-longest match at or after from. */
static bool match_one(Grep *g, size_t k, const char *line, size_t len, size_t from, size_t *so,
                      size_t *eo)
{
  if (g->use_fixed) {
    size_t n = g->fixed_len[k];
    if (from > len) return false;
    const char *p = n == 0 ? line + from : memmem(line + from, len - from, g->fixed[k], n);
    if (!p) return false;
    *so = (size_t)(p - line);
    *eo = *so + n;
    return true;
  }
  if (g->syntax == 'P') {
    GMatchInfo *mi = NULL;
    bool ok = g_regex_match_full(g->pre[k], line, (gssize)len, (gint)from, 0, &mi, NULL);
    if (ok) {
      gint s, e;
      g_match_info_fetch_pos(mi, 0, &s, &e);
      *so = (size_t)s;
      *eo = (size_t)e;
    }
    g_match_info_free(mi);
    return ok;
  }
  regmatch_t m[1];
  m[0].rm_so = (regoff_t)from;
  m[0].rm_eo = (regoff_t)len;
  int flags = REG_STARTEND | (from > 0 ? REG_NOTBOL : 0);
  if (regexec(&g->re[k], line, 1, m, flags) != 0) return false;
  *so = (size_t)m[0].rm_so;
  *eo = (size_t)m[0].rm_eo;
  return true;
}

/* Finds the first match of any pattern in line[0..len) at or after from. */
static bool find_match(Grep *g, const char *line, size_t len, size_t from, size_t *so, size_t *eo)
{
  bool found = false;
  size_t bso = 0, beo = 0;
  for (size_t k = 0; k < g->nre; k++) {
    size_t start = from;
    while (start <= len) {
      size_t s, e;
      if (!match_one(g, k, line, len, start, &s, &e)) break;
      bool ok = true;
      if (g->line && g->syntax != 'P')
        ok = s == 0 && e == len;
      else if (g->word && g->syntax != 'P') {
        ok = (s == 0 || !word_char((unsigned char)line[s - 1])) &&
             (e == len || !word_char((unsigned char)line[e]));
        /* GNU also tries shorter matches at the same start */
        if (!ok && !g->use_fixed && (s == 0 || !word_char((unsigned char)line[s - 1]))) {
          for (size_t e2 = e; e2-- > s + 1;) {
            if (e2 < len && word_char((unsigned char)line[e2])) continue;
            regmatch_t m[1];
            m[0].rm_so = (regoff_t)s;
            m[0].rm_eo = (regoff_t)e2;
            if (regexec(&g->re[k], line, 1, m, REG_STARTEND | (s ? REG_NOTBOL : 0)) == 0 &&
                (size_t)m[0].rm_so == s && (size_t)m[0].rm_eo == e2) {
              e = e2;
              ok = true;
              break;
            }
          }
        }
      }
      if (ok) {
        if (!found || s < bso || (s == bso && e > beo)) {
          bso = s;
          beo = e;
        }
        found = true;
        break;
      }
      if (g->line && g->syntax != 'P') break;
      start = s + 1;
    }
  }
  if (found) {
    *so = bso;
    *eo = beo;
  }
  return found;
}

static void prefix(Grep *g, const char *name, bool show_name, long lineno, unsigned long long off,
                   char sep)
{
  BoxOut *o = g->c->out;
  if (show_name) {
    box_out_puts(o, name);
    box_out_putc(o, g->null_name ? '\0' : sep);
  }
  if (g->number) {
    /* by hand: printf's cost showed on every matching line of grep -rn */
    char buf[24];
    size_t n = sizeof buf;
    buf[--n] = sep;
    unsigned long v = lineno < 0 ? 0 : (unsigned long)lineno;
    do buf[--n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    box_out_write(o, buf + n, sizeof buf - n);
  }
  if (g->byte_offset) box_out_printf(o, "%llu%c", off, sep);
  if (g->initial_tab && (show_name || g->number || g->byte_offset)) box_out_putc(o, '\t');
}

typedef struct {
  char *text;
  size_t len;
  long lineno;
  unsigned long long off;
} Held;

static void emit_line(Grep *g, const char *name, bool show_name, const char *line, size_t len,
                      long lineno, unsigned long long off, char sep, long *last_printed)
{
  BoxOut *o = g->c->out;
  char eol = g->null_data ? '\0' : '\n';
  if ((g->after || g->before) && g->printed_any &&
      (*last_printed == 0 || lineno > *last_printed + 1))
    box_out_puts(o, "--\n");
  g->printed_any = true;
  *last_printed = lineno;
  if (sep == '-' && g->only) return;
  if (g->only && sep == ':') {
    size_t from = 0, so, eo;
    if (g->invert) return;
    while (from <= len && find_match(g, line, len, from, &so, &eo)) {
      if (eo > so) {
        prefix(g, name, show_name, lineno, off + so, ':');
        box_out_write(o, line + so, eo - so);
        box_out_putc(o, eol);
        from = eo;
      } else {
        from = so + 1;
      }
    }
    return;
  }
  prefix(g, name, show_name, lineno, off, sep);
  box_out_write(o, line, len);
  box_out_putc(o, eol);
}

/* Lines holding none of the fixed strings cannot match, so the buffered
 * ones before the first occurrence are passed over with one memmem per
 * pattern instead of one per line (GNU grep searches its buffer the same
 * way).  Only whole lines are passed; their count, bytes and NULs are
 * accounted as if each had been read. */
static void skip_unmatchable(Grep *g, BxReader *r, long *lineno, unsigned long long *off,
                             bool *binary)
{
  const char *w = r->buf + r->start;
  size_t wl = r->end - r->start;
  if (wl == 0) return;
  const char *hit = NULL;
  for (size_t k = 0; k < g->nre; k++) {
    const char *p = memmem(w, wl, g->fixed[k], g->fixed_len[k]);
    if (p && (!hit || p < hit)) hit = p;
  }
  const char *nl = memrchr(w, '\n', hit ? (size_t)(hit - w) : wl);
  if (!nl) return;
  size_t skip = (size_t)(nl + 1 - w);
  if (g->number || g->after > 0) /* line numbers, and the gaps that separate context groups */
    for (const char *q = w; (q = memchr(q, '\n', (size_t)(nl + 1 - q))) != NULL; q++) (*lineno)++;
  if (!*binary && !g->text && memchr(w, '\0', skip)) *binary = true;
  *off += skip;
  r->start += skip;
}

/* Returns true when the caller should stop everything (-q matched). */
static bool grep_fd(Grep *g, int fd, const char *name, bool show_name)
{
  BxReader r;
  bx_reader_init(&r, fd);
  char delim = g->null_data ? '\0' : '\n';
  long count = 0, lineno = 0, last_printed = 0, after_left = 0;
  unsigned long long off = 0, stop_off = 0;
  bool binary = false, checked = false, stop_after = false, quit = false;
  bool out_lines = !g->count && !g->list && !g->list_missing && !g->quiet;
  Held *ring = g->before > 0 && out_lines ? g_new0(Held, g->before) : NULL;
  size_t ring_n = 0, ring_head = 0;
  const char *rec;
  size_t rlen;
  BoxOut *o = g->c->out;
  bool skippable = g->use_fixed && !g->invert && !g->match_nothing && !g->null_data && !ring;
  for (size_t k = 0; skippable && k < g->nre; k++) skippable = g->fixed_len[k] > 0;
  if (g->max_count == 0) goto done;
  while (bx_reader_next(&r, delim, &rec, &rlen)) {
    if (!checked) {
      checked = true;
      if (!g->text && !g->null_data && memchr(r.buf, '\0', r.end) != NULL) binary = true;
    }
    size_t len = rlen;
    if (len && rec[len - 1] == delim) len--;
    if (!binary && !g->text && !g->null_data && memchr(rec, '\0', len)) binary = true;
    lineno++;
    unsigned long long line_off = off;
    off += rlen;
    if (binary && g->skip_binary) break;
    size_t so, eo;
    bool m = !g->match_nothing && find_match(g, rec, len, 0, &so, &eo);
    if (m != g->invert && !stop_after) {
      count++;
      g->matched_any = true;
      if (g->quiet) {
        quit = true;
        break;
      }
      if (g->list || g->list_missing) break;
      if (out_lines) {
        if (binary) {
          box_out_flush(o);
          box_fdprintf(g->c->err, "grep: %s: binary file matches\n", name);
          break;
        }
        for (size_t i = 0; i < ring_n; i++) {
          Held *h = &ring[(ring_head + i) % (size_t)g->before];
          if (h->lineno > last_printed)
            emit_line(g, name, show_name, h->text, h->len, h->lineno, h->off, '-', &last_printed);
        }
        ring_n = 0;
        emit_line(g, name, show_name, rec, len, lineno, line_off, ':', &last_printed);
        after_left = g->after;
      }
      if (g->max_count >= 0 && count >= g->max_count) {
        stop_after = true;
        stop_off = off;
        if (after_left == 0) {
          bx_reader_give_back(&r, 0);
          break;
        }
      }
    } else if (out_lines) {
      if (after_left > 0) {
        emit_line(g, name, show_name, rec, len, lineno, line_off, '-', &last_printed);
        after_left--;
        if (stop_after && after_left == 0) {
          /* GNU leaves the input after the last match, not its context */
          bx_reader_give_back(&r, (size_t)(off - stop_off));
          break;
        }
      } else if (stop_after) {
        bx_reader_give_back(&r, (size_t)(off - stop_off));
        break;
      } else if (ring) {
        Held *h;
        if (ring_n < (size_t)g->before)
          h = &ring[(ring_head + ring_n++) % (size_t)g->before];
        else {
          h = &ring[ring_head];
          ring_head = (ring_head + 1) % (size_t)g->before;
        }
        g_free(h->text);
        h->text = g_memdup2(rec, len ? len : 1);
        h->len = len;
        h->lineno = lineno;
        h->off = line_off;
      }
    }
    if (o->error) break;
    if (skippable && after_left == 0 && !stop_after)
      skip_unmatchable(g, &r, &lineno, &off, &binary);
  }
  if (r.err) file_error(g, name, r.err);
done:
  if (g->count) {
    if (show_name) {
      box_out_puts(o, name);
      box_out_putc(o, g->null_name ? '\0' : ':');
    }
    box_out_printf(o, "%ld\n", count);
  }
  char end = g->null_name ? '\0' : '\n';
  if (g->list && count > 0 && !g->quiet) {
    box_out_puts(o, name);
    box_out_putc(o, end);
  }
  if (g->list_missing && count == 0 && !g->quiet) {
    box_out_puts(o, name);
    box_out_putc(o, end);
  }
  if (ring) {
    for (long i = 0; i < g->before; i++) g_free(ring[i].text);
    g_free(ring);
  }
  bx_reader_free(&r);
  return quit;
}

static bool grep_path(Grep *g, const char *path, bool show_name, bool top);
static bool grep_file(Grep *g, const char *path, bool show_name);

static bool glob_any(GPtrArray *globs, const char *path)
{
  const char *base = strrchr(path, '/');
  base = base && base[1] ? base + 1 : path;
  for (guint i = 0; i < globs->len; i++)
    if (box_fnmatch(globs->pdata[i], base, 0) == 0) return true;
  return false;
}

static bool skip_file(Grep *g, const char *path, bool top)
{
  if (top && !g->recursive) { /* command-line files: GNU applies --exclude/--include too */
  }
  if (g->include->len && !glob_any(g->include, path)) return true;
  return g->exclude->len && glob_any(g->exclude, path);
}

/* The fast path: the next regular files of the directory that grep will
 * read, decided and opened by boxd in one request (box_prefetch_open).
 * A batch ends before the next entry that is not a regular file, so none
 * is outstanding while grep descends (a nested walk drops what it
 * fetched, and each file must be decided once).  Batches grow from one
 * file, doubling up to BOX_PREFETCH_MAX over the walk: a grep that stops
 * early (-q's first match, a closed pipe) leaves at most as many files
 * decided and unread as it has read, never a full batch after the first
 * file.  ahead: asked for now and answered when first needed
 * (box_prefetch_ahead), so boxd decides them while grep reads. */
static guint prefetch_from(Grep *g, GArray *ents, const char *path, guint from, bool ahead)
{
  GPtrArray *batch = g_ptr_array_new_with_free_func(g_free);
  guint i = from;
  if (g->batch == 0) g->batch = 1;
  guint want = g->batch;
  for (; i < ents->len && batch->len < want; i++) {
    BxDirEnt *e = &g_array_index(ents, BxDirEnt, i);
    if (e->type != DT_REG) break;
    char *child = path[0] == '\0' ? g_strdup(e->name) : bx_path_join(path, e->name);
    if (skip_file(g, child, false)) {
      g_free(child);
      continue;
    }
    g_ptr_array_add(batch, child);
  }
  if (ahead) {
    if (batch->len && !box_prefetch_ahead((const char *const *)batch->pdata, (int)batch->len))
      i = from;
  } else if (batch->len > 0) { /* even one: it must be decided before those asked for ahead */
    box_prefetch_open((const char *const *)batch->pdata, (int)batch->len);
  }
  if (i > from) g->batch = MIN(2 * g->batch, BOX_PREFETCH_MAX);
  g_ptr_array_free(batch, TRUE);
  return i;
}

/* opened: how many leading files came decided with the listing (the first
 * batch, asked for with it). */
static bool grep_dir(Grep *g, GArray *ents, const char *path, bool show_name, guint opened)
{
  bool stop = false;
  guint fetched = opened; /* entries before this are asked for */
  guint marks[2];         /* where the batches asked for ahead begin, oldest first */
  guint nmarks = 0;
  for (guint i = 0; i < ents->len && !stop; i++) {
    BxDirEnt *e = &g_array_index(ents, BxDirEnt, i);
    const char *n = e->name;
    unsigned char t = e->type;
    bool reached = opened > 0 && i == 0; /* the first file of a batch */
    if (t == DT_REG && i >= fetched) {
      fetched = prefetch_from(g, ents, path, i, false);
      nmarks = 0;
      reached = true;
    } else if (nmarks && i == marks[0]) {
      marks[0] = marks[1];
      nmarks--;
      reached = true;
    }
    /* on reaching a batch, the next is asked for, to be decided while this
     * one is read; once the batches are full-sized, the one after it too,
     * so that boxd need not wait for this side between two batches.  Not
     * for -q, which may stop at its first match. */
    guint depth = g->batch >= BOX_PREFETCH_MAX ? 2 : 1;
    while (reached && t == DT_REG && !g->quiet && nmarks < depth && fetched < ents->len &&
           g_array_index(ents, BxDirEnt, fetched).type == DT_REG) {
      guint from = fetched;
      fetched = prefetch_from(g, ents, path, from, true);
      if (fetched == from) break;
      marks[nmarks++] = from;
    }
    /* every file here asked for: the directory the walk lists next is
     * asked for now, queued behind them, so that it is decided in its
     * turn while these are read */
    if (reached && fetched >= ents->len && g->next_dir && !g->ahead_dir && !g->quiet &&
        !g->include->len && !g->exclude->len) {
      guint want = g->batch ? g->batch : 1;
      if (box_list_ahead(g->next_dir, g->next_dir, (int)want)) {
        g->ahead_dir = g_strdup(g->next_dir);
        g->ahead_want = want;
      }
      g->next_dir = NULL;
    }
    if (t != DT_REG) box_prefetch_drop(); /* nothing outstanding while descending */
    char *child = path[0] == '\0' ? g_strdup(n) : bx_path_join(path, n);
    if (t == DT_DIR && glob_any(g->exclude_dir, n)) {
      g_free(child);
      continue;
    }
    if (t == DT_REG) {
      /* a regular file: no need to try it as a directory first */
      if (!skip_file(g, child, false)) stop = grep_file(g, child, show_name);
    } else if (t == DT_DIR || t == DT_UNKNOWN || (t == DT_LNK && g->deref)) {
      /* what is listed after this directory: the next entry when it is a
       * directory too, or, after the last entry, what follows this one */
      char *outer = g->next_dir, *next = NULL;
      if (i + 1 == ents->len) {
        next = outer ? g_strdup(outer) : NULL;
      } else {
        BxDirEnt *f = &g_array_index(ents, BxDirEnt, i + 1);
        if (f->type == DT_DIR && !glob_any(g->exclude_dir, f->name))
          next = path[0] == '\0' ? g_strdup(f->name) : bx_path_join(path, f->name);
      }
      g->next_dir = next;
      stop = grep_path(g, child, show_name, false);
      g->next_dir = outer;
      g_free(next);
    }
    g_free(child);
  }
  box_prefetch_drop();
  bx_dir_free(ents);
  return stop;
}

static bool grep_path(Grep *g, const char *path, bool show_name, bool top)
{
  const char *open_path = path[0] ? path : ".";
  if (g->recursive) {
    int err;
    /* the first batch of files asked for with the listing, unless some
     * file might be skipped or the directory dropped after it */
    bool with_files = !g->include->len && !g->exclude->len && !(top && g->exclude_dir->len);
    guint want = g->batch ? g->batch : 1, opened = 0;
    if (g->ahead_dir && strcmp(g->ahead_dir, open_path) == 0)
      want = g->ahead_want; /* as asked for */
    g_clear_pointer(&g->ahead_dir, g_free);
    GArray *ents = with_files ? bx_list_dir_opening(open_path, path, want, &opened, &err)
                              : bx_list_dir(open_path, &err);
    if (opened) g->batch = MIN(2 * want, BOX_PREFETCH_MAX);
    if (ents) {
      if (top && path[0] && g->exclude_dir->len && glob_any(g->exclude_dir, path)) {
        bx_dir_free(ents);
        return false;
      }
      return grep_dir(g, ents, path, show_name, opened);
    }
    if (err != ENOTDIR) {
      file_error(g, open_path, err);
      return false;
    }
  }
  if (skip_file(g, path, top)) return false;
  return grep_file(g, path, show_name);
}

static bool grep_file(Grep *g, const char *path, bool show_name)
{
  const char *open_path = path[0] ? path : ".";
  int fd = box_open_file(open_path, O_RDONLY | O_NOCTTY);
  if (fd < 0) {
    file_error(g, open_path, errno);
    return false;
  }
  bool stop = grep_fd(g, fd, open_path, show_name);
  close(fd);
  return stop;
}

static bool add_pattern_file(Grep *g, const char *file)
{
  GString *s = bx_slurp_new(g->c, "grep", file);
  if (!s) return false;
  if (s->len && s->str[s->len - 1] == '\n')
    g_string_truncate(s, s->len - 1);
  else if (s->len == 0) {
    g_string_free(s, TRUE);
    g_ptr_array_add(g->patterns, NULL); /* marks "-f given" without a pattern */
    return true;
  }
  g_ptr_array_add(g->patterns, g_string_free(s, FALSE));
  return true;
}

static bool compile(Grep *g)
{
  GPtrArray *all = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < g->patterns->len; i++) {
    if (!g->patterns->pdata[i]) continue;
    const char *pat = g->patterns->pdata[i];
    if (*pat == '\0') {
      g_ptr_array_add(all, g_strdup(""));
      continue;
    }
    gchar **lines = g_strsplit(pat, "\n", -1);
    for (gchar **l = lines; *l; l++) g_ptr_array_add(all, g_strdup(*l));
    g_strfreev(lines);
  }
  if (all->len == 0) g->match_nothing = true;
  bool ok = true;
  g->use_fixed = g->syntax == 'F' && !g->icase;
  if (!g->icase && (g->syntax == 'G' || g->syntax == 'E')) {
    /* a BRE/ERE with no special character is a fixed string: memmem
     * instead of regexec on every line, the same matches */
    bool literal = true;
    for (guint i = 0; i < all->len && literal; i++)
      literal = strpbrk(all->pdata[i], "\\.[]*^$+?{}()|") == NULL;
    if (literal) g->use_fixed = true;
  }
  if (g->use_fixed) {
    g->fixed = g_new0(char *, all->len);
    g->fixed_len = g_new0(size_t, all->len);
    for (guint i = 0; i < all->len; i++) {
      g->fixed[i] = g_strdup(all->pdata[i]);
      g->fixed_len[i] = strlen(all->pdata[i]);
      g->nre++;
    }
  } else if (g->syntax == 'P') {
    g->pre = g_new0(GRegex *, all->len);
    for (guint i = 0; i < all->len; i++) {
      const char *p = all->pdata[i];
      char *pat = g->line   ? g_strdup_printf("^(?:%s)$", p)
                  : g->word ? g_strdup_printf("(?<!\\w)(?:%s)(?!\\w)", p)
                            : g_strdup(p);
      GError *err = NULL;
      g->pre[i] = g_regex_new(pat, G_REGEX_RAW | (g->icase ? G_REGEX_CASELESS : 0), 0, &err);
      g_free(pat);
      if (!g->pre[i]) {
        bx_err(g->c, "grep", "%s", err->message);
        g_error_free(err);
        ok = false;
        break;
      }
      g->nre++;
    }
  } else {
    g->re = g_new0(regex_t, all->len);
    int cflags = (g->syntax == 'E' ? REG_EXTENDED : 0) | (g->icase ? REG_ICASE : 0);
    for (guint i = 0; i < all->len; i++) {
      const char *p = all->pdata[i];
      char *pat;
      if (g->syntax == 'F') {
        GString *r = g_string_new(NULL);
        for (; *p; p++) {
          if (strchr(".[]\\*^$", *p)) g_string_append_c(r, '\\');
          g_string_append_c(r, *p);
        }
        pat = g_string_free(r, FALSE);
      } else {
        pat = g_strdup(p);
      }
      if (box_pattern_too_deep(pat)) {
        g_free(pat);
        bx_err(g->c, "grep", "maximum nesting depth exceeded (%d)", BOX_MAX_NEST);
        ok = false;
        break;
      }
      int rc = regcomp(&g->re[i], pat, cflags);
      g_free(pat);
      if (rc != 0) {
        char msg[256];
        regerror(rc, &g->re[i], msg, sizeof msg);
        bx_err(g->c, "grep", "%s", msg);
        ok = false;
        break;
      }
      g->nre++;
    }
  }
  g_ptr_array_free(all, TRUE);
  return ok;
}

static bool parse_num(Grep *g, const char *v, const char *what, long *out)
{
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (*v == '\0' || *end || errno || (n < 0 && strcmp(what, "max count") != 0)) {
    if (strcmp(what, "max count") == 0)
      bx_err(g->c, "grep", "invalid max count");
    else
      bx_err(g->c, "grep", "%s: invalid %s argument", v, what);
    return false;
  }
  *out = n;
  return true;
}

enum {
  O_INCLUDE = 1,
  O_EXCLUDE,
  O_EXCLUDE_DIR,
  O_COLOR,
  O_LABEL,
  O_LINEBUF,
  O_NULL_DATA,
  O_BINFILES
};

static const char longopts[] = "extended-regexp=E fixed-strings=F basic-regexp=G perl-regexp=P "
                               "regexp=e: file=f: ignore-case=i no-ignore-case=Y "
                               "word-regexp=w line-regexp=x null-data=z no-messages=s "
                               "invert-match=v max-count=m: byte-offset=b line-number=n "
                               "with-filename=H no-filename=h label=\5: only-matching=o quiet=q "
                               "silent=q binary-files=\10: text=a recursive=r "
                               "dereference-recursive=R include=\1: exclude=\2: exclude-dir=\3: "
                               "files-without-match=L files-with-matches=l "
                               "count=c initial-tab=T null=Z before-context=B: after-context=A: "
                               "context=C: color=\4:: colour=\4:: "
                               "line-buffered=\6";

int box_cmd_grep(BoxCmd *c)
{
  Grep g = { .c = c, .with_name = -1, .max_count = -1, .syntax = 'G' };
  g.patterns = g_ptr_array_new_with_free_func(g_free);
  g.include = g_ptr_array_new_with_free_func(g_free);
  g.exclude = g_ptr_array_new_with_free_func(g_free);
  g.exclude_dir = g_ptr_array_new_with_free_func(g_free);
  int status = 2;
  bool have_e = false;
  long ctx_default = -1, after = -1, before = -1;
  bx_getopt_start("Usage: grep [OPTION]... PATTERNS [FILE]...");
  int ch;
  /* digits as -NUM context: handled through the optstring */
  bool *const flags[] = { &g.word,        &g.line,   &g.null_data,   &g.no_messages, &g.invert,
                          &g.byte_offset, &g.number, &g.only,        &g.quiet,       &g.text,
                          &g.skip_binary, &g.count,  &g.initial_tab, &g.null_name };
  while ((ch = bx_getopt(c, "grep", "0123456789A:B:C:EFGPe:f:iyYwxzsvm:bnHhoqaIrRLlcTZUV",
                         longopts)) != -1) {
    if (bx_set_flag(ch, "wxzsvbnoqaIcTZ", flags)) continue;
    switch (ch) {
    case 'E':
    case 'F':
    case 'G':
    case 'P': g.syntax = ch; break;
    case 'e':
      g_ptr_array_add(g.patterns, g_strdup(optarg));
      have_e = true;
      break;
    case 'f':
      if (!add_pattern_file(&g, optarg)) goto out;
      have_e = true;
      break;
    case 'i':
    case 'y': g.icase = true; break;
    case 'Y': g.icase = false; break;
    case 'm':
      if (!parse_num(&g, optarg, "max count", &g.max_count)) goto out;
      break;
    case 'H': g.with_name = 1; break;
    case 'h': g.with_name = 0; break;
    case O_LABEL: g.label = optarg; break;
    case O_BINFILES:
      if (strcmp(optarg, "text") == 0)
        g.text = true;
      else if (strcmp(optarg, "without-match") == 0)
        g.skip_binary = true;
      else if (strcmp(optarg, "binary") != 0) {
        bx_err(c, "grep", "unknown binary-files type");
        goto out;
      }
      break;
    case 'r': g.recursive = true; break;
    case 'R': g.recursive = g.deref = true; break;
    case O_INCLUDE: g_ptr_array_add(g.include, g_strdup(optarg)); break;
    case O_EXCLUDE: g_ptr_array_add(g.exclude, g_strdup(optarg)); break;
    case O_EXCLUDE_DIR: g_ptr_array_add(g.exclude_dir, g_strdup(optarg)); break;
    case 'L':
      g.list_missing = true;
      g.list = false;
      break;
    case 'l':
      g.list = true;
      g.list_missing = false;
      break;
    case 'A':
      if (!parse_num(&g, optarg, "context length", &after)) goto out;
      break;
    case 'B':
      if (!parse_num(&g, optarg, "context length", &before)) goto out;
      break;
    case 'C':
      if (!parse_num(&g, optarg, "context length", &ctx_default)) goto out;
      break;
    case O_COLOR:
    case O_LINEBUF:
    case 'U': break;
    case 'V':
      box_out_puts(c->out, "grep (boxfs) 3.8\n");
      status = 0;
      goto out;
    case '?': goto out;
    default:
      if (ch >= '0' && ch <= '9') {
        ctx_default = (ctx_default < 0 ? 0 : ctx_default) * 10 + (ch - '0');
      }
      break;
    }
  }
  if (after < 0) after = ctx_default;
  if (before < 0) before = ctx_default;
  g.after = after < 0 ? 0 : after;
  g.before = before < 0 ? 0 : before;
  int first = optind;
  if (!have_e) {
    if (first >= c->argc) {
      box_out_flush(c->out);
      box_fdprintf(
        c->err,
        "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n");
      goto out;
    }
    g_ptr_array_add(g.patterns, g_strdup(c->argv[first++]));
  }
  if (!compile(&g)) goto out;

  int nfiles = c->argc - first;
  bool show = g.with_name == 1 || (g.with_name == -1 && (nfiles > 1 || g.recursive));
  const char *stdin_name = g.label ? g.label : "(standard input)";
  if (nfiles == 0) {
    if (g.recursive)
      grep_path(&g, "", g.with_name != 0, true);
    else
      grep_fd(&g, c->in, stdin_name, g.with_name == 1);
  } else {
    for (int i = first; i < c->argc; i++) {
      const char *f = c->argv[i];
      bool stop;
      if (strcmp(f, "-") == 0)
        stop = grep_fd(&g, c->in, stdin_name, show);
      else
        stop = grep_path(&g, f, show, true);
      if (stop) break;
    }
  }
  if (g.error && !(g.quiet && g.matched_any))
    status = 2;
  else
    status = g.matched_any ? 0 : 1;
out:
  box_list_ahead_drop(); /* stopped before the directory it was for */
  g_free(g.ahead_dir);
  for (size_t k = 0; k < g.nre; k++) {
    if (g.use_fixed)
      g_free(g.fixed[k]);
    else if (g.syntax == 'P')
      g_regex_unref(g.pre[k]);
    else
      regfree(&g.re[k]);
  }
  g_free(g.re);
  g_free(g.pre);
  g_free(g.fixed);
  g_free(g.fixed_len);
  g_ptr_array_free(g.patterns, TRUE);
  g_ptr_array_free(g.include, TRUE);
  g_ptr_array_free(g.exclude, TRUE);
  g_ptr_array_free(g.exclude_dir, TRUE);
  return status;
}
