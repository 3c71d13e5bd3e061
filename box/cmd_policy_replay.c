/* cmd_policy_replay.c — `box policy replay FILE [--home DIR] EVENTS`:
 * replays a JSON-lines event sequence against a policy with history rules
 * (spec/policy.md §2.3), printing the decision message of every request.
 *
 * Each EVENTS line is {"t": SECONDS, "action": "fs:read", "kind":
 * "request"|"response"|"error", "input": {…}, "output": {…}} or
 * {"restart": true} (reopen the history as a restarted box would).  The
 * history lives in a temporary directory removed at exit; `t` is the
 * history's clock.  Exit 0, or 2 on a usage or load error. */
#include "box/box-private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

static const char replay_usage[] =
  "Usage: box policy replay FILE [--home DIR] EVENTS\n"
  "\n"
  "EVENTS is a file of JSON lines (\"-\" for stdin), each\n"
  "  {\"t\": SECONDS, \"action\": \"fs:read\", \"kind\": \"request\"|\"response\"|\"error\", "
  "\"input\": {...}, \"output\": {...}}\n"
  "or {\"restart\": true}.  Prints one line per request: the decision message.\n";

static int64_t replay_clock(void *data)
{
  return *(int64_t *)data;
}

static BoxPolicy *open_policy(const char *file, const char *home, const char *dir, int64_t *now,
                              bool quiet)
{
  BoxPolicy *p = box_verb_policy_load(file, home, quiet);
  if (!p) return NULL;
  box_policy_set_clock(p, replay_clock, now);
  g_autoptr(GError) error = NULL;
  if (!box_policy_open_history(p, dir, &error)) {
    fprintf(stderr, "box: error: %s\n", error->message);
    box_policy_free(p);
    return NULL;
  }
  return p;
}

static void remove_dir(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name(d))) {
    char *p = g_build_filename(dir, n, NULL);
    g_unlink(p);
    g_free(p);
  }
  if (d) g_dir_close(d);
  g_rmdir(dir);
}

static int line_error(unsigned long n, const char *why)
{
  fprintf(stderr, "box: error: EVENTS line %lu: %s\n", n, why);
  return 2;
}

int box_verb_policy_replay(int argc, char **argv)
{
  const char *pos[2] = { NULL, NULL }, *home = NULL;
  int npos = 0;
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    if (strcmp(s, "--home") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "error: a value is required for '--home' but none was supplied\n\n%s",
                replay_usage);
        return 2;
      }
      home = argv[++i];
    } else if (g_str_has_prefix(s, "--home=")) {
      home = s + 7;
    } else if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
      fputs(replay_usage, stdout);
      return 0;
    } else if (s[0] == '-' && s[1]) {
      fprintf(stderr, "error: unexpected argument '%s' found\n\n%s", s, replay_usage);
      return 2;
    } else if (npos < 2) {
      pos[npos++] = s;
    } else {
      fprintf(stderr, "error: unexpected argument '%s' found\n\n%s", s, replay_usage);
      return 2;
    }
  }
  if (npos < 2) {
    fprintf(stderr, "error: the following required arguments were not provided\n\n%s",
            replay_usage);
    return 2;
  }
  if (!home) home = g_getenv("HOME");
  FILE *in = strcmp(pos[1], "-") == 0 ? stdin : fopen(pos[1], "r");
  if (!in) {
    fprintf(stderr, "box: error: cannot read EVENTS %s: %s\n", pos[1], g_strerror(errno));
    return 2;
  }
  char *dir = g_dir_make_tmp("box-replay-XXXXXX", NULL);
  if (!dir) {
    fprintf(stderr, "box: error: cannot make a temporary history directory\n");
    if (in != stdin) fclose(in);
    return 2;
  }
  int64_t now = 0;
  BoxPolicy *p = open_policy(pos[0], home, dir, &now, false);
  int rc = p ? 0 : 2;
  char *line = NULL;
  size_t cap = 0;
  unsigned long n = 0;
  while (rc == 0 && getline(&line, &cap, in) >= 0) {
    n++;
    g_strstrip(line);
    if (!*line) continue;
    enum json_tokener_error jerr = json_tokener_success;
    json_object *ev = json_tokener_parse_verbose(line, &jerr);
    json_object *v, *input = NULL, *output = NULL;
    if (!ev || !json_object_is_type(ev, json_type_object)) {
      rc = line_error(n, ev ? "not a JSON object" : json_tokener_error_desc(jerr));
    } else if (json_object_object_get_ex(ev, "restart", &v) && json_object_get_boolean(v)) {
      box_policy_free(p);
      p = open_policy(pos[0], home, dir, &now, true);
      if (!p) rc = 2;
    } else if (!json_object_object_get_ex(ev, "t", &v) ||
               !(json_object_is_type(v, json_type_int) ||
                 json_object_is_type(v, json_type_double))) {
      rc = line_error(n, "`t` (seconds, a number) is required");
    } else {
      double t = json_object_get_double(v);
      now = (int64_t)llround(t * 1e9);
      const char *action =
        json_object_object_get_ex(ev, "action", &v) ? json_object_get_string(v) : NULL;
      const char *kind =
        json_object_object_get_ex(ev, "kind", &v) ? json_object_get_string(v) : "request";
      json_object_object_get_ex(ev, "input", &input);
      json_object_object_get_ex(ev, "output", &output);
      if (!action)
        rc = line_error(n, "`action` is required");
      else if (input && !json_object_is_type(input, json_type_object))
        rc = line_error(n, "`input` must be an object");
      else if (strcmp(kind, "request") == 0) {
        json_object *empty = input ? NULL : json_object_new_object();
        BoxDecision *d = box_policy_decide(p, action, input ? input : empty);
        puts(d->message);
        box_decision_free(d);
        json_object_put(empty);
      } else if (strcmp(kind, "response") == 0) {
        box_policy_record_response(p, action, input, output);
      } else if (strcmp(kind, "error") == 0) {
        box_policy_record_error(p, action, input);
      } else {
        rc = line_error(n, "`kind` must be \"request\", \"response\" or \"error\"");
      }
    }
    json_object_put(ev);
  }
  fflush(stdout);
  free(line);
  if (in != stdin) fclose(in);
  box_policy_free(p);
  remove_dir(dir);
  g_free(dir);
  return rc;
}
