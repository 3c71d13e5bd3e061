/* test_config.c — box.toml loading (box/config.h). */
#include "box/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/test_util.h"

#define HOME "/home/op"

static char *tmpdir; /* canonical */

static char *write_config(const char *name, const char *text)
{
  char *path = g_build_filename(tmpdir, name, NULL);
  GError *err = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, &err));
  g_assert_no_error(err);
  return path;
}

/* Loads TEXT and expects failure with exactly EXPECT, where every "@" in
 * EXPECT stands for the canonical path of the file. */
static void expect_error(const char *text, const char *expect)
{
  char *path = write_config("box.toml", text);
  GError *err = NULL;
  BoxConfig *cfg = box_config_load(path, HOME, &err);
  if (cfg) g_error("loaded, but expected: %s\n--- config ---\n%s", expect, text);
  g_assert_nonnull(err);
  char **parts = g_strsplit(expect, "@", -1);
  char *want = g_strjoinv(path, parts);
  g_strfreev(parts);
  g_assert_cmpstr(err->message, ==, want);
  g_free(want);
  g_error_free(err);
  g_free(path);
}

static BoxConfig *load_ok(const char *text)
{
  char *path = write_config("box.toml", text);
  GError *err = NULL;
  BoxConfig *cfg = box_config_load(path, HOME, &err);
  g_assert_no_error(err);
  g_assert_nonnull(cfg);
  g_free(path);
  return cfg;
}

#define HEAD "name = \"demo\"\nbox_dir = \"/var/tmp/demo-box\"\n"
#define AGENT "[agent]\ncommand = [\"/usr/bin/agent\"]\n"

/* ---- good configurations ---- */

static void test_good(void)
{
  BoxConfig *cfg =
    load_ok("name = \"demo-1.x_y\"\n"
            "box_dir = \"/var/tmp/demo-box\"\n"
            "policy = \"policy.dw\"\n"
            "[agent]\n"
            "command = [\"claude\", \"--endpoint\", \"${OTEL_EXPORTER_OTLP_ENDPOINT}/v1\"]\n"
            "workspace = \"/home/op/src/project\"\n"
            "env = { TERM = \"xterm\", HOME = \"/home/op/agent-home\" }\n"
            "[agent.filesystem]\n"
            "read = [\"~\", \"/usr/share/doc\"]\n"
            "write = [\"~/src/project/\", \"/tmp//scratch\"]\n"
            "read_file = [\"~/.gitconfig\"]\n"
            "write_file = []\n"
            "exec = [\"/usr/bin/git\"]\n"
            "deny = [\"~/.ssh\"]\n"
            "metadata = [\"/srv\"]\n"
            "list = []\n"
            "[tool.zeta]\n"
            "command = [\"/usr/bin/zeta\"]\n"
            "[tool.git]\n"
            "command = [\"git\", \"-c\", \"core.pager=cat\"]\n"
            "workspace = \"/home/op/src\"\n"
            "env.PATH = \"/usr/bin:/bin\"\n"
            "filesystem.read = [\"~/src\"]\n"
            "filesystem.write_file = [\"~/src/x.txt\"]\n"
            "network.contain_egress = false\n"
            "[tool.\"a.b\"]\n"
            "command = [\"/bin/true\"]\n");
  char *want_path = g_build_filename(tmpdir, "box.toml", NULL);
  g_assert_cmpstr(cfg->path, ==, want_path);
  g_free(want_path);
  g_assert_cmpstr(cfg->name, ==, "demo-1.x_y");
  g_assert_cmpstr(cfg->box_dir, ==, "/var/tmp/demo-box");
  char *want_policy = g_build_filename(tmpdir, "policy.dw", NULL);
  g_assert_cmpstr(cfg->policy, ==, want_policy);
  g_free(want_policy);

  BoxProcessSpec *a = &cfg->agent;
  g_assert_cmpstr(a->label, ==, "agent");
  g_assert_cmpuint(g_strv_length(a->command), ==, 3);
  g_assert_cmpstr(a->command[0], ==, "claude");
  g_assert_cmpstr(a->command[2], ==, "${OTEL_EXPORTER_OTLP_ENDPOINT}/v1");
  g_assert_cmpstr(a->workspace, ==, "/home/op/src/project");
  g_assert_cmpuint(g_hash_table_size(a->env), ==, 2);
  g_assert_cmpstr(g_hash_table_lookup(a->env, "TERM"), ==, "xterm");
  g_assert_cmpstr(g_hash_table_lookup(a->env, "HOME"), ==, "/home/op/agent-home");
  g_assert_cmpuint(g_strv_length(a->fs.read), ==, 2);
  g_assert_cmpstr(a->fs.read[0], ==, "/home/op");
  g_assert_cmpstr(a->fs.read[1], ==, "/usr/share/doc");
  g_assert_cmpstr(a->fs.write[0], ==, "/home/op/src/project");
  g_assert_cmpstr(a->fs.write[1], ==, "/tmp/scratch");
  g_assert_cmpstr(a->fs.read_file[0], ==, "/home/op/.gitconfig");
  g_assert_null(a->fs.read_file[1]);
  g_assert_nonnull(a->fs.write_file);
  g_assert_null(a->fs.write_file[0]);
  g_assert_cmpstr(a->fs.exec[0], ==, "/usr/bin/git");
  g_assert_cmpstr(a->fs.deny[0], ==, "/home/op/.ssh");

  g_assert_cmpuint(cfg->tools->len, ==, 3);
  BoxProcessSpec *t0 = g_ptr_array_index(cfg->tools, 0);
  BoxProcessSpec *t1 = g_ptr_array_index(cfg->tools, 1);
  BoxProcessSpec *t2 = g_ptr_array_index(cfg->tools, 2);
  g_assert_cmpstr(t0->label, ==, "a.b");
  g_assert_cmpstr(t1->label, ==, "git");
  g_assert_cmpstr(t2->label, ==, "zeta");
  g_assert_cmpstr(t1->command[0], ==, "git");
  g_assert_cmpstr(t1->command[2], ==, "core.pager=cat");
  g_assert_cmpstr(t1->workspace, ==, "/home/op/src");
  g_assert_cmpstr(g_hash_table_lookup(t1->env, "PATH"), ==, "/usr/bin:/bin");
  g_assert_cmpstr(t1->fs.read[0], ==, "/home/op/src");
  g_assert_cmpstr(t1->fs.write_file[0], ==, "/home/op/src/x.txt");
  g_assert_nonnull(t1->fs.exec);
  g_assert_null(t1->fs.exec[0]);
  g_assert_null(t2->workspace);
  g_assert_cmpuint(g_hash_table_size(t2->env), ==, 0);
  g_assert_null(t2->fs.read[0]);

  json_object *name = NULL;
  g_assert_true(json_object_object_get_ex(cfg->doc, "name", &name));
  g_assert_cmpstr(json_object_get_string(name), ==, "demo-1.x_y");
  box_config_free(cfg);
}

