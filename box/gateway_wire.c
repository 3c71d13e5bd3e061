/* gateway_wire.c — the egress gateway inside boxd.
 *
 * One gateway per box.  It listens on the host's 127.0.0.1:<port> and, at
 * the same port, inside the network namespace the Shell workers share
 * (and inside each tool sandbox's, through boxd_gateway_net_setup), so a
 * contained process reaches it at the address its proxy variables name and
 * nothing else.  Its decisions go through policy and the decision log here;
 * the address floor's refusals are logged as the effective decision.
 */
#include "box/box-private.h"
#include "gateway/gateway.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define NETNS_WAIT_MS 10000

static bool gw_decide(void *data, const char *action, json_object *input, const char *floor,
                      char **message)
{
  Boxd *d = data;
  BoxDecision *decision = box_policy_decide(d->policy, action, input);
  if (floor && decision->verdict == BOX_VERDICT_PERMIT) {
    g_autofree char *resource = box_policy_resource_label(action, input);
    box_decision_free(decision);
    decision = box_decision_new_enforcement(action, resource, "egress", floor);
  }
  box_decision_log_append(d->log, action, input, NULL, decision);
  bool permit = decision->verdict == BOX_VERDICT_PERMIT;
  if (!permit) *message = g_strdup(decision->message ? decision->message : "refused");
  box_decision_free(decision);
  return permit;
}

/* An exchange's outcome, recorded for history rules
 * (spec/policy.md §2.3): nothing delivered ⇒ ::error; else ::response with
 * body_bytes = what was delivered (the gateway sends the whole body before
 * it reads the reply), intercepted = true (the reference's quirk), and
 * output.status = the upstream status, absent when no reply arrived. */
static void gw_outcome(void *data, const char *action, json_object *input, int status,
                       bool delivered)
{
  Boxd *d = data;
  if (!delivered) {
    box_policy_record_error(d->policy, action, input);
    return;
  }
  json_object *in = json_object_new_object();
  json_object_object_foreach (input, key, val) {
    if (strcmp(key, "intercepted") != 0) json_object_object_add(in, key, json_object_get(val));
  }
  json_object_object_add(in, "intercepted", json_object_new_boolean(true));
  json_object *out = json_object_new_object();
  if (status >= 0) json_object_object_add(out, "status", json_object_new_int(status));
  box_policy_record_response(d->policy, action, in, out);
  json_object_put(in);
  json_object_put(out);
}

/* Brings `lo` up in the calling thread's network namespace. */
static bool loopback_up(GError **error)
{
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED, "socket: %s", g_strerror(errno));
    return false;
  }
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  g_strlcpy(ifr.ifr_name, "lo", sizeof ifr.ifr_name);
  bool ok = ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
  if (ok && !(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    ok = ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  }
  if (!ok)
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED, "cannot bring lo up: %s",
                g_strerror(errno));
  close(s);
  return ok;
}

typedef struct {
  int netns;
  int port;
  int fd;
  GError *error;
  int otel_port; /* the agent telemetry receiver's, relayed too, or 0 */
  int otel_fd;
} RelayJob;

/* On a thread of its own, since it may not come back: enter the
 * namespace, bring lo up, bind there, end. */
static gpointer relay_thread(gpointer data)
{
  RelayJob *job = data;
  if (setns(job->netns, CLONE_NEWNET) != 0)
    g_set_error(&job->error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "cannot enter the network namespace: %s", g_strerror(errno));
  else if (loopback_up(&job->error))
    job->fd = box_gateway_bind(job->port, &job->error);
  if (job->fd >= 0 && job->otel_port > 0)
    job->otel_fd = box_otel_receiver_listen(job->otel_port, NULL);
  return NULL;
}

/* The socket keeps the namespace it was bound in; this thread, in the
 * gateway's, serves it. */
/* The agent's telemetry receiver (§8.5) is relayed the same way, at its
 * own port, for as long. */
static bool relay_into(Boxd *d, int netns, int port, int until, GError **error)
{
  RelayJob job = { netns, port, -1, NULL, box_otel_receiver_port(d->otel), -1 };
  if (job.otel_port < 0) job.otel_port = 0;
  g_thread_join(g_thread_new("box-gw-relay", relay_thread, &job));
  if (job.fd < 0) {
    if (until >= 0) close(until);
    g_propagate_error(error, job.error);
    return false;
  }
  if (job.otel_fd >= 0)
    box_otel_receiver_serve(d->otel, job.otel_fd,
                            until >= 0 ? fcntl(until, F_DUPFD_CLOEXEC, 0) : -1);
  return box_gateway_serve(d->gateway, job.fd, until, error) >= 0;
}

