/* decision_log.c — per decision, one OTLP/JSON logs export line (the log
 * record) and one traces export line (its span, kind INTERNAL, start = end,
 * name `policy <action>`), sharing trace and span ids; both lines in one
 * write(2) (spec/policy.md §5.1, spec/runtime.md §8.1–§8.2).
 *
 * A file operation's decision is queued (box_decision_log_append_queued),
 * and rendered and written by the log's writer thread, many lines in one
 * write(2): on an ext4 workspace the 2.6 KB rendered and appended per
 * decision, on the thread the caller waits for, made a create or an unlink
 * 1.4-1.8x a bare passthrough's.
 * Every other append, and box_decision_log_flush, first writes what is
 * queued, so the file keeps the order lines were made in; boxd flushes
 * before it reports a command's end.  Delivery is best effort (spec/
 * runtime.md §8.7): a SIGKILL loses the lines of the last few ms. */
#include "policy/decision_log-private.h"
#include "policy/decision.h"
#include "policy/json_out.h"
#include "policy/message.h"
#include "policy/schema.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ATTR_MAX 4096
#define ARGS_MAX 64
#define TRUNCATED "\xE2\x80\xA6 (truncated)"

#define QUEUE_GATHER_US 3000 /* the writer waits this long for more decisions */
#define QUEUE_MAX 2048u      /* beyond, the appender writes them itself */

/* A queued decision: what its lines are rendered from (an fs decision's
 * lines read nothing of its input), and when it was made. */
typedef struct {
  char nanos[32];
  BoxPackedDecision *d;
  BoxTraceContext *ctx; /* the deciding thread's trace context (a copy), or NULL */
  char span[17];        /* chosen as it is queued: the caller may name the record by it */
} Queued;
G_STATIC_ASSERT(sizeof(Queued) % 8 == 0); /* the packed decision follows it */

struct BoxDecisionLog {
  int fd;                  /* or -1, with a sink */
  BoxDecisionLogSink sink; /* where the lines go instead of fd */
  void *sink_data;
  char *box_id;
  char *run_id;
  GMutex lock;         /* the file: one write at a time, queued lines first */
  GString *head_logs;  /* the text before each record's time (h_heads) */
  GString *head_spans; /* and between its two lines' attributes and trace id */
  GMutex qlock;        /* queued, writer_idle, stopping */
  GCond qcond;
  GPtrArray *queued; /* Queued*, in the order they were made */
  GPtrArray *spare;  /* the queue being written: touched under lock only */
  GString *out;      /* their lines: under lock */
  GString *attrs;    /* the renderer's scratch for them: under lock */
  GThread *writer;
  bool writer_idle; /* waiting on qcond for a first line */
  bool stopping;
};

static gpointer writer_main(gpointer data);

static void h_heads(const BoxDecisionLog *log, GString *logs, GString *spans);

BoxDecisionLog *box_decision_log_open(const char *path, const char *box_id, const char *run_id,
                                      GError **error)
{
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO, "cannot open the decision log %s: %s",
                path, g_strerror(e));
    return NULL;
  }
  if (fchmod(fd, 0600) != 0) {
    int e = errno;
    close(fd);
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO,
                "cannot set the mode of the decision log %s: %s", path, g_strerror(e));
    return NULL;
  }
  BoxDecisionLog *log = box_decision_log_open_sink(NULL, NULL, box_id, run_id);
  log->fd = fd;
  return log;
}

BoxDecisionLog *box_decision_log_open_sink(BoxDecisionLogSink sink, void *data, const char *box_id,
                                           const char *run_id)
{
  BoxDecisionLog *log = g_new0(BoxDecisionLog, 1);
  log->fd = -1;
  log->sink = sink;
  log->sink_data = data;
  log->box_id = g_strdup(box_id ? box_id : "");
  log->run_id = g_strdup(run_id ? run_id : "");
  g_mutex_init(&log->lock);
  g_mutex_init(&log->qlock);
  g_cond_init(&log->qcond);
  log->queued = g_ptr_array_new();
  log->spare = g_ptr_array_new();
  log->out = g_string_sized_new(64 * 1024);
  log->attrs = g_string_sized_new(2048);
  log->head_logs = g_string_new(NULL);
  log->head_spans = g_string_new(NULL);
  h_heads(log, log->head_logs, log->head_spans);
  log->writer = g_thread_new("box-log", writer_main, log);
  return log;
}

void box_decision_log_close(BoxDecisionLog *log)
{
  if (!log) return;
  g_mutex_lock(&log->qlock);
  log->stopping = true;
  g_cond_signal(&log->qcond);
  g_mutex_unlock(&log->qlock);
  g_thread_join(log->writer);
  box_decision_log_flush(log);
  if (log->fd >= 0) close(log->fd);
  g_ptr_array_free(log->queued, TRUE);
  g_ptr_array_free(log->spare, TRUE);
  g_string_free(log->out, TRUE);
  g_string_free(log->attrs, TRUE);
  g_cond_clear(&log->qcond);
  g_mutex_clear(&log->qlock);
  g_mutex_clear(&log->lock);
  g_string_free(log->head_logs, TRUE);
  g_string_free(log->head_spans, TRUE);
  g_free(log->box_id);
  g_free(log->run_id);
  g_free(log);
}

