"""Safety invariants, checked after every step.

Every action changes at most one node (a delivered message's receiver, or the
node the action names). ``check_step`` therefore re-checks that node's own
invariants (``check_node``) and the ones that relate leaders to other nodes
(``check_leaders``: O(leaders x voters)); the other nodes' own invariants cannot
have changed. ``check_invariants`` checks every node and is what the FULL_CHECKS
feature runs instead; a test requires both to give identical results. Logs carry
prefix hashes, so comparing two prefixes is one integer compare; on a mismatch
the exact offset is found by a scan.

The ghost state (the leader of each epoch, the vote of each voter in each epoch,
the committed log as first established) is history the protocol never reads. It
is kept whether or not a check is enabled, so switching one check off never
changes what another sees. The first violation of a walk is kept in
``w.scal[V_*]``. Invariant ids are the bit positions of the checks in the
feature mask.
"""
from kraftwalk.vocabulary.properties import INVARIANT_ID, INVARIANT_NAMES

from ..jit import kernel

from ..state.layout import (
    CM_BY, CM_EPOCH, CM_VALUE, COMMIT_HASH, DIRTY_FROM, ENTRY_EPOCH, ENTRY_VALUE, EPOCH,
    GN_PREV_EPOCH, GN_PREV_LEADER_EPOCH, GN_PREV_LOG_END, G_COMMIT_LEN, G_LEADER, G_LEADER_HW,
    G_LEADER_HW_EPOCH, G_REACH, G_VOTE, HW, LEADER, LOG_END, GN_LOADED, GN_PREV_SNAP_END,
    LOG_START, SNAP_END, SNAP_EPOCH, START_EPOCH, LOG_HASH, PREV_HASH, P_NODES, ROLE, S_COMMITTED, S_STEPS, UP, VOTED_ID, V_EPOCH, V_INVARIANT,
    G_COMMIT_VOTERS, GN_HW_VOTERS, RESIGNED, DIR, CANDIDATE, PROSPECTIVE,
    V_NODE_A, V_NODE_B, V_OFFSET, V_STEP, T_ENTRY_COMMITTED,
)
from ..state.coverage import reach
from ..features import DISK_LOSS, FULL_CHECKS, RECONFIG, SNAPSHOTS
from ..state.log import prefix_hash
from ..state.voters import (
    is_voter, is_voters_record, majorities_intersect, majority, majority_of, view_dir, voters,
)

# Ids of the invariants, named for the checks below: their order is the registry's
# (kraftwalk.vocabulary.properties), where a new one is declared.
_ID = INVARIANT_ID
ELECTION_SAFETY = _ID["ElectionSafety"]
VOTE_UNIQUENESS = _ID["VoteUniqueness"]
LEADER_APPEND_ONLY = _ID["LeaderAppendOnly"]
EPOCH_MONOTONIC = _ID["EpochMonotonic"]
LOG_MATCHING = _ID["LogMatching"]
LEADER_COMPLETENESS = _ID["LeaderCompleteness"]
STATE_MACHINE_SAFETY = _ID["StateMachineSafety"]
HIGH_WATERMARK_VALID = _ID["HighWatermarkValid"]
HIGH_WATERMARK_MONOTONIC = _ID["HighWatermarkMonotonic"]
MAJORITY_REACHED_HIGH_WATERMARK = _ID["MajorityReachedHighWatermark"]
COMMIT_CURRENT_EPOCH = _ID["CommitCurrentEpoch"]
OBSERVER_CONSISTENCY = _ID["ObserverConsistency"]
SNAPSHOT_MONOTONIC = _ID["SnapshotMonotonic"]
SNAPSHOT_CONSISTENT = _ID["SnapshotConsistent"]
SNAPSHOT_AT_LOG_START = _ID["SnapshotAtLogStart"]
LEADER_NEVER_LOADS_SNAPSHOT = _ID["LeaderNeverLoadsSnapshot"]
AT_MOST_ONE_UNCOMMITTED_VOTER_SET = _ID["AtMostOneUncommittedVoterSet"]
QUORUM_OVERLAP = _ID["QuorumOverlap"]
CANDIDATE_IS_VOTER = _ID["CandidateIsVoter"]
LOG_EPOCHS_MONOTONIC = _ID["LogEpochsMonotonic"]
N_INVARIANTS = len(INVARIANT_NAMES)
ALL_CHECKS = (1 << N_INVARIANTS) - 1


