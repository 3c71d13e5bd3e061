/* iconv.c — glibc's iconv program through glibc's iconv(3): -f/--from-code,
 * -t/--to-code (the locale's charset by default), -c to omit what cannot
 * be converted, FILE... or standard input, -l/--list the names glibc's
 * gconv knows; its messages (`quoted' as glibc's are), 1 for a
 * conversion or file error and 64 for a usage one.
 * Conversion stops at the first bad sequence, after the output before it,
 * as glibc's does. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <langinfo.h>
#include <locale.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

/* Converts in (n bytes) onto out; false after glibc's message.  in NULL:
 * writes the shift state's close and resets it. */
static bool convert(BoxCmd *c, iconv_t cd, const char *in, size_t n, bool omit)
{
  char buf[16384];
  char *ip = (char *)in;
  size_t left = n;
  for (;;) {
    char *op = buf, *before = ip;
    size_t room = sizeof buf;
    size_t r = in ? iconv(cd, &ip, &left, &op, &room) : iconv(cd, NULL, NULL, &op, &room);
    int e = errno;
    box_out_write(c->out, buf, sizeof buf - room);
    if (r != (size_t)-1) return true;
    if (e == E2BIG) continue;
    if (e == EILSEQ && omit) {
      /* //IGNORE passes over what it cannot convert but still ends with
       * EILSEQ; a byte it stopped at without converting is passed here */
      if (ip == before && left) {
        ip++;
        left--;
      }
      if (!left) return true;
      continue;
    }
    if (e == EILSEQ)
      bx_err(c, "iconv", "illegal input sequence at position %zu", (size_t)(ip - in));
    else if (e == EINVAL)
      bx_err(c, "iconv", "incomplete character or shift sequence at end of buffer");
    else
      bx_err(c, "iconv", "internal error (illegal descriptor)");
    return false;
  }
}

/* gconv's cache (iconvconfig's output, which glibc reads instead of the
 * gconv-modules files when it is there): a header, then a hash table of
 * offsets into a table of names, native-endian. */
#define GCONV_CACHE_MAGIC 0x20010324u

