/* python_dl.c — the embedded CPython (python/boxpython.h), loaded on the
 * first `python3`.
 *
 * box-shell never links libpython: the module that does (boxpython.so)
 * is dlopened by the command's child.  Inside a box that child is rooted in
 * the box's mount, where neither the module, nor libpython, nor the
 * standard library can be reached by name; so the zygote keeps read-only
 * descriptors of their host directories (box_python_prepare), mapping
 * nothing.  A library is then loaded from its directory's descriptor after
 * everything it needs (read from its own DT_NEEDED entries, so the dynamic
 * linker matches each by soname and never searches paths that do not
 * exist in the mount), with the descriptor as the working directory of a
 * thread of its own.  The standard library itself is imported through its
 * descriptor by the module (python/importer.c).  The descriptors are
 * hostdir.c's, as curl_dl.c's are. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "python/boxpython.h"
#include "shell/commands/python_launcher.h"
#include "shell/shell-private.h"

#define MODULE_FILE "boxpython.so"
#define LIBGCC_S "libgcc_s.so.1"

/* Directories kept for the workers: [0] the module's, [1] the system
 * libraries'.  -1 when not prepared. */
static int lib_dirs[2] = { -1, -1 };
static int stdlib_dir = -1, dist_dir = -1;

static char *find_module(void)
{
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  g_autofree char *dir = self ? g_path_get_dirname(self) : NULL;
  /* the build tree (build/box/box-shell, build/python/), then the
   * installed module */
  char *candidates[] = { dir ? g_build_filename(dir, "..", "python", MODULE_FILE, NULL) : NULL,
                         g_build_filename(BOX_PYTHON_MODULE_DIR, MODULE_FILE, NULL) };
  char *found = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(candidates); i++) {
    if (!found && candidates[i] && access(candidates[i], R_OK) == 0)
      found = realpath(candidates[i], NULL);
    g_free(candidates[i]);
  }
  return found;
}

/* The directory of the C library, where Debian keeps every library
 * libpython and the standard library's extensions need. */
static char *system_lib_dir(void)
{
  Dl_info info;
  if (!dladdr((void *)&strlen, &info) || !info.dli_fname) return NULL;
  g_autofree char *real = realpath(info.dli_fname, NULL);
  return real ? g_path_get_dirname(real) : NULL;
}

/* The program itself when the interpreter is linked into it (box-shell
 * where Debian's static libpython is there: python/meson.build), or NULL:
 * then the module is loaded. */
static void *linked_in(void)
{
  static void *self;
  static bool looked;
  if (!looked) {
    looked = true;
    self = dlopen(NULL, RTLD_NOW);
    if (self && !dlsym(self, BOX_PYTHON_MAIN_SYMBOL)) self = NULL;
  }
  return self;
}

static bool prepared;

bool box_python_prepare(void)
{
  static bool done;
  if (done) return prepared;
  done = true;
  g_autofree char *module_path = linked_in() ? NULL : find_module();
  g_autofree char *sys_dir = system_lib_dir();
  if ((!module_path && !linked_in()) || !sys_dir) return false;
  g_autofree char *mod_dir = module_path ? g_path_get_dirname(module_path) : NULL;
  lib_dirs[0] = mod_dir ? box_host_dir_open(mod_dir) : -1;
  lib_dirs[1] = box_host_dir_open(sys_dir);
  stdlib_dir = box_host_dir_open("/usr/lib/python3.11");
  dist_dir = box_host_dir_open("/usr/lib/python3/dist-packages"); /* optional */
  prepared = (lib_dirs[0] >= 0 || linked_in()) && lib_dirs[1] >= 0 && stdlib_dir >= 0;
  if (prepared) return true;
  for (int i = 0; i < 2; i++)
    if (lib_dirs[i] >= 0) close(lib_dirs[i]);
  if (stdlib_dir >= 0) close(stdlib_dir);
  if (dist_dir >= 0) close(dist_dir);
  lib_dirs[0] = lib_dirs[1] = stdlib_dir = dist_dir = -1;
  return false;
}

/* ---- loading through descriptors ---- */