/* ---- credentials (spec/runtime.md §7) ---- */

struct BoxdEgress {
  BoxGatewayRoute *routes;
  size_t n;
  GHashTable *mcp_secrets; /* an http MCP server's name -> its secret */
};

static void wipe_free(char *p)
{
  if (p) {
    OPENSSL_cleanse(p, strlen(p));
    g_free(p);
  }
}

/* <prefix> + 64 random hex characters. */
static char *mint_phantom(const char *prefix, GError **error)
{
  unsigned char raw[32];
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                  "cannot mint a phantom credential: %s", g_strerror(errno));
      return NULL;
    }
    got += (size_t)r;
  }
  GString *out = g_string_new(prefix);
  for (size_t i = 0; i < sizeof raw; i++) g_string_append_printf(out, "%02x", raw[i]);
  OPENSSL_cleanse(raw, sizeof raw);
  return g_string_free(out, FALSE);
}

static bool secret_problem(const BoxEgressRoute *r, const char *value, const char **why)
{
  bool blank = true, control = false;
  for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
    if (*p != ' ' && *p != '\t') blank = false;
    if (*p < 0x20 || *p == 0x7f) control = true;
  }
  if (blank)
    *why = "is blank";
  else if (control)
    *why = "holds a control character, which no request can carry";
  else if (r->placement == BOX_GATEWAY_PLACE_BASIC_AUTH && !strchr(value, ':'))
    *why = "is not `user:password`, which placement = \"basic_auth\" sends";
  else
    return false;
  return true;
}

/* The secret of an env:// route, read once: the copy in this process's
 * environment block (which /proc/<pid>/environ shows) is wiped, and
 * nothing started later inherits it.  NULL with error when it is unset or
 * unfit. */
static char *take_secret(Boxd *d, const char *table, const BoxEgressRoute *r, GError **error)
{
  char *value = getenv(r->env_name);
  const char *why = NULL;
  if (!value)
    why = "is not set in the environment of `box run`";
  else
    secret_problem(r, value, &why);
  if (why) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "invalid `[%s.%s]` table: `secret.ref` env://%s %s (in %s)", table, r->name,
                r->env_name, why, d->config->path);
    return NULL;
  }
  char *secret = g_strdup(value);
  OPENSSL_cleanse(value, strlen(value));
  unsetenv(r->env_name);
  return secret;
}

const char *boxd_mcp_secret(Boxd *d, const char *server)
{
  return d->egress && d->egress->mcp_secrets ? g_hash_table_lookup(d->egress->mcp_secrets, server)
                                             : NULL;
}

/* A static-key profile of the operator's ~/.aws/credentials (no ambient
 * AWS_* variable is read); a ~/.aws/config profile that runs a
 * credential_process is refused. */
static bool aws_profile_keys(Boxd *d, const BoxEgressRoute *r, char **id, char **secret,
                             char **token, GError **error)
{
  const char *home = d->operator_home;
  g_autofree char *cfg_path = g_build_filename(home, ".aws", "config", NULL);
  g_autoptr(GKeyFile) cfg = g_key_file_new();
  if (g_key_file_load_from_file(cfg, cfg_path, G_KEY_FILE_NONE, NULL)) {
    g_autofree char *group = strcmp(r->aws_profile, "default") == 0
                               ? g_strdup("default")
                               : g_strdup_printf("profile %s", r->aws_profile);
    if (g_key_file_has_key(cfg, group, "credential_process", NULL)) {
      g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                  "invalid `[egress.%s]` table: `secret.ref` aws://%s runs a credential_process "
                  "(%s), which this build refuses; give the profile static keys (in %s)",
                  r->name, r->aws_profile, cfg_path, d->config->path);
      return false;
    }
  }
  g_autofree char *path = g_build_filename(home, ".aws", "credentials", NULL);
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(GError) local = NULL;
  const char *why = NULL;
  if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &local))
    why = local->message;
  else if (!g_key_file_has_group(kf, r->aws_profile))
    why = "the file has no such profile";
  if (!why) {
    *id = g_key_file_get_string(kf, r->aws_profile, "aws_access_key_id", NULL);
    *secret = g_key_file_get_string(kf, r->aws_profile, "aws_secret_access_key", NULL);
    *token = g_key_file_get_string(kf, r->aws_profile, "aws_session_token", NULL);
    if (!*id || !**id || !*secret || !**secret)
      why = "the profile lacks aws_access_key_id or aws_secret_access_key";
  }
  if (why) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "invalid `[egress.%s]` table: `secret.ref` aws://%s cannot be read from %s: %s "
                "(in %s)",
                r->name, r->aws_profile, path, why, d->config->path);
    wipe_free(*secret);
    wipe_free(*token);
    g_clear_pointer(id, g_free);
    *secret = *token = NULL;
    return false;
  }
  /* GKeyFile frees its own copies unwiped: the keys stay on the
   * operator's disk anyway; the copies kept here are wiped on drop. */
  return true;
}

