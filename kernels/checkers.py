"""Safety invariants, checked after every step.

``check_invariants`` runs every enabled check and records the first violation
in ``w.viol``. Each check costs O(N) per step (LogMatching: O(N) per entry
written this step) because logs carry prefix hashes: comparing two prefixes is
one integer compare, and on a hash mismatch the exact offset is found by a scan.

The ghost state (the leader of each epoch, the vote of each voter in each
epoch, the committed log as first established) is history the protocol never
reads. It is maintained whether or not a check is enabled, so that switching a
check off never changes what another check sees.

Invariant ids are the bit positions of the checks in the feature mask.
"""
import numpy as np
from .jit import kernel

from .layout import (
    G_COMMIT_LEN, G_LEADER_HW, G_LEADER_HW_EPOCH, GN_PREV_EPOCH, GN_PREV_LEADER_EPOCH,
    GN_PREV_LOG_END, LEADER, P_MAJORITY, P_NODES, P_VOTERS, S_COMMITTED, V_EPOCH,
    V_INVARIANT, V_NODE_A, V_NODE_B, V_OFFSET, V_STEP, S_STEPS,
)
from .log import prefix_hash

ELECTION_SAFETY = 0
VOTE_UNIQUENESS = 1
LEADER_APPEND_ONLY = 2
EPOCH_MONOTONIC = 3
LOG_MATCHING = 4
LEADER_COMPLETENESS = 5
STATE_MACHINE_SAFETY = 6
HIGH_WATERMARK_VALID = 7
HIGH_WATERMARK_MONOTONIC = 8
MAJORITY_REACHED_HIGH_WATERMARK = 9
COMMIT_CURRENT_EPOCH = 10
OBSERVER_CONSISTENCY = 11
N_INVARIANTS = 12
ALL_CHECKS = (1 << N_INVARIANTS) - 1

INVARIANT_NAMES = (
    "ElectionSafety", "VoteUniqueness", "LeaderAppendOnly", "EpochMonotonic",
    "LogMatching", "LeaderCompleteness", "StateMachineSafety", "HighWatermarkValid",
    "HighWatermarkMonotonic", "MajorityReachedHighWatermark", "CommitCurrentEpoch",
    "ObserverConsistency",
)


@kernel
def report(w, invariant, a, b, epoch, offset):
    """Record a violation unless one is already recorded for this walk."""
    if w.viol[V_INVARIANT] == 0:
        w.viol[V_INVARIANT] = invariant + 1
        w.viol[V_STEP] = w.stats[S_STEPS]
        w.viol[V_NODE_A] = a
        w.viol[V_NODE_B] = b
        w.viol[V_EPOCH] = epoch
        w.viol[V_OFFSET] = offset


@kernel
def first_mismatch(w, i, cmp_epoch, cmp_value, length):
    """First offset below ``length`` where node i's log differs from (cmp_epoch, cmp_value)."""
    for k in range(length):
        if w.log_epoch[i, k] != cmp_epoch[k] or w.log_value[i, k] != cmp_value[k]:
            return k
    return length


@kernel
def record_vote_granted(w, voter, candidate, epoch, checks):
    """Ghost: a (non pre-) vote was granted. Called by the vote handler itself, so a
    second vote is caught even when the voter's persisted vote is not overwritten."""
    prev = w.g_vote[voter, epoch]
    if prev == -1:
        w.g_vote[voter, epoch] = candidate
    elif prev != candidate and checks & (1 << VOTE_UNIQUENESS):
        report(w, VOTE_UNIQUENESS, voter, candidate, epoch, -1)


@kernel
def extend_committed(w, i, upto):
    """Ghost: the committed log grows to ``upto`` with node i's entries (i's HW covers them)."""
    c = w.g_scalar[G_COMMIT_LEN]
    by = w.epoch[i]
    for k in range(c, upto):
        w.g_commit_epoch[k] = w.log_epoch[i, k]
        w.g_commit_value[k] = w.log_value[i, k]
        w.g_commit_hash[k] = w.log_hash[i, k]
        w.g_commit_by[k] = by
    for e in range(by, w.g_reach.shape[0]):
        if w.g_reach[e] < upto:
            w.g_reach[e] = upto
    w.g_scalar[G_COMMIT_LEN] = upto
    w.stats[S_COMMITTED] = upto


@kernel
def check_log_matching(w, i, n):
    """Entries node i wrote this step must agree with every other log wherever the
    epochs at an offset match: same epoch at an offset => identical prefixes."""
    d = w.dirty_from[i]
    end_i = w.log_end[i]
    for j in range(n):
        if j == i:
            continue
        hi = min(end_i, w.log_end[j])
        for k in range(d, hi):
            if w.log_epoch[i, k] == w.log_epoch[j, k] and w.log_hash[i, k] != w.log_hash[j, k]:
                # locate the first differing entry for the report
                bad = k
                for q in range(k + 1):
                    if w.log_epoch[i, q] != w.log_epoch[j, q] or w.log_value[i, q] != w.log_value[j, q]:
                        bad = q
                        break
                report(w, LOG_MATCHING, i, j, w.log_epoch[i, k], bad)
                return


