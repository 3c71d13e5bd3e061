/* cmd_policy.c — `box policy check|decide|generate-schema|replay`
 * (spec/runtime.md §1): test a policy file the way a box would load it. */
#include "box/box-private.h"
#include "mcp/discover.h"
#include "mcp/schema.h"

#include <openssl/crypto.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char policy_usage[] = "Usage: box policy <COMMAND>\n"
                                   "\n"
                                   "Commands:\n"
                                   "  check FILE [--home DIR] [--config BOX_TOML]              "
                                   "Load FILE as a box would; print ok or why not\n"
                                   "  decide FILE [--home DIR] [--explain] ACTION INPUT_JSON   "
                                   "Print the message the agent would see\n"
                                   "  generate-schema --config FILE --output-dir DIR           "
                                   "Write actions.cedarschema and events.dwschema\n"
                                   "  replay FILE [--home DIR] EVENTS                          "
                                   "Print the decision of each request in EVENTS (JSON lines)\n";

static int usage_error(const char *fmt, const char *arg)
{
  fputs("error: ", stderr);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n\n%s", policy_usage);
  return 2;
}

typedef struct {
  const char *home;
  const char *config; /* check: the box whose MCP servers' tools the policy may name */
  bool explain;
  const char *pos[3];
  int npos;
} PolicyArgs;

/* Options anywhere; returns -1 when parsed, else the exit status. */
static int parse_args(int argc, char **argv, PolicyArgs *a, int max_pos, bool allow_explain)
{
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    if (strcmp(s, "--home") == 0) {
      if (i + 1 >= argc)
        return usage_error("a value is required for '%s' but none was supplied", s);
      a->home = argv[++i];
    } else if (g_str_has_prefix(s, "--home=")) {
      a->home = s + 7;
    } else if (!allow_explain && strcmp(s, "--config") == 0) {
      if (i + 1 >= argc)
        return usage_error("a value is required for '%s' but none was supplied", s);
      a->config = argv[++i];
    } else if (allow_explain && strcmp(s, "--explain") == 0) {
      a->explain = true;
    } else if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
      fputs(policy_usage, stdout);
      return 0;
    } else if (s[0] == '-' && s[1] && strcmp(s, "--") != 0) {
      return usage_error("unexpected argument '%s' found", s);
    } else {
      if (a->npos >= max_pos) return usage_error("unexpected argument '%s' found", s);
      a->pos[a->npos++] = s;
    }
  }
  if (a->npos < max_pos)
    return usage_error("%s", "the following required arguments were not provided");
  if (!a->home) a->home = g_getenv("HOME");
  return -1;
}

BoxPolicy *box_verb_policy_load(const char *file, const char *home, bool quiet)
{
  g_autoptr(GError) error = NULL;
  BoxPolicy *p = box_policy_load_file(file, home, &error);
  if (!p) {
    fprintf(stderr, "box: error: policy file %s will not load: %s\n", file, error->message);
    return NULL;
  }
  const GPtrArray *w = box_policy_warnings(p);
  for (guint i = 0; !quiet && w && i < w->len; i++)
    fprintf(stderr, "box: warning: %s\n", (const char *)w->pdata[i]);
  return p;
}

static bool register_generated(const char *config);

static int cmd_check(int argc, char **argv)
{
  PolicyArgs a = { 0 };
  int rc = parse_args(argc, argv, &a, 1, false);
  if (rc >= 0) return rc;
  if (a.config && !register_generated(a.config)) return 1;
  BoxPolicy *p = box_verb_policy_load(a.pos[0], a.home, false);
  if (!p) return 1;
  puts("ok");
  box_policy_free(p);
  return 0;
}

static int cmd_decide(int argc, char **argv)
{
  PolicyArgs a = { 0 };
  int rc = parse_args(argc, argv, &a, 3, true);
  if (rc >= 0) return rc;
  const char *file = a.pos[0], *action = a.pos[1], *text = a.pos[2];
  enum json_tokener_error jerr = json_tokener_success;
  json_object *input = json_tokener_parse_verbose(text, &jerr);
  if (!input || !json_object_is_type(input, json_type_object)) {
    fprintf(stderr, "box: error: INPUT_JSON is not a JSON object: %s\n",
            input ? "found another JSON value" : json_tokener_error_desc(jerr));
    json_object_put(input);
    return 2;
  }
  BoxPolicy *p = box_verb_policy_load(file, a.home, false);
  if (!p) {
    json_object_put(input);
    return 2;
  }
  BoxDecision *d = box_policy_decide(p, action, input);
  puts(d->message);
  if (a.explain) {
    GPtrArray *lines = box_policy_explain(p, action, input);
    for (guint i = 0; i < lines->len; i++)
      fprintf(stderr, "box: explain: %s\n", (const char *)lines->pdata[i]);
    g_ptr_array_unref(lines);
  }
  rc = d->verdict == BOX_VERDICT_PERMIT ? 0 : 1;
  box_decision_free(d);
  box_policy_free(p);
  json_object_put(input);
  return rc;
}

