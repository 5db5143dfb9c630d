"""Every safety invariant of ``checkers.check_invariants``, on hand-built states.

For each invariant: a bad state where it fires (with the exact id, nodes, epoch and
offset it reports), a closely related good state where it holds, and the same bad
state with that check's bit cleared, which must then report nothing (the states are
built so that no other invariant is broken).

Entries are written (epoch, value): value > 0 a client record, < 0 a LeaderChange
record; crafted values are >= 100 in magnitude so they never equal generated ones.
"""
import pytest

from conftest import (
    F, check, clean, copy_walk, craft, fresh, log_of, name_of, settle, voters_record,
)
from kraftwalk.kernels.properties.checkers import (
    ALL_CHECKS, COMMIT_CURRENT_EPOCH, ELECTION_SAFETY, EPOCH_MONOTONIC,
    HIGH_WATERMARK_MONOTONIC, HIGH_WATERMARK_VALID, INVARIANT_NAMES, LEADER_APPEND_ONLY,
    LEADER_COMPLETENESS, LOG_MATCHING, MAJORITY_REACHED_HIGH_WATERMARK, N_INVARIANTS,
    LEADER_NEVER_LOADS_SNAPSHOT, OBSERVER_CONSISTENCY, SNAPSHOT_AT_LOG_START, SNAPSHOT_CONSISTENT,
    SNAPSHOT_MONOTONIC, STATE_MACHINE_SAFETY, VOTE_UNIQUENESS, AT_MOST_ONE_UNCOMMITTED_VOTER_SET,
    QUORUM_OVERLAP, CANDIDATE_IS_VOTER, LOG_EPOCHS_MONOTONIC,
)
from kraftwalk.kernels.features import RECONFIG, SNAPSHOTS
from kraftwalk.kernels.state.layout import (
    CANDIDATE, CM_BY, CM_EPOCH, CM_VALUE, COMMIT_HASH, FOLLOWER, PROSPECTIVE, UNATTACHED, G_COMMIT_LEN, G_LEADER, G_LEADER_HW,
    G_LEADER_HW_EPOCH, G_REACH, LEADER, LOG_HASH, RESIGNED, S_COMMITTED,
)
from kraftwalk.kernels.state.log import append_entry, truncate_to

L3 = [(1, -101), (1, 102), (1, 103)]
# Every check, the snapshot and voter-change invariants included (they run only with
# the SNAPSHOTS and RECONFIG features).
ALL = ALL_CHECKS | SNAPSHOTS | RECONFIG


def ok(got):
    assert got[0] is None, f"unexpected {name_of(got[0])}: {got}"


# ---------------------------------------------------------------------------------
# Bad states: each builder returns (walk, expected report). ``checks`` is the mask the
# builder's set-up checks run with (the set-up itself must not violate anything).
def setup_check(w, checks):
    got = check(w, checks)
    assert got[0] is None, got
    return w


def bad_election_safety(checks):
    """Node 0 led epoch 1 and has since resigned; node 1 becomes leader of epoch 1 too."""
    w = fresh()
    setup_check(craft(w, 0, role=LEADER, epoch=1, leader=0), checks)
    craft(w, 0, role=RESIGNED)
    setup_check(w, checks)
    craft(w, 1, role=LEADER, epoch=1, leader=1)
    return w, (ELECTION_SAFETY, 0, 1, 1, -1)


def bad_vote_uniqueness(checks):
    """Voter 0's persisted vote in epoch 1 changes from 1 to 2."""
    w = fresh()
    setup_check(craft(w, 0, epoch=1, voted=1), checks)
    craft(w, 0, voted=2)
    return w, (VOTE_UNIQUENESS, 0, 2, 1, -1)


def bad_leader_append_only(checks):
    """The leader of epoch 1 loses entries [1, 3) while still leading epoch 1."""
    w = fresh()
    setup_check(craft(w, 0, role=LEADER, epoch=1, leader=0, log=L3), checks)
    truncate_to(w, 0, 1)
    return w, (LEADER_APPEND_ONLY, 0, -1, 1, 1)


def bad_epoch_monotonic(checks):
    w = fresh()
    setup_check(craft(w, 1, epoch=3), checks)
    craft(w, 1, epoch=2)
    return w, (EPOCH_MONOTONIC, 1, -1, 2, -1)


