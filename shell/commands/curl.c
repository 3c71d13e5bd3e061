/* curl.c — `curl`: the Shell's HTTP client, on libcurl, through the box's
 * egress gateway only (spec/runtime.md §4.4, §6).
 *
 * Before any transport it refuses URLs that are not http(s) and hosts that
 * are localhost or a local/private/link-local literal in any spelling
 * (`curl: access denied: <ip>`), unless box.toml's [gateway] allow_local
 * names them.  Every request (each redirect too: -L is followed here, one
 * hop at a time, each checked again) goes to the gateway, which decides it;
 * a refusal the gateway marks becomes an error: the policy's text on
 * stderr, exit 1, nothing on stdout.  The gateway's CA is the only trust
 * root.  The worker learns the gateway from its environment
 * (BOX_GATEWAY_PROXY, BOX_GATEWAY_CA, BOX_GATEWAY_ALLOW).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway/address_floor.h"
#include "shell/commands/curl_dl.h"
#include "shell/shell-private.h"

#define CURL_EXIT_USAGE 2

/* libcurl's entry points (curl_dl.c); the curl_* calls below go through it. */
const BoxCurlApi *box_curl;

typedef struct {
  /* options */
  bool silent, show_error, fail, fail_with_body, follow, include, head, verbose, get_data;
  bool compressed, remote_name;
  const char *output;
  const char *write_out;
  const char *method;
  const char *user, *agent, *referer, *cookie, *cookie_jar;
  long max_time_ms, connect_timeout_ms, retries, max_redirs;
  GPtrArray *headers; /* char* */
  GString *data;      /* -d and friends, NULL when none */
  bool data_json;
  GPtrArray *forms; /* char* (-F) */
  const char *url;
} Opts;

typedef struct {
  BoxCmd *c;
  Opts *o;
  BoxOut *out; /* where the body goes */
  /* the response being received */
  GString *block; /* header lines of the current block */
  int status;
  bool gateway_block; /* the block is the gateway's own (CONNECT answer, refusal) */
  bool refused;
  char *refusal;  /* x-strands-box-egress-message */
  char *gw_error; /* x-strands-box-egress-error */
  char *location;
  bool https;
  int blocks;
  bool discard;      /* body not wanted (redirect hop, -f error, retry) */
  GString *captured; /* body of a refusal */
  curl_off_t delivered;
  bool retry_pending;
} Xfer;

static void usage(BoxCmd *c, const char *text)
{
  box_fdprintf(c->err, "curl: %s\ncurl: try 'curl --help' for more information\n", text);
}

/* ---- data options ---- */

/* A whole descriptor, at most limit bytes (NULL beyond it or on error). */
static GString *slurp(int fd, size_t limit)
{
  GString *s = g_string_new(NULL);
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || s->len + (size_t)n > limit) {
      g_string_free(s, TRUE);
      return NULL;
    }
    if (n == 0) return s;
    g_string_append_len(s, buf, n);
  }
}

static GString *read_source(BoxCmd *c, const char *name, int *status)
{
  int fd = strcmp(name, "-") == 0 ? c->in : box_open_file(name, O_RDONLY);
  if (fd < 0) {
    box_fdprintf(c->err, "curl: Failed to open %s\n", name);
    *status = 26;
    return NULL;
  }
  GString *s = slurp(fd, 64 * 1024 * 1024);
  if (fd != c->in) close(fd);
  if (!s) {
    box_fdprintf(c->err, "curl: Failed to read %s\n", name);
    *status = 26;
  }
  return s;
}

static void add_data(Opts *o, const char *piece, bool json)
{
  if (!o->data)
    o->data = g_string_new(NULL);
  else if (!json && o->data->len)
    g_string_append_c(o->data, '&');
  g_string_append(o->data, piece);
}

