/* cmd_logs.c — `box logs NAME [-f] [--deny] [--json]`: a running box's
 * decision log, one decision a line as `box demo` prints them, or the raw
 * OTLP/JSON lines; -f follows it until the box stops. */
#include "box/box-private.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FOLLOW_POLL_MS 200

static const char logs_help[] =
  "Usage: box logs NAME [-f] [--deny] [--json]\n"
  "\n"
  "Prints the decision log of the running box NAME (its name, or its id): one\n"
  "decision a line (verdict, action, resource, rule).\n"
  "\n"
  "Options:\n"
  "  -f, --follow  Keep printing decisions as they are made, until the box stops\n"
  "  --deny        Only denials\n"
  "  --json        The log's own lines (OTLP/JSON), unrendered\n"
  "  -h, --help    Print help\n";

typedef struct {
  bool deny_only;
  bool json;
} LogsView;

/* "deny" or "permit" for a decision's log-record line, else NULL */
static const char *verdict_of(const char *line)
{
  static const char key[] = "\"strands.box.policy.verdict\",\"value\":{\"stringValue\":\"";
  if (!g_str_has_prefix(line, "{\"resourceLogs\"")) return NULL;
  const char *v = strstr(line, key);
  if (!v) return NULL;
  v += sizeof key - 1;
  return g_str_has_prefix(v, "deny\"") ? "deny" : g_str_has_prefix(v, "permit\"") ? "permit" : NULL;
}

static void show(const LogsView *view, const char *line)
{
  const char *verdict = verdict_of(line);
  if (view->deny_only && g_strcmp0(verdict, "deny") != 0) return;
  if (view->json) {
    puts(line);
    return;
  }
  g_autofree char *text = verdict ? box_decision_line_text(line) : NULL;
  if (text) puts(text);
}

/* Prints the whole lines of what fd holds past *pending; keeps the tail. */
static void drain(int fd, GString *pending, const LogsView *view)
{
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    g_string_append_len(pending, buf, n);
    char *start = pending->str, *nl;
    while ((nl = memchr(start, '\n', pending->len - (size_t)(start - pending->str)))) {
      *nl = '\0';
      show(view, start);
      start = nl + 1;
    }
    g_string_erase(pending, 0, start - pending->str);
  }
  fflush(stdout);
}

static bool still_running(const char *box_id)
{
  g_autoptr(GPtrArray) boxes = box_registry_list();
  for (guint i = 0; i < boxes->len; i++) {
    json_object *id = NULL;
    if (json_object_object_get_ex(g_ptr_array_index(boxes, i), "box_id", &id) &&
        strcmp(json_object_get_string(id), box_id) == 0)
      return true;
  }
  return false;
}

int box_verb_logs(int argc, char **argv)
{
  LogsView view = { false, false };
  bool follow = false;
  const char *name = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (box_help_word(a)) {
      return box_help_print(logs_help);
    } else if (strcmp(a, "-f") == 0 || strcmp(a, "--follow") == 0) {
      follow = true;
    } else if (strcmp(a, "--deny") == 0) {
      view.deny_only = true;
    } else if (strcmp(a, "--json") == 0) {
      view.json = true;
    } else if (a[0] != '-' && !name) {
      name = a;
    } else {
      return box_usage_error(logs_help, "unexpected argument '%s' found", a);
    }
  }
  if (!name) {
    return box_usage_error(logs_help, "the following required arguments were not provided: NAME");
  }
  json_object *box = box_registry_find(name);
  if (!box) return 1;
  json_object *path = NULL, *id = NULL;
  json_object_object_get_ex(box, "box_id", &id);
  g_autofree char *box_id = g_strdup(id ? json_object_get_string(id) : "");
  if (!json_object_object_get_ex(box, "decision_log", &path)) {
    json_object_put(box);
    return box_fail("box %s keeps no decision file: its `[telemetry.*]` targets send its "
                    "decisions elsewhere",
                    name);
  }
  g_autofree char *log = g_strdup(json_object_get_string(path));
  json_object_put(box);
  int fd = open(log, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return box_fail("cannot read the decision log %s: %s", log, g_strerror(errno));
  signal(SIGPIPE, SIG_DFL);
  GString *pending = g_string_new(NULL);
  drain(fd, pending, &view);
  while (follow) {
    bool running = still_running(box_id);
    g_usleep(FOLLOW_POLL_MS * 1000);
    drain(fd, pending, &view);
    if (!running) break; /* what it wrote before it stopped is printed */
  }
  g_string_free(pending, TRUE);
  close(fd);
  return 0;
}
