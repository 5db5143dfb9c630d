"""Differential test: the Numba kernels against the plain-Python reference model.

For each configuration, walks are recorded by the kernel's own scheduler
(``record_walk``, swarm weights), then every recorded action is applied to a
fresh kernel walk (``apply_and_check``) and to a fresh ``ReferenceCluster``.
After EVERY step the two must agree on:

* enabledness (the kernel's -1) and the checker verdict (the first violated
  invariant so far, and at which step);
* the whole canonical snapshot: every node's role, epoch, vote, leader, log,
  HW, role state and links, the in-flight messages in slot order, the id
  counters, the statistics and the ghost committed log.

Every few steps, enabledness is also probed beyond the trace: every action
family on every node (and out-of-range ones), every in-flight message with its
right and a wrong fingerprint, partitions -- the kernel on a copy of its walk.

Which walks: the first ``PLAIN`` walks of the configuration, plus (found by a
cheap scan of the recorded walks) some that end in a violation or at a bound,
so verdicts and bounds are compared too, not only quiet walks.

The reference model follows Kafka where it believes the kernel is wrong
(``kraftwalk.reference.deviations``); a failure here is either a bug in one of
the two or a new disagreement to put on record there.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from kraftwalk.kernels.properties.checkers import (
    ALL_CHECKS, AT_MOST_ONE_UNCOMMITTED_VOTER_SET, COMMIT_CURRENT_EPOCH, INVARIANT_NAMES,
    LEADER_APPEND_ONLY, VOTE_UNIQUENESS,
)
from kraftwalk.kernels.features import (
    DISK_LOSS, MUT_COMMIT_OLD_EPOCH, MUT_DOUBLE_VOTE, MUT_HW_AT_EPOCH_START,
    MUT_LEADER_LOADS_SNAPSHOT, MUT_NO_FLUSH_AFTER_APPEND, MUT_NON_VOTER_CANDIDATE,
    MUT_OBSERVER_SKIPS_FLUSH,
    MUT_RESTARTED_LEADER, MUT_RECONFIG_BEFORE_COMMIT, MUT_SNAPSHOT_ABOVE_HW,
    KAFKA_17030, KAFKA_17642, MUT_TWO_PENDING_CHANGES, MUT_WIPED_SAME_ID, PRE_VOTE, RECONFIG, SNAPSHOTS,
)
from kraftwalk.kernels.state.layout import (
    BOUND_EPOCH, BOUND_LOG, BOUND_NAMES, BOUND_NONE, BOUND_STUCK, REACHED, S_BOUND_HIT,
    S_DISK_LOSSES, S_SNAPSHOTS_LOADED, S_VOTER_CHANGES, STATS_BASE, TARGET_NAMES,
    T_WIPED_VOTER_READDED, V_STEP, make_params,
)
from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS, with_feature_weights
from kraftwalk.kernels.transition import (
    FAM_CHECK_QUORUM, FAM_CLIENT_APPEND, FAM_CRASH, FAM_DELIVER, FAM_DUPLICATE, FAM_FLUSH, FAM_LOSE,
    FAM_PARTITION, FAM_RESIGN, FAM_RESTART, FAM_TIMEOUT, FAMILY_NAMES, N_FAMILIES,
    FAM_CLEAN, FAM_DISK_LOSS, FAM_SNAPSHOT, TARGET_FAMILIES,
)
from kraftwalk.kernels.drivers.trace import apply_and_check, new_walk, record_walk
from kraftwalk.reference import ReferenceCluster
from kraftwalk.reference.canonical import diff
from kraftwalk.reference.encoding import message_fingerprint
from kraftwalk.reference.from_kernel import kernel_snapshot

# The feature masks of the kernel tests (tests/kernels/conftest.py): each distinct mask
# is a Numba compile, so the suites share them.
F = PRE_VOTE | KAFKA_17642 | KAFKA_17030 | ALL_CHECKS  # Kafka 4.0 and later
F_NOPV = ALL_CHECKS                         # Kafka 3.9.0
F_DOUBLE_VOTE = F | MUT_DOUBLE_VOTE
F_COMMIT_OLD_EPOCH = F | MUT_COMMIT_OLD_EPOCH
F_RESTARTED_LEADER = F | MUT_RESTARTED_LEADER
F_SNAPSHOTS = F | SNAPSHOTS
F_RECONFIG = F | RECONFIG
F_DISK_LOSS = F | DISK_LOSS

MASTER_SEED = 20240601
DEPTH = 200


def _params(voters, observers, log_capacity=16, msg_slots=16, max_epoch=20, max_records=4,
            snapshots=False):
    return make_params(voters, observers, log_capacity, msg_slots, max_epoch, max_records, DEPTH,
                       snapshots)


def weights_for(features):
    """The swarm's base weights, with the families of the features that are on weighed."""
    on = [name for name, bit in (("snapshots", SNAPSHOTS), ("reconfig", RECONFIG),
                                 ("disk_loss", DISK_LOSS))
          if features & bit]
    return with_feature_weights(DEFAULT_WEIGHTS, on)


