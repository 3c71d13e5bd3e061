/* mcp_serve.c — a stdio MCP server behind its alias (spec/runtime.md §2.5,
 * §4.1 "MCP mode", §5.10; spec/policy.md mcp:call).
 *
 * The alias hands over its stdin and stdout: the agent's JSON-RPC stream.
 * Each open starts the server contained like a tool, after a `shell:spawn`
 * permit, then relays newline-delimited messages both ways.  A request the
 * spec decides (tools/call, prompts/get, resources/read, and every method
 * but the lifecycle ones) is an mcp:call decision first; a refused one is
 * answered by the box with a JSON-RPC error and never reaches the server.
 * The server's stderr is drained so that it never blocks on it.  Requests
 * still in flight when the server ends are answered with an error, so the
 * agent's client never waits for an answer that cannot come.
 *
 * Once the agent's client has initialized the server, the broker lists the
 * server's tools itself (its own request ids, its answers kept from the
 * agent): each tool becomes a generated action, and a tools/call is then
 * decided twice (spec/policy.md, two-gate semantics).  The agent's calls
 * wait while the list is made. */
#include "box/box-private.h"
#include "mcp/schema.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* JSON-RPC error code of a refusal by the box (spec/policy.md, MCP gates). */
#define MCP_REFUSED -32001
/* A connection that hosts an MCP server may sit idle this long (§4.2). */
#define MCP_IDLE_MS (12 * 60 * 60 * 1000)
/* How long a server may outlive the end of its input. */
#define MCP_LINGER_MS (5 * 1000)
/* A line longer than this is no MCP message: the stream is ended. */
#define MCP_LINE_MAX (16 * 1024 * 1024)
/* A server that has not listed its tools in this long is degraded. */
#define MCP_LIST_MS (30 * 1000)
/* The id prefix of the broker's own tools/list requests. */
#define MCP_LIST_ID "box-tools-"
/* The operator's view of the server is written at most this often: each
 * write makes and renames a file, which costs a busy server's calls more
 * than their decisions. */
#define MCP_DESCRIBE_MS 250

/* What the broker knows of the server's tools (spec/policy.md: a tool with
 * no generated action is allowed unless its server is degraded or its
 * schema pending). */
typedef enum {
  TOOLS_UNASKED,   /* the agent's client has not initialized the server yet */
  TOOLS_LISTING,   /* the broker's tools/list is out: calls wait */
  TOOLS_INSTALLED, /* every tool's action is in the policy */
  TOOLS_PENDING,   /* listed, but the policy's rules do not fit them */
  TOOLS_DEGRADED,  /* the server failed to list them */
} ToolsState;

typedef struct {
  Boxd *d;
  const BoxMcpServer *m;
  int agent_in, agent_out;
  int srv_in, srv_out, srv_err;
  GString *from_agent, *from_server;
  GHashTable *pending; /* request ids forwarded, unanswered (JSON text) -> Outcome, or NULL */
  int command;         /* the server's command of the mount */
  GHashTable *asked;   /* the server's own requests: id (JSON text) -> method */
  ToolsState tools;
  char *init_id;       /* the agent's initialize request (JSON text) */
  bool has_tools;      /* the server's initialize result offers tools */
  json_object *listed; /* the tools of the pages listed so far */
  int page;
  gint64 list_deadline; /* monotonic µs */
  GHashTable *terms;    /* tool name -> its generated action's term */
  GPtrArray *held;      /* the agent's calls made while the tools are listed */
  unsigned calls;       /* decided requests so far, for the operator's view */
  char *described;      /* the view's text not written yet, or NULL */
  gint64 describe_at;   /* monotonic µs: when the view may be written again */
  char *label;          /* the server's command line, or its endpoint */
} McpRun;

/* What a permitted call's answer records for history rules (spec/policy.md
 * §2.3): the mcp:call request's input, and the tool's action and its
 * input when a generated action decided it too. */
