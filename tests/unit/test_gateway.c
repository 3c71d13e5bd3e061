/* tests/unit/test_gateway.c — SSRF floor: host spellings, verdicts and the
 * canonical `ip` text (spec/runtime.md §6.3, spec/policy.md §4.1); and the
 * proxy's idle limit on an intercepted connection. */
#include "gateway/gateway.h"

#include <arpa/inet.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/test_util.h"

typedef struct {
  const char *host;
  gboolean local;
  const char *canonical; /* NULL: not an IP literal */
} case_t;

static const case_t cases[] = {
  /* names */
  { "localhost", TRUE, NULL },
  { "LOCALHOST", TRUE, NULL },
  { "localhost.", TRUE, NULL },
  { "api.LocalHost", TRUE, NULL },
  { "a.b.localhost.", TRUE, NULL },
  { "notlocalhost", FALSE, NULL },
  { "localhost.example.com", FALSE, NULL },
  { "example.com", FALSE, NULL },
  { "metadata.google.internal", FALSE, NULL },
  /* IPv4, every WHATWG spelling */
  { "127.0.0.1", TRUE, "127.0.0.1" },
  { "127.0.0.1.", TRUE, "127.0.0.1" },
  { "2130706433", TRUE, "127.0.0.1" },
  { "0x7f000001", TRUE, "127.0.0.1" },
  { "0X7F000001", TRUE, "127.0.0.1" },
  { "0177.0.0.1", TRUE, "127.0.0.1" },
  { "017700000001", TRUE, "127.0.0.1" },
  { "127.1", TRUE, "127.0.0.1" },
  { "127.0.1", TRUE, "127.0.0.1" },
  { "0x7f.1", TRUE, "127.0.0.1" },
  { "0x7f.0.0x0.01", TRUE, "127.0.0.1" },
  { "127.255.255.254", TRUE, "127.255.255.254" },
  { "%31%32%37.0.0.1", TRUE, "127.0.0.1" },
  { "\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97\xe3\x80\x82\xef\xbc\x90\xef\xbc\x8e"
    "0.1",
    TRUE, "127.0.0.1" },
  { "0", TRUE, "0.0.0.0" },
  { "0.0.0.0", TRUE, "0.0.0.0" },
  { "10.1.2.3", TRUE, "10.1.2.3" },
  { "172.16.0.1", TRUE, "172.16.0.1" },
  { "172.31.255.255", TRUE, "172.31.255.255" },
  { "172.32.0.1", FALSE, "172.32.0.1" },
  { "192.168.1.1", TRUE, "192.168.1.1" },
  { "0xc0a80101", TRUE, "192.168.1.1" },
  { "100.64.0.1", TRUE, "100.64.0.1" },
  { "100.127.255.255", TRUE, "100.127.255.255" },
  { "100.128.0.1", FALSE, "100.128.0.1" },
  { "169.254.169.254", TRUE, "169.254.169.254" },
  { "0xa9.0xfe.0xa9.0xfe", TRUE, "169.254.169.254" },
  { "2852039166", TRUE, "169.254.169.254" },
  { "224.0.0.1", TRUE, "224.0.0.1" },
  { "239.255.255.250", TRUE, "239.255.255.250" },
  { "240.0.0.1", TRUE, "240.0.0.1" },
  { "255.255.255.255", TRUE, "255.255.255.255" },
  { "0xffffffff", TRUE, "255.255.255.255" },
  /* public IPv4 passes */
  { "8.8.8.8", FALSE, "8.8.8.8" },
  { "134744072", FALSE, "8.8.8.8" },
  { "0x01010101", FALSE, "1.1.1.1" },
  { "0x1.0x1.0x1.0x1", FALSE, "1.1.1.1" },
  { "1.1.1.1", FALSE, "1.1.1.1" },
  { "11.0.0.1", FALSE, "11.0.0.1" },
  { "223.255.255.255", FALSE, "223.255.255.255" },
  /* malformed: not literals */
  { "", FALSE, NULL },
  { "256.1.1.1", FALSE, NULL },
  { "1.2.3.4.5", FALSE, NULL },
  { "127.0.0.256", FALSE, NULL },
  { "127.16777216", FALSE, NULL },
  { "4294967296", FALSE, NULL },
  { "08.0.0.1", FALSE, NULL },
  { "0x7g.0.0.1", FALSE, NULL },
  { "1..2.3", FALSE, NULL },
  { ".", FALSE, NULL },
  { "127.0.0.1:80", FALSE, NULL },
  { " 127.0.0.1", FALSE, NULL },
  { "[::1", FALSE, NULL },
  { "::1]", FALSE, NULL },
  { "[127.0.0.1]", FALSE, NULL },
  { "[[::1]]", FALSE, NULL },
  { "[]", FALSE, NULL },
  { ":::1", FALSE, NULL },
  { "1::2::3", FALSE, NULL },
  { "1:2:3:4:5:6:7:8:9", FALSE, NULL },
  { "1:2:3:4:5:6:7:8::", FALSE, NULL },
  { "12345::1", FALSE, NULL },
  { "::ffff:127.0.0.01", FALSE, NULL },
  { "::ffff:127.1", FALSE, NULL },
  { "fe80::1%", FALSE, NULL },
  /* IPv6 */
  { "::1", TRUE, "::1" },
  { "[::1]", TRUE, "::1" },
  { "[0:0:0:0:0:0:0:1]", TRUE, "::1" },
  { "::", TRUE, "::" },
  { "[::]", TRUE, "::" },
  { "[::ffff:127.0.0.1]", TRUE, "127.0.0.1" },
  { "::FFFF:7F00:1", TRUE, "127.0.0.1" },
  { "[::ffff:a9fe:a9fe]", TRUE, "169.254.169.254" },
  { "::ffff:8.8.8.8", FALSE, "8.8.8.8" },
  { "[::127.0.0.1]", TRUE, "127.0.0.1" },
  { "::10.0.0.1", TRUE, "10.0.0.1" },
  { "::8.8.8.8", FALSE, "8.8.8.8" },
  { "[2002:7f00:0001::]", TRUE, "127.0.0.1" },
  { "2002:A9FE:A9FE::1", TRUE, "169.254.169.254" },
  { "2002:0808:0808::", FALSE, "8.8.8.8" },
  { "[2001:0:4136:e378:8000:63bf:80ff:fffe]", TRUE, "127.0.0.1" },
  { "2001:0000:4136:e378:8000:63bf:f7f7:f7f7", FALSE, "8.8.8.8" },
  { "[64:ff9b::7f00:1]", TRUE, "64:ff9b::7f00:1" },
  { "64:ff9b::169.254.169.254", TRUE, "64:ff9b::a9fe:a9fe" },
  { "64:ff9b::808:808", FALSE, "64:ff9b::808:808" },
  { "::ffff:0:127.0.0.1", TRUE, "::ffff:0:7f00:1" },
  { "::ffff:0:808:808", FALSE, "::ffff:0:808:808" },
  { "[fe80::1]", TRUE, "fe80::1" },
  { "[fe80::1%25eth0]", TRUE, "fe80::1" },
  { "FEBF::1", TRUE, "febf::1" },
  { "fec0::1", TRUE, "fec0::1" },
  { "fc00::1", TRUE, "fc00::1" },
  { "[fd00:ec2::254]", TRUE, "fd00:ec2::254" },
  { "FD00:00EC::0254", TRUE, "fd00:ec::254" },
  { "ff02::1", TRUE, "ff02::1" },
  { "[FF05:0:0:0:0:0:0:2]", TRUE, "ff05::2" },
  /* public IPv6 passes; RFC 5952 text */
  { "2606:4700::1111", FALSE, "2606:4700::1111" },
  { "[2606:4700:0000:0000:0000:0000:0000:1111]", FALSE, "2606:4700::1111" },
  { "2001:DB8:0:0:1:0:0:1", FALSE, "2001:db8::1:0:0:1" },
  { "2001:db8:0:1:1:1:1:1", FALSE, "2001:db8:0:1:1:1:1:1" },
  { "2001:4860:4860::8888", FALSE, "2001:4860:4860::8888" },
  { "fbff::1", FALSE, "fbff::1" },
  { "fe00::1", FALSE, "fe00::1" },
};

