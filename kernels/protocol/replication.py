"""Pull replication, the high watermark and check-quorum, after KafkaRaftClient and LeaderState.

Followers send Fetch(fetchOffset = log end, lastFetchedEpoch); the leader answers
with records, or a diverging epoch the follower truncates to. The leader's HW is
the offset a majority of voters has reached (followers' fetch offsets, its own
end offset as of its last flush) and moves only past its epochStartOffset.
"""
from ..jit import kernel

from ..features import (
    DISK_LOSS, MUT_COMMIT_OLD_EPOCH, MUT_HW_AT_EPOCH_START, MUT_NO_CHECK_QUORUM,
    MUT_NO_FETCH_TIMER_RESET, MUT_NO_FLUSH_AFTER_APPEND, MUT_OBSERVER_SKIPS_FLUSH, RECONFIG,
    SNAPSHOTS,
)
from ..state.layout import (
    ACKED_MASK, C_NEXT_CORR, P_NODES, C_NEXT_VALUE, ENTRY_EPOCH, ENTRY_VALUE, EPOCH, EPOCH_START,
    ERR_NONE, FETCH_REQUEST, FETCH_RESPONSE, FLUSHED_END, FOLLOWER, F_BASE_OFFSET, F_CORR,
    F_DIVERGING_END, F_DIVERGING_EPOCH, F_DST, F_EPOCH, F_ERROR, F_FETCH_OFFSET, F_HW,
    F_LAST_FETCHED_EPOCH, F_LEADER, F_N_RECORDS, F_RECORDS, F_SRC, HAS_FETCHED, HW, INFLIGHT,
    LEADER, LEADER_ID, LOG_END, P_MAX_RECORDS, REPLICA_END, ROLE,
    S_CLIENT_APPENDS, S_TRUNCATIONS, UP, T_CHECK_QUORUM_RESIGNED, T_FOLLOWER_TRUNCATED,
    I_FETCH_RESET, FETCHING_END, FETCHING_EPOCH, F_SNAPSHOT_END, F_SNAPSHOT_EPOCH, LOG_START,
    SNAP_END, SNAP_EPOCH, START_EPOCH, T_REMOVED_LEADER_RESIGNED, VOTERS_AT, GN_HW_VOTERS,
    DIR, F_REPLICA_DIR, REPLICA_DIR, INTENT_ARG, I_FETCHED,
)
from ..state.coverage import reach
from ..state.log import append_entry, end_offset_for_epoch, flush, last_epoch, truncate_to
from ..state.network import new_message
from .quorum_state import (
    accept_response, intend, reset_connections, transition_to_resigned, update_check_quorum_for_following_voter,
    validate_leader_only_request,
)
from .snapshots import fetch_needs_snapshot
from ..state.voters import (
    checks_quorum, is_voter, key_matches, majority, other_voters, view_dir, voters,
)


# ---------------------------------------------------------------- follower side
@kernel
def send_fetch_request(w, i, target):
    """buildFetchRequest: fetchOffset = log end, lastFetchedEpoch = last entry's epoch.
    One Fetch is pending at a time (RequestManager.hasAnyInflightRequest): a new one,
    to any node, means the one before timed out, and its answer is no longer expected."""
    k = new_message(w, FETCH_REQUEST, i, target, w.node[EPOCH, i])
    reset_connections(w, i)
    w.scal[C_NEXT_CORR] += 1
    w.peer[INFLIGHT, i, target] = w.scal[C_NEXT_CORR]
    if k < 0:
        return
    m = w.msgs[k]
    m[F_CORR] = w.scal[C_NEXT_CORR]
    m[F_FETCH_OFFSET] = w.node[LOG_END, i]
    m[F_LAST_FETCHED_EPOCH] = last_epoch(w, i)
    m[F_REPLICA_DIR] = w.node[DIR, i]


