/* cmd_demo.c — `box demo`: a box on the built-in example config and policy.
 *
 * It lays out a throwaway operator home with a git project, writes the
 * embedded box.toml and policy.dw beside it, runs the box with an agent
 * script that tries a few things, and prints every decision the box made.
 */
#include "box/box-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char demo_policy[] =
  "// boxfs demo policy: the agent works in ~/src/project and /tmp, nowhere else.\n"
  "@id(\"commands\")\n"
  "permit(principal, action == Box::Action::\"shell:exec\", resource);\n"
  "\n"
  "@id(\"project-files\")\n"
  "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], resource)\n"
  "when { context.input.path like \"~/src/project/*\" };\n"
  "\n"
  "@id(\"scratch\")\n"
  "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], resource)\n"
  "when { context.input.path like \"/tmp/*\" };\n"
  "\n"
  "@id(\"git\")\n"
  "permit(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "when { context.input.program == \"git\" };\n"
  "\n"
  "@id(\"no-keys\")\n"
  "@description(\"Keys stay with the operator.\")\n"
  "forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
  "when { context.input.path like \"~/.ssh/*\" };\n";

static const char demo_agent[] =
  "step() { printf '\\n$ bash -c %s\\n' \"'$1'\"; bash -c \"$1\"; echo \"[status $?]\"; }\n"
  "step 'grep -n TODO src/main.rs > todo.txt && git add todo.txt'\n"
  "step 'cat todo.txt'\n"
  "step 'echo scratch > /tmp/note; cat /tmp/note'\n"
  "step 'cat /tmp/note'\n"
  "step 'cat $HOME/.ssh/id_demo'\n"
  "step 'echo hi > ../outside.txt'\n"
  "step 'uname -a'\n"
  "step 'no-such-tool'\n";

static const char demo_main_rs[] = "fn main() {\n"
                                   "    // TODO: parse arguments\n"
                                   "    println!(\"hello\");\n"
                                   "    // TODO: handle errors\n"
                                   "}\n";

static bool write_file(const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_file_set_contents(path, text, -1, &error)) {
    fprintf(stderr, "box: error: %s\n", error->message);
    return false;
  }
  return true;
}

static bool git(const char *cwd, const char *const *args)
{
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, "git");
  g_ptr_array_add(argv, "-c");
  g_ptr_array_add(argv, "user.name=demo");
  g_ptr_array_add(argv, "-c");
  g_ptr_array_add(argv, "user.email=demo@example.invalid");
  for (int i = 0; args[i]; i++) g_ptr_array_add(argv, (gpointer)args[i]);
  g_ptr_array_add(argv, NULL);
  gint status = 1;
  g_autoptr(GError) error = NULL;
  bool ok =
    g_spawn_sync(cwd, (char **)argv->pdata, NULL,
                 G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                 NULL, NULL, NULL, NULL, &status, &error) &&
    g_spawn_check_wait_status(status, NULL);
  g_ptr_array_free(argv, TRUE);
  if (!ok)
    fprintf(stderr, "box: error: the demo needs git: %s\n", error ? error->message : "git failed");
  return ok;
}

static const char *attr(json_object *attrs, const char *key)
{
  size_t n = json_object_array_length(attrs);
  for (size_t i = 0; i < n; i++) {
    json_object *a = json_object_array_get_idx(attrs, i), *k, *v, *s;
    if (json_object_object_get_ex(a, "key", &k) && strcmp(json_object_get_string(k), key) == 0 &&
        json_object_object_get_ex(a, "value", &v) &&
        json_object_object_get_ex(v, "stringValue", &s))
      return json_object_get_string(s);
  }
  return "";
}

