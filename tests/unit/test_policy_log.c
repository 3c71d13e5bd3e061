/* test_policy_log.c — the decision log (spec/policy.md §5.1, spec/runtime.md §8):
 * records, the queue, the hand renderer against json-c, truncation,
 * redaction, and the history's JSON writer. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/decision_log-private.h"
#include "policy/json_out.h"
#include "tests/unit/test_policy_util.h"
#include "tests/unit/test_util.h"

/* ---- decision log -------------------------------------------------------------- */

static json_object *get_path(json_object *o, const char *const *path)
{
  for (; *path; path++) {
    json_object *n = NULL;
    if (g_ascii_isdigit(**path))
      n = json_object_array_get_idx(o, (size_t)atoi(*path));
    else
      json_object_object_get_ex(o, *path, &n);
    g_assert_nonnull(n);
    o = n;
  }
  return o;
}

static const char *attr_string(json_object *attr)
{
  json_object *v = NULL, *s = NULL;
  g_assert_true(json_object_object_get_ex(attr, "value", &v));
  if (!json_object_object_get_ex(v, "stringValue", &s)) return NULL;
  return json_object_get_string(s);
}

/* The hand-written log rendering is byte for byte json-c's, over decisions
 * of every action family, with strings that need escaping and truncation. */
static void test_log_render_matches_json_c(void)
{
  char *dir = NULL, *path = NULL;
  BoxDecisionLog *log = log_tmp_open("policy-log-XXXXXX", "box \"1\"/\x01", "run\\7", &dir, &path);
  BoxPolicy *p = load_ok(seed_policy);
  GString *longs = g_string_new(NULL);
  for (int i = 0; i < 5000; i++) g_string_append(longs, "\xc3\xa9x");
  const char *paths[] = { "~/src/project/todo.txt", "/tmp/a\"b\\c\n\t\x7f\x1f/\xe2\x82\xac",
                          longs->str, "~/.ssh/id" };
  guint checked = 0;
  for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
    const char *ops[] = { "read_content", "write_content" };
    for (guint k = 0; k < 2; k++) {
      const char *action = k ? "fs:write" : "fs:read";
      json_object *in = fs_input(paths[i], ops[k]);
      BoxDecision *d = box_policy_decide(p, action, in);
      if (i == 1) d->dry_run = true;
      if (i == 2) {
        g_free(d->description);
        d->description = g_strdup("a \"described\" rule\r\f\b");
      }
      char *a = policy_decision_log_render(log, action, in, NULL, d, "123", "ab", "cd");
      char *b = policy_decision_log_render_ref(log, action, in, NULL, d, "123", "ab", "cd");
      g_assert_cmpstr(a, ==, b);
      checked++;
      g_free(a);
      g_free(b);
      box_decision_free(d);
      json_object_put(in);
    }
  }
  json_object *in = exec_input("rm", "/home/op/src/project", "-rf");
  BoxDecision *d = box_policy_decide(p, "shell:exec", in);
  const char *argv[] = { "-rf", "to\"do.txt", "--name=secret", "--long-flag", "$X", NULL };
  const bool literal[] = { true, true, false, false, false };
  BoxCommandArgs args = { argv, literal, 5 };
  char *a = policy_decision_log_render(log, "shell:exec", in, &args, d, "1", "t", "s");
  char *b = policy_decision_log_render_ref(log, "shell:exec", in, &args, d, "1", "t", "s");
  g_assert_cmpstr(a, ==, b);
  g_free(a);
  g_free(b);
  box_decision_free(d);
  json_object_put(in);
  const char *nets[] = { "net:connect", "http:request" };
  for (guint i = 0; i < 2; i++) {
    in = json_object_new_object();
    json_object_object_add(in, "host", json_object_new_string("example.com"));
    if (i)
      json_object_object_add(in, "port", json_object_new_string("443x"));
    else
      json_object_object_add(in, "port", json_object_new_int64(443));
    json_object_object_add(in, "method", json_object_new_string("GET"));
    json_object_object_add(in, "url", json_object_new_string("https://example.com/"));
    d = box_policy_decide(p, nets[i], in);
    a = policy_decision_log_render(log, nets[i], in, NULL, d, "1", "t", "s");
    b = policy_decision_log_render_ref(log, nets[i], in, NULL, d, "1", "t", "s");
    g_assert_cmpstr(a, ==, b);
    g_free(a);
    g_free(b);
    box_decision_free(d);
    json_object_put(in);
  }
  g_assert_cmpuint(checked, ==, 8);
  g_string_free(longs, TRUE);
  box_decision_log_close(log);
  box_policy_free(p);
  log_dir_remove(dir, path);
}