static void test_minimal_real(void)
{
  BoxConfig *cfg = load_ok(HEAD "policy = \"/etc/box/p.dw\"\n" AGENT);
  g_assert_cmpstr(cfg->policy, ==, "/etc/box/p.dw");
  g_assert_null(cfg->agent.workspace);
  g_assert_nonnull(cfg->agent.env);
  g_assert_null(cfg->agent.fs.read[0]);
  g_assert_null(cfg->agent.fs.exec[0]);
  g_assert_cmpuint(cfg->tools->len, ==, 0);
  box_config_free(cfg);
}

static void test_canonical_path(void)
{
  char *sub = g_build_filename(tmpdir, "sub", NULL);
  g_assert_cmpint(g_mkdir_with_parents(sub, 0700), ==, 0);
  char *link = g_build_filename(tmpdir, "link", NULL);
  unlink(link);
  g_assert_cmpint(symlink("sub", link), ==, 0);
  char *real = g_build_filename(sub, "box.toml", NULL);
  g_assert_true(g_file_set_contents(real, HEAD "policy = \"p.dw\"\n" AGENT, -1, NULL));
  char *via = g_strconcat(link, "/../link/box.toml", NULL);
  GError *err = NULL;
  BoxConfig *cfg = box_config_load(via, HOME, &err);
  g_assert_no_error(err);
  g_assert_cmpstr(cfg->path, ==, real);
  char *pol = g_build_filename(sub, "p.dw", NULL);
  g_assert_cmpstr(cfg->policy, ==, pol);
  box_config_free(cfg);
  g_free(pol);
  g_free(via);
  g_free(real);
  g_free(link);
  g_free(sub);
}

static void test_nothing_created(void)
{
  char *bd = g_build_filename(tmpdir, "never-made", NULL);
  char *text = g_strdup_printf("name = \"n\"\nbox_dir = \"%s\"\n" AGENT, bd);
  BoxConfig *cfg = load_ok(text);
  g_assert_false(g_file_test(bd, G_FILE_TEST_EXISTS));
  box_config_free(cfg);
  g_free(text);
  g_free(bd);
}

/* ---- file and syntax errors ---- */

static void test_file_errors(void)
{
  GError *err = NULL;
  char *missing = g_build_filename(tmpdir, "nope.toml", NULL);
  g_assert_null(box_config_load(missing, HOME, &err));
  char *want = g_strdup_printf("cannot read config file %s: No such file or directory", missing);
  g_assert_cmpstr(err->message, ==, want);
  g_clear_error(&err);
  g_free(want);
  g_free(missing);

  g_assert_null(box_config_load(tmpdir, HOME, &err));
  want = g_strdup_printf("cannot read config file %s: it is not a regular file", tmpdir);
  g_assert_cmpstr(err->message, ==, want);
  g_clear_error(&err);
  g_free(want);

  char *path = g_build_filename(tmpdir, "nul.toml", NULL);
  g_assert_true(g_file_set_contents(path, "name = \"a\"\0x", 12, NULL));
  g_assert_null(box_config_load(path, HOME, &err));
  want = g_strdup_printf("cannot read config file %s: it contains a NUL byte", path);
  g_assert_cmpstr(err->message, ==, want);
  g_clear_error(&err);
  g_free(want);
  g_free(path);
}

static void test_syntax_error(void)
{
  expect_error("name = \"demo\"\nbox_dir = \n",
               "cannot parse config file @: line 2, column 11: "
               "Error while parsing key-value pair: expected value, saw '\\n'");
  expect_error(HEAD "[agent]\ncommand = [\"/bin/a\",\n  =]\n",
               "cannot parse config file @: line 5, column 3: Error while parsing value: could "
               "not determine value type");
  expect_error(HEAD HEAD AGENT, "cannot parse config file @: line 3, column 8: Error while parsing "
                                "key-value pair: cannot redefine existing string 'name'");
}

static void test_adapter(void)
{
  char *why = NULL;
  json_object *doc = box_toml_parse("i = 9007199254740993\nf = 1.5\nb = true\nd = 1979-05-27\n"
                                    "dt = 1979-05-27T07:32:00Z\nt = 07:32:00\n"
                                    "[a]\nx = [1, \"s\", [2]]\n",
                                    &why);
  g_assert_null(why);
  g_assert_nonnull(doc);
  json_object *v = NULL;
  g_assert_true(json_object_object_get_ex(doc, "i", &v));
  g_assert_true(json_object_is_type(v, json_type_int));
  g_assert_cmpint(json_object_get_int64(v), ==, 9007199254740993LL);
  g_assert_true(json_object_object_get_ex(doc, "f", &v));
  g_assert_cmpfloat(json_object_get_double(v), ==, 1.5);
  g_assert_true(json_object_object_get_ex(doc, "b", &v));
  g_assert_true(json_object_get_boolean(v));
  g_assert_true(json_object_object_get_ex(doc, "d", &v));
  g_assert_cmpstr(json_object_get_string(v), ==, "1979-05-27");
  g_assert_true(json_object_object_get_ex(doc, "t", &v));
  g_assert_true(json_object_is_type(v, json_type_string));
  g_assert_true(json_object_object_get_ex(doc, "dt", &v));
  g_assert_true(json_object_is_type(v, json_type_string));
  g_assert_true(json_object_object_get_ex(doc, "a", &v));
  g_assert_true(json_object_object_get_ex(v, "x", &v));
  g_assert_cmpuint(json_object_array_length(v), ==, 3);
  json_object_put(doc);

  g_assert_null(box_toml_parse("a = \"unterminated\n", &why));
  g_assert_true(g_str_has_prefix(why, "line 1, column "));
  g_free(why);
}

/* ---- shape errors ---- */