# name -> (params, features, what the selected walks must include)
CONFIGS = {
    "3v1o-prevote": (_params(3, 1), F, {}),
    "5v0o-no-prevote": (_params(5, 0), F_NOPV, {}),
    "1v1o": (_params(1, 1), F, {}),
    # small log and network, low max epoch: every bound is hit
    "3v2o-tight": (_params(3, 2, log_capacity=6, msg_slots=4, max_epoch=5), F,
                   {"bounds": {BOUND_EPOCH, BOUND_LOG}}),
    "double-vote": (_params(3, 1), F_DOUBLE_VOTE, {"violations": {"VoteUniqueness"}}),
    "commit-old-epoch": (_params(3, 1), F_COMMIT_OLD_EPOCH,
                         {"violations": {"CommitCurrentEpoch"}}),
    "restarted-leader": (_params(3, 1), F_RESTARTED_LEADER,
                         {"violations": {"LeaderAppendOnly"}}),
    "hw-at-epoch-start": (_params(3, 1), F | MUT_HW_AT_EPOCH_START,
                          {"violations": {"CommitCurrentEpoch"}}),
    "no-flush-after-append": (_params(3, 1), F | MUT_NO_FLUSH_AFTER_APPEND,
                              {"violations": {"MajorityReachedHighWatermark"}}),
    # (one voter adding two: the voters added vote before they know they are voters)
    "non-voter-candidate": (_params(1, 2), F_RECONFIG | MUT_NON_VOTER_CANDIDATE,
                            {"violations": {"CandidateIsVoter"}}),
    # snapshots: taken, cleaned, downloaded by lagging followers, restored on restart
    "3v1o-snapshots": (_params(3, 1, snapshots=True), F_SNAPSHOTS,
                       {"stats": {"snapshots", "snapshots_loaded"}}),
    # voter changes: observers added, voters removed, a leader removing itself
    # (from Kafka 4.0 a restart can elect a second leader of an epoch once voter changes
    # leave a node alone in its view: results/findings/kafka-17642-restart-as-candidate.md)
    "3v2o-reconfig": (_params(3, 2), F_RECONFIG, {"stats": {"voter_changes"},
                                                  "may": {"ElectionSafety"}}),
    "3v2o-reconfig-kafka-3.9": (_params(3, 2), F_RECONFIG & ~(KAFKA_17642 | KAFKA_17030),
                                {"stats": {"voter_changes"}}),
    # disk loss with directory ids: wiped nodes restart as observers under a new key, and
    # voter changes remove the old key and add the new one
    "3v2o-reconfig-disk-loss": (_params(3, 2), F_RECONFIG | DISK_LOSS,
                                {"stats": {"voter_changes", "disk_losses"},
                                 "targets": {"DiskLost", "WipedVoterReadded"},
                                 "may": {"ElectionSafety"}}),
}