def bad_log_matching(checks):
    """Same (offset 1, epoch 1), different values."""
    w = fresh()
    setup_check(craft(w, 0, epoch=1, log=[(1, -101), (1, 105)]), checks)
    craft(w, 1, epoch=1, log=[(1, -101), (1, 106)])
    return w, (LOG_MATCHING, 1, 0, 1, 1)


def bad_leader_completeness(checks):
    """Offsets [0, 2) committed in epoch 1 (voter 1's HW covers them); the leader of
    epoch 2 lacks offset 1."""
    w = fresh()
    setup_check(craft(w, 1, role=FOLLOWER, epoch=1, leader=0, hw=2,
                      log=[(1, -101), (1, 102)]), checks)
    assert w.scal[G_COMMIT_LEN] == 2 and w.ghost[G_REACH, 1] == 2
    craft(w, 2, role=LEADER, epoch=2, leader=2, log=[(1, -101), (2, -103)])
    return w, (LEADER_COMPLETENESS, 2, -1, 2, 1)


def bad_state_machine_safety(checks):
    """Committed [0, 2) = (1,-101),(1,102); voter 1's HW covers (2,107) at offset 1."""
    w = fresh()
    setup_check(craft(w, 0, role=FOLLOWER, epoch=1, hw=2, log=[(1, -101), (1, 102)]), checks)
    craft(w, 1, role=FOLLOWER, epoch=2, hw=2, log=[(1, -101), (2, 107)])
    return w, (STATE_MACHINE_SAFETY, 1, -1, 2, 1)


def bad_high_watermark_valid(checks):
    w = fresh()
    craft(w, 1, role=FOLLOWER, epoch=1, hw=3, log=[(1, -101)])
    return w, (HIGH_WATERMARK_VALID, 1, -1, 1, 3)


def three_voters_with(log, leader_epoch, checks):
    w = fresh()
    for j in range(3):
        craft(w, j, role=FOLLOWER, epoch=leader_epoch, leader=0, log=log)
    craft(w, 0, role=LEADER)
    return setup_check(w, checks)


def bad_high_watermark_monotonic(checks):
    """The (only, hence highest-epoch) leader's HW goes from 3 down to 2."""
    w = three_voters_with(L3, 1, checks)
    setup_check(craft(w, 0, hw=3), checks)
    assert (w.scal[G_LEADER_HW], w.scal[G_LEADER_HW_EPOCH]) == (3, 1)
    craft(w, 0, hw=2)
    return w, (HIGH_WATERMARK_MONOTONIC, 0, -1, 1, 2)


def bad_majority_reached_high_watermark(checks):
    """The leader's HW covers offset 1, which only the leader (and an observer, which
    does not count) holds."""
    w = fresh()
    craft(w, 0, role=LEADER, epoch=1, leader=0, log=[(1, -101), (1, 102)])
    craft(w, 1, role=FOLLOWER, epoch=1, leader=0, log=[(1, -101)])
    craft(w, 2, role=FOLLOWER, epoch=1, leader=0, log=[])
    craft(w, 3, role=FOLLOWER, epoch=1, leader=0, log=[(1, -101), (1, 102)])
    setup_check(w, checks)
    craft(w, 0, hw=2)
    return w, (MAJORITY_REACHED_HIGH_WATERMARK, 0, -1, 1, 1)


def bad_commit_current_epoch(checks):
    """The leader of epoch 2 has an HW covering only an epoch-1 entry (Raft Figure 8)."""
    w = three_voters_with([(1, -101), (1, 102), (2, -103)], 2, checks)
    craft(w, 0, hw=2)
    return w, (COMMIT_CURRENT_EPOCH, 0, -1, 2, 1)


def bad_observer_consistency(checks):
    """Committed [0, 2); the observer's HW covers a different entry at offset 1."""
    w = fresh()
    setup_check(craft(w, 0, role=FOLLOWER, epoch=1, hw=2, log=[(1, -101), (1, 102)]), checks)
    craft(w, 3, role=FOLLOWER, epoch=2, hw=2, log=[(1, -101), (2, 108)])
    return w, (OBSERVER_CONSISTENCY, 3, -1, 2, 1)


