/* schema.h — per-tool actions of MCP servers (spec/policy.md, "Per-tool
 * action"): each server's tools become actions <ns>::Action::"<tool>",
 * typed from the tools' JSON input schemas. */
#ifndef MCP_SCHEMA_H
#define MCP_SCHEMA_H

#include <stdbool.h>
#include <glib.h>
#include <json-c/json.h>

G_BEGIN_DECLS

/* The Cedar namespace of server NAME: every byte outside [A-Za-z0-9_]
 * becomes '_', '_' goes in front of a leading digit (or of nothing), and
 * '_' goes after a reserved word.  "demo-mcp" -> "demo_mcp", "7-demo" ->
 * "_7_demo", "if" -> "if_".  g_free the result. */
char *mcp_action_namespace(const char *server);

/* Told of each generated action: its whole term (ns::Action::"tool"), the
 * tool's name and its input record's fields ("a: Long, b?: String"; ""
 * for none). */
typedef void (*McpActionFn)(void *data, const char *term, const char *tool, const char *fields);

/* The schema fragment of SERVER from its `tools/list` result (the object
 * holding "tools"): one namespace, one action per tool whose context input
 * is the tool's arguments; each action is also told to fn (may be NULL).
 * NULL with *why set (g_free) when the result names no tool list, a tool
 * has no name, or two tools share one. */
char *mcp_schema_fragment(const char *server, json_object *tools_result, McpActionFn fn, void *data,
                          char **why);

G_END_DECLS
#endif
