"""The reference model's invariant checks on crafted states: each fires on a bad state and
holds on the good state next to it.

States are written straight into a ReferenceCluster's nodes (roles, epochs, logs of
(epoch, value) entries, HWs); ``verdict`` runs the checks as they run after a step.
Node 0..2 are voters, node 3 an observer.
"""
from __future__ import annotations

import pytest

from kraftwalk.kernels.properties.checkers import (
    ALL_CHECKS, AT_MOST_ONE_UNCOMMITTED_VOTER_SET, COMMIT_CURRENT_EPOCH, ELECTION_SAFETY,
    EPOCH_MONOTONIC, HIGH_WATERMARK_MONOTONIC, HIGH_WATERMARK_VALID, INVARIANT_NAMES,
    LEADER_APPEND_ONLY, LEADER_COMPLETENESS, LEADER_NEVER_LOADS_SNAPSHOT, LOG_MATCHING,
    MAJORITY_REACHED_HIGH_WATERMARK, OBSERVER_CONSISTENCY, QUORUM_OVERLAP,
    SNAPSHOT_AT_LOG_START, SNAPSHOT_CONSISTENT, SNAPSHOT_MONOTONIC, STATE_MACHINE_SAFETY,
    VOTE_UNIQUENESS, CANDIDATE_IS_VOTER, LOG_EPOCHS_MONOTONIC,
)
from kraftwalk.kernels.features import DISK_LOSS, RECONFIG, SNAPSHOTS
from kraftwalk.kernels.state.layout import (
    CANDIDATE, FOLLOWER, LEADER, PROSPECTIVE, RESIGNED, UNATTACHED,
)
from kraftwalk.reference import Params, ReferenceCluster
from kraftwalk.reference.checkers import check_invariants
from kraftwalk.reference.voters import voters_record_value

# epoch-1 leader 0: LeaderChange (1, -1), client records (1, 2), (1, 3)
E1 = [(1, -1), (1, 2), (1, 3)]


def cluster(voters=3, observers=1, checks=ALL_CHECKS):
    return ReferenceCluster(Params(voters, observers, log_capacity=16, msg_slots=16), checks)


def put(c, i, *, role=UNATTACHED, epoch=1, log=(), hw=None, leader=None, voted=None):
    node = c.nodes[i]
    node.role, node.epoch, node.hw = role, epoch, hw
    node.log = list(log)
    node.flushed_end = len(node.log)
    node.leader_id = i if role == LEADER else leader
    node.voted_id = voted
    if role == LEADER:
        node.epoch_start = next((k for k, (e, _) in enumerate(node.log) if e == epoch),
                                len(node.log))
    return node


def verdict(c):
    """Run the checks as after a step; the name of the violation found, or None."""
    c.steps += 1
    inv, _ = c.check()
    return None if inv is None else INVARIANT_NAMES[inv]


def replicated(c, log, hw, epoch=1):
    """Leader 0 and followers 1, 2 all hold ``log``; all of them have HW ``hw``."""
    put(c, 0, role=LEADER, epoch=epoch, log=log, hw=hw, voted=0)
    for i in (1, 2):
        put(c, i, role=FOLLOWER, epoch=epoch, log=log, hw=hw, leader=0, voted=0)


# ---- a good state ---------------------------------------------------------------------
def test_a_replicated_committed_log_is_fine():
    c = cluster()
    replicated(c, E1, hw=3)
    put(c, 3, role=FOLLOWER, log=E1[:2], hw=2, leader=0)
    assert verdict(c) is None
    assert c.history.committed == E1 and c.history.committed_in == [1, 1, 1]
    assert c.snapshot()["stats"]["committed"] == 3


# ---- ElectionSafety ---------------------------------------------------------------------
def test_election_safety_two_leaders_in_one_epoch():
    c = cluster()
    put(c, 0, role=LEADER, epoch=2, log=[(2, -1)], voted=0)
    put(c, 1, role=LEADER, epoch=2, log=[(1, -5), (2, -2)], voted=1)
    assert verdict(c) == "ElectionSafety"
    assert c.violation.node_a == 0 and c.violation.node_b == 1 and c.violation.epoch == 2


