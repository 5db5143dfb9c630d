"""Compile-time feature mask, as the kernels name its bits.

Each bit is declared, with what it switches, in kraftwalk/vocabulary/features.py
(the switches) and kraftwalk/vocabulary/mutations.py (the known-bug mutations, in
their order); here they get the names the kernels test them by. Bits 0-31 are the
property checks: the safety invariants (ids in ``checkers``), then the timed mode's
liveness properties (``liveness``).
"""
from kraftwalk.vocabulary.features import CHECKS_MASK, SWITCH_BIT  # noqa: F401
from kraftwalk.vocabulary.mutations import MUTATION_BIT

PRE_VOTE = SWITCH_BIT["pre_vote"]
TRACE = SWITCH_BIT["trace"]
FULL_CHECKS = SWITCH_BIT["full_checks"]
SNAPSHOTS = SWITCH_BIT["snapshots"]
RECONFIG = SWITCH_BIT["reconfig"]
DISK_LOSS = SWITCH_BIT["disk_loss"]
KAFKA_17642 = SWITCH_BIT["kafka_17642"]  # a Follower keeps its vote across a restart (4.0+)
KAFKA_17030 = SWITCH_BIT["kafka_17030"]  # an Unattached voter fetches too (3.9.1, 4.0+)

MUT_COMMIT_OLD_EPOCH = MUTATION_BIT["commit-old-epoch"]      # Raft Figure 8
MUT_DOUBLE_VOTE = MUTATION_BIT["double-vote"]
MUT_RESTARTED_LEADER = MUTATION_BIT["restarted-leader-keeps-leading"]
MUT_NO_CHECK_QUORUM = MUTATION_BIT["no-check-quorum"]
MUT_NO_FETCH_TIMER_RESET = MUTATION_BIT["no-fetch-timer-reset"]
MUT_SNAPSHOT_ABOVE_HW = MUTATION_BIT["snapshot-above-hw"]
MUT_LEADER_LOADS_SNAPSHOT = MUTATION_BIT["leader-loads-snapshot"]
MUT_RECONFIG_BEFORE_COMMIT = MUTATION_BIT["reconfig-before-commit"]  # single-server change bug
MUT_TWO_PENDING_CHANGES = MUTATION_BIT["two-pending-changes"]
MUT_WIPED_SAME_ID = MUTATION_BIT["wiped-replica-same-id"]
MUT_HW_AT_EPOCH_START = MUTATION_BIT["hw-at-epoch-start"]  # KAFKA-12619
MUT_NO_FLUSH_AFTER_APPEND = MUTATION_BIT["no-flush-after-append"]  # KAFKA-10533
MUT_OBSERVER_SKIPS_FLUSH = MUTATION_BIT["observer-skips-flush"]  # KAFKA-17332
MUT_NON_VOTER_CANDIDATE = MUTATION_BIT["non-voter-candidate"]  # KAFKA-17067
MUT_CHECK_QUORUM_COUNTS_LEADER = MUTATION_BIT["check-quorum-counts-leader"]  # KAFKA-16531
MUT_PARK_DIVERGING_FETCH = MUTATION_BIT["park-diverging-fetch"]  # KAFKA-15100
# KAFKA-17030: no branch of its own; the mutation clears KAFKA_17030 (the fix it undoes)
MUT_VOTER_SKIPS_BOOTSTRAP_FETCH = MUTATION_BIT["voter-skips-bootstrap-fetch"]