typedef struct {
  json_object *call;
  char *term;
  json_object *args;
} Outcome;

static void outcome_free(gpointer p)
{
  Outcome *o = p;
  if (!o) return;
  json_object_put(o->call);
  g_free(o->term);
  json_object_put(o->args);
  g_free(o);
}

/* The server answered (a JSON-RPC error is an answer too): the effect
 * happened, so each decision's ::response. */
static void outcome_record(Boxd *d, const Outcome *o)
{
  box_policy_record_response(d->policy, "mcp:call", o->call, NULL);
  if (o->term) box_policy_record_response(d->policy, o->term, o->args, NULL);
}

static const BoxMcpServer *find_server(Boxd *d, const char *name)
{
  for (guint i = 0; i < d->config->mcp->len; i++) {
    const BoxMcpServer *m = g_ptr_array_index(d->config->mcp, i);
    if (!m->http && strcmp(m->spec.command[0], name) == 0) return m;
  }
  for (guint i = 0; i < d->config->mcp->len; i++) {
    const BoxMcpServer *m = g_ptr_array_index(d->config->mcp, i);
    if (strcmp(m->name, name) == 0) return m; /* an http server's alias is its name */
  }
  return NULL;
}

bool boxd_mcp_write_all(int fd, const char *p, size_t len)
{
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

static void answer_error(int fd, json_object *id, const char *message)
{
  json_object *resp = json_object_new_object(), *err = json_object_new_object();
  json_object_object_add(resp, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(resp, "id", json_object_get(id));
  json_object_object_add(err, "code", json_object_new_int(MCP_REFUSED));
  json_object_object_add(err, "message", json_object_new_string(message));
  json_object_object_add(resp, "error", err);
  g_autofree char *line =
    g_strdup_printf("%s\n", json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN));
  boxd_mcp_write_all(fd, line, strlen(line));
  json_object_put(resp);
}

/* Methods no decision is asked of (spec/policy.md, mcp:call): an http
 * server's initialize is decided, a stdio server's is not. */
static bool undecided(const McpRun *r, const char *method)
{
  static const char *const free_methods[] = { "server/discover", "ping", "subscriptions/listen",
                                              NULL };
  return g_strv_contains(free_methods, method) || g_str_has_prefix(method, "notifications/") ||
         (!r->m->http && strcmp(method, "initialize") == 0);
}

/* The per-tool gate of a tools/call that mcp:call permitted (COARSE): its
 * generated action decides, a rule-less answer riding the coarse grant;
 * a tool with no generated action is allowed unless the server's tools
 * are unknown.  NULL when permitted, else the refusal. */
static char *tool_gate(McpRun *r, const char *tool, json_object *params, const BoxDecision *coarse,
                       Outcome *outcome)
{
  const char *term = g_hash_table_lookup(r->terms, tool);
  if (!term && r->tools == TOOLS_INSTALLED) return NULL;
  json_object *args = NULL;
  json_object_object_get_ex(params, "arguments", &args);
  json_object *input = args && json_object_is_type(args, json_type_object)
                         ? json_object_get(args)
                         : json_object_new_object();
  g_autofree char *own = NULL;
  BoxDecision *decision;
  if (term) {
    decision = box_policy_decide(r->d->policy, term, input);
    if (decision->cause == BOX_CAUSE_NO_MATCH) {
      BoxDecision *ride =
        box_decision_new(term, decision->resource, BOX_CAUSE_PERMITTED, coarse->rule);
      box_decision_free(decision);
      decision = ride;
    }
  } else {
    g_autofree char *ns = mcp_action_namespace(r->m->name);
    GString *t = g_string_new(NULL);
    g_string_append_printf(t, "%s::Action::", ns);
    g_string_append(t, json_object_to_json_string_ext(json_object_object_get(params, "name"),
                                                      JSON_C_TO_STRING_PLAIN));
    own = g_string_free(t, FALSE);
    g_autofree char *label = g_strdup_printf("%s/%s", r->m->name, tool);
    decision = box_decision_new(
      own, label, r->tools == TOOLS_DEGRADED ? BOX_CAUSE_NO_MATCH : BOX_CAUSE_POLICY_PENDING, NULL);
  }
  box_decision_log_append_args(r->d->log, term ? term : own, input, NULL, decision);
  char *refusal = NULL;
  if (decision->verdict != BOX_VERDICT_PERMIT)
    refusal = g_strdup_printf("per-tool gate (%s): %s", term ? term : own, decision->message);
  else if (term && outcome) {
    outcome->term = g_strdup(term);
    outcome->args = json_object_get(input);
  }
  json_object_put(input);
  box_decision_free(decision);
  return refusal;
}

/* The view's text written, when it is due. */
static void describe_due(McpRun *r)
{
  gint64 now = g_get_monotonic_time();
  if (!r->described || now < r->describe_at) return;
  box_vfs_command_describe(r->d->vfs, r->command, r->described);
  g_clear_pointer(&r->described, g_free);
  r->describe_at = now + MCP_DESCRIBE_MS * G_TIME_SPAN_MILLISECOND;
}

/* The server and its calls, as `box mount` shows the operator under
 * .box/commands/ while it runs: written at once, or (calls coming fast)
 * once MCP_DESCRIBE_MS have passed since the last write. */
static void describe(McpRun *r, const char *method, const char *what, bool permitted)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "mcp %s: %s", r->m->name, r->label);
  if (method) {
    r->calls++;
    g_string_append_printf(s, " (%u call%s; last: %s%s%s, %s)", r->calls, r->calls == 1 ? "" : "s",
                           method, what ? " " : "", what ? what : "",
                           permitted ? "permitted" : "refused");
  }
  g_free(r->described);
  r->described = g_string_free(s, FALSE);
  describe_due(r);
}