static void test_unknown_keys(void)
{
  expect_error(HEAD "[agent]\ncmd = [\"/bin/a\"]\n",
               "cannot parse config file @: unknown field `agent.cmd`");
  expect_error(HEAD "colour = 1\n" AGENT, "cannot parse config file @: unknown field `colour`");
  expect_error(HEAD AGENT "[agent.filesystem]\nreads = []\n",
               "cannot parse config file @: unknown field `agent.filesystem.reads`");
  expect_error(HEAD AGENT "[tool.git]\ncommand = [\"git\"]\nargs = []\n",
               "cannot parse config file @: unknown field `tool.git.args`");
  expect_error(HEAD AGENT "[tool.git]\ncommand = [\"git\"]\nnetwork.proxy = true\n",
               "cannot parse config file @: unknown field `tool.git.network.proxy`");
  expect_error(HEAD AGENT "[tool.\"a.b\"]\ncommand = [\"x\"]\nzz = 1\n",
               "cannot parse config file @: unknown field `tool.\"a.b\".zz`");
  expect_error(HEAD AGENT "[egress.gh]\ndestinations = [\"github.com\"]\n",
               "invalid `[egress.gh]` table: an entry with no secret declares only a destination, "
               "which policy already decides; give it a secret, or set protocol = \"mcp\" for a "
               "remote MCP server (in @)");
}

static void test_wrong_types(void)
{
  expect_error("name = 3\nbox_dir = \"/b\"\n" AGENT,
               "cannot parse config file @: `name` must be a string");
  expect_error("name = \"n\"\nbox_dir = [\"/b\"]\n" AGENT,
               "cannot parse config file @: `box_dir` must be a string");
  expect_error(HEAD "policy = true\n" AGENT,
               "cannot parse config file @: `policy` must be a string");
  expect_error(HEAD "agent = \"x\"\n", "cannot parse config file @: `agent` must be a table");
  expect_error(HEAD "[agent]\ncommand = \"/bin/a\"\n",
               "cannot parse config file @: `agent.command` must be an array of strings");
  expect_error(HEAD "[agent]\ncommand = [\"/bin/a\", 1]\n",
               "cannot parse config file @: `agent.command` must be an array of strings");
  expect_error(HEAD AGENT "workspace = 1\n",
               "cannot parse config file @: `agent.workspace` must be a string");
  expect_error(HEAD AGENT "env = [\"A=b\"]\n",
               "cannot parse config file @: `agent.env` must be a table of strings");
  expect_error(HEAD AGENT "env.A = 1\n",
               "cannot parse config file @: `agent.env.A` must be a string");
  expect_error(HEAD AGENT "filesystem = \"/\"\n",
               "cannot parse config file @: `agent.filesystem` must be a table");
  expect_error(HEAD AGENT "filesystem.read = \"/\"\n",
               "cannot parse config file @: `agent.filesystem.read` must be an array of strings");
  /* After [agent], a bare key belongs to the agent table. */
  expect_error(HEAD AGENT "tool = 1\n", "cannot parse config file @: unknown field `agent.tool`");
}

static void test_wrong_types_tool(void)
{
  expect_error(HEAD AGENT "[tool]\ngit = 1\n",
               "cannot parse config file @: `tool.git` must be a table");
  expect_error(HEAD "tool = 1\n" AGENT, "cannot parse config file @: `tool` must be a table");
  expect_error(HEAD AGENT "[tool.git]\ncommand = [\"git\"]\nnetwork.contain_egress = \"no\"\n",
               "cannot parse config file @: `tool.git.network.contain_egress` must be a boolean");
  expect_error(HEAD AGENT "[tool.git]\ncommand = [\"git\"]\nfilesystem.deny = [1]\n",
               "cannot parse config file @: `tool.git.filesystem.deny` must be an array of "
               "strings");
}

static void test_missing(void)
{
  expect_error("box_dir = \"/b\"\n" AGENT, "cannot parse config file @: missing field `name`");
  expect_error("name = \"n\"\n" AGENT, "cannot parse config file @: missing field `box_dir`");
  expect_error(HEAD, "no workload to run: the configuration has no `[agent]` table, and a "
                     "trailing argv appends to `[agent] command` rather than replacing it (in @)");
  expect_error(HEAD "[agent]\nworkspace = \"/w\"\n",
               "cannot parse config file @: missing field `agent.command`");
  expect_error(HEAD AGENT "[tool.git]\nworkspace = \"/w\"\n",
               "cannot parse config file @: missing field `tool.git.command`");
}

/* ---- spec-worded errors ---- */

static void test_name_and_box_dir(void)
{
  expect_error("name = \"a/b\"\nbox_dir = \"/b\"\n" AGENT,
               "box name \"a/b\" is invalid: it contains `/`; use one component of letters, "
               "digits, '.', '_', or '-' (in @)");
  expect_error("name = \"\"\nbox_dir = \"/b\"\n" AGENT,
               "box name \"\" is invalid: it is empty; use one component of letters, digits, "
               "'.', '_', or '-' (in @)");
  expect_error("name = \"..\"\nbox_dir = \"/b\"\n" AGENT,
               "box name \"..\" is invalid: `.` and `..` name no component; use one component of "
               "letters, digits, '.', '_', or '-' (in @)");
  expect_error("name = \"123456789012345678901234567890123\"\nbox_dir = \"/b\"\n" AGENT,
               "box name \"123456789012345678901234567890123\" is invalid: it is longer than 32 "
               "bytes; use one component of letters, digits, '.', '_', or '-' (in @)");
  expect_error("name = \"a b\"\nbox_dir = \"/b\"\n" AGENT,
               "box name \"a b\" is invalid: it contains a character outside letters, digits, "
               "'.', '_', and '-'; use one component of letters, digits, '.', '_', or '-' (in @)");
  expect_error("name = \"n\"\nbox_dir = \"rel/box\"\n" AGENT,
               "invalid Box configuration: `box_dir` must be absolute: rel/box (in @)");
  expect_error(HEAD "policy = \"\"\n" AGENT,
               "cannot parse config file @: `policy` is empty; name a policy file, or leave "
               "`policy` out");
}

