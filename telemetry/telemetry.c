/* telemetry.c — a run's targets (spec/runtime.md §2.6, §8.1, §8.6): each
 * declared `[telemetry.<label>]` file or OTLP receiver, or else the default
 * file; the decisions the decision log renders, split by verdict for the
 * targets whose `include` asks; the control records; the counters `box ls`
 * reads. */
#include "telemetry/telemetry-private.h"
#include "policy/path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
  const char *word;
  unsigned bit;
} signal_words[] = {
  { "deny", BOX_TELEMETRY_DENY },       { "permit", BOX_TELEMETRY_PERMIT },
  { "trace", BOX_TELEMETRY_TRACE },     { "logs", BOX_TELEMETRY_LOGS },
  { "metrics", BOX_TELEMETRY_METRICS }, { "kernel", BOX_TELEMETRY_KERNEL },
};

unsigned box_telemetry_signal_of(const char *word)
{
  for (size_t i = 0; i < G_N_ELEMENTS(signal_words); i++)
    if (strcmp(word, signal_words[i].word) == 0) return signal_words[i].bit;
  return 0;
}

void box_telemetry_target_free(gpointer p)
{
  BoxTelemetryTarget *t = p;
  if (!t) return;
  g_free(t->label);
  g_free(t->destination);
  g_free(t->secret_env);
  g_free(t->secret_header);
  g_free(t);
}

typedef struct {
  char *label;
  unsigned include;
  int fd;        /* a file target, else -1 */
  char *path;    /* its path, expanded */
  BoxOtlp *otlp; /* an OTLP target, else NULL */
  GMutex lock;   /* the file: one writer at a time, whole lines */
  GString *kept; /* the decisions it takes, when it takes only one verdict */
} Target;

struct BoxTelemetry {
  Target *targets;
  size_t n;
  bool split;           /* some target takes one verdict only */
  char *resource_json;  /* the resource of every box record */
  size_t resource_skip; /* a decision's log line up to the end of its resource */
  char trace[33];       /* the run's control-plane trace */
  char root_span[17];   /* box_started's span: the trace's one root */
  bool started;
  GMutex control_lock; /* the control trace's root */
  uint64_t *stats;     /* BoxTelemetryStat counters, mapped from stats_path */
  uint64_t local_stats[BOX_TELEMETRY_STAT_N];
  size_t stats_len;
  BoxKernelRecords *kernel; /* NULL: no target takes `kernel` */
};

static bool refuse(GError **error, const char *label, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static bool refuse(GError **error, const char *label, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *why = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "invalid `[telemetry.%s]` target: %s", label,
              why);
  return false;
}

static bool has_dotdot(const char *p)
{
  g_auto(GStrv) parts = g_strsplit(p, "/", -1);
  for (char **c = parts; *c; c++)
    if (strcmp(*c, "..") == 0) return true;
  return false;
}

/* The file a target names, judged (§2.6) and expanded; NULL after saying
 * why.  The box directory's own tree is refused outside private/, where
 * the workload or a tool could reach the file (lexically, and through the
 * links of the directories that exist). */
static char *file_destination(const BoxTelemetryTarget *spec, const BoxTelemetryRun *run,
                              GError **error)
{
  const char *p = spec->destination;
  if (p[0] != '/' && !g_str_has_prefix(p, "~/")) {
    refuse(error, spec->label, "a file destination must be absolute or begin with `~/`");
    return NULL;
  }
  if (has_dotdot(p)) {
    refuse(error, spec->label, "the destination \"%s\" carries a `..` component", p);
    return NULL;
  }
  char *path = p[0] == '~' ? g_build_filename(run->operator_home, p + 2, NULL) : g_strdup(p);
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *real_dir = realpath(dir, NULL);
  g_autofree char *base = g_path_get_basename(path);
  g_autofree char *real = real_dir ? g_build_filename(real_dir, base, NULL) : NULL;
  g_autofree char *real_box = realpath(run->box_dir, NULL);
  g_autofree char *private_dir = g_build_filename(run->box_dir, "private", NULL);
  g_autofree char *real_private =
    real_box ? g_build_filename(real_box, "private", NULL) : g_strdup(private_dir);
  bool inside = box_path_within(path, run->box_dir) && !box_path_within(path, private_dir);
  if (real && real_box)
    inside |= box_path_within(real, real_box) && !box_path_within(real, real_private);
  if (inside) {
    refuse(error, spec->label,
           "\"%s\" is inside the box directory %s but outside its private tree, where a "
           "process could truncate it; name a destination under `private/`, or outside the box, "
           "or declare no target and take the default",
           p, run->box_dir);
    g_free(path);
    return NULL;
  }
  return path;
}