/* -d / --data-binary / --data-raw / --data-urlencode / --json */
static bool take_data(BoxCmd *c, Opts *o, const char *kind, const char *arg, int *status)
{
  g_autoptr(GString) value = NULL;
  if (strcmp(kind, "raw") == 0) {
    add_data(o, arg, false);
    return true;
  }
  if (strcmp(kind, "urlencode") == 0) {
    const char *eq = strchr(arg, '=');
    const char *at = strchr(arg, '@');
    g_autofree char *name = NULL;
    g_autofree char *content = NULL;
    if (at && (!eq || at < eq)) {
      name = at > arg ? g_strndup(arg, (gsize)(at - arg)) : NULL;
      g_autoptr(GString) f = read_source(c, at + 1, status);
      if (!f) return false;
      content = g_strndup(f->str, f->len);
    } else if (eq) {
      name = eq > arg ? g_strndup(arg, (gsize)(eq - arg)) : NULL;
      content = g_strdup(eq + 1);
    } else {
      content = g_strdup(arg);
    }
    g_autofree char *enc = g_uri_escape_string(content, NULL, FALSE);
    g_autofree char *piece = name ? g_strdup_printf("%s=%s", name, enc) : g_strdup(enc);
    add_data(o, piece, false);
    return true;
  }
  bool json = strcmp(kind, "json") == 0;
  if (json) o->data_json = true;
  if (arg[0] == '@') {
    value = read_source(c, arg + 1, status);
    if (!value) return false;
    if (strcmp(kind, "ascii") == 0) {
      GString *stripped = g_string_new(NULL);
      for (gsize i = 0; i < value->len; i++)
        if (value->str[i] != '\r' && value->str[i] != '\n')
          g_string_append_c(stripped, value->str[i]);
      g_string_free(value, TRUE);
      value = stripped;
    }
    add_data(o, value->str, json);
    return true;
  }
  add_data(o, arg, json);
  return true;
}

/* ---- callbacks ---- */

static void end_block(Xfer *x)
{
  /* A block that the gateway wrote itself is never the server's answer. */
  if (x->gateway_block && !x->refused) return;
  if (x->refused) return;
  bool redirect = x->o->follow && x->status >= 300 && x->status < 400 && x->location;
  if (x->o->include || x->o->head) box_out_write(x->out, x->block->str, x->block->len);
  bool transient = x->status == 408 || x->status == 429 || x->status == 500 || x->status == 502 ||
                   x->status == 503 || x->status == 504;
  x->discard = redirect || (x->o->fail && !x->o->fail_with_body && x->status >= 400) ||
               (x->retry_pending && transient);
}

static size_t on_header(char *data, size_t size, size_t n, void *user)
{
  Xfer *x = user;
  size_t len = size * n;
  if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
    g_string_truncate(x->block, 0);
    x->blocks++;
    const char *sp = memchr(data, ' ', len);
    x->status = sp ? atoi(sp + 1) : 0;
    x->gateway_block = x->https && x->blocks == 1 && x->status == 200 &&
                       g_strstr_len(data, (gssize)len, "Connection established") != NULL;
    x->refused = false;
    g_clear_pointer(&x->location, g_free);
    g_clear_pointer(&x->refusal, g_free);
    g_clear_pointer(&x->gw_error, g_free);
  }
  g_string_append_len(x->block, data, (gssize)len);
  const char *colon = memchr(data, ':', len);
  if (colon) {
    g_autofree char *name = g_ascii_strdown(data, colon - data);
    g_autofree char *value = g_strstrip(g_strndup(colon + 1, len - (size_t)(colon + 1 - data)));
    if (strcmp(name, "x-strands-box-egress") == 0 && g_ascii_strcasecmp(value, "refused") == 0) {
      x->refused = true;
      x->gateway_block = true;
    } else if (strcmp(name, "x-strands-box-egress-message") == 0) {
      g_free(x->refusal);
      x->refusal = g_strdup(value);
    } else if (strcmp(name, "x-strands-box-egress-error") == 0) {
      g_free(x->gw_error);
      x->gw_error = g_strdup(value);
      x->gateway_block = true;
    } else if (strcmp(name, "location") == 0) {
      g_free(x->location);
      x->location = g_strdup(value);
    }
  }
  if (len <= 2 && (data[0] == '\r' || data[0] == '\n')) end_block(x);
  return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
  Xfer *x = user;
  size_t len = size * n;
  if (x->refused || x->gw_error) {
    g_string_append_len(x->captured, data, (gssize)MIN(len, 4096));
    return len;
  }
  if (x->discard) return len;
  box_out_write(x->out, data, len);
  if (x->out->error) return 0;
  x->delivered += (curl_off_t)len;
  return len;
}