def test_election_safety_over_the_whole_history():
    c = cluster()
    put(c, 0, role=LEADER, epoch=2, log=[(2, -1)], voted=0)
    assert verdict(c) is None
    put(c, 0, role=FOLLOWER, epoch=2, log=[(2, -1)], leader=0, voted=0)  # steps down ...
    put(c, 1, role=LEADER, epoch=2, log=[(2, -1)], voted=1)              # ... another leads
    assert verdict(c) == "ElectionSafety"


def test_leaders_of_different_epochs_are_fine():
    c = cluster()
    put(c, 0, role=LEADER, epoch=1, log=[(1, -1)], voted=0)
    put(c, 1, role=LEADER, epoch=2, log=[(1, -1), (2, -2)], voted=1)
    assert verdict(c) is None


def test_a_crashed_leader_does_not_count():
    c = cluster()
    put(c, 0, role=LEADER, epoch=2, log=[(2, -1)], voted=0)
    c.nodes[0].up = False
    put(c, 1, role=LEADER, epoch=2, log=[(1, -5), (2, -2)], voted=1)
    assert verdict(c) is None


# ---- LogMatching ------------------------------------------------------------------------
@pytest.mark.parametrize("a, b", [
    ([(1, -1), (1, 2)], [(1, -1), (1, 3)]),            # same epoch and offset, other value
    ([(1, -1), (2, -2)], [(1, -9), (2, -2)]),          # same last entry, different prefix
    ([(1, -1), (1, 2), (3, -3)], [(1, -1), (2, -2), (3, -3)]),
])
def test_log_matching_fires(a, b):
    c = cluster()
    put(c, 1, log=a)
    put(c, 2, log=b)
    assert verdict(c) == "LogMatching"


@pytest.mark.parametrize("a, b", [
    ([(1, -1), (1, 2)], [(1, -1), (2, -2)]),           # diverge where the epochs differ
    ([(1, -1), (1, 2), (1, 3)], [(1, -1), (1, 2)]),    # one a prefix of the other
    ([(1, -1)], [(2, -2)]),
])
def test_log_matching_holds(a, b):
    c = cluster()
    put(c, 1, log=a)
    put(c, 2, log=b)
    assert verdict(c) is None


def test_log_matching_sees_crashed_nodes_logs():
    c = cluster()
    put(c, 1, log=[(1, -1), (1, 2)])
    put(c, 2, log=[(1, -1), (1, 3)])
    c.nodes[2].up = False
    assert verdict(c) == "LogMatching"


# ---- StateMachineSafety / ObserverConsistency ---------------------------------------------
def test_state_machine_safety_fires_on_a_different_committed_entry():
    c = cluster()
    put(c, 0, role=FOLLOWER, log=[(1, -1), (1, 2)], hw=2, leader=1)   # commits (1,-1),(1,2)
    put(c, 1, role=FOLLOWER, log=[(1, -1), (2, -3)], hw=2, leader=0)  # applies (2,-3) at 1
    assert verdict(c) == "StateMachineSafety"
    assert c.violation.node_a == 1 and c.violation.offset == 1


def test_state_machine_safety_holds_below_the_hw():
    c = cluster()
    put(c, 0, role=FOLLOWER, log=[(1, -1), (1, 2)], hw=2, leader=1)
    put(c, 1, role=FOLLOWER, log=[(1, -1), (2, -3)], hw=1, leader=0)  # (2,-3) not applied
    assert verdict(c) is None


def test_state_machine_safety_across_steps():
    """The committed log is history: a node that later applies something else is caught,
    even if the node that committed the entry no longer has it."""
    c = cluster()
    put(c, 0, role=FOLLOWER, log=[(1, -1), (1, 2)], hw=2, leader=1)
    assert verdict(c) is None
    put(c, 0, role=FOLLOWER, epoch=2, log=[(1, -1)], hw=None, leader=1)
    put(c, 2, role=FOLLOWER, epoch=2, log=[(1, -1), (2, -5)], hw=2, leader=1)
    assert verdict(c) == "StateMachineSafety"


def test_observer_consistency():
    c = cluster()
    put(c, 3, role=FOLLOWER, log=[(1, -1)], hw=1, leader=0)   # HW past what voters committed
    assert verdict(c) == "ObserverConsistency"
    c = cluster()
    put(c, 0, role=FOLLOWER, log=[(1, -1), (1, 2)], hw=2, leader=1)
    put(c, 3, role=FOLLOWER, log=[(1, -1), (1, 2)], hw=2, leader=1)
    assert verdict(c) is None