/* Milliseconds from now until monotonic µs at, rounded up (0 when past). */
static int ms_until(gint64 at)
{
  gint64 left = at - g_get_monotonic_time();
  return left <= 0 ? 0 : (int)MIN((left + 999) / 1000, G_MAXINT);
}

/* The mcp:call gate of one request, then a call's per-tool gate: NULL
 * when permitted (*outcome, when asked for, what its answer records), else
 * the text the agent's client receives. */
static char *mcp_gate(McpRun *r, const char *method, json_object *params, Outcome **outcome)
{
  json_object *input = json_object_new_object();
  json_object_object_add(input, "server", json_object_new_string(r->m->name));
  json_object_object_add(input, "method", json_object_new_string(method));
  const char *key = strcmp(method, "tools/call") == 0       ? "tool"
                    : strcmp(method, "prompts/get") == 0    ? "prompt"
                    : strcmp(method, "resources/read") == 0 ? "uri"
                                                            : NULL;
  json_object *v = NULL;
  if (key && json_object_object_get_ex(params, strcmp(key, "uri") == 0 ? "uri" : "name", &v) &&
      json_object_is_type(v, json_type_string))
    json_object_object_add(input, key, json_object_get(v));
  BoxDecision *decision = boxd_decide(r->d, "mcp:call", input, NULL);
  char *refusal = NULL;
  if (decision->verdict != BOX_VERDICT_PERMIT)
    refusal = g_strdup_printf("mcp:call gate (server \"%s\" method \"%s\"): %s", r->m->name, method,
                              decision->message);
  /* the methods whose answer is an effect (spec/policy.md §2.3, mcp:call) */
  Outcome *o = key && outcome ? g_new0(Outcome, 1) : NULL;
  if (!refusal && strcmp(key ? key : "", "tool") == 0 && v &&
      json_object_is_type(v, json_type_string))
    refusal = tool_gate(r, json_object_get_string(v), params, decision, o);
  box_decision_free(decision);
  if (o && !refusal) {
    o->call = json_object_get(input);
    *outcome = o;
  } else {
    outcome_free(o);
  }
  describe(r, method, key ? json_object_get_string(json_object_object_get(input, key)) : NULL,
           refusal == NULL);
  json_object_put(input);
  return refusal;
}

