"""Pull replication, the high watermark and check-quorum, after KafkaRaftClient and LeaderState.

Followers send Fetch(fetchOffset = log end, lastFetchedEpoch); the leader answers
with records from fetchOffset, or a diverging epoch the follower truncates to.
The leader's HW is the offset a majority of voters has reached (followers' fetch
offsets; its own log end as of its last flush) and only moves once it passes the
leader's epochStartOffset, i.e. once an entry of its own epoch is on a majority.
"""
from __future__ import annotations

from kraftwalk.kernels.features import (
    DISK_LOSS, MUT_COMMIT_OLD_EPOCH, MUT_HW_AT_EPOCH_START, MUT_NO_CHECK_QUORUM,
    MUT_NO_FLUSH_AFTER_APPEND, MUT_OBSERVER_SKIPS_FLUSH, RECONFIG, SNAPSHOTS,
)
from kraftwalk.kernels.state.layout import (
    ERR_NONE, FETCH_REQUEST, FETCH_RESPONSE, FOLLOWER, LEADER,
)

from .log import append, end_offset_for_epoch, last_epoch, truncate
from .quorum_state import (
    maybe_handle_common_response, transition_to_resigned,
    update_check_quorum_for_following_voter, validate_leader_only_request,
)
from .snapshots import fetch_needs_snapshot, start_fetching_snapshot
from .state import Message
from .voters import (
    is_voter, key_matches, latest_voters_record, majority, other_voters,
    voter_keys, voters,
)


# ---------------------------------------------------------------- follower side
def send_fetch_request(c, node, target: int) -> None:
    """buildFetchRequest: fetchOffset = log end, lastFetchedEpoch = last entry's epoch,
    and the fetcher's directory id (its replica key, with its id).
    One Fetch is pending at a time (RequestManager.hasAnyInflightRequest): a new one,
    to any node, means the one before timed out, and its answer is no longer expected."""
    node.reset_connections()
    c.next_corr += 1
    c.send(Message(FETCH_REQUEST, node.id, target, node.epoch, c.next_corr,
                   fetch_offset=node.log_end, last_fetched_epoch=last_epoch(node.log),
                   replica_dir=node.dir))
    node.inflight[target] = c.next_corr


def truncate_to_end_offset(c, node, div_epoch: int, div_end: int) -> None:
    """RaftLog.truncateToEndOffset for the diverging (epoch, end offset) from the leader."""
    if div_epoch == 0:
        offset = min(div_end, node.log_end)
    else:
        e, end = end_offset_for_epoch(node.log, div_epoch)
        offset = min(end, div_end) if e == div_epoch else end
    if c.features & SNAPSHOTS:
        offset = max(offset, node.latest[0])   # a snapshot's entries are never truncated
    if offset < node.log_end:
        truncate(node, offset)
        c.stats["truncations"] += 1


def handle_fetch_response(c, msg: Message) -> None:
    """handleFetchResponse at a follower (or an Unattached node that fetched from a voter)."""
    node = c.nodes[msg.dst]
    if not c.expect_response(node, msg):
        return
    if maybe_handle_common_response(c, node, msg.error, msg.leader, msg.epoch):
        return
    if node.role != FOLLOWER or node.leader_id != msg.src:
        # Kafka's followerStateOrThrow: only reachable when two nodes lead one epoch
        return
    if msg.diverging is not None:
        # Kafka throws if asked to truncate below its HW; the model truncates and lets
        # HighWatermarkValid report the broken promise.
        truncate_to_end_offset(c, node, *msg.diverging)
    elif c.features & SNAPSHOTS and msg.snapshot_end >= 0:
        start_fetching_snapshot(node, msg.snapshot_end, msg.snapshot_epoch)
    else:
        if msg.records and msg.base_offset == node.log_end:
            for e, v in msg.records:
                if e > node.epoch:
                    break   # KAFKA-18723: never append a batch from a future epoch
                if not append(c, node, e, v):
                    break
            if c.features & MUT_NO_FLUSH_AFTER_APPEND:
                pass   # KAFKA-10533: the next Fetch reports an unflushed end
            elif is_voter(c, node) or (c.features & RECONFIG
                                       and not c.features & MUT_OBSERVER_SKIPS_FLUSH):
                # voters flush before they fetch again; with voter changes every follower
                # does (Kafka's followersAlwaysFlush, KAFKA-17332): an observer being added
                # counts as a voter in the leader's view before it is one in its own
                node.flushed_end = node.log_end
        if msg.hw >= 0:
            new_hw = min(node.log_end, msg.hw)
            # FollowerState.updateHighWatermark: it never goes down (Kafka throws)
            if node.hw is None or new_hw > node.hw:
                node.hw = new_hw
    node.has_fetched = True   # resetFetchTimeoutForSuccessfulFetch


# ------------------------------------------------------------------ leader side
def voter_end(c, node, j: int, d: int) -> int:
    """The leader's view of voter key (j, d)'s fetch offset, -1 unknown: the replica state
    it holds for id j counts only if j fetched it under that key."""
    if c.features & DISK_LOSS and node.replica_dir.get(j) != d:
        return -1
    return node.replica_end.get(j, -1)