/* ---- generate-schema -------------------------------------------------------- */

static const char actions_schema[] =
  "// Box action schema (spec/policy.md §4): one principal, one resource,\n"
  "// every discriminating fact in context.input.\n"
  "namespace Box {\n"
  "  entity Agent;\n"
  "  entity Resource;\n"
  "  entity FsReadOperation enum [\"read_content\", \"read_metadata\", \"enumerate\", "
  "\"read_link\", \"change_dir\", \"exec\"];\n"
  "  entity FsWriteOperation enum [\"write_content\", \"create_dir\", \"set_permissions\", "
  "\"symlink\"];\n"
  "  entity FsDeleteOperation enum [\"remove_file\", \"remove_dir\"];\n"
  "  entity FsMoveOperation enum [\"rename\"];\n"
  "  entity FsOtherOperation enum [\"other\"];\n"
  "  entity FsResponseResult enum [\"completed\", \"descriptor_issued\", \"indeterminate\"];\n"
  "\n"
  "  type FsOutput = { result: FsResponseResult };\n"
  "  type StatusOutput = { status: Long };\n"
  "\n"
  "  action \"fs:read\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { path: String, operation: FsReadOperation }, output?: FsOutput } };\n"
  "  action \"fs:write\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { path: String, operation: FsWriteOperation }, output?: FsOutput } };\n"
  "  action \"fs:delete\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { path: String, operation: FsDeleteOperation }, output?: FsOutput } };\n"
  "  action \"fs:move\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { path: String, operation: FsMoveOperation }, output?: FsOutput } };\n"
  "  action \"fs:other\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { path: String, operation: FsOtherOperation }, output?: FsOutput } };\n"
  "  action \"net:connect\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { host: String, ip?: String, port: Long } } };\n"
  "  action \"http:request\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { host: String, port: Long, method: String, path: String, body_bytes: "
  "Long,\n"
  "                        intercepted: Bool }, output?: StatusOutput } };\n"
  "  action \"shell:exec\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { command: String, program: String, arg1?: String, arg2?: String, "
  "arg_count: Long,\n"
  "                        cwd: String }, output?: StatusOutput } };\n"
  "  action \"shell:spawn\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { command: String, program: String, arg1?: String, arg2?: String, "
  "arg_count: Long,\n"
  "                        cwd: String, program_path: String, credential_reads?: Set<String> },\n"
  "               output?: StatusOutput } };\n"
  "  action \"mcp:call\" appliesTo { principal: Agent, resource: Resource,\n"
  "    context: { input: { server: String, method: String, tool?: String, prompt?: String, uri?: "
  "String } } };\n"
  "}\n";

/* The three event kinds of the action whose whole term is TERM. */
static void append_term_events(GString *s, const char *term, const char *input, const char *output)
{
  g_autofree char *in = *input ? g_strdup_printf("{ %s }", input) : g_strdup("{}");
  g_string_append_printf(s,
                         "event %s::request { input: %s, callerPrincipal: Box::Agent, "
                         "callerResource: Box::Resource, requestId: String };\n",
                         term, in);
  g_string_append_printf(s,
                         "event %s::response { input: %s, %s%s%scallerPrincipal: Box::Agent, "
                         "callerResource: Box::Resource, requestId: String };\n",
                         term, in, output ? "output: { " : "", output ? output : "",
                         output ? " }, " : "");
  g_string_append_printf(s,
                         "event %s::error { input: %s, callerPrincipal: Box::Agent, "
                         "callerResource: Box::Resource, requestId: String };\n",
                         term, in);
}

static void append_events(GString *s, const char *action, const char *input, const char *output)
{
  g_autofree char *term = g_strdup_printf("Box::Action::\"%s\"", action);
  append_term_events(s, term, input, output);
}

/* Where a server's generated actions go: their events into a schema, or
 * (events NULL) this process's policy engine. */
typedef struct {
  const char *server;
  GString *events;
} Generated;

