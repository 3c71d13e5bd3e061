/* discover.h — `tools/list` of an MCP server, for `box policy
 * generate-schema` (spec/runtime.md §1: the one place a server runs outside
 * containment). */
#ifndef MCP_DISCOVER_H
#define MCP_DISCOVER_H

#include <stdbool.h>
#include <glib.h>
#include <json-c/json.h>

G_BEGIN_DECLS

/* Runs COMMAND (element 0 a bare name resolved on the PATH that env gives,
 * else on PATH_FALLBACK) in WORKSPACE (NULL: the current directory) with
 * ENV (name -> value) plus HOME and PATH of this process unless env sets
 * them; does initialize, notifications/initialized and tools/list, then
 * ends the server.  Returns the tools/list result, or NULL with *why set
 * to "MCP server \"<name>\" failed during <step>: <detail>". */
json_object *mcp_discover_stdio(const char *name, char *const *command, GHashTable *env,
                                const char *workspace, char **why);

/* As mcp_discover_stdio, of the http server at ENDPOINT: each message
 * POSTed (streamable HTTP), with SECRET_HEADER ("Name: value", or NULL)
 * on each request; an https endpoint is trusted by the system's store or
 * one of EXTRA_CA (PEM files, NULL-terminated; may be NULL). */
json_object *mcp_discover_http(const char *name, const char *endpoint, const char *secret_header,
                               char *const *extra_ca, char **why);

G_END_DECLS
#endif
