/* validate.h — the load checks that follow parsing. */
#ifndef BOX_POLICY_VALIDATE_H
#define BOX_POLICY_VALIDATE_H

#include "policy/policy-private.h"

/* Load checks after parsing (duplicate @id, reserved action, validation).
 * Fills Rule.applies. */
bool policy_validate(BoxPolicy *policy, const char *operator_home, GError **error);

#endif
