/* env.c — the environment of a contained process (spec/runtime.md §5.6)
 * and the box-wide context every launch shares. */
#include "tools/tools-private.h"

#include <string.h>
#include <sys/stat.h>

static BoxToolContext ctx;
static char **ctx_authority, **ctx_hidden;
static char **ctx_phantoms; /* "NAME=phantom" of every egress route */
static char *ctx_otel;      /* the agent telemetry receiver's base URL */

void box_tools_set_telemetry_endpoint(const char *url)
{
  g_free(ctx_otel);
  ctx_otel = g_strdup(url);
  tools_plans_forget();
}

/* §5.6: what the box tells every process about its telemetry receiver. */
static const char *otel_value(const char *name, char **owned)
{
  if (!ctx_otel) return NULL;
  if (strcmp(name, "OTEL_EXPORTER_OTLP_ENDPOINT") == 0) return ctx_otel;
  if (strcmp(name, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == 0)
    return *owned = g_strconcat(ctx_otel, "/v1/traces", NULL);
  if (strcmp(name, "OTEL_EXPORTER_OTLP_PROTOCOL") == 0) return "http/protobuf";
  return NULL;
}

static const char *const otel_names[] = { "OTEL_EXPORTER_OTLP_ENDPOINT",
                                          "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                                          "OTEL_EXPORTER_OTLP_PROTOCOL", NULL };

char *box_tools_expand_telemetry(const char *arg)
{
  GString *out = g_string_new(NULL);
  const char *p = arg;
  for (const char *s; (s = strstr(p, "${"));) {
    const char *end = strchr(s + 2, '}');
    if (!end) break;
    g_autofree char *name = g_strndup(s + 2, (gsize)(end - s - 2));
    g_autofree char *owned = NULL;
    const char *value = otel_value(name, &owned);
    g_string_append_len(out, p, s - p);
    g_string_append(out, value ? value : "");
    p = end + 1;
  }
  g_string_append(out, p);
  return g_string_free(out, FALSE);
}

char **box_tools_expand_telemetry_args(char *const *argv, guint fixed)
{
  guint n = g_strv_length((char **)argv);
  char **out = g_new0(char *, n + 1);
  for (guint i = 0; i < n; i++)
    out[i] = i > 0 && i < fixed ? box_tools_expand_telemetry(argv[i]) : g_strdup(argv[i]);
  return out;
}

void box_tools_set_phantoms(const char *const *env)
{
  g_strfreev(ctx_phantoms);
  ctx_phantoms = env ? g_strdupv((char **)env) : NULL;
  tools_plans_forget();
}

static char **strv_copy(const char *const *v)
{
  return v ? g_strdupv((char **)v) : g_new0(char *, 1);
}

void box_tools_set_context(const BoxToolContext *c)
{
  g_free((char *)ctx.box_dir);
  g_free((char *)ctx.alias_dir);
  g_free((char *)ctx.broker_socket);
  g_strfreev(ctx_authority);
  g_strfreev(ctx_hidden);
  const char *proxy_url = ctx.proxy_url, *ca_cert = ctx.ca_cert;
  bool (*net_setup)(void *, pid_t) = ctx.net_setup;
  void *net_setup_data = ctx.net_setup_data;
  ctx = *c;
  /* Fields left unset keep the gateway's values (box_tools_set_gateway). */
  if (!c->proxy_url && !c->ca_cert && !c->net_setup) {
    ctx.proxy_url = proxy_url;
    ctx.ca_cert = ca_cert;
    ctx.net_setup = net_setup;
    ctx.net_setup_data = net_setup_data;
  }
  ctx.box_dir = g_strdup(c->box_dir);
  ctx.alias_dir = g_strdup(c->alias_dir);
  ctx.broker_socket = g_strdup(c->broker_socket);
  if (c->proxy_url || c->ca_cert || c->net_setup) {
    g_free((char *)proxy_url);
    g_free((char *)ca_cert);
    ctx.proxy_url = g_strdup(c->proxy_url);
    ctx.ca_cert = g_strdup(c->ca_cert);
  }
  ctx_authority = strv_copy(c->authority);
  ctx_hidden = strv_copy(c->hidden);
  ctx.authority = (const char *const *)ctx_authority;
  ctx.hidden = (const char *const *)ctx_hidden;
  tools_plans_forget();
}

void box_tools_set_gateway(const char *proxy_url, const char *ca_cert,
                           bool (*net_setup)(void *data, pid_t pid), void *net_setup_data)
{
  g_free((char *)ctx.proxy_url);
  g_free((char *)ctx.ca_cert);
  ctx.proxy_url = g_strdup(proxy_url);
  ctx.ca_cert = g_strdup(ca_cert);
  ctx.net_setup = net_setup;
  ctx.net_setup_data = net_setup_data;
  tools_plans_forget();
}

const BoxToolContext *tools_context(void)
{
  return &ctx;
}

bool box_tools_env_name_reserved(const char *n)
{
  static const char *const exact[] = {
    /* set by the box */
    "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy",
    "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "NODE_USE_ENV_PROXY", "CODEX_CA_CERTIFICATE",
    "AWS_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "GIT_SSL_CAINFO", "PWD", "USER",
    /* loader hooks */
    "NODE_OPTIONS", "BASH_ENV", "ENV", "RUBYOPT", "PERL5LIB", "PERL5OPT", "GEM_PATH", "CLASSPATH",
    "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", NULL
  };
  static const char *const prefixes[] = { "OTEL_EXPORTER_OTLP_", "LD_", "DYLD_", "PYTHON", NULL };
  for (size_t i = 0; exact[i]; i++)
    if (strcmp(n, exact[i]) == 0) return true;
  for (size_t i = 0; prefixes[i]; i++)
    if (g_str_has_prefix(n, prefixes[i])) return true;
  return false;
}

/* envp plus the Shell's variables that the box does not own. */
char **tools_env_merge(char **envp, char *const *extra)
{
  if (!extra || !extra[0]) return envp;
  GPtrArray *out = g_ptr_array_new();
  for (char **e = envp; *e; e++) g_ptr_array_add(out, *e);
  for (int i = 0; extra[i]; i++) {
    const char *eq = strchr(extra[i], '=');
    if (!eq || eq == extra[i]) continue;
    g_autofree char *name = g_strndup(extra[i], (gsize)(eq - extra[i]));
    if (strcmp(name, "HOME") == 0 || strcmp(name, "PATH") == 0 || box_tools_env_name_reserved(name))
      continue;
    size_t n = strlen(name);
    bool replaced = false;
    for (guint k = 0; k < out->len && !replaced; k++) {
      char *cur = g_ptr_array_index(out, k);
      if (strncmp(cur, name, n) == 0 && cur[n] == '=') {
        g_free(cur);
        out->pdata[k] = g_strdup(extra[i]);
        replaced = true;
      }
    }
    if (!replaced) g_ptr_array_add(out, g_strdup(extra[i]));
  }
  g_ptr_array_add(out, NULL);
  g_free(envp); /* the strings moved to out */
  return (char **)g_ptr_array_free(out, FALSE);
}

/* Every spelling of the alias directory: as written, or any path that
 * names the same directory (a link, a bind mount).  By identity, one stat
 * each: resolving every entry of a long PATH twice cost a launch ~80 us. */
static bool is_alias_dir(const char *entry, const struct stat *alias)
{
  if (!ctx.alias_dir || !*entry) return false;
  if (strcmp(entry, ctx.alias_dir) == 0) return true;
  struct stat st;
  return alias && stat(entry, &st) == 0 && st.st_dev == alias->st_dev && st.st_ino == alias->st_ino;
}

char **box_tools_compose_env(const BoxToolTable *t, bool is_agent, const char *operator_home,
                             const char *operator_path, const char *cwd)
{
  GHashTable *env = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  /* (1) every egress route's phantom, (2) HOME, (3) the table's own env
   * (which may override a phantom: the operator's choice), (4) what the
   * box owns. */
  for (char **e = ctx_phantoms; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    if (eq) g_hash_table_insert(env, g_strndup(*e, (gsize)(eq - *e)), g_strdup(eq + 1));
  }
  g_hash_table_insert(env, g_strdup("HOME"), g_strdup(operator_home ? operator_home : "/"));
  if (t->env) {
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, t->env);
    while (g_hash_table_iter_next(&it, &k, &v)) g_hash_table_insert(env, g_strdup(k), g_strdup(v));
  }
  const char *declared = t->env ? g_hash_table_lookup(t->env, "PATH") : NULL;
  if (!declared || !*declared)
    declared = operator_path && *operator_path ? operator_path : "/usr/bin:/bin";
  GString *path = g_string_new(NULL);
  if (is_agent && ctx.alias_dir) g_string_append(path, ctx.alias_dir);
  g_auto(GStrv) parts = g_strsplit(declared, ":", -1);
  struct stat alias_st;
  bool alias_known = ctx.alias_dir && stat(ctx.alias_dir, &alias_st) == 0;
  for (char **p = parts; *p; p++) {
    if (is_alias_dir(*p, alias_known ? &alias_st : NULL)) continue;
    if (path->len) g_string_append_c(path, ':');
    g_string_append(path, *p);
  }
  g_hash_table_insert(env, g_strdup("PATH"), g_string_free(path, FALSE));
  g_hash_table_insert(env, g_strdup("PWD"), g_strdup(cwd));
  g_hash_table_insert(env, g_strdup("USER"), g_strdup("strands-box"));
  /* The gateway's variables (the box context carries proxy_url and ca_cert when it runs one). */
  if (ctx.proxy_url) {
    const char *names[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", NULL };
    for (int i = 0; names[i]; i++)
      g_hash_table_insert(env, g_strdup(names[i]), g_strdup(ctx.proxy_url));
    g_hash_table_insert(env, g_strdup("NO_PROXY"), g_strdup("127.0.0.1,localhost"));
    g_hash_table_insert(env, g_strdup("no_proxy"), g_strdup("127.0.0.1,localhost"));
    g_hash_table_insert(env, g_strdup("NODE_USE_ENV_PROXY"), g_strdup("1"));
  }
  for (int i = 0; ctx_otel && otel_names[i]; i++) {
    char *owned = NULL;
    const char *value = otel_value(otel_names[i], &owned);
    g_hash_table_insert(env, g_strdup(otel_names[i]), owned ? owned : g_strdup(value));
  }
  if (ctx.ca_cert) {
    const char *names[] = { "SSL_CERT_FILE",
                            "NODE_EXTRA_CA_CERTS",
                            "CODEX_CA_CERTIFICATE",
                            "AWS_CA_BUNDLE",
                            "REQUESTS_CA_BUNDLE",
                            "GIT_SSL_CAINFO",
                            NULL };
    for (int i = 0; names[i]; i++)
      g_hash_table_insert(env, g_strdup(names[i]), g_strdup(ctx.ca_cert));
  }
  GPtrArray *out = g_ptr_array_new();
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, env);
  while (g_hash_table_iter_next(&it, &k, &v)) g_ptr_array_add(out, g_strconcat(k, "=", v, NULL));
  g_ptr_array_add(out, NULL);
  g_hash_table_destroy(env);
  return (char **)g_ptr_array_free(out, FALSE);
}