static guint16 cache_u16(const char *p)
{
  guint16 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static int by_version(gconstpointer a, gconstpointer b)
{
  return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The names in the cache beside libc (glibc's gconv directory is lib/gconv
 * next to it), sorted as glibc's iconv -l sorts them; NULL with errno, or
 * EINVAL when the file is not a cache. */
static GPtrArray *cached_names(char **path)
{
  Dl_info info;
  if (!dladdr((void *)iconv_open, &info) || !info.dli_fname) {
    errno = ENOENT;
    return NULL;
  }
  g_autofree char *dir = g_path_get_dirname(info.dli_fname);
  *path = g_build_filename(dir, "gconv", "gconv-modules.cache", NULL);
  int fd = open(*path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  GString *text = g_string_new(NULL);
  char buf[65536];
  ssize_t r;
  while ((r = bx_read(fd, buf, sizeof buf)) > 0) g_string_append_len(text, buf, r);
  int e = errno;
  close(fd);
  gsize n = text->len;
  g_autofree char *data = g_string_free(text, FALSE);
  if (r < 0) {
    errno = e;
    return NULL;
  }
  guint32 magic = 0;
  if (n >= 14) memcpy(&magic, data, sizeof magic);
  guint16 strings = n >= 14 ? cache_u16(data + 4) : 0, hash = n >= 14 ? cache_u16(data + 6) : 0,
          hash_size = n >= 14 ? cache_u16(data + 8) : 0;
  if (magic != GCONV_CACHE_MAGIC || strings >= n || (gsize)hash + 4u * hash_size > n) {
    errno = EINVAL;
    return NULL;
  }
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < hash_size; i++) {
    guint16 off = cache_u16(data + hash + 4 * i);
    if (!off || (gsize)strings + off >= n) continue;
    const char *name = data + strings + off;
    /* the converter's own internal form is no name to ask for */
    if (memchr(name, '\0', n - (name - data)) && strcmp(name, "INTERNAL") != 0)
      g_ptr_array_add(names, g_strdup(name));
  }
  g_ptr_array_sort(names, by_version);
  return names;
}

/* What glibc's iconv -l prints: a name a line ("//" closing those that do
 * not end in "/"), or on a terminal its preamble and the names, their
 * slashes off, in comma-separated lines of under 80 columns. */
static int list_charsets(BoxCmd *c)
{
  g_autofree char *path = NULL;
  GPtrArray *names = cached_names(&path);
  if (!names) {
    g_autofree char *text = bx_errtext(c, errno);
    bx_err(c, "iconv", "%s: %s", path ? path : "gconv", text);
    return 1;
  }
  bool human = c->out_fd >= 0 && isatty(c->out_fd);
  if (human)
    box_out_printf(c->out, "The following list contains all the coded character sets known.  "
                           "This does\nnot necessarily mean that all combinations of these "
                           "names can be used for\nthe FROM and TO command line parameters.  "
                           "One coded character set can be\nlisted with several different "
                           "names (aliases).\n\n  ");
  size_t column = 2;
  for (guint i = 0; i < names->len; i++) {
    const char *name = names->pdata[i];
    size_t len = strlen(name);
    if (!human) {
      box_out_printf(c->out, "%s%s\n", name, name[len - 1] == '/' ? "" : "//");
      continue;
    }
    while (len && name[len - 1] == '/') len--;
    if (column > 2) {
      bool wrap = column + len > 76; /* glibc's measure, trailing comma aside */
      box_out_printf(c->out, wrap ? ",\n  " : ", ");
      column = wrap ? 2 : column + 2;
    }
    box_out_write(c->out, name, len);
    column += len;
  }
  if (human) box_out_printf(c->out, "\n");
  g_ptr_array_free(names, TRUE);
  return 0;
}

int box_cmd_iconv(BoxCmd *c)
{
  /* argp's usage errors, for bx_usage */
  bx_getopt_start_try("Try `@ --help' or `@ --usage' for more information.");
  const char *from = NULL, *to = NULL;
  bool omit = false, list = false;
  GPtrArray *files = g_ptr_array_new();
  bool opts = true;
  for (int i = 1; i < c->argc; i++) {
    const char *a = c->argv[i];
    const char **slot = NULL;
    if (!opts || a[0] != '-' || !a[1]) {
      g_ptr_array_add(files, (gpointer)a);
    } else if (!strcmp(a, "--")) {
      opts = false;
    } else if (!strcmp(a, "--list")) {
      list = true;
    } else if (g_str_has_prefix(a, "--from-code=")) {
      from = a + 12;
    } else if (g_str_has_prefix(a, "--to-code=")) {
      to = a + 10;
    } else if (!strcmp(a, "--from-code") || !strcmp(a, "--to-code")) {
      slot = a[4] == 'r' ? &from : &to;
      if (i + 1 >= c->argc) {
        g_ptr_array_free(files, TRUE);
        bx_usage(c, "iconv", "option '%s' requires an argument", a);
        return 64;
      }
      *slot = c->argv[++i];
    } else if (a[1] == '-') {
      g_ptr_array_free(files, TRUE);
      bx_usage(c, "iconv", "unrecognized option '%s'", a);
      return 64;
    } else {
      for (const char *p = a + 1; *p; p++) {
        if (*p == 'c' || *p == 'l') {
          *(*p == 'c' ? &omit : &list) = true;
          continue;
        }
        if (*p != 'f' && *p != 't') {
          g_ptr_array_free(files, TRUE);
          bx_usage(c, "iconv", "invalid option -- '%c'", *p);
          return 64;
        }
        slot = *p == 'f' ? &from : &to;
        if (p[1]) {
          *slot = p + 1;
        } else if (i + 1 < c->argc) {
          *slot = c->argv[++i];
        } else {
          g_ptr_array_free(files, TRUE);
          bx_usage(c, "iconv", "option requires an argument -- '%c'", *p);
          return 64;
        }
        break;
      }
    }
  }
  if (list) {
    g_ptr_array_free(files, TRUE);
    return list_charsets(c);
  }
  if (!files->len) g_ptr_array_add(files, "-");
  /* the locale the Shell's variables name, not the Shell process's own:
   * it gives the default charset and //TRANSLIT's replacements */
  const char *lname = NULL;
  const char *vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
  for (size_t i = 0; i < G_N_ELEMENTS(vars) && !lname; i++) {
    const char *v = box_var_get(c->sh, vars[i]);
    if (v && *v) lname = v;
  }
  locale_t loc = newlocale(LC_CTYPE_MASK, lname ? lname : "C", (locale_t)0);
  if (!loc) loc = newlocale(LC_CTYPE_MASK, "C", (locale_t)0);
  locale_t old_loc = uselocale(loc);
  const char *locale_set = nl_langinfo_l(CODESET, loc);
  g_autofree char *to_code =
    omit ? g_strconcat(to ? to : locale_set, "//IGNORE", NULL) : g_strdup(to ? to : locale_set);
  iconv_t cd = iconv_open(to_code, from ? from : locale_set);
  if (cd == (iconv_t)-1) {
    bx_err(c, "iconv", "failed to start conversion processing");
    uselocale(old_loc);
    freelocale(loc);
    g_ptr_array_free(files, TRUE);
    return 1;
  }
  int status = 0;
  bool ok = true;
  for (guint i = 0; ok && i < files->len; i++) {
    const char *name = files->pdata[i];
    int fd = bx_open_in(c, name);
    if (fd < 0) {
      g_autofree char *text = bx_errtext(c, errno);
      bx_err(c, "iconv", "cannot open input file `%s': %s", name, text);
      status = 1;
      continue;
    }
    GString *s = g_string_new(NULL);
    char buf[65536];
    ssize_t r;
    while ((r = bx_read(fd, buf, sizeof buf)) > 0) g_string_append_len(s, buf, r);
    int e = errno;
    bx_close_in(c, fd);
    if (r < 0) {
      g_autofree char *text = bx_errtext(c, e);
      bx_err(c, "iconv", "error while reading the input: %s", text);
      ok = false;
    } else {
      /* each file ends the shift state and starts anew, a byte-order
       * mark included, as glibc's iconv does */
      ok = convert(c, cd, s->str, s->len, omit) && convert(c, cd, NULL, 0, omit);
    }
    g_string_free(s, TRUE);
  }
  iconv_close(cd);
  uselocale(old_loc);
  freelocale(loc);
  g_ptr_array_free(files, TRUE);
  return ok ? status : 1;
}
