"""Faults: crash and restart of a node, disk loss, lost and duplicated messages, link cuts."""
from ..jit import kernel

from ..protocol.election import maybe_transition_forward, start_election
from ..features import DISK_LOSS, KAFKA_17642, MUT_RESTARTED_LEADER, MUT_WIPED_SAME_ID, SNAPSHOTS
from ..state.layout import (
    DIR, DIRTY_FROM, GN_HW_VOTERS, GN_LOADED, GN_PREV_EPOCH,
    GN_PREV_LEADER_EPOCH, GN_PREV_LOG_END, GN_PREV_SNAP_END, G_VOTE, LOG_START, MAX_DIR,
    PREV_HASH, FIRST_SNAP_EPOCH, SNAP_END, SNAP_EPOCH, START_EPOCH, S_DISK_LOSSES, T_DISK_LOST, VOTED_DIR,
    VOTERS,
    ACKED_MASK, CANDIDATE, EPOCH, EPOCH_START, FLUSHED_END, FOLLOWER, GRANTED, HW, LEADER,
    LEADER_ID, LINKS, LOG_END, PREFERRED, P_NODES, RESIGNED, ROLE, S_CRASHES,
    S_MSGS_LOST, T_RESTARTED_FROM_SNAPSHOT, T_UNFLUSHED_TAIL_LOST, UNATTACHED, UP, VOTED_ID,
    I_ROLE,
)
from ..state.coverage import reach
from ..state.log import last_epoch, truncate_to
from ..state.network import duplicate_message, remove_message
from ..protocol.quorum_state import clear_volatile, intend, reset_connections, reset_leader_state
from ..protocol.snapshots import truncate_to_latest_snapshot
from ..state.voters import is_voter, other_voters, reset_voters


@kernel
def crash_node(w, i):
    """The process dies: only what was flushed to disk survives (epoch, vote and
    leader id are persisted with every change; the log's unflushed tail is lost)."""
    if w.node[UP, i] == 0:
        return False
    w.node[UP, i] = 0
    if w.node[FLUSHED_END, i] < w.node[LOG_END, i]:
        reach(w, T_UNFLUSHED_TAIL_LOST, 0)
    truncate_to(w, i, w.node[FLUSHED_END, i])
    w.node[HW, i] = -1
    w.scal[S_CRASHES] += 1
    intend(w, i, I_ROLE)
    return True


@kernel
def restart_node(w, i, features):
    """QuorumState.initialize from the persisted (epoch, leader id, vote), in Kafka's order:
    an epoch behind the log's last epoch -> Unattached in the log's epoch; led this
    epoch -> Resigned (never Leader again: its unflushed tail may be gone); voted for
    itself -> Candidate in the same epoch (before Kafka 4.0: only if it knew no
    leader); knew a leader -> Follower; else Unattached.
    Volatile state (HW, tallies, replica offsets, connections) starts empty."""
    if w.node[UP, i] == 1:
        return False
    w.node[UP, i] = 1
    w.node[HW, i] = -1
    clear_volatile(w, i)
    reset_connections(w, i)
    intend(w, i, I_ROLE)
    if features & SNAPSHOTS and truncate_to_latest_snapshot(w, i):
        # KafkaMetadataLog on load: a log that lost its unflushed tail below the latest
        # snapshot starts at the snapshot.
        reach(w, T_RESTARTED_FROM_SNAPSHOT, 0)
    voter = is_voter(w, i)
    log_epoch = last_epoch(w, i)
    if w.node[EPOCH, i] < log_epoch:
        w.node[EPOCH, i] = log_epoch
        w.node[VOTED_ID, i] = -1
        w.node[LEADER_ID, i] = -1
        w.node[ROLE, i] = UNATTACHED
    elif w.node[LEADER_ID, i] == i:  # (a leader removed from the voters too)
        if features & MUT_RESTARTED_LEADER:
            # Known bug: resume leading the old epoch with whatever log survived.
            w.node[ROLE, i] = LEADER
            reset_leader_state(w, i)
            if w.node[EPOCH_START, i] > w.node[LOG_END, i]:
                w.node[EPOCH_START, i] = w.node[LOG_END, i]
        else:
            w.node[ROLE, i] = RESIGNED
            w.node[ACKED_MASK, i] = 1 << i
            w.node[PREFERRED, i] = 0  # QuorumState.initialize: an empty successor list
    elif w.node[VOTED_ID, i] == i and voter and (
            features & KAFKA_17642 or w.node[LEADER_ID, i] < 0):
        # Voted for itself: Candidate of its epoch. From Kafka 4.0 (KAFKA-17642) a
        # Follower's quorum state keeps the vote, so this holds even once it followed
        # the epoch's leader; before, a Follower's state held none and it came back
        # following that leader.
        w.node[ROLE, i] = CANDIDATE
        w.node[GRANTED, i] = 1 << i
        w.node[LEADER_ID, i] = -1  # CandidateState persists its vote, no leader
    elif w.node[LEADER_ID, i] >= 0:
        w.node[ROLE, i] = FOLLOWER
    else:
        w.node[ROLE, i] = UNATTACHED
    if voter and other_voters(w, i) == 0:
        # KafkaRaftClient.initialize: the only voter elects itself at once.
        r = w.node[ROLE, i]
        if r == UNATTACHED or r == FOLLOWER or r == RESIGNED:
            start_election(w, i, features)
        elif r == CANDIDATE:
            maybe_transition_forward(w, i)
    return True