@kernel
def report(w, invariant, a, b, epoch, offset):
    """Record a violation unless one is already recorded for this walk. Its step is the
    1-based number of the action that caused it (checks run once it is counted)."""
    if w.scal[V_INVARIANT] == 0:
        w.scal[V_INVARIANT] = invariant + 1
        w.scal[V_STEP] = w.scal[S_STEPS]
        w.scal[V_NODE_A] = a
        w.scal[V_NODE_B] = b
        w.scal[V_EPOCH] = epoch
        w.scal[V_OFFSET] = offset


@kernel
def first_mismatch(w, i, length):
    """First offset below ``length`` where node i's log differs from the committed log."""
    for k in range(length):
        if (w.log[ENTRY_EPOCH, i, k] != w.ghost[CM_EPOCH, k]
                or w.log[ENTRY_VALUE, i, k] != w.ghost[CM_VALUE, k]):
            return k
    return length


@kernel
def record_vote_granted(w, voter, candidate, epoch, checks):
    """Ghost: a (non pre-) vote was granted. Called by the vote handler itself, so a
    second vote is caught even when the voter's persisted vote is not overwritten."""
    prev = w.ghost[G_VOTE + voter, epoch]
    if prev == -1:
        w.ghost[G_VOTE + voter, epoch] = candidate
    elif prev != candidate and checks & (1 << VOTE_UNIQUENESS):
        # Reported while the action runs, before it is counted: number it as the checks do.
        w.scal[S_STEPS] += 1
        report(w, VOTE_UNIQUENESS, voter, candidate, epoch, -1)
        w.scal[S_STEPS] -= 1


@kernel
def misses_last_commit(w, vs):
    """QuorumOverlap: can a majority of voter set vs miss every majority of the set that
    last grew the committed log? (False before any commit.)"""
    prev = w.scal[G_COMMIT_VOTERS]
    return prev != 0 and not majorities_intersect(vs, prev)


@kernel
def extend_committed(w, i, upto, checks):
    """Ghost: the committed log grows to ``upto`` with node i's entries (i's HW covers
    them: i is the leader that committed them, in the voter set of its view)."""
    c = w.scal[G_COMMIT_LEN]
    by = w.node[EPOCH, i]
    if checks & RECONFIG:
        # QuorumOverlap: this commit's majority meets the previous commit's.
        vs = voters(w, i)
        if checks & (1 << QUORUM_OVERLAP) and misses_last_commit(w, vs):
            report(w, QUORUM_OVERLAP, i, -1, by, upto - 1)
        w.scal[G_COMMIT_VOTERS] = vs
    for k in range(c, upto):
        w.ghost[CM_EPOCH, k] = w.log[ENTRY_EPOCH, i, k]
        w.ghost[CM_VALUE, k] = w.log[ENTRY_VALUE, i, k]
        w.hashes[COMMIT_HASH, k] = w.hashes[LOG_HASH + i, k]
        w.ghost[CM_BY, k] = by
    for e in range(by, w.ghost.shape[1]):
        if w.ghost[G_REACH, e] < upto:
            w.ghost[G_REACH, e] = upto
    w.scal[G_COMMIT_LEN] = upto
    w.scal[S_COMMITTED] = upto
    reach(w, T_ENTRY_COMMITTED, 1)