# Long suite only (three more masks to compile): each mutation with the check that catches
# it first switched off, so that deeper invariants fire and their verdicts are compared
# too (ElectionSafety, LogMatching, HighWatermarkMonotonic, ...).
DEEP_CONFIGS = {
    "double-vote-deep": (_params(3, 1), F_DOUBLE_VOTE ^ (1 << VOTE_UNIQUENESS), {}),
    "commit-old-epoch-deep": (_params(3, 1), F_COMMIT_OLD_EPOCH ^ (1 << COMMIT_CURRENT_EPOCH),
                              {}),
    "restarted-leader-deep": (_params(3, 1), F_RESTARTED_LEADER ^ (1 << LEADER_APPEND_ONLY), {}),
    "5v1o-snapshots-tight": (_params(5, 1, log_capacity=8, msg_slots=6, snapshots=True),
                             F_SNAPSHOTS, {}),
    "snapshot-above-hw": (_params(3, 1, snapshots=True), F_SNAPSHOTS | MUT_SNAPSHOT_ABOVE_HW, {}),
    "leader-loads-snapshot": (_params(3, 1, snapshots=True),
                              F_SNAPSHOTS | MUT_LEADER_LOADS_SNAPSHOT, {}),
    "4v1o-reconfig-snapshots": (_params(4, 1, snapshots=True), F_SNAPSHOTS | RECONFIG, {}),
    "reconfig-before-commit": (_params(3, 2), F_RECONFIG | MUT_RECONFIG_BEFORE_COMMIT, {}),
    "observer-skips-flush": (_params(3, 2), F_RECONFIG | MUT_OBSERVER_SKIPS_FLUSH, {}),
    "two-pending-changes-deep": (_params(3, 2), (F_RECONFIG | MUT_TWO_PENDING_CHANGES)
                                 ^ (1 << AT_MOST_ONE_UNCOMMITTED_VOTER_SET), {}),
    # disk loss without voter changes: a wiped voter is an observer for good
    "3v1o-disk-loss": (_params(3, 1), F_DISK_LOSS, {}),
    "wiped-replica-same-id": (_params(3, 1), F_DISK_LOSS | MUT_WIPED_SAME_ID, {}),
}

PLAIN = int(os.environ.get("KRAFTWALK_DIFF_WALKS", 50))   # first walks of each config
SCAN = 400              # walks scanned for violations and bounds
EXTRA = 8               # of those, how many violating / bound-hitting walks to add
PROBE_EVERY = 16        # probe enabledness every this many steps
# coverage targets that few walks reach (a wiped voter added back: about 1 walk in 700),
# looked for in up to RARE_SCAN walks when the scan found none
RARE_TARGETS = 1 << T_WIPED_VOTER_READDED
RARE_SCAN = 5000
LONG_WALKS = int(os.environ.get("KRAFTWALK_DIFF_LONG_WALKS", 1000))

NODE_FAMILIES = (FAM_TIMEOUT, FAM_CLIENT_APPEND, FAM_FLUSH, FAM_CHECK_QUORUM, FAM_RESIGN,
                 FAM_CRASH, FAM_RESTART, FAM_SNAPSHOT, FAM_CLEAN, FAM_DISK_LOSS)
MESSAGE_FAMILIES = (FAM_DELIVER, FAM_LOSE, FAM_DUPLICATE)


# ---- helpers ----------------------------------------------------------------------------
def fmt(action) -> str:
    f, a, b = (int(x) for x in action)
    if f in MESSAGE_FAMILIES:
        return f"{FAMILY_NAMES[f]}(slot {a}, fingerprint {b:#x})"
    if f in TARGET_FAMILIES:
        return f"{FAMILY_NAMES[f]}({a} -> {b})"
    if f == FAM_PARTITION:
        return f"partition(kind {a}, r {b:#x})"
    return f"{FAMILY_NAMES[f]}({a})"


def verdict(code: int) -> str:
    return {-1: "not enabled", 0: "no violation"}.get(code, f"{INVARIANT_NAMES[code - 1]}")


class Mismatch(AssertionError):
    pass


def mismatch(where, t, action, actions, text) -> Mismatch:
    recent = ", ".join(fmt(a) for a in actions[max(0, t - 8):t])
    return Mismatch(f"{where}: step {t} (1-based {t + 1}) action {fmt(action)}\n{text}\n"
                    f"  previous actions: {recent}")


def copy_walk(w):
    return type(w)(*(a.copy() for a in w))