static void test_table(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const case_t *c = &cases[i];
    char *canon = (char *)0x1;
    gboolean local = box_gateway_host_is_local(c->host, &canon);
    if (local != c->local)
      g_error("host '%s': expected %s, got %s", c->host, c->local ? "local" : "not local",
              local ? "local" : "not local");
    if (g_strcmp0(canon, c->canonical) != 0)
      g_error("host '%s': canonical expected '%s', got '%s'", c->host,
              c->canonical ? c->canonical : "(null)", canon ? canon : "(null)");
    char *lit = box_gateway_canonical_ip(c->host);
    if (g_strcmp0(lit, c->canonical) != 0)
      g_error("host '%s': box_gateway_canonical_ip expected '%s', got '%s'", c->host,
              c->canonical ? c->canonical : "(null)", lit ? lit : "(null)");
    g_free(canon);
    g_free(lit);
  }
  g_test_message("%zu spellings checked", G_N_ELEMENTS(cases));
  g_assert_cmpuint(G_N_ELEMENTS(cases), >=, 40);
}

static void test_null_out_param(void)
{
  g_assert_true(box_gateway_host_is_local("0177.1", NULL));
  g_assert_false(box_gateway_host_is_local("8.8.8.8", NULL));
  g_assert_false(box_gateway_host_is_local(NULL, NULL));
  char *c = (char *)0x1;
  g_assert_false(box_gateway_host_is_local(NULL, &c));
  g_assert_null(c);
  g_assert_null(box_gateway_canonical_ip(NULL));
  g_assert_null(box_gateway_canonical_ip("localhost"));
}

