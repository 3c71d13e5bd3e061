/* config.c — read box.toml (spec/runtime.md §2) and validate it into plain
 * structs.  Only parse-time checks live here (§2.7): nothing on disk is
 * created, opened or judged apart from the configuration file itself.
 *
 * Messages.  Errors of the TOML/shape class (syntax, unknown key, wrong type,
 * missing key, a key this build does not support) read
 *   cannot parse config file <canonical path>: <reason naming the dotted key>
 * Errors for which the spec gives its own text (name rule, `box_dir`
 * absolute, no `[agent]`, `invalid `[agent]` table: …`) keep that text at the
 * front, byte for byte, and name the file after it: "<spec text> (in <path>)".
 * Removed keys use the spec's removed-key text, which begins with the path. */
#include "box/config-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_MAX_BYTES (4 * 1024 * 1024)

G_DEFINE_QUARK(box - config - error - quark, box_config_error)

/* ---- top level ----------------------------------------------------------- */

static bool validate(ConfigCtx *c, json_object *doc, const char *home, BoxConfig *cfg)
{
  json_object *name = NULL, *box_dir = NULL, *policy = NULL, *agent = NULL, *tool = NULL;
  json_object *gateway = NULL, *egress = NULL, *checkpoints = NULL, *telemetry = NULL, *mcp = NULL;
  const ConfigField fields[] = { { "name", &name },
                                 { "box_dir", &box_dir },
                                 { "policy", &policy },
                                 { "agent", &agent },
                                 { "tool", &tool },
                                 { "gateway", &gateway },
                                 { "egress", &egress },
                                 { "checkpoints", &checkpoints },
                                 { "telemetry", &telemetry },
                                 { "mcp", &mcp },
                                 { NULL, NULL } };
  json_object_object_foreach (doc, k, val) {
    if (config_take_field(fields, k, val)) continue;
    if (strcmp(k, "filesystem") == 0)
      return config_fail_removed(c, "filesystem", "`[agent.filesystem]`");
    else if (strcmp(k, "workspace") == 0)
      return config_fail_removed(c, "workspace", "`[agent] workspace`");
    else if (strcmp(k, "env") == 0)
      return config_fail_removed(c, "env", "`[agent.env]`");
    else if (strcmp(k, "containment") == 0)
      return config_fail_parse(c, "`[containment]` is not supported by this build yet");
    else {
      char *q = config_key_join(NULL, k);
      config_fail_parse(c, "unknown field `%s`", q);
      g_free(q);
      return false;
    }
  }

  const char *s = NULL;
  if (!name) return config_fail_parse(c, "missing field `name`");
  if (!config_get_string(c, name, "name", &s)) return false;
  const char *why = config_component_problem(s);
  if (why) {
    char *q = config_quote(s);
    config_fail_spec(
      c, "box name %s is invalid: %s; use one component of letters, digits, '.', '_', or '-'", q,
      why);
    g_free(q);
    return false;
  }
  cfg->name = g_strdup(s);

  if (!box_dir) return config_fail_parse(c, "missing field `box_dir`");
  if (!config_get_string(c, box_dir, "box_dir", &s)) return false;
  if (s[0] != '/')
    return config_fail_spec(c, "invalid Box configuration: `box_dir` must be absolute: %s", s);
  cfg->box_dir = g_strdup(s);

  if (policy) {
    if (!config_get_string(c, policy, "policy", &s)) return false;
    if (!*s)
      return config_fail_parse(c, "`policy` is empty; name a policy file, or leave `policy` out");
    if (s[0] == '/') {
      cfg->policy = g_strdup(s);
    } else {
      char *dir = g_path_get_dirname(c->path);
      cfg->policy = g_build_filename(dir, s, NULL);
      g_free(dir);
    }
  }

  if (!agent)
    return config_fail_spec(c,
                            "no workload to run: the configuration has no `[agent]` table, and a "
                            "trailing argv appends to `[agent] command` rather than replacing it");
  if (!config_check_agent(c, agent, home, cfg)) return false;

  if (tool && !config_check_tools(c, tool, home, cfg)) return false;
  if (gateway && !config_check_gateway(c, gateway, cfg)) return false;
  if (egress && !config_check_egress(c, egress, cfg)) return false;
  if (checkpoints && !config_check_checkpoints(c, checkpoints, cfg)) return false;
  if (telemetry && !config_check_telemetry(c, telemetry, cfg)) return false;
  if (mcp && !config_check_mcp(c, mcp, home, cfg)) return false;
  return true;
}

