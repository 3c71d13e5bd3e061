/* history_hooks.h — what a decision asks of the history (history.c). */
#ifndef BOX_POLICY_HISTORY_HOOKS_H
#define BOX_POLICY_HISTORY_HOOKS_H

#include "policy/policy-private.h"

/* Appends the ::request event and evaluates every temporal clause for
 * this request.  Returns false on a history fault (*why: the reason,
 * borrowed).  Holds the temporal lock until policy_temporal_end. */
bool policy_temporal_begin(BoxPolicy *pol, int action, json_object *input, const char **why);
/* permitted: the decision's verdict; a permitted request then awaits its
 * outcome (requestId correlation).  label: the request's resource label. */
void policy_temporal_end(BoxPolicy *pol, bool permitted, int action, const char *label);
/* Frees the policy's history state. */
void policy_temporal_free(BoxPolicy *pol);

#endif
