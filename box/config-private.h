/* config-private.h — what the files of the config loader share (private to
 * the boxconfig library): the loading context, the messages, the typed
 * getters and each table's checks. */
#ifndef BOX_CONFIG_PRIVATE_H
#define BOX_CONFIG_PRIVATE_H

#include "box/config.h"

typedef struct {
  const char *path; /* canonical path of the file, for messages */
  GError **error;
} ConfigCtx;

/* config_values.c.  Each fail sets the error and returns false: code
 * BOX_CONFIG_ERROR_PARSE reads "cannot parse config file <path>: <reason>",
 * BOX_CONFIG_ERROR_INVALID "<spec text> (in <path>)". */
bool config_fail(ConfigCtx *c, BoxConfigError code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
#define config_fail_parse(c, ...) config_fail((c), BOX_CONFIG_ERROR_PARSE, __VA_ARGS__)
#define config_fail_spec(c, ...) config_fail((c), BOX_CONFIG_ERROR_INVALID, __VA_ARGS__)
/* The spec's removed-key text; it begins with the file's path. */
bool config_fail_removed(ConfigCtx *c, const char *key, const char *replacement);
/* A double-quoted, escaped spelling of S (like Rust's {:?} of a str). */
char *config_quote(const char *s);
/* Dotted key path: PARENT.CHILD, CHILD quoted when it is not a bare key. */
char *config_key_join(const char *parent, const char *child);
/* A table's plain fields: a {NULL} entry ends the list. */
typedef struct {
  const char *name;
  json_object **slot;
} ConfigField;
/* Stores val in the slot of the field named k; false where none is. */
bool config_take_field(const ConfigField *fields, const char *k, json_object *val);
/* A string value without embedded NUL bytes, or NULL. */
const char *config_json_cstring(json_object *v);
/* Fails unless v is a table. */
bool config_need_table(ConfigCtx *c, json_object *v, const char *key);
bool config_get_string(ConfigCtx *c, json_object *v, const char *key, const char **out);
/* A NULL-terminated copy of an array of strings. */
bool config_get_string_array(ConfigCtx *c, json_object *v, const char *key, char ***out);
/* NULL when NAME is one component of [A-Za-z0-9._-], 1..32 bytes, not . or
 * ..; else the reason (static). */
const char *config_component_problem(const char *name);
/* The table [KIND.NAME] (at KEY): NAME one component, the value a table. */
bool config_named_table(ConfigCtx *c, const char *kind, const char *name, json_object *tbl,
                        const char *key);
bool config_env_name_valid(const char *n);
bool config_env_name_reserved(const char *n);

/* config_process.c: [agent] and [tool.<name>] into cfg. */
bool config_check_agent(ConfigCtx *c, json_object *v, const char *home, BoxConfig *cfg);
bool config_check_tools(ConfigCtx *c, json_object *v, const char *home, BoxConfig *cfg);
void config_spec_clear(BoxProcessSpec *s);
/* GDestroyNotify of cfg->tools. */
void config_tool_free(gpointer p);
/* A tool-shaped table under KEY ("mcp.<n>") into out, labelled LABEL;
 * own_key is a key of the table the caller reads itself. */
bool config_check_leaf(ConfigCtx *c, const char *key, const char *own_key, json_object *tbl,
                       const char *home, const char *label, BoxProcessSpec *out);

/* config_egress.c: [gateway] and [egress.<name>] into cfg. */
bool config_check_gateway(ConfigCtx *c, json_object *v, BoxConfig *cfg);
bool config_check_egress(ConfigCtx *c, json_object *v, BoxConfig *cfg);
/* GDestroyNotify of cfg->egress. */
void config_egress_free(gpointer p);
/* The `secret` table v (at KEY) of route r; pre is "invalid `[<table>]` table: ". */
bool config_check_secret(ConfigCtx *c, const char *key, const char *pre, json_object *v,
                         BoxEgressRoute *r);

/* Reads dest (at KEY.destinations, NULL when absent) into r and checks
 * each entry, also against every other route of cfg. */
bool config_check_destinations(ConfigCtx *c, const char *key, const char *pre, json_object *dest,
                               BoxEgressRoute *r, const BoxConfig *cfg);

/* config_mcp.c: [mcp.<name>] into cfg (after [egress.*], whose
 * destinations an http server's must not overlap). */
bool config_check_mcp(ConfigCtx *c, json_object *v, const char *home, BoxConfig *cfg);
void config_mcp_free(gpointer p);

/* config_checkpoints.c: [checkpoints] into cfg->checkpoints. */
void config_checkpoints_defaults(BoxCheckpointsLimits *l);
bool config_check_checkpoints(ConfigCtx *c, json_object *v, BoxConfig *cfg);
/* config_telemetry.c: [telemetry.<label>] into cfg. */
bool config_check_telemetry(ConfigCtx *c, json_object *v, BoxConfig *cfg);

#endif