static int on_debug(CURL *h, curl_infotype type, char *data, size_t size, void *user)
{
  (void)h;
  BoxCmd *c = user;
  const char *prefix = type == CURLINFO_TEXT         ? "* "
                       : type == CURLINFO_HEADER_IN  ? "< "
                       : type == CURLINFO_HEADER_OUT ? "> "
                                                     : NULL;
  if (!prefix) return 0;
  g_autofree char *text = g_strndup(data, size);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    g_strchomp(*l);
    if (**l || (l[1] && type != CURLINFO_TEXT)) box_fdprintf(c->err, "%s%s\n", prefix, *l);
  }
  return 0;
}

/* ---- the URL check before anything is sent ---- */

static char **allowance(void)
{
  const char *a = getenv("BOX_GATEWAY_ALLOW");
  return a && *a ? g_strsplit(a, "\n", -1) : g_new0(char *, 1);
}

/* Returns 0 when url may be sent, else the exit status (message printed). */
static int check_url(BoxCmd *c, const char *url, bool *https)
{
  CURLU *u = curl_url();
  CURLUcode rc =
    curl_url_set(u, CURLUPART_URL, url, CURLU_DEFAULT_SCHEME | CURLU_NON_SUPPORT_SCHEME);
  if (rc != CURLUE_OK) {
    box_fdprintf(c->err, "curl: (3) URL using bad/illegal format or missing URL\n");
    curl_url_cleanup(u);
    return 3;
  }
  char *scheme = NULL, *host = NULL, *port = NULL;
  curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
  curl_url_get(u, CURLUPART_HOST, &host, 0);
  curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
  curl_url_cleanup(u);
  int status = 0;
  if (!scheme ||
      (g_ascii_strcasecmp(scheme, "http") != 0 && g_ascii_strcasecmp(scheme, "https") != 0)) {
    box_fdprintf(c->err, "curl: (1) Protocol \"%s\" not supported\n", scheme ? scheme : "");
    status = 1;
  } else if (!host || !*host) {
    box_fdprintf(c->err, "curl: (3) URL using bad/illegal format or missing URL\n");
    status = 3;
  } else {
    *https = g_ascii_strcasecmp(scheme, "https") == 0;
    /* Judge the host as libcurl parsed it and as it was written. */
    g_autofree char *written = NULL;
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    size_t alen = strcspn(auth, "/?#");
    g_autofree char *authority = g_strndup(auth, alen);
    char *at = strrchr(authority, '@');
    const char *hp = at ? at + 1 : authority;
    if (hp[0] == '[') {
      const char *close = strchr(hp, ']');
      written = close ? g_strndup(hp, (gsize)(close - hp + 1)) : g_strdup(hp);
    } else {
      const char *colon = strchr(hp, ':');
      written = colon ? g_strndup(hp, (gsize)(colon - hp)) : g_strdup(hp);
    }
    int portnum = port ? atoi(port) : 0;
    g_auto(GStrv) allow = allowance();
    const char *const candidates[] = { host, written };
    for (int i = 0; i < 2 && !status; i++) {
      g_autofree char *ip = NULL;
      if (!box_gateway_host_is_local(candidates[i], &ip)) continue;
      if (box_gateway_allowed((const char *const *)allow, candidates[i], portnum)) continue;
      box_fdprintf(c->err, "curl: access denied: %s\n", ip ? ip : candidates[i]);
      status = 1;
    }
  }
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  return status;
}

/* ---- one request ---- */

static CURL *make_handle(BoxCmd *c, Opts *o, Xfer *x, struct curl_slist *hdrs, curl_mime *mime,
                         char *errbuf)
{
  CURL *h = curl_easy_init();
  if (!h) return NULL;
  const char *proxy = getenv("BOX_GATEWAY_PROXY");
  const char *ca = getenv("BOX_GATEWAY_CA");
  curl_easy_setopt(h, CURLOPT_PROXY, proxy);
  curl_easy_setopt(h, CURLOPT_PROXYTYPE, (long)CURLPROXY_HTTP);
  curl_easy_setopt(h, CURLOPT_NOPROXY, "");
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  struct curl_blob blob = { (void *)ca, strlen(ca), CURL_BLOB_COPY };
  curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
  curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(h, CURLOPT_USERAGENT, o->agent ? o->agent : "curl/" LIBCURL_VERSION);
  if (o->verbose) {
    curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
    curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, on_debug);
    curl_easy_setopt(h, CURLOPT_DEBUGDATA, c);
  }
  if (hdrs) curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  if (o->referer) curl_easy_setopt(h, CURLOPT_REFERER, o->referer);
  if (o->user) {
    curl_easy_setopt(h, CURLOPT_USERPWD, o->user);
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
  }
  if (o->cookie) {
    if (strchr(o->cookie, '='))
      curl_easy_setopt(h, CURLOPT_COOKIE, o->cookie);
    else
      curl_easy_setopt(h, CURLOPT_COOKIEFILE, o->cookie);
  }
  if (o->cookie_jar) curl_easy_setopt(h, CURLOPT_COOKIEJAR, o->cookie_jar);
  if (o->compressed) curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  if (o->max_time_ms > 0) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, o->max_time_ms);
  if (o->connect_timeout_ms > 0)
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
  if (mime) curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
  return h;
}

