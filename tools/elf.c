/* elf.c — the loader closure of a program (spec/runtime.md §5.4 Exec@File).
 *
 * For an ELF image: its PT_INTERP and every DT_NEEDED library, found the
 * way ld.so finds them (DT_RPATH when there is no DT_RUNPATH, then
 * DT_RUNPATH, then the ld.so.conf directories and the defaults), $ORIGIN
 * expanded, recursively, at most 512 images.  For a script: its shebang
 * interpreter chain, each with its own closure.
 */
#include "tools/tools-private.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_IMAGES 512

static char *canonical(const char *path)
{
  char *r = realpath(path, NULL);
  char *out = r ? g_strdup(r) : NULL;
  free(r);
  return out;
}

static void add_conf(GPtrArray *dirs, const char *file, int depth)
{
  g_autofree char *text = NULL;
  if (depth > 4 || !g_file_get_contents(file, &text, NULL, NULL)) return;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    char *hash = strchr(*l, '#');
    if (hash) *hash = '\0';
    g_strstrip(*l);
    if (g_str_has_prefix(*l, "include")) {
      const char *pat = g_strstrip(*l + 7);
      glob_t g;
      if (glob(pat, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) add_conf(dirs, g.gl_pathv[i], depth + 1);
        globfree(&g);
      }
    } else if ((*l)[0] == '/') {
      g_ptr_array_add(dirs, g_strdup(*l));
    }
  }
}

static gpointer default_dirs_init(gpointer data)
{
  (void)data;
  GPtrArray *dirs = g_ptr_array_new();
  add_conf(dirs, "/etc/ld.so.conf", 0);
  const char *defaults[] = { "/lib/x86_64-linux-gnu",
                             "/usr/lib/x86_64-linux-gnu",
                             "/lib/aarch64-linux-gnu",
                             "/usr/lib/aarch64-linux-gnu",
                             "/lib64",
                             "/usr/lib64",
                             "/lib",
                             "/usr/lib",
                             NULL };
  for (int i = 0; defaults[i]; i++) g_ptr_array_add(dirs, g_strdup(defaults[i]));
  g_ptr_array_add(dirs, NULL);
  return dirs;
}

static char *const *default_dirs(void)
{
  static GOnce once = G_ONCE_INIT;
  GPtrArray *dirs = g_once(&once, default_dirs_init, NULL);
  return (char *const *)dirs->pdata;
}

typedef struct {
  const unsigned char *base;
  size_t size;
  const Elf64_Phdr *ph;
  int phnum;
} Image;

static const char *at_vaddr(const Image *im, Elf64_Addr va, size_t *avail)
{
  for (int i = 0; i < im->phnum; i++) {
    const Elf64_Phdr *p = &im->ph[i];
    if (p->p_type == PT_LOAD && va >= p->p_vaddr && va < p->p_vaddr + p->p_filesz) {
      Elf64_Off off = p->p_offset + (va - p->p_vaddr);
      if (off >= im->size) return NULL;
      *avail = im->size - off;
      return (const char *)im->base + off;
    }
  }
  return NULL;
}

static bool is_elf64(const unsigned char *b, size_t n)
{
  return n >= sizeof(Elf64_Ehdr) && memcmp(b, ELFMAG, SELFMAG) == 0 && b[EI_CLASS] == ELFCLASS64;
}

static void split_path_list(GPtrArray *out, const char *list, const char *origin)
{
  g_auto(GStrv) parts = g_strsplit(list, ":", -1);
  for (char **p = parts; *p; p++) {
    if (!**p) continue;
    GString *s = g_string_new(*p);
    g_string_replace(s, "${ORIGIN}", origin, 0);
    g_string_replace(s, "$ORIGIN", origin, 0);
    g_ptr_array_add(out, g_string_free(s, FALSE));
  }
}

/* A file that holds a 64-bit ELF image of the machine ld.so serves. */
static bool usable_library(const char *path, unsigned machine)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Elf64_Ehdr eh;
  bool ok = read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh &&
            is_elf64((const unsigned char *)&eh, sizeof eh) && eh.e_machine == machine;
  close(fd);
  return ok;
}

typedef struct {
  GHashTable *seen; /* canonical paths */
  GPtrArray *out;
  GError **error;
  bool failed;
} Walk;

static void walk(Walk *w, const char *path, int depth);

/* The first reason is the one reported: a later one is a consequence of it. */
G_GNUC_PRINTF(2, 3) static void walk_fail(Walk *w, const char *fmt, ...)
{
  if (!w->failed) {
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(w->error, BOX_TOOLS_ERROR, 1, m);
  }
  w->failed = true;
}

static void add_image(Walk *w, const char *found, int depth)
{
  g_autofree char *canon = canonical(found);
  if (!canon || g_hash_table_contains(w->seen, canon)) return;
  if (g_hash_table_size(w->seen) >= MAX_IMAGES) {
    walk_fail(w, "the loader closure exceeds %d images", MAX_IMAGES);
    return;
  }
  g_hash_table_add(w->seen, g_strdup(canon));
  /* The spelling the loader uses: the view needs its links too. */
  g_ptr_array_add(w->out, g_strdup(found));
  walk(w, canon, depth + 1);
}

static void walk_script(Walk *w, const char *path, const unsigned char *b, size_t n, int depth)
{
  size_t end = 2;
  while (end < n && end < 256 && b[end] != '\n') end++;
  g_autofree char *line = g_strndup((const char *)b + 2, end - 2);
  g_strstrip(line);
  char *sp = strpbrk(line, " \t");
  if (sp) *sp = '\0';
  if (line[0] != '/') {
    walk_fail(w, "%s names the interpreter \"%s\", which is not an absolute path", path, line);
    return;
  }
  if (access(line, X_OK) != 0) {
    walk_fail(w, "%s names the interpreter %s, which is not there", path, line);
    return;
  }
  add_image(w, line, depth);
}