static void test_whole_ranges(void)
{
  /* Every /8 edge: local exactly for 0, 10, 127 and ≥ 224 plus the
     * partial ranges checked in the table. */
  for (unsigned top = 0; top < 256; top++) {
    char host[32];
    g_snprintf(host, sizeof host, "%u.1.2.3", top);
    gboolean expect = top == 0 || top == 10 || top == 127 || top >= 224;
    char *canon = NULL;
    g_assert_cmpint(box_gateway_host_is_local(host, &canon), ==, expect);
    g_assert_cmpstr(canon, ==, host);
    g_free(canon);
  }
}

static void test_allowance(void)
{
  const char *allow[] = { "127.0.0.2", "localhost:8080", "[::1]:443", "10.1.2.3:99", NULL };
  const char *const *a = allow;
  g_assert_true(box_gateway_allowed(a, "127.0.0.2", 1));
  g_assert_true(box_gateway_allowed(a, "127.0.2", 80)); /* same address, other spelling */
  g_assert_true(box_gateway_allowed(a, "0x7f000002", 80));
  g_assert_false(box_gateway_allowed(a, "127.0.0.1", 80));
  g_assert_true(box_gateway_allowed(a, "LOCALHOST.", 8080));
  g_assert_false(box_gateway_allowed(a, "localhost", 8081));
  g_assert_true(box_gateway_allowed(a, "[0:0::1]", 443));
  g_assert_true(box_gateway_allowed(a, "::1", 443));
  g_assert_false(box_gateway_allowed(a, "::1", 80));
  g_assert_true(box_gateway_allowed(a, "10.1.2.3", 99));
  g_assert_false(box_gateway_allowed(a, "10.1.2.3", 98));
  g_assert_false(box_gateway_allowed(NULL, "127.0.0.2", 1));
  g_assert_null(box_gateway_allow_entry_problem("127.0.0.1"));
  g_assert_null(box_gateway_allow_entry_problem("[fd00::1]:8443"));
  g_assert_null(box_gateway_allow_entry_problem("fd00::1"));
  g_assert_nonnull(box_gateway_allow_entry_problem(""));
  g_assert_nonnull(box_gateway_allow_entry_problem("host:0"));
  g_assert_nonnull(box_gateway_allow_entry_problem("host:70000"));
  g_assert_nonnull(box_gateway_allow_entry_problem("a/b"));
  g_assert_nonnull(box_gateway_allow_entry_problem("[::1"));
}

