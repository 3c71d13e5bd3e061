/* history_bench.c — the latency of a decision under 10 temporal
 * rules over a history of 100,000 events (file-backed, as in a box), and
 * the history's memory; against the same policy without its temporal rules
 * in the same run.  Usage: history-bench [EVENTS] [DECISIONS] */
#include "policy/policy.h"
#include "policy/history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static int64_t now_ns;
static int64_t bench_clock(void *data)
{
  (void)data;
  return now_ns;
}

static const char *base =
  "permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
  "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], resource)\n"
  "when { context.input.path like \"~/src/*\" };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource) when { "
  "context.input.program == \"rm\" };\n";

static const char *temporal_rules =
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource) when { "
  "context.input.program == \"git\" }\n"
  "when temporal { (count for (t: Timepoint). where formerly within 1h "
  "(Box::Action::\"shell:spawn\"::request{ input.program: \"git\", input.arg1: \"push\" } && "
  "tp(t))) > 1000000 };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource) when { "
  "context.input.program == \"git\" }\n"
  "unless temporal { formerly within 10m Box::Action::\"shell:spawn\"::response{ input.program: "
  "\"make\", output.status: 0 } };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource) when { "
  "context.input.program == \"git\" }\n"
  "unless temporal { !Box::Action::\"fs:write\"::response{ input.path: \"~/src/never\" } since "
  "within 1h Box::Action::\"shell:spawn\"::response{ input.program: \"make\", output.status: 0 } "
  "};\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when temporal { exists (n: Long). ((count for (t: Timepoint). where formerly within 1h "
  "(Box::Action::\"fs:write\"::response{ input.path: _, output.result: "
  "Box::FsResponseResult::\"completed\" } && tp(t))) == n && n > 1000000) };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when temporal { exists (total: Long). ((sum b for (b: Long), (t: Timepoint). where (formerly "
  "within 1h (Box::Action::\"shell:spawn\"::response{ input.program: \"make\", output.status: b } "
  "&& tp(t)))) == total && total > 1000000) };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when temporal { formerly within 1h Box::Action::\"shell:spawn\"::request{ input.program: "
  "\"shutdown\" } };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when temporal { (count for (t: Timepoint). where formerly within 30m "
  "(Box::Action::\"fs:read\"::request{ input.operation: Box::FsReadOperation::\"read_content\" } "
  "&& tp(t))) > 1000000 };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when temporal { previous within 1h Box::Action::\"shell:spawn\"::request{ input.program: "
  "\"shutdown\" } };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when temporal { (count for (t: Timepoint). where formerly within 1h "
  "(Box::Action::\"shell:spawn\"::error{ input.program: _ } && tp(t))) >= 5 };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when temporal { formerly within 1h Box::Action::\"fs:write\"::response{ input.path: "
  "\"~/.ssh/config\" } };\n";

static json_object *spawn(const char *program, const char *arg1)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "command", json_object_new_string(program));
  json_object_object_add(o, "program", json_object_new_string(program));
  if (arg1) json_object_object_add(o, "arg1", json_object_new_string(arg1));
  json_object_object_add(o, "arg_count", json_object_new_int64(arg1 ? 1 : 0));
  json_object_object_add(o, "cwd", json_object_new_string("/home/op/src"));
  json_object_object_add(o, "program_path", json_object_new_string("/usr/bin/x"));
  return o;
}

static json_object *fsin(const char *path, const char *op)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "path", json_object_new_string(path));
  json_object_object_add(o, "operation", json_object_new_string(op));
  return o;
}

static int64_t mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static BoxPolicy *setup(const char *text, const char *dir, int events)
{
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_string(text, NULL, &error);
  if (!p) {
    fprintf(stderr, "history-bench: %s\n", error->message);
    exit(1);
  }
  box_policy_set_clock(p, bench_clock, NULL);
  if (!box_policy_open_history(p, dir, &error)) {
    fprintf(stderr, "history-bench: %s\n", error->message);
    exit(1);
  }
  /* events 30 ms apart: 100,000 fill 50 minutes, inside every 1h window */
  now_ns = 1700000000LL * 1000000000LL;
  json_object *make = spawn("make", "test"), *status = json_object_new_object();
  json_object_object_add(status, "status", json_object_new_int(0));
  json_object *wr = fsin("~/src/a.c", "write_content"), *res = json_object_new_object();
  json_object_object_add(res, "result", json_object_new_string("completed"));
  json_object *rd = fsin("~/src/a.c", "read_content");
  for (int i = 0; i < events; i++) {
    now_ns += 30000000;
    switch (i % 4) {
    case 0: box_decision_free(box_policy_decide(p, "fs:read", rd)); break;
    case 1: box_policy_record_response(p, "fs:write", wr, res); break;
    case 2: box_decision_free(box_policy_decide(p, "shell:spawn", make)); break;
    default: box_policy_record_response(p, "shell:spawn", make, status); break;
    }
  }
  json_object_put(make);
  json_object_put(status);
  json_object_put(wr);
  json_object_put(res);
  json_object_put(rd);
  return p;
}

static void measure(BoxPolicy *p, int n, const char *label)
{
  int64_t *lat = malloc(sizeof(int64_t) * (size_t)n);
  json_object *push = spawn("git", "push");
  int permits = 0;
  for (int i = 0; i < n; i++) {
    now_ns += 1000000;
    int64_t t0 = mono();
    BoxDecision *d = box_policy_decide(p, "shell:spawn", push);
    lat[i] = mono() - t0;
    permits += d->verdict == BOX_VERDICT_PERMIT;
    box_decision_free(d);
  }
  qsort(lat, (size_t)n, sizeof *lat, cmp64);
  size_t events, bytes;
  box_policy_history_stats(p, &events, &bytes);
  printf("%-28s median %6.2f us  p90 %6.2f us  p99 %6.2f us  (%d decisions, %d permitted; history "
         "%zu events, "
         "%.1f MiB, %.0f B/event)\n",
         label, lat[n / 2] / 1e3, lat[n * 9 / 10] / 1e3, lat[n * 99 / 100] / 1e3, n, permits,
         events, bytes / 1048576.0, events ? (double)bytes / (double)events : 0.0);
  json_object_put(push);
  free(lat);
}

int main(int argc, char **argv)
{
  int events = argc > 1 ? atoi(argv[1]) : 100000;
  int decisions = argc > 2 ? atoi(argv[2]) : 20000;
  char *d1 = g_dir_make_tmp("history-bench-XXXXXX", NULL),
       *d2 = g_dir_make_tmp("history-bench-XXXXXX", NULL);
  char *full = g_strconcat(base, temporal_rules, NULL);
  BoxPolicy *baseline = setup(base, d1, events);
  measure(baseline, decisions, "baseline (0 temporal rules)");
  BoxPolicy *p = setup(full, d2, events);
  measure(p, decisions, "10 temporal rules");
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("max RSS %.1f MiB\n", ru.ru_maxrss / 1024.0);
  box_policy_free(baseline);
  box_policy_free(p);
  char *cmd = g_strdup_printf("rm -rf '%s' '%s'", d1, d2);
  if (system(cmd) != 0) fprintf(stderr, "history-bench: could not remove %s %s\n", d1, d2);
  g_free(cmd);
  g_free(full);
  g_free(d1);
  g_free(d2);
  return 0;
}