static void test_removed(void)
{
  const char *tail = ", which this build does not read; write ";
  const char *end = " instead. Edit the configuration, or select an empty `box_dir` to rebuild "
                    "a stored record";
  struct {
    const char *toml, *key, *repl;
  } cases[] = {
    { HEAD "workspace = \"/w\"\n" AGENT, "workspace", "`[agent] workspace`" },
    { HEAD "[filesystem]\nread = []\n" AGENT, "filesystem", "`[agent.filesystem]`" },
    { HEAD "[env]\nA = \"b\"\n" AGENT, "env", "`[agent.env]`" },
    { HEAD AGENT "read = [\"/x\"]\n", "agent.read", "`read` in `[agent.filesystem]`" },
    { HEAD AGENT "default_command = [\"x\"]\n", "agent.default_command", "`[agent] command`" },
    { HEAD AGENT "[tool.git]\ncommand = [\"git\"]\nexec = [\"/x\"]\n", "tool.git.exec",
      "`[tool.git] command`" },
    { HEAD AGENT "[tool.git]\ncommand = [\"git\"]\nwrite = [\"/x\"]\n", "tool.git.write",
      "`write` in `[tool.git.filesystem]`" },
    { HEAD AGENT "[tool.git]\ncommand = [\"git\"]\nfilesystem.metadata = [\"/x\"]\n",
      "tool.git.filesystem.metadata", "`read` or `read_file` in `[tool.git.filesystem]`" },
    { HEAD AGENT "[tool.git]\ncommand = [\"git\"]\nfilesystem.exec = [\"/x\"]\n",
      "tool.git.filesystem.exec",
      "the program in `[tool.git] command`, or an `[agent.filesystem] exec` entry" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *want = g_strdup_printf("@ carries `%s`%s%s%s", cases[i].key, tail, cases[i].repl, end);
    expect_error(cases[i].toml, want);
    g_free(want);
  }
}

static void test_agent_network(void)
{
  expect_error(HEAD AGENT "network.contain_egress = true\n",
               "invalid `[agent]` table: `network` is refused on `[agent]`: the agent always "
               "reaches the network through the egress gateway, and only a `[tool.<name>]` or a "
               "stdio `[mcp.<name>]` takes `network.contain_egress` (in @)");
}

static void test_command_rules(void)
{
  expect_error(HEAD "[agent]\ncommand = []\n",
               "invalid `[agent]` table: `command` must name a program as its first entry (in @)");
  expect_error(HEAD "[agent]\ncommand = [\"\", \"x\"]\n",
               "invalid `[agent]` table: `command` element 0 is empty (in @)");
  expect_error(HEAD "[agent]\ncommand = [\"bin/agent\"]\n",
               "invalid `[agent]` table: `command` element 0 \"bin/agent\" is a relative path; "
               "write an absolute path, or a bare name that `env.PATH` resolves (in @)");
  expect_error(HEAD "[agent]\ncommand = [\"${HOME}/agent\"]\n",
               "invalid `[agent]` table: `command` element 0 \"${HOME}/agent\" is spelled with "
               "`${`, and a program is never expanded (in @)");
  expect_error(HEAD "[agent]\ncommand = [\"a\", \"--x=${HOME}\"]\n",
               "invalid `[agent]` table: `command` element 1 \"--x=${HOME}\" names `${HOME}`, "
               "which is not expanded; only ${OTEL_EXPORTER_OTLP_ENDPOINT}, "
               "${OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} and ${OTEL_EXPORTER_OTLP_PROTOCOL} expand "
               "(in @)");
  expect_error(HEAD "[agent]\ncommand = [\"a\", \"b\", \"${OTEL_EXPORTER_OTLP_PROTOCOL\"]\n",
               "invalid `[agent]` table: `command` element 2 \"${OTEL_EXPORTER_OTLP_PROTOCOL\" "
               "opens `${` and never closes it; only ${OTEL_EXPORTER_OTLP_ENDPOINT}, "
               "${OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} and ${OTEL_EXPORTER_OTLP_PROTOCOL} expand "
               "(in @)");
  expect_error(HEAD AGENT "[tool.t]\ncommand = [\"./t\"]\n",
               "invalid `[tool.t]` table: `command` element 0 \"./t\" is a relative path; write "
               "an absolute path, or a bare name that `env.PATH` resolves (in @)");
  expect_error(HEAD AGENT "workspace = \"src\"\n",
               "invalid `[agent]` table: `workspace` must be an absolute path: \"src\" (in @)");
}

static void test_env_rules(void)
{
  const char *refused[] = { "LD_PRELOAD",    "HTTP_PROXY",
                            "no_proxy",      "OTEL_EXPORTER_OTLP_HEADERS",
                            "PYTHONPATH",    "DYLD_INSERT_LIBRARIES",
                            "BASH_ENV",      "PWD",
                            "USER",          "_JAVA_OPTIONS",
                            "GIT_SSL_CAINFO" };
  for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
    char *toml = g_strdup_printf(HEAD AGENT "env.%s = \"x\"\n", refused[i]);
    char *want = g_strdup_printf("invalid `[agent]` table: `env` name \"%s\" is set by the box "
                                 "itself, so a table cannot claim it (in @)",
                                 refused[i]);
    expect_error(toml, want);
    g_free(toml);
    g_free(want);
  }
  expect_error(HEAD AGENT "[tool.g]\ncommand = [\"g\"]\nenv.NODE_OPTIONS = \"x\"\n",
               "invalid `[tool.g]` table: `env` name \"NODE_OPTIONS\" is set by the box itself, "
               "so a table cannot claim it (in @)");
  expect_error(HEAD AGENT "env.\"1A\" = \"x\"\n",
               "invalid `[agent]` table: `env` name \"1A\" is not an environment name; use "
               "letters, digits and '_', not beginning with a digit (in @)");
  expect_error(HEAD AGENT "env.\"A-B\" = \"x\"\n",
               "invalid `[agent]` table: `env` name \"A-B\" is not an environment name; use "
               "letters, digits and '_', not beginning with a digit (in @)");
  expect_error(HEAD AGENT "env.HOME = \"home\"\n",
               "invalid `[agent]` table: `env.HOME` must be an absolute path: \"home\" (in @)");
  expect_error(HEAD AGENT "env.TMPDIR = \"\"\n",
               "invalid `[agent]` table: `env.TMPDIR` must be an absolute path: \"\" (in @)");
}