# ---- CommitCurrentEpoch -----------------------------------------------------------------
def test_commit_current_epoch_fires_on_an_old_epoch_entry():
    c = cluster()
    log = [(1, -1), (1, 2), (2, -3)]
    replicated(c, log, hw=2, epoch=2)       # leader of epoch 2 exposes (1, 2) as committed
    assert verdict(c) == "CommitCurrentEpoch"
    assert c.violation.offset == 1


def test_commit_current_epoch_holds_past_the_epoch_start():
    c = cluster()
    replicated(c, [(1, -1), (1, 2), (2, -3)], hw=3, epoch=2)
    assert verdict(c) is None


# ---- the other invariants -------------------------------------------------------------------
def test_vote_uniqueness_from_the_persisted_vote():
    c = cluster()
    put(c, 1, epoch=3, voted=0)
    assert verdict(c) is None
    c.nodes[1].voted_id = 2
    assert verdict(c) == "VoteUniqueness"


def test_vote_uniqueness_from_the_vote_handler():
    c = cluster()
    c.history.vote_granted(c, 1, 0, 3)
    c.history.vote_granted(c, 1, 0, 3)     # the same vote again is fine
    assert verdict(c) is None
    c.history.vote_granted(c, 1, 2, 3)
    assert verdict(c) == "VoteUniqueness"


def test_leader_completeness():
    c = cluster()
    put(c, 0, role=FOLLOWER, epoch=1, log=[(1, -1), (1, 2)], hw=2, leader=2)  # commits in 1
    put(c, 1, role=LEADER, epoch=2, log=[(1, -1), (2, -3)], voted=1)          # lacks (1, 2)
    assert verdict(c) == "LeaderCompleteness"
    c = cluster()
    put(c, 0, role=FOLLOWER, epoch=1, log=[(1, -1), (1, 2)], hw=2, leader=2)
    put(c, 1, role=LEADER, epoch=2, log=[(1, -1), (1, 2), (2, -3)], voted=1)
    assert verdict(c) is None


def test_leader_completeness_only_for_earlier_epochs():
    """A stale leader of epoch 2 need not hold what epoch 3 committed."""
    c = cluster()
    put(c, 0, role=FOLLOWER, epoch=3, log=[(3, -1), (3, 2)], hw=2, leader=2)
    put(c, 1, role=LEADER, epoch=2, log=[(2, -3)], voted=1)
    assert verdict(c) is None


def test_high_watermark_valid():
    c = cluster()
    put(c, 1, role=FOLLOWER, log=[(1, -1)], hw=2, leader=0)
    assert verdict(c) == "HighWatermarkValid"


def test_majority_reached_high_watermark():
    c = cluster()
    put(c, 0, role=LEADER, log=E1, hw=2, voted=0)
    put(c, 1, role=FOLLOWER, log=E1[:1], leader=0)
    put(c, 2, role=FOLLOWER, log=[], leader=0)
    assert verdict(c) == "MajorityReachedHighWatermark"
    c = cluster()
    put(c, 0, role=LEADER, log=E1, hw=2, voted=0)
    put(c, 1, role=FOLLOWER, log=E1[:2], leader=0)
    assert verdict(c) is None


def test_high_watermark_monotonic():
    c = cluster()
    replicated(c, E1, hw=3)
    assert verdict(c) is None
    c.nodes[0].hw = 2
    assert verdict(c) == "HighWatermarkMonotonic"


def test_high_watermark_monotonic_ignores_a_stale_leader():
    c = cluster(voters=4, observers=0)
    put(c, 0, role=LEADER, epoch=2, log=[(2, -1), (2, 2)], hw=2, voted=0)
    for i in (1, 2):
        put(c, i, role=FOLLOWER, epoch=2, log=[(2, -1), (2, 2)], leader=0)
    put(c, 3, epoch=1, log=[(1, -1)])
    assert verdict(c) is None
    c.nodes[0].role = FOLLOWER
    put(c, 3, role=LEADER, epoch=1, log=[(1, -1)], hw=0, voted=3)   # lower epoch, lower HW
    assert verdict(c) is None
    c.nodes[3].epoch = 2                 # (only to show the same HW would be caught at epoch 2)
    c.history.prev_epoch[3] = 2
    c.history.leader_of_epoch.pop(2)
    assert verdict(c) == "HighWatermarkMonotonic"