static bool send_server(McpRun *r, json_object *msg)
{
  const char *text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
  return r->srv_in >= 0 && boxd_mcp_write_all(r->srv_in, text, strlen(text)) &&
         boxd_mcp_write_all(r->srv_in, "\n", 1);
}

/* The broker's tools/list, of the page after cursor (NULL: the first). */
static bool list_page(McpRun *r, const char *cursor)
{
  json_object *req = json_object_new_object(), *params = json_object_new_object();
  g_autofree char *id = g_strdup_printf(MCP_LIST_ID "%d", ++r->page);
  json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(req, "id", json_object_new_string(id));
  json_object_object_add(req, "method", json_object_new_string("tools/list"));
  if (cursor) json_object_object_add(params, "cursor", json_object_new_string(cursor));
  json_object_object_add(req, "params", params);
  bool ok = send_server(r, req);
  json_object_put(req);
  return ok;
}

/* McpActionFn: a listed tool's action, registered for this server. */
static void register_tool(void *data, const char *term, const char *tool, const char *fields)
{
  McpRun *r = data;
  if (box_policy_register_action(r->m->name, term, tool, fields) >= 0)
    g_hash_table_replace(r->terms, g_strdup(tool), g_strdup(term));
}

static bool agent_line(McpRun *r, const char *line, size_t len);

/* The tools are known (or will not be): the calls held meanwhile go on. */
static void tools_settled(McpRun *r, ToolsState state, const char *why)
{
  r->tools = state;
  if (why) fprintf(stderr, "box: warning: MCP server \"%s\": %s\n", r->m->name, why);
  /* the operator's record of it (spec/runtime.md §8.3) */
  g_autofree char *subject = g_strdup_printf("mcp:%s", r->m->name);
  g_autofree char *detail = g_strdup_printf("%u tools", g_hash_table_size(r->terms));
  box_telemetry_control(r->d->telemetry, "discovery_complete", subject,
                        state == TOOLS_DEGRADED ? why : NULL, detail);
  if (state != TOOLS_DEGRADED)
    box_telemetry_control(r->d->telemetry, "schema_installed", subject,
                          state == TOOLS_PENDING ? why : NULL, NULL);
  GPtrArray *held = g_steal_pointer(&r->held);
  r->held = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < held->len; i++) {
    const char *line = g_ptr_array_index(held, i);
    agent_line(r, line, strlen(line));
  }
  g_ptr_array_free(held, TRUE);
}

static void start_listing(McpRun *r)
{
  if (!r->has_tools) {
    r->tools = TOOLS_INSTALLED; /* it offers none */
    return;
  }
  r->tools = TOOLS_LISTING;
  r->list_deadline = g_get_monotonic_time() + MCP_LIST_MS * (gint64)1000;
  if (!list_page(r, NULL))
    tools_settled(r, TOOLS_DEGRADED, "its tools/list failed; its tools are refused");
}