static void test_fs_spelling(void)
{
  expect_error(HEAD AGENT "filesystem.read = [\"src\"]\n",
               "invalid `[agent]` table: `filesystem.read` path \"src\" must be absolute or start "
               "with `~/`, so a checked-in configuration holds in every clone (in @)");
  expect_error(HEAD AGENT "filesystem.write = [\"~op/x\"]\n",
               "invalid `[agent]` table: `filesystem.write` path \"~op/x\" must be absolute or "
               "start with `~/`, so a checked-in configuration holds in every clone (in @)");
  expect_error(HEAD AGENT "filesystem.deny = [\"~/*.key\"]\n",
               "invalid `[agent]` table: `filesystem.deny` path \"~/*.key\" must be exact and "
               "contain no pattern or control character (in @)");
  expect_error(HEAD AGENT "filesystem.exec = [\"/bin/a\\tb\"]\n",
               "invalid `[agent]` table: `filesystem.exec` path \"/bin/a\\tb\" must be exact and "
               "contain no pattern or control character (in @)");
  expect_error(HEAD AGENT "filesystem.read_file = [\"~/a/../b\"]\n",
               "invalid `[agent]` table: `filesystem.read_file` path \"~/a/../b\" carries `..`; "
               "name the path it means (in @)");
  expect_error(HEAD AGENT "filesystem.read = [\"~/src\", \"/home/op/src/\"]\n",
               "invalid `[agent]` table: `filesystem.read` path /home/op/src is duplicated (in @)");
  expect_error(HEAD AGENT "filesystem.list = [\"~/src\"]\n",
               "invalid `[agent]` table: /home/op/src cannot be listed without its contents on "
               "Linux: the namespace backend has no lowering for `list`; grant `read` instead "
               "(in @)");
  expect_error(HEAD AGENT "[tool.t]\ncommand = [\"t\"]\nfilesystem.write_file = [\"x\"]\n",
               "invalid `[tool.t]` table: `filesystem.write_file` path \"x\" must be absolute or "
               "start with `~/`, so a checked-in configuration holds in every clone (in @)");
  expect_error(HEAD AGENT "filesystem.metadata = [\"srv\"]\n",
               "invalid `[agent]` table: `filesystem.metadata` path \"srv\" must be absolute or "
               "start with `~/`, so a checked-in configuration holds in every clone (in @)");
}

static void test_tool_label(void)
{
  expect_error(HEAD AGENT "[tool.\"a b\"]\ncommand = [\"x\"]\n",
               "invalid `[tool.a b]` table: the label must be one component of letters, digits, "
               "'.', '_', or '-' (in @)");
  expect_error(HEAD AGENT "[tool.\"..\"]\ncommand = [\"x\"]\n",
               "invalid `[tool...]` table: the label must be one component of letters, digits, "
               "'.', '_', or '-' (in @)");
}

/* ---- [gateway]: the address floor's exceptions, extra CAs ---- */

static void test_gateway_keys(void)
{
  BoxConfig *cfg = load_ok(HEAD AGENT);
  g_assert_nonnull(cfg->gateway_allow_local);
  g_assert_null(cfg->gateway_allow_local[0]);
  g_assert_nonnull(cfg->gateway_extra_ca);
  g_assert_null(cfg->gateway_extra_ca[0]);
  box_config_free(cfg);
  cfg = load_ok(HEAD AGENT
                "[gateway]\nallow_local = [\"127.0.0.2\", \"[::1]:8443\", \"localhost:80\"]\n"
                "extra_ca = [\"/etc/test-ca.pem\", \"certs/ca.pem\"]\n");
  g_assert_cmpuint(g_strv_length(cfg->gateway_allow_local), ==, 3);
  g_assert_cmpstr(cfg->gateway_allow_local[1], ==, "[::1]:8443");
  g_assert_cmpstr(cfg->gateway_extra_ca[0], ==, "/etc/test-ca.pem");
  char *rel = g_build_filename(tmpdir, "certs", "ca.pem", NULL);
  g_assert_cmpstr(cfg->gateway_extra_ca[1], ==, rel);
  g_free(rel);
  box_config_free(cfg);
  expect_error(HEAD AGENT "[gateway]\nallow_local = \"127.0.0.1\"\n",
               "cannot parse config file @: `gateway.allow_local` must be an array of strings");
  expect_error(HEAD AGENT "[gateway]\nallow_local = [\"127.0.0.1:0\"]\n",
               "cannot parse config file @: `gateway.allow_local` entry \"127.0.0.1:0\" is "
               "invalid: write HOST, HOST:PORT or [IPV6]:PORT, with a port from 1 to 65535");
  expect_error(HEAD AGENT "[gateway]\nextra_ca = [\"\"]\n",
               "cannot parse config file @: `gateway.extra_ca` has an empty entry");
  expect_error(HEAD AGENT "[gateway]\nallow = [\"x\"]\n",
               "cannot parse config file @: unknown field `gateway.allow`");
  expect_error(HEAD "gateway = 1\n" AGENT, "cannot parse config file @: `gateway` must be a table");
}