def test_epoch_monotonic():
    c = cluster()
    put(c, 2, epoch=3)
    assert verdict(c) is None
    c.nodes[2].epoch = 2
    assert verdict(c) == "EpochMonotonic"


def test_leader_append_only():
    c = cluster()
    put(c, 0, role=LEADER, log=E1, voted=0)
    assert verdict(c) is None
    c.nodes[0].log.append((1, 4))                 # growing is fine
    assert verdict(c) is None
    c.nodes[0].log[1] = (1, 9)                    # rewriting is not
    assert verdict(c) == "LeaderAppendOnly"


# ---- how verdicts are kept --------------------------------------------------------------------
def test_the_first_violation_is_kept():
    c = cluster()
    put(c, 2, epoch=3)
    verdict(c)
    c.nodes[2].epoch = 2
    assert verdict(c) == "EpochMonotonic"
    step = c.violation.step
    put(c, 1, role=FOLLOWER, log=[(1, -1)], hw=5, leader=0)
    assert verdict(c) == "EpochMonotonic" and c.violation.step == step


def test_a_disabled_check_reports_nothing_but_keeps_its_history():
    checks = ALL_CHECKS & ~(1 << ELECTION_SAFETY)
    c = cluster(checks=checks)
    put(c, 0, role=LEADER, epoch=2, log=[(2, -1)], voted=0)
    put(c, 1, role=LEADER, epoch=2, log=[(1, -5), (2, -2)], voted=1)
    assert verdict(c) is None
    assert c.history.leader_of_epoch == {2: 0}
    assert check_invariants(c, ALL_CHECKS).invariant == ELECTION_SAFETY


def test_invariant_ids_cover_them_all():
    ids = {ELECTION_SAFETY, VOTE_UNIQUENESS, LEADER_APPEND_ONLY, EPOCH_MONOTONIC, LOG_MATCHING,
           LEADER_COMPLETENESS, STATE_MACHINE_SAFETY, HIGH_WATERMARK_VALID,
           HIGH_WATERMARK_MONOTONIC, MAJORITY_REACHED_HIGH_WATERMARK, COMMIT_CURRENT_EPOCH,
           OBSERVER_CONSISTENCY, SNAPSHOT_MONOTONIC, SNAPSHOT_CONSISTENT, SNAPSHOT_AT_LOG_START,
           LEADER_NEVER_LOADS_SNAPSHOT, AT_MOST_ONE_UNCOMMITTED_VOTER_SET, QUORUM_OVERLAP,
           CANDIDATE_IS_VOTER, LOG_EPOCHS_MONOTONIC}
    assert ids == set(range(len(INVARIANT_NAMES)))


# ---- snapshots (KIP-630) -------------------------------------------------------------------
def snapshotted(end, start=0, epoch=None):
    """Replicated E1, committed; node 1 holds a snapshot of E1 up to ``end`` and its log
    starts at ``start``."""
    c = cluster(checks=ALL_CHECKS | SNAPSHOTS)
    replicated(c, E1, hw=3)
    assert verdict(c) is None
    node = c.nodes[1]
    sid = (end, E1[end - 1][0] if epoch is None else epoch)
    node.latest, node.snapshots = sid, {sid: tuple(E1[:end])}
    if start:
        node.log_start, node.start_epoch = start, E1[start - 1][0]
    return c, node


@pytest.mark.parametrize("end, start", [(2, 0), (3, 0), (2, 2), (3, 3)])
def test_a_committed_snapshot_is_fine(end, start):
    c, _ = snapshotted(end, start)
    assert verdict(c) is None


def test_snapshot_monotonic():
    c, node = snapshotted(3)
    assert verdict(c) is None
    node.latest, node.snapshots = (2, 1), {(2, 1): tuple(E1[:2])}
    assert verdict(c) == "SnapshotMonotonic"
    assert (c.violation.node_a, c.violation.offset) == (1, 2)


def test_snapshot_consistent_other_content():
    c, node = snapshotted(2)
    node.snapshots[node.latest] = ((1, -1), (1, 99))
    assert verdict(c) == "SnapshotConsistent" and c.violation.offset == 1


def test_snapshot_consistent_other_epoch():
    c, _ = snapshotted(3, epoch=2)
    assert verdict(c) == "SnapshotConsistent" and c.violation.offset == 2


