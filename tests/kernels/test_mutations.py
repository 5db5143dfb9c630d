"""The known-bug mutations are found, and the unmutated kernel is clean, on one fixed
small budget: 5000 swarm walks of depth 500, 3 voters + 1 observer (+ 2 observers with
voter changes: observers to add; disk loss comes with voter changes, so a wiped voter can
come back), fixed seed (one rare bug gets more walks: MORE_WALKS)."""
import collections

import numpy as np
import pytest

from conftest import (
    F, F_COMMIT_OLD_EPOCH, F_DOUBLE_VOTE, F_NO_CHECK_QUORUM, F_NOPV, F_RESTARTED_LEADER,
    F_DISK_LOSS, F_RECONFIG, F_SNAPSHOTS, F_WIPED_SAME_ID,
)
from kraftwalk.kernels.properties.checkers import (
    COMMIT_CURRENT_EPOCH, ELECTION_SAFETY, HIGH_WATERMARK_MONOTONIC, INVARIANT_NAMES,
    LEADER_APPEND_ONLY, LEADER_COMPLETENESS, LOG_MATCHING, MAJORITY_REACHED_HIGH_WATERMARK,
    SNAPSHOT_CONSISTENT, STATE_MACHINE_SAFETY, VOTE_UNIQUENESS, AT_MOST_ONE_UNCOMMITTED_VOTER_SET,
    OBSERVER_CONSISTENCY, QUORUM_OVERLAP, CANDIDATE_IS_VOTER,
)
from kraftwalk.kernels.features import (
    DISK_LOSS, MUT_HW_AT_EPOCH_START, MUT_NO_FLUSH_AFTER_APPEND, MUT_NON_VOTER_CANDIDATE,
    MUT_OBSERVER_SKIPS_FLUSH, MUT_RECONFIG_BEFORE_COMMIT, MUT_SNAPSHOT_ABOVE_HW,
    MUT_TWO_PENDING_CHANGES, RECONFIG, SNAPSHOTS,
)
from kraftwalk.kernels.state.layout import make_params
from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS, with_feature_weights


SEED = 20240917
WALKS = 5000
DEPTH = 500
PARAMS = make_params(3, 1, 32, 16, 60, 4, DEPTH)
SNAPSHOT_PARAMS = make_params(3, 1, 32, 16, 60, 4, DEPTH, snapshots=True)
SNAPSHOT_WEIGHTS = with_feature_weights(DEFAULT_WEIGHTS, ["snapshots"])
RECONFIG_PARAMS = make_params(3, 2, 32, 16, 60, 4, DEPTH)
RECONFIG_WEIGHTS = with_feature_weights(DEFAULT_WEIGHTS, ["reconfig"])
DISK_LOSS_WEIGHTS = with_feature_weights(DEFAULT_WEIGHTS, ["reconfig", "disk_loss"])

_cache = {}
# KAFKA-17332 needs an observer being added that crashes before it flushes: about one
# walk in 20,000 of this budget's shape
MORE_WALKS = {F_RECONFIG | MUT_OBSERVER_SKIPS_FLUSH: 100_000}


def run(features):
    if features not in _cache:
        from kraftwalk.kernels.drivers.walk import run_chunk
        params, weights = PARAMS, DEFAULT_WEIGHTS
        if features & SNAPSHOTS:
            params, weights = SNAPSHOT_PARAMS, SNAPSHOT_WEIGHTS
        if features & RECONFIG:
            params, weights = RECONFIG_PARAMS, RECONFIG_WEIGHTS
        if features & DISK_LOSS:
            weights = DISK_LOSS_WEIGHTS
        _cache[features] = run_chunk(SEED, 0, MORE_WALKS.get(features, WALKS), params, weights,
                                     True, features)
    return _cache[features]


def found(features):
    """Counter of first-violation invariant names over the budget."""
    _, viol, _ = run(features)
    inv = viol[:, 0]
    return collections.Counter(INVARIANT_NAMES[k - 1] for k in inv[inv > 0])


@pytest.mark.parametrize("features", [F, F_NOPV, F_NO_CHECK_QUORUM, F_SNAPSHOTS, F_DISK_LOSS],
                         ids=["pre-vote", "no-pre-vote", "no-check-quorum(liveness)",
                              "snapshots", "reconfig+disk-loss"])
