/* kernel.c — kernel refusal records (spec/runtime.md §8.4): a call seccomp
 * refused a contained process, as boxd's listener saw it, under the scope
 * `strands-box.containment`, log only.
 *
 * A program that retries a refused call in a loop would otherwise write a
 * record per attempt, so each (executable, syscall, arguments) is recorded
 * once and its repeats counted for a 10 s window; and a program that
 * varies its arguments would grow the table without bound, so past 256
 * keys only a count per syscall is kept. */
#include "telemetry/telemetry-private.h"

#include <string.h>

#define KERNEL_SCOPE "strands-box.containment"
#define KERNEL_WINDOW (10 * G_USEC_PER_SEC)
#define KERNEL_KEYS 256
#define KERNEL_ARGS 64
/* WARN: the kernel said no, whatever policy would have */
#define KERNEL_SEVERITY 13

typedef struct {
  char *executable, *syscall, *arguments;
  char **args;       /* the latest caller's command line */
  int pid;           /* the latest caller */
  gint64 window_end; /* 0: no window open, the next refusal is recorded at once */
  uint64_t repeats;  /* refusals inside the open window, not yet recorded */
} Key;

struct BoxKernelRecords {
  GMutex lock;
  GHashTable *keys;    /* "exe\x1fsyscall\x1fargs" -> Key* */
  GHashTable *buckets; /* syscall -> uint64_t* counted past the cap */
  bool capped;         /* refusals_unobserved (rate_cap) said */
};

static void key_free(gpointer p)
{
  Key *k = p;
  g_free(k->executable);
  g_free(k->syscall);
  g_free(k->arguments);
  g_strfreev(k->args);
  g_free(k);
}

BoxKernelRecords *box_kernel_records_new(void)
{
  BoxKernelRecords *k = g_new0(BoxKernelRecords, 1);
  g_mutex_init(&k->lock);
  k->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, key_free);
  k->buckets = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  return k;
}

/* One record's line; executable NULL: a bucket's count, whoever called. */
static char *record_line(BoxTelemetry *t, const char *syscall, const char *arguments,
                         const char *executable, int pid, char *const *args, uint64_t suppressed)
{
  char nanos[32];
  box_telemetry_now(nanos);
  json_object *attrs = json_object_new_array();
  box_telemetry_attr_value(attrs, "strands.box.containment.syscall", "stringValue",
                           json_object_new_string(syscall));
  if (arguments && *arguments)
    box_telemetry_attr_value(attrs, "strands.box.containment.arguments", "stringValue",
                             box_telemetry_bounded_string(arguments));
  box_telemetry_attr_value(attrs, "strands.box.containment.errno", "stringValue",
                           json_object_new_string("EPERM"));
  char count[24];
  g_snprintf(count, sizeof count, "%" G_GUINT64_FORMAT, suppressed);
  box_telemetry_attr_value(attrs, "strands.box.containment.suppressed", "intValue",
                           json_object_new_string(count));
  if (executable) {
    char pid_text[16];
    g_snprintf(pid_text, sizeof pid_text, "%d", pid);
    box_telemetry_attr_value(attrs, "process.pid", "intValue", json_object_new_string(pid_text));
    box_telemetry_attr_value(attrs, "process.executable.path", "stringValue",
                             box_telemetry_bounded_string(executable));
  }
  if (args && args[0]) {
    json_object *values = json_object_new_array();
    for (int i = 0; args[i] && i < KERNEL_ARGS; i++) {
      json_object *v = json_object_new_object();
      json_object_object_add(v, "stringValue", box_telemetry_bounded_string(args[i]));
      json_object_array_add(values, v);
    }
    json_object *array = json_object_new_object();
    json_object_object_add(array, "values", values);
    box_telemetry_attr_value(attrs, "process.command_args", "arrayValue", array);
  }
  json_object *rec = json_object_new_object();
  json_object_object_add(rec, "timeUnixNano", json_object_new_string(nanos));
  json_object_object_add(rec, "observedTimeUnixNano", json_object_new_string(nanos));
  json_object_object_add(rec, "severityNumber", json_object_new_int(KERNEL_SEVERITY));
  json_object_object_add(rec, "severityText", json_object_new_string("refused"));
  json_object_object_add(rec, "eventName",
                         json_object_new_string("strands.box.containment.refusal"));
  g_autofree char *said =
    g_strdup_printf("%s refused %s%s%s: EPERM", executable ? executable : "a contained process",
                    syscall, arguments && *arguments ? " " : "", arguments ? arguments : "");
  json_object *body = json_object_new_object();
  json_object_object_add(body, "stringValue", box_telemetry_bounded_string(said));
  json_object_object_add(rec, "body", body);
  json_object_object_add(rec, "attributes", attrs);
  return box_telemetry_export_line(box_telemetry_resource(t), KERNEL_SCOPE, "resourceLogs",
                                   "scopeLogs", "logRecords", rec);
}

static char *key_line(BoxTelemetry *t, const Key *k, uint64_t suppressed)
{
  return record_line(t, k->syscall, k->arguments, k->executable, k->pid, k->args, suppressed);
}