@kernel
def lose_disk_enabled(w, i, features):
    """Any node, running or not, may lose its disk: three times per walk (MAX_DIR
    directory ids after the first; without directory ids, any number of times)."""
    if not features & DISK_LOSS:
        return False
    return features & MUT_WIPED_SAME_ID or w.node[DIR, i] < MAX_DIR


@kernel
def lose_disk(w, i, features):
    """The node's disk is lost and replaced: the process stops, the new disk is
    formatted (kafka-storage format: a new directory id) and the node starts with empty
    storage: no log, no snapshot, epoch 0, no vote, no leader. Its old replica key is
    still in the voter sets: the protocol must not let the new disk act as the old one
    (Vote and BeginQuorumEpoch name the receiver's key, Fetch the fetcher's)."""
    w.node[UP, i] = 0
    w.node[LOG_END, i] = 0
    w.node[FLUSHED_END, i] = 0
    w.node[DIRTY_FROM, i] = w.log.shape[2]
    w.node[LOG_START, i] = 0
    w.node[START_EPOCH, i] = 0
    w.node[SNAP_END, i] = 0
    w.node[SNAP_EPOCH, i] = 0
    w.node[FIRST_SNAP_EPOCH, i] = 0
    w.node[EPOCH, i] = 0
    w.node[VOTED_ID, i] = -1
    w.node[VOTED_DIR, i] = 0
    w.node[LEADER_ID, i] = -1
    w.node[ROLE, i] = UNATTACHED
    if not features & MUT_WIPED_SAME_ID:
        w.node[DIR, i] += 1
        # Ghost: the votes recorded were the old key's; the new key has cast none.
        for e in range(w.ghost.shape[1]):
            w.ghost[G_VOTE + i, e] = -1
    # (Known bug, MUT_WIPED_SAME_ID: the same key, with none of what it promised.)
    reset_voters(w, i)
    # Ghost: the per-disk histories the monotonicity checks compare with start again.
    w.node[GN_PREV_EPOCH, i] = 0
    w.node[GN_PREV_LEADER_EPOCH, i] = -1
    w.node[GN_PREV_LOG_END, i] = 0
    w.hashes[PREV_HASH, i] = 0
    w.node[GN_PREV_SNAP_END, i] = 0
    w.node[GN_LOADED, i] = 0
    w.node[GN_HW_VOTERS, i] = w.node[VOTERS, i]
    w.scal[S_DISK_LOSSES] += 1
    reach(w, T_DISK_LOST, 0)
    restart_node(w, i, features)  # (which clears the volatile state: a download, tallies)


@kernel
def lose_message(w, k):
    remove_message(w, k)
    w.scal[S_MSGS_LOST] += 1


@kernel
def change_partition(w, kind, r):
    """Cut or heal links. kind 0: isolate one node both ways; 1: cut one link one
    way; 2: split the nodes in two random sides; 3: heal every link. ``r`` is a
    random word that picks the nodes. Returns False when nothing would change."""
    n = w.scal[P_NODES]
    full = (1 << n) - 1
    if kind == 0:
        a = r % n
        changed = w.node[LINKS, a] != (1 << a)
        for j in range(n):
            if j != a and (w.node[LINKS, j] >> a) & 1:
                changed = True
            w.node[LINKS, j] &= ~(1 << a)
        w.node[LINKS, a] = 1 << a
        return changed
    if kind == 1:
        a = r % n
        b = (r // n) % (n - 1) if n > 1 else 0
        if b >= a:
            b += 1
        if n < 2 or not (w.node[LINKS, a] >> b) & 1:
            return False
        w.node[LINKS, a] &= ~(1 << b)
        return True
    if kind == 2:
        side = (r >> 8) & full
        if side == 0 or side == full:
            return False
        for j in range(n):
            if (side >> j) & 1:
                w.node[LINKS, j] &= side
            else:
                w.node[LINKS, j] &= full & ~side
        return True
    changed = False
    for j in range(n):
        if w.node[LINKS, j] != full:
            changed = True
        w.node[LINKS, j] = full
    return changed


@kernel
def duplicate(w, k):
    return duplicate_message(w, k)