@kernel
def check_log_matching(w, i, n):
    """Entries node i wrote this step must agree with every other log wherever the
    epochs at an offset match: same epoch at an offset => identical prefixes."""
    d = w.node[DIRTY_FROM, i]
    end_i = w.node[LOG_END, i]
    for j in range(n):
        if j == i:
            continue
        hi = min(end_i, w.node[LOG_END, j])
        for k in range(d, hi):
            if w.log[ENTRY_EPOCH, i, k] == w.log[ENTRY_EPOCH, j, k] and w.hashes[LOG_HASH + i, k] != w.hashes[LOG_HASH + j, k]:
                # locate the first differing entry for the report
                bad = k
                for q in range(k + 1):
                    if w.log[ENTRY_EPOCH, i, q] != w.log[ENTRY_EPOCH, j, q] or w.log[ENTRY_VALUE, i, q] != w.log[ENTRY_VALUE, j, q]:
                        bad = q
                        break
                report(w, LOG_MATCHING, i, j, w.log[ENTRY_EPOCH, i, k], bad)
                return


@kernel
def check_log_epochs(w, i):
    """LogEpochsMonotonic over the entries node i wrote this step: none has an epoch
    below the entry before it."""
    for k in range(max(w.node[DIRTY_FROM, i], 1), w.node[LOG_END, i]):
        if w.log[ENTRY_EPOCH, i, k] < w.log[ENTRY_EPOCH, i, k - 1]:
            report(w, LOG_EPOCHS_MONOTONIC, i, -1, w.log[ENTRY_EPOCH, i, k], k)
            return


@kernel
def check_node(w, i, checks):
    """Every invariant that concerns node i's own state (and the ghost it feeds), one
    concern after another in a fixed order (the first violation a step finds is the one
    kept). Returns True if node i's HW extended the ghost committed log."""
    voter = is_voter(w, i)
    e = w.node[EPOCH, i]
    is_leader = w.node[UP, i] == 1 and w.node[ROLE, i] == LEADER
    check_epoch_and_vote(w, i, e, voter, checks)
    if is_leader:
        check_leader_state(w, i, e, checks)
    extended = check_high_watermark(w, i, e, voter, is_leader, checks)
    if checks & SNAPSHOTS:
        check_snapshots(w, i, checks)
    if checks & RECONFIG and checks & (1 << AT_MOST_ONE_UNCOMMITTED_VOTER_SET):
        check_voter_records(w, i, e)
    # LogEpochsMonotonic and LogMatching over the entries node i wrote in this step,
    # then clear the mark.
    if w.node[DIRTY_FROM, i] < w.node[LOG_END, i]:
        if checks & (1 << LOG_EPOCHS_MONOTONIC):
            check_log_epochs(w, i)
        if checks & (1 << LOG_MATCHING):
            check_log_matching(w, i, w.scal[P_NODES])
    w.node[DIRTY_FROM, i] = w.log.shape[2]
    return extended


@kernel
def check_epoch_and_vote(w, i, e, voter, checks):
    """Epochs and votes: EpochMonotonic, VoteUniqueness and CandidateIsVoter of node i."""
    # EpochMonotonic: the (persisted) epoch never goes down, crashes included.
    if checks & (1 << EPOCH_MONOTONIC):
        if e < w.node[GN_PREV_EPOCH, i]:
            report(w, EPOCH_MONOTONIC, i, -1, e, -1)
    w.node[GN_PREV_EPOCH, i] = e

    # VoteUniqueness, from the persisted vote (the vote handler also records grants).
    if voter and w.node[VOTED_ID, i] >= 0:
        prev = w.ghost[G_VOTE + i, e]
        if prev == -1:
            w.ghost[G_VOTE + i, e] = w.node[VOTED_ID, i]
        elif prev != w.node[VOTED_ID, i] and checks & (1 << VOTE_UNIQUENESS):
            report(w, VOTE_UNIQUENESS, i, w.node[VOTED_ID, i], e, -1)

    # CandidateIsVoter: only a voter (in its own view) runs for election.
    if not voter and checks & (1 << CANDIDATE_IS_VOTER) and w.node[UP, i] == 1:
        r = w.node[ROLE, i]
        if r == CANDIDATE or r == PROSPECTIVE:
            report(w, CANDIDATE_IS_VOTER, i, -1, e, -1)