/* A file operation's line waits in the queue: not in the file until a flush,
 * an ordinary append (which writes the queue first, keeping the order the
 * lines were made in) or the close; four threads' lines all arrive whole. */
static char *log_text(const char *path)
{
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  return text;
}

static guint count_of(const char *text, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static gpointer queue_worker(gpointer data)
{
  LogThread *w = data;
  for (int i = 0; i < 500; i++) {
    char path[64];
    g_snprintf(path, sizeof path, "/ws/t%d/f%d", w->id, i);
    json_object *in = fs_input(path, "read_metadata");
    decide_logged(w->policy, w->log, "fs:read", in, NULL, true);
  }
  return NULL;
}

static void test_decision_log_queue(void)
{
  char *dir = NULL, *path = NULL;
  BoxDecisionLog *log = log_tmp_open("policy-logq-XXXXXX", "box-1", "run-1", &dir, &path);
  BoxPolicy *p = load_ok("permit(principal, action, resource);");
  const char *paths[] = { "/ws/first", "/ws/second", "/ws/third" };
  for (int i = 0; i < 2; i++) {
    json_object *in = fs_input(paths[i], "read_content");
    decide_logged(p, log, "fs:read", in, NULL, true);
  }
  char *text = log_text(path);
  /* the writer thread waits a few ms for more lines: nothing is written yet */
  g_assert_cmpuint(count_of(text, "/ws/first"), ==, 0);
  g_free(text);
  json_object *in = fs_input(paths[2], "read_content");
  decide_logged(p, log, "fs:read", in, NULL, false);
  text = log_text(path);
  const char *a = strstr(text, "/ws/first"), *b = strstr(text, "/ws/second"),
             *c = strstr(text, "/ws/third");
  g_assert_true(a && b && c && a < b && b < c);
  /* a queued decision's lines, rendered by the writer, are the lines an
   * ordinary append makes (but for times and ids) */
  char **got = g_strsplit(text, "\n", -1);
  g_assert_cmpuint(g_strv_length(got), ==, 7);
  in = fs_input(paths[0], "read_content");
  BoxDecision *d = box_policy_decide(p, "fs:read", in);
  char *want = policy_decision_log_render(log, "fs:read", in, NULL, d, "1", "ab", "cd");
  json_object_put(in);
  box_decision_free(d);
  GRegex *ids = g_regex_new("\"(timeUnixNano|observedTimeUnixNano|traceId|spanId|startTimeUnixNano|"
                            "endTimeUnixNano)\":\"[0-9a-f]*\"",
                            0, 0, NULL);
  char *got2 = g_strconcat(got[0], "\n", got[1], "\n", NULL);
  char *x = g_regex_replace(ids, got2, -1, 0, "\"\\1\":\"\"", 0, NULL);
  char *y = g_regex_replace(ids, want, -1, 0, "\"\\1\":\"\"", 0, NULL);
  g_assert_cmpstr(x, ==, y);
  g_free(x);
  g_free(y);
  g_free(got2);
  g_free(want);
  g_regex_unref(ids);
  g_strfreev(got);
  g_free(text);

  LogThread w[4];
  GThread *t[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (LogThread){ p, log, i, 0 };
    t[i] = g_thread_new("q", queue_worker, &w[i]);
  }
  for (int i = 0; i < 4; i++) g_thread_join(t[i]);
  box_decision_log_flush(log);
  text = log_text(path);
  g_assert_cmpuint(count_of(text, "{\"resourceLogs\""), ==, 3 + 4 * 500);
  g_free(text);

  in = fs_input("/ws/last", "read_content");
  decide_logged(p, log, "fs:read", in, NULL, true);
  box_decision_log_close(log);
  text = log_text(path);
  char **lines = g_strsplit(text, "\n", -1);
  guint n = g_strv_length(lines);
  g_assert_cmpuint(n, ==, 2 * (4 + 4 * 500) + 1);
  for (guint i = 0; i + 1 < n; i++) {
    json_object *o = json_tokener_parse(lines[i]);
    g_assert_nonnull(o); /* every line whole */
    json_object_put(o);
  }
  g_assert_nonnull(strstr(lines[n - 3], "/ws/last"));
  g_strfreev(lines);
  g_free(text);
  box_policy_free(p);
  log_dir_remove(dir, path);
}

/* A decision's span (runtime.md §8.2): INTERNAL, start = end, `policy <action>`,
 * the ids, resource, scope and attributes of its log record (rattrs, rec,
 * attrs), and nothing but resourceSpans on its line. */
static void check_decision_span(const char *line, json_object *rattrs, json_object *rec,
                                json_object *attrs)
{
  const char *tid[] = { "traceId", NULL }, *sid[] = { "spanId", NULL },
             *tn[] = { "timeUnixNano", NULL };
  const char *attrs_path[] = { "attributes", NULL };
  json_object *span_root = json_tokener_parse(line);
  g_assert_nonnull(span_root);
  g_assert_cmpint(json_object_object_length(span_root), ==, 1);
  const char *span_path[] = { "resourceSpans", "0", "scopeSpans", "0", "spans", "0", NULL };
  const char *sscope_path[] = { "resourceSpans", "0", "scopeSpans", "0", "scope", "name", NULL };
  const char *sres_path[] = { "resourceSpans", "0", "resource", "attributes", NULL };
  g_assert_cmpstr(json_object_get_string(get_path(span_root, sscope_path)), ==,
                  "strands-box.policy");
  g_assert_cmpstr(json_object_to_json_string(get_path(span_root, sres_path)), ==,
                  json_object_to_json_string(rattrs));
  json_object *sp = get_path(span_root, span_path);
  const char *name[] = { "name", NULL }, *kind[] = { "kind", NULL },
             *stn[] = { "startTimeUnixNano", NULL }, *et[] = { "endTimeUnixNano", NULL };
  g_assert_cmpstr(json_object_get_string(get_path(sp, name)), ==, "policy shell:exec");
  g_assert_cmpint(json_object_get_int(get_path(sp, kind)), ==, 1);
  g_assert_cmpstr(json_object_get_string(get_path(sp, tid)), ==,
                  json_object_get_string(get_path(rec, tid)));
  g_assert_cmpstr(json_object_get_string(get_path(sp, sid)), ==,
                  json_object_get_string(get_path(rec, sid)));
  g_assert_cmpstr(json_object_get_string(get_path(sp, stn)), ==,
                  json_object_get_string(get_path(rec, tn)));
  g_assert_cmpstr(json_object_get_string(get_path(sp, et)), ==,
                  json_object_get_string(get_path(rec, tn)));
  g_assert_cmpstr(json_object_to_json_string(get_path(sp, attrs_path)), ==,
                  json_object_to_json_string(attrs));
  json_object_put(span_root);
}

static void test_decision_log(void)
{
  char *dir = NULL, *path = NULL;
  BoxDecisionLog *log = log_tmp_open("policy-log-XXXXXX", "box-1", "run-7", &dir, &path);

  BoxPolicy *p = load_ok(seed_policy);
  json_object *in = exec_input("rm", "/home/op/src/project", "-rf");
  const char *args[] = { "-rf", "todo.txt", NULL };
  decide_logged(p, log, "shell:exec", in, args, false);

  in = fs_input("~/src/project/todo.txt", "read_content");
  decide_logged(p, log, "fs:read", in, NULL, false);

  in = json_object_new_object();
  json_object_object_add(in, "host", json_object_new_string("example.com"));
  json_object_object_add(in, "port", json_object_new_int64(443));
  decide_logged(p, log, "net:connect", in, NULL, false);
  box_decision_log_close(log);
  box_policy_free(p);

  GStatBuf st;
  g_assert_cmpint(g_stat(path, &st), ==, 0);
  g_assert_cmpint(st.st_mode & 0777, ==, 0600);

  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  /* per decision: the log record's line, then its span's line */
  g_assert_cmpuint(g_strv_length(lines), ==, 7);
  g_assert_cmpstr(lines[6], ==, "");

  /* line 1: the forbidden shell:exec */
  json_object *root = json_tokener_parse(lines[0]);
  g_assert_nonnull(root);
  const char *res_path[] = { "resourceLogs", "0", "resource", "attributes", NULL };
  json_object *rattrs = get_path(root, res_path);
  g_assert_cmpuint(json_object_array_length(rattrs), ==, 4);
  g_assert_cmpstr(attr_string(json_object_array_get_idx(rattrs, 1)), ==, "box-1");
  g_assert_cmpstr(attr_string(json_object_array_get_idx(rattrs, 3)), ==, "run-7");
  const char *scope_path[] = { "resourceLogs", "0", "scopeLogs", "0", "scope", "name", NULL };
  g_assert_cmpstr(json_object_get_string(get_path(root, scope_path)), ==, "strands-box.policy");
  const char *rec_path[] = { "resourceLogs", "0", "scopeLogs", "0", "logRecords", "0", NULL };
  json_object *rec = get_path(root, rec_path);
  const char *sev[] = { "severityNumber", NULL }, *sevt[] = { "severityText", NULL },
             *ev[] = { "eventName", NULL };
  const char *body[] = { "body", "stringValue", NULL }, *tid[] = { "traceId", NULL },
             *sid[] = { "spanId", NULL };
  const char *tn[] = { "timeUnixNano", NULL };
  g_assert_cmpint(json_object_get_int(get_path(rec, sev)), ==, 13);
  g_assert_cmpstr(json_object_get_string(get_path(rec, sevt)), ==, "deny");
  g_assert_cmpstr(json_object_get_string(get_path(rec, ev)), ==, "strands.box.policy.decision");
  g_assert_cmpstr(
    json_object_get_string(get_path(rec, body)), ==,
    "policy denied this operation on 'rm' [policy: no-rm]: Deleting is not allowed here.");
  g_assert_cmpuint(strlen(json_object_get_string(get_path(rec, tid))), ==, 32);
  g_assert_cmpuint(strlen(json_object_get_string(get_path(rec, sid))), ==, 16);
  g_assert_true(json_object_is_type(get_path(rec, tn), json_type_string));

  const char *attrs_path[] = { "attributes", NULL };
  json_object *attrs = get_path(rec, attrs_path);
  const char *want_keys[] = { "strands.box.policy.principal",
                              "strands.box.policy.action",
                              "strands.box.policy.resource",
                              "strands.box.policy.verdict",
                              "strands.box.policy.cause",
                              "strands.box.policy.reason",
                              "strands.box.policy.rule",
                              "strands.box.policy.category",
                              "strands.box.policy.description",
                              "process.command",
                              "process.command_args",
                              "process.working_directory",
                              "strands.box.policy.determining.ids" };
  const char *want_vals[] = { "agent:self", "shell:exec", "rm",
                              "deny",       "forbidden",  "a forbid rule matched",
                              "no-rm",      "shell",      "Deleting is not allowed here.",
                              "rm",         NULL,         "/home/op/src/project",
                              NULL };
  g_assert_cmpuint(json_object_array_length(attrs), ==, G_N_ELEMENTS(want_keys));
  for (size_t i = 0; i < G_N_ELEMENTS(want_keys); i++) {
    json_object *a = json_object_array_get_idx(attrs, i);
    json_object *k = NULL;
    json_object_object_get_ex(a, "key", &k);
    g_assert_cmpstr(json_object_get_string(k), ==, want_keys[i]);
    if (want_vals[i]) g_assert_cmpstr(attr_string(a), ==, want_vals[i]);
  }
  const char *argv_path[] = { "10", "value", "arrayValue", "values", NULL };
  json_object *argv = get_path(attrs, argv_path);
  g_assert_cmpuint(json_object_array_length(argv), ==, 2);
  json_object *arg1 = NULL;
  g_assert_true(
    json_object_object_get_ex(json_object_array_get_idx(argv, 1), "stringValue", &arg1));
  g_assert_cmpstr(json_object_get_string(arg1), ==, "todo.txt");
  const char *ids_path[] = { "12", "value", "arrayValue", "values", "0", "stringValue", NULL };
  g_assert_cmpstr(json_object_get_string(get_path(attrs, ids_path)), ==, "no-rm");

  check_decision_span(lines[1], rattrs, rec, attrs);
  json_object_put(root);

  /* line 3: a permit: no reason, severity 9, file.path */
  root = json_tokener_parse(lines[2]);
  rec = get_path(root, rec_path);
  g_assert_cmpint(json_object_get_int(get_path(rec, sev)), ==, 9);
  attrs = get_path(rec, attrs_path);
  const char *keys2[] = { "strands.box.policy.principal",      "strands.box.policy.action",
                          "strands.box.policy.resource",       "strands.box.policy.verdict",
                          "strands.box.policy.cause",          "strands.box.policy.rule",
                          "strands.box.policy.category",       "file.path",
                          "strands.box.policy.determining.ids" };
  g_assert_cmpuint(json_object_array_length(attrs), ==, G_N_ELEMENTS(keys2));
  for (size_t i = 0; i < G_N_ELEMENTS(keys2); i++) {
    json_object *k = NULL;
    json_object_object_get_ex(json_object_array_get_idx(attrs, i), "key", &k);
    g_assert_cmpstr(json_object_get_string(k), ==, keys2[i]);
  }
  g_assert_cmpstr(attr_string(json_object_array_get_idx(attrs, 7)), ==, "~/src/project/todo.txt");
  json_object_put(root);

  /* line 5: net:connect default deny; server.port is an OTLP intValue string */
  root = json_tokener_parse(lines[4]);
  rec = get_path(root, rec_path);
  attrs = get_path(rec, attrs_path);
  const char *port_path[] = { "9", "value", "intValue", NULL };
  const char *port_key[] = { "9", "key", NULL };
  g_assert_cmpstr(json_object_get_string(get_path(attrs, port_key)), ==, "server.port");
  json_object *port = get_path(attrs, port_path);
  g_assert_true(json_object_is_type(port, json_type_string));
  g_assert_cmpstr(json_object_get_string(port), ==, "443");
  json_object_put(root);

  g_strfreev(lines);
  g_free(text);
  log_dir_remove(dir, path);
}

static void test_log_truncation(void)
{
  char *dir = NULL, *path = NULL;
  BoxDecisionLog *log = log_tmp_open("policy-log-XXXXXX", "b", "r", &dir, &path);
  GString *big = g_string_new("/");
  for (int i = 0; i < 5000; i++) g_string_append(big, "\xc3\xa9");
  json_object *in = fs_input(big->str, "read_content");
  BoxPolicy *p = box_policy_new_empty();
  BoxDecision *d = box_policy_decide(p, "fs:read", in);
  box_decision_log_append(log, "fs:read", in, NULL, d);
  box_decision_free(d);
  json_object_put(in);
  box_policy_free(p);
  box_decision_log_close(log);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  json_object *root = json_tokener_parse(text);
  g_assert_nonnull(root);
  const char *res_path[] = { "resourceLogs", "0", "scopeLogs", "0",           "logRecords", "0",
                             "attributes",   "2", "value",     "stringValue", NULL };
  const char *v = json_object_get_string(get_path(root, res_path));
  g_assert_cmpuint(strlen(v), <=, 4096);
  g_assert_true(g_str_has_suffix(v, "\xe2\x80\xa6 (truncated)"));
  g_assert_true(g_utf8_validate(v, -1, NULL));
  json_object_put(root);
  g_free(text);
  g_string_free(big, TRUE);
  log_dir_remove(dir, path);
}

static void test_redaction(void)
{
  const char *cases[][3] = {
    { "secret", "0", "<redacted>" },
    { "secret", "1", "secret" },
    { "-rf", "0", "-rf" },
    { "--force", "0", "--force" },
    { "--token=abc", "0", "--token=<redacted>" },
    { "--Token=abc", "0", "<redacted>" },
    { "--abcdefghijklmnopqrstuvwxyzabcdefg", "0", "<redacted>" },
    { "-", "0", "<redacted>" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *r = box_command_arg_redact(cases[i][0], cases[i][1][0] == '1');
    g_assert_cmpstr(r, ==, cases[i][2]);
    g_free(r);
  }
}

/* The history's record writer against json-c itself, on every byte in
 * strings and keys, integer extremes, booleans, and the shapes it leaves
 * to json-c (null, double, nested, unsigned above INT64_MAX). */
static void check_json_append(json_object *rec)
{
  const int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
  size_t n = 0;
  const char *want = json_object_to_json_string_length(rec, flags, &n);
  char *copy = g_strndup(want, n);
  GString *o = g_string_new("x");
  policy_json_append(o, rec, flags);
  g_assert_cmpuint(o->len, ==, n + 1);
  g_assert_true(memcmp(o->str + 1, copy, n) == 0);
  g_string_free(o, TRUE);
  /* other flags go through json-c unchanged */
  want = json_object_to_json_string_length(rec, JSON_C_TO_STRING_SPACED, &n);
  g_free(copy);
  copy = g_strndup(want, n);
  o = g_string_new(NULL);
  policy_json_append(o, rec, JSON_C_TO_STRING_SPACED);
  g_assert_cmpstr(o->str, ==, copy);
  g_string_free(o, TRUE);
  g_free(copy);
}

static void test_json_append_matches_json_c(void)
{
  json_object *rec = json_object_new_object();
  check_json_append(rec); /* {} */
  char all[256];
  for (int i = 0; i < 256; i++) all[i] = (char)i;
  json_object_object_add(rec, "path",
                         json_object_new_string_len(all, 256)); /* NUL and every byte */
  json_object_object_add(rec, "a/b\"c\\d\x01\x1f\x7f\xc3\xa9",
                         json_object_new_string("~/src/a b/'x'.c"));
  json_object_object_add(rec, "min", json_object_new_int64(INT64_MIN));
  json_object_object_add(rec, "max_minus", json_object_new_int64(INT64_MAX - 1));
  json_object_object_add(rec, "zero", json_object_new_int(0));
  json_object_object_add(rec, "neg", json_object_new_int(-126));
  json_object_object_add(rec, "u", json_object_new_uint64(UINT64_C(9000000000000000000)));
  json_object_object_add(rec, "t", json_object_new_boolean(1));
  json_object_object_add(rec, "f", json_object_new_boolean(0));
  json_object_object_add(rec, "empty", json_object_new_string(""));
  check_json_append(rec);
  for (int i = 0; i < 256; i++) { /* each byte alone, as a key and as a value */
    json_object *one = json_object_new_object();
    char s[3] = { 'k', (char)i, 0 };
    json_object_object_add(one, i ? s : "k", json_object_new_string_len(all + i, 1));
    check_json_append(one);
    json_object_put(one);
  }
  for (int off = 0; off < 24;
       off++) { /* an escape at each place in a word, with runs either side */
    const char marks[] = { '"', '\\', '\n', '\x1f', '\x00', ' ' };
    for (size_t m = 0; m < sizeof marks; m++) {
      char buf[64];
      memset(buf, 'a', sizeof buf);
      buf[off] = marks[m];
      json_object *one = json_object_new_object();
      json_object_object_add(one, "path", json_object_new_string_len(buf, off + 1 + (off % 11)));
      check_json_append(one);
      json_object_put(one);
    }
  }
  const char *shapes[] = { "{\"a\":null}",
                           "{\"a\":1.5}",
                           "{\"a\":[\"x\"]}",
                           "{\"a\":{\"b\":1}}",
                           "{\"a\":9223372036854775807}",
                           "{\"a\":18446744073709551615}",
                           "{\"a\":\"x\",\"b\":-0}" };
  for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
    json_object *j = json_tokener_parse(shapes[i]);
    g_assert_nonnull(j);
    check_json_append(j);
    json_object_put(j);
  }
  json_object *arr = json_object_new_array(); /* not a record at all */
  check_json_append(arr);
  json_object_put(arr);
  json_object_put(rec);
}

/* The digits of the log's times and the history's numbers, as %llu prints
 * them, at every length and each power of ten's edges. */
static void test_put_decimal(void)
{
  uint64_t p = 1;
  for (int k = 0; k <= 20; k++) {
    const uint64_t vs[] = { p - 1, p, p + 1, p * 7 + 3, UINT64_MAX - p + 1 };
    for (size_t i = 0; i < G_N_ELEMENTS(vs); i++) {
      char got[24], want[24];
      memset(got, '#', sizeof got);
      size_t n = policy_put_decimal(got, vs[i]);
      g_snprintf(want, sizeof want, "%" G_GUINT64_FORMAT, (guint64)vs[i]);
      g_assert_cmpstr(got, ==, want);
      g_assert_cmpuint(n, ==, strlen(want));
    }
    if (k < 19) p *= 10;
  }
}

/* W3C traceparent: what makes a context, and what is left a root. */
static void test_trace_context_parse(void)
{
  static const char trace[] = "4bf92f3577b34da6a3ce929d0e0e4736", parent[] = "00f067aa0ba902b7";
  BoxTraceContext c;
  g_autofree char *ok = g_strdup_printf("00-%s-%s-01", trace, parent);
  g_assert_true(box_trace_context_parse(&c, ok, "a=b"));
  g_assert_cmpstr(c.trace, ==, trace);
  g_assert_cmpstr(c.parent, ==, parent);
  g_assert_true(c.sampled);
  g_assert_cmpstr(c.state, ==, "a=b");
  g_autofree char *later = g_strdup_printf("cc-%s-%s-02-extra", trace, parent);
  g_assert_true(box_trace_context_parse(&c, later, NULL));
  g_assert_false(c.sampled);
  g_assert_cmpstr(c.state, ==, "");
  const char *bad[] = {
    NULL,
    "",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", /* 00 has nothing after */
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
    "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
  };
  memset(&c, 0x5a, sizeof c);
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
    g_assert_false(box_trace_context_parse(&c, bad[i], "s"));
  g_assert_cmpint(c.trace[0], ==, 0x5a); /* untouched */
}

int main(int argc, char **argv)
{
  static const TestCase cases[] = { { "/policy/log/trace-context", test_trace_context_parse },
                                    { "/policy/log/redaction", test_redaction },
                                    { "/policy/log/record", test_decision_log },
                                    { "/policy/log/queue", test_decision_log_queue },
                                    { "/policy/log/render", test_log_render_matches_json_c },
                                    { "/policy/log/truncation", test_log_truncation },
                                    { "/policy/history/json-append",
                                      test_json_append_matches_json_c },
                                    { "/policy/log/put-decimal", test_put_decimal } };
  return test_run_table(&argc, &argv, cases, G_N_ELEMENTS(cases));
}