/* The server's answer to one of the broker's tools/list pages. */
static void listed_page(McpRun *r, json_object *msg)
{
  json_object *result = NULL, *tools = NULL, *next = NULL;
  if (!json_object_object_get_ex(msg, "result", &result) ||
      !json_object_object_get_ex(result, "tools", &tools) ||
      !json_object_is_type(tools, json_type_array)) {
    tools_settled(r, TOOLS_DEGRADED, "its tools/list failed; its tools are refused");
    return;
  }
  for (size_t i = 0; i < json_object_array_length(tools); i++)
    json_object_array_add(r->listed, json_object_get(json_object_array_get_idx(tools, i)));
  if (json_object_object_get_ex(result, "nextCursor", &next) &&
      json_object_is_type(next, json_type_string)) {
    if (!list_page(r, json_object_get_string(next)))
      tools_settled(r, TOOLS_DEGRADED, "its tools/list failed; its tools are refused");
    return;
  }
  json_object *all = json_object_new_object();
  json_object_object_add(all, "tools", json_object_get(r->listed));
  g_autofree char *why = NULL;
  g_autofree char *fragment = mcp_schema_fragment(r->m->name, all, register_tool, r, &why);
  json_object_put(all);
  if (!fragment) {
    g_autofree char *text = g_strdup_printf("its tools are refused: %s", why);
    tools_settled(r, TOOLS_DEGRADED, text);
    return;
  }
  g_autofree char *ns = mcp_action_namespace(r->m->name);
  g_autoptr(GError) error = NULL;
  if (box_policy_install_actions(r->d->policy, ns, &error)) {
    tools_settled(r, TOOLS_INSTALLED, NULL);
  } else {
    g_autofree char *text =
      g_strdup_printf("the policy does not fit its tools, which stay pending: %s", error->message);
    tools_settled(r, TOOLS_PENDING, text);
  }
}

/* One line from the agent: forwarded, or answered with the refusal. */
static bool agent_line(McpRun *r, const char *line, size_t len)
{
  json_object *msg = json_tokener_parse(line), *method = NULL, *id = NULL, *params = NULL;
  if (msg && json_object_object_get_ex(msg, "method", &method) &&
      json_object_is_type(method, json_type_string) && json_object_object_get_ex(msg, "id", &id)) {
    const char *name = json_object_get_string(method);
    json_object_object_get_ex(msg, "params", &params);
    /* a client that never said it initialized the server calls it all the same */
    if (r->tools == TOOLS_UNASKED && strcmp(name, "tools/call") == 0) start_listing(r);
    if (r->tools == TOOLS_LISTING && strcmp(name, "tools/call") == 0) {
      g_ptr_array_add(r->held, g_strndup(line, len));
      json_object_put(msg);
      return true;
    }
    if (strcmp(name, "initialize") == 0) {
      g_free(r->init_id);
      r->init_id = g_strdup(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN));
    }
    Outcome *outcome = NULL;
    g_autofree char *refusal = undecided(r, name) ? NULL : mcp_gate(r, name, params, &outcome);
    if (refusal) {
      answer_error(r->agent_out, id, refusal);
      json_object_put(msg);
      return true;
    }
    g_hash_table_replace(
      r->pending, g_strdup(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN)), outcome);
  } else if (msg && !method && json_object_object_get_ex(msg, "id", &id)) {
    /* The agent's reply to a request of the server's: decided as that
     * method; a refused reply reaches the server as the refusal. */
    const char *key = json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN);
    g_autofree char *asked = NULL;
    g_hash_table_steal_extended(r->asked, key, NULL, (gpointer *)&asked);
    g_autofree char *refusal =
      asked && !undecided(r, asked) ? mcp_gate(r, asked, NULL, NULL) : NULL;
    if (refusal) {
      answer_error(r->srv_in, id, refusal);
      json_object_put(msg);
      return true;
    }
  }
  /* the server is initialized: the broker lists its tools before a call */
  bool initialized = msg && !id && method && r->tools == TOOLS_UNASKED &&
                     g_strcmp0(json_object_get_string(method), "notifications/initialized") == 0;
  json_object_put(msg);
  if (!boxd_mcp_write_all(r->srv_in, line, len) || !boxd_mcp_write_all(r->srv_in, "\n", 1))
    return false;
  if (initialized) start_listing(r);
  return true;
}

