"""Faults: crash and restart of a node, disk loss, lost and duplicated messages, link cuts."""
from __future__ import annotations

from kraftwalk.kernels.features import (
    DISK_LOSS, KAFKA_17642, MUT_RESTARTED_LEADER, MUT_WIPED_SAME_ID, PRE_VOTE, SNAPSHOTS,
)
from kraftwalk.kernels.state.layout import (
    CANDIDATE, FOLLOWER, LEADER, MAX_DIR, RESIGNED, UNATTACHED,
)

from .log import last_epoch, truncate
from .snapshots import truncate_to_latest_snapshot
from .quorum_state import (
    start_leader_state, transition_to_candidate, transition_to_prospective,
)
from .voters import is_voter, other_voters


def crash_node(c, node) -> None:
    """The process dies: only what was flushed survives (epoch, vote and leader id are
    persisted with every change; the log's unflushed tail is lost; the HW is volatile)."""
    node.up = False
    truncate(node, node.flushed_end)
    node.hw = None
    c.stats["crashes"] += 1


def restart_node(c, node) -> None:
    """QuorumState.initialize from the persisted (epoch, leader id, vote), then
    KafkaRaftClient.initialize's single-voter short cut."""
    node.up = True
    node.hw = None
    node.fresh_epoch_state()
    node.reset_connections()
    if c.features & SNAPSHOTS:
        truncate_to_latest_snapshot(c, node)   # KafkaMetadataLog on load
    log_epoch = last_epoch(node.log)
    if node.epoch < log_epoch:
        # the quorum-state file is behind the log
        node.epoch = log_epoch
        node.voted_id = None
        node.leader_id = None
        node.role = UNATTACHED
    elif node.leader_id == node.id:   # it led this epoch (and may since have been removed)
        if c.features & MUT_RESTARTED_LEADER:
            # known bug: resume leading the old epoch with whatever log survived
            node.role = LEADER
            start_leader_state(node)
            node.epoch_start = min(node.epoch_start, node.log_end)
        else:
            # never Leader again in this epoch: it cannot vote in it, and its unflushed
            # entries may be gone, so (offset, epoch) would no longer name one record
            node.role = RESIGNED
            node.acked = {node.id}
            # Kafka restarts Resigned with an EMPTY successor list, which every voter reads
            # as "position 0": all of them get their fetch timer cut to 0.
            node.successors = ()
    elif is_voter(c, node) and node.voted_id == node.id and (
            c.features & KAFKA_17642 or node.leader_id is None):
        # QuorumState.initialize asks isVotedCandidate before hasLeader. From 4.0
        # (KAFKA-17642) FollowerState.election() keeps the voted key, so a candidate that
        # went on to follow its epoch's leader comes back Candidate; in 3.9 a Follower's
        # quorum-state file held no vote, and it came back following that leader.
        node.role = CANDIDATE
        node.granted = {node.id}
        node.leader_id = None   # CandidateState.election() persists no leader
    elif node.leader_id is not None:
        node.role = FOLLOWER
        node.leader_endpoints_known = True
    else:
        node.role = UNATTACHED
    if is_voter(c, node) and not other_voters(c, node):
        _single_voter_elects_itself(c, node)


def _single_voter_elects_itself(c, node) -> None:
    """KafkaRaftClient.initialize: the only voter, Unattached/Follower/Resigned, goes
    Prospective -> Candidate -> Leader at once; a restarted Candidate becomes Leader."""
    from .election import maybe_transition_forward

    if node.role in (UNATTACHED, FOLLOWER, RESIGNED):
        if c.features & PRE_VOTE:
            transition_to_prospective(c, node)
        elif not transition_to_candidate(c, node):
            return
        maybe_transition_forward(c, node)
    elif node.role == CANDIDATE:
        maybe_transition_forward(c, node)


def lose_disk_enabled(c, node) -> bool:
    """Any node, running or not, may lose its disk (with disk loss on), as long as a new
    directory id is left for it: MAX_DIR replacements per node and walk (a bound of the
    model). Under the known-bug mutation the id never changes, so there is no bound."""
    if not c.features & DISK_LOSS:
        return False
    return bool(c.features & MUT_WIPED_SAME_ID) or node.dir < MAX_DIR


def lose_disk(c, node) -> None:
    """The disk is replaced: the process stops, the new disk is formatted (kafka-storage
    format: a new directory id) and the node starts again with nothing: no log, no
    snapshot, epoch 0, no vote, no known leader. Its old key may still be in voter sets;
    the new one is not, so it restarts as an observer (KIP-853)."""
    node.up = False
    node.log = []
    node.flushed_end = 0
    node.log_start, node.start_epoch = 0, 0
    node.latest, node.snapshots = (0, 0), {}
    node.first_snapshot_epoch = 0
    node.fetching = None
    node.epoch = 0
    node.voted_id, node.voted_dir = None, 0
    node.leader_id = None
    node.role = UNATTACHED
    if not c.features & MUT_WIPED_SAME_ID:
        node.dir += 1
    # (known bug, MUT_WIPED_SAME_ID: the empty disk comes back under the old key, and with
    # it every vote and acknowledgement that key gave)
    c.history.disk_replaced(node)
    c.stats["disk_losses"] += 1
    restart_node(c, node)


def change_partition(c, kind: int, r: int) -> bool:
    """Cut or heal links. kind 0: isolate one node both ways; 1: cut one link one way;
    2: split the nodes in two sides; 3: heal every link. ``r`` is the random word that
    picks the nodes (the kernel's action encoding). Returns False when nothing would
    change (the action then counts as not enabled)."""
    n = c.params.nodes
    everyone = set(range(n))
    nodes = c.nodes
    if kind == 0:
        a = r % n
        changed = nodes[a].links != {a} or any(a in nodes[j].links for j in range(n) if j != a)
        for j in range(n):
            nodes[j].links.discard(a)
        nodes[a].links = {a}
        return changed
    if kind == 1:
        if n < 2:
            return False
        a = r % n
        b = (r // n) % (n - 1)
        if b >= a:
            b += 1
        if b not in nodes[a].links:
            return False
        nodes[a].links.discard(b)
        return True
    if kind == 2:
        side = {j for j in range(n) if (r >> 8) >> j & 1}
        if not side or side == everyone:
            return False
        for j in range(n):
            nodes[j].links &= side if j in side else everyone - side
        return True
    changed = any(nodes[j].links != everyone for j in range(n))
    for j in range(n):
        nodes[j].links = set(everyone)
    return changed