def committed_l3(checks):
    """Follower 0 of epoch 1 holds L3 with its HW at 3: [0, 3) is committed."""
    w = fresh()
    return setup_check(craft(w, 0, role=FOLLOWER, epoch=1, leader=1, hw=3, log=L3), checks)


def bad_snapshot_monotonic(checks):
    """Node 0's latest snapshot, at 3, moves back to 2."""
    w = committed_l3(checks)
    setup_check(craft(w, 0, SNAP_END=3, SNAP_EPOCH=1), checks)
    craft(w, 0, SNAP_END=2)
    return w, (SNAPSHOT_MONOTONIC, 0, -1, 1, 2)


def bad_snapshot_consistent(checks):
    """Committed [0, 3) in epoch 1; node 1's snapshot at 2 holds an epoch-2 entry at 1."""
    w = committed_l3(checks)
    craft(w, 1, role=FOLLOWER, epoch=2, log=[(1, -101), (2, 109)], SNAP_END=2, SNAP_EPOCH=2)
    return w, (SNAPSHOT_CONSISTENT, 1, -1, 2, 1)


def bad_snapshot_at_log_start(checks):
    """Node 0's log starts at its snapshot's end, 3, but with another epoch than the
    entry below it."""
    w = committed_l3(checks)
    craft(w, 0, SNAP_END=3, SNAP_EPOCH=1, LOG_START=3, START_EPOCH=2)
    return w, (SNAPSHOT_AT_LOG_START, 0, -1, 1, 3)


def bad_leader_never_loads_snapshot(checks):
    """The leader of epoch 1 installs a downloaded snapshot (ends at 0: none kept)."""
    w = fresh()
    setup_check(craft(w, 0, role=LEADER, epoch=1, leader=0, log=[(1, -101)]), checks)
    craft(w, 0, GN_LOADED=LEADER + 1)
    return w, (LEADER_NEVER_LOADS_SNAPSHOT, 0, -1, 1, 0)


def bad_at_most_one_uncommitted_voter_set(checks):
    """Leader 0 of epoch 1, nothing committed, appends a second VotersRecord (adds 3,
    then removes 2) before the first commits."""
    w = fresh()
    craft(w, 0, role=LEADER, epoch=1, leader=0,
          log=[(1, -101), (1, voters_record(0b1111, 1)), (1, voters_record(0b1011, 2))])
    return w, (AT_MOST_ONE_UNCOMMITTED_VOTER_SET, 0, -1, 1, 2)


def committed_by_three(checks):
    """3 voters + 2 observers; follower 0 of epoch 1 commits L3 (its HW covers it) with
    the bootstrap voters {0, 1, 2}."""
    w = fresh(3, 2)
    return setup_check(craft(w, 0, role=FOLLOWER, epoch=1, leader=1, hw=3, log=L3), checks)


def bad_quorum_overlap(checks):
    """Committed by {0, 1, 2}; node 1 leads epoch 2 by {0, 1, 2, 3, 4}, two voters added
    at once: its majority {2, 3, 4} misses the committing majority {0, 1}."""
    w = committed_by_three(checks)
    craft(w, 1, role=LEADER, epoch=2, leader=1, log=L3 + [(1, voters_record(0b11111, 4))])
    return w, (QUORUM_OVERLAP, 1, -1, 2, -1)


def bad_candidate_is_voter(checks):
    """Observer 3 voted for itself and runs in epoch 1 (Kafka 3.9's pre-release
    pollVoted, KAFKA-17067)."""
    w = fresh()
    craft(w, 3, role=CANDIDATE, epoch=1, voted=3)
    return w, (CANDIDATE_IS_VOTER, 3, -1, 1, -1)


def bad_log_epochs_monotonic(checks):
    """Node 1 holds [e1, e2] and then writes an epoch-1 entry after them: alone, so no
    other log's entries disagree with it."""
    w = fresh()
    setup_check(craft(w, 1, epoch=2, log=[(1, -101), (2, -102)]), checks)
    append_entry(w, 1, 1, 103)
    return w, (LOG_EPOCHS_MONOTONIC, 1, -1, 1, 2)


