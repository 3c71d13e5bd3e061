/* temporal_check.h — the load checks of history rules (spec/policy.md §2.6) and the
 * plan of their evaluation. */
#ifndef BOX_POLICY_TEMPORAL_CHECK_H
#define BOX_POLICY_TEMPORAL_CHECK_H

#include "policy/policy-private.h"

/* Checks every temporal block of pol (schema class), plans its fast
 * paths and builds the policy's history state.  Called by policy_validate
 * after cap-as-permit. */
bool policy_temporal_validate(BoxPolicy *pol, GError **error);
/* Resolves the predicates that name actions of ETYPE ("<ns>::Action"),
 * which waited for its server's tools, and checks their fields as the load
 * checks Box's: false with *error (schema class) when one names a tool the
 * server did not list or a field its tool does not take; they then wait
 * again.  Called by box_policy_install_actions. */
bool policy_temporal_install(BoxPolicy *pol, const char *etype, GError **error);

#endif