@kernel
def truncate_to_end_offset(w, i, div_epoch, div_end, features):
    """RaftLog.truncateToEndOffset for a diverging epoch from the leader."""
    if div_epoch == 0:
        off = min(div_end, w.node[LOG_END, i])
    else:
        e, end = end_offset_for_epoch(w, i, div_epoch)
        off = min(end, div_end) if e == div_epoch else end
    if features & SNAPSHOTS and off < w.node[SNAP_END, i]:
        # Entries below the latest snapshot are its content: never truncated (Kafka
        # refuses to truncate below the HW, and a snapshot is never past the HW).
        off = w.node[SNAP_END, i]
    if off < w.node[LOG_END, i]:
        truncate_to(w, i, off)
        w.scal[S_TRUNCATIONS] += 1
        reach(w, T_FOLLOWER_TRUNCATED, 0)


@kernel
def handle_fetch_response(w, s, features):
    """handleFetchResponse at a follower (or a node that fetched from a bootstrap voter)."""
    m = w.msgs[s]
    i = m[F_DST]
    src = m[F_SRC]
    if not accept_response(w, s):
        return
    if w.node[ROLE, i] != FOLLOWER or w.node[LEADER_ID, i] != src:
        return
    if m[F_DIVERGING_EPOCH] >= 0:
        # Kafka refuses to truncate below the HW (it throws); the model truncates and
        # lets HighWatermarkValid report the broken promise.
        truncate_to_end_offset(w, i, m[F_DIVERGING_EPOCH], m[F_DIVERGING_END], features)
    elif features & SNAPSHOTS and m[F_SNAPSHOT_END] >= 0:
        # The leader asks for a snapshot download first (createNewSnapshotUnchecked:
        # none if that snapshot is already stored).
        end = m[F_SNAPSHOT_END]
        e = m[F_SNAPSHOT_EPOCH]
        if not ((end == w.node[SNAP_END, i] and e == w.node[SNAP_EPOCH, i])
                or (end == w.node[LOG_START, i] and e == w.node[START_EPOCH, i])):
            w.node[FETCHING_END, i] = end
            w.node[FETCHING_EPOCH, i] = e
    else:
        n = m[F_N_RECORDS]
        if n > 0 and m[F_BASE_OFFSET] == w.node[LOG_END, i]:
            for q in range(n):
                e = m[F_RECORDS + 2 * q]
                if e > w.node[EPOCH, i]:
                    break  # KAFKA-18723: never append a batch from a future epoch
                if not append_entry(w, i, e, m[F_RECORDS + 2 * q + 1]):
                    break
            if features & MUT_NO_FLUSH_AFTER_APPEND:
                pass  # KAFKA-10533: the next Fetch reports an unflushed end
            elif is_voter(w, i) or (features & RECONFIG and not features & MUT_OBSERVER_SKIPS_FLUSH):
                # voters flush before their next Fetch reports the offset; with voter
                # changes every follower does (Kafka's followersAlwaysFlush, KAFKA-17332):
                # an observer being added is a voter in the leader's view before it is in
                # its own
                flush(w, i)
        hw = m[F_HW]
        if hw >= 0:
            new_hw = min(w.node[LOG_END, i], hw)
            if new_hw > w.node[HW, i]:
                w.node[HW, i] = new_hw
    w.node[HAS_FETCHED, i] = 1
    if not features & MUT_NO_FETCH_TIMER_RESET:
        intend(w, i, I_FETCH_RESET)  # resetFetchTimeoutForSuccessfulFetch


# ------------------------------------------------------------------ leader side
@kernel
def voter_end(w, i, j, features):
    """Leader i's view of voter j's log end: its replica state, if that state is the
    voter's (with disk loss on: kept under the key the voter set names)."""
    x = w.peer[REPLICA_END, i, j]
    if features & DISK_LOSS and w.peer[REPLICA_DIR, i, j] != view_dir(w, i, j):
        return -1
    return x


