/* load.c — a policy from its file or text: read, parse, check, and the
 * policy's life (spec/policy.md §1, §3.4). */
#include "policy/history_hooks.h"
#include "policy/parser.h"
#include "policy/temporal.h"
#include "policy/validate.h"

#include <string.h>

G_DEFINE_QUARK(box - policy - error - quark, box_policy_error)

/* The line and column (in characters) of at within text. */
static void position_of(const char *text, const char *at, int *line, int *col)
{
  *line = *col = 1;
  for (const char *q = text; q < at; q++) {
    if (*q == '\n') {
      (*line)++;
      *col = 1;
    } else if (((unsigned char)*q & 0xC0) != 0x80) {
      (*col)++;
    }
  }
}

static BoxPolicy *policy_alloc(void)
{
  BoxPolicy *pol = g_new0(BoxPolicy, 1);
  pol->allocs = g_ptr_array_new_with_free_func(g_free);
  pol->warnings = g_ptr_array_new_with_free_func(g_free);
  pol->formulas = g_ptr_array_new_with_free_func((GDestroyNotify)policy_temporal_formula_free);
  return pol;
}

BoxPolicy *box_policy_new_empty(void)
{
  return policy_alloc();
}

void box_policy_free(BoxPolicy *policy)
{
  if (!policy) return;
  policy_temporal_free(policy);
  g_ptr_array_free(policy->formulas, TRUE);
  g_free(policy->rules);
  g_ptr_array_free(policy->allocs, TRUE);
  g_ptr_array_free(policy->warnings, TRUE);
  g_free(policy);
}

const GPtrArray *box_policy_warnings(const BoxPolicy *policy)
{
  return policy->warnings;
}

BoxPolicy *box_policy_load_string(const char *text, const char *operator_home, GError **error)
{
  g_return_val_if_fail(text != NULL, NULL);
  if (!g_utf8_validate(text, -1, NULL)) {
    const char *end = NULL;
    g_utf8_validate(text, -1, &end);
    int line, col;
    position_of(text, end, &line, &col);
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                POLICY_PARSE_PREFIX "the policy source is not valid UTF-8 at line %d, column %d",
                line, col);
    return NULL;
  }
  BoxPolicy *pol = policy_alloc();
  if (!policy_parse(pol, text, error)) {
    box_policy_free(pol);
    return NULL;
  }
  if (!policy_validate(pol, operator_home, error)) {
    box_policy_free(pol);
    return NULL;
  }
  return pol;
}

BoxPolicy *box_policy_load_file(const char *path, const char *operator_home, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  GError *e = NULL;
  if (!g_file_get_contents(path, &text, &len, &e)) {
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO, "cannot read the policy file: %s",
                e->message);
    g_error_free(e);
    return NULL;
  }
  const char *nul = memchr(text, '\0', len);
  if (nul) {
    int line, col;
    position_of(text, nul, &line, &col);
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_PARSE,
                POLICY_PARSE_PREFIX "the policy source contains a NUL byte at line %d, column %d",
                line, col);
    g_free(text);
    return NULL;
  }
  BoxPolicy *pol = box_policy_load_string(text, operator_home, error);
  g_free(text);
  return pol;
}