static json_object *str_value(const char *s)
{
  json_object *v = json_object_new_object();
  char *capped = policy_cap_utf8(s ? s : "", ATTR_MAX, TRUNCATED);
  json_object_object_add(v, "stringValue", json_object_new_string(capped));
  g_free(capped);
  return v;
}

static void add_attr(json_object *attrs, const char *key, json_object *value)
{
  json_object *a = json_object_new_object();
  json_object_object_add(a, "key", json_object_new_string(key));
  json_object_object_add(a, "value", value);
  json_object_array_add(attrs, a);
}

static void add_str(json_object *attrs, const char *key, const char *s)
{
  add_attr(attrs, key, str_value(s));
}

static json_object *array_value(const char *const *items, size_t n)
{
  json_object *values = json_object_new_array();
  for (size_t i = 0; i < n; i++) json_object_array_add(values, str_value(items[i]));
  json_object *arr = json_object_new_object();
  json_object_object_add(arr, "values", values);
  json_object *v = json_object_new_object();
  json_object_object_add(v, "arrayValue", arr);
  return v;
}

static const char *input_str(json_object *input, const char *key)
{
  json_object *v = NULL;
  if (!input || !json_object_object_get_ex(input, key, &v) || !v) return NULL;
  return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* The command's words as the log shows them (at most ARGS_MAX), each
 * redacted where it came from an expansion; g_strfreev. */
static char **redacted_args(const BoxCommandArgs *cargs, size_t *n)
{
  *n = cargs ? MIN(cargs->argc, ARGS_MAX) : 0;
  char **words = g_new0(char *, *n + 1);
  for (size_t i = 0; i < *n; i++)
    words[i] = box_command_arg_redact(cargs->argv[i], !cargs->literal || cargs->literal[i]);
  return words;
}

static void add_int_from_input(json_object *attrs, const char *key, json_object *input,
                               const char *field)
{
  json_object *v = NULL;
  if (!input || !json_object_object_get_ex(input, field, &v) || !v) return;
  json_object *val = json_object_new_object();
  if (json_object_is_type(v, json_type_int)) {
    char buf[32];
    g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, (gint64)json_object_get_int64(v));
    json_object_object_add(val, "intValue",
                           json_object_new_string(buf)); /* OTLP/JSON: int64 as string */
  } else {
    json_object_put(val);
    val = str_value(json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                             : json_object_to_json_string(v));
  }
  add_attr(attrs, key, val);
}

static bool short_flag(const char *w)
{
  if (w[0] != '-' || !w[1] || w[1] == '-') return false;
  for (const char *q = w + 1; *q; q++)
    if (!g_ascii_isalnum(*q)) return false;
  return true;
}

static bool long_flag_name(const char *w, size_t n)
{
  if (n < 1 || n > 32) return false;
  for (size_t i = 0; i < n; i++)
    if (!(g_ascii_islower(w[i]) || w[i] == '-')) return false;
  return true;
}

char *box_command_arg_redact(const char *word, bool literal)
{
  if (!word) return g_strdup("");
  if (literal || short_flag(word)) return g_strdup(word);
  if (word[0] == '-' && word[1] == '-') {
    const char *name = word + 2, *eq = strchr(name, '=');
    if (!eq && long_flag_name(name, strlen(name))) return g_strdup(word);
    if (eq && long_flag_name(name, (size_t)(eq - name)))
      return g_strdup_printf("--%.*s=<redacted>", (int)(eq - name), name);
  }
  return g_strdup("<redacted>");
}

/* The record's action and category (spec/policy.md §5.1): "fs:read" in
 * "fs"; a tool's own action by its tool's name ("add"), in its namespace
 * ("demo"). */
static const char *action_words(const char *action, const char **category, size_t *clen)
{
  int a = strstr(action, "::Action::") ? policy_action_index(action) : -1;
  if (a >= POLICY_BOX_ACTIONS) {
    *category = policy_action_etype(a);
    *clen = strlen(*category) - strlen("::Action");
    return policy_action_id(a);
  }
  const char *colon = strchr(action, ':');
  *category = action;
  *clen = colon ? (size_t)(colon - action) : strlen(action);
  return action;
}

