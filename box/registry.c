/* registry.c — the boxes running on this host, for the operator's verbs:
 * each run leaves <runtime dir>/<box id>.json while it serves (its name,
 * box directory, decision log, pid and when it started), and its counters
 * at <box_dir>/private/stats (telemetry/).  `box ls` and `box status` read
 * them; `box stop NAME` signals the run as Ctrl-C's neighbour SIGTERM does.
 * A record whose process is gone (or whose pid now names another process)
 * is stale and is not listed. */
#include "box/box-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STOP_WAIT_S 20

/* BOX_RUNTIME_DIR, else /run/box for root, else the user's runtime dir. */
char *box_registry_dir(void)
{
  const char *env = g_getenv("BOX_RUNTIME_DIR");
  if (env && *env) return g_strdup(env);
  if (geteuid() == 0) return g_strdup("/run/box");
  return g_build_filename(g_get_user_runtime_dir(), "box", NULL);
}

/* The start time of pid (field 22 of /proc/<pid>/stat), or 0 when it is
 * gone or a zombie: with the pid it names one process, whatever pids are
 * reused. */
static guint64 process_start(pid_t pid)
{
  g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return 0;
  const char *p = strrchr(text, ')'); /* the command name may hold spaces */
  if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X') return 0;
  for (int field = 2; p && field < 22; field++) p = strchr(p + 1, ' ');
  return p ? g_ascii_strtoull(p + 1, NULL, 10) : 0;
}

static char *record_path(const char *box_id)
{
  g_autofree char *dir = box_registry_dir();
  g_autofree char *file = g_strconcat(box_id, ".json", NULL);
  return g_build_filename(dir, file, NULL);
}

void boxd_registry_add(Boxd *d)
{
  g_autofree char *dir = box_registry_dir();
  if (g_mkdir_with_parents(dir, 0700) != 0) return; /* box ls will not list it */
  json_object *o = json_object_new_object();
  json_object_object_add(o, "name", json_object_new_string(d->config->name));
  json_object_object_add(o, "box_id", json_object_new_string(d->box_id));
  json_object_object_add(o, "box_dir", json_object_new_string(d->config->box_dir));
  json_object_object_add(o, "config", json_object_new_string(d->config->path));
  const char *log = box_telemetry_decision_file(d->telemetry);
  if (log) json_object_object_add(o, "decision_log", json_object_new_string(log));
  json_object_object_add(o, "pid", json_object_new_int(getpid()));
  json_object_object_add(o, "pid_start", json_object_new_int64((int64_t)process_start(getpid())));
  json_object_object_add(o, "started", json_object_new_int64((int64_t)time(NULL)));
  g_autofree char *path = record_path(d->box_id);
  g_file_set_contents_full(path, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), -1,
                           G_FILE_SET_CONTENTS_CONSISTENT, 0600, NULL);
  json_object_put(o);
}

void boxd_registry_remove(Boxd *d)
{
  g_autofree char *path = record_path(d->box_id);
  unlink(path);
}

static const char *field(json_object *o, const char *key)
{
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
           ? json_object_get_string(v)
           : NULL;
}

static gint64 number(json_object *o, const char *key)
{
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

/* A record whose process still runs, with its counters added
 * ("commands", "decisions", "denials", "dropped", "uptime"); else NULL. */
static json_object *live_record(const char *path)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return NULL;
  json_object *o = json_tokener_parse(text);
  if (!o || !field(o, "name") || !field(o, "box_dir")) {
    json_object_put(o);
    return NULL;
  }
  pid_t pid = (pid_t)number(o, "pid");
  guint64 start = process_start(pid);
  if (pid <= 0 || !start || start != (guint64)number(o, "pid_start")) {
    json_object_put(o);
    return NULL;
  }
  guint64 counts[BOX_TELEMETRY_STAT_N] = { 0 };
  g_autofree char *stats = g_build_filename(field(o, "box_dir"), "private", "stats", NULL);
  int fd = open(stats, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (pread(fd, counts, sizeof counts, 0) < 0) memset(counts, 0, sizeof counts);
    close(fd);
  }
  json_object_object_add(o, "commands",
                         json_object_new_int64((int64_t)counts[BOX_TELEMETRY_STAT_COMMANDS]));
  json_object_object_add(o, "decisions",
                         json_object_new_int64((int64_t)counts[BOX_TELEMETRY_STAT_DECISIONS]));
  json_object_object_add(o, "denials",
                         json_object_new_int64((int64_t)counts[BOX_TELEMETRY_STAT_DENIALS]));
  json_object_object_add(o, "dropped",
                         json_object_new_int64((int64_t)counts[BOX_TELEMETRY_STAT_DROPPED]));
  json_object_object_add(o, "uptime",
                         json_object_new_int64((int64_t)time(NULL) - number(o, "started")));
  return o;
}

static gint by_name(gconstpointer a, gconstpointer b)
{
  json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
  int c = strcmp(field(x, "name"), field(y, "name"));
  return c ? c : (int)(number(x, "pid") - number(y, "pid"));
}

static void record_free(gpointer o)
{
  json_object_put(o);
}