typedef struct {
  GPtrArray *rpath, *runpath, *needed;
  unsigned machine;
} Dynamic;

/* Walks the loader of the mapped ELF image b and reads its dynamic section
 * into *dy, which stays empty where the image has none to follow. */
static void read_image(Walk *w, const char *path, const unsigned char *b, size_t size, int depth,
                       Dynamic *dy)
{
  if (!is_elf64(b, size)) return;
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
  if (eh->e_phoff == 0 || eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > size) return;
  Image im = { b, size, (const Elf64_Phdr *)(b + eh->e_phoff), eh->e_phnum };
  const Elf64_Phdr *dyn = NULL;
  for (int i = 0; i < im.phnum; i++) {
    if (im.ph[i].p_type == PT_INTERP && im.ph[i].p_offset + im.ph[i].p_filesz <= size) {
      g_autofree char *interp = g_strndup((const char *)b + im.ph[i].p_offset, im.ph[i].p_filesz);
      if (access(interp, R_OK) != 0) {
        walk_fail(w, "%s needs the loader %s, which is not there", path, interp);
        break;
      }
      add_image(w, interp, depth);
    } else if (im.ph[i].p_type == PT_DYNAMIC) {
      dyn = &im.ph[i];
    }
  }
  if (!dyn || w->failed || dyn->p_offset + dyn->p_filesz > size) return;
  const Elf64_Dyn *d = (const Elf64_Dyn *)(b + dyn->p_offset);
  size_t nd = dyn->p_filesz / sizeof(Elf64_Dyn);
  Elf64_Addr strtab = 0;
  for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL; i++)
    if (d[i].d_tag == DT_STRTAB) strtab = d[i].d_un.d_ptr;
  size_t avail = 0;
  const char *str = strtab ? at_vaddr(&im, strtab, &avail) : NULL;
  if (!str) return;
  g_autofree char *origin = g_path_get_dirname(path);
  for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL; i++) {
    if (d[i].d_tag != DT_NEEDED && d[i].d_tag != DT_RPATH && d[i].d_tag != DT_RUNPATH) continue;
    if (d[i].d_un.d_val >= avail) continue;
    g_autofree char *s = g_strndup(str + d[i].d_un.d_val, avail - d[i].d_un.d_val);
    if (d[i].d_tag == DT_NEEDED)
      g_ptr_array_add(dy->needed, g_steal_pointer(&s));
    else
      split_path_list(d[i].d_tag == DT_RPATH ? dy->rpath : dy->runpath, s, origin);
  }
  dy->machine = eh->e_machine;
}

static void walk(Walk *w, const char *path, int depth)
{
  if (w->failed || depth > 16) return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 4) {
    close(fd);
    return;
  }
  size_t size = (size_t)st.st_size;
  void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return;
  const unsigned char *b = map;
  Dynamic dy = { g_ptr_array_new_with_free_func(g_free), g_ptr_array_new_with_free_func(g_free),
                 g_ptr_array_new_with_free_func(g_free), 0 };
  if (b[0] == '#' && b[1] == '!')
    walk_script(w, path, b, size, depth);
  else
    read_image(w, path, b, size, depth, &dy);
  /* The libraries are looked for with the image unmapped: a deep closure
   * would otherwise hold every image on the way down. */
  munmap(map, size);
  for (guint i = 0; i < dy.needed->len && !w->failed; i++) {
    const char *name = g_ptr_array_index(dy.needed, i);
    g_autofree char *found = NULL;
    if (strchr(name, '/')) {
      if (usable_library(name, dy.machine)) found = g_strdup(name);
    } else {
      GPtrArray *order[] = { dy.runpath->len ? NULL : dy.rpath, dy.runpath };
      for (int k = 0; k < 2 && !found; k++)
        for (guint j = 0; order[k] && j < order[k]->len && !found; j++) {
          g_autofree char *c = g_build_filename(g_ptr_array_index(order[k], j), name, NULL);
          if (usable_library(c, dy.machine)) found = g_steal_pointer(&c);
        }
      for (char *const *dd = default_dirs(); *dd && !found; dd++) {
        g_autofree char *c = g_build_filename(*dd, name, NULL);
        if (usable_library(c, dy.machine)) found = g_steal_pointer(&c);
      }
    }
    if (!found) {
      walk_fail(w, "%s needs the library %s, which is not there", path, name);
      break;
    }
    add_image(w, found, depth);
  }
  g_ptr_array_free(dy.rpath, TRUE);
  g_ptr_array_free(dy.runpath, TRUE);
  g_ptr_array_free(dy.needed, TRUE);
}

GPtrArray *box_tools_loader_closure(const char *path, GError **error)
{
  Walk w = { g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
             g_ptr_array_new_with_free_func(g_free), error, false };
  g_autofree char *canon = canonical(path);
  if (!canon) {
    g_set_error(error, BOX_TOOLS_ERROR, 1, "%s is not there: %s", path, g_strerror(errno));
    g_hash_table_destroy(w.seen);
    g_ptr_array_free(w.out, TRUE);
    return NULL;
  }
  g_hash_table_add(w.seen, g_strdup(canon));
  walk(&w, canon, 0);
  g_hash_table_destroy(w.seen);
  if (w.failed) {
    g_ptr_array_free(w.out, TRUE);
    return NULL;
  }
  return w.out;
}