static int open_file(const char *path, const char *label, GError **error)
{
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || fchmod(fd, 0600) != 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    if (label)
      refuse(error, label, "cannot open %s: %s", path, g_strerror(e));
    else
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                  "telemetry setup failed: cannot open the decision log %s: %s", path,
                  g_strerror(e));
    return -1;
  }
  return fd;
}

/* The secret's header line ("Name: value"), or NULL after saying why. */
static char *secret_header(const BoxTelemetryTarget *spec, GError **error)
{
  const char *value = g_getenv(spec->secret_env);
  if (!value || !*value) {
    refuse(error, spec->label, "`secret.ref` env://%s names a variable that is not set",
           spec->secret_env);
    return NULL;
  }
  if (strpbrk(value, "\r\n")) {
    refuse(error, spec->label, "`secret.ref` env://%s holds a line break", spec->secret_env);
    return NULL;
  }
  return g_strdup_printf("%s: %s", spec->secret_header ? spec->secret_header : "Authorization",
                         value);
}

static void map_stats(BoxTelemetry *t, const char *path)
{
  t->stats = t->local_stats;
  if (!path) return;
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  t->stats_len = sizeof(uint64_t) * BOX_TELEMETRY_STAT_N;
  void *m = MAP_FAILED;
  if (ftruncate(fd, (off_t)t->stats_len) == 0)
    m = mmap(NULL, t->stats_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m != MAP_FAILED) t->stats = m;
}

static void random_hex(char *out, size_t bytes)
{
  guint8 raw[16];
  if (getrandom(raw, bytes, 0) != (ssize_t)bytes)
    for (size_t i = 0; i < bytes; i++) raw[i] = (guint8)g_random_int();
  for (size_t i = 0; i < bytes; i++) g_snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static void close_targets(Target *targets, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    Target *tg = &targets[i];
    box_otlp_stop(tg->otlp);
    if (tg->fd >= 0) close(tg->fd);
    g_mutex_clear(&tg->lock);
    if (tg->kept) g_string_free(tg->kept, TRUE);
    g_free(tg->label);
    g_free(tg->path);
  }
  g_free(targets);
}

BoxTelemetry *box_telemetry_open(const BoxTelemetryTarget *const *specs, const BoxTelemetryRun *run,
                                 GError **error)
{
  size_t n = 0;
  while (specs && specs[n]) n++;
  Target *targets = g_new0(Target, n ? n : 1);
  size_t opened = 0;
  bool ok = true;
  if (!n) { /* the default: every record, in the box's private tree */
    targets[0] = (Target){ .include = BOX_TELEMETRY_ALL, .fd = -1 };
    targets[0].path = g_build_filename(run->box_dir, "private", "telemetry", "records.jsonl", NULL);
    g_mutex_init(&targets[0].lock);
    opened = 1;
    targets[0].fd = open_file(targets[0].path, NULL, error);
    ok = targets[0].fd >= 0;
  }
  /* every destination is judged before any receiver is started */
  for (size_t i = 0; ok && i < n; i++) {
    const BoxTelemetryTarget *s = specs[i];
    Target *tg = &targets[i];
    *tg = (Target){ .label = g_strdup(s->label), .include = s->include, .fd = -1 };
    g_mutex_init(&tg->lock);
    opened = i + 1;
    if (!s->otlp) {
      tg->path = file_destination(s, run, error);
      ok = tg->path && (tg->fd = open_file(tg->path, s->label, error)) >= 0;
    } else if (!g_str_has_prefix(s->destination, "http://") &&
               !g_str_has_prefix(s->destination, "https://")) {
      ok = refuse(error, s->label, "an otlp destination must be an http:// or https:// URL");
    }
  }
  g_autofree char **headers = g_new0(char *, n + 1);
  for (size_t i = 0; ok && i < n; i++)
    if (specs[i]->otlp && specs[i]->secret_env)
      ok = (headers[i] = secret_header(specs[i], error)) != NULL;
  if (!ok) {
    for (size_t i = 0; i < n; i++) g_free(headers[i]);
    close_targets(targets, opened);
    return NULL;
  }
  BoxTelemetry *t = g_new0(BoxTelemetry, 1);
  t->targets = targets;
  t->n = n ? n : 1;
  map_stats(t, run->stats_path);
  for (size_t i = 0; i < n; i++) {
    if (specs[i]->otlp)
      targets[i].otlp = box_otlp_start(specs[i]->label, specs[i]->destination, headers[i],
                                       specs[i]->protobuf, &t->stats[BOX_TELEMETRY_STAT_DROPPED]);
    g_free(headers[i]);
  }
  for (size_t i = 0; i < t->n; i++) {
    unsigned verdicts = targets[i].include & (BOX_TELEMETRY_DENY | BOX_TELEMETRY_PERMIT);
    if (verdicts && verdicts != (BOX_TELEMETRY_DENY | BOX_TELEMETRY_PERMIT)) {
      t->split = true;
      targets[i].kept = g_string_sized_new(16 * 1024);
    }
  }
  t->resource_json = box_telemetry_resource_json(run->box_id, run->run_id);
  t->resource_skip = strlen("{\"resourceLogs\":[{\"resource\":") + strlen(t->resource_json);
  random_hex(t->trace, 16);
  g_mutex_init(&t->control_lock);
  for (size_t i = 0; i < t->n && !t->kernel; i++)
    if (targets[i].include & BOX_TELEMETRY_KERNEL) t->kernel = box_kernel_records_new();
  return t;
}