BAD = {
    ELECTION_SAFETY: bad_election_safety,
    VOTE_UNIQUENESS: bad_vote_uniqueness,
    LEADER_APPEND_ONLY: bad_leader_append_only,
    EPOCH_MONOTONIC: bad_epoch_monotonic,
    LOG_MATCHING: bad_log_matching,
    LEADER_COMPLETENESS: bad_leader_completeness,
    STATE_MACHINE_SAFETY: bad_state_machine_safety,
    HIGH_WATERMARK_VALID: bad_high_watermark_valid,
    HIGH_WATERMARK_MONOTONIC: bad_high_watermark_monotonic,
    MAJORITY_REACHED_HIGH_WATERMARK: bad_majority_reached_high_watermark,
    COMMIT_CURRENT_EPOCH: bad_commit_current_epoch,
    OBSERVER_CONSISTENCY: bad_observer_consistency,
    SNAPSHOT_MONOTONIC: bad_snapshot_monotonic,
    SNAPSHOT_CONSISTENT: bad_snapshot_consistent,
    SNAPSHOT_AT_LOG_START: bad_snapshot_at_log_start,
    LEADER_NEVER_LOADS_SNAPSHOT: bad_leader_never_loads_snapshot,
    AT_MOST_ONE_UNCOMMITTED_VOTER_SET: bad_at_most_one_uncommitted_voter_set,
    QUORUM_OVERLAP: bad_quorum_overlap,
    CANDIDATE_IS_VOTER: bad_candidate_is_voter,
    LOG_EPOCHS_MONOTONIC: bad_log_epochs_monotonic,
}
IDS = [INVARIANT_NAMES[i] for i in sorted(BAD)]


def test_every_invariant_has_a_bad_state():
    assert sorted(BAD) == list(range(N_INVARIANTS)) == list(range(len(INVARIANT_NAMES)))
    assert ALL_CHECKS == (1 << N_INVARIANTS) - 1


@pytest.mark.parametrize("inv", sorted(BAD), ids=IDS)
def test_invariant_fires_on_bad_state(inv):
    w, expected = BAD[inv](ALL)
    assert check(w, ALL) == expected


@pytest.mark.parametrize("inv", sorted(BAD), ids=IDS)
def test_disabling_a_check_suppresses_it(inv):
    mask = ALL & ~(1 << inv)
    w, _ = BAD[inv](mask)
    assert check(w, mask)[0] is None
    # the features of a run (pre-vote bit and all) work the same way
    w, _ = BAD[inv](F & ~(1 << inv))
    assert check(w, F & ~(1 << inv))[0] is None


@pytest.mark.parametrize("inv", sorted(BAD), ids=IDS)
def test_no_checks_no_reports(inv):
    w, _ = BAD[inv](0)
    assert check(w, 0)[0] is None


@pytest.mark.parametrize("inv", sorted(BAD), ids=IDS)
def test_only_the_first_violation_is_kept(inv):
    w, expected = BAD[inv](ALL)
    check(w, ALL)
    # a second, different violation on top of it does not overwrite the first
    craft(w, 2, GN_PREV_EPOCH=9)  # node 2's epoch "went down" from 9
    assert check(w, ALL) == expected


# ---------------------------------------------------------------------------------
# Good states, next to the bad ones.
def test_election_safety_holds_for_leaders_of_different_epochs():
    w = fresh()
    settle(craft(w, 0, role=LEADER, epoch=1, leader=0))
    craft(w, 0, role=RESIGNED)
    settle(w)
    ok(check(craft(w, 1, role=LEADER, epoch=2, leader=1)))
    assert w.ghost[G_LEADER, 1] == 0 and w.ghost[G_LEADER, 2] == 1


def test_election_safety_two_leaders_at_once():
    w = fresh()
    craft(w, 0, role=LEADER, epoch=1, leader=0)
    craft(w, 2, role=LEADER, epoch=1, leader=2)
    assert check(w) == (ELECTION_SAFETY, 0, 2, 1, -1)


def test_election_safety_ignores_a_crashed_leader_but_not_its_history():
    w = fresh()
    craft(w, 0, role=LEADER, epoch=1, leader=0, UP=0)
    settle(w)
    assert w.ghost[G_LEADER, 1] == -1  # a crashed node leads nothing
    craft(w, 1, role=LEADER, epoch=1, leader=1)
    settle(w)
    craft(w, 0, UP=1)
    assert check(w) == (ELECTION_SAFETY, 1, 0, 1, -1)