static char *read_config(const char *file, char **canonical, GError **error)
{
  *canonical = NULL;
  if (!file || !*file) {
    g_set_error(error, BOX_CONFIG_ERROR, BOX_CONFIG_ERROR_READ,
                "cannot read config file: no path given");
    return NULL;
  }
  char *canon = realpath(file, NULL);
  if (!canon) {
    int e = errno;
    g_set_error(error, BOX_CONFIG_ERROR, BOX_CONFIG_ERROR_READ, "cannot read config file %s: %s",
                file, g_strerror(e));
    return NULL;
  }
  /* O_NONBLOCK: a FIFO must not hang the load; it is refused below. */
  int fd = open(canon, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  const char *why = NULL;
  int e = 0;
  if (fd < 0) {
    e = errno;
  } else if (fstat(fd, &st) != 0) {
    e = errno;
  } else if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  } else if (st.st_size > CONFIG_MAX_BYTES) {
    why = "it is larger than 4 MiB";
  }
  GString *text = NULL;
  if (!e && !why) {
    text = g_string_sized_new((gsize)st.st_size + 1);
    char buf[65536];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        e = errno;
        break;
      }
      if (n == 0) break;
      g_string_append_len(text, buf, n);
      if (text->len > CONFIG_MAX_BYTES) {
        why = "it is larger than 4 MiB";
        break;
      }
    }
    if (!e && !why && memchr(text->str, '\0', text->len)) why = "it contains a NUL byte";
  }
  if (fd >= 0) close(fd);
  if (e || why) {
    g_set_error(error, BOX_CONFIG_ERROR, BOX_CONFIG_ERROR_READ, "cannot read config file %s: %s",
                canon, why ? why : g_strerror(e));
    if (text) g_string_free(text, TRUE);
    free(canon);
    return NULL;
  }
  *canonical = g_strdup(canon);
  free(canon);
  return g_string_free(text, FALSE);
}

BoxConfig *box_config_load(const char *file, const char *operator_home, GError **error)
{
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  char *canon = NULL;
  char *text = read_config(file, &canon, error);
  if (!text) return NULL;
  ConfigCtx c = { canon, error };
  char *why = NULL;
  json_object *doc = box_toml_parse(text, &why);
  g_free(text);
  if (!doc) {
    config_fail_parse(&c, "%s", why ? why : "line 0, column 0: the TOML parser failed");
    g_free(why);
    g_free(canon);
    return NULL;
  }
  const char *home = operator_home && *operator_home ? operator_home : g_get_home_dir();
  BoxConfig *cfg = g_new0(BoxConfig, 1);
  cfg->path = canon;
  cfg->doc = doc;
  cfg->tools = g_ptr_array_new_with_free_func(config_tool_free);
  cfg->gateway_allow_local = g_new0(char *, 1);
  cfg->gateway_extra_ca = g_new0(char *, 1);
  cfg->egress = g_ptr_array_new_with_free_func(config_egress_free);
  config_checkpoints_defaults(&cfg->checkpoints);
  cfg->telemetry = g_ptr_array_new_with_free_func(box_telemetry_target_free);
  cfg->mcp = g_ptr_array_new_with_free_func(config_mcp_free);
  if (!validate(&c, doc, home, cfg)) {
    box_config_free(cfg);
    return NULL;
  }
  return cfg;
}

void box_config_free(BoxConfig *config)
{
  if (!config) return;
  g_free(config->path);
  g_free(config->name);
  g_free(config->box_dir);
  g_free(config->policy);
  config_spec_clear(&config->agent);
  if (config->tools) g_ptr_array_unref(config->tools);
  if (config->doc) json_object_put(config->doc);
  g_strfreev(config->gateway_allow_local);
  g_strfreev(config->gateway_extra_ca);
  if (config->egress) g_ptr_array_unref(config->egress);
  g_strfreev(config->checkpoints.exclude);
  if (config->telemetry) g_ptr_array_unref(config->telemetry);
  if (config->mcp) g_ptr_array_unref(config->mcp);
  g_free(config);
}