/* Appends the repeats of every window that ended by now (all of them when
 * now is G_MAXINT64); a window that held repeats goes on for another 10 s,
 * so a refusal in a loop costs one record per window.  Lock held. */
static void windows_ended(BoxKernelRecords *kr, BoxTelemetry *t, gint64 now, GString *out)
{
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, kr->keys);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    Key *k = value;
    if (!k->window_end || now < k->window_end) continue;
    if (!k->repeats) {
      k->window_end = 0;
      continue;
    }
    g_autofree char *line = key_line(t, k, k->repeats);
    g_string_append(out, line);
    k->repeats = 0;
    k->window_end = now == G_MAXINT64 ? 0 : now + KERNEL_WINDOW;
  }
}

void box_telemetry_kernel(BoxTelemetry *t, const BoxTelemetryRefusal *r)
{
  BoxKernelRecords *kr = t ? box_telemetry_kernel_records(t) : NULL;
  if (!kr) return;
  const char *exe = r->executable ? r->executable : "";
  const char *arguments = r->arguments ? r->arguments : "";
  g_autofree char *name = g_strdup_printf("%s\x1f%s\x1f%s", exe, r->syscall, arguments);
  gint64 now = g_get_monotonic_time();
  g_autofree char *line = NULL;
  bool cap_reached = false;
  g_mutex_lock(&kr->lock);
  Key *k = g_hash_table_lookup(kr->keys, name);
  if (k && k->window_end && now < k->window_end) {
    k->repeats++;
    k->pid = r->pid;
    g_strfreev(k->args);
    k->args = g_strdupv((char **)r->args);
  } else if (k || g_hash_table_size(kr->keys) < KERNEL_KEYS) {
    if (!k) {
      k = g_new0(Key, 1);
      k->executable = r->executable ? g_strdup(r->executable) : NULL;
      k->syscall = g_strdup(r->syscall);
      k->arguments = g_strdup(arguments);
      g_hash_table_insert(kr->keys, g_steal_pointer(&name), k);
    }
    GString *out = g_string_new(NULL);
    if (k->repeats) { /* a window that ended with no tick since */
      g_autofree char *earlier = key_line(t, k, k->repeats);
      g_string_append(out, earlier);
    }
    k->pid = r->pid;
    g_strfreev(k->args);
    k->args = g_strdupv((char **)r->args);
    k->repeats = 0;
    k->window_end = now + KERNEL_WINDOW;
    g_autofree char *first = key_line(t, k, 0);
    g_string_append(out, first);
    line = g_string_free(out, FALSE);
  } else {
    uint64_t *n = g_hash_table_lookup(kr->buckets, r->syscall);
    if (!n) {
      n = g_new0(uint64_t, 1);
      g_hash_table_insert(kr->buckets, g_strdup(r->syscall), n);
    }
    ++*n;
    cap_reached = !kr->capped;
    kr->capped = true;
  }
  g_mutex_unlock(&kr->lock);
  if (line) box_telemetry_deliver(t, BOX_TELEMETRY_KERNEL, line);
  if (cap_reached) {
    g_autofree char *detail =
      g_strdup_printf("more than %d kinds of kernel refusal: the rest are counted per syscall "
                      "and recorded at stop",
                      KERNEL_KEYS);
    box_telemetry_control(t, "refusals_unobserved", "seccomp", "rate_cap", detail);
  }
}

void box_telemetry_kernel_tick(BoxTelemetry *t)
{
  BoxKernelRecords *kr = t ? box_telemetry_kernel_records(t) : NULL;
  if (!kr) return;
  GString *out = g_string_new(NULL);
  g_mutex_lock(&kr->lock);
  windows_ended(kr, t, g_get_monotonic_time(), out);
  g_mutex_unlock(&kr->lock);
  if (out->len) box_telemetry_deliver(t, BOX_TELEMETRY_KERNEL, out->str);
  g_string_free(out, TRUE);
}

void box_kernel_records_flush(BoxKernelRecords *kr, BoxTelemetry *t)
{
  if (!kr) return;
  GString *out = g_string_new(NULL);
  g_mutex_lock(&kr->lock);
  windows_ended(kr, t, G_MAXINT64, out);
  GHashTableIter it;
  gpointer name, count;
  g_hash_table_iter_init(&it, kr->buckets);
  while (g_hash_table_iter_next(&it, &name, &count)) {
    g_autofree char *line = record_line(t, name, NULL, NULL, 0, NULL, *(uint64_t *)count);
    g_string_append(out, line);
  }
  g_hash_table_remove_all(kr->buckets); /* said: not said twice */
  g_mutex_unlock(&kr->lock);
  if (out->len) box_telemetry_deliver(t, BOX_TELEMETRY_KERNEL, out->str);
  g_string_free(out, TRUE);
}

void box_kernel_records_free(BoxKernelRecords *kr)
{
  if (!kr) return;
  g_hash_table_destroy(kr->keys);
  g_hash_table_destroy(kr->buckets);
  g_mutex_clear(&kr->lock);
  g_free(kr);
}