def test_snapshot_consistent_past_the_committed_log():
    c = cluster(checks=ALL_CHECKS | SNAPSHOTS)
    replicated(c, E1, hw=2)
    node = c.nodes[2]
    node.latest, node.snapshots = (3, 1), {(3, 1): tuple(E1)}
    assert verdict(c) == "SnapshotConsistent" and c.violation.offset == 2


def test_snapshot_at_log_start():
    c, node = snapshotted(2, start=2)
    node.start_epoch = 5
    assert verdict(c) == "SnapshotAtLogStart" and c.violation.offset == 2
    c, node = snapshotted(2, start=2)
    node.log_start = 3   # past the latest snapshot
    assert verdict(c) == "SnapshotAtLogStart"


def test_leader_never_loads_snapshot():
    c, node = snapshotted(3)
    assert verdict(c) is None
    c.history.loaded_snapshot(c.nodes[0])   # node 0 leads
    assert verdict(c) == "LeaderNeverLoadsSnapshot" and c.violation.node_a == 0
    c, node = snapshotted(3)
    c.history.loaded_snapshot(node)         # a follower may
    assert verdict(c) is None


def test_snapshot_checks_need_the_snapshots_feature():
    c, node = snapshotted(3, epoch=2)
    c.features = ALL_CHECKS
    assert verdict(c) is None


# ---- voter changes (KIP-853) --------------------------------------------------------------
RECONFIG_CHECKS = ALL_CHECKS | RECONFIG


def vr(*ids, serial=0):
    """A VotersRecord entry value naming the voters ``ids``."""
    return voters_record_value(set(ids), serial)


def where(c):
    v = c.violation
    return (v.node_a, v.node_b, v.epoch, v.offset)


def test_at_most_one_uncommitted_voter_set():
    """Leader 0 of epoch 1, nothing committed, appends a second VotersRecord (adds 3,
    then removes 2) before the first commits."""
    c = cluster(checks=RECONFIG_CHECKS)
    put(c, 0, role=LEADER, log=[(1, -1), (1, vr(0, 1, 2, 3)), (1, vr(0, 1, 3))], voted=0)
    assert verdict(c) == "AtMostOneUncommittedVoterSet" and where(c) == (0, -1, 1, 2)


def test_one_uncommitted_voter_set_is_fine():
    c = cluster(checks=RECONFIG_CHECKS)
    put(c, 0, role=LEADER, log=[(1, -1), (1, vr(0, 1, 2, 3))], voted=0)
    assert verdict(c) is None


def test_a_committed_voters_record_is_not_pending():
    c = cluster(checks=RECONFIG_CHECKS)
    replicated(c, [(1, -1), (1, vr(0, 1, 2, 3))], hw=2)
    assert verdict(c) is None
    c.nodes[0].log.append((1, vr(0, 1, 3)))
    assert verdict(c) is None
    c.nodes[0].log.append((1, vr(0, 1)))
    assert verdict(c) == "AtMostOneUncommittedVoterSet" and where(c) == (0, -1, 1, 3)


def committed_by_three():
    """3 voters + 2 observers; follower 0 of epoch 1 commits E1 (its HW covers it) with
    the bootstrap voters {0, 1, 2}."""
    c = cluster(3, 2, checks=RECONFIG_CHECKS)
    put(c, 0, role=FOLLOWER, log=E1, hw=3, leader=1)
    assert verdict(c) is None
    assert c.history.commit_voters == {0, 1, 2}
    return c


def test_quorum_overlap_of_a_new_leader():
    """Node 1 leads epoch 2 by {0, 1, 2, 3, 4}, two voters added at once: its majority
    {2, 3, 4} misses the majority {0, 1} that committed E1."""
    c = committed_by_three()
    put(c, 1, role=LEADER, epoch=2, log=E1 + [(1, vr(0, 1, 2, 3, 4))], voted=1)
    assert verdict(c) == "QuorumOverlap" and where(c) == (1, -1, 2, -1)


def test_quorum_overlap_holds_one_change_apart():
    c = committed_by_three()
    put(c, 1, role=LEADER, epoch=2, log=E1 + [(1, vr(0, 1, 2, 3))], voted=1)
    assert verdict(c) is None