/* Builds the record's attributes in the order of spec/policy.md §5.1. */
static json_object *decision_attributes(const char *action, json_object *input,
                                        const BoxCommandArgs *cargs, const BoxDecision *d)
{
  json_object *attrs = json_object_new_array();
  bool deny = d->verdict == BOX_VERDICT_DENY;
  add_str(attrs, "strands.box.policy.principal", "agent:self");
  const char *group;
  size_t glen;
  add_str(attrs, "strands.box.policy.action", action_words(action, &group, &glen));
  add_str(attrs, "strands.box.policy.resource", d->resource);
  add_str(attrs, "strands.box.policy.verdict", deny ? "deny" : "permit");
  add_str(attrs, "strands.box.policy.cause", box_cause_name(d->cause));
  if (d->cause == BOX_CAUSE_INTERNAL_FAULT)
    add_str(attrs, "error.type", "strands.box.policy.evaluation_error");
  if (deny) add_str(attrs, "strands.box.policy.reason", d->reason ? d->reason : "");
  add_str(attrs, "strands.box.policy.rule", d->rule ? d->rule : "");
  char *category = g_strndup(group, glen);
  add_str(attrs, "strands.box.policy.category", category);
  g_free(category);
  if (d->description && *d->description)
    add_str(attrs, "strands.box.policy.description", d->description);
  if (g_str_has_prefix(action, "fs:")) {
    add_str(attrs, "file.path", d->resource);
  } else if (g_str_has_prefix(action, "shell:")) {
    const char *program = input_str(input, "program");
    if (program) add_str(attrs, "process.command", program);
    size_t n;
    char **words = redacted_args(cargs, &n);
    add_attr(attrs, "process.command_args", array_value((const char *const *)words, n));
    g_strfreev(words);
    const char *cwd = input_str(input, "cwd");
    if (cwd) add_str(attrs, "process.working_directory", cwd);
  } else if (strcmp(action, "net:connect") == 0 || strcmp(action, "http:request") == 0) {
    const char *host = input_str(input, "host");
    if (host) add_str(attrs, "server.address", host);
    add_int_from_input(attrs, "server.port", input, "port");
    const char *method = input_str(input, "method");
    if (method && strcmp(action, "http:request") == 0)
      add_str(attrs, "http.request.method", method);
  }
  if (d->dry_run) {
    json_object *yes = json_object_new_object();
    json_object_object_add(yes, "boolValue", json_object_new_boolean(true));
    add_attr(attrs, "strands.box.policy.dry_run", yes);
  }
  const GPtrArray *ids = d->determining_ids;
  add_attr(attrs, "strands.box.policy.determining.ids",
           array_value(ids ? (const char *const *)ids->pdata : NULL, ids ? ids->len : 0));
  return attrs;
}

/* One item wrapped as OTLP/JSON exports it, under the policy's scope:
 * {ROOT: [{"resource", SCOPES: [{"scope", ITEMS: [item]}]}]}. The log
 * record and the span share the shape and the resource (a reference is
 * taken here); item is consumed. */
static json_object *otlp_export(json_object *resource, const char *root_key, const char *scopes_key,
                                const char *items_key, json_object *item)
{
  json_object *items = json_object_new_array();
  json_object_array_add(items, item);
  json_object *scope = json_object_new_object();
  json_object_object_add(scope, "name", json_object_new_string("strands-box.policy"));
  json_object *scoped = json_object_new_object();
  json_object_object_add(scoped, "scope", scope);
  json_object_object_add(scoped, items_key, items);
  json_object *scopes = json_object_new_array();
  json_object_array_add(scopes, scoped);
  json_object *res = json_object_new_object();
  json_object_object_add(res, "resource", json_object_get(resource));
  json_object_object_add(res, scopes_key, scopes);
  json_object *all = json_object_new_array();
  json_object_array_add(all, res);
  json_object *root = json_object_new_object();
  json_object_object_add(root, root_key, all);
  return root;
}

static json_object *resource_attr(const char *key, const char *value)
{
  json_object *a = json_object_new_object();
  json_object_object_add(a, "key", json_object_new_string(key));
  json_object_object_add(a, "value", str_value(value));
  return a;
}

void box_decision_log_append(BoxDecisionLog *log, const char *action, json_object *input,
                             const char *const *command_args, const BoxDecision *decision)
{
  BoxCommandArgs args = { command_args, NULL, 0 };
  if (command_args)
    while (command_args[args.argc]) args.argc++;
  box_decision_log_append_args(log, action, input, command_args ? &args : NULL, decision);
}

/* The reference rendering through json-c objects, kept for the unit test
 * that checks the hand-written one below against it. */
