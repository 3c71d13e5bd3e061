/* test_policy_path.c — policy/path.h: which directory a path is within,
 * and the `~` spelling, with the cases where the copies it replaced
 * disagreed ("/" as a directory, trailing slashes, a name that only
 * shares a prefix). */
#include <glib.h>

#include "policy/path.h"
#include "tests/unit/test_util.h"

static void test_within_root(void)
{
  g_assert_true(box_path_within("/", "/"));
  g_assert_true(box_path_within("/a", "/"));
  g_assert_true(box_path_within("/a/b", "/"));
  g_assert_true(box_path_within("/a", "//"));
  /* a relative path is not within the root */
  g_assert_false(box_path_within("a", "/"));
  g_assert_false(box_path_within("", "/"));
}

static void test_within_components(void)
{
  g_assert_true(box_path_within("/a", "/a"));
  g_assert_true(box_path_within("/a/b", "/a"));
  g_assert_true(box_path_within("/a/b/c", "/a/b"));
  g_assert_false(box_path_within("/ab", "/a"));
  g_assert_false(box_path_within("/a", "/a/b"));
  g_assert_false(box_path_within("/b", "/a"));
  /* dir's trailing slashes do not count */
  g_assert_true(box_path_within("/a", "/a/"));
  g_assert_true(box_path_within("/a/b", "/a//"));
  g_assert_false(box_path_within("/ab", "/a/"));
}

static void test_within_len(void)
{
  const char *s = "/home/u/x";
  g_assert_true(box_path_within_len(s, 7, "/home/u"));
  g_assert_false(box_path_within_len(s, 6, "/home/u"));
  g_assert_true(box_path_within_len(s, 9, "/home/u"));
  g_assert_true(box_path_within_len(s, 1, "/"));
  g_assert_false(box_path_within_len(s, 0, "/"));
}

static void expect_tilde(const char *path, const char *home, const char *want)
{
  g_autofree char *got = box_path_tilde(path, home);
  g_assert_cmpstr(got, ==, want);
}

static void test_tilde(void)
{
  expect_tilde("/home/u", "/home/u", "~");
  expect_tilde("/home/u/", "/home/u", "~");
  expect_tilde("/home/u/src/x", "/home/u", "~/src/x");
  expect_tilde("/home/u//src/", "/home/u", "~/src");
  expect_tilde("/home/u/src", "/home/u/", "~/src");
  expect_tilde("/home/uv", "/home/u", NULL);
  expect_tilde("/etc", "/home/u", NULL);
  expect_tilde("/home/u/x", "home/u", NULL);
  expect_tilde("/home/u/x", NULL, NULL);
  /* "/" as a home: every absolute path is beneath it */
  expect_tilde("/x/y", "/", "~/x/y");
  expect_tilde("/", "/", "~");
  g_autofree char *part = box_path_tilde_len("/home/u/src/x", 11, "/home/u");
  g_assert_cmpstr(part, ==, "~/src");
}

static void expect_spell(const char *path, const char *home, const char *want)
{
  g_autofree char *got = box_path_spell(path, home);
  g_assert_cmpstr(got, ==, want);
}

static void test_spell(void)
{
  expect_spell("/home/u/src/x", "/home/u", "~/src/x");
  expect_spell("/home/u", "/home/u", "~");
  expect_spell("/etc/passwd", "/home/u", "/etc/passwd");
  expect_spell("/home/uv", "/home/u", "/home/uv");
  /* no `~` for a home of "/", none set, or a relative one */
  expect_spell("/etc/passwd", "/", "/etc/passwd");
  expect_spell("/home/u/x", NULL, "/home/u/x");
  expect_spell("/home/u/x", "home/u", "/home/u/x");
}

int main(int argc, char **argv)
{
  static const TestCase cases[] = { { "/path/within/root", test_within_root },
                                    { "/path/within/components", test_within_components },
                                    { "/path/within/len", test_within_len },
                                    { "/path/tilde", test_tilde },
                                    { "/path/spell", test_spell } };
  return test_run_table(&argc, &argv, cases, G_N_ELEMENTS(cases));
}