@kernel
def check_invariants(w, checks):
    """Check every enabled invariant (``checks`` is a compile-time bitmask)."""
    n = w.params[P_NODES]
    v = w.params[P_VOTERS]
    majority = w.params[P_MAJORITY]

    top_leader = -1
    for i in range(n):
        e = w.epoch[i]
        is_leader = w.up[i] == 1 and w.role[i] == LEADER

        # EpochMonotonic: the (persisted) epoch never goes down, crashes included.
        if checks & (1 << EPOCH_MONOTONIC):
            if e < w.g_node[i, GN_PREV_EPOCH]:
                report(w, EPOCH_MONOTONIC, i, -1, e, -1)
        w.g_node[i, GN_PREV_EPOCH] = e

        # VoteUniqueness, from the persisted vote (the handler also records grants).
        if i < v and w.voted_id[i] >= 0:
            prev = w.g_vote[i, e]
            if prev == -1:
                w.g_vote[i, e] = w.voted_id[i]
            elif prev != w.voted_id[i] and checks & (1 << VOTE_UNIQUENESS):
                report(w, VOTE_UNIQUENESS, i, w.voted_id[i], e, -1)

        if is_leader:
            # ElectionSafety: at most one leader per epoch, over the whole history.
            if w.g_leader[e] == -1:
                w.g_leader[e] = i
            elif w.g_leader[e] != i and checks & (1 << ELECTION_SAFETY):
                report(w, ELECTION_SAFETY, w.g_leader[e], i, e, -1)
            if top_leader == -1 or e > w.epoch[top_leader]:
                top_leader = i

            # LeaderAppendOnly: while leading one epoch (even across a crash), the log
            # only grows: the old prefix must still be there, unchanged.
            if w.g_node[i, GN_PREV_LEADER_EPOCH] == e and checks & (1 << LEADER_APPEND_ONLY):
                pe = w.g_node[i, GN_PREV_LOG_END]
                if w.log_end[i] < pe or (pe > 0 and w.log_hash[i, pe - 1] != w.g_prev_hash[i]):
                    off = min(pe, w.log_end[i])
                    if w.dirty_from[i] < off:
                        off = w.dirty_from[i]
                    report(w, LEADER_APPEND_ONLY, i, -1, e, off)
            w.g_node[i, GN_PREV_LEADER_EPOCH] = e
            w.g_node[i, GN_PREV_LOG_END] = w.log_end[i]
            w.g_prev_hash[i] = prefix_hash(w, i, w.log_end[i])

            # LeaderCompleteness: entries committed in earlier epochs are in this log.
            need = w.g_reach[e - 1] if e >= 1 else 0
            if need > 0 and checks & (1 << LEADER_COMPLETENESS):
                if w.log_end[i] < need or w.log_hash[i, need - 1] != w.g_commit_hash[need - 1]:
                    off = first_mismatch(w, i, w.g_commit_epoch, w.g_commit_value, min(need, w.log_end[i]))
                    report(w, LEADER_COMPLETENESS, i, -1, e, off)

            h = w.hw[i]
            if h > 0 and h <= w.log_end[i]:
                # CommitCurrentEpoch: the HW covers an entry of the leader's own epoch.
                if checks & (1 << COMMIT_CURRENT_EPOCH) and w.log_epoch[i, h - 1] != e:
                    report(w, COMMIT_CURRENT_EPOCH, i, -1, e, h - 1)
                # MajorityReachedHighWatermark: a majority of voters hold [0, HW).
                if checks & (1 << MAJORITY_REACHED_HIGH_WATERMARK):
                    hh = w.log_hash[i, h - 1]
                    count = 0
                    for j in range(v):
                        if w.log_end[j] >= h and w.log_hash[j, h - 1] == hh:
                            count += 1
                    if count < majority:
                        report(w, MAJORITY_REACHED_HIGH_WATERMARK, i, -1, e, h - 1)

        # HighWatermarkValid: HW <= log end.
        if w.hw[i] > w.log_end[i] and checks & (1 << HIGH_WATERMARK_VALID):
            report(w, HIGH_WATERMARK_VALID, i, -1, e, w.hw[i])

        # StateMachineSafety / ObserverConsistency: a node's log below its HW is a
        # prefix of the committed log; a voter's HW past it extends it.
        h = min(w.hw[i], w.log_end[i])
        if h > 0:
            c = w.g_scalar[G_COMMIT_LEN]
            m = min(h, c)
            inv = STATE_MACHINE_SAFETY if i < v else OBSERVER_CONSISTENCY
            if m > 0 and w.log_hash[i, m - 1] != w.g_commit_hash[m - 1]:
                if checks & (1 << inv):
                    off = first_mismatch(w, i, w.g_commit_epoch, w.g_commit_value, m)
                    report(w, inv, i, -1, e, off)
            elif h > c:
                if i < v:
                    extend_committed(w, i, h)
                elif checks & (1 << OBSERVER_CONSISTENCY):
                    report(w, OBSERVER_CONSISTENCY, i, -1, e, c)

    # HighWatermarkMonotonic, as Kafka's MonotonicHighWatermark: the HW of the
    # highest-epoch leader never goes down (a stale leader of a lower epoch than
    # one already seen is not compared).
    if top_leader >= 0 and w.hw[top_leader] >= 0:
        e = w.epoch[top_leader]
        if e >= w.g_scalar[G_LEADER_HW_EPOCH]:
            if w.hw[top_leader] < w.g_scalar[G_LEADER_HW] and checks & (1 << HIGH_WATERMARK_MONOTONIC):
                report(w, HIGH_WATERMARK_MONOTONIC, top_leader, -1, e, w.hw[top_leader])
            w.g_scalar[G_LEADER_HW] = w.hw[top_leader]
            w.g_scalar[G_LEADER_HW_EPOCH] = e

    # LogMatching over the entries written in this step, then clear the marks.
    cap = w.log_epoch.shape[1]
    for i in range(n):
        if w.dirty_from[i] < w.log_end[i] and checks & (1 << LOG_MATCHING):
            check_log_matching(w, i, n)
        w.dirty_from[i] = cap
    return w.viol[V_INVARIANT] != 0
