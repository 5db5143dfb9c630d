"""Snapshots (KIP-630), after KafkaRaftClient and KafkaMetadataLog.

A node snapshots its committed log (Kafka's createNewSnapshot: at or below the high
watermark, at or above the log start), later cleans its log up to the snapshot
(deleteBeforeSnapshot: the log start offset moves up to it), and a follower whose
fetch offset the leader can no longer serve from its log gets the leader's latest
snapshot id in the FetchResponse, downloads it with FetchSnapshot and replaces its
log with it (truncateToLatestSnapshot). A node keeps two snapshot ids: the earliest,
at its log start (``LOG_START``/``START_EPOCH``), and the latest (``SNAP_END``/
``SNAP_EPOCH``), and before its log is cleaned the epoch of the first snapshot it took
(``FIRST_SNAP_EPOCH``, Kafka's earliest snapshot then, which validateOffsetAndEpoch
reads); Kafka keeps every one in between too, which only a FetchSnapshot for one of
them would read (the ``snapshots_kept`` difference).

The model's state machine is its log, so a snapshot's content is the log prefix it
covers: entries below ``SNAP_END`` stay in the log arrays (and their prefix hashes)
as the snapshot, and are never truncated. A snapshot is frozen (fsync, then an atomic
rename) in the step that writes it, so it survives any later crash; a download in
progress (``FETCHING_*``, part of FollowerState) does not. A whole snapshot fits in
one FetchSnapshotResponse: the model's logs are small, so chunking would only add
steps.
"""
from ..jit import kernel

from ..state.coverage import reach
from ..features import DISK_LOSS, MUT_LEADER_LOADS_SNAPSHOT, MUT_SNAPSHOT_ABOVE_HW, RECONFIG, SNAPSHOTS
from ..state.layout import (
    DIR, F_REPLICA_DIR,
    C_NEXT_CORR, DIRTY_FROM, ENTRY_EPOCH, ENTRY_VALUE, EPOCH, ERR_NONE, ERR_SNAPSHOT_NOT_FOUND,
    FETCHING_END, FETCHING_EPOCH, FETCH_SNAPSHOT_REQUEST, FETCH_SNAPSHOT_RESPONSE, FLUSHED_END, FOLLOWER, F_CORR, F_DST, F_EPOCH, F_ERROR, F_LEADER, F_RECORDS,
    F_REQ_SNAPSHOT_END, F_REQ_SNAPSHOT_EPOCH, F_SNAPSHOT_COUNT, F_SNAPSHOT_END,
    F_SNAPSHOT_EPOCH, F_SRC, GN_LOADED, HW, INFLIGHT, LEADER_ID, LOG_END, LOG_HASH,
    FIRST_SNAP_EPOCH, LOG_START, ROLE, SNAP_END, SNAP_EPOCH, START_EPOCH, S_SNAPSHOTS,
    S_SNAPSHOTS_LOADED, UP,
    T_SNAPSHOT_LOADED, I_FETCH_RESET,
)
from ..state.log import entry_hash, last_epoch, prefix_hash
from ..state.voters import key_matches, refresh_voters
from ..state.network import new_message
from .quorum_state import (
    accept_response, intend, reset_connections, update_check_quorum_for_following_voter,
    validate_leader_only_request,
)


# ---------------------------------------------------------------- taking and cleaning
@kernel
def snapshot_offset(w, i, features):
    """Where a snapshot of node i would end now: its high watermark (createNewSnapshot
    refuses an id past it), -1 while the HW is unknown."""
    if features & MUT_SNAPSHOT_ABOVE_HW:
        return w.node[LOG_END, i]  # known bug: snapshot uncommitted entries
    return min(w.node[HW, i], w.node[LOG_END, i])


@kernel
def create_snapshot_enabled(w, i, features):
    """A running node may snapshot when its HW has passed its latest snapshot."""
    if not features & SNAPSHOTS:
        return False
    return w.node[UP, i] == 1 and snapshot_offset(w, i, features) > w.node[SNAP_END, i]


@kernel
def create_snapshot(w, i, features):
    """createNewSnapshot at the HW, written and frozen: the latest snapshot is now
    (HW, epoch of the entry just below it)."""
    off = snapshot_offset(w, i, features)
    w.node[SNAP_END, i] = off
    w.node[SNAP_EPOCH, i] = w.log[ENTRY_EPOCH, i, off - 1]
    if w.node[LOG_START, i] == 0 and w.node[FIRST_SNAP_EPOCH, i] == 0:
        w.node[FIRST_SNAP_EPOCH, i] = w.node[SNAP_EPOCH, i]  # kept until the log is cleaned
    w.scal[S_SNAPSHOTS] += 1


@kernel
def delete_before_snapshot_enabled(w, i, features):
    if not features & SNAPSHOTS:
        return False
    return w.node[UP, i] == 1 and w.node[SNAP_END, i] > w.node[LOG_START, i]


