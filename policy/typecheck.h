/* typecheck.h — strict typing of a rule's conditions (spec/policy.md §3.4). */
#ifndef BOX_POLICY_TYPECHECK_H
#define BOX_POLICY_TYPECHECK_H

#include "policy/policy-private.h"

/* Strict typing of every rule's conditions against each applicable action
 *; appends positioned errors to errs. */
void policy_typecheck_rule(const Rule *rule, const int *actions, int nactions, GPtrArray *errs);

#endif
