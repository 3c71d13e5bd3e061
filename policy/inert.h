/* inert.h — the load checks for rules that can never do what they say. */
#ifndef BOX_POLICY_INERT_H
#define BOX_POLICY_INERT_H

#include "policy/policy-private.h"

/* Inert-literal check (spec/policy.md §3.4).  Returns false with
 * *error set on a refusal; warnings are appended to policy->warnings. */
bool policy_check_inert(BoxPolicy *policy, const char *operator_home, GError **error);
/* Cap-as-permit check (§3.4); a no-op until temporal clauses parse. */
bool policy_check_cap_as_permit(BoxPolicy *policy, GError **error);

#endif