@kernel
def delete_before_snapshot(w, i):
    """deleteBeforeSnapshot(latest) (what maybeClean ends in): the log start offset moves
    up to the latest snapshot and the segments below it are deleted; older snapshots
    are forgotten, so the earliest snapshot is the latest."""
    w.node[LOG_START, i] = w.node[SNAP_END, i]
    w.node[START_EPOCH, i] = w.node[SNAP_EPOCH, i]


@kernel
def start_log_at_latest_snapshot(w, i):
    """truncateFullyAndStartAt(latest snapshot's end): the log is the snapshot's content
    (already below its end in the arrays) and starts at its end."""
    end = w.node[SNAP_END, i]
    if w.node[LOG_END, i] < w.node[DIRTY_FROM, i]:
        w.node[DIRTY_FROM, i] = w.node[LOG_END, i]  # the snapshot's entries are back
    w.node[LOG_END, i] = end
    w.node[FLUSHED_END, i] = end
    w.node[LOG_START, i] = end
    w.node[START_EPOCH, i] = w.node[SNAP_EPOCH, i]
    refresh_voters(w, i)


@kernel
def truncate_to_latest_snapshot(w, i):
    """truncateToLatestSnapshot: when the latest snapshot is past the log (a later epoch,
    or the same epoch and a larger end offset), the log starts at it. True if it did."""
    end = w.node[SNAP_END, i]
    e = w.node[SNAP_EPOCH, i]
    le = last_epoch(w, i)
    if end > 0 and (e > le or (e == le and end > w.node[LOG_END, i])):
        start_log_at_latest_snapshot(w, i)
        return True
    return False


# ---------------------------------------------------------------- the leader's answer
@kernel
def fetch_needs_snapshot(w, i, off, lfe, features):
    """Does leader i answer a Fetch at (off, lfe) with its latest snapshot id? A fetch
    from an empty log (offset 0) whenever it has a snapshot (tryCompleteFetchRequest,
    KAFKA-15078: cheaper than the log from its start, every release); otherwise
    validateOffsetAndEpoch's SNAPSHOT case against its earliest snapshot: the fetch
    offset is below the log start, or at it with another epoch, or the last fetched
    epoch is below the earliest snapshot's. Before the log is cleaned the earliest is
    the first snapshot taken; with a dynamic quorum (voter changes, KIP-853) it is the
    bootstrap snapshot 0-0 that formatting wrote, which no epoch is below."""
    if off == 0 and w.node[SNAP_END, i] > 0:
        return True
    start = w.node[LOG_START, i]
    if start == 0:
        first = w.node[FIRST_SNAP_EPOCH, i]
        return not features & RECONFIG and first > 0 and lfe < first
    se = w.node[START_EPOCH, i]
    return off < start or (off == start and lfe != se) or lfe < se


# ---------------------------------------------------------------- the follower's download
@kernel
def send_fetch_snapshot_request(w, i, target):
    """buildFetchSnapshotRequest for the snapshot the follower is fetching, from its start
    (one chunk holds it all); like a Fetch, the only request pending."""
    k = new_message(w, FETCH_SNAPSHOT_REQUEST, i, target, w.node[EPOCH, i])
    reset_connections(w, i)
    w.scal[C_NEXT_CORR] += 1
    w.peer[INFLIGHT, i, target] = w.scal[C_NEXT_CORR]
    if k < 0:
        return
    m = w.msgs[k]
    m[F_CORR] = w.scal[C_NEXT_CORR]
    m[F_REQ_SNAPSHOT_END] = w.node[FETCHING_END, i]
    m[F_REQ_SNAPSHOT_EPOCH] = w.node[FETCHING_EPOCH, i]
    m[F_REPLICA_DIR] = w.node[DIR, i]


@kernel
def fetch_snapshot_error(w, i, out, corr, error):
    out[F_CORR] = corr
    out[F_ERROR] = error
    out[F_LEADER] = w.node[LEADER_ID, i]
    out[F_SNAPSHOT_END] = -1
    out[F_SNAPSHOT_EPOCH] = -1


