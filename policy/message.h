/* message.h — the texts users see: a decision's message, a rule's name, the
 * resource label, and the escapes they are built with. */
#ifndef BOX_POLICY_MESSAGE_H
#define BOX_POLICY_MESSAGE_H

#include "policy/policy-private.h"

void policy_escape_debug(GString *out, const char *s, size_t maxbytes);
void policy_escape_annotation(GString *out, const char *s);
/* box_policy_resource_label without a copy where the input holds it (a
 * file decision's path); else the copy, also in *owned, to free */
const char *policy_resource_label_borrowed(const char *action, json_object *input, char **owned);
/* d's message, in a buffer the thread keeps (valid until its next message)
 * or, when it is capped, in *capped, which the caller frees. */
const char *policy_build_message(const BoxDecision *d, const Rule *const *forbids, size_t nforbids,
                                 char **capped);
char *policy_cap_utf8(const char *s, size_t max, const char *suffix);

/* `rule @id("x")`, or "the permit rule with no @id", for load errors;
 * newly allocated. */
char *policy_rule_name(const Rule *r);

#endif
