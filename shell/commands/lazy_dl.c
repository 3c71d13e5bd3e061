/* lazy_dl.c — open a library on first use, also inside the box's mount
 * (see lazy_dl.h). */
#include "shell/commands/lazy_dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

struct BoxDlFile {
  int dir;    /* index into dirs */
  char *file; /* name inside it, symlinks resolved */
};

/* dlsym returns void *; converting it to a function pointer goes through
 * memcpy so the code stays clean under -Wpedantic. */
static bool resolve(BoxDl *dl, void *lib)
{
  for (size_t i = 0; i < dl->n_symbols; i++) {
    const BoxDlSymbol *s = &dl->symbols[i];
    void *sym = dlsym(lib, s->name);
    if (!sym && s->required) {
      dl->error = g_strdup_printf("%s: missing symbol %s", dl->soname, s->name);
      return false;
    }
    memcpy((char *)dl->table + s->offset, &sym, sizeof sym);
  }
  return true;
}

/* ---- learning which files the library needs ---- */

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

/* In a throwaway child, so the zygote itself never maps the library.
 * Writes the data file's path (an empty line if none), then the files to
 * open in order. */
static void list_files(BoxDl *dl, int fd)
{
  FILE *out = fdopen(fd, "w");
  struct link_map *head = NULL;
  void *self = dlopen(NULL, RTLD_NOW);
  if (!out || !self || dlinfo(self, RTLD_DI_LINKMAP, &head) != 0) _exit(1);
  while (head->l_prev) head = head->l_prev;
  GHashTable *old = g_hash_table_new(NULL, NULL);
  for (struct link_map *m = head; m; m = m->l_next) g_hash_table_add(old, m);
  void *lib = dlopen(dl->soname, RTLD_NOW | RTLD_LOCAL);
  struct link_map *map = NULL;
  if (!lib || dlinfo(lib, RTLD_DI_LINKMAP, &map) != 0) _exit(1);
  char *data = dl->data_path ? dl->data_path(lib) : NULL;
  if (dl->data_path && !data) _exit(1);
  fprintf(out, "%s\n", data ? data : "");
  emit(map, head, old, g_hash_table_new(NULL, NULL), out);
  _exit(fclose(out) == 0 ? 0 : 1);
}

/* path's directory and base name, symlinks resolved (g_free both). */
static bool split_real(const char *path, char **dir, char **base)
{
  char *real = realpath(path, NULL);
  if (!real) return false;
  char *slash = strrchr(real, '/');
  *base = g_strdup(slash + 1);
  *dir = slash == real ? g_strdup("/") : g_strndup(real, slash - real);
  free(real);
  return true;
}

static bool open_data(BoxDl *dl, const char *path)
{
  g_autofree char *dir = NULL, *base = NULL;
  if (!split_real(path, &dir, &base)) return false;
  int d = box_host_dir_open(dir);
  if (d < 0) return false;
  dl->data_fd = box_fd_own(openat(d, base, O_RDONLY | O_CLOEXEC));
  close(d);
  return dl->data_fd >= 0;
}

static int dir_index(BoxDl *dl, GPtrArray *names, const char *dir)
{
  for (guint i = 0; i < names->len; i++)
    if (strcmp(g_ptr_array_index(names, i), dir) == 0) return (int)i;
  int fd = box_host_dir_open(dir);
  if (fd < 0) return -1;
  g_ptr_array_add(names, g_strdup(dir));
  dl->dirs = g_renew(int, dl->dirs, dl->n_dirs + 1);
  dl->dirs[dl->n_dirs++] = fd;
  return (int)dl->n_dirs - 1;
}

static void forget_files(BoxDl *dl)
{
  for (size_t i = 0; i < dl->n_dirs; i++) close(dl->dirs[i]);
  for (size_t i = 0; i < dl->n_files; i++) g_free(dl->files[i].file);
  g_clear_pointer(&dl->files, g_free);
  g_clear_pointer(&dl->dirs, g_free);
  dl->n_files = dl->n_dirs = 0;
}

