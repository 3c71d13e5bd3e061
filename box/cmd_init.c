/* cmd_init.c — `box init`: a box.toml and a policy.dw for the current
 * directory, commented so an operator can read what each line grants and
 * edit it.  Nothing is overwritten. */
#include "box/box-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char init_help[] =
  "Usage: box init [--name NAME]\n"
  "\n"
  "Writes box.toml and policy.dw in the current directory: a box whose agent\n"
  "works in this directory, with a policy that lets it read and write here and\n"
  "run the Shell's own commands, and nothing else.  Both files are commented;\n"
  "edit them, then `box run --config box.toml`.  Existing files are kept.\n"
  "\n"
  "Options:\n"
  "  --name NAME  The box's name (default: this directory's name)\n"
  "  -h, --help   Print help\n";

static const char toml_template[] =
  "# box.toml — one box: its name, its private state, its policy and its agent.\n"
  "# Reference: box.toml(5).  Run it with `box run --config box.toml`.\n"
  "\n"
  "# A label, shown by `box ls` and recorded with every decision.\n"
  "name = \"%s\"\n"
  "\n"
  "# The box's private state: its lock, aliases, history and decision log.\n"
  "# One directory is one box; box creates it (mode 0700), not its parent.\n"
  "box_dir = \"%s\"\n"
  "\n"
  "# Every request the agent makes through the box is decided by this file;\n"
  "# without a policy everything is denied.\n"
  "policy = \"policy.dw\"\n"
  "\n"
  "[agent]\n"
  "# The one process the box runs; `box run -- ARGS` appends ARGS to it.\n"
  "# Its bash, sh and zsh are the box's aliases: what they run, policy decides.\n"
  "command = [\"/bin/bash\", \"-l\"]\n"
  "# Where the agent works (default: the directory `box run` starts in).\n"
  "workspace = \"%s\"\n"
  "\n"
  "# Host programs the Shell may launch after a shell:spawn permit, each in a\n"
  "# sandbox of its own with the paths its table grants, e.g.:\n"
  "# [tool.git]\n"
  "# command = [\"git\"]\n"
  "# filesystem.write = [\"%s\"]\n"
  "\n"
  "# Where decision records go (default: <box_dir>/private/telemetry/records.jsonl).\n"
  "# Declaring a target replaces the default file, e.g. an OpenTelemetry Collector:\n"
  "# [telemetry.collector]\n"
  "# kind = \"otlp\"\n"
  "# destination = \"http://127.0.0.1:4318\"\n"
  "# include = [\"deny\", \"permit\", \"trace\"]\n";

static const char policy_template[] =
  "// policy.dw — what the agent of this box may do (box-policy(5)).\n"
  "// Anything no permit matches is denied; a forbid beats every permit.\n"
  "// Try a request against it with `box policy decide`.\n"
  "\n"
  "// The Shell's own commands (cat, grep, ls, sed, ...) may run.\n"
  "@id(\"shell-commands\")\n"
  "permit(principal, action == Box::Action::\"shell:exec\", resource);\n"
  "\n"
  "// Files in this directory may be read and written.\n"
  "@id(\"workspace\")\n"
  "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], resource)\n"
  "when { context.input.path like \"%s/*\" };\n"
  "\n"
  "// The command's scratch space.\n"
  "@id(\"scratch\")\n"
  "permit(principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], resource)\n"
  "when { context.input.path like \"/tmp/*\" };\n"
  "\n"
  "// Programs outside the Shell need a shell:spawn permit and a [tool.*] table:\n"
  "// @id(\"git\")\n"
  "// permit(principal, action == Box::Action::\"shell:spawn\", resource)\n"
  "// when { context.input.program == \"git\" };\n"
  "\n"
  "// Secrets stay out of reach, whatever the permits above say.\n"
  "@id(\"no-env-files\")\n"
  "@description(\"Environment files hold credentials.\")\n"
  "forbid(principal, action == Box::Action::\"fs:read\", resource)\n"
  "when { context.input.path like \"*/.env\" };\n";

/* A name from the directory's: the characters box.toml allows, at most 32. */
static char *name_of(const char *dir)
{
  g_autofree char *base = g_path_get_basename(dir);
  GString *s = g_string_new(NULL);
  for (const char *p = base; *p && s->len < 32; p++)
    g_string_append_c(s, g_ascii_isalnum(*p) || strchr("._-", *p) ? *p : '-');
  if (!s->len || strcmp(s->str, ".") == 0 || strcmp(s->str, "..") == 0) g_string_assign(s, "box");
  return g_string_free(s, FALSE);
}

/* Creates path with text, never replacing a file; false after saying why. */
static bool create_new(const char *path, const char *text)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    box_fail("cannot create %s: %s%s", path, g_strerror(errno),
             errno == EEXIST ? "; box init keeps an existing file" : "");
    return false;
  }
  size_t len = strlen(text), off = 0;
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  close(fd);
  return off == len;
}

int box_verb_init(int argc, char **argv)
{
  g_autofree char *name = NULL;
  for (int i = 1; i < argc; i++) {
    if (box_help_word(argv[i])) return box_help_print(init_help);
    if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
      name = name_of(argv[++i]); /* a name box.toml would refuse is not written */
      if (strcmp(name, argv[i]) == 0) continue;
      return box_fail("box name \"%s\" is invalid; use one component of letters, digits, '.', "
                      "'_', or '-'",
                      argv[i]);
    }
    return box_usage_error(init_help, "unexpected argument '%s' found", argv[i]);
  }
  g_autofree char *cwd = g_get_current_dir();
  if (!name) name = name_of(cwd);
  const char *home = g_get_home_dir();
  /* state lives under the operator's home, outside the workspace */
  g_autofree char *state = g_build_filename(home, ".local", "state", "box", NULL);
  g_autofree char *box_dir = g_build_filename(state, name, NULL);
  if (box_path_within(box_dir, cwd))
    return box_fail("the box directory %s would lie inside this workspace; run box init in a "
                    "project directory",
                    box_dir);
  g_autofree char *spelled = box_path_spell(cwd, home);
  g_autofree char *toml = g_strdup_printf(toml_template, name, box_dir, cwd, spelled);
  g_autofree char *policy = g_strdup_printf(policy_template, spelled);
  g_autofree char *toml_path = g_build_filename(cwd, "box.toml", NULL);
  g_autofree char *policy_path = g_build_filename(cwd, "policy.dw", NULL);
  if (access(toml_path, F_OK) == 0 || access(policy_path, F_OK) == 0)
    return box_fail("%s already holds a box.toml or a policy.dw; box init keeps existing files",
                    cwd);
  if (g_mkdir_with_parents(state, 0700) != 0)
    return box_fail("cannot create %s: %s", state, g_strerror(errno));
  if (!create_new(toml_path, toml) || !create_new(policy_path, policy)) return 1;
  printf("wrote %s and %s\nrun the box with: box run --config box.toml\n", toml_path, policy_path);
  return 0;
}
