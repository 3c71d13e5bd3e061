/* fuzz_shell_parts.c — fuzz targets for three parts of the Shell on their
 * own, each reached directly instead of through a whole run (fuzz_shell.c
 * spends most of its time in the evaluator's forks and deadline):
 *   -DFUZZ_PART_PATTERN  the glob matcher (pattern.c, box_fnmatch): the
 *                        input is a pattern, a NUL, a text;
 *   -DFUZZ_PART_ARITH    arithmetic (arith.c) on a fresh Shell, the input
 *                        as an expression, then through the expander as
 *                        $(( )) and (( )) see it when it runs no command;
 *   -DFUZZ_PART_SCAN     the expander's scan for the end of $( ), ${ },
 *                        "…" and `…` (expand.c); the first byte picks which.
 * Build and run as fuzz_shell.c (tests/fuzz/README.md). */
#include <fnmatch.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "shell/shell-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(FUZZ_PART_PATTERN)
static void part(const char *text, size_t size)
{
  size_t pn = strlen(text);
  const char *s = pn < size ? text + pn + 1 : "";
  if (box_pattern_too_deep(text)) return;
  /* pattern.c always, not only for the non-ASCII text box_fnmatch sends
   * it; three calls, as a pattern that backtracks may take its whole step
   * budget (pattern.c) in each, half a second without the sanitizers */
  box_utf8_fnmatch(text, s, FNM_EXTMATCH);
  box_utf8_fnmatch(text, s, FNM_EXTMATCH | FNM_CASEFOLD | FNM_PERIOD);
  box_fnmatch(text, s, FNM_EXTMATCH);
}
#elif defined(FUZZ_PART_ARITH)
static bool decide_exec(void *data, const BoxShellCommand *cmd, char **message)
{
  (void)data, (void)cmd;
  *message = strdup("the fuzzer runs no command");
  return false;
}

static void part(const char *text, size_t size)
{
  (void)size;
  static const BoxShellHost host = { .decide_exec = decide_exec };
  static const BoxShellEnv env = { "/nonexistent/home", "/nonexistent/work", "/usr/bin:/bin",
                                   "strands-box", false };
  BoxShellNew *n = box_shell_new(&env, &host);
  Shell *sh = (Shell *)n; /* a BoxShellNew is its Shell (shell.c) */
  box_var_set_elem(sh, "b", "1", "2", false);
  box_var_set(sh, "x", "b[1]+1");
  int64_t v;
  box_arith(sh, text, &v);
  /* the expander's way, which expands $… first: only without a command
   * substitution, which would fork */
  if (!strstr(text, "$(") && !strchr(text, '`') && !strstr(text, "<(") && !strstr(text, ">(")) {
    int status = 0;
    g_free(box_expand_arith(sh, text, &status));
  }
  BoxShellLimits limits = { .timeout_ms = 1000 };
  box_shell_run_new(n, "", &limits); /* ends the Shell, freeing its state */
}
#elif defined(FUZZ_PART_SCAN)
static void part(const char *text, size_t size)
{
  if (!size) return;
  static const char closes[] = { ')', '}', '"', '`' };
  char close = closes[(unsigned char)text[0] % sizeof closes];
  size_t e = box_scan_closing(text + 1, size - 1, close);
  if (e > size - 1) abort();
}
#else
#error "define FUZZ_PART_PATTERN, FUZZ_PART_ARITH or FUZZ_PART_SCAN"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size <= 1 << 16) {
    GString *text = g_string_new_len((const char *)data, (gssize)size); /* NUL-terminated */
    part(text->str, size);
    g_string_free(text, TRUE);
  }
  return 0;
}