def test_quorum_overlap_of_a_leader_is_checked_when_it_starts_leading():
    """The electing majority is what must meet the committing one: a leader already seen
    leading its epoch is not checked again."""
    c = committed_by_three()
    put(c, 1, role=LEADER, epoch=2, log=E1 + [(1, vr(0, 1, 2, 3))], voted=1)
    assert verdict(c) is None
    c.history.commit_voters = frozenset({3, 4})
    assert verdict(c) is None


def test_quorum_overlap_of_a_commit():
    """Follower 1 commits offset 3 with {0, 1, 2, 3, 4}: no majority of it need meet the
    majority of {0, 1, 2} that committed E1."""
    c = committed_by_three()
    put(c, 1, role=FOLLOWER, log=E1 + [(1, vr(0, 1, 2, 3, 4))], hw=4, leader=2)
    assert verdict(c) == "QuorumOverlap" and where(c) == (1, -1, 1, 3)
    assert c.history.commit_voters == {0, 1, 2, 3, 4}   # the committed log grew all the same
    c = committed_by_three()
    put(c, 1, role=FOLLOWER, log=E1 + [(1, vr(0, 1, 2, 3))], hw=4, leader=2)
    assert verdict(c) is None and c.history.commit_voters == {0, 1, 2, 3}


def test_voter_change_invariants_need_the_reconfig_feature():
    c = committed_by_three()
    c.features = ALL_CHECKS
    put(c, 1, role=LEADER, epoch=2, log=E1 + [(1, vr(0, 1, 2, 3, 4)), (2, vr(0, 1))],
        voted=1)
    assert verdict(c) is None


@pytest.mark.parametrize("role", [LEADER, RESIGNED])
def test_a_leader_removed_from_its_voters_still_commits(role):
    """Leader 0 removed itself and its removal is committed (then it resigns): its HW grows
    the committed log, where an observer's would break ObserverConsistency."""
    c = cluster(checks=RECONFIG_CHECKS)
    log = [(1, -1), (1, vr(1, 2))]
    replicated(c, log, hw=1)
    assert verdict(c) is None
    put(c, 0, role=role, log=log, hw=2, voted=0)
    c.nodes[0].leader_id = 0
    assert verdict(c) is None
    assert c.history.committed == log


def test_majority_reached_high_watermark_counts_the_set_the_hw_moved_with():
    """Leader 0 (HW 2, held by 0 and 1) has since added voter 3: with voter changes the
    HW is counted over {0, 1, 2}, the set it moved with, until it moves again."""
    log = [(1, -1), (1, 2), (1, vr(0, 1, 2, 3))]
    for checks, want in ((RECONFIG_CHECKS, None), (ALL_CHECKS, "MajorityReachedHighWatermark")):
        c = cluster(checks=checks)
        put(c, 0, role=LEADER, log=log, hw=2, voted=0)
        put(c, 1, role=FOLLOWER, log=log[:2], leader=0)
        assert verdict(c) == want
    c = cluster(checks=RECONFIG_CHECKS)
    put(c, 0, role=LEADER, log=log, hw=2, voted=0)
    put(c, 1, role=FOLLOWER, log=log[:2], leader=0)
    c.history.hw_raised(c.nodes[0], dict.fromkeys({0, 1, 2, 3}, 0))
    assert verdict(c) == "MajorityReachedHighWatermark"


# ---- disk loss (KIP-853 directory ids) ----------------------------------------------------
DISK_LOSS_CHECKS = ALL_CHECKS | DISK_LOSS


@pytest.mark.parametrize("checks, dir2, want", [
    (DISK_LOSS_CHECKS, 0, "MajorityReachedHighWatermark"),   # 2 lacks it under its key
    (DISK_LOSS_CHECKS, 1, None),                             # key (2, 0)'s disk is gone
    (ALL_CHECKS, 1, "MajorityReachedHighWatermark"),         # no directory ids: no exemption
])
def test_majority_reached_high_watermark_with_a_lost_disk(checks, dir2, want):
    """Leader 0's HW 2 is held by 0 alone; voter 2's log is empty. If 2's disk was replaced
    (directory id 1), key (2, 0) of the voter set can never vote or fetch again: it is in
    no majority that lacks the entries, so it counts as holding them."""
    c = cluster(checks=checks)
    put(c, 0, role=LEADER, log=E1, hw=2, voted=0)
    put(c, 1, role=FOLLOWER, log=E1[:1], leader=0)
    put(c, 2, log=[])
    c.nodes[2].dir = dir2
    assert verdict(c) == want
    if want:
        assert where(c) == (0, -1, 1, 1)


