"""Compile-time feature mask.

Behaviour that can be switched (pre-vote, snapshots, each invariant check, each
known-bug mutation, trace recording) is one bit of an int passed to the kernels as
a Numba *literal*: every distinct mask compiles its own specialisation, the branches
on it fold away, and the unmutated kernel pays nothing for mutations. Bits 0-31 are
the property checks: the safety invariants (ids in ``checkers``), then the timed
mode's liveness properties (``liveness``).
"""
PRE_VOTE = 1 << 32
TRACE = 1 << 33
# Check every node after every step and recompute every enabled-action mask, instead
# of only the node the step changed: slower, and the reference the fast path must equal.
FULL_CHECKS = 1 << 34
# KIP-630 snapshots: nodes snapshot their committed log and clean it up to the snapshot,
# followers below the leader's log start fetch its snapshot (kernels/snapshots.py).
SNAPSHOTS = 1 << 35
# KIP-853 voter changes: leaders append VotersRecords (AddVoter, RemoveVoter), every node
# votes and counts by the latest VotersRecord in its log (kernels/reconfig.py).
RECONFIG = 1 << 36
# Disk loss with directory ids (KIP-853): a node's disk is replaced and it starts empty under
# a new directory id; votes, Fetch and the HW check replica keys (kernels/faults.lose_disk).
DISK_LOSS = 1 << 37

# Known-bug mutations (protocol-notes.md, "Known bugs a checker must be able to find").
MUT_COMMIT_OLD_EPOCH = 1 << 40      # HW advances over an earlier epoch's entry (Raft Figure 8)
MUT_DOUBLE_VOTE = 1 << 41           # a voter grants a second vote in the same epoch
MUT_RESTARTED_LEADER = 1 << 42      # a restarted leader resumes leading its old epoch
MUT_NO_CHECK_QUORUM = 1 << 43       # a leader never resigns for lack of fetches
MUT_NO_FETCH_TIMER_RESET = 1 << 44  # a follower's fetch timer is not restarted by a fetch
MUT_SNAPSHOT_ABOVE_HW = 1 << 45     # a snapshot is taken up to the log end, past the HW
MUT_LEADER_LOADS_SNAPSHOT = 1 << 46  # a snapshot download is installed whatever the role
MUT_RECONFIG_BEFORE_COMMIT = 1 << 47  # a new leader changes voters before committing in its
                                      # epoch (the single-server membership bug)
MUT_TWO_PENDING_CHANGES = 1 << 48     # a voter change accepted while another is uncommitted
MUT_WIPED_SAME_ID = 1 << 49           # a node that lost its disk comes back under its old
                                      # directory id (disk loss without directory ids)

CHECKS_MASK = (1 << 32) - 1