def test_vote_uniqueness_holds_for_same_vote_and_new_epoch():
    w = fresh()
    settle(craft(w, 0, epoch=1, voted=1))
    settle(w)  # the same vote again
    ok(check(craft(w, 0, epoch=2, voted=2)))


def test_vote_uniqueness_ignores_observers():
    w = fresh()
    settle(craft(w, 3, epoch=1, voted=1))
    ok(check(craft(w, 3, voted=2)))


def test_leader_append_only_rewrite_of_same_length():
    """Same length, different content: the first rewritten offset is reported."""
    w = fresh()
    settle(craft(w, 0, role=LEADER, epoch=1, leader=0, log=L3))
    truncate_to(w, 0, 1)
    append_entry(w, 0, 1, 110)
    append_entry(w, 0, 1, 111)
    assert check(w) == (LEADER_APPEND_ONLY, 0, -1, 1, 1)


def test_leader_append_only_holds_when_growing_or_in_a_new_epoch():
    w = fresh()
    settle(craft(w, 0, role=LEADER, epoch=1, leader=0, log=L3))
    append_entry(w, 0, 1, 104)
    ok(check(w))
    # the same node leading a later epoch with a shorter log is not a shrink
    craft(w, 0, role=RESIGNED)
    settle(w)
    truncate_to(w, 0, 1)
    append_entry(w, 0, 2, -105)
    ok(check(craft(w, 0, role=LEADER, epoch=2)))


def test_leader_append_only_across_a_crash():
    """While crashed the node is not checked, but when it leads the same epoch again its
    log must still hold what it had (the restarted-leader bug)."""
    w = fresh()
    settle(craft(w, 0, role=LEADER, epoch=1, leader=0, log=L3))
    craft(w, 0, UP=0)
    truncate_to(w, 0, 2)
    settle(w)
    craft(w, 0, UP=1)
    assert check(w) == (LEADER_APPEND_ONLY, 0, -1, 1, 2)


def test_epoch_monotonic_holds_when_epochs_stay_or_grow():
    w = fresh()
    settle(craft(w, 1, epoch=3))
    settle(w)
    ok(check(craft(w, 1, epoch=4)))


def test_log_matching_same_entry_different_prefix():
    """Offset 1 holds (3, -103) on both nodes but the prefixes differ at offset 0 (whose
    epochs differ, so offset 0 alone is no violation)."""
    w = fresh()
    settle(craft(w, 0, epoch=3, log=[(1, -101), (3, -103)]))
    craft(w, 1, epoch=3, log=[(2, -102), (3, -103)])
    assert check(w) == (LOG_MATCHING, 1, 0, 3, 0)


@pytest.mark.parametrize("other", [
    [(1, -101), (1, 105), (1, 107)],   # extends the same log
    [(1, -101), (2, -109)],            # diverges at offset 1 with another epoch
    [(2, -102)],                       # different epoch at offset 0
    [],
], ids=["extension", "other-epoch-at-1", "other-epoch-at-0", "empty"])
def test_log_matching_holds(other):
    w = fresh()
    settle(craft(w, 0, epoch=1, log=[(1, -101), (1, 105)]))
    ok(check(craft(w, 1, epoch=2, log=other)))


def test_log_matching_only_checks_entries_written_this_step():
    """By design only entries marked as written this step are compared (O(N) per written
    entry): the conflict of bad_log_matching, written without the mark, is not reported."""
    w = fresh()
    settle(craft(w, 0, epoch=1, log=[(1, -101), (1, 105)]))
    craft(w, 1, epoch=1, log=[(1, -101), (1, 106)])
    clean(w)
    ok(check(w))


def test_leader_completeness_short_log_reports_its_end():
    w, _ = bad_leader_completeness(ALL_CHECKS)
    truncate_to(w, 2, 0)
    assert check(w) == (LEADER_COMPLETENESS, 2, -1, 2, 0)


def test_leader_completeness_holds_when_the_leader_has_the_committed_entries():
    w = fresh()
    settle(craft(w, 1, role=FOLLOWER, epoch=1, leader=0, hw=2, log=[(1, -101), (1, 102)]))
    ok(check(craft(w, 2, role=LEADER, epoch=2, leader=2,
                   log=[(1, -101), (1, 102), (2, -103)])))