@kernel
def maybe_update_high_watermark(w, i, features):
    """LeaderState.maybeUpdateHighWatermark: the offset reached by a majority of voters
    becomes the HW once it is past epochStartOffset; the HW never goes down."""
    n = w.scal[P_NODES]
    vs = voters(w, i)
    best = -1
    for j in range(n):
        x = voter_end(w, i, j, features)
        if not (vs >> j) & 1 or x <= best:
            continue
        count = 0
        for q in range(n):
            if (vs >> q) & 1 and voter_end(w, i, q, features) >= x:
                count += 1
        if count >= majority(w, i):
            best = x
    if features & MUT_COMMIT_OLD_EPOCH:
        ok = best > 0  # known bug: count replicas of earlier epochs' entries (Figure 8)
    elif features & MUT_HW_AT_EPOCH_START:
        ok = best >= w.node[EPOCH_START, i]  # KAFKA-12619: before its LeaderChange commits
    else:
        ok = best > w.node[EPOCH_START, i]
    if ok and best > w.node[HW, i]:
        w.node[HW, i] = best
        if features & RECONFIG:
            w.node[GN_HW_VOTERS, i] = vs
            if not is_voter(w, i) and best > w.node[VOTERS_AT, i]:
                # RemoveVoterHandler.highWatermarkUpdated: the leader's own removal is
                # committed, so it resigns (Kafka's next poll does; here at once).
                reach(w, T_REMOVED_LEADER_RESIGNED, 0)
                transition_to_resigned(w, i, other_voters(w, i))


@kernel
def diverging_epoch(w, i, off, lfe):
    """validateOffsetAndEpoch at leader i for a Fetch at ``off`` whose last fetched epoch
    is ``lfe`` (``off`` > 0): the (epoch, end offset) the follower must truncate to,
    or (-1, -1) where its log matches."""
    e, end = end_offset_for_epoch(w, i, lfe)
    if e == 0 and end == 0 and lfe > 0 and w.node[LOG_END, i] > 0:
        e = lfe  # below every epoch in the log: (requested epoch, log start)
    if e != lfe or end < off:
        return e, end
    return -1, -1


@kernel
def handle_fetch_request(w, s, features):
    """handleFetchRequest: validate the epoch, then records, or a diverging epoch."""
    m = w.msgs[s]
    i = m[F_DST]
    r = m[F_SRC]
    error = validate_leader_only_request(w, i, m[F_EPOCH])
    k = new_message(w, FETCH_RESPONSE, i, r, w.node[EPOCH, i])
    if error != ERR_NONE:
        if k >= 0:
            out = w.msgs[k]
            out[F_CORR] = m[F_CORR]
            out[F_ERROR] = error
            out[F_LEADER] = w.node[LEADER_ID, i]
            out[F_HW] = -1
            out[F_DIVERGING_EPOCH] = -1
            out[F_SNAPSHOT_END] = -1
            out[F_SNAPSHOT_EPOCH] = -1
        return
    off = m[F_FETCH_OFFSET]
    lfe = m[F_LAST_FETCHED_EPOCH]
    valid = True
    div_epoch = -1
    div_end = -1
    snapshot = False
    if features & SNAPSHOTS and fetch_needs_snapshot(w, i, off, lfe, features):
        valid = False
        snapshot = True
    elif off != 0:
        e, end = diverging_epoch(w, i, off, lfe)
        if e >= 0:
            valid = False
            div_epoch = e
            div_end = end
    if valid and features & DISK_LOSS and not key_matches(w, i, r, m[F_REPLICA_DIR]):
        # An observer state under a key the voter set does not hold (the same id under
        # another disk): never the voter's state, never a vote for the HW or check-quorum.
        # The model keeps one state per id, so it is not recorded (AddVoter is refused
        # for an id that is a voter under any key).
        pass
    elif valid:
        # updateReplicaState (+ check-quorum bookkeeping for voters)
        w.peer[REPLICA_END, i, r] = off
        w.peer[REPLICA_DIR, i, r] = m[F_REPLICA_DIR]
        w.node[INTENT_ARG, i] = r
        intend(w, i, I_FETCHED)  # lastFetchTimestamp: 4.2's heartbeat skips r a while
        if update_check_quorum_for_following_voter(w, i, r, features):
            w.node[ACKED_MASK, i] |= 1 << r
            maybe_update_high_watermark(w, i, features)
    if k < 0:
        return
    out = w.msgs[k]
    out[F_CORR] = m[F_CORR]
    out[F_ERROR] = ERR_NONE
    out[F_LEADER] = i
    out[F_HW] = w.node[HW, i]
    out[F_DIVERGING_EPOCH] = div_epoch
    out[F_DIVERGING_END] = div_end
    out[F_SNAPSHOT_END] = w.node[SNAP_END, i] if snapshot else -1
    out[F_SNAPSHOT_EPOCH] = w.node[SNAP_EPOCH, i] if snapshot else -1
    if valid:
        n = min(w.scal[P_MAX_RECORDS], w.node[LOG_END, i] - off)
        if n < 0:
            n = 0
        out[F_BASE_OFFSET] = off
        out[F_N_RECORDS] = n
        for q in range(n):
            out[F_RECORDS + 2 * q] = w.log[ENTRY_EPOCH, i, off + q]
            out[F_RECORDS + 2 * q + 1] = w.log[ENTRY_VALUE, i, off + q]