/* lock held, or the only writer: best effort (§8.7), a failed write is lost */
static void write_all(int fd, const char *p, size_t len)
{
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    len -= (size_t)w;
  }
}

static void deliver(Target *tg, const char *lines, size_t len)
{
  if (!len) return;
  if (tg->otlp) {
    box_otlp_queue(tg->otlp, lines, len);
    return;
  }
  g_mutex_lock(&tg->lock);
  write_all(tg->fd, lines, len);
  g_mutex_unlock(&tg->lock);
}

/* Whether the decision whose log line starts at p is a denial: its
 * severity is the first "severityNumber" of the line (the resource before
 * it holds strings only, where a quote is escaped).  The search starts past
 * the resource the decision log rendered (skip: its opening and our
 * rendering of the same resource), and from the start if that missed. */
static bool is_denial(const char *p, size_t n, size_t skip)
{
  static const char key[] = "\"severityNumber\":";
  const char *s = skip < n ? memmem(p + skip, n - skip, key, sizeof key - 1) : NULL;
  if (!s) s = memmem(p, n, key, sizeof key - 1);
  return s && (size_t)(p + n - s) > sizeof key && memcmp(s + sizeof key - 1, "13", 2) == 0;
}

void box_telemetry_decisions(void *data, const char *lines, size_t len)
{
  BoxTelemetry *t = data;
  const char *end = lines + len;
  uint64_t decisions = 0, denials = 0;
  for (const char *p = lines; p < end;) {
    const char *log_end = memchr(p, '\n', (size_t)(end - p));
    if (!log_end) break;
    const char *span_end = memchr(log_end + 1, '\n', (size_t)(end - log_end - 1));
    const char *next = span_end ? span_end + 1 : end;
    bool deny = is_denial(p, (size_t)(log_end - p), t->resource_skip);
    decisions++;
    denials += deny;
    if (t->split) {
      unsigned bit = deny ? BOX_TELEMETRY_DENY : BOX_TELEMETRY_PERMIT;
      for (size_t i = 0; i < t->n; i++)
        if (t->targets[i].kept && (t->targets[i].include & bit))
          g_string_append_len(t->targets[i].kept, p, next - p);
    }
    p = next;
  }
  /* the decision log's lock is held: no other thread is in here */
  t->stats[BOX_TELEMETRY_STAT_DECISIONS] += decisions;
  t->stats[BOX_TELEMETRY_STAT_DENIALS] += denials;
  for (size_t i = 0; i < t->n; i++) {
    Target *tg = &t->targets[i];
    if (tg->kept) {
      deliver(tg, tg->kept->str, tg->kept->len);
      g_string_truncate(tg->kept, 0);
    } else if (tg->include & (BOX_TELEMETRY_DENY | BOX_TELEMETRY_PERMIT)) {
      deliver(tg, lines, len);
    }
  }
}