static bool parse_seconds(const char *s, long *ms)
{
  char *end = NULL;
  double v = g_ascii_strtod(s, &end);
  if (!*s || *end || v < 0) return false;
  *ms = (long)(v * 1000.0);
  return true;
}

static void write_out(Xfer *x, CURL *h, const char *fmt, const char *url, int exit_code,
                      int redirects)
{
  GString *s = g_string_new(NULL);
  for (const char *p = fmt; *p; p++) {
    if (*p == '\\' && p[1]) {
      p++;
      g_string_append_c(s, *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'r' ? '\r' : *p);
      continue;
    }
    if (*p == '%' && p[1] == '{') {
      const char *end = strchr(p, '}');
      if (end) {
        g_autofree char *var = g_strndup(p + 2, (gsize)(end - p - 2));
        long code = 0;
        double t = 0;
        char *ct = NULL;
        if (strcmp(var, "http_code") == 0 || strcmp(var, "response_code") == 0) {
          curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
          g_string_append_printf(s, "%03ld", code);
        } else if (strcmp(var, "url_effective") == 0) {
          g_string_append(s, url);
        } else if (strcmp(var, "size_download") == 0) {
          g_string_append_printf(s, "%" CURL_FORMAT_CURL_OFF_T, x->delivered);
        } else if (strcmp(var, "content_type") == 0) {
          curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
          g_string_append(s, ct ? ct : "");
        } else if (strcmp(var, "time_total") == 0) {
          curl_easy_getinfo(h, CURLINFO_TOTAL_TIME, &t);
          g_string_append_printf(s, "%.6f", t);
        } else if (strcmp(var, "num_redirects") == 0) {
          g_string_append_printf(s, "%d", redirects);
        } else if (strcmp(var, "exitcode") == 0) {
          g_string_append_printf(s, "%d", exit_code);
        } else if (strcmp(var, "method") == 0) {
          char *m = NULL;
          curl_easy_getinfo(h, CURLINFO_EFFECTIVE_METHOD, &m);
          g_string_append(s, m ? m : "");
        }
        p = end;
        continue;
      }
    }
    g_string_append_c(s, *p);
  }
  box_out_write(x->c->out, s->str, s->len);
  g_string_free(s, TRUE);
}

/* ---- the command ---- */

static const char *const arg_opts_short = "owXHdFuAebcm";