@kernel
def client_append_enabled(w, i):
    return w.node[UP, i] == 1 and w.node[ROLE, i] == LEADER


@kernel
def client_append(w, i):
    """A client record appended by the leader in its epoch (not yet flushed)."""
    w.scal[C_NEXT_VALUE] += 1
    if append_entry(w, i, w.node[EPOCH, i], w.scal[C_NEXT_VALUE]):
        w.scal[S_CLIENT_APPENDS] += 1


@kernel
def flush_enabled(w, i):
    return w.node[UP, i] == 1 and w.node[FLUSHED_END, i] < w.node[LOG_END, i]


@kernel
def flush_log(w, i, features):
    """flushLeaderLog for a leader (its end offset now counts towards the HW); a
    plain flush for an observer. Voters that follow flush on every append."""
    flush(w, i)
    if w.node[ROLE, i] == LEADER:
        w.peer[REPLICA_END, i, i] = w.node[LOG_END, i]
        w.peer[REPLICA_DIR, i, i] = w.node[DIR, i]
        maybe_update_high_watermark(w, i, features)


@kernel
def finish_poll(w, i, features):
    """Before a voter handles any other event, the poll in which it appended has ended,
    and with it Kafka's flushLeaderLog (maybeAppendBatches appends, then flushes, in
    one poll; followers flush in appendAsFollower). Only a crash falls in between."""
    if features & MUT_NO_FLUSH_AFTER_APPEND:
        # KAFKA-10533: no flush; the leader counts its log end as it stands
        if w.node[ROLE, i] == LEADER and w.peer[REPLICA_END, i, i] < w.node[LOG_END, i]:
            w.peer[REPLICA_END, i, i] = w.node[LOG_END, i]
            w.peer[REPLICA_DIR, i, i] = w.node[DIR, i]
            maybe_update_high_watermark(w, i, features)
        return
    if ((is_voter(w, i) or w.node[ROLE, i] == LEADER)
            and w.node[FLUSHED_END, i] < w.node[LOG_END, i]):
        flush_log(w, i, features)  # (a leader removed from the voters still flushes)


@kernel
def check_quorum_enabled(w, i, features):
    if features & MUT_NO_CHECK_QUORUM:
        return False  # known bug: the timer is never checked
    return w.node[UP, i] == 1 and w.node[ROLE, i] == LEADER and checks_quorum(w, i)


@kernel
def check_quorum_expired(w, i):
    """The check-quorum timer ran out before a majority of voters fetched: resign.
    (It restarts whenever a majority has fetched, so reaching it means no majority.)"""
    reach(w, T_CHECK_QUORUM_RESIGNED, 0)
    transition_to_resigned(w, i, other_voters(w, i))


@kernel
def resign(w, i):
    """A graceful resignation (shutdown or a resign request): Resigned + EndQuorumEpoch."""
    transition_to_resigned(w, i, other_voters(w, i))
