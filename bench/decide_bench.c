/* decide_bench.c — the boxd work per file of a fast-path open batch
 * (box/fastopen.c): decide fs:read/read_content, render the decision's log
 * lines, record the ::response, one history batch and one log write per
 * batch.  For counting instructions (valgrind --tool=callgrind) per
 * decision; also prints the wall time.  Usage: decide-bench [FILES] [BATCH] [plain]
 * (plain: without the rule that reads history, as bench/commands's policy) */
#include "policy/policy.h"
#include "policy/decision_log.h"
#include "policy/history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *rules =
  "permit(principal, action == Box::Action::\"shell:spawn\", resource);\n"
  "@id(\"read-home\")\n"
  "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], resource)\n"
  "when { context.input.path like \"~/*\" };\n"
  "@id(\"no-ssh\") @description(\"ssh keys stay private\")\n"
  "forbid(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], resource)\n"
  "when { context.input.path like \"~/.ssh/*\" };\n"
  "forbid(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when temporal { formerly within 1h Box::Action::\"fs:write\"::response{ input.path: "
  "\"~/.ssh/config\" } };\n";

static int64_t mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
  int files = argc > 1 ? atoi(argv[1]) : 10000;
  int batch = argc > 2 ? atoi(argv[2]) : 64;
  GError *error = NULL;
  bool plain = argc > 3 && strcmp(argv[3], "plain") == 0;
  /* the rules less the last one, the only one with a temporal clause */
  char *text =
    plain
      ? g_strndup(
          rules, (gsize)(strstr(rules, "forbid(principal, action == Box::Action::\"shell:spawn\"") -
                         rules))
      : g_strdup(rules);
  BoxPolicy *p = box_policy_load_string(text, NULL, &error);
  g_free(text);
  char *dir = g_dir_make_tmp("decide-bench-XXXXXX", NULL);
  if (!p || !box_policy_open_history(p, dir, &error)) {
    fprintf(stderr, "decide-bench: %s\n", error->message);
    return 1;
  }
  char *logpath = g_build_filename(dir, "decisions.log", NULL);
  BoxDecisionLog *log = box_decision_log_open(logpath, "box-1", "run-1", &error);
  if (!log) {
    fprintf(stderr, "decide-bench: %s\n", error->message);
    return 1;
  }
  json_object *issued = json_object_new_object();
  json_object_object_add(issued, "result", json_object_new_string("descriptor_issued"));
  GString *buf = g_string_sized_new(64 * 1024);
  int permits = 0;
  int64_t t0 = mono();
  for (int i = 0; i < files;) {
    char nanos[32];
    box_decision_log_now(nanos);
    box_policy_history_batch_begin(p);
    for (int j = 0; j < batch && i < files; j++, i++) {
      char path[64];
      g_snprintf(path, sizeof path, "~/src/linux/drivers/file%05d.c", i);
      json_object *input = json_object_new_object();
      json_object_object_add(input, "path", json_object_new_string(path));
      json_object_object_add(input, "operation", json_object_new_string("read_content"));
      BoxDecision *d = box_policy_decide(p, "fs:read", input);
      box_decision_log_render_into(log, buf, "fs:read", input, NULL, d, nanos);
      if (d->verdict == BOX_VERDICT_PERMIT) {
        permits++;
        box_policy_record_response(p, "fs:read", input, issued);
      }
      box_decision_free(d);
      json_object_put(input);
    }
    box_policy_history_batch_end(p);
    box_decision_log_write(log, buf);
  }
  int64_t t1 = mono();
  printf("%d decisions (%d permitted), %.2f us per file\n", files, permits,
         (t1 - t0) / 1e3 / files);
  box_decision_log_close(log);
  box_policy_free(p);
  json_object_put(issued);
  g_string_free(buf, TRUE);
  char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "decide-bench: could not remove %s\n", dir);
  g_free(cmd);
  g_free(logpath);
  g_free(dir);
  return 0;
}