def test_unmutated_kernel_finds_no_violation(features):
    stats, viol, _ = run(features)
    assert found(features) == {}, found(features)
    assert (viol == 0).all()
    # and the budget is a real one: elections, commits and faults happened
    from kraftwalk.kernels.state.layout import STAT_NAMES
    col = {n: stats[:, k] for k, n in enumerate(STAT_NAMES)}
    # (a wiped voter is out of the quorum until it is removed and added back: fewer
    # elections finish with disk loss on)
    assert col["leader_changes"].sum() > (WALKS // 2 if features & DISK_LOSS else WALKS)
    assert col["committed"].sum() > WALKS
    assert col["crashes"].sum() > WALKS
    assert col["truncations"].sum() > 0
    if features & SNAPSHOTS:
        assert col["snapshots"].sum() > WALKS // 2 and col["snapshots_loaded"].sum() > 0
    if features & RECONFIG:
        assert col["voter_changes"].sum() > WALKS // 10
    if features & DISK_LOSS:
        assert col["disk_losses"].sum() > WALKS // 2


RECONFIG_CONSEQUENCES = {AT_MOST_ONE_UNCOMMITTED_VOTER_SET, QUORUM_OVERLAP, ELECTION_SAFETY,
                         LEADER_COMPLETENESS, STATE_MACHINE_SAFETY, OBSERVER_CONSISTENCY}
MUTATIONS = {
    # mutation features: (the invariant that must be among those found, all it may find)
    "double-vote": (F_DOUBLE_VOTE, VOTE_UNIQUENESS, {VOTE_UNIQUENESS, ELECTION_SAFETY}),
    "commit-old-epoch": (F_COMMIT_OLD_EPOCH, COMMIT_CURRENT_EPOCH,
                         {COMMIT_CURRENT_EPOCH, STATE_MACHINE_SAFETY, LEADER_COMPLETENESS,
                          MAJORITY_REACHED_HIGH_WATERMARK}),
    # KAFKA-12619: the HW at the epoch start is all earlier epochs' entries
    "hw-at-epoch-start": (F | MUT_HW_AT_EPOCH_START, COMMIT_CURRENT_EPOCH,
                          {COMMIT_CURRENT_EPOCH, STATE_MACHINE_SAFETY, LEADER_COMPLETENESS,
                           MAJORITY_REACHED_HIGH_WATERMARK}),
    # KAFKA-10533: a crash loses entries counted towards the HW unflushed
    "no-flush-after-append": (F | MUT_NO_FLUSH_AFTER_APPEND, MAJORITY_REACHED_HIGH_WATERMARK,
                              {MAJORITY_REACHED_HIGH_WATERMARK, LEADER_COMPLETENESS,
                               STATE_MACHINE_SAFETY, HIGH_WATERMARK_MONOTONIC}),
    # KAFKA-17332: the same, for an observer the leader counts as a voter being added
    "observer-skips-flush": (F_RECONFIG | MUT_OBSERVER_SKIPS_FLUSH,
                             MAJORITY_REACHED_HIGH_WATERMARK,
                             {MAJORITY_REACHED_HIGH_WATERMARK} | RECONFIG_CONSEQUENCES),
    # KAFKA-17067: only the new property sees it (the non-voter never wins: no majority of
    # its own set holds it)
    "non-voter-candidate": (F_RECONFIG | MUT_NON_VOTER_CANDIDATE, CANDIDATE_IS_VOTER,
                            {CANDIDATE_IS_VOTER}),
    "restarted-leader": (F_RESTARTED_LEADER, LEADER_APPEND_ONLY,
                         {LEADER_APPEND_ONLY, HIGH_WATERMARK_MONOTONIC, LOG_MATCHING,
                          STATE_MACHINE_SAFETY, LEADER_COMPLETENESS,
                          MAJORITY_REACHED_HIGH_WATERMARK, ELECTION_SAFETY}),
    "snapshot-above-hw": (F_SNAPSHOTS | MUT_SNAPSHOT_ABOVE_HW, SNAPSHOT_CONSISTENT,
                          {SNAPSHOT_CONSISTENT}),
    # voter changes: the second uncommitted VotersRecord is seen first; what it leads to
    # (disjoint majorities, two leaders of an epoch, lost commits) now and then before it
    "reconfig-before-commit": (F_RECONFIG | MUT_RECONFIG_BEFORE_COMMIT,
                               AT_MOST_ONE_UNCOMMITTED_VOTER_SET, RECONFIG_CONSEQUENCES),
    "two-pending-changes": (F_RECONFIG | MUT_TWO_PENDING_CHANGES,
                            AT_MOST_ONE_UNCOMMITTED_VOTER_SET, RECONFIG_CONSEQUENCES),
    # disk loss without directory ids: the empty disk votes a second time in an epoch its
    # key voted in; or a committed entry is at once on fewer voters (by key) than a
    # majority; or a leader is elected without it
    "wiped-replica-same-id": (F_WIPED_SAME_ID, VOTE_UNIQUENESS,
                              {MAJORITY_REACHED_HIGH_WATERMARK, VOTE_UNIQUENESS,
                               LEADER_COMPLETENESS, STATE_MACHINE_SAFETY, ELECTION_SAFETY,
                               OBSERVER_CONSISTENCY, QUORUM_OVERLAP, LOG_MATCHING}),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_safety_mutation_is_found(name):
    features, main, allowed = MUTATIONS[name]
    got = found(features)
    assert sum(got.values()) > 0, f"{name}: no walk found a violation"
    assert INVARIANT_NAMES[main] in got, got
    assert set(got) <= {INVARIANT_NAMES[i] for i in allowed}, got
    # the expected invariant is the one that catches it first in most walks
    assert got.most_common(1)[0][0] == INVARIANT_NAMES[main], got


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_violation_rows_are_well_formed(name):
    """Including the step: the 1-based number of the action that caused the violation,
    also for a double vote the vote handler itself reports."""
    features, _, _ = MUTATIONS[name]
    stats, viol, _ = run(features)
    bad = viol[viol[:, 0] > 0]
    inv, step, a, b, epoch, offset = bad.T
    assert ((step >= 1) & (step <= DEPTH)).all()
    n = (RECONFIG_PARAMS if features & RECONFIG else PARAMS)[2]  # nodes
    assert ((a >= 0) & (a < n)).all() and ((b >= -1) & (b < n)).all()
    assert ((epoch >= 0) & (epoch <= PARAMS[5])).all()
    assert (offset >= -1).all()
    # a walk stops at its first violation: its step count is the violation's step
    steps = stats[viol[:, 0] > 0, 0]
    np.testing.assert_array_equal(steps, step)
