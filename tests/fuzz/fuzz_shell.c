/* fuzz_shell.c — fuzz target for the way agent text goes into boxd and the
 * Shell worker: boxd's pre-parse (box_shell_first_exec), the parser alone
 * (box_shell_check, `box-shell -n`), and the evaluator behind a host that
 * permits only commands with no effect outside the run.  Build with
 *   clang -fsanitize=fuzzer,address,undefined (see tests/fuzz/README.md);
 * -DFUZZ_SHELL_PARSE_ONLY leaves the evaluator out, for a parser-only run
 * many times faster per input (the evaluator's 200 ms deadline and its
 * forks dominate a mixed run). */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "shell/shell.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_SHELL_PARSE_ONLY
/* What the evaluator may run: builtins that touch nothing but the run's
 * own state and its output.  Functions are permitted (a name the Shell
 * does not implement reaches decide_exec only as a function); everything
 * else — files, cd, source, read, programs — is refused. */
static const char *const harmless[] = {
  ":",     "true",   "false", "echo",     "printf",  "test",     "[",
  "eval",  "return", "break", "continue", "shift",   "local",    "export",
  "unset", "set",    "let",   "readonly", "getopts", "basename", "dirname",
  "expr",  "seq",    "type",  "command",  "builtin", "declare",  "typeset",
};

static bool decide_exec(void *data, const BoxShellCommand *cmd, char **message)
{
  (void)data;
  if (!box_shell_implements(cmd->program)) return true;
  for (size_t i = 0; i < G_N_ELEMENTS(harmless); i++)
    if (strcmp(cmd->program, harmless[i]) == 0) return true;
  *message = strdup("the fuzzer permits no effect");
  return false;
}

static BoxSpawnResult spawn(void *data, const BoxShellCommand *cmd, int fd_out, int fd_err)
{
  (void)data, (void)cmd, (void)fd_out, (void)fd_err;
  BoxSpawnResult r = { BOX_SPAWN_DENIED, 126, strdup("the fuzzer starts no program") };
  return r;
}

/* Whatever a run left behind (a job still running at its deadline, the
 * children of one) ends before the next input: as a subreaper this
 * process inherits them all, and kills and reaps each it finds. */
static void end_leftovers(void)
{
  static bool reaper;
  if (!reaper) reaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  for (bool found = true; found;) {
    found = false;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *f = fopen(path, "r");
    int pid;
    while (f && fscanf(f, "%d", &pid) == 1) {
      kill(pid, SIGKILL);
      found = true;
    }
    if (f) fclose(f);
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
    if (found) usleep(1000);
  }
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 1 << 16) return 0;
  char *text = g_malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';

  BoxShellCommand cmd;
  if (box_shell_first_exec(text, "/w", &cmd)) box_shell_first_exec_free(&cmd);
  box_shell_check(text);

#ifndef FUZZ_SHELL_PARSE_ONLY
  /* Run it only when it can write no file: every redirection that writes
   * has a '>' (`>`, `>>`, `>|`, `<>`, `&>`, `>(…)`), and the commands
   * that write are refused above.  A short wall clock ends loops. */
  if (!memchr(data, '>', size) && !memchr(data, '\0', size)) {
    static const BoxShellHost host = { .decide_exec = decide_exec, .spawn = spawn };
    static const BoxShellEnv env = { "/nonexistent/home", "/nonexistent/work", "/usr/bin:/bin",
                                     "strands-box", false };
    BoxShellLimits limits = { .timeout_ms = 200, .max_depth = 100 };
    end_leftovers();
    box_shell_run_limits(text, &env, &host, &limits);
    end_leftovers();
  }
#endif
  g_free(text);
  return 0;
}
