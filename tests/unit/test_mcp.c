/* test_mcp.c — per-tool action names and schema fragments (mcp/schema.h). */
#include "mcp/schema.h"

#include <string.h>

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

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/mcp/namespace", test_namespace);
  g_test_add_func("/mcp/fragment/typing", test_fragment_typing);
  g_test_add_func("/mcp/fragment/refusals", test_fragment_refusals);
  return g_test_run();
}