bool boxd_egress_prepare(Boxd *d, GError **error)
{
  GPtrArray *routes = d->config->egress;
  d->egress = g_new0(struct BoxdEgress, 1);
  d->egress->routes = g_new0(BoxGatewayRoute, routes->len ? routes->len : 1);
  GPtrArray *env = g_ptr_array_new();
  bool ok = true;
  for (guint i = 0; i < routes->len && ok; i++) {
    const BoxEgressRoute *r = g_ptr_array_index(routes, i);
    if (r->aws) {
      char *id = NULL, *secret = NULL, *token = NULL;
      if (!aws_profile_keys(d, r, &id, &secret, &token, error)) {
        ok = false;
        break;
      }
      BoxGatewayRoute *g = &d->egress->routes[d->egress->n++];
      g->name = r->name;
      g->destinations = (const char *const *)r->destinations;
      g->aws = true;
      g->aws_key_id = id;
      g->secret = secret;
      g->aws_session_token = token;
      char *phantom_id = mint_phantom(r->phantom_prefix, error);
      char *phantom_secret = phantom_id ? mint_phantom(r->phantom_prefix, error) : NULL;
      if (!phantom_secret) {
        g_free(phantom_id);
        ok = false;
        break;
      }
      g->phantom = phantom_id;
      g_ptr_array_add(env, g_strdup_printf("AWS_ACCESS_KEY_ID=%s", phantom_id));
      g_ptr_array_add(env, g_strdup_printf("AWS_SECRET_ACCESS_KEY=%s", phantom_secret));
      g_free(phantom_secret);
      continue;
    }
    char *secret = take_secret(d, "egress", r, error);
    if (!secret) {
      ok = false;
      break;
    }
    BoxGatewayRoute *g = &d->egress->routes[d->egress->n++];
    g->name = r->name;
    g->destinations = (const char *const *)r->destinations;
    g->placement = r->placement;
    g->header = r->header;
    g->prefix = r->prefix;
    g->param = r->param;
    g->inject_always = r->inject_always;
    g->secret = secret;
    char *phantom = mint_phantom(r->phantom_prefix, error);
    if (!phantom) {
      ok = false;
      break;
    }
    g->phantom = phantom;
    g_ptr_array_add(env, g_strdup_printf("%s=%s", r->env_name, phantom));
  }
  /* An http MCP server's secret: the broker itself sends it (no phantom:
   * the agent never holds the server's credential). */
  d->egress->mcp_secrets =
    g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)wipe_free);
  for (guint i = 0; i < d->config->mcp->len && ok; i++) {
    const BoxMcpServer *m = g_ptr_array_index(d->config->mcp, i);
    if (!m->http || !m->route->env_name) continue;
    char *secret = take_secret(d, "mcp", m->route, error);
    if (secret)
      g_hash_table_insert(d->egress->mcp_secrets, m->name, secret);
    else
      ok = false;
  }
  g_ptr_array_add(env, NULL);
  d->phantom_env = (char **)g_ptr_array_free(env, FALSE);
  if (!ok) boxd_egress_clear(d);
  return ok;
}

void boxd_egress_clear(Boxd *d)
{
  if (!d->egress) return;
  for (size_t i = 0; i < d->egress->n; i++) {
    wipe_free((char *)d->egress->routes[i].secret);
    wipe_free((char *)d->egress->routes[i].aws_session_token);
    g_free((char *)d->egress->routes[i].aws_key_id);
    g_free((char *)d->egress->routes[i].phantom);
  }
  g_free(d->egress->routes);
  if (d->egress->mcp_secrets) g_hash_table_destroy(d->egress->mcp_secrets);
  g_clear_pointer(&d->egress, g_free);
}

