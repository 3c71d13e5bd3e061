/* iconv.c — glibc's iconv program: -f/--from-code,
 * -t/--to-code (the locale's charset by default), -c to omit what cannot
 * be converted, FILE... or standard input, -l/--list the names glibc's
 * gconv knows; its messages (`quoted' as glibc's are), 1 for a
 * conversion or file error and 64 for a usage one.
 * Conversion stops at the first bad sequence, after the output before it,
 * as glibc's does.  UTF-8, ASCII, Latin-1, Windows-1252, UTF-16, UTF-32,
 * UCS-2 and UCS-4 are converted here; other encodings through glibc's
 * iconv(3). */
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

/* ---- the common encodings, converted here ------------------------------------
 * A box's root holds no gconv modules, so glibc's iconv(3) there knows
 * little beyond UTF-8: these are done by the command itself, with glibc's
 * results (its byte orders, byte-order marks, errors and positions). */

enum {
  E_UTF8,
  E_ASCII,
  E_LATIN1,
  E_CP1252,
  E_UTF16, /* with a byte-order mark; little-endian, as glibc writes it */
  E_UTF16LE,
  E_UTF16BE,
  E_UTF32,
  E_UTF32LE,
  E_UTF32BE,
  E_UCS2, /* glibc's UCS-2 is little-endian, its UCS-4 big-endian */
  E_UCS4,
};

typedef struct {
  int enc;
  bool translit, ignore;
} Code;

/* each encoding's names (in the enum's order, a '|' after each) as
 * glibc's aliases spell them, compared without case, '-' or '_' */
static const char code_names[] =
  "|UTF8|ISO10646UTF8||ASCII|USASCII|ANSIX3.41968|646||ISO88591|LATIN1|L1|IBM819|CP819|ISOIR100|"
  "CSISOLATIN1||CP1252|WINDOWS1252|MSANSI||UTF16||UTF16LE|UCS2LE|UNICODELITTLE||UTF16BE|UCS2BE|"
  "UNICODEBIG||UTF32||UTF32LE|UCS4LE||UTF32BE|UCS4BE||UCS2||UCS4||";

/* name[//TRANSLIT][//IGNORE] when name is one of ours */
static bool own_code(const char *name, Code *code)
{
  *code = (Code){ 0 };
  const char *cut = strstr(name, "//");
  GString *key = g_string_new(NULL);
  for (const char *p = name; *p && p != cut; p++)
    if (*p != '-' && *p != '_') g_string_append_c(key, g_ascii_toupper(*p));
  for (const char *p = cut; p && *p;) {
    p += 2;
    const char *end = strstr(p, "//");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == 8 && g_ascii_strncasecmp(p, "TRANSLIT", 8) == 0)
      code->translit = true;
    else if (n == 6 && g_ascii_strncasecmp(p, "IGNORE", 6) == 0)
      code->ignore = true;
    else if (n) {
      g_string_free(key, TRUE);
      return false;
    }
    p += n;
  }
  g_string_prepend_c(key, '|');
  g_string_append_c(key, '|');
  const char *at = key->len > 2 ? strstr(code_names, key->str) : NULL;
  /* the encoding is the number of "||" before the name */
  for (const char *p = code_names; at && (p = strstr(p, "||")) && p < at; p += 2) code->enc++;
  g_string_free(key, TRUE);
  return at != NULL;
}

/* Windows-1252's 0x80..0x9F (0: none there) */
static const guint16 cp1252_high[32] = {
  0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
  0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
  0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178,
};

/* //TRANSLIT's stand-ins for common typography, as the C locale has them;
 * anything else it cannot write becomes '?' */
static const struct {
  guint32 cp;
  const char *as;
} translit[] = {
  { 0x00A0, " " },   { 0x00A9, "(C)" },   { 0x00AB, "<<" },    { 0x00AE, "(R)" },
  { 0x00BB, ">>" },  { 0x00BC, " 1/4 " }, { 0x00BD, " 1/2 " }, { 0x00BE, " 3/4 " },
  { 0x00C6, "AE" },  { 0x00D7, "x" },     { 0x00DF, "ss" },    { 0x00E6, "ae" },
  { 0x0152, "OE" },  { 0x0153, "oe" },    { 0x2010, "-" },     { 0x2013, "-" },
  { 0x2014, "--" },  { 0x2018, "'" },     { 0x2019, "'" },     { 0x201A, "," },
  { 0x201C, "\"" },  { 0x201D, "\"" },    { 0x201E, ",," },    { 0x2020, "+" },
  { 0x2022, "o" },   { 0x2026, "..." },   { 0x2039, "<" },     { 0x203A, ">" },
  { 0x20AC, "EUR" }, { 0x2122, "(TM)" },  { 0x2192, "->" },    { 0x2212, "-" },
  { 0x2264, "<=" },  { 0xFB01, "fi" },    { 0xFB02, "fl" },
};