/* One line from the server: relayed; an answer settles its request. */
static bool server_line(McpRun *r, const char *line, size_t len)
{
  json_object *msg = json_tokener_parse(line), *id = NULL, *method = NULL;
  bool has_id = msg && json_object_object_get_ex(msg, "id", &id);
  const char *key = has_id ? json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN) : NULL;
  bool answer = has_id && !json_object_object_get_ex(msg, "method", &method);
  if (answer && json_object_is_type(id, json_type_string) &&
      g_str_has_prefix(json_object_get_string(id), MCP_LIST_ID)) {
    if (r->tools == TOOLS_LISTING) listed_page(r, msg); /* the broker's own: not the agent's */
    json_object_put(msg);
    return true;
  }
  json_object *result = NULL, *caps = NULL;
  if (answer && g_strcmp0(key, r->init_id) == 0 &&
      json_object_object_get_ex(msg, "result", &result) &&
      json_object_object_get_ex(result, "capabilities", &caps))
    r->has_tools = json_object_object_get_ex(caps, "tools", NULL);
  Outcome *outcome = NULL;
  g_autofree char *answered = NULL;
  if (answer &&
      g_hash_table_steal_extended(r->pending, key, (gpointer *)&answered, (gpointer *)&outcome)) {
    if (outcome) outcome_record(r->d, outcome);
    outcome_free(outcome);
  } else if (has_id && json_object_is_type(method, json_type_string))
    g_hash_table_replace(r->asked, g_strdup(key), g_strdup(json_object_get_string(method)));
  json_object_put(msg);
  return boxd_mcp_write_all(r->agent_out, line, len) && boxd_mcp_write_all(r->agent_out, "\n", 1);
}

/* Reads what fd holds into buf and hands each whole line to fn; false at
 * end of input or on an error of fn. */
static bool pump(McpRun *r, int fd, GString *buf, bool (*fn)(McpRun *, const char *, size_t))
{
  char chunk[65536];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) {
    if (buf->len) fn(r, buf->str, buf->len); /* a last line without its newline */
    g_string_truncate(buf, 0);
    return false;
  }
  g_string_append_len(buf, chunk, n);
  char *nl;
  while ((nl = memchr(buf->str, '\n', buf->len)) != NULL) {
    size_t len = (size_t)(nl - buf->str);
    *nl = '\0';
    bool ok = len == 0 || fn(r, buf->str, len);
    g_string_erase(buf, 0, (gssize)len + 1);
    if (!ok) return false;
  }
  return buf->len <= MCP_LINE_MAX;
}

static void drain(int fd)
{
  char chunk[65536];
  ssize_t n;
  do n = read(fd, chunk, sizeof chunk);
  while (n < 0 && errno == EINTR);
}

static void relay(McpRun *r)
{
  bool agent_open = true, server_open = true, err_open = true;
  while (server_open) {
    struct pollfd p[4] = { { agent_open ? r->agent_in : -1, POLLIN, 0 },
                           { r->srv_out, POLLIN, 0 },
                           { err_open ? r->srv_err : -1, POLLIN, 0 },
                           { agent_open ? r->d->mcp_stop_fd : -1, POLLIN, 0 } };
    /* Once the agent is gone the server has a moment to finish, then is ended. */
    int wait = agent_open ? MCP_IDLE_MS : MCP_LINGER_MS;
    if (r->tools == TOOLS_LISTING) wait = MIN(wait, ms_until(r->list_deadline));
    if (r->described) wait = MIN(wait, ms_until(r->describe_at));
    int ready = poll(p, 4, wait);
    if (ready < 0 && errno == EINTR) continue;
    bool described = r->described != NULL;
    describe_due(r);
    if (ready == 0 && r->tools == TOOLS_LISTING && g_get_monotonic_time() >= r->list_deadline) {
      tools_settled(r, TOOLS_DEGRADED, "it did not list its tools in time; its tools are refused");
      continue;
    }
    /* a wait cut short for the view or the list is no idle end */
    if (ready == 0 && (described || r->tools == TOOLS_LISTING)) continue;
    if (ready <= 0) break;
    /* the box is stopping (teardown): as if the agent had gone */
    bool stop = p[3].revents != 0;
    if (stop || (p[0].revents && !pump(r, r->agent_in, r->from_agent, agent_line))) {
      agent_open = false;
      close(r->srv_in); /* the server sees the end of its input and leaves */
      r->srv_in = -1;
    }
    if (p[1].revents && !pump(r, r->srv_out, r->from_server, server_line)) server_open = false;
    if (p[2].revents & (POLLHUP | POLLERR | POLLNVAL) && !(p[2].revents & POLLIN))
      err_open = false;
    else if (p[2].revents)
      drain(r->srv_err);
  }
  if (agent_open) {
    /* The server ended first: every request it never answered gets one,
     * and so does every call still held. */
    g_autofree char *why =
      g_strdup_printf("MCP server \"%s\" ended before it answered", r->m->name);
    for (guint i = 0; i < r->held->len; i++) {
      json_object *msg = json_tokener_parse(g_ptr_array_index(r->held, i)), *id = NULL;
      if (json_object_object_get_ex(msg, "id", &id)) answer_error(r->agent_out, id, why);
      json_object_put(msg);
    }
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, r->pending);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
      json_object *id = json_tokener_parse(key);
      answer_error(r->agent_out, id, why);
      json_object_put(id);
    }
  }
}