@kernel
def check_leader_state(w, i, e, checks):
    """Leader i of epoch e: ElectionSafety, LeaderAppendOnly, QuorumOverlap at its
    election, LeaderCompleteness and CommitCurrentEpoch."""
    # ElectionSafety: at most one leader per epoch, over the whole history.
    if w.ghost[G_LEADER, e] == -1:
        w.ghost[G_LEADER, e] = i
    elif w.ghost[G_LEADER, e] != i and checks & (1 << ELECTION_SAFETY):
        report(w, ELECTION_SAFETY, w.ghost[G_LEADER, e], i, e, -1)

    # LeaderAppendOnly: while leading one epoch (even across a crash), the log
    # only grows: the old prefix must still be there, unchanged.
    if w.node[GN_PREV_LEADER_EPOCH, i] == e and checks & (1 << LEADER_APPEND_ONLY):
        pe = w.node[GN_PREV_LOG_END, i]
        if w.node[LOG_END, i] < pe or (
                pe > 0 and w.hashes[LOG_HASH + i, pe - 1] != w.hashes[PREV_HASH, i]):
            off = min(pe, w.node[LOG_END, i])
            if w.node[DIRTY_FROM, i] < off:
                off = w.node[DIRTY_FROM, i]
            report(w, LEADER_APPEND_ONLY, i, -1, e, off)
    # QuorumOverlap: a new leader's electing majority meets the majority that
    # committed the latest committed entry (so it holds that entry).
    if (checks & RECONFIG and checks & (1 << QUORUM_OVERLAP)
            and w.node[GN_PREV_LEADER_EPOCH, i] != e and misses_last_commit(w, voters(w, i))):
        report(w, QUORUM_OVERLAP, i, -1, e, -1)
    w.node[GN_PREV_LEADER_EPOCH, i] = e
    w.node[GN_PREV_LOG_END, i] = w.node[LOG_END, i]
    w.hashes[PREV_HASH, i] = prefix_hash(w, i, w.node[LOG_END, i])

    check_leader_completeness(w, i, checks)

    # CommitCurrentEpoch: the HW covers an entry of the leader's own epoch.
    h = w.node[HW, i]
    if h > 0 and h <= w.node[LOG_END, i]:
        if checks & (1 << COMMIT_CURRENT_EPOCH) and w.log[ENTRY_EPOCH, i, h - 1] != e:
            report(w, COMMIT_CURRENT_EPOCH, i, -1, e, h - 1)


@kernel
def check_high_watermark(w, i, e, voter, is_leader, checks):
    """High watermarks: HighWatermarkValid, and StateMachineSafety or
    ObserverConsistency of node i's log below its HW, whose advance past the committed
    log extends it. Returns True if it did."""
    extended = False
    # HighWatermarkValid: HW <= log end.
    if w.node[HW, i] > w.node[LOG_END, i] and checks & (1 << HIGH_WATERMARK_VALID):
        report(w, HIGH_WATERMARK_VALID, i, -1, e, w.node[HW, i])

    # StateMachineSafety / ObserverConsistency: a node's log below its HW is a
    # prefix of the committed log; a voter's HW past it extends it.
    h = min(w.node[HW, i], w.node[LOG_END, i])
    if h > 0:
        c = w.scal[G_COMMIT_LEN]
        m = min(h, c)
        inv = STATE_MACHINE_SAFETY if voter else OBSERVER_CONSISTENCY
        if m > 0 and w.hashes[LOG_HASH + i, m - 1] != w.hashes[COMMIT_HASH, m - 1]:
            if checks & (1 << inv):
                report(w, inv, i, -1, e, first_mismatch(w, i, m))
        elif h > c:
            # (a leader removed from the voters still commits, and resigns at once)
            if voter or is_leader or w.node[ROLE, i] == RESIGNED:
                extend_committed(w, i, h, checks)
                extended = True
            elif checks & (1 << OBSERVER_CONSISTENCY):
                report(w, OBSERVER_CONSISTENCY, i, -1, e, c)
    return extended


