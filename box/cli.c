/* cli.c — what the box CLI's verbs share: the error domain of their steps,
 * the one way a fatal error is reported, and option parsing. */
#include "box/box-private.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK(box - boxd - error - quark, box_boxd_error)

/* The last failure said, for the run's box_stopped record. */
static char *last_failure;

int box_fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fprintf(stderr, "box: error: %s\n", msg);
  g_free(last_failure);
  last_failure = msg;
  return 1;
}

const char *box_failure(void)
{
  return last_failure;
}

int box_usage_error(const char *help, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fprintf(stderr, "error: %s\n\n%s", msg, help);
  return 2;
}

bool box_help_word(const char *arg)
{
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int box_help_print(const char *help)
{
  fputs(help, stdout);
  return 0;
}

bool box_verb_parse(const char *prgname, const char *parameter, const char *operands,
                    const char *summary, bool strict_posix, char **config_path, char ***rest,
                    int *argc, char ***argv)
{
  GOptionEntry entries[] = {
    { "config", 0, 0, G_OPTION_ARG_FILENAME, config_path, "The box's configuration", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, rest, NULL, operands },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_set_prgname(prgname); /* so --help reads "Usage: box <verb> …" */
  g_autoptr(GOptionContext) ctx = g_option_context_new(parameter);
  g_option_context_set_summary(ctx, summary);
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_strict_posix(ctx, strict_posix);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &error)) {
    fprintf(stderr, "box: error: %s\n", error->message);
    return false;
  }
  return true;
}