/* data: the server's command of the mount, in an McpRun. */
static bool attach_server(void *data, pid_t pid, const char *const *paths, const char *reach)
{
  McpRun *r = data;
  boxd_track_pid(r->d, pid);
  return box_vfs_tool_attach(r->d->vfs, r->command, pid, paths, reach, NULL);
}

/* The shell:spawn decision of a server's start (the Shell's input shape,
 * its cwd the server's working directory). */
static BoxDecision *decide_start(Boxd *d, const BoxMcpServer *m, const char *program,
                                 const char *cwd)
{
  char *const *argv = m->spec.command;
  g_autofree char *line = g_strjoinv(" ", (char **)argv);
  json_object *input =
    boxd_spawn_input(d, json_object_new_string(line), (const char *const *)argv, cwd, program);
  BoxDecision *decision = boxd_decide(d, "shell:spawn", input, (const char *const *)argv);
  json_object_put(input);
  return decision;
}

static McpRun *run_new(Boxd *d, const BoxMcpServer *m, int fds[3], int srv_in, int srv_out,
                       int srv_err)
{
  McpRun *r = g_new0(McpRun, 1);
  *r = (McpRun){ .d = d,
                 .m = m,
                 .agent_in = fds[0],
                 .agent_out = fds[1],
                 .srv_in = srv_in,
                 .srv_out = srv_out,
                 .srv_err = srv_err,
                 .from_agent = g_string_new(NULL),
                 .from_server = g_string_new(NULL),
                 .pending = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, outcome_free),
                 .command = box_vfs_command_new(d->vfs),
                 .asked = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                 .tools = TOOLS_UNASKED,
                 .listed = json_object_new_array(),
                 .terms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                 .held = g_ptr_array_new_with_free_func(g_free) };
  return r;
}

static void run_free(McpRun *r)
{
  if (r->srv_in >= 0) close(r->srv_in);
  close(r->srv_out);
  if (r->srv_err >= 0) close(r->srv_err);
  box_vfs_command_end(r->d->vfs, r->command);
  g_string_free(r->from_agent, TRUE);
  g_string_free(r->from_server, TRUE);
  g_hash_table_destroy(r->pending);
  g_hash_table_destroy(r->asked);
  g_free(r->init_id);
  json_object_put(r->listed);
  g_hash_table_destroy(r->terms);
  g_ptr_array_free(r->held, TRUE);
  g_free(r->label);
  g_free(r->described);
  g_free(r);
}