def probe_actions(ref, rng):
    """Actions to test for enabledness now: every family on every node and beyond, every
    message with its fingerprint and with a wrong one, a few partitions."""
    n = ref.params.nodes
    out = [(f, a, 0) for f in NODE_FAMILIES for a in range(-1, n + 1)]
    out += [(f, a, b) for f in TARGET_FAMILIES for a in range(n) for b in range(-1, n + 1)]
    msgs = ref.net.messages
    for f in MESSAGE_FAMILIES:
        for k, m in enumerate(msgs):
            fp = message_fingerprint(m)
            out += [(f, k, fp), (f, k, fp ^ 1)]
        if msgs:  # a stale slot, the fingerprint of message 0: found by content
            out.append((f, len(msgs), message_fingerprint(msgs[0])))
        out.append((f, 0, 12345))
    out += [(FAM_PARTITION, kind, int(rng.integers(0, 1 << 30))) for kind in range(-1, 5)]
    out.append((N_FAMILIES, 0, 0))
    return out


def probe_enabledness(w, ref, features, rng, where, t, actions):
    for act in probe_actions(ref, rng):
        k = apply_and_check(copy_walk(w), act, features) != -1
        r = ref.enabled(act)
        if k != r:
            raise mismatch(where, t, act, actions,
                           f"  probing enabledness before it: kernel {k}, reference {r}")


def compare_walk(name, params, features, walk_index, probe=True):
    """Replay one recorded walk on both models, comparing after every step. Returns
    (steps compared, the kernel's final verdict code, the bound that ended it)."""
    where = f"{name} walk {walk_index}"
    actions, stats, viol, _, _ = record_walk(MASTER_SEED, walk_index, params,
                                              weights_for(features), True, features)
    actions = [tuple(int(x) for x in a) for a in actions]
    w = new_walk(params)
    ref = ReferenceCluster(params, features)
    rng = np.random.default_rng(walk_index)
    assert kernel_snapshot(w) == ref.snapshot(), diff(kernel_snapshot(w), ref.snapshot())
    code = 0
    for t, act in enumerate(actions):
        if probe and t % PROBE_EVERY == 0:
            probe_enabledness(w, ref, features, rng, where, t, actions)
        code = apply_and_check(w, act, features)
        rcode = ref.apply_and_check(act)
        if code != rcode:
            raise mismatch(where, t, act, actions,
                           f"  kernel: {verdict(code)}   reference: {verdict(rcode)}"
                           f"   (reference violation: {ref.violation})\n"
                           + "\n".join("  " + d for d in diff(kernel_snapshot(w), ref.snapshot())))
        ks, rs = kernel_snapshot(w), ref.snapshot()
        if ks != rs:
            raise mismatch(where, t, act, actions,
                           "  snapshots differ (kernel != reference):\n"
                           + "\n".join("  " + d for d in diff(ks, rs)))
        if code > 0:
            assert int(w.scal[V_STEP]) == ref.violation.step == t + 1, (
                f"{where}: {verdict(code)} numbered step {int(w.scal[V_STEP])} by the kernel, "
                f"{ref.violation.step} by the reference, applied as step {t + 1}")
            break
    # the replay ended where the recording did, with the same verdict and statistics
    assert int(viol[0]) == code, f"{where}: recorded {viol.tolist()}, replayed {code}"
    reached = {name for t, name in enumerate(TARGET_NAMES) if int(w.scal[REACHED]) >> t & 1}
    bound = int(w.scal[S_BOUND_HIT])
    recorded_bound = int(stats[S_BOUND_HIT - STATS_BASE])
    # (a recording also ends 'stuck' when nothing is enabled; a replay never says so)
    if recorded_bound == BOUND_STUCK:
        recorded_bound = BOUND_NONE
    assert bound == ref.bound_hit == recorded_bound
    return len(actions), code, bound, ref.stats, reached