static bool read_at(int fd, void *buf, size_t len, off_t off)
{
  return pread(fd, buf, len, off) == (ssize_t)len;
}

/* The file offset of virtual address addr, from the loadable segments. */
static bool vaddr_offset(const ElfW(Phdr) * ph, int n, ElfW(Addr) addr, off_t *off)
{
  for (int i = 0; i < n; i++)
    if (ph[i].p_type == PT_LOAD && addr >= ph[i].p_vaddr && addr < ph[i].p_vaddr + ph[i].p_filesz) {
      *off = (off_t)(addr - ph[i].p_vaddr + ph[i].p_offset);
      return true;
    }
  return false;
}

/* The DT_NEEDED names of the shared object fd, in order; NULL if it is
 * not one this process could load. */
static GPtrArray *needed_names(int fd)
{
  ElfW(Ehdr) eh;
  if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
      eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum == 0 || eh.e_phnum > 512)
    return NULL;
  g_autofree ElfW(Phdr) *ph = g_new(ElfW(Phdr), eh.e_phnum);
  if (!read_at(fd, ph, sizeof *ph * eh.e_phnum, (off_t)eh.e_phoff)) return NULL;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i < eh.e_phnum; i++) {
    if (ph[i].p_type != PT_DYNAMIC) continue;
    size_t n = ph[i].p_filesz / sizeof(ElfW(Dyn));
    if (n == 0 || n > 4096) break;
    g_autofree ElfW(Dyn) *dyn = g_new(ElfW(Dyn), n);
    if (!read_at(fd, dyn, n * sizeof *dyn, (off_t)ph[i].p_offset)) break;
    ElfW(Addr) strtab = 0;
    size_t strsz = 0;
    for (size_t k = 0; k < n && dyn[k].d_tag != DT_NULL; k++) {
      if (dyn[k].d_tag == DT_STRTAB) strtab = dyn[k].d_un.d_ptr;
      if (dyn[k].d_tag == DT_STRSZ) strsz = dyn[k].d_un.d_val;
    }
    off_t at;
    if (!strtab || !strsz || strsz > (1u << 24) || !vaddr_offset(ph, eh.e_phnum, strtab, &at))
      break;
    g_autofree char *strings = g_malloc(strsz + 1);
    if (!read_at(fd, strings, strsz, at)) break;
    strings[strsz] = '\0';
    for (size_t k = 0; k < n && dyn[k].d_tag != DT_NULL; k++)
      if (dyn[k].d_tag == DT_NEEDED && dyn[k].d_un.d_val < strsz)
        g_ptr_array_add(names, g_strdup(strings + dyn[k].d_un.d_val));
    return names;
  }
  g_ptr_array_unref(names);
  return NULL;
}

static int match_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  const char *slash = strrchr(info->dlpi_name, '/');
  return strcmp(slash ? slash + 1 : info->dlpi_name, data) == 0;
}

static bool is_loaded(const char *soname)
{
  return dl_iterate_phdr(match_loaded, (void *)soname) != 0;
}

/* Loads file of dir after what it needs (depth bounds a cycle); NULL or
 * why not. */
static char *load_in(int dir, const char *file, int depth)
{
  if (depth > 32) return g_strdup_printf("%s: dependencies nested too deeply", file);
  int fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return g_strdup_printf("%s: %s", file, g_strerror(errno));
  GPtrArray *needed = needed_names(fd);
  close(fd);
  if (!needed) return g_strdup_printf("%s: not a shared object this process can load", file);
  char *why = NULL;
  for (guint i = 0; i < needed->len && !why; i++) {
    const char *name = g_ptr_array_index(needed, i);
    if (is_loaded(name)) continue;
    int from = -1;
    for (size_t d = 0; d < G_N_ELEMENTS(lib_dirs) && from < 0; d++)
      if (lib_dirs[d] >= 0 && faccessat(lib_dirs[d], name, R_OK, 0) == 0) from = lib_dirs[d];
    why = from < 0
            ? g_strdup_printf("%s: cannot find %s in the host's library directories", file, name)
            : load_in(from, name, depth + 1);
  }
  g_ptr_array_unref(needed);
  if (why) return why;
  g_autofree char *rel = g_strconcat("./", file, NULL);
  /* global: the standard library's extensions use libpython's symbols
   * without naming it */
  if (fchdir(dir) != 0 || !dlopen(rel, RTLD_NOW | RTLD_GLOBAL)) {
    const char *e = dlerror();
    return g_strdup(e ? e : g_strerror(errno));
  }
  return NULL;
}

