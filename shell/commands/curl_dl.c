/* curl_dl.c — open libcurl on demand and fill the table curl.c calls
 * through (see curl_dl.h for why box-shell does not link it). */
#define BOX_CURL_DL_IMPL 1
#include "shell/commands/curl_dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <link.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/shell-private.h"

static BoxCurlApi api;
static const char *load_error;

/* dlsym returns void *; converting it to a function pointer goes through
 * memcpy so the code stays clean under -Wpedantic. */
static bool resolve(void *lib, const char *name, void *slot, bool required)
{
  void *sym = dlsym(lib, name);
  if (!sym) {
    if (required) load_error = g_strdup_printf("%s: missing symbol %s", "libcurl.so.4", name);
    return !required;
  }
  memcpy(slot, &sym, sizeof sym);
  return true;
}

/* ---- loading in a worker ----
 *
 * Mapped in the zygote, libcurl and its ~30 libraries are ~155 more
 * mappings in every worker, and fork copies each one: ~0.3 ms of CPU per
 * command that only `curl` needs.  So the zygote maps nothing: it learns
 * once which files libcurl needs (box_curl_prepare) and keeps a descriptor
 * for each directory holding them, which its workers inherit.  A worker's
 * first `curl` opens the files through those descriptors, dependencies
 * first, so that each DT_NEEDED name is matched by soname against a
 * library already loaded and the dynamic linker never searches its paths,
 * which do not exist inside the box's mount. */
typedef struct {
  int dir;    /* index into dirs */
  char *file; /* name inside it, symlinks resolved */
} Prepared;
static Prepared *prepared;
static size_t n_prepared;
static int *dirs;
static size_t n_dirs;

static const char *dyn_string(uintptr_t strtab, const ElfW(Dyn) * d)
{
  return (const char *)(strtab + d->d_un.d_val);
}

static uintptr_t dyn_strtab(const struct link_map *m)
{
  for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++)
    if (d->d_tag == DT_STRTAB) {
      uintptr_t p = d->d_un.d_ptr;
      /* Some dynamic linkers relocate the entry in place, some do not. */
      return p < m->l_addr ? p + m->l_addr : p;
    }
  return 0;
}

static bool names_object(const struct link_map *m, const char *needed)
{
  const char *base = strrchr(m->l_name, '/');
  if (strcmp(base ? base + 1 : m->l_name, needed) == 0) return true;
  uintptr_t strtab = dyn_strtab(m);
  if (!strtab) return false;
  for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++)
    if (d->d_tag == DT_SONAME && strcmp(dyn_string(strtab, d), needed) == 0) return true;
  return false;
}

/* Post-order: an object is written after everything it needs. */
static void emit(struct link_map *m, struct link_map *head, GHashTable *old, GHashTable *done,
                 FILE *out)
{
  if (g_hash_table_contains(old, m) || g_hash_table_contains(done, m)) return;
  g_hash_table_add(done, m);
  uintptr_t strtab = dyn_strtab(m);
  for (const ElfW(Dyn) *d = m->l_ld; strtab && d->d_tag != DT_NULL; d++) {
    if (d->d_tag != DT_NEEDED) continue;
    const char *needed = dyn_string(strtab, d);
    for (struct link_map *o = head; o; o = o->l_next)
      if (o != m && o->l_name[0] == '/' && names_object(o, needed)) {
        emit(o, head, old, done, out);
        break;
      }
  }
  if (m->l_name[0] == '/') fprintf(out, "%s\n", m->l_name);
}

/* In a throwaway child, so the zygote itself never maps libcurl. */
static void list_libraries(int fd)
{
  FILE *out = fdopen(fd, "w");
  struct link_map *head = NULL;
  void *self = dlopen(NULL, RTLD_NOW);
  if (!out || !self || dlinfo(self, RTLD_DI_LINKMAP, &head) != 0) _exit(1);
  while (head->l_prev) head = head->l_prev;
  GHashTable *old = g_hash_table_new(NULL, NULL);
  for (struct link_map *m = head; m; m = m->l_next) g_hash_table_add(old, m);
  void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  struct link_map *curl = NULL;
  if (!lib || dlinfo(lib, RTLD_DI_LINKMAP, &curl) != 0) _exit(1);
  emit(curl, head, old, g_hash_table_new(NULL, NULL), out);
  _exit(fclose(out) == 0 ? 0 : 1);
}

static int dir_index(GPtrArray *names, const char *dir)
{
  for (guint i = 0; i < names->len; i++)
    if (strcmp(g_ptr_array_index(names, i), dir) == 0) return (int)i;
  int fd = box_host_dir_open(dir);
  if (fd < 0) return -1;
  g_ptr_array_add(names, g_strdup(dir));
  dirs = g_renew(int, dirs, n_dirs + 1);
  dirs[n_dirs++] = fd;
  return (int)n_dirs - 1;
}