@kernel
def check_voter_records(w, i, e):
    """Voter sets: AtMostOneUncommittedVoterSet of node i's log."""
    # AtMostOneUncommittedVoterSet: past the committed log, at most one VotersRecord.
    seen = 0
    for k in range(w.scal[G_COMMIT_LEN], w.node[LOG_END, i]):
        if is_voters_record(w.log[ENTRY_VALUE, i, k]):
            seen += 1
            if seen == 2:
                report(w, AT_MOST_ONE_UNCOMMITTED_VOTER_SET, i, -1, e, k)
                break


@kernel
def check_snapshots(w, i, checks):
    """The snapshot invariants of node i (KIP-630). A snapshot's content is the log
    prefix below its end (layout), so the log invariants above already see through it."""
    e = w.node[EPOCH, i]
    s = w.node[SNAP_END, i]

    # LeaderNeverLoadsSnapshot: only a follower installs a downloaded snapshot.
    if w.node[GN_LOADED, i] == LEADER + 1 and checks & (1 << LEADER_NEVER_LOADS_SNAPSHOT):
        report(w, LEADER_NEVER_LOADS_SNAPSHOT, i, -1, e, s)
    w.node[GN_LOADED, i] = 0

    # SnapshotMonotonic: a node's latest snapshot never moves back, crashes included.
    if s < w.node[GN_PREV_SNAP_END, i] and checks & (1 << SNAPSHOT_MONOTONIC):
        report(w, SNAPSHOT_MONOTONIC, i, -1, e, s)
    w.node[GN_PREV_SNAP_END, i] = s

    # SnapshotConsistent: a snapshot ending at s is the committed log up to s, and its
    # epoch is that of the committed entry at s - 1.
    if s > 0 and checks & (1 << SNAPSHOT_CONSISTENT):
        c = w.scal[G_COMMIT_LEN]
        m = min(s, c)
        if m > 0 and w.hashes[LOG_HASH + i, m - 1] != w.hashes[COMMIT_HASH, m - 1]:
            report(w, SNAPSHOT_CONSISTENT, i, -1, e, first_mismatch(w, i, m))
        elif s > c:
            report(w, SNAPSHOT_CONSISTENT, i, -1, e, c)
        elif w.node[SNAP_EPOCH, i] != w.ghost[CM_EPOCH, s - 1]:
            report(w, SNAPSHOT_CONSISTENT, i, -1, e, s - 1)

    # SnapshotAtLogStart: a running node's log starts at a snapshot it holds: at or
    # below its latest snapshot and its log end, with the epoch of the entry below it.
    start = w.node[LOG_START, i]
    if start > 0 and w.node[UP, i] == 1 and checks & (1 << SNAPSHOT_AT_LOG_START):
        if (start > s or start > w.node[LOG_END, i]
                or w.node[START_EPOCH, i] != w.log[ENTRY_EPOCH, i, start - 1]):
            report(w, SNAPSHOT_AT_LOG_START, i, -1, e, start)


@kernel
def check_leader_completeness(w, i, checks):
    """LeaderCompleteness for leader i: entries committed in earlier epochs are in its log."""
    e = w.node[EPOCH, i]
    need = w.ghost[G_REACH, e - 1] if e >= 1 else 0
    if need > 0 and checks & (1 << LEADER_COMPLETENESS):
        if (w.node[LOG_END, i] < need
                or w.hashes[LOG_HASH + i, need - 1] != w.hashes[COMMIT_HASH, need - 1]):
            off = first_mismatch(w, i, min(need, w.node[LOG_END, i]))
            report(w, LEADER_COMPLETENESS, i, -1, e, off)


