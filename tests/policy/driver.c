/* driver.c — policy_driver: the boxfs policy engine behind a pipe, for the
 * cedar-wasm differential test (tests/policy/differential.mjs) and the
 * benchmark (bench/policy).
 *
 *   policy_driver decide   stdin: one JSON case a line
 *                          {"policy": TEXT, "requests": [{"action": A, "input": {...}}, ...]}
 *                          stdout: one JSON answer a line
 *                          {"load": "ok"} + "results": [{"decision": "allow"|"deny",
 *                           "cause": ..., "determining": ["policy_0", ...]}]
 *                          or {"load": "error", "error": TEXT}
 *   policy_driver bench POLICY_FILE REQUESTS_JSON ROUNDS
 *                          prints {"load_ms": L, "decide_ns": [per-request medians...],
 *                          "median_ns": M}
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "policy/policy.h"

static int cmd_decide(void)
{
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, stdin)) > 0) {
    json_object *c = json_tokener_parse(line);
    json_object *pol = NULL, *reqs = NULL;
    if (!c || !json_object_object_get_ex(c, "policy", &pol) ||
        !json_object_object_get_ex(c, "requests", &reqs)) {
      fprintf(stderr, "policy_driver: bad case line\n");
      return 2;
    }
    json_object *ans = json_object_new_object();
    GError *error = NULL;
    BoxPolicy *p = box_policy_load_string(json_object_get_string(pol), NULL, &error);
    if (!p) {
      json_object_object_add(ans, "load", json_object_new_string("error"));
      json_object_object_add(ans, "error", json_object_new_string(error->message));
      g_error_free(error);
    } else {
      json_object_object_add(ans, "load", json_object_new_string("ok"));
      json_object *results = json_object_new_array();
      for (size_t i = 0; i < json_object_array_length(reqs); i++) {
        json_object *r = json_object_array_get_idx(reqs, i), *action = NULL, *input = NULL;
        json_object_object_get_ex(r, "action", &action);
        json_object_object_get_ex(r, "input", &input);
        BoxDecision *d = box_policy_decide(p, json_object_get_string(action), input);
        json_object *o = json_object_new_object();
        json_object_object_add(
          o, "decision",
          json_object_new_string(d->verdict == BOX_VERDICT_PERMIT ? "allow" : "deny"));
        json_object_object_add(o, "cause", json_object_new_string(box_cause_name(d->cause)));
        json_object *ids = json_object_new_array();
        for (guint k = 0; k < d->determining_ids->len; k++)
          json_object_array_add(ids, json_object_new_string(d->determining_ids->pdata[k]));
        json_object_object_add(o, "determining", ids);
        json_object_object_add(o, "message", json_object_new_string(d->message));
        json_object_array_add(results, o);
        box_decision_free(d);
      }
      json_object_object_add(ans, "results", results);
      box_policy_free(p);
    }
    puts(json_object_to_json_string_ext(ans, JSON_C_TO_STRING_PLAIN));
    fflush(stdout);
    json_object_put(ans);
    json_object_put(c);
  }
  free(line);
  return 0;
}

static double now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int cmd_bench(const char *policy_file, const char *requests_file, int rounds)
{
  double t0 = now_ns();
  GError *error = NULL;
  BoxPolicy *p = box_policy_load_file(policy_file, NULL, &error);
  double load_ms = (now_ns() - t0) / 1e6;
  if (!p) {
    fprintf(stderr, "policy_driver: %s\n", error->message);
    return 1;
  }
  json_object *reqs = json_object_from_file(requests_file);
  if (!reqs) {
    fprintf(stderr, "policy_driver: cannot read %s\n", requests_file);
    return 1;
  }
  size_t nreq = json_object_array_length(reqs);
  double *per = g_new(double, nreq);
  double *samples = g_new(double, (size_t)rounds);
  for (size_t i = 0; i < nreq; i++) {
    json_object *r = json_object_array_get_idx(reqs, i), *action = NULL, *input = NULL;
    json_object_object_get_ex(r, "action", &action);
    json_object_object_get_ex(r, "input", &input);
    const char *a = json_object_get_string(action);
    for (int k = 0; k < 10; k++) box_decision_free(box_policy_decide(p, a, input)); /* warm */
    for (int k = 0; k < rounds; k++) {
      double s = now_ns();
      box_decision_free(box_policy_decide(p, a, input));
      samples[k] = now_ns() - s;
    }
    qsort(samples, (size_t)rounds, sizeof(double), cmp_double);
    per[i] = samples[rounds / 2];
  }
  double *sorted = g_memdup2(per, nreq * sizeof(double));
  qsort(sorted, nreq, sizeof(double), cmp_double);
  printf("{\"load_ms\": %.3f, \"median_ns\": %.1f, \"decide_ns\": [", load_ms,
         nreq ? sorted[nreq / 2] : 0.0);
  for (size_t i = 0; i < nreq; i++) printf("%s%.1f", i ? ", " : "", per[i]);
  printf("]}\n");
  g_free(sorted);
  g_free(per);
  g_free(samples);
  json_object_put(reqs);
  box_policy_free(p);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc >= 2 && strcmp(argv[1], "decide") == 0) return cmd_decide();
  if (argc == 5 && strcmp(argv[1], "bench") == 0) return cmd_bench(argv[2], argv[3], atoi(argv[4]));
  fprintf(stderr, "usage: policy_driver decide | bench POLICY REQUESTS ROUNDS\n");
  return 2;
}