def test_leader_completeness_rechecked_when_commit_grows():
    """A leader already in place must hold entries committed later in earlier epochs:
    here node 1 (epoch 1) commits offset 1 while node 2 leads epoch 2 without it."""
    w = fresh()
    craft(w, 1, role=FOLLOWER, epoch=1, leader=0, log=[(1, -101), (1, 102)])
    settle(craft(w, 2, role=LEADER, epoch=2, leader=2, log=[(1, -101), (2, -103)]))
    assert check(craft(w, 1, hw=2)) == (LEADER_COMPLETENESS, 2, -1, 2, 1)


def test_state_machine_safety_holds_and_extends_the_committed_log():
    w = fresh()
    settle(craft(w, 0, role=FOLLOWER, epoch=1, hw=2, log=[(1, -101), (1, 102)]))
    assert (w.scal[G_COMMIT_LEN], w.scal[S_COMMITTED]) == (2, 2)
    assert [(w.ghost[CM_EPOCH, k], w.ghost[CM_VALUE, k]) for k in range(2)] == log_of(w, 0)
    assert list(w.hashes[COMMIT_HASH, :2]) == list(w.hashes[LOG_HASH + 0, :2])
    assert list(w.ghost[CM_BY, :2]) == [1, 1]
    # a diverging voter whose HW stops before the divergence is fine
    ok(check(craft(w, 1, role=FOLLOWER, epoch=2, hw=1, log=[(1, -101), (2, 107)])))
    # a voter whose HW covers more of the same log extends the committed log
    ok(check(craft(w, 2, role=FOLLOWER, epoch=2, hw=3, log=[(1, -101), (1, 102), (2, 107)])))
    assert (w.scal[G_COMMIT_LEN], w.scal[S_COMMITTED]) == (3, 3)
    assert list(w.ghost[G_REACH, :4]) == [0, 2, 3, 3]


def test_state_machine_safety_hw_past_log_end_compares_the_log_only():
    """HW > log end is HighWatermarkValid's business (reported first); the log itself is
    still compared up to its end."""
    w = fresh()
    settle(craft(w, 0, role=FOLLOWER, epoch=1, hw=2, log=[(1, -101), (1, 102)]))
    craft(w, 1, role=FOLLOWER, epoch=2, hw=5, log=[(2, -107)])
    assert check(copy_walk(w)) == (HIGH_WATERMARK_VALID, 1, -1, 2, 5)
    assert check(w, ALL_CHECKS & ~(1 << HIGH_WATERMARK_VALID)) == \
        (STATE_MACHINE_SAFETY, 1, -1, 2, 0)


def test_high_watermark_valid_holds_at_log_end():
    w = fresh()
    ok(check(craft(w, 1, role=FOLLOWER, epoch=1, hw=1, log=[(1, -101)])))
    ok(check(craft(w, 2, role=FOLLOWER, epoch=1, hw=-1, log=[])))


def test_high_watermark_monotonic_new_leader_and_stale_leader():
    """A new leader with no HW yet (-1) is no decrease; once a higher-epoch leader is
    the top one, a stale lower-epoch leader is not compared; the new leader's HW is."""
    L4 = L3 + [(2, -104), (2, 105)]
    w = three_voters_with(L3, 1, ALL_CHECKS)
    settle(craft(w, 0, hw=3))
    craft(w, 1, role=LEADER, epoch=2, leader=1, hw=-1, log=L4)
    ok(check(craft(w, 2, epoch=2, leader=1, log=L4)))
    ok(check(craft(w, 0, hw=2)))  # the stale leader of epoch 1
    ok(check(craft(w, 1, hw=5)))
    assert (w.scal[G_LEADER_HW], w.scal[G_LEADER_HW_EPOCH]) == (5, 2)
    assert check(craft(w, 1, hw=4)) == (HIGH_WATERMARK_MONOTONIC, 1, -1, 2, 4)


def test_high_watermark_monotonic_ignores_a_crashed_leader():
    w = three_voters_with(L3, 1, ALL_CHECKS)
    settle(craft(w, 0, hw=3))
    ok(check(craft(w, 0, UP=0, hw=-1)))