static guint32 get16(const unsigned char *p, bool be)
{
  return be ? (guint32)p[0] << 8 | p[1] : (guint32)p[1] << 8 | p[0];
}

static guint32 get32(const unsigned char *p, bool be)
{
  return be ? (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3]
            : (guint32)p[3] << 24 | (guint32)p[2] << 16 | (guint32)p[1] << 8 | p[0];
}

/* One character of p (n bytes left) in enc: its length, 0 when it is cut
 * short, -1 when it is no character. */
static int decode(int enc, bool be, const unsigned char *p, size_t n, guint32 *cp)
{
  switch (enc) {
  case E_ASCII: *cp = p[0]; return p[0] < 0x80 ? 1 : -1;
  case E_LATIN1: *cp = p[0]; return 1;
  case E_CP1252:
    *cp = p[0] >= 0x80 && p[0] < 0xA0 ? cp1252_high[p[0] - 0x80] : p[0];
    return *cp ? 1 : -1;
  case E_UTF8: {
    int len = p[0] < 0x80   ? 1
              : p[0] < 0xC2 ? -1
              : p[0] < 0xE0 ? 2
              : p[0] < 0xF0 ? 3
              : p[0] < 0xF5 ? 4
                            : -1;
    if (len <= 1) return *cp = p[0], len;
    guint32 v = p[0] & (0x7F >> len);
    for (int i = 1; i < len; i++) {
      if ((size_t)i >= n) return 0;
      if ((p[i] & 0xC0) != 0x80) return -1;
      v = v << 6 | (p[i] & 0x3F);
    }
    static const guint32 least[] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (v < least[len] || v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) return -1;
    *cp = v;
    return len;
  }
  case E_UCS4:
  case E_UTF32:
  case E_UTF32LE:
  case E_UTF32BE:
    if (n < 4) return 0;
    *cp = get32(p, be);
    return *cp > 0x10FFFF || (*cp >= 0xD800 && *cp < 0xE000) ? -1 : 4;
  default: {
    if (n < 2) return 0;
    guint32 v = get16(p, be);
    if (v < 0xD800 || v >= 0xE000) {
      *cp = v;
      return 2;
    }
    /* a surrogate: the first of a pair, but in UCS-2 */
    if (v >= 0xDC00 || enc == E_UCS2) return -1;
    if (n < 4) return 0;
    guint32 lo = get16(p + 2, be);
    if (lo < 0xDC00 || lo >= 0xE000) return -1;
    *cp = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
    return 4;
  }
  }
}

static void put16(GString *o, guint32 v, bool be)
{
  char b[2] = { (char)(be ? v >> 8 : v), (char)(be ? v : v >> 8) };
  g_string_append_len(o, b, 2);
}

static void put32(GString *o, guint32 v, bool be)
{
  for (int i = 0; i < 4; i++) g_string_append_c(o, (char)(v >> (be ? 24 - 8 * i : 8 * i)));
}

/* cp onto o in enc; false when enc has no such character. */
static bool encode(int enc, guint32 cp, GString *o)
{
  switch (enc) {
  case E_UTF8: {
    char b[6];
    g_string_append_len(o, b, g_unichar_to_utf8(cp, b));
    return true;
  }
  case E_ASCII:
  case E_LATIN1:
  case E_CP1252:
    if (cp < (enc == E_ASCII ? 0x80u : 0x100u) && (enc != E_CP1252 || cp < 0x80 || cp >= 0xA0)) {
      g_string_append_c(o, (char)cp);
      return true;
    }
    for (int i = 0; enc == E_CP1252 && i < 32; i++)
      if (cp1252_high[i] == cp) {
        g_string_append_c(o, (char)(0x80 + i));
        return true;
      }
    return false;
  case E_UCS4:
  case E_UTF32BE: put32(o, cp, true); return true;
  case E_UTF32:
  case E_UTF32LE: put32(o, cp, false); return true;
  case E_UCS2:
    if (cp > 0xFFFF) return false;
    put16(o, cp, false);
    return true;
  default: {
    bool be = enc == E_UTF16BE;
    if (cp < 0x10000) {
      put16(o, cp, be);
    } else {
      put16(o, 0xD800 + ((cp - 0x10000) >> 10), be);
      put16(o, 0xDC00 + ((cp - 0x10000) & 0x3FF), be);
    }
    return true;
  }
  }
}