@kernel
def handle_fetch_snapshot_request(w, s, features):
    """handleFetchSnapshotRequest: only the leader of the request's epoch answers; it
    serves a snapshot it holds (its earliest or latest), else SNAPSHOT_NOT_FOUND. Like a
    Fetch, it counts towards check-quorum."""
    m = w.msgs[s]
    i = m[F_DST]
    r = m[F_SRC]
    error = validate_leader_only_request(w, i, m[F_EPOCH])
    k = new_message(w, FETCH_SNAPSHOT_RESPONSE, i, r, w.node[EPOCH, i])
    if error != ERR_NONE:
        if k >= 0:
            fetch_snapshot_error(w, i, w.msgs[k], m[F_CORR], error)
        return
    end = m[F_REQ_SNAPSHOT_END]
    e = m[F_REQ_SNAPSHOT_EPOCH]
    held = (end == w.node[SNAP_END, i] and e == w.node[SNAP_EPOCH, i]) or (
        end == w.node[LOG_START, i] and e == w.node[START_EPOCH, i])
    if end <= 0 or not held:
        if k >= 0:
            fetch_snapshot_error(w, i, w.msgs[k], m[F_CORR], ERR_SNAPSHOT_NOT_FOUND)
        return
    if not features & DISK_LOSS or key_matches(w, i, r, m[F_REPLICA_DIR]):
        update_check_quorum_for_following_voter(w, i, r, features)
    if k < 0:
        return
    out = w.msgs[k]
    out[F_CORR] = m[F_CORR]
    out[F_ERROR] = ERR_NONE
    out[F_LEADER] = i
    out[F_SNAPSHOT_END] = end
    out[F_SNAPSHOT_EPOCH] = e
    out[F_SNAPSHOT_COUNT] = end
    for q in range(end):
        out[F_RECORDS + 2 * q] = w.log[ENTRY_EPOCH, i, q]
        out[F_RECORDS + 2 * q + 1] = w.log[ENTRY_VALUE, i, q]


@kernel
def load_snapshot(w, i, m):
    """The downloaded snapshot in message row m replaces node i's log below its end
    (the snapshot's content), and the log is truncated to start at it."""
    end = m[F_SNAPSHOT_END]
    w.node[DIRTY_FROM, i] = 0
    h = prefix_hash(w, i, 0)
    for q in range(end):
        e = m[F_RECORDS + 2 * q]
        v = m[F_RECORDS + 2 * q + 1]
        w.log[ENTRY_EPOCH, i, q] = e
        w.log[ENTRY_VALUE, i, q] = v
        h = entry_hash(h, e, v)
        w.hashes[LOG_HASH + i, q] = h
    w.node[SNAP_END, i] = end
    w.node[SNAP_EPOCH, i] = m[F_SNAPSHOT_EPOCH]
    w.node[GN_LOADED, i] = w.node[ROLE, i] + 1
    w.scal[S_SNAPSHOTS_LOADED] += 1
    reach(w, T_SNAPSHOT_LOADED, 0)


@kernel
def handle_fetch_snapshot_response(w, s, features):
    """handleFetchSnapshotResponse at the follower: SNAPSHOT_NOT_FOUND (the leader cleaned
    it away) starts over with a Fetch; the snapshot being fetched is installed:
    frozen, the log truncated to it (truncateToLatestSnapshot), and the HW moved up to
    it (the log's HW is at least its start)."""
    m = w.msgs[s]
    i = m[F_DST]
    if features & MUT_LEADER_LOADS_SNAPSHOT:
        # Known bug: the download is installed whatever the node has become since it
        # asked (no check that it is still the leader's follower fetching that snapshot).
        if m[F_ERROR] == ERR_NONE and m[F_SNAPSHOT_END] > 0:
            w.node[FETCHING_END, i] = 0
            w.node[FETCHING_EPOCH, i] = 0
            load_snapshot(w, i, m)
            install_snapshot(w, i)
        return
    if not accept_response(w, s):
        return
    if w.node[ROLE, i] != FOLLOWER or w.node[LEADER_ID, i] != m[F_SRC]:
        return  # followerStateOrThrow: only when two nodes lead one epoch
    if w.node[FETCHING_END, i] == 0:
        return  # Kafka throws: no download in progress
    if m[F_ERROR] == ERR_SNAPSHOT_NOT_FOUND or m[F_SNAPSHOT_END] < 0:
        w.node[FETCHING_END, i] = 0
        w.node[FETCHING_EPOCH, i] = 0
        intend(w, i, I_FETCH_RESET)
        return
    if m[F_SNAPSHOT_END] != w.node[FETCHING_END, i] or m[F_SNAPSHOT_EPOCH] != w.node[FETCHING_EPOCH, i]:
        return  # Kafka throws: a response for another snapshot
    w.node[FETCHING_END, i] = 0
    w.node[FETCHING_EPOCH, i] = 0
    load_snapshot(w, i, m)
    install_snapshot(w, i)
    intend(w, i, I_FETCH_RESET)


@kernel
def install_snapshot(w, i):
    """After a downloaded snapshot is frozen: truncateToLatestSnapshot, then the HW up to
    the snapshot (the log's HW is at least its start)."""
    if not truncate_to_latest_snapshot(w, i):
        # Kafka throws ("full log truncation expected"); only a walk already broken gets
        # here (its log holds a later epoch than a committed snapshot), and the model
        # replaces the log all the same.
        start_log_at_latest_snapshot(w, i)
    refresh_voters(w, i)  # the snapshot's entries replaced the log below its end
    end = w.node[SNAP_END, i]
    if end > w.node[HW, i]:
        w.node[HW, i] = end
