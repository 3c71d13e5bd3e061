/* telemetry_bench.c — decisions per second through the decision log and
 * the run's targets: the default file alone, then a file target and an
 * OTLP target (URL) together, in one run.  Each decision is decided,
 * rendered and handed to the targets as boxd does for a file operation
 * outside a batch (box_decision_log_append).  Prints one JSON object.
 * Alternated ROUNDS times (default 3); the best rate of each, the median
 * of the rounds' ratios, and the slowest decision and the 99.9th
 * percentile of each (a receiver that is down or slow must hold none).
 * Usage: telemetry-bench URL [DECISIONS [ROUNDS]] */
#include "policy/policy.h"
#include "policy/decision_log.h"
#include "telemetry/telemetry.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static const char *rules = "@id(\"home\")\n"
                           "permit(principal, action == Box::Action::\"fs:read\", resource)\n"
                           "when { context.input.path like \"~/*\" };\n"
                           "@id(\"no-ssh\")\n"
                           "forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
                           "when { context.input.path like \"~/.ssh/*\" };\n";

static double seconds_of(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double seconds(void)
{
  return seconds_of(CLOCK_MONOTONIC);
}

static int by_value(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The slowest of a run's decisions, and its 99.9th percentile, in ms;
 * the deciding thread's page faults and context switches per 1000
 * decisions (the fewest of the rounds: what the targets cost it, less the
 * machine's other load). */
typedef struct {
  double slowest_ms, p999_ms;
  double faults, switches;
  double process_us; /* the whole process's CPU per decision (every thread), the fewest */
  uint64_t dropped;  /* export lines dropped, all rounds */
} Latency;

static double process_cpu(void)
{
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
         (double)u.ru_stime.tv_usec / 1e6;
}

static void thread_usage(double *faults, double *switches)
{
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  *faults = (double)u.ru_minflt + (double)u.ru_majflt;
  *switches = (double)u.ru_nvcsw + (double)u.ru_nivcsw;
}

/* One decision, decided, rendered and handed to the targets; its seconds. */
static double decide_one(BoxPolicy *p, BoxDecisionLog *log, int i)
{
  char path[64];
  g_snprintf(path, sizeof path, i % 10 ? "~/src/file%05d.c" : "~/.ssh/key%05d", i);
  json_object *input = json_object_new_object();
  json_object_object_add(input, "path", json_object_new_string(path));
  json_object_object_add(input, "operation", json_object_new_string("read_content"));
  double d0 = seconds();
  BoxDecision *d = box_policy_decide(p, "fs:read", input);
  box_decision_log_append(log, "fs:read", input, NULL, d);
  double took = seconds() - d0;
  box_decision_free(d);
  json_object_put(input);
  return took;
}

/* Decisions per second with targets (NULL-terminated; none: the default);
 * *cpu_rate: the same per second of the deciding thread's own CPU time,
 * which the exporter's thread and the receiver do not take from it on a
 * machine whose cores other work shares; *lat: the worst of the rounds.
 * A tenth as many decisions go first, untimed: the targets are opened
 * afresh each round, where a box opens them once and its first seconds
 * fault in what its queues will hold. */
static double rate(BoxPolicy *p, const char *dir, BoxTelemetryTarget **targets, int n,
                   double *cpu_rate, double *each, Latency *lat)
{
  g_autofree char *stats = g_build_filename(dir, "stats", NULL);
  BoxTelemetryRun run = { "bench", "box-bench", "run-bench", dir, dir, stats };
  GError *error = NULL;
  BoxTelemetry *t = box_telemetry_open((const BoxTelemetryTarget *const *)targets, &run, &error);
  if (!t) {
    fprintf(stderr, "telemetry-bench: %s\n", error->message);
    exit(1);
  }
  BoxDecisionLog *log =
    box_decision_log_open_sink(box_telemetry_decisions, t, "box-bench", "run-bench");
  for (int i = 0; i < n / 10; i++) decide_one(p, log, n + i);
  double f0, s0, f1, s1;
  thread_usage(&f0, &s0);
  double t0 = seconds(), c0 = seconds_of(CLOCK_THREAD_CPUTIME_ID), p0 = process_cpu();
  for (int i = 0; i < n; i++) each[i] = decide_one(p, log, i);
  double elapsed = seconds() - t0;
  *cpu_rate = MAX(*cpu_rate, n / (seconds_of(CLOCK_THREAD_CPUTIME_ID) - c0));
  thread_usage(&f1, &s1);
  double faults = (f1 - f0) * 1000 / n, switches = (s1 - s0) * 1000 / n;
  lat->faults = lat->faults < 0 ? faults : MIN(lat->faults, faults);
  lat->switches = lat->switches < 0 ? switches : MIN(lat->switches, switches);
  qsort(each, (size_t)n, sizeof *each, by_value);
  lat->slowest_ms = MAX(lat->slowest_ms, each[n - 1] * 1e3);
  lat->p999_ms = MAX(lat->p999_ms, each[(size_t)n * 999 / 1000] * 1e3);
  box_decision_log_close(log);
  box_telemetry_stop(t, "bench", NULL, NULL);
  /* after the stop: what the exporter still held is sent by then */
  double process_us = (process_cpu() - p0) * 1e6 / n;
  lat->process_us = lat->process_us < 0 ? process_us : MIN(lat->process_us, process_us);
  uint64_t counts[BOX_TELEMETRY_STAT_N] = { 0 };
  FILE *f = fopen(stats, "rb");
  if (f) {
    if (fread(counts, sizeof counts, 1, f) == 1) lat->dropped += counts[BOX_TELEMETRY_STAT_DROPPED];
    fclose(f);
  }
  return n / elapsed;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: telemetry-bench URL [DECISIONS]\n");
    return 2;
  }
  int n = argc > 2 ? atoi(argv[2]) : 100000;
  int rounds = argc > 3 ? atoi(argv[3]) : 3;
  if (n < 1 || rounds < 1 || rounds > 64) {
    fprintf(stderr, "telemetry-bench: DECISIONS and ROUNDS must be positive\n");
    return 2;
  }
  double *each = g_new(double, n);
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(rules, NULL, &error);
  if (!p) {
    fprintf(stderr, "telemetry-bench: %s\n", error->message);
    return 1;
  }
  char *dir = g_dir_make_tmp("telemetry-bench-XXXXXX", NULL);
  char *private_dir = g_build_filename(dir, "private", "telemetry", NULL);
  g_mkdir_with_parents(private_dir, 0700);
  char *file = g_build_filename(dir, "private", "file.jsonl", NULL);
  BoxTelemetryTarget file_target = { "file", false, file, BOX_TELEMETRY_ALL, NULL, NULL, false };
  BoxTelemetryTarget otlp_target = { "otel", true, argv[1], BOX_TELEMETRY_ALL, NULL, NULL, false };
  BoxTelemetryTarget *both[] = { &file_target, &otlp_target, NULL };
  BoxTelemetryTarget *none[] = { NULL };
  /* alternated, best of the rounds each: the first rounds warm the
   * allocator and the page cache for both; each round's own ratio too, as
   * the load of a shared machine changes from round to round */
  double base = 0, with_otlp = 0, base_cpu = 0, otlp_cpu = 0, ratios[64];
  Latency base_lat = { 0, 0, -1, -1, -1, 0 }, otlp_lat = { 0, 0, -1, -1, -1, 0 };
  for (int round = 0; round < rounds; round++) {
    double b = rate(p, dir, none, n, &base_cpu, each, &base_lat);
    double o = rate(p, dir, both, n, &otlp_cpu, each, &otlp_lat);
    base = MAX(base, b);
    with_otlp = MAX(with_otlp, o);
    ratios[round] = o / b;
  }
  qsort(ratios, (size_t)rounds, sizeof *ratios, by_value);
  printf("{\"decisions\":%d,\"rounds\":%d,\"file_per_s\":%.0f,\"otlp_per_s\":%.0f,"
         "\"ratio\":%.3f,\"median_round_ratio\":%.3f,\"file_per_cpu_s\":%.0f,"
         "\"otlp_per_cpu_s\":%.0f,\"cpu_ratio\":%.3f,\"file_slowest_ms\":%.3f,"
         "\"file_p999_ms\":%.3f,\"otlp_slowest_ms\":%.3f,\"otlp_p999_ms\":%.3f,"
         "\"file_faults_per_k\":%.2f,\"otlp_faults_per_k\":%.2f,\"file_switches_per_k\":%.2f,"
         "\"otlp_switches_per_k\":%.2f,\"file_process_us\":%.3f,\"otlp_process_us\":%.3f,"
         "\"otlp_dropped\":%" G_GUINT64_FORMAT "}\n",
         n, rounds, base, with_otlp, with_otlp / base, ratios[rounds / 2], base_cpu, otlp_cpu,
         otlp_cpu / base_cpu, base_lat.slowest_ms, base_lat.p999_ms, otlp_lat.slowest_ms,
         otlp_lat.p999_ms, base_lat.faults, otlp_lat.faults, base_lat.switches, otlp_lat.switches,
         base_lat.process_us, otlp_lat.process_us, otlp_lat.dropped);
  g_free(each);
  char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "telemetry-bench: could not remove %s\n", dir);
  return 0;
}