def maybe_update_high_watermark(c, node) -> None:
    """LeaderState.maybeUpdateHighWatermark: the largest offset that a majority of voters
    (the leader included) has reached; it must be past epochStartOffset, and the HW never
    goes down."""
    keys = voter_keys(c, node)
    ends = sorted((voter_end(c, node, j, d) for j, d in keys.items()), reverse=True)
    candidate = ends[majority(c, node) - 1]
    if c.features & MUT_COMMIT_OLD_EPOCH:
        ok = candidate > 0   # known bug: an earlier epoch's entries count (Raft Figure 8)
    elif c.features & MUT_HW_AT_EPOCH_START:
        ok = candidate >= node.epoch_start  # KAFKA-12619: before its LeaderChange commits
    else:
        ok = candidate > node.epoch_start
    if ok and (node.hw is None or candidate > node.hw):
        node.hw = candidate
        c.history.hw_raised(node, keys)
        if (c.features & RECONFIG and not is_voter(c, node)
                and candidate > latest_voters_record(node)):
            # RemoveVoterHandler.highWatermarkUpdated: its own removal is committed, so
            # it resigns (Kafka on its next poll; the model at once)
            transition_to_resigned(c, node, other_voters(c, node))


def handle_fetch_request(c, msg: Message) -> None:
    """handleFetchRequest: validate the epoch; then records, or a diverging epoch."""
    node = c.nodes[msg.dst]
    r = msg.src
    error = validate_leader_only_request(node, msg.epoch)
    leader = -1 if node.leader_id is None else node.leader_id
    if error != ERR_NONE:
        c.send(Message(FETCH_RESPONSE, node.id, r, node.epoch, msg.corr, error=error,
                       leader=leader, hw=-1))
        return
    off = msg.fetch_offset
    lfe = msg.last_fetched_epoch
    diverging = None
    snapshot = None
    if c.features & SNAPSHOTS and fetch_needs_snapshot(c, node, off, lfe):
        snapshot = node.latest   # fetch the leader's latest snapshot first
    elif off != 0:   # log.validateOffsetAndEpoch (a log starting at 0 is valid at 0)
        e, end = end_offset_for_epoch(node.log, lfe)
        if e != lfe or end < off:
            diverging = (e, end)
    if (diverging is None and snapshot is None and c.features & DISK_LOSS
            and not key_matches(c, node, r, msg.replica_dir)):
        # getOrCreateReplicaState: id r is a voter under another key, so this is an
        # observer's state (the same id on a new disk). Nothing reads it here: AddVoter
        # refuses an id that is a voter under any key. So it is not kept.
        pass
    elif diverging is None and snapshot is None:
        # updateReplicaState, and check-quorum bookkeeping for voters
        node.replica_end[r] = off
        node.replica_dir[r] = msg.replica_dir
        if r in voters(c, node):
            node.acked.add(r)
            update_check_quorum_for_following_voter(c, node, r)
            maybe_update_high_watermark(c, node)
    records = ()
    if diverging is None and snapshot is None:
        records = tuple(node.log[off:off + c.params.max_records])
    snapshot_end, snapshot_epoch = (-1, -1) if snapshot is None else snapshot
    c.send(Message(FETCH_RESPONSE, node.id, r, node.epoch, msg.corr, error=ERR_NONE,
                   leader=node.id, hw=-1 if node.hw is None else node.hw,
                   diverging=diverging, base_offset=off, records=records,
                   snapshot_end=snapshot_end, snapshot_epoch=snapshot_epoch))


def client_append_enabled(c, node) -> bool:
    return node.up and node.role == LEADER and node.log_end < c.params.log_capacity


def client_append(c, node) -> None:
    """A client record, appended by the leader in its epoch (not yet flushed)."""
    c.next_value += 1
    if append(c, node, node.epoch, c.next_value):
        c.stats["client_appends"] += 1


def flush_enabled(c, node) -> bool:
    return node.up and node.flushed_end < node.log_end


def flush_log(c, node) -> None:
    """flushLeaderLog for a leader (its own log end now counts towards the HW); a plain
    flush for anyone else."""
    node.flushed_end = node.log_end
    if node.role == LEADER:
        node.replica_end[node.id] = node.log_end
        node.replica_dir[node.id] = node.dir
        maybe_update_high_watermark(c, node)


def finish_poll(c, node) -> None:
    """A voter or leader that appended has flushed by the time it handles anything else:
    Kafka's leader appends and flushes (flushLeaderLog) in one poll, a follower flushes in
    appendAsFollower. Only a crash can come between an append and its flush. (A leader
    that removed itself from the voters still leads, and flushes.)"""
    if c.features & MUT_NO_FLUSH_AFTER_APPEND:
        # KAFKA-10533: no flush; the leader counts its log end as it stands
        if node.role == LEADER and node.replica_end.get(node.id, -1) < node.log_end:
            node.replica_end[node.id] = node.log_end
            node.replica_dir[node.id] = node.dir
            maybe_update_high_watermark(c, node)
        return
    if (is_voter(c, node) or node.role == LEADER) and node.flushed_end < node.log_end:
        flush_log(c, node)


def check_quorum_enabled(c, node) -> bool:
    if c.features & MUT_NO_CHECK_QUORUM:
        return False   # known bug: the timer is never checked
    # LeaderState.timeUntilCheckQuorumExpires: a one-voter set never expires, whether or
    # not the leader is that voter
    return node.up and node.role == LEADER and len(voters(c, node)) > 1


def check_quorum_expired(c, node) -> None:
    """The check-quorum timer ran out before a majority of voters fetched: resign,
    naming the other voters as successors. (The timer restarts whenever a majority has
    fetched, so in the untimed model it may run out at any time.)"""
    transition_to_resigned(c, node, other_voters(c, node))


def resign(c, node) -> None:
    """A graceful resignation (shutdown or a resign request)."""
    transition_to_resigned(c, node, other_voters(c, node))
