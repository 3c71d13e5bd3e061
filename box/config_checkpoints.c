/* config_checkpoints.c — `[checkpoints]` of box.toml: whether boxd keeps a
 * checkpoint per command, and its limits (checkpoints/checkpoints.h). */
#include "box/config-private.h"

#include <string.h>

void config_checkpoints_defaults(BoxCheckpointsLimits *l)
{
  l->enabled = true;
  l->max_file_size = BOX_CHECKPOINTS_MAX_FILE_SIZE_DEFAULT;
  l->keep = BOX_CHECKPOINTS_KEEP_DEFAULT;
  l->exclude = g_strdupv((char **)box_checkpoints_exclude_default);
}

/* A non-negative integer of at most max. */
static bool get_count(ConfigCtx *c, json_object *v, const char *key, gint64 max, gint64 *out)
{
  if (!json_object_is_type(v, json_type_int))
    return config_fail_parse(c, "invalid type for `%s`: expected an integer", key);
  *out = json_object_get_int64(v);
  if (*out < 0 || *out > max)
    return config_fail_parse(c, "`%s` must be between 0 and %" G_GINT64_FORMAT, key, max);
  return true;
}

bool config_check_checkpoints(ConfigCtx *c, json_object *v, BoxConfig *cfg)
{
  if (!config_need_table(c, v, "checkpoints")) return false;
  BoxCheckpointsLimits *l = &cfg->checkpoints;
  json_object_object_foreach (v, k, val) {
    gint64 n = 0;
    if (strcmp(k, "enabled") == 0) {
      if (!json_object_is_type(val, json_type_boolean))
        return config_fail_parse(c, "invalid type for `checkpoints.enabled`: expected a boolean");
      l->enabled = json_object_get_boolean(val);
    } else if (strcmp(k, "max_file_size") == 0) {
      if (!get_count(c, val, "checkpoints.max_file_size", G_GINT64_CONSTANT(1) << 40, &n))
        return false;
      l->max_file_size = (guint64)n;
    } else if (strcmp(k, "keep") == 0) {
      if (!get_count(c, val, "checkpoints.keep", G_MAXINT32, &n)) return false;
      l->keep = (guint)n;
    } else if (strcmp(k, "exclude") == 0) {
      char **list = NULL;
      if (!config_get_string_array(c, val, "checkpoints.exclude", &list)) return false;
      for (char **e = list; *e; e++)
        if (!**e || strcmp(*e, "/") == 0) {
          g_strfreev(list);
          return config_fail_parse(c, "`checkpoints.exclude` has an empty entry");
        }
      g_strfreev(l->exclude);
      l->exclude = list;
    } else {
      g_autofree char *q = config_key_join("checkpoints", k);
      return config_fail_parse(c, "unknown field `%s`", q);
    }
  }
  return true;
}