@pytest.mark.parametrize("follower_log", [
    [(1, -101), (1, 102)],            # node 1 holds offset 1 too
    [(1, -101), (1, 102), (1, 109)],  # and more
])
def test_majority_reached_high_watermark_holds(follower_log):
    w = fresh()
    craft(w, 0, role=LEADER, epoch=1, leader=0, log=[(1, -101), (1, 102)])
    craft(w, 1, role=FOLLOWER, epoch=1, leader=0, log=follower_log)
    settle(w)
    ok(check(craft(w, 0, hw=2)))


def test_majority_reached_high_watermark_needs_the_same_entries():
    """Node 1 has a different entry at offset 1: it does not count."""
    w = fresh()
    craft(w, 0, role=LEADER, epoch=1, leader=0, log=[(1, -101), (1, 102)])
    craft(w, 1, role=FOLLOWER, epoch=2, log=[(1, -101), (2, 109)])
    settle(w)
    assert check(craft(w, 0, hw=2)) == (MAJORITY_REACHED_HIGH_WATERMARK, 0, -1, 1, 1)


def test_commit_current_epoch_holds_once_hw_covers_own_epoch_entry():
    w = three_voters_with([(1, -101), (1, 102), (2, -103)], 2, ALL_CHECKS)
    ok(check(craft(w, 0, hw=3)))


def test_observer_consistency_hw_past_the_committed_log():
    w = fresh()
    assert check(craft(w, 3, role=FOLLOWER, epoch=1, hw=1, log=[(1, -101)])) == \
        (OBSERVER_CONSISTENCY, 3, -1, 1, 0)


def test_observer_consistency_holds_on_a_committed_prefix():
    w = fresh()
    settle(craft(w, 0, role=FOLLOWER, epoch=1, hw=2, log=[(1, -101), (1, 102)]))
    ok(check(craft(w, 3, role=FOLLOWER, epoch=1, hw=1, log=[(1, -101), (1, 102), (2, 108)])))
    ok(check(craft(w, 3, hw=2)))
    assert w.scal[G_COMMIT_LEN] == 2  # an observer never extends the committed log


def test_voter_hw_commits_but_observer_hw_does_not():
    w = fresh()
    settle(craft(w, 3, role=FOLLOWER, epoch=1, hw=-1, log=[(1, -101)]))
    assert w.scal[G_COMMIT_LEN] == 0
    settle(craft(w, 1, role=FOLLOWER, epoch=1, hw=1, log=[(1, -101)]))
    assert w.scal[G_COMMIT_LEN] == 1


# ---- snapshots (KIP-630) -----------------------------------------------------------------
@pytest.mark.parametrize("end", [0, 2, 3])
def test_snapshot_invariants_hold_on_a_committed_snapshot(end):
    """A snapshot of a committed prefix, the log starting at it or below it."""
    w = committed_l3(ALL)
    craft(w, 0, SNAP_END=end, SNAP_EPOCH=1 if end else 0, LOG_START=end,
          START_EPOCH=1 if end else 0)
    ok(check(w, ALL))
    craft(w, 0, LOG_START=0, START_EPOCH=0)  # not cleaned yet: the log starts at 0
    ok(check(w, ALL))


def test_snapshot_consistent_above_the_committed_log():
    """A snapshot at 3 when only [0, 2) is committed: it holds an uncommitted entry."""
    w = fresh()
    setup_check(craft(w, 0, role=FOLLOWER, epoch=1, leader=1, hw=2, log=L3), ALL)
    craft(w, 0, SNAP_END=3, SNAP_EPOCH=1)
    assert check(w, ALL) == (SNAPSHOT_CONSISTENT, 0, -1, 1, 2)


def test_snapshot_consistent_checks_the_epoch_of_the_id():
    w = committed_l3(ALL)
    craft(w, 0, SNAP_END=3, SNAP_EPOCH=2)
    assert check(w, ALL) == (SNAPSHOT_CONSISTENT, 0, -1, 1, 2)


def test_snapshot_monotonic_holds_when_a_snapshot_moves_forward():
    w = committed_l3(ALL)
    craft(w, 0, SNAP_END=2, SNAP_EPOCH=1)
    ok(check(w, ALL))
    craft(w, 0, SNAP_END=3)
    ok(check(w, ALL))