static void test_floor(void)
{
  const char *allow[] = { "127.0.0.2", NULL };
  const char *const *a = allow;
  /* Before DNS: literals and localhost. */
  char *f = box_gateway_floor(a, "2130706433", NULL, 80);
  g_assert_nonnull(f);
  g_assert_nonnull(strstr(f, "127.0.0.1"));
  g_free(f);
  g_assert_null(box_gateway_floor(a, "example.com", NULL, 80));
  g_assert_null(box_gateway_floor(a, "127.0.0.2", NULL, 80));
  f = box_gateway_floor(a, "localhost", NULL, 80);
  g_assert_nonnull(f);
  g_free(f);
  /* After DNS: the resolved address, whatever the name. */
  f = box_gateway_floor(a, "example.com", "169.254.169.254", 80);
  g_assert_nonnull(f);
  g_assert_nonnull(strstr(f, "169.254.169.254"));
  g_free(f);
  f = box_gateway_floor(a, "rebind.example", "::ffff:127.0.0.1", 80);
  g_assert_nonnull(strstr(f, "refuses 127.0.0.1"));
  g_free(f);
  g_assert_null(box_gateway_floor(a, "example.com", "93.184.216.34", 443));
  g_assert_null(box_gateway_floor(a, "example.com", "2606:2800:220:1::1", 443));
  g_assert_null(box_gateway_floor(a, "x.test", "127.0.0.2", 443));
}

