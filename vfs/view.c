/* view.c — what boxd publishes for `box mount` (live_dir), and the
 * operator's view of it (.box/commands/<N>). */
#include "vfs/vfs-private.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- what boxd publishes for `box mount` (live_dir) ---- */

static char *live_file(BoxVfs *v, int command)
{
  char name[32];
  snprintf(name, sizeof name, "%d.json", command);
  return g_build_filename(v->live_dir, name, NULL);
}

void box_vfs_command_describe(BoxVfs *v, int command, const char *text)
{
  g_mutex_lock(&v->lock);
  Command *c = vfs_command(v, command);
  json_object *o = NULL;
  if (c) {
    g_free(c->text);
    c->text = g_strdup(text ? text : "");
    o = json_object_new_object();
    json_object_object_add(o, "command", json_object_new_int(command));
    json_object_object_add(o, "text", json_object_new_string(c->text));
    json_object_object_add(o, "pid", json_object_new_int(c->pid));
    char *ram = c->area == v->box_area && v->box_area >= 0 ? g_strdup("/ram/box")
                                                           : g_strdup_printf("/ram/c%d", c->area);
    json_object_object_add(o, "ram", json_object_new_string(ram));
    json_object_object_add(o, "ram_lifetime",
                           json_object_new_string(v->box_area >= 0 ? "box" : "command"));
    json_object_object_add(o, "ram_max_bytes", json_object_new_int64((int64_t)v->ram_max_bytes));
    json_object_object_add(o, "ram_max_inodes", json_object_new_int64(v->ram_max_inodes));
    json_object_object_add(o, "started_unix_ms", json_object_new_int64(g_get_real_time() / 1000));
    g_free(ram);
  }
  g_mutex_unlock(&v->lock);
  if (!o || !v->live_dir) {
    if (o) json_object_put(o);
    return;
  }
  /* written whole under a temporary name, then renamed: a reader never
   * sees half a record */
  char *path = live_file(v, command);
  char *tmp = g_strconcat(path, ".tmp", NULL);
  const char *txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
  bool published = false;
  if (g_file_set_contents_full(tmp, txt, -1, G_FILE_SET_CONTENTS_NONE, 0600, NULL)) {
    published = rename(tmp, path) == 0;
    if (!published) unlink(tmp);
  }
  g_mutex_lock(&v->lock);
  if (published && (c = vfs_command(v, command))) c->live_published = true;
  g_mutex_unlock(&v->lock);
  json_object_put(o);
  g_free(tmp);
  g_free(path);
}

/* published: whether the command's record was written.  Most commands
 * end before boxd describes them (worker_command.c): they have no file,
 * and an unlink would only walk the box directory's path to fail. */
void vfs_live_withdraw(BoxVfs *v, int command, bool published)
{
  if (!v->live_dir || !published) return;
  char *path = live_file(v, command);
  unlink(path);
  g_free(path);
}

/* ---- the operator's view (view_live_dir): .box/commands/<N> ---- */

GPtrArray *vfs_view_command_names(BoxVfs *v)
{
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GDir *d = v->view_live_dir ? g_dir_open(v->view_live_dir, 0, NULL) : NULL;
  const char *e;
  while (d && (e = g_dir_read_name(d)) != NULL) {
    if (!g_str_has_suffix(e, ".json")) continue;
    size_t n = strlen(e) - 5;
    bool digits = n > 0;
    for (size_t i = 0; i < n; i++)
      if (!g_ascii_isdigit(e[i])) digits = false;
    if (digits) g_ptr_array_add(names, g_strndup(e, n));
  }
  if (d) g_dir_close(d);
  return names;
}

/* The worker's working directory now, as the Shell spells it: its cwd is a
 * bind of /pass<root> in a namespace we are not in, so the kernel shows the
 * path from the mount's root ("/pass<real path>"). */
static char *live_cwd(pid_t pid)
{
  if (pid <= 0) return NULL;
  char link[64];
  snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
  char *t = g_file_read_link(link, NULL);
  if (!t) return NULL;
  const char *p = strstr(t, "/pass/");
  char *out = g_strdup(p ? p + 5 : t);
  g_free(t);
  return out;
}

char *vfs_view_command_text(BoxVfs *v, const char *name)
{
  if (!v->view_live_dir) return NULL;
  for (const char *q = name; *q; q++)
    if (!g_ascii_isdigit(*q)) return NULL;
  char *file = g_strconcat(name, ".json", NULL);
  char *path = g_build_filename(v->view_live_dir, file, NULL);
  g_free(file);
  json_object *o = json_object_from_file(path);
  g_free(path);
  if (!o) return NULL;
  json_object *x;
  const char *text = json_object_object_get_ex(o, "text", &x) ? json_object_get_string(x) : "";
  pid_t pid = json_object_object_get_ex(o, "pid", &x) ? (pid_t)json_object_get_int(x) : 0;
  const char *ram = json_object_object_get_ex(o, "ram", &x) ? json_object_get_string(x) : "";
  const char *life =
    json_object_object_get_ex(o, "ram_lifetime", &x) ? json_object_get_string(x) : "command";
  gint64 max_b = json_object_object_get_ex(o, "ram_max_bytes", &x) ? json_object_get_int64(x) : 0;
  gint64 max_i = json_object_object_get_ex(o, "ram_max_inodes", &x) ? json_object_get_int64(x) : 0;
  gint64 started =
    json_object_object_get_ex(o, "started_unix_ms", &x) ? json_object_get_int64(x) : 0;
  char *cwd = live_cwd(pid);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "command: %s\n", name);
  g_string_append_printf(s, "text: %s\n", text);
  g_string_append_printf(s, "cwd: %s\n", cwd ? cwd : "?");
  g_string_append_printf(s, "ram: %s (lifetime: %s", ram, life);
  if (max_b) g_string_append_printf(s, ", size limit %" G_GINT64_FORMAT " bytes", max_b);
  if (max_i) g_string_append_printf(s, ", inode limit %" G_GINT64_FORMAT, max_i);
  g_string_append(s, ")\n");
  g_string_append_printf(s, "started_unix_ms: %" G_GINT64_FORMAT "\n", started);
  g_free(cwd);
  json_object_put(o);
  return g_string_free(s, FALSE);
}
