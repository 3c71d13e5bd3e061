/* config.h — box.toml (spec/runtime.md §2), validated into plain structs. */
#ifndef BOX_CONFIG_H
#define BOX_CONFIG_H

#include <stdbool.h>
#include <glib.h>
#include <json-c/json.h>

#include "checkpoints/checkpoints.h"
#include "gateway/route.h"
#include "telemetry/telemetry.h"

G_BEGIN_DECLS

/* The config loader's errors (box_config_load): the file could not be
 * read, its TOML did not parse or a key had the wrong shape, or a value
 * broke a rule the spec words itself. */
#define BOX_CONFIG_ERROR (box_config_error_quark())
GQuark box_config_error_quark(void);
typedef enum {
  BOX_CONFIG_ERROR_READ,
  BOX_CONFIG_ERROR_PARSE,
  BOX_CONFIG_ERROR_INVALID,
} BoxConfigError;

typedef struct {
  char **read; /* NULL-terminated, "~" expanded to the operator home */
  char **write;
  char **read_file;
  char **write_file;
  char **exec; /* [agent] only */
  char **deny;
} BoxFsLists;

typedef struct {
  char *label;     /* "agent" or the tool's label */
  char **command;  /* NULL-terminated; [0] as written */
  char *workspace; /* absolute, or NULL (agent: cwd of run; tool: see §2.1) */
  GHashTable *env; /* char* -> char*, may be empty, never NULL */
  BoxFsLists fs;
  /* [agent] shell_timeout: wall clock for one Shell command, in ms; 0 =
   * the Shell's default (30 s).  Always 0 on tools. */
  unsigned shell_timeout_ms;
  /* [agent] ram ("command", the default, or "box"): how long the Shell's
   * RAM paths (/tmp, /etc, ... everything outside the roots) live; ram_size
   * (bytes; "64M", "1G", "512K" or an integer) and ram_inodes limit each
   * RAM area (0 = the defaults).  Always 0/false on tools. */
  bool ram_per_box;
  guint64 ram_max_bytes;
  unsigned ram_max_inodes;
} BoxProcessSpec;

/* An `[egress.<name>]` credential route (spec/runtime.md §2.4).  This
 * build takes `env://NAME` and `aws://PROFILE` (static keys) secrets; the
 * secret itself is read by `box run` (boxd_egress_prepare), never by the
 * loader. */
typedef struct {
  char *name;
  char **destinations; /* NULL-terminated, non-empty, checked, not overlapping */
  char *env_name;      /* env://NAME; for aws:// the phantom's name, AWS_ACCESS_KEY_ID */
  bool aws;            /* aws://PROFILE: requests are re-signed with SigV4 */
  char *aws_profile;
  BoxGatewayPlacement placement; /* the gateway's own type (gateway/route.h) */
  char *header;                  /* header placement: default "Authorization" */
  char *prefix;                  /* header placement: default "Bearer " on Authorization, else "" */
  char *param;                   /* query_param placement */
  bool inject_always;            /* inject = "always" */
  char *phantom_prefix;          /* default "strands_box_" */
} BoxEgressRoute;

/* An `[mcp.<name>]` server (spec/runtime.md §2.5).  stdio: spec holds
 * command (element 0 a bare program name, the alias's name in bin/),
 * workspace, env and the six lists, labelled with the server name.  http:
 * route holds the destinations and, when given, the secret (env_name NULL
 * without one); its name is the server's. */
typedef struct {
  char *name;
  bool http;
  BoxProcessSpec spec;   /* stdio */
  bool contain_egress;   /* stdio: network.contain_egress, default true */
  BoxEgressRoute *route; /* http */
} BoxMcpServer;

typedef struct {
  char *path; /* canonical path of box.toml */
  char *name;
  char *box_dir;
  char *policy; /* absolute path or NULL (no policy: deny everything) */
  BoxProcessSpec agent;
  GPtrArray *tools; /* BoxProcessSpec*, sorted by label */
  json_object *doc; /* the whole document as json-c (owned) */
  /* [gateway] (boxfs): named exceptions to the egress address floor
   * (HOST, HOST:PORT, [V6]:PORT) and PEM files the gateway trusts upstream
   * beside the system store (absolute, relative to box.toml otherwise).
   * Both NULL-terminated, never NULL. */
  char **gateway_allow_local;
  char **gateway_extra_ca;
  GPtrArray *egress;                /* BoxEgressRoute*, sorted by name; never NULL */
  BoxCheckpointsLimits checkpoints; /* [checkpoints]; exclude never NULL */
  /* `[telemetry.<label>]` (BoxTelemetryTarget*, sorted by label; never
   * NULL): empty = the default file. */
  GPtrArray *telemetry;
  GPtrArray *mcp; /* BoxMcpServer*, sorted by name; never NULL */
} BoxConfig;

/* Reads and validates FILE.  operator_home expands "~".  On failure the
 * GError message is what "box: error: " prefixes, naming the file, the
 * key and the reason, e.g. "cannot parse config file /x/box.toml: unknown
 * key `agent.cmd`". */
BoxConfig *box_config_load(const char *file, const char *operator_home, GError **error);
void box_config_free(BoxConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(BoxConfig, box_config_free)

/* TOML text -> json-c (the one C++ adapter).  On a syntax error returns
 * NULL and sets *error_message (g_malloc'd) to "line L, column C: reason". */
json_object *box_toml_parse(const char *text, char **error_message);

G_END_DECLS
#endif