/* An http server: its messages through the bridge (mcp_http.c). */
static int serve_http(Boxd *d, const BoxMcpServer *m, int fds[3], char **refusal)
{
  char *endpoint = boxd_mcp_endpoint(m, refusal);
  if (!endpoint) return -1;
  int to = -1, from = -1;
  GThread *bridge = boxd_mcp_http_start(d, m, endpoint, &to, &from, refusal);
  if (!bridge) {
    g_free(endpoint);
    return -1;
  }
  McpRun *r = run_new(d, m, fds, to, from, -1);
  r->label = endpoint;
  describe(r, NULL, NULL, true);
  signal(SIGPIPE, SIG_IGN);
  relay(r);
  if (r->srv_in >= 0) close(r->srv_in); /* the bridge ends with its input */
  r->srv_in = -1;
  g_thread_join(bridge);
  run_free(r);
  return 0;
}

int boxd_mcp_serve(Boxd *d, const char *name, int fds[3], char **refusal)
{
  *refusal = NULL;
  const BoxMcpServer *m = find_server(d, name);
  if (!m) {
    *refusal = g_strdup_printf("no MCP server declares the program \"%s\" in box.toml", name);
    return -1;
  }
  if (m->http) return serve_http(d, m, fds, refusal);
  BoxToolTable *t = boxd_table_of(&m->spec);
  t->host_network = !m->contain_egress;
  const char *cwd = m->spec.workspace ? m->spec.workspace : d->workspace;
  g_autofree char *program = box_tools_table_program(t, d->operator_path);
  if (!program) {
    *refusal = g_strdup_printf("MCP server \"%s\" may not start: its program \"%s\" is not found",
                               m->name, m->spec.command[0]);
    g_free(t);
    return -1;
  }
  BoxDecision *decision = decide_start(d, m, program, cwd);
  if (decision->verdict != BOX_VERDICT_PERMIT) {
    *refusal = g_strdup_printf("MCP server \"%s\" may not start: %s", m->name, decision->message);
    box_decision_free(decision);
    g_free(t);
    return -1;
  }
  box_decision_free(decision);
  int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    *refusal = g_strdup_printf("MCP server \"%s\" may not start: %s", m->name, g_strerror(errno));
    int *ends[] = { in, out, err };
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 2; k++)
        if (ends[i][k] >= 0) close(ends[i][k]);
    g_free(t);
    return -1;
  }
  McpRun *r = run_new(d, m, fds, in[1], out[0], err[0]);
  r->label = g_strjoinv(" ", (char **)m->spec.command);
  /* §2.1: its fixed arguments may name the agent telemetry receiver */
  g_auto(GStrv) argv =
    box_tools_expand_telemetry_args(m->spec.command, g_strv_length(m->spec.command));
  BoxToolLaunch launch = boxd_tool_launch(d, program, argv, t, cwd);
  int child_fds[1] = { in[0] };
  launch.fds = child_fds;
  launch.nfds = 1;
  g_autoptr(GError) error = NULL;
  pid_t pid = box_tools_launch(&launch, out[1], err[1], attach_server, r, &error);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    *refusal = g_strdup_printf("MCP server \"%s\" may not start: %s", m->name,
                               error ? error->message : "the launch failed");
  } else {
    describe(r, NULL, NULL, true);
    /* A server or an agent gone mid-write must be an EPIPE, never boxd's end. */
    signal(SIGPIPE, SIG_IGN);
    relay(r);
    kill(pid, SIGKILL); /* its PID namespace, and all the server started, go with it */
    box_reaper_wait(pid);
    boxd_untrack_pid(d, pid);
  }
  run_free(r);
  g_free(t);
  return pid < 0 ? -1 : 0;
}

void box_mcp_declare_namespaces(const BoxConfig *config)
{
  for (guint i = 0; config->mcp && i < config->mcp->len; i++) {
    const BoxMcpServer *m = g_ptr_array_index(config->mcp, i);
    g_autofree char *ns = mcp_action_namespace(m->name);
    box_policy_declare_namespace(ns);
  }
}
