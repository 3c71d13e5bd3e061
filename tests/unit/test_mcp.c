/* test_mcp.c — per-tool action names and schema fragments (mcp/schema.h),
 * and the client's side of a streamable HTTP exchange (mcp/http.h). */
#include "mcp/http.h"
#include "mcp/schema.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/test_util.h"

static void expect_ns(const char *server, const char *want)
{
  g_autofree char *got = mcp_action_namespace(server);
  g_assert_cmpstr(got, ==, want);
}

static void test_namespace(void)
{
  expect_ns("demo", "demo");
  expect_ns("demo-mcp", "demo_mcp");
  expect_ns("7-demo", "_7_demo");
  expect_ns("9", "_9");
  expect_ns("", "_");
  expect_ns("a.b", "a_b");
  expect_ns("Demo_1", "Demo_1");
  expect_ns("_x", "_x");
  expect_ns("-", "_");
  static const char *const words[] = { "true", "false", "if",   "then", "else",
                                       "in",   "is",    "like", "has",  "__cedar" };
  for (size_t i = 0; i < G_N_ELEMENTS(words); i++) {
    g_autofree char *want = g_strdup_printf("%s_", words[i]);
    expect_ns(words[i], want);
  }
  /* a reserved word only as the whole name */
  expect_ns("iffy", "iffy");
  expect_ns("in-out", "in_out");
}

static char *fragment(const char *server, const char *json, char **why)
{
  json_object *doc = json_tokener_parse(json);
  g_assert_nonnull(doc);
  char *out = mcp_schema_fragment(server, doc, NULL, NULL, why);
  json_object_put(doc);
  return out;
}

static void test_fragment_typing(void)
{
  char *why = NULL;
  g_autofree char *got = fragment(
    "demo-mcp",
    "{\"tools\":[{\"name\":\"add\",\"inputSchema\":{\"type\":\"object\","
    "\"properties\":{\"b\":{\"type\":\"number\"},\"a\":{\"type\":\"integer\"},"
    "\"mode\":{\"type\":\"string\",\"enum\":[\"x\",\"y\"]},\"level\":{\"enum\":[1,2]},"
    "\"maybe\":{\"type\":[\"string\",\"null\"]},\"flag\":{\"type\":\"boolean\"},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"two\":{\"type\":[\"string\",\"integer\"]},\"any\":{},"
    "\"list-of\":{\"type\":\"array\"},"
    "\"opts\":{\"type\":\"object\",\"properties\":{\"deep\":{\"type\":\"boolean\"}},"
    "\"required\":[\"deep\"]},\"if\":{\"type\":\"string\"}},"
    "\"required\":[\"a\",\"b\"]}},"
    "{\"name\":\"say \\\"hi\\\"\"},{\"name\":\"ping\",\"inputSchema\":{\"type\":\"object\"}}]}",
    &why);
  g_assert_null(why);
  g_assert_cmpstr(
    got, ==,
    "namespace demo_mcp {\n"
    "  action \"add\" appliesTo { principal: Box::Agent, resource: Box::Resource,\n"
    "    context: { input: { a: Long, b: Long, flag?: Bool, \"if\"?: String, level?: Long, "
    "maybe?: String, mode?: String, opts?: { deep: Bool }, tags?: Set<String> } } };\n"
    "  action \"say \\\"hi\\\"\" appliesTo { principal: Box::Agent, resource: Box::Resource,\n"
    "    context: { input: {} } };\n"
    "  action \"ping\" appliesTo { principal: Box::Agent, resource: Box::Resource,\n"
    "    context: { input: {} } };\n"
    "}\n");
}

static void test_fragment_refusals(void)
{
  char *why = NULL;
  g_assert_null(fragment("s", "{\"nextCursor\":\"x\"}", &why));
  g_assert_cmpstr(why, ==, "the tools/list result holds no `tools` array");
  g_free(why);
  g_assert_null(fragment("s", "{\"tools\":[{\"name\":\"a\"},{\"name\":\"a\"}]}", &why));
  g_assert_cmpstr(why, ==, "the tools/list result names the tool \"a\" twice");
  g_free(why);
  g_assert_null(fragment("s", "{\"tools\":[{\"name\":\"a\"},{\"title\":\"b\"}]}", &why));
  g_assert_cmpstr(why, ==, "tool 1 of the tools/list result has no name");
  g_free(why);
  g_autofree char *empty = fragment("if", "{\"tools\":[]}", &why);
  g_assert_null(why);
  g_assert_cmpstr(empty, ==, "namespace if_ {\n}\n");
}

static void expect_endpoint(const char *url, bool tls, const char *authority, const char *host,
                            const char *port, const char *path)
{
  McpEndpoint e;
  g_assert_true(mcp_endpoint_parse(url, &e));
  g_assert_cmpint(e.tls, ==, tls);
  g_assert_cmpstr(e.authority, ==, authority);
  g_assert_cmpstr(e.host, ==, host);
  g_assert_cmpstr(e.port, ==, port);
  g_assert_cmpstr(e.path, ==, path);
  mcp_endpoint_clear(&e);
}

static void test_http_endpoint(void)
{
  expect_endpoint("https://mcp.example.com/mcp", true, "mcp.example.com", "mcp.example.com", "443",
                  "/mcp");
  expect_endpoint("http://127.0.0.1:8080/mcp", false, "127.0.0.1:8080", "127.0.0.1", "8080",
                  "/mcp");
  expect_endpoint("http://[::1]:9000/mcp", false, "[::1]:9000", "::1", "9000", "/mcp");
  expect_endpoint("http://h", false, "h", "h", "80", "/");
  McpEndpoint e;
  g_assert_false(mcp_endpoint_parse("ftp://h/mcp", &e));
  g_assert_false(mcp_endpoint_parse("http:///mcp", &e));
}