char *box_decision_line_text(const char *line)
{
  json_object *rec = json_tokener_parse(line), *rl, *sl, *lr, *attrs, *scope, *name;
  char *text = NULL;
  if (rec && json_object_object_get_ex(rec, "resourceLogs", &rl) &&
      json_object_object_get_ex(json_object_array_get_idx(rl, 0), "scopeLogs", &sl) &&
      json_object_object_get_ex(json_object_array_get_idx(sl, 0), "scope", &scope) &&
      json_object_object_get_ex(scope, "name", &name) &&
      strcmp(json_object_get_string(name), "strands-box.policy") == 0 &&
      json_object_object_get_ex(json_object_array_get_idx(sl, 0), "logRecords", &lr) &&
      json_object_object_get_ex(json_object_array_get_idx(lr, 0), "attributes", &attrs))
    text = g_strdup_printf("%-6s %-12s %-40s %s", attr(attrs, "strands.box.policy.verdict"),
                           attr(attrs, "strands.box.policy.action"),
                           attr(attrs, "strands.box.policy.resource"),
                           attr(attrs, "strands.box.policy.rule"));
  json_object_put(rec);
  return text;
}

static void print_decisions(const char *log_path)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents(log_path, &text, NULL, NULL)) return;
  printf("\nDecision log (%s):\n", log_path);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    g_autofree char *said = **l ? box_decision_line_text(*l) : NULL;
    if (said) printf("  %s\n", said);
  }
}

static const char demo_help[] =
  "Usage: box demo [-h|--help]\n"
  "\n"
  "Runs a throwaway box on the built-in example config and policy: an agent\n"
  "tries a few things in a demo git project, and every decision the box made\n"
  "is printed after it.  Needs root, as `box run` does.\n";

int box_verb_demo_main(int argc, char **argv)
{
  if (argc == 1) return box_verb_demo();
  if (argc == 2 && box_help_word(argv[1])) return box_help_print(demo_help);
  return box_usage_error(demo_help, "unexpected argument '%s' found", argv[1]);
}

int box_verb_demo(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *root = g_dir_make_tmp("boxfs-demo-XXXXXX", &error);
  if (!root) {
    fprintf(stderr, "box: error: %s\n", error->message);
    return 1;
  }
  g_autofree char *home = g_build_filename(root, "home", NULL);
  g_autofree char *project = g_build_filename(home, "src", "project", NULL);
  g_autofree char *src = g_build_filename(project, "src", NULL);
  g_autofree char *ssh = g_build_filename(home, ".ssh", NULL);
  g_autofree char *state = g_build_filename(root, "state", NULL);
  g_autofree char *cfg = g_build_filename(root, "cfg", NULL);
  g_mkdir_with_parents(src, 0755);
  g_mkdir_with_parents(ssh, 0700);
  g_mkdir_with_parents(state, 0755);
  g_mkdir_with_parents(cfg, 0755);
  const char *init[] = { "init", "-q", NULL };
  const char *add[] = { "add", "src/main.rs", NULL };
  const char *commit[] = { "commit", "-q", "-m", "start", NULL };
  g_autofree char *quoted_script = g_strescape(demo_agent, NULL);
  g_autofree char *toml = g_strdup_printf("name = \"demo\"\n"
                                          "box_dir = \"%s/box\"\n"
                                          "policy = \"policy.dw\"\n"
                                          "\n"
                                          "[agent]\n"
                                          "command = [\"/bin/sh\", \"-c\", \"%s\"]\n"
                                          "workspace = \"%s\"\n"
                                          "\n"
                                          "[tool.git]\n"
                                          "command = [\"git\"]\n"
                                          "filesystem.write = [\"~/src/project\"]\n",
                                          state, quoted_script, project);
  if (!write_file(src, "main.rs", demo_main_rs) ||
      !write_file(ssh, "id_demo", "-----BEGIN DEMO KEY-----\n") ||
      !write_file(cfg, "box.toml", toml) || !write_file(cfg, "policy.dw", demo_policy) ||
      !git(project, init) || !git(project, add) || !git(project, commit))
    return 1;
  g_autofree char *config = g_build_filename(cfg, "box.toml", NULL);
  printf("boxfs demo: operator home %s, workspace %s\n", home, project);
  printf("config %s, policy %s/policy.dw\n", config, cfg);
  fflush(stdout);
  setenv("HOME", home, 1);
  char *argv[] = { "run", "--config", config, NULL };
  int status = box_verb_run(3, argv);
  g_autofree char *log =
    g_build_filename(state, "box", "private", "telemetry", "records.jsonl", NULL);
  print_decisions(log);
  printf("\nagent exited with status %d; the demo's files are in %s\n", status, root);
  return status;
}