/* Every running box of this host, by name (json_object*). */
GPtrArray *box_registry_list(void)
{
  GPtrArray *boxes = g_ptr_array_new_with_free_func(record_free);
  g_autofree char *dir = box_registry_dir();
  g_autofree char *pattern = g_build_filename(dir, "*.json", NULL);
  glob_t found = { 0 };
  if (glob(pattern, GLOB_NOSORT, NULL, &found) == 0)
    for (size_t i = 0; i < found.gl_pathc; i++) {
      json_object *o = live_record(found.gl_pathv[i]);
      if (o) g_ptr_array_add(boxes, o);
    }
  globfree(&found);
  g_ptr_array_sort(boxes, by_name);
  return boxes;
}

/* The one running box named NAME (its name or its id); NULL after saying
 * why. */
json_object *box_registry_find(const char *name)
{
  g_autoptr(GPtrArray) boxes = box_registry_list();
  json_object *found = NULL;
  for (guint i = 0; i < boxes->len; i++) {
    json_object *o = g_ptr_array_index(boxes, i);
    if (strcmp(field(o, "name"), name) != 0 && g_strcmp0(field(o, "box_id"), name) != 0) continue;
    if (found) {
      box_fail("more than one running box is named %s; name one by its id (box ls --json)", name);
      json_object_put(found);
      return NULL;
    }
    found = json_object_get(o);
  }
  if (!found) box_fail("no box named %s is running on this host", name);
  return found;
}

/* "1h02m", "3m04s", "12s" */
static char *uptime_text(gint64 s)
{
  if (s >= 3600)
    return g_strdup_printf("%" G_GINT64_FORMAT "h%02" G_GINT64_FORMAT "m", s / 3600, s / 60 % 60);
  if (s >= 60)
    return g_strdup_printf("%" G_GINT64_FORMAT "m%02" G_GINT64_FORMAT "s", s / 60, s % 60);
  return g_strdup_printf("%" G_GINT64_FORMAT "s", s < 0 ? 0 : s);
}

static const char ls_help[] =
  "Usage: box ls [--json]\n"
  "       box status [--json] [NAME]\n"
  "\n"
  "Lists the boxes running on this host, from the records their runs keep:\n"
  "name, pid, uptime, shell commands run, policy decisions and denials.\n"
  "\n"
  "Options:\n"
  "  --json      One JSON object per box, one per line\n"
  "  -h, --help  Print help\n";

int box_verb_ls(int argc, char **argv)
{
  bool json = false;
  const char *name = NULL;
  bool status = strcmp(argv[0], "status") == 0;
  for (int i = 1; i < argc; i++) {
    if (box_help_word(argv[i])) return box_help_print(ls_help);
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (status && !name && argv[i][0] != '-') {
      name = argv[i];
    } else {
      return box_usage_error(ls_help, "unexpected argument '%s' found", argv[i]);
    }
  }
  g_autoptr(GPtrArray) boxes = box_registry_list();
  if (name) {
    json_object *one = box_registry_find(name);
    if (!one) return 1;
    g_ptr_array_set_size(boxes, 0);
    g_ptr_array_add(boxes, one);
  }
  if (!json)
    printf("%-20s %8s %8s %9s %10s %8s  %s\n", "NAME", "PID", "UPTIME", "COMMANDS", "DECISIONS",
           "DENIALS", "BOX_DIR");
  for (guint i = 0; i < boxes->len; i++) {
    json_object *o = g_ptr_array_index(boxes, i);
    if (json) {
      puts(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
      continue;
    }
    g_autofree char *up = uptime_text(number(o, "uptime"));
    printf("%-20s %8" G_GINT64_FORMAT " %8s %9" G_GINT64_FORMAT " %10" G_GINT64_FORMAT
           " %8" G_GINT64_FORMAT "  %s\n",
           field(o, "name"), number(o, "pid"), up, number(o, "commands"), number(o, "decisions"),
           number(o, "denials"), field(o, "box_dir"));
  }
  return 0;
}

static const char stop_help[] =
  "Usage: box stop NAME\n"
  "\n"
  "Stops the running box NAME (its name, or its id) as SIGTERM stops `box run`:\n"
  "the agent's process group gets SIGTERM, then SIGKILL a second later, and the\n"
  "run records box_stopped before it exits.  Waits for the run to end.\n"
  "\n"
  "Options:\n"
  "  -h, --help  Print help\n";

int box_verb_stop(int argc, char **argv)
{
  if (argc == 2 && box_help_word(argv[1])) return box_help_print(stop_help);
  if (argc != 2 || argv[1][0] == '-') return box_usage_error(stop_help, "box stop takes one NAME");
  json_object *o = box_registry_find(argv[1]);
  if (!o) return 1;
  pid_t pid = (pid_t)number(o, "pid");
  guint64 start = (guint64)number(o, "pid_start");
  g_autofree char *name = g_strdup(field(o, "name"));
  json_object_put(o);
  if (kill(pid, SIGTERM) != 0)
    return box_fail("cannot stop %s (pid %d): %s", name, (int)pid, g_strerror(errno));
  for (int i = 0; i < STOP_WAIT_S * 20; i++) {
    if (process_start(pid) != start) {
      printf("stopped %s (pid %d)\n", name, (int)pid);
      return 0;
    }
    g_usleep(50 * 1000);
  }
  return box_fail("%s (pid %d) has not stopped after %d s", name, (int)pid, STOP_WAIT_S);
}