typedef struct {
  int dir;
  const char *file;
} LoadJob;

/* In a thread whose working directory is its own: the command's could
 * not be entered again (the worker may lack the right to chdir into the
 * mount's directories). */
static gpointer load_thread(gpointer data)
{
  LoadJob *job = data;
  if (unshare(CLONE_FS) != 0)
    return g_strdup_printf("%s: working directory: %s", job->file, g_strerror(errno));
  return load_in(job->dir, job->file, 0);
}

static char *load_library(void *data, int dir, const char *file)
{
  (void)data;
  LoadJob job = { dir, file };
  char *why = g_thread_join(g_thread_new("box-python-load", load_thread, &job));
  char *r = why ? strdup(why) : NULL;
  g_free(why);
  return r;
}

static char *last_denial(void *data)
{
  BoxCmd *c = data;
  const BoxShellHost *h = c ? c->sh->host : NULL;
  return h && h->last_denial ? h->last_denial(h->data) : NULL;
}

/* The interpreter's threads share the fast path's state (io.c): one call
 * at a time, and a thread that finds it busy opens through the mount
 * instead of waiting (so a child forked while another thread held it,
 * as multiprocessing forks, never waits for a thread it does not have). */
static int open_read(void *data, const char *path, int flags, char **denial)
{
  (void)data;
  static GMutex lock;
  *denial = NULL;
  if (!g_mutex_trylock(&lock)) return -2;
  char *text = NULL;
  int fd = box_open_fast(path, flags, &text);
  int err = errno;
  g_mutex_unlock(&lock);
  *denial = text ? strdup(text) : NULL;
  g_free(text);
  errno = err;
  return fd;
}

/* In a child the interpreter forked for the route: a copy of the Shell as
 * it was when python3 started, on the child's fds 0, 1, 2 (as lua's), run
 * by the launcher so that a python3 in the text starts afresh. */
static int shell_run(void *data, const char *text)
{
  BoxCmd *c = data;
  int status;
  if (box_python_launcher_run(text, &status)) return status;
  return box_run_text(c->sh, text, 0, 1, 2);
}

/* The egress gateway (BOX_GATEWAY_PROXY, BOX_GATEWAY_CA of the worker's
 * environment), or NULL; noted afresh for each command, since a worker
 * asked for before the gateway started learns it with its command. */
static char *gateway_proxy, *gateway_ca;

void box_python_note_gateway(void)
{
  const char *proxy = getenv("BOX_GATEWAY_PROXY"), *ca = getenv("BOX_GATEWAY_CA");
  g_free(gateway_proxy);
  g_free(gateway_ca);
  gateway_proxy = proxy && *proxy ? g_strdup(proxy) : NULL;
  gateway_ca = ca && *ca ? g_strdup(ca) : NULL;
}

/* Sockets reach nothing but the gateway's relay (the worker's network
 * namespace has no route), so the interpreter gets the variables a
 * contained tool gets (tools/env.c), which urllib, http.client's users
 * and requests read: each request then goes to the gateway, which decides
 * it as `http:request`. */