bool box_curl_prepare(void)
{
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return false;
  pid_t pid = fork();
  if (pid < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    return false;
  }
  if (pid == 0) {
    close(pipefd[0]);
    list_libraries(pipefd[1]);
  }
  close(pipefd[1]);
  GString *text = g_string_new(NULL);
  char buf[4096];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    g_string_append_len(text, buf, n);
  }
  close(pipefd[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && text->len > 0;
  g_auto(GStrv) lines = g_strsplit(text->str, "\n", -1);
  g_string_free(text, TRUE);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (char **l = lines; ok && *l && **l; l++) {
    char *real = realpath(*l, NULL);
    if (!real) {
      ok = false;
      break;
    }
    char *slash = strrchr(real, '/');
    *slash = '\0';
    int d = dir_index(names, real[0] ? real : "/");
    if (d < 0) {
      free(real);
      ok = false;
      break;
    }
    prepared = g_renew(Prepared, prepared, n_prepared + 1);
    prepared[n_prepared].dir = d;
    prepared[n_prepared].file = g_strdup(slash + 1);
    n_prepared++;
    free(real);
  }
  g_ptr_array_unref(names);
  if (!ok) {
    for (size_t i = 0; i < n_dirs; i++) close(dirs[i]);
    for (size_t i = 0; i < n_prepared; i++) g_free(prepared[i].file);
    g_clear_pointer(&prepared, g_free);
    g_clear_pointer(&dirs, g_free);
    n_prepared = n_dirs = 0;
  }
  return ok;
}

/* Opens the prepared files: a path with a slash is opened as it is,
 * relative to the working directory, which is each file's directory in
 * turn.  That happens in a thread with a working directory of its own:
 * the Shell's could not be entered again (a worker may lack the right to
 * chdir into the mount's directories).  Returns libcurl's handle (the last
 * file). */
static gpointer open_prepared_main(gpointer data)
{
  (void)data;
  if (unshare(CLONE_FS) != 0) {
    load_error = g_strdup_printf("libcurl.so.4: working directory: %s", box_strerror(errno));
    return NULL;
  }
  void *lib = NULL;
  for (size_t i = 0; i < n_prepared; i++) {
    if (fchdir(dirs[prepared[i].dir]) != 0) {
      load_error = g_strdup_printf("%s: %s", prepared[i].file, box_strerror(errno));
      return NULL;
    }
    g_autofree char *path = g_strconcat("./", prepared[i].file, NULL);
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      load_error = g_strdup(why ? why : prepared[i].file);
      return NULL;
    }
  }
  return lib;
}

static void *open_prepared(void)
{
  void *lib = g_thread_join(g_thread_new("box-curl-load", open_prepared_main, NULL));
  /* Loaded or not, the host's directories are not needed any more. */
  for (size_t i = 0; i < n_dirs; i++) close(dirs[i]);
  n_dirs = 0;
  return lib;
}

static bool load(void)
{
  void *lib = n_prepared ? open_prepared() : dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!lib && load_error) return false;
  if (!lib) {
    const char *why = dlerror();
    load_error = g_strdup(why ? why : "libcurl.so.4: cannot be loaded");
    return false;
  }
  bool ok = resolve(lib, "curl_global_init", &api.global_init, true) &&
            resolve(lib, "curl_easy_init", &api.easy_init, true) &&
            resolve(lib, "curl_easy_setopt", &api.easy_setopt, true) &&
            resolve(lib, "curl_easy_getinfo", &api.easy_getinfo, true) &&
            resolve(lib, "curl_easy_perform", &api.easy_perform, true) &&
            resolve(lib, "curl_easy_cleanup", &api.easy_cleanup, true) &&
            resolve(lib, "curl_easy_strerror", &api.easy_strerror, true) &&
            resolve(lib, "curl_free", &api.free, true) &&
            resolve(lib, "curl_mime_init", &api.mime_init, true) &&
            resolve(lib, "curl_mime_free", &api.mime_free, true) &&
            resolve(lib, "curl_mime_addpart", &api.mime_addpart, true) &&
            resolve(lib, "curl_mime_name", &api.mime_name, true) &&
            resolve(lib, "curl_mime_filename", &api.mime_filename, true) &&
            resolve(lib, "curl_mime_type", &api.mime_type, true) &&
            resolve(lib, "curl_mime_data", &api.mime_data, true) &&
            resolve(lib, "curl_slist_append", &api.slist_append, true) &&
            resolve(lib, "curl_slist_free_all", &api.slist_free_all, true) &&
            resolve(lib, "curl_url", &api.url, true) &&
            resolve(lib, "curl_url_cleanup", &api.url_cleanup, true) &&
            resolve(lib, "curl_url_get", &api.url_get, true) &&
            resolve(lib, "curl_url_set", &api.url_set, true) &&
            /* searched in libcurl's dependencies too */
            resolve(lib, "OPENSSL_init_crypto", &api.openssl_init_crypto, false);
  if (!ok) {
    dlclose(lib);
    return false;
  }
  return true; /* kept open for the life of the process */
}

const BoxCurlApi *box_curl_api(const char **error)
{
  static gsize state = 0; /* 1 = loaded, 2 = failed */
  if (g_once_init_enter(&state)) g_once_init_leave(&state, load() ? 1 : 2);
  if (state == 1) return &api;
  if (error) *error = load_error;
  return NULL;
}

bool box_curl_preload(void)
{
  return box_curl_api(NULL) != NULL;
}