char *policy_decision_log_render_ref(const BoxDecisionLog *log, const char *action,
                                     json_object *input, const BoxCommandArgs *command_args,
                                     const BoxDecision *decision, const char *nanos,
                                     const char *trace, const char *span)
{
  if (!action) action = decision->action ? decision->action : "";
  bool deny = decision->verdict == BOX_VERDICT_DENY;

  json_object *rec = json_object_new_object();
  json_object_object_add(rec, "timeUnixNano", json_object_new_string(nanos));
  json_object_object_add(rec, "observedTimeUnixNano", json_object_new_string(nanos));
  json_object_object_add(rec, "severityNumber", json_object_new_int(deny ? 13 : 9));
  json_object_object_add(rec, "severityText", json_object_new_string(deny ? "deny" : "permit"));
  json_object_object_add(rec, "eventName", json_object_new_string("strands.box.policy.decision"));
  json_object_object_add(rec, "body", str_value(decision->message ? decision->message : ""));
  json_object_object_add(rec, "traceId", json_object_new_string(trace));
  json_object_object_add(rec, "spanId", json_object_new_string(span));
  json_object *attributes = decision_attributes(action, input, command_args, decision);
  json_object_object_add(rec, "attributes", json_object_get(attributes));

  json_object *rattrs = json_object_new_array();
  json_object_array_add(rattrs, resource_attr("service.name", "strands-box"));
  json_object_array_add(rattrs, resource_attr("strands.box.name", log->box_id));
  json_object_array_add(rattrs, resource_attr("strands.box.source", "box"));
  json_object_array_add(rattrs, resource_attr("strands.box.run.id", log->run_id));
  json_object *resource = json_object_new_object();
  json_object_object_add(resource, "attributes", rattrs);
  json_object *root = otlp_export(resource, "resourceLogs", "scopeLogs", "logRecords", rec);

  /* the span: same resource, scope, trace and span ids and attributes */
  char *span_name = g_strdup_printf("policy %s", action);
  json_object *sp = json_object_new_object();
  json_object_object_add(sp, "traceId", json_object_new_string(trace));
  json_object_object_add(sp, "spanId", json_object_new_string(span));
  json_object_object_add(sp, "name", json_object_new_string(span_name));
  json_object_object_add(sp, "kind", json_object_new_int(1)); /* SPAN_KIND_INTERNAL */
  json_object_object_add(sp, "startTimeUnixNano", json_object_new_string(nanos));
  json_object_object_add(sp, "endTimeUnixNano", json_object_new_string(nanos));
  json_object_object_add(sp, "attributes", attributes);
  g_free(span_name);
  json_object *span_root = otlp_export(resource, "resourceSpans", "scopeSpans", "spans", sp);
  json_object_put(resource);

  const int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
  size_t llen = 0, slen = 0;
  const char *ltext = json_object_to_json_string_length(root, flags, &llen);
  const char *stext = json_object_to_json_string_length(span_root, flags, &slen);
  size_t len = llen + 1 + slen; /* both lines, less the final newline */
  char *line = g_malloc(len + 2);
  memcpy(line, ltext, llen);
  line[llen] = '\n';
  memcpy(line + llen + 1, stext, slen);
  line[len] = '\n';
  line[len + 1] = '\0';
  json_object_put(root);
  json_object_put(span_root);

  return line;
}

/* ---- the hand-written rendering ----
 * The same text json-c gives with JSON_C_TO_STRING_PLAIN |
 * JSON_C_TO_STRING_NOSLASHESCAPE (keys in insertion order, its escapes),
 * without building about a hundred json-c objects per decision: the log is
 * written on every file operation of the mount, so this is its hot path. */

#define LIT(o, s) policy_app_len((o), (s), sizeof(s) - 1)

/* s as the text of a JSON string (no quotes), cut to ATTR_MAX as
 * str_value cuts it */
static void h_text(GString *o, const char *s)
{
  if (!s) s = "";
  size_t n = strlen(s);
  if (n <= ATTR_MAX) {
    policy_json_escaped(o, s, n); /* nothing to cut: no copy */
  } else {
    char *capped = policy_cap_utf8(s, ATTR_MAX, TRUNCATED);
    policy_json_escaped(o, capped, strlen(capped));
    g_free(capped);
  }
}

static void h_strval(GString *o, const char *s)
{
  LIT(o, "{\"stringValue\":\"");
  h_text(o, s);
  LIT(o, "\"}");
}

/* appends `,` between the attributes of one array; the keys are fixed
 * dotted identifiers, with nothing to escape */
static void h_key(GString *o, bool *first, const char *key)
{
  if (!*first) policy_app_c(o, ',');
  *first = false;
  policy_app_len(o, "{\"key\":\"", 8);
  policy_app(o, key);
  policy_app_len(o, "\",\"value\":", 10);
}

static void h_str(GString *o, bool *first, const char *key, const char *s)
{
  h_key(o, first, key);
  h_strval(o, s);
  policy_app_c(o, '}');
}

/* The attributes after the first: each one's key and the text around its
 * value are one literal (KEY a string literal), so a decision's dozen
 * attributes cost a copy each, not a dozen calls and strlens. */
#define ATTR_HEAD(o, key) LIT((o), ",{\"key\":\"" key "\",\"value\":")
#define ATTR_STR(o, key, s)                                                                        \
  do {                                                                                             \
    LIT((o), ",{\"key\":\"" key "\",\"value\":{\"stringValue\":\"");                               \
    h_text((o), (s));                                                                              \
    LIT((o), "\"}}");                                                                              \
  } while (0)

static void h_array_values(GString *o, const char *const *items, size_t n)
{
  LIT(o, "{\"arrayValue\":{\"values\":[");
  for (size_t i = 0; i < n; i++) {
    if (i) policy_app_c(o, ',');
    h_strval(o, items[i]);
  }
  LIT(o, "]}}}");
}