@kernel
def check_majority_reached_high_watermark(w, i, checks):
    """MajorityReachedHighWatermark: a majority of leader i's voters hold the entry
    below its HW (with voter changes, of the set the HW was computed with)."""
    h = w.node[HW, i]
    if h > 0 and h <= w.node[LOG_END, i] and checks & (1 << MAJORITY_REACHED_HIGH_WATERMARK):
        n = w.scal[P_NODES]
        hh = w.hashes[LOG_HASH + i, h - 1]
        count = 0
        vs = voters(w, i)
        need = majority(w, i)
        if checks & RECONFIG:
            # the set the HW was computed with: a voter added since need not hold it
            # (a majority of the old set meets every majority of the new one)
            vs = w.node[GN_HW_VOTERS, i]
            need = majority_of(vs)
        for j in range(n):
            if not (vs >> j) & 1:
                continue
            if w.node[LOG_END, j] >= h and w.hashes[LOG_HASH + j, h - 1] == hh:
                count += 1
            elif checks & DISK_LOSS and view_dir(w, i, j) != w.node[DIR, j]:
                # the voter's key names a disk that is gone: it can neither vote nor
                # fetch again, so it cannot be part of a majority that lacks the entry
                count += 1
        if count < need:
            report(w, MAJORITY_REACHED_HIGH_WATERMARK, i, -1, w.node[EPOCH, i], h - 1)


@kernel
def check_high_watermark_monotonic(w, top, checks):
    """HighWatermarkMonotonic, as Kafka's MonotonicHighWatermark: the HW of the
    highest-epoch leader (``top``) never goes down (a stale leader of a lower epoch
    than one already seen is not compared)."""
    if w.node[HW, top] >= 0:
        e = w.node[EPOCH, top]
        if e >= w.scal[G_LEADER_HW_EPOCH]:
            if w.node[HW, top] < w.scal[G_LEADER_HW] and checks & (1 << HIGH_WATERMARK_MONOTONIC):
                report(w, HIGH_WATERMARK_MONOTONIC, top, -1, e, w.node[HW, top])
            w.scal[G_LEADER_HW] = w.node[HW, top]
            w.scal[G_LEADER_HW_EPOCH] = e


@kernel
def check_leaders(w, extended, checks):
    """The invariants that relate leaders to other nodes, leader by leader:
    LeaderCompleteness again when the committed log just grew, then
    MajorityReachedHighWatermark; last HighWatermarkMonotonic for the highest-epoch
    leader."""
    top = -1
    for i in range(w.scal[P_NODES]):
        if w.node[UP, i] == 0 or w.node[ROLE, i] != LEADER:
            continue
        if top == -1 or w.node[EPOCH, i] > w.node[EPOCH, top]:
            top = i
        if extended:
            check_leader_completeness(w, i, checks)
        check_majority_reached_high_watermark(w, i, checks)
    if top >= 0:
        check_high_watermark_monotonic(w, top, checks)


@kernel
def check_invariants(w, checks):
    """Check every enabled invariant on every node (``checks`` is a compile-time mask)."""
    extended = False
    for i in range(w.scal[P_NODES]):
        if check_node(w, i, checks):
            extended = True
    check_leaders(w, extended, checks)
    return w.scal[V_INVARIANT] != 0


@kernel
def check_step(w, touched, checks):
    """The same verdicts as ``check_invariants`` after a step that changed only node
    ``touched`` (every action changes at most one node; -1: only the network):
    the other nodes' own invariants cannot have changed."""
    if touched < 0:
        return w.scal[V_INVARIANT] != 0
    extended = check_node(w, touched, checks)
    check_leaders(w, extended, checks)
    return w.scal[V_INVARIANT] != 0


@kernel
def check_after_step(w, touched, checks):
    """The checks a step owes: the touched node's (the fast path), or every node's
    when FULL_CHECKS is on. True once the walk has a violation."""
    if checks & FULL_CHECKS:
        return check_invariants(w, checks)
    return check_step(w, touched, checks)