bool boxd_gateway_net_setup(void *data, pid_t pid)
{
  Boxd *d = data;
  if (!d->gateway) return false;
  g_autofree char *ns_path = g_strdup_printf("/proc/%d/ns/net", (int)pid);
  int netns = open(ns_path, O_RDONLY | O_CLOEXEC);
  if (netns < 0) return false;
  int until = (int)syscall(SYS_pidfd_open, pid, 0);
  g_autoptr(GError) error = NULL;
  bool ok = relay_into(d, netns, d->gateway_port, until, &error);
  close(netns);
  if (!ok)
    g_printerr("box: warning: egress gateway relay for process %d: %s\n", (int)pid, error->message);
  return ok;
}

bool boxd_gateway_start(Boxd *d, GError **error)
{
  g_autoptr(GError) local = NULL;
  d->gateway_ca_path = g_build_filename(d->config->box_dir, "trust", "cert.pem", NULL);
  BoxGatewayConfig cfg = {
    .decide = gw_decide,
    .outcome = gw_outcome, /* for history rules */
    .data = d,
    .ca_cert_path = d->gateway_ca_path,
    .extra_ca_files = (const char *const *)d->config->gateway_extra_ca,
    .allow = (const char *const *)d->config->gateway_allow_local,
    .routes = d->egress ? d->egress->routes : NULL,
    .n_routes = d->egress ? d->egress->n : 0,
  };
  d->gateway = box_gateway_new(&cfg, &local);
  if (!d->gateway) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED, "egress proxy failed: %s",
                local->message);
    return false;
  }
  d->gateway_port = box_gateway_listen(d->gateway, 0, -1, &local);
  if (d->gateway_port < 0) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED, "egress proxy failed: %s",
                local->message);
    boxd_gateway_stop(d);
    return false;
  }
  d->gateway_url = g_strdup_printf("http://127.0.0.1:%d", d->gateway_port);
  if (d->vfs) box_vfs_set_trust(d->vfs, box_gateway_ca_pem(d->gateway));
  /* The workers' namespace is made by the pool thread as it starts. */
  int netns = -1;
  for (int waited = 0; waited < NETNS_WAIT_MS; waited++) {
    netns = __atomic_load_n(&d->worker_netns_fd, __ATOMIC_ACQUIRE);
    if (netns >= 0) break;
    g_usleep(1000);
  }
  if (netns < 0) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "egress proxy failed: the Shell workers' network namespace never appeared");
    boxd_gateway_stop(d);
    return false;
  }
  if (!relay_into(d, netns, d->gateway_port, -1, &local)) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED, "egress proxy failed: %s",
                local->message);
    boxd_gateway_stop(d);
    return false;
  }
  /* The same for every worker (the CA alone is a few KiB of JSON): given
   * with each fork request, it is set while the worker waits in the pool
   * rather than carried, parsed and set on every command's path. */
  json_object *env = boxd_gateway_worker_env(d);
  char *text = g_strdup(json_object_to_json_string_ext(env, JSON_C_TO_STRING_PLAIN));
  json_object_put(env);
  __atomic_store_n(&d->worker_env_json, text, __ATOMIC_RELEASE);
  return true;
}

json_object *boxd_gateway_worker_env(Boxd *d)
{
  if (!d->gateway) return NULL;
  json_object *env = json_object_new_object();
  json_object_object_add(env, "BOX_GATEWAY_PROXY", json_object_new_string(d->gateway_url));
  json_object_object_add(env, "BOX_GATEWAY_CA",
                         json_object_new_string(box_gateway_ca_pem(d->gateway)));
  g_autofree char *allow = g_strjoinv("\n", d->config->gateway_allow_local);
  json_object_object_add(env, "BOX_GATEWAY_ALLOW", json_object_new_string(allow));
  return env;
}

void boxd_gateway_stop(Boxd *d)
{
  /* The workers are stopped by now: no fork request reads it any more. */
  g_free(__atomic_exchange_n(&d->worker_env_json, NULL, __ATOMIC_ACQ_REL));
  box_gateway_free(d->gateway);
  d->gateway = NULL;
  g_clear_pointer(&d->gateway_url, g_free);
  g_clear_pointer(&d->gateway_ca_path, g_free);
}