static void put(int fd, const char *text)
{
  g_assert_cmpint(write(fd, text, strlen(text)), ==, (gssize)strlen(text));
}

/* A reply read from the far end of a socket pair that gives up after a
 * second without data: a message the reader waited for more to hand on is
 * a failed assertion, not a hung test. */
static McpReply *reply_of(int fds[2], McpConn *c, const char *sent)
{
  g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), ==, 0);
  struct timeval tv = { 1, 0 };
  setsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  *c = (McpConn){ fds[0], NULL, NULL };
  put(fds[1], sent);
  McpReply *r = mcp_reply_read(c);
  g_assert_nonnull(r);
  return r;
}

static void reply_done(McpReply *r, McpConn *c, int far)
{
  mcp_reply_free(r);
  mcp_conn_close(c);
  if (far >= 0) close(far);
}

static void test_http_reply(void)
{
  int fds[2];
  McpConn c;
  GString *msg = g_string_new(NULL);
  /* a JSON body of known length, whole */
  McpReply *r = reply_of(fds, &c,
                         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         "Mcp-Session-Id: s-1\r\nContent-Length: 9\r\n\r\n{\"a\":\n1}");
  g_assert_cmpint(mcp_reply_status(r), ==, 200);
  g_autofree char *sid = mcp_reply_header(r, "mcp-session-id");
  g_assert_cmpstr(sid, ==, "s-1");
  g_assert_true(mcp_reply_next(r, msg));
  g_assert_cmpstr(msg->str, ==, "{\"a\":\n1}");
  g_assert_false(mcp_reply_next(r, msg));
  reply_done(r, &c, fds[1]);
  /* an SSE stream in chunks: an event is handed on before the CRLF that
   * ends its chunk (a relay sends it with the next chunk), an event's data
   * lines are joined, and one may span chunks */
  r = reply_of(fds, &c,
               "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
               "Transfer-Encoding: chunked\r\n\r\n"
               "1e\r\nevent: message\ndata: {\"n\":1}\n\n");
  g_assert_true(mcp_reply_next(r, msg));
  g_assert_cmpstr(msg->str, ==, "{\"n\":1}");
  put(fds[1], "\r\n1a\r\n: keepalive\r\n\r\ndata: {\"n\":\r\n"
              "c\r\n\r\ndata: 2}\r\n\r\n"
              "2\r\n\r\n\r\n0\r\n\r\n");
  g_assert_true(mcp_reply_next(r, msg));
  g_assert_cmpstr(msg->str, ==, "{\"n\":\n2}");
  g_assert_false(mcp_reply_next(r, msg));
  reply_done(r, &c, fds[1]);
  /* an error's text */
  r = reply_of(fds, &c, "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\n\r\nno token\n");
  close(fds[1]);
  g_assert_cmpint(mcp_reply_status(r), ==, 401);
  g_autofree char *text = mcp_reply_rest(r, 512);
  g_assert_cmpstr(text, ==, "no token\n");
  reply_done(r, &c, -1);
  /* an SSE stream's event ids, where a resume starts: an event's id
   * counts once the event is whole, a priming event's (no data) too, and a
   * cut in the middle of an event leaves the last whole one's */
  r = reply_of(fds, &c,
               "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
               "id: p-1\nretry: 250\ndata: \n\n"
               "event: message\nid: e-2\ndata: {\"n\":2}\n\n");
  g_assert_null(mcp_reply_last_id(r));
  g_assert_cmpint(mcp_reply_retry(r), ==, -1);
  g_assert_true(mcp_reply_next(r, msg));
  g_assert_cmpstr(msg->str, ==, "{\"n\":2}"); /* the priming event is no message */
  g_assert_cmpstr(mcp_reply_last_id(r), ==, "e-2");
  g_assert_cmpint(mcp_reply_retry(r), ==, 250);
  put(fds[1], "id:e-3\ndata: {\"n\":3}\n");
  close(fds[1]);
  g_assert_true(mcp_reply_next(r, msg)); /* a last event, cut before its blank line */
  g_assert_cmpstr(msg->str, ==, "{\"n\":3}");
  g_assert_cmpstr(mcp_reply_last_id(r), ==, "e-2");
  g_assert_false(mcp_reply_next(r, msg));
  reply_done(r, &c, -1);
  /* an id field with no value resets it; retry takes digits only */
  r = reply_of(fds, &c,
               "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
               "id: a\ndata: 1\n\nid\nretry: 5s\ndata: 2\n\n");
  close(fds[1]);
  g_assert_true(mcp_reply_next(r, msg));
  g_assert_cmpstr(mcp_reply_last_id(r), ==, "a");
  g_assert_true(mcp_reply_next(r, msg));
  g_assert_null(mcp_reply_last_id(r));
  g_assert_cmpint(mcp_reply_retry(r), ==, -1);
  reply_done(r, &c, -1);
  g_string_free(msg, TRUE);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/mcp/namespace", test_namespace);
  g_test_add_func("/mcp/fragment/typing", test_fragment_typing);
  g_test_add_func("/mcp/fragment/refusals", test_fragment_refusals);
  g_test_add_func("/mcp/http/endpoint", test_http_endpoint);
  g_test_add_func("/mcp/http/reply", test_http_reply);
  return g_test_run();
}