def select_walks(params, features):
    """The first PLAIN walks, plus violating and bound-hitting ones from a scan (and, with
    snapshots on, ones in which a follower installed a downloaded snapshot; with voter
    changes on, ones that changed voters; with disk loss on, ones that lost a disk, and
    any that reached one of RARE_TARGETS)."""
    chosen = list(range(PLAIN))
    violating, bounded, loaded, rare = [], [], [], []
    for i in range(PLAIN, PLAIN + SCAN):
        _, stats, viol, _, w = record_walk(MASTER_SEED, i, params, weights_for(features), True,
                                           features)
        if int(w.scal[REACHED]) & RARE_TARGETS and len(rare) < EXTRA:
            rare.append(i)
        elif viol[0] and len(violating) < EXTRA:
            violating.append(i)
        elif stats[S_BOUND_HIT - STATS_BASE] in (BOUND_EPOCH, BOUND_LOG) and len(bounded) < EXTRA:
            bounded.append(i)
        elif (stats[S_SNAPSHOTS_LOADED - STATS_BASE] > 0
              or stats[S_VOTER_CHANGES - STATS_BASE] > 1
              or stats[S_DISK_LOSSES - STATS_BASE] > 1) and len(loaded) < EXTRA:
            loaded.append(i)
    if features & DISK_LOSS and features & RECONFIG:
        i = PLAIN + SCAN
        while not rare and i < PLAIN + RARE_SCAN:
            w = record_walk(MASTER_SEED, i, params, weights_for(features), True, features)[4]
            if int(w.scal[REACHED]) & RARE_TARGETS:
                rare.append(i)
            i += 1
    return chosen + violating + bounded + loaded + rare


# ---- tests ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(CONFIGS))
def test_kernel_and_reference_agree(name, capsys):
    params, features, expect = CONFIGS[name]
    steps = 0
    seen_violations, seen_bounds, seen_stats, seen_targets = set(), set(), set(), set()
    for i in select_walks(params, features):
        n, code, bound, stats, reached = compare_walk(name, params, features, i,
                                                      probe=i < PLAIN)
        seen_stats |= {k for k, v in stats.items() if v}
        seen_targets |= reached
        steps += n
        if code > 0:
            seen_violations.add(INVARIANT_NAMES[code - 1])
        seen_bounds.add(bound)
    with capsys.disabled():
        print(f"\n[differential] {name}: {steps} steps compared")
    # the comparison must not be vacuous: the walks reached what the config is about
    assert steps > 20 * PLAIN
    assert expect.get("violations", set()) <= seen_violations, (name, seen_violations)
    assert expect.get("bounds", set()) <= seen_bounds, (
        name, [BOUND_NAMES[b] for b in seen_bounds])
    assert expect.get("stats", set()) <= seen_stats, (name, seen_stats)
    assert expect.get("targets", set()) <= seen_targets, (name, seen_targets)
    if not expect.get("violations"):
        broke = seen_violations - expect.get("may", set())
        assert not broke, f"{name}: the unmutated protocol broke {broke}"


@pytest.mark.parametrize("features", [F, F_RECONFIG])
def test_disk_loss_needs_its_feature(features):
    """A replayed disk_loss action is not enabled in a walk without disk loss (its family
    exists once voter changes are on, and a foreign trace may name it in any walk)."""
    params = CONFIGS["3v1o-prevote"][0]
    ref = ReferenceCluster(params, features)
    assert not ref.enabled((FAM_DISK_LOSS, 0, 0))
    assert apply_and_check(new_walk(params), (FAM_DISK_LOSS, 0, 0), features) == -1


@pytest.mark.long
@pytest.mark.parametrize("name", list(CONFIGS) + list(DEEP_CONFIGS))
def test_kernel_and_reference_agree_long(name, capsys):
    params, features, _ = {**CONFIGS, **DEEP_CONFIGS}[name]
    steps = walks = 0
    verdicts: dict[str, int] = {}
    bounds: dict[str, int] = {}
    for i in range(LONG_WALKS):
        n, code, bound, _, _ = compare_walk(name, params, features, i, probe=i % 10 == 0)
        steps += n
        walks += 1
        verdicts[verdict(code)] = verdicts.get(verdict(code), 0) + 1
        bounds[BOUND_NAMES[bound]] = bounds.get(BOUND_NAMES[bound], 0) + 1
    with capsys.disabled():
        print(f"\n[differential] {name}: {walks} walks, {steps} steps compared; "
              f"verdicts {verdicts}; bounds {bounds}")
