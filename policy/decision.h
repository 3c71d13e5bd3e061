/* decision.h — decisions made, packed and unpacked. */
#ifndef BOX_POLICY_DECISION_H
#define BOX_POLICY_DECISION_H

#include "policy/policy-private.h"

/* As box_decision_pack, in one block with head bytes before the packed
 * decision (a multiple of 8: the caller's record of it); *block: the block,
 * to g_free. */
BoxPackedDecision *policy_decision_pack_after(const BoxDecision *d, const char *action, size_t head,
                                              void **block);
/* A decision made: its strings (borrowed: from the request, the policy's
 * rules, the thread's message buffer) copied into one block with it, so
 * that the cache and the log copy it whole and freeing it is one free.
 * m holds the verdict, the cause and the strings; ids, the determining
 * rules' labels; forbids, the forbid rules that matched, for the message. */
BoxDecision *policy_decision_made(BoxDecision *m, const Rule *const *forbids, size_t nforbids,
                                  const char *const *ids, guint nids);

#endif
