/* test_util.h — what every GTest program of tests/unit shares: its tests
 * listed as one table and registered in order, so a main() states only
 * which paths run which functions. Header-only, so that each program links
 * exactly what it did before. */
#ifndef BOX_TEST_UTIL_H
#define BOX_TEST_UTIL_H

#include <ftw.h>
#include <glib.h>
#include <stdio.h>
#include <unistd.h>

/* Built with AddressSanitizer (gcc says so by a macro, clang by a feature):
 * frames are several times larger and RLIMIT_AS cannot cap a process whose
 * shadow memory is reserved up front. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_SANITIZED 1
#endif
#endif
#ifndef TEST_SANITIZED
#define TEST_SANITIZED 0
#endif

typedef struct {
  const char *path;
  GTestFunc func;
} TestCase;

/* Adds cases in table order (GTest runs them in the order added). */
static inline void test_add_table(const TestCase *cases, size_t n)
{
  for (size_t i = 0; i < n; i++) g_test_add_func(cases[i].path, cases[i].func);
}

/* g_test_init, the table, g_test_run: the whole of a plain main(). */
static inline int test_run_table(int *argc, char ***argv, const TestCase *cases, size_t n)
{
  g_test_init(argc, argv, NULL);
  test_add_table(cases, n);
  return g_test_run();
}

/* In a forked child: in, out and err become fds 0, 1 and 2, then the pipe
 * ends in `ends` are closed, so that only the parent holds the other ends
 * and sees end-of-file when the child exits. */
static inline void test_child_stdio(int in, int out, int err, const int *ends, size_t n)
{
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  for (size_t i = 0; i < n; i++) close(ends[i]);
}

static inline int test_remove_entry(const char *path, const struct stat *st, int flag,
                                    struct FTW *ftw)
{
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* Removes the temporary tree a program's tests wrote in, depth first and
 * without following its links; 0 when all of it went. */
static inline int test_remove_tree(const char *dir)
{
  return nftw(dir, test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