static void h_attributes(GString *o, const char *action, json_object *input,
                         const BoxCommandArgs *cargs, const BoxDecision *d)
{
  bool deny = d->verdict == BOX_VERDICT_DENY;
  LIT(o, "[{\"key\":\"strands.box.policy.principal\",\"value\":{\"stringValue\":\"agent:self\"}}");
  const char *group;
  size_t clen;
  ATTR_STR(o, "strands.box.policy.action", action_words(action, &group, &clen));
  /* the resource's text, kept to be copied again as file.path */
  size_t res_at = o->len + sizeof(",{\"key\":\"strands.box.policy.resource\",\"value\":") - 1;
  ATTR_STR(o, "strands.box.policy.resource", d->resource);
  size_t res_len = o->len - 1 - res_at; /* {"stringValue":"…"} */
  if (deny)
    LIT(o, ",{\"key\":\"strands.box.policy.verdict\",\"value\":{\"stringValue\":\"deny\"}}");
  else
    LIT(o, ",{\"key\":\"strands.box.policy.verdict\",\"value\":{\"stringValue\":\"permit\"}}");
  ATTR_STR(o, "strands.box.policy.cause", box_cause_name(d->cause));
  if (d->cause == BOX_CAUSE_INTERNAL_FAULT)
    ATTR_STR(o, "error.type", "strands.box.policy.evaluation_error");
  if (deny) ATTR_STR(o, "strands.box.policy.reason", d->reason);
  ATTR_STR(o, "strands.box.policy.rule", d->rule);
  if (clen <= ATTR_MAX) {
    LIT(o, ",{\"key\":\"strands.box.policy.category\",\"value\":{\"stringValue\":\"");
    policy_json_escaped(o, group, clen); /* no copy of the group */
    LIT(o, "\"}}");
  } else {
    char *category = g_strndup(group, clen);
    ATTR_STR(o, "strands.box.policy.category", category);
    g_free(category);
  }
  if (d->description && *d->description)
    ATTR_STR(o, "strands.box.policy.description", d->description);
  if (g_str_has_prefix(action, "fs:")) {
    ATTR_HEAD(o, "file.path");
    g_string_set_size(o, o->len + res_len); /* room first: the copy is from o itself */
    memcpy(o->str + o->len - res_len, o->str + res_at, res_len);
    policy_app_c(o, '}');
  } else if (g_str_has_prefix(action, "shell:")) {
    const char *program = input_str(input, "program");
    if (program) ATTR_STR(o, "process.command", program);
    size_t n;
    char **words = redacted_args(cargs, &n);
    ATTR_HEAD(o, "process.command_args");
    h_array_values(o, (const char *const *)words, n);
    g_strfreev(words);
    const char *cwd = input_str(input, "cwd");
    if (cwd) ATTR_STR(o, "process.working_directory", cwd);
  } else if (strcmp(action, "net:connect") == 0 || strcmp(action, "http:request") == 0) {
    const char *host = input_str(input, "host");
    if (host) ATTR_STR(o, "server.address", host);
    json_object *v = NULL;
    if (input && json_object_object_get_ex(input, "port", &v) && v) {
      ATTR_HEAD(o, "server.port");
      if (json_object_is_type(v, json_type_int)) {
        g_string_append_printf(o, "{\"intValue\":\"%" G_GINT64_FORMAT "\"}",
                               (gint64)json_object_get_int64(v));
      } else {
        h_strval(o, json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                             : json_object_to_json_string(v));
      }
      policy_app_c(o, '}');
    }
    const char *method = input_str(input, "method");
    if (method && strcmp(action, "http:request") == 0) ATTR_STR(o, "http.request.method", method);
  }
  if (d->dry_run)
    LIT(o, ",{\"key\":\"strands.box.policy.dry_run\",\"value\":{\"boolValue\":true}}");
  const GPtrArray *ids = d->determining_ids;
  ATTR_HEAD(o, "strands.box.policy.determining.ids");
  h_array_values(o, ids ? (const char *const *)ids->pdata : NULL, ids ? ids->len : 0);
  policy_app_c(o, ']');
}

static void h_resource(GString *o, const BoxDecisionLog *log)
{
  bool first = true;
  policy_app(o, "{\"attributes\":[");
  h_str(o, &first, "service.name", "strands-box");
  h_str(o, &first, "strands.box.name", log->box_id);
  h_str(o, &first, "strands.box.source", "box");
  h_str(o, &first, "strands.box.run.id", log->run_id);
  policy_app(o, "]}");
}

/* What comes before a record's time, and what lies between its log
 * record's attributes and its span's trace id: the same for every line of
 * the log (its resource inside), rendered once at open. */
static void h_heads(const BoxDecisionLog *log, GString *logs, GString *spans)
{
  GString *res = g_string_new(NULL);
  h_resource(res, log);
  LIT(logs, "{\"resourceLogs\":[{\"resource\":");
  policy_app_len(logs, res->str, res->len);
  LIT(logs, ",\"scopeLogs\":[{\"scope\":{\"name\":\"strands-box.policy\"},\"logRecords\":[{"
            "\"timeUnixNano\":\"");
  LIT(spans, "}]}]}]}\n{\"resourceSpans\":[{\"resource\":");
  policy_app_len(spans, res->str, res->len);
  LIT(spans,
      ",\"scopeSpans\":[{\"scope\":{\"name\":\"strands-box.policy\"},\"spans\":[{\"traceId\":\"");
  g_string_free(res, TRUE);
}