/* McpActionFn, data a Generated. */
static void generated_action(void *data, const char *term, const char *tool, const char *fields)
{
  Generated *g = data;
  if (g->events)
    append_term_events(g->events, term, fields, NULL);
  else
    box_policy_register_action(g->server, term, tool, fields);
}

static char *events_schema(const char *generated)
{
  GString *s =
    g_string_new("// Box event schema (spec/policy.md §2.3): three event kinds per action.\n"
                 "max_window 24h;\n\n");
  static const char *fs_ops[][2] = { { "fs:read", "FsReadOperation" },
                                     { "fs:write", "FsWriteOperation" },
                                     { "fs:delete", "FsDeleteOperation" },
                                     { "fs:move", "FsMoveOperation" },
                                     { "fs:other", "FsOtherOperation" } };
  for (size_t i = 0; i < G_N_ELEMENTS(fs_ops); i++) {
    char *in = g_strdup_printf("path: String, operation: Box::%s", fs_ops[i][1]);
    append_events(s, fs_ops[i][0], in, "result: Box::FsResponseResult");
    g_free(in);
  }
  append_events(s, "net:connect", "host: String, ip?: String, port: Long", NULL);
  append_events(
    s, "http:request",
    "host: String, port: Long, method: String, path: String, body_bytes: Long, intercepted: Bool",
    "status?: Long");
  const char *exec =
    "command: String, program: String, arg1?: String, arg2?: String, arg_count: Long, cwd: String";
  append_events(s, "shell:exec", exec, "status: Long");
  char *spawn = g_strdup_printf("%s, program_path: String, credential_reads?: Set<String>", exec);
  append_events(s, "shell:spawn", spawn, "status: Long");
  g_free(spawn);
  append_events(s, "mcp:call",
                "server: String, method: String, tool?: String, prompt?: String, uri?: String",
                NULL);
  g_string_append(s, generated);
  return g_string_free(s, FALSE);
}

static bool write_atomic(const char *dir, const char *name, const char *text, char **out_path)
{
  char *path = g_build_filename(dir, name, NULL);
  GError *error = NULL;
  /* g_file_set_contents writes a temporary file and renames it */
  if (!g_file_set_contents(path, text, -1, &error)) {
    fprintf(stderr, "box: error: cannot write %s: %s\n", path, error->message);
    g_error_free(error);
    g_free(path);
    return false;
  }
  *out_path = path;
  return true;
}

/* An http server's tools/list, sent straight to its endpoint with its
 * secret read here (spec/runtime.md §1: header placement only). */
static json_object *discover_http(const BoxConfig *cfg, const BoxMcpServer *m, char **why)
{
  const BoxEgressRoute *r = m->route;
  g_autofree char *endpoint = boxd_mcp_endpoint(m, why);
  if (!endpoint) return NULL;
  const char *secret = r->env_name && !r->aws ? getenv(r->env_name) : NULL;
  bool unset = r->env_name && !r->aws && (!secret || !secret[strspn(secret, " \t\r\n")]);
  const char *problem = r->aws                                    ? "is aws://, which is signed"
                        : r->placement == BOX_GATEWAY_PLACE_QUERY ? "is placed in the query"
                                                                  : NULL;
  if (problem || unset) {
    *why = problem ? g_strdup_printf("MCP server \"%s\" failed during initialize: its secret %s, "
                                     "and generate-schema sends a secret only in a header",
                                     m->name, problem)
                   : g_strdup_printf("MCP server \"%s\" failed during initialize: `secret.ref` "
                                     "env://%s is not set in the environment",
                                     m->name, r->env_name);
    return NULL;
  }
  g_autofree char *line = NULL;
  if (secret && r->placement == BOX_GATEWAY_PLACE_BASIC_AUTH) {
    g_autofree char *b64 = g_base64_encode((const guchar *)secret, strlen(secret));
    line = g_strdup_printf("Authorization: Basic %s", b64);
  } else if (secret) {
    line = g_strdup_printf("%s: %s%s", r->header ? r->header : "Authorization",
                           r->prefix ? r->prefix : "Bearer ", secret);
  }
  json_object *tools = mcp_discover_http(m->name, endpoint, line, cfg->gateway_extra_ca, why);
  if (line) OPENSSL_cleanse(line, strlen(line));
  return tools;
}

/* Each server's per-tool actions, from its tools/list, after the Box
 * schema in out (events NULL: registered instead); false (and the failure
 * on stderr) when a server fails. */