static void export_gateway(void)
{
  if (!gateway_proxy) return;
  static const char *const names[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy" };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) setenv(names[i], gateway_proxy, 1);
  setenv("NO_PROXY", "127.0.0.1,localhost", 1);
  setenv("no_proxy", "127.0.0.1,localhost", 1);
}

/* The module once loaded and warmed by box_python_warm_up, or NULL. */
static void *warm_lib;

void box_python_warm_up(bool usr_bare)
{
  /* kept for the process's life: the warm interpreter holds it */
  static BoxPythonHost host = { .shell_run = shell_run,
                                .last_denial = last_denial,
                                .open_read = open_read };
  if (warm_lib || !box_python_prepare()) return;
  host.stdlib_dir = stdlib_dir;
  host.dist_dir = dist_dir;
  host.load_library = load_library;
  host.usr_bare = usr_bare;
  void *lib = linked_in();
  if (!lib) {
    char *why = load_library(NULL, lib_dirs[0], MODULE_FILE);
    lib = why ? NULL : dlopen("./" MODULE_FILE, RTLD_NOW | RTLD_NOLOAD);
    free(why);
  }
  /* as for a cold start (box_python_run): pthread_exit's libgcc_s */
  if (lib && !is_loaded(LIBGCC_S)) free(load_library(NULL, lib_dirs[1], LIBGCC_S));
  void *sym = lib ? dlsym(lib, BOX_PYTHON_WARM_SYMBOL) : NULL;
  BoxPythonWarm *warm_fn;
  memcpy(&warm_fn, &sym, sizeof sym);
  if (sym && warm_fn(&host)) warm_lib = lib;
}

/* The path the program runs as (sys.executable, beside which site looks
 * for a venv's pyvenv.cfg): a virtualenv's python run by path (script.c),
 * or the one on PATH once its activate script has put the venv's bin/
 * first; NULL: /usr/bin/python3. */
static char *run_as(BoxCmd *c)
{
  if (c->sh->python_as) return g_strdup(c->sh->python_as);
  const char *venv = box_var_get(c->sh, "VIRTUAL_ENV");
  const char *path = box_var_get(c->sh, "PATH");
  if (!venv || venv[0] != '/' || !path || strchr(c->argv[0], '/')) return NULL;
  g_autofree char *bin = g_build_filename(venv, "bin", NULL);
  size_t n = strlen(bin);
  if (strncmp(path, bin, n) != 0 || (path[n] != ':' && path[n] != '\0')) return NULL;
  char *exe = g_build_filename(bin, c->argv[0], NULL);
  if (box_links_to_host_python(exe)) return exe;
  g_free(exe);
  return NULL;
}

int box_python_run(BoxCmd *c, int argc, char **argv, char **error)
{
  void *lib = warm_lib;
  BoxPythonHost host = { .stdlib_dir = -1,
                         .dist_dir = -1,
                         .shell_run = shell_run,
                         .last_denial = last_denial,
                         .open_read = open_read,
                         .gateway_ca = gateway_ca,
                         .data = c };
  g_autofree char *exe = run_as(c);
  host.executable = exe;
  export_gateway();
  if (lib) {
    host.stdlib_dir = stdlib_dir;
    host.dist_dir = dist_dir;
    host.load_library = load_library;
  } else if (prepared) {
    char *why = linked_in() ? NULL : load_library(NULL, lib_dirs[0], MODULE_FILE);
    if (why) {
      *error = why;
      return -1;
    }
    /* The C library loads libgcc_s by name when a thread ends through
     * pthread_exit (a daemon thread at the interpreter's exit), which in
     * the mount finds nothing and aborts: it is loaded ahead, where it
     * exists. */
    if (!is_loaded(LIBGCC_S)) free(load_library(NULL, lib_dirs[1], LIBGCC_S));
    /* loaded by the thread under this name: found without a search */
    lib = linked_in() ? linked_in() : dlopen("./" MODULE_FILE, RTLD_NOW | RTLD_NOLOAD);
    host.stdlib_dir = stdlib_dir;
    host.dist_dir = dist_dir;
    host.load_library = load_library;
  } else if (!(lib = linked_in())) {
    g_autofree char *path = find_module();
    lib = path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (!path) {
      *error = strdup(MODULE_FILE ": not installed");
      return -1;
    }
  }
  void *sym = lib ? dlsym(lib, BOX_PYTHON_MAIN_SYMBOL) : NULL;
  if (!sym) {
    const char *e = dlerror();
    *error = strdup(e ? e : MODULE_FILE ": cannot be loaded");
    return -1;
  }
  BoxPythonMain *main_fn;
  memcpy(&main_fn, &sym, sizeof sym);
  box_python_launcher_child();
  int status = main_fn(argc, argv, &host);
  box_python_launcher_stop();
  return status;
}
