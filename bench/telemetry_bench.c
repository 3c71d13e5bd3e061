/* telemetry_bench.c — decisions per second through the decision log and
 * the run's targets: the default file alone, then a file target and an
 * OTLP target (URL) together, in one run.  Each decision is decided,
 * rendered and handed to the targets as boxd does for a file operation
 * outside a batch (box_decision_log_append).  Prints one JSON object.
 * Alternated three times; the best rate of each.
 * Usage: telemetry-bench URL [DECISIONS] */
#include "policy/policy.h"
#include "policy/decision_log.h"
#include "telemetry/telemetry.h"

#include <stdio.h>
#include <stdlib.h>
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

/* Decisions per second with targets (NULL-terminated; none: the default);
 * *cpu_rate: the same per second of the deciding thread's own CPU time,
 * which the exporter's thread and the receiver do not take from it on a
 * machine whose cores other work shares. */
static double rate(BoxPolicy *p, const char *dir, BoxTelemetryTarget **targets, int n,
                   double *cpu_rate)
{
  BoxTelemetryRun run = { "bench", "box-bench", "run-bench", dir, dir, NULL };
  GError *error = NULL;
  BoxTelemetry *t = box_telemetry_open((const BoxTelemetryTarget *const *)targets, &run, &error);
  if (!t) {
    fprintf(stderr, "telemetry-bench: %s\n", error->message);
    exit(1);
  }
  BoxDecisionLog *log =
    box_decision_log_open_sink(box_telemetry_decisions, t, "box-bench", "run-bench");
  double t0 = seconds(), c0 = seconds_of(CLOCK_THREAD_CPUTIME_ID);
  for (int i = 0; i < n; i++) {
    char path[64];
    g_snprintf(path, sizeof path, i % 10 ? "~/src/file%05d.c" : "~/.ssh/key%05d", i);
    json_object *input = json_object_new_object();
    json_object_object_add(input, "path", json_object_new_string(path));
    json_object_object_add(input, "operation", json_object_new_string("read_content"));
    BoxDecision *d = box_policy_decide(p, "fs:read", input);
    box_decision_log_append(log, "fs:read", input, NULL, d);
    box_decision_free(d);
    json_object_put(input);
  }
  double elapsed = seconds() - t0;
  *cpu_rate = MAX(*cpu_rate, n / (seconds_of(CLOCK_THREAD_CPUTIME_ID) - c0));
  box_decision_log_close(log);
  box_telemetry_stop(t, "bench", NULL, NULL);
  return n / elapsed;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: telemetry-bench URL [DECISIONS]\n");
    return 2;
  }
  int n = argc > 2 ? atoi(argv[2]) : 100000;
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
  /* alternated, best of three each: the first rounds warm the allocator
   * and the page cache for both */
  double base = 0, with_otlp = 0, base_cpu = 0, otlp_cpu = 0;
  for (int round = 0; round < 3; round++) {
    base = MAX(base, rate(p, dir, none, n, &base_cpu));
    with_otlp = MAX(with_otlp, rate(p, dir, both, n, &otlp_cpu));
  }
  printf("{\"decisions\":%d,\"file_per_s\":%.0f,\"otlp_per_s\":%.0f,\"ratio\":%.3f,"
         "\"file_per_cpu_s\":%.0f,\"otlp_per_cpu_s\":%.0f,\"cpu_ratio\":%.3f}\n",
         n, base, with_otlp, with_otlp / base, base_cpu, otlp_cpu, otlp_cpu / base_cpu);
  char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "telemetry-bench: could not remove %s\n", dir);
  return 0;
}