static int run(BoxCmd *c, Opts *o)
{
  const char *proxy = getenv("BOX_GATEWAY_PROXY");
  const char *ca = getenv("BOX_GATEWAY_CA");
  if (!proxy || !*proxy || !ca || !*ca) {
    box_fdprintf(c->err, "curl: (7) the box's egress gateway is not reachable from here\n");
    return 7;
  }
  bool https = false;
  int status = check_url(c, o->url, &https);
  if (status) return status;
  /* The output. */
  BoxOut file_out;
  BoxOut *out = c->out;
  int out_fd = -1;
  g_autofree char *remote = NULL;
  if (o->remote_name && !o->output) {
    CURLU *u = curl_url();
    char *path = NULL;
    curl_url_set(u, CURLUPART_URL, o->url, CURLU_DEFAULT_SCHEME);
    curl_url_get(u, CURLUPART_PATH, &path, 0);
    remote = path ? g_path_get_basename(path) : NULL;
    curl_free(path);
    curl_url_cleanup(u);
    if (!remote || !*remote || strcmp(remote, "/") == 0 || strcmp(remote, ".") == 0) {
      box_fdprintf(c->err, "curl: Remote file name has no length\n");
      return 23;
    }
  }
  const char *out_name = o->output ? o->output : remote;
  if (out_name && strcmp(out_name, "-") != 0) {
    out_fd = box_open_file(out_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
    if (out_fd < 0) {
      g_autofree char *why = box_error_text(c->sh, errno);
      box_fdprintf(c->err, "curl: (23) Failed writing body: %s: %s\n", out_name, why);
      return 23;
    }
    box_out_init(&file_out, out_fd);
    out = &file_out;
  }
  /* Headers and body. */
  struct curl_slist *hdrs = NULL;
  if (o->data_json) {
    hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
  }
  for (guint i = 0; i < o->headers->len; i++)
    hdrs = curl_slist_append(hdrs, g_ptr_array_index(o->headers, i));
  g_autofree char *url = g_strdup(o->url);
  if (o->get_data && o->data) {
    char *joined = g_strdup_printf("%s%c%s", url, strchr(url, '?') ? '&' : '?', o->data->str);
    g_free(url);
    url = joined;
  }
  bool send_data = o->data && !o->get_data;
  const char *method = o->method;
  char errbuf[CURL_ERROR_SIZE];
  int redirects = 0;
  long attempt = 0;
  int rc_exit = 0;
  Xfer x = {
    .c = c, .o = o, .out = out, .block = g_string_new(NULL), .captured = g_string_new(NULL)
  };
  CURL *h = NULL;
  curl_mime *mime = NULL;
  for (;;) {
    errbuf[0] = '\0';
    x.https = g_ascii_strncasecmp(url, "https://", 8) == 0;
    x.blocks = 0;
    x.status = 0;
    x.refused = false;
    x.discard = false;
    x.gateway_block = false;
    g_clear_pointer(&x.refusal, g_free);
    g_clear_pointer(&x.gw_error, g_free);
    g_clear_pointer(&x.location, g_free);
    g_string_truncate(x.captured, 0);
    x.retry_pending = attempt < o->retries;
    if (mime) {
      curl_mime_free(mime);
      mime = NULL;
    }
    if (h) curl_easy_cleanup(h);
    h = NULL;
    if (o->forms->len) {
      /* The mime needs a handle; build it against a scratch one. */
      CURL *scratch = curl_easy_init();
      mime = curl_mime_init(scratch);
      for (guint i = 0; i < o->forms->len; i++) {
        const char *f = g_ptr_array_index(o->forms, i);
        const char *eq = strchr(f, '=');
        curl_mimepart *part = curl_mime_addpart(mime);
        g_autofree char *name = g_strndup(f, (gsize)(eq - f));
        curl_mime_name(part, name);
        g_auto(GStrv) bits = g_strsplit(eq + 1, ";", -1);
        const char *v = bits[0];
        if (v[0] == '@' || v[0] == '<') {
          int st = 0;
          g_autoptr(GString) data = read_source(c, v + 1, &st);
          if (!data) {
            curl_easy_cleanup(scratch);
            rc_exit = st;
            goto done;
          }
          curl_mime_data(part, data->str, data->len);
          if (v[0] == '@') {
            g_autofree char *base = g_path_get_basename(v + 1);
            curl_mime_filename(part, base);
          }
        } else {
          curl_mime_data(part, v, CURL_ZERO_TERMINATED);
        }
        for (char **b = bits + 1; *b; b++) {
          if (g_str_has_prefix(*b, "type="))
            curl_mime_type(part, *b + 5);
          else if (g_str_has_prefix(*b, "filename="))
            curl_mime_filename(part, *b + 9);
        }
      }
      curl_easy_cleanup(scratch);
    }
    h = make_handle(c, o, &x, hdrs, mime, errbuf);
    if (!h) {
      rc_exit = 2;
      goto done;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (o->head) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    if (send_data) {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, o->data->str);
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->data->len);
    }
    if (method) curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    CURLcode res = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (!code) code = x.status;
    /* The gateway refused: its text, exit 1, no body. */
    if (x.refused) {
      g_autofree char *text = x.captured->len ? g_strndup(x.captured->str, x.captured->len)
                                              : g_strdup(x.refusal ? x.refusal : "refused");
      g_strchomp(text);
      box_fdprintf(c->err, "curl: %s\n", text);
      rc_exit = 1;
      goto done;
    }
    if (x.gw_error) {
      rc_exit = strcmp(x.gw_error, "resolve") == 0   ? 6
                : strcmp(x.gw_error, "connect") == 0 ? 7
                : strcmp(x.gw_error, "timeout") == 0 ? 28
                : strcmp(x.gw_error, "tls") == 0     ? 60
                                                     : 52;
      if (!o->silent || o->show_error) {
        g_autofree char *text =
          g_strdup(x.refusal ? x.refusal : "the gateway could not reach the server");
        box_fdprintf(c->err, "curl: (%d) %s\n", rc_exit, text);
      }
    } else if (res != CURLE_OK && !(res == CURLE_WRITE_ERROR && out->error)) {
      rc_exit = (int)res;
      if (!o->silent || o->show_error)
        box_fdprintf(c->err, "curl: (%d) %s\n", rc_exit,
                     errbuf[0] ? errbuf : curl_easy_strerror(res));
    } else if (res == CURLE_WRITE_ERROR) {
      rc_exit = 23;
      if (!o->silent || o->show_error)
        box_fdprintf(c->err, "curl: (23) Failure writing output to destination\n");
    } else {
      rc_exit = 0;
    }
    bool transient = rc_exit == 28 || rc_exit == 7 ||
                     (rc_exit == 0 && (code == 408 || code == 429 || code == 500 || code == 502 ||
                                       code == 503 || code == 504));
    if (transient && attempt < o->retries) {
      attempt++;
      long wait_ms = 1000L << (attempt - 1 > 10 ? 10 : attempt - 1);
      if (!o->silent)
        box_fdprintf(c->err,
                     "Warning: Problem : HTTP error. Will retry in %ld seconds. %ld "
                     "retries left.\n",
                     wait_ms / 1000, o->retries - attempt + 1);
      g_usleep((gulong)wait_ms * 1000);
      continue;
    }
    if (rc_exit) goto done;
    if (o->follow && code >= 300 && code < 400 && x.location) {
      if (++redirects > o->max_redirs) {
        box_fdprintf(c->err, "curl: (47) Maximum (%ld) redirects followed\n", o->max_redirs);
        rc_exit = 47;
        goto done;
      }
      CURLU *u = curl_url();
      curl_url_set(u, CURLUPART_URL, url, 0);
      char *next = NULL;
      if (curl_url_set(u, CURLUPART_URL, x.location, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
          curl_url_get(u, CURLUPART_URL, &next, 0) != CURLUE_OK) {
        curl_url_cleanup(u);
        box_fdprintf(c->err, "curl: (3) URL using bad/illegal format or missing URL\n");
        rc_exit = 3;
        goto done;
      }
      curl_url_cleanup(u);
      bool next_https = false;
      rc_exit = check_url(c, next, &next_https);
      g_free(url);
      url = g_strdup(next);
      curl_free(next);
      if (rc_exit) goto done;
      /* 303 turns anything into GET; 301/302 turn POST into GET. */
      bool was_post = send_data || o->forms->len || (method && strcmp(method, "POST") == 0);
      if (code == 303 || ((code == 301 || code == 302) && was_post)) {
        send_data = false;
        g_ptr_array_set_size(o->forms, 0);
        if (method && strcmp(method, "POST") == 0) method = NULL;
        if (code == 303 && method && strcmp(method, "HEAD") != 0) method = NULL;
      }
      attempt = 0;
      continue;
    }
    if (o->fail && code >= 400) {
      if (!o->silent || o->show_error)
        box_fdprintf(c->err, "curl: (22) The requested URL returned error: %ld\n", code);
      rc_exit = 22;
    }
    break;
  }
done:
  if (o->write_out && h) write_out(&x, h, o->write_out, url, rc_exit, redirects);
  if (h) curl_easy_cleanup(h);
  if (mime) curl_mime_free(mime);
  curl_slist_free_all(hdrs);
  if (out != c->out) {
    box_out_flush(out);
    close(out_fd);
  }
  g_string_free(x.block, TRUE);
  g_string_free(x.captured, TRUE);
  g_free(x.refusal);
  g_free(x.gw_error);
  g_free(x.location);
  return rc_exit;
}

/* Long options that take an argument, with their short twin or a kind. */
typedef struct {
  const char *name;
  char shortc; /* 0: handled by name */
  bool arg;
} LongOpt;

static const LongOpt long_opts[] = {
  { "silent", 's', false },
  { "show-error", 'S', false },
  { "fail", 'f', false },
  { "fail-with-body", 0, false },
  { "location", 'L', false },
  { "output", 'o', true },
  { "remote-name", 'O', false },
  { "include", 'i', false },
  { "head", 'I', false },
  { "verbose", 'v', false },
  { "write-out", 'w', true },
  { "request", 'X', true },
  { "header", 'H', true },
  { "data", 'd', true },
  { "data-ascii", 'd', true },
  { "data-raw", 0, true },
  { "data-binary", 0, true },
  { "data-urlencode", 0, true },
  { "form", 'F', true },
  { "json", 0, true },
  { "user", 'u', true },
  { "user-agent", 'A', true },
  { "referer", 'e', true },
  { "cookie", 'b', true },
  { "cookie-jar", 'c', true },
  { "get", 'G', false },
  { "max-time", 'm', true },
  { "connect-timeout", 0, true },
  { "retry", 0, true },
  { "compressed", 0, false },
  { "url", 0, true },
  { "max-redirs", 0, true },
  { "insecure", 'k', false },
  { NULL, 0, false },
};

/* The options that set a flag or keep their argument, by their letter: the
 * field's offset in Opts. */
static const struct {
  char shortc;
  bool takes_arg;
  size_t field;
} plain_opts[] = {
  { 's', false, offsetof(Opts, silent) },   { 'S', false, offsetof(Opts, show_error) },
  { 'f', false, offsetof(Opts, fail) },     { 'L', false, offsetof(Opts, follow) },
  { 'o', true, offsetof(Opts, output) },    { 'O', false, offsetof(Opts, remote_name) },
  { 'i', false, offsetof(Opts, include) },  { 'I', false, offsetof(Opts, head) },
  { 'v', false, offsetof(Opts, verbose) },  { 'w', true, offsetof(Opts, write_out) },
  { 'X', true, offsetof(Opts, method) },    { 'u', true, offsetof(Opts, user) },
  { 'A', true, offsetof(Opts, agent) },     { 'e', true, offsetof(Opts, referer) },
  { 'b', true, offsetof(Opts, cookie) },    { 'c', true, offsetof(Opts, cookie_jar) },
  { 'G', false, offsetof(Opts, get_data) },
};

static int apply(BoxCmd *c, Opts *o, const char *name, char shortc, const char *arg)
{
  int st = 0;
  for (size_t k = 0; shortc && k < G_N_ELEMENTS(plain_opts); k++) {
    if (plain_opts[k].shortc != shortc) continue;
    char *field = (char *)o + plain_opts[k].field;
    if (plain_opts[k].takes_arg)
      *(const char **)field = arg;
    else
      *(bool *)field = true;
    return 0;
  }
  switch (shortc) {
  case 'H': g_ptr_array_add(o->headers, (gpointer)arg); return 0;
  case 'd': return take_data(c, o, "ascii", arg, &st) ? 0 : st;
  case 'F':
    if (!strchr(arg, '=')) {
      usage(c, "option -F: is badly used here");
      return CURL_EXIT_USAGE;
    }
    g_ptr_array_add(o->forms, (gpointer)arg);
    return 0;
  case 'm':
    if (!parse_seconds(arg, &o->max_time_ms)) {
      usage(c, "option --max-time: expected a proper numerical parameter");
      return CURL_EXIT_USAGE;
    }
    return 0;
  case 'k':
    box_fdprintf(c->err, "curl: -k/--insecure is refused: the box's gateway verifies every "
                         "server itself\n");
    return CURL_EXIT_USAGE;
  default: break;
  }
  if (strcmp(name, "fail-with-body") == 0) {
    o->fail = o->fail_with_body = true;
  } else if (strcmp(name, "data-raw") == 0) {
    return take_data(c, o, "raw", arg, &st) ? 0 : st;
  } else if (strcmp(name, "data-binary") == 0) {
    return take_data(c, o, "binary", arg, &st) ? 0 : st;
  } else if (strcmp(name, "data-urlencode") == 0) {
    return take_data(c, o, "urlencode", arg, &st) ? 0 : st;
  } else if (strcmp(name, "json") == 0) {
    return take_data(c, o, "json", arg, &st) ? 0 : st;
  } else if (strcmp(name, "connect-timeout") == 0) {
    if (!parse_seconds(arg, &o->connect_timeout_ms)) {
      usage(c, "option --connect-timeout: expected a proper numerical parameter");
      return CURL_EXIT_USAGE;
    }
  } else if (strcmp(name, "retry") == 0 || strcmp(name, "max-redirs") == 0) {
    long v = 0;
    if (!box_parse_int(arg, &v) || v < 0) {
      usage(c, "option: expected a proper numerical parameter");
      return CURL_EXIT_USAGE;
    }
    if (strcmp(name, "retry") == 0)
      o->retries = v;
    else
      o->max_redirs = v;
  } else if (strcmp(name, "compressed") == 0) {
    o->compressed = true;
  } else if (strcmp(name, "url") == 0) {
    o->url = arg;
  }
  return 0;
}

static void init_openssl_once(void)
{
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    /* The worker's filesystem is the box's: no openssl.cnf is read. */
    if (box_curl->openssl_init_crypto)
      box_curl->openssl_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    g_once_init_leave(&done, 1);
  }
}

