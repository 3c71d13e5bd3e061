/* box_dir.c — the box directory (spec/runtime.md §3): its safety checks,
 * the box's id, the lock one run holds, the record of the directories a
 * run mounts on, and private/live for `box mount`. */
#include "box/box-private.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static bool mkdir_0700(const char *path, GError **error)
{
  if (mkdir(path, 0700) != 0 && errno != EEXIST) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED, "cannot create %s: %s", path,
                g_strerror(errno));
    return false;
  }
  return true;
}

static char *mint_box_id(void)
{
  guint8 raw[8];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read(fd, raw, sizeof raw) != sizeof raw) {
    for (size_t i = 0; i < sizeof raw; i++) raw[i] = (guint8)g_random_int();
  }
  if (fd >= 0) close(fd);
  GString *s = g_string_new("box-");
  for (size_t i = 0; i < sizeof raw; i++) g_string_append_printf(s, "%02x", raw[i]);
  return g_string_free(s, FALSE);
}

static bool valid_box_id(const char *id)
{
  if (strlen(id) != 20 || strncmp(id, "box-", 4) != 0) return false;
  for (const char *p = id + 4; *p; p++)
    if (!g_ascii_isxdigit(*p) || g_ascii_isupper(*p)) return false;
  return true;
}

char *boxd_stored_box_id(const char *box_dir)
{
  g_autofree char *id_file = g_build_filename(box_dir, "private", "box-id", NULL);
  char *stored = NULL;
  if (!g_file_get_contents(id_file, &stored, NULL, NULL)) return NULL;
  g_strstrip(stored);
  if (valid_box_id(stored)) return stored;
  g_free(stored);
  return NULL;
}

char *boxd_mint_box_id(void)
{
  return mint_box_id();
}

/* Creates or reopens the box directory; returns the lock fd. */
int boxd_box_dir_prepare(Boxd *d, GError **error)
{
  const char *dir = d->config->box_dir;
  g_autofree char *parent = g_path_get_dirname(dir);
  struct stat st;
  if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "box directory %s: the box directory's parent does not exist; create it, because "
                "Box creates no directory above the one `box_dir` names",
                dir);
    return -1;
  }
  bool fresh = false;
  if (lstat(dir, &st) != 0) {
    if (mkdir(dir, 0700) != 0) {
      g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                  "cannot create box directory %s: %s", dir, g_strerror(errno));
      return -1;
    }
    fresh = true;
    if (lstat(dir, &st) != 0) return -1;
  }
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "unsafe box directory %s: it is not a directory", dir);
    return -1;
  }
  if (st.st_uid != getuid()) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "unsafe box directory %s: it is not owned by the current user", dir);
    return -1;
  }
  if ((st.st_mode & 07777) != 0700) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "unsafe box directory %s: its mode is not 0700", dir);
    return -1;
  }
  g_autofree char *private_dir = g_build_filename(dir, "private", NULL);
  g_autofree char *id_file = g_build_filename(private_dir, "box-id", NULL);
  g_autofree char *stored = NULL;
  if (!fresh && !g_file_get_contents(id_file, &stored, NULL, NULL)) {
    g_autoptr(GDir) gd = g_dir_open(dir, 0, NULL);
    if (gd && g_dir_read_name(gd)) {
      g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                  "unsafe box directory %s: it is not empty and contains no valid private record",
                  dir);
      return -1;
    }
  }
  if (stored) {
    g_strstrip(stored);
    if (!valid_box_id(stored)) {
      g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                  "unsafe box directory %s: it is not empty and contains no valid private record",
                  dir);
      return -1;
    }
  }
  const char *children[] = { "bin", "run", "private", "trust", NULL };
  for (int i = 0; children[i]; i++) {
    g_autofree char *p = g_build_filename(dir, children[i], NULL);
    if (!mkdir_0700(p, error)) return -1;
  }
  g_autofree char *telemetry = g_build_filename(private_dir, "telemetry", NULL);
  if (!mkdir_0700(telemetry, error)) return -1;
  g_autofree char *lock_path = g_build_filename(private_dir, ".lock", NULL);
  int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED, "cannot open %s: %s", lock_path,
                g_strerror(errno));
    return -1;
  }
  /* A record lock, not flock: it is this process's own, so no process
   * boxd forks or clones (a tool's PID 1 holds a copy of every descriptor
   * until its set-up ends) keeps the box locked after boxd is gone. */
  struct flock whole = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  if (fcntl(lock, F_SETLK, &whole) != 0) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "box %s is already running, and one run owns a box at a time; wait for that run "
                "to exit, or start a configuration with a different `box_dir`",
                stored ? stored : "(unnamed)");
    close(lock);
    return -1;
  }
  if (stored) {
    d->box_id = g_steal_pointer(&stored);
  } else {
    d->box_id = mint_box_id();
    g_autofree char *line = g_strconcat(d->box_id, "\n", NULL);
    if (!g_file_set_contents_full(id_file, line, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, error)) {
      close(lock);
      return -1;
    }
  }
  return lock;
}

