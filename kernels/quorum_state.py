"""Role transitions of one node, after Kafka's QuorumState.

Each ``transition_to_*`` sets what Kafka's new EpochState would hold. The ones
Kafka writes to the quorum-state file (Unattached, Follower, Candidate, Leader)
change the persisted epoch / vote / leader id here too; Prospective and
Resigned are memory-only in Kafka and only change the role. Transitions that
call Kafka's ``resetConnections`` clear the node's outstanding requests, so
late responses to them are dropped.
"""
from .jit import kernel

from .layout import (
    ERR_FENCED_LEADER_EPOCH, ERR_NOT_LEADER_OR_FOLLOWER, ERR_UNKNOWN_LEADER_EPOCH, C_NEXT_VALUE, CANDIDATE, FOLLOWER, LEADER, P_MAJORITY, P_MAX_EPOCH, P_VOTERS,
    PROSPECTIVE, RESIGNED, S_BOUND_HIT, S_ELECTIONS, S_LEADER_CHANGES, S_MAX_EPOCH,
    S_PRE_ELECTIONS, S_RESIGNATIONS, UNATTACHED, BOUND_EPOCH, BOUND_LOG,
)
from .log import append_entry


@kernel
def popcount(x):
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@kernel
def reset_connections(w, i):
    n = w.inflight.shape[1]
    for j in range(n):
        w.inflight[i, j] = 0


@kernel
def is_voter(w, i):
    return i < w.params[P_VOTERS]


@kernel
def _enter_epoch(w, i, epoch):
    """Move node i to ``epoch``: a new epoch clears the vote and the leader."""
    if epoch != w.epoch[i]:
        w.epoch[i] = epoch
        w.voted_id[i] = -1
        w.leader_id[i] = -1
        if epoch > w.stats[S_MAX_EPOCH]:
            w.stats[S_MAX_EPOCH] = epoch


@kernel
def _clear_volatile(w, i):
    w.granted[i] = 0
    w.rejected[i] = 0
    w.has_fetched[i] = 0
    w.fetched_mask[i] = 0
    w.acked_mask[i] = 0
    w.preferred[i] = 0


@kernel
def transition_to_unattached(w, i, epoch, leader):
    """Unattached in ``epoch`` (a leader id may be kept, as Kafka 4.0's UnattachedState
    does after a lost pre-vote); durable; resets connections."""
    same = epoch == w.epoch[i]
    _enter_epoch(w, i, epoch)
    if not same:
        w.leader_id[i] = leader
    elif leader >= 0:
        w.leader_id[i] = leader
    w.role[i] = UNATTACHED
    _clear_volatile(w, i)
    reset_connections(w, i)


@kernel
def transition_to_follower(w, i, epoch, leader):
    """Follower of ``leader`` in ``epoch``; the vote survives within the same epoch."""
    _enter_epoch(w, i, epoch)
    w.leader_id[i] = leader
    w.role[i] = FOLLOWER
    _clear_volatile(w, i)
    reset_connections(w, i)


@kernel
def transition_to_prospective(w, i):
    """Prospective (pre-vote) in the same epoch, keeping vote and leader id; memory-only."""
    w.role[i] = PROSPECTIVE
    _clear_volatile(w, i)
    w.granted[i] = 1 << i
    reset_connections(w, i)
    w.stats[S_PRE_ELECTIONS] += 1


@kernel
def transition_to_candidate(w, i):
    """Candidate in epoch + 1, voting for itself; durable. Ends the walk at max_epoch."""
    if w.epoch[i] + 1 > w.params[P_MAX_EPOCH]:
        w.stats[S_BOUND_HIT] = BOUND_EPOCH
        return False
    _enter_epoch(w, i, w.epoch[i] + 1)
    w.voted_id[i] = i
    w.role[i] = CANDIDATE
    _clear_volatile(w, i)
    w.granted[i] = 1 << i
    reset_connections(w, i)
    w.stats[S_ELECTIONS] += 1
    return True


@kernel
def reset_leader_state(w, i):
    """A fresh LeaderState: no HW yet, no replica offsets known, only itself heard from."""
    n = w.replica_end.shape[1]
    for j in range(n):
        w.replica_end[i, j] = -1
    w.hw[i] = -1
    w.fetched_mask[i] = 1 << i
    w.acked_mask[i] = 1 << i
    w.granted[i] = 0
    w.rejected[i] = 0


@kernel
def transition_to_leader(w, i):
    """onBecomeLeader: Leader with epochStartOffset = log end, then the LeaderChange
    control record at that offset. A full log ends the walk (a bound, not a bug)."""
    start = w.log_end[i]
    w.counters[C_NEXT_VALUE] += 1
    if not append_entry(w, i, w.epoch[i], -w.counters[C_NEXT_VALUE]):
        w.stats[S_BOUND_HIT] = BOUND_LOG
        return False
    w.role[i] = LEADER
    w.leader_id[i] = i
    w.epoch_start[i] = start
    reset_leader_state(w, i)
    reset_connections(w, i)
    w.stats[S_LEADER_CHANGES] += 1
    return True


@kernel
def transition_to_resigned(w, i, successors):
    """Resigned in the same epoch; EndQuorumEpoch goes to every other voter until acked."""
    w.role[i] = RESIGNED
    _clear_volatile(w, i)
    w.acked_mask[i] = 1 << i
    w.preferred[i] = successors
    reset_connections(w, i)
    w.stats[S_RESIGNATIONS] += 1


@kernel
def has_majority(w, mask):
    return popcount(mask & ((1 << w.params[P_VOTERS]) - 1)) >= w.params[P_MAJORITY]


@kernel
def vote_rejected(w, i):
    """EpochElection.isVoteRejected: the granted votes plus the unrecorded ones can no
    longer make a majority."""
    v = w.params[P_VOTERS]
    return v - popcount(w.rejected[i]) < w.params[P_MAJORITY]


@kernel
def maybe_transition(w, i, leader, epoch):
    """Kafka's maybeTransition(leaderId, epoch) on learning of a leader or a newer epoch.

    Higher epoch: Follower of the leader if one is named, else Unattached. Same
    epoch with a leader this node did not know: Follower. A leader claim that
    contradicts what this node knows is ignored (Kafka throws there)."""
    if epoch > w.epoch[i]:
        if leader >= 0 and leader != i:
            transition_to_follower(w, i, epoch, leader)
        else:
            transition_to_unattached(w, i, epoch, -1)
    elif epoch == w.epoch[i] and leader >= 0 and leader != i:
        if w.role[i] == LEADER or w.role[i] == RESIGNED:
            return
        if w.leader_id[i] == -1 or (w.leader_id[i] == leader and w.role[i] != FOLLOWER):
            transition_to_follower(w, i, epoch, leader)


@kernel
def maybe_handle_common_response(w, i, error, leader, epoch):
    """Kafka's maybeHandleCommonResponse, shared by every response handler.

    Returns True when the response is fully handled (stale, or an error that only
    carried a leader/epoch hint); False when its body should be processed."""
    if epoch < w.epoch[i] or error == ERR_UNKNOWN_LEADER_EPOCH:
        return True
    if epoch > w.epoch[i] or error == ERR_FENCED_LEADER_EPOCH or error == ERR_NOT_LEADER_OR_FOLLOWER:
        maybe_transition(w, i, leader, epoch)
        return True
    if leader >= 0 and w.leader_id[i] == -1 and leader != i:
        transition_to_follower(w, i, epoch, leader)
    return False


@kernel
def is_candidate_role(role):
    return role == PROSPECTIVE or role == CANDIDATE