void box_telemetry_deliver(BoxTelemetry *t, unsigned signal, const char *lines)
{
  for (size_t i = 0; i < t->n; i++)
    if (t->targets[i].include & signal) deliver(&t->targets[i], lines, strlen(lines));
}

void box_telemetry_relay(BoxTelemetry *t, BoxOtlpSignal signal, json_object *request)
{
  /* §8.6: agent spans go where `trace` does; its logs and metrics always pass */
  char *line = NULL;
  for (size_t i = 0; i < t->n; i++) {
    Target *tg = &t->targets[i];
    if (signal == BOX_OTLP_TRACES && !(tg->include & BOX_TELEMETRY_TRACE)) continue;
    if (tg->otlp) {
      box_otlp_post_now(tg->otlp, signal, request); /* best effort (§8.7) */
      continue;
    }
    if (!line)
      line = g_strconcat(json_object_to_json_string_ext(request, JSON_C_TO_STRING_PLAIN |
                                                                   JSON_C_TO_STRING_NOSLASHESCAPE),
                         "\n", NULL);
    deliver(tg, line, strlen(line));
  }
  g_free(line);
}

const char *box_telemetry_resource(const BoxTelemetry *t)
{
  return t->resource_json;
}

BoxKernelRecords *box_telemetry_kernel_records(BoxTelemetry *t)
{
  return t->kernel;
}

void box_telemetry_control(BoxTelemetry *t, const char *operation, const char *subject,
                           const char *reason, const char *detail)
{
  if (!t) return;
  char span[17];
  random_hex(span, 8);
  g_mutex_lock(&t->control_lock);
  const char *parent = t->started ? t->root_span : NULL;
  if (!t->started) {
    memcpy(t->root_span, span, sizeof span);
    t->started = true;
  }
  char *lines = box_telemetry_control_lines(t->resource_json, operation, subject, reason, detail,
                                            t->trace, span, parent);
  g_mutex_unlock(&t->control_lock);
  box_telemetry_deliver(t, BOX_TELEMETRY_TRACE, lines);
  g_free(lines);
}

const char *box_telemetry_decision_file(const BoxTelemetry *t)
{
  for (size_t i = 0; t && i < t->n; i++) {
    const Target *tg = &t->targets[i];
    if (tg->fd >= 0 && (tg->include & BOX_TELEMETRY_DENY) && (tg->include & BOX_TELEMETRY_PERMIT))
      return tg->path;
  }
  return NULL;
}

void box_telemetry_count(BoxTelemetry *t, BoxTelemetryStat stat)
{
  if (t) __atomic_add_fetch(&t->stats[stat], 1, __ATOMIC_RELAXED);
}

uint64_t box_telemetry_stat(const BoxTelemetry *t, BoxTelemetryStat stat)
{
  return t ? __atomic_load_n(&t->stats[stat], __ATOMIC_RELAXED) : 0;
}

void box_telemetry_finish(BoxTelemetry *t, const char *subject, const char *reason,
                          const char *detail)
{
  if (!t) return;
  GString *said = g_string_new(detail);
  /* the counts still held go out before the receivers are told to end */
  box_kernel_records_flush(t->kernel, t);
  /* every receiver at once: each sends what it holds, within its timeouts */
  for (size_t i = 0; i < t->n; i++)
    if (t->targets[i].otlp) box_otlp_end(t->targets[i].otlp);
  for (size_t i = 0; i < t->n; i++) {
    BoxOtlp *o = t->targets[i].otlp;
    if (!o) continue;
    box_otlp_join(o); /* its count is final: box_stopped can report it */
    uint64_t lost = box_otlp_dropped(o);
    if (lost)
      g_string_append_printf(said, "%s[telemetry.%s] dropped %" G_GUINT64_FORMAT " records",
                             said->len ? "; " : "", box_otlp_label(o), lost);
  }
  box_telemetry_control(t, "box_stopped", subject, reason, said->len ? said->str : NULL);
  g_string_free(said, TRUE);
}

void box_telemetry_stop(BoxTelemetry *t, const char *subject, const char *reason,
                        const char *detail)
{
  if (!t) return;
  box_telemetry_finish(t, subject, reason, detail);
  box_kernel_records_free(g_steal_pointer(&t->kernel));
  close_targets(t->targets, t->n);
  if (t->stats != t->local_stats) munmap(t->stats, t->stats_len);
  g_mutex_clear(&t->control_lock);
  g_free(t->resource_json);
  g_free(t);
}
