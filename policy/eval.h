/* eval.h — the evaluator: decisions and their packing. */
#ifndef BOX_POLICY_EVAL_H
#define BOX_POLICY_EVAL_H

#include "policy/policy-private.h"

/* As box_decision_pack, in one block with head bytes before the packed
 * decision (a multiple of 8: the caller's record of it); *block: the block,
 * to g_free. */
BoxPackedDecision *policy_decision_pack_after(const BoxDecision *d, const char *action, size_t head, void **block);

#endif
