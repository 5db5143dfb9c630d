"""Compile-time feature mask.

Behaviour that can be switched (pre-vote, each invariant check, each known-bug
mutation, trace recording) is one bit of an int passed to the kernels as a
Numba *literal*: every distinct mask compiles its own specialisation, the
branches on it fold away, and the unmutated kernel pays nothing for mutations.
Bits 0-15 are the invariant checks (ids in ``checkers``).
"""
PRE_VOTE = 1 << 16
TRACE = 1 << 17
# Check every node after every step and recompute every enabled-action mask, instead
# of only the node the step changed: slower, and the reference the fast path must equal.
FULL_CHECKS = 1 << 18

# Known-bug mutations (protocol-notes.md, "Known bugs a checker must be able to find").
MUT_COMMIT_OLD_EPOCH = 1 << 24      # HW advances over an earlier epoch's entry (Raft Figure 8)
MUT_DOUBLE_VOTE = 1 << 25           # a voter grants a second vote in the same epoch
MUT_RESTARTED_LEADER = 1 << 26      # a restarted leader resumes leading its old epoch
MUT_NO_CHECK_QUORUM = 1 << 27       # a leader never resigns for lack of fetches
MUT_NO_FETCH_TIMER_RESET = 1 << 28  # a follower's fetch timer is not restarted by a fetch

CHECKS_MASK = (1 << 16) - 1
