/* parser.h — the Cedar grammar: policy text → rules. */
#ifndef BOX_POLICY_PARSER_H
#define BOX_POLICY_PARSER_H

#include "policy/policy-private.h"

/* Parses text (valid UTF-8, NUL-terminated) into policy's rules; false
 * with *error set (parse class, positioned) on the first failure. */
bool policy_parse(BoxPolicy *policy, const char *text, GError **error);

#endif
