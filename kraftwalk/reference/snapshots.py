"""Snapshots (KIP-630), after KafkaRaftClient and KafkaMetadataLog, written from Kafka
independently of the kernel (kernels/protocol/snapshots.py).

A node's latest snapshot id ``(end offset, epoch)`` is ``node.latest`` ((0, 0): none),
its earliest is ``(node.log_start, node.start_epoch)`` (the log starts there), and
``node.snapshots`` maps the ids it holds (those two) to their content: the entries they
cover (the model's state machine is its log). A newer snapshot replaces the latest one
(Kafka would keep both), so a FetchSnapshot for a replaced one is answered
SNAPSHOT_NOT_FOUND. ``node.log`` still lists the entries below the log start: they are
the earliest snapshot's content, and Fetch never serves them.
"""
from __future__ import annotations

from kraftwalk.kernels.features import (
    DISK_LOSS, MUT_LEADER_LOADS_SNAPSHOT, MUT_SNAPSHOT_ABOVE_HW, RECONFIG, SNAPSHOTS,
)
from kraftwalk.kernels.state.layout import (
    ERR_NONE, ERR_SNAPSHOT_NOT_FOUND, FETCH_SNAPSHOT_REQUEST, FETCH_SNAPSHOT_RESPONSE, FOLLOWER,
)

from .log import last_epoch
from .quorum_state import (
    maybe_handle_common_response, update_check_quorum_for_following_voter,
    validate_leader_only_request,
)
from .state import Message
from .voters import key_matches, voters


def held(node, sid) -> bool:
    """Does the node hold snapshot ``sid`` (its latest, or its earliest at its log start)?"""
    return sid[0] > 0 and (sid == node.latest or sid == (node.log_start, node.start_epoch))


def keep_held(node) -> None:
    """Forget the content of snapshots it no longer holds."""
    node.snapshots = {sid: v for sid, v in node.snapshots.items() if held(node, sid)}


# ---------------------------------------------------------------- taking and cleaning
def snapshot_offset(c, node) -> int:
    if c.features & MUT_SNAPSHOT_ABOVE_HW:
        return node.log_end   # known bug: a snapshot of uncommitted entries
    return -1 if node.hw is None else min(node.hw, node.log_end)


def create_snapshot_enabled(c, node) -> bool:
    return bool(c.features & SNAPSHOTS) and node.up and snapshot_offset(c, node) > node.latest[0]


def create_snapshot(c, node) -> None:
    """createNewSnapshot at the HW, frozen at once: the node's latest snapshot."""
    end = snapshot_offset(c, node)
    node.latest = (end, node.log[end - 1][0])
    if node.log_start == 0 and node.first_snapshot_epoch == 0:
        node.first_snapshot_epoch = node.latest[1]   # on disk until the log is cleaned
    node.snapshots[node.latest] = tuple(node.log[:end])
    keep_held(node)
    c.stats["snapshots"] += 1


def delete_before_snapshot_enabled(c, node) -> bool:
    return bool(c.features & SNAPSHOTS) and node.up and node.latest[0] > node.log_start


def delete_before_snapshot(c, node) -> None:
    """deleteBeforeSnapshot(latest): the log starts at the latest snapshot; older ones go."""
    node.log_start, node.start_epoch = node.latest
    keep_held(node)


def start_log_at_latest_snapshot(node) -> None:
    """truncateFullyAndStartAt(latest snapshot's end): the log is the snapshot's content."""
    end, epoch = node.latest
    node.log = list(node.snapshots[node.latest])
    node.flushed_end = end
    node.log_start, node.start_epoch = end, epoch
    keep_held(node)


def truncate_to_latest_snapshot(c, node) -> bool:
    """truncateToLatestSnapshot: a latest snapshot past the log (a later epoch, or the same
    epoch and further) replaces it."""
    end, epoch = node.latest
    log_epoch = last_epoch(node.log)
    if end > 0 and (epoch > log_epoch or (epoch == log_epoch and end > node.log_end)):
        start_log_at_latest_snapshot(node)
        return True
    return False