int box_cmd_curl(BoxCmd *c)
{
  const char *load_error = NULL;
  box_curl = box_dl_api(&box_curl_dl, &load_error);
  if (!box_curl) {
    box_fdprintf(c->err, "curl: (2) failed to initialize: %s\n",
                 load_error ? load_error : "libcurl could not be loaded");
    return 2;
  }
  Opts o = { .headers = g_ptr_array_new(), .forms = g_ptr_array_new(), .max_redirs = 50 };
  int status = 0;
  bool opts_done = false;
  for (int i = 1; i < c->argc && !status; i++) {
    const char *a = c->argv[i];
    if (!opts_done && strcmp(a, "--") == 0) {
      opts_done = true;
      continue;
    }
    if (!opts_done && a[0] == '-' && a[1] == '-' && a[2]) {
      const char *name = a + 2;
      const char *eq = strchr(name, '=');
      g_autofree char *key = eq ? g_strndup(name, (gsize)(eq - name)) : g_strdup(name);
      const LongOpt *lo = NULL;
      for (const LongOpt *l = long_opts; l->name; l++)
        if (strcmp(l->name, key) == 0) lo = l;
      if (!lo) {
        g_autofree char *t = g_strdup_printf("invalid option '%s'", a);
        usage(c, t);
        status = 1;
        break;
      }
      const char *arg = NULL;
      if (lo->arg) {
        if (eq)
          arg = eq + 1;
        else if (i + 1 < c->argc)
          arg = c->argv[++i];
        else {
          g_autofree char *t = g_strdup_printf("option --%s: requires parameter", key);
          usage(c, t);
          status = CURL_EXIT_USAGE;
          break;
        }
      }
      status = apply(c, &o, lo->name, lo->shortc, arg);
      continue;
    }
    if (!opts_done && a[0] == '-' && a[1]) {
      for (const char *p = a + 1; *p && !status; p++) {
        if (!strchr("sSfLoOiIvwXHdFuAebcGmk", *p)) {
          g_autofree char *t = g_strdup_printf("invalid option '-%c'", *p);
          usage(c, t);
          status = 1;
          break;
        }
        const char *arg = NULL;
        if (strchr(arg_opts_short, *p)) {
          if (p[1])
            arg = p + 1;
          else if (i + 1 < c->argc)
            arg = c->argv[++i];
          else {
            g_autofree char *t = g_strdup_printf("option -%c: requires parameter", *p);
            usage(c, t);
            status = CURL_EXIT_USAGE;
            break;
          }
        }
        status = apply(c, &o, "", *p, arg);
        if (arg) break;
      }
      continue;
    }
    if (o.url) {
      box_fdprintf(c->err, "curl: only one URL at a time in this build\n");
      status = CURL_EXIT_USAGE;
      break;
    }
    o.url = a;
  }
  if (!status && !o.url) {
    usage(c, "no URL specified");
    status = CURL_EXIT_USAGE;
  }
  if (!status) {
    init_openssl_once();
    status = run(c, &o);
  }
  g_ptr_array_free(o.headers, TRUE);
  g_ptr_array_free(o.forms, TRUE);
  if (o.data) g_string_free(o.data, TRUE);
  return status;
}