/* [agent] shell_timeout: the Shell's per-command wall clock. */
static void test_shell_timeout(void)
{
  BoxConfig *cfg = load_ok(HEAD AGENT);
  g_assert_cmpuint(cfg->agent.shell_timeout_ms, ==, 0);
  box_config_free(cfg);
  static const struct {
    const char *v;
    unsigned ms;
  } good[] = {
    { "\"30s\"", 30000 },  { "\"1500ms\"", 1500 }, { "\"2m\"", 120000 },
    { "\"1h\"", 3600000 }, { "\"0.5s\"", 500 },    { "5", 5000 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
    char *text = g_strdup_printf(HEAD AGENT "shell_timeout = %s\n", good[i].v);
    cfg = load_ok(text);
    g_assert_cmpuint(cfg->agent.shell_timeout_ms, ==, good[i].ms);
    box_config_free(cfg);
    g_free(text);
  }
  expect_error(HEAD AGENT "shell_timeout = \"soon\"\n",
               "cannot parse config file @: `agent.shell_timeout` = \"soon\" is invalid: "
               "expected a duration such as \"30s\", \"500ms\" or \"2m\"");
  expect_error(HEAD AGENT "shell_timeout = \"30\"\n",
               "cannot parse config file @: `agent.shell_timeout` = \"30\" is invalid: "
               "expected a duration such as \"30s\", \"500ms\" or \"2m\"");
  expect_error(HEAD AGENT "shell_timeout = true\n",
               "cannot parse config file @: `agent.shell_timeout` is invalid: "
               "expected a duration such as \"30s\", \"500ms\" or \"2m\"");
  expect_error(HEAD AGENT "shell_timeout = \"0s\"\n",
               "cannot parse config file @: `agent.shell_timeout` is invalid: must be at least "
               "1ms and at most 24h");
  expect_error(HEAD AGENT "shell_timeout = \"25h\"\n",
               "cannot parse config file @: `agent.shell_timeout` is invalid: must be at least "
               "1ms and at most 24h");
  expect_error(HEAD AGENT "shell_timeout = -3\n",
               "cannot parse config file @: `agent.shell_timeout` is invalid: must be at least "
               "1ms and at most 24h");
  /* the Shell's limit is the agent's; a tool has none */
  expect_error(HEAD AGENT "[tool.git]\ncommand = [\"git\"]\nshell_timeout = \"1s\"\n",
               "cannot parse config file @: unknown field `tool.git.shell_timeout`");
}

static void test_egress_routes(void)
{
  BoxConfig *cfg =
    load_ok(HEAD AGENT "[egress.zz]\n"
                       "destinations = [\"*.example.com\", \"api.other.com:8443/v1\"]\n"
                       "secret.ref = \"env://ZZ_TOKEN\"\n"
                       "[egress.aa]\n"
                       "destinations = [\"q.example.org\"]\n"
                       "protocol = \"http\"\n"
                       "secret = { ref = \"env://AA\", placement = \"query_param\", "
                       "param = \"api_key\", inject = \"always\", phantom_prefix = \"p-\" }\n"
                       "[egress.hh]\n"
                       "destinations = [\"h.example.org\"]\n"
                       "secret.ref = \"env://HH\"\n"
                       "secret.header = \"X-Key\"\n");
  g_assert_cmpuint(cfg->egress->len, ==, 3);
  BoxEgressRoute *aa = g_ptr_array_index(cfg->egress, 0);
  BoxEgressRoute *hh = g_ptr_array_index(cfg->egress, 1);
  BoxEgressRoute *zz = g_ptr_array_index(cfg->egress, 2);
  g_assert_cmpstr(aa->name, ==, "aa");
  g_assert_cmpint(aa->placement, ==, BOX_GATEWAY_PLACE_QUERY);
  g_assert_cmpstr(aa->param, ==, "api_key");
  g_assert_true(aa->inject_always);
  g_assert_cmpstr(aa->phantom_prefix, ==, "p-");
  g_assert_cmpstr(aa->env_name, ==, "AA");
  /* Defaults: Authorization with "Bearer ", else an empty prefix. */
  g_assert_cmpstr(zz->header, ==, "Authorization");
  g_assert_cmpstr(zz->prefix, ==, "Bearer ");
  g_assert_cmpstr(zz->phantom_prefix, ==, "strands_box_");
  g_assert_false(zz->inject_always);
  g_assert_cmpstr(zz->destinations[1], ==, "api.other.com:8443/v1");
  g_assert_null(zz->destinations[2]);
  g_assert_cmpstr(hh->header, ==, "X-Key");
  g_assert_cmpstr(hh->prefix, ==, "");
  box_config_free(cfg);
  /* A route to a plain destination overlapping another route's. */
  expect_error(HEAD AGENT
               "[egress.a]\ndestinations = [\"x.com/v1\"]\nsecret.ref = \"env://A\"\n"
               "[egress.b]\ndestinations = [\"x.com:443/v1/y\"]\nsecret.ref = \"env://B\"\n",
               "invalid `[egress.b]` table: `destinations` entry \"x.com:443/v1/y\" overlaps "
               "\"x.com/v1\" of `[egress.a]`: a request must meet one secret at most (in @)");
  expect_error(HEAD AGENT "[egress.a]\ndestinations = [\"x.com\"]\nsecret.ref = \"credsd://p\"\n",
               "invalid `[egress.a]` table: `secret.ref` \"credsd://p\": credsd:// credentials are "
               "not supported by this build yet; use `env://NAME` or `aws://PROFILE` (in @)");
  expect_error(
    HEAD AGENT "[egress.a]\ndestinations = [\"x.com\"]\nsecret.ref = \"aws://p\"\n",
    "invalid `[egress.a]` table: `destinations` entry \"x.com\" is not below "
    "amazonaws.com or api.aws, so no SigV4 service and region can be read from it (in @)");
  {
    BoxConfig *aws = load_ok(HEAD AGENT "[egress.a]\ndestinations = [\"*.s3.amazonaws.com\", "
                                        "\"sts.us-east-1.amazonaws.com:8443\"]\n"
                                        "secret.ref = \"aws://dev\"\n");
    BoxEgressRoute *a = g_ptr_array_index(aws->egress, 0);
    g_assert_true(a->aws);
    g_assert_cmpstr(a->aws_profile, ==, "dev");
    g_assert_cmpstr(a->env_name, ==, "AWS_ACCESS_KEY_ID");
    box_config_free(aws);
  }
  expect_error(
    HEAD AGENT "[egress.a]\ndestinations = [\"x.com\"]\nsecret.ref = \"env://A\"\n"
               "secret.header = \"Content-Length\"\n",
    "invalid `[egress.a]` table: `secret.header` \"Content-Length\" frames or routes the "
    "request and cannot carry a secret (in @)");
  expect_error(HEAD AGENT "[egress.a]\ndestinations = [\"x.com\"]\nsecret.ref = \"env://A\"\n"
                          "secret.placement = \"basic_auth\"\nsecret.prefix = \"x\"\n",
               "invalid `[egress.a]` table: `secret.prefix` applies only to placement = "
               "\"header\" (in @)");
}

/* [telemetry.<label>]: what is kept of each target, sorted by label, and
 * the rules the integration tests do not reach through `box run`. */
static void test_telemetry_targets(void)
{
  BoxConfig *cfg =
    load_ok(HEAD AGENT "[telemetry.z]\nkind = \"file\"\ndestination = \"~/r.jsonl\"\n"
                       "[telemetry.a]\nkind = \"otlp\"\ndestination = "
                       "\"http://127.0.0.1:4318\"\ninclude = [\"deny\", \"trace\", "
                       "\"logs\"]\nsecret = { ref = \"env://TOKEN\", header = "
                       "\"X-Token\" }\n");
  g_assert_cmpuint(cfg->telemetry->len, ==, 2);
  const BoxTelemetryTarget *a = g_ptr_array_index(cfg->telemetry, 0);
  const BoxTelemetryTarget *z = g_ptr_array_index(cfg->telemetry, 1);
  g_assert_cmpstr(a->label, ==, "a");
  g_assert_true(a->otlp);
  g_assert_cmpuint(a->include, ==, BOX_TELEMETRY_DENY | BOX_TELEMETRY_TRACE | BOX_TELEMETRY_LOGS);
  g_assert_cmpstr(a->secret_env, ==, "TOKEN");
  g_assert_cmpstr(a->secret_header, ==, "X-Token");
  g_assert_false(z->otlp);
  g_assert_cmpstr(z->destination, ==, "~/r.jsonl"); /* expanded when opened */
  g_assert_cmpuint(z->include, ==, BOX_TELEMETRY_ALL);
  box_config_free(cfg);
  cfg = load_ok(HEAD AGENT);
  g_assert_cmpuint(cfg->telemetry->len, ==, 0); /* the default file */
  box_config_free(cfg);
  expect_error(HEAD AGENT "[telemetry.\"a b\"]\nkind = \"file\"\ndestination = \"/x\"\n",
               "invalid `[telemetry.a b]` target: the label must be one component of letters, "
               "digits, '.', '_', or '-' (in @)");
  expect_error(HEAD AGENT "[telemetry.t]\nkind = \"otlp\"\ndestination = \"http://h\"\n"
                          "secret = { ref = \"env://T\", header = \"X: y\" }\n",
               "invalid `[telemetry.t]` target: `secret.header` is not a header name (in @)");
  expect_error(HEAD AGENT "[telemetry.t]\nkind = \"otlp\"\ndestination = \"http://h\"\n"
                          "secret = { ref = \"env://T\", placement = \"header\" }\n",
               "cannot parse config file @: unknown field `telemetry.t.secret.placement`");
  expect_error(HEAD AGENT "[telemetry.t]\nkind = \"file\"\ndestination = \"/x\"\n"
                          "include = [\"permit\", \"kernel\", \"kernel\"]\n",
               "invalid `[telemetry.t]` target: the target names kernel twice (in @)");
  expect_error(HEAD AGENT "[telemetry]\nkind = \"file\"\n",
               "cannot parse config file @: `telemetry.kind` must be a table");
}

/* ---- [mcp.<name>] (spec/runtime.md §2.5) ---- */

static void test_mcp_good(void)
{
  BoxConfig *cfg = load_ok(HEAD AGENT "[egress.api]\ndestinations = [\"api.example.com\"]\n"
                                      "secret.ref = \"env://API\"\n"
                                      "[mcp.fs]\ntype = \"stdio\"\n"
                                      "command = [\"mcp-server-filesystem\", \"/srv\"]\n"
                                      "workspace = \"/srv\"\nenv = { A = \"1\" }\n"
                                      "[mcp.fs.filesystem]\nread = [\"/srv\"]\n"
                                      "deny = [\"/srv/private\"]\n"
                                      "[mcp.fs.network]\ncontain_egress = false\n"
                                      "[mcp.gh]\ntype = \"http\"\n"
                                      "destinations = [\"mcp.example.com\"]\n"
                                      "secret.ref = \"env://GH_TOKEN\"\n"
                                      "[mcp.anon]\ntype = \"http\"\n"
                                      "destinations = [\"open.example.com:8080\"]\n"
                                      "[mcp.echo]\ntype = \"stdio\"\ncommand = [\"echo-mcp\"]\n");
  g_assert_cmpuint(cfg->mcp->len, ==, 4);
  /* sorted by name */
  BoxMcpServer **servers = (BoxMcpServer **)cfg->mcp->pdata;
  const char *const names[] = { "anon", "echo", "fs", "gh" };
  for (int i = 0; i < 4; i++) g_assert_cmpstr(servers[i]->name, ==, names[i]);
  BoxMcpServer *anon = servers[0], *echo = servers[1], *fs = servers[2], *gh = servers[3];
  g_assert_true(anon->http);
  g_assert_null(anon->route->env_name);
  g_assert_cmpstr(anon->route->destinations[0], ==, "open.example.com:8080");
  g_assert_false(echo->http);
  g_assert_true(echo->contain_egress);
  g_assert_cmpstr(echo->spec.command[0], ==, "echo-mcp");
  g_assert_false(fs->contain_egress);
  g_assert_cmpstr(fs->spec.label, ==, "fs");
  g_assert_cmpstr(fs->spec.command[1], ==, "/srv");
  g_assert_cmpstr(fs->spec.workspace, ==, "/srv");
  g_assert_cmpstr(g_hash_table_lookup(fs->spec.env, "A"), ==, "1");
  g_assert_cmpstr(fs->spec.fs.read[0], ==, "/srv");
  g_assert_cmpstr(fs->spec.fs.deny[0], ==, "/srv/private");
  g_assert_true(gh->http);
  g_assert_cmpstr(gh->route->env_name, ==, "GH_TOKEN");
  g_assert_cmpstr(gh->route->header, ==, "Authorization");
  g_assert_cmpstr(gh->route->prefix, ==, "Bearer ");
  box_config_free(cfg);
}

#define MCP_STDIO "[mcp.fs]\ntype = \"stdio\"\n"

static void test_mcp_errors(void)
{
  expect_error(HEAD AGENT "[mcp.fs]\ncommand = [\"x\"]\n",
               "cannot parse config file @: missing field `mcp.fs.type`");
  expect_error(HEAD AGENT "[mcp.fs]\ntype = \"sse\"\n",
               "invalid `[mcp.fs]` table: `type` \"sse\" is not \"stdio\" or \"http\" (in @)");
  expect_error(HEAD AGENT "[mcp.fs]\ntype = 1\n",
               "cannot parse config file @: `mcp.fs.type` must be a string");
  expect_error(HEAD AGENT "[mcp.\"a/b\"]\ntype = \"stdio\"\ncommand = [\"x\"]\n",
               "invalid `[mcp.a/b]` table: the name must be one component of letters, digits, "
               "'.', '_', or '-' (in @)");
  expect_error(HEAD AGENT MCP_STDIO, "cannot parse config file @: missing field `mcp.fs.command`");
  expect_error(HEAD AGENT MCP_STDIO "command = [\"x\"]\ndestinations = [\"a.com\"]\n",
               "cannot parse config file @: unknown field `mcp.fs.destinations`");
  expect_error(HEAD AGENT MCP_STDIO "command = [\"/usr/bin/srv\"]\n",
               "invalid `[mcp.fs]` table: `command` element 0 \"/usr/bin/srv\" is not a bare "
               "program name; the box places an alias named for the program in its `bin/`, so "
               "write one component of letters, digits, '.', '_', or '-' that `env.PATH` "
               "resolves (in @)");
  expect_error(HEAD AGENT MCP_STDIO "command = [\"bin/srv\"]\n",
               "invalid `[mcp.fs]` table: `command` element 0 \"bin/srv\" is a relative path; "
               "write an absolute path, or a bare name that `env.PATH` resolves (in @)");
  expect_error(HEAD AGENT MCP_STDIO "command = [\"python3\", \"-m\", \"srv\"]\n",
               "invalid `[mcp.fs]` table: `command` element 0 \"python3\" is the name of the "
               "box's own Shell or Python alias; an MCP program cannot be zsh, bash, sh, python3, "
               "or python (in @)");
  expect_error(HEAD AGENT MCP_STDIO "command = [\"srv\"]\n"
                                    "[mcp.other]\ntype = \"stdio\"\ncommand = [\"srv\"]\n",
               "invalid `[mcp.other]` table: `command` element 0 \"srv\" is already the program "
               "of `[mcp.fs]`; each server has its own program (in @)");
  expect_error(HEAD AGENT MCP_STDIO "command = [\"srv\"]\n[mcp.fs.filesystem]\nexec = [\"/x\"]\n",
               "@ carries `mcp.fs.filesystem.exec`, which this build does not read; write the "
               "program in `[mcp.fs] command`, or an `[agent.filesystem] exec` entry instead. "
               "Edit the configuration, or select an empty `box_dir` to rebuild a stored record");
  expect_error(HEAD AGENT MCP_STDIO "command = [\"srv\"]\n[mcp.fs.filesystem]\nmetadata = []\n",
               "@ carries `mcp.fs.filesystem.metadata`, which this build does not read; write "
               "`read` or `read_file` in `[mcp.fs.filesystem]` instead. Edit the configuration, "
               "or select an empty `box_dir` to rebuild a stored record");
  expect_error(HEAD AGENT MCP_STDIO "command = [\"srv\"]\nenv = { LD_PRELOAD = \"x\" }\n",
               "invalid `[mcp.fs]` table: `env` name \"LD_PRELOAD\" is set by the box itself, so "
               "a table cannot claim it (in @)");
  expect_error(HEAD AGENT MCP_STDIO "command = [\"srv\"]\nnetwork.contain_egress = 1\n",
               "cannot parse config file @: `mcp.fs.network.contain_egress` must be a boolean");
  expect_error(HEAD AGENT "[mcp.gh]\ntype = \"http\"\ncommand = [\"x\"]\n",
               "cannot parse config file @: unknown field `mcp.gh.command`");
  expect_error(HEAD AGENT "[mcp.gh]\ntype = \"http\"\n",
               "cannot parse config file @: missing field `mcp.gh.destinations`");
  expect_error(HEAD AGENT "[mcp.gh]\ntype = \"http\"\ndestinations = []\n",
               "invalid `[mcp.gh]` table: `destinations` is empty; name the hosts the secret is "
               "for (in @)");
  expect_error(HEAD AGENT "[mcp.gh]\ntype = \"http\"\ndestinations = [\"*\"]\n"
                          "secret.ref = \"env://T\"\n",
               "invalid `[mcp.gh]` table: `destinations` entry \"*\" is invalid: `*` would match "
               "every host (in @)");
  expect_error(HEAD AGENT "[mcp.gh]\ntype = \"http\"\ndestinations = [\"a.com\"]\n"
                          "secret = \"literal\"\n",
               "invalid `[mcp.gh]` table: `secret` must be a table with `ref = \"env://NAME\"`; a "
               "literal secret is refused, so that the configuration never holds one (in @)");
  expect_error(HEAD AGENT "[egress.api]\ndestinations = [\"a.com\"]\nsecret.ref = \"env://A\"\n"
                          "[mcp.gh]\ntype = \"http\"\ndestinations = [\"a.com/mcp\"]\n",
               "invalid `[mcp.gh]` table: `destinations` entry \"a.com/mcp\" overlaps \"a.com\" of "
               "`[egress.api]`: a request must meet one secret at most (in @)");
  expect_error(HEAD AGENT "[egress.api]\ndestinations = [\"a.com\"]\nsecret.ref = \"env://A\"\n"
                          "[mcp.gh]\ntype = \"http\"\ndestinations = [\"b.com\"]\n"
                          "secret.ref = \"env://A\"\n",
               "invalid `[mcp.gh]` table: `secret.ref` env://A is already the secret of "
               "`[egress.api]`, and one variable holds one phantom (in @)");
  expect_error(HEAD AGENT "[mcp.a]\ntype = \"http\"\ndestinations = [\"a.com\"]\n"
                          "[mcp.b]\ntype = \"http\"\ndestinations = [\"a.com:443\"]\n",
               "invalid `[mcp.b]` table: `destinations` entry \"a.com:443\" overlaps \"a.com\" of "
               "`[mcp.a]`: a request must meet one secret at most (in @)");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  char *t = g_dir_make_tmp("test_config-XXXXXX", NULL);
  g_assert_nonnull(t);
  tmpdir = realpath(t, NULL);
  g_free(t);

  static const TestCase cases[] = { { "/config/good", test_good },
                                    { "/config/gateway", test_gateway_keys },
                                    { "/config/shell-timeout", test_shell_timeout },
                                    { "/config/minimal", test_minimal_real },
                                    { "/config/canonical-path", test_canonical_path },
                                    { "/config/nothing-created", test_nothing_created },
                                    { "/config/file-errors", test_file_errors },
                                    { "/config/syntax-error", test_syntax_error },
                                    { "/config/adapter", test_adapter },
                                    { "/config/unknown-keys", test_unknown_keys },
                                    { "/config/wrong-types", test_wrong_types },
                                    { "/config/wrong-types-tool", test_wrong_types_tool },
                                    { "/config/missing", test_missing },
                                    { "/config/name-and-box-dir", test_name_and_box_dir },
                                    { "/config/removed-keys", test_removed },
                                    { "/config/agent-network", test_agent_network },
                                    { "/config/command", test_command_rules },
                                    { "/config/env", test_env_rules },
                                    { "/config/filesystem-spelling", test_fs_spelling },
                                    { "/config/tool-label", test_tool_label },
                                    { "/config/egress", test_egress_routes },
                                    { "/config/telemetry", test_telemetry_targets },

                                    { "/config/mcp/good", test_mcp_good },
                                    { "/config/mcp/errors", test_mcp_errors } };
  test_add_table(cases, G_N_ELEMENTS(cases));
  int rc = g_test_run();

  test_remove_tree(tmpdir);
  free(tmpdir);
  return rc;
}