static bool mcp_fragments(const BoxConfig *cfg, GString *out, GString *events)
{
  for (guint i = 0; i < cfg->mcp->len; i++) {
    const BoxMcpServer *m = g_ptr_array_index(cfg->mcp, i);
    char *why = NULL;
    json_object *tools =
      m->http ? discover_http(cfg, m, &why)
              : mcp_discover_stdio(m->name, m->spec.command, m->spec.env, m->spec.workspace, &why);
    Generated g = { m->name, events };
    char *fragment = tools ? mcp_schema_fragment(m->name, tools, generated_action, &g, &why) : NULL;
    if (!fragment) {
      if (tools)
        fprintf(stderr, "box: error: cannot generate the schema of MCP server \"%s\": %s\n",
                m->name, why);
      else
        fprintf(stderr, "box: error: %s\n", why);
      json_object_put(tools);
      g_free(why);
      return false;
    }
    json_object_put(tools);
    if (out) g_string_append_printf(out, "\n%s", fragment);
    g_free(fragment);
  }
  return true;
}

/* The actions of the tools config's MCP servers list, registered so that
 * a policy naming them is checked against them. */
static BoxConfig *config_said(const char *config)
{
  GError *error = NULL;
  BoxConfig *cfg = box_config_load(config, g_get_home_dir(), &error);
  if (!cfg) {
    fprintf(stderr, "box: error: %s\n", error->message);
    g_error_free(error);
  }
  return cfg;
}

static bool register_generated(const char *config)
{
  BoxConfig *cfg = config_said(config);
  if (!cfg) return false;
  bool found = mcp_fragments(cfg, NULL, NULL);
  box_config_free(cfg);
  return found;
}

static int cmd_generate_schema(int argc, char **argv)
{
  const char *config = NULL, *outdir = NULL;
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
      printf("Usage: box policy generate-schema --config FILE --output-dir DIR\n\n"
             "Writes DIR/actions.cedarschema and DIR/events.dwschema: the schema a policy\n"
             "for the box of FILE is checked against.\n");
      return 0;
    }
    const char **slot = strcmp(s, "--config") == 0       ? &config
                        : strcmp(s, "--output-dir") == 0 ? &outdir
                                                         : NULL;
    if (slot) {
      if (i + 1 >= argc)
        return usage_error("a value is required for '%s' but none was supplied", s);
      *slot = argv[++i];
    } else if (g_str_has_prefix(s, "--config=")) {
      config = s + 9;
    } else if (g_str_has_prefix(s, "--output-dir=")) {
      outdir = s + 13;
    } else {
      return usage_error("unexpected argument '%s' found", s);
    }
  }
  if (!config || !outdir)
    return usage_error(
      "%s", "the following required arguments were not provided: --config, --output-dir");
  BoxConfig *cfg = config_said(config);
  if (!cfg) return 1;
  GString *actions = g_string_new(actions_schema), *generated = g_string_new(NULL);
  bool found = mcp_fragments(cfg, actions, generated);
  box_config_free(cfg);
  if (!found || g_mkdir_with_parents(outdir, 0755) != 0) {
    if (found) fprintf(stderr, "box: error: cannot create %s: %s\n", outdir, g_strerror(errno));
    g_string_free(actions, TRUE);
    g_string_free(generated, TRUE);
    return 1;
  }
  char *events = events_schema(generated->str), *p1 = NULL, *p2 = NULL;
  g_string_free(generated, TRUE);
  bool ok = write_atomic(outdir, "actions.cedarschema", actions->str, &p1) &&
            write_atomic(outdir, "events.dwschema", events, &p2);
  g_free(events);
  g_string_free(actions, TRUE);
  if (ok) { printf("Generated %s\nGenerated %s\n", p1, p2); }
  g_free(p1);
  g_free(p2);
  return ok ? 0 : 1;
}

int box_verb_policy(int argc, char **argv)
{
  /* argv[0] = "policy" */
  if (argc < 2) {
    fputs(policy_usage, stderr);
    return 2;
  }
  const char *verb = argv[1];
  if (strcmp(verb, "check") == 0) return cmd_check(argc - 2, argv + 2);
  if (strcmp(verb, "decide") == 0) return cmd_decide(argc - 2, argv + 2);
  if (strcmp(verb, "generate-schema") == 0) return cmd_generate_schema(argc - 2, argv + 2);
  if (strcmp(verb, "replay") == 0) return box_verb_policy_replay(argc - 2, argv + 2);
  if (strcmp(verb, "-h") == 0 || strcmp(verb, "--help") == 0) {
    fputs(policy_usage, stdout);
    return 0;
  }
  fprintf(stderr, "error: unrecognized subcommand '%s'\n\n%s", verb, policy_usage);
  return 2;
}