static void test_canonical_path(void)
{
  static const char *const cases[][2] = {
    { "/", "/" },
    { "", "/" },
    { "/a/b?x=1", "/a/b" },
    { "/a/./b/../c", "/a/c" },
    { "/a/b/..", "/a/" },
    { "/../..", "/" },
    { "/%7Euser/%61", "/~user/a" },
    { "/a%2Fb", "/a%2Fb" },
    { "/a%2fb", "/a%2Fb" },
    { "/x#frag", "/x" },
    { "/a//b", "/a//b" },
    { "/%2e%2e/x", "/x" },
    { "/p%20q", "/p%20q" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *p = box_gateway_canonical_path(cases[i][0]);
    g_assert_cmpstr(p, ==, cases[i][1]);
    g_free(p);
  }
}

/* What the gateway forwards for a target, and the path policy sees. */
static void test_request_target(void)
{
  static const char *const ok[][3] = {
    { "/public/x.txt", "/public/x.txt", "/public/x.txt" },
    { "/public/../private/s", "/private/s", "/private/s" },
    { "/public/%2e%2e/private/s", "/private/s", "/private/s" },
    { "/public/.%2E/private/s?a=%2F", "/private/s?a=%2F", "/private/s" },
    { "/%70ublic/./x", "/public/x", "/public/x" },
    { "/a%c3%a9/", "/a%C3%A9/", "/a%C3%A9/" },
    { "/a|b", "/a%7Cb", "/a%7Cb" },
    { "/100%25", "/100%25", "/100%25" },
    { "/../../x", "/x", "/x" },
    { "/q?", "/q?", "/q" },
    { "/caf\xc3\xa9?q=\xc3\xa9", "/caf%C3%A9?q=\xc3\xa9", "/caf%C3%A9" },
    { "/v1/x%3Adelete", "/v1/x:delete", "/v1/x:delete" },
    { "/a%21%24%26%27%28%29%2A%2B%2C%3D%40b", "/a!$&'()*+,=@b", "/a!$&'()*+,=@b" },
    { "/a%3Bb?q=%3B", "/a%3Bb?q=%3B", "/a%3Bb" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(ok); i++) {
    char *path = NULL;
    const char *why = NULL;
    char *fwd = box_gateway_request_target(ok[i][0], &path, &why);
    g_assert_cmpstr(fwd, ==, ok[i][1]);
    g_assert_cmpstr(path, ==, ok[i][2]);
    g_assert_null(why);
    g_free(fwd);
    g_free(path);
  }
  static const char *const refused[][2] = {
    { "/public/..%2Fprivate/s", "encoded `/`" },
    { "/public/..%2fprivate/s", "encoded `/`" },
    { "/public/..%5Cprivate/s", "encoded `/` or `\\`" },
    { "/public/..\\private/s", "backslash" },
    { "/public/x%00.txt", "control byte" },
    { "/public/%252e%252e/private", "double-encoded" },
    { "/public/%25%32%65%25%32%65/private", "double-encoded" },
    { "/public/%c0%ae%c0%ae/private", "not UTF-8" },
    { "/public/%e0%80%ae/private", "not UTF-8" },
    { "/public/%ff", "not UTF-8" },
    { "/public/%zz", "invalid percent-escape" },
    { "/public/%2", "invalid percent-escape" },
    { "/public/..;/private/s", "`;` path parameter" },
    { "/public/..//private/s", "empty path segment" },
    { "//private/s", "empty path segment" },
    { "/public/x#frag", "fragment" },
    { "/public/\xc0\xae", "not UTF-8" },
    { "/public/a\tb", "control byte" },
    { "/public/x?a b", "query" },
    { "/public/x?a\x7f", "query" },
    { "*", "not a path" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(refused); i++) {
    char *path = (char *)"unset";
    const char *why = NULL;
    char *fwd = box_gateway_request_target(refused[i][0], &path, &why);
    g_assert_null(fwd);
    g_assert_null(path);
    g_assert_nonnull(why);
    if (!strstr(why, refused[i][1]))
      g_error("%s: %s does not name %s", refused[i][0], why, refused[i][1]);
  }
}

/* ---- the proxy: an intercepted connection that stays silent ---- */

static bool permit_all(void *data, const char *action, json_object *input, const char *floor,
                       char **message)
{
  (void)data, (void)action, (void)input;
  if (floor) {
    *message = g_strdup(floor);
    return false;
  }
  return true;
}

/* The upstream: accepts one connection, says nothing, ends when the
 * gateway closes it. */
static gpointer silent_upstream(gpointer data)
{
  int fd = accept(GPOINTER_TO_INT(data), NULL, NULL);
  char b;
  if (fd >= 0) {
    while (recv(fd, &b, 1, 0) > 0) {}
    close(fd);
  }
  return NULL;
}

static int listen_loopback(int *port)
{
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = { .sin_family = AF_INET };
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof sa), ==, 0);
  g_assert_cmpint(listen(fd, 4), ==, 0);
  g_assert_cmpint(getsockname(fd, (struct sockaddr *)&sa, &len), ==, 0);
  *port = ntohs(sa.sin_port);
  return fd;
}

/* The relay reads TLS without SSL_MODE_AUTO_RETRY and goes on after a
 * record without data; a socket timeout must still end the connection at
 * the idle limit rather than be taken for such a record. */
static void test_idle_tunnel_is_closed(void)
{
  int up_port = 0;
  int up = listen_loopback(&up_port);
  GThread *upstream = g_thread_new("upstream", silent_upstream, GINT_TO_POINTER(up));
  g_autofree char *dir = g_dir_make_tmp("boxfs-gwtest-XXXXXX", NULL);
  g_autofree char *ca_path = g_build_filename(dir, "cert.pem", NULL);
  const char *const allow[] = { "127.0.0.1", NULL };
  BoxGatewayConfig cfg = {
    .decide = permit_all, .ca_cert_path = ca_path, .allow = allow, .idle_timeout_ms = 300
  };
  GError *err = NULL;
  BoxGateway *gw = box_gateway_new(&cfg, &err);
  g_assert_no_error(err);
  int port = box_gateway_listen(gw, 0, -1, &err);
  g_assert_no_error(err);

  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  g_assert_cmpint(connect(fd, (struct sockaddr *)&sa, sizeof sa), ==, 0);
  struct timeval tv = { 5, 0 };
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char req[128];
  int n = snprintf(req, sizeof req, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n",
                   up_port, up_port);
  g_assert_cmpint(send(fd, req, (size_t)n, 0), ==, n);
  char head[256] = "";
  size_t got = 0;
  while (!strstr(head, "\r\n\r\n") && got + 1 < sizeof head) {
    ssize_t r = recv(fd, head + got, 1, 0);
    g_assert_cmpint(r, ==, 1);
    got++;
  }
  g_assert_true(g_str_has_prefix(head, "HTTP/1.1 200 "));

  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  BIO *pem = BIO_new_mem_buf(box_gateway_ca_pem(gw), -1);
  X509 *ca = PEM_read_bio_X509(pem, NULL, NULL, NULL);
  g_assert_nonnull(ca);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  SSL *ssl = SSL_new(ctx);
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1");
  SSL_set_fd(ssl, fd);
  g_assert_cmpint(SSL_connect(ssl), ==, 1);
  /* Silence: the gateway ends the connection after its idle limit, long
     * before this side's own 5 s. */
  gint64 t0 = g_get_monotonic_time();
  char b[16];
  int r = SSL_read(ssl, b, sizeof b);
  gint64 took = g_get_monotonic_time() - t0;
  g_assert_cmpint(r, <=, 0);
  g_assert_cmpint(took, >=, 200 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint(took, <, 3 * G_TIME_SPAN_SECOND);

  SSL_free(ssl);
  SSL_CTX_free(ctx);
  X509_free(ca);
  BIO_free(pem);
  close(fd);
  box_gateway_free(gw);
  g_thread_join(upstream);
  close(up);
  g_unlink(ca_path);
  g_rmdir(dir);
}

/* ---- credential route destinations (spec/runtime.md §2.4) ---- */

static void test_destination_spelling(void)
{
  const char *good[] = { "api.example.com",       "api.example.com:8443",
                         "*.example.com",         "API.Example.COM.",
                         "api.example.com/v1/",   "api.example.com/*.json",
                         "127.0.0.2:4443",        "[::1]:443",
                         "*.example.com:8443/v2", NULL };
  for (int i = 0; good[i]; i++) g_assert_null(box_gateway_destination_problem(good[i]));
  const char *bad[] = { "",           "*",         "*.",
                        "*:443",      "a.*.com",   "api.example.com:0",
                        "host:99999", "host:x",    "https://api.example.com",
                        "u@host",     "host name", "host/a*b",
                        "host/*",     "::1",       ":443",
                        NULL };
  for (int i = 0; bad[i]; i++) {
    if (!box_gateway_destination_problem(bad[i])) g_error("accepted %s", bad[i]);
  }
  g_assert_cmpstr(box_gateway_destination_problem("api.example.com:0"), ==, "port 0 names no port");
}

static void test_destination_matching(void)
{
  /* bare host: 443 and 80 only, any path, case-insensitive host */
  g_assert_true(box_gateway_destination_matches("API.example.com", "api.example.com", 443, "/x"));
  g_assert_true(box_gateway_destination_matches("api.example.com", "api.example.com", 80, "/"));
  g_assert_false(box_gateway_destination_matches("api.example.com", "api.example.com", 8443, "/"));
  g_assert_false(box_gateway_destination_matches("api.example.com", "xapi.example.com", 443, "/"));
  /* explicit port */
  g_assert_true(box_gateway_destination_matches("h:8443", "h", 8443, "/"));
  g_assert_false(box_gateway_destination_matches("h:8443", "h", 443, "/"));
  /* wildcard: strictly below, not the apex */
  g_assert_true(box_gateway_destination_matches("*.example.com", "a.example.com", 443, "/"));
  g_assert_true(box_gateway_destination_matches("*.example.com", "a.b.example.com", 443, "/"));
  g_assert_false(box_gateway_destination_matches("*.example.com", "example.com", 443, "/"));
  g_assert_false(box_gateway_destination_matches("*.example.com", "badexample.com", 443, "/"));
  /* path prefix: whole segments, case-sensitive */
  g_assert_true(box_gateway_destination_matches("h/v1", "h", 443, "/v1"));
  g_assert_true(box_gateway_destination_matches("h/v1/", "h", 443, "/v1/users"));
  g_assert_false(box_gateway_destination_matches("h/v1", "h", 443, "/v10"));
  g_assert_false(box_gateway_destination_matches("h/v1", "h", 443, "/V1"));
  g_assert_false(box_gateway_destination_matches("h/v1", "h", 443, "/"));
  /* the prefix is canonical too */
  g_assert_true(box_gateway_destination_matches("h/a/./b/../c", "h", 443, "/a/c/d"));
  /* path suffix */
  g_assert_true(box_gateway_destination_matches("h/*.json", "h", 443, "/x/y.json"));
  g_assert_false(box_gateway_destination_matches("h/*.json", "h", 443, "/x/y.jsonp"));
}

static void test_destination_overlap(void)
{
  g_assert_true(box_gateway_destinations_overlap("api.example.com", "API.example.com:443"));
  g_assert_false(box_gateway_destinations_overlap("api.example.com", "api.example.com:8443"));
  g_assert_true(box_gateway_destinations_overlap("*.example.com", "a.example.com/v1"));
  g_assert_false(box_gateway_destinations_overlap("*.example.com", "example.com"));
  g_assert_true(box_gateway_destinations_overlap("*.example.com", "*.b.example.com"));
  g_assert_false(box_gateway_destinations_overlap("*.a.com", "*.b.com"));
  g_assert_true(box_gateway_destinations_overlap("h/v1", "h/v1/users"));
  g_assert_false(box_gateway_destinations_overlap("h/v1", "h/v2"));
  g_assert_false(box_gateway_destinations_overlap("h/v1", "h/v10"));
  g_assert_true(box_gateway_destinations_overlap("h", "h/v1"));
  g_assert_true(box_gateway_destinations_overlap("h/*.json", "h/v1"));
  g_assert_true(box_gateway_destinations_overlap("h/*.json", "h/*s.json"));
  g_assert_false(box_gateway_destinations_overlap("h/*.json", "h/*.xml"));
}

static void expect_scope(const char *host, const char *service, const char *region)
{
  char *s = NULL, *r = NULL;
  bool ok = box_gateway_aws_scope(host, &s, &r);
  if (!service) {
    g_assert_false(ok);
    return;
  }
  g_assert_true(ok);
  g_assert_cmpstr(s, ==, service);
  g_assert_cmpstr(r, ==, region);
  g_free(s);
  g_free(r);
}

static void test_aws_scope(void)
{
  expect_scope("sts.us-east-1.amazonaws.com", "sts", "us-east-1");
  expect_scope("sts.amazonaws.com", "sts", "us-east-1");
  expect_scope("iam.amazonaws.com", "iam", "us-east-1");
  expect_scope("my-bucket.s3.eu-west-1.amazonaws.com", "s3", "eu-west-1");
  expect_scope("my-bucket.s3.amazonaws.com", "s3", "us-east-1");
  expect_scope("s3.dualstack.us-west-2.amazonaws.com", "s3", "us-west-2");
  expect_scope("s3-external-1.amazonaws.com", "s3", "us-east-1");
  expect_scope("bedrock-runtime.us-west-2.api.aws", "bedrock-runtime", "us-west-2");
  expect_scope("us-east-1.amazonaws.com", NULL, NULL);
  expect_scope("amazonaws.com", NULL, NULL);
  expect_scope("sts.us-east-1.amazonaws.com.evil.example", NULL, NULL);
  expect_scope("api.example.com", NULL, NULL);
}

int main(int argc, char **argv)
{
  static const TestCase cases[] = { { "/gateway/allowance", test_allowance },
                                    { "/gateway/floor", test_floor },
                                    { "/gateway/canonical-path", test_canonical_path },
                                    { "/gateway/request-target", test_request_target },
                                    { "/gateway/ssrf/table", test_table },
                                    { "/gateway/ssrf/null-out-param", test_null_out_param },
                                    { "/gateway/ssrf/ipv4-first-octet", test_whole_ranges },
                                    { "/gateway/proxy/idle-tunnel-closed",
                                      test_idle_tunnel_is_closed },
                                    { "/gateway/route/spelling", test_destination_spelling },
                                    { "/gateway/route/matching", test_destination_matching },
                                    { "/gateway/route/overlap", test_destination_overlap },
                                    { "/gateway/route/aws-scope", test_aws_scope } };
  return test_run_table(&argc, &argv, cases, G_N_ELEMENTS(cases));
}
