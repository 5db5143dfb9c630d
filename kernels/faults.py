"""Faults: crash and restart of a node, lost and duplicated messages, link cuts."""
from .jit import kernel

from .features import MUT_RESTARTED_LEADER
from .layout import (
    CANDIDATE, FOLLOWER, LEADER, P_NODES, P_VOTERS, RESIGNED, S_CRASHES, S_MSGS_LOST, UNATTACHED,
)
from .log import last_epoch, truncate_to
from .network import duplicate_message, remove_message
from .quorum_state import reset_connections, reset_leader_state


@kernel
def crash_node(w, i):
    """The process dies: only what was flushed to disk survives (epoch, vote and
    leader id are persisted with every change; the log's unflushed tail is lost)."""
    if w.up[i] == 0:
        return False
    w.up[i] = 0
    truncate_to(w, i, w.flushed_end[i])
    w.hw[i] = -1
    w.stats[S_CRASHES] += 1
    return True


@kernel
def restart_node(w, i, features):
    """QuorumState.initialize from the persisted (epoch, leader id, vote), in Kafka's order:
    an epoch behind the log's last epoch -> Unattached in the log's epoch; led this
    epoch -> Resigned (never Leader again: its unflushed tail may be gone); voted for
    itself -> Candidate in the same epoch; knew a leader -> Follower; else Unattached.
    Volatile state (HW, tallies, replica offsets, connections) starts empty."""
    if w.up[i] == 1:
        return False
    w.up[i] = 1
    w.hw[i] = -1
    w.granted[i] = 0
    w.rejected[i] = 0
    w.has_fetched[i] = 0
    w.acked_mask[i] = 0
    w.fetched_mask[i] = 0
    w.preferred[i] = 0
    reset_connections(w, i)
    voter = i < w.params[P_VOTERS]
    log_epoch = last_epoch(w, i)
    if w.epoch[i] < log_epoch:
        w.epoch[i] = log_epoch
        w.voted_id[i] = -1
        w.leader_id[i] = -1
        w.role[i] = UNATTACHED
    elif w.leader_id[i] == i and voter:
        if features & MUT_RESTARTED_LEADER:
            # Known bug: resume leading the old epoch with whatever log survived.
            w.role[i] = LEADER
            reset_leader_state(w, i)
            if w.epoch_start[i] > w.log_end[i]:
                w.epoch_start[i] = w.log_end[i]
        else:
            w.role[i] = RESIGNED
            w.acked_mask[i] = 1 << i
            w.preferred[i] = ((1 << w.params[P_VOTERS]) - 1) & ~(1 << i)
    elif w.voted_id[i] == i and voter:
        w.role[i] = CANDIDATE
        w.granted[i] = 1 << i
    elif w.leader_id[i] >= 0:
        w.role[i] = FOLLOWER
    else:
        w.role[i] = UNATTACHED
    return True


@kernel
def lose_message(w, k):
    remove_message(w, k)
    w.stats[S_MSGS_LOST] += 1


@kernel
def change_partition(w, kind, r):
    """Cut or heal links. kind 0: isolate one node both ways; 1: cut one link one
    way; 2: split the nodes in two random sides; 3: heal every link. ``r`` is a
    random word that picks the nodes. Returns False when nothing would change."""
    n = w.params[P_NODES]
    full = (1 << n) - 1
    if kind == 0:
        a = r % n
        changed = False
        for j in range(n):
            if j != a and ((w.links[j] >> a) & 1 or (w.links[a] >> j) & 1):
                changed = True
            w.links[j] &= ~(1 << a)
        if w.links[a] != (1 << a):
            changed = True
        w.links[a] = 1 << a
        return changed
    if kind == 1:
        a = r % n
        b = (r // n) % (n - 1) if n > 1 else 0
        if b >= a:
            b += 1
        if n < 2 or not (w.links[a] >> b) & 1:
            return False
        w.links[a] &= ~(1 << b)
        return True
    if kind == 2:
        side = (r >> 8) & full
        if side == 0 or side == full:
            return False
        for j in range(n):
            if (side >> j) & 1:
                w.links[j] &= side
            else:
                w.links[j] &= full & ~side
        return True
    changed = False
    for j in range(n):
        if w.links[j] != full:
            changed = True
        w.links[j] = full
    return changed


@kernel
def duplicate(w, k):
    return duplicate_message(w, k)
