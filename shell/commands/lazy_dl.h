/* lazy_dl.h — a shared library opened on a command's first use, for the
 * libraries box-shell does not link (libcurl, libarchive, libmagic, zlib,
 * liblzma).
 *
 * Linked, each would be loaded and bound (-z now) at every Shell start,
 * with all its dependencies (libarchive alone brings libxml2, ICU and
 * libstdc++): milliseconds and millions of instructions that only `curl`,
 * `tar`, `file`, gzip/zip/unzip or `xz` need.  So the library is dlopen'ed
 * by the command and its functions are called through a table of
 * pointers; each library's header (curl_dl.h, archive_dl.h, magic_dl.h,
 * zlib_dl.h, lzma_dl.h) defines macros named like the functions, so the
 * command's code reads as ordinary library calls.
 *
 * A worker rooted in the box's mount can no longer reach the host's
 * library files by name.  So the zygote learns beforehand which files the
 * library needs and keeps a descriptor for each directory holding them,
 * which its workers inherit (box_dl_prepare); mapping the library in the
 * zygote instead would cost every fork its mappings to copy (~155 for
 * libcurl).  A worker's first use opens the files through those
 * descriptors, dependencies first, so that each DT_NEEDED name matches by
 * soname a library already loaded and the dynamic linker never searches
 * its paths, which do not exist inside the mount. */
#ifndef BOX_SHELL_COMMANDS_LAZY_DL_H
#define BOX_SHELL_COMMANDS_LAZY_DL_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#include "shell/shell-private.h"

typedef struct {
  const char *name;
  size_t offset; /* of its pointer in the library's table */
  bool required; /* else NULL when missing */
} BoxDlSymbol;

/* A field of a table named like the function it points to. */
#define BOX_DL_FIELD(f) __typeof__(f) *f;

typedef struct BoxDlFile BoxDlFile;

typedef struct {
  const char *soname; /* "libcurl.so.4" */
  const BoxDlSymbol *symbols;
  size_t n_symbols;
  void *table; /* filled on load */
  /* A data file the library reads by name, found with the library loaded
   * (libmagic's database); its descriptor is kept beside the library's
   * directories.  NULL when there is none. */
  char *(*data_path)(void *lib);
  /* state: only box_dl_*() touch these */
  BoxDlFile *files;
  size_t n_files;
  int *dirs;
  size_t n_dirs;
  int data_fd; /* -1 until a data file is open */
  void *handle;
  const char *error;
  gsize loaded; /* 1 = loaded, 2 = failed */
} BoxDl;

/* Defines dl, the library soname, whose table of type Api has a field
 * for each of FUNCTIONS (an X-macro of BOX_DL_FIELD's), and those OPTIONAL
 * names (an X-macro of (symbol, field)) may leave NULL. */
#define BOX_DL_DEFINE(dl, Api, soname_, FUNCTIONS, OPTIONAL, data)                                 \
  typedef Api BoxDlApi;                                                                            \
  static BoxDlApi dl##_table;                                                                      \
  static const BoxDlSymbol dl##_symbols[] = { FUNCTIONS(BOX_DL_REQUIRED)                           \
                                                OPTIONAL(BOX_DL_OPTIONAL) };                       \
  BoxDl dl = { .soname = (soname_),                                                                \
               .symbols = dl##_symbols,                                                            \
               .n_symbols = G_N_ELEMENTS(dl##_symbols),                                            \
               .table = &dl##_table,                                                               \
               .data_path = (data),                                                                \
               .data_fd = -1 }
#define BOX_DL_REQUIRED(f) { #f, offsetof(BoxDlApi, f), true },
#define BOX_DL_OPTIONAL(name, field) { name, offsetof(BoxDlApi, field), false },
#define BOX_DL_NONE(X)

/* The zygote: arrange for workers to load dl on first use, else (if that
 * cannot be arranged) load it now.  False when it can be neither. */
bool box_dl_prepare(BoxDl *dl);
/* Load dl now unless box_dl_prepare already made it reachable (a worker
 * started alone, before it is rooted in the mount).  False on failure. */
bool box_dl_preload(BoxDl *dl);
/* The filled table, loading the library on the first call (thread-safe);
 * NULL when it cannot be loaded, *error (if given) then says why. */
const void *box_dl_api(BoxDl *dl, const char **error);
/* dl's table for command cmd of c, or NULL after "cmd: why" on c's
 * standard error. */
const void *box_dl_command(BoxDl *dl, BoxCmd *c, const char *cmd);
/* The data file's descriptor (read-only, on a read-only mount) when the
 * library was prepared or preloaded for a worker rooted in the mount;
 * otherwise -1, and the library finds its data file by name itself. */
int box_dl_data_fd(const BoxDl *dl);

/* The libraries (curl_dl.c, archive_dl.c, magic_dl.c, zlib_dl.c, lzma_dl.c). */
extern BoxDl box_curl_dl, box_archive_dl, box_magic_dl, box_zlib_dl, box_lzma_dl;

#endif