def test_snapshot_at_log_start_past_the_log_or_the_snapshot():
    w = committed_l3(ALL)
    craft(w, 0, SNAP_END=2, SNAP_EPOCH=1, LOG_START=3, START_EPOCH=1)  # past the snapshot
    assert check(w, ALL) == (SNAPSHOT_AT_LOG_START, 0, -1, 1, 3)
    w = committed_l3(ALL)
    craft(w, 0, hw=2, SNAP_END=3, SNAP_EPOCH=1, LOG_START=3, START_EPOCH=1, LOG_END=2)
    assert check(w, ALL)[0] == SNAPSHOT_AT_LOG_START  # past the log end


def test_a_follower_may_load_a_snapshot():
    w = fresh()
    setup_check(craft(w, 0, role=LEADER, epoch=1, leader=0, log=[(1, -101)]), ALL)
    craft(w, 0, GN_LOADED=FOLLOWER + 1)
    ok(check(w, ALL))


def test_snapshot_invariants_need_the_snapshots_feature():
    w, _ = bad_snapshot_consistent(ALL)
    ok(check(w, ALL_CHECKS))


# ---------------------------------------------------------------------------------
# Voter changes (KIP-853): the invariants hold on one change at a time.
def test_one_uncommitted_voter_set_is_allowed():
    w = fresh()
    ok(check(craft(w, 0, role=LEADER, epoch=1, leader=0,
                   log=[(1, -101), (1, voters_record(0b1111, 1))]), ALL))


def test_quorum_overlap_holds_one_change_apart():
    w = committed_by_three(ALL)
    craft(w, 1, role=LEADER, epoch=2, leader=1, log=L3 + [(1, voters_record(0b01111, 4))])
    ok(check(w, ALL))


def test_voter_change_invariants_need_the_reconfig_feature():
    w, _ = bad_quorum_overlap(ALL_CHECKS)
    ok(check(w, ALL_CHECKS))
    w, _ = bad_at_most_one_uncommitted_voter_set(ALL_CHECKS)
    ok(check(w, ALL_CHECKS))


@pytest.mark.parametrize("role", [CANDIDATE, PROSPECTIVE])
def test_candidate_is_voter_holds_for_a_voter_running(role):
    ok(check(craft(fresh(), 1, role=role, epoch=1, voted=1 if role == CANDIDATE else -1)))


def test_candidate_is_voter_holds_for_an_observer_that_only_voted():
    ok(check(craft(fresh(), 3, role=UNATTACHED, epoch=1, voted=1)))


def test_candidate_is_voter_ignores_a_crashed_node():
    w, _ = bad_candidate_is_voter(ALL)
    ok(check(craft(w, 3, UP=0)))


def test_candidate_is_voter_asks_the_nodes_own_voter_set():
    """Voter 2 whose log removed it ({0, 1} in a VotersRecord) and then runs: it fires,
    though the leader's view and the bootstrap set still name it."""
    w = fresh()
    craft(w, 2, role=PROSPECTIVE, epoch=1, log=[(1, -101), (1, voters_record(0b011, 1))])
    assert check(w, ALL) == (CANDIDATE_IS_VOTER, 2, -1, 1, -1)
    w2 = fresh()
    craft(w2, 3, role=PROSPECTIVE, epoch=1, log=[(1, -101), (1, voters_record(0b1011, 1))])
    ok(check(w2, ALL))  # an observer added to the set in its own log may run


def test_log_epochs_monotonic_holds_for_equal_and_rising_epochs():
    w = fresh()
    settle(craft(w, 1, epoch=2, log=[(1, -101), (1, 102)]))
    append_entry(w, 1, 1, 103)
    append_entry(w, 1, 2, -104)
    ok(check(w))


def test_log_epochs_monotonic_sees_a_whole_log_written_at_once():
    """A log replaced in one step ([e1, e3, e2]: a truncation and appends) is checked from
    the first entry it rewrote."""
    w = fresh()
    settle(craft(w, 2, epoch=3, log=[(1, -101), (1, 102)]))
    craft(w, 2, log=[(1, -101), (3, -105), (2, -106)])
    assert check(w) == (LOG_EPOCHS_MONOTONIC, 2, -1, 2, 2)