/* One file's text from one of ours to another, written as glibc's iconv
 * writes it (what came before a bad sequence, then its message).  Under
 * //IGNORE what cannot be read or written is passed over, and glibc then
 * says the input was bad at its end; -c (quiet) passes over it silently.
 * A character cut short at the end is an error either way.  false after
 * the message. */
static bool convert_own(BoxCmd *c, const Code *from, const Code *to, bool quiet,
                        const unsigned char *in, size_t n)
{
  GString *o = g_string_new(NULL);
  size_t at = 0;
  bool be = from->enc == E_UTF16BE || from->enc == E_UTF32BE || from->enc == E_UCS4;
  /* UTF-16 and UTF-32 read a byte-order mark (little-endian without one) */
  if (from->enc == E_UTF16 && n >= 2 && (get16(in, true) == 0xFEFF || get16(in, true) == 0xFFFE))
    be = get16(in, true) == 0xFEFF, at = 2;
  if (from->enc == E_UTF32 && n >= 4 && (get32(in, true) == 0xFEFF || get32(in, false) == 0xFEFF))
    be = get32(in, true) == 0xFEFF, at = 4;
  if (to->enc == E_UTF16 || to->enc == E_UTF32) encode(to->enc, 0xFEFF, o);
  bool omit = to->ignore || quiet, skipped = false;
  const char *error = NULL;
  while (!error && at < n) {
    guint32 cp;
    int len = decode(from->enc, be, in + at, n - at, &cp);
    bool written = len > 0 && encode(to->enc, cp, o);
    if (len > 0 && !written && to->translit) {
      const char *as = "?";
      for (size_t i = 0; i < G_N_ELEMENTS(translit); i++)
        if (translit[i].cp == cp) as = translit[i].as;
      for (const char *p = as; *p; p++) encode(to->enc, (guchar)*p, o);
      written = true;
    }
    if (len == 0)
      error = "incomplete character or shift sequence at end of buffer";
    else if (!written && !omit)
      error = "illegal input sequence at position";
    else
      at += len < 0 ? 1 : (size_t)len, skipped = skipped || !written;
    if (o->len >= 65536 || error) {
      box_out_write(c->out, o->str, o->len);
      g_string_truncate(o, 0);
    }
  }
  box_out_write(c->out, o->str, o->len);
  g_string_free(o, TRUE);
  if (!error && skipped && !quiet) error = "illegal input sequence at position";
  if (error && g_str_has_suffix(error, "position"))
    bx_err(c, "iconv", "%s %zu", error, at);
  else if (error)
    bx_err(c, "iconv", "%s", error);
  return !error;
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
  Code own_from, own_to;
  bool own =
    own_code(from ? from : locale_set, &own_from) && own_code(to ? to : locale_set, &own_to);
  /* //TRANSLIT's replacements are the locale's: ours are the C locale's,
   * taken elsewhere only where glibc has no converter */
  bool glibc_first = own && own_to.translit && strcmp(locale_set, "ANSI_X3.4-1968") != 0;
  iconv_t cd = own && !glibc_first ? (iconv_t)-1 : iconv_open(to_code, from ? from : locale_set);
  if (glibc_first) own = cd == (iconv_t)-1;
  if (!own && cd == (iconv_t)-1) {
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
      ok = own ? convert_own(c, &own_from, &own_to, omit, (const unsigned char *)s->str, s->len)
               : convert(c, cd, s->str, s->len, omit) && convert(c, cd, NULL, 0, omit);
    }
    g_string_free(s, TRUE);
  }
  if (!own) iconv_close(cd);
  uselocale(old_loc);
  freelocale(loc);
  g_ptr_array_free(files, TRUE);
  return ok ? status : 1;
}