@pytest.mark.parametrize("dir2, want", [(1, "MajorityReachedHighWatermark"), (2, None)])
def test_majority_reached_high_watermark_counts_the_key_the_hw_moved_with(dir2, want):
    """Voter 2 was removed and added back under directory id 1; leader 0's HW moved with
    keys {(0, 0), (1, 0), (2, 1)}. Node 2 on directory 1 lacks the entries: that key must
    hold them like any voter. Once 2 loses that disk too (directory 2), it need not."""
    log = [(1, -1), (1, voters_record_value({0, 1}, 1)),
           (1, voters_record_value({0, 1, 2}, 2, added_dir=1)), (1, 4)]
    c = cluster(checks=DISK_LOSS_CHECKS | RECONFIG)
    put(c, 0, role=LEADER, log=log, hw=4, voted=0)
    put(c, 1, role=FOLLOWER, log=log[:3], leader=0)
    put(c, 2, role=FOLLOWER, log=log[:3], leader=0)
    c.nodes[2].dir = dir2
    c.history.hw_raised(c.nodes[0], {0: 0, 1: 0, 2: 1})
    assert verdict(c) == want


def test_vote_uniqueness_is_per_key():
    """A replaced disk is a new key that has cast no vote: voting again in an epoch its old
    disk voted in is no violation. The same key voting twice is."""
    c = cluster(checks=DISK_LOSS_CHECKS)
    put(c, 1, epoch=3, voted=0)
    assert verdict(c) is None
    c.nodes[1].dir = 1
    c.nodes[1].voted_id = 2
    assert verdict(c) is None      # not a voter in its own view, and a new key anyway
    c.history.vote_granted(c, 1, 2, 3)
    assert verdict(c) is None
    c.history.vote_granted(c, 1, 0, 3)
    assert verdict(c) == "VoteUniqueness"


# ---- CandidateIsVoter ----------------------------------------------------------------------
@pytest.mark.parametrize("role", [CANDIDATE, PROSPECTIVE])
def test_candidate_is_voter_fires_for_an_observer_running(role):
    c = cluster()
    put(c, 3, role=role, voted=3 if role == CANDIDATE else None)
    assert verdict(c) == "CandidateIsVoter" and where(c) == (3, -1, 1, -1)


@pytest.mark.parametrize("role", [CANDIDATE, PROSPECTIVE])
def test_candidate_is_voter_holds_for_a_voter_running(role):
    c = cluster()
    put(c, 1, role=role, voted=1 if role == CANDIDATE else None)
    assert verdict(c) is None


def test_candidate_is_voter_holds_for_an_observer_that_only_voted_or_is_down():
    c = cluster()
    put(c, 3, role=UNATTACHED, voted=1)
    assert verdict(c) is None
    put(c, 3, role=CANDIDATE, voted=3)
    c.nodes[3].up = False
    assert verdict(c) is None


def test_candidate_is_voter_asks_the_nodes_own_voter_set():
    """Voter 2's log removed it: running fires; observer 3 whose log added it may run."""
    c = cluster(checks=RECONFIG_CHECKS)
    put(c, 2, role=PROSPECTIVE, log=[(1, -1), (1, vr(0, 1))])
    assert verdict(c) == "CandidateIsVoter"
    c = cluster(checks=RECONFIG_CHECKS)
    put(c, 3, role=PROSPECTIVE, log=[(1, -1), (1, vr(0, 1, 2, 3))])
    assert verdict(c) is None


# ---- LogEpochsMonotonic --------------------------------------------------------------------
def test_log_epochs_monotonic_fires_on_an_epoch_below_the_one_before():
    c = cluster()
    put(c, 1, epoch=2, log=[(1, -1), (2, -2)])
    assert verdict(c) is None
    c.nodes[1].log.append((1, 3))
    assert verdict(c) == "LogEpochsMonotonic" and where(c) == (1, -1, 1, 2)


def test_log_epochs_monotonic_holds_for_equal_and_rising_epochs():
    c = cluster()
    put(c, 1, epoch=2, log=[(1, -1), (1, 2)])
    assert verdict(c) is None
    c.nodes[1].log += [(1, 3), (2, -4)]
    assert verdict(c) is None