static char *child_output(BoxDl *dl)
{
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return NULL;
  pid_t pid = fork();
  if (pid < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    return NULL;
  }
  if (pid == 0) {
    close(pipefd[0]);
    list_files(dl, pipefd[1]);
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
  int st = -1; /* not an exit, should waitpid fail */
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  /* the data line and at least one file */
  const char *nl = strchr(text->str, '\n');
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && nl && nl[1]) return g_string_free(text, FALSE);
  g_string_free(text, TRUE);
  return NULL;
}

static bool learn(BoxDl *dl)
{
  g_autofree char *text = child_output(dl);
  if (!text) return false;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  if (lines[0][0] && !open_data(dl, lines[0])) return false;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  bool ok = true;
  for (char **l = lines + 1; ok && *l && **l; l++) {
    g_autofree char *dir = NULL, *base = NULL;
    int d = split_real(*l, &dir, &base) ? dir_index(dl, names, dir) : -1;
    if (d < 0) {
      ok = false;
      break;
    }
    dl->files = g_renew(BoxDlFile, dl->files, dl->n_files + 1);
    dl->files[dl->n_files].dir = d;
    dl->files[dl->n_files].file = g_steal_pointer(&base);
    dl->n_files++;
  }
  g_ptr_array_unref(names);
  if (!ok) {
    forget_files(dl);
    if (dl->data_fd >= 0) close(dl->data_fd);
    dl->data_fd = -1;
  }
  return ok;
}

bool box_dl_prepare(BoxDl *dl)
{
  return learn(dl) || box_dl_preload(dl);
}

bool box_dl_preload(BoxDl *dl)
{
  if (dl->n_files > 0) return true;
  if (!box_dl_api(dl, NULL)) return false;
  /* The worker is about to be rooted in the mount: keep the data file
   * within reach as a zygote does. */
  if (dl->data_path && dl->data_fd < 0) {
    g_autofree char *data = dl->data_path(dl->handle);
    if (data) open_data(dl, data);
  }
  return true;
}

/* ---- loading ---- */

/* Opens the prepared files: a path with a slash is opened as it is,
 * relative to the working directory, which is each file's directory in
 * turn.  That happens in a thread with a working directory of its own:
 * the Shell's could not be entered again (a worker may lack the right to
 * chdir into the mount's directories).  Returns the library's handle (the
 * last file). */
static gpointer open_prepared_main(gpointer data)
{
  BoxDl *dl = data;
  if (unshare(CLONE_FS) != 0) {
    dl->error = g_strdup_printf("%s: working directory: %s", dl->soname, box_strerror(errno));
    return NULL;
  }
  void *lib = NULL;
  for (size_t i = 0; i < dl->n_files; i++) {
    if (fchdir(dl->dirs[dl->files[i].dir]) != 0) {
      dl->error = g_strdup_printf("%s: %s", dl->files[i].file, box_strerror(errno));
      return NULL;
    }
    g_autofree char *path = g_strconcat("./", dl->files[i].file, NULL);
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      dl->error = g_strdup(why ? why : dl->files[i].file);
      return NULL;
    }
  }
  return lib;
}

static void *open_prepared(BoxDl *dl)
{
  void *lib = g_thread_join(g_thread_new("box-dl-load", open_prepared_main, dl));
  /* Loaded or not, the host's directories are not needed any more. */
  forget_files(dl);
  return lib;
}

static bool load(BoxDl *dl)
{
  void *lib = dl->n_files ? open_prepared(dl) : dlopen(dl->soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib && dl->error) return false;
  if (!lib) {
    const char *why = dlerror();
    dl->error = g_strdup(why ? why : dl->soname);
    return false;
  }
  if (!resolve(dl, lib)) {
    dlclose(lib);
    return false;
  }
  dl->handle = lib; /* kept open for the life of the process */
  return true;
}

const void *box_dl_api(BoxDl *dl, const char **error)
{
  if (g_once_init_enter(&dl->loaded)) g_once_init_leave(&dl->loaded, load(dl) ? 1 : 2);
  if (dl->loaded == 1) return dl->table;
  if (error) *error = dl->error;
  return NULL;
}

const void *box_dl_command(BoxDl *dl, BoxCmd *c, const char *cmd)
{
  const char *error = NULL;
  const void *api = box_dl_api(dl, &error);
  if (!api) bx_err(c, cmd, "%s", error ? error : dl->soname);
  return api;
}

int box_dl_data_fd(const BoxDl *dl)
{
  return dl->data_fd;
}