static __thread BoxTraceContext thread_trace;
static __thread bool thread_traced;

static bool lower_hex(const char *s, size_t n)
{
  bool nonzero = false;
  for (size_t i = 0; i < n; i++) {
    if (!g_ascii_isxdigit(s[i]) || g_ascii_isupper(s[i])) return false;
    nonzero |= s[i] != '0';
  }
  return nonzero;
}

bool box_trace_context_parse(BoxTraceContext *ctx, const char *tp, const char *ts)
{
  /* version-trace-parent-flags; a later version may add "-…" after flags */
  if (!tp || strlen(tp) < 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-') return false;
  if (!g_ascii_isxdigit(tp[0]) || !g_ascii_isxdigit(tp[1]) || g_ascii_isupper(tp[0]) ||
      g_ascii_isupper(tp[1]) || strncmp(tp, "ff", 2) == 0)
    return false;
  if (strncmp(tp, "00", 2) == 0 ? tp[55] != '\0' : tp[55] != '\0' && tp[55] != '-') return false;
  if (!lower_hex(tp + 3, 32) || !lower_hex(tp + 36, 16)) return false;
  if (!g_ascii_isxdigit(tp[53]) || !g_ascii_isxdigit(tp[54]) || g_ascii_isupper(tp[53]) ||
      g_ascii_isupper(tp[54]))
    return false;
  memcpy(ctx->trace, tp + 3, 32);
  ctx->trace[32] = '\0';
  memcpy(ctx->parent, tp + 36, 16);
  ctx->parent[16] = '\0';
  ctx->sampled = g_ascii_xdigit_value(tp[54]) & 1;
  g_strlcpy(ctx->state, ts ? ts : "", sizeof ctx->state);
  return true;
}

void box_decision_log_set_trace(const BoxTraceContext *ctx)
{
  thread_traced = ctx != NULL;
  if (ctx) thread_trace = *ctx;
}

const BoxTraceContext *box_decision_log_trace(void)
{
  return thread_traced ? &thread_trace : NULL;
}

/* The log record's own attributes: the decision's (attrs, a JSON array),
 * then the parent it was made under. */
static void log_attributes(GString *o, const GString *attrs, const BoxTraceContext *ctx)
{
  if (!ctx) {
    policy_app_len(o, attrs->str, attrs->len);
    return;
  }
  policy_app_len(o, attrs->str, attrs->len - 1); /* up to its closing ']' */
  ATTR_STR(o, "strands.box.trace.parent_span_id", ctx->parent);
  if (ctx->sampled)
    LIT(o, ",{\"key\":\"strands.box.trace.parent_sampled\",\"value\":{\"boolValue\":true}}");
  else
    LIT(o, ",{\"key\":\"strands.box.trace.parent_sampled\",\"value\":{\"boolValue\":false}}");
  if (ctx->state[0]) ATTR_STR(o, "strands.box.trace.state", ctx->state);
  LIT(o, "]");
}

/* The two lines appended to o; attrs is scratch space.  With ctx, the span
 * is in ctx's trace (trace is not used) and a child of its parent. */
static void render_into(const BoxDecisionLog *log, GString *o, GString *attrs, const char *action,
                        json_object *input, const BoxCommandArgs *command_args,
                        const BoxDecision *decision, const char *nanos, const char *trace,
                        const char *span, const BoxTraceContext *ctx)
{
  if (ctx) trace = ctx->trace;
  if (!action) action = decision->action ? decision->action : "";
  bool deny = decision->verdict == BOX_VERDICT_DENY;
  g_string_truncate(attrs, 0);
  h_attributes(attrs, action, input, command_args, decision);
  size_t nlen = strlen(nanos), tlen = strlen(trace), slen = strlen(span);
  /* room for all but the escaped body: one growth at most */
  size_t need = log->head_logs->len + log->head_spans->len + 2 * attrs->len + 4 * nlen +
                2 * (tlen + slen) + strlen(action) + 512 + (ctx ? 2 * sizeof *ctx + 256 : 0);
  if (o->len + need >= o->allocated_len) {
    size_t len = o->len;
    g_string_set_size(o, len + need);
    g_string_truncate(o, len);
  }
  policy_app_len(o, log->head_logs->str, log->head_logs->len);
  policy_app_len(o, nanos, nlen);
  LIT(o, "\",\"observedTimeUnixNano\":\"");
  policy_app_len(o, nanos, nlen);
  if (deny)
    LIT(o, "\",\"severityNumber\":13,\"severityText\":\"deny\"");
  else
    LIT(o, "\",\"severityNumber\":9,\"severityText\":\"permit\"");
  LIT(o, ",\"eventName\":\"strands.box.policy.decision\",\"body\":");
  h_strval(o, decision->message);
  LIT(o, ",\"traceId\":\"");
  policy_app_len(o, trace, tlen);
  LIT(o, "\",\"spanId\":\"");
  policy_app_len(o, span, slen);
  LIT(o, "\",\"attributes\":");
  log_attributes(o, attrs, ctx);
  policy_app_len(o, log->head_spans->str, log->head_spans->len);
  policy_app_len(o, trace, tlen);
  LIT(o, "\",\"spanId\":\"");
  policy_app_len(o, span, slen);
  if (ctx) {
    LIT(o, "\",\"parentSpanId\":\"");
    policy_app_len(o, ctx->parent, strlen(ctx->parent));
    if (ctx->state[0]) {
      LIT(o, "\",\"traceState\":\"");
      h_text(o, ctx->state);
    }
  }
  LIT(o, "\",\"name\":\"policy ");
  policy_json_escaped(o, action, strlen(action));
  LIT(o, "\",\"kind\":1,\"startTimeUnixNano\":\"");
  policy_app_len(o, nanos, nlen);
  LIT(o, "\",\"endTimeUnixNano\":\"");
  policy_app_len(o, nanos, nlen);
  LIT(o, "\",\"attributes\":");
  policy_app_len(o, attrs->str, attrs->len);
  LIT(o, "}]}]}]}\n");
}

char *policy_decision_log_render(const BoxDecisionLog *log, const char *action, json_object *input,
                                 const BoxCommandArgs *command_args, const BoxDecision *decision,
                                 const char *nanos, const char *trace, const char *span)
{
  GString *attrs = g_string_sized_new(1024);
  GString *o = g_string_sized_new(4096);
  render_into(log, o, attrs, action, input, command_args, decision, nanos, trace, span, NULL);
  g_string_free(attrs, TRUE);
  return g_string_free(o, FALSE);
}

/* Trace and span ids need to be unique, not secret: a per-thread generator
 * seeded once, instead of two getrandom(2) calls per decision. */
static void random_hex_fast(char *out, size_t nbytes)
{
  /* splitmix64 over a per-thread state seeded from getrandom(2): eight
   * bytes a step */
  static __thread uint64_t state;
  static __thread bool seeded;
  if (!seeded) {
    if (getrandom(&state, sizeof state, GRND_NONBLOCK) != (ssize_t)sizeof state)
      state = (uint64_t)g_get_real_time() ^ ((uint64_t)getpid() << 32) ^
              (uint64_t)(uintptr_t)&state ^ (uint64_t)g_get_monotonic_time() << 17;
    seeded = true;
  }
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < nbytes; i += 8) {
    uint64_t z = (state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    for (size_t k = 0; k < 8 && i + k < nbytes; k++, z >>= 8) {
      out[2 * (i + k)] = hex[(z >> 4) & 15];
      out[2 * (i + k) + 1] = hex[z & 15];
    }
  }
  out[2 * nbytes] = '\0';
}

void box_decision_log_now(char nanos[32])
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  policy_put_decimal(nanos, (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec);
}

static void attrs_free(gpointer p)
{
  g_string_free(p, TRUE);
}
static GPrivate attrs_key = G_PRIVATE_INIT(attrs_free);

void box_decision_log_render_into(const BoxDecisionLog *log, GString *buf, const char *action,
                                  json_object *input, const BoxCommandArgs *command_args,
                                  const BoxDecision *decision, const char *nanos)
{
  if (!log || !decision) return;
  GString *attrs = g_private_get(&attrs_key); /* scratch, kept: no allocation per decision */
  if (!attrs) {
    attrs = g_string_sized_new(2048);
    g_private_set(&attrs_key, attrs);
  }
  char trace[33], span[17];
  random_hex_fast(trace, 16);
  random_hex_fast(span, 8);
  render_into(log, buf, attrs, action, input, command_args, decision, nanos, trace, span,
              box_decision_log_trace());
}

/* lock held: all of len written, or as much as the file took (best
 * effort: a failed write is lost) */
static void write_out(BoxDecisionLog *log, const char *line, size_t len)
{
  if (log->sink) {
    log->sink(log->sink_data, line, len);
    return;
  }
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(log->fd, line + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
}

static Queued *queued_new(const char *action, const BoxDecision *d)
{
  /* the record and its packed decision in one block: it is made on the
   * deciding thread and freed on the writer's, where a second block would
   * be one more free into another thread's arena */
  void *block;
  BoxPackedDecision *p = policy_decision_pack_after(d, action, sizeof(Queued), &block);
  Queued *q = block;
  q->d = p;
  box_decision_log_now(q->nanos);
  return q;
}

/* lock held: the queued decisions' lines, rendered and written now */
static void drain(BoxDecisionLog *log)
{
  g_mutex_lock(&log->qlock);
  GPtrArray *q = log->queued;
  log->queued = log->spare;
  log->spare = q;
  g_mutex_unlock(&log->qlock);
  if (!q->len) return;
  for (guint i = 0; i < q->len; i++) {
    Queued *e = q->pdata[i];
    const BoxPackedDecision *p = e->d;
    /* the renderer reads the ids' pdata and len only, and the strings */
    GPtrArray ids = { (gpointer *)p->ids, p->nids };
    BoxDecision d = { p->verdict,
                      p->cause,
                      (char *)p->action,
                      (char *)p->resource,
                      (char *)p->rule,
                      (char *)p->description,
                      (char *)p->message,
                      (char *)p->reason,
                      &ids,
                      p->dry_run,
                      p };
    char trace[33];
    random_hex_fast(trace, 16);
    render_into(log, log->out, log->attrs, p->action, NULL, NULL, &d, e->nanos, trace, e->span,
                e->ctx);
    g_free(e->ctx);
    g_free(e);
  }
  g_ptr_array_set_size(q, 0);
  write_out(log, log->out->str, log->out->len);
  g_string_truncate(log->out, 0);
  if (log->out->allocated_len > 4u * 1024 * 1024) { /* a burst's buffer is not kept */
    g_string_free(log->out, TRUE);
    log->out = g_string_sized_new(64 * 1024);
  }
}

/* Woken by the first line queued after it found the queue empty; then
 * waits QUEUE_GATHER_US for the lines that follow it, and writes them all. */
static gpointer writer_main(gpointer data)
{
  BoxDecisionLog *log = data;
  g_mutex_lock(&log->qlock);
  while (!log->stopping) {
    if (!log->queued->len) {
      log->writer_idle = true;
      g_cond_wait(&log->qcond, &log->qlock);
      log->writer_idle = false;
      continue;
    }
    g_mutex_unlock(&log->qlock);
    g_usleep(QUEUE_GATHER_US);
    g_mutex_lock(&log->lock);
    drain(log);
    g_mutex_unlock(&log->lock);
    g_mutex_lock(&log->qlock);
  }
  g_mutex_unlock(&log->qlock);
  return NULL;
}

/* One write(2) for the queued lines and this one, before it is answered:
 * a line answered is a line on disk even if boxd is killed right after. */
static void log_write(BoxDecisionLog *log, const char *line, size_t len)
{
  g_mutex_lock(&log->lock);
  drain(log);
  write_out(log, line, len);
  g_mutex_unlock(&log->lock);
}

void box_decision_log_flush(BoxDecisionLog *log)
{
  if (!log) return;
  g_mutex_lock(&log->lock);
  drain(log);
  g_mutex_unlock(&log->lock);
}

void box_decision_log_write(BoxDecisionLog *log, GString *buf)
{
  if (!log || !buf || !buf->len) return;
  log_write(log, buf->str, buf->len);
  g_string_truncate(buf, 0);
}

static GPrivate line_key = G_PRIVATE_INIT(attrs_free);

/* The line is rendered into a buffer the thread keeps: a fresh 4 KiB
 * buffer per decision made malloc grow and trim the thread's arena each
 * time (a page fault and a cold copy on every file operation). */
static GString *render_line(BoxDecisionLog *log, const char *action, json_object *input,
                            const BoxCommandArgs *command_args, const BoxDecision *decision)
{
  char nanos[32];
  box_decision_log_now(nanos);
  GString *line = g_private_get(&line_key);
  if (!line) {
    line = g_string_sized_new(8192);
    g_private_set(&line_key, line);
  }
  g_string_truncate(line, 0);
  box_decision_log_render_into(log, line, action, input, command_args, decision, nanos);
  return line;
}

static void line_done(GString *line)
{
  if (line->allocated_len > 256 * 1024) { /* one huge line is not kept */
    g_private_replace(&line_key, g_string_sized_new(8192));
  }
}

void box_decision_log_append_args(BoxDecisionLog *log, const char *action, json_object *input,
                                  const BoxCommandArgs *command_args, const BoxDecision *decision)
{
  if (!log || !decision) return;
  GString *line = render_line(log, action, input, command_args, decision);
  log_write(log, line->str, line->len);
  line_done(line);
}

void box_decision_log_append_queued(BoxDecisionLog *log, const char *action, json_object *input,
                                    const BoxDecision *decision, char id[17])
{
  if (!log || !decision) return;
  if (!action) action = decision->action ? decision->action : "";
  if (!g_str_has_prefix(action, "fs:")) { /* only an fs decision's lines ignore the input */
    char nanos[32], trace[33], span[17];
    box_decision_log_now(nanos);
    random_hex_fast(trace, 16);
    random_hex_fast(span, 8);
    char *line = policy_decision_log_render(log, action, input, NULL, decision, nanos, trace, span);
    log_write(log, line, strlen(line));
    g_free(line);
    if (id) memcpy(id, span, sizeof span);
    return;
  }
  Queued *q = queued_new(action, decision);
  /* a command's decisions are spans of its trace, queued or not */
  const BoxTraceContext *ctx = box_decision_log_trace();
  q->ctx = ctx ? g_memdup2(ctx, sizeof *ctx) : NULL;
  random_hex_fast(q->span, 8);
  if (id) memcpy(id, q->span, sizeof q->span);
  g_mutex_lock(&log->qlock);
  g_ptr_array_add(log->queued, q);
  bool full = log->queued->len > QUEUE_MAX;
  if (log->writer_idle) {
    log->writer_idle = false; /* one wake-up per batch, not per decision */
    g_cond_signal(&log->qcond);
  }
  g_mutex_unlock(&log->qlock);
  if (full) box_decision_log_flush(log);
}