/* The empty directories a run mounts on are named in private/ so that the
 * next run of this box removes them if boxd was killed: nobody else can be
 * using them while this box's lock is held. */
static char *dirs_record_path(Boxd *d)
{
  return g_build_filename(d->config->box_dir, "private", "mount-dirs", NULL);
}

void boxd_mount_dirs_clear_stale(Boxd *d)
{
  g_autofree char *path = dirs_record_path(d);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    g_autofree char *base = g_path_get_basename(*l);
    if (g_str_has_prefix(base, "boxfs-mnt-") || g_str_has_prefix(base, "boxfs-view-")) rmdir(*l);
  }
  unlink(path);
}

void boxd_mount_dirs_record(Boxd *d)
{
  if (!d->mountpoint || !d->staging_dir) return;
  g_autofree char *path = dirs_record_path(d);
  g_autofree char *text = g_strdup_printf("%s\n%s\n", d->mountpoint, d->staging_dir);
  g_file_set_contents_full(path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, NULL);
}

void boxd_mount_dirs_forget(Boxd *d)
{
  g_autofree char *path = dirs_record_path(d);
  unlink(path);
}

/* private/live: what `box mount` shows of a running box: box.json (its
 * roots, workspace and log) and one <N>.json per running command (written
 * by the vfs).  Cleared at start (a killed run's) and at teardown. */
void boxd_live_clear(const char *dir, bool remove_dir)
{
  if (!dir) return;
  GDir *g = g_dir_open(dir, 0, NULL);
  const char *e;
  while (g && (e = g_dir_read_name(g)) != NULL) {
    g_autofree char *f = g_build_filename(dir, e, NULL);
    unlink(f);
  }
  if (g) g_dir_close(g);
  if (remove_dir) rmdir(dir);
}

char *boxd_live_prepare(Boxd *d)
{
  char *dir = g_build_filename(d->config->box_dir, "private", "live", NULL);
  boxd_live_clear(dir, false);
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    g_free(dir);
    return NULL;
  }
  json_object *o = json_object_new_object();
  json_object_object_add(o, "pid", json_object_new_int(getpid()));
  json_object_object_add(o, "workspace", json_object_new_string(d->workspace));
  json_object_object_add(o, "operator_home", json_object_new_string(d->operator_home));
  json_object_object_add(o, "agent_home", json_object_new_string(d->agent_home));
  json_object *roots = json_object_new_array();
  for (int i = 0; d->roots[i]; i++)
    json_object_array_add(roots, json_object_new_string(d->roots[i]));
  json_object_object_add(o, "roots", roots);
  g_autofree char *log =
    g_build_filename(d->config->box_dir, "private", "telemetry", "records.jsonl", NULL);
  json_object_object_add(o, "decision_log", json_object_new_string(log));
  g_autofree char *path = g_build_filename(dir, "box.json", NULL);
  g_file_set_contents_full(path, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), -1,
                           G_FILE_SET_CONTENTS_CONSISTENT, 0600, NULL);
  json_object_put(o);
  return dir;
}