# ---------------------------------------------------------------- the leader's side
def fetch_needs_snapshot(c, node, offset: int, last_fetched_epoch: int) -> bool:
    """An empty log's fetch whenever the leader has a snapshot (KAFKA-15078), else
    validateOffsetAndEpoch's SNAPSHOT case against the earliest snapshot on disk: the
    one at the log start, or before any cleaning the first one taken (with voter
    changes, a dynamic quorum: the bootstrap snapshot 0-0, which no epoch is below)."""
    if offset == 0 and node.latest[0] > 0:
        return True
    if node.log_start == 0:
        first = node.first_snapshot_epoch
        return not c.features & RECONFIG and first > 0 and last_fetched_epoch < first
    start, epoch = node.log_start, node.start_epoch
    return (offset < start or (offset == start and last_fetched_epoch != epoch)
            or last_fetched_epoch < epoch)


def handle_fetch_snapshot_request(c, msg: Message) -> None:
    node = c.nodes[msg.dst]
    error = validate_leader_only_request(node, msg.epoch)
    sid = (msg.req_snapshot_end, msg.req_snapshot_epoch)
    if error == ERR_NONE and not held(node, sid):
        error = ERR_SNAPSHOT_NOT_FOUND
    leader = -1 if node.leader_id is None else node.leader_id
    if error != ERR_NONE:
        c.send(Message(FETCH_SNAPSHOT_RESPONSE, node.id, msg.src, node.epoch, msg.corr,
                       error=error, leader=leader))
        return
    if c.features & DISK_LOSS and not key_matches(c, node, msg.src, msg.replica_dir):
        pass   # the same id on another disk: not the voter, not a check-quorum fetch
    elif msg.src in voters(c, node):   # updateCheckQuorumForFollowingVoter
        update_check_quorum_for_following_voter(c, node, msg.src)
    c.send(Message(FETCH_SNAPSHOT_RESPONSE, node.id, msg.src, node.epoch, msg.corr,
                   error=ERR_NONE, leader=node.id, snapshot_end=sid[0], snapshot_epoch=sid[1],
                   snapshot_records=node.snapshots[sid]))


# ---------------------------------------------------------------- the follower's side
def send_fetch_snapshot_request(c, node, target: int) -> None:
    """Like a Fetch, the only request pending."""
    node.reset_connections()
    c.next_corr += 1
    end, epoch = node.fetching
    c.send(Message(FETCH_SNAPSHOT_REQUEST, node.id, target, node.epoch, c.next_corr,
                   req_snapshot_end=end, req_snapshot_epoch=epoch, replica_dir=node.dir))
    node.inflight[target] = c.next_corr


def start_fetching_snapshot(node, end: int, epoch: int) -> None:
    """A FetchResponse names the leader's snapshot: download it unless it is stored."""
    if not held(node, (end, epoch)):
        node.fetching = (end, epoch)


def load_snapshot(c, node, msg: Message) -> None:
    """Freeze the downloaded snapshot (the latest now), truncate the log to it, and take
    the HW up to it (the log's HW is at least its start)."""
    c.history.loaded_snapshot(node)
    node.fetching = None
    node.latest = (msg.snapshot_end, msg.snapshot_epoch)
    node.snapshots[node.latest] = tuple(msg.snapshot_records)
    if not truncate_to_latest_snapshot(c, node):
        # Kafka throws ("full log truncation expected"); only a walk already broken gets
        # here, and the model replaces the log all the same.
        start_log_at_latest_snapshot(node)
    if node.hw is None or node.latest[0] > node.hw:
        node.hw = node.latest[0]
    c.stats["snapshots_loaded"] += 1


def handle_fetch_snapshot_response(c, msg: Message) -> None:
    node = c.nodes[msg.dst]
    if c.features & MUT_LEADER_LOADS_SNAPSHOT:
        # known bug: installed whatever the node has become since it asked
        if msg.error == ERR_NONE and msg.snapshot_end > 0:
            load_snapshot(c, node, msg)
        return
    if not c.expect_response(node, msg):
        return
    if maybe_handle_common_response(c, node, msg.error, msg.leader, msg.epoch):
        return
    if node.role != FOLLOWER or node.leader_id != msg.src or node.fetching is None:
        return
    if msg.error == ERR_SNAPSHOT_NOT_FOUND or msg.snapshot_end < 0:
        node.fetching = None   # the leader cleaned it away: fetch again
        return
    if (msg.snapshot_end, msg.snapshot_epoch) != node.fetching:
        return
    load_snapshot(c, node, msg)
